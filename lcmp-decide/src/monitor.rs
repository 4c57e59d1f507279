//! The per-port congestion monitor (§3.3): raw queue state plus the
//! quantised `Q`, `T` and duration counter, updated only when a queue sample
//! arrives, so decisions just read them.
//!
//! Per-port state is exactly 24 bytes, the paper's figure (§4): previous
//! depth (8 B), trend accumulator (8 B), previous sample time (4 B),
//! duration counter (2 B) and one 16-bit word packing the `Q` and `T` level
//! codes (5 bits each) and the port's liveness bit.

use crate::estimator::{
    persistence::{duration_penalty, duration_step},
    queue::queue_level,
    trend::{ewma_step, queue_delta, trend_level},
    LevelCode,
};
use crate::tables::{Params, PortConfig};
use crate::time::Instant;

const CODE_BITS: u16 = 5;
const CODE_MASK: u16 = (1 << CODE_BITS) - 1;
const DOWN_BIT: u16 = 1 << (2 * CODE_BITS);

/// One port's monitor state (24 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PortState {
    queue_prev: u64,
    trend: i64,
    last_sample: Instant,
    duration: u16,
    /// Q code (bits 0-4), T code (bits 5-9), down flag (bit 10).
    packed: u16,
}

impl PortState {
    /// A port never sampled: previous depth 0, previous sample time 0, up.
    pub const NEW: PortState = PortState {
        queue_prev: 0,
        trend: 0,
        last_sample: Instant::ZERO,
        duration: 0,
        packed: 0,
    };

    /// Whether the port is up.
    pub const fn is_up(&self) -> bool {
        self.packed & DOWN_BIT == 0
    }

    pub(crate) fn set_up(&mut self, up: bool) {
        if up {
            self.packed &= !DOWN_BIT;
        } else {
            self.packed |= DOWN_BIT;
        }
    }

    /// The queue level code `Q` of the last sample.
    pub const fn queue_code(&self) -> LevelCode {
        LevelCode((self.packed & CODE_MASK) as u8)
    }

    /// The trend level code `T` of the last sample.
    pub const fn trend_code(&self) -> LevelCode {
        LevelCode(((self.packed >> CODE_BITS) & CODE_MASK) as u8)
    }

    /// The raw trend accumulator of Eq. 3, bytes.
    pub const fn trend(&self) -> i64 {
        self.trend
    }

    /// The depth of the last sample, bytes.
    pub const fn queue_bytes(&self) -> u64 {
        self.queue_prev
    }

    /// The duration penalty `D`.
    pub const fn duration_penalty(&self) -> u8 {
        duration_penalty(self.duration)
    }

    /// The duration counter.
    pub const fn duration_counter(&self) -> u16 {
        self.duration
    }

    fn set_codes(&mut self, q: LevelCode, t: LevelCode) {
        let q = u16::from(q.0) & CODE_MASK;
        let t = u16::from(t.0) & CODE_MASK;
        self.packed = (self.packed & DOWN_BIT) | q | (t << CODE_BITS);
    }

    /// Folds one sample into the state (Eq. 3, §3.3). Without `config` (the
    /// tables do not list the port, or none are installed) only the raw
    /// depth, trend and time advance, and the levels read as zero.
    pub(crate) fn on_sample(
        &mut self,
        now: Instant,
        queue_bytes: u64,
        config: Option<(&Params, &[u8], &PortConfig)>,
    ) {
        let delta = queue_delta(self.queue_prev, queue_bytes);
        let k = config.map_or(Params::PAPER.trend_shift, |(p, _, _)| p.trend_shift);
        self.trend = ewma_step(self.trend, delta, k);
        let interval = now.ticks_since(self.last_sample).max(1);
        self.queue_prev = queue_bytes;
        self.last_sample = now;
        match config {
            Some((params, levels, port)) => {
                let n = levels.len();
                let q = queue_level(queue_bytes, port.buffer_bytes, n);
                let t = trend_level(
                    self.trend,
                    n,
                    port.rate_bps,
                    params.ticks_per_second,
                    interval,
                );
                self.duration = duration_step(
                    self.duration,
                    q.score(levels),
                    params.high_water,
                    params.low_water,
                );
                self.set_codes(q, t);
            }
            None => self.set_codes(LevelCode::NONE, LevelCode::NONE),
        }
    }
}

impl Default for PortState {
    fn default() -> Self {
        PortState::NEW
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tables::{PortId, DEFAULT_LEVELS};

    #[test]
    fn port_state_is_24_bytes() {
        assert_eq!(size_of::<PortState>(), 24);
    }

    #[test]
    fn sample_sequence_golden() {
        let params = Params::PAPER;
        let port = PortConfig {
            id: PortId(0),
            rate_bps: 100_000_000_000,
            buffer_bytes: 5_000_000_000,
        };
        let cfg = Some((&params, &DEFAULT_LEVELS[..], &port));
        let mut s = PortState::NEW;
        // First sample at t = 1 ms: delta 100 MB from 0, interval 1000 ticks.
        s.on_sample(Instant::from_ticks(1000), 100_000_000, cfg);
        assert_eq!(s.trend(), 12_500_000);
        // 12.5 MB >= 12.5 MB * (i + 1) / 10 for i = 9: top trend level.
        assert_eq!(s.trend_code(), LevelCode::level(9));
        assert_eq!(s.queue_code(), LevelCode::level(0)); // 2 % of 5 GB
                                                         // Second sample 2 ms later, unchanged depth: trend decays by 1/8.
        s.on_sample(Instant::from_ticks(3000), 100_000_000, cfg);
        assert_eq!(s.trend(), 12_500_000 - 1_562_500);
        // Threshold per level for 2 ms: 2.5 MB; 10.9375 MB reaches index 3.
        assert_eq!(s.trend_code(), LevelCode::level(3));
        // A full queue four times: duration counter 4, D = 1.
        for i in 0..4 {
            s.on_sample(Instant::from_ticks(4000 + i), 4_500_000_000, cfg);
        }
        assert_eq!(s.queue_code().score(&DEFAULT_LEVELS), 255);
        assert_eq!(s.duration_penalty(), 1);
        // Liveness is independent of the codes.
        s.set_up(false);
        assert!(!s.is_up());
        assert_eq!(s.queue_code(), LevelCode::level(9));
        s.on_sample(Instant::from_ticks(9000), 0, cfg);
        assert!(!s.is_up());
        assert_eq!(s.queue_code(), LevelCode::NONE);
    }
}
