//! Statistics of one run: FCT slowdowns (overall, per size bucket, per
//! size bin for figures) and per-link utilisation and flow share.

use serde::{Deserialize, Serialize};

use crate::engine::{FlowSpec, RunOutput};
use crate::network::Network;

/// The paper-style flow-size buckets: upper bounds in bytes and names.
pub const BUCKETS: [(u64, &str); 4] = [
    (100_000, "<=100KB"),
    (1_000_000, "100KB-1MB"),
    (10_000_000, "1-10MB"),
    (u64::MAX, ">10MB"),
];

/// Slowdown percentiles of the flows in one size bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Bucket name, e.g. `100KB-1MB`.
    pub name: String,
    /// Completed flows in the bucket.
    pub count: usize,
    /// Median slowdown (0 if empty).
    pub p50: f64,
    /// 99th-percentile slowdown (0 if empty).
    pub p99: f64,
}

/// One point of a slowdown-versus-size curve: an equal-count bin of flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeBin {
    /// Median flow size in the bin, bytes.
    pub size: f64,
    /// Flows in the bin.
    pub count: usize,
    /// Median slowdown.
    pub p50: f64,
    /// 99th-percentile slowdown.
    pub p99: f64,
}

/// One directed inter-DC link's use in a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkReport {
    /// Sending DC name.
    pub from: String,
    /// Receiving DC name.
    pub to: String,
    /// Capacity, Gbit/s.
    pub capacity_gbps: f64,
    /// Bytes served during the arrival window over capacity times window.
    pub utilisation: f64,
    /// Fraction of the run's flows whose path uses the link.
    pub flow_share: f64,
    /// Bytes offered during the arrival window over capacity times window.
    pub offered_load: f64,
    /// Largest queue, bytes.
    pub max_queue_bytes: u64,
    /// Offered load above 1: the port could not keep up during the window.
    pub overloaded: bool,
}

/// The result of one (scheme, load, seed) run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Scheme name (`ecmp`, `lcmp`, `rm-alpha`, ...).
    pub scheme: String,
    /// Offered load.
    pub load: f64,
    /// Traffic seed.
    pub seed: u64,
    /// Flows counted (after the `--focus` filter).
    pub flows: usize,
    /// Of those, completed.
    pub completed: usize,
    /// Median slowdown.
    pub p50: f64,
    /// 99th-percentile slowdown.
    pub p99: f64,
    /// Mean slowdown.
    pub mean: f64,
    /// Per size bucket.
    pub buckets: Vec<Bucket>,
    /// Slowdown-versus-size curve (equal-count bins).
    pub bins: Vec<SizeBin>,
    /// Links that carried traffic.
    pub links: Vec<LinkReport>,
    /// Bytes offered by all flows.
    pub bytes_offered: u64,
    /// Bytes delivered.
    pub bytes_delivered: u64,
    /// Flows without a route.
    pub unrouted: u64,
    /// Decisions routed statelessly because a flow cache was full.
    pub unpinned: u64,
    /// Simulated time, seconds.
    pub sim_time_s: f64,
    /// Wall-clock time of the run, seconds.
    pub wall_time_s: f64,
    /// The packet model's counters (absent for the fluid engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::packet::config::PacketStats>,
    /// Every flow between the `--pair-flows` pair (either direction),
    /// whatever `--focus` counts (absent without the flag): what Figure 8
    /// pools over seeds ([`pair_flows`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_flows: Option<Vec<PairFlow>>,
}

/// One flow of the `--pair-flows` pair: its direction, size and FCT
/// slowdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairFlow {
    /// Sending DC (its number in the topology, `DC<n>`).
    pub src_dc: u16,
    /// Receiving DC.
    pub dst_dc: u16,
    /// Flow size, bytes.
    pub size: u64,
    /// FCT over the ideal FCT, as the run's other statistics take it
    /// (`None`: the flow did not finish).
    pub slowdown: Option<f64>,
}

/// The flows of `specs` between the DCs `pair` (either direction), in
/// the order of `specs`, with their slowdowns in `out` (the same
/// `fct / ideal` as [`summarise`]).
#[must_use]
pub fn pair_flows(specs: &[FlowSpec], out: &RunOutput, pair: (u16, u16)) -> Vec<PairFlow> {
    let (a, b) = pair;
    specs
        .iter()
        .zip(&out.flows)
        .filter(|(s, _)| (s.src_dc, s.dst_dc) == (a, b) || (s.src_dc, s.dst_dc) == (b, a))
        .map(|(s, o)| PairFlow {
            src_dc: s.src_dc,
            dst_dc: s.dst_dc,
            size: s.size,
            slowdown: o.fct_us.map(|fct| fct / o.ideal_us.max(1e-9)),
        })
        .collect()
}

/// Nearest-rank percentile of sorted data (`q` in `0..=1`; 0 if empty).
///
/// ```
/// # use lcmp_sim::stats::percentile;
/// let v = [1.0, 2.0, 3.0, 4.0];
/// assert_eq!(percentile(&v, 0.5), 2.0);
/// assert_eq!(percentile(&v, 0.99), 4.0);
/// ```
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Which flows a result counts.
pub type Focus = Option<(u16, u16)>;

/// Summarises a run. `focus`: count only flows between these two DCs
/// (either direction). `bins`: points of the size curve.
#[allow(clippy::too_many_arguments)]
pub fn summarise(
    net: &Network,
    specs: &[FlowSpec],
    out: &RunOutput,
    focus: Focus,
    window_us: f64,
    bins: usize,
    label: (&str, f64, u64),
    wall_time_s: f64,
) -> RunResult {
    let wanted = |s: &FlowSpec| match focus {
        None => true,
        Some((a, b)) => (s.src_dc, s.dst_dc) == (a, b) || (s.src_dc, s.dst_dc) == (b, a),
    };
    let mut flows = 0;
    let mut done: Vec<(u64, f64)> = Vec::new();
    for (s, o) in specs.iter().zip(&out.flows) {
        if !wanted(s) {
            continue;
        }
        flows += 1;
        if let Some(fct) = o.fct_us {
            done.push((s.size, fct / o.ideal_us.max(1e-9)));
        }
    }
    let all = sorted(done.iter().map(|d| d.1).collect());
    let mean = if all.is_empty() {
        0.0
    } else {
        all.iter().sum::<f64>() / all.len() as f64
    };
    let mut lower = 0u64;
    let buckets = BUCKETS
        .iter()
        .map(|&(upper, name)| {
            let v = sorted(
                done.iter()
                    .filter(|d| d.0 > lower && d.0 <= upper)
                    .map(|d| d.1)
                    .collect(),
            );
            lower = upper;
            Bucket {
                name: name.to_string(),
                count: v.len(),
                p50: percentile(&v, 0.5),
                p99: percentile(&v, 0.99),
            }
        })
        .collect();
    done.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let n_bins = bins.min(done.len() / 20).max(usize::from(!done.is_empty()));
    let size_bins = (0..n_bins)
        .map(|b| {
            let lo = b * done.len() / n_bins;
            let hi = (b + 1) * done.len() / n_bins;
            let part = &done[lo..hi];
            let v = sorted(part.iter().map(|d| d.1).collect());
            SizeBin {
                size: part[part.len() / 2].0 as f64,
                count: part.len(),
                p50: percentile(&v, 0.5),
                p99: percentile(&v, 0.99),
            }
        })
        .collect();
    let window_s = (window_us * 1e-6).max(1e-9);
    let total_flows = specs.len().max(1) as f64;
    let links = net
        .links
        .iter()
        .zip(&out.links)
        .filter(|(_, s)| s.flows > 0)
        .map(|(l, s)| {
            let c = l.capacity_bps as f64;
            let offered = s.bytes_in_window as f64 * 8.0 / (c * window_s);
            LinkReport {
                from: net.name(l.from),
                to: net.name(l.to),
                capacity_gbps: c / 1e9,
                utilisation: s.served_in_window as f64 * 8.0 / (c * window_s),
                flow_share: s.flows as f64 / total_flows,
                offered_load: offered,
                max_queue_bytes: s.max_queue_bytes,
                overloaded: offered > 1.0,
            }
        })
        .collect();
    RunResult {
        scheme: label.0.to_string(),
        load: label.1,
        seed: label.2,
        flows,
        completed: all.len(),
        p50: percentile(&all, 0.5),
        p99: percentile(&all, 0.99),
        mean,
        buckets,
        bins: size_bins,
        links,
        bytes_offered: out.bytes_offered,
        bytes_delivered: out.bytes_delivered,
        unrouted: out.unrouted,
        unpinned: out.unpinned,
        sim_time_s: out.end_us * 1e-6,
        wall_time_s,
        packet: out.packet.clone(),
        pair_flows: None,
    }
}
