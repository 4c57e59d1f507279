//! The text checks of the generated program (`lint`): the golden file and
//! fresh exports of other configurations pass them on both targets; the
//! previous programs (`tests/fixtures/lcmp_v1.p4`, `lcmp_v2.p4`) do not,
//! for what bf-p4c refused in them; and mutations of the golden program
//! that bf-p4c refuses are refused. It also checks the Tofino 2 resubmit
//! layout, the queue signal (no egress work; the agent's traffic-manager
//! poll) and the seed folded into the CRC.

use std::path::Path;

use lcmp_decide::{DeciderConfig, HashAlgorithm, Instant, PortId, Scheme};
use lcmp_tofino::lint::{self, parse};
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

fn findings(text: &str, target: Target) -> Vec<String> {
    lint::check(text, target).expect("the program parses")
}

/// Every program, the Tofino 2 golden with its halved pin ways too, passes
/// the text checks on both targets, and declares every register of its
/// schema with the schema's size.
#[test]
fn every_program_passes_the_checks_on_both_targets() {
    let mut all = programs();
    let t2 = agent(
        "testbed8",
        "DC1",
        Scheme::Lcmp,
        ExportOptions {
            target: Target::Tofino2,
            ..ExportOptions::default()
        },
    )
    .program();
    let text = p4::render(&t2);
    assert!(text.contains("lcmp_pin0_h1"), "Tofino 2's ways are halved");
    all.push(("Tofino 2 halved".to_string(), t2, text));
    for (name, program, text) in all {
        for target in Target::ALL {
            let v = findings(&text, target);
            assert!(v.is_empty(), "{name} on {target:?}: {v:?}");
        }
        let pre = parse::preprocess(&text, 1).expect("preprocess");
        let prog = parse::parse(&pre).expect("parse");
        let ingress = &prog.controls["LcmpIngress"];
        for r in &program.schema().registers {
            let size = ingress.instances.get(r.name).and_then(|i| i.args.first());
            assert_eq!(
                size,
                Some(&parse::Expr::Num(u128::from(r.size))),
                "{name}: {}",
                r.name
            );
        }
    }
}

/// The previous program (`tests/fixtures/lcmp_v1.p4`): `((q << 1) + t + d)`
/// in one assignment is three ALU operations; the golden program has no
/// such assignment.
#[test]
fn the_previous_program_is_refused_for_its_alu_use() {
    let old = std::fs::read_to_string(root().join("tests/fixtures/lcmp_v1.p4")).expect("fixture");
    let v = findings(&old, Target::Tofino1);
    assert!(
        v.iter()
            .any(|v| v.contains("emeta.ccong_sum") && v.contains("3 ALU operations")),
        "{v:?}"
    );
    assert!(findings(&golden(), Target::Tofino1).is_empty());
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
    // The egress only counts what leaves each port.
    let pre = parse::preprocess(&golden(), 2).expect("preprocess");
    let prog = parse::parse(&pre).expect("parse");
    let egress = &prog.controls["LcmpEgress"].apply;
    assert_eq!(egress.len(), 1, "{egress:?}");
    assert!(
        matches!(&egress[0], parse::Stmt::Call { call: parse::Expr::Call(c, _), .. }
            if lint::show(c) == "lcmp_port_tx.count"),
        "{egress:?}"
    );
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

/// What bf-p4c refused in copies of the program, the analysis refuses
/// too: a register executed twice on one packet path, an undefined
/// metadata field, and a `bit<16>` assigned to `PortId_t` without a cast
/// (each mutation of the golden program gives its violation, and the
/// golden program none).
#[test]
fn register_paths_undefined_names_and_widths_are_violations() {
    let text = golden();
    for target in Target::ALL {
        assert!(findings(&text, target).is_empty(), "{target:?}");
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
    // Tofino 2's halves: each is one register.
    let t2 = std::fs::read_to_string(root().join("tests/golden/tofino2/lcmp.p4")).expect("t2");
    let half = "st0 = pin0_lookup_h0.execute(meta.sig[14:0]);";
    assert!(t2.contains(half));
    assert!(findings(&t2, Target::Tofino2).is_empty());
    let t2_twice = (
        t2.replacen(half, &format!("{half}\n                {half}"), 1),
        "register lcmp_pin0_h0 is executed twice on one packet path",
    );
    for (mutated, want) in cases.into_iter().chain([t2_twice]) {
        assert_ne!(mutated, text, "{want}: the mutation applies");
        let v = findings(&mutated, Target::Tofino1);
        assert!(v.iter().any(|v| v.contains(want)), "{want}: {v:?}");
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
        let v = findings(&v2, target);
        for want in [
            "pin0_lookup outputs the constants [1, 2, 3]",
            "pin1_lookup outputs the constants [1, 2, 3]",
            "64 bits of hash results in one action, over the immediate pathway's 32",
        ] {
            assert!(v.iter().any(|v| v.contains(want)), "{want}: {v:?}");
        }
        assert!(findings(&golden(), target).is_empty());
    }
}
