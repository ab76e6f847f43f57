//! Matmul through the vendor BLAS (cuBLAS; hipBLAS later): the row-major product dlarray
//! computes, restated as the column-major strided-batched GEMM those libraries take.
//!
//! Row-major `C[m,n] = A[m,k] · B[k,n]` is column-major `Cᵀ[n,m] = Bᵀ[n,k] · Aᵀ[k,m]`: the
//! same memory read the other way round. So the BLAS call takes `B` first and `A` second,
//! with `m` and `n` swapped. A row-major operand (unit column stride) is then passed
//! untransposed with its row stride as leading dimension; a column-major one (a transposed
//! view: unit row stride) is passed transposed with its column stride. Anything else (other
//! strides, negative strides, batch axes that do not fold into one stride, sizes beyond the
//! BLAS's 32-bit integers) is `None`, and the generated kernel runs instead.

use super::params::MatmulParams;
use crate::dtype::DType;

/// One operand of a column-major GEMM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlasOperand {
    /// Unified address of its first element (offset included).
    pub ptr: u64,
    /// `op(X) = Xᵀ`.
    pub trans: bool,
    /// Leading dimension, in elements.
    pub ld: i32,
    /// Elements between consecutive matrices of the batch (0 broadcasts one matrix).
    pub batch_stride: i64,
}

/// `C = op(A) · op(B)` for `batch` column-major matrices, `C` being `m x n` with leading
/// dimension `ldc` and `c_stride` elements between matrices; `op(A)` is `m x k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm {
    /// Of the operands and the output.
    pub dtype: DType,
    /// Rows of `op(A)` and `C`.
    pub m: i32,
    /// Columns of `op(B)` and `C`.
    pub n: i32,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: i32,
    /// Matrices in the batch.
    pub batch: i32,
    /// The left operand.
    pub a: BlasOperand,
    /// The right operand.
    pub b: BlasOperand,
    /// Unified address of the output.
    pub c: u64,
    /// Leading dimension of `C`.
    pub ldc: i32,
    /// Elements between consecutive output matrices.
    pub c_stride: i64,
}

/// The dtypes BLAS libraries multiply (f16 and bf16 accumulate in f32).
pub fn blas_dtype(dt: DType) -> bool {
    matches!(
        dt,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::Complex64 | DType::Complex128
    )
}

/// `(transposed, leading dimension)` of a row-major `rows x cols` matrix with element
/// strides `rs` (between rows) and `cs` (between columns), read column-major.
fn operand(rows: u64, cols: u64, rs: i64, cs: i64) -> Option<(bool, i32)> {
    // The stride of an axis of length 1 is never followed: pick the one that fits.
    let rs = if rows <= 1 { cols.max(1) as i64 } else { rs };
    let cs = if cols <= 1 { 1 } else { cs };
    let ld = |v: i64| i32::try_from(v).ok();
    if cs == 1 && rs >= cols.max(1) as i64 {
        Some((false, ld(rs)?))
    } else if rs == 1 && cs >= rows.max(1) as i64 {
        Some((true, ld(cs)?))
    } else {
        None
    }
}

/// The GEMM computing `p`'s product into the contiguous `[batch, m, n]` output at `c`, with
/// `a` and `b` the unified addresses of the operands' buffers (their offsets in `p`).
pub(crate) fn gemm_for(p: &MatmulParams, dtype: DType, a: u64, b: u64, c: u64) -> Option<Gemm> {
    // Empty products take the kernel (an empty `k` writes zeros there): a leading dimension
    // of 0 is a status cuBLAS refuses, which would send the device back to the kernel.
    if !blas_dtype(dtype) || p.batch_shape.len() > 1 || p.m == 0 || p.n == 0 || p.k == 0 {
        return None;
    }
    let item = dtype.size_in_bytes() as u64;
    let int = |v: u64| i32::try_from(v).ok();
    let (m, n, k) = (int(p.m)?, int(p.n)?, int(p.k)?);
    let (a_t, a_ld) = operand(p.m, p.k, p.a[0], p.a[1])?;
    let (b_t, b_ld) = operand(p.k, p.n, p.b[0], p.b[1])?;
    let batch_stride = |v: &[i64]| match v.first() {
        Some(&s) if s >= 0 => Some(s),
        Some(_) => None,
        None => Some(0),
    };
    let (a_bs, b_bs) = (batch_stride(&p.a_batch)?, batch_stride(&p.b_batch)?);
    let at = |base: u64, off: i64| {
        u64::try_from(off)
            .ok()
            .and_then(|o| o.checked_mul(item))
            .and_then(|o| base.checked_add(o))
    };
    Some(Gemm {
        dtype,
        m: n,
        n: m,
        k,
        batch: int(p.batch)?,
        a: BlasOperand {
            ptr: at(b, p.b[2])?,
            trans: b_t,
            ld: b_ld,
            batch_stride: b_bs,
        },
        b: BlasOperand {
            ptr: at(a, p.a[2])?,
            trans: a_t,
            ld: a_ld,
            batch_stride: a_bs,
        },
        c,
        ldc: n,
        c_stride: p.m as i64 * p.n as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;

    fn params(a: &Layout, b: &Layout) -> MatmulParams {
        MatmulParams::new(a, b)
    }

    #[test]
    fn row_major_operands_swap_and_keep_their_row_stride() {
        let a = Layout::contiguous(&[3, 5]).unwrap();
        let b = Layout::contiguous(&[5, 4]).unwrap();
        let g = gemm_for(&params(&a, &b), DType::F32, 1000, 2000, 3000).unwrap();
        assert_eq!((g.m, g.n, g.k, g.batch), (4, 3, 5, 1));
        assert_eq!((g.a.ptr, g.a.trans, g.a.ld), (2000, false, 4));
        assert_eq!((g.b.ptr, g.b.trans, g.b.ld), (1000, false, 5));
        assert_eq!((g.ldc, g.c_stride), (4, 12));
    }

    #[test]
    fn transposed_views_are_passed_transposed() {
        // aᵀ of a contiguous [5, 3]: strides (1, 3).
        let a = Layout::contiguous(&[5, 3])
            .unwrap()
            .permute(&[1, 0])
            .unwrap();
        let b = Layout::contiguous(&[5, 4]).unwrap();
        let g = gemm_for(&params(&a, &b), DType::F64, 0, 0, 0).unwrap();
        assert_eq!((g.b.trans, g.b.ld), (true, 3));
        assert_eq!((g.a.trans, g.a.ld), (false, 4));
    }

    #[test]
    fn other_layouts_and_dtypes_take_the_generated_kernel() {
        let a = Layout::contiguous(&[4, 6]).unwrap();
        let b = Layout::contiguous(&[6, 4]).unwrap();
        assert!(gemm_for(&params(&a, &b), DType::I32, 0, 0, 0).is_none());
        // An empty inner axis: strides of 0, no GEMM.
        let e = Layout::contiguous(&[4, 0]).unwrap();
        let f = Layout::contiguous(&[0, 4]).unwrap();
        assert!(gemm_for(&params(&e, &f), DType::F32, 0, 0, 0).is_none());
        // Every other column: neither unit stride.
        let s = Layout::contiguous(&[4, 12])
            .unwrap()
            .slice(&[crate::Slice::full(), crate::Slice::new(None, None, 2)])
            .unwrap();
        assert!(gemm_for(&params(&s, &b), DType::F32, 0, 0, 0).is_none());
    }
}
