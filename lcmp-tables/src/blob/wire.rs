//! The blob payload's wire types: the format, owned here, not the serde
//! layout of the core's in-memory structs (smoltcp `wire`: `Packet` for the
//! bytes, `Repr` for the parsed form; here the parsed form is
//! [`lcmp_decide::Tables`]).
//!
//! Every format version has its own structs, encoded with postcard
//! (`docs/tables.md` gives the byte layout): [`WireTablesV1`],
//! [`WireTablesV2`] and [`WireTablesV3`] describe a whole payload, and
//! their element types are what the decoder reads one at a time. An
//! element type that several versions share is named after the version
//! that introduced it ([`WirePortV1`] is in versions 1, 2 and 3). A field
//! added to a core struct changes no wire struct, so it cannot change a
//! released format: it reaches the blob only through a new version here,
//! with explicit conversions both ways.
//!
//! postcard writes a struct as its fields in order, with nothing between
//! them, so a nested struct (such as [`WireParamsV2::v1`]) is its fields
//! inlined: [`WireParamsV2`] is version 1's parameters followed by `band`.
//!
//! Conversions are explicit `From` impls. Every version's wire types
//! convert into the core's (reading), filling what an older version does
//! not carry: `band` 255 (nothing cut) before version 2, and
//! `delay_unit_ticks` 0 (unknown: no early reuse of idle flow-cache
//! entries) before version 3. The core's types convert only into the
//! newest version's wire types (writing: [`WireTablesV3::from`]).

use heapless::Vec;
use lcmp_decide::tables::{
    Candidate, Group, GroupId, QueueThresholds, MAX_CANDIDATES, MAX_GROUPS, MAX_LEVELS, MAX_PORTS,
    MAX_QUEUE_TABLES,
};
use lcmp_decide::{Params, Pick, PortConfig, PortId, Tables, Weights};
use serde::{Deserialize, Serialize};

/// The weights and shifts of Eq. 1, 2, 4-5 (every version): seven varints,
/// then three bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireWeightsV1 {
    /// `α`.
    pub alpha: u32,
    /// `β`.
    pub beta: u32,
    /// `w_dl`.
    pub w_dl: u32,
    /// `w_lc`.
    pub w_lc: u32,
    /// `w_ql`.
    pub w_ql: u32,
    /// `w_tl`.
    pub w_tl: u32,
    /// `w_dp`.
    pub w_dp: u32,
    /// `S_path`.
    pub s_path: u8,
    /// `S_cong`.
    pub s_cong: u8,
    /// `S_total`.
    pub s_total: u8,
}

/// The pick inside the kept set: a one-byte variant index (every version
/// reads all three; `ScaledHash` came after version 2 was frozen, as a
/// new index, which older decoders reject).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WirePick {
    /// 0: [`Pick::Hash`].
    Hash,
    /// 1: [`Pick::CapacityWeighted`].
    CapacityWeighted,
    /// 2: [`Pick::ScaledHash`].
    ScaledHash,
}

/// Version 1's scalar settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireParamsV1 {
    /// Weights and shifts.
    pub weights: WireWeightsV1,
    /// Alg. 1 saturation shift.
    pub delay_shift: u8,
    /// `K` of Eq. 3.
    pub trend_shift: u8,
    /// High-water queue score.
    pub high_water: u8,
    /// Low-water queue score.
    pub low_water: u8,
    /// The cut.
    pub cut: u8,
    /// Ticks in one second (varint).
    pub ticks_per_second: u32,
    /// Idle timeout, ticks (varint).
    pub idle_timeout_ticks: u32,
    /// The pick.
    pub pick: WirePick,
}

/// Version 2's scalar settings: version 1's, then the cost band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireParamsV2 {
    /// Version 1's fields, inlined.
    pub v1: WireParamsV1,
    /// The cost band (255: none).
    pub band: u8,
}

/// Version 3's scalar settings: version 2's, then the delay unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireParamsV3 {
    /// Version 2's fields, inlined.
    pub v2: WireParamsV2,
    /// Ticks per candidate delay unit (varint; 0: unknown).
    pub delay_unit_ticks: u32,
}

/// A port (every version): `id` byte, then two varints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WirePortV1 {
    /// Port id.
    pub id: u8,
    /// Line rate, bit/s.
    pub rate_bps: u64,
    /// Egress buffer, bytes.
    pub buffer_bytes: u64,
}

/// A candidate (every version): `port` byte, then two varints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireCandidateV1 {
    /// Egress port id.
    pub port: u8,
    /// One-way delay in delay units.
    pub delay_units: u32,
    /// Path capacity, bit/s.
    pub capacity_bps: u64,
}

/// A route group (every version): the id varint, then the candidates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireGroupV1 {
    /// Group id.
    pub id: u16,
    /// Candidates (count, then each).
    pub candidates: Vec<WireCandidateV1, MAX_CANDIDATES>,
}

/// An explicit queue-threshold table (from version 2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireQueueThresholdsV2 {
    /// Port ids (count, then bytes).
    pub ports: Vec<u8, MAX_PORTS>,
    /// Thresholds, bytes (count, then varints).
    pub bytes: Vec<u64, MAX_LEVELS>,
}

/// A whole version-1 payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireTablesV1 {
    /// Scalar settings.
    pub params: WireParamsV1,
    /// Level scores.
    pub levels: Vec<u8, MAX_LEVELS>,
    /// Capacity thresholds, bit/s.
    pub capacity_thresholds_bps: Vec<u64, MAX_LEVELS>,
    /// Ports.
    pub ports: Vec<WirePortV1, MAX_PORTS>,
    /// Route groups.
    pub groups: Vec<WireGroupV1, MAX_GROUPS>,
}

/// A whole version-2 payload: version 1's with the cost band and the
/// queue-threshold tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireTablesV2 {
    /// Scalar settings.
    pub params: WireParamsV2,
    /// Level scores.
    pub levels: Vec<u8, MAX_LEVELS>,
    /// Capacity thresholds, bit/s.
    pub capacity_thresholds_bps: Vec<u64, MAX_LEVELS>,
    /// Ports.
    pub ports: Vec<WirePortV1, MAX_PORTS>,
    /// Route groups.
    pub groups: Vec<WireGroupV1, MAX_GROUPS>,
    /// Explicit queue-threshold tables.
    pub queue_thresholds: Vec<WireQueueThresholdsV2, MAX_QUEUE_TABLES>,
}

/// A whole version-3 payload: version 2's with the delay unit in the
/// scalar settings. What [`super::encode_blob`] writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireTablesV3 {
    /// Scalar settings.
    pub params: WireParamsV3,
    /// Level scores.
    pub levels: Vec<u8, MAX_LEVELS>,
    /// Capacity thresholds, bit/s.
    pub capacity_thresholds_bps: Vec<u64, MAX_LEVELS>,
    /// Ports.
    pub ports: Vec<WirePortV1, MAX_PORTS>,
    /// Route groups.
    pub groups: Vec<WireGroupV1, MAX_GROUPS>,
    /// Explicit queue-threshold tables.
    pub queue_thresholds: Vec<WireQueueThresholdsV2, MAX_QUEUE_TABLES>,
}

/// Maps a vector into one of the same capacity (so no push can fail).
fn map_vec<A, B, const N: usize>(v: &[A], f: impl Fn(&A) -> B) -> Vec<B, N> {
    let mut out = Vec::new();
    for a in v {
        // `v` comes from a vector of capacity `N`: never full.
        let _ = out.push(f(a));
    }
    out
}

impl From<Pick> for WirePick {
    fn from(p: Pick) -> WirePick {
        match p {
            Pick::Hash => WirePick::Hash,
            Pick::CapacityWeighted => WirePick::CapacityWeighted,
            Pick::ScaledHash => WirePick::ScaledHash,
        }
    }
}

impl From<WirePick> for Pick {
    fn from(p: WirePick) -> Pick {
        match p {
            WirePick::Hash => Pick::Hash,
            WirePick::CapacityWeighted => Pick::CapacityWeighted,
            WirePick::ScaledHash => Pick::ScaledHash,
        }
    }
}

impl From<&Weights> for WireWeightsV1 {
    fn from(w: &Weights) -> WireWeightsV1 {
        WireWeightsV1 {
            alpha: w.alpha,
            beta: w.beta,
            w_dl: w.w_dl,
            w_lc: w.w_lc,
            w_ql: w.w_ql,
            w_tl: w.w_tl,
            w_dp: w.w_dp,
            s_path: w.s_path,
            s_cong: w.s_cong,
            s_total: w.s_total,
        }
    }
}

impl From<WireWeightsV1> for Weights {
    fn from(w: WireWeightsV1) -> Weights {
        // Field by field from a constant, so a field the core adds later
        // (with a default) does not break this conversion.
        let mut out = Weights::PAPER;
        out.alpha = w.alpha;
        out.beta = w.beta;
        out.w_dl = w.w_dl;
        out.w_lc = w.w_lc;
        out.w_ql = w.w_ql;
        out.w_tl = w.w_tl;
        out.w_dp = w.w_dp;
        out.s_path = w.s_path;
        out.s_cong = w.s_cong;
        out.s_total = w.s_total;
        out
    }
}

impl From<WireParamsV1> for Params {
    fn from(p: WireParamsV1) -> Params {
        let mut out = Params::PAPER;
        out.weights = p.weights.into();
        out.delay_shift = p.delay_shift;
        out.trend_shift = p.trend_shift;
        out.high_water = p.high_water;
        out.low_water = p.low_water;
        out.cut = p.cut;
        out.ticks_per_second = p.ticks_per_second;
        out.idle_timeout_ticks = p.idle_timeout_ticks;
        out.pick = p.pick.into();
        // Version 1 has no band: nothing is cut by one.
        out.band = u8::MAX;
        // Versions 1 and 2 do not say the delay unit: no early reuse.
        out.delay_unit_ticks = 0;
        out
    }
}

impl From<WireParamsV2> for Params {
    fn from(p: WireParamsV2) -> Params {
        let mut out = Params::from(p.v1);
        out.band = p.band;
        out
    }
}

impl From<WireParamsV3> for Params {
    fn from(p: WireParamsV3) -> Params {
        let mut out = Params::from(p.v2);
        out.delay_unit_ticks = p.delay_unit_ticks;
        out
    }
}

impl From<&Params> for WireParamsV3 {
    fn from(p: &Params) -> WireParamsV3 {
        WireParamsV3 {
            v2: WireParamsV2 {
                v1: WireParamsV1 {
                    weights: (&p.weights).into(),
                    delay_shift: p.delay_shift,
                    trend_shift: p.trend_shift,
                    high_water: p.high_water,
                    low_water: p.low_water,
                    cut: p.cut,
                    ticks_per_second: p.ticks_per_second,
                    idle_timeout_ticks: p.idle_timeout_ticks,
                    pick: p.pick.into(),
                },
                band: p.band,
            },
            delay_unit_ticks: p.delay_unit_ticks,
        }
    }
}

impl From<&PortConfig> for WirePortV1 {
    fn from(p: &PortConfig) -> WirePortV1 {
        WirePortV1 {
            id: p.id.0,
            rate_bps: p.rate_bps,
            buffer_bytes: p.buffer_bytes,
        }
    }
}

impl From<WirePortV1> for PortConfig {
    fn from(p: WirePortV1) -> PortConfig {
        PortConfig {
            id: PortId(p.id),
            rate_bps: p.rate_bps,
            buffer_bytes: p.buffer_bytes,
        }
    }
}

impl From<&Candidate> for WireCandidateV1 {
    fn from(c: &Candidate) -> WireCandidateV1 {
        WireCandidateV1 {
            port: c.port.0,
            delay_units: c.delay_units,
            capacity_bps: c.capacity_bps,
        }
    }
}

impl From<WireCandidateV1> for Candidate {
    fn from(c: WireCandidateV1) -> Candidate {
        Candidate {
            port: PortId(c.port),
            delay_units: c.delay_units,
            capacity_bps: c.capacity_bps,
        }
    }
}

impl From<&Group> for WireGroupV1 {
    fn from(g: &Group) -> WireGroupV1 {
        WireGroupV1 {
            id: g.id.0,
            candidates: map_vec(&g.candidates, |c| c.into()),
        }
    }
}

impl From<&WireGroupV1> for Group {
    fn from(g: &WireGroupV1) -> Group {
        Group {
            id: GroupId(g.id),
            candidates: map_vec(&g.candidates, |&c| c.into()),
        }
    }
}

impl From<&QueueThresholds> for WireQueueThresholdsV2 {
    fn from(q: &QueueThresholds) -> WireQueueThresholdsV2 {
        WireQueueThresholdsV2 {
            ports: map_vec(&q.ports, |p| p.0),
            bytes: q.bytes.clone(),
        }
    }
}

impl From<&WireQueueThresholdsV2> for QueueThresholds {
    fn from(q: &WireQueueThresholdsV2) -> QueueThresholds {
        QueueThresholds {
            ports: map_vec(&q.ports, |&p| PortId(p)),
            bytes: q.bytes.clone(),
        }
    }
}

impl From<&Tables> for WireTablesV3 {
    fn from(t: &Tables) -> WireTablesV3 {
        WireTablesV3 {
            params: (&t.params).into(),
            levels: t.levels.clone(),
            capacity_thresholds_bps: t.capacity_thresholds_bps.clone(),
            ports: map_vec(&t.ports, |p| p.into()),
            groups: map_vec(&t.groups, |g| g.into()),
            queue_thresholds: map_vec(&t.queue_thresholds, |q| q.into()),
        }
    }
}

/// The tables of a payload's parts (the version's params converted).
fn tables_of(
    params: Params,
    levels: &Vec<u8, MAX_LEVELS>,
    thresholds: &Vec<u64, MAX_LEVELS>,
    ports: &[WirePortV1],
    groups: &[WireGroupV1],
    queue: &[WireQueueThresholdsV2],
) -> Tables {
    let mut t = Tables::new();
    t.params = params;
    t.levels = levels.clone();
    t.capacity_thresholds_bps = thresholds.clone();
    t.ports = map_vec(ports, |&p| p.into());
    t.groups = map_vec(groups, |g| g.into());
    t.queue_thresholds = map_vec(queue, |q| q.into());
    t
}

impl From<&WireTablesV1> for Tables {
    fn from(w: &WireTablesV1) -> Tables {
        tables_of(
            w.params.into(),
            &w.levels,
            &w.capacity_thresholds_bps,
            &w.ports,
            &w.groups,
            &[],
        )
    }
}

impl From<&WireTablesV2> for Tables {
    fn from(w: &WireTablesV2) -> Tables {
        tables_of(
            w.params.into(),
            &w.levels,
            &w.capacity_thresholds_bps,
            &w.ports,
            &w.groups,
            &w.queue_thresholds,
        )
    }
}

impl From<&WireTablesV3> for Tables {
    fn from(w: &WireTablesV3) -> Tables {
        tables_of(
            w.params.into(),
            &w.levels,
            &w.capacity_thresholds_bps,
            &w.ports,
            &w.groups,
            &w.queue_thresholds,
        )
    }
}

/// Bytes of the canonical (shortest) postcard varint of `v`.
pub(crate) const fn varint_len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    if bits == 0 {
        1
    } else {
        bits.div_ceil(7)
    }
}

/// The canonical postcard size of a wire value. A varint's encoding is
/// never shorter than its canonical form, and equal only when canonical, so
/// "bytes consumed == canonical size" for every value means the whole
/// payload is canonical and re-encodes to itself. (Checked this way rather
/// than by re-serialising, which would put postcard's serializer, and its
/// bounds checks, on the installer's path.)
pub(crate) trait CanonicalSize {
    fn canonical_size(&self) -> usize;
}

impl CanonicalSize for u8 {
    fn canonical_size(&self) -> usize {
        1
    }
}

impl CanonicalSize for u16 {
    fn canonical_size(&self) -> usize {
        varint_len(u64::from(*self))
    }
}

impl CanonicalSize for u64 {
    fn canonical_size(&self) -> usize {
        varint_len(*self)
    }
}

impl CanonicalSize for WirePortV1 {
    fn canonical_size(&self) -> usize {
        1 + varint_len(self.rate_bps) + varint_len(self.buffer_bytes)
    }
}

impl CanonicalSize for WireCandidateV1 {
    fn canonical_size(&self) -> usize {
        1 + varint_len(u64::from(self.delay_units)) + varint_len(self.capacity_bps)
    }
}

impl CanonicalSize for WireParamsV1 {
    fn canonical_size(&self) -> usize {
        let w = &self.weights;
        let weights = [w.alpha, w.beta, w.w_dl, w.w_lc, w.w_ql, w.w_tl, w.w_dp]
            .iter()
            .map(|&x| varint_len(u64::from(x)))
            .fold(0usize, usize::saturating_add);
        // s_path, s_cong, s_total; delay_shift, trend_shift, high_water,
        // low_water, cut: one byte each; `pick` is a one-byte variant index.
        weights
            .saturating_add(3 + 5 + 1)
            .saturating_add(varint_len(u64::from(self.ticks_per_second)))
            .saturating_add(varint_len(u64::from(self.idle_timeout_ticks)))
    }
}

impl CanonicalSize for WireParamsV2 {
    fn canonical_size(&self) -> usize {
        self.v1.canonical_size().saturating_add(1)
    }
}

impl CanonicalSize for WireParamsV3 {
    fn canonical_size(&self) -> usize {
        self.v2
            .canonical_size()
            .saturating_add(varint_len(u64::from(self.delay_unit_ticks)))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Every weight field survives the wire struct, each set away from the
    /// paper's value (so a conversion that drops one shows).
    #[test]
    fn weights_round_trip_field_by_field() {
        let mut w = Weights::PAPER;
        w.alpha = 11;
        w.beta = 12;
        w.w_dl = 13;
        w.w_lc = 14;
        w.w_ql = 15;
        w.w_tl = 16;
        w.w_dp = 17;
        w.s_path = 4;
        w.s_cong = 5;
        w.s_total = 6;
        assert_ne!(w, Weights::PAPER);
        assert_eq!(Weights::from(WireWeightsV1::from(&w)), w);
    }

    #[test]
    fn every_pick_round_trips() {
        for p in Pick::ALL {
            assert_eq!(Pick::from(WirePick::from(p)), p);
        }
    }
}
