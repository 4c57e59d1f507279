//! The inter-DC topology model and the embedded evaluation topologies.
//!
//! A [`Topology`] is a set of data centres (one DCI switch each) joined by
//! undirected inter-DC links with a capacity and a one-way propagation
//! delay, plus the egress buffer of every DCI port. Intra-DC fabrics are not
//! modelled: the inter-DC links are the only bottlenecks (paper §6).
//!
//! **Port numbering.** A switch's ports are its links sorted by neighbour
//! DC id (ties, which validation rejects, would fall back to link index),
//! numbered `0, 1, …` in that order ([`Topology::ports`]). Every frontend
//! (simulator, firmware, `lcmp replay`) uses this rule, so a port number in
//! a trace means the same link everywhere.
//!
//! **Candidates.** The candidates of a switch towards a destination DC are
//! its neighbours on minimum-hop paths (what ECMP would use,
//! [`Topology::next_hops`]), in port order.
//!
//! The embedded topologies ([`Topology::embedded`]):
//!
//! * `testbed8`: the paper's 8-DC testbed (Fig. 1a / 4a). DC1 reaches DC8 by
//!   six two-hop paths via DC2..DC7, both links of a path alike:
//!   200 Gbps/25 ms, 200 Gbps/250 ms, 100 Gbps/10 ms, 100 Gbps/100 ms,
//!   25 Gbps/5 ms, 25 Gbps/50 ms. The low class is 25 Gbps, as the paper's
//!   artifact configures it (the text says 40 Gbps). DCI buffers 5 GB.
//! * `bso13`: the 13-DC BSONetworkSolutions topology (Fig. 4b), 20 links,
//!   DCI buffers 6 GB.

use alloc::string::String;
use alloc::vec::Vec;

use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::PortId;
use serde::{Deserialize, Serialize};

use crate::error::{Count, TablesError, TopologyError};
use crate::graph::{Edge, Graph};

/// Most DCs a topology may have.
pub const MAX_DCS: usize = 1024;
/// Most links a topology may have.
pub const MAX_LINKS: usize = 8192;
/// Longest topology JSON accepted, bytes.
pub const MAX_TOPOLOGY_JSON: usize = 4 << 20;

const GBPS: u64 = 1_000_000_000;
const MS: u64 = 1000;

/// A data centre (its DCI switch).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dc {
    /// Its id: the route-group id of traffic towards it.
    pub id: u16,
    /// Its name, e.g. `DC1`.
    pub name: String,
}

/// An undirected inter-DC link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// One end (DC id).
    pub a: u16,
    /// The other end (DC id).
    pub b: u16,
    /// Capacity, bits per second, each direction.
    pub capacity_bps: u64,
    /// One-way propagation delay, microseconds.
    pub delay_us: u64,
}

impl Link {
    /// The other end of the link seen from `dc`, if `dc` is an end.
    pub fn other(&self, dc: u16) -> Option<u16> {
        if self.a == dc {
            Some(self.b)
        } else if self.b == dc {
            Some(self.a)
        } else {
            None
        }
    }
}

/// A switch port: the link it drives and the neighbour at the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SwitchPort {
    /// The port number (see the module docs for the numbering rule).
    pub port: PortId,
    /// The neighbour DC id.
    pub neighbor: u16,
    /// Index of the link in [`Topology::links`].
    pub link: usize,
}

/// DCs, inter-DC links and the DCI port buffer size.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// A name for people.
    pub name: String,
    /// The data centres.
    pub dcs: Vec<Dc>,
    /// The inter-DC links.
    pub links: Vec<Link>,
    /// Egress buffer of every DCI port, bytes.
    pub buffer_bytes: u64,
}

/// Names of the embedded topologies.
pub const EMBEDDED: [&str; 2] = ["testbed8", "bso13"];

impl Topology {
    /// The topology's digest, for the scope of a signed blob: the first
    /// 16 bytes of the SHA-512 (`ed25519-compact`'s, already linked for
    /// the signatures) of its postcard encoding, which is canonical for a
    /// parsed topology (field order fixed, no whitespace or key order).
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let a = Topology::embedded("testbed8").unwrap();
    /// let b = Topology::embedded("bso13").unwrap();
    /// assert_ne!(a.digest(), b.digest());
    /// assert_eq!(a.digest(), Topology::embedded("testbed8").unwrap().digest());
    /// ```
    pub fn digest(&self) -> [u8; crate::blob::signed::TOPOLOGY_DIGEST_LEN] {
        // Encoding a topology into a Vec cannot fail (no maps with
        // non-string keys, no unsupported types).
        let bytes = postcard::to_allocvec(self).unwrap_or_default();
        let h = ed25519_compact::sha512::Hash::hash(&bytes);
        crate::blob::array(&h, 0)
    }

    /// The scope of switch `switch`'s signed tables in this topology.
    pub fn scope(&self, switch: u16) -> crate::blob::signed::Scope {
        crate::blob::signed::Scope {
            switch,
            topology: self.digest(),
        }
    }

    /// An embedded topology by name (`testbed8`, `bso13`).
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("testbed8").unwrap();
    /// assert_eq!(t.dcs.len(), 8);
    /// assert_eq!(t.buffer_bytes, 5_000_000_000);
    /// assert!(Topology::embedded("nope").is_none());
    /// ```
    pub fn embedded(name: &str) -> Option<Topology> {
        match name {
            "testbed8" => Some(testbed8()),
            "bso13" => Some(bso13()),
            _ => None,
        }
    }

    /// Parses and validates a topology from JSON (the serde form of
    /// [`Topology`]; see `docs/tables.md`). At most
    /// [`MAX_TOPOLOGY_JSON`] bytes, [`MAX_DCS`] DCs and [`MAX_LINKS`] links.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::from_json(r#"{"name":"two","buffer_bytes":1000,
    ///   "dcs":[{"id":1,"name":"A"},{"id":2,"name":"B"}],
    ///   "links":[{"a":1,"b":2,"capacity_bps":100,"delay_us":5}]}"#).unwrap();
    /// assert_eq!(t.dc_id("B"), Some(2));
    /// ```
    #[cfg(feature = "alloc")]
    pub fn from_json(text: &str) -> Result<Topology, TablesError> {
        if text.len() > MAX_TOPOLOGY_JSON {
            return Err(TablesError::InputTooLarge {
                len: text.len(),
                max: MAX_TOPOLOGY_JSON,
            });
        }
        let topo: Topology = serde_json::from_str(text)?;
        topo.validate()?;
        Ok(topo)
    }

    /// Checks ids, names, links, capacities, sizes and per-switch port
    /// counts.
    pub fn validate(&self) -> Result<(), TablesError> {
        if self.dcs.len() > MAX_DCS {
            return Err(TablesError::TooMany {
                what: Count::Dcs,
                count: self.dcs.len() as u64,
            });
        }
        if self.links.len() > MAX_LINKS {
            return Err(TablesError::TooMany {
                what: Count::Links,
                count: self.links.len() as u64,
            });
        }
        if self.buffer_bytes == 0 {
            return Err(TopologyError::ZeroBuffer.into());
        }
        for (i, dc) in self.dcs.iter().enumerate() {
            if dc.name.is_empty() {
                return Err(TopologyError::EmptyDcName(dc.id).into());
            }
            let earlier = self.dcs.get(..i).unwrap_or(&[]);
            if earlier.iter().any(|d| d.id == dc.id) {
                return Err(TopologyError::DuplicateDcId(dc.id).into());
            }
            if earlier
                .iter()
                .any(|d| d.name.eq_ignore_ascii_case(&dc.name))
            {
                return Err(TopologyError::DuplicateDcName(dc.id).into());
            }
        }
        let mut pairs: Vec<(u16, u16)> = Vec::with_capacity(self.links.len());
        for l in &self.links {
            for end in [l.a, l.b] {
                if !self.dcs.iter().any(|d| d.id == end) {
                    return Err(TopologyError::UnknownDc(end).into());
                }
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLink(l.a).into());
            }
            if l.capacity_bps == 0 {
                return Err(TopologyError::ZeroLinkCapacity { a: l.a, b: l.b }.into());
            }
            pairs.push((l.a.min(l.b), l.a.max(l.b)));
        }
        pairs.sort_unstable();
        if let Some(w) = pairs.windows(2).find(|w| w.first() == w.get(1)) {
            let (a, b) = w.first().copied().unwrap_or_default();
            return Err(TopologyError::DuplicateLink { a, b }.into());
        }
        for dc in &self.dcs {
            let count = self
                .links
                .iter()
                .filter(|l| l.other(dc.id).is_some())
                .count();
            if count > MAX_PORTS {
                return Err(TopologyError::TooManyPorts {
                    switch: dc.id,
                    count,
                }
                .into());
            }
        }
        Ok(())
    }

    /// The id of the DC called `name` (ASCII case-insensitive), or whose id
    /// is `name` written as a number.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("bso13").unwrap();
    /// assert_eq!(t.dc_id("DC13"), Some(13));
    /// assert_eq!(t.dc_id("dc2"), Some(2));
    /// assert_eq!(t.dc_id("7"), Some(7));
    /// assert_eq!(t.dc_id("DC14"), None);
    /// ```
    pub fn dc_id(&self, name: &str) -> Option<u16> {
        if let Some(dc) = self.dcs.iter().find(|d| d.name.eq_ignore_ascii_case(name)) {
            return Some(dc.id);
        }
        let id: u16 = name.parse().ok()?;
        self.dcs.iter().any(|d| d.id == id).then_some(id)
    }

    /// The DC with id `id`.
    pub fn dc(&self, id: u16) -> Option<&Dc> {
        self.dcs.iter().find(|d| d.id == id)
    }

    /// The ports of `switch`: its links sorted by neighbour id, numbered
    /// from 0. Empty for an unknown DC.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("testbed8").unwrap();
    /// let ports = t.ports(1);
    /// let neighbors: Vec<u16> = ports.iter().map(|p| p.neighbor).collect();
    /// assert_eq!(neighbors, [2, 3, 4, 5, 6, 7]);
    /// assert_eq!(ports[4].port.0, 4); // port 4 leads to DC6
    /// ```
    pub fn ports(&self, switch: u16) -> Vec<SwitchPort> {
        let mut links: Vec<(u16, usize)> = self
            .links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.other(switch).map(|n| (n, i)))
            .collect();
        links.sort_unstable();
        links
            .into_iter()
            .take(MAX_PORTS)
            .enumerate()
            .map(|(p, (neighbor, link))| SwitchPort {
                port: PortId(p as u8),
                neighbor,
                link,
            })
            .collect()
    }

    /// The link between two DCs, if any.
    pub fn link_between(&self, a: u16, b: u16) -> Option<&Link> {
        self.links.iter().find(|l| l.other(a) == Some(b))
    }

    /// Minimum hop count from `a` to `b`, `None` if unreachable.
    pub fn hops(&self, a: u16, b: u16) -> Option<u32> {
        let g = self.graph();
        let (i, j) = (g.index(a)?, g.index(b)?);
        g.to_dst(j).hops.get(i).copied().flatten()
    }

    /// The neighbours of `switch` that lie on a minimum-hop path to `dst`,
    /// in port order (ascending id). Empty if `switch == dst`, either is
    /// unknown, or `dst` is unreachable.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("testbed8").unwrap();
    /// assert_eq!(t.next_hops(1, 8), [2, 3, 4, 5, 6, 7]);
    /// assert_eq!(t.next_hops(1, 3), [3]);
    /// ```
    pub fn next_hops(&self, switch: u16, dst: u16) -> Vec<u16> {
        let g = self.graph();
        let (Some(s), Some(d)) = (g.index(switch), g.index(dst)) else {
            return Vec::new();
        };
        let to = g.to_dst(d);
        g.next_hops(&to, s)
            .into_iter()
            .filter_map(|(u, _, _)| g.id(u))
            .collect()
    }

    /// The best minimum-hop path from `from` to `dst`: the least summed
    /// delay (microseconds) among minimum-hop paths, ties broken by the
    /// larger bottleneck capacity. Returns `(delay_us, bottleneck_bps)`;
    /// `(0, u64::MAX)` when `from == dst`.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("bso13").unwrap();
    /// // DC6 -> DC12: via DC10 (1 + 1 ms, 100 G) beats via DC9 (5 + 5 ms).
    /// assert_eq!(t.best_min_hop_path(6, 12), Some((2_000, 100_000_000_000)));
    /// ```
    pub fn best_min_hop_path(&self, from: u16, dst: u16) -> Option<(u64, u64)> {
        let g = self.graph();
        let (i, j) = (g.index(from)?, g.index(dst)?);
        g.to_dst(j).best.get(i).copied().flatten()
    }

    /// The least one-way delay from `a` to `b` over any path (Dijkstra),
    /// microseconds; `None` if unreachable or unknown.
    ///
    /// ```
    /// # use lcmp_tables::Topology;
    /// let t = Topology::embedded("testbed8").unwrap();
    /// assert_eq!(t.shortest_delay_us(1, 8), Some(10_000)); // via DC6, 2 x 5 ms
    /// ```
    pub fn shortest_delay_us(&self, a: u16, b: u16) -> Option<u64> {
        let g = self.graph();
        g.least_delay(g.index(a)?, g.index(b)?)
    }

    /// The search graph of the DCs (in [`Topology::dcs`] order) and links
    /// (edge `i` is link `i`).
    pub(crate) fn graph(&self) -> Graph {
        Graph::new(
            self.dcs.iter().map(|d| d.id).collect(),
            self.links
                .iter()
                .map(|l| Edge {
                    a: l.a,
                    b: l.b,
                    capacity_bps: l.capacity_bps,
                    delay_us: l.delay_us,
                })
                .collect(),
        )
    }
}

fn dcs(n: u16) -> Vec<Dc> {
    (1..=n)
        .map(|id| Dc {
            id,
            name: alloc::format!("DC{id}"),
        })
        .collect()
}

fn link(a: u16, b: u16, gbps: u64, ms: u64) -> Link {
    Link {
        a,
        b,
        capacity_bps: gbps * GBPS,
        delay_us: ms * MS,
    }
}

/// The paper's 8-DC testbed (25 Gbps low class, as the artifact).
fn testbed8() -> Topology {
    let via = [
        (2, 200, 25),
        (3, 200, 250),
        (4, 100, 10),
        (5, 100, 100),
        (6, 25, 5),
        (7, 25, 50),
    ];
    let mut links = Vec::new();
    for (dc, gbps, ms) in via {
        links.push(link(1, dc, gbps, ms));
        links.push(link(dc, 8, gbps, ms));
    }
    Topology {
        name: "testbed8".into(),
        dcs: dcs(8),
        links,
        buffer_bytes: 5_000_000_000,
    }
}

/// BSONetworkSolutions, 13 DCs (paper Fig. 4b).
fn bso13() -> Topology {
    let table = [
        (1, 3, 200, 1),
        (2, 3, 40, 1),
        (2, 6, 40, 1),
        (2, 8, 40, 1),
        (3, 4, 40, 1),
        (3, 5, 200, 5),
        (3, 6, 100, 1),
        (3, 7, 200, 10),
        (4, 5, 40, 1),
        (4, 7, 40, 1),
        (5, 7, 100, 5),
        (5, 11, 200, 5),
        (6, 9, 100, 5),
        (6, 10, 100, 1),
        (7, 11, 200, 10),
        (8, 12, 40, 1),
        (9, 12, 100, 5),
        (10, 12, 100, 1),
        (11, 12, 200, 5),
        (12, 13, 200, 1),
    ];
    let links = table.iter().map(|&(a, b, g, d)| link(a, b, g, d)).collect();
    Topology {
        name: "bso13".into(),
        dcs: dcs(13),
        links,
        buffer_bytes: 6_000_000_000,
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::error::JsonError;
    use alloc::vec;

    #[test]
    fn json_text_up_to_its_limit() {
        let small = r#"{"name":"two","buffer_bytes":1000,"dcs":[{"id":1,"name":"A"},{"id":2,"name":"B"}],"links":[{"a":1,"b":2,"capacity_bps":100,"delay_us":5}]}"#;
        let padded = |len: usize| {
            let mut t = String::from(small);
            t.extend(core::iter::repeat_n(' ', len - small.len()));
            t
        };
        assert!(Topology::from_json(&padded(MAX_TOPOLOGY_JSON)).is_ok());
        for len in [MAX_TOPOLOGY_JSON + 1, MAX_TOPOLOGY_JSON + 2] {
            assert_eq!(
                Topology::from_json(&padded(len)),
                Err(TablesError::InputTooLarge {
                    len,
                    max: MAX_TOPOLOGY_JSON
                })
            );
        }
    }

    #[test]
    fn links_up_to_their_limit() {
        // 1024 DCs, each linked to the next eight (mod 1024): 8192 distinct
        // links, 16 ports a DC.
        let n = MAX_DCS as u16;
        let mut t = Topology {
            name: "ring".into(),
            dcs: dcs(n),
            links: (0..n)
                .flat_map(|i| (1..=8).map(move |k| link(i + 1, (i + k) % n + 1, 1, 1)))
                .collect(),
            buffer_bytes: 1,
        };
        assert_eq!(t.links.len(), MAX_LINKS);
        assert_eq!(t.validate(), Ok(()));
        for extra in [1, 2] {
            t.links.truncate(MAX_LINKS);
            t.links.extend((0..extra).map(|i| link(1, 100 + i, 1, 1)));
            assert_eq!(
                t.validate(),
                Err(TablesError::TooMany {
                    what: Count::Links,
                    count: (MAX_LINKS + usize::from(extra)) as u64
                })
            );
        }
    }

    #[test]
    fn ports_up_to_their_limit() {
        let star = |leaves: u16| Topology {
            name: "star".into(),
            dcs: dcs(leaves + 1),
            links: (2..=leaves + 1).map(|l| link(1, l, 1, 1)).collect(),
            buffer_bytes: 1,
        };
        assert_eq!(star(MAX_PORTS as u16).validate(), Ok(()));
        assert_eq!(
            star(MAX_PORTS as u16 + 1).validate(),
            Err(TopologyError::TooManyPorts {
                switch: 1,
                count: MAX_PORTS + 1
            }
            .into())
        );
    }

    #[test]
    fn dcs_by_name_or_id_and_links_between() {
        let t = Topology {
            name: "three".into(),
            dcs: dcs(3),
            links: vec![link(1, 2, 1, 1), link(3, 2, 1, 1)],
            buffer_bytes: 1,
        };
        assert_eq!(t.dc_id("dc3"), Some(3), "by name, any case");
        assert_eq!(t.dc_id("2"), Some(2), "by id");
        assert_eq!(t.dc_id("9"), None, "no such id");
        assert_eq!(t.dc_id("DC9"), None, "no such name");
        assert_eq!(t.link_between(2, 3), t.links.get(1));
        assert_eq!(t.link_between(1, 2), t.links.first());
        assert_eq!(t.link_between(1, 3), None);
    }

    #[test]
    fn embedded_are_valid() {
        for name in EMBEDDED {
            let t = Topology::embedded(name).expect("embedded");
            assert_eq!(t.validate(), Ok(()), "{name}");
            assert_eq!(t.name, name);
        }
        assert_eq!(
            Topology::embedded("testbed8").map(|t| t.links.len()),
            Some(12)
        );
        assert_eq!(Topology::embedded("bso13").map(|t| t.links.len()), Some(20));
    }

    #[test]
    fn testbed8_paths() {
        let t = testbed8();
        assert_eq!(t.next_hops(1, 8), vec![2, 3, 4, 5, 6, 7]);
        assert_eq!(t.next_hops(8, 1), vec![2, 3, 4, 5, 6, 7]);
        assert_eq!(t.next_hops(2, 8), vec![8]);
        assert_eq!(t.next_hops(1, 1), Vec::<u16>::new());
        // DC2 -> DC3 goes back through DC1 or DC8 (two hops each).
        assert_eq!(t.next_hops(2, 3), vec![1, 8]);
        assert_eq!(t.hops(1, 8), Some(2));
        // Via DC4 the best min-hop path is 2 x 10 ms at 100 G.
        assert_eq!(t.best_min_hop_path(4, 8), Some((10_000, 100 * GBPS)));
        assert_eq!(t.best_min_hop_path(1, 8), Some((10_000, 25 * GBPS)));
        assert_eq!(t.shortest_delay_us(2, 3), Some(275_000));
    }

    #[test]
    fn bso13_paths() {
        let t = bso13();
        // DC1's only link is to DC3.
        assert_eq!(t.ports(1).len(), 1);
        assert_eq!(t.next_hops(1, 13), vec![3]);
        // DC3 -> DC12: 3 hops via DC2 (2-8-12), DC5 (5-11-12), DC6 (6-9-12,
        // 6-10-12), DC7 (7-11-12).
        assert_eq!(t.hops(3, 12), Some(3));
        assert_eq!(t.next_hops(3, 12), vec![2, 5, 6, 7]);
        // Via DC6: 6-10-12 is 1 + 1 ms at 100 G, better than 6-9-12.
        assert_eq!(t.best_min_hop_path(6, 12), Some((2_000, 100 * GBPS)));
        // DC1 -> DC13 least delay: 1-3-6-10-12-13 = 1+1+1+1+1 ms.
        assert_eq!(t.shortest_delay_us(1, 13), Some(5_000));
        // Port order of DC3: neighbours 1, 2, 4, 5, 6, 7.
        let n: Vec<u16> = t.ports(3).iter().map(|p| p.neighbor).collect();
        assert_eq!(n, vec![1, 2, 4, 5, 6, 7]);
    }

    #[test]
    fn validation_errors() {
        let base = testbed8();
        let mut t = base.clone();
        t.buffer_bytes = 0;
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::ZeroBuffer))
        );
        let mut t = base.clone();
        t.dcs.push(Dc {
            id: 3,
            name: "X".into(),
        });
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::DuplicateDcId(3)))
        );
        let mut t = base.clone();
        t.dcs.push(Dc {
            id: 9,
            name: "dc3".into(),
        });
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::DuplicateDcName(9)))
        );
        let mut t = base.clone();
        t.links.push(link(8, 2, 1, 1));
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::DuplicateLink {
                a: 2,
                b: 8
            }))
        );
        let mut t = base.clone();
        t.links.push(link(3, 3, 1, 1));
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::SelfLink(3)))
        );
        let mut t = base.clone();
        t.links.push(link(3, 30, 1, 1));
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::UnknownDc(30)))
        );
        let mut t = base.clone();
        t.links.push(link(1, 8, 0, 1));
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::ZeroLinkCapacity {
                a: 1,
                b: 8
            }))
        );
        let mut t = base;
        t.dcs.push(Dc {
            id: 9,
            name: String::new(),
        });
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::EmptyDcName(9)))
        );
    }

    #[test]
    fn too_many_ports() {
        let mut t = Topology {
            name: "star".into(),
            dcs: dcs(70),
            links: Vec::new(),
            buffer_bytes: 1,
        };
        for b in 2..=70 {
            t.links.push(link(1, b, 1, 1));
        }
        assert_eq!(
            t.validate(),
            Err(TablesError::Topology(TopologyError::TooManyPorts {
                switch: 1,
                count: 69
            }))
        );
    }

    quickcheck::quickcheck! {
        fn from_json_never_panics(text: String) -> bool {
            let _ = Topology::from_json(&text);
            true
        }

        // The panic check above, with results: a topology written as JSON
        // reads back equal when it is valid, or fails with the fault
        // `validate` names (never a JSON error); any cut of that JSON is a
        // JSON error.
        fn json_round_trips_or_names_the_fault(
            ids: Vec<(u8, bool)>,
            links: Vec<(u8, u8, u8, u16)>,
            buffer: u8,
            cut: usize
        ) -> bool {
            let t = Topology {
                name: "q".into(),
                dcs: ids
                    .iter()
                    .take(12)
                    .map(|&(id, named)| Dc {
                        id: u16::from(id % 14),
                        name: if named { alloc::format!("DC{}", id % 14) } else { String::new() },
                    })
                    .collect(),
                links: links
                    .iter()
                    .take(30)
                    .map(|&(a, b, gbps, ms)| Link {
                        a: u16::from(a % 14),
                        b: u16::from(b % 14),
                        capacity_bps: u64::from(gbps % 4) * 1_000_000_000,
                        delay_us: u64::from(ms),
                    })
                    .collect(),
                buffer_bytes: u64::from(buffer % 3),
            };
            let Ok(text) = serde_json::to_string(&t) else { return false };
            let read = match (Topology::from_json(&text), t.validate()) {
                (Ok(back), Ok(())) => back == t,
                (Err(e), Err(fault)) => e == fault && !matches!(e, TablesError::Json(JsonError { .. })),
                _ => false,
            };
            let cut = text.get(..cut % text.len()).unwrap_or_default();
            read && matches!(Topology::from_json(cut), Err(TablesError::Json(JsonError { .. })))
        }

        fn random_graphs_never_panic(links: Vec<(u8, u8, u8, u16)>, s: u8, d: u8) -> bool {
            let mut t = Topology { name: "r".into(), dcs: dcs(12), links: Vec::new(), buffer_bytes: 1 };
            for (a, b, c, ms) in links.into_iter().take(40) {
                let (a, b) = (u16::from(a % 12) + 1, u16::from(b % 12) + 1);
                t.links.push(Link { a, b, capacity_bps: u64::from(c), delay_us: u64::from(ms) });
            }
            let (s, d) = (u16::from(s % 13), u16::from(d % 13));
            if t.validate().is_ok() {
                // Every next hop is one hop closer.
                let h = t.hops(s, d);
                for n in t.next_hops(s, d) {
                    if t.hops(n, d).map(|x| x + 1) != h {
                        return false;
                    }
                }
                let _ = t.best_min_hop_path(s, d);
                let _ = t.shortest_delay_us(s, d);
                let _ = crate::build_tables(&t, s, &crate::BuildOptions {
                    saturation: crate::Saturation::Auto,
                    metric: crate::PathMetric::Path,
                    ..crate::BuildOptions::default()
                });
            }
            true
        }
    }

    #[test]
    fn json_round_trip_and_errors() {
        let t = bso13();
        let text = serde_json::to_string(&t).expect("serialise");
        assert_eq!(Topology::from_json(&text), Ok(t));
        assert!(matches!(
            Topology::from_json(r#"{"name":"x","dcs":[],"links":[],"buffer_bytes":1,"extra":1}"#),
            Err(TablesError::Json(JsonError { line: 1, .. }))
        ));
        assert!(matches!(
            Topology::from_json("{"),
            Err(TablesError::Json(JsonError { .. }))
        ));
    }

    // The graph module's searches, through the topology's queries.

    /// Every simple path from `s` to `d` as `(hops, delay, bottleneck, first
    /// neighbour)`, by depth-first search.
    fn all_paths(t: &Topology, s: u16, d: u16) -> Vec<(u32, u64, u64, u16)> {
        fn walk(
            t: &Topology,
            at: u16,
            d: u16,
            seen: &mut Vec<u16>,
            acc: (u32, u64, u64, u16),
            out: &mut Vec<(u32, u64, u64, u16)>,
        ) {
            if at == d {
                out.push(acc);
                return;
            }
            for l in &t.links {
                let Some(n) = l.other(at) else { continue };
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                let first = if acc.0 == 0 { n } else { acc.3 };
                let next = (
                    acc.0 + 1,
                    acc.1 + l.delay_us,
                    acc.2.min(l.capacity_bps),
                    first,
                );
                walk(t, n, d, seen, next, out);
                seen.pop();
            }
        }
        let mut out = Vec::new();
        walk(t, s, d, &mut vec![s], (0, 0, u64::MAX, 0), &mut out);
        out
    }

    quickcheck::quickcheck! {
        fn matches_brute_force(edges: Vec<(u8, u8, u8, u8)>, s: u8, d: u8) -> bool {
            let n = 7u16;
            let mut t = Topology {
                name: "r".into(),
                dcs: (1..=n).map(|id| Dc { id, name: alloc::format!("D{id}") }).collect(),
                links: Vec::new(),
                buffer_bytes: 1,
            };
            for (a, b, c, ms) in edges.into_iter().take(12) {
                let (a, b) = (u16::from(a) % n + 1, u16::from(b) % n + 1);
                if a == b || t.link_between(a, b).is_some() {
                    continue;
                }
                t.links.push(Link { a, b, capacity_bps: u64::from(c % 4) + 1, delay_us: u64::from(ms % 5) });
            }
            let (s, d) = (u16::from(s) % n + 1, u16::from(d) % n + 1);
            let paths = all_paths(&t, s, d);
            let min_hops = paths.iter().map(|p| p.0).min();
            if t.hops(s, d) != min_hops {
                return false;
            }
            let shortest: Vec<_> = paths.iter().filter(|p| Some(p.0) == min_hops).collect();
            let best = shortest.iter().map(|p| (p.1, u64::MAX - p.2)).min().map(|(a, b)| (a, u64::MAX - b));
            let mut firsts: Vec<u16> = if s == d { Vec::new() } else { shortest.iter().map(|p| p.3).collect() };
            firsts.sort_unstable();
            firsts.dedup();
            let least = paths.iter().map(|p| p.1).min();
            t.best_min_hop_path(s, d) == best
                && t.next_hops(s, d) == firsts
                && t.shortest_delay_us(s, d) == least
        }
    }

    #[test]
    fn large_grid_gives_a_typed_error_and_right_paths() {
        // 32 x 32 grid: 1024 DCs, 1984 links; the group count is refused
        // from one search rooted at the switch, before the automatic
        // saturation's search per destination. (How long it takes is a
        // benchmark's business, not a test's.)
        let side = 32u16;
        let id = |r: u16, c: u16| r * side + c + 1;
        let mut t = Topology {
            name: "grid".into(),
            dcs: (1..=side * side)
                .map(|i| Dc {
                    id: i,
                    name: alloc::format!("G{i}"),
                })
                .collect(),
            links: Vec::new(),
            buffer_bytes: 1,
        };
        for r in 0..side {
            for c in 0..side {
                if c + 1 < side {
                    t.links.push(Link {
                        a: id(r, c),
                        b: id(r, c + 1),
                        capacity_bps: 1,
                        delay_us: 1000,
                    });
                }
                if r + 1 < side {
                    t.links.push(Link {
                        a: id(r, c),
                        b: id(r + 1, c),
                        capacity_bps: 1,
                        delay_us: 1000,
                    });
                }
            }
        }
        let opts = crate::BuildOptions {
            saturation: crate::Saturation::Auto,
            metric: crate::PathMetric::Path,
            ..crate::BuildOptions::default()
        };
        assert_eq!(
            crate::build_tables(&t, 1, &opts),
            Err(TablesError::TooMany {
                what: Count::Groups,
                count: 1023
            })
        );
        assert_eq!(t.hops(1, side * side), Some(62));
        assert_eq!(t.next_hops(1, side * side), [2, 33]);
    }
}
