//! The tables a control plane installs (§3.1 "Bootstrap", Fig. 3): level
//! scores, capacity thresholds, per-port link rate and buffer, route groups
//! with per-candidate path attributes, weights and selection settings.
//!
//! [`Tables`] is the plain, serialisable description; [`Tables::compile`]
//! validates it once and precomputes every per-candidate score, so the
//! per-packet path never re-checks anything (validate at the edge).

//!
//! Split by concern: [`ids`](self) (identifiers and limits), the
//! description and its validation, the compiled form, and the slot a
//! decider keeps it in (owned, or shared by several deciders); every item is
//! re-exported here, so paths stay `lcmp_decide::tables::*`.

mod compiled;
mod description;
mod ids;
mod slot;

pub use compiled::{CompiledCandidate, CompiledGroup, CompiledTables, PortContext};
pub use description::*;
pub use ids::{
    GroupId, PortId, DIRECT_GROUP_IDS, MAX_CANDIDATES, MAX_GROUPS, MAX_LEVELS, MAX_PORTS,
    MAX_QUEUE_TABLES,
};
pub use slot::{OwnedTables, TablesSlot};

/// The paper's defaults with ports `0..n`, each of `rate_bps` and
/// `buffer_bytes` (the unit tests' starting point).
#[cfg(test)]
pub(crate) fn paper_with_ports(n: u8, rate_bps: u64, buffer_bytes: u64) -> Tables {
    let mut t = Tables::paper_defaults();
    for i in 0..n {
        let _ = t.ports.push(PortConfig {
            id: PortId(i),
            rate_bps,
            buffer_bytes,
        });
    }
    t
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::error::{Error, Setting};
    use heapless::Vec;

    fn tables() -> Tables {
        let mut t = paper_with_ports(3, 100_000_000_000, 1 << 30);
        let mut g = Group {
            id: GroupId(8),
            candidates: Vec::new(),
        };
        let _ = g.candidates.push(Candidate {
            port: PortId(0),
            delay_units: 5,
            capacity_bps: 25_000_000_000,
        });
        let _ = g.candidates.push(Candidate {
            port: PortId(1),
            delay_units: 10,
            capacity_bps: 100_000_000_000,
        });
        let _ = t.groups.push(g);
        t
    }

    #[test]
    fn compiles_paper_scores() {
        let c = tables().compile(8).expect("valid");
        let g = c.group(GroupId(8)).expect("group");
        let got: std::vec::Vec<_> = g
            .candidates
            .iter()
            .map(|c| (c.delay_score, c.cap_score, c.c_path))
            .collect();
        assert_eq!(got, [(39, 255, 93), (79, 204, 110)]);
        assert!(c.group(GroupId(1)).is_none());
    }

    #[test]
    fn group_lookup_and_candidate_mask() {
        let mut t = tables();
        // A large id (binary-search path) beside the direct-indexed 8.
        let mut g = t.groups[0].clone();
        g.id = GroupId(4000);
        g.candidates.truncate(1);
        let _ = t.groups.push(g);
        let c = t.compile(8).expect("valid");
        assert_eq!(c.group(GroupId(8)).map(|g| g.port_mask), Some(0b11));
        assert_eq!(c.group(GroupId(4000)).map(|g| g.port_mask), Some(0b01));
        for id in [0u16, 7, 9, 255, 256, 3999, 4001, u16::MAX] {
            assert!(c.group(GroupId(id)).is_none(), "group {id}");
        }
        assert!(c.is_candidate(GroupId(8), PortId(1)));
        assert!(
            !c.is_candidate(GroupId(8), PortId(2)),
            "port 2 is listed, not a candidate"
        );
        assert!(!c.is_candidate(GroupId(4000), PortId(1)));
        assert!(!c.is_candidate(GroupId(9), PortId(0)), "unknown group");
        assert!(!c.is_candidate(GroupId(8), PortId(200)));
    }

    #[test]
    fn rejects_each_invalid_table() {
        let mut t = tables();
        t.groups[0].candidates[0].port = PortId(7);
        assert_eq!(t.compile(8), Err(Error::UnknownPort { group: 8, port: 7 }));

        let mut t = tables();
        t.groups[0].candidates[1].port = PortId(0);
        assert_eq!(
            t.compile(8),
            Err(Error::DuplicateCandidate { group: 8, port: 0 })
        );

        let mut t = tables();
        let g = t.groups[0].clone();
        let _ = t.groups.push(g);
        assert_eq!(t.compile(8), Err(Error::DuplicateGroup(8)));

        let mut t = tables();
        t.groups[0].candidates.clear();
        assert_eq!(t.compile(8), Err(Error::EmptyGroup(8)));

        let mut t = tables();
        t.groups[0].candidates[0].capacity_bps = 0;
        assert_eq!(t.compile(8), Err(Error::ZeroCapacity { group: 8, port: 0 }));

        let mut t = tables();
        t.ports[1].id = PortId(0);
        assert_eq!(t.compile(8), Err(Error::DuplicatePort(0)));

        let mut t = tables();
        t.ports[2].rate_bps = 0;
        assert_eq!(t.compile(8), Err(Error::ZeroPortCapacity(2)));

        assert_eq!(tables().compile(2), Err(Error::PortOutOfRange(2)));

        let mut t = tables();
        t.levels[3] = t.levels[2];
        assert_eq!(t.compile(8), Err(Error::InvalidLevels));

        let mut t = tables();
        t.capacity_thresholds_bps.pop();
        assert_eq!(t.compile(8), Err(Error::InvalidCapacityThresholds));

        let mut t = tables();
        t.params.weights.s_cong = 40;
        assert_eq!(
            t.compile(8),
            Err(Error::ShiftTooLarge(Setting::CongestionShift))
        );

        let mut t = tables();
        t.params.low_water = 250;
        assert_eq!(
            t.compile(8),
            Err(Error::InvalidSetting(Setting::WaterMarks))
        );
    }
}
