//! The rollback floor in flash (docs/firmware.md, "What firmware
//! persists"): a model of the flash page a device keeps its floor in, and
//! the floor itself, one generation per trusted key id.
//!
//! The model has the two properties that make flash writes hard to get
//! right: a word is programmed once per erase (programming can only set
//! bits; this model's erased state is 0, as the data flash of some MCUs,
//! so that the page lives in `.bss`), and a reset may cut a write short.
//! So a record goes to the slot that does not hold the newest one, its
//! commit word last: a cut write leaves that slot without its commit
//! word, and the other slot's record (the previous floor) stands. This is
//! the write-fsync-rename of a file system, for a page of flash.
//!
//! It survives what the image simulates as a reset: `main` rebuilds every
//! other piece of state (the decider, the keys) and reads the floor back
//! from here.

use lcmp_tables::blob::signed::{KeyId, TrustedKeys};

/// Key ids with a floor of their own: two, as many as are trusted at
/// once during a rotation (the C ABI's `LCMP_MAX_TRUSTED_KEYS`).
pub(crate) const FLOOR_KEYS: usize = 2;

/// The floor: the last installed generation per signing key id (a key id
/// with generation 0 is an empty entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Floors([(u64, u64); FLOOR_KEYS]);

impl Floors {
    /// The floor of a blob offered now: the largest generation installed
    /// under a key that is still trusted. Generations of a retired key
    /// (after a rotation, or a key revoked because it was stolen and
    /// signed a generation near `u64::MAX`) no longer bind: TUF's rule of
    /// resetting the versions a rotated role signed. A blob the retired
    /// key signed is refused by its key anyway.
    pub(crate) fn floor(&self, keys: &TrustedKeys) -> u64 {
        self.0
            .iter()
            .filter(|(id, _)| keys.find(KeyId(*id)).is_some())
            .map(|&(_, generation)| generation)
            .max()
            .unwrap_or(0)
    }

    /// The floors after `generation` was installed under `key`: that key's
    /// entry, else an empty one or one of a key no longer trusted, else
    /// the lower of the two, is replaced.
    pub(crate) fn with(&self, key: KeyId, generation: u64, keys: &TrustedKeys) -> Floors {
        let mut next = *self;
        let stale = |&(id, g): &(u64, u64)| g == 0 || keys.find(KeyId(id)).is_none();
        let at = next
            .0
            .iter()
            .position(|&(id, g)| id == key.0 && g != 0)
            .or_else(|| next.0.iter().position(stale))
            .unwrap_or_else(|| usize::from(next.0[1].1 < next.0[0].1));
        if let Some(entry) = next.0.get_mut(at) {
            *entry = (key.0, generation);
        }
        next
    }
}

/// Bytes of one record: a sequence number, the floors, the commit word.
pub(crate) const RECORD: usize = 4 + 16 * FLOOR_KEYS + 4;
/// The commit word, programmed last ("LCMF").
const COMMITTED: u32 = 0x4C43_4D46;

/// The flash page: two record slots.
pub(crate) struct Flash {
    slots: [[u8; RECORD]; 2],
}

impl Flash {
    /// A page that was never written (erased).
    pub(crate) const ERASED: Flash = Flash {
        slots: [[0; RECORD]; 2],
    };

    /// The floors of the newest committed record (none: all empty).
    pub(crate) fn load(&self) -> Floors {
        self.newest().map_or(Floors::default(), |(_, _, f)| f)
    }

    /// Persists `floors` in a new record, in the slot that does not hold
    /// the newest one: erase, program the body, then the commit word. With
    /// `cut_after` a reset stops the write after that many bytes (a
    /// power cut; the test's torn write). Returns whether the record was
    /// committed.
    pub(crate) fn store(&mut self, floors: &Floors, cut_after: Option<usize>) -> bool {
        let (slot, sequence) = match self.newest() {
            Some((slot, sequence, _)) => (1 - slot, sequence.wrapping_add(1)),
            None => (0, 1),
        };
        // The record: sequence, then id and generation per key, then the
        // commit word, all little-endian.
        let mut record = [0u8; RECORD];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            if let Some(dst) = record.get_mut(at..at + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
            at += bytes.len();
        };
        put(&sequence.to_le_bytes());
        for (id, generation) in floors.0 {
            put(&id.to_le_bytes());
            put(&generation.to_le_bytes());
        }
        put(&COMMITTED.to_le_bytes());
        let Some(page) = self.slots.get_mut(slot) else {
            return false;
        };
        page.fill(0); // erase
        let end = cut_after.unwrap_or(RECORD).min(RECORD);
        for (cell, byte) in page.iter_mut().zip(record).take(end) {
            *cell |= byte; // program: bits can only be set
        }
        end == RECORD
    }

    /// The newest committed record: its slot, sequence and floors.
    fn newest(&self) -> Option<(usize, u32, Floors)> {
        let mut best: Option<(usize, u32, Floors)> = None;
        for (slot, page) in self.slots.iter().enumerate() {
            let Some((sequence, floors)) = parse(page) else {
                continue;
            };
            // Sequence numbers wrap: the newer is the one the other is
            // less than half the range behind.
            let newer = best.is_none_or(|(_, s, _)| sequence.wrapping_sub(s) as i32 > 0);
            if newer {
                best = Some((slot, sequence, floors));
            }
        }
        best
    }
}

/// A committed record's sequence number and floors.
fn parse(page: &[u8; RECORD]) -> Option<(u32, Floors)> {
    let u32_at = |at: usize| {
        page.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    };
    let u64_at = |at: usize| {
        page.get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if u32_at(RECORD - 4)? != COMMITTED {
        return None;
    }
    let mut floors = Floors::default();
    for (k, entry) in floors.0.iter_mut().enumerate() {
        let at = 4 + 16 * k;
        *entry = (u64_at(at)?, u64_at(at + 8)?);
    }
    Some((u32_at(0)?, floors))
}
