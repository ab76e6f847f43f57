//! The threads that help a `par_for` caller: one parked thread per CPU of the device, woken
//! by name.
//!
//! Why not the device's rayon pool: `ThreadPool::spawn` wakes whichever worker rayon picks.
//! With pinned workers (the default, see `affinity`) that may be the worker pinned to the
//! very CPU the caller is running on, which then cannot run until the caller is done: the op
//! runs on one core. Here the caller asks for its own CPU (`sched_getcpu`, a vDSO call) and
//! wakes helpers pinned elsewhere. Unpinned, the helpers are plain threads placed by the
//! operating system, as rayon's were.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// A job a helper runs once: `par_for`'s `Shared::help`, whose chunks the caller also takes.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// One helper's mailbox.
struct Slot {
    /// Jobs posted and not yet started, and whether the helper must exit.
    queue: Mutex<(VecDeque<Job>, bool)>,
    wake: Condvar,
}

/// A device's helper threads. Dropping it ends them once their queued jobs ran.
pub(crate) struct Helpers {
    /// Each helper's mailbox and the CPU it is pinned to (`None`: not pinned).
    slots: Vec<(Arc<Slot>, Option<usize>)>,
}

impl Helpers {
    /// Starts one helper per entry of `cpus` (pinned to it where `Some`), named `name-h{i}`.
    pub(crate) fn start(name: &str, cpus: &[Option<usize>]) -> Result<Helpers, String> {
        let mut helpers = Helpers {
            slots: Vec::with_capacity(cpus.len()),
        };
        for (i, &cpu) in cpus.iter().enumerate() {
            let slot = Arc::new(Slot {
                queue: Mutex::new((VecDeque::new(), false)),
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
                    serve(&mine);
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
            let mut q = slot.queue.lock().unwrap_or_else(PoisonError::into_inner);
            q.0.push_back(make());
            drop(q);
            slot.wake.notify_one();
            posted += 1;
        }
        posted
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        for (slot, _) in &self.slots {
            slot.queue.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
            slot.wake.notify_one();
        }
    }
}

/// A helper's loop: run posted jobs in order, sleep when there are none, exit when told.
fn serve(slot: &Slot) {
    let mut q = slot.queue.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(job) = q.0.pop_front() {
            drop(q);
            // A job catches its kernel's panics itself (`Shared::help`); this only keeps a
            // bug there from ending the helper.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            q = slot.queue.lock().unwrap_or_else(PoisonError::into_inner);
        } else if q.1 {
            return;
        } else {
            q = slot.wake.wait(q).unwrap_or_else(PoisonError::into_inner);
        }
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

    #[test]
    fn posted_jobs_run_on_the_helpers_and_the_helpers_end_on_drop() {
        let helpers = Helpers::start("test", &[None, None, None]).unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let posted = helpers.post(2, &mut || {
            let (ran, tx) = (ran.clone(), tx.clone());
            Box::new(move || {
                ran.fetch_add(1, Ordering::SeqCst);
                tx.send(std::thread::current().name().map(str::to_owned))
                    .unwrap();
            })
        });
        assert_eq!(posted, 2);
        let mut names: Vec<_> = (0..2).map(|_| rx.recv().unwrap().unwrap()).collect();
        names.sort();
        assert_eq!(
            names,
            ["test-h0", "test-h1"],
            "two distinct helpers ran them"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 2);
        // Asking for more helpers than there are posts once to each.
        assert_eq!(helpers.post(5, &mut || Box::new(|| ())), 3);
        drop(helpers);
    }

    #[test]
    fn a_helper_on_the_callers_cpu_is_chosen_last() {
        let Some(here) = current_cpu() else { return };
        // Pinning the test thread keeps `here` true for the whole test.
        let chosen = std::thread::spawn(move || {
            super::super::affinity::pin_current_thread(here);
            let other = here + 1;
            // Both helpers pinned: the caller's CPU first in the list, yet not picked first.
            let helpers = Helpers::start("pick", &[Some(here), Some(other)]).unwrap();
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
        let helpers = Helpers::start("panic", &[None]).unwrap();
        helpers.post(1, &mut || Box::new(|| panic!("a bug in a job")));
        let (tx, rx) = mpsc::channel();
        helpers.post(1, &mut || {
            let tx = tx.clone();
            Box::new(move || tx.send(()).unwrap())
        });
        rx.recv().unwrap();
    }
}
