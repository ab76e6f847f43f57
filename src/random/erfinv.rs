//! The inverse error function on arrays, composed from elementwise ops: M. Giles,
//! "Approximating the erfinv function" (GPU Computing Gems, 2011), whose single- and
//! double-precision polynomials XLA's `ErfInv` evaluates. Half floats compute in float32,
//! as XLA upcasts them.
// The constants are written as published (more digits than f64 holds), to be checked by eye.
#![allow(clippy::excessive_precision)]

use crate::array::Array;
use crate::backends::{BinaryOp, UnaryOp};
use crate::dtype::{DType, Scalar};
use crate::error::Result;

/// Single precision: for `w = -log(1 - x^2)` below 5, in `w - 2.5`; above, in `sqrt(w) - 3`.
const F32_CENTRAL: [f64; 9] = [
    2.810_226_36e-08,
    3.432_739_39e-07,
    -3.523_387_7e-06,
    -4.391_506_54e-06,
    0.000_218_580_87,
    -0.001_253_725_03,
    -0.004_177_681_64,
    0.246_640_727,
    1.501_409_41,
];
const F32_TAIL: [f64; 9] = [
    -0.000_200_214_257,
    0.000_100_950_558,
    0.001_349_343_22,
    -0.003_673_428_44,
    0.005_739_507_73,
    -0.007_622_461_3,
    0.009_438_870_47,
    1.001_674_06,
    2.832_976_82,
];

/// Double precision: `w` below 6.25 in `w - 3.125`, below 16 in `sqrt(w) - 3.25`, else in
/// `sqrt(w) - 5`.
const F64_CENTRAL: [f64; 23] = [
    -3.644_412_064_017_819_699_6e-21,
    -1.685_059_138_182_016_589e-19,
    1.285_848_071_525_640_016_7e-18,
    1.115_787_767_802_518_096e-17,
    -1.333_171_662_854_620_906e-16,
    2.097_276_787_596_856_163_7e-17,
    6.637_638_134_358_323_832_5e-15,
    -4.054_566_272_975_206_863_9e-14,
    -8.151_934_197_605_472_152_2e-14,
    2.633_509_315_308_232_297_7e-12,
    -1.297_513_325_345_353_249_8e-11,
    -5.415_412_054_294_627_931_7e-11,
    1.051_212_273_321_532_285e-09,
    -4.112_633_980_346_983_697_6e-09,
    -2.907_036_995_788_200_508_6e-08,
    4.234_787_782_793_240_351_8e-07,
    -1.365_469_200_083_467_864_5e-06,
    -1.388_252_336_278_646_871_9e-05,
    0.000_186_734_208_034_057_135_2,
    -0.000_740_702_534_166_266_975_12,
    -0.006_033_670_871_430_149_053_3,
    0.240_158_182_425_589_616_93,
    1.653_654_562_683_102_735_6,
];
const F64_MIDDLE: [f64; 19] = [
    2.213_737_692_177_578_704_9e-09,
    9.075_656_193_888_539_097_9e-08,
    -2.751_740_629_706_454_542_8e-07,
    1.823_962_921_438_922_775_5e-08,
    1.502_740_396_890_982_762_7e-06,
    -4.013_867_526_981_545_969e-06,
    2.923_444_908_995_544_604_4e-06,
    1.247_530_448_167_177_872_3e-05,
    -4.731_822_900_905_573_398_1e-05,
    6.828_485_145_957_317_544_8e-05,
    2.403_111_038_709_789_399_9e-05,
    -0.000_355_037_520_362_847_479_6,
    0.000_953_289_379_737_380_497_03,
    -0.001_688_275_556_023_504_731_3,
    0.002_491_442_096_107_850_806_6,
    -0.003_751_208_507_569_241_210_7,
    0.005_370_914_553_590_063_617,
    1.005_258_967_694_159_233_4,
    3.083_885_610_492_220_763_5,
];
const F64_TAIL: [f64; 17] = [
    -2.710_992_061_643_857_324_3e-11,
    -2.555_641_816_996_525_205_5e-10,
    1.507_657_269_350_054_808_3e-09,
    -3.789_465_440_126_736_993_7e-09,
    7.615_701_208_078_339_380_4e-09,
    -1.496_002_662_714_924_047_8e-08,
    2.914_795_345_090_108_082_6e-08,
    -6.771_199_775_845_233_949_8e-08,
    2.290_048_222_802_665_471_7e-07,
    -9.929_827_294_231_700_253_9e-07,
    4.526_062_597_223_153_703_9e-06,
    -1.968_177_810_553_167_056_7e-05,
    7.599_527_703_001_776_113_9e-05,
    -0.000_215_030_119_300_444_773_47,
    -0.000_138_719_318_336_231_220_26,
    1.010_300_464_864_534_397_7,
    4.849_906_401_408_584_422_1,
];

fn scalar(x: &Array, op: BinaryOp, v: f64) -> Result<Array> {
    x.binary_scalar(op, Scalar::Float(v), false)
}

/// `c[0] w^(n-1) + ... + c[n-1]` by Horner's rule, one rounding per step as XLA's.
fn horner(c: &[f64], w: &Array) -> Result<Array> {
    let mut p = scalar(w, BinaryOp::Mul, c[0])?;
    for (i, &ci) in c.iter().enumerate().skip(1) {
        p = scalar(&p, BinaryOp::Add, ci)?;
        if i + 1 < c.len() {
            p = p.binary(BinaryOp::Mul, w)?;
        }
    }
    Ok(p)
}

/// `erfinv(x)` for `x` in (-1, 1), elementwise, in `x`'s dtype.
pub(crate) fn erfinv(x: &Array) -> Result<Array> {
    let dtype = x.dtype();
    let work = if dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let x = x.astype(work)?;
    // w = -log(1 - x*x), as XLA's `-log1p(-x*x)`: x*x is rounded first (which is what JAX's
    // values carry), and 1 - x*x is then exact where it matters, near |x| = 1.
    let w = x
        .binary(BinaryOp::Mul, &x)?
        .binary_scalar(BinaryOp::Sub, Scalar::Float(1.0), true)?
        .unary(UnaryOp::Log)?
        .unary(UnaryOp::Neg)?;
    let root = w.unary(UnaryOp::Sqrt)?;
    let p = if work == DType::F32 {
        let central = horner(&F32_CENTRAL, &scalar(&w, BinaryOp::Sub, 2.5)?)?;
        let tail = horner(&F32_TAIL, &scalar(&root, BinaryOp::Sub, 3.0)?)?;
        scalar(&w, BinaryOp::Lt, 5.0)?.where_cond(&central, &tail)?
    } else {
        let central = horner(&F64_CENTRAL, &scalar(&w, BinaryOp::Sub, 3.125)?)?;
        let middle = horner(&F64_MIDDLE, &scalar(&root, BinaryOp::Sub, 3.25)?)?;
        let tail = horner(&F64_TAIL, &scalar(&root, BinaryOp::Sub, 5.0)?)?;
        let outer = scalar(&w, BinaryOp::Lt, 16.0)?.where_cond(&middle, &tail)?;
        scalar(&w, BinaryOp::Lt, 6.25)?.where_cond(&central, &outer)?
    };
    p.binary(BinaryOp::Mul, &x)?.astype(dtype)
}
