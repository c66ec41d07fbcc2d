//! Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 1: a (2, ε)-RDP learner forces every
//! reconstruction attack to have mean squared error (per coordinate) at least
//!
//! E[‖ẑ(h) − z‖²/d] ≥ Σ_i γ_i² diam_i(Z)² / (4d(e^ε − 1)) + ‖μ(z) − z‖²/d,
//!
//! where μ(z) = E[ẑ(h)] is the attack's mean, γ_i = inf_{z∈Z} |∂μ(z)_i/∂z_i| and
//! diam_i(Z) is the extent of Z along coordinate i. For an unbiased attack γ_i = 1 and the
//! bias vanishes: Σ_i diam_i² / (4d(e^ε − 1)).
//!
//! Only the order α = 2 is covered by the theorem (it goes through χ² = e^{D₂} − 1). Results
//! are rounded **down** (they are lower bounds); e^ε − 1 is computed with `expm1`, in log
//! space when ε is large (the bound then underflows towards 0, which is still valid).
//!
//! Tightness (Guo §4): the Gaussian mechanism z + N(0, σ²) on Z = [0, M] is (2, M²/σ²)-RDP and
//! the bound M²/(4(e^{M²/σ²} − 1)) tends to σ²/4 as M → 0, against the true MSE σ².

use crate::error::{check_count, check_non_negative, check_positive, Error, Result};

/// The common final step: (Σ/(4d)) / (e^ε − 1) + bias/d, rounded down.
///
/// `sum_scaled` · `scale²` = Σ_i γ_i² diam_i² (split to avoid overflow), `terms` = number of
/// summed terms (for the rounding slack).
fn finish(
    epsilon: f64,
    sum_scaled: f64,
    scale: f64,
    d: f64,
    bias_sq: f64,
    terms: f64,
) -> Result<f64> {
    let variance = if sum_scaled == 0.0 || scale == 0.0 {
        0.0
    } else {
        // ln(Σ/(4d)) − ln(e^ε − 1)
        let ln_num = libm::log(sum_scaled) + 2.0 * libm::log(scale) - libm::log(4.0 * d);
        let ln_den = if epsilon < 30.0 {
            libm::log(libm::expm1(epsilon))
        } else {
            // ln(e^ε − 1) = ε + ln(1 − e^{−ε})
            epsilon + libm::log1p(-libm::exp(-epsilon))
        };
        let ln_v = ln_num - ln_den;
        // Rounding: ln terms have absolute error ≲ a few ulps of their magnitudes.
        let slack = 16.0 * f64::EPSILON * (1.0 + libm::fabs(ln_num) + libm::fabs(ln_den));
        libm::exp(ln_v - slack)
    };
    let bias_term = bias_sq / d;
    let total = (variance + bias_term) * (1.0 - (terms + 16.0) * 2.0 * f64::EPSILON);
    // A lower bound: when it exceeds the double range (ε ≲ 1e-308), f64::MAX is still one.
    if total == f64::INFINITY {
        return Ok(f64::MAX);
    }
    crate::error::check_result("MSE lower bound", total.max(0.0))
}

/// Σ_i (a_i b_i)² as (sum, scale) with Σ = sum·scale², overflow-free.
fn scaled_sum_sq<F: Fn(usize) -> f64>(n: usize, term: F) -> (f64, f64) {
    let mut scale = 0.0f64;
    for i in 0..n {
        scale = scale.max(libm::fabs(term(i)));
    }
    if scale == 0.0 {
        return (0.0, 0.0);
    }
    let mut s = 0.0;
    for i in 0..n {
        let r = term(i) / scale;
        s += r * r;
    }
    (s, scale)
}

/// Guo et al. Thm 1 for an unbiased attack: the MSE lower bound from (2, ε)-RDP with
/// per-coordinate diameters.
///
/// # Formula
/// MSE ≥ Σ_{i=1}^{d} diam_i² / (4d(e^ε − 1)), d = `diameters.len()`, rounded down.
///
/// # Citations
/// Guo, Karrer, Chaudhuri, van der Maaten, "Bounding Training Data Reconstruction in Private
/// Deep Learning", ICML 2022, Thm 1 (unbiased case) (guo2022-bounding-reconstruction-fil-rdp.txt).
///
/// # Errors
/// `epsilon_order2` not finite and > 0; `diameters` empty or containing a value that is not
/// finite and ≥ 0. A bound beyond the double range is returned as `f64::MAX` (still a lower
/// bound), as by every function of this module.
///
/// # Examples
/// ```
/// use reconbound::accounting::mse::mse_lower_bound_unbiased;
/// // Guo §7.1: [0,1]^784, ε = 2.4937 → MSE ≥ 0.0225.
/// let b = mse_lower_bound_unbiased(2.4937, &[1.0; 784]).unwrap();
/// assert!((b - 0.0225).abs() < 5e-5);
/// ```
pub fn mse_lower_bound_unbiased(epsilon_order2: f64, diameters: &[f64]) -> Result<f64> {
    let eps = check_positive("epsilon_order2", epsilon_order2)?;
    let d = check_count(
        "diameters",
        diameters.len() as u64,
        1,
        "at least one diameter",
    )?;
    for &x in diameters {
        check_non_negative("diameters", x)?;
    }
    let (s, scale) = scaled_sum_sq(diameters.len(), |i| {
        diameters.get(i).copied().unwrap_or(0.0)
    });
    finish(eps, s, scale, d as f64, 0.0, d as f64)
}

/// Guo et al. Thm 1, unbiased, when every coordinate has the same diameter (e.g. [0, 1]^d).
///
/// # Formula
/// MSE ≥ diam² / (4(e^ε − 1)) (the dimension cancels), rounded down.
///
/// # Citations
/// Guo et al. 2022, Thm 1 and §7.1 (guo2022-bounding-reconstruction-fil-rdp.txt).
///
/// # Errors
/// `epsilon_order2` not finite and > 0; `diameter` not finite and ≥ 0; `dimension` = 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::mse::mse_lower_bound_uniform;
/// let b = mse_lower_bound_uniform(2.0, 100.0, 1).unwrap();
/// assert!((b - 1e4 / (4.0 * (2.0f64.exp() - 1.0))).abs() < 1e-9); // ≈ 391 (Guo §4)
/// ```
pub fn mse_lower_bound_uniform(epsilon_order2: f64, diameter: f64, dimension: u64) -> Result<f64> {
    let eps = check_positive("epsilon_order2", epsilon_order2)?;
    let diam = check_non_negative("diameter", diameter)?;
    check_count("dimension", dimension, 1, ">= 1")?;
    // Σ diam²/(4d) = diam²/4: scale = diam, scaled sum = 1 per coordinate → d/d.
    finish(eps, 1.0, diam, 1.0, 0.0, 1.0)
}

/// Guo et al. Thm 1 in general (biased attacks).
///
/// # Formula
/// MSE ≥ Σ_i γ_i² diam_i² / (4d(e^ε − 1)) + ‖μ(z) − z‖²/d, rounded down, with
/// `gammas[i]` = γ_i = inf_z |∂μ(z)_i/∂z_i| (any lower bound on it is valid),
/// `diameters[i]` = diam_i(Z), `squared_bias` = ‖μ(z) − z‖² and d = `diameters.len()`.
///
/// # Citations
/// Guo et al. 2022, Thm 1 (guo2022-bounding-reconstruction-fil-rdp.txt).
///
/// # Errors
/// `epsilon_order2` not finite and > 0; `diameters` empty or a value not finite and ≥ 0;
/// `gammas` value not finite and ≥ 0; `squared_bias` not finite and ≥ 0; `gammas` and
/// `diameters` of different lengths ([`Error::Inconsistent`]).
///
/// # Examples
/// ```
/// use reconbound::accounting::mse::{mse_lower_bound_biased, mse_lower_bound_unbiased};
/// let u = mse_lower_bound_unbiased(1.0, &[1.0, 2.0]).unwrap();
/// let b = mse_lower_bound_biased(1.0, &[1.0, 1.0], &[1.0, 2.0], 0.0).unwrap();
/// assert!((u - b).abs() < 1e-15);
/// ```
pub fn mse_lower_bound_biased(
    epsilon_order2: f64,
    gammas: &[f64],
    diameters: &[f64],
    squared_bias: f64,
) -> Result<f64> {
    let eps = check_positive("epsilon_order2", epsilon_order2)?;
    let d = check_count(
        "diameters",
        diameters.len() as u64,
        1,
        "at least one diameter",
    )?;
    if gammas.len() != diameters.len() {
        return Err(Error::Inconsistent {
            what: "gammas and diameters must have the same length (value: gammas length)",
            value: gammas.len() as f64,
        });
    }
    for &x in diameters {
        check_non_negative("diameters", x)?;
    }
    for &g in gammas {
        check_non_negative("gammas", g)?;
    }
    let bias = check_non_negative("squared_bias", squared_bias)?;
    let term = |i: usize| {
        let g = gammas.get(i).copied().unwrap_or(0.0);
        let dm = diameters.get(i).copied().unwrap_or(0.0);
        // γ·diam may overflow: take the square root of the product of squares' scales.
        if g == 0.0 || dm == 0.0 {
            0.0
        } else {
            libm::exp(libm::log(g) + libm::log(dm))
        }
    };
    // For moderate values use the exact product (log/exp adds rounding).
    let exact = |i: usize| {
        let g = gammas.get(i).copied().unwrap_or(0.0);
        let dm = diameters.get(i).copied().unwrap_or(0.0);
        let p = g * dm;
        if p.is_finite() {
            p
        } else {
            term(i)
        }
    };
    let (s, scale) = scaled_sum_sq(diameters.len(), exact);
    let terms = d as f64 + 4.0;
    finish(eps, s, scale, d as f64, bias, terms)
}

/// (2, ε)-RDP under substitution (replace-one) adjacency from add/remove RDP at orders 3 and 4.
///
/// Guo et al. Thm 1 compares the releases on D ∪ {z} and D ∪ {z′}: its ε is the order-2 RDP
/// between two datasets that differ by a substitution. With P, Q, R the releases on D ∪ {z},
/// D and D ∪ {z′}, Hölder's inequality (Mironov 2017, Prop. 11, p = q = 2) gives
/// D₂(P‖R) ≤ 1.5·D₄(P‖Q) + D₃(Q‖R), and add/remove RDP bounds both terms.
///
/// # Formula
/// ε₂ ≤ 1.5·r₄ + r₃ (rounded up), r_α the add/remove RDP (worse direction) at order α.
///
/// # Citations
/// Mironov 2017, "Rényi differential privacy", Prop. 11 (weak triangle inequality); Guo et al.
/// 2022, Thm 1 and App. B (guo2022-bounding-reconstruction-fil-rdp.txt).
///
/// # Errors
/// `rdp_order3` or `rdp_order4` not finite and ≥ 0; [`crate::Error::Numerical`] on overflow.
///
/// # Examples
/// ```
/// use reconbound::accounting::mse::substitution_rdp_order2;
/// // The Gaussian mechanism with sensitivity 1 and σ = 1: r_α = α/2 under add/remove; the
/// // substitution (sensitivity 2) value is exactly 2·2²/2 = 4; the bound gives 1.5·2 + 1.5 = 4.5.
/// assert!((substitution_rdp_order2(1.5, 2.0).unwrap() - 4.5).abs() < 1e-12);
/// ```
pub fn substitution_rdp_order2(rdp_order3: f64, rdp_order4: f64) -> Result<f64> {
    let r3 = crate::error::check_non_negative("rdp_order3", rdp_order3)?;
    let r4 = crate::error::check_non_negative("rdp_order4", rdp_order4)?;
    let e = (1.5 * r4 + r3) * (1.0 + 4.0 * f64::EPSILON);
    crate::error::check_result("substitution RDP overflows", e)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::error::error_name as name;

    #[test]
    fn guo22_thm1_unbiased_matches_formula() {
        // Σ diam²/(4d(e^ε − 1)) for diam = (1, 2, 3), ε = 0.5; rounded down by < 1e-13 rel.
        let exact = 14.0 / (12.0 * libm::expm1(0.5));
        let b = mse_lower_bound_unbiased(0.5, &[1.0, 2.0, 3.0]).unwrap();
        assert!(b <= exact && b > exact * (1.0 - 1e-13), "{b} {exact}");
    }

    #[test]
    fn guo22_thm1_tightness_example_limit() {
        // Gaussian on [0, M], σ = 1: ε = M²; bound M²/(4(e^{M²} − 1)) → 1/4 as M → 0.
        let m: f64 = 1e-4;
        let b = mse_lower_bound_uniform(m * m, m, 1).unwrap();
        assert!((b - 0.25).abs() < 1e-8, "{b}");
    }

    #[test]
    fn guo22_thm1_biased_adds_bias_and_scales_gamma() {
        let eps = 1.0;
        let base = mse_lower_bound_unbiased(eps, &[2.0, 2.0]).unwrap();
        let b = mse_lower_bound_biased(eps, &[0.5, 0.5], &[2.0, 2.0], 0.6).unwrap();
        let exact = 0.25 * 4.0 * 2.0 / (8.0 * libm::expm1(eps)) + 0.3;
        assert!(b <= exact && b > exact * (1.0 - 1e-13), "{b} {exact}");
        assert!(base > 0.0);
    }

    #[test]
    fn extreme_inputs_are_finite() {
        let b = mse_lower_bound_uniform(1e6, 1.0, 10).unwrap();
        assert!(b.is_finite() && b >= 0.0);
        let b = mse_lower_bound_uniform(1e-300, 1.0, 10).unwrap();
        assert!(b.is_finite() && b > 1e290, "{b}");
        // Σ diam² = 2e300 would overflow a naive sum of squares of 1e200-sized... (1e150 here:
        // the scaled sum keeps it exact); the bound is 2e300/(8(e − 1)) ≈ 1.455e299.
        let b = mse_lower_bound_unbiased(1.0, &[1e150, 1e150]).unwrap();
        let exact = 2e300 / (8.0 * libm::expm1(1.0));
        // Slack: log-space rounding allowance ≈ 16 ε (|ln num| + |ln den|) ≈ 2.4e-12 relative.
        assert!(b <= exact && b > exact * (1.0 - 1e-11), "{b} {exact}");
        // A bound too large for f64 is capped at f64::MAX (still a lower bound), never ∞.
        assert_eq!(
            mse_lower_bound_unbiased(1.0, &[1e200, 1e200]).unwrap(),
            f64::MAX
        );
        assert_eq!(mse_lower_bound_uniform(1e-320, 1.0, 3).unwrap(), f64::MAX);
        let b = mse_lower_bound_biased(800.0, &[1e300], &[1e300], 0.0).unwrap();
        assert!(b.is_finite());
        assert_eq!(mse_lower_bound_unbiased(1.0, &[0.0, 0.0]).unwrap(), 0.0);
    }

    #[test]
    fn bad_inputs_name_the_parameter() {
        for e in [f64::NAN, 0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                name(mse_lower_bound_unbiased(e, &[1.0]).unwrap_err()),
                "epsilon_order2"
            );
            assert_eq!(
                name(mse_lower_bound_uniform(e, 1.0, 1).unwrap_err()),
                "epsilon_order2"
            );
            assert_eq!(
                name(mse_lower_bound_biased(e, &[1.0], &[1.0], 0.0).unwrap_err()),
                "epsilon_order2"
            );
        }
        for x in [f64::NAN, -1.0, f64::INFINITY] {
            assert_eq!(
                name(mse_lower_bound_unbiased(1.0, &[x]).unwrap_err()),
                "diameters"
            );
            assert_eq!(
                name(mse_lower_bound_uniform(1.0, x, 1).unwrap_err()),
                "diameter"
            );
            assert_eq!(
                name(mse_lower_bound_biased(1.0, &[x], &[1.0], 0.0).unwrap_err()),
                "gammas"
            );
            assert_eq!(
                name(mse_lower_bound_biased(1.0, &[1.0], &[1.0], x).unwrap_err()),
                "squared_bias"
            );
        }
        assert_eq!(
            name(mse_lower_bound_unbiased(1.0, &[]).unwrap_err()),
            "diameters"
        );
        assert_eq!(
            name(mse_lower_bound_uniform(1.0, 1.0, 0).unwrap_err()),
            "dimension"
        );
        assert_eq!(
            name(mse_lower_bound_biased(1.0, &[1.0], &[1.0, 2.0], 0.0).unwrap_err()),
            "inconsistent"
        );
    }
}
