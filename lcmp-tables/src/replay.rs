//! Replay traces: events, their compact encoding, the CSV form, the decision
//! digest and the one replay driver every frontend uses.
//!
//! A trace is a time-ordered list of [`TraceEvent`]s: packets, queue
//! samples and link state changes. Times are microseconds; the core's tick
//! is 1 µs and `Instant::from_ticks(t_us as u32)` (wrapping), as
//! [`TraceEvent::now`] computes.
//!
//! * CSV (`alloc`, `parse_csv`): one event a line, `#` comments and blank
//!   lines ignored:
//!   `t_us,packet,src,dst,sport,dport,proto,dst_dc`,
//!   `t_us,sample,port,queue_bytes`, `t_us,link,port,up|down`.
//!   `dst_dc` is a DC id or, with a topology, a DC name.
//! * Encoded ([`encode_trace`], [`TraceReader`], `no_std`): a 16-byte
//!   header (`LCMR`, version, reserved, event count, CRC-32/ISCSI of the
//!   body), then each event in postcard; built at compile time into
//!   firmware images and replayed without allocation.
//! * [`replay`] feeds events to a [`Decider`] in order and calls back once
//!   per packet with a [`DecisionRecord`]; [`Digest`] hashes the records.
//!
//! **What the digest covers.** CRC-64/XZ over, for each packet event in
//! order, 7 bytes: the event's 0-based index in the trace (all events
//! counted) as a little-endian `u32`, the decision kind
//! ([`DecisionRecord::kind_code`]: 0 hit, 1 new, 2 failover, 3 unpinned,
//! 4 no route), the egress port (`0xFF` for none), and the reason code
//! (`Reason::code`, `0xFF` for hits and unpinned flows). Samples and link
//! events are not hashed themselves; they only matter through the
//! decisions they change. The digest is defined for a decider of
//! [`REPLAY_PORTS`] ports and [`REPLAY_FLOWS`] flow slots ([`ReplayDecider`]),
//! seed and scheme as given; the driver never calls `gc` (idle flows expire
//! on lookup).

use core::net::IpAddr;

use lcmp_decide::{Decider, Decision, FlowKey, GroupId, Instant, PortId, Reason};
use serde::{Deserialize, Serialize};

use crate::error::{Count, TablesError};

/// Ports of the decider the digest is defined for.
pub const REPLAY_PORTS: usize = lcmp_decide::tables::MAX_PORTS;
/// Flow-cache slots of the decider the digest is defined for.
pub const REPLAY_FLOWS: usize = 1024;
/// The decider shape every frontend replays with.
pub type ReplayDecider = Decider<REPLAY_PORTS, REPLAY_FLOWS>;

/// Most events an encoded trace may hold.
pub const MAX_TRACE_EVENTS: u32 = 1 << 24;
/// Magic bytes of an encoded trace.
pub const TRACE_MAGIC: [u8; 4] = *b"LCMR";
/// Format version of an encoded trace.
pub const TRACE_VERSION: u16 = 1;
/// Length of an encoded trace's header.
pub const TRACE_HEADER_LEN: usize = 16;
/// Largest postcard encoding of one event.
pub const MAX_EVENT_BYTES: usize = 64;

/// One trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TraceEvent {
    /// A packet of `flow` towards DC `dst_dc` (its route group).
    Packet {
        /// Time, microseconds.
        t_us: u64,
        /// The 5-tuple.
        flow: FlowKey,
        /// Destination DC id.
        dst_dc: u16,
    },
    /// A queue-depth sample of a port.
    Sample {
        /// Time, microseconds.
        t_us: u64,
        /// The port.
        port: PortId,
        /// Queue depth, bytes.
        queue_bytes: u64,
    },
    /// A port going up or down.
    Link {
        /// Time, microseconds.
        t_us: u64,
        /// The port.
        port: PortId,
        /// Its new state.
        up: bool,
    },
}

impl TraceEvent {
    /// The event's time, microseconds.
    pub const fn t_us(&self) -> u64 {
        match *self {
            TraceEvent::Packet { t_us, .. }
            | TraceEvent::Sample { t_us, .. }
            | TraceEvent::Link { t_us, .. } => t_us,
        }
    }

    /// The core's time for it: one tick per microsecond, wrapping at 2^32.
    ///
    /// ```
    /// # use lcmp_tables::replay::TraceEvent;
    /// # use lcmp_decide::PortId;
    /// let e = TraceEvent::Link { t_us: (1 << 32) + 5, port: PortId(0), up: true };
    /// assert_eq!(e.now().ticks(), 5);
    /// ```
    pub const fn now(&self) -> Instant {
        Instant::from_ticks(self.t_us() as u32)
    }
}

/// One packet's decision, as the replay driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecisionRecord {
    /// 0-based index of the packet event in the trace (all events counted).
    pub index: u32,
    /// Its time, microseconds.
    pub t_us: u64,
    /// The flow.
    pub flow: FlowKey,
    /// The destination group.
    pub group: GroupId,
    /// What the core decided.
    pub decision: Decision,
}

impl DecisionRecord {
    /// The decision's kind code (`lcmp_decide::codes::DecisionKind`: 0 hit,
    /// 1 new, 2 failover, 3 unpinned, 4 no route).
    pub const fn kind_code(&self) -> u8 {
        self.decision.kind().code()
    }

    /// The kind as a word: `hit`, `new`, `failover`, `unpinned`, `no_route`.
    pub const fn kind_name(&self) -> &'static str {
        self.decision.kind().name()
    }

    /// The reason, for new decisions and no-route.
    pub const fn reason(&self) -> Option<Reason> {
        match self.decision {
            Decision::New { reason, .. } | Decision::NoRoute(reason) => Some(reason),
            Decision::Hit(_) | Decision::Unpinned(_) => None,
        }
    }

    /// The 7 bytes the digest hashes (see the module docs).
    ///
    /// ```
    /// # use lcmp_tables::replay::DecisionRecord;
    /// # use lcmp_decide::{Decision, FlowKey, GroupId, PortId, Reason};
    /// # use core::net::Ipv4Addr;
    /// let r = DecisionRecord {
    ///     index: 258, t_us: 0, group: GroupId(8),
    ///     flow: FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17),
    ///     decision: Decision::New { port: PortId(4), reason: Reason::HashInKept, failover: false },
    /// };
    /// assert_eq!(r.digest_bytes(), [2, 1, 0, 0, 1, 4, 1]);
    /// ```
    pub fn digest_bytes(&self) -> [u8; 7] {
        let i = self.index.to_le_bytes();
        let port = self.decision.port().map_or(0xFF, |p| p.0);
        let reason = self.reason().map_or(0xFF, Reason::code);
        [i[0], i[1], i[2], i[3], self.kind_code(), port, reason]
    }
}

const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_XZ);
const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// A running hash of decisions: CRC-64/XZ over [`DecisionRecord::digest_bytes`].
#[derive(Clone)]
pub struct Digest {
    inner: crc::Digest<'static, u64>,
    decisions: u64,
}

impl core::fmt::Debug for Digest {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Digest")
            .field("value", &self.value())
            .field("decisions", &self.decisions)
            .finish()
    }
}

impl Default for Digest {
    fn default() -> Self {
        Digest::new()
    }
}

impl Digest {
    /// An empty digest (its value is CRC-64/XZ of no bytes, 0).
    ///
    /// ```
    /// # use lcmp_tables::replay::Digest;
    /// assert_eq!(Digest::new().value(), 0);
    /// ```
    pub fn new() -> Self {
        Digest {
            inner: CRC64.digest(),
            decisions: 0,
        }
    }

    /// Adds one decision.
    pub fn update(&mut self, record: &DecisionRecord) {
        self.inner.update(&record.digest_bytes());
        self.decisions = self.decisions.saturating_add(1);
    }

    /// The digest so far.
    pub fn value(&self) -> u64 {
        self.inner.clone().finalize()
    }

    /// Decisions hashed so far.
    pub const fn decisions(&self) -> u64 {
        self.decisions
    }
}

/// What [`replay`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReplaySummary {
    /// The digest of all decisions.
    pub digest: u64,
    /// Events replayed.
    pub events: u32,
    /// Packet decisions made.
    pub decisions: u64,
}

/// Feeds `events` to `decider` in order: packets go to `on_packet` (group =
/// `dst_dc`), samples to `sample`, link events to `set_port_up`, each at
/// [`TraceEvent::now`]. Calls `on_decision` once per packet and returns the
/// digest. Stops at the first event the core rejects (a port beyond the
/// decider's capacity) with [`TablesError::Replay`], or at the first error
/// of a fallible source.
///
/// ```
/// # use lcmp_tables::replay::{replay, ReplayDecider, TraceEvent};
/// # use lcmp_decide::{DeciderConfig, FlowKey, PortId};
/// # use core::net::Ipv4Addr;
/// let mut d = ReplayDecider::new(DeciderConfig::default());
/// let flow = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17);
/// let events = [TraceEvent::Packet { t_us: 0, flow, dst_dc: 8 }];
/// let mut n = 0;
/// let s = replay(&mut d, events.iter().copied().map(Ok), |_| n += 1).unwrap();
/// assert_eq!((n, s.decisions), (1, 1)); // no tables: a no-route decision
/// ```
pub fn replay<const P: usize, const F: usize, I, C>(
    decider: &mut Decider<P, F>,
    events: I,
    mut on_decision: C,
) -> Result<ReplaySummary, TablesError>
where
    I: IntoIterator<Item = Result<TraceEvent, TablesError>>,
    C: FnMut(&DecisionRecord),
{
    let mut digest = Digest::new();
    let mut index: u32 = 0;
    for event in events {
        let event = event?;
        let now = event.now();
        let fail = |error| TablesError::Replay { index, error };
        match event {
            TraceEvent::Packet { t_us, flow, dst_dc } => {
                let group = GroupId(dst_dc);
                let decision = decider.on_packet(now, &flow, group);
                let record = DecisionRecord {
                    index,
                    t_us,
                    flow,
                    group,
                    decision,
                };
                digest.update(&record);
                on_decision(&record);
            }
            TraceEvent::Sample {
                port, queue_bytes, ..
            } => {
                decider.sample(now, port, queue_bytes).map_err(fail)?;
            }
            TraceEvent::Link { port, up, .. } => {
                decider.set_port_up(port, up).map_err(fail)?;
            }
        }
        index = index.saturating_add(1);
    }
    Ok(ReplaySummary {
        digest: digest.value(),
        events: index,
        decisions: digest.decisions(),
    })
}

/// Encodes `events` as an encoded trace into `out`; returns the length.
///
/// ```
/// # use lcmp_tables::replay::{encode_trace, TraceReader, TraceEvent};
/// # use lcmp_decide::PortId;
/// let events = [TraceEvent::Sample { t_us: 5, port: PortId(1), queue_bytes: 1000 }];
/// let mut buf = [0u8; 64];
/// let n = encode_trace(&events, &mut buf).unwrap();
/// let back: Result<Vec<_>, _> = TraceReader::new(&buf[..n]).unwrap().collect();
/// assert_eq!(back.unwrap(), events);
/// ```
pub fn encode_trace(events: &[TraceEvent], out: &mut [u8]) -> Result<usize, TablesError> {
    let count = u32::try_from(events.len())
        .ok()
        .filter(|&c| c <= MAX_TRACE_EVENTS)
        .ok_or(TablesError::TooMany {
            what: Count::Events,
            count: events.len() as u64,
        })?;
    let (header, body) = out
        .split_at_mut_checked(TRACE_HEADER_LEN)
        .ok_or(TablesError::BufferTooSmall)?;
    let mut used = 0usize;
    for e in events {
        let rest = body.get_mut(used..).ok_or(TablesError::BufferTooSmall)?;
        let n = postcard::to_slice(e, rest)
            .map_err(|_| TablesError::BufferTooSmall)?
            .len();
        used = used.saturating_add(n);
    }
    let crc = CRC32C.checksum(body.get(..used).unwrap_or(&[]));
    let mut h = [0u8; TRACE_HEADER_LEN];
    h[..4].copy_from_slice(&TRACE_MAGIC);
    h[4..6].copy_from_slice(&TRACE_VERSION.to_le_bytes());
    h[8..12].copy_from_slice(&count.to_le_bytes());
    h[12..16].copy_from_slice(&crc.to_le_bytes());
    header.copy_from_slice(&h);
    Ok(TRACE_HEADER_LEN.saturating_add(used))
}

/// [`encode_trace`] into a `Vec`.
#[cfg(feature = "alloc")]
pub fn encode_trace_vec(events: &[TraceEvent]) -> Result<alloc::vec::Vec<u8>, TablesError> {
    let cap = events
        .len()
        .saturating_mul(MAX_EVENT_BYTES)
        .saturating_add(TRACE_HEADER_LEN);
    let mut buf = alloc::vec![0u8; cap];
    let n = encode_trace(events, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Reads an encoded trace without allocating: the header is checked by
/// [`TraceReader::new`], then each `next` decodes one event. After the
/// declared count, leftover bytes yield [`TablesError::TrailingBytes`].
#[derive(Clone, Debug)]
pub struct TraceReader<'a> {
    rest: &'a [u8],
    remaining: u32,
    failed: bool,
}

fn le16(b: &[u8], at: usize) -> u16 {
    let a = b.get(at..).and_then(<[u8]>::first_chunk::<2>).copied();
    u16::from_le_bytes(a.unwrap_or([0; 2]))
}

fn le32(b: &[u8], at: usize) -> u32 {
    let a = b.get(at..).and_then(<[u8]>::first_chunk::<4>).copied();
    u32::from_le_bytes(a.unwrap_or([0; 4]))
}

impl<'a> TraceReader<'a> {
    /// Checks the header (magic, version, reserved bits, count, CRC).
    pub fn new(bytes: &'a [u8]) -> Result<Self, TablesError> {
        let (header, body) =
            bytes
                .split_at_checked(TRACE_HEADER_LEN)
                .ok_or(TablesError::Truncated {
                    len: bytes.len(),
                    need: TRACE_HEADER_LEN,
                })?;
        if header.get(..4) != Some(&TRACE_MAGIC[..]) {
            return Err(TablesError::BadMagic);
        }
        let version = le16(header, 4);
        if version != TRACE_VERSION {
            return Err(TablesError::UnsupportedVersion(version));
        }
        if le16(header, 6) != 0 {
            return Err(TablesError::ReservedBits);
        }
        let count = le32(header, 8);
        if count > MAX_TRACE_EVENTS {
            return Err(TablesError::TooMany {
                what: Count::Events,
                count: u64::from(count),
            });
        }
        let stored = le32(header, 12);
        let computed = CRC32C.checksum(body);
        if stored != computed {
            return Err(TablesError::CrcMismatch { stored, computed });
        }
        Ok(TraceReader {
            rest: body,
            remaining: count,
            failed: false,
        })
    }

    /// Events not yet read.
    pub const fn remaining(&self) -> u32 {
        self.remaining
    }
}

impl Iterator for TraceReader<'_> {
    type Item = Result<TraceEvent, TablesError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.remaining == 0 {
            if self.rest.is_empty() {
                return None;
            }
            self.failed = true;
            return Some(Err(TablesError::TrailingBytes));
        }
        match postcard::take_from_bytes::<TraceEvent>(self.rest) {
            Ok((event, rest)) => {
                self.rest = rest;
                self.remaining = self.remaining.saturating_sub(1);
                Some(Ok(event))
            }
            Err(_) => {
                self.failed = true;
                Some(Err(TablesError::MalformedPayload))
            }
        }
    }
}

/// Parses a CSV trace (see the module docs). `dst_dc` names are resolved
/// with `topology` when given. Times must not decrease.
///
/// ```
/// # use lcmp_tables::replay::{parse_csv, TraceEvent};
/// let events = parse_csv("# t,kind,...\n0,sample,2,1000\n5,link,2,down\n", None).unwrap();
/// assert_eq!(events.len(), 2);
/// assert!(matches!(events[1], TraceEvent::Link { up: false, .. }));
/// ```
#[cfg(feature = "alloc")]
pub fn parse_csv(
    text: &str,
    topology: Option<&crate::Topology>,
) -> Result<alloc::vec::Vec<TraceEvent>, TablesError> {
    use crate::error::TraceFault as F;
    let mut out = alloc::vec::Vec::new();
    let mut last = 0u64;
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i.saturating_add(1)).unwrap_or(u32::MAX);
        let err = |fault| TablesError::Trace { line, fault };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if out.len() >= MAX_TRACE_EVENTS as usize {
            return Err(TablesError::TooMany {
                what: Count::Events,
                count: u64::from(line),
            });
        }
        let fields: alloc::vec::Vec<&str> = trimmed.split(',').map(str::trim).take(9).collect();
        if fields.len() > 8 {
            return Err(err(F::FieldCount));
        }
        let field = |n: usize| fields.get(n).copied().unwrap_or("");
        let t_us: u64 = field(0).parse().map_err(|_| err(F::Time))?;
        if t_us < last {
            return Err(err(F::TimeWentBackwards));
        }
        last = t_us;
        let port = |s: &str| -> Result<PortId, TablesError> {
            s.parse::<u8>().map(PortId).map_err(|_| err(F::Number))
        };
        let event = match (field(1), fields.len()) {
            ("packet", 8) => {
                let src: IpAddr = field(2).parse().map_err(|_| err(F::Address))?;
                let dst: IpAddr = field(3).parse().map_err(|_| err(F::Address))?;
                let sport: u16 = field(4).parse().map_err(|_| err(F::Number))?;
                let dport: u16 = field(5).parse().map_err(|_| err(F::Number))?;
                let proto: u8 = field(6).parse().map_err(|_| err(F::Number))?;
                let flow = flow_key(src, dst, sport, dport, proto).ok_or(err(F::Address))?;
                let dst_dc = resolve_dc(field(7), topology).ok_or(err(F::Dc))?;
                TraceEvent::Packet { t_us, flow, dst_dc }
            }
            ("sample", 4) => {
                let queue_bytes = field(3).parse().map_err(|_| err(F::Number))?;
                TraceEvent::Sample {
                    t_us,
                    port: port(field(2))?,
                    queue_bytes,
                }
            }
            ("link", 4) => {
                let up = match field(3) {
                    "up" => true,
                    "down" => false,
                    _ => return Err(err(F::LinkState)),
                };
                TraceEvent::Link {
                    t_us,
                    port: port(field(2))?,
                    up,
                }
            }
            ("packet" | "sample" | "link", _) => return Err(err(F::FieldCount)),
            _ => return Err(err(F::Kind)),
        };
        out.push(event);
    }
    Ok(out)
}

/// A flow key from two addresses of one family.
pub fn flow_key(src: IpAddr, dst: IpAddr, sport: u16, dport: u16, proto: u8) -> Option<FlowKey> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some(FlowKey::v4(s, d, sport, dport, proto)),
        (IpAddr::V6(s), IpAddr::V6(d)) => Some(FlowKey::v6(s, d, sport, dport, proto)),
        _ => None,
    }
}

#[cfg(feature = "alloc")]
fn resolve_dc(text: &str, topology: Option<&crate::Topology>) -> Option<u16> {
    match topology {
        Some(t) => t.dc_id(text),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use alloc::vec::Vec;
    use core::net::Ipv4Addr;
    use lcmp_decide::DeciderConfig;

    fn flow(i: u16) -> FlowKey {
        FlowKey::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 7, 1),
            1000 + i,
            4791,
            17,
        )
    }

    fn sample_events() -> Vec<TraceEvent> {
        alloc::vec![
            TraceEvent::Sample {
                t_us: 0,
                port: PortId(2),
                queue_bytes: 4_000_000_000
            },
            TraceEvent::Packet {
                t_us: 10,
                flow: flow(1),
                dst_dc: 8
            },
            TraceEvent::Link {
                t_us: 20,
                port: PortId(4),
                up: false
            },
            TraceEvent::Packet {
                t_us: u64::from(u32::MAX) + 7,
                flow: flow(2),
                dst_dc: 3
            },
        ]
    }

    #[test]
    fn encode_round_trip_and_rejects() {
        let events = sample_events();
        let mut buf = [0u8; 512];
        let n = encode_trace(&events, &mut buf).expect("encode");
        let bytes = &buf[..n];
        let back: Result<Vec<_>, _> = TraceReader::new(bytes).expect("header").collect();
        assert_eq!(back, Ok(events.clone()));
        assert_eq!(
            TraceReader::new(&bytes[..10]).err(),
            Some(TablesError::Truncated { len: 10, need: 16 })
        );
        let mut bad = bytes.to_vec();
        bad[0] = b'X';
        assert_eq!(TraceReader::new(&bad).err(), Some(TablesError::BadMagic));
        let mut bad = bytes.to_vec();
        bad[4] = 9;
        assert_eq!(
            TraceReader::new(&bad).err(),
            Some(TablesError::UnsupportedVersion(9))
        );
        let mut bad = bytes.to_vec();
        bad[20] ^= 1;
        assert!(matches!(
            TraceReader::new(&bad),
            Err(TablesError::CrcMismatch { .. })
        ));
        // A count too small leaves trailing bytes.
        let mut short = bytes.to_vec();
        short[8] = 1;
        let got: Vec<_> = TraceReader::new(&short).expect("header").collect();
        assert_eq!(got.last(), Some(&Err(TablesError::TrailingBytes)));
        assert_eq!(
            encode_trace(&events, &mut [0u8; 20]),
            Err(TablesError::BufferTooSmall)
        );
        assert!(encode_trace_vec(&events).is_ok_and(|v| v == bytes));
    }

    #[test]
    fn worst_case_event_fits() {
        let flow = FlowKey {
            addrs: lcmp_decide::Addresses::V6 {
                src: u128::MAX,
                dst: u128::MAX,
            },
            sport: u16::MAX,
            dport: u16::MAX,
            proto: u8::MAX,
        };
        let e = TraceEvent::Packet {
            t_us: u64::MAX,
            flow,
            dst_dc: u16::MAX,
        };
        let n = postcard::to_allocvec(&e)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        assert!(n <= MAX_EVENT_BYTES, "{n}");
        let s = TraceEvent::Sample {
            t_us: u64::MAX,
            port: PortId(255),
            queue_bytes: u64::MAX,
        };
        assert!(postcard::to_allocvec(&s).is_ok_and(|v| v.len() <= MAX_EVENT_BYTES));
    }

    #[test]
    fn csv_parse_and_errors() {
        let text = "# trace\n0,sample,2,4000000000\n10,packet,10.0.0.1,10.0.7.1,1001,4791,17,8\n\n\
                    20,link,4,down\n4294967302,packet,10.0.0.1,10.0.7.1,1002,4791,17,3\n";
        assert_eq!(parse_csv(text, None), Ok(sample_events()));
        let topo = crate::Topology::embedded("testbed8").expect("embedded");
        let named = parse_csv("5,packet,fd00::1,fd00::2,1,2,17,DC8", Some(&topo)).expect("parse");
        assert!(matches!(named[0], TraceEvent::Packet { dst_dc: 8, .. }));
        let cases = [
            ("x,sample,1,1", TraceFault::Time),
            ("1,teleport,1,1", TraceFault::Kind),
            ("1,sample,1", TraceFault::FieldCount),
            ("1,sample,1,1,1,1,1,1,1,1", TraceFault::FieldCount),
            ("1,sample,256,1", TraceFault::Number),
            ("1,link,1,sideways", TraceFault::LinkState),
            ("1,packet,10.0.0.1,fd00::1,1,2,17,8", TraceFault::Address),
            ("1,packet,10.0.0.1,10.0.0.999,1,2,17,8", TraceFault::Address),
            ("1,packet,10.0.0.1,10.0.0.2,1,2,17,DC8", TraceFault::Dc),
        ];
        for (line, fault) in cases {
            assert_eq!(
                parse_csv(&alloc::format!("# c\n{line}"), None),
                Err(TablesError::Trace { line: 2, fault }),
                "{line}"
            );
        }
        assert_eq!(
            parse_csv("5,link,1,up\n4,link,1,up", None),
            Err(TablesError::Trace {
                line: 2,
                fault: TraceFault::TimeWentBackwards
            })
        );
    }

    use crate::error::TraceFault;

    quickcheck::quickcheck! {
        fn csv_parser_never_panics(text: alloc::string::String) -> bool {
            let _ = parse_csv(&text, None);
            true
        }

        fn csv_lines_never_panic(fields: Vec<(u8, alloc::string::String)>) -> bool {
            // Well-formed prefixes with arbitrary tails reach every branch.
            let kinds = ["packet", "sample", "link", "pkt"];
            let text: alloc::string::String = fields
                .iter()
                .map(|(k, rest)| alloc::format!("{k},{},{rest}\n", kinds[usize::from(*k) % 4]))
                .collect();
            let _ = parse_csv(&text, None);
            true
        }

        fn trace_reader_never_panics(bytes: Vec<u8>) -> bool {
            if let Ok(r) = TraceReader::new(&bytes) {
                for e in r.take(1000) {
                    let _ = e;
                }
            }
            true
        }

        // The panic checks above, with results: what the CSV form and the
        // encoding write reads back as the same events, and a damaged
        // line or byte string is the documented error.

        fn csv_round_trips(raw: Vec<(u32, u8, u128, u128, u64)>) -> bool {
            let events = arbitrary_events(&raw);
            let text: alloc::string::String = events.iter().map(csv_line).collect();
            parse_csv(&text, None) == Ok(events)
        }

        fn csv_faults_name_the_line_and_kind(raw: Vec<(u32, u8, u128, u128, u64)>, at: usize, how: u8) -> bool {
            let events = arbitrary_events(&raw);
            if events.is_empty() {
                return true;
            }
            let at = at % events.len();
            let mut lines: Vec<alloc::string::String> = events.iter().map(csv_line).collect();
            let earlier = at > 0 && events[at - 1].t_us() > 0;
            let line = &mut lines[at];
            let mut parts = line.splitn(3, ',');
            let (time, kind, tail) = (
                alloc::string::String::from(parts.next().unwrap_or_default()),
                alloc::string::String::from(parts.next().unwrap_or_default()),
                alloc::string::String::from(parts.next().unwrap_or_default()),
            );
            let fault = match how % 4 {
                0 => {
                    *line = alloc::format!("{time},teleport,{tail}");
                    TraceFault::Kind
                }
                1 => {
                    *line = alloc::format!("t{time},{kind},{tail}");
                    TraceFault::Time
                }
                2 => {
                    *line = alloc::format!("{},extra\n", line.trim_end());
                    TraceFault::FieldCount
                }
                _ => {
                    // Time 0 after a later event (nothing is earlier than 0).
                    if !earlier {
                        return true;
                    }
                    *line = alloc::format!("0,{kind},{tail}");
                    TraceFault::TimeWentBackwards
                }
            };
            let text: alloc::string::String = lines.concat();
            let line = u32::try_from(at + 1).unwrap_or(u32::MAX);
            parse_csv(&text, None) == Err(TablesError::Trace { line, fault })
        }

        fn encoded_trace_round_trips(raw: Vec<(u32, u8, u128, u128, u64)>) -> bool {
            let events = arbitrary_events(&raw);
            let Ok(bytes) = encode_trace_vec(&events) else { return false };
            let Ok(reader) = TraceReader::new(&bytes) else { return false };
            reader.collect::<Result<Vec<_>, _>>() == Ok(events)
        }

        fn cut_or_flipped_traces_are_typed_errors(raw: Vec<(u32, u8, u128, u128, u64)>, at: usize, flip: u8) -> bool {
            let events = arbitrary_events(&raw);
            let Ok(bytes) = encode_trace_vec(&events) else { return false };
            let cut = at % bytes.len();
            let truncated = match TraceReader::new(&bytes[..cut]) {
                Err(TablesError::Truncated { len, need }) => cut < TRACE_HEADER_LEN && len == cut && need == TRACE_HEADER_LEN,
                // A shorter body: the CRC no longer matches (2^-32 aside).
                Err(TablesError::CrcMismatch { .. }) => cut >= TRACE_HEADER_LEN,
                _ => false,
            };
            // One flipped body byte: the CRC catches it.
            let flipped = bytes.len() == TRACE_HEADER_LEN || {
                let mut b = bytes.clone();
                let i = TRACE_HEADER_LEN + at % (bytes.len() - TRACE_HEADER_LEN);
                b[i] ^= flip.max(1);
                matches!(TraceReader::new(&b), Err(TablesError::CrcMismatch { .. }))
            };
            truncated && flipped
        }
    }

    /// Events from quickcheck's raw tuples `(delta_us, kind, a, b, n)`:
    /// times never decrease; packets are IPv4 or IPv6, samples and link
    /// changes use every port number.
    fn arbitrary_events(raw: &[(u32, u8, u128, u128, u64)]) -> Vec<TraceEvent> {
        let mut t_us = 0u64;
        raw.iter()
            .map(|&(delta, kind, a, b, n)| {
                t_us += u64::from(delta);
                let (sport, dport, proto, dst_dc) = (
                    n as u16,
                    (n >> 16) as u16,
                    (n >> 32) as u8,
                    (n >> 40) as u16,
                );
                match kind % 4 {
                    0 => TraceEvent::Packet {
                        t_us,
                        flow: FlowKey::v4(
                            Ipv4Addr::from_bits(a as u32),
                            Ipv4Addr::from_bits(b as u32),
                            sport,
                            dport,
                            proto,
                        ),
                        dst_dc,
                    },
                    1 => TraceEvent::Packet {
                        t_us,
                        flow: FlowKey::v6(
                            core::net::Ipv6Addr::from_bits(a),
                            core::net::Ipv6Addr::from_bits(b),
                            sport,
                            dport,
                            proto,
                        ),
                        dst_dc,
                    },
                    2 => TraceEvent::Sample {
                        t_us,
                        port: PortId(n as u8),
                        queue_bytes: n.rotate_left(17),
                    },
                    _ => TraceEvent::Link {
                        t_us,
                        port: PortId(n as u8),
                        up: n & 1 == 0,
                    },
                }
            })
            .collect()
    }

    /// One CSV line, written from the module docs' format (not by the
    /// parser's code): addresses in their standard text form.
    fn csv_line(e: &TraceEvent) -> alloc::string::String {
        match *e {
            TraceEvent::Packet { t_us, flow, dst_dc } => {
                let (src, dst): (IpAddr, IpAddr) = match flow.addrs {
                    lcmp_decide::Addresses::V4 { src, dst } => (
                        Ipv4Addr::from_bits(src).into(),
                        Ipv4Addr::from_bits(dst).into(),
                    ),
                    lcmp_decide::Addresses::V6 { src, dst } => (
                        core::net::Ipv6Addr::from_bits(src).into(),
                        core::net::Ipv6Addr::from_bits(dst).into(),
                    ),
                };
                alloc::format!(
                    "{t_us},packet,{src},{dst},{},{},{},{dst_dc}\n",
                    flow.sport,
                    flow.dport,
                    flow.proto
                )
            }
            TraceEvent::Sample {
                t_us,
                port,
                queue_bytes,
            } => alloc::format!("{t_us},sample,{},{queue_bytes}\n", port.0),
            TraceEvent::Link { t_us, port, up } => {
                alloc::format!(
                    "{t_us},link,{},{}\n",
                    port.0,
                    if up { "up" } else { "down" }
                )
            }
        }
    }

    #[test]
    fn replay_digest_is_order_sensitive() {
        let events = sample_events();
        let mut d = ReplayDecider::new(DeciderConfig::default());
        let mut seen = Vec::new();
        let s = replay(&mut d, events.iter().copied().map(Ok), |r| seen.push(*r)).expect("replay");
        assert_eq!(s.events, 4);
        assert_eq!(s.decisions, 2);
        assert_eq!(seen.iter().map(|r| r.index).collect::<Vec<_>>(), [1, 3]);
        // Recompute by hand from the records.
        let mut bytes = Vec::new();
        for r in &seen {
            bytes.extend_from_slice(&r.digest_bytes());
        }
        assert_eq!(s.digest, CRC64.checksum(&bytes));
        // CRC-64/XZ check value.
        assert_eq!(CRC64.checksum(b"123456789"), 0x995D_C9BB_DF19_39FA);
        // A sample beyond the port capacity stops the replay.
        let mut small: Decider<2, 16> = Decider::new(DeciderConfig::default());
        assert!(matches!(
            replay(&mut small, events.iter().copied().map(Ok), |_| {}),
            Err(TablesError::Replay { index: 0, .. })
        ));
    }
}
