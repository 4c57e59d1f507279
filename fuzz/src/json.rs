//! The `scenario_json` driver: text into the topology and scenario JSON
//! parsers behind `lcmp tables --topology FILE` and `lcmp explain
//! SCENARIO.json` (`lcmp_tables::Topology::from_json`,
//! `lcmp_tables::scenario::Scenario::from_json`), and what parses through
//! the code that runs next.
//!
//! Checks: parsing gives a value or a typed error (its `Display` works),
//! never a panic; a parsed topology yields tables for each of its first DCs
//! (or a typed error) that the core accepts and that survive a blob round
//! trip; a parsed scenario explains under every scheme (or a typed error),
//! and its explanation is consistent (the chosen port is an up candidate,
//! kept candidates are up, the JSON rendering is not empty). Memory and time
//! are bounded by libFuzzer's `-rss_limit_mb`, `-malloc_limit_mb` and
//! `-timeout` (see `scripts/test.d/60-fuzz.sh`).
//!
//! Raw text seldom gets past the JSON grammar, so an input is either text
//! (seeded with the CLI's scenario files and a JSON dictionary) or an
//! arbitrary topology or scenario *value* rendered to JSON, which reaches
//! validation, table building and `explain`.

use arbitrary::Arbitrary;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::{Reason, Scheme};
use lcmp_tables::blob::{decode_blob, encode_blob_vec};
use lcmp_tables::scenario::{
    DcRef, MetricName, Scenario, ScenarioFlow, ScenarioSample, TopologyRef, WeightsPatch,
};
use lcmp_tables::{build_tables, BuildOptions, Dc, Link, PathMetric, Topology};

use crate::input::Bytes;

/// At most this many DCs are built as switches per input.
const MAX_SWITCHES: usize = 8;

/// One `scenario_json` input.
#[derive(Arbitrary, Debug)]
pub enum JsonInput {
    /// Text (invalid UTF-8 is replaced, as a lossy reader would).
    Text(Bytes),
    /// A topology value rendered to JSON.
    Topology(TopologySpec),
    /// A scenario value rendered to JSON.
    Scenario(Box<ScenarioSpec>),
}

/// A topology value.
#[derive(Arbitrary, Debug)]
pub struct TopologySpec {
    /// Use an embedded topology's links and DCs as the start.
    pub embedded: Option<bool>,
    /// DC ids (names are `DC<id>`; a `Some` renames).
    pub dcs: Vec<(u8, Option<String>)>,
    /// Links `(a, b, capacity, delay)`, ends modulo the id space.
    pub links: Vec<(u8, u8, LinkCap, u32)>,
    /// Buffer bytes.
    pub buffer: u64,
}

/// A link capacity.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum LinkCap {
    /// Whole Gbps.
    Gbps(u16),
    /// Anything.
    Raw(u64),
}

impl TopologySpec {
    fn build(&self) -> Topology {
        let mut t = match self.embedded {
            Some(true) => Topology::embedded("testbed8").expect("embedded"),
            Some(false) => Topology::embedded("bso13").expect("embedded"),
            None => Topology {
                name: "fuzz".into(),
                dcs: Vec::new(),
                links: Vec::new(),
                buffer_bytes: self.buffer,
            },
        };
        for (id, name) in &self.dcs {
            let id = u16::from(*id % 32);
            t.dcs.push(Dc {
                id,
                name: name.clone().unwrap_or_else(|| format!("DC{id}")),
            });
        }
        for &(a, b, cap, delay) in &self.links {
            t.links.push(Link {
                a: u16::from(a % 32),
                b: u16::from(b % 32),
                capacity_bps: match cap {
                    LinkCap::Gbps(g) => u64::from(g) * 1_000_000_000,
                    LinkCap::Raw(n) => n,
                },
                delay_us: u64::from(delay),
            });
        }
        t
    }
}

/// A scenario value.
#[derive(Arbitrary, Debug)]
pub struct ScenarioSpec {
    /// `None`: `testbed8` by name; `Some(false)`: `bso13` by name; else inline.
    pub topology: Option<Option<TopologySpec>>,
    /// Switch DC id (or name when `by_name`).
    pub switch: u8,
    /// Destination DC id.
    pub dst: u8,
    /// Refer to DCs by name.
    pub by_name: bool,
    /// Weight overrides.
    pub weights: [Option<u16>; 7],
    /// Shift overrides.
    pub shifts: [Option<u8>; 3],
    /// Seed.
    pub seed: u32,
    /// Scheme (`None`: default).
    pub scheme: Option<u8>,
    /// Path metric instead of first hop.
    pub path_metric: bool,
    /// Samples `(t_us, port, queue)`.
    pub samples: Vec<(u32, u8, u64)>,
    /// Down ports.
    pub down: Vec<u8>,
    /// The flow: IPv6 when set.
    pub v6: bool,
    /// Mixed address families (an error).
    pub mixed: bool,
    /// Flow fields.
    pub flow: (u32, u32, u16, u16, u8),
    /// Now, µs.
    pub now_us: u64,
}

impl ScenarioSpec {
    fn build(&self) -> Scenario {
        let topology = match &self.topology {
            None => TopologyRef::Embedded("testbed8".into()),
            Some(None) => TopologyRef::Embedded("bso13".into()),
            Some(Some(t)) => TopologyRef::Inline(t.build()),
        };
        let dc = |id: u8| {
            if self.by_name {
                DcRef::Name(format!("DC{}", id % 16))
            } else {
                DcRef::Id(u16::from(id % 16))
            }
        };
        let w = self.weights.map(|w| w.map(u32::from));
        let (src, dst, sport, dport, proto) = self.flow;
        let v4 = |x: u32| IpAddr::V4(Ipv4Addr::from_bits(x));
        let v6 = |x: u32| IpAddr::V6(Ipv6Addr::from_bits((0xfd00u128 << 112) | u128::from(x)));
        let (s, d) = match (self.v6, self.mixed) {
            (false, false) => (v4(src), v4(dst)),
            (true, false) => (v6(src), v6(dst)),
            (false, true) => (v4(src), v6(dst)),
            (true, true) => (v6(src), v4(dst)),
        };
        Scenario {
            topology,
            switch: dc(self.switch),
            profile: Default::default(),
            weights: WeightsPatch {
                alpha: w[0],
                beta: w[1],
                w_dl: w[2],
                w_lc: w[3],
                w_ql: w[4],
                w_tl: w[5],
                w_dp: w[6],
                s_path: self.shifts[0],
                s_cong: self.shifts[1],
                s_total: self.shifts[2],
            },
            seed: self.seed,
            scheme: self.scheme.map(scheme),
            metric: if self.path_metric {
                MetricName::Path
            } else {
                MetricName::FirstHop
            },
            samples: self
                .samples
                .iter()
                .map(|&(t_us, port, queue_bytes)| ScenarioSample {
                    t_us: u64::from(t_us),
                    port: port % 16,
                    queue_bytes,
                })
                .collect(),
            down: self.down.iter().map(|p| p % 16).collect(),
            flow: ScenarioFlow {
                src: s,
                dst: d,
                sport,
                dport,
                proto,
            },
            dst_dc: dc(self.dst),
            now_us: self.now_us,
        }
    }
}

/// The scheme of code `i` modulo the number of schemes.
fn scheme(i: u8) -> Scheme {
    let n = Scheme::ALL.len() as u8;
    Scheme::from_code(i % n).unwrap_or_default()
}

/// What one input reached (each count passed its checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Texts that parsed as a topology.
    pub topologies: usize,
    /// Tables built from them that the core accepted and that survived a
    /// blob round trip.
    pub tables: usize,
    /// Texts that parsed as a scenario.
    pub scenarios: usize,
    /// Explanations checked (one per scheme of a scenario that explains).
    pub explanations: usize,
}

impl core::ops::AddAssign for Checked {
    fn add_assign(&mut self, o: Checked) {
        self.topologies += o.topologies;
        self.tables += o.tables;
        self.scenarios += o.scenarios;
        self.explanations += o.explanations;
    }
}

/// Runs one input; returns what it reached.
pub fn run(input: &JsonInput) -> Checked {
    match input {
        JsonInput::Text(Bytes(bytes)) => check_text(&String::from_utf8_lossy(bytes)),
        JsonInput::Topology(t) => {
            let text = serde_json::to_string(&t.build()).expect("topology renders");
            check_text(&text)
        }
        JsonInput::Scenario(s) => {
            let text = serde_json::to_string(&s.build()).expect("scenario renders");
            check_text(&text)
        }
    }
}

/// Both parsers on one text.
pub fn check_text(text: &str) -> Checked {
    let mut c = Checked::default();
    match Topology::from_json(text) {
        Ok(t) => {
            c.topologies += 1;
            c.tables += check_topology(&t);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    match Scenario::from_json(text) {
        Ok(s) => {
            c.scenarios += 1;
            c.explanations += check_scenario(&s);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    c
}

/// Returns how many table sets it built and checked.
fn check_topology(t: &Topology) -> usize {
    let mut built = 0;
    for dc in t.dcs.iter().take(MAX_SWITCHES) {
        for metric in [PathMetric::FirstHop, PathMetric::Path] {
            let opts = BuildOptions {
                metric,
                ..BuildOptions::default()
            };
            let tables = match build_tables(t, dc.id, &opts) {
                Ok(tables) => tables,
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    continue;
                }
            };
            tables
                .compile(MAX_PORTS)
                .expect("built tables are valid for the core");
            let blob = encode_blob_vec(&tables, 1).expect("built tables encode");
            let back = decode_blob(&blob).expect("and decode");
            assert_eq!(back.tables, tables);
            built += 1;
        }
    }
    built
}

/// Returns how many explanations it checked.
fn check_scenario(s: &Scenario) -> usize {
    let mut checked = 0;
    for sch in [None].into_iter().chain(Scheme::ALL.map(Some)) {
        let out = match s.explain(sch) {
            Ok(out) => out,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return checked;
            }
        };
        assert!(!out.to_json().is_empty());
        for c in &out.candidates {
            assert!(!c.kept || c.up, "kept but down: {c:?}");
        }
        match out.chosen_port {
            Some(p) => {
                let c = out.candidates.iter().find(|c| c.port == p);
                assert!(
                    out.reason == Reason::Pinned || c.is_some_and(|c| c.up),
                    "chosen port {p} is not an up candidate: {out:?}"
                );
            }
            None => assert!(matches!(
                out.reason,
                Reason::NoLiveCandidate | Reason::UnknownGroup
            )),
        }
        checked += 1;
    }
    checked
}

#[cfg(test)]
mod test {
    use arbitrary::{Arbitrary, Unstructured};

    const MIN_TOPOLOGIES: usize = 6;
    const MIN_TABLES: usize = 60;
    const MIN_SCENARIOS: usize = 25;
    const MIN_EXPLANATIONS: usize = 60;

    /// Every seed decodes, and together they reach the parsers' success
    /// paths at least this often (the committed corpus: 6 topologies, 70
    /// table sets, 28 scenarios, 68 explanations, rounded down; a corpus
    /// that only reached parse errors fails).
    #[test]
    fn seed_corpus_passes() {
        let (mut decoded, mut total) = (0, super::Checked::default());
        let n = crate::replay_corpus("scenario_json", |data| {
            if let Ok(i) = super::JsonInput::arbitrary_take_rest(Unstructured::new(data)) {
                decoded += 1;
                total += super::run(&i);
            }
        });
        eprintln!("scenario_json seeds: {n} files, {decoded} decode, {total:?}");
        assert!(n >= 50, "{n} seed files");
        assert_eq!(decoded, n, "seeds that do not decode to an input");
        assert!(total.topologies >= MIN_TOPOLOGIES, "{total:?}");
        assert!(total.tables >= MIN_TABLES, "{total:?}");
        assert!(total.scenarios >= MIN_SCENARIOS, "{total:?}");
        assert!(total.explanations >= MIN_EXPLANATIONS, "{total:?}");
    }

    /// The CLI's hand-checked scenarios parse and explain.
    #[test]
    fn cli_scenarios_explain() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../frontends/cli/tests/scenarios");
        let mut n = 0;
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(e.path()).expect("read");
            let s = lcmp_tables::scenario::Scenario::from_json(&text).expect("parses");
            assert_eq!(
                super::check_scenario(&s),
                4,
                "{}: explains under every scheme",
                e.path().display()
            );
            n += 1;
        }
        assert!(n > 0);
    }
}
