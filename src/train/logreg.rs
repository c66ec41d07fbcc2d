//! Output-perturbed L2-regularised logistic regression (Chaudhuri, Monteleoni, Sarwate 2011;
//! Guo et al. 2022, Sec. 7.1): the exact minimiser w* of
//!
//! J(w) = (1/n) Σ_i ℓ(w·x_i, y_i) + (λ/2)‖w‖²,  ℓ(z, y) = ln(1 + e^z) − y·z,  y ∈ {0, 1},
//!
//! by Newton's method, released as h = w* + N(0, σ²I).
//!
//! The model is linear **without an intercept** (w ∈ ℝ^d, predict 1 iff w·x > 0): the
//! sensitivity ‖w*(D) − w*(D′)‖ ≤ 2/(nλ) behind ε = 4/(nλσ)² needs every (augmented) feature
//! vector in the unit ball, which a constant feature 1 would break. Append a constant
//! feature yourself (and rescale into the unit ball) if you need a bias.

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
    if let Some(&bad) = w.iter().find(|v| !v.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "w",
            value: bad,
            expected: "finite",
        });
    }
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
    let mut rng = Rng::for_trial(seed, 0);
    let released = fit
        .weights
        .iter()
        .map(|&w| w + noise_std * rng.gaussian())
        .collect();
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
