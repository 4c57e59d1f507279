//! Size baseline: `size-probe` without the decision core (the same runtime,
//! exit path, panic handler and table construction), to subtract.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug::{self, EXIT_FAILURE, EXIT_SUCCESS};
#[cfg(feature = "log")]
use defmt_semihosting as _;
use lcmp_decide::Tables;
#[cfg(feature = "panic-never")]
use panic_never as _;

#[entry]
fn main() -> ! {
    let tables: Tables = black_box(Tables::paper_defaults());
    black_box(&tables);
    for i in 0..black_box(4u32) {
        black_box(i);
    }
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
