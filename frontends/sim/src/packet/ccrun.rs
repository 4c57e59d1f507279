//! The glue between the packet engine and the congestion controls of
//! [`super::cc`] other than DCQCN (`--cc hpcc|timely|dctcp`).
//!
//! Under DCQCN (the default) none of this exists: the engine's
//! [`CcRun`] and every flow's [`FlowCc`] are `None`, so DCQCN runs pay one
//! `Option` test per hook and no dynamic call.
//!
//! * **What rides with a packet.** A data packet's send time (TIMELY's
//!   timestamp) and its INT stamps (HPCC) are kept beside the engine's
//!   16-byte packets, per flow, keyed by the packet's sequence number
//!   ([`FlowCc::sent`], [`CcRun::egress`]); the receiver hands them to the
//!   acknowledgement it sends, keyed by the acknowledgement's sequence
//!   number and kind ([`FlowCc::echo`]), and the sender takes them back
//!   when it arrives ([`FlowCc::on_ack`]). A retransmission of a
//!   sequence number starts its record afresh, as the artifact's fresh
//!   header does.
//! * **Headers.** The artifact's INT header is part of every data packet
//!   and every acknowledgement (`IntHeader::GetStaticSize`,
//!   `simulation/src/network/utils/int-header.cc` lines 16-26): under
//!   HPCC (`IntHeader::mode` `NORMAL`) 64 hops of 8 bytes and a 2-byte
//!   count, 514 bytes (`int-header.h` line 84: `maxHop = 64`); under
//!   TIMELY (`TS`) an 8-byte timestamp; under DCQCN and DCTCP (`NONE`)
//!   nothing. [`PacketConfig::with_cc`] adds them to the data packets and
//!   to the acknowledgements (`rdma-hw.cc` `ReceiveUdp` pads an
//!   acknowledgement to 60 bytes only when it is smaller).
//! * **Window and `T`.** The artifact's `HAS_WIN 1`, `GLOBAL_T 1`: every
//!   queue pair's base window is the largest bandwidth-delay product of
//!   any host pair and its `T` the largest base RTT (`third.cc` line 228
//!   and lines 1548-1578, `rtt = 2·delay + txDelay`, `bdp = rtt·bw/8`);
//!   [`CcRun::new`] takes them over the DC pairs of the network, each
//!   path the artifact's best minimum-hop one with the fabric's three
//!   links at each end. The sender stops while its unacknowledged bytes
//!   reach the window ([`FlowCc::window_full`], `IsWinBound`) and is
//!   put back on its NIC by the acknowledgement that opens it.

use std::collections::HashMap;

use super::cc::{dctcp, hpcc, timely, Ack, CcKind, Controller, IntHop};
use super::config::PacketConfig;
use crate::network::Network;

/// The INT header of the artifact's data packets and acknowledgements
/// under `kind`, bytes (`int-header.cc` lines 16-26, `int-header.h` line
/// 84).
pub(crate) const fn int_header_bytes(kind: CcKind) -> u32 {
    match kind {
        // 64 hops × 8 bytes + the 2-byte hop count.
        CcKind::Hpcc => 64 * 8 + 2,
        // The 8-byte send time.
        CcKind::Timely => 8,
        CcKind::Dcqcn | CcKind::Dctcp => 0,
    }
}

impl PacketConfig {
    /// This configuration with `kind` at every sender: DCQCN on only for
    /// [`CcKind::Dcqcn`], and the INT header of the control (the
    /// artifact's: 514 bytes under HPCC, 8 under TIMELY) added to the data packets and the
    /// acknowledgements (an acknowledgement is `60` bytes or its headers,
    /// the larger: PPP 14 + IPv4 20 + qbb 12 + INT).
    #[must_use]
    pub fn with_cc(mut self, kind: CcKind) -> Self {
        let int = int_header_bytes(kind);
        self.cc = kind;
        self.dcqcn = kind == CcKind::Dcqcn;
        self.header_bytes += int;
        self.ack_bytes = self.ack_bytes.max(14 + 20 + 12 + int);
        self
    }

    /// The data packets' header bytes the artifact's ideal FCT counts
    /// (`qp_finish`: the whole header less the INT header).
    pub fn ideal_header_bytes(&self) -> u32 {
        self.header_bytes - int_header_bytes(self.cc).min(self.header_bytes)
    }
}

/// One flow's controller (no trait object: the engine matches once).
#[derive(Clone, Debug)]
pub(crate) enum Ctl {
    Hpcc(hpcc::Hpcc),
    Timely(timely::Timely),
    Dctcp(dctcp::Dctcp),
}

impl Ctl {
    fn get(&self) -> &dyn Controller {
        match self {
            Ctl::Hpcc(c) => c,
            Ctl::Timely(c) => c,
            Ctl::Dctcp(c) => c,
        }
    }

    fn get_mut(&mut self) -> &mut dyn Controller {
        match self {
            Ctl::Hpcc(c) => c,
            Ctl::Timely(c) => c,
            Ctl::Dctcp(c) => c,
        }
    }
}

/// What a packet carries for its sender's control: its send time and its
/// INT stamps.
#[derive(Clone, Debug, Default)]
struct Echo {
    sent_ps: u64,
    hops: Vec<IntHop>,
}

/// One flow's control state under `--cc hpcc|timely|dctcp`.
#[derive(Clone, Debug)]
pub(crate) struct FlowCc {
    pub(crate) ctl: Ctl,
    /// Data packets on their way: sequence number → record.
    inflight: HashMap<u32, Echo>,
    /// Acknowledgements on their way: (sequence number, NACK) → record.
    echoes: HashMap<(u32, bool), Echo>,
    /// The record of the data packet the receiver took last.
    received: Echo,
    /// The RTO a window stall armed: `snd_una` then, and its generation.
    stall: Option<(u32, u32)>,
}

impl FlowCc {
    /// The pacing rate, bits per second.
    pub(crate) fn rate_bps(&self) -> u64 {
        self.ctl.get().rate_bps()
    }

    /// Whether `in_flight_bytes` unacknowledged bytes fill the window
    /// (`IsWinBound`).
    pub(crate) fn window_full(&self, in_flight_bytes: u64) -> bool {
        self.ctl
            .get()
            .window_bytes()
            .is_some_and(|w| in_flight_bytes >= w)
    }

    /// The window stalls the sender with `snd_una` acknowledged and its
    /// RTO generation at `gens.0`: whether to arm the RTO (generation
    /// `gens.1`), so that a flow whose acknowledgements stop still goes
    /// back and resends; not while a stall's timer is pending.
    pub(crate) fn arm_stall_rto(&mut self, snd_una: u32, gens: (u32, u32)) -> bool {
        if self.stall.is_some_and(|(_, g)| g == gens.0) {
            return false;
        }
        self.stall = Some((snd_una, gens.1));
        true
    }

    /// The RTO of generation `gen` fires with `snd_una` acknowledged:
    /// whether it is a stall's timer and acknowledgements arrived since
    /// (then the sender does not go back; its next stall arms anew).
    pub(crate) fn acked_since_stall(&mut self, snd_una: u32, gen: u32) -> bool {
        match self.stall {
            Some((una, g)) if g == gen => {
                self.stall = None;
                snd_una > una
            }
            _ => false,
        }
    }

    /// Data packet `seq` leaves the sender at `now_ps`.
    pub(crate) fn sent(&mut self, seq: u32, now_ps: u64) {
        let e = self.inflight.entry(seq).or_default();
        e.sent_ps = now_ps;
        e.hops.clear();
    }

    /// Data packet `seq` reaches the receiver: its record waits for the
    /// receiver's answer ([`FlowCc::echo`]; none for a duplicate or a gap
    /// within the NACK interval, and the next packet's replaces it).
    pub(crate) fn received(&mut self, seq: u32) {
        self.received = self.inflight.remove(&seq).unwrap_or_default();
    }

    /// The receiver answers the packet it just received with an
    /// acknowledgement (`nack`: a NACK) carrying `ack_seq`: the packet's
    /// record goes with it.
    pub(crate) fn echo(&mut self, ack_seq: u32, nack: bool) {
        let e = std::mem::take(&mut self.received);
        self.echoes.insert((ack_seq, nack), e);
    }

    /// The sender takes an acknowledgement (`nack`) carrying `ack_seq`
    /// at `now_ps`, with `snd_nxt` packets sent; `payload` bytes a
    /// packet.
    pub(crate) fn on_ack(
        &mut self,
        now_ps: u64,
        ack_seq: u32,
        nack: bool,
        ecn: bool,
        snd_nxt: u32,
        payload: u64,
    ) {
        let e = self.echoes.remove(&(ack_seq, nack)).unwrap_or_default();
        let ack = Ack {
            now_ps,
            seq: u64::from(ack_seq) * payload,
            snd_nxt: u64::from(snd_nxt) * payload,
            ecn,
            sent_ps: e.sent_ps,
            hops: &e.hops,
        };
        self.ctl.get_mut().on_ack(&ack);
    }
}

/// A run's control settings under `--cc hpcc|timely|dctcp`, and the
/// switches' transmitted-byte counters HPCC's stamps carry.
#[derive(Clone, Debug)]
pub(crate) struct CcRun {
    pub(crate) kind: CcKind,
    line_bps: u64,
    /// The base window, bytes (`maxBdp` modulo 2^32; 0: none, as
    /// `IsWinBound` reads a zero window).
    pub(crate) base_win: u64,
    /// `T`, ps (`maxRtt`).
    pub(crate) base_rtt_ps: u64,
    /// Bytes each switch port has transmitted: (node, port) → bytes.
    tx_bytes: HashMap<(u32, u16), u64>,
}

impl CcRun {
    /// The run's settings for `pc.cc`; `None` under DCQCN.
    pub(crate) fn new(net: &Network, pc: &PacketConfig, nic_bps: u64) -> Option<Box<CcRun>> {
        if pc.cc == CcKind::Dcqcn {
            return None;
        }
        let (base_rtt_ps, base_win) = max_rtt_and_bdp(net, pc, nic_bps);
        Some(Box::new(CcRun {
            kind: pc.cc,
            line_bps: nic_bps,
            base_win,
            base_rtt_ps,
            tx_bytes: HashMap::new(),
        }))
    }

    /// A new flow's control, at line rate.
    pub(crate) fn flow(&self) -> Box<FlowCc> {
        let (line, win) = (self.line_bps, (self.base_win > 0).then_some(self.base_win));
        let ctl = match self.kind {
            CcKind::Hpcc => Ctl::Hpcc(hpcc::Hpcc::new(
                hpcc::HpccParams::ARTIFACT,
                line,
                self.base_rtt_ps,
                win,
            )),
            CcKind::Timely => Ctl::Timely(timely::Timely::new(
                timely::TimelyParams::ARTIFACT,
                line,
                win,
            )),
            CcKind::Dcqcn | CcKind::Dctcp => {
                Ctl::Dctcp(dctcp::Dctcp::new(dctcp::DctcpParams::ARTIFACT, line, win))
            }
        };
        Box::new(FlowCc {
            ctl,
            inflight: HashMap::new(),
            echoes: HashMap::new(),
            received: Echo::default(),
            stall: None,
        })
    }

    /// Switch port `at` (node, port) starts transmitting `pkt` at `now_ps`;
    /// under a control that stamps INT, a data packet gets the port's
    /// stamp (`SwitchNotifyDequeue`: the stamp with the bytes transmitted
    /// before and the data queued behind, then `m_txBytes += size`).
    pub(crate) fn egress(
        &mut self,
        flows: &mut [super::Flow],
        at: (u32, u16),
        port: &super::fabric::Port,
        now_ps: u64,
        pkt: &super::Pkt,
    ) {
        if !self.kind.stamps_int() {
            return;
        }
        let tx = self.tx_bytes.entry(at).or_insert(0);
        let before = *tx;
        *tx += u64::from(pkt.size);
        if pkt.kind != super::Kind::Data {
            return;
        }
        let fc = flows
            .get_mut(pkt.flow as usize)
            .and_then(|x| x.cc.as_deref_mut());
        if let Some(e) = fc.and_then(|fc| fc.inflight.get_mut(&pkt.seq)) {
            let stamp = IntHop::stamp(now_ps, before, port.data_bytes, port.rate_bps);
            e.hops.push(stamp);
        }
    }
}

/// The artifact's `maxRtt` (ps) and `maxBdp` (bytes) as a queue pair gets
/// it: modulo 2^32, since the 64-bit `maxBdp` is passed to
/// `RdmaClientHelper`'s `uint32_t win` (`rdma-client-helper.h` line 54; on
/// testbed8, DC3-DC1-DC5's 350 ms each way at 100 Gb/s, about
/// 8 750 000 000 B, arrives as about 160 000 000) over every pair of DCs of `net`
/// (`third.cc` lines 1548-1578). A host pair's path is the artifact's
/// best minimum-hop path between the DCs ([`Network::best_path`]) plus
/// the fabric's host-leaf, leaf-spine and spine-DCI links at each end;
/// `txDelay` is one payload's serialisation at every hop of it, the
/// inter-DC hops at the path's bottleneck (the third.cc sum over its
/// links; the inter-DC hop count is not kept, so one hop is counted,
/// nanoseconds against the milliseconds of the delay).
fn max_rtt_and_bdp(net: &Network, pc: &PacketConfig, nic_bps: u64) -> (u64, u64) {
    let bits = u128::from(pc.payload_bytes) * 8;
    let ser = |bps: u64| (bits * 1_000_000_000_000 / u128::from(bps.max(1))) as u64;
    let fabric_tx = 2 * (ser(pc.intra_bps) + ser(pc.intra_bps) + ser(pc.spine_dci_bps));
    let (mut max_rtt, mut max_bdp) = (0u64, 0u64);
    for row in &net.best_path {
        for &(delay_us, bottleneck) in row.iter().flatten() {
            if delay_us == 0 {
                // A DC with itself: no inter-DC flows.
                continue;
            }
            let one_way = delay_us * 1_000_000 + 6 * pc.intra_delay_ps;
            let bw = bottleneck.min(nic_bps).min(pc.intra_bps).max(1);
            let rtt = 2 * one_way + fabric_tx + ser(bottleneck);
            let bdp = (u128::from(rtt) * u128::from(bw) / 8 / 1_000_000_000_000) as u64;
            max_rtt = max_rtt.max(rtt);
            max_bdp = max_bdp.max(bdp);
        }
    }
    (max_rtt.max(1), max_bdp & u64::from(u32::MAX))
}

#[cfg(test)]
mod test {
    use super::*;
    use lcmp_tables::{BuildOptions, Topology};

    #[test]
    fn testbed8s_window_is_the_largest_bdp_modulo_2_to_the_32() {
        let topo = Topology::embedded("testbed8").expect("embedded");
        let net = Network::new(&topo, &BuildOptions::default()).expect("network");
        let pc = PacketConfig::DEFAULT.with_cc(CcKind::Hpcc);
        let run = CcRun::new(&net, &pc, 100_000_000_000).expect("HPCC run");
        // DC3 -> DC1 -> DC5: 250 + 100 ms each way, 12 µs of fabric links.
        let rtt_ps = 2 * (350_000 + 6) * 1_000_000;
        assert!(
            run.base_rtt_ps >= rtt_ps && run.base_rtt_ps < rtt_ps + 1_000_000,
            "{}",
            run.base_rtt_ps
        );
        let bdp = u128::from(run.base_rtt_ps) * 100 / 8 / 1_000;
        assert_eq!(u128::from(run.base_win), bdp % (1 << 32));
        assert!((160_000_000..161_000_000).contains(&run.base_win));
        assert!(CcRun::new(&net, &PacketConfig::DEFAULT, 100_000_000_000).is_none());
    }
}
