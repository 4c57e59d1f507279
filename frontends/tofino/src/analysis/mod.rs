//! A table-dependency analysis of a generated `lcmp.p4`, in the terms the
//! Tofino compiler places tables by (`p4lang/p4c`,
//! `backends/tofino/bf-p4c/mau/table_dependency_graph.h`): it reads the P4
//! *text* ([`parse`]), not the crate's schema, so it checks the program a
//! Tofino engineer would compile.
//!
//! # Model
//!
//! Every table application and every statement of a gress's `apply` block
//! is a *unit* (bf-p4c turns a statement outside a table into a keyless
//! table). A unit reads fields at its *match* (table keys and the
//! conditions of the `if`s around it, which become gateways evaluated with
//! the unit) and in its *action* (the union of the table's actions, or the
//! statement's right-hand side, with the fields a `RegisterAction` body
//! reads), and it writes fields. For units `a` before `b` that can run for
//! the same packet (not in different branches of one `if`):
//!
//! * **match dependency**: `b` matches on a field `a` writes: `b` is in a
//!   later stage;
//! * **control dependency**: `b` is applied under a gateway that tests a
//!   field `a` writes: a later stage;
//! * **action dependency**: `b`'s action reads or writes a field `a` writes:
//!   a later stage;
//! * **anti dependency**: `b` writes a field `a` reads: the same stage or
//!   later.
//!
//! All units that use one register are one stateful ALU in one stage.
//! Stages are assigned as early as the dependencies allow; the count per
//! gress is the longest chain. Each stage's use is checked against the
//! chip's per-stage limits (logical tables, stateful ALUs, SRAM and TCAM
//! blocks), and each assignment against the ALU rule: one operation per
//! destination per action (`a = b + c`, not `a = (b << 1) + c + d`; an
//! extern's result counts as a source, like action data).
//!
//! It also checks what bf-p4c refuses and the text shows (`checks.rs`): a
//! register executed twice on one packet path, undeclared names, width
//! mismatches, a `RegisterAction` with more than one nonzero constant
//! output, more than 32 bits of hash results in one action, and register
//! SRAM per stage against the 48 map RAMs.
//!
//! # What it does not model
//!
//! PHV allocation and container conflicts, hash-distribution and action-data
//! bus widths (beyond the hash results per action), gateway merging limits,
//! the stateful ALU's encoding beyond its constant outputs, table splitting
//! across stages, and where bf-p4c places a table that may go later than
//! its earliest stage: bf-p4c may need more stages than this minimum, never
//! fewer.

mod checks;
pub mod parse;
mod report;
mod resources;

pub use resources::{
    limits, Footprint, StageUse, SRAM_BLOCK_BITS, TCAM_BLOCK_BITS, TCAM_BLOCK_ENTRIES,
};

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Target;
use parse::{ControlDecl, Expr, ParseError, Program, Stmt, Type};

/// Why one unit must follow another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DepKind {
    /// The later unit matches on a written field (+1 stage).
    Match,
    /// The later unit is applied under a gateway that tests a written field
    /// (+1 stage).
    Control,
    /// The later unit's action reads or rewrites a written field (+1 stage).
    Action,
    /// The later unit writes a field the earlier one reads (same stage).
    Anti,
}

impl DepKind {
    /// Stages between the two units at least.
    pub const fn latency(self) -> u32 {
        match self {
            DepKind::Match | DepKind::Control | DepKind::Action => 1,
            DepKind::Anti => 0,
        }
    }

    /// The name in the plan.
    pub const fn name(self) -> &'static str {
        match self {
            DepKind::Match => "match",
            DepKind::Control => "control",
            DepKind::Action => "action",
            DepKind::Anti => "anti",
        }
    }
}

/// One dependency edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dep {
    /// The earlier unit.
    pub from: usize,
    /// The later unit.
    pub to: usize,
    /// Its kind.
    pub kind: DepKind,
    /// A field that causes it.
    pub field: String,
}

/// What a unit is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// A table application.
    Table,
    /// An access of a register's stateful ALU.
    Register(String),
    /// A hash computation.
    Hash,
    /// Any other statement.
    Statement,
}

/// One unit, placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Table name, register name, or statement text.
    pub name: String,
    /// Its kind.
    pub kind: UnitKind,
    /// Source line.
    pub line: u32,
    /// The stage it is placed in (0-based).
    pub stage: u32,
    /// Fields read by the table's keys.
    pub match_reads: BTreeSet<String>,
    /// Fields read by the conditions of the enclosing `if`s (gateways).
    pub gate_reads: BTreeSet<String>,
    /// Fields read by the action.
    pub action_reads: BTreeSet<String>,
    /// Fields written.
    pub writes: BTreeSet<String>,
    /// ALU operations of a statement (0 for a move, a hash or a register
    /// access; tables: 0).
    pub ops: usize,
    /// The branches of enclosing `if`s: `(if id, then?)`.
    branches: Vec<(usize, bool)>,
}

/// The stage plan of one gress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gress {
    /// The control's name.
    pub control: String,
    /// Minimum stages (0 for an empty control).
    pub stages: u32,
    /// Units in program order.
    pub units: Vec<Unit>,
    /// Dependencies between them.
    pub deps: Vec<Dep>,
}

/// The result for one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// The target.
    pub target: Target,
    /// Ingress and egress.
    pub gresses: Vec<Gress>,
    /// Tables and registers with their memory and stage.
    pub objects: Vec<Footprint>,
    /// Per gress, per stage use.
    pub stage_use: Vec<Vec<StageUse>>,
    /// Rule violations: a multi-operation assignment, a register used by
    /// dependent units, a stage over a per-stage limit, or a gress over the
    /// target's stage budget.
    pub violations: Vec<String>,
}

impl StagePlan {
    /// The gress of control `name`.
    pub fn gress(&self, name: &str) -> Option<&Gress> {
        self.gresses.iter().find(|g| g.control == name)
    }

    /// Stages of the deepest gress.
    pub fn max_stages(&self) -> u32 {
        self.gresses.iter().map(|g| g.stages).max().unwrap_or(0)
    }

    /// Total SRAM blocks.
    pub fn sram_blocks(&self) -> u64 {
        self.objects.iter().map(|o| o.sram_blocks).sum()
    }

    /// Total TCAM blocks.
    pub fn tcam_blocks(&self) -> u64 {
        self.objects.iter().map(|o| o.tcam_blocks).sum()
    }

    /// What each stage of a gress holds: tables, registers and hashes by
    /// name (a register's units once), then the count of other statements.
    pub fn stage_names(&self, gress: &Gress) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = vec![Vec::new(); gress.stages as usize];
        let mut statements = vec![0usize; gress.stages as usize];
        for u in &gress.units {
            let Some(s) = out.get_mut(u.stage as usize) else {
                continue;
            };
            if u.kind == UnitKind::Statement {
                if let Some(n) = statements.get_mut(u.stage as usize) {
                    *n += 1;
                }
            } else if !s.contains(&u.name) {
                s.push(u.name.clone());
            }
        }
        for (s, n) in out.iter_mut().zip(statements) {
            match n {
                0 => {}
                1 => s.push("1 statement".into()),
                n => s.push(format!("{n} statements")),
            }
        }
        out
    }
}

/// Analyses `p4` for `target`: preprocesses, parses, builds the dependency
/// graph of the two MAU controls named by `Pipeline(...)`, and places it.
pub fn analyze(p4: &str, target: Target) -> Result<StagePlan, ParseError> {
    let text = parse::preprocess(p4, target.number())?;
    let prog = parse::parse(&text)?;
    let controls: Vec<&String> = [prog.pipeline.get(1), prog.pipeline.get(4)]
        .into_iter()
        .flatten()
        .collect();
    if controls.len() != 2 {
        return Err(ParseError {
            line: 0,
            message: "no Pipeline(parser, ingress, deparser, parser, egress, deparser)".into(),
        });
    }
    let mut plan = StagePlan {
        target,
        gresses: Vec::new(),
        objects: Vec::new(),
        stage_use: Vec::new(),
        violations: Vec::new(),
    };
    for name in controls {
        let Some(c) = prog.controls.get(name) else {
            return Err(ParseError {
                line: 0,
                message: format!("control {name} is not declared"),
            });
        };
        let mut b = Builder {
            prog: &prog,
            control: c,
            name,
            units: Vec::new(),
            next_if: 0,
            violations: Vec::new(),
        };
        b.stmts(&c.apply, &[], &BTreeSet::new())?;
        for (aname, a) in &c.actions {
            for s in &a.body {
                b.check_ops(s, &format!("action {aname}"));
            }
        }
        let Builder {
            units,
            mut violations,
            ..
        } = b;
        violations.extend(checks::register_paths(&units, name));
        violations.extend(checks::names_and_widths(&prog, c, name));
        violations.extend(checks::immediate_pathway(&prog, c, name));
        violations.extend(checks::register_outputs(&prog, c, name));
        let (gress, mut v) = place(name, units);
        violations.append(&mut v);
        let (objects, uses, mut v) = resources::resources(&prog, c, &gress, name);
        violations.append(&mut v);
        if gress.stages > target.stages() {
            violations.push(format!(
                "{name}: {} stages, over {}'s {}",
                gress.stages,
                target.name(),
                target.stages()
            ));
        }
        plan.violations.append(&mut violations);
        plan.objects.extend(objects);
        plan.stage_use.push(uses);
        plan.gresses.push(gress);
    }
    Ok(plan)
}

struct Builder<'a> {
    prog: &'a Program,
    control: &'a ControlDecl,
    name: &'a str,
    units: Vec<Unit>,
    next_if: usize,
    violations: Vec<String>,
}

/// The field a path names, or `None` for a local or a constant.
fn field(
    path: &[String],
    locals: &BTreeSet<&str>,
    consts: &BTreeMap<String, u128>,
) -> Option<String> {
    let root = path.first()?;
    if locals.contains(root.as_str()) || (path.len() == 1 && consts.contains_key(root)) {
        return None;
    }
    if path.len() == 1 && matches!(root.as_str(), "true" | "false") {
        return None;
    }
    Some(path.join("."))
}

impl Builder<'_> {
    /// Fields `e` reads, and the extern instances it calls.
    fn reads(
        &self,
        e: &Expr,
        locals: &BTreeSet<&str>,
        out: &mut BTreeSet<String>,
        calls: &mut Vec<String>,
    ) {
        match e {
            Expr::Num(_) => {}
            Expr::Path(p) => {
                // `Enum.MEMBER` of a type is no field.
                let is_type = p.first().is_some_and(|r| r.ends_with("_t") && p.len() == 2);
                if !is_type {
                    if let Some(f) = field(p, locals, &self.prog.consts) {
                        out.insert(f);
                    }
                }
            }
            Expr::Slice(e, _, _) | Expr::Un(_, e) | Expr::Cast(_, e) => {
                self.reads(e, locals, out, calls)
            }
            Expr::Bin(_, a, b) => {
                self.reads(a, locals, out, calls);
                self.reads(b, locals, out, calls);
            }
            Expr::List(items) => {
                for i in items {
                    self.reads(i, locals, out, calls);
                }
            }
            Expr::Call(callee, args) => {
                for a in args {
                    self.reads(a, locals, out, calls);
                }
                if let Expr::Path(p) = &**callee {
                    match p.as_slice() {
                        [obj, m] if self.control.instances.contains_key(obj) => {
                            calls.push(obj.clone());
                            // A RegisterAction's body reads PHV fields too.
                            if m == "execute" {
                                if let Some(inst) = self.control.instances.get(obj) {
                                    let l: BTreeSet<&str> =
                                        inst.apply_params.iter().map(|p| p.name.as_str()).collect();
                                    for s in &inst.apply_body {
                                        self.stmt_reads(s, &l, out);
                                    }
                                }
                            }
                        }
                        [head @ .., m] if m == "isValid" => {
                            out.insert(format!("{}.$valid", head.join(".")));
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    fn stmt_reads(&self, s: &Stmt, locals: &BTreeSet<&str>, out: &mut BTreeSet<String>) {
        let mut calls = Vec::new();
        match s {
            Stmt::Assign { lhs, rhs, .. } => {
                self.reads(rhs, locals, out, &mut calls);
                if let Expr::Slice(..) = lhs {
                    // A slice write keeps the other bits: a read too.
                    self.reads(lhs, locals, out, &mut calls);
                }
            }
            Stmt::Call { call, .. } => self.reads(call, locals, out, &mut calls),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.reads(cond, locals, out, &mut calls);
                for s in then.iter().chain(otherwise) {
                    self.stmt_reads(s, locals, out);
                }
            }
        }
    }

    fn writes(&self, s: &Stmt, locals: &BTreeSet<&str>, out: &mut BTreeSet<String>) {
        match s {
            Stmt::Assign { lhs, .. } => {
                let mut e = lhs;
                while let Expr::Slice(inner, _, _) | Expr::Cast(_, inner) = e {
                    e = inner;
                }
                if let Expr::Path(p) = e {
                    if let Some(f) = field(p, locals, &self.prog.consts) {
                        out.insert(f);
                    }
                }
            }
            Stmt::Call { call, .. } => {
                if let Expr::Call(callee, _) = call {
                    if let Expr::Path(p) = &**callee {
                        if let [head @ .., m] = p.as_slice() {
                            if m == "setValid" || m == "setInvalid" {
                                out.insert(format!("{}.$valid", head.join(".")));
                            }
                        }
                    }
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                for s in then.iter().chain(otherwise) {
                    self.writes(s, locals, out);
                }
            }
        }
    }

    /// Flags an assignment that needs more than one ALU operation.
    fn check_ops(&mut self, s: &Stmt, place: &str) {
        match s {
            Stmt::Assign { lhs, rhs, line } => {
                let n = ops(rhs, &self.prog.consts);
                if n > 1 {
                    self.violations.push(format!(
                        "{}: {place}, line {line}: `{}` needs {n} ALU operations in one action \
                         (one per destination per stage): split it or use a table",
                        self.name,
                        show(lhs)
                    ));
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                for s in then.iter().chain(otherwise) {
                    self.check_ops(s, place);
                }
            }
            Stmt::Call { .. } => {}
        }
    }

    fn stmts(
        &mut self,
        body: &[Stmt],
        branches: &[(usize, bool)],
        gate: &BTreeSet<String>,
    ) -> Result<(), ParseError> {
        let none: BTreeSet<&str> = BTreeSet::new();
        for s in body {
            match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let id = self.next_if;
                    self.next_if += 1;
                    let mut g = gate.clone();
                    let mut calls = Vec::new();
                    self.reads(cond, &none, &mut g, &mut calls);
                    let mut b = branches.to_vec();
                    b.push((id, true));
                    self.stmts(then, &b, &g)?;
                    if let Some(last) = b.last_mut() {
                        last.1 = false;
                    }
                    self.stmts(otherwise, &b, &g)?;
                }
                Stmt::Call { call, line } => {
                    if let Expr::Call(callee, _) = call {
                        if let Expr::Path(p) = &**callee {
                            if let [t, m] = p.as_slice() {
                                if m == "apply" {
                                    self.table_unit(t, *line, branches, gate)?;
                                    continue;
                                }
                            }
                            // A direct action call: bf-p4c makes it a keyless
                            // table of its own (one action: its immediate data
                            // is not shared with a neighbouring statement).
                            if let [a] = p.as_slice() {
                                if let Some(decl) = self.control.actions.get(a) {
                                    self.action_call_unit(a, decl, *line, branches, gate);
                                    continue;
                                }
                            }
                        }
                    }
                    self.stmt_unit(s, *line, branches, gate);
                }
                Stmt::Assign { line, .. } => {
                    self.check_ops(s, "apply");
                    self.stmt_unit(s, *line, branches, gate);
                }
            }
        }
        Ok(())
    }

    fn table_unit(
        &mut self,
        name: &str,
        line: u32,
        branches: &[(usize, bool)],
        gate: &BTreeSet<String>,
    ) -> Result<(), ParseError> {
        let Some(t) = self.control.tables.get(name) else {
            return Err(ParseError {
                line,
                message: format!("{name}.apply(): no such table"),
            });
        };
        let none: BTreeSet<&str> = BTreeSet::new();
        let mut match_reads = BTreeSet::new();
        let mut calls = Vec::new();
        for k in &t.keys {
            self.reads(&k.expr, &none, &mut match_reads, &mut calls);
        }
        let mut action_reads = BTreeSet::new();
        let mut writes = BTreeSet::new();
        for a in t.actions.iter().chain(&t.default_action) {
            let Some(decl) = self.control.actions.get(a) else {
                return Err(ParseError {
                    line: t.line,
                    message: format!("table {name}: no action {a}"),
                });
            };
            let locals: BTreeSet<&str> = decl.params.iter().map(|p| p.name.as_str()).collect();
            for s in &decl.body {
                self.stmt_reads(s, &locals, &mut action_reads);
                self.writes(s, &locals, &mut writes);
            }
        }
        self.units.push(Unit {
            name: name.to_string(),
            kind: UnitKind::Table,
            line,
            stage: 0,
            match_reads,
            gate_reads: gate.clone(),
            action_reads,
            writes,
            ops: 0,
            branches: branches.to_vec(),
        });
        Ok(())
    }

    /// A directly called action (no parameters): one unit with its body's
    /// reads, writes and extern calls.
    fn action_call_unit(
        &mut self,
        name: &str,
        decl: &parse::ActionDecl,
        line: u32,
        branches: &[(usize, bool)],
        gate: &BTreeSet<String>,
    ) {
        let locals: BTreeSet<&str> = decl.params.iter().map(|p| p.name.as_str()).collect();
        let mut action_reads = BTreeSet::new();
        let mut writes = BTreeSet::new();
        let mut calls = Vec::new();
        for st in &decl.body {
            self.stmt_reads(st, &locals, &mut action_reads);
            self.writes(st, &locals, &mut writes);
            match st {
                Stmt::Assign { rhs, .. } => self.reads(rhs, &locals, &mut action_reads, &mut calls),
                Stmt::Call { call, .. } => self.reads(call, &locals, &mut action_reads, &mut calls),
                Stmt::If { .. } => {}
            }
        }
        let hash = calls.iter().find(|c| {
            self.control
                .instances
                .get(*c)
                .is_some_and(|i| matches!(&i.ty, Type::Named(t, _) if t == "Hash"))
        });
        let (kind, unit_name) = match hash {
            Some(h) => (UnitKind::Hash, h.clone()),
            None => (UnitKind::Statement, format!("{name}()")),
        };
        self.units.push(Unit {
            name: unit_name,
            kind,
            line,
            stage: 0,
            match_reads: BTreeSet::new(),
            gate_reads: gate.clone(),
            action_reads,
            writes,
            ops: 0,
            branches: branches.to_vec(),
        });
    }

    fn stmt_unit(
        &mut self,
        s: &Stmt,
        line: u32,
        branches: &[(usize, bool)],
        gate: &BTreeSet<String>,
    ) {
        let none: BTreeSet<&str> = BTreeSet::new();
        let mut action_reads = BTreeSet::new();
        let mut writes = BTreeSet::new();
        self.stmt_reads(s, &none, &mut action_reads);
        self.writes(s, &none, &mut writes);
        let mut calls = Vec::new();
        match s {
            Stmt::Assign { rhs, .. } => self.reads(rhs, &none, &mut action_reads, &mut calls),
            Stmt::Call { call, .. } => self.reads(call, &none, &mut action_reads, &mut calls),
            Stmt::If { .. } => {}
        }
        let mut kind = UnitKind::Statement;
        let mut name = show_stmt(s);
        let n_ops = match s {
            Stmt::Assign { rhs, .. } => ops(rhs, &self.prog.consts),
            _ => 0,
        };
        for c in &calls {
            let Some(inst) = self.control.instances.get(c) else {
                continue;
            };
            match &inst.ty {
                Type::Named(t, _) if t == "RegisterAction" || t == "DirectRegisterAction" => {
                    if let Some(Expr::Path(r)) = inst.args.first() {
                        let reg = r.join(".");
                        kind = UnitKind::Register(reg.clone());
                        name = reg;
                    }
                }
                Type::Named(t, _) if t == "Lpf" || t == "Wred" || t == "Meter" => {
                    kind = UnitKind::Register(c.clone());
                    name = c.clone();
                }
                Type::Named(t, _) if t == "Hash" => {
                    kind = UnitKind::Hash;
                    name = c.clone();
                }
                _ => {}
            }
        }
        self.units.push(Unit {
            name,
            kind,
            line,
            stage: 0,
            match_reads: BTreeSet::new(),
            gate_reads: gate.clone(),
            action_reads,
            writes,
            ops: n_ops,
            branches: branches.to_vec(),
        });
    }
}

/// ALU operations an expression needs: one per operator (constant
/// sub-expressions fold); casts, slices, moves and extern results are free.
fn ops(e: &Expr, consts: &BTreeMap<String, u128>) -> usize {
    let constant = |e: &Expr| parse::const_value(e, consts).is_some();
    match e {
        Expr::Num(_) | Expr::Path(_) => 0,
        Expr::Slice(e, _, _) | Expr::Cast(_, e) => ops(e, consts),
        Expr::Un(_, e) if constant(e) => 0,
        Expr::Un(_, e) => 1 + ops(e, consts),
        Expr::Bin(_, a, b) if constant(a) && constant(b) => 0,
        Expr::Bin(_, a, b) => 1 + ops(a, consts) + ops(b, consts),
        Expr::List(items) => items.iter().map(|i| ops(i, consts)).sum(),
        Expr::Call(_, args) => args.iter().map(|i| ops(i, consts)).sum(),
    }
}

/// Source-like text of an expression.
pub fn show(e: &Expr) -> String {
    match e {
        Expr::Num(v) => v.to_string(),
        Expr::Path(p) => p.join("."),
        Expr::Slice(e, hi, lo) => format!("{}[{hi}:{lo}]", show(e)),
        Expr::Call(c, args) => format!(
            "{}({})",
            show(c),
            args.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Expr::Bin(op, a, b) => format!("({} {op} {})", show(a), show(b)),
        Expr::Un(op, e) => format!("{op}{}", show(e)),
        Expr::Cast(Type::Bits(w), e) => format!("(bit<{w}>){}", show(e)),
        Expr::Cast(Type::Named(n, _), e) => format!("({n}){}", show(e)),
        Expr::List(items) => format!(
            "{{{}}}",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn show_stmt(s: &Stmt) -> String {
    match s {
        Stmt::Assign { lhs, rhs, .. } => {
            let r = match rhs {
                Expr::Num(_) | Expr::Path(_) => show(rhs),
                _ => "…".to_string(),
            };
            format!("{} = {r}", show(lhs))
        }
        Stmt::Call { call, .. } => match call {
            Expr::Call(c, _) => format!("{}()", show(c)),
            _ => show(call),
        },
        Stmt::If { .. } => "if".to_string(),
    }
}

/// Whether two fields overlap (equal, or one a member of the other).
fn overlaps(a: &str, b: &str) -> bool {
    a == b
        || (a.len() > b.len() && a.starts_with(b) && a.as_bytes().get(b.len()) == Some(&b'.'))
        || (b.len() > a.len() && b.starts_with(a) && b.as_bytes().get(a.len()) == Some(&b'.'))
}

fn common(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Option<String> {
    a.iter().find(|x| b.iter().any(|y| overlaps(x, y))).cloned()
}

/// Whether two units are in different branches of one `if`.
fn exclusive(a: &Unit, b: &Unit) -> bool {
    a.branches
        .iter()
        .zip(&b.branches)
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x.0 == y.0)
}

/// Builds the dependency edges and places the units as early as possible;
/// units of one register share a stage.
fn place(control: &str, mut units: Vec<Unit>) -> (Gress, Vec<String>) {
    let mut deps = Vec::new();
    let mut violations = Vec::new();
    for j in 0..units.len() {
        for i in 0..j {
            let (a, b) = (&units[i], &units[j]);
            if exclusive(a, b) {
                continue;
            }
            let edge = if let Some(f) = common(&a.writes, &b.match_reads) {
                Some((DepKind::Match, f))
            } else if let Some(f) = common(&a.writes, &b.gate_reads) {
                Some((DepKind::Control, f))
            } else if let Some(f) =
                common(&a.writes, &b.action_reads).or_else(|| common(&a.writes, &b.writes))
            {
                Some((DepKind::Action, f))
            } else {
                let reads: BTreeSet<String> = a
                    .match_reads
                    .iter()
                    .chain(&a.gate_reads)
                    .chain(&a.action_reads)
                    .cloned()
                    .collect();
                common(&b.writes, &reads).map(|f| (DepKind::Anti, f))
            };
            if let Some((kind, field)) = edge {
                deps.push(Dep {
                    from: i,
                    to: j,
                    kind,
                    field,
                });
            }
        }
    }
    let reg = |u: &Unit| match &u.kind {
        UnitKind::Register(r) => Some(r.clone()),
        _ => None,
    };
    // Longest path in program order; a register's units then share the
    // latest of their stages, which may push later units again.
    let mut stage = vec![0u32; units.len()];
    for _round in 0..=units.len() {
        let mut changed = false;
        for d in &deps {
            let want = stage[d.from] + d.kind.latency();
            if stage[d.to] < want {
                stage[d.to] = want;
                changed = true;
            }
        }
        let mut by_reg: BTreeMap<String, u32> = BTreeMap::new();
        for (u, s) in units.iter().zip(&stage) {
            if let Some(r) = reg(u) {
                let e = by_reg.entry(r).or_insert(0);
                *e = (*e).max(*s);
            }
        }
        for (u, s) in units.iter().zip(stage.iter_mut()) {
            if let Some(m) = reg(u).and_then(|r| by_reg.get(&r).copied()) {
                if *s < m {
                    *s = m;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    for d in &deps {
        if stage[d.to] < stage[d.from] + d.kind.latency() {
            let r = reg(&units[d.to]).unwrap_or_default();
            violations.push(format!(
                "{control}: register {r} is used by units that depend on each other ({} on {})",
                units[d.to].name, units[d.from].name
            ));
            break;
        }
    }
    for (u, s) in units.iter_mut().zip(&stage) {
        u.stage = *s;
    }
    let stages = if units.is_empty() {
        0
    } else {
        stage.iter().max().map_or(0, |m| m + 1)
    };
    (
        Gress {
            control: control.to_string(),
            stages,
            units,
            deps,
        },
        violations,
    )
}

#[cfg(test)]
mod test {
    use super::*;

    const SMALL: &str = r#"
struct m_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
control I(inout m_t meta) {
    action set_a(bit<8> x) { meta.a = x; }
    action set_b(bit<8> x) { meta.b = x; }
    table ta { key = { meta.d : exact; } actions = { set_a; } size = 4; }
    table tb { key = { meta.a : exact; } actions = { set_b; } size = 4; }
    table tc { key = { meta.d : exact; } actions = { set_b; } size = 4; }
    apply {
        ta.apply();
        tb.apply();
        if (meta.b == 1) { meta.c = meta.a + meta.b; } else { tc.apply(); }
        meta.d = (meta.a << 1) + meta.b + meta.c;
    }
}
control E(inout m_t meta) { apply { } }
Pipeline(P(), I(), D(), P(), E(), D()) pipe;
"#;

    #[test]
    fn chains_and_branches_are_placed() {
        let plan = analyze(SMALL, Target::Tofino1).expect("parses");
        let g = plan.gress("I").expect("ingress");
        let stage = |n: &str| g.units.iter().find(|u| u.name == n).map(|u| u.stage);
        assert_eq!(stage("ta"), Some(0));
        assert_eq!(stage("tb"), Some(1), "match dependency on meta.a");
        // tc is in the else branch of a gateway testing meta.b (written by tb).
        assert_eq!(stage("tc"), Some(2));
        assert!(g
            .deps
            .iter()
            .any(|d| d.kind == DepKind::Control && d.field == "meta.b"));
        assert_eq!(g.stages, 4, "meta.d's statement follows meta.c's");
        assert!(g
            .deps
            .iter()
            .any(|d| d.kind == DepKind::Match && d.field == "meta.a"));
        assert_eq!(plan.gress("E").map(|g| g.stages), Some(0));
        // `(meta.a << 1) + meta.b + meta.c` is three operations.
        assert_eq!(plan.violations.len(), 1, "{:?}", plan.violations);
        assert!(plan.violations[0].contains("3 ALU operations"));
    }

    quickcheck::quickcheck! {
        /// Mangled programs (a window cut out, a byte changed) are parse
        /// errors or plans, never panics.
        fn mangled_programs_never_panic(cut: u16, len: u8, at: u16, byte: u8) -> bool {
            let text = SMALL.as_bytes();
            let mut v = text.to_vec();
            let c = usize::from(cut) % v.len();
            let end = (c + usize::from(len)).min(v.len());
            v.drain(c..end);
            if !v.is_empty() {
                let a = usize::from(at) % v.len();
                v[a] = byte % 128;
            }
            let s = String::from_utf8_lossy(&v);
            let _ = analyze(&s, Target::Tofino1);
            let _ = analyze("struct a { a x; } control I(inout a m) { table t { key = { m.x : exact; } actions = { } size = 1; } apply { t.apply(); } } Pipeline(P(), I(), D(), P(), I(), D()) p;", Target::Tofino2);
            true
        }
    }

    /// A plan keeps its own promises: every unit sits inside its gress's
    /// stages, which are the deepest unit's stage + 1 (0 when empty), and
    /// every dependency's later unit sits its kind's latency or more after
    /// the earlier one.
    fn plan_is_consistent(plan: &StagePlan) -> Result<(), String> {
        for g in &plan.gresses {
            let deepest = g.units.iter().map(|u| u.stage + 1).max().unwrap_or(0);
            if g.stages != deepest {
                return Err(format!(
                    "{}: {} stages, deepest unit needs {deepest}",
                    g.control, g.stages
                ));
            }
            for d in &g.deps {
                let (Some(from), Some(to)) = (g.units.get(d.from), g.units.get(d.to)) else {
                    return Err(format!("{}: dep {d:?} names a missing unit", g.control));
                };
                if d.from >= d.to || to.stage < from.stage + d.kind.latency() {
                    return Err(format!(
                        "{}: {} (stage {}) -> {} (stage {}) breaks a {} dependency",
                        g.control,
                        from.name,
                        from.stage,
                        to.name,
                        to.stage,
                        d.kind.name()
                    ));
                }
            }
        }
        Ok(())
    }

    quickcheck::quickcheck! {
        /// The companion of `mangled_programs_never_panic`, which checks
        /// no result: a mangled program that still parses gives a plan that
        /// keeps its promises.
        fn mangled_programs_that_parse_give_consistent_plans(
            cut: u16,
            len: u8,
            at: u16,
            byte: u8
        ) -> quickcheck::TestResult {
            let mut v = SMALL.as_bytes().to_vec();
            let c = usize::from(cut) % v.len();
            let end = (c + usize::from(len % 8)).min(v.len());
            v.drain(c..end);
            if !v.is_empty() {
                let a = usize::from(at) % v.len();
                v[a] = byte % 128;
            }
            match analyze(&String::from_utf8_lossy(&v), Target::Tofino1) {
                Err(_) => quickcheck::TestResult::discard(),
                Ok(plan) => match plan_is_consistent(&plan) {
                    Ok(()) => quickcheck::TestResult::passed(),
                    Err(e) => quickcheck::TestResult::error(e),
                },
            }
        }

        /// Spaces added where the program already has one change no
        /// token and no line, so the plan is SMALL's, exactly.
        fn spaces_leave_the_plan_unchanged(at: Vec<u16>) -> bool {
            let want = analyze(SMALL, Target::Tofino1).expect("parses");
            let spaces: Vec<usize> = SMALL.match_indices(' ').map(|(i, _)| i).collect();
            let mut v = SMALL.to_string();
            let mut picks: Vec<usize> = at
                .iter()
                .filter_map(|a| spaces.get(usize::from(*a) % spaces.len()).copied())
                .collect();
            // From the back, so earlier positions stay valid.
            picks.sort_unstable_by(|a, b| b.cmp(a));
            for i in picks {
                v.insert(i, ' ');
            }
            analyze(&v, Target::Tofino1).ok() == Some(want)
        }
    }

    #[test]
    fn the_small_plan_is_consistent() {
        let plan = analyze(SMALL, Target::Tofino1).expect("parses");
        assert_eq!(plan_is_consistent(&plan), Ok(()));
        // The check can fail: tb moved into ta's stage breaks the match
        // dependency on meta.a.
        let mut bad = plan.clone();
        let g = bad
            .gresses
            .iter_mut()
            .find(|g| g.control == "I")
            .expect("ingress");
        let tb = g.units.iter_mut().find(|u| u.name == "tb").expect("tb");
        tb.stage = 0;
        assert!(plan_is_consistent(&bad).is_err());
    }

    #[test]
    fn exclusive_branches_do_not_depend() {
        let a = Unit {
            name: "a".into(),
            kind: UnitKind::Statement,
            line: 1,
            stage: 0,
            match_reads: BTreeSet::new(),
            gate_reads: BTreeSet::new(),
            action_reads: BTreeSet::new(),
            writes: BTreeSet::new(),
            ops: 0,
            branches: vec![(0, true), (1, true)],
        };
        let mut b = a.clone();
        b.branches = vec![(0, true), (1, false)];
        assert!(exclusive(&a, &b));
        b.branches = vec![(0, true)];
        assert!(!exclusive(&a, &b));
        assert!(overlaps("meta.resubmit", "meta.resubmit.kind"));
        assert!(!overlaps("meta.k", "meta.kind"));
    }
}
