//! The crate's error type: everything that stops an export from being
//! built or written. (The interpreter's verdict on a set of entries is
//! its own type, [`crate::interp::InterpError`].)

use core::fmt;

/// Everything that can go wrong while building or writing a Tofino export.
/// Each variant names a configuration the ASIC cannot run, an input that the
/// core rejected, or an I/O failure of the command-line entry points.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The configuration hashes with MurmurHash3: Tofino has no murmur3 hash
    /// unit, so the export needs `HashAlgorithm::Crc32` (`--hash crc32`).
    Murmur3NotSupported,
    /// The tables pick with something other than
    /// [`lcmp_decide::Pick::ScaledHash`], the pick the data plane computes
    /// (one range match on the hash's top 16 bits): the paper's `hash % k`
    /// needs a modulo, the capacity-weighted pick a per-flow weight.
    PickNotSupported(lcmp_decide::Pick),
    /// The decision core rejected the tables.
    Core(lcmp_decide::Error),
    /// A group id does not fit the default address plan (`10.<group>.0.0/16`
    /// needs a group id of at most 255).
    GroupNotAddressable(u16),
    /// A value does not fit the width of the key field or action parameter it
    /// is written to (a bug in the model if it ever shows).
    ValueTooWide {
        /// Table, action or register.
        object: &'static str,
        /// Field or parameter.
        field: &'static str,
        /// Its width in bits.
        bits: u32,
    },
    /// An entry names a table, action or register the schema lacks, or has
    /// the wrong number of matches or parameters (a bug in the model).
    Schema(&'static str),
    /// The device port given for this core port is not below 512, or is
    /// shared with another LCMP port.
    DevPort(u8),
    /// A default route's prefix has host bits set, a length over 32, or
    /// there are more routes than `lcmp_route` holds (then `0/0`).
    Route(u32, u8),
    /// A default route names a device port of 512 or more.
    RoutePort(u16),
    /// A next hop names a device port of 512 or more or one named by another
    /// next hop, or a MAC address wider than 48 bits.
    NextHop(u16),
    /// A routed device port (an LCMP port's or a default route's) has no
    /// `--next-hop`: its packets would leave with made-up MACs.
    NoNextHop(u16),
    /// A step of `lcmp tofino compile` exited with a failure (its output
    /// is in the log).
    Compile {
        /// The step (`preprocess (cc -E)`, `compile`).
        step: &'static str,
        /// Its exit status, if it exited.
        status: Option<i32>,
        /// The log with its output.
        log: std::path::PathBuf,
    },
    /// A poll names a device port that is no LCMP port.
    PollPort(u16),
    /// The compile stamp file is not valid JSON of the documented shape.
    Stamps(serde_json::Error),
    /// A write does not fit the entries it is applied to (an insert of a
    /// present key, a modify or delete of an absent one) in this table.
    Update(&'static str),
    /// The congestion-state file is not valid JSON of the documented shape.
    State(serde_json::Error),
    /// The state names a port beyond the tables' port range.
    StatePort(u8),
    /// Reading or writing a file failed.
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The topology could not be loaded, or tables could not be built from
    /// it.
    Tables(lcmp_tables::TablesError),
    /// The switch names no DC of the topology.
    UnknownSwitch,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Murmur3NotSupported => f.write_str(
                "the Tofino export needs the CRC-32 ECMP hash (Tofino has no murmur3 unit): \
                 configure HashAlgorithm::Crc32 (--hash crc32)",
            ),
            Error::PickNotSupported(p) => write!(
                f,
                "the Tofino data plane picks with Pick::ScaledHash (a range match on the \
                 hash's top 16 bits), not Pick::{p:?}: set params.pick = ScaledHash"
            ),
            Error::Core(e) => write!(f, "invalid tables: {e}"),
            Error::GroupNotAddressable(g) => write!(
                f,
                "group {g} does not fit the address plan 10.<group>.0.0/16 (at most 255)"
            ),
            Error::ValueTooWide {
                object,
                field,
                bits,
            } => {
                write!(f, "{object}.{field}: value does not fit in {bits} bits")
            }
            Error::Schema(name) => write!(f, "internal: {name} does not fit the P4 schema"),
            Error::DevPort(p) => write!(
                f,
                "port {p}: its device port must be below 512 and not shared with another port"
            ),
            Error::Route(p, l) => write!(
                f,
                "default route {}/{l}: the prefix must have no host bits, a length of at \
                 most 32, and at most {} routes",
                core::net::Ipv4Addr::from_bits(*p),
                crate::schema::ROUTE_TABLE_SIZE
            ),
            Error::RoutePort(d) => write!(f, "default route to device port {d}: must be below 512"),
            Error::NextHop(d) => write!(
                f,
                "next hop of device port {d}: the port must be below 512 and named once, \
                 the MACs 48 bits"
            ),
            Error::NoNextHop(d) => write!(
                f,
                "device port {d} has no next hop: give --next-hop {d}=SRC_MAC,DST_MAC for every \
                 routed port (or --placeholder-next-hops in a lab)"
            ),
            Error::Compile { step, status, log } => {
                let code = status.map_or("a signal".to_string(), |c| format!("status {c}"));
                write!(f, "{step} failed ({code}): see {}", log.display())
            }
            Error::PollPort(d) => write!(f, "poll names device port {d}, which is no LCMP port"),
            Error::Stamps(e) => write!(f, "invalid compile stamps: {e}"),
            Error::Update(t) => write!(
                f,
                "{t}: the write does not fit the table's entries (insert of a present key, \
                 or modify or delete of an absent one)"
            ),
            Error::State(e) => write!(f, "invalid congestion state: {e}"),
            Error::StatePort(p) => write!(f, "congestion state names port {p}, out of range"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Tables(e) => write!(f, "topology: {e}"),
            Error::UnknownSwitch => f.write_str("the switch names no DC of the topology"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Core(e) => Some(e),
            Error::State(e) | Error::Stamps(e) => Some(e),
            Error::Tables(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<lcmp_decide::Error> for Error {
    fn from(e: lcmp_decide::Error) -> Self {
        Error::Core(e)
    }
}
