//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015, §4 and Algorithm 1) as the artifact runs it
//! (`CC_MODE 7`): the data packet carries its send time, the
//! acknowledgement echoes it, and once per RTT (the first acknowledgement
//! beyond the `snd_nxt` of the last update) the sender takes the new RTT
//! sample and
//!
//! * smooths the RTT difference `d ← (1 − α)·d + α·(rtt − rtt_prev)` and
//!   normalises it, `gradient = d / minRTT`;
//! * below `T_low`, adds `δ` (`RATE_AI`; `RATE_HAI` from the sixth
//!   consecutive increase on);
//! * above `T_high`, cuts to `R · (1 − β·(1 − T_high / rtt))`;
//! * in between, adds `δ` if `gradient ≤ 0`, else cuts to
//!   `R · max(0, 1 − β·gradient)`;
//!
//! within `[MIN_RATE, line]`. The window every artifact run has is the
//! base window scaled by the rate ([`super::var_window`]).
//!
//! Follows `rdma-hw.cc`, `HandleAckTimely` / `UpdateRateTimely` (lines
//! 960-1030 of the artifact's `simulation/src/point-to-point/model/rdma-hw.cc`),
//! including its weighting (the new difference gets `α`).

use super::{var_window, Ack, Controller};

/// TIMELY's parameters; [`TimelyParams::ARTIFACT`] holds the artifact's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyParams {
    /// EWMA weight of a new RTT difference, `α`.
    pub alpha: f64,
    /// Multiplicative decrease factor `β`.
    pub beta: f64,
    /// Below this RTT always increase, ps (`T_low`).
    pub t_low_ps: u64,
    /// Above this RTT always decrease, ps (`T_high`).
    pub t_high_ps: u64,
    /// The gradient's normalisation, ps (`minRTT`).
    pub min_rtt_ps: u64,
    /// Additive step `δ`, bits per second (`RATE_AI`).
    pub rai_bps: u64,
    /// Hyper step, bits per second (`RATE_HAI`).
    pub rhai_bps: u64,
    /// Consecutive increases before the hyper step.
    pub hai_after: u32,
    /// Lowest rate, bits per second (`MIN_RATE`).
    pub min_rate_bps: u64,
}

impl TimelyParams {
    /// The artifact's settings. Its configuration sets no TIMELY key, so
    /// `α`, `β`, `T_low`, `T_high` and `minRTT` are `RdmaHw`'s attribute
    /// defaults (`simulation/src/point-to-point/model/rdma-hw.cc` lines
    /// 142-165: `TimelyAlpha 0.875`, `TimelyBeta 0.8`, `TimelyTLow 50000`
    /// ns, `TimelyTHigh 500000` ns, `TimelyMinRtt 20000` ns); the steps are
    /// `RATE_AI 50Mb/s` and `RATE_HAI 100Mb/s` and the floor `MIN_RATE
    /// 100Mb/s` (`simulation/mix/config/8DC-hetero/config_batch.txt` lines
    /// 47-49, `third.cc` lines 1505-1506 and 1512); the hyper step from
    /// the sixth increase is `rdma-hw.cc` line 997 (`m_incStage < 5`).
    ///
    /// With these thresholds every inter-DC RTT of the artifact's
    /// topologies (2 ms and more) is above `T_high`: TIMELY's artifact
    /// runs cut on every update, as ours do.
    pub const ARTIFACT: TimelyParams = TimelyParams {
        alpha: 0.875,
        beta: 0.8,
        t_low_ps: 50_000_000,
        t_high_ps: 500_000_000,
        min_rtt_ps: 20_000_000,
        rai_bps: 50_000_000,
        rhai_bps: 100_000_000,
        hai_after: 5,
        min_rate_bps: 100_000_000,
    };
}

/// One TIMELY sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Timely {
    params: TimelyParams,
    line_bps: u64,
    base_win: Option<u64>,
    rate_bps: u64,
    stage: u32,
    last_rtt_ps: u64,
    /// The smoothed RTT difference, ps.
    rtt_diff_ps: f64,
    last_update_seq: u64,
}

impl Timely {
    /// A sender at line rate with base window `base_win`.
    pub fn new(params: TimelyParams, line_bps: u64, base_win: Option<u64>) -> Self {
        Timely {
            params,
            line_bps,
            base_win,
            rate_bps: line_bps,
            stage: 0,
            last_rtt_ps: 0,
            rtt_diff_ps: 0.0,
            last_update_seq: 0,
        }
    }

    /// The smoothed RTT difference, ps.
    pub fn rtt_diff_ps(&self) -> f64 {
        self.rtt_diff_ps
    }

    fn update(&mut self, ack: &Ack<'_>) {
        let p = &self.params;
        let rtt = ack.now_ps.saturating_sub(ack.sent_ps);
        if self.last_update_seq != 0 {
            let new_diff = rtt as f64 - self.last_rtt_ps as f64;
            let diff = (1.0 - p.alpha) * self.rtt_diff_ps + p.alpha * new_diff;
            let gradient = diff / p.min_rtt_ps.max(1) as f64;
            let cut = if rtt < p.t_low_ps {
                None
            } else if rtt > p.t_high_ps {
                Some(1.0 - p.beta * (1.0 - p.t_high_ps as f64 / rtt as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - p.beta * gradient).max(0.0))
            };
            let floor = p.min_rate_bps.min(self.line_bps);
            match cut {
                None => {
                    let step = if self.stage < p.hai_after {
                        p.rai_bps
                    } else {
                        p.rhai_bps
                    };
                    self.rate_bps = self.rate_bps.saturating_add(step).min(self.line_bps);
                    self.stage += 1;
                }
                Some(c) => {
                    self.rate_bps = ((self.rate_bps as f64 * c) as u64).max(floor);
                    self.stage = 0;
                }
            }
            self.rtt_diff_ps = diff;
        }
        if ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
            self.last_rtt_ps = rtt;
        }
    }
}

#[cfg(test)]
impl Timely {
    /// The sender at `rate_bps` instead of line rate (a late-comer's
    /// start, for the convergence tests).
    pub(crate) fn starting_at(mut self, rate_bps: u64) -> Self {
        self.rate_bps = rate_bps;
        self
    }
}

impl Controller for Timely {
    fn on_ack(&mut self, ack: &Ack<'_>) {
        // The artifact's fast reaction for TIMELY is empty
        // (`FastReactTimely`): only the once-per-RTT update acts.
        if ack.seq > self.last_update_seq {
            self.update(ack);
        }
    }

    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    fn window_bytes(&self) -> Option<u64> {
        var_window(self.base_win, self.rate_bps, self.line_bps)
    }
}

#[cfg(test)]
mod test {
    use super::super::testbed::Bottleneck;
    use super::*;

    const G: u64 = 1_000_000_000;
    const US: u64 = 1_000_000;

    /// One update per call: each acknowledgement is beyond the last
    /// update's `snd_nxt`.
    struct Driver {
        t: Timely,
        seq: u64,
        now: u64,
    }

    impl Driver {
        fn new(p: TimelyParams) -> Self {
            Driver {
                t: Timely::new(p, 100 * G, None),
                seq: 0,
                now: 1_000_000 * US,
            }
        }

        fn rtt(&mut self, rtt_ps: u64) -> u64 {
            self.seq += 1_000;
            self.now += 100 * US;
            let ack = Ack {
                now_ps: self.now,
                seq: self.seq,
                snd_nxt: self.seq + 1,
                ecn: false,
                sent_ps: self.now - rtt_ps,
                hops: &[],
            };
            self.t.on_ack(&ack);
            self.t.rate_bps()
        }
    }

    /// A step in queue depth is a step in RTT: TIMELY answers the
    /// gradient, `R·(1 − β·α·Δ/minRTT)`, then (RTT flat again, the
    /// smoothed difference decaying by `1 − α`) the smaller cut
    /// `1 − β·(1 − α)·α·Δ/minRTT`, and increases once the smoothed
    /// difference is gone... which it never quite is: it stays positive.
    #[test]
    fn a_step_in_rtt_cuts_by_the_gradient() {
        let p = TimelyParams::ARTIFACT;
        let mut d = Driver::new(p);
        // From the first sample on, a flat 60 µs RTT (between T_low and
        // T_high): gradient 0, additive steps (capped at line rate).
        d.rtt(60 * US);
        assert_eq!(d.rtt(60 * US), 100 * G);
        // RTT steps up by 4 µs (4 µs of queue).
        let before = d.t.rate_bps();
        let after = d.rtt(64 * US);
        let grad = p.alpha * 4.0 / 20.0;
        let expect = (before as f64 * (1.0 - p.beta * grad)) as u64;
        assert!(after.abs_diff(expect) <= 1, "{after} vs {expect}");
        assert!((d.t.rtt_diff_ps() - p.alpha * 4.0 * US as f64).abs() < 1e-3);
        // Flat again: the smoothed difference is (1 − α) of it, still > 0.
        let again = d.rtt(64 * US);
        let grad2 = (1.0 - p.alpha) * grad;
        let expect2 = (after as f64 * (1.0 - p.beta * grad2)) as u64;
        assert!(again.abs_diff(expect2) <= 1, "{again} vs {expect2}");
        // RTT falls back: negative gradient, an additive step.
        let down = d.rtt(60 * US);
        assert_eq!(down, again + p.rai_bps);
    }

    #[test]
    fn the_thresholds_override_the_gradient() {
        let p = TimelyParams::ARTIFACT;
        // Below T_low: increase even with a rising RTT.
        let mut d = Driver::new(p);
        d.rtt(10 * US);
        let r = d.rtt(10 * US);
        assert_eq!(d.rtt(40 * US), (r + p.rai_bps).min(100 * G));
        // Above T_high: cut by β·(1 − T_high/rtt) even with a falling RTT.
        let mut d = Driver::new(p);
        d.rtt(2_000 * US);
        let r = d.t.rate_bps();
        let cut = d.rtt(1_000 * US);
        let expect = (r as f64 * (1.0 - 0.8 * (1.0 - 500.0 / 1_000.0))) as u64;
        assert!(cut.abs_diff(expect) <= 1, "{cut} vs {expect}");
        // A wide-area RTT keeps cutting down to MIN_RATE.
        for _ in 0..40 {
            d.rtt(20_000 * US);
        }
        assert_eq!(d.t.rate_bps(), p.min_rate_bps);
    }

    #[test]
    fn increases_turn_hyper_after_five_steps() {
        let p = TimelyParams::ARTIFACT;
        let mut d = Driver::new(p);
        d.rtt(1_000 * US);
        // Cut far below line rate, then RTT under T_low: 5 steps of
        // RATE_AI, then RATE_HAI.
        let low = d.rtt(1_000 * US);
        let rates: Vec<u64> = (0..8).map(|_| d.rtt(10 * US)).collect();
        let steps: Vec<u64> = std::iter::once(low)
            .chain(rates.iter().copied())
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        assert_eq!(
            steps,
            [50, 50, 50, 50, 50, 100, 100, 100].map(|m| m * 1_000_000)
        );
    }

    #[test]
    fn a_flow_alone_reaches_line_rate() {
        let p = TimelyParams::ARTIFACT;
        let make = move |_, line, _rtt, bdp| Timely::new(p, line, Some(bdp));
        let out = Bottleneck::default().run(&make, &[0], 10_000_000_000);
        let share = out.throughput(0) / out.capacity_bps;
        assert!(share > 0.95, "{share}");
    }

    /// A burst of cross traffic (50 KB: 40 µs of queue at 10 Gbps) takes
    /// the RTT from about 11 µs (below `T_low`, where TIMELY only adds)
    /// to about 50 µs: the gradient is positive and the rate is cut.
    #[test]
    fn a_burst_in_the_queue_cuts_the_rate_by_its_gradient() {
        let p = TimelyParams::ARTIFACT;
        let make = move |_, line, _rtt, _bdp| Timely::new(p, line, None);
        let step = 5_000_000_000;
        let bed = Bottleneck {
            step: Some((step, 50_000)),
            ..Bottleneck::default()
        };
        let out = bed.run(&make, &[0], 8_000_000_000);
        let c = out.capacity_bps as u64;
        assert_eq!(out.rate_before(step), c);
        let low = out.min_rate(step, step + 200_000_000);
        assert!(low < c * 3 / 4, "{low}");
        // Below T_low again, it climbs back by RATE_AI / RATE_HAI steps.
        assert!(out.rate_before(8_000_000_000) > low);
    }

    #[test]
    fn two_flows_converge_to_fair_shares() {
        // No window: the rate control alone must share the link.
        let p = TimelyParams::ARTIFACT;
        // The late-comer starts at a tenth of the line rate, the first
        // flow holding the link: they must meet in the middle.
        let make = move |i: usize, line: u64, _rtt, _bdp| {
            let cc = Timely::new(p, line, None);
            if i == 1 {
                cc.starting_at(line / 10)
            } else {
                cc
            }
        };
        Bottleneck::default().assert_fair_shares(&make, 0.8);
    }
}
