//! Attacks against the bounds: each runs on the crate's own training, uses only what its
//! adversary knows, and is reported beside the bound it must not beat.
//!
//! - [`gradient_matching`]: the gradient-matching reconstruction attack of Hayes,
//!   Mahloujifar, Balle 2023 (§2, Eq. 1; App. A, D), which needs no prior.

pub mod gradient_matching;
