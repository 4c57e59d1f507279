//! Time, converted in one place (embassy-net's `time.rs`): the layers
//! above the core count microseconds (a trace's and a scenario's `t_us`),
//! the core counts ticks of its tables' [`Params::ticks_per_second`].
//! [`instant`] is the one conversion; the replay driver, the scenarios and
//! the frontends call it, and nothing else multiplies microseconds into
//! ticks.

use lcmp_decide::{Instant, Params};

/// Microseconds per second.
const US_PER_SECOND: u128 = 1_000_000;

/// The core's time at `t_us` microseconds for tables of `params`:
/// `t_us * ticks_per_second / 1 000 000` ticks, rounded down, wrapping at
/// 2^32 as the core's tick counter does. With the default rate (1 tick =
/// 1 µs) it is `t_us` modulo 2^32.
///
/// ```
/// # use lcmp_decide::Params;
/// # use lcmp_tables::time::instant;
/// let us = Params::PAPER; // 1 000 000 ticks a second
/// assert_eq!(instant(&us, (1 << 32) + 5).ticks(), 5);
/// let ms = Params::PAPER.with_ticks_per_second(1_000);
/// assert_eq!(instant(&ms, 2_999).ticks(), 2);
/// ```
pub fn instant(params: &Params, t_us: u64) -> Instant {
    // In 128 bits, so that no product overflows: smaller in the firmware
    // image than the 64-bit split into seconds and microseconds (one call
    // of the 128-bit division routine instead of inlined 64-bit divisions
    // by a constant: 42 928 against 43 304 B of `.text`, part 70).
    let ticks = u128::from(t_us) * u128::from(params.ticks_per_second) / US_PER_SECOND;
    // The low 32 bits: the core's counter wraps (the mask makes the
    // conversion exact).
    Instant::from_ticks(u32::try_from(ticks & u128::from(u32::MAX)).unwrap_or(0))
}

#[cfg(test)]
mod test {
    use super::*;

    quickcheck::quickcheck! {
        /// At 1 tick = 1 µs the conversion is the identity modulo 2^32
        /// (the replays and explanations of every default table set are
        /// unchanged by it).
        fn microsecond_ticks_are_microseconds(t_us: u64) -> bool {
            instant(&Params::PAPER, t_us).ticks() == t_us as u32
        }

        /// At any rate, one second later is `ticks_per_second` ticks later
        /// (modulo 2^32).
        /// The exact quotient, modulo 2^32.
        fn exact_modulo_2_32(t_us: u64, rate: u32) -> bool {
            let p = Params::PAPER.with_ticks_per_second(rate);
            let exact = u128::from(t_us) * u128::from(rate) / 1_000_000;
            u128::from(instant(&p, t_us).ticks()) == exact % (1 << 32)
        }

        fn a_second_is_ticks_per_second(t_us: u32, rate: u32) -> bool {
            let p = Params::PAPER.with_ticks_per_second(rate.max(1));
            let (a, b) = (instant(&p, u64::from(t_us)), instant(&p, u64::from(t_us) + 1_000_000));
            b.ticks().wrapping_sub(a.ticks()) == p.ticks_per_second
        }
    }

    #[test]
    fn non_microsecond_ticks() {
        // 1 tick = 1 ms: microseconds round down to whole ticks.
        let ms = Params::PAPER.with_ticks_per_second(1_000);
        assert_eq!(instant(&ms, 0).ticks(), 0);
        assert_eq!(instant(&ms, 999).ticks(), 0);
        assert_eq!(instant(&ms, 1_000).ticks(), 1);
        assert_eq!(instant(&ms, 2_500_000).ticks(), 2_500);
        // 1 tick = 100 ns: ten ticks a microsecond, wrapping at 2^32.
        let fine = Params::PAPER.with_ticks_per_second(10_000_000);
        assert_eq!(instant(&fine, 7).ticks(), 70);
        assert_eq!(instant(&fine, 429_496_730).ticks(), 4);
        // Far from zero, at extreme rates: the exact quotient modulo 2^32.
        for t_us in [u64::MAX, u64::MAX - 999_999, 1 << 40, 123_456_789_012_345] {
            for rate in [1, 999_999, 1_000_000, 1_000_001, u32::MAX] {
                let p = Params::PAPER.with_ticks_per_second(rate);
                let exact = u128::from(t_us) * u128::from(rate) / 1_000_000;
                assert_eq!(u128::from(instant(&p, t_us).ticks()), exact % (1 << 32));
            }
        }
    }
}
