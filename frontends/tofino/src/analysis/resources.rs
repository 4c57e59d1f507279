//! The resource estimator: the memory each table and register of a placed
//! gress needs (SRAM and TCAM blocks, the method of `docs/tofino.md`), and
//! each stage's use against the chip's per-stage [`limits`].

use std::collections::BTreeSet;

use super::parse::{self, ControlDecl, Expr, Program, Type};
use super::{Gress, UnitKind};

/// Per-stage limits of one MAU stage (Tofino 1 and 2 alike).
pub mod limits {
    /// Logical tables per stage.
    pub const LOGICAL_TABLES: usize = 16;
    /// Stateful ALUs (registers) per stage.
    pub const STATEFUL_ALUS: usize = 4;
    /// SRAM blocks (1024 x 128 bits) per stage.
    pub const SRAM_BLOCKS: u64 = 80;
    /// TCAM blocks (512 x 44 bits) per stage.
    pub const TCAM_BLOCKS: u64 = 24;
    /// SRAM blocks per stage that registers may use: a stateful table's
    /// blocks each need a map RAM, and a stage has 48 (6 per row, the
    /// right-hand columns of its 8 rows), so two 65 536 x 64-bit pin
    /// registers (33 blocks each) never share a stage.
    pub const STATEFUL_SRAM_BLOCKS: u64 = 48;
}

/// Bits in one SRAM block.
pub const SRAM_BLOCK_BITS: u64 = 128 * 1024;
/// Words in one TCAM block.
pub const TCAM_BLOCK_ENTRIES: u64 = 512;
/// Width of one TCAM block.
pub const TCAM_BLOCK_BITS: u64 = 44;

/// One table's or register's estimated memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// `Control.object`.
    pub name: String,
    /// `exact`, `lpm`, `range`, `ternary`, `register`.
    pub kind: String,
    /// Entries or cells.
    pub entries: u64,
    /// Key (or cell) width in bits.
    pub width: u64,
    /// SRAM blocks.
    pub sram_blocks: u64,
    /// TCAM blocks.
    pub tcam_blocks: u64,
    /// The stage it is placed in.
    pub stage: u32,
}

/// One stage's use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageUse {
    /// Logical tables (tables, and statement groups under one gateway).
    pub logical_tables: usize,
    /// Stateful ALUs.
    pub stateful_alus: usize,
    /// SRAM blocks.
    pub sram_blocks: u64,
    /// SRAM blocks of registers (each with a map RAM).
    pub stateful_sram_blocks: u64,
    /// TCAM blocks.
    pub tcam_blocks: u64,
}

/// Arch typedefs the program uses but does not declare (TNA/T2NA specs).
const ARCH_TYPES: [(&str, u64); 4] = [
    ("PortId_t", 9),
    ("MirrorId_t", 10),
    ("ResubmitType_t", 3),
    ("DigestType_t", 3),
];

/// Width of a field path through the control's parameter types.
fn width(prog: &Program, c: &ControlDecl, e: &Expr) -> Option<u64> {
    match e {
        Expr::Slice(_, hi, lo) => Some(u64::from(hi.saturating_sub(*lo)) + 1),
        Expr::Cast(Type::Bits(w), _) => Some(u64::from(*w)),
        Expr::Path(p) => {
            let root = c.params.iter().find(|q| Some(&q.name) == p.first())?;
            let mut ty = root.ty.clone();
            for f in p.iter().skip(1) {
                let Type::Named(n, _) = &ty else { return None };
                let fields = prog.structs.get(n)?;
                ty = fields.iter().find(|x| &x.name == f)?.ty.clone();
            }
            type_width(prog, &ty)
        }
        _ => None,
    }
}

pub(super) fn type_width(prog: &Program, ty: &Type) -> Option<u64> {
    type_width_at(prog, ty, 0)
}

/// Nested at most 16 deep (a type that contains itself has no width).
fn type_width_at(prog: &Program, ty: &Type, depth: u32) -> Option<u64> {
    if depth > 16 {
        return None;
    }
    match ty {
        Type::Bits(w) => Some(u64::from(*w)),
        Type::Named(n, _) => {
            if let Some((_, w)) = ARCH_TYPES.iter().find(|(a, _)| a == n) {
                return Some(*w);
            }
            if let Some(t) = prog.typedefs.get(n) {
                return type_width_at(prog, t, depth + 1);
            }
            let fields = prog.structs.get(n)?;
            fields
                .iter()
                .map(|f| type_width_at(prog, &f.ty, depth + 1))
                .sum()
        }
    }
}

pub(super) type Resources = (Vec<Footprint>, Vec<StageUse>, Vec<String>);

/// Memory per table and register (the method of `docs/tofino.md`), and the
/// per-stage use against [`limits`].
pub(super) fn resources(prog: &Program, c: &ControlDecl, g: &Gress, control: &str) -> Resources {
    let mut objects = Vec::new();
    let mut uses = vec![StageUse::default(); g.stages as usize];
    let mut violations = Vec::new();
    let mut seen_regs = BTreeSet::new();
    let mut gateways: BTreeSet<(u32, Vec<(usize, bool)>)> = BTreeSet::new();
    for u in &g.units {
        let Some(su) = uses.get_mut(u.stage as usize) else {
            continue;
        };
        match &u.kind {
            UnitKind::Table => {
                su.logical_tables += 1;
                if let Some(t) = c.tables.get(&u.name) {
                    let f = table_footprint(prog, c, control, &u.name, t, u.stage);
                    su.sram_blocks += f.sram_blocks;
                    su.tcam_blocks += f.tcam_blocks;
                    objects.push(f);
                }
            }
            UnitKind::Register(r) => {
                if seen_regs.insert(r.clone()) {
                    su.stateful_alus += 1;
                    su.logical_tables += 1;
                    if let Some(inst) = c.instances.get(r) {
                        let f = register_footprint(prog, control, r, inst, u.stage);
                        su.sram_blocks += f.sram_blocks;
                        su.stateful_sram_blocks += f.sram_blocks;
                        objects.push(f);
                    }
                }
            }
            UnitKind::Hash | UnitKind::Statement => {
                // Statements under one gateway in one stage: one keyless table.
                if gateways.insert((u.stage, u.branches.clone())) {
                    su.logical_tables += 1;
                }
            }
        }
    }
    for (s, su) in uses.iter().enumerate() {
        let over = [
            (
                "logical tables",
                su.logical_tables as u64,
                limits::LOGICAL_TABLES as u64,
            ),
            (
                "stateful ALUs",
                su.stateful_alus as u64,
                limits::STATEFUL_ALUS as u64,
            ),
            ("SRAM blocks", su.sram_blocks, limits::SRAM_BLOCKS),
            (
                "register SRAM blocks (map RAMs)",
                su.stateful_sram_blocks,
                limits::STATEFUL_SRAM_BLOCKS,
            ),
            ("TCAM blocks", su.tcam_blocks, limits::TCAM_BLOCKS),
        ];
        for (what, n, max) in over {
            if n > max {
                violations.push(format!("{control} stage {s}: {n} {what}, over {max}"));
            }
        }
    }
    (objects, uses, violations)
}

fn table_footprint(
    prog: &Program,
    c: &ControlDecl,
    control: &str,
    name: &str,
    t: &parse::TableDecl,
    stage: u32,
) -> Footprint {
    let key_bits: u64 = t
        .keys
        .iter()
        .map(|k| width(prog, c, &k.expr).unwrap_or(32))
        .sum();
    let data_bits: u64 = t
        .actions
        .iter()
        .filter_map(|a| c.actions.get(a))
        .map(|a| {
            a.params
                .iter()
                .map(|p| type_width(prog, &p.ty).unwrap_or(32))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    let entries = t.size.max(1);
    let kinds: BTreeSet<&str> = t.keys.iter().map(|k| k.kind.as_str()).collect();
    let full = format!("{control}.{name}");
    if kinds.iter().all(|k| *k == "exact") {
        // Exact: key + action data + ~8 bits of overhead per entry, in
        // cuckoo-hashed SRAM at ~80 % fill.
        let bits = entries
            .saturating_mul(key_bits + data_bits + 8)
            .saturating_mul(5)
            / 4;
        return Footprint {
            name: full,
            kind: "exact".into(),
            entries,
            width: key_bits,
            sram_blocks: bits.div_ceil(SRAM_BLOCK_BITS).max(1),
            tcam_blocks: 0,
            stage,
        };
    }
    // TCAM: a range key expands into about two words per 4-bit nibble
    // (DirtCAM), LPM and ternary need one word per entry.
    let expand: u64 = t
        .keys
        .iter()
        .map(|k| {
            if k.kind == "range" {
                2 * width(prog, c, &k.expr).unwrap_or(32).div_ceil(4)
            } else {
                1
            }
        })
        .max()
        .unwrap_or(1);
    let words = entries.saturating_mul(expand);
    let tcam = words
        .div_ceil(TCAM_BLOCK_ENTRIES)
        .saturating_mul(key_bits.div_ceil(TCAM_BLOCK_BITS).max(1));
    let sram = words
        .saturating_mul(data_bits + 8)
        .div_ceil(SRAM_BLOCK_BITS)
        .max(1);
    let kind = ["range", "ternary", "lpm"]
        .into_iter()
        .find(|k| kinds.contains(k))
        .unwrap_or("ternary");
    Footprint {
        name: full,
        kind: kind.into(),
        entries,
        width: key_bits,
        sram_blocks: sram,
        tcam_blocks: tcam,
        stage,
    }
}

fn register_footprint(
    prog: &Program,
    control: &str,
    name: &str,
    inst: &parse::Instance,
    stage: u32,
) -> Footprint {
    let (cell, size) = match (&inst.ty, inst.args.first()) {
        (Type::Named(_, targs), Some(Expr::Num(n))) => (
            targs
                .first()
                .and_then(|t| type_width(prog, t))
                .unwrap_or(32),
            *n as u64,
        ),
        _ => (32, 1),
    };
    Footprint {
        name: format!("{control}.{name}"),
        kind: "register".into(),
        entries: size,
        width: cell,
        // One spare block per stateful ALU.
        sram_blocks: size.saturating_mul(cell).div_ceil(SRAM_BLOCK_BITS) + 1,
        tcam_blocks: 0,
        stage,
    }
}
