//! The control-plane schema of `lcmp.p4`: every table, key field, action
//! (with its P4 body), parameter, register and digest, with names, widths
//! and sizes.
//!
//! This is the one description that the P4 renderer, the P4Info renderer,
//! the `bfrt_python` and BF-Runtime JSON renderers, the agent's entry
//! builder and the interpreter all read, so a name or a width cannot differ
//! between them: the P4 template names no table, action, register or
//! digest, it only uses the declarations and names rendered from here.
//! (The text checks, [`crate::lint`], deliberately do not read it: they
//! parse the generated P4 text.)

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
    /// The low 24 bits of its P4Runtime id: `lcmp.p4` declares it with
    /// `@id(...)`, which bf-p4c honours (it adds the type prefix), so the
    /// compiler's P4Info and bf-rt.json carry this id, not a position.
    pub id: u32,
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
    /// `LcmpEgress`: the per-port transmit counter.
    Egress,
}

impl Control {
    /// The control's name in the P4 source and in every fully qualified name.
    pub const fn name(self) -> &'static str {
        match self {
            Control::Ingress => "LcmpIngress",
            Control::IngressDeparser => "LcmpIngressDeparser",
            Control::Egress => "LcmpEgress",
        }
    }
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Name inside its control.
    pub name: &'static str,
    /// The low 24 bits of its P4Runtime id (`@id`, as for [`Action::id`]).
    pub id: u32,
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

/// The P4Runtime type prefix of actions (`P4Ids.ACTION`).
pub const ACTION_ID_PREFIX: u32 = 0x01 << 24;
/// The P4Runtime type prefix of tables (`P4Ids.TABLE`).
pub const TABLE_ID_PREFIX: u32 = 0x02 << 24;
/// The P4Runtime type prefix of registers (`P4Ids.REGISTER`).
pub const REGISTER_ID_PREFIX: u32 = 0x16 << 24;
/// The P4Runtime type prefix of digests (`P4Ids.DIGEST`).
pub const DIGEST_ID_PREFIX: u32 = 0x17 << 24;
/// The P4Runtime type prefix of counters (`P4Ids.COUNTER`).
pub const COUNTER_ID_PREFIX: u32 = 0x12 << 24;
/// The P4Runtime type prefix of meters (`P4Ids.METER`).
pub const METER_ID_PREFIX: u32 = 0x14 << 24;

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
    /// A pair cell's initial `lo` (its `hi` starts at [`PIN_EMPTY_SEEN`]).
    pub initial_lo: u32,
}

impl Register {
    /// `Control.register`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.control.name(), self.name)
    }

    /// The low 24 bits of its P4Runtime id: bf-p4c ignores `@id` on a
    /// `Register` (warning "Unknown annotation: id") and numbers it by name
    /// ([`compiler_name_id`]).
    pub fn id(&self) -> u32 {
        compiler_name_id(&self.full_name())
    }
}

/// An indexed packet-and-byte counter (`Counter<bit<32>, index>`, as
/// open-p4studio's `tna_counter.p4` declares one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Name inside its control.
    pub name: &'static str,
    /// Its control.
    pub control: Control,
    /// Number of cells.
    pub size: u32,
    /// The P4 type of its index (`bit<8>`, `PortId_t`).
    pub index_type: &'static str,
}

impl Counter {
    /// `Control.counter`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.control.name(), self.name)
    }

    /// The low 24 bits of its P4Runtime id, numbered by name as a
    /// [`Register::id`] is (a TNA `Counter` is a bf-p4c extern instance).
    pub fn id(&self) -> u32 {
        compiler_name_id(&self.full_name())
    }
}

/// Why a packet is not forwarded: `meta.reason` (0 for a forwarded
/// packet), the key of `lcmp_exception` and the index of the
/// `lcmp_exceptions` counter. A router does not drop silently: every
/// packet it does not forward is counted under its reason, and the
/// reasons a switch CPU answers (control traffic, TTL expiry) go to its
/// CPU port with a `lcmp_cpu_h` header (reason, ingress port).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Not IP (ARP, LLDP, other control protocols): to the CPU.
    NotIp = 1,
    /// IPv6: refused (the program routes IPv4 only), counted and dropped
    /// unless the operator sends it to the CPU.
    Ipv6 = 2,
    /// An IPv4 header with IHL below 5 or a version other than 4: dropped.
    BadIpv4 = 3,
    /// TTL 0 or 1 on a routed packet: to the CPU (ICMP time exceeded).
    TtlExpired = 4,
    /// No LCMP group and no default route: dropped.
    Unrouted = 5,
    /// An LCMP group without a live candidate (`no_route`): dropped.
    NoLivePort = 6,
    /// A static, selection or next-hop table missed (never, with
    /// consistent entries): dropped.
    TableMiss = 7,
    /// The chosen port is down or no longer a candidate, and the flow has
    /// no pin to re-decide: dropped.
    PortDown = 8,
}

impl Reason {
    /// Every reason, by code.
    pub const ALL: [Reason; 8] = [
        Reason::NotIp,
        Reason::Ipv6,
        Reason::BadIpv4,
        Reason::TtlExpired,
        Reason::Unrouted,
        Reason::NoLivePort,
        Reason::TableMiss,
        Reason::PortDown,
    ];

    /// `meta.reason`'s value.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The name the agent prints and `lcmp.p4` declares (`R_<NAME>`).
    pub const fn name(self) -> &'static str {
        match self {
            Reason::NotIp => "not_ip",
            Reason::Ipv6 => "ipv6",
            Reason::BadIpv4 => "bad_ipv4",
            Reason::TtlExpired => "ttl_expired",
            Reason::Unrouted => "unrouted",
            Reason::NoLivePort => "no_live_port",
            Reason::TableMiss => "table_miss",
            Reason::PortDown => "port_down",
        }
    }

    /// Whether the exported entries send it to the CPU port (the others'
    /// entries drop it, counted either way).
    pub const fn to_cpu(self) -> bool {
        matches!(self, Reason::NotIp | Reason::TtlExpired)
    }
}

/// The `lcmp_pin_events` counter's index bits (`meta.pin_event`): a
/// packet the selection routed counts once, at `HIT | UNPINNED |
/// RESUBMITTED` of its pass (0: a new pin).
pub mod pin_event {
    /// The flow followed its live pin.
    pub const HIT: u8 = 1;
    /// Both ways held other flows: unpinned, on the group's fallback.
    pub const UNPINNED: u8 = 2;
    /// The resubmitted (failover) pass.
    pub const RESUBMITTED: u8 = 4;
    /// Cells of the counter.
    pub const CELLS: u32 = 8;

    /// What a cell counts (`None`: no packet takes that index).
    ///
    /// ```
    /// use lcmp_tofino::schema::pin_event::{name, HIT, RESUBMITTED};
    /// assert_eq!(name(0), Some("new pin"));
    /// assert_eq!(name(HIT | RESUBMITTED), Some("re-pinned"));
    /// assert_eq!(name(3), None);
    /// ```
    pub const fn name(index: u8) -> Option<&'static str> {
        match index {
            0 => Some("new pin"),
            HIT => Some("pin hit"),
            UNPINNED => Some("unpinned"),
            RESUBMITTED => Some("re-decided, new pin"),
            5 => Some("re-pinned"),
            6 => Some("re-decided, unpinned"),
            _ => None,
        }
    }
}

/// The pipeline's name (`Pipeline(...) pipe;` in `lcmp.p4`), which
/// prefixes the compiler's control-plane names (`pipe.LcmpIngress.x`).
pub const PIPE: &str = "pipe";

/// The low 24 bits of the id p4c gives an object it numbers by name (TNA
/// registers and digests): Bob Jenkins' one-at-a-time hash of its
/// pipeline-qualified name (`pipe.LcmpIngress.lcmp_pin0`), as p4c's
/// P4Runtime symbol table computes it (`control-plane/p4RuntimeSymbolTable`).
/// Written here because no crate of the workspace has this hash, and ours
/// must equal p4c's bit for bit (checked against the committed compiler
/// output, `tests/stamps.rs`). p4c moves an id on a collision; the
/// schema's test checks there is none among our names.
pub fn compiler_name_id(full_name: &str) -> u32 {
    let name = format!("{PIPE}.{full_name}");
    let mut h: u32 = 0;
    for b in name.bytes() {
        h = h.wrapping_add(u32::from(b));
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h = h.wrapping_add(h << 15);
    h & 0x00FF_FFFF
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

    /// The low 24 bits of its P4Runtime id, numbered by name as a
    /// [`Register::id`] is.
    pub fn id(&self) -> u32 {
        compiler_name_id(&self.full_name())
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
/// A flow-pin cell's initial "last seen" (`hi`): 0 of the data plane's
/// monotonic clock (`meta.now`, 2^24 ns units), so a cell is free once the
/// clock passes the idle timeout (seconds after the chip's reset). (Half a
/// wrap before 0, `0x80000000`, relied on a mod-2^32 comparison that the
/// stateful ALU does not make: it compares in 34-bit arithmetic.)
pub const PIN_EMPTY_SEEN: u32 = 0;
/// log2 of the data plane clock's unit in ns (`meta.now` counts 2^24 ns,
/// 16.78 ms).
pub const CLOCK_UNIT_SHIFT: u32 = 24;
/// `lcmp_clock`'s initial wrap count: `meta.now` starts 2^24 units (78
/// hours) after every cell's initial "last seen", so every cell is free
/// from the first packet, and the clock stays monotonic for 255 wraps of
/// the stamp (2.27 years).
pub const CLOCK_START_WRAPS: u32 = 1;
/// A wrap of the 32-bit stamp is a step back of more than this
/// (`CLOCK_WRAP`): packets reordered by microseconds are no wrap.
pub const CLOCK_WRAP: u32 = 0x4000_0000;
/// Cells of the pin-failure digest filter (`lcmp_fail`), indexed by
/// `sig[FAIL_INDEX_HI:FAIL_INDEX_HI - 11]`.
pub const FAIL_CELLS: u32 = 1 << 12;
/// The top bit of the filter's index in the signature (bits 23..12: not
/// way 0's low bits, so flows sharing a way-0 cell rarely share it).
pub const FAIL_INDEX_HI: u32 = 23;
/// Entries of the default route table (`lcmp_route`).
pub const ROUTE_TABLE_SIZE: u32 = 1024;
/// Entries of the exception table (`lcmp_exception`) and cells of its
/// counter: one per [`Reason`] code, with room.
pub const EXCEPTION_TABLE_SIZE: u32 = 16;
/// Entries of the next-hop table (`lcmp_next_hop`): every device port.
pub const NEXT_HOP_TABLE_SIZE: u32 = 1 << PORT_BITS;
/// Fewest flow-pin cells per way.
pub const MIN_PIN_WAY_SLOTS: u32 = 1 << 8;
/// The P4 struct of a pair register's cell (`{lo, hi}`, declared in the
/// template of `lcmp.p4`).
pub const PAIR_CELL_TYPE: &str = "lcmp_pin_t";
/// The P4 type of a register index (`pin_index_t`, declared in the template
/// with the width of [`Sizes::pin_index_bits`]).
pub const REGISTER_INDEX_TYPE: &str = "pin_index_t";

/// Actions (shared definitions), with their P4 bodies and ids.
pub mod actions {
    use super::{p, Action, Param, PORT_BITS};

    const fn port(name: &'static str) -> Param {
        Param {
            name,
            bits: PORT_BITS,
            typedef: Some("PortId_t"),
        }
    }

    /// Sets `meta.group` and the group's pick-list size `meta.k`, and marks
    /// the packet as LCMP-routed.
    pub const SET_GROUP: Action = Action {
        name: "set_group",
        id: 0x01,
        params: &[p("group", 16), p("k", 8)],
        body: &[
            "meta.group = group;",
            "meta.k = k;",
            "meta.lcmp = 1;",
            "meta.routed = 1;",
        ],
    };
    /// The destination is not an LCMP route: look it up in the default
    /// route table.
    pub const LCMP_MISS: Action = Action {
        name: "lcmp_miss",
        id: 0x03,
        params: &[],
        body: &["meta.lookup_route = 1;"],
    };
    /// The group has no live candidate: drop (counted, `R_NO_LIVE_PORT`).
    pub const NO_ROUTE: Action = Action {
        name: "no_route",
        id: 0x02,
        params: &[],
        body: &["ig_dprsr_md.drop_ctl = 1;", "meta.reason = R_NO_LIVE_PORT;"],
    };
    /// Sets `meta.bucket`, the top 16 hash bits scaled into `0..k`.
    pub const SET_BUCKET: Action = Action {
        name: "set_bucket",
        id: 0x04,
        params: &[p("bucket", 8)],
        body: &["meta.bucket = bucket;"],
    };
    /// Sets the selected egress port (a port of the group's pick list).
    pub const SET_PORT: Action = Action {
        name: "set_port",
        id: 0x05,
        params: &[port("port")],
        body: &["meta.out_port = port;", "meta.kept = 1;"],
    };
    /// A static or selection table missed (never, with consistent tables):
    /// drop (counted, `R_TABLE_MISS`).
    pub const DROP_MISS: Action = Action {
        name: "drop_miss",
        id: 0x06,
        params: &[],
        body: &["ig_dprsr_md.drop_ctl = 1;", "meta.reason = R_TABLE_MISS;"],
    };
    /// The port is up: forward.
    pub const PORT_UP: Action = Action {
        name: "port_up",
        id: 0x07,
        params: &[],
        body: &["ig_tm_md.ucast_egress_port = meta.out_port;"],
    };
    /// The port is down: re-decide a pinned flow (resubmit), else drop.
    pub const PORT_DOWN: Action = Action {
        name: "port_down",
        id: 0x08,
        params: &[],
        body: &["meta.dead = 1;"],
    };
    /// A default route: forward to a port (no LCMP, no liveness check).
    pub const ROUTE: Action = Action {
        name: "route",
        id: 0x09,
        params: &[port("port")],
        body: &[
            "meta.out_port = port;",
            "meta.routed = 1;",
            "ig_tm_md.ucast_egress_port = port;",
        ],
    };
    /// No default route: the packet is not routed (`R_UNROUTED`, set at
    /// the end of the ingress: a write of `meta.reason` here would order
    /// the bucket table's after it, one stage later).
    pub const ROUTE_MISS: Action = Action {
        name: "route_miss",
        id: 0x0A,
        params: &[],
        body: &[],
    };
    /// The pinned or selected port is a candidate of the group.
    pub const MEMBER: Action = Action {
        name: "member",
        id: 0x0B,
        params: &[],
        body: &["meta.member = 1;"],
    };
    /// Not a candidate of the group (withdrawn by an update): a pinned flow
    /// is decided again.
    pub const NOT_MEMBER: Action = Action {
        name: "not_member",
        id: 0x0C,
        params: &[],
        body: &[],
    };
    /// The next hop of a port: MAC rewrite and TTL decrement.
    pub const SET_NEXT_HOP: Action = Action {
        name: "set_next_hop",
        id: 0x0D,
        params: &[p("src_mac", 48), p("dst_mac", 48)],
        body: &[
            "hdr.ethernet.src_addr = src_mac;",
            "hdr.ethernet.dst_addr = dst_mac;",
            "hdr.ipv4.ttl = hdr.ipv4.ttl - 1;",
        ],
    };

    /// A flow no pin cell could hold: the group's stable fallback port
    /// (a hash over its live candidates that congestion changes do not
    /// move), counted by the table's direct counter.
    pub const FALLBACK: Action = Action {
        name: "fallback",
        id: 0x0E,
        params: &[port("port")],
        body: &[
            "meta.fb_port = port;",
            "meta.fb_tag = FB_TAG | (bit<16>)port;",
        ],
    };
    /// No fallback entry (never, with consistent tables): the selection's
    /// port.
    pub const FALLBACK_MISS: Action = Action {
        name: "fallback_miss",
        id: 0x0F,
        params: &[],
        body: &[],
    };

    /// An exception to the switch CPU: the `lcmp_cpu_h` header (reason,
    /// ingress port) in front of the packet, unchanged otherwise; counted
    /// under its reason.
    pub const TO_CPU: Action = Action {
        name: "to_cpu",
        id: 0x10,
        params: &[port("port")],
        body: &[
            "hdr.cpu.setValid();",
            "hdr.cpu.reason = meta.reason;",
            "hdr.cpu.pad = 0;",
            "hdr.cpu.ingress_port = ig_intr_md.ingress_port;",
            "ig_tm_md.ucast_egress_port = port;",
            "ig_dprsr_md.drop_ctl = 0;",
            "lcmp_exceptions.count(meta.reason);",
        ],
    };
    /// An exception the switch drops: counted under its reason.
    pub const DROP_EXCEPTION: Action = Action {
        name: "drop_exception",
        id: 0x11,
        params: &[],
        body: &[
            "ig_dprsr_md.drop_ctl = 1;",
            "lcmp_exceptions.count(meta.reason);",
        ],
    };

    /// The exception table's default: a reason without an entry (never:
    /// the exported entries list every [`super::Reason`]) is dropped,
    /// uncounted. Counting under `meta.reason` indexes the counter through
    /// the hash distribution unit, which bf-p4c refuses in a default
    /// action ("requires the hash distribution unit").
    pub const EXCEPTION_MISS: Action = Action {
        name: "exception_miss",
        id: 0x12,
        params: &[],
        body: &["ig_dprsr_md.drop_ctl = 1;"],
    };

    /// Every action of `LcmpIngress`, in the order `lcmp.p4` declares
    /// them (a unit test checks that it holds exactly the tables' actions).
    pub const INGRESS: [&Action; 18] = [
        &SET_GROUP,
        &NO_ROUTE,
        &LCMP_MISS,
        &SET_BUCKET,
        &SET_PORT,
        &DROP_MISS,
        &PORT_UP,
        &PORT_DOWN,
        &ROUTE,
        &ROUTE_MISS,
        &MEMBER,
        &NOT_MEMBER,
        &SET_NEXT_HOP,
        &FALLBACK,
        &FALLBACK_MISS,
        &TO_CPU,
        &DROP_EXCEPTION,
        &EXCEPTION_MISS,
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
    pub(super) const ROUTE: &[KeyField] = &[key("dst_addr", "hdr.ipv4.dst_addr", 32, Lpm)];
    pub(super) const MEMBER: &[KeyField] = &[
        key("group", "meta.group", 16, Exact),
        key("port", "meta.out_port", PORT_BITS, Exact),
    ];
    pub(super) const NEXT_HOP: &[KeyField] = &[key("port", "meta.out_port", PORT_BITS, Exact)];
    pub(super) const EXCEPTION: &[KeyField] = &[key("reason", "meta.reason", 8, Exact)];
    pub(super) const FALLBACK: &[KeyField] = &[
        key("group", "meta.group", 16, Exact),
        key("hash_lo", "meta.hash[15:0]", HASH_HI_BITS, Range),
    ];
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
    /// The default route table (destinations that are not LCMP groups).
    pub const ROUTE: &str = "lcmp_route";
    /// `(group, port)` candidate membership.
    pub const MEMBER: &str = "lcmp_member";
    /// Port to next hop (MAC rewrite, TTL decrement).
    pub const NEXT_HOP: &str = "lcmp_next_hop";
    /// The pin-failure digest's filter: `{signature, last reported}`.
    pub const REG_FAIL: &str = "lcmp_fail";
    /// `(group, hash[15:0])` ranges to the group's stable fallback port.
    pub const FALLBACK: &str = "lcmp_fallback";
    /// `{when a flow hashing to the cell last went unpinned (clock units),
    /// its fallback port}`: a new pin of a flow unpinned within the idle
    /// timeout records its fallback port, so that taking a cell never
    /// moves it.
    pub const REG_UNPINNED: &str = "lcmp_unpinned";
    /// Flow pin, way 0: `{signature, last seen}`.
    pub const REG_PIN0: &str = "lcmp_pin0";
    /// Flow pin, way 1.
    pub const REG_PIN1: &str = "lcmp_pin1";
    /// Pinned port, way 0.
    pub const REG_PORT0: &str = "lcmp_port0";
    /// Pinned port, way 1.
    pub const REG_PORT1: &str = "lcmp_port1";
    /// The data plane's clock: `{wraps of the 32-bit stamp, last stamp}`.
    pub const REG_CLOCK: &str = "lcmp_clock";
    /// The safe gap of `lcmp_pin0`'s cells (a `RegisterParam`, clock
    /// units; the agent writes it, `Agent::pin_gap_units`).
    pub const PARAM_GAP0: &str = "pin0_gap";
    /// The safe gap of `lcmp_pin1`'s cells.
    pub const PARAM_GAP1: &str = "pin1_gap";
    /// The pin-failure digests' rate limit (a one-cell packet `Meter`).
    pub const METER_DIGEST: &str = "digest_meter";
    /// The pin-failure digest.
    pub const DIGEST_PIN_FAIL: &str = "pin_fail";
    /// `meta.reason` to the CPU port or a counted drop.
    pub const EXCEPTION: &str = "lcmp_exception";
    /// Packets and bytes not forwarded, by reason (`meta.reason`).
    pub const CTR_EXCEPTIONS: &str = "lcmp_exceptions";
    /// Packets the selection routed, by pin event (`meta.pin_event`).
    pub const CTR_PIN_EVENTS: &str = "lcmp_pin_events";
    /// Packets and bytes leaving each device port (egress).
    pub const CTR_PORT_TX: &str = "lcmp_port_tx";
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
    /// Counters.
    pub counters: Vec<Counter>,
}

impl Schema {
    /// The schema of the program generated for `sizes`.
    pub fn new(sizes: &Sizes) -> Schema {
        use names::*;
        use Control::Ingress;
        let t =
            |name, id, keys, actions, default_action: &'static Action, size: u32, dynamic| Table {
                name,
                id,
                control: Ingress,
                keys,
                actions,
                default_action,
                size: size.max(1),
                dynamic,
            };
        let candidates = sizes.groups * sizes.max_k;
        let tables = vec![
            t(
                DST_GROUP,
                0x01,
                keys::DST,
                &[SET_GROUP, NO_ROUTE],
                &LCMP_MISS,
                sizes.groups,
                true,
            ),
            t(
                ROUTE,
                0x05,
                keys::ROUTE,
                &[actions::ROUTE],
                &ROUTE_MISS,
                ROUTE_TABLE_SIZE,
                true,
            ),
            t(
                BUCKET,
                0x02,
                keys::BUCKET,
                &[SET_BUCKET],
                &DROP_MISS,
                sizes.bucket_entries(),
                false,
            ),
            t(
                SELECT,
                0x03,
                keys::SELECT,
                &[SET_PORT],
                &DROP_MISS,
                candidates,
                true,
            ),
            t(
                PORT_ALIVE,
                0x04,
                keys::ALIVE,
                &[PORT_UP, PORT_DOWN],
                &PORT_DOWN,
                sizes.ports,
                true,
            ),
            t(
                MEMBER,
                0x06,
                keys::MEMBER,
                &[actions::MEMBER],
                &NOT_MEMBER,
                candidates,
                true,
            ),
            t(
                NEXT_HOP,
                0x07,
                keys::NEXT_HOP,
                &[SET_NEXT_HOP],
                &DROP_MISS,
                NEXT_HOP_TABLE_SIZE,
                true,
            ),
            t(
                FALLBACK,
                0x08,
                keys::FALLBACK,
                &[actions::FALLBACK],
                &FALLBACK_MISS,
                candidates,
                true,
            ),
            t(
                EXCEPTION,
                0x09,
                keys::EXCEPTION,
                &[TO_CPU, DROP_EXCEPTION],
                &EXCEPTION_MISS,
                EXCEPTION_TABLE_SIZE,
                false,
            ),
        ];
        let way = sizes.pin_way_slots();
        let r = |name, bits, pair, size| Register {
            name,
            control: Ingress,
            bits,
            pair,
            size,
            initial_lo: 0,
        };
        let registers = vec![
            r(REG_PIN0, 32, true, way),
            r(REG_PIN1, 32, true, way),
            r(REG_PORT0, 16, false, way),
            r(REG_PORT1, 16, false, way),
            r(REG_FAIL, 32, true, FAIL_CELLS),
            r(REG_UNPINNED, 32, true, way),
            Register {
                initial_lo: CLOCK_START_WRAPS << 24,
                ..r(REG_CLOCK, 32, true, 1)
            },
        ];
        let digests = vec![Digest {
            name: DIGEST_PIN_FAIL,
            control: Control::IngressDeparser,
            type_name: "lcmp_pin_fail_t",
            fields: PIN_FAIL_FIELDS,
        }];
        let c = |name, control, size, index_type| Counter {
            name,
            control,
            size,
            index_type,
        };
        let counters = vec![
            c(CTR_EXCEPTIONS, Ingress, EXCEPTION_TABLE_SIZE, "bit<8>"),
            c(CTR_PIN_EVENTS, Ingress, pin_event::CELLS, "bit<3>"),
            c(
                CTR_PORT_TX,
                Control::Egress,
                NEXT_HOP_TABLE_SIZE,
                "PortId_t",
            ),
        ];
        Schema {
            tables,
            registers,
            digests,
            counters,
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

    /// The P4Runtime ids of a register and the digest: our standard
    /// prefix and the low 24 bits bf-p4c 34b86e9 gave the extern instances
    /// in the committed P4Info (tests/golden/compiled/tofino/p4info.txtpb:
    /// 2 333 759 429 and 2 398 426 313, under its extern prefixes), and
    /// every register's and digest's id from its own full name.
    #[test]
    fn register_and_digest_ids_are_the_compilers() {
        let schema = Schema::new(&Sizes {
            groups: 3,
            max_k: 4,
            ports: 5,
            pin_slots: 1024,
        });
        use crate::render::p4runtime::register_id;
        assert_eq!(
            register_id(&schema, names::REG_PIN0),
            REGISTER_ID_PREFIX | (2_333_759_429 & 0x00FF_FFFF)
        );
        assert_eq!(register_id(&schema, "no_such_register"), 0);
        let d = schema
            .digests
            .iter()
            .find(|d| d.name == names::DIGEST_PIN_FAIL)
            .expect("the pin-failure digest");
        assert_eq!(
            DIGEST_ID_PREFIX | d.id(),
            DIGEST_ID_PREFIX | (2_398_426_313 & 0x00FF_FFFF)
        );
        // Its width is what the compiler packed: the sum of the learn
        // filter's field widths in the committed BF-Runtime schema.
        let bfrt: serde_json::Value =
            serde_json::from_str(include_str!("../tests/golden/compiled/tofino/bf-rt.json"))
                .expect("bf-rt.json");
        let filter = bfrt["learn_filters"]
            .as_array()
            .and_then(|l| {
                l.iter()
                    .find(|f| f["name"].as_str() == Some(&format!("{PIPE}.{}", d.full_name())))
            })
            .expect("the compiler's learn filter of the digest");
        let packed: u64 = filter["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .filter_map(|f| f["type"]["width"].as_u64())
            .sum();
        assert!(packed > 1);
        assert_eq!(u64::from(d.bits()), packed);
        for r in &schema.registers {
            assert_eq!(r.id(), compiler_name_id(&r.full_name()), "{}", r.name);
        }
        for d in &schema.digests {
            assert_eq!(d.id(), compiler_name_id(&d.full_name()), "{}", d.name);
        }
    }

    #[test]
    fn pin_slots_are_clamped_powers_of_two() {
        for (requested, slots) in [
            (0, 2 * MIN_PIN_WAY_SLOTS),
            (2 * MIN_PIN_WAY_SLOTS + 1, 4 * MIN_PIN_WAY_SLOTS),
            (3_000, 4_096),
            (100_000, 131_072),
            (u32::MAX, 2 * MAX_PIN_WAY_SLOTS),
        ] {
            assert_eq!(Sizes::pin_slots_for(requested), slots, "{requested}");
        }
    }

    #[test]
    fn ids_are_declared_unique_and_prefix_free() {
        let sizes = Sizes {
            groups: 3,
            max_k: 4,
            ports: 5,
            pin_slots: 1024,
        };
        let schema = Schema::new(&sizes);
        let mut ids: Vec<(u32, &str)> = Vec::new();
        ids.extend(
            schema
                .tables
                .iter()
                .map(|t| (TABLE_ID_PREFIX | t.id, t.name)),
        );
        ids.extend(INGRESS.iter().map(|a| (ACTION_ID_PREFIX | a.id, a.name)));
        ids.extend(
            schema
                .registers
                .iter()
                .map(|r| (REGISTER_ID_PREFIX | r.id(), r.name)),
        );
        ids.extend(
            schema
                .digests
                .iter()
                .map(|d| (DIGEST_ID_PREFIX | d.id(), d.name)),
        );
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup_by_key(|x| x.0);
        assert_eq!(ids.len(), n, "duplicate id");
        assert!(ids.iter().all(|(id, _)| id & 0x00FF_FFFF != 0));
        // Registers and digests by name, as bf-p4c 34b86e9 numbered them in
        // the committed P4Info (tests/golden/compiled/tofino/p4info.txtpb).
        assert_eq!(compiler_name_id("LcmpIngress.lcmp_pin0"), 1_726_405);
        assert_eq!(compiler_name_id("LcmpIngress.lcmp_clock"), 205_994);
        assert_eq!(compiler_name_id("LcmpIngressDeparser.pin_fail"), 16_061_641);
        // The ids do not follow positions: reordering the schema keeps them.
        assert_eq!(schema.table(names::SELECT).map(|t| t.id), Some(0x03));
        assert_eq!(
            schema.tables.iter().position(|t| t.name == names::SELECT),
            Some(3)
        );
    }
}
