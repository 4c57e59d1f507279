//! The `lcmp sim` command line as typed arguments: [`SimArgs`] and its
//! subcommands' arguments (clap `Args` structs the `lcmp` tool flattens),
//! their resolution into an [`Experiment`] ([`experiment`]), and the one
//! hand inversion of clap, [`to_args`] (job lines and run labels). The
//! command ([`crate::cli`]) and the sweep ([`crate::sweep`]) both build on
//! this module; neither imports the other's internals (issue 31).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use lcmp_tables::{
    parse_bytes, parse_profile, parse_queue_thresholds, BuildOptions, Saturation, Topology,
};

use crate::dci::{valid_flow_slots, MAX_FLOW_SLOTS};
use crate::engine::{AckPath, EngineConfig, FlowIdentity, IdealFct, Model};
use crate::error::SimError;
use crate::experiment::{
    paper_window_us, parse_weights, Experiment, LoadReference, SchemeSpec, SIM_IDLE_TIMEOUT_US,
};
use crate::packet::artifact_pool::ARTIFACT_DCI_BUFFER_MIB;
use crate::packet::DciPool;
use crate::traffic::{Pairs, SourcePorts};
use crate::workload::Workload;

/// `--preset`'s parser: its error names the presets on the error's first
/// line (the one line `lcmp` prints).
fn parse_preset(s: &str) -> Result<Preset, String> {
    match s {
        "paper" => Ok(Preset::Paper),
        "artifact" => Ok(Preset::Artifact),
        _ => Err("the presets are `paper` and `artifact`".into()),
    }
}

/// Traffic presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// The paper's testbed8 regime (§6.1, Fig. 5, Fig. 11) with the paper's
    /// parameters: flows DC1 -> DC8 only, load relative to 16 x 100 Gbps,
    /// arrival windows of 0.15/0.10/0.07 s for 30/50/80 %; schemes ecmp,
    /// ucmp, lcmp, rm-alpha, rm-beta; 5 seeds (each unless given
    /// explicitly). Not the artifact's regime: see `artifact`.
    Paper,
    /// The public artifact's published regime (docs/simulator.md):
    /// testbed8, DC1 -> DC8, 0.2 s arrival windows, delay saturation shift
    /// 9, `S_cong = 2`, the artifact's wrapped queue thresholds, its DCI
    /// buffer, the round-trip ideal FCT, routed acknowledgements, its
    /// flow-table keys and its sampling before each decision; schemes
    /// ecmp, ucmp, lcmp; 5 seeds (each unless given explicitly). The fabric,
    /// PFC and DCQCN of its runs need `--model packet`. With `--topology
    /// bso13`, its 13-DC regime (Figs. 7 and 8): the same settings,
    /// all-to-all, the load relative to the hosts' NICs, its traffic
    /// files' windows (10 ms; 8 ms at 80 %).
    Artifact,
}

/// What a load is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadRef {
    /// The source hosts' NICs.
    Nic,
    /// The inter-DC capacity.
    Interdc,
}

/// Subcommands of `lcmp sim`.
#[derive(Clone, Debug, PartialEq, Subcommand)]
pub enum SimAction {
    /// Grid search over LCMP settings against baselines, with the `lcmp
    /// sim` options given before `sweep` as the base (docs/simulator.md).
    Sweep(SweepArgs),
    /// Combine the JSON of `lcmp sim --json` runs (for example the jobs of
    /// `sweep --emit-jobs`) into one report: the sweep's ranking, table and
    /// figure for sweep jobs, else the `lcmp sim` tables.
    Merge(MergeArgs),
    /// One figure of the paper (1, 5, 7, 8, 9, 10, 11): runs what
    /// reproduces it and sets ours beside the artifact's data per size bin
    /// (`lcmp_sim::figure`); `--plan` prints the runs, `--emit-jobs` prints
    /// them as shell jobs and `--merge DIR` reads their output back.
    Figure(FigureArgs),
    /// Run the schemes of the `lcmp sim` options given before `replay` on
    /// the flows of one of the artifact's traffic files (its
    /// `src dst pg dport size start_time` format), one load and one seed,
    /// and write each scheme's per-flow FCTs in the artifact's FCT format
    /// (docs/simulator.md, "Ground truth: the artifact's simulator").
    Replay(ReplayArgs),
    /// Compare two FCT files flow by flow (ours from `replay --fct-out`,
    /// the artifact's `fct_dcqcn.txt`): FCTs within 1 and 10 %, p50 and
    /// p99 slowdowns per size range, the largest departures.
    FctCompare(FctCompareArgs),
}

/// Arguments of `lcmp sim replay`.
#[derive(Clone, Debug, PartialEq, Args)]
pub struct ReplayArgs {
    /// The artifact traffic file.
    #[arg(
        long,
        value_name = "PATH",
        required_unless_present = "flows_of",
        conflicts_with = "flows_of"
    )]
    pub traffic_file: Option<PathBuf>,
    /// Instead of a traffic file, the flows (addresses, size, start) of
    /// one of the artifact's FCT logs: its published runs whose traffic
    /// file it did not commit (the 7 064 flows of its Figure 1, 5, 10 and
    /// 11 logs at 30 %).
    #[arg(long, value_name = "PATH")]
    pub flows_of: Option<PathBuf>,
    /// Write `fct_<scheme>.txt` into this directory.
    #[arg(long, value_name = "DIR")]
    pub fct_out: Option<PathBuf>,
}

/// Arguments of `lcmp sim fct-compare`.
#[derive(Clone, Debug, PartialEq, Args)]
pub struct FctCompareArgs {
    /// Our FCT file (`lcmp sim replay --fct-out`).
    #[arg(long, value_name = "PATH")]
    pub ours: PathBuf,
    /// The artifact's FCT file.
    #[arg(long, value_name = "PATH")]
    pub artifact: PathBuf,
    /// How many of the largest departures to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

/// Arguments of `lcmp sim`.
#[derive(Clone, Debug, PartialEq, Args)]
pub struct SimArgs {
    /// `sweep`: a grid search instead of one run.
    #[command(subcommand)]
    pub action: Option<SimAction>,
    /// Topology: `testbed8`, `bso13`, or a topology JSON file.
    #[arg(long, default_value = "testbed8")]
    pub topology: String,
    /// Workload: `websearch`, `fbhadoop`, `alistorage`, or a CDF file.
    #[arg(long, default_value = "websearch")]
    pub workload: String,
    /// Offered loads, comma-separated [default: 0.3,0.5,0.8].
    #[arg(long, value_delimiter = ',')]
    pub load: Vec<f64>,
    /// Schemes: ecmp, ucmp, lcmp, rm-alpha, rm-beta, lcmp-w, lcmp-c,
    /// lcmp-wc, lcmp-t, lcmp-tuned [default: ecmp,ucmp,lcmp,lcmp-tuned;
    /// ecmp,ucmp,lcmp,rm-alpha,rm-beta with --preset paper; ecmp,ucmp,lcmp
    /// with --preset artifact].
    #[arg(long, value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// Weights over the base profile's (the paper's unless --profile or
    /// --preset artifact), e.g. `alpha=3,beta=1,s_cong=3`.
    #[arg(long)]
    pub weights: Option<String>,
    /// Traffic between one DC pair, e.g. `DC1:DC8`, or `all` for all-to-all
    /// [default: DC1:DC8 on testbed8, else all].
    #[arg(long)]
    pub pair: Option<String>,
    /// Report only flows between two DCs (either direction), e.g. `DC1:DC13`.
    #[arg(long)]
    pub focus: Option<String>,
    /// Also record every flow between two DCs (either direction: size and
    /// FCT slowdown, per scheme and seed) in the --json output, e.g.
    /// `DC1:DC13` (Figure 8 from Figure 7's runs); changes nothing else.
    #[arg(long, value_name = "A:B")]
    pub pair_flows: Option<String>,
    /// A traffic preset: `paper` or `artifact` (docs/simulator.md).
    #[arg(long, value_parser = parse_preset, value_name = "paper|artifact")]
    pub preset: Option<Preset>,
    /// What loads refer to [default: nic for one pair, interdc for all;
    /// nic with --preset artifact].
    #[arg(long, value_enum)]
    pub load_ref: Option<LoadRef>,
    /// Arrival window, seconds [default: 0.15/0.10/0.07 s at 30/50/80 %
    /// (else 0.05 / load) for one pair against NICs; 0.2 with --preset
    /// artifact (on bso13 0.01, 0.008 at 80 %); else 0.05].
    #[arg(long)]
    pub window: Option<f64>,
    /// First traffic seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of seeds (seed, seed + 1, ...); with two or more, means come
    /// with 95 % bootstrap intervals and schemes are compared with the
    /// baselines paired by seed [default: 1; 5 with --preset paper or
    /// artifact].
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Print JSON (see docs/simulator.md) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write SVG figures into this directory.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Hosts per DC.
    #[arg(long, default_value_t = 16)]
    pub hosts_per_dc: u16,
    /// The fluid engine's step, microseconds [default: 10]; the packet
    /// model is event-driven and refuses it.
    #[arg(long)]
    pub dt_us: Option<u32>,
    /// Queue sampling cadence of the deciders, microseconds.
    #[arg(long, default_value_t = 1000)]
    pub sample_us: u32,
    /// No congestion control: in the fluid model senders never converge
    /// to a fair share (line rate until done); in the packet model DCQCN is
    /// off (line rate, PFC only).
    #[arg(long)]
    pub no_cc: bool,
    /// Packet model: the senders' congestion control, `dcqcn`, `hpcc`,
    /// `timely` or `dctcp`, each with the artifact's parameters
    /// (docs/simulator.md, "Congestion controls") [default: dcqcn]; the
    /// fluid model has only its own.
    #[arg(long, value_name = "dcqcn|hpcc|timely|dctcp")]
    pub cc: Option<String>,
    /// The simulation model: `fluid` (time-stepped, flow-level, fast) or
    /// `packet` (discrete-event RoCE: leaf-spine fabrics, PFC, ECN, DCQCN,
    /// go-back-N, routed ACKs; docs/simulator.md) [default: fluid].
    #[arg(long, value_name = "fluid|packet")]
    pub model: Option<String>,
    /// Worker threads [default: available cores; for packet runs, up to
    /// twice that when it ends the last runs sooner, as 3 runs on 2 cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Points per slowdown-versus-size curve.
    #[arg(long, default_value_t = 12)]
    pub bins: usize,
    /// Delay saturation (Alg. 1): delays of `1 << SHIFT` units score 255,
    /// or `auto` [default: 5; 9 with --preset artifact].
    #[arg(long, value_name = "SHIFT|auto")]
    pub saturation: Option<String>,
    /// Every DCI egress buffer, bytes (`5GB`, `128MiB`, `1588219905`)
    /// [default: the topology's; the artifact's DCI pool with --preset
    /// artifact].
    #[arg(long, value_name = "BYTES")]
    pub buffer: Option<String>,
    /// The ideal FCT slowdowns divide by: `oneway` (size at NIC rate + the
    /// least one-way delay, paper §6.1) or `rtt` (the best minimum-hop
    /// path's round trip + size at its bottleneck, the artifact's)
    /// [default: oneway; rtt with --preset artifact].
    #[arg(long, value_name = "oneway|rtt")]
    pub ideal: Option<String>,
    /// When a flow is complete: `none` (its last byte arrives) or `routed`
    /// (the last acknowledgement is back; the deciders route the
    /// acknowledgements) [default: none; routed with --preset artifact].
    #[arg(long, value_name = "none|routed")]
    pub ack_path: Option<String>,
    /// The deciders' flow-cache key: `five-tuple`, or `artifact` (the
    /// artifact's colliding 32-bit key, with per-pair source ports)
    /// [default: five-tuple; artifact with --preset artifact].
    #[arg(long, value_name = "five-tuple|artifact")]
    pub flow_id: Option<String>,
    /// Flow-cache idle timeout of the deciders, milliseconds [default:
    /// 2000, the paper's].
    #[arg(long, value_name = "MS")]
    pub idle_timeout_ms: Option<String>,
    /// Flow-cache slots of every DCI switch: a power of two from 16 to
    /// 2^23, or `auto`, sized for the workload's flow rate and the
    /// switch's largest safe gap (docs/simulator.md, "Flow cache")
    /// [default: auto].
    #[arg(long, value_name = "SLOTS|auto")]
    pub flow_cache: Option<String>,
    /// Explicit queue thresholds for every DCI port: N non-decreasing byte
    /// counts (`0,500MB,...`), or `wrap32:BYTES`, a buffer's
    /// `floor(buffer * i / N)` stored in 32 bits as the artifact stores
    /// them [default: each port's buffer; wrap32:5GB with --preset
    /// artifact].
    #[arg(long, value_name = "LIST|wrap32:BYTES")]
    pub queue_thresholds: Option<String>,
    /// When the deciders get queue samples: `periodic` (every --sample-us)
    /// or `decision` (a switch's ports right before each of its
    /// first-packet decisions: the paper's Fig. 2 step 1, as the artifact
    /// does) [default: periodic; decision with --preset artifact].
    #[arg(long, value_name = "periodic|decision")]
    pub sampling: Option<String>,
    /// Base parameters of every LCMP-based scheme: a named profile
    /// (`paper`, `tuned`; docs/simulator.md), before --weights,
    /// --saturation and --band [default: paper; the artifact's with
    /// --preset artifact].
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// A label echoed into the JSON output's `config.label` (`sweep
    /// --emit-jobs` tags its jobs with it for `merge`).
    #[arg(long, hide = true)]
    pub label: Option<String>,
    /// Cost band: LCMP also cuts candidates costing more than the lowest
    /// cost plus K (0-255; 255 cuts nothing) [default: the profile's: 255;
    /// 8 with --profile tuned].
    #[arg(long, value_name = "K")]
    pub band: Option<String>,
    /// Packet model: one dynamic PFC threshold shift N (0-16) at every
    /// switch port (a queue may take `free >> N`) [default: the
    /// artifact's, by port rate: 3 at NIC rate, 2 at 200 G, 1 at 400 G].
    #[arg(long, value_name = "N")]
    pub pfc_shift: Option<u32>,
    /// Compare the ECMP, UCMP and LCMP curves (20 equal-count size bins,
    /// p50 and p99) with the artifact's published Figure 5 data at 30, 50
    /// and 80 % and print a verdict per scheme and load
    /// (docs/simulator.md, "The reproduction check"); sets --bins 20.
    #[arg(long)]
    pub vs_artifact: bool,
}

/// The artifact's DCI shared buffer at DC1 (and DC8) of testbed8, bytes:
/// `scratch/third.cc` configures 128 MiB and subtracts the ports' PFC
/// headroom `rate * delay / 8 / 1e9 * 3`, computed in 64 bits (the
/// 200 Gbps x 250 ms product wraps) and summed in 32 bits, so the
/// subtraction wraps too: `(2^27 - 2840932351 - 8 * 4096) mod 2^32`.
/// Derived in docs/simulator.md. The fluid model uses it for every DCI
/// switch; the packet model gives each DCI switch its own pool
/// ([`DciPool::Artifact`]).
pub const ARTIFACT_DCI_BUFFER_BYTES: u64 = 1_588_219_905;

/// The least `--buffer`: 1 MB. Smaller DCI buffers are outside what the
/// models were checked with (`--buffer 1` ran for minutes with no output).
pub const MIN_BUFFER_BYTES: u64 = 1_000_000;

/// The artifact's arrival window, microseconds (its 0.3-load runs span
/// 199.7 ms of arrivals).
pub const ARTIFACT_WINDOW_US: f64 = 200_000.0;

/// The artifact's arrival window on its 13-DC network, microseconds
/// (its `traffic_WebSearch_13DC-0.{3,5}util.txt` span 2.000-2.010 s).
pub const ARTIFACT13_WINDOW_US: f64 = 10_000.0;

/// The artifact's arrival window on its 13-DC network at `load`,
/// microseconds: the span of its traffic file's arrivals, 10 ms but at
/// 80 %, whose `traffic_WebSearch_13DC-0.8util.txt` ends at 2.00799 s (8
/// ms of arrivals, 9 590 flows at 0.82 of the 208 NICs; its Figs. 7 and 8
/// are runs of that file). Other loads: 10 ms.
///
/// ```
/// use lcmp_sim::args::artifact13_window_us;
/// assert_eq!(artifact13_window_us(0.8), 8_000.0);
/// assert_eq!(artifact13_window_us(0.5), 10_000.0);
/// ```
#[must_use]
pub fn artifact13_window_us(load: f64) -> f64 {
    // The load in whole percent: the artifact's files are 30, 50 and 80 %.
    if (load * 100.0).round() == 80.0 {
        8_000.0
    } else {
        ARTIFACT13_WINDOW_US
    }
}

/// DC1's DCI pool in the artifact's arithmetic on `topology`
/// (`packet::artifact_pool::dci_pools`), the one pool the fluid model
/// gives every DCI switch (on testbed8 it is [`ARTIFACT_DCI_BUFFER_BYTES`]).
fn artifact_dc1_pool(topology: &Topology) -> u64 {
    crate::packet::artifact_pool::dci_pools(
        topology,
        &crate::packet::PacketConfig::DEFAULT,
        ARTIFACT_DCI_BUFFER_MIB,
    )
    .first()
    .map_or(ARTIFACT_DCI_BUFFER_BYTES, |&(_, bytes)| bytes)
}

/// One of `choices` by name, or a one-line error naming them all.
fn choice<T: Copy>(flag: &str, text: &str, choices: &[(&str, T)]) -> Result<T, SimError> {
    choices
        .iter()
        .find(|(name, _)| *name == text.trim())
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|c| c.0).collect();
            SimError::Config(format!(
                "{flag}: expected {}, got `{text}`",
                names.join(" or ")
            ))
        })
}

/// An integer in `lo..=hi`, or a one-line error.
fn integer<T: core::str::FromStr + PartialOrd + core::fmt::Display>(
    flag: &str,
    text: &str,
    lo: T,
    hi: T,
) -> Result<T, SimError> {
    text.trim()
        .parse::<T>()
        .ok()
        .filter(|v| *v >= lo && *v <= hi)
        .ok_or_else(|| SimError::Config(format!("{flag}: expected {lo} to {hi}, got `{text}`")))
}

fn saturation(text: &str) -> Result<Saturation, SimError> {
    match text {
        "auto" => Ok(Saturation::Auto),
        s => s
            .parse::<u8>()
            .ok()
            .filter(|&v| v < 32)
            .map(Saturation::Shift)
            .ok_or_else(|| {
                SimError::Config(format!("--saturation: expected 0..=31 or auto, got `{s}`"))
            }),
    }
}

fn dc_pair(topo: &Topology, text: &str, flag: &str) -> Result<(u16, u16), SimError> {
    let bad = || {
        SimError::Config(format!(
            "{flag}: expected two DCs of the topology, e.g. DC1:DC8, got `{text}`"
        ))
    };
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let id = |s: &str| {
        topo.dc_id(s.trim()).or_else(|| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|&i| topo.dc(i).is_some())
        })
    };
    let (a, b) = (id(a).ok_or_else(bad)?, id(b).ok_or_else(bad)?);
    if a == b {
        return Err(bad());
    }
    Ok((a, b))
}

fn load_topology(name: &str) -> Result<Topology, SimError> {
    if let Some(t) = Topology::embedded(name) {
        return Ok(t);
    }
    let text = std::fs::read_to_string(name).map_err(|e| {
        SimError::Topology(format!(
            "`{name}` is neither testbed8, bso13 nor a readable file ({e})"
        ))
    })?;
    Topology::from_json(&text).map_err(|e| SimError::Topology(format!("{name}: {e}")))
}

fn load_workload(name: &str) -> Result<Workload, SimError> {
    if let Some(w) = Workload::embedded(name) {
        return Ok(w);
    }
    let text = std::fs::read_to_string(name).map_err(|e| {
        SimError::Workload(format!(
            "`{name}` is neither websearch, fbhadoop, alistorage nor a readable file ({e})"
        ))
    })?;
    Workload::parse(name, &text)
}

/// Parses `lcmp sim`'s arguments (those after `sim`) as the command line
/// does: for tests, and for the jobs a figure emits.
///
/// # Errors
/// Clap's error for arguments `lcmp sim` would refuse.
pub fn parse_sim_args<I, S>(args: I) -> Result<SimArgs, clap::Error>
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    use clap::Parser as _;
    /// `lcmp sim`'s arguments on their own.
    #[derive(clap::Parser)]
    struct Sim {
        #[command(flatten)]
        sim: SimArgs,
    }
    Sim::try_parse_from(
        std::iter::once(std::ffi::OsString::from("sim")).chain(args.into_iter().map(Into::into)),
    )
    .map(|s| s.sim)
}

/// The command-line arguments that parse back to `a` (without its
/// subcommand, `--plot` and `--jobs`): what `sweep --emit-jobs` writes
/// into each job's command line.
///
/// ```
/// # use clap::Parser;
/// # use lcmp_sim::cli::{to_args, SimArgs};
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     sim: SimArgs,
/// }
/// let a = Cli::parse_from(["sim", "--load", "0.3,0.8", "--band", "8", "--no-cc"]).sim;
/// let b = Cli::parse_from(["sim".to_string()].into_iter().chain(to_args(&a))).sim;
/// assert_eq!(a, b);
/// ```
pub fn to_args(a: &SimArgs) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut opt = |flag: &str, value: Option<String>| {
        if let Some(x) = value {
            v.push(format!("--{flag}"));
            v.push(x);
        }
    };
    opt("topology", Some(a.topology.clone()));
    opt("workload", Some(a.workload.clone()));
    let list = |l: &[String]| (!l.is_empty()).then(|| l.join(","));
    opt(
        "load",
        list(&a.load.iter().map(|l| l.to_string()).collect::<Vec<_>>()),
    );
    opt("schemes", list(&a.schemes));
    opt("weights", a.weights.clone());
    opt("pair", a.pair.clone());
    opt("focus", a.focus.clone());
    opt("pair-flows", a.pair_flows.clone());
    opt(
        "preset",
        a.preset.map(|p| match p {
            Preset::Paper => "paper".into(),
            Preset::Artifact => "artifact".into(),
        }),
    );
    opt(
        "load-ref",
        a.load_ref.map(|r| match r {
            LoadRef::Nic => "nic".into(),
            LoadRef::Interdc => "interdc".into(),
        }),
    );
    opt("window", a.window.map(|w| w.to_string()));
    opt("seed", Some(a.seed.to_string()));
    opt("seeds", a.seeds.map(|s| s.to_string()));
    opt("hosts-per-dc", Some(a.hosts_per_dc.to_string()));
    opt("dt-us", a.dt_us.map(|d| d.to_string()));
    opt("sample-us", Some(a.sample_us.to_string()));
    opt("model", a.model.clone());
    opt("cc", a.cc.clone());
    opt("bins", Some(a.bins.to_string()));
    opt("saturation", a.saturation.clone());
    opt("buffer", a.buffer.clone());
    opt("ideal", a.ideal.clone());
    opt("ack-path", a.ack_path.clone());
    opt("flow-id", a.flow_id.clone());
    opt("idle-timeout-ms", a.idle_timeout_ms.clone());
    opt("flow-cache", a.flow_cache.clone());
    opt("queue-thresholds", a.queue_thresholds.clone());
    opt("sampling", a.sampling.clone());
    opt("profile", a.profile.clone());
    opt("label", a.label.clone());
    opt("band", a.band.clone());
    opt("pfc-shift", a.pfc_shift.map(|n| n.to_string()));
    if a.json {
        v.push("--json".into());
    }
    if a.no_cc {
        v.push("--no-cc".into());
    }
    if a.vs_artifact {
        v.push("--vs-artifact".into());
    }
    v
}

/// Turns the arguments into an experiment (no simulation yet).
pub fn experiment(args: &SimArgs) -> Result<Experiment, SimError> {
    let artifact = args.preset == Some(Preset::Artifact);
    let paper = args.preset == Some(Preset::Paper) || artifact;
    // The artifact's two networks: testbed8 (`8DC-hetero`) and bso13
    // (`13DC-hetero`, its 13-DC regime: all-to-all, the load relative to
    // the hosts' NICs, 10 ms of arrivals).
    let artifact13 = artifact && args.topology == "bso13";
    if artifact && !artifact13 && args.topology != "testbed8" {
        return Err(SimError::Config(
            "--preset artifact is defined for --topology testbed8 and bso13 (the artifact's two networks)".into(),
        ));
    }
    if paper && !artifact && args.topology != "testbed8" {
        return Err(SimError::Config(
            "--preset paper is defined for --topology testbed8 (for bso13 use --preset artifact)"
                .into(),
        ));
    }
    let mut topology = load_topology(&args.topology)?;
    match args.buffer.as_deref() {
        Some(b) => {
            topology.buffer_bytes = parse_bytes(b)
                .ok()
                .filter(|&v| v >= MIN_BUFFER_BYTES)
                .ok_or_else(|| {
                    SimError::Config(format!(
                        "--buffer: expected a byte count of at least 1MB such as 5GB or 128MiB, got `{b}`"
                    ))
                })?;
        }
        None if artifact13 => topology.buffer_bytes = artifact_dc1_pool(&topology),
        None if artifact => topology.buffer_bytes = ARTIFACT_DCI_BUFFER_BYTES,
        None => {}
    }
    let workload = load_workload(&args.workload)?;
    let pairs = match args.pair.as_deref() {
        Some("all") => Pairs::AllToAll,
        Some(p) => {
            let (src, dst) = dc_pair(&topology, p, "--pair")?;
            Pairs::One { src, dst }
        }
        None if artifact13 => Pairs::AllToAll,
        None if topology.name == "testbed8" || paper => {
            let (src, dst) = dc_pair(&topology, "DC1:DC8", "--pair")?;
            Pairs::One { src, dst }
        }
        None => Pairs::AllToAll,
    };
    let reference = match (args.load_ref, pairs) {
        (None, _) if artifact13 => LoadReference::Nic,
        (Some(LoadRef::Nic), _) | (None, Pairs::One { .. }) => LoadReference::Nic,
        (Some(LoadRef::Interdc), _) | (None, Pairs::AllToAll) => LoadReference::InterDc,
    };
    let loads = if args.load.is_empty() {
        vec![0.3, 0.5, 0.8]
    } else {
        args.load.clone()
    };
    let windows_us = loads
        .iter()
        .map(|&l| match args.window {
            Some(w) => w * 1e6,
            None if artifact13 => artifact13_window_us(l),
            None if artifact => ARTIFACT_WINDOW_US,
            None if matches!(pairs, Pairs::One { .. }) && reference == LoadReference::Nic => {
                paper_window_us(l)
            }
            None => 50_000.0,
        })
        .collect();
    let names: Vec<String> = if !args.schemes.is_empty() {
        args.schemes.clone()
    } else if paper && !artifact {
        ["ecmp", "ucmp", "lcmp", "rm-alpha", "rm-beta"]
            .map(String::from)
            .to_vec()
    } else if artifact {
        ["ecmp", "ucmp", "lcmp"].map(String::from).to_vec()
    } else {
        ["ecmp", "ucmp", "lcmp", "lcmp-tuned"]
            .map(String::from)
            .to_vec()
    };
    let mut schemes = Vec::new();
    for n in names.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let s = SchemeSpec::parse(n).ok_or_else(|| {
            let all: Vec<&str> = SchemeSpec::ALL.iter().map(|s| s.name()).collect();
            SimError::Config(format!(
                "--schemes: unknown scheme `{n}` (known: {})",
                all.join(", ")
            ))
        })?;
        if !schemes.contains(&s) {
            schemes.push(s);
        }
    }
    let mut tables = Experiment::default_tables();
    match args.profile.as_deref() {
        Some(name) => {
            let profile = parse_profile(name)
                .map_err(|e| SimError::Config(format!("--profile `{name}`: {e}")))?;
            let idle = tables.params.idle_timeout_ticks;
            tables = BuildOptions::for_profile(profile);
            tables.params.idle_timeout_ticks = idle;
        }
        None if artifact => {
            // The artifact's runs set S_CONG 2 in their configuration
            // (`mix/config/8DC-hetero/config_batch.txt`, `scratch/third.cc`)
            // and its compiled DCI switch saturates delays at 512 ms; its
            // trend term is nearly inert (docs/simulator.md): w_tl = 0.
            tables.params.weights.s_cong = 2;
            tables.params.weights.w_tl = 0;
            tables.saturation = Saturation::Shift(9);
        }
        None => {}
    }
    if let Some(w) = &args.weights {
        tables.params.weights = parse_weights(w, tables.params.weights)?;
    }
    let thresholds = |q: &str| {
        parse_queue_thresholds(q, tables.levels).map_err(|e| {
            SimError::Config(format!(
                "--queue-thresholds `{q}`: {e} (give {} non-decreasing byte counts, or wrap32:BYTES)",
                tables.levels
            ))
        })
    };
    tables.queue_thresholds = match args.queue_thresholds.as_deref() {
        Some(q) => Some(thresholds(q)?),
        None if artifact => Some(thresholds("wrap32:5GB")?),
        None => None,
    };
    if let Some(k) = &args.band {
        tables.params.band = integer("--band", k, 0u8, 255)?;
    }
    if let Some(s) = args.saturation.as_deref() {
        tables.saturation = saturation(s)?;
    }
    let idle_ms = match &args.idle_timeout_ms {
        Some(ms) => integer("--idle-timeout-ms", ms, 1u32, u32::MAX / 1000)?,
        None => SIM_IDLE_TIMEOUT_US / 1000,
    };
    tables.params.idle_timeout_ticks = idle_ms.saturating_mul(1000);
    let n_seeds = args.seeds.unwrap_or(if paper { 5 } else { 1 });
    if n_seeds == 0 || n_seeds > 1000 {
        return Err(SimError::Config("--seeds: give 1 to 1000".into()));
    }
    let seeds = (0..n_seeds).map(|i| args.seed.wrapping_add(i)).collect();
    let focus = args
        .focus
        .as_deref()
        .map(|f| dc_pair(&topology, f, "--focus"))
        .transpose()?;
    let pair_flows = args
        .pair_flows
        .as_deref()
        .map(|f| dc_pair(&topology, f, "--pair-flows"))
        .transpose()?;
    let engine = EngineConfig {
        dt_us: args.dt_us.unwrap_or(10),
        sample_us: args.sample_us,
        hosts_per_dc: args.hosts_per_dc,
        congestion_control: !args.no_cc,
        sample_on_decision: match &args.sampling {
            Some(t) => choice("--sampling", t, &[("periodic", false), ("decision", true)])?,
            None => artifact,
        },
        ideal: match &args.ideal {
            Some(t) => choice(
                "--ideal",
                t,
                &[("oneway", IdealFct::OneWay), ("rtt", IdealFct::Rtt)],
            )?,
            None if artifact => IdealFct::Rtt,
            None => IdealFct::OneWay,
        },
        ack_path: match &args.ack_path {
            Some(t) => choice(
                "--ack-path",
                t,
                &[("none", AckPath::None), ("routed", AckPath::Routed)],
            )?,
            None if artifact => AckPath::Routed,
            None => AckPath::None,
        },
        flow_id: match &args.flow_id {
            Some(t) => choice(
                "--flow-id",
                t,
                &[
                    ("five-tuple", FlowIdentity::FiveTuple),
                    ("artifact", FlowIdentity::Artifact),
                ],
            )?,
            None if artifact => FlowIdentity::Artifact,
            None => FlowIdentity::FiveTuple,
        },
        model: match &args.model {
            Some(t) => choice(
                "--model",
                t,
                &[("fluid", Model::Fluid), ("packet", Model::Packet)],
            )?,
            None => Model::Fluid,
        },
        ..EngineConfig::default()
    };
    let mut engine = engine;
    engine.flow_slots = match args.flow_cache.as_deref().map(str::trim) {
        None | Some("auto") => None,
        Some(n) => Some(
            n.parse::<usize>()
                .ok()
                .filter(|&v| valid_flow_slots(v))
                .ok_or_else(|| {
                    SimError::Config(format!(
                        "--flow-cache: expected `auto` or a power of two from 16 to {MAX_FLOW_SLOTS}, got `{n}`"
                    ))
                })?,
        ),
    };
    engine.packet.dcqcn = !args.no_cc;
    if let Some(cc) = args.cc.as_deref() {
        let kind = cc
            .parse::<crate::packet::cc::CcKind>()
            .map_err(|e| SimError::Config(format!("--cc: {e}")))?;
        if engine.model != Model::Packet && kind != crate::packet::cc::CcKind::Dcqcn {
            return Err(SimError::Config(format!(
                "--cc {kind}: only the packet model has it (add --model packet)"
            )));
        }
        if args.no_cc && kind != crate::packet::cc::CcKind::Dcqcn {
            return Err(SimError::Config(format!(
                "--cc {kind} and --no-cc: give one"
            )));
        }
        if !args.no_cc {
            engine.packet = engine.packet.clone().with_cc(kind);
        }
    }
    if artifact && args.buffer.is_none() {
        // Each DCI switch its own pool, as the artifact's 32-bit
        // arithmetic leaves it (ARTIFACT_DCI_BUFFER_BYTES is DC1's).
        engine.packet.dci_pool = DciPool::Artifact {
            buffer_mib: ARTIFACT_DCI_BUFFER_MIB,
        };
    }
    if let Some(n) = args.pfc_shift {
        if n > 16 {
            return Err(SimError::Config(format!(
                "--pfc-shift: give 0 to 16, got {n}"
            )));
        }
        engine.packet.pfc_shift = Some(n);
    }
    let sports = match engine.flow_id {
        FlowIdentity::Artifact => SourcePorts::PerPair,
        FlowIdentity::FiveTuple => SourcePorts::Random,
    };
    if args.dt_us.is_some() && args.model.as_deref() == Some("packet") {
        return Err(SimError::Config(
            "--dt-us: the packet model is event-driven and has no step; leave it out".into(),
        ));
    }
    if args.vs_artifact && args.json {
        return Err(SimError::Config(
            "--vs-artifact prints a text verdict; leave out --json".into(),
        ));
    }
    if args.bins == 0 || args.bins > 1000 {
        return Err(SimError::Config("--bins: give 1 to 1000".into()));
    }
    if args.vs_artifact && topology.name != "testbed8" {
        return Err(SimError::Config(format!(
            "--vs-artifact: the artifact's Figure 5 curves are testbed8's, not {}'s (for bso13: lcmp sim figure 7)",
            topology.name
        )));
    }
    let exp = Experiment {
        topology,
        workload,
        pairs,
        reference,
        loads,
        windows_us,
        schemes,
        seeds,
        tables,
        sports,
        engine,
        focus,
        pair_flows,
        bins: if args.vs_artifact {
            crate::vs_artifact::BINS
        } else {
            args.bins
        },
    };
    if args.vs_artifact {
        if let Some(l) = exp
            .loads
            .iter()
            .find(|&&l| crate::vs_artifact::published(l).is_none())
        {
            return Err(SimError::Config(format!(
                "--vs-artifact: the artifact publishes curves at 30, 50 and 80 % load, not {:.0} %",
                l * 100.0
            )));
        }
    }
    exp.validate()?;
    Ok(exp)
}

/// Arguments of `lcmp sim sweep` (the `lcmp sim` options before `sweep` are
/// the base of every run).
#[derive(Clone, Debug, PartialEq, Args)]
pub struct SweepArgs {
    /// A grid axis: an `lcmp sim` option and its values separated by `/`
    /// (`-`: the option not given), e.g. `band=-/24/16` or
    /// `weights=s_cong=3/s_cong=2,beta=2`. Repeatable; the grid is the
    /// product of the axes. Options: profile, saturation, band, weights,
    /// queue-thresholds, scheme (the candidate scheme), sample-us,
    /// idle-timeout-ms.
    #[arg(long = "vary", value_name = "NAME=V1/V2/...")]
    pub vary: Vec<String>,
    /// Workloads every configuration runs on, comma-separated [default: the
    /// base --workload].
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Baseline schemes, comma-separated [default: ecmp,ucmp].
    #[arg(long, value_delimiter = ',')]
    pub baselines: Vec<String>,
    /// Write sweep.md, sweep.json and sweep.svg into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Ring and label this configuration in the figure (its name as the
    /// report prints it, e.g. `saturation=9 band=16`). Repeatable.
    #[arg(long, value_name = "CONFIG")]
    pub mark: Vec<String>,
    /// Print the sweep's runs as independent jobs instead of running
    /// them: one shell command line per (workload, configuration or
    /// baselines, seed), each an `lcmp sim ... --json` writing one file
    /// into --job-dir; feed the lines to GNU parallel or a Slurm array and
    /// combine the files with `lcmp sim merge` (docs/simulator.md).
    #[arg(long)]
    pub emit_jobs: bool,
    /// Where the jobs write their JSON.
    #[arg(long, value_name = "DIR", default_value = "jobs")]
    pub job_dir: PathBuf,
    /// The command that starts `lcmp` in a job line.
    #[arg(long, value_name = "CMD", default_value = "lcmp")]
    pub job_command: String,
}

/// Arguments of `lcmp sim figure`.
#[derive(Clone, Debug, PartialEq, Args)]
pub struct FigureArgs {
    /// The figure's number in the paper (1, 5, 7, 8, 9, 10, 11).
    #[arg(value_name = "N")]
    pub number: u8,
    /// Print the plan (the runs' commands, the artifact's data files)
    /// instead of running it.
    #[arg(long)]
    pub plan: bool,
    /// Print one shell command per run (`lcmp sim ... --json > DIR/...`,
    /// for GNU parallel or a batch system; `--merge DIR` reads the files
    /// back) instead of running them.
    #[arg(long)]
    pub emit_jobs: bool,
    /// With --emit-jobs: one single-threaded job per load and seed of each
    /// run (`DIR/NAME.lLOAD-sSEED.json`), so a core's worth of work lands
    /// at a time; --merge reads the parts back.
    #[arg(long, requires = "emit_jobs")]
    pub split: bool,
    /// Read the emitted jobs' JSON from DIR instead of running (Figure 8
    /// reads Figure 7's jobs, `fig7-*.json`: one set of runs serves both).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["plan", "emit_jobs"])]
    pub merge: Option<PathBuf>,
    /// Write figN.json, figN.csv (per bin), figN.txt and the SVGs (ours
    /// beside the artifact's) into DIR; with --emit-jobs, where the jobs
    /// write [default: figure-runs].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The model instead of the figure's (`fluid` or `packet`).
    #[arg(long, value_name = "fluid|packet")]
    pub model: Option<String>,
    /// Seeds 1..=N instead of the figure's 3.
    #[arg(long, value_name = "N")]
    pub seeds: Option<u64>,
    /// At most this arrival window, seconds (a reduced form).
    #[arg(long, value_name = "S")]
    pub window: Option<f64>,
    /// Only these of the figure's loads (comma-separated fractions, for
    /// example 0.3 of Figure 7's 0.3,0.5,0.8: a reduced form).
    #[arg(long, value_name = "L[,L...]")]
    pub load: Option<String>,
}

/// Arguments of `lcmp sim merge`.
#[derive(Clone, Debug, PartialEq, Args)]
pub struct MergeArgs {
    /// JSON files written by `lcmp sim --json` (for example by the jobs of
    /// `sweep --emit-jobs`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Sweep jobs: write sweep.md, sweep.json and sweep.svg into this
    /// directory, as `sweep --out` does.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sweep jobs: ring and label this configuration in the figure.
    #[arg(long, value_name = "CONFIG")]
    pub mark: Vec<String>,
    /// Other runs: print the merged JSON (results, summary, comparisons)
    /// instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Other runs: write the SVG figures into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}
