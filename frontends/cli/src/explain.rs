//! `lcmp explain SCENARIO.json`: the core's explanation of one decision.

use std::path::PathBuf;

use clap::Args;
use lcmp_tables::scenario::Scenario;

use crate::{print, read_text, Failure};

/// The routing scheme on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum SchemeArg {
    /// LCMP (§3).
    Lcmp,
    /// ECMP over all live candidates.
    Ecmp,
    /// UCMP as the artifact: ECMP over the live candidates of maximum capacity.
    Ucmp,
}

impl From<SchemeArg> for lcmp_decide::Scheme {
    fn from(s: SchemeArg) -> Self {
        match s {
            SchemeArg::Lcmp => lcmp_decide::Scheme::Lcmp,
            SchemeArg::Ecmp => lcmp_decide::Scheme::Ecmp,
            SchemeArg::Ucmp => lcmp_decide::Scheme::Ucmp,
        }
    }
}

/// `lcmp explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The scenario file (schema in docs/cli.md).
    scenario: PathBuf,
    /// Routing scheme (overrides the scenario's `scheme`; default lcmp).
    #[arg(long, value_enum)]
    scheme: Option<SchemeArg>,
}

pub(crate) fn run(a: ExplainArgs) -> Result<(), Failure> {
    let text = read_text(&a.scenario)?;
    let path = a.scenario.display();
    let scenario = Scenario::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
    let out = scenario
        .explain(a.scheme.map(Into::into))
        .map_err(|e| format!("{path}: {e}"))?;
    print(&format!("{}\n", out.to_json()))
}
