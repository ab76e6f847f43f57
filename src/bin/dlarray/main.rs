//! The `dlarray` command: `devices`, `bench`, and (with no arguments) a tour of the runtime.

mod bench;

use clap::{Parser, Subcommand};
use dlarray::{Array, Axes, DType, Device, Mesh, PartitionSpec, Result, Sharding};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "dlarray",
    version,
    about = "Arrays on any device, with DLPack interchange"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// List devices (and backends that are unavailable, with the reason).
    Devices,
    /// Benchmark ops x sizes x dtypes on every device (or those chosen): a table on stdout,
    /// progress on stderr, optionally JSON records and an SVG plot.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Devices) => devices(),
        Some(Command::Bench(args)) => bench::run(args),
        None => tour(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn kinds(d: &Device) -> String {
    d.memory_kinds()
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// The DLPack device of each memory kind, or the exact BufferError.
fn dlpack_column(d: &Device) -> String {
    let one = |k: dlarray::MemoryKind| match dlarray::dlpack::dlpack_device_of(d, k) {
        Ok(dl) => format!("{dl:?}"),
        Err(e) => format!("BufferError: {e}"),
    };
    match d.memory_kinds() {
        [k] => one(*k),
        ks => ks
            .iter()
            .map(|&k| format!("{k}: {}", one(k)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// What the backend declares about DLPack per memory kind (`undeclared`: JAX's platform
/// rules decide), with its stream convention where it has streams.
fn declared_column(d: &Device) -> String {
    let one = |k: dlarray::MemoryKind| match d.dlpack_capability(k) {
        None => "undeclared".to_string(),
        Some(c) => {
            let t = c
                .device_type
                .map_or("none".to_string(), |t| format!("{t:?}"));
            match c.streams {
                dlarray::dlpack::StreamConvention::None => t,
                s => format!("{t} ({s:?} streams)"),
            }
        }
    };
    let parts: Vec<String> = d.memory_kinds().iter().map(|&k| one(k)).collect();
    if parts.iter().all(|p| p == "undeclared") {
        return "undeclared".into();
    }
    match d.memory_kinds() {
        [_] => parts.join(""),
        ks => ks
            .iter()
            .zip(&parts)
            .map(|(k, p)| format!("{k}: {p}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

fn devices() -> Result<()> {
    let devices = dlarray::devices()?;
    let rows: Vec<[String; 7]> = devices
        .iter()
        .map(|d| {
            [
                d.name().to_string(),
                d.backend_name().to_string(),
                d.platform().to_string(),
                d.platform_version().to_string(),
                kinds(d),
                declared_column(d),
                dlpack_column(d),
            ]
        })
        .collect();
    let header = [
        "device",
        "backend",
        "platform",
        "platform_version",
        "memory_kinds",
        "dlpack_declared",
        "dlpack",
    ];
    let mut width = header.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: &[&str]| {
        let s: Vec<String> = cells
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", s.join("  ").trim_end());
    };
    line(&header);
    for r in &rows {
        line(&r.each_ref().map(String::as_str));
    }
    // Below the table: a sentence each, too long for a column.
    for d in &devices {
        if let Some(engine) = d.matmul_engine() {
            println!("matmul on {}: {engine}", d.name());
        }
    }
    for b in dlarray::backends() {
        if let Some(reason) = b.reason {
            println!("(backend {} unavailable: {reason})", b.name);
        }
    }
    Ok(())
}

fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

fn check(what: &str, got: &[f64], want: &[f64]) -> Result<()> {
    let ok = got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| (g - w).abs() <= 1e-3 * w.abs().max(1.0));
    println!("  check {what:<28} {}", if ok { "ok" } else { "MISMATCH" });
    if ok {
        Ok(())
    } else {
        Err(dlarray::Error::InvalidArgument(format!(
            "{what}: device result differs from the host reference"
        )))
    }
}

/// The default job: what is here, and a sharded computation checked against the host.
fn tour() -> Result<()> {
    println!("== devices");
    devices()?;
    let all = dlarray::devices()?;
    let host: Vec<Device> = all
        .iter()
        .filter(|d| matches!(d.platform(), "cpu" | "tpu"))
        .cloned()
        .collect();
    // Without a host backend (`DLARRAY_BACKENDS=wgpu`), the rows go over what there is.
    let host = if host.is_empty() { all.clone() } else { host };
    let (rows, cols) = (1000usize, 512usize);
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| ((i % 97) as f32) * 0.25 - 7.0)
        .collect();
    let x = Array::from_vec(data.clone(), &[rows, cols])?;
    let mesh = Mesh::linear(host.clone(), "d")?;
    let sharding = Sharding::Named(mesh, PartitionSpec::new(&[Some("d")]));
    println!(
        "\n== a {rows}x{cols} float32 array sharded by rows over {} devices",
        host.len()
    );
    let (xs, t) = time(|| x.device_put(&sharding))?;
    println!("  device_put {:>10.3?}", t);
    for s in xs.addressable_shards() {
        println!("  {:<8} rows {:?}", s.device().name(), s.index()[0]);
    }
    let (y, t) = time(|| (&xs * &xs)?.add(&xs))?;
    println!("  x*x + x     {t:>10.3?}  sharding {}", y.sharding());
    let want: Vec<f64> = data.iter().map(|&v| (v * v + v) as f64).collect();
    check("x*x + x (elementwise)", &y.to_f64_vec()?, &want)?;
    let (s, t) = time(|| y.sum(1))?;
    println!("  sum(axis=1) {t:>10.3?}  sharding {}", s.sharding());
    let want_rows: Vec<f64> = want.chunks(cols).map(|r| r.iter().sum()).collect();
    check("sum over axis 1", &s.to_f64_vec()?, &want_rows)?;
    let (m, t) = time(|| xs.max(Axes::All))?;
    println!("  max (all)   {t:>10.3?}  = {}", m.item::<f32>()?);
    check(
        "max over all axes",
        &m.to_f64_vec()?,
        &[data.iter().cloned().fold(f32::MIN, f32::max) as f64],
    )?;
    let w = Array::from_vec(
        (0..cols * 16).map(|i| (i % 7) as f32 - 3.0).collect(),
        &[cols, 16],
    )?;
    let (p, t) = time(|| xs.matmul(&w))?;
    println!("  matmul {rows}x{cols} @ {cols}x16 {t:>10.3?}");
    let wd: Vec<f32> = w.to_vec()?;
    let want_mm: Vec<f64> = (0..rows)
        .flat_map(|i| {
            let (data, wd) = (&data, &wd);
            (0..16).map(move |j| {
                (0..cols)
                    .map(|k| data[i * cols + k] as f64 * wd[k * 16 + j] as f64)
                    .sum::<f64>()
            })
        })
        .collect();
    check("matmul", &p.to_f64_vec()?, &want_mm)?;
    // A device without float16 (a wgpu adapter lacking SHADER_F16, such as GL's llvmpipe)
    // says so with a typed error: the job names it and goes on.
    match time(|| xs.astype(DType::F16)?.astype(DType::F32)) {
        Ok((c, t)) => {
            println!("  astype f16 and back {t:>10.3?}");
            check(
                "astype round trip",
                &c.to_f64_vec()?,
                &data.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            )?;
        }
        Err(e @ dlarray::Error::Unsupported { .. }) => println!("  astype f16 skipped: {e}"),
        Err(e) => return Err(e),
    }
    if let Some(tpu) = host.iter().find(|d| d.platform() == "tpu") {
        let a = Array::arange(0.0, 8.0, 1.0, DType::F32)?.to_device(tpu)?;
        let pinned = a.with_memory_kind(dlarray::MemoryKind::PinnedHost)?;
        println!(
            "\n== memory kinds on {tpu}: {} -> {} (explicit copy)",
            a.memory_kind(),
            pinned.memory_kind()
        );
        check(
            "pinned_host copy",
            &pinned.to_f64_vec()?,
            &(0..8).map(f64::from).collect::<Vec<_>>(),
        )?;
    }
    for gpu in all.iter().filter(|d| d.platform() == "wgpu") {
        println!("\n== the same rows on {gpu} ({})", gpu.platform_version());
        let (g, t) = time(|| x.to_device(gpu))?;
        println!("  upload      {t:>10.3?}");
        let (y, t) = time(|| {
            let y = (&g * &g)?.add(&g)?;
            y.block_until_ready()?;
            Ok(y)
        })?;
        println!("  x*x + x     {t:>10.3?}");
        check("x*x + x on wgpu", &y.to_f64_vec()?, &want)?;
        check(
            "sum over axis 1 on wgpu",
            &y.sum(1)?.to_f64_vec()?,
            &want_rows,
        )?;
        let (p, t) = time(|| g.matmul(&w.to_device(gpu)?))?;
        println!("  matmul      {t:>10.3?}");
        check("matmul on wgpu", &p.to_f64_vec()?, &want_mm)?;
        // No raw address on wgpu: JAX's BufferError, and the export falls back to host.
        let reason = y
            .dlpack_device()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        println!("  dlpack_device: BufferError: {reason}");
        let (t, dt) = time(|| {
            y.to_dlpack_with(dlarray::ExportOptions {
                max_version: Some((1, 0)),
                ..Default::default()
            })
        })?;
        println!(
            "  to_dlpack {dt:>10.3?}: host copy, IS_COPIED={}, fallback reason: {}",
            t.is_copied(),
            t.fallback_reason()
                .map_or("none".to_string(), |e| e.to_string())
        );
        check(
            "DLPack host copy",
            &Array::from_dlpack(t)?.to_f64_vec()?,
            &want,
        )?;
    }
    println!("\nall checks passed");
    Ok(())
}
