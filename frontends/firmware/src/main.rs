//! # lcmp-firmware
//!
//! LCMP's decision core as a bare-metal Cortex-M4F image, run in QEMU
//! (`mps2-an386`). It stands for the management or packet core of a
//! SmartNIC: it owns one statically allocated [`Decider`], installs a table
//! blob embedded at build time, then works like a datapath loop over an
//! embedded trace (packet descriptors, queue samples, link events), and at
//! the end reports the decision digest and the counters through `defmt` and
//! exits through semihosting with success or failure.
//!
//! Nothing else is written to the semihosting output: it carries only
//! `defmt` frames, decoded on the host with `defmt-print`.
#![no_std]
#![no_main]

// This mod MUST go first, so that the others see its macros.
mod fmt;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug::{self, EXIT_FAILURE, EXIT_SUCCESS};
#[cfg(feature = "log")]
use defmt_semihosting as _;
use lcmp_decide::{Decider, DeciderConfig, Tables};
use static_cell::ConstStaticCell;

#[cfg(feature = "panic-never")]
use panic_never as _;

/// Ports of the decider: the largest port id in the tables plus one.
const PORTS: usize = 16;
/// Flow-cache slots (a power of two).
const FLOWS: usize = 1024;

/// The decider, placed in `.bss`/`.data` by the linker and handed out
/// exactly once as `&'static mut` (no heap, no `static mut`).
static DECIDER: ConstStaticCell<Decider<PORTS, FLOWS>> =
    ConstStaticCell::new(Decider::new(DeciderConfig {
        scheme: lcmp_decide::Scheme::Lcmp,
        seed: 0,
        hash: lcmp_decide::HashAlgorithm::Murmur3,
    }));

#[entry]
fn main() -> ! {
    let ok = match DECIDER.try_take() {
        Some(decider) => run(decider),
        None => false,
    };
    debug::exit(if ok { EXIT_SUCCESS } else { EXIT_FAILURE });
    #[allow(clippy::empty_loop)]
    loop {}
}

fn run(decider: &mut Decider<PORTS, FLOWS>) -> bool {
    let tables = Tables::paper_defaults();
    match decider.install(&tables) {
        Ok(()) => {
            fmt::info!("installed");
            true
        }
        Err(e) => {
            fmt::error!("install failed: {}", e);
            false
        }
    }
}

/// Without `panic-never`: log and exit with failure, so a panic is a failed
/// run and never a hang.
#[cfg(not(feature = "panic-never"))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    fmt::error!("panic");
    debug::exit(EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}
