//! Instantaneous queue level `Q` (§3.3, Fig. 3).
//!
//! The buffer is cut into `N` levels at `qthr[i] = floor(buffer * i / N)`
//! (0 %, 10 %, …, 90 % for `N = 10`); `Q` is the score of the highest level
//! whose threshold the sampled depth reaches, and 0 for an empty queue.

use super::{highest_level, LevelCode};

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
    highest_level(n, |i| bytes >= queue_threshold(buffer_bytes, i, n))
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tables::DEFAULT_LEVELS;
    use quickcheck::quickcheck;

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

    quickcheck! {
        fn more_queue_never_lowers_q(a: u64, b: u64, buffer: u64, n: u8) -> bool {
            let n = usize::from(n % 16) + 1;
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            queue_level(lo, buffer, n) <= queue_level(hi, buffer, n)
        }
    }
}
