//! Experiments: schemes (baselines, LCMP, ablations, variants), traffic
//! presets, and the parallel sweep over loads, schemes and seeds.

#[cfg(feature = "cli")]
use core::sync::atomic::{AtomicUsize, Ordering};
#[cfg(feature = "cli")]
use std::sync::Mutex;
#[cfg(feature = "cli")]
use std::time::Instant as WallClock;

use lcmp_decide::{Params, Pick, Profile, Scheme, Weights};
use lcmp_tables::{BuildOptions, Saturation, Topology};

#[cfg(feature = "cli")]
use crate::engine;
use crate::engine::{EngineConfig, FlowSpec};
use crate::error::SimError;
use crate::network::Network;
use crate::rng::Pcg32;
#[cfg(feature = "cli")]
use crate::stats::summarise;
use crate::stats::Focus;
use crate::stats::RunResult;
use crate::traffic::{generate, Pairs, SourcePorts, TrafficSpec};
use crate::workload::Workload;

/// Most worker threads of one sweep (each holds one run's state).
pub const MAX_JOBS: usize = 64;

/// Worker threads for `runs` packet-model runs on `cores` cores: the
/// count between `cores` and `2 × cores` (at most `runs`) whose schedule of
/// equally long runs ends first, the fewest among equals. Three runs on
/// two cores go to three threads (all finish after 1.5 runs' time) rather
/// than two (two at once, then the third alone: 2 runs' time); four go to
/// two. A packet run holds its packets in flight (hundreds of MB), so no
/// more than twice the cores run at once.
#[must_use]
pub fn packet_threads(runs: usize, cores: usize) -> usize {
    let c = cores.max(1);
    // Time in units of one run's CPU time over the cores: a round of `n`
    // runs on `c` cores takes `max(n, c)`.
    let makespan = |t: usize| {
        let rest = runs % t;
        (runs / t) * t.max(c) + if rest > 0 { rest.max(c) } else { 0 }
    };
    (c..=runs.min(2 * c))
        .min_by_key(|&t| (makespan(t), t))
        .unwrap_or_else(|| runs.clamp(1, c))
}

/// Most flows one run may have (expected value), to bound memory and time.
pub const MAX_FLOWS_PER_RUN: f64 = 5_000_000.0;

/// The deciders' flow-cache idle timeout in the simulator, microseconds:
/// the paper's 2 s (`Params::PAPER`). The engine pins each flow's path
/// itself and the deciders see only a flow's first packet, so an entry is
/// never refreshed; the core reuses an entry once its flow is past its safe
/// gap (docs/design.md, "The in-order promise"), so finished flows do not
/// fill the cache (docs/simulator.md, "Flow cache", has what changed when
/// this was 5 ms).
pub const SIM_IDLE_TIMEOUT_US: u32 = 2_000_000;

/// A routing scheme as the simulator names it: a core [`Scheme`] plus the
/// settings that make an ablation or a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemeSpec {
    /// ECMP over all candidates.
    Ecmp,
    /// UCMP (the artifact's: ECMP over the maximum-capacity candidates).
    Ucmp,
    /// LCMP with the given (default: paper) weights.
    Lcmp,
    /// LCMP without path quality (`alpha = 0`, §7.1).
    RmAlpha,
    /// LCMP without congestion (`beta = 0`, §7.1).
    RmBeta,
    /// LCMP with the capacity-weighted pick in the kept set
    /// ([`Pick::CapacityWeighted`]).
    LcmpW,
    /// LCMP with a congestion term that can reorder paths: `beta = 4`,
    /// `S_cong = 1` (an extension; see `docs/simulator.md`).
    LcmpC,
    /// Both variants: capacity-weighted pick and the strong congestion term.
    LcmpWc,
    /// LCMP with the Tofino data plane's pick, [`Pick::ScaledHash`]
    /// (`docs/tofino.md`).
    LcmpT,
    /// LCMP with the tuned profile ([`Profile::Tuned`]) as published: its
    /// parameters and delay saturation, whatever `--weights`,
    /// `--saturation` or `--band` say (vary them with `--profile tuned
    /// --schemes lcmp`).
    LcmpTuned,
}

impl SchemeSpec {
    /// Every scheme, in display order.
    pub const ALL: [SchemeSpec; 10] = [
        SchemeSpec::Ecmp,
        SchemeSpec::Ucmp,
        SchemeSpec::Lcmp,
        SchemeSpec::RmAlpha,
        SchemeSpec::RmBeta,
        SchemeSpec::LcmpW,
        SchemeSpec::LcmpC,
        SchemeSpec::LcmpWc,
        SchemeSpec::LcmpT,
        SchemeSpec::LcmpTuned,
    ];

    /// The command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            SchemeSpec::Ecmp => Scheme::Ecmp.name(),
            SchemeSpec::Ucmp => Scheme::Ucmp.name(),
            SchemeSpec::Lcmp => Scheme::Lcmp.name(),
            SchemeSpec::RmAlpha => "rm-alpha",
            SchemeSpec::RmBeta => "rm-beta",
            SchemeSpec::LcmpW => "lcmp-w",
            SchemeSpec::LcmpC => "lcmp-c",
            SchemeSpec::LcmpWc => "lcmp-wc",
            SchemeSpec::LcmpT => "lcmp-t",
            SchemeSpec::LcmpTuned => "lcmp-tuned",
        }
    }

    /// Parses a command-line name.
    ///
    /// ```
    /// # use lcmp_sim::experiment::SchemeSpec;
    /// assert_eq!(SchemeSpec::parse("rm-beta"), Some(SchemeSpec::RmBeta));
    /// assert_eq!(SchemeSpec::parse("nope"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Self> {
        SchemeSpec::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The core scheme and the table-building options: `base` with this
    /// scheme's changes to its parameters.
    pub fn settings(self, base: &BuildOptions) -> (Scheme, BuildOptions) {
        let mut opts = base.clone();
        let params = &mut opts.params;
        let scheme = match self {
            SchemeSpec::Ecmp => Scheme::Ecmp,
            SchemeSpec::Ucmp => Scheme::Ucmp,
            SchemeSpec::Lcmp => Scheme::Lcmp,
            SchemeSpec::RmAlpha => {
                params.weights.alpha = 0;
                Scheme::Lcmp
            }
            SchemeSpec::RmBeta => {
                params.weights.beta = 0;
                Scheme::Lcmp
            }
            SchemeSpec::LcmpW => {
                params.pick = Pick::CapacityWeighted;
                Scheme::Lcmp
            }
            SchemeSpec::LcmpC => {
                params.weights.beta = 4;
                params.weights.s_cong = 1;
                Scheme::Lcmp
            }
            SchemeSpec::LcmpT => {
                params.pick = Pick::ScaledHash;
                Scheme::Lcmp
            }
            SchemeSpec::LcmpWc => {
                params.pick = Pick::CapacityWeighted;
                params.weights.beta = 4;
                params.weights.s_cong = 1;
                Scheme::Lcmp
            }
            SchemeSpec::LcmpTuned => {
                let tuned = Profile::Tuned.params();
                opts.saturation = Saturation::Shift(tuned.delay_shift);
                opts.params = tuned.with_idle_timeout_ticks(base.params.idle_timeout_ticks);
                Scheme::Lcmp
            }
        };
        (scheme, opts)
    }
}

/// Parses `alpha=3,beta=1,...` over `base` (keys: alpha, beta, w_dl, w_lc,
/// w_ql, w_tl, w_dp, s_path, s_cong, s_total) and validates the result.
///
/// ```
/// # use lcmp_sim::experiment::parse_weights;
/// # use lcmp_decide::Weights;
/// let w = parse_weights("alpha=1,beta=3", Weights::PAPER).unwrap();
/// assert_eq!((w.alpha, w.beta), (1, 3));
/// assert!(parse_weights("gamma=1", Weights::PAPER).is_err());
/// ```
pub fn parse_weights(text: &str, base: Weights) -> Result<Weights, SimError> {
    let mut w = base;
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || SimError::Config(format!("--weights: bad item `{item}`"));
        let (k, v) = item.split_once('=').ok_or_else(bad)?;
        let v: u32 = v.trim().parse().map_err(|_| bad())?;
        let shift = || u8::try_from(v).map_err(|_| bad());
        match k.trim() {
            "alpha" => w.alpha = v,
            "beta" => w.beta = v,
            "w_dl" => w.w_dl = v,
            "w_lc" => w.w_lc = v,
            "w_ql" => w.w_ql = v,
            "w_tl" => w.w_tl = v,
            "w_dp" => w.w_dp = v,
            "s_path" => w.s_path = shift()?,
            "s_cong" => w.s_cong = shift()?,
            "s_total" => w.s_total = shift()?,
            _ => return Err(bad()),
        }
    }
    w.validate()
        .map_err(|e| SimError::Config(format!("--weights: {e:?}")))?;
    Ok(w)
}

/// The load reference of a traffic spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadReference {
    /// The source hosts' NIC capacity (hosts per DC x NIC rate x source DCs).
    Nic,
    /// Inter-DC capacity: for one pair, the source's candidate egress links
    /// towards the destination; for all-to-all, the total directed link
    /// capacity over the mean minimum hop count.
    InterDc,
}

/// A full experiment: one topology and workload, several loads, schemes
/// and seeds.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The topology.
    pub topology: Topology,
    /// The flow-size distribution.
    pub workload: Workload,
    /// Who talks to whom.
    pub pairs: Pairs,
    /// What the loads refer to.
    pub reference: LoadReference,
    /// Offered loads.
    pub loads: Vec<f64>,
    /// Arrival window per load, microseconds (same length as `loads`).
    pub windows_us: Vec<f64>,
    /// Schemes to compare.
    pub schemes: Vec<SchemeSpec>,
    /// Traffic seeds.
    pub seeds: Vec<u64>,
    /// Base table-building options: the paper's parameters with the
    /// simulator's flow-cache idle timeout ([`Experiment::default_tables`])
    /// unless changed (`--weights`, `--saturation`, ...).
    pub tables: BuildOptions,
    /// Source-port allocation.
    pub sports: SourcePorts,
    /// Engine settings (scheme and hash seed are set per run).
    pub engine: EngineConfig,
    /// Count only flows between these DCs.
    pub focus: Focus,
    /// Also record every flow between these DCs in each result
    /// (`RunResult::pair_flows`, `--pair-flows`); the runs and the other
    /// statistics are the same with or without it.
    pub pair_flows: Focus,
    /// Points of the slowdown-versus-size curves.
    pub bins: usize,
}

/// The PCG32 stream of a load's traffic: the load in parts per million
/// (`0.3` draws from stream 300000). With the seed, the workload and the
/// topology it fixes a run's flows; where a load sits in `--load` does not
/// matter.
///
/// ```
/// # use lcmp_sim::experiment::traffic_stream;
/// assert_eq!(traffic_stream(0.3), 300_000);
/// assert_ne!(traffic_stream(0.5), traffic_stream(0.8));
/// ```
pub fn traffic_stream(load: f64) -> u64 {
    (load * 1e6).round().max(0.0) as u64
}

/// The paper artifact's arrival window for `load` on testbed8: 0.15 s,
/// 0.10 s and 0.07 s for 30, 50 and 80 %, else `0.05 s / load` (about the
/// same number of flows), microseconds.
pub fn paper_window_us(load: f64) -> f64 {
    let table = [(0.3, 150_000.0), (0.5, 100_000.0), (0.8, 70_000.0)];
    table
        .iter()
        .find(|(l, _)| (l - load).abs() < 1e-9)
        .map_or(50_000.0 / load.max(1e-3), |&(_, w)| w)
}

impl Experiment {
    /// The base table options of `lcmp sim`: the paper's, with the flow-cache
    /// idle timeout set to [`SIM_IDLE_TIMEOUT_US`].
    pub fn default_tables() -> BuildOptions {
        BuildOptions {
            params: Params::PAPER.with_idle_timeout_ticks(SIM_IDLE_TIMEOUT_US),
            ..BuildOptions::default()
        }
    }

    /// The capacity the loads refer to, bits per second.
    pub fn reference_bps(&self) -> f64 {
        let topo = &self.topology;
        let hosts = f64::from(self.engine.hosts_per_dc) * self.engine.nic_bps as f64;
        match (self.reference, self.pairs) {
            (LoadReference::Nic, Pairs::One { .. }) => hosts,
            (LoadReference::Nic, Pairs::AllToAll) => hosts * topo.dcs.len() as f64,
            (LoadReference::InterDc, Pairs::One { src, dst }) => topo
                .next_hops(src, dst)
                .iter()
                .filter_map(|&n| topo.link_between(src, n))
                .map(|l| l.capacity_bps as f64)
                .sum(),
            (LoadReference::InterDc, Pairs::AllToAll) => {
                let total: f64 = topo.links.iter().map(|l| 2.0 * l.capacity_bps as f64).sum();
                let mut hops = 0.0;
                let mut pairs = 0.0;
                for a in &topo.dcs {
                    for b in &topo.dcs {
                        if a.id != b.id {
                            if let Some(h) = topo.hops(a.id, b.id) {
                                hops += f64::from(h);
                                pairs += 1.0;
                            }
                        }
                    }
                }
                if pairs > 0.0 {
                    total / (hops / pairs)
                } else {
                    0.0
                }
            }
        }
    }

    /// The offered load of each load against the capacity it meets, one
    /// line per load: for one pair, the bits per second the sources offer
    /// and the source DCI switch's inter-DC egress capacity (all its links:
    /// no scheme can use more), with the regime (`steady` below 1,
    /// `overload with drain` above: queues then grow for the whole arrival
    /// window and drain after it); for all-to-all, the mean link
    /// utilisation the load sets by construction.
    pub fn offered_lines(&self) -> Vec<String> {
        let reference = self.reference_bps();
        self.loads
            .iter()
            .zip(&self.windows_us)
            .map(|(&load, &w)| {
                let offered = load * reference;
                match self.pairs {
                    Pairs::One { src, .. } => {
                        let egress: f64 = self
                            .topology
                            .ports(src)
                            .iter()
                            .filter_map(|p| self.topology.links.get(p.link))
                            .map(|l| l.capacity_bps as f64)
                            .sum();
                        let ratio = offered / egress.max(1.0);
                        format!(
                            "load {:.0}%: offered {:.0} Gbps against {:.0} Gbps of {} egress ({:.2}: {}) for {:.3} s",
                            load * 100.0,
                            offered / 1e9,
                            egress / 1e9,
                            self.topology.dc(src).map_or(String::new(), |d| d.name.clone()),
                            ratio,
                            if ratio > 1.0 {
                                "above it: overload, then a drain"
                            } else {
                                "below it: steady if spread"
                            },
                            w * 1e-6
                        )
                    }
                    Pairs::AllToAll => format!(
                        "load {:.0}%: offered {:.0} Gbps all-to-all ({}: mean link utilisation {:.2}) for {:.3} s",
                        load * 100.0,
                        offered / 1e9,
                        match self.reference {
                            LoadReference::InterDc => "relative to inter-DC capacity",
                            LoadReference::Nic => "relative to the NICs",
                        },
                        match self.reference {
                            LoadReference::InterDc => load,
                            LoadReference::Nic => f64::NAN,
                        },
                        w * 1e-6
                    ),
                }
            })
            .collect()
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Config(m));
        if self.loads.is_empty() || self.loads.iter().any(|&l| !(l > 0.0 && l <= 10.0)) {
            return bad("--load: give loads in (0, 10], e.g. 0.3,0.5,0.8".into());
        }
        if self.windows_us.len() != self.loads.len()
            || self.windows_us.iter().any(|&w| !(w > 0.0 && w <= 60e6))
        {
            return bad("--window: give a window in (0, 60] seconds".into());
        }
        if self.schemes.is_empty() {
            return bad("--schemes: give at least one scheme".into());
        }
        if self.seeds.is_empty() {
            return bad("--seeds: give at least one seed".into());
        }
        if self.engine.dt_us == 0 || self.engine.sample_us == 0 || self.engine.hosts_per_dc == 0 {
            return bad("--dt-us, --sample-us and --hosts-per-dc must be positive".into());
        }
        if let Pairs::One { src, dst } = self.pairs {
            if src == dst || self.topology.dc(src).is_none() || self.topology.dc(dst).is_none() {
                return bad("--pair: two different DCs of the topology, e.g. DC1:DC8".into());
            }
            if self.topology.hops(src, dst).is_none() {
                return bad("--pair: the destination is unreachable".into());
            }
        }
        let expected = self
            .loads
            .iter()
            .zip(&self.windows_us)
            .map(|(l, w)| l * self.reference_bps() / (8.0 * self.workload.mean_bytes()) * w * 1e-6)
            .fold(0.0, f64::max);
        if expected > MAX_FLOWS_PER_RUN {
            return bad(format!(
                "about {expected:.0} flows per run: at most {MAX_FLOWS_PER_RUN:.0}; shorten --window or lower --load"
            ));
        }
        if self.reference_bps().partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
            return bad("the load reference capacity is zero".into());
        }
        Ok(())
    }

    /// One network per scheme of [`Experiment::schemes`], in order, with the
    /// core scheme it runs (tables differ only by their parameters, see
    /// [`SchemeSpec::settings`]). [`Experiment::run`] runs each; a frontend
    /// that steps runs itself (the wasm demo) builds them here too.
    pub fn networks(&self) -> Result<Vec<(SchemeSpec, Scheme, Network)>, SimError> {
        self.schemes
            .iter()
            .map(|&s| {
                let (scheme, opts) = s.settings(&self.tables);
                Network::new(&self.topology, &opts).map(|n| (s, scheme, n))
            })
            .collect()
    }

    /// The engine settings of one run at load `load_index`:
    /// [`Experiment::engine`] with the run's core scheme, the traffic seed
    /// as the ECMP hash seed and the load's [`Experiment::flow_rate_per_s`]
    /// (the switches' flow caches are sized for it).
    pub fn run_config(&self, load_index: usize, scheme: Scheme, seed: u64) -> EngineConfig {
        EngineConfig {
            scheme,
            hash_seed: seed as u32,
            flow_rate_per_s: self.flow_rate_per_s(load_index),
            ..self.engine.clone()
        }
    }

    /// New flows a second at load `load_index`: the offered load over the
    /// workload's mean flow size. Every DCI switch's flow cache is sized for
    /// it (an upper bound of what one switch sees: with one DC pair every
    /// flow crosses the source's switch).
    pub fn flow_rate_per_s(&self, load_index: usize) -> f64 {
        let load = self.loads.get(load_index).copied().unwrap_or(0.0);
        load * self.reference_bps() / (8.0 * self.workload.mean_bytes())
    }

    /// The flows of one (load, seed): a function of the seed, the load's
    /// value ([`traffic_stream`]), the workload and the topology, never of
    /// the load's position in [`Experiment::loads`], so `--load 0.5` alone
    /// draws the same flows as the 50 % row of `--load 0.3,0.5,0.8`.
    pub fn flows(&self, load_index: usize, seed: u64) -> Vec<FlowSpec> {
        let spec = TrafficSpec {
            pairs: self.pairs,
            load: self.loads[load_index],
            reference_bps: self.reference_bps(),
            window_us: self.windows_us[load_index],
            hosts_per_dc: self.engine.hosts_per_dc,
            sports: self.sports,
        };
        let dcs: Vec<u16> = self.topology.dcs.iter().map(|d| d.id).collect();
        generate(
            &spec,
            &self.workload,
            &dcs,
            &mut Pcg32::new(seed, traffic_stream(self.loads[load_index])),
        )
    }

    /// Number of runs.
    pub fn runs(&self) -> usize {
        self.loads.len() * self.seeds.len() * self.schemes.len()
    }

    /// Runs everything on `jobs` threads (feature `cli`); `tick` is called after each run.
    /// Results are ordered by load, then scheme, then seed.
    #[cfg(feature = "cli")]
    pub fn run(&self, jobs: usize, tick: &(dyn Fn() + Sync)) -> Result<Vec<RunResult>, SimError> {
        self.validate()?;
        let nets = self.networks()?;
        let traffic: Vec<Vec<FlowSpec>> = (0..self.loads.len())
            .flat_map(|l| self.seeds.iter().map(move |&s| (l, s)))
            .map(|(l, s)| self.flows(l, s))
            .collect();
        let (ns, nk) = (self.seeds.len(), self.schemes.len());
        let total = self.runs();
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<RunResult>>> = Mutex::new(vec![None; total]);
        let failed: Mutex<Option<SimError>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..jobs.clamp(1, total.clamp(1, MAX_JOBS)) {
                scope.spawn(|| loop {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= total {
                        break;
                    }
                    let (l, k, s) = (job / (nk * ns), (job / ns) % nk, job % ns);
                    let (spec, scheme, net) = &nets[k];
                    let flows = &traffic[l * ns + s];
                    let seed = self.seeds[s];
                    let cfg = self.run_config(l, *scheme, seed);
                    let started = WallClock::now();
                    let out = match cfg.model {
                        engine::Model::Fluid => engine::run(net, &cfg, flows, self.windows_us[l]),
                        engine::Model::Packet => {
                            crate::packet::run(net, &cfg, flows, self.windows_us[l])
                        }
                    };
                    let out = match out {
                        Ok(out) => out,
                        Err(e) => {
                            if let Ok(mut first) = failed.lock() {
                                first.get_or_insert(e);
                            }
                            // Every run of this experiment builds its
                            // switches the same way: stop the others too.
                            next.store(total, Ordering::Relaxed);
                            break;
                        }
                    };
                    let wall = started.elapsed().as_secs_f64();
                    let mut r = summarise(
                        net,
                        flows,
                        &out,
                        self.focus,
                        self.windows_us[l],
                        self.bins,
                        (spec.name(), self.loads[l], seed),
                        wall,
                    );
                    r.pair_flows = self
                        .pair_flows
                        .map(|pair| crate::stats::pair_flows(flows, &out, pair));
                    if let Ok(mut v) = results.lock() {
                        v[job] = Some(r);
                    }
                    tick();
                });
            }
        });
        if let Some(e) = failed
            .into_inner()
            .map_err(|_| SimError::Output("a worker panicked".into()))?
        {
            return Err(e);
        }
        let v: Vec<RunResult> = results
            .into_inner()
            .map_err(|_| SimError::Output("a worker panicked".into()))?
            .into_iter()
            .flatten()
            .collect();
        check_complete(&v)?;
        if let Some((a, b)) = self.focus {
            if v.iter().all(|r| r.flows == 0) {
                // Statistics of no flows would print as zeros.
                return Err(SimError::Config(format!(
                    "--focus DC{a}:DC{b}: no flow of this traffic runs between DC{a} and DC{b} (choose a pair it carries, or --pair all)"
                )));
            }
        }
        Ok(v)
    }
}

/// Most flows of a run, in percent, that may go without a route or
/// unfinished. Schemes are compared on the same flows: a run that leaves
/// out more than 1 % of them could move its p99 (the 1 % tail) by what it
/// dropped, so it stops the command instead of being printed.
pub const MAX_INCOMPLETE_PCT: f64 = 1.0;

/// [`SimError::Incomplete`] if a run left more than
/// [`MAX_INCOMPLETE_PCT`] % of its flows out, naming every such run.
pub fn check_complete(results: &[RunResult]) -> Result<(), SimError> {
    let bad: Vec<String> = results
        .iter()
        .filter(|r| {
            let out = r.flows.saturating_sub(r.completed) as f64;
            out * 100.0 > MAX_INCOMPLETE_PCT * r.flows as f64
        })
        .map(|r| {
            format!(
                "{} at {:.0} % seed {}: {} of {} flows ({:.1} %; {} without a route)",
                r.scheme,
                r.load * 100.0,
                r.seed,
                r.flows - r.completed,
                r.flows,
                (r.flows - r.completed) as f64 * 100.0 / r.flows.max(1) as f64,
                r.unrouted
            )
        })
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(SimError::Incomplete(format!(
        "more than {MAX_INCOMPLETE_PCT} % of the flows had no route or did not finish, so schemes would be compared on different flows: {}; a full flow cache refuses flows (try a shorter --idle-timeout-ms, docs/simulator.md)",
        bad.join("; ")
    )))
}

#[cfg(test)]
mod test {
    use super::packet_threads;

    /// `lcmp sim ARGS`, parsed.
    #[cfg(feature = "cli")]
    fn sim_args(args: &[&str]) -> crate::args::SimArgs {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            sim: crate::args::SimArgs,
        }
        Cli::try_parse_from(["sim"].iter().chain(args))
            .expect("arguments parse")
            .sim
    }

    /// `lcmp sim ARGS`'s experiment.
    #[cfg(feature = "cli")]
    fn experiment_of(args: &[&str]) -> Result<super::Experiment, crate::error::SimError> {
        crate::args::experiment(&sim_args(args))
    }

    /// The argument plumbing: a flow cache must be a power of two in range,
    /// the artifact's per-switch pools are the artifact preset's unless a
    /// buffer is given, the arguments written back parse to the same
    /// experiment, and the flow rate is the offered load over the mean flow.
    #[cfg(feature = "cli")]
    #[test]
    fn arguments_make_the_experiment_they_say() {
        use crate::packet::DciPool;
        for bad in ["100", "8", "3"] {
            let e = experiment_of(&["--flow-cache", bad]).err();
            assert!(
                e.is_some_and(|e| e.to_string().contains("--flow-cache")),
                "{bad}"
            );
        }
        let e = experiment_of(&["--flow-cache", "1024"]).expect("a power of two");
        assert_eq!(e.engine.flow_slots, Some(1024));
        let pool = |args: &[&str]| {
            let e = experiment_of(args).expect("experiment");
            matches!(e.engine.packet.dci_pool, DciPool::Artifact { .. })
        };
        assert!(pool(&["--preset", "artifact"]));
        assert!(!pool(&["--preset", "artifact", "--buffer", "128MiB"]));
        assert!(!pool(&["--preset", "paper"]));
        assert!(!pool(&[]));
        let args = ["--load", "0.3,0.8", "--seeds", "2", "--flow-cache", "4096"];
        let e = experiment_of(&args).expect("experiment");
        let back = crate::args::to_args(&sim_args(&args));
        let back: Vec<&str> = back.iter().map(String::as_str).collect();
        let again = experiment_of(&back).expect("the written arguments parse");
        assert_eq!(
            (again.loads.clone(), again.seeds.clone()),
            (e.loads.clone(), e.seeds.clone())
        );
        assert_eq!(again.engine.flow_slots, Some(4096));
        for (i, load) in e.loads.iter().enumerate() {
            let rate = e.flow_rate_per_s(i);
            let offered = rate * 8.0 * e.workload.mean_bytes() / e.reference_bps();
            assert!((offered - load).abs() < 1e-9, "{load}: {rate}");
        }
    }

    /// `Experiment::run` returns one result per (load, scheme, seed), in
    /// that order, each over the same flows.
    #[cfg(feature = "cli")]
    #[test]
    fn an_experiment_runs_every_load_scheme_and_seed() {
        let e = experiment_of(&[
            "--load",
            "0.3,0.5",
            "--schemes",
            "ecmp,lcmp",
            "--seeds",
            "2",
            "--window",
            "0.002",
        ])
        .expect("experiment");
        let results = e.run(2, &|| {}).expect("runs");
        let got: Vec<(String, f64, u64)> = results
            .iter()
            .map(|r| (r.scheme.clone(), r.load, r.seed))
            .collect();
        let mut want = Vec::new();
        for load in &e.loads {
            for s in &e.schemes {
                for seed in &e.seeds {
                    want.push((s.name().to_string(), *load, *seed));
                }
            }
        }
        assert_eq!(got, want);
        assert!(
            results
                .iter()
                .all(|r| r.flows > 0 && r.flows == r.completed),
            "{results:?}"
        );
        // Per load, the two schemes' runs of one seed count the same flows.
        for load in results.chunks(4) {
            let (ecmp, lcmp) = load.split_at(2);
            let flows = |rs: &[crate::stats::RunResult]| -> Vec<usize> {
                rs.iter().map(|r| r.flows).collect()
            };
            assert_eq!(flows(ecmp), flows(lcmp));
        }
    }

    /// `--pair-flows A:B` records the pair's flows and changes nothing
    /// else: every run, in both models, is the same bit for bit (but its
    /// wall time) with and without it, the records are the pair's flows in
    /// both directions, and their slowdowns are the ones `--focus A:B`
    /// counts.
    #[cfg(feature = "cli")]
    #[test]
    fn pair_flows_records_the_pairs_flows_and_changes_nothing_else() {
        for model in ["fluid", "packet"] {
            let base = [
                "--model",
                model,
                "--pair",
                "all",
                "--load",
                "0.3",
                "--schemes",
                "ecmp,lcmp",
                "--seeds",
                "2",
                "--window",
                "0.0015",
                "--bins",
                "20",
            ];
            let with = |extra: &[&'static str]| {
                let mut a = base.to_vec();
                a.extend_from_slice(extra);
                experiment_of(&a)
                    .expect("experiment")
                    .run(2, &|| {})
                    .expect("runs")
            };
            let plain = with(&[]);
            let recorded = with(&["--pair-flows", "DC2:DC5"]);
            let focused = with(&["--focus", "DC2:DC5"]);
            assert!(plain.iter().all(|r| r.pair_flows.is_none()));
            let json = serde_json::to_string(&plain[0]).expect("serialises");
            assert!(!json.contains("pair_flows"), "{json}");
            assert_eq!(plain.len(), recorded.len());
            for ((p, r), f) in plain.iter().zip(&recorded).zip(&focused) {
                let mut r = r.clone();
                let flows = r.pair_flows.take().expect("recorded");
                r.wall_time_s = p.wall_time_s;
                assert_eq!(&r, p, "{model}: the flag changed the run");
                // Both directions, only the pair, as many as --focus counts.
                assert_eq!(flows.len(), f.flows, "{model} {} {}", r.scheme, r.seed);
                assert!(flows.iter().any(|x| (x.src_dc, x.dst_dc) == (2, 5)));
                assert!(flows.iter().any(|x| (x.src_dc, x.dst_dc) == (5, 2)));
                assert!(flows
                    .iter()
                    .all(|x| [(2, 5), (5, 2)].contains(&(x.src_dc, x.dst_dc))));
                let mut s: Vec<f64> = flows.iter().filter_map(|x| x.slowdown).collect();
                assert_eq!(s.len(), f.completed);
                s.sort_by(f64::total_cmp);
                assert_eq!(crate::stats::percentile(&s, 0.5), f.p50);
                assert_eq!(crate::stats::percentile(&s, 0.99), f.p99);
                let mean = s.iter().sum::<f64>() / s.len() as f64;
                assert!((mean - f.mean).abs() <= 1e-9 * f.mean, "{mean} {}", f.mean);
            }
        }
    }

    #[test]
    fn packet_runs_are_spread_so_that_no_core_idles_at_the_end() {
        // Three runs on two cores: three threads (1.5 runs' time, not 2).
        assert_eq!(packet_threads(3, 2), 3);
        // Nine: three rounds of three (4.5) beat 2+2+2+2+1 (5).
        assert_eq!(packet_threads(9, 2), 3);
        // Five: 3+2 on three threads (2.5) beats 2+2+1 (3) and 4+1 (3).
        assert_eq!(packet_threads(5, 2), 3);
        // Twenty: every count ends at 10 runs' time; the fewest threads.
        assert_eq!(packet_threads(20, 2), 2);
        // An even count stays on the cores (no gain, less memory).
        assert_eq!(packet_threads(4, 2), 2);
        assert_eq!(packet_threads(2, 2), 2);
        // Fewer runs than cores: one thread each.
        assert_eq!(packet_threads(1, 2), 1);
        assert_eq!(packet_threads(1, 8), 1);
        assert_eq!(packet_threads(0, 2), 1);
        // Never more than twice the cores.
        for runs in 1..40 {
            for cores in 1..9 {
                let t = packet_threads(runs, cores);
                assert!(
                    (1..=2 * cores).contains(&t) && t <= runs.max(1),
                    "{runs} {cores} {t}"
                );
            }
        }
    }
}
