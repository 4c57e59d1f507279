//! # lcmp-decide
//!
//! The decision core of LCMP, long-haul cost-aware multi-path routing for
//! inter-datacenter RDMA (Yu et al., EuroSys '26): `no_std`, no allocation,
//! no floating point, no `unsafe`, sans-IO.
//!
//! ## Architecture, by layer
//!
//! * [`cost`]: the integer scores. Alg. 1 `delayScore`, Alg. 2
//!   `linkCapScore`, Eq. 2 `C_path`, Eq. 4-5 `C_cong`, Eq. 1 fused `C`.
//! * [`estimator`]: the per-port congestion signals of §3.3: queue level
//!   `Q`, shift-EWMA trend `T` (Eq. 3) normalised by the observed sampling
//!   interval, duration penalty `D`.
//! * [`monitor`]: 24 bytes of state per port, updated by
//!   [`Decider::sample`] at the caller's cadence.
//! * [`tables`]: what the control plane installs ([`Tables`]), validated
//!   once into [`tables::CompiledTables`] with precomputed path scores.
//! * [`select`]: the two-stage, diversity-preserving selection of §3.4 and
//!   the ECMP / UCMP baselines, all producing one [`Explanation`].
//! * [`flow_cache`]: the bounded `flow2output` cache with incremental GC.
//! * [`hash`]: flow keys, MurmurHash3 x86_32 (the artifact's ECMP hash) and
//!   the CRC-32 option for switch ASICs.
//! * [`Decider`]: ties them together behind `on_packet`, `sample`,
//!   `set_port_up`, `gc`, `install` and `explain`.
//! * [`profile`]: named parameter sets ([`Profile::Paper`], the default,
//!   and [`Profile::Tuned`]).
//!
//! ## What this crate does not do
//!
//! It reads no clock, port, file or socket, spawns nothing and allocates
//! nothing: callers pass `now` ([`Instant`], a wrapping tick counter), queue
//! samples and packets in, and get decisions out. It does not derive tables
//! from a topology (that is `lcmp-tables`), parse packets, or move a pinned
//! flow while its port is up (the paper's per-flow stickiness, §7.5).
//!
//! ## Features
//!
//! * `serde`: `Serialize`/`Deserialize` for tables, settings, decisions and
//!   explanations.
//! * `defmt`: `defmt::Format` on every public type, and trace logging.
//! * `std`: nothing beyond `core` yet; reserved so frontends can enable it
//!   uniformly.
//!
//! The default build is `no_std` with no features.
//!
//! ## MSRV
//!
//! Rust 1.93 (the workspace's `rust-version`).
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

pub mod cost;
mod decider;
mod error;
pub mod estimator;
pub mod flow_cache;
pub mod hash;
pub mod monitor;
pub mod profile;
pub mod select;
pub mod tables;
mod time;

pub use cost::Weights;
pub use decider::{Counters, Decider, DeciderConfig, Decision};
pub use error::{Error, Setting};
pub use flow_cache::FlowCache;
pub use hash::{Addresses, FlowKey, HashAlgorithm};
pub use monitor::Signals;
pub use profile::Profile;
pub use select::{CandidateExplanation, CutReason, Explanation, Reason, Scheme};
pub use tables::{Candidate, Group, GroupId, Params, Pick, PortConfig, PortId, Tables};
pub use time::Instant;
