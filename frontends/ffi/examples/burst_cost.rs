//! What the C ABI's burst costs over the core's own (docs/performance.md,
//! "The C ABI's burst"): the same 61 %-full flow cache of SLOTS slots
//! (default 1 048 576), the same random order of established flows, in
//! bursts of 32, through
//!
//! * `lcmp_on_packets` (the `extern "C"` function a C caller links), and
//! * `DeciderRef::<64>::on_packets` and `DeciderRef::<8>::on_packets` (the
//!   core, as `cargo bench -p lcmp-decide --bench burst` measures it).
//!
//! `cargo run --release -p lcmp-ffi --example burst_cost [SLOTS [ROUNDS [c|core]]]`
//! (the last argument runs only one side: for instruction counts under
//! `valgrind --tool=callgrind`, which do not depend on the machine's load)
//! prints the median ns per packet of each, in the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`: time the thread was descheduled on a
//! loaded machine does not count; its cache and TLB losses still do).
//! With `BURST_COST_WRITE_BLOB=PATH` it only writes its tables' blob to
//! PATH (testbed8 DC1's group 8: `lcmp-bench`'s BLOB) and exits.
#![allow(
    missing_docs,
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

use core::hint::black_box;
use core::net::Ipv4Addr;
use core::ptr;

/// The calling thread's CPU time, ns (Linux `clock_gettime`).
fn cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (ts.sec as u64) * 1_000_000_000 + ts.nsec as u64
}

struct Clock(u64);

impl Clock {
    fn now() -> Self {
        Clock(cpu_ns())
    }
    fn elapsed_ns(&self) -> u64 {
        cpu_ns() - self.0
    }
}

use lcmp_decide::flow_cache::BLOCK_SLOTS;
use lcmp_decide::{
    Candidate, DeciderConfig, DeciderRef, Decision, FlowKey, Group, GroupId, Instant, PortConfig,
    PortId, SlotBlock, Tables,
};
use lcmp_ffi::*;

/// testbed8's DC1 candidates towards DC 8 (those of the core's benches).
fn tables() -> Tables {
    let mut t = Tables::paper_defaults();
    t.params.idle_timeout_ticks = 2_000_000;
    let mut g = Group {
        id: GroupId(8),
        candidates: heapless::Vec::new(),
    };
    let cands = [
        (200u64, 25u32),
        (200, 250),
        (100, 10),
        (100, 100),
        (25, 5),
        (25, 50),
    ];
    for (i, (gbps, ms)) in cands.iter().enumerate() {
        let id = PortId(i as u8);
        t.ports
            .push(PortConfig {
                id,
                rate_bps: gbps * 1_000_000_000,
                buffer_bytes: 5_000_000_000,
            })
            .unwrap();
        g.candidates
            .push(Candidate {
                port: id,
                delay_units: *ms,
                capacity_bps: gbps * 1_000_000_000,
            })
            .unwrap();
    }
    t.groups.push(g).unwrap();
    t
}

fn src(i: u32) -> u32 {
    0x0A00_0000 ^ i.wrapping_mul(0x9E37_79B9)
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let slots: usize = args.next().map_or(1 << 20, |s| s.parse().expect("SLOTS"));
    let rounds: usize = args.next().map_or(9, |s| s.parse().expect("ROUNDS"));
    let only = args.next();
    let run_c = only.as_deref() != Some("core");
    let run_core = only.as_deref() != Some("c");
    let n = slots * 61 / 100 / 32 * 32;
    let blob = ::lcmp_tables::blob::encode_blob_vec(&tables(), 1).unwrap();
    // The same tables as the BLOB argument of frontends/dpdk's lcmp-bench.
    if let Ok(path) = std::env::var("BURST_COST_WRITE_BLOB") {
        return std::fs::write(path, &blob).expect("BURST_COST_WRITE_BLOB");
    }

    // A random order over the flows (xorshift64*), the same for every path.
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut x = 0xF10Eu64;
    for i in (1..n).rev() {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let j = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let c_packets: Vec<lcmp_packet> = order
        .iter()
        .map(|&i| lcmp_packet {
            flow: lcmp_flow_v4(src(i), 0x0A08_0001, (i >> 16) as u16, 4791, 17),
            group: 8,
        })
        .collect();
    let keys: Vec<(FlowKey, GroupId)> = order
        .iter()
        .map(|&i| {
            let k = FlowKey::v4(
                Ipv4Addr::from_bits(src(i)),
                Ipv4Addr::new(10, 8, 0, 1),
                (i >> 16) as u16,
                4791,
                17,
            );
            (k, GroupId(8))
        })
        .collect();

    // The C ABI.
    let mut mem = vec![Line([0; 64]); lcmp_decider_size(slots).div_ceil(64)];
    let mut d = ptr::null_mut();
    let mut out = [lcmp_decision::default(); 32];
    let mut c_times = vec![0.0];
    if run_c {
        c_times.clear();
    }
    unsafe {
        if !run_c {
            return core_only(slots, &keys, rounds);
        }
        assert_eq!(
            lcmp_decider_init(
                mem.as_mut_ptr().cast(),
                mem.len() * 64,
                slots,
                ptr::null(),
                &mut d
            ),
            LCMP_OK
        );
        assert_eq!(lcmp_install(d, blob.as_ptr(), blob.len()), LCMP_OK);
        for b in c_packets.chunks(32) {
            lcmp_on_packets(d, 10, b.as_ptr(), b.len(), out.as_mut_ptr());
        }
        for _ in 0..rounds {
            let t = Clock::now();
            for b in c_packets.chunks(32) {
                black_box(lcmp_on_packets(
                    d,
                    20,
                    black_box(b.as_ptr()),
                    32,
                    out.as_mut_ptr(),
                ));
            }
            c_times.push(t.elapsed_ns() as f64 / n as f64);
        }
        let mut c = lcmp_counters::default();
        lcmp_get_counters(d, &mut c);
        assert_eq!(c.hits as usize, n * rounds, "every packet a hit");
    }
    drop(mem);

    fn core_only(slots: usize, keys: &[(FlowKey, GroupId)], rounds: usize) {
        let t = median(core::<64>(slots, keys, rounds));
        println!("DeciderRef::<64>::on_packets   {t:6.1}");
    }
    // The core, 64 and 8 ports.
    fn core<const P: usize>(slots: usize, keys: &[(FlowKey, GroupId)], rounds: usize) -> Vec<f64> {
        let mut blocks = vec![SlotBlock::EMPTY; slots / BLOCK_SLOTS];
        let mut d = DeciderRef::<P>::with_slots(DeciderConfig::default(), &mut blocks).unwrap();
        d.install(&tables()).unwrap();
        let mut out = [Decision::Hit(PortId(0)); 32];
        for b in keys.chunks(32) {
            d.on_packets(Instant::from_ticks(10), b, &mut out);
        }
        let mut times = Vec::new();
        for _ in 0..rounds {
            let t = Clock::now();
            for b in keys.chunks(32) {
                black_box(d.on_packets(Instant::from_ticks(20), black_box(b), &mut out));
            }
            times.push(t.elapsed_ns() as f64 / keys.len() as f64);
        }
        assert_eq!(d.counters().hits as usize, keys.len() * rounds);
        times
    }
    let (r64, r8) = if run_core {
        (
            core::<64>(slots, &keys, rounds),
            core::<8>(slots, &keys, rounds),
        )
    } else {
        (vec![0.0], vec![0.0])
    };
    let (c, r64, r8) = (median(c_times), median(r64), median(r8));
    println!(
        "{slots} slots, {n} established flows, {rounds} rounds, bursts of 32 (ns/packet, median)"
    );
    println!(
        "lcmp_on_packets (C ABI)        {c:6.1}  ({:+.0} % over the core's 64-port burst)",
        (c / r64 - 1.0) * 100.0
    );
    println!("DeciderRef::<64>::on_packets   {r64:6.1}");
    println!("DeciderRef::<8>::on_packets    {r8:6.1}");
}
