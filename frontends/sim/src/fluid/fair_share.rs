//! Max-min fair rates of the senders past their first RTT (step 3 of the
//! engine): progressive filling over the links of each flow's path and its
//! host's NIC, a link with a standing queue offering `(1 - drain)` of its
//! capacity.

use super::{Engine, Flow};

impl Engine<'_> {
    /// Max-min fair rates of the fair-phase senders over links and NICs.
    pub(super) fn fair_share(&mut self) {
        let nl = self.links.len();
        let nic = self.cfg.nic_bps as f64;
        let fair: Vec<u32> = self
            .sending
            .iter()
            .copied()
            .filter(|&f| self.flows[f as usize].fair_phase)
            .collect();
        if fair.is_empty() {
            return;
        }
        let mut cap: Vec<f64> = self
            .net
            .links
            .iter()
            .zip(&self.links)
            .map(|(l, s)| {
                let c = l.capacity_bps as f64;
                if s.backlog as f64 > s.bytes_per_step {
                    c * (1.0 - self.cfg.drain)
                } else {
                    c
                }
            })
            .collect();
        let mut fair_per_host = vec![0u32; self.host_sending.len()];
        for &f in &fair {
            fair_per_host[self.flows[f as usize].host] += 1;
        }
        cap.extend(
            self.host_sending
                .iter()
                .zip(&fair_per_host)
                .map(|(&n, &k)| {
                    if n == 0 {
                        0.0
                    } else {
                        nic * f64::from(k) / f64::from(n)
                    }
                }),
        );
        let mut count = vec![0u32; cap.len()];
        for &f in &fair {
            for c in constraints(&self.flows[f as usize], nl) {
                count[c] += 1;
            }
        }
        let mut open: Vec<u32> = fair;
        while !open.is_empty() {
            let mut best: Option<(usize, f64)> = None;
            for (c, (&k, &cp)) in count.iter().zip(&cap).enumerate() {
                if k > 0 {
                    let share = cp.max(0.0) / f64::from(k);
                    if best.is_none_or(|(_, s)| share < s) {
                        best = Some((c, share));
                    }
                }
            }
            let Some((bottleneck, share)) = best else {
                break;
            };
            let mut i = 0;
            while i < open.len() {
                let f = open[i] as usize;
                if constraints(&self.flows[f], nl).any(|c| c == bottleneck) {
                    for c in constraints(&self.flows[f], nl).collect::<Vec<_>>() {
                        cap[c] -= share;
                        count[c] -= 1;
                    }
                    self.flows[f].fair_bps = share;
                    open.swap_remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }
}

/// A fair-phase flow's constraints: its links, then its host's NIC.
fn constraints(fl: &Flow, links: usize) -> impl Iterator<Item = usize> + '_ {
    fl.path
        .iter()
        .map(|&l| l as usize)
        .chain(core::iter::once(links + fl.host))
}
