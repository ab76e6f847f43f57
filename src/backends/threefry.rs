//! The Threefry-2x32 hash (20 rounds, Salmon et al. 2011, as JAX's `threefry2x32_p`) and what
//! a backend is asked when it makes random bits: one counter per element, the element's
//! row-major index in the whole (unsharded) array, so every sharding and every backend hashes
//! the same counters and gets the same bits.

use crate::error::{Error, Result};
use std::ops::Range;

const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
/// Skein's key-schedule parity constant.
const PARITY: u32 = 0x1BD1_1BDA;

/// Threefry-2x32 of the counter pair `x` under `key`: the two words JAX's
/// `threefry2x32_p.bind(k1, k2, x1, x2)` returns.
#[inline(always)]
pub fn threefry2x32(key: [u32; 2], x: [u32; 2]) -> [u32; 2] {
    let ks = [key[0], key[1], key[0] ^ key[1] ^ PARITY];
    let [mut x0, mut x1] = [x[0].wrapping_add(ks[0]), x[1].wrapping_add(ks[1])];
    for i in 0..5 {
        for &r in &ROTATIONS[i % 2] {
            x0 = x0.wrapping_add(x1);
            x1 = x1.rotate_left(r) ^ x0;
        }
        x0 = x0.wrapping_add(ks[(i + 1) % 3]);
        x1 = x1.wrapping_add(ks[(i + 2) % 3]).wrapping_add(i as u32 + 1);
    }
    [x0, x1]
}

/// Which words of each element's hash the output holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BitsForm {
    /// Both words, `[w0, w1]` per element (u32, twice the elements): keys from `split`.
    Pair,
    /// `w0 ^ w1` (u32): JAX's 32-bit (and, truncated, 8- and 16-bit) random bits.
    Xor,
    /// `w0 << 32 | w1` (u64): JAX's 64-bit random bits.
    Wide,
}

impl BitsForm {
    /// The form's name, as kernel names use it.
    pub const fn name(self) -> &'static str {
        match self {
            BitsForm::Pair => "pair",
            BitsForm::Xor => "xor",
            BitsForm::Wide => "wide",
        }
    }
    /// Every form.
    pub const ALL: [BitsForm; 3] = [BitsForm::Pair, BitsForm::Xor, BitsForm::Wide];

    /// u32 words per element in the output.
    pub const fn words(self) -> usize {
        match self {
            BitsForm::Xor => 1,
            BitsForm::Pair | BitsForm::Wide => 2,
        }
    }
}

/// The counters of one block of an array: element `idx` (a multi-index into `shape`) hashes
/// the 64-bit counter `offset + Σ idx[k] * strides[k]`, split into `(high, low)` words.
/// For a shard, `shape` is the shard's, `strides` the whole array's row-major strides, and
/// `offset` the counter of the shard's first element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counters {
    /// The block's extent along each axis.
    pub shape: Vec<usize>,
    /// The counter step along each axis (the whole array's row-major strides).
    pub strides: Vec<u64>,
    /// The counter of the block's first element.
    pub offset: u64,
}

impl Counters {
    /// The counters of the block `index` (one range per axis) of an array of `shape`. The
    /// array may hold at most 2^64 elements, as JAX's partitionable threefry requires.
    pub fn of_block(shape: &[usize], index: &[Range<usize>]) -> Result<Counters> {
        let total = shape
            .iter()
            .try_fold(1u128, |acc, &n| acc.checked_mul(n as u128));
        if total.is_none_or(|t| t > 1u128 << 64) {
            return Err(Error::invalid(format!(
                "random bits: an array of shape {shape:?} has more than 2^64 elements"
            )));
        }
        let mut strides = vec![0u64; shape.len()];
        let mut s = 1u64;
        for k in (0..shape.len()).rev() {
            strides[k] = s;
            s = s.wrapping_mul(shape[k] as u64);
        }
        let offset = index.iter().zip(&strides).fold(0u64, |acc, (r, &st)| {
            acc.wrapping_add((r.start as u64).wrapping_mul(st))
        });
        Ok(Counters {
            shape: index.iter().map(|r| r.len()).collect(),
            strides,
            offset,
        })
    }

    /// The same counters over fewer axes: size-1 axes dropped and row-major neighbours
    /// whose counters step evenly merged (a whole array or a row block becomes one axis).
    pub fn merged(&self) -> Counters {
        let mut shape: Vec<usize> = Vec::new();
        let mut strides: Vec<u64> = Vec::new();
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            if n == 1 {
                continue;
            }
            match (shape.last_mut(), strides.last_mut()) {
                (Some(pn), Some(ps)) if Some(*ps) == s.checked_mul(n as u64) => {
                    *pn *= n;
                    *ps = s;
                }
                _ => {
                    shape.push(n);
                    strides.push(s);
                }
            }
        }
        if self.is_empty() {
            // No element: keep one empty axis so the block stays empty.
            shape = vec![0];
            strides = vec![1];
        }
        Counters {
            shape,
            strides,
            offset: self.offset,
        }
    }

    /// The largest counter of the block (`None` for an empty block or past 2^64).
    pub fn last(&self) -> Option<u64> {
        if self.is_empty() {
            return None;
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&n, &s)| {
                acc.checked_add((n as u64 - 1).checked_mul(s)?)
            })
    }

    /// Elements in the block.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the block holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hashes of the whole block as `form`, in a host vector (allocated fallibly):
    /// what a backend without its own kernel uploads.
    pub fn hash_on_host(&self, key: [u32; 2], form: BitsForm, device: &str) -> Result<Vec<u32>> {
        let words = self.len().checked_mul(form.words()).ok_or_else(|| {
            Error::invalid(format!("random bits: {} elements overflow", self.len()))
        })?;
        let mut out: Vec<u32> = crate::backends::host::try_host_vec(words, device)?;
        self.hash_into(key, form, 0..self.len(), &mut out);
        Ok(out)
    }

    /// Writes the hashes of elements `range` (row-major positions in the block) as `form`
    /// into `out`, `form.words()` u32 words per element.
    pub fn hash_into(&self, key: [u32; 2], form: BitsForm, range: Range<usize>, out: &mut [u32]) {
        let w = form.words();
        debug_assert_eq!(out.len(), range.len() * w);
        if range.is_empty() {
            return;
        }
        // The multi-index of the range's first element, then an odometer over the block.
        let nd = self.shape.len();
        let mut idx = vec![0usize; nd];
        let mut rest = range.start;
        for k in (0..nd).rev() {
            idx[k] = rest % self.shape[k];
            rest /= self.shape[k];
        }
        let mut counter = idx
            .iter()
            .zip(&self.strides)
            .fold(self.offset, |acc, (&i, &s)| {
                acc.wrapping_add((i as u64).wrapping_mul(s))
            });
        for chunk in out.chunks_exact_mut(w) {
            let h = threefry2x32(key, [(counter >> 32) as u32, counter as u32]);
            match form {
                BitsForm::Xor => chunk[0] = h[0] ^ h[1],
                // Wide is a u64 per element: the low word first on little-endian hosts.
                BitsForm::Wide if cfg!(target_endian = "little") => {
                    chunk.copy_from_slice(&[h[1], h[0]])
                }
                BitsForm::Pair | BitsForm::Wide => chunk.copy_from_slice(&h),
            }
            // Next element: bump the innermost axis, carrying into outer ones.
            let mut k = nd;
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                idx[k] += 1;
                counter = counter.wrapping_add(self.strides[k]);
                if idx[k] < self.shape[k] {
                    break;
                }
                counter = counter.wrapping_sub(self.strides[k].wrapping_mul(self.shape[k] as u64));
                idx[k] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The known-answer vectors of Random123 (kat_vectors, threefry2x32_20), which JAX's
    /// `testThreefry2x32` checks too.
    #[test]
    fn random123_known_answers() {
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(
            threefry2x32([u32::MAX, u32::MAX], [u32::MAX, u32::MAX]),
            [0x1cb9_96fc, 0xbb00_2be7]
        );
        assert_eq!(
            threefry2x32([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]),
            [0xc492_3a9c, 0x483d_f7a0]
        );
    }

    #[test]
    fn a_block_hashes_the_whole_array_counters() {
        let shape = [3, 4, 5];
        let whole = Counters::of_block(&shape, &[0..3, 0..4, 0..5]).unwrap();
        let mut all = vec![0u32; 60];
        whole.hash_into([1, 2], BitsForm::Xor, 0..60, &mut all);
        let block = Counters::of_block(&shape, &[1..3, 1..3, 2..5]).unwrap();
        let mut part = vec![0u32; 12];
        // In two pieces, the second starting mid-row.
        block.hash_into([1, 2], BitsForm::Xor, 0..5, &mut part[..5]);
        block.hash_into([1, 2], BitsForm::Xor, 5..12, &mut part[5..]);
        let mut want = Vec::new();
        for i in 1..3 {
            for j in 1..3 {
                for k in 2..5 {
                    want.push(all[i * 20 + j * 5 + k]);
                }
            }
        }
        assert_eq!(part, want);
    }

    #[test]
    fn merging_keeps_every_counter() {
        let shape = [4, 1, 6, 5];
        for index in [
            vec![0..4, 0..1, 0..6, 0..5],
            vec![1..3, 0..1, 0..6, 0..5],
            vec![0..4, 0..1, 2..4, 0..5],
            vec![0..4, 0..1, 0..6, 1..2],
            vec![3..3, 0..1, 0..6, 0..5],
        ] {
            let c = Counters::of_block(&shape, &index).unwrap();
            let m = c.merged();
            assert!(m.shape.len() <= c.shape.len());
            let (mut a, mut b) = (vec![0; c.len()], vec![0; m.len()]);
            c.hash_into([3, 4], BitsForm::Xor, 0..c.len(), &mut a);
            m.hash_into([3, 4], BitsForm::Xor, 0..m.len(), &mut b);
            assert_eq!(a, b, "{index:?}");
        }
        let whole = Counters::of_block(&shape, &[0..4, 0..1, 0..6, 0..5])
            .unwrap()
            .merged();
        assert_eq!((whole.last(), whole.shape), (Some(119), vec![120]));
    }

    #[test]
    fn counters_past_two_to_the_64_are_refused() {
        let huge = [1usize << 33, 1 << 32];
        assert!(Counters::of_block(&huge, &[0..1, 0..1]).is_err());
        let edge = [1usize << 32, 1 << 32];
        let c = Counters::of_block(&edge, &[(1 << 32) - 1..1 << 32, 7..8]).unwrap();
        assert_eq!(c.offset, ((1u64 << 32) - 1) << 32 | 7);
    }
}
