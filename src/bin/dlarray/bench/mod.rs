//! `dlarray bench`: ops x sizes x dtypes x devices, timed the way criterion and burn-bench
//! time (warm-up, batches long enough to time, a device synchronisation inside every sample,
//! the median with min and max), as a table, JSON records and an SVG plot.

mod machine;
mod ops;
mod plot;
mod record;

use dlarray::{DType, Device, Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use ops::{Cell, Op};
use record::Record;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these backends (comma separated, e.g. `cpu,wgpu`).
    #[arg(long)]
    backends: Option<String>,
    /// Only these devices (comma separated names, e.g. `tpu:0,tpu:1`). Default: the first
    /// device of each backend and runtime.
    #[arg(long)]
    devices: Option<String>,
    /// Ops (comma separated): h2d, d2h, d2d, dlpack_export, dlpack_import, dlpack_copy, add,
    /// mul, exp, sum, max, matmul, cast. Default: all.
    #[arg(long)]
    ops: Option<String>,
    /// Sizes in elements (comma separated; K = 1024, M = 1024^2). Matmul runs on squares of
    /// side floor(sqrt(size)). Default: 1K,64K,1M,16M.
    #[arg(long)]
    sizes: Option<String>,
    /// Dtypes (comma separated NumPy names or f32-style shorthands). Default: float32.
    #[arg(long)]
    dtypes: Option<String>,
    /// Timed samples per cell (the median, min and max are reported).
    #[arg(long)]
    samples: Option<usize>,
    /// A short preset: sizes 4K and 256K, 5 samples, shorter batches.
    #[arg(long)]
    quick: bool,
    /// Write one JSON record per cell to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Draw throughput against size, one panel per op, to FILE.svg.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// Comma-separated items, each parsed or reported with the whole list of known names.
fn parse_list<T>(
    flag: &str,
    s: &str,
    parse: impl Fn(&str) -> Option<T>,
    known: &[String],
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let mut unknown = Vec::new();
    for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        match parse(item) {
            Some(v) => out.push(v),
            None => unknown.push(format!("`{item}`")),
        }
    }
    if !unknown.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{flag}: unknown {}: the known ones are {}",
            unknown.join(", "),
            known.join(", ")
        )));
    }
    if out.is_empty() {
        return Err(Error::InvalidArgument(format!("{flag} is empty")));
    }
    Ok(out)
}

/// `1024`, `4K`, `16M`: elements.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, scale) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1usize << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&n| n > 0)
}

/// `16M` for 16 * 2^20: the size as the table and plot print it.
pub fn size_label(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}M", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}K", n >> 10),
        n => n.to_string(),
    }
}

/// What to run, resolved from the arguments: every name checked before any timing.
struct Plan {
    devices: Vec<Device>,
    ops: Vec<Op>,
    sizes: Vec<usize>,
    dtypes: Vec<DType>,
    samples: usize,
    /// Each sample runs the op often enough to last at least this long.
    batch: Duration,
}

fn plan(args: &Args) -> Result<Plan> {
    let all = dlarray::devices()?;
    let backends = dlarray::backends();
    let backend_names: Vec<String> = backends.iter().map(|b| b.name.clone()).collect();
    let wanted_backends = match &args.backends {
        Some(s) => {
            let names: Vec<String> = s.split(',').map(|n| n.trim().to_string()).collect();
            let known: Vec<&str> = backend_names.iter().map(String::as_str).collect();
            dlarray::backends::check_backend_names("--backends", &names, &known)?;
            Some(names)
        }
        None => None,
    };
    let device_names: Vec<String> = all.iter().map(|d| d.name().to_string()).collect();
    let mut devices: Vec<Device> = match &args.devices {
        Some(s) => parse_list(
            "--devices",
            s,
            |n| all.iter().find(|d| d.name() == n).cloned(),
            &device_names,
        )?,
        None => {
            // One device per backend and runtime: TPU devices are alike, wgpu's Vulkan and GL
            // adapters are not.
            let mut seen = Vec::new();
            all.iter()
                .filter(|d| {
                    let key = (
                        d.backend_name().to_string(),
                        d.platform_version().to_string(),
                    );
                    let new = !seen.contains(&key);
                    seen.push(key);
                    new
                })
                .cloned()
                .collect()
        }
    };
    if let Some(w) = &wanted_backends {
        devices.retain(|d| w.iter().any(|b| b == d.backend_name()));
        for b in w {
            if !devices.iter().any(|d| d.backend_name() == b) {
                let reason = backends
                    .iter()
                    .find(|s| &s.name == b)
                    .and_then(|s| s.reason.clone())
                    .unwrap_or_else(|| "none of its devices was chosen".into());
                return Err(Error::BackendUnavailable {
                    backend: b.clone(),
                    reason,
                });
            }
        }
    }
    if devices.is_empty() {
        return Err(Error::InvalidArgument("no device to benchmark".into()));
    }
    let op_names: Vec<String> = Op::ALL.iter().map(|o| o.name().to_string()).collect();
    let ops = match &args.ops {
        Some(s) => parse_list("--ops", s, Op::from_name, &op_names)?,
        None => Op::ALL.to_vec(),
    };
    let default_sizes = if args.quick {
        "4K,256K"
    } else {
        "1K,64K,1M,16M"
    };
    let sizes = parse_list(
        "--sizes",
        args.sizes.as_deref().unwrap_or(default_sizes),
        parse_size,
        &["positive element counts such as 4096, 64K, 16M".to_string()],
    )?;
    let dtype_names: Vec<String> = DType::ALL.iter().map(|d| d.name().to_string()).collect();
    let dtypes = parse_list(
        "--dtypes",
        args.dtypes.as_deref().unwrap_or("float32"),
        DType::from_name,
        &dtype_names,
    )?;
    let samples = args.samples.unwrap_or(if args.quick { 5 } else { 10 });
    if samples == 0 {
        return Err(Error::InvalidArgument(
            "--samples must be at least 1".into(),
        ));
    }
    let batch = Duration::from_millis(if args.quick { 1 } else { 5 });
    Ok(Plan {
        devices,
        ops,
        sizes,
        dtypes,
        samples,
        batch,
    })
}

/// Seconds per run: a warm-up run sizes the batch, then `samples` batches are timed, each
/// ending with the last output waited on and every device the cell uses synchronised.
///
/// Each output is dropped as the next one is made, inside the timing, as a loop in user code
/// (and criterion's `iter`) drops it: memory then recycles through the pools as it does in
/// steady use. Keeping a whole batch alive instead measured fresh pages from the kernel: a
/// d2h of 4 MiB read 2.5 GB/s (one page fault per 4 KiB) and an add of 1K took 1.8 us
/// against criterion's 150 ns. Asynchronous backends keep a dropped output's memory until
/// the work that writes it is done, so dropping early cannot cut the work short.
fn measure(cell: &Cell, samples: usize, batch: Duration) -> Result<Vec<f64>> {
    let once = || -> Result<Duration> {
        let input = cell.input()?;
        let t = Instant::now();
        let out = cell.run(input)?;
        out.wait()?;
        cell.synchronize()?;
        Ok(t.elapsed())
    };
    // The first run warms up (kernel compiles, pool fills); the second sizes the batch.
    once()?;
    let first = once()?;
    // Inputs are made outside the timing, but they take time too (a DLPack import's input
    // is an export, which on wgpu is a host copy): keep their making to ~20 ms a sample.
    let t = Instant::now();
    drop(cell.input()?);
    let prep = t.elapsed().as_secs_f64().max(1e-9);
    let reps = ((batch.as_secs_f64() / first.as_secs_f64().max(1e-9)).ceil() as usize)
        .min((0.02 / prep).ceil() as usize)
        .clamp(1, 100_000);
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let inputs = (0..reps)
            .map(|_| cell.input())
            .collect::<Result<Vec<_>>>()?;
        let t = Instant::now();
        let mut last = None;
        for input in inputs {
            // Assigning drops the previous output.
            last = Some(cell.run(input)?);
        }
        if let Some(out) = &last {
            out.wait()?;
        }
        cell.synchronize()?;
        times.push(t.elapsed().as_secs_f64() / reps as f64);
        drop(last);
    }
    Ok(times)
}

/// Whether an error means "this backend cannot run this op on this dtype" (the cell is
/// skipped and said so) rather than a failure of the benchmark.
fn unsupported(e: &Error) -> bool {
    matches!(e, Error::Unsupported { .. } | Error::DTypeMismatch { .. })
}

pub fn run(args: Args) -> Result<()> {
    let plan = plan(&args)?;
    let machine = machine::Machine::here();
    let memcpy = machine::memcpy_bandwidth();
    let total = plan.devices.len() * plan.ops.len() * plan.sizes.len() * plan.dtypes.len();
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    for device in &plan.devices {
        let peer = dlarray::devices()?
            .into_iter()
            .find(|d| d.backend_name() == device.backend_name() && d != device);
        for &op in &plan.ops {
            for &dtype in &plan.dtypes {
                for &size in &plan.sizes {
                    let shape = op.shape(size);
                    bar.set_message(format!("{device} {} {dtype} {shape:?}", op.name()));
                    if op == Op::D2d && peer.is_none() {
                        let why = format!("{device} d2d: the backend has one device");
                        if !skipped.contains(&why) {
                            skipped.push(why);
                        }
                        bar.inc(1);
                        continue;
                    }
                    let result = Cell::new(op, &shape, dtype, device, peer.clone())
                        .and_then(|cell| Ok((measure(&cell, plan.samples, plan.batch)?, cell)));
                    bar.inc(1);
                    let (times, cell) = match result {
                        Ok(v) => v,
                        Err(e) if unsupported(&e) => {
                            let why = format!("{device} {} {dtype}: {e}", op.name());
                            if !skipped.contains(&why) {
                                skipped.push(why);
                            }
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    records.push(Record::new(
                        device,
                        op,
                        dtype,
                        &shape,
                        &times,
                        cell.copied(),
                    ));
                }
            }
        }
    }
    bar.finish_and_clear();
    record::print_table(&records, memcpy);
    for s in &skipped {
        println!("skipped: {s}");
    }
    if let Some(path) = &args.json {
        record::write_json(path, &records, &machine, memcpy)?;
        eprintln!("wrote {} records to {}", records.len(), path.display());
    }
    if let Some(path) = &args.plot {
        plot::draw(path, &records, memcpy, &machine)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
