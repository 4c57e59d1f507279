//! Instantaneous queue level `Q` (§3.3, Fig. 3).
//!
//! By default the buffer is cut into `N` levels at
//! `qthr[i] = floor(buffer * i / N)` (0 %, 10 %, …, 90 % for `N = 10`);
//! `Q` is the score of the highest level whose threshold the sampled depth
//! reaches, and 0 for an empty queue. A control plane may instead install
//! explicit, non-decreasing byte thresholds per port (§3.1 "Bootstrap":
//! the pre-installed threshold vectors; what a switch's range table holds),
//! read the same way ([`QueueScale::Thresholds`]).

use super::{highest_level, scan_levels, LevelCode};

/// How a port's queue depth maps to levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueScale<'a> {
    /// `qthr[i] = floor(buffer * i / levels)` (Fig. 3).
    Buffer {
        /// The port's buffer, bytes.
        bytes: u64,
        /// The number of levels `N`.
        levels: usize,
    },
    /// Explicit thresholds `qthr[0..N]`, bytes, non-decreasing (validated
    /// when the tables are compiled). Equal neighbours make a level
    /// unreachable.
    Thresholds(&'a [u64]),
}

impl QueueScale<'_> {
    /// The level code of a sampled depth: [`LevelCode::NONE`] for an empty
    /// queue, else the highest `i` with `bytes >= qthr[i]` (NONE if none).
    ///
    /// ```
    /// # use lcmp_decide::estimator::{queue::QueueScale, LevelCode};
    /// let wrapped = [0, 205, 205, 205];
    /// let q = QueueScale::Thresholds(&wrapped);
    /// assert_eq!(q.level(0), LevelCode::NONE);
    /// assert_eq!(q.level(204), LevelCode::level(0));
    /// assert_eq!(q.level(205), LevelCode::level(3));
    /// let b = QueueScale::Buffer { bytes: 1000, levels: 10 };
    /// assert_eq!(b.level(800), LevelCode::level(8));
    /// ```
    pub fn level(&self, bytes: u64) -> LevelCode {
        match *self {
            QueueScale::Buffer {
                bytes: buffer,
                levels,
            } => queue_level(bytes, buffer, levels),
            QueueScale::Thresholds(thr) => {
                if bytes == 0 {
                    return LevelCode::NONE;
                }
                highest_level(thr.len(), |i| thr.get(i).is_some_and(|&t| bytes >= t))
            }
        }
    }
}

/// `qthr[i] = floor(buffer * i / n)`, exact for any 64-bit buffer.
///
/// ```
/// # use lcmp_decide::estimator::queue::queue_threshold;
/// assert_eq!(queue_threshold(5_000_000_000, 8, 10), 4_000_000_000);
/// assert_eq!(queue_threshold(999, 1, 10), 99);
/// ```
pub const fn queue_threshold(buffer_bytes: u64, i: usize, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    // buffer * i / n <= buffer when i <= n, so the result fits in u64;
    // larger i are clamped to n.
    let i = if i > n { n } else { i };
    match (buffer_bytes as u128)
        .saturating_mul(i as u128)
        .checked_div(n as u128)
    {
        Some(q) => q as u64,
        None => 0,
    }
}

/// The queue level code of a sampled depth: [`LevelCode::NONE`] for an
/// empty queue, else the highest `i < n` with `bytes >= qthr[i]`.
///
/// Divide-free (docs/firmware.md, "Cost table"): `bytes >= floor(buffer *
/// i / n)` holds exactly when `buffer * i < (bytes + 1) * n`, so the scan
/// adds `buffer` once a level and compares, where computing each
/// [`queue_threshold`] costs a 128-bit division (about 2 000 instructions
/// on a Cortex-M4, ten of them a sample). The same levels bit for bit: a
/// property below checks it against the thresholds.
///
/// ```
/// # use lcmp_decide::estimator::{queue::queue_level, LevelCode};
/// assert_eq!(queue_level(0, 1000, 10), LevelCode::NONE);
/// assert_eq!(queue_level(1, 1000, 10), LevelCode::level(0));
/// assert_eq!(queue_level(800, 1000, 10), LevelCode::level(8));
/// assert_eq!(queue_level(u64::MAX, 1000, 10), LevelCode::level(9));
/// ```
pub fn queue_level(bytes: u64, buffer_bytes: u64, n: usize) -> LevelCode {
    if bytes == 0 {
        return LevelCode::NONE;
    }
    // qthr[0] = 0 <= bytes: level 0 is always reached.
    match u64::try_from(n)
        .ok()
        .and_then(|n64| buffer_bytes.checked_mul(n64))
    {
        // Every threshold buffer * i (i < n) fits a u64, so a limit that
        // does not (saturated to u64::MAX) is above them all, as it is.
        Some(_) => {
            let limit = bytes.saturating_add(1).saturating_mul(n as u64);
            scan_levels(n, buffer_bytes, |threshold| threshold < limit)
        }
        // (bytes + 1) * n < 2^69 and buffer * i < 2^68 (n is at most
        // MAX_LEVELS = 16 once validated): exact in u128.
        None => {
            let limit = (u128::from(bytes) + 1).saturating_mul(n as u128);
            scan_levels(n, u128::from(buffer_bytes), |threshold| threshold < limit)
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tables::DEFAULT_LEVELS;
    use quickcheck::quickcheck;

    /// The arithmetic `queue_level` replaced, kept as the oracle: every
    /// threshold computed with its 128-bit division, scanned from the top.
    fn queue_level_by_division(bytes: u64, buffer_bytes: u64, n: usize) -> LevelCode {
        if bytes == 0 {
            return LevelCode::NONE;
        }
        highest_level(n, |i| bytes >= queue_threshold(buffer_bytes, i, n))
    }

    /// A depth near a threshold of `buffer`'s (above, at or below it by
    /// `nudge`), or anywhere, by `pick`: where a scan would go wrong.
    fn depth_near(pick: u8, buffer: u64, n: usize, level: u8, nudge: i8, anywhere: u64) -> u64 {
        match pick % 3 {
            0 => anywhere,
            _ => queue_threshold(buffer, usize::from(level) % (n + 1), n)
                .saturating_add_signed(i64::from(nudge)),
        }
    }

    /// A level above `n` is the whole buffer, not more.
    #[test]
    fn thresholds_past_n_are_clamped_to_the_buffer() {
        assert_eq!(queue_threshold(1_000, 12, 10), 1_000);
        assert_eq!(queue_threshold(u64::MAX, usize::MAX, 10), u64::MAX);
        assert_eq!(queue_threshold(1_000, 10, 10), 1_000);
        assert_eq!(queue_threshold(1_000, 3, 0), 0);
    }

    #[test]
    fn golden_5gb_buffer() {
        // testbed8 DCI port: 5 GB, N = 10, thresholds every 500 MB.
        let buf = 5_000_000_000;
        let q = |b| queue_level(b, buf, 10).score(&DEFAULT_LEVELS);
        assert_eq!(q(0), 0);
        assert_eq!(q(1), 25);
        assert_eq!(q(499_999_999), 25);
        assert_eq!(q(500_000_000), 51);
        assert_eq!(q(3_499_999_999), 178);
        assert_eq!(q(3_500_000_000), 204); // qthr[7] = 70 %: the 204 level
        assert_eq!(q(3_999_999_999), 204);
        assert_eq!(q(4_000_000_000), 229); // qthr[8] = 80 %
        assert_eq!(q(4_500_000_000), 255);
        assert_eq!(q(6_000_000_000), 255); // over the buffer: top level
    }

    /// The 128-bit scan (a buffer whose `buffer * n` passes 64 bits) at a
    /// threshold's exact boundary: `qthr[1] = 2^62` of a 2^63-byte
    /// buffer in two levels.
    #[test]
    fn wide_buffer_boundary() {
        let buf = 1u64 << 63;
        assert_eq!(queue_level((1 << 62) - 1, buf, 2), LevelCode::level(0));
        assert_eq!(queue_level(1 << 62, buf, 2), LevelCode::level(1));
        assert_eq!(
            queue_level_by_division((1 << 62) - 1, buf, 2),
            LevelCode::level(0)
        );
    }

    #[test]
    fn thresholds_round_down() {
        // floor(1001 * 3 / 10) = 300
        assert_eq!(queue_threshold(1001, 3, 10), 300);
        assert_eq!(queue_level(300, 1001, 10), LevelCode::level(3));
        assert_eq!(queue_level(299, 1001, 10), LevelCode::level(2));
        assert_eq!(
            queue_threshold(u64::MAX, 9, 10),
            (u128::from(u64::MAX) * 9 / 10) as u64
        );
    }

    #[test]
    fn explicit_thresholds_golden() {
        // The artifact's table for a 5 GB buffer stored in uint32:
        // 4.5e9 mod 2^32 = 205 032 704, made non-decreasing.
        let mut thr = [205_032_704u64; 10];
        thr[0] = 0;
        let q = |b| QueueScale::Thresholds(&thr).level(b).score(&DEFAULT_LEVELS);
        assert_eq!(q(0), 0);
        assert_eq!(q(1), 25);
        assert_eq!(q(205_032_703), 25);
        assert_eq!(q(205_032_704), 255);
        assert_eq!(q(u64::MAX), 255);
        // Explicit thresholds equal to the buffer's give the same levels.
        let lin: std::vec::Vec<u64> = (0..10)
            .map(|i| queue_threshold(5_000_000_000, i, 10))
            .collect();
        for b in [0, 1, 499_999_999, 500_000_000, 3_999_999_999, 4_500_000_000] {
            assert_eq!(
                QueueScale::Thresholds(&lin).level(b),
                QueueScale::Buffer {
                    bytes: 5_000_000_000,
                    levels: 10
                }
                .level(b)
            );
        }
        // No threshold reached (a first threshold above zero).
        assert_eq!(QueueScale::Thresholds(&[10, 20]).level(5), LevelCode::NONE);
        assert_eq!(QueueScale::Thresholds(&[]).level(5), LevelCode::NONE);
    }

    quickcheck! {
        fn explicit_thresholds_are_monotone(a: u64, b: u64, t: std::vec::Vec<u64>) -> bool {
            let mut t = t;
            t.truncate(16);
            t.sort_unstable();
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            QueueScale::Thresholds(&t).level(lo) <= QueueScale::Thresholds(&t).level(hi)
        }

        /// The divide-free scan gives the levels of the division, bit for
        /// bit, for any buffer, depth and level count (depths drawn near
        /// the thresholds too).
        fn queue_level_matches_the_division(
            buffer: u64, n: u8, pick: u8, level: u8, nudge: i8, anywhere: u64
        ) -> bool {
            let n = usize::from(n) % (crate::tables::MAX_LEVELS + 1);
            let bytes = depth_near(pick, buffer, n, level, nudge, anywhere);
            queue_level(bytes, buffer, n) == queue_level_by_division(bytes, buffer, n)
        }

        /// Small buffers, where thresholds collide and round.
        fn queue_level_matches_the_division_small(buffer: u8, n: u8, bytes: u16) -> bool {
            let (buffer, bytes) = (u64::from(buffer), u64::from(bytes));
            let n = usize::from(n) % (crate::tables::MAX_LEVELS + 1);
            queue_level(bytes, buffer, n) == queue_level_by_division(bytes, buffer, n)
        }

        fn more_queue_never_lowers_q(a: u64, b: u64, buffer: u64, n: u8) -> bool {
            let n = usize::from(n % 16) + 1;
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            queue_level(lo, buffer, n) <= queue_level(hi, buffer, n)
        }
    }
}
