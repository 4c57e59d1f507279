//! `lcmp_agent.py`: the agent a Tofino engineer runs on the switch CPU in
//! bfrt_python, generated for one switch: the traffic-manager queue
//! poller (`usage_cells` per device port, `tfN.tm.counter.eg_port`), the
//! port-state poll, the pin-failure digest handler, and the ordered,
//! hitless writes the decision core (`lcmp tofino agent`, a child process
//! fed one poll per line) returns; `--dry-run TRACE.json` replays polls
//! and prints the bfrt calls instead of making them.

use crate::model::{Agent, Target};
use crate::schema::{names, pin_event, Control, Reason, PIN_FAIL_FIELDS};

/// The counters the agent reads and prints, with the cells it reads:
/// `{what: (Control.counter, [index, ...])}`: every reason, every pin
/// event, and each LCMP device port and the CPU port.
fn counters(agent: &Agent) -> String {
    let schema = agent.program().schema();
    let name = |n: &str| {
        schema
            .counters
            .iter()
            .find(|c| c.name == n)
            .map(|c| c.full_name())
            .unwrap_or_default()
    };
    let mut ports: Vec<u64> = agent
        .tables()
        .ports
        .iter()
        .map(|p| agent.dev_port(p.id))
        .collect();
    let opts = agent.options();
    ports.push(u64::from(
        opts.cpu_port.unwrap_or(opts.target.pcie_cpu_port()),
    ));
    ports.sort_unstable();
    ports.dedup();
    let list = |v: Vec<String>| format!("[{}]", v.join(", "));
    format!(
        "{{\n    \"not forwarded\": (\"{}\", {}),\n    \"pins\": (\"{}\", {}),\n    \"tx\": (\"{}\", {}),\n}}",
        name(names::CTR_EXCEPTIONS),
        list(Reason::ALL.iter().map(|r| r.code().to_string()).collect()),
        name(names::CTR_PIN_EVENTS),
        list(
            (0..pin_event::CELLS as u8)
                .filter(|i| pin_event::name(*i).is_some())
                .map(|i| i.to_string())
                .collect()
        ),
        name(names::CTR_PORT_TX),
        list(ports.iter().map(u64::to_string).collect()),
    )
}

const TEMPLATE: &str = include_str!("templates/lcmp_agent.py.in");

/// The script for `agent`, whose core runs as `core` (a command line).
pub fn render(agent: &Agent, core: &str) -> String {
    let target = agent.options().target;
    let dev_ports: Vec<String> = agent
        .tables()
        .ports
        .iter()
        .map(|p| format!("{}: {}", p.id.0, agent.dev_port(p.id)))
        .collect();
    let fields: Vec<String> = PIN_FAIL_FIELDS
        .iter()
        .map(|f| format!("\"{}\"", f.name))
        .collect();
    // Each table's key fields and match kinds (the agent turns its load
    // into writes from what a restarted switch holds).
    let schema = agent.program().schema();
    let keys: Vec<String> = schema
        .tables
        .iter()
        .map(|t| {
            let mut fields: Vec<String> = t
                .keys
                .iter()
                .map(|k| format!("(\"{}\", \"{}\")", k.name, k.kind.p4()))
                .collect();
            if t.needs_priority() {
                fields.push("(\"$MATCH_PRIORITY\", \"exact\")".to_string());
            }
            format!("\"{}\": [{}]", t.full_name(), fields.join(", "))
        })
        .collect();
    let subs = [
        ("PROGRAM", super::bfrt::PROGRAM.to_string()),
        ("TM_TABLE", target.tm_counter_table().to_string()),
        ("CELL_BYTES", target.cell_bytes().to_string()),
        ("DEV_PORTS", format!("{{{}}}", dev_ports.join(", "))),
        (
            "DIGEST",
            format!(
                "{}.{}",
                Control::IngressDeparser.name(),
                names::DIGEST_PIN_FAIL
            ),
        ),
        ("DIGEST_FIELDS", format!("[{}]", fields.join(", "))),
        ("CORE", core.to_string()),
        (
            "METER",
            format!("{}.{}", Control::Ingress.name(), names::METER_DIGEST),
        ),
        (
            "TABLE_KEYS",
            format!("{{\n    {},\n}}", keys.join(",\n    ")),
        ),
        ("COUNTERS", counters(agent)),
        (
            "REASONS",
            format!(
                "{{{}}}",
                Reason::ALL
                    .iter()
                    .map(|r| format!("{}: \"{}\"", r.code(), r.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "PIN_EVENTS",
            format!(
                "{{{}}}",
                (0..pin_event::CELLS as u8)
                    .filter_map(|i| pin_event::name(i).map(|n| format!("{i}: \"{n}\"")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "PERIOD_S",
            match target {
                Target::Tofino1 | Target::Tofino2 => "0.01".to_string(),
            },
        ),
    ];
    let mut o = TEMPLATE.to_string();
    for (k, v) in subs {
        o = o.replace(&format!("@@{k}@@"), &v);
    }
    o
}

#[cfg(test)]
mod test {
    #[test]
    fn every_placeholder_is_filled() {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("topology");
        let cfg =
            lcmp_decide::DeciderConfig::default().with_hash(lcmp_decide::HashAlgorithm::Crc32);
        let agent = crate::cli::agent_for(&topo, "DC1", cfg, Default::default()).expect("agent");
        let text = super::render(&agent, "lcmp tofino agent --topology testbed8 --switch DC1");
        assert!(!text.contains("@@"), "unfilled placeholder");
        assert!(text.contains("TM_TABLE = \"tf1.tm.counter.eg_port\""));
        assert!(text.contains("DIGEST = \"LcmpIngressDeparser.pin_fail\""));
        assert!(text.contains("DEV_PORTS = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5}"));
    }
}
