//! The packet model's nodes and ports: a leaf-spine fabric behind every
//! DCI switch and the topology's inter-DC links between them.

use std::collections::VecDeque;

use crate::network::Network;
use crate::rng::Pcg32;
use crate::run::EngineConfig;

use super::artifact_pool::pool_bytes;
use super::config::DciPool;
use super::mmu::{shift_for_rate, EcnCurve, Mmu, PfcAction};
use super::{Pkt, PS_PER_US};

/// What a node is, with its DC (switch index in [`Network::dcs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeKind {
    Host { dc: u16, index: u16 },
    Leaf { dc: u16, index: u16 },
    Spine { dc: u16 },
    Dci { dc: u16 },
}

/// One direction of a link: an egress port, its queues and its wire.
pub(super) struct Port {
    pub(super) peer: u32,
    pub(super) peer_port: u16,
    pub(super) rate_bps: u64,
    /// Picoseconds a byte at `rate_bps` when that is a whole number
    /// (every listed rate: 25 Gbps, 320 ps), else 0: a serialisation
    /// time without a 128-bit division, the same as [`super::tx_ps`]'s.
    pub(super) ps_per_byte: u64,
    pub(super) delay_ps: u64,
    pub(super) busy: bool,
    /// When the packet being serialised is done (valid while `busy`).
    pub(super) busy_until: u64,
    /// When the pending `PortFree` event of this port fires (`u64::MAX`:
    /// none); any other `PortFree` event of the port is stale.
    pub(super) wake_at: u64,
    pub(super) paused: bool,
    pub(super) ctrl: VecDeque<Pkt>,
    pub(super) data: VecDeque<Pkt>,
    pub(super) data_bytes: u64,
    /// Packets propagating, with their arrival times (FIFO).
    pub(super) wire: VecDeque<(u64, Pkt)>,
    pub(super) ecn: EcnCurve,
    /// The [`Network::links`] index of an inter-DC port.
    pub(super) net_link: Option<u32>,
    /// Bytes the port has transmitted, counted only at switches that
    /// stamp INT (`--cc hpcc`, `ccrun::CcRun::egress`).
    pub(super) int_tx_bytes: u64,
}

pub(super) struct Node {
    pub(super) kind: NodeKind,
    pub(super) ports: Vec<Port>,
    mmu: Option<Mmu>,
    rng: Pcg32,
}

pub(super) struct Fabric {
    pub(super) nodes: Vec<Node>,
    /// The DCI switch node of each DC.
    pub(super) dci: Vec<u32>,
    /// Per DC: (core port, packet port) of each inter-DC port.
    pub(super) core_ports: Vec<Vec<(u8, u16)>>,
    /// Per DC, by core port: (packet port, network link).
    core_map: Vec<Vec<Option<(u16, u32)>>>,
    host_base: Vec<u32>,
    hosts_per_dc: u32,
    pub(super) leaves_per_dc: u16,
}

/// Bits a byte times picoseconds a second.
const PS_PER_BYTE_BPS: u64 = 8 * 1_000_000_000_000;

fn port(rate_bps: u64, delay_ps: u64) -> Port {
    Port {
        peer: u32::MAX,
        peer_port: 0,
        rate_bps,
        ps_per_byte: match PS_PER_BYTE_BPS.checked_rem(rate_bps) {
            Some(0) => PS_PER_BYTE_BPS / rate_bps,
            _ => 0,
        },
        delay_ps,
        busy: false,
        busy_until: 0,
        wake_at: u64::MAX,
        paused: false,
        ctrl: VecDeque::new(),
        data: VecDeque::new(),
        data_bytes: 0,
        wire: VecDeque::new(),
        ecn: EcnCurve::for_rate(rate_bps),
        net_link: None,
        int_tx_bytes: 0,
    }
}

impl Fabric {
    pub(super) fn new(net: &Network, cfg: &EngineConfig) -> Self {
        let pc = &cfg.packet;
        let hpl = pc.hosts_per_leaf.max(1);
        let spines = pc.spines.max(1);
        let hosts = cfg.hosts_per_dc.max(1);
        let leaves = hosts.div_ceil(hpl);
        let mut nodes: Vec<Node> = Vec::new();
        let mut dci = Vec::new();
        let mut host_base = Vec::new();
        let mut core_ports = Vec::new();
        let mut core_map = Vec::new();
        // Inter-DC ports: (DC, link) -> (node, port), filled per DC.
        let mut link_end: Vec<Option<(u32, u16)>> = vec![None; net.links.len()];
        let node = |kind, ports, seed: u64| Node {
            kind,
            ports,
            mmu: None,
            rng: Pcg32::new(u64::from(cfg.hash_seed) ^ 0xEC4, seed),
        };
        for d in 0..net.dcs.len() {
            let dc = d as u16;
            let h0 = nodes.len() as u32;
            host_base.push(h0);
            for h in 0..hosts {
                let id = nodes.len() as u64;
                nodes.push(node(
                    NodeKind::Host { dc, index: h },
                    vec![port(cfg.nic_bps, pc.intra_delay_ps)],
                    id,
                ));
            }
            let l0 = nodes.len() as u32;
            for l in 0..leaves {
                let mut ports: Vec<Port> = (0..hpl)
                    .map(|_| port(pc.intra_bps, pc.intra_delay_ps))
                    .collect();
                ports.extend((0..spines).map(|_| port(pc.intra_bps, pc.intra_delay_ps)));
                let id = nodes.len() as u64;
                nodes.push(node(NodeKind::Leaf { dc, index: l }, ports, id));
            }
            let s0 = nodes.len() as u32;
            for _ in 0..spines {
                let mut ports: Vec<Port> = (0..leaves)
                    .map(|_| port(pc.intra_bps, pc.intra_delay_ps))
                    .collect();
                ports.push(port(pc.spine_dci_bps, pc.intra_delay_ps));
                let id = nodes.len() as u64;
                nodes.push(node(NodeKind::Spine { dc }, ports, id));
            }
            let x = nodes.len() as u32;
            dci.push(x);
            let mut ports: Vec<Port> = (0..spines)
                .map(|_| port(pc.spine_dci_bps, pc.intra_delay_ps))
                .collect();
            let mut cp = Vec::new();
            let mut cm = Vec::new();
            for (core, l) in net
                .port_links
                .get(d)
                .map_or(&[][..], |v| &v[..])
                .iter()
                .enumerate()
            {
                let entry = l.and_then(|l| {
                    let link = net.links.get(l)?;
                    let pp = ports.len() as u16;
                    let mut p = port(link.capacity_bps, link.delay_us.saturating_mul(PS_PER_US));
                    p.net_link = Some(l as u32);
                    ports.push(p);
                    link_end[l] = Some((x, pp));
                    cp.push((core as u8, pp));
                    Some((pp, l as u32))
                });
                cm.push(entry);
            }
            core_ports.push(cp);
            core_map.push(cm);
            let id = nodes.len() as u64;
            nodes.push(node(NodeKind::Dci { dc }, ports, id));
            // Wire the DC: host h <-> leaf h / hpl port h % hpl; leaf l
            // uplink hpl + s <-> spine s port l; spine s port `leaves` <->
            // DCI port s.
            let mut connect = |a: (u32, u16), b: (u32, u16)| {
                if let Some(p) = nodes
                    .get_mut(a.0 as usize)
                    .and_then(|n| n.ports.get_mut(usize::from(a.1)))
                {
                    p.peer = b.0;
                    p.peer_port = b.1;
                }
                if let Some(p) = nodes
                    .get_mut(b.0 as usize)
                    .and_then(|n| n.ports.get_mut(usize::from(b.1)))
                {
                    p.peer = a.0;
                    p.peer_port = a.1;
                }
            };
            for h in 0..hosts {
                connect((h0 + u32::from(h), 0), (l0 + u32::from(h / hpl), h % hpl));
            }
            for l in 0..leaves {
                for s in 0..spines {
                    connect((l0 + u32::from(l), hpl + s), (s0 + u32::from(s), l));
                }
            }
            for s in 0..spines {
                connect((s0 + u32::from(s), leaves), (x, s));
            }
        }
        // Inter-DC links: each direction's port peers with the reverse
        // direction's port at the other DCI switch.
        for (l, link) in net.links.iter().enumerate() {
            let reverse = net.links.iter().position(|r| {
                r.from == link.to
                    && r.to == link.from
                    && r.delay_us == link.delay_us
                    && r.capacity_bps == link.capacity_bps
            });
            if let (Some((n, p)), Some(Some((rn, rp)))) =
                (link_end[l], reverse.map(|r| link_end[r]))
            {
                if let Some(port) = nodes
                    .get_mut(n as usize)
                    .and_then(|x| x.ports.get_mut(usize::from(p)))
                {
                    port.peer = rn;
                    port.peer_port = rp;
                }
            }
        }
        // Buffers: leaves and spines share `switch_buffer_bytes`, DCI
        // switches the topology's DCI buffer; each ingress gets a reserve
        // and headroom for a round trip of its link. Intra-DC headroom
        // comes out of the buffer; the long-haul ports' headroom (GBs) is
        // provisioned on top of the DCI buffer.
        let dci_buffer = net
            .links
            .first()
            .map_or(pc.switch_buffer_bytes, |l| l.buffer_bytes);
        for n in &mut nodes {
            if matches!(n.kind, NodeKind::Host { .. }) {
                continue;
            }
            // third.cc: headroom `rate * delay / 8 * 3` (no extra packets),
            // shift by the port's rate unless --pfc-shift sets one.
            let ports: Vec<(u64, u32)> = n
                .ports
                .iter()
                .map(|p| {
                    let bdp =
                        u128::from(p.rate_bps) * u128::from(p.delay_ps) / 8 / 1_000_000_000_000;
                    let shift = pc
                        .pfc_shift
                        .unwrap_or_else(|| shift_for_rate(p.rate_bps, cfg.nic_bps));
                    ((bdp as u64).saturating_mul(pc.headroom_factor), shift)
                })
                .collect();
            let carved: u64 = n
                .ports
                .iter()
                .zip(&ports)
                .filter(|(p, _)| p.net_link.is_none())
                .map(|(_, h)| h.0 + pc.reserve_bytes)
                .sum();
            let pool = match (n.kind, pc.dci_pool) {
                (NodeKind::Dci { .. }, DciPool::Artifact { buffer_mib }) => {
                    // Every port, long-haul ones included, in the
                    // artifact's 32-bit arithmetic: a pool per switch.
                    let ports: Vec<(u64, u64)> = n
                        .ports
                        .iter()
                        .map(|p| (p.rate_bps, p.delay_ps / 1_000))
                        .collect();
                    let reserve = u32::try_from(pc.reserve_bytes).unwrap_or(u32::MAX);
                    u64::from(pool_bytes(
                        buffer_mib.wrapping_mul(1 << 20),
                        reserve,
                        &ports,
                    ))
                }
                (NodeKind::Dci { .. }, DciPool::Buffer) => dci_buffer.saturating_sub(carved),
                _ => pc.switch_buffer_bytes.saturating_sub(carved),
            };
            n.mmu = Some(Mmu::new(
                pool,
                &ports,
                pc.reserve_bytes,
                pc.resume_offset_bytes,
            ));
        }
        Fabric {
            nodes,
            dci,
            core_ports,
            core_map,
            host_base,
            hosts_per_dc: u32::from(hosts),
            leaves_per_dc: leaves,
        }
    }

    pub(super) fn port(&self, n: u32, p: u16) -> Option<&Port> {
        self.nodes.get(n as usize)?.ports.get(usize::from(p))
    }

    pub(super) fn port_mut(&mut self, n: u32, p: u16) -> Option<&mut Port> {
        self.nodes
            .get_mut(n as usize)?
            .ports
            .get_mut(usize::from(p))
    }

    pub(super) fn is_host(&self, n: u32) -> bool {
        self.nodes
            .get(n as usize)
            .is_some_and(|x| matches!(x.kind, NodeKind::Host { .. }))
    }

    pub(super) fn rng(&mut self, n: u32) -> Option<&mut Pcg32> {
        self.nodes.get_mut(n as usize).map(|x| &mut x.rng)
    }

    /// The host node of host `host` of DC index `dc`.
    pub(super) fn host(&self, dc: usize, host: u16) -> u32 {
        self.host_base.get(dc).copied().unwrap_or(0) + u32::from(host) % self.hosts_per_dc
    }

    /// A host node's DC, leaf and port on that leaf.
    pub(super) fn host_place(&self, n: u32, hosts_per_leaf: u16) -> Option<(u16, u16, u16)> {
        match self.nodes.get(n as usize)?.kind {
            NodeKind::Host { dc, index } => {
                let hpl = hosts_per_leaf.max(1);
                Some((dc, index / hpl, index % hpl))
            }
            _ => None,
        }
    }

    /// DC index `dc`'s packet port and network link of core port `core`.
    pub(super) fn core_port(&self, dc: usize, core: lcmp_decide::PortId) -> Option<(u16, u32)> {
        *self.core_map.get(dc)?.get(usize::from(core.0))?
    }

    pub(super) fn admit(&mut self, n: u32, port: u16, size: u64) -> Result<PfcAction, ()> {
        match self.nodes.get_mut(n as usize).and_then(|x| x.mmu.as_mut()) {
            Some(m) => m.admit(usize::from(port), size),
            None => Ok(PfcAction::None),
        }
    }

    pub(super) fn release(&mut self, n: u32, port: u16, size: u64) -> PfcAction {
        match self.nodes.get_mut(n as usize).and_then(|x| x.mmu.as_mut()) {
            Some(m) => m.release(usize::from(port), size),
            None => PfcAction::None,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const G: u64 = 1_000_000_000;

    /// Two DCs joined by one 200 Gbps link.
    fn two_dcs() -> Network {
        super::super::test::two_dcs_at(200_000_000_000)
    }

    /// (rate, shift, headroom) of every switch ingress of the first DC,
    /// by switch kind.
    fn ingresses(cfg: &EngineConfig) -> Vec<(char, u64, u32, u64)> {
        let fab = Fabric::new(&two_dcs(), cfg);
        let mut v = Vec::new();
        for n in &fab.nodes {
            let kind = match n.kind {
                NodeKind::Leaf { dc: 0, .. } => 'l',
                NodeKind::Spine { dc: 0 } => 's',
                NodeKind::Dci { dc: 0 } => 'd',
                _ => continue,
            };
            let mmu = n.mmu.as_ref().expect("a switch has a buffer");
            for (p, q) in n.ports.iter().zip(&mmu.ingress) {
                v.push((kind, p.rate_bps, q.shift, q.headroom));
            }
        }
        v
    }

    /// The per-byte shortcut gives the 128-bit division's serialisation
    /// time at every whole-picosecond rate and is off at the others.
    #[test]
    fn serialisation_by_bytes_times_picoseconds_is_the_division() {
        let fab = Fabric::new(&two_dcs(), &EngineConfig::default());
        let ports: Vec<&Port> = fab.nodes.iter().flat_map(|n| &n.ports).collect();
        assert!(ports.iter().all(|p| p.ps_per_byte != 0));
        for rate in [10 * G, 25 * G, 100 * G, 200 * G, 400 * G, 3 * G, 7 * G, 1] {
            let p = port(rate, 0);
            for bytes in [1, 60, 1048, 1_000_000] {
                if p.ps_per_byte != 0 {
                    assert_eq!(bytes * p.ps_per_byte, super::super::tx_ps(bytes, rate));
                }
            }
            assert_eq!(p.ps_per_byte != 0, 8_000_000_000_000 % rate == 0, "{rate}");
        }
        assert_eq!(port(0, 0).ps_per_byte, 0);
    }

    #[test]
    fn pfc_shifts_follow_port_rates_at_leaves_spines_and_dci_switches() {
        let cfg = EngineConfig::default();
        assert_eq!(cfg.nic_bps, 100 * G);
        let v = ingresses(&cfg);
        for kind in ['l', 's', 'd'] {
            assert!(v.iter().any(|x| x.0 == kind), "no {kind} ports");
        }
        for &(kind, rate, shift, _) in &v {
            let want = match rate / G {
                100 => 3,
                200 => 2,
                400 => 1,
                r => panic!("unexpected {r} G port"),
            };
            assert_eq!(shift, want, "{kind} port at {} G", rate / G);
        }
        // The spine's DCI port, the DCI's spine ports and its 200 G
        // inter-DC port are among them.
        assert!(v.iter().any(|x| x.0 == 's' && x.2 == 1));
        assert!(v.iter().any(|x| x.0 == 'd' && x.2 == 1));
        assert!(v.iter().any(|x| x.0 == 'd' && x.2 == 2));
        // --pfc-shift 3 restores one shift everywhere.
        let mut one = EngineConfig::default();
        one.packet.pfc_shift = Some(3);
        assert!(ingresses(&one).iter().all(|x| x.2 == 3));
    }

    /// Every DCI switch's shared pool on testbed8, DC order.
    fn testbed8_dci_pools(pool: DciPool) -> Vec<u64> {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
        let net = Network::new(&topo, &lcmp_tables::BuildOptions::default()).expect("network");
        let mut cfg = EngineConfig::default();
        cfg.packet.dci_pool = pool;
        let fab = Fabric::new(&net, &cfg);
        fab.dci
            .iter()
            .map(|&x| fab.nodes[x as usize].mmu.as_ref().expect("a buffer").pool)
            .collect()
    }

    #[test]
    fn each_dci_switch_gets_the_artifacts_own_pool() {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
        let want: Vec<u64> = super::super::artifact_pool::dci_pools(
            &topo,
            &EngineConfig::default().packet,
            super::super::artifact_pool::ARTIFACT_DCI_BUFFER_MIB,
        )
        .into_iter()
        .map(|(_, b)| b)
        .collect();
        let got = testbed8_dci_pools(DciPool::Artifact {
            buffer_mib: super::super::artifact_pool::ARTIFACT_DCI_BUFFER_MIB,
        });
        // The artifact's (`third.cc`, `switch-mmu.cc`): DC1 and DC8
        // 1 588 219 905 B, DC6 40 151 344 B, DC4 3 678 868 640 B.
        assert_eq!(got, want);
        assert_eq!(got[0], 1_588_219_905);
        assert_eq!(got[5], 40_151_344);
        assert_eq!(got[3], 3_678_868_640);
        // With a plain buffer every DCI switch has the same pool: the
        // buffer less its spine ports' reserve and headroom.
        let plain = testbed8_dci_pools(DciPool::Buffer);
        assert!(plain.iter().all(|&p| p == plain[0]), "{plain:?}");
        let spine_port = 400 * G * PS_PER_US / 8 / 1_000_000_000_000 * 3 + 4096;
        assert_eq!(plain[0], topo.buffer_bytes - 2 * spine_port);
    }

    #[test]
    fn headroom_is_three_round_trips_of_bytes_without_extra_packets() {
        for (_, rate, _, headroom) in ingresses(&EngineConfig::default()) {
            let delay_ps = if rate == 200 * G {
                1_000 * PS_PER_US
            } else {
                PS_PER_US
            };
            let bdp = u128::from(rate) * u128::from(delay_ps) / 8 / 1_000_000_000_000;
            assert_eq!(u128::from(headroom), bdp * 3, "{} G", rate / G);
        }
    }
}
