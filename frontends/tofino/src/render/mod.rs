//! Renderers: each turns the [`crate::schema::Schema`] and an
//! [`crate::EntrySet`] or a [`crate::model::Plan`] into one file format.
//! They are pure functions from the model to text, so the outputs cannot
//! disagree with each other.

pub mod agent;
pub mod bfrt;
pub mod bfrt_json;
pub mod p4;
pub mod p4runtime;

use crate::model::{EntrySet, Plan, Program};

/// Every output file: name and contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    /// `(file name, contents)`, in a fixed order.
    pub files: Vec<(String, String)>,
}

/// The file names, as written by `lcmp tofino`.
pub mod file_names {
    /// The P4 program.
    pub const P4: &str = "lcmp.p4";
    /// The bfrt_python script that loads the entries into empty tables.
    pub const BFRT: &str = "lcmp_entries.py";
    /// BF-Runtime JSON entries (`add_from_json` lists per table).
    pub const BFRT_JSON: &str = "lcmp_entries.json";
    /// P4Info, text format.
    pub const P4INFO: &str = "lcmp.p4info.txtpb";
    /// P4Runtime `WriteRequest`s of the load, one per phase:
    /// `lcmp_write_request_<n>.txtpb`.
    pub const WRITE_REQUEST: &str = "lcmp_write_request";
    /// The agent (bfrt_python on the switch CPU).
    pub const AGENT: &str = "lcmp_agent.py";
    /// The bfrt_python script of an update.
    pub const UPDATE_BFRT: &str = "lcmp_update.py";
    /// P4Runtime `WriteRequest`s of an update, one per phase:
    /// `lcmp_update_write_request_<n>.txtpb`.
    pub const UPDATE_WRITE_REQUEST: &str = "lcmp_update_write_request";
}

/// The P4 program alone (`lcmp tofino p4`).
pub fn program_files(program: &Program) -> Files {
    Files {
        files: vec![
            (file_names::P4.into(), p4::render(program)),
            (
                file_names::P4INFO.into(),
                p4runtime::p4info(&program.schema()),
            ),
        ],
    }
}

fn write_requests(files: &mut Files, stem: &str, program: &Program, plan: &Plan) {
    let schema = program.schema();
    for (i, text) in p4runtime::write_requests(&schema, plan)
        .into_iter()
        .enumerate()
    {
        files.files.push((format!("{stem}_{}.txtpb", i + 1), text));
    }
}

/// The entries in every format (`lcmp tofino entries`), plus the program
/// they belong to: the load of `entries` into empty tables.
pub fn entry_files(program: &Program, entries: &EntrySet) -> Files {
    let schema = program.schema();
    let plan = entries.load_plan();
    let mut files = program_files(program);
    files.files.push((
        file_names::BFRT.into(),
        bfrt::render(&schema, &plan, bfrt::Script::Load),
    ));
    files.files.push((
        file_names::BFRT_JSON.into(),
        bfrt_json::render(&schema, &plan),
    ));
    write_requests(&mut files, file_names::WRITE_REQUEST, program, &plan);
    files
}

/// The ordered update from `old` to `new` (`lcmp tofino update`).
pub fn update_files(program: &Program, old: &EntrySet, new: &EntrySet) -> Files {
    let schema = program.schema();
    let plan = new.plan_from(old);
    let mut files = Files {
        files: vec![(
            file_names::UPDATE_BFRT.into(),
            bfrt::render(&schema, &plan, bfrt::Script::Update),
        )],
    };
    write_requests(&mut files, file_names::UPDATE_WRITE_REQUEST, program, &plan);
    files
}
