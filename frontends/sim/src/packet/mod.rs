//! The packet-level model (`lcmp sim --model packet`): a discrete-event
//! RoCE network in integer picoseconds, driven by the real
//! `lcmp-decide` core at every DCI switch for every packet.
//!
//! * **Fabric** (`fabric.rs`): behind every DCI switch, a leaf-spine fabric
//!   as in the paper's testbed (§6.1): hosts on leaves (4 per leaf), two
//!   spines, every leaf with one uplink per spine (4 × 100 Gbps down, 2 ×
//!   100 Gbps up: 2:1 oversubscribed), 100 Gbps and 1 µs intra-DC links,
//!   400 Gbps spine-DCI links; the inter-DC links of the topology between
//!   the DCI switches. Leaves and DCI switches spread flows over the
//!   spines by a per-flow hash.
//! * **Ports** are store-and-forward: a packet is received whole, queued
//!   at its egress port and serialised at the port's rate, then
//!   propagates; each port's wire is a FIFO, so the event queue (a timing
//!   wheel with buckets for the far future, `queue.rs`) holds one event
//!   per busy port and wire, not one per packet in flight.
//! * **Switch buffers** ([`mmu`]): one shared buffer per switch with
//!   per-ingress PFC accounting (reserve, dynamic threshold, headroom);
//!   PAUSE and RESUME frames take the link's propagation delay to reach
//!   the upstream port, which then stops sending data (the packet being
//!   serialised finishes). One FIFO per egress port for data, so a paused
//!   port blocks every flow behind it (head-of-line blocking), and pauses
//!   spread upstream hop by hop.
//! * **ECN**: every switch marks data packets at dequeue with the RED
//!   curve of its port's rate ([`mmu::EcnCurve`], the artifact's maps).
//! * **Senders**: each flow is a queue pair on its host's NIC, paced at
//!   its DCQCN rate ([`dcqcn`]); the NIC serves ready queue pairs in
//!   round-robin, acknowledgements first. Receivers acknowledge every
//!   packet (`L2_ACK_INTERVAL 1`), echoing ECN marks as a congestion flag
//!   (the CNP, on the reverse path), and answer a gap with a NACK: the
//!   sender goes back to the first missing packet (go-back-N). An RTO
//!   (not in the artifact) recovers a lost tail.
//! * **Routing**: at a DCI switch a packet towards another DC is routed by
//!   the switch's [`Decider`](lcmp_decide::Decider) (`on_packet` per packet, so the flow cache
//!   pins and refreshes flows); acknowledgements are a flow of their own,
//!   routed back by the destination's decider. Every `sample_us` each DCI
//!   switch's decider is fed the data bytes queued at each inter-DC port
//!   (or, with `sample_on_decision`, right before a flow's first packet at
//!   that switch).
//!
//! Deterministic for a seed: one event order (time, then insertion), and
//! every random draw (ECN marks) from a per-switch PCG32.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use lcmp_decide::{FlowKey, GroupId, Instant, Scheme};

use crate::dci::{self, Switch};
use crate::error::SimError;
use crate::network::Network;
use crate::run::{
    artifact_flow_id, artifact_ip, AckPath, EngineConfig, FlowIdentity, FlowOutcome, FlowSpec,
    LinkOutcome, RunOutput, ARTIFACT_DPORT,
};

pub mod artifact_pool;
pub mod cc;
mod ccrun;
pub(crate) mod config;
pub mod dcqcn;
mod fabric;
pub mod mmu;
mod queue;

use dcqcn::Rp;
use fabric::{Fabric, NodeKind};
use mmu::PfcAction;
use queue::EventQueue;

pub use config::{DciPool, PacketConfig, PacketStats, PS_PER_US};

/// A packet: 16 bytes, moved by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pkt {
    flow: u32,
    /// Data: packet index; ACK / NACK: the next packet expected.
    seq: u32,
    kind: Kind,
    ecn: bool,
    /// The flow's first transmission of packet 0 (records the path).
    first: bool,
    ttl: u8,
    size: u16,
    in_port: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Data,
    Ack,
    Nack,
}

/// An event of the model. `Default` (`Sample`) only fills the unused
/// places of the event queue's slot lines (`queue.rs`); it is never
/// queued as such.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The head of a port's wire reaches the peer.
    Deliver(u32, u16),
    /// A port finished serialising a packet.
    PortFree(u32, u16),
    /// A host's NIC may have a queue pair ready.
    NicWake(u32),
    /// A PAUSE (`true`) or RESUME frame reaches a port.
    Pfc(u32, u16, bool),
    /// A DCQCN deadline of a flow.
    Rp(u32),
    /// A flow's retransmission timer (flow, generation).
    Rto(u32, u32),
    /// The next flow starts.
    Arrival,
    /// The deciders' queue samples.
    #[default]
    Sample,
}

struct Flow {
    spec: usize,
    src_host: u32,
    n_pkts: u32,
    last_payload: u32,
    snd_nxt: u32,
    snd_una: u32,
    /// Highest packet ever sent + 1 (retransmissions below it).
    high: u32,
    in_heap: bool,
    rcv_next: u32,
    last_nack_ps: Option<u64>,
    /// The expected packet the last NACK asked for.
    last_nack_seq: u32,
    start_ps: u64,
    done: bool,
    rp: Rp,
    rp_next: u64,
    rto_gen: u32,
    key: FlowKey,
    ack_key: FlowKey,
    /// Under artifact flow ids: the key each DCI switch (index) knows the
    /// data and the acknowledgements by, once resolved.
    aliases: Vec<(u16, bool, FlowKey)>,
    path: Vec<u32>,
    first_sent: bool,
    delivered: u64,
    /// `--cc hpcc|timely|dctcp`: the flow's control (`None` under DCQCN).
    cc: Option<Box<ccrun::FlowCc>>,
}

/// What a switch needs to route a flow's packets one way (data, or its
/// acknowledgements back): the destination host's place and the flow's
/// spine, worked out when the flow starts, and the decision memo of
/// [`Sim::decide`]. Apart from [`Flow`] (16 bytes a direction, so a flow's
/// two fit in half a cache line), as every packet reads it at every hop.
#[derive(Clone, Copy, Debug)]
struct Route {
    /// The destination host's DC (index).
    dc: u16,
    /// Its leaf within the DC and its port on that leaf.
    leaf: u16,
    host_port: u16,
    /// The spine of the flow's per-flow hash: `hash % spines`.
    spine: u16,
    /// The last decision at a DCI switch: (DCI switch index, decider
    /// tick, core port); see [`Sim::decide`].
    memo_dc: u16,
    memo_core: u8,
    memo_tick: u32,
}

/// What a flow's decisions at DCI switches read, one way (data, or its
/// acknowledgements), apart from [`Flow`] like [`Route`]: the DCI switches
/// (bit per index) that saw it, and the key it was last known by at one
/// of them (under artifact flow ids; `dci` `u16::MAX`: none yet), a copy
/// of that switch's entry in [`Flow::aliases`].
#[derive(Clone, Copy, Debug)]
struct AtDci {
    seen: u64,
    dci: u16,
    key: FlowKey,
}

struct Host {
    /// Ready queue pairs: (ready time, round-robin order, flow).
    ready: BinaryHeap<Reverse<(u64, u64, u32)>>,
    wake_at: u64,
}

/// Runs `specs` over `net` at packet level, every DCI switch a real
/// [`Decider`](lcmp_decide::Decider) with `cfg.scheme`. `window_us` only scopes the link
/// statistics. The result has the fluid engine's shape, with
/// [`RunOutput::packet`] set.
///
/// # Errors
/// [`SimError::Config`] when a DCI switch cannot be built: a
/// [`EngineConfig::flow_slots`] that is not a power of two from 16 to
/// [`dci::MAX_FLOW_SLOTS`].
pub fn run(
    net: &Network,
    cfg: &EngineConfig,
    specs: &[FlowSpec],
    window_us: f64,
) -> Result<RunOutput, SimError> {
    let mut sim = Sim::new(net, cfg, specs, window_us)?;
    sim.main_loop();
    Ok(sim.finish())
}

struct Sim<'a> {
    net: &'a Network,
    cfg: &'a EngineConfig,
    pc: &'a PacketConfig,
    specs: &'a [FlowSpec],
    window_ps: u64,
    fab: Fabric,
    deciders: Vec<Box<Switch>>,
    flows: Vec<Flow>,
    /// By flow: its data's (0) and its acknowledgements' (1) [`Route`].
    routes: Vec<[Route; 2]>,
    /// By flow and direction, as `routes`: its [`AtDci`].
    at_dci: Vec<[AtDci; 2]>,
    outcomes: Vec<FlowOutcome>,
    hosts: Vec<Host>,
    queue: EventQueue<Ev>,
    rr: u64,
    now: u64,
    order: Vec<usize>,
    next_arrival: usize,
    finished: usize,
    links: Vec<LinkOutcome>,
    stats: PacketStats,
    aliases: HashMap<(u16, u16, u32), FlowKey>,
    unrouted_flows: u64,
    bytes_delivered: u64,
    /// Routes a flow's packets within one decider tick from its last
    /// decision ([`Sim::decide`]); off only in the test that checks it
    /// changes nothing.
    memo: bool,
    /// `--cc hpcc|timely|dctcp`: the run's control settings.
    cc: Option<Box<ccrun::CcRun>>,
}

fn mix(mut x: u64) -> u32 {
    // SplitMix64's finaliser: a fixed, seedable per-flow hash.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

/// Serialisation time of `bytes` at `rate_bps`, picoseconds.
fn tx_ps(bytes: u64, rate_bps: u64) -> u64 {
    (u128::from(bytes) * 8 * 1_000_000_000_000 / u128::from(rate_bps.max(1))) as u64
}

impl<'a> Sim<'a> {
    fn new(
        net: &'a Network,
        cfg: &'a EngineConfig,
        specs: &'a [FlowSpec],
        window_us: f64,
    ) -> Result<Self, SimError> {
        let pc = &cfg.packet;
        let fab = Fabric::new(net, cfg);
        let deciders = dci::switches(net, cfg)?;
        let hosts = (0..fab.nodes.len())
            .map(|_| Host {
                ready: BinaryHeap::new(),
                wake_at: u64::MAX,
            })
            .collect();
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.sort_by(|&a, &b| {
            specs[a]
                .start_us
                .total_cmp(&specs[b].start_us)
                .then(a.cmp(&b))
        });
        let outcomes = specs
            .iter()
            .map(|s| FlowOutcome {
                path: Vec::new(),
                fct_us: None,
                ideal_us: crate::run::ideal_us(net, cfg, s),
            })
            .collect();
        Ok(Sim {
            net,
            cfg,
            pc,
            specs,
            window_ps: (window_us.max(0.0) * PS_PER_US as f64) as u64,
            fab,
            deciders,
            flows: Vec::with_capacity(specs.len()),
            routes: Vec::with_capacity(specs.len()),
            at_dci: Vec::with_capacity(specs.len()),
            outcomes,
            hosts,
            queue: EventQueue::new(),
            rr: 0,
            now: 0,
            order,
            next_arrival: 0,
            finished: 0,
            links: vec![LinkOutcome::default(); net.links.len()],
            stats: PacketStats::default(),
            aliases: HashMap::new(),
            unrouted_flows: 0,
            bytes_delivered: 0,
            memo: true,
            cc: ccrun::CcRun::new(net, pc, cfg.nic_bps),
        })
    }

    fn at(&mut self, t: u64, ev: Ev) {
        self.queue.push(t, ev);
    }

    fn main_loop(&mut self) {
        if let Some(&first) = self.order.first() {
            let t = (self.specs[first].start_us.max(0.0) * PS_PER_US as f64) as u64;
            self.at(t, Ev::Arrival);
            self.at(0, Ev::Sample);
        }
        let max_ps = (self.cfg.max_time_us.max(0.0) * PS_PER_US as f64) as u64;
        while let Some((t, ev)) = self.queue.pop() {
            if t > max_ps {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            self.handle(t, ev);
            if self.finished >= self.specs.len() {
                break;
            }
        }
    }

    /// Handles event `ev` due at `t` (`self.now`).
    fn handle(&mut self, t: u64, ev: Ev) {
        match ev {
            Ev::Deliver(n, p) => self.deliver(n, p),
            Ev::PortFree(n, p) => {
                // Only the port's pending wake-up counts; an event
                // `try_tx` superseded (it found the port done first)
                // is stale.
                if let Some(port) = self.fab.port_mut(n, p).filter(|x| x.wake_at == t) {
                    port.busy = false;
                    port.wake_at = u64::MAX;
                    self.try_tx(n, p);
                }
            }
            Ev::NicWake(h) => {
                if let Some(host) = self.hosts.get_mut(h as usize) {
                    if host.wake_at <= t {
                        host.wake_at = u64::MAX;
                    }
                }
                self.try_tx(h, 0);
            }
            Ev::Pfc(n, p, pause) => {
                if let Some(port) = self.fab.port_mut(n, p) {
                    port.paused = pause;
                }
                if pause && self.fab.is_host(n) {
                    self.stats.host_pauses += 1;
                }
                if !pause {
                    self.try_tx(n, p);
                }
            }
            Ev::Rp(f) => self.rp_timeout(f),
            Ev::Rto(f, gen) => self.rto(f, gen),
            Ev::Arrival => self.arrival(),
            Ev::Sample => {
                if self.finished < self.specs.len() {
                    self.sample_all();
                    let every = u64::from(self.cfg.sample_us.max(1)) * PS_PER_US;
                    self.at(t + every, Ev::Sample);
                }
            }
        }
    }

    fn instant(&self) -> Instant {
        dci::instant_at_us(self.net, self.now / PS_PER_US)
    }

    fn sample_all(&mut self) {
        if self.cfg.sample_on_decision {
            return;
        }
        for d in 0..self.deciders.len() {
            self.sample_switch(d);
        }
    }

    /// Feeds DCI switch `d`'s decider the data bytes queued at each of its
    /// inter-DC ports.
    fn sample_switch(&mut self, d: usize) {
        let now = self.instant();
        let node = self.fab.dci[d];
        let fab = &self.fab;
        let depths = fab.core_ports[d]
            .iter()
            .map(|&(core, port)| (core, fab.port(node, port).map_or(0, |p| p.data_bytes)));
        if let Some(sw) = self.deciders.get_mut(d) {
            dci::sample(sw, now, depths);
        }
    }

    fn arrival(&mut self) {
        while let Some(&i) = self.order.get(self.next_arrival) {
            let start = (self.specs[i].start_us.max(0.0) * PS_PER_US as f64) as u64;
            if start > self.now {
                self.at(start, Ev::Arrival);
                return;
            }
            self.next_arrival += 1;
            self.admit(i);
        }
    }

    fn admit(&mut self, i: usize) {
        let spec = self.specs[i];
        let f = self.flows.len() as u32;
        let (Some(sd), Some(dd)) = (self.net.index(spec.src_dc), self.net.index(spec.dst_dc))
        else {
            self.unrouted_flows += 1;
            self.finished += 1;
            return;
        };
        let src_host = self.fab.host(sd, spec.src_host);
        let dst_host = self.fab.host(dd, spec.dst_host);
        let payload = u64::from(self.pc.payload_bytes.max(1));
        let n_pkts = spec.size.max(1).div_ceil(payload);
        let last_payload = spec.size.max(1) - (n_pkts - 1) * payload;
        let key = spec.key();
        let ack_key = spec.ack_key();
        let salt = u64::from(self.cfg.hash_seed) << 32;
        let flow = Flow {
            spec: i,
            src_host,
            n_pkts: n_pkts.min(u64::from(u32::MAX)) as u32,
            last_payload: last_payload as u32,
            snd_nxt: 0,
            snd_una: 0,
            high: 0,
            in_heap: false,
            rcv_next: 0,
            last_nack_ps: None,
            last_nack_seq: u32::MAX,
            start_ps: self.now,
            done: false,
            rp: Rp::new(self.cfg.nic_bps, self.now),
            rp_next: u64::MAX,
            rto_gen: 0,
            key,
            ack_key,
            aliases: Vec::new(),
            path: Vec::new(),
            first_sent: false,
            delivered: 0,
            cc: self.cc.as_ref().map(|c| c.flow()),
        };
        self.flows.push(flow);
        let spines = u32::from(self.pc.spines.max(1));
        let route = |host: u32, hash: u32| {
            let (dc, leaf, host_port) = self
                .fab
                .host_place(host, self.pc.hosts_per_leaf)
                .unwrap_or((u16::MAX, u16::MAX, 0));
            Route {
                dc,
                leaf,
                host_port,
                spine: (hash % spines) as u16,
                memo_dc: u16::MAX,
                memo_core: 0,
                memo_tick: 0,
            }
        };
        let at = |key| AtDci {
            seen: 0,
            dci: u16::MAX,
            key,
        };
        self.at_dci.push([at(key), at(ack_key)]);
        self.routes.push([
            route(dst_host, mix(salt ^ (u64::from(f) << 1))),
            route(src_host, mix(salt ^ ((u64::from(f) << 1) | 1))),
        ]);
        if sd == dd {
            // Intra-DC flows are outside this model (traffic is inter-DC).
            self.flows[f as usize].done = true;
            self.unrouted_flows += 1;
            self.finished += 1;
            return;
        }
        self.push_ready(src_host, f, self.now);
        self.try_tx(src_host, 0);
    }

    fn push_ready(&mut self, host: u32, f: u32, t: u64) {
        self.rr += 1;
        let rr = self.rr;
        if let Some(h) = self.hosts.get_mut(host as usize) {
            h.ready.push(Reverse((t, rr, f)));
        }
        if let Some(fl) = self.flows.get_mut(f as usize) {
            fl.in_heap = true;
        }
    }

    fn wire_bytes(&self, fl: &Flow, seq: u32) -> u64 {
        let payload = if seq + 1 >= fl.n_pkts {
            fl.last_payload
        } else {
            self.pc.payload_bytes
        };
        u64::from(payload + self.pc.header_bytes)
    }

    /// The next data packet of host `h`'s NIC, if a queue pair is ready
    /// now (else a wake-up at the earliest ready time).
    fn nic_next(&mut self, h: u32) -> Option<Pkt> {
        loop {
            let &Reverse((ready, _, f)) = self.hosts.get(h as usize)?.ready.peek()?;
            if ready > self.now {
                let host = self.hosts.get_mut(h as usize)?;
                if ready < host.wake_at {
                    host.wake_at = ready;
                    self.at(ready, Ev::NicWake(h));
                }
                return None;
            }
            self.hosts.get_mut(h as usize)?.ready.pop();
            let fl = self.flows.get_mut(f as usize)?;
            if fl.done || fl.snd_nxt >= fl.n_pkts {
                fl.in_heap = false;
                continue;
            }
            if let Some(c) = fl.cc.as_deref_mut() {
                // The window is full: the ACK that opens it re-queues.
                let in_flight = u64::from(fl.snd_nxt - fl.snd_una.min(fl.snd_nxt));
                if c.window_full(in_flight * u64::from(self.pc.payload_bytes)) {
                    fl.in_heap = false;
                    // Nothing leaves until an ACK: the RTO must run.
                    let gens = (fl.rto_gen, fl.rto_gen.wrapping_add(1));
                    if c.arm_stall_rto(fl.snd_una, gens) {
                        self.arm_rto(f);
                    }
                    continue;
                }
                c.sent(fl.snd_nxt, self.now);
            }
            let seq = fl.snd_nxt;
            fl.snd_nxt += 1;
            if seq < fl.high {
                self.stats.retransmitted += 1;
            }
            let fl = &mut self.flows[f as usize];
            fl.high = fl.high.max(fl.snd_nxt);
            let first = seq == 0 && !fl.first_sent;
            fl.first_sent = true;
            let size = self.wire_bytes(&self.flows[f as usize], seq);
            let fl = &self.flows[f as usize];
            let rate = if self.pc.dcqcn {
                fl.rp.rc_bps
            } else if let Some(c) = fl.cc.as_deref() {
                c.rate_bps()
            } else {
                self.cfg.nic_bps
            };
            let more = fl.snd_nxt < fl.n_pkts;
            if more {
                let next = self.now + tx_ps(size, rate);
                self.push_ready(h, f, next);
            } else {
                self.flows[f as usize].in_heap = false;
                self.arm_rto(f);
            }
            self.stats.data_packets += 1;
            return Some(Pkt {
                flow: f,
                seq,
                kind: Kind::Data,
                ecn: false,
                first,
                ttl: 64,
                size: size as u16,
                in_port: 0,
            });
        }
    }

    fn arm_rto(&mut self, f: u32) {
        let Some(fl) = self.flows.get_mut(f as usize) else {
            return;
        };
        fl.rto_gen = fl.rto_gen.wrapping_add(1);
        let gen = fl.rto_gen;
        let t = self.now + self.pc.rto_ps;
        self.at(t, Ev::Rto(f, gen));
    }

    fn rto(&mut self, f: u32, gen: u32) {
        let Some(fl) = self.flows.get_mut(f as usize) else {
            return;
        };
        if fl.done || fl.rto_gen != gen {
            return;
        }
        // `--cc`: a window stall's timer, with acknowledgements since.
        let una = fl.snd_una;
        if fl
            .cc
            .as_deref_mut()
            .is_some_and(|c| c.acked_since_stall(una, gen))
        {
            return;
        }
        // Nothing acknowledged since the last packet left: go back.
        fl.snd_nxt = fl.snd_una;
        let host = fl.src_host;
        if !fl.in_heap {
            self.push_ready(host, f, self.now);
        }
        self.try_tx(host, 0);
    }

    /// Starts serialising the next packet of port `p` of node `n` if it is
    /// idle: control first, then data unless paused.
    fn try_tx(&mut self, n: u32, p: u16) {
        let is_host = self.fab.is_host(n);
        let now = self.now;
        let Some(port) = self.fab.port_mut(n, p) else {
            return;
        };
        if port.busy {
            if port.busy_until > now {
                // Serialising: make sure the port wakes when it is done
                // (`transmit` left no event if its queue was empty).
                if port.wake_at == u64::MAX {
                    let t = port.busy_until;
                    port.wake_at = t;
                    self.at(t, Ev::PortFree(n, p));
                }
                return;
            }
            // Done serialising; a wake-up pending for now is superseded.
            port.busy = false;
            port.wake_at = u64::MAX;
        }
        // A host's NIC puts acknowledgements in its data priority unless
        // they have their own (`ACK_HIGH_PRIO`): a PAUSE holds them too
        // (`qbb-net-device.cc`, `GetNextQindex`).
        if is_host && port.paused && !self.pc.ack_high_priority {
            return;
        }
        let pkt = if let Some(pkt) = port.ctrl.pop_front() {
            pkt
        } else if port.paused {
            return;
        } else if is_host {
            match self.nic_next(n) {
                Some(pkt) => pkt,
                None => return,
            }
        } else {
            let Some(mut pkt) = port.data.pop_front() else {
                return;
            };
            port.data_bytes -= u64::from(pkt.size);
            let (curve, depth) = (port.ecn, port.data_bytes);
            if pkt.kind == Kind::Data && curve.probability(depth) > 0.0 {
                let mark = self.fab.rng(n).is_some_and(|r| curve.mark(depth, r));
                if mark {
                    if !pkt.ecn {
                        self.stats.ecn_marked += 1;
                    }
                    pkt.ecn = true;
                }
            }
            // The packet leaves the switch's buffer.
            let action = self.fab.release(n, pkt.in_port, u64::from(pkt.size));
            if action == PfcAction::Resume {
                self.send_pfc(n, pkt.in_port, false);
            }
            pkt
        };
        self.transmit(n, p, pkt);
    }

    fn transmit(&mut self, n: u32, p: u16, pkt: Pkt) {
        let now = self.now;
        let is_host = self.fab.is_host(n);
        let window = self.window_ps;
        let Some(port) = self.fab.port_mut(n, p) else {
            return;
        };
        // One packet on the wire at a time: the previous one is done.
        debug_assert!(
            port.busy_until <= now,
            "node {n} port {p} starts a packet at {now} ps while one is serialised until {} ps",
            port.busy_until
        );
        port.busy = true;
        let tx = match port.ps_per_byte {
            0 => tx_ps(u64::from(pkt.size), port.rate_bps),
            ps => u64::from(pkt.size) * ps,
        };
        port.busy_until = now + tx;
        // A port with nothing queued needs no event when it frees: the
        // next packet for it finds it idle (or asks for the event,
        // `try_tx`). A NIC's queue is its ready queue pairs (an ACK-only
        // NIC, at a receiver, has none).
        let wake = !port.ctrl.is_empty()
            || !port.data.is_empty()
            || (is_host
                && self
                    .hosts
                    .get(n as usize)
                    .is_some_and(|h| !h.ready.is_empty()));
        port.wake_at = if wake { now + tx } else { u64::MAX };
        let arrive = now + tx + port.delay_ps;
        if let (Some(run), false) = (self.cc.as_deref_mut(), is_host) {
            run.egress(&mut self.flows, port, now, &pkt);
        }
        port.wire.push_back((arrive, pkt));
        let first_on_wire = port.wire.len() == 1;
        if let Some(l) = port.net_link {
            if let Some(s) = self.links.get_mut(l as usize) {
                s.bytes += u64::from(pkt.size);
                if now < window {
                    s.served_in_window += u64::from(pkt.size);
                }
            }
        }
        if first_on_wire {
            self.at(arrive, Ev::Deliver(n, p));
        }
        if wake {
            self.at(now + tx, Ev::PortFree(n, p));
        }
    }

    fn deliver(&mut self, n: u32, p: u16) {
        let now = self.now;
        let Some(port) = self.fab.port_mut(n, p) else {
            return;
        };
        let Some((_, pkt)) = port.wire.pop_front() else {
            return;
        };
        let next = port.wire.front().map(|w| w.0);
        let (peer, peer_port) = (port.peer, port.peer_port);
        if let Some(t) = next {
            self.at(t.max(now), Ev::Deliver(n, p));
        }
        self.receive(peer, peer_port, pkt);
    }

    fn receive(&mut self, n: u32, in_port: u16, mut pkt: Pkt) {
        if self.fab.is_host(n) {
            self.host_receive(n, pkt);
            return;
        }
        pkt.ttl = pkt.ttl.saturating_sub(1);
        let Some(out) = (if pkt.ttl == 0 {
            None
        } else {
            self.route(n, &pkt)
        }) else {
            self.stats.unroutable += 1;
            return;
        };
        pkt.in_port = in_port;
        let ctrl = pkt.kind != Kind::Data && self.pc.ack_high_priority;
        if ctrl {
            if let Some(port) = self.fab.port_mut(n, out) {
                port.ctrl.push_back(pkt);
            }
        } else {
            match self.fab.admit(n, in_port, u64::from(pkt.size)) {
                Err(()) => {
                    self.stats.drops += 1;
                    return;
                }
                Ok(PfcAction::Pause) => self.send_pfc(n, in_port, true),
                Ok(_) => {}
            }
            let now = self.now;
            let window = self.window_ps;
            let is_dci = matches!(self.fab.nodes[n as usize].kind, NodeKind::Dci { .. });
            let Some(port) = self.fab.port_mut(n, out) else {
                return;
            };
            port.data.push_back(pkt);
            port.data_bytes += u64::from(pkt.size);
            let depth = port.data_bytes;
            if let Some(l) = port.net_link {
                self.stats.max_dci_queue_bytes = self.stats.max_dci_queue_bytes.max(depth);
                if let Some(s) = self.links.get_mut(l as usize) {
                    s.max_queue_bytes = s.max_queue_bytes.max(depth);
                    if now < window {
                        s.bytes_in_window += u64::from(pkt.size);
                    }
                }
            } else if !is_dci {
                self.stats.max_fabric_queue_bytes = self.stats.max_fabric_queue_bytes.max(depth);
            }
        }
        self.try_tx(n, out);
    }

    /// Sends PAUSE or RESUME to the upstream end of ingress `port` of
    /// switch `n`; it arrives after the link's propagation delay.
    fn send_pfc(&mut self, n: u32, port: u16, pause: bool) {
        let Some(p) = self.fab.port(n, port) else {
            return;
        };
        let (peer, peer_port, delay) = (p.peer, p.peer_port, p.delay_ps);
        if pause {
            let k = match self.fab.nodes[n as usize].kind {
                NodeKind::Leaf { .. } => 0,
                NodeKind::Spine { .. } => 1,
                _ => 2,
            };
            self.stats.pauses[k] += 1;
            if self.stats.first_pause_us[k].is_none() {
                self.stats.first_pause_us[k] = Some(self.now as f64 / PS_PER_US as f64);
            }
        }
        let t = self.now + delay;
        self.at(t, Ev::Pfc(peer, peer_port, pause));
    }

    /// The egress port of a packet at switch `n`.
    fn route(&mut self, n: u32, pkt: &Pkt) -> Option<u16> {
        let r = self.routes.get(pkt.flow as usize)?[usize::from(pkt.kind != Kind::Data)];
        match self.fab.nodes.get(n as usize)?.kind {
            NodeKind::Host { .. } => None,
            NodeKind::Leaf { dc, index } => {
                if dc == r.dc && index == r.leaf {
                    Some(r.host_port)
                } else {
                    Some(self.pc.hosts_per_leaf + r.spine)
                }
            }
            NodeKind::Spine { dc } => {
                if dc == r.dc {
                    Some(r.leaf)
                } else {
                    Some(self.fab.leaves_per_dc)
                }
            }
            NodeKind::Dci { dc } => {
                if dc == r.dc {
                    return Some(r.spine);
                }
                self.decide(dc, pkt, r)
            }
        }
    }

    /// The decider of DCI switch `dc` routes a packet towards `dst_dc`.
    ///
    /// A packet of a flow (or of its acknowledgements) that the same switch
    /// pinned or found pinned earlier in the same decider tick (1 us) takes
    /// that port without a call: the call would be a hit on that pin, and
    /// a hit changes nothing but the entry's last-seen tick, which is
    /// already this tick (an entry seen this tick is neither idle nor
    /// reclaimable, the ports stay up and the tables do not change during
    /// a run), and the decider's `packets` and `hits` counters, which no
    /// output reads. So the routes, and every output, are those of a call
    /// per packet.
    fn decide(&mut self, dc: u16, pkt: &Pkt, r: Route) -> Option<u16> {
        let d = usize::from(dc);
        let data = pkt.kind == Kind::Data;
        let now = self.instant();
        let core = if self.memo && r.memo_dc == dc && r.memo_tick == now.ticks() {
            r.memo_core
        } else {
            let group = GroupId(*self.net.dcs.get(usize::from(r.dc))?);
            let (key, new_key) = self.key_at(pkt.flow, d, data, group.0)?;
            let at = &mut self.at_dci.get_mut(pkt.flow as usize)?[usize::from(!data)];
            let bit = 1u64 << (d % 64);
            let first_here = at.seen & bit == 0;
            at.seen |= bit;
            // Sampled right before a decision: the first packet of a key this
            // switch has not seen (under artifact flow ids, a flow whose key an
            // earlier flow holds follows that pin undecided, and unsampled).
            if self.cfg.sample_on_decision && first_here && new_key {
                self.sample_switch(d);
            }
            let decision = self.deciders.get_mut(d)?.on_packet(now, &key, group);
            let core = decision.port()?.0;
            // Only a pin (kept or placed) is a hit next time.
            if matches!(
                decision,
                lcmp_decide::Decision::Hit(_) | lcmp_decide::Decision::New { .. }
            ) {
                let m = &mut self.routes.get_mut(pkt.flow as usize)?[usize::from(!data)];
                (m.memo_dc, m.memo_tick, m.memo_core) = (dc, now.ticks(), core);
            }
            core
        };
        let (port, link) = self.fab.core_port(d, lcmp_decide::PortId(core))?;
        if data && pkt.first {
            let fl = self.flows.get_mut(pkt.flow as usize)?;
            fl.path.push(link);
            if let Some(s) = self.links.get_mut(link as usize) {
                s.flows += 1;
            }
        }
        Some(port)
    }

    /// The key the flow (`data`) or its acknowledgements are known by at
    /// DCI switch `d`: the 5-tuple, or under artifact flow ids the first
    /// 5-tuple of that switch, destination and artifact key; and whether
    /// the key was new there when first asked (always, for 5-tuples).
    fn key_at(&mut self, f: u32, d: usize, data: bool, group: u16) -> Option<(FlowKey, bool)> {
        if self.cfg.flow_id != FlowIdentity::Artifact || self.cfg.scheme == Scheme::Ecmp {
            let fl = self.flows.get(f as usize)?;
            return Some((if data { fl.key } else { fl.ack_key }, true));
        }
        // The key it was last resolved to, at this switch: `aliases`'
        // entry (which never changes once pushed) without reading `Flow`.
        let at = &mut self.at_dci.get_mut(f as usize)?[usize::from(!data)];
        if usize::from(at.dci) == d {
            return Some((at.key, false));
        }
        let fl = self.flows.get(f as usize)?;
        let own = if data { fl.key } else { fl.ack_key };
        if let Some(&(_, _, k)) = fl
            .aliases
            .iter()
            .find(|a| usize::from(a.0) == d && a.1 == data)
        {
            (at.dci, at.key) = (d as u16, k);
            return Some((k, false));
        }
        let spec = self.specs.get(fl.spec)?;
        let hosts = u32::from(self.cfg.hosts_per_dc.max(1));
        let node = |dc: u16, host: u16| {
            let i = self.net.index(dc).unwrap_or(0) as u32;
            i.wrapping_mul(hosts).wrapping_add(u32::from(host) % hosts)
        };
        let (sip, dip) = (
            artifact_ip(node(spec.src_dc, spec.src_host)),
            artifact_ip(node(spec.dst_dc, spec.dst_host)),
        );
        let id = if data {
            artifact_flow_id(sip, dip, spec.sport, ARTIFACT_DPORT)
        } else {
            artifact_flow_id(dip, sip, ARTIFACT_DPORT, spec.sport)
        };
        let entry = self.aliases.entry((d as u16, group, id));
        let new_key = matches!(entry, std::collections::hash_map::Entry::Vacant(_));
        let k = *entry.or_insert(own);
        self.flows
            .get_mut(f as usize)?
            .aliases
            .push((d as u16, data, k));
        let at = &mut self.at_dci.get_mut(f as usize)?[usize::from(!data)];
        (at.dci, at.key) = (d as u16, k);
        Some((k, new_key))
    }

    fn host_receive(&mut self, h: u32, pkt: Pkt) {
        let now = self.now;
        let f = pkt.flow as usize;
        let Some(fl) = self.flows.get_mut(f) else {
            return;
        };
        match pkt.kind {
            Kind::Data => {
                if let Some(c) = fl.cc.as_deref_mut() {
                    c.received(pkt.seq);
                }
                let ack_kind;
                if pkt.seq == fl.rcv_next {
                    fl.rcv_next += 1;
                    let payload = u64::from(pkt.size) - u64::from(self.pc.header_bytes);
                    fl.delivered += payload;
                    self.bytes_delivered += payload;
                    ack_kind = Kind::Ack;
                    if fl.rcv_next == fl.n_pkts && self.cfg.ack_path == AckPath::None && !fl.done {
                        fl.done = true;
                        if let Some(c) = fl.cc.as_deref_mut() {
                            c.release();
                        }
                        let fct = (now - fl.start_ps) as f64 / PS_PER_US as f64;
                        let spec = fl.spec;
                        self.outcomes[spec].fct_us = Some(fct);
                        self.finished += 1;
                    }
                } else if pkt.seq > fl.rcv_next {
                    // `ReceiverCheckSeq`: a NACK when the timer expired or
                    // the expected packet changed since the last NACK.
                    let due = fl
                        .last_nack_ps
                        .is_none_or(|t| now >= t + self.pc.nack_interval_ps)
                        || fl.last_nack_seq != fl.rcv_next;
                    if !due {
                        return;
                    }
                    fl.last_nack_ps = Some(now);
                    fl.last_nack_seq = fl.rcv_next;
                    ack_kind = Kind::Nack;
                } else {
                    // A duplicate: the artifact sends nothing.
                    return;
                }
                if let Some(c) = fl.cc.as_deref_mut() {
                    c.echo(fl.rcv_next, ack_kind == Kind::Nack);
                }
                let ack = Pkt {
                    flow: pkt.flow,
                    seq: fl.rcv_next,
                    kind: ack_kind,
                    ecn: pkt.ecn,
                    first: false,
                    ttl: 64,
                    size: self.pc.ack_bytes as u16,
                    in_port: 0,
                };
                if ack_kind == Kind::Nack {
                    self.stats.nacks += 1;
                } else {
                    self.stats.acks += 1;
                }
                if pkt.ecn {
                    self.stats.cnps += 1;
                }
                if let Some(port) = self.fab.port_mut(h, 0) {
                    port.ctrl.push_back(ack);
                }
                self.try_tx(h, 0);
            }
            Kind::Ack | Kind::Nack => {
                if pkt.seq > fl.snd_una {
                    fl.snd_una = pkt.seq;
                }
                if let (Some(c), Some(run), false) =
                    (fl.cc.as_deref_mut(), self.cc.as_deref(), fl.done)
                {
                    let nack = pkt.kind == Kind::Nack;
                    let payload = u64::from(self.pc.payload_bytes);
                    c.on_ack(run, now, pkt.seq, nack, pkt.ecn, fl.snd_nxt, payload);
                }
                if pkt.ecn && self.pc.dcqcn && !fl.done {
                    let before = fl.rp.cuts;
                    fl.rp.on_cnp(&self.pc.dcqcn_params, now);
                    self.stats.rate_cuts += fl.rp.cuts - before;
                    self.schedule_rp(pkt.flow);
                }
                let fl = &mut self.flows[f];
                if pkt.kind == Kind::Nack && pkt.seq < fl.snd_nxt && !fl.done {
                    fl.snd_nxt = pkt.seq;
                    let host = fl.src_host;
                    if !fl.in_heap {
                        self.push_ready(host, pkt.flow, now);
                    }
                    self.try_tx(host, 0);
                }
                let fl = &mut self.flows[f];
                if fl.snd_una >= fl.n_pkts && !fl.done {
                    fl.done = true;
                    if let Some(c) = fl.cc.as_deref_mut() {
                        c.release();
                    }
                    let fct = (now - fl.start_ps) as f64 / PS_PER_US as f64;
                    let spec = fl.spec;
                    self.outcomes[spec].fct_us = Some(fct);
                    self.finished += 1;
                }
                // `--cc`: the acknowledgement may have opened the window.
                if fl.cc.is_some() && !fl.done && !fl.in_heap && fl.snd_nxt < fl.n_pkts {
                    let host = fl.src_host;
                    self.push_ready(host, pkt.flow, now);
                    self.try_tx(host, 0);
                }
            }
        }
    }

    fn schedule_rp(&mut self, f: u32) {
        let p = self.pc.dcqcn_params;
        let Some(fl) = self.flows.get_mut(f as usize) else {
            return;
        };
        let next = match (fl.rp.poll_cut(&p), fl.rp.poll_timer()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => return,
            },
        };
        if next < fl.rp_next || fl.rp_next <= self.now {
            fl.rp_next = next;
            self.at(next, Ev::Rp(f));
        }
    }

    fn rp_timeout(&mut self, f: u32) {
        let p = self.pc.dcqcn_params;
        let now = self.now;
        let Some(fl) = self.flows.get_mut(f as usize) else {
            return;
        };
        if fl.done {
            return;
        }
        if fl.rp_next <= now {
            fl.rp_next = u64::MAX;
        }
        let before = fl.rp.cuts;
        fl.rp.handle_timeout(&p, now);
        self.stats.rate_cuts += fl.rp.cuts - before;
        self.schedule_rp(f);
    }

    fn finish(self) -> RunOutput {
        let mut outcomes = self.outcomes;
        for fl in &self.flows {
            if let Some(o) = outcomes.get_mut(fl.spec) {
                o.path = fl.path.clone();
            }
        }
        RunOutput {
            flows: outcomes,
            links: self.links,
            bytes_offered: self.specs.iter().map(|s| s.size).sum(),
            bytes_delivered: self.bytes_delivered,
            end_us: self.now as f64 / PS_PER_US as f64,
            steps: self.stats.events,
            unrouted: self.unrouted_flows,
            unpinned: self.deciders.iter().map(|s| s.counters().unpinned).sum(),
            queues_within_buffer: self.stats.drops == 0,
            packet: Some(self.stats),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use lcmp_tables::{BuildOptions, Topology};

    fn two_dcs() -> Network {
        two_dcs_at(100_000_000_000)
    }

    /// Two DCs joined by one 1 ms link of `capacity_bps` (also the fabric's
    /// tests' network).
    pub(super) fn two_dcs_at(capacity_bps: u64) -> Network {
        let topo = Topology::from_json(&format!(
            r#"{{"name":"two","buffer_bytes":1073741824,
            "dcs":[{{"id":1,"name":"A"}},{{"id":2,"name":"B"}}],
            "links":[{{"a":1,"b":2,"capacity_bps":{capacity_bps},"delay_us":1000}}]}}"#
        ))
        .expect("valid topology");
        Network::new(&topo, &BuildOptions::default()).expect("network")
    }

    const SPEC: FlowSpec = FlowSpec {
        start_us: 0.0,
        src_dc: 1,
        dst_dc: 2,
        src_host: 0,
        dst_host: 0,
        sport: 4000,
        size: 10_000,
    };

    fn data(seq: u32) -> Pkt {
        Pkt {
            flow: 0,
            seq,
            kind: Kind::Data,
            ecn: false,
            first: false,
            ttl: 64,
            size: 1048,
            in_port: 0,
        }
    }

    /// Routing a flow's packets from its decision earlier in the same
    /// decider tick gives the run of a decider call per packet, with at
    /// least a fifth fewer calls (a third here).
    #[test]
    fn same_tick_packets_follow_the_last_decision_and_change_nothing() {
        let net = two_dcs_at(25_000_000_000);
        for scheme in [Scheme::Ecmp, Scheme::Lcmp] {
            let cfg = EngineConfig {
                scheme,
                ..EngineConfig::default()
            };
            let specs: Vec<FlowSpec> = (0..12u16)
                .map(|i| FlowSpec {
                    start_us: f64::from(i) * 3.0,
                    src_host: i % 4,
                    dst_host: (i * 3) % 4,
                    sport: 4000 + i,
                    size: 300_000,
                    ..SPEC
                })
                .collect();
            let run = |memo: bool| {
                let mut sim = Sim::new(&net, &cfg, &specs, 1e6).expect("sim");
                sim.memo = memo;
                sim.main_loop();
                let calls: u64 = sim.deciders.iter().map(|d| d.counters().packets).sum();
                let out = sim.finish();
                (format!("{out:?}"), calls)
            };
            let (with, calls_with) = run(true);
            let (without, calls_without) = run(false);
            assert!(with.contains("fct_us: Some("), "{with}");
            assert_eq!(with, without, "{scheme:?}");
            assert!(
                calls_with * 5 < calls_without * 4,
                "{calls_with} {calls_without}"
            );
        }
    }

    /// The memo keeps the decider's view of a flow: the switch still sees
    /// a packet of every tick, so the flow's entry ages from its last
    /// packet, not from its first, and expires when it would with a call
    /// per packet.
    #[test]
    fn the_memo_leaves_the_entry_aging_from_the_last_packet() {
        let net = two_dcs_at(25_000_000_000);
        let cfg = EngineConfig::default();
        // 10 MB at 25 Gb/s: about 3 200 ticks of packets at DC A's switch.
        let specs = [FlowSpec {
            size: 10_000_000,
            ..SPEC
        }];
        let idle = net.tables[0].params.idle_timeout_ticks;
        let pinned_after = |memo: bool| {
            let mut sim = Sim::new(&net, &cfg, &specs, 1e6).expect("sim");
            sim.memo = memo;
            sim.main_loop();
            let end = sim.instant().ticks();
            let (key, group) = (sim.flows[0].key, GroupId(net.dcs[1]));
            // From 8 000 ticks before the run's end plus the idle timeout
            // to the end plus it: the entry expires in this span.
            (0..=80u32)
                .map(|i| {
                    let t = (end + idle).saturating_sub(8_000) + i * 100;
                    sim.deciders[0]
                        .explain(Instant::from_ticks(t), &key, group)
                        .pinned
                })
                .collect::<Vec<_>>()
        };
        let (with, without) = (pinned_after(true), pinned_after(false));
        assert!(without.first().is_some_and(Option::is_some), "{without:?}");
        assert!(without.last().is_some_and(Option::is_none), "{without:?}");
        assert_eq!(with, without);
    }

    #[test]
    fn duplicates_are_not_acked_and_a_new_gap_is_nacked_at_once() {
        let net = two_dcs();
        let cfg = EngineConfig::default();
        let specs = [SPEC];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e6).expect("sim");
        sim.admit(0);
        let h = sim.fab.host(1, SPEC.dst_host);
        let sent = |sim: &Sim| (sim.stats.acks, sim.stats.nacks);
        sim.host_receive(h, data(0));
        assert_eq!(sent(&sim), (1, 0));
        // A duplicate: nothing (`ReceiverCheckSeq` returns 3).
        sim.host_receive(h, data(0));
        assert_eq!(sent(&sim), (1, 0));
        // A gap: a NACK; the same gap again within the NACK interval:
        // nothing.
        sim.host_receive(h, data(2));
        sim.host_receive(h, data(3));
        assert_eq!(sent(&sim), (1, 1));
        // The expected packet arrives, then a new gap: the expected
        // sequence changed, so it is NACKed within the interval.
        sim.host_receive(h, data(1));
        sim.host_receive(h, data(4));
        assert_eq!(sent(&sim), (2, 2));
    }

    #[test]
    fn a_paused_host_holds_its_acknowledgements_unless_they_have_priority() {
        let net = two_dcs();
        for high in [false, true] {
            let mut cfg = EngineConfig::default();
            cfg.packet.ack_high_priority = high;
            let specs = [SPEC];
            let mut sim = Sim::new(&net, &cfg, &specs, 1e6).expect("sim");
            sim.admit(0);
            let h = sim.fab.host(1, SPEC.dst_host);
            sim.fab.port_mut(h, 0).expect("NIC port").paused = true;
            sim.host_receive(h, data(0));
            let port = sim.fab.port(h, 0).expect("NIC port");
            assert_eq!(port.ctrl.len(), usize::from(!high), "high priority {high}");
            assert_eq!(port.busy, high);
            // RESUME sends it.
            sim.fab.port_mut(h, 0).expect("NIC port").paused = false;
            sim.try_tx(h, 0);
            let port = sim.fab.port(h, 0).expect("NIC port");
            assert!(port.ctrl.is_empty() && port.busy);
        }
    }

    /// Drives the egress port of the destination leaf towards its host:
    /// at each scripted time a data packet arrives from a spine (`true`)
    /// or the port is only kicked (`false`, as a RESUME does). Only the
    /// port's own `PortFree` events run (the rest are dropped, so its wire
    /// keeps every departure); a scripted step runs before the events due
    /// at the same picosecond, as a delivery scheduled earlier would.
    /// Returns the arrival times and the departure (serialisation start)
    /// times, and the serialisation time of a packet.
    fn drive_leaf_port(script: &[(u64, bool)]) -> (Vec<u64>, Vec<u64>, u64) {
        let net = two_dcs();
        let cfg = EngineConfig::default();
        let specs = [SPEC];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e6).expect("sim");
        sim.admit(0);
        let hpl = sim.pc.hosts_per_leaf;
        let (dc, leaf, out) = sim
            .fab
            .host_place(sim.fab.host(1, SPEC.dst_host), hpl)
            .expect("destination host");
        let n = sim
            .fab
            .nodes
            .iter()
            .position(|x| x.kind == NodeKind::Leaf { dc, index: leaf })
            .expect("destination leaf") as u32;
        let run_before = |sim: &mut Sim, until: u64| {
            while let Some((t, ev)) = sim.queue.peek() {
                if t >= until {
                    break;
                }
                sim.queue.pop();
                if ev == Ev::PortFree(n, out) {
                    sim.now = t;
                    sim.handle(t, ev);
                }
            }
        };
        let mut arrivals = Vec::new();
        for (seq, &(t, packet)) in script.iter().enumerate() {
            run_before(&mut sim, t);
            sim.now = t;
            if packet {
                arrivals.push(t);
                sim.receive(n, hpl, data(seq as u32));
            } else {
                sim.try_tx(n, out);
            }
        }
        run_before(&mut sim, u64::MAX);
        let port = sim.fab.port(n, out).expect("leaf port");
        let tx = tx_ps(1048, port.rate_bps);
        let starts = port
            .wire
            .iter()
            .map(|&(arrive, pkt)| {
                arrive - port.delay_ps - tx_ps(u64::from(pkt.size), port.rate_bps)
            })
            .collect();
        (arrivals, starts, tx)
    }

    /// A FIFO port serialising one packet at a time: each packet starts
    /// when it arrives or when the one before it is done, the later.
    fn assert_one_at_a_time(arrivals: &[u64], starts: &[u64], tx: u64) {
        for w in starts.windows(2) {
            assert!(
                w[1] >= w[0] + tx,
                "a packet started at {} ps while the one started at {} ps was serialised for {tx} ps",
                w[1],
                w[0]
            );
        }
        let mut free = 0;
        let want: Vec<u64> = arrivals
            .iter()
            .map(|&a| {
                let start = a.max(free);
                free = start + tx;
                start
            })
            .collect();
        assert_eq!(
            starts, want,
            "departures of packets arriving at {arrivals:?}"
        );
    }

    #[test]
    fn a_stale_wake_up_with_packets_queued_does_not_start_a_second_packet() {
        // A leaves the port idle with no wake-up; B, arriving during A,
        // asks for one at T; C arrives at T before it fires, so B starts
        // then and the wake-up at T is stale while B is on the wire.
        let tx = drive_leaf_port(&[]).2;
        let (arrivals, starts, tx) = drive_leaf_port(&[(0, true), (tx / 2, true), (tx, true)]);
        assert_eq!(starts.len(), 3);
        assert_one_at_a_time(&arrivals, &starts, tx);
    }

    #[test]
    fn a_stale_wake_up_with_the_queue_empty_does_not_free_the_port() {
        // As above, but a RESUME-like kick at T starts B and leaves the
        // queue empty: the stale wake-up at T must not mark the port idle,
        // or C, arriving while B is on the wire, would start at once.
        let tx = drive_leaf_port(&[]).2;
        let (arrivals, starts, tx) =
            drive_leaf_port(&[(0, true), (tx / 2, true), (tx, false), (tx + tx / 2, true)]);
        assert_eq!(starts.len(), 3);
        assert_one_at_a_time(&arrivals, &starts, tx);
    }

    #[test]
    fn packets_and_acknowledgements_have_the_artifacts_sizes() {
        // 2500 bytes: packets of 1000, 1000 and 500 payload bytes, each
        // with 48 header bytes, and three 60-byte ACKs back.
        let net = two_dcs();
        let cfg = EngineConfig {
            ack_path: AckPath::Routed,
            ..EngineConfig::default()
        };
        let specs = [FlowSpec {
            size: 2_500,
            ..SPEC
        }];
        let out = run(&net, &cfg, &specs, 1e7).expect("run");
        assert!(out.flows[0].fct_us.is_some());
        let forward = net.links.iter().position(|l| l.from == 1).expect("A to B");
        let back = net.links.iter().position(|l| l.from == 2).expect("B to A");
        assert_eq!(out.links[forward].bytes, 2_500 + 3 * 48);
        assert_eq!(out.links[back].bytes, 3 * 60);
    }
}

#[cfg(test)]
mod ideal_test {
    use crate::run::{ideal_us, EngineConfig, FlowSpec, IdealFct};
    use lcmp_tables::{BuildOptions, Topology};

    #[test]
    fn the_round_trip_ideal_fct_counts_every_packets_header() {
        let topo = Topology::from_json(
            r#"{"name":"two","buffer_bytes":1073741824,
            "dcs":[{"id":1,"name":"A"},{"id":2,"name":"B"}],
            "links":[{"a":1,"b":2,"capacity_bps":100000000000,"delay_us":1000}]}"#,
        )
        .expect("valid topology");
        let net = crate::network::Network::new(&topo, &BuildOptions::default()).expect("network");
        let cfg = EngineConfig {
            ideal: IdealFct::Rtt,
            ..EngineConfig::default()
        };
        let spec = FlowSpec {
            start_us: 0.0,
            src_dc: 1,
            dst_dc: 2,
            src_host: 0,
            dst_host: 0,
            sport: 1,
            size: 1_000_000,
        };
        // third.cc `qp_finish`: base RTT + (size + 1000 packets x 48 B) at
        // 100 Gbps.
        let want = 2_000.0 + (1_000_000.0 + 1_000.0 * 48.0) * 8.0 / 100e9 * 1e6;
        let got = ideal_us(&net, &cfg, &spec);
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
}
