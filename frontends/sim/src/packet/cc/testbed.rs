//! A small packet-level bottleneck for the controllers' unit tests: every
//! sender paced at its controller's rate and held to its window, one FIFO
//! egress port of capacity `C` shared by all, INT stamped and ECN marked
//! (step marking above `K` bytes, DCTCP's) as a packet leaves the port,
//! the receiver `d` away acknowledging every packet, the acknowledgement
//! `d` back. Infinite flows, no loss. Independent of the packet engine so
//! the controllers can be checked on their own.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{Ack, Controller, IntHop};

/// The bottleneck's settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bottleneck {
    pub capacity_bps: u64,
    pub one_way_ps: u64,
    pub packet_bytes: u64,
    /// ECN marks packets leaving with more than this queued behind them.
    pub ecn_k_bytes: u64,
    /// Extra bytes put into the queue at a time (a step in queue depth).
    pub step: Option<(u64, u64)>,
}

impl Default for Bottleneck {
    fn default() -> Self {
        Bottleneck {
            capacity_bps: 10_000_000_000,
            one_way_ps: 5_000_000,
            packet_bytes: 1_000,
            ecn_k_bytes: 30_000,
            step: None,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub capacity_bps: f64,
    /// Bytes acknowledged per flow in the last third of the run.
    pub tail_bytes: Vec<u64>,
    pub tail_ps: u64,
    pub max_queue_bytes: u64,
    /// The largest queue in the last third.
    pub tail_max_queue_bytes: u64,
    /// Flow 0's rate after each of its acknowledgements: (time ps, bps).
    pub trace: Vec<(u64, u64)>,
}

impl Outcome {
    /// Flow `i`'s throughput over the last third, bits per second.
    pub(crate) fn throughput(&self, i: usize) -> f64 {
        self.tail_bytes[i] as f64 * 8.0 / (self.tail_ps as f64 * 1e-12)
    }

    /// Flow 0's lowest rate in `[from, to)` ps.
    pub(crate) fn min_rate(&self, from: u64, to: u64) -> u64 {
        self.trace
            .iter()
            .filter(|(t, _)| (from..to).contains(t))
            .map(|&(_, r)| r)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Flow 0's rate at its last acknowledgement before `t` ps.
    pub(crate) fn rate_before(&self, t: u64) -> u64 {
        self.trace
            .iter()
            .take_while(|(at, _)| *at < t)
            .last()
            .map_or(0, |&(_, r)| r)
    }
}

#[derive(Clone, Copy)]
struct Packet {
    flow: usize,
    end_seq: u64,
    sent_ps: u64,
    bytes: u64,
    hop: IntHop,
    ecn: bool,
}

enum Ev {
    Wake(usize),
    /// The cross-traffic burst lands.
    Step,
    PortFree,
    Ack(Packet),
}

/// Deadlines in time order, then insertion order.
#[derive(Default)]
struct Events {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    payloads: Vec<Option<Ev>>,
}

impl Events {
    fn push(&mut self, t: u64, ev: Ev) {
        self.payloads.push(Some(ev));
        let n = self.payloads.len() - 1;
        self.heap.push(Reverse((t, n as u64, n)));
    }

    fn pop(&mut self) -> Option<(u64, Ev)> {
        let Reverse((t, _, i)) = self.heap.pop()?;
        Some((t, self.payloads[i].take()?))
    }
}

struct Sender<C> {
    cc: C,
    start_ps: u64,
    snd_nxt: u64,
    snd_una: u64,
    next_ps: u64,
    wake_at: Option<u64>,
}

impl Bottleneck {
    /// The fair-share check of every controller: two flows, the second
    /// starting 2 ms after the first (as `make` builds it: a late-comer
    /// at a tenth of the line rate), for 30 ms. They fill the link (more
    /// than `min_utilisation` of it), meet within 5 % of half each, and
    /// the rate control, not the FIFO, shares it: the queue stays under
    /// 500 kB (two line-rate senders would add 25 MB in 20 ms).
    pub(crate) fn assert_fair_shares<C: Controller>(
        &self,
        make: &dyn Fn(usize, u64, u64, u64) -> C,
        min_utilisation: f64,
    ) {
        let out = self.run(make, &[0, 2_000_000_000], 30_000_000_000);
        let (a, b) = (out.throughput(0), out.throughput(1));
        assert!((a + b) / out.capacity_bps > min_utilisation, "{a} + {b}");
        assert!((a / (a + b) - 0.5).abs() < 0.05, "{a} vs {b}");
        assert!(
            out.tail_max_queue_bytes < 500_000,
            "{}",
            out.tail_max_queue_bytes
        );
    }

    /// Runs flows starting at `starts` (ps) until `end_ps`; `make` builds
    /// each controller from (flow, line rate, base RTT ps, base window
    /// bytes).
    pub(crate) fn run<C: Controller>(
        &self,
        make: &dyn Fn(usize, u64, u64, u64) -> C,
        starts: &[u64],
        end_ps: u64,
    ) -> Outcome {
        let c = self.capacity_bps;
        let ser = self.packet_bytes * 8 * 1_000_000_000_000 / c;
        let base_rtt = 2 * self.one_way_ps + ser;
        let bdp = c / 8 * base_rtt / 1_000_000_000_000;
        let mut senders: Vec<Sender<C>> = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| Sender {
                cc: make(i, c, base_rtt, bdp),
                start_ps: s,
                snd_nxt: 0,
                snd_una: 0,
                next_ps: s,
                wake_at: None,
            })
            .collect();
        let mut events = Events::default();
        let mut queue: VecDeque<Packet> = VecDeque::new();
        let mut queued = 0u64;
        let mut port_busy = false;
        let mut tx_bytes = 0u64;
        let mut max_queue = 0u64;
        let tail_from = end_ps - end_ps / 3;
        let mut tail = vec![0u64; senders.len()];
        let mut tail_max_queue = 0u64;
        let mut trace = Vec::new();
        for (i, s) in senders.iter_mut().enumerate() {
            s.wake_at = Some(s.start_ps);
            events.push(s.start_ps, Ev::Wake(i));
        }
        if let Some((at, _)) = self.step {
            events.push(at, Ev::Step);
        }
        let mut step_done = false;
        while let Some((t, ev)) = events.pop() {
            if t > end_ps {
                break;
            }
            match ev {
                Ev::Wake(i) => {
                    senders[i].wake_at = None;
                }
                Ev::Step => {}
                Ev::PortFree => {
                    port_busy = false;
                }
                Ev::Ack(p) => {
                    let s = &mut senders[p.flow];
                    s.snd_una = s.snd_una.max(p.end_seq);
                    let hops = [p.hop];
                    let ack = Ack {
                        now_ps: t,
                        seq: p.end_seq,
                        snd_nxt: s.snd_nxt,
                        ecn: p.ecn,
                        sent_ps: p.sent_ps,
                        hops: &hops,
                    };
                    s.cc.on_ack(&ack);
                    if t >= tail_from {
                        tail[p.flow] += p.bytes;
                    }
                    if p.flow == 0 {
                        trace.push((t, s.cc.rate_bps()));
                    }
                }
            }
            if let Some((_, bytes)) = self.step.filter(|&(at, _)| !step_done && t >= at) {
                step_done = true;
                let mut left = bytes;
                while left > 0 {
                    let b = left.min(self.packet_bytes);
                    queue.push_back(Packet {
                        flow: usize::MAX,
                        end_seq: 0,
                        sent_ps: t,
                        bytes: b,
                        hop: IntHop::default(),
                        ecn: false,
                    });
                    queued += b;
                    left -= b;
                }
            }
            // Senders that may send now put a packet into the queue.
            for (i, s) in senders.iter_mut().enumerate() {
                if t < s.start_ps || t < s.next_ps {
                    if s.wake_at.is_none() && t >= s.start_ps {
                        s.wake_at = Some(s.next_ps);
                        events.push(s.next_ps, Ev::Wake(i));
                    }
                    continue;
                }
                let inflight = s.snd_nxt - s.snd_una;
                if s.cc.window_bytes().is_some_and(|w| inflight >= w) {
                    continue; // an acknowledgement wakes it
                }
                s.snd_nxt += self.packet_bytes;
                queue.push_back(Packet {
                    flow: i,
                    end_seq: s.snd_nxt,
                    sent_ps: t,
                    bytes: self.packet_bytes,
                    hop: IntHop::default(),
                    ecn: false,
                });
                queued += self.packet_bytes;
                let rate = s.cc.rate_bps().max(1);
                s.next_ps = t + self.packet_bytes * 8 * 1_000_000_000_000 / rate;
                if s.wake_at.is_none_or(|w| w > s.next_ps) {
                    s.wake_at = Some(s.next_ps);
                    events.push(s.next_ps, Ev::Wake(i));
                }
            }
            max_queue = max_queue.max(queued);
            if t >= tail_from {
                tail_max_queue = tail_max_queue.max(queued);
            }
            if !port_busy {
                if let Some(mut p) = queue.pop_front() {
                    queued -= p.bytes;
                    p.hop = IntHop::stamp(t, tx_bytes, queued, c);
                    p.ecn = queued > self.ecn_k_bytes;
                    tx_bytes += p.bytes;
                    let done = t + p.bytes * 8 * 1_000_000_000_000 / c;
                    port_busy = true;
                    events.push(done, Ev::PortFree);
                    if p.flow != usize::MAX {
                        events.push(done + 2 * self.one_way_ps, Ev::Ack(p));
                    }
                }
            }
        }
        Outcome {
            capacity_bps: c as f64,
            tail_bytes: tail,
            tail_ps: end_ps - tail_from,
            max_queue_bytes: max_queue,
            tail_max_queue_bytes: tail_max_queue,
            trace,
        }
    }
}
