//! The direct CPU export (`cpu_in_place`) against the planned one, over every option and
//! the arrays that reach or skip it: the same tensor, or the same error.

use super::*;
use crate::Sharding;
use crate::dtype::DType;
use crate::layout::Slice;

/// What a consumer reads of a tensor, with its data address.
fn described(t: &DLPackTensor) -> String {
    let d = t.dl_tensor().unwrap();
    format!(
        "versioned {:?} flags {} copied {} device {:?} dtype {:?} shape {:?} strides {:?} \
         offset {} fallback {:?}",
        t.version(),
        t.flags(),
        t.is_copied(),
        d.device,
        (d.dtype.code, d.dtype.bits, d.dtype.lanes),
        t.shape().unwrap(),
        t.strides().unwrap(),
        d.byte_offset,
        t.fallback_reason(),
    )
}

fn arrays() -> Vec<(String, Array)> {
    let x = Array::arange(0.0, 24.0, 1.0, DType::F32).unwrap();
    let x4 = x.reshape(&[2, 3, 4]).unwrap();
    let mut out = vec![
        ("contiguous".to_string(), x.clone()),
        ("3-d".into(), x4.clone()),
        ("transposed".into(), x4.permute(&[2, 0, 1]).unwrap()),
        ("flipped".into(), x.flip(0).unwrap()),
        (
            "offset view".into(),
            x.slice(&[Slice::new(Some(3), Some(20), 2)]).unwrap(),
        ),
        ("empty".into(), Array::zeros(&[0, 3], DType::I64).unwrap()),
        ("0-d".into(), Array::zeros(&[], DType::F64).unwrap()),
        ("6-d".into(), x.reshape(&[1, 2, 1, 3, 4, 1]).unwrap()),
        ("read-only".into(), x4.clone().with_read_only(true)),
        (
            "broadcast".into(),
            x.slice(&[Slice::new(Some(0), Some(1), 1)])
                .unwrap()
                .broadcast_to(&[5])
                .unwrap(),
        ),
    ];
    let tpus: Vec<_> = crate::backends::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .collect();
    if tpus.len() >= 2 {
        let hbm = x4.to_device(&tpus[0]).unwrap();
        out.push((
            "tpu pinned host".into(),
            hbm.with_memory_kind(MemoryKind::PinnedHost).unwrap(),
        ));
        out.push(("tpu device memory".into(), hbm));
        let both = Sharding::Replicated(tpus[..2].to_vec());
        out.push(("replicated".into(), x4.device_put(&both).unwrap()));
    }
    out
}

fn options() -> Vec<ExportOptions> {
    let mut out = Vec::new();
    for max_version in [None, Some((0, 4)), Some((0, 5)), Some((1, 0)), Some((2, 1))] {
        for dl_device in [
            None,
            Some(DLDevice::CPU),
            Some(DLDevice::new(DLDeviceType::kDLCUDA, 0)),
        ] {
            for copy in [None, Some(false), Some(true)] {
                for stream in [
                    StreamArg::Unspecified,
                    StreamArg::NoSync,
                    StreamArg::Value(1),
                ] {
                    for policy in [None, Some(DlpackPolicy::Strict)] {
                        out.push(ExportOptions {
                            max_version,
                            dl_device,
                            copy,
                            stream,
                            policy,
                        });
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_direct_cpu_export_gives_what_the_plan_gives() {
    let (mut direct, mut planned_only) = (0, 0);
    for (what, a) in arrays() {
        for o in options() {
            let fast = a.cpu_in_place(&o);
            let plan = a.planned_export(o);
            let Some(fast) = fast else {
                planned_only += 1;
                continue;
            };
            direct += 1;
            match (fast, plan) {
                (Ok(f), Ok(p)) => {
                    assert_eq!(described(&f), described(&p), "{what} {o:?}");
                    let (df, dp) = (f.dl_tensor().unwrap(), p.dl_tensor().unwrap());
                    assert_eq!(
                        df.data, dp.data,
                        "{what} {o:?}: in place, at the same address"
                    );
                    assert!(!f.is_copied(), "{what} {o:?}");
                }
                (Err(f), Err(p)) => assert_eq!(f.to_string(), p.to_string(), "{what} {o:?}"),
                (f, p) => panic!(
                    "{what} {o:?}: direct {:?}, planned {:?}",
                    f.is_ok(),
                    p.is_ok()
                ),
            }
        }
    }
    // Both paths ran: the direct one for CPU arrays without a device or copy asked, the
    // planned one for the rest.
    assert!(
        direct > 100 && planned_only > 100,
        "{direct} direct, {planned_only} planned"
    );
}

#[test]
fn a_direct_export_comes_back_as_the_same_array() {
    let x = Array::arange(0.0, 6.0, 1.0, DType::F32).unwrap();
    for max_version in [None, Some((1, 0))] {
        let o = ExportOptions {
            max_version,
            ..Default::default()
        };
        let t = x.cpu_in_place(&o).expect("a CPU array").unwrap();
        let back = Array::from_dlpack(t).unwrap();
        assert!(
            std::ptr::eq(back.shard_data(), x.shard_data()),
            "reclaimed, not wrapped again"
        );
    }
}
