//! `ln` of a float64: one scalar function, and slice loops that run it 8 or 4 lanes at a
//! time.
//!
//! The C library's `log` is a call per element (2.7 ns an element on one thread of the Intel
//! guest of `docs/benchmarks.md`; from Python on two, 1.64 against NumPy's 0.90 and
//! PyTorch's 0.37). This one (1.57 ns an element in AVX2 on one thread there; `into` has
//! the loops' later figures) is the method of glibc's `log` (Szabolcs Nagy's) with the table
//! chosen so that no separate path near 1 is needed, within 0.502 ulp (glibc's: 0.52):
//!
//! `x = 2^k z` with `z` in `[OFF, 2 OFF)` (OFF ~ 0.709), an interval split into 128 parts by
//! `z`'s bits, and `ln x = k ln2 - ln(invc) + ln(1 + r)` with `r = z invc - 1`. `invc` is
//! near `1/c` for `c` the middle of `z`'s part, rounded to 20 bits, so that `r` is exact as
//! `r_hi + r_lo`: `z` less its low 20 bits times `invc` (33 bits by 20) is exact, and so are
//! `r_hi` (that product less 1, within a factor 2 of it) and `r_lo` (the low bits times
//! `invc`). glibc's `r` is rounded, which costs it half an ulp where `ln x` is small; it
//! takes `x` near 1 apart for that. Here `OFF` puts 1 in the middle of part 74, whose
//! `invc` is 1 and `-ln(invc)` 0, so near `x = 1` the result is `r + r^2 P(r)` with `r` exact
//! and keeps its relative accuracy. `-ln(invc)` is tabulated as two f64s, `k ln2` as an
//! exact product and a small one, and their sum with `r_hi` is carried with its rounding
//! errors; `|r| <= 2^-8` and `P` is of degree 5 (relative error 2^-63).
//!
//! Zero, negative numbers, infinity, NaN and subnormals take `far`: the C library's answers
//! (`-inf`, NaN, `inf`, NaN) without its call, and subnormals scaled by 2^52 into `fast`.
//! Every path gives the same bits: the same IEEE operations in the same order, no fused
//! multiply-add.

use super::poly::estrin6;
use super::poly::two_sum_err;
use std::mem::MaybeUninit;

/// The bottom of `z`'s interval: 1 less 74.5 parts (of 2^45 units of the bits each).
const OFF: u64 = 0x3fe6_b000_0000_0000;
/// Adding 1.5 * 2^52 to an integer below 2^51 puts it in the low bits (see `fast`).
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// `ln 2` in two parts: the high one (0x1.62e42fefa3800p-1) has 11 trailing zero bits, so
/// `k` times it is exact for every `|k| < 2^11`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_3800);
const LN2_LO: f64 = f64::from_bits(0x3d2e_f357_93c7_6730);
/// `z`'s low bits that `r_lo` takes (20, the bits of `invc`).
const Z_LO: u64 = (1 << 20) - 1;

/// `ln(1 + r) ~ r + r^2 (P[0] + P[1] r + ... + P[5] r^5)` on `|r| <= 2^-8`: interpolated at
/// the Chebyshev nodes of that interval (at 60 digits, rounded to f64), relative error
/// 1.1e-19 (2^-63).
const P: [f64; 6] = [
    f64::from_bits(0xbfe0000000000000),
    f64::from_bits(0x3fd5555555555556),
    f64::from_bits(0xbfcffffffff6f6bb),
    f64::from_bits(0x3fc999999991915c),
    f64::from_bits(0xbfc5556d61b6522e),
    f64::from_bits(0x3fc24939f29fcad1),
];
/// Per part of `[OFF, 2 OFF)`: `invc`, near `1/c` for `c` the part's middle, rounded to 20
/// bits (1 for the part around 1), and `-ln(invc)` in two f64s (`LOGC` and `LOGC_LO`), all
/// computed at 60 digits. 128 parts, as glibc's: with 32 (`|r| <= 2^-6`, each column in
/// four AVX-512 registers, no gather) the loop was no faster on the Intel guest (bound by
/// its arithmetic, not its gathers), and the rounding of the polynomial's terms, 16 times
/// larger, cost 0.011 ulp beside 1.
const INVC: [f64; 128] = [
    f64::from_bits(0x3ff6816800000000),
    f64::from_bits(0x3ff661ec00000000),
    f64::from_bits(0x3ff642c800000000),
    f64::from_bits(0x3ff623fa00000000),
    f64::from_bits(0x3ff6058200000000),
    f64::from_bits(0x3ff5e75c00000000),
    f64::from_bits(0x3ff5c98800000000),
    f64::from_bits(0x3ff5ac0600000000),
    f64::from_bits(0x3ff58ed200000000),
    f64::from_bits(0x3ff571ee00000000),
    f64::from_bits(0x3ff5555600000000),
    f64::from_bits(0x3ff5390a00000000),
    f64::from_bits(0x3ff51d0800000000),
    f64::from_bits(0x3ff5015000000000),
    f64::from_bits(0x3ff4e5e000000000),
    f64::from_bits(0x3ff4cab800000000),
    f64::from_bits(0x3ff4afd600000000),
    f64::from_bits(0x3ff4953a00000000),
    f64::from_bits(0x3ff47ae200000000),
    f64::from_bits(0x3ff460cc00000000),
    f64::from_bits(0x3ff446f800000000),
    f64::from_bits(0x3ff42d6600000000),
    f64::from_bits(0x3ff4141400000000),
    f64::from_bits(0x3ff3fb0200000000),
    f64::from_bits(0x3ff3e22c00000000),
    f64::from_bits(0x3ff3c99600000000),
    f64::from_bits(0x3ff3b13c00000000),
    f64::from_bits(0x3ff3991c00000000),
    f64::from_bits(0x3ff3813800000000),
    f64::from_bits(0x3ff3698e00000000),
    f64::from_bits(0x3ff3521c00000000),
    f64::from_bits(0x3ff33ae400000000),
    f64::from_bits(0x3ff323e400000000),
    f64::from_bits(0x3ff30d1a00000000),
    f64::from_bits(0x3ff2f68400000000),
    f64::from_bits(0x3ff2e02600000000),
    f64::from_bits(0x3ff2c9fc00000000),
    f64::from_bits(0x3ff2b40400000000),
    f64::from_bits(0x3ff29e4200000000),
    f64::from_bits(0x3ff288b000000000),
    f64::from_bits(0x3ff2735000000000),
    f64::from_bits(0x3ff25e2200000000),
    f64::from_bits(0x3ff2492400000000),
    f64::from_bits(0x3ff2345600000000),
    f64::from_bits(0x3ff21fb800000000),
    f64::from_bits(0x3ff20b4800000000),
    f64::from_bits(0x3ff1f70400000000),
    f64::from_bits(0x3ff1e2f000000000),
    f64::from_bits(0x3ff1cf0600000000),
    f64::from_bits(0x3ff1bb4a00000000),
    f64::from_bits(0x3ff1a7ba00000000),
    f64::from_bits(0x3ff1945400000000),
    f64::from_bits(0x3ff1811800000000),
    f64::from_bits(0x3ff16e0600000000),
    f64::from_bits(0x3ff15b1e00000000),
    f64::from_bits(0x3ff1486000000000),
    f64::from_bits(0x3ff135c800000000),
    f64::from_bits(0x3ff1235800000000),
    f64::from_bits(0x3ff1111200000000),
    f64::from_bits(0x3ff0fef000000000),
    f64::from_bits(0x3ff0ecf600000000),
    f64::from_bits(0x3ff0db2000000000),
    f64::from_bits(0x3ff0c97200000000),
    f64::from_bits(0x3ff0b7e600000000),
    f64::from_bits(0x3ff0a68200000000),
    f64::from_bits(0x3ff0954000000000),
    f64::from_bits(0x3ff0842200000000),
    f64::from_bits(0x3ff0732600000000),
    f64::from_bits(0x3ff0624e00000000),
    f64::from_bits(0x3ff0519800000000),
    f64::from_bits(0x3ff0410400000000),
    f64::from_bits(0x3ff0309200000000),
    f64::from_bits(0x3ff0204000000000),
    f64::from_bits(0x3ff0101000000000),
    f64::from_bits(0x3ff0000000000000),
    f64::from_bits(0x3fefc08000000000),
    f64::from_bits(0x3fef81f800000000),
    f64::from_bits(0x3fef446600000000),
    f64::from_bits(0x3fef07c200000000),
    f64::from_bits(0x3feecc0800000000),
    f64::from_bits(0x3fee913200000000),
    f64::from_bits(0x3fee573a00000000),
    f64::from_bits(0x3fee1e1e00000000),
    f64::from_bits(0x3fede5d600000000),
    f64::from_bits(0x3fedae6000000000),
    f64::from_bits(0x3fed77b600000000),
    f64::from_bits(0x3fed41d400000000),
    f64::from_bits(0x3fed0cb600000000),
    f64::from_bits(0x3fecd85600000000),
    f64::from_bits(0x3feca4b400000000),
    f64::from_bits(0x3fec71c800000000),
    f64::from_bits(0x3fec3f9000000000),
    f64::from_bits(0x3fec0e0800000000),
    f64::from_bits(0x3febdd2c00000000),
    f64::from_bits(0x3febacfa00000000),
    f64::from_bits(0x3feb7d6c00000000),
    f64::from_bits(0x3feb4e8200000000),
    f64::from_bits(0x3feb203600000000),
    f64::from_bits(0x3feaf28600000000),
    f64::from_bits(0x3feac57000000000),
    f64::from_bits(0x3fea98f000000000),
    f64::from_bits(0x3fea6d0200000000),
    f64::from_bits(0x3fea41a400000000),
    f64::from_bits(0x3fea16d400000000),
    f64::from_bits(0x3fe9ec8e00000000),
    f64::from_bits(0x3fe9c2d200000000),
    f64::from_bits(0x3fe9999a00000000),
    f64::from_bits(0x3fe970e400000000),
    f64::from_bits(0x3fe948b000000000),
    f64::from_bits(0x3fe920fc00000000),
    f64::from_bits(0x3fe8f9c200000000),
    f64::from_bits(0x3fe8d30200000000),
    f64::from_bits(0x3fe8acba00000000),
    f64::from_bits(0x3fe886e600000000),
    f64::from_bits(0x3fe8618600000000),
    f64::from_bits(0x3fe83c9800000000),
    f64::from_bits(0x3fe8181800000000),
    f64::from_bits(0x3fe7f40600000000),
    f64::from_bits(0x3fe7d06000000000),
    f64::from_bits(0x3fe7ad2200000000),
    f64::from_bits(0x3fe78a4c00000000),
    f64::from_bits(0x3fe767dc00000000),
    f64::from_bits(0x3fe745d200000000),
    f64::from_bits(0x3fe7242800000000),
    f64::from_bits(0x3fe702e000000000),
    f64::from_bits(0x3fe6e1f800000000),
    f64::from_bits(0x3fe6c16c00000000),
    f64::from_bits(0x3fe6a13c00000000),
];
const LOGC: [f64; 128] = [
    f64::from_bits(0xbfd5d5bd9f595f10),
    f64::from_bits(0xbfd57bf623c8cf29),
    f64::from_bits(0xbfd522ad0738a1d8),
    f64::from_bits(0xbfd4c9df4617289f),
    f64::from_bits(0xbfd4718f9271bd89),
    f64::from_bits(0xbfd419b4f3d5e775),
    f64::from_bits(0xbfd3c251f7333104),
    f64::from_bits(0xbfd36b692ebe0b2e),
    f64::from_bits(0xbfd314f151d35c42),
    f64::from_bits(0xbfd2bef2c4dc88eb),
    f64::from_bits(0xbfd269641134d392),
    f64::from_bits(0xbfd21447950eaf88),
    f64::from_bits(0xbfd1bf99a35a6b75),
    f64::from_bits(0xbfd16b5c8bacfb53),
    f64::from_bits(0xbfd1178c8227dc7c),
    f64::from_bits(0xbfd0c42bc7615d9b),
    f64::from_bits(0xbfd07136704d50e0),
    f64::from_bits(0xbfd01eaeae26c654),
    f64::from_bits(0xbfcf9920ecb39f39),
    f64::from_bits(0xbfcef5af44dcfe02),
    f64::from_bits(0xbfce530c7fe709d2),
    f64::from_bits(0xbfcdb13cc0d4885f),
    f64::from_bits(0xbfcd103772655e3b),
    f64::from_bits(0xbfcc700096eff848),
    f64::from_bits(0xbfcbd082783bc21d),
    f64::from_bits(0xbfcb31daa75bc8e4),
    f64::from_bits(0xbfca93f33c8ab5e3),
    f64::from_bits(0xbfc9f6c2e7089520),
    f64::from_bits(0xbfc95a5a5cf7013f),
    f64::from_bits(0xbfc8beb03b38fe73),
    f64::from_bits(0xbfc823bae5517982),
    f64::from_bits(0xbfc7898b254446cf),
    f64::from_bits(0xbfc6f0174b75542c),
    f64::from_bits(0xbfc657556e8be681),
    f64::from_bits(0xbfc5bf3b6b5424b2),
    f64::from_bits(0xbfc527e794a1b2b4),
    f64::from_bits(0xbfc4914243339ed1),
    f64::from_bits(0xbfc3fb4105991368),
    f64::from_bits(0xbfc3660270156f06),
    f64::from_bits(0xbfc2d1608c8680fa),
    f64::from_bits(0xbfc23d6c2a49a902),
    f64::from_bits(0xbfc1aa286e23edc9),
    f64::from_bits(0xbfc1178a8227d47c),
    f64::from_bits(0xbfc08595659e2f0e),
    f64::from_bits(0xbfbfe89839dbbce6),
    f64::from_bits(0xbfbec7470309b600),
    f64::from_bits(0xbfbda72063842e22),
    f64::from_bits(0xbfbc886301bc0ea3),
    f64::from_bits(0xbfbb6abecdad2b94),
    f64::from_bits(0xbfba4e72a0b1b5a6),
    f64::from_bits(0xbfb933675d592109),
    f64::from_bits(0xbfb819856f40c9a8),
    f64::from_bits(0xbfb700d20aeac061),
    f64::from_bits(0xbfb5e9526d9772c9),
    f64::from_bits(0xbfb4d30bdd206f8c),
    f64::from_bits(0xbfb3be03a7d18c64),
    f64::from_bits(0xbfb2aa03a4471725),
    f64::from_bits(0xbfb1972e5145fa47),
    f64::from_bits(0xbfb085a6b59dd807),
    f64::from_bits(0xbfaeea2fc006b77c),
    f64::from_bits(0xbfaccb854ddd663c),
    f64::from_bits(0xbfaaaeded0faacfc),
    f64::from_bits(0xbfa894bf149f4503),
    f64::from_bits(0xbfa67c78b2d3f3d4),
    f64::from_bits(0xbfa466cc542d0a5a),
    f64::from_bits(0xbfa2530b2f8c883f),
    f64::from_bits(0xbfa0417b89e66344),
    f64::from_bits(0xbf9c63d06c14aa2a),
    f64::from_bits(0xbf98493028c8bb9f),
    f64::from_bits(0xbf9432ab25980c41),
    f64::from_bits(0xbf90205258935647),
    f64::from_bits(0xbf88246da3884d1a),
    f64::from_bits(0xbf800fd57587de71),
    f64::from_bits(0xbf7007f559588335),
    f64::from_bits(0x0000000000000000),
    f64::from_bits(0x3f7fdfaa6b126789),
    f64::from_bits(0x3f8fc0b0b0fc07e4),
    f64::from_bits(0x3f97b90e87d5c4a3),
    f64::from_bits(0x3f9f82990e783380),
    f64::from_bits(0x3fa39e82b9fec3a0),
    f64::from_bits(0x3fa774537632e48c),
    f64::from_bits(0x3fab42eab1199da3),
    f64::from_bits(0x3faf0a32c01163a6),
    f64::from_bits(0x3fb1653e8ea397f3),
    f64::from_bits(0x3fb341db961bd9d1),
    f64::from_bits(0x3fb51b0a1f061c61),
    f64::from_bits(0x3fb6f0d38ae56bcc),
    f64::from_bits(0x3fb8c341f631a2a3),
    f64::from_bits(0x3fba9271fa4ae0ab),
    f64::from_bits(0x3fbc5e4bcf5bed8b),
    f64::from_bits(0x3fbe26ff6e2b12e6),
    f64::from_bits(0x3fbfec8831dc133b),
    f64::from_bits(0x3fc0d779fcd0a299),
    f64::from_bits(0x3fc1b728b52f6c24),
    f64::from_bits(0x3fc2954eb8200733),
    f64::from_bits(0x3fc371fd401e90b8),
    f64::from_bits(0x3fc44d2a0ccb7f02),
    f64::from_bits(0x3fc526e713a1b5a1),
    f64::from_bits(0x3fc5ff33f0a7a014),
    f64::from_bits(0x3fc6d6106719d25d),
    f64::from_bits(0x3fc7ab860210e209),
    f64::from_bits(0x3fc87f9eb520cbea),
    f64::from_bits(0x3fc9525b1cf456f4),
    f64::from_bits(0x3fca23bbffe2b567),
    f64::from_bits(0x3fcaf3cc2e80c837),
    f64::from_bits(0x3fcbc283042d98a7),
    f64::from_bits(0x3fcc8ff5c79a9e22),
    f64::from_bits(0x3fcd5c264b4fd355),
    f64::from_bits(0x3fce270c6e2b0be6),
    f64::from_bits(0x3fcef0aa2bdc665a),
    f64::from_bits(0x3fcfb9162d5e433b),
    f64::from_bits(0x3fd040246cb4d2ed),
    f64::from_bits(0x3fd0a32272739cc5),
    f64::from_bits(0x3fd1058bd1ae4ae2),
    f64::from_bits(0x3fd1675cebaba62e),
    f64::from_bits(0x3fd1c89761699dc3),
    f64::from_bits(0x3fd229423bcf7986),
    f64::from_bits(0x3fd2895a0bde86a4),
    f64::from_bits(0x3fd2e8e0bae12531),
    f64::from_bits(0x3fd347ddb2987d59),
    f64::from_bits(0x3fd3a64db56949b2),
    f64::from_bits(0x3fd40432f686b3c6),
    f64::from_bits(0x3fd4618a421c6342),
    f64::from_bits(0x3fd4be60f5777c69),
    f64::from_bits(0x3fd51aae872dfa2d),
    f64::from_bits(0x3fd5767577455fb4),
    f64::from_bits(0x3fd5d1bdff5809ea),
    f64::from_bits(0x3fd62c8542b9d247),
];
const LOGC_LO: [f64; 128] = [
    f64::from_bits(0x3c7654169e2111f8),
    f64::from_bits(0x3c60950440b31e96),
    f64::from_bits(0x3c68fa945e3d1424),
    f64::from_bits(0xbc7bb3eb76832c12),
    f64::from_bits(0xbc397a52bcbd6569),
    f64::from_bits(0xbc60dd206e29a1b4),
    f64::from_bits(0x3c72ad528fb57971),
    f64::from_bits(0xbc7b3d88d866e120),
    f64::from_bits(0x3c73d6d5c9e62a60),
    f64::from_bits(0xbc5f889b0997d5f7),
    f64::from_bits(0xbc7e19a588085ad7),
    f64::from_bits(0x3c70352d7ae0a4d5),
    f64::from_bits(0x3c612ae0d979ef79),
    f64::from_bits(0xbc766fb7d35eafe0),
    f64::from_bits(0x3c60fb8fb4d71be9),
    f64::from_bits(0xbc514be4f242d641),
    f64::from_bits(0xbc7cd16457c0ddde),
    f64::from_bits(0xbc7dcfbbc5b020ad),
    f64::from_bits(0xbc6f84b0662c78a7),
    f64::from_bits(0x3c5088f7331ff106),
    f64::from_bits(0xbc42128aec50baeb),
    f64::from_bits(0xbc5aa090a9f8a6f8),
    f64::from_bits(0xbc66061e7979bef7),
    f64::from_bits(0x3c68c06412b92c3b),
    f64::from_bits(0xbc3cb58b440627f0),
    f64::from_bits(0x3c66311b6e3fa070),
    f64::from_bits(0xbc6c12fa9b61721c),
    f64::from_bits(0xbc435833605b33cf),
    f64::from_bits(0xbc5142afb2a614e8),
    f64::from_bits(0xbc555aadebeecd25),
    f64::from_bits(0x3c617eb795331a50),
    f64::from_bits(0xbc5ef008965a8b9c),
    f64::from_bits(0x3c68baa06dc7498f),
    f64::from_bits(0x3c3a17633e4d3c0e),
    f64::from_bits(0x3c24905f0a40a32e),
    f64::from_bits(0x3c2700f5827a3b85),
    f64::from_bits(0x3c508deda083577b),
    f64::from_bits(0x3c6da8e0cee44290),
    f64::from_bits(0xbc5852cef6c97929),
    f64::from_bits(0x3c5499b947b05eb5),
    f64::from_bits(0x3c670d2c0ce8481e),
    f64::from_bits(0x3c4c953defb83259),
    f64::from_bits(0x3c5110e50aac7142),
    f64::from_bits(0x3c6de31e33e99cf7),
    f64::from_bits(0x3c5aad5ecca04e3b),
    f64::from_bits(0x3c4891e9a1afee90),
    f64::from_bits(0xbc53e5651b87cac0),
    f64::from_bits(0xbc5aa7b5fcb201d0),
    f64::from_bits(0x3c409ff8f18641e2),
    f64::from_bits(0x3c55b9c2559e6280),
    f64::from_bits(0x3c543be8589edcab),
    f64::from_bits(0xbc3c1e34a7b6e3bd),
    f64::from_bits(0x3c272610cbd807b0),
    f64::from_bits(0xbc5f0fc1bb6be604),
    f64::from_bits(0xbc575c16d6e9bc76),
    f64::from_bits(0xbc4972cc16490a87),
    f64::from_bits(0x3c5d15e8e285094c),
    f64::from_bits(0x3c48ef9377de8fa5),
    f64::from_bits(0x3c5cf255f7b9141e),
    f64::from_bits(0x3c43e5273e628117),
    f64::from_bits(0x3c4dd953b288548a),
    f64::from_bits(0xbc279a90f5fb5f96),
    f64::from_bits(0xbc3c0dc96a81dea0),
    f64::from_bits(0xbc3cd719cdd6d5f6),
    f64::from_bits(0x3c4ac69841116b38),
    f64::from_bits(0x3c4827f79c8158b5),
    f64::from_bits(0xbc4e384f04bd174b),
    f64::from_bits(0x3c3ce0457bdc1ca0),
    f64::from_bits(0x3c3d123e5b7d9bfc),
    f64::from_bits(0x3c38cda48e559ae8),
    f64::from_bits(0xbc327c392ec151ca),
    f64::from_bits(0xbc10cefebc602541),
    f64::from_bits(0xbc11bbb8196d23bf),
    f64::from_bits(0xbc1f950e379fe121),
    f64::from_bits(0x0000000000000000),
    f64::from_bits(0xbbece682ce31a038),
    f64::from_bits(0xbc182f3d703fed4c),
    f64::from_bits(0xbc35c02ed7767837),
    f64::from_bits(0x3c333e345a474878),
    f64::from_bits(0xbc45c243e29b1a65),
    f64::from_bits(0x3c4189c5532d6361),
    f64::from_bits(0xbc3e5888c4dc1676),
    f64::from_bits(0x3c485f5d07068577),
    f64::from_bits(0xbc3709ddbaca6cd7),
    f64::from_bits(0xbc5b5449cd169766),
    f64::from_bits(0x3c5a4bde8f74265b),
    f64::from_bits(0xbc5906c43c2f543d),
    f64::from_bits(0xbc24cd620018bdf8),
    f64::from_bits(0x3c594be2e01c350f),
    f64::from_bits(0x3c34f6c94a902b1f),
    f64::from_bits(0xbc36c022a6c8ac26),
    f64::from_bits(0xbc55b12b97e7a378),
    f64::from_bits(0x3c69877c5f5d38a6),
    f64::from_bits(0x3c547c9c89dc86d9),
    f64::from_bits(0x3c62e7e07238f390),
    f64::from_bits(0x3c5de7be62b0b2b0),
    f64::from_bits(0x3c69f4187eea93ba),
    f64::from_bits(0xbc674670a4f0b95c),
    f64::from_bits(0xbc5ba979a5110a16),
    f64::from_bits(0xbc6caad7be421ece),
    f64::from_bits(0x3c4bbf6b2e0c0605),
    f64::from_bits(0xbc6bf997cf9c7fa2),
    f64::from_bits(0x3c6d9056c7f8e0d0),
    f64::from_bits(0x3c49371105cfef01),
    f64::from_bits(0xbc5388f848751cc9),
    f64::from_bits(0x3c54e1d2fa680548),
    f64::from_bits(0xbc64f934a2e5eabc),
    f64::from_bits(0x3c670ae1da98b451),
    f64::from_bits(0xbc456ecd50915690),
    f64::from_bits(0x3c647656c00ec33d),
    f64::from_bits(0xbc6cae7a64e54a4b),
    f64::from_bits(0x3c76b68f5189fa7b),
    f64::from_bits(0x3c77c9aea8934f83),
    f64::from_bits(0xbc79d819228227f2),
    f64::from_bits(0x3c2ce6e9563361c2),
    f64::from_bits(0xbc311d3b7f6fad9e),
    f64::from_bits(0xbc776f595b40cf5a),
    f64::from_bits(0xbc60a5b682d74d38),
    f64::from_bits(0xbc78ff7863c968a5),
    f64::from_bits(0x3c75915a1bfb7318),
    f64::from_bits(0xbc6c61766e7eb650),
    f64::from_bits(0xbc70a9ac1ff59ae5),
    f64::from_bits(0x3c7f3e5ece010f1c),
    f64::from_bits(0xbc6252c4b03d3e12),
    f64::from_bits(0x3c439d256c6a008e),
    f64::from_bits(0x3c7520f507f49fa1),
    f64::from_bits(0x3c742368d931d936),
    f64::from_bits(0x3c67d8a9bce2731e),
];

/// `ln x` within 0.51 ulp: `-inf` for `±0`, NaN below 0 and for NaN, `inf` for `inf`.
#[inline(always)]
pub(crate) fn ln_f64(x: f64) -> f64 {
    if near(x) { fast(x, 0.0, None) } else { far(x) }
}

/// Whether `fast` takes `x`: normal, positive and finite (false for NaN).
#[inline(always)]
fn near(x: f64) -> bool {
    (f64::MIN_POSITIVE..f64::INFINITY).contains(&x)
}

/// For the `x` that `near` refuses: `-inf` for `±0`, `inf` for `inf`, subnormals through
/// `fast` (scaled by 2^52, with `k` lowered by 52), and NaN from `0/0` (as glibc raises it)
/// below 0 or for NaN.
#[inline(always)]
fn far(x: f64) -> f64 {
    if x > 0.0 && x < f64::MIN_POSITIVE {
        return subnormal(x);
    }
    // Selects, not branches, for the common ones (see `simd::fix_far`).
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else {
        // `x 0` is -0 or NaN: `-0/0` is the invalid operation's NaN (glibc's `(x-x)/(x-x)`),
        // NaN stays NaN.
        (x * 0.0) / 0.0
    }
}

/// `ln x` of a positive subnormal: scaled by 2^52 into the normal range, `k` lowered by 52.
#[cold]
#[inline(never)]
fn subnormal(x: f64) -> f64 {
    fast(x * 4_503_599_627_370_496.0, -52.0, None)
}

/// `ln(x 2^-k_extra)` for positive normal finite `x`; no branch. `tail`, when given, is added to
/// the result (it must be tiny beside it: `log1p`'s `e/s`, at most 2^-53).
#[inline(always)]
fn fast(x: f64, k_extra: f64, e: Option<f64>) -> f64 {
    let bits = x.to_bits();
    // `k` in the top 12 bits (two's complement), the part's index in the next 7.
    let tmp = bits.wrapping_sub(OFF);
    let i = ((tmp >> 45) % 128) as usize;
    let (invc, logc, logc_lo) = (INVC[i], LOGC[i], LOGC_LO[i]);
    let kbits = tmp & (0xfff << 52);
    let z = bits.wrapping_sub(kbits);
    // `k + 1024` (nonnegative), then `k` as an f64 without a 64-bit integer conversion
    // (AVX2 has none).
    let kb = tmp.wrapping_add(1024 << 52) >> 52;
    let k = (f64::from_bits(SHIFT.to_bits() + kb) - (SHIFT + 1024.0)) + k_extra;
    let (z_hi, z_lo) = (f64::from_bits(z & !Z_LO), f64::from_bits(z));
    let z_lo = z_lo - z_hi;
    let r_hi = z_hi * invc - 1.0;
    let r_lo = z_lo * invc;
    // `log1p`: `x` is `s + e` (`s`, this function's `x`, rounded), so `ln(1 + x)` is `ln(1 + r)`
    // with `e 2^-k invc` more in `r` (`2^-k`, exact for `|k| <= 1022`, from `k`'s bits), added
    // to `r_lo` with its rounding error (near `x = 0` that error is 2^-50 of the result).
    let (r_lo, lo_err) = match e {
        Some(e) => {
            let more = e * f64::from_bits((0x3ff_u64 << 52).wrapping_sub(kbits)) * invc;
            let sum = r_lo + more;
            (sum, two_sum_err(r_lo, more, sum))
        }
        None => (r_lo, 0.0),
    };
    // `r` rounded and its error (a two-sum): where `ln x` is small, `r_lo` (below 2^-32)
    // is too large for the sum of the small terms to round it without a trace.
    let r = r_hi + r_lo;
    let r_err = two_sum_err(r_hi, r_lo, r);
    let r_err = if e.is_some() { r_err + lo_err } else { r_err };
    // `k ln2_hi + logc` (a fast two-sum: `|k ln2| > 0.69 > |logc|`, or `k = 0`), then `r`
    // added with its error, by a fast two-sum too: `|w| >= |r|` or `w = 0` (for `k = 0`,
    // `|logc| > 2^-8 >= |r|` off part 74, and `logc = 0` on it; for `k != 0`, `|w| > 0.34`;
    // `the_fast_two_sums_operands_are_in_order` checks every part's ends). Its error is
    // exact, as the full two-sum's, in 2 operations of their 5.
    let kl = k * LN2_HI;
    let w = kl + logc;
    let w_lo = logc - (w - kl);
    let hi = w + r;
    let lo = r - (hi - w);
    let small = (r_err + (k * LN2_LO + logc_lo)) + (r * r) * estrin6(r, &P);
    hi + (lo + (w_lo + small))
}

/// `ln(1 + x)` within 0.51 ulp: `ln` of `s = 1 + x` (rounded), with `e = 1 + x - s` (a
/// two-sum: exact) carried into `r` (see `fast`): `ln(s + e) = k ln2 - ln(invc) + ln(1 + r)`
/// with `r = (s + e) 2^-k invc - 1`. Near 0 (`k = 0`, `invc = 1`) `r` is `x` itself, exactly.
/// `-1` gives `-inf`, below it NaN, `±0` itself, as the C library's. From `x = 2^1022` on
/// (`far_1p`), `ln(x + 1)` rounded: `e`'s share there is under 2^-10 ulp.
///
/// Why not the C library's: a call per element, 5.4 ns an element against 2.9 here (one
/// thread, 64K, the AMD EPYC; NumPy 1.35); it is within 1 ulp (fdlibm's method, `ln s +
/// e/s`, whose `e/s` rounded costs up to 1/8 ulp near `x = 2^-52`). This one was within 0.5
/// ulp of a double-double reference on a sample of 390K, where glibc's differed on 2.1 % and
/// was 0.76 ulp off at worst.
#[inline(always)]
pub(crate) fn ln_1p_f64(x: f64) -> f64 {
    if near_1p(x) {
        let s = 1.0 + x;
        fast(s, 0.0, Some(two_sum_err(1.0, x, s)))
    } else {
        far_1p(x)
    }
}

/// Whether `fast` takes `1 + x` for `log1p`: `1 + x` as [`near_sum`] takes it, and `x` not a
/// zero (whose sign the sum would lose).
#[inline(always)]
fn near_1p(x: f64) -> bool {
    near_sum(1.0 + x) && x != 0.0
}

/// Whether `fast` takes a sum `s` with a tail: normal, positive and below 2^1022 (where `2^-k`
/// is a normal f64); false for NaN.
#[inline(always)]
fn near_sum(s: f64) -> bool {
    (f64::MIN_POSITIVE..BIG_1P).contains(&s)
}

/// `ln(s + e)` for a sum carried with its rounding error (`e` within an ulp of `s`, as
/// [`two_sum_err`] gives it, plus smaller terms): `log1p`'s path, with the tail in `r` (see
/// `fast`), within 0.51 ulp. `asinh` and `acosh` (`asinh_acosh_f64`) take their logarithm so,
/// of `|x| + sqrt(x^2 ± 1)` in two parts. Where [`near_sum`] refuses `s` (zero, negative,
/// from 2^1022, infinite, NaN), `ln s`: `e` is dropped, under 2^-10 ulp of the result there.
#[inline(always)]
pub(crate) fn ln_sum_f64(s: f64, e: f64) -> f64 {
    if near_sum(s) {
        fast(s, 0.0, Some(e))
    } else {
        ln_f64(s)
    }
}

/// `out[i] = ln_sum_f64(s[i], e[i])` for every `i` below the shortest of the three lengths.
pub(crate) fn ln_sum_f64_into(s: &[f64], e: &[f64], out: &mut [MaybeUninit<f64>]) {
    let n = s.len().min(e.len()).min(out.len());
    let (s, e, out) = (&s[..n], &e[..n], &mut out[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let (sp, ep, dst) = (s.as_ptr(), e.as_ptr(), out.as_mut_ptr().cast::<f64>());
        // The same choice of loop as `into`'s (see there).
        if super::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA; `s` and `e` hold `n` readable
            // elements and `out` `n` writable ones, apart.
            done = unsafe { x86::avx512_sum(sp, ep, dst, n) };
        } else if super::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA; as above.
            done = unsafe { x86::avx2_sum(sp, ep, dst, n) };
        }
    }
    // The last few (under 8), or all where there is no vector loop: the same operations.
    for ((o, &s), &e) in out[done..].iter_mut().zip(&s[done..]).zip(&e[done..]) {
        o.write(ln_sum_f64(s, e));
    }
    super::simd::wide(|| super::simd::fix_far(s, out, near_sum, ln_f64));
}

/// 2^1022: see `near_1p`.
const BIG_1P: f64 = 4.494_232_837_155_79e307;

/// `log1p` where `near_1p` refuses: `±0` itself, else `ln(1 + x)`: its edges (`-inf` at
/// `x = -1`, NaN below or for NaN, `inf` for `inf`), and from 2^1022 on the rounded sum's.
#[inline(always)]
fn far_1p(x: f64) -> f64 {
    if x == 0.0 { x } else { ln_f64(1.0 + x) }
}

/// `out[i] = ln_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn ln_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    into::<false>(xs, out)
}

/// `out[i] = ln_1p_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn ln_1p_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    into::<true>(xs, out)
}

/// `ln_f64_into`, or with `ONE_P` `ln_1p_f64_into`.
#[inline(always)]
fn into<const ONE_P: bool>(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    let n = xs.len().min(out.len());
    let (xs, out) = (&xs[..n], &mut out[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        let (src, dst) = (xs.as_ptr(), out.as_mut_ptr().cast::<f64>());
        // AVX-512 wherever there is one, else AVX2. While the loops read the table by three
        // gathers, an Intel guest ran the AVX2 loop faster (1.57 ns an element against 1.71:
        // its gathers of 8 cost more than twice those of 4), so only AMD's Zen 4 took AVX-512
        // (2.12 against 2.51). Both now read it as rows (`lanes::v8::rows3`; on the AMD EPYC
        // `ln` 2.3 -> 1.94-2.03 ns, `log1p` 3.0 -> 2.36), and on the Intel Xeon (Emerald
        // Rapids) of the twenty-fifth sitting AVX-512 won every alternated pair: `ln` 2.16-2.35
        // against 2.74-2.84 ns (best of 15 rounds, five pairs), `log1p` 2.68-3.47 against
        // 3.48-4.51, `asinh` 3.81-5.33 against 5.73-5.86 (one thread, 64K, `un_probe`-style
        // rounds of 100 calls).
        let ran = if super::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA; `xs` holds `n` readable
            // elements and `out` `n` writable ones, apart.
            unsafe { x86::avx512_run::<ONE_P>(src, dst, n) };
            true
        } else if super::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA; `xs` holds `n` readable elements and
            // `out` `n` writable ones, apart.
            unsafe { x86::avx2_run::<ONE_P>(src, dst, n) };
            true
        } else {
            false
        };
        if ran {
            // In AVX2 the check vectorises; compiled for the baseline it ran element by
            // element, a quarter of the op's time (0.7 of 3.2 ns an element on the AMD EPYC).
            return super::simd::wide(|| fix_far::<ONE_P>(xs, out));
        }
    }
    for (o, &x) in out.iter_mut().zip(xs) {
        o.write(if ONE_P { ln_1p_f64(x) } else { ln_f64(x) });
    }
}

/// Redoes the elements the vector loop's function refuses (`near` or `near_1p`).
#[inline(always)]
fn fix_far<const ONE_P: bool>(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    if ONE_P {
        super::simd::fix_far(xs, out, near_1p, far_1p)
    } else {
        super::simd::fix_far(xs, out, near, far)
    }
}

/// `fast`'s operations, in its order, on 8 lanes (AVX-512) or twice 4 (AVX2), the tables
/// read as rows (`ROWS`); the lanes `near` refuses hold garbage, which the caller replaces.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{INVC, LN2_HI, LN2_LO, LOGC, LOGC_LO, OFF, P, SHIFT, Z_LO};
    use crate::backends::host::lanes::Row;
    use crate::backends::host::lanes::{v4, v8};
    use crate::backends::host::poly::{avx2, avx512};
    use crate::backends::host::simd::by_eights;
    use std::arch::x86_64::*;

    /// `INVC`, `LOGC` and `LOGC_LO` as rows, for the vector loops to read a part's three in one
    /// load (`lanes::v8::rows3`).
    static ROWS: [Row; 128] = {
        let mut rows = [Row([0.0; 4]); 128];
        let mut i = 0;
        while i < 128 {
            rows[i] = Row([INVC[i], LOGC[i], LOGC_LO[i], 0.0]);
            i += 1;
        }
        rows
    };

    /// `fast(x, 0, e)` over one vector of f64 lanes, `$v` naming the module of the width's
    /// operations, `$estrin6` its polynomial and `$e` `log1p`'s `e` (`Some`) or `None`.
    macro_rules! fast_lanes {
        ($v:ident, $x:expr, $estrin6:path, $e:expr) => {{
            use $v::*;
            let bits = as_int($x);
            let tmp = subi(bits, seti(OFF));
            let i = andi(srl::<45>(tmp), seti(127));
            // SAFETY: each index is below 128, and the table holds 128 rows.
            let (invc, logc, logc_lo) = unsafe { rows3(&ROWS, i) };
            let kbits = andi(tmp, seti(0xfff << 52));
            let z = subi(bits, kbits);
            let kb = srl::<52>(addi(tmp, seti(1024 << 52)));
            // `fast`'s `+ k_extra` (0 here) is left out: `k`, a difference of two equal-signed
            // f64s, is never -0, so adding 0 changes no bits.
            let k = sub(
                as_float(addi(seti(SHIFT.to_bits()), kb)),
                set(SHIFT + 1024.0),
            );
            let z_hi = as_float(andi(z, seti(!Z_LO)));
            let z_lo = sub(as_float(z), z_hi);
            let r_hi = sub(mul(z_hi, invc), set(1.0));
            let r_lo = mul(z_lo, invc);
            let (r_lo, lo_err) = match $e {
                Some(e) => {
                    let scale = as_float(subi(seti(0x3ff << 52), kbits));
                    let more = mul(mul(e, scale), invc);
                    let sum = add(r_lo, more);
                    (sum, Some(two_sum_err(r_lo, more, sum)))
                }
                None => (r_lo, None),
            };
            let r = add(r_hi, r_lo);
            let r_err = two_sum_err(r_hi, r_lo, r);
            let r_err = match lo_err {
                Some(l) => add(r_err, l),
                None => r_err,
            };
            let kl = mul(k, set(LN2_HI));
            let w = add(kl, logc);
            let w_lo = sub(logc, sub(w, kl));
            let hi = add(w, r);
            let lo = sub(r, sub(hi, w));
            let small = add(
                add(r_err, add(mul(k, set(LN2_LO)), logc_lo)),
                mul(mul(r, r), $estrin6(r, &P)),
            );
            add(hi, add(lo, add(w_lo, small)))
        }};
    }

    /// `ln_f64` (or with `ONE_P` `ln_1p_f64`) of 4 lanes, garbage where `near` (`near_1p`)
    /// refuses.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lanes4<const ONE_P: bool>(x: __m256d) -> __m256d {
        use v4::*;
        if ONE_P {
            let s = add(set(1.0), x);
            sum4(s, two_sum_err(set(1.0), x, s))
        } else {
            fast_lanes!(v4, x, avx2::estrin6, None)
        }
    }

    /// Likewise of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn lanes8<const ONE_P: bool>(x: __m512d) -> __m512d {
        use v8::*;
        if ONE_P {
            let s = add(set(1.0), x);
            sum8(s, two_sum_err(set(1.0), x, s))
        } else {
            fast_lanes!(v8, x, avx512::estrin6, None)
        }
    }

    /// `ln_sum_f64` of 4 lanes of `s` and `e`, garbage where `near_sum` refuses `s`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn sum4(s: __m256d, e: __m256d) -> __m256d {
        fast_lanes!(v4, s, avx2::estrin6, Some(e))
    }

    /// Likewise of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn sum8(s: __m512d, e: __m512d) -> __m512d {
        fast_lanes!(v8, s, avx512::estrin6, Some(e))
    }

    /// `ln_sum_f64` over the whole runs of 8 of the `n` elements, 8 lanes at a time; returns
    /// how many it wrote (the rest are the caller's).
    ///
    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA; `s` and `e` readable and `dst`
    /// writable for `n` elements, `dst` apart from both.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_sum(
        s: *const f64,
        e: *const f64,
        dst: *mut f64,
        n: usize,
    ) -> usize {
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: `i + 8 <= n`: the 8 lie inside each pointer's `n` elements.
            unsafe {
                let v = sum8(_mm512_loadu_pd(s.add(i)), _mm512_loadu_pd(e.add(i)));
                _mm512_storeu_pd(dst.add(i), v);
            }
            i += 8;
        }
        i
    }

    /// As [`avx512_sum`], 4 lanes at a time.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; the pointers as `avx512_sum`'s.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_sum(s: *const f64, e: *const f64, dst: *mut f64, n: usize) -> usize {
        let mut i = 0;
        while i + 8 <= n {
            for h in [i, i + 4] {
                // SAFETY: `h + 4 <= n`: the 4 lie inside each pointer's `n` elements.
                unsafe {
                    let v = sum4(_mm256_loadu_pd(s.add(h)), _mm256_loadu_pd(e.add(h)));
                    _mm256_storeu_pd(dst.add(h), v);
                }
            }
            i += 8;
        }
        i
    }

    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA; `src` readable and `dst` writable
    /// for `n` elements, apart.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_run<const ONE_P: bool>(src: *const f64, dst: *mut f64, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 1.0, |s, d| {
                _mm512_storeu_pd(d, lanes8::<ONE_P>(_mm512_loadu_pd(s)))
            })
        }
    }

    /// # Safety
    /// The processor must have AVX2 and FMA; `src` readable and `dst` writable for `n`
    /// elements, apart.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_run<const ONE_P: bool>(src: *const f64, dst: *mut f64, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 1.0, |s, d| {
                for h in [0, 4] {
                    _mm256_storeu_pd(d.add(h), lanes4::<ONE_P>(_mm256_loadu_pd(s.add(h))))
                }
            })
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::{ln_1p_f64, ln_1p_f64_into, ln_f64, ln_f64_into};
    use crate::backends::host::dd_reference::{ln_reference, ulp_error, uniform};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    /// Arguments for the float64 logarithms (`logf::ln_wide` takes them too): both sides of
    /// 1, the parts next to it, every binade, edges.
    pub(in crate::backends::host) fn arguments() -> Vec<f64> {
        uniform(1 << 14, 0.0, 4.0, 1)
            .chain(uniform(1 << 13, 0.99, 1.01, 2))
            .chain(uniform(1 << 13, -1.0, 1.0, 3))
            .chain(spread_f64(&[
                -f64::NAN,
                1.0,
                f64::MAX,
                f64::MIN_POSITIVE,
                f64::from_bits(1),
                f64::from_bits(0x000f_ffff_ffff_ffff),
            ]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| ln_f64(x)).collect();
        // The loop this processor runs (else the scalar function again), each start and
        // length, then through the backend's kernels, strided too.
        check_slice_loop(&xs, &scalar, ln_f64_into);
        check_array(&xs, &scalar, crate::Array::log);
        #[cfg(target_arch = "x86_64")]
        each_vector_loop::<false>(&xs, &scalar);
    }

    #[test]
    fn every_log1p_path_gives_the_bits_of_the_scalar_function() {
        let xs: Vec<f64> = arguments()
            .into_iter()
            .chain(uniform(1 << 13, -1.0, -0.5, 4))
            .chain(uniform(1 << 12, -40.0, -1.0, 5).map(|e| e.exp2()))
            .chain([-1.0, -1.5, -f64::MIN_POSITIVE, 1e-300, -1e-300, f64::MAX])
            .collect();
        let scalar: Vec<f64> = xs.iter().map(|&x| ln_1p_f64(x)).collect();
        check_slice_loop(&xs, &scalar, ln_1p_f64_into);
        check_array(&xs, &scalar, crate::Array::log1p);
        #[cfg(target_arch = "x86_64")]
        each_vector_loop::<true>(&xs, &scalar);
    }

    #[test]
    fn every_ln_sum_path_gives_the_bits_of_the_scalar_function() {
        use super::{ln_sum_f64, ln_sum_f64_into};
        use crate::backends::host::poly::two_sum_err;
        // Sums `a + b` and their errors: near 1 (where the tail is most of the result), all
        // over, and with the far `s` (zero, negative, from 2^1022, infinite, NaN).
        let a = arguments();
        let b: Vec<f64> = uniform(a.len(), -1e-3, 1e-3, 9).collect();
        let (s, e): (Vec<f64>, Vec<f64>) = a
            .iter()
            .zip(&b)
            .map(|(&a, &b)| {
                let s = a + b;
                (s, two_sum_err(a, b, s))
            })
            .chain([(4.5e307, 1e291), (-1.0, 1e-17), (0.0, 0.0)])
            .unzip();
        let scalar: Vec<f64> = s.iter().zip(&e).map(|(&s, &e)| ln_sum_f64(s, e)).collect();
        type Out = [std::mem::MaybeUninit<f64>];
        type Loop<'a> = &'a dyn Fn(&[f64], &[f64], &mut Out);
        let run = |f: Loop| {
            for start in 0..9 {
                for len in (0..40).chain([s.len() - start]) {
                    let mut out = vec![std::mem::MaybeUninit::new(0.0); len];
                    f(&s[start..start + len], &e[start..start + len], &mut out);
                    for (i, o) in out.iter().enumerate() {
                        // SAFETY: every element was initialised (and `f` wrote each).
                        let got = unsafe { o.assume_init() };
                        let want = scalar[start + i];
                        assert!(got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan());
                    }
                }
            }
        };
        run(&ln_sum_f64_into);
        #[cfg(target_arch = "x86_64")]
        {
            use super::x86::{avx2_sum, avx512_sum};
            use crate::backends::host::simd::{has_avx2_fma, has_avx512};
            type Sum = unsafe fn(*const f64, *const f64, *mut f64, usize) -> usize;
            let through = |sum: Sum| {
                move |s: &[f64], e: &[f64], out: &mut Out| {
                    let n = s.len();
                    // SAFETY: the caller checked the processor's features; `s` and `e` hold
                    // `n` readable elements and `out` `n` writable ones, apart.
                    let done = unsafe { sum(s.as_ptr(), e.as_ptr(), out.as_mut_ptr().cast(), n) };
                    for i in done..n {
                        out[i].write(ln_sum_f64(s[i], e[i]));
                    }
                    super::super::simd::fix_far(s, out, super::near_sum, ln_f64);
                }
            };
            if has_avx512() {
                run(&through(avx512_sum));
            }
            if has_avx2_fma() {
                run(&through(avx2_sum));
            }
        }
    }

    /// `check_slice_loop` through each vector loop the processor has, whichever the slice
    /// function picks here.
    #[cfg(target_arch = "x86_64")]
    fn each_vector_loop<const ONE_P: bool>(xs: &[f64], scalar: &[f64]) {
        use super::x86::{avx2_run, avx512_run};
        use crate::backends::host::simd::{has_avx2_fma, has_avx512};
        if has_avx512() {
            check_slice_loop(xs, scalar, |xs, out| {
                through::<ONE_P>(avx512_run::<ONE_P>, xs, out)
            });
        }
        if has_avx2_fma() {
            check_slice_loop(xs, scalar, |xs, out| {
                through::<ONE_P>(avx2_run::<ONE_P>, xs, out)
            });
        }
    }

    /// The slice loop through the vector loop `run`, whose features the processor has.
    #[cfg(target_arch = "x86_64")]
    fn through<const ONE_P: bool>(
        run: unsafe fn(*const f64, *mut f64, usize),
        xs: &[f64],
        out: &mut [std::mem::MaybeUninit<f64>],
    ) {
        let n = xs.len().min(out.len());
        let (xs, out) = (&xs[..n], &mut out[..n]);
        // SAFETY: the caller checked the processor's features; `xs` holds `n` readable
        // elements and `out` `n` writable ones, apart.
        unsafe { run(xs.as_ptr(), out.as_mut_ptr().cast(), n) };
        super::fix_far::<ONE_P>(xs, out);
    }

    #[test]
    fn log1p_is_within_0_51_ulp_and_closer_than_the_c_library_where_they_differ() {
        use crate::backends::host::dd_reference::{dd_add, dd_div};
        // Tiny and small arguments both sides of 0, across -1..1, large ones, and near -1.
        let xs = uniform(100_000, -1074.0, 0.0, 40)
            .map(f64::exp2)
            .flat_map(|a| [a, -a])
            .chain(uniform(100_000, -1.0, 1.0, 41))
            .chain(uniform(50_000, 0.0, 1023.0, 42).map(f64::exp2))
            .chain(uniform(50_000, -53.0, -1.0, 43).map(|e| -1.0 + e.exp2()));
        let (mut n, mut differ, mut worst, mut libm_worst) = (0usize, 0usize, 0f64, 0f64);
        for x in xs {
            let got = ln_1p_f64(x);
            if x == 0.0 || !(x > -1.0 && x < f64::INFINITY) {
                continue;
            }
            if x.abs() < f64::MIN_POSITIVE {
                // A subnormal's ulp is not its exponent's: the result is `x` itself.
                assert_eq!(got, x);
                continue;
            }
            // `ln(1 + x) = ln s + ln(1 + t)`, `t = e/s` (`|t| <= 2^-53`) in double-double, and
            // `ln(1 + t) = t - t^2/2` to 2^-159.
            let s = 1.0 + x;
            let e = crate::backends::host::poly::two_sum_err(1.0, x, s);
            let t = dd_div((e, 0.0), s);
            let want = dd_add(dd_add(ln_reference(s), t), (-t.0 * t.0 / 2.0, 0.0));
            let err = ulp_error(got, want);
            assert!(err <= 0.51, "log1p({x:e}) = {got:e}: {err} ulp off");
            worst = worst.max(err);
            let libm = x.ln_1p();
            assert!(
                ulps(got, libm) <= 1,
                "log1p({x:e}) = {got:e}, libm {libm:e}"
            );
            if got != libm {
                // Where the two differ, glibc's is the one further off (it promises < 1 ulp).
                let theirs = ulp_error(libm, want);
                assert!(
                    theirs > err,
                    "log1p({x:e}): {got:e} ({err} ulp), libm {libm:e} ({theirs})"
                );
                differ += 1;
                libm_worst = libm_worst.max(theirs);
            }
            n += 1;
        }
        assert!(worst > 0.49, "the reference itself is off: worst {worst}");
        eprintln!(
            "log1p: worst {worst} ulp; {differ} of {n} differ from the C library, whose worst there is {libm_worst}"
        );
    }

    /// `fast` adds `r` to `w = k ln2_hi + logc` by a fast two-sum, exact only where `|w| >=
    /// |r|` (or `w = 0`). `r` grows with `z`'s distance from its part's middle, so each part's
    /// first and last `z` bound it; `k = 0` gives the smallest `|w|`. `log1p`'s tail moves `r`
    /// by under 2^-52 of it, which the margin covers.
    #[test]
    fn the_fast_two_sums_operands_are_in_order() {
        use super::{INVC, LOGC, OFF};
        for i in 0..128u64 {
            let (invc, logc) = (INVC[i as usize], LOGC[i as usize]);
            for z in [OFF + (i << 45), OFF + ((i + 1) << 45) - 1].map(f64::from_bits) {
                let r = z * invc - 1.0;
                if logc == 0.0 {
                    assert_eq!(i, 74);
                } else {
                    assert!(
                        logc.abs() > r.abs() * (1.0 + 1e-12),
                        "part {i}: {logc:e} {r:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn log1p_edges_are_those_of_the_c_library() {
        assert_eq!(ln_1p_f64(-1.0), f64::NEG_INFINITY);
        assert!(ln_1p_f64(-1.5).is_nan() && ln_1p_f64(f64::NAN).is_nan());
        assert!(ln_1p_f64(f64::NEG_INFINITY).is_nan());
        assert_eq!(ln_1p_f64(f64::INFINITY), f64::INFINITY);
        assert_eq!(ln_1p_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(ln_1p_f64(0.0).to_bits(), 0);
        for x in [1e-300, f64::MIN_POSITIVE, f64::from_bits(1), 1e-17] {
            assert_eq!(ln_1p_f64(x), x);
            assert_eq!(ln_1p_f64(-x), -x);
        }
        assert_eq!(ln_1p_f64(1.0), std::f64::consts::LN_2);
        assert_eq!(ln_1p_f64(f64::MAX), f64::MAX.ln());
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        assert_eq!(ln_f64(0.0), f64::NEG_INFINITY);
        assert_eq!(ln_f64(-0.0), f64::NEG_INFINITY);
        assert!(ln_f64(-1.0).is_nan() && ln_f64(f64::NAN).is_nan());
        assert!(ln_f64(f64::NEG_INFINITY).is_nan() && ln_f64(-1e-310).is_nan());
        assert_eq!(ln_f64(f64::INFINITY), f64::INFINITY);
        assert_eq!(ln_f64(1.0).to_bits(), 0);
        assert_eq!(ln_f64(2.0), std::f64::consts::LN_2);
        assert_eq!(ln_f64(10.0), std::f64::consts::LN_10);
        // Either side of 1: x - 1 less a hair.
        assert_eq!(
            ln_f64(1.0 + f64::EPSILON),
            f64::EPSILON - f64::EPSILON.powi(2) / 2.0
        );
        assert_eq!(ln_f64(1.0 - f64::EPSILON / 2.0), -f64::EPSILON / 2.0);
        // The smallest subnormal, the smallest normal, the largest f64 (glibc's bits).
        assert_eq!(ln_f64(f64::from_bits(1)), -744.440_071_921_381_2);
        assert_eq!(ln_f64(f64::MIN_POSITIVE), -708.396_418_532_264_1);
        assert_eq!(ln_f64(f64::MAX), 709.782_712_893_384);
    }

    #[test]
    fn within_0_51_ulp_and_mostly_the_c_librarys_bits() {
        // Against a double-double reference over every binade, both sides of 1 and the
        // parts next to it (where glibc takes x apart and a rounded `r` would cost half an
        // ulp), and subnormals.
        let ranges = [
            (-1074.0, 1024.0),
            (-0.05, 0.05),
            (-1e-6, 1e-6),
            (-1074.0, -1022.0),
        ];
        let (mut n, mut differ, mut worst) = (0usize, 0usize, 0f64);
        for (seed, &(lo, hi)) in ranges.iter().enumerate() {
            for e in uniform(150_000, lo, hi, seed as u64 + 30) {
                let x = if seed == 0 || seed == 3 {
                    e.exp2()
                } else {
                    1.0 + e
                };
                if !(x > 0.0 && x < f64::INFINITY) {
                    continue;
                }
                let got = ln_f64(x);
                if got == 0.0 {
                    continue;
                }
                let err = ulp_error(got, ln_reference(x));
                assert!(err <= 0.51, "ln({x:e}) = {got:e}: {err} ulp off");
                worst = worst.max(err);
                let want = x.ln();
                assert!(ulps(got, want) <= 1, "ln({x:e}) = {got:e}, libm {want:e}");
                differ += usize::from(got != want);
                n += 1;
            }
        }
        assert!(worst > 0.49, "the reference itself is off: worst {worst}");
        assert!(
            differ * 100 < n,
            "{differ} of {n} differ from the C library"
        );
        eprintln!("{differ} of {n} differ from the C library, worst {worst}");
    }
}
