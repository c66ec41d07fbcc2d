//! Attacks against the bounds: each runs on the crate's own training, uses only what its
//! adversary knows, and is reported beside the bound it must not beat.
//!
//! - [`game`]: the vocabulary they share — the challenge a trial draws, the view of each
//!   threat model (a type), the guess and its named score sets;
//! - [`trial`]: trials as pure functions of (master seed, trial index), the thread runner,
//!   shards, success rates with Clopper–Pearson intervals;
//! - [`prior_aware`]: the prior-aware attacks of Hayes, Mahloujifar, Balle 2023 (Alg. 2,
//!   Alg. 3, App. G) as DP-SGD observers, against the ReRo bound γ;
//! - [`gradient_matching`]: the gradient-matching reconstruction attack of Hayes,
//!   Mahloujifar, Balle 2023 (§2, Eq. 1; App. A, D), which needs no prior;
//! - [`glm`]: the GLM attack of Balle et al. 2022 (§III) against output-perturbed logistic
//!   regression, as evaluated by Guo et al. 2022 (§7.2) against the per-example FIL bound;
//! - [`reconn`]: RecoNN, the model-based attack of Balle et al. 2022 (§IV–VI): its shadow-set
//!   files;
//! - [`audit`]: empirical-ε estimators of privacy audits (Clopper–Pearson with δ, the
//!   Gaussian-DP estimate, the one-run audit).

pub mod audit;
pub mod game;
pub mod glm;
pub mod gradient_matching;
pub mod prior_aware;
pub mod reconn;
pub mod trial;
