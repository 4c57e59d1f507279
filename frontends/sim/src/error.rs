//! The simulator's one error type.

use core::fmt;

/// Why a simulation could not be set up or its output written. The
/// simulation itself cannot fail once set up.
#[derive(Debug)]
#[non_exhaustive]
pub enum SimError {
    /// Unknown or invalid topology (name, file or content).
    Topology(String),
    /// Unknown or invalid workload (name, file or content).
    Workload(String),
    /// Invalid setting (load, scheme, weights, pair, seeds, ...).
    Config(String),
    /// The control plane refused to build a switch's tables.
    Tables(String),
    /// Writing results or figures failed.
    Output(String),
    /// A run left more than [`crate::experiment::MAX_INCOMPLETE_PCT`] %
    /// of its flows without a route or unfinished: its statistics would
    /// describe a different subset of flows than another scheme's.
    Incomplete(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Topology(m) => write!(f, "topology: {m}"),
            SimError::Workload(m) => write!(f, "workload: {m}"),
            SimError::Config(m) => write!(f, "{m}"),
            SimError::Tables(m) => write!(f, "tables: {m}"),
            SimError::Output(m) => write!(f, "output: {m}"),
            SimError::Incomplete(m) => write!(f, "incomplete run: {m}"),
        }
    }
}

impl core::error::Error for SimError {}
