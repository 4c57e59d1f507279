//! Flow-level simulator (placeholder, filled in by the simulator issue).
