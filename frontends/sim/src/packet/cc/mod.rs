//! The senders' congestion controls besides DCQCN ([`super::dcqcn`]) that
//! the artifact's Figure 10 compares (`CC_MODE` 3, 7 and 8 of its
//! `simulation/scratch/third.cc`, lines 947-958): [`hpcc`] (in-network
//! telemetry), [`timely`] (RTT gradient) and [`dctcp`] (ECN fraction).
//!
//! Each is written from the public descriptions (the HPCC, TIMELY and
//! DCTCP papers) and the artifact's `RdmaHw`
//! (`simulation/src/point-to-point/model/rdma-hw.cc`, the HPCC authors'
//! NS-3 code the artifact builds on), whose per-acknowledgement
//! behaviour it follows, not copied. Every parameter set `ARTIFACT` cites
//! the artifact's file and line.
//!
//! The controllers are sans-IO: the engine hands each acknowledgement in
//! as an [`Ack`] (time, sequence numbers, the echoed ECN mark, the data
//! packet's send time, its INT stamps) and reads back the pacing rate and
//! the window ([`Controller`]). None has a timer. Time is integer
//! picoseconds, rates integer bits per second, sizes bytes.
//!
//! # The window every artifact run has
//!
//! The artifact's configuration sets `HAS_WIN 1`, `GLOBAL_T 1` and
//! `VAR_WIN 1` (`simulation/mix/config/8DC-hetero/config_batch.txt`, lines
//! 57-59): every queue pair, whatever its congestion control, gets the
//! largest bandwidth-delay product of any host pair as its window
//! (`third.cc` line 228 and lines 1548-1578) and the largest base RTT as
//! its `T`, and the window in force is that window scaled by the current
//! rate over the line rate (`rdma-queue-pair.cc`, `GetWin`): see
//! [`var_window`].

pub mod dctcp;
pub mod hpcc;
pub mod timely;

#[cfg(test)]
mod engine;
#[cfg(test)]
mod testbed;

use std::fmt;
use std::str::FromStr;

/// The congestion control of every sender of a run (`--cc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcKind {
    /// DCQCN ([`super::dcqcn`]), the artifact's `CC_MODE 1`.
    #[default]
    Dcqcn,
    /// HPCC ([`hpcc`]), `CC_MODE 3`.
    Hpcc,
    /// TIMELY ([`timely`]), `CC_MODE 7`.
    Timely,
    /// DCTCP ([`dctcp`]), `CC_MODE 8`.
    Dctcp,
}

impl CcKind {
    /// Every kind, in the artifact's `CC_MODE` order.
    pub const ALL: [CcKind; 4] = [CcKind::Dcqcn, CcKind::Hpcc, CcKind::Timely, CcKind::Dctcp];

    /// The name `--cc` takes and the artifact's output files carry
    /// (`fct_<name>.txt`).
    pub const fn name(self) -> &'static str {
        match self {
            CcKind::Dcqcn => "dcqcn",
            CcKind::Hpcc => "hpcc",
            CcKind::Timely => "timely",
            CcKind::Dctcp => "dctcp",
        }
    }

    /// The artifact's `CC_MODE` number (`third.cc` lines 947-958).
    pub const fn artifact_mode(self) -> u32 {
        match self {
            CcKind::Dcqcn => 1,
            CcKind::Hpcc => 3,
            CcKind::Timely => 7,
            CcKind::Dctcp => 8,
        }
    }

    /// Whether switches stamp INT at every egress for this control (only
    /// HPCC: `IntHeader::mode` is `NORMAL` for `CC_MODE 3`, `third.cc`
    /// lines 1162-1170).
    pub const fn stamps_int(self) -> bool {
        matches!(self, CcKind::Hpcc)
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--cc` named a control the model does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCc(pub String);

impl fmt::Display for UnknownCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown congestion control `{}` (expected dcqcn, hpcc, timely or dctcp)",
            self.0
        )
    }
}

impl std::error::Error for UnknownCc {}

impl FromStr for CcKind {
    type Err = UnknownCc;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CcKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownCc(s.to_string()))
    }
}

/// One switch egress's in-network telemetry, as HPCC's INT header carries
/// it (`simulation/src/network/utils/int-header.h`, `IntHop`): when the
/// packet left, the port's transmitted bytes before it, the port's queue
/// behind it, and the port's line rate.
///
/// The byte and queue counts are kept in the header's units (128 B and
/// 80 B, `INT_MULTI 1`), so the rounding is the artifact's. The header's
/// time (24 bits, ns) and byte (20 bits) fields wrap and its deltas undo
/// one wrap; HPCC only takes deltas between consecutive packets, so full
/// widths give the same numbers and are kept here. The queue field is 17
/// bits wide and is read as it is, not as a delta: a queue of 2^17 units
/// (10 485 760 bytes) or more reads modulo that, as the artifact's does
/// (`int-header.h` lines 14 and 44, `qlen = _qlen / (qlenUnit * multi)`
/// into the bit field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet left the port, ns.
    pub time_ns: u64,
    /// The port's transmitted bytes before this packet, in 128 B units.
    pub bytes_units: u64,
    /// The port's queued bytes as the packet left, in 80 B units.
    pub qlen_units: u64,
    /// The port's line rate, bits per second.
    pub line_bps: u64,
}

/// The INT header's unit of transmitted bytes (`int-header.h`, `byteUnit`).
pub const INT_BYTE_UNIT: u64 = 128;
/// The INT header's unit of queue length (`int-header.h`, `qlenUnit`).
pub const INT_QLEN_UNIT: u64 = 80;
/// The INT header's queue field width, bits (`int-header.h`, `qlenWidth`).
pub const INT_QLEN_BITS: u32 = 17;

impl IntHop {
    /// The stamp a switch egress writes as it dequeues a packet
    /// (`switch-node.cc`, `SwitchNotifyDequeue`: `PushHop(now, txBytes,
    /// queue bytes, rate)`, then `txBytes += size`).
    pub const fn stamp(now_ps: u64, tx_bytes: u64, qlen_bytes: u64, line_bps: u64) -> Self {
        IntHop {
            time_ns: now_ps / 1_000,
            bytes_units: tx_bytes / INT_BYTE_UNIT,
            qlen_units: (qlen_bytes / INT_QLEN_UNIT) & ((1 << INT_QLEN_BITS) - 1),
            line_bps,
        }
    }

    /// Transmitted bytes, header-rounded.
    pub const fn bytes(&self) -> u64 {
        self.bytes_units * INT_BYTE_UNIT
    }

    /// Queue length in bytes, header-rounded.
    pub const fn qlen(&self) -> u64 {
        self.qlen_units * INT_QLEN_UNIT
    }
}

/// What one acknowledgement tells its sender.
#[derive(Clone, Copy, Debug)]
pub struct Ack<'a> {
    /// When the acknowledgement arrives, ps.
    pub now_ps: u64,
    /// The acknowledgement's sequence number: bytes received in order.
    pub seq: u64,
    /// The sender's next sequence number (bytes) as it arrives.
    pub snd_nxt: u64,
    /// The acknowledged packet carried an ECN mark (the ACK's CNP flag).
    pub ecn: bool,
    /// When the acknowledged packet was sent, ps (TIMELY's timestamp,
    /// `IntHeader::TS`).
    pub sent_ps: u64,
    /// The INT stamps of the acknowledged packet, one per switch egress
    /// in path order (HPCC; empty otherwise).
    pub hops: &'a [IntHop],
}

/// A sender's rate and window control, driven by acknowledgements.
pub trait Controller {
    /// Takes one acknowledgement (bounded work; no timers).
    fn on_ack(&mut self, ack: &Ack<'_>);
    /// The pacing rate now, bits per second (`RATE_BOUND 1`: packets
    /// leave at most at this rate).
    #[must_use]
    fn rate_bps(&self) -> u64;
    /// Bytes the sender may have unacknowledged now (`None`: no window).
    #[must_use]
    fn window_bytes(&self) -> Option<u64>;
}

/// The artifact's variable window: the base window scaled by the current
/// rate over the line rate, at least one byte (`rdma-queue-pair.cc`,
/// `GetWin` with `VAR_WIN 1`); `None` without a base window (`HAS_WIN 0`).
#[must_use]
pub fn var_window(base: Option<u64>, rate_bps: u64, line_bps: u64) -> Option<u64> {
    let base = base?;
    let w = u128::from(base) * u128::from(rate_bps) / u128::from(line_bps.max(1));
    Some(u64::try_from(w).unwrap_or(u64::MAX).max(1))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn every_kind_parses_from_its_name_and_nothing_else_does() {
        for k in CcKind::ALL {
            assert_eq!(k.name().parse::<CcKind>(), Ok(k));
            assert_eq!(k.name().to_uppercase().parse::<CcKind>(), Ok(k));
        }
        let err = "cubic".parse::<CcKind>().unwrap_err();
        assert!(err.to_string().contains("`cubic`"), "{err}");
        assert_eq!(CcKind::default(), CcKind::Dcqcn);
        assert_eq!(
            CcKind::ALL.map(CcKind::artifact_mode),
            [1, 3, 7, 8],
            "third.cc's CC_MODE numbers"
        );
        assert!(CcKind::Hpcc.stamps_int() && !CcKind::Dctcp.stamps_int());
    }

    #[test]
    fn the_window_follows_the_rate() {
        assert_eq!(var_window(None, 5, 10), None);
        assert_eq!(var_window(Some(1_000), 50, 100), Some(500));
        assert_eq!(var_window(Some(1_000), 0, 100), Some(1));
        assert_eq!(var_window(Some(u64::MAX), 100, 100), Some(u64::MAX));
    }

    /// Any acknowledgement stream (arbitrary times, sequence numbers,
    /// marks, RTTs and INT stamps, in any order) keeps every controller's
    /// rate within `[min(MIN_RATE, line), line]` and its window within
    /// `[1, base window]`, and never panics.
    #[test]
    fn no_acknowledgement_stream_takes_a_rate_out_of_bounds() {
        use quickcheck::{quickcheck, TestResult};
        type Step = (u32, u32, u16, bool, u32, u32, u16);
        fn check(line_gbps: u8, steps: Vec<Step>) -> TestResult {
            if line_gbps == 0 {
                return TestResult::discard();
            }
            let line = u64::from(line_gbps) * 1_000_000_000;
            let win = 100_000;
            let mut ccs: Vec<Box<dyn Controller>> = vec![
                Box::new(hpcc::Hpcc::new(
                    hpcc::HpccParams::ARTIFACT,
                    line,
                    10_000_000,
                    Some(win),
                )),
                Box::new(timely::Timely::new(
                    timely::TimelyParams::ARTIFACT,
                    line,
                    Some(win),
                )),
                Box::new(dctcp::Dctcp::new(
                    dctcp::DctcpParams::ARTIFACT,
                    line,
                    Some(win),
                )),
            ];
            let floor = 100_000_000u64.min(line);
            for (now, seq, ahead, ecn, rtt, bytes, q) in steps {
                let now_ps = u64::from(now) * 1_000;
                let hops = [IntHop::stamp(
                    now_ps,
                    u64::from(bytes),
                    u64::from(q) * 80,
                    line,
                )];
                let ack = Ack {
                    now_ps,
                    seq: u64::from(seq),
                    snd_nxt: u64::from(seq) + u64::from(ahead),
                    ecn,
                    sent_ps: now_ps.saturating_sub(u64::from(rtt) * 1_000),
                    hops: &hops,
                };
                for cc in &mut ccs {
                    cc.on_ack(&ack);
                    let r = cc.rate_bps();
                    let w = cc.window_bytes().unwrap_or(0);
                    if r < floor || r > line || w == 0 || w > win {
                        return TestResult::failed();
                    }
                }
            }
            TestResult::passed()
        }
        quickcheck(check as fn(u8, Vec<Step>) -> TestResult);
    }

    #[test]
    fn int_stamps_round_down_to_the_headers_units() {
        let h = IntHop::stamp(12_345_678, 1_000, 159, 100_000_000_000);
        assert_eq!(h.time_ns, 12_345);
        assert_eq!(h.bytes(), 896);
        assert_eq!(h.qlen(), 80);
        // The 17-bit queue field wraps: 2^17 units read as 0.
        let full = (1u64 << INT_QLEN_BITS) * INT_QLEN_UNIT;
        assert_eq!(IntHop::stamp(0, 0, full - 1, 1).qlen(), full - 80);
        assert_eq!(IntHop::stamp(0, 0, full + 160, 1).qlen(), 160);
    }
}
