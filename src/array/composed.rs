//! Operations built from the backend ops every device already has, so they run on every
//! backend (and keep a sharding wherever their parts do): creation like another array,
//! `linspace`, `eye`, shape helpers (`squeeze`, `expand_dims`, `flatten`), `clip`, `isnan`,
//! `isfinite`, `isinf`, `trunc`, `any`, `all`, `var`, `std`, `flip`, `roll` and `tril`/`triu`.
//! NumPy's semantics.

use super::sharding::Sharding;
use super::{Array, Axes, ShardData};
use crate::backends::{BinaryOp, ReduceOp, UnaryOp};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::{Layout, Slice, normalize_axis};
use smallvec::SmallVec;

impl Array {
    /// NumPy's `diff`: the `n`-th difference along `axis`, after `prepend` and `append`
    /// (arrays shaped as this one but along `axis`) are joined on.
    pub fn diff(
        &self,
        n: usize,
        axis: isize,
        prepend: Option<&Array>,
        append: Option<&Array>,
    ) -> Result<Array> {
        let k = normalize_axis(axis, self.ndim())?;
        let mut parts: Vec<&Array> = prepend.into_iter().collect();
        parts.push(self);
        parts.extend(append);
        let mut x = if parts.len() > 1 {
            Array::concatenate(&parts, k as isize)?
        } else {
            self.clone()
        };
        let nd = x.ndim();
        let cut = |start: Option<isize>, stop: Option<isize>| {
            let mut s = vec![Slice::full(); nd];
            s[k] = Slice::new(start, stop, 1);
            s
        };
        for _ in 0..n {
            if x.shape()[k] == 0 {
                break;
            }
            let (hi, lo) = (
                x.slice(&cut(Some(1), None))?,
                x.slice(&cut(None, Some(-1)))?,
            );
            // bool differences are `!=`, as NumPy's.
            x = if x.dtype() == DType::Bool {
                hi.binary(BinaryOp::Ne, &lo)?
            } else {
                hi.binary(BinaryOp::Sub, &lo)?
            };
        }
        Ok(x)
    }

    /// The real part: complex arrays give their real dtype; real arrays are their own.
    pub fn real(&self) -> Result<Array> {
        if self.dtype().is_complex() {
            self.astype(self.dtype().real_part())
        } else {
            Ok(self.clone())
        }
    }

    /// The imaginary part; zeros of the same dtype for real arrays. For complex arrays a
    /// view, as NumPy's `.imag`: a complex element is two reals in memory, so the imaginary
    /// parts are the real dtype at twice the strides, one element in. (Computed as
    /// `Re(-i z)` before, an infinite real part made it NaN.)
    pub fn imag(&self) -> Result<Array> {
        if !self.dtype().is_complex() {
            return self.zeros_like();
        }
        let real = self.dtype().real_part();
        let shards = self
            .shard_data()
            .iter()
            .map(|s| {
                let l = &s.layout;
                let strides: Vec<isize> = l.strides().iter().map(|&st| st * 2).collect();
                let reals = s.buffer.len_bytes() / real.size_in_bytes();
                let layout = Layout::from_parts(l.shape(), &strides, l.offset() * 2 + 1, reals)?;
                Ok(ShardData {
                    device: s.device.clone(),
                    index: s.index.clone(),
                    buffer: s.buffer.clone(),
                    layout,
                })
            })
            .collect::<Result<super::Shards>>()?;
        let sharding = self.sharding().clone();
        Ok(Array::from_shards(
            self.shape(),
            real,
            sharding,
            shards,
            self.is_read_only(),
        ))
    }

    /// Zeros with this array's shape, dtype and sharding.
    pub fn zeros_like(&self) -> Result<Array> {
        self.full_like(Scalar::Int(0))
    }

    /// Ones with this array's shape, dtype and sharding.
    pub fn ones_like(&self) -> Result<Array> {
        self.full_like(Scalar::Int(1))
    }

    /// `value` (converted to this array's dtype) with its shape and sharding.
    pub fn full_like(&self, value: impl Into<super::ScalarValue>) -> Result<Array> {
        Array::full_sharded(self.shape(), value.into().0, self.dtype(), self.sharding())
    }

    /// `num` evenly spaced values from `start` to `stop` (included when `endpoint`), as
    /// NumPy's `linspace`, on the default device.
    pub fn linspace(
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        dtype: DType,
    ) -> Result<Array> {
        if !start.is_finite() || !stop.is_finite() {
            return Err(Error::invalid(format!(
                "linspace({start}, {stop}): bounds must be finite"
            )));
        }
        let div = if endpoint { num.saturating_sub(1) } else { num };
        let step = if div == 0 {
            0.0
        } else {
            (stop - start) / div as f64
        };
        crate::with_dtype!(dtype, T => {
            let mut data: Vec<T> = crate::backends::host::try_host_vec(num, "host")?;
            for (i, v) in data.iter_mut().enumerate() {
                // The last value is `stop` exactly (as NumPy), not start + (n-1) * step.
                let x = if endpoint && num > 1 && i == num - 1 { stop } else { start + i as f64 * step };
                *v = <T as crate::dtype::Element>::from_scalar(Scalar::Float(x));
            }
            Array::from_vec(data, &[num])
        })
    }

    /// An `n x m` matrix with ones on diagonal `k` (0 the main one, > 0 above), as NumPy's
    /// `eye`, on the default device.
    pub fn eye(n: usize, m: Option<usize>, k: isize, dtype: DType) -> Result<Array> {
        let m = m.unwrap_or(n);
        let size = crate::layout::checked_size(&[n, m])?;
        crate::with_dtype!(dtype, T => {
            let mut data: Vec<T> = crate::backends::host::try_host_vec(size, "host")?;
            let one = <T as crate::dtype::Element>::from_scalar(Scalar::Int(1));
            // Only the rows the diagonal crosses (an empty n x 0 matrix of 2^40 rows must not
            // loop over them): i in max(0, -k)..min(n, m - k).
            let first = (-(k as i128)).max(0);
            let end = (n as i128).min(m as i128 - k as i128);
            for i in first..end {
                let (i, j) = (i as usize, (i + k as i128) as usize);
                data[i * m + j] = one;
            }
            Array::from_vec(data, &[n, m])
        })
    }

    /// The array without its size-1 axes (all of them, or those in `axes`, each of which
    /// must have size 1). A view.
    pub fn squeeze(&self, axes: Option<&[isize]>) -> Result<Array> {
        let nd = self.ndim();
        // Which axes go, and the shape that stays: inline lists for up to 8 axes (a view of a
        // small array is mostly such bookkeeping).
        let mut dropped: SmallVec<[bool; 8]> = SmallVec::from_elem(false, nd);
        match axes {
            None => {
                for (d, &n) in dropped.iter_mut().zip(self.shape()) {
                    *d = n == 1;
                }
            }
            Some(list) => {
                for &a in list {
                    let k = normalize_axis(a, nd)?;
                    if self.shape()[k] != 1 {
                        return Err(Error::invalid(format!(
                            "cannot select an axis to squeeze out which has size not equal to \
                             one (axis {a} has size {})",
                            self.shape()[k]
                        )));
                    }
                    dropped[k] = true;
                }
            }
        }
        let mut shape: SmallVec<[isize; 8]> = SmallVec::new();
        for (&n, &d) in self.shape().iter().zip(&dropped) {
            if !d {
                shape.push(n as isize);
            }
        }
        self.reshape(&shape)
    }

    /// The array with a size-1 axis inserted at `axis` (negative counts from the end of
    /// the result, as NumPy's `expand_dims`). A view.
    pub fn expand_dims(&self, axis: isize) -> Result<Array> {
        let k = normalize_axis(axis, self.ndim() + 1)?;
        let mut shape: SmallVec<[isize; 8]> = SmallVec::from_elem(1, self.ndim() + 1);
        for (j, &n) in self.shape().iter().enumerate() {
            shape[j + usize::from(j >= k)] = n as isize;
        }
        self.reshape(&shape)
    }

    /// The last two axes swapped (the array API's `matrix_transpose`, `.mT`). A view.
    pub fn matrix_transpose(&self) -> Result<Array> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::invalid(format!(
                "matrix transpose needs at least 2 dimensions, the array has {nd}"
            )));
        }
        let mut perm: SmallVec<[usize; 8]> = (0..nd).collect();
        perm.swap(nd - 2, nd - 1);
        self.permute(&perm)
    }

    /// The elements as one axis, row-major (a view where the strides allow).
    pub fn flatten(&self) -> Result<Array> {
        self.reshape(&[-1])
    }

    /// Each element limited to `[lo, hi]` (`minimum(maximum(x, lo), hi)`, as NumPy's `clip`).
    /// The bounds are weak scalars: the dtype is kept, except that a fractional bound on an
    /// integer array gives float64 (as NumPy with a Python float). See [`Array::clip_to`].
    pub fn clip(&self, lo: Option<f64>, hi: Option<f64>) -> Result<Array> {
        let weak = |v: f64| {
            if self.dtype().is_integer() && v.fract() == 0.0 && v.abs() < 2f64.powi(100) {
                Scalar::Int(v as i128)
            } else {
                Scalar::Float(v)
            }
        };
        self.clip_to(lo.map(weak), hi.map(weak))
    }

    /// [`Array::clip`] with the bounds as weak scalars of any kind. An integer bound outside
    /// an integer array's range is pulled to its end, as NumPy 2's `clip` does
    /// (`clip(uint8_array, -2, 300)` clips to `[0, 255]`), where an op would refuse it.
    pub fn clip_to(&self, lo: Option<Scalar>, hi: Option<Scalar>) -> Result<Array> {
        let in_range = |s: Scalar| match (s, self.dtype().int_range()) {
            (Scalar::Int(i), Some((min, max))) => Scalar::Int(i.clamp(min, max)),
            _ => s,
        };
        let mut x = self.clone();
        if let Some(lo) = lo {
            x = x.binary_scalar(BinaryOp::Maximum, in_range(lo), false)?;
        }
        if let Some(hi) = hi {
            x = x.binary_scalar(BinaryOp::Minimum, in_range(hi), false)?;
        }
        Ok(x)
    }

    /// Whether each element is NaN (never, for integers and bools).
    pub fn isnan(&self) -> Result<Array> {
        if !self.dtype().is_inexact() {
            return Array::full_sharded(
                self.shape(),
                Scalar::Bool(false),
                DType::Bool,
                self.sharding(),
            );
        }
        // NaN is the one value unequal to itself.
        self.binary(BinaryOp::Ne, self)
    }

    /// Whether each element is finite (always, for integers and bools).
    pub fn isfinite(&self) -> Result<Array> {
        if !self.dtype().is_inexact() {
            return Array::full_sharded(
                self.shape(),
                Scalar::Bool(true),
                DType::Bool,
                self.sharding(),
            );
        }
        // x - x is 0 for finite x and NaN for NaN and the infinities.
        let d = self.binary(BinaryOp::Sub, self)?;
        d.binary_scalar(BinaryOp::Eq, Scalar::Int(0), false)
    }

    /// Whether any element over `axes` is non-zero.
    pub fn any(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.any_all(axes.into(), ReduceOp::Max)
    }

    /// Whether every element over `axes` is non-zero.
    pub fn all(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.any_all(axes.into(), ReduceOp::Min)
    }

    /// `any` (max of truths) or `all` (min); over nothing, false or true: the sum of the
    /// truths (which has an identity, unlike max and min) compared with 0.
    fn any_all(&self, axes: Axes, op: ReduceOp) -> Result<Array> {
        let t = self.truth()?;
        if self.count_over(&axes)? > 0 {
            return t.reduce(op, axes, false);
        }
        let test = if op == ReduceOp::Max {
            BinaryOp::Ne
        } else {
            BinaryOp::Eq
        };
        t.reduce(ReduceOp::Sum, axes, false)?
            .binary_scalar(test, Scalar::Int(0), false)
    }

    fn truth(&self) -> Result<Array> {
        if self.dtype() == DType::Bool {
            return Ok(self.clone());
        }
        self.binary_scalar(BinaryOp::Ne, Scalar::Int(0), false)
    }

    /// Variance over `axes`, dividing by the count less `correction` (NumPy's `ddof`; 0 as its default; integers
    /// in float64, complex as the mean of |x - mean|^2).
    pub fn var(&self, axes: impl Into<Axes>, correction: impl Into<f64>) -> Result<Array> {
        let (axes, ddof) = (axes.into(), correction.into());
        let count = self.count_over(&axes)?;
        // Integers in float64, float32 on devices without 64-bit kernels (as `mean`).
        let x = self.astype(self.on_devices(self.dtype().float_dtype()))?;
        let mean = x.reduce(ReduceOp::Sum, axes.clone(), true)?.binary_scalar(
            BinaryOp::Div,
            Scalar::Float(count as f64),
            false,
        )?;
        let d = x.binary(BinaryOp::Sub, &mean)?;
        let sq = if d.dtype().is_complex() {
            let a = d.unary(UnaryOp::Abs)?;
            a.binary(BinaryOp::Mul, &a)?
        } else {
            d.binary(BinaryOp::Mul, &d)?
        };
        // The array API's `correction` may be fractional; past the count it leaves nothing
        // to divide by, as NumPy's `ddof` (a non-positive divisor gives inf or NaN there).
        let denom = (count as f64 - ddof).max(0.0);
        sq.reduce(ReduceOp::Sum, axes, false)?.binary_scalar(
            BinaryOp::Div,
            Scalar::Float(denom),
            false,
        )
    }

    /// Standard deviation over `axes` (the square root of [`var`](Array::var)).
    pub fn std(&self, axes: impl Into<Axes>, correction: impl Into<f64>) -> Result<Array> {
        self.var(axes, correction)?.unary(UnaryOp::Sqrt)
    }

    /// How many elements a reduction over `axes` combines.
    pub(super) fn count_over(&self, axes: &Axes) -> Result<usize> {
        match axes {
            Axes::All => Ok(self.size()),
            Axes::These(v) => v
                .iter()
                .map(|&a| normalize_axis(a, self.ndim()).map(|a| self.shape()[a]))
                .product(),
        }
    }

    /// Rounds toward zero (integers are their own truncation).
    pub fn trunc(&self) -> Result<Array> {
        if !self.dtype().is_float() {
            return self.unary(UnaryOp::Floor);
        }
        let zero = Array::full_sharded(&[], Scalar::Float(0.0), self.dtype(), &self.first_place())?;
        self.binary(BinaryOp::Lt, &zero)?
            .where_cond(&self.unary(UnaryOp::Ceil)?, &self.unary(UnaryOp::Floor)?)
    }

    /// Elementwise tangent (one kernel, [`UnaryOp::Tan`]). On a backend without that op
    /// (one registered before it existed answers `Unsupported`), composed of the ops it has:
    /// `sin / cos` for reals; for complex `-i tanh(iz)`, which stays finite where sin and cos
    /// of a large imaginary part both overflow (`tan(800j)` is `1j`).
    pub fn tan(&self) -> Result<Array> {
        match self.unary(UnaryOp::Tan) {
            Err(Error::Unsupported { op, .. }) if op == UnaryOp::Tan.name() => {}
            r => return r,
        }
        if !self.dtype().is_complex() {
            return self.sin()?.binary(BinaryOp::Div, &self.cos()?);
        }
        let i = |k: f64| Scalar::Complex(num_complex::Complex64::new(0.0, k));
        self.binary_scalar(BinaryOp::Mul, i(1.0), false)?
            .tanh()?
            .binary_scalar(BinaryOp::Mul, i(-1.0), false)
    }

    /// Elementwise base-2 logarithm.
    pub fn log2(&self) -> Result<Array> {
        self.log_base(std::f64::consts::LOG2_E)
    }

    /// Elementwise base-10 logarithm.
    pub fn log10(&self) -> Result<Array> {
        self.log_base(std::f64::consts::LOG10_E)
    }

    /// `ln(x) * scale`. For complex, each part is scaled on its own, as NumPy does: as a
    /// complex product, `log(0) = -inf+0j` times `scale + 0j` has a NaN imaginary part.
    fn log_base(&self, scale: f64) -> Result<Array> {
        let ln = self.log()?;
        let by = |a: &Array| a.binary_scalar(BinaryOp::Mul, Scalar::Float(scale), false);
        if !self.dtype().is_complex() {
            return by(&ln);
        }
        // re + i * im: the imaginary part (an angle) is finite or NaN, so the product by i
        // moves it exactly; the real part may be infinite and is only added to.
        let i = Scalar::Complex(num_complex::Complex64::new(0.0, 1.0));
        let re = by(&ln.real()?)?.astype(self.dtype())?;
        let im = by(&ln.imag()?)?
            .astype(self.dtype())?
            .binary_scalar(BinaryOp::Mul, i, false)?;
        re.binary(BinaryOp::Add, &im)
    }

    /// Elementwise: whether the value is an infinity (of either part, for complex).
    pub fn isinf(&self) -> Result<Array> {
        if self.dtype().is_complex() {
            // Either part infinite, whatever the other (inf+NaNj is infinite, as NumPy).
            return self
                .real()?
                .isinf()?
                .binary(BinaryOp::LogicalOr, &self.imag()?.isinf()?);
        }
        self.isfinite()?
            .binary(BinaryOp::LogicalOr, &self.isnan()?)?
            .unary(UnaryOp::LogicalNot)
    }

    /// The elements in reverse order along `axes` (all axes for `Axes::All`): a view.
    pub fn flip(&self, axes: impl Into<Axes>) -> Result<Array> {
        let axes: Vec<usize> = match axes.into() {
            Axes::All => (0..self.ndim()).collect(),
            Axes::These(v) => v
                .iter()
                .map(|&a| normalize_axis(a, self.ndim()))
                .collect::<Result<_>>()?,
        };
        let s: Vec<Slice> = (0..self.ndim())
            .map(|k| {
                if axes.contains(&k) {
                    Slice::reversed()
                } else {
                    Slice::full()
                }
            })
            .collect();
        self.slice(&s)
    }

    /// The elements shifted by `shift` along `axis`, wrapping around (NumPy's `roll`; `None`
    /// rolls the flattened array and keeps the shape).
    pub fn roll(&self, shift: isize, axis: Option<isize>) -> Result<Array> {
        let (x, k) = match axis {
            None => (self.reshape(&[-1])?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        let n = x.shape().get(k).copied().unwrap_or(1);
        if n == 0 {
            return Ok(self.clone());
        }
        let s = shift.rem_euclid(n as isize) as usize;
        let (back, front) = (x.range_along(k, n - s..n)?, x.range_along(k, 0..n - s)?);
        let rolled = Array::concatenate(&[&back, &front], k as isize)?;
        let shape: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        rolled.reshape(&shape)
    }

    /// The lower (`upper == false`) or upper triangle of the last two axes, from diagonal
    /// `k`, zeros elsewhere (NumPy's `tril` / `triu`).
    pub fn triangle(&self, k: isize, upper: bool) -> Result<Array> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::invalid("tril/triu need at least two dimensions"));
        }
        let (rows, cols) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        let place = self.first_place();
        let it = self.on_devices(DType::I64);
        let idx = Array::arange(0.0, rows.max(cols) as f64, 1.0, it)?.device_put(&place)?;
        let row = idx.range_along(0, 0..rows)?.reshape(&[rows as isize, 1])?;
        let col = idx.range_along(0, 0..cols)?.reshape(&[1, cols as isize])?;
        // Diagonal offset of each element: col - row, against k.
        let offset = col.binary(BinaryOp::Sub, &row)?;
        let kk = Array::full_sharded(&[], Scalar::Int(k as i128), it, &place)?;
        let keep = offset.binary(if upper { BinaryOp::Ge } else { BinaryOp::Le }, &kk)?;
        let zero = Array::full_sharded(&[], Scalar::Int(0), self.dtype(), &place)?;
        keep.where_cond(self, &zero)
    }

    /// Where this array's first shard lives (new constants are made there).
    pub(super) fn first_place(&self) -> Sharding {
        let s = &self.shard_data()[0];
        Sharding::SingleDevice(s.device.clone(), s.memory_kind())
    }
}
