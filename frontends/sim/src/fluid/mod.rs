//! The flow-level fluid engine: time-stepped, integer bytes, FIFO queues.
//!
//! Every step of `dt` (default 10 µs) runs these phases, one method each
//! (`Engine::step` calls them in this order):
//!
//! 1. `sample_queues`: at the sampling cadence (default 1 ms) every DCI
//!    switch's decider is fed the depth of each of its egress queues
//!    ([`Decider::sample`](lcmp_decide::Decider::sample)).
//! 2. `admit_arrivals`: flows that start in the step are routed hop by
//!    hop: at each switch the real decider picks the egress port for
//!    group = destination DC ([`Decider::on_packet`](lcmp_decide::Decider::on_packet)), until the flow
//!    reaches its destination. (All hops are decided at the flow's start
//!    time; see the limits in `docs/simulator.md`.)
//! 3. `set_rates`: senders get rates: before one path RTT a flow sends at
//!    its share of its host's 100 Gbps NIC (line rate if alone); after it,
//!    congestion control has converged to a max-min fair share of the
//!    path's links and the NIC (`fair_share`, in `fluid/fair_share.rs`).
//!    A link with a standing queue offers fair-phase flows `(1 - drain)` of
//!    its capacity, so standing queues drain.
//! 4. `serve`: each link serves at most its capacity's worth of bytes from
//!    the head of its FIFO (chunks of `(flow, hop, bytes)`).
//! 5. `offer`, `forward`, `inject`: bytes offered to a link (served by the
//!    previous hop, or injected by a sender) are accepted up to the buffer
//!    space the link had at the start of the step; the rest stays where it
//!    was (lossless back-pressure: a sender is held back, an upstream queue
//!    keeps its bytes). Bytes served by a flow's last hop are delivered.
//! 6. `account`, `retire`: per-link totals and the buffer check; senders
//!    that have injected their last byte stop sending.
//!
//! A flow completes when its last byte leaves its last hop; its FCT adds
//! the path's one-way propagation delay. A byte needs one step per hop to
//! cross the network (store and forward at step granularity): at most
//! `hops * dt` of model error per flow.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use lcmp_decide::{FlowKey, GroupId, Instant, Scheme};

use crate::dci::{self, Switch};
use crate::error::SimError;
use crate::network::Network;

mod fair_share;

pub(crate) use crate::run::ideal_us;
pub use crate::run::{
    artifact_flow_id, artifact_ip, AckPath, EngineConfig, FlowIdentity, FlowOutcome, FlowSpec,
    IdealFct, LinkOutcome, Model, RunOutput, ARTIFACT_DPORT,
};

#[derive(Clone, Copy, Debug)]
struct Chunk {
    flow: u32,
    hop: u8,
    bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Popped {
    chunk: Chunk,
    link: u32,
    /// Fraction of the step at which its last byte left.
    end: f64,
}

#[derive(Clone, Debug)]
struct Flow {
    remaining: u64,
    delivered: u64,
    carry: f64,
    rate_bps: f64,
    fair_bps: f64,
    fair_at_us: f64,
    host: usize,
    path: Vec<u32>,
    /// The acknowledgements' path, destination to source (empty: none).
    ack: Vec<u32>,
    prop_us: f64,
    fair_phase: bool,
}

struct Link {
    queue: VecDeque<Chunk>,
    backlog: u64,
    carry: f64,
    bytes_per_step: f64,
}

/// Runs `flows` over `net`, every switch a real [`Decider`](lcmp_decide::Decider) with `cfg.scheme`.
/// `window_us` only scopes [`LinkOutcome::bytes_in_window`].
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
    let mut engine = Engine::new(
        Cow::Borrowed(net),
        Cow::Borrowed(cfg),
        Cow::Borrowed(specs),
        window_us,
    )?;
    let mut state = engine.begin();
    while engine.step(&mut state) {}
    Ok(engine.finish(&state))
}

struct Engine<'a> {
    net: Cow<'a, Network>,
    cfg: Cow<'a, EngineConfig>,
    specs: Cow<'a, [FlowSpec]>,
    window_us: f64,
    switches: Vec<Box<Switch>>,
    flows: Vec<Flow>,
    outcomes: Vec<FlowOutcome>,
    links: Vec<Link>,
    stats: Vec<LinkOutcome>,
    sending: Vec<u32>,
    host_sending: Vec<u32>,
    fair_dirty: bool,
    bytes_delivered: u64,
    unrouted: u64,
    queues_ok: bool,
    /// Under [`FlowIdentity::Artifact`]: the first 5-tuple seen per
    /// (switch, group, artifact key).
    aliases: HashMap<(usize, u16, u32), FlowKey>,
}

impl<'a> Engine<'a> {
    fn new(
        net: Cow<'a, Network>,
        cfg: Cow<'a, EngineConfig>,
        specs: Cow<'a, [FlowSpec]>,
        window_us: f64,
    ) -> Result<Self, SimError> {
        let switches = dci::switches(&net, &cfg)?;
        let dt_s = f64::from(cfg.dt_us) * 1e-6;
        let links = net
            .links
            .iter()
            .map(|l| Link {
                queue: VecDeque::new(),
                backlog: 0,
                carry: 0.0,
                bytes_per_step: l.capacity_bps as f64 * dt_s / 8.0,
            })
            .collect::<Vec<_>>();
        let stats = links
            .iter()
            .map(|l| LinkOutcome {
                step_bound_bytes: l.bytes_per_step.ceil() as u64,
                ..Default::default()
            })
            .collect();
        let hosts = net.dcs.len() * usize::from(cfg.hosts_per_dc.max(1));
        let n_flows = specs.len();
        Ok(Engine {
            net,
            cfg,
            specs,
            window_us,
            switches,
            flows: Vec::with_capacity(n_flows),
            outcomes: Vec::with_capacity(n_flows),
            links,
            stats,
            sending: Vec::new(),
            host_sending: vec![0; hosts],
            fair_dirty: false,
            bytes_delivered: 0,
            unrouted: 0,
            queues_ok: true,
            aliases: HashMap::new(),
        })
    }

    /// Feeds every switch its queue depths (unless switches sample right
    /// before their decisions).
    fn sample_all(&mut self, now: Instant) {
        if self.cfg.sample_on_decision {
            return;
        }
        for s in 0..self.switches.len() {
            self.sample_switch(s, now);
        }
    }

    /// Feeds switch `s` the depth of each of its egress queues.
    fn sample_switch(&mut self, s: usize, now: Instant) {
        let (Some(sw), Some(ports)) = (self.switches.get_mut(s), self.net.port_links.get(s)) else {
            return;
        };
        let links = &self.links;
        let depths = ports
            .iter()
            .enumerate()
            .filter_map(|(p, link)| link.map(|l| (p as u8, links[l].backlog)));
        dci::sample(sw, now, depths);
    }

    /// The artifact node number of a host (`DC index * hosts + host`).
    fn node(&self, dc: u16, host: u16) -> u32 {
        let hosts = u32::from(self.cfg.hosts_per_dc.max(1));
        let dc = self.net.index(dc).unwrap_or(0) as u32;
        dc.wrapping_mul(hosts).wrapping_add(u32::from(host) % hosts)
    }

    /// Hop-by-hop routing by the deciders, from `from` to `to`, of the
    /// flow `key` (artifact key `id`). `None`: no route (or a loop).
    fn route(
        &mut self,
        key: FlowKey,
        id: u32,
        (from, to): (u16, u16),
        now: Instant,
    ) -> Option<Vec<u32>> {
        // The artifact's ECMP hashes every packet and keeps no flow table.
        let alias = self.cfg.flow_id == FlowIdentity::Artifact && self.cfg.scheme != Scheme::Ecmp;
        let mut cur = from;
        let mut path = Vec::new();
        while cur != to {
            let s = self.net.index(cur)?;
            // A key seen before follows its pin: no decision, no sample.
            let (used, fresh) = if alias {
                let entry = self.aliases.entry((s, to, id));
                let fresh = matches!(entry, std::collections::hash_map::Entry::Vacant(_));
                (*entry.or_insert(key), fresh)
            } else {
                (key, true)
            };
            if self.cfg.sample_on_decision && fresh {
                self.sample_switch(s, now);
            }
            let port = self
                .switches
                .get_mut(s)?
                .on_packet(now, &used, GroupId(to))
                .port()?;
            let link = (*self.net.port_links.get(s)?.get(usize::from(port.0))?)?;
            path.push(link as u32);
            cur = self.net.links.get(link)?.to;
            if path.len() > self.net.dcs.len() {
                return None;
            }
        }
        Some(path)
    }

    /// The flow's ideal FCT, microseconds ([`IdealFct`]).
    fn ideal_us(&self, spec: &FlowSpec) -> f64 {
        ideal_us(&self.net, &self.cfg, spec)
    }

    /// The forward path and, with [`AckPath::Routed`], the
    /// acknowledgements' path; `None` if either has no route.
    fn routes(&mut self, spec: &FlowSpec, now: Instant) -> Option<(Vec<u32>, Vec<u32>)> {
        if spec.src_dc == spec.dst_dc {
            return None;
        }
        let (sip, dip) = (
            artifact_ip(self.node(spec.src_dc, spec.src_host)),
            artifact_ip(self.node(spec.dst_dc, spec.dst_host)),
        );
        let key = spec.key();
        let id = artifact_flow_id(sip, dip, spec.sport, ARTIFACT_DPORT);
        let path = self.route(key, id, (spec.src_dc, spec.dst_dc), now)?;
        let ack = match self.cfg.ack_path {
            AckPath::None => Vec::new(),
            AckPath::Routed => {
                let reverse = spec.ack_key();
                let id = artifact_flow_id(dip, sip, ARTIFACT_DPORT, spec.sport);
                self.route(reverse, id, (spec.dst_dc, spec.src_dc), now)?
            }
        };
        Some((path, ack))
    }

    fn admit(&mut self, i: usize) {
        let spec = self.specs[i];
        let f = self.flows.len() as u32;
        let ideal_us = self.ideal_us(&spec);
        let now = dci::instant_at_us(&self.net, spec.start_us as u64);
        let route = self.routes(&spec, now);
        let host = self.net.index(spec.src_dc).unwrap_or(0)
            * usize::from(self.cfg.hosts_per_dc.max(1))
            + usize::from(spec.src_host % self.cfg.hosts_per_dc.max(1));
        let Some((path, ack)) = route else {
            self.unrouted += 1;
            self.flows.push(Flow {
                remaining: 0,
                delivered: 0,
                carry: 0.0,
                rate_bps: 0.0,
                fair_bps: 0.0,
                fair_at_us: 0.0,
                host,
                path: Vec::new(),
                ack: Vec::new(),
                prop_us: 0.0,
                fair_phase: false,
            });
            self.outcomes.push(FlowOutcome {
                path: Vec::new(),
                fct_us: None,
                ideal_us,
            });
            return;
        };
        let prop_us: f64 = path
            .iter()
            .map(|&l| self.net.links[l as usize].delay_us as f64)
            .sum();
        for &l in &path {
            self.stats[l as usize].flows += 1;
        }
        self.flows.push(Flow {
            remaining: spec.size,
            delivered: 0,
            carry: 0.0,
            rate_bps: 0.0,
            fair_bps: 0.0,
            fair_at_us: spec.start_us + 2.0 * prop_us,
            host,
            path: path.clone(),
            ack,
            prop_us,
            fair_phase: false,
        });
        self.outcomes.push(FlowOutcome {
            path,
            fct_us: None,
            ideal_us,
        });
        self.sending.push(f);
        self.host_sending[host] += 1;
    }

    /// The loop state before the first step.
    fn begin(&self) -> LoopState {
        let mut order: Vec<usize> = (0..self.specs.len()).collect();
        order.sort_by(|&a, &b| {
            self.specs[a]
                .start_us
                .total_cmp(&self.specs[b].start_us)
                .then(a.cmp(&b))
        });
        LoopState {
            order,
            // Flows are stored in admission order; `slot` maps back to input order.
            slot: vec![0usize; self.specs.len()],
            next: 0,
            step: 0,
            next_sample_us: 0,
            popped: Vec::new(),
            offers: vec![0; self.links.len()],
            space: vec![0; self.links.len()],
            served_step: vec![0; self.links.len()],
            inject: Vec::new(),
            queued_total: 0,
            t0: 0.0,
        }
    }

    /// One step of `dt` (or a jump over an idle gap); `false` when the run
    /// is over (everything delivered, or `max_time_us` passed). The phases
    /// run in the order of the module docs.
    fn step(&mut self, st: &mut LoopState) -> bool {
        let dt = f64::from(self.cfg.dt_us.max(1));
        let t0 = st.step as f64 * dt;
        st.t0 = t0;
        let t1 = t0 + dt;
        let arrivals_left = st.next < st.order.len();
        if !arrivals_left && self.sending.is_empty() && st.queued_total == 0 {
            return false;
        }
        if t0 > self.cfg.max_time_us {
            return false;
        }
        // Idle network: jump to the next arrival.
        if self.sending.is_empty() && st.queued_total == 0 && arrivals_left {
            let start = self.specs[st.order[st.next]].start_us;
            if start >= t1 {
                st.step = (start / dt).floor() as u64;
                return true;
            }
        }
        self.sample_queues(st, t0);
        self.admit_arrivals(st, t1);
        self.set_rates(st, t0, t1, dt);
        self.serve(st);
        self.offer(st);
        self.forward(st, t0, t1, dt);
        self.inject(st, t1);
        self.account(st, t1);
        self.retire();
        st.step += 1;
        true
    }

    /// Step 1: at the sampling cadence, every switch's queue depths.
    fn sample_queues(&mut self, st: &mut LoopState, t0: f64) {
        let sample_every = u64::from(self.cfg.sample_us.max(1));
        let now_us = t0 as u64;
        if now_us >= st.next_sample_us {
            self.sample_all(dci::instant_at_us(&self.net, now_us));
            st.next_sample_us = (now_us / sample_every + 1) * sample_every;
            self.fair_dirty = true;
        }
    }

    /// Step 2: the flows that start before `t1`, routed by the deciders.
    fn admit_arrivals(&mut self, st: &mut LoopState, t1: f64) {
        while st.next < st.order.len() && self.specs[st.order[st.next]].start_us < t1 {
            let i = st.order[st.next];
            st.slot[self.flows.len()] = i;
            self.admit(i);
            st.next += 1;
        }
    }

    /// Step 3: each sender's rate (its NIC share before one RTT, its
    /// max-min fair share after), and the bytes it offers in the step.
    fn set_rates(&mut self, st: &mut LoopState, t0: f64, t1: f64, dt: f64) {
        for k in 0..self.sending.len() {
            let f = self.sending[k] as usize;
            let fl = &mut self.flows[f];
            if self.cfg.congestion_control && !fl.fair_phase && t0 >= fl.fair_at_us {
                fl.fair_phase = true;
                self.fair_dirty = true;
            }
        }
        if self.fair_dirty {
            self.fair_share();
            self.fair_dirty = false;
        }
        let nic = self.cfg.nic_bps as f64;
        st.inject.clear();
        for &f in &self.sending {
            let fl = &mut self.flows[f as usize];
            fl.rate_bps = if fl.fair_phase {
                fl.fair_bps
            } else {
                nic / f64::from(self.host_sending[fl.host].max(1))
            };
            let start = self.specs[st.slot[f as usize]].start_us;
            let span = (t1 - start.max(t0)).clamp(0.0, dt);
            let want = fl.rate_bps * span * 1e-6 / 8.0 + fl.carry;
            let bytes = (want.floor() as u64).min(fl.remaining);
            fl.carry = if bytes < fl.remaining {
                want - bytes as f64
            } else {
                0.0
            };
            if bytes > 0 {
                st.inject.push((f, bytes));
            }
        }
    }

    /// Step 4: each link pops up to its capacity's worth of bytes from the
    /// head of its FIFO; the buffer space it had before is what it accepts.
    fn serve(&mut self, st: &mut LoopState) {
        st.popped.clear();
        for (li, link) in self.links.iter_mut().enumerate() {
            st.space[li] = self.net.links[li].buffer_bytes.saturating_sub(link.backlog);
            st.served_step[li] = 0;
            if link.backlog == 0 {
                link.carry = 0.0;
                continue;
            }
            let want = link.bytes_per_step + link.carry;
            let budget = want.floor() as u64;
            let mut left = budget;
            while left > 0 {
                let Some(front) = link.queue.front_mut() else {
                    break;
                };
                let take = front.bytes.min(left);
                let chunk = Chunk {
                    bytes: take,
                    ..*front
                };
                front.bytes -= take;
                if front.bytes == 0 {
                    link.queue.pop_front();
                }
                left -= take;
                let end = if budget > 0 {
                    (budget - left) as f64 / budget as f64
                } else {
                    1.0
                };
                st.popped.push(Popped {
                    chunk,
                    link: li as u32,
                    end,
                });
            }
            let served = budget - left;
            st.served_step[li] = served;
            link.backlog -= served;
            link.carry = if link.backlog > 0 {
                want - budget as f64
            } else {
                0.0
            };
        }
    }

    /// Step 5, offers: the bytes offered to each link in the step, what
    /// the previous hop served and what senders inject.
    fn offer(&self, st: &mut LoopState) {
        st.offers.fill(0);
        for p in &st.popped {
            let path = &self.flows[p.chunk.flow as usize].path;
            if let Some(&nl) = path.get(usize::from(p.chunk.hop) + 1) {
                st.offers[nl as usize] += p.chunk.bytes;
            }
        }
        for &(f, bytes) in &st.inject {
            st.offers[self.flows[f as usize].path[0] as usize] += bytes;
        }
    }

    /// Step 5, served bytes: delivered at a flow's last hop (which may
    /// complete it), else forwarded up to the next link's share of its
    /// space; what the next link refuses goes back to the head of its FIFO.
    fn forward(&mut self, st: &mut LoopState, t0: f64, t1: f64, dt: f64) {
        let mut refused: Vec<(u32, Chunk)> = Vec::new();
        for p in &st.popped {
            let f = p.chunk.flow as usize;
            let hop = usize::from(p.chunk.hop);
            let next_link = self.flows[f].path.get(hop + 1).copied();
            let li = p.link as usize;
            match next_link {
                None => {
                    self.stats[li].bytes += p.chunk.bytes;
                    let fl = &mut self.flows[f];
                    fl.delivered += p.chunk.bytes;
                    self.bytes_delivered += p.chunk.bytes;
                    if fl.remaining == 0 && fl.delivered == self.specs[st.slot[f]].size {
                        let done = t0 + dt * p.end;
                        let start = self.specs[st.slot[f]].start_us;
                        let ack_us = ack_delay_us(&fl.ack, &self.net, &self.links);
                        self.outcomes[f].fct_us = Some(done - start + fl.prop_us + ack_us);
                    }
                }
                Some(nl) => {
                    let nl = nl as usize;
                    let ok = accept(p.chunk.bytes, nl, &st.offers, &st.space);
                    self.stats[li].bytes += ok;
                    if ok > 0 {
                        push(
                            &mut self.links[nl],
                            Chunk {
                                flow: p.chunk.flow,
                                hop: p.chunk.hop + 1,
                                bytes: ok,
                            },
                        );
                        if t1 <= self.window_us {
                            self.stats[nl].bytes_in_window += ok;
                        }
                    }
                    if ok < p.chunk.bytes {
                        refused.push((
                            p.link,
                            Chunk {
                                bytes: p.chunk.bytes - ok,
                                ..p.chunk
                            },
                        ));
                    }
                }
            }
        }
        for (li, chunk) in refused.into_iter().rev() {
            let link = &mut self.links[li as usize];
            link.backlog += chunk.bytes;
            link.queue.push_front(chunk);
            st.served_step[li as usize] -= chunk.bytes;
        }
    }

    /// Step 5, injected bytes: accepted into a flow's first link up to its
    /// share of the space; a sender held back loses its carry.
    fn inject(&mut self, st: &mut LoopState, t1: f64) {
        for &(f, bytes) in &st.inject {
            let first = self.flows[f as usize].path[0] as usize;
            let ok = accept(bytes, first, &st.offers, &st.space);
            if ok > 0 {
                push(
                    &mut self.links[first],
                    Chunk {
                        flow: f,
                        hop: 0,
                        bytes: ok,
                    },
                );
                if t1 <= self.window_us {
                    self.stats[first].bytes_in_window += ok;
                }
                let fl = &mut self.flows[f as usize];
                fl.remaining -= ok;
                if ok < bytes {
                    fl.carry = 0.0;
                }
            }
        }
    }

    /// Step 6: per-link totals of the step, the buffer check, and the bytes
    /// queued.
    fn account(&mut self, st: &mut LoopState, t1: f64) {
        for (li, link) in self.links.iter().enumerate() {
            let stats = &mut self.stats[li];
            stats.max_queue_bytes = stats.max_queue_bytes.max(link.backlog);
            stats.max_step_bytes = stats.max_step_bytes.max(st.served_step[li]);
            if t1 <= self.window_us {
                stats.served_in_window += st.served_step[li];
            }
            if link.backlog > self.net.links[li].buffer_bytes {
                self.queues_ok = false;
            }
        }
        st.queued_total = self.links.iter().map(|l| l.backlog).sum();
    }

    /// Step 6: senders that have injected their last byte stop sending.
    fn retire(&mut self) {
        let mut k = 0;
        while k < self.sending.len() {
            let f = self.sending[k] as usize;
            if self.flows[f].remaining == 0 {
                let h = self.flows[f].host;
                self.host_sending[h] -= 1;
                if self.flows[f].fair_phase {
                    self.fair_dirty = true;
                }
                self.sending.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }

    /// The run's output so far (all of it once [`Engine::step`] returned
    /// `false`). Flows not admitted yet have no path and no FCT.
    fn finish(&self, st: &LoopState) -> RunOutput {
        let t0 = st.t0;
        let step = st.step;
        let slot = &st.slot;
        let bytes_offered: u64 = self.specs.iter().map(|s| s.size).sum();
        let mut outcomes = vec![
            FlowOutcome {
                path: Vec::new(),
                fct_us: None,
                ideal_us: 0.0
            };
            self.specs.len()
        ];
        for (f, o) in self.outcomes.iter().enumerate() {
            outcomes[slot[f]] = o.clone();
        }
        RunOutput {
            flows: outcomes,
            links: self.stats.clone(),
            bytes_offered,
            bytes_delivered: self.bytes_delivered,
            end_us: t0,
            steps: step,
            unrouted: self.unrouted,
            unpinned: self.switches.iter().map(|s| s.counters().unpinned).sum(),
            queues_within_buffer: self.queues_ok,
            packet: None,
        }
    }
}

/// The main loop's state between steps.
struct LoopState {
    order: Vec<usize>,
    slot: Vec<usize>,
    next: usize,
    step: u64,
    next_sample_us: u64,
    popped: Vec<Popped>,
    offers: Vec<u64>,
    space: Vec<u64>,
    served_step: Vec<u64>,
    inject: Vec<(u32, u64)>,
    queued_total: u64,
    t0: f64,
}

/// A run that advances on demand, for frontends that show it as it goes
/// (the wasm demo): the same engine as [`run`], owning its inputs.
///
/// ```
/// # use lcmp_sim::engine::{EngineConfig, FlowSpec, Stepper};
/// # use lcmp_sim::network::Network;
/// # use lcmp_tables::{BuildOptions, Topology};
/// let topo = Topology::embedded("testbed8").unwrap();
/// let net = Network::new(&topo, &BuildOptions::default()).unwrap();
/// let flow = FlowSpec { start_us: 0.0, src_dc: 1, dst_dc: 8, src_host: 0, dst_host: 0, sport: 1, size: 1_000_000 };
/// let mut s = Stepper::new(net, EngineConfig::default(), vec![flow], 1000.0).unwrap();
/// while s.advance(1_000.0) {}
/// assert!(s.output().flows[0].fct_us.is_some());
/// ```
pub struct Stepper {
    engine: Engine<'static>,
    state: LoopState,
    running: bool,
}

impl Stepper {
    /// A run of `specs` over `net` (see [`run`]), not started.
    ///
    /// # Errors
    /// As [`run`].
    pub fn new(
        net: Network,
        cfg: EngineConfig,
        specs: Vec<FlowSpec>,
        window_us: f64,
    ) -> Result<Self, SimError> {
        let engine = Engine::new(
            Cow::Owned(net),
            Cow::Owned(cfg),
            Cow::Owned(specs),
            window_us,
        )?;
        let state = engine.begin();
        Ok(Stepper {
            engine,
            state,
            running: true,
        })
    }

    /// Steps until simulated time reaches `until_us` or the run ends;
    /// at most `until_us / dt` steps. Returns whether the run goes on.
    pub fn advance(&mut self, until_us: f64) -> bool {
        let dt = f64::from(self.engine.cfg.dt_us.max(1));
        while self.running && (self.state.step as f64) * dt < until_us {
            self.running = self.engine.step(&mut self.state);
        }
        self.running
    }

    /// Simulated time reached, microseconds.
    pub fn now_us(&self) -> f64 {
        self.state.step as f64 * f64::from(self.engine.cfg.dt_us.max(1))
    }

    /// Whether the run is still going.
    pub fn running(&self) -> bool {
        self.running
    }

    /// Current backlog of each directed link ([`Network::links`] order), bytes.
    pub fn queue_bytes(&self) -> Vec<u64> {
        self.engine.links.iter().map(|l| l.backlog).collect()
    }

    /// The network.
    pub fn network(&self) -> &Network {
        &self.engine.net
    }

    /// The flows, in input order.
    pub fn specs(&self) -> &[FlowSpec] {
        &self.engine.specs
    }

    /// The output so far, as [`run`] returns it at the end (flows not
    /// finished yet have no FCT).
    pub fn output(&self) -> RunOutput {
        self.engine.finish(&self.state)
    }
}

/// The time an acknowledgement sent now needs along `ack`: each link's
/// propagation delay plus the time to drain the queue it finds there
/// (zero for an empty path).
fn ack_delay_us(ack: &[u32], net: &Network, links: &[Link]) -> f64 {
    ack.iter()
        .filter_map(|&l| Some((net.links.get(l as usize)?, links.get(l as usize)?)))
        .map(|(d, q)| {
            d.delay_us as f64 + q.backlog as f64 * 8.0 / d.capacity_bps.max(1) as f64 * 1e6
        })
        .sum()
}

/// The part of `bytes` that `link` accepts: all of it if the link's
/// offers fit its space, else the offer's share of the space.
fn accept(bytes: u64, link: usize, offers: &[u64], space: &[u64]) -> u64 {
    let (o, s) = (offers[link], space[link]);
    if o <= s {
        bytes
    } else {
        (u128::from(bytes) * u128::from(s) / u128::from(o)) as u64
    }
}

fn push(link: &mut Link, chunk: Chunk) {
    link.backlog += chunk.bytes;
    if let Some(back) = link.queue.back_mut() {
        if back.flow == chunk.flow && back.hop == chunk.hop {
            back.bytes += chunk.bytes;
            return;
        }
    }
    link.queue.push_back(chunk);
}
