//! The figure registry (`lcmp_sim::figure`): every run a figure lists is
//! a valid `lcmp sim` command today, except the runs a figure marks as
//! pending on a flag the model does not have yet.

#![cfg(feature = "cli")]
use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::figure::FIGURES;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

#[test]
fn every_figures_runs_are_valid_lcmp_sim_commands() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let mut checked = 0;
    for f in FIGURES {
        for run in f.runs {
            // Paths are relative to the repository root; tests run in the
            // crate's directory.
            let args: Vec<String> = run
                .args
                .iter()
                .map(|a| a.replacen("frontends/sim/", root, 1))
                .collect();
            let parsed = Cli::try_parse_from(std::iter::once("sim".to_string()).chain(args));
            if run.args.contains(&"--cc") {
                // Figure 10 waits for `--cc` in the engine.
                assert!(
                    f.pending.is_some_and(|p| p.contains("--cc")),
                    "{}",
                    f.number
                );
                continue;
            }
            let cli = parsed.unwrap_or_else(|e| panic!("figure {} {}: {e}", f.number, run.label));
            let exp = experiment(&cli.sim)
                .unwrap_or_else(|e| panic!("figure {} {}: {e}", f.number, run.label));
            assert!(!exp.loads.is_empty());
            checked += 1;
        }
    }
    assert!(checked >= 1 + 1 + 1 + 1 + 3 + 9, "{checked}");
}

#[test]
fn lcmp_sim_figure_prints_a_known_figure_and_refuses_an_unknown_one() {
    let run = |args: &[&str]| {
        let cli = Cli::try_parse_from(std::iter::once("sim").chain(args.iter().copied()))
            .expect("parses");
        lcmp_sim::cli::run(&cli.sim)
    };
    run(&["figure", "9", "--plan"]).expect("figure 9 has a plan");
    run(&["figure", "10", "--emit-jobs", "--out", "runs"]).expect("jobs");
    let e = run(&["figure", "5", "--model", "nope"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--model nope") && e.contains("fluid or packet"),
        "{e}"
    );
    let e = run(&["figure", "5", "--seeds", "0"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--seeds"), "{e}");
    let e = run(&["figure", "5", "--merge", "/nonexistent-dir"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing to set beside"), "{e}");
    let e = run(&["figure", "6"]).unwrap_err().to_string();
    assert!(
        e.contains("figure 6") && e.contains("1, 5, 7, 8, 9, 10, 11"),
        "{e}"
    );
    assert!(
        Cli::try_parse_from(["sim", "figure"]).is_err(),
        "N is required"
    );
}
