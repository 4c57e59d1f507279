//! The on-switch congestion estimators of §3.3: queue level `Q`
//! ([`queue`]), shift-EWMA trend `T` ([`trend`], Eq. 3) and duration
//! penalty `D` ([`persistence`]).
//!
//! `Q` and `T` are *levels*: an index into the level-score table, stored as
//! a [`LevelCode`] (0 = "below every threshold", `i + 1` = level `i`) so that
//! a port's state stays within 24 bytes; the score is looked up when a
//! decision reads it.

pub mod persistence;
pub mod queue;
pub mod trend;

/// A quantised level: 0 means "no level" (score 0), `i + 1` means level `i`
/// of the level-score table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LevelCode(pub u8);

impl LevelCode {
    /// Score 0.
    pub const NONE: LevelCode = LevelCode(0);

    /// The code of level index `i`.
    pub const fn level(i: usize) -> LevelCode {
        // Levels are at most 16 (validated), so i + 1 fits.
        LevelCode(if i >= 255 {
            255
        } else {
            (i as u8).wrapping_add(1)
        })
    }

    /// The 0-255 score of this code under `levels` (0 for
    /// [`LevelCode::NONE`] or a code beyond the table).
    ///
    /// ```
    /// # use lcmp_decide::estimator::LevelCode;
    /// # use lcmp_decide::tables::DEFAULT_LEVELS;
    /// assert_eq!(LevelCode::NONE.score(&DEFAULT_LEVELS), 0);
    /// assert_eq!(LevelCode::level(7).score(&DEFAULT_LEVELS), 204);
    /// ```
    pub fn score(self, levels: &[u8]) -> u8 {
        match self.0.checked_sub(1) {
            None => 0,
            Some(i) => levels.get(usize::from(i)).copied().unwrap_or(0),
        }
    }
}

/// Highest index `i < n` with `reached(i)`, as a [`LevelCode`], scanning
/// from the top like Alg. 2; [`LevelCode::NONE`] if none is reached.
pub(crate) fn highest_level(n: usize, reached: impl Fn(usize) -> bool) -> LevelCode {
    (0..n)
        .rev()
        .find(|&i| {
            crate::work::level_comparison();
            reached(i)
        })
        .map_or(LevelCode::NONE, LevelCode::level)
}

/// A threshold type of [`scan_levels`]: `u64` for the usual widths,
/// `u128` when a product does not fit.
pub(crate) trait Threshold: Copy + PartialOrd {
    const ZERO: Self;
    /// `self + step`, `None` past the type's range.
    fn checked_step(self, step: Self) -> Option<Self>;
}

impl Threshold for u64 {
    const ZERO: Self = 0;
    fn checked_step(self, step: Self) -> Option<Self> {
        self.checked_add(step)
    }
}

impl Threshold for u128 {
    const ZERO: Self = 0;
    fn checked_step(self, step: Self) -> Option<Self> {
        self.checked_add(step)
    }
}

/// The [`LevelCode`] of the highest level `i < n` whose threshold
/// `i * step` passes `reached` (level 0's threshold is 0), for a
/// `reached` that holds on an initial run of thresholds only (monotone):
/// the scan stops at the first threshold not reached, adding `step` a
/// level (no multiplication, no division). A threshold past the type's
/// range counts as not reached. [`LevelCode::NONE`] when `n == 0` or
/// level 0 is not reached.
pub(crate) fn scan_levels<T: Threshold>(
    n: usize,
    step: T,
    reached: impl Fn(T) -> bool,
) -> LevelCode {
    let mut code = LevelCode::NONE;
    let mut threshold = T::ZERO;
    for i in 0..n {
        crate::work::level_comparison();
        if !reached(threshold) {
            break;
        }
        code = LevelCode::level(i);
        match threshold.checked_step(step) {
            Some(t) => threshold = t,
            None => break,
        }
    }
    code
}
