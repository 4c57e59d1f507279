//! Figure 8: one DC pair's few flows set beside the artifact's curves by
//! an exact rank test (docs/simulator.md, "Fig. 8: a handful of flows a
//! bin").
//!
//! The artifact's Figure 8 curves (`data/artifact-fig8/`) are the 61, 91
//! and 118 flows between DC1 and DC13 of its 10 ms 13-DC runs (its
//! script, `analysis/fct_analysis_py3_batch_2dc.py`, keeps the flows of
//! either direction, sorts them by size, leaves out the largest and cuts
//! the rest into 20 equal-count bins): 3 to 6 flows a bin, whose "p50" is
//! the middle flow (`a[int(n * 0.5)]`) and whose "p99" is the largest
//! (`a[int(n * 0.99)]`). Our runs have about as few a seed, so the
//! 20-bin curves of the other figures cannot be made of them.
//!
//! Instead, our flows of the pair (`--pair-flows`, every seed pooled) go
//! into the artifact's own bins by size: bin `k` holds the flows of size
//! in `(FlowSize[k-1], FlowSize[k]]` (its `FlowSize` column is the largest
//! flow of each bin; bin 0 from 0; larger flows are in no bin). For each
//! bin and statistic the question is whether the artifact's value is a
//! plausible draw: the `k`-th smallest of `n` flows (`n` the artifact's
//! flows in that bin, from its flow count by its script's rule) drawn
//! from the distribution our `m` pooled flows of the bin come from. If
//! all `m + n` flows are exchangeable, the number `J` of ours below the
//! artifact's value has the exact law [`rank_law`] (whatever the
//! distribution). A point is outside when its `J` is in neither 0.5 %
//! tail of that law (a two-sided 99 % test); in slowdowns, the artifact's
//! value must lie in `[ours_(jlo), ours_(jhi + 1))`. This is the exact form
//! of resampling `n` of our flows: it needs no random draws, and unlike
//! the bootstrap it lets the artifact's value exceed all of ours (which
//! happens with probability `n / (m + n)` for a maximum).
//!
//! A point whose 99 % region holds every `J` (too few of our flows: the
//! test could not fail) is named, not tested. With 3-6 flows a bin, one
//! bin says little; across the bins of a column, the artifact's values
//! sitting systematically high or low among ours says more: [`Overall`]
//! is the mean over the bins (with any of our flows) of `J / m`, the
//! artifact's value's rank among ours, against its law when every bin's
//! `J` is drawn from its own [`rank_law`] ([`DRAWS`] draws of a fixed
//! PCG32 stream), two-sided 99 %. A column agrees when at most
//! [`MAX_OUT`] of its tested points are outside and both of its
//! column-wide ranks (p50, p99) are inside.

use serde::Serialize;

use crate::figure::{parse_table, Bin, Figure};
use crate::stats::RunResult;
use crate::vs_artifact::BINS;

/// The two-sided level of each point's test.
pub const ALPHA: f64 = 0.01;

/// Points of a column that may be outside (of its compared points), as
/// in the other figures: at 1 % each, 40 true points put 3 or more
/// outside with probability under 1 %.
pub const MAX_OUT: usize = 2;

/// Draws of the column-wide rank's law ([`Overall`]).
pub const DRAWS: usize = 20_000;

/// The artifact's flows of the pair per published table and column:
/// `data/artifact-fig8/flows.csv` (its README gives the source).
pub const FLOWS_CSV: &str = include_str!("../../data/artifact-fig8/flows.csv");

/// The flows of `table` (its label, `30`) and `column` (`Ours`) that the
/// artifact's script cut into bins (its logged flows of the pair less the
/// largest), from [`FLOWS_CSV`].
#[must_use]
pub fn artifact_flows(table: &str, column: &str) -> Option<usize> {
    FLOWS_CSV.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        match f.as_slice() {
            [t, c, _, binned] if *t == table && *c == column => binned.parse().ok(),
            _ => None,
        }
    })
}

/// Flows in each of the 20 bins of `n` flows sorted by size, by the
/// artifact's rule: bin `i` is `a[i*5*n/100 .. (i+1)*5*n/100]`.
///
/// ```
/// let c = lcmp_sim::figure::pair_bins::bin_counts(61);
/// assert_eq!(c.iter().sum::<usize>(), 61);
/// assert_eq!((c[0], c[19]), (3, 4));
/// ```
#[must_use]
pub fn bin_counts(n: usize) -> [usize; BINS] {
    let mut c = [0; BINS];
    for (i, x) in c.iter_mut().enumerate() {
        let step = 100 / BINS;
        *x = (i * step + step) * n / 100 - i * step * n / 100;
    }
    c
}

/// The bin of a flow of `size` bytes among bins whose largest flows are
/// `edges` (non-decreasing): the first `k` with `edges[k-1] < size <=
/// edges[k]` (bin 0 from 0); `None` above the last edge.
///
/// ```
/// use lcmp_sim::figure::pair_bins::bin_of;
/// let e = [10, 20, 20, 40];
/// assert_eq!(bin_of(10, &e), Some(0));
/// assert_eq!(bin_of(11, &e), Some(1));
/// assert_eq!(bin_of(20, &e), Some(1)); // bin 2's range (20, 20] is empty
/// assert_eq!(bin_of(41, &e), None);
/// ```
#[must_use]
pub fn bin_of(size: u64, edges: &[u64]) -> Option<usize> {
    edges.iter().position(|&e| size <= e)
}

/// The rank (1-based, among `n` sorted values) the artifact's script
/// reports as `stat` (`p50` or `p99`): `a[int(n * q)]`.
///
/// ```
/// use lcmp_sim::figure::pair_bins::script_rank;
/// assert_eq!(script_rank(3, "p50"), 2);
/// assert_eq!(script_rank(4, "p50"), 3); // the upper middle
/// assert_eq!(script_rank(6, "p99"), 6); // the largest
/// ```
#[must_use]
pub fn script_rank(n: usize, stat: &str) -> usize {
    let q = if stat == "p50" { 0.5 } else { 0.99 };
    ((n as f64 * q).floor() as usize + 1).clamp(1, n.max(1))
}

/// `C(a, b)` as a float (exact for the small `b` used here).
fn choose(a: usize, b: usize) -> f64 {
    if b > a {
        return 0.0;
    }
    let b = b.min(a - b);
    (1..=b).fold(1.0, |c, i| c * (a - b + i) as f64 / i as f64)
}

/// The law of `J`, the number of `m` exchangeable values below the
/// `k`-th smallest (1-based) of `n` others drawn with them:
/// `P(J = j) = C(j+k-1, j) C(m-j+n-k, m-j) / C(m+n, m)`, for `j` in
/// `0..=m` (no ties).
///
/// ```
/// // The largest of 3 beats all 9 others with probability 3 / 12.
/// let p = lcmp_sim::figure::pair_bins::rank_law(9, 3, 3);
/// assert!((p[9] - 0.25).abs() < 1e-12);
/// assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// ```
#[must_use]
pub fn rank_law(m: usize, n: usize, k: usize) -> Vec<f64> {
    if n == 0 || k == 0 || k > n {
        return Vec::new();
    }
    let all = choose(m + n, m);
    (0..=m)
        .map(|j| choose(j + k - 1, j) * choose(m - j + n - k, m - j) / all)
        .collect()
}

/// The central `1 - alpha` region of a law over `0..=m`: the smallest
/// `jlo` and largest `jhi` with at most `alpha / 2` below `jlo` and at
/// most `alpha / 2` above `jhi`.
fn region(p: &[f64], alpha: f64) -> (usize, usize) {
    let tail = alpha / 2.0;
    let (mut below, mut jlo) = (0.0, 0);
    while jlo + 1 < p.len() && below + p[jlo] <= tail {
        below += p[jlo];
        jlo += 1;
    }
    let (mut above, mut jhi) = (0.0, p.len().saturating_sub(1));
    while jhi > jlo && above + p[jhi] <= tail {
        above += p[jhi];
        jhi -= 1;
    }
    (jlo, jhi)
}

/// One bin and statistic of a column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Bin index (0-19).
    pub bin: usize,
    /// `p50` or `p99`.
    pub stat: &'static str,
    /// The bin's size range, bytes: `(lo, hi]`.
    pub size_lo: u64,
    /// Its upper end (the artifact's `FlowSize`).
    pub size_hi: u64,
    /// The artifact's flows in the bin.
    pub n: usize,
    /// The rank of its statistic among them (1-based).
    pub rank: usize,
    /// Our flows in the bin, every seed pooled.
    pub m: usize,
    /// Our statistic over all `m` (the same rule: `a[int(m * q)]`; 0
    /// without flows).
    pub ours: f64,
    /// The 99 % region's lower end, slowdown (`ours_(jlo)`; 1 when
    /// `jlo` is 0).
    pub lo: f64,
    /// Its upper end (`ours_(jhi + 1)`; infinite when `jhi` is `m`,
    /// written `null` in JSON).
    pub hi: f64,
    /// The artifact's value.
    pub published: f64,
    /// Whether the test could fail (the region leaves out some `J`).
    pub compared: bool,
    /// Compared and the artifact's value inside the region.
    pub inside: bool,
}

/// Tests one point: our sorted slowdowns `ours` of a bin against the
/// artifact's value `published`, the `rank`-th smallest of its `n`
/// flows. Ties between the artifact's value and ours count in its
/// favour.
#[must_use]
pub fn test_point(ours: &[f64], n: usize, rank: usize, published: f64) -> (f64, f64, bool, bool) {
    let m = ours.len();
    let law = rank_law(m, n, rank);
    if law.is_empty() {
        return (0.0, f64::INFINITY, false, false);
    }
    let (jlo, jhi) = region(&law, ALPHA);
    let compared = jlo > 0 || jhi < m;
    let lo = if jlo == 0 { 1.0 } else { ours[jlo - 1] };
    let hi = ours.get(jhi).copied().unwrap_or(f64::INFINITY);
    let below = ours.iter().filter(|&&x| x < published).count();
    let at_most = ours.iter().filter(|&&x| x <= published).count();
    let inside = below <= jhi && at_most >= jlo;
    (lo, hi, compared, compared && inside)
}

/// The column-wide test of one statistic: where the artifact's values
/// sit among ours, over the bins.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overall {
    /// `p50` or `p99`.
    pub stat: &'static str,
    /// Bins with any of our flows (the others are left out).
    pub bins: usize,
    /// The mean over those bins of the artifact's value's rank among ours,
    /// `J / m` (ties: the middle rank): 0 below all of ours, 1 above.
    pub rank: f64,
    /// Its mean under the hypothesis (every `J` drawn from its law).
    pub expected: f64,
    /// The 99 % region's lower end under the hypothesis.
    pub lo: f64,
    /// Its upper end.
    pub hi: f64,
    /// Whether the region leaves out some value (the test could fail).
    pub compared: bool,
    /// `rank` within `[lo, hi]`.
    pub inside: bool,
}

/// The column-wide test of the points `points` of one statistic, from
/// each bin's pool `pools` (sorted): the observed mean of `J / m` against
/// [`DRAWS`] draws of it, each bin's `J` drawn independently from its
/// [`rank_law`] by inverse CDF from `Pcg32::new(seed, stream)`.
#[must_use]
pub fn overall(stat: &'static str, points: &[&Point], pools: &[Vec<f64>], stream: u64) -> Overall {
    let mut laws = Vec::new();
    let mut observed = 0.0;
    for p in points {
        let pool = &pools[p.bin];
        let m = pool.len();
        if m == 0 || p.n == 0 {
            continue;
        }
        let below = pool.iter().filter(|&&x| x < p.published).count();
        let at_most = pool.iter().filter(|&&x| x <= p.published).count();
        observed += (below + at_most) as f64 / 2.0 / m as f64;
        let law = rank_law(m, p.n, p.rank);
        let mut cdf = Vec::with_capacity(law.len());
        let mut acc = 0.0;
        for q in &law {
            acc += q;
            cdf.push(acc);
        }
        laws.push((m, cdf));
    }
    let bins = laws.len();
    if bins == 0 {
        return Overall {
            stat,
            bins,
            rank: 0.0,
            expected: 0.0,
            lo: 0.0,
            hi: 1.0,
            compared: false,
            inside: false,
        };
    }
    let observed = observed / bins as f64;
    let mut rng = crate::rng::Pcg32::new(0x00f1_9008, stream);
    let mut draws: Vec<f64> = (0..DRAWS)
        .map(|_| {
            laws.iter()
                .map(|(m, cdf)| {
                    let u = rng.next_f64();
                    let j = cdf.iter().position(|&c| u < c).unwrap_or(*m);
                    j as f64 / *m as f64
                })
                .sum::<f64>()
                / bins as f64
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * DRAWS as f64) as usize).min(DRAWS - 1)];
    let (lo, hi) = (at(ALPHA / 2.0), at(1.0 - ALPHA / 2.0));
    Overall {
        stat,
        bins,
        rank: observed,
        expected: draws.iter().sum::<f64>() / DRAWS as f64,
        lo,
        hi,
        compared: lo > 0.0 || hi < 1.0,
        inside: (lo..=hi).contains(&observed),
    }
}

/// One published column set beside our pooled flows of the pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Compared {
    /// The published table's label (`30`).
    pub table: String,
    /// Its data file (under `frontends/sim/data/`).
    pub file: String,
    /// The column (`Ours`, `ECMP`, `UCMP`).
    pub column: String,
    /// Our scheme.
    pub scheme: String,
    /// The load.
    pub load: f64,
    /// Seeds pooled.
    pub seeds: usize,
    /// Our finished flows of the pair, every seed.
    pub flows: usize,
    /// Of those, larger than the artifact's largest bin.
    pub beyond: usize,
    /// The artifact's flows in its bins.
    pub artifact_flows: usize,
    /// Every point, p50 then p99, by bin.
    pub points: Vec<Point>,
    /// Compared points outside.
    pub out: usize,
    /// Points compared.
    pub compared: usize,
    /// The column-wide tests, p50 then p99.
    pub overall: Vec<Overall>,
    /// At most [`MAX_OUT`] tested points out and every tested
    /// column-wide rank inside.
    pub agrees: bool,
}

/// Sets one published column (`table`'s `ci`-th) beside our pooled pair
/// flows `runs` (one scheme at one load, a run per seed; every run must
/// carry `pair_flows`).
pub fn compare_column(
    table: &[Bin],
    ci: usize,
    n_flows: usize,
    runs: &[&RunResult],
) -> Result<(Vec<Point>, Vec<Overall>, usize, usize), String> {
    let edges: Vec<u64> = table.iter().map(|b| b.flow_size).collect();
    let mut pools: Vec<Vec<f64>> = vec![Vec::new(); edges.len()];
    let (mut flows, mut beyond) = (0, 0);
    for r in runs {
        let pf = r.pair_flows.as_ref().ok_or_else(|| {
            format!(
                "{} at load {} seed {} has no pair_flows (Fig. 7's runs record them from commit 1de0dd6: --pair-flows DC1:DC13)",
                r.scheme, r.load, r.seed
            )
        })?;
        for f in pf {
            let Some(s) = f.slowdown else { continue };
            flows += 1;
            // The artifact's script: slowdown = max(1, fct / ideal).
            match bin_of(f.size, &edges) {
                Some(k) => pools[k].push(s.max(1.0)),
                None => beyond += 1,
            }
        }
    }
    let counts = bin_counts(n_flows);
    for pool in &mut pools {
        pool.sort_by(f64::total_cmp);
    }
    let mut points = Vec::new();
    for stat in ["p50", "p99"] {
        for (k, b) in table.iter().enumerate() {
            let pool = &pools[k];
            let n = counts[k];
            let rank = script_rank(n, stat);
            let published = if stat == "p50" {
                b.values[ci].1
            } else {
                b.values[ci].2
            };
            let (lo, hi, compared, inside) = test_point(pool, n, rank, published);
            let ours = if pool.is_empty() {
                0.0
            } else {
                pool[script_rank(pool.len(), stat) - 1]
            };
            points.push(Point {
                bin: k,
                stat,
                size_lo: if k == 0 { 0 } else { edges[k - 1] },
                size_hi: b.flow_size,
                n,
                rank,
                m: pool.len(),
                ours,
                lo,
                hi,
                published,
                compared,
                inside,
            });
        }
    }
    let overall = ["p50", "p99"]
        .iter()
        .zip(0u64..)
        .map(|(stat, stream)| {
            let ps: Vec<&Point> = points.iter().filter(|p| p.stat == *stat).collect();
            overall(stat, &ps, &pools, 1 + ci as u64 * 2 + stream)
        })
        .collect();
    Ok((points, overall, flows, beyond))
}

/// Sets every published column of `f` (Figure 8) beside the pair flows
/// of its runs' results (`results`: per run label, its results). A column
/// without runs is left out; one with a run without `pair_flows`, or
/// where nothing could be tested, is named in the second list, with why.
/// Errors: a table that does not parse, a column without its flow count.
pub fn compare(
    f: &Figure,
    results: &[(String, Vec<RunResult>)],
) -> Result<(Vec<Compared>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut not = Vec::new();
    for p in f.published {
        let table = parse_table(p.csv).map_err(|e| format!("{}: {e}", p.file))?;
        let load: f64 = p.label.parse::<f64>().map_err(|e| e.to_string())? / 100.0;
        for (ci, column) in table[0].values.iter().map(|v| v.0.clone()).enumerate() {
            let Some(scheme) = super::published_scheme(&column) else {
                continue;
            };
            let runs: Vec<&RunResult> = results
                .iter()
                .flat_map(|(_, rs)| rs)
                .filter(|r| r.scheme == scheme && (r.load - load).abs() < 1e-9)
                .collect();
            if runs.is_empty() {
                continue;
            }
            let n_flows = artifact_flows(p.label, &column)
                .ok_or_else(|| format!("{}: no flow count for {column}", p.file))?;
            // Runs without the records (Figure 7's jobs from before
            // 1de0dd6): the column is named, the others still compared.
            let (points, overall, flows, beyond) = match compare_column(&table, ci, n_flows, &runs)
            {
                Ok(c) => c,
                Err(e) => {
                    not.push(format!("{column} ({scheme}, {}): {e}", p.file));
                    continue;
                }
            };
            let compared = points.iter().filter(|p| p.compared).count();
            let outside = points.iter().filter(|p| p.compared && !p.inside).count();
            if compared == 0 && overall.iter().all(|o| !o.compared) {
                not.push(format!(
                    "{column} ({scheme}, {}): nothing could be tested ({flows} of our flows over {} seed(s))",
                    p.file,
                    runs.len()
                ));
                continue;
            }
            let overall_out = overall.iter().any(|o| o.compared && !o.inside);
            out.push(Compared {
                table: p.label.into(),
                file: p.file.into(),
                column,
                scheme: scheme.into(),
                load,
                seeds: runs.len(),
                flows,
                beyond,
                artifact_flows: n_flows,
                points,
                out: outside,
                compared,
                overall,
                agrees: outside <= MAX_OUT && !overall_out,
            });
        }
    }
    Ok((out, not))
}

/// A slowdown for the text: `inf` when infinite.
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "inf".into()
    }
}

/// How a tested quantity is written: `marks[0]` when its test could not
/// fail, `marks[1]` inside its region, `marks[2]` outside.
fn mark(compared: bool, inside: bool, marks: [&str; 3]) -> &str {
    match (compared, inside) {
        (false, _) => marks[0],
        (true, true) => marks[1],
        (true, false) => marks[2],
    }
}

/// The comparison as text: per column a verdict line and per bin both
/// statistics (ours over the pooled flows, the 99 % region of the
/// artifact's statistic, the artifact's; `*` outside, `-` not tested),
/// then one verdict line per column.
#[must_use]
pub fn text(compared: &[Compared]) -> String {
    let mut s = String::new();
    for c in compared {
        s.push_str(&format!(
            "vs artifact, load {:.0}%, {} ({}, {}) ({} seed{}, {} of our DC1-DC13 flows pooled, {} beyond its largest bin; the artifact's {} in 20 bins): {} ({} of {} tested points outside their 99 % region; at most {MAX_OUT} allowed; {} not tested: too few of our flows)\n",
            c.load * 100.0,
            c.column,
            c.scheme,
            c.file,
            c.seeds,
            if c.seeds == 1 { "" } else { "s" },
            c.flows,
            c.beyond,
            c.artifact_flows,
            if c.agrees { "agrees" } else { "DISAGREES" },
            c.out,
            c.compared,
            c.points.len() - c.compared
        ));
        for o in &c.overall {
            s.push_str(&format!(
                "  all bins, {}: the artifact's value sits at mean rank {:.2} among ours over {} bins ({:.2} expected, 99 % region [{:.2}, {:.2}]){}\n",
                o.stat,
                o.rank,
                o.bins,
                o.expected,
                o.lo,
                o.hi,
                mark(o.compared, o.inside, [" - not tested", "", " * outside"])
            ));
        }
        s.push_str("  bin  sizes (bytes]        n   m   p50 ours  region          artifact    p99 ours  region          artifact\n");
        let half = c.points.len() / 2;
        for (a, b) in c.points[..half].iter().zip(&c.points[half..]) {
            let cell = |p: &Point| {
                format!(
                    "{:>7}  [{:>5}, {:>5})  {:>7.2}{}",
                    num(p.ours),
                    num(p.lo),
                    num(p.hi),
                    p.published,
                    mark(p.compared, p.inside, ["-", " ", "*"])
                )
            };
            s.push_str(&format!(
                "  {:>3}  ({:>5}, {:>5}]  {:>3} {:>3}  {}   {}\n",
                a.bin,
                crate::report::human(a.size_lo as f64),
                crate::report::human(a.size_hi as f64),
                a.n,
                a.m,
                cell(a),
                cell(b)
            ));
        }
    }
    s
}

/// One line per compared column: its verdict.
#[must_use]
pub fn verdicts(compared: &[Compared]) -> String {
    let mut s = format!(
        "verdicts (a point is outside when the artifact's value is in neither {:.1} % tail of the exact law of its rank among our pooled flows of the bin; a column agrees with at most {MAX_OUT} of its tested points outside and its mean rank over the bins, p50 and p99, inside its 99 % region):\n",
        ALPHA * 50.0
    );
    for c in compared {
        let p50_out = c
            .points
            .iter()
            .filter(|p| p.stat == "p50" && p.compared && !p.inside)
            .count();
        s.push_str(&format!(
            "  {:<38} {:<22} load {:>3.0}%  {} seed(s)  {:<10} {:>2} of {:>2} tested points out (p50 {p50_out}, p99 {}); {} not tested; mean rank {}\n",
            c.file,
            c.column,
            c.load * 100.0,
            c.seeds,
            if c.agrees { "agrees" } else { "DISAGREES" },
            c.out,
            c.compared,
            c.out - p50_out,
            c.points.len() - c.compared,
            c.overall
                .iter()
                .map(|o| format!(
                    "{} {:.2} in [{:.2}, {:.2}]{}",
                    o.stat,
                    o.rank,
                    o.lo,
                    o.hi,
                    mark(o.compared, o.inside, [" (not tested)", "", " *"])
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    s
}

/// The per-bin numbers as CSV: one row per compared column and bin.
#[must_use]
pub fn csv(f: &Figure, compared: &[Compared]) -> String {
    let mut s = String::from(
        "figure,table,column,scheme,load,seeds,bin,size_lo,size_hi,artifact_n,ours_m,p50_rank,p50_ours,p50_lo,p50_hi,p50_artifact,p50_tested,p50_inside,p99_rank,p99_ours,p99_lo,p99_hi,p99_artifact,p99_tested,p99_inside\n",
    );
    for c in compared {
        let half = c.points.len() / 2;
        for (a, b) in c.points[..half].iter().zip(&c.points[half..]) {
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{},{},{},{},{:.4},{:.4},{:.4},{},{},{}\n",
                f.number,
                c.table,
                c.column,
                c.scheme,
                c.load,
                c.seeds,
                a.bin,
                a.size_lo,
                a.size_hi,
                a.n,
                a.m,
                a.rank,
                a.ours,
                a.lo,
                a.hi,
                a.published,
                a.compared,
                a.inside,
                b.rank,
                b.ours,
                b.lo,
                b.hi,
                b.published,
                b.compared,
                b.inside
            ));
        }
    }
    s
}

/// Writes `fig8.json` (labels, our pair flows' comparison), `fig8.csv`,
/// `fig8.txt` and one SVG per published table (our pooled statistics at
/// each bin's upper size, solid, beside the artifact's, dashed) into
/// `dir`.
#[cfg(feature = "cli")]
pub fn write_outputs(
    f: &Figure,
    dir: &std::path::Path,
    model: &str,
    labels: &[(String, String)],
    compared: &[Compared],
    text: &str,
) -> Result<(), crate::SimError> {
    let stem = format!("fig{}", f.number);
    let body = serde_json::json!({
        "test": { "alpha": ALPHA, "max_out": MAX_OUT },
        "runs": labels.iter().map(|(run, label)| serde_json::json!({ "run": run, "label": label })).collect::<Vec<_>>(),
        "comparisons": compared,
    });
    crate::figure::write_text_outputs(dir, f, model, body, csv(f, compared), text)?;
    for p in f.published {
        let cs: Vec<&Compared> = compared.iter().filter(|c| c.file == p.file).collect();
        let Some(first) = cs.first() else { continue };
        let mut series = Vec::new();
        for c in &cs {
            let half = c.points.len() / 2;
            let (p50, p99) = c.points.split_at(half);
            let pick = |ours: bool| -> Vec<(f64, f64, f64)> {
                p50.iter()
                    .zip(p99)
                    .filter(|(a, _)| !ours || a.m > 0)
                    .map(|(a, b)| {
                        if ours {
                            (a.size_hi as f64, a.ours, b.ours)
                        } else {
                            (a.size_hi as f64, a.published, b.published)
                        }
                    })
                    .collect()
            };
            series.push(crate::plot::Series {
                name: format!("{} (ours, {} seeds pooled)", c.column, c.seeds),
                scheme: c.scheme.clone(),
                points: pick(true),
                artifact: false,
            });
            series.push(crate::plot::Series {
                name: format!("{} (artifact)", c.column),
                scheme: c.scheme.clone(),
                points: pick(false),
                artifact: true,
            });
        }
        let title = format!(
            "Figure {} ({}, {model} model, commit {}): DC1-DC13 flows, ours pooled over seeds solid, artifact dashed; load {:.0}%",
            f.number,
            p.file,
            crate::COMMIT,
            first.load * 100.0
        );
        let footer: Vec<String> = labels
            .iter()
            .map(|(run, label)| format!("run {run}: {label}"))
            .collect();
        crate::plot::slowdown_series(
            &crate::figure::svg_path(dir, &stem, p.file),
            &title,
            &series,
            &footer,
        )?;
    }
    eprintln!(
        "wrote {stem}.json, {stem}.csv, {stem}.txt and the SVGs to {}",
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::stats::PairFlow;

    #[test]
    fn the_rank_law_is_a_law_and_matches_counting() {
        for (m, n) in [(0, 3), (1, 1), (9, 3), (20, 6), (57, 5)] {
            for k in 1..=n {
                let p = rank_law(m, n, k);
                assert_eq!(p.len(), m + 1);
                assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{m} {n} {k}");
            }
            // No rank outside 1..=n has a law (each guard on its own).
            assert!(rank_law(m, n, 0).is_empty(), "{m} {n} 0");
            assert!(rank_law(m, n, n + 1).is_empty(), "{m} {n} {}", n + 1);
            assert!(rank_law(m, 0, 1).is_empty(), "{m} 0 1");
        }
        // m = 2 (A), n = 2 (B), k = 1, by the 6 orders of two A and two
        // B: J = 0 in BBAA, BABA, BAAB; 1 in ABBA, ABAB; 2 in AABB.
        let p = rank_law(2, 2, 1);
        for (got, want) in p.iter().zip([3.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0]) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
        assert!(rank_law(5, 3, 4).is_empty());
    }

    /// The fewest pooled flows of ours a bin with which each end of a
    /// point's test can fail (docs/simulator.md quotes them).
    #[test]
    fn how_many_of_our_flows_a_test_needs() {
        let can_fail_low =
            |m: usize, n: usize, stat: &str| rank_law(m, n, script_rank(n, stat))[0] <= ALPHA / 2.0;
        let can_fail_high =
            |m: usize, n: usize, stat: &str| rank_law(m, n, script_rank(n, stat))[m] <= ALPHA / 2.0;
        for (n, stat, low, high) in [
            (3, "p50", 33, 33),
            (3, "p99", 9, 597),
            (4, "p50", 14, 46),
            (4, "p99", 6, 796),
            (5, "p50", 19, 19),
            (5, "p99", 5, 995),
            (6, "p50", 12, 24),
            (6, "p99", 4, 1194),
        ] {
            assert!(can_fail_low(low, n, stat) && !can_fail_low(low - 1, n, stat));
            assert!(can_fail_high(high, n, stat) && !can_fail_high(high - 1, n, stat));
        }
    }

    #[test]
    fn the_bins_are_the_artifacts() {
        // Its flow counts give the bin sizes of docs/simulator.md.
        assert!(bin_counts(61).iter().all(|&c| c == 3 || c == 4));
        assert!(bin_counts(91).iter().all(|&c| c == 4 || c == 5));
        assert!(bin_counts(118).iter().all(|&c| c == 5 || c == 6));
        assert_eq!(bin_counts(118)[0], 5);
        for (t, c, n) in [("30", "Ours", 61), ("80", "ECMP", 111), ("80", "UCMP", 118)] {
            assert_eq!(artifact_flows(t, c), Some(n));
        }
        assert_eq!(artifact_flows("30", "Nobody"), None);
        // Edges: a flow of a bin's largest size is in that bin, one byte
        // more in the next.
        let f = crate::figure::figure(8).expect("figure 8");
        let t = parse_table(f.published[0].csv).expect("parses");
        let edges: Vec<u64> = t.iter().map(|b| b.flow_size).collect();
        assert_eq!(edges[0], 3936);
        assert_eq!(bin_of(1, &edges), Some(0));
        assert_eq!(bin_of(3936, &edges), Some(0));
        assert_eq!(bin_of(3937, &edges), Some(1));
        assert_eq!(bin_of(edges[19], &edges), Some(19));
        assert_eq!(bin_of(edges[19] + 1, &edges), None);
    }

    /// A run of `scheme` whose pair flows have, in every bin of the
    /// artifact's 30 % table, `per_bin` flows of slowdowns `slow(bin, i)`.
    fn run_with(
        table: &[Bin],
        scheme: &str,
        seed: u64,
        per_bin: usize,
        slow: &dyn Fn(usize, usize) -> f64,
    ) -> RunResult {
        let mut flows = Vec::new();
        let mut lo = 0;
        for (k, b) in table.iter().enumerate() {
            for i in 0..per_bin {
                // Sizes spread inside (lo, hi].
                let size = lo + 1 + (b.flow_size - lo - 1) * i as u64 / per_bin.max(1) as u64;
                flows.push(PairFlow {
                    src_dc: 1,
                    dst_dc: 13,
                    size,
                    slowdown: Some(slow(k, i)),
                });
            }
            lo = b.flow_size;
        }
        flows.push(PairFlow {
            src_dc: 13,
            dst_dc: 1,
            size: lo + 1,
            slowdown: Some(1.0),
        });
        RunResult {
            load: 0.3,
            pair_flows: Some(flows),
            ..crate::report::test::run(scheme, seed, 0.0, 0.0)
        }
    }

    #[test]
    fn an_artifact_value_far_outside_ours_disagrees_and_one_inside_agrees() {
        let f = crate::figure::figure(8).expect("figure 8");
        let table = parse_table(f.published[0].csv).expect("parses");
        let ci = 1; // ECMP
                    // Ours spread around the artifact's p50 and p99 of each bin.
                    // Ours: a law whose median is the artifact's p50 and whose 3rd
                    // quartile its p99 (where a median of 3 and a largest of 3 sit on
                    // average), by quantiles u = (i + 0.5) / 20.
        let around = |k: usize, i: usize| {
            let (p50, p99) = (table[k].values[ci].1, table[k].values[ci].2);
            let u = (i as f64 + 0.5) / 20.0;
            if u < 0.5 {
                p50 * (0.5 + u)
            } else if u < 0.75 {
                p50 + (p99 - p50) * (u - 0.5) / 0.25
            } else {
                p99 * (1.0 + 2.0 * (u - 0.75))
            }
        };
        let near: Vec<RunResult> = (1..=3)
            .map(|s| run_with(&table, "ecmp", s, 20, &around))
            .collect();
        let results = vec![("30,50,80".to_string(), near)];
        let (c, not) = compare(f, &results).expect("compares");
        assert!(not.is_empty(), "{not:?}");
        assert_eq!(c.len(), 1, "only ECMP at 30 % has runs");
        let c0 = &c[0];
        assert_eq!((c0.column.as_str(), c0.seeds, c0.beyond), ("ECMP", 3, 3));
        assert_eq!(c0.flows, 3 * (20 * 20 + 1));
        assert!(c0.points.iter().all(|p| p.m == 60 && p.compared));
        assert!(c0.agrees, "{}", text(&c));
        // The text: every point tested and inside (no mark), the verdict.
        let (t, v) = (text(&c), verdicts(&c));
        assert!(t.contains("): agrees (0 of 40 tested points"), "{t}");
        assert!(!t.contains('*') && !t.contains(" - not tested"), "{t}");
        assert!(v.contains(" agrees ") && !v.contains('*'), "{v}");
        // Ten times slower than the artifact everywhere: every p50 out.
        let slow: Vec<RunResult> = (1..=3)
            .map(|s| run_with(&table, "ecmp", s, 20, &|k, i| 10.0 * around(k, i)))
            .collect();
        let (c, _) = compare(f, &[("30,50,80".to_string(), slow)]).expect("compares");
        assert!(!c[0].agrees, "{}", text(&c));
        assert!(
            c[0].points
                .iter()
                .filter(|p| p.stat == "p50")
                .all(|p| !p.inside),
            "{}",
            text(&c)
        );
        // One flow a bin: no point can be tested, but over the 20 bins
        // the artifact's values far below ours are seen.
        let few: Vec<RunResult> = vec![run_with(&table, "ecmp", 1, 1, &|k, i| 10.0 * around(k, i))];
        let (c, not) = compare(f, &[("30,50,80".to_string(), few)]).expect("compares");
        assert!(not.is_empty(), "{not:?}");
        assert_eq!(c[0].compared, 0);
        assert!(c[0]
            .overall
            .iter()
            .all(|o| o.compared && !o.inside && o.rank == 0.0));
        assert!(!c[0].agrees, "{}", text(&c));
        // The text: every cell marked not tested, both column-wide ranks
        // marked outside, in the per-bin text and the verdict line.
        let (t, v) = (text(&c), verdicts(&c));
        assert!(t.contains("DISAGREES (0 of 0 tested points"), "{t}");
        assert_eq!(t.matches(" * outside").count(), 2, "{t}");
        let cells = t
            .lines()
            .filter(|l| l.contains(") -") || l.ends_with('-'))
            .count();
        assert!(cells >= 20, "{t}");
        assert!(
            v.contains("DISAGREES") && v.matches(" *").count() == 2,
            "{v}"
        );
        // No flow at all: the column is named, not compared.
        let none = vec![RunResult {
            load: 0.3,
            pair_flows: Some(Vec::new()),
            ..crate::report::test::run("ecmp", 1, 0.0, 0.0)
        }];
        let (c, not) = compare(f, &[("30,50,80".to_string(), none)]).expect("compares");
        assert!(c.is_empty() && not.len() == 1, "{not:?}");
        assert!(not[0].contains("nothing could be tested"), "{not:?}");
        // A run without pair flows names its column, not an empty pool.
        let bare = vec![RunResult {
            load: 0.3,
            ..crate::report::test::run("ecmp", 1, 0.0, 0.0)
        }];
        let (c, not) = compare(f, &[("30,50,80".to_string(), bare)]).expect("compares");
        assert!(c.is_empty() && not.len() == 1, "{not:?}");
        assert!(
            not[0].contains("pair_flows") && not[0].contains("ECMP"),
            "{not:?}"
        );
    }

    /// Values drawn like ours sit at the expected mean rank; values each
    /// a little high, none implausible alone, are outside together.
    #[test]
    fn the_column_wide_rank_sees_a_shift_no_single_bin_can() {
        let pools: Vec<Vec<f64>> = (0..20).map(|_| (1..=9).map(f64::from).collect()).collect();
        let points = |v: f64| -> Vec<Point> {
            (0..20)
                .map(|bin| Point {
                    bin,
                    stat: "p50",
                    size_lo: 0,
                    size_hi: 1,
                    n: 3,
                    rank: 2,
                    m: 9,
                    ours: 5.0,
                    lo: 1.0,
                    hi: f64::INFINITY,
                    published: v,
                    compared: false,
                    inside: false,
                })
                .collect()
        };
        let mid = points(5.0);
        let o = overall("p50", &mid.iter().collect::<Vec<_>>(), &pools, 1);
        assert!(o.compared && o.inside, "{o:?}");
        assert!((o.expected - 0.5).abs() < 0.01 && (o.rank - 0.5).abs() < 1e-12);
        // 8.5 in every bin: 8 of 9 of ours below, plausible for one
        // median of 3 (test_point cannot fail with 9), not for 20.
        let high = points(8.5);
        assert!(!test_point(&pools[0], 3, 2, 8.5).2);
        let o = overall("p50", &high.iter().collect::<Vec<_>>(), &pools, 1);
        assert!(o.compared && !o.inside, "{o:?}");
        // The draws are a fixed stream: the same region every time.
        let again = overall("p50", &high.iter().collect::<Vec<_>>(), &pools, 1);
        assert_eq!((o.lo, o.hi), (again.lo, again.hi));
    }

    #[test]
    fn a_maximum_above_all_ours_is_plausible_one_below_all_is_not() {
        let ours: Vec<f64> = (1..=30).map(f64::from).collect();
        // The largest of 3 above all 30 of ours: probability 3/33.
        let (lo, hi, tested, inside) = test_point(&ours, 3, 3, 100.0);
        assert!(
            tested && inside && hi.is_infinite() && lo > 1.0,
            "{lo} {hi}"
        );
        // Below all of ours: probability 1 / C(33, 3).
        let (_, _, tested, inside) = test_point(&ours, 3, 3, 0.5);
        assert!(tested && !inside);
        // The middle of 3 near our median is inside; below all of 60 of
        // ours (probability 61 / C(63, 3)) it is not. Against 30 of ours
        // either end has probability 31 / C(33, 3), over 0.5 %: the test
        // cannot fail, so the point is not tested.
        let sixty: Vec<f64> = (1..=60).map(f64::from).collect();
        assert!(test_point(&sixty, 3, 2, 30.0).3);
        let (_, _, tested, inside) = test_point(&sixty, 3, 2, 0.5);
        assert!(tested && !inside);
        let (_, _, tested, inside) = test_point(&ours, 3, 2, 0.5);
        assert!(!tested && !inside);
        // Two of ours: the test cannot fail.
        let (_, _, tested, inside) = test_point(&[2.0, 3.0], 3, 3, 0.5);
        assert!(!tested && !inside);
        // A tie with ours counts in the artifact's favour.
        let (lo, _, _, inside) = test_point(&ours, 3, 3, 0.5);
        assert!(!inside);
        assert!(test_point(&ours, 3, 3, lo).3);
    }
}
