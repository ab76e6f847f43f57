//! Counter-based random numbers with explicit keys: JAX's `jax.random` on the Threefry-2x32
//! generator, bit for bit.
//!
//! A [`Key`] is two u32 words, as `jax.random.key_data(jax.random.key(seed))`. Nothing is
//! stateful: the same key and shape give the same array, and new streams come from
//! [`Key::split`] and [`Key::fold_in`]. Each element hashes its row-major index in the whole
//! array (JAX's "partitionable" threefry, its default since 0.5), so the bits do not depend
//! on the backend, on the sharding, or on how the array is later cut.
//!
//! ```
//! use dlarray::{DType, random::{self, Key}};
//! let key = Key::new(0);
//! let [k1, k2] = key.split_n::<2>();
//! let u = random::uniform(&k1, &[2, 3], DType::F32, 0.0, 1.0)?;   // jax.random.uniform
//! let n = random::normal(&k2, &[4], DType::F32)?;                // jax.random.normal
//! let i = random::randint(&key, &[5], 0, 10, DType::I32)?;       // jax.random.randint
//! assert_eq!(u.shape(), &[2, 3]);
//! # let _ = (n, i);
//! # Ok::<(), dlarray::Error>(())
//! ```
//!
//! What is exact: `bits`, `uniform` and `randint` are integer operations and correctly
//! rounded float operations only, so they are bit-identical on every backend and equal to
//! JAX's. `normal` also needs `log` and `sqrt`: bit-identical across shardings and on the
//! host backends, within a few ulps of JAX (XLA evaluates the same polynomial with its own
//! `log1p`) and of backends whose `log`/`sqrt` round differently (WGSL's are not correctly
//! rounded).

mod erfinv;
mod sampler;

pub use sampler::Sampler;

use crate::array::Array;
use crate::backends::threefry::threefry2x32;
use crate::dtype::DType;
use crate::error::Result;

/// A Threefry-2x32 key: the two words of a JAX `threefry2x32` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key([u32; 2]);

impl Key {
    /// The key of an integer seed, as `jax.random.key(seed)`: a seed that fits in i32 gives
    /// `[0, seed as u32]` (JAX's default, 32-bit seeds), a wider one its two 32-bit halves
    /// (JAX with `jax_enable_x64`, the only mode that accepts it).
    pub fn new(seed: i64) -> Key {
        if i32::try_from(seed).is_ok() {
            Key([0, seed as u32])
        } else {
            Key([((seed as u64) >> 32) as u32, seed as u32])
        }
    }

    /// A key from its two words (`jax.random.wrap_key_data`).
    pub const fn from_data(data: [u32; 2]) -> Key {
        Key(data)
    }

    /// The key's two words (`jax.random.key_data`).
    pub const fn data(&self) -> [u32; 2] {
        self.0
    }

    /// `n` new keys, as `jax.random.split(key, n)`: key `i` is the hash of counter `i`.
    pub fn split(&self, n: usize) -> Vec<Key> {
        (0..n as u64)
            .map(|i| Key(threefry2x32(self.0, [(i >> 32) as u32, i as u32])))
            .collect()
    }

    /// [`split`](Key::split) into an array of `N` keys, for `let [a, b] = key.split_n()`.
    pub fn split_n<const N: usize>(&self) -> [Key; N] {
        std::array::from_fn(|i| Key(threefry2x32(self.0, [0, i as u32])))
    }

    /// A key for `data` derived from this one, as `jax.random.fold_in(key, data)`.
    pub fn fold_in(&self, data: u32) -> Key {
        Key(threefry2x32(self.0, [0, data]))
    }
}

/// Random bits of an unsigned dtype (u8, u16, u32, u64) on the default device, as
/// `jax.random.bits(key, shape, dtype)`.
pub fn bits(key: &Key, shape: &[usize], dtype: DType) -> Result<Array> {
    Sampler::new(key)?.bits(shape, dtype)
}

/// Floats uniform in `[minval, maxval)` on the default device, as
/// `jax.random.uniform(key, shape, dtype, minval, maxval)`.
pub fn uniform(
    key: &Key,
    shape: &[usize],
    dtype: DType,
    minval: f64,
    maxval: f64,
) -> Result<Array> {
    Sampler::new(key)?.uniform(shape, dtype, minval, maxval)
}

/// Standard normal floats on the default device, as `jax.random.normal(key, shape, dtype)`.
pub fn normal(key: &Key, shape: &[usize], dtype: DType) -> Result<Array> {
    Sampler::new(key)?.normal(shape, dtype)
}

/// Integers uniform in `[minval, maxval)` on the default device, as
/// `jax.random.randint(key, shape, minval, maxval, dtype)`.
pub fn randint(
    key: &Key,
    shape: &[usize],
    minval: i64,
    maxval: i64,
    dtype: DType,
) -> Result<Array> {
    Sampler::new(key)?.randint(shape, minval, maxval, dtype)
}

#[cfg(test)]
mod tests {
    use super::Key;

    #[test]
    fn keys_are_jax_keys() {
        // jax.random.key_data(jax.random.key(s)) and jax.random.split(jax.random.key(0), 3)
        assert_eq!(Key::new(42).data(), [0, 42]);
        assert_eq!(Key::new(-1).data(), [0, u32::MAX]);
        assert_eq!(Key::new(1 << 40).data(), [256, 0]);
        let split: Vec<[u32; 2]> = Key::new(0).split(3).iter().map(Key::data).collect();
        assert_eq!(
            split,
            [
                [1797259609, 2579123966],
                [928981903, 3453687069],
                [4146024105, 2718843009]
            ]
        );
        assert_eq!(
            Key::new(0).split_n::<3>().map(|k| k.data()),
            [split[0], split[1], split[2]]
        );
        assert_eq!(Key::new(0).fold_in(2).data(), split[2]);
    }
}
