//! Signed table blobs: an Ed25519-signed envelope around a table blob,
//! bound to one device (its scope) with an optional expiry, with rollback
//! protection, verified in `no_std` (docs/tables.md, "Signed blobs").
//!
//! Layout of format version 2 (integers little-endian):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `LCMS` ([`SIGNED_MAGIC`]) |
//! | 4 | 2 | signed format version ([`SIGNED_VERSION`], 2) |
//! | 6 | 2 | reserved, 0 |
//! | 8 | 8 | key id ([`KeyId`]: the signer's public key's first 8 bytes) |
//! | 16 | 2 | scope: the switch (DC) id the tables were built for |
//! | 18 | 2 | reserved, 0 |
//! | 20 | 16 | scope: the topology's digest ([`Scope::topology`]) |
//! | 36 | 8 | not after: Unix seconds after which the blob is refused by a device with a clock; 0 for none |
//! | 44 | 4 | length `L` of the inner blob |
//! | 48 | `L` | the inner blob: a whole `LCMT` table blob ([`super`]), whose generation is the signed generation |
//! | 48 + `L` | 64 | Ed25519 signature (RFC 8032, pure) over bytes `0..48 + L` |
//!
//! The signature covers everything before it: the magic and version, the
//! key id, the scope, the expiry, the length and the inner blob with its
//! generation and CRC. An installer ([`decode_verified_into`]) checks the
//! envelope, then the cheap claims before the expensive signature: the
//! scope against its own ([`SignatureError::WrongScope`]: a blob built for
//! another switch or topology, the mix-and-match attack), the expiry
//! against its clock if it has one ([`SignatureError::Expired`]: a
//! withheld update, the freeze attack), the generation against its floor
//! ([`SignatureError::Rollback`]); then it finds the trusted key the key
//! id names ([`TrustedKeys`]: one, or two during a rotation), verifies the
//! signature, and only then decodes the inner blob into the caller's
//! scratch tables. (A forged claim can only make a device refuse, which
//! anyone who can reach its management channel can do anyway; checking it
//! first spares a replayed blob's full verification.) Version 1 envelopes
//! (no scope) are refused ([`SignatureError::Unscoped`]). Unsigned blobs
//! are refused unless the caller opts in ([`Unsigned::Accept`]), and even
//! then the rollback rule holds.
//!
//! Verification uses `ed25519-compact` (strict: non-canonical `S` and `R`,
//! small-order keys and points rejected); why that crate, and what it
//! costs in flash, stack and time, is in docs/tables.md and
//! docs/firmware.md.

use lcmp_decide::tables::ValidTables;
use lcmp_decide::Tables;

use super::{
    array, decode_blob_into, decode_blob_valid, BLOB_HEADER_LEN, BLOB_MAGIC, MAX_BLOB_LEN,
};
use crate::error::{FormatError, SignatureError, TablesError};

/// Magic bytes of a signed blob.
pub const SIGNED_MAGIC: [u8; 4] = *b"LCMS";
/// The signed-envelope format version this build writes and reads.
pub const SIGNED_VERSION: u16 = 2;
/// Envelope header length, bytes.
pub const SIGNED_HEADER_LEN: usize = 48;
/// Bytes of a topology digest in a [`Scope`].
pub const TOPOLOGY_DIGEST_LEN: usize = 16;
/// Ed25519 signature length, bytes.
pub const SIGNATURE_LEN: usize = 64;
/// Ed25519 public key length, bytes.
pub const PUBLIC_KEY_LEN: usize = 32;
/// Largest signed blob: header, the largest table blob, signature.
pub const MAX_SIGNED_LEN: usize = SIGNED_HEADER_LEN + MAX_BLOB_LEN + SIGNATURE_LEN;

/// Names the key a blob was signed with: the first 8 bytes of its Ed25519
/// public key, little-endian. It only selects which trusted key to verify
/// with; the signature is what is checked (a forged id names a key whose
/// signature the forger cannot make).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct KeyId(pub u64);

impl KeyId {
    /// The id of a public key.
    pub fn of(public_key: &[u8; PUBLIC_KEY_LEN]) -> KeyId {
        KeyId(u64::from_le_bytes(array(public_key, 0)))
    }
}

impl core::fmt::Display for KeyId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Which device a signed blob is for: the switch (DC) id its tables were
/// built for and the digest of the topology they were built from
/// (`Topology::digest` in lcmp-tables: the first 16 bytes of the SHA-512
/// of its canonical encoding). A device is configured with its own scope
/// (`lcmp tables scope --topology F --switch S` prints it) and refuses a
/// blob for any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Scope {
    /// The switch (DC) id.
    pub switch: u16,
    /// The topology's digest.
    pub topology: [u8; TOPOLOGY_DIGEST_LEN],
}

impl Scope {
    /// The scope's bytes as the envelope holds them at offset 16 (switch,
    /// two reserved zero bytes, digest): 20 bytes, the C ABI's
    /// `lcmp_scope` and the hex form `lcmp tables scope` prints.
    pub fn to_bytes(&self) -> [u8; 20] {
        let mut b = [0u8; 20];
        b[..2].copy_from_slice(&self.switch.to_le_bytes());
        b[4..].copy_from_slice(&self.topology);
        b
    }

    /// The scope of [`Scope::to_bytes`]'s form ([`FormatError::ReservedBits`]
    /// if its reserved bytes are not 0).
    pub fn from_bytes(b: &[u8; 20]) -> Result<Scope, TablesError> {
        if array::<2>(b, 2) != [0, 0] {
            return Err(FormatError::ReservedBits.into());
        }
        Ok(Scope {
            switch: u16::from_le_bytes(array(b, 0)),
            topology: array(b, 4),
        })
    }
}

/// What a signer states beside the tables: the device they are for and,
/// optionally, when they stop being valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Claims {
    /// The device the blob is for.
    pub scope: Scope,
    /// Unix seconds after which a device with a clock refuses the blob.
    pub not_after: Option<u64>,
}

/// What an installing device knows of itself: its scope and, if it has a
/// trustworthy clock, the time (Unix seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Device {
    /// The device's own scope.
    pub scope: Scope,
    /// Now, Unix seconds; `None` for a device without a clock (expiry then
    /// not checked).
    pub now: Option<u64>,
}

/// A public key the installer trusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustedKey {
    id: KeyId,
    key: [u8; PUBLIC_KEY_LEN],
}

impl TrustedKey {
    /// A trusted key from its 32 bytes (RFC 8032 encoding).
    ///
    /// # Errors
    /// [`SignatureError::BadKey`] if the bytes are not the canonical
    /// encoding of a curve point, or the point has a small order (such a
    /// key could never verify a signature).
    pub fn new(public_key: [u8; PUBLIC_KEY_LEN]) -> Result<TrustedKey, TablesError> {
        ed25519_compact::PublicKey::new(public_key)
            .validate()
            .map_err(|_| SignatureError::BadKey)?;
        Ok(TrustedKey {
            id: KeyId::of(&public_key),
            key: public_key,
        })
    }

    /// Its key id.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// Its 32 bytes.
    pub fn bytes(&self) -> &[u8; PUBLIC_KEY_LEN] {
        &self.key
    }
}

/// The keys an installer trusts: one, or two while a key is rotated (the
/// controller signs with the new key once every device trusts both, then
/// the old one is dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustedKeys {
    keys: [Option<TrustedKey>; 2],
}

impl TrustedKeys {
    /// One trusted key.
    pub const fn one(key: TrustedKey) -> TrustedKeys {
        TrustedKeys {
            keys: [Some(key), None],
        }
    }

    /// Two trusted keys (rotation).
    ///
    /// # Errors
    /// [`SignatureError::DuplicateKeyId`] if both have the same key id.
    pub fn two(a: TrustedKey, b: TrustedKey) -> Result<TrustedKeys, TablesError> {
        if a.id == b.id {
            return Err(SignatureError::DuplicateKeyId(a.id.0).into());
        }
        Ok(TrustedKeys {
            keys: [Some(a), Some(b)],
        })
    }

    /// The trusted key with this id.
    pub fn find(&self, id: KeyId) -> Option<&TrustedKey> {
        self.keys.iter().flatten().find(|k| k.id == id)
    }
}

/// Whether an installer takes unsigned (`LCMT`) blobs too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Unsigned {
    /// Only signed blobs (the default).
    #[default]
    Reject,
    /// Unsigned blobs too (an explicit opt-in, for a lab or a device whose
    /// management channel is trusted): still only newer generations.
    Accept,
}

/// What a verified blob is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Verified {
    /// The generation (the inner blob's).
    pub generation: u64,
    /// The key that signed it; `None` for an unsigned blob taken under
    /// [`Unsigned::Accept`].
    pub key_id: Option<KeyId>,
    /// The inner blob's format version.
    pub version: u16,
    /// The signed expiry (Unix seconds), if any.
    pub not_after: Option<u64>,
}

/// A signed blob whose envelope parsed (nothing verified yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// The key id the blob names.
    pub key_id: KeyId,
    /// What the signer claims (scope, expiry).
    pub claims: Claims,
    /// The inner table blob.
    pub inner: &'a [u8],
    /// The signed bytes (everything before the signature).
    pub signed: &'a [u8],
    /// The signature.
    pub signature: [u8; SIGNATURE_LEN],
}

/// Parses a signed blob's envelope: [`FormatError::Truncated`] (shorter
/// than header and signature), [`FormatError::BadMagic`],
/// [`FormatError::UnsupportedVersion`], [`FormatError::ReservedBits`],
/// [`TablesError::InputTooLarge`] (inner length over
/// [`super::MAX_BLOB_LEN`]), [`FormatError::Truncated`] or
/// [`FormatError::LengthMismatch`] (the bytes do not end with the
/// signature right after the inner blob).
pub fn parse_envelope(bytes: &[u8]) -> Result<Envelope<'_>, TablesError> {
    let min = SIGNED_HEADER_LEN + SIGNATURE_LEN;
    if bytes.len() < min {
        return Err(FormatError::Truncated {
            len: bytes.len(),
            need: min,
        }
        .into());
    }
    if array::<4>(bytes, 0) != SIGNED_MAGIC {
        return Err(FormatError::BadMagic.into());
    }
    let version = u16::from_le_bytes(array(bytes, 4));
    if version == 1 {
        return Err(SignatureError::Unscoped.into());
    }
    if version != SIGNED_VERSION {
        return Err(FormatError::UnsupportedVersion(version).into());
    }
    if u16::from_le_bytes(array(bytes, 6)) != 0 {
        return Err(FormatError::ReservedBits.into());
    }
    let key_id = KeyId(u64::from_le_bytes(array(bytes, 8)));
    let scope = Scope::from_bytes(&array(bytes, 16))?;
    let not_after = match u64::from_le_bytes(array(bytes, 36)) {
        0 => None,
        t => Some(t),
    };
    let declared = u32::from_le_bytes(array(bytes, 44));
    let inner_len = usize::try_from(declared).unwrap_or(usize::MAX);
    if inner_len > MAX_BLOB_LEN {
        return Err(TablesError::InputTooLarge {
            len: inner_len,
            max: MAX_BLOB_LEN,
        });
    }
    // inner_len <= MAX_BLOB_LEN: no overflow.
    let signed_len = SIGNED_HEADER_LEN.saturating_add(inner_len);
    let total = signed_len.saturating_add(SIGNATURE_LEN);
    if bytes.len() < total {
        return Err(FormatError::Truncated {
            len: bytes.len(),
            need: total,
        }
        .into());
    }
    if bytes.len() > total {
        return Err(FormatError::LengthMismatch {
            declared: u64::from(declared),
            actual: bytes.len().saturating_sub(min) as u64,
        }
        .into());
    }
    let (signed, sig) = bytes
        .split_at_checked(signed_len)
        .ok_or(FormatError::Truncated {
            len: bytes.len(),
            need: total,
        })?;
    Ok(Envelope {
        key_id,
        claims: Claims { scope, not_after },
        inner: signed.get(SIGNED_HEADER_LEN..).unwrap_or(&[]),
        signed,
        signature: array(sig, 0),
    })
}

/// Checks a signed blob's envelope and signature against the trusted
/// keys (nothing is decoded): [`parse_envelope`]'s errors, then
/// [`SignatureError::UnknownKey`] and [`SignatureError::BadSignature`].
/// Returns the envelope.
pub fn verify_envelope<'a>(
    bytes: &'a [u8],
    keys: &TrustedKeys,
) -> Result<Envelope<'a>, TablesError> {
    let env = parse_envelope(bytes)?;
    check_signature(&env, keys)?;
    Ok(env)
}

/// The Ed25519 check itself, out of line: its curve arithmetic (about
/// 3 KiB of stack on thumbv7em) then never shares a frame with the
/// decoder's (docs/firmware.md, "Stack": no frame over 4 KiB).
#[inline(never)]
fn signature_ok(
    key: &[u8; PUBLIC_KEY_LEN],
    signed: &[u8],
    signature: &[u8; SIGNATURE_LEN],
) -> bool {
    ed25519_compact::PublicKey::new(*key)
        .verify(signed, &ed25519_compact::Signature::new(*signature))
        .is_ok()
}

/// The generation field of a table blob's header (0 if too short).
fn inner_generation(blob: &[u8]) -> u64 {
    u64::from_le_bytes(array(blob, 8))
}

/// Verifies a signed blob and decodes its tables into `scratch`, for an
/// installer `device` whose floor is generation `installed` (the larger
/// of the generation it runs and the one it persisted; 0 when it has
/// none: every signed generation is at least 1).
///
/// Checks, in order, cheap ones first: the envelope ([`parse_envelope`];
/// a version 1 envelope is [`SignatureError::Unscoped`]; under
/// [`Unsigned::Reject`] an unsigned `LCMT` blob is
/// [`SignatureError::Unsigned`]), the scope
/// ([`SignatureError::WrongScope`] unless it is the device's), the expiry
/// ([`SignatureError::Expired`] if the device has a clock past it), the
/// generation ([`SignatureError::Rollback`] unless it is greater than
/// `installed`), the key id ([`SignatureError::UnknownKey`]), the
/// signature ([`SignatureError::BadSignature`]), then the inner blob as
/// [`super::decode_blob_into`] checks it.
///
/// Nothing is changed on error but `scratch`, and `scratch` only by the
/// inner decode: a blob that fails any check before it leaves it
/// untouched. The caller persists the returned generation (its floor),
/// then installs from `scratch`, only after `Ok`.
///
/// ```
/// # use lcmp_tables::blob::{encode_blob_vec, signed::*};
/// # use lcmp_tables::{SignatureError, TablesError};
/// # use lcmp_decide::Tables;
/// let seed = [7u8; 32];
/// let keys = TrustedKeys::one(TrustedKey::new(public_key(&seed)).unwrap());
/// let scope = Scope { switch: 1, topology: [9; 16] };
/// let claims = Claims { scope, not_after: Some(2_000_000_000) };
/// let inner = encode_blob_vec(&Tables::paper_defaults(), 5).unwrap();
/// let blob = sign_blob_vec(&inner, &seed, &claims).unwrap();
/// let mut scratch = Tables::new();
/// let me = Device { scope, now: Some(1_800_000_000) };
/// let v = decode_verified_into(&blob, &keys, &me, 4, Unsigned::Reject, &mut scratch).unwrap();
/// assert_eq!(v.generation, 5);
/// assert_eq!(
///     decode_verified_into(&blob, &keys, &me, 5, Unsigned::Reject, &mut scratch),
///     Err(TablesError::Signature(SignatureError::Rollback { installed: 5, generation: 5 }))
/// );
/// let other = Device { scope: Scope { switch: 2, ..scope }, now: None };
/// assert!(matches!(
///     decode_verified_into(&blob, &keys, &other, 4, Unsigned::Reject, &mut scratch),
///     Err(TablesError::Signature(SignatureError::WrongScope { .. }))
/// ));
/// ```
pub fn decode_verified_into(
    bytes: &[u8],
    keys: &TrustedKeys,
    device: &Device,
    installed: u64,
    unsigned: Unsigned,
    scratch: &mut Tables,
) -> Result<Verified, TablesError> {
    decode_verified_valid(bytes, keys, device, installed, unsigned, scratch).map(|(v, _)| v)
}

/// [`decode_verified_into`], returning with what was verified the proof
/// that the tables were validated ([`ValidTables`], a borrow of
/// `scratch`), for an install that does not validate them again
/// (`DeciderWith::install_valid`). The same checks, in the same order,
/// with the same errors.
pub fn decode_verified_valid<'a>(
    bytes: &[u8],
    keys: &TrustedKeys,
    device: &Device,
    installed: u64,
    unsigned: Unsigned,
    scratch: &'a mut Tables,
) -> Result<(Verified, ValidTables<'a>), TablesError> {
    let (inner, env) = checked(bytes, keys, device, installed, unsigned)?;
    let (generation, valid) = decode_blob_valid(inner, scratch)?;
    Ok((verified(generation, inner, env), valid))
}

/// Every check of [`decode_verified_into`] but the decode of the tables:
/// the envelope, scope, expiry, generation, key and signature, then the
/// inner blob's header and CRC (its [`crate::FormatError`]s up to
/// `CrcMismatch`; the tables themselves are checked by the install).
/// Signed blobs only ([`SignatureError::Unsigned`] for an `LCMT` blob).
/// Needs no scratch: a device verifies, persists the generation, and only
/// then decodes and installs, passing the floor it had before (the
/// generation it persisted is not newer than itself).
///
/// ```
/// # use lcmp_tables::blob::{encode_blob_vec, signed::*};
/// # use lcmp_tables::{SignatureError, TablesError};
/// # use lcmp_decide::Tables;
/// let seed = [7u8; 32];
/// let keys = TrustedKeys::one(TrustedKey::new(public_key(&seed)).unwrap());
/// let scope = Scope { switch: 1, topology: [9; 16] };
/// let inner = encode_blob_vec(&Tables::paper_defaults(), 5).unwrap();
/// let blob = sign_blob_vec(&inner, &seed, &Claims { scope, not_after: None }).unwrap();
/// let me = Device { scope, now: None };
/// let v = verify_signed(&blob, &keys, &me, 4).unwrap();
/// assert_eq!((v.generation, v.key_id), (5, Some(KeyId::of(&public_key(&seed)))));
/// assert!(matches!(
///     verify_signed(&blob, &keys, &me, 5),
///     Err(TablesError::Signature(SignatureError::Rollback { .. }))
/// ));
/// ```
pub fn verify_signed(
    bytes: &[u8],
    keys: &TrustedKeys,
    device: &Device,
    installed: u64,
) -> Result<Verified, TablesError> {
    let (inner, env) = checked(bytes, keys, device, installed, Unsigned::Reject)?;
    let (generation, _, _) = super::check_blob(inner)?;
    Ok(verified(generation, inner, env))
}

/// What [`decode_verified_into`] reports of a blob that passed.
fn verified(generation: u64, inner: &[u8], env: Option<Envelope<'_>>) -> Verified {
    Verified {
        generation,
        key_id: env.map(|e| e.key_id),
        version: u16::from_le_bytes(array(inner, 4)),
        not_after: env.and_then(|e| e.claims.not_after),
    }
}

/// The checks of [`decode_verified_into`] before the decode; the inner
/// blob and the envelope (`None` for an unsigned blob it accepts).
fn checked<'a>(
    bytes: &'a [u8],
    keys: &TrustedKeys,
    device: &Device,
    installed: u64,
    unsigned: Unsigned,
) -> Result<(&'a [u8], Option<Envelope<'a>>), TablesError> {
    let (inner, env) = if array::<4>(bytes, 0) == BLOB_MAGIC {
        if unsigned == Unsigned::Reject {
            return Err(SignatureError::Unsigned.into());
        }
        (bytes, None)
    } else {
        let env = parse_envelope(bytes)?;
        check_claims(&env.claims, device)?;
        (env.inner, Some(env))
    };
    // A header too short to hold a generation is the decoder's error.
    if inner.len() >= BLOB_HEADER_LEN {
        let generation = inner_generation(inner);
        if generation <= installed {
            return Err(SignatureError::Rollback {
                installed,
                generation,
            }
            .into());
        }
    }
    if let Some(env) = env {
        check_signature(&env, keys)?;
    }
    Ok((inner, env))
}

/// The scope and expiry checks of [`decode_verified_into`].
///
/// # Errors
/// [`SignatureError::WrongScope`], [`SignatureError::Expired`].
pub fn check_claims(claims: &Claims, device: &Device) -> Result<(), TablesError> {
    if claims.scope != device.scope {
        return Err(SignatureError::WrongScope {
            switch: claims.scope.switch,
            expected: device.scope.switch,
        }
        .into());
    }
    if let (Some(not_after), Some(now)) = (claims.not_after, device.now) {
        if now > not_after {
            return Err(SignatureError::Expired { not_after, now }.into());
        }
    }
    Ok(())
}

/// The key lookup and signature check of an envelope.
fn check_signature(env: &Envelope<'_>, keys: &TrustedKeys) -> Result<(), TablesError> {
    let key = keys
        .find(env.key_id)
        .ok_or(SignatureError::UnknownKey(env.key_id.0))?;
    if !signature_ok(&key.key, env.signed, &env.signature) {
        return Err(SignatureError::BadSignature.into());
    }
    Ok(())
}

/// The Ed25519 public key of a 32-byte secret seed (RFC 8032).
pub fn public_key(seed: &[u8; 32]) -> [u8; PUBLIC_KEY_LEN] {
    *ed25519_compact::KeyPair::from_seed(ed25519_compact::Seed::new(*seed)).pk
}

/// Signs a table blob with the secret `seed` (RFC 8032, deterministic)
/// into `out`; returns the signed blob's length. The inner blob must
/// decode ([`super::decode_blob`]'s checks): only installable tables are
/// signed.
pub fn sign_blob(
    inner: &[u8],
    seed: &[u8; 32],
    claims: &Claims,
    out: &mut [u8],
) -> Result<usize, TablesError> {
    let mut scratch = Tables::new();
    decode_blob_into(inner, &mut scratch)?;
    let kp = ed25519_compact::KeyPair::from_seed(ed25519_compact::Seed::new(*seed));
    let total = SIGNED_HEADER_LEN
        .saturating_add(inner.len())
        .saturating_add(SIGNATURE_LEN);
    let (signed, sig) = out
        .get_mut(..total)
        .ok_or(FormatError::BufferTooSmall)?
        .split_at_mut_checked(SIGNED_HEADER_LEN.saturating_add(inner.len()))
        .ok_or(FormatError::BufferTooSmall)?;
    let (header, body) = signed
        .split_at_mut_checked(SIGNED_HEADER_LEN)
        .ok_or(FormatError::BufferTooSmall)?;
    let mut h = [0u8; SIGNED_HEADER_LEN];
    h[..4].copy_from_slice(&SIGNED_MAGIC);
    h[4..6].copy_from_slice(&SIGNED_VERSION.to_le_bytes());
    h[8..16].copy_from_slice(&KeyId::of(&kp.pk).0.to_le_bytes());
    h[16..36].copy_from_slice(&claims.scope.to_bytes());
    h[36..44].copy_from_slice(&claims.not_after.unwrap_or(0).to_le_bytes());
    // The inner blob decoded: at most MAX_BLOB_LEN < 2^32 bytes.
    h[44..48].copy_from_slice(&(inner.len() as u32).to_le_bytes());
    header.copy_from_slice(&h);
    body.copy_from_slice(inner);
    let s = kp.sk.sign(&*signed, None);
    sig.copy_from_slice(&*s);
    Ok(total)
}

/// [`sign_blob`] into a `Vec`.
#[cfg(feature = "alloc")]
pub fn sign_blob_vec(
    inner: &[u8],
    seed: &[u8; 32],
    claims: &Claims,
) -> Result<alloc::vec::Vec<u8>, TablesError> {
    let mut out = alloc::vec![0u8; MAX_SIGNED_LEN];
    let n = sign_blob(inner, seed, claims, &mut out)?;
    out.truncate(n);
    Ok(out)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::blob::encode_blob_vec;
    use crate::{build_tables, BuildOptions, Topology};
    use alloc::vec::Vec;
    use quickcheck::quickcheck;

    const SEED_A: [u8; 32] = [0xA5; 32];
    const SEED_B: [u8; 32] = [0x5B; 32];

    /// An envelope header naming key 7 and an inner blob of `declared`
    /// bytes, followed by `rest` zero bytes.
    fn envelope(declared: u32, rest: usize) -> Vec<u8> {
        let mut b = alloc::vec![0u8; SIGNED_HEADER_LEN + rest];
        b[..4].copy_from_slice(&SIGNED_MAGIC);
        b[4..6].copy_from_slice(&SIGNED_VERSION.to_le_bytes());
        b[8..16].copy_from_slice(&7u64.to_le_bytes());
        b[44..48].copy_from_slice(&declared.to_le_bytes());
        b
    }

    /// The envelope's size limits: at least a header and a signature, an
    /// inner blob of at most `MAX_BLOB_LEN` (so at most `MAX_SIGNED_LEN`
    /// bytes in all), the limit checked before the length.
    #[test]
    fn envelope_sizes_up_to_their_limits() {
        let shortest = envelope(0, SIGNATURE_LEN);
        assert_eq!(shortest.len(), SIGNED_HEADER_LEN + SIGNATURE_LEN);
        let e = parse_envelope(&shortest).expect("header and signature");
        assert_eq!((e.key_id, e.inner.len()), (KeyId(7), 0));
        for short in [&shortest[..shortest.len() - 1], &b"xyz"[..]] {
            assert_eq!(
                parse_envelope(short).err(),
                Some(TablesError::Format(FormatError::Truncated {
                    len: short.len(),
                    need: SIGNED_HEADER_LEN + SIGNATURE_LEN
                }))
            );
        }
        let largest = envelope(MAX_BLOB_LEN as u32, MAX_BLOB_LEN + SIGNATURE_LEN);
        assert_eq!(largest.len(), MAX_SIGNED_LEN);
        let e = parse_envelope(&largest).expect("the largest inner blob");
        assert_eq!(e.inner.len(), MAX_BLOB_LEN);
        for over in [1, 2] {
            let declared = MAX_BLOB_LEN + over;
            assert_eq!(
                parse_envelope(&envelope(declared as u32, SIGNATURE_LEN)).err(),
                Some(TablesError::InputTooLarge {
                    len: declared,
                    max: MAX_BLOB_LEN
                })
            );
        }
    }

    #[test]
    fn key_ids_print_as_sixteen_hex_digits() {
        assert_eq!(
            alloc::string::ToString::to_string(&KeyId(0x1234)),
            "0000000000001234"
        );
        assert_eq!(
            alloc::string::ToString::to_string(&KeyId(u64::MAX)),
            "ffffffffffffffff"
        );
    }

    fn key(seed: &[u8; 32]) -> TrustedKey {
        TrustedKey::new(public_key(seed)).expect("valid key")
    }

    fn switch(s: u16) -> Tables {
        let topo = Topology::embedded("testbed8").expect("embedded");
        build_tables(&topo, s, &BuildOptions::default()).expect("build")
    }

    /// The scope of testbed8's switch `s`.
    fn scope(s: u16) -> Scope {
        Topology::embedded("testbed8").expect("embedded").scope(s)
    }

    /// The device the tests install on: testbed8's switch 1, no clock.
    fn me() -> Device {
        Device {
            scope: scope(1),
            now: None,
        }
    }

    fn signed_with(t: &Tables, generation: u64, seed: &[u8; 32], claims: &Claims) -> Vec<u8> {
        let inner = encode_blob_vec(t, generation).expect("encode");
        sign_blob_vec(&inner, seed, claims).expect("sign")
    }

    /// Signed for [`me`], no expiry.
    fn signed(t: &Tables, generation: u64, seed: &[u8; 32]) -> Vec<u8> {
        let claims = Claims {
            scope: scope(1),
            not_after: None,
        };
        signed_with(t, generation, seed, &claims)
    }

    fn install(
        b: &[u8],
        keys: &TrustedKeys,
        installed: u64,
        unsigned: Unsigned,
    ) -> Result<Verified, TablesError> {
        decode_verified_into(b, keys, &me(), installed, unsigned, &mut Tables::new())
    }

    #[test]
    fn good_blob_installs_and_reports_key_and_generation() {
        let keys = TrustedKeys::one(key(&SEED_A));
        let b = signed(&switch(1), 9, &SEED_A);
        let mut scratch = switch(2);
        let v = decode_verified_into(&b, &keys, &me(), 8, Unsigned::Reject, &mut scratch);
        assert_eq!(
            v,
            Ok(Verified {
                generation: 9,
                key_id: Some(KeyId::of(&public_key(&SEED_A))),
                version: crate::blob::BLOB_VERSION,
                not_after: None,
            })
        );
        assert_eq!(scratch, switch(1));
        // Verify-only reports the same, with nothing decoded.
        assert_eq!(verify_signed(&b, &keys, &me(), 8), v);
        let inner = encode_blob_vec(&switch(1), 9).expect("encode");
        assert_eq!(
            verify_signed(&inner, &keys, &me(), 8),
            Err(SignatureError::Unsigned.into())
        );
        // Deterministic signatures: the same input signs to the same bytes.
        assert_eq!(signed(&switch(1), 9, &SEED_A), b);
    }

    #[test]
    fn each_rejection_has_its_error_and_leaves_the_scratch_untouched() {
        let a = key(&SEED_A);
        let keys = TrustedKeys::one(a);
        let good = signed(&switch(1), 9, &SEED_A);
        let mut tampered = good.clone();
        tampered[SIGNED_HEADER_LEN + BLOB_HEADER_LEN + 3] ^= 0x01;
        // Another key, claiming the trusted key's id.
        let mut forged = signed(&switch(1), 9, &SEED_B);
        forged[8..16].copy_from_slice(&a.id().0.to_le_bytes());
        let claims = |switch, not_after| Claims {
            scope: scope(switch),
            not_after,
        };
        // Switch 2's tables, validly signed for switch 2 (mix-and-match).
        let other_switch = signed_with(&switch(2), 9, &SEED_A, &claims(2, None));
        // The same switch id in another topology.
        let bso13 = Topology::embedded("bso13").expect("embedded").scope(1);
        let other_topology = signed_with(
            &switch(1),
            9,
            &SEED_A,
            &Claims {
                scope: bso13,
                not_after: None,
            },
        );
        let expired = signed_with(&switch(1), 9, &SEED_A, &claims(1, Some(999)));
        // A version 1 envelope: the old 20-byte header, no scope.
        let mut v1 = good.clone();
        v1[4] = 1;
        // Cheap checks first: a tampered blob for another switch, or with
        // an old generation, is refused before its signature is checked.
        let mut tampered_other = other_switch.clone();
        let last = tampered_other.len() - 1;
        tampered_other[last] ^= 1;
        let mut tampered_old = signed(&switch(1), 3, &SEED_A);
        let last = tampered_old.len() - 1;
        tampered_old[last] ^= 1;
        let cases: [(&[u8], u64, TablesError); 11] = [
            (
                &other_switch,
                0,
                SignatureError::WrongScope {
                    switch: 2,
                    expected: 1,
                }
                .into(),
            ),
            (
                &other_topology,
                0,
                SignatureError::WrongScope {
                    switch: 1,
                    expected: 1,
                }
                .into(),
            ),
            (
                &expired,
                0,
                SignatureError::Expired {
                    not_after: 999,
                    now: 1000,
                }
                .into(),
            ),
            (&v1, 0, SignatureError::Unscoped.into()),
            (
                &tampered_other,
                0,
                SignatureError::WrongScope {
                    switch: 2,
                    expected: 1,
                }
                .into(),
            ),
            (
                &tampered_old,
                9,
                SignatureError::Rollback {
                    installed: 9,
                    generation: 3,
                }
                .into(),
            ),
            (&tampered, 0, SignatureError::BadSignature.into()),
            (
                &signed(&switch(1), 9, &SEED_B),
                0,
                SignatureError::UnknownKey(KeyId::of(&public_key(&SEED_B)).0).into(),
            ),
            (&forged, 0, SignatureError::BadSignature.into()),
            (
                &good,
                9,
                SignatureError::Rollback {
                    installed: 9,
                    generation: 9,
                }
                .into(),
            ),
            (
                &signed(&switch(1), 3, &SEED_A),
                9,
                SignatureError::Rollback {
                    installed: 9,
                    generation: 3,
                }
                .into(),
            ),
        ];
        let clocked = Device {
            now: Some(1000),
            ..me()
        };
        for (b, installed, want) in cases {
            // Verify-only refuses each for the same reason.
            assert_eq!(
                verify_signed(b, &keys, &clocked, installed),
                Err(want.clone())
            );
            let mut scratch = switch(2);
            assert_eq!(
                decode_verified_into(
                    b,
                    &keys,
                    &clocked,
                    installed,
                    Unsigned::Reject,
                    &mut scratch
                ),
                Err(want.clone())
            );
            assert_eq!(scratch, switch(2), "{want:?}");
        }
        // Without a clock, an expiry is not checked; with one before it,
        // the blob installs.
        for now in [None, Some(999)] {
            let device = Device { now, ..me() };
            let v = decode_verified_into(
                &expired,
                &keys,
                &device,
                0,
                Unsigned::Reject,
                &mut Tables::new(),
            );
            assert_eq!(v.map(|v| v.not_after), Ok(Some(999)));
        }
    }

    #[test]
    fn unsigned_blobs_only_by_opt_in_and_still_newer() {
        let keys = TrustedKeys::one(key(&SEED_A));
        let plain = encode_blob_vec(&switch(1), 4).expect("encode");
        assert_eq!(
            install(&plain, &keys, 0, Unsigned::Reject),
            Err(SignatureError::Unsigned.into())
        );
        assert_eq!(
            install(&plain, &keys, 3, Unsigned::Accept).map(|v| (v.generation, v.key_id)),
            Ok((4, None))
        );
        assert!(matches!(
            install(&plain, &keys, 4, Unsigned::Accept),
            Err(TablesError::Signature(SignatureError::Rollback { .. }))
        ));
        // Signed blobs still need their signature under the opt-in.
        let mut bad = signed(&switch(1), 9, &SEED_A);
        let last = bad.len() - 1;
        bad[last] ^= 0x80;
        assert_eq!(
            install(&bad, &keys, 0, Unsigned::Accept),
            Err(SignatureError::BadSignature.into())
        );
    }

    #[test]
    fn rotation_trusts_both_keys() {
        let keys = TrustedKeys::two(key(&SEED_A), key(&SEED_B)).expect("two keys");
        for (g, seed) in [(1, &SEED_A), (2, &SEED_B)] {
            let b = signed(&switch(1), g, seed);
            assert_eq!(
                install(&b, &keys, g - 1, Unsigned::Reject).map(|v| v.key_id),
                Ok(Some(KeyId::of(&public_key(seed))))
            );
        }
        assert_eq!(
            TrustedKeys::two(key(&SEED_A), key(&SEED_A)),
            Err(SignatureError::DuplicateKeyId(key(&SEED_A).id().0).into())
        );
    }

    #[test]
    fn bad_keys_and_envelopes() {
        // Not canonical (y >= p), and the identity (small order).
        let mut identity = [0u8; 32];
        identity[0] = 1;
        for k in [[0xFF; 32], identity] {
            assert_eq!(TrustedKey::new(k), Err(SignatureError::BadKey.into()));
        }
        let keys = TrustedKeys::one(key(&SEED_A));
        let good = signed(&switch(1), 9, &SEED_A);
        let mut long = good.clone();
        long.push(0);
        let mut magic = good.clone();
        magic[0] = b'X';
        let mut version = good.clone();
        version[4] = 3;
        let mut reserved = good.clone();
        reserved[7] = 1;
        let mut huge = good.clone();
        huge[44..48].copy_from_slice(&u32::MAX.to_le_bytes());
        for (b, ok) in [
            (&good[..10], false),
            (&good[..good.len() - 1], false),
            (&long[..], false),
            (&magic[..], false),
            (&version[..], false),
            (&reserved[..], false),
            (&huge[..], false),
            (&good[..], true),
        ] {
            let r = install(b, &keys, 0, Unsigned::Reject);
            assert_eq!(r.is_ok(), ok, "{r:?}");
            if !ok {
                assert!(matches!(
                    r,
                    Err(TablesError::Format(_) | TablesError::InputTooLarge { .. })
                ));
            }
        }
        // A signed inner blob that does not decode is never signed.
        let mut inner = encode_blob_vec(&switch(1), 1).expect("encode");
        inner[30] ^= 1;
        let claims = Claims {
            scope: scope(1),
            not_after: None,
        };
        assert!(sign_blob_vec(&inner, &SEED_A, &claims).is_err());
    }

    quickcheck! {
        /// A blob verifies iff nothing in it changed since it was signed by
        /// a trusted key: any edit (byte writes, truncation or extension)
        /// that changes the bytes is rejected, and an edit that writes the
        /// same bytes back is not; a blob signed by an untrusted key never
        /// verifies.
        fn verifies_iff_unchanged(
            pick: (u8, bool, bool),
            generation: u64,
            edits: Vec<(u16, u8)>,
            resize: i8
        ) -> bool {
            let generation = generation.max(1);
            let t = switch(u16::from(pick.0 % 8) + 1);
            let seed = if pick.1 { &SEED_A } else { &SEED_B };
            let trusted = TrustedKeys::one(key(&SEED_A));
            let original = signed(&t, generation, seed);
            let mut b = original.clone();
            // Edits in the first bytes are common (header and key id).
            let n = b.len();
            for &(at, v) in &edits {
                let at = if pick.2 { usize::from(at) % 40 } else { usize::from(at) % n };
                b[at] = v;
            }
            match resize {
                r if r > 100 => b.push(r as u8),
                r if r < -100 => { b.pop(); }
                _ => {}
            }
            let mut scratch = Tables::new();
            let r = decode_verified_into(&b, &trusted, &me(), 0, Unsigned::Reject, &mut scratch);
            let should = b == original && pick.1;
            match r {
                Ok(v) => should && v.generation == generation && scratch == t,
                Err(_) => !should,
            }
        }

        /// Verification never panics on arbitrary bytes, signed-looking or
        /// not, and never accepts them (forging needs the key).
        fn arbitrary_bytes_never_verify(bytes: Vec<u8>, as_signed: bool) -> bool {
            let keys = TrustedKeys::one(key(&SEED_A));
            let mut b = bytes;
            if as_signed {
                let mut h = Vec::new();
                h.extend_from_slice(&SIGNED_MAGIC);
                h.extend_from_slice(&SIGNED_VERSION.to_le_bytes());
                h.extend_from_slice(&[0, 0]);
                h.extend_from_slice(&keys.find(key(&SEED_A).id()).map(|k| k.id().0).unwrap_or(0).to_le_bytes());
                h.extend_from_slice(&me().scope.to_bytes());
                h.extend_from_slice(&[0; 8]);
                let inner = b.len().saturating_sub(SIGNATURE_LEN) as u32;
                h.extend_from_slice(&inner.to_le_bytes());
                h.extend_from_slice(&b);
                b = h;
            }
            install(&b, &keys, 0, Unsigned::Reject).is_err()
        }
    }
}
