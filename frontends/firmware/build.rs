//! Build script: linker scripts (cortex-m-rt's `link.x`, which includes
//! `memory.x` from this directory; defmt's `defmt.x` only with logging).
use std::env;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rustc-link-search={}", dir.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=--nmagic");
    println!("cargo:rustc-link-arg=-Tlink.x");
    if env::var_os("CARGO_FEATURE_LOG").is_some() {
        println!("cargo:rustc-link-arg=-Tdefmt.x");
    }
}
