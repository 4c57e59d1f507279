//! The committed C header `include/lcmp.h` is exactly what cbindgen
//! generates from the crate today. Set `LCMP_BLESS=1` to rewrite it.
//!
//! cbindgen writes `//` comments after its `__cplusplus` guards whatever
//! the documentation style; they become `/* */` here, so that the header
//! is C89 (`gcc -std=c89 -pedantic`, run by scripts/test.d/70-firmware.sh).
//!
//! The header ends with the C API's cost table on a Cortex-M4F, made here
//! from `frontends/firmware/costs.txt` (the budgets the firmware test part
//! checks the measured figures against), so it cannot go stale.

use std::path::PathBuf;

#[test]
fn header_is_current() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    config.trailer = Some(cost_table(&dir));
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

/// The comment at the end of the header: each call's stack and
/// instructions from `frontends/firmware/costs.txt` (`NAME STACK
/// INSTRUCTIONS [CEILING] [# note]` lines; `#` lines are comments).
fn cost_table(dir: &std::path::Path) -> String {
    let path = dir.join("../firmware/costs.txt");
    let text = std::fs::read_to_string(&path).expect("frontends/firmware/costs.txt");
    let mut out = String::from(
        "/*\n * Costs on a Cortex-M4F (docs/firmware.md, \"Cost table\"): the stack\n \
         * (painted) and instructions (QEMU mps2-an386, -icount shift=7, exact)\n \
         * of each call, from frontends/firmware/costs.txt, which\n \
         * scripts/test.d/70-firmware.sh checks against measurements (5 %).\n *\n \
         *   call                                  stack B  instructions\n",
    );
    for line in text.lines() {
        let body = line.split('#').next().unwrap_or_default();
        let cols: Vec<&str> = body.split_whitespace().collect();
        if cols.len() < 3 {
            continue;
        }
        let ceiling = cols
            .get(3)
            .map(|c| format!(" (at most {c})"))
            .unwrap_or_default();
        out.push_str(&format!(
            " *   {:<38}{:>7}  {:>12}{ceiling}\n",
            cols[0], cols[1], cols[2]
        ));
    }
    assert!(
        out.contains("lcmp_sample"),
        "{} lists lcmp_sample",
        path.display()
    );
    assert!(!out.contains("*/\n *"), "no comment end inside the table");
    out.push_str(" */");
    out
}
