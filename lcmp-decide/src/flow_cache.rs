//! The bounded flow cache (`flow2output`, §3.1 step 4, §4).
//!
//! `N` slots (`N` a power of two of at least [`BUCKET`], checked at compile
//! time) in buckets of [`BUCKET`] consecutive slots. A flow has two candidate
//! buckets, chosen by two independent bit fields of its 64-bit fingerprint
//! ("two-choice" hashing), and is inserted into the one with more free
//! room; so every lookup, insert and refresh touches at most two buckets
//! (16 slots), and the table fills to about 80 % with under 0.1 % of inserts
//! refused (docs/performance.md). A slot is 12 bytes: the fingerprint's low
//! 56 bits (matched exactly), the egress port, and the last-seen tick.
//!
//! Idle entries (`now - last_seen > idle_timeout`) count as absent on
//! lookup, are reused on insert, and are cleared by the incremental
//! [`FlowCache::gc`], which visits a bounded number of slots per call. An
//! entry that is not idle is never evicted: when both buckets of a flow hold
//! only active flows, the insert fails and the caller routes the flow
//! statelessly (see [`crate::Decider::on_packet`]).
//!
//! Tick wrap-around: ages are taken modulo 2^32, so an entry older than
//! `2^32 - idle_timeout` ticks could look fresh again; a caller that runs
//! `gc` so that it sweeps the whole table at least once per 2^31 ticks (35
//! minutes at 1 µs a tick) never sees that.

use crate::tables::PortId;
use crate::time::Instant;

/// Slots in a bucket; a flow may live in either of its two buckets.
pub const BUCKET: usize = 8;

/// Marks an empty slot in the port byte (valid ports are below 255).
const EMPTY_PORT: u32 = 0xFF;

/// One slot: 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Slot {
    /// Fingerprint bits 0..32.
    tag_lo: u32,
    /// Fingerprint bits 32..56 (bits 8..32 here) and the port (bits 0..8).
    tag_hi_port: u32,
    /// Last packet, in ticks.
    last_seen: u32,
}

impl Slot {
    /// All ones: only the port byte (0xFF) marks a slot empty, and a
    /// byte-splat pattern lets `FlowCache::new()` compile to a `memset` of
    /// its destination (a `static`, a C caller's memory) instead of a 12 KiB
    /// stack temporary copied there (docs/firmware.md, "Stack").
    const EMPTY: Slot = Slot {
        tag_lo: u32::MAX,
        tag_hi_port: u32::MAX,
        last_seen: u32::MAX,
    };

    const fn tags(fingerprint: u64) -> (u32, u32) {
        // 56 bits are kept; the top 8 make room for the port byte.
        (
            fingerprint as u32,
            (((fingerprint >> 32) as u32) & 0x00FF_FFFF) << 8,
        )
    }

    const fn is_empty(&self) -> bool {
        self.tag_hi_port & 0xFF == EMPTY_PORT
    }

    const fn port(&self) -> PortId {
        PortId((self.tag_hi_port & 0xFF) as u8)
    }

    const fn matches(&self, tags: (u32, u32)) -> bool {
        !self.is_empty() && self.tag_lo == tags.0 && self.tag_hi_port & !0xFF == tags.1
    }

    const fn is_idle(&self, now: Instant, idle_timeout: u32) -> bool {
        now.ticks_since(Instant::from_ticks(self.last_seen)) > idle_timeout
    }
}

/// The result of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Pinned {
    /// Slot index (for [`FlowCache::refresh`] and [`FlowCache::repin`]).
    pub slot: usize,
    /// The pinned egress port.
    pub port: PortId,
}

/// A bounded flow → egress cache of `N` slots, no heap.
///
/// ```
/// # use lcmp_decide::{FlowCache, Instant, PortId};
/// let mut cache: FlowCache<1024> = FlowCache::new();
/// let now = Instant::from_ticks(10);
/// assert!(cache.insert(0xABCD, PortId(3), now, 2_000_000).is_ok());
/// assert_eq!(cache.lookup(0xABCD, now, 2_000_000).map(|p| p.port), Some(PortId(3)));
/// ```
///
/// The size must be a power of two of at least [`BUCKET`] slots; anything
/// else is a compile-time error:
///
/// ```compile_fail
/// let cache: lcmp_decide::FlowCache<1000> = lcmp_decide::FlowCache::new();
/// ```
#[derive(Clone, Debug)]
pub struct FlowCache<const N: usize> {
    slots: [Slot; N],
    len: usize,
    gc_cursor: usize,
}

/// What [`FlowCache::probe`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Probe {
    /// The flow's live entry.
    pub found: Option<Pinned>,
    /// Where an insert of the flow would go (`None`: both buckets full of
    /// active flows).
    vacant: Option<usize>,
}

/// Returned by [`FlowCache::insert`] when every slot of the flow's probe
/// window holds an active flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CacheFull;

impl<const N: usize> FlowCache<N> {
    const CHECK: () = assert!(
        N.is_power_of_two() && N >= BUCKET,
        "FlowCache size must be a power of two of at least BUCKET slots"
    );

    /// `N - 1`: slot indices are hashes masked with it.
    const MASK: usize = N.wrapping_sub(1);

    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        let () = Self::CHECK;
        FlowCache {
            slots: [Slot::EMPTY; N],
            len: 0,
            gc_cursor: 0,
        }
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Occupied slots (including idle ones that GC has not reached yet).
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether no slot is occupied.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes a slot takes.
    pub const SLOT_BYTES: usize = size_of::<Slot>();

    /// The first slots of a flow's two buckets (the same bucket twice when
    /// the cache has only one).
    const fn buckets(fingerprint: u64) -> [usize; 2] {
        [
            Self::bucket_start(fingerprint),
            Self::bucket_start(fingerprint >> 32),
        ]
    }

    /// First slot of the bucket that `bits` selects (a multiple of `BUCKET`).
    const fn bucket_start(bits: u64) -> usize {
        (bits as usize) & Self::MASK & !(BUCKET.wrapping_sub(1))
    }

    fn bucket(&self, start: usize) -> &[Slot] {
        self.slots
            .get(start..start.saturating_add(BUCKET))
            .unwrap_or(&[])
    }

    /// One pass over a flow's two buckets: its live entry, if any, and
    /// where an insert would go. [`FlowCache::lookup`] and
    /// [`FlowCache::insert`] are built on it; the packet path probes once and
    /// inserts with [`FlowCache::insert_probed`] without a second scan.
    pub fn probe(&self, fingerprint: u64, now: Instant, idle_timeout: u32) -> Probe {
        let tags = Slot::tags(fingerprint);
        let mut matching = None;
        // (free slots, first free slot) of each bucket.
        let mut room = [(0usize, None::<usize>); 2];
        'scan: for (start, room) in Self::buckets(fingerprint).into_iter().zip(room.iter_mut()) {
            for (j, s) in self.bucket(start).iter().enumerate() {
                let i = start | j;
                if s.matches(tags) {
                    matching = Some((i, s.port(), s.is_idle(now, idle_timeout)));
                    break 'scan;
                }
                if s.is_empty() || s.is_idle(now, idle_timeout) {
                    room.0 = room.0.saturating_add(1);
                    room.1 = room.1.or(Some(i));
                }
            }
        }
        let [a, b] = room;
        // Two-choice: the bucket with more room (the first on a tie). An
        // existing entry for the fingerprint, even an idle one, is reused.
        let vacant = match matching {
            Some((i, _, _)) => Some(i),
            None if b.0 > a.0 => b.1,
            None => a.1.or(b.1),
        };
        let found = matching
            .filter(|&(_, _, idle)| !idle)
            .map(|(slot, port, _)| Pinned { slot, port });
        Probe { found, vacant }
    }

    /// The live (not idle) entry for `fingerprint`, if any.
    pub fn lookup(&self, fingerprint: u64, now: Instant, idle_timeout: u32) -> Option<Pinned> {
        self.probe(fingerprint, now, idle_timeout).found
    }

    /// Marks a pinned entry as seen at `now`.
    pub fn refresh(&mut self, slot: usize, now: Instant) {
        if let Some(s) = self.slots.get_mut(slot) {
            s.last_seen = now.ticks();
        }
    }

    /// Points an existing entry at a new port (fast failover) and refreshes it.
    pub fn repin(&mut self, slot: usize, port: PortId, now: Instant) {
        if let Some(s) = self.slots.get_mut(slot) {
            if !s.is_empty() {
                s.tag_hi_port = (s.tag_hi_port & !0xFF) | u32::from(port.0);
                s.last_seen = now.ticks();
            }
        }
    }

    /// Removes the entry in `slot`.
    pub fn remove(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot) {
            if !s.is_empty() {
                *s = Slot::EMPTY;
                self.len = self.len.saturating_sub(1);
            }
        }
    }

    /// Pins `fingerprint` to `port`. An existing entry for the same
    /// fingerprint (even an idle one) is overwritten; otherwise an empty or
    /// idle slot of the emptier bucket is used. Port 255 is reserved.
    pub fn insert(
        &mut self,
        fingerprint: u64,
        port: PortId,
        now: Instant,
        idle_timeout: u32,
    ) -> Result<usize, CacheFull> {
        let probe = self.probe(fingerprint, now, idle_timeout);
        self.insert_probed(&probe, fingerprint, port, now)
    }

    /// [`FlowCache::insert`] into the slot a [`FlowCache::probe`] of the same
    /// fingerprint found, with no change to the cache in between.
    pub fn insert_probed(
        &mut self,
        probe: &Probe,
        fingerprint: u64,
        port: PortId,
        now: Instant,
    ) -> Result<usize, CacheFull> {
        if u32::from(port.0) == EMPTY_PORT {
            return Err(CacheFull);
        }
        let i = probe.vacant.ok_or(CacheFull)?;
        let slot = self.slots.get_mut(i).ok_or(CacheFull)?;
        if slot.is_empty() {
            self.len = self.len.saturating_add(1);
        }
        let tags = Slot::tags(fingerprint);
        *slot = Slot {
            tag_lo: tags.0,
            tag_hi_port: tags.1 | u32::from(port.0),
            last_seen: now.ticks(),
        };
        Ok(i)
    }

    /// Incremental garbage collection: visits the next `budget` slots
    /// (round robin, at most `N`), clears the idle ones, and returns how many
    /// it cleared. Calling it more often than needed is harmless.
    pub fn gc(&mut self, now: Instant, budget: usize, idle_timeout: u32) -> usize {
        let mut evicted = 0usize;
        for _ in 0..budget.min(N) {
            let i = self.gc_cursor & Self::MASK;
            self.gc_cursor = i.wrapping_add(1) & Self::MASK;
            if let Some(s) = self.slots.get_mut(i) {
                if !s.is_empty() && s.is_idle(now, idle_timeout) {
                    *s = Slot::EMPTY;
                    self.len = self.len.saturating_sub(1);
                    evicted = evicted.saturating_add(1);
                }
            }
        }
        evicted
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.slots = [Slot::EMPTY; N];
        self.len = 0;
        self.gc_cursor = 0;
    }
}

impl<const N: usize> Default for FlowCache<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use quickcheck::quickcheck;
    use std::vec::Vec;

    const IDLE: u32 = 2_000_000;

    #[test]
    fn slot_is_12_bytes() {
        assert_eq!(FlowCache::<8>::SLOT_BYTES, 12);
        assert_eq!(
            size_of::<FlowCache<1024>>(),
            1024 * 12 + 2 * size_of::<usize>()
        );
    }

    #[test]
    fn full_buckets_refuse_and_never_evict_active() {
        let mut c: FlowCache<32> = FlowCache::new();
        let now = Instant::from_ticks(0);
        // Sixteen fingerprints whose two buckets are 0 and 1 (bits 3..5 and
        // 35..37) fill those buckets.
        let fp = |i: u64| (i << 8) | (1 << 35);
        for i in 0..16u64 {
            assert!(c.insert(fp(i), PortId(i as u8), now, IDLE).is_ok());
        }
        assert_eq!(c.insert(fp(16), PortId(1), now, IDLE), Err(CacheFull));
        for i in 0..16u64 {
            assert_eq!(
                c.lookup(fp(i), now, IDLE).map(|p| p.port),
                Some(PortId(i as u8))
            );
        }
        // Other buckets are unaffected.
        assert!(c.insert(2 << 3, PortId(1), now, IDLE).is_ok());
        // Once idle, a slot is reused by an insert.
        let later = Instant::from_ticks(IDLE + 1);
        assert!(c.insert(fp(16), PortId(1), later, IDLE).is_ok());
        assert_eq!(c.len(), 17);
    }

    #[test]
    fn two_choice_fills_to_80_percent() {
        // 80 % of 4096 slots with well-mixed fingerprints: under 0.5 % refused.
        let mut c: FlowCache<4096> = FlowCache::new();
        let now = Instant::from_ticks(0);
        let mut refused = 0;
        for i in 0..3277u32 {
            let fp = crate::hash::murmur3_x86_32(&i.to_le_bytes(), 1) as u64
                | (u64::from(crate::hash::murmur3_x86_32(&i.to_le_bytes(), 2)) << 32);
            if c.insert(fp, PortId(0), now, IDLE).is_err() {
                refused += 1;
            }
        }
        assert!(refused < 16, "{refused} refused");
    }

    #[test]
    fn idle_entries_expire_and_gc_collects_them() {
        let mut c: FlowCache<16> = FlowCache::new();
        let t0 = Instant::from_ticks(u32::MAX - 10); // across the wrap
        assert!(c.insert(1, PortId(1), t0, IDLE).is_ok());
        assert!(c.insert(2, PortId(2), t0, IDLE).is_ok());
        let t1 = Instant::from_ticks(IDLE - 11); // exactly IDLE ticks later
        assert!(c.lookup(1, t1, IDLE).is_some());
        assert_eq!(c.gc(t1, 16, IDLE), 0);
        let t2 = Instant::from_ticks(IDLE - 10);
        assert!(c.lookup(1, t2, IDLE).is_none());
        // Budget is respected: 1 slot visited per call.
        let mut evicted = 0;
        for _ in 0..16 {
            evicted += c.gc(t2, 1, IDLE);
        }
        assert_eq!(evicted, 2);
        assert!(c.is_empty());
    }

    #[test]
    fn repin_and_remove() {
        let mut c: FlowCache<16> = FlowCache::new();
        let now = Instant::from_ticks(5);
        let slot = c.insert(77, PortId(1), now, IDLE).unwrap_or(usize::MAX);
        c.repin(slot, PortId(4), now);
        assert_eq!(c.lookup(77, now, IDLE).map(|p| p.port), Some(PortId(4)));
        c.remove(slot);
        assert!(c.lookup(77, now, IDLE).is_none());
        assert_eq!(c.len(), 0);
        assert_eq!(c.insert(1, PortId(255), now, IDLE), Err(CacheFull));
    }

    quickcheck! {
        fn gc_never_evicts_recent(flows: Vec<(u64, u32)>, budget: usize) -> bool {
            let mut c: FlowCache<64> = FlowCache::new();
            let now = Instant::from_ticks(3_000_000);
            // Time only moves forward: insert the oldest first.
            let mut flows: Vec<(u64, u32)> =
                flows.into_iter().map(|(fp, age)| (fp, age % (2 * IDLE))).collect();
            flows.sort_by_key(|&(_, age)| core::cmp::Reverse(age));
            let mut recent = Vec::new();
            for &(fp, age) in &flows {
                let seen = Instant::from_ticks(now.ticks().wrapping_sub(age));
                if c.insert(fp, PortId(1), seen, IDLE).is_ok() && age <= IDLE {
                    recent.push(fp);
                }
            }
            c.gc(now, budget % 200, IDLE);
            recent.iter().all(|fp| c.lookup(*fp, now, IDLE).is_some())
        }

        fn len_never_exceeds_capacity(fps: Vec<u64>) -> bool {
            let mut c: FlowCache<16> = FlowCache::new();
            for (i, fp) in fps.iter().enumerate() {
                let _ = c.insert(*fp, PortId(0), Instant::from_ticks(i as u32), IDLE);
            }
            c.len() <= 16
        }
    }
}
