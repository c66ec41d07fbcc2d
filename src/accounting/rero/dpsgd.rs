//! Hayes et al. 2023 ReRo bound for DP-SGD (in progress).

use crate::error::{check_positive, check_steps, check_unit_rate, Result};
use crate::math::normal;

/// γ for DP-SGD with full batches (q = 1): γ = Φ(Φ⁻¹(κ) + √T/σ).
///
/// # Formula
/// With q = 1 the with-target output law is N(𝟙, σ²I_T) against N(0, σ²I_T); the
/// Neyman–Pearson set of ν-mass κ has μ-mass Φ(Φ⁻¹(κ) + √T/σ).
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 with q = 1 (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `kappa` ∉ (0, 1], `noise_multiplier` not finite and > 0, `steps` = 0.
///
/// # Examples
/// ```
/// let g = reconbound::accounting::rero::dpsgd::gamma_full_batch(0.1, 1.0, 1).unwrap();
/// assert!((g - 0.389143691645361).abs() < 1e-12);
/// ```
pub fn gamma_full_batch(kappa: f64, noise_multiplier: f64, steps: u64) -> Result<f64> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let steps = check_steps(steps)?;
    if kappa == 1.0 {
        return Ok(1.0);
    }
    let shift = libm::sqrt(steps as f64) / sigma;
    let z = normal::quantile(kappa)? + shift;
    Ok(normal::cdf(z).clamp(kappa, 1.0))
}
