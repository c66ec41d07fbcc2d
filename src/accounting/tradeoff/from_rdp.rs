//! The optimal conversion of an RDP curve to a trade-off curve (Riess, Gomez, du Pin Calmon,
//! Schnabel & Kaissis 2026, arXiv 2602.04562).
//!
//! # The conversion
//! Let a test φ of P against Q have type-I error x = E_P\[φ\] and type-II error
//! y = 1 − E_Q\[φ\]. Post-processing by φ maps (P, Q) to (Bern(x), Bern(1 − y)), and Rényi
//! divergences do not grow under post-processing, so an (a, ρ)-RDP guarantee in both
//! directions gives
//!
//! g₁(x, y) = ln[(1 − x)^{1−a} y^a + x^{1−a} (1 − y)^a] ≤ (a − 1)ρ   (D_a(Q‖P) ≤ ρ),
//! g₂(x, y) = ln[y^{1−a} (1 − x)^a + (1 − y)^{1−a} x^a] ≤ (a − 1)ρ   (D_a(P‖Q) ≤ ρ).
//!
//! Both vanish at y = 1 − x (the blind test) and grow as y moves below 1 − x (a Rényi
//! divergence of two Bernoulli laws grows with the distance between their parameters on each
//! side of equality), so for y ∈ [0, 1 − x] the set where both hold is an interval
//! [y*_a(x), 1 − x], and every test at level x has y ≥ y*_a(x): f(x) ≥ y*_a(x). The
//! curve the RDP guarantee certifies is the best over the orders, max_a y*_a(x). It is the
//! tightest the RDP curve allows (a pair of two-point laws attains it), hence never looser
//! than Balle et al.'s γ ≤ (κ e^ε)^{(a−1)/a}, which is the first inequality alone with the
//! second term dropped.
//!
//! # Certification
//! y*_a(x) is located by bisection on [0, 1 − x]. A point is declared infeasible only when
//! g₁ or g₂, computed in log-sum-exp form, exceeds (a − 1)ρ by more than its rounding error
//! (a few ulps of the terms, bounded by `SLACK` relative plus an absolute 1e-300 floor);
//! the bisection keeps an infeasible `lower` and a not-provably-infeasible `upper`, so
//! `lower` ≤ y*_a(x) whatever the rounding, and `upper` − `lower` ≤ 2⁻⁶⁰ at the end.

use crate::error::Result;

/// Relative rounding allowance of g₁, g₂ (a dozen operations, each within one ulp, on
/// values of magnitude at most a·|ln x| + a·|ln y|; 1e-12 leaves a wide margin).
const SLACK: f64 = 1e-12;

/// Bisection steps on y ∈ [0, 1]: 2⁻⁶⁴ < 1e-19.
const STEPS: usize = 64;

/// ln(e^u + e^v) without overflow (−∞ terms allowed).
fn log_add(u: f64, v: f64) -> f64 {
    let (hi, lo) = if u >= v { (u, v) } else { (v, u) };
    if hi == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    hi + libm::log1p(libm::exp(lo - hi))
}

/// a·ln(p) with 0·ln 0 = 0 and a·ln 0 = −∞ (a > 0) or +∞ (a < 0).
fn times_log(a: f64, p: f64) -> f64 {
    if p <= 0.0 {
        if a > 0.0 {
            f64::NEG_INFINITY
        } else if a < 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    } else {
        a * libm::log(p)
    }
}

/// Is (x, y) provably outside the region of order `a` with bound `budget` = (a − 1)ρ?
fn provably_infeasible(a: f64, budget: f64, x: f64, y: f64) -> bool {
    let g1 = log_add(
        times_log(1.0 - a, 1.0 - x) + times_log(a, y),
        times_log(1.0 - a, x) + times_log(a, 1.0 - y),
    );
    let g2 = log_add(
        times_log(1.0 - a, y) + times_log(a, 1.0 - x),
        times_log(1.0 - a, 1.0 - y) + times_log(a, x),
    );
    let scale = a * (libm::fabs(libm::log(x)) + libm::fabs(libm::log(1.0 - x)) + 1.0);
    let margin = SLACK * (scale + libm::fabs(budget)) + 1e-300;
    let over = |g: f64| g.is_nan() || g > budget + margin;
    // NaN cannot be decided: treat as feasible (it only moves `upper`, never `lower`)
    (!g1.is_nan() && over(g1)) || (!g2.is_nan() && over(g2))
}

/// The bracket [lower, upper] of y*_a(x) for one order (`x` in (0, 1), `a` > 1, ρ ≥ 0).
fn order_bracket(a: f64, rho: f64, x: f64) -> (f64, f64) {
    let budget = (a - 1.0) * rho;
    let (mut lo, mut hi) = (0.0, 1.0 - x);
    if !provably_infeasible(a, budget, x, lo) {
        return (0.0, 0.0_f64.max(hi).min(hi));
    }
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if provably_infeasible(a, budget, x, mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

/// The trade-off value f(x) an RDP curve certifies: the best over the orders of the
/// smallest type-II error both Rényi inequalities allow at type-I error `x`, as a bracket
/// (lower, upper) of that best value; `lower` is a certified lower bound on the true f(x).
///
/// `orders` > 1 and `rdp` ≥ 0 finite, of equal length (validated by the caller);
/// an order with an infinite or NaN RDP value is skipped.
pub(super) fn beta(orders: &[f64], rdp: &[f64], x: f64) -> (f64, f64) {
    let mut best = (0.0f64, 0.0f64);
    for (&a, &rho) in orders.iter().zip(rdp) {
        if !(rho.is_finite() && a > 1.0 && a.is_finite()) {
            continue;
        }
        let (lo, hi) = order_bracket(a, rho, x);
        if lo > best.0 {
            best.0 = lo;
        }
        if hi > best.1 {
            best.1 = hi;
        }
    }
    best
}

/// Checks an RDP curve given to [`super::TradeoffCurve::from_rdp`].
pub(super) fn check_curve(orders: &[f64], rdp: &[f64]) -> Result<()> {
    crate::accounting::rdp::check_orders_and_out(orders, rdp)?;
    for &a in orders {
        crate::error::check_order("orders", a)?;
    }
    for &r in rdp {
        crate::error::check_non_negative("rdp", r)?;
    }
    Ok(())
}
