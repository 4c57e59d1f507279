//! Renderers: each turns the [`crate::schema::Schema`] and an
//! [`crate::EntrySet`] into one file format. They are pure functions from
//! the model to text, so the outputs cannot disagree with each other.

pub mod bfrt;
pub mod bfrt_json;
pub mod p4;
pub mod p4runtime;

use crate::model::{EntrySet, Program};

/// Every output file: name and contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    /// `(file name, contents)`, in a fixed order.
    pub files: Vec<(&'static str, String)>,
}

/// The file names, as written by `lcmp tofino`.
pub mod file_names {
    /// The P4 program.
    pub const P4: &str = "lcmp.p4";
    /// The bfrt_python script.
    pub const BFRT: &str = "lcmp_entries.py";
    /// BF-Runtime JSON entries.
    pub const BFRT_JSON: &str = "lcmp_entries.json";
    /// P4Info, text format.
    pub const P4INFO: &str = "lcmp.p4info.txtpb";
    /// P4Runtime `WriteRequest`, text format.
    pub const WRITE_REQUEST: &str = "lcmp_write_request.txtpb";
}

/// The P4 program alone (`lcmp tofino p4`).
pub fn program_files(program: &Program) -> Files {
    Files {
        files: vec![
            (file_names::P4, p4::render(program)),
            (file_names::P4INFO, p4runtime::p4info(&program.schema())),
        ],
    }
}

/// The entries in every format (`lcmp tofino entries`), plus the program
/// they belong to.
pub fn entry_files(program: &Program, entries: &EntrySet) -> Files {
    let schema = program.schema();
    let mut files = program_files(program);
    files
        .files
        .push((file_names::BFRT, bfrt::render(&schema, entries)));
    files
        .files
        .push((file_names::BFRT_JSON, bfrt_json::render(&schema, entries)));
    files.files.push((
        file_names::WRITE_REQUEST,
        p4runtime::write_request(&schema, entries),
    ));
    files
}
