//! Size probe: the smallest image that exercises the whole decision core
//! (install, sample, set_port_up, on_packet, gc) on opaque inputs
//! (`black_box`), so nothing is folded away. `size-probe .text` minus
//! `size-baseline .text` is the flash the LCMP core takes in a firmware
//! (docs/firmware.md); built with `--features panic-never` it also proves
//! the core alone panic-free, without the blob and trace decoders.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug::{self, EXIT_FAILURE, EXIT_SUCCESS};
#[cfg(feature = "log")]
use defmt_semihosting as _;
use lcmp_decide::{Addresses, Decider, DeciderConfig, FlowKey, GroupId, Instant, PortId, Tables};
#[cfg(feature = "panic-never")]
use panic_never as _;
use static_cell::StaticCell;

/// The firmware's decider shape (64 ports, 1024 flow slots).
static DECIDER: StaticCell<Decider<64, 1024>> = StaticCell::new();

#[entry]
fn main() -> ! {
    let tables: Tables = black_box(Tables::paper_defaults());
    let Some(d) = DECIDER.try_init_with(|| Decider::new(black_box(DeciderConfig::default())))
    else {
        debug::exit(EXIT_FAILURE);
        #[allow(clippy::empty_loop)]
        loop {}
    };
    let installed = d.install(&tables).is_ok();
    for i in 0..black_box(4u32) {
        let now = Instant::from_ticks(black_box(i));
        black_box(d.sample(now, PortId(black_box(0)), black_box(1000)).is_ok());
        black_box(d.set_port_up(PortId(black_box(1)), black_box(true)).is_ok());
        let key = FlowKey {
            addrs: Addresses::V4 {
                src: black_box(1),
                dst: black_box(2),
            },
            sport: black_box(3),
            dport: 4791,
            proto: 17,
        };
        black_box(d.on_packet(now, &key, GroupId(black_box(8))));
        black_box(d.gc(now, black_box(8)));
    }
    black_box(installed);
    debug::exit(EXIT_SUCCESS);
    #[allow(clippy::empty_loop)]
    loop {}
}

/// Without `panic-never`: exit with failure.
#[cfg(not(feature = "panic-never"))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    debug::exit(EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}
