//! `lcmp tables`: build a switch's tables, write the blob, print JSON or a
//! summary; `lcmp tables verify FILE`: decode and check a blob (and, with
//! `--pubkey`, a signed blob's signature); `keygen` and `sign` for signed
//! blobs (`crate::keys`).

use core::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use lcmp_tables::blob::{decode_blob, encode_blob_vec};
use lcmp_tables::report::TablesReport;
use lcmp_tables::{
    build_tables, parse_profile, parse_queue_thresholds, BuildOptions, Fraction, PathMetric,
    Saturation, Topology,
};

use crate::{print, read_file, read_text, Failure};

/// `lcmp tables`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct TablesArgs {
    #[command(subcommand)]
    action: Option<TablesAction>,
    #[command(flatten)]
    build: BuildArgs,
    /// Write the versioned binary blob to this file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the tables as JSON (with derived thresholds and scores).
    #[arg(long)]
    json: bool,
    /// Generation number written into the blob.
    #[arg(long, default_value_t = 1)]
    generation: u64,
}

#[derive(Debug, Subcommand)]
enum TablesAction {
    /// Decode a blob and print a summary, or its error in one line. A
    /// signed blob needs `--pubkey`: its signature, key id and generation
    /// are checked and reported.
    Verify {
        /// The blob file.
        file: PathBuf,
        /// Print the decoded tables as JSON instead of a summary.
        #[arg(long)]
        json: bool,
        /// A trusted public key (PEM); twice for two (key rotation). The
        /// blob must then be signed by one of them.
        #[arg(long, value_name = "FILE")]
        pubkey: Vec<PathBuf>,
        /// The installed generation: a signed blob must be newer.
        #[arg(long, default_value_t = 0, value_name = "GEN")]
        installed: u64,
        /// Check a signed blob's scope as the device of this topology and
        /// `--switch` would (without it, the scope is reported, not checked).
        #[arg(long, value_name = "NAME|FILE", requires = "switch")]
        topology: Option<String>,
        /// The device's switch, with `--topology`.
        #[arg(long, value_name = "DC", requires = "topology")]
        switch: Option<String>,
    },
    /// Print a device's scope (what `sign` binds a blob to, and what the
    /// device is configured with): 40 hex digits, the switch id
    /// (little-endian), two zero bytes and the topology's digest.
    Scope {
        /// `testbed8`, `bso13`, or a topology JSON file.
        #[arg(long, value_name = "NAME|FILE")]
        topology: String,
        /// The switch: a DC name (`DC1`) or id.
        #[arg(long, value_name = "DC")]
        switch: String,
    },
    /// Make an Ed25519 key pair: a PKCS#8 PEM private key (as `openssl
    /// genpkey -algorithm ed25519` writes) and its PEM public key. Never
    /// overwrites a file.
    Keygen {
        /// The private key file to create (mode 0600).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The public key file to create.
        #[arg(long, value_name = "FILE")]
        pubkey: PathBuf,
    },
    /// Sign a table blob with a private key (PKCS#8 PEM), bound to the
    /// device it was built for (its topology and switch, the blob's scope)
    /// and optionally to an expiry.
    Sign {
        /// The private key.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The topology the blob was built from (`testbed8`, `bso13`, or a
        /// JSON file).
        #[arg(long, value_name = "NAME|FILE")]
        topology: String,
        /// The switch the blob was built for.
        #[arg(long, value_name = "DC")]
        switch: String,
        /// Unix seconds after which a device with a clock refuses the blob
        /// (sign a fresh one before then; a withheld update then shows).
        #[arg(long, value_name = "UNIX_SECONDS")]
        not_after: Option<u64>,
        /// The (unsigned) blob to sign.
        file: PathBuf,
        /// The signed blob to write.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
}

/// The path metric on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Metric {
    /// Egress link delay and capacity (the paper's artifact).
    FirstHop,
    /// Best minimum-hop path via the neighbour: summed delay, bottleneck.
    Path,
}

/// Topology, switch and table-building options (shared with `replay`).
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// `testbed8`, `bso13`, or a topology JSON file.
    #[arg(long, required = true, value_name = "NAME|FILE")]
    pub(crate) topology: Option<String>,
    /// The switch: a DC name (`DC1`) or id.
    #[arg(long, required = true, value_name = "DC")]
    pub(crate) switch: Option<String>,
    /// Path metric.
    #[arg(long, value_enum, default_value = "first-hop")]
    metric: Metric,
    /// Parameters: a named profile (`paper`, `tuned`; docs/simulator.md),
    /// which the options below then change [default: paper].
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Delay saturation shift (`1 << s` delay units score 255), or `auto`
    /// [default: the profile's: 5 (paper), 10 (tuned)].
    #[arg(long, value_name = "SHIFT|auto")]
    saturation: Option<String>,
    /// Delay unit, microseconds.
    #[arg(long, default_value_t = 1000, value_name = "US")]
    delay_unit_us: u64,
    /// Number of levels N.
    #[arg(long, default_value_t = 10)]
    levels: usize,
    /// Top capacity class, bits per second.
    #[arg(long, default_value_t = 400_000_000_000, value_name = "BPS")]
    top_capacity_bps: u64,
    /// Capacity thresholds as fractions of the top class, one per level,
    /// comma-separated (e.g. `10%,20%,...` or `0.1,0.2,...`).
    #[arg(long, value_delimiter = ',', value_name = "FRACTIONS")]
    capacity_thresholds: Option<Vec<String>>,
    /// The cut: candidates whose fused cost reaches this fraction of 255
    /// are dropped (default 0.8 = 204).
    #[arg(long, value_name = "FRACTION")]
    cut: Option<String>,
    /// High water mark of the duration penalty (default 0.8 = 204).
    #[arg(long, value_name = "FRACTION")]
    high_water: Option<String>,
    /// Low water mark of the duration penalty (default 0.4 = 102).
    #[arg(long, value_name = "FRACTION")]
    low_water: Option<String>,
    /// Cost band: candidates costing more than the cheapest plus K are cut
    /// too (0-255; 255 cuts nothing) [default: the profile's: 255 (paper),
    /// 8 (tuned)].
    #[arg(long, value_name = "K")]
    band: Option<String>,
    /// Explicit queue thresholds of every port: N non-decreasing byte counts
    /// (`0,500MB,...`), or `wrap32:BYTES` (a buffer's thresholds stored in
    /// 32 bits, as the paper's artifact stores them) [default: each port's
    /// buffer * i / N].
    #[arg(long, value_name = "LIST|wrap32:BYTES")]
    queue_thresholds: Option<String>,
}

fn fraction(name: &str, text: &str) -> Result<Fraction, Failure> {
    Fraction::parse(text).map_err(|e| format!("--{name} {text:?}: {e}"))
}

impl BuildArgs {
    /// The topology (embedded name or JSON file).
    pub(crate) fn topology(&self) -> Result<Topology, Failure> {
        load_topology(self.topology.as_deref().ok_or("--topology is required")?)
    }

    /// The switch's DC id in `topo`.
    pub(crate) fn switch(&self, topo: &Topology) -> Result<u16, Failure> {
        switch_id(topo, self.switch.as_deref().ok_or("--switch is required")?)
    }

    /// The build options.
    pub(crate) fn options(&self) -> Result<BuildOptions, Failure> {
        let profile = match &self.profile {
            Some(name) => parse_profile(name).map_err(|e| format!("--profile {name:?}: {e}"))?,
            None => lcmp_decide::Profile::Paper,
        };
        let mut o = BuildOptions {
            metric: match self.metric {
                Metric::FirstHop => PathMetric::FirstHop,
                Metric::Path => PathMetric::Path,
            },
            delay_unit_us: self.delay_unit_us,
            levels: self.levels,
            top_capacity_bps: self.top_capacity_bps,
            ..BuildOptions::for_profile(profile)
        };
        if let Some(s) = &self.saturation {
            o.saturation = match s.as_str() {
                "auto" => Saturation::Auto,
                s => Saturation::Shift(
                    s.parse::<u8>()
                        .ok()
                        .filter(|&v| v < 32)
                        .ok_or_else(|| format!("--saturation {s:?}: expected 0..=31 or auto"))?,
                ),
            };
        }
        if let Some(k) = &self.band {
            o.params.band = k
                .trim()
                .parse::<u8>()
                .map_err(|_| format!("--band {k:?}: expected 0..=255"))?;
        }
        if let Some(q) = &self.queue_thresholds {
            o.queue_thresholds = Some(
                parse_queue_thresholds(q, self.levels)
                    .map_err(|e| format!("--queue-thresholds {q:?}: {e}"))?,
            );
        }
        if let Some(list) = &self.capacity_thresholds {
            let fr: Result<Vec<_>, _> = list
                .iter()
                .map(|t| fraction("capacity-thresholds", t))
                .collect();
            o.capacity_fractions = Some(fr?);
        }
        if let Some(t) = &self.cut {
            o.params.cut = fraction("cut", t)?.score();
        }
        if let Some(t) = &self.high_water {
            o.params.high_water = fraction("high-water", t)?.score();
        }
        if let Some(t) = &self.low_water {
            o.params.low_water = fraction("low-water", t)?.score();
        }
        Ok(o)
    }
}

pub(crate) fn run(a: TablesArgs) -> Result<(), Failure> {
    match a.action {
        Some(TablesAction::Verify {
            file,
            json,
            pubkey,
            installed,
            topology,
            switch,
        }) => {
            let scope = match (topology, switch) {
                (Some(t), Some(s)) => {
                    let topo = load_topology(&t)?;
                    Some(topo.scope(switch_id(&topo, &s)?))
                }
                _ => None,
            };
            return verify(&file, json, &pubkey, installed, scope);
        }
        Some(TablesAction::Keygen { key, pubkey }) => return crate::keys::keygen(&key, &pubkey),
        Some(TablesAction::Sign {
            key,
            topology,
            switch,
            not_after,
            file,
            output,
        }) => {
            let topo = load_topology(&topology)?;
            let claims = lcmp_tables::blob::signed::Claims {
                scope: topo.scope(switch_id(&topo, &switch)?),
                not_after,
            };
            return crate::keys::sign(&key, &file, &output, &claims);
        }
        Some(TablesAction::Scope { topology, switch }) => {
            let topo = load_topology(&topology)?;
            let scope = topo.scope(switch_id(&topo, &switch)?);
            let hex: String = scope
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            return print(&format!("{hex}\n"));
        }
        None => {}
    }
    let topo = a.build.topology()?;
    let switch = a.build.switch(&topo)?;
    let opts = a.build.options()?;
    let tables = build_tables(&topo, switch, &opts).map_err(|e| e.to_string())?;
    let report = TablesReport::new(&tables, a.generation, Some((&topo, switch)))
        .map_err(|e| e.to_string())?;
    if let Some(path) = &a.output {
        let blob = encode_blob_vec(&tables, a.generation).map_err(|e| e.to_string())?;
        std::fs::write(path, &blob).map_err(|e| format!("{}: {e}", path.display()))?;
        if !a.json {
            print(&format!(
                "wrote {} ({} bytes)\n",
                path.display(),
                blob.len()
            ))?;
        }
    }
    if a.json {
        print(&format!("{}\n", report.to_json()))
    } else if a.output.is_none() {
        print(&summary(&report))
    } else {
        Ok(())
    }
}

/// A topology by embedded name or JSON file.
pub(crate) fn load_topology(name: &str) -> Result<Topology, Failure> {
    if let Some(t) = Topology::embedded(name) {
        return Ok(t);
    }
    let path = PathBuf::from(name);
    if !path.exists() {
        return Err(format!(
            "--topology {name:?}: neither an embedded topology (testbed8, bso13) nor a file"
        ));
    }
    let text = read_text(&path)?;
    Topology::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The DC id of `name` (a DC name or id) in `topo`.
pub(crate) fn switch_id(topo: &Topology, name: &str) -> Result<u16, Failure> {
    topo.dc_id(name)
        .ok_or_else(|| format!("--switch {name:?}: no such DC in topology {}", topo.name))
}

fn verify(
    path: &std::path::Path,
    json: bool,
    pubkeys: &[PathBuf],
    installed: u64,
    scope: Option<lcmp_tables::blob::signed::Scope>,
) -> Result<(), Failure> {
    let bytes = read_file(path)?;
    let checked = crate::keys::check(path, &bytes, pubkeys, installed, scope)?;
    let (inner, note) = match &checked {
        Some(c) => (&c.inner[..], format!("{}, ", c.note)),
        None => (&bytes[..], String::new()),
    };
    let blob = decode_blob(inner).map_err(|e| format!("{}: {e}", path.display()))?;
    let report = TablesReport::new(&blob.tables, blob.generation, None)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if json {
        return print(&format!("{}\n", report.to_json()));
    }
    let t = &blob.tables;
    print(&format!(
        "ok: {}: {note}format {}, generation {}, {} bytes, {} levels, {} ports, {} groups\n",
        path.display(),
        blob.version,
        blob.generation,
        bytes.len(),
        t.levels.len(),
        t.ports.len(),
        t.groups.len()
    ))
}

/// The human summary of a build.
fn summary(r: &TablesReport) -> String {
    let mut s = String::new();
    if let Some(o) = &r.origin {
        let _ = writeln!(
            s,
            "topology {}, switch {} (id {})",
            o.topology, o.switch_name, o.switch
        );
    }
    let p = &r.params;
    let band = if p.band == u8::MAX {
        String::from("none")
    } else {
        p.band.to_string()
    };
    let _ = writeln!(
        s,
        "levels {:?}; delay shift {}; cut {}; band {}; water marks {}/{}",
        r.levels, p.delay_shift, p.cut, band, p.high_water, p.low_water
    );
    let _ = writeln!(
        s,
        "capacity thresholds (bps) {:?}",
        r.capacity_thresholds_bps
    );
    for port in &r.ports {
        let _ = writeln!(
            s,
            "port {:>2} -> DC {:<3} {:>4} Gbps, buffer {} B",
            port.port,
            port.neighbor.map_or_else(|| "?".into(), |n| n.to_string()),
            port.rate_bps / 1_000_000_000,
            port.buffer_bytes
        );
    }
    for g in &r.groups {
        let _ = write!(s, "group {} ({}):", g.id, g.name.as_deref().unwrap_or("?"));
        for c in &g.candidates {
            let _ = write!(
                s,
                " port {} [delay {} cap {} C_path {}]",
                c.port, c.delay_score, c.cap_score, c.c_path
            );
        }
        s.push('\n');
    }
    s
}
