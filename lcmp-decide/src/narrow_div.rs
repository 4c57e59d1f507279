//! 64-bit division with a 32-bit quotient by the 32-bit hardware divide
//! (docs/firmware.md, "Cost table").
//!
//! The in-flight bound converts each queue sample into ticks of drain,
//! `ceil(bytes * 8 * ticks_per_s / rate_bps)`, a division by a 64-bit
//! rate. A Cortex-M4 divides 32 by 32 bits in hardware (`udiv`) but not 64
//! bits: the `u64` division of compiler-builtins (`__aeabi_uldivmod`)
//! took about 300 instructions there and the `u128` one about 1 500, more
//! than the rest of a sample. The quotient here is a tick count, capped at
//! 32 bits, which is what makes a short exact division possible: Hacker's
//! Delight (2nd ed.) §9-4 `divlu` (64 / 32 bits in two 32-bit divides of
//! 16-bit digits) and §9-5 (a 64-bit divisor by its normalised top 32
//! bits, then one correction). Hand-written because no maintained crate
//! offers a division bounded to a 32-bit quotient; a property below checks
//! every result against the plain `u64` division.

/// `floor(u / v)` when it fits in 32 bits; `None` when it does not or
/// `v == 0`.
pub(crate) fn div_u64_to_u32(u: u64, v: u64) -> Option<u32> {
    let (v_hi, v_lo) = split(v);
    if v_hi == 0 {
        let (u_hi, u_lo) = split(u);
        // The quotient fits in 32 bits exactly when u_hi < v (and v > 0).
        if u_hi >= v_lo {
            return None;
        }
        return Some(divlu(u_hi, u_lo, v_lo));
    }
    // v >= 2^32, so u / v < 2^32. §9-5: normalise v so that its top bit
    // is set, divide u / 2 by its top 32 bits (u / 2 < 2^63, so the
    // high word is below that divisor's 2^31 and divlu applies), undo the
    // scaling; the estimate is the quotient or one more, so step back one
    // and correct once.
    let n = v.leading_zeros(); // < 32
    let (v1, _) = split(v << n);
    let (h, l) = split(u >> 1);
    let q1 = divlu(h, l, v1);
    let mut q0 = (u64::from(q1) << n) >> 31;
    q0 = q0.saturating_sub(1);
    // q0 <= u / v: the product and the difference do not wrap.
    if u.wrapping_sub(q0.wrapping_mul(v)) >= v {
        q0 = q0.wrapping_add(1);
    }
    u32::try_from(q0).ok()
}

/// `(x >> 32, x as u32)`.
const fn split(x: u64) -> (u32, u32) {
    ((x >> 32) as u32, x as u32)
}

/// `(u1 * 2^32 + u0) / v` for `u1 < v` (so that the quotient fits 32 bits):
/// Hacker's Delight §9-4, `divlu`, its two quotient digits of 16 bits each
/// estimated by one hardware divide and corrected at most twice.
fn divlu(u1: u32, u0: u32, v: u32) -> u32 {
    // u1 < v: v > 0, so s < 32.
    let s = v.leading_zeros();
    let v = u64::from(v << s);
    let (vn1, vn0) = (v >> 16, v & 0xFFFF);
    // The dividend shifted by s: un32 (32 bits, < v) and two 16-bit digits.
    // The two parts have no bit in common: their sum is their union (an
    // add, not `|`, whose mutant to `^` would be equivalent).
    let un32 = (u64::from(u1) << s).wrapping_add(u64::from(u0) >> 1 >> 31u32.wrapping_sub(s));
    let un10 = u64::from(u0 << s);
    let (un1, un0) = (un10 >> 16, un10 & 0xFFFF);
    let q1 = digit(un32, un1, vn1, vn0);
    // The partial remainder is below v, so it fits 32 bits.
    let un21 = (un32 << 16)
        .wrapping_add(un1)
        .wrapping_sub(q1.wrapping_mul(v))
        & 0xFFFF_FFFF;
    let q0 = digit(un21, un0, vn1, vn0);
    // Two digits of 16 bits: the quotient fits (an add for the union, as
    // above).
    (q1 << 16).wrapping_add(q0) as u32
}

/// One quotient digit of `divlu`: `(un * B + next) / v`, estimated from
/// `un / vn1` and corrected while too large (at most twice, §9-4).
fn digit(un: u64, next: u64, vn1: u64, vn0: u64) -> u64 {
    const B: u64 = 1 << 16;
    // un < 2^32 and vn1 >= 2^15 (v is normalised): the hardware's 32-bit
    // divide, never by zero.
    let mut q = u64::from((un as u32).checked_div(vn1 as u32).unwrap_or(0));
    let mut rhat = un.wrapping_sub(q.wrapping_mul(vn1));
    // Every value here is below 2^49: no wrapping.
    while q >= B || q.wrapping_mul(vn0) > rhat.wrapping_mul(B).wrapping_add(next) {
        q = q.wrapping_sub(1);
        rhat = rhat.wrapping_add(vn1);
        if rhat >= B {
            break;
        }
    }
    q
}

#[cfg(test)]
mod test {
    use super::*;
    use quickcheck::quickcheck;

    /// The oracle: the plain division.
    fn oracle(u: u64, v: u64) -> Option<u32> {
        u.checked_div(v).and_then(|q| u32::try_from(q).ok())
    }

    #[test]
    fn golden() {
        assert_eq!(div_u64_to_u32(0, 1), Some(0));
        assert_eq!(div_u64_to_u32(7, 0), None);
        assert_eq!(div_u64_to_u32(u64::from(u32::MAX), 1), Some(u32::MAX));
        assert_eq!(div_u64_to_u32(1 << 32, 1), None);
        assert_eq!(div_u64_to_u32(u64::MAX, u64::MAX), Some(1));
        assert_eq!(div_u64_to_u32(u64::MAX, 1 << 32), Some(u32::MAX));
        assert_eq!(div_u64_to_u32(u64::MAX, (1 << 32) - 1), None);
        // Digits whose estimate needs the correction loop to go on after
        // its first step (`rhat` still below B): found by search, so that
        // a mutant of the loop's exit is caught every run, not only when
        // quickcheck draws such a case.
        for (u, v) in [
            (7_002_664_860_612_412_950u64, 2_798_570_524u64),
            (2_747_456_222_707_609_577, 1_333_001_621),
            (4_706_510_815_731_380_117, 1_163_165_086),
            (4_284_916_477_706_782_572, 1_320_222_581),
        ] {
            assert_eq!(div_u64_to_u32(u, v), oracle(u, v), "{u} / {v}");
        }
        // 5 GB at 1 MHz ticks over 100 Gbps: 400 000 ticks.
        assert_eq!(
            div_u64_to_u32(5_000_000_000 * 8 * 1_000_000, 100_000_000_000),
            Some(400_000)
        );
    }

    quickcheck! {
        /// Any dividend and divisor.
        fn matches_the_division(u: u64, v: u64) -> bool {
            div_u64_to_u32(u, v) == oracle(u, v)
        }

        /// Quotients that fit (the dividend built from one), near the
        /// divisor's multiples, for divisors of every width.
        fn matches_near_multiples(q: u32, v: u64, shift: u8, r: u64, back: bool) -> bool {
            let v = (v >> (shift % 64)).max(1);
            let Some(base) = u64::from(q).checked_mul(v) else { return true };
            let u = if back { base.saturating_sub(r % v.saturating_add(1)) } else { base.saturating_add(r % v) };
            div_u64_to_u32(u, v) == oracle(u, v)
        }

        /// Narrow divisors (one 32-bit word), where §9-4 runs alone.
        fn matches_narrow_divisors(u: u64, v: u32) -> bool {
            div_u64_to_u32(u, u64::from(v)) == oracle(u, u64::from(v))
        }
    }
}
