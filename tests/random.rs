//! `dlarray::random` against JAX's own values (jax 0.10.2, `jax_enable_x64` for the 64-bit
//! ones, key `jax.random.PRNGKey(1234)`), and the same bits on every host backend, memory
//! kind and sharding. wgpu and the fake GPU runtime are checked in `tests/wgpu.rs` and the
//! GPU runtime's unit tests; `python/tests/test_random.py` compares with live JAX.

mod common;

use common::*;
use dlarray::random::{self, Key, Sampler};
use dlarray::{Array, DType, Error, MemoryKind, Mesh, PartitionSpec, Sharding};

fn key() -> Key {
    Key::new(1234)
}

fn f64s(a: &Array) -> Vec<f64> {
    a.to_f64_vec().unwrap()
}

#[test]
fn bits_are_jax_bits() {
    let b = random::bits(&key(), &[3], DType::U64).unwrap();
    assert_eq!(
        b.to_vec::<u64>().unwrap(),
        [
            5433122516582754127,
            12357064956073459442,
            9077809342324232988
        ]
    );
    let b = random::bits(&key(), &[2, 3], DType::U8).unwrap();
    assert_eq!(b.to_vec::<u8>().unwrap(), [107, 233, 156, 133, 21, 107]);
    let k = Key::new(0);
    let b = random::bits(&k, &[4], DType::U32).unwrap();
    assert_eq!(
        b.to_vec::<u32>().unwrap(),
        [4070199207, 4202968722, 1427181096, 2012915765]
    );
    let e = random::bits(&k, &[4], DType::I32).unwrap_err().to_string();
    assert!(e.contains("random.bits") && e.contains("unsigned"), "{e}");
}

#[test]
fn keys_split_and_fold_as_jax() {
    let [a, b] = key().split_n::<2>();
    assert_eq!(a.data(), [1264997412, 2518116175]);
    assert_eq!(b.data(), [2877103387, 1697627890]);
    assert_eq!(key().fold_in(99).data(), [1352316717, 3624571589]);
}

#[test]
fn uniform_is_jax_uniform() {
    let u = random::uniform(&key(), &[3], DType::F64, 0.0, 1.0).unwrap();
    let want = [
        f64::from_bits(0x3fd2_d995_0925_85d8),
        f64::from_bits(0x3fe5_6fa3_a36c_a5f6),
        f64::from_bits(0x3fdf_7eb6_e008_fd54),
    ];
    assert_eq!(u.to_vec::<f64>().unwrap(), want);
    let u = random::uniform(&key(), &[3], DType::F32, 0.0, 1.0).unwrap();
    let want = [0x3f5d_7132, 0x3f4e_52a2, 0x3ebc_1f10].map(f32::from_bits);
    assert_eq!(u.to_vec::<f32>().unwrap(), want);
    let u = random::uniform(&key(), &[4], DType::F16, -2.0, 3.0).unwrap();
    let bits: Vec<u16> = u
        .to_vec::<half::f16>()
        .unwrap()
        .iter()
        .map(|h| h.to_bits())
        .collect();
    assert_eq!(bits, [48126, 15563, 14676, 14796]);
}

#[test]
fn randint_is_jax_randint() {
    let r = random::randint(&key(), &[4], -(1 << 40), 1 << 50, DType::I64).unwrap();
    assert_eq!(
        r.to_vec::<i64>().unwrap(),
        [
            643134461565912,
            721885396672940,
            652112582075466,
            391615799904012
        ]
    );
    let r = random::randint(&key(), &[6], 0, 256, DType::U8).unwrap();
    assert_eq!(r.to_vec::<u8>().unwrap(), [53, 33, 93, 32, 28, 230]);
    let r = random::randint(&key(), &[6], -7, 1000, DType::I32).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), [234, 929, 421, 743, 255, 425]);
    // maxval <= minval gives minval, as JAX's.
    let r = random::randint(&key(), &[3], 5, 2, DType::I16).unwrap();
    assert_eq!(r.to_vec::<i16>().unwrap(), [5, 5, 5]);
    let e = random::randint(&key(), &[3], 0, 2, DType::F32)
        .unwrap_err()
        .to_string();
    assert!(e.contains("random.randint") && e.contains("integer"), "{e}");
}

#[test]
fn normal_is_jax_normal_within_a_few_ulps() {
    let n = random::normal(&key(), &[4], DType::F32).unwrap();
    let want = [
        1.1031016111373901,
        0.8630622625350952,
        -0.3386823832988739,
        1.0272457599639893,
    ];
    for (g, w) in f64s(&n).iter().zip(want) {
        assert!((g - w).abs() <= 2.5e-7 * w.abs().max(1.0), "{g} vs {w}");
    }
    let n = random::normal(&key(), &[4], DType::F64).unwrap();
    let want = [
        -0.5401982439481372,
        0.4395758528880331,
        -0.019781017157027507,
        0.9066547397338595,
    ];
    for (g, w) in f64s(&n).iter().zip(want) {
        assert!((g - w).abs() <= 1e-14 * w.abs().max(1.0), "{g} vs {w}");
    }
}

#[test]
fn distributions_have_their_moments_and_ranges() {
    let n = 200_000;
    let u = f64s(&random::uniform(&key(), &[n], DType::F32, -2.0, 6.0).unwrap());
    assert!(u.iter().all(|&x| (-2.0..6.0).contains(&x)));
    let mean = u.iter().sum::<f64>() / n as f64;
    assert!((mean - 2.0).abs() < 0.03, "uniform mean {mean}");
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let z = f64s(&random::normal(&key(), &[n], dtype).unwrap());
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{dtype}: {mean} {var}"
        );
        assert!(z.iter().all(|x| x.is_finite()), "{dtype}");
    }
    let r = random::randint(&key(), &[n], -3, 4, DType::I8).unwrap();
    let r = r.to_vec::<i8>().unwrap();
    for v in -3..4 {
        let c = r.iter().filter(|&&x| x == v).count() as f64 / n as f64;
        assert!((c - 1.0 / 7.0).abs() < 0.01, "{v}: {c}");
    }
}

/// Every way of placing the same draw: each host backend and memory kind, and shardings
/// that split rows, columns, both, unevenly, or replicate.
fn placements() -> Vec<(String, Sharding)> {
    let mut out = vec![("cpu".to_string(), Sharding::single(&cpu()))];
    let tpus = devices_of("tpu");
    for kind in [MemoryKind::Device, MemoryKind::PinnedHost] {
        out.push((
            format!("tpu {kind:?}"),
            Sharding::SingleDevice(tpus[0].clone(), kind),
        ));
    }
    if tpus.len() >= 4 {
        let four = tpus[..4].to_vec();
        let mesh = Mesh::new(four.clone(), &[2, 2], &["a", "b"]).unwrap();
        out.push((
            "rows".into(),
            Sharding::Named(mesh.clone(), PartitionSpec::new(&[Some("a")])),
        ));
        out.push((
            "columns".into(),
            Sharding::Named(mesh.clone(), PartitionSpec::new(&[None, Some("b")])),
        ));
        out.push((
            "both".into(),
            Sharding::Named(mesh, PartitionSpec::new(&[Some("b"), Some("a")])),
        ));
        out.push((
            "uneven".into(),
            Sharding::split(tpus[..3].to_vec(), 1).unwrap(),
        ));
        out.push(("replicated".into(), Sharding::Replicated(four)));
    }
    out
}

#[test]
fn same_bits_on_every_host_backend_and_sharding() {
    let shape = [7, 5];
    let reference = Sampler::sharded(&key(), &Sharding::single(&cpu()));
    let draws = |s: &Sampler| -> Vec<Array> {
        vec![
            s.bits(&shape, DType::U32).unwrap(),
            s.bits(&shape, DType::U64).unwrap(),
            s.uniform(&shape, DType::F32, -1.0, 3.0).unwrap(),
            s.uniform(&shape, DType::BF16, 0.0, 1.0).unwrap(),
            s.normal(&shape, DType::F32).unwrap(),
            s.normal(&shape, DType::F64).unwrap(),
            s.randint(&shape, -50, 50, DType::I32).unwrap(),
            s.randint(&shape, 0, 1 << 40, DType::U64).unwrap(),
        ]
    };
    let want: Vec<Vec<dlarray::Scalar>> = draws(&reference).iter().map(to_scalars).collect();
    for (name, sharding) in placements() {
        let got = draws(&Sampler::sharded(&key(), &sharding));
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.sharding(),
                &sharding,
                "{name}: draw {k} keeps the sharding"
            );
            assert_eq!(&to_scalars(g), w, "{name}: draw {k}");
        }
    }
    // A sub-block is the same as the block of the whole: no value depends on the shape cut.
    let whole = reference.bits(&[4, 6], DType::U32).unwrap();
    let flat = reference.bits(&[24], DType::U32).unwrap();
    assert_eq!(
        whole.to_vec::<u32>().unwrap(),
        flat.to_vec::<u32>().unwrap()
    );
}

#[test]
fn empty_and_huge_shapes() {
    let e = random::uniform(&key(), &[0, 3], DType::F32, 0.0, 1.0).unwrap();
    assert_eq!(e.shape(), &[0, 3]);
    match random::bits(&key(), &[1 << 62, 1 << 62], DType::U32) {
        Err(
            Error::InvalidArgument(_) | Error::OutOfMemory { .. } | Error::ShapeMismatch { .. },
        ) => {}
        Err(e) => panic!("unexpected error {e:?}"),
        Ok(_) => panic!("a 2^124-element array"),
    }
}
