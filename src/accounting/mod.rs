//! Privacy and reconstruction accounting.
//!
//! - [`rdp`]: Rényi DP of the (subsampled) Gaussian mechanism, composition, conversion to (ε, δ), calibration.
//! - [`rdp_without_replacement`]: RDP of the Gaussian on fixed-size batches sampled without replacement, replace-one adjacency (Wang, Balle, Kasiviswanathan 2019).
//! - [`gaussian`]: classical and analytic (ε, δ) of the Gaussian mechanism; μ-GDP of full-batch runs.
//! - [`pld`]: privacy-loss distributions of the Poisson-subsampled Gaussian, composed by FFT, certified.
//! - [`schedule`], [`pld_schedule`]: schedules of DP-SGD phases (q, σ, T), composed by RDP and by PLD.
//! - [`shuffle_lower`]: a lower bound on the ε of DP-SGD with shuffled batches (Chua et al. 2024), the figure a Poisson accountant's ε must not stand in for.
//! - [`rero`]: reconstruction robustness (Balle et al. 2022 Thm 2 / Cor. 3; Hayes et al. 2023).
//! - [`prior`]: the baseline success probability κ of a prior.
//! - [`fano`]: the Fano bound of Guo et al. 2022b as compared in Hayes et al. App. H.
//! - [`mse`]: Guo et al. 2022 Thm 1, the RDP → MSE lower bound.
//! - [`tradeoff`]: the certified trade-off curve (f-DP) of a run, and the risks read from it: TPR at an FPR, advantage, Bayes accuracy, γ.
//! - [`description`]: a run as its user describes it (batch, data set, epochs, sampler, accumulation, microbatches, relation) and the mechanism the accountants take.
//! - [`verdict`]: a certified verdict (optimistic, consistent, conservative) on an ε another library printed for a run.
//! - [`fil`]: Fisher information leakage (Guo et al. 2022 Thms 2–4, Alg. 1): the DP-SGD FIL accountant and MSE bounds.

#[cfg(feature = "alloc")]
pub mod calibrate;
#[cfg(feature = "alloc")]
pub mod description;
pub mod fano;
#[cfg(feature = "alloc")]
pub mod fil;
pub mod gaussian;
#[cfg(feature = "alloc")]
pub mod guarantees;
pub mod mse;
#[cfg(feature = "alloc")]
pub mod pld;
#[cfg(feature = "alloc")]
pub mod pld_schedule;
pub mod prior;
pub mod rdp;
pub mod rdp_without_replacement;
pub mod rero;
#[cfg(feature = "alloc")]
pub mod run;
#[cfg(feature = "alloc")]
pub mod schedule;
pub mod shuffle_lower;
#[cfg(feature = "alloc")]
pub mod tradeoff;
#[cfg(feature = "alloc")]
pub mod verdict;
