//! The audits as the command line runs them (`audit`, `estimate`): exit status, JSON,
//! refusals.

#[path = "../common/mod.rs"]
mod common;

mod black_box;
mod cli;
mod estimate;
