//! Reconstruction robustness (ReRo).
//!
//! Balle, Cherubin, Hayes 2022, Def. 2: a training algorithm is (η, γ)-ReRo for a prior π and
//! a loss ℓ if every reconstruction attack R satisfies P_{Z~π, θ}[ℓ(Z, R(θ)) ≤ η] ≤ γ.
//! The baseline κ = sup_{z₀} P_{Z~π}[ℓ(Z, z₀) ≤ η] (module [`crate::accounting::prior`]) is
//! what an adversary achieves without seeing θ.
//!
//! - [`balle`]: γ from (α, ε)-RDP (Thm 2) and from ε-DP (Cor. 3).
//! - [`dpsgd`]: γ for DP-SGD (Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3):
//!   closed form for full batch, certified numerical composition for q < 1 (default),
//!   and Monte Carlo with a one-sided confidence bound for comparison.
//! - [`schedule`]: γ of a schedule of phases (heterogeneous composition) and calibration.

pub mod balle;
pub mod dpsgd;
#[cfg(feature = "alloc")]
pub mod schedule;
