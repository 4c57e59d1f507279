//! The one replay driver: trace events into a [`Decider`], one
//! [`DecisionRecord`] per packet, and the digest of them all.

use lcmp_decide::{Decider, GroupId, Params};

use super::{DecisionRecord, Digest, TraceEvent};
use crate::error::{TablesError, TraceError};

/// What [`replay`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReplaySummary {
    /// The digest of all decisions.
    pub digest: u64,
    /// Events replayed.
    pub events: u32,
    /// Packet decisions made.
    pub decisions: u64,
}

/// Feeds `events` to `decider` in order: packets go to `on_packet` (group =
/// `dst_dc`), samples to `sample`, link events to `set_port_up`, each at
/// [`TraceEvent::now`] under the installed tables' tick rate. Calls `on_decision` once per packet and returns the
/// digest. Stops at the first event the core rejects (a port beyond the
/// decider's capacity) with [`TraceError::Replay`], or at the first error
/// of a fallible source.
///
/// ```
/// # use lcmp_tables::replay::{replay, ReplayDecider, TraceEvent};
/// # use lcmp_decide::{DeciderConfig, FlowKey, PortId};
/// # use core::net::Ipv4Addr;
/// let mut d = ReplayDecider::new(DeciderConfig::default());
/// let flow = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17);
/// let events = [TraceEvent::Packet { t_us: 0, flow, dst_dc: 8 }];
/// let mut n = 0;
/// let s = replay(&mut d, events.iter().copied().map(Ok), |_| n += 1).unwrap();
/// assert_eq!((n, s.decisions), (1, 1)); // no tables: a no-route decision
/// ```
pub fn replay<const P: usize, const F: usize, I, C>(
    decider: &mut Decider<P, F>,
    events: I,
    mut on_decision: C,
) -> Result<ReplaySummary, TablesError>
where
    I: IntoIterator<Item = Result<TraceEvent, TablesError>>,
    C: FnMut(&DecisionRecord),
{
    let mut digest = Digest::new();
    let mut index: u32 = 0;
    for event in events {
        let event = event?;
        // The installed tables' tick rate (the default one before any).
        let now = match decider.tables() {
            Some(t) => event.now(t.params()),
            None => event.now(&Params::PAPER),
        };
        let fail = |error| TablesError::Trace(TraceError::Replay { index, error });
        match event {
            TraceEvent::Packet { t_us, flow, dst_dc } => {
                let group = GroupId(dst_dc);
                let decision = decider.on_packet(now, &flow, group);
                let record = DecisionRecord {
                    index,
                    t_us,
                    flow,
                    group,
                    decision,
                };
                digest.update(&record);
                on_decision(&record);
            }
            TraceEvent::Sample {
                port, queue_bytes, ..
            } => {
                decider.sample(now, port, queue_bytes).map_err(fail)?;
            }
            TraceEvent::Link { port, up, .. } => {
                decider.set_port_up(port, up).map_err(fail)?;
            }
        }
        index = index.saturating_add(1);
    }
    Ok(ReplaySummary {
        digest: digest.value(),
        events: index,
        decisions: digest.decisions(),
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::replay::digest::CRC64;
    use crate::replay::fixtures::sample_events;
    use crate::replay::ReplayDecider;
    use alloc::vec::Vec;
    use lcmp_decide::DeciderConfig;

    #[test]
    fn replay_digest_is_order_sensitive() {
        let events = sample_events();
        let mut d = ReplayDecider::new(DeciderConfig::default());
        // Tables that list port 2, the port the sample is of (a sample of
        // a port the tables do not list stops the replay, below).
        let mut tables = lcmp_decide::Tables::paper_defaults();
        let _ = tables.ports.push(lcmp_decide::PortConfig {
            id: lcmp_decide::PortId(2),
            rate_bps: 100_000_000_000,
            buffer_bytes: 1 << 30,
        });
        d.install(&tables).expect("valid tables");
        let mut seen = Vec::new();
        let s = replay(&mut d, events.iter().copied().map(Ok), |r| seen.push(*r)).expect("replay");
        assert_eq!(s.events, 4);
        assert_eq!(s.decisions, 2);
        assert_eq!(seen.iter().map(|r| r.index).collect::<Vec<_>>(), [1, 3]);
        // Recompute by hand from the records.
        let mut bytes = Vec::new();
        for r in &seen {
            bytes.extend_from_slice(&r.digest_bytes());
        }
        assert_eq!(s.digest, CRC64.checksum(&bytes));
        // CRC-64/XZ check value.
        assert_eq!(CRC64.checksum(b"123456789"), 0x995D_C9BB_DF19_39FA);
        // A sample beyond the port capacity stops the replay, and so does
        // one of a port the tables do not list (here: no tables at all).
        let mut small: Decider<2, 16> = Decider::new(DeciderConfig::default());
        assert!(matches!(
            replay(&mut small, events.iter().copied().map(Ok), |_| {}),
            Err(TablesError::Trace(TraceError::Replay {
                index: 0,
                error: lcmp_decide::Error::PortOutOfRange(2)
            }))
        ));
        let mut bare = ReplayDecider::new(DeciderConfig::default());
        assert!(matches!(
            replay(&mut bare, events.iter().copied().map(Ok), |_| {}),
            Err(TablesError::Trace(TraceError::Replay {
                index: 0,
                error: lcmp_decide::Error::PortNotInTables(2)
            }))
        ));
    }
}
