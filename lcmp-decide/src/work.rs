//! Work counters for tests: how many flow-cache bucket scans, candidate
//! reads and comparisons, gc slot visits and level comparisons the calls
//! made, so a test can assert the bounded-work promise of docs/design.md
//! ("The sans-IO contract") over random event streams
//! (`tests/bounded_work.rs`).
//!
//! Counting is on only with the test-only, unstable feature
//! `_work-counters` (smoltcp's `_netsim` convention): then the counters are
//! process-wide relaxed atomics, read and zeroed by [`take`], so a test
//! that uses them runs its calls on one thread at a time. Without the
//! feature every hook below is an empty `#[inline(always)]` function, so
//! the packet path compiles to what it was.

#[cfg(feature = "_work-counters")]
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The work done since the last [`take`], by kind.
#[cfg(feature = "_work-counters")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Flow-cache buckets whose eight slots were read as a whole (a tag
    /// search, a vacancy search, a displacement target, a reuse pass).
    pub bucket_scans: usize,
    /// Candidates of a group read by a pass of the new-flow decision
    /// (ranking, ECMP's count and pick, UCMP's maximum capacity).
    pub candidate_reads: usize,
    /// Comparisons of two candidates' ranking keys (the sort).
    pub candidate_comparisons: usize,
    /// Flow-cache slots visited by `gc`.
    pub gc_visits: usize,
    /// Level thresholds tested by `sample` (queue and trend levels).
    pub level_comparisons: usize,
}

#[cfg(feature = "_work-counters")]
static COUNTS: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];

/// The work done since the last call (on any thread), and zeroes it.
#[cfg(feature = "_work-counters")]
pub fn take() -> Work {
    let [a, b, c, d, e] = &COUNTS;
    Work {
        bucket_scans: a.swap(0, Relaxed),
        candidate_reads: b.swap(0, Relaxed),
        candidate_comparisons: c.swap(0, Relaxed),
        gc_visits: d.swap(0, Relaxed),
        level_comparisons: e.swap(0, Relaxed),
    }
}

macro_rules! hook {
    ($(#[$doc:meta] $name:ident => $i:literal),* $(,)?) => {
        $(
            #[$doc]
            #[inline(always)]
            pub(crate) fn $name() {
                #[cfg(feature = "_work-counters")]
                if let Some(c) = COUNTS.get($i) {
                    c.fetch_add(1, Relaxed);
                }
            }
        )*
    };
}

hook! {
    /// One flow-cache bucket scanned.
    bucket_scan => 0,
    /// One candidate read by a decision pass.
    candidate_read => 1,
    /// Two candidates' ranking keys compared.
    candidate_comparison => 2,
    /// One slot visited by `gc`.
    gc_visit => 3,
    /// One level threshold tested.
    level_comparison => 4,
}
