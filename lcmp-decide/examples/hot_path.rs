//! Drives the packet path in a loop, for instruction counting under
//! `valgrind --tool=callgrind` (a load-independent complement to the
//! criterion benches; see docs/performance.md).
//!
//! `cargo run --release -p lcmp-decide --example hot_path -- hit|new N [shared]`
//! (`shared`: the decider reads tables compiled once outside it,
//! `SharedDecider` over `&CompiledTables`, instead of owning them).

use core::net::Ipv4Addr;
use lcmp_decide::*;

#[path = "../benches/common/mod.rs"]
mod common;

fn flow(i: u32) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::from_bits(0x0A01_0000 ^ i),
        Ipv4Addr::new(10, 8, 0, 1),
        (i >> 8) as u16,
        4791,
        17,
    )
}

/// The measured loop over decider `$d`, for either form. Compare the two
/// forms within one build of this binary: with both in `main`, the owning
/// form's loop compiles to 29 more instructions a hit than in the
/// owning-only binary of earlier commits, whatever the library
/// (docs/performance.md, "Shared tables").
macro_rules! drive {
    ($d:expr, $mode:expr, $n:expr) => {{
        let (d, n) = ($d, $n);
        let mut sink = 0u64;
        match $mode {
            "new" => {
                for i in 0..n {
                    let now = Instant::from_ticks(i.wrapping_add(1));
                    sink += d
                        .on_packet(now, &flow(i), GroupId(8))
                        .port()
                        .map_or(0, |p| u64::from(p.0));
                }
            }
            _ => {
                for i in 0..2000 {
                    let _ = d.on_packet(Instant::from_ticks(1), &flow(i), GroupId(8));
                }
                for i in 0..n {
                    sink += d
                        .on_packet(Instant::from_ticks(2), &flow(i % 2000), GroupId(8))
                        .port()
                        .map_or(0, |p| u64::from(p.0));
                }
            }
        }
        println!("{} {n} {sink} {:?}", $mode, d.counters());
    }};
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "hit".into());
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let shared = args.next().as_deref() == Some("shared");
    let t = common::tables(6, if mode == "new" { 0 } else { 2_000_000 });
    let installed = if shared {
        t.compile(8).map(Box::new).and_then(|c| {
            let mut d: Box<SharedDecider<8, 4096, &tables::CompiledTables>> =
                Box::new(SharedDecider::new(DeciderConfig::default()));
            d.use_tables(&c).map(|_| drive!(&mut d, mode.as_str(), n))
        })
    } else {
        let mut d: Box<Decider<8, 4096>> = Box::new(Decider::new(DeciderConfig::default()));
        d.install(&t).map(|()| drive!(&mut d, mode.as_str(), n))
    };
    if let Err(e) = installed {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
