//! The distributions, composed from one random-bits kernel and elementwise ops, step for
//! step as `jax._src.random` composes them from lax ops.

use super::Key;
use crate::array::sharding::Sharding;
use crate::array::{Array, ShardData};
use crate::backends::threefry::{BitsForm, Counters};
use crate::backends::{BinaryOp, registry};
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::{Layout, checked_size};

/// Draws from one key onto a sharding: the distributions of [`crate::random`] placed where
/// the caller wants them (the module's functions use the default device).
#[derive(Debug, Clone)]
pub struct Sampler {
    key: Key,
    sharding: Sharding,
}

impl Sampler {
    /// Draws from `key` onto the default device.
    pub fn new(key: &Key) -> Result<Sampler> {
        let d = registry::default_device()?;
        Ok(Sampler::sharded(key, &Sharding::single(&d)))
    }

    /// Draws from `key` laid out by `sharding`: each device hashes only its own elements'
    /// counters, and the values are those of the unsharded array.
    pub fn sharded(key: &Key, sharding: &Sharding) -> Sampler {
        Sampler {
            key: *key,
            sharding: sharding.clone(),
        }
    }

    /// `x` laid out as asked: ops on pinned host memory give device memory (as JAX's do),
    /// so a draw for a pinned-host sharding is moved back there once, at the end.
    fn placed(&self, x: Array) -> Result<Array> {
        x.device_put(&self.sharding)
    }

    fn with_key(&self, key: Key) -> Sampler {
        Sampler {
            key,
            sharding: self.sharding.clone(),
        }
    }

    /// The raw hashes of `shape` as `form`: u32 (`Xor`), u64 (`Wide`), or u32 with a
    /// trailing axis of 2 (`Pair`), each shard made by its own device's backend.
    pub(crate) fn raw(&self, shape: &[usize], form: BitsForm) -> Result<Array> {
        checked_size(shape)?;
        let kind = self.sharding.memory_kind();
        let (dtype, pair) = match form {
            BitsForm::Xor => (DType::U32, false),
            BitsForm::Wide => (DType::U64, false),
            _ => (DType::U32, true),
        };
        let mut shards = Vec::new();
        for (device, index) in self.sharding.shard_indices(shape)? {
            let counters = Counters::of_block(shape, &index)?;
            let buffer = device.backend().random_bits(
                device.index(),
                kind,
                self.key.data(),
                &counters,
                form,
            )?;
            let mut sub = counters.shape.clone();
            let mut index = index;
            if pair {
                sub.push(2);
                index.push(0..2);
            }
            shards.push(ShardData {
                device,
                layout: Layout::contiguous(&sub)?,
                index: index.into(),
                buffer,
            });
        }
        let (full, sharding) = if pair {
            let sources: Vec<Option<usize>> = (0..shape.len()).map(Some).chain([None]).collect();
            let mut s = shape.to_vec();
            s.push(2);
            (s, self.sharding.with_axes(&sources))
        } else {
            (shape.to_vec(), self.sharding.clone())
        };
        Ok(Array::from_shards(&full, dtype, sharding, shards, false))
    }

    /// `bits` of width `nbits` (8, 16, 32, 64) as JAX's partitionable threefry makes them.
    fn bits_of_width(&self, shape: &[usize], nbits: usize) -> Result<Array> {
        match nbits {
            64 => self.raw(shape, BitsForm::Wide),
            32 => self.raw(shape, BitsForm::Xor),
            8 => self.raw(shape, BitsForm::Xor)?.astype(DType::U8),
            _ => self.raw(shape, BitsForm::Xor)?.astype(DType::U16),
        }
    }

    /// Random bits of an unsigned dtype, as `jax.random.bits`.
    pub fn bits(&self, shape: &[usize], dtype: DType) -> Result<Array> {
        match dtype {
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
                self.placed(self.bits_of_width(shape, 8 * dtype.size_in_bytes())?)
            }
            _ => Err(Error::DTypeMismatch {
                op: "random.bits",
                expected: "an unsigned integer dtype (uint8, uint16, uint32, uint64)".into(),
                got: dtype,
            }),
        }
    }

    /// Floats uniform in `[minval, maxval)`, as `jax.random.uniform`: random mantissa bits
    /// with exponent 0 give `[1, 2)`, less 1, scaled, shifted, and clamped below at `minval`.
    pub fn uniform(
        &self,
        shape: &[usize],
        dtype: DType,
        minval: f64,
        maxval: f64,
    ) -> Result<Array> {
        self.placed(self.uniform_draw(shape, dtype, minval, maxval)?)
    }

    /// Standard normal floats, as `jax.random.normal`: `sqrt(2) * erfinv(u)` for `u`
    /// uniform in `(-1, 1)`, with the single- or double-precision polynomials of Giles'
    /// erfinv that XLA evaluates.
    pub fn normal(&self, shape: &[usize], dtype: DType) -> Result<Array> {
        self.placed(self.normal_draw(shape, dtype)?)
    }

    /// Integers uniform in `[minval, maxval)`, as `jax.random.randint`: two draws of the
    /// dtype's width combined modulo the span, which keeps the bias of a span that is not a
    /// power of two small. Bounds outside the dtype are clipped to it, and `maxval <= minval`
    /// gives `minval`.
    pub fn randint(
        &self,
        shape: &[usize],
        minval: i64,
        maxval: i64,
        dtype: DType,
    ) -> Result<Array> {
        self.placed(self.randint_draw(shape, minval, maxval, dtype)?)
    }

    // The draws, left where their last op put them: the public forms place them once.

    fn uniform_draw(
        &self,
        shape: &[usize],
        dtype: DType,
        minval: f64,
        maxval: f64,
    ) -> Result<Array> {
        let nmant = mantissa_bits(dtype, "random.uniform")?;
        let nbits = 8 * dtype.size_in_bytes();
        // bfloat16's 7 mantissa bits come from 8 random bits, as JAX's.
        let rng_bits = if nmant < 8 { 8 } else { nbits };
        let mut bits = self.bits_of_width(shape, rng_bits)?;
        if rng_bits != nbits {
            bits = bits.astype(DType::U16)?;
        }
        // (bits >> (rng_bits - nmant)) * 2^-nmant is exactly JAX's bitcast of
        // `bits >> .. | 1.0` less 1: both are the mantissa over 2^nmant, and every value is
        // representable, so the integer-to-float conversion is exact.
        let mantissa = bits.binary_scalar(
            BinaryOp::RightShift,
            Scalar::Int((rng_bits - nmant as usize) as i128),
            false,
        )?;
        let floats = mantissa.astype(dtype)?.binary_scalar(
            BinaryOp::Mul,
            Scalar::Float((-(nmant as f64)).exp2()),
            false,
        )?;
        let (lo, hi) = (round_to(dtype, minval), round_to(dtype, maxval));
        let span = sub_in(dtype, hi, lo);
        // float16 scales in float32 and rounds once at the end, as XLA computes it (the
        // product is exact there); bfloat16 rounds each step, as XLA does. Both match JAX's
        // CPU results bit for bit. float32 and float64 round the product and the sum
        // separately, as JAX's formula is written; XLA's CPU compiler contracts them into one
        // fused multiply-add, so with bounds other than [0, 1) its last bit can differ.
        let floats = if dtype == DType::F16 {
            floats.astype(DType::F32)?
        } else {
            floats
        };
        floats
            .binary_scalar(BinaryOp::Mul, Scalar::Float(span), false)?
            .binary_scalar(BinaryOp::Add, Scalar::Float(lo), false)?
            .astype(dtype)?
            .binary_scalar(BinaryOp::Maximum, Scalar::Float(lo), false)
    }

    fn normal_draw(&self, shape: &[usize], dtype: DType) -> Result<Array> {
        // nextafter(-1, 0) in dtype: -(1 - 2^-(nmant+1)).
        let nmant = mantissa_bits(dtype, "random.normal")?;
        let lo = -(1.0 - (-(nmant as f64 + 1.0)).exp2());
        let u = self.uniform_draw(shape, dtype, lo, 1.0)?;
        super::erfinv::erfinv(&u)?.binary_scalar(
            BinaryOp::Mul,
            Scalar::Float(round_to(dtype, std::f64::consts::SQRT_2)),
            false,
        )
    }

    fn randint_draw(
        &self,
        shape: &[usize],
        minval: i64,
        maxval: i64,
        dtype: DType,
    ) -> Result<Array> {
        if !dtype.is_integer() {
            return Err(Error::DTypeMismatch {
                op: "random.randint",
                expected: "an integer dtype".into(),
                got: dtype,
            });
        }
        let nbits = 8 * dtype.size_in_bytes() as u32;
        if nbits < 32 {
            // As JAX (0.10) does: narrow dtypes sample int32 in the dtype's range (the
            // bound one past its maximum allowed), then convert.
            let (tmin, tmax) = limits(dtype);
            let clip = |v: i64, hi: i128| (v as i128).clamp(tmin, hi) as i64;
            return self
                .randint_draw(
                    shape,
                    clip(minval, tmax),
                    clip(maxval, tmax + 1),
                    DType::I32,
                )?
                .astype(dtype);
        }
        let (tmin, tmax) = limits(dtype);
        let out_of_range = maxval as i128 > tmax;
        let (lo, hi) = (
            (minval as i128).clamp(tmin, tmax),
            (maxval as i128).clamp(tmin, tmax),
        );
        let mask = if nbits == 64 {
            u64::MAX
        } else {
            (1u64 << nbits) - 1
        };
        // The span in the unsigned type of the dtype's width, with JAX's two adjustments.
        let mut span = ((hi - lo) as u64) & mask;
        if hi <= lo {
            span = 1;
        }
        if out_of_range && hi > lo {
            span = span.wrapping_add(1) & mask;
        }
        let [k1, k2] = self.key.split_n::<2>();
        let higher = self.with_key(k1).bits_of_width(shape, nbits as usize)?;
        let lower = self.with_key(k2).bits_of_width(shape, nbits as usize)?;
        let offset = if span == 0 {
            // The whole range of the dtype (randint(0, 256, uint8)): XLA's `x % 0` is `x`,
            // so JAX's formula reduces to the low draw.
            lower
        } else {
            // 2^nbits mod span, from (2^(nbits/2) mod span)^2 without overflow.
            let half = (1u128 << (nbits / 2)) % span as u128;
            let multiplier = ((half * half) & mask as u128) as u64 % span;
            let rem = |a: &Array| a.binary_scalar(BinaryOp::Remainder, int(span), false);
            rem(&higher)?
                .binary_scalar(BinaryOp::Mul, int(multiplier), false)?
                .binary(BinaryOp::Add, &rem(&lower)?)
                .and_then(|x| rem(&x))?
        };
        offset
            .astype(dtype)?
            .binary_scalar(BinaryOp::Add, Scalar::Int(lo), false)
    }
}

fn int(v: u64) -> Scalar {
    Scalar::Int(v as i128)
}

/// The stored mantissa bits of a float dtype (NumPy's `finfo.nmant`).
fn mantissa_bits(dtype: DType, op: &'static str) -> Result<u32> {
    match dtype {
        DType::F16 => Ok(10),
        DType::BF16 => Ok(7),
        DType::F32 => Ok(23),
        DType::F64 => Ok(52),
        _ => Err(Error::DTypeMismatch {
            op,
            expected: "a real floating dtype (float16, bfloat16, float32, float64)".into(),
            got: dtype,
        }),
    }
}

/// `v` rounded to `dtype`, as an f64.
fn round_to(dtype: DType, v: f64) -> f64 {
    crate::with_dtype!(dtype, T => match T::from_scalar(Scalar::Float(v)).to_scalar() {
        Scalar::Float(f) => f,
        _ => v,
    })
}

/// `a - b` in `dtype`'s own arithmetic (f32 subtracts in f32: f64 could round the exact
/// difference once more before it is rounded to f32).
fn sub_in(dtype: DType, a: f64, b: f64) -> f64 {
    match dtype {
        DType::F32 => (a as f32 - b as f32) as f64,
        // Half floats' exact difference fits in f64, so one rounding to the dtype is exact.
        _ => round_to(dtype, a - b),
    }
}

/// The range of an integer dtype.
fn limits(dtype: DType) -> (i128, i128) {
    let bits = 8 * dtype.size_in_bytes() as u32;
    if dtype.kind() == crate::dtype::Kind::UInt {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}
