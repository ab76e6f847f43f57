//! Optional pinning of a host device's worker threads, one per allowed CPU
//! (`DLARRAY_PIN_THREADS=1`).
//!
//! Why it exists: on a KVM guest the first parallel op after the process was idle for ~20 ms
//! or more often ran on one core. `examples/idle_matmul.rs` and the rayon-only probe in
//! `docs/benchmarks.md` show it: the woken worker was queued on the CPU of the busy worker
//! that woke it, because the guest scheduler treats the other, halted vCPU as preempted by the
//! host (`vcpu_is_preempted`) and skips it. It never got to run, and its half of the work ran
//! after the first. A pinned worker can only run on its own CPU, which the wake brings back
//! within ~50-300 us.
//!
//! It is not the default: a worker pinned to the CPU the (unpinned) calling thread runs on
//! cannot help that caller, where the scheduler would have moved it. The default leaves the
//! placement to the operating system.

/// Whether `DLARRAY_PIN_THREADS` asks for pinning.
pub(crate) fn requested() -> bool {
    std::env::var("DLARRAY_PIN_THREADS").is_ok_and(|v| v.trim() == "1")
}

/// The CPUs this process may run on, in order (empty where that cannot be read).
pub(crate) fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most
        // `size_of::<cpu_set_t>()` bytes into it, and CPU_ISSET reads within it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// Pins the calling thread to `cpu`; a failure leaves it unpinned (pinning is only advice).
pub(crate) fn pin_current_thread(cpu: usize) {
    #[cfg(target_os = "linux")]
    if cpu < libc::CPU_SETSIZE as usize {
        // SAFETY: as in `allowed_cpus`; CPU_SET writes bit `cpu`, inside the set (checked).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_on_its_cpu() {
        let cpus = allowed_cpus();
        if cfg!(target_os = "linux") {
            assert!(!cpus.is_empty(), "the process runs somewhere");
        }
        let Some(&last) = cpus.last() else { return };
        let ran_on = std::thread::spawn(move || {
            pin_current_thread(last);
            // SAFETY: sched_getcpu takes no arguments and only returns a number.
            #[cfg(target_os = "linux")]
            return unsafe { libc::sched_getcpu() } as usize;
            #[cfg(not(target_os = "linux"))]
            last
        })
        .join()
        .unwrap();
        assert_eq!(ran_on, last);
    }
}
