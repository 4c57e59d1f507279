//! Flow keys and the fixed, specified hashes.
//!
//! * The ECMP hash, used to pick within a candidate set, is MurmurHash3
//!   x86_32 with a per-switch seed ([`murmur3_x86_32`]) over the key bytes
//!   of [`FlowKey::ecmp_bytes`], exactly as the paper's artifact hashes on
//!   x86; or, for switches whose hash unit is a CRC (Tofino), CRC-32
//!   (IEEE 802.3, as `crc::CRC_32_ISO_HDLC`) over the same bytes, XORed with
//!   the seed ([`HashAlgorithm::Crc32`]).
//! * The flow cache's fingerprint ([`FlowKey::fingerprint`]) is SipHash-1-3
//!   (the `siphasher` crate) over the whole 5-tuple (protocol included),
//!   keyed by a per-device secret [`FlowCacheKey`]: a keyed pseudo-random
//!   function, so that someone who does not know the key cannot choose
//!   flows that land in a victim's buckets or share its tag (Linux's
//!   conntrack and Rust's `HashMap` key their tables the same way;
//!   docs/design.md, "Hashes", has the argument and the price).
//!
//! Byte layout of the ECMP key (documented in `docs/design.md` so P4 and
//! Rust agree): IPv4: `src`, `dst`, `sport | dport << 16`, each a
//! little-endian `u32` (an address is its numeric value: 10.0.0.1 is
//! `0x0A000001`), 12 bytes. IPv6: `src`, `dst` as little-endian `u128`
//! numeric values, then `sport | dport << 16` as a little-endian `u32`,
//! 36 bytes. The protocol is not part of the ECMP key (as in the artifact).

/// Which hash function spreads flows over a candidate set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HashAlgorithm {
    /// MurmurHash3 x86_32 seeded with the switch seed (the paper's artifact).
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Murmur3"))]
    Murmur3,
    /// CRC-32 (IEEE) over the same bytes, XORed with the switch seed:
    /// what a Tofino `Hash<bit<32>>(HashAlgorithm_t.CRC32)` computes.
    #[cfg_attr(feature = "serde", serde(alias = "Crc32"))]
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
        // `get_mut(..n)` yields exactly `n` bytes, so the copy's length check
        // is provably satisfied and no panic path survives optimisation.
        let tail = self.buf.get_mut(self.len..);
        if let Some(dst) = tail.and_then(|b| b.get_mut(..bytes.len())) {
            dst.copy_from_slice(bytes);
            self.len = self.len.saturating_add(bytes.len());
        }
    }
}

/// The per-device secret of the flow cache's fingerprint (128 bits, the
/// SipHash key): drawn at start from the system's or the board's random
/// source, never stored in a blob and never printed (its `Debug` and
/// `defmt` forms hide it, and serde skips it).
///
/// ```
/// # use lcmp_decide::FlowCacheKey;
/// let key = FlowCacheKey::from_bytes([7; 16]);
/// assert_eq!(format!("{key:?}"), "FlowCacheKey(..)");
/// assert_ne!(key, FlowCacheKey::ZERO);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowCacheKey([u64; 2]);

impl FlowCacheKey {
    /// The all-zero key: the default, for tests and deterministic replays
    /// only. A device that meets untrusted traffic draws a random key.
    pub const ZERO: FlowCacheKey = FlowCacheKey([0; 2]);

    /// The key from 16 bytes (two little-endian `u64`s, SipHash's `k0`,
    /// `k1`).
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        let [a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7] = bytes;
        FlowCacheKey([
            u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7]),
            u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]),
        ])
    }

    /// Whether this is [`FlowCacheKey::ZERO`] (a frontend warns: the cache
    /// is then as predictable as an unkeyed hash).
    pub const fn is_zero(&self) -> bool {
        self.0[0] == 0 && self.0[1] == 0
    }
}

impl core::fmt::Debug for FlowCacheKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FlowCacheKey(..)")
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for FlowCacheKey {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "FlowCacheKey(..)");
    }
}

/// The most 32-bit words in an ECMP key (IPv6).
const MAX_KEY_WORDS: usize = 9;

/// The ECMP key as little-endian 32-bit words (3 for IPv4, 9 for IPv6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyWords {
    words: [u32; MAX_KEY_WORDS],
    len: usize,
}

impl core::ops::Deref for KeyWords {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        self.words.get(..self.len).unwrap_or(&[])
    }
}

/// The words of a `u128` address, least significant first (its
/// little-endian byte order).
const fn u128_words(x: u128) -> [u32; 4] {
    [
        x as u32,
        (x >> 32) as u32,
        (x >> 64) as u32,
        (x >> 96) as u32,
    ]
}

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

    /// The ECMP key as 32-bit words: IPv4 `[src, dst, sport | dport << 16]`;
    /// IPv6 the two addresses' words (least significant first), then the
    /// ports word. Their little-endian bytes are [`FlowKey::ecmp_bytes`].
    pub const fn ecmp_words(&self) -> KeyWords {
        let ports = (self.sport as u32) | ((self.dport as u32) << 16);
        match self.addrs {
            Addresses::V4 { src, dst } => KeyWords {
                words: [src, dst, ports, 0, 0, 0, 0, 0, 0],
                len: 3,
            },
            Addresses::V6 { src, dst } => {
                let [s0, s1, s2, s3] = u128_words(src);
                let [d0, d1, d2, d3] = u128_words(dst);
                KeyWords {
                    words: [s0, s1, s2, s3, d0, d1, d2, d3, ports],
                    len: 9,
                }
            }
        }
    }

    /// The bytes the ECMP hash reads (see the module docs for the layout).
    pub fn ecmp_bytes(&self) -> KeyBytes {
        let mut b = KeyBytes::new();
        for w in self.ecmp_words().iter() {
            b.push(&w.to_le_bytes());
        }
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
        match algorithm {
            // IPv4, the common case, skips building the nine-word buffer.
            HashAlgorithm::Murmur3 => match self.addrs {
                Addresses::V4 { src, dst } => {
                    let ports = u32::from(self.sport) | (u32::from(self.dport) << 16);
                    murmur3_words(&[src, dst, ports], seed)
                }
                Addresses::V6 { .. } => murmur3_words(&self.ecmp_words(), seed),
            },
            HashAlgorithm::Crc32 => crc32(&self.ecmp_bytes()) ^ seed,
        }
    }

    /// The 64-bit fingerprint that identifies this flow in the flow cache:
    /// SipHash-1-3 keyed by `key` over the 5-tuple's bytes and nothing
    /// else: the addresses as little-endian numeric values (IPv4 `src`,
    /// `dst` as `u32`s; IPv6 as `u128`s), then `sport`, `dport` as
    /// little-endian `u16`s and the protocol byte: 13 bytes for IPv4, 37
    /// for IPv6. The encoding is injective: each family's fields have fixed
    /// widths, and the two families' lengths differ (SipHash mixes the
    /// length in). (Until issue 36 the ports and protocol were padded to a
    /// 64-bit word, 16 and 40 bytes: one SipRound more a packet.)
    ///
    /// ```
    /// # use lcmp_decide::{FlowCacheKey, FlowKey};
    /// # use core::net::Ipv4Addr;
    /// let k = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17);
    /// let (a, b) = (FlowCacheKey::from_bytes([1; 16]), FlowCacheKey::from_bytes([2; 16]));
    /// assert_ne!(k.fingerprint(&a), k.fingerprint(&b));
    /// ```
    // Always inlined (issue 36 item 5): called out of line, the key was
    // stored to the stack to be passed and the call's frame saved and
    // restored, about 20 instructions a packet of a C burst (callgrind).
    #[inline(always)]
    pub fn fingerprint(&self, key: &FlowCacheKey) -> u64 {
        use core::hash::Hasher as _;
        let [k0, k1] = key.0;
        let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
        match self.addrs {
            Addresses::V4 { src, dst } => {
                h.write_u32(src);
                h.write_u32(dst);
            }
            Addresses::V6 { src, dst } => {
                h.write_u64(src as u64);
                h.write_u64((src >> 64) as u64);
                h.write_u64(dst as u64);
                h.write_u64((dst >> 64) as u64);
            }
        }
        h.write_u16(self.sport);
        h.write_u16(self.dport);
        h.write_u8(self.proto);
        h.finish()
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
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in blocks.by_ref() {
        let k = u32::from_le_bytes([
            block.first().copied().unwrap_or(0),
            block.get(1).copied().unwrap_or(0),
            block.get(2).copied().unwrap_or(0),
            block.get(3).copied().unwrap_or(0),
        ]);
        h = murmur3_round(h, k);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k: u32 = 0;
        for (i, byte) in tail.iter().enumerate() {
            k |= u32::from(*byte) << (8u32.wrapping_mul(i as u32 & 3));
        }
        h ^= murmur3_scramble(k);
    }
    // The length is mixed in modulo 2^32, as the reference's `int len`.
    fmix32(h ^ data.len() as u32)
}

/// MurmurHash3 x86_32 of whole little-endian words: equal to
/// [`murmur3_x86_32`] of their bytes, without the byte shuffling (the ECMP
/// hash's fast path).
///
/// ```
/// # use lcmp_decide::hash::{murmur3_words, murmur3_x86_32};
/// assert_eq!(murmur3_words(&[0x8765_4321], 0), murmur3_x86_32(&[0x21, 0x43, 0x65, 0x87], 0));
/// ```
pub fn murmur3_words(words: &[u32], seed: u32) -> u32 {
    let h = words.iter().fold(seed, |h, k| murmur3_round(h, *k));
    fmix32(h ^ (words.len() as u32).wrapping_mul(4))
}

const fn murmur3_scramble(k: u32) -> u32 {
    k.wrapping_mul(0xcc9e_2d51)
        .rotate_left(15)
        .wrapping_mul(0x1b87_3593)
}

const fn murmur3_round(h: u32, k: u32) -> u32 {
    (h ^ murmur3_scramble(k))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

/// The SplitMix64 finaliser (Steele, Lea, Flood 2014): the tests' stream of
/// well-mixed values (it was the unkeyed fingerprint before SipHash).
#[cfg(test)]
pub(crate) const fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

    /// The key is a device secret: its Debug form names the type only, and
    /// `is_zero` tells the unkeyed default from any key.
    #[test]
    fn a_flow_cache_key_is_not_printed_and_zero_only_when_all_zero() {
        let key = FlowCacheKey::from_bytes(*b"a per-device key");
        assert_eq!(std::format!("{key:?}"), "FlowCacheKey(..)");
        assert!(FlowCacheKey::ZERO.is_zero());
        assert!(!key.is_zero());
        let mut low = [0u8; 16];
        low[0] = 1;
        assert!(!FlowCacheKey::from_bytes(low).is_zero());
        let mut high = [0u8; 16];
        high[15] = 1;
        assert!(!FlowCacheKey::from_bytes(high).is_zero());
    }
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
    fn ecmp_bytes_of_v6_are_both_addresses_little_endian_then_the_ports() {
        // Every byte of both addresses distinct, so a word taken from the
        // wrong position (or shifted the wrong way) shows.
        let src = u128::from_be_bytes(core::array::from_fn(|i| i as u8 + 1));
        let dst = u128::from_be_bytes(core::array::from_fn(|i| i as u8 + 0x81));
        let k = FlowKey::v6(src.into(), dst.into(), 0x1234, 0xABCD, 6);
        let want: Vec<u8> = src
            .to_le_bytes()
            .into_iter()
            .chain(dst.to_le_bytes())
            .chain([0x34, 0x12, 0xCD, 0xAB])
            .collect();
        assert_eq!(&*k.ecmp_bytes(), &want[..]);
        assert_eq!(k.ecmp_words().len(), 9);
    }

    /// The flow's fields, for the bit-flip tests.
    fn fields(k: &FlowKey) -> (u128, u128, bool) {
        match k.addrs {
            Addresses::V4 { src, dst } => (src.into(), dst.into(), false),
            Addresses::V6 { src, dst } => (src, dst, true),
        }
    }

    /// `k` with bit `bit` of its key flipped (addresses, then the ports,
    /// then the protocol), or `None` past the key's last bit.
    fn flipped(k: &FlowKey, bit: u32) -> Option<FlowKey> {
        let (src, dst, v6) = fields(k);
        let addr_bits = if v6 { 128 } else { 32 };
        let mut k2 = *k;
        let (mut s, mut d) = (src, dst);
        match bit {
            b if b < addr_bits => s ^= 1 << b,
            b if b < 2 * addr_bits => d ^= 1 << (b - addr_bits),
            b if b < 2 * addr_bits + 16 => k2.sport ^= 1 << (b - 2 * addr_bits),
            b if b < 2 * addr_bits + 32 => k2.dport ^= 1 << (b - 2 * addr_bits - 16),
            b if b < 2 * addr_bits + 40 => k2.proto ^= 1 << (b - 2 * addr_bits - 32),
            _ => return None,
        }
        k2.addrs = if v6 {
            Addresses::V6 { src: s, dst: d }
        } else {
            Addresses::V4 {
                src: s as u32,
                dst: d as u32,
            }
        };
        Some(k2)
    }

    #[test]
    fn splitmix64_published_vector() {
        // SplitMix64 seeded with 0 (Steele, Lea, Flood; Vigna's reference
        // `splitmix64.c`): its outputs are the finaliser of k * 0x9E37...15.
        let gamma: u64 = 0x9E37_79B9_7F4A_7C15;
        assert_eq!(splitmix64(gamma), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(gamma.wrapping_mul(2)), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(gamma.wrapping_mul(3)), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn crc32_check_value() {
        // The CRC catalogue's check value for CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    quickcheck! {
        fn murmur_matches_hash32_at_seed_zero(data: Vec<u8>) -> bool {
            use core::hash::Hasher as _;
            let mut h = hash32::Murmur3Hasher::default();
            h.write(&data);
            hash32::Hasher::finish32(&h) == murmur3_x86_32(&data, 0)
        }

        fn word_and_byte_murmur_agree(words: Vec<u32>, seed: u32) -> bool {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            murmur3_words(&words, seed) == murmur3_x86_32(&bytes, seed)
        }

        fn ecmp_hash_is_murmur_of_the_documented_bytes(src: u128, dst: u128, sp: u16, dp: u16, v6: bool, seed: u32) -> bool {
            let addrs = if v6 { Addresses::V6 { src, dst } } else { Addresses::V4 { src: src as u32, dst: dst as u32 } };
            let k = FlowKey { addrs, sport: sp, dport: dp, proto: 17 };
            k.ecmp_hash(HashAlgorithm::Murmur3, seed) == murmur3_x86_32(&k.ecmp_bytes(), seed)
        }

        // A key bit flipped changes the fingerprint: SipHash is a PRF, so
        // two encodings share a fingerprint with probability 2^-64 (a
        // failure here is a layout bug, a field left out or overlapping).
        fn fingerprint_changes_with_every_key_bit(src: u128, dst: u128, sp: u16, dp: u16, proto: u8, v6: bool, key: (u64, u64)) -> bool {
            let addrs = if v6 { Addresses::V6 { src, dst } } else { Addresses::V4 { src: src as u32, dst: dst as u32 } };
            let k = FlowKey { addrs, sport: sp, dport: dp, proto };
            let key = FlowCacheKey([key.0, key.1]);
            (0..).map_while(|bit| flipped(&k, bit)).all(|k2| k2.fingerprint(&key) != k.fingerprint(&key))
        }

        // The fingerprint is SipHash-1-3 of the documented bytes under the
        // key's two words (docs/design.md, "Hashes").
        fn fingerprint_is_siphash13_of_the_documented_bytes(src: u128, dst: u128, sp: u16, dp: u16, proto: u8, v6: bool, key: (u64, u64)) -> bool {
            let addrs = if v6 { Addresses::V6 { src, dst } } else { Addresses::V4 { src: src as u32, dst: dst as u32 } };
            let k = FlowKey { addrs, sport: sp, dport: dp, proto };
            let mut bytes: Vec<u8> = match addrs {
                Addresses::V4 { src, dst } => [src.to_le_bytes(), dst.to_le_bytes()].concat(),
                Addresses::V6 { src, dst } => [src.to_le_bytes(), dst.to_le_bytes()].concat(),
            };
            bytes.extend(sp.to_le_bytes());
            bytes.extend(dp.to_le_bytes());
            bytes.push(proto);
            let want = siphasher::sip::SipHasher13::new_with_keys(key.0, key.1).hash(&bytes);
            k.fingerprint(&FlowCacheKey([key.0, key.1])) == want
        }

        // Another key, another fingerprint (what makes the buckets of a
        // flow unknowable without the key).
        fn fingerprint_depends_on_the_key(src: u32, dst: u32, sp: u16, dp: u16, a: (u64, u64), b: (u64, u64)) -> bool {
            let k = FlowKey { addrs: Addresses::V4 { src, dst }, sport: sp, dport: dp, proto: 17 };
            a == b || k.fingerprint(&FlowCacheKey([a.0, a.1])) != k.fingerprint(&FlowCacheKey([b.0, b.1]))
        }

        // The CRC's seed is XORed into the CRC (the Tofino's CRC32 with a
        // final XOR value, docs/tofino.md): two seeds' hashes differ by
        // exactly the seeds' difference.
        fn crc_seed_is_xored_in(src: u32, dst: u32, sp: u16, dp: u16, a: u32, b: u32) -> bool {
            let k = FlowKey { addrs: Addresses::V4 { src, dst }, sport: sp, dport: dp, proto: 17 };
            k.ecmp_hash(HashAlgorithm::Crc32, a) ^ k.ecmp_hash(HashAlgorithm::Crc32, b) == a ^ b
                && k.ecmp_hash(HashAlgorithm::Crc32, 0) == crc32(&k.ecmp_bytes())
        }

        fn fingerprint_separates_protocols(src: u32, dst: u32, sp: u16, dp: u16) -> bool {
            let a = FlowKey { addrs: Addresses::V4 { src, dst }, sport: sp, dport: dp, proto: 6 };
            let b = FlowKey { proto: 17, ..a };
            a.fingerprint(&FlowCacheKey::ZERO) != b.fingerprint(&FlowCacheKey::ZERO) && a.ecmp_bytes() == b.ecmp_bytes()
        }
    }
}
