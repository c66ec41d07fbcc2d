//! The Fano bound of Guo et al. 2022b on reconstruction from a discrete prior, as compared in
//! Hayes, Mahloujifar, Balle 2023, App. H (Table 2).
//!
//! A target is drawn from a prior π over m points and the mechanism releases w. Any attack's
//! error probability t = 1 − P\[success\] satisfies Fano's inequality
//! H(π | w) ≤ h(t) + t ln(m − 1), with H(π | w) = H(π) − I(π; w) and h the binary entropy.
//! So t is at least the smallest root t* of
//!
//! f(t) = H(π) − I + t ln t + (1 − t) ln(1 − t) − t ln(m − 1),
//!
//! for any upper bound I ≥ I(π; w), and success ≤ 1 − t*. The *advantage* (Hayes Eq. 4) is
//! (success − p_max)/(1 − p_max) with p_max the largest prior weight.
//!
//! For the Gaussian mechanism with sensitivity Δ and noise std σ (in the same units, e.g. the
//! noise multiplier with Δ in units of the clipping norm) Guo et al. bound
//! I ≤ −Σ_i p_i ln(p_i + (1 − p_i) e^{−Δ²/(2σ²)}) ([`fano_closed_form`],
//! [`fano_closed_form_weighted`]). They also estimate I by Monte Carlo for m orthonormal means
//! ([`fano_monte_carlo`]); that estimate is **not** a certified bound.
//!
//! Rounding: H is rounded down, I up, and t* down, so the success bound is rounded up.

use crate::error::{check_count, check_non_negative, check_positive, Error, Result};
use crate::math::root::brent;
use crate::math::special::log_add_exp;

/// A Fano bound on reconstruction success.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FanoBound {
    /// Upper bound on the probability that any attack identifies the target, in [p_max, 1].
    pub success_bound: f64,
    /// The corresponding advantage (success − p_max)/(1 − p_max) ∈ [0, 1] (Hayes Eq. 4).
    pub advantage: f64,
    /// The mutual information (nats) used: an upper bound for the closed forms, a Monte Carlo
    /// estimate for [`fano_monte_carlo`].
    pub mutual_information: f64,
}

/// Largest prior size accepted by [`fano_monte_carlo`] (each sample costs m Gaussian draws).
pub const MONTE_CARLO_MAX_PRIOR_SIZE: u64 = 1 << 20;

/// x ln x with 0 ln 0 = 0.
fn xlogx(x: f64) -> f64 {
    if x <= 0.0 {
        0.0
    } else {
        x * libm::log(x)
    }
}

/// ln(p + (1 − p) e^{−x}) for p ∈ (0, 1], x ≥ 0, accurately in both regimes.
fn ln_mix(p: f64, x: f64) -> f64 {
    if x <= 1.0 {
        // ln(1 + (1 − p)(e^{−x} − 1)), argument in (−1, 0].
        libm::log1p((1.0 - p) * libm::expm1(-x))
    } else {
        log_add_exp(libm::log(p), libm::log1p(-p) - x)
    }
}

/// Fano's bound from the prior entropy `h` (rounded down), the mutual information `mi`
/// (rounded up), the prior size `m` and p_max.
fn fano_core(h: f64, mi: f64, m: f64, p_max: f64) -> Result<FanoBound> {
    let ln_m1 = libm::log(m - 1.0);
    let f = |t: f64| h - mi + xlogx(t) + xlogx(1.0 - t) - t * ln_m1;
    // Evaluation error of f: a few ulps of each term's magnitude.
    let margin = 64.0 * f64::EPSILON * (1.0 + h + mi + ln_m1 + 1.0);
    let finish = |t: f64| -> Result<FanoBound> {
        let success = (1.0 - t).clamp(p_max, 1.0);
        // Round the advantage up.
        let adv = if success >= 1.0 {
            1.0
        } else {
            ((success - p_max) / (1.0 - p_max) * (1.0 + 4.0 * f64::EPSILON)).clamp(0.0, 1.0)
        };
        Ok(FanoBound {
            success_bound: success,
            advantage: adv,
            mutual_information: mi,
        })
    };
    // f(0) = H − I. If it is (numerically) ≤ 0 the only certified error bound is t = 0.
    if f(0.0) <= margin {
        return finish(0.0);
    }
    let b = (m - 1.0) / m;
    // f is convex on [0, 1] with f(0) > 0; f(b) = H − ln m − I ≤ 0 (H ≤ ln m, I ≥ 0), so
    // {f ≤ 0} = [t*, t₂] with t₂ ≥ b and the smallest root t* lies in (0, b].
    let fb = f(b);
    let root = if fb >= 0.0 {
        // Only when f(b) rounds to ≥ 0 (I ≈ 0 with a uniform prior): t* = b up to rounding.
        b
    } else {
        brent(f, 0.0, b, 1e-15, 400)?
    };
    // Certify a lower bound on t*: step down until f(t) > margin. Any t < b with f(t) > 0 lies
    // left of {f ≤ 0} (convexity), hence t ≤ t*.
    let mut step = 1e-13;
    let mut t = root - step;
    let mut iters = 0;
    while t > 0.0 && f(t) <= margin {
        step *= 2.0;
        t = root - step;
        iters += 1;
        if iters > 200 {
            return Err(Error::NotConverged {
                what: "Fano bound: certifying the root",
                value: t,
            });
        }
    }
    finish(t.max(0.0))
}

/// The closed-form mutual-information bound for a Gaussian mechanism, Σ over the prior.
fn mi_bound<I: Iterator<Item = f64>>(weights: I, x: f64) -> Result<f64> {
    let mut mi = 0.0;
    let mut n = 0.0;
    for p in weights {
        if p > 0.0 {
            mi -= p * ln_mix(p, x);
        }
        n += 1.0;
    }
    // Round up: relative error of each term ~ few ulps; n terms summed.
    let mi = mi * (1.0 + (8.0 + n) * 2.0 * f64::EPSILON) + f64::MIN_POSITIVE;
    crate::error::check_result("Fano mutual information bound", mi)
}

/// Validate σ and Δ², return x = Δ²/(2σ²) (may be +∞ for tiny σ: then e^{−x} = 0).
fn exponent(noise_multiplier: f64, sensitivity_sq: f64) -> Result<f64> {
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let d2 = check_positive("sensitivity_sq", sensitivity_sq)?;
    Ok(d2 / (2.0 * sigma * sigma))
}

/// Fano bound for a uniform prior of size m and the Gaussian mechanism, with Guo et al.'s
/// closed-form mutual-information bound.
///
/// # Formula
/// I = −ln(1/m + (1 − 1/m) e^{−Δ²/(2σ²)}) (the uniform case of
/// I ≤ −Σ_i p_i ln(p_i + (1 − p_i) e^{−Δ²/(2σ²)})), H = ln m; t* = smallest t ∈ [0, (m−1)/m]
/// with H − I + t ln t + (1 − t) ln(1 − t) − t ln(m − 1) ≤ 0; success ≤ 1 − t*,
/// advantage = (success − 1/m)/(1 − 1/m). Edge cases: I ≥ H gives success 1.
/// `noise_multiplier` σ and `sensitivity_sq` Δ² are in the same units (Table 2: Δ² = 2, the
/// replace-one sensitivity between orthonormal points, one full-batch step).
///
/// # Citations
/// Guo, Sablayrolles, Sanjabi 2022b (Fano bound), as stated in Hayes, Mahloujifar, Balle 2023,
/// App. H, Eq. (4) (advantage), Eq. (5) (Fano condition), Table 2
/// (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `prior_size` < 2; `noise_multiplier` or `sensitivity_sq` not finite and > 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::fano::fano_closed_form;
/// // Hayes et al. Table 2, prior size 10, σ = 1: advantage 0.593.
/// let b = fano_closed_form(10, 1.0, 2.0).unwrap();
/// assert!((b.advantage - 0.593).abs() < 5e-4);
/// ```
pub fn fano_closed_form(
    prior_size: u64,
    noise_multiplier: f64,
    sensitivity_sq: f64,
) -> Result<FanoBound> {
    let m = check_count("prior_size", prior_size, 2, ">= 2")? as f64;
    let x = exponent(noise_multiplier, sensitivity_sq)?;
    let p = 1.0 / m;
    // Uniform: Σ_i p ln(...) = ln(...); one term, rounded up.
    let mi = (-ln_mix(p, x)) * (1.0 + 16.0 * f64::EPSILON) + f64::MIN_POSITIVE;
    let mi = crate::error::check_result("Fano mutual information bound", mi)?;
    let h = libm::log(m) * (1.0 - 4.0 * f64::EPSILON);
    fano_core(h, mi, m, p)
}

/// Fano bound for a uniform prior of size m from a given upper bound on the mutual
/// information (e.g. an RDP ε, since I(π; w) ≤ ε for an (α, ε)-RDP mechanism).
///
/// # Formula
/// As [`fano_closed_form`] with I = `mutual_information`.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, App. H, Eq. (5) (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `prior_size` < 2; `mutual_information` NaN, infinite or negative.
///
/// # Examples
/// ```
/// use reconbound::accounting::fano::fano_from_mutual_information;
/// let b = fano_from_mutual_information(10, 0.0).unwrap();
/// assert!(b.advantage < 1e-6);
/// assert_eq!(fano_from_mutual_information(10, 5.0).unwrap().success_bound, 1.0);
/// ```
pub fn fano_from_mutual_information(prior_size: u64, mutual_information: f64) -> Result<FanoBound> {
    let m = check_count("prior_size", prior_size, 2, ">= 2")? as f64;
    let mi = check_non_negative("mutual_information", mutual_information)?;
    let h = libm::log(m) * (1.0 - 4.0 * f64::EPSILON);
    fano_core(h, mi, m, 1.0 / m)
}

/// Fano bound for a weighted prior and the Gaussian mechanism (Guo et al.'s closed form).
///
/// # Formula
/// I = −Σ_i p_i ln(p_i + (1 − p_i) e^{−Δ²/(2σ²)}), H = −Σ_i p_i ln p_i, m = number of weights;
/// t* and the success bound as in [`fano_closed_form`]; the success bound is at least p_max;
/// advantage = (success − p_max)/(1 − p_max). Weights as in
/// [`crate::accounting::prior::kappa_weighted`] (finite, ≥ 0, sum 1 within 1e-9; they are
/// renormalised).
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, App. H, Eqs. (4)–(5) (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// Fewer than two weights (`prior_size`), a weight not finite and ≥ 0 (`weights`), weights
/// not summing to 1 or a point mass (p_max = 1, advantage undefined) ([`Error::Inconsistent`]);
/// `noise_multiplier` or `sensitivity_sq` not finite and > 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::fano::{fano_closed_form, fano_closed_form_weighted};
/// let w = [0.25; 4];
/// let a = fano_closed_form_weighted(&w, 1.0, 2.0).unwrap();
/// let b = fano_closed_form(4, 1.0, 2.0).unwrap();
/// assert!((a.success_bound - b.success_bound).abs() < 1e-9);
/// ```
pub fn fano_closed_form_weighted(
    weights: &[f64],
    noise_multiplier: f64,
    sensitivity_sq: f64,
) -> Result<FanoBound> {
    let (sum, max) = crate::accounting::prior::validate_weights(weights)?;
    let x = exponent(noise_multiplier, sensitivity_sq)?;
    let p_max = max / sum;
    if p_max >= 1.0 {
        return Err(Error::Inconsistent {
            what: "weights: a point-mass prior (p_max = 1) has no advantage to bound",
            value: p_max,
        });
    }
    let m = weights.len() as f64;
    let mi = mi_bound(weights.iter().map(|&w| w / sum), x)?;
    let mut h = 0.0;
    for &w in weights {
        h -= xlogx(w / sum);
    }
    let h = (h * (1.0 - (8.0 + m) * 2.0 * f64::EPSILON)).max(0.0);
    fano_core(h, mi, m, p_max)
}

/// Monte Carlo variant (Guo et al. 2022b; the "MC" rows of Hayes et al. Table 2): estimate
/// I(π; w) for a uniform prior over m orthonormal means and plug it into Fano's condition.
///
/// **Not a certified bound**: the estimate of I carries Monte Carlo error (its standard error
/// is returned), and plugging an estimate into Fano's inequality does not give an upper bound
/// with any stated confidence. Use [`fano_closed_form`] for a bound.
///
/// # Formula
/// Means μ_i = a·e_i ∈ R^m with a² = Δ²/2 (so ‖μ_i − μ_j‖² = Δ²), w = μ_i + σZ. By symmetry
/// condition on i = 0:
/// I = ln m − E[ln(1 + Σ_{j=1}^{m−1} exp(−Δ²/(2σ²) − (a/σ)(Z₀ − Z_j)))], Z ~ N(0, I_m),
/// estimated by the sample mean over `samples` draws; sample k uses
/// `Rng::for_trial(seed, k)`. The standard error is the sample standard deviation / √N.
///
/// # Citations
/// Guo, Sablayrolles, Sanjabi 2022b; Hayes, Mahloujifar, Balle 2023, App. H, Table 2, Fig. 11
/// (100,000 samples there) (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `prior_size` < 2 or > 2^20; `noise_multiplier`, `sensitivity_sq` not finite and > 0;
/// `samples` < 2.
///
/// # Examples
/// ```
/// use reconbound::accounting::fano::fano_monte_carlo;
/// let (b, se) = fano_monte_carlo(10, 1.0, 2.0, 2000, 7).unwrap();
/// assert!((b.advantage - 0.397).abs() < 0.05 && se < 0.02);
/// ```
pub fn fano_monte_carlo(
    prior_size: u64,
    noise_multiplier: f64,
    sensitivity_sq: f64,
    samples: u64,
    seed: u64,
) -> Result<(FanoBound, f64)> {
    let m_int = check_count("prior_size", prior_size, 2, ">= 2")?;
    if m_int > MONTE_CARLO_MAX_PRIOR_SIZE {
        return Err(Error::InvalidCount {
            name: "prior_size",
            value: m_int,
            expected: "<= 2^20 for the Monte Carlo estimate",
        });
    }
    exponent(noise_multiplier, sensitivity_sq)?;
    let n = check_count("samples", samples, 2, ">= 2")?;
    let sigma = noise_multiplier;
    let a_over_sigma = libm::sqrt(sensitivity_sq / 2.0) / sigma;
    let m = m_int as f64;
    // Welford's running mean and variance of v = ln(1 + Σ_j exp(...)).
    let mut mean = 0.0;
    let mut m2 = 0.0;
    for k in 0..n {
        let mut rng = crate::rng::Rng::for_trial(seed, k);
        let z0 = rng.gaussian();
        let mut acc = 0.0; // ln 1
        for _ in 1..m_int {
            let zj = rng.gaussian();
            // −r² − r(z₀ − z_j) = −r(r + z₀ − z_j), r = a/σ (no ∞ − ∞ for tiny σ).
            acc = log_add_exp(acc, -a_over_sigma * (a_over_sigma + z0 - zj));
        }
        let kf = (k + 1) as f64;
        let delta = acc - mean;
        mean += delta / kf;
        m2 += delta * (acc - mean);
    }
    let nf = n as f64;
    let var = m2 / (nf - 1.0);
    let se = libm::sqrt(var.max(0.0) / nf);
    let mi = (libm::log(m) - mean).max(0.0);
    let mi = crate::error::check_result("Monte Carlo mutual information", mi)?;
    let se = crate::error::check_result("Monte Carlo standard error", se)?;
    let h = libm::log(m);
    let bound = fano_core(h, mi, m, 1.0 / m)?;
    Ok((bound, se))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::error::error_name as name;

    #[test]
    fn fano_root_satisfies_condition() {
        // At the returned t the Fano function is still > 0 (t ≤ t*), and just above the
        // unrounded root it is ≤ 0: check t* − t < 1e-9.
        for &(m, s) in &[(10u64, 0.5), (10, 2.0), (100, 1.0), (1000, 3.0), (2, 0.7)] {
            let b = fano_closed_form(m, s, 2.0).unwrap();
            let mf = m as f64;
            let i = b.mutual_information;
            let f =
                |t: f64| libm::log(mf) - i + xlogx(t) + xlogx(1.0 - t) - t * libm::log(mf - 1.0);
            let t = 1.0 - b.success_bound;
            assert!(f(t) > 0.0, "m={m} s={s}");
            assert!(f(t + 1e-9) <= 0.0, "m={m} s={s}");
        }
    }

    #[test]
    fn fano_edge_cases() {
        // σ tiny: I = H, success 1.
        let b = fano_closed_form(10, 1e-3, 2.0).unwrap();
        assert_eq!(b.success_bound, 1.0);
        assert_eq!(b.advantage, 1.0);
        // σ huge: success ≈ 1/m, but never below.
        let b = fano_closed_form(10, 1e4, 2.0).unwrap();
        assert!(
            b.success_bound >= 0.1 && b.success_bound < 0.1 + 1e-3,
            "{b:?}"
        );
        assert!(b.advantage >= 0.0 && b.advantage < 1e-3);
        // I = 0 exactly, uniform: success = 1/m.
        let b = fano_from_mutual_information(4, 0.0).unwrap();
        assert!(
            b.success_bound >= 0.25 && b.success_bound < 0.25 + 1e-6,
            "{b:?}"
        );
        // m = 2 (ln(m − 1) = 0).
        let b = fano_closed_form(2, 1.0, 2.0).unwrap();
        assert!(b.success_bound > 0.5 && b.success_bound < 1.0);
    }

    #[test]
    fn weighted_nonuniform_is_at_least_pmax() {
        let b = fano_closed_form_weighted(&[0.7, 0.1, 0.1, 0.1], 10.0, 2.0).unwrap();
        assert!(b.success_bound >= 0.7 && b.success_bound <= 1.0);
        assert!(b.advantage >= 0.0 && b.advantage <= 1.0);
        assert_eq!(
            name(fano_closed_form_weighted(&[1.0, 0.0], 1.0, 2.0).unwrap_err()),
            "inconsistent"
        );
    }

    #[test]
    fn bad_inputs_name_the_parameter() {
        for s in [f64::NAN, 0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                name(fano_closed_form(10, s, 2.0).unwrap_err()),
                "noise_multiplier"
            );
            assert_eq!(
                name(fano_closed_form(10, 1.0, s).unwrap_err()),
                "sensitivity_sq"
            );
            assert_eq!(
                name(fano_closed_form_weighted(&[0.5, 0.5], s, 2.0).unwrap_err()),
                "noise_multiplier"
            );
            assert_eq!(
                name(fano_monte_carlo(10, s, 2.0, 10, 1).unwrap_err()),
                "noise_multiplier"
            );
            assert_eq!(
                name(fano_monte_carlo(10, 1.0, s, 10, 1).unwrap_err()),
                "sensitivity_sq"
            );
        }
        for m in [0u64, 1] {
            assert_eq!(
                name(fano_closed_form(m, 1.0, 2.0).unwrap_err()),
                "prior_size"
            );
            assert_eq!(
                name(fano_monte_carlo(m, 1.0, 2.0, 10, 1).unwrap_err()),
                "prior_size"
            );
            assert_eq!(
                name(fano_from_mutual_information(m, 1.0).unwrap_err()),
                "prior_size"
            );
        }
        assert_eq!(
            name(fano_monte_carlo(1 << 21, 1.0, 2.0, 10, 1).unwrap_err()),
            "prior_size"
        );
        assert_eq!(
            name(fano_monte_carlo(10, 1.0, 2.0, 1, 1).unwrap_err()),
            "samples"
        );
        for i in [f64::NAN, -1.0, f64::INFINITY] {
            assert_eq!(
                name(fano_from_mutual_information(10, i).unwrap_err()),
                "mutual_information"
            );
        }
        assert_eq!(
            name(fano_closed_form_weighted(&[0.5], 1.0, 2.0).unwrap_err()),
            "prior_size"
        );
        assert_eq!(
            name(fano_closed_form_weighted(&[0.5, f64::NAN], 1.0, 2.0).unwrap_err()),
            "weights"
        );
    }

    #[test]
    fn monte_carlo_is_deterministic_and_extreme_inputs_finite() {
        let a = fano_monte_carlo(10, 1.0, 2.0, 500, 3).unwrap();
        let b = fano_monte_carlo(10, 1.0, 2.0, 500, 3).unwrap();
        assert_eq!(a.0.success_bound.to_bits(), b.0.success_bound.to_bits());
        assert_eq!(a.1.to_bits(), b.1.to_bits());
        for s in [1e-3, 1e4] {
            let (b, se) = fano_monte_carlo(10, s, 2.0, 100, 3).unwrap();
            assert!(b.success_bound.is_finite() && se.is_finite());
            assert!(b.success_bound >= 0.1 && b.success_bound <= 1.0);
        }
    }
}
