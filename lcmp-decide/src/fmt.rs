//! Logging shim: `defmt` when the `defmt` feature is on, nothing otherwise.
//!
//! The no-op arm still evaluates its arguments so that a build without
//! logging type-checks the same expressions (smoltcp `macros.rs`).

#[cfg(feature = "defmt")]
macro_rules! trace {
    ($($arg:expr),* $(,)?) => { defmt::trace!($($arg),*) };
}

#[cfg(not(feature = "defmt"))]
macro_rules! trace {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        let _ = $fmt;
        $( let _ = &$arg; )*
    }};
}

pub(crate) use trace;
