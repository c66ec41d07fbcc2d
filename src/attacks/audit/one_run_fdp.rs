//! The f-DP one-run audit (Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy
//! in One Run", ICML 2025, arXiv 2410.22235): the guesses of a one-run audit — m canaries,
//! each included independently with probability ½, r guesses fixed in number, v of them
//! correct, abstentions on the rest — tested against a claimed **trade-off function** f
//! instead of an (ε, δ) pair. Against the curve of a Gaussian mechanism it gives a larger ε
//! than the (ε, δ) test of Steinke, Nasr & Jagielski 2023 ([`super::epsilon::one_run_epsilon`])
//! for the same guesses, because a curve says more than one of its (ε, δ) points — except
//! near ε = 0, where that test's exact binomial tail is the sharper (see the tests).
//!
//! # The test
//! This is the paper's reconstruction game with abstentions and its recursive bound, the
//! procedure the paper calls `audit_rh_with_cap` ("cap": r ≤ m guesses, not all m). At a
//! level τ start from ρ_v = τ·v/m and η_v = τ·(r − v)/m; for i = v − 1, …, 0 let
//!
//! ```text
//! η_i = max(η_{i+1}, f(1 − ρ_{i+1}))
//! ρ_i = ρ_{i+1} + i/(r − i) · (η_i − η_{i+1})
//! ```
//!
//! and refute the claim "the mechanism is f-DP" at level τ when ρ_0 + η_0 > r/m. (The
//! paper writes f(1 − ·) as the inverse of its "blow-up" function x ↦ 1 − f(x); for a
//! symmetric f the two are the same function.) The paper is not in `../shared/papers/` and
//! only its abstract was readable here, so no theorem or equation numbers are given; the
//! argument below is this crate's own.
//!
//! # Why the recursion is a valid test (proof sketch)
//! Let S be the inclusion vector, O the trained model (the output), G(O) the guesses —
//! exactly r of them, on canaries and with "in"/"out" chosen from O and coins independent
//! of S — and W the number of correct guesses. For each level i let ρ*_i = E[W·1{W ≥ i}]/m
//! and η*_i = E[(r − W)·1{W ≥ i}]/m: the right and the wrong guesses per canary that come
//! from outcomes with at least i right. All outcomes together have ρ*_0 + η*_0 = r/m.
//!
//! 1. *One flip.* Fix a canary I, the vector S and a level i, and let E be the event
//!    "the guess on I is S_I, and W ≥ i + 1" — for fixed S an event of O. Let S^I be S
//!    with S_I flipped: the mechanism's data set with canary I added or removed, a
//!    neighbour. For the same outputs, E reads under S^I as "the guess on I is wrong and
//!    W ≥ i" (the guess that was right is now wrong; W drops by one). The test of P_S
//!    against P_{S^I} that rejects P_S outside E has type-I error 1 − P_S(E) and type-II
//!    error P_{S^I}(E), so P_{S^I}(E) ≥ f(1 − P_S(E)) — in both orders, since S_I may be
//!    "in" or "out": f must bound the trade-off of adding *and* of removing a canary.
//! 2. *Average.* Over I uniform on the m canaries and S uniform (S^I is then uniform
//!    too) the mean of P_S(E) is ρ*_{i+1} and the mean of P_{S^I}(E) is η*_i. f is convex
//!    (every trade-off function is), so by Jensen
//!    `η*_i ≥ f(1 − ρ*_{i+1})` for i = 0, …, r − 1. (★)
//! 3. *The recursion meets (★) at the least cost.* Suppose P[W ≥ v] ≥ τ and compare
//!    (ρ*, η*) with the recursion's (ρ, η) through the surpluses D_i = (ρ*_i + η*_i) −
//!    (ρ_i + η_i) and E_i = ρ*_i − ρ_i. The invariant is D_i ≥ 0 and E_i ≥ (i/r)·D_i.
//!    At i = v: D_v = (r/m)(P[W ≥ v] − τ) ≥ 0 and E_v ≥ (v/r)·D_v (each outcome counted
//!    has at least v of its r guesses right). From i + 1 to i the outcomes with W = i
//!    join with mass p_i, each with i right and r − i wrong: ρ* grows by i·p_i/m and η* by
//!    (r − i)·p_i/m, the recursion's ratio i/(r − i). Since E_{i+1} ≥ 0 and f is
//!    non-increasing, (★) gives η*_i ≥ f(1 − ρ_{i+1}), so η*_i ≥ η_i; solving this for
//!    p_i gives D_i ≥ (r·E_{i+1} − i·D_{i+1})/(r − i) ≥ 0, and as both sides grow in the
//!    ratio i/(r − i), E_i − (i/r)·D_i = E_{i+1} − (i/r)·D_{i+1} ≥ 0. So D_0 ≥ 0:
//!    r/m = ρ*_0 + η*_0 ≥ ρ_0 + η_0. Contrapositive: **ρ_0 + η_0 > r/m implies
//!    P[W ≥ v] < τ.**
//! 4. *A test.* Let v* be the smallest v whose recursion refutes at τ = α. The test
//!    rejects only when W ≥ v*, which by 3 has probability < α. No monotonicity in v is
//!    needed; r must be fixed in advance (the top-k₊/bottom-k₋ rule of
//!    [`super::epsilon::one_run_guesses`] fixes it) and the guesses must not read S.
//!
//! The same comparison, run between two recursions, shows that ρ_0 + η_0 can only grow
//! with τ and with f (pointwise): refutation is monotone in both, so the p-value
//! ([`one_run_fdp_p_value`]) and the largest refuted μ ([`one_run_fdp_mu`]) are well defined
//! by bisection. jax_privacy caps ρ at 1 (`min(·, 1)`); here the recursion stops as soon as
//! ρ + η > r/m, which happens before ρ could pass 1 ≥ r/m, so no cap is needed and the
//! decisions are the same.
//!
//! # Why a lower bound on f keeps the test sound
//! The claimed f enters only through (★), used as η_i = max(η_{i+1}, f(1 − ρ_{i+1})) ≤ η*_i.
//! With any ĝ ≤ f in its place the recursion sets η_i no larger, and step 3 still goes
//! through (it needs η_i ≤ η*_i and ρ_i − ρ_{i+1} ≤ i/(r − i)·(η_i − η_{i+1}), both kept
//! when η and ρ grow less): a lower bound only refutes less. Convexity is needed of f (for
//! Jensen), not of ĝ. The code evaluates ĝ at a point ≥ 1 − ρ (f is non-increasing),
//! rounds every η and ρ down — the starting ρ_v by relatively more than η_v, as the base
//! case needs (r − v)·(ρ_v's shortfall) ≥ v·(η_v's) — and the comparison ρ_0 + η_0 > r/m
//! against refuting, so the rounding, too, only refutes less.
//!
//! # Claims
//! - Any trade-off function, as a closure returning a certified lower bound ĝ(x) ≤ f(x)
//!   for x ∈ [0, 1], where f is convex, non-increasing and below the trade-off of every
//!   pair of neighbouring outputs in both orders: [`one_run_fdp_refutes`],
//!   [`one_run_fdp_p_value`].
//! - μ-GDP, f(x) = Φ(Φ⁻¹(1 − x) − μ): [`one_run_fdp_mu`], the largest μ refuted, and
//!   [`one_run_fdp_epsilon`], the ε at δ of the (ε, δ) Gaussian mechanism it corresponds
//!   to (as jax_privacy's `_epsilon_one_run_fdp`). For fixed δ the Gaussian mechanisms
//!   with exactly (ε, δ) (Balle & Wang 2018) are the μ-GDP ones with μ(ε, δ) increasing in
//!   ε, so δ enters only through that last conversion. It is a lower bound on ε (at
//!   confidence 1 − α) only if the mechanism's curve is Gaussian — for DP-SGD with
//!   subsampling it is not; test the run's own curve instead.
//! - The certified curve of a run, [`TradeoffCurve`]: [`one_run_fdp_curve`] through
//!   [`CurveClaim`]. Gaussian and RDP curves are convex and hold in both orders, and their
//!   `beta(x).lower` is used as it is. The PLD curve's `beta` is the lower envelope of the
//!   add and the remove directions, min(f_add, f_remove), which is in general **not
//!   convex** (where the two cross on the diagonal the envelope has a concave kink; Dong,
//!   Roth & Su 2022 symmetrise with the convex hull); step 2 needs a convex f, so the
//!   claim used is the greatest convex minorant of a step lower bound of the envelope on a
//!   fixed grid ([`CurveClaim`]). If a convex f bounds both orders, so does its inverse
//!   f⁻¹ (the trade-off of the swapped pair is the inverse), so max(f, f⁻¹) is a valid
//!   claim too; [`CurveClaim`] uses it to read f near 1 (where the test evaluates it, at
//!   1 − ρ) from the curve near 0, where a PLD is accurate.

use super::one_run_counts::{check_one_run, OneRunCounts};
use crate::accounting::tradeoff::{Source, TradeoffCurve};
use crate::error::{check_open_unit, Error, Result};
use alloc::vec::Vec;

/// Unit roundoff.
const U: f64 = 0.5 * f64::EPSILON;

/// The smallest level the p-value search goes down to (the p-value is reported as this when
/// even it is refuted).
pub const MIN_P_VALUE: f64 = 1e-300;

/// Relative width at which the bisections on τ and μ stop.
const REL_TOL: f64 = 1e-10;

/// μ below which [`one_run_fdp_mu`] reports 0 (the claim "1e-6-GDP" not refuted).
const MU_FLOOR: f64 = 1e-6;

/// μ past which the doubling in [`one_run_fdp_mu`] gives up (unreachable: at μ = 1024
/// f(1 − ρ) underflows to 0 and nothing is refuted).
const MU_CEIL: f64 = 1024.0;

// ---------------------------------------------------------------------------------------
// The recursion

/// `true` if ρ + η, rounded down, exceeds `cap` (r/m rounded up).
fn exceeds(rho: f64, eta: f64, cap: f64) -> bool {
    (rho + eta).next_down() > cap
}

/// The recursion at level `tau` ∈ (0, 1] for validated counts: `true` if the claim whose
/// lower bound `g` is refuted. Every η and ρ is rounded down (module docs).
pub(super) fn refutes_at<F>(c: OneRunCounts, tau: f64, g: &mut F) -> Result<bool>
where
    F: FnMut(f64) -> Result<f64>,
{
    let v = c.correct;
    if v == 0 {
        return Ok(false);
    }
    let (m, r) = (c.canaries as f64, c.guesses as f64);
    let cap = (r / m).next_up();
    // Both start below their exact values, ρ by relatively more than η (the comparison of
    // the module docs needs ρ's shortfall times (r − v) to cover v times η's).
    let mut eta = tau * (r - v as f64) / m * (1.0 - 4.0 * U);
    let mut rho = tau * v as f64 / m * (1.0 - 1e-12);
    for i in (0..v).rev() {
        if exceeds(rho, eta, cap) {
            return Ok(true);
        }
        // ρ ≤ r/m ≤ 1 here; x ≥ 1 − ρ, so ĝ(x) ≤ f(x) ≤ f(1 − ρ)
        let x = (1.0 - rho).next_up().min(1.0);
        let y = g(x)?;
        if y.is_nan() {
            return Err(Error::Numerical {
                what: "one-run f-DP audit: the trade-off lower bound is NaN",
                value: x,
            });
        }
        let y = y.clamp(0.0, 1.0);
        if y <= eta {
            // η stays, so ρ stays and so does f(1 − ρ): nothing changes any more
            break;
        }
        let kappa = i as f64 / (r - i as f64);
        let step = (y - eta) * (1.0 - 4.0 * U);
        let inc = kappa * step * (1.0 - 8.0 * U);
        rho = (rho + inc).next_down().max(rho);
        eta = y;
    }
    Ok(exceeds(rho, eta, cap))
}

/// The smallest level in [[`MIN_P_VALUE`], 1] at which `g` is refuted (to relative 1e-10,
/// the refuted end), 1 if not even at level 1.
pub(super) fn p_value_of<F>(c: OneRunCounts, g: &mut F) -> Result<f64>
where
    F: FnMut(f64) -> Result<f64>,
{
    if !refutes_at(c, 1.0, g)? {
        return Ok(1.0);
    }
    if refutes_at(c, MIN_P_VALUE, g)? {
        return Ok(MIN_P_VALUE);
    }
    let (mut lo, mut hi) = (MIN_P_VALUE, 1.0f64);
    for _ in 0..200 {
        if hi <= lo * (1.0 + REL_TOL) {
            break;
        }
        let mid = libm::sqrt(lo) * libm::sqrt(hi);
        if !(mid > lo && mid < hi) {
            break;
        }
        if refutes_at(c, mid, g)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

pub(super) fn check_candidates(candidates: u64) -> Result<u64> {
    if candidates == 0 {
        return Err(Error::InvalidCount {
            name: "candidates",
            value: 0,
            expected: ">= 1",
        });
    }
    Ok(candidates)
}

/// Whether one-run guesses refute, at level α, the claim that the mechanism is f-DP, for f
/// given by certified lower bounds.
///
/// # Formula
///
/// The recursion of the module docs at τ = α: ρ_v = αv/m, η_v = α(r − v)/m, then
/// η_i = max(η_{i+1}, ĝ(1 − ρ_{i+1})) and ρ_i = ρ_{i+1} + i/(r − i)·(η_i − η_{i+1}) for
/// i = v − 1, …, 0; refuted iff ρ_0 + η_0 > r/m. If the mechanism is f-DP, the probability
/// of a refutation is below α.
///
/// `f_lower(x)` must return a lower bound ĝ(x) ≤ f(x) for x ∈ [0, 1], where f is convex,
/// non-increasing and below the trade-off function of every pair of neighbouring outputs
/// (canary added, canary removed) in both orders; ĝ itself need not be convex. Negative
/// values count as 0, values above 1 as 1. The counts' r must have been fixed before the
/// guesses were made, and the guesses must not depend on the inclusions.
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One Run", ICML 2025
/// (arXiv 2410.22235): the reconstruction game with abstentions and its recursive bound
/// (`audit_rh_with_cap`); the proof sketch in the module docs.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `alpha` ∉ (0, 1); [`Error::InvalidCount`] `canaries` = 0,
/// `guesses` > `canaries` or ≥ 1e7, `correct` > `guesses`; [`Error::Numerical`] if
/// `f_lower` returns NaN; `f_lower`'s own errors.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_fdp_refutes, OneRunCounts};
/// use reconbound::accounting::tradeoff::TradeoffCurve;
/// // 100 guesses among 1,000 canaries, all correct: 1-GDP is refuted, 3-GDP is not.
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let claim = |mu: f64| {
///     let f = TradeoffCurve::gaussian(mu).unwrap();
///     move |x: f64| Ok(f.beta(x)?.lower)
/// };
/// assert!(one_run_fdp_refutes(c, 0.05, claim(1.0))?);
/// assert!(!one_run_fdp_refutes(c, 0.05, claim(3.0))?);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_refutes<F>(counts: OneRunCounts, alpha: f64, mut f_lower: F) -> Result<bool>
where
    F: FnMut(f64) -> Result<f64>,
{
    let c = check_one_run(counts)?;
    let alpha = check_open_unit("alpha", alpha)?;
    refutes_at(c, alpha, &mut f_lower)
}

/// The p-value of the f-DP one-run test: the smallest level at which the guesses refute
/// the claim that the mechanism is f-DP (f given by certified lower bounds, as in
/// [`one_run_fdp_refutes`]).
///
/// # Formula
///
/// p = inf{τ : the recursion at level τ refutes}; refutation is monotone in τ (module
/// docs), so p is found by bisection on ln τ over [[`MIN_P_VALUE`], 1] to relative 1e-10 and
/// the refuted end is returned (p errs high). 1 if not refuted even at τ = 1;
/// [`MIN_P_VALUE`] if refuted already there. If the mechanism is f-DP, P[p ≤ t] < t for
/// every t. Levels below about 1e-12 are evaluated conservatively (ĝ is taken at 1 − ρ,
/// which rounds), so tiny p-values come out larger than they are.
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, ICML 2025 (arXiv 2410.22235), as
/// [`one_run_fdp_refutes`].
///
/// # Errors
///
/// As [`one_run_fdp_refutes`] (without `alpha`).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_fdp_p_value, OneRunCounts};
/// use reconbound::accounting::tradeoff::TradeoffCurve;
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let f = TradeoffCurve::gaussian(1.0)?;
/// let p = one_run_fdp_p_value(c, |x| Ok(f.beta(x)?.lower))?;
/// assert!(p < 0.05);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_p_value<F>(counts: OneRunCounts, mut f_lower: F) -> Result<f64>
where
    F: FnMut(f64) -> Result<f64>,
{
    let c = check_one_run(counts)?;
    p_value_of(c, &mut f_lower)
}

/// The recursion against μ-GDP at `level` (validated counts).
fn gaussian_refutes(c: OneRunCounts, level: f64, mu: f64) -> Result<bool> {
    let curve = TradeoffCurve::gaussian(mu)?;
    refutes_at(c, level, &mut |x| Ok(curve.beta(x)?.lower))
}

/// The largest μ such that the guesses refute μ-GDP at level α/K (0 if not even
/// 10⁻⁶-GDP is refuted).
///
/// # Formula
///
/// μ̂ = sup{μ : the recursion with f(x) = Φ(Φ⁻¹(1 − x) − μ) refutes at α/K}, K =
/// `candidates`. Refutation is monotone in μ (a larger μ lowers f), so μ̂ is found by
/// doubling and bisection to relative 1e-10, and the refuted end is returned (μ̂ errs
/// low). If the mechanism is μ₀-GDP, P[μ̂ > μ₀] < α: every μ > μ₀ is a true claim, and the
/// smallest v that refutes any of them is reached with probability < α (module docs,
/// step 4).
///
/// `candidates` is the number of guess rules tried on these canaries before this one was
/// picked (Bonferroni), 1 for a rule fixed in advance — as [`super::epsilon::one_run_epsilon`].
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, ICML 2025 (arXiv 2410.22235); Dong, Roth & Su 2022
/// (Gaussian DP, f = G_μ).
///
/// # Errors
///
/// As [`one_run_fdp_refutes`]; [`Error::InvalidCount`] `candidates` = 0.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_fdp_mu, OneRunCounts};
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let mu = one_run_fdp_mu(c, 0.05, 1)?;
/// assert!(mu > 1.0 && mu < 3.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_mu(counts: OneRunCounts, alpha: f64, candidates: u64) -> Result<f64> {
    let c = check_one_run(counts)?;
    let alpha = check_open_unit("alpha", alpha)?;
    let level = alpha / check_candidates(candidates)? as f64;
    if !gaussian_refutes(c, level, MU_FLOOR)? {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (MU_FLOOR, 1.0f64);
    while gaussian_refutes(c, level, hi)? {
        lo = hi;
        hi *= 2.0;
        if hi > MU_CEIL {
            return Err(Error::NotConverged {
                what: "one-run f-DP audit: every mu up to 1024 is refuted",
                value: hi,
            });
        }
    }
    for _ in 0..200 {
        if hi - lo <= REL_TOL * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if gaussian_refutes(c, level, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The f-DP one-run ε: the largest ε such that the guesses refute, at level α/K, the
/// trade-off curve of the Gaussian mechanism that is exactly (ε, δ)-DP.
///
/// # Formula
///
/// ε = ε_δ(μ̂), with μ̂ from [`one_run_fdp_mu`] and ε_δ(μ) the analytic ε of μ-GDP at δ
/// (Balle & Wang 2018, Thm 8: the Gaussian mechanism of noise σ = 1/μ is (ε_δ(μ), δ)-DP and
/// no better), rounded down ([`TradeoffCurve::epsilon`]'s lower side); 0 if μ̂ = 0. This
/// is jax_privacy's `_epsilon_one_run_fdp` (which searches ε directly; the claims are the
/// same family). It is a lower bound on ε with probability ≥ 1 − α only if the
/// mechanism's trade-off curve is Gaussian, where the (ε, δ) test of Steinke et al.
/// ([`super::epsilon::one_run_epsilon`]) bounds every mechanism. It is the larger of the
/// two unless both are near 0 (in the tests: whenever the latter is ≥ 0.06).
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, ICML 2025 (arXiv 2410.22235); Balle & Wang 2018, Thm 8;
/// Dong, Roth & Su 2022, Cor. 2.13.
///
/// # Errors
///
/// As [`one_run_fdp_mu`]; [`Error::InvalidParameter`] `delta` ∉ (0, 1).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_epsilon, one_run_fdp_epsilon, OneRunCounts};
/// // jax_privacy 2.0.0: m = 1,000, 100 of 100 correct, α = 0.05, δ = 1e-5 → 5.549
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let e = one_run_fdp_epsilon(c, 0.05, 1e-5, 1)?;
/// assert!((e - 5.549).abs() < 1.5e-3);
/// assert!(e > one_run_epsilon(c, 0.05, 1e-5, 1)?); // Steinke et al.: 3.47
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_epsilon(
    counts: OneRunCounts,
    alpha: f64,
    delta: f64,
    candidates: u64,
) -> Result<f64> {
    let c = check_one_run(counts)?;
    let alpha = check_open_unit("alpha", alpha)?;
    let delta = check_open_unit("delta", delta)?;
    let mu = one_run_fdp_mu(c, alpha, candidates)?;
    if mu <= 0.0 {
        return Ok(0.0);
    }
    Ok(TradeoffCurve::gaussian(mu)?.epsilon(delta)?.lower.max(0.0))
}

// ---------------------------------------------------------------------------------------
// Claims from certified curves

/// One piece of a convex minorant: a − b·x (b ≥ 0) from `x0` to the next piece's `x0`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    x0: f64,
    a: f64,
    b: f64,
}

/// The claim of a certified [`TradeoffCurve`], as the convex lower bound the f-DP one-run
/// test needs.
///
/// # Formula
///
/// Gaussian and RDP sources: ĝ(x) = `curve.beta(x).lower` (both curves are convex and hold
/// in both orders). PLD source: `beta` is the envelope min(f_add, f_remove), not convex in
/// general, so the claim is built from M, the greatest convex minorant of the step
/// function s(x) = max_{k : x_k ≥ x} ℓ_k with ℓ_k = `beta(x_k).lower` on a fixed grid of
/// ~3,500 points (log-spaced towards 0 and towards 1, linear between by 1e-3). f
/// non-increasing makes s ≤ the envelope, so M lies below the envelope's convex hull f̌,
/// which bounds both orders. M is kept as one line per hull edge, each lowered by its
/// largest computed excess over the grid's corners and by its rounding. Then
///
/// ```text
/// ĝ(x) = max(M(x), M⁻¹(x)),   M⁻¹(x) = inf{t : M(t) ≤ x} = max over lines of (a − x)/b,
/// ```
///
/// a lower bound on max(f̌, f̌⁻¹), which is convex, non-increasing and bounds both orders
/// (f̌⁻¹ does: the trade-off of the swapped pair is the inverse). Near x = 1 the PLD's
/// certified lower side of β is 0, and M⁻¹ reads the curve near 0 instead, where the PLD
/// is accurate. Every value is rounded down.
///
/// # Citations
///
/// Dong, Roth & Su 2022 (symmetrising a pair of trade-off functions by the convex hull of
/// their minimum; T(Q, P) = T(P, Q)⁻¹); Mahloujifar, Melis & Chaudhuri, ICML 2025 (the test
/// that needs convexity).
///
/// # Examples
///
/// ```
/// use reconbound::accounting::tradeoff::TradeoffCurve;
/// use reconbound::attacks::audit::epsilon::CurveClaim;
/// let f = TradeoffCurve::gaussian(1.0)?;
/// let claim = CurveClaim::new(&f)?;
/// assert_eq!(claim.beta_lower(0.3)?, f.beta(0.3)?.lower);
/// assert!(!claim.is_convexified());
/// # Ok::<(), reconbound::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CurveClaim<'a> {
    curve: &'a TradeoffCurve,
    hull: Option<Vec<Piece>>,
}

impl<'a> CurveClaim<'a> {
    /// The claim of `curve` (the convex minorant is computed here for a PLD curve: `beta`
    /// at ~3,500 levels through [`TradeoffCurve::beta_lower_many`]).
    ///
    /// # Errors
    ///
    /// `beta`'s errors (none for α ∈ [0, 1]).
    pub fn new(curve: &'a TradeoffCurve) -> Result<Self> {
        let hull = match curve.source() {
            Source::Pld => Some(convex_minorant(curve)?),
            Source::Gaussian { .. } | Source::Rdp => None,
        };
        Ok(CurveClaim { curve, hull })
    }

    /// `true` if the claim is the convex minorant of the curve's envelope (PLD source),
    /// `false` if it is the curve itself.
    pub fn is_convexified(&self) -> bool {
        self.hull.is_some()
    }

    /// ĝ(x): a certified lower bound on the convex claim at x.
    ///
    /// # Errors
    ///
    /// `x` ∉ [0, 1].
    pub fn beta_lower(&self, x: f64) -> Result<f64> {
        let x = crate::error::check_probability("x", x)?;
        let Some(pieces) = &self.hull else {
            return Ok(self.curve.beta(x)?.lower);
        };
        // M(x) ≥ the line of the piece holding x
        let k = pieces.partition_point(|p| p.x0 <= x).saturating_sub(1);
        let direct = pieces.get(k).map_or(0.0, |p| {
            let y = p.a - p.b * x;
            (y - 4.0 * U * (p.a + p.b)).max(0.0)
        });
        // M⁻¹(x) = inf{t : every line ≤ x at t} = max over lines of (a − x)/b
        let inverse = pieces
            .iter()
            .filter(|p| p.b > 0.0 && p.a > x)
            .map(|p| (p.a - x) / p.b * (1.0 - 4.0 * U))
            .fold(0.0f64, f64::max)
            .min(1.0);
        Ok(direct.max(inverse))
    }
}

/// The grid of [`CurveClaim`]'s minorant: 0, 1e-12·1.01^k up to 1e-3, 1e-3 to 0.999 by
/// 1e-3, 1 − 1e-3/1.05^k down to 1 − 1e-12, and 1; increasing. Fine near 0, where the
/// inverse M⁻¹ is read (the test evaluates the claim at 1 − ρ, close to 1, and the inverse
/// there is the curve near 0, where a PLD is accurate).
fn minorant_grid() -> Vec<f64> {
    let mut g = Vec::with_capacity(3600);
    g.push(0.0);
    let mut x = 1e-12f64;
    while x < 1e-3 {
        g.push(x);
        x *= 1.01;
    }
    for i in 1..1000u32 {
        g.push(f64::from(i) / 1000.0);
    }
    let mut u = 1e-3 / 1.05;
    while u > 1e-12 {
        g.push(1.0 - u);
        u /= 1.05;
    }
    g.push(1.0);
    g
}

/// The convex minorant of the step lower bound of `curve`'s envelope (see [`CurveClaim`]).
fn convex_minorant(curve: &TradeoffCurve) -> Result<Vec<Piece>> {
    let grid = minorant_grid();
    let ell: Vec<f64> = curve
        .beta_lower_many(&grid)?
        .into_iter()
        .map(|l| if l > 0.0 { l.min(1.0) } else { 0.0 })
        .collect();
    // s on (x_j, x_{j+1}] is the largest ℓ_k with k ≥ j + 1 (f non-increasing); its
    // corners are (x_j, ŝ_j), and (1, ŝ_{n−1}) at the right end.
    let n = grid.len() - 1;
    let mut corners = Vec::with_capacity(n + 1);
    let mut run = 0.0f64;
    let mut tail = Vec::with_capacity(n);
    for j in (0..n).rev() {
        run = run.max(ell[j + 1]);
        tail.push((grid[j], run));
    }
    tail.reverse();
    corners.extend_from_slice(&tail);
    corners.push((1.0, tail.last().map_or(0.0, |c| c.1)));
    // lower convex hull (monotone chain), x increasing
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(corners.len());
    for &p in &corners {
        while hull.len() >= 2 {
            let (o, a) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            let cross = (a.0 - o.0) * (p.1 - o.1) - (a.1 - o.1) * (p.0 - o.0);
            if cross <= 0.0 {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
    // one line per edge, lowered below every corner (by its computed excess and by the
    // rounding of a − b·x, at most 2u(a + b) on [0, 1])
    let mut pieces = Vec::with_capacity(hull.len());
    for w in hull.windows(2) {
        let (p, q) = (w[0], w[1]);
        if q.0 <= p.0 {
            continue;
        }
        let b = ((p.1 - q.1) / (q.0 - p.0)).max(0.0);
        let a = p.1 + b * p.0;
        let excess = corners
            .iter()
            .map(|&(x, y)| (a - b * x) - y)
            .fold(0.0f64, f64::max);
        let a = a - excess - 8.0 * U * (a + b);
        pieces.push(Piece { x0: p.0, a, b });
    }
    Ok(pieces)
}

/// The verdict of the f-DP one-run test against a certified curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FdpVerdict {
    /// The guesses refute the curve at level α.
    pub refuted: bool,
    /// The smallest level at which they refute it ([`one_run_fdp_p_value`]).
    pub p_value: f64,
}

/// Whether one-run guesses refute, at level α, a certified trade-off curve — the claimed
/// mechanism's own, e.g. [`TradeoffCurve::of_schedule`] of the claimed (σ, q, T) — and the
/// p-value.
///
/// # Formula
///
/// [`one_run_fdp_refutes`] and [`one_run_fdp_p_value`] with ĝ = [`CurveClaim::beta_lower`]
/// (the PLD envelope made convex first).
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, ICML 2025 (arXiv 2410.22235).
///
/// # Errors
///
/// As [`one_run_fdp_refutes`] and [`CurveClaim::new`].
///
/// # Examples
///
/// ```
/// use reconbound::accounting::pld::PldConfig;
/// use reconbound::accounting::schedule::{Phase, Schedule};
/// use reconbound::accounting::tradeoff::TradeoffCurve;
/// use reconbound::attacks::audit::epsilon::{one_run_fdp_curve, OneRunCounts};
/// // one full-batch step at σ = 0.5 is 2-GDP: 100 of 100 correct does not refute it
/// let run = Schedule::single(Phase { sampling_rate: 1.0, noise_multiplier: 0.5, steps: 1 })?;
/// let f = TradeoffCurve::of_schedule(&run, 1e-6, &PldConfig::default())?;
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let v = one_run_fdp_curve(c, 0.05, &f)?;
/// assert!(!v.refuted && v.p_value > 0.05);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_curve(
    counts: OneRunCounts,
    alpha: f64,
    curve: &TradeoffCurve,
) -> Result<FdpVerdict> {
    let c = check_one_run(counts)?;
    let alpha = check_open_unit("alpha", alpha)?;
    let claim = CurveClaim::new(curve)?;
    let mut g = |x: f64| claim.beta_lower(x);
    let refuted = refutes_at(c, alpha, &mut g)?;
    let p_value = p_value_of(c, &mut g)?;
    Ok(FdpVerdict { refuted, p_value })
}

#[cfg(test)]
mod tests;
