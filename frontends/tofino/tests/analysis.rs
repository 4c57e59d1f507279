//! The stage analysis of the generated program: it parses `lcmp.p4` (the
//! golden file and fresh exports of other configurations), and the program
//! must fit 12 stages on Tofino 1 and 20 on Tofino 2 with no rule
//! violation; the previous program (`tests/fixtures/lcmp_v1.p4`) must not,
//! for the reasons it was replaced (chained residue tables, multi-operation
//! assignments). It also checks the Tofino 2 resubmit layout, the queue
//! signal (no egress work; the agent's traffic-manager poll), the seed
//! folded into the CRC, and that `docs/tofino.md` shows the plan the
//! analysis finds.

use std::path::Path;

use lcmp_decide::{DeciderConfig, HashAlgorithm, Instant, PortId, Scheme};
use lcmp_tofino::analysis::{analyze, limits, parse, DepKind, StagePlan, UnitKind};
use lcmp_tofino::model::Target;
use lcmp_tofino::render::p4;
use lcmp_tofino::{Agent, ExportOptions, Program};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn golden() -> String {
    std::fs::read_to_string(root().join("tests/golden/lcmp.p4")).expect("golden lcmp.p4")
}

fn agent(topology: &str, switch: &str, scheme: Scheme, options: ExportOptions) -> Agent {
    let topo = lcmp_tables::Topology::embedded(topology).expect("topology");
    let cfg = DeciderConfig::default()
        .with_scheme(scheme)
        .with_seed(0xC0FFEE)
        .with_hash(HashAlgorithm::Crc32);
    lcmp_tofino::cli::agent_for(&topo, switch, cfg, options).expect("agent")
}

/// Programs of several configurations: the golden one, bso13 DC3 with
/// front-panel device ports, the smallest and the largest pin tables.
fn programs() -> Vec<(String, Program, String)> {
    let mut out = vec![(
        "golden".to_string(),
        agent("testbed8", "DC1", Scheme::Lcmp, ExportOptions::default()).program(),
        golden(),
    )];
    let mut front = ExportOptions::default();
    for (i, d) in front.dev_ports.iter_mut().enumerate() {
        *d = 128 + 4 * i as u16;
    }
    for (name, topo, sw, opts) in [
        ("bso13 DC3", "bso13", "DC3", front),
        (
            "small pins",
            "testbed8",
            "DC8",
            ExportOptions {
                pin_slots: 2,
                ..ExportOptions::default()
            },
        ),
        (
            "large pins",
            "bso13",
            "DC13",
            ExportOptions {
                pin_slots: 1 << 20,
                ..ExportOptions::default()
            },
        ),
    ] {
        let program = agent(topo, sw, Scheme::Ecmp, opts).program();
        let text = p4::render(&program);
        out.push((name.to_string(), program, text));
    }
    out
}

fn plan(text: &str, target: Target) -> StagePlan {
    analyze(text, target).expect("the program parses")
}

#[test]
fn every_program_fits_both_targets_without_violations() {
    for (name, program, text) in programs() {
        for target in Target::ALL {
            let p = plan(&text, target);
            assert!(
                p.violations.is_empty(),
                "{name} on {target:?}: {:?}",
                p.violations
            );
            let ingress = p.gress("LcmpIngress").expect("ingress");
            let egress = p.gress("LcmpEgress").expect("egress");
            assert!(
                ingress.stages <= target.stages(),
                "{name}: {}",
                ingress.stages
            );
            // The plan of docs/tofino.md: 12 ingress stages (a lower
            // bound: the compiler may need more), the egress counter.
            assert_eq!(ingress.stages, 12, "{name} on {target:?}");
            assert_eq!(egress.stages, 1, "{name}: egress counts per port");
            // Every table and register of the schema is placed, once.
            let schema = program.schema();
            for t in &schema.tables {
                let n = p.objects.iter().filter(|o| o.name == t.full_name()).count();
                assert_eq!(n, 1, "{name}: {}", t.full_name());
            }
            for r in &schema.registers {
                let o = p.objects.iter().find(|o| o.name == r.full_name());
                assert_eq!(
                    o.map(|o| o.entries),
                    Some(u64::from(r.size)),
                    "{name}: {}",
                    r.name
                );
            }
            for (s, u) in p.stage_use.iter().flatten().enumerate() {
                assert!(u.stateful_alus <= limits::STATEFUL_ALUS, "stage {s}");
                assert!(u.sram_blocks <= limits::SRAM_BLOCKS, "stage {s}");
            }
        }
    }
}

/// The dependency chain the docs describe, edge by edge.
#[test]
fn the_ingress_chain_has_the_expected_dependencies() {
    let p = plan(&golden(), Target::Tofino1);
    let g = p.gress("LcmpIngress").expect("ingress");
    let stage = |name: &str| {
        g.units
            .iter()
            .filter(|u| u.name == name)
            .map(|u| u.stage)
            .max()
            .unwrap_or_else(|| panic!("{name} not placed"))
    };
    assert_eq!(stage("lcmp_dst_group"), 0);
    assert_eq!(stage("ecmp_hash"), 0);
    assert_eq!(stage("sig_hash"), 0);
    assert_eq!(stage("lcmp_route"), 1);
    assert_eq!(stage("lcmp_bucket"), 1);
    assert_eq!(stage("lcmp_select"), 2);
    assert_eq!(stage("lcmp_pin0"), 3);
    assert_eq!(stage("lcmp_pin1"), 4);
    // lcmp_unpinned beside the digest filter, after way 1; the new pin's
    // port (a recent fallback's) one stage later, then the ports.
    assert_eq!(stage("lcmp_unpinned"), 5);
    assert_eq!(stage("lcmp_fail"), 5);
    assert_eq!(stage("lcmp_port1"), 7);
    assert_eq!(stage("lcmp_port0"), 8);
    assert_eq!(stage("lcmp_port_alive"), 9);
    assert_eq!(stage("lcmp_member"), 9);
    assert_eq!(stage("lcmp_next_hop"), 9);
    // The exception table reads the reason the last statements write.
    assert_eq!(stage("lcmp_exception"), 11);
    let edge = |from: &str, to: &str, kind: DepKind, field: &str| {
        g.deps.iter().any(|d| {
            g.units[d.from].name == from
                && g.units[d.to].name == to
                && d.kind == kind
                && d.field == field
        })
    };
    assert!(edge(
        "lcmp_dst_group",
        "lcmp_bucket",
        DepKind::Match,
        "meta.k"
    ));
    assert!(edge(
        "lcmp_bucket",
        "lcmp_select",
        DepKind::Match,
        "meta.bucket"
    ));
    assert!(edge("lcmp_pin0", "lcmp_pin1", DepKind::Control, "st0"));
    // Pins only for a selection hit: a control dependency on meta.kept.
    assert!(edge(
        "lcmp_select",
        "lcmp_pin0",
        DepKind::Control,
        "meta.kept"
    ));
    assert!(edge(
        "lcmp_member",
        "meta.reason = R_PORT_DOWN",
        DepKind::Control,
        "meta.member"
    ));
    assert!(edge(
        "lcmp_port_alive",
        "meta.reason = R_PORT_DOWN",
        DepKind::Control,
        "meta.dead"
    ));
    assert!(edge(
        "lcmp_port1",
        "lcmp_port0",
        DepKind::Action,
        "meta.out_port"
    ));
    assert!(edge(
        "lcmp_port0",
        "lcmp_port_alive",
        DepKind::Match,
        "meta.out_port"
    ));
}

/// The previous program: 21 ingress stages (the residue tables' default
/// actions write `meta.lcmp` and `drop_ctl`, so they chain), over Tofino 1's
/// 12, and `((q << 1) + t + d)` in one assignment; its seed XOR costs an
/// ALU operation.
#[test]
fn the_previous_program_is_refused_for_its_stages_and_alu_use() {
    let old = std::fs::read_to_string(root().join("tests/fixtures/lcmp_v1.p4")).expect("fixture");
    let p = plan(&old, Target::Tofino1);
    let ingress = p.gress("LcmpIngress").expect("ingress");
    assert!(ingress.stages > 12, "{}", ingress.stages);
    let stage = |n: &str| ingress.units.iter().find(|u| u.name == n).map(|u| u.stage);
    for i in 1..8 {
        let (a, b) = (format!("lcmp_mod_n{}", i - 1), format!("lcmp_mod_n{i}"));
        assert_eq!(stage(&b), stage(&a).map(|s| s + 1), "{b} follows {a}");
    }
    assert!(p
        .violations
        .iter()
        .any(|v| v.contains("over Tofino 1's 12")));
    assert!(
        p.violations
            .iter()
            .any(|v| v.contains("emeta.ccong_sum") && v.contains("3 ALU operations")),
        "{:?}",
        p.violations
    );
    let hash = ingress
        .units
        .iter()
        .find(|u| u.name == "ecmp_hash")
        .expect("hash");
    assert_eq!(hash.ops, 1, "the seed XOR");
    // Now: the seed is in the polynomial's XOR, the hash costs nothing.
    let new = plan(&golden(), Target::Tofino1);
    let g = new.gress("LcmpIngress").expect("ingress");
    let hash = g
        .units
        .iter()
        .find(|u| u.name == "ecmp_hash")
        .expect("hash");
    assert_eq!((hash.ops, hash.kind.clone()), (0, UnitKind::Hash));
    assert!(g.units.iter().all(|u| u.ops <= 1));
}

/// Item 10: the seed is the CRC's final XOR in the program text, and the
/// interpreter (which reads the polynomial, not the seed) agrees with the
/// core for seeded hashes.
#[test]
fn the_seed_is_folded_into_the_polynomial() {
    let a = agent("testbed8", "DC1", Scheme::Lcmp, ExportOptions::default());
    let text = p4::render(&a.program());
    let xor = 0xFFFF_FFFFu32 ^ 0xC0FFEE;
    assert!(
        text.contains(&format!("32w0x{xor:08X}) ecmp_poly;")),
        "polynomial"
    );
    assert!(!text.contains("LCMP_SEED"));
    let entries = a.entries().expect("entries");
    let program = a.program();
    let interp = lcmp_tofino::interp::Interpreter::new(&program, &entries);
    for sport in 0..500u16 {
        let h = lcmp_tofino::hash::Headers {
            src: 0x0A01_0001,
            dst: 0x0A08_0002,
            sport,
            dport: 80,
            proto: 6,
        };
        let key = lcmp_decide::FlowKey::v4(
            core::net::Ipv4Addr::from_bits(h.src),
            core::net::Ipv4Addr::from_bits(h.dst),
            sport,
            80,
            6,
        );
        assert_eq!(
            interp.hash(&h),
            key.ecmp_hash(HashAlgorithm::Crc32, 0xC0FFEE)
        );
    }
}

/// Item 4: resubmit data is 64 bits on Tofino 1 and 128 on Tofino 2, where
/// the parser then skips 64 bits of padding (open-p4studio
/// `tna_resubmit.p4`); port metadata is skipped by `PORT_METADATA_SIZE`.
#[test]
fn resubmit_layout_follows_the_target() {
    let text = golden();
    for (target, bits, pad) in [(Target::Tofino1, 64, false), (Target::Tofino2, 128, true)] {
        let pre = parse::preprocess(&text, target.number()).expect("preprocess");
        let prog = parse::parse(&pre).expect("parse");
        let width: u32 = prog.structs["lcmp_resubmit_h"]
            .iter()
            .map(|f| match f.ty {
                parse::Type::Bits(w) => w,
                _ => panic!("bit fields"),
            })
            .sum();
        assert_eq!(width, bits, "{target:?}");
        let state = pre
            .split("state parse_resubmit {")
            .nth(1)
            .and_then(|s| s.split("transition").next())
            .expect("parse_resubmit state");
        assert!(state.contains("pkt.extract(meta.resubmit);"));
        assert_eq!(state.contains("pkt.advance(64);"), pad, "{target:?}");
        let failover = pre
            .split("meta.resubmit.setValid();")
            .nth(1)
            .and_then(|s| s.split("ig_dprsr_md.resubmit_type").next())
            .expect("failover");
        assert_eq!(failover.contains("meta.resubmit.pad2 = 0;"), pad);
    }
    assert!(text.contains("pkt.advance(PORT_METADATA_SIZE);"));
}

/// Item 8: the queue signal comes from the traffic manager's counters,
/// which the agent polls (`usage_cells` of `tfN.tm.counter.eg_port`, 80-byte
/// cells on Tofino 1, 176 on Tofino 2); the egress does no dead work.
#[test]
fn queue_signal_is_the_agents_poll_of_usage_cells() {
    let p = plan(&golden(), Target::Tofino2);
    // The egress only counts what leaves each port.
    let egress = p.gress("LcmpEgress").expect("egress");
    let units: Vec<&str> = egress.units.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(units, ["lcmp_port_tx.count()"]);
    assert!(!golden().contains("deq_qdepth"));
    assert_eq!(Target::Tofino1.cell_bytes(), 80);
    assert_eq!(Target::Tofino2.cell_bytes(), 176);
    assert_eq!(Target::Tofino2.tm_counter_table(), "tf2.tm.counter.eg_port");
    for target in Target::ALL {
        let opts = ExportOptions {
            target,
            ..ExportOptions::default()
        };
        let mut by_cells = agent("testbed8", "DC1", Scheme::Lcmp, opts.clone());
        let mut by_bytes = agent("testbed8", "DC1", Scheme::Lcmp, opts);
        let cells = 30_000_000u64;
        by_cells
            .on_usage_cells(Instant::from_ticks(1000), PortId(4), cells)
            .expect("poll");
        by_bytes
            .sample(
                Instant::from_ticks(1000),
                PortId(4),
                cells * target.cell_bytes(),
            )
            .expect("sample");
        let q = |a: &Agent| {
            a.decider()
                .port_state(PortId(4))
                .map(|s| s.queue_bytes())
                .expect("port")
        };
        assert_eq!(q(&by_cells), q(&by_bytes), "{target:?}");
        assert_eq!(q(&by_cells), cells * target.cell_bytes());
    }
}

/// `docs/tofino.md` shows the stage plan and the resource table that the
/// analysis finds for the golden program.
#[test]
fn docs_show_the_analysed_plan() {
    let docs =
        std::fs::read_to_string(root().join("../../docs/tofino.md")).expect("docs/tofino.md");
    let md = plan(&golden(), Target::Tofino1).markdown();
    assert!(
        docs.contains(&md),
        "docs/tofino.md lacks the analysed plan; paste:\n{md}"
    );
    let t2 = plan(&golden(), Target::Tofino2);
    assert!(docs.contains(&format!(
        "Tofino 2: LcmpIngress {} stages",
        t2.gress("LcmpIngress").expect("ingress").stages
    )));
}

/// What bf-p4c refused in copies of the program, the analysis refuses
/// too: a register executed twice on one packet path, an undefined
/// metadata field, and a `bit<16>` assigned to `PortId_t` without a cast
/// (each mutation of the golden program gives its violation, and the
/// golden program none).
#[test]
fn register_paths_undefined_names_and_widths_are_violations() {
    let text = golden();
    for target in Target::ALL {
        assert!(plan(&text, target).violations.is_empty(), "{target:?}");
    }
    let once = "st0 = pin0_lookup.execute(meta.sig[15:0]);";
    assert!(text.contains(once));
    let cases = [
        (
            text.replacen(once, &format!("{once}\n            {once}"), 1),
            "register lcmp_pin0 is executed twice on one packet path",
        ),
        (
            text.replacen("meta.pin_hit = 1;", "meta.pin_hits = 1;", 1),
            "meta has no field pin_hits",
        ),
        (
            text.replacen(
                "meta.out_port = (PortId_t)port1_read.execute(",
                "meta.out_port = port1_read.execute(",
                1,
            ),
            "`meta.out_port` is bit<9> but `port1_read.execute(meta.sig[31:16])` is bit<16>: cast it",
        ),
        (
            text.replacen("meta.kept = 1;", "meta.kept = 2;", 1),
            "2 does not fit `meta.kept` (bit<1>)",
        ),
        (
            text.replacen("lcmp_hash_sig();", "lcmp_hash_sgi();", 1),
            "`lcmp_hash_sgi` calls nothing declared",
        ),
    ];
    for (mutated, want) in cases {
        assert_ne!(mutated, text, "{want}: the mutation applies");
        let p = plan(&mutated, Target::Tofino1);
        assert!(
            p.violations.iter().any(|v| v.contains(want)),
            "{want}: {:?}",
            p.violations
        );
    }
}

/// Two 65 536 x 64-bit registers with no dependency between them would be
/// placed in one stage: 66 register SRAM blocks, over the 48 map RAMs a
/// stage has (what bf-p4c's Tofino 2 placement refused for the pins). The
/// generated program keeps each pin register in a stage of its own.
#[test]
fn two_pin_registers_do_not_fit_one_stage() {
    let text = r#"
struct p_t { bit<32> lo; bit<32> hi; }
struct m_t { bit<16> i; bit<8> a; bit<8> b; }
control I(inout m_t meta) {
    Register<p_t, bit<16>>(65536) r0;
    Register<p_t, bit<16>>(65536) r1;
    RegisterAction<p_t, bit<16>, bit<8>>(r0) a0 = { void apply(inout p_t v, out bit<8> o) { o = 1; } };
    RegisterAction<p_t, bit<16>, bit<8>>(r1) a1 = { void apply(inout p_t v, out bit<8> o) { o = 1; } };
    apply { meta.a = a0.execute(meta.i); meta.b = a1.execute(meta.i); }
}
control E(inout m_t meta) { apply { } }
Pipeline(P(), I(), D(), P(), E(), D()) pipe;
"#;
    for target in Target::ALL {
        let p = plan(text, target);
        assert!(
            p.violations
                .iter()
                .any(|v| v.contains("66 register SRAM blocks (map RAMs), over 48")),
            "{:?}",
            p.violations
        );
        let g = plan(&golden(), target);
        let max = g
            .stage_use
            .iter()
            .flatten()
            .map(|u| u.stateful_sram_blocks)
            .max();
        // One 65 536-cell pair register per stage (33 blocks), beside at
        // most the digest filter's 3 (lcmp_unpinned and lcmp_fail).
        assert_eq!(max, Some(36), "one pin register per stage");
    }
}

/// The previous golden program (layout v2, `tests/fixtures/lcmp_v2.p4`):
/// the compiler's first two errors on it are the analysis's too: the pin
/// `RegisterAction`s output the constants 1, 2 and 3, and the two 32-bit
/// hashes are adjacent statements, one action of 64 bits over the
/// immediate pathway's 32. The current program has neither.
#[test]
fn the_compilers_errors_on_layout_v2_are_violations() {
    let v2 = std::fs::read_to_string(root().join("tests/fixtures/lcmp_v2.p4")).expect("fixture");
    for target in Target::ALL {
        let p = plan(&v2, target);
        for want in [
            "pin0_lookup outputs the constants [1, 2, 3]",
            "pin1_lookup outputs the constants [1, 2, 3]",
            "64 bits of hash results in one action, over the immediate pathway's 32",
        ] {
            assert!(
                p.violations.iter().any(|v| v.contains(want)),
                "{want}: {:?}",
                p.violations
            );
        }
        assert!(plan(&golden(), target).violations.is_empty());
    }
}
