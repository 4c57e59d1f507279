//! The reproduction check (`lcmp sim --vs-artifact`): our per-size-bin
//! slowdown curves against the artifact's published Figure 5 curves
//! (`data/artifact-fig5/*.csv`, their source in that folder's README).
//!
//! Both sides cut the flows of a run, sorted by size, into 20 equal-count
//! bins and give each bin's p50 and p99 slowdown: 40 points per scheme
//! and load. A point agrees when our value (the mean over seeds) is
//! within its band of the published one; the band is
//! `max(min_rel × published, sigmas × σ)`, where σ² is the variance of
//! the difference: our mean's (the sample variance over seeds over their
//! number; with one seed, estimated from our curve like the artifact's)
//! plus the artifact's (one run per load: estimated from its curve as
//! the mean square of adjacent-bin differences over 2, which also counts
//! the curve's real slope, so it errs wide). A scheme agrees at a load
//! when at most `max_out` of its checked points are outside.

use std::ops::Range;

use serde::Serialize;

use crate::stats::RunResult;

/// Bins per curve, as the artifact's analysis script cuts them.
pub const BINS: usize = 20;

/// One published bin: its start percentile, the flow size the artifact's
/// script reports for it, and (p50, p99) per scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct PublishedBin {
    /// Start percentile of the bin (0, 0.05, ...).
    pub percentile: f64,
    /// Flow size the artifact reports for the bin, bytes.
    pub size: u64,
    /// LCMP's ("Ours") p50 and p99 slowdown.
    pub lcmp: (f64, f64),
    /// ECMP's.
    pub ecmp: (f64, f64),
    /// UCMP's.
    pub ucmp: (f64, f64),
}

impl PublishedBin {
    /// The (p50, p99) of `scheme` (`lcmp`, `ecmp`, `ucmp`).
    #[must_use]
    pub fn of(&self, scheme: &str) -> Option<(f64, f64)> {
        match scheme {
            "lcmp" => Some(self.lcmp),
            "ecmp" => Some(self.ecmp),
            "ucmp" => Some(self.ucmp),
            _ => None,
        }
    }
}

/// The published curves at 30, 50 and 80 % load.
const CSV: [(u32, &str); 3] = [
    (30, include_str!("../data/artifact-fig5/30.csv")),
    (50, include_str!("../data/artifact-fig5/50.csv")),
    (80, include_str!("../data/artifact-fig5/80.csv")),
];

/// Parses one of the artifact's `*-FCTslowdown.csv` files.
pub fn parse(csv: &str) -> Result<Vec<PublishedBin>, String> {
    let mut lines = csv.lines();
    let header = lines.next().ok_or("empty file")?;
    if header.trim()
        != "Percentile,FlowSize,Ours-fct_p50,Ours-fct_p99,ECMP-fct_p50,ECMP-fct_p99,UCMP-fct_p50,UCMP-fct_p99"
    {
        return Err(format!("unexpected header `{header}`"));
    }
    let mut bins = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<f64> = line
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("line {}: {e}", i + 2))?;
        if f.len() != 8 || f.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(format!("line {}: expected 8 non-negative numbers", i + 2));
        }
        bins.push(PublishedBin {
            percentile: f[0],
            size: f[1] as u64,
            lcmp: (f[2], f[3]),
            ecmp: (f[4], f[5]),
            ucmp: (f[6], f[7]),
        });
    }
    if bins.len() != BINS {
        return Err(format!("{} bins, expected {BINS}", bins.len()));
    }
    Ok(bins)
}

/// The published curves of `load` (0.3, 0.5 or 0.8), if there are any.
#[must_use]
pub fn published(load: f64) -> Option<Vec<PublishedBin>> {
    CSV.iter()
        .find(|(pct, _)| (f64::from(*pct) / 100.0 - load).abs() < 1e-9)
        .and_then(|(_, csv)| parse(csv).ok())
}

/// How wide a band is and how many points may fall outside it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Band {
    /// Least half-width, relative to the published value.
    pub min_rel: f64,
    /// Half-width in combined standard deviations.
    pub sigmas: f64,
    /// Points of a scheme that may be outside (of 40, or of the checked).
    pub max_out: usize,
}

impl Band {
    /// The full check: 3σ, at least 5 %, at most 2 of 40 points out.
    pub const FULL: Band = Band {
        min_rel: 0.05,
        sigmas: 3.0,
        max_out: 2,
    };
}

/// One checked point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Bin index (0-19).
    pub bin: usize,
    /// Our bin's median flow size, bytes (the mean over seeds).
    pub size: f64,
    /// `p50` or `p99`.
    pub stat: &'static str,
    /// Our mean over seeds.
    pub ours: f64,
    /// Our standard deviation over seeds (0 with one seed).
    pub ours_sd: f64,
    /// The artifact's value.
    pub published: f64,
    /// Half-width of the band.
    pub band: f64,
    /// Whether `ours` is within `published ± band`.
    pub inside: bool,
}

/// One scheme's verdict at one load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Scheme name.
    pub scheme: String,
    /// Load.
    pub load: f64,
    /// Seeds averaged.
    pub seeds: usize,
    /// The checked points.
    pub points: Vec<Point>,
    /// Points outside their band.
    pub out: usize,
    /// At most `max_out` points outside.
    pub agrees: bool,
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// The artifact curve's noise: RMS of adjacent-bin differences over √2.
fn curve_noise(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let ss: f64 = v.windows(2).map(|w| (w[1] - w[0]) * (w[1] - w[0])).sum();
    (ss / (v.len() - 1) as f64 / 2.0).sqrt()
}

/// Checks the `lcmp`, `ecmp` and `ucmp` results at `load` (other schemes
/// and loads are left out) over the bins `bins` (a sub-range of 0..20)
/// against the published curves. Errors: no published curve for the load,
/// or a run without 20 size bins (`--bins 20` and at least 400 completed
/// flows).
pub fn check(
    results: &[RunResult],
    load: f64,
    bins: Range<usize>,
    band: Band,
) -> Result<Vec<Verdict>, String> {
    let publ = published(load).ok_or_else(|| {
        format!(
            "no published curve at load {:.0} % (30, 50 and 80 %)",
            load * 100.0
        )
    })?;
    let mut verdicts = Vec::new();
    for scheme in ["ecmp", "ucmp", "lcmp"] {
        let runs: Vec<&RunResult> = results
            .iter()
            .filter(|r| r.scheme == scheme && (r.load - load).abs() < 1e-9)
            .collect();
        if runs.is_empty() {
            continue;
        }
        let curve: Vec<(f64, f64)> = publ
            .iter()
            .map(|b| b.of(scheme).unwrap_or((0.0, 0.0)))
            .collect();
        verdicts.push(check_curve(scheme, &runs, &curve, bins.clone(), band)?);
    }
    Ok(verdicts)
}

/// Checks the runs `runs` (one scheme at one load, one per seed) against
/// one published curve `curve` (20 bins of (p50, p99)) over the bins
/// `bins`: the comparison every figure makes (`lcmp sim figure N`). The
/// verdict is named `name`. Errors: a curve or a run without 20 bins.
pub fn check_curve(
    name: &str,
    runs: &[&RunResult],
    curve: &[(f64, f64)],
    bins: Range<usize>,
    band: Band,
) -> Result<Verdict, String> {
    if curve.len() != BINS {
        return Err(format!(
            "{name}: the published curve has {} bins, expected {BINS}",
            curve.len()
        ));
    }
    let Some(first) = runs.first() else {
        return Err(format!("{name}: no run to check"));
    };
    if let Some(r) = runs.iter().find(|r| r.bins.len() != BINS) {
        return Err(format!(
            "{name} seed {}: {} size bins, the check needs {BINS} (--bins 20, at least 400 completed flows)",
            r.seed,
            r.bins.len()
        ));
    }
    let bins = bins.start.min(BINS)..bins.end.min(BINS);
    let mut points = Vec::new();
    for (stat, pick) in [
        ("p50", (|p: (f64, f64)| p.0) as fn((f64, f64)) -> f64),
        ("p99", |p: (f64, f64)| p.1),
    ] {
        let ours_at = |r: &RunResult, b: usize| pick((r.bins[b].p50, r.bins[b].p99));
        let theirs: Vec<f64> = curve[bins.clone()].iter().copied().map(pick).collect();
        let noise = curve_noise(&theirs);
        let our_curve: Vec<f64> = bins
            .clone()
            .map(|b| runs.iter().map(|r| ours_at(r, b)).sum::<f64>() / runs.len() as f64)
            .collect();
        let our_noise = curve_noise(&our_curve);
        for b in bins.clone() {
            let ours: Vec<f64> = runs.iter().map(|r| ours_at(r, b)).collect();
            let (m, sd) = mean_sd(&ours);
            let p = pick(curve[b]);
            let ours_var = if runs.len() >= 2 {
                sd * sd / runs.len() as f64
            } else {
                our_noise * our_noise
            };
            let sigma = (ours_var + noise * noise).sqrt();
            let half = (band.min_rel * p).max(band.sigmas * sigma);
            points.push(Point {
                bin: b,
                size: runs.iter().map(|r| r.bins[b].size).sum::<f64>() / runs.len() as f64,
                stat,
                ours: m,
                ours_sd: sd,
                published: p,
                band: half,
                inside: (m - p).abs() <= half,
            });
        }
    }
    let out = points.iter().filter(|p| !p.inside).count();
    Ok(Verdict {
        scheme: name.into(),
        load: first.load,
        seeds: runs.len(),
        points,
        out,
        agrees: out <= band.max_out,
    })
}

/// The verdicts as text: per scheme a verdict line, then per bin our
/// p50 and p99 (± their standard deviation over seeds), the published
/// ones and the bands; `*` marks a point outside.
#[must_use]
pub fn text(verdicts: &[Verdict], band: Band) -> String {
    let mut s = String::new();
    for v in verdicts {
        s.push_str(&format!(
            "vs artifact, load {:.0}%, {} ({} seed{}): {} ({} of {} points outside the band; at most {} allowed; band max({:.0} %, {}σ))\n",
            v.load * 100.0,
            v.scheme,
            v.seeds,
            if v.seeds == 1 { "" } else { "s" },
            if v.agrees { "agrees" } else { "DISAGREES" },
            v.out,
            v.points.len(),
            band.max_out,
            band.min_rel * 100.0,
            band.sigmas
        ));
        s.push_str(
            "  bin    size  p50 ours±sd    artifact ± band    p99 ours±sd    artifact ± band\n",
        );
        let half = v.points.len() / 2;
        for (a, b) in v.points[..half].iter().zip(&v.points[half..]) {
            let cell = |p: &Point| {
                format!(
                    "{:>6.2}±{:<5.2}{:>6.2} ±{:>5.2}{}",
                    p.ours,
                    p.ours_sd,
                    p.published,
                    p.band,
                    if p.inside { ' ' } else { '*' }
                )
            };
            s.push_str(&format!(
                "  {:>3} {:>7}  {}   {}\n",
                a.bin,
                crate::report::human(a.size),
                cell(a),
                cell(b)
            ));
        }
    }
    s
}

/// The median over the bins `bins` of a scheme's per-bin `stat` (`p50`
/// or `p99`): ours (mean over seeds per bin first) and the artifact's.
#[must_use]
pub fn pooled(
    results: &[RunResult],
    load: f64,
    scheme: &str,
    stat: &str,
    bins: Range<usize>,
) -> Option<(f64, f64)> {
    let publ = published(load)?;
    let runs: Vec<&RunResult> = results
        .iter()
        .filter(|r| r.scheme == scheme && (r.load - load).abs() < 1e-9 && r.bins.len() == BINS)
        .collect();
    if runs.is_empty() || bins.end > BINS || bins.is_empty() {
        return None;
    }
    let pick = |b: &crate::stats::SizeBin| if stat == "p50" { b.p50 } else { b.p99 };
    let mut ours: Vec<f64> = bins
        .clone()
        .map(|i| runs.iter().map(|r| pick(&r.bins[i])).sum::<f64>() / runs.len() as f64)
        .collect();
    let mut theirs: Vec<f64> = bins
        .map(|i| {
            publ[i]
                .of(scheme)
                .map_or(0.0, |p| if stat == "p50" { p.0 } else { p.1 })
        })
        .collect();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Some((median(&mut ours), median(&mut theirs)))
}

/// The reduced check the test command runs (docs/simulator.md, "The
/// reproduction check"): at 30 % load, ECMP's and UCMP's p50 and p99 in
/// the 12 smallest-flow bins within the full band (at most 2 of their 48
/// points out), and LCMP's small-flow tail (the median of its p99 over
/// those bins) within [`REDUCED_TAIL_REL`] of the artifact's. LCMP's
/// median is left out: it departs (docs/simulator.md). Returns what
/// failed, empty if nothing did.
#[must_use]
pub fn reduced_check(results: &[RunResult]) -> Vec<String> {
    let mut failed = Vec::new();
    let small = 0..12;
    let band = Band::FULL;
    match check(results, 0.3, small.clone(), band) {
        Err(e) => failed.push(e),
        Ok(v) => {
            let base: Vec<&Verdict> = v.iter().filter(|v| v.scheme != "lcmp").collect();
            let out: usize = base.iter().map(|v| v.out).sum();
            if base.len() != 2 || out > band.max_out {
                failed.push(format!(
                    "ECMP and UCMP: {out} of {} small-flow points outside the band\n{}",
                    base.iter().map(|v| v.points.len()).sum::<usize>(),
                    text(&v, band)
                ));
            }
        }
    }
    match pooled(results, 0.3, "lcmp", "p99", small) {
        None => failed.push("no LCMP run at 30 % with 20 size bins".into()),
        Some((ours, theirs)) => {
            if (ours - theirs).abs() > REDUCED_TAIL_REL * theirs {
                failed.push(format!(
                    "LCMP small-flow p99 {ours:.2} against the artifact's {theirs:.2} (more than {:.0} % apart)",
                    REDUCED_TAIL_REL * 100.0
                ));
            }
        }
    }
    failed
}

/// How far LCMP's small-flow p99 may be from the artifact's in the
/// reduced check, relative.
pub const REDUCED_TAIL_REL: f64 = 0.2;

#[cfg(test)]
mod test {
    use super::*;
    use crate::stats::SizeBin;

    fn run(scheme: &str, seed: u64, shift: f64) -> RunResult {
        let publ = published(0.3).expect("30 %");
        RunResult {
            flows: 1000,
            completed: 1000,
            bins: publ
                .iter()
                .map(|b| {
                    let (p50, p99) = b.of(scheme).unwrap_or((0.0, 0.0));
                    SizeBin {
                        size: b.size as f64,
                        count: 50,
                        p50: p50 * shift,
                        p99: p99 * shift,
                    }
                })
                .collect(),
            ..crate::report::test::run(scheme, seed, 0.0, 0.0)
        }
    }

    #[test]
    fn the_committed_curves_parse() {
        for load in [0.3, 0.5, 0.8] {
            let p = published(load).expect("a curve");
            assert_eq!(p.len(), BINS);
            assert!(p.windows(2).all(|w| w[0].size <= w[1].size));
        }
        assert!(published(0.4).is_none());
        assert!(parse("Percentile,FlowSize\n").is_err());
    }

    #[test]
    fn the_published_curve_agrees_with_itself_and_a_shifted_one_does_not() {
        let same = [run("ecmp", 1, 1.0), run("lcmp", 1, 1.0)];
        let v = check(&same, 0.3, 0..BINS, Band::FULL).expect("checks");
        assert_eq!(v.len(), 2);
        assert!(v
            .iter()
            .all(|v| v.agrees && v.out == 0 && v.points.len() == 40));
        // 40 % higher everywhere: out of a 5 % band in most points.
        let off = [run("ecmp", 1, 1.4)];
        let v = check(&off, 0.3, 0..BINS, Band::FULL).expect("checks");
        assert!(!v[0].agrees, "{}", text(&v, Band::FULL));
        // No curve at 40 %; a run without 20 bins is an error.
        assert!(check(&same, 0.4, 0..BINS, Band::FULL).is_err());
        let mut short = run("ecmp", 1, 1.0);
        short.bins.truncate(12);
        assert!(check(&[short], 0.3, 0..BINS, Band::FULL).is_err());
    }

    #[test]
    fn the_band_widens_with_the_spread_over_seeds() {
        // Two seeds 30 % apart around the published curve: their mean is
        // on it, and the band is at least 3 sd / sqrt(2) wide.
        let v = check(
            &[run("ucmp", 1, 0.85), run("ucmp", 2, 1.15)],
            0.3,
            0..BINS,
            Band::FULL,
        )
        .expect("checks");
        assert!(v[0].agrees);
        for p in &v[0].points {
            assert!(p.ours_sd > 0.0 && p.band >= 3.0 * p.ours_sd / 2f64.sqrt() - 1e-9);
        }
    }
}
