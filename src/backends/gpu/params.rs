//! Launch parameters: the `struct`s generated kernels take by value, packed as 64-bit words
//! (the generator declares only 8-byte fields, so the layout is the words in order), and
//! the axis arithmetic that builds them from layouts. The fake driver unpacks the same
//! words, so a packing mistake fails the fake-driver tests, not only a GPU run.

use crate::layout::{Layout, coalesce};

/// Elements a thread block handles (a power of two: the reduction tree halves it).
pub(crate) const BLOCK: u32 = 256;
/// Elements each thread of a map kernel, and each step of a reduction's loop, handles: its
/// loads are issued together, so a warp keeps this many in flight. One load at a time left
/// the H200 latency-bound: add f32 at 0.78x and sum f32 at 0.56x of a device copy's
/// bandwidth (`scripts/gpu_bench.py`, 2026-12-04).
pub(crate) const UNROLL: u64 = 4;
/// Matmul tile edge (BLOCK = TILE * TILE threads).
pub(crate) const TILE: u64 = 16;

/// A map kernel's parameters: `n` output elements over `shape`, and per input its element
/// strides and offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MapParams {
    pub n: u64,
    pub shape: Vec<u64>,
    pub strides: Vec<Vec<i64>>,
    pub offsets: Vec<i64>,
}

impl MapParams {
    /// The parameters for inputs `layouts` (one shape); axes merged where every input is
    /// contiguous across them, so a contiguous input needs no division per element.
    pub fn new(layouts: &[&Layout]) -> MapParams {
        let shape = layouts[0].shape();
        let n = shape.iter().product::<usize>() as u64;
        let (merged, strides) = match layouts.len() {
            1 => {
                let (s, [a]) = coalesce(shape, [layouts[0].strides()]);
                (s, vec![a.to_vec()])
            }
            2 => {
                let (s, [a, b]) = coalesce(shape, [layouts[0].strides(), layouts[1].strides()]);
                (s, vec![a.to_vec(), b.to_vec()])
            }
            _ => {
                let (s, [a, b, c]) = coalesce(
                    shape,
                    [
                        layouts[0].strides(),
                        layouts[1].strides(),
                        layouts[2].strides(),
                    ],
                );
                (s, vec![a.to_vec(), b.to_vec(), c.to_vec()])
            }
        };
        MapParams {
            n,
            shape: merged.iter().map(|&d| d as u64).collect(),
            strides: strides
                .into_iter()
                .map(|s| s.into_iter().map(|v| v as i64).collect())
                .collect(),
            offsets: layouts.iter().map(|l| l.offset() as i64).collect(),
        }
    }
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    /// `{ n; shape[R]; stride[K][R]; offset[K]; }`
    pub fn pack(&self) -> Vec<u64> {
        let mut w = vec![self.n];
        w.extend(&self.shape);
        for s in &self.strides {
            w.extend(s.iter().map(|&v| v as u64));
        }
        w.extend(self.offsets.iter().map(|&v| v as u64));
        w
    }
    #[cfg(any(test, feature = "fake-gpu"))]
    pub fn unpack(w: &[u64], rank: usize, inputs: usize) -> Option<MapParams> {
        let mut r = Reader(w);
        let n = r.one()?;
        let shape = r.take(rank)?.to_vec();
        let mut strides = Vec::new();
        for _ in 0..inputs {
            strides.push(r.signed(rank)?);
        }
        let offsets = r.signed(inputs)?;
        r.end()?;
        Some(MapParams {
            n,
            shape,
            strides,
            offsets,
        })
    }
}

/// One pass of a reduction: output element `j` (over the kept axes) of chunk `c` folds the
/// reduced elements `c * chunk .. min(m, (c + 1) * chunk)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReduceParams {
    pub n_out: u64,
    pub m: u64,
    pub chunk: u64,
    pub chunks: u64,
    pub kept_shape: Vec<u64>,
    pub kept_strides: Vec<i64>,
    pub red_shape: Vec<u64>,
    pub red_strides: Vec<i64>,
    pub offset: i64,
}

impl ReduceParams {
    /// Reduction of `x` over `axes` (sorted, unique), in chunks sized so that about
    /// `target_blocks` blocks run when few outputs would leave the device idle.
    pub fn new(x: &Layout, axes: &[usize], target_blocks: u64) -> ReduceParams {
        let (mut ks, mut kst, mut rs, mut rst) = (vec![], vec![], vec![], vec![]);
        for (d, (&n, &s)) in x.shape().iter().zip(x.strides()).enumerate() {
            if axes.contains(&d) {
                rs.push(n);
                rst.push(s);
            } else {
                ks.push(n);
                kst.push(s);
            }
        }
        let (ks, [kst]) = coalesce(&ks, [&kst]);
        let (rs, [rst]) = coalesce(&rs, [&rst]);
        let n_out: u64 = ks.iter().map(|&d| d as u64).product();
        // A size-0 axis survives coalescing, so an empty reduction has m == 0.
        let m: u64 = rs.iter().map(|&d| d as u64).product();
        let chunks = if m <= 8192 || n_out >= target_blocks {
            1
        } else {
            (2 * target_blocks)
                .div_ceil(n_out.max(1))
                .clamp(1, m.div_ceil(2048))
        };
        let chunk = m.div_ceil(chunks).max(1);
        ReduceParams {
            n_out,
            m,
            chunk,
            chunks: m.div_ceil(chunk).max(1),
            kept_shape: ks.iter().map(|&d| d as u64).collect(),
            kept_strides: kst.iter().map(|&v| v as i64).collect(),
            red_shape: rs.iter().map(|&d| d as u64).collect(),
            red_strides: rst.iter().map(|&v| v as i64).collect(),
            offset: x.offset() as i64,
        }
    }
    /// The second pass: the `[n_out, chunks]` partials of this pass reduced over their rows.
    pub fn second_pass(&self) -> ReduceParams {
        let kept = self.n_out > 1;
        ReduceParams {
            n_out: self.n_out,
            m: self.chunks,
            chunk: self.chunks,
            chunks: 1,
            kept_shape: if kept { vec![self.n_out] } else { vec![] },
            kept_strides: if kept {
                vec![self.chunks as i64]
            } else {
                vec![]
            },
            red_shape: vec![self.chunks],
            red_strides: vec![1],
            offset: 0,
        }
    }
    /// `{ n_out; m; chunk; chunks; kshape[KR]; kstride[KR]; rshape[RR]; rstride[RR];
    /// offset; }`
    pub fn pack(&self) -> Vec<u64> {
        let mut w = vec![self.n_out, self.m, self.chunk, self.chunks];
        w.extend(&self.kept_shape);
        w.extend(self.kept_strides.iter().map(|&v| v as u64));
        w.extend(&self.red_shape);
        w.extend(self.red_strides.iter().map(|&v| v as u64));
        w.push(self.offset as u64);
        w
    }
    #[cfg(any(test, feature = "fake-gpu"))]
    pub fn unpack(w: &[u64], kept: usize, reduced: usize) -> Option<ReduceParams> {
        let mut r = Reader(w);
        let (n_out, m, chunk, chunks) = (r.one()?, r.one()?, r.one()?, r.one()?);
        let kept_shape = r.take(kept)?.to_vec();
        let kept_strides = r.signed(kept)?;
        let red_shape = r.take(reduced)?.to_vec();
        let red_strides = r.signed(reduced)?;
        let offset = r.one()? as i64;
        r.end()?;
        Some(ReduceParams {
            n_out,
            m,
            chunk,
            chunks,
            kept_shape,
            kept_strides,
            red_shape,
            red_strides,
            offset,
        })
    }
}

/// A batched matrix product `[batch.., m, k] x [batch.., k, n]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MatmulParams {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub batch: u64,
    pub batch_shape: Vec<u64>,
    pub a_batch: Vec<i64>,
    pub b_batch: Vec<i64>,
    /// Row and column strides and offsets of `a` and `b`.
    pub a: [i64; 3],
    pub b: [i64; 3],
}

impl MatmulParams {
    pub fn new(a: &Layout, b: &Layout) -> MatmulParams {
        let r = a.ndim();
        let (sa, sb) = (a.strides(), b.strides());
        let bshape = &a.shape()[..r - 2];
        let (bs, [ab, bb]) = coalesce(bshape, [&sa[..r - 2], &sb[..r - 2]]);
        MatmulParams {
            m: a.shape()[r - 2] as u64,
            k: a.shape()[r - 1] as u64,
            n: b.shape()[r - 1] as u64,
            batch: bshape.iter().map(|&d| d as u64).product(),
            batch_shape: bs.iter().map(|&d| d as u64).collect(),
            a_batch: ab.iter().map(|&v| v as i64).collect(),
            b_batch: bb.iter().map(|&v| v as i64).collect(),
            a: [sa[r - 2] as i64, sa[r - 1] as i64, a.offset() as i64],
            b: [sb[r - 2] as i64, sb[r - 1] as i64, b.offset() as i64],
        }
    }
    /// `{ m; n; k; batch; bshape[B]; a_bst[B]; b_bst[B]; a_rs; a_cs; a_off; b_rs; b_cs;
    /// b_off; }`
    pub fn pack(&self) -> Vec<u64> {
        let mut w = vec![self.m, self.n, self.k, self.batch];
        w.extend(&self.batch_shape);
        w.extend(self.a_batch.iter().map(|&v| v as u64));
        w.extend(self.b_batch.iter().map(|&v| v as u64));
        w.extend(self.a.iter().map(|&v| v as u64));
        w.extend(self.b.iter().map(|&v| v as u64));
        w
    }
    #[cfg(any(test, feature = "fake-gpu"))]
    pub fn unpack(w: &[u64], batch_rank: usize) -> Option<MatmulParams> {
        let mut r = Reader(w);
        let (m, n, k, batch) = (r.one()?, r.one()?, r.one()?, r.one()?);
        let batch_shape = r.take(batch_rank)?.to_vec();
        let a_batch = r.signed(batch_rank)?;
        let b_batch = r.signed(batch_rank)?;
        let a = r.signed(3)?;
        let b = r.signed(3)?;
        r.end()?;
        Some(MatmulParams {
            m,
            n,
            k,
            batch,
            batch_shape,
            a_batch,
            b_batch,
            a: [a[0], a[1], a[2]],
            b: [b[0], b[1], b[2]],
        })
    }
}

/// Reads packed words in order (the fake driver unpacks what kernels read).
#[cfg(any(test, feature = "fake-gpu"))]
struct Reader<'a>(&'a [u64]);

#[cfg(any(test, feature = "fake-gpu"))]
impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u64]> {
        if self.0.len() < n {
            return None;
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Some(h)
    }
    fn one(&mut self) -> Option<u64> {
        self.take(1).map(|w| w[0])
    }
    fn signed(&mut self, n: usize) -> Option<Vec<i64>> {
        self.take(n).map(|w| w.iter().map(|&v| v as i64).collect())
    }
    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

/// Blocks for `n` elements, one per `BLOCK` threads, capped at the grid limit (the kernels
/// loop over the rest).
pub(crate) fn blocks_for(n: u64, max_grid: u32) -> u32 {
    n.div_ceil(BLOCK as u64).clamp(1, max_grid as u64) as u32
}
