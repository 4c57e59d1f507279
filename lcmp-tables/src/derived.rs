//! Thresholds derived from installed tables, for people and for data planes
//! that cannot evaluate the core's formulas (e.g. no 128-bit multiply).
//!
//! * Queue thresholds (§3.3, Fig. 3): `qthr[i] = floor(buffer * i / N)`,
//!   straight from [`lcmp_decide::estimator::queue::queue_threshold`], or a
//!   port's explicit table when the tables install one. A sample of
//!   `b > 0` bytes has queue level `i` for the highest `i` with
//!   `b >= qthr[i]`; `b = 0` has no level (score 0). [`scan_equivalent`]
//!   turns any table read that way, even a decreasing one, into the
//!   non-decreasing table the core accepts.
//! * Trend tables (Eq. 3 normalisation), one per distinct port rate at a
//!   given sampling interval: `tthr[i]` is the smallest positive trend `T`
//!   (bytes) for which the core's
//!   [`lcmp_decide::estimator::trend::reaches_trend_level`] holds, i.e.
//!   `ceil(rate * (i + 1) * interval / (N * ticks_per_s * 8))`. The tests
//!   check every entry against the core (`T` reaches, `T - 1` does not).
//!   Since the core normalises by the *observed* interval, a table is exact
//!   only for samples exactly `interval` apart.

use heapless::Vec;
use lcmp_decide::estimator::queue::{queue_threshold, QueueScale};
use lcmp_decide::tables::MAX_LEVELS;

use crate::error::{Count, TablesError};
use crate::MAX_RATE_BUCKETS;

/// The default sampling interval of exported trend tables: 1 ms.
pub const DEFAULT_TREND_INTERVAL_TICKS: u32 = 1000;

/// `qthr[0..n]` for a port buffer.
///
/// ```
/// # use lcmp_tables::derived::queue_thresholds;
/// let q = queue_thresholds(5_000_000_000, 10);
/// assert_eq!(q[1], 500_000_000);
/// assert_eq!(q[9], 4_500_000_000);
/// ```
pub fn queue_thresholds(buffer_bytes: u64, n: usize) -> Vec<u64, MAX_LEVELS> {
    let n = n.min(MAX_LEVELS);
    (0..n)
        .map(|i| queue_threshold(buffer_bytes, i, n))
        .collect()
}

/// The thresholds a queue scale compares a depth with, `qthr[0..N]`.
///
/// ```
/// # use lcmp_tables::derived::scale_thresholds;
/// # use lcmp_decide::estimator::queue::QueueScale;
/// let b = scale_thresholds(QueueScale::Buffer { bytes: 1000, levels: 4 });
/// assert_eq!(&b[..], &[0, 250, 500, 750]);
/// assert_eq!(&scale_thresholds(QueueScale::Thresholds(&[0, 9]))[..], &[0, 9]);
/// ```
pub fn scale_thresholds(scale: QueueScale<'_>) -> Vec<u64, MAX_LEVELS> {
    match scale {
        QueueScale::Buffer { bytes, levels } => queue_thresholds(bytes, levels),
        QueueScale::Thresholds(t) => t.iter().copied().take(MAX_LEVELS).collect(),
    }
}

/// The non-decreasing table equivalent to `raw` when a depth's level is
/// the highest `i` with `depth >= raw[i]`: `eq[i] = min(raw[i..])`. A level
/// `i` is reachable under `raw` exactly when `eq[i] < eq[i + 1]` (or `i` is
/// last), so `raw` and `eq` give every depth the same level. (At most
/// [`MAX_LEVELS`] entries are read.)
///
/// ```
/// # use lcmp_tables::derived::scan_equivalent;
/// // A 5 GB buffer's thresholds stored in 32 bits: 4.5e9 wraps to 205 032 704.
/// let raw: Vec<u64> = (0..10u64).map(|i| (5_000_000_000 * i / 10) % (1 << 32)).collect();
/// let eq = scan_equivalent(&raw);
/// assert_eq!(eq[0], 0);
/// assert!(eq[1..].iter().all(|&t| t == 205_032_704));
/// ```
pub fn scan_equivalent(raw: &[u64]) -> Vec<u64, MAX_LEVELS> {
    let raw = raw.get(..raw.len().min(MAX_LEVELS)).unwrap_or(&[]);
    let mut out: Vec<u64, MAX_LEVELS> = Vec::new();
    let mut min = u64::MAX;
    // Built from the top down, then reversed.
    for &t in raw.iter().rev() {
        min = min.min(t);
        // At most MAX_LEVELS entries: this push cannot fail.
        let _ = out.push(min);
    }
    out.reverse();
    out
}

/// The smallest positive trend (bytes) that reaches level `i` of `n` at
/// `rate_bps` for samples `interval_ticks` apart; `i64::MAX as u64` (and
/// above) means the level cannot be reached by an `i64` trend.
///
/// ```
/// # use lcmp_tables::derived::trend_threshold;
/// // 25 Gbps, 1 ms: 312 500 bytes per level (Fig. 3).
/// assert_eq!(trend_threshold(25_000_000_000, 0, 10, 1_000_000, 1000), 312_500);
/// ```
pub fn trend_threshold(
    rate_bps: u64,
    i: usize,
    n: usize,
    ticks_per_s: u32,
    interval_ticks: u32,
) -> u64 {
    let interval = interval_ticks.max(1);
    let num = u128::from(rate_bps)
        .saturating_mul((i as u128).saturating_add(1))
        .saturating_mul(u128::from(interval));
    let den = (n as u128)
        .saturating_mul(u128::from(ticks_per_s))
        .saturating_mul(8);
    let t = if den == 0 {
        u128::MAX
    } else {
        num.div_ceil(den)
    };
    u64::try_from(t.max(1)).unwrap_or(u64::MAX)
}

/// A trend table: the per-level thresholds of one port rate.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TrendTable {
    /// The port rate, bits per second.
    pub rate_bps: u64,
    /// The sampling interval the table assumes, ticks.
    pub interval_ticks: u32,
    /// `tthr[0..N]`, bytes.
    pub thresholds_bytes: Vec<u64, MAX_LEVELS>,
}

/// One trend table per distinct port rate of `tables`, ascending by rate.
///
/// ```
/// # use lcmp_tables::derived::trend_tables;
/// let t = lcmp_decide::Tables::paper_defaults();
/// assert!(trend_tables(&t, 1000).unwrap().is_empty()); // no ports yet
/// ```
pub fn trend_tables(
    tables: &lcmp_decide::Tables,
    interval_ticks: u32,
) -> Result<Vec<TrendTable, MAX_RATE_BUCKETS>, TablesError> {
    let n = tables.levels.len();
    let tps = tables.params.ticks_per_second;
    let mut rates: Vec<u64, { lcmp_decide::tables::MAX_PORTS }> = Vec::new();
    for p in &tables.ports {
        if !rates.contains(&p.rate_bps) {
            // At most MAX_PORTS ports, so this cannot overflow.
            let _ = rates.push(p.rate_bps);
        }
    }
    rates.sort_unstable();
    if rates.len() > MAX_RATE_BUCKETS {
        return Err(TablesError::TooMany {
            what: Count::RateBuckets,
            count: rates.len() as u64,
        });
    }
    let mut out = Vec::new();
    for rate in rates {
        let thresholds_bytes = (0..n.min(MAX_LEVELS))
            .map(|i| trend_threshold(rate, i, n, tps, interval_ticks))
            .collect();
        let table = TrendTable {
            rate_bps: rate,
            interval_ticks,
            thresholds_bytes,
        };
        out.push(table).map_err(|_| TablesError::TooMany {
            what: Count::RateBuckets,
            count: MAX_RATE_BUCKETS as u64,
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod test {
    use super::*;
    use lcmp_decide::estimator::queue::queue_level;
    use lcmp_decide::estimator::trend::reaches_trend_level;
    use lcmp_decide::estimator::LevelCode;
    use quickcheck::quickcheck;

    /// Up to `MAX_RATE_BUCKETS` distinct port rates get a table each; one
    /// more is refused with the count of rates.
    #[test]
    fn rate_buckets_are_counted_up_to_their_limit() {
        let with_rates = |n: usize| {
            let mut t = lcmp_decide::Tables::paper_defaults();
            for i in 0..n {
                let _ = t.ports.push(lcmp_decide::PortConfig {
                    id: lcmp_decide::PortId(i as u8),
                    rate_bps: 1_000_000_000 * (i as u64 + 1),
                    buffer_bytes: 1 << 20,
                });
            }
            t
        };
        let full = trend_tables(&with_rates(MAX_RATE_BUCKETS), 1000).expect("at the limit");
        assert_eq!(full.len(), MAX_RATE_BUCKETS);
        assert_eq!(
            trend_tables(&with_rates(MAX_RATE_BUCKETS + 1), 1000),
            Err(TablesError::TooMany {
                what: Count::RateBuckets,
                count: MAX_RATE_BUCKETS as u64 + 1,
            })
        );
    }

    #[test]
    fn trend_tables_agree_with_core() {
        let topo = crate::Topology::embedded("testbed8").expect("embedded");
        let t = crate::build_tables(&topo, 1, &crate::BuildOptions::default()).expect("build");
        for interval in [1, 7, 1000, 1_000_000] {
            let tables = trend_tables(&t, interval).expect("tables");
            let rates: alloc::vec::Vec<u64> = tables.iter().map(|t| t.rate_bps).collect();
            assert_eq!(rates, [25_000_000_000, 100_000_000_000, 200_000_000_000]);
            for tt in &tables {
                for (i, &thr) in tt.thresholds_bytes.iter().enumerate() {
                    let reach = |x: u64| {
                        reaches_trend_level(x as i64, i, 10, tt.rate_bps, 1_000_000, interval)
                    };
                    assert!(reach(thr), "rate {} level {i}", tt.rate_bps);
                    assert!(
                        thr == 1 || !reach(thr - 1),
                        "rate {} level {i}",
                        tt.rate_bps
                    );
                }
            }
        }
        // Hand check: 200 Gbps, 1 ms: 25 MB drained, 2.5 MB a level.
        let tt = trend_tables(&t, 1000).expect("tables");
        assert_eq!(tt[2].thresholds_bytes[0], 2_500_000);
        assert_eq!(tt[2].thresholds_bytes[9], 25_000_000);
    }

    #[test]
    fn queue_thresholds_agree_with_core() {
        let q = queue_thresholds(5_000_000_000, 10);
        assert_eq!(q[0], 0);
        assert_eq!(q[8], 4_000_000_000);
        for (i, &thr) in q.iter().enumerate().skip(1) {
            assert_eq!(queue_level(thr, 5_000_000_000, 10), LevelCode::level(i));
            assert_eq!(
                queue_level(thr - 1, 5_000_000_000, 10),
                LevelCode::level(i - 1)
            );
        }
    }

    #[test]
    fn scan_equivalent_gives_every_depth_the_same_level() {
        // The artifact's table (dci-switch-node.cc: uint32 qThresh).
        let raw: alloc::vec::Vec<u64> = (0..10u64)
            .map(|i| (5_000_000_000 * i / 10) % (1 << 32))
            .collect();
        assert_eq!(raw[9], 205_032_704);
        let eq = scan_equivalent(&raw);
        let scan = |t: &[u64], b: u64| {
            if b == 0 {
                LevelCode::NONE
            } else {
                (0..t.len())
                    .rev()
                    .find(|&i| b >= t[i])
                    .map_or(LevelCode::NONE, LevelCode::level)
            }
        };
        for b in [
            0,
            1,
            205_032_703,
            205_032_704,
            499_999_999,
            4_000_000_000,
            u64::MAX,
        ] {
            assert_eq!(QueueScale::Thresholds(&eq).level(b), scan(&raw, b), "{b}");
        }
        assert_eq!(scan(&raw, 1), LevelCode::level(0));
        assert_eq!(scan(&raw, 205_032_704), LevelCode::level(9));
    }

    quickcheck! {
        fn scan_equivalent_is_non_decreasing_and_equal(raw: alloc::vec::Vec<u64>, b: u64) -> bool {
            let raw = &raw[..raw.len().min(MAX_LEVELS)];
            let eq = scan_equivalent(raw);
            let top = |t: &[u64]| (0..t.len()).rev().find(|&i| b >= t[i]);
            eq.windows(2).all(|w| w[0] <= w[1]) && top(raw) == top(&eq)
        }

        fn trend_threshold_is_the_least_reaching(rate: u64, i: u8, n: u8, tps: u32, interval: u32) -> bool {
            let n = usize::from(n % 16) + 1;
            let i = usize::from(i) % n;
            let tps = tps.max(1);
            let interval = interval.max(1);
            let thr = trend_threshold(rate, i, n, tps, interval);
            if thr >= i64::MAX as u64 {
                return true;
            }
            let reach = |x: u64| reaches_trend_level(x as i64, i, n, rate, tps, interval);
            reach(thr) && (thr == 1 || !reach(thr - 1))
        }
    }
}
