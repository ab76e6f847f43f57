//! Why the first large op after idle can run on one core: times a 1024x1024 f32 matmul right
//! after the process slept for a while, with its CPU time, beside how long a parked thread
//! takes to start running after the same sleep (no library involved), and then the same
//! question for a bare rayon pool: two 2 ms halves, when and where the second one starts.
//!
//! The same question for an op whose caller computes too (`par_for`: a sum of 16M f32), whose
//! helpers are woken on the other CPUs than the caller's.
//!
//! `cargo run --release --example idle_matmul` (`DLARRAY_PIN_THREADS=0` to compare unpinned
//! threads, the placement the kernel picks; the rayon table pins its own pool unless so).
use dlarray::{Array, DType};
use rayon::prelude::*;
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
    idle_sum()?;
    rayon_halves();
    Ok(())
}

/// A sum of 16M f32 (parallel chunks, the caller taking its share) after each idle period.
fn idle_sum() -> dlarray::Result<()> {
    let x = Array::ones(&[16 << 20], DType::F32)?;
    x.sum(dlarray::Axes::All)?; // warm
    println!("\nidle_ms  sum16M_ms  cpu/wall");
    for idle in [0u64, 20, 100, 500] {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(idle));
            let (t, c) = (Instant::now(), cpu_time());
            let s = x.sum(dlarray::Axes::All)?;
            let wall = t.elapsed().as_secs_f64();
            // The CPU time of a thread still running on another CPU (a helper polling for
            // the next job, `DLARRAY_SPIN_US`) is only counted at its next tick or switch:
            // read it once the helpers sleep. Their polling adds at most 0.1 ms.
            std::thread::sleep(Duration::from_millis(5));
            let cpu = cpu_time() - c;
            assert_eq!(s.item::<f32>()?, (16 << 20) as f32);
            println!("{idle:7}  {:9.2}  {:8.2}", wall * 1e3, cpu / wall);
        }
    }
    Ok(())
}

fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Two halves of 2 ms on a 2-thread rayon pool after each idle period: with the second
/// worker placed well, both start within ~0.1 ms and the pair takes ~2 ms.
fn rayon_halves() {
    let pin = std::env::var("DLARRAY_PIN_THREADS").map_or(true, |v| v.trim() != "0");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(move |i| {
            #[cfg(target_os = "linux")]
            if pin {
                // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes bit i < 2.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(i, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
            }
        })
        .build()
        .expect("a 2-thread pool");
    let epoch = Instant::now();
    println!("\nbare rayon, 2 threads, pinned: {pin}");
    println!("idle_ms  second_half_starts_us  same_thread  total_us");
    for idle in [0u64, 20, 100, 500] {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(idle));
            let t0 = epoch.elapsed();
            let starts: Vec<(Option<usize>, Duration)> = pool.install(|| {
                (0..2)
                    .into_par_iter()
                    .map(|_| {
                        let s = epoch.elapsed() - t0;
                        busy(Duration::from_millis(2));
                        (rayon::current_thread_index(), s)
                    })
                    .collect()
            });
            let total = epoch.elapsed() - t0;
            println!(
                "{idle:7}  {:21.0}  {:11}  {:8.0}",
                starts[1].1.as_secs_f64() * 1e6,
                starts[0].0 == starts[1].0,
                total.as_secs_f64() * 1e6
            );
        }
    }
}
