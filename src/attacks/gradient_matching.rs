//! The gradient-matching reconstruction attack (Hayes, Mahloujifar, Balle 2023, §2, Eq. 1;
//! App. A and D): the adversary who knows the model, the parameters θ_t of every step, the
//! released DP-SGD gradients, every training example but the target (D⁻), the target's label
//! and the clipping, searches for the input whose clipped gradients best match what is left of
//! the released gradients once the known examples' contributions are removed.
//!
//! # The attack
//!
//! At step t the **residual** is ḡ_t = B·released_t − Σ_{j ∈ D⁻ ∩ B_t} clip(∇_θℓ(θ_t; z_j)) (B
//! the normaliser of the release): the target's clipped gradient if it was in the batch, plus
//! the noise N(0, σ²S²I). [`ResidualRecorder`] collects (θ_t, ḡ_t) from a DP-SGD run. The
//! reconstruction is
//!
//! ẑ = argmin_z L(z), L(z) = Σ_t ‖clip(∇_θℓ(θ_t; z, y)) − ḡ_t‖²,
//!
//! found by [`GradientMatching::reconstruct`] (Adam or gradient descent from U[0, 1]^d with
//! restarts, optionally projected onto [0, 1]^d); [`prior_score`] scores it as in App. D.
//!
//! # The gradient in z, without d JVPs
//!
//! ∇_z L = Σ_t 2·Jᵀ(clip(g_t) − ḡ_t), J = ∂clip(g_t(z))/∂z, g_t(z) = ∇_θℓ(θ_t; z). Clipping
//! g ↦ g·f(‖g‖) has a symmetric Jacobian K = f·I + (f′/‖g‖)·g gᵀ, so Jᵀv = (∂g/∂z)ᵀ(K v), and
//! by symmetry of mixed partials (∂g/∂z)ᵀu = d/dε ∇_zℓ(θ + εu; z): the derivative of the
//! *input* gradient along the *parameter* direction u. Per step:
//!
//! 1. one `f64` pass: g = ∇_θℓ ([`Sequential::loss_and_grad`]), g̃ = clip(g)
//!    ([`clip`], the crate's one clipping function), v = g̃ − ḡ_t;
//! 2. u = K v in closed form: K = a·I + b·g̃ g̃ᵀ (`train::clip::clip_jacobian`, from the same
//!    clipping factor as [`clip`]);
//! 3. one forward-over-reverse pass with the parameters seeded with tangent u and the input
//!    constant, the input gradient requested ([`Sequential::input_grad_param_jvp`]: the
//!    `Dual<1>` pass of [`Sequential::forward_backward`] with `W = S = Dual<1>` and no
//!    parameter gradient, a dense first layer kept in `f64`): the tangent of ∇_zℓ is
//!    (∂g/∂z)ᵀu.
//!
//! **Cost** per step and per evaluation of (L, ∇_z L): one clipped per-example gradient, three
//! O(p) vector operations (v, ⟨g̃, v⟩ with ‖v‖², u) and one parameter-tangent pass —
//! independent of d. Measured on the MLP 784–10–10 (ELU) at T = 100 (`benches/attacks.rs`),
//! one evaluation of (L, ∇_z L) costs about 2.8 times 100 clipped per-example gradients
//! (`loss_and_grad` + [`clip`]) at the same parameters: ≈ 2.8 clipped-gradient evaluations per
//! step (2.8–3.3 over runs on a shared machine; with the generic `Dual<1>`
//! [`Sequential::forward_backward`] pass instead, ≈ 3.1 without and ≈ 3.75 with its parameter
//! gradient). L alone ([`GradientMatching::loss`]: one clipped gradient and the residual's
//! O(p) terms per step) costs ≈ 1.5.
//!
//! # Memory
//!
//! The attack is not online: L sums over all T steps, so [`ResidualRecorder`] keeps θ_t and
//! ḡ_t for every step (2·T·p values).
//!
//! # Citations
//!
//! Hayes, Mahloujifar, Balle, "Bounding Training Data Reconstruction in DP-SGD", NeurIPS
//! 2023: §2 (Eq. 1, the gradient-based attack),
//! App. A (initialisation from uniform noise, random restarts, known label), App. B (Fig. 6,
//! [`reconstruction_grid`]), App. D (success against a random prior, [`prior_score`]);
//! `hayes2023-rero-dpsgd-appendix.txt`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::accounting::fil::fisher::dot;
use crate::attacks::game::{self, Adversary, Challenge, InformedView, Named, PriorDraw, ScoreKind};
use crate::error::{check_count, check_positive, invalid, Error, Result};
use crate::nn::{ParamJvpWorkspace, Sequential, Workspace};
use crate::rng::Rng;
use crate::train::clip::{clip, clip_jacobian};
use crate::train::dpsgd::Clipping;
use crate::train::observer::{Observer, StepInfo};

/// What the adversary saw at one DP-SGD step.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedStep {
    /// The parameters θ_t before the step's update (length p).
    pub params: Vec<f64>,
    /// The residual ḡ_t = B·released_t − Σ_{j ∈ D⁻ ∩ B_t} clip(∇_θℓ(θ_t; z_j))
    /// (length p).
    pub residual: Vec<f64>,
}

/// The gradient-matching objective L(z) = Σ_t ‖clip(∇_θℓ(θ_t; z, y)) − ḡ_t‖² over a set of
/// observed steps, for a model, a known label and a known clipping.
#[derive(Clone, Copy, Debug)]
pub struct GradientMatching<'a> {
    model: &'a Sequential,
    label: usize,
    clipping: Clipping,
    steps: &'a [ObservedStep],
}

/// Reusable buffers for [`GradientMatching`] and [`clipped_gradient_vjp`]: the model's `f64`
/// workspace and [`ParamJvpWorkspace`], three vectors of length p and one of length d. Make one
/// per model with [`MatchWorkspace::new`] and reuse it (the evaluations allocate nothing).
#[derive(Clone, Debug)]
pub struct MatchWorkspace {
    ws: Workspace<f64>,
    pjvp: ParamJvpWorkspace,
    /// The clipped gradient g̃ (p).
    pub(crate) g: Vec<f64>,
    /// v = g̃ − ḡ (p).
    v: Vec<f64>,
    /// u = K v (p).
    u: Vec<f64>,
    /// (∂g/∂x)ᵀu (d).
    gx: Vec<f64>,
}

impl MatchWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Sequential) -> Self {
        let (p, d) = (model.num_params(), model.input_len());
        MatchWorkspace {
            ws: model.workspace(),
            pjvp: model.param_jvp_workspace(),
            g: alloc::vec![0.0; p],
            v: alloc::vec![0.0; p],
            u: alloc::vec![0.0; p],
            gx: alloc::vec![0.0; d],
        }
    }

    fn check(&self, model: &Sequential) -> Result<()> {
        let (p, d) = (model.num_params(), model.input_len());
        if self.g.len() != p || self.gx.len() != d {
            return Err(Error::Inconsistent {
                what: "ws was not made by MatchWorkspace::new for this model",
                value: self.g.len() as f64,
            });
        }
        Ok(())
    }

    /// Pass 1: g̃ = clip(∇_θℓ(θ; x, label)) into `g`; returns ‖∇_θℓ‖ before clipping.
    pub(crate) fn clipped_gradient(
        &mut self,
        model: &Sequential,
        params: &[f64],
        x: &[f64],
        label: usize,
        clipping: Clipping,
    ) -> Result<f64> {
        model.loss_and_grad(params, x, label, &mut self.g, &mut self.ws)?;
        clip(&mut self.g, clipping.method, clipping.norm)
    }

    /// Passes 2 and 3, after [`clipped_gradient`](Self::clipped_gradient) (g̃ in `g`, its
    /// pre-clipping norm `norm`), with v in `self.v`: `out[i] += scale·(Jᵀv)_i`,
    /// J = ∂clip(∇_θℓ)/∂x.
    #[allow(clippy::too_many_arguments)]
    fn add_vjp(
        &mut self,
        model: &Sequential,
        params: &[f64],
        x: &[f64],
        label: usize,
        clipping: Clipping,
        norm: f64,
        scale: f64,
        out: &mut [f64],
    ) -> Result<()> {
        // u = K v = a·v + b·⟨g̃, v⟩·g̃.
        let (a, b) = clip_jacobian(norm, clipping.method, clipping.norm);
        let bgv = if b == 0.0 {
            0.0
        } else {
            b * dot(&self.g, &self.v)
        };
        for ((u, &vj), &gj) in self.u.iter_mut().zip(&self.v).zip(&self.g) {
            *u = a * vj + bgv * gj;
        }
        model
            .input_grad_param_jvp(params, &self.u, x, label, &mut self.gx, &mut self.pjvp)
            .map_err(|e| match e {
                // u is computed here from finite g̃ and v: only an overflow makes it non-finite.
                Error::InvalidParameter {
                    name: "direction",
                    value,
                    ..
                } => Error::Numerical {
                    what: "K·v overflowed (residual or gradient too large)",
                    value,
                },
                e => e,
            })?;
        for (o, &g) in out.iter_mut().zip(&self.gx) {
            *o += scale * g;
        }
        Ok(())
    }
}

/// `Err` naming `name` unless every value of `v` is finite.
fn check_all_finite(name: &'static str, v: &[f64]) -> Result<()> {
    match v.iter().find(|x| !x.is_finite()) {
        Some(&bad) => invalid(name, bad, "finite (every entry)"),
        None => Ok(()),
    }
}

/// `Err` unless `v.len() == len` (`what` names the requirement).
fn check_len(what: &'static str, v: &[f64], len: usize) -> Result<()> {
    if v.len() == len {
        Ok(())
    } else {
        Err(Error::Inconsistent {
            what,
            value: v.len() as f64,
        })
    }
}

/// `Err` naming `label` unless it is a class of `model`.
fn check_label(model: &Sequential, label: usize) -> Result<()> {
    if label < model.num_classes() {
        Ok(())
    } else {
        Err(Error::InvalidCount {
            name: "label",
            value: label as u64,
            expected: "< the model's number of classes (2 for the logistic loss)",
        })
    }
}

/// Jᵀv for the Jacobian J = ∂clip(∇_θℓ(θ; x, label))/∂x of the clipped per-example gradient
/// with respect to the input, written into `out` (length d), without forming J.
///
/// # Formula
///
/// Jᵀv = (∂g/∂x)ᵀ K v, g = ∇_θℓ, K = ∂clip(g)/∂g (symmetric), and (∂g/∂x)ᵀu is the tangent
/// of ∇_xℓ when the parameters carry the tangent u (mixed partials commute): one `f64`
/// clipped gradient and one `Dual<1>` forward and backward pass (module docs), for any d.
///
/// # Citations
///
/// `docs/DESIGN.md`, "Gradient matching" (∇_z⟨clip(∇_θℓ(θ; z)), v⟩ = Jᵀv by one dual pass with
/// parameter tangents); Hayes, Mahloujifar, Balle 2023, §2, Eq. 1.
///
/// # Errors
///
/// - [`Error::InvalidParameter`] `clip_norm` unless finite and > 0; `v` if an entry is not
///   finite (and the model's errors for `params`, `x`).
/// - [`Error::InvalidCount`] `label` unless a class of the model.
/// - [`Error::Inconsistent`] if `params`, `v` (length p), `x`, `out` (length d) or `ws` do
///   not fit the model.
/// - [`Error::Numerical`] if the gradient, its norm or the result is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::gradient_matching::{clipped_gradient_vjp, MatchWorkspace};
/// use reconbound::nn::arch;
/// use reconbound::train::{clip::ClipMethod, dpsgd::Clipping};
///
/// // Logistic regression, w = 0, label 1: ∇_w ℓ = −(x, 1)/2, inside the ball for C = 10, so
/// // J = ∂∇_w ℓ/∂x = −[I; 0]/2 and Jᵀv = −(v₀, v₁)/2.
/// let model = arch::logistic_regression(2)?;
/// let clipping = Clipping { method: ClipMethod::Hard, norm: 10.0 };
/// let mut ws = MatchWorkspace::new(&model);
/// let mut out = [0.0; 2];
/// clipped_gradient_vjp(&model, &[0.0; 3], &[0.2, 0.4], 1, clipping, &[1.0, 2.0, 3.0], &mut out, &mut ws)?;
/// assert_eq!(out, [-0.5, -1.0]);
/// # Ok::<(), reconbound::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn clipped_gradient_vjp(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    label: usize,
    clipping: Clipping,
    v: &[f64],
    out: &mut [f64],
    ws: &mut MatchWorkspace,
) -> Result<()> {
    check_positive("clip_norm", clipping.norm)?;
    check_label(model, label)?;
    ws.check(model)?;
    check_len("v.len() must equal num_params()", v, model.num_params())?;
    check_all_finite("v", v)?;
    check_len("out.len() must equal input_len()", out, model.input_len())?;
    let norm = ws.clipped_gradient(model, params, x, label, clipping)?;
    ws.v.copy_from_slice(v);
    out.iter_mut().for_each(|o| *o = 0.0);
    ws.add_vjp(model, params, x, label, clipping, norm, 1.0, out)
}

impl<'a> GradientMatching<'a> {
    /// The objective over `steps` for `model`, the target's `label` and the `clipping` used in
    /// training.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidParameter`] `clip_norm` unless finite and > 0; `steps.params` /
    ///   `steps.residual` if an entry is not finite.
    /// - [`Error::InvalidCount`] `label` unless a class of the model; `steps` if empty.
    /// - [`Error::Inconsistent`] if a step's `params` or `residual` does not have length p.
    pub fn new(
        model: &'a Sequential,
        label: usize,
        clipping: Clipping,
        steps: &'a [ObservedStep],
    ) -> Result<Self> {
        check_positive("clip_norm", clipping.norm)?;
        check_label(model, label)?;
        check_count("steps", steps.len() as u64, 1, ">= 1 observed step")?;
        let p = model.num_params();
        for s in steps {
            check_len("steps: params.len() must equal num_params()", &s.params, p)?;
            check_len(
                "steps: residual.len() must equal num_params()",
                &s.residual,
                p,
            )?;
            check_all_finite("steps.params", &s.params)?;
            check_all_finite("steps.residual", &s.residual)?;
        }
        Ok(GradientMatching {
            model,
            label,
            clipping,
            steps,
        })
    }

    /// Buffers for [`loss`](Self::loss) and [`loss_and_grad`](Self::loss_and_grad).
    pub fn workspace(&self) -> MatchWorkspace {
        MatchWorkspace::new(self.model)
    }

    /// The number of observed steps T.
    pub fn num_steps(&self) -> usize {
        self.steps.len()
    }

    fn check_z(&self, z: &[f64], ws: &MatchWorkspace) -> Result<()> {
        ws.check(self.model)?;
        check_len("z.len() must equal input_len()", z, self.model.input_len())?;
        check_all_finite("z", z)
    }

    /// L(z) alone: one clipped per-example gradient per step.
    ///
    /// # Errors
    ///
    /// As [`loss_and_grad`](Self::loss_and_grad).
    pub fn loss(&self, z: &[f64], ws: &mut MatchWorkspace) -> Result<f64> {
        self.check_z(z, ws)?;
        let mut total = 0.0;
        for s in self.steps {
            ws.clipped_gradient(self.model, &s.params, z, self.label, self.clipping)?;
            for ((v, &g), &r) in ws.v.iter_mut().zip(&ws.g).zip(&s.residual) {
                *v = g - r;
            }
            total += dot(&ws.v, &ws.v);
        }
        finite_loss(total)
    }

    /// L(z) and its gradient ∇_z L, written into `grad_z` (length d; overwritten).
    ///
    /// # Formula
    ///
    /// L(z) = Σ_t ‖clip(∇_θℓ(θ_t; z, y)) − ḡ_t‖², ∇_z L = Σ_t 2·J_tᵀ(clip(∇_θℓ(θ_t; z, y)) − ḡ_t)
    /// with J_t = ∂clip(∇_θℓ(θ_t; z, y))/∂z, each J_tᵀv by [`clipped_gradient_vjp`]'s two
    /// passes. Steps are summed in order.
    ///
    /// # Citations
    ///
    /// Hayes, Mahloujifar, Balle 2023, §2, Eq. 1 (the loss); `docs/DESIGN.md`, "Gradient matching".
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidParameter`] `z` if an entry is not finite.
    /// - [`Error::Inconsistent`] if `z` or `grad_z` does not have length d, or `ws` was made
    ///   for another model.
    /// - [`Error::Numerical`] if a gradient, its norm, the loss or a derivative is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::attacks::gradient_matching::{GradientMatching, ObservedStep};
    /// use reconbound::nn::{arch, Activation};
    /// use reconbound::train::{clip::{clip, ClipMethod}, dpsgd::Clipping};
    ///
    /// let model = arch::mlp(3, &[4], 2, Activation::Tanh)?;
    /// let clipping = Clipping { method: ClipMethod::Hard, norm: 0.5 };
    /// let target = [0.2, 0.7, 0.4];
    /// // Noise-free residuals of two steps: the target's clipped gradients.
    /// let mut steps = Vec::new();
    /// for seed in [1, 2] {
    ///     let params = model.init_params(seed);
    ///     let mut g = vec![0.0; model.num_params()];
    ///     model.loss_and_grad(&params, &target, 1, &mut g, &mut model.workspace())?;
    ///     clip(&mut g, clipping.method, clipping.norm)?;
    ///     steps.push(ObservedStep { params, residual: g });
    /// }
    /// let attack = GradientMatching::new(&model, 1, clipping, &steps)?;
    /// let mut ws = attack.workspace();
    /// let mut grad = [0.0; 3];
    /// // The target matches exactly: L = 0 and ∇L = 0.
    /// assert_eq!(attack.loss_and_grad(&target, &mut grad, &mut ws)?, 0.0);
    /// assert_eq!(grad, [0.0; 3]);
    /// assert!(attack.loss_and_grad(&[0.5; 3], &mut grad, &mut ws)? > 0.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn loss_and_grad(
        &self,
        z: &[f64],
        grad_z: &mut [f64],
        ws: &mut MatchWorkspace,
    ) -> Result<f64> {
        self.check_z(z, ws)?;
        check_len(
            "grad_z.len() must equal input_len()",
            grad_z,
            self.model.input_len(),
        )?;
        grad_z.iter_mut().for_each(|g| *g = 0.0);
        let mut total = 0.0;
        for s in self.steps {
            let norm = ws.clipped_gradient(self.model, &s.params, z, self.label, self.clipping)?;
            for ((v, &g), &r) in ws.v.iter_mut().zip(&ws.g).zip(&s.residual) {
                *v = g - r;
            }
            total += dot(&ws.v, &ws.v);
            ws.add_vjp(
                self.model,
                &s.params,
                z,
                self.label,
                self.clipping,
                norm,
                2.0,
                grad_z,
            )?;
        }
        finite_loss(total)
    }

    /// The reconstruction ẑ = argmin_z L(z): `config.restarts` runs of `config.iterations`
    /// optimiser steps, run r starting from U[0, 1]^d drawn from
    /// [`Rng::for_trial`]`(config.seed, r)`; the run with the smallest final loss wins (the
    /// first on ties). Deterministic: same inputs and config → bit-identical result.
    ///
    /// # Formula
    ///
    /// Step k = 0, …, K − 1 (K = `iterations`) with gradient G = ∇_z L(z_k) and learning rate
    /// η_k = η (constant) or η·(1 + cos(πk/K))/2 (`anneal`):
    /// - [`Optimizer::GradientDescent`]: z ← z − η_k·G;
    /// - [`Optimizer::Adam`] (Kingma & Ba 2015; β₁ = 0.9, β₂ = 0.999, ε = 1e-8, m₀ = s₀ = 0):
    ///   m ← β₁m + (1 − β₁)G, s ← β₂s + (1 − β₂)G², z ← z − η_k·m̂/(√ŝ + ε) with
    ///   m̂ = m/(1 − β₁^{k+1}), ŝ = s/(1 − β₂^{k+1}), coordinate-wise;
    ///
    /// then, with `project`, z ← clamp(z, 0, 1) coordinate-wise. A run's final loss is L at its
    /// last iterate z_K. Cost: `restarts`·(K·(evaluation of L and ∇L) + one evaluation of L).
    ///
    /// # Citations
    ///
    /// Hayes, Mahloujifar, Balle 2023, §2, Eq. 1 and App. A ("initialize ẑ from uniform noise
    /// … gradient descent … random restarts; we set the number of random restarts to five";
    /// the paper runs 10⁶ steps of gradient descent at learning rate 0.01, Adam converges in
    /// far fewer steps and is invariant to the scale of L, which varies as C²).
    ///
    /// # Errors
    ///
    /// As [`ReconstructionConfig::validate`]; as [`loss_and_grad`](Self::loss_and_grad)
    /// except [`Error::Numerical`]: a run that fails numerically (it can only diverge without
    /// `project`) is recorded with loss NaN in [`Reconstruction::restart_losses`] and the
    /// others continue; the first such error is returned only if every run fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::attacks::gradient_matching::{GradientMatching, ObservedStep, ReconstructionConfig};
    /// use reconbound::nn::{arch, Activation};
    /// use reconbound::train::{clip::{clip, ClipMethod}, dpsgd::Clipping};
    ///
    /// let model = arch::mlp(2, &[3], 2, Activation::Tanh)?;
    /// let clipping = Clipping { method: ClipMethod::Hard, norm: 1.0 };
    /// let target = [0.3, 0.8];
    /// let mut steps = Vec::new();
    /// for seed in 1..=3 {
    ///     let params = model.init_params(seed);
    ///     let mut g = vec![0.0; model.num_params()];
    ///     model.loss_and_grad(&params, &target, 0, &mut g, &mut model.workspace())?;
    ///     clip(&mut g, clipping.method, clipping.norm)?;
    ///     steps.push(ObservedStep { params, residual: g });
    /// }
    /// let attack = GradientMatching::new(&model, 0, clipping, &steps)?;
    /// let config = ReconstructionConfig { iterations: 300, restarts: 2, ..Default::default() };
    /// let rec = attack.reconstruct(&config)?;
    /// assert!((rec.z[0] - 0.3).abs() < 1e-3 && (rec.z[1] - 0.8).abs() < 1e-3);
    /// assert_eq!(rec.restart_losses.len(), 2);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn reconstruct(&self, config: &ReconstructionConfig) -> Result<Reconstruction> {
        config.validate()?;
        let d = self.model.input_len();
        let mut ws = self.workspace();
        let mut buffers = Buffers {
            grad: alloc::vec![0.0; d],
            m: alloc::vec![0.0; d],
            s: alloc::vec![0.0; d],
        };
        let mut best: Option<(Vec<f64>, f64, u64)> = None;
        let mut restart_losses = Vec::new();
        let mut first_error = None;
        for r in 0..config.restarts {
            let mut rng = Rng::for_trial(config.seed, r);
            let mut z: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
            match self.descend(&mut z, config, &mut buffers, &mut ws) {
                Ok(loss) => {
                    restart_losses.push(loss);
                    if best.as_ref().is_none_or(|b| loss < b.1) {
                        best = Some((z, loss, r));
                    }
                }
                Err(e @ Error::Numerical { .. }) => {
                    restart_losses.push(f64::NAN);
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        match (best, first_error) {
            (Some((z, loss, restart)), _) => Ok(Reconstruction {
                z,
                loss,
                restart,
                restart_losses,
            }),
            (None, Some(e)) => Err(e),
            (None, None) => Err(Error::Inconsistent {
                what: "no restart ran",
                value: 0.0,
            }),
        }
    }

    /// One optimiser run from `z` (updated in place); returns L at the last iterate.
    fn descend(
        &self,
        z: &mut [f64],
        config: &ReconstructionConfig,
        b: &mut Buffers,
        ws: &mut MatchWorkspace,
    ) -> Result<f64> {
        const BETA1: f64 = 0.9;
        const BETA2: f64 = 0.999;
        const EPS: f64 = 1e-8;
        b.m.iter_mut().for_each(|x| *x = 0.0);
        b.s.iter_mut().for_each(|x| *x = 0.0);
        let (mut p1, mut p2) = (1.0, 1.0);
        let k_total = config.iterations as f64;
        for k in 0..config.iterations {
            self.loss_and_grad(z, &mut b.grad, ws)?;
            let lr = if config.anneal {
                config.learning_rate
                    * 0.5
                    * (1.0 + libm::cos(core::f64::consts::PI * k as f64 / k_total))
            } else {
                config.learning_rate
            };
            match config.optimizer {
                Optimizer::GradientDescent => {
                    for (zi, &g) in z.iter_mut().zip(&b.grad) {
                        *zi -= lr * g;
                    }
                }
                Optimizer::Adam => {
                    p1 *= BETA1;
                    p2 *= BETA2;
                    let (c1, c2) = (1.0 - p1, 1.0 - p2);
                    for (((zi, &g), m), s) in z.iter_mut().zip(&b.grad).zip(&mut b.m).zip(&mut b.s)
                    {
                        *m = BETA1 * *m + (1.0 - BETA1) * g;
                        *s = BETA2 * *s + (1.0 - BETA2) * (g * g);
                        *zi -= lr * (*m / c1) / (crate::math::sqrt(*s / c2) + EPS);
                    }
                }
            }
            if config.project {
                z.iter_mut().for_each(|zi| *zi = zi.clamp(0.0, 1.0));
            } else if let Some(&bad) = z.iter().find(|x| !x.is_finite()) {
                return Err(Error::Numerical {
                    what: "the reconstruction diverged (a coordinate is not finite)",
                    value: bad,
                });
            }
        }
        self.loss(z, ws)
    }
}

/// Optimiser state of one run.
struct Buffers {
    grad: Vec<f64>,
    m: Vec<f64>,
    s: Vec<f64>,
}

fn finite_loss(total: f64) -> Result<f64> {
    if total.is_finite() {
        Ok(total)
    } else {
        Err(Error::Numerical {
            what: "the gradient-matching loss is not finite",
            value: total,
        })
    }
}

/// The optimiser of [`GradientMatching::reconstruct`] (step rules in its `# Formula`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optimizer {
    /// Adam (β₁ = 0.9, β₂ = 0.999, ε = 1e-8): steps of about the learning rate per
    /// coordinate whatever the scale of L.
    Adam,
    /// Plain gradient descent, as in Hayes et al. App. A (learning rate 0.01, 10⁶ steps).
    GradientDescent,
}

/// How [`GradientMatching::reconstruct`] optimises.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconstructionConfig {
    /// Adam or gradient descent.
    pub optimizer: Optimizer,
    /// The learning rate η > 0 (the initial one when annealed).
    pub learning_rate: f64,
    /// Cosine annealing of the learning rate from η to 0 over the iterations.
    pub anneal: bool,
    /// Optimiser steps per run, ≥ 1.
    pub iterations: u64,
    /// Runs from independent uniform starting points, ≥ 1.
    pub restarts: u64,
    /// Project every iterate onto the data box [0, 1]^d.
    pub project: bool,
    /// Master seed of the starting points.
    pub seed: u64,
}

impl Default for ReconstructionConfig {
    /// Adam at η = 0.05, cosine-annealed, 1,000 iterations, 5 restarts (Hayes et al. App. A),
    /// projected onto [0, 1]^d, seed 0.
    fn default() -> Self {
        ReconstructionConfig {
            optimizer: Optimizer::Adam,
            learning_rate: 0.05,
            anneal: true,
            iterations: 1000,
            restarts: 5,
            project: true,
            seed: 0,
        }
    }
}

impl ReconstructionConfig {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `learning_rate` unless finite and > 0;
    /// [`Error::InvalidCount`] `iterations` or `restarts` if 0.
    pub fn validate(&self) -> Result<()> {
        check_positive("learning_rate", self.learning_rate)?;
        check_count("iterations", self.iterations, 1, ">= 1")?;
        check_count("restarts", self.restarts, 1, ">= 1")?;
        Ok(())
    }
}

/// The result of [`GradientMatching::reconstruct`].
#[derive(Clone, Debug, PartialEq)]
pub struct Reconstruction {
    /// The reconstruction ẑ (length d): the last iterate of the winning run.
    pub z: Vec<f64>,
    /// L(ẑ).
    pub loss: f64,
    /// The index of the winning run.
    pub restart: u64,
    /// Every run's final loss, in run order (NaN for a run that failed numerically).
    pub restart_losses: Vec<f64>,
}

/// The App. D score of a reconstruction against a prior of n candidates: the target and n − 1
/// other points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PriorScore {
    /// `true` iff ẑ is strictly nearer (L2) to the target than to every other point (a tie
    /// counts as a failure).
    pub success: bool,
    /// ‖ẑ − z‖₂.
    pub distance: f64,
    /// min_j ‖ẑ − o_j‖₂ over the other points.
    pub nearest_other: f64,
    /// ‖ẑ − z‖²/d.
    pub mse: f64,
}

/// ‖a − b‖² as [`dot`] of the difference (written into `diff`, same length as `a`).
fn squared_distance(a: &[f64], b: &[f64], diff: &mut [f64]) -> f64 {
    for ((e, &x), &y) in diff.iter_mut().zip(a).zip(b) {
        *e = x - y;
    }
    dot(diff, diff)
}

/// Scores a reconstruction as Hayes et al. App. D: success iff ẑ is nearer (L2) to the target
/// z than to each of the n − 1 `others` (random data points supplied by the caller, back to
/// back, `others.len() = (n − 1)·d`), and the MSE ‖ẑ − z‖²/d. Averaging `success` over many
/// draws of `others` gives the success rate against a random prior of size n (the paper:
/// n = 10, 1,000 draws per target).
///
/// # Formula
///
/// success = ‖ẑ − z‖ < min_j ‖ẑ − o_j‖ (strict: ties fail); MSE = Σ_i (ẑ_i − z_i)²/d.
///
/// # Citations
///
/// Hayes, Mahloujifar, Balle 2023, App. D (and Fig. 8).
///
/// # Errors
///
/// - [`Error::InvalidCount`] `target` if empty; `others` if it holds no point.
/// - [`Error::Inconsistent`] if `reconstruction` and `target` differ in length or
///   `others.len()` is not a multiple of d.
/// - [`Error::InvalidParameter`] `reconstruction` / `target` / `others` if an entry is not
///   finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::gradient_matching::prior_score;
/// let s = prior_score(&[0.1, 0.9], &[0.0, 1.0], &[1.0, 0.0, 0.5, 0.5])?;
/// assert!(s.success);
/// assert!((s.mse - 0.01).abs() < 1e-15);
/// assert!(!prior_score(&[0.5, 0.5], &[0.0, 1.0], &[0.5, 0.5])?.success);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn prior_score(reconstruction: &[f64], target: &[f64], others: &[f64]) -> Result<PriorScore> {
    let d = target.len();
    check_count("target", d as u64, 1, ">= 1 coordinate")?;
    check_len(
        "reconstruction.len() must equal target.len()",
        reconstruction,
        d,
    )?;
    if others.len() % d != 0 {
        return Err(Error::Inconsistent {
            what: "others.len() must be a multiple of target.len() (points back to back)",
            value: others.len() as f64,
        });
    }
    check_count(
        "others",
        (others.len() / d) as u64,
        1,
        ">= 1 other point (a prior of n >= 2 candidates)",
    )?;
    check_all_finite("reconstruction", reconstruction)?;
    check_all_finite("target", target)?;
    check_all_finite("others", others)?;
    let mut diff = alloc::vec![0.0; d];
    let own = squared_distance(reconstruction, target, &mut diff);
    let nearest = others
        .chunks_exact(d)
        .map(|o| squared_distance(reconstruction, o, &mut diff))
        .fold(f64::INFINITY, f64::min);
    Ok(PriorScore {
        success: own < nearest,
        distance: libm::sqrt(own),
        nearest_other: libm::sqrt(nearest),
        mse: own / d as f64,
    })
}

/// One image of a [`reconstruction_grid`] with its caption.
#[derive(Clone, Debug, PartialEq)]
pub struct GridImage {
    /// The pixels, channel-major as in [`Dataset`](crate::data::Dataset), clamped to [0, 1].
    pub pixels: Vec<f64>,
    /// Text under the image.
    pub caption: String,
}

/// One labelled row of a [`reconstruction_grid`].
#[derive(Clone, Debug, PartialEq)]
pub struct GridRow {
    /// Text left of the row.
    pub label: String,
    /// The images, left to right.
    pub images: Vec<GridImage>,
}

/// The data of a figure like Hayes et al. Fig. 6: a row of targets (captioned "target k") and
/// below it the row of their reconstructions (captioned with the MSE ‖ẑ − z‖²/d to four
/// decimals), pixels clamped to [0, 1]. `targets` and `reconstructions` hold the same number
/// of images of `dim` values each, back to back. A renderer (the command line's SVG image
/// grid) draws the rows as they are.
///
/// # Errors
///
/// [`Error::InvalidCount`] `dim` if 0, `targets` if empty; [`Error::Inconsistent`] if a
/// length is not a multiple of `dim` or the two differ; [`Error::InvalidParameter`]
/// `targets` / `reconstructions` if an entry is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::gradient_matching::reconstruction_grid;
/// let rows = reconstruction_grid(&[0.0, 1.0, 0.5, 0.5], &[0.1, 1.2, 0.5, 0.5], 2)?;
/// assert_eq!(rows.len(), 2);
/// assert_eq!(rows[1].images[0].pixels, vec![0.1, 1.0]);
/// assert_eq!(rows[1].images[0].caption, "MSE 0.0250");
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn reconstruction_grid(
    targets: &[f64],
    reconstructions: &[f64],
    dim: usize,
) -> Result<Vec<GridRow>> {
    check_count("dim", dim as u64, 1, ">= 1")?;
    check_count("targets", targets.len() as u64, 1, ">= 1 image")?;
    if targets.len() % dim != 0 || reconstructions.len() != targets.len() {
        return Err(Error::Inconsistent {
            what: "targets and reconstructions must hold the same number of images of dim values",
            value: reconstructions.len() as f64,
        });
    }
    check_all_finite("targets", targets)?;
    check_all_finite("reconstructions", reconstructions)?;
    let clamp = |v: &[f64]| v.iter().map(|x| x.clamp(0.0, 1.0)).collect::<Vec<f64>>();
    let mut top = Vec::new();
    let mut bottom = Vec::new();
    let mut diff = alloc::vec![0.0; dim];
    for (k, (t, r)) in targets
        .chunks_exact(dim)
        .zip(reconstructions.chunks_exact(dim))
        .enumerate()
    {
        top.push(GridImage {
            pixels: clamp(t),
            caption: format!("target {k}"),
        });
        bottom.push(GridImage {
            pixels: clamp(r),
            caption: format!("MSE {:.4}", squared_distance(r, t, &mut diff) / dim as f64),
        });
    }
    Ok(alloc::vec![
        GridRow {
            label: String::from("target"),
            images: top,
        },
        GridRow {
            label: String::from("reconstruction"),
            images: bottom,
        },
    ])
}

/// Collects (θ_t, ḡ_t) from a DP-SGD run for [`GradientMatching`]: an [`Observer`] that keeps
/// every step's parameters and residual ḡ_t = B·released_t − Σ_{j ∈ D⁻ ∩ B_t} clip(∇_θℓ(θ_t;
/// z_j)).
///
/// Train with the target as the trainer's [secret](crate::train::dpsgd::Secret)
/// ([`DpSgd::with_secret`](crate::train::dpsgd::DpSgd::with_secret) on D⁻): observers then see
/// only D⁻'s part of each batch and its clipped-gradient sum [`StepInfo::batch_sum`] — exactly
/// what the adversary, who knows D⁻, computes itself — so the residual never depends on the
/// target's identity or batch membership. Memory: 2·T·p values.
#[derive(Clone, Debug)]
pub struct ResidualRecorder<'a> {
    model: &'a Sequential,
    steps: Vec<ObservedStep>,
}

impl<'a> ResidualRecorder<'a> {
    /// A recorder for `model`.
    pub fn new(model: &'a Sequential) -> Self {
        ResidualRecorder {
            model,
            steps: Vec::new(),
        }
    }

    /// The steps observed so far.
    pub fn steps(&self) -> &[ObservedStep] {
        &self.steps
    }

    /// The observed steps, consuming the recorder.
    pub fn into_steps(self) -> Vec<ObservedStep> {
        self.steps
    }
}

impl Observer for ResidualRecorder<'_> {
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        game::observe(self, info)
    }
}

impl Adversary for ResidualRecorder<'_> {
    type View<'s> = InformedView<'s>;

    fn see(&mut self, view: &InformedView<'_>) -> Result<()> {
        let p = self.model.num_params();
        let released = view.gradients().released();
        check_len("released.len() must equal num_params()", released, p)?;
        check_len(
            "batch_sum.len() must equal num_params()",
            view.known_sum(),
            p,
        )?;
        let mut residual = alloc::vec![0.0; p];
        view.residual(&mut residual);
        self.steps.push(ObservedStep {
            params: view.gradients().params().to_vec(),
            residual,
        });
        Ok(())
    }
}

/// The experiment of Hayes et al. §2 and App. D: per trial, draw D⁻ and a target from a pool
/// of data, and n − 1 other points **of the target's class**, train on D⁻ plus the target (the
/// trainer's secret; Poisson sampling or the full batch), reconstruct the target by gradient
/// matching from the residuals, label known, and score the reconstruction against the target
/// and the n − 1 others (App. D) and by its MSE.
///
/// Scored this way the attack is a prior-aware attack with a uniform prior of n candidates
/// that share one label (the target and the others; the label the adversary is given is then
/// no extra knowledge), so its success rate must stay below the ReRo bound γ at κ = 1/n.
/// Hayes et al. draw the others from the whole data set; with the label known that would let
/// the label alone rule candidates out, and γ at κ = 1/n would not apply.
#[derive(Clone, Copy, Debug)]
pub struct GradientMatchingSetup<'a> {
    /// The model (initialised per trial by [`Sequential::init_params`]).
    pub model: &'a Sequential,
    /// The data D⁻, the target and the other points are drawn from, without replacement.
    pub pool: &'a crate::data::Dataset,
    /// |D⁻|.
    pub train_size: usize,
    /// n − 1, the number of other points of the App. D score (≥ 1).
    pub others: usize,
    /// The DP-SGD run (its `seed` is ignored: each trial draws its own; clipping required).
    pub dpsgd: crate::train::dpsgd::DpSgdConfig,
    /// The optimiser (its `seed` is ignored: each trial draws its own).
    pub reconstruction: ReconstructionConfig,
}

/// The measures of a gradient-matching reconstruction: the named score set of
/// [`GradientMatchingOutcome::measures`], in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// ‖ẑ − z‖²/d ([`PriorScore::mse`]).
    Mse,
    /// ‖ẑ − z‖₂ ([`PriorScore::distance`]).
    Distance,
    /// The distance to the nearest other candidate ([`PriorScore::nearest_other`]).
    NearestOther,
    /// L(ẑ), the matching loss.
    Loss,
}

impl ScoreKind for Measure {
    const KINDS: &'static [Measure] = &[
        Measure::Mse,
        Measure::Distance,
        Measure::NearestOther,
        Measure::Loss,
    ];

    fn name(self) -> &'static str {
        match self {
            Measure::Mse => "mse",
            Measure::Distance => "distance",
            Measure::NearestOther => "nearest-other",
            Measure::Loss => "loss",
        }
    }
}

/// What one trial of a [`GradientMatchingSetup`] gave.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientMatchingOutcome {
    /// The trial index.
    pub trial: u64,
    /// The target's index in the pool.
    pub target: usize,
    /// The App. D score.
    pub score: PriorScore,
    /// L(ẑ).
    pub loss: f64,
    /// The reconstruction ẑ.
    pub reconstruction: Vec<f64>,
}

impl GradientMatchingOutcome {
    /// The trial's measures as a named score set (what the command line's CSV columns are
    /// written from).
    pub fn measures(&self) -> Named<Measure, f64, 4> {
        Named::from_fn(|m: Measure| match m {
            Measure::Mse => self.score.mse,
            Measure::Distance => self.score.distance,
            Measure::NearestOther => self.score.nearest_other,
            Measure::Loss => self.loss,
        })
    }
}

impl GradientMatchingSetup<'_> {
    /// Trial `trial` of a run with seed `master_seed`, a pure function of the two: the
    /// [`Challenge`] of [`PriorDraw::SameClass`] — from [`Rng::for_trial`]`(master_seed,
    /// trial)`, in this order: |D⁻| + 1 pool indices without replacement, which of them is
    /// the target (the rest is D⁻), n − 1 others among the pool's remaining examples of the
    /// target's class, the initialisation seed, the DP-SGD seed, the optimiser seed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `others` if 0 or more than the pool's other examples of the
    /// target's class, `train_size` if 0, `pool` if it has at most |D⁻| examples;
    /// [`Error::InvalidParameter`] `sampling` unless Poisson or the full batch; [`Error::InvalidParameter`] `clip_norm` without clipping; as
    /// [`DpSgd::with_secret`](crate::train::dpsgd::DpSgd::with_secret),
    /// [`GradientMatching::reconstruct`] and [`prior_score`].
    pub fn run_trial(&self, master_seed: u64, trial: u64) -> Result<GradientMatchingOutcome> {
        use crate::train::dpsgd::Secret;
        let (n, k) = (self.train_size, self.others);
        let clipping = self.dpsgd.clipping.ok_or(Error::InvalidParameter {
            name: "clip_norm",
            value: f64::NAN,
            expected: "set: gradient matching runs on clipped DP-SGD",
        })?;
        crate::attacks::prior_aware::check_sampling(self.dpsgd.sampling)?;
        let challenge = Challenge::draw(
            self.pool,
            n,
            PriorDraw::SameClass { others: k },
            master_seed,
            trial,
        )?;
        let dminus = challenge.train_set(self.pool)?;
        let secret = challenge.secret(self.pool)?;
        let Secret::Example { x, label } = secret else {
            return Err(Error::Inconsistent {
                what: "gradient matching reconstructs an example, not a gradient canary",
                value: 0.0,
            });
        };
        let mut trainer = challenge.trainer(self.model, &dminus, &self.dpsgd, secret)?;
        let mut recorder = ResidualRecorder::new(self.model);
        challenge.play(self.model, &mut trainer, self.dpsgd.steps, &mut recorder)?;
        let steps = recorder.into_steps();
        let attack = GradientMatching::new(self.model, label as usize, clipping, &steps)?;
        let rec = attack.reconstruct(&ReconstructionConfig {
            seed: challenge.seeds.optimiser,
            ..self.reconstruction
        })?;
        let mut other_x = Vec::with_capacity(k * x.len());
        // every candidate but the target (the prior is ascending: issue 31)
        for (_, &o) in challenge
            .prior
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != challenge.target)
        {
            other_x.extend_from_slice(self.pool.example(o)?.0);
        }
        let score = prior_score(&rec.z, x, &other_x)?;
        Ok(GradientMatchingOutcome {
            trial,
            target: challenge
                .prior
                .get(challenge.target)
                .copied()
                .unwrap_or(usize::MAX),
            score,
            loss: rec.loss,
            reconstruction: rec.z,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_name_the_csv_columns_in_order() {
        let columns: Vec<String> = Measure::KINDS.iter().map(|m| m.column()).collect();
        assert_eq!(columns.join(","), "mse,distance,nearest_other,loss");
        let o = GradientMatchingOutcome {
            trial: 0,
            target: 3,
            score: prior_score(&[0.1, 0.9], &[0.0, 1.0], &[1.0, 0.0]).unwrap(),
            loss: 2.5,
            reconstruction: Vec::new(),
        };
        let m = o.measures();
        assert_eq!(m.get(Measure::Mse), Some(&o.score.mse));
        assert_eq!(m.get(Measure::NearestOther), Some(&o.score.nearest_other));
        assert_eq!(m.values()[3], 2.5);
    }
    #[test]
    fn prior_score_counts_ties_as_failures_and_reports_distances() {
        let s = prior_score(&[0.0, 0.0], &[1.0, 0.0], &[0.0, 1.0, 3.0, 3.0]).unwrap();
        assert!(!s.success, "tie with the first other point");
        assert_eq!((s.distance, s.nearest_other, s.mse), (1.0, 1.0, 0.5));
        let s = prior_score(&[0.9, 0.0], &[1.0, 0.0], &[0.0, 1.0, 3.0, 3.0]).unwrap();
        assert!(s.success);
    }
}
