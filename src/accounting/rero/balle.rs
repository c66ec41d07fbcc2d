//! Reconstruction robustness from Rényi DP and from pure DP (Balle, Cherubin, Hayes 2022).
//!
//! For a prior π, an error function ℓ and a threshold η, let κ = sup_{z₀} P_{Z~π}[ℓ(Z, z₀) ≤ η]
//! be the baseline success probability (see [`crate::accounting::prior`]). Then:
//!
//! - Thm 2: an (α, ε)-RDP mechanism is (η, γ)-ReRo with γ = (κ e^ε)^{(α−1)/α}. Every order α
//!   for which the mechanism is RDP gives a valid γ, so we take the minimum over the orders
//!   the caller supplies ([`gamma_from_rdp`]).
//! - Cor. 3 (α → ∞): an ε-DP mechanism is (η, κ e^ε)-ReRo ([`gamma_from_dp`]).
//!
//! Everything is computed in log space: ln γ = (1 − 1/α)(ln κ + ε), so ε may be huge (the
//! result is then capped at 1). The result is never below κ: for κ ≤ 1 and ε ≥ 0,
//! (κ e^ε)^{(α−1)/α} ≥ κ^{(α−1)/α} ≥ κ. Returned values are rounded **up** (they are upper
//! bounds on an attack's success probability), clamped to [κ, 1].

use crate::error::{check_non_negative, check_order, check_unit_rate, invalid, Error, Result};

/// The result of [`gamma_from_rdp`]: the ReRo bound and the order that attains it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalleGamma {
    /// Upper bound γ ∈ [κ, 1] on the success probability of any reconstruction attack.
    pub gamma: f64,
    /// The Rényi order α at which the minimum over the supplied orders is attained (the first
    /// such order on ties, e.g. when every order gives γ = 1).
    pub order: f64,
}

/// The result of [`log_gamma_from_rdp`]: ln γ and the minimising order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalleLogGamma {
    /// Upper bound on ln γ, in [ln κ, 0].
    pub log_gamma: f64,
    /// The minimising Rényi order (first on ties).
    pub order: f64,
}

/// Absolute rounding slack (in log units) for a log-space quantity built from terms whose
/// magnitudes sum to `scale`: a handful of roundings, each at most one ulp of the scale.
fn log_slack(scale: f64) -> f64 {
    16.0 * f64::EPSILON * (1.0 + scale)
}

/// exp(x) rounded upward (x ≤ 0 here), so the result is ≥ the exact exponential.
fn exp_up(x: f64) -> f64 {
    let v = libm::exp(x);
    // libm's exp is accurate to < 1 ulp; two relative epsilons cover it.
    v * (1.0 + 4.0 * f64::EPSILON)
}

/// Core of Thm 2 in log space; inputs already validated except the slices.
fn log_gamma_core(log_kappa: f64, orders: &[f64], rdp: &[f64]) -> Result<BalleLogGamma> {
    if orders.is_empty() {
        return Err(Error::InvalidCount {
            name: "orders",
            value: 0,
            expected: "at least one order",
        });
    }
    if orders.len() != rdp.len() {
        return Err(Error::Inconsistent {
            what: "orders and rdp must have the same length (value: rdp length)",
            value: rdp.len() as f64,
        });
    }
    let mut best: Option<BalleLogGamma> = None;
    for (&alpha, &eps) in orders.iter().zip(rdp.iter()) {
        let alpha = check_order("orders", alpha)?;
        let eps = check_non_negative("rdp", eps)?;
        let sum = log_kappa + eps;
        let lg = if sum >= 0.0 {
            0.0
        } else {
            let factor = 1.0 - 1.0 / alpha;
            let raw = factor * sum;
            // Rounding slack: the sum (|ln κ| + ε), the factor and the product.
            let up = raw + log_slack(libm::fabs(log_kappa) + eps);
            up.clamp(log_kappa, 0.0)
        };
        match best {
            Some(b) if b.log_gamma <= lg => {}
            _ => {
                best = Some(BalleLogGamma {
                    log_gamma: lg,
                    order: alpha,
                })
            }
        }
    }
    best.ok_or(Error::InvalidCount {
        name: "orders",
        value: 0,
        expected: "at least one order",
    })
}

/// ReRo bound γ from (α, ε)-RDP at several orders (Balle et al. 2022, Thm 2), minimised over
/// the orders.
///
/// # Formula
/// γ = min_k (κ e^{ε_k})^{(α_k−1)/α_k}, computed as exp(min_k (1 − 1/α_k)(ln κ + ε_k)), capped
/// at 1 (any order with κ e^{ε_k} ≥ 1 gives 1) and never below κ. Rounded up.
///
/// # Citations
/// Balle, Cherubin, Hayes, "Reconstructing Training Data with Informed Adversaries", IEEE S&P
/// 2022, Def. 2 (ReRo) and Thm 2 (balle2022-informed-adversaries-excerpt.txt).
///
/// # Errors
/// - `kappa` ∉ (0, 1];
/// - `orders` empty, or an order not finite and > 1;
/// - `rdp` value NaN, infinite or negative;
/// - `orders` and `rdp` of different lengths ([`Error::Inconsistent`]).
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::balle::gamma_from_rdp;
/// // Gaussian mechanism, sensitivity 1, σ = 2: RDP α/8 at order α.
/// let orders = [2.0, 4.0, 8.0, 16.0];
/// let rdp: Vec<f64> = orders.iter().map(|a| a / 8.0).collect();
/// let g = gamma_from_rdp(0.01, &orders, &rdp).unwrap();
/// assert!(g.gamma >= 0.01 && g.gamma < 1.0);
/// // (1 − 1/α)(ln 0.01 + α/8) is smallest at α = 8 among these orders.
/// assert_eq!(g.order, 8.0);
/// ```
pub fn gamma_from_rdp(kappa: f64, orders: &[f64], rdp: &[f64]) -> Result<BalleGamma> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let log_kappa = libm::log(kappa);
    let lg = log_gamma_core(log_kappa, orders, rdp)?;
    let gamma = exp_up(lg.log_gamma).clamp(kappa, 1.0);
    Ok(BalleGamma {
        gamma,
        order: lg.order,
    })
}

/// Like [`gamma_from_rdp`] but with κ and γ in log space, for priors whose κ underflows `f64`
/// (e.g. the ℓ∞-ball baseline of [`crate::accounting::prior::log_kappa_linf_ball`]).
///
/// # Formula
/// ln γ = min_k (1 − 1/α_k)(ln κ + ε_k), capped at 0 and never below ln κ; rounded up.
///
/// # Citations
/// Balle, Cherubin, Hayes 2022, Thm 2 (balle2022-informed-adversaries-excerpt.txt).
///
/// # Errors
/// - `log_kappa` NaN, +∞ or −∞ or > 0;
/// - `orders` empty or an order not finite and > 1; `rdp` value not finite and ≥ 0;
/// - `orders` and `rdp` of different lengths.
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::balle::log_gamma_from_rdp;
/// let g = log_gamma_from_rdp(-1000.0, &[2.0], &[10.0]).unwrap();
/// assert!((g.log_gamma - (-495.0)).abs() < 1e-9);
/// ```
pub fn log_gamma_from_rdp(log_kappa: f64, orders: &[f64], rdp: &[f64]) -> Result<BalleLogGamma> {
    if !(log_kappa.is_finite() && log_kappa <= 0.0) {
        return invalid("log_kappa", log_kappa, "finite and <= 0");
    }
    log_gamma_core(log_kappa, orders, rdp)
}

/// ReRo bound γ from pure ε-DP (Balle et al. 2022, Cor. 3).
///
/// # Formula
/// γ = min(1, κ e^ε), computed as exp(min(0, ln κ + ε)), rounded up, never below κ.
///
/// # Citations
/// Balle, Cherubin, Hayes 2022, Cor. 3 (Thm 2 with α → ∞)
/// (balle2022-informed-adversaries-excerpt.txt).
///
/// # Errors
/// `kappa` ∉ (0, 1]; `epsilon` NaN, infinite or negative.
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::balle::gamma_from_dp;
/// let g = gamma_from_dp(0.01, 1.0).unwrap();
/// assert!((g - 0.01 * 1.0f64.exp()).abs() < 1e-15);
/// assert_eq!(gamma_from_dp(0.01, 1e6).unwrap(), 1.0);
/// ```
pub fn gamma_from_dp(kappa: f64, epsilon: f64) -> Result<f64> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let eps = check_non_negative("epsilon", epsilon)?;
    if eps == 0.0 {
        return Ok(kappa);
    }
    let log_kappa = libm::log(kappa);
    let sum = log_kappa + eps;
    if sum >= 0.0 {
        return Ok(1.0);
    }
    let lg = sum + log_slack(libm::fabs(log_kappa) + eps);
    Ok(exp_up(lg.min(0.0)).clamp(kappa, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balle22_thm2_matches_closed_form_at_single_order() {
        // (0.1 e^1)^(1/2) = 0.52137...; tolerance 1e-13 relative covers the upward rounding
        // slack 16 ε (1 + |ln κ| + ε) ≈ 1.5e-14 in log space plus 4 ε.
        let g = gamma_from_rdp(0.1, &[2.0], &[1.0]).unwrap();
        let exact = libm::sqrt(0.1 * libm::exp(1.0));
        assert!(
            g.gamma >= exact && g.gamma <= exact * (1.0 + 1e-13),
            "{}",
            g.gamma
        );
        assert_eq!(g.order, 2.0);
    }

    #[test]
    fn balle22_thm2_picks_minimising_order() {
        // Gaussian RDP α/(2σ²) with σ = 3, κ = 1e-3: (α−1)/α (ln κ + α/18) is minimised near
        // α = sqrt(18·|ln κ|)... check by brute force over the same orders.
        let orders = [1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 40.0];
        let rdp: Vec<f64> = orders.iter().map(|a| a / 18.0).collect();
        let g = gamma_from_rdp(1e-3, &orders, &rdp).unwrap();
        let mut best = (f64::INFINITY, 0.0);
        for (&a, &e) in orders.iter().zip(&rdp) {
            let v = libm::pow(1e-3 * libm::exp(e), (a - 1.0) / a);
            if v < best.0 {
                best = (v, a);
            }
        }
        assert_eq!(g.order, best.1);
        assert!(g.gamma >= best.0 && g.gamma <= best.0 * (1.0 + 1e-13));
    }

    #[test]
    fn balle22_cor3_caps_and_floors() {
        assert_eq!(gamma_from_dp(0.5, 10.0).unwrap(), 1.0);
        assert_eq!(gamma_from_dp(0.5, 0.0).unwrap(), 0.5);
        assert_eq!(gamma_from_dp(1.0, 0.0).unwrap(), 1.0);
        let g = gamma_from_rdp(0.2, &[2.0, 3.0], &[1e6, 1e6]).unwrap();
        assert_eq!(g.gamma, 1.0);
        assert_eq!(g.order, 2.0);
        // rdp = 0 gives γ = κ^{(α−1)/α} ≥ κ.
        let g = gamma_from_rdp(0.25, &[2.0], &[0.0]).unwrap();
        assert!(g.gamma >= 0.5 && g.gamma < 0.5 * (1.0 + 1e-13));
    }

    #[test]
    fn bad_inputs_name_the_parameter() {
        let name = |e: Error| match e {
            Error::InvalidParameter { name, .. } | Error::InvalidCount { name, .. } => name,
            Error::Inconsistent { .. } => "inconsistent",
            _ => "other",
        };
        for k in [f64::NAN, 0.0, -0.1, 1.5, f64::INFINITY] {
            assert_eq!(
                name(gamma_from_rdp(k, &[2.0], &[1.0]).unwrap_err()),
                "kappa"
            );
            assert_eq!(name(gamma_from_dp(k, 1.0).unwrap_err()), "kappa");
        }
        for a in [f64::NAN, 1.0, 0.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                name(gamma_from_rdp(0.1, &[a], &[1.0]).unwrap_err()),
                "orders"
            );
        }
        for e in [f64::NAN, -1.0, f64::INFINITY] {
            assert_eq!(name(gamma_from_rdp(0.1, &[2.0], &[e]).unwrap_err()), "rdp");
            assert_eq!(name(gamma_from_dp(0.1, e).unwrap_err()), "epsilon");
        }
        assert_eq!(name(gamma_from_rdp(0.1, &[], &[]).unwrap_err()), "orders");
        assert_eq!(
            name(gamma_from_rdp(0.1, &[2.0, 3.0], &[1.0]).unwrap_err()),
            "inconsistent"
        );
        for l in [f64::NAN, 0.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                name(log_gamma_from_rdp(l, &[2.0], &[1.0]).unwrap_err()),
                "log_kappa"
            );
        }
    }

    #[test]
    fn log_space_handles_tiny_kappa() {
        // κ = e^{-2000} underflows f64; ln γ at α = 2 with ε = 100 is (−2000 + 100)/2.
        let g = log_gamma_from_rdp(-2000.0, &[2.0, 1e6], &[100.0, 1e9]).unwrap();
        assert!((g.log_gamma + 950.0).abs() < 1e-9);
        assert_eq!(g.order, 2.0);
    }
}
