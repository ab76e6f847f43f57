//! The threads that help a `par_for` caller: one thread per CPU of the device, woken by name.
//!
//! Why not the device's rayon pool: `ThreadPool::spawn` wakes whichever worker rayon picks.
//! With pinned workers (the default, see `affinity`) that may be the worker pinned to the
//! very CPU the caller is running on, which then cannot run until the caller is done: the op
//! runs on one core. Here the caller asks for its own CPU (`sched_getcpu`, a vDSO call) and
//! wakes helpers pinned elsewhere. Unpinned, the helpers are plain threads placed by the
//! operating system, as rayon's were.
//!
//! A helper that has run a job polls its mailbox for a short while (`spin_window`, 100 µs by
//! default) before it sleeps. Waking a sleeping thread takes a futex call and, on a virtual
//! machine, the host scheduling the halted virtual CPU again: here a 256K-element float32
//! add (20 µs of work on two threads) took 26 µs at best and 41 µs on average with helpers
//! that slept at once, against 22 µs and 23 µs with helpers polling (64K elements: 7.3 / 17
//! µs against 5.0 / 5.4). Ops of an array program follow each other within microseconds, so
//! the next one usually finds its helper awake. candle's barrier pool polls ~0.5 ms and
//! OpenBLAS up to a second; this window is short (a helper also polls once when it starts),
//! and a process that stopped computing burns nothing after it. Whether a helper polls is
//! also what lets ops too small to be worth a wake-up split anyway (`ready_for_mid_work`).
//!
//! A thread still polling on another CPU is charged its CPU time only at its next tick or
//! switch: measure a process's CPU time once the helpers sleep (`examples/idle_matmul.rs`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A job a helper runs once: `par_for`'s `Shared::help`, whose chunks the caller also takes.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// How long a helper polls for the next job before it sleeps: `DLARRAY_SPIN_US`
/// microseconds (0: sleep at once), 100 unless set (or set to something else than a number,
/// with a warning in the log). Read once.
pub(crate) fn spin_window() -> Duration {
    static WINDOW: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *WINDOW.get_or_init(|| {
        let us = match std::env::var("DLARRAY_SPIN_US") {
            Err(_) => 100,
            Ok(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
                log::warn!("ignoring DLARRAY_SPIN_US={v:?}: not a number of microseconds");
                100
            }),
        };
        // At most a second: longer, a helper would keep a core busy for no op in sight.
        Duration::from_micros(us.min(1_000_000))
    })
}

/// A helper's posted jobs and state, behind the slot's lock.
#[derive(Default)]
struct Mailbox {
    /// Jobs posted and not yet started.
    jobs: VecDeque<Job>,
    /// The helper must exit once `jobs` is empty.
    exit: bool,
}

/// One helper's mailbox.
struct Slot {
    mailbox: Mutex<Mailbox>,
    /// Whether `mailbox` may hold a job or the exit order: what a polling helper reads
    /// without taking the lock. Set under the lock by every post.
    posted: AtomicBool,
    /// The helper waits on `wake`: a post must notify it. While it polls (or runs a job) a
    /// post needs no system call. Written only under the lock, so a post that reads it
    /// there cannot miss a helper going to sleep; read without it as a hint.
    asleep: AtomicBool,
    wake: Condvar,
}

/// A device's helper threads. Dropping it ends them once their queued jobs ran.
pub(crate) struct Helpers {
    /// Each helper's mailbox and the CPU it is pinned to (`None`: not pinned).
    slots: Vec<(Arc<Slot>, Option<usize>)>,
    /// How long a helper polls after a job.
    window: Duration,
    /// When the last mid-size op asked `ready` (nanoseconds since `epoch`).
    last_mid: AtomicU64,
    epoch: Instant,
}

impl Helpers {
    /// Starts one helper per entry of `cpus` (pinned to it where `Some`), named `name-h{i}`,
    /// each polling for `window` after a job before it sleeps.
    pub(crate) fn start(
        name: &str,
        cpus: &[Option<usize>],
        window: Duration,
    ) -> Result<Helpers, String> {
        let mut helpers = Helpers {
            slots: Vec::with_capacity(cpus.len()),
            window,
            last_mid: AtomicU64::new(0),
            epoch: Instant::now(),
        };
        for (i, &cpu) in cpus.iter().enumerate() {
            let slot = Arc::new(Slot {
                mailbox: Mutex::new(Mailbox::default()),
                posted: AtomicBool::new(false),
                asleep: AtomicBool::new(false),
                wake: Condvar::new(),
            });
            let mine = slot.clone();
            // On an error the helpers started so far end when `helpers` drops.
            std::thread::Builder::new()
                .name(format!("{name}-h{i}"))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        super::affinity::pin_current_thread(cpu);
                    }
                    serve(&mine, window);
                })
                .map_err(|e| format!("cannot start helper threads for {name}: {e}"))?;
            helpers.slots.push((slot, cpu));
        }
        Ok(helpers)
    }

    /// Posts `make()` to up to `n` helpers, preferring those pinned to another CPU than the
    /// calling thread's (a helper on the caller's own CPU could only run once the caller
    /// stops). Returns how many were posted.
    pub(crate) fn post(&self, n: usize, make: &mut dyn FnMut() -> Job) -> usize {
        let here = current_cpu();
        let elsewhere = |cpu: &Option<usize>| cpu.is_none() || *cpu != here;
        let chosen = self
            .slots
            .iter()
            .filter(|(_, cpu)| elsewhere(cpu))
            .chain(self.slots.iter().filter(|(_, cpu)| !elsewhere(cpu)))
            .take(n);
        let mut posted = 0;
        for (slot, _) in chosen {
            slot.send(|m| m.jobs.push_back(make()));
            posted += 1;
        }
        posted
    }

    /// Whether every helper is awake (running a job or polling): a split op started now
    /// finds them at once, so its time is the split's own, not a wake-up's.
    pub(crate) fn all_polling(&self) -> bool {
        self.slots
            .iter()
            .all(|(s, _)| !s.asleep.load(Ordering::Relaxed))
    }

    /// Whether a mid-size op (too small to be worth waking a sleeping helper for) should
    /// post to the helpers: one of them polls now, so a post costs no system call, or another
    /// mid-size op came within the polling window, so this looks like a loop of them: waking
    /// the helpers once lets the rest of the loop find them polling. An op on its own stays
    /// on its caller.
    pub(crate) fn ready_for_mid_work(&self) -> bool {
        if self.window.is_zero() || self.slots.is_empty() {
            return false;
        }
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let last = self.last_mid.swap(now, Ordering::Relaxed);
        let polling = self
            .slots
            .iter()
            .any(|(s, _)| !s.asleep.load(Ordering::Relaxed));
        polling || (last != 0 && now.saturating_sub(last) < self.window.as_nanos() as u64)
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        for (slot, _) in &self.slots {
            slot.send(|m| m.exit = true);
        }
    }
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Mailbox> {
        self.mailbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the mailbox (a job or the exit order) and wakes the helper if it sleeps.
    fn send(&self, change: impl FnOnce(&mut Mailbox)) {
        let mut m = self.lock();
        change(&mut m);
        self.posted.store(true, Ordering::Release);
        let asleep = self.asleep.load(Ordering::Relaxed);
        drop(m);
        if asleep {
            self.wake.notify_one();
        }
    }

    /// Polls `posted` for up to `window`: whether something was posted meanwhile.
    fn poll(&self, window: Duration) -> bool {
        if window.is_zero() {
            return false;
        }
        let start = Instant::now();
        loop {
            // The clock is read every 64 polls: a vDSO call costs ~20 pauses.
            for _ in 0..64 {
                if self.posted.load(Ordering::Acquire) {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= window {
                return false;
            }
        }
    }
}

/// A helper's loop: run posted jobs in order; with none, poll for a while, then sleep; exit
/// when told.
fn serve(slot: &Slot, window: Duration) {
    loop {
        let mut m = slot.lock();
        if let Some(job) = m.jobs.pop_front() {
            if m.jobs.is_empty() && !m.exit {
                slot.posted.store(false, Ordering::Relaxed);
            }
            drop(m);
            // A job catches its kernel's panics itself (`Shared::help`); this only keeps a
            // bug there from ending the helper.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            continue;
        }
        if m.exit {
            return;
        }
        drop(m);
        if slot.poll(window) {
            continue;
        }
        // Nothing within the window: sleep. `asleep` is set under the lock that every post
        // takes, so a post either lands before this check or sees `asleep` and notifies.
        let mut m = slot.lock();
        slot.asleep.store(true, Ordering::Relaxed);
        while m.jobs.is_empty() && !m.exit {
            m = slot.wake.wait(m).unwrap_or_else(PoisonError::into_inner);
        }
        slot.asleep.store(false, Ordering::Relaxed);
    }
}

/// The CPU the calling thread runs on now (`None` where that cannot be asked).
fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only returns a number (-1 on error).
        let c = unsafe { libc::sched_getcpu() };
        usize::try_from(c).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    /// Posts one job to `helpers` and waits (at most 5 s) until a helper has run it.
    fn run_one(helpers: &Helpers) {
        let (tx, rx) = mpsc::channel();
        helpers.post(1, &mut || {
            let tx = tx.clone();
            Box::new(move || tx.send(()).unwrap())
        });
        rx.recv_timeout(Duration::from_secs(5))
            .expect("a posted job runs");
    }

    /// Sleeping at once, polling briefly, and polling for longer than the test.
    const WINDOWS: [Duration; 3] = [
        Duration::ZERO,
        Duration::from_micros(100),
        Duration::from_secs(5),
    ];

    #[test]
    fn posted_jobs_run_on_the_helpers_and_the_helpers_end_on_drop() {
        for window in WINDOWS {
            let helpers = Helpers::start("test", &[None, None, None], window).unwrap();
            let ran = Arc::new(AtomicUsize::new(0));
            let (tx, rx) = mpsc::channel();
            // Twice: the second round finds the helpers polling or asleep after a job.
            for round in 1..=2 {
                let posted = helpers.post(2, &mut || {
                    let (ran, tx) = (ran.clone(), tx.clone());
                    Box::new(move || {
                        ran.fetch_add(1, Ordering::SeqCst);
                        tx.send(std::thread::current().name().map(str::to_owned))
                            .unwrap();
                    })
                });
                assert_eq!(posted, 2);
                let mut names: Vec<_> = (0..2)
                    .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap())
                    .collect();
                names.sort();
                assert_eq!(
                    names,
                    ["test-h0", "test-h1"],
                    "two distinct helpers ran them ({window:?})"
                );
                assert_eq!(ran.load(Ordering::SeqCst), 2 * round);
            }
            // Asking for more helpers than there are posts once to each.
            assert_eq!(helpers.post(5, &mut || Box::new(|| ())), 3);
            drop(helpers);
        }
    }

    /// Sends on `tx` when the thread that made it exits (thread-local destructors run then).
    struct OnExit(mpsc::Sender<()>);

    impl Drop for OnExit {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    thread_local! {
        static EXIT: std::cell::RefCell<Option<OnExit>> = const { std::cell::RefCell::new(None) };
    }

    #[test]
    fn a_helper_polls_after_a_job_then_sleeps_and_a_post_wakes_it() {
        let polling = Helpers::start("poll", &[None], Duration::from_secs(5)).unwrap();
        let sleeping = Helpers::start("sleep", &[None], Duration::from_millis(1)).unwrap();
        for helpers in [&polling, &sleeping] {
            run_one(helpers);
        }
        let asleep = |h: &Helpers| h.slots[0].0.asleep.load(Ordering::Relaxed);
        // Long past the 1 ms window, well within the 5 s one.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !asleep(&sleeping) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            asleep(&sleeping),
            "a helper sleeps once its window has passed"
        );
        assert!(!asleep(&polling), "a helper polls within its window");
        // Either way the next job runs: taken while polling, or woken by the post.
        for helpers in [&polling, &sleeping] {
            run_one(helpers);
        }
    }

    #[test]
    fn mid_size_work_uses_helpers_that_poll_or_a_loop_of_it() {
        let never = Helpers::start("never", &[None], Duration::ZERO).unwrap();
        assert!(!never.ready_for_mid_work() && !never.ready_for_mid_work());
        let none = Helpers::start("none", &[], Duration::from_secs(5)).unwrap();
        assert!(!none.ready_for_mid_work() && !none.ready_for_mid_work());

        let helpers = Helpers::start("mid", &[None], Duration::from_millis(20)).unwrap();
        let asleep = || helpers.slots[0].0.asleep.load(Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !asleep() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(asleep());
        // An op on its own stays on its caller; a second one soon after is a loop.
        assert!(!helpers.ready_for_mid_work());
        assert!(helpers.ready_for_mid_work());
        std::thread::sleep(Duration::from_millis(50));
        assert!(!helpers.ready_for_mid_work(), "the loop ended a window ago");
        // A helper that just ran a job polls: ready, with no mid-size op before.
        let polling = Helpers::start("poll", &[None], Duration::from_secs(5)).unwrap();
        run_one(&polling);
        assert!(polling.ready_for_mid_work());
    }

    #[test]
    fn a_polling_or_sleeping_helper_exits_when_dropped() {
        for window in WINDOWS {
            let helpers = Helpers::start("exit", &[None], window).unwrap();
            let (tx, rx) = mpsc::channel();
            helpers.post(1, &mut || {
                let tx = tx.clone();
                Box::new(move || EXIT.with(|e| *e.borrow_mut() = Some(OnExit(tx))))
            });
            std::thread::sleep(Duration::from_millis(10));
            drop(helpers);
            // Well before a 5 s window would end on its own.
            rx.recv_timeout(Duration::from_secs(2))
                .unwrap_or_else(|_| panic!("the helper did not exit ({window:?})"));
        }
    }

    #[test]
    fn a_helper_on_the_callers_cpu_is_chosen_last() {
        let Some(here) = current_cpu() else { return };
        // Pinning the test thread keeps `here` true for the whole test.
        let chosen = std::thread::spawn(move || {
            super::super::affinity::pin_current_thread(here);
            let other = here + 1;
            // Both helpers pinned: the caller's CPU first in the list, yet not picked first.
            let helpers =
                Helpers::start("pick", &[Some(here), Some(other)], Duration::ZERO).unwrap();
            let (tx, rx) = mpsc::channel();
            helpers.post(1, &mut || {
                let tx = tx.clone();
                Box::new(move || {
                    tx.send(std::thread::current().name().map(str::to_owned))
                        .unwrap()
                })
            });
            rx.recv().unwrap().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(chosen, "pick-h1");
    }

    #[test]
    fn a_panicking_job_does_not_end_its_helper() {
        let helpers = Helpers::start("panic", &[None], spin_window()).unwrap();
        helpers.post(1, &mut || Box::new(|| panic!("a bug in a job")));
        run_one(&helpers);
    }
}
