//! `bfrt_python` scripts (`run_bfshell.sh -b FILE`): the load of an entry
//! set into empty tables, or an ordered update, one call per write in the
//! order of a [`Plan`] (bfrt_python runs each call to completion before
//! the next, so the order is the order the ASIC sees).
//!
//! Argument names follow bfrt_python's generated methods (open-p4studio
//! `bfrtcli.py`, `_make_core_method_strs`): an exact key is `name=v`, an
//! LPM key adds `name_p_length`, a range key is `name_start`/`name_end`, a
//! ternary key adds `name_mask`, and `$MATCH_PRIORITY` is
//! `MATCH_PRIORITY`, where BF-Runtime ranks a *lower* number first: the
//! P4Runtime priority `p` of a table whose largest priority is `P` becomes
//! `P - p`.

use core::fmt::Write as _;

use crate::model::{Match, Op, Plan, TableEntry};
use crate::schema::{Schema, Table, MAX_PRIORITY};

/// The program name bfrt_python knows the pipeline by.
pub const PROGRAM: &str = "lcmp";

/// Which script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// The load into empty tables (`lcmp_entries.py`).
    Load,
    /// An update of loaded tables (`lcmp_update.py`).
    Update,
}

/// `MATCH_PRIORITY` of a P4Runtime priority: BF-Runtime order, lower
/// first, `MAX_PRIORITY - p` (the model's priorities are
/// `1..=MAX_PRIORITY`, checked when entries are built).
pub fn bfrt_priority(p: u32) -> u32 {
    MAX_PRIORITY.saturating_sub(p)
}

/// The key arguments of an entry, `(name, value)`.
pub fn key_values(t: &Table, e: &TableEntry) -> Vec<(String, u64)> {
    let mut args: Vec<(String, u64)> = Vec::new();
    for (m, k) in e.matches.iter().zip(t.keys) {
        match *m {
            Match::Exact(v) => args.push((k.name.to_string(), v)),
            Match::Lpm { value, prefix_len } => {
                args.push((k.name.to_string(), value));
                args.push((format!("{}_p_length", k.name), u64::from(prefix_len)));
            }
            Match::Ternary { value, mask } => {
                args.push((k.name.to_string(), value));
                args.push((format!("{}_mask", k.name), mask));
            }
            Match::Range { low, high } => {
                args.push((format!("{}_start", k.name), low));
                args.push((format!("{}_end", k.name), high));
            }
        }
    }
    if let Some(p) = e.priority.map(bfrt_priority) {
        args.push(("MATCH_PRIORITY".to_string(), u64::from(p)));
    }
    args
}

/// The key arguments of an entry, as bfrt_python source (`name=0x..`; a
/// prefix length and a priority in decimal).
pub fn key_args(t: &Table, e: &TableEntry) -> Vec<String> {
    key_values(t, e)
        .into_iter()
        .map(|(n, v)| {
            if n.ends_with("_p_length") || n == "MATCH_PRIORITY" {
                format!("{n}={v}")
            } else {
                format!("{n}={v:#x}")
            }
        })
        .collect()
}

/// The bfrt_python call of one write: the method of the table node
/// (`add_with_<action>`, `mod_with_<action>`, `delete`) and its keyword
/// arguments (keys, then action data).
pub fn call(t: &Table, u: &crate::model::Update) -> (String, Vec<(String, u64)>) {
    let mut args = key_values(t, &u.entry);
    let method = match u.op {
        Op::Delete => "delete".to_string(),
        Op::Insert | Op::Modify => {
            if let Some(a) = t.action(u.entry.action) {
                for (p, v) in a.params.iter().zip(&u.entry.params) {
                    args.push((p.name.to_string(), *v));
                }
            }
            let verb = if u.op == Op::Insert { "add" } else { "mod" };
            format!("{verb}_with_{}", u.entry.action)
        }
    };
    (method, args)
}

/// A plan as JSON for the agent (`lcmp_agent.py` applies it in order):
/// `{"phases": [{"what", "ops": [{"table", "method", "args"}]}]}`, where
/// `table` is `Control.table` under `bfrt.lcmp.pipe`.
pub fn plan_json(schema: &Schema, plan: &Plan) -> serde_json::Value {
    let phases: Vec<serde_json::Value> = plan
        .phases
        .iter()
        .map(|phase| {
            let ops: Vec<serde_json::Value> = phase
                .updates
                .iter()
                .filter_map(|u| {
                    let t = schema.table(u.entry.table)?;
                    let (method, args) = call(t, u);
                    let args: serde_json::Map<String, serde_json::Value> = args
                        .into_iter()
                        .map(|(k, v)| (k, serde_json::Value::from(v)))
                        .collect();
                    Some(serde_json::json!({
                        "table": t.full_name(),
                        "method": method,
                        "args": args,
                    }))
                })
                .collect();
            serde_json::json!({ "what": phase.what, "ops": ops })
        })
        .collect();
    serde_json::json!({ "phases": phases })
}

/// The phase that writes the pin cells' safe gap (clock units,
/// `Agent::pin_gap_units`) into every pin register's `RegisterParam`
/// (two, four where the ways are halved: [`crate::halves::gap_params`]):
/// bf-rt.json lists each as a keyless table of type `RegisterParam` with
/// one data field, `value`, set as its default entry.
pub fn pin_gap_phase(schema: &Schema, gap: u32) -> serde_json::Value {
    use crate::schema::Control;
    let ops: Vec<serde_json::Value> = crate::halves::gap_params(schema)
        .iter()
        .map(|p| {
            serde_json::json!({
                "table": format!("{}.{p}", Control::Ingress.name()),
                "method": "set_default",
                "args": { "value": gap },
            })
        })
        .collect();
    serde_json::json!({ "what": "safe gap of the pin cells", "ops": ops })
}

/// The script.
pub fn render(schema: &Schema, plan: &Plan, script: Script) -> String {
    let mut o = String::new();
    let file = match script {
        Script::Load => "lcmp_entries.py",
        Script::Update => "lcmp_update.py",
    };
    let _ = writeln!(
        o,
        "# LCMP table writes, generated by lcmp-tofino. Do not edit."
    );
    let _ = writeln!(o, "# Run on the switch: $SDE/run_bfshell.sh -b {file}");
    match script {
        Script::Load => {
            let _ = writeln!(
                o,
                "# Loads a freshly loaded program's empty LCMP tables; the group entries come\n\
                 # last, so no packet sees a half-written group."
            );
        }
        Script::Update => {
            let _ = writeln!(
                o,
                "# An ordered, hitless update: new buckets before a group's size grows, the\n\
                 # size shrinks before buckets go, ports are marked down last."
            );
        }
    }
    let _ = writeln!(o, "p4 = bfrt.{PROGRAM}.pipe");
    let n = plan.phases.len();
    for (i, phase) in plan.phases.iter().enumerate() {
        let writes = match phase.updates.len() {
            1 => "1 write".to_string(),
            n => format!("{n} writes"),
        };
        let _ = writeln!(o, "\n# Phase {}/{n}: {} ({writes})", i + 1, phase.what);
        for u in &phase.updates {
            let Some(t) = schema.table(u.entry.table) else {
                continue;
            };
            let mut args = key_args(t, &u.entry);
            let (method, _) = call(t, u);
            if let Some(a) = t.action(u.entry.action).filter(|_| u.op != Op::Delete) {
                for (p, v) in a.params.iter().zip(&u.entry.params) {
                    args.push(format!("{}={v:#x}", p.name));
                }
            }
            let _ = writeln!(o, "p4.{}.{method}({})", t.full_name(), args.join(", "));
        }
    }
    let _ = writeln!(o, "\nbfrt.complete_operations()");
    o
}
