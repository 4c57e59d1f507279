//! Duration (persistence) penalty `D` (§3.3).
//!
//! A per-port counter goes up by one on each sample whose queue level score
//! is at or above the high-water mark (default 204, 80 %) and down by one,
//! never below zero, on each sample at or below the low-water mark (default
//! 102, 40 %); `D = min(counter >> DURATION_SHIFT, 255)`.

/// The right shift from duration counter to penalty (`D = cnt >> 2`).
pub const DURATION_SHIFT: u32 = 2;

/// The counter after one sample with queue score `q`.
///
/// ```
/// # use lcmp_decide::estimator::persistence::duration_step;
/// assert_eq!(duration_step(3, 204, 204, 102), 4);
/// assert_eq!(duration_step(0, 0, 204, 102), 0);
/// assert_eq!(duration_step(5, 153, 204, 102), 5); // between the marks
/// ```
pub const fn duration_step(counter: u16, q: u8, high_water: u8, low_water: u8) -> u16 {
    if q >= high_water {
        counter.saturating_add(1)
    } else if q <= low_water {
        counter.saturating_sub(1)
    } else {
        counter
    }
}

/// `D = min(counter >> 2, 255)`.
///
/// ```
/// # use lcmp_decide::estimator::persistence::duration_penalty;
/// assert_eq!(duration_penalty(7), 1);
/// assert_eq!(duration_penalty(u16::MAX), 255);
/// ```
pub const fn duration_penalty(counter: u16) -> u8 {
    let d = counter >> DURATION_SHIFT;
    if d > 255 {
        255
    } else {
        d as u8
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn golden_sequence() {
        // Eight samples at 80 %, then three at 40 %, then two at 60 %.
        let mut c = 0;
        let qs = [204, 229, 255, 204, 204, 204, 204, 255, 102, 0, 76, 153, 178];
        let want_d = [0, 0, 0, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1];
        for (q, d) in qs.iter().zip(want_d) {
            c = duration_step(c, *q, 204, 102);
            assert_eq!(duration_penalty(c), d, "after q = {q}, counter {c}");
        }
        assert_eq!(c, 5);
        assert_eq!(duration_step(u16::MAX, 255, 204, 102), u16::MAX);
        assert_eq!(duration_penalty(255 * 4 + 3), 255);
        assert_eq!(duration_penalty(256 * 4), 255);
    }
}
