#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::arithmetic_side_effects
    )
)]

#[cfg(test)]
extern crate std;

// This mod MUST go first, so that the others see its macros.
mod fmt;

/// `const fn with_FIELD(self, value) -> Self` setters for a
/// `#[non_exhaustive]` struct, so that callers in other crates build one
/// from a constant (`Params::PAPER.with_band(8)`) and a new field breaks
/// none of them (the smoltcp `iface::Config` pattern).
macro_rules! with_setters {
    ($ty:ident { $($field:ident : $t:ty => $setter:ident),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("`self` with [`", stringify!($ty), "::", stringify!($field), "`] set to `value`.")]
                #[must_use]
                pub const fn $setter(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

pub mod codes;
pub mod cost;
mod decider;
mod error;
pub mod estimator;
pub mod flow_cache;
pub mod hash;
mod in_flight;
pub mod monitor;
mod narrow_div;
pub mod profile;
pub mod select;
pub mod tables;
mod time;
#[cfg(feature = "_work-counters")]
#[doc(hidden)]
pub mod work;
#[cfg(not(feature = "_work-counters"))]
mod work;

pub use cost::Weights;
pub use decider::{
    Counters, Decider, DeciderConfig, DeciderRef, DeciderWith, Decision, Overflow, SharedDecider,
    BURST,
};
pub use error::{Error, Setting};
pub use flow_cache::{Entry, FlowCache, FlowCacheRef, FlowCacheWith, SlotBlock};
pub use hash::{Addresses, FlowCacheKey, FlowKey, HashAlgorithm};
pub use monitor::Signals;
pub use profile::Profile;
pub use select::{CandidateExplanation, CutReason, Explanation, Reason, Scheme};
pub use tables::{Candidate, Group, GroupId, Params, Pick, PortConfig, PortId, Tables};
pub use time::Instant;
