//! The simulated network: directed inter-DC links and, for every DCI
//! switch, the tables its `lcmp-decide` decider runs on. Built from an
//! `lcmp-tables` [`Topology`] by `lcmp-tables` itself
//! ([`lcmp_tables::build_tables`]): nothing here derives a table.

use lcmp_decide::{PortId, Tables};
use lcmp_tables::{build_tables, BuildOptions, Topology};

use crate::error::SimError;

/// One direction of an inter-DC link: a DCI egress port and its FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirLink {
    /// Sending DC id.
    pub from: u16,
    /// Receiving DC id.
    pub to: u16,
    /// The egress port at `from`.
    pub port: PortId,
    /// Capacity, bits per second.
    pub capacity_bps: u64,
    /// One-way propagation delay, microseconds.
    pub delay_us: u64,
    /// Egress buffer, bytes.
    pub buffer_bytes: u64,
}

/// Switches, directed links, per-switch tables and the shortest delays.
#[derive(Clone, Debug)]
pub struct Network {
    /// DC ids; a switch's index in this list is its index everywhere here.
    pub dcs: Vec<u16>,
    /// DC names, same order.
    pub names: Vec<String>,
    /// Directed links.
    pub links: Vec<DirLink>,
    /// Per switch: directed link index of each port (`None`: no such port).
    pub port_links: Vec<Vec<Option<usize>>>,
    /// Per switch: the tables `lcmp-tables` built for it.
    pub tables: Vec<Tables>,
    /// `shortest_us[a][b]`: least one-way delay between switch indices.
    pub shortest_us: Vec<Vec<Option<u64>>>,
    /// `best_path[a][b]`: the best minimum-hop path between switch indices
    /// as the artifact's ideal FCT takes it (least delay, then largest
    /// bottleneck): `(one-way delay µs, bottleneck bps)`
    /// ([`Topology::best_min_hop_path`]).
    pub best_path: Vec<Vec<Option<(u64, u64)>>>,
}

impl Network {
    /// Builds the network and every switch's tables (`opts` as given to
    /// [`build_tables`]).
    pub fn new(topo: &Topology, opts: &BuildOptions) -> Result<Self, SimError> {
        topo.validate()
            .map_err(|e| SimError::Topology(e.to_string()))?;
        let dcs: Vec<u16> = topo.dcs.iter().map(|d| d.id).collect();
        let names = topo.dcs.iter().map(|d| d.name.clone()).collect();
        let mut links = Vec::new();
        let mut port_links = Vec::new();
        let mut tables = Vec::new();
        for &dc in &dcs {
            let ports = topo.ports(dc);
            let mut map = Vec::new();
            for p in &ports {
                let Some(l) = topo.links.get(p.link) else {
                    return Err(SimError::Topology(format!("DC {dc}: port without link")));
                };
                let i = usize::from(p.port.0);
                if map.len() <= i {
                    map.resize(i + 1, None);
                }
                map[i] = Some(links.len());
                links.push(DirLink {
                    from: dc,
                    to: p.neighbor,
                    port: p.port,
                    capacity_bps: l.capacity_bps,
                    delay_us: l.delay_us,
                    buffer_bytes: topo.buffer_bytes,
                });
            }
            port_links.push(map);
            let t = build_tables(topo, dc, opts)
                .map_err(|e| SimError::Tables(format!("DC {dc}: {e}")))?;
            tables.push(t);
        }
        let shortest_us = dcs
            .iter()
            .map(|&a| dcs.iter().map(|&b| topo.shortest_delay_us(a, b)).collect())
            .collect();
        let best_path = dcs
            .iter()
            .map(|&a| dcs.iter().map(|&b| topo.best_min_hop_path(a, b)).collect())
            .collect();
        Ok(Network {
            dcs,
            names,
            links,
            port_links,
            tables,
            shortest_us,
            best_path,
        })
    }

    /// A DC's switch index.
    pub fn index(&self, dc: u16) -> Option<usize> {
        self.dcs.iter().position(|&d| d == dc)
    }

    /// A DC's name (its id as text if unknown).
    pub fn name(&self, dc: u16) -> String {
        self.index(dc)
            .and_then(|i| self.names.get(i).cloned())
            .unwrap_or_else(|| dc.to_string())
    }
}
