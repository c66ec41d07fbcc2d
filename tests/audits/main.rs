//! Audits: the empirical-ε estimators of `reconbound::attacks::audit::epsilon` against
//! published values (Nasr et al. 2021, Eqs. 4–5; the analytic Gaussian ε of 1-GDP; Steinke,
//! Nasr, Jagielski 2023; jax_privacy's one-run test table) and against scipy values
//! recomputed independently (beside each test), their monotonicity, edge cases and the
//! rules of threshold choice; and the `audit` / `merge` command line on tiny configurations
//! (`cli`).
//!
//! Statistical tests draw with `Rng::for_trial(seed, i)`, fixed seeds, and fail with
//! probability ≤ 1e-6 (the estimators' own α, stated beside each).

#[path = "../common/mod.rs"]
mod common;

mod epsilon;
mod init;
mod one_run;
mod run;
mod shuffle;
