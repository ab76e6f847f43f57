//! One measured cell, and the two ways out: a table on stdout and JSON records.

use super::machine::Machine;
use super::ops::Op;
use dlarray::{DType, Device, Error, Result};
use std::fmt::Write as _;
use std::path::Path;

pub struct Record {
    pub backend: String,
    pub device: String,
    pub platform_version: String,
    pub op: Op,
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// Elements of the operand (the plot's x axis).
    pub elements: usize,
    pub samples: usize,
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// GB/s, or GFLOP/s for matmul, at the median.
    pub throughput: f64,
    /// Whether a DLPack export was the host-copy fallback.
    pub copied: bool,
}

impl Record {
    pub fn new(
        d: &Device,
        op: Op,
        dtype: DType,
        shape: &[usize],
        times: &[f64],
        copied: bool,
    ) -> Record {
        let mut t = times.to_vec();
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        Record {
            backend: d.backend_name().to_string(),
            device: d.name().to_string(),
            platform_version: d.platform_version().to_string(),
            op,
            dtype,
            shape: shape.to_vec(),
            elements: shape.iter().product(),
            samples: t.len(),
            median_s: median,
            min_s: t[0],
            max_s: t[t.len() - 1],
            throughput: op.work(shape, dtype) / median.max(1e-12) / 1e9,
            copied,
        }
    }

    pub fn unit(&self) -> &'static str {
        if self.op.counts_flops() {
            "GFLOP/s"
        } else {
            "GB/s"
        }
    }
}

/// `1.23 ms`: three significant digits in the unit that suits.
fn duration(s: f64) -> String {
    let (v, u) = match s {
        s if s < 1e-6 => (s * 1e9, "ns"),
        s if s < 1e-3 => (s * 1e6, "us"),
        s if s < 1.0 => (s * 1e3, "ms"),
        s => (s, "s"),
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {u}")
}

pub fn print_table(records: &[Record], memcpy: f64) {
    println!(
        "bytes counted per element: the tensor once for h2d, d2h, d2d and dlpack_*; 3x for \
         add and mul (2 read, 1 written); 2x for exp; 1x for sum and max; source + \
         destination for cast (in-place DLPack exchanges move none: theirs is the tensor's size \
         over the time). matmul: 2n^3 FLOP. Host memcpy: {:.1} GB/s (read + written).",
        memcpy / 1e9
    );
    let header = [
        "device",
        "op",
        "dtype",
        "shape",
        "median",
        "min - max",
        "throughput",
    ];
    let rows: Vec<[String; 7]> = records
        .iter()
        .map(|r| {
            let note = if r.copied { " (host copy)" } else { "" };
            [
                r.device.clone(),
                r.op.name().to_string(),
                r.dtype.name().to_string(),
                format!("{:?}", r.shape),
                duration(r.median_s),
                format!("{} - {}", duration(r.min_s), duration(r.max_s)),
                format!("{:.2} {}{note}", r.throughput, r.unit()),
            ]
        })
        .collect();
    let mut width = header.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: [&str; 7]| {
        let mut s = String::new();
        for (k, (c, w)) in cells.iter().zip(width).enumerate() {
            // Numbers right-aligned, names left.
            if k >= 4 {
                let _ = write!(s, "{c:>w$}  ");
            } else {
                let _ = write!(s, "{c:<w$}  ");
            }
        }
        println!("{}", s.trim_end());
    };
    line(header);
    for r in &rows {
        line(r.each_ref().map(String::as_str));
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A finite number as JSON (non-finite ones, which no measurement gives, become 0).
fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:e}")
    } else {
        "0".into()
    }
}

/// Writes the records as a JSON array, one object per cell.
pub fn write_json(path: &Path, records: &[Record], m: &Machine, memcpy: f64) -> Result<()> {
    let mut s = String::from("[\n");
    for (k, r) in records.iter().enumerate() {
        let shape: Vec<String> = r.shape.iter().map(usize::to_string).collect();
        let _ = writeln!(
            s,
            "  {{\"machine\": {}, \"os\": {}, \"date\": {}, \"commit\": {}, \"backend\": {}, \
             \"device\": {}, \"platform_version\": {}, \"op\": {}, \"dtype\": {}, \
             \"shape\": [{}], \"samples\": {}, \"median_s\": {}, \"min_s\": {}, \
             \"max_s\": {}, \"throughput\": {}, \"throughput_unit\": {}, \
             \"host_copy\": {}, \"memcpy_gbps\": {}}}{}",
            json_str(&m.name),
            json_str(&m.os),
            json_str(&m.date),
            json_str(&m.commit),
            json_str(&r.backend),
            json_str(&r.device),
            json_str(&r.platform_version),
            json_str(r.op.name()),
            json_str(r.dtype.name()),
            shape.join(", "),
            r.samples,
            json_num(r.median_s),
            json_num(r.min_s),
            json_num(r.max_s),
            json_num(r.throughput),
            json_str(r.unit()),
            r.copied,
            json_num(memcpy / 1e9),
            if k + 1 < records.len() { "," } else { "" },
        );
    }
    s.push_str("]\n");
    std::fs::write(path, s)
        .map_err(|e| Error::InvalidArgument(format!("--json {}: {e}", path.display())))
}
