//! The DLPack stream handshake: the array API's `__dlpack__(stream=...)` rules, per runtime,
//! as pure functions (tested without hardware). Backends only execute what they return.
//!
//! The consumer passes the stream it will use the data on; the producer must make that stream
//! wait for its own pending work on the data before returning the capsule. `None` and `-1`
//! mean the same on every runtime; the integers 0, 1 and 2 are runtime-specific:
//!
//! | value  | CUDA                         | ROCm                 | no streams (host, oneAPI) |
//! |--------|------------------------------|----------------------|---------------------------|
//! | `None` | legacy default stream        | default stream       | wait for the data         |
//! | `-1`   | no synchronisation           | no synchronisation   | no synchronisation        |
//! | `0`    | refused (ambiguous)          | default stream       | refused                   |
//! | `1`    | legacy default stream        | refused              | refused                   |
//! | `2`    | per-thread default stream    | refused              | refused                   |
//! | `> 2`  | that stream (a `cudaStream_t`) | that stream (`hipStream_t`) | refused          |
//!
//! Host memory takes no stream at all (NumPy's rule): anything but `None` is refused there.

use crate::error::{Error, Result};

/// The consumer's `stream` argument as the array API defines it, before a runtime gives the
/// integers their meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum StreamArg {
    /// `stream=None`: the runtime's default.
    #[default]
    Unspecified,
    /// `stream=-1`: the consumer synchronises itself; the producer must not.
    NoSync,
    /// Any other integer: a runtime-specific value (0, 1, 2) or a stream handle.
    Value(i64),
}

impl From<Option<i64>> for StreamArg {
    fn from(v: Option<i64>) -> Self {
        match v {
            None => StreamArg::Unspecified,
            Some(-1) => StreamArg::NoSync,
            Some(v) => StreamArg::Value(v),
        }
    }
}

impl StreamArg {
    /// The argument as Python passes it (`None`, `-1`, or the integer).
    pub fn as_raw(self) -> Option<i64> {
        match self {
            StreamArg::Unspecified => None,
            StreamArg::NoSync => Some(-1),
            StreamArg::Value(v) => Some(v),
        }
    }
}

/// How a backend's runtime numbers its streams (its DLPack declaration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum StreamConvention {
    /// No streams the consumer can name: host memory, eager backends, oneAPI.
    #[default]
    None,
    /// CUDA's: 1 legacy default, 2 per-thread default, 0 refused.
    Cuda,
    /// ROCm's: 0 default, 1 and 2 refused.
    Rocm,
}

/// What the producer must do before handing its memory to the consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportSync {
    /// Nothing (the consumer asked for `-1`).
    Skip,
    /// Wait until the queued work on the data has finished (no stream to hand the wait to).
    Wait,
    /// Make the runtime's legacy default stream wait for the work (CUDA).
    LegacyDefault,
    /// Make the calling thread's per-thread default stream wait (CUDA).
    PerThreadDefault,
    /// Make the runtime's default stream wait (ROCm's `0`).
    Default,
    /// Make this stream wait (a `cudaStream_t` or `hipStream_t` of the consumer).
    Stream(usize),
}

fn refused(stream: i64, on: &str) -> Error {
    Error::invalid(format!(
        "stream={stream} is not a valid DLPack stream for {on} (see the array API's \
         __dlpack__: None or -1 everywhere; CUDA 1, 2 or a stream pointer; ROCm 0 or a \
         stream pointer)"
    ))
}

/// The array API's rule for `arg` on memory of a runtime numbering streams by `convention`;
/// `host` memory takes only `None`.
#[inline]
pub fn export_sync(convention: StreamConvention, host: bool, arg: StreamArg) -> Result<ExportSync> {
    use StreamConvention as C;
    if host {
        return match arg {
            StreamArg::Unspecified => Ok(ExportSync::Wait),
            other => Err(Error::invalid(format!(
                "stream must be None for host memory, got {:?}",
                other.as_raw()
            ))),
        };
    }
    let v = match arg {
        StreamArg::NoSync => return Ok(ExportSync::Skip),
        StreamArg::Unspecified => {
            return Ok(match convention {
                C::None => ExportSync::Wait,
                C::Cuda => ExportSync::LegacyDefault,
                C::Rocm => ExportSync::Default,
            });
        }
        StreamArg::Value(v) => v,
    };
    let handle = |v: i64| usize::try_from(v).map(ExportSync::Stream);
    match (convention, v) {
        (C::Cuda, 0) => Err(Error::invalid(
            "stream=0 is ambiguous for CUDA and disallowed by the array API; pass 1 for the \
             legacy default stream or 2 for the per-thread default stream",
        )),
        (C::Cuda, 1) => Ok(ExportSync::LegacyDefault),
        (C::Cuda, 2) => Ok(ExportSync::PerThreadDefault),
        (C::Rocm, 0) => Ok(ExportSync::Default),
        (C::Rocm, 1 | 2) => Err(refused(v, "ROCm")),
        (C::Cuda | C::Rocm, v) if v > 2 => handle(v).map_err(|_| refused(v, "this device")),
        (C::None, v) => Err(refused(v, "a device without streams")),
        (_, v) => Err(refused(v, "this device")),
    }
}

/// What a consumer of memory on a runtime numbering streams by `convention` passes as
/// `__dlpack__(stream=...)`, given the raw handle of the stream it will use (`None`: its
/// default stream). CUDA's default is 1 (legacy), ROCm's is 0.
pub fn consumer_arg(convention: StreamConvention, stream: Option<usize>) -> StreamArg {
    match (convention, stream) {
        (StreamConvention::None, _) => StreamArg::Unspecified,
        (_, Some(h)) if h > 2 => StreamArg::Value(h as i64),
        (StreamConvention::Cuda, _) => StreamArg::Value(1),
        (StreamConvention::Rocm, _) => StreamArg::Value(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExportSync::*;
    use StreamConvention as C;

    fn rule(c: C, v: Option<i64>) -> Result<ExportSync> {
        export_sync(c, false, v.into())
    }

    #[test]
    fn cuda() {
        assert_eq!(rule(C::Cuda, None), Ok(LegacyDefault));
        assert_eq!(rule(C::Cuda, Some(-1)), Ok(Skip));
        assert!(
            rule(C::Cuda, Some(0))
                .unwrap_err()
                .to_string()
                .contains("ambiguous")
        );
        assert_eq!(rule(C::Cuda, Some(1)), Ok(LegacyDefault));
        assert_eq!(rule(C::Cuda, Some(2)), Ok(PerThreadDefault));
        assert_eq!(rule(C::Cuda, Some(0x7f00_1234)), Ok(Stream(0x7f00_1234)));
        assert!(rule(C::Cuda, Some(-2)).is_err());
        assert!(rule(C::Cuda, Some(i64::MIN)).is_err());
    }

    #[test]
    fn rocm() {
        assert_eq!(rule(C::Rocm, None), Ok(Default));
        assert_eq!(rule(C::Rocm, Some(-1)), Ok(Skip));
        assert_eq!(rule(C::Rocm, Some(0)), Ok(Default));
        assert!(rule(C::Rocm, Some(1)).is_err());
        assert!(rule(C::Rocm, Some(2)).is_err());
        assert_eq!(rule(C::Rocm, Some(3)), Ok(Stream(3)));
        assert!(rule(C::Rocm, Some(-7)).is_err());
    }

    #[test]
    fn no_streams_and_host() {
        assert_eq!(rule(C::None, None), Ok(Wait));
        assert_eq!(rule(C::None, Some(-1)), Ok(Skip));
        for v in [0, 1, 2, 99] {
            assert!(rule(C::None, Some(v)).is_err(), "{v}");
        }
        assert_eq!(export_sync(C::Cuda, true, StreamArg::Unspecified), Ok(Wait));
        for v in [-1, 0, 1, 2, 1234] {
            let e = export_sync(C::Cuda, true, Some(v).into()).unwrap_err();
            assert!(e.to_string().contains("None for host memory"), "{e}");
        }
    }

    #[test]
    fn consumer_side() {
        assert_eq!(consumer_arg(C::Cuda, None), StreamArg::Value(1));
        assert_eq!(
            consumer_arg(C::Cuda, Some(0xdead0)),
            StreamArg::Value(0xdead0)
        );
        assert_eq!(consumer_arg(C::Rocm, None), StreamArg::Value(0));
        assert_eq!(consumer_arg(C::None, Some(77)), StreamArg::Unspecified);
        // What a consumer passes, the producer's rule accepts.
        for (c, s) in [
            (C::Cuda, None),
            (C::Cuda, Some(99)),
            (C::Rocm, None),
            (C::Rocm, Some(9)),
        ] {
            assert!(export_sync(c, false, consumer_arg(c, s)).is_ok());
        }
        assert_eq!(StreamArg::from(Some(-1)).as_raw(), Some(-1));
        assert_eq!(StreamArg::from(None).as_raw(), None);
    }
}
