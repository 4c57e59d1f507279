//! `lcmp tofino p4|entries`: clap arguments, the library entry points that
//! need a topology, and `run`.
//!
//! Wiring into the `lcmp` tool is one variant and one match arm:
//! `Tofino(lcmp_tofino::cli::TofinoArgs)` and
//! `Command::Tofino(a) => lcmp_tofino::cli::run(a).map_err(|e| e.to_string())`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::{Args, Subcommand, ValueEnum};
use lcmp_decide::{DeciderConfig, HashAlgorithm, Pick, Scheme};
use lcmp_tables::{build_tables, BuildOptions, Topology};

use crate::error::Error;
use crate::model::{Agent, EntrySet, ExportOptions, NextHop, Program, Route, Target};
use crate::render::{entry_files, program_files, update_files, Files};
use crate::state::CongestionState;

/// `lcmp tofino ...`.
#[derive(Clone, Debug, Args)]
pub struct TofinoArgs {
    /// What to generate.
    #[command(subcommand)]
    pub command: TofinoCommand,
}

/// The subcommands.
#[derive(Clone, Debug, Subcommand)]
pub enum TofinoCommand {
    /// Write the P4_16 TNA program `lcmp.p4` and its P4Info.
    P4(CommonArgs),
    /// Write the table entries for a congestion state (bfrt_python,
    /// BF-Runtime JSON, P4Runtime text), as a load into empty tables, with
    /// the program.
    Entries(EntriesArgs),
    /// Write the ordered, hitless update from one congestion state to
    /// another (bfrt_python, P4Runtime text).
    Update(UpdateArgs),
    /// Run the Tofino compiler (`p4c-barefoot` or an SDE's `bf-p4c`) on the
    /// generated program and print its stage counts and resources.
    Compile(CompileArgs),
    /// The agent's decision core as a filter for `lcmp_agent.py`: reads one
    /// poll per line (`{"t_us", "usage_cells": {"DEV_PORT": cells},
    /// "down": [DEV_PORT]}`) and writes the ordered writes that take the
    /// switch to the new state, one JSON line per poll.
    Agent(AgentArgs),
}

/// `lcmp tofino agent`.
#[derive(Clone, Debug, Args)]
pub struct AgentArgs {
    /// Topology, switch, device ports, `--target` (the queue cell size).
    #[command(flatten)]
    pub common: CommonArgs,
    /// Start with the load of the idle state (empty tables) rather than
    /// from a switch already loaded with `lcmp_entries.py` of the idle state.
    #[arg(long)]
    pub load: bool,
}

/// One poll of the traffic manager and the ports (a line of
/// `lcmp tofino agent`'s input).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Poll {
    /// When, microseconds (the agent's clock).
    pub t_us: u32,
    /// `usage_cells` of `tfN.tm.counter.eg_port`, by device port.
    #[serde(default)]
    pub usage_cells: std::collections::BTreeMap<u16, u64>,
    /// Device ports that are down now (every other LCMP port is up).
    #[serde(default)]
    pub down: Vec<u16>,
}

/// The core of `lcmp tofino agent`: for every poll line of `input`, feeds
/// the samples and port states into the agent and writes one JSON line of
/// the plan from the entries the switch holds to the new ones
/// ([`crate::render::bfrt::plan_json`], with `t_us`); with `load`, first a
/// line with the load of the idle state. A line that is not a poll is a
/// typed error (the agent stops: the switch keeps its last good state).
pub fn agent_loop(
    args: &AgentArgs,
    input: impl std::io::BufRead,
    mut output: impl std::io::Write,
) -> Result<usize, Error> {
    let mut agent = routing_agent(&args.common)?;
    let schema = agent.program().schema();
    let mut held = agent.entries()?;
    let io = |source| Error::Io {
        path: PathBuf::from("<stdout>"),
        source,
    };
    // The pin cells' safe gap the switch holds (`None`: the program's
    // initial PIN_IDLE), written after the entries when it changes.
    let mut held_gap: Option<u32> = None;
    let mut write =
        |t_us: Option<u32>, plan: &crate::model::Plan, gap: Option<u32>| -> Result<(), Error> {
            let mut v = crate::render::bfrt::plan_json(&schema, plan);
            if let Some(m) = v.as_object_mut() {
                if let Some(t) = t_us {
                    m.insert("t_us".into(), t.into());
                }
                if let (Some(g), Some(phases)) =
                    (gap, m.get_mut("phases").and_then(|p| p.as_array_mut()))
                {
                    phases.push(crate::render::bfrt::pin_gap_phase(&schema, g));
                }
            }
            writeln!(output, "{v}").map_err(io)?;
            output.flush().map_err(io)
        };
    if args.load {
        write(None, &held.load_plan(), None)?;
    }
    let mut dev_to_port = std::collections::BTreeMap::new();
    for p in 0..lcmp_decide::tables::MAX_PORTS as u8 {
        if agent.tables().ports.iter().any(|c| c.id.0 == p) {
            dev_to_port.insert(agent.dev_port(lcmp_decide::PortId(p)) as u16, p);
        }
    }
    let mut n = 0;
    for line in input.lines() {
        let line = line.map_err(|source| Error::Io {
            path: PathBuf::from("<stdin>"),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let poll: Poll = serde_json::from_str(&line).map_err(Error::State)?;
        let now = lcmp_tables::time::instant(&agent.tables().params, u64::from(poll.t_us));
        for (dev, cells) in &poll.usage_cells {
            let port = dev_to_port.get(dev).ok_or(Error::PollPort(*dev))?;
            agent.on_usage_cells(now, lcmp_decide::PortId(*port), *cells)?;
        }
        for dev in &poll.down {
            dev_to_port.get(dev).ok_or(Error::PollPort(*dev))?;
        }
        for (dev, port) in &dev_to_port {
            agent.set_port_up(lcmp_decide::PortId(*port), !poll.down.contains(dev))?;
        }
        let next = agent.entries()?;
        let gap = agent.pin_gap_units(now);
        let gap_write = (held_gap != Some(gap)).then_some(gap);
        write(Some(poll.t_us), &next.plan_from(&held), gap_write)?;
        held = next;
        held_gap = Some(gap);
        n += 1;
    }
    Ok(n)
}

/// `lcmp tofino compile`.
#[derive(Clone, Debug, Args)]
pub struct CompileArgs {
    /// Topology, switch, output, and `--target` (the chip to compile for).
    #[command(flatten)]
    pub common: CommonArgs,
    /// The compiler: `p4c-barefoot` (with `--p4include`) or an SDE's `bf-p4c`.
    #[arg(long = "bf-p4c", value_name = "PATH")]
    pub bf_p4c: PathBuf,
    /// Include directories for `cc -E` (p4c's `p4include` and
    /// `backends/tofino/bf-p4c/p4include`); given, the program is
    /// preprocessed first and compiled with `--nocpp`.
    #[arg(long = "p4include", value_name = "DIR")]
    pub p4include: Vec<PathBuf>,
    /// The assembler (`bfas`) to run on the compiler's `pipe/*.bfa`, as an
    /// SDE's `bf-p4c` driver does (open-source `p4c-barefoot` stops at the
    /// assembly); its errors fail the compile.
    #[arg(long, value_name = "PATH")]
    pub bfas: Option<PathBuf>,
    /// Compile this P4 file instead of generating `lcmp.p4`.
    #[arg(long, value_name = "FILE")]
    pub p4: Option<PathBuf>,
}

/// The ASIC, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    /// Tofino 1 (80-byte queue cells).
    Tofino1,
    /// Tofino 2 (176-byte queue cells).
    Tofino2,
}

/// The ECMP hash, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HashArg {
    /// CRC-32 (what Tofino computes).
    Crc32,
    /// MurmurHash3 (refused: Tofino has no murmur3 unit).
    Murmur3,
}

/// Parses `--scheme` with the core's names ([`Scheme::name`], `FromStr`),
/// which `--help` lists with [`Scheme::describe`]; an unknown name is a
/// one-line error. (`lcmp tofino` parses its flag with it; the `lcmp`
/// tool's own `--scheme` flags have the CLI's parser.)
#[derive(Clone, Copy, Debug, Default)]
pub struct SchemeParser;

impl TypedValueParser for SchemeParser {
    type Value = Scheme;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Scheme, clap::Error> {
        StringValueParser::new()
            .try_map(|s| s.parse::<Scheme>())
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Scheme::ALL
                .into_iter()
                .map(|s| PossibleValue::new(s.name()).help(s.describe())),
        ))
    }
}

/// Arguments shared by both subcommands.
#[derive(Clone, Debug, Args)]
pub struct CommonArgs {
    /// An embedded topology (`testbed8`, `bso13`) or a topology JSON file.
    #[arg(long)]
    pub topology: String,
    /// The DCI switch: a DC name (`DC1`) or id.
    #[arg(long)]
    pub switch: String,
    /// Output directory (created if missing).
    #[arg(short, long, default_value = "out")]
    pub out: PathBuf,
    /// The per-switch ECMP hash seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// The ECMP hash.
    #[arg(long, value_enum, default_value_t = HashArg::Crc32)]
    pub hash: HashArg,
    /// The routing scheme.
    #[arg(long, default_value_t = Scheme::Lcmp, value_parser = SchemeParser)]
    pub scheme: Scheme,
    /// Flow-pin register cells, both ways together (clamped to 512 to 131072
    /// and rounded up to a power of two). Default: the target's
    /// (`Target::default_pin_slots`: 131072 on Tofino 1, 65536 on Tofino 2).
    #[arg(long)]
    pub pin_slots: Option<u32>,
    /// The ASIC (sets the queue counters' cell size).
    #[arg(long, value_enum, default_value_t = TargetArg::Tofino1)]
    pub target: TargetArg,
    /// Device port of a core port, `PORT=DEV_PORT` (repeatable; ports not
    /// named map to themselves).
    #[arg(long = "dev-port", value_name = "PORT=DEV_PORT", value_parser = parse_dev_port)]
    pub dev_ports: Vec<(u8, u16)>,
    /// Parameters: a named profile (`paper`, `tuned`; docs/simulator.md).
    #[arg(long, default_value = "paper", value_name = "NAME", value_parser = parse_profile)]
    pub profile: lcmp_decide::Profile,
    /// A default route for destinations that are not LCMP groups,
    /// `A.B.C.D/LEN=DEV_PORT` (repeatable).
    #[arg(long = "route", value_name = "PREFIX/LEN=DEV_PORT", value_parser = parse_route)]
    pub routes: Vec<Route>,
    /// A port's next hop, `DEV_PORT=SRC_MAC,DST_MAC` (repeatable): every
    /// routed device port (LCMP ports and default routes) needs one for
    /// `entries`, `update` and `agent`.
    #[arg(long = "next-hop", value_name = "DEV_PORT=SRC_MAC,DST_MAC", value_parser = parse_next_hop)]
    pub next_hops: Vec<NextHop>,
    /// Give routed ports without `--next-hop` the placeholder MACs
    /// 02:00:00:00:PP:PP and 02:00:00:01:PP:PP (a lab without real next
    /// hops; never on a switch that forwards).
    #[arg(long)]
    pub placeholder_next_hops: bool,
    /// The switch CPU's device port, where control traffic (not IP) and
    /// packets whose TTL expired are sent with an `lcmp_cpu_h` header
    /// (default: the target's PCIe CPU port, 192 on Tofino 1, 0 on
    /// Tofino 2; the SDE's `device_configuration.pcie_cpu_port`).
    #[arg(long, value_name = "DEV_PORT", value_parser = parse_cpu_port)]
    pub cpu_port: Option<u16>,
}

/// Parses a device port (below 512).
fn parse_cpu_port(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .ok()
        .filter(|p| u32::from(*p) < 1 << crate::schema::PORT_BITS)
        .ok_or_else(|| format!("bad device port {s:?} (0 to 511)"))
}

/// Parses `A.B.C.D/LEN=DEV_PORT`.
fn parse_route(s: &str) -> Result<Route, String> {
    let (net, dev) = s.split_once('=').ok_or("expected PREFIX/LEN=DEV_PORT")?;
    let (addr, len) = net.split_once('/').ok_or("expected PREFIX/LEN=DEV_PORT")?;
    let addr: core::net::Ipv4Addr = addr
        .trim()
        .parse()
        .map_err(|_| format!("bad IPv4 prefix {addr:?}"))?;
    let prefix_len: u8 = len
        .trim()
        .parse()
        .map_err(|_| format!("bad prefix length {len:?}"))?;
    let dev_port: u16 = dev
        .trim()
        .parse()
        .map_err(|_| format!("bad device port {dev:?}"))?;
    Ok(Route {
        prefix: addr.to_bits(),
        prefix_len,
        dev_port,
    })
}

/// Parses a MAC address `aa:bb:cc:dd:ee:ff`.
fn parse_mac(s: &str) -> Result<u64, String> {
    let parts: Vec<&str> = s.trim().split(':').collect();
    if parts.len() != 6 {
        return Err(format!("bad MAC address {s:?}"));
    }
    parts.iter().try_fold(0u64, |acc, p| {
        u8::from_str_radix(p, 16)
            .map(|b| (acc << 8) | u64::from(b))
            .map_err(|_| format!("bad MAC address {s:?}"))
    })
}

/// Parses `DEV_PORT=SRC_MAC,DST_MAC`.
fn parse_next_hop(s: &str) -> Result<NextHop, String> {
    let (dev, macs) = s
        .split_once('=')
        .ok_or("expected DEV_PORT=SRC_MAC,DST_MAC")?;
    let (src, dst) = macs
        .split_once(',')
        .ok_or("expected DEV_PORT=SRC_MAC,DST_MAC")?;
    let dev_port: u16 = dev
        .trim()
        .parse()
        .map_err(|_| format!("bad device port {dev:?}"))?;
    Ok(NextHop {
        dev_port,
        src_mac: parse_mac(src)?,
        dst_mac: parse_mac(dst)?,
    })
}

/// Parses a profile name.
fn parse_profile(s: &str) -> Result<lcmp_decide::Profile, String> {
    lcmp_tables::parse_profile(s).map_err(|e| e.to_string())
}

/// Parses `PORT=DEV_PORT`.
fn parse_dev_port(s: &str) -> Result<(u8, u16), String> {
    let (a, b) = s.split_once('=').ok_or("expected PORT=DEV_PORT")?;
    let port: u8 = a.trim().parse().map_err(|_| format!("bad port {a:?}"))?;
    let dev: u16 = b
        .trim()
        .parse()
        .map_err(|_| format!("bad device port {b:?}"))?;
    if usize::from(port) >= lcmp_decide::tables::MAX_PORTS {
        return Err(format!("port {port} is beyond the port range"));
    }
    Ok((port, dev))
}

/// `lcmp tofino entries`.
#[derive(Clone, Debug, Args)]
pub struct EntriesArgs {
    /// Topology, switch, output and hash.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Congestion state: `{"samples": [{"t_us", "port", "queue_bytes"}], "down": [ports]}`.
    #[arg(long)]
    pub state: Option<PathBuf>,
}

/// `lcmp tofino update`.
#[derive(Clone, Debug, Args)]
pub struct UpdateArgs {
    /// Topology, switch, output and hash.
    #[command(flatten)]
    pub common: CommonArgs,
    /// The congestion state the switch holds now (default: idle).
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// The congestion state to move to.
    #[arg(long)]
    pub state: PathBuf,
}

/// A topology by embedded name or file path.
pub fn load_topology(spec: &str) -> Result<Topology, Error> {
    if let Some(t) = Topology::embedded(spec) {
        return Ok(t);
    }
    let path = Path::new(spec);
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Topology::from_json(&text).map_err(Error::Tables)
}

/// The agent for a switch of a topology, with the paper's default build
/// options and the data plane's pick ([`Pick::ScaledHash`]).
///
/// ```
/// use lcmp_decide::{DeciderConfig, HashAlgorithm};
/// let topo = lcmp_tables::Topology::embedded("testbed8").unwrap();
/// let cfg = DeciderConfig::DEFAULT.with_hash(HashAlgorithm::Crc32);
/// let agent = lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, Default::default()).unwrap();
/// assert_eq!(agent.program().sizes.max_k, 6);
/// ```
pub fn agent_for(
    topo: &Topology,
    switch: &str,
    config: DeciderConfig,
    options: ExportOptions,
) -> Result<Agent, Error> {
    agent_for_profile(topo, switch, lcmp_decide::Profile::Paper, config, options)
}

/// [`agent_for`] with a named profile's build options
/// ([`BuildOptions::for_profile`]).
pub fn agent_for_profile(
    topo: &Topology,
    switch: &str,
    profile: lcmp_decide::Profile,
    config: DeciderConfig,
    options: ExportOptions,
) -> Result<Agent, Error> {
    let id = topo.dc_id(switch).ok_or(Error::UnknownSwitch)?;
    let opts = BuildOptions::for_profile(profile);
    let mut tables = build_tables(topo, id, &opts).map_err(Error::Tables)?;
    tables.params.pick = Pick::ScaledHash;
    Agent::new(&tables, config, options)
}

fn config(c: &CommonArgs) -> DeciderConfig {
    DeciderConfig::default()
        .with_scheme(c.scheme)
        .with_seed(c.seed)
        .with_hash(match c.hash {
            HashArg::Crc32 => HashAlgorithm::Crc32,
            HashArg::Murmur3 => HashAlgorithm::Murmur3,
        })
}

/// [`agent`] for the commands that export entries: refuses a routed
/// device port without a next hop unless `--placeholder-next-hops`.
fn routing_agent(c: &CommonArgs) -> Result<Agent, Error> {
    let a = agent(c)?;
    if !c.placeholder_next_hops {
        if let Some(d) = a
            .routed_dev_ports()
            .into_iter()
            .find(|d| !c.next_hops.iter().any(|n| n.dev_port == *d))
        {
            return Err(Error::NoNextHop(d));
        }
    }
    Ok(a)
}

fn agent(c: &CommonArgs) -> Result<Agent, Error> {
    let topo = load_topology(&c.topology)?;
    let mut options = ExportOptions {
        pin_slots: pin_slots(c),
        target: target(c),
        routes: c.routes.clone(),
        next_hops: c.next_hops.clone(),
        cpu_port: c.cpu_port,
        ..ExportOptions::default()
    };
    for &(port, dev) in &c.dev_ports {
        if let Some(slot) = options.dev_ports.get_mut(usize::from(port)) {
            *slot = dev;
        }
    }
    agent_for_profile(&topo, &c.switch, c.profile, config(c), options)
}

/// The pin cells of `c`: given, or the target's default.
fn pin_slots(c: &CommonArgs) -> u32 {
    c.pin_slots.unwrap_or_else(|| target(c).default_pin_slots())
}

fn target(c: &CommonArgs) -> Target {
    match c.target {
        TargetArg::Tofino1 => Target::Tofino1,
        TargetArg::Tofino2 => Target::Tofino2,
    }
}

fn read_state(path: &Path) -> Result<CongestionState, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    CongestionState::from_json(&text)
}

/// The core's command line for the agent of `c` (`lcmp tofino agent` with
/// the same topology, switch and options: every option the agent reads
/// but `--hash`, which the agent refuses unless it is the default).
pub fn core_command(c: &CommonArgs) -> String {
    let mut v = vec![
        "lcmp tofino agent".to_string(),
        format!("--topology {}", c.topology),
        format!("--switch {}", c.switch),
        format!("--seed {}", c.seed),
        format!("--scheme {}", c.scheme.name()),
        format!("--profile {}", c.profile.name()),
        format!("--pin-slots {}", pin_slots(c)),
        format!(
            "--target {}",
            match c.target {
                TargetArg::Tofino1 => "tofino1",
                TargetArg::Tofino2 => "tofino2",
            }
        ),
    ];
    for (p, d) in &c.dev_ports {
        v.push(format!("--dev-port {p}={d}"));
    }
    for r in &c.routes {
        v.push(format!(
            "--route {}/{}={}",
            core::net::Ipv4Addr::from_bits(r.prefix),
            r.prefix_len,
            r.dev_port
        ));
    }
    if c.placeholder_next_hops {
        v.push("--placeholder-next-hops".to_string());
    }
    // The exception table's CPU port is part of the entries the core
    // reconciles on a restart: without it the core would write the
    // target's default back over the exported one.
    if let Some(p) = c.cpu_port {
        v.push(format!("--cpu-port {p}"));
    }
    for n in &c.next_hops {
        let mac = |m: u64| {
            (0..6)
                .rev()
                .map(|i| format!("{:02x}", (m >> (8 * i)) & 0xFF))
                .collect::<Vec<_>>()
                .join(":")
        };
        v.push(format!(
            "--next-hop {}={},{}",
            n.dev_port,
            mac(n.src_mac),
            mac(n.dst_mac)
        ));
    }
    v.join(" ")
}

/// `lcmp_agent.py` for the switch of `c`.
pub fn agent_file(c: &CommonArgs) -> Result<(String, String), Error> {
    let a = agent(c)?;
    Ok((
        crate::render::file_names::AGENT.to_string(),
        crate::render::agent::render(&a, &core_command(c)),
    ))
}

/// The program and entries `lcmp tofino entries` writes.
pub fn export(args: &EntriesArgs) -> Result<(Program, EntrySet), Error> {
    let mut agent = routing_agent(&args.common)?;
    if let Some(path) = &args.state {
        read_state(path)?.apply(&mut agent)?;
    }
    Ok((agent.program(), agent.entries()?))
}

/// The program and the entries before and after, for `lcmp tofino update`.
pub fn export_update(args: &UpdateArgs) -> Result<(Program, EntrySet, EntrySet), Error> {
    let mut agent = routing_agent(&args.common)?;
    if let Some(path) = &args.from {
        read_state(path)?.apply(&mut agent)?;
    }
    let old = agent.entries()?;
    // A fresh agent on the same tables: the new state is what the switch
    // measures next, not a continuation of the old samples.
    let mut agent = routing_agent(&args.common)?;
    read_state(&args.state)?.apply(&mut agent)?;
    Ok((agent.program(), old, agent.entries()?))
}

/// Writes `files` into `dir`, returning the paths.
pub fn write_files(dir: &Path, files: &Files) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (name, text) in &files.files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        out.push(path);
    }
    Ok(out)
}

/// `lcmp tofino compile`: writes the program (unless `--p4`), compiles it
/// for `--target` into `OUT/<target>/`, and prints the program's sha256,
/// the stage counts, the resources the compiler reports and the stamp line
/// for `tests/golden/compile-stamps.json`.
pub fn compile(args: &CompileArgs) -> Result<String, Error> {
    let c = &args.common;
    let p4 = match &args.p4 {
        Some(p) => p.clone(),
        None => {
            let files = program_files(&agent(c)?.program());
            write_files(&c.out, &files)?;
            c.out.join(crate::render::file_names::P4)
        }
    };
    let text = std::fs::read_to_string(&p4).map_err(|source| Error::Io {
        path: p4.clone(),
        source,
    })?;
    let t = target(c);
    let name = match t {
        Target::Tofino1 => "tofino",
        Target::Tofino2 => "tofino2",
    };
    let out = c.out.join(name);
    let s = crate::compile::compile(&args.bf_p4c, &args.p4include, &p4, t, &out)?;
    if let Some(bfas) = &args.bfas {
        crate::compile::assemble(bfas, &out)?;
    }
    let mut o = String::new();
    use core::fmt::Write as _;
    let _ = writeln!(
        o,
        "{}: sha256 {} (the text after its header comment)",
        p4.display(),
        crate::compile::body_sha256(&text)
    );
    let _ = writeln!(
        o,
        "{name}: 0 errors; ingress {} stages, egress {} stages ({})",
        s.ingress_stages,
        s.egress_stages,
        out.display()
    );
    if args.bfas.is_some() {
        let _ = writeln!(
            o,
            "{name}: assembled by bfas, 0 errors ({})",
            out.join("asm").display()
        );
    }
    for (k, v) in &s.resources {
        let _ = writeln!(o, "  {k}: {v}");
    }
    let stamp = crate::compile::TargetStamp {
        target: name.to_string(),
        errors: Some(0),
        ingress_stages: Some(s.ingress_stages),
        egress_stages: Some(s.egress_stages),
    };
    let _ = writeln!(
        o,
        "stamp: {}",
        serde_json::to_string(&stamp).unwrap_or_default()
    );
    Ok(o)
}

/// Runs a `lcmp tofino` command, printing the written paths.
pub fn run(args: TofinoArgs) -> Result<(), Error> {
    let (dir, files) = match &args.command {
        TofinoCommand::Compile(c) => return print(&compile(c)?),
        TofinoCommand::Agent(a) => {
            let stdin = std::io::stdin();
            return match agent_loop(a, stdin.lock(), std::io::stdout().lock()) {
                // The reader of the plans went away: stop quietly.
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    Ok(())
                }
                r => r.map(|_| ()),
            };
        }
        TofinoCommand::P4(c) => (c.out.clone(), program_files(&agent(c)?.program())),
        TofinoCommand::Entries(e) => {
            let (program, entries) = export(e)?;
            let mut files = entry_files(&program, &entries);
            files.files.push(agent_file(&e.common)?);
            (e.common.out.clone(), files)
        }
        TofinoCommand::Update(u) => {
            let (program, old, new) = export_update(u)?;
            (u.common.out.clone(), update_files(&program, &old, &new))
        }
    };
    let mut listing = String::new();
    for p in write_files(&dir, &files)? {
        listing.push_str(&format!("{}\n", p.display()));
    }
    print(&listing)
}

/// Writes `text` to stdout; a closed pipe (`lcmp tofino ... | head`) is
/// not an error (the reader took what it wanted).
fn print(text: &str) -> Result<(), Error> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(source) if source.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: PathBuf::from("<stdout>"),
            source,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod test {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: TofinoArgs,
    }

    fn parse(scheme: &str) -> Result<Scheme, clap::Error> {
        let argv = [
            "lcmp-tofino",
            "p4",
            "--topology",
            "testbed8",
            "--switch",
            "DC1",
        ];
        let cli = Cli::try_parse_from(argv.into_iter().chain(["--scheme", scheme]))?;
        match cli.args.command {
            TofinoCommand::P4(c) => Ok(c.scheme),
            _ => unreachable!("parsed p4"),
        }
    }

    #[test]
    fn schemes_are_the_cores_names_and_others_fail_in_one_line() {
        for s in Scheme::ALL {
            assert_eq!(parse(s.name()).ok(), Some(s));
        }
        let e = parse("wcmp").expect_err("not a scheme");
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains("'wcmp'"), "{text}");
        assert!(first.contains("expected lcmp, ecmp or ucmp"), "{text}");
        let pv: Vec<String> = SchemeParser
            .possible_values()
            .into_iter()
            .flatten()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(pv, ["lcmp", "ecmp", "ucmp"]);
    }

    /// `lcmp-tofino SUB --topology testbed8 --switch DC1 EXTRA...`, parsed.
    fn testbed_command(sub: &str, extra: &[&str]) -> TofinoCommand {
        let argv = [
            "lcmp-tofino",
            sub,
            "--topology",
            "testbed8",
            "--switch",
            "DC1",
        ];
        let cli = Cli::try_parse_from(argv.iter().chain(extra)).expect("parses");
        cli.args.command
    }

    fn entries(extra: &[&str]) -> Result<EntrySet, Error> {
        match testbed_command("entries", extra) {
            TofinoCommand::Entries(e) => export(&e).map(|(_, entries)| entries),
            _ => unreachable!("parsed entries"),
        }
    }

    /// No made-up MACs: entries are refused until every routed device
    /// port (testbed8 DC1's six LCMP ports, and a default route's) has a
    /// next hop, unless placeholders are asked for.
    #[test]
    fn entries_need_a_next_hop_for_every_routed_port() {
        let hop = |d: u16| format!("--next-hop={d}=02:aa:00:00:00:{d:02x},02:bb:00:00:00:{d:02x}");
        let hops: Vec<String> = (0..6).map(hop).collect();
        let mut args: Vec<&str> = hops.iter().map(String::as_str).collect();
        let err = entries(&args[..5]).expect_err("port 5 has none");
        assert!(matches!(err, Error::NoNextHop(5)), "{err}");
        assert!(err.to_string().contains("--next-hop 5="), "{err}");
        let e = entries(&args).expect("every port has one");
        let macs: Vec<u64> = e
            .entries
            .iter()
            .filter(|e| e.table == crate::schema::names::NEXT_HOP)
            .map(|e| e.params[0] >> 32)
            .collect();
        assert_eq!(macs, [0x02aa; 6], "the given MACs, not placeholders");
        args.push("--route=11.0.0.0/8=9");
        assert!(matches!(entries(&args), Err(Error::NoNextHop(9))));
        assert!(entries(&["--placeholder-next-hops"]).is_ok());
    }

    fn agent_args(extra: &[&str]) -> CommonArgs {
        match testbed_command("agent", extra) {
            TofinoCommand::Agent(a) => a.common,
            _ => unreachable!("parsed agent"),
        }
    }

    /// The agent exports with the pin cells, target and CPU port asked
    /// for, and the target's default pin cells when none are.
    #[test]
    fn the_agent_takes_the_pin_cells_target_and_cpu_port_given() {
        let given = agent_args(&[
            "--pin-slots",
            "4096",
            "--target",
            "tofino2",
            "--cpu-port",
            "64",
        ]);
        let a = agent(&given).expect("agent");
        assert_eq!(a.options().pin_slots, 4096);
        assert_eq!(a.options().target, Target::Tofino2);
        assert_eq!(a.options().cpu_port, Some(64));
        for (target, arg) in [(Target::Tofino1, "tofino1"), (Target::Tofino2, "tofino2")] {
            let c = agent_args(&["--target", arg]);
            assert_eq!(pin_slots(&c), target.default_pin_slots(), "{arg}");
            let a = agent(&c).expect("agent");
            assert_eq!(a.options().pin_slots, target.default_pin_slots(), "{arg}");
            assert_eq!(a.options().cpu_port, None);
        }
    }

    /// The agent loop answers every poll with one plan line (after the
    /// idle state's load, with `--load`), counts the polls it applied, and
    /// stops at a poll naming a device port the tables do not have.
    #[test]
    fn the_agent_loop_answers_each_poll_and_refuses_an_unknown_port() {
        let args = |load: bool| AgentArgs {
            common: agent_args(&["--placeholder-next-hops"]),
            load,
        };
        let a = agent(&args(false).common).expect("agent");
        let devs: Vec<u16> = a
            .tables()
            .ports
            .iter()
            .map(|c| a.dev_port(c.id) as u16)
            .collect();
        let (first, last) = (devs[0], devs[devs.len() - 1]);
        let input = format!(
            "{{\"t_us\":10,\"usage_cells\":{{\"{first}\":5}}}}\n\n{{\"t_us\":20,\"down\":[{last}]}}\n{{\"t_us\":30,\"down\":[{last}]}}\n"
        );
        for load in [false, true] {
            let mut out = Vec::new();
            let n = agent_loop(&args(load), input.as_bytes(), &mut out).expect("three polls");
            assert_eq!(n, 3, "three polls applied (the blank line is skipped)");
            let text = String::from_utf8(out).expect("utf-8");
            let lines: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).expect("a JSON line"))
                .collect();
            let polls = &lines[usize::from(load)..];
            assert_eq!(lines.len(), 3 + usize::from(load), "{text}");
            if load {
                assert!(lines[0].get("t_us").is_none(), "the load line has no time");
            }
            let times: Vec<_> = polls.iter().map(|l| l["t_us"].as_u64()).collect();
            assert_eq!(times, [Some(10), Some(20), Some(30)], "{text}");
            // The first poll (every port up) writes only the pin cells'
            // safe gap; the second takes a port down, which changes the
            // entries (and the gap); the third repeats it and writes nothing.
            let whats = |l: &serde_json::Value| -> Vec<String> {
                l["phases"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| p["what"].as_str().unwrap_or_default().to_string())
                    .collect()
            };
            assert_eq!(whats(&polls[0]), ["safe gap of the pin cells"], "{text}");
            let second = whats(&polls[1]);
            assert!(second.iter().any(|w| w == "ports that went down"), "{text}");
            assert!(whats(&polls[2]).is_empty(), "{text}");
        }
        let unknown = devs.iter().max().map_or(0, |d| d + 1);
        let bad = format!("{{\"t_us\":1,\"down\":[{unknown}]}}\n");
        let err = agent_loop(&args(false), bad.as_bytes(), Vec::new()).expect_err("unknown port");
        assert!(matches!(err, Error::PollPort(d) if d == unknown), "{err}");
    }

    /// `lcmp tofino compile` reports the program's hash, the compile's
    /// stages and resources, and the stamp line to paste.
    #[cfg(unix)]
    #[test]
    fn the_compile_command_reports_the_stages_and_the_stamp() {
        let dir = std::env::temp_dir().join(format!("lcmp-cli-compile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let compiler = crate::compile::test::fake_compiler(&dir);
        let out = dir.join("out");
        let (compiler_arg, out_arg) = (compiler.display().to_string(), out.display().to_string());
        let cmd = testbed_command("compile", &["--bf-p4c", &compiler_arg, "-o", &out_arg]);
        let got = match cmd {
            TofinoCommand::Compile(c) => compile(&c),
            _ => unreachable!("parsed compile"),
        };
        let _ = std::fs::remove_dir_all(&dir);
        let text = got.expect("the fake compiles");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("lcmp.p4: sha256 "), "{text}");
        assert!(
            lines[1].starts_with("tofino: 0 errors; ingress 2 stages, egress 1 stages"),
            "{text}"
        );
        assert_eq!(
            lines.last().copied(),
            Some(r#"stamp: {"target":"tofino","errors":0,"ingress_stages":2,"egress_stages":1}"#),
            "{text}"
        );
    }

    /// `lcmp_agent.py` runs the core with [`core_command`]: parsed back, it
    /// is the exporting command's agent, option for option (a lost option
    /// would make the core reconcile the switch to other entries).
    #[test]
    fn the_core_command_parses_back_to_the_same_agent() {
        let hop = "--next-hop=3=02:aa:00:00:00:03,02:bb:00:00:00:03";
        for extra in [
            &[][..],
            &[
                "--seed",
                "7",
                "--scheme",
                "ecmp",
                "--profile",
                "tuned",
                "--pin-slots",
                "4096",
                "--target",
                "tofino2",
                "--dev-port",
                "1=17",
                "--dev-port",
                "2=130",
                "--route",
                "10.1.0.0/16=3",
                "--cpu-port",
                "64",
                "--placeholder-next-hops",
                hop,
            ][..],
        ] {
            let c = agent_args(extra);
            let line = core_command(&c);
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                words.get(..3),
                Some(&["lcmp", "tofino", "agent"][..]),
                "{line}"
            );
            let argv = ["lcmp-tofino"].into_iter().chain(words.into_iter().skip(2));
            let back = match Cli::try_parse_from(argv)
                .expect("the core command parses")
                .args
                .command
            {
                TofinoCommand::Agent(a) => a.common,
                _ => unreachable!("parsed agent"),
            };
            assert_eq!(
                (&back.topology, &back.switch),
                (&c.topology, &c.switch),
                "{line}"
            );
            assert_eq!(
                (back.seed, back.scheme, back.profile),
                (c.seed, c.scheme, c.profile),
                "{line}"
            );
            assert_eq!(back.pin_slots, Some(pin_slots(&c)), "{line}");
            assert_eq!(back.target, c.target, "{line}");
            assert_eq!(back.dev_ports, c.dev_ports, "{line}");
            assert_eq!(back.routes, c.routes, "{line}");
            assert_eq!(back.next_hops, c.next_hops, "{line}");
            assert_eq!(
                back.placeholder_next_hops, c.placeholder_next_hops,
                "{line}"
            );
            assert_eq!(back.cpu_port, c.cpu_port, "{line}");
            let (ours, theirs) = (agent(&c).expect("agent"), agent(&back).expect("agent"));
            assert_eq!(ours.entries().ok(), theirs.entries().ok(), "{line}");
        }
    }
}
