//! Integration tests: reproductions.

#[path = "../common/mod.rs"]
mod common;
