//! The in-order arrival model (docs/design.md, "The in-order promise"),
//! written once for the two checks of the promise: the stickiness
//! property (`lcmp-decide/tests/stickiness.rs`) and the fuzz crate's event
//! driver (`fuzz/src/events.rs`, which includes this file by path). A
//! forwarded packet arrives at its send time plus its path's delay plus
//! the queueing delay of the sample in force at its port; a flow that
//! changes port outside a failover or a withdrawal must arrive after its
//! latest earlier packet, and on one path nothing overtakes (FIFO).

use lcmp_decide::tables::CompiledTables;
use lcmp_decide::{GroupId, PortId};

/// What the model knows about a forwarded flow: its port and group, and
/// the latest arrival of its packets (picoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub port: PortId,
    pub group: GroupId,
    pub latest_ps: u128,
}

/// When a packet of `group` sent at absolute tick `abs` on `port` arrives,
/// picoseconds: the send time, plus the candidate's delay (`delay_units`
/// of `delay_unit_ticks`), plus `queue_bytes` (the port's sample in
/// force, at most its buffer: a queue holds no more) at the port's rate;
/// ticks at the tables' `ticks_per_second`. Rounded down (the decider
/// rounds its bound up, so it must cover this).
pub fn arrival_ps(
    t: &CompiledTables,
    group: GroupId,
    port: PortId,
    abs: u64,
    queue_bytes: u64,
) -> u128 {
    let p = t.params();
    let tick_ps = 1_000_000_000_000u128 / u128::from(p.ticks_per_second.max(1));
    let delay_units = t
        .group(group)
        .and_then(|g| g.candidates.iter().find(|c| c.port == port))
        .map_or(0, |c| c.delay_units);
    let delay = u128::from(delay_units) * u128::from(p.delay_unit_ticks) * tick_ps;
    let queue_ps = t.port(port).map_or(0, |cfg| {
        u128::from(queue_bytes.min(cfg.buffer_bytes)) * 8 * 1_000_000_000_000
            / u128::from(cfg.rate_bps.max(1))
    });
    u128::from(abs) * tick_ps + delay + queue_ps
}

/// The promise for one forwarded packet of a flow whose latest earlier
/// packet is `before` (the flow as the harness follows it in this
/// group, or `None`): `Err(ps)`, how much earlier it arrives, when it
/// moved to another port outside an exemption (`exempt`: a failover) and
/// does not arrive after `before`; else `Ok(moved)`, whether a move was
/// checked.
pub fn check(
    before: Option<&Arrival>,
    port: PortId,
    arrival_ps: u128,
    exempt: bool,
) -> Result<bool, u128> {
    match before {
        Some(f) if f.port != port && !exempt => {
            if arrival_ps > f.latest_ps {
                Ok(true)
            } else {
                Err(f.latest_ps - arrival_ps)
            }
        }
        _ => Ok(false),
    }
}

/// The flow's arrival after this packet: the latest of its earlier ones
/// and this one (one path is FIFO, so nothing overtakes), or this one
/// alone after an exempt move (its history restarts).
pub fn after(
    before: Option<&Arrival>,
    group: GroupId,
    port: PortId,
    arrival_ps: u128,
    exempt: bool,
) -> Arrival {
    let latest_ps = before
        .filter(|_| !exempt)
        .map_or(arrival_ps, |f| f.latest_ps.max(arrival_ps));
    Arrival {
        port,
        group,
        latest_ps,
    }
}
