//! Drives the packet path in a loop, for instruction counting under
//! `valgrind --tool=callgrind` (a load-independent complement to the
//! criterion benches; see docs/performance.md; scripts/test.d/
//! 15-instructions.sh checks it against a baseline).
//!
//! `cargo run --release -p lcmp-decide --example hot_path -- hit|new N`
//! (a decider that owns its tables; `hot_path_shared` for one over shared
//! tables).

use lcmp_decide::*;

#[path = "../benches/common/mod.rs"]
mod common;
#[path = "hot_loop/mod.rs"]
mod hot_loop;

fn main() {
    let (mode, n) = hot_loop::args();
    let t = common::tables(6, if mode == "new" { 0 } else { 2_000_000 });
    let mut d: Box<Decider<8, 4096>> = Box::new(Decider::new(DeciderConfig::default()));
    if let Err(e) = d.install(&t) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    hot_loop::drive(&mut d, &mode, n);
}
