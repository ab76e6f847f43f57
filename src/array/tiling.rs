//! Arrays made of copies of another: `tile`, `repeat`, `meshgrid`. Each is a broadcast view
//! (no copy) reshaped; the reshape is where the one copy happens, by the array's own backend.

use super::Array;
use crate::error::{Error, Result};
use crate::layout::{checked_size, normalize_axis};

impl Array {
    /// NumPy's `tile`: the array repeated `reps[k]` times along each axis. Shorter `reps`
    /// apply to the last axes; longer ones give the array leading axes of 1.
    pub fn tile(&self, reps: &[usize]) -> Result<Array> {
        let nd = self.ndim().max(reps.len());
        let mut shape = vec![1usize; nd - self.ndim()];
        shape.extend(self.shape());
        let mut r = vec![1usize; nd - reps.len()];
        r.extend(reps);
        // [1, s0, 1, s1, ...] broadcast to [r0, s0, r1, s1, ...], then merged pairwise.
        let split: Vec<isize> = shape.iter().flat_map(|&s| [1, s as isize]).collect();
        let wide: Vec<usize> = r.iter().zip(&shape).flat_map(|(&r, &s)| [r, s]).collect();
        // Checked before the products below: the whole fits in isize, so each `r * s` does.
        checked_size(&wide)?;
        let out: Vec<isize> = r
            .iter()
            .zip(&shape)
            .map(|(&r, &s)| (r * s) as isize)
            .collect();
        self.reshape(&split)?.broadcast_to(&wide)?.reshape(&out)
    }

    /// NumPy's `repeat` with one count: each element `repeats` times in a row along `axis`
    /// (`None`: of the flattened array).
    pub fn repeat(&self, repeats: usize, axis: Option<isize>) -> Result<Array> {
        let (x, axis) = match axis {
            None => (self.flatten()?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        let mut wide = x.shape().to_vec();
        wide.insert(axis + 1, repeats);
        checked_size(&wide)?;
        let mut out: Vec<isize> = x.shape().iter().map(|&n| n as isize).collect();
        out[axis] *= repeats as isize;
        x.expand_dims(axis as isize + 1)?
            .broadcast_to(&wide)?
            .reshape(&out)
    }

    /// NumPy's `repeat` with one count per element along `axis` (`None`: of the flattened
    /// array): element `i` appears `counts[i]` times in a row, so the axis becomes their sum.
    /// A single count applies to every element. A total past what memory can hold is an
    /// error, found before anything is allocated.
    pub fn repeat_each(&self, counts: &[usize], axis: Option<isize>) -> Result<Array> {
        let (x, k) = match axis {
            None => (self.flatten()?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        if let [c] = counts {
            return x.repeat(*c, Some(k as isize));
        }
        let n = x.shape()[k];
        if counts.len() != n {
            return Err(Error::invalid(format!(
                "repeat: {} counts for an axis of length {n}",
                counts.len()
            )));
        }
        let total = counts
            .iter()
            .try_fold(0usize, |t, &c| t.checked_add(c))
            .ok_or_else(|| Error::invalid("repeat: the counts' sum overflows"))?;
        let mut out_shape = x.shape().to_vec();
        out_shape[k] = total;
        checked_size(&out_shape)?;
        // The source index of each output position along the axis, gathered by `take`.
        let mut idx: Vec<i64> = crate::backends::host::try_host_capacity(total, "host")?;
        for (i, &c) in counts.iter().enumerate() {
            idx.extend(std::iter::repeat_n(i as i64, c));
        }
        x.take(&Array::from_vec(idx, &[total])?, Some(k as isize))
    }

    /// The array API's `meshgrid` of 1-D arrays: broadcast views, one per input, with
    /// `indexing` "xy" (the first two output axes swapped, NumPy's default) or "ij".
    pub fn meshgrid(arrays: &[&Array], indexing: &str) -> Result<Vec<Array>> {
        if indexing != "xy" && indexing != "ij" {
            return Err(Error::invalid(format!(
                "meshgrid: indexing must be \"xy\" or \"ij\", not {indexing:?}"
            )));
        }
        if let Some(a) = arrays.iter().find(|a| a.ndim() != 1) {
            return Err(Error::invalid(format!(
                "meshgrid takes 1-D arrays, not an array of shape {:?}",
                a.shape()
            )));
        }
        let mut shape: Vec<usize> = arrays.iter().map(|a| a.size()).collect();
        let xy = indexing == "xy" && arrays.len() >= 2;
        if xy {
            shape.swap(0, 1);
        }
        arrays
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let at = match i {
                    0 if xy => 1,
                    1 if xy => 0,
                    i => i,
                };
                let mut view = vec![1isize; shape.len()];
                view[at] = -1;
                a.reshape(&view)?.broadcast_to(&shape)
            })
            .collect()
    }
}
