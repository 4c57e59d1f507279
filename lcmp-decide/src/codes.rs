//! Stable numeric codes and names of the core's enums: the one definition
//! that the replay digest, the C ABI (`LCMP_REASON_*`, `LCMP_DECISION_*`,
//! `LCMP_SCHEME_*`, `LCMP_CUT_*`), the `lcmp` tool's JSON and flags, the
//! Tofino agent and the fuzzers use. A code never changes meaning; a new
//! variant gets the next free code (the digest format and the C ABI are
//! versioned on top of these, see the CHANGELOGs).

use core::fmt;
use core::str::FromStr;

use crate::{CutReason, Decision, HashAlgorithm, Pick, Reason, Scheme};

impl Reason {
    /// Every reason, in code order.
    pub const ALL: [Reason; 10] = [
        Reason::Pinned,
        Reason::HashInKept,
        Reason::WeightedInKept,
        Reason::MinCostFallback,
        Reason::Ecmp,
        Reason::Ucmp,
        Reason::EcmpFallback,
        Reason::CacheFull,
        Reason::NoLiveCandidate,
        Reason::UnknownGroup,
    ];

    /// The reason's code (0-9, its position in [`Reason::ALL`]).
    ///
    /// ```
    /// # use lcmp_decide::Reason;
    /// assert_eq!(Reason::CacheFull.code(), 7);
    /// assert_eq!(Reason::from_code(7), Some(Reason::CacheFull));
    /// ```
    pub const fn code(self) -> u8 {
        match self {
            Reason::Pinned => 0,
            Reason::HashInKept => 1,
            Reason::WeightedInKept => 2,
            Reason::MinCostFallback => 3,
            Reason::Ecmp => 4,
            Reason::Ucmp => 5,
            Reason::EcmpFallback => 6,
            Reason::CacheFull => 7,
            Reason::NoLiveCandidate => 8,
            Reason::UnknownGroup => 9,
        }
    }

    /// The reason with code `code`, if any.
    pub const fn from_code(code: u8) -> Option<Reason> {
        Some(match code {
            0 => Reason::Pinned,
            1 => Reason::HashInKept,
            2 => Reason::WeightedInKept,
            3 => Reason::MinCostFallback,
            4 => Reason::Ecmp,
            5 => Reason::Ucmp,
            6 => Reason::EcmpFallback,
            7 => Reason::CacheFull,
            8 => Reason::NoLiveCandidate,
            9 => Reason::UnknownGroup,
            _ => return None,
        })
    }

    /// The snake-case name (the serde and JSON spelling).
    pub const fn name(self) -> &'static str {
        match self {
            Reason::Pinned => "pinned",
            Reason::HashInKept => "hash_in_kept",
            Reason::WeightedInKept => "weighted_in_kept",
            Reason::MinCostFallback => "min_cost_fallback",
            Reason::Ecmp => "ecmp",
            Reason::Ucmp => "ucmp",
            Reason::EcmpFallback => "ecmp_fallback",
            Reason::CacheFull => "cache_full",
            Reason::NoLiveCandidate => "no_live_candidate",
            Reason::UnknownGroup => "unknown_group",
        }
    }
    /// A one-sentence description for people.
    pub const fn describe(self) -> &'static str {
        match self {
            Reason::Pinned => "established flow: followed its pinned egress, which is up",
            Reason::HashInKept => "new flow: hashed within the low-cost kept set",
            Reason::WeightedInKept => {
                "new flow: capacity-weighted hash within the low-cost kept set"
            }
            Reason::MinCostFallback => {
                "new flow: every candidate was over the cut, so the minimum-cost one was taken"
            }
            Reason::Ecmp => "ECMP: hashed over all live candidates",
            Reason::Ucmp => "UCMP: hashed over the live candidates of maximum capacity",
            Reason::EcmpFallback => "LCMP tables outdated: fell back to ECMP over live candidates",
            Reason::CacheFull => {
                "flow cache full: new flow not pinned (refused, or stateless ECMP if so configured)"
            }
            Reason::NoLiveCandidate => "no route: every candidate of the group is down",
            Reason::UnknownGroup => "no route: the destination group is not installed",
        }
    }
}

impl Scheme {
    /// Every scheme, in code order.
    pub const ALL: [Scheme; 3] = [Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp];

    /// The scheme's code (0 LCMP, 1 ECMP, 2 UCMP).
    pub const fn code(self) -> u8 {
        match self {
            Scheme::Lcmp => 0,
            Scheme::Ecmp => 1,
            Scheme::Ucmp => 2,
        }
    }

    /// The scheme with code `code`, if any.
    pub const fn from_code(code: u8) -> Option<Scheme> {
        match code {
            0 => Some(Scheme::Lcmp),
            1 => Some(Scheme::Ecmp),
            2 => Some(Scheme::Ucmp),
            _ => None,
        }
    }

    /// The scheme in a few words, for people (`--help`).
    pub const fn describe(self) -> &'static str {
        match self {
            Scheme::Lcmp => "LCMP (§3)",
            Scheme::Ecmp => "ECMP over all live candidates",
            Scheme::Ucmp => {
                "UCMP as the artifact: ECMP over the live candidates of maximum capacity"
            }
        }
    }

    /// The lower-case name (`lcmp`, `ecmp`, `ucmp`), as flags and JSON
    /// spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Scheme::Lcmp => "lcmp",
            Scheme::Ecmp => "ecmp",
            Scheme::Ucmp => "ucmp",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of an enum's names (see [`Scheme`]'s `FromStr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UnknownName;

impl fmt::Display for UnknownName {
    /// "unknown scheme (expected lcmp, ecmp or ucmp)", the names taken from
    /// [`Scheme::ALL`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown scheme (expected ")?;
        let last = Scheme::ALL.len().saturating_sub(1);
        for (i, s) in Scheme::ALL.iter().enumerate() {
            let sep = match i {
                0 => "",
                i if i == last => " or ",
                _ => ", ",
            };
            write!(f, "{sep}{}", s.name())?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for UnknownName {}

impl FromStr for Scheme {
    type Err = UnknownName;

    /// Parses a scheme's [`Scheme::name`].
    ///
    /// ```
    /// # use lcmp_decide::Scheme;
    /// assert_eq!("ucmp".parse(), Ok(Scheme::Ucmp));
    /// assert!("wcmp".parse::<Scheme>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scheme::ALL
            .into_iter()
            .find(|scheme| scheme.name() == s)
            .ok_or(UnknownName)
    }
}

impl CutReason {
    /// The code of an optional cut reason (0 none, 1 down, 2 upper half,
    /// 3 over the cut, 4 not of maximum capacity).
    pub const fn code(reason: Option<CutReason>) -> u8 {
        match reason {
            None => 0,
            Some(CutReason::Down) => 1,
            Some(CutReason::UpperHalf) => 2,
            Some(CutReason::OverCut) => 3,
            Some(CutReason::NotMaxCapacity) => 4,
        }
    }
}

/// A decision's kind, with the codes of the replay digest and the C ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DecisionKind {
    /// An established flow on its pinned port (code 0).
    Hit,
    /// A new flow, decided and pinned (code 1).
    New,
    /// A pinned flow re-decided because its port went down or was
    /// withdrawn (code 2).
    Failover,
    /// Not pinned, routed statelessly (code 3).
    Unpinned,
    /// No route (code 4).
    NoRoute,
}

impl DecisionKind {
    /// Every kind, in code order.
    pub const ALL: [DecisionKind; 5] = [
        DecisionKind::Hit,
        DecisionKind::New,
        DecisionKind::Failover,
        DecisionKind::Unpinned,
        DecisionKind::NoRoute,
    ];

    /// The kind's code (its position in [`DecisionKind::ALL`]).
    pub const fn code(self) -> u8 {
        match self {
            DecisionKind::Hit => 0,
            DecisionKind::New => 1,
            DecisionKind::Failover => 2,
            DecisionKind::Unpinned => 3,
            DecisionKind::NoRoute => 4,
        }
    }

    /// The snake-case name (`hit`, `new`, `failover`, `unpinned`,
    /// `no_route`).
    pub const fn name(self) -> &'static str {
        match self {
            DecisionKind::Hit => "hit",
            DecisionKind::New => "new",
            DecisionKind::Failover => "failover",
            DecisionKind::Unpinned => "unpinned",
            DecisionKind::NoRoute => "no_route",
        }
    }
}

impl Decision {
    /// The decision's kind.
    ///
    /// ```
    /// # use lcmp_decide::{codes::DecisionKind, Decision, PortId};
    /// assert_eq!(Decision::Hit(PortId(3)).kind(), DecisionKind::Hit);
    /// assert_eq!(Decision::Hit(PortId(3)).kind().code(), 0);
    /// ```
    pub const fn kind(&self) -> DecisionKind {
        match self {
            Decision::Hit(_) => DecisionKind::Hit,
            Decision::New {
                failover: false, ..
            } => DecisionKind::New,
            Decision::New { failover: true, .. } => DecisionKind::Failover,
            Decision::Unpinned(_) => DecisionKind::Unpinned,
            Decision::NoRoute(_) => DecisionKind::NoRoute,
        }
    }

    /// The reason of a new decision or of no route (`Hit` is
    /// [`Reason::Pinned`], `Unpinned` [`Reason::CacheFull`]).
    pub const fn reason(&self) -> Reason {
        match *self {
            Decision::Hit(_) => Reason::Pinned,
            Decision::New { reason, .. } | Decision::NoRoute(reason) => reason,
            Decision::Unpinned(_) => Reason::CacheFull,
        }
    }
}

impl Pick {
    /// Every pick.
    pub const ALL: [Pick; 3] = [Pick::Hash, Pick::ScaledHash, Pick::CapacityWeighted];

    /// The snake-case name (the serde and JSON spelling, tied by a test in
    /// lcmp-tables; the blob encodes the variant index, not the name).
    ///
    /// ```
    /// # use lcmp_decide::Pick;
    /// assert_eq!(Pick::ScaledHash.name(), "scaled_hash");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Pick::Hash => "hash",
            Pick::ScaledHash => "scaled_hash",
            Pick::CapacityWeighted => "capacity_weighted",
        }
    }
}

impl HashAlgorithm {
    /// Every hash algorithm, in declaration order.
    pub const ALL: [HashAlgorithm; 2] = [HashAlgorithm::Murmur3, HashAlgorithm::Crc32];

    /// The snake-case name (the serde and JSON spelling, tied by a test in
    /// lcmp-tables).
    ///
    /// ```
    /// # use lcmp_decide::HashAlgorithm;
    /// assert_eq!(HashAlgorithm::Crc32.name(), "crc32");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            HashAlgorithm::Murmur3 => "murmur3",
            HashAlgorithm::Crc32 => "crc32",
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::string::{String, ToString};

    #[test]
    fn codes_and_names_round_trip() {
        for (i, r) in Reason::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(r.code()), i);
            assert_eq!(Reason::from_code(r.code()), Some(r));
        }
        assert_eq!(Reason::from_code(10), None);
        for (i, s) in Scheme::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(s.code()), i);
            assert_eq!(Scheme::from_code(s.code()), Some(s));
            assert_eq!(s.name().parse(), Ok(s));
            assert_eq!(s.to_string(), s.name());
        }
        assert_eq!(Scheme::from_code(3), None);
        assert_eq!("LCMP".parse::<Scheme>(), Err(UnknownName));
        for (i, k) in DecisionKind::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(k.code()), i);
        }
        let names: std::vec::Vec<&str> = DecisionKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["hit", "new", "failover", "unpinned", "no_route"]);
    }

    /// The snake-case spelling of a variant's `Debug` name, the rule the
    /// `name` methods document (serde's `rename_all = "snake_case"`).
    fn snake_case(debug: &str) -> String {
        let mut out = String::new();
        for (i, c) in debug.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    #[test]
    fn names_are_the_snake_case_of_the_variants() {
        for r in Reason::ALL {
            assert_eq!(r.name(), snake_case(&std::format!("{r:?}")));
        }
        for p in Pick::ALL {
            assert_eq!(p.name(), snake_case(&std::format!("{p:?}")));
        }
        for h in HashAlgorithm::ALL {
            assert_eq!(h.name(), snake_case(&std::format!("{h:?}")));
        }
        for k in DecisionKind::ALL {
            assert_eq!(k.name(), snake_case(&std::format!("{k:?}")));
        }
        for s in Scheme::ALL {
            assert_eq!(s.name(), snake_case(&std::format!("{s:?}")));
        }
    }

    #[test]
    fn descriptions_are_distinct_sentences() {
        let reasons: std::collections::BTreeSet<&str> =
            Reason::ALL.iter().map(|r| r.describe()).collect();
        assert_eq!(reasons.len(), Reason::ALL.len(), "one description a reason");
        assert!(reasons.iter().all(|d| d.len() > 10));
        let schemes: std::collections::BTreeSet<&str> =
            Scheme::ALL.iter().map(|s| s.describe()).collect();
        assert_eq!(schemes.len(), Scheme::ALL.len(), "one description a scheme");
        for s in Scheme::ALL {
            // Each says which scheme it is.
            assert!(
                s.describe().contains(&s.name().to_ascii_uppercase()),
                "{s}: {}",
                s.describe()
            );
        }
    }

    #[test]
    fn unknown_name_lists_every_scheme() {
        assert_eq!(
            UnknownName.to_string(),
            "unknown scheme (expected lcmp, ecmp or ucmp)"
        );
    }

    #[test]
    fn cut_reason_codes_are_the_documented_ones() {
        // The C ABI's LCMP_CUT_* values (lcmp.h): a code never changes.
        let codes = [
            (None, 0),
            (Some(CutReason::Down), 1),
            (Some(CutReason::UpperHalf), 2),
            (Some(CutReason::OverCut), 3),
            (Some(CutReason::NotMaxCapacity), 4),
        ];
        for (reason, code) in codes {
            assert_eq!(CutReason::code(reason), code, "{reason:?}");
        }
    }
}
