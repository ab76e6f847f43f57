//! Conversions to and from other array libraries, each behind a cargo feature.

#[cfg(feature = "ndarray")]
pub mod ndarray;
