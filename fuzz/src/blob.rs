//! The `tables_decode` driver: byte strings into
//! `lcmp_tables::blob::decode_blob`, the decoder behind `lcmp tables verify`
//! and every installer.
//!
//! Checks: decoding returns `Ok` or a typed error (its `Display` works) and
//! never panics; `decode_blob_into` over memory holding other tables gives
//! the same tables or error; whatever decodes re-encodes to the same bytes, installs into
//! a decider of `MAX_PORTS` ports, and then routes a packet of every group to
//! one of the group's candidates (and explains it the same way); valid
//! tables encode, and decode back to themselves.
//!
//! Raw bytes almost never get past the header's CRC, so an input is one of:
//! raw bytes; a header built around an arbitrary payload (correct magic,
//! version, length and CRC, so postcard decoding and the count checks are
//! reached); or arbitrary tables encoded and then damaged (bytes XORed,
//! truncated or extended) with the CRC optionally recomputed.

use arbitrary::Arbitrary;
use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::{
    Candidate, Decider, DeciderConfig, Decision, FlowKey, Group, GroupId, Instant, PortConfig,
    PortId, Tables,
};
use lcmp_tables::blob::{
    decode_blob, decode_blob_into, encode_blob_vec, BLOB_HEADER_LEN, BLOB_MAGIC, BLOB_VERSION,
};
use lcmp_tables::{Count, TablesError};

use crate::input::{Bytes, FlowSpec, TablesSpec};

const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// One `tables_decode` input.
#[derive(Arbitrary, Debug)]
pub enum BlobInput {
    /// Bytes as they come.
    Raw(Bytes),
    /// A correct header around this payload.
    Payload {
        /// Generation number.
        generation: u64,
        /// Payload bytes.
        payload: Vec<u8>,
    },
    /// Tables encoded, then damaged.
    Tables {
        /// The tables (port ids up to 70, so some exceed `MAX_PORTS`).
        tables: Box<TablesSpec>,
        /// Generation number.
        generation: u64,
        /// `(offset, xor)` edits, offsets modulo the length.
        edits: Vec<(u16, u8)>,
        /// Cut to this length (modulo length + 1), if any.
        truncate: Option<u16>,
        /// Bytes appended.
        append: Vec<u8>,
        /// Recompute the CRC (and length) after editing.
        fix_header: bool,
    },
    /// `tables_decode` with a flow to route, for the installed check.
    Route {
        /// The tables.
        tables: Box<TablesSpec>,
        /// A flow.
        flow: FlowSpec,
    },
}

/// Rewrites the length and CRC fields to match the payload.
fn fix_header(bytes: &mut [u8]) {
    if bytes.len() < BLOB_HEADER_LEN {
        return;
    }
    let len = (bytes.len() - BLOB_HEADER_LEN) as u32;
    bytes[16..20].copy_from_slice(&len.to_le_bytes());
    let mut d = CRC32C.digest();
    d.update(&bytes[..20]);
    d.update(&bytes[BLOB_HEADER_LEN..]);
    let crc = d.finalize();
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
}

/// Runs one input.
pub fn run(input: &BlobInput) {
    let flow = match input {
        BlobInput::Route { flow, .. } => flow.key(),
        _ => FlowSpec {
            v6: false,
            src: 0x0A00_0001,
            dst: 0x0A08_0001,
            sport: 1000,
            dport: 4791,
            proto: 17,
        }
        .key(),
    };
    match input {
        BlobInput::Raw(Bytes(bytes)) => check(bytes, &flow),
        BlobInput::Payload {
            generation,
            payload,
        } => {
            let mut b = Vec::with_capacity(BLOB_HEADER_LEN + payload.len());
            b.extend_from_slice(&BLOB_MAGIC);
            b.extend_from_slice(&BLOB_VERSION.to_le_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&generation.to_le_bytes());
            b.extend_from_slice(&[0; 8]);
            b.extend_from_slice(payload);
            fix_header(&mut b);
            check(&b, &flow);
        }
        BlobInput::Tables {
            tables,
            generation,
            edits,
            truncate,
            append,
            fix_header: fix,
        } => {
            let t = tables.build(70);
            let mut b = match encode_blob_vec(&t, *generation) {
                Ok(b) => b,
                Err(e) => {
                    // Encoding refuses what the core refuses, and more
                    // distinct port rates than the blob has trend tables for.
                    let own_limit = matches!(
                        e,
                        TablesError::TooMany {
                            what: Count::RateBuckets,
                            ..
                        }
                    );
                    assert!(
                        own_limit || t.compile(MAX_PORTS).is_err(),
                        "valid tables did not encode: {e}"
                    );
                    return;
                }
            };
            let pristine = b.clone();
            let blob = decode_blob(&b).expect("an encoded blob decodes");
            assert_eq!((blob.generation, &blob.tables), (*generation, &t));
            for &(at, x) in edits {
                let i = usize::from(at) % b.len();
                b[i] ^= x;
            }
            if let Some(n) = truncate {
                b.truncate(usize::from(*n) % (b.len() + 1));
            }
            b.extend_from_slice(append);
            if *fix {
                fix_header(&mut b);
            }
            if !*fix && b != pristine {
                // Damage without a CRC fix-up is always caught (CRC-32C
                // detects every error burst up to 32 bits; others with
                // probability 1 - 2^-32, so a miss would itself be a find).
                if edits.len() <= 4 && truncate.is_none() && append.is_empty() {
                    assert!(decode_blob(&b).is_err(), "damaged blob decoded");
                }
            }
            check(&b, &flow);
        }
        BlobInput::Route { tables, .. } => {
            let t = tables.build(MAX_PORTS as u8);
            if let Ok(b) = encode_blob_vec(&t, 1) {
                check(&b, &flow);
            }
        }
    }
}

/// Valid tables of two ports and one group, for `decode_blob_into` to
/// overwrite.
fn dirty_scratch() -> Tables {
    let mut t = Tables::paper_defaults();
    let mut g = Group {
        id: GroupId(7),
        candidates: heapless::Vec::new(),
    };
    for p in [3u8, 60] {
        let _ = t.ports.push(PortConfig {
            id: PortId(p),
            rate_bps: 1 << 30,
            buffer_bytes: 1 << 20,
        });
        let _ = g.candidates.push(Candidate {
            port: PortId(p),
            delay_units: 9,
            capacity_bps: 1 << 30,
        });
    }
    let _ = t.groups.push(g);
    t
}

/// The checks on one byte string.
fn check(bytes: &[u8], flow: &FlowKey) {
    let mut scratch = dirty_scratch();
    let into = decode_blob_into(bytes, &mut scratch).map(|g| (g, scratch));
    let by_value = decode_blob(bytes).map(|b| (b.generation, b.tables));
    assert_eq!(into, by_value, "decode_blob_into over other tables differs");
    let blob = match decode_blob(bytes) {
        Ok(blob) => blob,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let again = encode_blob_vec(&blob.tables, blob.generation).expect("decoded tables re-encode");
    if bytes.get(4..6) == Some(&BLOB_VERSION.to_le_bytes()[..]) {
        assert_eq!(again, bytes, "re-encoding differs");
    } else {
        // An older format (still read) re-encodes as the current one, to
        // the same tables.
        let back = decode_blob(&again).map(|b| b.tables);
        assert_eq!(
            back.as_ref(),
            Ok(&blob.tables),
            "re-encoding changes the tables"
        );
    }
    let mut d: Box<Decider<MAX_PORTS, 64>> = Box::new(Decider::new(DeciderConfig::default()));
    d.install(&blob.tables).expect("decoded tables install");
    let now = Instant::from_ticks(1);
    for p in &blob.tables.ports {
        d.sample(now, p.id, u64::MAX).expect("listed port samples");
    }
    for g in &blob.tables.groups {
        let e = d.explain(now, flow, g.id);
        let decision = d.on_packet(now, flow, g.id);
        let cands: Vec<PortId> = g.candidates.iter().map(|c| c.port).collect();
        match decision {
            Decision::New { port, .. } | Decision::Hit(port) | Decision::Unpinned(port) => {
                assert!(e.chosen == Some(port) || matches!(decision, Decision::Unpinned(_)));
                // A hit follows the pin of an earlier group of this loop.
                if !matches!(decision, Decision::Hit(_)) {
                    assert!(cands.contains(&port), "{decision:?} not in {cands:?}");
                }
            }
            Decision::NoRoute(r) => panic!("installed group {:?} has no route: {r:?}", g.id),
        }
    }
    let _ = d.on_packet(now, flow, GroupId(u16::MAX));
}

#[cfg(test)]
mod test {
    use arbitrary::{Arbitrary, Unstructured};

    #[test]
    fn seed_corpus_passes() {
        let valid = std::cell::Cell::new(0);
        let n = crate::replay_corpus("tables_decode", |data| {
            if let Ok(i) = super::BlobInput::arbitrary_take_rest(Unstructured::new(data)) {
                if let super::BlobInput::Raw(crate::input::Bytes(b)) = &i {
                    valid.set(valid.get() + usize::from(super::decode_blob(b).is_ok()));
                }
                super::run(&i);
            }
        });
        assert!(n > 0, "no seeds");
        assert!(valid.get() >= 3, "the hand-made blob seeds must decode");
    }
}
