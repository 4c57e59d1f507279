//! DCQCN's reaction point (the sender's rate limiter) as the Mellanox
//! model of the HPCC NS-3 code base the artifact builds on runs it: a CNP
//! (an acknowledgement with the congestion flag, [`Rp::on_cnp`]) cuts the
//! rate at most once per rate-decrease interval, `alpha` is updated every
//! alpha-resume interval, and a timer raises the rate in fast-recovery,
//! additive and hyper-additive stages (Zhu et al., "Congestion Control
//! for Large-Scale RDMA Deployments", SIGCOMM 2015, §3 and Fig. 6).
//!
//! Time is integer picoseconds; rates are integer bits per second. Timers
//! are deadlines the engine keeps (`poll_*`), never callbacks.

/// DCQCN parameters; [`DcqcnParams::ARTIFACT`] holds the artifact's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// Additive increase step, bits per second (`RATE_AI`).
    pub rai_bps: u64,
    /// Hyper increase step, bits per second (`RATE_HAI`).
    pub rhai_bps: u64,
    /// Lowest rate, bits per second (`MIN_RATE`).
    pub min_rate_bps: u64,
    /// `alpha` EWMA gain `g` (`EWMA_GAIN`).
    pub g: f64,
    /// Least time between two cuts, ps (`RATE_DECREASE_INTERVAL`).
    pub decrease_interval_ps: u64,
    /// The increase timer, ps (`RP_TIMER`).
    pub rp_timer_ps: u64,
    /// The alpha update period, ps (`alpha_resume_interval`).
    pub alpha_interval_ps: u64,
    /// Fast-recovery stages `F` (`FAST_RECOVERY_TIMES`).
    pub fast_recovery: u32,
    /// Whether every cut also sets the target rate to the current rate
    /// (`CLAMP_TARGET_RATE`); off, only cuts during an increase do.
    pub clamp_target: bool,
}

impl DcqcnParams {
    /// The artifact's settings: `simulation/mix/config/8DC-hetero/config_batch.txt`
    /// (`RATE_AI 50Mb/s`, `RATE_HAI 100Mb/s`, `MIN_RATE 100Mb/s`,
    /// `EWMA_GAIN 0.00390625`, `RATE_DECREASE_INTERVAL 4`, `RP_TIMER 900`,
    /// `FAST_RECOVERY_TIMES 1`, `CLAMP_TARGET_RATE 0`) and, for the alpha
    /// period it does not set, its `scratch/third.cc` default of 55 µs.
    pub const ARTIFACT: DcqcnParams = DcqcnParams {
        rai_bps: 50_000_000,
        rhai_bps: 100_000_000,
        min_rate_bps: 100_000_000,
        g: 1.0 / 256.0,
        decrease_interval_ps: 4_000_000,
        rp_timer_ps: 900_000_000,
        alpha_interval_ps: 55_000_000,
        fast_recovery: 1,
        clamp_target: false,
    };
}

/// One sender's DCQCN state, as the artifact's `RdmaHw` (`*Mlx`) keeps
/// it: nothing happens before the first CNP; that CNP sets `alpha` to 1,
/// starts the alpha clock (an update every alpha period from then on) and
/// the rate-decrease grid (a check every decrease interval, the first one
/// decrease interval + 1 ns after the CNP); a check cuts the rate if a CNP
/// arrived since the previous check.
#[derive(Clone, Debug, PartialEq)]
pub struct Rp {
    /// Current rate, bits per second.
    pub rc_bps: u64,
    /// Target rate, bits per second.
    pub rt_bps: u64,
    /// Congestion estimate in `[0, 1]` (1 until the first CNP).
    pub alpha: f64,
    line_bps: u64,
    /// The next alpha update (`None`: no CNP yet).
    alpha_at_ps: Option<u64>,
    cnp_since_alpha: bool,
    /// The next point of the decrease grid (`None`: no CNP yet).
    check_at_ps: Option<u64>,
    cut_pending: bool,
    stage: u32,
    timer_at_ps: Option<u64>,
    /// Cuts applied.
    pub cuts: u64,
}

/// The artifact schedules the first decrease check 1 ns after the
/// decrease interval "to make sure rate decrease is after alpha update"
/// (`rdma-hw.cc`, `cnp_received_mlx`).
const FIRST_CHECK_EXTRA_PS: u64 = 1_000;

impl Rp {
    /// A sender at line rate (`now_ps` is unused: DCQCN's clocks start at
    /// the first CNP).
    pub fn new(line_bps: u64, _now_ps: u64) -> Self {
        Rp {
            rc_bps: line_bps,
            rt_bps: line_bps,
            alpha: 1.0,
            line_bps,
            alpha_at_ps: None,
            cnp_since_alpha: false,
            check_at_ps: None,
            cut_pending: false,
            stage: 0,
            timer_at_ps: None,
            cuts: 0,
        }
    }

    /// Brings `alpha` up to `now`: every alpha update due at or before
    /// `now`, the first with the CNP flag of its period, the rest without.
    fn catch_up_alpha(&mut self, p: &DcqcnParams, now_ps: u64) {
        let Some(at) = self.alpha_at_ps else {
            return;
        };
        if now_ps < at {
            return;
        }
        let period = p.alpha_interval_ps.max(1);
        let k = (now_ps - at) / period + 1;
        self.alpha = if self.cnp_since_alpha {
            (1.0 - p.g) * self.alpha + p.g
        } else {
            (1.0 - p.g) * self.alpha
        };
        if k > 1 {
            let rest = i32::try_from(k - 1).unwrap_or(i32::MAX);
            self.alpha *= (1.0 - p.g).powi(rest);
        }
        self.cnp_since_alpha = false;
        self.alpha_at_ps = Some(at.saturating_add(k.saturating_mul(period)));
    }

    fn cut(&mut self, p: &DcqcnParams, now_ps: u64) {
        self.catch_up_alpha(p, now_ps);
        if p.clamp_target || self.stage != 0 {
            self.rt_bps = self.rc_bps;
        }
        let cut = (self.rc_bps as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rc_bps = cut.max(p.min_rate_bps).min(self.line_bps);
        self.stage = 0;
        self.cut_pending = false;
        self.timer_at_ps = Some(now_ps.saturating_add(p.rp_timer_ps));
        self.cuts += 1;
    }

    /// A CNP arrived: the first one sets `alpha` to 1 and starts the
    /// alpha clock and the decrease grid; every one makes the next grid
    /// point cut ([`Rp::poll_cut`]).
    pub fn on_cnp(&mut self, p: &DcqcnParams, now_ps: u64) {
        if self.check_at_ps.is_none() {
            // `cnp_received_mlx` with `m_first_cnp` (RateOnFirstCnp 1.0:
            // the rate stays).
            self.alpha = 1.0;
            self.cnp_since_alpha = false;
            self.alpha_at_ps = Some(now_ps.saturating_add(p.alpha_interval_ps));
            self.check_at_ps = Some(
                now_ps
                    .saturating_add(p.decrease_interval_ps)
                    .saturating_add(FIRST_CHECK_EXTRA_PS),
            );
            self.cut_pending = true;
            return;
        }
        self.catch_up_alpha(p, now_ps);
        self.cnp_since_alpha = true;
        self.cut_pending = true;
        // The grid is advanced lazily: its next point is the first at or
        // after `now`.
        if let Some(at) = self.check_at_ps.filter(|&t| t < now_ps) {
            let period = p.decrease_interval_ps.max(1);
            let k = (now_ps - at).div_ceil(period);
            self.check_at_ps = Some(at.saturating_add(k.saturating_mul(period)));
        }
    }

    /// The grid point at or after the last check that a pending CNP cuts
    /// at (`None`: none pending).
    #[must_use]
    pub fn poll_cut(&self, _p: &DcqcnParams) -> Option<u64> {
        self.cut_pending.then_some(self.check_at_ps).flatten()
    }

    /// When the increase timer fires next (`None`: at line rate, idle).
    #[must_use]
    pub fn poll_timer(&self) -> Option<u64> {
        self.timer_at_ps
    }

    /// Handles whichever deadlines are due at `now` (extra calls are
    /// harmless).
    pub fn handle_timeout(&mut self, p: &DcqcnParams, now_ps: u64) {
        if let Some(at) = self.check_at_ps.filter(|&t| t <= now_ps) {
            // Advance the grid past `now`; a pending CNP cuts once.
            let period = p.decrease_interval_ps.max(1);
            let k = (now_ps - at) / period + 1;
            self.check_at_ps = Some(at.saturating_add(k.saturating_mul(period)));
            if self.cut_pending {
                self.cut(p, now_ps);
            }
        }
        if let Some(t) = self.timer_at_ps.filter(|&t| t <= now_ps) {
            // `RateIncEventTimerMlx`: the stage is compared, then counted.
            if self.stage < p.fast_recovery {
                // Fast recovery: halfway back to the target.
            } else if self.stage == p.fast_recovery {
                self.rt_bps = self.rt_bps.saturating_add(p.rai_bps);
            } else {
                self.rt_bps = self.rt_bps.saturating_add(p.rhai_bps);
            }
            self.stage = self.stage.saturating_add(1);
            self.rt_bps = self.rt_bps.min(self.line_bps);
            // Halfway to the target, rounded up so that the rate reaches it.
            self.rc_bps = (self.rc_bps + self.rt_bps).div_ceil(2).min(self.line_bps);
            self.timer_at_ps = if self.rc_bps >= self.line_bps {
                None
            } else {
                Some(t.saturating_add(p.rp_timer_ps))
            };
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const P: DcqcnParams = DcqcnParams::ARTIFACT;
    const LINE: u64 = 100_000_000_000;
    /// Where the decrease grid of a first CNP at `t` starts.
    fn first_check(t: u64) -> u64 {
        t + P.decrease_interval_ps + FIRST_CHECK_EXTRA_PS
    }

    #[test]
    fn a_first_cnp_late_in_a_flow_halves_the_rate() {
        // The flow started at 0; its first CNP comes 200 ms later. The
        // artifact's alpha is 1 until then, so the first cut halves.
        let mut rp = Rp::new(LINE, 0);
        let t = 200_000 * 1_000_000;
        rp.on_cnp(&P, t);
        assert_eq!(rp.rc_bps, LINE, "the cut waits for the grid");
        assert_eq!(rp.poll_cut(&P), Some(first_check(t)));
        rp.handle_timeout(&P, first_check(t));
        assert_eq!(rp.rc_bps, LINE / 2);
        assert_eq!(rp.cuts, 1);
    }

    #[test]
    fn cuts_fall_on_the_4us_grid_of_the_first_cnp() {
        let mut rp = Rp::new(LINE, 0);
        rp.on_cnp(&P, 1_000);
        let g0 = first_check(1_000);
        rp.handle_timeout(&P, g0);
        assert_eq!(rp.rc_bps, LINE / 2);
        // A CNP 1 µs after the first cut cuts at the next grid point, and
        // one 9 µs later at the grid point after that, not 4 µs after it.
        rp.on_cnp(&P, g0 + 1_000_000);
        assert_eq!(rp.poll_cut(&P), Some(g0 + P.decrease_interval_ps));
        rp.handle_timeout(&P, g0 + P.decrease_interval_ps);
        assert_eq!(rp.cuts, 2);
        let late = g0 + P.decrease_interval_ps + 9_000_000;
        rp.on_cnp(&P, late);
        assert_eq!(rp.poll_cut(&P), Some(g0 + 4 * P.decrease_interval_ps));
        // No CNP, no cut at a grid point.
        let mut idle = Rp::new(LINE, 0);
        idle.on_cnp(&P, 0);
        idle.handle_timeout(&P, first_check(0));
        assert_eq!(idle.poll_cut(&P), None);
        idle.handle_timeout(&P, first_check(0) + P.decrease_interval_ps);
        assert_eq!(idle.cuts, 1);
    }

    #[test]
    fn the_first_increase_after_a_cut_is_fast_recovery() {
        let mut rp = Rp::new(LINE, 0);
        rp.on_cnp(&P, 0);
        let g0 = first_check(0);
        rp.handle_timeout(&P, g0);
        // Timer 1 (stage 0): fast recovery towards the line-rate target.
        let t1 = g0 + P.rp_timer_ps;
        rp.handle_timeout(&P, t1);
        assert_eq!(rp.rc_bps, LINE / 4 * 3);
        // A cut during the increase clamps the target to the rate.
        rp.on_cnp(&P, t1 + 1);
        let g = rp.poll_cut(&P).unwrap_or(0);
        rp.handle_timeout(&P, g);
        assert_eq!(rp.rt_bps, LINE / 4 * 3);
        // Its first increase is fast recovery again: the target stays
        // (counting the stage first would add RATE_AI to it).
        rp.handle_timeout(&P, g + P.rp_timer_ps);
        assert_eq!(rp.rt_bps, LINE / 4 * 3);
        rp.handle_timeout(&P, g + 2 * P.rp_timer_ps);
        assert_eq!(rp.rt_bps, LINE / 4 * 3 + P.rai_bps);
    }

    #[test]
    fn without_cnps_alpha_decays_and_the_rate_recovers_to_line_rate() {
        let mut rp = Rp::new(LINE, 0);
        rp.on_cnp(&P, 0);
        let mut now = 0;
        while let Some(t) = [rp.poll_timer(), rp.poll_cut(&P)]
            .into_iter()
            .flatten()
            .min()
        {
            now = t;
            rp.handle_timeout(&P, now);
            assert!(now < 10_000_000_000_000, "never recovers");
        }
        assert_eq!(rp.rc_bps, LINE);
        // Alpha decays by (1 - g) per 55 µs without CNPs.
        let before = rp.alpha;
        rp.catch_up_alpha(&P, now + 55_000_000 * 256);
        assert!(rp.alpha < before * 0.4, "{} -> {}", before, rp.alpha);
    }

    #[test]
    fn the_rate_never_drops_below_the_minimum() {
        let mut rp = Rp::new(LINE, 0);
        for i in 0..10_000u64 {
            let t = i * 5_000_000;
            rp.on_cnp(&P, t);
            if let Some(c) = rp.poll_cut(&P) {
                rp.handle_timeout(&P, c);
            }
        }
        assert_eq!(rp.rc_bps, P.min_rate_bps);
    }
}
