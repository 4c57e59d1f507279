//! The reduced reproduction check (docs/simulator.md, "The reproduction
//! check"): the packet model on the artifact preset at 30 % load, a
//! 50 ms arrival window, one seed, against the artifact's published
//! Figure 5 curves; and the same check failing when a known departure
//! (one PFC threshold shift at every port, `--pfc-shift 3`) is put back.
//! About a CPU-minute in release mode; skipped in debug builds.

use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::vs_artifact::reduced_check;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

fn run(extra: &[&str]) -> Vec<lcmp_sim::stats::RunResult> {
    let base = [
        "sim",
        "--model",
        "packet",
        "--preset",
        "artifact",
        "--load",
        "0.3",
        "--window",
        "0.05",
        "--seeds",
        "1",
        "--vs-artifact",
    ];
    let cli = Cli::try_parse_from(base.iter().chain(extra)).expect("parses");
    let exp = experiment(&cli.sim).expect("valid");
    exp.run(2, &|| {}).expect("runs")
}

#[test]
#[cfg_attr(debug_assertions, ignore = "a CPU-minute in release mode")]
fn the_packet_model_passes_the_reduced_check_and_fails_it_with_one_pfc_shift() {
    let ours = run(&["--schemes", "ecmp,ucmp,lcmp"]);
    let failed = reduced_check(&ours);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The old single shift: LCMP's small-flow tail moves out of the band.
    let mut old = run(&["--schemes", "lcmp", "--pfc-shift", "3"]);
    old.extend(ours.into_iter().filter(|r| r.scheme != "lcmp"));
    let failed = reduced_check(&old);
    assert!(
        failed.iter().any(|f| f.starts_with("LCMP small-flow p99")),
        "{failed:?}"
    );
}
