//! The artifact's own file formats, so that its simulator (its HPCC NS-3,
//! `simulation/scratch/third.cc` of `dyyuCS/LCMP`) and ours can run the
//! same flows and be compared flow by flow (docs/simulator.md, "Ground
//! truth: the artifact's simulator, flow by flow").
//!
//! * Traffic files (`FLOW_FILE`, e.g.
//!   `mix/config/8DC-hetero/traffic_WebSearch_8DC_forDC1And8-0.3util.txt`):
//!   `#` comment lines, then the flow count, then one flow a line,
//!   `src dst pg dport size start_time` (node ids, priority group,
//!   destination port, bytes, seconds). [`parse_traffic`] reads them,
//!   [`to_flow_specs`] turns them into our [`FlowSpec`]s (`lcmp sim
//!   --traffic-file`).
//! * FCT files (`FCT_OUTPUT_FILE`, written by `qp_finish`): one finished
//!   flow a line, `sip dip sport dport size start_ns fct_ns ideal_ns`
//!   (addresses in hex). [`parse_fct`] reads them; [`fct_records`] writes
//!   ours in the same format (`lcmp sim --fct-out`), with a ninth column,
//!   the DC our flow's data went through; [`compare`] sets the two side by
//!   side (`lcmp sim fct-compare`).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::error::SimError;
use crate::network::Network;
use crate::run::{artifact_ip, FlowSpec, RunOutput, ARTIFACT_DPORT};
use crate::traffic::PER_PAIR_FIRST_PORT;

/// When the artifact's traffic starts, seconds: every traffic file's
/// arrivals begin at 2.000 s of simulated time (its applications start
/// then); our flows' `start_us` count from it.
pub const ARTIFACT_START_S: f64 = 2.0;

/// One line of an artifact traffic file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArtifactFlow {
    /// Source node id (a host).
    pub src: u32,
    /// Destination node id (a host).
    pub dst: u32,
    /// Priority group.
    pub pg: u32,
    /// Destination UDP port.
    pub dport: u16,
    /// Size, bytes.
    pub size: u64,
    /// Start, seconds of simulated time.
    pub start_s: f64,
}

/// Skips `#` comment lines and blank lines, as the artifact's
/// `SkipComments` does, and yields the remaining tokens with their line
/// numbers (1-based).
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with('#'))
        .flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t)))
}

/// Reads an artifact traffic file: the flow count, then that many flows.
///
/// Errors (never panics): a missing or bad count, a bad field (named with
/// its line), fewer flows than the count (the artifact shrinks its count
/// silently; we refuse), a size of 0, a start before [`ARTIFACT_START_S`]
/// or earlier than the line before (the artifact schedules in file order).
///
/// ```
/// # use lcmp_sim::artifact_files::parse_traffic;
/// let f = parse_traffic("# src dst pg dport size start\n2\n5 116 3 100 325508 2.000060495\n13 122 3 100 4200828 2.000137530\n").unwrap();
/// assert_eq!((f.len(), f[1].src, f[1].size), (2, 13, 4_200_828));
/// assert!(parse_traffic("2\n5 116 3 100 325508 2.0\n").is_err());
/// ```
pub fn parse_traffic(text: &str) -> Result<Vec<ArtifactFlow>, SimError> {
    let bad = |line: usize, what: &str, tok: &str| {
        SimError::Config(format!(
            "traffic file line {line}: bad {what} `{tok}` (expected `src dst pg dport size start_time`)"
        ))
    };
    let mut it = tokens(text);
    let (line, tok) = it
        .next()
        .ok_or_else(|| SimError::Config("traffic file: empty (expected a flow count)".into()))?;
    let count: usize = tok.parse().map_err(|_| bad(line, "flow count", tok))?;
    let mut flows = Vec::with_capacity(count.min(1 << 20));
    let mut last_start = ARTIFACT_START_S;
    for n in 0..count {
        let mut field = |what: &str| {
            it.next().ok_or_else(|| {
                SimError::Config(format!(
                    "traffic file: {count} flows announced, {n} found (missing {what})"
                ))
            })
        };
        let (l, s) = field("src")?;
        let src: u32 = s.parse().map_err(|_| bad(l, "src", s))?;
        let (l, s) = field("dst")?;
        let dst: u32 = s.parse().map_err(|_| bad(l, "dst", s))?;
        let (l, s) = field("pg")?;
        let pg: u32 = s.parse().map_err(|_| bad(l, "pg", s))?;
        let (l, s) = field("dport")?;
        let dport: u16 = s.parse().map_err(|_| bad(l, "dport", s))?;
        let (l, s) = field("size")?;
        let size: u64 = s
            .parse()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| bad(l, "size", s))?;
        let (l, s) = field("start_time")?;
        let start_s: f64 = s
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= last_start)
            .ok_or_else(|| bad(l, "start_time (not before 2.0 s nor the flow before)", s))?;
        last_start = start_s;
        flows.push(ArtifactFlow {
            src,
            dst,
            pg,
            dport,
            size,
            start_s,
        });
    }
    Ok(flows)
}

/// Our flows for the artifact's: node `n` is host `n % hosts_per_dc` of
/// DC `n / hosts_per_dc + 1` (the artifact's testbed8 numbers its 128
/// hosts DC by DC from 0), source ports count up from 10000 per host pair
/// in file order (its `portNumder`), starts count from
/// [`ARTIFACT_START_S`].
///
/// Errors: a node that is no host of `dcs` DCs, a flow within one DC, a
/// destination port other than [`ARTIFACT_DPORT`] or more than 55 536
/// flows of one host pair (our flows carry neither).
pub fn to_flow_specs(
    flows: &[ArtifactFlow],
    hosts_per_dc: u16,
    dcs: u16,
) -> Result<Vec<FlowSpec>, SimError> {
    let hosts = u32::from(hosts_per_dc.max(1));
    let limit = hosts * u32::from(dcs);
    let mut ports: HashMap<(u32, u32), u16> = HashMap::new();
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if f.src >= limit || f.dst >= limit {
                return Err(SimError::Config(format!(
                    "traffic file flow {}: node {} is not one of the {limit} hosts ({dcs} DCs of {hosts})",
                    i + 1,
                    f.src.max(f.dst)
                )));
            }
            let (sdc, ddc) = (f.src / hosts + 1, f.dst / hosts + 1);
            if sdc == ddc {
                return Err(SimError::Config(format!(
                    "traffic file flow {}: {} -> {} stays in DC{sdc} (only inter-DC flows are simulated)",
                    i + 1,
                    f.src,
                    f.dst
                )));
            }
            if f.dport != ARTIFACT_DPORT {
                return Err(SimError::Config(format!(
                    "traffic file flow {}: dport {} (every artifact flow has {ARTIFACT_DPORT})",
                    i + 1,
                    f.dport
                )));
            }
            let next = ports.entry((f.src, f.dst)).or_insert(PER_PAIR_FIRST_PORT);
            let sport = *next;
            *next = next.checked_add(1).ok_or_else(|| {
                SimError::Config(format!(
                    "traffic file flow {}: more than {} flows from {} to {}",
                    i + 1,
                    u16::MAX - PER_PAIR_FIRST_PORT,
                    f.src,
                    f.dst
                ))
            })?;
            // Both ends fit in u16: limit <= 16 x 65535 hosts is checked above.
            let dc = |n: u32| u16::try_from(n / hosts + 1).unwrap_or(u16::MAX);
            let host = |n: u32| u16::try_from(n % hosts).unwrap_or(u16::MAX);
            Ok(FlowSpec {
                start_us: (f.start_s - ARTIFACT_START_S) * 1e6,
                src_dc: dc(f.src),
                dst_dc: dc(f.dst),
                src_host: host(f.src),
                dst_host: host(f.dst),
                sport,
                size: f.size,
            })
        })
        .collect()
}

/// One line of an FCT file (the artifact's `qp_finish` columns), with the
/// DC our flow's data crossed when we wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FctRecord {
    /// Source address (the artifact's `node_id_to_ip`).
    pub sip: u32,
    /// Destination address.
    pub dip: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Size, bytes.
    pub size: u64,
    /// Start, nanoseconds of simulated time.
    pub start_ns: u64,
    /// Flow completion time, nanoseconds.
    pub fct_ns: u64,
    /// Ideal FCT, nanoseconds.
    pub ideal_ns: u64,
    /// The DC between source and destination DC on the data's path (0:
    /// direct, or not known: the artifact's files do not say).
    pub via: u16,
}

impl FctRecord {
    /// FCT over ideal FCT (the slowdown).
    pub fn slowdown(&self) -> f64 {
        self.fct_ns as f64 / (self.ideal_ns.max(1)) as f64
    }

    /// The record as one line of the artifact's format (plus `via`).
    pub fn line(&self) -> String {
        format!(
            "{:08x} {:08x} {} {} {} {} {} {} {}",
            self.sip,
            self.dip,
            self.sport,
            self.dport,
            self.size,
            self.start_ns,
            self.fct_ns,
            self.ideal_ns,
            self.via
        )
    }
}

/// Reads an FCT file: 8 columns (the artifact's) or 9 (ours, with `via`);
/// blank lines are skipped. Errors name the bad line.
///
/// ```
/// # use lcmp_sim::artifact_files::parse_fct;
/// let r = parse_fct("0b000901 0b007401 10000 100 779990 2000494043 20274060 20274577\n").unwrap();
/// assert_eq!((r[0].sip, r[0].sport, r[0].fct_ns, r[0].via), (0x0b00_0901, 10_000, 20_274_060, 0));
/// assert!(parse_fct("0b000901 0b007401 10000\n").is_err());
/// ```
pub fn parse_fct(text: &str) -> Result<Vec<FctRecord>, SimError> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let bad = || {
            SimError::Config(format!(
                "fct file line {}: expected `sip dip sport dport size start_ns fct_ns ideal_ns [via]`, got `{l}`",
                i + 1
            ))
        };
        if f.len() != 8 && f.len() != 9 {
            return Err(bad());
        }
        let hex = |s: &str| u32::from_str_radix(s, 16).map_err(|_| bad());
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let port = |s: &str| s.parse::<u16>().map_err(|_| bad());
        out.push(FctRecord {
            sip: hex(f[0])?,
            dip: hex(f[1])?,
            sport: port(f[2])?,
            dport: port(f[3])?,
            size: num(f[4])?,
            start_ns: num(f[5])?,
            fct_ns: num(f[6])?,
            ideal_ns: num(f[7])?,
            via: match f.get(8) {
                Some(v) => port(v)?,
                None => 0,
            },
        });
    }
    Ok(out)
}

/// Our run as FCT records in the artifact's format: one per finished
/// flow, in input order, times from [`ARTIFACT_START_S`], addresses the
/// artifact's for node `(dc - 1) * hosts_per_dc + host`, and `via` the
/// middle DC of the flow's data path.
pub fn fct_records(
    net: &Network,
    flows: &[FlowSpec],
    out: &RunOutput,
    hosts_per_dc: u16,
) -> Vec<FctRecord> {
    let node = |dc: u16, host: u16| {
        u32::from(dc.saturating_sub(1)) * u32::from(hosts_per_dc) + u32::from(host)
    };
    flows
        .iter()
        .zip(&out.flows)
        .filter_map(|(f, o)| {
            let fct = o.fct_us?;
            let via = o
                .path
                .iter()
                .filter_map(|&l| net.links.get(l as usize))
                .map(|l| l.to)
                .find(|&to| to != f.dst_dc)
                .unwrap_or(0);
            Some(FctRecord {
                sip: artifact_ip(node(f.src_dc, f.src_host)),
                dip: artifact_ip(node(f.dst_dc, f.dst_host)),
                sport: f.sport,
                dport: ARTIFACT_DPORT,
                size: f.size,
                start_ns: ((ARTIFACT_START_S * 1e6 + f.start_us) * 1e3).round() as u64,
                fct_ns: (fct * 1e3).round() as u64,
                ideal_ns: (o.ideal_us * 1e3).round() as u64,
                via,
            })
        })
        .collect()
}

/// Size ranges of [`compare`]'s per-bin table, bytes (upper bounds,
/// inclusive): the docs' four groups.
pub const SIZE_BINS: [(u64, &str); 4] = [
    (100_000, "<=100KB"),
    (1_000_000, "100KB-1MB"),
    (10_000_000, "1-10MB"),
    (u64::MAX, ">10MB"),
];

/// The `q`-quantile (0-1) of `v` by nearest rank; `None` if empty.
fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(crate::stats::percentile(v, q))
}

/// One of the 20 size bins of the artifact's analysis script.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScriptBin {
    /// The size of the bin's largest flow, bytes (the script's `FlowSize`).
    pub size: u64,
    /// Flows in the bin.
    pub flows: usize,
    /// The p50 slowdown by the script's rule.
    pub p50: f64,
    /// The p99 slowdown by the script's rule.
    pub p99: f64,
}

/// The 20 size bins the artifact's analysis script
/// (`analysis/fct_analysis_py3_batch.py`, its published CSVs) cuts from one
/// FCT file, by its rules: flows to destination port 100, slowdown
/// `max(1, fct / ideal)`, sorted by size (ties by slowdown: its `sort -n
/// -k 2` falls back to the whole line), the largest flow dropped (it reads
/// its sorted output with `split('\n')[:-2]`), bin `i` the flows
/// `a[i*5*n/100 .. (i+1)*5*n/100]`, a statistic `p` of a bin its sorted
/// slowdowns' element `int(len * p)`. Written here because the script is
/// Python over `awk` and `sort`; with it `lcmp sim fct-compare` sets ours
/// beside the artifact's published numbers bin by bin on the same flows.
/// Empty when fewer than 21 flows qualify (a bin would be empty).
///
/// ```
/// use lcmp_sim::artifact_files::{script_bins, FctRecord};
/// // 41 flows of 1..=41 KB whose slowdown is their size in KB: the
/// // 41 KB flow is dropped and each bin holds two.
/// let recs: Vec<FctRecord> = (1..=41u64)
///     .map(|k| FctRecord { sip: 0, dip: 1, sport: 10000, dport: 100, size: k * 1000,
///         start_ns: 0, fct_ns: k * 1_000_000, ideal_ns: 1_000_000, via: 0 })
///     .collect();
/// let b = script_bins(&recs);
/// assert_eq!(b.len(), 20);
/// assert_eq!((b[0].size, b[0].flows, b[0].p50, b[0].p99), (2000, 2, 2.0, 2.0));
/// assert_eq!((b[19].size, b[19].p50), (40_000, 40.0));
/// ```
#[must_use]
pub fn script_bins(records: &[FctRecord]) -> Vec<ScriptBin> {
    let mut a: Vec<(u64, f64)> = records
        .iter()
        .filter(|r| r.dport == 100)
        .map(|r| (r.size, r.slowdown().max(1.0)))
        .collect();
    a.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)));
    a.pop();
    let n = a.len();
    if n < crate::vs_artifact::BINS {
        return Vec::new();
    }
    // The script's bin cuts and its `a[int(len * p)]`, as Figure 8's
    // comparison reads them (`pair_bins::bin_counts`, `script_rank`).
    use crate::figure::pair_bins::{bin_counts, script_rank};
    let pick = |v: &[f64], stat: &str| {
        v.get(script_rank(v.len(), stat) - 1)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let mut start = 0;
    bin_counts(n)
        .iter()
        .filter_map(|&count| {
            let d = a.get(start..start + count)?;
            start += count;
            let mut v: Vec<f64> = d.iter().map(|x| x.1).collect();
            v.sort_by(f64::total_cmp);
            Some(ScriptBin {
                size: d.last()?.0,
                flows: d.len(),
                p50: pick(&v, "p50"),
                p99: pick(&v, "p99"),
            })
        })
        .collect()
}

/// Two FCT files side by side, flow by flow: flows are matched on
/// `(sip, dip, sport, dport, size)`; `ours` and `theirs` keep the matched
/// pairs in `theirs`' order.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Matched pairs `(ours, theirs)`.
    pub pairs: Vec<(FctRecord, FctRecord)>,
    /// Flows of `theirs` with no match in `ours`.
    pub only_theirs: usize,
    /// Flows of `ours` with no match in `theirs`.
    pub only_ours: usize,
}

/// Matches two FCT files' flows (see [`Comparison`]).
pub fn compare(ours: &[FctRecord], theirs: &[FctRecord]) -> Comparison {
    type Key = (u32, u32, u16, u16, u64);
    let key = |r: &FctRecord| -> Key { (r.sip, r.dip, r.sport, r.dport, r.size) };
    let mut mine: HashMap<Key, FctRecord> = ours.iter().map(|r| (key(r), *r)).collect();
    let mut pairs = Vec::new();
    let mut only_theirs = 0;
    for t in theirs {
        match mine.remove(&key(t)) {
            Some(o) => pairs.push((o, *t)),
            None => only_theirs += 1,
        }
    }
    Comparison {
        pairs,
        only_theirs,
        only_ours: mine.len(),
    }
}

impl Comparison {
    /// Matched flows whose FCTs differ by at most `pct` % of the
    /// artifact's.
    pub fn within(&self, pct: f64) -> usize {
        self.pairs
            .iter()
            .filter(|(o, t)| {
                (o.fct_ns as f64 - t.fct_ns as f64).abs() <= pct / 100.0 * t.fct_ns as f64
            })
            .count()
    }

    /// The text report: match counts, per-size-bin p50/p99 slowdowns of
    /// both, and the `top` flows whose FCTs differ most (ratio ours /
    /// theirs, either way).
    pub fn report(&self, top: usize) -> String {
        let mut s = String::new();
        let n = self.pairs.len();
        let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
        let _ = writeln!(
            s,
            "matched {n} flows (only in ours {}, only in the artifact's {})",
            self.only_ours, self.only_theirs
        );
        for p in [1.0, 10.0] {
            let k = self.within(p);
            let _ = writeln!(s, "FCT within {p:>2} %: {k} ({:.1} %)", pct(k));
        }
        let same_ideal = self
            .pairs
            .iter()
            .filter(|(o, t)| o.ideal_ns.abs_diff(t.ideal_ns) <= t.ideal_ns / 1000)
            .count();
        let _ = writeln!(s, "ideal FCT within 0.1 %: {same_ideal} of {n}");
        let _ = writeln!(
            s,
            "{:<10} {:>6} {:>9} {:>9} {:>9} {:>9}",
            "size", "flows", "ours p50", "art p50", "ours p99", "art p99"
        );
        let mut lo = 0u64;
        for (hi, name) in SIZE_BINS {
            let (mut a, mut b): (Vec<f64>, Vec<f64>) = self
                .pairs
                .iter()
                .filter(|(_, t)| t.size > lo && t.size <= hi)
                .map(|(o, t)| (o.slowdown(), t.slowdown()))
                .unzip();
            lo = hi;
            let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
            let _ = writeln!(
                s,
                "{name:<10} {:>6} {:>9} {:>9} {:>9} {:>9}",
                a.len(),
                cell(quantile(&mut a, 0.5)),
                cell(quantile(&mut b, 0.5)),
                cell(quantile(&mut a, 0.99)),
                cell(quantile(&mut b, 0.99)),
            );
        }
        let (ours, theirs): (Vec<FctRecord>, Vec<FctRecord>) = self.pairs.iter().copied().unzip();
        let (b_ours, b_theirs) = (script_bins(&ours), script_bins(&theirs));
        if !b_theirs.is_empty() && b_ours.len() == b_theirs.len() {
            let _ = writeln!(
                s,
                "the artifact script's 20 size bins (its published CSVs' rules) on the matched flows:"
            );
            let _ = writeln!(
                s,
                "{:>3} {:>10} {:>6} {:>9} {:>9} {:>9} {:>9}",
                "bin", "size", "flows", "ours p50", "art p50", "ours p99", "art p99"
            );
            for (i, (o, t)) in b_ours.iter().zip(&b_theirs).enumerate() {
                let _ = writeln!(
                    s,
                    "{i:>3} {:>10} {:>6} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
                    t.size, t.flows, o.p50, t.p50, o.p99, t.p99
                );
            }
        }
        let mut by: Vec<&(FctRecord, FctRecord)> = self.pairs.iter().collect();
        let ratio = |(o, t): &(FctRecord, FctRecord)| {
            let r = o.fct_ns.max(1) as f64 / t.fct_ns.max(1) as f64;
            r.max(1.0 / r)
        };
        by.sort_by(|x, y| ratio(y).total_cmp(&ratio(x)));
        let _ = writeln!(
            s,
            "largest departures (ours/artifact FCT; our data path's middle DC, 0 = direct):"
        );
        for p in by.into_iter().take(top) {
            let (o, t) = p;
            let _ = writeln!(
                s,
                "  {:08x}->{:08x}:{} size {} start {:.6} s: ours {:.1} ms (via DC{}) artifact {:.1} ms, ideal {:.1}/{:.1} ms",
                t.sip,
                t.dip,
                t.sport,
                t.size,
                t.start_ns as f64 * 1e-9,
                o.fct_ns as f64 * 1e-6,
                o.via,
                t.fct_ns as f64 * 1e-6,
                o.ideal_ns as f64 * 1e-6,
                t.ideal_ns as f64 * 1e-6,
            );
        }
        s
    }
}

/// Where `lcmp sim replay` takes its flows from.
#[derive(Clone, Copy, Debug)]
pub enum FlowSource<'a> {
    /// An artifact traffic file ([`parse_traffic`]).
    TrafficFile(&'a std::path::Path),
    /// The flows of an artifact FCT log ([`flows_of_fct`]).
    FctLog(&'a std::path::Path),
}

/// The flows of an artifact FCT log as traffic-file lines, in start order
/// (ties by addresses, port and size): a run whose traffic file the artifact did
/// not commit can be replayed from its log. The log's source ports are
/// what `third.cc` gives flows of one host pair in start order (10000
/// on), so the replay gives each flow its port again. Errors: an address
/// that is not the artifact's `node_id_to_ip` form (`0b.hi.lo.01`), or
/// no flows.
///
/// ```
/// use lcmp_sim::artifact_files::{flows_of_fct, parse_fct};
/// let log = "0b000801 0b007801 10001 100 16361 2000887563 20661493 20018496\n\
///            0b000101 0b007a01 10000 100 58600 2000036848 20032328 20032658\n";
/// let f = flows_of_fct(&parse_fct(log).unwrap()).unwrap();
/// assert_eq!((f[0].src, f[0].dst, f[0].size), (1, 122, 58_600));
/// assert_eq!((f[1].src, f[1].dst, f[1].dport), (8, 120, 100));
/// assert_eq!(f[1].start_s, "2.000887563".parse::<f64>().unwrap());
/// // Node 258 (past 255: the address's second byte counts 256s).
/// let far = parse_fct("0b010201 0b000101 10000 100 1 2000000000 1 1\n").unwrap();
/// assert_eq!(flows_of_fct(&far).unwrap()[0].src, 258);
/// assert!(flows_of_fct(&[]).is_err());
/// ```
pub fn flows_of_fct(records: &[FctRecord]) -> Result<Vec<ArtifactFlow>, String> {
    let node = |ip: u32| -> Result<u32, String> {
        if ip >> 24 != 0x0b || ip & 0xff != 1 {
            return Err(format!(
                "{ip:08x} is not an artifact host address (0b....01)"
            ));
        }
        Ok(((ip >> 16) & 0xff) * 256 + ((ip >> 8) & 0xff))
    };
    if records.is_empty() {
        return Err("no flows".into());
    }
    let mut by_start: Vec<&FctRecord> = records.iter().collect();
    // A log is in finish order and keeps no trace of its traffic file's
    // order among flows that start in the same nanosecond (two pairs in
    // the 7 064 flows of the artifact's 30 % logs): those go by address
    // and port, so one log always gives one replay.
    by_start.sort_by_key(|r| (r.start_ns, r.sip, r.dip, r.sport, r.size));
    by_start
        .into_iter()
        .map(|r| {
            // The start as a traffic file writes it (seconds, nine
            // decimals) and parsed as `parse_traffic` parses it: the same
            // f64, so the replay of a log is the replay of its traffic
            // file to the picosecond (`ns as f64 * 1e-9` can be an ulp
            // off, and a flow starting a picosecond earlier reorders
            // events).
            let text = format!(
                "{}.{:09}",
                r.start_ns / 1_000_000_000,
                r.start_ns % 1_000_000_000
            );
            let start_s = text
                .parse::<f64>()
                .map_err(|e| format!("start {text}: {e}"))?;
            Ok(ArtifactFlow {
                src: node(r.sip)?,
                dst: node(r.dip)?,
                pg: 3,
                dport: r.dport,
                size: r.size,
                start_s,
            })
        })
        .collect()
}

/// `lcmp sim replay`: runs every scheme of the `lcmp sim` options given
/// before `replay` (one load, the first seed as hash seed) on the flows of
/// an artifact traffic file, prints one summary line per scheme and, with
/// `fct_dir`, writes `fct_<scheme>.txt` there in the artifact's format.
#[cfg(feature = "cli")]
pub fn replay(
    args: &crate::args::SimArgs,
    source: FlowSource<'_>,
    fct_dir: Option<&std::path::Path>,
) -> Result<(), SimError> {
    let exp = crate::args::experiment(args)?;
    if exp.loads.len() != 1 {
        return Err(SimError::Config(
            "replay: give one --load (it sizes the flow caches; the flows are the file's)".into(),
        ));
    }
    let (flag, path) = match source {
        FlowSource::TrafficFile(p) => ("--traffic-file", p),
        FlowSource::FctLog(p) => ("--flows-of", p),
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| SimError::Config(format!("{flag} {}: {e}", path.display())))?;
    let artifact_flows = match source {
        FlowSource::TrafficFile(_) => parse_traffic(&text)?,
        FlowSource::FctLog(_) => flows_of_fct(&parse_fct(&text)?)
            .map_err(|e| SimError::Config(format!("{flag} {}: {e}", path.display())))?,
    };
    let dcs = u16::try_from(exp.topology.dcs.len()).unwrap_or(u16::MAX);
    let flows = to_flow_specs(&artifact_flows, exp.engine.hosts_per_dc, dcs)?;
    let window_us = flows.iter().map(|f| f.start_us).fold(1.0, f64::max);
    if let Some(d) = fct_dir {
        std::fs::create_dir_all(d)
            .map_err(|e| SimError::Output(format!("--fct-out {}: {e}", d.display())))?;
    }
    let seed = exp.seeds.first().copied().unwrap_or(1);
    for (spec, scheme, net) in exp.networks()? {
        let cfg = exp.run_config(0, scheme, seed);
        let started = std::time::Instant::now();
        let out = match cfg.model {
            crate::run::Model::Fluid => crate::engine::run(&net, &cfg, &flows, window_us)?,
            crate::run::Model::Packet => crate::packet::run(&net, &cfg, &flows, window_us)?,
        };
        let recs = fct_records(&net, &flows, &out, exp.engine.hosts_per_dc);
        let mut sd: Vec<f64> = recs.iter().map(FctRecord::slowdown).collect();
        let (p50, p99) = (quantile(&mut sd, 0.5), quantile(&mut sd, 0.99));
        println!(
            "{}: {} of {} flows finished, slowdown p50 {:.2} p99 {:.2} ({:.1} s wall)",
            spec.name(),
            recs.len(),
            flows.len(),
            p50.unwrap_or(f64::NAN),
            p99.unwrap_or(f64::NAN),
            started.elapsed().as_secs_f64()
        );
        if let Some(d) = fct_dir {
            let path = d.join(format!("fct_{}.txt", spec.name()));
            let body: String = recs.iter().map(|r| r.line() + "\n").collect();
            std::fs::write(&path, body)
                .map_err(|e| SimError::Output(format!("{}: {e}", path.display())))?;
        }
    }
    Ok(())
}

/// `lcmp sim fct-compare`: reads two FCT files (ours from `replay
/// --fct-out`, the artifact's `fct_dcqcn.txt`) and prints
/// [`Comparison::report`].
#[cfg(feature = "cli")]
pub fn compare_files(
    ours: &std::path::Path,
    theirs: &std::path::Path,
    top: usize,
) -> Result<String, SimError> {
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .map_err(|e| SimError::Config(format!("{}: {e}", p.display())))
            .and_then(|t| parse_fct(&t))
    };
    Ok(compare(&read(ours)?, &read(theirs)?).report(top))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRAFFIC: &str = "# comment\n# src dst pg dport size start\n3\n\
        5 116 3 100 325508 2.000060495\n\
        5 116 3 100 1000 2.000137530\n\
        13 122 3 100 4200828 2.000137530\n";

    #[test]
    fn traffic_lines_become_our_flows_with_per_pair_ports() {
        let f = parse_traffic(TRAFFIC).unwrap();
        let s = to_flow_specs(&f, 16, 8).unwrap();
        assert_eq!(s.len(), 3);
        // Node 5 is DC1's host 5, node 116 DC8's host 4.
        assert_eq!(
            (s[0].src_dc, s[0].src_host, s[0].dst_dc, s[0].dst_host),
            (1, 5, 8, 4)
        );
        assert_eq!(
            (s[0].sport, s[1].sport, s[2].sport),
            (10_000, 10_001, 10_000)
        );
        assert!((s[0].start_us - 60.495).abs() < 1e-6);
        assert_eq!(s[2].size, 4_200_828);
    }

    #[test]
    fn bad_traffic_files_are_typed_errors() {
        for (text, needle) in [
            ("", "empty"),
            ("x\n", "flow count"),
            ("2\n5 116 3 100 10 2.0\n", "2 flows announced, 1 found"),
            ("1\n5 116 3 100 0 2.0\n", "size"),
            ("1\n5 116 3 100 10 1.9\n", "start_time"),
            ("2\n5 116 3 100 10 2.1\n5 116 3 100 10 2.0\n", "line 3"),
            ("1\n5 -1 3 100 10 2.0\n", "dst"),
        ] {
            let e = parse_traffic(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
        let one = |l: &str| parse_traffic(&format!("1\n{l}\n")).unwrap();
        let spec = |l: &str| to_flow_specs(&one(l), 16, 8).unwrap_err().to_string();
        assert!(spec("5 130 3 100 10 2.0").contains("not one of the 128 hosts"));
        assert!(spec("5 6 3 100 10 2.0").contains("stays in DC1"));
        assert!(spec("5 116 3 101 10 2.0").contains("dport 101"));
    }

    #[test]
    fn fct_lines_round_trip_and_bad_lines_fail() {
        let r = FctRecord {
            sip: artifact_ip(9),
            dip: artifact_ip(116),
            sport: 10_000,
            dport: 100,
            size: 779_990,
            start_ns: 2_000_494_043,
            fct_ns: 20_274_060,
            ideal_ns: 20_274_577,
            via: 6,
        };
        assert_eq!(
            r.line(),
            "0b000901 0b007401 10000 100 779990 2000494043 20274060 20274577 6"
        );
        assert_eq!(parse_fct(&r.line()).unwrap(), vec![r]);
        assert!(parse_fct("zz 0b007401 10000 100 1 2 3 4").is_err());
        assert!(parse_fct("0b000901 0b007401 10000 100 1 2 3 4 5 6").is_err());
    }

    fn rec(sport: u16, size: u64, fct_ns: u64) -> FctRecord {
        FctRecord {
            sip: 1,
            dip: 2,
            sport,
            dport: 100,
            size,
            start_ns: 0,
            fct_ns,
            ideal_ns: 1_000,
            via: 0,
        }
    }

    #[test]
    fn comparison_matches_flows_and_counts_agreement() {
        let theirs = [
            rec(1, 10, 1_000),
            rec(2, 10, 1_000),
            rec(3, 2_000_000, 4_000),
            rec(4, 5, 9),
        ];
        let ours = [
            rec(3, 2_000_000, 2_000),
            rec(2, 10, 1_050),
            rec(1, 10, 1_005),
            rec(9, 5, 9),
        ];
        let c = compare(&ours, &theirs);
        assert_eq!((c.pairs.len(), c.only_theirs, c.only_ours), (3, 1, 1));
        assert_eq!(c.within(1.0), 1);
        assert_eq!(c.within(10.0), 2);
        let r = c.report(1);
        assert!(r.contains("FCT within  1 %: 1 (33.3 %)"), "{r}");
        // The largest departure is the 2 MB flow, ours twice as fast.
        assert!(r.contains("size 2000000"), "{r}");
        assert!(r.contains("1-10MB          1      2.00      4.00"), "{r}");
    }

    #[test]
    fn script_bins_follow_the_artifacts_rules_and_the_report_sets_them_side_by_side() {
        let rec = |size: u64, fct_ms: u64, dport: u16| FctRecord {
            sip: 1,
            dip: 2,
            sport: u16::try_from(size % 60_000).unwrap(),
            dport,
            size,
            start_ns: 0,
            fct_ns: fct_ms * 1_000_000,
            ideal_ns: 10_000_000,
            via: 0,
        };
        // 61 flows to port 100 (slowdowns 0.5 to 30.5: below 1 counts as
        // 1) and one to another port, which the script leaves out.
        let mut theirs: Vec<FctRecord> = (1..=61u64).map(|k| rec(k * 100, k * 5, 100)).collect();
        theirs.push(rec(50, 1000, 200));
        let b = script_bins(&theirs);
        assert_eq!(b.len(), 20);
        // 60 flows after the largest is dropped: three a bin.
        assert!(b.iter().all(|x| x.flows == 3));
        assert_eq!((b[0].size, b[0].p50, b[0].p99), (300, 1.0, 1.5));
        assert_eq!((b[19].size, b[19].p50, b[19].p99), (6000, 29.5, 30.0));
        assert!(script_bins(&theirs[..20]).is_empty());
        // 21 flows: 20 after the largest is dropped, one a bin.
        let one_each = script_bins(&theirs[..21]);
        assert!(one_each.len() == 20 && one_each.iter().all(|x| x.flows == 1));
        // Ours twice as slow: the report's bin table shows it.
        let ours: Vec<FctRecord> = theirs
            .iter()
            .map(|r| FctRecord {
                fct_ns: r.fct_ns * 2,
                ..*r
            })
            .collect();
        let text = compare(&ours, &theirs).report(0);
        assert!(
            text.contains("the artifact script's 20 size bins"),
            "{text}"
        );
        let row19 = text
            .lines()
            .find(|l| l.trim_start().starts_with("19 "))
            .expect("bin 19");
        let cells: Vec<&str> = row19.split_whitespace().collect();
        assert_eq!(
            cells[1..],
            ["6000", "3", "59.00", "29.50", "60.00", "30.00"],
            "{row19}"
        );
    }
}
