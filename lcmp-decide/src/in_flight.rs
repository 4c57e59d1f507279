//! How long a flow's last packet can still be in flight on its old path:
//! the bound that lets the decider reuse the flow-cache entry of an idle
//! flow before the idle timeout without reordering it (flowlet switching,
//! as CONGA and LetFlow do, with a gap derived from the tables and the
//! queue samples instead of a fixed constant). docs/design.md, "The in-order
//! promise", has the argument; in short:
//!
//! A packet sent on port `p` at `t` leaves `p`'s egress queue by
//! `t + drain` and reaches the far end by `t + drain + delay(p)`. A packet
//! of the same flow sent at `now` on any candidate `c` of its group arrives
//! no earlier than `now + min_c delay(c)`. So moving the flow at `now`
//! cannot reorder it when
//!
//! ```text
//! now - t > drain + (delay(p) - min_c delay(c))
//! ```
//!
//! The second term is the port's *reorder window*, fixed by the tables
//! (the largest such difference over every group `p` serves). The first is
//! bounded per port from what the decider has seen:
//!
//! * With no sample of the port since `t`, the queue can have held at most
//!   the port's whole buffer: `drain <= buffer / rate`.
//! * Otherwise let `s1` be the first sample after `t`. A FIFO queue that
//!   holds the packet at `s1` holds it within its first `Q(s1)` bytes, so the
//!   packet leaves by `s1 + Q(s1) / rate` (or had left before `s1`). The
//!   decider keeps, over the current and the previous epoch, the largest
//!   queueing delay `Q / rate` of any sample in force and the largest gap
//!   between two consecutive samples, so `s1 - t <= gap` and
//!   `Q(s1) / rate <= peak`: `drain <= gap + peak` (and still `<= buffer /
//!   rate`). The gap term is the margin for the staleness of the samples: a
//!   queue that grew between samples shows in the next one.
//!
//! An epoch is half the idle timeout; an entry older than the previous
//! epoch's start gets the buffer bound. Every value is in ticks, rounded up.
//! A down port's queue no longer drains into the path (and the flow would
//! be failed over at its next packet anyway), and a port the tables no
//! longer list would see its flow withdrawn: their entries may be reused at
//! once.

use crate::narrow_div::div_u64_to_u32;
use crate::tables::CompiledTables;
use crate::time::Instant;

/// A port's reorder window in ticks, or unknown (the tables do not say the
/// delay unit: no entry of the port is reused early). Four bytes, not an
/// `Option<u32>`'s eight: [`InFlight`] is one per port and the C ABI's
/// decider header has no slack; `u32::MAX` stands for unknown here and
/// nowhere else, and a known window is clamped one below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Window(u32);

impl Window {
    const UNKNOWN: Window = Window(u32::MAX);
    const ZERO: Window = Window(0);

    /// From [`CompiledTables::reorder_window_ticks`].
    const fn new(ticks: Option<u32>) -> Window {
        match ticks {
            Some(t) if t < u32::MAX => Window(t),
            Some(_) => Window(u32::MAX - 1),
            None => Window::UNKNOWN,
        }
    }

    /// The window, `None` when unknown.
    const fn ticks(self) -> Option<u32> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }
}

/// Per-port state of the in-flight bound (40 bytes; a decider keeps one per
/// port beside the congestion monitor's [`crate::monitor::PortState`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct InFlight {
    /// The port's reorder window.
    window: Window,
    /// `buffer / rate`, ticks (0 for a port the tables do not list).
    buffer: u32,
    /// Whether the tables list the port.
    listed: bool,
    /// Whether any sample arrived since the decider was built or reset.
    sampled: bool,
    /// The last sample's time.
    last: Instant,
    /// Start of the current epoch and of the previous one.
    epoch: Instant,
    prev_epoch: Instant,
    /// Largest queueing delay in force during the current / previous
    /// epoch, ticks.
    peak: u32,
    prev_peak: u32,
    /// Largest interval between consecutive samples ending in the current
    /// / previous epoch, ticks.
    gap: u32,
    prev_gap: u32,
}

/// `ceil(bytes * 8 * ticks_per_second / rate_bps)`, saturating at
/// `u32::MAX` (a rate of 0 is never valid tables; it saturates too).
///
/// No 64- or 128-bit division (a sample's cost, docs/firmware.md, "Cost
/// table"): the tick count saturates at 32 bits, so
/// [`div_u64_to_u32`] serves, and a numerator past 64 bits (a queue of
/// over 2.3 TB at a microsecond tick) takes 32 shift-and-subtract steps.
/// The same ticks bit for bit as the `u128` division (a property below).
fn drain_ticks(bytes: u64, rate_bps: u64, ticks_per_second: u32) -> u32 {
    if rate_bps == 0 {
        return u32::MAX;
    }
    if bytes == 0 || ticks_per_second == 0 {
        return 0;
    }
    let num = bytes
        .checked_mul(8)
        .and_then(|bits| bits.checked_mul(u64::from(ticks_per_second)));
    // ceil(num / rate) = floor((num - 1) / rate) + 1, num > 0 here.
    let floor = match num {
        Some(num) => div_u64_to_u32(num.wrapping_sub(1), rate_bps),
        None => wide_floor(bytes, rate_bps, ticks_per_second),
    };
    floor.map_or(u32::MAX, |q| q.saturating_add(1))
}

/// `floor((bytes * 8 * ticks_per_second - 1) / rate)` when it fits in 32
/// bits, for a product past 64 bits (`rate > 0`): restoring division, one
/// quotient bit a step. Out of line: only a queue of terabytes takes it,
/// so a sample's stack and code do not pay for it.
#[cold]
#[inline(never)]
fn wide_floor(bytes: u64, rate: u64, ticks_per_second: u32) -> Option<u32> {
    // Past 64 bits, so at least 2^64 - 1 after the decrement; below 2^99.
    let m = u128::from(bytes)
        .saturating_mul(8)
        .saturating_mul(u128::from(ticks_per_second))
        .saturating_sub(1);
    let rate = u128::from(rate);
    if m >= rate << 32 {
        return None;
    }
    let mut rem = m;
    let mut q = 0u32;
    for bit in (0..32).rev() {
        let d = rate << bit;
        if rem >= d {
            rem = rem.wrapping_sub(d);
            q |= 1 << bit;
        }
    }
    Some(q)
}

impl InFlight {
    /// A port with no tables (a decider without tables routes nothing,
    /// so no entry exists to reuse). All zero bytes, so that an empty
    /// decider is built in place by a `memset` (docs/firmware.md, "Stack").
    pub(crate) const NEW: InFlight = InFlight {
        window: Window::ZERO,
        buffer: 0,
        listed: false,
        sampled: false,
        last: Instant::ZERO,
        epoch: Instant::ZERO,
        prev_epoch: Instant::ZERO,
        peak: 0,
        prev_peak: 0,
        gap: 0,
        prev_gap: 0,
    };

    /// Takes the port's window and buffer drain from newly installed
    /// tables. Samples taken under the previous tables stay valid (the
    /// queue did not change with the tables), so peaks and gaps are kept.
    pub(crate) fn on_install(&mut self, tables: &CompiledTables, port: u8) {
        let params = tables.params();
        match tables.port(crate::tables::PortId(port)) {
            Some(p) => {
                self.listed = true;
                self.buffer = drain_ticks(p.buffer_bytes, p.rate_bps, params.ticks_per_second);
                self.window = Window::new(tables.reorder_window_ticks(crate::tables::PortId(port)));
            }
            None => {
                self.listed = false;
                self.buffer = 0;
                self.window = Window::UNKNOWN;
            }
        }
    }

    /// Folds in one queue sample of `queue_bytes` at `now`, under the
    /// port's rate (an unlisted port only records the time). `epoch` is
    /// the epoch length in ticks (at least 1).
    pub(crate) fn on_sample(
        &mut self,
        now: Instant,
        queue_bytes: u64,
        rate: Option<(u64, u32)>,
        epoch: u32,
    ) {
        // The queueing delay this sample puts in force, at most the
        // buffer's (a queue cannot hold more than its buffer).
        let delay = rate.map_or(u32::MAX, |(bps, tps)| {
            drain_ticks(queue_bytes, bps, tps).min(self.buffer)
        });
        if !self.sampled {
            self.sampled = true;
            self.epoch = now;
            self.prev_epoch = now;
            self.peak = delay;
            self.prev_peak = delay;
            self.gap = 0;
            self.prev_gap = 0;
            self.last = now;
            return;
        }
        let interval = now.ticks_since(self.last);
        if now.ticks_since(self.epoch) >= epoch {
            // A new epoch starts at this sample. Epochs start at samples, so
            // the sample in force at any time since the previous epoch's
            // start, and the first sample after it, are folded into one of
            // the two epochs.
            self.prev_epoch = self.epoch;
            self.prev_peak = self.peak;
            self.prev_gap = self.gap;
            self.epoch = now;
            self.peak = 0;
            self.gap = 0;
        }
        self.peak = self.peak.max(delay);
        self.gap = self.gap.max(interval);
        self.last = now;
    }

    /// An upper bound on how long after `sent` a packet sent on the port at
    /// `sent` can still be in its egress queue, seen at `now`.
    fn drain_bound(&self, now: Instant, sent: Instant) -> u32 {
        let age = now.ticks_since(sent);
        let sampled_since = self.sampled && now.ticks_since(self.last) < age;
        let in_epochs = age <= now.ticks_since(self.prev_epoch);
        if sampled_since && in_epochs {
            self.gap
                .max(self.prev_gap)
                .saturating_add(self.peak.max(self.prev_peak))
                .min(self.buffer)
        } else {
            self.buffer
        }
    }

    /// Whether a flow whose last packet left on this port at `last_seen`
    /// can be moved at `now` without any packet of it arriving before an
    /// earlier one (`up`: the port's liveness).
    pub(crate) fn may_move(&self, now: Instant, last_seen: Instant, up: bool) -> bool {
        if !up || !self.listed {
            return true;
        }
        let Some(window) = self.window.ticks() else {
            return false;
        };
        let age = now.ticks_since(last_seen);
        age > self.drain_bound(now, last_seen).saturating_add(window)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const TPS: u32 = 1_000_000;
    const GBPS: u64 = 1_000_000_000;
    /// 100 Gbps, 1 µs ticks: 12 500 bytes a tick.
    const RATE: Option<(u64, u32)> = Some((100 * GBPS, TPS));
    const EPOCH: u32 = 1_000_000;

    fn t(ticks: u32) -> Instant {
        Instant::from_ticks(ticks)
    }

    /// A listed 100 Gbps port with a 5 GB buffer (400 000 ticks to drain)
    /// and a 20 ms reorder window.
    fn port() -> InFlight {
        InFlight {
            window: Window::new(Some(20_000)),
            buffer: drain_ticks(5_000_000_000, 100 * GBPS, TPS),
            listed: true,
            ..InFlight::NEW
        }
    }

    /// The arithmetic `drain_ticks` replaced, kept as the oracle: the
    /// `u128` division.
    fn drain_ticks_by_division(bytes: u64, rate_bps: u64, ticks_per_second: u32) -> u32 {
        let bits = u128::from(bytes).saturating_mul(8);
        let num = bits.saturating_mul(u128::from(ticks_per_second));
        let ticks = match u128::from(rate_bps) {
            0 => u128::MAX,
            r => num.div_ceil(r),
        };
        u32::try_from(ticks).unwrap_or(u32::MAX)
    }

    quickcheck::quickcheck! {
        /// The same ticks as the division, for any depth, rate and tick
        /// rate, and for depths at and next to a whole number of ticks.
        fn drain_ticks_matches_the_division(
            bytes: u64, rate: u64, tps: u32, ticks: u32, nudge: i8, shift: u8
        ) -> bool {
            let rate = rate >> (shift % 64);
            let near = (u128::from(ticks) * u128::from(rate))
                .checked_div(8 * u128::from(tps))
                .and_then(|b| u64::try_from(b).ok())
                .map_or(bytes, |b| b.saturating_add_signed(i64::from(nudge)));
            [bytes, near, bytes >> 24].iter().all(|&b| {
                drain_ticks(b, rate, tps) == drain_ticks_by_division(b, rate, tps)
            })
        }
    }

    #[test]
    fn drain_ticks_golden() {
        assert_eq!(drain_ticks(12_500, 100 * GBPS, TPS), 1);
        assert_eq!(drain_ticks(12_501, 100 * GBPS, TPS), 2); // rounded up
        assert_eq!(drain_ticks(5_000_000_000, 100 * GBPS, TPS), 400_000);
        assert_eq!(drain_ticks(5_000_000_000, 25 * GBPS, TPS), 1_600_000);
        assert_eq!(drain_ticks(1, 0, TPS), u32::MAX);
        assert_eq!(drain_ticks(u64::MAX, 1, u32::MAX), u32::MAX);
        assert_eq!(drain_ticks(0, 1, TPS), 0);
        // Past 64 bits of bit-ticks: the restoring division.
        let (bytes, rate) = (u64::MAX / 2, 1u64 << 62);
        let want = drain_ticks_by_division(bytes, rate, TPS);
        assert!(want > 1 && want < u32::MAX, "{want}");
        assert_eq!(drain_ticks(bytes, rate, TPS), want);
    }

    #[test]
    fn no_sample_yet_waits_for_the_whole_buffer() {
        let p = port();
        let sent = t(10);
        // Idle exactly buffer + window: not yet; one tick more: yes.
        assert!(!p.may_move(t(10 + 420_000), sent, true));
        assert!(p.may_move(t(10 + 420_001), sent, true));
    }

    #[test]
    fn a_sample_after_the_send_bounds_the_queue() {
        let mut p = port();
        p.on_sample(t(0), 125_000_000, RATE, EPOCH); // 10 000 ticks of queue
        p.on_sample(t(1_000), 12_500_000, RATE, EPOCH); // 1 000 ticks
        let sent = t(1_500);
        // Only the stale sample (before the send): the buffer bound.
        assert!(!p.may_move(t(1_500 + 420_000), sent, true));
        p.on_sample(t(2_000), 0, RATE, EPOCH);
        // Gap 1 000, peak 10 000, window 20 000: 31 000 ticks.
        assert!(!p.may_move(t(1_500 + 31_000), sent, true));
        assert!(p.may_move(t(1_500 + 31_001), sent, true));
        // A deeper sample raises the bound (its queue may hold the packet).
        p.on_sample(t(3_000), 625_000_000, RATE, EPOCH); // 50 000 ticks
        assert!(!p.may_move(t(1_500 + 71_000), sent, true));
        assert!(p.may_move(t(1_500 + 71_001), sent, true));
        // A long gap between samples widens it too.
        p.on_sample(t(203_000), 0, RATE, EPOCH);
        assert!(!p.may_move(t(1_500 + 270_000), sent, true));
        assert!(p.may_move(t(1_500 + 270_001), sent, true));
    }

    /// A sample taken at the send's own tick does not bound the packet: it
    /// may have been queued just after the sample was read.
    #[test]
    fn a_sample_at_the_send_tick_is_not_after_it() {
        let mut p = port();
        p.on_sample(t(0), 0, RATE, EPOCH);
        p.on_sample(t(1_000), 0, RATE, EPOCH);
        let sent = t(1_000);
        // Gap 1 000, peak 0, window 20 000 would be 21 000 ticks; it is the
        // buffer bound (400 000 + 20 000).
        assert!(!p.may_move(t(1_000 + 21_001), sent, true));
        assert!(!p.may_move(t(1_000 + 420_000), sent, true));
        assert!(p.may_move(t(1_000 + 420_001), sent, true));
    }

    #[test]
    fn the_bound_never_exceeds_the_buffer() {
        let mut p = port();
        p.on_sample(t(0), u64::MAX, RATE, EPOCH);
        p.on_sample(t(900_000), u64::MAX, RATE, EPOCH);
        let sent = t(1);
        assert!(!p.may_move(t(1 + 420_000), sent, true));
        assert!(p.may_move(t(1 + 420_001), sent, true));
    }

    #[test]
    fn old_epochs_are_forgotten_but_old_sends_get_the_buffer() {
        let mut p = port();
        p.on_sample(t(0), 1_250_000_000, RATE, EPOCH); // 100 000 ticks
        for k in 1..=30u32 {
            p.on_sample(t(k * 100_000), 0, RATE, EPOCH);
        }
        // Two epochs later the deep sample no longer counts for a recent
        // send: gap 100 000, peak 0.
        let sent = t(2_950_000);
        assert!(!p.may_move(t(3_000_000 + 70_000), sent, true));
        assert!(p.may_move(t(2_950_000 + 120_001), sent, true));
        // A send before the previous epoch's start gets the buffer bound.
        let old = t(100);
        assert!(!p.may_move(t(100 + 420_000), old, true));
    }

    /// The window round-trips; unknown stays unknown; a window too long
    /// for `u32` is clamped below the one value that means unknown (so a
    /// saturated window still lets a flow move once it is that old).
    #[test]
    fn windows_known_unknown_and_saturated() {
        assert_eq!(Window::new(Some(0)).ticks(), Some(0));
        assert_eq!(Window::new(Some(20_000)).ticks(), Some(20_000));
        assert_eq!(Window::new(Some(u32::MAX - 1)).ticks(), Some(u32::MAX - 1));
        assert_eq!(Window::new(Some(u32::MAX)).ticks(), Some(u32::MAX - 1));
        assert_eq!(Window::new(None).ticks(), None);
        assert_eq!(Window::ZERO.ticks(), Some(0));
        assert_eq!(Window::UNKNOWN.ticks(), None);
    }

    #[test]
    fn down_unlisted_and_unknown_units() {
        let p = port();
        // A down port's entries may go at once.
        assert!(p.may_move(t(1), t(1), false));
        // A port the tables do not list: its flows are withdrawn anyway.
        assert!(InFlight { listed: false, ..p }.may_move(t(1), t(1), true));
        // No delay unit: never before the idle timeout.
        let unknown = InFlight {
            window: Window::UNKNOWN,
            ..p
        };
        assert!(!unknown.may_move(t(u32::MAX), t(0), true));
    }
}
