//! Integration tests: reference_vectors.

#[path = "../common/mod.rs"]
mod common;
