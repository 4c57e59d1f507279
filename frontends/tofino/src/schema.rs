//! The control-plane schema of `lcmp.p4`: every table, key field, action,
//! parameter and register, with widths and sizes.
//!
//! This is the one description that the P4 renderer, the P4Info renderer,
//! the `bfrt_python` and BF-Runtime JSON renderers and the interpreter all
//! read, so a name or a width cannot differ between them.

/// A match kind (P4Runtime `MatchField.MatchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// Exact match.
    Exact,
    /// Longest-prefix match.
    Lpm,
    /// Ternary match with a priority.
    Ternary,
    /// Range match with a priority.
    Range,
}

impl MatchKind {
    /// The P4 spelling (`exact`, `lpm`, `ternary`, `range`).
    pub const fn p4(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Lpm => "lpm",
            MatchKind::Ternary => "ternary",
            MatchKind::Range => "range",
        }
    }

    /// The P4Info enum spelling.
    pub const fn p4info(self) -> &'static str {
        match self {
            MatchKind::Exact => "EXACT",
            MatchKind::Lpm => "LPM",
            MatchKind::Ternary => "TERNARY",
            MatchKind::Range => "RANGE",
        }
    }
}

/// One key field of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyField {
    /// Control-plane name (`@name` in the P4 source).
    pub name: &'static str,
    /// The P4 expression matched.
    pub expr: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// Match kind.
    pub kind: MatchKind,
}

/// One action parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Name.
    pub name: &'static str,
    /// Width in bits.
    pub bits: u32,
}

/// An action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Action {
    /// Name inside its control.
    pub name: &'static str,
    /// Parameters, in order.
    pub params: &'static [Param],
}

/// Which control block an object lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Control {
    /// `LcmpIngress`.
    Ingress,
    /// `LcmpEgress`.
    Egress,
}

impl Control {
    /// The control's name in the P4 source and in every fully qualified name.
    pub const fn name(self) -> &'static str {
        match self {
            Control::Ingress => "LcmpIngress",
            Control::Egress => "LcmpEgress",
        }
    }
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Name inside its control.
    pub name: &'static str,
    /// Its control.
    pub control: Control,
    /// Key fields, in order.
    pub keys: &'static [KeyField],
    /// Actions an entry may use.
    pub actions: &'static [Action],
    /// The default (miss) action, with no parameters.
    pub default_action: Action,
    /// Capacity in entries.
    pub size: u32,
}

impl Table {
    /// `Control.table`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.control.name(), self.name)
    }

    /// Whether entries carry a priority (a ternary or range key).
    pub fn needs_priority(&self) -> bool {
        self.keys
            .iter()
            .any(|k| matches!(k.kind, MatchKind::Ternary | MatchKind::Range))
    }

    /// The action named `name`, if the table allows it.
    pub fn action(&self, name: &str) -> Option<&'static Action> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// A register array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Register {
    /// Name inside its control.
    pub name: &'static str,
    /// Its control.
    pub control: Control,
    /// Cell width in bits (a pair register has two cells of this width).
    pub bits: u32,
    /// Whether the cell is a `{lo, hi}` pair (a `lcmp_pin_t` struct).
    pub pair: bool,
    /// Number of cells.
    pub size: u32,
}

impl Register {
    /// `Control.register`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.control.name(), self.name)
    }
}

const fn key(name: &'static str, expr: &'static str, bits: u32, kind: MatchKind) -> KeyField {
    KeyField {
        name,
        expr,
        bits,
        kind,
    }
}

const fn p(name: &'static str, bits: u32) -> Param {
    Param { name, bits }
}

/// Width of a Tofino device port (`PortId_t`).
pub const PORT_BITS: u32 = 9;
/// Width of `deq_qdepth` (Tofino 1: 19 bits of 80-byte cells).
pub const QDEPTH_BITS: u32 = 19;

/// Actions (shared definitions; each belongs to the control of its tables).
pub mod actions {
    use super::{p, Action, PORT_BITS};

    /// Sets `meta.group`.
    pub const SET_GROUP: Action = Action {
        name: "set_group",
        params: &[p("group", 16)],
    };
    /// The destination is not an LCMP route: leave the packet to the rest of
    /// the pipeline.
    pub const LCMP_MISS: Action = Action {
        name: "lcmp_miss",
        params: &[],
    };
    /// Sets `meta.k`, the size of the group's pick list.
    pub const SET_GROUP_SIZE: Action = Action {
        name: "set_group_size",
        params: &[p("k", 8)],
    };
    /// No live candidate: drop.
    pub const NO_ROUTE: Action = Action {
        name: "no_route",
        params: &[],
    };
    /// Residue of hash nibble 0.
    pub const SET_R0: Action = Action {
        name: "set_r0",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 1.
    pub const SET_R1: Action = Action {
        name: "set_r1",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 2.
    pub const SET_R2: Action = Action {
        name: "set_r2",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 3.
    pub const SET_R3: Action = Action {
        name: "set_r3",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 4.
    pub const SET_R4: Action = Action {
        name: "set_r4",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 5.
    pub const SET_R5: Action = Action {
        name: "set_r5",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 6.
    pub const SET_R6: Action = Action {
        name: "set_r6",
        params: &[p("r", 8)],
    };
    /// Residue of hash nibble 7.
    pub const SET_R7: Action = Action {
        name: "set_r7",
        params: &[p("r", 8)],
    };
    /// Sets `meta.bucket = rsum mod k`.
    pub const SET_BUCKET: Action = Action {
        name: "set_bucket",
        params: &[p("bucket", 8)],
    };
    /// Sets the selected egress port.
    pub const SET_PORT: Action = Action {
        name: "set_port",
        params: &[p("port", PORT_BITS)],
    };
    /// The pinned port is up.
    pub const PORT_UP: Action = Action {
        name: "port_up",
        params: &[],
    };
    /// The pinned port is down: re-decide the flow (resubmit).
    pub const PORT_DOWN: Action = Action {
        name: "port_down",
        params: &[],
    };
    /// Sets the egress port's register index and rate class.
    pub const SET_PORT_CLASS: Action = Action {
        name: "set_port_class",
        params: &[p("idx", 8), p("cls", 8)],
    };
    /// Not an LCMP port: no measurement.
    pub const NOT_LCMP: Action = Action {
        name: "not_lcmp",
        params: &[],
    };
    /// Sets the queue level score `Q`.
    pub const SET_Q: Action = Action {
        name: "set_q",
        params: &[p("q", 8)],
    };
    /// Sets the trend level score `T`.
    pub const SET_T: Action = Action {
        name: "set_t",
        params: &[p("t", 8)],
    };
    /// Leaves a score at zero.
    pub const NO_LEVEL: Action = Action {
        name: "no_level",
        params: &[],
    };
}

use actions::*;

/// Sizes the program is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Sizes {
    /// Route groups (destinations).
    pub groups: u32,
    /// Largest pick list (`k`): the largest group's candidate count, so the
    /// ECMP and UCMP schemes fit too.
    pub max_k: u32,
    /// Port index space: the highest LCMP port id + 1 (per-port register
    /// cells and port-table capacity).
    pub ports: u32,
    /// Port classes (distinct `(rate, buffer)` pairs).
    pub classes: u32,
    /// Levels `N`.
    pub levels: u32,
    /// Flow-pin register cells (a power of two).
    pub pin_slots: u32,
}

impl Sizes {
    /// log2 of `pin_slots`.
    pub fn pin_index_bits(&self) -> u32 {
        self.pin_slots.max(1).trailing_zeros()
    }

    /// Entries of the fold table: `Σ_{k=1..=max_k} (8 (k - 1) + 1)`.
    pub fn fold_entries(&self) -> u32 {
        (1..=self.max_k).map(|k| 8 * (k - 1) + 1).sum()
    }
}

/// Key fields of each table.
mod keys {
    use super::{key, KeyField, MatchKind::*, PORT_BITS, QDEPTH_BITS};
    pub(super) const DST: &[KeyField] = &[key("dst_addr", "hdr.ipv4.dst_addr", 32, Lpm)];
    pub(super) const GROUP: &[KeyField] = &[key("group", "meta.group", 16, Exact)];
    pub(super) const N0: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n0", "meta.hash[3:0]", 4, Exact),
    ];
    pub(super) const N1: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n1", "meta.hash[7:4]", 4, Exact),
    ];
    pub(super) const N2: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n2", "meta.hash[11:8]", 4, Exact),
    ];
    pub(super) const N3: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n3", "meta.hash[15:12]", 4, Exact),
    ];
    pub(super) const N4: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n4", "meta.hash[19:16]", 4, Exact),
    ];
    pub(super) const N5: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n5", "meta.hash[23:20]", 4, Exact),
    ];
    pub(super) const N6: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n6", "meta.hash[27:24]", 4, Exact),
    ];
    pub(super) const N7: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_n7", "meta.hash[31:28]", 4, Exact),
    ];
    pub(super) const FOLD: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("rsum", "meta.rsum", 8, Exact),
    ];
    pub(super) const SELECT: &[KeyField] = &[
        key("group", "meta.group", 16, Exact),
        key("bucket", "meta.bucket", 8, Exact),
    ];
    pub(super) const ALIVE: &[KeyField] = &[key("port", "meta.out_port", PORT_BITS, Exact)];
    pub(super) const EG_PORT: &[KeyField] = &[key(
        "egress_port",
        "eg_intr_md.egress_port",
        PORT_BITS,
        Exact,
    )];
    pub(super) const QQ: &[KeyField] = &[
        key("cls", "emeta.cls", 8, Exact),
        key("qdepth", "eg_intr_md.deq_qdepth", QDEPTH_BITS, Range),
    ];
    pub(super) const TQ: &[KeyField] = &[
        key("cls", "emeta.cls", 8, Exact),
        key("trend", "emeta.trend", 32, Range),
    ];
}

/// The table names, for lookups by name.
pub mod names {
    /// Destination prefix to group.
    pub const DST_GROUP: &str = "lcmp_dst_group";
    /// Group to pick-list size.
    pub const GROUP_SIZE: &str = "lcmp_group_size";
    /// Nibble-residue tables.
    pub const MOD_N: [&str; 8] = [
        "lcmp_mod_n0",
        "lcmp_mod_n1",
        "lcmp_mod_n2",
        "lcmp_mod_n3",
        "lcmp_mod_n4",
        "lcmp_mod_n5",
        "lcmp_mod_n6",
        "lcmp_mod_n7",
    ];
    /// The residue actions, one per nibble table.
    pub const SET_R: [&str; 8] = [
        "set_r0", "set_r1", "set_r2", "set_r3", "set_r4", "set_r5", "set_r6", "set_r7",
    ];
    /// Residue fold.
    pub const MOD_FOLD: &str = "lcmp_mod_fold";
    /// `(group, bucket) -> port`.
    pub const SELECT: &str = "lcmp_select";
    /// Port liveness.
    pub const PORT_ALIVE: &str = "lcmp_port_alive";
    /// Egress port to register index and class.
    pub const PORT_CLASS: &str = "lcmp_port_class";
    /// Queue quantisation.
    pub const Q_QUANT: &str = "lcmp_q_quant";
    /// Trend quantisation.
    pub const T_QUANT: &str = "lcmp_t_quant";
    /// Per-port last queue depth (cells).
    pub const REG_QDEPTH: &str = "lcmp_qdepth";
    /// Per-port trend (low-pass-filtered queue growth, cells).
    pub const REG_TREND: &str = "lcmp_trend";
    /// Per-port duration counter.
    pub const REG_DURATION: &str = "lcmp_duration";
    /// Per-port `C_cong`.
    pub const REG_CCONG: &str = "lcmp_ccong";
    /// Flow pin `{signature, last-seen}`.
    pub const REG_PIN: &str = "lcmp_pin";
    /// Flow pin port.
    pub const REG_PIN_PORT: &str = "lcmp_pin_port";
}

/// The whole control-plane schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// Tables, in pipeline order.
    pub tables: Vec<Table>,
    /// Registers.
    pub registers: Vec<Register>,
}

impl Schema {
    /// The schema of the program generated for `sizes`.
    pub fn new(sizes: &Sizes) -> Schema {
        use names::*;
        use Control::{Egress, Ingress};
        let t = |name, control, keys, actions, default_action, size: u32| Table {
            name,
            control,
            keys,
            actions,
            default_action,
            size: size.max(1),
        };
        let residue = sizes.max_k * 16;
        let tables = vec![
            t(
                DST_GROUP,
                Ingress,
                keys::DST,
                &[SET_GROUP, LCMP_MISS],
                LCMP_MISS,
                sizes.groups,
            ),
            t(
                GROUP_SIZE,
                Ingress,
                keys::GROUP,
                &[SET_GROUP_SIZE, NO_ROUTE],
                NO_ROUTE,
                sizes.groups,
            ),
            t(
                MOD_N[0],
                Ingress,
                keys::N0,
                &[SET_R0, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[1],
                Ingress,
                keys::N1,
                &[SET_R1, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[2],
                Ingress,
                keys::N2,
                &[SET_R2, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[3],
                Ingress,
                keys::N3,
                &[SET_R3, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[4],
                Ingress,
                keys::N4,
                &[SET_R4, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[5],
                Ingress,
                keys::N5,
                &[SET_R5, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[6],
                Ingress,
                keys::N6,
                &[SET_R6, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_N[7],
                Ingress,
                keys::N7,
                &[SET_R7, NO_ROUTE],
                NO_ROUTE,
                residue,
            ),
            t(
                MOD_FOLD,
                Ingress,
                keys::FOLD,
                &[SET_BUCKET, NO_ROUTE],
                NO_ROUTE,
                sizes.fold_entries(),
            ),
            t(
                SELECT,
                Ingress,
                keys::SELECT,
                &[SET_PORT, NO_ROUTE],
                NO_ROUTE,
                sizes.groups * sizes.max_k,
            ),
            t(
                PORT_ALIVE,
                Ingress,
                keys::ALIVE,
                &[PORT_UP, PORT_DOWN],
                PORT_DOWN,
                sizes.ports,
            ),
            t(
                PORT_CLASS,
                Egress,
                keys::EG_PORT,
                &[SET_PORT_CLASS, NOT_LCMP],
                NOT_LCMP,
                sizes.ports,
            ),
            t(
                Q_QUANT,
                Egress,
                keys::QQ,
                &[SET_Q, NO_LEVEL],
                NO_LEVEL,
                sizes.classes * sizes.levels,
            ),
            t(
                T_QUANT,
                Egress,
                keys::TQ,
                &[SET_T, NO_LEVEL],
                NO_LEVEL,
                sizes.classes * sizes.levels,
            ),
        ];
        let r = |name, control, bits, pair, size: u32| Register {
            name,
            control,
            bits,
            pair,
            size: size.max(1),
        };
        let registers = vec![
            r(REG_PIN, Ingress, 32, true, sizes.pin_slots),
            r(REG_PIN_PORT, Ingress, 16, false, sizes.pin_slots),
            r(REG_QDEPTH, Egress, 32, false, sizes.ports),
            r(REG_DURATION, Egress, 32, false, sizes.ports),
            r(REG_TREND, Egress, 32, false, sizes.ports),
            r(REG_CCONG, Egress, 32, false, sizes.ports),
        ];
        Schema { tables, registers }
    }

    /// A table by (short) name.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// A register by (short) name.
    pub fn register(&self, name: &str) -> Option<&Register> {
        self.registers.iter().find(|r| r.name == name)
    }

    /// Every distinct action of a control, in first-use order.
    pub fn actions(&self, control: Control) -> Vec<&'static Action> {
        let mut out: Vec<&'static Action> = Vec::new();
        for t in self.tables.iter().filter(|t| t.control == control) {
            for a in t.actions {
                if !out.iter().any(|b| b.name == a.name) {
                    out.push(a);
                }
            }
        }
        out
    }
}
