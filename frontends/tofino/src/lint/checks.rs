//! What bf-p4c refuses and the text alone shows, checked cheaply: names
//! that are not declared, assignments whose widths differ (a `bit<16>`
//! into a `PortId_t` needs a cast), and a register executed twice on one
//! packet path (bf-p4c allows one `execute()` per register per packet).
//!
//! Types are read from the program's own declarations (headers, structs,
//! typedefs, enums, action and `RegisterAction` parameters) plus the
//! architecture typedefs ([`ARCH_TYPES`]); a field of an
//! architecture struct (`ig_intr_md.resubmit_flag`) is not declared in the
//! program, so neither its name nor its width is checked.

use std::collections::BTreeMap;

use super::parse::{ControlDecl, Expr, Program, Stmt, Type};

/// Arch typedefs the program uses but does not declare (TNA/T2NA specs).
const ARCH_TYPES: [(&str, u64); 4] = [
    ("PortId_t", 9),
    ("MirrorId_t", 10),
    ("ResubmitType_t", 3),
    ("DigestType_t", 3),
];

/// The width of a type: bits, an architecture typedef, a typedef, or a
/// struct's fields summed.
fn type_width(prog: &Program, ty: &Type) -> Option<u64> {
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

/// The names in scope of one body: control parameters and variables plus
/// the body's locals.
struct Scope<'a> {
    prog: &'a Program,
    control: &'a ControlDecl,
    locals: BTreeMap<&'a str, &'a Type>,
}

/// What a path names.
enum Named {
    /// A field (or parameter) of this type.
    Field(Type),
    /// A field of a struct the program does not declare (an architecture
    /// struct), a constant, an enum member, an instance, a table or an
    /// action: nothing to check.
    Unchecked,
}

impl Scope<'_> {
    /// Resolves a path, or says why it names nothing.
    fn resolve(&self, path: &[String]) -> Result<Named, String> {
        let Some(root) = path.first() else {
            return Ok(Named::Unchecked);
        };
        let ty = if let Some(t) = self.locals.get(root.as_str()) {
            (*t).clone()
        } else if let Some(t) = self.control.locals.get(root) {
            // A control-local variable, visible in every body of the control.
            t.clone()
        } else if let Some(p) = self.control.params.iter().find(|p| &p.name == root) {
            p.ty.clone()
        } else if let Some(members) = self.prog.enums.get(root) {
            return match path.get(1) {
                Some(m) if members.contains(m) && path.len() == 2 => Ok(Named::Unchecked),
                Some(m) => Err(format!("{root} has no member {m}")),
                None => Ok(Named::Unchecked),
            };
        } else if self.prog.consts.contains_key(root)
            || self.control.instances.contains_key(root)
            || self.control.tables.contains_key(root)
            || self.control.actions.contains_key(root)
            || matches!(root.as_str(), "true" | "false")
            // Architecture enums (`HashAlgorithm_t.CUSTOM`).
            || (root.ends_with("_t") && path.len() == 2)
        {
            return Ok(Named::Unchecked);
        } else {
            return Err(format!("`{root}` is not declared"));
        };
        let mut ty = ty;
        for (i, f) in path.iter().enumerate().skip(1) {
            let Type::Named(n, _) = &ty else {
                return Err(format!("{} is not a struct", path[..i].join(".")));
            };
            let n = self
                .prog
                .typedefs
                .get(n)
                .and_then(|t| match t {
                    Type::Named(m, _) => Some(m.clone()),
                    Type::Bits(_) => None,
                })
                .unwrap_or_else(|| n.clone());
            let Some(fields) = self.prog.structs.get(&n) else {
                return Ok(Named::Unchecked); // an architecture struct
            };
            let Some(field) = fields.iter().find(|x| &x.name == f) else {
                return Err(format!("{} has no field {f}", path[..i].join(".")));
            };
            ty = field.ty.clone();
        }
        Ok(Named::Field(ty))
    }

    /// The width of an expression when the program fixes it (`None` for a
    /// constant, a comparison, a struct or an undeclared type).
    fn width(&self, e: &Expr, out: &mut Vec<String>, line: u32) -> Option<u64> {
        match e {
            Expr::Num(_) | Expr::List(_) => None,
            Expr::Path(p) => match self.resolve(p) {
                Ok(Named::Field(Type::Named(n, _))) if self.prog.structs.contains_key(&n) => None,
                Ok(Named::Field(t)) => type_width(self.prog, &t),
                Ok(Named::Unchecked) => None,
                Err(m) => {
                    out.push(format!("line {line}: {m}"));
                    None
                }
            },
            Expr::Slice(inner, hi, lo) => {
                self.width(inner, out, line);
                Some(u64::from(hi.saturating_sub(*lo)) + 1)
            }
            Expr::Cast(ty, inner) => {
                self.width(inner, out, line);
                type_width(self.prog, ty)
            }
            Expr::Un("!", inner) => {
                self.width(inner, out, line);
                None
            }
            Expr::Un(_, inner) => self.width(inner, out, line),
            Expr::Bin(op, a, b) => {
                let wa = self.width(a, out, line);
                let wb = self.width(b, out, line);
                match *op {
                    "<<" | ">>" => wa,
                    "++" => Some(wa? + wb?),
                    "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||" => {
                        if let (Some(x), Some(y)) = (wa, wb) {
                            if x != y {
                                out.push(format!(
                                    "line {line}: `{}` compares bit<{x}> with bit<{y}>",
                                    super::show(e)
                                ));
                            }
                        }
                        None
                    }
                    _ => {
                        if let (Some(x), Some(y)) = (wa, wb) {
                            if x != y {
                                out.push(format!(
                                    "line {line}: `{}` mixes bit<{x}> and bit<{y}>",
                                    super::show(e)
                                ));
                            }
                        }
                        wa.or(wb)
                    }
                }
            }
            Expr::Call(callee, args) => {
                for a in args {
                    self.width(a, out, line);
                }
                let Expr::Path(p) = &**callee else {
                    return None;
                };
                match p.as_slice() {
                    [inst, m] if self.control.instances.contains_key(inst) => {
                        let ty = &self.control.instances.get(inst)?.ty;
                        match (ty, m.as_str()) {
                            (Type::Named(t, targs), "execute")
                                if t == "RegisterAction" || t == "DirectRegisterAction" =>
                            {
                                targs.last().and_then(|u| type_width(self.prog, u))
                            }
                            (Type::Named(t, targs), "get") if t == "Hash" => {
                                targs.first().and_then(|u| type_width(self.prog, u))
                            }
                            _ => None,
                        }
                    }
                    [head @ .., m]
                        if matches!(m.as_str(), "isValid" | "setValid" | "setInvalid") =>
                    {
                        if let Err(msg) = self.resolve(head) {
                            out.push(format!("line {line}: {msg}"));
                        }
                        None
                    }
                    [t, m] if m == "apply" => {
                        if !self.control.tables.contains_key(t) {
                            out.push(format!("line {line}: no table {t}"));
                        }
                        None
                    }
                    [a] if self.control.actions.contains_key(a) => None,
                    _ => {
                        out.push(format!(
                            "line {line}: `{}` calls nothing declared",
                            super::show(callee)
                        ));
                        None
                    }
                }
            }
        }
    }

    fn stmts(&self, body: &[Stmt], out: &mut Vec<String>, mut line: u32) {
        for s in body {
            match s {
                Stmt::Assign { lhs, rhs, line: l } => {
                    line = *l;
                    let wl = self.width(lhs, out, line);
                    let wr = self.width(rhs, out, line);
                    match (wl, wr, rhs) {
                        (Some(x), Some(y), _) if x != y => out.push(format!(
                            "line {line}: `{}` is bit<{x}> but `{}` is bit<{y}>: cast it",
                            super::show(lhs),
                            super::show(rhs)
                        )),
                        (Some(x), _, Expr::Num(v)) if x < 128 && v >> x != 0 => out.push(format!(
                            "line {line}: {v} does not fit `{}` (bit<{x}>)",
                            super::show(lhs)
                        )),
                        _ => {}
                    }
                }
                Stmt::Call { call, line: l } => {
                    line = *l;
                    self.width(call, out, line);
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.width(cond, out, line);
                    self.stmts(then, out, line);
                    self.stmts(otherwise, out, line);
                }
            }
        }
    }
}

/// Undeclared names and width mismatches in a control's `apply` block,
/// actions, table keys and `RegisterAction` bodies.
pub(super) fn names_and_widths(prog: &Program, c: &ControlDecl, control: &str) -> Vec<String> {
    let mut out = Vec::new();
    fn scope<'a>(
        prog: &'a Program,
        c: &'a ControlDecl,
        locals: BTreeMap<&'a str, &'a Type>,
    ) -> Scope<'a> {
        Scope {
            prog,
            control: c,
            locals,
        }
    }
    scope(prog, c, BTreeMap::new()).stmts(&c.apply, &mut out, 0);
    for (name, a) in &c.actions {
        let locals = a.params.iter().map(|p| (p.name.as_str(), &p.ty)).collect();
        let mut v = Vec::new();
        scope(prog, c, locals).stmts(&a.body, &mut v, 0);
        out.extend(v.into_iter().map(|m| format!("action {name}: {m}")));
    }
    for (name, t) in &c.tables {
        let s = scope(prog, c, BTreeMap::new());
        for k in &t.keys {
            s.width(&k.expr, &mut out, t.line);
        }
        for a in t.actions.iter().chain(&t.default_action) {
            if !c.actions.contains_key(a) {
                out.push(format!("line {}: table {name} names no action {a}", t.line));
            }
        }
    }
    for (name, inst) in &c.instances {
        if inst.apply_body.is_empty() {
            continue;
        }
        let locals = inst
            .apply_params
            .iter()
            .map(|p| (p.name.as_str(), &p.ty))
            .collect();
        let mut v = Vec::new();
        scope(prog, c, locals).stmts(&inst.apply_body, &mut v, 0);
        out.extend(v.into_iter().map(|m| format!("{name}: {m}")));
    }
    out.into_iter().map(|m| format!("{control}: {m}")).collect()
}

/// One execution of a register (or of a meter, an LPF, a WRED) in the
/// `apply` block: its name, line, and the branches of the `if`s around it
/// (`(if id, then?)`).
struct Execute {
    register: String,
    line: u32,
    branches: Vec<(usize, bool)>,
}

/// Whether two executions are in different branches of one `if`.
pub(super) fn exclusive(a: &[(usize, bool)], b: &[(usize, bool)]) -> bool {
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x.0 == y.0)
}

/// The registers an expression executes: `a.execute(...)` of a
/// `RegisterAction` names its register (the first constructor argument);
/// of a `Meter`, `Lpf` or `Wred`, the instance.
fn executes(c: &ControlDecl, e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Call(callee, args) => {
            if let Expr::Path(p) = &**callee {
                if let [inst, m] = p.as_slice() {
                    match c.instances.get(inst).map(|i| (&i.ty, i.args.first())) {
                        Some((Type::Named(t, _), Some(Expr::Path(r))))
                            if m == "execute"
                                && (t == "RegisterAction" || t == "DirectRegisterAction") =>
                        {
                            out.push(r.join("."));
                        }
                        Some((Type::Named(t, _), _))
                            if m == "execute" && matches!(t.as_str(), "Meter" | "Lpf" | "Wred") =>
                        {
                            out.push(inst.clone());
                        }
                        _ => {}
                    }
                }
            }
            for a in args {
                executes(c, a, out);
            }
        }
        Expr::Slice(e, _, _) | Expr::Cast(_, e) | Expr::Un(_, e) => executes(c, e, out),
        Expr::Bin(_, a, b) => {
            executes(c, a, out);
            executes(c, b, out);
        }
        Expr::List(items) => items.iter().for_each(|i| executes(c, i, out)),
        Expr::Num(_) | Expr::Path(_) => {}
    }
}

/// Every execution of a register in `body`, with its branches.
fn collect(
    c: &ControlDecl,
    body: &[Stmt],
    branches: &[(usize, bool)],
    next_if: &mut usize,
    out: &mut Vec<Execute>,
) {
    for s in body {
        let (e, line) = match s {
            Stmt::Assign { rhs, line, .. } => (rhs, *line),
            Stmt::Call { call, line } => (call, *line),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let mut regs = Vec::new();
                executes(c, cond, &mut regs);
                out.extend(regs.into_iter().map(|register| Execute {
                    register,
                    line: 0,
                    branches: branches.to_vec(),
                }));
                let id = *next_if;
                *next_if += 1;
                let mut b = branches.to_vec();
                b.push((id, true));
                collect(c, then, &b, next_if, out);
                if let Some(last) = b.last_mut() {
                    last.1 = false;
                }
                collect(c, otherwise, &b, next_if, out);
                continue;
            }
        };
        let mut regs = Vec::new();
        executes(c, e, &mut regs);
        out.extend(regs.into_iter().map(|register| Execute {
            register,
            line,
            branches: branches.to_vec(),
        }));
    }
}

/// Two executions of one register on one packet path (not in different
/// branches of one `if`) in a control's `apply` block.
pub(super) fn register_paths(c: &ControlDecl, control: &str) -> Vec<String> {
    let mut all = Vec::new();
    collect(c, &c.apply, &[], &mut 0, &mut all);
    let mut out = Vec::new();
    for (j, b) in all.iter().enumerate() {
        for a in all.iter().take(j) {
            if a.register == b.register && !exclusive(&a.branches, &b.branches) {
                out.push(format!(
                    "{control}: register {} is executed twice on one packet path (lines {} \
                     and {}): bf-p4c allows one execute() per register per packet",
                    b.register, a.line, b.line
                ));
            }
        }
    }
    out
}

/// The width of the `Hash.get()` results an expression reads.
fn hash_bits(prog: &Program, c: &ControlDecl, e: &Expr) -> u64 {
    match e {
        Expr::Call(callee, args) => {
            let own = match &**callee {
                Expr::Path(p) => match p.as_slice() {
                    [inst, m] if m == "get" => match c.instances.get(inst).map(|i| &i.ty) {
                        Some(Type::Named(t, targs)) if t == "Hash" => {
                            targs.first().and_then(|w| type_width(prog, w)).unwrap_or(0)
                        }
                        _ => 0,
                    },
                    _ => 0,
                },
                _ => 0,
            };
            own + args.iter().map(|a| hash_bits(prog, c, a)).sum::<u64>()
        }
        Expr::Slice(e, _, _) | Expr::Cast(_, e) | Expr::Un(_, e) => hash_bits(prog, c, e),
        Expr::Bin(_, a, b) => hash_bits(prog, c, a) + hash_bits(prog, c, b),
        Expr::List(items) => items.iter().map(|i| hash_bits(prog, c, i)).sum(),
        Expr::Num(_) | Expr::Path(_) => 0,
    }
}

/// The immediate pathway: one action's data from hash units is at most
/// 32 bits. bf-p4c makes one action of adjacent statements outside tables
/// (a direct action call or a table application ends the run), and each
/// declared action is one.
pub(super) fn immediate_pathway(prog: &Program, c: &ControlDecl, control: &str) -> Vec<String> {
    const MAX: u64 = 32;
    let mut out = Vec::new();
    fn run_bits(prog: &Program, c: &ControlDecl, s: &Stmt) -> u64 {
        match s {
            Stmt::Assign { rhs, .. } => hash_bits(prog, c, rhs),
            Stmt::Call { call, .. } => hash_bits(prog, c, call),
            Stmt::If { .. } => 0,
        }
    }
    fn block(prog: &Program, c: &ControlDecl, body: &[Stmt], out: &mut Vec<(u32, u64)>) {
        let mut run = (0u32, 0u64);
        let flush = |run: &mut (u32, u64), out: &mut Vec<(u32, u64)>| {
            if run.1 > 0 {
                out.push(*run);
            }
            *run = (0, 0);
        };
        for s in body {
            let ends = match s {
                Stmt::If {
                    then, otherwise, ..
                } => {
                    flush(&mut run, out);
                    block(prog, c, then, out);
                    block(prog, c, otherwise, out);
                    continue;
                }
                Stmt::Call {
                    call: Expr::Call(callee, _),
                    ..
                } => match &**callee {
                    Expr::Path(p) => {
                        matches!(p.as_slice(), [_, m] if m == "apply")
                            || matches!(p.as_slice(), [a] if c.actions.contains_key(a))
                    }
                    _ => false,
                },
                _ => false,
            };
            if ends {
                flush(&mut run, out);
                continue;
            }
            if let Stmt::Assign { line, .. } | Stmt::Call { line, .. } = s {
                if run.1 == 0 {
                    run.0 = *line;
                }
            }
            run.1 += run_bits(prog, c, s);
        }
        flush(&mut run, out);
    }
    let mut runs = Vec::new();
    block(prog, c, &c.apply, &mut runs);
    for (line, bits) in runs {
        if bits > MAX {
            out.push(format!(
                "{control}: line {line}: {bits} bits of hash results in one action, over the \
                 immediate pathway's {MAX}: give each hash an action of its own"
            ));
        }
    }
    for (name, a) in &c.actions {
        let bits: u64 = a.body.iter().map(|s| run_bits(prog, c, s)).sum();
        if bits > MAX {
            out.push(format!(
                "{control}: action {name}: {bits} bits of hash results, over the immediate \
                 pathway's {MAX}"
            ));
        }
    }
    out
}

/// A `RegisterAction`'s constant outputs: bf-p4c drives a nonzero constant
/// from the stateful ALU's predicate, shifted to the constant's one bit,
/// so an action may output at most one nonzero constant, a power of two
/// (0 is not driven). Several outputs: a plain enum (encoded in the
/// predicate by the compiler) or a memory value.
pub(super) fn register_outputs(prog: &Program, c: &ControlDecl, control: &str) -> Vec<String> {
    fn consts(s: &Stmt, out_name: &str, prog: &Program, acc: &mut Vec<u128>) {
        match s {
            Stmt::Assign {
                lhs: Expr::Path(p),
                rhs,
                ..
            } if p.len() == 1 && p[0] == out_name => {
                if let Some(v) = super::parse::const_value(rhs, &prog.consts) {
                    acc.push(v);
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                for s in then.iter().chain(otherwise) {
                    consts(s, out_name, prog, acc);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (name, inst) in &c.instances {
        let Some(out_param) = inst.apply_params.get(1) else {
            continue;
        };
        let mut acc = Vec::new();
        for s in &inst.apply_body {
            consts(s, &out_param.name, prog, &mut acc);
        }
        let mut nonzero: Vec<u128> = acc.into_iter().filter(|v| *v != 0).collect();
        nonzero.sort_unstable();
        nonzero.dedup();
        let bad_pow2 = nonzero.iter().any(|v| !v.is_power_of_two());
        if nonzero.len() > 1 || bad_pow2 {
            out.push(format!(
                "{control}: {name} outputs the constants {nonzero:?}: a RegisterAction may \
                 output one nonzero constant, a power of two (bf-p4c drives it from the \
                 predicate); use an enum or a memory value"
            ));
        }
    }
    out
}
