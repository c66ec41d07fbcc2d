//! The Gaussian mechanism in (ε, δ) terms: the classical calibration (valid for ε < 1 only),
//! the exact ("analytic") privacy profile δ(ε) and its inverse ε(δ), and the μ-GDP of T
//! full-batch steps.
//!
//! With sensitivity Δ and noise std s, let μ = Δ/s. The Gaussian mechanism is μ-GDP and its
//! exact privacy profile is (Balle & Wang 2018, Thm 8; Dong, Roth, Su 2019, Cor. 2.13)
//!
//! ```text
//! δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ).
//! ```
//!
//! Both terms become tiny and nearly equal for large ε, so δ is computed as
//! Φ(a)·(−expm1(ln e^ε Φ(b) − ln Φ(a))) with ln Φ from [`crate::math::normal::log_cdf`],
//! which never forms the difference of two rounded tails.

use crate::error::{
    check_non_negative, check_open_unit, check_positive, check_steps, invalid, Error, Result,
};
use crate::math::normal::log_cdf;

const EPS: f64 = f64::EPSILON;

/// Noise std of the classical Gaussian mechanism: s = Δ √(2 ln(1.25/δ)) / ε, rounded upward.
///
/// # Formula
/// s = Δ √(2 ln(1.25/δ)) / ε; the mechanism is then (ε, δ)-DP provided ε < 1.
///
/// # Citations
/// Dwork & Roth 2014, "The algorithmic foundations of differential privacy", Thm A.1;
/// used by Guo et al. 2022 (guo2022-bounding-reconstruction-fil-rdp.txt), Alg. 1, line 4.
///
/// # Errors
/// `epsilon` not in (0, 1) (the theorem does not hold for ε ≥ 1); `delta` ∉ (0, 1);
/// `sensitivity` not finite and > 0; [`Error::Numerical`] on overflow.
///
/// # Examples
/// ```
/// use reconbound::accounting::gaussian::classical_noise_std;
/// let s = classical_noise_std(0.5, 1e-5, 1.0).unwrap();
/// assert!((s - 2.0 * (2.0 * (1.25e5f64).ln()).sqrt()).abs() < 1e-12);
/// assert!(classical_noise_std(1.0, 1e-5, 1.0).is_err());
/// ```
pub fn classical_noise_std(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64> {
    if !(epsilon > 0.0 && epsilon < 1.0) {
        return invalid(
            "epsilon",
            epsilon,
            "in (0, 1) (the classical bound needs epsilon < 1)",
        );
    }
    let delta = check_open_unit("delta", delta)?;
    let d = check_positive("sensitivity", sensitivity)?;
    let s = d * libm::sqrt(2.0 * libm::log(1.25 / delta)) / epsilon;
    crate::error::check_result("classical Gaussian noise std overflows", s + s * 8.0 * EPS)
}

/// Unvalidated δ(ε) for μ > 0, ε ≥ 0 (exact, before rounding).
fn delta_unchecked(epsilon: f64, mu: f64) -> f64 {
    let r = epsilon / mu;
    let a = 0.5 * mu - r;
    let b = -0.5 * mu - r;
    let la = log_cdf(a);
    let lb = epsilon + log_cdf(b);
    if lb >= la || lb.is_nan() || la.is_nan() {
        return 0.0;
    }
    libm::exp(la) * -libm::expm1(lb - la)
}

/// Exact δ(ε) of the Gaussian mechanism with μ = sensitivity / noise std.
///
/// # Formula
/// δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), computed in log space without cancellation and
/// rounded upward; a δ below the smallest normal `f64` is returned as `f64::MIN_POSITIVE`
/// (still an upper bound).
///
/// # Citations
/// Balle & Wang 2018, "Improving the Gaussian mechanism for differential privacy", Thm 8;
/// Dong, Roth, Su 2019, "Gaussian differential privacy", Cor. 2.13.
///
/// # Errors
/// `epsilon` not finite and ≥ 0; `mu` not finite and > 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::gaussian::analytic_delta;
/// let d = analytic_delta(1.0, 0.5).unwrap();
/// assert!((d / 0.006829594983114591 - 1.0).abs() < 1e-12);
/// ```
pub fn analytic_delta(epsilon: f64, mu: f64) -> Result<f64> {
    let e = check_non_negative("epsilon", epsilon)?;
    let mu = check_positive("mu", mu)?;
    let d = delta_unchecked(e, mu);
    if d.is_nan() {
        return Err(Error::Numerical {
            what: "analytic Gaussian delta",
            value: d,
        });
    }
    Ok((d + d * 16.0 * EPS).clamp(f64::MIN_POSITIVE, 1.0))
}

/// Smallest ε ≥ 0 with δ(ε) ≤ `delta` for the Gaussian mechanism with μ = sensitivity / std
/// (the exact ε of the mechanism), rounded upward.
///
/// # Formula
/// Root of ε ↦ δ(ε) − δ (δ(ε) is decreasing) by bisection to relative 10⁻¹⁴; the upper end,
/// which satisfies δ(ε) ≤ δ, is returned. 0 if δ(0) ≤ δ.
///
/// # Citations
/// Balle & Wang 2018, Thm 8 and Alg. 1 (analytic Gaussian mechanism).
///
/// # Errors
/// `delta` ∉ (0, 1); `mu` not finite and > 0; [`Error::NotConverged`] if no ε ≤ 1e300
/// reaches δ (cannot happen for finite μ).
///
/// # Examples
/// ```
/// use reconbound::accounting::gaussian::analytic_epsilon;
/// // σ = 1, one full-batch step, δ = 1e-5 (dp_accounting's test value 4.377178).
/// let e = analytic_epsilon(1e-5, 1.0).unwrap();
/// assert!((e - 4.377178).abs() < 1e-6);
/// ```
pub fn analytic_epsilon(delta: f64, mu: f64) -> Result<f64> {
    let delta = check_open_unit("delta", delta)?;
    let mu = check_positive("mu", mu)?;
    if delta_unchecked(0.0, mu) <= delta {
        return Ok(0.0);
    }
    let mut lo = 0.0f64;
    let mut hi = 1.0f64;
    while delta_unchecked(hi, mu) > delta {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return Err(Error::NotConverged {
                what: "analytic Gaussian epsilon: no bracket",
                value: hi,
            });
        }
    }
    for _ in 0..2000 {
        if hi - lo <= 1e-14 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if delta_unchecked(mid, mu) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi + hi * 4.0 * EPS)
}

/// μ of T full-batch steps of the Gaussian mechanism with noise multiplier σ (sensitivity 1):
/// the composition is μ-GDP with μ = √T/σ.
///
/// # Formula
/// μ = √T / σ (rounded upward).
///
/// # Citations
/// Dong, Roth, Su 2019, Cor. 3.3 (composition of Gaussian DP); Hayes et al. 2023
/// (hayes2023-rero-dpsgd-appendix.txt), full-batch case.
///
/// # Errors
/// `noise_multiplier` not finite and > 0; `steps` = 0; [`Error::Numerical`] on overflow.
///
/// # Examples
/// ```
/// use reconbound::accounting::gaussian::full_batch_mu;
/// assert!((full_batch_mu(2.0, 16).unwrap() - 2.0).abs() < 1e-14);
/// ```
pub fn full_batch_mu(noise_multiplier: f64, steps: u64) -> Result<f64> {
    let s = check_positive("noise_multiplier", noise_multiplier)?;
    let t = check_steps(steps)? as f64;
    let mu = libm::sqrt(t) / s;
    crate::error::check_result("full-batch mu overflows", mu + mu * 4.0 * EPS)
}

/// Exact ε of T full-batch Gaussian steps (noise multiplier σ, sensitivity 1) at `delta`.
///
/// # Formula
/// ε = [`analytic_epsilon`](δ, √T/σ).
///
/// # Citations
/// Dong, Roth, Su 2019, Cor. 2.13 and 3.3; Balle & Wang 2018, Thm 8.
///
/// # Errors
/// As [`full_batch_mu`] and [`analytic_epsilon`].
///
/// # Examples
/// ```
/// use reconbound::accounting::gaussian::full_batch_epsilon;
/// let e = full_batch_epsilon(1.0, 1, 1e-5).unwrap();
/// assert!((e - 4.377178).abs() < 1e-6);
/// ```
pub fn full_batch_epsilon(noise_multiplier: f64, steps: u64, delta: f64) -> Result<f64> {
    let mu = full_batch_mu(noise_multiplier, steps)?;
    analytic_epsilon(delta, mu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_is_decreasing_and_in_unit_interval() {
        for &mu in &[0.1, 1.0, 5.0] {
            let mut prev = 1.0;
            for i in 0..60 {
                let d = analytic_delta(i as f64 * 0.5, mu).unwrap();
                assert!(d <= prev && d > 0.0, "mu={mu} eps={}", i as f64 * 0.5);
                prev = d;
            }
        }
    }

    #[test]
    fn epsilon_inverts_delta() {
        for &(delta, mu) in &[(1e-5, 1.0), (1e-3, 0.3), (1e-10, 4.0)] {
            let e = analytic_epsilon(delta, mu).unwrap();
            assert!(delta_unchecked(e, mu) <= delta);
            assert!(delta_unchecked(e * (1.0 - 1e-10), mu) > delta);
        }
    }

    #[test]
    fn bad_inputs_name_the_parameter() {
        assert!(matches!(
            analytic_delta(f64::NAN, 1.0),
            Err(Error::InvalidParameter {
                name: "epsilon",
                ..
            })
        ));
        assert!(matches!(
            analytic_delta(1.0, 0.0),
            Err(Error::InvalidParameter { name: "mu", .. })
        ));
        assert!(matches!(
            analytic_epsilon(1.0, 1.0),
            Err(Error::InvalidParameter { name: "delta", .. })
        ));
        assert!(matches!(
            classical_noise_std(1.5, 1e-5, 1.0),
            Err(Error::InvalidParameter {
                name: "epsilon",
                ..
            })
        ));
        assert!(matches!(
            full_batch_mu(-1.0, 1),
            Err(Error::InvalidParameter {
                name: "noise_multiplier",
                ..
            })
        ));
        assert!(matches!(
            full_batch_mu(1.0, 0),
            Err(Error::InvalidCount { name: "steps", .. })
        ));
    }
}
