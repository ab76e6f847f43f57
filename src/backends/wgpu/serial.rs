//! One thread at a time on a GL device, and wgpu panics turned into errors.
//!
//! wgpu's GL backend shares one EGL context per adapter behind a lock that panics after
//! waiting ("Could not lock adapter context. This is most-likely a deadlock."); two threads
//! using one GL device at once (a user's threads, or a test harness) then died with SIGABRT
//! when a second panic hit a destructor. dlarray serialises all work on a GL device itself,
//! buffer drops included, with a re-entrant lock (backend calls nest: a copy downloads), and
//! catches a panic inside wgpu so that it fails the one call instead of the process.

use crate::error::{Error, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;

/// A re-entrant lock: the thread holding it may take it again.
#[derive(Default, Debug)]
pub(crate) struct SerialLock {
    owner: Mutex<(Option<ThreadId>, usize)>,
    free: Condvar,
}

/// Holds a [`SerialLock`] until dropped.
pub(crate) struct SerialGuard<'a>(&'a SerialLock);

impl SerialLock {
    pub fn lock(&self) -> SerialGuard<'_> {
        let me = std::thread::current().id();
        let mut o = self.owner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match o.0 {
                Some(t) if t == me => break,
                None => {
                    o.0 = Some(me);
                    break;
                }
                Some(_) => o = self.free.wait(o).unwrap_or_else(|p| p.into_inner()),
            }
        }
        o.1 += 1;
        SerialGuard(self)
    }
}

impl Drop for SerialGuard<'_> {
    fn drop(&mut self) {
        let mut o = self.0.owner.lock().unwrap_or_else(|p| p.into_inner());
        o.1 -= 1;
        if o.1 == 0 {
            o.0 = None;
            self.0.free.notify_one();
        }
    }
}

/// Runs `f` holding `lock` (if the device needs one) and turns a panic inside it into an
/// error; `on_panic` records what the panic did to the device (its state is unknown after).
pub(crate) fn guarded<T>(
    lock: Option<&SerialLock>,
    device: &str,
    on_panic: impl FnOnce(&str),
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let _g = lock.map(SerialLock::lock);
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = crate::error::panic_message(&*p);
            on_panic(&msg);
            Err(Error::DeviceLost {
                device: device.to_string(),
                reason: format!("wgpu panicked: {msg}"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn reentrant_and_exclusive() {
        let lock = Arc::new(SerialLock::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (lock, inside) = (lock.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let _a = lock.lock();
                        let _b = lock.lock(); // re-entrant
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_panic_is_an_error_and_releases_the_lock() {
        let lock = SerialLock::default();
        let mut seen = String::new();
        let r: Result<()> = guarded(
            Some(&lock),
            "wgpu:0",
            |m| seen = m.to_string(),
            || panic!("Could not lock adapter context"),
        );
        assert!(matches!(r, Err(Error::DeviceLost { .. })));
        assert!(seen.contains("adapter context"));
        drop(lock.lock()); // not held any more
    }
}
