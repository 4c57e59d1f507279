//! BF-Runtime JSON: per table, the list that bfrt_python's
//! `table.add_from_json(json_text)` reads, in the form `table.dump(json=True)`
//! writes (open-p4studio `bfrtcli.py` `add_from_json`, `bfrtTable.py`
//! `raw_entry` and `parse_str_input`): each entry has `table_name`
//! (`pipe.Control.table`), `action` (`Control.action`), `key` and `data`.
//! An exact key is a number; LPM, range and ternary keys are two-element
//! lists (`[value, prefix_len]`, `[low, high]`, `[value, mask]`), and a
//! priority is the exact key `$MATCH_PRIORITY` (BF-Runtime order, lower
//! first, as in [`super::bfrt`]).
//!
//! `add_from_json` adds every entry of its list to the table it is called
//! on, so the document keeps one list per table, in load order:
//! `{"program": "lcmp", "tables": [{"table": ..., "entries": [...]}]}`.

use serde_json::{json, Map, Value};

use crate::model::{Match, Op, Plan};
use crate::schema::Schema;

/// The JSON document of a load plan (inserts only; other writes are
/// skipped, `add_from_json` only adds).
pub fn render(schema: &Schema, plan: &Plan) -> String {
    let mut tables: Vec<(String, Vec<Value>)> = Vec::new();
    for u in plan.updates().filter(|u| u.op == Op::Insert) {
        let e = &u.entry;
        let Some(t) = schema.table(e.table) else {
            continue;
        };
        let mut key = Map::new();
        for (m, k) in e.matches.iter().zip(t.keys) {
            let v = match *m {
                Match::Exact(v) => json!(v),
                Match::Lpm { value, prefix_len } => json!([value, prefix_len]),
                Match::Ternary { value, mask } => json!([value, mask]),
                Match::Range { low, high } => json!([low, high]),
            };
            key.insert(k.name.to_string(), v);
        }
        if let Some(p) = e.priority {
            key.insert(
                "$MATCH_PRIORITY".to_string(),
                json!(super::bfrt::bfrt_priority(p)),
            );
        }
        let mut data = Map::new();
        if let Some(a) = t.action(e.action) {
            for (p, v) in a.params.iter().zip(&e.params) {
                data.insert(p.name.to_string(), json!(v));
            }
        }
        let name = format!("pipe.{}", t.full_name());
        let entry = json!({
            "table_name": name,
            "action": format!("{}.{}", t.control.name(), e.action),
            "key": key,
            "data": data,
        });
        match tables.last_mut() {
            Some((n, list)) if *n == name => list.push(entry),
            _ => tables.push((name, vec![entry])),
        }
    }
    let tables: Vec<Value> = tables
        .into_iter()
        .map(|(table, entries)| json!({ "table": table, "entries": entries }))
        .collect();
    let doc = json!({ "program": super::bfrt::PROGRAM, "tables": tables });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
