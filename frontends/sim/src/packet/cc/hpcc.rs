//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
//! 2019, §3 and Algorithm 1) as the artifact runs it (`CC_MODE 3`): every
//! switch egress stamps INT ([`super::IntHop`]) into the data packet, the
//! receiver echoes the stamps, and the sender estimates each hop's
//! normalised inflight
//!
//! `u_j = txRate_j / B_j + min(qlen_j, qlen'_j) / (B_j · T)`
//!
//! from the deltas to the previous stamps of that hop, takes the most
//! loaded hop `U` (and its interval `τ`), smooths
//! `u ← (u · (T − τ) + U · τ) / T` (τ at most `T`), and sets its rate
//!
//! * `R = R_c / (u / η) + W_AI` when `u ≥ η` or after `maxStage`
//!   additive steps (multiplicative, towards the target utilisation η),
//! * `R = R_c + W_AI` otherwise (an additive step),
//!
//! within `[MIN_RATE, line]`; the window is the base window scaled by the
//! rate ([`super::var_window`]). The reference rate `R_c` and the stage
//! are committed once per RTT (the first acknowledgement beyond the
//! `snd_nxt` of the last commit); the acknowledgements in between react
//! from `R_c` without committing (`FAST_REACT 1`). One rate for the path
//! (`MULTI_RATE 0`), INT on every packet (`SAMPLE_FEEDBACK 0`).
//!
//! Follows `rdma-hw.cc`, `HandleAckHp` / `UpdateRateHp` (lines 780-870 of
//! the artifact's `simulation/src/point-to-point/model/rdma-hw.cc`).

use super::{var_window, Ack, Controller, IntHop};

/// HPCC's parameters; [`HpccParams::ARTIFACT`] holds the artifact's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccParams {
    /// Target utilisation η (`U_TARGET`).
    pub eta: f64,
    /// Additive steps before a multiplicative one, `maxStage`
    /// (`MI_THRESH`).
    pub max_stage: u32,
    /// The additive step `W_AI`, bits per second (`RATE_AI`).
    pub rai_bps: u64,
    /// Lowest rate, bits per second (`MIN_RATE`).
    pub min_rate_bps: u64,
    /// React to every acknowledgement, not once per RTT (`FAST_REACT`).
    pub fast_react: bool,
}

impl HpccParams {
    /// The artifact's settings, `simulation/mix/config/8DC-hetero/config_batch.txt`
    /// (the 13-DC file has the same lines): `U_TARGET 0.95` (line 61),
    /// `MI_THRESH 0` (line 62), `RATE_AI 50Mb/s` (line 47), `MIN_RATE
    /// 100Mb/s` (line 49), `FAST_REACT 1` (line 60); `third.cc` hands them
    /// to `RdmaHw` at lines 1505 (`RateAI`), 1512, 1514, 1516 and 1519.
    /// `MULTI_RATE 0` and `SAMPLE_FEEDBACK 0` (lines 64-65) are the only
    /// mode modelled.
    pub const ARTIFACT: HpccParams = HpccParams {
        eta: 0.95,
        max_stage: 0,
        rai_bps: 50_000_000,
        min_rate_bps: 100_000_000,
        fast_react: true,
    };
}

/// One HPCC sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Hpcc {
    params: HpccParams,
    line_bps: u64,
    /// `T`, ps: the base RTT the estimate is smoothed over.
    base_rtt_ps: u64,
    /// The base window, bytes (`None`: `HAS_WIN 0`).
    base_win: Option<u64>,
    /// The rate in force, bits per second.
    rate_bps: u64,
    /// The reference rate `R_c`, bits per second.
    cur_rate_bps: u64,
    stage: u32,
    /// The smoothed normalised inflight `u` (1 at the start).
    u: f64,
    /// `snd_nxt` at the last commit (0: no stamps yet).
    last_update_seq: u64,
    hops: Vec<IntHop>,
}

impl Hpcc {
    /// A sender at line rate with base RTT `T` and base window `base_win`
    /// (the artifact: the largest base RTT and bandwidth-delay product of
    /// any host pair).
    pub fn new(params: HpccParams, line_bps: u64, base_rtt_ps: u64, base_win: Option<u64>) -> Self {
        Hpcc {
            params,
            line_bps,
            base_rtt_ps: base_rtt_ps.max(1),
            base_win,
            rate_bps: line_bps,
            cur_rate_bps: line_bps,
            stage: 0,
            u: 1.0,
            last_update_seq: 0,
            hops: Vec::new(),
        }
    }

    /// The smoothed normalised inflight `u`.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// The reference rate `R_c` of the last commit, bits per second.
    pub fn reference_rate_bps(&self) -> u64 {
        self.cur_rate_bps
    }

    /// The denominator of the queue term, `B_j · T` in bits: the
    /// artifact writes it `B_j · W / maxRate` with `W` the base window.
    fn queue_scale_bits(&self, hop_line_bps: u64) -> f64 {
        match self.base_win {
            Some(w) => hop_line_bps as f64 * (w as f64 * 8.0) / self.line_bps as f64,
            None => hop_line_bps as f64 * self.base_rtt_ps as f64 * 1e-12,
        }
    }

    fn update(&mut self, ack: &Ack<'_>, fast: bool) {
        if self.last_update_seq == 0 {
            // The first stamps: nothing to take a delta from.
            self.hops.clear();
            self.hops.extend_from_slice(ack.hops);
            self.last_update_seq = ack.snd_nxt;
            return;
        }
        let mut max_u = 0.0f64;
        let mut max_tau_ns = 0u64;
        let mut any = false;
        for (j, hop) in ack.hops.iter().enumerate() {
            let Some(prev) = self.hops.get(j).copied() else {
                // A hop never seen before (a longer path): its first stamp.
                self.hops.push(*hop);
                continue;
            };
            let tau_ns = hop.time_ns.saturating_sub(prev.time_ns);
            self.hops[j] = *hop;
            if tau_ns == 0 || hop.line_bps == 0 {
                // No interval to take a rate over (the artifact divides
                // by zero here).
                continue;
            }
            any = true;
            let tx_bps =
                hop.bytes().saturating_sub(prev.bytes()) as f64 * 8.0 / (tau_ns as f64 * 1e-9);
            let q = hop.qlen().min(prev.qlen()) as f64 * 8.0;
            let u = tx_bps / hop.line_bps as f64 + q / self.queue_scale_bits(hop.line_bps);
            if u > max_u {
                max_u = u;
                max_tau_ns = tau_ns;
            }
        }
        self.hops.truncate(ack.hops.len());
        if any {
            let t = self.base_rtt_ps as f64;
            let tau = (max_tau_ns as f64 * 1_000.0).min(t);
            self.u = (self.u * (t - tau) + max_u * tau) / t;
            let max_c = self.u / self.params.eta;
            let (new_rate, new_stage) = if max_c >= 1.0 || self.stage >= self.params.max_stage {
                let cut = if max_c > 0.0 {
                    self.cur_rate_bps as f64 / max_c
                } else {
                    f64::INFINITY
                };
                (cut + self.params.rai_bps as f64, 0)
            } else {
                (
                    self.cur_rate_bps as f64 + self.params.rai_bps as f64,
                    self.stage + 1,
                )
            };
            let new_rate = new_rate
                .min(self.line_bps as f64)
                .max(self.params.min_rate_bps.min(self.line_bps) as f64)
                as u64;
            self.rate_bps = new_rate;
            if !fast {
                self.cur_rate_bps = new_rate;
                self.stage = new_stage;
            }
        }
        if !fast && ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
        }
    }
}

#[cfg(test)]
impl Hpcc {
    /// The sender at `rate_bps` instead of line rate (a late-comer's
    /// start, for the convergence tests).
    pub(crate) fn starting_at(mut self, rate_bps: u64) -> Self {
        self.rate_bps = rate_bps;
        self.cur_rate_bps = rate_bps;
        self
    }
}

impl Controller for Hpcc {
    fn on_ack(&mut self, ack: &Ack<'_>) {
        if ack.seq > self.last_update_seq {
            self.update(ack, false);
        } else if self.params.fast_react {
            self.update(ack, true);
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

    fn ack(now_ps: u64, seq: u64, snd_nxt: u64, hops: &[IntHop]) -> Ack<'_> {
        Ack {
            now_ps,
            seq,
            snd_nxt,
            ecn: false,
            sent_ps: 0,
            hops,
        }
    }

    /// A step in queue depth: the hop runs at line rate throughout, and
    /// its queue goes from empty to about one base window. The reaction
    /// is HPCC's: `U = 1 + min(q, q') / (B·T)` with the smaller of the
    /// two queues, smoothed over `τ / T`, then `R_c · η / u + W_AI`, and
    /// the window the same fraction of the base window.
    #[test]
    fn a_step_in_queue_depth_cuts_the_rate_and_window_by_eta_over_u() {
        let line = 100 * G;
        let t_ps = 10_000_000; // T = 10 µs
        let win = 125_000; // B·T
        let p = HpccParams::ARTIFACT;
        let mut h = Hpcc::new(p, line, t_ps, Some(win));
        // 1.024 µs between stamps at 100 Gbps: 12 800 B, a multiple of
        // the header's 128 B, so the measured rate is the line rate.
        let stamp = |k: u64, q: u64| IntHop::stamp(k * 1_024_000, k * 12_800, q, line);
        h.on_ack(&ack(0, 1_000, 100_000, &[stamp(1, 0)]));
        // Full update: line rate, empty queue → U = 1, u stays 1.
        h.on_ack(&ack(1, 100_001, 200_000, &[stamp(2, 0)]));
        assert!((h.utilisation() - 1.0).abs() < 1e-9);
        let r0 = h.reference_rate_bps();
        // u/η = 1/0.95 > 1: multiplicative, R = line·0.95 + W_AI.
        assert!(
            r0.abs_diff((line as f64 * 0.95) as u64 + p.rai_bps) <= 1,
            "{r0}"
        );
        // The queue steps to one base window.
        let q = win;
        h.on_ack(&ack(2, 200_001, 300_000, &[stamp(3, q)]));
        // min(q, q') = 0: the step is only seen on the next stamp.
        assert!((h.utilisation() - 1.0).abs() < 1e-9);
        let r_before = h.reference_rate_bps();
        h.on_ack(&ack(3, 300_001, 400_000, &[stamp(4, q)]));
        let q_rounded = (q / 80 * 80) as f64;
        let big_u = 1.0 + q_rounded / win as f64;
        let tau = 1_024_000.0 / t_ps as f64;
        let u = 1.0 * (1.0 - tau) + big_u * tau;
        assert!(
            (h.utilisation() - u).abs() < 1e-9,
            "{} vs {u}",
            h.utilisation()
        );
        let r1 = h.reference_rate_bps();
        let expect = (r_before as f64 / (u / 0.95)) as u64 + p.rai_bps;
        assert!(r1.abs_diff(expect) <= 1, "{r1} vs {expect}");
        assert!(r1 < r0);
        assert_eq!(h.rate_bps(), r1);
        assert_eq!(h.window_bytes(), Some(win * r1 / line));
    }

    #[test]
    fn fast_reaction_moves_the_rate_but_not_the_reference() {
        let line = 100 * G;
        let p = HpccParams::ARTIFACT;
        let mut h = Hpcc::new(p, line, 10_000_000, Some(125_000));
        let s = |k: u64, q: u64| IntHop::stamp(k * 1_000_000, k * 12_500, q, line);
        h.on_ack(&ack(0, 1_000, 100_000, &[s(1, 0)]));
        h.on_ack(&ack(1, 100_001, 200_000, &[s(2, 0)]));
        let r0 = h.reference_rate_bps();
        // Acks below the committed snd_nxt react without committing.
        h.on_ack(&ack(2, 150_000, 250_000, &[s(3, 40_000)]));
        h.on_ack(&ack(3, 160_000, 250_000, &[s(4, 40_000)]));
        assert!(h.rate_bps() < r0);
        assert_eq!(h.reference_rate_bps(), r0);
        // Without fast reaction they change nothing.
        let mut slow = Hpcc::new(
            HpccParams {
                fast_react: false,
                ..p
            },
            line,
            10_000_000,
            Some(125_000),
        );
        slow.on_ack(&ack(0, 1_000, 100_000, &[s(1, 0)]));
        slow.on_ack(&ack(1, 100_001, 200_000, &[s(2, 0)]));
        let before = slow.rate_bps();
        slow.on_ack(&ack(2, 150_000, 250_000, &[s(3, 40_000)]));
        slow.on_ack(&ack(3, 160_000, 250_000, &[s(4, 40_000)]));
        assert_eq!(slow.rate_bps(), before);
    }

    /// After a cut, a light hop: with stages left (`maxStage` 5) the step
    /// is additive, `R_c + W_AI`; with the artifact's `maxStage` 0 it is
    /// multiplicative, `R_c · η / u + W_AI`.
    #[test]
    fn below_eta_the_step_is_additive_only_with_stages_left() {
        let line = 100 * G;
        let win = 125_000;
        // 10.24 µs between stamps (τ is capped at T = 10 µs, so u = U):
        // full rate is 128 000 B per interval, half rate 64 000 B.
        let s = |k: u64, bytes: u64, q: u64| IntHop::stamp(k * 10_240_000, bytes, q, line);
        let run = |max_stage: u32| {
            let p = HpccParams {
                max_stage,
                ..HpccParams::ARTIFACT
            };
            let mut h = Hpcc::new(p, line, 10_000_000, Some(win));
            h.on_ack(&ack(0, 1_000, 100_000, &[s(1, 128_000, win)]));
            h.on_ack(&ack(1, 100_001, 200_000, &[s(2, 256_000, win)]));
            let u1 = 1.0 + (win / 80 * 80) as f64 / win as f64;
            assert!((h.utilisation() - u1).abs() < 1e-9);
            let cut = h.reference_rate_bps();
            assert!(cut.abs_diff((line as f64 * 0.95 / u1) as u64 + p.rai_bps) <= 1);
            h.on_ack(&ack(2, 200_001, 300_000, &[s(3, 320_000, 0)]));
            assert!((h.utilisation() - 0.5).abs() < 1e-9);
            (cut, h.reference_rate_bps(), p.rai_bps)
        };
        let (cut, next, rai) = run(5);
        assert_eq!(next, cut + rai);
        let (cut, next, rai) = run(0);
        let expect = (cut as f64 / (0.5 / 0.95)) as u64 + rai;
        assert!(next.abs_diff(expect) <= 1, "{next} vs {expect}");
    }

    #[test]
    fn a_flow_alone_reaches_eta_of_line_rate() {
        let p = HpccParams::ARTIFACT;
        let make = move |_, line, rtt, bdp| Hpcc::new(p, line, rtt, Some(bdp));
        let out = Bottleneck::default().run(&make, &[0], 10_000_000_000);
        let share = out.throughput(0) / out.capacity_bps;
        // HPCC aims at η = 0.95 of the bottleneck.
        assert!((0.9..=1.0).contains(&share), "{share}");
        assert!(out.max_queue_bytes < 30_000, "{}", out.max_queue_bytes);
    }

    /// A burst of cross traffic (50 KB, almost four bandwidth-delay
    /// products) lands in the bottleneck queue of a flow running at η of
    /// line rate. HPCC's window (one BDP at line rate) stops the flow
    /// from piling more than a BDP behind the burst, and the stamps of
    /// its packets queued behind the burst carry that queue: `U` rises,
    /// the rate falls well below η of the line rate within a few RTTs,
    /// and once the queue has drained η and the additive step bring it
    /// back.
    #[test]
    fn a_burst_in_the_queue_cuts_the_rate_through_int_and_it_recovers() {
        let p = HpccParams::ARTIFACT;
        let make = move |_, line, rtt, bdp| Hpcc::new(p, line, rtt, Some(bdp));
        let step = 5_000_000_000; // 5 ms
        let burst = 50_000;
        let bed = Bottleneck {
            step: Some((step, burst)),
            ..Bottleneck::default()
        };
        let out = bed.run(&make, &[0], 15_000_000_000);
        let c = out.capacity_bps as u64;
        let before = out.rate_before(step);
        assert!(before > c * 9 / 10, "{before}");
        // The queue drains in 40 µs; the reaction is within ~100 µs.
        let low = out.min_rate(step, step + 100_000_000);
        assert!(low < c * 7 / 10, "{low}");
        // The window: at most one BDP (13 500 B at 10 Gbps and 10.8 µs)
        // and a packet queued on top of the burst.
        assert!(
            out.max_queue_bytes <= burst + 13_500 + 1_000,
            "{}",
            out.max_queue_bytes
        );
        assert!(out.throughput(0) / out.capacity_bps > 0.9);
    }

    #[test]
    fn two_flows_converge_to_fair_shares() {
        let p = HpccParams::ARTIFACT;
        // The late-comer starts at a tenth of the line rate, the first
        // flow holding the link: they must meet in the middle.
        let make = move |i: usize, line: u64, rtt, bdp| {
            let cc = Hpcc::new(p, line, rtt, Some(bdp));
            if i == 1 {
                cc.starting_at(line / 10)
            } else {
                cc
            }
        };
        Bottleneck::default().assert_fair_shares(&make, 0.88);
    }
}
