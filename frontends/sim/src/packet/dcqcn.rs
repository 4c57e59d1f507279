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

/// One sender's DCQCN state.
#[derive(Clone, Debug, PartialEq)]
pub struct Rp {
    /// Current rate, bits per second.
    pub rc_bps: u64,
    /// Target rate, bits per second.
    pub rt_bps: u64,
    /// Congestion estimate in `[0, 1]` (starts at 1).
    pub alpha: f64,
    line_bps: u64,
    alpha_at_ps: u64,
    cnp_since_alpha: bool,
    last_cut_ps: Option<u64>,
    cut_pending: bool,
    stage: u32,
    timer_at_ps: Option<u64>,
    /// Cuts applied.
    pub cuts: u64,
}

impl Rp {
    /// A sender at line rate.
    pub fn new(line_bps: u64, now_ps: u64) -> Self {
        Rp {
            rc_bps: line_bps,
            rt_bps: line_bps,
            alpha: 1.0,
            line_bps,
            alpha_at_ps: now_ps,
            cnp_since_alpha: false,
            last_cut_ps: None,
            cut_pending: false,
            stage: 0,
            timer_at_ps: None,
            cuts: 0,
        }
    }

    /// Brings `alpha` up to `now`: one update per elapsed alpha period,
    /// the first with the CNP flag of the period, the rest without.
    fn catch_up_alpha(&mut self, p: &DcqcnParams, now_ps: u64) {
        let period = p.alpha_interval_ps.max(1);
        let k = now_ps.saturating_sub(self.alpha_at_ps) / period;
        if k == 0 {
            return;
        }
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
        self.alpha_at_ps = self.alpha_at_ps.saturating_add(k.saturating_mul(period));
    }

    fn cut(&mut self, p: &DcqcnParams, now_ps: u64) {
        self.catch_up_alpha(p, now_ps);
        if p.clamp_target || self.stage != 0 {
            self.rt_bps = self.rc_bps;
        }
        let cut = (self.rc_bps as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rc_bps = cut.max(p.min_rate_bps).min(self.line_bps);
        self.stage = 0;
        self.last_cut_ps = Some(now_ps);
        self.cut_pending = false;
        self.timer_at_ps = Some(now_ps.saturating_add(p.rp_timer_ps));
        self.cuts += 1;
    }

    /// A CNP arrived: cut now if the last cut is at least one decrease
    /// interval old, else remember it for [`Rp::poll_cut`]'s deadline.
    pub fn on_cnp(&mut self, p: &DcqcnParams, now_ps: u64) {
        self.catch_up_alpha(p, now_ps);
        self.cnp_since_alpha = true;
        match self.last_cut_ps {
            Some(t) if now_ps < t.saturating_add(p.decrease_interval_ps) => self.cut_pending = true,
            _ => self.cut(p, now_ps),
        }
    }

    /// When a remembered CNP cuts the rate (`None`: none pending).
    #[must_use]
    pub fn poll_cut(&self, p: &DcqcnParams) -> Option<u64> {
        let t = self.last_cut_ps?;
        self.cut_pending
            .then(|| t.saturating_add(p.decrease_interval_ps))
    }

    /// When the increase timer fires next (`None`: at line rate, idle).
    #[must_use]
    pub fn poll_timer(&self) -> Option<u64> {
        self.timer_at_ps
    }

    /// Handles whichever deadlines are due at `now` (extra calls are
    /// harmless).
    pub fn handle_timeout(&mut self, p: &DcqcnParams, now_ps: u64) {
        if self.poll_cut(p).is_some_and(|t| t <= now_ps) {
            self.cut(p, now_ps);
        }
        if let Some(t) = self.timer_at_ps.filter(|&t| t <= now_ps) {
            self.stage = self.stage.saturating_add(1);
            if self.stage < p.fast_recovery {
                // Fast recovery: halfway back to the target.
            } else if self.stage == p.fast_recovery {
                self.rt_bps = self.rt_bps.saturating_add(p.rai_bps);
            } else {
                self.rt_bps = self.rt_bps.saturating_add(p.rhai_bps);
            }
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

    #[test]
    fn the_first_cnp_halves_the_rate_and_cuts_are_paced() {
        let mut rp = Rp::new(LINE, 0);
        rp.on_cnp(&P, 1_000);
        assert_eq!(rp.rc_bps, LINE / 2);
        // A second CNP within 4 µs waits for the interval.
        rp.on_cnp(&P, 2_000_000);
        assert_eq!(rp.rc_bps, LINE / 2);
        assert_eq!(rp.poll_cut(&P), Some(4_001_000));
        rp.handle_timeout(&P, 4_001_000);
        assert!(
            rp.rc_bps < LINE / 2 && rp.rc_bps > LINE / 5,
            "{}",
            rp.rc_bps
        );
        assert_eq!(rp.cuts, 2);
    }

    #[test]
    fn without_cnps_alpha_decays_and_the_rate_recovers_to_line_rate() {
        let mut rp = Rp::new(LINE, 0);
        rp.on_cnp(&P, 0);
        let mut now = 0;
        while let Some(t) = rp.poll_timer() {
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
            rp.on_cnp(&P, i * 5_000_000);
        }
        assert_eq!(rp.rc_bps, P.min_rate_bps);
    }
}
