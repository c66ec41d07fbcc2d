//! The GLM reconstruction attack (Balle, Cherubin, Hayes 2022, §III; as strengthened and
//! evaluated by Guo et al. 2022, §7.2) against output-perturbed L2-regularised logistic
//! regression ([`crate::train::logreg`]).
//!
//! # The adversary
//!
//! It knows D⁻ (every training example but the target), λ, the loss, the released weights
//! w̃ = w* + N(0, σ²I) and the target's label y (Guo et al. give it the label; only the
//! features x are reconstructed). The model is trained on x_aug = E(x), the fixed linear
//! [`LinearEmbedding`] of the raw pixels x ∈ [0, 1]^d (with or without the constant feature
//! c₀ at coordinate 0), so the attack recovers x_aug and maps it back to raw pixels
//! ([`LinearEmbedding::unembed`]): MSEs are in raw [0, 1]^d units, the units of the FIL bound
//! [`crate::accounting::fil::logreg::embedded_output_perturbation_fil`].
//!
//! # The residual B (the 1/n of J)
//!
//! [`crate::train::logreg`] minimises J(w) = (1/n) Σ_{i=1}^{n} ℓ_i(w) + (λ/2)‖w‖² over all
//! n = |D⁻| + 1 examples. At the exact minimiser n·∇J(w*) = 0, i.e.
//! Σ_i ∇ℓ_i(w*) + nλw* = 0, so the target's gradient is
//!
//! ```text
//! ∇ℓ_t(w*) = −B,   B = Σ_{j∈D⁻} ∇ℓ_j(w*) + nλw*,   n = |D⁻| + 1   (not |D⁻|: the target counts)
//! ```
//!
//! with ∇ℓ(w; x, y) = (σ(w·x) − y)·x. The adversary evaluates B at w̃ in place of w*
//! ([`residual_gradient`]); with σ = 0 the only error is the minimiser's (‖n∇J(ŵ)‖ after
//! Newton) and rounding. B is summed with Neumaier's compensated summation.
//!
//! # With an intercept: the ratio
//!
//! (σ(z) − y)·x_aug = −B with x_aug,0 = c₀ gives σ(z) − y = −B₀/c₀ and
//! x_aug,1: = B₁:·c₀/B₀, whatever z: **x̂ = (c₀/(a·B₀))·B₁:** in raw pixels (c₀/a = √d).
//! The label is not needed for x̂, but it tells whether an exact preimage exists: the
//! target's residual σ(z) − y lies in (0, 1) for y = 0 and in (−1, 0) for y = 1, so B₀ must
//! have the sign of y − ½ and |B₀| < c₀. With noise it may not; the status then says
//! [`CandidateStatus::NoRoot`] and the ratio is still returned. B₀ = 0 (or a ratio that
//! overflows) gives no candidate, and |B₀| at or below the rounding error of its own
//! computation (sign undetermined) gives the candidate with
//! [`CandidateStatus::DegenerateB0`]: reported, never dropped.
//!
//! # Without an intercept: a one-dimensional equation
//!
//! (σ(w·x) − y)·x = −B forces x ∥ B. Write s = wᵀB.
//!
//! - y = 1: σ(z) − 1 = −σ(−z) < 0, so x = r·B with r = 1/σ(−z) > 0 and z = r·s:
//!   **r·σ(−r·s) = 1**.
//! - y = 0: σ(z) > 0, so x = −r·B with r = 1/σ(z) > 0 and z = −r·s: again **r·σ(−r·s) = 1**.
//!
//! So x̂ = +r·B for y = 1 and −r·B for y = 0, r a positive root of f(r) = r·σ(−rs) = 1
//! (solved as ln r = softplus(r·s) by Brent's method, [`crate::math::root::brent_bracket`]):
//!
//! - s ≤ 0: f increases from 0 to ∞ — **one root**, r ∈ [1, 2] (σ(−rs) ∈ [½, 1)).
//! - s > 0: with u = r·s, f = (u/(1 + eᵘ))/s is largest at u* (1 + e^{u*} = u*·e^{u*},
//!   u* = [`U_STAR`] ≈ 1.27846), where it equals e^{−u*}/s (e^{−u*} = u* − 1 =
//!   [`TWO_ROOT_THRESHOLD`] ≈ 0.27846). **Two roots** u₁ ∈ (2s, u*), u₂ > u* when
//!   s < e^{−u*}: x is then not identifiable from w — both candidates are returned
//!   ([`CandidateStatus::TwoRoots`]). One (double) root at s = e^{−u*}. **None** when
//!   s > e^{−u*} (only possible with noise): [`CandidateStatus::NoRoot`], and the candidate
//!   is r = u*/s, the r that minimises ‖∇ℓ(±rB) + B‖ = |1 − f(r)|·‖B‖.
//!
//! At the exact minimiser s = −(σ(z) − y)·z: positive exactly when the target is classified
//! correctly (z > 0 for y = 1, z < 0 for y = 0), and then s = |z|/(1 + e^{|z|}) ≤ e^{−u*}.
//! So **every correctly classified target has two exact candidates** (the truth, u = |z|, and
//! its mirror under u ↦ u/(1 + eᵘ)); only misclassified ones are unique. The decision
//! between the cases evaluates ln u* − softplus(u*) − ln s at u = u* (> 0: two roots, = 0:
//! the double root, < 0: none), so it agrees with the brackets the roots are found in.
//!
//! # With noise, and the Cramér–Rao bound
//!
//! For small σ the attack is smooth in w̃: x̂ = x + Gξ + O(σ²), ξ the noise and G a left
//! inverse of ∂w*/∂x, so it is unbiased to first order and its MSE σ²‖G‖_F²/d is at least
//! the FIL bound d/Tr(I) (Guo Thm 2). On the embedded MNIST digits with the intercept it is
//! nearly efficient (MSE/bound ≈ 1.01–1.04 at σ ≤ 1e-5; `tests/attacks/`). Strictly, the
//! ratio's MSE is **infinite** for every σ > 0: B₀ is a smooth function of the Gaussian
//! noise with a positive density at 0 (B₀ is increasing and unbounded in w̃₀ through nλw̃₀),
//! so E[1/B₀²] = ∞. Monte Carlo means are finite and estimate the linearised attack while
//! B₀ stays many standard deviations from 0 (≳ 460 at σ = 1e-5 there); when it does not
//! (σ ≳ 0.01 there) they are erratic and dominated by rare draws, the attack is far from
//! unbiased, and its realised MSE can fall below d/Tr(I) — the violations Guo et al. report,
//! which here occur only for bounds far beyond the perfect-privacy line MSE = 1.
//!
//! # Citations
//!
//! Balle, Cherubin, Hayes, "Reconstructing Training Data with Informed Adversaries", IEEE
//! S&P 2022, §III (`balle2022-informed-adversaries-excerpt.txt`; the GLM attack); Guo,
//! Karrer, Chaudhuri, van der Maaten, "Bounding Training Data Reconstruction in Private Deep
//! Learning", ICML 2022, §7.2 and Figs. 3–4 (`guo2022-bounding-reconstruction-fil-rdp.txt`);
//! Neumaier 1974 (compensated summation).

use crate::data::Dataset;
use crate::error::{check_positive, Error, Result};
use crate::math::root::brent_bracket;
use crate::train::logreg::{check_binary, check_finite_weights, dot, residual, LinearEmbedding};
use alloc::vec::Vec;

/// u*, the root of 1 + eᵘ = u·eᵘ (equivalently u = 1 + e^{−u}), where u/(1 + eᵘ) is largest.
pub const U_STAR: f64 = 1.278_464_542_761_073_7;

/// e^{−u*} = u* − 1 ≈ 0.27846: the largest value of u/(1 + eᵘ), so without an intercept
/// 0 < wᵀB < e^{−u*} gives two exact roots and wᵀB > e^{−u*} none.
pub const TWO_ROOT_THRESHOLD: f64 = 0.278_464_542_761_073_8;

/// Largest number of function evaluations of one Brent solve.
const MAX_BRENT_ITERATIONS: usize = 300;

/// What the equations of the attack admit for one target (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CandidateStatus {
    /// Exactly one exact solution: with an intercept, B₀ has the sign and size the label
    /// allows; without one, wᵀB ≤ 0 (or the double root wᵀB = e^{−u*}).
    Unique,
    /// No intercept, 0 < wᵀB < e^{−u*}: two exact solutions, both returned (smaller root
    /// first); x is not identifiable from w.
    TwoRoots,
    /// No exact solution (only possible with noise): without an intercept wᵀB > e^{−u*}
    /// (the candidate is r = u*/s); with one, −B₀/c₀ is outside the label's residual range
    /// (the candidate is still the ratio).
    NoRoot,
    /// With an intercept: B₀ = 0 or the ratio overflows (no candidate), or |B₀| is at or
    /// below the rounding error of its computation (the candidate is returned, but its sign
    /// and size are not determined by the arithmetic).
    DegenerateB0,
}

impl CandidateStatus {
    /// Every status, in the order of the command line's counts.
    pub const ALL: [CandidateStatus; 4] = [
        CandidateStatus::Unique,
        CandidateStatus::TwoRoots,
        CandidateStatus::NoRoot,
        CandidateStatus::DegenerateB0,
    ];

    /// A stable snake_case name (CSV and JSON).
    pub fn name(self) -> &'static str {
        match self {
            CandidateStatus::Unique => "unique",
            CandidateStatus::TwoRoots => "two_roots",
            CandidateStatus::NoRoot => "no_root",
            CandidateStatus::DegenerateB0 => "degenerate_b0",
        }
    }
}

/// The attack's answer for one target.
#[derive(Clone, Debug, PartialEq)]
pub struct GlmReconstruction {
    /// Which case of the module docs applies.
    pub status: CandidateStatus,
    /// The candidates x̂: raw pixels for [`glm_attack`] and [`AllTargets`], model features
    /// for [`reconstruct_features`]. One for `Unique` and `NoRoot`, two for `TwoRoots`
    /// (smaller root first), one or none for `DegenerateB0`. They may leave [0, 1]^d.
    pub candidates: Vec<Vec<f64>>,
    /// The factor k of each candidate in model features: x̂_aug = k·B (no intercept,
    /// k = ±r) or x̂_aug = (c₀, k·B₁:) (intercept, k = c₀/B₀); same order as `candidates`.
    pub scales: Vec<f64>,
    /// The statistic that decides the case: B₀ with an intercept, s = w̃ᵀB without.
    pub statistic: f64,
    /// With an intercept: the bound on the rounding error of B₀ below which the status is
    /// `DegenerateB0` (0 for [`reconstruct_features`], which takes B as exact, and without
    /// an intercept). It does not cover the minimiser's error (module docs).
    pub statistic_error: f64,
}

fn check_label(label: u32) -> Result<()> {
    if label > 1 {
        return Err(Error::InvalidCount {
            name: "label",
            value: u64::from(label),
            expected: "0 or 1",
        });
    }
    Ok(())
}

fn check_released(released: &[f64], dim: usize) -> Result<()> {
    if released.len() != dim {
        return Err(Error::Inconsistent {
            what: "released.len() must equal the model's dimension",
            value: released.len() as f64,
        });
    }
    check_finite_weights("released", released)
}

/// Neumaier's compensated summation: `sum + comp` carries the running total.
#[inline]
fn neumaier_add(sum: &mut f64, comp: &mut f64, v: f64) {
    let t = *sum + v;
    if libm::fabs(*sum) >= libm::fabs(v) {
        *comp += (*sum - t) + v;
    } else {
        *comp += (v - t) + *sum;
    }
    *sum = t;
}

/// A compensated per-coordinate sum of nλw̃ and (σ(w̃·x_j) − y_j)·x_j over `data`, with Σ_j |(σ − y)·x_j0| + nλ|w̃₀| (the absolute size of
/// coordinate 0's terms, for its rounding bound).
struct Sum {
    sum: Vec<f64>,
    comp: Vec<f64>,
    abs0: f64,
}

impl Sum {
    fn new(data: &Dataset, n_lambda: f64, w: &[f64]) -> Sum {
        let mut sum: Vec<f64> = w.iter().map(|v| n_lambda * v).collect();
        let mut comp = alloc::vec![0.0; w.len()];
        let mut abs0 = libm::fabs(sum.first().copied().unwrap_or(0.0));
        for (x, y) in data.iter() {
            let r = residual(dot(w, x), y);
            abs0 += libm::fabs(r * x.first().copied().unwrap_or(0.0));
            for ((s, c), &xk) in sum.iter_mut().zip(comp.iter_mut()).zip(x) {
                if xk != 0.0 {
                    neumaier_add(s, c, r * xk);
                }
            }
        }
        Sum { sum, comp, abs0 }
    }
}

/// The rounding-error bound of B₀ from the absolute size of its terms: each term is
/// accurate to a few ulps (the residual to ≈ 3ε, the product to ε/2) and the compensated
/// sum adds ≈ ε|B₀| + O(nε²)·Σ: 8ε·Σ|terms| covers both.
fn b0_error(abs0: f64) -> f64 {
    8.0 * f64::EPSILON * abs0
}

/// B = Σ_{j∈D⁻} (σ(w̃·x_j) − y_j)·x_j + nλw̃ with n = |D⁻| + 1 (module docs), in model
/// features: `known` is D⁻ as the model sees it (embedded, or in the unit ball).
///
/// # Formula
///
/// B = Σ_{j∈D⁻} ∇ℓ_j(w̃) + nλw̃, n = known.len() + 1 (J of [`crate::train::logreg`] has the
/// factor 1/n; n·∇J(w*) = 0 at the minimiser gives ∇ℓ_t(w*) = −B). Summed with Neumaier's
/// compensated summation.
///
/// # Citations
///
/// Balle et al. 2022, §III (`balle2022-informed-adversaries-excerpt.txt`); Guo et al. 2022,
/// §7.2 (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// [`Error::InvalidParameter`] `lambda` unless finite and > 0; [`Error::InvalidCount`]
/// `num_classes` unless 2; [`Error::Inconsistent`] if `released.len() != known.dim()`;
/// [`Error::InvalidParameter`] `released` if an entry is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::glm::residual_gradient;
/// use reconbound::data::Dataset;
/// use reconbound::train::logreg::fit;
/// let all = Dataset::new(vec![0.5, 0.1, 0.2, 0.6, 0.4, 0.4], vec![1, 0, 1], (1, 1, 2), 2)?;
/// let w = fit(&all, 0.1)?.weights;
/// let known = all.subset(&[1, 2])?; // D⁻: the target is example 0, (0.5, 0.1), y = 1
/// let b = residual_gradient(&known, 0.1, &w)?;
/// // −B is the target's gradient (σ(w·x) − 1)·x at the minimiser.
/// let z = 0.5 * w[0] + 0.1 * w[1];
/// let g0 = (1.0 / (1.0 + (-z).exp()) - 1.0) * 0.5;
/// assert!((b[0] + g0).abs() < 1e-12);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn residual_gradient(known: &Dataset, lambda: f64, released: &[f64]) -> Result<Vec<f64>> {
    check_positive("lambda", lambda)?;
    check_binary(known)?;
    check_released(released, known.dim())?;
    let n = (known.len() + 1) as f64;
    let s = Sum::new(known, n * lambda, released);
    Ok(s.sum.iter().zip(&s.comp).map(|(a, c)| a + c).collect())
}

/// The exact cases of the module docs in model features. `Ok((status, scales, statistic,
/// feature candidates))`.
type Solved = (CandidateStatus, Vec<f64>, f64, Vec<Vec<f64>>);

/// softplus(v) = ln(1 + eᵛ), stable.
fn softplus(v: f64) -> f64 {
    v.max(0.0) + libm::log1p(libm::exp(-libm::fabs(v)))
}

fn root(f: impl FnMut(f64) -> f64, lo: f64, hi: f64) -> Result<f64> {
    Ok(brent_bracket(f, lo, hi, f64::MIN_POSITIVE, MAX_BRENT_ITERATIONS)?.best)
}

/// No intercept: x = ±r·B, r σ(−r s) = 1 (module docs).
fn solve_no_intercept(b: &[f64], w: &[f64], label: u32) -> Result<Solved> {
    let s = dot(w, b);
    if !s.is_finite() {
        return Err(Error::Numerical {
            what: "GLM attack: w·B is not finite",
            value: s,
        });
    }
    let sign = if label == 1 { 1.0 } else { -1.0 };
    if s <= 0.0 {
        // ln r − softplus(r s): −softplus(s) < 0 at r = 1, ln 2 − softplus(2s) ≥ 0 at r = 2.
        let r = root(|r| libm::log(r) - softplus(r * s), 1.0, 2.0)?;
        let x = b.iter().map(|v| sign * r * v).collect();
        return Ok((
            CandidateStatus::Unique,
            alloc::vec![sign * r],
            s,
            alloc::vec![x],
        ));
    }
    // s > 0: in u = r s, h(u) = ln u − softplus(u) − ln s; x = ±u·(B/s).
    let ln_s = libm::log(s);
    let h = |u: f64| libm::log(u) - softplus(u) - ln_s;
    let candidate = |u: f64| -> Vec<f64> { b.iter().map(|v| sign * u * (v / s)).collect() };
    let h_star = h(U_STAR);
    if h_star <= 0.0 {
        let status = if h_star == 0.0 {
            CandidateStatus::Unique
        } else {
            CandidateStatus::NoRoot
        };
        return Ok((
            status,
            alloc::vec![sign * U_STAR / s],
            s,
            alloc::vec![candidate(U_STAR)],
        ));
    }
    // Two roots: u₁ ∈ [2s, u*] (h(2s) = ln 2 − softplus(2s) ≤ 0; a rounding-level positive
    // value there means the root is 2s itself), u₂ ∈ [u*, U] with U doubled until h(U) < 0.
    let lo = 2.0 * s;
    let u1 = if lo < U_STAR && h(lo) < 0.0 {
        root(h, lo, U_STAR)?
    } else {
        lo.min(U_STAR)
    };
    let mut hi = (2.0 * U_STAR).max(2.0 * (1.0 - ln_s));
    let mut tries = 0;
    while h(hi) >= 0.0 {
        hi *= 2.0;
        tries += 1;
        if tries > 64 || !hi.is_finite() {
            return Err(Error::NotConverged {
                what: "GLM attack: no upper bracket for the larger root",
                value: s,
            });
        }
    }
    let u2 = root(h, U_STAR, hi)?;
    Ok((
        CandidateStatus::TwoRoots,
        alloc::vec![sign * u1 / s, sign * u2 / s],
        s,
        alloc::vec![candidate(u1), candidate(u2)],
    ))
}

/// Intercept (constant c₀ at coordinate 0): x̂_aug = (c₀, (c₀/B₀)·B₁:) (module docs).
fn solve_intercept(b: &[f64], c0: f64, label: u32, b0_err: f64) -> Solved {
    let b0 = b.first().copied().unwrap_or(0.0);
    let k = c0 / b0;
    let x: Vec<f64> = core::iter::once(c0)
        .chain(b.iter().skip(1).map(|v| k * v))
        .collect();
    if b0 == 0.0 || !k.is_finite() || x.iter().any(|v| !v.is_finite()) {
        return (CandidateStatus::DegenerateB0, Vec::new(), b0, Vec::new());
    }
    // The target's residual σ(z) − y = −B₀/c₀ must lie in (0, 1) for y = 0, (−1, 0) for y = 1.
    let rho = -b0 / c0;
    let consistent = if label == 1 {
        rho > -1.0 && rho < 0.0
    } else {
        rho > 0.0 && rho < 1.0
    };
    let status = if libm::fabs(b0) <= b0_err {
        CandidateStatus::DegenerateB0
    } else if consistent {
        CandidateStatus::Unique
    } else {
        CandidateStatus::NoRoot
    };
    (status, alloc::vec![k], b0, alloc::vec![x])
}

fn solve(b: &[f64], w: &[f64], label: u32, intercept: Option<f64>, b0_err: f64) -> Result<Solved> {
    match intercept {
        Some(c0) => Ok(solve_intercept(b, c0, label, b0_err)),
        None => solve_no_intercept(b, w, label),
    }
}

/// The GLM attack's candidates from a residual B, in **model features**: with an intercept
/// (constant feature of value `intercept` at coordinate 0) x̂_aug = (c₀, (c₀/B₀)·B₁:); without
/// one x̂ = ±r·B, r σ(−r·w̃ᵀB) = 1 (+ for label 1, − for label 0), every case reported
/// (module docs). B is taken as exact: `statistic_error` is 0.
///
/// # Formula
///
/// Intercept: x̂_aug = (c₀, c₀B₁:/B₀); status by B₀ (module docs). No intercept: s = w̃ᵀB;
/// s ≤ 0: one r ∈ [1, 2]; 0 < s < e^{−u*}: r = u₁/s, u₂/s with u/(1 + eᵘ) = s;
/// s > e^{−u*}: no root, r = u*/s.
///
/// # Citations
///
/// Balle et al. 2022, §III (`balle2022-informed-adversaries-excerpt.txt`); Guo et al. 2022,
/// §7.2 (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// [`Error::InvalidCount`] `label` unless 0 or 1; [`Error::Inconsistent`] if `b` and
/// `released` differ in length (or are empty); [`Error::InvalidParameter`] `released` or
/// `b` if an entry is not finite, `intercept` unless finite and > 0;
/// [`Error::Numerical`] if w̃ᵀB is not finite; [`Error::NotConverged`] if a root cannot be
/// bracketed (not expected for finite input).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::glm::{reconstruct_features, CandidateStatus};
/// // A target x = (0.3, 0.4), y = 1, misclassified by w = (−1, 0.5): w·x = −0.1.
/// let (w, x) = ([-1.0, 0.5], [0.3, 0.4]);
/// let z: f64 = w[0] * x[0] + w[1] * x[1];
/// let b: Vec<f64> = x.iter().map(|v| (1.0 / (1.0 + z.exp())) * v).collect(); // −∇ℓ
/// let r = reconstruct_features(&b, &w, 1, None)?;
/// assert_eq!(r.status, CandidateStatus::Unique);
/// assert!((r.candidates[0][0] - 0.3).abs() < 1e-15 && (r.candidates[0][1] - 0.4).abs() < 1e-15);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn reconstruct_features(
    b: &[f64],
    released: &[f64],
    label: u32,
    intercept: Option<f64>,
) -> Result<GlmReconstruction> {
    check_label(label)?;
    if b.is_empty() || b.len() != released.len() {
        return Err(Error::Inconsistent {
            what: "b and released must have the same, nonzero length",
            value: b.len() as f64,
        });
    }
    check_finite_weights("released", released)?;
    check_finite_weights("b", b)?;
    if let Some(c0) = intercept {
        check_positive("intercept", c0)?;
    }
    let (status, scales, statistic, candidates) = solve(b, released, label, intercept, 0.0)?;
    Ok(GlmReconstruction {
        status,
        candidates,
        scales,
        statistic,
        statistic_error: 0.0,
    })
}

/// Map feature-space candidates to raw pixels.
fn to_raw(solved: Solved, embedding: &LinearEmbedding, b0_err: f64) -> Result<GlmReconstruction> {
    let (status, scales, statistic, features) = solved;
    let candidates = features
        .iter()
        .map(|x| embedding.unembed(x))
        .collect::<Result<Vec<_>>>()?;
    Ok(GlmReconstruction {
        status,
        candidates,
        scales,
        statistic,
        statistic_error: if embedding.has_intercept() {
            b0_err
        } else {
            0.0
        },
    })
}

/// The GLM attack on one target, in **raw pixels**: D⁻ = `known` (raw, in [0, 1]^d), the
/// model trained on `embedding.embed_dataset(D⁻ ∪ {target})` with `lambda`, the released
/// weights `released` (length `embedding.dim()`) and the target's `label`.
///
/// # Formula
///
/// B = Σ_{j∈D⁻} ∇ℓ_j(w̃) + nλw̃ on the embedded data, n = |D⁻| + 1 ([`residual_gradient`]);
/// candidates by [`reconstruct_features`], mapped back by [`LinearEmbedding::unembed`]
/// (intercept: x̂ = c₀B₁:/(a·B₀)). `statistic_error` = 8ε·(Σ_j |∇ℓ_j,0| + nλ|w̃₀|).
///
/// # Citations
///
/// Balle et al. 2022, §III (`balle2022-informed-adversaries-excerpt.txt`); Guo et al. 2022,
/// §7.2 (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// As [`residual_gradient`] and [`reconstruct_features`]; [`Error::Inconsistent`] if
/// `known.dim() != embedding.raw_dim()` or `released.len() != embedding.dim()`.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::glm::{glm_attack, CandidateStatus};
/// use reconbound::data::embedded_mnist;
/// use reconbound::train::logreg::{fit, LinearEmbedding};
/// let raw = embedded_mnist()?.filter_labels(&[0, 1])?.subset(&(0..30).collect::<Vec<_>>())?
///     .flatten();
/// let e = LinearEmbedding::with_intercept(raw.dim())?;
/// let w = fit(&e.embed_dataset(&raw)?, 1e-2)?.weights; // σ = 0: the exact minimiser
/// let (target, label) = raw.example(0)?;
/// let known = raw.subset(&(1..30).collect::<Vec<_>>())?;
/// let r = glm_attack(&known, label, 1e-2, &w, &e)?;
/// assert_eq!(r.status, CandidateStatus::Unique);
/// let err = r.candidates[0].iter().zip(target).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
/// assert!(err < 1e-9);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn glm_attack(
    known: &Dataset,
    label: u32,
    lambda: f64,
    released: &[f64],
    embedding: &LinearEmbedding,
) -> Result<GlmReconstruction> {
    check_label(label)?;
    check_positive("lambda", lambda)?;
    if known.dim() != embedding.raw_dim() {
        return Err(Error::Inconsistent {
            what: "the data's dimension must equal the embedding's raw dimension",
            value: known.dim() as f64,
        });
    }
    check_binary(known)?;
    check_released(released, embedding.dim())?;
    let features = embedding.embed_dataset(known)?;
    let n = (known.len() + 1) as f64;
    let s = Sum::new(&features, n * lambda, released);
    let b: Vec<f64> = s.sum.iter().zip(&s.comp).map(|(a, c)| a + c).collect();
    check_finite_weights("b", &b)?;
    let err = b0_error(s.abs0);
    let solved = solve(&b, released, label, embedding.constant(), err)?;
    to_raw(solved, embedding, err)
}

/// The GLM attack against **every** example of one training set, each with D⁻ = the other
/// examples: Guo et al. 2022 §7.2 ("apply the GLM attack to reconstruct each sample in the
/// training set"). Built once per training set; [`AllTargets::attack_all`] per release.
///
/// Mathematically the same as [`glm_attack`] with `known` = the set without the target, but
/// O(n·d) per release instead of O(n²·d): S = Σ_i ∇ℓ_i(w̃) + nλw̃ is summed once
/// (compensated) and B_t = S − ∇ℓ_t(w̃). The two agree to rounding (a few ulps of |B| plus
/// ε²-level terms of Σ|∇ℓ_j|).
#[derive(Clone, Debug)]
pub struct AllTargets {
    features: Dataset,
    embedding: LinearEmbedding,
    lambda: f64,
}

impl AllTargets {
    /// Prepare the attack on `train` (raw, in [0, 1]^d), trained with `lambda` on
    /// `embedding.embed_dataset(train)`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `lambda` unless finite and > 0; [`Error::InvalidCount`]
    /// `num_classes` unless 2; [`Error::Inconsistent`] if `train.dim() !=
    /// embedding.raw_dim()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::attacks::glm::AllTargets;
    /// use reconbound::data::embedded_mnist;
    /// use reconbound::train::logreg::{fit, LinearEmbedding};
    /// let raw = embedded_mnist()?.filter_labels(&[0, 1])?.subset(&(0..30).collect::<Vec<_>>())?
    ///     .flatten();
    /// let e = LinearEmbedding::with_intercept(raw.dim())?;
    /// let w = fit(&e.embed_dataset(&raw)?, 1e-2)?.weights;
    /// let all = AllTargets::new(&raw, 1e-2, &e)?.attack_all(&w)?;
    /// assert_eq!(all.len(), 30);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(train: &Dataset, lambda: f64, embedding: &LinearEmbedding) -> Result<Self> {
        check_positive("lambda", lambda)?;
        check_binary(train)?;
        let features = embedding.embed_dataset(train)?;
        Ok(AllTargets {
            features,
            embedding: *embedding,
            lambda,
        })
    }

    /// Number of targets (training examples).
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Always false (a data set has at least one example).
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The embedded training set the model is fitted on.
    pub fn features(&self) -> &Dataset {
        &self.features
    }

    /// The attack on every target against the release `released` (length
    /// `embedding.dim()`), in index order, candidates in raw pixels.
    ///
    /// # Formula
    ///
    /// B_t = S − ∇ℓ_t(w̃), S = Σ_{i=1}^{n} ∇ℓ_i(w̃) + nλw̃ (n the training set's size, the
    /// target included); then as [`glm_attack`].
    ///
    /// # Citations
    ///
    /// Balle et al. 2022, §III; Guo et al. 2022, §7.2
    /// (`guo2022-bounding-reconstruction-fil-rdp.txt`).
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `released.len() != embedding.dim()`;
    /// [`Error::InvalidParameter`] `released` if an entry is not finite; as
    /// [`reconstruct_features`].
    pub fn attack_all(&self, released: &[f64]) -> Result<Vec<GlmReconstruction>> {
        check_released(released, self.embedding.dim())?;
        let n = self.features.len() as f64;
        let total = Sum::new(&self.features, n * self.lambda, released);
        let mut b = alloc::vec![0.0; released.len()];
        let mut out = Vec::with_capacity(self.features.len());
        for (x, y) in self.features.iter() {
            let r = residual(dot(released, x), y);
            for (((bk, &sk), &ck), &xk) in b.iter_mut().zip(&total.sum).zip(&total.comp).zip(x) {
                *bk = (sk - r * xk) + ck;
            }
            check_finite_weights("b", &b)?;
            let abs0 = total.abs0 - libm::fabs(r * x.first().copied().unwrap_or(0.0));
            let err = b0_error(libm::fabs(abs0));
            let solved = solve(&b, released, y, self.embedding.constant(), err)?;
            out.push(to_raw(solved, &self.embedding, err)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::error_name;
    use crate::rng::Rng;
    use crate::train::logreg::fit;

    fn sigma(z: f64) -> f64 {
        1.0 / (1.0 + libm::exp(-z))
    }

    /// −∇ℓ(w; x, y) = −(σ(w·x) − y)·x: the B of an exact minimiser.
    fn minus_grad(w: &[f64], x: &[f64], y: u32) -> Vec<f64> {
        let r = sigma(dot(w, x)) - f64::from(y);
        x.iter().map(|v| -r * v).collect()
    }

    fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| libm::fabs(x - y))
            .fold(0.0, f64::max)
    }

    /// u* solves 1 + eᵘ = u·eᵘ and e^{−u*} = u* − 1 (tolerance 2 ulps: the constants are the
    /// 40-digit values rounded to f64); u/(1 + eᵘ) is largest there.
    #[test]
    fn u_star_and_the_threshold() {
        let e = libm::exp(U_STAR);
        assert!(libm::fabs((1.0 + e) / (U_STAR * e) - 1.0) < 4.0 * f64::EPSILON);
        assert!(libm::fabs(libm::exp(-U_STAR) / TWO_ROOT_THRESHOLD - 1.0) < 4.0 * f64::EPSILON);
        let f = |u: f64| u / (1.0 + libm::exp(u));
        assert!(f(U_STAR) > f(U_STAR - 1e-4) && f(U_STAR) > f(U_STAR + 1e-4));
        assert!(libm::fabs(f(U_STAR) - TWO_ROOT_THRESHOLD) < 1e-16);
    }

    /// Misclassified targets (s ≤ 0) have one root and it is the truth; correctly classified
    /// ones (s ∈ (0, e^{−u*})) have two, one of them the truth, the other the mirror
    /// u₂/(1 + e^{u₂}) = u₁/(1 + e^{u₁}); for both labels and s = 0 (r = 2). Tolerance
    /// 1e-14·(1 + ‖x‖)·(1 + κ): Brent stops at ≈ 2ε relative in u and h is evaluated to a
    /// few ε; κ = 1/|1 − uσ(u)| (u = |w·x|) is the root's relative condition number
    /// (u·h′(u) = 1 − uσ(u)), which blows up at the double root u = u*.
    #[test]
    fn no_intercept_roots_are_exact_for_both_labels() {
        let mut rng = Rng::from_seed(9);
        let mut seen = [0usize; 2];
        for trial in 0..400 {
            let d = 1 + trial % 5;
            let x: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
            let w: Vec<f64> = (0..d).map(|_| 6.0 * (rng.uniform() - 0.5)).collect();
            let y = (trial % 2) as u32;
            let b = minus_grad(&w, &x, y);
            let z = dot(&w, &x);
            let r = reconstruct_features(&b, &w, y, None).unwrap();
            let u = libm::fabs(z);
            let kappa = 1.0 / libm::fabs(1.0 - u * sigma(u));
            let tol = 1e-14 * (1.0 + libm::sqrt(dot(&x, &x))) * (1.0 + kappa);
            let correct = (y == 1 && z > 0.0) || (y == 0 && z < 0.0);
            if correct {
                seen[0] += 1;
                assert_eq!(r.status, CandidateStatus::TwoRoots, "z = {z}, y = {y}");
                assert!(r.statistic > 0.0 && r.statistic < TWO_ROOT_THRESHOLD);
                let errs: Vec<f64> = r.candidates.iter().map(|c| max_abs_diff(c, &x)).collect();
                assert!(errs.iter().any(|&e| e < tol), "{errs:?}");
                // Both satisfy the equation: ∇ℓ(x̂) = −B.
                for c in &r.candidates {
                    let g = minus_grad(&w, c, y);
                    assert!(max_abs_diff(&g, &b) < 1e-13, "{g:?} vs {b:?}");
                }
                assert!(libm::fabs(r.scales[0]) < libm::fabs(r.scales[1]));
            } else {
                seen[1] += 1;
                assert_eq!(r.status, CandidateStatus::Unique, "z = {z}, y = {y}");
                assert!(max_abs_diff(&r.candidates[0], &x) < tol);
            }
        }
        assert!(seen[0] > 50 && seen[1] > 50, "{seen:?}");
        // s = 0 (x ⟂ w): r = 2 exactly.
        let (w, x) = ([1.0, -1.0], [0.5, 0.5]);
        for y in [0, 1] {
            let r = reconstruct_features(&minus_grad(&w, &x, y), &w, y, None).unwrap();
            assert_eq!(r.status, CandidateStatus::Unique);
            assert!(max_abs_diff(&r.candidates[0], &x) < 1e-15);
            assert_eq!(libm::fabs(r.scales[0]), 2.0);
        }
    }

    /// s > e^{−u*}: no root, reported with the candidate r = u*/s (sign by the label); the
    /// candidate minimises |1 − rσ(−rs)| (checked against neighbours).
    #[test]
    fn no_root_is_reported_with_the_closest_candidate() {
        let w = [1.0, 2.0];
        let b = [0.3, 0.2]; // s = 0.7
        for y in [0u32, 1] {
            let r = reconstruct_features(&b, &w, y, None).unwrap();
            assert_eq!(r.status, CandidateStatus::NoRoot);
            assert_eq!(r.statistic, 0.7);
            let sign = if y == 1 { 1.0 } else { -1.0 };
            assert!(libm::fabs(r.scales[0] - sign * U_STAR / 0.7) < 1e-15);
            assert_eq!(r.candidates.len(), 1);
            assert!(libm::fabs(r.candidates[0][0] - sign * U_STAR / 0.7 * 0.3) < 1e-15);
            let f = |k: f64| k * sigma(-k * 0.7);
            let k = U_STAR / 0.7;
            assert!(f(k) > f(k * 1.001) && f(k) > f(k * 0.999) && f(k) < 1.0);
        }
        // Just below the threshold: two roots close to u*; just above: none.
        let s_below = TWO_ROOT_THRESHOLD * (1.0 - 1e-6);
        let r = reconstruct_features(&[s_below], &[1.0], 1, None).unwrap();
        assert_eq!(r.status, CandidateStatus::TwoRoots);
        assert!(r
            .scales
            .iter()
            .all(|k| libm::fabs(k * s_below - U_STAR) < 0.01));
        let s_above = TWO_ROOT_THRESHOLD * (1.0 + 1e-6);
        let r = reconstruct_features(&[s_above], &[1.0], 1, None).unwrap();
        assert_eq!(r.status, CandidateStatus::NoRoot);
    }

    /// Intercept: the ratio is exact whatever the label; B₀ of the wrong sign or too large is
    /// NoRoot (candidate kept); B₀ = 0 is DegenerateB0 without a candidate.
    #[test]
    fn intercept_ratio_and_its_degenerate_cases() {
        let c0 = 0.7;
        let x = [c0, 0.2, 0.9, 0.0];
        let w = [0.3, -2.0, 1.0, 0.5];
        for y in [0u32, 1] {
            let r = reconstruct_features(&minus_grad(&w, &x, y), &w, y, Some(c0)).unwrap();
            assert_eq!(r.status, CandidateStatus::Unique);
            assert!(max_abs_diff(&r.candidates[0], &x) < 1e-15);
            // The other label's B₀ has the wrong sign: no exact preimage for this label.
            let r = reconstruct_features(&minus_grad(&w, &x, 1 - y), &w, y, Some(c0)).unwrap();
            assert_eq!(r.status, CandidateStatus::NoRoot);
            assert!(max_abs_diff(&r.candidates[0], &x) < 1e-15);
        }
        // |B₀| ≥ c₀: residual magnitude ≥ 1, impossible.
        let r = reconstruct_features(&[-0.8, 0.1], &[1.0, 1.0], 1, Some(c0)).unwrap();
        assert_eq!(r.status, CandidateStatus::NoRoot);
        let r = reconstruct_features(&[0.8, 0.1], &[1.0, 1.0], 1, Some(c0)).unwrap();
        assert_eq!(r.status, CandidateStatus::NoRoot);
        let r = reconstruct_features(&[0.5, 0.1], &[1.0, 1.0], 1, Some(c0)).unwrap();
        assert_eq!(r.status, CandidateStatus::Unique);
        for b0 in [0.0, -0.0, 1e-320] {
            let r = reconstruct_features(&[b0, 0.1], &[1.0, 1.0], 1, Some(c0)).unwrap();
            assert_eq!(r.status, CandidateStatus::DegenerateB0, "{b0}");
            assert!(r.candidates.is_empty() && r.scales.is_empty());
        }
        // A tiny but representable ratio is returned (B taken as exact).
        let r = reconstruct_features(&[1e-300, 1e-300], &[1.0, 1.0], 1, Some(c0)).unwrap();
        assert_eq!(r.status, CandidateStatus::Unique);
        assert_eq!(r.candidates[0][1], 1e-300 * (c0 / 1e-300));
    }

    /// σ = 0 on a small data set: B = −∇ℓ_t at the minimiser, so glm_attack recovers every
    /// target (1e-9) — and a B with (n − 1)λ instead of nλ does not (the normalisation
    /// matters). AllTargets agrees with glm_attack to 1e-12 (same candidates up to rounding).
    #[test]
    fn sigma0_recovery_normalisation_and_all_targets_agree() {
        let mut rng = Rng::from_seed(4);
        let (n, d) = (40usize, 6usize);
        let features: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let labels: Vec<u32> = (0..n).map(|i| (i % 3 == 0) as u32).collect();
        let raw = Dataset::new(features, labels, (1, 1, d), 2).unwrap();
        let lambda = 0.02;
        for intercept in [true, false] {
            let e = LinearEmbedding::new(d, intercept).unwrap();
            let train = e.embed_dataset(&raw).unwrap();
            let w = fit(&train, lambda).unwrap().weights;
            let all = AllTargets::new(&raw, lambda, &e)
                .unwrap()
                .attack_all(&w)
                .unwrap();
            for (t, from_all) in all.iter().enumerate() {
                let (x, y) = raw.example(t).unwrap();
                let rest: Vec<usize> = (0..n).filter(|&j| j != t).collect();
                let known = raw.subset(&rest).unwrap();
                let r = glm_attack(&known, y, lambda, &w, &e).unwrap();
                let best = r
                    .candidates
                    .iter()
                    .map(|c| max_abs_diff(c, x))
                    .fold(f64::INFINITY, f64::min);
                assert!(best < 1e-9, "intercept {intercept}, target {t}: {best}");
                assert_eq!(r.status, from_all.status);
                for (a, b) in r.candidates.iter().zip(&from_all.candidates) {
                    assert!(max_abs_diff(a, b) < 1e-12);
                }
                // The wrong normalisation (n − 1)λw̃ misses the target.
                let mut b =
                    residual_gradient(&e.embed_dataset(&known).unwrap(), lambda, &w).unwrap();
                for (bk, wk) in b.iter_mut().zip(&w) {
                    *bk -= lambda * wk;
                }
                let wrong = solve(&b, &w, y, e.constant(), 0.0).unwrap().3;
                let wrong_best = wrong
                    .iter()
                    .map(|c| max_abs_diff(&e.unembed(c).unwrap(), x))
                    .fold(f64::INFINITY, f64::min);
                assert!(wrong_best > 1e-6, "target {t}: {wrong_best}");
            }
        }
    }

    #[test]
    fn invalid_inputs_are_errors_naming_the_parameter() {
        let raw = Dataset::new(vec![0.1, 0.5, 0.9, 0.2], vec![0, 1], (1, 1, 2), 2).unwrap();
        let e = LinearEmbedding::with_intercept(2).unwrap();
        let w = [0.1, 0.2, 0.3];
        let name = |r: Result<GlmReconstruction>| error_name(r.unwrap_err());
        assert_eq!(name(glm_attack(&raw, 2, 0.1, &w, &e)), "label");
        assert_eq!(name(glm_attack(&raw, 1, -1.0, &w, &e)), "lambda");
        assert_eq!(name(glm_attack(&raw, 1, f64::NAN, &w, &e)), "lambda");
        assert_eq!(name(glm_attack(&raw, 1, 0.1, &w[..2], &e)), "inconsistent");
        assert_eq!(
            name(glm_attack(&raw, 1, 0.1, &[0.1, f64::NAN, 0.3], &e)),
            "released"
        );
        let e3 = LinearEmbedding::with_intercept(3).unwrap();
        assert_eq!(name(glm_attack(&raw, 1, 0.1, &w, &e3)), "inconsistent");
        let three = Dataset::new(vec![0.1; 6], vec![0, 1, 2], (1, 1, 2), 3).unwrap();
        assert_eq!(name(glm_attack(&three, 1, 0.1, &w, &e)), "num_classes");
        assert_eq!(name(reconstruct_features(&[1.0], &[1.0], 7, None)), "label");
        assert_eq!(
            name(reconstruct_features(&[1.0], &[1.0, 2.0], 0, None)),
            "inconsistent"
        );
        assert_eq!(
            name(reconstruct_features(&[], &[], 0, None)),
            "inconsistent"
        );
        assert_eq!(
            name(reconstruct_features(&[f64::INFINITY], &[1.0], 0, None)),
            "b"
        );
        assert_eq!(
            name(reconstruct_features(&[1.0], &[f64::NAN], 0, None)),
            "released"
        );
        assert_eq!(
            name(reconstruct_features(&[1.0, 1.0], &[1.0, 1.0], 0, Some(0.0))),
            "intercept"
        );
        assert_eq!(
            error_name(residual_gradient(&raw, 0.0, &[0.0, 0.0]).unwrap_err()),
            "lambda"
        );
        let all = AllTargets::new(&raw, 0.1, &e).unwrap();
        assert_eq!(
            error_name(all.attack_all(&w[..2]).unwrap_err()),
            "inconsistent"
        );
        assert_eq!(
            error_name(all.attack_all(&[f64::INFINITY, 0.0, 0.0]).unwrap_err()),
            "released"
        );
        assert_eq!(
            error_name(AllTargets::new(&raw, 0.1, &e3).unwrap_err()),
            "inconsistent"
        );
    }
}
