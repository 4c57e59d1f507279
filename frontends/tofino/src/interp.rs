//! An interpreter of the exported entries with Tofino match semantics: the
//! reference the equivalence tests run against `Decider::on_packet`.
//!
//! It evaluates the ingress of `lcmp.p4` for the first packet of a flow
//! (the flow-pin register is empty, so the selection decides) and the
//! egress queue quantisation, reading only the [`EntrySet`], the
//! [`Schema`] and the hash field list and polynomial of [`crate::hash`]:
//!
//! * exact keys match equal values; an LPM key matches when the top
//!   `prefix_len` bits agree, and the longest prefix wins; ternary keys match
//!   under their mask and range keys inclusively, and among several matches
//!   the highest priority wins (P4Runtime convention);
//! * two entries that tie are an error ([`InterpError::Ambiguous`]), since
//!   the ASIC's choice would then be unspecified.
//!
//! [`Interpreter::ingress`] evaluates a flow's first packet without state;
//! [`Interpreter::packet`] also runs the flow-pin registers
//! ([`PinRegisters`]: signature, last seen, port, one cell per index) and
//! the resubmit of a packet whose pinned port is down, as `lcmp.p4` does.

use core::fmt;

use std::collections::BTreeMap;

use crate::hash::{Headers, CRC32, CRC32C, ECMP_FIELDS, SIG_FIELDS};
use crate::model::{EntrySet, Match, Program, TableEntry};
use crate::schema::{names, MatchKind, Schema};

/// An interpreter failure: the entries would make the ASIC's behaviour
/// unspecified, or a static table is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InterpError {
    /// Two entries of this table match with the same precedence.
    Ambiguous(&'static str),
    /// The table is not in the schema.
    UnknownTable(&'static str),
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::Ambiguous(t) => write!(f, "{t}: two entries match with equal precedence"),
            InterpError::UnknownTable(t) => write!(f, "{t}: not in the schema"),
        }
    }
}

impl core::error::Error for InterpError {}

/// The intermediate values of one ingress pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressTrace {
    /// `meta.group`, if the destination is an LCMP route.
    pub group: Option<u64>,
    /// `meta.hash` (CRC-32 of the field list, XOR the seed).
    pub hash: u32,
    /// `meta.k`.
    pub k: Option<u64>,
    /// `meta.rsum`.
    pub rsum: Option<u64>,
    /// `meta.bucket`.
    pub bucket: Option<u64>,
    /// The egress port, if the packet is forwarded.
    pub port: Option<u64>,
    /// The flow-pin register held this flow (stateful passes only).
    pub pin_hit: bool,
    /// The packet was resubmitted because its pinned port is down.
    pub resubmitted: bool,
}

/// One flow-pin cell: `lcmp_pin` (`lo` signature, `hi` last seen) and
/// `lcmp_pin_port`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PinCell {
    /// CRC-32C signature of the 5-tuple.
    pub sig: u32,
    /// Last seen, `ingress_mac_tstamp[47:16]`.
    pub seen: u32,
    /// The pinned port.
    pub port: u16,
}

/// The flow-pin registers (cells never written read as zero, as after
/// the program is loaded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PinRegisters {
    /// Written cells by index.
    pub cells: BTreeMap<u64, PinCell>,
}

/// The signature and pin index of a flow (`meta.sig`, `meta.pin_idx`).
pub fn pin_slot(h: &Headers, pin_slots: u32) -> (u32, u64) {
    let sig = CRC32C.checksum(&h.field_list_bytes(SIG_FIELDS));
    let mask = u64::from(pin_slots.max(1).next_power_of_two()) - 1;
    (sig, u64::from(sig) & mask)
}

/// Evaluates an [`EntrySet`] as the ASIC would.
#[derive(Clone, Debug)]
pub struct Interpreter<'a> {
    program: &'a Program,
    schema: Schema,
    /// Entries by table, in installation order.
    by_table: BTreeMap<&'static str, Vec<&'a TableEntry>>,
    /// Entries of all-exact tables by key values (a hash table, as the
    /// ASIC's exact match; several entries under one key are a conflict).
    exact: BTreeMap<(&'static str, Vec<u64>), Vec<&'a TableEntry>>,
}

impl<'a> Interpreter<'a> {
    /// An interpreter of `entries` on the program `program`.
    pub fn new(program: &'a Program, entries: &'a EntrySet) -> Self {
        let schema = program.schema();
        let mut by_table: BTreeMap<&'static str, Vec<&'a TableEntry>> = BTreeMap::new();
        let mut exact: BTreeMap<(&'static str, Vec<u64>), Vec<&'a TableEntry>> = BTreeMap::new();
        for e in &entries.entries {
            by_table.entry(e.table).or_default().push(e);
            let values: Option<Vec<u64>> = e
                .matches
                .iter()
                .map(|m| match *m {
                    Match::Exact(v) => Some(v),
                    _ => None,
                })
                .collect();
            if let Some(values) = values {
                exact.entry((e.table, values)).or_default().push(e);
            }
        }
        Interpreter {
            program,
            schema,
            by_table,
            exact,
        }
    }

    /// The entry of `table` that a lookup with key values `keys` hits.
    pub fn lookup(
        &self,
        table: &'static str,
        keys: &[u64],
    ) -> Result<Option<&'a TableEntry>, InterpError> {
        let t = self
            .schema
            .table(table)
            .ok_or(InterpError::UnknownTable(table))?;
        if t.keys.iter().all(|k| k.kind == MatchKind::Exact) {
            return match self.exact.get(&(table, keys.to_vec())).map(Vec::as_slice) {
                None | Some([]) => Ok(None),
                Some([e]) => Ok(Some(*e)),
                Some(_) => Err(InterpError::Ambiguous(table)),
            };
        }
        let mut best: Option<(&'a TableEntry, u64)> = None;
        let mut tie = false;
        for &e in self.by_table.get(table).map_or(&[][..], Vec::as_slice) {
            let mut rank = 0u64;
            let mut hit = true;
            for ((m, k), &v) in e.matches.iter().zip(t.keys).zip(keys) {
                let ok = match *m {
                    Match::Exact(x) => v == x,
                    Match::Lpm { value, prefix_len } => {
                        rank = u64::from(prefix_len);
                        let shift = k.bits.saturating_sub(prefix_len);
                        prefix_len == 0 || (v >> shift) == (value >> shift)
                    }
                    Match::Ternary { value, mask } => v & mask == value & mask,
                    Match::Range { low, high } => low <= v && v <= high,
                };
                hit &= ok;
            }
            if !hit {
                continue;
            }
            if t.keys
                .iter()
                .any(|k| k.kind != MatchKind::Exact && k.kind != MatchKind::Lpm)
            {
                rank = u64::from(e.priority.unwrap_or(0));
            }
            match best {
                Some((_, r)) if r > rank => {}
                Some((_, r)) if r == rank => tie = true,
                _ => {
                    best = Some((e, rank));
                    tie = false;
                }
            }
        }
        if tie {
            return Err(InterpError::Ambiguous(table));
        }
        Ok(best.map(|(e, _)| e))
    }

    /// The action parameter of the hit entry if its action is `action`.
    fn param(
        &self,
        table: &'static str,
        keys: &[u64],
        action: &str,
    ) -> Result<Option<u64>, InterpError> {
        Ok(self
            .lookup(table, keys)?
            .filter(|e| e.action == action)
            .and_then(|e| e.params.first().copied()))
    }

    /// The ingress pass of a flow's first packet.
    pub fn ingress(&self, h: &Headers) -> Result<IngressTrace, InterpError> {
        let mut tr = IngressTrace {
            hash: CRC32.checksum(&h.field_list_bytes(ECMP_FIELDS)) ^ self.program.seed,
            ..IngressTrace::default()
        };
        tr.group = self.param(names::DST_GROUP, &[u64::from(h.dst)], "set_group")?;
        let Some(group) = tr.group else { return Ok(tr) };
        tr.k = self.param(names::GROUP_SIZE, &[group], "set_group_size")?;
        let Some(k) = tr.k else { return Ok(tr) };
        let mut rsum = 0u64;
        for (i, table) in names::MOD_N.iter().enumerate() {
            let nibble = u64::from(tr.hash >> (4 * i)) & 0xF;
            let Some(r) = self.param(table, &[k, nibble], names::SET_R[i])? else {
                return Ok(tr);
            };
            // meta.rsum is bit<8>: the P4 additions wrap.
            rsum = (rsum + r) & 0xFF;
        }
        tr.rsum = Some(rsum);
        tr.bucket = self.param(names::MOD_FOLD, &[k, rsum], "set_bucket")?;
        let Some(bucket) = tr.bucket else {
            return Ok(tr);
        };
        let Some(port) = self.param(names::SELECT, &[group, bucket], "set_port")? else {
            return Ok(tr);
        };
        let alive = self
            .lookup(names::PORT_ALIVE, &[port])?
            .is_some_and(|e| e.action == "port_up");
        tr.port = alive.then_some(port);
        Ok(tr)
    }

    /// One packet through the ingress with the flow-pin registers, at MAC
    /// timestamp `tstamp_ns`; a packet resubmitted for failover takes its
    /// second pass here too.
    pub fn packet(
        &self,
        pins: &mut PinRegisters,
        h: &Headers,
        tstamp_ns: u64,
    ) -> Result<IngressTrace, InterpError> {
        let first = self.pass(pins, h, tstamp_ns, false)?;
        if first.resubmitted {
            let mut second = self.pass(pins, h, tstamp_ns, true)?;
            second.resubmitted = true;
            return Ok(second);
        }
        Ok(first)
    }

    fn pass(
        &self,
        pins: &mut PinRegisters,
        h: &Headers,
        tstamp_ns: u64,
        resubmit_flag: bool,
    ) -> Result<IngressTrace, InterpError> {
        let mut tr = self.ingress(h)?;
        // The selection port, before the liveness check (`meta.sel_port`).
        let sel = match (tr.group, tr.bucket) {
            (Some(g), Some(b)) => self.param(names::SELECT, &[g, b], "set_port")?,
            _ => None,
        };
        let Some(sel) = sel else {
            tr.port = None; // no_route: dropped before the pin stage
            return Ok(tr);
        };
        let (sig, idx) = pin_slot(h, self.program.sizes.pin_slots);
        let now = (tstamp_ns >> 16) as u32;
        let idle = u32::try_from(self.program.pin_idle_units()).unwrap_or(u32::MAX);
        let cell = pins.cells.entry(idx).or_default();
        let hit = if !resubmit_flag && cell.sig == sig && now.wrapping_sub(cell.seen) <= idle {
            cell.seen = now;
            true
        } else {
            cell.sig = sig;
            cell.seen = now;
            false
        };
        let out = if hit {
            u64::from(cell.port)
        } else {
            cell.port = sel as u16;
            sel
        };
        tr.pin_hit = hit;
        let alive = self
            .lookup(names::PORT_ALIVE, &[out])?
            .is_some_and(|e| e.action == "port_up");
        tr.port = alive.then_some(out);
        tr.resubmitted = !alive && hit;
        Ok(tr)
    }

    /// The egress queue score `Q` of a packet leaving `port` with
    /// `deq_qdepth = cells` (`None`: not an LCMP port).
    pub fn egress_q(&self, port: u64, cells: u64) -> Result<Option<u8>, InterpError> {
        let Some(e) = self.lookup(names::PORT_CLASS, &[port])? else {
            return Ok(None);
        };
        if e.action != "set_port_class" {
            return Ok(None);
        }
        let cls = e.params.get(1).copied().unwrap_or(0);
        let q = self
            .param(names::Q_QUANT, &[cls, cells], "set_q")?
            .unwrap_or(0);
        Ok(Some(q as u8))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::model::{Agent, ExportOptions};
    use lcmp_decide::{
        Candidate, DeciderConfig, Group, GroupId, HashAlgorithm, PortConfig, PortId, Tables,
    };

    fn program() -> Program {
        let mut t = Tables::paper_defaults();
        let _ = t.ports.push(PortConfig {
            id: PortId(0),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        let mut g = Group {
            id: GroupId(1),
            candidates: heapless::Vec::new(),
        };
        let _ = g.candidates.push(Candidate {
            port: PortId(0),
            delay_units: 1,
            capacity_bps: 1_000_000_000,
        });
        let _ = t.groups.push(g);
        let cfg = DeciderConfig {
            hash: HashAlgorithm::Crc32,
            ..DeciderConfig::default()
        };
        Agent::new(&t, cfg, ExportOptions::default())
            .map(|a| a.program())
            .expect("program")
    }

    fn entry(
        table: &'static str,
        matches: Vec<Match>,
        priority: Option<u32>,
        action: &'static str,
        p: u64,
    ) -> TableEntry {
        TableEntry {
            table,
            matches,
            priority,
            action,
            params: vec![p],
        }
    }

    #[test]
    fn longest_prefix_wins() {
        let p = program();
        let set = EntrySet {
            entries: vec![
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0x0A00_0000,
                        prefix_len: 8,
                    }],
                    None,
                    "set_group",
                    1,
                ),
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0x0A08_0000,
                        prefix_len: 16,
                    }],
                    None,
                    "set_group",
                    2,
                ),
                entry(
                    names::DST_GROUP,
                    vec![Match::Lpm {
                        value: 0,
                        prefix_len: 0,
                    }],
                    None,
                    "set_group",
                    3,
                ),
            ],
            registers: vec![],
        };
        let i = Interpreter::new(&p, &set);
        let g = |dst: u64| {
            i.lookup(names::DST_GROUP, &[dst])
                .expect("lookup")
                .map(|e| e.params[0])
        };
        assert_eq!(g(0x0A08_0102), Some(2));
        assert_eq!(g(0x0A09_0102), Some(1));
        assert_eq!(g(0x0B00_0000), Some(3));
    }

    #[test]
    fn range_priority_and_ties() {
        let p = program();
        let r = |low, high, prio, q| {
            entry(
                names::Q_QUANT,
                vec![Match::Exact(0), Match::Range { low, high }],
                Some(prio),
                "set_q",
                q,
            )
        };
        let set = EntrySet {
            entries: vec![r(0, 100, 1, 10), r(50, 60, 5, 20), r(90, 200, 1, 30)],
            registers: vec![],
        };
        let i = Interpreter::new(&p, &set);
        let q = |d: u64| {
            i.lookup(names::Q_QUANT, &[0, d])
                .map(|e| e.map(|e| e.params[0]))
        };
        assert_eq!(q(10), Ok(Some(10)));
        assert_eq!(q(55), Ok(Some(20)), "higher priority wins");
        assert_eq!(q(150), Ok(Some(30)));
        assert_eq!(q(300), Ok(None));
        assert_eq!(
            q(95),
            Err(InterpError::Ambiguous(names::Q_QUANT)),
            "equal priorities overlap"
        );
        assert_eq!(
            i.lookup(names::Q_QUANT, &[1, 10]).map(|e| e.is_some()),
            Ok(false)
        );
    }

    #[test]
    fn duplicate_exact_keys_are_ambiguous() {
        let p = program();
        let e = |port| {
            entry(
                names::SELECT,
                vec![Match::Exact(1), Match::Exact(0)],
                None,
                "set_port",
                port,
            )
        };
        let set = EntrySet {
            entries: vec![e(1), e(2)],
            registers: vec![],
        };
        let i = Interpreter::new(&p, &set);
        assert_eq!(
            i.lookup(names::SELECT, &[1, 0]),
            Err(InterpError::Ambiguous(names::SELECT))
        );
        assert_eq!(
            i.lookup("nope", &[]),
            Err(InterpError::UnknownTable("nope"))
        );
    }
}
