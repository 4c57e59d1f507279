//! `lcmp tofino ...`: clap arguments and `run` (placeholder).
