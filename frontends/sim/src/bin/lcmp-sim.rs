//! `lcmp-sim`: the simulator on its own (the same as `lcmp sim`).

use clap::Parser;

/// Flow-level LCMP simulator.
#[derive(Parser)]
#[command(
    name = "lcmp-sim",
    version,
    about = "Flow-level inter-DC simulator driven by the real LCMP core"
)]
struct Cli {
    #[command(flatten)]
    sim: lcmp_sim::cli::SimArgs,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = lcmp_sim::cli::run(&cli.sim) {
        eprintln!("lcmp-sim: {e}");
        std::process::exit(1);
    }
}
