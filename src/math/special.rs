//! Log-space arithmetic, log-gamma and log-binomial coefficients.
//! (STUB — to be replaced by the accurate implementation with the same signatures.)

use crate::error::{invalid, Result};

/// ln(eᵃ + eᵇ) without overflow; −∞ is the identity.
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + libm::log1p(libm::exp(lo - hi))
}

/// ln(eᵃ − eᵇ) for a ≥ b; −∞ when a = b.
pub fn log_sub_exp(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    a + libm::log(-libm::expm1(b - a))
}

/// ln Σ exp(xᵢ) over a slice, without overflow; −∞ for an empty slice.
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY || m.is_infinite() {
        return m;
    }
    let s: f64 = xs.iter().map(|&x| libm::exp(x - m)).sum();
    m + libm::log(s)
}

/// ln Γ(x) for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// ln C(n, k) = ln Γ(n+1) − ln Γ(k+1) − ln Γ(n−k+1) for real n ≥ k ≥ 0.
///
/// # Errors
/// `n` or `k` not finite, negative, or `k > n`.
pub fn ln_binomial(n: f64, k: f64) -> Result<f64> {
    if !(n.is_finite() && n >= 0.0) {
        return invalid("n", n, "finite and >= 0");
    }
    if !(k.is_finite() && k >= 0.0 && k <= n) {
        return invalid("k", k, "finite and in [0, n]");
    }
    Ok(ln_gamma(n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(n - k + 1.0))
}
