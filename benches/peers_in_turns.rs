//! dlarray, ndarray and candle taking turns in one process: the ratios of
//! `docs/benchmarks.md`'s "in turns" table.
//!
//! Why beside criterion (`cpu_peers`): criterion times each library for a second or two,
//! one after another, and on a shared 2-vCPU guest the machine of one second is not the
//! machine of the next. The same binary's 1M-element float32 add took 147 us in one
//! criterion run and 78 us in the next, while candle's stayed at 88 us, so the ratio swung
//! from 0.6x to 1.1x. Here each round runs one batch of every library, so a slow stretch
//! slows all of them, and the median over rounds is compared.
//!
//! Each batch lasts ~2 ms (at least one call) and follows a 20 ms pause and an untimed batch
//! of its own: the pause lets the previous library's helper threads stop polling (dlarray's
//! spin a while after a job, and a polling sibling slows the caller's work by ~12 % here),
//! and the untimed batch brings its own data back into the caches, as back-to-back calls
//! would have it.
//!
//! `cargo bench --bench peers_in_turns -- --json FILE [--rounds N] [--sizes 1K,4K]`: one
//! JSON object of median seconds per call, keyed `group/peer/size` (`scripts/benchmarks.sh`
//! runs three processes). `--sizes 3K,32K,2M` times the add and sum at those element counts
//! (a `K` is 1024, an `M` 1024^2) instead of `common::SIZES`, and skips matmul and the
//! 8-element add: a quick look at one band, or a denser curve than the tables'.

mod common;

use candle_core::{Device as CDevice, Tensor};
use common::{SIZES, data};
use dlarray::{Array, Axes};
use ndarray::Array1;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A library's work in a round: its name and one call.
type Turn<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// Seconds per call of `reps` calls.
fn batch(f: &mut dyn FnMut(), reps: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() / reps as f64
}

/// Median seconds per call of each turn, over `rounds` rounds in which every turn runs one
/// timed batch (after a pause and an untimed batch).
fn in_turns(turns: &mut [Turn<'_>], rounds: usize) -> Vec<f64> {
    // Calls per batch: ~2 ms of the first library's calls, the same count for all.
    let first = &mut turns[0].1;
    first();
    let once = batch(first.as_mut(), 1).max(1e-9);
    let reps = ((2e-3 / once) as usize).clamp(1, 100_000);
    let mut times = vec![Vec::with_capacity(rounds); turns.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in turns.iter_mut().enumerate() {
            std::thread::sleep(Duration::from_millis(20));
            batch(f.as_mut(), reps);
            times[i].push(batch(f.as_mut(), reps));
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

fn record(out: &mut BTreeMap<String, f64>, group: &str, size: &str, turns: &mut [Turn<'_>]) {
    let rounds = rounds();
    let medians = in_turns(turns, rounds);
    for ((peer, _), s) in turns.iter().zip(medians) {
        out.insert(format!("{group}/{peer}/{size}"), s);
    }
}

fn rounds() -> usize {
    arg("--rounds").and_then(|s| s.parse().ok()).unwrap_or(15)
}

/// An element count as `--sizes` takes it: digits, then `K` (x 1024) or `M` (x 1024^2) or
/// nothing; at least one element.
fn parse_size(label: &str) -> Option<usize> {
    let (digits, unit) = match label.as_bytes().last()? {
        b'K' => (&label[..label.len() - 1], 1 << 10),
        b'M' => (&label[..label.len() - 1], 1 << 20),
        _ => (label, 1),
    };
    digits
        .parse::<usize>()
        .ok()?
        .checked_mul(unit)
        .filter(|&n| n > 0)
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).cloned()
}

fn add_and_sum(out: &mut BTreeMap<String, f64>, sizes: &[(String, usize)]) {
    for (label, n) in sizes {
        let (label, n) = (label.as_str(), *n);
        let x = data(n);
        let (da, db) = (
            Array::from_vec(x.clone(), &[n]).unwrap(),
            Array::from_vec(x.clone(), &[n]).unwrap(),
        );
        let (pa, pb) = (
            Array::from_slice(&x, &[n]).unwrap(),
            Array::from_slice(&x, &[n]).unwrap(),
        );
        let (na, nb) = (Array1::from(x.clone()), Array1::from(x.clone()));
        let (ca, cb) = (
            Tensor::from_vec(x.clone(), n, &CDevice::Cpu).unwrap(),
            Tensor::from_vec(x.clone(), n, &CDevice::Cpu).unwrap(),
        );
        let mut dst = vec![0f32; n];
        let mut add: Vec<Turn<'_>> = vec![
            (
                "dlarray",
                Box::new(|| drop(black_box((&da + &db).unwrap()))),
            ),
            (
                "dlarray_own_memory",
                Box::new(|| drop(black_box((&pa + &pb).unwrap()))),
            ),
            ("ndarray", Box::new(|| drop(black_box(&na + &nb)))),
            ("candle", Box::new(|| drop(black_box((&ca + &cb).unwrap())))),
            ("memcpy", Box::new(|| dst.copy_from_slice(black_box(&x)))),
        ];
        record(out, "add_f32", label, &mut add);
        drop(add);
        let mut sum: Vec<Turn<'_>> = vec![
            (
                "dlarray",
                Box::new(|| drop(black_box(da.sum(Axes::All).unwrap()))),
            ),
            (
                "dlarray_own_memory",
                Box::new(|| drop(black_box(pa.sum(Axes::All).unwrap()))),
            ),
            (
                "ndarray",
                Box::new(|| {
                    black_box(na.sum());
                }),
            ),
            (
                "candle",
                Box::new(|| drop(black_box(ca.sum_all().unwrap()))),
            ),
        ];
        record(out, "sum_f32", label, &mut sum);
        eprintln!("add and sum f32, {label}: done");
    }
}

fn matmul_and_tiny(out: &mut BTreeMap<String, f64>) {
    const N: usize = 1024;
    let x: Vec<f32> = (0..N * N).map(|i| (i % 17) as f32 * 0.1).collect();
    let da = Array::from_vec(x.clone(), &[N, N]).unwrap();
    let ct = Tensor::from_vec(x.clone(), (N, N), &CDevice::Cpu).unwrap();
    let na = ndarray::Array2::from_shape_vec((N, N), x).unwrap();
    let mut mm: Vec<Turn<'_>> = vec![
        (
            "dlarray",
            Box::new(|| drop(black_box(da.matmul(&da).unwrap()))),
        ),
        (
            "candle",
            Box::new(|| drop(black_box(ct.matmul(&ct).unwrap()))),
        ),
        ("ndarray", Box::new(|| drop(black_box(na.dot(&na))))),
    ];
    record(out, "matmul_f32_1024", "1024", &mut mm);
    let e = data(8);
    let de = Array::from_vec(e.clone(), &[8]).unwrap();
    let ce = Tensor::from_vec(e.clone(), 8, &CDevice::Cpu).unwrap();
    let ne = Array1::from(e);
    let mut tiny: Vec<Turn<'_>> = vec![
        (
            "dlarray",
            Box::new(|| drop(black_box((&de + &de).unwrap()))),
        ),
        ("candle", Box::new(|| drop(black_box((&ce + &ce).unwrap())))),
        ("ndarray", Box::new(|| drop(black_box(&ne + &ne)))),
    ];
    record(out, "add_f32_8_overhead", "8", &mut tiny);
    eprintln!("matmul f32 1024 and the 8-element add: done");
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or other flags are not ours to refuse.
    let mut out = BTreeMap::new();
    let only = arg("--sizes");
    let sizes: Vec<(String, usize)> = match &only {
        None => SIZES.iter().map(|&(l, n)| (l.to_string(), n)).collect(),
        Some(list) => list
            .split(',')
            .map(|l| {
                let l = l.trim();
                parse_size(l)
                    .map(|n| (l.to_string(), n))
                    .unwrap_or_else(|| {
                        eprintln!("bad size `{l}`: an element count such as 3000, 32K or 2M");
                        std::process::exit(2);
                    })
            })
            .collect(),
    };
    add_and_sum(&mut out, &sizes);
    if only.is_none() {
        matmul_and_tiny(&mut out);
    }
    let json = serde_json::to_string_pretty(&out).expect("a map of numbers serialises");
    match arg("--json") {
        Some(path) => std::fs::write(&path, json).unwrap_or_else(|e| panic!("{path}: {e}")),
        None => println!("{json}"),
    }
}
