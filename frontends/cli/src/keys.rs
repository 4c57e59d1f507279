//! The controller side of signed table blobs: `lcmp tables keygen`,
//! `lcmp tables sign` and the signature check of `lcmp tables verify
//! --pubkey` (docs/tables.md, "Signed blobs").
//!
//! Keys are PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, what `openssl genpkey
//! -algorithm ed25519` writes) and SubjectPublicKeyInfo PEM (`-----BEGIN
//! PUBLIC KEY-----`, `openssl pkey -pubout`), parsed and written by the
//! RustCrypto `ed25519`/`pkcs8` crates; the blob is signed and verified by
//! `lcmp_tables::blob::signed`.

use std::path::{Path, PathBuf};

use ed25519::pkcs8::spki::der::pem::LineEnding;
use ed25519::pkcs8::{DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519::{KeypairBytes, PublicKeyBytes};
use lcmp_tables::blob::signed::{
    public_key, sign_blob_vec, KeyId, TrustedKey, TrustedKeys, Unsigned,
};

use crate::{print, read_file, read_text, Failure};

/// Reads a PKCS#8 PEM Ed25519 private key; returns its 32-byte seed.
fn read_secret(path: &Path) -> Result<[u8; 32], Failure> {
    let pem = read_text(path)?;
    let kp: KeypairBytes = pem.trim().parse().map_err(|e| {
        format!(
            "{}: not a PKCS#8 PEM Ed25519 private key ({e})",
            path.display()
        )
    })?;
    if let Some(pk) = &kp.public_key {
        if pk.0 != public_key(&kp.secret_key) {
            return Err(format!(
                "{}: the public key in the file does not match its private key",
                path.display()
            ));
        }
    }
    Ok(kp.secret_key)
}

/// Reads a SubjectPublicKeyInfo PEM Ed25519 public key as a trusted key.
fn read_public(path: &Path) -> Result<TrustedKey, Failure> {
    let pem = read_text(path)?;
    let pk = PublicKeyBytes::from_public_key_pem(pem.trim())
        .map_err(|e| format!("{}: not a PEM Ed25519 public key ({e})", path.display()))?;
    TrustedKey::new(pk.0).map_err(|e| format!("{}: {e}", path.display()))
}

/// The trusted keys of one or two `--pubkey` files.
pub(crate) fn trusted(paths: &[PathBuf]) -> Result<TrustedKeys, Failure> {
    match paths {
        [one] => Ok(TrustedKeys::one(read_public(one)?)),
        [a, b] => TrustedKeys::two(read_public(a)?, read_public(b)?).map_err(|e| e.to_string()),
        _ => Err("give one or two --pubkey files".into()),
    }
}

/// Writes `text` to a new file (never over an existing one), readable by
/// its owner only when `secret`.
fn write_new(path: &Path, text: &str, secret: bool) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = o
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `lcmp tables keygen --key KEY.pem --pubkey PUB.pem`.
pub(crate) fn keygen(key: &Path, pubkey: &Path) -> Result<(), Failure> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| format!("no system randomness: {e}"))?;
    let pk = public_key(&seed);
    // PKCS#8 v1 (no public key inside), as `openssl genpkey` writes it.
    let kp = KeypairBytes {
        secret_key: seed,
        public_key: None,
    };
    seed.fill(0);
    let secret_pem = kp
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| format!("encoding the private key: {e}"))?;
    let public_pem = PublicKeyBytes(pk)
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("encoding the public key: {e}"))?;
    write_new(key, &secret_pem, true)?;
    write_new(pubkey, &public_pem, false)?;
    print(&format!(
        "wrote {} (private, PKCS#8 PEM) and {} (public); key id {}\n",
        key.display(),
        pubkey.display(),
        KeyId::of(&pk)
    ))
}

/// `lcmp tables sign --key KEY.pem --topology T --switch S [--not-after
/// T] IN -o OUT`.
pub(crate) fn sign(
    key: &Path,
    input: &Path,
    output: &Path,
    claims: &lcmp_tables::blob::signed::Claims,
) -> Result<(), Failure> {
    let seed = read_secret(key)?;
    let inner = read_file(input)?;
    let generation = lcmp_tables::blob::decode_blob(&inner)
        .map_err(|e| format!("{}: {e}", input.display()))?
        .generation;
    let signed =
        sign_blob_vec(&inner, &seed, claims).map_err(|e| format!("{}: {e}", input.display()))?;
    std::fs::write(output, &signed).map_err(|e| format!("{}: {e}", output.display()))?;
    let expiry = claims
        .not_after
        .map_or_else(|| "no expiry".to_string(), |t| format!("not after {t}"));
    print(&format!(
        "wrote {} ({} bytes): signed by key id {}, generation {generation}, for switch {}, {expiry}\n",
        output.display(),
        signed.len(),
        KeyId::of(&public_key(&seed)),
        claims.scope.switch
    ))
}

/// What `verify` learnt of a signed blob: its inner blob, key id, and
/// whether the signature was checked.
pub(crate) struct Checked {
    /// The inner (unsigned) blob.
    pub(crate) inner: Vec<u8>,
    /// The key id and the signature's state, for the summary line.
    pub(crate) note: String,
}

/// Checks a signed blob's signature (with `--pubkey`), its scope against
/// `scope` (if given; else it is reported), its expiry against the
/// system clock and the rollback rule against `installed`, or refuses a
/// signed blob without `--pubkey` and an unsigned blob with it.
pub(crate) fn check(
    path: &Path,
    bytes: &[u8],
    pubkeys: &[PathBuf],
    installed: u64,
    scope: Option<lcmp_tables::blob::signed::Scope>,
) -> Result<Option<Checked>, Failure> {
    let is_signed = bytes.get(..4) == Some(&lcmp_tables::blob::signed::SIGNED_MAGIC[..]);
    if pubkeys.is_empty() {
        if is_signed {
            let env = lcmp_tables::blob::signed::parse_envelope(bytes)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            return Err(format!(
                "{}: signed by key id {}: give --pubkey to check the signature",
                path.display(),
                env.key_id
            ));
        }
        return Ok(None);
    }
    let keys = trusted(pubkeys)?;
    let mut scratch = lcmp_decide::Tables::new();
    let env = lcmp_tables::blob::signed::parse_envelope(bytes);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs());
    // Without a scope to check, the blob's own (reported below).
    let device = lcmp_tables::blob::signed::Device {
        scope: match (scope, &env) {
            (Some(s), _) => s,
            (None, Ok(e)) => e.claims.scope,
            (None, Err(_)) => lcmp_tables::blob::signed::Scope {
                switch: 0,
                topology: [0; 16],
            },
        },
        now,
    };
    let v = lcmp_tables::blob::signed::decode_verified_into(
        bytes,
        &keys,
        &device,
        installed,
        Unsigned::Reject,
        &mut scratch,
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let env = env.map_err(|e| format!("{}: {e}", path.display()))?;
    let checked_scope = if scope.is_some() {
        "scope checked"
    } else {
        "scope not checked (give --topology and --switch)"
    };
    let key = v
        .key_id
        .map_or_else(|| "none".to_string(), |k| k.to_string());
    Ok(Some(Checked {
        inner: env.inner.to_vec(),
        note: format!(
            "signature good (key id {key}), for switch {}, {checked_scope}",
            env.claims.scope.switch
        ),
    }))
}
