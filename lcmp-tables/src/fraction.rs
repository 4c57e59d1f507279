//! Human-facing fractions (water marks, the cut, capacity-threshold
//! percentages) parsed as `fixed` numbers and turned into integers exactly.
//!
//! A [`Fraction`] is a `fixed::types::U64F64` in `0..=1`, parsed by `fixed`
//! from a decimal such as `0.8` or a percentage such as `80%`, with at most
//! [`MAX_DECIMALS`] digits after the point (counted after moving the point
//! two places left for a percentage). `fixed` rounds the decimal correctly
//! to the nearest multiple of 2^-64, an error below 2^-65; since the input
//! is a multiple of 10^-9, the decimal is recovered exactly as
//! `k = round(f * 10^9)` and every conversion is exact integer arithmetic
//! on `k`, rounding to nearest with ties up:
//!
//! * [`Fraction::score`]: `round(255 * f)`, so `0.8 -> 204`, `0.4 -> 102`,
//!   `0.7 -> 179` (178.5 rounds up), `1 -> 255`;
//! * [`Fraction::of`]: `round(total * f)`, so `10%` of 400 Gbps is exactly
//!   40 Gbps, for every `total` up to `u64::MAX`.

use core::fmt;
use core::str::FromStr;

use fixed::types::U64F64;

use crate::error::OptionError;

/// Most digits after the decimal point a fraction may have.
pub const MAX_DECIMALS: usize = 9;
const SCALE: u128 = 1_000_000_000;

/// A number in `0..=1` with 64 fractional bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fraction(U64F64);

impl Fraction {
    /// Zero.
    pub const ZERO: Fraction = Fraction(U64F64::ZERO);
    /// One.
    pub const ONE: Fraction = Fraction(U64F64::ONE);

    /// Parses `0.8`, `.8`, `1`, `80%` or `80.5 %` (a percentage is divided
    /// by 100 exactly before rounding to 64 fractional bits).
    ///
    /// ```
    /// # use lcmp_tables::Fraction;
    /// assert_eq!(Fraction::parse("0.8").unwrap().score(), 204);
    /// assert_eq!(Fraction::parse("80%").unwrap().score(), 204);
    /// assert!(Fraction::parse("1.5").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Fraction, OptionError> {
        let text = text.trim();
        let (number, percent) = match text.strip_suffix('%') {
            Some(n) => (n.trim_end(), true),
            None => (text, false),
        };
        // An empty number or a sign is refused by the digit checks below
        // (`parse_fixed`, `shift_decimal_left`), with the same error.
        let value = if percent {
            // Parse the percentage with its decimal point moved two places
            // left, so no second rounding step is needed.
            let shifted = shift_decimal_left(number).ok_or(OptionError::BadFraction)?;
            parse_fixed(shifted.as_str())?
        } else {
            parse_fixed(number)?
        };
        if value > U64F64::ONE {
            return Err(OptionError::FractionOutOfRange);
        }
        Ok(Fraction(value))
    }

    /// `round(255 * f)`: a 0-255 score (water marks, the cut).
    pub fn score(self) -> u8 {
        // f <= 1, so the result is at most 255.
        u8::try_from(self.of(255)).unwrap_or(u8::MAX)
    }

    /// `round(total * f)`, ties up, exact in integers.
    ///
    /// ```
    /// # use lcmp_tables::Fraction;
    /// let f = Fraction::parse("10%").unwrap();
    /// assert_eq!(f.of(400_000_000_000), 40_000_000_000);
    /// ```
    pub fn of(self, total: u64) -> u64 {
        let k = self.billionths();
        // k <= 10^9 < 2^30 and total < 2^64: the product fits in u128.
        let product = u128::from(total).saturating_mul(k);
        let rounded = product.saturating_add(SCALE / 2) / SCALE;
        u64::try_from(rounded).unwrap_or(u64::MAX)
    }

    /// The exact decimal value in billionths, `round(f * 10^9)`.
    ///
    /// ```
    /// # use lcmp_tables::Fraction;
    /// assert_eq!(Fraction::parse("0.7").unwrap().billionths(), 700_000_000);
    /// ```
    pub fn billionths(self) -> u128 {
        // bits <= 2^64 (f <= 1), so bits * 10^9 < 2^94.
        let bits = self.0.to_bits();
        (bits.saturating_mul(SCALE).saturating_add(1u128 << 63)) >> 64
    }

    /// The underlying fixed-point value.
    pub const fn to_fixed(self) -> U64F64 {
        self.0
    }
}

impl FromStr for Fraction {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fraction::parse(s)
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

fn parse_fixed(text: &str) -> Result<U64F64, OptionError> {
    if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || text
            .split_once('.')
            .is_some_and(|(_, frac)| frac.len() > MAX_DECIMALS)
    {
        return Err(OptionError::BadFraction);
    }
    U64F64::from_str(text).map_err(|_| OptionError::BadFraction)
}

/// A small stack string for the shifted percentage.
struct Small {
    buf: [u8; 64],
    len: usize,
}

impl Small {
    fn push(&mut self, b: u8) -> Option<()> {
        let slot = self.buf.get_mut(self.len)?;
        *slot = b;
        self.len = self.len.checked_add(1)?;
        Some(())
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

/// `"80.5"` -> `"0.805"`: the decimal divided by 100, textually.
fn shift_decimal_left(number: &str) -> Option<Small> {
    if !number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || number.bytes().filter(|&b| b == b'.').count() > 1
    {
        return None;
    }
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let int = int.trim_start_matches('0');
    let mut digits = Small {
        buf: [0; 64],
        len: 0,
    };
    // Pad the integer part to at least two digits.
    let pad = 2usize.saturating_sub(int.len());
    let (head, tail) = int.split_at(int.len().saturating_sub(2));
    for b in head.bytes() {
        digits.push(b)?;
    }
    if head.is_empty() {
        digits.push(b'0')?;
    }
    digits.push(b'.')?;
    for _ in 0..pad {
        digits.push(b'0')?;
    }
    for b in tail.bytes().chain(frac.bytes()) {
        digits.push(b)?;
    }
    Some(digits)
}

#[cfg(test)]
mod test {
    use super::*;

    fn f(s: &str) -> Fraction {
        Fraction::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn paper_marks_are_exact() {
        assert_eq!(f("0.8").score(), 204);
        assert_eq!(f("0.4").score(), 102);
        assert_eq!(f("80%").score(), 204);
        assert_eq!(f("40 %").score(), 102);
        assert_eq!(f("1").score(), 255);
        assert_eq!(f("100%").score(), 255);
        assert_eq!(f("0").score(), 0);
        assert_eq!(f(".5").score(), 128); // 127.5 rounds up
        assert_eq!(f("0.7").score(), 179); // 178.5 rounds up
    }

    #[test]
    fn capacity_fractions_are_exact() {
        let top = 400_000_000_000;
        for i in 1..=10u64 {
            let text = alloc::format!("0.{i}");
            let text = if i == 10 { "1.0".into() } else { text };
            assert_eq!(f(&text).of(top), top * i / 10, "{text}");
            let pct = alloc::format!("{}%", i * 10);
            assert_eq!(f(&pct).of(top), top * i / 10, "{pct}");
        }
        assert_eq!(f("12.5%").of(1000), 125);
        assert_eq!(f("0.333333333").of(3_000_000_000), 999_999_999);
        assert_eq!(f("0.000000001").of(u64::MAX), 18_446_744_074); // 18446744073.709... rounds up
        assert_eq!(f("0.5").of(u64::MAX), 1 << 63); // ...5.5 ties up
        assert_eq!(f("1").of(u64::MAX), u64::MAX);
    }

    #[test]
    fn rejects() {
        for bad in [
            "",
            "%",
            "-0.1",
            "+0.1",
            "abc",
            "0.8.1",
            "1e-3",
            "50%%",
            "x%",
            "0.1234567891",
            "0.12345678%",
        ] {
            assert_eq!(
                Fraction::parse(bad),
                Err(OptionError::BadFraction),
                "{bad:?}"
            );
        }
        for big in ["1.01", "101%", "2"] {
            assert_eq!(
                Fraction::parse(big),
                Err(OptionError::FractionOutOfRange),
                "{big}"
            );
        }
    }

    #[test]
    fn shift() {
        let s = |x| shift_decimal_left(x).map(|s| alloc::string::String::from(s.as_str()));
        assert_eq!(s("80").as_deref(), Some("0.80"));
        assert_eq!(s("5").as_deref(), Some("0.05"));
        assert_eq!(s("100").as_deref(), Some("1.00"));
        assert_eq!(s("12.5").as_deref(), Some("0.125"));
        assert_eq!(s(".5").as_deref(), Some("0.005"));
        for bad in ["", ".", "x", "8x", "8.0.1", "-5"] {
            assert_eq!(s(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn display_is_the_decimal_value() {
        assert_eq!(alloc::string::ToString::to_string(&f("0.5")), "0.5");
        assert_eq!(alloc::string::ToString::to_string(&f("25%")), "0.25");
        assert_eq!(alloc::string::ToString::to_string(&Fraction::ONE), "1");
    }
}
