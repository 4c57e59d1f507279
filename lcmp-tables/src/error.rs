//! The crate's one error type.

use core::fmt;

/// Which counted sequence of a blob or an encoded trace is too long.
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
    /// Events of an encoded trace (at most [`crate::replay::MAX_TRACE_EVENTS`]).
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

/// Everything that can go wrong in `lcmp-tables`.
///
/// Every variant is `Copy` and carries numbers, never strings, so the type
/// works in `no_std` firmware; the `lcmp` tool prints it in one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TablesError {
    /// The decision core rejected the tables (see [`lcmp_decide::Error`]).
    Core(lcmp_decide::Error),
    /// No DC has this name.
    UnknownDcName,
    /// No DC has this id.
    UnknownDc(u16),
    /// No embedded topology has this name.
    UnknownTopology,
    /// The switch has no port with this number.
    NoSuchPort(u8),
    /// A flow's source and destination addresses differ in family.
    MixedAddressFamilies,
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
    /// A sequence is longer than its compile-time capacity (named by
    /// [`Count`]).
    TooMany {
        /// Which sequence.
        what: Count,
        /// How long it is (or claims to be).
        count: u64,
    },
    /// Level count outside `1..=16`.
    InvalidLevelCount(usize),
    /// A capacity-threshold fraction list is not strictly increasing after
    /// conversion, or does not have one entry per level.
    InvalidThresholdFractions,
    /// A delay unit of zero microseconds.
    ZeroDelayUnit,
    /// Input longer than the parser accepts.
    InputTooLarge {
        /// Its length, bytes.
        len: usize,
        /// The limit, bytes.
        max: usize,
    },
    /// JSON that does not parse or does not match the schema.
    Json {
        /// 1-based line (0 if unknown).
        line: usize,
        /// 1-based column (0 if unknown).
        column: usize,
    },
    /// A fraction that is not a decimal number or percentage.
    BadFraction,
    /// A fraction outside `0..=1` (`0 %..=100 %`).
    FractionOutOfRange,
    /// Not a byte count (digits with an optional `KB`, `MB`, `GB`, `KiB`,
    /// `MiB` or `GiB`), or one beyond `u64`.
    BadByteCount,
    /// No profile has this name (see [`lcmp_decide::Profile`]).
    UnknownProfile,
    /// A CSV trace line is malformed.
    Trace {
        /// 1-based line number.
        line: u32,
        /// What is wrong.
        fault: TraceFault,
    },
    /// A blob or encoded trace is shorter than its header.
    Truncated {
        /// Bytes present.
        len: usize,
        /// Bytes needed.
        need: usize,
    },
    /// A blob or encoded trace does not start with its magic bytes.
    BadMagic,
    /// A blob or encoded trace of a format version this build cannot read.
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
    /// Replaying event `index` failed in the core (for example a sample for
    /// a port beyond the decider's capacity).
    Replay {
        /// 0-based event index.
        index: u32,
        /// The core's error.
        error: lcmp_decide::Error,
    },
}

impl From<lcmp_decide::Error> for TablesError {
    fn from(e: lcmp_decide::Error) -> Self {
        TablesError::Core(e)
    }
}

impl fmt::Display for TablesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TablesError::Core(e) => write!(f, "invalid tables: {e}"),
            TablesError::UnknownDcName => f.write_str("unknown DC name"),
            TablesError::UnknownDc(id) => write!(f, "unknown DC id {id}"),
            TablesError::UnknownTopology => {
                f.write_str("unknown topology (embedded: testbed8, bso13; or a JSON file)")
            }
            TablesError::NoSuchPort(p) => write!(f, "the switch has no port {p}"),
            TablesError::MixedAddressFamilies => {
                f.write_str("source and destination addresses must both be IPv4 or both IPv6")
            }
            TablesError::DuplicateDcId(id) => write!(f, "DC id {id} is listed twice"),
            TablesError::DuplicateDcName(id) => {
                write!(f, "DC {id} has the same name as an earlier DC")
            }
            TablesError::EmptyDcName(id) => write!(f, "DC {id} has an empty name"),
            TablesError::SelfLink(id) => write!(f, "a link joins DC {id} to itself"),
            TablesError::DuplicateLink { a, b } => {
                write!(f, "two links join DC {a} and DC {b}")
            }
            TablesError::ZeroLinkCapacity { a, b } => {
                write!(f, "the link DC {a} - DC {b} has zero capacity")
            }
            TablesError::ZeroBuffer => f.write_str("the port buffer is zero bytes"),
            TablesError::TooManyPorts { switch, count } => write!(
                f,
                "DC {switch} has {count} links, more than the {} ports a table set holds",
                lcmp_decide::tables::MAX_PORTS
            ),
            TablesError::OversizeGroup { group, count } => write!(
                f,
                "group {group} would have {count} candidates, more than {}",
                lcmp_decide::tables::MAX_CANDIDATES
            ),
            TablesError::TooMany { what, count } => {
                write!(
                    f,
                    "too many {what}: {count} exceeds the compile-time capacity"
                )
            }
            TablesError::InvalidLevelCount(n) => {
                write!(f, "level count {n} is outside 1..=16")
            }
            TablesError::InvalidThresholdFractions => f.write_str(
                "capacity-threshold fractions must be one per level and strictly increasing",
            ),
            TablesError::ZeroDelayUnit => f.write_str("the delay unit must be at least 1 us"),
            TablesError::InputTooLarge { len, max } => {
                write!(f, "input of {len} bytes exceeds the limit of {max} bytes")
            }
            TablesError::Json { line, column } => {
                write!(
                    f,
                    "invalid JSON or schema mismatch at line {line}, column {column}"
                )
            }
            TablesError::BadFraction => f.write_str("not a fraction (write e.g. 0.8 or 80%)"),
            TablesError::FractionOutOfRange => f.write_str("fraction outside 0..=1 (0%..=100%)"),
            TablesError::BadByteCount => {
                f.write_str("not a byte count (write e.g. 5GB, 128MiB or 5000000000)")
            }
            TablesError::UnknownProfile => f.write_str("unknown profile (paper, tuned)"),
            TablesError::Trace { line, fault } => write!(f, "trace line {line}: {fault}"),
            TablesError::Truncated { len, need } => {
                write!(f, "truncated: {len} bytes, at least {need} needed")
            }
            TablesError::BadMagic => f.write_str("bad magic bytes: not an LCMP blob or trace"),
            TablesError::UnsupportedVersion(v) => {
                write!(f, "unsupported format version {v}")
            }
            TablesError::ReservedBits => f.write_str("reserved header bits are set"),
            TablesError::LengthMismatch { declared, actual } => write!(
                f,
                "length mismatch: header says {declared} payload bytes, {actual} follow"
            ),
            TablesError::CrcMismatch { stored, computed } => write!(
                f,
                "CRC mismatch: header has {stored:#010x}, bytes give {computed:#010x}"
            ),
            TablesError::MalformedPayload => f.write_str("malformed payload"),
            TablesError::TrailingBytes => f.write_str("trailing bytes after the payload"),
            TablesError::NonCanonical => {
                f.write_str("payload is not canonically encoded (would not re-encode identically)")
            }
            TablesError::BufferTooSmall => f.write_str("output buffer too small"),
            TablesError::Replay { index, error } => {
                write!(f, "replay event {index}: {error}")
            }
        }
    }
}

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
            TablesError::Trace {
                line: 7,
                fault: TraceFault::TimeWentBackwards,
            },
            TablesError::CrcMismatch {
                stored: 1,
                computed: 2,
            },
        ];
        for e in errors {
            let s = e.to_string();
            assert!(!s.is_empty() && !s.contains('\n'), "{s}");
        }
        assert_eq!(
            TablesError::Trace {
                line: 7,
                fault: TraceFault::Kind
            }
            .to_string(),
            "trace line 7: unknown event kind (packet, sample or link)"
        );
    }
}
