//! LCMP control plane (placeholder, filled in by the tables issue).
#![no_std]
#![forbid(unsafe_code)]
