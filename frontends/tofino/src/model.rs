//! The one internal model of what the control-plane agent writes into the
//! ASIC: table entries ([`EntrySet`]) built from the decision core's state
//! by [`Agent`], and the ordered, hitless updates between two entry sets
//! ([`Plan`]).
//!
//! # The selection design, and why it equals the core
//!
//! The agent runs `lcmp-decide` with [`Pick::ScaledHash`]: for a new flow
//! of group `g` with ECMP hash `h`, the core picks `P[b]` with
//! `b = ((h >> 16) * k) >> 16`, where `P` is the group's *pick list* (the
//! LCMP kept set in `(cost, port)` order, the single minimum-cost
//! candidate when nothing is kept, or the live / maximum-capacity
//! candidates in installation order for ECMP / UCMP) and `k = |P|`. `P`
//! depends on the congestion state only, never on `h`; the agent reads it
//! from the core ([`Agent::pick_list`]) and installs
//!
//! * `lcmp_dst_group[prefix of g] = set_group(g, k)` (or `no_route`), and
//! * `lcmp_select[(g, b)] = P[b]` for `b < k`.
//!
//! Tofino has no modulo and no multiplier on the match path, but `b` is a
//! step function of `h >> 16`: `b = j` exactly when
//! `⌈j · 2^16 / k⌉ <= h >> 16 <= ⌈(j + 1) · 2^16 / k⌉ - 1`. The static
//! `lcmp_bucket` table holds these ranges for every `k <= max_k`
//! (`Σ k` entries, [`bucket_ranges`]), so the data plane computes `b`
//! with one range match, and the port is `P[b]`: the core's choice. The
//! pick differs from the paper's `h mod k` (the core keeps both modes);
//! each bucket gets `⌊2^16 / k⌋` or `⌈2^16 / k⌉` of the hash space, so the
//! shares are within `k / 2^16` of even (`docs/tofino.md` has the
//! simulator's figures). A congestion change rewrites at most `k + 1`
//! entries of one group, in the order of [`EntrySet::plan_from`].

use lcmp_decide::tables::{CompiledTables, MAX_PORTS};
use lcmp_decide::{Decider, DeciderConfig, GroupId, HashAlgorithm, Instant, Pick, PortId, Tables};

use crate::error::Error;
use crate::schema::actions::{
    DROP_EXCEPTION, FALLBACK, MEMBER, NO_ROUTE, PORT_DOWN, PORT_UP, ROUTE, SET_BUCKET, SET_GROUP,
    SET_NEXT_HOP, SET_PORT, TO_CPU,
};
use crate::schema::{names, Action, Reason, Schema, Sizes, HASH_HI_BITS, MAX_PRIORITY, PORT_BITS};

/// The ASIC generation the agent runs on: it sets the traffic manager's
/// cell size (queue counters count cells) and the stage budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// Tofino 1 (TNA): 12 stages, 80-byte cells.
    #[default]
    Tofino1,
    /// Tofino 2 (T2NA): 20 stages, 176-byte cells.
    Tofino2,
}

impl Target {
    /// Both generations.
    pub const ALL: [Target; 2] = [Target::Tofino1, Target::Tofino2];

    /// The flow-pin cells `lcmp tofino` sizes the program with unless told:
    /// [`DEFAULT_PIN_SLOTS`] (2 x 65 536) on both; on Tofino 2 each way is
    /// two registers of [`Target::register_cells`] ([`crate::halves`]).
    pub const fn default_pin_slots(self) -> u32 {
        DEFAULT_PIN_SLOTS
    }

    /// The most cells of one pin register (a `{lo, hi}` pair of 32 bits)
    /// bf-p4c (p4lang/p4c 34b86e9) places: a way's 65 536 on Tofino 1;
    /// 32 768 on Tofino 2, where it cannot place 65 536 beside the
    /// one-entry table that executes them ("could not fit in stage 3 with
    /// 1 entries along with 65536 entries of Register
    /// LcmpIngress.lcmp_pin0", docs/tofino.md), so larger ways are halved.
    pub const fn register_cells(self) -> u32 {
        match self {
            Target::Tofino1 => 1 << 16,
            Target::Tofino2 => 1 << 15,
        }
    }

    /// The device port of the switch CPU's PCIe port on the common SKUs
    /// (Tofino 1 with two pipes: pipe 1's port 64, 192; Tofino 2: 0), where
    /// the exception table sends control traffic and expired TTLs unless
    /// `--cpu-port` says otherwise (the SDE's
    /// `device_configuration.pcie_cpu_port` names the switch's own).
    pub const fn pcie_cpu_port(self) -> u16 {
        match self {
            Target::Tofino1 => 192,
            Target::Tofino2 => 0,
        }
    }

    /// Bytes in one traffic-manager cell (`usage_cells` unit).
    pub const fn cell_bytes(self) -> u64 {
        match self {
            Target::Tofino1 => 80,
            Target::Tofino2 => 176,
        }
    }

    /// MAU stages per pipe (each gress must fit).
    pub const fn stages(self) -> u32 {
        match self {
            Target::Tofino1 => 12,
            Target::Tofino2 => 20,
        }
    }

    /// `__TARGET_TOFINO__`.
    pub const fn number(self) -> u32 {
        match self {
            Target::Tofino1 => 1,
            Target::Tofino2 => 2,
        }
    }

    /// The name in prose and tables.
    pub const fn name(self) -> &'static str {
        match self {
            Target::Tofino1 => "Tofino 1",
            Target::Tofino2 => "Tofino 2",
        }
    }

    /// The BF-Runtime traffic-manager table the agent polls for queue depth
    /// (`usage_cells`, keyed by `dev_port`).
    pub const fn tm_counter_table(self) -> &'static str {
        match self {
            Target::Tofino1 => "tf1.tm.counter.eg_port",
            Target::Tofino2 => "tf2.tm.counter.eg_port",
        }
    }
}

/// Default flow-pin register cells, both ways together (65 536 per way: the
/// paper's 50k-flow cache at a load of 0.38).
pub const DEFAULT_PIN_SLOTS: u32 = 1 << 17;

/// One key field's match value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

/// What identifies an entry in its table: the table, the matches and the
/// priority (P4Runtime's entry key).
pub type EntryKey = (&'static str, Vec<Match>, Option<u32>);

impl TableEntry {
    /// The entry's key.
    pub fn key(&self) -> EntryKey {
        (self.table, self.matches.clone(), self.priority)
    }
}

/// Every entry the agent writes for one congestion state, in load order
/// (a fresh pipeline loaded in this order never routes a packet through a
/// half-written group: the group entries come last).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntrySet {
    /// Table entries.
    pub entries: Vec<TableEntry>,
}

/// A write operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Add a new entry (P4Runtime `INSERT`, bfrt `add_with_*`).
    Insert,
    /// Change an entry's action or parameters (`MODIFY`, `mod_with_*`).
    Modify,
    /// Remove an entry (`DELETE`, `delete`).
    Delete,
}

/// One write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Update {
    /// The operation.
    pub op: Op,
    /// The entry (for a delete, its key is what counts).
    pub entry: TableEntry,
}

/// A batch of writes that may be applied in any order (one P4Runtime
/// `WriteRequest`); phases are applied one after the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// What the phase does, for comments and logs.
    pub what: &'static str,
    /// Its writes.
    pub updates: Vec<Update>,
}

/// Ordered writes from one entry set to another: non-empty phases only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The phases, in order.
    pub phases: Vec<Phase>,
}

impl Plan {
    /// Every write, in order.
    pub fn updates(&self) -> impl Iterator<Item = &Update> {
        self.phases.iter().flat_map(|p| p.updates.iter())
    }

    /// Number of writes.
    pub fn len(&self) -> usize {
        self.phases.iter().map(|p| p.updates.len()).sum()
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The phases of an update, in order, and what each holds (see
/// [`EntrySet::plan_from`]).
pub const PHASE_NAMES: [&str; 12] = [
    "next hops",
    "ports that came up",
    "static tables",
    "retired fallback ranges",
    "new members",
    "new buckets",
    "moved buckets",
    "group sizes and routes",
    "retired buckets",
    "withdrawn members",
    "ports that went down",
    "retired next hops",
];

fn phase_of(u: &Update) -> usize {
    let up = u.entry.action == PORT_UP.name;
    match (u.entry.table, u.op) {
        (names::NEXT_HOP, Op::Delete) => 11,
        (names::NEXT_HOP, _) => 0,
        (names::PORT_ALIVE, Op::Insert) => 1,
        (names::PORT_ALIVE, Op::Modify) if up => 1,
        (names::PORT_ALIVE, _) => 10,
        // A group's fallback ranges are re-split when its candidates
        // change: the old ones leave before the new ones come, so no two
        // ranges of one group overlap (a packet meanwhile misses: an
        // unpinned flow takes the selection's live port).
        (names::FALLBACK, Op::Delete) => 3,
        (names::MEMBER, Op::Delete) => 9,
        (names::MEMBER, _) => 4,
        (names::SELECT, Op::Insert) => 5,
        (names::SELECT | names::FALLBACK, Op::Modify) => 6,
        (names::FALLBACK, Op::Insert) => 4,
        (names::SELECT, Op::Delete) => 8,
        (names::DST_GROUP | names::ROUTE, _) => 7,
        (_, Op::Delete) => 10,
        _ => 2,
    }
}

impl EntrySet {
    /// Entries by key.
    fn by_key(&self) -> std::collections::BTreeMap<EntryKey, &TableEntry> {
        self.entries.iter().map(|e| (e.key(), e)).collect()
    }

    /// The ordered writes that turn `old` (what the switch holds) into
    /// `self`, such that a packet at any point of the update is routed to a
    /// port that is a live candidate of its group (in the old or the new
    /// pick list, and up in `lcmp_port_alive`):
    ///
    /// 1. next hops of new ports are written (before any route names them);
    /// 2. ports that came up are marked up;
    /// 3. static tables are filled (only at load time);
    /// 4. retired fallback ranges are deleted (a group's ranges are
    ///    re-split when its candidates change; the new ones must not
    ///    overlap the old);
    /// 5. new `(group, port)` candidates are added to `lcmp_member` (before
    ///    a selection entry names them, so a flow pinned to one is not
    ///    decided again), and the new fallback ranges;
    /// 6. selection entries for new buckets are added (`k` still old);
    /// 7. moved buckets are rewritten (each bucket is old or new: both live);
    /// 8. `lcmp_dst_group` switches each group to its new `k` (one atomic
    ///    entry write per group), or to `no_route`; default routes change;
    /// 9. buckets beyond the new `k` are deleted (no packet reads them);
    /// 10. withdrawn candidates leave `lcmp_member`, once no selection entry
    ///     names them: from then on, a flow pinned to one is decided again
    ///     (resubmitted and re-pinned), as the core re-decides it;
    /// 11. ports that went down are marked down, once no selection entry
    ///     names them;
    /// 12. next hops no route names any more are deleted.
    ///
    /// Within a phase the writes commute. `tests/updates.rs` checks the
    /// property with the interpreter after every single write.
    pub fn plan_from(&self, old: &EntrySet) -> Plan {
        let (was, now) = (old.by_key(), self.by_key());
        let mut phases: Vec<Phase> = PHASE_NAMES
            .iter()
            .map(|what| Phase {
                what,
                updates: Vec::new(),
            })
            .collect();
        let mut push = |u: Update| {
            if let Some(p) = phases.get_mut(phase_of(&u)) {
                p.updates.push(u);
            }
        };
        for e in &self.entries {
            match was.get(&e.key()) {
                None => push(Update {
                    op: Op::Insert,
                    entry: e.clone(),
                }),
                Some(o) if o.action != e.action || o.params != e.params => push(Update {
                    op: Op::Modify,
                    entry: e.clone(),
                }),
                Some(_) => {}
            }
        }
        for e in &old.entries {
            if !now.contains_key(&e.key()) {
                push(Update {
                    op: Op::Delete,
                    entry: e.clone(),
                });
            }
        }
        phases.retain(|p| !p.updates.is_empty());
        Plan { phases }
    }

    /// The writes that load `self` into a pipeline with empty tables.
    pub fn load_plan(&self) -> Plan {
        self.plan_from(&EntrySet::default())
    }

    /// `self` with one write applied (the interpreter's view of a switch in
    /// the middle of an update). A write that does not fit the current
    /// contents (an insert of a present key, a modify or delete of an
    /// absent one) is refused, as the switch would refuse it.
    pub fn apply(&mut self, u: &Update) -> Result<(), Error> {
        let key = u.entry.key();
        let at = self.entries.iter().position(|e| e.key() == key);
        match (u.op, at) {
            (Op::Insert, None) => self.entries.push(u.entry.clone()),
            (Op::Modify, Some(i)) => {
                if let Some(e) = self.entries.get_mut(i) {
                    *e = u.entry.clone();
                }
            }
            (Op::Delete, Some(i)) => {
                self.entries.remove(i);
            }
            _ => return Err(Error::Update(u.entry.table)),
        }
        Ok(())
    }
}

/// The configuration a `lcmp.p4` is generated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Table and register sizes.
    pub sizes: Sizes,
    /// The chip: whether a pin way is halved ([`crate::halves`]).
    pub target: Target,
    /// The ECMP hash seed (folded into the CRC's final XOR).
    pub seed: u32,
    /// Ticks per second of the core's clock.
    pub ticks_per_second: u32,
    /// Flow idle timeout, ticks.
    pub idle_timeout_ticks: u32,
}

impl Program {
    /// The schema of this program.
    pub fn schema(&self) -> Schema {
        crate::halves::schema(&self.sizes, self.target.register_cells())
    }

    /// The flow-pin idle timeout in the data plane's clock unit
    /// (`meta.now`, 2^24 ns = 16.78 ms), rounded up.
    pub fn pin_idle_units(&self) -> u64 {
        let ns = u128::from(self.idle_timeout_ticks) * 1_000_000_000
            / u128::from(self.ticks_per_second.max(1));
        u64::try_from(ns.div_ceil(1 << crate::schema::CLOCK_UNIT_SHIFT))
            .unwrap_or(u64::from(u32::MAX))
            .min(u64::from(u32::MAX))
    }
}

/// A default route (`lcmp_route`): destinations that are not LCMP groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Route {
    /// The IPv4 prefix (host bits zero).
    pub prefix: u32,
    /// Its length, 0 to 32.
    pub prefix_len: u8,
    /// The device port (`PortId_t`, below 512).
    pub dev_port: u16,
}

/// A port's next hop (`lcmp_next_hop`): the MAC addresses a routed packet
/// leaves with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHop {
    /// The device port.
    pub dev_port: u16,
    /// Source MAC (this switch's port), 48 bits.
    pub src_mac: u64,
    /// Destination MAC (the neighbour's), 48 bits.
    pub dst_mac: u64,
}

impl NextHop {
    /// The placeholder next hop of a device port when none is configured:
    /// locally administered addresses `02:00:00:00:PP:PP` (this switch)
    /// and `02:00:00:01:PP:PP` (the neighbour), `PP:PP` the device port.
    ///
    /// ```
    /// let n = lcmp_tofino::model::NextHop::placeholder(136);
    /// assert_eq!((n.src_mac, n.dst_mac), (0x0200_0000_0088, 0x0200_0001_0088));
    /// ```
    pub const fn placeholder(dev_port: u16) -> NextHop {
        NextHop {
            dev_port,
            src_mac: 0x0200_0000_0000 | dev_port as u64,
            dst_mac: 0x0200_0001_0000 | dev_port as u64,
        }
    }
}

/// Options of an export that the tables do not carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Flow-pin register cells, both ways ([`Sizes::pin_slots_for`]: 512 to
    /// 131 072, a power of two).
    pub pin_slots: u32,
    /// The Tofino device port (`PortId_t`, below 512) of each
    /// `lcmp-decide` port id; identity by default.
    pub dev_ports: [u16; MAX_PORTS],
    /// The ASIC generation (cell size of the queue counters).
    pub target: Target,
    /// Default routes for destinations that are not LCMP groups.
    pub routes: Vec<Route>,
    /// Next hops by device port; a port without one (an LCMP port or a
    /// route's) gets [`NextHop::placeholder`].
    pub next_hops: Vec<NextHop>,
    /// The device port exceptions go to (`lcmp_exception`'s `to_cpu`);
    /// `None`: the target's [`Target::pcie_cpu_port`].
    pub cpu_port: Option<u16>,
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
            dev_ports: identity_ports(),
            target: Target::Tofino1,
            routes: Vec::new(),
            next_hops: Vec::new(),
            cpu_port: None,
        }
    }
}

/// The decider the agent runs: all ports, a token flow cache (the data
/// plane pins flows, the agent never calls `on_packet`).
type AgentDecider = Decider<MAX_PORTS, 16>;

/// The `lcmp_bucket` ranges for a pick list of `k`: `(bucket, low, high)`
/// over `hash[31:16]`, i.e. `bucket = ((hash >> 16) * k) >> 16` as ranges
/// (empty for `k = 0`).
///
/// ```
/// assert_eq!(
///     lcmp_tofino::model::bucket_ranges(3),
///     [(0, 0, 21_845), (1, 21_846, 43_690), (2, 43_691, 65_535)]
/// );
/// ```
pub fn bucket_ranges(k: u64) -> Vec<(u64, u64, u64)> {
    let span = 1u64 << HASH_HI_BITS;
    // The smallest x with (x * k) >> 16 >= j.
    let start = |j: u64| (j * span).div_ceil(k.max(1));
    (0..k).map(|j| (j, start(j), start(j + 1) - 1)).collect()
}

/// The switch-CPU agent: the decision core fed with polled queue counters
/// and port events, and the source of every table entry.
///
/// ```
/// use lcmp_decide::*;
/// use lcmp_tofino::{Agent, ExportOptions};
/// let mut t = Tables::paper_defaults();
/// t.params.pick = Pick::ScaledHash;
/// t.ports.push(PortConfig { id: PortId(1), rate_bps: 100_000_000_000, buffer_bytes: 1 << 24 }).unwrap();
/// let mut g = Group { id: GroupId(8), candidates: heapless::Vec::new() };
/// g.candidates.push(Candidate { port: PortId(1), delay_units: 5, capacity_bps: 100_000_000_000 }).unwrap();
/// t.groups.push(g).unwrap();
/// let crc = DeciderConfig::DEFAULT.with_hash(HashAlgorithm::Crc32);
/// let agent = Agent::new(&t, crc, ExportOptions::default()).unwrap();
/// let select = lcmp_tofino::schema::names::SELECT;
/// assert!(agent.entries().unwrap().entries.iter().any(|e| e.table == select));
/// // murmur3, and the paper's `hash % k` pick, are refused with typed errors.
/// assert!(Agent::new(&t, DeciderConfig::default(), ExportOptions::default()).is_err());
/// t.params.pick = Pick::Hash;
/// assert!(Agent::new(&t, crc, ExportOptions::default()).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Agent {
    decider: AgentDecider,
    compiled: CompiledTables,
    tables: Tables,
    config: DeciderConfig,
    options: ExportOptions,
}

impl Agent {
    /// An agent for `tables` under `config`. Refuses murmur3, any pick but
    /// [`Pick::ScaledHash`] (what the data plane computes), group ids the
    /// address plan cannot hold, bad device ports, and tables the core
    /// rejects.
    pub fn new(
        tables: &Tables,
        config: DeciderConfig,
        options: ExportOptions,
    ) -> Result<Agent, Error> {
        if config.hash != HashAlgorithm::Crc32 {
            return Err(Error::Murmur3NotSupported);
        }
        if tables.params.pick != Pick::ScaledHash {
            return Err(Error::PickNotSupported(tables.params.pick));
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
                if dev >= 1 << PORT_BITS || used.contains(&dev) {
                    return Err(Error::DevPort(p));
                }
                used.push(dev);
            }
        }
        for r in &options.routes {
            let host = u32::MAX.checked_shr(u32::from(r.prefix_len)).unwrap_or(0);
            if r.prefix_len > 32 || r.prefix & host != 0 {
                return Err(Error::Route(r.prefix, r.prefix_len));
            }
            if r.dev_port >= 1 << PORT_BITS {
                return Err(Error::RoutePort(r.dev_port));
            }
        }
        if options.routes.len() > crate::schema::ROUTE_TABLE_SIZE as usize {
            return Err(Error::Route(0, 0));
        }
        let mut seen: Vec<u16> = Vec::new();
        for n in &options.next_hops {
            if n.dev_port >= 1 << PORT_BITS
                || n.src_mac >> 48 != 0
                || n.dst_mac >> 48 != 0
                || seen.contains(&n.dev_port)
            {
                return Err(Error::NextHop(n.dev_port));
            }
            seen.push(n.dev_port);
        }
        let mut decider = AgentDecider::new(config);
        decider.install(tables)?;
        Ok(Agent {
            decider,
            compiled,
            tables: tables.clone(),
            config,
            options,
        })
    }

    /// The next hop of a device port: the configured one, else
    /// [`NextHop::placeholder`].
    pub fn next_hop(&self, dev_port: u16) -> NextHop {
        self.options
            .next_hops
            .iter()
            .find(|n| n.dev_port == dev_port)
            .copied()
            .unwrap_or(NextHop::placeholder(dev_port))
    }

    /// Every device port a route can name: the LCMP ports' and the default
    /// routes', ascending.
    pub fn routed_dev_ports(&self) -> Vec<u16> {
        let mut out: Vec<u16> = (0..MAX_PORTS as u8)
            .map(PortId)
            .filter(|p| self.compiled.port(*p).is_some())
            .map(|p| self.dev_port(p) as u16)
            .chain(self.options.routes.iter().map(|r| r.dev_port))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Feeds one queue sample in bytes into the core.
    pub fn sample(&mut self, now: Instant, port: PortId, queue_bytes: u64) -> Result<(), Error> {
        self.decider
            .sample(now, port, queue_bytes)
            .map_err(|_| Error::StatePort(port.0))
    }

    /// Feeds one poll of the traffic manager's `usage_cells` for the port's
    /// egress (BF-Runtime `tf1.tm.counter.eg_port` / `tf2...`, keyed by
    /// `dev_port`): `usage_cells × cell size` bytes of the target.
    pub fn on_usage_cells(
        &mut self,
        now: Instant,
        port: PortId,
        usage_cells: u64,
    ) -> Result<(), Error> {
        let bytes = usage_cells.saturating_mul(self.options.target.cell_bytes());
        self.sample(now, port, bytes)
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

    /// The tables the agent's core runs (pick [`Pick::ScaledHash`]).
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The core's configuration.
    pub fn config(&self) -> DeciderConfig {
        self.config
    }

    /// The export options.
    pub fn options(&self) -> &ExportOptions {
        &self.options
    }

    /// The configuration `lcmp.p4` is generated for.
    pub fn program(&self) -> Program {
        let params = self.compiled.params();
        let ports = (0..MAX_PORTS)
            .filter(|&p| self.compiled.port(PortId(p as u8)).is_some())
            .map(|p| p as u32 + 1)
            .max()
            .unwrap_or(0);
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
            pin_slots: Sizes::pin_slots_for(self.options.pin_slots),
        };
        Program {
            sizes,
            target: self.options.target,
            seed: self.config.seed,
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

    /// The safe gap after which the data plane's pin cells may be reused
    /// without reordering, in its clock units (`meta.now`, 2^24 ns): the
    /// value the pin registers' reuse (issue 32, item 1) compares a cell's
    /// idle time with.
    ///
    /// A cell whose flow has been idle more than `G` units may be taken
    /// by another flow; so `G` is the smallest count of units such that the
    /// core's own in-flight bound (`Decider::may_move`, the predicate its
    /// full flow cache reclaims by) lets a flow move after any idle time
    /// above `G` units on any up LCMP port: the pin cells do not record
    /// their flow's port, so the largest port's gap applies to all. Idle
    /// times are probed at every quarter unit up to the idle timeout, and
    /// `G` is one unit above the longest one that may not move. At most
    /// the idle timeout (the program's `PIN_IDLE`, the cells' default).
    ///
    /// Sound while the agent polls within the longest interval between
    /// polls the core has seen (its bound's staleness margin), for a data
    /// plane that keeps the last `G` until the next write.
    pub fn pin_gap_units(&self, now: Instant) -> u32 {
        let idle = u32::try_from(self.program().pin_idle_units()).unwrap_or(u32::MAX);
        let tps = u128::from(self.compiled.params().ticks_per_second);
        // Ticks of `q` quarter units (2^22 ns each), rounded up.
        let ticks = |q: u32| -> u32 {
            let ns = u128::from(q) << (crate::schema::CLOCK_UNIT_SHIFT - 2);
            u32::try_from((ns * tps).div_ceil(1_000_000_000)).unwrap_or(u32::MAX)
        };
        let ports: Vec<PortId> = (0..MAX_PORTS as u8)
            .map(PortId)
            .filter(|p| self.compiled.port(*p).is_some())
            .collect();
        let pinned_at = |q: u32| Instant::from_ticks(now.ticks().wrapping_sub(ticks(q)));
        // The longest idle time (in quarter units) at which a flow may not
        // move, scanning down from the idle timeout.
        let longest = (0..=idle.saturating_mul(4)).rev().find(|&q| {
            ports
                .iter()
                .any(|&p| !self.decider.may_move(now, p, pinned_at(q)))
        });
        match longest {
            None => 0,
            Some(q) => (q / 4 + 1).min(idle),
        }
    }

    /// The pick list of a group in the current state: `P[b]` is the port
    /// of bucket `b` (empty: no route).
    ///
    /// `k` is the size of the set the core hashes in (the kept set, or one
    /// for the minimum-cost fallback), and `P` is the core's own
    /// `Decider::pick_list`: nothing about the order of the kept set is
    /// re-derived here; the equivalence tests check the result against the
    /// core and against an independent model.
    pub fn pick_list(&self, group: GroupId) -> Result<Vec<PortId>, Error> {
        // The core's pick list: the kept set in pick order (one port for
        // the minimum-cost fallback), so that bucket `b` of the scaled hash
        // gets exactly the port the core's `list[((h >> 16) * k) >> 16]`
        // picks. No probe flows.
        Ok(self.decider.pick_list(group).to_vec())
    }

    /// The table entries for the current state, in load order.
    pub fn entries(&self) -> Result<EntrySet, Error> {
        let program = self.program();
        let mut b = Builder {
            schema: program.schema(),
            out: EntrySet::default(),
        };
        let ports: Vec<PortId> = (0..MAX_PORTS as u8)
            .map(PortId)
            .filter(|p| self.compiled.port(*p).is_some())
            .collect();
        for dev in self.routed_dev_ports() {
            let n = self.next_hop(dev);
            b.entry(
                names::NEXT_HOP,
                vec![Match::Exact(u64::from(dev))],
                None,
                &SET_NEXT_HOP,
                vec![n.src_mac, n.dst_mac],
            )?;
        }
        for p in &ports {
            let up = self.decider.port_state(*p).is_some_and(|s| s.is_up());
            b.entry(
                names::PORT_ALIVE,
                vec![Match::Exact(self.dev_port(*p))],
                None,
                if up { &PORT_UP } else { &PORT_DOWN },
                vec![],
            )?;
        }
        // Static: (k, hash[31:16]) ranges -> bucket.
        for k in 1..=u64::from(program.sizes.max_k) {
            for (bucket, low, high) in bucket_ranges(k) {
                b.entry(
                    names::BUCKET,
                    vec![Match::Exact(k), Match::Range { low, high }],
                    Some(1),
                    &SET_BUCKET,
                    vec![bucket],
                )?;
            }
        }
        // Static: the exceptions the switch CPU answers go to its port; the
        // others are dropped, counted either way (every reason has an
        // entry: the default action cannot count, see EXCEPTION_MISS).
        let cpu_port = self
            .options
            .cpu_port
            .unwrap_or(self.options.target.pcie_cpu_port());
        for r in Reason::ALL {
            let (action, params) = if r.to_cpu() {
                (&TO_CPU, vec![u64::from(cpu_port)])
            } else {
                (&DROP_EXCEPTION, vec![])
            };
            b.entry(
                names::EXCEPTION,
                vec![Match::Exact(u64::from(r.code()))],
                None,
                action,
                params,
            )?;
        }
        let groups = self.compiled.groups();
        // Every candidate of every group: a pin on one is followed.
        for g in groups {
            for c in &g.candidates {
                b.entry(
                    names::MEMBER,
                    vec![
                        Match::Exact(u64::from(g.id.0)),
                        Match::Exact(self.dev_port(c.port)),
                    ],
                    None,
                    &MEMBER,
                    vec![],
                )?;
            }
        }
        // Each group's stable fallback (a flow no pin cell could hold):
        // static hash[15:0] ranges, one per candidate, in candidate order;
        // a range keeps its candidate while it is up, else takes the next
        // live candidate after it (cyclically). Only a candidate going
        // down or coming back changes an entry; congestion never does.
        for g in groups {
            let up: Vec<bool> = g
                .candidates
                .iter()
                .map(|c| self.decider.port_state(c.port).is_some_and(|s| s.is_up()))
                .collect();
            let n = g.candidates.len();
            for (j, low, high) in bucket_ranges(n as u64) {
                let j = j as usize;
                let to = (0..n).map(|d| (j + d) % n).find(|&i| up[i]).unwrap_or(j);
                b.entry(
                    names::FALLBACK,
                    vec![Match::Exact(u64::from(g.id.0)), Match::Range { low, high }],
                    Some(1),
                    &FALLBACK,
                    vec![self.dev_port(g.candidates[to].port)],
                )?;
            }
        }
        let picks = groups
            .iter()
            .map(|g| self.pick_list(g.id).map(|list| (g.id, list)))
            .collect::<Result<Vec<(GroupId, Vec<PortId>)>, Error>>()?;
        for (g, list) in &picks {
            for (bucket, port) in list.iter().enumerate() {
                b.entry(
                    names::SELECT,
                    vec![Match::Exact(u64::from(g.0)), Match::Exact(bucket as u64)],
                    None,
                    &SET_PORT,
                    vec![self.dev_port(*port)],
                )?;
            }
        }
        for r in &self.options.routes {
            b.entry(
                names::ROUTE,
                vec![Match::Lpm {
                    value: u64::from(r.prefix),
                    prefix_len: u32::from(r.prefix_len),
                }],
                None,
                &ROUTE,
                vec![u64::from(r.dev_port)],
            )?;
        }
        // Destination prefix -> (group, k), address plan 10.<group>.0.0/16.
        for (g, list) in &picks {
            let prefix = (10u64 << 24) | (u64::from(g.0) << 16);
            let key = vec![Match::Lpm {
                value: prefix,
                prefix_len: 16,
            }];
            if list.is_empty() {
                b.entry(names::DST_GROUP, key, None, &NO_ROUTE, vec![])?;
            } else {
                let k = list.len() as u64;
                b.entry(
                    names::DST_GROUP,
                    key,
                    None,
                    &SET_GROUP,
                    vec![u64::from(g.0), k],
                )?;
            }
        }
        Ok(b.out)
    }
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
        action: &'static Action,
        params: Vec<u64>,
    ) -> Result<(), Error> {
        let t = self.schema.table(table).ok_or(Error::Schema(table))?;
        let a = t.action(action.name).ok_or(Error::Schema(action.name))?;
        let prio_ok = match priority {
            None => !t.needs_priority(),
            Some(p) => t.needs_priority() && (1..=MAX_PRIORITY).contains(&p),
        };
        if matches.len() != t.keys.len() || params.len() != a.params.len() || !prio_ok {
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
                    object: a.name,
                    field: p.name,
                    bits: p.bits,
                });
            }
        }
        self.out.entries.push(TableEntry {
            table,
            matches,
            priority,
            action: a.name,
            params,
        });
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Both: two ways of 65 536 pin cells (Tofino 2's in registers of
    /// 32 768, `halves`).
    #[test]
    fn default_pin_slots_by_target() {
        assert_eq!(Target::Tofino1.default_pin_slots(), 2 * 65_536);
        assert_eq!(Target::Tofino2.default_pin_slots(), 2 * 65_536);
    }

    #[test]
    fn bucket_ranges_are_the_scaled_pick() {
        for k in 1..=16u64 {
            let r = bucket_ranges(k);
            assert_eq!(r.first().map(|x| x.1), Some(0));
            assert_eq!(r.last().map(|x| x.2), Some(65_535));
            for w in r.windows(2) {
                assert_eq!(w[0].2 + 1, w[1].1, "contiguous");
            }
            for x in (0..65_536u64).step_by(97).chain([65_535]) {
                let b = r.iter().find(|e| e.1 <= x && x <= e.2).map(|e| e.0);
                assert_eq!(b, Some((x * k) >> 16), "k {k}, x {x}");
            }
        }
        assert!(bucket_ranges(0).is_empty());
    }

    fn entry(table: &'static str, key: u64, action: &'static str, p: u64) -> TableEntry {
        TableEntry {
            table,
            matches: vec![Match::Exact(key)],
            priority: None,
            action,
            params: vec![p],
        }
    }

    #[test]
    fn plan_orders_adds_before_sizes_before_deletes() {
        let old = EntrySet {
            entries: vec![
                entry(names::SELECT, 0, SET_PORT.name, 1),
                entry(names::SELECT, 1, SET_PORT.name, 2),
                entry(names::DST_GROUP, 8, SET_GROUP.name, 2),
            ],
        };
        let mut new = old.clone();
        new.entries[1].params = vec![3];
        new.entries.push(entry(names::SELECT, 2, SET_PORT.name, 4));
        new.entries[2].params = vec![3];
        let plan = new.plan_from(&old);
        let what: Vec<&str> = plan.phases.iter().map(|p| p.what).collect();
        assert_eq!(
            what,
            ["new buckets", "moved buckets", "group sizes and routes"]
        );
        // Back again: the size shrinks before the bucket goes.
        let back = old.plan_from(&new);
        let what: Vec<&str> = back.phases.iter().map(|p| p.what).collect();
        assert_eq!(
            what,
            ["moved buckets", "group sizes and routes", "retired buckets"]
        );
        let mut state = new.clone();
        for u in back.updates() {
            state.apply(u).expect("applies");
        }
        assert_eq!(state.plan_from(&old), Plan::default());
        assert!(
            state.apply(&back.phases[2].updates[0]).is_err(),
            "deleted twice"
        );
    }
}
