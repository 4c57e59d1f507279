#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc,
    clippy::alloc_instead_of_core
)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod blob;
pub mod error;
pub mod fraction;
pub mod replay;
pub mod time;

pub mod derived;

#[cfg(feature = "alloc")]
pub mod build;
#[cfg(feature = "alloc")]
mod graph;
#[cfg(feature = "alloc")]
pub mod report;
#[cfg(feature = "alloc")]
pub mod scenario;
#[cfg(feature = "alloc")]
pub mod topology;

#[cfg(feature = "alloc")]
pub use error::JsonError;
pub use error::{
    Count, FormatError, OptionError, SignatureError, TablesError, TopologyError, TraceError,
    TraceFault,
};
pub use fraction::Fraction;

#[cfg(feature = "alloc")]
pub use build::{
    build_tables, parse_bytes, parse_profile, parse_queue_thresholds, BuildOptions, PathMetric,
    Saturation,
};
#[cfg(feature = "alloc")]
pub use topology::{Dc, Link, SwitchPort, Topology, MAX_DCS, MAX_LINKS};

/// Most distinct port rates (trend tables) one table set may have.
pub const MAX_RATE_BUCKETS: usize = 16;

/// Checks tables as an installer would: the core's own validation
/// ([`lcmp_decide::Tables::validate`] for a full-size decider: unknown port
/// in a group, empty group, duplicate ids, zero capacity, non-increasing
/// thresholds, shifts or weights that could overflow, water marks) and at
/// most [`MAX_RATE_BUCKETS`] distinct port rates (trend tables). Capacities
/// of groups, candidates, ports and levels are enforced by the types
/// (`heapless` vectors) and, for encoded input, by [`blob::decode_blob`].
///
/// Returns the core's proof of the validation
/// ([`lcmp_decide::tables::ValidTables`]), which an install takes without
/// validating again (`DeciderWith::install_valid`).
///
/// ```
/// let mut t = lcmp_decide::Tables::paper_defaults();
/// assert!(lcmp_tables::validate_tables(&t).is_ok());
/// t.params.low_water = 250; // above the high-water mark
/// assert!(lcmp_tables::validate_tables(&t).is_err());
/// ```
pub fn validate_tables(
    tables: &lcmp_decide::Tables,
) -> Result<lcmp_decide::tables::ValidTables<'_>, TablesError> {
    let valid = tables.validated()?;
    let mut rates: heapless::Vec<u64, { lcmp_decide::tables::MAX_PORTS }> = heapless::Vec::new();
    for p in &tables.ports {
        if !rates.contains(&p.rate_bps) {
            // At most MAX_PORTS ports: this push cannot fail.
            let _ = rates.push(p.rate_bps);
        }
    }
    if rates.len() > MAX_RATE_BUCKETS {
        return Err(TablesError::TooMany {
            what: Count::RateBuckets,
            count: rates.len() as u64,
        });
    }
    Ok(valid)
}
