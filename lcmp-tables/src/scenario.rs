//! The `lcmp explain` scenario: a topology, a switch, congestion state and
//! one flow, turned into the core's [`lcmp_decide::Explanation`] of the
//! decision it would make (schema in `docs/cli.md`).
//!
//! [`Scenario::decider`] builds the switch's tables with
//! [`crate::build_tables`] (first-hop metric unless `metric` says `path`,
//! weights patched), installs them into a [`crate::replay::ReplayDecider`]
//! with the given seed and scheme, applies the samples in order (each at its
//! own `t_us`) and marks the `down` ports down; [`Scenario::explain`] then
//! asks [`lcmp_decide::Decider::explain`] at `now_us` for the scenario's
//! flow. Frontends that ask more of the same state (the wasm demo's flows)
//! start from [`Scenario::decider`] too.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

use lcmp_decide::{
    CandidateExplanation, CutReason, DeciderConfig, Explanation, FlowKey, GroupId, Instant, PortId,
    Profile, Reason, Scheme, Weights,
};
use serde::{Deserialize, Serialize};

use crate::build::{build_tables, BuildOptions, PathMetric};
use crate::error::{Count, TablesError, TopologyError, TraceError};
use crate::replay::{flow_key, ReplayDecider};
use crate::topology::{SwitchPort, Topology};

/// Longest scenario file accepted, bytes.
pub const MAX_SCENARIO_JSON: usize = 4 << 20;
/// Most samples a scenario may list.
pub const MAX_SCENARIO_SAMPLES: usize = 1 << 20;

/// A topology given by embedded name or inline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TopologyRef {
    /// `"testbed8"` or `"bso13"`.
    Embedded(String),
    /// A full topology object.
    Inline(Topology),
}

impl TopologyRef {
    /// Resolves and validates the topology.
    pub fn resolve(&self) -> Result<Topology, TablesError> {
        let t = match self {
            TopologyRef::Embedded(name) => {
                Topology::embedded(name).ok_or(TopologyError::UnknownTopology)?
            }
            TopologyRef::Inline(t) => t.clone(),
        };
        t.validate()?;
        Ok(t)
    }
}

/// A DC given by name (`"DC8"`) or id (`8`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DcRef {
    /// By id.
    Id(u16),
    /// By name (or id written as a string).
    Name(String),
}

impl DcRef {
    /// The DC id in `topo`.
    pub fn resolve(&self, topo: &Topology) -> Result<u16, TopologyError> {
        match self {
            DcRef::Id(id) => topo
                .dc(*id)
                .map(|d| d.id)
                .ok_or(TopologyError::UnknownDc(*id)),
            DcRef::Name(name) => topo.dc_id(name).ok_or(TopologyError::UnknownDcName),
        }
    }
}

/// Weights to override; a field left out keeps the paper's default, and 0
/// is a valid weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsPatch {
    /// `α` of Eq. 1.
    pub alpha: Option<u32>,
    /// `β` of Eq. 1.
    pub beta: Option<u32>,
    /// `w_dl` of Eq. 2.
    pub w_dl: Option<u32>,
    /// `w_lc` of Eq. 2.
    pub w_lc: Option<u32>,
    /// `w_ql` of Eq. 4.
    pub w_ql: Option<u32>,
    /// `w_tl` of Eq. 4.
    pub w_tl: Option<u32>,
    /// `w_dp` of Eq. 4.
    pub w_dp: Option<u32>,
    /// `S_path` of Eq. 2.
    pub s_path: Option<u8>,
    /// `S_cong` of Eq. 5.
    pub s_cong: Option<u8>,
    /// `S_total` of Eq. 1.
    pub s_total: Option<u8>,
}

impl WeightsPatch {
    /// `base` with the given fields replaced.
    pub fn apply(&self, base: Weights) -> Weights {
        Weights::PAPER
            .with_alpha(self.alpha.unwrap_or(base.alpha))
            .with_beta(self.beta.unwrap_or(base.beta))
            .with_w_dl(self.w_dl.unwrap_or(base.w_dl))
            .with_w_lc(self.w_lc.unwrap_or(base.w_lc))
            .with_w_ql(self.w_ql.unwrap_or(base.w_ql))
            .with_w_tl(self.w_tl.unwrap_or(base.w_tl))
            .with_w_dp(self.w_dp.unwrap_or(base.w_dp))
            .with_s_path(self.s_path.unwrap_or(base.s_path))
            .with_s_cong(self.s_cong.unwrap_or(base.s_cong))
            .with_s_total(self.s_total.unwrap_or(base.s_total))
    }
}

/// One queue sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSample {
    /// Time, microseconds.
    pub t_us: u64,
    /// Port.
    pub port: u8,
    /// Queue depth, bytes.
    pub queue_bytes: u64,
}

/// The flow to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFlow {
    /// Source address (IPv4 or IPv6).
    pub src: IpAddr,
    /// Destination address (same family).
    pub dst: IpAddr,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol number.
    pub proto: u8,
}

impl ScenarioFlow {
    /// The flow's key ([`crate::replay::flow_key`]).
    pub fn key(&self) -> Result<FlowKey, TraceError> {
        flow_key(self.src, self.dst, self.sport, self.dport, self.proto)
            .ok_or(TraceError::MixedAddressFamilies)
    }
}

/// The path metric, as written in a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricName {
    /// `first-hop`.
    #[default]
    FirstHop,
    /// `path`.
    Path,
}

/// A scenario file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The topology.
    pub topology: TopologyRef,
    /// The deciding switch.
    pub switch: DcRef,
    /// Parameter profile (default `paper`), which the weight overrides
    /// then change.
    #[serde(default)]
    pub profile: Profile,
    /// Weight overrides.
    #[serde(default)]
    pub weights: WeightsPatch,
    /// ECMP hash seed (default 0).
    #[serde(default)]
    pub seed: u32,
    /// Scheme (default `lcmp`; the command line's `--scheme` wins).
    #[serde(default)]
    pub scheme: Option<Scheme>,
    /// Path metric (default `first-hop`).
    #[serde(default)]
    pub metric: MetricName,
    /// Queue samples, applied in order.
    #[serde(default)]
    pub samples: Vec<ScenarioSample>,
    /// Ports that are down.
    #[serde(default)]
    pub down: Vec<u8>,
    /// The flow.
    pub flow: ScenarioFlow,
    /// Its destination DC (route group).
    pub dst_dc: DcRef,
    /// When the decision is explained, microseconds.
    #[serde(default)]
    pub now_us: u64,
}

/// One candidate in the output: the core's [`CandidateExplanation`] with
/// the neighbour behind its port.
///
/// Not a `#[serde(flatten)]` of the core's type: that would write the
/// neighbour after the core's fields, not second, and the JSON is kept
/// byte for byte; [`CandidateOut::new`] destructures the core's type
/// exhaustively instead, so a new core field does not compile until it
/// is placed here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CandidateOut {
    /// Egress port.
    pub port: u8,
    /// Neighbour DC id.
    pub neighbor: Option<u16>,
    /// Whether the port is up.
    pub up: bool,
    /// Alg. 1.
    pub delay_score: u8,
    /// Alg. 2.
    pub cap_score: u8,
    /// Eq. 2.
    pub c_path: u8,
    /// Queue level score.
    pub q: u8,
    /// Trend level score.
    pub t: u8,
    /// Duration penalty.
    pub d: u8,
    /// Eq. 4-5.
    pub c_cong: u8,
    /// Eq. 1.
    pub cost: u8,
    /// Rank among live candidates by `(cost, port)`.
    pub rank: Option<u8>,
    /// In the kept set.
    pub kept: bool,
    /// Why not kept.
    pub cut_reason: Option<CutReason>,
}

impl CandidateOut {
    /// `c` with `neighbor`, the DC behind its port.
    pub fn new(c: &CandidateExplanation, neighbor: Option<u16>) -> CandidateOut {
        let CandidateExplanation {
            port,
            up,
            delay_score,
            cap_score,
            c_path,
            q,
            t,
            d,
            c_cong,
            cost,
            rank,
            kept,
            cut_reason,
        } = *c;
        CandidateOut {
            port: port.0,
            neighbor,
            up,
            delay_score,
            cap_score,
            c_path,
            q,
            t,
            d,
            c_cong,
            cost,
            rank,
            kept,
            cut_reason,
        }
    }
}

/// What `lcmp explain` prints: the core's [`Explanation`] with the
/// switch, DC ids, neighbours and the reason in words.
///
/// Not a `#[serde(flatten)]` of the core's type either: the output names
/// the group `dst_dc` and the ports `pinned_port`, `chosen_port`, and
/// interleaves its own fields, all kept byte for byte;
/// [`ExplainOutput::new`] destructures the core's type exhaustively.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExplainOutput {
    /// The scheme that decided.
    pub scheme: Scheme,
    /// The switch (DC id).
    pub switch: u16,
    /// The destination DC id (= group id).
    pub dst_dc: u16,
    /// Every candidate of the group, in installation (port) order.
    pub candidates: Vec<CandidateOut>,
    /// The flow's ECMP hash.
    pub hash: u32,
    /// The port the flow is pinned to, if any (always null here: the
    /// scenario has no earlier packets).
    pub pinned_port: Option<u8>,
    /// The chosen port, null when there is no route.
    pub chosen_port: Option<u8>,
    /// The neighbour behind the chosen port.
    pub chosen_neighbor: Option<u16>,
    /// Why.
    pub reason: Reason,
    /// Why, in words.
    pub reason_text: &'static str,
}

impl Scenario {
    /// Parses a scenario (at most [`MAX_SCENARIO_JSON`] bytes).
    pub fn from_json(text: &str) -> Result<Scenario, TablesError> {
        if text.len() > MAX_SCENARIO_JSON {
            return Err(TablesError::InputTooLarge {
                len: text.len(),
                max: MAX_SCENARIO_JSON,
            });
        }
        let s: Scenario = serde_json::from_str(text)?;
        if s.samples.len() > MAX_SCENARIO_SAMPLES {
            return Err(TablesError::TooMany {
                what: Count::Events,
                count: s.samples.len() as u64,
            });
        }
        Ok(s)
    }

    /// The table-building options of the scenario: its profile, weight
    /// overrides and path metric.
    pub fn build_options(&self) -> BuildOptions {
        let mut opts = BuildOptions::for_profile(self.profile);
        opts.params.weights = self.weights.apply(opts.params.weights);
        opts.metric = match self.metric {
            MetricName::FirstHop => PathMetric::FirstHop,
            MetricName::Path => PathMetric::Path,
        };
        opts
    }

    /// A decider in the scenario's state: the switch's tables built and
    /// installed with the scenario's seed and scheme (`scheme` overrides the
    /// file's), the samples applied in order and the `down` ports marked
    /// down.
    ///
    /// ```
    /// # use lcmp_tables::scenario::Scenario;
    /// let s = Scenario::from_json(r#"{"topology":"testbed8","switch":"DC1",
    ///   "flow":{"src":"10.0.0.1","dst":"10.0.7.1","sport":1,"dport":2,"proto":17},
    ///   "dst_dc":"DC8","down":[0]}"#).unwrap();
    /// let d = s.decider(None).unwrap();
    /// let e = d.decider.explain(d.now, &s.flow.key().unwrap(), d.group);
    /// assert_eq!(e.candidates.len(), 6);
    /// assert!(!e.candidates[0].up);
    /// assert_eq!(d.neighbor(lcmp_decide::PortId(0)), Some(2));
    /// ```
    pub fn decider(&self, scheme: Option<Scheme>) -> Result<ScenarioDecider, TablesError> {
        let topo = self.topology.resolve()?;
        let switch = self.switch.resolve(&topo)?;
        let dst = self.dst_dc.resolve(&topo)?;
        let tables = build_tables(&topo, switch, &self.build_options())?;
        let config = DeciderConfig::default()
            .with_scheme(scheme.or(self.scheme).unwrap_or_default())
            .with_seed(self.seed);
        let mut decider = Box::new(ReplayDecider::new(config));
        decider.install(&tables)?;
        let ports = topo.ports(switch);
        let known = |p: u8| {
            if ports.iter().any(|sp| sp.port.0 == p) {
                Ok(PortId(p))
            } else {
                Err(TopologyError::NoSuchPort(p))
            }
        };
        for s in &self.samples {
            decider.sample(
                crate::time::instant(&tables.params, s.t_us),
                known(s.port)?,
                s.queue_bytes,
            )?;
        }
        for &p in &self.down {
            decider.set_port_up(known(p)?, false)?;
        }
        Ok(ScenarioDecider {
            decider,
            switch,
            ports,
            group: GroupId(dst),
            now: crate::time::instant(&tables.params, self.now_us),
        })
    }

    /// Runs the scenario: the explanation of its flow's decision by
    /// [`Scenario::decider`]; `scheme` overrides the file's.
    pub fn explain(&self, scheme: Option<Scheme>) -> Result<ExplainOutput, TablesError> {
        let d = self.decider(scheme)?;
        let key = self.flow.key()?;
        let e = d.decider.explain(d.now, &key, d.group);
        Ok(ExplainOutput::new(&d, &e))
    }
}

/// A scenario's decider, ready to decide (see [`Scenario::decider`]).
pub struct ScenarioDecider {
    /// The decider: tables installed, samples applied, down ports down.
    pub decider: Box<ReplayDecider>,
    /// The deciding switch (DC id).
    pub switch: u16,
    /// The switch's ports ([`Topology::ports`]).
    pub ports: Vec<SwitchPort>,
    /// The destination's route group (its DC id).
    pub group: GroupId,
    /// The scenario's `now_us`, as the core's time.
    pub now: Instant,
}

impl ScenarioDecider {
    /// The neighbour DC behind `port`, if the switch has that port.
    pub fn neighbor(&self, port: PortId) -> Option<u16> {
        self.ports
            .iter()
            .find(|sp| sp.port == port)
            .map(|sp| sp.neighbor)
    }
}

impl ExplainOutput {
    /// The output for explanation `e` of decider `d`.
    pub fn new(d: &ScenarioDecider, e: &Explanation) -> ExplainOutput {
        let Explanation {
            scheme,
            group,
            candidates,
            hash,
            pinned,
            chosen,
            reason,
        } = e;
        ExplainOutput {
            scheme: *scheme,
            switch: d.switch,
            dst_dc: group.0,
            candidates: candidates
                .iter()
                .map(|c| CandidateOut::new(c, d.neighbor(c.port)))
                .collect(),
            hash: *hash,
            pinned_port: pinned.map(|p| p.0),
            chosen_port: chosen.map(|p| p.0),
            chosen_neighbor: chosen.and_then(|p| d.neighbor(p)),
            reason: *reason,
            reason_text: reason.describe(),
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::error::JsonError;

    const BASE: &str = r#"{"topology":"testbed8","switch":"DC1",
        "flow":{"src":"10.0.0.1","dst":"10.0.7.1","sport":1000,"dport":4791,"proto":17},
        "dst_dc":"DC8"}"#;

    #[test]
    fn parses_minimal_and_runs() {
        let s = Scenario::from_json(BASE).expect("parse");
        assert_eq!(s.seed, 0);
        let out = s.explain(None).expect("explain");
        assert_eq!(out.candidates.len(), 6);
        assert_eq!(out.switch, 1);
        assert_eq!(out.dst_dc, 8);
        assert!(out.chosen_port.is_some());
    }

    /// [`BASE`] with quickcheck's samples and down ports (ports 0..8).
    fn with_state(samples: &[(u64, u8, u64)], down: &[u8]) -> Scenario {
        let mut s = Scenario::from_json(BASE).expect("parse");
        s.samples = samples
            .iter()
            .map(|&(t_us, port, queue_bytes)| ScenarioSample {
                t_us,
                port: port % 8,
                queue_bytes,
            })
            .collect();
        s.down = down.iter().map(|p| p % 8).collect();
        s
    }

    quickcheck::quickcheck! {
        fn explain_never_panics(
            samples: Vec<(u64, u8, u64)>,
            down: Vec<u8>,
            w: (u32, u32, u8, u8),
            seed: u32,
            dst: u16
        ) -> bool {
            let mut s = with_state(&samples, &down);
            s.weights.beta = Some(w.0);
            s.weights.w_ql = Some(w.1 % 1000);
            s.weights.s_cong = Some(w.2);
            s.weights.s_total = Some(w.3 % 40);
            s.seed = seed;
            s.dst_dc = DcRef::Id(dst % 10);
            match s.explain(None) {
                Ok(out) => out.chosen_port.is_none_or(|p| {
                    out.candidates.iter().any(|c| c.port == p && c.up)
                }),
                Err(_) => true,
            }
        }

        fn scenario_json_never_panics(text: String) -> bool {
            let _ = Scenario::from_json(&text).and_then(|s| s.explain(None));
            true
        }

        // The panic check above, with results: a scenario written as JSON
        // reads back equal and explains the same; any cut of that JSON is a
        // JSON error at a position, not a scenario.
        fn json_round_trips_and_explains_the_same(
            samples: Vec<(u64, u8, u64)>,
            down: Vec<u8>,
            seed: u32,
            by_name: bool,
            scheme: u8,
            now_us: u64,
            cut: usize
        ) -> bool {
            let mut s = with_state(&samples, &down);
            s.seed = seed;
            s.scheme = [None, Some(Scheme::Lcmp), Some(Scheme::Ecmp), Some(Scheme::Ucmp)][usize::from(scheme % 4)];
            s.metric = if scheme & 4 == 0 { MetricName::FirstHop } else { MetricName::Path };
            s.dst_dc = if by_name { DcRef::Name("DC8".into()) } else { DcRef::Id(8) };
            s.now_us = now_us;
            let Ok(text) = serde_json::to_string(&s) else { return false };
            let back = Scenario::from_json(&text);
            let cut_is_json_error = matches!(
                Scenario::from_json(text.get(..cut % text.len()).unwrap_or_default()),
                Err(TablesError::Json(JsonError { .. }))
            );
            back.as_ref() == Ok(&s)
                && back.and_then(|b| b.explain(None)) == s.explain(None)
                && cut_is_json_error
        }
    }

    #[test]
    fn errors() {
        let bad = BASE.replace("\"DC1\"", "\"DC99\"");
        assert_eq!(
            Scenario::from_json(&bad).and_then(|s| s.explain(None)),
            Err(TablesError::Topology(TopologyError::UnknownDcName))
        );
        let bad = BASE.replace("\"testbed8\"", "\"nowhere\"");
        assert_eq!(
            Scenario::from_json(&bad).and_then(|s| s.explain(None)),
            Err(TablesError::Topology(TopologyError::UnknownTopology))
        );
        let bad = BASE.replace("10.0.7.1", "fd00::1");
        assert_eq!(
            Scenario::from_json(&bad).and_then(|s| s.explain(None)),
            Err(TablesError::Trace(TraceError::MixedAddressFamilies))
        );
        let bad = BASE.replace("\"dst_dc\"", "\"down\":[9],\"dst_dc\"");
        assert_eq!(
            Scenario::from_json(&bad).and_then(|s| s.explain(None)),
            Err(TablesError::Topology(TopologyError::NoSuchPort(9)))
        );
        let bad = BASE.replace(
            "\"dst_dc\"",
            "\"weights\":{\"alpha\":4294967295},\"dst_dc\"",
        );
        assert!(matches!(
            Scenario::from_json(&bad).and_then(|s| s.explain(None)),
            Err(TablesError::Core(lcmp_decide::Error::WeightOverflow(_)))
        ));
        let bad = BASE.replace("\"dst_dc\"", "\"colour\":1,\"dst_dc\"");
        assert!(matches!(
            Scenario::from_json(&bad),
            Err(TablesError::Json(JsonError { .. }))
        ));
        // The message is serde_json's, which names the field.
        let message = Scenario::from_json(&bad).map_err(|e| alloc::format!("{e}"));
        assert!(
            message
                .as_ref()
                .is_err_and(|m| m.contains("unknown field `colour`")),
            "{message:?}"
        );
    }
}
