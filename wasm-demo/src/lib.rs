//! # wasm-demo
//!
//! LCMP in the browser. This crate is the only code behind the page in
//! `wasm-demo/www/`: every number the page shows comes from here, and from
//! here only from the real crates (`lcmp-decide`, `lcmp-tables`,
//! `lcmp-sim`). The page draws; it does no scoring of its own.
//!
//! ## Architecture
//!
//! * [`explain`]: a scenario (the `lcmp explain` schema of `docs/cli.md`)
//!   to the JSON that `lcmp explain` prints, through the same
//!   [`lcmp_tables::scenario::Scenario::explain`].
//! * [`send_flows`]: where `n` new flows of the scenario's switch and
//!   destination land, per port, under LCMP, ECMP and UCMP (each flow
//!   asked of the decider [`lcmp_tables::scenario::Scenario::decider`] sets
//!   up, the one `explain` asks).
//! * [`topology`], [`defaults`]: what the page needs to draw and to start.
//! * [`SimDemo`]: the flow-level simulator (`lcmp sim`, testbed8, DC1 to
//!   DC8) for ECMP, UCMP, LCMP and the tuned LCMP, advanced a slice of
//!   simulated time at a time through [`lcmp_sim::engine::Stepper`], so the
//!   page stays responsive and redraws queues, utilisation and slowdowns as
//!   it runs.
//!
//! Everything crosses the boundary as JSON text; errors are `Err` with a
//! one-line message (a JavaScript exception), never a panic.
//!
//! ## What this crate does not do
//!
//! It does not fetch anything, keep global state, read a clock (the page
//! decides how much simulated time to advance per frame) or use threads.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use core::net::{IpAddr, Ipv4Addr};

use lcmp_decide::{FlowKey, Params, Scheme, Weights};
use lcmp_sim::engine::{EngineConfig, Stepper};
use lcmp_sim::experiment::{paper_window_us, Experiment, LoadReference, SchemeSpec};
use lcmp_sim::rng::Pcg32;
use lcmp_sim::stats::summarise;
use lcmp_sim::traffic::Pairs;
use lcmp_sim::workload::Workload;
use lcmp_tables::replay::flow_key;
use lcmp_tables::scenario::Scenario;
use lcmp_tables::Topology;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// An error for the page: a one-line message.
pub type DemoError = String;

fn js(e: DemoError) -> JsValue {
    JsValue::from_str(&e)
}

fn json<T: Serialize>(v: &T) -> Result<String, DemoError> {
    serde_json::to_string(v).map_err(|e| format!("cannot render JSON: {e}"))
}

/// The paper's weights and cut, for the sliders' starting positions.
#[derive(Serialize)]
struct Defaults {
    weights: Weights,
    cut: u8,
    topologies: [&'static str; 2],
}

/// `{"weights": {...}, "cut": 204, "topologies": ["testbed8", "bso13"]}`.
pub fn defaults_json() -> Result<String, DemoError> {
    json(&Defaults {
        weights: Weights::PAPER,
        cut: Params::PAPER.cut,
        topologies: lcmp_tables::topology::EMBEDDED,
    })
}

/// The paper's weights, the cut and the embedded topology names (JSON).
#[wasm_bindgen]
pub fn defaults() -> Result<String, JsValue> {
    defaults_json().map_err(js)
}

#[derive(Serialize)]
struct PortOut {
    port: u8,
    neighbor: u16,
    capacity_bps: u64,
    delay_us: u64,
}

#[derive(Serialize)]
struct SwitchOut {
    id: u16,
    name: String,
    ports: Vec<PortOut>,
}

#[derive(Serialize)]
struct TopologyOut<'a> {
    topology: &'a Topology,
    switches: Vec<SwitchOut>,
}

fn resolve_topology(spec: &str) -> Result<Topology, DemoError> {
    let spec = spec.trim();
    if let Some(t) = Topology::embedded(spec) {
        return Ok(t);
    }
    if !spec.starts_with('{') {
        return Err(format!(
            "unknown topology {spec:?} (embedded: testbed8, bso13; or paste a topology JSON object)"
        ));
    }
    Topology::from_json(spec).map_err(|e| format!("topology JSON: {e}"))
}

/// The validated topology and each switch's ports (JSON), from an embedded
/// name or a topology JSON text (schema in `docs/tables.md`).
pub fn topology_json(spec: &str) -> Result<String, DemoError> {
    let topo = resolve_topology(spec)?;
    let switches = topo
        .dcs
        .iter()
        .map(|dc| SwitchOut {
            id: dc.id,
            name: dc.name.clone(),
            ports: topo
                .ports(dc.id)
                .iter()
                .filter_map(|p| {
                    let l = topo.links.get(p.link)?;
                    Some(PortOut {
                        port: p.port.0,
                        neighbor: p.neighbor,
                        capacity_bps: l.capacity_bps,
                        delay_us: l.delay_us,
                    })
                })
                .collect(),
        })
        .collect();
    json(&TopologyOut {
        topology: &topo,
        switches,
    })
}

/// See [`topology_json`].
#[wasm_bindgen]
pub fn topology(spec: &str) -> Result<String, JsValue> {
    topology_json(spec).map_err(js)
}

/// `lcmp explain SCENARIO.json`: the same JSON text, from the same code.
pub fn explain_json(scenario: &str) -> Result<String, DemoError> {
    let s = Scenario::from_json(scenario).map_err(|e| format!("scenario: {e}"))?;
    let out = s.explain(None).map_err(|e| format!("scenario: {e}"))?;
    Ok(out.to_json())
}

/// See [`explain_json`].
#[wasm_bindgen]
pub fn explain(scenario: &str) -> Result<String, JsValue> {
    explain_json(scenario).map_err(js)
}

#[derive(Serialize)]
struct PortCount {
    port: u8,
    flows: u32,
}

#[derive(Serialize)]
struct SchemeCounts {
    scheme: Scheme,
    ports: Vec<PortCount>,
    no_route: u32,
}

/// Most flows [`send_flows`] sends per scheme.
pub const MAX_SEND: u32 = 100_000;

/// The `i`-th random flow of `seed`: the scenario's addresses' families,
/// random hosts in the scenario's /24s, random source port, the scenario's
/// destination port and protocol.
fn random_flow(s: &Scenario, rng: &mut Pcg32) -> Option<FlowKey> {
    let f = &s.flow;
    let host = |a: IpAddr, r: u32| match a {
        IpAddr::V4(v) => {
            let o = v.octets();
            IpAddr::V4(Ipv4Addr::new(o[0], o[1], o[2], (r % 254 + 1) as u8))
        }
        IpAddr::V6(v) => IpAddr::V6((v.to_bits() & !0xffff | u128::from(r & 0xffff)).into()),
    };
    let src = host(f.src, rng.next_u32());
    let dst = host(f.dst, rng.next_u32());
    let sport = (rng.next_u32() % 16384 + 49152) as u16;
    flow_key(src, dst, sport, f.dport, f.proto)
}

/// Where `n` new flows land, per port, under LCMP, ECMP and UCMP: each
/// flow asked of a decider in the scenario's state. Flows are random
/// (seeded by `seed`) hosts and source ports around the scenario's flow.
pub fn send_flows_json(scenario: &str, n: u32, seed: u32) -> Result<String, DemoError> {
    if n > MAX_SEND {
        return Err(format!("send at most {MAX_SEND} flows"));
    }
    let s = Scenario::from_json(scenario).map_err(|e| format!("scenario: {e}"))?;
    let mut out = Vec::new();
    // The page's order: the core's (LCMP, ECMP, UCMP).
    for scheme in Scheme::ALL {
        // What `Scenario::explain` asks, in its order of errors.
        let sd = s
            .decider(Some(scheme))
            .map_err(|e| format!("scenario: {e}"))?;
        let own = s.flow.key().map_err(|e| format!("scenario: {e}"))?;
        let (d, group, now) = (&sd.decider, sd.group, sd.now);
        let e = d.explain(now, &own, group);
        let mut ports: Vec<PortCount> = e
            .candidates
            .iter()
            .map(|c| PortCount {
                port: c.port.0,
                flows: 0,
            })
            .collect();
        let mut no_route = 0;
        let mut rng = Pcg32::new(u64::from(seed), 7);
        for _ in 0..n {
            let key = random_flow(&s, &mut rng).ok_or("the flow mixes IPv4 and IPv6")?;
            match d.explain(now, &key, group).chosen {
                Some(p) => {
                    if let Some(pc) = ports.iter_mut().find(|pc| pc.port == p.0) {
                        pc.flows += 1;
                    }
                }
                None => no_route += 1,
            }
        }
        out.push(SchemeCounts {
            scheme,
            ports,
            no_route,
        });
    }
    json(&out)
}

/// See [`send_flows_json`].
#[wasm_bindgen]
pub fn send_flows(scenario: &str, n: u32, seed: u32) -> Result<String, JsValue> {
    send_flows_json(scenario, n, seed).map_err(js)
}

/// One scheme's run in a [`SimDemo`].
struct SimRun {
    name: &'static str,
    stepper: Stepper,
}

/// The simulator on testbed8, flows DC1 -> DC8 (the `lcmp sim` default
/// regime: load relative to 16 x 100 Gbps NICs), one run each for ECMP,
/// UCMP, LCMP and the tuned profile's LCMP on the same flows, advanced
/// together.
#[wasm_bindgen]
pub struct SimDemo {
    runs: Vec<SimRun>,
    window_us: f64,
    src: u16,
    dst: u16,
}

#[derive(Serialize)]
struct PathOut {
    via: String,
    port: u8,
    capacity_gbps: f64,
    queue_bytes: u64,
    queue_bytes_2nd: u64,
    buffer_bytes: u64,
    utilisation: f64,
    flows: u64,
}

#[derive(Serialize)]
struct RunOut {
    scheme: &'static str,
    now_us: f64,
    running: bool,
    flows: usize,
    completed: usize,
    p50: f64,
    p99: f64,
    paths: Vec<PathOut>,
}

#[derive(Serialize)]
struct SnapshotOut {
    window_us: f64,
    runs: Vec<RunOut>,
}

impl SimDemo {
    /// A new demo: `load` of the NICs (0 < load <= 1), arrival window
    /// `window_ms` (0 = the paper artifact's window for the load), traffic
    /// `seed`, workload `websearch`, `fbhadoop` or `alistorage`.
    pub fn create(
        load: f64,
        window_ms: f64,
        seed: u32,
        workload: &str,
    ) -> Result<SimDemo, DemoError> {
        if !(load > 0.0 && load <= 1.0) {
            return Err("load: give a value in (0, 1]".into());
        }
        if !(0.0..=200.0).contains(&window_ms) {
            return Err("window: give 0 (paper) to 200 ms".into());
        }
        let window_us = if window_ms > 0.0 {
            window_ms * 1000.0
        } else {
            paper_window_us(load)
        };
        let topology = Topology::embedded("testbed8").ok_or("testbed8 is missing")?;
        let wl = Workload::embedded(workload).ok_or_else(|| {
            format!("unknown workload {workload:?} (websearch, fbhadoop, alistorage)")
        })?;
        let (src, dst) = (1, 8);
        // The paper's LCMP and the tuned profile side by side.
        let schemes = vec![
            SchemeSpec::Ecmp,
            SchemeSpec::Ucmp,
            SchemeSpec::Lcmp,
            SchemeSpec::LcmpTuned,
        ];
        let exp = Experiment {
            topology,
            workload: wl,
            pairs: Pairs::One { src, dst },
            reference: LoadReference::Nic,
            loads: vec![load],
            windows_us: vec![window_us],
            schemes,
            seeds: vec![u64::from(seed)],
            tables: Experiment::default_tables(),
            sports: lcmp_sim::traffic::SourcePorts::Random,
            engine: EngineConfig::default(),
            focus: None,
            pair_flows: None,
            bins: 1,
        };
        exp.validate().map_err(|e| e.to_string())?;
        let flows = exp.flows(0, u64::from(seed));
        let mut runs = Vec::new();
        // As `Experiment::run`: each scheme's network and run settings.
        for (spec, scheme, net) in exp.networks().map_err(|e| e.to_string())? {
            let mut cfg = exp.run_config(0, scheme, u64::from(seed));
            // The browser's memory: the 32 768-slot caches of before the
            // per-workload sizing (up to 96 MiB a switch).
            cfg.flow_slots = Some(lcmp_sim::dci::MIN_FLOW_SLOTS);
            runs.push(SimRun {
                name: spec.name(),
                stepper: Stepper::new(net, cfg, flows.clone(), window_us)
                    .map_err(|e| e.to_string())?,
            });
        }
        Ok(SimDemo {
            runs,
            window_us,
            src,
            dst,
        })
    }

    /// Advances every run by `ms` of simulated time (bounded work: at most
    /// `ms / dt` steps each). Returns whether any run goes on.
    pub fn step_ms(&mut self, ms: f64) -> bool {
        let ms = if ms.is_finite() {
            ms.clamp(0.0, 1000.0)
        } else {
            0.0
        };
        let mut any = false;
        for r in &mut self.runs {
            let until = r.stepper.now_us() + ms * 1000.0;
            any |= r.stepper.advance(until);
        }
        any
    }

    /// Queues, utilisation and slowdowns so far (JSON).
    pub fn snapshot_json(&self) -> Result<String, DemoError> {
        let mut runs = Vec::new();
        for r in &self.runs {
            let s = &r.stepper;
            let net = s.network();
            let out = s.output();
            let res = summarise(
                net,
                s.specs(),
                &out,
                None,
                self.window_us,
                1,
                (r.name, 0.0, 0),
                0.0,
            );
            let queues = s.queue_bytes();
            let elapsed_s = (s.now_us().min(self.window_us) * 1e-6).max(1e-9);
            let si = net.index(self.src).ok_or("no source switch")?;
            let mut paths = Vec::new();
            for (port, link) in net.port_links.get(si).into_iter().flatten().enumerate() {
                let Some(li) = *link else { continue };
                let Some(l) = net.links.get(li) else { continue };
                // The second hop towards the destination, if the neighbour
                // is not the destination itself.
                let second = net
                    .links
                    .iter()
                    .position(|m| m.from == l.to && m.to == self.dst);
                let st = out.links.get(li).cloned().unwrap_or_default();
                paths.push(PathOut {
                    via: net.name(l.to),
                    port: port as u8,
                    capacity_gbps: l.capacity_bps as f64 / 1e9,
                    queue_bytes: queues.get(li).copied().unwrap_or(0),
                    queue_bytes_2nd: second.and_then(|m| queues.get(m).copied()).unwrap_or(0),
                    buffer_bytes: l.buffer_bytes,
                    utilisation: st.served_in_window as f64 * 8.0
                        / (l.capacity_bps as f64 * elapsed_s),
                    flows: st.flows,
                });
            }
            runs.push(RunOut {
                scheme: r.name,
                now_us: s.now_us(),
                running: s.running(),
                flows: res.flows,
                completed: res.completed,
                p50: res.p50,
                p99: res.p99,
                paths,
            });
        }
        json(&SnapshotOut {
            window_us: self.window_us,
            runs,
        })
    }
}

#[wasm_bindgen]
impl SimDemo {
    /// See [`SimDemo::create`].
    #[wasm_bindgen(constructor)]
    pub fn new(load: f64, window_ms: f64, seed: u32, workload: &str) -> Result<SimDemo, JsValue> {
        SimDemo::create(load, window_ms, seed, workload).map_err(js)
    }

    /// See [`SimDemo::step_ms`].
    pub fn advance(&mut self, ms: f64) -> bool {
        self.step_ms(ms)
    }

    /// See [`SimDemo::snapshot_json`].
    pub fn snapshot(&self) -> Result<String, JsValue> {
        self.snapshot_json().map_err(js)
    }
}
