//! A switch's shared buffer with per-ingress PFC accounting (dynamic
//! thresholds, reserve, headroom), and the RED-style ECN curve of its
//! egress ports.
//!
//! The accounting follows the scheme of the HPCC NS-3 `SwitchMmu` the
//! artifact runs with `USE_DYNAMIC_PFC_THRESHOLD 1`: each ingress queue
//! owns a small reserve; beyond it, bytes come from the shared pool while
//! the queue's shared use stays under the dynamic threshold
//! `(pool - shared used) >> shift`; past the threshold they go to the
//! queue's headroom, and the switch pauses the upstream port. A queue
//! resumes its upstream once it uses no headroom and its shared use is at
//! least `resume_offset` under the threshold. A packet that fits neither
//! is dropped (and counted): with headroom for the in-flight bytes of a
//! round trip none is.

/// One ingress queue's accounting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ingress {
    /// Bytes held from this ingress, reserve and shared parts.
    pub bytes: u64,
    /// Bytes held in this ingress's headroom.
    pub hdrm_bytes: u64,
    /// Headroom size, bytes.
    pub headroom: u64,
    /// Whether this switch has paused the upstream port.
    pub paused: bool,
    /// Dynamic-threshold shift of this ingress (the threshold is
    /// `free >> shift`).
    pub shift: u32,
}

/// The artifact's dynamic-threshold shift for a port of `rate_bps` on a
/// network of `nic_bps` NICs (`scratch/third.cc`, switch set-up): 3 (1/8
/// of the free pool), one less per doubling of the rate above the NIC's:
/// 3 at NIC rate, 2 at twice it (200 G), 1 at four times (400 G), never
/// below 0.
#[must_use]
pub fn shift_for_rate(rate_bps: u64, nic_bps: u64) -> u32 {
    let mut shift = 3;
    let mut rate = rate_bps;
    while rate > nic_bps && shift > 0 {
        shift -= 1;
        rate /= 2;
    }
    shift
}

/// What admitting or releasing a packet asks the switch to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcAction {
    /// Nothing.
    None,
    /// Send PAUSE to the ingress's upstream port.
    Pause,
    /// Send RESUME to it.
    Resume,
}

/// A switch's buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mmu {
    /// Per ingress port.
    pub ingress: Vec<Ingress>,
    /// The shared pool, bytes (buffer minus the reserves and the headroom
    /// carved out of it).
    pub pool: u64,
    /// Bytes of the pool in use.
    pub shared_used: u64,
    /// Reserve per ingress, bytes.
    pub reserve: u64,
    /// Hysteresis of RESUME, bytes.
    pub resume_offset: u64,
    /// Packets dropped for lack of buffer.
    pub drops: u64,
}

impl Mmu {
    /// A buffer of `pool` shared bytes for ports with these (headroom,
    /// threshold shift) pairs.
    pub fn new(pool: u64, ports: &[(u64, u32)], reserve: u64, resume_offset: u64) -> Self {
        Mmu {
            ingress: ports
                .iter()
                .map(|&(headroom, shift)| Ingress {
                    headroom,
                    shift,
                    ..Ingress::default()
                })
                .collect(),
            pool,
            shared_used: 0,
            reserve,
            resume_offset,
            drops: 0,
        }
    }

    /// The dynamic PFC threshold of ingress `port`: it may hold this many
    /// shared bytes.
    pub fn threshold(&self, port: usize) -> u64 {
        let shift = self.ingress.get(port).map_or(63, |q| q.shift.min(63));
        self.pool.saturating_sub(self.shared_used) >> shift
    }

    fn shared_of(&self, i: usize) -> u64 {
        self.ingress
            .get(i)
            .map_or(0, |q| q.bytes.saturating_sub(self.reserve))
    }

    /// Admits `size` bytes arriving on ingress `port`: `Err(())` if they
    /// fit nowhere (a drop), else what PFC must do.
    #[allow(clippy::result_unit_err)]
    pub fn admit(&mut self, port: usize, size: u64) -> Result<PfcAction, ()> {
        let thr = self.threshold(port);
        let shared = self.shared_of(port);
        let reserve = self.reserve;
        let Some(q) = self.ingress.get_mut(port) else {
            return Err(());
        };
        let new = q.bytes + size;
        if new <= reserve {
            q.bytes = new;
        } else if shared + size <= thr && self.shared_used + size <= self.pool {
            // The part beyond the reserve comes from the pool.
            let from_pool = new - reserve.max(q.bytes);
            q.bytes = new;
            self.shared_used += from_pool;
        } else if q.hdrm_bytes + size <= q.headroom {
            q.hdrm_bytes += size;
        } else {
            self.drops += 1;
            return Err(());
        }
        let thr = self.threshold(port);
        let shared = self.shared_of(port);
        let q = &mut self.ingress[port];
        if !q.paused && (q.hdrm_bytes > 0 || shared >= thr) {
            q.paused = true;
            return Ok(PfcAction::Pause);
        }
        Ok(PfcAction::None)
    }

    /// Releases `size` bytes that arrived on ingress `port` (headroom
    /// first), and says whether its upstream may resume.
    pub fn release(&mut self, port: usize, size: u64) -> PfcAction {
        let reserve = self.reserve;
        let Some(q) = self.ingress.get_mut(port) else {
            return PfcAction::None;
        };
        let from_hdrm = q.hdrm_bytes.min(size);
        q.hdrm_bytes -= from_hdrm;
        let rest = size - from_hdrm;
        let before = q.bytes.saturating_sub(reserve);
        q.bytes = q.bytes.saturating_sub(rest);
        let after = q.bytes.saturating_sub(reserve);
        self.shared_used = self.shared_used.saturating_sub(before - after);
        let thr = self.threshold(port);
        let shared = self.shared_of(port);
        let offset = self.resume_offset;
        let q = &mut self.ingress[port];
        if q.paused && q.hdrm_bytes == 0 && (shared == 0 || shared + offset <= thr) {
            q.paused = false;
            return PfcAction::Resume;
        }
        PfcAction::None
    }
}

/// An egress port's ECN marking curve (RED over the egress queue):
/// no mark up to `kmin` bytes, probability rising linearly to `pmax` at
/// `kmax`, every packet above `kmax`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcnCurve {
    /// Bytes below which nothing is marked.
    pub kmin: u64,
    /// Bytes above which everything is marked.
    pub kmax: u64,
    /// Marking probability at `kmax`.
    pub pmax: f64,
}

impl EcnCurve {
    /// The artifact's curve for a port of `rate_bps`
    /// (`KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP` of its `config_batch.txt`, KB:
    /// 100/400 at 25 Gbps, 160/640 at 40, 200/800 at 50, 300/1200 at 75,
    /// 400/1600 at 100, 800/3200 at 200, 1600/6400 at 400, 2400/9600 at
    /// 600, 3200/12800 at 800; `pmax` 0.2). Other rates take the entry of
    /// the next lower listed rate (the lowest for slower ports).
    pub fn for_rate(rate_bps: u64) -> Self {
        const MAP: [(u64, u64, u64); 9] = [
            (25, 100, 400),
            (40, 160, 640),
            (50, 200, 800),
            (75, 300, 1200),
            (100, 400, 1600),
            (200, 800, 3200),
            (400, 1600, 6400),
            (600, 2400, 9600),
            (800, 3200, 12800),
        ];
        let gbps = rate_bps / 1_000_000_000;
        let (_, kmin, kmax) = MAP
            .iter()
            .rev()
            .find(|(g, _, _)| *g <= gbps)
            .copied()
            .unwrap_or(MAP[0]);
        EcnCurve {
            kmin: kmin * 1000,
            kmax: kmax * 1000,
            pmax: 0.2,
        }
    }

    /// Whether a packet leaving `queue_bytes` behind is marked: always
    /// above `kmax`, never up to `kmin`, else with [`EcnCurve::probability`]
    /// by one draw of `rng`.
    pub fn mark(&self, queue_bytes: u64, rng: &mut crate::rng::Pcg32) -> bool {
        let p = self.probability(queue_bytes);
        p >= 1.0 || (p > 0.0 && rng.next_f64() < p)
    }

    /// The marking probability with `queue_bytes` queued.
    pub fn probability(&self, queue_bytes: u64) -> f64 {
        if queue_bytes > self.kmax {
            1.0
        } else if queue_bytes > self.kmin {
            self.pmax * (queue_bytes - self.kmin) as f64 / (self.kmax - self.kmin).max(1) as f64
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn pause_at_the_threshold_resume_below_it_drop_past_headroom() {
        // 80 KB pool, threshold free >> 3, 2 KB headroom.
        let mut m = Mmu::new(80_000, &[(2_000, 3), (2_000, 3)], 1_000, 500);
        // The reserve, then the pool up to the threshold.
        assert_eq!(m.admit(0, 1_000), Ok(PfcAction::None));
        let mut action = PfcAction::None;
        let mut n = 0;
        while action == PfcAction::None {
            action = m.admit(0, 1_000).expect("fits");
            n += 1;
        }
        assert_eq!(action, PfcAction::Pause);
        // 8.9 KB: the threshold (80 - 8.9) / 8 ≈ 8.9 KB meets the use.
        assert!((8..=10).contains(&n), "{n}");
        // Further bytes go to headroom until it is full, then drop.
        while m.ingress[0].hdrm_bytes + 1_000 <= 2_000 {
            assert_eq!(m.admit(0, 1_000), Ok(PfcAction::None));
        }
        assert_eq!(m.admit(0, 1_000), Err(()));
        assert_eq!(m.drops, 1);
        // Draining empties headroom first, then resumes below the offset.
        let mut resumed = false;
        for _ in 0..20 {
            if m.release(0, 1_000) == PfcAction::Resume {
                resumed = true;
                break;
            }
        }
        assert!(resumed && !m.ingress[0].paused && m.ingress[0].hdrm_bytes == 0);
        assert!(m.ingress[0].bytes > 0, "resumed before empty");
    }

    #[test]
    fn the_shift_follows_the_port_rate() {
        const G: u64 = 1_000_000_000;
        // third.cc: 3 at NIC rate, 2 at 200 G, 1 at 400 G, floor 0.
        assert_eq!(shift_for_rate(100 * G, 100 * G), 3);
        assert_eq!(shift_for_rate(25 * G, 100 * G), 3);
        assert_eq!(shift_for_rate(200 * G, 100 * G), 2);
        assert_eq!(shift_for_rate(400 * G, 100 * G), 1);
        assert_eq!(shift_for_rate(800 * G, 100 * G), 0);
        assert_eq!(shift_for_rate(1600 * G, 100 * G), 0);
        // An ingress pauses when its shared use s meets (free - s) >> shift:
        // a NIC-rate one at free / 9, a 400 G one (shift 1) at free / 3.
        let mut m = Mmu::new(80_000, &[(10_000, 3), (10_000, 1)], 0, 0);
        let fill = |m: &mut Mmu, port: usize| {
            let mut n = 0u64;
            while m.admit(port, 100) == Ok(PfcAction::None) {
                n += 1;
            }
            n * 100
        };
        let slow = fill(&mut m, 0);
        assert!((8_000..=10_000).contains(&slow), "{slow}");
        let fast = fill(&mut m, 1);
        let free = 80_000 - slow - 100;
        assert!(
            fast + 1_000 >= free / 3 && fast <= free / 3 + 1_000,
            "{fast} of {free}"
        );
    }

    #[test]
    fn ecn_follows_the_red_curve() {
        let c = EcnCurve::for_rate(100_000_000_000);
        assert_eq!((c.kmin, c.kmax), (400_000, 1_600_000));
        assert_eq!(c.probability(400_000), 0.0);
        assert!((c.probability(1_000_000) - 0.1).abs() < 1e-12);
        assert_eq!(c.probability(1_600_001), 1.0);
        assert_eq!(EcnCurve::for_rate(25_000_000_000).kmin, 100_000);
        assert_eq!(EcnCurve::for_rate(10_000_000_000).kmin, 100_000);
        assert_eq!(EcnCurve::for_rate(300_000_000_000).kmin, 800_000);
    }

    #[test]
    fn marks_follow_the_curve_in_frequency() {
        let c = EcnCurve::for_rate(25_000_000_000);
        let mut rng = crate::rng::Pcg32::new(5, 5);
        let n = 200_000;
        for q in [
            0u64, 100_000, 175_000, 250_000, 325_000, 399_999, 400_001, 2_000_000,
        ] {
            let marked = (0..n).filter(|_| c.mark(q, &mut rng)).count();
            let freq = marked as f64 / f64::from(n);
            let want = c.probability(q);
            assert!((freq - want).abs() < 0.005, "queue {q}: {freq} vs {want}");
        }
        assert!((c.probability(250_000) - 0.1).abs() < 1e-12);
    }
}
