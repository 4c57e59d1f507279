//! Signed blobs through the `lcmp` binary: `tables keygen`, `tables sign`
//! and `tables verify --pubkey` (the signature, key id and generation
//! reported; each rejection one line on stderr and exit 1).

use std::path::{Path, PathBuf};

mod common;
use common::{fails, fresh_dir as dir, ok};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Builds testbed8 DC1's unsigned blob at `generation` into `d`.
fn blob(d: &Path, generation: u64) -> PathBuf {
    let out = d.join(format!("t{generation}.bin"));
    ok(&[
        "tables",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "--generation",
        &generation.to_string(),
        "-o",
        s(&out),
    ]);
    out
}

/// The arguments of `lcmp tables sign --key KEY --topology testbed8
/// --switch DC1 INPUT -o OUT`.
fn sign<'a>(key: &'a Path, input: &'a Path, out: &'a Path) -> [&'a str; 11] {
    [
        "tables",
        "sign",
        "--key",
        s(key),
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        s(input),
        "-o",
        s(out),
    ]
}

/// The key id `keygen` or `sign` printed.
fn key_id(text: &str) -> String {
    let at = text.find("key id ").expect("key id") + 7;
    text[at..at + 16].to_string()
}

#[test]
fn keygen_sign_verify_and_each_rejection() {
    let d = dir("flow");
    let (key, public) = (d.join("k.pem"), d.join("k.pub.pem"));
    let made = ok(&["tables", "keygen", "--key", s(&key), "--pubkey", s(&public)]);
    let id = key_id(&made);
    assert!(std::fs::read_to_string(&key)
        .expect("key")
        .starts_with("-----BEGIN PRIVATE KEY-----\n"));
    assert!(std::fs::read_to_string(&public)
        .expect("pub")
        .starts_with("-----BEGIN PUBLIC KEY-----\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key).expect("meta").permissions().mode();
        assert_eq!(mode & 0o077, 0, "private key readable by others: {mode:o}");
    }
    // keygen never overwrites.
    assert!(fails(&[
        "tables",
        "keygen",
        "--key",
        s(&key),
        "--pubkey",
        s(&d.join("x"))
    ])
    .contains("k.pem"));

    let plain = blob(&d, 5);
    let signed = d.join("s5.bin");
    let said = ok(&sign(&key, &plain, &signed));
    assert_eq!(key_id(&said), id);
    assert!(said.contains("generation 5"), "{said}");
    let v = ok(&["tables", "verify", s(&signed), "--pubkey", s(&public)]);
    assert!(
        v.contains(&format!("signature good (key id {id})")) && v.contains("generation 5"),
        "{v}"
    );
    assert!(v.contains("scope not checked"), "{v}");

    // Bound to its device: DC1 takes it, DC2 (and DC1 of another
    // topology) refuse it; `tables scope` prints what a device is set to.
    let as_dc = |topology: &'static str, dc: &'static str| -> Vec<String> {
        let mut a = vec!["tables", "verify", s(&signed), "--pubkey", s(&public)];
        a.extend(["--topology", topology, "--switch", dc]);
        a.into_iter().map(str::to_string).collect()
    };
    fn run(a: &[String]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    assert!(ok(&run(&as_dc("testbed8", "DC1"))).contains("scope checked"));
    assert!(fails(&run(&as_dc("testbed8", "DC2"))).contains("wrong scope"));
    assert!(fails(&run(&as_dc("bso13", "1"))).contains("wrong scope"));
    let dc1 = ok(&[
        "tables",
        "scope",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
    ]);
    let dc2 = ok(&[
        "tables",
        "scope",
        "--topology",
        "testbed8",
        "--switch",
        "DC2",
    ]);
    assert_eq!((dc1.trim().len(), dc2.trim().len()), (40, 40));
    assert_ne!(dc1, dc2);
    // An expired blob is refused by the (system) clock; a far expiry is not.
    for (not_after, good) in [("1000", false), ("99999999999", true)] {
        let out = d.join(format!("exp{not_after}.bin"));
        let mut a = sign(&key, &plain, &out).map(str::to_string).to_vec();
        a.extend(["--not-after".to_string(), not_after.to_string()]);
        ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let v = ["tables", "verify", s(&out), "--pubkey", s(&public)];
        if good {
            ok(&v);
        } else {
            assert!(fails(&v).contains("expired"));
        }
    }

    // Tampered payload.
    let mut bytes = std::fs::read(&signed).expect("read");
    bytes[48 + 24 + 5] ^= 1;
    let tampered = d.join("tampered.bin");
    std::fs::write(&tampered, &bytes).expect("write");
    assert!(
        fails(&["tables", "verify", s(&tampered), "--pubkey", s(&public)])
            .contains("bad signature")
    );
    // Another key.
    let (other, other_pub) = (d.join("o.pem"), d.join("o.pub.pem"));
    ok(&[
        "tables",
        "keygen",
        "--key",
        s(&other),
        "--pubkey",
        s(&other_pub),
    ]);
    assert!(
        fails(&["tables", "verify", s(&signed), "--pubkey", s(&other_pub)]).contains("not trusted")
    );
    // Both keys trusted (rotation): verifies.
    ok(&[
        "tables",
        "verify",
        s(&signed),
        "--pubkey",
        s(&other_pub),
        "--pubkey",
        s(&public),
    ]);
    // Rollback against an installed generation.
    assert!(fails(&[
        "tables",
        "verify",
        s(&signed),
        "--pubkey",
        s(&public),
        "--installed",
        "5"
    ])
    .contains("rollback: generation 5 is not newer than the installed 5"));
    ok(&[
        "tables",
        "verify",
        s(&signed),
        "--pubkey",
        s(&public),
        "--installed",
        "4",
    ]);
    // Unsigned with --pubkey, signed without.
    assert!(
        fails(&["tables", "verify", s(&plain), "--pubkey", s(&public)]).contains("unsigned blob")
    );
    assert!(fails(&["tables", "verify", s(&signed)]).contains("give --pubkey"));
    // The unsigned blob still verifies as before without --pubkey.
    ok(&["tables", "verify", s(&plain)]);
    // Key files that are not keys.
    assert!(fails(&sign(&public, &plain, &d.join("x")))
        .contains("not a PKCS#8 PEM Ed25519 private key"));
    assert!(
        fails(&["tables", "verify", s(&signed), "--pubkey", s(&key)])
            .contains("not a PEM Ed25519 public key")
    );
    // Only valid blobs are signed.
    assert!(fails(&sign(&key, &tampered, &d.join("y"))).contains("tampered.bin"));
}

/// Key files made by OpenSSL (`tests/keys/README.md`) sign and verify.
#[test]
fn openssl_keys_work() {
    let d = dir("openssl");
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/keys");
    let (key, public) = (
        keys.join("openssl-ed25519.pem"),
        keys.join("openssl-ed25519.pub.pem"),
    );
    let plain = blob(&d, 2);
    let signed = d.join("s.bin");
    let said = ok(&sign(&key, &plain, &signed));
    let v = ok(&["tables", "verify", s(&signed), "--pubkey", s(&public)]);
    assert!(v.contains(&format!("key id {}", key_id(&said))), "{v}");
}
