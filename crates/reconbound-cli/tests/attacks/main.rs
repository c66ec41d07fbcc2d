//! The attacks as the command line runs them (`attack glm`, `attack prior-aware`,
//! `attack gradient-matching`, `attack reconn`): exit status, JSON, refusals.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod glm;
mod reconn;
