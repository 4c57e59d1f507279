//! The packet model's event queue: a calendar queue (a timing wheel of
//! short slots, plus sorted-on-demand buckets for the far future) over integer
//! picoseconds that pops events in time order and, among events due at the
//! same picosecond, in the order they were pushed: the order of the binary
//! heap of `(time, insertion number)` it replaced.
//!
//! Hand-written: the timer wheels on crates.io fire a slot's timers
//! together or in no stated order, and the model's outputs depend on the
//! order of same-picosecond events. The binary heap kept that order but
//! cost a sift through all its levels per event (about half the run time,
//! docs/simulator.md "Cost"); a radix heap (tried) moved each event about
//! as often. Here, a push is a shift, a mask and a write into the slot's
//! cache line, a pop a bitmap scan and a read at the slot's head.
//!
//! The wheel holds the events of the next [`SLOTS`] slots of
//! 2^[`SLOT_SHIFT`] ps, from the current one on (a few microseconds:
//! intra-DC hops, serialisation, pacing); later ones wait in [`Far`]'s
//! buckets and move into the wheel, in `(time, insertion)` order, as soon
//! as it reaches their slot, before any event
//! for that slot can be pushed there directly. A slot is one cache line
//! (its first [`INLINE`] events; a slot of a busy nanosecond spills to a
//! `Vec`), reused every few microseconds.
//! Times pushed must not be earlier than the last popped (a discrete-event
//! simulation never schedules into the past); an earlier time is queued as
//! due at the last popped time.

use std::collections::{BTreeMap, VecDeque};

/// Slot width: 2^10 ps (1 ns: the 200 ms benchmark run has about 0.6
/// events a nanosecond, so a slot mostly holds 0-2 and an event rarely
/// goes in front of another). On that run, with 4 096 slots (the same
/// 4.2 us horizon), 22.3 s of CPU time against 24.9 s with 512 slots of
/// 8.2 ns each a `Vec` (the earlier design); 2^9, 2^11 and 2^12 ps, 1 or 2
/// or 7 events inline were 0.9-2.1 s dearer, half the slots (2.1 us
/// ahead) 0.4 s (docs/simulator.md "Cost").
const SLOT_SHIFT: u32 = 10;
/// Slots in the wheel: 2^12, about 4.2 us ahead (intra-DC hops of 1 us
/// plus serialisation, pacing).
const SLOTS: u64 = 1 << 12;
const MASK: u64 = SLOTS - 1;

/// An event waiting beyond the wheel ([`Far`]): time, insertion number, payload.
type Entry<T> = (u64, u64, T);

/// An event in a wheel slot: its time within the slot (the low
/// [`SLOT_SHIFT`] bits; the wheel's events span fewer than [`SLOTS`]
/// slots, so a slot holds the events of one absolute slot, whose number
/// gives the rest) and its payload. A slot keeps its events by time and,
/// among equal times, in push order (the far ones arrive first: they were
/// pushed before the wheel reached their slot, so before any event pushed
/// there directly, and [`Far`] hands them over in `(time, insertion)`
/// order), so the insertion number need not be stored: 16 bytes an
/// event, not 32.
type Slotted<T> = (u16, T);

/// A wheel slot, one cache line: its events sorted by time, equal times in
/// push order (an event goes after every one not later than it: mostly at
/// the end), those before `head` already popped. A pop takes the event at
/// `head`: no scan and no shift. A slot and its events in one line, not a
/// `Vec` header and a buffer elsewhere: a push or a pop touches one line
/// the wheel last touched a rotation (about 2 400 events) earlier.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Slot<T> {
    /// The events while there are at most [`INLINE`]: in the slot's own
    /// cache line.
    inline: [Slotted<T>; INLINE],
    /// Events in the slot (popped ones included) and the first not popped.
    len: u32,
    head: u32,
    /// The events are in `EventQueue::spill` (more than [`INLINE`]).
    spilled: bool,
}

/// Events a slot holds in its own cache line.
const INLINE: usize = 3;

/// Width of a far bucket: 2^22 ps (4.2 us, the wheel's span).
const FAR_SHIFT: u32 = 22;

/// The events beyond the wheel (mostly DCQCN's 900 us increase timers:
/// 25 000 at once on the 200 ms benchmark run, where a binary heap of
/// them cost 8 % of the run's time in cache misses, `perf`): unsorted in
/// buckets of 2^[`FAR_SHIFT`] ps by bucket number, but for the earliest
/// bucket, opened (sorted by time and insertion number) when the wheel
/// asks for its first event. A push appends to its bucket, or into the
/// open bucket in order.
struct Far<T> {
    /// Buckets after `open_bucket`, each in push order.
    buckets: BTreeMap<u64, Vec<Entry<T>>>,
    /// The events of buckets up to `open_bucket`, by time then insertion.
    open: VecDeque<Entry<T>>,
    open_bucket: u64,
    len: usize,
}

impl<T: Copy> Far<T> {
    fn new() -> Self {
        Far {
            buckets: BTreeMap::new(),
            open: VecDeque::new(),
            open_bucket: 0,
            len: 0,
        }
    }

    fn push(&mut self, e: Entry<T>) {
        self.len += 1;
        let b = e.0 >> FAR_SHIFT;
        if b > self.open_bucket {
            self.buckets.entry(b).or_default().push(e);
            return;
        }
        // Its insertion number is the highest: after every event not later.
        let at = self.open.partition_point(|x| x.0 <= e.0);
        self.open.insert(at, e);
    }

    /// The earliest event (time, then insertion), opening the next bucket
    /// if need be: everything in `buckets` is later than `open`.
    fn peek(&mut self) -> Option<Entry<T>> {
        if self.open.is_empty() {
            let (b, mut v) = self.buckets.pop_first()?;
            v.sort_unstable_by_key(|e| (e.0, e.1));
            self.open = VecDeque::from(v);
            self.open_bucket = b;
        }
        self.open.front().copied()
    }

    fn pop(&mut self) -> Option<Entry<T>> {
        self.peek()?;
        self.len -= 1;
        self.open.pop_front()
    }
}

/// The bits of a time below its slot number.
const IN_SLOT: u64 = (1 << SLOT_SHIFT) - 1;

/// Events by time, then push order (see the module doc).
pub(crate) struct EventQueue<T> {
    slots: Vec<Slot<T>>,
    /// By slot: the events of a slot that spilled, sorted like `inline`.
    spill: Vec<Vec<Slotted<T>>>,
    /// Bit `i` set: slot `i` holds events.
    occupied: Vec<u64>,
    /// The absolute slot number (`time >> SLOT_SHIFT`) of the current
    /// slot: the wheel holds the events of slots `cur..cur + SLOTS`.
    cur: u64,
    in_wheel: usize,
    far: Far<T>,
    /// The earliest far event's time (`u64::MAX`: none).
    far_next: u64,
    seq: u64,
    last: u64,
}

impl<T: Copy + Ord + Default> EventQueue<T> {
    pub(crate) fn new() -> Self {
        EventQueue {
            slots: vec![
                Slot {
                    inline: [(0, T::default()); INLINE],
                    len: 0,
                    head: 0,
                    spilled: false,
                };
                SLOTS as usize
            ],
            spill: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: vec![0; (SLOTS / 64) as usize],
            cur: 0,
            in_wheel: 0,
            far: Far::new(),
            far_next: u64::MAX,
            seq: 0,
            last: 0,
        }
    }

    /// Queues `ev` due at `t` (not before the last popped time).
    #[inline]
    pub(crate) fn push(&mut self, t: u64, ev: T) {
        let t = t.max(self.last);
        self.seq += 1;
        self.put((t, self.seq, ev));
    }

    #[inline(always)]
    fn put(&mut self, e: Entry<T>) {
        let abs = e.0 >> SLOT_SHIFT;
        if abs - self.cur >= SLOTS {
            self.far_next = self.far_next.min(e.0);
            self.far.push(e);
            return;
        }
        let slot = (abs & MASK) as usize;
        let low = (e.0 & IN_SLOT) as u16;
        let s = &mut self.slots[slot];
        // After the last event not later than this one (the popped ones,
        // before `head`, are not later: they were due first).
        let len = s.len as usize;
        if !s.spilled && len < INLINE {
            let mut at = len;
            while at > 0 && s.inline[at - 1].0 > low {
                s.inline[at] = s.inline[at - 1];
                at -= 1;
            }
            s.inline[at] = (low, e.2);
        } else {
            let v = &mut self.spill[slot];
            if !s.spilled {
                s.spilled = true;
                v.extend_from_slice(&s.inline);
            }
            match v.last() {
                Some(&(last, _)) if last > low => {
                    let at = v.partition_point(|x| x.0 <= low);
                    v.insert(at, (low, e.2));
                }
                _ => v.push((low, e.2)),
            }
        }
        s.len += 1;
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_wheel += 1;
    }

    /// Moves the wheel to absolute slot `abs` and the far events it now
    /// covers into it.
    fn advance(&mut self, abs: u64) {
        self.cur = abs;
        // Most moves (a slot of 1 ns) uncover no far event: no look.
        if (self.far_next >> SLOT_SHIFT) - abs >= SLOTS {
            return;
        }
        while let Some(e) = self.far.peek() {
            if (e.0 >> SLOT_SHIFT) - abs >= SLOTS {
                break;
            }
            self.far.pop();
            self.put(e);
        }
        self.far_next = self.far.peek().map_or(u64::MAX, |e| e.0);
    }

    /// Events queued.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.in_wheel + self.far.len
    }

    /// The earliest event (the first pushed among equal times).
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, T)> {
        if self.in_wheel == 0 {
            let (t, _, _) = self.far.peek()?;
            self.advance(t >> SLOT_SHIFT);
        }
        let (slot, abs) = self.next_slot()?;
        if abs != self.cur {
            // Every far event is later than the wheel's: those this
            // move uncovers land after `slot`.
            self.advance(abs);
        }
        let s = &mut self.slots[slot];
        let head = s.head as usize;
        let (low, ev) = if s.spilled {
            *self.spill[slot].get(head)?
        } else {
            *s.inline.get(head)?
        };
        s.head += 1;
        let t = (abs << SLOT_SHIFT) | u64::from(low);
        if s.head == s.len {
            if s.spilled {
                self.spill[slot].clear();
            }
            *s = Slot {
                len: 0,
                head: 0,
                spilled: false,
                ..*s
            };
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        self.in_wheel -= 1;
        self.last = t;
        Some((t, ev))
    }

    /// The earliest event without removing it.
    #[cfg(test)]
    pub(crate) fn peek(&self) -> Option<(u64, T)> {
        if self.in_wheel == 0 {
            let far = &self.far;
            let first = far.open.front().or_else(|| {
                let (_, v) = far.buckets.first_key_value()?;
                v.iter().min_by_key(|e| (e.0, e.1))
            });
            return first.map(|&(t, _, ev)| (t, ev));
        }
        let (slot, abs) = self.next_slot()?;
        let s = &self.slots[slot];
        let (low, ev) = if s.spilled {
            self.spill[slot][s.head as usize]
        } else {
            s.inline[s.head as usize]
        };
        Some(((abs << SLOT_SHIFT) | u64::from(low), ev))
    }

    /// The next occupied slot at or after the current one (circularly),
    /// and its absolute number.
    fn next_slot(&self) -> Option<(usize, u64)> {
        let start = (self.cur & MASK) as usize;
        let words = self.occupied.len();
        let mut w = start / 64;
        let mut bits = self.occupied[w] & (!0u64 << (start % 64));
        // At most once round, back to the start word's low bits.
        for _ in 0..words {
            if bits != 0 {
                break;
            }
            w = (w + 1) % words;
            bits = self.occupied[w];
        }
        if bits == 0 {
            return None;
        }
        let slot = w * 64 + bits.trailing_zeros() as usize;
        let ahead = (slot as u64).wrapping_sub(start as u64) & MASK;
        Some((slot, self.cur + ahead))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use quickcheck::{quickcheck, TestResult};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Runs a script against the queue and against a binary heap of
    /// `(time, insertion number)`: each step pushes events at the given
    /// offsets after the last popped time (small offsets, so ties are
    /// common), then pops one. Both must pop the same events.
    fn same_as_a_binary_heap(script: Vec<(Vec<(u8, u16)>, bool)>) -> TestResult {
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for (pushes, pop) in script {
            for (shift, off) in pushes {
                // Offsets from 0 to far ahead (up to 2^40 ps).
                let t = now + (u64::from(off) << (shift % 25));
                q.push(t, seq);
                h.push(Reverse((t, seq)));
                seq += 1;
            }
            if pop {
                let want = h.pop().map(|Reverse(x)| x);
                let got = q.pop();
                if got != want {
                    return TestResult::error(format!("popped {got:?}, want {want:?}"));
                }
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(Reverse(want)) = h.pop() {
            if q.pop() != Some(want) {
                return TestResult::failed();
            }
        }
        TestResult::from_bool(q.pop().is_none() && q.len() == 0)
    }

    #[test]
    fn pops_in_time_then_push_order_like_a_binary_heap() {
        quickcheck(same_as_a_binary_heap as fn(Vec<(Vec<(u8, u16)>, bool)>) -> TestResult);
    }

    #[test]
    fn a_slot_past_its_cache_line_spills_in_order_and_empties_clean() {
        // Seven events in one 1 ns slot (times 0-1023 ps), pushed out of
        // order with ties: the first three fill the slot's line, the
        // fourth spills them all to its `Vec`.
        let mut q = EventQueue::new();
        let times = [900u64, 100, 500, 100, 1000, 0, 500];
        for (i, &t) in times.iter().enumerate() {
            q.push(t, i);
        }
        // Time order; equal times in push order.
        let want = [
            (0, 5),
            (100, 1),
            (100, 3),
            (500, 2),
            (500, 6),
            (900, 0),
            (1000, 4),
        ];
        assert!(q.slots[0].spilled);
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, want);
        // Emptied, the slot is back in its line.
        assert!(!q.slots[0].spilled && q.spill[0].is_empty());
        // The slot is reused a rotation later (the same slot index) from
        // its line again: nothing of the spill is left.
        let later = SLOTS << SLOT_SHIFT;
        q.push(later + 7, 10);
        q.push(later + 3, 11);
        assert_eq!(q.len(), 2);
        assert!(!q.slots[0].spilled);
        assert_eq!(q.pop(), Some((later + 3, 11)));
        assert_eq!(q.pop(), Some((later + 7, 10)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_far_event_moves_in_as_soon_as_the_wheel_covers_it() {
        // A is pushed for the first slot past the wheel (a far event);
        // once the wheel has moved one slot, A's slot is inside it and B,
        // pushed then for the same time, goes straight into the wheel:
        // A, pushed first, must still pop first.
        let mut q = EventQueue::new();
        let t = SLOTS << SLOT_SHIFT;
        q.push(t, 'A');
        q.push(1 << SLOT_SHIFT, 'x');
        assert_eq!(q.pop(), Some((1 << SLOT_SHIFT, 'x')));
        q.push(t, 'B');
        assert_eq!(q.pop(), Some((t, 'A')));
        assert_eq!(q.pop(), Some((t, 'B')));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn equal_times_pushed_at_different_moments_pop_first_in_first_out() {
        // A at 100 pushed when `last` was 0 (a high bucket), then 60
        // popped, then B at 100 pushed with `last` 60: A still first.
        let mut q = EventQueue::new();
        q.push(100, 'A');
        q.push(60, 'x');
        assert_eq!(q.pop(), Some((60, 'x')));
        q.push(100, 'B');
        q.push(70, 'y');
        q.push(100, 'C');
        assert_eq!(q.len(), 4);
        assert_eq!(q.peek(), Some((70, 'y')));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(70, 'y'), (100, 'A'), (100, 'B'), (100, 'C')]);
    }
}
