//! The data plane's flow pins at the paper's load, through the interpreter
//! (the mirror of `lcmp.p4`): how many flows find no pin cell, and how many
//! change port while their port stays up and a candidate (docs/tofino.md,
//! "At the paper's load"; docs/performance.md, "Tofino").
//!
//! ```sh
//! cargo run --release -p lcmp-tofino --example tofino_paper_load                    # all
//! cargo run --release -p lcmp-tofino --example tofino_paper_load websearch tofino2  # some
//! cargo run --release -p lcmp-tofino --example tofino_paper_load fb_hadoop reuse+fallback
//! ```
//!
//! Arguments pick loads (`websearch`, `fb_hadoop`), chips (`tofino1`,
//! `tofino2`) and programs (`before`, `reuse`, `reuse+fallback`); none of
//! a kind: all of it. Each run also prints its unpinned share per 1 s
//! window after the warm-up, which agree in a steady state.
//!
//! The workload is the core's `lcmp-decide/examples/paper_load.rs`: 30 % of
//! the DCI switch's 16 x 100 Gbps of host traffic with the workloads' mean
//! flow sizes (web search 1.7 MB: ~35 000 new flows/s; fb_hadoop 120 kB:
//! ~500 000/s), Poisson arrivals, each flow four packets over 10 ms, the
//! 2 s idle timeout, testbed8 DC1 towards DC8. The agent polls every port's
//! queue every 10 ms (a depth drawn up to 1 MB, in the target's cells),
//! and every 0.5 s one port drawn at random (or none) holds 4-4.6 GB, as in
//! the golden state, which moves selection buckets; each poll's entries are
//! installed at once.
//!
//! Three programs per chip, at its default pin cells (2 x 65 536; Tofino
//! 2's ways in halves of 32 768, `lcmp_tofino::halves`), and on Tofino 2
//! also at 2 x 32 768, its default before its ways were halved:
//!
//! * **before** (the program before issue 32): a cell is taken only past
//!   the idle timeout, and a flow no cell holds follows the selection;
//! * **reuse**: the agent writes the safe gap of its polls
//!   (`Agent::pin_gap_units`) into the pin registers' parameters;
//! * **reuse+fallback**: also, a flow no cell holds takes its group's
//!   stable fallback (`lcmp_fallback`), and one that takes a cell within
//!   the idle timeout of going unpinned pins that port (`lcmp_unpinned`).
//!
//! Counted over the flows that start after the warm-up (4 s): flows with a
//! packet no cell held ("unpinned"), and flows whose packets left on more
//! than one port ("moved": every port stays up and a candidate here, and a
//! flow lives 10 ms, far less than any safe gap, so every move is one the
//! in-order promise forbids).
#![allow(clippy::float_arithmetic)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lcmp_decide::{DeciderConfig, HashAlgorithm, Instant, PortId, Scheme};
use lcmp_tofino::hash::Headers;
use lcmp_tofino::interp::{Interpreter, PinRegisters};
use lcmp_tofino::model::{Target, DEFAULT_PIN_SLOTS};
use lcmp_tofino::schema::names;
use lcmp_tofino::{Agent, EntrySet, ExportOptions};

/// Packet offsets of a flow, µs: four packets over 10 ms.
const PACKETS_US: [u32; 4] = [0, 3_333, 6_667, 10_000];
const POLL_US: u32 = 10_000;
const WARMUP_US: u32 = 4_000_000;

struct Load {
    name: &'static str,
    new_flows_per_s: f64,
    seconds: u32,
}

const LOADS: [Load; 2] = [
    Load {
        name: "websearch",
        new_flows_per_s: 0.3 * 1.6e12 / 8.0 / 1.7e6,
        seconds: 8,
    },
    // 14 s: ten 1 s windows after the warm-up, six or more cycles of the
    // cells' turnover (all cells fill within 0.26 s and free one gap
    // later), so the figure is an average over its phases, not one phase.
    Load {
        name: "fb_hadoop",
        new_flows_per_s: 0.3 * 1.6e12 / 8.0 / 1.2e5,
        seconds: 14,
    },
];

/// splitmix64, as the core's example.
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

/// Flow `i` towards DC8 (`10.8.0.0/16`).
fn flow(i: u64) -> Headers {
    let ip = (i & 0xFFFF_FFFF) as u32;
    Headers {
        src: 0x0A00_0000 | (ip & 0x00FF_FFFF),
        dst: 0x0A08_0000 | (ip >> 24),
        sport: (i >> 16) as u16 ^ 0x1234,
        dport: 4791,
        proto: 17,
    }
}

fn agent(target: Target, pin_slots: u32) -> Agent {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig::default()
        .with_scheme(Scheme::Lcmp)
        .with_hash(HashAlgorithm::Crc32);
    let opts = ExportOptions {
        pin_slots,
        target,
        ..ExportOptions::default()
    };
    lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts).expect("agent")
}

/// The entries as the program before issue 32 used them: no fallback.
fn without_fallback(mut e: EntrySet) -> EntrySet {
    e.entries.retain(|e| e.table != names::FALLBACK);
    e
}

#[derive(Default)]
struct Counts {
    flows: u64,
    unpinned: u64,
    moved: u64,
    polls: u64,
    moved_buckets: u64,
    gap_units: (u32, u32),
    /// Per 1 s window after the warm-up (by flow start): flows, unpinned.
    windows: Vec<(u64, u64)>,
}

fn run(load: &Load, target: Target, pin_slots: u32, reuse: bool, fallback: bool) -> Counts {
    let mut agent = agent(target, pin_slots);
    let program = agent.program();
    let ports: Vec<PortId> = agent.tables().ports.iter().map(|p| p.id).collect();
    let mut entries = agent.entries().expect("entries");
    let mut pins = PinRegisters::default();
    let mut rng = Rng(0x5EED);
    let end_us = load.seconds * 1_000_000;
    let mut pending: BinaryHeap<Reverse<(u32, u64, usize)>> = BinaryHeap::new();
    let mut next_arrival = 0.0f64;
    let mut next_flow = 0u64;
    // Per flow: the port of its first packet, whether a packet found no
    // cell, whether a packet left on another port.
    let mut start: Vec<u32> = Vec::new();
    let mut first_port: Vec<Option<u64>> = Vec::new();
    let mut unpinned: Vec<bool> = Vec::new();
    let mut moved: Vec<bool> = Vec::new();
    let mut counts = Counts {
        gap_units: (u32::MAX, 0),
        ..Counts::default()
    };
    let select = |e: &EntrySet| -> Vec<u64> {
        e.entries
            .iter()
            .filter(|e| e.table == names::SELECT)
            .map(|e| e.params[0])
            .collect()
    };
    let mut hot = usize::MAX;
    let mut now = 0u32;
    while now < end_us {
        // The agent's poll: queue depths up to 1 MB, then the new entries
        // and (after) the safe gap.
        // Every 0.5 s another port (or none) is congested: the changes
        // that rewrite selection buckets.
        if counts.polls.is_multiple_of(50) {
            hot = (rng.next() % (ports.len() as u64 + 1)) as usize;
        }
        for (i, &p) in ports.iter().enumerate() {
            let bytes = if i == hot {
                4_000_000_000 + rng.next() % 600_000_000
            } else {
                rng.next() % 1_000_000
            };
            let cells = bytes / target.cell_bytes();
            agent
                .on_usage_cells(Instant::from_ticks(now), p, cells)
                .expect("poll");
        }
        let next = agent.entries().expect("entries");
        let (a, b) = (select(&entries), select(&next));
        counts.moved_buckets += a.iter().zip(&b).filter(|(x, y)| x != y).count() as u64
            + a.len().abs_diff(b.len()) as u64;
        entries = next;
        counts.polls += 1;
        if reuse {
            let gap = agent.pin_gap_units(Instant::from_ticks(now));
            pins.gaps = [Some(gap), Some(gap)];
            if now >= WARMUP_US {
                counts.gap_units.0 = counts.gap_units.0.min(gap);
                counts.gap_units.1 = counts.gap_units.1.max(gap);
            }
        }
        let installed = if fallback {
            entries.clone()
        } else {
            without_fallback(entries.clone())
        };
        let interp = Interpreter::new(&program, &installed);
        let step_end = now + POLL_US;
        while next_arrival < f64::from(step_end) {
            pending.push(Reverse((next_arrival as u32, next_flow, 0)));
            start.push(next_arrival as u32);
            next_flow += 1;
            first_port.push(None);
            unpinned.push(false);
            moved.push(false);
            next_arrival += -rng.unit().max(1e-12).ln() / load.new_flows_per_s * 1e6;
        }
        while let Some(&Reverse((t, f, k))) = pending.peek() {
            if t >= step_end {
                break;
            }
            pending.pop();
            let tr = interp
                .packet(&mut pins, &flow(f), 1_000_000_000 + u64::from(t) * 1_000)
                .expect("packet");
            let i = f as usize;
            let port = tr.port.expect("every packet is forwarded");
            unpinned[i] |= tr.pin_failed;
            match first_port[i] {
                None => first_port[i] = Some(port),
                Some(p) => moved[i] |= p != port,
            }
            if k + 1 < PACKETS_US.len() {
                let next_t = t - PACKETS_US[k] + PACKETS_US[k + 1];
                pending.push(Reverse((next_t, f, k + 1)));
            }
        }
        now = step_end;
    }
    // Flows that started after the warm-up and finished before the end.
    for i in 0..next_flow as usize {
        let done = start[i] + PACKETS_US[PACKETS_US.len() - 1] < end_us;
        if start[i] < WARMUP_US || !done || first_port[i].is_none() {
            continue;
        }
        counts.flows += 1;
        counts.unpinned += u64::from(unpinned[i]);
        let w = ((start[i] - WARMUP_US) / 1_000_000) as usize;
        if counts.windows.len() <= w {
            counts.windows.resize(w + 1, (0, 0));
        }
        counts.windows[w].0 += 1;
        counts.windows[w].1 += u64::from(unpinned[i]);
        counts.moved += u64::from(moved[i]);
    }
    counts
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Loads and chips named on the command line (none: all).
    let named = |all: &[&str]| !args.iter().any(|a| all.contains(&a.as_str()));
    let want = |s: &str, all: &[&str]| named(all) || args.iter().any(|a| a == s);
    for load in LOADS
        .iter()
        .filter(|l| want(l.name, &["websearch", "fb_hadoop"]))
    {
        let arg = |t: Target| match t {
            Target::Tofino1 => "tofino1",
            Target::Tofino2 => "tofino2",
        };
        // Tofino 2 also at its cells before its ways were halved.
        for (target, pin_slots) in [
            (Target::Tofino1, DEFAULT_PIN_SLOTS),
            (Target::Tofino2, DEFAULT_PIN_SLOTS / 2),
            (Target::Tofino2, Target::Tofino2.default_pin_slots()),
        ]
        .into_iter()
        .filter(|&(t, _)| want(arg(t), &["tofino1", "tofino2"]))
        {
            for (what, reuse, fallback) in [
                ("before", false, false),
                ("reuse", true, false),
                ("reuse+fallback", true, true),
            ]
            .into_iter()
            .filter(|p| want(p.0, &["before", "reuse", "reuse+fallback"]))
            {
                let c = run(load, target, pin_slots, reuse, fallback);
                println!(
                    "{} {} ({} cells) {}: {} flows, unpinned {} ({:.2} %), moved {} ({:.3} %); \
                     {} polls, {} bucket rewrites; gap {}..{} units",
                    load.name,
                    target.name(),
                    pin_slots,
                    what,
                    c.flows,
                    c.unpinned,
                    100.0 * c.unpinned as f64 / c.flows.max(1) as f64,
                    c.moved,
                    100.0 * c.moved as f64 / c.flows.max(1) as f64,
                    c.polls,
                    c.moved_buckets,
                    if reuse { c.gap_units.0 } else { 0 },
                    if reuse { c.gap_units.1 } else { 0 },
                );
                // Unpinned per 1 s window: a steady state when they agree.
                let shares: Vec<String> = c
                    .windows
                    .iter()
                    .map(|(f, u)| format!("{:.2}", 100.0 * *u as f64 / (*f).max(1) as f64))
                    .collect();
                println!(
                    "  unpinned per 1 s window after the warm-up, %: {}",
                    shares.join(" ")
                );
                // The two halves of the counted time: equal in a steady state.
                let half = c.windows.len().div_ceil(2);
                let share = |w: &[(u64, u64)]| {
                    let (f, u) = w.iter().fold((0, 0), |a, x| (a.0 + x.0, a.1 + x.1));
                    100.0 * u as f64 / f.max(1) as f64
                };
                println!(
                    "  unpinned in the first and the second half: {:.2} % / {:.2} %",
                    share(&c.windows[..half]),
                    share(&c.windows[half..])
                );
            }
        }
    }
}
