//! Checks of a generated `lcmp.p4`'s *text* ([`parse`]) for what bf-p4c
//! refused in earlier programs and the text alone shows, cheaply and
//! without the compiler: a register executed twice on one packet path
//! (bf-p4c allows one `execute()` per register per packet), names the
//! program does not declare, assignments whose widths differ (a `bit<16>`
//! into a `PortId_t` without a cast), a `RegisterAction` with more than
//! one nonzero constant output, more than 32 bits of hash results in one
//! action (the immediate pathway), and an assignment that needs more than
//! one ALU operation.
//!
//! Where the compiler places tables and how much memory they take are
//! not modelled here: the stage counts and resources the docs and the
//! program's header state are bf-p4c's own (`compile`, the stamps and the
//! `compiled/<target>/resources.txt` kept beside each golden program).
//! An earlier hand-written stage and resource model (removed by issue 32)
//! was off by one to two stages and nine SRAM blocks against the compiler.

mod checks;
pub mod parse;

use std::collections::BTreeMap;

use crate::model::Target;
use parse::{Expr, ParseError, Stmt, Type};

/// The checks' findings on `p4` for `target` (after its
/// `#if __TARGET_TOFINO__` lines), one line each, in the two MAU controls
/// that `Pipeline(...)` names; empty when the program passes. A program
/// the parser does not read is an error.
pub fn check(p4: &str, target: Target) -> Result<Vec<String>, ParseError> {
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
    let mut out = Vec::new();
    for name in controls {
        let Some(c) = prog.controls.get(name) else {
            return Err(ParseError {
                line: 0,
                message: format!("control {name} is not declared"),
            });
        };
        for (place, body) in std::iter::once(("apply".to_string(), &c.apply)).chain(
            c.actions
                .iter()
                .map(|(a, d)| (format!("action {a}"), &d.body)),
        ) {
            for s in body {
                alu_ops(s, &prog.consts, name, &place, &mut out);
            }
        }
        out.extend(checks::register_paths(c, name));
        out.extend(checks::names_and_widths(&prog, c, name));
        out.extend(checks::immediate_pathway(&prog, c, name));
        out.extend(checks::register_outputs(&prog, c, name));
    }
    Ok(out)
}

/// Flags an assignment that needs more than one ALU operation (one per
/// destination per action: `a = b + c`, not `a = (b << 1) + c + d`; an
/// extern's result counts as a source, like action data).
fn alu_ops(
    s: &Stmt,
    consts: &BTreeMap<String, u128>,
    control: &str,
    place: &str,
    out: &mut Vec<String>,
) {
    match s {
        Stmt::Assign { lhs, rhs, line } => {
            let n = ops(rhs, consts);
            if n > 1 {
                out.push(format!(
                    "{control}: {place}, line {line}: `{}` needs {n} ALU operations in one \
                     action (one per destination per stage): split it or use a table",
                    show(lhs)
                ));
            }
        }
        Stmt::If {
            then, otherwise, ..
        } => {
            for s in then.iter().chain(otherwise) {
                alu_ops(s, consts, control, place, out);
            }
        }
        Stmt::Call { .. } => {}
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

#[cfg(test)]
mod test {
    use super::*;

    const SMALL: &str = r#"
struct p_t { bit<32> lo; bit<32> hi; }
struct m_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<16> i; }
control I(inout m_t meta) {
    Register<p_t, bit<16>>(256) r0;
    RegisterAction<p_t, bit<16>, bit<8>>(r0) a0 = { void apply(inout p_t v, out bit<8> o) { o = 1; } };
    RegisterAction<p_t, bit<16>, bit<8>>(r0) b0 = { void apply(inout p_t v, out bit<8> o) { o = 0; } };
    action set_a(bit<8> x) { meta.a = x; }
    table ta { key = { meta.d : exact; } actions = { set_a; } size = 4; }
    apply {
        ta.apply();
        if (meta.b == 1) { meta.c = a0.execute(meta.i); } else { meta.c = b0.execute(meta.i); }
        meta.d = (meta.a << 1) + meta.b + meta.c;
    }
}
control E(inout m_t meta) { apply { } }
Pipeline(P(), I(), D(), P(), E(), D()) pipe;
"#;

    /// SMALL: one finding, the three-operation assignment; the register's
    /// two actions in the two branches of one `if` are no double execute,
    /// one after the `if` is.
    #[test]
    fn small_findings() {
        let f = check(SMALL, Target::Tofino1).expect("parses");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("3 ALU operations"), "{f:?}");
        let twice = SMALL.replace(
            "        meta.d = (meta.a << 1)",
            "        meta.a = a0.execute(meta.i);\n        meta.d = (meta.a << 1)",
        );
        let f = check(&twice, Target::Tofino2).expect("parses");
        assert_eq!(
            f.iter()
                .filter(|v| v.contains("register r0 is executed twice"))
                .count(),
            2,
            "after each branch: {f:?}"
        );
        assert!(checks::exclusive(
            &[(0, true), (1, true)],
            &[(0, true), (1, false)]
        ));
        assert!(!checks::exclusive(&[(0, true), (1, true)], &[(0, true)]));
        assert!(check("control C() { apply { } }", Target::Tofino1).is_err());
    }

    quickcheck::quickcheck! {
        /// Mangled programs (a window cut out, a byte changed) are parse
        /// errors or findings, never panics.
        fn mangled_programs_never_panic(cut: u16, len: u8, at: u16, byte: u8) -> bool {
            let mut v = SMALL.as_bytes().to_vec();
            let c = usize::from(cut) % v.len();
            let end = (c + usize::from(len)).min(v.len());
            v.drain(c..end);
            if !v.is_empty() {
                let a = usize::from(at) % v.len();
                v[a] = byte % 128;
            }
            let _ = check(&String::from_utf8_lossy(&v), Target::Tofino1);
            true
        }

        /// Spaces added where the program already has one change no
        /// token and no line, so the findings are SMALL's, exactly.
        fn spaces_leave_the_findings_unchanged(at: Vec<u16>) -> bool {
            let want = check(SMALL, Target::Tofino1).expect("parses");
            let spaces: Vec<usize> = SMALL.match_indices(' ').map(|(i, _)| i).collect();
            let mut v = SMALL.to_string();
            let mut picks: Vec<usize> = at
                .iter()
                .filter_map(|a| spaces.get(usize::from(*a) % spaces.len()).copied())
                .collect();
            picks.sort_unstable_by(|a, b| b.cmp(a));
            for i in picks {
                v.insert(i, ' ');
            }
            check(&v, Target::Tofino1).ok() == Some(want)
        }
    }
}
