//! The `signed_verify` driver: byte strings into
//! `lcmp_tables::blob::signed::decode_verified_into`, the installer's
//! decode-and-verify path (firmware, C ABI, `lcmp tables verify --pubkey`).
//!
//! Checks: it never panics, and it never installs an unverified payload.
//! `Ok` with a key id means the bytes are exactly the trusted key's own
//! signature of the inner blob (Ed25519 signing here is deterministic and
//! verification strict, so any other accepted signature would be a
//! forgery), the generation is newer than the installed one, and the
//! scratch holds the inner blob's tables; `Ok` without a key id happens
//! only when the caller opted in to unsigned blobs. A signature, key or
//! rollback error leaves the scratch untouched.
//!
//! An input is raw bytes, or arbitrary tables encoded, signed by the
//! trusted or another key, and then maybe damaged (bytes XORed, truncated
//! or extended), against an arbitrary installed generation.

use arbitrary::Arbitrary;
use lcmp_decide::Tables;
use lcmp_tables::blob::signed::{
    decode_verified_into, public_key, sign_blob_vec, Claims, Device, Scope, TrustedKey,
    TrustedKeys, Unsigned,
};
use lcmp_tables::blob::{decode_blob, encode_blob_vec};
use lcmp_tables::TablesError;

use crate::input::{Bytes, TablesSpec};

/// The trusted key's seed.
pub const TRUSTED_SEED: [u8; 32] = [0x11; 32];
/// An untrusted key's seed.
pub const OTHER_SEED: [u8; 32] = [0x22; 32];
/// The device's scope (the seeds are signed for it).
pub const SCOPE: Scope = Scope {
    switch: 1,
    topology: [0x33; 16],
};
/// The claims generated blobs are signed with: the device's scope, no
/// expiry (the device has no clock).
pub const CLAIMS: Claims = Claims {
    scope: SCOPE,
    not_after: None,
};

/// The device: [`SCOPE`], no clock.
pub const DEVICE: Device = Device {
    scope: SCOPE,
    now: None,
};

/// One `signed_verify` input.
#[derive(Arbitrary, Debug)]
pub enum SignedInput {
    /// Bytes as they come.
    Raw {
        /// The installed generation.
        installed: u64,
        /// Take unsigned blobs too.
        accept_unsigned: bool,
        /// The bytes (the rest of the input, verbatim).
        bytes: Bytes,
    },
    /// Tables encoded and signed, then maybe damaged.
    Signed {
        /// The tables.
        tables: Box<TablesSpec>,
        /// Generation number.
        generation: u64,
        /// Signed by the trusted key (else by another).
        trusted: bool,
        /// The installed generation.
        installed: u64,
        /// `(offset, xor)` edits, offsets modulo the length.
        edits: Vec<(u16, u8)>,
        /// Cut to this length (modulo length + 1), if any.
        truncate: Option<u16>,
        /// Bytes appended.
        append: Vec<u8>,
        /// Take unsigned blobs too.
        accept_unsigned: bool,
    },
}

fn keys() -> TrustedKeys {
    TrustedKeys::one(TrustedKey::new(public_key(&TRUSTED_SEED)).expect("valid key"))
}

/// Valid tables for the scratch to hold before the call.
fn dirty() -> Tables {
    let mut t = Tables::paper_defaults();
    t.params.cut = 7;
    t
}

/// Runs one input.
pub fn run(input: &SignedInput) {
    match input {
        SignedInput::Raw {
            installed,
            accept_unsigned,
            bytes: Bytes(b),
        } => check(b, *installed, *accept_unsigned, None),
        SignedInput::Signed {
            tables,
            generation,
            trusted,
            installed,
            edits,
            truncate,
            append,
            accept_unsigned,
        } => {
            let Ok(inner) = encode_blob_vec(&tables.build(70), *generation) else {
                return;
            };
            let seed = if *trusted { &TRUSTED_SEED } else { &OTHER_SEED };
            let pristine = sign_blob_vec(&inner, seed, &CLAIMS).expect("a valid blob signs");
            let mut b = pristine.clone();
            for &(at, x) in edits {
                let i = usize::from(at) % b.len();
                b[i] ^= x;
            }
            if let Some(n) = truncate {
                b.truncate(usize::from(*n) % (b.len() + 1));
            }
            b.extend_from_slice(append);
            let should = b == pristine && *trusted && *generation > *installed;
            check(&b, *installed, *accept_unsigned, Some(should));
        }
    }
}

/// Verifies `b` and checks the invariants; `should` is whether it must be
/// accepted (known for generated inputs).
fn check(b: &[u8], installed: u64, accept_unsigned: bool, should: Option<bool>) {
    let unsigned = if accept_unsigned {
        Unsigned::Accept
    } else {
        Unsigned::Reject
    };
    let mut scratch = dirty();
    let r = decode_verified_into(b, &keys(), &DEVICE, installed, unsigned, &mut scratch);
    if let Err(e) = &r {
        assert!(!e.to_string().is_empty());
        if matches!(e, TablesError::Signature(_)) {
            assert_eq!(scratch, dirty(), "{e}: the scratch changed");
        }
    }
    if let Some(should) = should {
        assert_eq!(r.is_ok(), should, "{r:?}");
    }
    let Ok(v) = r else { return };
    assert!(v.generation > installed, "installed an older generation");
    match v.key_id {
        Some(_) => {
            let inner = lcmp_tables::blob::signed::parse_envelope(b)
                .expect("a verified envelope parses")
                .inner;
            let env = lcmp_tables::blob::signed::parse_envelope(b).expect("parses");
            assert_eq!(env.claims.scope, SCOPE, "accepted another device's blob");
            let again = sign_blob_vec(inner, &TRUSTED_SEED, &env.claims).expect("re-signs");
            assert_eq!(
                again, b,
                "accepted a signature the trusted key did not make"
            );
            let blob = decode_blob(inner).expect("the inner blob decodes");
            assert_eq!((blob.generation, &blob.tables), (v.generation, &scratch));
        }
        None => {
            assert!(accept_unsigned, "an unsigned blob without the opt-in");
            let blob = decode_blob(b).expect("the unsigned blob decodes");
            assert_eq!(blob.tables, scratch);
        }
    }
}

#[cfg(test)]
mod test {
    use arbitrary::{Arbitrary, Unstructured};

    #[test]
    fn seed_corpus_passes() {
        let accepted = std::cell::Cell::new(0);
        let n = crate::replay_corpus("signed_verify", |data| {
            if let Ok(i) = super::SignedInput::arbitrary_take_rest(Unstructured::new(data)) {
                if let super::SignedInput::Raw {
                    bytes, installed, ..
                } = &i
                {
                    let ok = super::decode_verified_into(
                        &bytes.0,
                        &super::keys(),
                        &super::DEVICE,
                        *installed,
                        super::Unsigned::Reject,
                        &mut super::Tables::new(),
                    )
                    .is_ok();
                    accepted.set(accepted.get() + usize::from(ok));
                }
                super::run(&i);
            }
        });
        assert!(n > 0, "no seeds");
        assert!(accepted.get() >= 2, "the signed seeds must verify");
    }
}
