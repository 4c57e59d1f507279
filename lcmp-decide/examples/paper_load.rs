//! The flow cache at the paper's own flow rates: how many new flows get no
//! pin in steady state (docs/performance.md, "Flow cache at the paper's
//! load").
//!
//! ```sh
//! cargo run --release -p lcmp-decide --example paper_load            # both loads
//! cargo run --release -p lcmp-decide --example paper_load websearch  # one
//! ```
//!
//! The loads are the paper's operating point (§6): 30 % of the DCI
//! switch's 16 x 100 Gbps of host traffic, i.e. `0.3 * 1.6e12 / 8 / mean`
//! new flows a second with the workloads' mean flow sizes (web search
//! 1.7 MB -> ~35 000/s, DCTCP SIGCOMM 2010; fb_hadoop 120 kB -> ~500 000/s,
//! Roy et al. SIGCOMM 2015). Arrivals are Poisson; each flow sends four
//! packets over 10 ms and then ends (its entry stays until it is idle
//! longer than the 2 s idle timeout of `Params::PAPER`, or is reused
//! sooner when that cannot reorder it). The decider runs testbed8's DC1
//! tables, one 1 ms queue sample per port (a depth drawn up to 1 MB: the
//! short queues of a 30 % load) and a gc step every 100 µs that sweeps the
//! whole table about twice per idle timeout.
//!
//! Prints, per load: new flows offered in the steady-state window, those
//! whose first packet found no room (`NoRoute(CacheFull)`), their share,
//! and the decider's counters.
#![allow(clippy::float_arithmetic)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;

use lcmp_decide::flow_cache::SlotBlock;
use lcmp_decide::*;

const GBPS: u64 = 1_000_000_000;
const DC8: GroupId = GroupId(8);
/// (capacity Gbps, one-way delay ms) of testbed8 DC1's six ports.
const PORTS: [(u64, u32); 6] = [
    (200, 25),
    (200, 250),
    (100, 10),
    (100, 100),
    (25, 5),
    (25, 50),
];
/// Packet offsets of a flow, µs: four packets over 10 ms.
const PACKETS_US: [u32; 4] = [0, 3_333, 6_667, 10_000];
const SAMPLE_US: u32 = 1_000;
const GC_US: u32 = 100;

struct Load {
    name: &'static str,
    new_flows_per_s: f64,
    slots: usize,
    seconds: u32,
    warmup_s: u32,
}

const LOADS: [Load; 2] = [
    Load {
        name: "websearch",
        new_flows_per_s: 0.3 * 1.6e12 / 8.0 / 1.7e6,
        slots: 65_536,
        seconds: 10,
        warmup_s: 4,
    },
    Load {
        name: "fb_hadoop",
        new_flows_per_s: 0.3 * 1.6e12 / 8.0 / 1.2e5,
        slots: 1_048_576,
        seconds: 8,
        warmup_s: 4,
    },
];

/// splitmix64: a seeded, reproducible stream (the example needs no
/// statistical quality beyond well-mixed bits).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn tables() -> Tables {
    let mut t = Tables::paper_defaults();
    let mut g = Group {
        id: DC8,
        candidates: heapless::Vec::new(),
    };
    for (i, (gbps, ms)) in PORTS.iter().enumerate() {
        let id = PortId(i as u8);
        let _ = t.ports.push(PortConfig {
            id,
            rate_bps: gbps * GBPS,
            buffer_bytes: 5_000_000_000,
        });
        let _ = g.candidates.push(Candidate {
            port: id,
            delay_units: *ms,
            capacity_bps: gbps * GBPS,
        });
    }
    let _ = t.groups.push(g);
    t
}

fn flow(i: u64) -> FlowKey {
    let ip = (i & 0xFFFF_FFFF) as u32;
    FlowKey::v4(
        Ipv4Addr::from(0x0A00_0000 | (ip & 0x00FF_FFFF)),
        Ipv4Addr::from(0x0A08_0000 | (ip >> 24)),
        (i >> 16) as u16 ^ 0x1234,
        4791,
        17,
    )
}

fn run(load: &Load) {
    let mut blocks = vec![SlotBlock::EMPTY; load.slots / 16];
    let mut d: DeciderRef<'_, 8> =
        DeciderRef::with_slots(DeciderConfig::DEFAULT, &mut blocks).expect("power of two");
    d.install(&tables()).expect("valid tables");
    let mut rng = Rng(0x5EED ^ load.slots as u64);
    let end_us = load.seconds * 1_000_000;
    let warm_us = load.warmup_s * 1_000_000;
    let gc_budget = (load.slots / 10_000).max(16);
    // (time µs, flow, packet index) of pending packets.
    let mut pending: BinaryHeap<Reverse<(u32, u64, usize)>> = BinaryHeap::new();
    let mut next_arrival = 0.0f64;
    let mut next_flow = 0u64;
    let (mut offered, mut refused_first, mut refused_any_flow) = (0u64, 0u64, 0u64);
    let mut refused_flag: Vec<bool> = Vec::new();
    let mut now = 0u32;
    while now < end_us {
        let step_end = now + GC_US;
        while next_arrival < f64::from(step_end) {
            let t = next_arrival as u32;
            pending.push(Reverse((t, next_flow, 0)));
            next_flow += 1;
            refused_flag.push(false);
            next_arrival += -rng.unit().max(1e-12).ln() / load.new_flows_per_s * 1e6;
        }
        while let Some(&Reverse((t, f, k))) = pending.peek() {
            if t >= step_end {
                break;
            }
            pending.pop();
            let decision = d.on_packet(Instant::from_ticks(t), &flow(f), DC8);
            let in_window = t >= warm_us;
            let refused = decision == Decision::NoRoute(Reason::CacheFull);
            if k == 0 && in_window {
                offered += 1;
                refused_first += u64::from(refused);
            }
            if refused && in_window {
                if let Some(flag) = refused_flag.get_mut(f as usize) {
                    if !*flag {
                        *flag = true;
                        refused_any_flow += 1;
                    }
                }
            }
            if let Some(&dt) = PACKETS_US.get(k + 1) {
                pending.push(Reverse((t - PACKETS_US[k] + dt, f, k + 1)));
            }
        }
        now = step_end;
        if now.is_multiple_of(SAMPLE_US) {
            for p in 0..PORTS.len() {
                let depth = rng.next() % 1_000_000;
                let _ = d.sample(Instant::from_ticks(now), PortId(p as u8), depth);
            }
        }
        d.gc(Instant::from_ticks(now), gc_budget);
    }
    let c = d.counters();
    println!(
        "{:<10} {:>8.0} new/s  {:>8} slots  window {}-{} s: {} new flows, {} refused at first packet ({:.3} %), {} refused at any packet ({:.3} %)",
        load.name,
        load.new_flows_per_s,
        load.slots,
        load.warmup_s,
        load.seconds,
        offered,
        refused_first,
        100.0 * refused_first as f64 / offered.max(1) as f64,
        refused_any_flow,
        100.0 * refused_any_flow as f64 / offered.max(1) as f64,
    );
    println!("           counters: {c:?}");
    println!(
        "           cache: {} of {} slots occupied at the end",
        d.flow_cache().len(),
        d.flow_cache().capacity()
    );
}

fn main() {
    let only = std::env::args().nth(1);
    for load in &LOADS {
        if only.as_deref().is_none_or(|o| o == load.name) {
            run(load);
        }
    }
}
