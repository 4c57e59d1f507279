//! Logging shim: `defmt` with the `log` feature, nothing otherwise. The
//! no-op arms still evaluate their arguments, so both builds type-check the
//! same expressions (as `lcmp-decide`'s `fmt.rs`).

#[cfg(feature = "log")]
macro_rules! info {
    ($($arg:tt)*) => { defmt::info!($($arg)*) };
}

#[cfg(not(feature = "log"))]
macro_rules! info {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        let _ = $fmt;
        $( let _ = &$arg; )*
    }};
}

#[cfg(feature = "log")]
macro_rules! error {
    ($($arg:tt)*) => { defmt::error!($($arg)*) };
}

#[cfg(not(feature = "log"))]
macro_rules! error {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        let _ = $fmt;
        $( let _ = &$arg; )*
    }};
}

pub(crate) use {error, info};
