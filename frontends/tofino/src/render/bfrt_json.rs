//! BF-Runtime JSON entries, one object per entry in the form bfrt_python's
//! `table.dump(json=True)` writes and `table.add_from_json(...)` reads:
//! `table_name` (`pipe.Control.table`), `action` (`Control.action`), `key`
//! and `data`. An exact key is a number; an LPM key is
//! `{"value", "prefix_len"}`, a range key `{"low", "high"}`, a ternary key
//! `{"value", "mask"}`; a priority is the `$MATCH_PRIORITY` key (BF-Runtime
//! order, lower first, as in [`super::bfrt`]). Register cells are objects
//! with `table_name`, `key` (`$REGISTER_INDEX`) and `data` (`Control.reg.f1`).

use serde_json::{json, Map, Value};

use crate::model::{EntrySet, Match};
use crate::schema::Schema;

/// The JSON document: `{"program": "lcmp", "entries": [...], "registers": [...]}`.
pub fn render(schema: &Schema, entries: &EntrySet) -> String {
    let mut list: Vec<Value> = Vec::new();
    for t in &schema.tables {
        let max_prio = entries
            .entries
            .iter()
            .filter(|e| e.table == t.name)
            .filter_map(|e| e.priority)
            .max()
            .unwrap_or(0);
        for e in entries.entries.iter().filter(|e| e.table == t.name) {
            let mut key = Map::new();
            for (m, k) in e.matches.iter().zip(t.keys) {
                let v = match *m {
                    Match::Exact(v) => json!(v),
                    Match::Lpm { value, prefix_len } => {
                        json!({"value": value, "prefix_len": prefix_len})
                    }
                    Match::Ternary { value, mask } => json!({"value": value, "mask": mask}),
                    Match::Range { low, high } => json!({"low": low, "high": high}),
                };
                key.insert(k.name.to_string(), v);
            }
            if let Some(p) = e.priority {
                key.insert("$MATCH_PRIORITY".to_string(), json!(max_prio - p));
            }
            let mut data = Map::new();
            if let Some(a) = t.action(e.action) {
                for (p, v) in a.params.iter().zip(&e.params) {
                    data.insert(p.name.to_string(), json!(v));
                }
            }
            list.push(json!({
                "table_name": format!("pipe.{}", t.full_name()),
                "action": format!("{}.{}", t.control.name(), e.action),
                "key": key,
                "data": data,
            }));
        }
    }
    let mut regs: Vec<Value> = Vec::new();
    for r in &entries.registers {
        if let Some(reg) = schema.register(r.register) {
            regs.push(json!({
                "table_name": format!("pipe.{}", reg.full_name()),
                "key": { "$REGISTER_INDEX": r.index },
                "data": { format!("{}.f1", reg.full_name()): r.value },
            }));
        }
    }
    let doc = json!({ "program": super::bfrt::PROGRAM, "entries": list, "registers": regs });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
