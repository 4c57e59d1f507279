//! `lcmp explain SCENARIO.json`: the core's explanation of one decision.

use std::path::PathBuf;

use clap::Args;
use lcmp_decide::Scheme;
use lcmp_tables::scenario::Scenario;

use crate::{print, read_text, Failure, SchemeParser};

/// `lcmp explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The scenario file (schema in docs/cli.md).
    scenario: PathBuf,
    /// Routing scheme (overrides the scenario's `scheme`; default lcmp).
    #[arg(long, value_parser = SchemeParser)]
    scheme: Option<Scheme>,
}

pub(crate) fn run(a: ExplainArgs) -> Result<(), Failure> {
    let text = read_text(&a.scenario)?;
    let path = a.scenario.display();
    let scenario = Scenario::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
    let out = scenario
        .explain(a.scheme)
        .map_err(|e| format!("{path}: {e}"))?;
    print(&format!("{}\n", out.to_json()))
}
