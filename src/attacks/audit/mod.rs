//! Privacy audits: run a distinguisher many times (or once, on many canaries) and turn what
//! it got right into a statistical **lower bound** on the ε of the training algorithm, to be
//! set beside the accountant's upper bound.
//!
//! - [`epsilon`]: the estimators — Clopper–Pearson with δ (Nasr et al. 2021, Eqs. 4–5) at a
//!   threshold fixed in advance, chosen on held-out trials, or searched on the same trials
//!   with a Bonferroni correction; the Gaussian-DP estimate (Nasr et al. 2023); the one-run
//!   audit (Steinke, Nasr, Jagielski 2023) and its guess rule;
//! - [`canary`]: the crafters of Nasr et al. 2021 (§IV, Table I): example, mislabelled,
//!   ClipBKD, adaptive, gradient canaries, the malicious dataset;
//! - [`run`]: one trial (a training in each world) scored by every distinguisher
//!   (Distinguishers 1–3), with crafter 5 computed once rather than trained;
//! - [`evaluate`]: one distinguisher's scores over the trials → an empirical ε, with the
//!   threshold fixed, held out or paid for by Bonferroni;
//! - [`one_run`]: the one-run audit (Steinke, Nasr, Jagielski 2023): many canaries in one
//!   training, each included with probability ½;
//! - [`one_run_fdp`]: the same one-run counts tested against a claimed trade-off curve
//!   (Mahloujifar, Melis & Chaudhuri 2025): μ-GDP and its ε, or a run's certified curve;
//! - [`one_run_family`]: the largest ε whose curve of the claimed run's family (its noise
//!   scaled) the one-run guesses refute — a lower bound for non-Gaussian runs too;
//! - [`forecast`]: what an audit of a Gaussian mechanism with known μ reaches with N trials
//!   (crafter 5 with Distinguisher 3 on the full batch), and the threshold to fix for it.
//!
//! Nothing here needs `std`: the estimators are pure arithmetic on scores and counts, and
//! trials run on the crate's own trainer, so audits run unchanged in `no_std` + `alloc`
//! builds (the thread runner is [`crate::attacks::trial`]'s).

pub mod canary;
pub mod claim;
pub mod epsilon;
pub mod evaluate;
pub mod forecast;
pub mod init;
pub mod one_run;
pub mod one_run_counts;
pub mod one_run_family;
pub mod one_run_fdp;
pub mod one_run_verdict;
pub mod run;
