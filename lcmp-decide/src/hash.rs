//! Flow keys and the fixed, specified hashes.
//!
//! * The ECMP hash, used to pick within a candidate set, is MurmurHash3
//!   x86_32 with a per-switch seed ([`murmur3_x86_32`]) over the key bytes
//!   of [`FlowKey::ecmp_bytes`], exactly as the paper's artifact hashes on
//!   x86; or, for switches whose hash unit is a CRC (Tofino), CRC-32
//!   (IEEE 802.3, as `crc::CRC_32_ISO_HDLC`) over the same bytes, XORed with
//!   the seed ([`HashAlgorithm::Crc32`]).
//! * The flow cache's fingerprint ([`FlowKey::fingerprint`]) is 64 bits over
//!   the whole 5-tuple (protocol included): MurmurHash3 with a fixed seed for
//!   the low half, `hash32`'s (unseeded) MurmurHash3 hasher for the high half.
//!
//! Byte layout of the ECMP key (documented in `docs/design.md` so P4 and
//! Rust agree): IPv4: `src`, `dst`, `sport | dport << 16`, each a
//! little-endian `u32` (an address is its numeric value: 10.0.0.1 is
//! `0x0A000001`), 12 bytes. IPv6: `src`, `dst` as little-endian `u128`
//! numeric values, then `sport | dport << 16` as a little-endian `u32`,
//! 36 bytes. The protocol is not part of the ECMP key (as in the artifact).

use core::hash::Hasher as _;

/// Which hash function spreads flows over a candidate set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HashAlgorithm {
    /// MurmurHash3 x86_32 seeded with the switch seed (the paper's artifact).
    #[default]
    Murmur3,
    /// CRC-32 (IEEE) over the same bytes, XORed with the switch seed:
    /// what a Tofino `Hash<bit<32>>(HashAlgorithm_t.CRC32)` computes.
    Crc32,
}

/// The addresses of a flow: both IPv4 or both IPv6, as numeric values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Addresses {
    /// IPv4 source and destination (10.0.0.1 is `0x0A00_0001`).
    V4 {
        /// Source address.
        src: u32,
        /// Destination address.
        dst: u32,
    },
    /// IPv6 source and destination (RoCEv2 runs over both).
    V6 {
        /// Source address.
        src: u128,
        /// Destination address.
        dst: u128,
    },
}

/// A flow's 5-tuple.
///
/// ```
/// # use lcmp_decide::FlowKey;
/// use core::net::Ipv4Addr;
/// let k = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 4791, 4791, 17);
/// assert_eq!(&k.ecmp_bytes()[..4], &[1, 0, 0, 10]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowKey {
    /// Source and destination addresses.
    pub addrs: Addresses,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol number.
    pub proto: u8,
}

/// The largest key encoding (IPv6 plus the protocol byte).
const MAX_KEY_BYTES: usize = 37;

/// A key's bytes in a fixed-size buffer (no allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyBytes {
    buf: [u8; MAX_KEY_BYTES],
    len: usize,
}

impl core::ops::Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl KeyBytes {
    fn new() -> Self {
        KeyBytes {
            buf: [0; MAX_KEY_BYTES],
            len: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let end = self.len.saturating_add(bytes.len());
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
            self.len = end;
        }
    }
}

/// Fixed seed of the fingerprint's low half (any constant works; it only has
/// to differ from typical ECMP seeds so the two hashes are independent).
const FINGERPRINT_SEED: u32 = 0x9E37_79B9;

impl FlowKey {
    /// An IPv4 flow.
    pub const fn v4(
        src: core::net::Ipv4Addr,
        dst: core::net::Ipv4Addr,
        sport: u16,
        dport: u16,
        proto: u8,
    ) -> Self {
        FlowKey {
            addrs: Addresses::V4 {
                src: src.to_bits(),
                dst: dst.to_bits(),
            },
            sport,
            dport,
            proto,
        }
    }

    /// An IPv6 flow.
    pub const fn v6(
        src: core::net::Ipv6Addr,
        dst: core::net::Ipv6Addr,
        sport: u16,
        dport: u16,
        proto: u8,
    ) -> Self {
        FlowKey {
            addrs: Addresses::V6 {
                src: src.to_bits(),
                dst: dst.to_bits(),
            },
            sport,
            dport,
            proto,
        }
    }

    /// The bytes the ECMP hash reads (see the module docs for the layout).
    pub fn ecmp_bytes(&self) -> KeyBytes {
        let mut b = KeyBytes::new();
        match self.addrs {
            Addresses::V4 { src, dst } => {
                b.push(&src.to_le_bytes());
                b.push(&dst.to_le_bytes());
            }
            Addresses::V6 { src, dst } => {
                b.push(&src.to_le_bytes());
                b.push(&dst.to_le_bytes());
            }
        }
        let ports = u32::from(self.sport) | (u32::from(self.dport) << 16);
        b.push(&ports.to_le_bytes());
        b
    }

    /// The ECMP hash of this flow under `algorithm` and `seed`.
    ///
    /// ```
    /// # use lcmp_decide::{FlowKey, HashAlgorithm, hash::murmur3_x86_32};
    /// # use core::net::Ipv4Addr;
    /// let k = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17);
    /// assert_eq!(k.ecmp_hash(HashAlgorithm::Murmur3, 7), murmur3_x86_32(&k.ecmp_bytes(), 7));
    /// ```
    pub fn ecmp_hash(&self, algorithm: HashAlgorithm, seed: u32) -> u32 {
        let bytes = self.ecmp_bytes();
        match algorithm {
            HashAlgorithm::Murmur3 => murmur3_x86_32(&bytes, seed),
            HashAlgorithm::Crc32 => crc32(&bytes) ^ seed,
        }
    }

    /// The 64-bit fingerprint that identifies this flow in the flow cache.
    pub fn fingerprint(&self) -> u64 {
        let mut bytes = self.ecmp_bytes();
        bytes.push(&[self.proto]);
        let low = murmur3_x86_32(&bytes, FINGERPRINT_SEED);
        let mut high = hash32::Murmur3Hasher::default();
        high.write(&bytes);
        (u64::from(hash32::Hasher::finish32(&high)) << 32) | u64::from(low)
    }
}

/// CRC-32/ISO-HDLC (the IEEE 802.3 CRC: reflected, init and xorout
/// `0xFFFF_FFFF`), from the `crc` crate.
///
/// ```
/// assert_eq!(lcmp_decide::hash::crc32(b"123456789"), 0xCBF4_3926);
/// ```
pub fn crc32(bytes: &[u8]) -> u32 {
    const CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    CRC.checksum(bytes)
}

/// MurmurHash3 x86_32 (Austin Appleby's reference `MurmurHash3_x86_32`) with
/// a seed.
///
/// Written by hand because `hash32`'s `Murmur3Hasher` has no seed and the
/// ECMP hash needs the per-switch seed of the paper's artifact; the tests
/// check it against published vectors and against `hash32` at seed 0.
///
/// ```
/// # use lcmp_decide::hash::murmur3_x86_32;
/// assert_eq!(murmur3_x86_32(b"", 0), 0);
/// assert_eq!(murmur3_x86_32(b"", 1), 0x514E_28B7);
/// ```
pub fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in blocks.by_ref() {
        let mut k = u32::from_le_bytes([
            block.first().copied().unwrap_or(0),
            block.get(1).copied().unwrap_or(0),
            block.get(2).copied().unwrap_or(0),
            block.get(3).copied().unwrap_or(0),
        ]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k: u32 = 0;
        for (i, byte) in tail.iter().enumerate() {
            k |= u32::from(*byte) << (8u32.wrapping_mul(i as u32 & 3));
        }
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
    }
    // The length is mixed in modulo 2^32, as the reference's `int len`.
    h ^= data.len() as u32;
    fmix32(h)
}

const fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

#[cfg(test)]
mod test {
    use super::*;
    use core::net::Ipv4Addr;
    use quickcheck::quickcheck;
    use std::vec::Vec;

    #[test]
    fn murmur3_published_vectors() {
        // Vectors from the SMHasher reference implementation's verification
        // set as widely republished (e.g. the "MurmurHash3 test vectors"
        // used by Guava and by many ports).
        let cases: &[(&[u8], u32, u32)] = &[
            (b"", 0, 0),
            (b"", 1, 0x514E_28B7),
            (b"", 0xffff_ffff, 0x81F1_6F39),
            (&[0xff, 0xff, 0xff, 0xff], 0, 0x7629_3B50),
            (&[0x21, 0x43, 0x65, 0x87], 0, 0xF55B_516B),
            (&[0x21, 0x43, 0x65, 0x87], 0x5082_EDEE, 0x2362_F9DE),
            (&[0x21, 0x43, 0x65], 0, 0x7E4A_8634),
            (&[0x21, 0x43], 0, 0xA0F7_B07A),
            (&[0x21], 0, 0x7266_1CF4),
            (&[0, 0, 0, 0], 0, 0x2362_F9DE),
            (&[0, 0, 0], 0, 0x85F0_B427),
            (&[0, 0], 0, 0x30F4_C306),
            (&[0], 0, 0x514E_28B7),
            (b"Hello, world!", 1234, 0xFAF6_CDB3),
            (
                b"The quick brown fox jumps over the lazy dog",
                0x9747_b28c,
                0x2FA8_26CD,
            ),
        ];
        for (data, seed, want) in cases {
            assert_eq!(
                murmur3_x86_32(data, *seed),
                *want,
                "{data:?} seed {seed:#x}"
            );
        }
    }

    #[test]
    fn ecmp_key_layout_v4() {
        let k = FlowKey::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 7, 2),
            0x1234,
            0xABCD,
            17,
        );
        assert_eq!(
            &*k.ecmp_bytes(),
            &[0x01, 0, 0, 0x0A, 0x02, 0x07, 0, 0x0A, 0x34, 0x12, 0xCD, 0xAB]
        );
        assert_eq!(k.ecmp_bytes().len(), 12);
    }

    #[test]
    fn ecmp_key_layout_v6() {
        let src: core::net::Ipv6Addr = "fd00::1"
            .parse()
            .unwrap_or(core::net::Ipv6Addr::UNSPECIFIED);
        let k = FlowKey::v6(src, core::net::Ipv6Addr::LOCALHOST, 1, 2, 17);
        let b = k.ecmp_bytes();
        assert_eq!(b.len(), 36);
        assert_eq!(b[0], 1, "low byte of the numeric value first");
        assert_eq!(b[15], 0xfd);
        assert_eq!(b[16], 1);
        assert_eq!(&b[32..], &[1, 0, 2, 0]);
    }

    #[test]
    fn crc32_check_value() {
        // The CRC catalogue's check value for CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    quickcheck! {
        fn murmur_matches_hash32_at_seed_zero(data: Vec<u8>) -> bool {
            let mut h = hash32::Murmur3Hasher::default();
            h.write(&data);
            hash32::Hasher::finish32(&h) == murmur3_x86_32(&data, 0)
        }

        fn fingerprint_separates_protocols(src: u32, dst: u32, sp: u16, dp: u16) -> bool {
            let a = FlowKey { addrs: Addresses::V4 { src, dst }, sport: sp, dport: dp, proto: 6 };
            let b = FlowKey { proto: 17, ..a };
            a.fingerprint() != b.fingerprint() && a.ecmp_bytes() == b.ecmp_bytes()
        }
    }
}
