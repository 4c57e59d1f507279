//! The crate's error type for configuration and input (a name that is not
//! a scheme's is [`crate::codes::UnknownName`], the `FromStr` error).

use core::fmt;

/// Everything that can go wrong in `lcmp-decide`. Each variant is a
/// configuration or input problem detected at the edge (table install, a
/// sample for an unknown port); the per-packet path has no error path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// A right shift of 32 or more was configured (named by [`Setting`]).
    ShiftTooLarge(Setting),
    /// A weight so large that the weighted sum of 8-bit scores could exceed
    /// `u32` (named by [`Setting`]).
    WeightOverflow(Setting),
    /// A water mark, cut or other setting outside its valid range.
    InvalidSetting(Setting),
    /// The level-score table is empty, longer than
    /// [`crate::tables::MAX_LEVELS`], or not strictly increasing.
    InvalidLevels,
    /// The capacity thresholds do not have one entry per level, or are not
    /// strictly increasing.
    InvalidCapacityThresholds,
    /// A port id is not below the decider's compile-time port count.
    PortOutOfRange(u8),
    /// A queue sample for a port the installed tables do not list (or
    /// before any tables are installed): refused, nothing recorded (the C
    /// ABI's `LCMP_ERR_NO_SUCH_PORT`).
    PortNotInTables(u8),
    /// A port id appears twice in the port list.
    DuplicatePort(u8),
    /// A port has zero link rate or zero buffer.
    ZeroPortCapacity(u8),
    /// A group names a port that is not in the port list.
    UnknownPort {
        /// The group.
        group: u16,
        /// The port it names.
        port: u8,
    },
    /// A group id appears twice.
    DuplicateGroup(u16),
    /// A group has no candidate.
    EmptyGroup(u16),
    /// A port appears twice in one group.
    DuplicateCandidate {
        /// The group.
        group: u16,
        /// The repeated port.
        port: u8,
    },
    /// A candidate has zero capacity.
    ZeroCapacity {
        /// The group.
        group: u16,
        /// The candidate's port.
        port: u8,
    },
    /// Caller-provided flow-cache storage of this many slots: the count of
    /// [`crate::flow_cache::SlotBlock`]s must be a power of two (so the
    /// slots are a power of two of at least 16).
    FlowSlots(usize),
    /// An explicit queue-threshold table does not have one entry per
    /// level, or decreases.
    InvalidQueueThresholds,
    /// A queue-threshold table names a port that is not in the port list,
    /// or a port is in two tables (or twice in one).
    QueueThresholdsPort(u8),
}

/// Names a configuration setting in an [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Setting {
    /// `S_path` (Eq. 2).
    PathShift,
    /// `S_cong` (Eq. 5).
    CongestionShift,
    /// `S_total` (Eq. 1).
    TotalShift,
    /// `w_dl` and `w_lc` together (Eq. 2).
    PathWeights,
    /// `w_ql`, `w_tl` and `w_dp` together (Eq. 4).
    CongestionWeights,
    /// `alpha` and `beta` together (Eq. 1).
    FusionWeights,
    /// The delay saturation shift of Alg. 1.
    DelayShift,
    /// The trend EWMA shift `K` of Eq. 3.
    TrendShift,
    /// The high/low water marks of the duration penalty.
    WaterMarks,
    /// The tick rate.
    TicksPerSecond,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Setting::PathShift => "S_path",
            Setting::CongestionShift => "S_cong",
            Setting::TotalShift => "S_total",
            Setting::PathWeights => "w_dl + w_lc",
            Setting::CongestionWeights => "w_ql + w_tl + w_dp",
            Setting::FusionWeights => "alpha + beta",
            Setting::DelayShift => "delay saturation shift",
            Setting::TrendShift => "trend shift K",
            Setting::WaterMarks => "water marks (low must not exceed high)",
            Setting::TicksPerSecond => "ticks per second (must be non-zero)",
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ShiftTooLarge(s) => write!(f, "{s} must be below 32"),
            Error::WeightOverflow(s) => {
                write!(f, "{s} too large: 255 * (sum of weights) must fit in u32")
            }
            Error::InvalidSetting(s) => write!(f, "invalid setting: {s}"),
            Error::InvalidLevels => {
                f.write_str("level scores must be 1 to 16 strictly increasing values")
            }
            Error::InvalidCapacityThresholds => {
                f.write_str("capacity thresholds must be strictly increasing, one per level")
            }
            Error::PortOutOfRange(p) => {
                write!(f, "port {p} is beyond the decider's port capacity")
            }
            Error::PortNotInTables(p) => write!(
                f,
                "port {p} is not listed by the installed tables (or none are installed)"
            ),
            Error::DuplicatePort(p) => write!(f, "port {p} is listed twice"),
            Error::ZeroPortCapacity(p) => {
                write!(f, "port {p} has zero link rate or zero buffer")
            }
            Error::UnknownPort { group, port } => {
                write!(f, "group {group} names unknown port {port}")
            }
            Error::DuplicateGroup(g) => write!(f, "group {g} is listed twice"),
            Error::EmptyGroup(g) => write!(f, "group {g} has no candidate"),
            Error::DuplicateCandidate { group, port } => {
                write!(f, "group {group} lists port {port} twice")
            }
            Error::ZeroCapacity { group, port } => {
                write!(f, "group {group}: candidate port {port} has zero capacity")
            }
            Error::FlowSlots(n) => write!(
                f,
                "flow-cache storage of {n} slots: must be a power of two of at least 16"
            ),
            Error::InvalidQueueThresholds => {
                f.write_str("queue thresholds must be non-decreasing byte counts, one per level")
            }
            Error::QueueThresholdsPort(p) => write!(
                f,
                "queue thresholds name port {p}, which is unknown or already has a table"
            ),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod test {
    use super::*;
    use std::string::ToString;

    #[test]
    fn messages_name_the_setting_and_the_ids() {
        let settings = [
            Setting::PathShift,
            Setting::CongestionShift,
            Setting::TotalShift,
            Setting::PathWeights,
            Setting::CongestionWeights,
            Setting::FusionWeights,
            Setting::DelayShift,
            Setting::TrendShift,
            Setting::WaterMarks,
            Setting::TicksPerSecond,
        ];
        let names: std::collections::BTreeSet<std::string::String> =
            settings.iter().map(|s| s.to_string()).collect();
        assert_eq!(names.len(), settings.len(), "one name a setting");
        assert_eq!(Setting::PathShift.to_string(), "S_path", "Eq. 2's symbol");
        for s in settings {
            for e in [
                Error::ShiftTooLarge(s),
                Error::WeightOverflow(s),
                Error::InvalidSetting(s),
            ] {
                assert!(e.to_string().contains(&s.to_string()), "{e:?}: {e}");
            }
        }
        let e = Error::ZeroCapacity { group: 17, port: 5 };
        assert!(
            e.to_string().contains("group 17") && e.to_string().contains("port 5"),
            "{e}"
        );
        assert!(Error::FlowSlots(24).to_string().contains("24 slots"));
        assert!(Error::PortNotInTables(9)
            .to_string()
            .starts_with("port 9 is not listed"));
    }
}
