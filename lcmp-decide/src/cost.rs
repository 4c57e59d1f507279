//! The path-quality and congestion scores and their fusion (paper §3.2,
//! §3.3, Eq. 1-5, Alg. 1-2).
//!
//! Every score is an 8-bit integer in `0..=255`; lower is better. All
//! arithmetic is integer, and the weights are validated once
//! ([`Weights::validate`]) so that no sum can exceed `u32` at run time.

use crate::error::{Error, Setting};

/// The largest score.
pub const MAX_SCORE: u8 = 255;

/// Integer weights and normalising shifts of Eq. 1, 2 and 4-5.
///
/// ```
/// # use lcmp_decide::Weights;
/// let w = Weights::PAPER;
/// assert_eq!((w.alpha, w.beta, w.s_total), (3, 1, 2));
/// assert!(w.validate().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Weights {
    /// `α`, weight of `C_path` in Eq. 1.
    pub alpha: u32,
    /// `β`, weight of `C_cong` in Eq. 1.
    pub beta: u32,
    /// `w_dl`, weight of `delayScore` in Eq. 2.
    pub w_dl: u32,
    /// `w_lc`, weight of `linkCapScore` in Eq. 2.
    pub w_lc: u32,
    /// `w_ql`, weight of the queue level `Q` in Eq. 4.
    pub w_ql: u32,
    /// `w_tl`, weight of the trend level `T` in Eq. 4.
    pub w_tl: u32,
    /// `w_dp`, weight of the duration penalty `D` in Eq. 4.
    pub w_dp: u32,
    /// `S_path`, right shift of Eq. 2.
    pub s_path: u8,
    /// `S_cong`, right shift of Eq. 5.
    pub s_cong: u8,
    /// `S_total`, right shift of Eq. 1.
    pub s_total: u8,
}

impl Weights {
    /// The paper's defaults: `α = 3, β = 1, S_total = 2`;
    /// `w_dl = 3, w_lc = 1, S_path = 2`; `w_ql = 2, w_tl = 1, w_dp = 1,
    /// S_cong = 3` (§3, §7).
    pub const PAPER: Weights = Weights {
        alpha: 3,
        beta: 1,
        w_dl: 3,
        w_lc: 1,
        w_ql: 2,
        w_tl: 1,
        w_dp: 1,
        s_path: 2,
        s_cong: 3,
        s_total: 2,
    };

    /// Checks that every shift is below 32 and that `255 * Σ weights` fits
    /// in `u32` for each equation, so the hot path can never overflow.
    ///
    /// ```
    /// # use lcmp_decide::{Weights, Error, Setting};
    /// let w = Weights::PAPER.with_s_cong(32);
    /// assert_eq!(w.validate(), Err(Error::ShiftTooLarge(Setting::CongestionShift)));
    /// ```
    pub const fn validate(&self) -> Result<(), Error> {
        if self.s_path >= 32 {
            return Err(Error::ShiftTooLarge(Setting::PathShift));
        }
        if self.s_cong >= 32 {
            return Err(Error::ShiftTooLarge(Setting::CongestionShift));
        }
        if self.s_total >= 32 {
            return Err(Error::ShiftTooLarge(Setting::TotalShift));
        }
        if !weighted_sum_fits(self.w_dl, self.w_lc, 0) {
            return Err(Error::WeightOverflow(Setting::PathWeights));
        }
        if !weighted_sum_fits(self.w_ql, self.w_tl, self.w_dp) {
            return Err(Error::WeightOverflow(Setting::CongestionWeights));
        }
        if !weighted_sum_fits(self.alpha, self.beta, 0) {
            return Err(Error::WeightOverflow(Setting::FusionWeights));
        }
        Ok(())
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights::PAPER
    }
}

/// `255 * (a + b + c)` fits in `u32`.
const fn weighted_sum_fits(a: u32, b: u32, c: u32) -> bool {
    // Three u32s cannot overflow a u64; saturating ops only satisfy the lint.
    let sum = (a as u64).saturating_add(b as u64).saturating_add(c as u64);
    sum.saturating_mul(MAX_SCORE as u64) <= u32::MAX as u64
}

/// Alg. 1 `CalcDelayCost`: `255` if `delay >= 1 << shift`, else
/// `(delay * 255) >> shift`. `delay` is in the control plane's delay unit
/// (default 1 ms); `shift` is the saturation shift (default 5, i.e. 32
/// units). A shift of 32 or more saturates nothing below `2^32`, which the
/// table validation rejects anyway.
///
/// ```
/// # use lcmp_decide::cost::delay_score;
/// assert_eq!(delay_score(5, 5), 39);   // (5 * 255) >> 5
/// assert_eq!(delay_score(31, 5), 247);
/// assert_eq!(delay_score(32, 5), 255); // saturated
/// ```
pub const fn delay_score(delay: u32, shift: u8) -> u8 {
    if shift >= 32 {
        return MAX_SCORE;
    }
    if delay >= (1u32 << shift) {
        return MAX_SCORE;
    }
    // delay < 2^shift, so delay * 255 >> shift < 255: the cast is exact.
    ((delay as u64).saturating_mul(MAX_SCORE as u64) >> shift) as u8
}

/// Alg. 2 `CalcLinkCapCost`: scanning from the top, `255 - level[i]` for the
/// highest `i` with `capacity >= thresholds[i]`, else `255`.
///
/// `thresholds` and `levels` are the same length after validation; extra
/// entries of the longer one are ignored.
///
/// ```
/// # use lcmp_decide::cost::link_cap_score;
/// # use lcmp_decide::tables::{default_capacity_thresholds, DEFAULT_LEVELS};
/// let thr = default_capacity_thresholds(400_000_000_000, 10);
/// assert_eq!(link_cap_score(200_000_000_000, &thr, &DEFAULT_LEVELS), 255 - 127);
/// assert_eq!(link_cap_score(25_000_000_000, &thr, &DEFAULT_LEVELS), 255);
/// ```
pub fn link_cap_score(capacity: u64, thresholds: &[u64], levels: &[u8]) -> u8 {
    thresholds
        .iter()
        .zip(levels)
        .rev()
        .find(|(thr, _)| capacity >= **thr)
        .map_or(MAX_SCORE, |(_, level)| MAX_SCORE.saturating_sub(*level))
}

/// `min(sum >> shift, 255)` for a validated weighted sum.
const fn normalise(sum: u32, shift: u8) -> u8 {
    let shifted = if shift >= 32 { 0 } else { sum >> shift };
    if shifted > MAX_SCORE as u32 {
        MAX_SCORE
    } else {
        shifted as u8
    }
}

/// Eq. 2: `C_path = min((w_dl * delayScore + w_lc * linkCapScore) >> S_path, 255)`.
///
/// ```
/// # use lcmp_decide::{cost::path_cost, Weights};
/// // DC1 -> DC6 on testbed8: 5 ms (score 39), 25 Gbps (score 255).
/// assert_eq!(path_cost(39, 255, &Weights::PAPER), 93); // 372 >> 2
/// ```
pub const fn path_cost(delay_score: u8, cap_score: u8, w: &Weights) -> u8 {
    let sum = w
        .w_dl
        .saturating_mul(delay_score as u32)
        .saturating_add(w.w_lc.saturating_mul(cap_score as u32));
    normalise(sum, w.s_path)
}

/// Eq. 4-5: `C_cong = min((w_ql * Q + w_tl * T + w_dp * D) >> S_cong, 255)`.
///
/// ```
/// # use lcmp_decide::{cost::congestion_cost, Weights};
/// assert_eq!(congestion_cost(255, 255, 255, &Weights::PAPER), 127); // 1020 >> 3
/// ```
pub const fn congestion_cost(q: u8, t: u8, d: u8, w: &Weights) -> u8 {
    let sum = w
        .w_ql
        .saturating_mul(q as u32)
        .saturating_add(w.w_tl.saturating_mul(t as u32))
        .saturating_add(w.w_dp.saturating_mul(d as u32));
    normalise(sum, w.s_cong)
}

/// Eq. 1: `C = min((α * C_path + β * C_cong) >> S_total, 255)`.
///
/// ```
/// # use lcmp_decide::{cost::fused_cost, Weights};
/// assert_eq!(fused_cost(100, 40, &Weights::PAPER), 85); // 340 >> 2
/// ```
pub const fn fused_cost(c_path: u8, c_cong: u8, w: &Weights) -> u8 {
    let sum = w
        .alpha
        .saturating_mul(c_path as u32)
        .saturating_add(w.beta.saturating_mul(c_cong as u32));
    normalise(sum, w.s_total)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tables::{default_capacity_thresholds, DEFAULT_LEVELS};
    use quickcheck::quickcheck;

    const GBPS: u64 = 1_000_000_000;

    #[test]
    fn delay_score_golden() {
        // Alg. 1 by hand with SHIFT = 5 (32 ms saturation).
        let cases = [
            (0, 0),
            (1, 7),    // 255 >> 5
            (5, 39),   // 1275 >> 5
            (10, 79),  // 2550 >> 5
            (25, 199), // 6375 >> 5
            (31, 247), // 7905 >> 5
            (32, 255),
            (50, 255),
            (250, 255),
            (u32::MAX, 255),
        ];
        for (d, want) in cases {
            assert_eq!(delay_score(d, 5), want, "delay {d}");
        }
        // Other saturation points.
        assert_eq!(delay_score(63, 6), 251); // 16065 >> 6
        assert_eq!(delay_score(64, 6), 255);
        assert_eq!(delay_score(0, 0), 0);
        assert_eq!(delay_score(1, 0), 255);
    }

    #[test]
    fn delay_score_large_shift() {
        // 2^31 - 1 units with shift 31: no u32 overflow in d * 255.
        assert_eq!(delay_score((1 << 31) - 1, 31), 254);
        assert_eq!(delay_score(1 << 31, 31), 255);
        assert_eq!(delay_score(0, 40), 255);
    }

    #[test]
    fn link_cap_score_golden() {
        // Default thresholds 40, 80, ..., 400 Gbps and levels 25..255.
        let thr = default_capacity_thresholds(400 * GBPS, 10);
        let cases = [
            (0, 255),
            (25 * GBPS, 255),       // below 40 G: no class
            (40 * GBPS, 255 - 25),  // class 0
            (100 * GBPS, 255 - 51), // class 1 (80 G)
            (200 * GBPS, 255 - 127),
            (399 * GBPS, 255 - 229),
            (400 * GBPS, 0),
            (u64::MAX, 0),
        ];
        for (cap, want) in cases {
            assert_eq!(
                link_cap_score(cap, &thr, &DEFAULT_LEVELS),
                want,
                "cap {cap}"
            );
        }
    }

    #[test]
    fn path_cost_golden_testbed8() {
        // testbed8 first-hop scores, computed by hand from Alg. 1-2 and Eq. 2.
        let w = Weights::PAPER;
        // via DC2: 25 ms -> 199; 200 G -> 128; (597 + 128) >> 2 = 181
        assert_eq!(path_cost(199, 128, &w), 181);
        // via DC3: 250 ms -> 255; 200 G -> 128; (765 + 128) >> 2 = 223
        assert_eq!(path_cost(255, 128, &w), 223);
        // via DC4: 10 ms -> 79; 100 G -> 204; (237 + 204) >> 2 = 110
        assert_eq!(path_cost(79, 204, &w), 110);
        // via DC6: 5 ms -> 39; 25 G -> 255; (117 + 255) >> 2 = 93
        assert_eq!(path_cost(39, 255, &w), 93);
        // Saturation: 255 * 4 >> 0 = 1020 -> 255.
        let w0 = Weights { s_path: 0, ..w };
        assert_eq!(path_cost(255, 255, &w0), 255);
    }

    #[test]
    fn congestion_and_fused_golden() {
        let w = Weights::PAPER;
        assert_eq!(congestion_cost(0, 0, 0, &w), 0);
        assert_eq!(congestion_cost(255, 0, 0, &w), 63); // 510 >> 3
        assert_eq!(congestion_cost(255, 255, 255, &w), 127); // 1020 >> 3
        assert_eq!(congestion_cost(102, 51, 3, &w), 32); // 258 >> 3
        assert_eq!(fused_cost(93, 0, &w), 69); // 279 >> 2
        assert_eq!(fused_cost(93, 63, &w), 85); // 342 >> 2
        assert_eq!(fused_cost(255, 255, &w), 255);
        let w0 = Weights { s_total: 0, ..w };
        assert_eq!(fused_cost(200, 200, &w0), 255);
    }

    #[test]
    fn weights_validation() {
        let w = Weights::PAPER;
        assert_eq!(
            Weights { s_path: 32, ..w }.validate(),
            Err(Error::ShiftTooLarge(Setting::PathShift))
        );
        assert_eq!(
            Weights { s_total: 200, ..w }.validate(),
            Err(Error::ShiftTooLarge(Setting::TotalShift))
        );
        let big = u32::MAX / 255;
        assert!(Weights {
            alpha: big,
            beta: 0,
            ..w
        }
        .validate()
        .is_ok());
        assert_eq!(
            Weights {
                alpha: big,
                beta: 1,
                ..w
            }
            .validate(),
            Err(Error::WeightOverflow(Setting::FusionWeights))
        );
        assert_eq!(
            Weights {
                w_dp: u32::MAX,
                ..w
            }
            .validate(),
            Err(Error::WeightOverflow(Setting::CongestionWeights))
        );
        assert_eq!(
            Weights { w_lc: big, ..w }.validate(),
            Err(Error::WeightOverflow(Setting::PathWeights))
        );
        // Zero is a valid weight (rm-alpha / rm-beta ablations).
        assert!(Weights { alpha: 0, ..w }.validate().is_ok());
    }

    quickcheck! {
        fn more_delay_never_lowers_c_path(d1: u32, d2: u32, cap: u64, shift: u8) -> bool {
            let shift = shift % 32;
            let (lo, hi) = if d1 <= d2 { (d1, d2) } else { (d2, d1) };
            let thr = default_capacity_thresholds(400 * GBPS, 10);
            let cs = link_cap_score(cap, &thr, &DEFAULT_LEVELS);
            let w = Weights::PAPER;
            path_cost(delay_score(lo, shift), cs, &w) <= path_cost(delay_score(hi, shift), cs, &w)
        }

        fn more_capacity_never_raises_c_path(c1: u64, c2: u64, delay: u32) -> bool {
            let (lo, hi) = if c1 <= c2 { (c1, c2) } else { (c2, c1) };
            let thr = default_capacity_thresholds(400 * GBPS, 10);
            let ds = delay_score(delay, 5);
            let w = Weights::PAPER;
            path_cost(ds, link_cap_score(hi, &thr, &DEFAULT_LEVELS), &w)
                <= path_cost(ds, link_cap_score(lo, &thr, &DEFAULT_LEVELS), &w)
        }

        fn validated_weights_never_saturate_u32(a: u32, b: u32, q: u8, t: u8, d: u8) -> bool {
            // With validated weights the saturating ops never saturate, so
            // the result equals the exact u64 computation.
            let w = Weights { w_ql: a % 1000, w_tl: b % 1000, w_dp: 7, ..Weights::PAPER };
            if w.validate().is_err() { return true; }
            let exact = (u64::from(w.w_ql) * u64::from(q) + u64::from(w.w_tl) * u64::from(t)
                + u64::from(w.w_dp) * u64::from(d)) >> w.s_cong;
            u64::from(congestion_cost(q, t, d, &w)) == exact.min(255)
        }
    }
}

with_setters!(Weights {
    alpha: u32 => with_alpha,
    beta: u32 => with_beta,
    w_dl: u32 => with_w_dl,
    w_lc: u32 => with_w_lc,
    w_ql: u32 => with_w_ql,
    w_tl: u32 => with_w_tl,
    w_dp: u32 => with_w_dp,
    s_path: u8 => with_s_path,
    s_cong: u8 => with_s_cong,
    s_total: u8 => with_s_total,
});
