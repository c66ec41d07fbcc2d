//! Integration tests: theorems.

#[path = "../common/mod.rs"]
mod common;
