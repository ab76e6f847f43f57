//! Conversions to and from other array libraries, each behind a cargo feature.

#[cfg(feature = "candle")]
pub mod candle;
#[cfg(feature = "ndarray")]
pub mod ndarray;
#[cfg(feature = "tch")]
pub mod tch;
