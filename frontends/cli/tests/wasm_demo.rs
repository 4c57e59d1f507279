//! The browser demo's `explain` (wasm-demo's `explain_json`, called
//! natively) prints exactly what the `lcmp explain` binary prints: for every
//! scenario file under each scheme, and the same error for bad scenarios.
//! (The page itself, compiled to wasm, is compared with this binary by
//! `wasm-demo/tests/e2e.mjs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn explain(file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lcmp"))
        .arg("explain")
        .arg(file)
        .output()
        .expect("run lcmp")
}

fn write(name: &str, text: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lcmp-wasm-demo-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write scenario");
    path
}

#[test]
fn demo_explain_prints_what_lcmp_explain_prints() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut compared = 0;
    for entry in std::fs::read_dir(dir).expect("tests/scenarios") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).expect("read");
        let mut scenario: Value = serde_json::from_str(&text).expect("JSON");
        for scheme in [None, Some("lcmp"), Some("ecmp"), Some("ucmp")] {
            let (label, text) = match scheme {
                None => (name.clone(), text.clone()),
                Some(s) => {
                    scenario["scheme"] = Value::from(s);
                    (format!("{s}-{name}"), scenario.to_string())
                }
            };
            let file = write(&label, &text);
            let cli = explain(&file);
            std::fs::remove_file(&file).expect("remove");
            assert!(
                cli.status.success(),
                "{label}: {}",
                String::from_utf8_lossy(&cli.stderr)
            );
            let demo = wasm_demo::explain_json(&text).expect(&label);
            assert_eq!(String::from_utf8_lossy(&cli.stdout), demo + "\n", "{label}");
            compared += 1;
        }
    }
    assert!(compared >= 24, "{compared} explanations compared");
}

#[test]
fn demo_errors_are_lcmp_explain_errors() {
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/idle.json"),
    )
    .expect("idle.json");
    for (i, bad) in [
        String::from("{"),
        base.replace("\"DC8\"", "\"DC99\""),
        base.replace("\"testbed8\"", "\"nowhere\""),
        base.replace("10.0.7.1", "fd00::1"),
        base.replace("\"dst_dc\"", "\"colour\": 1, \"dst_dc\""),
    ]
    .iter()
    .enumerate()
    {
        let file = write(&format!("bad-{i}.json"), bad);
        let cli = explain(&file);
        std::fs::remove_file(&file).expect("remove");
        assert_eq!(cli.status.code(), Some(1), "{bad}");
        let demo = wasm_demo::explain_json(bad).expect_err(bad);
        let detail = demo.strip_prefix("scenario: ").expect("scenario: prefix");
        assert_eq!(
            String::from_utf8_lossy(&cli.stderr),
            format!("lcmp: error: {}: {detail}\n", file.display()),
            "{bad}"
        );
    }
}
