//! The element types a product reads and writes, and the type it accumulates in: f32 and
//! f64 in themselves; float16 and bfloat16 in f32, widened as their panels are packed and
//! rounded once as C is written (so no widened copy of the operands is ever made).

use super::kernel::Tile;
use crate::backends::host::simd;
use std::mem::MaybeUninit;

/// An operand element type.
///
/// # Safety
/// `NATIVE` is true only when `Self` and `Acc` are the same type: the product then packs and
/// writes through pointers cast between the two.
pub(crate) unsafe trait Operand: Copy + Send + Sync + 'static {
    /// The type the register tile accumulates in.
    type Acc: Tile;
    /// Whether `Self` is `Acc` (no conversion on packing or writing).
    const NATIVE: bool;
    const ZERO: Self;
    /// `dst[i] = src[i]` widened, for `src.len()` elements.
    fn widen(src: &[Self], dst: &mut [MaybeUninit<Self::Acc>]);
    /// `dst[i] = src[i]` rounded to nearest even, for `src.len()` elements.
    fn narrow(src: &[Self::Acc], dst: &mut [MaybeUninit<Self>]);
}

/// f32 and f64: the identity (never called: `NATIVE` skips the conversion).
macro_rules! native {
    ($t:ty) => {
        // SAFETY: `Acc` is `Self`.
        unsafe impl Operand for $t {
            type Acc = $t;
            const NATIVE: bool = true;
            const ZERO: Self = 0.0;
            fn widen(src: &[Self], dst: &mut [MaybeUninit<Self>]) {
                for (d, &s) in dst.iter_mut().zip(src) {
                    d.write(s);
                }
            }
            fn narrow(src: &[Self], dst: &mut [MaybeUninit<Self>]) {
                Self::widen(src, dst)
            }
        }
    };
}
native!(f32);
native!(f64);

// SAFETY: `NATIVE` is false.
unsafe impl Operand for half::f16 {
    type Acc = f32;
    const NATIVE: bool = false;
    const ZERO: Self = half::f16::ZERO;
    fn widen(src: &[Self], dst: &mut [MaybeUninit<f32>]) {
        simd::f16_to_f32(src, &mut dst[..src.len()]);
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<Self>]) {
        simd::f32_to_f16(src, &mut dst[..src.len()]);
    }
}

// SAFETY: `NATIVE` is false.
unsafe impl Operand for half::bf16 {
    type Acc = f32;
    const NATIVE: bool = false;
    const ZERO: Self = half::bf16::ZERO;
    fn widen(src: &[Self], dst: &mut [MaybeUninit<f32>]) {
        simd::bf16_to_f32(src, &mut dst[..src.len()]);
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<Self>]) {
        simd::f32_to_bf16(src, &mut dst[..src.len()]);
    }
}
