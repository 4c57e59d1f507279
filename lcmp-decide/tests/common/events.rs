//! Random event sequences against a small decider on testbed8's DC1 (two
//! groups over its six ports, a cache small enough to overflow), shared by
//! the stickiness and burst properties.

use super::*;
use lcmp_decide::flow_cache::SlotStorage;
use quickcheck::{Arbitrary, Gen};

/// The idle timeout of the paper's defaults.
pub const IDLE: u32 = Params::PAPER.idle_timeout_ticks;
/// Ports of the switch (testbed8 DC1) and its two groups.
pub const PORTS: u8 = 6;
pub const GROUPS: [GroupId; 2] = [GroupId(8), GroupId(9)];
/// More flows than a 16-slot cache holds, so it overflows.
pub const FLOWS: u32 = 40;

/// One event.
#[derive(Clone, Debug)]
pub enum Event {
    /// Packets of flows `n` (group `n % 2`) in one burst, duplicates
    /// included.
    Packets(Vec<u32>),
    Advance(u32),
    Sample(u8, u64),
    Flap(u8, bool),
    /// New tables: per group, a candidate mask over the six ports (an empty
    /// mask drops the group), a delay tweak and an idle timeout.
    Install([u8; 2], u32, bool),
    Gc(u16),
    SetCurrent(bool),
}

/// The group of flow `n`.
pub fn group_of(n: u32) -> GroupId {
    GROUPS[(n % 2) as usize]
}

impl Arbitrary for Event {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 16 {
            0..=7 => {
                let len = usize::arbitrary(g) % 40 + 1;
                // A few heavy hitters, so bursts repeat flows.
                let hot = bool::arbitrary(g);
                Event::Packets(
                    (0..len)
                        .map(|_| u32::arbitrary(g) % if hot { 4 } else { FLOWS })
                        .collect(),
                )
            }
            8 | 9 => Event::Advance(match u8::arbitrary(g) % 4 {
                0 => u32::arbitrary(g) % 3_000_000,
                _ => u32::arbitrary(g) % 400_000,
            }),
            // Deep queues (up to past the 5 GB buffer) and shallow ones.
            10 | 15 => Event::Sample(
                u8::arbitrary(g) % PORTS,
                u64::arbitrary(g)
                    % if bool::arbitrary(g) {
                        6_000_000_000
                    } else {
                        200_000_000
                    },
            ),
            11 => Event::Flap(u8::arbitrary(g) % PORTS, bool::arbitrary(g)),
            12 => Event::Install(
                [u8::arbitrary(g), u8::arbitrary(g)],
                u32::arbitrary(g) % 300,
                bool::arbitrary(g),
            ),
            13 => Event::Gc(u16::arbitrary(g) % 40),
            _ => Event::SetCurrent(bool::arbitrary(g)),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(std::iter::empty())
    }
}

/// testbed8 DC1's tables with each group's candidates masked.
pub fn tables_for(masks: [u8; 2], delay: u32, short_idle: bool) -> Tables {
    let mut t = testbed8_dc1(Params::PAPER.with_idle_timeout_ticks(if short_idle {
        500_000
    } else {
        IDLE
    }));
    let base = t.groups[0].clone();
    t.groups.clear();
    for (id, mask) in GROUPS.iter().zip(masks) {
        let mut g = base.clone();
        g.id = *id;
        g.candidates.retain(|c| mask & (1 << c.port.0) != 0);
        if let Some(c) = g.candidates.first_mut() {
            c.delay_units = delay;
        }
        if !g.candidates.is_empty() {
            t.groups.push(g).expect("capacity");
        }
    }
    t
}

/// The wrapping tick clock and its unwrapped twin.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub now: u32,
    pub abs: u64,
}

impl Clock {
    pub const START: Clock = Clock { now: 5, abs: 5 };

    pub fn instant(&self) -> Instant {
        Instant::from_ticks(self.now)
    }
}

/// A decider for the properties, with both groups installed.
pub fn install_start<S: SlotStorage>(d: &mut DeciderWith<8, S>) {
    d.install(&tables_for([0x3F, 0x3F], 25, false))
        .expect("valid");
}

/// Applies every event but `Packets` (the properties route those).
pub fn apply<S: SlotStorage>(d: &mut DeciderWith<8, S>, ev: &Event, clock: &mut Clock) {
    match *ev {
        Event::Packets(_) => {}
        Event::Advance(dt) => {
            clock.now = clock.now.wrapping_add(dt);
            clock.abs += u64::from(dt);
        }
        Event::Sample(p, q) => d.sample(clock.instant(), PortId(p), q).expect("port"),
        Event::Flap(p, on) => d.set_port_up(PortId(p), on).expect("port"),
        Event::Install(masks, delay, short) => {
            d.install(&tables_for(masks, delay, short)).expect("valid")
        }
        Event::Gc(budget) => {
            let _ = d.gc(clock.instant(), usize::from(budget));
        }
        Event::SetCurrent(c) => d.set_tables_current(c),
    }
}
