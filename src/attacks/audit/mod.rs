//! Privacy audits: run a distinguisher many times (or once, on many canaries) and turn what
//! it got right into a statistical **lower bound** on the ε of the training algorithm, to be
//! set beside the accountant's upper bound.
//!
//! - [`epsilon`]: the estimators — Clopper–Pearson with δ (Nasr et al. 2021, Eqs. 4–5) at a
//!   threshold fixed in advance, chosen on held-out trials, or searched on the same trials
//!   with a Bonferroni correction; the Gaussian-DP estimate (Nasr et al. 2023); the one-run
//!   audit (Steinke, Nasr, Jagielski 2023) and its guess rule.
//!
//! Everything here is pure arithmetic on scores and counts (no training, no `std`), so the
//! estimators run unchanged in `no_std` + `alloc` builds.

pub mod epsilon;
