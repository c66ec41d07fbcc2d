//! Output-perturbed L2-regularised logistic regression (Chaudhuri, Monteleoni, Sarwate 2011;
//! Guo et al. 2022, Sec. 7.1): the exact minimiser w* of
//!
//! J(w) = (1/n) Σ_i ℓ(w·x_i, y_i) + (λ/2)‖w‖²,  ℓ(z, y) = ln(1 + e^z) − y·z,  y ∈ {0, 1},
//!
//! by Newton's method, released as h = w* + N(0, σ²I).
//!
//! The model is linear **without an intercept** (w ∈ ℝ^d, predict 1 iff w·x > 0): the
//! sensitivity ‖w*(D) − w*(D′)‖ ≤ 2/(nλ) behind ε = 4/(nλσ)² needs every feature vector in
//! the unit ball, which a constant feature 1 next to the raw features would break.
//!
//! # An intercept inside the unit ball: [`LinearEmbedding`]
//!
//! To fit a bias and keep ε = 4/(nλσ)² a guarantee, the raw features x ∈ [0, 1]^d (every
//! [`Dataset`] lies there) go through a **fixed, data-independent linear embedding** before
//! training ([`LinearEmbedding::with_intercept`]):
//!
//! ```text
//! x_aug = (c₀, a·x) ∈ ℝ^{d+1},   c₀ = 1/(t√2),   a = 1/(t√(2d)),   t = 1 + (d + 8)·2⁻⁵²,
//! ```
//!
//! the constant feature c₀ **first** (coordinate 0, so that the GLM attack's B₀ is its
//! coefficient, [`crate::attacks::glm`]). Then ‖x_aug‖² = c₀² + a²‖x‖² ≤ (1/2 + d/(2d))/t²
//! = 1/t² ≤ 1 for **every** x ∈ [0, 1]^d (‖x‖² ≤ d), so the sensitivity 2/(nλ) and
//! ε = 4/(nλσ)² hold for the embedded data — over neighbouring data sets anywhere in
//! [0, 1]^d, because the map does not depend on the data. t > 1 covers rounding: the
//! computed ‖x_aug‖ (sum of d + 1 squares, relative error ≤ (d + 1)·2⁻⁵³, plus a few
//! roundings of a, c₀ and the products) stays ≤ 1, so [`output_perturbation`]'s check passes.
//! The intercept w₀ is **regularised like every other weight** ((λ/2)‖w‖² includes w₀²):
//! the λ-strong convexity in every direction is what the sensitivity argument uses, and the
//! bias is simply the weight of a constant feature, w₀·c₀.
//!
//! The map is invertible on its image: x = x_aug[1..]/a ([`LinearEmbedding::unembed`]), so a
//! reconstruction of x_aug maps back to raw pixels exactly (up to rounding), and MSEs and the
//! Fisher information ([`crate::accounting::fil::logreg::embedded_output_perturbation_fil`])
//! are measured in raw [0, 1]^d units. [`LinearEmbedding::without_intercept`] is the same map
//! without the constant (a = 1/(t√d)), for a model through the origin on the same scale.
//!
//! Use: `let e = LinearEmbedding::with_intercept(raw.dim())?; let data = e.embed_dataset(&raw)?;`
//! then [`fit`] / [`output_perturbation`] / [`accuracy`] on `data` as usual. The functions of
//! this module are unchanged: the intercept is just a feature.

use crate::data::Dataset;
use crate::error::{check_positive, Error, Result};
use crate::math::linalg::{cholesky_in_place, cholesky_solve};
use crate::rng::Rng;
use alloc::vec::Vec;

/// Newton stops when ‖∇J‖ ≤ this times ‖∇J(0)‖ (or when it stagnates, see [`fit`]).
pub const TARGET_RELATIVE_GRADIENT: f64 = 1e-13;
/// [`fit`] fails unless the final ‖∇J‖ ≤ this times ‖∇J(0)‖.
pub const REQUIRED_RELATIVE_GRADIENT: f64 = 1e-10;
/// The largest number of Newton iterations.
pub const MAX_NEWTON_ITERATIONS: u32 = 100;

/// The minimiser found by [`fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct LogisticFit {
    /// w* (length d).
    pub weights: Vec<f64>,
    /// ‖∇J(w*)‖₂ at the returned weights.
    pub gradient_norm: f64,
    /// ‖∇J(0)‖₂, the scale of the relative criterion.
    pub initial_gradient_norm: f64,
    /// Newton iterations taken.
    pub iterations: u32,
    /// J(w*).
    pub objective: f64,
}

/// The logistic function, stable for every finite z.
pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + libm::exp(-z))
    } else {
        let e = libm::exp(z);
        e / (1.0 + e)
    }
}

/// The residual σ(z) − y of label y ∈ {0, 1}, accurate in both tails (−σ(−z) for y = 1,
/// so that 1 − σ(z) keeps its relative precision when it is tiny).
pub(crate) fn residual(z: f64, y: u32) -> f64 {
    if y == 1 {
        -sigmoid(-z)
    } else {
        sigmoid(z)
    }
}

/// ln(1 + e^z) − y·z, stable.
fn logistic_loss(z: f64, y: f64) -> f64 {
    z.max(0.0) + libm::log1p(libm::exp(-libm::fabs(z))) - y * z
}

/// a·b in index order.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// ‖a‖₂.
pub(crate) fn norm(a: &[f64]) -> f64 {
    libm::sqrt(dot(a, a))
}

/// [`Error::InvalidCount`] `num_classes` unless the data have 2 classes.
pub(crate) fn check_binary(data: &Dataset) -> Result<()> {
    if data.num_classes() != 2 {
        return Err(Error::InvalidCount {
            name: "num_classes",
            value: data.num_classes() as u64,
            expected: "2 (labels 0 and 1)",
        });
    }
    Ok(())
}

/// J(w) and ∇J(w) (written into `grad`, length d).
///
/// # Formula
///
/// J(w) = (1/n) Σ_i [ln(1 + e^{w·x_i}) − y_i w·x_i] + (λ/2)‖w‖²;
/// ∇J(w) = (1/n) Σ_i (σ(w·x_i) − y_i) x_i + λw.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `lambda` unless finite and > 0; [`Error::InvalidCount`]
/// `num_classes` unless the data have 2 classes; [`Error::Inconsistent`] if `w` or `grad`
/// is not of length d; [`Error::InvalidParameter`] `w` if an entry is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::data::Dataset;
/// use reconbound::train::logreg::objective_and_gradient;
/// let data = Dataset::new(vec![1.0, 0.0], vec![1, 0], (1, 1, 1), 2)?;
/// let mut g = [0.0];
/// // w = 0: J = ln 2, ∇J = ((1/2 − 1)·1 + (1/2 − 0)·0)/2 = −1/4.
/// let j = objective_and_gradient(&data, 0.1, &[0.0], &mut g)?;
/// assert!((j - core::f64::consts::LN_2).abs() < 1e-15 && g[0] == -0.25);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn objective_and_gradient(
    data: &Dataset,
    lambda: f64,
    w: &[f64],
    grad: &mut [f64],
) -> Result<f64> {
    check_positive("lambda", lambda)?;
    check_binary(data)?;
    let d = data.dim();
    if w.len() != d || grad.len() != d {
        return Err(Error::Inconsistent {
            what: "w and grad must have the data's dimension",
            value: w.len() as f64,
        });
    }
    check_finite_weights("w", w)?;
    Ok(objective_unchecked(data, lambda, w, grad))
}

fn objective_unchecked(data: &Dataset, lambda: f64, w: &[f64], grad: &mut [f64]) -> f64 {
    grad.iter_mut().for_each(|g| *g = 0.0);
    let mut loss = 0.0;
    for (x, y) in data.iter() {
        let y = f64::from(y);
        let z = dot(w, x);
        loss += logistic_loss(z, y);
        let r = sigmoid(z) - y;
        if r != 0.0 {
            for (g, &xi) in grad.iter_mut().zip(x) {
                *g += r * xi;
            }
        }
    }
    let n = data.len() as f64;
    for (g, &wi) in grad.iter_mut().zip(w) {
        *g = *g / n + lambda * wi;
    }
    loss / n + 0.5 * lambda * dot(w, w)
}

/// The Hessian (1/n) Σ_i σ_i(1 − σ_i) x_i x_iᵀ + λI, lower triangle, into `h` (d × d).
/// Shared with the Fisher information of [`crate::accounting::fil::logreg`].
pub(crate) fn hessian_lower(data: &Dataset, lambda: f64, w: &[f64], h: &mut [f64]) {
    let d = data.dim();
    h.iter_mut().for_each(|v| *v = 0.0);
    for (x, _) in data.iter() {
        let s = sigmoid(dot(w, x));
        let c = s * (1.0 - s);
        if c == 0.0 {
            continue;
        }
        for (r, &xr) in x.iter().enumerate() {
            if xr == 0.0 {
                continue;
            }
            let a = c * xr;
            if let Some(row) = h.get_mut(r * d..r * d + r + 1) {
                for (hv, &xc) in row.iter_mut().zip(x) {
                    *hv += a * xc;
                }
            }
        }
    }
    let n = data.len() as f64;
    for r in 0..d {
        if let Some(row) = h.get_mut(r * d..r * d + r + 1) {
            for v in row.iter_mut() {
                *v /= n;
            }
            if let Some(diag) = row.last_mut() {
                *diag += lambda;
            }
        }
    }
}

/// The exact minimiser of J (module docs) by Newton's method with a backtracking line
/// search, from w = 0.
///
/// # Formula
///
/// w ← w − t·H⁻¹∇J(w), H = (1/n) Σ_i σ(w·x_i)(1 − σ(w·x_i)) x_i x_iᵀ + λI (solved by
/// Cholesky, [`cholesky_in_place`]); t = 1, halved until J decreases by at least
/// 10⁻⁴·t·∇Jᵀ H⁻¹∇J (Armijo) — or, at the rounding floor of J, until ‖∇J‖ decreases. J is
/// λ-strongly convex, so w* is unique and Newton converges quadratically near it. Stops when
/// ‖∇J‖ ≤ [`TARGET_RELATIVE_GRADIENT`]·‖∇J(0)‖, or when three iterations in a row do not
/// reduce ‖∇J‖ (the rounding floor).
///
/// # Citations
///
/// Nocedal & Wright, *Numerical Optimization*, 2nd ed., Alg. 3.1 and Sec. 3.3 (Newton with
/// backtracking); Guo et al. 2022, Sec. 7.1 (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// [`Error::InvalidParameter`] `lambda` unless finite and > 0; [`Error::InvalidCount`]
/// `num_classes` unless 2; [`Error::NotConverged`] if the final ‖∇J‖ exceeds
/// [`REQUIRED_RELATIVE_GRADIENT`]·‖∇J(0)‖ (the value is the relative gradient norm);
/// [`Error::Numerical`] if the Hessian cannot be factored.
///
/// # Examples
///
/// ```
/// use reconbound::data::synthetic::linearly_separable;
/// use reconbound::train::logreg::fit;
/// let (data, _) = linearly_separable(100, 5, 0.1, 3)?;
/// let f = fit(&data, 1e-2)?;
/// assert!(f.gradient_norm <= 1e-10 * f.initial_gradient_norm);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn fit(data: &Dataset, lambda: f64) -> Result<LogisticFit> {
    check_positive("lambda", lambda)?;
    check_binary(data)?;
    let d = data.dim();
    let hess_len = d.checked_mul(d).ok_or(Error::InvalidCount {
        name: "dim",
        value: d as u64,
        expected: "small enough for a d × d Hessian",
    })?;
    let mut w = alloc::vec![0.0; d];
    let mut g = alloc::vec![0.0; d];
    let mut j = objective_unchecked(data, lambda, &w, &mut g);
    let g0 = norm(&g);
    let mut gn = g0;
    let mut h = alloc::vec![0.0; hess_len];
    let mut step = alloc::vec![0.0; d];
    let mut w_new = alloc::vec![0.0; d];
    let mut g_new = alloc::vec![0.0; d];
    let mut iterations = 0;
    let mut stalled = 0;
    while gn > TARGET_RELATIVE_GRADIENT * g0 && iterations < MAX_NEWTON_ITERATIONS && stalled < 3 {
        iterations += 1;
        hessian_lower(data, lambda, &w, &mut h);
        cholesky_in_place(&mut h, d)?;
        step.copy_from_slice(&g);
        cholesky_solve(&h, d, &mut step)?;
        let decrement = dot(&g, &step); // ∇Jᵀ H⁻¹ ∇J ≥ 0
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            for ((wn, &wi), &si) in w_new.iter_mut().zip(&w).zip(&step) {
                *wn = wi - t * si;
            }
            let j_new = objective_unchecked(data, lambda, &w_new, &mut g_new);
            let gn_new = norm(&g_new);
            let armijo = j_new <= j - 1e-4 * t * decrement;
            let floor = j_new <= j + 8.0 * f64::EPSILON * libm::fabs(j) && gn_new < gn;
            if j_new.is_finite() && (armijo || floor) {
                accepted = true;
                if gn_new < gn {
                    stalled = 0;
                } else {
                    stalled += 1;
                }
                core::mem::swap(&mut w, &mut w_new);
                core::mem::swap(&mut g, &mut g_new);
                j = j_new;
                gn = gn_new;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            // No decrease possible at this precision: we are at the rounding floor.
            break;
        }
    }
    if gn.is_nan() || gn > REQUIRED_RELATIVE_GRADIENT * g0 {
        return Err(Error::NotConverged {
            what: "Newton's method for logistic regression (value: relative gradient norm)",
            value: if g0 > 0.0 { gn / g0 } else { gn },
        });
    }
    Ok(LogisticFit {
        weights: w,
        gradient_norm: gn,
        initial_gradient_norm: g0,
        iterations,
        objective: j,
    })
}

/// The output-perturbed release of [`output_perturbation`].
#[derive(Clone, Debug, PartialEq)]
pub struct OutputPerturbation {
    /// The exact minimiser and its diagnostics.
    pub fit: LogisticFit,
    /// h = w* + N(0, σ²I).
    pub released: Vec<f64>,
    /// The L2 sensitivity of w*, 2/(nλ) (rounded up).
    pub sensitivity: f64,
    /// ε of (2, ε)-RDP: 4/(nλσ)² ([`crate::accounting::rdp::output_perturbation_rdp`]).
    pub rdp_order2: f64,
}

/// Output perturbation: w* = [`fit`]`(data, lambda)` released with N(0, σ²I) noise drawn
/// from `Rng::for_trial(seed, 0)`.
///
/// # Formula
///
/// h = w* + σ·Z, Z ~ N(0, I_d); sensitivity ‖w*(D) − w*(D′)‖ ≤ 2/(nλ) for ‖x‖ ≤ 1 (the
/// loss is 1-Lipschitz in w·x), hence (2, ε)-RDP with ε = 2·(2/(nλ))²/(2σ²) = 4/(nλσ)².
///
/// # Citations
///
/// Chaudhuri, Monteleoni, Sarwate 2011, Cor. 8; Guo et al. 2022, Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`; the earlier version's 2/(nλσ) is wrong);
/// Mironov 2017, Prop. 7.
///
/// # Errors
///
/// As [`fit`]; [`Error::InvalidParameter`] `noise_std` unless finite and > 0; `data` if some
/// ‖x_i‖ > 1 (the value is the largest norm; use
/// [`Dataset::project_to_unit_ball`]).
///
/// # Examples
///
/// ```
/// use reconbound::data::synthetic::linearly_separable;
/// use reconbound::train::logreg::output_perturbation;
/// let data = linearly_separable(100, 5, 0.1, 3)?.0.project_to_unit_ball();
/// let out = output_perturbation(&data, 1e-2, 1.0, 7)?;
/// // ε = 4/(nλσ)² = 4/(100 · 0.01 · 1)² = 4.
/// assert!((out.rdp_order2 - 4.0).abs() < 1e-12);
/// assert_eq!(out.released.len(), 5);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn output_perturbation(
    data: &Dataset,
    lambda: f64,
    noise_std: f64,
    seed: u64,
) -> Result<OutputPerturbation> {
    check_positive("lambda", lambda)?;
    check_positive("noise_std", noise_std)?;
    check_binary(data)?;
    let max_norm = data.max_l2_norm();
    if max_norm.is_nan() || max_norm > 1.0 {
        return Err(Error::InvalidParameter {
            name: "data",
            value: max_norm,
            expected: "every ||x|| <= 1 (project_to_unit_ball)",
        });
    }
    let rdp_order2 =
        crate::accounting::rdp::output_perturbation_rdp(data.len() as u64, lambda, noise_std)?;
    let fit = fit(data, lambda)?;
    let released = perturb_unchecked(&fit.weights, noise_std, seed, 0);
    let sensitivity = 2.0 / (data.len() as f64 * lambda) * (1.0 + 4.0 * f64::EPSILON);
    Ok(OutputPerturbation {
        fit,
        released,
        sensitivity,
        rdp_order2,
    })
}

/// The fraction of `data` classified correctly by the linear rule "1 iff w·x > 0".
///
/// # Errors
///
/// [`Error::Inconsistent`] if `weights.len() != data.dim()`; [`Error::InvalidCount`]
/// `num_classes` unless 2.
///
/// ```
/// use reconbound::data::Dataset;
/// use reconbound::train::logreg::accuracy;
/// let data = Dataset::new(vec![1.0, 0.0, 0.0, 1.0], vec![1, 0], (1, 1, 2), 2)?;
/// assert_eq!(accuracy(&[1.0, -1.0], &data)?, 1.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn accuracy(weights: &[f64], data: &Dataset) -> Result<f64> {
    check_binary(data)?;
    if weights.len() != data.dim() {
        return Err(Error::Inconsistent {
            what: "weights.len() must equal the data's dimension",
            value: weights.len() as f64,
        });
    }
    let correct = data
        .iter()
        .filter(|(x, y)| u32::from(dot(weights, x) > 0.0) == *y)
        .count();
    Ok(correct as f64 / data.len() as f64)
}

/// The released weights of noise draw `trial`: w + σ·Z, Z ~ N(0, I) drawn coordinate by
/// coordinate from `Rng::for_trial(seed, trial)` — the draw [`output_perturbation`] makes
/// (with `trial = 0`), shared by the command line and the attacks so that trial `r` of a
/// seed is the same release everywhere.
///
/// # Formula
///
/// h_k = w_k + σ·Z_k, k = 0, …, p − 1, Z_k the k-th Gaussian of the stream (σ = 0: h = w).
///
/// # Citations
///
/// Chaudhuri, Monteleoni, Sarwate 2011 (output perturbation); Guo et al. 2022, Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_std` unless finite and ≥ 0; `weights` if an entry is
/// not finite.
///
/// # Examples
///
/// ```
/// use reconbound::train::logreg::perturb;
/// let w = [0.5, -1.0];
/// assert_eq!(perturb(&w, 0.0, 7, 3)?, w.to_vec());
/// let a = perturb(&w, 0.1, 7, 3)?;
/// assert_eq!(a, perturb(&w, 0.1, 7, 3)?); // deterministic per (seed, trial)
/// assert_ne!(a, perturb(&w, 0.1, 7, 4)?);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn perturb(weights: &[f64], noise_std: f64, seed: u64, trial: u64) -> Result<Vec<f64>> {
    crate::error::check_non_negative("noise_std", noise_std)?;
    check_finite_weights("weights", weights)?;
    Ok(perturb_unchecked(weights, noise_std, seed, trial))
}

fn perturb_unchecked(weights: &[f64], noise_std: f64, seed: u64, trial: u64) -> Vec<f64> {
    let mut rng = Rng::for_trial(seed, trial);
    weights
        .iter()
        .map(|&w| w + noise_std * rng.gaussian())
        .collect()
}

/// [`Error::InvalidParameter`] `name` if an entry of `w` is not finite.
pub(crate) fn check_finite_weights(name: &'static str, w: &[f64]) -> Result<()> {
    match w.iter().find(|v| !v.is_finite()) {
        Some(&bad) => Err(Error::InvalidParameter {
            name,
            value: bad,
            expected: "finite",
        }),
        None => Ok(()),
    }
}

/// The fixed linear embedding of raw features x ∈ [0, 1]^d into the unit ball (module docs):
/// with an intercept x_aug = (c₀, a·x), c₀ = 1/(t√2), a = 1/(t√(2d)); without one
/// x_aug = a·x, a = 1/(t√d); t = 1 + (d + 8)·2⁻⁵² in both.
///
/// One value for the mechanism, the attacks, the Fisher information and the command line:
/// build it with [`LinearEmbedding::with_intercept`] or [`LinearEmbedding::without_intercept`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearEmbedding {
    raw_dim: usize,
    intercept: bool,
    scale: f64,
    constant: f64,
}

impl LinearEmbedding {
    /// The embedding with a constant feature c₀ = 1/(t√2) at coordinate 0 and the raw
    /// features scaled by a = 1/(t√(2d)) at coordinates 1..=d.
    ///
    /// # Formula
    ///
    /// x_aug = (c₀, a·x); ‖x_aug‖² = (1 + ‖x‖²/d)/(2t²) ≤ 1/t² for x ∈ [0, 1]^d.
    ///
    /// # Citations
    ///
    /// Chaudhuri, Monteleoni, Sarwate 2011 (the sensitivity 2/(nλ) needs ‖x‖ ≤ 1); Guo et al.
    /// 2022, Sec. 7.1 (`guo2022-bounding-reconstruction-fil-rdp.txt`: ε = 4/(nλσ)²).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `raw_dim` if 0 or if d + 1 overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::train::logreg::LinearEmbedding;
    /// let e = LinearEmbedding::with_intercept(784)?;
    /// assert_eq!((e.raw_dim(), e.dim(), e.offset()), (784, 785, 1));
    /// let ones = vec![1.0; 784];
    /// let x = e.embed(&ones)?;
    /// assert!(x.iter().map(|v| v * v).sum::<f64>().sqrt() <= 1.0);
    /// assert!((e.unembed(&x)?[17] - 1.0).abs() < 1e-15);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn with_intercept(raw_dim: usize) -> Result<Self> {
        Self::new(raw_dim, true)
    }

    /// The embedding without an intercept: x_aug = a·x, a = 1/(t√d) (‖x_aug‖ ≤ 1/t on
    /// [0, 1]^d).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `raw_dim` if 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::train::logreg::LinearEmbedding;
    /// let e = LinearEmbedding::without_intercept(4)?;
    /// assert_eq!((e.dim(), e.offset(), e.constant()), (4, 0, None));
    /// assert!((e.scale() - 0.5).abs() < 1e-14);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn without_intercept(raw_dim: usize) -> Result<Self> {
        Self::new(raw_dim, false)
    }

    /// [`LinearEmbedding::with_intercept`] if `intercept`, else
    /// [`LinearEmbedding::without_intercept`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `raw_dim` if 0 or if d + 1 overflows.
    pub fn new(raw_dim: usize, intercept: bool) -> Result<Self> {
        if raw_dim == 0 || raw_dim == usize::MAX {
            return Err(Error::InvalidCount {
                name: "raw_dim",
                value: raw_dim as u64,
                expected: ">= 1 (and d + 1 representable)",
            });
        }
        let d = raw_dim as f64;
        let t = 1.0 + (d + 8.0) * f64::EPSILON;
        let (scale, constant) = if intercept {
            (
                1.0 / (t * libm::sqrt(2.0 * d)),
                1.0 / (t * core::f64::consts::SQRT_2),
            )
        } else {
            (1.0 / (t * libm::sqrt(d)), 0.0)
        };
        Ok(LinearEmbedding {
            raw_dim,
            intercept,
            scale,
            constant,
        })
    }

    /// d, the number of raw features.
    pub fn raw_dim(&self) -> usize {
        self.raw_dim
    }

    /// The number of model features: d + 1 with an intercept, d without.
    pub fn dim(&self) -> usize {
        self.raw_dim + self.offset()
    }

    /// Whether coordinate 0 is the constant feature.
    pub fn has_intercept(&self) -> bool {
        self.intercept
    }

    /// The index of the first raw feature in x_aug: 1 with an intercept, 0 without.
    pub fn offset(&self) -> usize {
        usize::from(self.intercept)
    }

    /// a, the factor applied to every raw feature.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// c₀, the value of the constant feature, if there is one.
    pub fn constant(&self) -> Option<f64> {
        self.intercept.then_some(self.constant)
    }

    /// x_aug of one raw example, written into `out` (length [`LinearEmbedding::dim`]); no
    /// checks.
    pub(crate) fn embed_into(&self, x: &[f64], out: &mut [f64]) {
        let off = self.offset();
        if let Some(c) = out.first_mut().filter(|_| self.intercept) {
            *c = self.constant;
        }
        for (o, &v) in out.iter_mut().skip(off).zip(x) {
            *o = self.scale * v;
        }
    }

    /// x_aug of one raw example x ∈ [0, 1]^d.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `x.len() != raw_dim`; [`Error::InvalidParameter`] `x` if
    /// an entry is not in [0, 1] (the domain on which ‖x_aug‖ ≤ 1 is guaranteed).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::train::logreg::LinearEmbedding;
    /// let e = LinearEmbedding::with_intercept(2)?;
    /// let x = e.embed(&[1.0, 0.0])?;
    /// // (c₀, a, 0) with c₀ = 1/√2 and a = 1/2, up to the factor t.
    /// assert!((x[0] - 0.5f64.sqrt()).abs() < 1e-14 && (x[1] - 0.5).abs() < 1e-14);
    /// assert!(e.embed(&[1.5, 0.0]).is_err());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn embed(&self, x: &[f64]) -> Result<Vec<f64>> {
        if x.len() != self.raw_dim {
            return Err(Error::Inconsistent {
                what: "x.len() must equal the embedding's raw dimension",
                value: x.len() as f64,
            });
        }
        if let Some(&bad) = x.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(Error::InvalidParameter {
                name: "x",
                value: bad,
                expected: "every feature finite and in [0, 1]",
            });
        }
        let mut out = alloc::vec![0.0; self.dim()];
        self.embed_into(x, &mut out);
        Ok(out)
    }

    /// Every example of `raw` embedded (shape (1, 1, [`LinearEmbedding::dim`]), the same
    /// labels): the training set of the model with this embedding. Every embedded norm is
    /// ≤ 1, so [`output_perturbation`] accepts it.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `raw.dim() != raw_dim`.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::data::embedded_mnist;
    /// use reconbound::train::logreg::LinearEmbedding;
    /// let raw = embedded_mnist()?.filter_labels(&[0, 1])?.flatten();
    /// let e = LinearEmbedding::with_intercept(raw.dim())?;
    /// let data = e.embed_dataset(&raw)?;
    /// assert_eq!((data.len(), data.dim()), (raw.len(), 785));
    /// assert!(data.max_l2_norm() <= 1.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn embed_dataset(&self, raw: &Dataset) -> Result<Dataset> {
        if raw.dim() != self.raw_dim {
            return Err(Error::Inconsistent {
                what: "the data's dimension must equal the embedding's raw dimension",
                value: raw.dim() as f64,
            });
        }
        let p = self.dim();
        let mut features = alloc::vec![0.0; raw.len() * p];
        for ((x, _), out) in raw.iter().zip(features.chunks_exact_mut(p)) {
            self.embed_into(x, out);
        }
        // a ≤ 1 and c₀ ≤ 1: the embedded features stay in [0, 1].
        Ok(Dataset::from_valid_parts(
            features,
            raw.labels().to_vec(),
            (1, 1, p),
            raw.num_classes(),
        ))
    }

    /// The raw features of a model-space vector: x = x_aug[offset..]/a (the constant
    /// coordinate, if any, is ignored). Exact inverse of [`LinearEmbedding::embed`] up to
    /// rounding; any finite or infinite value is mapped (reconstructions may leave [0, 1]).
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `features.len() != dim()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::train::logreg::LinearEmbedding;
    /// let e = LinearEmbedding::with_intercept(3)?;
    /// let x = [0.25, 1.0, 0.0];
    /// let back = e.unembed(&e.embed(&x)?)?;
    /// assert!(back.iter().zip(&x).all(|(a, b)| (a - b).abs() < 1e-15));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn unembed(&self, features: &[f64]) -> Result<Vec<f64>> {
        if features.len() != self.dim() {
            return Err(Error::Inconsistent {
                what: "features.len() must equal the embedding's dimension",
                value: features.len() as f64,
            });
        }
        Ok(features
            .iter()
            .skip(self.offset())
            .map(|v| v / self.scale)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ‖x_aug‖ ≤ 1 as computed (the same summation as [`Dataset::max_l2_norm`]) for the
    /// worst case x = 1 and for random x, over a range of d; without the factor t the
    /// all-ones vector would sit at norm 1 exactly in exact arithmetic, so rounding decides.
    #[test]
    fn embedded_norms_stay_in_the_unit_ball_as_computed() {
        let mut rng = Rng::from_seed(3);
        for d in [1usize, 2, 3, 7, 100, 784, 785, 3072, 10_000] {
            for intercept in [true, false] {
                let e = LinearEmbedding::new(d, intercept).unwrap();
                let mut xs = vec![vec![1.0; d]];
                xs.push((0..d).map(|_| rng.uniform()).collect());
                xs.push((0..d).map(|_| 1.0 - rng.uniform() * 1e-12).collect());
                for x in xs {
                    let v = e.embed(&x).unwrap();
                    let r = libm::sqrt(v.iter().map(|v| v * v).sum::<f64>());
                    assert!(r <= 1.0, "d = {d}, intercept {intercept}: {r}");
                }
                // Exact algebra: c₀² + d·a² = 1/t² with an intercept, d·a² = 1/t² without
                // (tolerance a few ulps).
                let t = 1.0 + (d as f64 + 8.0) * f64::EPSILON;
                let c = e.constant().unwrap_or(0.0);
                let total = c * c + d as f64 * e.scale() * e.scale();
                assert!(libm::fabs(total * t * t - 1.0) < 8.0 * f64::EPSILON);
                if intercept {
                    // c₀/a = √d: the GLM attack's ratio maps back to pixels by this factor.
                    assert!(libm::fabs(c / e.scale() / libm::sqrt(d as f64) - 1.0) < 4e-16);
                }
            }
        }
    }

    #[test]
    fn embedding_round_trips_and_validates() {
        let e = LinearEmbedding::with_intercept(5).unwrap();
        let x = [0.0, 0.1, 0.5, 0.999, 1.0];
        let v = e.embed(&x).unwrap();
        assert_eq!(v[0], e.constant().unwrap());
        let back = e.unembed(&v).unwrap();
        for (a, b) in back.iter().zip(&x) {
            assert!(libm::fabs(a - b) <= 2.0 * f64::EPSILON, "{a} vs {b}");
        }
        assert!(matches!(e.embed(&x[..4]), Err(Error::Inconsistent { .. })));
        assert_eq!(
            e.embed(&[0.0, 0.0, f64::NAN, 0.0, 0.0])
                .unwrap_err()
                .parameter(),
            Some("x")
        );
        assert_eq!(
            e.embed(&[0.0, 0.0, -0.1, 0.0, 0.0])
                .unwrap_err()
                .parameter(),
            Some("x")
        );
        assert!(matches!(
            e.unembed(&v[..5]),
            Err(Error::Inconsistent { .. })
        ));
        assert_eq!(
            LinearEmbedding::with_intercept(0).unwrap_err().parameter(),
            Some("raw_dim")
        );
        let data = Dataset::new(vec![0.2, 0.4, 1.0, 1.0], vec![0, 1], (1, 1, 2), 2).unwrap();
        let e2 = LinearEmbedding::with_intercept(2).unwrap();
        let emb = e2.embed_dataset(&data).unwrap();
        assert_eq!(emb.shape(), (1, 1, 3));
        assert_eq!(emb.labels(), data.labels());
        assert_eq!(
            emb.example(1).unwrap().0,
            &e2.embed(&[1.0, 1.0]).unwrap()[..]
        );
        assert!(emb.max_l2_norm() <= 1.0);
        assert!(e.embed_dataset(&data).is_err());
        // The release of trial 0 is output_perturbation's, bit for bit.
        let out = output_perturbation(&emb, 0.1, 0.3, 11).unwrap();
        assert_eq!(perturb(&out.fit.weights, 0.3, 11, 0).unwrap(), out.released);
        assert_eq!(
            perturb(&[1.0], -1.0, 0, 0).unwrap_err().parameter(),
            Some("noise_std")
        );
        assert_eq!(
            perturb(&[f64::INFINITY], 1.0, 0, 0)
                .unwrap_err()
                .parameter(),
            Some("weights")
        );
    }
}
