//! The decision digest: the 7 bytes of each [`DecisionRecord`] and their
//! running CRC-64/XZ (the format is in the module docs of `replay`).

use lcmp_decide::{Decision, FlowKey, GroupId, Reason};

/// One packet's decision, as the replay driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecisionRecord {
    /// 0-based index of the packet event in the trace (all events counted).
    pub index: u32,
    /// Its time, microseconds.
    pub t_us: u64,
    /// The flow.
    pub flow: FlowKey,
    /// The destination group.
    pub group: GroupId,
    /// What the core decided.
    pub decision: Decision,
}

impl DecisionRecord {
    /// The decision's kind code (`lcmp_decide::codes::DecisionKind`: 0 hit,
    /// 1 new, 2 failover, 3 unpinned, 4 no route).
    pub const fn kind_code(&self) -> u8 {
        self.decision.kind().code()
    }

    /// The kind as a word: `hit`, `new`, `failover`, `unpinned`, `no_route`.
    pub const fn kind_name(&self) -> &'static str {
        self.decision.kind().name()
    }

    /// The reason, for new decisions and no-route.
    pub const fn reason(&self) -> Option<Reason> {
        match self.decision {
            Decision::New { reason, .. } | Decision::NoRoute(reason) => Some(reason),
            Decision::Hit(_) | Decision::Unpinned(_) => None,
        }
    }

    /// The 7 bytes the digest hashes (see the module docs).
    ///
    /// ```
    /// # use lcmp_tables::replay::DecisionRecord;
    /// # use lcmp_decide::{Decision, FlowKey, GroupId, PortId, Reason};
    /// # use core::net::Ipv4Addr;
    /// let r = DecisionRecord {
    ///     index: 258, t_us: 0, group: GroupId(8),
    ///     flow: FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 7, 1), 1, 2, 17),
    ///     decision: Decision::New { port: PortId(4), reason: Reason::HashInKept, failover: false },
    /// };
    /// assert_eq!(r.digest_bytes(), [2, 1, 0, 0, 1, 4, 1]);
    /// ```
    pub fn digest_bytes(&self) -> [u8; 7] {
        let i = self.index.to_le_bytes();
        let port = self.decision.port().map_or(0xFF, |p| p.0);
        let reason = self.reason().map_or(0xFF, Reason::code);
        [i[0], i[1], i[2], i[3], self.kind_code(), port, reason]
    }
}

pub(super) const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_XZ);

/// A running hash of decisions: CRC-64/XZ over [`DecisionRecord::digest_bytes`].
#[derive(Clone)]
pub struct Digest {
    inner: crc::Digest<'static, u64>,
    decisions: u64,
}

impl core::fmt::Debug for Digest {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Digest")
            .field("value", &self.value())
            .field("decisions", &self.decisions)
            .finish()
    }
}

impl Default for Digest {
    fn default() -> Self {
        Digest::new()
    }
}

impl Digest {
    /// An empty digest (its value is CRC-64/XZ of no bytes, 0).
    ///
    /// ```
    /// # use lcmp_tables::replay::Digest;
    /// assert_eq!(Digest::new().value(), 0);
    /// ```
    pub fn new() -> Self {
        Digest {
            inner: CRC64.digest(),
            decisions: 0,
        }
    }

    /// Adds one decision.
    pub fn update(&mut self, record: &DecisionRecord) {
        self.inner.update(&record.digest_bytes());
        self.decisions = self.decisions.saturating_add(1);
    }

    /// The digest so far.
    pub fn value(&self) -> u64 {
        self.inner.clone().finalize()
    }

    /// Decisions hashed so far.
    pub const fn decisions(&self) -> u64 {
        self.decisions
    }
}
