//! # lcmp-sim
//!
//! A fast flow-level simulator of an inter-DC network whose DCI switches
//! run the real LCMP decision core (`lcmp-decide`), on tables built by the
//! real control plane (`lcmp-tables`). It reproduces the paper's §6-§7
//! experiments (FCT slowdown of ECMP, UCMP, LCMP and ablations) in seconds.
//!
//! ## Architecture, by layer
//!
//! * [`workload`]: flow-size CDFs (web search, FB Hadoop, Ali storage).
//! * [`rng`]: the seeded PCG32 generator every random draw comes from.
//! * [`traffic`]: Poisson arrivals over an arrival window.
//! * [`network`]: directed links and per-switch tables from a topology.
//! * [`run`]: what both models take and return (flows, settings,
//!   outcomes).
//! * [`fluid`] (also [`engine`]): the time-stepped fluid engine with FIFO
//!   queues, back-pressure and one [`lcmp_decide::Decider`] per DCI switch.
//! * [`packet`]: the discrete-event packet-level RoCE model (`--model
//!   packet`): leaf-spine fabrics behind every DCI switch, PFC, ECN,
//!   DCQCN, go-back-N and routed ACKs, a decider per DCI switch per packet.
//! * [`stats`]: slowdowns, percentiles, size buckets, link utilisation.
//! * [`experiment`]: schemes, presets and parallel runs over loads, schemes
//!   and seeds.
//! * [`report`], [`plot`]: text tables, JSON and SVG figures.
//! * [`cli`]: the `lcmp sim` arguments and entry point.
//! * [`sweep`]: `lcmp sim sweep`, the grid search against baselines.
//! * [`artifact_files`]: the artifact's traffic and FCT files, to run its
//!   flows (`lcmp sim replay`) and compare with its simulator flow by flow
//!   (`lcmp sim fct-compare`).
//! * [`vs_artifact`]: per-size-bin curves against the artifact's published
//!   Figure 5 data (`lcmp sim --vs-artifact`).
//!
//! ## Feature flags
//!
//! * `cli` (default): [`cli`], [`plot`] and the threaded
//!   [`experiment::Experiment::run`] (clap, indicatif, plotters). Without
//!   it the crate builds for `wasm32-unknown-unknown`; drive runs with
//!   [`engine::Stepper`] on [`experiment::Experiment::networks`].
//!
//! ## What this crate does not do
//!
//! The fluid engine does not model packets, PFC pause frames (so no
//! head-of-line blocking or deadlock), drops, intra-DC fabrics, receiver
//! NICs, or a particular congestion-control algorithm; the packet model
//! does, at a hundred to a thousand times the cost, and has no PFC
//! deadlock detection, no priority classes beyond one lossless class and
//! acknowledgements, and no congestion control other than DCQCN: see
//! `docs/simulator.md` for both models and their limits. The crate
//! contains no copy of any scoring or table logic.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "cli")]
pub mod args;
pub mod artifact_files;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dci;
pub mod fluid;
/// The fluid model under its first name ([`fluid`]): `lcmp_sim::engine::run`
/// and the run vocabulary it re-exports keep working.
pub use fluid as engine;
pub mod error;
pub mod experiment;
pub mod figure;
pub mod network;
pub mod packet;
#[cfg(feature = "cli")]
pub mod plot;
pub mod report;
pub mod rng;
pub mod run;
pub mod stats;
#[cfg(feature = "cli")]
pub mod sweep;
pub mod traffic;
pub mod vs_artifact;
pub mod workload;

pub use error::SimError;

/// The commit this crate was built from (`git rev-parse --short=12 HEAD`
/// at build time, by `build.rs`), followed by `-dirty` when tracked files
/// under [`COMMIT_PATHS`] differed from it, or `unknown` outside a git
/// checkout: every run's text header and JSON `config` carry it.
pub const COMMIT: &str = match option_env!("LCMP_SIM_COMMIT") {
    Some(c) => c,
    None => "unknown",
};

/// The paths, relative to this crate's directory, whose uncommitted
/// changes mark [`COMMIT`] `-dirty`: the simulator, the core and the
/// tables crates, and the lock file.
pub const COMMIT_PATHS: &[&str] = include!("../commit_paths.rs");
