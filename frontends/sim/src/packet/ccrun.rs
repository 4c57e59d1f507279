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

use std::collections::VecDeque;

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

/// One INT stamp in 16 bytes: the time, and the transmitted bytes (40
/// bits of 128 B units: 140 TB), the queue (the header's 17 bits) and the
/// port's rate (7 bits: an index into [`CcRun::rates`]) in one word. A
/// stamp that does not fit is kept whole ([`Hops`] spills).
#[derive(Clone, Copy, Debug, Default)]
struct PackedHop {
    time_ns: u64,
    word: u64,
}

const PACK_BYTES_BITS: u32 = 40;
const PACK_RATE_SHIFT: u32 = PACK_BYTES_BITS + super::cc::INT_QLEN_BITS;
const PACK_RATES: usize = 1 << (64 - PACK_RATE_SHIFT);

impl PackedHop {
    fn pack(hop: &IntHop, rate: usize) -> Option<Self> {
        let fits = hop.bytes_units >> PACK_BYTES_BITS == 0
            && hop.qlen_units >> super::cc::INT_QLEN_BITS == 0
            && rate < PACK_RATES;
        fits.then_some(PackedHop {
            time_ns: hop.time_ns,
            word: hop.bytes_units
                | hop.qlen_units << PACK_BYTES_BITS
                | (rate as u64) << PACK_RATE_SHIFT,
        })
    }

    fn unpack(self, rates: &[u64]) -> IntHop {
        let rate = (self.word >> PACK_RATE_SHIFT) as usize;
        IntHop {
            time_ns: self.time_ns,
            bytes_units: self.word & ((1 << PACK_BYTES_BITS) - 1),
            qlen_units: (self.word >> PACK_BYTES_BITS) & ((1 << super::cc::INT_QLEN_BITS) - 1),
            line_bps: rates.get(rate).copied().unwrap_or(0),
        }
    }
}

/// The INT stamps of one data packet (HPCC): up to [`INLINE_HOPS`]
/// packed in place, so a record is one block of 128 bytes with no
/// allocation of its own; a longer path, or a stamp that does not pack,
/// moves them all, whole, into `spill`.
#[derive(Clone, Debug, Default)]
struct Hops {
    len: u8,
    inline: [PackedHop; INLINE_HOPS],
    // A box (8 bytes), not the `Vec` itself (24): every record in flight
    // carries this field, and almost none uses it.
    #[allow(clippy::box_collection)]
    spill: Option<Box<Vec<IntHop>>>,
}

/// Stamps a [`Hops`] holds in place: a testbed8 path has 6 or 7 switch
/// egresses (leaf, spine, the DCI switches, spine, leaf).
const INLINE_HOPS: usize = 7;

impl Hops {
    /// Adds `hop`, whose port rate is `rates[rate]`.
    fn push(&mut self, hop: IntHop, rate: usize, rates: &[u64]) {
        if self.spill.is_none() {
            let n = usize::from(self.len);
            if let (Some(slot), Some(p)) = (self.inline.get_mut(n), PackedHop::pack(&hop, rate)) {
                *slot = p;
                self.len += 1;
                return;
            }
            let whole = self
                .stamps(rates, &mut [IntHop::default(); INLINE_HOPS])
                .to_vec();
            self.spill = Some(Box::new(whole));
        }
        if let Some(v) = self.spill.as_deref_mut() {
            v.push(hop);
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.spill = None;
    }

    /// The stamps, unpacked into `buf` when they are in place.
    fn stamps<'a>(&'a self, rates: &[u64], buf: &'a mut [IntHop; INLINE_HOPS]) -> &'a [IntHop] {
        if let Some(v) = self.spill.as_deref() {
            return v;
        }
        let n = usize::from(self.len).min(INLINE_HOPS);
        for (b, p) in buf.iter_mut().zip(&self.inline[..n]) {
            *b = p.unpack(rates);
        }
        &buf[..n]
    }
}

/// Records keyed by a sequence number, with a map's semantics (`insert`
/// replaces, `remove` takes, a key never inserted reads as absent), kept
/// in a ring from the lowest live key to the highest: a flow's keys in
/// flight are a window of consecutive numbers that the sender fills at
/// one end and the receiver (or the sender, for acknowledgements)
/// empties at the other, so a record is found by a subtraction, with no
/// hashing, and the memory is the window's. An empty slot inside the
/// window (a packet received out of order, a record never taken) holds
/// the ring open until the keys below it go.
#[derive(Clone, Debug)]
struct SeqRing<T> {
    /// The key of `slots[0]`.
    base: u64,
    slots: VecDeque<Option<T>>,
}

impl<T> Default for SeqRing<T> {
    fn default() -> Self {
        SeqRing {
            base: 0,
            slots: VecDeque::new(),
        }
    }
}

impl<T> SeqRing<T> {
    fn index(&self, key: u64) -> Option<usize> {
        usize::try_from(key.checked_sub(self.base)?).ok()
    }

    fn get_mut(&mut self, key: u64) -> Option<&mut T> {
        let i = self.index(key)?;
        self.slots.get_mut(i)?.as_mut()
    }

    /// The slot of `key`, the ring widened to hold it.
    fn slot(&mut self, key: u64) -> Option<&mut Option<T>> {
        if self.slots.is_empty() {
            self.base = key;
        }
        while key < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        let i = self.index(key)?;
        while self.slots.len() <= i {
            self.slots.push_back(None);
        }
        self.slots.get_mut(i)
    }

    fn insert(&mut self, key: u64, value: T) {
        if let Some(s) = self.slot(key) {
            *s = Some(value);
        }
    }

    /// Records held, and slots allocated (held or not).
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let live = self.slots.iter().filter(|s| s.is_some()).count();
        (live, self.slots.capacity())
    }

    fn remove(&mut self, key: u64) -> Option<T> {
        let i = self.index(key)?;
        let v = self.slots.get_mut(i)?.take();
        if v.is_some() {
            while let Some(None) = self.slots.front() {
                self.slots.pop_front();
                self.base += 1;
            }
            while let Some(None) = self.slots.back() {
                self.slots.pop_back();
            }
        }
        v
    }
}

/// What rides with a flow's packets for its control, `T` one packet's
/// record (a send time, INT stamps): the records of the data packets on
/// their way by sequence number, those of the ACKs and of the NACKs on
/// their way by sequence number, and the one the receiver took last.
#[derive(Clone, Debug, Default)]
struct Rides<T> {
    inflight: SeqRing<T>,
    acks: SeqRing<T>,
    nacks: SeqRing<T>,
    received: T,
}

impl<T: Default> Rides<T> {
    fn received(&mut self, seq: u32) {
        self.received = self.inflight.remove(u64::from(seq)).unwrap_or_default();
    }

    fn echoes(&mut self, nack: bool) -> &mut SeqRing<T> {
        if nack {
            &mut self.nacks
        } else {
            &mut self.acks
        }
    }

    fn echo(&mut self, ack_seq: u32, nack: bool) {
        let e = std::mem::take(&mut self.received);
        self.echoes(nack).insert(u64::from(ack_seq), e);
    }

    fn take_echo(&mut self, ack_seq: u32, nack: bool) -> T {
        self.echoes(nack)
            .remove(u64::from(ack_seq))
            .unwrap_or_default()
    }
}

impl Rides<Hops> {
    /// Data packet `seq` leaves: a fresh record, with no stamps.
    fn sent(&mut self, seq: u32) {
        match self.inflight.slot(u64::from(seq)) {
            Some(Some(h)) => h.clear(),
            Some(s) => *s = Some(Hops::default()),
            None => {}
        }
    }
}

/// The records a flow's control reads, and only those: TIMELY a data
/// packet's send time, HPCC its INT stamps, DCTCP neither (it reads the
/// ECN echo, which the acknowledgement itself carries).
#[derive(Clone, Debug)]
enum Records {
    None,
    SendTime(Rides<u64>),
    Int(Rides<Hops>),
}

/// One flow's control state under `--cc hpcc|timely|dctcp`.
#[derive(Clone, Debug)]
pub(crate) struct FlowCc {
    pub(crate) ctl: Ctl,
    records: Records,
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

    /// Data packet `seq` leaves the sender at `now_ps`: a fresh record
    /// (a retransmission's too, as the artifact's fresh header).
    pub(crate) fn sent(&mut self, seq: u32, now_ps: u64) {
        match &mut self.records {
            Records::None => {}
            Records::SendTime(r) => r.inflight.insert(u64::from(seq), now_ps),
            Records::Int(r) => r.sent(seq),
        }
    }

    /// Data packet `seq` reaches the receiver: its record waits for the
    /// receiver's answer ([`FlowCc::echo`]; none for a duplicate or a gap
    /// within the NACK interval, and the next packet's replaces it).
    pub(crate) fn received(&mut self, seq: u32) {
        match &mut self.records {
            Records::None => {}
            Records::SendTime(r) => r.received(seq),
            Records::Int(r) => r.received(seq),
        }
    }

    /// The receiver answers the packet it just received with an
    /// acknowledgement (`nack`: a NACK) carrying `ack_seq`: the packet's
    /// record goes with it.
    pub(crate) fn echo(&mut self, ack_seq: u32, nack: bool) {
        match &mut self.records {
            Records::None => {}
            Records::SendTime(r) => r.echo(ack_seq, nack),
            Records::Int(r) => r.echo(ack_seq, nack),
        }
    }

    /// The sender takes an acknowledgement (`nack`) carrying `ack_seq`
    /// at `now_ps`, with `snd_nxt` packets sent; `payload` bytes a
    /// packet; `run` the run's settings.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_ack(
        &mut self,
        run: &CcRun,
        now_ps: u64,
        ack_seq: u32,
        nack: bool,
        ecn: bool,
        snd_nxt: u32,
        payload: u64,
    ) {
        let mut ack = Ack {
            now_ps,
            seq: u64::from(ack_seq) * payload,
            snd_nxt: u64::from(snd_nxt) * payload,
            ecn,
            sent_ps: 0,
            hops: &[],
        };
        match &mut self.records {
            Records::None => self.ctl.get_mut().on_ack(&ack),
            Records::SendTime(r) => {
                ack.sent_ps = r.take_echo(ack_seq, nack);
                self.ctl.get_mut().on_ack(&ack);
            }
            Records::Int(r) => {
                let e = r.take_echo(ack_seq, nack);
                let mut buf = [IntHop::default(); INLINE_HOPS];
                ack.hops = e.stamps(&run.rates, &mut buf);
                self.ctl.get_mut().on_ack(&ack);
            }
        }
    }

    /// Records held for packets and acknowledgements on their way, and
    /// the slots allocated for them (held or not).
    #[cfg(test)]
    pub(crate) fn records_held(&self) -> (usize, usize) {
        let sum = |a: (usize, usize), b: (usize, usize)| (a.0 + b.0, a.1 + b.1);
        match &self.records {
            Records::None => (0, 0),
            Records::SendTime(r) => sum(sum(r.inflight.held(), r.acks.held()), r.nacks.held()),
            Records::Int(r) => sum(sum(r.inflight.held(), r.acks.held()), r.nacks.held()),
        }
    }

    /// The line rates of the INT stamps its data packets in flight carry
    /// (`rates`: [`CcRun::rates_seen`]); for tests.
    #[cfg(test)]
    pub(crate) fn stamped_line_rates(&self, rates: &[u64]) -> Vec<u64> {
        let Records::Int(r) = &self.records else {
            return Vec::new();
        };
        let mut buf = [IntHop::default(); INLINE_HOPS];
        r.inflight
            .slots
            .iter()
            .flatten()
            .flat_map(|h| {
                h.stamps(rates, &mut buf)
                    .iter()
                    .map(|s| s.line_bps)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The flow is done: no acknowledgement reaches its control any more
    /// (the engine calls [`FlowCc::on_ack`] only before), so the records
    /// still riding are dropped and their memory freed.
    pub(crate) fn release(&mut self) {
        match &mut self.records {
            Records::None => {}
            Records::SendTime(r) => *r = Rides::default(),
            Records::Int(r) => *r = Rides::default(),
        }
    }
}

/// A run's control settings under `--cc hpcc|timely|dctcp`.
#[derive(Clone, Debug)]
pub(crate) struct CcRun {
    pub(crate) kind: CcKind,
    line_bps: u64,
    /// The base window, bytes (`maxBdp` modulo 2^32; 0: none, as
    /// `IsWinBound` reads a zero window).
    pub(crate) base_win: u64,
    /// `T`, ps (`maxRtt`).
    pub(crate) base_rtt_ps: u64,
    /// The port rates the INT stamps have carried, bits per second; a
    /// [`PackedHop`] holds an index into it.
    rates: Vec<u64>,
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
            rates: Vec::new(),
        }))
    }

    /// The port rates the stamps index, in the order first seen; for tests.
    #[cfg(test)]
    pub(crate) fn rates_seen(&self) -> &[u64] {
        &self.rates
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
        let records = match self.kind {
            CcKind::Hpcc => Records::Int(Rides::default()),
            CcKind::Timely => Records::SendTime(Rides::default()),
            CcKind::Dcqcn | CcKind::Dctcp => Records::None,
        };
        Box::new(FlowCc {
            ctl,
            records,
            stall: None,
        })
    }

    /// A switch port starts transmitting `pkt` at `now_ps`; under a
    /// control that stamps INT, a data packet gets the port's stamp
    /// (`SwitchNotifyDequeue`: the stamp with the bytes transmitted before
    /// and the data queued behind, then `m_txBytes += size`, counted in
    /// [`Port::int_tx_bytes`](super::fabric::Port::int_tx_bytes)).
    pub(crate) fn egress(
        &mut self,
        flows: &mut [super::Flow],
        port: &mut super::fabric::Port,
        now_ps: u64,
        pkt: &super::Pkt,
    ) {
        if !self.kind.stamps_int() {
            return;
        }
        let before = port.int_tx_bytes;
        port.int_tx_bytes += u64::from(pkt.size);
        if pkt.kind != super::Kind::Data {
            return;
        }
        let Some(fc) = flows
            .get_mut(pkt.flow as usize)
            .and_then(|x| x.cc.as_deref_mut())
        else {
            return;
        };
        if let Records::Int(r) = &mut fc.records {
            if let Some(h) = r.inflight.get_mut(u64::from(pkt.seq)) {
                let rate = rate_index(&mut self.rates, port.rate_bps);
                let stamp = IntHop::stamp(now_ps, before, port.data_bytes, port.rate_bps);
                h.push(stamp, rate, &self.rates);
            }
        }
    }
}

/// The index of `bps` in `rates`, appended if new: what a [`PackedHop`]
/// holds for its port's rate (a run has a handful of rates, so a scan).
fn rate_index(rates: &mut Vec<u64>, bps: u64) -> usize {
    match rates.iter().position(|&b| b == bps) {
        Some(i) => i,
        None => {
            rates.push(bps);
            rates.len() - 1
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

    /// The records a flow keeps answer every call as the per-flow maps
    /// they replaced did (`HashMap<seq, record>` for the data packets,
    /// `HashMap<(seq, nack), record>` for the acknowledgements): for any
    /// script of sends, stamps, receipts, answers and acknowledgements,
    /// in any order and with any sequence numbers, each acknowledgement
    /// reads the same send time and the same stamps.
    #[test]
    fn the_records_answer_as_the_maps_they_replaced() {
        use quickcheck::TestResult;
        use std::collections::HashMap;
        #[derive(Default, Clone)]
        struct Model {
            inflight: HashMap<u32, (u64, Vec<IntHop>)>,
            echoes: HashMap<(u32, bool), (u64, Vec<IntHop>)>,
            received: (u64, Vec<IntHop>),
        }
        // (op, seq, value, NACK): op % 5 = send, stamp, receive, answer,
        // acknowledgement.
        fn check(script: Vec<(u8, u8, u32, bool)>) -> TestResult {
            let rates = [25_000_000_000, 100_000_000_000, 400_000_000_000];
            let mut run = CcRun {
                kind: CcKind::Hpcc,
                line_bps: 100_000_000_000,
                base_win: 0,
                base_rtt_ps: 1,
                rates: Vec::new(),
            };
            let mut int = Rides::<Hops>::default();
            let mut time = Rides::<u64>::default();
            let mut m = Model::default();
            for (op, seq, v, nack) in script {
                // Sequence numbers near each other, as a flow's are.
                let seq = u32::from(seq % 8);
                match op % 5 {
                    0 => {
                        let now = u64::from(v);
                        m.inflight.insert(seq, (now, Vec::new()));
                        time.inflight.insert(u64::from(seq), now);
                        int.sent(seq);
                    }
                    1 => {
                        // Some stamps do not pack (bytes beyond 40 bits).
                        let bytes = if v % 11 == 0 {
                            1 << 50
                        } else {
                            u64::from(v) * 1_000
                        };
                        let rate = rates[v as usize % 3];
                        let hop = IntHop::stamp(u64::from(v) * 7, bytes, u64::from(v) * 3, rate);
                        if let Some(e) = m.inflight.get_mut(&seq) {
                            e.1.push(hop);
                        }
                        let i = rate_index(&mut run.rates, rate);
                        if let Some(h) = int.inflight.get_mut(u64::from(seq)) {
                            h.push(hop, i, &run.rates);
                        }
                    }
                    2 => {
                        m.received = m.inflight.remove(&seq).unwrap_or_default();
                        int.received(seq);
                        time.received(seq);
                    }
                    3 => {
                        m.echoes
                            .insert((seq, nack), std::mem::take(&mut m.received));
                        int.echo(seq, nack);
                        time.echo(seq, nack);
                    }
                    _ => {
                        let want = m.echoes.remove(&(seq, nack)).unwrap_or_default();
                        let h = int.take_echo(seq, nack);
                        let mut buf = [IntHop::default(); INLINE_HOPS];
                        if h.stamps(&run.rates, &mut buf) != want.1.as_slice()
                            || time.take_echo(seq, nack) != want.0
                        {
                            return TestResult::failed();
                        }
                    }
                }
            }
            TestResult::passed()
        }
        quickcheck::QuickCheck::new()
            .tests(1_000)
            .quickcheck(check as fn(Vec<(u8, u8, u32, bool)>) -> TestResult);
    }

    #[test]
    fn a_stamp_packs_into_16_bytes_and_back() {
        assert_eq!(size_of::<PackedHop>(), 16);
        assert_eq!(size_of::<Hops>(), 128);
        let rates = [7, 400_000_000_000];
        let h = IntHop::stamp(123_456_789_000, (1 << 47) - 1, 10_485_759, rates[1]);
        assert_eq!(PackedHop::pack(&h, 1).map(|p| p.unpack(&rates)), Some(h));
        let big = IntHop::stamp(1, 1 << 47, 0, 7);
        assert!(PackedHop::pack(&big, 0).is_none());
        assert!(PackedHop::pack(&h, PACK_RATES).is_none());
        // The rate index has the word's 7 top bits: 128 rates pack.
        assert_eq!(PACK_RATES, 128);
        let many: Vec<u64> = (1..=128).map(|r| r * 1_000_000_000).collect();
        let last = IntHop::stamp(5, 6, 7, many[127]);
        assert_eq!(
            PackedHop::pack(&last, 127).map(|p| p.unpack(&many)),
            Some(last)
        );
        // A ninth stamp, or one that does not pack, spills them all whole.
        let mut hops = Hops::default();
        let mut want = Vec::new();
        for k in 0..10u64 {
            let hop = IntHop::stamp(k, k * 128, k * 80, rates[1]);
            hops.push(hop, 1, &rates);
            want.push(hop);
            let mut buf = [IntHop::default(); INLINE_HOPS];
            assert_eq!(hops.stamps(&rates, &mut buf), want.as_slice());
        }
        hops.clear();
        hops.push(big, 0, &rates);
        let mut buf = [IntHop::default(); INLINE_HOPS];
        assert_eq!(hops.stamps(&rates, &mut buf), &[big]);
    }
}
