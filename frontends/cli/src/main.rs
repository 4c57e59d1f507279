//! The `lcmp` command-line tool (placeholder).
fn main() {}
