//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3)
//! as the artifact runs it on RDMA queue pairs (`CC_MODE 8`, a rate-based
//! DCTCP): switches mark ECN (the RED curves of the configuration), the
//! receiver echoes the mark on the acknowledgement, and the sender
//!
//! * counts marked acknowledgements; once per window (the first
//!   acknowledgement beyond the `snd_nxt` of the last update) it updates
//!   `α ← (1 − g)·α + g·F` with `F` the marked fraction of the window's
//!   packets, and, if it is not cutting, adds `DCTCP_RATE_AI` to its rate;
//! * on a marked acknowledgement outside a cut window (CWR), cuts its
//!   rate to `R·(1 − α/2)` and ignores further marks until the
//!   acknowledgements pass the `snd_nxt` of the cut;
//!
//! within `[MIN_RATE, line]`; `α` starts at 1. The window every artifact
//! run has is the base window scaled by the rate ([`super::var_window`]).
//!
//! Follows `rdma-hw.cc`, `HandleAckDctcp` (lines 1035-1087 of the
//! artifact's `simulation/src/point-to-point/model/rdma-hw.cc`).

use super::{var_window, Ack, Controller};

/// DCTCP's parameters; [`DctcpParams::ARTIFACT`] holds the artifact's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// `α`'s EWMA gain `g` (`EWMA_GAIN`).
    pub g: f64,
    /// Additive increase per window, bits per second (`DCTCP_RATE_AI`).
    pub rai_bps: u64,
    /// Lowest rate, bits per second (`MIN_RATE`).
    pub min_rate_bps: u64,
    /// Payload bytes per packet, to count a window's packets (`Mtu`).
    pub mtu_bytes: u64,
}

impl DctcpParams {
    /// The artifact's settings, `simulation/mix/config/8DC-hetero/config_batch.txt`:
    /// `EWMA_GAIN 0.00390625` (line 45; `third.cc` line 1504),
    /// `DCTCP_RATE_AI 1000Mb/s` (line 50; `third.cc` line 1521), `MIN_RATE
    /// 100Mb/s` (line 49), `PACKET_PAYLOAD_SIZE 1000` (line 7; `third.cc`
    /// line 1513 makes it `RdmaHw`'s `Mtu`).
    pub const ARTIFACT: DctcpParams = DctcpParams {
        g: 1.0 / 256.0,
        rai_bps: 1_000_000_000,
        min_rate_bps: 100_000_000,
        mtu_bytes: 1_000,
    };
}

/// One DCTCP sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Dctcp {
    params: DctcpParams,
    line_bps: u64,
    base_win: Option<u64>,
    rate_bps: u64,
    /// The marked-fraction estimate `α` (1 at the start).
    alpha: f64,
    marked: u64,
    /// The window's packets `F` is taken over.
    batch: u64,
    last_update_seq: u64,
    /// In a cut window, until the acknowledgements pass `high_seq`.
    cwr: bool,
    high_seq: u64,
}

impl Dctcp {
    /// A sender at line rate with base window `base_win`.
    pub fn new(params: DctcpParams, line_bps: u64, base_win: Option<u64>) -> Self {
        Dctcp {
            params,
            line_bps,
            base_win,
            rate_bps: line_bps,
            alpha: 1.0,
            marked: 0,
            batch: 0,
            last_update_seq: 0,
            cwr: false,
            high_seq: 0,
        }
    }

    /// The marked-fraction estimate `α`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
impl Dctcp {
    /// The sender at `rate_bps` instead of line rate (a late-comer's
    /// start, for the convergence tests).
    pub(crate) fn starting_at(mut self, rate_bps: u64) -> Self {
        self.rate_bps = rate_bps;
        self
    }
}

impl Controller for Dctcp {
    fn on_ack(&mut self, ack: &Ack<'_>) {
        let p = self.params;
        let mtu = p.mtu_bytes.max(1);
        self.marked += u64::from(ack.ecn);
        let mut new_window = false;
        if ack.seq > self.last_update_seq {
            new_window = true;
            if self.last_update_seq == 0 {
                self.batch = ack.snd_nxt / mtu + 1;
            } else {
                let frac = (self.marked as f64 / self.batch.max(1) as f64).min(1.0);
                self.alpha = (1.0 - p.g) * self.alpha + p.g * frac;
                self.marked = 0;
                self.batch = ack.snd_nxt.saturating_sub(ack.seq) / mtu + 1;
            }
            self.last_update_seq = ack.snd_nxt;
        }
        if self.cwr && ack.seq > self.high_seq {
            self.cwr = false;
        }
        let floor = p.min_rate_bps.min(self.line_bps);
        if ack.ecn && !self.cwr {
            let cut = self.rate_bps as f64 * (1.0 - self.alpha / 2.0);
            self.rate_bps = (cut as u64).max(floor);
            self.cwr = true;
            self.high_seq = ack.snd_nxt;
        }
        if !self.cwr && new_window {
            self.rate_bps = self.rate_bps.saturating_add(p.rai_bps).min(self.line_bps);
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

    fn ack(seq: u64, snd_nxt: u64, ecn: bool) -> Ack<'static> {
        Ack {
            now_ps: seq,
            seq,
            snd_nxt,
            ecn,
            sent_ps: 0,
            hops: &[],
        }
    }

    /// Windows of ten packets, `marks` of each marked: `α` follows the
    /// marked fraction with gain `g`, and the rate is cut by `α/2` at most
    /// once per window.
    fn windows(d: &mut Dctcp, n: usize, marks: u64) {
        for _ in 0..n {
            let base = d.last_update_seq;
            for k in 1..=10u64 {
                d.on_ack(&ack(
                    base + k * 1_000,
                    base + 10_000 + k * 1_000,
                    k <= marks,
                ));
            }
        }
    }

    #[test]
    fn a_step_in_queue_depth_raises_alpha_by_the_marked_fraction() {
        let p = DctcpParams::ARTIFACT;
        let mut d = Dctcp::new(p, 100 * G, None);
        // Unmarked windows: α decays by (1 − g) per window.
        d.on_ack(&ack(1_000, 10_000, false));
        windows(&mut d, 100, 0);
        let a0 = d.alpha();
        assert!((a0 - (1.0 - p.g).powi(100)).abs() < 0.01, "{a0}");
        assert_eq!(d.rate_bps(), 100 * G);
        // The queue steps above K: every packet marked. The window's first
        // acknowledgement counts its mark, updates α (its mark is the
        // window before's only one: F = 1/11, that window's 11 packets),
        // then cuts by α/2 and opens a cut window; the rest of the window
        // does not cut.
        let before = d.rate_bps();
        windows(&mut d, 1, 10);
        let a1 = d.alpha();
        assert!((a1 - ((1.0 - p.g) * a0 + p.g / 11.0)).abs() < 1e-12);
        let once = (before as f64 * (1.0 - a1 / 2.0)) as u64;
        assert!(
            d.rate_bps().abs_diff(once) <= 1,
            "{} vs {once}",
            d.rate_bps()
        );
        // α's update at the next window boundary takes the marked
        // fraction of the window: 10 marks (9, and the boundary
        // acknowledgement's own, counted first as the artifact counts it)
        // over its 11 packets (`(snd_nxt − seq) / mtu + 1`).
        windows(&mut d, 1, 10);
        let expect = (1.0 - p.g) * a1 + p.g * 10.0 / 11.0;
        assert!(
            (d.alpha() - expect).abs() < 1e-12,
            "{} vs {expect}",
            d.alpha()
        );
        // A standing queue keeps every window's fraction at F = 10/11: α
        // closes on F by a factor 1 − g per window.
        let a2 = d.alpha();
        windows(&mut d, 50, 10);
        let f = 10.0 / 11.0;
        let expect = f + (a2 - f) * (1.0 - p.g).powi(50);
        assert!(
            (d.alpha() - expect).abs() < 1e-9,
            "{} vs {expect}",
            d.alpha()
        );
        assert!(d.alpha() > a0 + 0.03, "{} vs {a0}", d.alpha());
    }

    #[test]
    fn the_first_mark_halves_the_rate() {
        let mut d = Dctcp::new(DctcpParams::ARTIFACT, 100 * G, None);
        d.on_ack(&ack(1_000, 10_000, true));
        assert_eq!(d.rate_bps(), 50 * G);
        // Marks inside the cut window do not cut again.
        d.on_ack(&ack(2_000, 11_000, true));
        d.on_ack(&ack(9_000, 18_000, true));
        assert_eq!(d.rate_bps(), 50 * G);
        // Past it, the next mark cuts again (α is still about 1).
        d.on_ack(&ack(10_001, 20_000, true));
        assert!(d.rate_bps() <= 25 * G + G / 10, "{}", d.rate_bps());
    }

    #[test]
    fn unmarked_windows_add_the_additive_step() {
        let p = DctcpParams::ARTIFACT;
        let mut d = Dctcp::new(p, 100 * G, None);
        d.on_ack(&ack(1_000, 10_000, true));
        let cut = d.rate_bps();
        d.on_ack(&ack(10_001, 20_000, false));
        assert_eq!(d.rate_bps(), cut + p.rai_bps);
        d.on_ack(&ack(15_000, 25_000, false));
        assert_eq!(d.rate_bps(), cut + p.rai_bps, "one step per window");
        d.on_ack(&ack(20_001, 30_000, false));
        assert_eq!(d.rate_bps(), cut + 2 * p.rai_bps);
    }

    #[test]
    fn a_flow_alone_reaches_line_rate() {
        let p = DctcpParams::ARTIFACT;
        let make = move |_, line, _rtt, bdp| Dctcp::new(p, line, Some(bdp));
        let out = Bottleneck::default().run(&make, &[0], 10_000_000_000);
        let share = out.throughput(0) / out.capacity_bps;
        assert!(share > 0.95, "{share}");
    }

    #[test]
    fn two_flows_converge_to_fair_shares() {
        let p = DctcpParams::ARTIFACT;
        // The late-comer starts at a tenth of the line rate, the first
        // flow holding the link: they must meet in the middle.
        let make = move |i: usize, line: u64, _rtt, _bdp| {
            let cc = Dctcp::new(p, line, None);
            if i == 1 {
                cc.starting_at(line / 10)
            } else {
                cc
            }
        };
        Bottleneck::default().assert_fair_shares(&make, 0.9);
    }
}
