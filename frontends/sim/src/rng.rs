//! A small, fixed, seeded random number generator: PCG-XSH-RR 64/32
//! (O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically
//! Good Algorithms for Random Number Generation", 2014), the generator
//! `rand_pcg::Pcg32` implements. It is written out here so that results
//! depend on nothing but the seed: no crate upgrade can change a run.

/// PCG-XSH-RR with 64-bit state and 32-bit output.
#[derive(Clone, Debug)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

const MULTIPLIER: u64 = 6_364_136_223_846_793_005;

impl Pcg32 {
    /// A generator for `seed` on stream `stream` (different streams give
    /// independent sequences for the same seed).
    ///
    /// ```
    /// # use lcmp_sim::rng::Pcg32;
    /// let (mut a, mut b) = (Pcg32::new(7, 1), Pcg32::new(7, 1));
    /// assert_eq!(a.next_u32(), b.next_u32());
    /// ```
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Pcg32 {
            state: 0,
            inc: (stream << 1) | 1,
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(MULTIPLIER).wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        let hi = u64::from(self.next_u32()) << 21;
        let lo = u64::from(self.next_u32() >> 11);
        (hi | lo) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `0..n` (`n > 0`; 0 for `n == 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift; the tiny bias (< n / 2^32) is irrelevant here.
        ((u64::from(self.next_u32()) * u64::from(n)) >> 32) as u32
    }

    /// An exponentially distributed float with mean `mean`.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn matches_the_pcg_reference_stream() {
        // pcg32-demo (pcg-c-basic) with seed 42, sequence 54.
        let mut rng = Pcg32::new(42, 54);
        let got: Vec<u32> = (0..6).map(|_| rng.next_u32()).collect();
        assert_eq!(
            got,
            [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e]
        );
    }

    #[test]
    fn floats_are_in_range_and_exp_has_its_mean() {
        let mut rng = Pcg32::new(1, 2);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = rng.next_f64();
            assert!((0.0..1.0).contains(&u));
            sum += rng.exp(3.0);
        }
        let mean = sum / f64::from(n);
        assert!((mean - 3.0).abs() < 0.05, "{mean}");
    }
}
