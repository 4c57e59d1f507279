//! Blob acceptance: round trip, and each kind of damage gets its own error.

use lcmp_tables::blob::{
    decode_blob, encode_blob, encode_blob_vec, BLOB_HEADER_LEN, BLOB_OLDEST_VERSION, BLOB_VERSION,
    MAX_BLOB_LEN,
};
use lcmp_tables::{build_tables, BuildOptions, Count, FormatError, TablesError, Topology};

fn tables(topo: &str, switch: u16) -> lcmp_decide::Tables {
    let t = Topology::embedded(topo).expect("embedded");
    build_tables(&t, switch, &BuildOptions::default()).expect("build")
}

fn blob() -> Vec<u8> {
    encode_blob_vec(&tables("testbed8", 1), 42).expect("encode")
}

/// Re-seals a header after an edit, so only the intended check fails.
fn reseal(b: &mut [u8]) {
    let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    let mut d = crc.digest();
    d.update(&b[..20]);
    d.update(&b[BLOB_HEADER_LEN..]);
    let v = d.finalize();
    b[20..24].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn round_trip_is_byte_identical() {
    for (topo, n) in [("testbed8", 8u16), ("bso13", 13)] {
        for s in 1..=n {
            let t = tables(topo, s);
            let b = encode_blob_vec(&t, u64::from(s) << 40).expect("encode");
            let back = decode_blob(&b).expect("decode");
            assert_eq!(back.tables, t);
            assert_eq!(back.generation, u64::from(s) << 40);
            let mut again = vec![0u8; MAX_BLOB_LEN];
            let n = encode_blob(&back.tables, back.generation, &mut again).expect("encode");
            assert_eq!(&again[..n], &b[..]);
        }
    }
}

#[test]
fn truncated() {
    let b = blob();
    assert_eq!(
        decode_blob(&b[..10]),
        Err(TablesError::Format(FormatError::Truncated {
            len: 10,
            need: 24
        }))
    );
    let cut = b.len() - 5;
    assert_eq!(
        decode_blob(&b[..cut]),
        Err(TablesError::Format(FormatError::Truncated {
            len: cut,
            need: b.len()
        }))
    );
    assert_eq!(
        decode_blob(&[]),
        Err(TablesError::Format(FormatError::Truncated {
            len: 0,
            need: 24
        }))
    );
}

#[test]
fn flipped_bits() {
    let b = blob();
    let mut bad = b.clone();
    bad[BLOB_HEADER_LEN + 7] ^= 0x10;
    assert!(matches!(
        decode_blob(&bad),
        Err(TablesError::Format(FormatError::CrcMismatch { .. }))
    ));
    let mut bad = b.clone();
    bad[0] ^= 1;
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::Format(FormatError::BadMagic))
    );
}

#[test]
fn wrong_version() {
    let mut bad = blob();
    bad[4..6].copy_from_slice(&(BLOB_VERSION + 1).to_le_bytes());
    reseal(&mut bad);
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::Format(FormatError::UnsupportedVersion(
            BLOB_VERSION + 1
        )))
    );
}

#[test]
fn wrong_crc() {
    let mut bad = blob();
    let stored = u32::from_le_bytes([bad[20], bad[21], bad[22], bad[23]]);
    bad[20..24].copy_from_slice(&(stored ^ 0xDEAD_BEEF).to_le_bytes());
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::Format(FormatError::CrcMismatch {
            stored: stored ^ 0xDEAD_BEEF,
            computed: stored
        }))
    );
}

#[test]
fn oversize_counts() {
    let b = blob();
    // The group count is the varint right before group 2's id; rebuild the
    // payload with 65 groups claimed instead.
    let t = tables("testbed8", 1);
    let mut head = t.clone();
    head.groups.clear();
    let empty = encode_blob_vec(&head, 42).expect("encode")[BLOB_HEADER_LEN..].to_vec();
    // `empty` ends with the group count and the (empty) queue-table count.
    let at = empty.len() - 2;
    let mut payload = empty[..at].to_vec();
    payload.push(65);
    payload.extend_from_slice(&b[BLOB_HEADER_LEN + at + 1..]);
    let mut bad = b[..BLOB_HEADER_LEN].to_vec();
    bad[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    bad.extend_from_slice(&payload);
    reseal(&mut bad);
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::TooMany {
            what: Count::Groups,
            count: 65
        })
    );
    // A declared payload length over the limit.
    let mut bad = b.clone();
    bad[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        decode_blob(&bad),
        Err(TablesError::InputTooLarge { .. })
    ));
}

#[test]
fn reserved_and_trailing() {
    let mut bad = blob();
    bad[6] = 1;
    reseal(&mut bad);
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::Format(FormatError::ReservedBits))
    );
    let mut long = blob();
    long.push(0);
    assert!(matches!(
        decode_blob(&long),
        Err(TablesError::Format(FormatError::LengthMismatch { .. }))
    ));
}

/// testbed8's DC1 with the tuned profile and the artifact's wrapped queue
/// thresholds (every field away from its default).
fn tuned_wrapped() -> lcmp_decide::Tables {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let tuned = BuildOptions {
        queue_thresholds: Some(
            lcmp_tables::parse_queue_thresholds("wrap32:5GB", 10).expect("thresholds"),
        ),
        ..BuildOptions::for_profile(lcmp_decide::Profile::Tuned)
    };
    build_tables(&topo, 1, &tuned).expect("build")
}

/// `t` as a blob of format `version` decodes: what the version does not
/// carry takes its documented value.
fn as_version(mut t: lcmp_decide::Tables, version: u16) -> lcmp_decide::Tables {
    if version < 3 {
        t.params.delay_unit_ticks = 0;
    }
    if version < 2 {
        t.params.band = u8::MAX;
        t.queue_thresholds.clear();
    }
    t
}

/// One golden blob: its file under `tests/golden/`, the format version it
/// was written in, and the tables it holds (generation 1).
struct Golden {
    file: &'static str,
    version: u16,
    tables: lcmp_decide::Tables,
}

/// Every golden blob. Versions 1 and 2 were written by the releases that
/// wrote those versions and are taken from the git history
/// (`tests/golden/README.md` names the commits); they are never
/// rewritten. Version 3 is this build's format.
fn goldens() -> Vec<Golden> {
    let dc1 = tables("testbed8", 1);
    let mut out = Vec::new();
    for (file, version, t) in [
        ("blob-v1-testbed8-dc1.bin", 1, &dc1),
        ("blob-v2-testbed8-dc1.bin", 2, &dc1),
        (
            "blob-v2-testbed8-dc1-tuned-wrapped.bin",
            2,
            &tuned_wrapped(),
        ),
        ("blob-v3-testbed8-dc1.bin", 3, &dc1),
        (
            "blob-v3-testbed8-dc1-tuned-wrapped.bin",
            3,
            &tuned_wrapped(),
        ),
    ] {
        out.push(Golden {
            file,
            version,
            tables: as_version(t.clone(), version),
        });
    }
    out
}

/// `LCMP_BLESS=1` asked for the golden files of the current version to be
/// rewritten.
fn blessing() -> bool {
    std::env::var("LCMP_BLESS").as_deref() == Ok("1")
}

/// Format stability: every golden blob of every released version decodes,
/// forever, to the tables it was written from (what its version does not
/// carry at its documented value); re-encoding writes the current version
/// with the same tables, and a golden of the current version re-encodes
/// to its own bytes. If this fails, the payload layout changed: add a new
/// `BLOB_VERSION` with its wire structs and keep the older readers.
///
/// `LCMP_BLESS=1` rewrites the current version's goldens (a new version
/// only; older ones are history, never rewritten) and then fails, so a
/// bless run never passes: check the new files in, then run again without.
#[test]
fn golden_blobs_of_every_version_decode() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let all = goldens();
    let mut blessed = Vec::new();
    if blessing() {
        for g in all.iter().filter(|g| g.version == BLOB_VERSION) {
            let path = dir.join(g.file);
            std::fs::write(&path, encode_blob_vec(&g.tables, 1).expect("encode")).expect("write");
            blessed.push(g.file);
        }
    }
    for v in BLOB_OLDEST_VERSION..=BLOB_VERSION {
        assert!(
            all.iter().any(|g| g.version == v),
            "no golden blob of version {v}"
        );
    }
    for g in &all {
        let path = dir.join(g.file);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (LCMP_BLESS=1 writes it)", path.display()));
        assert_eq!(&bytes[..4], b"LCMT", "{}", g.file);
        assert_eq!(
            u16::from_le_bytes([bytes[4], bytes[5]]),
            g.version,
            "{}",
            g.file
        );
        let blob = decode_blob(&bytes).unwrap_or_else(|e| panic!("{}: {e}", g.file));
        assert_eq!(blob.version, g.version, "{}", g.file);
        assert_eq!(blob.generation, 1, "{}", g.file);
        assert_eq!(blob.tables, g.tables, "{}", g.file);
        let again = encode_blob_vec(&blob.tables, 1).expect("encode");
        assert_eq!(decode_blob(&again).map(|b| b.tables), Ok(g.tables.clone()));
        if g.version == BLOB_VERSION {
            assert_eq!(again, bytes, "{}", g.file);
        }
    }
    assert!(
        blessed.is_empty(),
        "LCMP_BLESS=1 rewrote {blessed:?}: check them in and run again without LCMP_BLESS"
    );
}

/// The version-1 golden is the first release's encoding: re-encoded, it
/// grows by exactly what versions 2 and 3 added (one band byte, one empty
/// queue-table list, the delay-unit varint).
#[test]
fn v1_golden_grows_by_the_new_fields() {
    let bytes = include_bytes!("golden/blob-v1-testbed8-dc1.bin");
    assert_eq!(&bytes[..6], b"LCMT\x01\x00");
    let mut t = decode_blob(bytes).expect("decode v1").tables;
    let v3 = encode_blob_vec(&t, 1).expect("encode");
    assert_eq!(&v3[..6], b"LCMT\x03\x00");
    assert_eq!(
        v3.len(),
        bytes.len() + 3,
        "band, queue tables, delay unit 0"
    );
    t.params.delay_unit_ticks = 1_000;
    let v3 = encode_blob_vec(&t, 1).expect("encode");
    assert_eq!(v3.len(), bytes.len() + 4, "delay unit 1000: two bytes");
}

/// `delay_unit_ticks` survives a round trip (it did not in version 2).
#[test]
fn delay_unit_round_trips() {
    for unit in [0, 1, 1_000, u32::MAX] {
        let mut t = tables("testbed8", 1);
        t.params.delay_unit_ticks = unit;
        let b = encode_blob_vec(&t, 5).expect("encode");
        assert_eq!(decode_blob(&b).expect("decode").tables, t);
    }
}
