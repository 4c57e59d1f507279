//! The packet model's cost benchmark (issue #23, docs/simulator.md "Cost"):
//! one testbed8 run at 30 % in the artifact's regime (`--preset
//! artifact`, 200 ms of arrivals, seed 1), timed once. Criterion's
//! repeated samples would take most of an hour for a figure whose spread
//! is the machine's load, so this prints the run's wall time, the CPU
//! time of its thread, the events and the events per second, and fails
//! when the run exceeds its 5-minute budget.
//!
//! `cargo bench -p lcmp-sim --bench packet_run` runs it (about 22 s of
//! CPU on a quiet machine, docs/simulator.md "Cost"). Options after
//! `--`: `--scheme NAME` (default `lcmp`), `--seed N` (1), `--load L`
//! (0.3), `--window S` (0.2).
//! Without `--bench` (`cargo test --benches`) it runs a 2 ms window only,
//! so the bench stays built and working.

use std::time::Instant;

use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::packet;

/// The budget of a testbed8 30 % run with 200 ms of arrivals (#23).
const BUDGET_S: f64 = 300.0;

#[derive(Parser)]
struct Bench {
    /// Set by `cargo bench`: the full run.
    #[arg(long)]
    bench: bool,
    /// The scheme of the run.
    #[arg(long, default_value = "lcmp")]
    scheme: String,
    /// The traffic seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The offered load.
    #[arg(long, default_value = "0.3")]
    load: String,
    /// The arrival window, seconds (default 0.2 with `--bench`, else 0.002).
    #[arg(long)]
    window: Option<String>,
}

#[derive(Parser)]
struct Sim {
    #[command(flatten)]
    sim: SimArgs,
}

/// CPU time of the calling thread, seconds (Linux: `/proc/thread-self/schedstat`).
fn thread_cpu_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// A hash of everything the run produced (each flow's FCT and path, the
/// link statistics, the counters but the event count): equal digests
/// before and after a change of the simulator's machinery mean equal
/// outputs.
fn digest(out: &lcmp_sim::engine::RunOutput) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    for f in &out.flows {
        f.fct_us.map(f64::to_bits).hash(&mut h);
        f.path.hash(&mut h);
    }
    format!("{:?}", out.links).hash(&mut h);
    let mut stats = out.packet.clone().unwrap_or_default();
    stats.events = 0;
    format!("{stats:?}").hash(&mut h);
    out.bytes_delivered.hash(&mut h);
    out.end_us.to_bits().hash(&mut h);
    h.finish()
}

fn main() -> Result<(), String> {
    let b = Bench::parse();
    let window = b
        .window
        .clone()
        .unwrap_or_else(|| if b.bench { "0.2" } else { "0.002" }.into());
    let seed = b.seed.to_string();
    let args = [
        "lcmp-sim",
        "--model",
        "packet",
        "--preset",
        "artifact",
        "--load",
        &b.load,
        "--window",
        &window,
        "--schemes",
        &b.scheme,
        "--seed",
        &seed,
        "--seeds",
        "1",
    ];
    let sim = Sim::try_parse_from(args).map_err(|e| e.to_string())?.sim;
    let exp = experiment(&sim).map_err(|e| e.to_string())?;
    let nets = exp.networks().map_err(|e| e.to_string())?;
    let (_, scheme, net) = nets.first().ok_or("no scheme")?;
    let flows = exp.flows(0, b.seed);
    let cfg = exp.run_config(0, *scheme, b.seed);
    let cpu0 = thread_cpu_s();
    let started = Instant::now();
    let out = packet::run(net, &cfg, &flows, exp.windows_us[0]).expect("run");
    let wall = started.elapsed().as_secs_f64();
    let cpu = thread_cpu_s().zip(cpu0).map(|(a, b)| a - b);
    let stats = out.packet.as_ref().ok_or("no packet counters")?;
    let completed = out.flows.iter().filter(|f| f.fct_us.is_some()).count();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "packet_run: testbed8 {:.0} % (artifact preset), {} s window, {}, seed {}",
        b.load.parse::<f64>().unwrap_or(0.0) * 100.0,
        window,
        b.scheme,
        b.seed
    );
    println!(
        "  flows {} (completed {completed}), data packets {}, events {}",
        flows.len(),
        stats.data_packets,
        stats.events
    );
    println!(
        "  wall {wall:.1} s ({:.2} M events/s); CPU {}; load average {}",
        stats.events as f64 / wall / 1e6,
        cpu.map_or("unknown".into(), |c| format!(
            "{c:.1} s ({:.2} M events per CPU-second)",
            stats.events as f64 / c / 1e6
        )),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("  digest {:016x}", digest(&out));
    if completed != flows.len() {
        return Err(format!(
            "{} flows did not complete",
            flows.len() - completed
        ));
    }
    if b.bench && wall > BUDGET_S {
        return Err(format!(
            "the run took {wall:.0} s, over its {BUDGET_S:.0} s budget"
        ));
    }
    Ok(())
}
