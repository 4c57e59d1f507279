//! `lcmp replay`: a trace through the core, one line per decision, then the
//! digest and the counters.

use core::fmt::Write as _;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use clap::Args;
use lcmp_decide::{Addresses, DeciderConfig, FlowKey, Reason, Scheme};
use lcmp_tables::build_tables;
use lcmp_tables::replay::{
    encode_trace_vec, parse_csv, replay, DecisionRecord, ReplayDecider, TraceEvent, TraceReader,
    TRACE_MAGIC,
};

use crate::tables::BuildArgs;
use crate::{print, read_file, Failure, SchemeParser};

/// `lcmp replay`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// The trace: CSV, or an encoded trace (starts with `LCMR`).
    trace: PathBuf,
    /// Routing scheme.
    #[arg(long, value_parser = SchemeParser, default_value_t = Scheme::default())]
    scheme: Scheme,
    /// ECMP hash seed.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Print only the digest and the counters.
    #[arg(short, long)]
    quiet: bool,
    /// Also write the trace in the compact encoding (for firmware images).
    #[arg(long, value_name = "FILE")]
    encode: Option<PathBuf>,
}

fn flow_text(f: &FlowKey) -> String {
    let (src, dst) = match f.addrs {
        Addresses::V4 { src, dst } => (
            IpAddr::V4(Ipv4Addr::from_bits(src)),
            IpAddr::V4(Ipv4Addr::from_bits(dst)),
        ),
        Addresses::V6 { src, dst } => (
            IpAddr::V6(Ipv6Addr::from_bits(src)),
            IpAddr::V6(Ipv6Addr::from_bits(dst)),
        ),
    };
    format!("{src},{dst},{},{},{}", f.sport, f.dport, f.proto)
}

/// One decision line: `index t_us flow dst_dc kind port reason`.
fn line(r: &DecisionRecord) -> String {
    let port = r
        .decision
        .port()
        .map_or_else(|| "-".into(), |p| p.0.to_string());
    let reason = r.reason().map_or("-", Reason::name);
    format!(
        "{} t_us={} flow={} dst_dc={} {} port={} reason={}\n",
        r.index,
        r.t_us,
        flow_text(&r.flow),
        r.group.0,
        r.kind_name(),
        port,
        reason
    )
}

pub(crate) fn run(a: ReplayArgs) -> Result<(), Failure> {
    let topo = a.build.topology()?;
    let switch = a.build.switch(&topo)?;
    let opts = a.build.options()?;
    let tables = build_tables(&topo, switch, &opts).map_err(|e| e.to_string())?;
    let bytes = read_file(&a.trace)?;
    let path = a.trace.display();
    let events: Vec<TraceEvent> = if bytes.starts_with(&TRACE_MAGIC) {
        let reader = TraceReader::new(&bytes).map_err(|e| format!("{path}: {e}"))?;
        reader
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{path}: {e}"))?
    } else {
        let text = String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8 text"))?;
        parse_csv(&text, Some(&topo)).map_err(|e| format!("{path}: {e}"))?
    };
    if let Some(out) = &a.encode {
        let enc = encode_trace_vec(&events).map_err(|e| e.to_string())?;
        std::fs::write(out, enc).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let config = DeciderConfig::default()
        .with_scheme(a.scheme)
        .with_seed(a.seed);
    let mut decider = Box::new(ReplayDecider::new(config));
    decider.install(&tables).map_err(|e| e.to_string())?;
    let mut text = String::new();
    let quiet = a.quiet;
    let summary = replay(&mut *decider, events.iter().copied().map(Ok), |r| {
        if !quiet {
            text.push_str(&line(r));
        }
    })
    .map_err(|e| format!("{path}: {e}"))?;
    let c = decider.counters();
    let _ = writeln!(text, "digest {:#018x}", summary.digest);
    let _ = writeln!(
        text,
        "events={} decisions={} packets={} hits={} new_flows={} failovers={} unpinned={} \
         no_route={} min_cost_fallbacks={} ecmp_fallbacks={} samples={}",
        summary.events,
        summary.decisions,
        c.packets,
        c.hits,
        c.new_flows,
        c.failovers,
        c.unpinned,
        c.no_route,
        c.min_cost_fallbacks,
        c.ecmp_fallbacks,
        c.samples
    );
    print(&text)
}
