//! # lcmp-tofino
//!
//! LCMP on a Tofino DCI switch: a generated P4_16 TNA/T2NA program
//! (`lcmp.p4`) and the table entries that a switch-CPU agent writes into
//! it, rendered from one internal model as `bfrt_python`, BF-Runtime JSON
//! and P4Runtime text (P4Info + `WriteRequest`s), with ordered hitless
//! updates, an interpreter that checks the entries pick the same port as
//! `lcmp-decide`, and checks of the generated program's text.
//!
//! ## Architecture, by layer
//!
//! * [`schema`]: every table, key, action (with its P4 body), register
//!   and digest of `lcmp.p4`, with names, widths and sizes; the P4
//!   template names none of them, and all renderers, the agent's entries
//!   and the interpreter read them from here.
//! * [`hash`]: the ECMP hash as the ASIC computes it (field list and CRC
//!   polynomial, the seed folded into the final XOR), with a bitwise
//!   reference CRC.
//! * [`model`]: [`Agent`], the decision core (with
//!   [`lcmp_decide::Pick::ScaledHash`]) fed with polled queue counters and
//!   port events; [`EntrySet`], the entries it installs; [`model::Plan`],
//!   the ordered writes between two entry sets. The module docs prove the
//!   `(group, bucket)` selection equal to the core's pick.
//! * [`render`]: `lcmp.p4`, `bfrt_python`, BF-Runtime JSON, P4Info and
//!   `WriteRequest` text.
//! * [`interp`]: evaluates an [`EntrySet`] with Tofino match semantics and
//!   the flow-pin registers.
//! * [`lint`]: parses the generated P4 and checks what bf-p4c refused in
//!   earlier programs and the text shows (double register executes per
//!   path, undeclared names, widths, constant outputs, hash bits and ALU
//!   operations per action); stages and resources are the compiler's.
//! * [`halves`]: pin ways declared as two registers where the chip places
//!   no register that large (Tofino 2).
//! * [`cli`]: `lcmp tofino p4|entries|update|compile` as clap arguments
//!   and `run`.
//! * [`compile`]: runs the Tofino compiler (`p4c-barefoot` or an SDE's
//!   `bf-p4c`) and reads its stage counts; the compile stamps of the golden
//!   programs ([`sha256`] of the text, compiler commit, stages).
//!
//! ## What this crate does not do
//!
//! It does not contain a P4 compiler (`lcmp tofino compile` runs one you
//! name), talk to a switch itself (the generated `lcmp_agent.py` does, in
//! bfrt_python on the switch CPU), or run a Tofino model: it renders files
//! and evaluates them.
//! The data plane parses IPv4 only.
//!
//! ## MSRV
//!
//! Rust 1.93 (the workspace's `rust-version`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod compile;
mod error;
pub mod halves;
pub mod hash;
pub mod interp;
pub mod lint;
pub mod model;
pub mod render;
pub mod schema;
pub mod sha256;
mod state;

pub use error::Error;
pub use model::{Agent, EntrySet, ExportOptions, Plan, Program, Target};
pub use state::{CongestionState, Sample};
