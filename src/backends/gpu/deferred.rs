//! Event-gated release: memory the device may still be reading (pinned staging blocks,
//! foreign DLPack memory whose owner runs the producer's deleter) is released only once an
//! event recorded after its last queued use has passed. The queue is pumped on every
//! submission and every synchronisation, never blocking.

use super::driver::{Driver, EventHandle};

/// Something to drop once `event` has passed.
pub(crate) struct Deferred {
    pub event: Option<EventHandle>,
    pub release: Box<dyn Send>,
}

/// Removes every item whose event has passed (all of them when `all`, after a full device
/// synchronisation) and returns what to drop. The caller drops it after releasing the
/// queue's lock: an owner's drop runs a producer's deleter, which may drop buffers of this
/// very backend and so push to the queue again. An event the driver cannot query (a lost
/// device) releases its item: no work will read the memory again.
pub(crate) fn take_passed<D: Driver>(
    driver: &D,
    device: usize,
    queue: &mut Vec<Deferred>,
    all: bool,
) -> Vec<Box<dyn Send>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < queue.len() {
        let done = all
            || match queue[i].event {
                None => true,
                Some(e) => driver.event_query(device, e).unwrap_or(true),
            };
        if done {
            let item = queue.swap_remove(i);
            if let Some(e) = item.event {
                driver.event_destroy(device, e);
            }
            out.push(item.release);
        } else {
            i += 1;
        }
    }
    out
}
