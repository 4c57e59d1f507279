//! The measured loop of `hot_path` and `hot_path_shared`: one loop for
//! both decider forms. Each form has its own example binary so that each
//! loop compiles as it would alone (with both forms in one `main`, the
//! owning loop compiled to 29 more instructions a hit: code layout, not
//! the library; docs/performance.md, "Shared tables").

use lcmp_decide::flow_cache::SlotStorage;
use lcmp_decide::tables::TablesSlot;
use lcmp_decide::*;

use super::common::flow;

/// The arguments: `hit|new N`.
pub(crate) fn args() -> (String, u32) {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "hit".into());
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    (mode, n)
}

/// `hit`: 2 000 flows pinned, then `n` packets of them; `new`: `n` new
/// flows; `sample`: `n` queue samples, round the six ports, of depths
/// that sweep every queue and trend level (empty to over the buffer,
/// rising and falling). Prints the counters so the loop is not optimised
/// away.
#[inline(always)]
pub(crate) fn drive<const P: usize, S: SlotStorage, T: TablesSlot>(
    d: &mut DeciderWith<P, S, T>,
    mode: &str,
    n: u32,
) {
    let mut sink = 0u64;
    match mode {
        "new" => {
            for i in 0..n {
                let now = Instant::from_ticks(i.wrapping_add(1));
                sink += d
                    .on_packet(now, &flow(i), GroupId(8))
                    .port()
                    .map_or(0, |p| u64::from(p.0));
            }
        }
        "sample" => {
            for i in 0..n {
                let now = Instant::from_ticks(i.wrapping_mul(100));
                // 0 to 7.5 GB in 16 steps, then back: every level of the
                // testbed's 5 GB buffers, and trends both ways.
                let step = u64::from(i / 6 % 32);
                let depth = step.min(32 - step) * 468_750_000;
                let port = PortId((i % 6) as u8);
                sink += u64::from(d.sample(now, port, depth).is_ok());
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
    println!("{mode} {n} {sink} {:?}", d.counters());
}
