//! `lcmp tofino ...` as a standalone binary (the same arguments), for the
//! test script and for use before the `lcmp` tool links this crate:
//! `cargo run -p lcmp-tofino --example tofino_export -- entries --topology testbed8 --switch DC1 -o out/`.

use clap::Parser;

/// LCMP on Tofino: P4 program and table entries.
#[derive(Debug, Parser)]
#[command(name = "lcmp-tofino")]
struct Cli {
    #[command(flatten)]
    args: lcmp_tofino::cli::TofinoArgs,
}

fn main() -> std::process::ExitCode {
    match lcmp_tofino::cli::run(Cli::parse().args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lcmp tofino: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
