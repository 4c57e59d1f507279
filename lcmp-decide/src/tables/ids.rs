//! Identifiers and the limits that size every table (no other module of
//! the crate is imported here).

/// Most levels in a level-score, capacity-threshold or queue-threshold
/// vector (`N <= 16`).
pub const MAX_LEVELS: usize = 16;
/// Most candidates (next hops) in one route group.
pub const MAX_CANDIDATES: usize = 16;
/// Most route groups (destinations) in one table set.
pub const MAX_GROUPS: usize = 64;
/// Most ports in one table set (port ids are `0..MAX_PORTS`).
pub const MAX_PORTS: usize = 64;
/// Group ids below this are found by direct index (one load) on the packet
/// path; larger ids by binary search over at most [`MAX_GROUPS`] groups.
pub const DIRECT_GROUP_IDS: usize = 256;
/// Most explicit queue-threshold tables in one table set (each may serve
/// any number of ports).
pub const MAX_QUEUE_TABLES: usize = 4;

/// A port id (`0..MAX_PORTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct PortId(pub u8);

/// A route-group id: the destination (for example a DC number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct GroupId(pub u16);

/// Bit `port` of a port set, or 0 for ports of 64 and above.
pub(crate) fn port_bit(port: PortId) -> u64 {
    1u64.checked_shl(u32::from(port.0)).unwrap_or(0)
}
