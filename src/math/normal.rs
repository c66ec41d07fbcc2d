//! The standard normal distribution: Φ, its upper tail, ln Φ deep in the tail, and Φ⁻¹.
//! (STUB — to be replaced by the accurate implementation with the same signatures.)

use crate::error::{invalid, Result};

/// ln √(2π).
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Standard normal density φ(x).
pub fn pdf(x: f64) -> f64 {
    libm::exp(-0.5 * x * x - LN_SQRT_2PI)
}

/// Φ(x) = P[N(0,1) ≤ x]. NaN in, NaN out.
pub fn cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * core::f64::consts::FRAC_1_SQRT_2)
}

/// Upper tail 1 − Φ(x) = Φ(−x), accurate for large x.
pub fn sf(x: f64) -> f64 {
    cdf(-x)
}

/// ln Φ(x), accurate where Φ(x) underflows (x → −∞) and where Φ(x) rounds to 1.
pub fn log_cdf(x: f64) -> f64 {
    if x > -5.0 {
        libm::log1p(-sf(x))
    } else {
        libm::log(cdf(x))
    }
}

/// ln(1 − Φ(x)) = ln Φ(−x).
pub fn log_sf(x: f64) -> f64 {
    log_cdf(-x)
}

/// Φ⁻¹(p) for p ∈ [0, 1]; Φ⁻¹(0) = −∞, Φ⁻¹(1) = +∞.
///
/// # Errors
/// `p` NaN or outside [0, 1].
pub fn quantile(p: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&p) {
        return invalid("p", p, "in [0, 1]");
    }
    if p == 0.0 {
        return Ok(f64::NEG_INFINITY);
    }
    if p == 1.0 {
        return Ok(f64::INFINITY);
    }
    // bisection stub
    let (mut lo, mut hi) = (-40.0f64, 9.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid
        } else {
            hi = mid
        }
    }
    Ok(0.5 * (lo + hi))
}

/// ln Φ⁻¹-style inverse in log space: the x with ln Φ(x) = `log_p` (`log_p` ≤ 0).
///
/// # Errors
/// `log_p` NaN or > 0.
pub fn quantile_from_log(log_p: f64) -> Result<f64> {
    if log_p.is_nan() || log_p > 0.0 {
        return invalid("log_p", log_p, "<= 0");
    }
    quantile(libm::exp(log_p))
}
