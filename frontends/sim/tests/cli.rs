//! `lcmp sim` argument handling: bad input is a typed error, never a panic.

use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::SimError;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

fn exp(args: &[&str]) -> Result<lcmp_sim::experiment::Experiment, SimError> {
    let cli =
        Cli::try_parse_from(core::iter::once("sim").chain(args.iter().copied())).expect("parses");
    experiment(&cli.sim)
}

#[test]
fn defaults_are_the_paper_regime_on_testbed8() {
    let e = exp(&[]).expect("valid");
    assert_eq!(e.loads, [0.3, 0.5, 0.8]);
    assert_eq!(e.windows_us, [150_000.0, 100_000.0, 70_000.0]);
    assert_eq!(e.schemes.len(), 3);
    assert_eq!(e.seeds, [1]);
    assert!((e.reference_bps() - 1.6e12).abs() < 1.0);
    let p = exp(&["--preset", "paper"]).expect("valid");
    assert_eq!((p.schemes.len(), p.seeds.len()), (5, 5));
    let b = exp(&["--topology", "bso13", "--focus", "DC1:DC13"]).expect("valid");
    assert_eq!(b.pairs, lcmp_sim::traffic::Pairs::AllToAll);
    assert_eq!(b.focus, Some((1, 13)));
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(matches!(
        exp(&["--topology", "nowhere.json"]),
        Err(SimError::Topology(_))
    ));
    assert!(matches!(
        exp(&["--workload", "nowhere.cdf"]),
        Err(SimError::Workload(_))
    ));
    assert!(matches!(
        exp(&["--schemes", "ecmp,magic"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(
        exp(&["--pair", "DC1:DC99"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(
        exp(&["--pair", "DC1:DC1"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(exp(&["--load", "0"]), Err(SimError::Config(_))));
    assert!(matches!(exp(&["--load", "nan"]), Err(SimError::Config(_))));
    assert!(matches!(
        exp(&["--weights", "alpha=x"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(
        exp(&["--weights", "s_cong=40"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(exp(&["--seeds", "0"]), Err(SimError::Config(_))));
    assert!(matches!(exp(&["--window=-1"]), Err(SimError::Config(_))));
    assert!(matches!(
        exp(&["--preset", "paper", "--topology", "bso13"]),
        Err(SimError::Config(_))
    ));
    assert!(matches!(exp(&["--dt-us", "0"]), Err(SimError::Config(_))));
}

#[test]
fn runs_that_are_too_big_are_refused() {
    assert!(matches!(
        exp(&["--window", "60", "--load", "5"]),
        Err(SimError::Config(_))
    ));
}

#[test]
fn figures_and_json_are_written() {
    let e = exp(&["--load", "0.3", "--window", "0.01"]).expect("valid");
    let results = e.run(2, &|| {}).expect("runs");
    assert_eq!(results.len(), 3);
    let dir = std::env::temp_dir().join(format!("lcmp-sim-plot-{}", std::process::id()));
    let files = lcmp_sim::plot::write_all(&dir, "test", &results).expect("written");
    assert_eq!(files.len(), 2);
    for f in &files {
        let svg = std::fs::read_to_string(f).expect("readable");
        assert!(svg.starts_with("<svg") && svg.contains("lcmp"), "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let v = serde_json::to_value(lcmp_sim::report::summarise(&results)).expect("json");
    assert!(v[0]["links"][0]["utilisation"]["mean"].is_number());
    assert!(v[0]["buckets"][0]["p99"]["sd"].is_number());
    let text = lcmp_sim::report::text("title", &results);
    assert!(text.contains("lcmp vs ecmp") && text.contains("DC1->DC6 25G"));
}
