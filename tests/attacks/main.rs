//! Integration tests of the attacks against the bounds (`reconbound::attacks`).

#[path = "../common/mod.rs"]
mod common;

mod glm;
