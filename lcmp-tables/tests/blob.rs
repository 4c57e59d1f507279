//! Blob acceptance: round trip, and each kind of damage gets its own error.

use lcmp_tables::blob::{
    decode_blob, encode_blob, encode_blob_vec, BLOB_HEADER_LEN, BLOB_VERSION, MAX_BLOB_LEN,
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
    let empty = postcard::to_allocvec(&head).expect("postcard");
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

/// Format stability: a version-1 blob written by the first release
/// (testbed8, switch DC1, default options, generation 1) must keep decoding
/// to the same tables (version 1 has no band and no explicit queue
/// thresholds: they read as 255 and none). Re-encoding writes version 2.
#[test]
fn checked_in_v1_blob_still_decodes() {
    let bytes = include_bytes!("data/testbed8-dc1-v1.bin");
    assert_eq!(&bytes[..6], b"LCMT\x01\x00");
    let blob = decode_blob(bytes).expect("decode v1");
    assert_eq!(blob.generation, 1);
    assert_eq!(blob.tables, tables("testbed8", 1));
    let v2 = encode_blob_vec(&blob.tables, 1).expect("encode");
    assert_eq!(&v2[..6], b"LCMT\x02\x00");
    assert_eq!(
        v2.len(),
        bytes.len() + 2,
        "one band byte, one empty table list"
    );
}

/// The tables the version-2 files freeze: testbed8's DC1 with the default
/// options, and with the tuned profile and the artifact's wrapped queue
/// thresholds (so the new fields are pinned too).
fn v2_cases() -> [(&'static str, lcmp_decide::Tables); 2] {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let tuned = BuildOptions {
        queue_thresholds: Some(
            lcmp_tables::parse_queue_thresholds("wrap32:5GB", 10).expect("thresholds"),
        ),
        ..BuildOptions::for_profile(lcmp_decide::Profile::Tuned)
    };
    [
        ("data/testbed8-dc1-v2.bin", tables("testbed8", 1)),
        (
            "data/testbed8-dc1-tuned-wrapped-v2.bin",
            build_tables(&topo, 1, &tuned).expect("build"),
        ),
    ]
}

/// Format stability: version-2 blobs written by this release must keep
/// decoding to the same tables and re-encoding to the same bytes. If this
/// fails, the payload layout changed: bump `BLOB_VERSION` and keep the
/// older readers. (`LCMP_BLESS=1` rewrites the files, for a new version.)
#[test]
fn checked_in_v2_blobs_still_decode() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for (file, want) in v2_cases() {
        let path = dir.join(file);
        if std::env::var_os("LCMP_BLESS").is_some() {
            std::fs::write(&path, encode_blob_vec(&want, 1).expect("encode")).expect("write");
        }
        let bytes = std::fs::read(&path).expect("checked-in blob");
        assert_eq!(&bytes[..6], b"LCMT\x02\x00", "{file}");
        let blob = decode_blob(&bytes).expect("decode v2");
        assert_eq!(blob.generation, 1);
        assert_eq!(blob.tables, want, "{file}");
        assert_eq!(
            encode_blob_vec(&blob.tables, 1).expect("encode"),
            bytes,
            "{file}"
        );
    }
}
