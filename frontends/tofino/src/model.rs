//! The one internal model of what the control-plane agent writes into the
//! ASIC: table entries and register values ([`EntrySet`]), built from the
//! decision core's state by [`Agent`].
//!
//! # The selection design, and why it equals the core
//!
//! For a new flow of group `g` with ECMP hash `h`, `lcmp-decide` picks
//! `P[h mod k]`, where `P` is the group's *pick list*: the LCMP kept set in
//! `(cost, port)` order (or the single minimum-cost candidate when nothing
//! is kept; or, for the ECMP/UCMP schemes, the live or maximum-capacity
//! candidates in installation order), and `k = |P|`. The pick list depends
//! on the congestion state only, never on `h`; the agent reads it from the
//! core ([`lcmp_decide::Decider::explain`]) and installs
//!
//! * `lcmp_group_size[g] = k`, and
//! * `lcmp_select[(g, b)] = P[b]` for `b < k`.
//!
//! Tofino has no modulo, so the data plane computes `h mod k` from static
//! tables: writing `h = Σ_{i<8} n_i 16^i` (its nibbles),
//! `h mod k = (Σ r_i) mod k` with `r_i = (n_i · 16^i) mod k`, because
//! congruence mod `k` is preserved by sums and products. The eight
//! `lcmp_mod_n{i}` tables hold `r_i` keyed by `(k, n_i)` (exact,
//! `16 · max_k` entries each, all looked up in one stage); their sum is at
//! most `8 (k - 1) < 128`, so it fits `bit<8>` without wrapping, and
//! `lcmp_mod_fold[(k, s)] = s mod k` for `s ≤ 8 (k - 1)` finishes the
//! reduction. So `bucket = h mod k` exactly, for every `h` and every
//! `k ≤ max_k`, and the port is `P[h mod k]`: the core's choice. Those
//! tables never change at run time; a congestion change rewrites at most
//! `k + 1` entries of one group. The interpreter
//! ([`crate::interp`]) checks all of this against `Decider::on_packet`.

use lcmp_decide::estimator::queue::queue_threshold;
use lcmp_decide::tables::{CompiledTables, MAX_PORTS};
use lcmp_decide::{
    Decider, DeciderConfig, FlowKey, GroupId, HashAlgorithm, Instant, Pick, PortId, Tables, Weights,
};

use crate::error::Error;
use crate::schema::{names, Schema, Sizes, QDEPTH_BITS};

/// Bytes in one `deq_qdepth` cell (Tofino 1 and 2).
pub const CELL_BYTES: u64 = 80;

/// Default flow-pin register cells (the paper's 50k-flow cache, rounded up
/// to a power of two).
pub const DEFAULT_PIN_SLOTS: u32 = 65_536;

/// One key field's match value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Match {
    /// Exact value.
    Exact(u64),
    /// Value and prefix length.
    Lpm {
        /// The prefix (host bits zero).
        value: u64,
        /// Prefix length in bits.
        prefix_len: u32,
    },
    /// Value and mask.
    Ternary {
        /// Value (only masked bits matter).
        value: u64,
        /// Mask.
        mask: u64,
    },
    /// Inclusive range.
    Range {
        /// Lowest value matched.
        low: u64,
        /// Highest value matched.
        high: u64,
    },
}

/// One table entry: matches and parameters are positional, in the order
/// of the schema's key fields and action parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableEntry {
    /// Table (short name).
    pub table: &'static str,
    /// One match per key field.
    pub matches: Vec<Match>,
    /// Priority for ternary/range tables, P4Runtime convention: a larger
    /// number wins.
    pub priority: Option<u32>,
    /// Action (short name).
    pub action: &'static str,
    /// One value per action parameter.
    pub params: Vec<u64>,
}

/// One register cell written by the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegisterWrite {
    /// Register (short name).
    pub register: &'static str,
    /// Cell index.
    pub index: u32,
    /// Value.
    pub value: u64,
}

/// Everything the agent writes: the program's sizes, its schema, and the
/// entries and register values for one congestion state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySet {
    /// Table entries, grouped by table in pipeline order.
    pub entries: Vec<TableEntry>,
    /// Register values.
    pub registers: Vec<RegisterWrite>,
}

/// A port class: ports that share line rate and buffer share quantisation
/// entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct PortClass {
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Buffer, bytes.
    pub buffer_bytes: u64,
}

/// The configuration a `lcmp.p4` is generated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Table and register sizes.
    pub sizes: Sizes,
    /// The ECMP hash seed (XORed into the CRC).
    pub seed: u32,
    /// Weights and shifts of Eq. 1-5.
    pub weights: Weights,
    /// Duration high-water mark (queue score).
    pub high_water: u8,
    /// Duration low-water mark (queue score).
    pub low_water: u8,
    /// Trend EWMA shift `K`.
    pub trend_shift: u8,
    /// Level scores.
    pub levels: Vec<u8>,
    /// Port classes, sorted.
    pub classes: Vec<PortClass>,
    /// The agent's sampling period in ticks (sets the data-plane trend
    /// thresholds).
    pub interval_ticks: u32,
    /// Ticks per second.
    pub ticks_per_second: u32,
    /// Flow idle timeout, ticks.
    pub idle_timeout_ticks: u32,
}

impl Program {
    /// The schema of this program.
    pub fn schema(&self) -> Schema {
        Schema::new(&self.sizes)
    }

    /// The flow-pin idle timeout in the data plane's time unit
    /// (`ingress_mac_tstamp[47:16]`, 65.536 µs), rounded up.
    pub fn pin_idle_units(&self) -> u64 {
        let ns = u128::from(self.idle_timeout_ticks) * 1_000_000_000
            / u128::from(self.ticks_per_second.max(1));
        u64::try_from(ns.div_ceil(65_536))
            .unwrap_or(u64::from(u32::MAX))
            .min(u64::from(u32::MAX))
    }
}

/// Options of an export that the tables do not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Flow-pin register cells (rounded up to a power of two).
    pub pin_slots: u32,
    /// The agent's sampling period, ticks.
    pub interval_ticks: u32,
    /// The Tofino device port (`PortId_t`, below 512) of each
    /// `lcmp-decide` port id; identity by default.
    pub dev_ports: [u16; MAX_PORTS],
}

/// The identity port map.
const fn identity_ports() -> [u16; MAX_PORTS] {
    let mut out = [0u16; MAX_PORTS];
    let mut i = 0;
    while i < MAX_PORTS {
        out[i] = i as u16;
        i += 1;
    }
    out
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            pin_slots: DEFAULT_PIN_SLOTS,
            interval_ticks: 1000,
            dev_ports: identity_ports(),
        }
    }
}

/// The decider the agent runs: all ports, a token flow cache (the data
/// plane pins flows, the agent never calls `on_packet`).
type AgentDecider = Decider<MAX_PORTS, 16>;

/// The switch-CPU agent: the decision core fed with polled queue samples
/// and port events, and the source of every table entry.
///
/// ```
/// use lcmp_decide::*;
/// use lcmp_tofino::{Agent, ExportOptions};
/// let mut t = Tables::paper_defaults();
/// t.ports.push(PortConfig { id: PortId(1), rate_bps: 100_000_000_000, buffer_bytes: 1 << 24 }).unwrap();
/// let mut g = Group { id: GroupId(8), candidates: heapless::Vec::new() };
/// g.candidates.push(Candidate { port: PortId(1), delay_units: 5, capacity_bps: 100_000_000_000 }).unwrap();
/// t.groups.push(g).unwrap();
/// let crc = DeciderConfig { hash: HashAlgorithm::Crc32, ..DeciderConfig::default() };
/// let agent = Agent::new(&t, crc, ExportOptions::default()).unwrap();
/// assert!(agent.entries().unwrap().entries.iter().any(|e| e.table == "lcmp_select"));
/// // murmur3 is refused with a typed error.
/// assert!(Agent::new(&t, DeciderConfig::default(), ExportOptions::default()).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Agent {
    decider: AgentDecider,
    compiled: CompiledTables,
    config: DeciderConfig,
    options: ExportOptions,
}

impl Agent {
    /// An agent for `tables` under `config`. Refuses murmur3 and the
    /// capacity-weighted pick, and tables the core rejects.
    pub fn new(
        tables: &Tables,
        config: DeciderConfig,
        options: ExportOptions,
    ) -> Result<Agent, Error> {
        if config.hash != HashAlgorithm::Crc32 {
            return Err(Error::Murmur3NotSupported);
        }
        if tables.params.pick != Pick::Hash {
            return Err(Error::WeightedPickNotSupported);
        }
        let compiled = tables.compile(MAX_PORTS)?;
        for g in compiled.groups() {
            if g.id.0 > 255 {
                return Err(Error::GroupNotAddressable(g.id.0));
            }
        }
        // Device ports of the LCMP ports: 9 bits, distinct.
        let mut used: Vec<u16> = Vec::new();
        for p in 0..MAX_PORTS as u8 {
            if compiled.port(PortId(p)).is_some() {
                let dev = options.dev_ports[usize::from(p)];
                if dev >= 1 << crate::schema::PORT_BITS || used.contains(&dev) {
                    return Err(Error::DevPort(p));
                }
                used.push(dev);
            }
        }
        let mut decider = AgentDecider::new(config);
        decider.install(tables)?;
        Ok(Agent {
            decider,
            compiled,
            config,
            options,
        })
    }

    /// Feeds one polled queue sample (`queue_bytes` = `lcmp_qdepth` cells ×
    /// 80) into the core.
    pub fn sample(&mut self, now: Instant, port: PortId, queue_bytes: u64) -> Result<(), Error> {
        self.decider
            .sample(now, port, queue_bytes)
            .map_err(|_| Error::StatePort(port.0))
    }

    /// Records a port's liveness.
    pub fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Error> {
        self.decider
            .set_port_up(port, up)
            .map_err(|_| Error::StatePort(port.0))
    }

    /// The core the agent runs.
    pub fn decider(&self) -> &AgentDecider {
        &self.decider
    }

    /// The configuration `lcmp.p4` is generated for.
    pub fn program(&self) -> Program {
        let params = self.compiled.params();
        let mut classes: Vec<PortClass> = Vec::new();
        let mut ports = 0u32; // register cells: highest port id + 1
        for g in self.compiled.groups() {
            for c in &g.candidates {
                if let Some(p) = self.compiled.port(c.port) {
                    let cls = PortClass {
                        rate_bps: p.rate_bps,
                        buffer_bytes: p.buffer_bytes,
                    };
                    if !classes.contains(&cls) {
                        classes.push(cls);
                    }
                }
            }
        }
        for p in 0..MAX_PORTS {
            if self.compiled.port(PortId(p as u8)).is_some() {
                ports = p as u32 + 1;
            }
        }
        classes.sort();
        let max_k = self
            .compiled
            .groups()
            .iter()
            .map(|g| g.candidates.len())
            .max()
            .unwrap_or(1);
        let sizes = Sizes {
            groups: self.compiled.groups().len() as u32,
            max_k: max_k as u32,
            ports,
            classes: classes.len() as u32,
            levels: self.compiled.levels().len() as u32,
            pin_slots: self.options.pin_slots.max(1).next_power_of_two(),
        };
        Program {
            sizes,
            seed: self.config.seed,
            weights: params.weights,
            high_water: params.high_water,
            low_water: params.low_water,
            trend_shift: params.trend_shift,
            levels: self.compiled.levels().to_vec(),
            classes,
            interval_ticks: self.options.interval_ticks.max(1),
            ticks_per_second: params.ticks_per_second,
            idle_timeout_ticks: params.idle_timeout_ticks,
        }
    }

    /// The Tofino device port of a core port.
    pub fn dev_port(&self, port: PortId) -> u64 {
        u64::from(
            self.options
                .dev_ports
                .get(usize::from(port.0))
                .copied()
                .unwrap_or(u16::from(port.0)),
        )
    }

    /// The pick list of a group in the current state: the ports the core's
    /// hash indexes, `P[hash mod k]` (empty: no route).
    ///
    /// `k` is the size of the set the core hashes in (the kept set, or one
    /// for the minimum-cost fallback), and `P[b]` is read from the core
    /// itself: the port `Decider::explain` chooses for a probe flow whose
    /// hash is `b` mod `k`. Nothing about the order of the kept set is
    /// re-derived here, so the list follows the core whatever its ordering
    /// rules; the equivalence tests check that the core's choice has this
    /// `P[hash mod k]` form.
    pub fn pick_list(&self, group: GroupId) -> Result<Vec<PortId>, Error> {
        let probe = |sport: u16| {
            FlowKey::v4(
                core::net::Ipv4Addr::UNSPECIFIED,
                core::net::Ipv4Addr::UNSPECIFIED,
                sport,
                0,
                0,
            )
        };
        // The kept set does not depend on the hash, and the agent pins
        // nothing, so any probe explains the group's state.
        let ex = self.decider.explain(&probe(0), group, Instant::ZERO);
        if ex.chosen.is_none() {
            return Ok(Vec::new());
        }
        let k = ex.candidates.iter().filter(|c| c.kept).count().max(1);
        let mut list: Vec<Option<PortId>> = vec![None; k];
        let mut missing = k;
        for sport in 0..=u16::MAX {
            let key = probe(sport);
            let b = (key.ecmp_hash(self.config.hash, self.config.seed) as usize) % k;
            if let Some(slot @ None) = list.get_mut(b) {
                *slot = self.decider.explain(&key, group, Instant::ZERO).chosen;
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
        list.into_iter()
            .map(|p| p.ok_or(Error::PickProbe(group.0)))
            .collect()
    }

    /// The table entries and register values for the current state.
    pub fn entries(&self) -> Result<EntrySet, Error> {
        let program = self.program();
        let mut b = Builder {
            schema: program.schema(),
            out: EntrySet {
                entries: Vec::new(),
                registers: Vec::new(),
            },
        };
        let groups = self.compiled.groups();
        // Destination prefix -> group (address plan 10.<group>.0.0/16).
        for g in groups {
            let prefix = (10u64 << 24) | (u64::from(g.id.0) << 16);
            b.entry(
                names::DST_GROUP,
                vec![Match::Lpm {
                    value: prefix,
                    prefix_len: 16,
                }],
                None,
                "set_group",
                vec![u64::from(g.id.0)],
            )?;
        }
        let picks = groups
            .iter()
            .map(|g| self.pick_list(g.id).map(|list| (g.id, list)))
            .collect::<Result<Vec<(GroupId, Vec<PortId>)>, Error>>()?;
        for (g, list) in &picks {
            if !list.is_empty() {
                b.entry(
                    names::GROUP_SIZE,
                    vec![Match::Exact(u64::from(g.0))],
                    None,
                    "set_group_size",
                    vec![list.len() as u64],
                )?;
            }
        }
        // Static residue tables: r_i(k, n) = (n * 16^i) mod k.
        let max_k = u64::from(program.sizes.max_k);
        for (i, table) in names::MOD_N.iter().enumerate() {
            for k in 1..=max_k {
                let weight = (1u64 << (4 * i)) % k;
                for nibble in 0..16u64 {
                    b.entry(
                        table,
                        vec![Match::Exact(k), Match::Exact(nibble)],
                        None,
                        names::SET_R[i],
                        vec![(nibble * weight) % k],
                    )?;
                }
            }
        }
        for k in 1..=max_k {
            for s in 0..=8 * (k - 1) {
                b.entry(
                    names::MOD_FOLD,
                    vec![Match::Exact(k), Match::Exact(s)],
                    None,
                    "set_bucket",
                    vec![s % k],
                )?;
            }
        }
        for (g, list) in &picks {
            for (bucket, port) in list.iter().enumerate() {
                b.entry(
                    names::SELECT,
                    vec![Match::Exact(u64::from(g.0)), Match::Exact(bucket as u64)],
                    None,
                    "set_port",
                    vec![self.dev_port(*port)],
                )?;
            }
        }
        let ports: Vec<PortId> = (0..MAX_PORTS as u8)
            .map(PortId)
            .filter(|p| self.compiled.port(*p).is_some())
            .collect();
        for p in &ports {
            let up = self.decider.port_state(*p).is_some_and(|s| s.is_up());
            b.entry(
                names::PORT_ALIVE,
                vec![Match::Exact(self.dev_port(*p))],
                None,
                if up { "port_up" } else { "port_down" },
                vec![],
            )?;
        }
        // Egress: port -> (register index, class); quantisation per class.
        for p in &ports {
            if let Some(cfg) = self.compiled.port(*p) {
                let cls = PortClass {
                    rate_bps: cfg.rate_bps,
                    buffer_bytes: cfg.buffer_bytes,
                };
                if let Some(ci) = program.classes.iter().position(|c| *c == cls) {
                    b.entry(
                        names::PORT_CLASS,
                        vec![Match::Exact(self.dev_port(*p))],
                        None,
                        "set_port_class",
                        vec![u64::from(p.0), ci as u64],
                    )?;
                }
            }
        }
        for (ci, cls) in program.classes.iter().enumerate() {
            for (level, low, high) in q_ranges(cls.buffer_bytes, &program.levels) {
                b.entry(
                    names::Q_QUANT,
                    vec![Match::Exact(ci as u64), Match::Range { low, high }],
                    Some(1),
                    "set_q",
                    vec![u64::from(level)],
                )?;
            }
        }
        for (ci, cls) in program.classes.iter().enumerate() {
            for (level, low, high) in t_ranges(cls.rate_bps, &program) {
                b.entry(
                    names::T_QUANT,
                    vec![Match::Exact(ci as u64), Match::Range { low, high }],
                    Some(1),
                    "set_t",
                    vec![u64::from(level)],
                )?;
            }
        }
        // Registers: the measured state the core holds, so the data plane's
        // telemetry starts where the agent's model is.
        for p in &ports {
            if let Some(s) = self.decider.port_state(*p) {
                let idx = u32::from(p.0);
                // deq_qdepth is 19 bits: a deeper model queue reads as the maximum.
                let cells = (s.queue_bytes() / CELL_BYTES).min((1 << QDEPTH_BITS) - 1);
                b.register(names::REG_QDEPTH, idx, cells)?;
                // The core's trend in bytes, as non-negative cells.
                let trend = u64::try_from(s.trend().max(0)).unwrap_or(0) / CELL_BYTES;
                b.register(names::REG_TREND, idx, trend.min(u64::from(u32::MAX)))?;
                b.register(names::REG_DURATION, idx, u64::from(s.duration_counter()))?;
                // C_cong as the core stored it at the port's last sample.
                b.register(names::REG_CCONG, idx, u64::from(s.c_cong()))?;
            }
        }
        Ok(b.out)
    }
}

/// `Q` quantisation ranges in cells for one buffer size: `(score, low,
/// high)`, non-overlapping, clipped to the 19-bit `deq_qdepth`. Level `i`
/// covers the depths `d` (cells) with `d · 80 ≥ qthr[i]` and
/// `d · 80 < qthr[i + 1]`, i.e. `d ≥ ⌈qthr[i] / 80⌉`; depth 0 has no level.
pub fn q_ranges(buffer_bytes: u64, levels: &[u8]) -> Vec<(u8, u64, u64)> {
    let n = levels.len();
    let max = (1u64 << QDEPTH_BITS) - 1;
    let start = |i: usize| -> u64 {
        queue_threshold(buffer_bytes, i, n)
            .div_ceil(CELL_BYTES)
            .max(1)
    };
    let mut out = Vec::new();
    for (i, &score) in levels.iter().enumerate() {
        let low = start(i);
        let high = if i + 1 < n {
            start(i + 1).saturating_sub(1)
        } else {
            max
        };
        let high = high.min(max);
        if low <= high {
            out.push((score, low, high));
        }
    }
    out
}

/// Data-plane trend quantisation ranges (cells of growth per sampling
/// interval): level `i` from `⌈rate/8 · (i+1)/N · interval / 80⌉`.
pub fn t_ranges(rate_bps: u64, program: &Program) -> Vec<(u8, u64, u64)> {
    let n = program.levels.len() as u128;
    let max = u64::from(u32::MAX);
    let start = |i: usize| -> u64 {
        let num = u128::from(rate_bps) * (i as u128 + 1) * u128::from(program.interval_ticks);
        let den = n * u128::from(program.ticks_per_second) * 8 * u128::from(CELL_BYTES);
        let v = num.div_ceil(den.max(1)).max(1);
        u64::try_from(v).unwrap_or(max).min(max)
    };
    let mut out = Vec::new();
    for (i, &score) in program.levels.iter().enumerate() {
        let low = start(i);
        let high = if i + 1 < program.levels.len() {
            start(i + 1).saturating_sub(1)
        } else {
            max
        };
        if low <= high {
            out.push((score, low, high));
        }
    }
    out
}

struct Builder {
    schema: Schema,
    out: EntrySet,
}

impl Builder {
    fn entry(
        &mut self,
        table: &'static str,
        matches: Vec<Match>,
        priority: Option<u32>,
        action: &'static str,
        params: Vec<u64>,
    ) -> Result<(), Error> {
        let t = self.schema.table(table).ok_or(Error::Schema(table))?;
        let a = t.action(action).ok_or(Error::Schema(action))?;
        if matches.len() != t.keys.len() || params.len() != a.params.len() {
            return Err(Error::Schema(table));
        }
        for (m, k) in matches.iter().zip(t.keys) {
            let fits = |v: u64| k.bits >= 64 || v >> k.bits == 0;
            let ok = match *m {
                Match::Exact(v) => fits(v),
                Match::Lpm { value, prefix_len } => fits(value) && prefix_len <= k.bits,
                Match::Ternary { value, mask } => fits(value) && fits(mask),
                Match::Range { low, high } => fits(low) && fits(high) && low <= high,
            };
            if !ok {
                return Err(Error::ValueTooWide {
                    object: table,
                    field: k.name,
                    bits: k.bits,
                });
            }
        }
        for (v, p) in params.iter().zip(a.params) {
            if p.bits < 64 && v >> p.bits != 0 {
                return Err(Error::ValueTooWide {
                    object: action,
                    field: p.name,
                    bits: p.bits,
                });
            }
        }
        self.out.entries.push(TableEntry {
            table,
            matches,
            priority,
            action,
            params,
        });
        Ok(())
    }

    fn register(&mut self, register: &'static str, index: u32, value: u64) -> Result<(), Error> {
        let r = self
            .schema
            .register(register)
            .ok_or(Error::Schema(register))?;
        if index >= r.size || (r.bits < 64 && value >> r.bits != 0) {
            return Err(Error::ValueTooWide {
                object: register,
                field: "value",
                bits: r.bits,
            });
        }
        self.out.registers.push(RegisterWrite {
            register,
            index,
            value,
        });
        Ok(())
    }
}
