//! An interpreter of the exported entries with Tofino match semantics: the
//! reference the equivalence tests run against `Decider::on_packet` and
//! against the independent model of `fuzz/src/model.rs`.
//!
//! It evaluates the ingress of `lcmp.p4`, reading only the [`EntrySet`],
//! the [`Schema`] and the hash field lists and polynomials of
//! [`crate::hash`]:
//!
//! * exact keys match equal values; an LPM key matches when the top
//!   `prefix_len` bits agree, and the longest prefix wins; ternary keys match
//!   under their mask and range keys inclusively, and among several matches
//!   the highest priority wins (P4Runtime convention);
//! * two entries that tie are an error ([`InterpError::Ambiguous`]), since
//!   the ASIC's choice would then be unspecified.
//!
//! [`Interpreter::ingress`] evaluates a flow's first packet without state;
//! [`Interpreter::route`] does the same for a destination and a hash (the
//! update tests sweep every bucket). [`Interpreter::packet`] also runs the
//! two-way flow-pin registers ([`PinRegisters`]) statement by statement as
//! `lcmp.p4` does, the resubmit of a packet whose pinned port is down, and
//! the pin-failure digest.

use core::fmt;

use std::collections::BTreeMap;

use crate::hash::{CrcSpec, Headers, CRC32C, ECMP_FIELDS, SIG_FIELDS};
use crate::model::{EntrySet, Match, Program, TableEntry};
use crate::schema::actions::{
    FALLBACK, MEMBER, PORT_UP, ROUTE, SET_BUCKET, SET_GROUP, SET_NEXT_HOP, SET_PORT, TO_CPU,
};
use crate::schema::{
    names, pin_event, MatchKind, Reason, Schema, Sizes, CLOCK_START_WRAPS, CLOCK_WRAP,
    EXCEPTION_TABLE_SIZE, FAIL_CELLS, FAIL_INDEX_HI, HASH_HI_BITS, PIN_EMPTY_SEEN, PORT_BITS,
};

/// An interpreter failure: the entries would make the ASIC's behaviour
/// unspecified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InterpError {
    /// Two entries of this table match with the same precedence.
    Ambiguous(&'static str),
    /// The table is not in the schema.
    UnknownTable(&'static str),
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::Ambiguous(t) => write!(f, "{t}: two entries match with equal precedence"),
            InterpError::UnknownTable(t) => write!(f, "{t}: not in the schema"),
        }
    }
}

impl core::error::Error for InterpError {}

/// A way's result (`PIN_*` in `lcmp.p4`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PinStatus {
    /// Not consulted, or no pin of the flow (`PIN_NONE`).
    #[default]
    None,
    /// The flow's live pin (`PIN_HIT`).
    Hit,
    /// An expired cell, now the flow's (`PIN_TAKEN`).
    Taken,
    /// A live pin of another flow (`PIN_BUSY`).
    Busy,
}

/// The intermediate values of one ingress pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressTrace {
    /// `meta.group`, if the destination is an LCMP route with a live
    /// candidate (`set_group`).
    pub group: Option<u64>,
    /// The destination's group has no live candidate (`no_route`: dropped).
    pub no_route: bool,
    /// `meta.hash` (CRC-32 of the field list with the seed in its XOR).
    pub hash: u32,
    /// `meta.k`.
    pub k: Option<u64>,
    /// `meta.bucket`.
    pub bucket: Option<u64>,
    /// The selection table's port.
    pub selected: Option<u64>,
    /// The egress port, if the packet is forwarded.
    pub port: Option<u64>,
    /// A static or selection table missed for a routed group (never, with
    /// consistent entries; the packet is dropped, and a pin may record a
    /// wrong port).
    pub miss: Option<&'static str>,
    /// Way 0's and way 1's results (stateful passes only).
    pub ways: (PinStatus, PinStatus),
    /// The flow followed a live pin (stateful passes only).
    pub pin_hit: bool,
    /// Both ways held other flows: the digest was sent, the flow is unpinned.
    pub pin_failed: bool,
    /// The packet was resubmitted because its pinned port is down or no
    /// longer a candidate of its group.
    pub resubmitted: bool,
    /// The pinned or selected port is a candidate of the group
    /// (`lcmp_member`; stateful passes only).
    pub member: bool,
    /// The pin-failure digest was sent (the filter let it through and
    /// the meter coloured the packet GREEN).
    pub digest: bool,
    /// The filter let a digest through but the meter held it back.
    pub metered: bool,
    /// Neither way could hold the flow: it took the group's stable
    /// fallback port (`lcmp_fallback`).
    pub fallback: bool,
    /// The default route's port, for a destination that is no LCMP group.
    pub routed: Option<u64>,
    /// The next hop's `(src_mac, dst_mac)` of a forwarded packet.
    pub next_hop: Option<(u64, u64)>,
    /// The TTL was 1 or 0 (not forwarded: `R_TTL_EXPIRED`).
    pub ttl_expired: bool,
    /// Why the packet is not forwarded (`meta.reason`): `None` for a
    /// forwarded (or resubmitted) packet.
    pub reason: Option<Reason>,
    /// The exception table sent it to this (CPU) port.
    pub cpu_port: Option<u64>,
}

/// One cell of `lcmp_unpinned` (`{lo, hi}`, initially `{0, 0}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnpinnedCell {
    /// When a flow hashing here was last forwarded unpinned (`lo`).
    pub seen: u32,
    /// That flow's fallback tag, [`FB_TAG`] | its fallback port (`hi`).
    pub tag: u32,
}

/// `FB_TAG` of `lcmp.p4`: set in a fallback tag (`meta.fb_tag`), which
/// is therefore never 0 (a device port is 9 bits).
pub const FB_TAG: u16 = 0x8000;

/// One flow-pin cell of `lcmp_pin0`/`lcmp_pin1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinCell {
    /// CRC-32C signature of the 5-tuple (`lo`).
    pub sig: u32,
    /// Last seen, `ingress_mac_tstamp[47:16]` (`hi`).
    pub seen: u32,
}

impl Default for PinCell {
    fn default() -> Self {
        PinCell {
            sig: 0,
            seen: PIN_EMPTY_SEEN,
        }
    }
}

/// The flow-pin registers (cells never written hold their initial values,
/// as after the program is loaded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PinRegisters {
    /// `lcmp_pin0` and `lcmp_pin1` by index.
    pub ways: [BTreeMap<u64, PinCell>; 2],
    /// `lcmp_port0` and `lcmp_port1` by index.
    pub ports: [BTreeMap<u64, u16>; 2],
    /// `lcmp_fail` (the pin-failure digest's filter) by index:
    /// `{signature, last reported}`.
    pub fail: BTreeMap<u64, PinCell>,
    /// `lcmp_unpinned` by index ([`unpinned_index`]): `{when a flow
    /// hashing there last went unpinned, its fallback tag}`.
    pub unpinned: BTreeMap<u64, UnpinnedCell>,
    /// `lcmp_clock`: the wraps of the 32-bit stamp and the last stamp.
    pub clock: Clock,
    /// The register parameters `pin0_gap` and `pin1_gap` the agent writes
    /// (`Agent::pin_gap_units`): a cell idle longer is reused. `None`: not
    /// written since the program was loaded, the idle timeout (`PIN_IDLE`).
    pub gaps: [Option<u32>; 2],
    /// `digest_meter`, as the agent configures it; `None`: not modelled
    /// (every digest the filter lets through is sent).
    pub digest_meter: Option<DigestMeter>,
    /// `lcmp_exceptions`: packets not forwarded, by [`Reason::code`].
    pub exceptions: [u64; EXCEPTION_TABLE_SIZE as usize],
    /// `lcmp_pin_events`: packets the selection routed, by
    /// `hit | unpinned << 1 | resubmitted << 2` ([`pin_event`]).
    pub pin_events: [u64; pin_event::CELLS as usize],
}

/// The pin-failure digests' one-cell packet meter (`digest_meter`), as a
/// committed-rate token bucket: a packet is GREEN, and sends its digest,
/// when the bucket holds a whole token. The agent configures the rate
/// (packets per second) and burst (packets) of the meter's committed
/// bucket; the peak bucket is set the same, so no packet is YELLOW.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigestMeter {
    /// Committed rate, packets per second.
    pub rate_pps: u64,
    /// Committed burst, packets.
    pub burst: u64,
    /// Tokens, in 10^-9 packets (starts full).
    tokens: u128,
    /// The last packet's MAC timestamp, ns.
    last_ns: u64,
}

impl DigestMeter {
    /// A meter of `rate_pps` and `burst` packets, its bucket full.
    pub fn new(rate_pps: u64, burst: u64) -> DigestMeter {
        DigestMeter {
            rate_pps,
            burst,
            tokens: u128::from(burst) * 1_000_000_000,
            last_ns: 0,
        }
    }

    /// Colours a packet at `tstamp_ns`: whether it is GREEN (takes a token).
    ///
    /// ```
    /// use lcmp_tofino::interp::DigestMeter;
    /// let mut m = DigestMeter::new(1_000, 2);
    /// assert!(m.green(0) && m.green(0));
    /// assert!(!m.green(0));          // the burst is spent
    /// assert!(m.green(1_000_000));   // 1 ms later: one more token
    /// ```
    pub fn green(&mut self, tstamp_ns: u64) -> bool {
        let elapsed = u128::from(tstamp_ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(tstamp_ns);
        let cap = u128::from(self.burst) * 1_000_000_000;
        self.tokens = (self.tokens + elapsed * u128::from(self.rate_pps)).min(cap);
        if self.tokens >= 1_000_000_000 {
            self.tokens -= 1_000_000_000;
            true
        } else {
            false
        }
    }
}

/// `lcmp_clock`'s one cell: `{lo: wraps << 24, hi: last stamp}`,
/// initially `{CLOCK_START_WRAPS << 24, 0}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// How often the 32-bit stamp has wrapped.
    pub wraps: u32,
    /// The last `ingress_mac_tstamp[47:16]`.
    pub last: u32,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            wraps: CLOCK_START_WRAPS,
            last: 0,
        }
    }
}

impl Clock {
    /// `clock_tick` and `lcmp_clock_now` for a packet with MAC timestamp
    /// `tstamp_ns` (the 48-bit counter, taken mod 2^48): counts a wrap when
    /// the stamp steps back by more than [`CLOCK_WRAP`] (in the ALU's exact
    /// arithmetic), and returns `meta.now = (wraps << 24) | tstamp[47:24]`.
    ///
    /// ```
    /// use lcmp_tofino::interp::Clock;
    /// let mut c = Clock::default();
    /// let before = c.tick((1 << 48) - 1_000_000_000);
    /// let after = c.tick((1 << 48) + 1_000_000_000); // the 48-bit counter wrapped
    /// assert_eq!(c.wraps, 2);
    /// assert_eq!(after - before, 2_000_000_000 >> 24); // 2 s later, in 2^24 ns units
    /// ```
    pub fn tick(&mut self, tstamp_ns: u64) -> u32 {
        let raw = ((tstamp_ns & ((1 << 48) - 1)) >> 16) as u32;
        if i64::from(self.last) - i64::from(raw) > i64::from(CLOCK_WRAP) {
            self.wraps = self.wraps.wrapping_add(1);
        }
        self.last = raw;
        ((self.wraps & 0xFF) << 24) | (raw >> 8)
    }
}

/// The pin-failure filter's index of a signature:
/// `sig[FAIL_INDEX_HI:FAIL_INDEX_HI - 11]`.
pub fn fail_index(sig: u32) -> u64 {
    let bits = FAIL_CELLS.trailing_zeros();
    (u64::from(sig) >> (FAIL_INDEX_HI + 1 - bits)) & (u64::from(FAIL_CELLS) - 1)
}

/// `now − seen > idle` as the stateful ALU compares it (`grt.u`): both
/// operands zero-extended to 34 bits and the constant sign-extended
/// (bf-p4c `CheckStatefulAlu`), so the subtraction does *not* wrap mod
/// 2^32: a `seen` ahead of `now` is never expired. `meta.now` is
/// monotonic ([`Clock`]), so `seen <= now` for every cell the pins wrote.
///
/// ```
/// use lcmp_tofino::interp::expired;
/// assert!(expired(100, 10, 50));
/// assert!(!expired(100, 60, 50));
/// // Ahead: not expired, where mod-2^32 arithmetic would say it is.
/// assert!(!expired(5, 0x8000_0000, 50));
/// assert!(5u32.wrapping_sub(0x8000_0000) > 50);
/// ```
pub const fn expired(now: u32, seen: u32, idle: u32) -> bool {
    (now as i64) - (seen as i64) > idle as i64
}

/// The header values the ingress parser leaves for the hash and the pins:
/// the L4 ports only for TCP and UDP in an unfragmented packet (neither
/// more-fragments nor an offset), else 0, so every fragment of a datagram
/// hashes alike; IPv4 options (any `ihl` from 5 to 15) are skipped over.
///
/// ```
/// use lcmp_tofino::interp::parsed;
/// let h = parsed(0x0A00_0001, 0x0A08_0001, 1000, 2000, 17, false, 0);
/// assert_eq!((h.sport, h.dport), (1000, 2000));
/// let first = parsed(0x0A00_0001, 0x0A08_0001, 1000, 2000, 17, true, 0);
/// let later = parsed(0x0A00_0001, 0x0A08_0001, 1000, 2000, 17, false, 185);
/// assert_eq!(first, later);
/// assert_eq!((later.sport, later.dport), (0, 0));
/// ```
pub fn parsed(
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    proto: u8,
    more_fragments: bool,
    frag_offset: u16,
) -> Headers {
    let l4 = !more_fragments && frag_offset == 0 && (proto == 6 || proto == 17);
    Headers {
        src,
        dst,
        sport: if l4 { sport } else { 0 },
        dport: if l4 { dport } else { 0 },
        proto,
    }
}

/// An IPv4 packet's header fields the ingress parser reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Packet {
    /// `version` (4 for a routed packet).
    pub version: u8,
    /// `ihl` (5 to 15 for a routed packet).
    pub ihl: u8,
    /// `ttl`.
    pub ttl: u8,
    /// The more-fragments flag.
    pub more_fragments: bool,
    /// `frag_offset`.
    pub frag_offset: u16,
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// `protocol`.
    pub proto: u8,
    /// L4 source port (TCP, UDP).
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
}

impl Ipv4Packet {
    /// What the parser leaves for the hash and the pins ([`parsed`]).
    pub fn headers(&self) -> Headers {
        parsed(
            self.src,
            self.dst,
            self.sport,
            self.dport,
            self.proto,
            self.more_fragments,
            self.frag_offset,
        )
    }
}

/// A frame as the ingress parser classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// EtherType 0x0800.
    Ipv4(Ipv4Packet),
    /// EtherType 0x86DD (refused: `R_IPV6`).
    Ipv6,
    /// Any other EtherType (ARP, LLDP, ...: `R_NOT_IP`).
    NotIp(u16),
}

/// The signature and way-0 index of a flow (`meta.sig`, `meta.sig[n-1:0]`)
/// for `pin_slots` cells in all.
pub fn pin_slot(h: &Headers, pin_slots: u32) -> (u32, u64) {
    let sig = CRC32C.checksum(&h.field_list_bytes(SIG_FIELDS));
    (sig, pin_indices(sig, pin_slots).0)
}

/// `lcmp_unpinned`'s index of a signature: `sig[n+7:8]`, for `pin_slots`
/// cells in all (the register has a way's cells).
pub fn unpinned_index(sig: u32, pin_slots: u32) -> u64 {
    let n = Sizes {
        groups: 0,
        max_k: 0,
        ports: 0,
        pin_slots: Sizes::pin_slots_for(pin_slots),
    }
    .pin_index_bits();
    (u64::from(sig) >> 8) & ((1u64 << n) - 1)
}

/// The two ways' indices of a signature: `sig[n-1:0]` and `sig[31:32-n]`.
pub fn pin_indices(sig: u32, pin_slots: u32) -> (u64, u64) {
    let sizes = Sizes {
        groups: 0,
        max_k: 0,
        ports: 0,
        pin_slots: Sizes::pin_slots_for(pin_slots),
    };
    let n = sizes.pin_index_bits();
    let mask = (1u64 << n) - 1;
    (u64::from(sig) & mask, u64::from(sig) >> (32 - n))
}

/// Evaluates an [`EntrySet`] as the ASIC would.
#[derive(Clone, Debug)]
pub struct Interpreter<'a> {
    program: &'a Program,
    schema: Schema,
    /// Entries by table, in installation order.
    by_table: BTreeMap<&'static str, Vec<&'a TableEntry>>,
    /// Entries of all-exact tables by key values (a hash table, as the
    /// ASIC's exact match; several entries under one key are a conflict).
    exact: BTreeMap<(&'static str, Vec<u64>), Vec<&'a TableEntry>>,
}

impl<'a> Interpreter<'a> {
    /// An interpreter of `entries` on the program `program`.
    pub fn new(program: &'a Program, entries: &'a EntrySet) -> Self {
        let schema = program.schema();
        let mut by_table: BTreeMap<&'static str, Vec<&'a TableEntry>> = BTreeMap::new();
        let mut exact: BTreeMap<(&'static str, Vec<u64>), Vec<&'a TableEntry>> = BTreeMap::new();
        for e in &entries.entries {
            by_table.entry(e.table).or_default().push(e);
            let values: Option<Vec<u64>> = e
                .matches
                .iter()
                .map(|m| match *m {
                    Match::Exact(v) => Some(v),
                    _ => None,
                })
                .collect();
            if let Some(values) = values {
                exact.entry((e.table, values)).or_default().push(e);
            }
        }
        Interpreter {
            program,
            schema,
            by_table,
            exact,
        }
    }

    /// The entry of `table` that a lookup with key values `keys` hits.
    pub fn lookup(
        &self,
        table: &'static str,
        keys: &[u64],
    ) -> Result<Option<&'a TableEntry>, InterpError> {
        let t = self
            .schema
            .table(table)
            .ok_or(InterpError::UnknownTable(table))?;
        if t.keys.iter().all(|k| k.kind == MatchKind::Exact) {
            return match self.exact.get(&(table, keys.to_vec())).map(Vec::as_slice) {
                None | Some([]) => Ok(None),
                Some([e]) => Ok(Some(*e)),
                Some(_) => Err(InterpError::Ambiguous(table)),
            };
        }
        let mut best: Option<(&'a TableEntry, u64)> = None;
        let mut tie = false;
        for &e in self.by_table.get(table).map_or(&[][..], Vec::as_slice) {
            let mut rank = 0u64;
            let mut hit = true;
            for ((m, k), &v) in e.matches.iter().zip(t.keys).zip(keys) {
                let ok = match *m {
                    Match::Exact(x) => v == x,
                    Match::Lpm { value, prefix_len } => {
                        rank = u64::from(prefix_len);
                        let shift = k.bits.saturating_sub(prefix_len);
                        prefix_len == 0 || (v >> shift) == (value >> shift)
                    }
                    Match::Ternary { value, mask } => v & mask == value & mask,
                    Match::Range { low, high } => low <= v && v <= high,
                };
                hit &= ok;
            }
            if !hit {
                continue;
            }
            if t.keys
                .iter()
                .any(|k| k.kind != MatchKind::Exact && k.kind != MatchKind::Lpm)
            {
                rank = u64::from(e.priority.unwrap_or(0));
            }
            match best {
                Some((_, r)) if r > rank => {}
                Some((_, r)) if r == rank => tie = true,
                _ => {
                    best = Some((e, rank));
                    tie = false;
                }
            }
        }
        if tie {
            return Err(InterpError::Ambiguous(table));
        }
        Ok(best.map(|(e, _)| e))
    }

    /// The action parameter of the hit entry if its action is `action`.
    fn param(
        &self,
        table: &'static str,
        keys: &[u64],
        action: &str,
    ) -> Result<Option<u64>, InterpError> {
        Ok(self
            .lookup(table, keys)?
            .filter(|e| e.action == action)
            .and_then(|e| e.params.first().copied()))
    }

    /// The ECMP hash of a packet, as `ecmp_hash.get(...)` computes it.
    pub fn hash(&self, h: &Headers) -> u32 {
        CrcSpec::ecmp(self.program.seed).checksum(&h.field_list_bytes(ECMP_FIELDS))
    }

    /// The ingress pass of a flow's first packet (no pin state).
    pub fn ingress(&self, h: &Headers) -> Result<IngressTrace, InterpError> {
        let mut tr = self.route(h.dst, self.hash(h))?;
        // A new flow goes where the selection points, if that port is up.
        if let Some(sel) = tr.selected {
            tr.port = self.alive(sel)?.then_some(sel);
            if tr.port.is_none() {
                tr.reason = Some(Reason::PortDown);
            }
        }
        if let Some(port) = tr.routed {
            tr.port = Some(port);
        }
        self.finish(&mut tr, 64)?;
        Ok(tr)
    }

    /// The end of a pass that is not resubmitted: the next hop of a
    /// routed packet (`lcmp_next_hop` under `ttl > 1`; TTL 0 or 1 is
    /// `R_TTL_EXPIRED`, a miss `R_TABLE_MISS`), a port that went down
    /// last (`R_PORT_DOWN`, written after both), and the exception table
    /// for a packet with a reason (to the CPU port, or dropped).
    fn finish(&self, tr: &mut IngressTrace, ttl: u8) -> Result<(), InterpError> {
        let port_down = tr.reason == Some(Reason::PortDown);
        // meta.routed: an LCMP group's set_group, or a default route.
        if tr.group.is_some() || tr.routed.is_some() {
            if ttl <= 1 {
                tr.ttl_expired = true;
                tr.reason = Some(Reason::TtlExpired);
            } else if let Some(port) = tr.port {
                tr.next_hop = self
                    .lookup(names::NEXT_HOP, &[port])?
                    .filter(|e| e.action == SET_NEXT_HOP.name)
                    .and_then(|e| Some((*e.params.first()?, *e.params.get(1)?)));
                if tr.next_hop.is_none() {
                    tr.reason = Some(Reason::TableMiss);
                }
            }
        }
        if port_down {
            tr.reason = Some(Reason::PortDown);
        }
        self.exception(tr)
    }

    /// `lcmp_exception` for a packet with a reason: not forwarded; sent
    /// to the CPU port if its entry says so.
    fn exception(&self, tr: &mut IngressTrace) -> Result<(), InterpError> {
        let Some(r) = tr.reason else {
            return Ok(());
        };
        tr.port = None;
        tr.cpu_port = self.param(names::EXCEPTION, &[u64::from(r.code())], TO_CPU.name)?;
        Ok(())
    }

    /// `lcmp_exceptions.count(meta.reason)` for a packet with a reason:
    /// in both actions of an `lcmp_exception` entry, not in its default
    /// action (a reason without an entry is dropped uncounted; the
    /// exported entries list every [`Reason`]).
    fn count_exception(
        &self,
        pins: &mut PinRegisters,
        tr: &IngressTrace,
    ) -> Result<(), InterpError> {
        let Some(r) = tr.reason else {
            return Ok(());
        };
        if self
            .lookup(names::EXCEPTION, &[u64::from(r.code())])?
            .is_some()
        {
            if let Some(c) = pins.exceptions.get_mut(usize::from(r.code())) {
                *c += 1;
            }
        }
        Ok(())
    }

    /// One frame through the ingress parser and the ingress, with the
    /// registers and counters: a frame that is not well-formed IPv4 is
    /// classified by the parser (`R_NOT_IP`, `R_IPV6`, `R_BAD_IPV4`) and
    /// meets only the clock and the exception table; an IPv4 packet is
    /// [`Interpreter::packet_ttl`].
    pub fn frame(
        &self,
        pins: &mut PinRegisters,
        frame: &Frame,
        tstamp_ns: u64,
    ) -> Result<IngressTrace, InterpError> {
        let reason = match frame {
            Frame::Ipv4(p) if p.version == 4 && p.ihl >= 5 => {
                return self.packet_ttl(pins, &p.headers(), tstamp_ns, p.ttl);
            }
            Frame::Ipv4(_) => Reason::BadIpv4,
            Frame::Ipv6 => Reason::Ipv6,
            Frame::NotIp(_) => Reason::NotIp,
        };
        // clock_tick runs for every packet.
        pins.clock.tick(tstamp_ns);
        let mut tr = IngressTrace {
            reason: Some(reason),
            ..IngressTrace::default()
        };
        self.exception(&mut tr)?;
        self.count_exception(pins, &tr)?;
        Ok(tr)
    }

    /// Whether `lcmp_member` says `(group, port)` is a candidate.
    pub fn member(&self, group: u64, port: u64) -> Result<bool, InterpError> {
        Ok(self
            .lookup(names::MEMBER, &[group, port])?
            .is_some_and(|e| e.action == MEMBER.name))
    }

    /// Group, bucket and selection for a destination and an ECMP hash
    /// (`port` is left unset).
    pub fn route(&self, dst: u32, hash: u32) -> Result<IngressTrace, InterpError> {
        let mut tr = IngressTrace {
            hash,
            ..IngressTrace::default()
        };
        let Some(e) = self.lookup(names::DST_GROUP, &[u64::from(dst)])? else {
            // lcmp_miss: not an LCMP destination; the default route table.
            tr.routed = self
                .lookup(names::ROUTE, &[u64::from(dst)])?
                .filter(|e| e.action == ROUTE.name)
                .and_then(|e| e.params.first().copied());
            if tr.routed.is_none() {
                tr.reason = Some(Reason::Unrouted);
            }
            return Ok(tr);
        };
        if e.action != SET_GROUP.name {
            tr.no_route = true;
            tr.reason = Some(Reason::NoLivePort);
            return Ok(tr);
        }
        tr.group = e.params.first().copied();
        tr.k = e.params.get(1).copied();
        let (Some(group), Some(k)) = (tr.group, tr.k) else {
            return Ok(tr);
        };
        let hi = u64::from(hash >> (32 - HASH_HI_BITS));
        tr.bucket = self.param(names::BUCKET, &[k, hi], SET_BUCKET.name)?;
        let Some(bucket) = tr.bucket else {
            tr.miss = Some(names::BUCKET);
            tr.reason = Some(Reason::TableMiss);
            return Ok(tr);
        };
        tr.selected = self.param(names::SELECT, &[group, bucket], SET_PORT.name)?;
        if tr.selected.is_none() {
            tr.miss = Some(names::SELECT);
            tr.reason = Some(Reason::TableMiss);
        }
        Ok(tr)
    }

    /// Whether `lcmp_port_alive` says `port_up` for a port.
    pub fn alive(&self, port: u64) -> Result<bool, InterpError> {
        Ok(self
            .lookup(names::PORT_ALIVE, &[port])?
            .is_some_and(|e| e.action == PORT_UP.name))
    }

    /// One packet through the ingress with the flow-pin registers, at MAC
    /// timestamp `tstamp_ns`; a packet resubmitted for failover takes its
    /// second pass here too.
    pub fn packet(
        &self,
        pins: &mut PinRegisters,
        h: &Headers,
        tstamp_ns: u64,
    ) -> Result<IngressTrace, InterpError> {
        self.packet_ttl(pins, h, tstamp_ns, 64)
    }

    /// [`Interpreter::packet`] with the packet's IPv4 TTL.
    pub fn packet_ttl(
        &self,
        pins: &mut PinRegisters,
        h: &Headers,
        tstamp_ns: u64,
        ttl: u8,
    ) -> Result<IngressTrace, InterpError> {
        let mut first = self.pass(pins, h, tstamp_ns, false)?;
        if first.resubmitted {
            let mut second = self.pass(pins, h, tstamp_ns, true)?;
            second.resubmitted = true;
            second.digest |= first.digest;
            self.finish(&mut second, ttl)?;
            self.count_exception(pins, &second)?;
            return Ok(second);
        }
        self.finish(&mut first, ttl)?;
        self.count_exception(pins, &first)?;
        Ok(first)
    }

    /// One pass, statement by statement as `LcmpIngress.apply`.
    fn pass(
        &self,
        pins: &mut PinRegisters,
        h: &Headers,
        tstamp_ns: u64,
        resubmit_flag: bool,
    ) -> Result<IngressTrace, InterpError> {
        // clock_tick runs for every packet.
        let now = pins.clock.tick(tstamp_ns);
        let hash = self.hash(h);
        let mut tr = self.route(h.dst, hash)?;
        if let Some(port) = tr.routed {
            tr.port = Some(port); // a default route: no pins, no liveness
            return Ok(tr);
        }
        // Pins only for a packet the selection routed: `meta.kept`.
        let (Some(group), Some(selected)) = (tr.group, tr.selected) else {
            return Ok(tr); // not LCMP, no_route, or a table miss (dropped)
        };
        let (sig, _) = pin_slot(h, self.program.sizes.pin_slots);
        let (i0, i1) = pin_indices(sig, self.program.sizes.pin_slots);
        let idle = u32::try_from(self.program.pin_idle_units()).unwrap_or(u32::MAX);
        let port_mask = (1u64 << PORT_BITS) - 1;
        // meta.out_port: set_port's.
        let mut out = selected;
        let [gap0, gap1] = pins.gaps.map(|g| g.unwrap_or(idle));
        // pin0_lookup / pin1_lookup: a cell idle past its register's gap
        // is taken.
        let lookup = |c: &mut PinCell, gap: u32| {
            if expired(now, c.seen, gap) {
                *c = PinCell { sig, seen: now };
                PinStatus::Taken
            } else if c.sig == sig {
                c.seen = now;
                PinStatus::Hit
            } else {
                PinStatus::Busy
            }
        };
        // lcmp_fallback, for every packet the selection routed: the
        // group's stable fallback port (fb_port) and its tag (0: a miss).
        let fb_port = self
            .param(
                names::FALLBACK,
                &[group, u64::from(hash & 0xFFFF)],
                FALLBACK.name,
            )?
            .map(|p| p & port_mask);
        let fb_tag = fb_port.map_or(0, |p| u32::from(FB_TAG) | p as u32);
        let [way0, way1] = &mut pins.ways;
        let st0 = lookup(way0.entry(i0).or_default(), gap0);
        let st1 = match st0 {
            PinStatus::Hit => PinStatus::None,
            PinStatus::Taken => {
                // pin1_find: only the flow's own live pin.
                let c = way1.entry(i1).or_default();
                if c.sig == sig && !expired(now, c.seen, gap1) {
                    c.seen = now;
                    PinStatus::Hit
                } else {
                    PinStatus::None
                }
            }
            _ => lookup(way1.entry(i1).or_default(), gap1),
        };
        tr.pin_hit = st0 == PinStatus::Hit;
        // The first pass: a flow that takes a cell asks lcmp_unpinned
        // whether it went unpinned lately (unpinned_recent: its own
        // fallback tag, fresh); one that finds both ways busy says so
        // (unpinned_mark).
        let iu = unpinned_index(sig, self.program.sizes.pin_slots);
        let mut recent_tag = 0u32;
        if !resubmit_flag {
            let new_pin =
                st1 == PinStatus::Taken || (st0 == PinStatus::Taken && st1 == PinStatus::None);
            if new_pin {
                let c = pins.unpinned.entry(iu).or_default();
                if c.tag == fb_tag && !expired(now, c.seen, idle) {
                    recent_tag = c.tag;
                }
            } else if st1 == PinStatus::Busy {
                pins.unpinned.insert(
                    iu,
                    UnpinnedCell {
                        seen: now,
                        tag: fb_tag,
                    },
                );
            }
        }
        if recent_tag != 0 {
            out = u64::from(recent_tag) & port_mask;
            tr.fallback = true;
        }
        // A new pin records recent_tag if set, else out_port.
        let pinned = |out: u64| {
            if recent_tag != 0 {
                recent_tag as u16
            } else {
                out as u16
            }
        };
        let [port0, port1] = &mut pins.ports;
        match st1 {
            PinStatus::Hit => {
                tr.pin_hit = true;
                if resubmit_flag {
                    port1.insert(i1, pinned(out));
                } else {
                    out = u64::from(port1.get(&i1).copied().unwrap_or(0)) & port_mask;
                }
            }
            PinStatus::Taken => {
                port1.insert(i1, pinned(out));
            }
            PinStatus::Busy => {
                tr.pin_failed = true;
                // The group's stable fallback port (a miss: the selection's).
                if let Some(p) = fb_port {
                    out = p;
                    tr.fallback = true;
                }
                if !resubmit_flag {
                    // fail_report: once per signature and idle timeout.
                    let c = pins.fail.entry(fail_index(sig)).or_default();
                    if c.sig != sig || expired(now, c.seen, idle) {
                        *c = PinCell { sig, seen: now };
                        // digest_meter: only a GREEN packet sends it.
                        tr.digest = pins
                            .digest_meter
                            .as_mut()
                            .is_none_or(|m| m.green(tstamp_ns));
                        tr.metered = !tr.digest;
                    }
                }
            }
            PinStatus::None => {}
        }
        match st0 {
            PinStatus::Hit if resubmit_flag => {
                port0.insert(i0, pinned(out));
            }
            PinStatus::Hit => out = u64::from(port0.get(&i0).copied().unwrap_or(0)) & port_mask,
            PinStatus::Taken => {
                port0.insert(i0, pinned(out));
            }
            _ => {}
        }
        tr.ways = (st0, st1);
        // lcmp_pin_events.count(meta.pin_event).
        let event = usize::from(tr.pin_hit)
            | usize::from(tr.pin_failed) << 1
            | usize::from(resubmit_flag) << 2;
        if let Some(c) = pins.pin_events.get_mut(event) {
            *c += 1;
        }
        let alive = self.alive(out)?;
        tr.member = self.member(group, out)?;
        if alive && tr.member {
            tr.port = Some(out);
        } else {
            tr.resubmitted = tr.pin_hit && !resubmit_flag;
            if !tr.resubmitted {
                tr.reason = Some(Reason::PortDown);
            }
        }
        Ok(tr)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::model::{Agent, ExportOptions};
    use lcmp_decide::{
        Candidate, DeciderConfig, Group, GroupId, HashAlgorithm, Pick, PortConfig, PortId, Tables,
    };

    fn program() -> Program {
        let mut t = Tables::paper_defaults();
        t.params.pick = Pick::ScaledHash;
        let _ = t.ports.push(PortConfig {
            id: PortId(0),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        let mut g = Group {
            id: GroupId(1),
            candidates: heapless::Vec::new(),
        };
        let _ = g.candidates.push(Candidate {
            port: PortId(0),
            delay_units: 1,
            capacity_bps: 1_000_000_000,
        });
        let _ = t.groups.push(g);
        let cfg = DeciderConfig::default().with_hash(HashAlgorithm::Crc32);
        Agent::new(&t, cfg, ExportOptions::default())
            .map(|a| a.program())
            .expect("program")
    }

    fn entry(
        table: &'static str,
        matches: Vec<Match>,
        priority: Option<u32>,
        action: &'static str,
        p: u64,
    ) -> TableEntry {
        TableEntry {
            table,
            matches,
            priority,
            action,
            params: vec![p],
        }
    }

    #[test]
    fn longest_prefix_wins() {
        let p = program();
        let set = EntrySet {
            entries: vec![
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0x0A00_0000,
                        prefix_len: 8,
                    }],
                    None,
                    SET_GROUP.name,
                    1,
                ),
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0x0A08_0000,
                        prefix_len: 16,
                    }],
                    None,
                    SET_GROUP.name,
                    2,
                ),
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0,
                        prefix_len: 0,
                    }],
                    None,
                    SET_GROUP.name,
                    3,
                ),
            ],
        };
        let i = Interpreter::new(&p, &set);
        let g = |dst: u64| {
            i.lookup(names::DST_GROUP, &[dst])
                .expect("lookup")
                .map(|e| e.params[0])
        };
        assert_eq!(g(0x0A08_0102), Some(2));
        assert_eq!(g(0x0A09_0102), Some(1));
        assert_eq!(g(0x0B00_0000), Some(3));
    }

    #[test]
    fn range_priority_and_ties() {
        let p = program();
        let r = |low, high, prio, q| {
            entry(
                names::BUCKET,
                vec![Match::Exact(0), Match::Range { low, high }],
                Some(prio),
                SET_BUCKET.name,
                q,
            )
        };
        let set = EntrySet {
            entries: vec![r(0, 100, 1, 10), r(50, 60, 5, 20), r(90, 200, 1, 30)],
        };
        let i = Interpreter::new(&p, &set);
        let q = |d: u64| {
            i.lookup(names::BUCKET, &[0, d])
                .map(|e| e.map(|e| e.params[0]))
        };
        assert_eq!(q(10), Ok(Some(10)));
        assert_eq!(q(55), Ok(Some(20)), "higher priority wins");
        assert_eq!(q(150), Ok(Some(30)));
        assert_eq!(q(300), Ok(None));
        assert_eq!(
            q(95),
            Err(InterpError::Ambiguous(names::BUCKET)),
            "equal priorities overlap"
        );
        assert_eq!(
            i.lookup(names::BUCKET, &[1, 10]).map(|e| e.is_some()),
            Ok(false)
        );
    }

    #[test]
    fn duplicate_exact_keys_are_ambiguous() {
        let p = program();
        let e = |port| {
            entry(
                names::SELECT,
                vec![Match::Exact(1), Match::Exact(0)],
                None,
                SET_PORT.name,
                port,
            )
        };
        let set = EntrySet {
            entries: vec![e(1), e(2)],
        };
        let i = Interpreter::new(&p, &set);
        assert_eq!(
            i.lookup(names::SELECT, &[1, 0]),
            Err(InterpError::Ambiguous(names::SELECT))
        );
        assert_eq!(
            i.lookup("nope", &[]),
            Err(InterpError::UnknownTable("nope"))
        );
    }
}
