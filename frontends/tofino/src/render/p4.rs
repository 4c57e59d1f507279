//! The P4_16 TNA program `lcmp.p4`, generated for a [`Program`]'s sizes and
//! seed from `templates/lcmp.p4.in`. Every table, key, action, register
//! and digest comes from the [`crate::schema::Schema`]: the template names
//! none of them, it holds `@@NAME@@` placeholders (the names of
//! [`TEMPLATE_NAMES`], declarations, configuration values) that [`body`]
//! fills. The header comment states what bf-p4c said of the program's text
//! (its compile stamp).

use core::fmt::Write as _;

use crate::hash::{p4_field_list, CrcSpec, CRC32C, ECMP_FIELDS, SIG_FIELDS};
use crate::lint;
use crate::model::{Program, Target};
use crate::schema::{
    actions, names, pin_event, Action, Control, Counter, Digest, KeyField, Reason, Register,
    Schema, Table, FAIL_CELLS, FAIL_INDEX_HI, PAIR_CELL_TYPE, PIN_EMPTY_SEEN, REGISTER_INDEX_TYPE,
};

/// The P4 type of the pin-failure filter's index (`fail_index_t`).
const FAIL_INDEX_TYPE: &str = "fail_index_t";
/// The P4 type of a halved register's index ([`crate::halves`]).
const HALF_INDEX_TYPE: &str = "pin_cell_t";

const TEMPLATE: &str = include_str!("templates/lcmp.p4.in");

/// The schema names the template uses, by placeholder: `@@KEY@@` is the
/// name; for a register, `@@REGISTER KEY@@` is its declaration; for a
/// digest, `@@STRUCT KEY@@`, `@@DIGEST KEY@@` and `@@PACK KEY@@` are its
/// struct, its extern and its `pack` call; for a counter, `@@COUNTER KEY@@`
/// is its declaration.
pub const TEMPLATE_NAMES: [(&str, &str); 24] = [
    ("DST_GROUP", names::DST_GROUP),
    ("ROUTE", names::ROUTE),
    ("BUCKET", names::BUCKET),
    ("SELECT", names::SELECT),
    ("PORT_ALIVE", names::PORT_ALIVE),
    ("MEMBER", names::MEMBER),
    ("NEXT_HOP", names::NEXT_HOP),
    ("FALLBACK", names::FALLBACK),
    ("EXCEPTION", names::EXCEPTION),
    ("CTR_EXCEPTIONS", names::CTR_EXCEPTIONS),
    ("CTR_PIN_EVENTS", names::CTR_PIN_EVENTS),
    ("CTR_PORT_TX", names::CTR_PORT_TX),
    ("REG_PIN0", names::REG_PIN0),
    ("REG_PIN1", names::REG_PIN1),
    ("REG_PORT0", names::REG_PORT0),
    ("REG_PORT1", names::REG_PORT1),
    ("REG_CLOCK", names::REG_CLOCK),
    ("REG_FAIL", names::REG_FAIL),
    ("REG_UNPINNED", names::REG_UNPINNED),
    ("PARAM_GAP0", names::PARAM_GAP0),
    ("PARAM_GAP1", names::PARAM_GAP1),
    ("METER_DIGEST", names::METER_DIGEST),
    ("DIGEST_PIN_FAIL", names::DIGEST_PIN_FAIL),
    ("PIPE", crate::schema::PIPE),
];

fn key_line(k: &KeyField) -> String {
    format!(
        "            {:<26}: {} @name(\"{}\");",
        k.expr,
        k.kind.p4(),
        k.name
    )
}

fn table_decl(t: &Table) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "    @id(0x{:06X})", t.id);
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
    if t.default_only() {
        let _ = writeln!(o, "            @defaultonly {};", t.default_action.name);
    }
    let _ = writeln!(o, "        }}");
    let _ = writeln!(
        o,
        "        const default_action = {}();",
        t.default_action.name
    );
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

/// `action name(params) { body }`, indented for a control.
fn action_decl(a: &Action) -> String {
    let params: Vec<String> = a
        .params
        .iter()
        .map(|p| format!("{} {}", p.p4_type(), p.name))
        .collect();
    let mut o = format!(
        "    @id(0x{:06X})\n    action {}({}) {{\n",
        a.id,
        a.name,
        params.join(", ")
    );
    for statement in a.body {
        let _ = writeln!(o, "        {statement}");
    }
    o.push_str("    }");
    o
}

/// `Register<cell, index>(size[, initial]) name;`: a pair cell starts with
/// its signature 0 and its "last seen" at [`PIN_EMPTY_SEEN`].
fn register_decl(r: &Register) -> String {
    let (cell, initial) = if r.pair {
        (
            PAIR_CELL_TYPE.to_string(),
            format!(
                ", {{{0}w{1}, {0}w0x{PIN_EMPTY_SEEN:08X}}}",
                r.bits, r.initial_lo
            ),
        )
    } else {
        (format!("bit<{}>", r.bits), String::new())
    };
    let index = match r.name {
        names::REG_FAIL => FAIL_INDEX_TYPE,
        names::REG_CLOCK => "bit<1>",
        n if crate::halves::half_of(n).is_some() => HALF_INDEX_TYPE,
        _ => REGISTER_INDEX_TYPE,
    };
    // No `@id`: bf-p4c numbers registers by name (`Register::id`).
    format!("Register<{cell}, {index}>({}{initial}) {};", r.size, r.name)
}

/// `Counter<bit<32>, index>(size, PACKETS_AND_BYTES) name;` (no `@id`:
/// numbered by name, as registers are).
fn counter_decl(c: &Counter) -> String {
    format!(
        "Counter<bit<32>, {}>({}, CounterType_t.PACKETS_AND_BYTES) {};",
        c.index_type, c.size, c.name
    )
}

/// `const bit<8> R_<NAME> = code;` for every [`Reason`].
fn reason_consts() -> String {
    Reason::ALL
        .iter()
        .map(|r| {
            format!(
                "const bit<8> R_{} = {};{}",
                r.name().to_uppercase(),
                r.code(),
                if r.to_cpu() {
                    "   // to the CPU port"
                } else {
                    ""
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A digest's struct, its `Digest` extern and its `pack` call.
fn digest_decls(d: &Digest) -> [String; 3] {
    let mut st = format!("struct {} {{\n", d.type_name);
    for f in d.fields {
        let _ = writeln!(st, "    {:<7} {};", format!("bit<{}>", f.bits), f.name);
    }
    st.push('}');
    let exprs: Vec<&str> = d.fields.iter().map(|f| f.expr).collect();
    [
        st,
        // No `@id`: numbered by name, as registers are (`Digest::id`).
        format!("Digest<{}>() {};", d.type_name, d.name),
        format!("{}.pack({{ {} }});", d.name, exprs.join(", ")),
    ]
}

/// Every placeholder of the template and its text, for `program`.
fn substitutions(program: &Program, schema: &Schema) -> Vec<(String, String)> {
    let s = &program.sizes;
    let n = s.pin_index_bits();
    let mut subs: Vec<(String, String)> = [
        ("SEED", format!("{:08X}", program.seed)),
        ("PIN_IDLE", program.pin_idle_units().to_string()),
        ("PIN_BITS", n.to_string()),
        ("PIN_WAY", s.pin_way_slots().to_string()),
        ("IDX0", format!("{}:0", n - 1)),
        ("IDX1", format!("31:{}", 32 - n)),
        ("IDXU", format!("{}:8", n + 7)),
        ("FAIL_BITS", FAIL_CELLS.trailing_zeros().to_string()),
        ("FAIL_CELLS", FAIL_CELLS.to_string()),
        (
            "FAIL_IDX",
            format!(
                "{}:{}",
                FAIL_INDEX_HI,
                FAIL_INDEX_HI + 1 - FAIL_CELLS.trailing_zeros()
            ),
        ),
        ("ECMP_POLY", CrcSpec::ecmp(program.seed).p4()),
        ("SIG_POLY", CRC32C.p4()),
        ("ECMP_FIELDS", p4_field_list(ECMP_FIELDS)),
        ("SIG_FIELDS", p4_field_list(SIG_FIELDS)),
        (
            "ACTIONS",
            actions::INGRESS
                .iter()
                .map(|a| action_decl(a))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ("TABLES", tables_of(schema, Control::Ingress)),
        ("REASONS", reason_consts()),
        ("PIN_EVENT_RESUBMITTED", pin_event::RESUBMITTED.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Some(h) = crate::halves::halves(schema, names::REG_PIN0) {
        let cells = schema.register(h[0]).map_or(0, |r| r.size);
        subs.push((
            "CELL_TYPEDEF".into(),
            format!(
                "\ntypedef bit<{}> {HALF_INDEX_TYPE};           // a halved register's index: {cells} cells\n\
                 // (a way's cells in two registers, the index's top bit choosing one:\n\
                 // bf-p4c places no {} pin cells in one register on this chip)",
                n - 1,
                s.pin_way_slots()
            ),
        ));
    } else {
        subs.push(("CELL_TYPEDEF".into(), String::new()));
    }
    for (key, name) in TEMPLATE_NAMES {
        subs.push((key.to_string(), name.to_string()));
        if let Some(h) = crate::halves::halves(schema, name) {
            for (suffix, half) in HALF_SUFFIXES.iter().zip(h) {
                if let Some(r) = schema.register(half) {
                    subs.push((format!("REGISTER {key}{suffix}"), register_decl(r)));
                }
            }
        }
        if let Some(r) = schema.register(name) {
            subs.push((format!("REGISTER {key}"), register_decl(r)));
        }
        if let Some(c) = schema.counters.iter().find(|c| c.name == name) {
            subs.push((format!("COUNTER {key}"), counter_decl(c)));
        }
        if let Some(d) = schema.digests.iter().find(|d| d.name == name) {
            let [st, extern_, pack] = digest_decls(d);
            subs.push((format!("STRUCT {key}"), st));
            subs.push((format!("DIGEST {key}"), extern_));
            subs.push((format!("PACK {key}"), pack));
        }
    }
    subs
}

/// The suffixes of a halved register's halves, after its name.
const HALF_SUFFIXES: [&str; 2] = ["_h0", "_h1"];

/// The template's `@@HALVES KEY@@` ... `@@END HALVES@@` regions and
/// `@@EXEC KEY@@` lines, for `schema`: where `KEY`'s register is halved
/// ([`crate::halves`]), a region twice, its `@@H@@` the half's suffix, and
/// an `@@EXEC@@` statement in each half under the test of the index's top
/// bit, on the half's cell index (`@@CIDX..@@`); otherwise once, without
/// suffix, on the way's index (`@@IDX..@@`).
fn expand_halves(template: &str, schema: &Schema, index_bits: u32) -> String {
    let n = index_bits;
    // Per register key: the top bit of its index in the signature, and
    // the half's cell index.
    let split = |key: &str| -> Option<(u32, &'static str, String)> {
        let name = TEMPLATE_NAMES.iter().find(|(k, _)| *k == key)?.1;
        crate::halves::halves(schema, name)?;
        match key {
            "REG_PIN0" => Some((n - 1, "CIDX0", format!("{}:0", n - 2))),
            "REG_PIN1" => Some((31, "CIDX1", format!("30:{}", 32 - n))),
            "REG_UNPINNED" => Some((n + 7, "CIDXU", format!("{}:8", n + 6))),
            _ => None,
        }
    };
    let unsplit = |line: &str| {
        line.replace("@@H@@", "")
            .replace("@@CELL_T@@", REGISTER_INDEX_TYPE)
            .replace("@@CIDX", "@@IDX")
    };
    let half = |line: &str, suffix: &str, cidx: &str, range: &str| {
        line.replace("@@H@@", suffix)
            .replace("@@CELL_T@@", HALF_INDEX_TYPE)
            .replace(&format!("@@{cidx}@@"), range)
            .replace(
                "@@REGISTER REG_PIN0@@",
                &format!("@@REGISTER REG_PIN0{suffix}@@"),
            )
            .replace(
                "@@REGISTER REG_PIN1@@",
                &format!("@@REGISTER REG_PIN1{suffix}@@"),
            )
            .replace(
                "@@REGISTER REG_UNPINNED@@",
                &format!("@@REGISTER REG_UNPINNED{suffix}@@"),
            )
    };
    let mut out = String::new();
    let mut lines = template.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if let Some(key) = line
            .trim()
            .strip_prefix("@@HALVES ")
            .and_then(|r| r.strip_suffix("@@"))
        {
            let region: Vec<&str> = lines
                .by_ref()
                .take_while(|l| l.trim() != "@@END HALVES@@")
                .collect();
            match split(key) {
                Some((_, cidx, range)) => {
                    for suffix in HALF_SUFFIXES {
                        for l in &region {
                            out.push_str(&half(l, suffix, cidx, &range));
                        }
                    }
                }
                None => region.iter().for_each(|l| out.push_str(&unsplit(l))),
            }
        } else if let Some((indent, rest)) = line.split_once("@@EXEC ") {
            let Some((key, statement)) = rest.split_once("@@") else {
                out.push_str(line);
                continue;
            };
            match split(key) {
                Some((bit, cidx, range)) => {
                    let _ = writeln!(out, "{indent}if (meta.sig[{bit}:{bit}] == 0) {{");
                    for (i, suffix) in HALF_SUFFIXES.iter().enumerate() {
                        if i == 1 {
                            let _ = writeln!(out, "{indent}}} else {{");
                        }
                        let _ =
                            write!(out, "{indent}    {}", half(statement, suffix, cidx, &range));
                    }
                    let _ = writeln!(out, "{indent}}}");
                }
                None => {
                    out.push_str(indent);
                    out.push_str(&unsplit(statement));
                }
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The program text without its header comment.
pub fn body(program: &Program) -> String {
    let schema = program.schema();
    let mut o = expand_halves(TEMPLATE, &schema, program.sizes.pin_index_bits());
    for (k, v) in substitutions(program, &schema) {
        o = o.replace(&format!("@@{k}@@"), &v);
    }
    o
}

/// The header comment: sizes, and what the compiler said of this program
/// text: the stamp recorded for its body (`tests/golden/compile-stamps.json`,
/// [`crate::compile::Stamps::golden`]), or that none is recorded. The
/// text checks ([`lint`]) add a line only where they find something.
pub fn header_comment(program: &Program, body: &str) -> String {
    header_with_stamps(program, body, &crate::compile::Stamps::golden())
}

/// [`header_comment`] against `stamps`.
fn header_with_stamps(program: &Program, body: &str, stamps: &crate::compile::Stamps) -> String {
    let s = &program.sizes;
    let mut o = String::new();
    let _ = writeln!(o, "/*");
    let _ = writeln!(
        o,
        " * lcmp.p4: LCMP (EuroSys '26) for Tofino (TNA and T2NA), generated by lcmp-tofino."
    );
    let _ = writeln!(o, " * Do not edit: regenerate with `lcmp tofino p4`.");
    let _ = writeln!(
        o,
        " * Compile: lcmp tofino compile --bf-p4c PATH (docs/tofino.md: the p4c-barefoot"
    );
    let _ = writeln!(
        o,
        " *          command lines, and the compiler's resource summary)."
    );
    let _ = writeln!(o, " *");
    let _ = writeln!(
        o,
        " * Sizes: {} groups, pick lists up to {}, {} ports, {} flow-pin cells",
        s.groups, s.max_k, s.ports, s.pin_slots
    );
    let _ = writeln!(
        o,
        " * ({} per way); ECMP hash CRC-32 ^ 0x{:08X}.",
        s.pin_way_slots(),
        program.seed
    );
    let _ = writeln!(o, " *");
    match stamps.find(body) {
        Some(st) => {
            let _ = writeln!(o, " * Compiled by bf-p4c ({}), stamped:", st.compiler);
            for t in &st.targets {
                match (t.errors, t.ingress_stages, t.egress_stages) {
                    (Some(e), Some(i), Some(g)) => {
                        let _ = writeln!(
                            o,
                            " *   {}: {e} errors, ingress {i} stages, egress {g} stages",
                            t.target
                        );
                    }
                    _ => {
                        let _ = writeln!(o, " *   {}: compile pending", t.target);
                    }
                }
            }
        }
        None => {
            let _ = writeln!(
                o,
                " * No bf-p4c compile of this program text is recorded: its stages and"
            );
            let _ = writeln!(
                o,
                " * resources are what `lcmp tofino compile` prints (docs/tofino.md)."
            );
        }
    }
    // The text checks: a program they find a violation in says so.
    for target in Target::ALL {
        match lint::check(body, target) {
            Ok(v) if v.is_empty() => {}
            Ok(v) => {
                let _ = writeln!(
                    o,
                    " * {}: {} violation(s) of the text checks",
                    target.name(),
                    v.len()
                );
            }
            Err(e) => {
                let _ = writeln!(o, " * the text checks failed: {e}");
            }
        }
    }
    let _ = writeln!(o, " */");
    o
}

/// The program text.
pub fn render(program: &Program) -> String {
    let body = body(program);
    let mut o = header_comment(program, &body);
    o.push('\n');
    o.push_str(&body);
    o
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::schema::Sizes;

    fn program() -> Program {
        Program {
            target: Target::Tofino1,
            sizes: Sizes {
                groups: 2,
                max_k: 3,
                ports: 4,
                pin_slots: 1024,
            },
            seed: 7,
            ticks_per_second: 1_000_000,
            idle_timeout_ticks: 1000,
        }
    }

    /// The header states the stamp of the program's body, and that none
    /// is recorded for another body; the header is not part of the hash.
    #[test]
    fn the_header_states_the_compilers_stamp() {
        use crate::compile::{body_sha256, Stamp, Stamps, TargetStamp};
        let p = program();
        let text = body(&p);
        let stamps = Stamps {
            stamps: vec![Stamp {
                program: "lcmp.p4".into(),
                sha256: body_sha256(&text),
                compiler: "p4lang/p4c 34b86e9".into(),
                targets: vec![TargetStamp {
                    target: "tofino".into(),
                    errors: Some(0),
                    ingress_stages: Some(11),
                    egress_stages: Some(1),
                }],
            }],
        };
        let h = header_with_stamps(&p, &text, &stamps);
        assert!(h.contains(" * Compiled by bf-p4c (p4lang/p4c 34b86e9), stamped:\n"));
        assert!(h.contains(" *   tofino: 0 errors, ingress 11 stages, egress 1 stages\n"));
        let whole = format!("{h}\n{text}");
        assert!(stamps.find(&whole).is_some(), "the header is not hashed");
        let other = text.replacen("PIN_IDLE = 32w", "PIN_IDLE = 32w1", 1);
        let h = header_with_stamps(&p, &other, &stamps);
        assert!(h.contains("No bf-p4c compile of this program text is recorded"));
        assert!(
            !h.contains("ingress"),
            "no stage claim without a stamp: {h}"
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let text = body(&program());
        assert!(!text.contains("@@"), "unfilled placeholder in lcmp.p4");
        // The template names no schema object: each name comes from the
        // schema, so renaming one there renames it everywhere.
        for (key, name) in TEMPLATE_NAMES {
            assert!(!TEMPLATE.contains(name), "the template spells {name}");
            assert!(
                TEMPLATE.contains(&format!(" {key}@@")) || TEMPLATE.contains(&format!("@@{key}@@")),
                "{key} unused"
            );
        }
        for a in actions::INGRESS {
            let decl = format!("action {}(", a.name);
            assert!(
                !TEMPLATE.contains(&decl),
                "the template declares {}",
                a.name
            );
            assert_eq!(text.matches(&decl).count(), 1, "{} declared once", a.name);
        }
    }

    /// Tofino 2 at 2 x 65 536 cells: each way and `lcmp_unpinned` in two
    /// registers, no placeholder left; every halved `execute` picks its
    /// half by the top bit of the way's index and the cell by the rest, so
    /// (half, cell) is the interpreter's way index (`interp::pin_indices`,
    /// `interp::unpinned_index`) for every signature; Tofino 1 at the same
    /// size keeps one register per way.
    #[test]
    fn halved_executes_address_the_interpreters_cells() {
        let bits = |sig: u32, r: &str| -> u64 {
            let (hi, lo) = r.split_once(':').expect("range");
            let (hi, lo): (u32, u32) = (hi.parse().expect("hi"), lo.parse().expect("lo"));
            (u64::from(sig) >> lo) & ((1u64 << (hi - lo + 1)) - 1)
        };
        let mut p = program();
        p.sizes.pin_slots = 131_072;
        let whole = body(&p);
        assert!(!whole.contains("_h0") && whole.contains("pin0_lookup.execute(meta.sig[15:0])"));
        p.target = Target::Tofino2;
        let text = body(&p);
        assert!(!text.contains("@@"), "unfilled placeholder");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let mut checked = 0;
        for (i, l) in lines.iter().enumerate() {
            let Some(sel) = l
                .strip_prefix("if (meta.sig[")
                .and_then(|r| r.split_once("] == 0) {"))
                .map(|x| x.0)
            else {
                continue;
            };
            let (h0, h1) = (lines[i + 1], lines[i + 3]);
            assert_eq!(lines[i + 2], "} else {");
            let range = |x: &str| -> String {
                x.split("execute(meta.sig[")
                    .nth(1)
                    .and_then(|r| r.split(']').next())
                    .expect("index")
                    .to_string()
            };
            assert!(
                h0.contains("_h0.execute(") && h1.contains("_h1.execute("),
                "{h0} {h1}"
            );
            assert_eq!(h0.replace("_h0", "_h1"), h1);
            let cell = range(h0);
            let cell_bits = {
                let (a, b) = cell.split_once(':').expect("range");
                a.parse::<u32>().expect("a") - b.parse::<u32>().expect("b") + 1
            };
            assert_eq!(cell_bits, 15, "{h0}");
            let mut x: u32 = 0x2545_F491;
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let (w0, w1) = crate::interp::pin_indices(x, 131_072);
                let want = if h0.contains("pin0_") {
                    w0
                } else if h0.contains("pin1_") {
                    w1
                } else {
                    assert!(h0.contains("unpinned_"), "{h0}");
                    crate::interp::unpinned_index(x, 131_072)
                };
                let got = (bits(x, sel) << cell_bits) | bits(x, &cell);
                assert_eq!(got, want, "{h0} sig {x:#x}");
            }
            checked += 1;
        }
        // pin0_lookup, pin1_find, pin1_lookup, unpinned_recent twice,
        // unpinned_mark.
        assert_eq!(checked, 6);
        for r in ["lcmp_pin0_h0", "lcmp_pin1_h1", "lcmp_unpinned_h1"] {
            assert!(text.contains(&format!(
                "Register<lcmp_pin_t, pin_cell_t>(32768, {{32w0, 32w0x00000000}}) {r};"
            )));
        }
        assert!(text.contains("Register<bit<16>, pin_index_t>(65536) lcmp_port0;"));
        assert_eq!(
            text.matches("RegisterParam<bit<32>>(PIN_IDLE) pin").count(),
            4
        );
    }
}
