//! Whether mid-size ops pay for splitting over the helpers, learned per device from their
//! own timings.
//!
//! Why learn it: in the mid band (`engine::split`, 128 KiB to 2 MiB of traffic) the gain
//! depends on the machine of the moment, not on the op. On one sitting of the 2-core
//! virtual machine of `docs/benchmarks.md` a 16K-element float32 add took 1.7 µs split
//! against 2.1 µs alone; on another (same binary, a restarted guest) it took 2.1 to 4.6 µs
//! split against 1.8 to 2.4 µs alone, and a 64K one (768 KiB) 9.2 to 10 µs split against
//! 7.5 to 9.1 µs alone in one minute and 5.3 to 7.9 µs against 7.9 to 10.3 µs the next.
//! A fixed threshold is wrong on one of them.
//!
//! So each device keeps, per octave of the band, a moving average of the femtoseconds per
//! byte each way took, runs the cheaper way, and now and then (one op in 256 to 2048) a short
//! stretch of ops timed: a few the way in use, then a few the other way, so both figures
//! follow the machine. Ops outside the stretches are not timed (a clock read costs ~20 ns
//! here, 1 % of a 16K-element add). Chunks are set by the size alone (`Split::chunk`),
//! so which way ran never changes a result's bits.
//!
//! The first figures come from a stretch too, run at once: a device's first ops of a size
//! are cold (fresh pages, cold caches, sleeping helpers: on the guest above the first
//! 64K-element add took 56 µs split and the second 200 µs alone, against 5 and 10 µs warm),
//! and a figure set by them took thousands of ops to forget (in `dlarray bench`, whole
//! 64K-element cells ran alone at ~10 µs, against ~5 µs split). Until a way has `YOUNG`
//! samples its figure is the least of them, and stretches come every `YOUNG_EVERY` ops;
//! after, only raises are bounded (a preempted op), a low sample counts in full.
//!
//! What learning cannot fix: on this guest whole processes run a 256K-element add (beyond
//! the band, always split) at 34 µs instead of 18-20, both threads taking 4 of its 8 chunks
//! and the caller's 4 taking 22-25 µs instead of 16.5: the cores themselves are slower then
//! (the host's shared cache), whichever way runs.
//!
//! Stretches, not single ops: an op reads what the previous one wrote, from the cache of the
//! thread that wrote it. The first op after a change of way pays for the move of that data,
//! which ops in a row of one way do not; it is not counted. The way in use goes first and
//! stretches are rare because a helper that ran a job polls for a while after it
//! (`helpers::spin_window`), and a polling sibling slows the caller's own work (by 12 % on
//! this 2-vCPU guest): timing "alone" right after split ops would charge it for that.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Octaves of the band (128-256 KiB, .., 1-2 MiB), each learned apart: the larger an op,
/// the more splitting pays.
const OCTAVES: usize = 4;

/// In the top octave one op in `1 << EXPLORE_SHIFT` starts a stretch, and one octave down
/// one in twice as many (see `explores`).
const EXPLORE_SHIFT: u32 = 8;

/// Ops in each half of a stretch: the way in use first, then the other way. The first op
/// of each half is not counted.
const HALF: u32 = 4;

/// The first octave where an op splits before anything is measured.
const SPLIT_FIRST: usize = 2;

/// Ops a stretch's split half waits, uncounted, for its helpers to wake (see `choose`),
/// before it counts split ops whatever the helpers do (with `DLARRAY_SPIN_US=0` they sleep
/// after every job, and then a wake-up is part of every split op).
const MAX_WAITS: u32 = 32;

/// How much cheaper (`1/MARGIN` of its figure) a way must look than the octave's default to
/// be chosen over it.
///
/// Why a margin: each figure is a moving average of single ops, and single ops of one way
/// drift by 10-20 % for a while on a shared guest. Where the two figures sit close, a few
/// slow samples of one way flipped the choice, and the other way then ran for thousands of
/// ops. On the Intel guest (Emerald Rapids, 2 vCPUs) a float32 add of 12K elements took 1.5
/// µs alone against 1.8 split in stretches, and of 24K 3.35 against 3.2; without the margin
/// the 24K add ran split for most of every one of 20 processes, and in the pattern of
/// `peers_in_turns` (1,000 ops between 20 ms pauses; median of 20 processes) took 4.04 µs a
/// call against 3.81 on one thread; with it, 3.86, split in 11 of 20 (the 12K add: 2.09 ->
/// 2.03 µs, one thread 1.96). From 48K on, where splitting pays 1.3-1.7x, nothing changed.
const MARGIN: u64 = 8;

/// Samples of a way after which its figure becomes a moving average (before: their least).
const YOUNG: u32 = 8;

/// While a way of an octave has fewer than `YOUNG` samples, one op in this many starts a
/// stretch (instead of the one in 256 to 2048 of `explores`).
const YOUNG_EVERY: u64 = 16;

/// How a mid-size op runs, and whether its time counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    pub split: bool,
    /// The octave whose figures its time updates, `None` when it does not count.
    pub octave: Option<usize>,
}

/// A device's learned figures for the mid band.
#[derive(Default)]
pub(crate) struct MidBand {
    /// Per octave, `[alone, split]`: a moving average of femtoseconds per byte, 0 when not
    /// measured yet. Relaxed atomics: a race loses a sample, which a heuristic can afford.
    cost: [[AtomicU64; 2]; OCTAVES],
    /// Per octave and way, the samples counted so far (up to `YOUNG`).
    samples: [[AtomicU32; 2]; OCTAVES],
    /// Mid-size ops outside stretches so far, to spread the stretches (see `explores`).
    ops: AtomicU64,
    /// Ops left in the current stretch, per octave.
    stretch: [AtomicU32; OCTAVES],
    /// Split ops of the current half that waited for sleeping helpers, per octave.
    waits: [AtomicU32; OCTAVES],
}

impl MidBand {
    /// How an op with `traffic` bytes, `band_min` the band's lower end, should run;
    /// `awake`: whether every helper polls now (asked only of a stretch's split ops).
    pub(crate) fn choose(
        &self,
        traffic: usize,
        band_min: usize,
        awake: impl FnOnce() -> bool,
    ) -> Choice {
        let octave = octave(traffic, band_min);
        let [alone, split] = self.cost[octave]
            .each_ref()
            .map(|c| c.load(Ordering::Relaxed));
        // While a way is unmeasured, the way in use is the fixed threshold's: split from
        // `SPLIT_FIRST` octave on (`par_min_bytes`, four times the band's lower end).
        let default = octave >= SPLIT_FIRST;
        let best = match (alone, split) {
            (0, _) | (_, 0) => default,
            _ => cheaper(split, alone, default),
        };
        // Only stretches are timed: outside them an op pays no clock reads. A way never
        // measured starts one at once, and while a way is young one starts every
        // `YOUNG_EVERY` ops, so that its first figure, still cold, is soon replaced.
        let left = &self.stretch[octave];
        let mut n = left.load(Ordering::Relaxed);
        if n == 0 {
            let unmeasured = split == 0 || alone == 0;
            let young = self.samples[octave]
                .iter()
                .any(|c| c.load(Ordering::Relaxed) < YOUNG);
            let k = self.ops.fetch_add(1, Ordering::Relaxed);
            let start = unmeasured
                || if young {
                    k.is_multiple_of(YOUNG_EVERY)
                } else {
                    explores(k, octave, rarer(alone, split))
                };
            if !start {
                return Choice {
                    split: best,
                    octave: None,
                };
            }
            n = 2 * HALF;
        }
        let split = (n <= HALF) != best;
        let first = n == 2 * HALF || n == HALF;
        let waits = &self.waits[octave];
        if first {
            waits.store(0, Ordering::Relaxed);
        } else if split && !awake() && waits.fetch_add(1, Ordering::Relaxed) < MAX_WAITS {
            // Outside stretches the way in use runs; when that is alone, the helpers sleep
            // by the time a stretch comes, and the split half's first op wakes them: tens
            // of microseconds on a virtual machine, the time of several 2 µs ops. Split ops
            // run meanwhile took their caller alone plus the splitting's overhead (2.2 µs
            // against 1.7 for a 16K-element add, 1.3 with the helpers polling), and made
            // splitting look dearer than it is: so they do not count, and the stretch waits.
            // They still split. Tried: running them alone (no post, no second wake-up
            // call). Then the split ops counted after the wait took a 256K-element sum
            // ~20 µs, then 6.7 µs, no faster than alone, against 5.1 µs for split ops in
            // use; the band learned "alone" and the sum ran 30 % slower (cause not found).
            return Choice {
                split,
                octave: None,
            };
        }
        left.store(n - 1, Ordering::Relaxed);
        Choice {
            split,
            octave: (!first).then_some(octave),
        }
    }

    /// Counts an op that ran as `choice` said, moving `traffic` bytes in `took`.
    pub(crate) fn record(&self, choice: Choice, traffic: usize, took: Duration) {
        let Some(octave) = choice.octave else {
            return;
        };
        let fs = took.as_nanos().saturating_mul(1_000_000) / traffic.max(1) as u128;
        let sample = u64::try_from(fs).unwrap_or(u64::MAX).max(1);
        let way = usize::from(choice.split);
        let cell = &self.cost[octave][way];
        let count = &self.samples[octave][way];
        let n = (count.load(Ordering::Relaxed) + 1).min(YOUNG);
        count.store(n, Ordering::Relaxed);
        let old = cell.load(Ordering::Relaxed);
        let new = if old == 0 {
            sample
        } else {
            // A thread preempted mid-op takes 100x as long: bound how far one sample raises
            // the figure. Nothing makes an op 100x faster: a low sample counts in full.
            let sample = sample.min(old.saturating_mul(2));
            if n < YOUNG {
                // Young: the least sample so far. The first ones are cold (they take 2-10x
                // as long), and only the warm ones come near the least.
                old.min(sample)
            } else {
                // Then a moving average over ~YOUNG samples.
                let w = u64::from(YOUNG);
                old - old / w + sample / w
            }
        };
        cell.store(new.max(1), Ordering::Relaxed);
    }
}

/// Whether to split, given the two ways' figures (`split` and `alone`, both measured) and the
/// way an octave takes before it measures (`default`, the fixed threshold's): the other way
/// only when it is cheaper by more than `1/MARGIN` of its own figure.
fn cheaper(split: u64, alone: u64, default: bool) -> bool {
    if default {
        alone.saturating_add(alone / MARGIN) >= split
    } else {
        split.saturating_add(split / MARGIN) < alone
    }
}

/// Which octave of the band `traffic` falls in.
fn octave(traffic: usize, band_min: usize) -> usize {
    let ratio = traffic / band_min.max(1);
    (ratio.max(1).ilog2() as usize).min(OCTAVES - 1)
}

/// Whether the `k`th mid-size op, of `octave`, starts a stretch: one in 256 in the top
/// octave, and twice as rarely each octave down (one in 2048 in the lowest), spread by a
/// Weyl sequence rather than every so many ops, so that a loop whose length divides that
/// count does not always explore with the same op.
///
/// Why rarer for smaller ops: a stretch costs about the same time whatever the op's size
/// (waking the helpers, up to `MAX_WAITS` split ops while they wake, the caller slowed by
/// their polling afterwards), so one every so many *bytes* keeps its share of the time flat.
/// One in 256 at every octave cost a 16K-element float32 add 1.83-1.95 µs on average
/// against 1.66 µs for the same op never split, while the figures it refreshed said "alone".
///
/// `rarer` halves the rate that many times more (see [`rarer`]).
fn explores(k: u64, octave: usize, rarer: u32) -> bool {
    let shift = EXPLORE_SHIFT + (OCTAVES - 1 - octave) as u32 + rarer;
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - shift) == 0
}

/// How many times to halve the stretches' rate when the two ways' figures are far apart:
/// none within 25 % of each other, once within 50 %, twice within 2x, three times beyond.
///
/// Why: a stretch runs the dearer way for its half and up to `MAX_WAITS` ops before it
/// (waking the helpers), and then the helpers poll beside the caller; where that way is far
/// dearer, a stretch costs the most and is the least likely to change the choice. A
/// 16K-element float32 add (1.6 µs alone, 2.6 split on the Intel guest, figures 1.65x
/// apart) took 1.63-1.67 µs on average at the base rate, 1.60 with stretches 32 times
/// rarer, 1.54-1.63 never split; in criterion, stretches 4 times rarer (this rule) took it
/// from 1.70-1.95 µs to 1.65-1.68. The machine can still change: then the stretches that do
/// come move the figures, the gap narrows, and the rate comes back.
fn rarer(alone: u64, split: u64) -> u32 {
    let (lo, hi) = (alone.min(split), alone.max(split));
    if hi < lo.saturating_add(lo / 4) {
        0
    } else if hi < lo.saturating_add(lo / 2) {
        1
    } else if hi < lo.saturating_mul(2) {
        2
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: usize = 128 << 10;

    fn feed(band: &MidBand, traffic: usize, alone_ns: u64, split_ns: u64, ops: usize) -> usize {
        let mut splits = 0;
        for _ in 0..ops {
            let c = band.choose(traffic, MIN, || true);
            splits += usize::from(c.split);
            let ns = if c.split { split_ns } else { alone_ns };
            band.record(c, traffic, Duration::from_nanos(ns));
        }
        splits
    }

    #[test]
    fn each_way_is_measured_first_then_the_cheaper_one_runs_with_stretches_of_the_other() {
        let band = MidBand::default();
        // The first ops are a stretch: alone, then split, the first op of each half cold
        // and not counted.
        let h = HALF as usize;
        let first: Vec<Choice> = (0..2 * h)
            .map(|i| {
                let c = band.choose(MIN, MIN, || true);
                // Cold ops are slow: had they counted, split would look cheaper.
                let ns = match (i % h, c.split) {
                    (0, _) => 100_000,
                    (_, true) => 3000,
                    (_, false) => 2000,
                };
                band.record(c, MIN, Duration::from_nanos(ns));
                c
            })
            .collect();
        assert!(first[..h].iter().all(|c| !c.split), "{first:?}");
        assert!(first[h..].iter().all(|c| c.split), "{first:?}");
        assert_eq!(first[0].octave, None);
        assert_eq!(first[h].octave, None);
        assert!(
            first[1..h]
                .iter()
                .chain(&first[h + 1..])
                .all(|c| c.octave == Some(0))
        );
        // Alone is cheaper: most ops run alone, a few in stretches split (one stretch in
        // 2048 ops in this lowest octave).
        let splits = feed(&band, MIN, 2000, 2400, 51_200);
        assert!((50..=250).contains(&splits), "{splits} of 51200 split");
        // The machine changes: splitting gets cheaper, and the stretches find out.
        feed(&band, MIN, 2000, 1000, 16_000);
        let splits = feed(&band, MIN, 2000, 1000, 51_200);
        assert!(splits > 44_800, "{splits} of 51200 split");
    }

    #[test]
    fn the_other_way_than_the_octaves_default_must_be_cheaper_by_the_margin() {
        // Below `SPLIT_FIRST` the default is alone: split 5 % cheaper is not enough, 20 % is.
        assert!(!cheaper(1900, 2000, false));
        assert!(cheaper(1600, 2000, false));
        // From `SPLIT_FIRST` on the default is split: alone 5 % cheaper is not enough.
        assert!(cheaper(2000, 1900, true));
        assert!(!cheaper(2000, 1600, true));
        // In use: with figures 5 % apart the lowest octave stays alone but for stretches.
        let band = MidBand::default();
        feed(&band, MIN, 2000, 2000, 2000);
        let splits = feed(&band, MIN, 2000, 1900, 51_200);
        assert!(splits <= 500, "{splits} of 51200 split");
        let splits = feed(&band, MIN, 2000, 1500, 51_200);
        assert!(splits > 44_800, "{splits} of 51200 split");
    }

    #[test]
    fn larger_ops_explore_more_often() {
        // A stretch costs about the same time at every octave: the top one (8x the bytes)
        // explores 8x as often as the lowest.
        // Figures 20 % apart: the base rate.
        let (low, top) = (stretches_in(MIN, 2400), stretches_in(8 * MIN, 2400));
        assert_eq!(octave(8 * MIN, MIN), OCTAVES - 1);
        assert!(
            (24..=40).contains(&low),
            "{low} stretches in 65536 ops of the lowest octave"
        );
        assert!(
            (220..=300).contains(&top),
            "{top} stretches in 65536 ops of the top octave"
        );
    }

    /// Stretches (counted ops of the dearer way, per stretch) in 65,536 ops of `traffic` once
    /// the figures are set, split ops taking `split_ns` and alone ones 2000.
    fn stretches_in(traffic: usize, split_ns: u64) -> usize {
        let band = MidBand::default();
        feed(&band, traffic, 2000, split_ns, 4000);
        let counted: usize = (0..65_536)
            .map(|_| {
                let c = band.choose(traffic, MIN, || true);
                let ns = if c.split { split_ns } else { 2000 };
                band.record(c, traffic, Duration::from_nanos(ns));
                usize::from(c.split && c.octave.is_some())
            })
            .sum();
        counted / (HALF as usize - 1)
    }

    #[test]
    fn ways_far_apart_explore_less_often_and_still_follow_the_machine() {
        // The top octave: 256 stretches in 65,536 ops at the base rate.
        let top = 8 * MIN;
        let near = stretches_in(top, 2400);
        let half_again = stretches_in(top, 3000);
        let far = stretches_in(top, 6000);
        assert!((220..=300).contains(&near), "{near}");
        assert!((50..=80).contains(&half_again), "{half_again}");
        assert!((24..=40).contains(&far), "{far}");
        // Split was 3x dearer in the lowest octave (a stretch in 16,384 ops); the machine
        // changes and splitting becomes twice as fast as alone: the rare stretches bring the
        // figures closer, the rate comes back, and the band turns to splitting.
        let band = MidBand::default();
        feed(&band, MIN, 2000, 6000, 4000);
        assert!(feed(&band, MIN, 2000, 6000, 16_384) <= 16);
        feed(&band, MIN, 2000, 1000, 100_000);
        let splits = feed(&band, MIN, 2000, 1000, 51_200);
        assert!(splits > 44_800, "{splits} of 51200 split");
    }

    #[test]
    fn the_first_op_of_a_stretch_does_not_count_and_octaves_learn_apart() {
        let band = MidBand::default();
        // Young ways explore every `YOUNG_EVERY` ops until each has `YOUNG` samples.
        let splits = feed(&band, MIN, 2000, 3000, 40 * YOUNG_EVERY as usize);
        assert!(splits >= YOUNG as usize, "{splits}");
        assert!(
            band.samples[0]
                .iter()
                .all(|c| c.load(Ordering::Relaxed) == YOUNG)
        );
        let mut seen = Vec::new();
        for _ in 0..16_000 {
            let c = band.choose(MIN, MIN, || true);
            seen.push(c);
            band.record(
                c,
                MIN,
                Duration::from_nanos(if c.split { 3000 } else { 2000 }),
            );
        }
        // A stretch: the way in use, then the other way, the first op of each not counted.
        let h = HALF as usize;
        let first = seen.iter().position(|c| c.split).expect("a stretch");
        assert!(first >= h, "{:?}", &seen[..first]);
        let stretch = &seen[first - h..first + h];
        let (usual, other) = stretch.split_at(h);
        assert!(usual.iter().all(|c| !c.split) && other.iter().all(|c| c.split));
        for half in [usual, other] {
            assert_eq!(half[0].octave, None, "{stretch:?}");
            assert!(half[1..].iter().all(|c| c.octave == Some(0)), "{stretch:?}");
        }
        // Outside stretches: the way in use, untimed.
        let after = &seen[first + h..];
        let next = after
            .iter()
            .position(|c| c.octave.is_some())
            .expect("another stretch");
        assert!(
            next > 64,
            "stretches are rare: the next starts {next} ops later"
        );
        assert!(after[..next - 1].iter().all(|c| *c
            == Choice {
                split: false,
                octave: None
            }));
        // The upper octave has measured nothing yet: it starts a stretch of its own.
        let upper: Vec<Choice> = (0..2 * h)
            .map(|_| band.choose(3 * MIN, MIN, || true))
            .collect();
        assert!(upper[..h].iter().all(|c| !c.split) && upper[h..].iter().all(|c| c.split));
        assert!(upper[1..h].iter().all(|c| c.octave == Some(1)), "{upper:?}");
        // From `par_min_bytes` (octave 2) on, the first stretch splits first.
        let top = band.choose(4 * MIN, MIN, || true);
        assert!(top.split && top.octave.is_none(), "{top:?}");
        assert_eq!(octave(usize::MAX, MIN), OCTAVES - 1);
        assert_eq!(octave(0, MIN), 0);
    }

    #[test]
    fn split_ops_count_only_once_the_helpers_poll_and_wait_for_them_a_bounded_time() {
        let band = MidBand::default();
        let h = HALF as usize;
        // The first stretch: alone (helpers asleep does not matter there), then split.
        let alone: Vec<Choice> = (0..h).map(|_| band.choose(MIN, MIN, || false)).collect();
        assert!(alone.iter().all(|c| !c.split) && alone[1..].iter().all(|c| c.octave.is_some()));
        // The split half's first op wakes the helpers (uncounted, as every first op); while
        // they sleep its next ops split uncounted and the stretch does not move on.
        let waking: Vec<Choice> = (0..5).map(|_| band.choose(MIN, MIN, || false)).collect();
        assert!(
            waking.iter().all(|c| c.split && c.octave.is_none()),
            "{waking:?}"
        );
        // Once they poll, the half's remaining ops count.
        let counted: Vec<Choice> = (0..h - 1).map(|_| band.choose(MIN, MIN, || true)).collect();
        assert!(
            counted.iter().all(|c| c.split && c.octave == Some(0)),
            "{counted:?}"
        );
        assert_eq!(
            band.stretch[0].load(Ordering::Relaxed),
            0,
            "the stretch is over"
        );
        // Helpers that never poll (`DLARRAY_SPIN_US=0`): after `MAX_WAITS` ops the split half
        // counts anyway, wake-ups included, and the stretch ends.
        let band = MidBand::default();
        let mut ops = 0;
        while band.stretch[0].load(Ordering::Relaxed) != 1 || ops < h {
            band.choose(MIN, MIN, || false);
            ops += 1;
            assert!(
                ops < 2 * h + MAX_WAITS as usize + 2,
                "the stretch never ended"
            );
        }
        let last = band.choose(MIN, MIN, || false);
        assert!(last.split && last.octave == Some(0), "{last:?}");
        assert_eq!(ops + 1, 2 * h + MAX_WAITS as usize);
    }

    #[test]
    fn one_preempted_op_moves_the_figure_only_so_far_and_young_figures_learn_fast() {
        let band = MidBand::default();
        let c = Choice {
            split: true,
            octave: Some(0),
        };
        let figure = |band: &MidBand| band.cost[0][1].load(Ordering::Relaxed);
        // Young: the least sample so far (a cold first one is forgotten at once).
        band.record(c, MIN, Duration::from_nanos(40_000));
        band.record(c, MIN, Duration::from_nanos(2000));
        band.record(c, MIN, Duration::from_nanos(3000));
        let young = figure(&band);
        assert_eq!(young, 2000 * 1_000_000 / MIN as u64);
        for _ in 0..YOUNG {
            band.record(c, MIN, Duration::from_nanos(1000));
        }
        let before = figure(&band);
        assert!(before < young * 2 / 3, "{young} -> {before}");
        // Grown: one preempted op moves it by at most an eighth of the figure.
        band.record(c, MIN, Duration::from_millis(5));
        let after = figure(&band);
        assert!(after <= before + before / 8 + 1, "{before} -> {after}");
        // Zero traffic or time cannot divide by zero or store the "unmeasured" 0.
        band.record(c, 0, Duration::ZERO);
        assert!(band.cost[0][1].load(Ordering::Relaxed) > 0);
    }
}
