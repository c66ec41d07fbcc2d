//! Attacks against the bounds: the trainer's secret hook, the prior-aware attacks of Hayes et
//! al. 2023 against their closed forms and the ReRo bound γ, the GLM attack of Balle et al.
//! 2022 against the FIL bound of Guo et al. 2022, gradient matching (Hayes et al. §2), the
//! trial runner and shards, and the `attack` / `merge` command line.
//!
//! Statistical tests state their failure probability (at most 1e-6 per test, by union bounds
//! over their checks); seeds are fixed and printed in the messages.

#[path = "../common/mod.rs"]
mod common;

mod gradient_matching;
mod prior_aware;
