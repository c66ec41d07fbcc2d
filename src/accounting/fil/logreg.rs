//! Fisher information leakage (FIL) of output-perturbed L2-regularised logistic regression
//! (Guo et al. 2022, Sec. 7.1; Hannun et al. 2021): per training example, the Fisher
//! information of the release h = w* + N(0, σ²I) about the example's features, its trace,
//! the dFIL η̄² = Tr(I)/d and the Thm 2 bound MSE ≥ d/Tr(I) — beside the (2, ε)-RDP of the
//! same mechanism and the Thm 1 bound it gives.
//!
//! # The mechanism
//!
//! [`crate::train::logreg`]: w* = argmin_w J(w), J(w) = (1/n) Σ_i ℓ(w·x_i, y_i) + (λ/2)‖w‖²,
//! ℓ(z, y) = ln(1 + e^z) − y·z, no intercept, released as h = w* + N(0, σ²I_d). With
//! ‖x_i‖ ≤ 1 it is (2, ε)-RDP with ε = 4/(nλσ)² (replace-one adjacency, n fixed).
//!
//! # The Fisher information
//!
//! h is Gaussian with mean w*(x_j), so I_h(x_j) = Jᵀ J / σ² with J = ∂w*/∂x_j (d × d). By the
//! implicit function theorem applied to ∇_w J(w*) = 0,
//!
//! ```text
//! J = −H⁻¹ N,   H = (1/n) Σ_i s_i′ x_i x_iᵀ + λI,   N = ∂(∇_w J)/∂x_j = (1/n) [a I + b x_j wᵀ],
//! ```
//!
//! with z = w*·x_j, s = σ(z) (the logistic function), a = s − y_j, b = s′ = s(1 − s):
//! ∇_w ℓ = (s − y) x, whose derivative along x_j is a·I (from the factor x) plus b·x wᵀ (from s).
//! Hence, with A = H⁻¹, v = A x_j and u = A w,
//!
//! ```text
//! Tr I_h(x_j) = ‖a A + b v wᵀ‖_F² / (nσ)² = (a²‖A‖_F² + 2ab u·v + b²‖v‖²‖w‖²) / (nσ)².
//! ```
//!
//! H is factored once (Cholesky), A formed by d solves, and each example costs one product
//! A x_j (skipping zero features): O(d³ + n·nnz·d) in all.
//!
//! **The FIL does not depend on the noise draw**: w* is deterministic, and the Fisher
//! information of a Gaussian location family is the same at every h. Guo et al. average 10
//! runs (their public code refits w* by L-BFGS from a random start each time); here the
//! value is exact, computed once.
//!
//! # Data in the unit ball: [`InputSpace`]
//!
//! The sensitivity 2/(nλ) behind ε needs ‖x‖ ≤ 1. Guo et al. state x ∈ [0, 1]^784 and their
//! public code does *not* normalise (MNIST images have ‖x‖ ≈ 9–10), so their ε = 4/(nλσ)² is
//! not a guarantee for the data it was computed on. Two consistent options are offered:
//!
//! - [`output_perturbation_fil`] ([`InputSpace::UnitBall`]): the features as given, which
//!   must lie in the unit ball; the FIL is about them.
//! - [`projected_output_perturbation_fil`] ([`InputSpace::Projected`]): the mechanism first
//!   maps each raw example onto the unit ball ([`Dataset::project_to_unit_ball`],
//!   x′ = x/(t‖x‖) when t‖x‖ > 1, t = 1 + (d + 4)·2⁻⁵²), then trains; this is still
//!   (2, 4/(nλσ)²)-RDP about the raw data (one raw example changes one projected example),
//!   and the FIL is about the **raw** features, through the chain rule
//!   ∂x′/∂x = (I − x̂x̂ᵀ)/(t‖x‖), x̂ = x/‖x‖. With x′ = x̂/t, z = w·x′ and v = A x′:
//!   ‖J (I − x̂x̂ᵀ)‖_F² = ‖J‖_F² − ‖J x̂‖² and J x̂ ∝ t(a + b z) v, so
//!   Tr I = (a²‖A‖_F² + 2ab u·v + b²‖v‖²‖w‖² − t²(a + bz)²‖v‖²) / (t‖x‖nσ)².
//!   Then MSE is measured in the raw space [0, 1]^d, as in Guo's Fig. 2 (perfect-privacy
//!   line MSE = 1), and Thm 1 applies with diam_i = 1.
//! - [`embedded_output_perturbation_fil`] ([`InputSpace::Embedded`]): the mechanism maps each
//!   raw example x ∈ [0, 1]^d by the fixed linear [`LinearEmbedding`] of
//!   [`crate::train::logreg`] — with an intercept x_aug = (c₀, a·x), c₀ = 1/(t√2),
//!   a = 1/(t√(2d)), or without one x_aug = a·x, a = 1/(t√d) — and trains on x_aug ∈ ℝ^p
//!   (p = d + 1 or d; ‖x_aug‖ ≤ 1, so ε = 4/(nλσ)² holds). The FIL is about the **raw**
//!   pixels: ∂x_aug/∂x = a·P, P the p × d matrix that places x at the coordinates after the
//!   constant (the constant does not depend on x), so J_raw = a·J P: the columns of J of the
//!   pixel coordinates, times a. With A = H⁻¹ (p × p), Pw the weights with the intercept
//!   coordinate set to 0, u′ = A·Pw and v = A x_aug (the **whole** x_aug, the constant
//!   included: it enters through the b·x wᵀ term):
//!   Tr I = a²(a_r²‖AP‖_F² + 2a_r b u′·v + b²‖v‖²‖Pw‖²)/(nσ)² (a_r = s − y the residual) —
//!   the UnitBall formula with ‖A‖_F², u and ‖w‖² restricted to the pixel coordinates, times
//!   a². d/Tr(I) is then a bound on the MSE of x̂ in raw [0, 1]^d units (perfect-privacy line
//!   1), the units in which [`crate::attacks::glm`] measures its reconstructions.
//!
//! # What is certified
//!
//! Each trace is an upper bound (each MSE bound a lower bound) on the exact value at the
//! exact minimiser, **to first order** in the minimiser's error: the Newton solution ŵ of
//! [`crate::train::logreg::fit`] satisfies ‖ŵ − w*‖ ≤ δ = ‖∇J(ŵ)‖/λ (λ-strong convexity);
//! every term of the formula above changes by at most ρ = 2δ(4R + 2/‖ŵ‖ + κR³/(2λ)) times
//! its absolute value (for [`InputSpace::Embedded`] with an intercept, ‖Pŵ‖ replaces ‖ŵ‖:
//! the restricted weights move by at most δ too, relatively δ/‖Pŵ‖ ≥ δ/‖ŵ‖) (R = max‖x′‖ ≤ 1, κ = 1 + R²/(4λ) ≥ cond(H); |∂ln|a|/∂z| ≤ 1,
//! |∂ln b/∂z| ≤ 1, |s″| ≤ 0.0963), and ρ ≤ 10⁻³ is required (else
//! [`Error::NotConverged`]). Floating-point error of A (Cholesky solves: normwise relative
//! error ≤ 3d²κ·2⁻⁵³ per column, Higham Thm 10.4) and of the products is covered by
//! τ = 8(d + 2)^{5/2}κ²·2⁻⁵² (a pessimistic a-priori bound). The trace returned is
//! (max(T, 0) + (ρ + τ)·S)·(scale)·(1 + 16·2⁻⁵²), S the sum of the terms' absolute values
//! (with ‖u‖‖v‖ for |u·v|). At λ = σ = 10⁻², d = 784 the raise is ≈ 2·10⁻⁵ relative.
//!
//! # Citations
//!
//! Guo, Karrer, Chaudhuri, van der Maaten, "Bounding Training Data Reconstruction in Private
//! Deep Learning", ICML 2022, Sec. 5 (Eq. 1, Thm 2) and Sec. 7.1
//! (`guo2022-bounding-reconstruction-fil-rdp.txt`); Hannun, Guo, van der Maaten, "Measuring
//! Data Leakage in Machine-Learning Models with Fisher Information", UAI 2021 (the influence
//! Jacobian of logistic regression); Chaudhuri, Monteleoni, Sarwate 2011 (sensitivity).

use super::bounds::{dfil, unbiased_mse_bound};
use crate::accounting::{mse, rdp};
use crate::data::Dataset;
use crate::error::{check_positive, Error, Result};
use crate::math::linalg::{cholesky_in_place, cholesky_solve};
use crate::train::logreg::{
    check_binary, check_finite_weights, dot, fit, hessian_lower, norm, residual, LinearEmbedding,
    LogisticFit,
};
use alloc::vec::Vec;

/// The largest first-order relative effect of the minimiser's error that is accepted.
pub const MAX_MINIMISER_EFFECT: f64 = 1e-3;

/// Which input the Fisher information is about (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputSpace {
    /// The features as given (they must satisfy ‖x‖ ≤ 1); data space [0, 1]^d ∩ unit ball.
    UnitBall,
    /// Raw features in [0, 1]^d, projected onto the unit ball by the mechanism
    /// ([`Dataset::project_to_unit_ball`]) before training; FIL about the raw features.
    Projected,
    /// Raw features in [0, 1]^d mapped by the fixed [`LinearEmbedding`] (with or without
    /// the constant feature, as `intercept` says) before training; FIL about the raw
    /// features (module docs).
    Embedded {
        /// Whether the embedding has the constant feature (an intercept).
        intercept: bool,
    },
}

/// The FIL of one training example.
#[derive(Clone, Debug, PartialEq)]
pub struct LogregFilExample {
    /// Index of the example in the data set.
    pub index: usize,
    /// Its label (0 or 1; public, not part of the reconstruction target).
    pub label: u32,
    /// Tr I_h(x) (upper bound, module docs).
    pub trace: f64,
    /// dFIL η̄² = Tr I_h(x)/d.
    pub dfil: f64,
    /// Guo Thm 2 (unbiased): MSE ≥ d/Tr I_h(x), rounded down; `None` if the trace is 0
    /// (no information: no finite bound).
    pub mse_bound: Option<f64>,
}

/// Per-example FIL of output-perturbed logistic regression, with the RDP comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct LogregFil {
    /// One row per training example, in index order.
    pub examples: Vec<LogregFilExample>,
    /// Which input the FIL is about.
    pub space: InputSpace,
    /// ε of (2, ε)-RDP, 4/(nλσ)² ([`rdp::output_perturbation_rdp`]).
    pub rdp_order2: f64,
    /// Guo Thm 1 (unbiased, diam_i = 1): MSE ≥ 1/(4(e^ε − 1)), rounded down
    /// ([`mse::mse_lower_bound_uniform`]).
    pub rdp_mse_bound: f64,
    /// The MSE of the worst guess inside the data space, max ‖ẑ − z‖²/d: 1 for
    /// [`InputSpace::Projected`] and [`InputSpace::Embedded`] ([0, 1]^d), 2/d for
    /// [`InputSpace::UnitBall`]
    /// ([0, 1]^d ∩ unit ball). Guo's "perfect privacy" line: a bound at or above it says no
    /// unbiased attack beats guessing.
    pub trivial_mse: f64,
    /// The minimiser w* (of the projected data for [`InputSpace::Projected`], of the
    /// embedded data — length p = d + 1 with an intercept — for [`InputSpace::Embedded`]).
    pub fit: LogisticFit,
    /// Dimension d of the input the FIL is about (the raw features).
    pub d: usize,
    /// Number of training examples n.
    pub n: usize,
    /// λ.
    pub lambda: f64,
    /// σ, the standard deviation of the output noise.
    pub noise_std: f64,
    /// ρ + τ (module docs): the relative margin applied to the absolute size of every term.
    pub margin: f64,
}

/// (a, b) = (σ(z) − y, σ(z)(1 − σ(z))), accurate in both tails.
fn residual_and_slope(z: f64, y: u32) -> (f64, f64) {
    let e = libm::exp(-libm::fabs(z));
    let slope = e / ((1.0 + e) * (1.0 + e));
    (residual(z, y), slope)
}

fn check_unit_ball(data: &Dataset) -> Result<()> {
    let max_norm = data.max_l2_norm();
    if max_norm.is_nan() || max_norm > 1.0 {
        return Err(Error::InvalidParameter {
            name: "data",
            value: max_norm,
            expected:
                "every ||x|| <= 1 (project_to_unit_ball, or use projected_output_perturbation_fil)",
        });
    }
    Ok(())
}

/// The factor f = 1/(t‖x‖) of [`Dataset::project_to_unit_ball`] if it scales `x`, computed by
/// the same operations (so the decision agrees with the projection bit for bit), and t.
fn projection_factor(x: &[f64]) -> (Option<f64>, f64) {
    let t = 1.0 + (x.len() as f64 + 4.0) * f64::EPSILON;
    let r = libm::sqrt(x.iter().map(|v| v * v).sum::<f64>());
    let scaled = r * t;
    if scaled > 1.0 {
        (Some(1.0 / scaled), t)
    } else {
        (None, t)
    }
}

/// The Cholesky factor of H = (1/n) Σ_i s′(w·x_i) x_i x_iᵀ + λI (row-major d × d).
fn hessian_factor(data: &Dataset, lambda: f64, w: &[f64]) -> Result<Vec<f64>> {
    let d = data.dim();
    let len = d.checked_mul(d).ok_or(Error::InvalidCount {
        name: "dim",
        value: d as u64,
        expected: "small enough for a d × d Hessian",
    })?;
    let mut h = alloc::vec![0.0; len];
    hessian_lower(data, lambda, w, &mut h);
    cholesky_in_place(&mut h, d)?;
    Ok(h)
}

/// H⁻¹ from its Cholesky factor: row k holds H⁻¹ e_k (= column k, H⁻¹ being symmetric).
fn inverse(l: &[f64], d: usize) -> Result<Vec<f64>> {
    let mut inv = alloc::vec![0.0; l.len()];
    for (k, row) in inv.chunks_exact_mut(d).enumerate() {
        if let Some(e) = row.get_mut(k) {
            *e = 1.0;
        }
        cholesky_solve(l, d, row)?;
    }
    Ok(inv)
}

fn validate(data: &Dataset, lambda: f64, noise_std: f64) -> Result<()> {
    check_positive("lambda", lambda)?;
    check_positive("noise_std", noise_std)?;
    check_binary(data)
}

/// Per-example FIL of output perturbation on data in the unit ball ([`InputSpace::UnitBall`]):
/// w* = [`crate::train::logreg::fit`]`(data, lambda)`, released with N(0, σ²I) noise
/// (σ = `noise_std`). The noise draw does not enter (module docs).
///
/// # Formula
///
/// Tr I_h(x_j) = ‖a H⁻¹ + b (H⁻¹x_j) wᵀ‖_F² / (nσ)² (module docs; rounded up), dFIL =
/// Tr/d, MSE ≥ d/Tr (Thm 2, rounded down); beside it ε = 4/(nλσ)² and the Thm 1 bound
/// 1/(4(e^ε − 1)) (diam_i = 1).
///
/// # Citations
///
/// Guo et al. 2022, Eq. 1, Thm 1, Thm 2 and Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`); Hannun et al. 2021.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `lambda` or `noise_std` unless finite and > 0;
/// [`Error::InvalidCount`] `num_classes` unless 2; [`Error::InvalidParameter`] `data` if some
/// ‖x_i‖ > 1 (the value is the largest norm); errors of [`crate::train::logreg::fit`];
/// [`Error::NotConverged`] if the minimiser's error could move a trace by more than
/// [`MAX_MINIMISER_EFFECT`] (relative, first order); [`Error::Numerical`] if H cannot be
/// factored or a trace is not finite (e.g. nσ underflows).
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::logreg::output_perturbation_fil;
/// use reconbound::data::embedded_mnist;
/// let data = embedded_mnist()?.filter_labels(&[0, 1])?.subset(&(0..40).collect::<Vec<_>>())?
///     .flatten().project_to_unit_ball();
/// let fil = output_perturbation_fil(&data, 1e-2, 1e-2)?;
/// assert_eq!((fil.n, fil.d, fil.examples.len()), (40, 784, 40));
/// // ε = 4/(nλσ)² = 4/(40 · 1e-4)² = 250000.
/// assert!((fil.rdp_order2 - 2.5e5).abs() < 1e-6);
/// for e in &fil.examples {
///     let b = e.mse_bound.unwrap();
///     assert!(b > 0.0 && (b * e.dfil - 1.0).abs() < 1e-12); // d/Tr = 1/dFIL
/// }
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn output_perturbation_fil(data: &Dataset, lambda: f64, noise_std: f64) -> Result<LogregFil> {
    validate(data, lambda, noise_std)?;
    check_unit_ball(data)?;
    compute(data, data, lambda, noise_std, InputSpace::UnitBall, true)
}

/// Per-example FIL of output perturbation applied to **raw** data in [0, 1]^d that the
/// mechanism first projects onto the unit ball ([`InputSpace::Projected`]): the FIL is about
/// the raw features (module docs), so that MSE is measured in [0, 1]^d as in Guo et al.
/// Sec. 7.1.
///
/// # Formula
///
/// As [`output_perturbation_fil`] with J replaced by J·∂x′/∂x, ∂x′/∂x = (I − x̂x̂ᵀ)/(t‖x‖)
/// for a projected example (identity otherwise): Tr I = (a²‖A‖_F² + 2ab u·v + b²‖v‖²‖w‖²
/// − t²(a + bz)²‖v‖²)/(t‖x‖nσ)² (rounded up). ε and the Thm 1 bound (diam_i = 1 on
/// [0, 1]^d) are those of the projected data set (same n).
///
/// # Citations
///
/// Guo et al. 2022, Eq. 1, Thm 1, Thm 2 and Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`); Hannun et al. 2021.
///
/// # Errors
///
/// As [`output_perturbation_fil`], without the `data` norm condition.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::logreg::{
///     output_perturbation_fil, projected_output_perturbation_fil,
/// };
/// use reconbound::data::embedded_mnist;
/// let raw = embedded_mnist()?.filter_labels(&[0, 1])?.subset(&(0..40).collect::<Vec<_>>())?
///     .flatten();
/// let fil = projected_output_perturbation_fil(&raw, 1e-2, 1e-2)?;
/// let inner = output_perturbation_fil(&raw.clone().project_to_unit_ball(), 1e-2, 1e-2)?;
/// assert_eq!(fil.fit, inner.fit); // the same mechanism
/// // MNIST norms are ≈ 9: the raw-pixel FIL is smaller (the MSE bound larger).
/// for (r, p) in fil.examples.iter().zip(&inner.examples) {
///     assert!(r.trace < p.trace);
/// }
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn projected_output_perturbation_fil(
    raw: &Dataset,
    lambda: f64,
    noise_std: f64,
) -> Result<LogregFil> {
    validate(raw, lambda, noise_std)?;
    let projected = raw.clone().project_to_unit_ball();
    compute(
        raw,
        &projected,
        lambda,
        noise_std,
        InputSpace::Projected,
        true,
    )
}

/// Per-example FIL of output perturbation applied to **raw** data in [0, 1]^d that the
/// mechanism first maps by the fixed linear `embedding` ([`InputSpace::Embedded`]; with an
/// intercept x_aug = (c₀, a·x)): the FIL is about the raw pixels, so that d/Tr(I) bounds the
/// MSE of a reconstruction of x in [0, 1]^d units — the units of [`crate::attacks::glm`].
///
/// # Formula
///
/// Tr I = a²(a_r²‖AP‖_F² + 2a_r b (A·Pw)·(A x_aug) + b²‖A x_aug‖²‖Pw‖²)/(nσ)² with A = H⁻¹
/// of the embedded data, P the pixel coordinates, a_r = σ(w·x_aug) − y, b = σ′(w·x_aug)
/// (module docs; rounded up); dFIL = Tr/d, MSE ≥ d/Tr (Thm 2, rounded down); ε = 4/(nλσ)²
/// (‖x_aug‖ ≤ 1) and the Thm 1 bound on [0, 1]^d (diam_i = 1).
///
/// # Citations
///
/// Guo et al. 2022, Eq. 1, Thm 1, Thm 2 and Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`); Hannun et al. 2021 (influence Jacobian);
/// Chaudhuri, Monteleoni, Sarwate 2011 (sensitivity 2/(nλ) for ‖x_aug‖ ≤ 1).
///
/// # Errors
///
/// As [`output_perturbation_fil`] (without the norm condition, which the embedding meets);
/// [`Error::Inconsistent`] if `embedding.raw_dim() != raw.dim()`.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::logreg::{embedded_output_perturbation_fil, InputSpace};
/// use reconbound::data::embedded_mnist;
/// use reconbound::train::logreg::LinearEmbedding;
/// let raw = embedded_mnist()?.filter_labels(&[0, 1])?.subset(&(0..40).collect::<Vec<_>>())?
///     .flatten();
/// let e = LinearEmbedding::with_intercept(raw.dim())?;
/// let fil = embedded_output_perturbation_fil(&raw, &e, 1e-2, 1e-2)?;
/// assert_eq!(fil.space, InputSpace::Embedded { intercept: true });
/// assert_eq!((fil.d, fil.fit.weights.len(), fil.trivial_mse), (784, 785, 1.0));
/// for x in &fil.examples {
///     assert!(x.mse_bound.unwrap() > 0.0);
/// }
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn embedded_output_perturbation_fil(
    raw: &Dataset,
    embedding: &LinearEmbedding,
    lambda: f64,
    noise_std: f64,
) -> Result<LogregFil> {
    validate(raw, lambda, noise_std)?;
    let train = embedding.embed_dataset(raw)?;
    compute(
        raw,
        &train,
        lambda,
        noise_std,
        InputSpace::Embedded {
            intercept: embedding.has_intercept(),
        },
        true,
    )
}

/// The embedding of an [`InputSpace::Embedded`] space for raw dimension `d`.
fn space_embedding(space: InputSpace, d: usize) -> Result<Option<LinearEmbedding>> {
    match space {
        InputSpace::Embedded { intercept } => Ok(Some(LinearEmbedding::new(d, intercept)?)),
        InputSpace::UnitBall | InputSpace::Projected => Ok(None),
    }
}

/// `raw`: the data as given; `train`: what the mechanism trains on (= `raw` for UnitBall).
/// `certify = false` (tests only) returns the nominal traces, without the margin.
fn compute(
    raw: &Dataset,
    train: &Dataset,
    lambda: f64,
    noise_std: f64,
    space: InputSpace,
    certify: bool,
) -> Result<LogregFil> {
    let n = train.len();
    // d: the model's dimension; raw_d: that of the input the FIL is about.
    let d = train.dim();
    let raw_d = raw.dim();
    let embedding = space_embedding(space, raw_d)?;
    // The model coordinates that depend on the raw input start at `off` (1 with an
    // intercept), and J_raw = `pixel_scale`·(those columns of J).
    let (off, pixel_scale) = match &embedding {
        Some(e) => (e.offset(), e.scale()),
        None => (0, 1.0),
    };
    let rdp_order2 = rdp::output_perturbation_rdp(n as u64, lambda, noise_std)?;
    let rdp_mse_bound = mse::mse_lower_bound_uniform(rdp_order2, 1.0, raw_d as u64)?;
    let fit = fit(train, lambda)?;
    let w = &fit.weights;
    let l = hessian_factor(train, lambda, w)?;
    let inv = inverse(&l, d)?;
    // ‖A P‖_F² (rows = columns, A symmetric), P·w and A·P·w: the pixel coordinates only
    // (all of them when off = 0: the plain formula, bit for bit).
    let frob: f64 = inv.iter().skip(off * d).map(|v| v * v).sum();
    let mut w_pix = w.clone();
    w_pix.iter_mut().take(off).for_each(|v| *v = 0.0);
    let mut u = w_pix.clone();
    cholesky_solve(&l, d, &mut u)?;
    let (ww, w_norm, u_norm) = (dot(&w_pix, &w_pix), norm(&w_pix), norm(&u));

    // Margins (module docs).
    let big_r = train.max_l2_norm();
    let kappa = 1.0 + big_r * big_r / (4.0 * lambda);
    let tau = 8.0 * libm::pow(d as f64 + 2.0, 2.5) * kappa * kappa * f64::EPSILON;
    let delta = fit.gradient_norm / lambda;
    let rho = if delta == 0.0 {
        0.0
    } else if w_norm > delta {
        2.0 * delta * (4.0 * big_r + 2.0 / w_norm + kappa * big_r * big_r * big_r / (2.0 * lambda))
    } else {
        f64::INFINITY
    };
    if rho.is_nan() || rho > MAX_MINIMISER_EFFECT {
        return Err(Error::NotConverged {
            what: "logistic regression FIL: the minimiser is not accurate enough to certify the trace (value: first-order relative effect)",
            value: rho,
        });
    }
    let margin = if certify { rho + tau } else { 0.0 };
    if !margin.is_finite() {
        return Err(Error::Numerical {
            what: "logistic regression FIL: rounding margin not finite",
            value: margin,
        });
    }
    let inv_n_sigma = 1.0 / (n as f64 * noise_std);
    let scale = inv_n_sigma
        * inv_n_sigma
        * if certify {
            1.0 + 16.0 * f64::EPSILON
        } else {
            1.0
        };

    let mut v = alloc::vec![0.0; d];
    let mut examples = Vec::with_capacity(n);
    for (index, ((x, y), (x_raw, _))) in train.iter().zip(raw.iter()).enumerate() {
        let z = dot(w, x);
        let (a, b) = residual_and_slope(z, y);
        v.iter_mut().for_each(|e| *e = 0.0);
        for (&xk, row) in x.iter().zip(inv.chunks_exact(d)) {
            if xk != 0.0 {
                for (e, &m) in v.iter_mut().zip(row) {
                    *e += xk * m;
                }
            }
        }
        let vv = dot(&v, &v);
        let uv = dot(&u, &v);
        let t1 = a * a * frob;
        let t2 = 2.0 * a * b * uv;
        let t3 = b * b * vv * ww;
        let mut core = t1 + t2 + t3;
        let mut size = t1 + 2.0 * libm::fabs(a * b) * u_norm * libm::sqrt(vv) + t3;
        let mut factor = pixel_scale * pixel_scale;
        if space == InputSpace::Projected {
            if let (Some(f), t) = projection_factor(x_raw) {
                let c = a + b * z;
                let c_abs = libm::fabs(a) + b * libm::fabs(z);
                core -= t * t * c * c * vv;
                size += t * t * c_abs * c_abs * vv;
                factor = f * f;
            }
        }
        let trace = factor * (core.max(0.0) + margin * size) * scale;
        if !trace.is_finite() {
            return Err(Error::Numerical {
                what: "logistic regression FIL: trace not finite",
                value: trace,
            });
        }
        let (dfil_value, mse_bound) = if trace > 0.0 {
            (dfil(trace, raw_d)?, Some(unbiased_mse_bound(trace, raw_d)?))
        } else {
            (0.0, None)
        };
        examples.push(LogregFilExample {
            index,
            label: y,
            trace,
            dfil: dfil_value,
            mse_bound,
        });
    }
    let trivial_mse = match space {
        InputSpace::Projected | InputSpace::Embedded { .. } => 1.0,
        InputSpace::UnitBall => 2.0 / d as f64,
    };
    Ok(LogregFil {
        examples,
        space,
        rdp_order2,
        rdp_mse_bound,
        trivial_mse,
        fit,
        d: raw_d,
        n,
        lambda,
        noise_std,
        margin,
    })
}

/// The influence Jacobian ∂w*/∂x_j (p × d row-major, entry (r, c) = ∂w*_r/∂x_{j,c}; p the
/// number of weights, d the raw dimension) of training example `index`, by the implicit
/// function theorem, built densely: H J = −N solved column by column. `data` is the data as
/// given and `weights` the minimiser on what the mechanism trains on: the data themselves
/// ([`InputSpace::UnitBall`]), their projection ([`InputSpace::Projected`]; the result is
/// J·∂x′/∂x) or their embedding ([`InputSpace::Embedded`]; p = d + 1 with an intercept, and
/// the result is a·J·P, the pixel columns). O(p³): for checks and small d; the traces of
/// [`output_perturbation_fil`] use the closed form instead.
///
/// # Formula
///
/// J = −H⁻¹ (1/n)[(s − y) I + s′ x wᵀ] with z = w·x, s = σ(z), s′ = s(1 − s),
/// H = (1/n) Σ_i s′_i x_i x_iᵀ + λI (module docs); projected: J·(I − x̂x̂ᵀ)/(t‖x‖);
/// embedded: a·J·P.
///
/// # Citations
///
/// Hannun et al. 2021 (influence Jacobian of logistic regression); Guo et al. 2022, Sec. 7.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`).
///
/// # Errors
///
/// `lambda` unless finite and > 0; `num_classes` unless 2; `data` (UnitBall) if some
/// ‖x_i‖ > 1; [`Error::Inconsistent`] if `weights.len()` is not the model's dimension;
/// `weights` if an entry is not finite; `index` if `>= n`; [`Error::Numerical`] if H cannot
/// be factored.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::logreg::{minimiser_input_jacobian, InputSpace};
/// use reconbound::data::Dataset;
/// use reconbound::train::logreg::fit;
/// let data = Dataset::new(vec![0.5, 0.1, 0.2, 0.6, 0.4, 0.4], vec![1, 0, 1], (1, 1, 2), 2)?;
/// let w = fit(&data, 0.1)?.weights;
/// let j = minimiser_input_jacobian(&data, 0.1, &w, 0, InputSpace::UnitBall)?;
/// assert_eq!(j.len(), 4);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn minimiser_input_jacobian(
    data: &Dataset,
    lambda: f64,
    weights: &[f64],
    index: usize,
    space: InputSpace,
) -> Result<Vec<f64>> {
    check_positive("lambda", lambda)?;
    check_binary(data)?;
    let raw_d = data.dim();
    let embedding = space_embedding(space, raw_d)?;
    let d = embedding.map_or(raw_d, |e| e.dim());
    if weights.len() != d {
        return Err(Error::Inconsistent {
            what: "weights.len() must equal the model's dimension",
            value: weights.len() as f64,
        });
    }
    check_finite_weights("weights", weights)?;
    let (x_raw, y) = data.example(index)?;
    let transformed;
    let train = match (space, embedding) {
        (InputSpace::UnitBall, _) => {
            check_unit_ball(data)?;
            data
        }
        (_, Some(e)) => {
            transformed = e.embed_dataset(data)?;
            &transformed
        }
        _ => {
            transformed = data.clone().project_to_unit_ball();
            &transformed
        }
    };
    let (x, _) = train.example(index)?;
    let l = hessian_factor(train, lambda, weights)?;
    let nf = data.len() as f64;
    let (a, b) = residual_and_slope(dot(weights, x), y);
    // Column c of −N: −(1/n)(a e_c + b x w_c); solve H j = that.
    let mut jac = alloc::vec![0.0; d * d];
    let mut col = alloc::vec![0.0; d];
    for c in 0..d {
        let wc = weights.get(c).copied().unwrap_or(0.0);
        for (r, e) in col.iter_mut().enumerate() {
            let xr = x.get(r).copied().unwrap_or(0.0);
            let id = if r == c { a } else { 0.0 };
            *e = -(id + b * xr * wc) / nf;
        }
        cholesky_solve(&l, d, &mut col)?;
        for (r, &e) in col.iter().enumerate() {
            if let Some(slot) = jac.get_mut(r * d + c) {
                *slot = e;
            }
        }
    }
    if let Some(e) = embedding {
        // a·J·P: the pixel columns (after the constant), times a.
        let off = e.offset();
        return Ok(jac
            .chunks_exact(d)
            .flat_map(|row| row.iter().skip(off).map(|v| e.scale() * v))
            .collect());
    }
    if space == InputSpace::Projected {
        if let (Some(f), _) = projection_factor(x_raw) {
            // J ← f · J (I − x̂x̂ᵀ), x̂ = x_raw/‖x_raw‖.
            let r = norm(x_raw);
            let hat: Vec<f64> = x_raw.iter().map(|v| v / r).collect();
            for row in jac.chunks_exact_mut(d) {
                let p = dot(row, &hat);
                for (e, &h) in row.iter_mut().zip(&hat) {
                    *e = f * (*e - p * h);
                }
            }
        }
    }
    Ok(jac)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{embedded_mnist, synthetic};
    use crate::rng::Rng;

    /// `n` examples in `d` dimensions, features uniform in [lo, hi], labels alternating
    /// after a random linear rule (not separable through the origin in general).
    fn tiny(n: usize, d: usize, lo: f64, hi: f64, seed: u64) -> Dataset {
        let mut rng = Rng::from_seed(seed);
        let mut f = Vec::new();
        let mut labels = Vec::new();
        for i in 0..n {
            let mut s = 0.0;
            for k in 0..d {
                let v = lo + (hi - lo) * rng.uniform();
                s += if k % 2 == 0 { v } else { -v };
                f.push(v);
            }
            let noisy = rng.uniform() < 0.2;
            labels.push(u32::from((s > 0.0) != noisy || i == 0));
        }
        Dataset::new(f, labels, (1, 1, d), 2).unwrap()
    }

    fn replace_feature(data: &Dataset, j: usize, k: usize, value: f64) -> Dataset {
        let (mut f, labels, shape, classes) = data.clone().into_parts();
        f[j * data.dim() + k] = value;
        Dataset::new(f, labels, shape, classes).unwrap()
    }

    fn frob_sq(m: &[f64]) -> f64 {
        m.iter().map(|v| v * v).sum()
    }

    /// The mechanism's training set for `space` from the raw data.
    fn transform(ds: &Dataset, space: InputSpace) -> Dataset {
        match space {
            InputSpace::UnitBall => ds.clone(),
            InputSpace::Projected => ds.clone().project_to_unit_ball(),
            InputSpace::Embedded { intercept } => LinearEmbedding::new(ds.dim(), intercept)
                .unwrap()
                .embed_dataset(ds)
                .unwrap(),
        }
    }

    /// Central differences of the refitted minimiser against the IFT Jacobian, every space:
    /// the raw feature is perturbed and the whole mechanism (projection or embedding, then
    /// Newton) rerun, so the chain-rule factor of the space (1/(t‖x‖)(I − x̂x̂ᵀ), or a and
    /// the dropped constant column) is checked independently of the closed forms.
    /// Step h = 1e-4: truncation O(h²·|∂³w*|) ≈ 1e-8 relative, rounding ≈ 1e-15/h ≈ 1e-11
    /// (Newton converges to ≲ 1e-13 relative gradient); tolerance 1e-6 relative to ‖J‖_F.
    #[test]
    fn ift_jacobian_matches_central_differences_of_refits() {
        let lambda = 0.05;
        let h = 1e-4;
        for (space, lo, hi) in [
            (InputSpace::UnitBall, 0.05, 0.5),
            (InputSpace::Projected, 0.3, 0.95),
            (InputSpace::Embedded { intercept: true }, 0.05, 0.95),
            (InputSpace::Embedded { intercept: false }, 0.05, 0.95),
        ] {
            let data = tiny(14, 4, lo, hi, 5);
            let w = fit(&transform(&data, space), lambda).unwrap().weights;
            let d = data.dim();
            let p = w.len();
            for j in [0usize, 3, 9] {
                let jac = minimiser_input_jacobian(&data, lambda, &w, j, space).unwrap();
                assert_eq!(jac.len(), p * d);
                let mut err = 0.0;
                for k in 0..d {
                    let x0 = data.example(j).unwrap().0[k];
                    let refit = |x: f64| {
                        fit(&transform(&replace_feature(&data, j, k, x), space), lambda)
                            .unwrap()
                            .weights
                    };
                    let (wp, wm) = (refit(x0 + h), refit(x0 - h));
                    for r in 0..p {
                        let fd = (wp[r] - wm[r]) / (2.0 * h);
                        err += (fd - jac[r * d + k]) * (fd - jac[r * d + k]);
                    }
                }
                let rel = libm::sqrt(err / frob_sq(&jac));
                assert!(rel < 1e-6, "{space:?}, example {j}: relative error {rel}");
            }
        }
    }

    /// The closed-form trace equals ‖J‖_F²/σ² of the dense IFT Jacobian: the nominal value
    /// (no margin) to 1e-9 relative (both are accurate to ≈ d·κ·1e-16 ≲ 1e-11 here); the
    /// returned value lies above it by at most a small multiple of the margin (≈ 1e-13 for
    /// d = 6, ≈ 2e-5 at d = 784): checked in [1, 1 + 10·margin + 1e-12].
    #[test]
    fn closed_form_trace_matches_dense_jacobian() {
        let sigma = 0.3;
        let check = |raw: &Dataset, lambda: f64, space: InputSpace, indices: &[usize]| {
            let train = transform(raw, space);
            let fil = compute(raw, &train, lambda, sigma, space, true).unwrap();
            let nominal = compute(raw, &train, lambda, sigma, space, false).unwrap();
            for &j in indices {
                let jac =
                    minimiser_input_jacobian(raw, lambda, &fil.fit.weights, j, space).unwrap();
                let dense = frob_sq(&jac) / (sigma * sigma);
                let got = nominal.examples[j].trace;
                assert!(
                    libm::fabs(got / dense - 1.0) < 1e-9,
                    "{space:?} example {j}: {got} vs {dense}"
                );
                let raised = fil.examples[j].trace / got - 1.0;
                assert!(
                    raised >= 0.0 && raised <= 10.0 * fil.margin + 1e-12,
                    "{space:?} example {j}: raised by {raised}, margin {}",
                    fil.margin
                );
            }
        };
        // Small synthetic sets, both spaces.
        let all: Vec<usize> = (0..30).collect();
        check(&tiny(30, 6, 0.02, 0.4, 8), 0.02, InputSpace::UnitBall, &all);
        check(&tiny(30, 6, 0.2, 0.9, 9), 0.02, InputSpace::Projected, &all);
        for intercept in [true, false] {
            let space = InputSpace::Embedded { intercept };
            check(&tiny(30, 6, 0.0, 1.0, 10), 0.02, space, &all);
        }
        // MNIST 0 vs 1 (sparse features), d = 784.
        let mnist = embedded_mnist()
            .unwrap()
            .filter_labels(&[0, 1])
            .unwrap()
            .subset(&(0..50).collect::<Vec<_>>())
            .unwrap()
            .flatten();
        check(&mnist, 1e-2, InputSpace::Projected, &[0, 17, 49]);
        check(
            &mnist,
            1e-2,
            InputSpace::Embedded { intercept: true },
            &[2, 44],
        );
        check(
            &mnist.project_to_unit_ball(),
            1e-2,
            InputSpace::UnitBall,
            &[1, 30],
        );
    }

    /// Without an intercept the embedded FIL is the unit-ball FIL of the embedded data times
    /// a² (J_raw = a·J): tolerance 1e-14 relative (the factor's rounding, a few ulps); with
    /// an intercept the dropped constant column makes it smaller than a² times the unit-ball
    /// trace (which also counts ∂w*/∂c₀), and the data space is [0, 1]^d (trivial MSE 1).
    #[test]
    fn embedded_trace_is_the_scaled_unit_ball_trace_of_the_pixel_columns() {
        let raw = tiny(25, 5, 0.0, 1.0, 12);
        for intercept in [false, true] {
            let e = LinearEmbedding::new(5, intercept).unwrap();
            let fil = embedded_output_perturbation_fil(&raw, &e, 0.05, 0.2).unwrap();
            let inner =
                output_perturbation_fil(&e.embed_dataset(&raw).unwrap(), 0.05, 0.2).unwrap();
            assert_eq!(fil.fit, inner.fit);
            assert_eq!((fil.d, fil.trivial_mse), (5, 1.0));
            assert_eq!(fil.rdp_order2, inner.rdp_order2);
            let a2 = e.scale() * e.scale();
            for (x, y) in fil.examples.iter().zip(&inner.examples) {
                let ratio = x.trace / (a2 * y.trace);
                if intercept {
                    assert!(ratio < 1.0, "{ratio}");
                } else {
                    assert!(libm::fabs(ratio - 1.0) < 1e-14, "{ratio}");
                }
                assert_eq!(x.dfil, x.trace / 5.0);
            }
        }
        assert!(matches!(
            embedded_output_perturbation_fil(
                &raw,
                &LinearEmbedding::with_intercept(4).unwrap(),
                0.05,
                0.2
            ),
            Err(Error::Inconsistent { .. })
        ));
    }

    /// Tr I ∝ 1/σ² exactly (σ enters only through the factor 1/(nσ)²): tolerance 1e-14
    /// relative (a few roundings of the scale).
    #[test]
    fn trace_scales_as_inverse_noise_variance() {
        let data = tiny(25, 5, 0.05, 0.4, 3);
        let a = output_perturbation_fil(&data, 0.1, 1e-2).unwrap();
        let b = output_perturbation_fil(&data, 0.1, 2.5).unwrap();
        for (x, y) in a.examples.iter().zip(&b.examples) {
            let ratio = x.trace * 1e-4 / (y.trace * 6.25);
            assert!(libm::fabs(ratio - 1.0) < 1e-14, "{ratio}");
            let bound_ratio = y.mse_bound.unwrap() / x.mse_bound.unwrap();
            assert!(
                libm::fabs(bound_ratio / 62_500.0 - 1.0) < 1e-14,
                "{bound_ratio}"
            );
        }
        assert_eq!(a.fit, b.fit);
    }

    /// ε = 4/(nλσ)², Thm 1 beside it, dFIL = Tr/d and d/Tr; the projected variant equals the
    /// plain one bit for bit on data already inside the ball (the projection is then the
    /// identity).
    #[test]
    fn rdp_comparison_and_consistency_of_the_two_spaces() {
        let (data, _) = synthetic::linearly_separable(40, 7, 0.05, 2).unwrap();
        let data = data.project_to_unit_ball();
        let fil = output_perturbation_fil(&data, 0.05, 0.1).unwrap();
        let eps = 4.0 / ((40.0 * 0.05 * 0.1) * (40.0 * 0.05 * 0.1));
        assert!(libm::fabs(fil.rdp_order2 / eps - 1.0) < 1e-14);
        assert_eq!(
            fil.rdp_mse_bound,
            mse::mse_lower_bound_uniform(fil.rdp_order2, 1.0, 7).unwrap()
        );
        assert_eq!(fil.trivial_mse, 2.0 / 7.0);
        for e in &fil.examples {
            assert_eq!(e.dfil, e.trace / 7.0);
            let b = e.mse_bound.unwrap();
            assert!(b <= 7.0 / e.trace && b >= 7.0 / e.trace * (1.0 - 1e-15));
        }
        // Every norm ≤ 0.9 < 1/t: the projection leaves every example unchanged.
        let (f, l, s, k) = data.into_parts();
        let shrunk = Dataset::new(f.iter().map(|v| v * 0.9).collect(), l, s, k).unwrap();
        let a = output_perturbation_fil(&shrunk, 0.05, 0.1).unwrap();
        let b = projected_output_perturbation_fil(&shrunk, 0.05, 0.1).unwrap();
        assert_eq!(a.examples, b.examples);
        assert_eq!(b.trivial_mse, 1.0);
    }

    #[test]
    fn invalid_inputs_are_errors_naming_the_parameter() {
        let data = tiny(10, 3, 0.05, 0.5, 1);
        let name = |r: Result<LogregFil>| r.unwrap_err().parameter();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                name(output_perturbation_fil(&data, bad, 1.0)),
                Some("lambda")
            );
            assert_eq!(
                name(output_perturbation_fil(&data, 0.1, bad)),
                Some("noise_std")
            );
            assert_eq!(
                name(projected_output_perturbation_fil(&data, 0.1, bad)),
                Some("noise_std")
            );
        }
        let outside = tiny(10, 3, 0.6, 0.9, 1);
        assert_eq!(
            name(output_perturbation_fil(&outside, 0.1, 1.0)),
            Some("data")
        );
        assert!(projected_output_perturbation_fil(&outside, 0.1, 1.0).is_ok());
        let three = Dataset::new(vec![0.1; 6], vec![0, 1, 2], (1, 1, 2), 3).unwrap();
        assert_eq!(
            name(output_perturbation_fil(&three, 0.1, 1.0)),
            Some("num_classes")
        );
        // n·σ underflows: the trace is not representable.
        assert!(matches!(
            output_perturbation_fil(&data, 0.1, 1e-320),
            Err(Error::Numerical { .. })
        ));
        let w = fit(&data, 0.1).unwrap().weights;
        let jac = |w: &[f64], i| minimiser_input_jacobian(&data, 0.1, w, i, InputSpace::UnitBall);
        assert_eq!(jac(&w, 10).unwrap_err().parameter(), Some("index"));
        assert!(matches!(jac(&w[..2], 0), Err(Error::Inconsistent { .. })));
        assert_eq!(
            jac(&[0.0, f64::NAN, 0.0], 0).unwrap_err().parameter(),
            Some("weights")
        );
        assert_eq!(
            minimiser_input_jacobian(&outside, 0.1, &w, 0, InputSpace::UnitBall)
                .unwrap_err()
                .parameter(),
            Some("data")
        );
    }

    /// The tail formulas agree with the naive ones where those are accurate, and stay exact
    /// where 1 − σ(z) rounds to 0 (tolerance 1e-15 relative).
    #[test]
    fn residual_and_slope_are_accurate_in_the_tails() {
        for z in [-3.0, -0.5, 0.0, 0.7, 4.0] {
            let s = 1.0 / (1.0 + libm::exp(-z));
            let (a0, b) = residual_and_slope(z, 0);
            let (a1, _) = residual_and_slope(z, 1);
            assert!(libm::fabs(a0 - s) < 1e-15 && libm::fabs(a1 - (s - 1.0)) < 1e-15);
            assert!(libm::fabs(b - s * (1.0 - s)) < 1e-15);
        }
        let (a, b) = residual_and_slope(50.0, 1);
        let e = libm::exp(-50.0);
        assert!(libm::fabs(a / -e - 1.0) < 1e-14 && libm::fabs(b / e - 1.0) < 1e-14);
    }
}
