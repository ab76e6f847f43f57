//! The machine a benchmark ran on, and its measured host memcpy bandwidth (the limit the
//! memory-bound ops are drawn against).

use std::time::Instant;

pub struct Machine {
    /// CPU model and hardware threads, e.g. `AMD EPYC 9B14 (2 threads)`.
    pub name: String,
    pub os: String,
    /// The commit of the checkout the binary was built from (`unknown` outside one).
    pub commit: String,
    /// When the run started (UTC, RFC 3339).
    pub date: String,
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn commit() -> String {
    if let Ok(c) = std::env::var("DLARRAY_COMMIT") {
        return c;
    }
    std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short=12",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

impl Machine {
    pub fn here() -> Machine {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Machine {
            name: format!("{} ({threads} threads)", cpu_model()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            commit: commit(),
            date: now_utc(),
        }
    }
}

/// Host memcpy bandwidth in bytes per second, counting bytes read plus bytes written (as the
/// memory-bound ops count theirs): the best of 5 copies of 64 MiB between buffers already
/// touched, on one thread.
pub fn memcpy_bandwidth() -> f64 {
    const BYTES: usize = 64 << 20;
    let src = vec![1u8; BYTES];
    let mut dst = vec![0u8; BYTES];
    dst.copy_from_slice(&src);
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&dst);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    2.0 * BYTES as f64 / best.max(1e-9)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil(0), (1970, 1, 1));
        assert_eq!(super::civil(20_788), (2026, 12, 1));
        assert_eq!(super::civil(11_016), (2000, 2, 29));
    }
}
