//! Pinning of a host device's threads, one per allowed CPU: on by default where this process
//! has its CPUs to itself, `DLARRAY_PIN_THREADS=0` turns it off, `=1` forces it on.
//!
//! Why: on a KVM guest the first parallel op after the process was idle for ~20 ms or more
//! often ran on one core. `examples/idle_matmul.rs` and the rayon-only probe in
//! `docs/benchmarks.md` show it: the woken worker was queued on the CPU of the busy thread
//! that woke it, because the guest scheduler treats the other, halted vCPU as preempted by the
//! host (`vcpu_is_preempted`) and skips it. It never got to run, and its half of the work ran
//! after the first. A pinned thread can only run on its own CPU, which the wake brings back
//! within ~50-300 us.
//!
//! The cost of pinning, and how it is avoided: a thread pinned to the CPU its caller runs on
//! cannot help that caller. gemm's caller sleeps while the rayon workers compute, so it costs
//! nothing there; `par_for`'s caller computes too, so it wakes helpers pinned to the other
//! CPUs (`helpers`). Where the process may run on more CPUs than it may use (a cgroup CPU
//! quota below its CPU set, as in a container limited to 2 of 64 cores), a pinned thread
//! could be stuck on a CPU others keep busy, so the default leaves placement to the kernel.

/// The CPUs to pin a host device's threads to, in order; empty: do not pin.
pub(crate) fn cpus_to_pin() -> Vec<usize> {
    let setting = std::env::var("DLARRAY_PIN_THREADS").ok();
    let cpus = allowed_cpus();
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pin = match setting.as_deref().map(str::trim) {
        Some("0") => false,
        Some("1") => true,
        // Unset (or anything else): pin where every CPU of our set is ours to use.
        _ => cpus.len() > 1 && cpus.len() == usable,
    };
    if pin { cpus } else { Vec::new() }
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
