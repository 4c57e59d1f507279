//! The control-plane schema of `lcmp.p4`: every table, key field, action
//! (with its P4 body), parameter, register and digest, with names, widths
//! and sizes.
//!
//! This is the one description that the P4 renderer, the P4Info renderer,
//! the `bfrt_python` and BF-Runtime JSON renderers, the agent's entry
//! builder and the interpreter all read, so a name or a width cannot differ
//! between them: the P4 template names no table, action, register or
//! digest, it only uses the declarations and names rendered from here.
//! (The stage analysis, [`crate::analysis`], deliberately does not read it:
//! it parses the generated P4 text.)

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
    /// The P4 type when it is an architecture typedef (`PortId_t`) rather
    /// than `bit<bits>`.
    pub typedef: Option<&'static str>,
}

impl Param {
    /// The parameter's P4 type: its typedef, else `bit<bits>`.
    pub fn p4_type(&self) -> String {
        match self.typedef {
            Some(t) => t.to_string(),
            None => format!("bit<{}>", self.bits),
        }
    }
}

/// An action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Action {
    /// Name inside its control.
    pub name: &'static str,
    /// Parameters, in order.
    pub params: &'static [Param],
    /// The P4 statements of its body, in order.
    pub body: &'static [&'static str],
}

/// Which control block an object lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Control {
    /// `LcmpIngress`: every table and register.
    Ingress,
    /// `LcmpIngressDeparser`: the pin-failure digest.
    IngressDeparser,
}

impl Control {
    /// The control's name in the P4 source and in every fully qualified name.
    pub const fn name(self) -> &'static str {
        match self {
            Control::Ingress => "LcmpIngress",
            Control::IngressDeparser => "LcmpIngressDeparser",
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
    /// The default (miss) action, with no parameters. Unless it is also
    /// in `actions`, it is `@defaultonly`: no entry may use it.
    pub default_action: &'static Action,
    /// Capacity in entries.
    pub size: u32,
    /// Whether the agent rewrites it at run time (`false`: written once at
    /// load time and never changed for a program).
    pub dynamic: bool,
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

    /// The action named `name`, if entries of the table may use it.
    pub fn action(&self, name: &str) -> Option<&'static Action> {
        self.actions.iter().find(|a| a.name == name)
    }

    /// Whether the default action is `@defaultonly` (not an entry action).
    pub fn default_only(&self) -> bool {
        self.action(self.default_action.name).is_none()
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
    /// Whether the cell is a `{lo, hi}` pair (a [`PAIR_CELL_TYPE`] struct,
    /// initially `{0, PIN_EMPTY_SEEN}`).
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

/// One field of a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigestField {
    /// Name in the digest's struct.
    pub name: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// The P4 expression packed into it.
    pub expr: &'static str,
}

/// A digest the data plane sends to the switch CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// Name of the `Digest` extern in its control.
    pub name: &'static str,
    /// Its control.
    pub control: Control,
    /// The P4 struct packed.
    pub type_name: &'static str,
    /// Fields, in order.
    pub fields: &'static [DigestField],
}

impl Digest {
    /// `Control.digest`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.control.name(), self.name)
    }

    /// Total width in bits.
    pub fn bits(&self) -> u32 {
        self.fields.iter().map(|f| f.bits).sum()
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
    Param {
        name,
        bits,
        typedef: None,
    }
}

/// Width of a Tofino device port (`PortId_t`).
pub const PORT_BITS: u32 = 9;
/// Width of the hash slice the bucket table matches (`meta.hash[31:16]`).
pub const HASH_HI_BITS: u32 = 16;
/// The largest priority of a ternary or range entry (P4Runtime order, a
/// larger number wins); entries use `1..=MAX_PRIORITY`.
pub const MAX_PRIORITY: u32 = 1;
/// Most flow-pin cells per way (the index is at most 16 bits, so the two
/// ways' indices are disjoint halves of the 32-bit signature).
pub const MAX_PIN_WAY_SLOTS: u32 = 1 << 16;
/// A flow-pin cell's initial "last seen" (`hi`): half a wrap of the 32-bit
/// timestamp (`ingress_mac_tstamp[47:16]`, 65.536 µs units) before 0, so a
/// cell is free from the first packet (not only after the idle timeout).
pub const PIN_EMPTY_SEEN: u32 = 0x8000_0000;
/// Fewest flow-pin cells per way.
pub const MIN_PIN_WAY_SLOTS: u32 = 1 << 8;
/// The P4 struct of a pair register's cell (`{lo, hi}`, declared in the
/// template of `lcmp.p4`).
pub const PAIR_CELL_TYPE: &str = "lcmp_pin_t";
/// The P4 type of a register index (`pin_index_t`, declared in the template
/// with the width of [`Sizes::pin_index_bits`]).
pub const REGISTER_INDEX_TYPE: &str = "pin_index_t";

/// Actions (shared definitions), with their P4 bodies.
pub mod actions {
    use super::{p, Action, Param, PORT_BITS};

    /// Sets `meta.group` and the group's pick-list size `meta.k`, and marks
    /// the packet as LCMP-routed.
    pub const SET_GROUP: Action = Action {
        name: "set_group",
        params: &[p("group", 16), p("k", 8)],
        body: &["meta.group = group;", "meta.k = k;", "meta.lcmp = 1;"],
    };
    /// The destination is not an LCMP route: leave the packet to the rest of
    /// the pipeline.
    pub const LCMP_MISS: Action = Action {
        name: "lcmp_miss",
        params: &[],
        body: &[],
    };
    /// The group has no live candidate: drop.
    pub const NO_ROUTE: Action = Action {
        name: "no_route",
        params: &[],
        body: &["ig_dprsr_md.drop_ctl = 1;"],
    };
    /// Sets `meta.bucket`, the top 16 hash bits scaled into `0..k`.
    pub const SET_BUCKET: Action = Action {
        name: "set_bucket",
        params: &[p("bucket", 8)],
        body: &["meta.bucket = bucket;"],
    };
    /// Sets the selected egress port.
    pub const SET_PORT: Action = Action {
        name: "set_port",
        params: &[Param {
            name: "port",
            bits: PORT_BITS,
            typedef: Some("PortId_t"),
        }],
        body: &["meta.out_port = port;"],
    };
    /// A static or selection table missed (never, with consistent tables):
    /// drop.
    pub const DROP_MISS: Action = Action {
        name: "drop_miss",
        params: &[],
        body: &["ig_dprsr_md.drop_ctl = 1;"],
    };
    /// The port is up: forward.
    pub const PORT_UP: Action = Action {
        name: "port_up",
        params: &[],
        body: &["ig_tm_md.ucast_egress_port = meta.out_port;"],
    };
    /// The port is down: re-decide a pinned flow (resubmit), else drop.
    pub const PORT_DOWN: Action = Action {
        name: "port_down",
        params: &[],
        body: &["meta.dead = 1;"],
    };

    /// Every action of `LcmpIngress`, in the order `lcmp.p4` declares
    /// them (a unit test checks that it holds exactly the tables' actions).
    pub const INGRESS: [&Action; 8] = [
        &SET_GROUP,
        &NO_ROUTE,
        &LCMP_MISS,
        &SET_BUCKET,
        &SET_PORT,
        &DROP_MISS,
        &PORT_UP,
        &PORT_DOWN,
    ];
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
    /// Port index space: the highest LCMP port id + 1 (port-table capacity).
    pub ports: u32,
    /// Flow-pin register cells in all, both ways (a power of two).
    pub pin_slots: u32,
}

impl Sizes {
    /// The flow-pin cells a request for `requested` gets: clamped to two
    /// ways of [`MIN_PIN_WAY_SLOTS`] to [`MAX_PIN_WAY_SLOTS`] and rounded
    /// up to a power of two.
    ///
    /// ```
    /// use lcmp_tofino::schema::Sizes;
    /// assert_eq!(Sizes::pin_slots_for(100_000), 131_072);
    /// assert_eq!(Sizes::pin_slots_for(u32::MAX), 131_072);
    /// assert_eq!(Sizes::pin_slots_for(0), 512);
    /// ```
    pub fn pin_slots_for(requested: u32) -> u32 {
        requested
            .clamp(2 * MIN_PIN_WAY_SLOTS, 2 * MAX_PIN_WAY_SLOTS)
            .next_power_of_two()
    }

    /// Flow-pin cells per way.
    pub fn pin_way_slots(&self) -> u32 {
        (self.pin_slots / 2).clamp(MIN_PIN_WAY_SLOTS, MAX_PIN_WAY_SLOTS)
    }

    /// log2 of [`Sizes::pin_way_slots`]: the width of a way's index.
    pub fn pin_index_bits(&self) -> u32 {
        self.pin_way_slots().trailing_zeros()
    }

    /// Entries of the bucket table: `Σ_{k=1..=max_k} k` (one range per
    /// bucket of every pick-list size).
    pub fn bucket_entries(&self) -> u32 {
        (1..=self.max_k).sum()
    }
}

/// Key fields of each table.
mod keys {
    use super::{key, KeyField, MatchKind::*, HASH_HI_BITS, PORT_BITS};
    pub(super) const DST: &[KeyField] = &[key("dst_addr", "hdr.ipv4.dst_addr", 32, Lpm)];
    pub(super) const BUCKET: &[KeyField] = &[
        key("k", "meta.k", 8, Exact),
        key("hash_hi", "meta.hash[31:16]", HASH_HI_BITS, Range),
    ];
    pub(super) const SELECT: &[KeyField] = &[
        key("group", "meta.group", 16, Exact),
        key("bucket", "meta.bucket", 8, Exact),
    ];
    pub(super) const ALIVE: &[KeyField] = &[key("port", "meta.out_port", PORT_BITS, Exact)];
}

/// The table, register and digest names, for lookups by name.
pub mod names {
    /// Destination prefix to `(group, k)`.
    pub const DST_GROUP: &str = "lcmp_dst_group";
    /// `(k, hash[31:16])` to bucket (static).
    pub const BUCKET: &str = "lcmp_bucket";
    /// `(group, bucket) -> port`.
    pub const SELECT: &str = "lcmp_select";
    /// Port liveness.
    pub const PORT_ALIVE: &str = "lcmp_port_alive";
    /// Flow pin, way 0: `{signature, last seen}`.
    pub const REG_PIN0: &str = "lcmp_pin0";
    /// Flow pin, way 1.
    pub const REG_PIN1: &str = "lcmp_pin1";
    /// Pinned port, way 0.
    pub const REG_PORT0: &str = "lcmp_port0";
    /// Pinned port, way 1.
    pub const REG_PORT1: &str = "lcmp_port1";
    /// The pin-failure digest.
    pub const DIGEST_PIN_FAIL: &str = "pin_fail";
}

const fn field(name: &'static str, bits: u32, expr: &'static str) -> DigestField {
    DigestField { name, bits, expr }
}

/// Fields of the pin-failure digest (`lcmp_pin_fail_t`): the flow and its
/// group.
pub const PIN_FAIL_FIELDS: &[DigestField] = &[
    field("src_addr", 32, "hdr.ipv4.src_addr"),
    field("dst_addr", 32, "hdr.ipv4.dst_addr"),
    field("src_port", 16, "meta.l4_sport"),
    field("dst_port", 16, "meta.l4_dport"),
    field("protocol", 8, "hdr.ipv4.protocol"),
    field("group", 16, "meta.group"),
];

/// The whole control-plane schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// Tables, in pipeline order.
    pub tables: Vec<Table>,
    /// Registers.
    pub registers: Vec<Register>,
    /// Digests.
    pub digests: Vec<Digest>,
}

impl Schema {
    /// The schema of the program generated for `sizes`.
    pub fn new(sizes: &Sizes) -> Schema {
        use names::*;
        use Control::Ingress;
        let t = |name, keys, actions, default_action: &'static Action, size: u32, dynamic| Table {
            name,
            control: Ingress,
            keys,
            actions,
            default_action,
            size: size.max(1),
            dynamic,
        };
        let tables = vec![
            t(
                DST_GROUP,
                keys::DST,
                &[SET_GROUP, NO_ROUTE],
                &LCMP_MISS,
                sizes.groups,
                true,
            ),
            t(
                BUCKET,
                keys::BUCKET,
                &[SET_BUCKET],
                &DROP_MISS,
                sizes.bucket_entries(),
                false,
            ),
            t(
                SELECT,
                keys::SELECT,
                &[SET_PORT],
                &DROP_MISS,
                sizes.groups * sizes.max_k,
                true,
            ),
            t(
                PORT_ALIVE,
                keys::ALIVE,
                &[PORT_UP, PORT_DOWN],
                &PORT_DOWN,
                sizes.ports,
                true,
            ),
        ];
        let way = sizes.pin_way_slots();
        let r = |name, bits, pair| Register {
            name,
            control: Ingress,
            bits,
            pair,
            size: way,
        };
        let registers = vec![
            r(REG_PIN0, 32, true),
            r(REG_PIN1, 32, true),
            r(REG_PORT0, 16, false),
            r(REG_PORT1, 16, false),
        ];
        let digests = vec![Digest {
            name: DIGEST_PIN_FAIL,
            control: Control::IngressDeparser,
            type_name: "lcmp_pin_fail_t",
            fields: PIN_FAIL_FIELDS,
        }];
        Schema {
            tables,
            registers,
            digests,
        }
    }

    /// A table by (short) name.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// A register by (short) name.
    pub fn register(&self, name: &str) -> Option<&Register> {
        self.registers.iter().find(|r| r.name == name)
    }

    /// Every distinct action of a control (default actions too), in
    /// first-use order.
    pub fn actions(&self, control: Control) -> Vec<&'static Action> {
        let mut out: Vec<&'static Action> = Vec::new();
        for t in self.tables.iter().filter(|t| t.control == control) {
            for a in t.actions.iter().chain(core::iter::once(t.default_action)) {
                if !out.iter().any(|b| b.name == a.name) {
                    out.push(a);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn way_sizes_are_clamped_and_indices_fit_half_a_signature() {
        let s = |pin_slots| Sizes {
            groups: 1,
            max_k: 3,
            ports: 1,
            pin_slots,
        };
        assert_eq!(s(131_072).pin_way_slots(), 65_536);
        assert_eq!(s(131_072).pin_index_bits(), 16);
        assert_eq!(s(1 << 20).pin_way_slots(), MAX_PIN_WAY_SLOTS);
        assert_eq!(s(2).pin_way_slots(), MIN_PIN_WAY_SLOTS);
        assert_eq!(s(1).bucket_entries(), 6);
    }

    #[test]
    fn the_declared_actions_are_the_tables_actions() {
        let sizes = Sizes {
            groups: 1,
            max_k: 2,
            ports: 1,
            pin_slots: 512,
        };
        let schema = Schema::new(&sizes);
        let mut used: Vec<&str> = schema
            .actions(Control::Ingress)
            .iter()
            .map(|a| a.name)
            .collect();
        let mut declared: Vec<&str> = INGRESS.iter().map(|a| a.name).collect();
        used.sort_unstable();
        declared.sort_unstable();
        assert_eq!(used, declared);
        assert!(schema.actions(Control::IngressDeparser).is_empty());
    }
}
