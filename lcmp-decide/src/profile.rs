//! Named parameter profiles: the paper's defaults (§3, §7) and a tuned
//! alternative found by the simulator's parameter search
//! (`docs/simulator.md`, "Beyond the paper: the tuned profile").
//!
//! A profile is a complete [`Params`]: every frontend that accepts a
//! profile name (`lcmp tables`, `lcmp sim`, `lcmp tofino`, the wasm demo)
//! installs exactly these values, with the delay saturation of
//! [`Params::delay_shift`]. The paper's profile is the default everywhere.

use crate::tables::Params;

/// A named set of parameters.
///
/// ```
/// # use lcmp_decide::{Params, Profile};
/// assert_eq!(Profile::default(), Profile::Paper);
/// assert_eq!(Profile::Paper.params(), Params::PAPER);
/// assert_eq!(Profile::from_name("tuned"), Some(Profile::Tuned));
/// assert_eq!(Profile::Tuned.params().delay_shift, 10);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Profile {
    /// The paper's defaults ([`Params::PAPER`]).
    #[default]
    Paper,
    /// The paper's weights, with delays saturating at 1024 ms instead of
    /// 32 ms (Alg. 1 shift 10: no one-way delay of either evaluation
    /// topology saturates, and path scores sit close enough for the
    /// congestion term to reorder candidates) and a cost band of 8
    /// (candidates more than 8 above the cheapest are cut too; see
    /// [`Params::band`]). Picks stay a hash in the kept set, so a switch's
    /// bucket table can hold them.
    Tuned,
}

impl Profile {
    /// Every profile, the default first.
    pub const ALL: [Profile; 2] = [Profile::Paper, Profile::Tuned];

    /// The profile's name, as frontends accept it.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Paper => "paper",
            Profile::Tuned => "tuned",
        }
    }

    /// The profile of a name (ASCII case-insensitive), if any.
    ///
    /// ```
    /// # use lcmp_decide::Profile;
    /// assert_eq!(Profile::from_name("Paper"), Some(Profile::Paper));
    /// assert_eq!(Profile::from_name("fast"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// One line for people.
    pub const fn describe(self) -> &'static str {
        match self {
            Profile::Paper => "the paper's parameters (delays saturate at 32 ms, S_cong = 3)",
            Profile::Tuned => "delays saturate at 1024 ms, cost band 8 (docs/simulator.md)",
        }
    }

    /// The profile's parameters.
    pub const fn params(self) -> Params {
        match self {
            Profile::Paper => Params::PAPER,
            // The paper's weights and everything else but these two.
            Profile::Tuned => Params {
                delay_shift: 10,
                band: 8,
                ..Params::PAPER
            },
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::cost::Weights;

    #[test]
    fn profiles_are_valid_and_named_uniquely() {
        for p in Profile::ALL {
            assert!(p.params().validate().is_ok(), "{p:?}");
            assert_eq!(Profile::from_name(p.name()), Some(p));
            assert!(!p.describe().is_empty());
        }
        assert_ne!(Profile::Paper.name(), Profile::Tuned.name());
        assert_ne!(Profile::Paper.describe(), Profile::Tuned.describe());
        assert_eq!(Profile::from_name(""), None);
    }

    /// Each line says where its delays saturate: `2^delay_shift` delay
    /// units of a millisecond (Alg. 1).
    #[test]
    fn descriptions_state_the_delay_saturation() {
        for p in Profile::ALL {
            let ms = 1u32 << p.params().delay_shift;
            let want = std::format!("saturate at {ms} ms");
            assert!(p.describe().contains(&want), "{p:?}: {}", p.describe());
        }
    }

    #[test]
    fn tuned_differs_from_the_paper_only_where_documented() {
        let (p, t) = (Params::PAPER, Profile::Tuned.params());
        assert_eq!((t.delay_shift, t.band), (10, 8));
        assert_eq!(t.weights, Weights::PAPER);
        let back = Params {
            delay_shift: p.delay_shift,
            band: p.band,
            ..t
        };
        assert_eq!(back, p);
    }
}
