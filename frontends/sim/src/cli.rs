//! The `lcmp sim` command: [`SimArgs`] (a clap `Args` struct the `lcmp`
//! tool flattens into its `sim` subcommand, defined in [`crate::args`]) and
//! [`run`].

use std::io::IsTerminal as _;

use serde::Serialize;

use lcmp_tables::Saturation;

pub use crate::args::{
    experiment, parse_sim_args, to_args, LoadRef, Preset, SimAction, SimArgs,
    ARTIFACT_DCI_BUFFER_BYTES, ARTIFACT_WINDOW_US, MIN_BUFFER_BYTES,
};
use crate::engine::{AckPath, FlowIdentity, IdealFct, Model};
use crate::error::SimError;
use crate::experiment::{Experiment, LoadReference};
use crate::report;
pub use crate::report::print;
use crate::traffic::Pairs;

/// The settings echoed into `--json` output.
#[derive(Clone, Debug, Serialize)]
pub struct EchoConfig {
    /// Topology name.
    pub topology: String,
    /// Workload name.
    pub workload: String,
    /// `DC1->DC8` or `all`.
    pub pairs: String,
    /// `nic` or `interdc`.
    pub load_reference: String,
    /// The reference capacity, bits per second.
    pub reference_bps: f64,
    /// Arrival windows per load, seconds.
    pub windows_s: Vec<f64>,
    /// Step, microseconds.
    pub dt_us: u32,
    /// Sampling cadence, microseconds.
    pub sample_us: u32,
    /// The focus pair, if any.
    pub focus: Option<String>,
    /// Base weights.
    pub weights: String,
    /// Base delay saturation: `shift N` or `auto`.
    pub saturation: String,
    /// The cost band (255: none).
    pub band: u8,
    /// Explicit queue thresholds, bytes (empty: each port's buffer).
    pub queue_thresholds: Vec<u64>,
    /// The DCI egress buffer, bytes.
    pub buffer_bytes: u64,
    /// `oneway` or `rtt`.
    pub ideal: String,
    /// `none` or `routed`.
    pub ack_path: String,
    /// `five-tuple` or `artifact`.
    pub flow_id: String,
    /// `periodic` or `decision`.
    pub sampling: String,
    /// `fluid` or `packet`.
    pub model: String,
    /// The commit the simulator was built from ([`crate::COMMIT`]).
    pub commit: String,
    /// `--label`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Wall-clock time of the whole sweep, seconds.
    pub wall_time_s: f64,
}

/// One line naming what decides a run's regime: the model, the preset,
/// the profile, the delay saturation, the idle timeout, the window(s),
/// the seeds, the commit and the command line.
#[must_use]
pub fn run_label(args: &SimArgs, exp: &Experiment) -> String {
    let model = match exp.engine.model {
        Model::Fluid => "fluid (flow-level)",
        Model::Packet => "packet (discrete-event RoCE)",
    };
    let preset = match args.preset {
        Some(Preset::Paper) => "paper",
        Some(Preset::Artifact) => "artifact",
        None => "none",
    };
    let saturation = match exp.tables.saturation {
        Saturation::Shift(s) => format!("shift {s}"),
        Saturation::Auto => "auto".into(),
    };
    let windows: Vec<String> = exp
        .windows_us
        .iter()
        // Shortest form: a GoogleRPC window of 0.5 ms is `0.0005`, not `0.001`.
        .map(|w| format!("{}", w / 1e6))
        .collect();
    let seeds = match (exp.seeds.first(), exp.seeds.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => "none".into(),
    };
    format!(
        "model {model}; preset {preset}; profile {}; saturation {saturation}; idle timeout {} ms; window {} s; seeds {seeds}; commit {}; command: lcmp sim {}",
        args.profile.as_deref().unwrap_or(if preset == "artifact" { "artifact's" } else { "paper" }),
        exp.tables.params.idle_timeout_ticks / 1000,
        windows.join("/"),
        crate::COMMIT,
        to_args(args).join(" ")
    )
}

/// Runs `lcmp sim`: a subcommand, or the experiments of `plan` (the
/// arguments given, or with none the main job: the fluid run, then the
/// packet run); each prints its tables (or JSON) to stdout and writes its
/// figures.
pub fn run(args: &SimArgs) -> Result<(), SimError> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    if jobs == 0 {
        return Err(SimError::Config("--jobs: give at least 1".into()));
    }
    match &args.action {
        Some(SimAction::Sweep(s)) if s.emit_jobs => return crate::sweep::emit_jobs(args, s),
        Some(SimAction::Sweep(s)) => return crate::sweep::run(args, s, jobs).map(|_| ()),
        Some(SimAction::Merge(m)) => return crate::sweep::merge(m),
        Some(SimAction::Figure(f)) => return crate::figure::run(f, jobs, run_label),
        Some(SimAction::Replay(r)) => {
            let source = match (&r.traffic_file, &r.flows_of) {
                (Some(t), _) => crate::artifact_files::FlowSource::TrafficFile(t),
                (None, Some(f)) => crate::artifact_files::FlowSource::FctLog(f),
                (None, None) => {
                    return Err(SimError::Config(
                        "replay: give --traffic-file or --flows-of".into(),
                    ))
                }
            };
            return crate::artifact_files::replay(args, source, r.fct_out.as_deref());
        }
        Some(SimAction::FctCompare(c)) => {
            print!(
                "{}",
                crate::artifact_files::compare_files(&c.ours, &c.artifact, c.top)?
            );
            return Ok(());
        }
        None => {}
    }
    for (heading, a) in plan(args)? {
        if let Some(h) = heading {
            print(&h)?;
        }
        run_experiment(&a, jobs)?;
    }
    Ok(())
}

/// The experiments `lcmp sim` runs for `args`, in order, each with the
/// heading printed before it: `args` alone, or for the main job the
/// fluid run and then [`MAIN_JOB_PACKET_ARGS`] (its figures, with
/// `--plot DIR`, in `DIR/packet`).
fn plan(args: &SimArgs) -> Result<Vec<(Option<String>, SimArgs)>, SimError> {
    if !is_main_job(args)? {
        return Ok(vec![(None, args.clone())]);
    }
    let mut packet = parse_sim_args(MAIN_JOB_PACKET_ARGS.split_whitespace())
        .map_err(|e| SimError::Config(format!("the main job's packet run: {e}")))?;
    packet.jobs = args.jobs;
    packet.plot = args.plot.as_ref().map(|d| d.join("packet"));
    Ok(vec![
        (
            Some("== the main job, 1 of 2: the fluid (flow-level) model, the paper's parameters ==\n".into()),
            args.clone(),
        ),
        (
            Some(format!(
                "\n== the main job, 2 of 2: the packet model (discrete-event RoCE) in the artifact's regime (alone: lcmp sim {MAIN_JOB_PACKET_ARGS}) ==\n"
            )),
            packet,
        ),
    ])
}

/// The packet model's run in the main job (`lcmp sim` with no
/// arguments, issue 31 item 6): the artifact's settings (`--preset
/// artifact`: testbed8, web search, DC1 to DC8, 200 ms of arrivals) at
/// 30 % load, ECMP, UCMP and LCMP on one seed: about 60 CPU-seconds,
/// 31 s of wall time on two free cores (docs/simulator.md, "Cost").
pub const MAIN_JOB_PACKET_ARGS: &str =
    "--model packet --preset artifact --load 0.3 --schemes ecmp,ucmp,lcmp --seeds 1";

/// Whether `args` is the main job: `lcmp sim` with no arguments but
/// `--jobs` and `--plot` (the fluid model's default run, then
/// [`MAIN_JOB_PACKET_ARGS`]).
fn is_main_job(args: &SimArgs) -> Result<bool, SimError> {
    let default = parse_sim_args(std::iter::empty::<&str>())
        .map_err(|e| SimError::Config(format!("the main job's arguments: {e}")))?;
    let mut plain = args.clone();
    plain.jobs = None;
    plain.plot = None;
    Ok(plain == default)
}

/// Runs one experiment of `lcmp sim` on `jobs` threads: prints its tables
/// (or JSON) and writes its figures.
fn run_experiment(args: &SimArgs, jobs: usize) -> Result<(), SimError> {
    let exp = experiment(args)?;
    // Packet runs are long: spread them so that the last ones do not
    // leave a core idle.
    let jobs = match (args.jobs, exp.engine.model) {
        (None, Model::Packet) => crate::experiment::packet_threads(exp.runs(), jobs),
        _ => jobs,
    };
    let bar = if !args.json && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(exp.runs() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} runs",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let started = std::time::Instant::now();
    // Not a terminal (a log, a pipe, a batch job): one progress line per
    // finished run on stderr instead of the bar.
    let lines = !std::io::stderr().is_terminal();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = exp.runs();
    let tick = || {
        bar.inc(1);
        if lines {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            eprintln!(
                "lcmp sim: {n}/{total} runs done ({:.1} s)",
                started.elapsed().as_secs_f64()
            );
        }
    };
    let results = exp.run(jobs, &tick)?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let pairs = match exp.pairs {
        Pairs::One { src, dst } => format!(
            "{}->{}",
            exp.topology
                .dc(src)
                .map_or(String::new(), |d| d.name.clone()),
            exp.topology
                .dc(dst)
                .map_or(String::new(), |d| d.name.clone())
        ),
        Pairs::AllToAll => "all".into(),
    };
    let reference = match exp.reference {
        LoadReference::Nic => "nic",
        LoadReference::InterDc => "interdc",
    };
    let title = format!(
        "lcmp sim: {}, {}, traffic {}, load relative to {:.0} Gbps ({}){}",
        exp.topology.name,
        exp.workload.name(),
        pairs,
        exp.reference_bps() / 1e9,
        reference,
        args.focus
            .as_deref()
            .map_or(String::new(), |f| format!(", flows {f} only"))
    );
    let mut text_title = format!("{title}\n{}", run_label(args, &exp));
    for line in exp.offered_lines() {
        text_title.push('\n');
        text_title.push_str(&line);
    }
    if args.json {
        let w = exp.tables.params.weights;
        let config = EchoConfig {
            topology: exp.topology.name.clone(),
            workload: exp.workload.name().to_string(),
            pairs,
            load_reference: reference.into(),
            reference_bps: exp.reference_bps(),
            windows_s: exp.windows_us.iter().map(|w| w * 1e-6).collect(),
            dt_us: exp.engine.dt_us,
            sample_us: exp.engine.sample_us,
            focus: args.focus.clone(),
            weights: format!(
                "alpha={},beta={},w_dl={},w_lc={},w_ql={},w_tl={},w_dp={},s_path={},s_cong={},s_total={}",
                w.alpha, w.beta, w.w_dl, w.w_lc, w.w_ql, w.w_tl, w.w_dp, w.s_path, w.s_cong, w.s_total
            ),
            saturation: match exp.tables.saturation {
                Saturation::Shift(s) => format!("shift {s}"),
                Saturation::Auto => "auto".into(),
            },
            band: exp.tables.params.band,
            queue_thresholds: exp.tables.queue_thresholds.clone().unwrap_or_default(),
            buffer_bytes: exp.topology.buffer_bytes,
            ideal: match exp.engine.ideal {
                IdealFct::OneWay => "oneway",
                IdealFct::Rtt => "rtt",
            }
            .into(),
            ack_path: match exp.engine.ack_path {
                AckPath::None => "none",
                AckPath::Routed => "routed",
            }
            .into(),
            flow_id: match exp.engine.flow_id {
                FlowIdentity::FiveTuple => "five-tuple",
                FlowIdentity::Artifact => "artifact",
            }
            .into(),
            sampling: if exp.engine.sample_on_decision {
                "decision"
            } else {
                "periodic"
            }
            .into(),
            model: match exp.engine.model {
                Model::Fluid => "fluid",
                Model::Packet => "packet",
            }
            .into(),
            commit: crate::COMMIT.into(),
            label: args.label.clone(),
            wall_time_s: wall,
        };
        let doc = report::JsonReport {
            config,
            results: &results,
            summary: report::summarise(&results),
            comparisons: report::compare(&results),
        };
        let text =
            serde_json::to_string_pretty(&doc).map_err(|e| SimError::Output(e.to_string()))?;
        print(&format!("{text}\n"))?;
    } else {
        print(&format!(
            "{}\n{} runs in {:.1} s on {} thread(s)\n",
            report::text(&text_title, &results),
            results.len(),
            wall,
            jobs
        ))?;
    }
    if args.vs_artifact {
        let band = crate::vs_artifact::Band::FULL;
        for &load in &exp.loads {
            let v = crate::vs_artifact::check(&results, load, 0..crate::vs_artifact::BINS, band)
                .map_err(|e| SimError::Config(format!("--vs-artifact: {e}")))?;
            print(&crate::vs_artifact::text(&v, band))?;
        }
    }
    if let Some(dir) = &args.plot {
        let files = crate::plot::write_all(dir, &title, &results)?;
        eprintln!("wrote {} figures to {}", files.len(), dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use crate::args::parse_sim_args;

    fn args(a: &[&str]) -> crate::args::SimArgs {
        parse_sim_args(a.iter().copied()).expect("parses")
    }

    /// `lcmp sim` alone (also with `--jobs` or `--plot`) is the main job,
    /// fluid then packet; any other argument runs what it asks for alone.
    #[test]
    fn only_lcmp_sim_with_no_arguments_is_the_main_job() {
        for main in [&[][..], &["--jobs", "2"], &["--plot", "figs"]] {
            assert!(super::is_main_job(&args(main)).expect("checks"), "{main:?}");
        }
        for other in [
            &["--load", "0.3"][..],
            &["--model", "packet"],
            &["--json"],
            &["--seeds", "2"],
            &super::MAIN_JOB_PACKET_ARGS
                .split_whitespace()
                .collect::<Vec<_>>(),
        ] {
            assert!(
                !super::is_main_job(&args(other)).expect("checks"),
                "{other:?}"
            );
        }
    }

    /// The main job runs the fluid model's default run, then the packet
    /// model's, each under its heading; anything else runs as given.
    #[test]
    fn the_main_job_is_the_fluid_run_then_the_packet_run() {
        let plain = args(&[]);
        let plan = super::plan(&plain).expect("plan");
        assert_eq!(plan.len(), 2);
        assert_eq!(plan[0].1, plain);
        assert!(plan[0]
            .0
            .as_deref()
            .is_some_and(|h| h.contains("1 of 2: the fluid")));
        assert_eq!(plan[1].1.model.as_deref(), Some("packet"));
        assert_eq!(plan[1].1.plot, None);
        assert!(plan[1]
            .0
            .as_deref()
            .is_some_and(|h| h.contains("2 of 2: the packet")));
        let plotted = super::plan(&args(&["--plot", "figs", "--jobs", "3"])).expect("plan");
        assert_eq!(plotted[0].1.plot, Some("figs".into()));
        assert_eq!(
            plotted[1].1.plot,
            Some(std::path::Path::new("figs").join("packet"))
        );
        assert_eq!(plotted[1].1.jobs, Some(3));
        let other = args(&["--load", "0.3"]);
        assert_eq!(super::plan(&other).expect("plan"), [(None, other)]);
    }

    /// The main job's second run is the packet model in the artifact's
    /// regime: its preset, 30 %, the three schemes, one seed, 200 ms.
    #[test]
    fn the_main_jobs_packet_run_is_the_artifacts_regime_at_30_percent() {
        let a = args(
            &super::MAIN_JOB_PACKET_ARGS
                .split_whitespace()
                .collect::<Vec<_>>(),
        );
        let exp = crate::args::experiment(&a).expect("experiment");
        assert_eq!(exp.engine.model, crate::engine::Model::Packet);
        assert_eq!(a.preset, Some(crate::args::Preset::Artifact));
        assert_eq!(exp.loads, [0.3]);
        assert_eq!(exp.seeds, [1]);
        assert_eq!(exp.windows_us, [crate::args::ARTIFACT_WINDOW_US]);
        let label = super::run_label(&a, &exp);
        assert!(label.contains("--schemes ecmp,ucmp,lcmp"), "{label}");
    }

    /// The label gives each window as given, however short.
    #[test]
    fn the_run_label_gives_the_window_as_given() {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            sim: crate::args::SimArgs,
        }
        for (arg, shown) in [("0.0005", "window 0.0005 s"), ("0.2", "window 0.2 s")] {
            let args = Cli::try_parse_from(["sim", "--load", "0.3", "--window", arg])
                .expect("parses")
                .sim;
            let exp = crate::args::experiment(&args).expect("experiment");
            let label = super::run_label(&args, &exp);
            assert!(label.contains(shown), "{label}");
        }
    }
}
