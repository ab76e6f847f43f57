//! `dlarray bench`: argument errors name what is known, `--quick` runs on cpu, tpu and wgpu,
//! its JSON has every field of every record (numbers finite) and its SVG is well-formed.
//! No timing is asserted.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dlarray"))
        .arg("bench")
        .args(args)
        .output()
        .expect("run dlarray")
}

fn fails_with(args: &[&str], want: &[&str]) {
    let out = bench(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    for w in want {
        assert!(err.contains(w), "{args:?}: {err}");
    }
}

#[test]
fn unknown_names_are_errors_listing_the_known_ones() {
    fails_with(
        &["--backends", "cpu,gpu"],
        &["`gpu`", "the known backends are", "cpu", "tpu", "wgpu"],
    );
    fails_with(
        &["--ops", "add,conv"],
        &[
            "--ops",
            "`conv`",
            "the known ones are",
            "matmul",
            "dlpack_import",
        ],
    );
    fails_with(
        &["--dtypes", "float33"],
        &["--dtypes", "`float33`", "float32", "complex128"],
    );
    fails_with(&["--sizes", "1K,0,x"], &["--sizes", "`0`", "`x`"]);
    fails_with(&["--devices", "cpu:7"], &["--devices", "`cpu:7`", "cpu:0"]);
    fails_with(&["--samples", "0"], &["--samples must be at least 1"]);
    fails_with(&["--ops", ""], &["--ops is empty"]);
}

#[test]
fn an_unavailable_backend_is_an_error_not_an_empty_table() {
    // `fakecuda` is not registered in this process: no device of a known but absent backend.
    let out = bench(&["--backends", "cuda", "--quick"]);
    if dlarray::backends()
        .iter()
        .any(|b| b.name == "cuda" && b.reason.is_none())
    {
        return; // a GPU machine: cuda is there
    }
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("backend `cuda` is unavailable"), "{err}");
}

#[test]
fn quick_runs_everywhere_and_writes_json_and_svg() {
    let dir = std::env::temp_dir().join(format!("dlarray-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("b.json"), dir.join("b.svg"));
    let out = bench(&[
        "--quick",
        "--backends",
        "cpu,tpu,wgpu",
        "--dtypes",
        "f32,i32",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("bytes counted per element"), "{stdout}");
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let fields = [
        "machine",
        "os",
        "date",
        "commit",
        "backend",
        "device",
        "platform_version",
        "op",
        "dtype",
        "shape",
        "samples",
        "median_s",
        "min_s",
        "max_s",
        "throughput",
        "throughput_unit",
        "host_copy",
        "memcpy_gbps",
    ];
    for r in &records {
        for f in fields {
            assert!(r.get(f).is_some(), "{f} missing in {r}");
        }
        for f in ["median_s", "min_s", "max_s", "throughput", "memcpy_gbps"] {
            let v = r[f].as_f64().unwrap();
            assert!(v.is_finite() && v > 0.0, "{f} = {v} in {r}");
        }
        let (lo, mid, hi) = (
            r["min_s"].as_f64().unwrap(),
            r["median_s"].as_f64().unwrap(),
            r["max_s"].as_f64().unwrap(),
        );
        assert!(lo <= mid && mid <= hi, "{r}");
        assert_eq!(r["samples"], 5);
    }
    // Every op on every backend, both sizes (d2d only where a backend has two devices; exp
    // of int32 gives float32 and still runs).
    for backend in ["cpu", "tpu", "wgpu"] {
        for op in [
            "h2d",
            "d2h",
            "dlpack_export",
            "dlpack_import",
            "dlpack_copy",
            "add",
            "mul",
        ] {
            for dtype in ["float32", "int32"] {
                let n = records
                    .iter()
                    .filter(|r| r["backend"] == backend && r["op"] == op && r["dtype"] == dtype)
                    .count();
                assert_eq!(n, 2, "{backend} {op} {dtype}");
            }
        }
    }
    assert!(
        records
            .iter()
            .any(|r| r["backend"] == "tpu" && r["op"] == "d2d")
    );
    let matmul = records
        .iter()
        .find(|r| r["op"] == "matmul" && r["backend"] == "cpu")
        .unwrap();
    assert_eq!(matmul["shape"], serde_json::json!([64, 64]));
    assert_eq!(matmul["throughput_unit"], "GFLOP/s");
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    for label in [
        "add (GB/s)",
        "matmul (GFLOP/s)",
        "host memcpy",
        "wgpu:0 float32",
    ] {
        assert!(text.contains(label), "{label} not drawn");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With wgpu as the only backend, the main job and `bench --quick` run: the job's sharded
/// rows had no host device to go over ("mesh shape [0] needs 0 devices"), and every bench
/// cell made its operands in float64 on the default device, which wgpu cannot cast ("does
/// not support cast on float64"), so each was skipped.
#[test]
fn wgpu_as_the_only_backend_runs_the_job_and_the_bench() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dlarray"))
            .args(args)
            .env("DLARRAY_BACKENDS", "wgpu")
            .env("DLARRAY_REQUIRE", "wgpu")
            .output()
            .expect("run dlarray")
    };
    let job = run(&[]);
    let text = String::from_utf8_lossy(&job.stdout);
    assert!(
        job.status.success() && text.contains("all checks passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&job.stderr)
    );
    let out = run(&[
        "bench",
        "--quick",
        "--dtypes",
        "f32",
        "--ops",
        "add,sum,cast",
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    for op in ["add", "sum", "cast"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("wgpu:0") && l.contains(op)),
            "{op}: {stdout}"
        );
    }
}
