//! The committed C header `include/lcmp.h` is exactly what cbindgen
//! generates from the crate today. Set `LCMP_BLESS=1` to rewrite it.
//!
//! cbindgen writes `//` comments after its `__cplusplus` guards whatever
//! the documentation style; they become `/* */` here, so that the header
//! is C89 (`gcc -std=c89 -pedantic`, run by scripts/test.d/70-firmware.sh).

use std::path::PathBuf;

#[test]
fn header_is_current() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated)
        .expect("cbindgen writes UTF-8")
        .replace("// __cplusplus", "/* __cplusplus */")
        .replace("// extern \"C\"", "/* extern \"C\" */")
        .into_bytes();
    assert!(
        !generated.windows(2).any(|w| w == b"//"),
        "a `//` comment in the header: not C89"
    );
    let path = dir.join("include/lcmp.h");
    // Only `LCMP_BLESS=1` rewrites (as the Tofino golden test): `0` or an
    // empty value is a check like any other run.
    if std::env::var_os("LCMP_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write include/lcmp.h");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/lcmp.h is stale: regenerate with `LCMP_BLESS=1 cargo test -p lcmp-ffi --test header`"
    );
}
