//! The JSON rendering of a switch's tables for people (`lcmp tables
//! --json`): the installed values plus what the core derives from them
//! (per-candidate scores, queue thresholds, trend tables). Schema in
//! `docs/tables.md`.

use alloc::string::String;
use alloc::vec::Vec;

use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::{Params, Tables};
use serde::Serialize;

use crate::derived::{scale_thresholds, trend_tables, TrendTable, DEFAULT_TREND_INTERVAL_TICKS};
use crate::error::TablesError;
use crate::topology::Topology;

/// Where the tables came from, when known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The topology's name.
    pub topology: String,
    /// The switch's DC id.
    pub switch: u16,
    /// The switch's DC name.
    pub switch_name: String,
}

/// A port with its queue thresholds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortReport {
    /// Port number.
    pub port: u8,
    /// Neighbour DC id (with a topology).
    pub neighbor: Option<u16>,
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Buffer, bytes.
    pub buffer_bytes: u64,
    /// `qthr[0..N]`, bytes: the port's explicit table, or its buffer's.
    pub queue_thresholds_bytes: Vec<u64>,
}

/// A candidate with its precomputed path scores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CandidateReport {
    /// Egress port.
    pub port: u8,
    /// Neighbour DC id (with a topology).
    pub neighbor: Option<u16>,
    /// Delay, delay units.
    pub delay_units: u32,
    /// Path capacity, bits per second.
    pub capacity_bps: u64,
    /// Alg. 1.
    pub delay_score: u8,
    /// Alg. 2.
    pub cap_score: u8,
    /// Eq. 2.
    pub c_path: u8,
}

/// A route group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupReport {
    /// Group id (destination DC id).
    pub id: u16,
    /// Destination DC name (with a topology).
    pub name: Option<String>,
    /// Candidates in installation order.
    pub candidates: Vec<CandidateReport>,
}

/// Everything `lcmp tables --json` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TablesReport {
    /// Blob format version these tables encode to.
    pub format_version: u16,
    /// Generation number.
    pub generation: u64,
    /// Origin, when built from a topology.
    pub origin: Option<Origin>,
    /// Scalar settings.
    pub params: Params,
    /// Level scores.
    pub levels: Vec<u8>,
    /// Capacity thresholds, bits per second.
    pub capacity_thresholds_bps: Vec<u64>,
    /// Ports.
    pub ports: Vec<PortReport>,
    /// Trend tables at [`DEFAULT_TREND_INTERVAL_TICKS`], one per rate.
    pub trend_tables: Vec<TrendTable>,
    /// Route groups.
    pub groups: Vec<GroupReport>,
}

impl TablesReport {
    /// Builds the report; `origin` names the topology and switch when the
    /// tables were built from one (neighbours and names are then filled in).
    pub fn new(
        tables: &Tables,
        generation: u64,
        origin: Option<(&Topology, u16)>,
    ) -> Result<TablesReport, TablesError> {
        let compiled = tables.compile(MAX_PORTS)?;
        let ports_of = origin.map(|(t, s)| t.ports(s)).unwrap_or_default();
        let neighbor = |port: u8| {
            ports_of
                .iter()
                .find(|p| p.port.0 == port)
                .map(|p| p.neighbor)
        };
        let ports = tables
            .ports
            .iter()
            .map(|p| PortReport {
                port: p.id.0,
                neighbor: neighbor(p.id.0),
                rate_bps: p.rate_bps,
                buffer_bytes: p.buffer_bytes,
                queue_thresholds_bytes: scale_thresholds(compiled.queue_scale(p)).to_vec(),
            })
            .collect();
        let groups = tables
            .groups
            .iter()
            .map(|g| {
                let scores = compiled.group(g.id);
                GroupReport {
                    id: g.id.0,
                    name: origin
                        .and_then(|(t, _)| t.dc(g.id.0))
                        .map(|d| d.name.clone()),
                    candidates: g
                        .candidates
                        .iter()
                        .map(|c| {
                            let s =
                                scores.and_then(|s| s.candidates.iter().find(|k| k.port == c.port));
                            CandidateReport {
                                port: c.port.0,
                                neighbor: neighbor(c.port.0),
                                delay_units: c.delay_units,
                                capacity_bps: c.capacity_bps,
                                delay_score: s.map_or(0, |s| s.delay_score),
                                cap_score: s.map_or(0, |s| s.cap_score),
                                c_path: s.map_or(0, |s| s.c_path),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(TablesReport {
            format_version: crate::blob::BLOB_VERSION,
            generation,
            origin: origin.map(|(t, s)| Origin {
                topology: t.name.clone(),
                switch: s,
                switch_name: t.dc(s).map(|d| d.name.clone()).unwrap_or_default(),
            }),
            params: tables.params,
            levels: tables.levels.to_vec(),
            capacity_thresholds_bps: tables.capacity_thresholds_bps.to_vec(),
            ports,
            trend_tables: trend_tables(tables, DEFAULT_TREND_INTERVAL_TICKS)?.to_vec(),
            groups,
        })
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn testbed8_report() {
        let topo = Topology::embedded("testbed8").expect("embedded");
        let t = crate::build_tables(&topo, 1, &crate::BuildOptions::default()).expect("build");
        let r = TablesReport::new(&t, 4, Some((&topo, 1))).expect("report");
        let g8 = r.groups.iter().find(|g| g.id == 8).expect("group 8");
        assert_eq!(g8.name.as_deref(), Some("DC8"));
        // C_path of the six candidates, by hand (Alg. 1-2, Eq. 2, paper
        // weights; 400 G top class, 10 levels):
        // via DC2: 25 ms -> 199, 200 G -> 128: (597 + 128) >> 2 = 181
        // via DC3: 250 ms -> 255, 200 G -> 128: (765 + 128) >> 2 = 223
        // via DC4: 10 ms -> 79, 100 G -> 204: (237 + 204) >> 2 = 110
        // via DC5: 100 ms -> 255, 100 G -> 204: (765 + 204) >> 2 = 242
        // via DC6: 5 ms -> 39, 25 G -> 255: (117 + 255) >> 2 = 93
        // via DC7: 50 ms -> 255, 25 G -> 255: (765 + 255) >> 2 = 255
        let c: Vec<(Option<u16>, u8)> = g8
            .candidates
            .iter()
            .map(|c| (c.neighbor, c.c_path))
            .collect();
        assert_eq!(
            c,
            [
                (Some(2), 181),
                (Some(3), 223),
                (Some(4), 110),
                (Some(5), 242),
                (Some(6), 93),
                (Some(7), 255)
            ]
        );
        assert_eq!(r.ports[0].queue_thresholds_bytes[1], 500_000_000);
        assert_eq!(r.trend_tables.len(), 3);
        let json = r.to_json();
        let v: serde_json::Value = serde_json::from_str(&json).expect("json");
        assert_eq!(v["origin"]["switch_name"], "DC1");
        assert_eq!(v["groups"][6]["candidates"][4]["c_path"], 93);
        assert_eq!(v["params"]["cut"], 204);
    }
}
