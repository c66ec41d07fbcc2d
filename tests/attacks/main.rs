//! Attacks against the bounds: the trainer's secret hook, the prior-aware attacks of Hayes et
//! al. 2023 against their closed forms and the ReRo bound γ, the trial runner and shards, and
//! the `attack` / `merge` command line.
//!
//! Statistical tests use two-sided Clopper–Pearson regions at α ≤ 1e-7 per check, with a
//! union bound over the checks of a test staying ≤ 1e-6; seeds are fixed and printed in the
//! messages.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod prior_aware;
