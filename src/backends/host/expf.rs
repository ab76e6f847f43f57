//! `exp` of a float32, written so that the compiler vectorises a loop of it.
//!
//! The C library's `expf` is a call per element (~4 ns on this 2.45 GHz EPYC; no loop around
//! it can vectorise). This one has no branch and no call: in a loop compiled for AVX2
//! (`simd::wide`) it runs 4 lanes of f64 per instruction, ~1.05 ns an element, and for
//! AVX-512 (`simd::wide_arith`, where the processor has it) 8 lanes, ~0.80 ns, with the same
//! bits (`every_lane_width_gives_the_bits_of_the_scalar_function`, run in release). It computes in
//! f64, as glibc's `expf` does, so the result is the exact value rounded once to float32
//! except within ~1e-11 of a halfway case: 1,431 of the 2^32 float32s differ by one ulp from
//! the f64 `exp` rounded (glibc's own bound is 0.502 ulp; PyTorch's SLEEF `expf_u10`
//! promises 1 ulp). The same algorithm in float32 arithmetic ran in ~0.95 ns, with errors of
//! an ulp or two: not worth the 1.5x.
//!
//! No fused multiply-add: every path (vector, scalar, strided, a machine without FMA) gives
//! the same bits, and the product `k * ln 2` rounded once costs at most ~1e-14 relative.

/// Below this, `exp` rounds to +0 in float32 (`exp(-104) < 2^-150`); clamping keeps `2^k` a
/// normal f64.
const LO: f32 = -120.0;
/// Above this, `exp` is +inf in float32 (`exp(89) > f32::MAX`).
const HI: f32 = 100.0;
/// Adding 1.5 * 2^52 rounds an f64 below 2^51 in magnitude to an integer (ties to even),
/// left in the low bits of the sum's representation.
const SHIFT: f64 = 6_755_399_441_055_744.0;

/// `e^r` on `|r| <= ln(2)/2`: the degree-8 polynomial through the Chebyshev nodes of that
/// interval (computed at 50 digits, rounded to f64), relative error 1.2e-12.
const C: [f64; 9] = [
    1.0,
    0.999_999_999_979_785_2,
    0.499_999_999_997_979_34,
    0.166_666_668_910_457_75,
    0.041_666_666_890_957,
    0.008_333_266_097_949_614,
    0.001_388_882_167_763_036_2,
    0.000_199_158_669_267_826_82,
    2.487_616_402_262_596_7e-5,
];

/// `e^x` rounded to float32: +inf above ~88.72, +0 below ~-103.97, NaN for NaN.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    // `clamp` keeps NaN (it fails both tests); on float32, two selects for 8 lanes.
    let x = f64::from(x.clamp(LO, HI));
    // x = k ln 2 + r, k an integer, |r| <= ln(2)/2: e^x = 2^k e^r.
    let kd = x * std::f64::consts::LOG2_E + SHIFT;
    let k = kd - SHIFT;
    let r = x - k * std::f64::consts::LN_2;
    // Estrin's scheme: four independent pairs, then two levels (Horner's chain of 8
    // dependent steps took ~10% longer here).
    let r2 = r * r;
    let r4 = r2 * r2;
    let (p01, p23) = (C[0] + C[1] * r, C[2] + C[3] * r);
    let (p45, p67) = (C[4] + C[5] * r, C[6] + C[7] * r);
    let p = (p01 + p23 * r2) + ((p45 + p67 * r2) + C[8] * r4) * r4;
    // 2^k built in the exponent field: the low bits of `kd` hold k (|k| < 200).
    let scale = f64::from_bits(kd.to_bits().wrapping_add(1023) << 52);
    (p * scale) as f32
}

#[cfg(test)]
mod tests {
    use super::exp_f32;

    /// The distance in float32 steps between two finite floats of one sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn every_lane_width_gives_the_bits_of_the_scalar_function() {
        // Spread over every exponent, NaN and infinities included.
        let xs: Vec<f32> = (0..1u32 << 17)
            .map(|i| f32::from_bits(i.wrapping_mul(32_771)))
            .collect();
        let scalar: Vec<u32> = xs.iter().map(|&x| exp_f32(x).to_bits()).collect();
        use crate::backends::host::simd::{wide, wide_arith};
        // The loop inlined into each lane width's function (a `dyn` closure would not be).
        #[inline(always)]
        fn each(o: &mut [f32]) {
            o.iter_mut().for_each(|e| *e = exp_f32(*e));
        }
        let by = |widest: bool| {
            let mut out = xs.clone();
            if widest {
                wide_arith(
                    #[inline(always)]
                    || each(&mut out),
                );
            } else {
                wide(
                    #[inline(always)]
                    || each(&mut out),
                );
            }
            out.iter().map(|v| v.to_bits()).collect::<Vec<u32>>()
        };
        let nan = |v: &u32| f32::from_bits(*v).is_nan();
        let same = |a: &[u32]| {
            a.iter()
                .zip(&scalar)
                .all(|(p, q)| p == q || (nan(p) && nan(q)))
        };
        assert!(same(&by(false)));
        assert!(same(&by(true)));
        // And through the backend's kernel, split over its threads.
        let a = crate::Array::from_vec(xs.clone(), &[xs.len()]).unwrap();
        let e = a.exp().unwrap().to_vec::<f32>().unwrap();
        assert!(same(&e.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let nan = exp_f32(f32::NAN);
        assert!(nan.is_nan());
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(1.0), std::f32::consts::E);
        assert_eq!(exp_f32(88.72283).to_bits(), 0x7f7f_ff84);
        assert_eq!(exp_f32(88.72284), f32::INFINITY);
        assert_eq!(exp_f32(f32::MAX), f32::INFINITY);
        // The smallest subnormal, then rounding to zero.
        assert_eq!(exp_f32(-103.27893).to_bits(), 1);
        assert_eq!(exp_f32(-103.98).to_bits(), 0);
        assert_eq!(exp_f32(f32::MIN).to_bits(), 0);
        // Tiny arguments: 1 or its neighbours, as rounding says.
        assert_eq!(exp_f32(1e-10), 1.0);
        assert_eq!(exp_f32(-1e-10), 1.0);
        assert_eq!(exp_f32(1e-7), 1.000_000_1);
    }

    #[test]
    fn every_4099th_float32_is_within_half_an_ulp_and_a_hair_of_the_f64_exp() {
        let (mut bits, mut off) = (0u32, 0usize);
        let mut checked = 0u64;
        loop {
            let x = f32::from_bits(bits);
            let got = exp_f32(x);
            let want = f64::from(x).exp();
            if x.is_nan() {
                assert!(got.is_nan(), "exp({x:e})");
            } else if want.is_finite() && want as f32 != got {
                // Only where the exact value is a hair from halfway between two float32s.
                let (lo, hi) = (got.min(want as f32), got.max(want as f32));
                let mid = (f64::from(lo) + f64::from(hi)) / 2.0;
                assert_eq!(
                    ulps(got, want as f32),
                    1,
                    "exp({x:e}) = {got:e}, not {want:e}"
                );
                assert!(
                    ((want - mid) / want).abs() < 1e-11,
                    "exp({x:e}) = {got:e}, not {want:e}"
                );
                off += 1;
            } else {
                assert_eq!(got, want as f32, "exp({x:e})");
            }
            checked += 1;
            match bits.checked_add(4099) {
                Some(b) => bits = b,
                None => break,
            }
        }
        assert!(checked > 1_000_000);
        // Misrounded halfway cases are rare: 1,431 of all 2^32 float32s (one run over every
        // bit pattern), so ~0.3 expected among these.
        assert!(off <= 2, "{off} results one ulp off");
    }
}
