//! Sorting and searching: `sort`, `argsort`, `searchsorted`, and the set functions built on
//! a sort (`unique_*`, `isin`). These are data-dependent, so they run on the host: the
//! array is read once, ordered there, and the result placed back where the input lives
//! (the same sharding for `sort` and `argsort`, the first device otherwise).
//!
//! The order is NumPy's: numbers ascending, NaN last; complex numbers by real part, then
//! imaginary part; `false < true`. Every sort is stable.

use super::Array;
use super::sharding::Sharding;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::layout::{axis_last, inverse_permutation, normalize_axis};
use std::cmp::Ordering;

/// NumPy's total order of an element type (NaN after every number).
pub(crate) trait SortKey: Element {
    fn order(&self, other: &Self) -> Ordering;
    /// NaN (either part, for complex numbers): equal to nothing, itself included.
    fn is_nan_(&self) -> bool {
        false
    }
}

macro_rules! ord_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(&self, other: &Self) -> Ordering { self.cmp(other) }
        }
    )*};
}
ord_key!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // -0 and +0 are equal, as NumPy compares them.
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(&self, other: &Self) -> Ordering {
                float_order(f64::from(*self), f64::from(*other))
            }
            fn is_nan_(&self) -> bool { f64::from(*self).is_nan() }
        }
    )*};
}
float_key!(f32, f64, half::f16, half::bf16);

macro_rules! complex_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(&self, other: &Self) -> Ordering {
                float_order(f64::from(self.re), f64::from(other.re))
                    .then_with(|| float_order(f64::from(self.im), f64::from(other.im)))
            }
            fn is_nan_(&self) -> bool { self.re.is_nan() || self.im.is_nan() }
        }
    )*};
}
complex_key!(num_complex::Complex32, num_complex::Complex64);

impl Array {
    /// The values along `axis` as rows: the array with `axis` moved last, read row-major.
    fn rows_along<T: Element>(&self, axis: usize) -> Result<(Vec<T>, usize, Vec<usize>)> {
        let perm = axis_last(self.ndim(), axis);
        let moved = self.permute(&perm)?;
        Ok((moved.to_vec::<T>()?, self.shape()[axis].max(1), perm))
    }

    /// Row-major `data` of the permuted shape `perm`, put back in this array's axis order.
    fn rows_back<T: Element>(&self, data: Vec<T>, perm: &[usize]) -> Result<Array> {
        let moved: Vec<usize> = perm.iter().map(|&k| self.shape()[k]).collect();
        Array::from_vec(data, &moved)?.permute(&inverse_permutation(perm))
    }

    /// Indices computed on the host (int64) as this array's devices take them: int32 where
    /// they have no 64-bit kernels, as `argmax` gives them there (JAX without x64): int64
    /// indices on wgpu could not be added to or compared there.
    /// The narrowing happens on the host: `host` is on the default device, which may itself
    /// lack 64-bit kernels (wgpu as the only backend).
    pub(super) fn indices_on(&self, host: Array, place: &Sharding) -> Result<Array> {
        match self.on_devices(DType::I64) {
            DType::I64 => host.device_put(place),
            _ => {
                // An index past i32 indexes nothing on a device without 64-bit types.
                let narrow: Vec<i32> = host
                    .to_vec::<i64>()?
                    .into_iter()
                    .map(|i| i as i32)
                    .collect();
                Array::from_vec(narrow, host.shape())?.device_put(place)
            }
        }
    }

    /// The indices that sort the array along `axis` (stable), as int64 (int32 on devices
    /// without 64-bit kernels): the array API's `argsort(x, axis=-1, descending=False,
    /// stable=True)`.
    pub fn argsort(&self, axis: isize, descending: bool) -> Result<Array> {
        let axis = normalize_axis(axis, self.ndim().max(1))?;
        if self.ndim() == 0 {
            return self.indices_on(Array::from_vec(vec![0i64], &[])?, &self.first_place());
        }
        let out = crate::with_dtype!(self.dtype(), T => {
            let (data, n, perm) = self.rows_along::<T>(axis)?;
            let mut idx: Vec<i64> = Vec::with_capacity(data.len());
            for row in data.chunks(n) {
                let mut r: Vec<i64> = (0..row.len() as i64).collect();
                r.sort_by(|&i, &j| {
                    let o = row[i as usize].order(&row[j as usize]);
                    if descending { o.reverse() } else { o }
                });
                idx.extend(r);
            }
            self.rows_back(idx, &perm)?
        });
        self.indices_on(out, self.sharding())
    }

    /// The array sorted along `axis` (stable), as the array API's `sort`.
    pub fn sort(&self, axis: isize, descending: bool) -> Result<Array> {
        if self.ndim() == 0 {
            return Ok(self.clone());
        }
        let axis = normalize_axis(axis, self.ndim())?;
        let out = crate::with_dtype!(self.dtype(), T => {
            let (mut data, n, perm) = self.rows_along::<T>(axis)?;
            for row in data.chunks_mut(n) {
                row.sort_by(|a, b| if descending { b.order(a) } else { a.order(b) });
            }
            self.rows_back(data, &perm)?
        });
        out.device_put(self.sharding())
    }

    /// For each value of `values`, where it would go in this sorted 1-D array to keep it
    /// sorted: the first such place (`right == false`) or the last, as `searchsorted`.
    pub fn searchsorted(&self, values: &Array, right: bool) -> Result<Array> {
        if self.ndim() != 1 {
            return Err(Error::invalid(format!(
                "searchsorted: the sorted array must be 1-D, not of shape {:?}",
                self.shape()
            )));
        }
        // Cast where each array is (then read to the host): 32 bits where its devices have
        // no 64-bit kernels, as every op there.
        let dtype = Array::promoted_on_devices(&[self, values]);
        let (a, v) = (self.astype(dtype)?, values.astype(dtype)?);
        let out = crate::with_dtype!(dtype, T => {
            let (sorted, vals) = (a.to_vec::<T>()?, v.to_vec::<T>()?);
            let at: Vec<i64> = vals
                .iter()
                .map(|x| {
                    sorted.partition_point(|s| {
                        let o = s.order(x);
                        if right { o != Ordering::Greater } else { o == Ordering::Less }
                    }) as i64
                })
                .collect();
            Array::from_vec(at, values.shape())?
        });
        values.indices_on(out, &values.first_place())
    }

    /// The array API's `unique_all`: the distinct values, sorted (each NaN distinct, as the
    /// standard has it), the index of each one's first occurrence in the flattened array,
    /// the index of each element's value among them (in this array's shape), and counts.
    pub fn unique_all(&self) -> Result<[Array; 4]> {
        let place = self.first_place();
        let flat = self.flatten()?;
        let (values, first, inverse, counts) = crate::with_dtype!(self.dtype(), T => {
            let data = flat.to_vec::<T>()?;
            let mut order: Vec<usize> = (0..data.len()).collect();
            order.sort_by(|&i, &j| data[i].order(&data[j]));
            let (mut values, mut first, mut counts) = (Vec::new(), Vec::new(), Vec::<i64>::new());
            let mut inverse = vec![0i64; data.len()];
            for (k, &i) in order.iter().enumerate() {
                // NaN never equals NaN: each is its own value, as NumPy 2's `equal_nan=False`.
                let new = k == 0
                    || data[i].is_nan_()
                    || data[order[k - 1]].order(&data[i]) != Ordering::Equal;
                if new {
                    values.push(data[i]);
                    first.push(i as i64);
                    counts.push(0);
                }
                *counts.last_mut().unwrap_or(&mut 0) += 1;
                inverse[i] = values.len() as i64 - 1;
            }
            let n = values.len();
            (
                Array::from_vec(values, &[n])?,
                Array::from_vec(first, &[n])?,
                Array::from_vec(inverse, &[data.len()])?,
                Array::from_vec(counts, &[n])?,
            )
        });
        let shape: Vec<isize> = self.shape().iter().map(|&n| n as isize).collect();
        Ok([
            values.device_put(&place)?,
            self.indices_on(first, &place)?,
            self.indices_on(inverse.reshape(&shape)?, &place)?,
            self.indices_on(counts, &place)?,
        ])
    }

    /// Whether each element is among `test`'s (NumPy's `isin`; `invert` negates it).
    pub fn isin(&self, test: &Array, invert: bool) -> Result<Array> {
        let dtype = Array::promoted_on_devices(&[self, test]);
        let (a, t) = (self.astype(dtype)?, test.flatten()?.astype(dtype)?);
        let out = crate::with_dtype!(dtype, T => {
            let mut set = t.to_vec::<T>()?;
            set.sort_by(|x, y| x.order(y));
            let found: Vec<bool> = a
                .to_vec::<T>()?
                .iter()
                .map(|x| {
                    // NaN is in no set (it equals nothing).
                    let hit = !x.is_nan_() && set.binary_search_by(|s| s.order(x)).is_ok();
                    hit != invert
                })
                .collect();
            Array::from_vec(found, self.shape())?
        });
        out.device_put(&self.first_place())
    }
}
