//! Validation: every kind of invalid table set gets its own typed error,
//! from `build_tables`, `validate_tables` and the blob encoder alike.

use lcmp_decide::tables::{Candidate, Group, GroupId};
use lcmp_decide::{Error, PortConfig, PortId, Setting, Tables};
use lcmp_tables::blob::encode_blob_vec;
use lcmp_tables::{
    build_tables, validate_tables, BuildOptions, Count, Dc, Link, TablesError, Topology,
    TopologyError,
};

fn dc1() -> Tables {
    let topo = Topology::embedded("testbed8").expect("embedded");
    build_tables(&topo, 1, &BuildOptions::default()).expect("build")
}

/// `validate_tables` and `encode_blob` agree on the error.
fn rejects(t: &Tables, want: TablesError) {
    assert_eq!(validate_tables(t), Err(want.clone()));
    assert_eq!(encode_blob_vec(t, 1), Err(want));
}

#[test]
fn core_errors() {
    let mut t = dc1();
    t.groups[0].candidates[0].port = PortId(40);
    rejects(
        &t,
        TablesError::Core(Error::UnknownPort { group: 2, port: 40 }),
    );

    let mut t = dc1();
    t.groups[1].candidates.clear();
    rejects(&t, TablesError::Core(Error::EmptyGroup(3)));

    let mut t = dc1();
    let dup = t.groups[0].clone();
    t.groups.push(dup).expect("room");
    rejects(&t, TablesError::Core(Error::DuplicateGroup(2)));

    let mut t = dc1();
    let p = t.ports[0];
    t.ports.push(p).expect("room");
    rejects(&t, TablesError::Core(Error::DuplicatePort(0)));

    let mut t = dc1();
    let c = t.groups[6].candidates[0];
    t.groups[6].candidates.push(c).expect("room");
    rejects(
        &t,
        TablesError::Core(Error::DuplicateCandidate { group: 8, port: 0 }),
    );

    let mut t = dc1();
    t.groups[6].candidates[2].capacity_bps = 0;
    rejects(
        &t,
        TablesError::Core(Error::ZeroCapacity { group: 8, port: 2 }),
    );

    let mut t = dc1();
    t.ports[3].rate_bps = 0;
    rejects(&t, TablesError::Core(Error::ZeroPortCapacity(3)));

    let mut t = dc1();
    t.capacity_thresholds_bps[4] = t.capacity_thresholds_bps[3];
    rejects(&t, TablesError::Core(Error::InvalidCapacityThresholds));

    let mut t = dc1();
    t.levels[2] = 200;
    rejects(&t, TablesError::Core(Error::InvalidLevels));

    let mut t = dc1();
    t.params.weights.s_cong = 40;
    rejects(
        &t,
        TablesError::Core(Error::ShiftTooLarge(Setting::CongestionShift)),
    );

    let mut t = dc1();
    t.params.weights.alpha = u32::MAX / 2;
    rejects(
        &t,
        TablesError::Core(Error::WeightOverflow(Setting::FusionWeights)),
    );

    let mut t = dc1();
    t.params.delay_shift = 32;
    rejects(
        &t,
        TablesError::Core(Error::ShiftTooLarge(Setting::DelayShift)),
    );
}

#[test]
fn too_many_rate_buckets() {
    // A star of 17 links with 17 different rates.
    let mut t = Tables::paper_defaults();
    for i in 0..17u8 {
        let rate = (u64::from(i) + 1) * 1_000_000_000;
        t.ports
            .push(PortConfig {
                id: PortId(i),
                rate_bps: rate,
                buffer_bytes: 1,
            })
            .expect("room");
    }
    let mut g = Group {
        id: GroupId(1),
        candidates: heapless::Vec::new(),
    };
    g.candidates
        .push(Candidate {
            port: PortId(0),
            delay_units: 1,
            capacity_bps: 1,
        })
        .expect("room");
    t.groups.push(g).expect("room");
    rejects(
        &t,
        TablesError::TooMany {
            what: Count::RateBuckets,
            count: 17,
        },
    );
    t.ports.pop();
    assert_eq!(validate_tables(&t).map(|v| v.tables()), Ok(&t));
}

#[test]
fn too_many_groups() {
    // A chain DC0 - DC1 - ... - DC65: DC0 reaches 65 destinations.
    let dcs = (0..66u16)
        .map(|id| Dc {
            id,
            name: format!("N{id}"),
        })
        .collect();
    let links = (0..65u16)
        .map(|a| Link {
            a,
            b: a + 1,
            capacity_bps: 1_000_000_000,
            delay_us: 1000,
        })
        .collect();
    let topo = Topology {
        name: "chain".into(),
        dcs,
        links,
        buffer_bytes: 1 << 20,
    };
    assert_eq!(
        build_tables(&topo, 0, &BuildOptions::default()),
        Err(TablesError::TooMany {
            what: Count::Groups,
            count: 65
        })
    );
    // One DC fewer and it fits.
    let mut short = topo.clone();
    short.dcs.truncate(65);
    short.links.truncate(64);
    assert_eq!(
        build_tables(&short, 0, &BuildOptions::default()).map(|t| t.groups.len()),
        Ok(64)
    );
}

#[test]
fn too_many_ports() {
    let dcs = (0..70u16)
        .map(|id| Dc {
            id,
            name: format!("N{id}"),
        })
        .collect();
    let links = (1..70u16)
        .map(|b| Link {
            a: 0,
            b,
            capacity_bps: 1_000_000_000,
            delay_us: 1000,
        })
        .collect();
    let star = Topology {
        name: "star".into(),
        dcs,
        links,
        buffer_bytes: 1 << 20,
    };
    assert_eq!(
        build_tables(&star, 0, &BuildOptions::default()),
        Err(TablesError::Topology(TopologyError::TooManyPorts {
            switch: 0,
            count: 69
        }))
    );
}
