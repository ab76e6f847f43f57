//! Sharding: every kind of spec, uneven splits, gather(device_put(x)) == x over 1-4 devices,
//! shard-by-shard ops, resharding of mismatched operands, reductions and transposes.

mod common;

use common::*;
use dlarray::{Array, Axes, DType, Device, Mesh, PartitionSpec, Sharding, Slice};
use proptest::prelude::*;
use std::ops::Range;

fn tpus(n: usize) -> Vec<Device> {
    let all = devices_of("tpu");
    assert!(all.len() >= n, "need {n} tpu devices, have {}", all.len());
    all.into_iter().take(n).collect()
}

/// Elements of `data` (row-major `shape`) inside `index`.
fn slice_of(data: &[f32], shape: &[usize], index: &[Range<usize>]) -> Vec<f32> {
    let mut out = Vec::new();
    for (flat, &v) in data.iter().enumerate() {
        let mut rem = flat;
        let mut idx = vec![0; shape.len()];
        for k in (0..shape.len()).rev() {
            idx[k] = rem % shape[k];
            rem /= shape[k];
        }
        if idx.iter().zip(index).all(|(i, r)| r.contains(i)) {
            out.push(v);
        }
    }
    out
}

fn shardings(devs: &[Device], ndim: usize) -> Vec<Sharding> {
    let n = devs.len();
    let mut out = vec![
        Sharding::single(&devs[n - 1]),
        Sharding::Replicated(devs.to_vec()),
        Sharding::Named(
            Mesh::linear(devs.to_vec(), "x").unwrap(),
            PartitionSpec::replicated(),
        ),
    ];
    for axis in 0..ndim {
        out.push(Sharding::split(devs.to_vec(), axis).unwrap());
    }
    if n == 4 && ndim >= 2 {
        let mesh = Mesh::new(devs.to_vec(), &[2, 2], &["a", "b"]).unwrap();
        out.push(Sharding::Named(
            mesh.clone(),
            PartitionSpec::new(&[Some("a"), Some("b")]),
        ));
        out.push(Sharding::Named(
            mesh.clone(),
            PartitionSpec::new(&[Some("b"), Some("a")]),
        ));
        // Axis "b" unused: pairs of devices hold replicas.
        out.push(Sharding::Named(
            mesh,
            PartitionSpec::new(&[None, Some("a")]),
        ));
    }
    out
}

fn check_layout(x: &Array, data: &[f32], shape: &[usize], sharding: &Sharding) {
    assert_eq!(x.sharding(), sharding);
    assert_eq!(
        x.to_vec::<f32>().unwrap(),
        data,
        "gather(device_put(x)) == x for {sharding:?}"
    );
    let shards = x.addressable_shards();
    let mut covered = vec![0usize; data.len()];
    for s in &shards {
        assert!(sharding.devices().contains(s.device()));
        assert_eq!(s.data().devices(), vec![s.device().clone()]);
        let want = slice_of(data, shape, s.index());
        assert_eq!(
            s.data().to_vec::<f32>().unwrap(),
            want,
            "shard on {}",
            s.device()
        );
        for (flat, c) in covered.iter_mut().enumerate() {
            let mut rem = flat;
            let inside = (0..shape.len()).rev().all(|k| {
                let i = rem % shape[k];
                rem /= shape[k];
                s.index()[k].contains(&i)
            });
            *c += inside as usize;
        }
    }
    let copies = covered.first().copied().unwrap_or(1);
    assert!(
        covered.iter().all(|&c| c == copies && c >= 1),
        "every element held equally often"
    );
}

#[test]
fn gather_of_device_put_is_identity_on_1_to_4_devices() {
    for n in 1..=4 {
        let devs = tpus(n);
        for shape in [
            vec![7usize],
            vec![5, 3],
            vec![3, 5],
            vec![2, 3, 5],
            vec![1, 9],
            vec![0, 4],
        ] {
            let size: usize = shape.iter().product();
            let data: Vec<f32> = (0..size).map(|v| v as f32 * 0.5).collect();
            let x = Array::from_vec(data.clone(), &shape).unwrap();
            for s in shardings(&devs, shape.len()) {
                let y = x.device_put(&s).unwrap();
                check_layout(&y, &data, &shape, &s);
                // Resharding from any sharding to any other keeps the values.
                for s2 in shardings(&devs, shape.len()) {
                    assert_eq!(y.device_put(&s2).unwrap().to_vec::<f32>().unwrap(), data);
                }
            }
        }
    }
}

#[test]
fn uneven_split_gives_padding_free_last_shard() {
    let devs = tpus(4);
    let x = Array::arange(0.0, 10.0, 1.0, DType::F32).unwrap();
    let y = x.device_put(&Sharding::split(devs, 0).unwrap()).unwrap();
    let idx: Vec<Range<usize>> = y
        .addressable_shards()
        .iter()
        .map(|s| s.index()[0].clone())
        .collect();
    assert_eq!(idx, vec![0..3, 3..6, 6..9, 9..10]);
    let small = Array::arange(0.0, 3.0, 1.0, DType::F32).unwrap();
    let z = small
        .device_put(&Sharding::split(tpus(4), 0).unwrap())
        .unwrap();
    let sizes: Vec<usize> = z
        .addressable_shards()
        .iter()
        .map(|s| s.data().size())
        .collect();
    assert_eq!(sizes, vec![1, 1, 1, 0], "an empty last shard is allowed");
    assert_eq!(
        (&z + &z).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, 2.0, 4.0]
    );
}

#[test]
fn same_sharded_ops_run_shard_by_shard() {
    let devs = tpus(4);
    let data: Vec<f32> = (0..4096).map(|v| v as f32).collect();
    let s = Sharding::split(devs.clone(), 0).unwrap();
    let x = Array::from_vec(data.clone(), &[64, 64])
        .unwrap()
        .device_put(&s)
        .unwrap();
    let y = (&x * &x).unwrap().add(&x).unwrap();
    assert_eq!(y.sharding(), &s);
    for (shard, dev) in y.addressable_shards().iter().zip(&devs) {
        assert_eq!(shard.device(), dev, "each output shard stays on its device");
    }
    let want: Vec<f32> = data.iter().map(|v| v * v + v).collect();
    assert_eq!(y.to_vec::<f32>().unwrap(), want);
    // Unary ops and casts keep the sharding too.
    let z = y.sqrt().unwrap().astype(DType::F64).unwrap();
    assert_eq!(z.sharding(), &s);
}

/// A (1, n) operand broadcast against an array split into one-row shards: every shard reads
/// its one row (the second shard asked it for row 1: "shards cover 0 of the 6 elements").
/// argmax, var and where over such arrays went through it.
#[test]
fn one_row_operands_broadcast_against_one_row_shards() {
    let data: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let row: Vec<f32> = (0..6).map(|v| 10.0 * v as f32).collect();
    // Two devices: 2 rows (shards of one row) and 3 rows (two rows, then one).
    for rows in [2, 3] {
        let s = Sharding::split(tpus(2), 0).unwrap();
        let x = Array::from_vec(data[..rows * 6].to_vec(), &[rows, 6])
            .unwrap()
            .device_put(&s)
            .unwrap();
        let r = Array::from_vec(row.clone(), &[1, 6]).unwrap();
        let want: Vec<f32> = (0..rows * 6).map(|i| data[i] + row[i % 6]).collect();
        assert_eq!((&x + &r).unwrap().to_vec::<f32>().unwrap(), want);
        assert_eq!((&r + &x).unwrap().to_vec::<f32>().unwrap(), want);
        let am = x.argmax(Some(1)).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(am, vec![5; rows]);
        let v = x
            .var(Axes::These(vec![1]), 0)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(v, vec![35.0 / 12.0; rows]);
    }
}

#[test]
fn matmul_of_row_or_batch_sharded_arrays_keeps_their_sharding() {
    let (k, n) = (4, 3);
    let w: Vec<f32> = (0..k * n).map(|v| (v % 5) as f32 * 0.5).collect();
    let wa = Array::from_vec(w.clone(), &[k, n]).unwrap();
    for count in 1..=4 {
        let devs = tpus(count);
        for shape in [vec![7, k], vec![3, 5, k]] {
            let nd = shape.len();
            let rows: usize = shape[..nd - 1].iter().product();
            // Small integers and halves: every product and sum is exact in f32, so the
            // per-shard products must equal the reference bit for bit.
            let data: Vec<f32> = (0..rows * k).map(|v| (v % 11) as f32 - 5.0).collect();
            let want: Vec<f32> = (0..rows * n)
                .map(|i| (0..k).map(|p| data[i / n * k + p] * w[p * n + i % n]).sum())
                .collect();
            let mut out_shape = shape.clone();
            out_shape[nd - 1] = n;
            for s in shardings(&devs, nd) {
                let x = Array::from_vec(data.clone(), &shape)
                    .unwrap()
                    .device_put(&s)
                    .unwrap();
                let y = x.matmul(&wa).unwrap();
                assert_eq!(y.shape(), &out_shape[..], "{s:?}");
                assert_eq!(y.to_vec::<f32>().unwrap(), want, "{s:?} {shape:?}");
                let Sharding::Named(mesh, spec) = &s else {
                    continue;
                };
                if spec.get(nd - 1).is_some() || x.addressable_shards().len() < 2 {
                    continue; // split over the contracted axis: computed on one device
                }
                let mut out_spec: Vec<Option<String>> =
                    (0..nd).map(|i| spec.get(i).map(str::to_string)).collect();
                out_spec[nd - 1] = None;
                let expected = Sharding::Named(mesh.clone(), PartitionSpec(out_spec));
                assert_eq!(y.sharding(), &expected, "{s:?}");
                for (ys, xs) in y.addressable_shards().iter().zip(x.addressable_shards()) {
                    assert_eq!(
                        ys.device(),
                        xs.device(),
                        "{s:?}: a shard stays where it was"
                    );
                    assert_eq!(ys.index()[..nd - 1], xs.index()[..nd - 1], "{s:?}");
                    assert_eq!(ys.index()[nd - 1], 0..n, "{s:?}");
                }
            }
        }
    }
}

#[test]
fn slices_of_whole_axes_stay_sharded_views() {
    let shape = [7, 6];
    let data: Vec<f32> = (0..42).map(|v| v as f32).collect();
    let cols = [Slice::full(), Slice::with_step(1, 6, 2)];
    let rows_too = [Slice::with_step(1, 6, 1), Slice::reversed()];
    for count in 1..=4 {
        let devs = tpus(count);
        for s in shardings(&devs, 2) {
            let x = Array::from_vec(data.clone(), &shape)
                .unwrap()
                .device_put(&s)
                .unwrap();
            for slices in [&cols[..], &rows_too[..], &[Slice::reversed()][..]] {
                let want = Array::from_vec(data.clone(), &shape)
                    .unwrap()
                    .slice(slices)
                    .unwrap();
                let y = x.slice(slices).unwrap();
                assert_eq!(y.shape(), want.shape(), "{s:?} {slices:?}");
                assert_eq!(
                    y.to_vec::<f32>().unwrap(),
                    want.to_vec::<f32>().unwrap(),
                    "{s:?} {slices:?}"
                );
                let cut: Vec<usize> = (0..2)
                    .filter(|&k| slices.get(k).is_some_and(|sl| *sl != Slice::full()))
                    .collect();
                let split = |k: usize| {
                    x.addressable_shards()
                        .iter()
                        .any(|sh| sh.index()[k] != (0..shape[k]))
                };
                if x.addressable_shards().len() < 2 || cut.iter().any(|&k| split(k)) {
                    continue; // one shard, or a split axis cut: gathered
                }
                assert_eq!(
                    y.sharding(),
                    x.sharding(),
                    "{s:?} {slices:?}: sharding kept"
                );
                for (ys, xs) in y.addressable_shards().iter().zip(x.addressable_shards()) {
                    assert_eq!(ys.device(), xs.device());
                    for k in 0..2 {
                        if !cut.contains(&k) {
                            assert_eq!(ys.index()[k], xs.index()[k], "{s:?} {slices:?}");
                        }
                    }
                }
            }
        }
    }
    // No copy: a column slice of a row-split array reads the shards' own buffers.
    let s = Sharding::split(tpus(2), 0).unwrap();
    let x = Array::from_vec(data, &shape)
        .unwrap()
        .device_put(&s)
        .unwrap();
    let y = x.slice(&cols).unwrap();
    for (ys, xs) in y.addressable_shards().iter().zip(x.addressable_shards()) {
        let (yp, xp) = (
            ys.data().unsafe_buffer_pointer().unwrap(),
            xs.data().unsafe_buffer_pointer().unwrap(),
        );
        assert_eq!(
            yp,
            xp + 4,
            "the view starts one f32 into the shard's own buffer"
        );
    }
}

#[test]
fn index_and_reshape_after_the_split_axes_stay_sharded() {
    let shape = [4usize, 3, 2];
    let data: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let host = Array::from_vec(data, &shape).unwrap();
    let targets: [&[isize]; 6] = [
        &[4, 6],
        &[4, 3, 2, 1],
        &[24],
        &[2, 2, 6],
        &[4, 2, 3],
        &[4, -1],
    ];
    for count in 1..=4 {
        let devs = tpus(count);
        for s in shardings(&devs, 3) {
            let x = host.device_put(&s).unwrap();
            let sharded = x.addressable_shards().len() > 1;
            let split: Vec<usize> = (0..3)
                .filter(|&k| {
                    x.addressable_shards()
                        .iter()
                        .any(|sh| sh.index()[k] != (0..shape[k]))
                })
                .collect();
            let same_devices = |y: &Array| {
                y.addressable_shards().len() == x.addressable_shards().len()
                    && y.addressable_shards()
                        .iter()
                        .zip(x.addressable_shards())
                        .all(|(a, b)| a.device() == b.device())
            };
            for axis in 0..3 {
                let y = x.index_axis(axis as isize, 1).unwrap();
                let want = host.index_axis(axis as isize, 1).unwrap();
                assert_eq!(y.shape(), want.shape());
                let got = y.to_vec::<f32>().unwrap();
                assert_eq!(got, want.to_vec::<f32>().unwrap(), "{s:?} axis {axis}");
                if sharded && !split.contains(&axis) {
                    assert!(same_devices(&y), "{s:?} axis {axis}: stays sharded");
                }
            }
            let kept = split.iter().max().map_or(0, |&l| l + 1);
            for target in targets {
                let y = x.reshape(target).unwrap();
                let want = host.reshape(target).unwrap();
                assert_eq!(y.shape(), want.shape(), "{s:?} {target:?}");
                let got = y.to_vec::<f32>().unwrap();
                assert_eq!(got, want.to_vec::<f32>().unwrap(), "{s:?} {target:?}");
                let keeps =
                    target.len() >= kept && (0..kept).all(|k| target[k] == shape[k] as isize);
                if sharded && keeps {
                    assert!(same_devices(&y), "{s:?} {target:?}: stays sharded");
                }
            }
            // Transposed shards cannot be reshaped as views: each is copied where it lives.
            let t = x.permute(&[0, 2, 1]).unwrap();
            let y = t.reshape(&[4, 6]).unwrap();
            let want = host.permute(&[0, 2, 1]).unwrap().reshape(&[4, 6]).unwrap();
            assert_eq!(
                y.to_vec::<f32>().unwrap(),
                want.to_vec::<f32>().unwrap(),
                "{s:?}"
            );
        }
    }
    // A batch-split array flattened per example keeps the same split, spelled the same way.
    let s = Sharding::split(tpus(2), 0).unwrap();
    let y = host.device_put(&s).unwrap().reshape(&[4, -1]).unwrap();
    assert_eq!(y.sharding(), &s);
}

#[test]
fn mismatched_shardings_reshard_to_the_left_operand() {
    let devs = tpus(4);
    let data: Vec<f32> = (0..60).map(|v| v as f32).collect();
    let base = Array::from_vec(data.clone(), &[6, 10]).unwrap();
    let rows = Sharding::split(devs.clone(), 0).unwrap();
    let cols = Sharding::split(devs.clone(), 1).unwrap();
    let a = base.device_put(&rows).unwrap();
    let b = base.device_put(&cols).unwrap();
    let c = (&a - &b).unwrap();
    assert_eq!(c.sharding(), &rows);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![0.0; 60]);
    let d = (&b + &a).unwrap();
    assert_eq!(d.sharding(), &cols);
    // A single-device operand broadcast against a sharded one.
    let row = Array::from_vec((0..10).map(|v| v as f32).collect(), &[10]).unwrap();
    let e = (&row + &a).unwrap();
    assert_eq!(
        e.sharding(),
        &rows,
        "the operand with the output's shape sets the sharding"
    );
    let want: Vec<f32> = data
        .iter()
        .enumerate()
        .map(|(i, v)| v + (i % 10) as f32)
        .collect();
    assert_eq!(e.to_vec::<f32>().unwrap(), want);
    // Across backends: CPU with TPU.
    let on_cpu = base.to_device(&cpu()).unwrap();
    assert_eq!(
        (&a + &on_cpu).unwrap().to_vec::<f32>().unwrap(),
        data.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
}

#[test]
fn reductions_and_transposes_of_sharded_arrays() {
    let devs = tpus(4);
    let data: Vec<f32> = (0..60).map(|v| v as f32).collect();
    let rows = Sharding::split(devs.clone(), 0).unwrap();
    let a = Array::from_vec(data.clone(), &[6, 10])
        .unwrap()
        .device_put(&rows)
        .unwrap();
    // Over the unsplit axis: stays sharded.
    let s1 = a.sum(1).unwrap();
    assert_eq!(s1.sharding(), &rows);
    let want1: Vec<f32> = data.chunks(10).map(|r| r.iter().sum()).collect();
    assert_eq!(s1.to_vec::<f32>().unwrap(), want1);
    // Over the split axis: gathered, still correct.
    let s0 = a.sum(0).unwrap();
    let want0: Vec<f32> = (0..10)
        .map(|c| (0..6).map(|r| data[r * 10 + c]).sum())
        .collect();
    assert_eq!(s0.to_vec::<f32>().unwrap(), want0);
    assert_eq!(a.max(Axes::All).unwrap().item::<f32>().unwrap(), 59.0);
    assert_eq!(a.mean(Axes::All).unwrap().item::<f32>().unwrap(), 29.5);
    let k = a.reduce(dlarray::ReduceOp::Min, 1, true).unwrap();
    assert_eq!(k.shape(), &[6, 1]);
    assert_eq!(
        k.to_vec::<f32>().unwrap(),
        vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    );
    // Transpose keeps the shards and permutes the spec.
    let t = a.t().unwrap();
    assert_eq!(t.sharding(), &Sharding::split(devs, 1).unwrap());
    let want_t: Vec<f32> = (0..10)
        .flat_map(|c| (0..6).map(move |r| (r * 10 + c) as f32))
        .collect();
    assert_eq!(t.to_vec::<f32>().unwrap(), want_t);
    // Views that need one device gather; matmul of sharded operands is computed on one.
    assert_eq!(a.reshape(&[-1]).unwrap().to_vec::<f32>().unwrap(), data);
    let m = a.matmul(&t).unwrap();
    assert_eq!(m.shape(), &[6, 6]);
    assert_eq!(
        m.to_vec::<f32>().unwrap()[0],
        (0..10).map(|v| (v * v) as f32).sum::<f32>()
    );
}

#[test]
fn invalid_shardings_are_errors() {
    let devs = tpus(2);
    assert!(
        Mesh::new(devs.clone(), &[3], &["x"]).is_err(),
        "device count"
    );
    assert!(
        Mesh::new(vec![devs[0].clone(), devs[0].clone()], &[2], &["x"]).is_err(),
        "duplicate"
    );
    let mesh = Mesh::linear(devs.clone(), "x").unwrap();
    let x = Array::zeros(&[4], DType::F32).unwrap();
    let bad_axis = Sharding::Named(mesh.clone(), PartitionSpec::new(&[Some("y")]));
    assert!(x.device_put(&bad_axis).is_err());
    let too_long = Sharding::Named(mesh.clone(), PartitionSpec::new(&[None, Some("x")]));
    assert!(x.device_put(&too_long).is_err());
    let twice = Sharding::Named(mesh, PartitionSpec::new(&[Some("x"), Some("x")]));
    assert!(
        Array::zeros(&[2, 2], DType::F32)
            .unwrap()
            .device_put(&twice)
            .is_err()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn device_put_round_trips(
        shape in prop::collection::vec(0usize..7, 1..4),
        n in 1usize..5,
        which in 0usize..8,
    ) {
        let devs = tpus(n);
        let size: usize = shape.iter().product();
        let data: Vec<f32> = (0..size).map(|v| v as f32).collect();
        let x = Array::from_vec(data.clone(), &shape).unwrap();
        let all = shardings(&devs, shape.len());
        let s = &all[which % all.len()];
        let y = x.device_put(s).unwrap();
        check_layout(&y, &data, &shape, s);
        let z = (&y + &y).unwrap();
        prop_assert_eq!(z.to_vec::<f32>().unwrap(), data.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    }
}
