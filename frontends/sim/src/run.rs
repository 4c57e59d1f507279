//! The run vocabulary both models share: the flows to simulate
//! ([`FlowSpec`], with the artifact's flow ids), a run's settings
//! ([`EngineConfig`], the packet model's among them), and what a run
//! returns ([`RunOutput`]: per-flow [`FlowOutcome`]s, per-link
//! [`LinkOutcome`]s), with the ideal FCT both divide by. The fluid engine
//! ([`crate::engine`], which re-exports these names) and the packet model
//! ([`crate::packet`]) take and return these; neither owns them.

use lcmp_decide::{Addresses, FlowKey, Scheme};

use crate::network::Network;

/// One flow to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSpec {
    /// Start time, microseconds.
    pub start_us: f64,
    /// Source DC id.
    pub src_dc: u16,
    /// Destination DC id.
    pub dst_dc: u16,
    /// Source host within its DC.
    pub src_host: u16,
    /// Destination host within its DC.
    pub dst_host: u16,
    /// UDP source port of the flow's 5-tuple (RoCEv2 uses port 4791).
    pub sport: u16,
    /// Size, bytes (at least 1).
    pub size: u64,
}

/// The artifact's destination UDP port of every data flow (its traffic
/// files' `dport` column).
pub const ARTIFACT_DPORT: u16 = 100;

/// The address the artifact gives node `node`:
/// `0x0b000001 + (node / 256) << 16 + (node % 256) << 8`
/// (`node_id_to_ip` in its `scratch/third.cc`).
pub const fn artifact_ip(node: u32) -> u32 {
    0x0b00_0001u32
        .wrapping_add((node / 256) << 16)
        .wrapping_add((node % 256) << 8)
}

/// The artifact's flow-table key (`RdmaQueuePair::GenerateFlowId` in its
/// `rdma-queue-pair.cc`): `(sip << 16) | dip ^ sport ^ dport` in 32 bits.
/// Only the low 16 bits of the source address survive the shift, so
/// distinct flows share keys.
///
/// ```
/// # use lcmp_sim::engine::{artifact_flow_id, artifact_ip};
/// // Hosts 0 and 1 of DC1 sending to the same host with the same port
/// // number: their keys differ only in bits the shift drops... or not.
/// let a = artifact_flow_id(artifact_ip(0), artifact_ip(112), 10_000, 100);
/// let b = artifact_flow_id(artifact_ip(1), artifact_ip(112), 10_000, 100);
/// assert_eq!(a, b);
/// ```
pub const fn artifact_flow_id(sip: u32, dip: u32, sport: u16, dport: u16) -> u32 {
    (sip << 16) | (dip ^ sport as u32 ^ dport as u32)
}

impl FlowSpec {
    /// The flow's 5-tuple: hosts are `10.<dc high>.<dc low>.<host + 1>`.
    pub fn key(&self) -> FlowKey {
        let ip = |dc: u16, host: u16| {
            let [hi, lo] = dc.to_be_bytes();
            core::net::Ipv4Addr::new(10, hi, lo, (host % 254 + 1) as u8)
        };
        FlowKey::v4(
            ip(self.src_dc, self.src_host),
            ip(self.dst_dc, self.dst_host),
            self.sport,
            4791,
            17,
        )
    }

    /// The 5-tuple of the flow's acknowledgements: [`FlowSpec::key`] with
    /// addresses and ports swapped.
    pub fn ack_key(&self) -> FlowKey {
        let k = self.key();
        FlowKey {
            addrs: match k.addrs {
                Addresses::V4 { src, dst } => Addresses::V4 { src: dst, dst: src },
                Addresses::V6 { src, dst } => Addresses::V6 { src: dst, dst: src },
            },
            sport: k.dport,
            dport: k.sport,
            proto: k.proto,
        }
    }
}

/// Engine settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    /// The routing scheme of every switch.
    pub scheme: Scheme,
    /// Seed of the per-switch ECMP hash seeds.
    pub hash_seed: u32,
    /// Step, microseconds.
    pub dt_us: u32,
    /// Queue sampling cadence, microseconds.
    pub sample_us: u32,
    /// Host NIC rate, bits per second.
    pub nic_bps: u64,
    /// Hosts per DC.
    pub hosts_per_dc: u16,
    /// Whether senders converge to a fair share after one RTT.
    pub congestion_control: bool,
    /// Fraction of a queued link's capacity held back from fair-phase flows.
    pub drain: f64,
    /// Give up (flows left unfinished) after this much simulated time, µs.
    pub max_time_us: f64,
    /// What a flow's slowdown is relative to.
    pub ideal: IdealFct,
    /// Whether the FCT waits for the last byte's acknowledgement.
    pub ack_path: AckPath,
    /// The key under which the deciders' flow caches know a flow.
    pub flow_id: FlowIdentity,
    /// Feed each switch its queue depths right before each first-packet
    /// decision it makes (the paper's Fig. 2 step 1, as the artifact does),
    /// instead of every `sample_us` (which then only paces the fair-share
    /// updates).
    pub sample_on_decision: bool,
    /// Which engine runs: the fluid one here, or the packet-level model
    /// ([`crate::packet`]).
    pub model: Model,
    /// The packet model's settings (unused by the fluid engine).
    pub packet: crate::packet::config::PacketConfig,
    /// New flows per second the DCI switches are provisioned for: each
    /// switch's flow cache is sized for this rate and its tables' largest
    /// safe gap ([`crate::dci::flow_slots`]); 0: the least cache.
    pub flow_rate_per_s: f64,
    /// Flow-cache slots of every DCI switch instead of the sized ones
    /// (`--flow-cache`).
    pub flow_slots: Option<usize>,
}

/// The simulation model of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Model {
    /// The time-stepped fluid engine of this module (fast; the default).
    #[default]
    Fluid,
    /// The discrete-event packet-level RoCE model ([`crate::packet`]).
    Packet,
}

/// The ideal FCT a slowdown divides by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdealFct {
    /// `size / NIC rate` plus the least one-way propagation delay between
    /// the two DCs, over any path (paper §6.1).
    #[default]
    OneWay,
    /// The artifact's `standalone_fct`: the round trip of the best
    /// minimum-hop path (least delay, then largest bottleneck) plus
    /// `size / that path's bottleneck` (the NIC included). Pair it with
    /// [`AckPath::Routed`], whose FCT also ends with an acknowledgement.
    Rtt,
}

/// When a flow counts as complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckPath {
    /// When its last byte arrives (FCT = last byte out of the last queue +
    /// the forward path's propagation delay).
    #[default]
    None,
    /// When the acknowledgement of its last byte is back at the sender: the
    /// acknowledgements form their own flow, which the deciders route from
    /// the destination back to the source (the artifact's ACKs are routed
    /// by the destination DCI like any flow); the FCT adds that path's
    /// propagation delay and the queues it finds on it when the last byte
    /// arrives (the acknowledgement waits behind them).
    Routed,
}

/// The key a flow is known by in the deciders' flow caches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowIdentity {
    /// The 5-tuple: every flow is decided on its own.
    #[default]
    FiveTuple,
    /// The artifact's [`artifact_flow_id`] over its addresses and port
    /// numbers: every flow (and acknowledgement flow) whose key an earlier
    /// one of the same switch and destination already has, follows that
    /// earlier flow's pinned port, under LCMP and UCMP (the artifact's ECMP
    /// keeps no flow table). Pair it with per-pair source ports
    /// ([`crate::traffic::SourcePorts::PerPair`]), which the key assumes.
    Artifact,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            scheme: Scheme::Lcmp,
            hash_seed: 1,
            dt_us: 10,
            sample_us: 1000,
            nic_bps: 100_000_000_000,
            hosts_per_dc: 16,
            congestion_control: true,
            drain: 0.1,
            max_time_us: 60_000_000.0,
            ideal: IdealFct::OneWay,
            ack_path: AckPath::None,
            flow_id: FlowIdentity::FiveTuple,
            sample_on_decision: false,
            model: Model::Fluid,
            packet: crate::packet::config::PacketConfig::DEFAULT,
            flow_rate_per_s: 0.0,
            flow_slots: None,
        }
    }
}

/// What happened to one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOutcome {
    /// Directed link indices of its path (empty: no route).
    pub path: Vec<u32>,
    /// Flow completion time, microseconds (`None`: no route, or not done
    /// by `max_time_us`).
    pub fct_us: Option<f64>,
    /// Ideal FCT: size at NIC rate plus the shortest propagation delay.
    pub ideal_us: f64,
}

/// Per directed link totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkOutcome {
    /// Bytes that left the link's queue.
    pub bytes: u64,
    /// Bytes accepted into its queue before `window_us`.
    pub bytes_in_window: u64,
    /// Bytes that left its queue before `window_us`.
    pub served_in_window: u64,
    /// Flows whose path uses it.
    pub flows: u64,
    /// Largest queue seen at a step boundary, bytes.
    pub max_queue_bytes: u64,
    /// Most bytes served in one step.
    pub max_step_bytes: u64,
    /// The per-step service bound `ceil(capacity * dt / 8)`.
    pub step_bound_bytes: u64,
}

/// The result of one engine run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    /// Per flow, in input order.
    pub flows: Vec<FlowOutcome>,
    /// Per directed link, as [`Network::links`].
    pub links: Vec<LinkOutcome>,
    /// Bytes offered (sum of flow sizes).
    pub bytes_offered: u64,
    /// Bytes delivered.
    pub bytes_delivered: u64,
    /// Simulated time at the end, microseconds.
    pub end_us: f64,
    /// Steps taken.
    pub steps: u64,
    /// Flows the deciders could not route.
    pub unrouted: u64,
    /// First-packet decisions made statelessly because a flow cache was
    /// full (summed over switches).
    pub unpinned: u64,
    /// Whether every queue stayed within `0..=buffer` at every step.
    pub queues_within_buffer: bool,
    /// The packet model's counters (`None` for the fluid engine).
    pub packet: Option<crate::packet::config::PacketStats>,
}

/// A flow's ideal FCT, microseconds ([`IdealFct`]); both models divide by
/// it.
pub(crate) fn ideal_us(net: &Network, cfg: &EngineConfig, spec: &FlowSpec) -> f64 {
    let nic = cfg.nic_bps as f64;
    let pair = net.index(spec.src_dc).zip(net.index(spec.dst_dc));
    let bits = spec.size as f64 * 8.0;
    match cfg.ideal {
        IdealFct::OneWay => {
            let shortest = pair.and_then(|(a, b)| net.shortest_us[a][b]);
            bits / nic * 1e6 + shortest.unwrap_or(0) as f64
        }
        IdealFct::Rtt => {
            let (delay, bottleneck) = pair
                .and_then(|(a, b)| net.best_path[a][b])
                .unwrap_or((0, u64::MAX));
            let rate = (bottleneck as f64).min(nic).max(1.0);
            // The artifact's `qp_finish` (third.cc) counts every packet's
            // header: size + packets x (whole header - INT header).
            let pc = &cfg.packet;
            let packets = spec
                .size
                .max(1)
                .div_ceil(u64::from(pc.payload_bytes.max(1)));
            let wire_bits = bits + (packets * u64::from(pc.ideal_header_bytes()) * 8) as f64;
            2.0 * delay as f64 + wire_bits / rate * 1e6
        }
    }
}
