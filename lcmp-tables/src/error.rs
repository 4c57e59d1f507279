//! The crate's errors: one enum per domain, each a variant of the thin
//! umbrella [`TablesError`] that fallible functions return (`From` turns
//! each domain error into it, so `?` works across domains).
//!
//! | domain | error | from |
//! | --- | --- | --- |
//! | blob and encoded-trace bytes | [`FormatError`] | [`crate::blob`], [`crate::replay::TraceReader`], [`crate::replay::encode_trace`] |
//! | topology, DC and port references, tables built from them | [`TopologyError`] | `Topology::validate`, `build_tables`, scenarios |
//! | CSV traces, flows, replay | [`TraceError`] | `parse_csv`, [`crate::replay::replay`], scenarios |
//! | table-building options and their text forms | [`OptionError`] | [`crate::Fraction`], `parse_bytes`, `parse_profile`, `build_tables` |
//! | JSON (`alloc`) | `JsonError`, with serde_json's message | `Topology::from_json`, `Scenario::from_json` |
//!
//! Two limits cross the domains and sit in the umbrella itself:
//! [`TablesError::TooMany`] (a sequence over its capacity, named by
//! [`Count`]) and [`TablesError::InputTooLarge`]; and the core's own
//! rejection of tables is [`TablesError::Core`]. Parsers whose every
//! failure lies in one domain return that domain's error
//! ([`crate::Fraction::parse`], `parse_bytes`, `parse_profile`:
//! [`OptionError`]; `DcRef::resolve`: [`TopologyError`]).
//!
//! The domain errors are `Copy` and carry numbers, never strings, so they
//! work in `no_std` firmware; only the JSON error (`alloc`) carries text.
//! Every `Display` is one line.

use core::fmt;

/// Which counted sequence is too long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Count {
    /// Level scores (at most [`lcmp_decide::tables::MAX_LEVELS`]).
    Levels,
    /// Capacity thresholds (at most [`lcmp_decide::tables::MAX_LEVELS`]).
    CapacityThresholds,
    /// Ports (at most [`lcmp_decide::tables::MAX_PORTS`]).
    Ports,
    /// Route groups (at most [`lcmp_decide::tables::MAX_GROUPS`]).
    Groups,
    /// Candidates of one group (at most
    /// [`lcmp_decide::tables::MAX_CANDIDATES`]).
    Candidates,
    /// Distinct port rates, i.e. trend tables (at most
    /// [`crate::MAX_RATE_BUCKETS`]).
    RateBuckets,
    /// Events of a trace (at most [`crate::replay::MAX_TRACE_EVENTS`]) or
    /// samples of a scenario (at most `MAX_SCENARIO_SAMPLES`).
    Events,
    /// Data centres of a topology (at most `MAX_DCS`, 1024).
    Dcs,
    /// Links of a topology (at most `MAX_LINKS`, 8192).
    Links,
    /// Explicit queue-threshold tables (at most
    /// [`lcmp_decide::tables::MAX_QUEUE_TABLES`]).
    QueueTables,
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Count::Levels => "level scores",
            Count::CapacityThresholds => "capacity thresholds",
            Count::Ports => "ports",
            Count::Groups => "route groups",
            Count::Candidates => "candidates in a group",
            Count::RateBuckets => "distinct port rates",
            Count::Events => "trace events",
            Count::Dcs => "data centres",
            Count::Links => "links",
            Count::QueueTables => "queue-threshold tables",
        })
    }
}

/// A blob or an encoded trace whose bytes are not a valid encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FormatError {
    /// Shorter than its header (or than the header declares).
    Truncated {
        /// Bytes present.
        len: usize,
        /// Bytes needed.
        need: usize,
    },
    /// Does not start with its magic bytes.
    BadMagic,
    /// A format version this build cannot read.
    UnsupportedVersion(u16),
    /// Reserved header bits are set.
    ReservedBits,
    /// The header's payload length does not match the bytes that follow.
    LengthMismatch {
        /// Length in the header.
        declared: u64,
        /// Bytes actually following the header.
        actual: u64,
    },
    /// The CRC in the header does not match the header and payload.
    CrcMismatch {
        /// The CRC in the header.
        stored: u32,
        /// The CRC of the bytes.
        computed: u32,
    },
    /// The payload is not a valid postcard encoding of the expected type.
    MalformedPayload,
    /// The payload has bytes after its last field.
    TrailingBytes,
    /// The payload decodes, but not from its canonical encoding (for example
    /// an over-long varint), so it would not re-encode to the same bytes.
    NonCanonical,
    /// The output buffer is too small.
    BufferTooSmall,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FormatError::Truncated { len, need } => {
                write!(f, "truncated: {len} bytes, at least {need} needed")
            }
            FormatError::BadMagic => f.write_str("bad magic bytes: not an LCMP blob or trace"),
            FormatError::UnsupportedVersion(v) => {
                write!(f, "unsupported format version {v}")
            }
            FormatError::ReservedBits => f.write_str("reserved header bits are set"),
            FormatError::LengthMismatch { declared, actual } => write!(
                f,
                "length mismatch: header says {declared} payload bytes, {actual} follow"
            ),
            FormatError::CrcMismatch { stored, computed } => write!(
                f,
                "CRC mismatch: header has {stored:#010x}, bytes give {computed:#010x}"
            ),
            FormatError::MalformedPayload => f.write_str("malformed payload"),
            FormatError::TrailingBytes => f.write_str("trailing bytes after the payload"),
            FormatError::NonCanonical => {
                f.write_str("payload is not canonically encoded (would not re-encode identically)")
            }
            FormatError::BufferTooSmall => f.write_str("output buffer too small"),
        }
    }
}

impl core::error::Error for FormatError {}

/// A signed blob that must not be installed, or a key that cannot be
/// trusted (`blob::signed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SignatureError {
    /// The signature does not verify under the trusted key the blob names:
    /// something changed since it was signed, or another key signed it.
    BadSignature,
    /// No trusted key has this key id.
    UnknownKey(u64),
    /// The generation is not newer than the installed one (a rollback to
    /// older tables, or a replay of the installed blob).
    Rollback {
        /// The installed generation.
        installed: u64,
        /// The blob's generation.
        generation: u64,
    },
    /// An unsigned blob where only signed blobs are accepted.
    Unsigned,
    /// A public key that is not a valid Ed25519 key (not a canonical point,
    /// or one of small order).
    BadKey,
    /// Two trusted keys with the same key id.
    DuplicateKeyId(u64),
    /// The blob was signed for another device (switch or topology): the
    /// mix-and-match of one switch's tables onto another.
    WrongScope {
        /// The switch the blob names.
        switch: u16,
        /// This device's switch.
        expected: u16,
    },
    /// The blob's signed expiry has passed by the device's clock (an
    /// update withheld, or a blob replayed too late).
    Expired {
        /// The signed expiry, Unix seconds.
        not_after: u64,
        /// The device's time, Unix seconds.
        now: u64,
    },
    /// A version 1 envelope, which carries no scope: refused, since it
    /// would install on any device.
    Unscoped,
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SignatureError::BadSignature => {
                f.write_str("bad signature: the blob was changed or signed by another key")
            }
            SignatureError::UnknownKey(id) => {
                write!(f, "signed by key id {id:016x}, which is not trusted")
            }
            SignatureError::Rollback {
                installed,
                generation,
            } => write!(
                f,
                "rollback: generation {generation} is not newer than the installed {installed}"
            ),
            SignatureError::Unsigned => {
                f.write_str("unsigned blob: only signed blobs are accepted")
            }
            SignatureError::BadKey => f.write_str("not a valid Ed25519 public key"),
            SignatureError::DuplicateKeyId(id) => {
                write!(f, "two trusted keys have the key id {id:016x}")
            }
            SignatureError::WrongScope { switch, expected } => write!(
                f,
                "wrong scope: signed for switch {switch} or another topology, this is switch {expected}"
            ),
            SignatureError::Expired { not_after, now } => write!(
                f,
                "expired: signed valid until {not_after} (Unix s), now {now}"
            ),
            SignatureError::Unscoped => f.write_str(
                "signed envelope version 1 has no scope: re-sign with `lcmp tables sign --topology --switch`",
            ),
        }
    }
}

impl core::error::Error for SignatureError {}

/// A topology that is not valid, a reference to a DC, topology or port it
/// does not have, or tables it cannot give a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TopologyError {
    /// No embedded topology has this name.
    UnknownTopology,
    /// No DC has this name.
    UnknownDcName,
    /// No DC has this id.
    UnknownDc(u16),
    /// The switch has no port with this number.
    NoSuchPort(u8),
    /// Two DCs share an id.
    DuplicateDcId(u16),
    /// Two DCs share a name (the id is the second one's).
    DuplicateDcName(u16),
    /// A DC name is empty.
    EmptyDcName(u16),
    /// A link joins a DC to itself.
    SelfLink(u16),
    /// Two links join the same pair of DCs.
    DuplicateLink {
        /// One end.
        a: u16,
        /// The other end.
        b: u16,
    },
    /// A link has zero capacity.
    ZeroLinkCapacity {
        /// One end.
        a: u16,
        /// The other end.
        b: u16,
    },
    /// The topology's port buffer is zero bytes.
    ZeroBuffer,
    /// A switch has more links than [`lcmp_decide::tables::MAX_PORTS`].
    TooManyPorts {
        /// The switch (DC id).
        switch: u16,
        /// How many links it has.
        count: usize,
    },
    /// A group would have more candidates than
    /// [`lcmp_decide::tables::MAX_CANDIDATES`].
    OversizeGroup {
        /// The group (destination DC id).
        group: u16,
        /// How many candidates it would have.
        count: usize,
    },
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TopologyError::UnknownTopology => {
                f.write_str("unknown topology (embedded: testbed8, bso13; or a JSON file)")
            }
            TopologyError::UnknownDcName => f.write_str("unknown DC name"),
            TopologyError::UnknownDc(id) => write!(f, "unknown DC id {id}"),
            TopologyError::NoSuchPort(p) => write!(f, "the switch has no port {p}"),
            TopologyError::DuplicateDcId(id) => write!(f, "DC id {id} is listed twice"),
            TopologyError::DuplicateDcName(id) => {
                write!(f, "DC {id} has the same name as an earlier DC")
            }
            TopologyError::EmptyDcName(id) => write!(f, "DC {id} has an empty name"),
            TopologyError::SelfLink(id) => write!(f, "a link joins DC {id} to itself"),
            TopologyError::DuplicateLink { a, b } => {
                write!(f, "two links join DC {a} and DC {b}")
            }
            TopologyError::ZeroLinkCapacity { a, b } => {
                write!(f, "the link DC {a} - DC {b} has zero capacity")
            }
            TopologyError::ZeroBuffer => f.write_str("the port buffer is zero bytes"),
            TopologyError::TooManyPorts { switch, count } => write!(
                f,
                "DC {switch} has {count} links, more than the {} ports a table set holds",
                lcmp_decide::tables::MAX_PORTS
            ),
            TopologyError::OversizeGroup { group, count } => write!(
                f,
                "group {group} would have {count} candidates, more than {}",
                lcmp_decide::tables::MAX_CANDIDATES
            ),
        }
    }
}

impl core::error::Error for TopologyError {}

/// What is wrong with one line of a CSV trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TraceFault {
    /// The line does not have the field count its event kind needs.
    FieldCount,
    /// The first field is not a time in microseconds.
    Time,
    /// The second field is not `packet`, `sample` or `link`.
    Kind,
    /// An address is not an IPv4 or IPv6 address, or the two differ in family.
    Address,
    /// A port (L4 or switch) or the protocol is out of range.
    Number,
    /// `dst_dc` is neither a DC id nor a known DC name.
    Dc,
    /// A link state is not `up` or `down`.
    LinkState,
    /// The time is earlier than the previous event's.
    TimeWentBackwards,
}

impl fmt::Display for TraceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TraceFault::FieldCount => "wrong number of fields for the event kind",
            TraceFault::Time => "bad time (microseconds, unsigned integer)",
            TraceFault::Kind => "unknown event kind (packet, sample or link)",
            TraceFault::Address => "bad address (IPv4 or IPv6, both of one family)",
            TraceFault::Number => "number out of range",
            TraceFault::Dc => "unknown destination DC",
            TraceFault::LinkState => "link state must be up or down",
            TraceFault::TimeWentBackwards => "time earlier than the previous event",
        })
    }
}

/// A CSV trace line, a flow, or a replayed event that is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TraceError {
    /// A CSV trace line is malformed.
    Csv {
        /// 1-based line number.
        line: u32,
        /// What is wrong.
        fault: TraceFault,
    },
    /// A flow's source and destination addresses differ in family.
    MixedAddressFamilies,
    /// Replaying event `index` failed in the core (for example a sample for
    /// a port beyond the decider's capacity).
    Replay {
        /// 0-based event index.
        index: u32,
        /// The core's error.
        error: lcmp_decide::Error,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TraceError::Csv { line, fault } => write!(f, "trace line {line}: {fault}"),
            TraceError::MixedAddressFamilies => {
                f.write_str("source and destination addresses must both be IPv4 or both IPv6")
            }
            TraceError::Replay { index, error } => {
                write!(f, "replay event {index}: {error}")
            }
        }
    }
}

impl core::error::Error for TraceError {}

/// A table-building option out of range, or its text form unreadable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum OptionError {
    /// Level count outside `1..=16`.
    InvalidLevelCount(usize),
    /// A capacity-threshold fraction list is not strictly increasing after
    /// conversion, or does not have one entry per level.
    InvalidThresholdFractions,
    /// A delay unit of zero microseconds.
    ZeroDelayUnit,
    /// A fraction that is not a decimal number or percentage.
    BadFraction,
    /// A fraction outside `0..=1` (`0 %..=100 %`).
    FractionOutOfRange,
    /// Not a byte count (digits with an optional `KB`, `MB`, `GB`, `KiB`,
    /// `MiB` or `GiB`), or one beyond `u64`.
    BadByteCount,
    /// No profile has this name (see [`lcmp_decide::Profile`]).
    UnknownProfile,
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            OptionError::InvalidLevelCount(n) => {
                write!(f, "level count {n} is outside 1..=16")
            }
            OptionError::InvalidThresholdFractions => f.write_str(
                "capacity-threshold fractions must be one per level and strictly increasing",
            ),
            OptionError::ZeroDelayUnit => f.write_str("the delay unit must be at least 1 us"),
            OptionError::BadFraction => f.write_str("not a fraction (write e.g. 0.8 or 80%)"),
            OptionError::FractionOutOfRange => f.write_str("fraction outside 0..=1 (0%..=100%)"),
            OptionError::BadByteCount => {
                f.write_str("not a byte count (write e.g. 5GB, 128MiB or 5000000000)")
            }
            OptionError::UnknownProfile => f.write_str("unknown profile (paper, tuned)"),
        }
    }
}

impl core::error::Error for OptionError {}

/// JSON that does not parse or does not match the schema, with
/// serde_json's own description (which names the offending field).
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// 1-based line (0 if unknown).
    pub line: usize,
    /// 1-based column (0 if unknown).
    pub column: usize,
    /// serde_json's message (its `Display`, one line).
    pub message: alloc::string::String,
}

#[cfg(feature = "alloc")]
impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> Self {
        JsonError {
            line: e.line(),
            column: e.column(),
            message: alloc::string::ToString::to_string(&e),
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON or schema mismatch at line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

#[cfg(all(feature = "alloc", feature = "defmt"))]
impl defmt::Format for JsonError {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "invalid JSON or schema mismatch at line {=usize}, column {=usize}: {=str}",
            self.line,
            self.column,
            self.message.as_str()
        );
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for JsonError {}

/// Everything that can go wrong in `lcmp-tables`: a domain error, one of
/// the two limits every domain shares, or the core's rejection of tables.
///
/// Without `alloc` every variant is a number-only domain error, so the type
/// works in `no_std` firmware; the `lcmp` tool prints it in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TablesError {
    /// The decision core rejected the tables (see [`lcmp_decide::Error`]).
    Core(lcmp_decide::Error),
    /// A blob or encoded trace is not a valid encoding.
    Format(FormatError),
    /// A topology or a reference into one is wrong.
    Topology(TopologyError),
    /// A CSV trace, a flow or a replayed event is wrong.
    Trace(TraceError),
    /// A table-building option is out of range or unreadable.
    Options(OptionError),
    /// A signed blob failed verification, or a key cannot be trusted.
    Signature(SignatureError),
    /// A sequence is longer than its compile-time capacity (named by
    /// [`Count`]).
    TooMany {
        /// Which sequence.
        what: Count,
        /// How long it is (or claims to be).
        count: u64,
    },
    /// Input longer than the parser accepts.
    InputTooLarge {
        /// Its length, bytes.
        len: usize,
        /// The limit, bytes.
        max: usize,
    },
    /// JSON that does not parse or does not match the schema.
    #[cfg(feature = "alloc")]
    Json(JsonError),
}

impl From<lcmp_decide::Error> for TablesError {
    fn from(e: lcmp_decide::Error) -> Self {
        TablesError::Core(e)
    }
}

impl From<FormatError> for TablesError {
    fn from(e: FormatError) -> Self {
        TablesError::Format(e)
    }
}

impl From<TopologyError> for TablesError {
    fn from(e: TopologyError) -> Self {
        TablesError::Topology(e)
    }
}

impl From<TraceError> for TablesError {
    fn from(e: TraceError) -> Self {
        TablesError::Trace(e)
    }
}

impl From<SignatureError> for TablesError {
    fn from(e: SignatureError) -> Self {
        TablesError::Signature(e)
    }
}

impl From<OptionError> for TablesError {
    fn from(e: OptionError) -> Self {
        TablesError::Options(e)
    }
}

#[cfg(feature = "alloc")]
impl From<JsonError> for TablesError {
    fn from(e: JsonError) -> Self {
        TablesError::Json(e)
    }
}

#[cfg(feature = "alloc")]
impl From<serde_json::Error> for TablesError {
    fn from(e: serde_json::Error) -> Self {
        TablesError::Json(e.into())
    }
}

impl fmt::Display for TablesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TablesError::Core(e) => write!(f, "invalid tables: {e}"),
            TablesError::Format(e) => e.fmt(f),
            TablesError::Topology(e) => e.fmt(f),
            TablesError::Trace(e) => e.fmt(f),
            TablesError::Options(e) => e.fmt(f),
            TablesError::Signature(e) => e.fmt(f),
            TablesError::TooMany { what, count } => {
                write!(
                    f,
                    "too many {what}: {count} exceeds the compile-time capacity"
                )
            }
            TablesError::InputTooLarge { len, max } => {
                write!(f, "input of {len} bytes exceeds the limit of {max} bytes")
            }
            #[cfg(feature = "alloc")]
            TablesError::Json(e) => e.fmt(f),
        }
    }
}

/// The message of a nested error is part of [`TablesError`]'s own
/// `Display` (one line, for the `lcmp` tool and C callers), so `source()`
/// is `None`: a reporter that walks the source chain (`anyhow`, `eyre`)
/// prints each message once, not the inner one twice.
impl core::error::Error for TablesError {}

#[cfg(test)]
mod test {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn display_is_one_line() {
        let errors = [
            TablesError::Core(lcmp_decide::Error::EmptyGroup(3)),
            TablesError::TooMany {
                what: Count::Groups,
                count: 99,
            },
            TablesError::Trace(TraceError::Csv {
                line: 7,
                fault: TraceFault::TimeWentBackwards,
            }),
            TablesError::Format(FormatError::CrcMismatch {
                stored: 1,
                computed: 2,
            }),
        ];
        for e in errors {
            let s = e.to_string();
            assert!(!s.is_empty() && !s.contains('\n'), "{s}");
        }
        assert_eq!(
            TablesError::Trace(TraceError::Csv {
                line: 7,
                fault: TraceFault::Kind
            })
            .to_string(),
            "trace line 7: unknown event kind (packet, sample or link)"
        );
    }

    /// A nested error is reported once: in `Display`, not again as the
    /// source.
    #[test]
    fn nested_errors_are_reported_once() {
        use core::error::Error;
        let json = || serde_json::from_str::<u8>("x").expect_err("not JSON");
        let nested: [(TablesError, alloc::string::String); 6] = [
            (
                lcmp_decide::Error::EmptyGroup(3).into(),
                lcmp_decide::Error::EmptyGroup(3).to_string(),
            ),
            (
                FormatError::BadMagic.into(),
                FormatError::BadMagic.to_string(),
            ),
            (
                TopologyError::UnknownDc(9).into(),
                TopologyError::UnknownDc(9).to_string(),
            ),
            (
                TraceError::MixedAddressFamilies.into(),
                TraceError::MixedAddressFamilies.to_string(),
            ),
            (
                OptionError::ZeroDelayUnit.into(),
                OptionError::ZeroDelayUnit.to_string(),
            ),
            (
                TablesError::from(json()),
                JsonError::from(json()).to_string(),
            ),
        ];
        for (e, inner) in nested {
            let s = e.to_string();
            assert!(s.contains(&inner), "{s:?} lacks {inner:?}");
            assert!(e.source().is_none(), "{s}: source repeats the message");
        }
    }

    #[test]
    fn json_error_carries_serde_message() {
        let Err(e) = serde_json::from_str::<u8>("[1") else {
            panic!("parsed");
        };
        let detail = e.to_string();
        let err = TablesError::from(e);
        assert!(matches!(err, TablesError::Json(JsonError { line: 1, .. })));
        let s = err.to_string();
        assert!(s.starts_with("invalid JSON or schema mismatch at line 1, column "));
        assert!(s.ends_with(&alloc::format!(": {detail}")), "{s}");
        assert!(!s.contains('\n'), "{s}");
    }
}
