//! Blob acceptance: round trip, and each kind of damage gets its own error.

use lcmp_tables::blob::{
    decode_blob, encode_blob, encode_blob_vec, BLOB_HEADER_LEN, BLOB_VERSION, MAX_BLOB_LEN,
};
use lcmp_tables::{build_tables, BuildOptions, Count, TablesError, Topology};

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
        Err(TablesError::Truncated { len: 10, need: 24 })
    );
    let cut = b.len() - 5;
    assert_eq!(
        decode_blob(&b[..cut]),
        Err(TablesError::Truncated {
            len: cut,
            need: b.len()
        })
    );
    assert_eq!(
        decode_blob(&[]),
        Err(TablesError::Truncated { len: 0, need: 24 })
    );
}

#[test]
fn flipped_bits() {
    let b = blob();
    let mut bad = b.clone();
    bad[BLOB_HEADER_LEN + 7] ^= 0x10;
    assert!(matches!(
        decode_blob(&bad),
        Err(TablesError::CrcMismatch { .. })
    ));
    let mut bad = b.clone();
    bad[0] ^= 1;
    assert_eq!(decode_blob(&bad), Err(TablesError::BadMagic));
}

#[test]
fn wrong_version() {
    let mut bad = blob();
    bad[4..6].copy_from_slice(&(BLOB_VERSION + 1).to_le_bytes());
    reseal(&mut bad);
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::UnsupportedVersion(BLOB_VERSION + 1))
    );
}

#[test]
fn wrong_crc() {
    let mut bad = blob();
    let stored = u32::from_le_bytes([bad[20], bad[21], bad[22], bad[23]]);
    bad[20..24].copy_from_slice(&(stored ^ 0xDEAD_BEEF).to_le_bytes());
    assert_eq!(
        decode_blob(&bad),
        Err(TablesError::CrcMismatch {
            stored: stored ^ 0xDEAD_BEEF,
            computed: stored
        })
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
    let mut payload = empty[..empty.len() - 1].to_vec();
    payload.push(65);
    payload.extend_from_slice(&b[BLOB_HEADER_LEN + empty.len()..]);
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
    assert_eq!(decode_blob(&bad), Err(TablesError::ReservedBits));
    let mut long = blob();
    long.push(0);
    assert!(matches!(
        decode_blob(&long),
        Err(TablesError::LengthMismatch { .. })
    ));
}

/// Format stability: a version-1 blob written by this release (testbed8,
/// switch DC1, default options, generation 1) must keep decoding to the
/// same tables and re-encoding to the same bytes. If this fails, the
/// payload layout changed: bump `BLOB_VERSION` and keep a v1 reader.
#[test]
fn checked_in_v1_blob_still_decodes() {
    let bytes = include_bytes!("data/testbed8-dc1-v1.bin");
    assert_eq!(&bytes[..6], b"LCMT\x01\x00");
    let blob = decode_blob(bytes).expect("decode v1");
    assert_eq!(blob.generation, 1);
    assert_eq!(blob.tables, tables("testbed8", 1));
    assert_eq!(
        encode_blob_vec(&blob.tables, 1).expect("encode"),
        bytes.to_vec()
    );
}
