//! `lcmp sim` argument handling: bad input is a typed error, never a panic.

use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::SimError;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

/// `lcmp sim ARGS`, parsed.
fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_from(core::iter::once("sim").chain(args.iter().copied())).expect("parses")
}

fn exp(args: &[&str]) -> Result<lcmp_sim::experiment::Experiment, SimError> {
    experiment(&parse(args).sim)
}

#[test]
fn defaults_are_the_paper_regime_on_testbed8() {
    let e = exp(&[]).expect("valid");
    assert_eq!(e.loads, [0.3, 0.5, 0.8]);
    assert_eq!(e.windows_us, [150_000.0, 100_000.0, 70_000.0]);
    // The paper's LCMP and the tuned profile side by side.
    let names: Vec<&str> = e.schemes.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["ecmp", "ucmp", "lcmp", "lcmp-tuned"]);
    assert_eq!(e.tables.params.weights, lcmp_decide::Weights::PAPER);
    assert_eq!(e.tables.saturation, lcmp_tables::Saturation::Shift(5));
    assert_eq!(e.tables.queue_thresholds, None);
    assert_eq!(e.seeds, [1]);
    assert!((e.reference_bps() - 1.6e12).abs() < 1.0);
    let p = exp(&["--preset", "paper"]).expect("valid");
    assert_eq!((p.schemes.len(), p.seeds.len()), (5, 5));
    let b = exp(&["--topology", "bso13", "--focus", "DC1:DC13"]).expect("valid");
    assert_eq!(b.pairs, lcmp_sim::traffic::Pairs::AllToAll);
    assert_eq!(b.focus, Some((1, 13)));
    assert_eq!(b.pair_flows, None);
    let r = exp(&["--topology", "bso13", "--pair-flows", "DC13:DC1"]).expect("valid");
    assert_eq!((r.focus, r.pair_flows), (None, Some((13, 1))));
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
    for bad in ["DC1:DC99", "DC1:DC1", "DC1", "x:y"] {
        assert!(
            matches!(exp(&["--pair-flows", bad]), Err(SimError::Config(_))),
            "{bad}"
        );
    }
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
    assert_eq!(results.len(), 4);
    let dir = std::env::temp_dir().join(format!("lcmp-sim-plot-{}", std::process::id()));
    let files = lcmp_sim::plot::write_all(&dir, "test", &results).expect("written");
    assert_eq!(files.len(), 2);
    for f in &files {
        let svg = std::fs::read_to_string(f).expect("readable");
        assert!(svg.starts_with("<svg") && svg.contains("lcmp"), "{f}");
    }
    // A scheme keeps its colour without the schemes before it (a merged
    // figure of some runs), and the legend is right of the chart (x past
    // 940 px), where it hides no curve.
    let slowdown = |rs: &[lcmp_sim::stats::RunResult], sub: &str| {
        let d = dir.join(sub);
        lcmp_sim::plot::write_all(&d, "test", rs).expect("written");
        std::fs::read_to_string(d.join("slowdown-30.svg")).expect("readable")
    };
    let stroke_of = |svg: &str, scheme: &str| -> String {
        // The legend row: the line sample just before the scheme's label.
        let at = svg
            .find(&format!(">\n{scheme}\n</text>"))
            .expect("a legend label");
        let before = &svg[..at];
        let line = before.rfind("<polyline").expect("a legend line");
        let stroke = before[line..].find("stroke=\"").expect("a stroke") + line + 8;
        before[stroke..stroke + 18].to_string()
    };
    let all = slowdown(&results, "all");
    let lcmp_only: Vec<_> = results
        .iter()
        .filter(|r| r.scheme == "lcmp")
        .cloned()
        .collect();
    let alone = slowdown(&lcmp_only, "alone");
    assert_eq!(stroke_of(&all, "lcmp"), stroke_of(&alone, "lcmp"));
    assert_ne!(stroke_of(&all, "lcmp"), stroke_of(&all, "ecmp"));
    let label = all.find(">\nlcmp\n</text>").expect("legend label");
    let text = all[..label].rfind("<text").expect("a text element");
    let x: f64 = all[text..label]
        .split("x=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .and_then(|t| t.parse().ok())
        .expect("an x coordinate");
    assert!(x > 940.0, "legend at x = {x}");
    let _ = std::fs::remove_dir_all(&dir);
    let v = serde_json::to_value(lcmp_sim::report::summarise(&results)).expect("json");
    assert!(v[0]["links"][0]["utilisation"]["mean"].is_number());
    assert!(v[0]["buckets"][0]["p99"]["sd"].is_number());
    let text = lcmp_sim::report::text("title", &results);
    assert!(text.contains("lcmp vs ecmp") && text.contains("DC1->DC6 25G"));
}

/// `cli::run` runs the experiment it is given, not just plans it: with
/// `--plot DIR` the run's figure is in DIR afterwards, with the schemes
/// asked for.
#[test]
fn run_writes_the_figures_of_the_run_it_is_given() {
    let dir = std::env::temp_dir().join(format!("lcmp-sim-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plot = dir.to_str().expect("a UTF-8 temporary directory");
    let cli = parse(&[
        "--load",
        "0.3",
        "--window",
        "0.01",
        "--schemes",
        "ecmp,lcmp",
        "--plot",
        plot,
    ]);
    lcmp_sim::cli::run(&cli.sim).expect("runs");
    let svg = std::fs::read_to_string(dir.join("slowdown-30.svg")).expect("the figure is written");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains(">\nlcmp\n</text>") && svg.contains(">\necmp\n</text>"));
    assert!(!svg.contains(">\nucmp\n</text>"));
}

#[test]
fn the_artifact_preset_is_its_regime() {
    use lcmp_sim::engine::{AckPath, FlowIdentity, IdealFct};
    let e = exp(&["--preset", "artifact"]).expect("valid");
    assert_eq!(e.windows_us, [200_000.0; 3]);
    assert_eq!(e.seeds.len(), 5);
    let names: Vec<&str> = e.schemes.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["ecmp", "ucmp", "lcmp"]);
    let p = &e.tables.params;
    assert_eq!((p.weights.s_cong, p.weights.w_tl), (2, 0));
    assert_eq!(e.tables.saturation, lcmp_tables::Saturation::Shift(9));
    let q = e.tables.queue_thresholds.clone().expect("explicit");
    assert_eq!((q[0], q[1], q[9]), (0, 205_032_704, 205_032_704));
    assert_eq!(p.idle_timeout_ticks, 2_000_000);
    assert_eq!(
        e.topology.buffer_bytes,
        lcmp_sim::cli::ARTIFACT_DCI_BUFFER_BYTES
    );
    // The packet model gives each DCI switch the artifact's own pool.
    assert_eq!(
        e.engine.packet.dci_pool,
        lcmp_sim::packet::DciPool::Artifact { buffer_mib: 128 }
    );
    assert_eq!(e.engine.ideal, IdealFct::Rtt);
    assert_eq!(e.engine.ack_path, AckPath::Routed);
    assert_eq!(e.engine.flow_id, FlowIdentity::Artifact);
    assert!(e.engine.sample_on_decision);
    assert_eq!(e.sports, lcmp_sim::traffic::SourcePorts::PerPair);
    // Each mechanism can be turned back off.
    let off = exp(&[
        "--preset",
        "artifact",
        "--saturation",
        "5",
        "--weights",
        "s_cong=3,w_tl=1",
        "--queue-thresholds",
        "0,1,2,3,4,5,6,7,8,9",
        "--ideal",
        "oneway",
        "--ack-path",
        "none",
        "--flow-id",
        "five-tuple",
        "--buffer",
        "5GB",
        "--idle-timeout-ms",
        "5",
        "--sampling",
        "periodic",
    ])
    .expect("valid");
    assert_eq!(off.tables.saturation, lcmp_tables::Saturation::Shift(5));
    assert_eq!(off.tables.params.weights, lcmp_decide::Weights::PAPER);
    assert_eq!(
        off.tables.queue_thresholds,
        Some(vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    );
    assert_eq!(off.engine.ideal, IdealFct::OneWay);
    assert_eq!(off.engine.ack_path, AckPath::None);
    assert_eq!(off.engine.flow_id, FlowIdentity::FiveTuple);
    assert_eq!(off.topology.buffer_bytes, 5_000_000_000);
    assert_eq!(
        off.engine.packet.dci_pool,
        lcmp_sim::packet::DciPool::Buffer
    );
    assert_eq!(off.tables.params.idle_timeout_ticks, 5_000);
    assert!(!off.engine.sample_on_decision);
}

#[test]
fn profiles_and_table_options() {
    let t = exp(&["--profile", "tuned"]).expect("valid");
    assert_eq!(
        t.tables.params,
        lcmp_decide::Profile::Tuned
            .params()
            .with_idle_timeout_ticks(lcmp_sim::experiment::SIM_IDLE_TIMEOUT_US)
    );
    assert_eq!(t.tables.saturation, lcmp_tables::Saturation::Shift(10));
    let b = exp(&["--profile", "tuned", "--band", "24", "--saturation", "auto"]).expect("valid");
    assert_eq!(b.tables.params.band, 24);
    assert_eq!(b.tables.saturation, lcmp_tables::Saturation::Auto);
    let w = exp(&["--queue-thresholds", "wrap32:1000"]).expect("valid");
    assert_eq!(
        w.tables.queue_thresholds,
        Some((0..10).map(|i| i * 100).collect())
    );
}

/// Every new option's bad value is a one-line configuration error.
#[test]
fn bad_new_options_are_one_line_errors() {
    for args in [
        &[
            "--preset",
            "artifact",
            "--topology",
            "frontends/sim/no-such-topology.json",
        ][..],
        &["--preset", "paper", "--topology", "bso13"],
        &["--vs-artifact", "--topology", "bso13", "--load", "0.3"],
        &["--profile", "fast"],
        &["--band", "256"],
        &["--band", "x"],
        &["--saturation", "32"],
        &["--buffer", "0"],
        &["--buffer", "5XB"],
        &["--ideal", "best"],
        &["--ack-path", "maybe"],
        &["--flow-id", "hash"],
        &["--sampling", "sometimes"],
        &["--idle-timeout-ms", "0"],
        &["--idle-timeout-ms", "5000000"],
        &["--queue-thresholds", "0,1"],
        &["--queue-thresholds", "9,8,7,6,5,4,3,2,1,0"],
        &["--queue-thresholds", "wrap32:lots"],
    ] {
        match exp(args) {
            Err(SimError::Config(m)) => {
                assert!(!m.contains('\n') && !m.is_empty(), "{args:?}: {m}")
            }
            other => panic!("{args:?}: {other:?}"),
        }
    }
}

#[test]
fn a_sweep_ranks_configurations_and_writes_its_report() {
    let cli = Cli::try_parse_from([
        "sim",
        "--load",
        "0.3",
        "--window",
        "0.01",
        "sweep",
        "--vary",
        "band=-/16",
        "--vary",
        "saturation=5/9",
    ])
    .expect("parses");
    let Some(lcmp_sim::cli::SimAction::Sweep(s)) = &cli.sim.action else {
        panic!("a sweep");
    };
    let mut s = s.clone();
    let dir = std::env::temp_dir().join(format!("lcmp-sim-sweep-{}", std::process::id()));
    s.out = Some(dir.clone());
    let r = lcmp_sim::sweep::run(&cli.sim, &s, 2).expect("runs");
    assert_eq!(r.configs.len(), 4);
    assert_eq!(r.baselines.len(), 2);
    let names: Vec<&str> = r.configs.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"base") || names.contains(&"saturation=5"));
    for c in &r.configs {
        assert_eq!(c.cells.len(), 1);
        assert!(c.beats <= 1 && c.loses <= 1);
        assert!(c.worst_p50_ratio > 0.0 && c.worst_p99_ratio > 0.0);
    }
    // Ranked: beats descending.
    assert!(r.configs.windows(2).all(|w| w[0].beats >= w[1].beats));
    for f in ["sweep.md", "sweep.json", "sweep.svg"] {
        let text = std::fs::read_to_string(dir.join(f)).expect("written");
        assert!(text.contains("band=16") || f == "sweep.svg", "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Bad axes fail before anything runs.
    for vary in [
        "colour=red",
        "band",
        "band=300",
        "saturation=99",
        "weights=gamma=1",
    ] {
        let mut bad = s.clone();
        bad.vary = vec![vary.to_string()];
        bad.out = None;
        assert!(
            matches!(
                lcmp_sim::sweep::run(&cli.sim, &bad, 1),
                Err(SimError::Config(_))
            ),
            "{vary}"
        );
    }
}

#[test]
fn a_loads_traffic_does_not_depend_on_its_position_in_the_list() {
    let alone = exp(&["--load", "0.5"]).expect("valid");
    let listed = exp(&["--load", "0.3,0.5,0.8"]).expect("valid");
    let a = alone.flows(0, 4);
    assert!(a.len() > 1000);
    assert_eq!(a, listed.flows(1, 4));
    assert_ne!(a, listed.flows(0, 4));
    // The window enters only through the arrival times' cut-off.
    let other_window = exp(&["--load", "0.5", "--window", "0.05"]).expect("valid");
    let b = other_window.flows(0, 4);
    assert_eq!(b[..], a[..b.len()]);
}

#[test]
fn job_command_lines_parse_back_to_the_same_arguments() {
    let args = [
        "--topology",
        "bso13",
        "--workload",
        "fbhadoop",
        "--load",
        "0.3,0.55",
        "--schemes",
        "ecmp,lcmp-tuned",
        "--weights",
        "beta=2",
        "--pair",
        "DC1:DC13",
        "--focus",
        "DC1:DC13",
        "--preset",
        "paper",
        "--load-ref",
        "interdc",
        "--window",
        "0.125",
        "--seed",
        "7",
        "--seeds",
        "3",
        "--hosts-per-dc",
        "8",
        "--dt-us",
        "5",
        "--sample-us",
        "200",
        "--model",
        "packet",
        "--bins",
        "20",
        "--saturation",
        "9",
        "--buffer",
        "5GB",
        "--ideal",
        "rtt",
        "--ack-path",
        "routed",
        "--flow-id",
        "artifact",
        "--idle-timeout-ms",
        "2000",
        "--queue-thresholds",
        "wrap32:5GB",
        "--sampling",
        "decision",
        "--profile",
        "tuned",
        "--band",
        "8",
        "--json",
        "--no-cc",
        "--pfc-shift",
        "2",
        "--vs-artifact",
    ];
    let a = Cli::try_parse_from(core::iter::once("sim").chain(args))
        .expect("parses")
        .sim;
    let back = lcmp_sim::cli::to_args(&a);
    let b = Cli::try_parse_from(core::iter::once("sim".to_string()).chain(back))
        .expect("parses back")
        .sim;
    assert_eq!(a, b);
}

#[test]
fn the_model_is_fluid_unless_packet_is_asked_for() {
    use lcmp_sim::engine::Model;
    assert_eq!(exp(&[]).expect("valid").engine.model, Model::Fluid);
    let p = exp(&["--model", "packet", "--no-cc"]).expect("valid");
    assert_eq!(p.engine.model, Model::Packet);
    assert!(!p.engine.packet.dcqcn);
    assert!(
        exp(&["--model", "packet"])
            .expect("valid")
            .engine
            .packet
            .dcqcn
    );
    assert!(matches!(exp(&["--model", "ns3"]), Err(SimError::Config(_))));
}

#[test]
fn schemes_are_never_compared_on_different_flow_subsets() {
    // Ali storage with the paper's 2 s idle timeout in the 32 768-slot
    // caches every switch had before they were sized per workload: the
    // caches fill and refuse most flows, a different share per scheme. The
    // run stops with an error naming the schemes instead of printing
    // statistics.
    let args = [
        "--flow-cache",
        "32768",
        "--preset",
        "paper",
        "--workload",
        "alistorage",
        "--load",
        "0.3",
        "--seeds",
        "1",
        "--window",
        "0.05",
        "--schemes",
        "ecmp,lcmp",
    ];
    let e = exp(&args).expect("valid");
    match e.run(1, &|| {}) {
        Err(SimError::Incomplete(m)) => {
            assert!(
                m.contains("ecmp at 30 %") && m.contains("without a route"),
                "{m}"
            );
        }
        other => panic!("expected an incomplete-run error, got {other:?}"),
    }
    // A 5 ms idle timeout: every flow counted, and the run goes through.
    let mut ok = args.to_vec();
    ok.extend(["--idle-timeout-ms", "5"]);
    let results = exp(&ok).expect("valid").run(1, &|| {}).expect("complete");
    assert!(results
        .iter()
        .all(|r| r.completed == r.flows && r.flows > 0));
    // The default: caches sized for the workload's flow rate and the
    // switches' safe gaps, at the paper's 2 s timeout: every flow counted.
    let sized = exp(&args[2..]).expect("valid");
    assert_eq!(sized.engine.flow_slots, None);
    let results = sized.run(1, &|| {}).expect("complete");
    assert!(results
        .iter()
        .all(|r| r.completed == r.flows && r.flows > 0));
}

#[test]
fn options_a_model_would_ignore_or_cannot_run_are_refused() {
    for args in [
        &["--model", "packet", "--dt-us", "5"][..],
        &["--buffer", "1"],
        &["--buffer", "999999"],
        &["--model", "packet", "--pfc-shift", "17"],
        &["--flow-cache", "1000"],
        &["--flow-cache", "8"],
        &["--flow-cache", "16777216"],
        &["--vs-artifact", "--load", "0.4"],
        &["--vs-artifact", "--json"],
    ] {
        match exp(args) {
            Err(SimError::Config(m)) => assert!(!m.contains('\n'), "{m}"),
            other => panic!(
                "{args:?}: expected a config error, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    // Their valid forms.
    assert!(exp(&["--dt-us", "5"]).is_ok());
    assert!(exp(&["--buffer", "1MB"]).is_ok());
    let e = exp(&["--model", "packet", "--pfc-shift", "3"]).expect("valid");
    assert_eq!(e.engine.packet.pfc_shift, Some(3));
    assert_eq!(
        exp(&["--vs-artifact", "--load", "0.3,0.8"])
            .expect("valid")
            .bins,
        20
    );
}

#[test]
fn a_focus_on_a_pair_without_flows_is_an_error_not_zeros() {
    // The default traffic is DC1 -> DC8: nothing between DC2 and DC3.
    let e = exp(&["--focus", "DC2:DC3", "--load", "0.3", "--window", "0.01"]).expect("valid");
    match e.run(1, &|| {}) {
        Err(SimError::Config(m)) => assert!(m.contains("DC2:DC3") && !m.contains('\n'), "{m}"),
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    // A pair the traffic carries is counted.
    let e = exp(&["--focus", "DC1:DC8", "--load", "0.3", "--window", "0.01"]).expect("valid");
    assert!(e.run(1, &|| {}).expect("runs").iter().all(|r| r.flows > 0));
}

#[test]
fn a_bad_presets_error_names_the_presets_on_its_first_line() {
    let e = match Cli::try_parse_from(["sim", "--preset", "nope"]) {
        Err(e) => e,
        Ok(_) => panic!("--preset nope parsed"),
    };
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("nope") && first.contains("paper") && first.contains("artifact"),
        "{first}"
    );
}

#[test]
fn a_packet_model_comparison_on_two_threads_equals_the_serial_run() {
    // `lcmp sim --model packet --preset artifact --load 0.3 --schemes
    // ecmp,ucmp,lcmp --seeds 1` runs its schemes on parallel threads; a
    // 2 ms window of it, on two threads and on one: the same results,
    // bit for bit, in the same order.
    let args = "--model packet --preset artifact --load 0.3 --window 0.002 \
                --schemes ecmp,ucmp,lcmp --seeds 1";
    let e = exp(&args.split_whitespace().collect::<Vec<_>>()).expect("valid");
    let strip = |mut v: Vec<lcmp_sim::stats::RunResult>| {
        for r in &mut v {
            r.wall_time_s = 0.0;
        }
        v
    };
    let parallel = strip(e.run(2, &|| {}).expect("runs"));
    let serial = strip(e.run(1, &|| {}).expect("runs"));
    let schemes: Vec<&str> = parallel.iter().map(|r| r.scheme.as_str()).collect();
    assert_eq!(schemes, ["ecmp", "ucmp", "lcmp"]);
    assert_eq!(parallel, serial, "two threads changed the results");
    // The runs differ from each other (so equal results are not empty ones).
    assert_ne!(parallel[0], parallel[2]);
}

/// Issue 31 item 7: every run's label names the commit the simulator was
/// built from, `git rev-parse --short=12 HEAD` in a checkout (`build.rs`),
/// with `-dirty` when the simulator's sources differ from it, else
/// `unknown`.
#[test]
fn the_run_label_names_the_commit() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend_from_slice(lcmp_sim::COMMIT_PATHS);
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(h) => match git(&status).filter(|s| !s.is_empty()) {
            Some(changed) => assert_eq!(lcmp_sim::COMMIT, format!("{h}-dirty"), "{changed}"),
            None => assert_eq!(lcmp_sim::COMMIT, h),
        },
        None => assert_eq!(lcmp_sim::COMMIT, "unknown"),
    }
    let cli = Cli::try_parse_from(["sim", "--load", "0.3"]).expect("parses");
    let e = experiment(&cli.sim).expect("valid");
    let label = lcmp_sim::cli::run_label(&cli.sim, &e);
    assert!(
        label.contains(&format!(
            "; commit {}; command: lcmp sim ",
            lcmp_sim::COMMIT
        )),
        "{label}"
    );
}

/// `--preset artifact --topology bso13` is the artifact's 13-DC regime
/// (`13DC-hetero`): the settings the preset gives testbed8, all-to-all,
/// the load relative to the 208 hosts' NICs, its traffic files' windows
/// (10 ms, 8 ms at 80 %), and each DCI switch its own pool; the same
/// experiment as those settings by flag, but for the pools and the 80 %
/// window.
#[test]
fn the_artifact_preset_reaches_bso13() {
    use lcmp_sim::engine::{AckPath, FlowIdentity, IdealFct};
    let p = exp(&[
        "--preset",
        "artifact",
        "--topology",
        "bso13",
        "--load",
        "0.3,0.8",
    ])
    .expect("valid");
    let f = exp(&[
        "--topology",
        "bso13",
        "--pair",
        "all",
        "--load-ref",
        "nic",
        "--window",
        "0.01",
        "--saturation",
        "9",
        "--weights",
        "s_cong=2,w_tl=0",
        "--queue-thresholds",
        "wrap32:5GB",
        "--ideal",
        "rtt",
        "--ack-path",
        "routed",
        "--flow-id",
        "artifact",
        "--sampling",
        "decision",
        "--schemes",
        "ecmp,ucmp,lcmp",
        "--seeds",
        "5",
        "--load",
        "0.3,0.8",
    ])
    .expect("valid");
    assert_eq!(p.pairs, lcmp_sim::traffic::Pairs::AllToAll);
    assert_eq!(p.pairs, f.pairs);
    assert!((p.reference_bps() - 208.0 * 100e9).abs() < 1.0);
    assert!((p.reference_bps() - f.reference_bps()).abs() < 1.0);
    // The artifact's traffic files' windows: 10 ms, 8 ms at 80 % (one
    // `--window` gives every load the same).
    assert_eq!(p.windows_us, [10_000.0, 8_000.0]);
    assert_eq!(f.windows_us, [10_000.0, 10_000.0]);
    assert_eq!(p.tables.params, f.tables.params);
    assert_eq!(p.tables.saturation, f.tables.saturation);
    assert_eq!(p.tables.queue_thresholds, f.tables.queue_thresholds);
    let names = |e: &lcmp_sim::experiment::Experiment| -> Vec<String> {
        e.schemes.iter().map(|s| s.name().to_string()).collect()
    };
    assert_eq!(names(&p), names(&f));
    assert_eq!(p.seeds, f.seeds);
    assert_eq!(
        (p.engine.ideal, p.engine.ack_path, p.engine.flow_id),
        (IdealFct::Rtt, AckPath::Routed, FlowIdentity::Artifact)
    );
    assert_eq!(p.engine.sample_on_decision, f.engine.sample_on_decision);
    assert!(matches!(
        p.engine.packet.dci_pool,
        lcmp_sim::packet::DciPool::Artifact { buffer_mib: 128 }
    ));
    assert_eq!(f.engine.packet.dci_pool, lcmp_sim::packet::DciPool::Buffer);
    // DC1's pool in the artifact's arithmetic (its 128 MiB DCI buffer).
    let dc1_pool = |topology| {
        lcmp_sim::packet::artifact_pool::dci_pools(
            topology,
            &lcmp_sim::packet::PacketConfig::DEFAULT,
            128,
        )[0]
        .1
    };
    // The fluid model's one pool is that DC1 pool, not testbed8's DC1
    // (nor bso13's own 6 GB).
    let dc1 = dc1_pool(&p.topology);
    assert_eq!(p.topology.buffer_bytes, dc1);
    assert_ne!(dc1, f.topology.buffer_bytes);
    // On testbed8 that arithmetic gives the preset's DC1 pool.
    let t8 = exp(&["--preset", "artifact"]).expect("valid");
    assert_eq!(t8.topology.buffer_bytes, dc1_pool(&t8.topology));
    // Given flags still win.
    let one = exp(&[
        "--preset",
        "artifact",
        "--topology",
        "bso13",
        "--pair",
        "DC1:DC13",
        "--window",
        "0.002",
    ])
    .expect("valid");
    assert_eq!(one.pairs, lcmp_sim::traffic::Pairs::One { src: 1, dst: 13 });
    assert!(one.windows_us.iter().all(|&w| (w - 2_000.0).abs() < 1e-9));
}
