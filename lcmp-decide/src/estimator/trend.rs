//! Short-term queue trend `T`: the shift-based EWMA of Eq. 3 and its
//! normalisation into a trend level (§3.3).
//!
//! `T ← T - (T >> K) + (Δ >> K)` with arithmetic (flooring) shifts and
//! saturating 64-bit arithmetic, `Δ` the signed change in queue bytes since
//! the previous sample. The level is the highest `i` with
//! `T >= (rate_bps / 8) * ((i + 1) / N) * interval`, i.e. the trend compared
//! with the fraction of the line rate that could have drained during the
//! *observed* sampling interval. The comparison is evaluated exactly by
//! cross-multiplying in `u128`:
//! `T * N * ticks_per_s * 8 >= rate_bps * (i + 1) * interval_ticks`.

use super::{scan_levels, LevelCode};

/// One step of Eq. 3: `T - (T >> k) + (delta >> k)`, saturating.
///
/// ```
/// # use lcmp_decide::estimator::trend::ewma_step;
/// assert_eq!(ewma_step(0, 800, 3), 100);
/// assert_eq!(ewma_step(100, 0, 3), 88);   // 100 - 12
/// assert_eq!(ewma_step(0, -1, 3), -1);    // floor(-1 / 8)
/// ```
pub const fn ewma_step(trend: i64, delta: i64, k: u8) -> i64 {
    // k is validated below 64; clamp anyway so the shift cannot panic.
    let k = if k > 63 { 63 } else { k };
    trend.saturating_sub(trend >> k).saturating_add(delta >> k)
}

/// The signed change from `prev` to `now` bytes, saturated to `i64`.
pub const fn queue_delta(prev: u64, now: u64) -> i64 {
    // Two u64s differ by less than 2^64: no i128 overflow.
    let d = (now as i128).saturating_sub(prev as i128);
    if d > i64::MAX as i128 {
        i64::MAX
    } else if d < i64::MIN as i128 {
        i64::MIN
    } else {
        d as i64
    }
}

/// Whether `trend` reaches level `i` of `n`:
/// `T * n * ticks_per_s * 8 >= rate_bps * (i + 1) * interval_ticks`.
pub const fn reaches_trend_level(
    trend: i64,
    i: usize,
    n: usize,
    rate_bps: u64,
    ticks_per_s: u32,
    interval_ticks: u32,
) -> bool {
    if trend <= 0 {
        return false;
    }
    // Widths: T < 2^63, n <= 2^4, ticks_per_s < 2^32, 8 = 2^3: < 2^102.
    // rate < 2^64, i + 1 <= 2^4, interval < 2^32: < 2^100. No overflow.
    // (The saturating forms only satisfy the no-overflow lint.)
    let lhs = (trend as u128)
        .saturating_mul(n as u128)
        .saturating_mul(ticks_per_s as u128)
        .saturating_mul(8);
    let rhs = (rate_bps as u128)
        .saturating_mul((i as u128).saturating_add(1))
        .saturating_mul(interval_ticks as u128);
    lhs >= rhs
}

/// The trend level code: [`LevelCode::NONE`] for `T <= 0`, else the highest
/// level reached (see [`reaches_trend_level`]). `interval_ticks` is raised
/// to at least one tick.
///
/// Two multiplications a sample (docs/firmware.md, "Cost table"): the
/// left side `T * n * ticks_per_s * 8` once, the right side's unit
/// `rate_bps * interval_ticks` once, then a scan that adds the unit a level
/// (level `i` needs `(i + 1)` units), where testing each level by
/// [`reaches_trend_level`] takes six 128-bit multiplications. The same
/// levels bit for bit: a property below checks it against that test.
///
/// ```
/// # use lcmp_decide::estimator::{trend::trend_level, LevelCode};
/// // 100 Gbps for 1 ms drains 12.5 MB; 10 % of that is 1.25 MB.
/// let lvl = |t| trend_level(t, 10, 100_000_000_000, 1_000_000, 1000);
/// assert_eq!(lvl(-5), LevelCode::NONE);
/// assert_eq!(lvl(1_249_999), LevelCode::NONE);
/// assert_eq!(lvl(1_250_000), LevelCode::level(0));
/// assert_eq!(lvl(12_500_000), LevelCode::level(9));
/// ```
pub fn trend_level(
    trend: i64,
    n: usize,
    rate_bps: u64,
    ticks_per_s: u32,
    interval_ticks: u32,
) -> LevelCode {
    if trend <= 0 {
        return LevelCode::NONE;
    }
    let interval = interval_ticks.max(1);
    // trend > 0, so it converts; n * ticks_per_s * 8 < 2^39 (n is at most
    // MAX_LEVELS = 16 once validated).
    let t = trend.unsigned_abs();
    let scale = (n as u64)
        .saturating_mul(u64::from(ticks_per_s))
        .saturating_mul(8);
    match (
        t.checked_mul(scale),
        rate_bps.checked_mul(u64::from(interval)),
    ) {
        // A threshold past u64 is above any u64 left side: not reached,
        // as scan_levels counts it.
        (Some(lhs), Some(unit)) => scan_levels(n, unit, |i_units| {
            i_units.checked_add(unit).is_some_and(|r| lhs >= r)
        }),
        // The widths of reaches_trend_level: lhs < 2^102, unit < 2^96,
        // and (n + 1) units < 2^101: exact in u128.
        _ => {
            let lhs = u128::from(t).saturating_mul(u128::from(scale));
            let unit = u128::from(rate_bps).saturating_mul(u128::from(interval));
            scan_levels(n, unit, |i_units| lhs >= i_units.saturating_add(unit))
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::estimator::highest_level;
    use crate::tables::DEFAULT_LEVELS;
    use quickcheck::quickcheck;

    /// The arithmetic `trend_level` replaced, kept as the oracle: each
    /// level tested by [`reaches_trend_level`], scanned from the top.
    fn trend_level_by_levels(
        trend: i64,
        n: usize,
        rate_bps: u64,
        ticks_per_s: u32,
        interval_ticks: u32,
    ) -> LevelCode {
        let interval = interval_ticks.max(1);
        highest_level(n, |i| {
            reaches_trend_level(trend, i, n, rate_bps, ticks_per_s, interval)
        })
    }

    /// A trend at (or `nudge` from) the threshold of level `level`, or
    /// anywhere, by `pick`. The threshold is `rate * (i + 1) * interval /
    /// (n * ticks_per_s * 8)`, rounded up.
    fn trend_near(
        pick: u8,
        level: u8,
        nudge: i8,
        anywhere: i64,
        (n, rate, tps, interval): (usize, u64, u32, u32),
    ) -> i64 {
        if pick.is_multiple_of(3) || n == 0 || tps == 0 {
            return anywhere;
        }
        let i = u128::from(level) % n as u128;
        let num = u128::from(rate) * (i + 1) * u128::from(interval.max(1));
        let den = n as u128 * u128::from(tps) * 8;
        let at = i64::try_from(num.div_ceil(den)).unwrap_or(i64::MAX);
        at.saturating_add(i64::from(nudge))
    }

    /// Shifts of 64 and more are clamped to 63 (never a shift overflow).
    #[test]
    fn ewma_step_clamps_the_shift() {
        for k in [64u8, 100, 255] {
            assert_eq!(
                ewma_step(i64::MIN, -1, k),
                ewma_step(i64::MIN, -1, 63),
                "{k}"
            );
            assert_eq!(ewma_step(5, i64::MAX, k), ewma_step(5, i64::MAX, 63), "{k}");
        }
        assert_eq!(ewma_step(5, i64::MAX, 63), 5);
    }

    #[test]
    fn ewma_golden() {
        // K = 3 by hand: a step of +8000 bytes per sample.
        let mut t = 0;
        let want = [1000, 1875, 2641, 3311, 3898];
        for w in want {
            t = ewma_step(t, 8000, 3);
            assert_eq!(t, w);
        }
        // Negative deltas floor (arithmetic shift): -9 >> 3 = -2.
        assert_eq!(ewma_step(0, -9, 3), -2);
        // Saturation instead of wrap.
        assert_eq!(ewma_step(i64::MAX, i64::MAX, 0), i64::MAX);
        assert_eq!(ewma_step(i64::MIN, i64::MIN, 0), i64::MIN);
        assert_eq!(queue_delta(0, u64::MAX), i64::MAX);
        assert_eq!(queue_delta(u64::MAX, 0), i64::MIN);
    }

    #[test]
    fn trend_level_golden_25g_and_200g() {
        // Fig. 3: at 25 Gbps the per-level steps are 2.5 Gbps, i.e. for a
        // 1 ms interval 312 500 bytes a level.
        let lvl = |t, rate| trend_level(t, 10, rate, 1_000_000, 1000).score(&DEFAULT_LEVELS);
        assert_eq!(lvl(312_499, 25_000_000_000), 0);
        assert_eq!(lvl(312_500, 25_000_000_000), 25);
        assert_eq!(lvl(625_000, 25_000_000_000), 51);
        assert_eq!(lvl(3_125_000, 25_000_000_000), 255);
        // 200 Gbps: 2.5 MB a level for 1 ms.
        assert_eq!(lvl(2_499_999, 200_000_000_000), 0);
        assert_eq!(lvl(2_500_000, 200_000_000_000), 25);
        // The observed interval scales the thresholds: 2 ms doubles them.
        assert_eq!(
            trend_level(312_500, 10, 25_000_000_000, 1_000_000, 2000),
            LevelCode::NONE
        );
        assert_eq!(
            trend_level(625_000, 10, 25_000_000_000, 1_000_000, 2000),
            LevelCode::level(0)
        );
        // A zero interval counts as one tick.
        assert_eq!(trend_level(1, 10, 8, 1, 0), LevelCode::level(9));
    }

    quickcheck! {
        fn trend_level_monotone_in_trend(a: i64, b: i64, rate: u64, interval: u32) -> bool {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            trend_level(lo, 10, rate, 1_000_000, interval) <= trend_level(hi, 10, rate, 1_000_000, interval)
        }

        /// The scan gives the levels of the per-level test, bit for bit,
        /// for any trend, level count, rate, tick rate and interval
        /// (trends drawn at the thresholds too).
        fn trend_level_matches_the_per_level_test(
            near: (u8, u8, i8), anywhere: i64, n: u8, rate: u64, tps: u32, interval: u32
        ) -> bool {
            let (pick, level, nudge) = near;
            let n = usize::from(n) % (crate::tables::MAX_LEVELS + 1);
            let t = trend_near(pick, level, nudge, anywhere, (n, rate, tps, interval));
            trend_level(t, n, rate, tps, interval) == trend_level_by_levels(t, n, rate, tps, interval)
        }

        /// Small rates and tick rates, where thresholds round and collide.
        fn trend_level_matches_the_per_level_test_small(
            t: i16, n: u8, rate: u16, tps: u8, interval: u8
        ) -> bool {
            let n = usize::from(n) % (crate::tables::MAX_LEVELS + 1);
            let (t, rate, tps, interval) = (i64::from(t), u64::from(rate), u32::from(tps), u32::from(interval));
            trend_level(t, n, rate, tps, interval) == trend_level_by_levels(t, n, rate, tps, interval)
        }

        fn ewma_matches_i128_reference(t: i32, d: i32) -> bool {
            // Within i32 inputs nothing saturates: compare with exact math.
            let (t, d) = (i64::from(t), i64::from(d));
            let exact = i128::from(t) - (i128::from(t) >> 3) + (i128::from(d) >> 3);
            i128::from(ewma_step(t, d, 3)) == exact
        }
    }
}
