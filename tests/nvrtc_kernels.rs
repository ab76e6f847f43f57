//! Every kernel the GPU runtime can generate compiles with NVRTC (a compiler library that
//! needs no GPU). Required when `DLARRAY_REQUIRE` names `nvrtc` (CI does, with the NVRTC of
//! the test venv's `nvidia` wheels); otherwise a missing NVRTC is reported and skipped.
#![cfg(feature = "nvrtc")]

use dlarray::backends::gpu::codegen::{all_specs, generate};
use dlarray::backends::gpu::nvrtc::Nvrtc;

fn required() -> bool {
    std::env::var("DLARRAY_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"))
}

fn nvrtc() -> Option<Nvrtc> {
    match Nvrtc::load() {
        Ok(n) => Some(n),
        Err(e) if required() => panic!("DLARRAY_REQUIRE names nvrtc, but {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The oldest architecture NVRTC 13 targets, and the H200's.
fn archs(n: &Nvrtc) -> Vec<&'static str> {
    if n.version.0 >= 13 {
        vec!["--gpu-architecture=compute_75", "--gpu-architecture=sm_90"]
    } else {
        vec!["--gpu-architecture=compute_70", "--gpu-architecture=sm_90"]
    }
}

#[test]
fn every_generated_kernel_compiles_with_nvrtc() {
    let Some(n) = nvrtc() else { return };
    eprintln!("NVRTC {}.{} from {}", n.version.0, n.version.1, n.path);
    let specs = all_specs(3);
    assert!(specs.len() > 1000, "{} specs", specs.len());
    let sources: Vec<_> = specs.iter().map(|s| generate(*s).unwrap()).collect();
    // One program per batch (the prelude is guarded), every entry point checked in the PTX.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let batches: Vec<_> = sources.chunks(80).collect();
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for part in batches.chunks(batches.len().div_ceil(threads)) {
            let (n, failures) = (&n, &failures);
            let arch = archs(n)[0];
            scope.spawn(move || {
                for batch in part {
                    let src: String = batch.iter().map(|k| k.source.as_str()).collect();
                    match n.compile(&src, "batch.cu", &[arch]) {
                        Ok(ptx) => {
                            let ptx = String::from_utf8_lossy(&ptx);
                            for k in batch.iter() {
                                if !ptx.contains(&format!(".entry {}(", k.entry)) {
                                    failures
                                        .lock()
                                        .unwrap()
                                        .push(format!("{}: no entry in PTX", k.entry));
                                }
                            }
                        }
                        Err(e) => failures.lock().unwrap().push(format!(
                            "batch from {}: {}",
                            batch[0].entry,
                            e.chars().take(4000).collect::<String>()
                        )),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{} kernels compiled", sources.len());
}

#[test]
fn kernels_compile_alone_and_for_the_h200() {
    let Some(n) = nvrtc() else { return };
    // Each kind of kernel as the runtime compiles it: one program per kernel.
    let specs = all_specs(2);
    let pick = |prefix: &str| {
        specs
            .iter()
            .find(|s| s.entry().starts_with(prefix))
            .copied()
            .unwrap()
    };
    for prefix in [
        "map_add_float16",
        "map_cast_complex128_int8",
        "fill_bfloat16",
        "reduce_sum_float16_float32_k0",
        "reduce_max_float64",
        "matmul_complex64_b2",
        "matmul_bool",
        "map_pow_int64",
    ] {
        let k = generate(pick(prefix)).unwrap();
        for arch in archs(&n) {
            n.compile(&k.source, &format!("{}.cu", k.entry), &[arch])
                .unwrap_or_else(|e| panic!("{} for {arch}: {e}", k.entry));
        }
    }
    // A compile error is an error with NVRTC's log, not a panic.
    let e = n
        .compile("extern \"C\" __global__ void broken( {", "broken.cu", &[])
        .unwrap_err();
    assert!(e.contains("nvrtcCompileProgram"), "{e}");
    assert!(n.compile("a\0b", "nul.cu", &[]).is_err());
}
