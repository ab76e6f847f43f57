//! Why the first large op after idle can run on one core: times a 1024x1024 f32 matmul right
//! after the process slept for a while, with its CPU time, beside how long a parked thread
//! takes to start running after the same sleep (no library involved).
//!
//! `cargo run --release --example idle_matmul`
use dlarray::{Array, DType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// CPU time of the whole process (all threads), in seconds.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A thread parked on a condition variable; `wake` returns how long it took to run.
struct Parked {
    state: Arc<(Mutex<u64>, Condvar, AtomicU64)>,
    epoch: Instant,
}

impl Parked {
    fn new() -> Parked {
        let state = Arc::new((Mutex::new(0u64), Condvar::new(), AtomicU64::new(0)));
        let epoch = Instant::now();
        let s = state.clone();
        std::thread::spawn(move || {
            let mut seen = 0;
            loop {
                let mut g = s.0.lock().unwrap();
                while *g == seen {
                    g = s.1.wait(g).unwrap();
                }
                seen = *g;
                drop(g);
                s.2.store(epoch.elapsed().as_nanos() as u64, Ordering::Release);
            }
        });
        Parked { state, epoch }
    }
    fn wake(&self) -> Duration {
        self.state.2.store(0, Ordering::Release);
        let t0 = self.epoch.elapsed().as_nanos() as u64;
        *self.state.0.lock().unwrap() += 1;
        self.state.1.notify_one();
        let ran = loop {
            let v = self.state.2.load(Ordering::Acquire);
            if v != 0 {
                break v;
            }
            std::hint::spin_loop();
        };
        Duration::from_nanos(ran - t0)
    }
}

fn main() -> dlarray::Result<()> {
    let a = Array::ones(&[1024, 1024], DType::F32)?;
    let parked = Parked::new();
    std::thread::sleep(Duration::from_millis(50));
    a.matmul(&a)?; // warm: pages, pool, code
    println!("idle_ms  matmul_ms  cpu/wall  thread_wake_us");
    for idle in [0u64, 1, 5, 20, 100, 500] {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(idle));
            let (t, c) = (Instant::now(), cpu_time());
            let m = a.matmul(&a)?;
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_time() - c);
            drop(m);
            std::thread::sleep(Duration::from_millis(idle));
            let wake = parked.wake();
            println!(
                "{idle:7}  {:9.2}  {:8.2}  {:14.1}",
                wall * 1e3,
                cpu / wall,
                wake.as_secs_f64() * 1e6
            );
        }
    }
    Ok(())
}
