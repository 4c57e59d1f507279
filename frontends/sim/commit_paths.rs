// The paths (relative to this crate's directory) whose uncommitted changes
// mark a build `-dirty` in `lcmp_sim::COMMIT`: the crates the simulator's
// results are computed by, and the lock file. Included by `build.rs` and by
// the crate (`lcmp_sim::COMMIT_PATHS`), so that the test reads the same list.
&[".", "../../lcmp-decide", "../../lcmp-tables", "../../Cargo.lock"]
