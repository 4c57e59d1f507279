//! Flow-size distributions: the three workloads of the paper's evaluation
//! (§6), carried as const tables of published CDF points, and custom CDF
//! files in the same format (`<size in bytes> <cumulative percent>` a line,
//! linear interpolation between points, the last point at 100 %).

use crate::error::SimError;
use crate::rng::Pcg32;

/// One CDF point: flow size in bytes, cumulative percent.
pub type CdfPoint = (u64, f64);

/// Web search: query/response and background traffic. Published in
/// Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010.
pub const WEBSEARCH: &[CdfPoint] = &[
    (0, 0.0),
    (10_000, 15.0),
    (20_000, 20.0),
    (30_000, 30.0),
    (50_000, 40.0),
    (80_000, 53.0),
    (200_000, 60.0),
    (1_000_000, 70.0),
    (2_000_000, 80.0),
    (5_000_000, 90.0),
    (10_000_000, 97.0),
    (30_000_000, 100.0),
];

/// Facebook Hadoop cluster. Published in Roy et al., "Inside the Social
/// Network's (Datacenter) Network", SIGCOMM 2015.
pub const FB_HADOOP: &[CdfPoint] = &[
    (0, 0.0),
    (100, 1.0),
    (200, 2.0),
    (300, 5.0),
    (350, 15.0),
    (400, 20.0),
    (500, 30.0),
    (600, 40.0),
    (700, 50.0),
    (1_000, 60.0),
    (2_000, 67.0),
    (7_000, 70.0),
    (30_000, 72.0),
    (50_000, 82.0),
    (80_000, 87.0),
    (120_000, 90.0),
    (300_000, 95.0),
    (1_000_000, 97.5),
    (2_000_000, 99.0),
    (10_000_000, 100.0),
];

/// Alibaba storage cluster. Published in Li et al., "HPCC: High Precision
/// Congestion Control", SIGCOMM 2019.
pub const ALI_STORAGE: &[CdfPoint] = &[
    (0, 0.0),
    (4_000, 22.93),
    (8_000, 69.21),
    (16_000, 80.61),
    (32_000, 90.47),
    (64_000, 93.53),
    (128_000, 96.77),
    (256_000, 97.53),
    (2_000_000, 100.0),
];

/// A validated flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    name: String,
    points: Vec<CdfPoint>,
}

impl Workload {
    /// A workload from CDF points: at least two, sizes non-decreasing,
    /// percents non-decreasing in `0..=100` and ending at 100.
    pub fn from_points(name: &str, points: &[CdfPoint]) -> Result<Self, SimError> {
        let bad = |why: &str| SimError::Workload(format!("{name}: {why}"));
        if points.len() < 2 {
            return Err(bad("a CDF needs at least two points"));
        }
        for w in points.windows(2) {
            if let [(s0, p0), (s1, p1)] = w {
                if s1 < s0 || p1 < p0 {
                    return Err(bad("sizes and percents must not decrease"));
                }
            }
        }
        let (first, last) = (points[0].1, points[points.len() - 1].1);
        if !(0.0..=100.0).contains(&first) || (last - 100.0).abs() > 1e-9 {
            return Err(bad("percents must lie in 0..=100 and end at 100"));
        }
        if points.iter().all(|p| p.0 == 0) {
            return Err(bad("every size is zero"));
        }
        Ok(Workload {
            name: name.to_string(),
            points: points.to_vec(),
        })
    }

    /// An embedded workload by name: `websearch`, `fbhadoop` or `alistorage`.
    ///
    /// ```
    /// # use lcmp_sim::workload::Workload;
    /// let w = Workload::embedded("websearch").unwrap();
    /// assert!((w.mean_bytes() - 1_711_250.0).abs() < 1.0);
    /// ```
    pub fn embedded(name: &str) -> Option<Self> {
        let points = match name {
            "websearch" => WEBSEARCH,
            "fbhadoop" => FB_HADOOP,
            "alistorage" => ALI_STORAGE,
            _ => return None,
        };
        Workload::from_points(name, points).ok()
    }

    /// Parses a CDF file's text (`<bytes> <percent>` a line; blank lines and
    /// lines starting with `#` are skipped).
    pub fn parse(name: &str, text: &str) -> Result<Self, SimError> {
        let mut points = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut it = line.split_whitespace();
            let parsed = match (it.next(), it.next(), it.next()) {
                (Some(s), Some(p), None) => s.parse::<f64>().ok().zip(p.parse::<f64>().ok()),
                _ => None,
            };
            match parsed {
                Some((s, p)) if s.is_finite() && s >= 0.0 && p.is_finite() => {
                    points.push((s.round() as u64, p))
                }
                _ => {
                    return Err(SimError::Workload(format!(
                        "{name}:{}: expected `<bytes> <percent>`",
                        i + 1
                    )))
                }
            }
        }
        Workload::from_points(name, &points)
    }

    /// The workload's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The CDF points.
    pub fn points(&self) -> &[CdfPoint] {
        &self.points
    }

    /// Mean flow size in bytes under linear interpolation.
    pub fn mean_bytes(&self) -> f64 {
        let mut mean = 0.0;
        let mut prev = (0u64, 0.0f64);
        for &(s, p) in &self.points {
            mean += (p - prev.1) / 100.0 * (prev.0 as f64 + s as f64) / 2.0;
            prev = (s, p);
        }
        mean
    }

    /// Draws one flow size (at least one byte).
    pub fn sample(&self, rng: &mut Pcg32) -> u64 {
        let u = rng.next_f64() * 100.0;
        let mut prev = (0u64, 0.0f64);
        for &(s, p) in &self.points {
            if u < p {
                let span = p - prev.1;
                let frac = if span > 0.0 { (u - prev.1) / span } else { 1.0 };
                let size = prev.0 as f64 + frac * (s as f64 - prev.0 as f64);
                return (size.round() as u64).max(1);
            }
            prev = (s, p);
        }
        prev.0.max(1)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// The published CDFs live outside the repository, in
    /// `../shared/data/workloads` next to the clone (CI has them), or under
    /// `$LCMP_SHARED_DATA/workloads`. Missing files fail the test: a
    /// skipped comparison would pass in every checkout that lacks them.
    #[test]
    fn const_tables_match_the_shared_files() {
        let dir = match std::env::var_os("LCMP_SHARED_DATA") {
            Some(d) => std::path::PathBuf::from(d).join("workloads"),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/data/workloads"),
        };
        for (file, name) in [
            ("websearch.cdf", "websearch"),
            ("fb_hadoop.cdf", "fbhadoop"),
            ("ali_storage.cdf", "alistorage"),
        ] {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; the published workload CDFs must be there \
                     (set LCMP_SHARED_DATA to the shared data directory)",
                    path.display()
                )
            });
            let parsed = Workload::parse(name, &text).expect("valid file");
            let embedded = Workload::embedded(name).expect("embedded");
            assert_eq!(parsed.points(), embedded.points(), "{name}");
        }
    }

    #[test]
    fn samples_follow_the_cdf() {
        let w = Workload::embedded("websearch").expect("embedded");
        let mut rng = Pcg32::new(3, 0);
        let n = 100_000;
        let sizes: Vec<u64> = (0..n).map(|_| w.sample(&mut rng)).collect();
        let below_1m = sizes.iter().filter(|&&s| s <= 1_000_000).count() as f64 / n as f64;
        assert!((below_1m - 0.70).abs() < 0.01, "{below_1m}");
        let mean = sizes.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / w.mean_bytes() - 1.0).abs() < 0.03, "{mean}");
        assert!(sizes.iter().all(|&s| (1..=30_000_000).contains(&s)));
    }

    #[test]
    fn rejects_bad_files() {
        assert!(Workload::parse("x", "10 50\n5 100\n").is_err());
        assert!(Workload::parse("x", "10 50\n20 90\n").is_err());
        assert!(Workload::parse("x", "ten 50\n").is_err());
        assert!(Workload::parse("x", "").is_err());
        assert!(Workload::parse("x", "0 0\n100 100\n").is_ok());
    }
}
