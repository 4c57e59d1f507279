//! The P4_16 TNA program `lcmp.p4`, generated for a [`Program`]'s sizes,
//! seed and weights. Every table, key, action and register comes from the
//! [`crate::schema::Schema`]; the header comment carries the resource
//! estimate of [`resources`].

use core::fmt::Write as _;

use crate::hash::{p4_field_list, CRC32, CRC32C, ECMP_FIELDS, SIG_FIELDS};
use crate::model::Program;
use crate::schema::{Control, MatchKind, Schema, Table};

/// Bits in one SRAM block (1024 words of 128 bits), Tofino 1 and 2.
pub const SRAM_BLOCK_BITS: u64 = 128 * 1024;
/// TCAM block: 512 entries of 44 bits.
pub const TCAM_BLOCK_ENTRIES: u64 = 512;
/// TCAM block width.
pub const TCAM_BLOCK_BITS: u64 = 44;

/// One table's or register's estimated footprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Object name.
    pub name: String,
    /// `exact`, `lpm`, `range`, `register`.
    pub kind: &'static str,
    /// Entries or cells.
    pub entries: u64,
    /// SRAM blocks (match and action data, or register cells).
    pub sram_blocks: u64,
    /// TCAM blocks.
    pub tcam_blocks: u64,
}

/// The resource estimate of a program: per object, and stage counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Per table and register.
    pub objects: Vec<Footprint>,
    /// Ingress stages on the dependency chain.
    pub ingress_stages: u32,
    /// Egress stages on the dependency chain.
    pub egress_stages: u32,
    /// Bits of register state.
    pub register_bits: u64,
}

impl Resources {
    /// Total SRAM blocks.
    pub fn sram_blocks(&self) -> u64 {
        self.objects.iter().map(|o| o.sram_blocks).sum()
    }

    /// Total TCAM blocks.
    pub fn tcam_blocks(&self) -> u64 {
        self.objects.iter().map(|o| o.tcam_blocks).sum()
    }
}

fn table_footprint(t: &Table) -> Footprint {
    let key_bits: u64 = t.keys.iter().map(|k| u64::from(k.bits)).sum();
    let data_bits: u64 = t
        .actions
        .iter()
        .map(|a| a.params.iter().map(|p| u64::from(p.bits)).sum::<u64>())
        .max()
        .unwrap_or(0);
    let entries = u64::from(t.size);
    let ternary = t.keys.iter().any(|k| k.kind != MatchKind::Exact);
    if ternary {
        // Range keys expand into about two TCAM words per 4-bit nibble
        // (DirtCAM); LPM needs one word per entry.
        let expand: u64 = t
            .keys
            .iter()
            .map(|k| {
                if k.kind == MatchKind::Range {
                    2 * u64::from(k.bits).div_ceil(4)
                } else {
                    1
                }
            })
            .max()
            .unwrap_or(1);
        let words = entries * expand;
        let width_blocks = key_bits.div_ceil(TCAM_BLOCK_BITS);
        let tcam = words.div_ceil(TCAM_BLOCK_ENTRIES) * width_blocks;
        let sram = (words * (data_bits + 8)).div_ceil(SRAM_BLOCK_BITS).max(1);
        let kind = if t.keys.iter().any(|k| k.kind == MatchKind::Range) {
            "range"
        } else {
            "lpm"
        };
        Footprint {
            name: t.full_name(),
            kind,
            entries,
            sram_blocks: sram,
            tcam_blocks: tcam,
        }
    } else {
        // Exact match: key + action data + ~8 bits of overhead per entry, in
        // cuckoo-hashed SRAM at ~80 % fill.
        let bits = entries * (key_bits + data_bits + 8) * 5 / 4;
        Footprint {
            name: t.full_name(),
            kind: "exact",
            entries,
            sram_blocks: bits.div_ceil(SRAM_BLOCK_BITS).max(1),
            tcam_blocks: 0,
        }
    }
}

/// The resource estimate of `program`.
pub fn resources(program: &Program) -> Resources {
    let schema = program.schema();
    let mut objects: Vec<Footprint> = schema.tables.iter().map(table_footprint).collect();
    for r in &schema.registers {
        let cell = u64::from(r.bits) * if r.pair { 2 } else { 1 };
        let size = u64::from(r.size);
        objects.push(Footprint {
            name: r.full_name(),
            kind: "register",
            entries: size,
            // One extra block per register for the stateful ALU's spare.
            sram_blocks: (size * cell).div_ceil(SRAM_BLOCK_BITS) + 1,
            tcam_blocks: 0,
        });
    }
    // Ingress chain: dst_group -> group_size -> 8 residue tables (one stage)
    // -> adder tree (3) -> fold -> select -> pin -> pin_port -> port_alive.
    // Egress chain: port_class -> qdepth -> trend LPF -> quantise ->
    // duration -> C_cong adds (2) -> C_cong register.
    let register_bits = schema
        .registers
        .iter()
        .map(|r| u64::from(r.bits) * if r.pair { 2 } else { 1 } * u64::from(r.size))
        .sum();
    Resources {
        objects,
        ingress_stages: 11,
        egress_stages: 8,
        register_bits,
    }
}

fn header_comment(program: &Program) -> String {
    let s = &program.sizes;
    let r = resources(program);
    let mut o = String::new();
    let _ = writeln!(o, "/*");
    let _ = writeln!(
        o,
        " * lcmp.p4: LCMP (EuroSys '26) for Tofino (TNA), generated by lcmp-tofino."
    );
    let _ = writeln!(o, " * Do not edit: regenerate with `lcmp tofino p4`.");
    let _ = writeln!(o, " *");
    let _ = writeln!(
        o,
        " * Sizes: {} groups, pick lists up to {}, {} ports in {} classes, {} levels,",
        s.groups, s.max_k, s.ports, s.classes, s.levels
    );
    let _ = writeln!(
        o,
        " * {} flow-pin cells; ECMP hash CRC-32 ^ 0x{:08X}.",
        s.pin_slots, program.seed
    );
    let _ = writeln!(o, " *");
    let _ = writeln!(
        o,
        " * Estimated resources (see docs/tofino.md for the method):"
    );
    let _ = writeln!(
        o,
        " *   {:<30} {:>8} {:>8} {:>5} {:>5}",
        "object", "kind", "entries", "SRAM", "TCAM"
    );
    for f in &r.objects {
        let _ = writeln!(
            o,
            " *   {:<30} {:>8} {:>8} {:>5} {:>5}",
            f.name, f.kind, f.entries, f.sram_blocks, f.tcam_blocks
        );
    }
    let _ = writeln!(
        o,
        " *   total SRAM blocks {}, TCAM blocks {}",
        r.sram_blocks(),
        r.tcam_blocks()
    );
    let _ = writeln!(o, " *   register bits {}", r.register_bits);
    let _ = writeln!(
        o,
        " *   stages on the dependency chain: ingress {}, egress {}",
        r.ingress_stages, r.egress_stages
    );
    for (chip, stages) in [("Tofino 1", 12u64), ("Tofino 2", 20)] {
        let (sram, tcam) = (80 * stages, 24 * stages);
        let _ = writeln!(
            o,
            " *   {chip}: {stages} stages; SRAM {}/{sram} blocks ({}%), TCAM {}/{tcam} ({}%) per pipe",
            r.sram_blocks(),
            (100 * r.sram_blocks()).div_ceil(sram),
            r.tcam_blocks(),
            (100 * r.tcam_blocks()).div_ceil(tcam),
        );
    }
    let _ = writeln!(o, " */");
    o
}

fn key_line(k: &crate::schema::KeyField) -> String {
    format!(
        "            {:<26}: {} @name(\"{}\");",
        k.expr,
        k.kind.p4(),
        k.name
    )
}

fn table_decl(t: &Table) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "    table {} {{", t.name);
    let _ = writeln!(o, "        key = {{");
    for k in t.keys {
        let _ = writeln!(o, "{}", key_line(k));
    }
    let _ = writeln!(o, "        }}");
    let _ = writeln!(o, "        actions = {{");
    for a in t.actions {
        let _ = writeln!(o, "            {};", a.name);
    }
    let _ = writeln!(o, "        }}");
    let _ = writeln!(o, "        default_action = {}();", t.default_action.name);
    let _ = writeln!(o, "        size = {};", t.size);
    let _ = writeln!(o, "    }}");
    o
}

fn tables_of(schema: &Schema, control: Control) -> String {
    schema
        .tables
        .iter()
        .filter(|t| t.control == control)
        .map(table_decl)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The set bits of a weight: `w · x = Σ_{s in shifts(w)} x << s`.
pub fn shifts(w: u32) -> Vec<u32> {
    (0..32).filter(|b| (w >> b) & 1 == 1).collect()
}

/// `Σ w·x` as P4 shifts and adds: `((bit<32>)x << s)` for every set bit.
fn shift_add(var: &str, w: u32) -> Vec<String> {
    shifts(w)
        .into_iter()
        .map(|b| {
            if b == 0 {
                format!("(bit<32>){var}")
            } else {
                format!("((bit<32>){var} << {b})")
            }
        })
        .collect()
}

/// What the egress computes for `C_cong` (Eq. 4-5): the shift-add sum in
/// `bit<32>`, shifted right by `S_cong`, capped at 255.
///
/// ```
/// # use lcmp_decide::{cost::congestion_cost, Weights};
/// let w = Weights::PAPER;
/// assert_eq!(lcmp_tofino::render::p4::ccong_shift_add(&w, 204, 51, 3), congestion_cost(204, 51, 3, &w));
/// ```
pub fn ccong_shift_add(w: &lcmp_decide::Weights, q: u8, t: u8, d: u8) -> u8 {
    let mut sum: u32 = 0;
    for (x, weight) in [(q, w.w_ql), (t, w.w_tl), (d, w.w_dp)] {
        for s in shifts(weight) {
            sum = sum.wrapping_add(u32::from(x) << s);
        }
    }
    let shifted = if w.s_cong >= 32 { 0 } else { sum >> w.s_cong };
    shifted.min(255) as u8
}

/// The program text.
pub fn render(program: &Program) -> String {
    let schema = program.schema();
    let s = &program.sizes;
    let w = &program.weights;
    let pin_bits = s.pin_index_bits().max(1);
    let mut terms: Vec<String> = Vec::new();
    terms.extend(shift_add("emeta.q", w.w_ql));
    terms.extend(shift_add("emeta.t", w.w_tl));
    terms.extend(shift_add("emeta.d", w.w_dp));
    if terms.is_empty() {
        terms.push("32w0".to_string());
    }
    let crc32 = format!("{} ecmp_poly", CRC32.p4());
    let crc32c = format!("{} sig_poly", CRC32C.p4());
    let mut o = header_comment(program);
    let _ = write!(
        o,
        r#"
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

// ---- Configuration ------------------------------------------------------
const bit<32> LCMP_SEED = 32w0x{seed:08X};   // per-switch ECMP seed
const bit<32> PIN_IDLE = 32w{pin_idle};          // flow-pin idle timeout, 65.536 us units
const bit<8> HIGH_WATER = {high};              // duration counter rises at Q >= this
const bit<8> LOW_WATER = {low};                // ... and decays at Q <= this
const bit<32> S_CONG = {s_cong};                 // Eq. 5 right shift
typedef bit<{pin_bits}> pin_index_t;

// ---- Headers ------------------------------------------------------------
header ethernet_h {{
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}}

header ipv4_h {{
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}}

header l4_h {{
    bit<16> src_port;
    bit<16> dst_port;
}}

// Tofino 1 resubmit data: 64 bits.
header lcmp_resubmit_h {{
    bit<8>  kind;
    bit<56> pad;
}}

struct headers_t {{
    ethernet_h ethernet;
    ipv4_h     ipv4;
    l4_h       l4;
}}

struct lcmp_pin_t {{
    bit<32> lo;   // flow signature (CRC-32C of the 5-tuple)
    bit<32> hi;   // last seen, ingress_mac_tstamp[47:16]
}}

struct lcmp_meta_t {{
    lcmp_resubmit_h resubmit;
    bit<1>      lcmp;       // the destination is an LCMP route
    bit<1>      pin_hit;
    bit<1>      dead;
    bit<16>     group;
    bit<32>     hash;       // CRC-32(ECMP key) ^ LCMP_SEED
    bit<32>     sig;
    pin_index_t pin_idx;
    bit<32>     now;
    bit<16>     l4_sport;
    bit<16>     l4_dport;
    bit<8>      k;          // pick-list size of the group
    bit<8>      r0;
    bit<8>      r1;
    bit<8>      r2;
    bit<8>      r3;
    bit<8>      r4;
    bit<8>      r5;
    bit<8>      r6;
    bit<8>      r7;
    bit<8>      rsum;
    bit<8>      bucket;     // hash mod k
    PortId_t    sel_port;   // the selection table's port
    PortId_t    out_port;
}}

struct lcmp_egress_meta_t {{
    bit<1>  lcmp;
    bit<8>  idx;
    bit<8>  cls;
    bit<8>  q;
    bit<8>  t;
    bit<8>  d;
    bit<32> qdepth;
    bit<32> growth;
    bit<32> trend;
    bit<32> dur;
    bit<32> ccong_sum;
}}

// ---- Ingress parser -----------------------------------------------------
parser LcmpIngressParser(packet_in pkt, out headers_t hdr, out lcmp_meta_t meta,
                         out ingress_intrinsic_metadata_t ig_intr_md) {{
    state start {{
        pkt.extract(ig_intr_md);
        meta.l4_sport = 0;
        meta.l4_dport = 0;
        transition select(ig_intr_md.resubmit_flag) {{
            1: parse_resubmit;
            default: parse_port_metadata;
        }}
    }}
    state parse_resubmit {{
        pkt.extract(meta.resubmit);
        transition parse_ethernet;
    }}
    state parse_port_metadata {{
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }}
    state parse_ethernet {{
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {{
            0x0800: parse_ipv4;
            default: accept;
        }}
    }}
    state parse_ipv4 {{
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {{
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }}
    }}
    state parse_l4 {{
        pkt.extract(hdr.l4);
        meta.l4_sport = hdr.l4.src_port;
        meta.l4_dport = hdr.l4.dst_port;
        transition accept;
    }}
}}

// ---- Ingress: group, hash, hash mod k, selection, flow pin, liveness ----
control LcmpIngress(inout headers_t hdr, inout lcmp_meta_t meta,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
    // The core's HashAlgorithm::Crc32: CRC-32/ISO-HDLC over FlowKey::ecmp_bytes
    // (little-endian words, hence the byte-swapped field list).
    {crc32};
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, ecmp_poly) ecmp_hash;
    {crc32c};
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, sig_poly) sig_hash;

    // Flow pin: {{signature, last seen}} and the pinned port (LCMP §3.1 step 5).
    Register<lcmp_pin_t, pin_index_t>({pin_slots}) lcmp_pin;
    RegisterAction<lcmp_pin_t, pin_index_t, bit<1>>(lcmp_pin) pin_check = {{
        void apply(inout lcmp_pin_t v, out bit<1> hit) {{
            if (v.lo == meta.sig && meta.now - v.hi <= PIN_IDLE) {{
                v.hi = meta.now;
                hit = 1;
            }} else {{
                v.lo = meta.sig;
                v.hi = meta.now;
                hit = 0;
            }}
        }}
    }};
    // The resubmitted pass of a flow whose pinned port died: re-pin.
    RegisterAction<lcmp_pin_t, pin_index_t, bit<1>>(lcmp_pin) pin_force = {{
        void apply(inout lcmp_pin_t v, out bit<1> hit) {{
            v.lo = meta.sig;
            v.hi = meta.now;
            hit = 0;
        }}
    }};
    Register<bit<16>, pin_index_t>({pin_slots}) lcmp_pin_port;
    RegisterAction<bit<16>, pin_index_t, bit<16>>(lcmp_pin_port) pin_port_read = {{
        void apply(inout bit<16> v, out bit<16> port) {{
            port = v;
        }}
    }};
    RegisterAction<bit<16>, pin_index_t, bit<16>>(lcmp_pin_port) pin_port_write = {{
        void apply(inout bit<16> v, out bit<16> port) {{
            v = (bit<16>)meta.sel_port;
            port = v;
        }}
    }};

    action set_group(bit<16> group) {{
        meta.group = group;
        meta.lcmp = 1;
    }}
    action lcmp_miss() {{
        meta.lcmp = 0;
    }}
    action set_group_size(bit<8> k) {{
        meta.k = k;
    }}
    action no_route() {{
        ig_dprsr_md.drop_ctl = 1;
        meta.lcmp = 0;
    }}
    action set_r0(bit<8> r) {{ meta.r0 = r; }}
    action set_r1(bit<8> r) {{ meta.r1 = r; }}
    action set_r2(bit<8> r) {{ meta.r2 = r; }}
    action set_r3(bit<8> r) {{ meta.r3 = r; }}
    action set_r4(bit<8> r) {{ meta.r4 = r; }}
    action set_r5(bit<8> r) {{ meta.r5 = r; }}
    action set_r6(bit<8> r) {{ meta.r6 = r; }}
    action set_r7(bit<8> r) {{ meta.r7 = r; }}
    action set_bucket(bit<8> bucket) {{
        meta.bucket = bucket;
    }}
    action set_port(PortId_t port) {{
        meta.sel_port = port;
    }}
    action port_up() {{
        meta.dead = 0;
    }}
    action port_down() {{
        meta.dead = 1;
    }}

{ingress_tables}
    apply {{
        meta.lcmp = 0;
        meta.dead = 0;
        if (hdr.ipv4.isValid()) {{
            lcmp_dst_group.apply();
        }}
        if (meta.lcmp == 1) {{
            meta.hash = ecmp_hash.get({ecmp_fields}) ^ LCMP_SEED;
            meta.sig = sig_hash.get({sig_fields});
            meta.pin_idx = meta.sig[{pin_hi}:0];
            meta.now = ig_intr_md.ingress_mac_tstamp[47:16];
            lcmp_group_size.apply();
        }}
        if (meta.lcmp == 1) {{
            // hash mod k from the nibbles: r_i = (n_i * 16^i) mod k.
            lcmp_mod_n0.apply();
            lcmp_mod_n1.apply();
            lcmp_mod_n2.apply();
            lcmp_mod_n3.apply();
            lcmp_mod_n4.apply();
            lcmp_mod_n5.apply();
            lcmp_mod_n6.apply();
            lcmp_mod_n7.apply();
            meta.r0 = meta.r0 + meta.r1;
            meta.r2 = meta.r2 + meta.r3;
            meta.r4 = meta.r4 + meta.r5;
            meta.r6 = meta.r6 + meta.r7;
            meta.r0 = meta.r0 + meta.r2;
            meta.r4 = meta.r4 + meta.r6;
            meta.rsum = meta.r0 + meta.r4;   // <= 8 (k - 1) < 128
            lcmp_mod_fold.apply();
            lcmp_select.apply();
        }}
        if (meta.lcmp == 1) {{
            if (ig_intr_md.resubmit_flag == 1) {{
                meta.pin_hit = pin_force.execute(meta.pin_idx);
            }} else {{
                meta.pin_hit = pin_check.execute(meta.pin_idx);
            }}
            if (meta.pin_hit == 1) {{
                meta.out_port = (PortId_t)pin_port_read.execute(meta.pin_idx);
            }} else {{
                meta.out_port = (PortId_t)pin_port_write.execute(meta.pin_idx);
            }}
            lcmp_port_alive.apply();
            if (meta.dead == 1) {{
                if (meta.pin_hit == 1) {{
                    // Lazy fast failover: decide again as a new flow.
                    meta.resubmit.setValid();
                    meta.resubmit.kind = 1;
                    meta.resubmit.pad = 0;
                    ig_dprsr_md.resubmit_type = 1;
                }} else {{
                    ig_dprsr_md.drop_ctl = 1;
                }}
            }} else {{
                ig_tm_md.ucast_egress_port = meta.out_port;
            }}
        }}
    }}
}}

control LcmpIngressDeparser(packet_out pkt, inout headers_t hdr, in lcmp_meta_t meta,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    Resubmit() resubmit;
    apply {{
        if (ig_dprsr_md.resubmit_type == 1) {{
            resubmit.emit(meta.resubmit);
        }}
        pkt.emit(hdr);
    }}
}}

// ---- Egress: queue level Q, trend T, duration D, C_cong -----------------
parser LcmpEgressParser(packet_in pkt, out headers_t hdr, out lcmp_egress_meta_t emeta,
                        out egress_intrinsic_metadata_t eg_intr_md) {{
    state start {{
        pkt.extract(eg_intr_md);
        transition accept;
    }}
}}

control LcmpEgress(inout headers_t hdr, inout lcmp_egress_meta_t emeta,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {{
    // Last deq_qdepth per port (80-byte cells): the agent polls it and feeds
    // Decider::sample(now, port, cells * 80).
    Register<bit<32>, bit<8>>({ports}) lcmp_qdepth;
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_qdepth) qdepth_swap = {{
        void apply(inout bit<32> v, out bit<32> prev) {{
            prev = v;
            v = emeta.qdepth;
        }}
    }};
    // Trend: a hardware low-pass filter of the queue growth (see docs).
    Lpf<bit<32>, bit<8>>({ports}) lcmp_trend_lpf;
    // The trend, for the agent's telemetry.
    Register<bit<32>, bit<8>>({ports}) lcmp_trend;
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_trend) trend_write = {{
        void apply(inout bit<32> v) {{
            v = emeta.trend;
        }}
    }};
    // Duration counter: +1 at Q >= HIGH_WATER, -1 (floor 0) at Q <= LOW_WATER.
    Register<bit<32>, bit<8>>({ports}) lcmp_duration;
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_duration) dur_up = {{
        void apply(inout bit<32> v, out bit<32> rv) {{
            if (v < 32w0xFFFF) {{
                v = v + 1;
            }}
            rv = v;
        }}
    }};
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_duration) dur_down = {{
        void apply(inout bit<32> v, out bit<32> rv) {{
            if (v > 0) {{
                v = v - 1;
            }}
            rv = v;
        }}
    }};
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_duration) dur_read = {{
        void apply(inout bit<32> v, out bit<32> rv) {{
            rv = v;
        }}
    }};
    // C_cong per port, for telemetry and the agent's cross-check.
    Register<bit<32>, bit<8>>({ports}) lcmp_ccong;
    RegisterAction<bit<32>, bit<8>, bit<32>>(lcmp_ccong) ccong_write = {{
        void apply(inout bit<32> v) {{
            v = emeta.ccong_sum;
        }}
    }};

    action set_port_class(bit<8> idx, bit<8> cls) {{
        emeta.idx = idx;
        emeta.cls = cls;
        emeta.lcmp = 1;
    }}
    action not_lcmp() {{
        emeta.lcmp = 0;
    }}
    action set_q(bit<8> q) {{
        emeta.q = q;
    }}
    action set_t(bit<8> t) {{
        emeta.t = t;
    }}
    action no_level() {{
    }}

{egress_tables}
    apply {{
        emeta.q = 0;
        emeta.t = 0;
        lcmp_port_class.apply();
        if (emeta.lcmp == 1) {{
            emeta.qdepth = (bit<32>)eg_intr_md.deq_qdepth;
            emeta.growth = emeta.qdepth |-| qdepth_swap.execute(emeta.idx);
            emeta.trend = lcmp_trend_lpf.execute(emeta.growth, emeta.idx);
            trend_write.execute(emeta.idx);
            lcmp_q_quant.apply();
            lcmp_t_quant.apply();
            if (emeta.q >= HIGH_WATER) {{
                emeta.dur = dur_up.execute(emeta.idx);
            }} else if (emeta.q <= LOW_WATER) {{
                emeta.dur = dur_down.execute(emeta.idx);
            }} else {{
                emeta.dur = dur_read.execute(emeta.idx);
            }}
            // D = min(counter >> {dshift}, 255)
            emeta.dur = emeta.dur >> {dshift};
            if (emeta.dur > 255) {{
                emeta.dur = 255;
            }}
            emeta.d = (bit<8>)emeta.dur;
            // Eq. 4-5 with shifts and adds only: w_ql = {w_ql}, w_tl = {w_tl}, w_dp = {w_dp}.
            emeta.ccong_sum = {ccong_terms};
            emeta.ccong_sum = emeta.ccong_sum >> S_CONG;
            if (emeta.ccong_sum > 255) {{
                emeta.ccong_sum = 255;
            }}
            ccong_write.execute(emeta.idx);
        }}
    }}
}}

control LcmpEgressDeparser(packet_out pkt, inout headers_t hdr, in lcmp_egress_meta_t emeta,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{
    apply {{
        pkt.emit(hdr);
    }}
}}

Pipeline(LcmpIngressParser(), LcmpIngress(), LcmpIngressDeparser(),
         LcmpEgressParser(), LcmpEgress(), LcmpEgressDeparser()) pipe;

Switch(pipe) main;
"#,
        seed = program.seed,
        pin_idle = program.pin_idle_units(),
        high = program.high_water,
        low = program.low_water,
        s_cong = w.s_cong,
        pin_bits = pin_bits,
        pin_hi = pin_bits - 1,
        crc32 = crc32,
        crc32c = crc32c,
        pin_slots = s.pin_slots,
        ports = s.ports.max(1),
        ingress_tables = tables_of(&schema, Control::Ingress),
        egress_tables = tables_of(&schema, Control::Egress),
        ecmp_fields = p4_field_list(ECMP_FIELDS),
        sig_fields = p4_field_list(SIG_FIELDS),
        w_ql = w.w_ql,
        w_tl = w.w_tl,
        w_dp = w.w_dp,
        ccong_terms = terms.join(" + "),
        dshift = lcmp_decide::estimator::persistence::DURATION_SHIFT,
    );
    o
}

#[cfg(test)]
mod test {
    use super::*;
    use lcmp_decide::{cost::congestion_cost, Weights};
    use quickcheck::quickcheck;

    quickcheck! {
        fn shift_add_ccong_equals_core(a: u32, b: u32, c: u32, s: u8, q: u8, t: u8, d: u8) -> bool {
            let w = Weights { w_ql: a % 5000, w_tl: b % 5000, w_dp: c % 5000, s_cong: s % 32, ..Weights::PAPER };
            w.validate().is_err() || ccong_shift_add(&w, q, t, d) == congestion_cost(q, t, d, &w)
        }
    }

    #[test]
    fn p4_lists_one_term_per_set_bit() {
        assert_eq!(shift_add("x", 0b101), ["(bit<32>)x", "((bit<32>)x << 2)"]);
        assert!(shift_add("x", 0).is_empty());
    }
}
