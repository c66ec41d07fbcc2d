//! Regularised incomplete beta function, its inverse, and Clopper–Pearson intervals.
//! (STUB — signatures only.)

use crate::error::{invalid, Result};

/// A two-sided or one-sided confidence interval [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
}

/// Regularised incomplete beta I_x(a, b).
///
/// # Errors
/// a, b not finite and > 0; x outside [0, 1].
pub fn beta_inc(a: f64, b: f64, x: f64) -> Result<f64> {
    let _ = (a, b);
    invalid("x", x, "stub")
}

/// Inverse of I_x(a, b) in x.
///
/// # Errors
/// a, b not finite and > 0; p outside [0, 1].
pub fn beta_inc_inv(a: f64, b: f64, p: f64) -> Result<f64> {
    let _ = (a, b);
    invalid("p", p, "stub")
}

/// Clopper–Pearson bounds for `successes` out of `trials`, each one-sided at level
/// `alpha_one_sided`: lower = Beta⁻¹(α; k, n−k+1) (0 if k = 0), upper = Beta⁻¹(1−α; k+1, n−k)
/// (1 if k = n).
///
/// # Errors
/// trials = 0, successes > trials, α ∉ (0, 1).
pub fn clopper_pearson(successes: u64, trials: u64, alpha_one_sided: f64) -> Result<Interval> {
    let _ = (successes, trials);
    invalid("alpha", alpha_one_sided, "stub")
}
