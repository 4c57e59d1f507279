//! The data plane's ECMP hash, as a Tofino `Hash<bit<32>>` sees it: a field
//! list and a CRC polynomial.
//!
//! `lcmp-decide` hashes the bytes of [`lcmp_decide::FlowKey::ecmp_bytes`]
//! (IPv4: `src`, `dst`, `sport | dport << 16`, each a little-endian `u32`)
//! with CRC-32/ISO-HDLC and XORs the seed. A P4 field list is concatenated
//! most significant bit first, so the P4 program lists the header fields
//! byte-swapped: [`ECMP_FIELDS`] is that list. The seed costs no
//! operation: a CRC's final XOR is a parameter of `CRCPolynomial`, so
//! [`CrcSpec::ecmp`] folds it in (`xor = 0xFFFFFFFF ^ seed`).
//! The interpreter evaluates both with its own bitwise CRC
//! ([`CrcSpec::checksum`]), independent of the `crc` crate the core uses,
//! so a wrong field order or polynomial fails the equivalence test.

/// A CRC, in the parameters of TNA's `CRCPolynomial<T>(coeff, reversed,
/// msb, extended, init, xor)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcSpec {
    /// The polynomial without its top bit (normal form).
    pub poly: u32,
    /// Reflected input and output (`reversed = true`).
    pub reversed: bool,
    /// Initial value.
    pub init: u32,
    /// Final XOR.
    pub xor: u32,
}

/// CRC-32/ISO-HDLC (IEEE 802.3): the core's `HashAlgorithm::Crc32`.
pub const CRC32: CrcSpec = CrcSpec {
    poly: 0x04C1_1DB7,
    reversed: true,
    init: 0xFFFF_FFFF,
    xor: 0xFFFF_FFFF,
};

/// CRC-32C (Castagnoli), used for the flow-pin signature.
pub const CRC32C: CrcSpec = CrcSpec {
    poly: 0x1EDC_6F41,
    reversed: true,
    init: 0xFFFF_FFFF,
    xor: 0xFFFF_FFFF,
};

impl CrcSpec {
    /// The ECMP hash with `seed` folded into the final XOR:
    /// `CRC-32(bytes) ^ seed` in one hash unit.
    ///
    /// ```
    /// use lcmp_tofino::hash::{CrcSpec, CRC32};
    /// let b = b"123456789";
    /// assert_eq!(CrcSpec::ecmp(0x1234_5678).checksum(b), CRC32.checksum(b) ^ 0x1234_5678);
    /// ```
    pub const fn ecmp(seed: u32) -> CrcSpec {
        CrcSpec {
            xor: CRC32.xor ^ seed,
            ..CRC32
        }
    }

    /// The CRC of `bytes`, bit by bit (reference implementation).
    ///
    /// ```
    /// assert_eq!(lcmp_tofino::hash::CRC32.checksum(b"123456789"), 0xCBF4_3926);
    /// assert_eq!(lcmp_tofino::hash::CRC32C.checksum(b"123456789"), 0xE306_9283);
    /// ```
    pub fn checksum(&self, bytes: &[u8]) -> u32 {
        let mut crc = self.init;
        if self.reversed {
            let poly = self.poly.reverse_bits();
            for &b in bytes {
                crc ^= u32::from(b);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        (crc >> 1) ^ poly
                    } else {
                        crc >> 1
                    };
                }
            }
        } else {
            for &b in bytes {
                crc ^= u32::from(b) << 24;
                for _ in 0..8 {
                    crc = if crc & 0x8000_0000 != 0 {
                        (crc << 1) ^ self.poly
                    } else {
                        crc << 1
                    };
                }
            }
        }
        crc ^ self.xor
    }

    /// The TNA declaration `CRCPolynomial<bit<32>>(...)`.
    pub fn p4(&self) -> String {
        format!(
            "CRCPolynomial<bit<32>>(32w0x{:08X}, {}, false, false, 32w0x{:08X}, 32w0x{:08X})",
            self.poly, self.reversed, self.init, self.xor
        )
    }
}

/// A packet header field the hash reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderField {
    /// IPv4 source address.
    Src,
    /// IPv4 destination address.
    Dst,
    /// L4 source port.
    Sport,
    /// L4 destination port.
    Dport,
    /// IP protocol.
    Proto,
}

impl HeaderField {
    /// The P4 expression.
    pub const fn p4(self) -> &'static str {
        match self {
            Src => "hdr.ipv4.src_addr",
            Dst => "hdr.ipv4.dst_addr",
            Sport => "meta.l4_sport",
            Dport => "meta.l4_dport",
            Proto => "hdr.ipv4.protocol",
        }
    }
}

/// A slice `field[hi:lo]` of a field list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// The field.
    pub field: HeaderField,
    /// Most significant bit.
    pub hi: u32,
    /// Least significant bit.
    pub lo: u32,
}

const fn s(field: HeaderField, hi: u32, lo: u32) -> Slice {
    Slice { field, hi, lo }
}

use HeaderField::{Dport, Dst, Proto, Sport, Src};

/// The ECMP hash field list: the bytes of `FlowKey::ecmp_bytes` for IPv4,
/// i.e. each 32-bit word little-endian.
pub const ECMP_FIELDS: &[Slice] = &[
    s(Src, 7, 0),
    s(Src, 15, 8),
    s(Src, 23, 16),
    s(Src, 31, 24),
    s(Dst, 7, 0),
    s(Dst, 15, 8),
    s(Dst, 23, 16),
    s(Dst, 31, 24),
    s(Sport, 7, 0),
    s(Sport, 15, 8),
    s(Dport, 7, 0),
    s(Dport, 15, 8),
];

/// The flow-signature field list (the whole 5-tuple, network order).
pub const SIG_FIELDS: &[Slice] = &[
    s(Src, 31, 0),
    s(Dst, 31, 0),
    s(Sport, 15, 0),
    s(Dport, 15, 0),
    s(Proto, 7, 0),
];

/// The header values of an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
    /// IP protocol.
    pub proto: u8,
}

impl Headers {
    fn value(&self, f: HeaderField) -> u64 {
        match f {
            Src => u64::from(self.src),
            Dst => u64::from(self.dst),
            Sport => u64::from(self.sport),
            Dport => u64::from(self.dport),
            Proto => u64::from(self.proto),
        }
    }

    /// The bytes a P4 `Hash` reads for a field list: the slices concatenated
    /// most significant bit first (each list here is byte-aligned).
    pub fn field_list_bytes(&self, list: &[Slice]) -> Vec<u8> {
        let mut bits: Vec<bool> = Vec::new();
        for sl in list {
            let v = self.value(sl.field);
            for b in (sl.lo..=sl.hi).rev() {
                bits.push((v >> b) & 1 == 1);
            }
        }
        bits.chunks(8)
            .map(|c| c.iter().fold(0u8, |acc, &b| (acc << 1) | u8::from(b)))
            .collect()
    }
}

/// The P4 field list `{ a[7:0], a[15:8], ... }`.
pub fn p4_field_list(list: &[Slice]) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|sl| format!("{}[{}:{}]", sl.field.p4(), sl.hi, sl.lo))
        .collect();
    format!("{{ {} }}", parts.join(", "))
}

#[cfg(test)]
mod test {
    use super::*;
    use core::net::Ipv4Addr;
    use lcmp_decide::{FlowKey, HashAlgorithm};

    #[test]
    fn field_list_reproduces_ecmp_bytes() {
        let k = FlowKey::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 8, 3, 2),
            0x1234,
            4791,
            17,
        );
        let h = Headers {
            src: 0x0A00_0001,
            dst: 0x0A08_0302,
            sport: 0x1234,
            dport: 4791,
            proto: 17,
        };
        assert_eq!(h.field_list_bytes(ECMP_FIELDS), k.ecmp_bytes().to_vec());
        let want = k.ecmp_hash(HashAlgorithm::Crc32, 0);
        assert_eq!(CRC32.checksum(&h.field_list_bytes(ECMP_FIELDS)), want);
    }

    #[test]
    fn non_reflected_crc_check_value() {
        // CRC-32/BZIP2: same polynomial, not reflected.
        let bzip2 = CrcSpec {
            reversed: false,
            ..CRC32
        };
        assert_eq!(bzip2.checksum(b"123456789"), 0xFC89_1918);
    }
}
