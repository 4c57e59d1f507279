//! `hot_path` for a decider over shared tables: `SharedDecider` reading
//! tables compiled once outside it (`&CompiledTables`), for instruction
//! counting under callgrind (docs/performance.md, "Shared tables").
//!
//! `cargo run --release -p lcmp-decide --example hot_path_shared -- hit|new N`

use lcmp_decide::*;

#[path = "../benches/common/mod.rs"]
mod common;
#[path = "hot_loop/mod.rs"]
mod hot_loop;

fn main() {
    let (mode, n) = hot_loop::args();
    let t = common::tables(6, if mode == "new" { 0 } else { 2_000_000 });
    let run = t.compile(8).map(Box::new).and_then(|c| {
        let mut d: Box<SharedDecider<8, 4096, &tables::CompiledTables>> =
            Box::new(SharedDecider::new(DeciderConfig::default()));
        d.use_tables(&c).map(|_| hot_loop::drive(&mut d, &mode, n))
    });
    if let Err(e) = run {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
