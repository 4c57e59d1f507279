//! The encoded trace: a 16-byte header (`LCMR`, version, reserved, event
//! count, CRC-32/ISCSI of the body), then each [`TraceEvent`] in postcard;
//! written by [`encode_trace`], read without allocating by [`TraceReader`].
//!
//! The events travel as this module's own wire structs ([`WireEventV1`]),
//! not as the serde layout of the core's `FlowKey` and `PortId`: the trace
//! format belongs to the trace (as the blob's does to `blob/wire.rs`), so
//! a field added to a core type cannot change it, and the core's `serde`
//! feature is not needed to read a trace (firmware builds without it).
//! `tests/golden/trace-v1-*.lcmr` hold version 1's bytes.

use lcmp_decide::{Addresses, FlowKey, PortId};
use serde::{Deserialize, Serialize};

use super::TraceEvent;
use crate::error::{Count, FormatError, TablesError};

/// One event of trace version 1 on the wire (postcard: the variant index,
/// then the fields in order).
#[derive(Serialize, Deserialize)]
enum WireEventV1 {
    Packet {
        t_us: u64,
        flow: WireFlowV1,
        dst_dc: u16,
    },
    Sample {
        t_us: u64,
        port: u8,
        queue_bytes: u64,
    },
    Link {
        t_us: u64,
        port: u8,
        up: bool,
    },
}

/// A 5-tuple in trace version 1: the addresses, then ports and protocol.
#[derive(Serialize, Deserialize)]
struct WireFlowV1 {
    addrs: WireAddrsV1,
    sport: u16,
    dport: u16,
    proto: u8,
}

/// Both addresses of a flow in trace version 1 (variant 0 IPv4, 1 IPv6).
#[derive(Serialize, Deserialize)]
enum WireAddrsV1 {
    V4 { src: u32, dst: u32 },
    V6 { src: u128, dst: u128 },
}

impl From<TraceEvent> for WireEventV1 {
    fn from(e: TraceEvent) -> Self {
        match e {
            TraceEvent::Packet { t_us, flow, dst_dc } => WireEventV1::Packet {
                t_us,
                flow: WireFlowV1 {
                    addrs: match flow.addrs {
                        Addresses::V4 { src, dst } => WireAddrsV1::V4 { src, dst },
                        Addresses::V6 { src, dst } => WireAddrsV1::V6 { src, dst },
                    },
                    sport: flow.sport,
                    dport: flow.dport,
                    proto: flow.proto,
                },
                dst_dc,
            },
            TraceEvent::Sample {
                t_us,
                port,
                queue_bytes,
            } => WireEventV1::Sample {
                t_us,
                port: port.0,
                queue_bytes,
            },
            TraceEvent::Link { t_us, port, up } => WireEventV1::Link {
                t_us,
                port: port.0,
                up,
            },
        }
    }
}

impl From<WireEventV1> for TraceEvent {
    fn from(w: WireEventV1) -> Self {
        match w {
            WireEventV1::Packet { t_us, flow, dst_dc } => TraceEvent::Packet {
                t_us,
                flow: FlowKey {
                    addrs: match flow.addrs {
                        WireAddrsV1::V4 { src, dst } => Addresses::V4 { src, dst },
                        WireAddrsV1::V6 { src, dst } => Addresses::V6 { src, dst },
                    },
                    sport: flow.sport,
                    dport: flow.dport,
                    proto: flow.proto,
                },
                dst_dc,
            },
            WireEventV1::Sample {
                t_us,
                port,
                queue_bytes,
            } => TraceEvent::Sample {
                t_us,
                port: PortId(port),
                queue_bytes,
            },
            WireEventV1::Link { t_us, port, up } => TraceEvent::Link {
                t_us,
                port: PortId(port),
                up,
            },
        }
    }
}

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

const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

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
        .ok_or(FormatError::BufferTooSmall)?;
    let mut used = 0usize;
    for e in events {
        let rest = body.get_mut(used..).ok_or(FormatError::BufferTooSmall)?;
        let n = postcard::to_slice(&WireEventV1::from(*e), rest)
            .map_err(|_| FormatError::BufferTooSmall)?
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
/// declared count, leftover bytes yield [`FormatError::TrailingBytes`].
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
                .ok_or(FormatError::Truncated {
                    len: bytes.len(),
                    need: TRACE_HEADER_LEN,
                })?;
        if header.get(..4) != Some(&TRACE_MAGIC[..]) {
            return Err(FormatError::BadMagic.into());
        }
        let version = le16(header, 4);
        if version != TRACE_VERSION {
            return Err(FormatError::UnsupportedVersion(version).into());
        }
        if le16(header, 6) != 0 {
            return Err(FormatError::ReservedBits.into());
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
            return Err(FormatError::CrcMismatch { stored, computed }.into());
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
            return Some(Err(FormatError::TrailingBytes.into()));
        }
        match postcard::take_from_bytes::<WireEventV1>(self.rest) {
            Ok((event, rest)) => {
                self.rest = rest;
                self.remaining = self.remaining.saturating_sub(1);
                Some(Ok(event.into()))
            }
            Err(_) => {
                self.failed = true;
                Some(Err(FormatError::MalformedPayload.into()))
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::replay::fixtures::{arbitrary_events, sample_events};
    use alloc::vec::Vec;
    use lcmp_decide::{FlowKey, PortId};

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
            Some(TablesError::Format(FormatError::Truncated {
                len: 10,
                need: 16
            }))
        );
        let mut bad = bytes.to_vec();
        bad[0] = b'X';
        assert_eq!(
            TraceReader::new(&bad).err(),
            Some(TablesError::Format(FormatError::BadMagic))
        );
        let mut bad = bytes.to_vec();
        bad[4] = 9;
        assert_eq!(
            TraceReader::new(&bad).err(),
            Some(TablesError::Format(FormatError::UnsupportedVersion(9)))
        );
        let mut bad = bytes.to_vec();
        bad[20] ^= 1;
        assert!(matches!(
            TraceReader::new(&bad),
            Err(TablesError::Format(FormatError::CrcMismatch { .. }))
        ));
        // A count too small leaves trailing bytes.
        let mut short = bytes.to_vec();
        short[8] = 1;
        let got: Vec<_> = TraceReader::new(&short).expect("header").collect();
        assert_eq!(
            got.last(),
            Some(&Err(TablesError::Format(FormatError::TrailingBytes)))
        );
        assert_eq!(
            encode_trace(&events, &mut [0u8; 20]),
            Err(TablesError::Format(FormatError::BufferTooSmall))
        );
        assert!(encode_trace_vec(&events).is_ok_and(|v| v == bytes));
    }

    #[test]
    fn worst_case_event_fits() {
        let flow = FlowKey {
            addrs: Addresses::V6 {
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
        let n = postcard::to_allocvec(&WireEventV1::from(e))
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        assert!(n <= MAX_EVENT_BYTES, "{n}");
        let s = TraceEvent::Sample {
            t_us: u64::MAX,
            port: PortId(255),
            queue_bytes: u64::MAX,
        };
        assert!(
            postcard::to_allocvec(&WireEventV1::from(s)).is_ok_and(|v| v.len() <= MAX_EVENT_BYTES)
        );
    }

    quickcheck::quickcheck! {
        fn trace_reader_never_panics(bytes: Vec<u8>) -> bool {
            if let Ok(r) = TraceReader::new(&bytes) {
                for e in r.take(1000) {
                    let _ = e;
                }
            }
            true
        }

        // The panic check above, with results: what the encoding writes
        // reads back as the same events, and a damaged byte string is the
        // documented error.

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
                Err(TablesError::Format(FormatError::Truncated { len, need })) => cut < TRACE_HEADER_LEN && len == cut && need == TRACE_HEADER_LEN,
                // A shorter body: the CRC no longer matches (2^-32 aside).
                Err(TablesError::Format(FormatError::CrcMismatch { .. })) => cut >= TRACE_HEADER_LEN,
                _ => false,
            };
            // One flipped body byte: the CRC catches it.
            let flipped = bytes.len() == TRACE_HEADER_LEN || {
                let mut b = bytes.clone();
                let i = TRACE_HEADER_LEN + at % (bytes.len() - TRACE_HEADER_LEN);
                b[i] ^= flip.max(1);
                matches!(TraceReader::new(&b), Err(TablesError::Format(FormatError::CrcMismatch { .. })))
            };
            truncated && flipped
        }
    }
}
