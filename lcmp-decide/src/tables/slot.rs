//! Where a decider finds its compiled tables: in itself ([`OwnedTables`],
//! compiled in place by `install`) or behind a reference that several
//! deciders share (`Option<P>` for any `P: Deref<Target = CompiledTables>`:
//! `&CompiledTables`, `Arc`, `Rc`, `Box`), so that N cores keep one copy of
//! the tables instead of N.

use core::ops::Deref;

use super::compiled::CompiledTables;
use super::description::{Tables, ValidTables};
use crate::Error;

mod sealed {
    /// Only this crate's slots: a decider refreshes its per-port state when
    /// its tables change, which it can only do if it is the one that
    /// changes them (`install`, `use_tables`), never a slot on its own.
    pub trait Sealed {}
}

/// Holds the tables a decider runs on (see the module docs). Sealed: the
/// two kinds are [`OwnedTables`] and `Option<P>` with
/// `P: Deref<Target = CompiledTables>`.
pub trait TablesSlot: sealed::Sealed {
    /// No tables: what a new decider starts with. A constant, so that
    /// deciders are built by `const fn` (in a `static`, or in place: an
    /// empty decider is all zero bytes).
    const EMPTY: Self;

    /// The tables, if any.
    fn current(&self) -> Option<&CompiledTables>;

    /// Back to [`TablesSlot::EMPTY`], in place (a shared reference is
    /// dropped).
    fn clear(&mut self);
}

/// Tables a decider owns and compiles in place ([`DeciderWith::install`]):
/// 20.6 KB inside every decider, no reference to anything.
///
/// [`DeciderWith::install`]: crate::DeciderWith::install
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedTables {
    /// Meaningful only while `installed`; always present so that an empty
    /// slot is all zero bytes.
    tables: CompiledTables,
    installed: bool,
}

impl OwnedTables {
    /// Validates `tables` for a decider of `ports` ports and compiles them
    /// over the previous ones; on error nothing changes.
    pub(crate) fn install(&mut self, tables: &Tables, ports: usize) -> Result<(), Error> {
        tables.compile_into(ports, &mut self.tables)?;
        self.installed = true;
        Ok(())
    }

    /// [`OwnedTables::install`] of tables validated at the edge: only
    /// their ports are checked against `ports`; on error nothing changes.
    pub(crate) fn install_valid(
        &mut self,
        tables: ValidTables<'_>,
        ports: usize,
    ) -> Result<(), Error> {
        tables.compile_into(ports, &mut self.tables)?;
        self.installed = true;
        Ok(())
    }
}

impl sealed::Sealed for OwnedTables {}

impl TablesSlot for OwnedTables {
    const EMPTY: Self = OwnedTables {
        tables: CompiledTables::new(),
        installed: false,
    };

    #[inline]
    fn current(&self) -> Option<&CompiledTables> {
        self.installed.then_some(&self.tables)
    }

    fn clear(&mut self) {
        self.tables.clear();
        self.installed = false;
    }
}

impl<P: Deref<Target = CompiledTables>> sealed::Sealed for Option<P> {}

impl<P: Deref<Target = CompiledTables>> TablesSlot for Option<P> {
    const EMPTY: Self = None;

    #[inline]
    fn current(&self) -> Option<&CompiledTables> {
        self.as_deref()
    }

    fn clear(&mut self) {
        *self = None;
    }
}
