//! The versioned table blob a running core installs atomically.
//!
//! Layout (all integers little-endian; see `docs/tables.md`):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `LCMT` |
//! | 4 | 2 | format version ([`BLOB_VERSION`]) |
//! | 6 | 2 | reserved, 0 |
//! | 8 | 8 | generation number |
//! | 16 | 4 | payload length `L` (at most [`MAX_BLOB_PAYLOAD`]) |
//! | 20 | 4 | CRC-32/ISCSI of bytes 0..20 followed by the payload |
//! | 24 | `L` | payload: [`wire::WireTablesV3`] in postcard |
//!
//! The payload is defined by the [`wire`] structs of its version, not by
//! the serde layout of [`lcmp_decide::Tables`]: a field added to the core
//! reaches the blob only through a new format version. Version 3 added
//! `Params::delay_unit_ticks`; version 2 added `Params::band` and
//! `Tables::queue_thresholds`. Every released version is still read, and
//! will be (golden blobs of each are tests): version 1 as band 255 and no
//! explicit queue thresholds, versions 1 and 2 as `delay_unit_ticks` 0
//! (unknown: no early reuse of idle flow-cache entries).
//!
//! [`decode_blob`] returns `Ok` or one typed error for every byte string,
//! never panics, reads counts before filling anything (an oversize count is
//! [`TablesError::TooMany`], not a panic or a silent truncation), validates
//! the tables as the core would install them, and accepts only the
//! canonical encoding, so a decoded blob re-encodes (in its own version)
//! to identical bytes.
//!
//! [`decode_blob_into`] does the same into caller-owned [`Tables`] (a
//! `static`, or scratch memory next to the decider), element by element:
//! it needs under 1 KiB of stack, where a by-value `Tables` is about
//! 19 KiB (docs/firmware.md, "Stack"). [`decode_blob`] is a thin wrapper
//! over it for callers with stack or heap to spare. [`encode_blob`] writes
//! element by element too.

pub mod signed;
pub mod wire;

use lcmp_decide::tables::{
    Group, GroupId, QueueThresholds, ValidTables, MAX_CANDIDATES, MAX_GROUPS, MAX_LEVELS,
    MAX_PORTS, MAX_QUEUE_TABLES,
};
use lcmp_decide::{PortId, Tables};
use serde::{Deserialize, Serialize};

use crate::error::{Count, FormatError, TablesError};
use wire::{CanonicalSize, WireCandidateV1, WireParamsV1, WireParamsV2, WireParamsV3, WirePortV1};

/// Magic bytes of a table blob.
pub const BLOB_MAGIC: [u8; 4] = *b"LCMT";
/// The format version this build writes.
pub const BLOB_VERSION: u16 = 3;
/// The oldest format version this build reads (every version from it to
/// [`BLOB_VERSION`] is read).
pub const BLOB_OLDEST_VERSION: u16 = 1;
/// Header length, bytes.
pub const BLOB_HEADER_LEN: usize = 24;
/// Largest payload accepted: above the worst-case encoding of a full
/// [`Tables`] (64 groups of 16 candidates, 64 ports, 16 levels).
pub const MAX_BLOB_PAYLOAD: usize = 80 * 1024;
/// Largest blob: header plus [`MAX_BLOB_PAYLOAD`].
pub const MAX_BLOB_LEN: usize = BLOB_HEADER_LEN + MAX_BLOB_PAYLOAD;

const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// A decoded blob.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Blob {
    /// The format version it was written in.
    pub version: u16,
    /// The generation number: installers may refuse to go backwards.
    pub generation: u64,
    /// The validated tables.
    pub tables: Tables,
}

fn blob_crc(header_prefix: &[u8], payload: &[u8]) -> u32 {
    let mut d = CRC32C.digest();
    d.update(header_prefix);
    d.update(payload);
    d.finalize()
}

/// Writes postcard values one after another into a buffer.
struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put<T: Serialize>(&mut self, v: &T) -> Result<(), TablesError> {
        let rest = self
            .buf
            .get_mut(self.at..)
            .ok_or(FormatError::BufferTooSmall)?;
        let n = postcard::to_slice(v, rest)
            .map_err(|_| FormatError::BufferTooSmall)?
            .len();
        self.at = self.at.saturating_add(n);
        Ok(())
    }

    /// A sequence length: postcard's `usize` varint, which is the `u64`
    /// varint of the same value.
    fn len(&mut self, n: usize) -> Result<(), TablesError> {
        self.put(&(n as u64))
    }
}

/// Writes the version-3 payload of `t` element by element (the bytes of
/// [`wire::WireTablesV3`] in postcard, without building one on the stack);
/// returns its length.
fn encode_payload(t: &Tables, out: &mut [u8]) -> Result<usize, TablesError> {
    let mut w = Writer { buf: out, at: 0 };
    w.put(&WireParamsV3::from(&t.params))?;
    w.len(t.levels.len())?;
    for l in &t.levels {
        w.put(l)?;
    }
    w.len(t.capacity_thresholds_bps.len())?;
    for c in &t.capacity_thresholds_bps {
        w.put(c)?;
    }
    w.len(t.ports.len())?;
    for p in &t.ports {
        w.put(&WirePortV1::from(p))?;
    }
    w.len(t.groups.len())?;
    for g in &t.groups {
        w.put(&g.id.0)?;
        w.len(g.candidates.len())?;
        for c in &g.candidates {
            w.put(&WireCandidateV1::from(c))?;
        }
    }
    w.len(t.queue_thresholds.len())?;
    for q in &t.queue_thresholds {
        w.len(q.ports.len())?;
        for p in &q.ports {
            w.put(&p.0)?;
        }
        w.len(q.bytes.len())?;
        for b in &q.bytes {
            w.put(b)?;
        }
    }
    Ok(w.at)
}

/// Validates `tables` and writes the blob (format [`BLOB_VERSION`]) into
/// `out`; returns its length.
///
/// ```
/// # use lcmp_tables::blob::{decode_blob, encode_blob, MAX_BLOB_LEN};
/// let tables = lcmp_decide::Tables::paper_defaults();
/// let mut buf = vec![0u8; MAX_BLOB_LEN];
/// let n = encode_blob(&tables, 7, &mut buf).unwrap();
/// let blob = decode_blob(&buf[..n]).unwrap();
/// assert_eq!((blob.generation, blob.tables), (7, tables));
/// ```
pub fn encode_blob(tables: &Tables, generation: u64, out: &mut [u8]) -> Result<usize, TablesError> {
    crate::validate_tables(tables)?;
    let (header, body) = out
        .split_at_mut_checked(BLOB_HEADER_LEN)
        .ok_or(FormatError::BufferTooSmall)?;
    let len = encode_payload(tables, body)?;
    if len > MAX_BLOB_PAYLOAD {
        return Err(TablesError::InputTooLarge {
            len,
            max: MAX_BLOB_PAYLOAD,
        });
    }
    let mut h = [0u8; BLOB_HEADER_LEN];
    h[..4].copy_from_slice(&BLOB_MAGIC);
    h[4..6].copy_from_slice(&BLOB_VERSION.to_le_bytes());
    h[8..16].copy_from_slice(&generation.to_le_bytes());
    // len <= MAX_BLOB_PAYLOAD < 2^32.
    h[16..20].copy_from_slice(&(len as u32).to_le_bytes());
    let crc = blob_crc(&h[..20], body.get(..len).unwrap_or(&[]));
    h[20..24].copy_from_slice(&crc.to_le_bytes());
    header.copy_from_slice(&h);
    Ok(BLOB_HEADER_LEN.saturating_add(len))
}

/// [`encode_blob`] into a `Vec`.
#[cfg(feature = "alloc")]
pub fn encode_blob_vec(
    tables: &Tables,
    generation: u64,
) -> Result<alloc::vec::Vec<u8>, TablesError> {
    let mut buf = alloc::vec![0u8; MAX_BLOB_LEN];
    let n = encode_blob(tables, generation, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// `N` bytes at `at`, zeros when out of range (no panic path at all:
/// `first_chunk` cannot fail on length, unlike `copy_from_slice`).
pub(crate) fn array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..)
        .and_then(<[u8]>::first_chunk::<N>)
        .copied()
        .unwrap_or([0; N])
}

/// Decodes and validates a blob into a new value: [`decode_blob_into`]
/// (see there for the errors) on fresh [`Tables`], returned by value.
///
/// ```
/// # use lcmp_tables::{blob::decode_blob, FormatError, TablesError};
/// assert!(matches!(
///     decode_blob(b"LCMT"),
///     Err(TablesError::Format(FormatError::Truncated { .. }))
/// ));
/// ```
pub fn decode_blob(bytes: &[u8]) -> Result<Blob, TablesError> {
    let mut tables = Tables::new();
    let generation = decode_blob_into(bytes, &mut tables)?;
    Ok(Blob {
        version: u16::from_le_bytes(array(bytes, 4)),
        generation,
        tables,
    })
}

/// Decodes and validates a blob into `tables` (caller-owned memory, for
/// example a `static`), element by element, and returns the blob's
/// generation. Needs under 1 KiB of stack (with the validation).
///
/// Every byte string gives `Ok` or exactly one error, checked in this
/// order: [`FormatError::Truncated`] (shorter than the header),
/// [`FormatError::BadMagic`], [`FormatError::UnsupportedVersion`],
/// [`FormatError::ReservedBits`], [`TablesError::InputTooLarge`] (declared
/// payload over the limit), [`FormatError::Truncated`] (fewer payload bytes
/// than declared), [`FormatError::LengthMismatch`] (more),
/// [`FormatError::CrcMismatch`], then in the payload
/// [`TablesError::TooMany`] (a count over its capacity),
/// [`FormatError::MalformedPayload`], [`FormatError::TrailingBytes`],
/// [`FormatError::NonCanonical`], and [`TablesError::Core`] or
/// [`TablesError::TooMany`] from [`crate::validate_tables`]. (Each
/// [`FormatError`] comes as [`TablesError::Format`].)
///
/// On success `tables` holds exactly the blob's tables (nothing of its
/// previous contents remains). On a header or CRC error it is untouched; on
/// a payload or validation error it holds a partial decode: install it only
/// after `Ok`.
///
/// ```
/// # use lcmp_tables::blob::{decode_blob_into, encode_blob, MAX_BLOB_LEN};
/// # use lcmp_decide::Tables;
/// let mut buf = vec![0u8; MAX_BLOB_LEN];
/// let n = encode_blob(&Tables::paper_defaults(), 7, &mut buf).unwrap();
/// let mut scratch = Tables::new();
/// assert_eq!(decode_blob_into(&buf[..n], &mut scratch), Ok(7));
/// assert_eq!(scratch, Tables::paper_defaults());
/// ```
pub fn decode_blob_into(bytes: &[u8], tables: &mut Tables) -> Result<u64, TablesError> {
    decode_blob_valid(bytes, tables).map(|(generation, _)| generation)
}

/// [`decode_blob_into`], returning with the generation the proof that the
/// tables were validated ([`ValidTables`], a borrow of `tables`), for an
/// install that does not validate them again
/// (`DeciderWith::install_valid`, [`ValidTables::compile_into`]). The same
/// checks, in the same order, with the same errors.
///
/// ```
/// # use lcmp_tables::blob::{decode_blob_valid, encode_blob_vec};
/// # use lcmp_decide::{Decider, DeciderConfig, Tables};
/// let blob = encode_blob_vec(&Tables::paper_defaults(), 7).unwrap();
/// let mut scratch = Tables::new();
/// let (generation, valid) = decode_blob_valid(&blob, &mut scratch).unwrap();
/// assert_eq!(generation, 7);
/// let mut d: Decider<8, 64> = Decider::new(DeciderConfig::DEFAULT);
/// d.install_valid(valid).unwrap();
/// ```
pub fn decode_blob_valid<'a>(
    bytes: &[u8],
    tables: &'a mut Tables,
) -> Result<(u64, ValidTables<'a>), TablesError> {
    let (generation, version, body) = check_blob(bytes)?;
    decode_payload(body, version, tables)?;
    let tables: &'a Tables = tables;
    Ok((generation, crate::validate_tables(tables)?))
}

/// The header and CRC checks of [`decode_blob_into`] (its errors up to
/// [`FormatError::CrcMismatch`]), without decoding the payload: the
/// blob's generation, format version and payload.
pub(crate) fn check_blob(bytes: &[u8]) -> Result<(u64, u16, &[u8]), TablesError> {
    let (header, body) = bytes
        .split_at_checked(BLOB_HEADER_LEN)
        .ok_or(FormatError::Truncated {
            len: bytes.len(),
            need: BLOB_HEADER_LEN,
        })?;
    if array::<4>(header, 0) != BLOB_MAGIC {
        return Err(FormatError::BadMagic.into());
    }
    let version = u16::from_le_bytes(array(header, 4));
    if !(BLOB_OLDEST_VERSION..=BLOB_VERSION).contains(&version) {
        return Err(FormatError::UnsupportedVersion(version).into());
    }
    if u16::from_le_bytes(array(header, 6)) != 0 {
        return Err(FormatError::ReservedBits.into());
    }
    let generation = u64::from_le_bytes(array(header, 8));
    let declared = u32::from_le_bytes(array(header, 16));
    let declared_len = usize::try_from(declared).unwrap_or(usize::MAX);
    if declared_len > MAX_BLOB_PAYLOAD {
        return Err(TablesError::InputTooLarge {
            len: declared_len,
            max: MAX_BLOB_PAYLOAD,
        });
    }
    if body.len() < declared_len {
        return Err(FormatError::Truncated {
            len: bytes.len(),
            need: BLOB_HEADER_LEN.saturating_add(declared_len),
        }
        .into());
    }
    if body.len() > declared_len {
        return Err(FormatError::LengthMismatch {
            declared: u64::from(declared),
            actual: body.len() as u64,
        }
        .into());
    }
    let stored = u32::from_le_bytes(array(header, 20));
    let computed = blob_crc(header.get(..20).unwrap_or(&[]), body);
    if stored != computed {
        return Err(FormatError::CrcMismatch { stored, computed }.into());
    }
    Ok((generation, version, body))
}

/// Reads one postcard value and checks that its encoding was canonical.
fn take<'a, T: Deserialize<'a> + CanonicalSize>(b: &mut &'a [u8]) -> Result<T, TablesError> {
    let (v, rest): (T, _) =
        postcard::take_from_bytes(b).map_err(|_| FormatError::MalformedPayload)?;
    if b.len().saturating_sub(rest.len()) != v.canonical_size() {
        return Err(FormatError::NonCanonical.into());
    }
    *b = rest;
    Ok(v)
}

/// Reads a sequence length and checks it against its capacity.
fn take_len(b: &mut &[u8], what: Count, max: usize) -> Result<usize, TablesError> {
    let n: u64 = take(b)?;
    match usize::try_from(n) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(TablesError::TooMany { what, count: n }),
    }
}

/// Decodes the payload of format `version` field by field, in the order of
/// its [`wire`] structs ([`wire::WireTablesV3`] and the older ones), into
/// `t` in place (so that no `Tables` is built on
/// the stack), checking every count before filling anything. Every field of
/// `t` is overwritten.
fn decode_payload(mut b: &[u8], version: u16, t: &mut Tables) -> Result<(), TablesError> {
    let b = &mut b;
    t.params = match version {
        1 => take::<WireParamsV1>(b)?.into(),
        2 => take::<WireParamsV2>(b)?.into(),
        _ => take::<WireParamsV3>(b)?.into(),
    };
    // Filled element by element: heapless vectors' `FromIterator` has a
    // panic path, and a `Group` is built in its slot, not on the stack.
    t.levels.clear();
    t.capacity_thresholds_bps.clear();
    t.ports.clear();
    t.groups.clear();
    t.queue_thresholds.clear();
    let over = |what| TablesError::TooMany {
        what,
        count: u64::MAX,
    };
    for _ in 0..take_len(b, Count::Levels, MAX_LEVELS)? {
        t.levels.push(take(b)?).map_err(|_| over(Count::Levels))?;
    }
    for _ in 0..take_len(b, Count::CapacityThresholds, MAX_LEVELS)? {
        t.capacity_thresholds_bps
            .push(take(b)?)
            .map_err(|_| over(Count::CapacityThresholds))?;
    }
    for _ in 0..take_len(b, Count::Ports, MAX_PORTS)? {
        let p: WirePortV1 = take(b)?;
        t.ports.push(p.into()).map_err(|_| over(Count::Ports))?;
    }
    for _ in 0..take_len(b, Count::Groups, MAX_GROUPS)? {
        let id: u16 = take(b)?;
        t.groups
            .push(Group {
                id: GroupId(id),
                candidates: heapless::Vec::new(),
            })
            .map_err(|_| over(Count::Groups))?;
        let g = t.groups.last_mut().ok_or(over(Count::Groups))?;
        for _ in 0..take_len(b, Count::Candidates, MAX_CANDIDATES)? {
            let c: WireCandidateV1 = take(b)?;
            g.candidates
                .push(c.into())
                .map_err(|_| over(Count::Candidates))?;
        }
    }
    let tables = if version == 1 {
        0
    } else {
        take_len(b, Count::QueueTables, MAX_QUEUE_TABLES)?
    };
    for _ in 0..tables {
        let mut q = QueueThresholds::default();
        for _ in 0..take_len(b, Count::Ports, MAX_PORTS)? {
            let p: u8 = take(b)?;
            q.ports.push(PortId(p)).map_err(|_| over(Count::Ports))?;
        }
        for _ in 0..take_len(b, Count::Levels, MAX_LEVELS)? {
            q.bytes.push(take(b)?).map_err(|_| over(Count::Levels))?;
        }
        t.queue_thresholds
            .push(q)
            .map_err(|_| over(Count::QueueTables))?;
    }
    if !b.is_empty() {
        return Err(FormatError::TrailingBytes.into());
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::{build_tables, BuildOptions, Topology};
    use alloc::vec::Vec;
    use lcmp_decide::tables::Candidate;
    use lcmp_decide::{Params, Pick, PortConfig};
    use quickcheck::quickcheck;
    use wire::{WireTablesV1, WireTablesV2, WireTablesV3};

    /// The version-3 payload of `t`, from the declarative wire struct.
    fn payload_v3(t: &Tables) -> Vec<u8> {
        postcard::to_allocvec(&WireTablesV3::from(t)).expect("postcard")
    }

    fn dc1() -> Tables {
        let topo = Topology::embedded("testbed8").expect("embedded");
        build_tables(&topo, 1, &BuildOptions::default()).expect("build")
    }

    fn blob(t: &Tables, generation: u64) -> Vec<u8> {
        encode_blob_vec(t, generation).expect("encode")
    }

    /// Wraps an arbitrary payload in a correct header.
    fn wrap(payload: &[u8]) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(&BLOB_MAGIC);
        h.extend_from_slice(&BLOB_VERSION.to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&3u64.to_le_bytes());
        h.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        let crc = blob_crc(&h, payload);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(payload);
        h
    }

    /// Tables with every field away from its default: the tuned profile,
    /// an explicit queue-threshold table, a delay unit.
    fn tuned_wrapped() -> Tables {
        let topo = Topology::embedded("testbed8").expect("embedded");
        let opts = BuildOptions {
            queue_thresholds: Some(
                crate::parse_queue_thresholds("wrap32:5GB", 10).expect("thresholds"),
            ),
            ..BuildOptions::for_profile(lcmp_decide::Profile::Tuned)
        };
        build_tables(&topo, 1, &opts).expect("build")
    }

    /// The element-by-element encoder and decoder write and read exactly
    /// the bytes of the declarative wire structs (so the structs are the
    /// format), and the core's own serde layout plays no part.
    #[test]
    fn streaming_codec_matches_wire_structs() {
        let mut all = all_switches();
        all.push(tuned_wrapped());
        for t in &all {
            let want = payload_v3(t);
            let mut buf = alloc::vec![0u8; MAX_BLOB_PAYLOAD];
            let n = encode_payload(t, &mut buf).expect("encode");
            assert_eq!(&buf[..n], &want[..]);
            let w: WireTablesV3 = postcard::from_bytes(&want).expect("wire struct");
            assert_eq!(&Tables::from(&w), t);
            let mut back = Tables::new();
            assert_eq!(decode_payload(&want, 3, &mut back), Ok(()));
            assert_eq!(&back, t);
        }
    }

    /// The version-1 and version-2 readers read the bytes of their wire
    /// structs, filling what the version lacks with its documented value.
    #[test]
    fn older_readers_match_their_wire_structs() {
        let mut all = all_switches();
        all.push(tuned_wrapped());
        for t in &all {
            let w3 = WireTablesV3::from(t);
            let w2 = WireTablesV2 {
                params: w3.params.v2,
                levels: w3.levels.clone(),
                capacity_thresholds_bps: w3.capacity_thresholds_bps.clone(),
                ports: w3.ports.clone(),
                groups: w3.groups.clone(),
                queue_thresholds: w3.queue_thresholds.clone(),
            };
            let w1 = WireTablesV1 {
                params: w3.params.v2.v1,
                levels: w3.levels.clone(),
                capacity_thresholds_bps: w3.capacity_thresholds_bps.clone(),
                ports: w3.ports.clone(),
                groups: w3.groups.clone(),
            };
            let mut want2 = t.clone();
            want2.params.delay_unit_ticks = 0;
            let mut want1 = want2.clone();
            want1.params.band = u8::MAX;
            want1.queue_thresholds.clear();
            for (version, bytes, want, from_struct) in [
                (2, postcard::to_allocvec(&w2), &want2, Tables::from(&w2)),
                (1, postcard::to_allocvec(&w1), &want1, Tables::from(&w1)),
            ] {
                let bytes = bytes.expect("postcard");
                let mut back = Tables::new();
                assert_eq!(decode_payload(&bytes, version, &mut back), Ok(()));
                assert_eq!(&back, want, "v{version}");
                assert_eq!(&from_struct, want, "v{version}");
            }
        }
    }

    #[test]
    fn worst_case_fits() {
        let mut t = Tables::paper_defaults();
        for i in 0..MAX_PORTS as u8 {
            let _ = t.ports.push(PortConfig {
                id: PortId(i),
                rate_bps: u64::MAX,
                buffer_bytes: u64::MAX,
            });
        }
        for g in 0..MAX_GROUPS as u16 {
            let mut grp = Group {
                id: GroupId(u16::MAX - g),
                candidates: heapless::Vec::new(),
            };
            for c in 0..MAX_CANDIDATES as u8 {
                let _ = grp.candidates.push(Candidate {
                    port: PortId(c),
                    delay_units: u32::MAX,
                    capacity_bps: u64::MAX,
                });
            }
            let _ = t.groups.push(grp);
        }
        t.params.ticks_per_second = u32::MAX;
        t.params.idle_timeout_ticks = u32::MAX;
        let payload = payload_v3(&t);
        assert!(payload.len() <= MAX_BLOB_PAYLOAD, "{}", payload.len());
        assert_eq!(decode_blob(&blob(&t, 1)).map(|b| b.tables), Ok(t));
    }

    /// The declared payload's limit is inclusive and checked before the
    /// length, and a blob of the limit is exactly `MAX_BLOB_LEN` bytes.
    #[test]
    fn the_payload_limit_is_inclusive_and_checked_first() {
        let mut b = std::vec![0u8; MAX_BLOB_LEN];
        b[..4].copy_from_slice(&BLOB_MAGIC);
        b[4..6].copy_from_slice(&BLOB_VERSION.to_le_bytes());
        b[16..20].copy_from_slice(&(MAX_BLOB_PAYLOAD as u32).to_le_bytes());
        let at_the_limit = decode_blob(&b);
        assert!(
            matches!(
                at_the_limit,
                Err(TablesError::Format(FormatError::CrcMismatch { .. }))
            ),
            "{at_the_limit:?}"
        );
        b[16..20].copy_from_slice(&(MAX_BLOB_PAYLOAD as u32 + 1).to_le_bytes());
        assert_eq!(
            decode_blob(&b).err(),
            Some(TablesError::InputTooLarge {
                len: MAX_BLOB_PAYLOAD + 1,
                max: MAX_BLOB_PAYLOAD
            })
        );
    }

    #[test]
    fn every_single_bit_flip_is_rejected() {
        let b = blob(&dc1(), 9);
        for bit in 0..b.len() * 8 {
            let mut bad = b.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let err = decode_blob(&bad).expect_err("flip accepted");
            let byte = bit / 8;
            let ok = match byte {
                0..4 => err == TablesError::Format(FormatError::BadMagic),
                // Another readable version is caught by the CRC.
                4..6 => matches!(
                    err,
                    TablesError::Format(
                        FormatError::UnsupportedVersion(_) | FormatError::CrcMismatch { .. }
                    )
                ),
                6..8 => err == TablesError::Format(FormatError::ReservedBits),
                16..20 => matches!(
                    err,
                    TablesError::Format(FormatError::Truncated { .. })
                        | TablesError::Format(FormatError::LengthMismatch { .. })
                        | TablesError::InputTooLarge { .. }
                ),
                _ => matches!(err, TablesError::Format(FormatError::CrcMismatch { .. })),
            };
            assert!(ok, "bit {bit}: {err:?}");
        }
    }

    #[test]
    fn payload_errors() {
        let payload = payload_v3(&dc1());
        // Trailing byte after a valid payload.
        let mut p = payload.clone();
        p.push(0);
        assert_eq!(
            decode_blob(&wrap(&p)),
            Err(TablesError::Format(FormatError::TrailingBytes))
        );
        // Cut short inside the payload (header length adjusted, CRC valid).
        assert_eq!(
            decode_blob(&wrap(&payload[..payload.len() - 3])),
            Err(TablesError::Format(FormatError::MalformedPayload))
        );
        // Non-canonical varint: ticks_per_second's last varint byte gets
        // an over-long encoding. Build it by hand: the group id 2 (1 byte)
        // written as 0x82 0x00.
        let params_len = postcard::to_allocvec(&WireParamsV3::from(&dc1().params))
            .expect("postcard")
            .len();
        let mut levels_at = params_len;
        // levels: count + 10 bytes; thresholds: count + 10 varints.
        assert_eq!(payload[levels_at], 10);
        levels_at += 1 + 10;
        let mut noncanon = payload[..levels_at].to_vec();
        noncanon.extend_from_slice(&[0x8A, 0x00]); // 10, over-long
        noncanon.extend_from_slice(&payload[levels_at + 1..]);
        assert_eq!(
            decode_blob(&wrap(&noncanon)),
            Err(TablesError::Format(FormatError::NonCanonical))
        );
        // Oversize counts: 17 levels, 65 groups.
        let mut lv = payload[..params_len].to_vec();
        lv.push(17);
        lv.extend_from_slice(&[1; 17]);
        assert_eq!(
            decode_blob(&wrap(&lv)),
            Err(TablesError::TooMany {
                what: Count::Levels,
                count: 17
            })
        );
        let mut t = Tables::paper_defaults();
        t.groups.clear();
        let empty = payload_v3(&t);
        // The last two bytes are the group count and the queue-table count.
        let mut g = empty[..empty.len() - 2].to_vec();
        g.push(65);
        assert_eq!(
            decode_blob(&wrap(&g)),
            Err(TablesError::TooMany {
                what: Count::Groups,
                count: 65
            })
        );
        let mut q = empty[..empty.len() - 1].to_vec();
        q.push(5);
        assert_eq!(
            decode_blob(&wrap(&q)),
            Err(TablesError::TooMany {
                what: Count::QueueTables,
                count: 5
            })
        );
        // Valid encoding of invalid tables: the core's error.
        let mut bad = dc1();
        bad.groups[0].candidates[0].port = PortId(50);
        let p = payload_v3(&bad);
        assert!(matches!(
            decode_blob(&wrap(&p)),
            Err(TablesError::Core(lcmp_decide::Error::UnknownPort { .. }))
        ));
        assert!(matches!(
            encode_blob_vec(&bad, 1),
            Err(TablesError::Core(_))
        ));
        assert_eq!(
            encode_blob(&dc1(), 1, &mut [0u8; 30]),
            Err(TablesError::Format(FormatError::BufferTooSmall))
        );
    }

    /// Valid tables of different sizes: every switch of testbed8 and bso13.
    fn all_switches() -> Vec<Tables> {
        let mut out = Vec::new();
        for (name, n) in [("testbed8", 8u16), ("bso13", 13)] {
            let topo = Topology::embedded(name).expect("embedded");
            for s in 1..=n {
                out.push(build_tables(&topo, s, &BuildOptions::default()).expect("build"));
            }
        }
        out
    }

    #[test]
    fn header_errors_leave_the_scratch_untouched() {
        let tables = all_switches();
        let b = blob(&tables[0], 4);
        let mut bad_crc = b.clone();
        *bad_crc.last_mut().expect("payload") ^= 1;
        let mut bad_magic = b.clone();
        bad_magic[0] = b'X';
        for bad in [&b[..10], &b[..b.len() - 1], &bad_crc[..], &bad_magic[..]] {
            let mut scratch = tables[5].clone();
            assert!(decode_blob_into(bad, &mut scratch).is_err());
            assert_eq!(scratch, tables[5]);
        }
        let mut scratch = tables[5].clone();
        assert_eq!(decode_blob_into(&b, &mut scratch), Ok(4));
        assert_eq!(scratch, tables[0]);
    }

    quickcheck! {
        /// Decoding into memory that held other tables equals the by-value
        /// decode (same tables, same generation, same error), on valid
        /// blobs and on damaged ones.
        fn decode_into_equals_decode(pick: (u8, u8), generation: u64, edits: Vec<(u16, u8)>) -> bool {
            // Up to two edits: a third of the blobs are intact, and most
            // damaged ones get past the first fields.
            let edits = &edits[..edits.len().min(usize::from(pick.0 / 3 % 3))];
            let all = all_switches();
            let t = &all[usize::from(pick.0) % all.len()];
            let dirty = &all[usize::from(pick.1) % all.len()];
            let clean = edits.is_empty();
            let b = if clean {
                blob(t, generation)
            } else {
                // Damage the payload, not the CRC: payload errors, and
                // valid blobs of other tables.
                let mut p = payload_v3(t);
                for &(at, v) in edits {
                    let n = p.len();
                    p[usize::from(at) % n] = v;
                }
                wrap(&p)
            };
            let mut scratch = dirty.clone();
            let into = decode_blob_into(&b, &mut scratch).map(|g| (g, scratch));
            let by_value = decode_blob(&b).map(|x| (x.generation, x.tables));
            into == by_value && (!clean || into == Ok((generation, t.clone())))
        }

        fn canonical_sizes_match_postcard(v: u64, w: (u32, u32, u32, u32), t: (u32, u32, u8, bool), unit: u32) -> bool {
            let mut p = Params::PAPER;
            p.weights.alpha = w.0;
            p.weights.w_ql = w.1;
            p.ticks_per_second = w.2;
            p.idle_timeout_ticks = w.3;
            p.weights.beta = t.0;
            p.weights.w_dp = t.1;
            p.cut = t.2;
            p.delay_unit_ticks = unit;
            if t.3 {
                p.pick = [Pick::CapacityWeighted, Pick::ScaledHash]
                    [usize::from(t.2 % 2)];
            }
            let p = WireParamsV3::from(&p);
            let port = WirePortV1::from(&PortConfig { id: PortId(t.2), rate_bps: v, buffer_bytes: v / 3 });
            let cand = WireCandidateV1::from(&Candidate { port: PortId(1), delay_units: w.0, capacity_bps: v });
            let len = |x: &dyn Fn() -> Vec<u8>| x().len();
            len(&|| postcard::to_allocvec(&v).unwrap_or_default()) == v.canonical_size()
                && len(&|| postcard::to_allocvec(&p).unwrap_or_default()) == p.canonical_size()
                && len(&|| postcard::to_allocvec(&p.v2).unwrap_or_default()) == p.v2.canonical_size()
                && len(&|| postcard::to_allocvec(&p.v2.v1).unwrap_or_default()) == p.v2.v1.canonical_size()
                && len(&|| postcard::to_allocvec(&port).unwrap_or_default()) == port.canonical_size()
                && len(&|| postcard::to_allocvec(&cand).unwrap_or_default()) == cand.canonical_size()
                && len(&|| postcard::to_allocvec(&(w.1 as u16)).unwrap_or_default())
                    == (w.1 as u16).canonical_size()
        }

        fn decode_never_panics_and_round_trips(bytes: Vec<u8>) -> bool {
            for input in [bytes.clone(), wrap(&bytes)] {
                if let Ok(b) = decode_blob(&input) {
                    if encode_blob_vec(&b.tables, b.generation).ok() != Some(input) {
                        return false;
                    }
                }
            }
            true
        }

        fn mutated_payloads_never_panic(edits: Vec<(u16, u8)>) -> bool {
            let mut p = payload_v3(&dc1());
            for (at, v) in edits {
                let n = p.len().max(1);
                if let Some(b) = p.get_mut(usize::from(at) % n) { *b = v; }
            }
            let input = wrap(&p);
            match decode_blob(&input) {
                Ok(b) => encode_blob_vec(&b.tables, b.generation).ok() == Some(input),
                Err(_) => true,
            }
        }
    }
}
