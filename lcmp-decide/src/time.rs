//! Time as a wrapping integer tick counter.
//!
//! The core never reads a clock: every handler takes `now` as an argument.
//! A tick is whatever the caller's timer counts; the tables say how many
//! ticks make a second ([`crate::Params::ticks_per_second`], default
//! 1 000 000, i.e. one tick = 1 µs, as the `lcmp` tool uses). The counter is
//! 32 bits wide and wraps (after about 71 minutes at 1 µs a tick), as the
//! free-running timers of switch ASICs and microcontrollers do; every
//! difference is taken with wrapping arithmetic, so a wrap between two
//! events is harmless as long as the two are less than 2^32 ticks apart.

/// A point in time, in caller-defined ticks of a wrapping 32-bit counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Instant {
    ticks: u32,
}

impl Instant {
    /// Tick zero: the previous-sample time of a port that was never sampled.
    pub const ZERO: Instant = Instant { ticks: 0 };

    /// An instant from a raw tick count.
    ///
    /// ```
    /// # use lcmp_decide::Instant;
    /// assert_eq!(Instant::from_ticks(7).ticks(), 7);
    /// ```
    pub const fn from_ticks(ticks: u32) -> Self {
        Instant { ticks }
    }

    /// The raw tick count.
    pub const fn ticks(self) -> u32 {
        self.ticks
    }

    /// Ticks elapsed from `earlier` to `self`, modulo 2^32 (wrap-safe).
    ///
    /// ```
    /// # use lcmp_decide::Instant;
    /// let before_wrap = Instant::from_ticks(u32::MAX - 1);
    /// assert_eq!(Instant::from_ticks(3).ticks_since(before_wrap), 5);
    /// ```
    pub const fn ticks_since(self, earlier: Instant) -> u32 {
        self.ticks.wrapping_sub(earlier.ticks)
    }
}
