//! Registers in halves: where a way's pin cells exceed what one register
//! of the target may hold ([`crate::Target::register_cells`]), each pin
//! way and `lcmp_unpinned` is declared as two registers of half the cells,
//! the top bit of the index choosing the half. Cell `i` of way `w` is
//! cell `i mod half` of half `i / half`, so the cells, their indices and
//! every decision are those of one register: the interpreter
//! ([`crate::interp`]) models a way as one map of cells whatever the
//! split. Tofino 2 has 20 stages: bf-p4c (p4lang/p4c 34b86e9) places no
//! 65 536-cell pair register beside the one-entry table that executes it
//! ("could not fit in stage 3 with 1 entries along with 65536 entries of
//! Register LcmpIngress.lcmp_pin0", docs/tofino.md), but it places halves
//! of 32 768 in the stages the program leaves free.

use crate::schema::{names, Register, Schema, Sizes};

/// The registers that may be halved, with their halves' names.
pub const HALVED_REGISTERS: [(&str, [&str; 2]); 3] = [
    (names::REG_PIN0, ["lcmp_pin0_h0", "lcmp_pin0_h1"]),
    (names::REG_PIN1, ["lcmp_pin1_h0", "lcmp_pin1_h1"]),
    (
        names::REG_UNPINNED,
        ["lcmp_unpinned_h0", "lcmp_unpinned_h1"],
    ),
];

/// Each pin way's safe-gap `RegisterParam` (bf-p4c allows a
/// `RegisterParam` in one register's actions): its register, its name,
/// and its names for a halved register.
pub const GAP_PARAMS: [(&str, &str, [&str; 2]); 2] = [
    (
        names::REG_PIN0,
        names::PARAM_GAP0,
        ["pin0_gap_h0", "pin0_gap_h1"],
    ),
    (
        names::REG_PIN1,
        names::PARAM_GAP1,
        ["pin1_gap_h0", "pin1_gap_h1"],
    ),
];

/// The halves of `register` if `schema` has it halved.
pub fn halves(schema: &Schema, register: &str) -> Option<[&'static str; 2]> {
    HALVED_REGISTERS
        .iter()
        .find(|(r, h)| *r == register && schema.register(h[0]).is_some())
        .map(|(_, h)| *h)
}

/// The register `name` is a half of, and which half.
pub fn half_of(name: &str) -> Option<(&'static str, usize)> {
    HALVED_REGISTERS
        .iter()
        .find_map(|(r, h)| h.iter().position(|x| *x == name).map(|i| (*r, i)))
}

/// [`Schema::new`] with each register of [`HALVED_REGISTERS`] larger than
/// `register_cells` declared as its two halves.
///
/// ```
/// use lcmp_tofino::{halves, schema::{Schema, Sizes}};
/// let sizes = Sizes { groups: 1, max_k: 1, ports: 1, pin_slots: 131_072 };
/// let s = halves::schema(&sizes, 32_768);
/// assert!(s.register("lcmp_pin0").is_none());
/// assert_eq!(s.register("lcmp_pin0_h1").map(|r| r.size), Some(32_768));
/// assert_eq!(s.register("lcmp_port0").map(|r| r.size), Some(65_536));
/// assert_eq!(halves::schema(&sizes, 65_536), Schema::new(&sizes));
/// ```
pub fn schema(sizes: &Sizes, register_cells: u32) -> Schema {
    let mut s = Schema::new(sizes);
    s.registers = s
        .registers
        .into_iter()
        .flat_map(|r| match HALVED_REGISTERS.iter().find(|h| h.0 == r.name) {
            Some((_, h)) if r.size > register_cells => h
                .iter()
                .map(|&name| Register {
                    name,
                    size: r.size / 2,
                    ..r.clone()
                })
                .collect(),
            _ => vec![r],
        })
        .collect();
    s
}

/// The safe-gap `RegisterParam`s of `schema`'s pin registers (one per
/// register: two, or four when halved).
pub fn gap_params(schema: &Schema) -> Vec<&'static str> {
    GAP_PARAMS
        .iter()
        .flat_map(|(reg, gap, h)| match halves(schema, reg) {
            Some(_) => h.to_vec(),
            None => vec![*gap],
        })
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;

    /// The halved schema of testbed8 DC1 is what bf-p4c compiled for
    /// Tofino 2 (register names and sizes in the committed P4Info); the
    /// unhalved one is not.
    #[test]
    fn the_halved_schema_is_the_compilers_tofino2_p4info() {
        let dc1 = Sizes {
            groups: 7,
            max_k: 6,
            ports: 6,
            pin_slots: 131_072,
        };
        let compiled = include_str!("../tests/golden/tofino2/compiled/tofino2/p4info.txtpb");
        let mismatches = |s: &Schema| crate::compile::p4info_mismatches(s, compiled);
        assert_eq!(mismatches(&schema(&dc1, 32_768)), Vec::<String>::new());
        assert!(!mismatches(&Schema::new(&dc1)).is_empty());
    }

    fn sizes(pin_slots: u32) -> Sizes {
        Sizes {
            groups: 1,
            max_k: 1,
            ports: 1,
            pin_slots,
        }
    }

    /// Halved: six halves of half the cells replace three registers, the
    /// port registers keep a way's cells, four gap parameters.
    #[test]
    fn halves_replace_the_large_registers() {
        let s = schema(&sizes(131_072), 32_768);
        let whole = Schema::new(&sizes(131_072));
        assert_eq!(s.registers.len(), whole.registers.len() + 3);
        for (r, h) in HALVED_REGISTERS {
            assert!(s.register(r).is_none(), "{r}");
            assert_eq!(halves(&s, r), Some(h));
            for (i, name) in h.iter().enumerate() {
                assert_eq!(s.register(name).map(|x| x.size), Some(32_768));
                assert_eq!(half_of(name), Some((r, i)));
            }
        }
        assert_eq!(gap_params(&s).len(), 4);
        assert_eq!(gap_params(&whole), [names::PARAM_GAP0, names::PARAM_GAP1]);
        // Small enough: not halved.
        let t = schema(&sizes(65_536), 32_768);
        assert_eq!(t, Schema::new(&sizes(65_536)));
        assert_eq!(halves(&t, names::REG_PIN0), None);
        assert_eq!(half_of(names::REG_PIN0), None);
    }
}
