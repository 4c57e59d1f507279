//! The packet model's settings and counters: what the shared run
//! vocabulary ([`crate::run`]) carries for this model, in a module of their
//! own so that `run` does not import the model itself.

use serde::{Deserialize, Serialize};

use super::cc::CcKind;
use super::dcqcn::DcqcnParams;
#[cfg(doc)]
use super::mmu;

/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;

/// Where a DCI switch's shared pool (the bytes its PFC thresholds are
/// taken from) comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DciPool {
    /// The topology's DCI buffer less the reserve and headroom of the
    /// switch's intra-DC ports, the same at every DCI switch (the
    /// long-haul ports' headroom is provisioned on top).
    Buffer,
    /// The artifact's: a buffer of `buffer_mib` MiB less the reserve and
    /// headroom of every port of the switch, long-haul ones included, in
    /// the artifact's 32-bit arithmetic, so each switch gets its own pool
    /// ([`super::artifact_pool::pool_bytes`]; 40 MB to 3.7 GB on
    /// testbed8). `--preset artifact` without `--buffer`.
    Artifact {
        /// `DCI_BUFFER_SIZE`, MiB.
        buffer_mib: u32,
    },
}

/// The packet model's settings. [`PacketConfig::DEFAULT`] is the
/// artifact's testbed (docs/simulator.md lists each value's source).
#[derive(Clone, Debug, PartialEq)]
pub struct PacketConfig {
    /// Payload bytes per data packet (`PACKET_PAYLOAD_SIZE`).
    pub payload_bytes: u32,
    /// Header bytes per data packet: the artifact's
    /// `CustomHeader::GetStaticWholeHeaderSize`, PPP 14 (`ppp-header.cc`),
    /// IPv4 20, UDP 8, PG 2, sequence 4, an empty INT header under DCQCN:
    /// 1048-byte packets of a 1000-byte payload.
    pub header_bytes: u32,
    /// Bytes of an acknowledgement or NACK on the wire: the artifact pads
    /// them to 60 (`rdma-hw.cc`, `ReceiveUdp`: `60 - 14 - 20 - header`).
    pub ack_bytes: u32,
    /// Hosts per leaf switch.
    pub hosts_per_leaf: u16,
    /// Spine switches per DC.
    pub spines: u16,
    /// Host-leaf and leaf-spine link rate, bits per second.
    pub intra_bps: u64,
    /// Spine-DCI link rate, bits per second.
    pub spine_dci_bps: u64,
    /// Intra-DC link delay, picoseconds.
    pub intra_delay_ps: u64,
    /// Buffer of every leaf and spine switch, bytes (`BUFFER_SIZE`, MB).
    pub switch_buffer_bytes: u64,
    /// The shared pool of each DCI switch.
    pub dci_pool: DciPool,
    /// Reserve per ingress queue, bytes.
    pub reserve_bytes: u64,
    /// Dynamic PFC threshold shift: a queue may take `free >> shift`.
    /// `None` (the artifact's): per port by its rate,
    /// [`mmu::shift_for_rate`] (3 at NIC rate, 2 at 200 G, 1 at 400 G);
    /// `Some(n)`: `n` at every port (`--pfc-shift`).
    pub pfc_shift: Option<u32>,
    /// RESUME hysteresis, bytes.
    pub resume_offset_bytes: u64,
    /// Headroom per ingress as a multiple of its link's rate × delay (the
    /// artifact's `third.cc`: 3).
    pub headroom_factor: u64,
    /// DCQCN at the senders; off, every sender stays at line rate (or at
    /// the rate of `cc` when that is not DCQCN).
    pub dcqcn: bool,
    /// The senders' congestion control (`--cc`; set it with
    /// [`PacketConfig::with_cc`], which also sizes the INT header).
    pub cc: CcKind,
    /// DCQCN's parameters.
    pub dcqcn_params: DcqcnParams,
    /// Least time between two NACKs of a queue pair, picoseconds.
    pub nack_interval_ps: u64,
    /// Go back to the first unacknowledged packet if nothing was
    /// acknowledged for this long after the last packet left, picoseconds.
    pub rto_ps: u64,
    /// Acknowledgements in a priority queue at switches that PFC never
    /// pauses (`ACK_HIGH_PRIO`; the artifact's 0 puts them behind data).
    pub ack_high_priority: bool,
}

impl PacketConfig {
    /// The artifact's testbed and settings.
    pub const DEFAULT: PacketConfig = PacketConfig {
        payload_bytes: 1000,
        header_bytes: 48,
        ack_bytes: 60,
        hosts_per_leaf: 4,
        spines: 2,
        intra_bps: 100_000_000_000,
        spine_dci_bps: 400_000_000_000,
        intra_delay_ps: PS_PER_US,
        switch_buffer_bytes: 32 << 20,
        dci_pool: DciPool::Buffer,
        reserve_bytes: 4096,
        pfc_shift: None,
        resume_offset_bytes: 3 * 1024,
        headroom_factor: 3,
        dcqcn: true,
        cc: CcKind::Dcqcn,
        dcqcn_params: DcqcnParams::ARTIFACT,
        nack_interval_ps: 500 * PS_PER_US,
        rto_ps: 2_000_000 * PS_PER_US,
        ack_high_priority: false,
    };
}

impl Default for PacketConfig {
    fn default() -> Self {
        PacketConfig::DEFAULT
    }
}

/// Counters of one packet-model run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PacketStats {
    /// Events processed.
    pub events: u64,
    /// Data packets put on a host's wire (retransmissions included).
    pub data_packets: u64,
    /// Of those, retransmissions (go-back-N).
    pub retransmitted: u64,
    /// Acknowledgements sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Data packets marked with ECN.
    pub ecn_marked: u64,
    /// Acknowledgements that carried the congestion flag (CNPs).
    pub cnps: u64,
    /// DCQCN rate cuts.
    pub rate_cuts: u64,
    /// PAUSE frames sent, by the switch kind that sent them: leaf, spine,
    /// DCI.
    pub pauses: [u64; 3],
    /// PAUSE frames that reached a host NIC.
    pub host_pauses: u64,
    /// Packets dropped for lack of buffer.
    pub drops: u64,
    /// When each switch kind (leaf, spine, DCI) sent its first PAUSE,
    /// microseconds.
    pub first_pause_us: [Option<f64>; 3],
    /// Packets without a route (or past their hop limit).
    pub unroutable: u64,
    /// Largest data queue at any DCI inter-DC port, bytes.
    pub max_dci_queue_bytes: u64,
    /// Largest data queue at any leaf or spine port, bytes.
    pub max_fabric_queue_bytes: u64,
}
