//! Replay traces: events, their compact encoding, the CSV form, the decision
//! digest and the one replay driver every frontend uses, one file each
//! (`codec`, `csv`, `digest`, `driver`; all re-exported here).
//!
//! A trace is a time-ordered list of [`TraceEvent`]s: packets, queue
//! samples and link state changes. Times are microseconds; the core's time
//! is [`crate::time::instant`] of them under the installed tables' tick
//! rate (1 tick = 1 µs by default: `t_us` wrapping at 2^32), as
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

use lcmp_decide::{Decider, FlowKey, Instant, Params, PortId};

mod codec;
#[cfg(feature = "alloc")]
mod csv;
mod digest;
mod driver;
#[cfg(test)]
mod fixtures;

#[cfg(feature = "alloc")]
pub use codec::encode_trace_vec;
pub use codec::{
    encode_trace, TraceReader, MAX_EVENT_BYTES, MAX_TRACE_EVENTS, TRACE_HEADER_LEN, TRACE_MAGIC,
    TRACE_VERSION,
};
#[cfg(feature = "alloc")]
pub use csv::parse_csv;
pub use digest::{DecisionRecord, Digest};
pub use driver::{replay, ReplaySummary};

/// Ports of the decider the digest is defined for.
pub const REPLAY_PORTS: usize = lcmp_decide::tables::MAX_PORTS;
/// Flow-cache slots of the decider the digest is defined for.
pub const REPLAY_FLOWS: usize = 1024;
/// The decider shape every frontend replays with.
pub type ReplayDecider = Decider<REPLAY_PORTS, REPLAY_FLOWS>;

/// One trace event. Its encoded form is the trace format's own
/// (`codec`'s wire structs), not a serde layout of this type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

    /// The core's time for it under tables of `params`
    /// ([`crate::time::instant`]: `ticks_per_second`, wrapping at 2^32).
    ///
    /// ```
    /// # use lcmp_tables::replay::TraceEvent;
    /// # use lcmp_decide::{Params, PortId};
    /// let e = TraceEvent::Link { t_us: (1 << 32) + 5, port: PortId(0), up: true };
    /// assert_eq!(e.now(&Params::PAPER).ticks(), 5); // 1 tick = 1 µs
    /// let e = TraceEvent::Link { t_us: 7_000, port: PortId(0), up: true };
    /// assert_eq!(e.now(&Params::PAPER.with_ticks_per_second(1_000)).ticks(), 7);
    /// ```
    pub fn now(&self, params: &Params) -> Instant {
        crate::time::instant(params, self.t_us())
    }
}

/// A flow key from two addresses of one family.
pub fn flow_key(src: IpAddr, dst: IpAddr, sport: u16, dport: u16, proto: u8) -> Option<FlowKey> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some(FlowKey::v4(s, d, sport, dport, proto)),
        (IpAddr::V6(s), IpAddr::V6(d)) => Some(FlowKey::v6(s, d, sport, dport, proto)),
        _ => None,
    }
}
