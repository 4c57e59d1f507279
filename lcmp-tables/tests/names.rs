//! Every enum the core names has one spelling: its `name()` is what serde
//! writes and reads in JSON (the tables, scenarios and explanations), so
//! the `rename_all` attributes and the `name()` tables cannot drift apart.
//! Old spellings that earlier JSON files used still parse (aliases).

use lcmp_decide::{HashAlgorithm, Pick, Profile, Reason, Scheme};
use serde::{de::DeserializeOwned, Serialize};

fn tied<T: Serialize + DeserializeOwned + PartialEq + core::fmt::Debug + Copy>(
    all: &[T],
    name: impl Fn(T) -> &'static str,
) {
    for &v in all {
        let json = serde_json::to_string(&v).expect("serialises");
        assert_eq!(json, format!("\"{}\"", name(v)), "{v:?}");
        let back: T = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, v);
    }
}

#[test]
fn serde_spells_every_name_as_name_does() {
    tied(&Reason::ALL, Reason::name);
    tied(&Scheme::ALL, Scheme::name);
    tied(&Profile::ALL, Profile::name);
    tied(&Pick::ALL, Pick::name);
    tied(&HashAlgorithm::ALL, HashAlgorithm::name);
}

#[test]
fn the_old_pascal_case_spellings_still_parse() {
    for (old, want) in [
        ("\"Hash\"", Pick::Hash),
        ("\"ScaledHash\"", Pick::ScaledHash),
        ("\"CapacityWeighted\"", Pick::CapacityWeighted),
    ] {
        assert_eq!(serde_json::from_str::<Pick>(old).expect(old), want);
    }
    for (old, want) in [
        ("\"Murmur3\"", HashAlgorithm::Murmur3),
        ("\"Crc32\"", HashAlgorithm::Crc32),
    ] {
        assert_eq!(serde_json::from_str::<HashAlgorithm>(old).expect(old), want);
    }
    // Pick and HashAlgorithm no longer share a spelling.
    assert_ne!(Pick::Hash.name(), HashAlgorithm::Murmur3.name());
}

#[test]
fn unknown_scheme_message_lists_every_scheme() {
    let e = "wcmp".parse::<Scheme>().expect_err("not a scheme");
    let msg = e.to_string();
    for s in Scheme::ALL {
        assert!(msg.contains(s.name()), "{msg}");
    }
    assert_eq!(msg, "unknown scheme (expected lcmp, ecmp or ucmp)");
}
