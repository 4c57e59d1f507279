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
//! It does not model the flow-pin register's collisions, idle expiry or the
//! resubmit of a flow whose pinned port died (see `docs/tofino.md`).

use core::fmt;

use crate::hash::{Headers, CRC32, ECMP_FIELDS};
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
}

/// Evaluates an [`EntrySet`] as the ASIC would.
#[derive(Clone, Debug)]
pub struct Interpreter<'a> {
    program: &'a Program,
    schema: Schema,
    entries: &'a EntrySet,
}

impl<'a> Interpreter<'a> {
    /// An interpreter of `entries` on the program `program`.
    pub fn new(program: &'a Program, entries: &'a EntrySet) -> Self {
        Interpreter {
            program,
            schema: program.schema(),
            entries,
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
        let mut best: Option<(&'a TableEntry, u64)> = None;
        let mut tie = false;
        for e in self.entries.entries.iter().filter(|e| e.table == table) {
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
