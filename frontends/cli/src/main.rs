//! The `lcmp` command-line tool: build, print and verify a switch's tables,
//! explain one decision, and replay traces through the LCMP core.
//!
//! Every failure is one line on stderr (`lcmp: error: ...`): exit code 1,
//! or 2 for a usage error (clap's message, on one line). See `docs/cli.md`.

use std::ffi::OsStr;
use std::io::Write;
use std::process::ExitCode;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::{Parser, Subcommand};
use lcmp_decide::Scheme;

mod explain;
mod keys;
mod replay;
mod tables;

/// LCMP (EuroSys '26) control-plane and replay tool.
#[derive(Debug, Parser)]
#[command(name = "lcmp", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands. A frontend crate adds one by exposing clap `Args` and a
/// `run` function returning `Result<(), E: Display>`, then one variant here
/// and one arm in [`run`], e.g. `Sim(lcmp_sim::cli::SimArgs)` and
/// `Command::Sim(a) => lcmp_sim::cli::run(a).map_err(|e| e.to_string()),`.
#[derive(Debug, Subcommand)]
enum Command {
    /// Build a switch's tables from a topology (`lcmp tables verify FILE`
    /// checks a blob).
    Tables(tables::TablesArgs),
    /// Explain, as JSON, the decision a scenario's flow would get.
    Explain(explain::ExplainArgs),
    /// Replay a trace of packets, queue samples and link events.
    Replay(replay::ReplayArgs),
    /// Simulate ECMP, UCMP, LCMP and variants on a topology (docs/simulator.md).
    Sim(Box<lcmp_sim::cli::SimArgs>),
    /// Generate the Tofino P4 program and table entries (docs/tofino.md).
    Tofino(lcmp_tofino::cli::TofinoArgs),
}

/// A failure: the one line printed after `lcmp: error: `.
type Failure = String;

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Tables(a) => tables::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Sim(a) => lcmp_sim::cli::run(&a).map_err(|e| e.to_string()),
        Command::Tofino(a) => lcmp_tofino::cli::run(a).map_err(|e| e.to_string()),
    }
}

/// The value parser of `lcmp explain` and `lcmp replay`'s `--scheme`: the
/// core's `Scheme::from_str` (an unknown name is its one-line error), with
/// the names and [`Scheme::describe`] that `--help` lists. The CLI's own,
/// not the Tofino frontend's (which parses `lcmp tofino`'s flag): no
/// command of this crate reaches into a frontend for a core type.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SchemeParser;

impl TypedValueParser for SchemeParser {
    type Value = Scheme;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Scheme, clap::Error> {
        let core = StringValueParser::new().try_map(|name| name.parse::<Scheme>());
        core.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let named = Scheme::ALL.map(|s| PossibleValue::new(s.name()).help(s.describe()));
        Some(Box::new(named.into_iter()))
    }
}

/// Reads a whole file, with the path in the error.
fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a whole UTF-8 file, with the path in the error.
fn read_text(path: &std::path::Path) -> Result<String, Failure> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// Writes `text` to stdout. A closed pipe (`lcmp ... | head`) is not an
/// error (the simulator's writer, which every `lcmp sim` output takes).
fn print(text: &str) -> Result<(), Failure> {
    lcmp_sim::cli::print(text).map_err(|e| e.to_string())
}

/// A usage error's message on one line (clap's text without its usage
/// block and `--help` hint), for `lcmp: error: ...`.
fn usage_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                // Help asked for (or implied): clap prints it.
                e.exit();
            }
            let _ = writeln!(std::io::stderr(), "lcmp: error: {}", usage_line(&e));
            return ExitCode::from(2);
        }
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            let line = msg.replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "lcmp: error: {line}");
            ExitCode::FAILURE
        }
    }
}
