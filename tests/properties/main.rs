//! Integration tests: properties.

#[path = "../common/mod.rs"]
mod common;
