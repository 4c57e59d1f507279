//! The per-port congestion monitor (§3.3): raw queue state plus the
//! quantised `Q`, `T` and duration counter, updated only when a queue sample
//! arrives, so decisions just read them.
//!
//! Per-port state is exactly 24 bytes, the paper's figure (§4): previous
//! depth (8 B), trend accumulator (8 B), previous sample time (4 B),
//! duration counter (2 B) and one 16-bit word packing the port's `C_cong`
//! (Eq. 4-5, 8 bits), its trend level code (5 bits) and its liveness bit.
//! `C_cong` is computed when the sample arrives, so a decision reads one byte
//! per candidate, as a switch's egress pipeline would keep it in a register;
//! the queue level `Q` is a pure function of the stored depth and the port's
//! queue scale, its buffer or explicit thresholds ([`PortState::signals`]
//! recomputes it for explanations).

use crate::cost::congestion_cost;
use crate::estimator::{
    persistence::{duration_penalty, duration_step},
    queue::queue_level,
    trend::{ewma_step, queue_delta, trend_level},
    LevelCode,
};
use crate::tables::{Params, PortConfig, PortContext};
use crate::time::Instant;

const CONG_MASK: u16 = 0xFF;
const TREND_SHIFT: u16 = 8;
const TREND_MASK: u16 = 0x1F;
const DOWN_BIT: u16 = 1 << 13;

/// A port's congestion signals as scores: what enters Eq. 4 and its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Signals {
    /// Queue level score `Q`.
    pub q: u8,
    /// Trend level score `T`.
    pub t: u8,
    /// Duration penalty `D`.
    pub d: u8,
    /// `C_cong` (Eq. 4-5) as stored at the last sample or install.
    pub c_cong: u8,
}

/// One port's monitor state (24 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PortState {
    queue_prev: u64,
    trend: i64,
    last_sample: Instant,
    duration: u16,
    /// C_cong (bits 0-7), T code (bits 8-12), down flag (bit 13).
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

    /// The queue level code `Q` of the last sample's depth under `port`'s
    /// buffer and `n` levels (a pure function of the stored depth).
    pub fn queue_code(&self, port: &PortConfig, n: usize) -> LevelCode {
        queue_level(self.queue_prev, port.buffer_bytes, n)
    }

    /// The queue level code `Q` of the last sample's depth under the
    /// port's installed queue scale.
    pub fn queue_code_in(&self, ctx: &PortContext<'_>) -> LevelCode {
        ctx.queue.level(self.queue_prev)
    }

    /// The trend level code `T` of the last sample.
    pub const fn trend_code(&self) -> LevelCode {
        LevelCode(((self.packed >> TREND_SHIFT) & TREND_MASK) as u8)
    }

    /// `C_cong` (Eq. 4-5) as of the last sample or table install.
    pub const fn c_cong(&self) -> u8 {
        (self.packed & CONG_MASK) as u8
    }

    /// All signals as scores, under the port's installed context (`Q`
    /// recomputed from the stored depth; `Q` and `T` read 0 without one).
    pub fn signals(&self, ctx: Option<&PortContext<'_>>) -> Signals {
        Signals {
            q: ctx.map_or(0, |c| self.queue_code_in(c).score(c.levels)),
            t: ctx.map_or(0, |c| self.trend_code().score(c.levels)),
            d: self.duration_penalty(),
            c_cong: self.c_cong(),
        }
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

    fn set_signals(&mut self, t: LevelCode, c_cong: u8) {
        let t = (u16::from(t.0) & TREND_MASK) << TREND_SHIFT;
        self.packed = (self.packed & DOWN_BIT) | t | u16::from(c_cong);
    }

    /// Recomputes the stored `C_cong` from the stored signals under new
    /// tables (a hitless install changes weights or levels between samples).
    pub(crate) fn refresh_c_cong(&mut self, ctx: Option<PortContext<'_>>) {
        let c_cong = match ctx {
            Some(c) => {
                let s = self.signals(Some(&c));
                congestion_cost(s.q, s.t, s.d, &c.params.weights)
            }
            None => 0,
        };
        self.set_signals(self.trend_code(), c_cong);
    }

    /// Folds one sample into the state (Eq. 3, §3.3). Without `config` (the
    /// tables do not list the port, or none are installed) only the raw
    /// depth, trend and time advance, and the levels read as zero.
    pub(crate) fn on_sample(
        &mut self,
        now: Instant,
        queue_bytes: u64,
        ctx: Option<PortContext<'_>>,
    ) {
        let delta = queue_delta(self.queue_prev, queue_bytes);
        let k = ctx.map_or(Params::PAPER.trend_shift, |c| c.params.trend_shift);
        self.trend = ewma_step(self.trend, delta, k);
        let interval = now.ticks_since(self.last_sample).max(1);
        self.queue_prev = queue_bytes;
        self.last_sample = now;
        match ctx {
            Some(PortContext {
                params,
                levels,
                port,
                queue,
            }) => {
                let n = levels.len();
                let q = queue.level(queue_bytes);
                let t = trend_level(
                    self.trend,
                    n,
                    port.rate_bps,
                    params.ticks_per_second,
                    interval,
                );
                let q = q.score(levels);
                self.duration =
                    duration_step(self.duration, q, params.high_water, params.low_water);
                let c_cong =
                    congestion_cost(q, t.score(levels), self.duration_penalty(), &params.weights);
                self.set_signals(t, c_cong);
            }
            None => self.set_signals(LevelCode::NONE, 0),
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
    use crate::estimator::queue::QueueScale;
    use crate::tables::{PortId, DEFAULT_LEVELS};

    #[test]
    fn port_state_is_24_bytes() {
        assert_eq!(size_of::<PortState>(), 24);
    }

    /// A 100 Gb/s port with a 5 GB buffer.
    const PORT: PortConfig = PortConfig {
        id: PortId(0),
        rate_bps: 100_000_000_000,
        buffer_bytes: 5_000_000_000,
    };

    /// `PORT`'s estimator context under `params` (the paper's ten levels,
    /// the buffer's queue scale).
    fn context(params: &Params) -> PortContext<'_> {
        PortContext {
            params,
            levels: &DEFAULT_LEVELS,
            port: &PORT,
            queue: QueueScale::Buffer {
                bytes: PORT.buffer_bytes,
                levels: 10,
            },
        }
    }

    #[test]
    fn sample_sequence_golden() {
        let params = Params::PAPER;
        let port = PORT;
        let cfg = Some(context(&params));
        let mut s = PortState::NEW;
        assert_eq!((s.duration_counter(), s.duration_penalty()), (0, 0));
        // First sample at t = 1 ms: delta 100 MB from 0, interval 1000 ticks.
        s.on_sample(Instant::from_ticks(1000), 100_000_000, cfg);
        assert_eq!(s.queue_bytes(), 100_000_000);
        assert_eq!(s.trend(), 12_500_000);
        // 12.5 MB >= 12.5 MB * (i + 1) / 10 for i = 9: top trend level.
        assert_eq!(s.trend_code(), LevelCode::level(9));
        assert_eq!(s.queue_code(&port, 10), LevelCode::level(0)); // 2 % of 5 GB
                                                                  // C_cong = (2 * 25 + 255 + 0) >> 3 = 38.
        assert_eq!(s.c_cong(), 38);
        // Second sample 2 ms later, unchanged depth: trend decays by 1/8.
        s.on_sample(Instant::from_ticks(3000), 100_000_000, cfg);
        assert_eq!(s.trend(), 12_500_000 - 1_562_500);
        // Threshold per level for 2 ms: 2.5 MB; 10.9375 MB reaches index 3.
        assert_eq!(s.trend_code(), LevelCode::level(3));
        // A full queue four times: duration counter 4, D = 1.
        for i in 0..4 {
            s.on_sample(Instant::from_ticks(4000 + i), 4_500_000_000, cfg);
        }
        assert_eq!(s.queue_code(&port, 10).score(&DEFAULT_LEVELS), 255);
        assert_eq!(s.queue_bytes(), 4_500_000_000);
        assert_eq!(s.duration_counter(), 4);
        assert_eq!(s.duration_penalty(), 1);
        let sig = s.signals(cfg.as_ref());
        assert_eq!(
            sig.c_cong,
            congestion_cost(sig.q, sig.t, sig.d, &params.weights)
        );
        // Liveness is independent of the codes.
        s.set_up(false);
        assert!(!s.is_up());
        let c_cong = s.c_cong();
        assert_eq!(s.queue_code(&port, 10), LevelCode::level(9));
        s.on_sample(Instant::from_ticks(9000), 0, cfg);
        assert!(!s.is_up());
        assert_eq!(s.queue_code(&port, 10), LevelCode::NONE);
        assert!(s.c_cong() < c_cong);
    }

    /// A hitless install that changes the weights recomputes the stored
    /// `C_cong` from the stored signals (no new sample needed).
    #[test]
    fn refresh_recomputes_c_cong_under_new_weights() {
        let params = Params::PAPER;
        let ctx = context;
        let mut s = PortState::NEW;
        s.on_sample(Instant::from_ticks(1000), 2_500_000_000, Some(ctx(&params)));
        let before = s.c_cong();
        let sig = s.signals(Some(&ctx(&params)));
        assert!(sig.q > 0 && before > 0, "{sig:?}");
        let mut heavier = params;
        heavier.weights.w_ql = params.weights.w_ql.saturating_mul(4);
        s.refresh_c_cong(Some(ctx(&heavier)));
        assert_eq!(
            s.c_cong(),
            congestion_cost(sig.q, sig.t, sig.d, &heavier.weights)
        );
        assert_ne!(s.c_cong(), before, "the new weight shows");
        assert_eq!(s.queue_bytes(), 2_500_000_000, "the raw state is kept");
        s.refresh_c_cong(None);
        assert_eq!(s.c_cong(), 0, "no context: no congestion cost");
    }
}
