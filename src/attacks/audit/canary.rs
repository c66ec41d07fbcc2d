//! The crafters of Nasr et al. 2021 (§IV, Table I): what the adversary adds to D to make D′.
//!
//! Every crafter works before training, from what the adversary of the DP-SGD analysis
//! knows: the training set D, a pool of other examples from the same distribution, the
//! model, the initial parameters θ₀ (public: the audit fixes them for all trials), the
//! clipping norm C and the hyperparameters. Nothing depends on a trial's randomness, so the
//! canary is the same in every trial and both worlds share D.
//!
//! | crafter | [`Crafter`] | canary |
//! |---|---|---|
//! | 1 | [`Crafter::Example`] | an example of the pool (the data distribution), as it is |
//! | 2 | [`Crafter::Mislabelled`] | that example with the label θ₀ finds least likely |
//! | 2 | [`Crafter::ClipBkd`] | a scaled lowest-variance direction of D's inputs, least likely label |
//! | 3 | [`Crafter::Adaptive`] | a fresh input each step, crafted from θ_t for the mislabelled query |
//! | 4 | [`Crafter::Gradient`] | a gradient canary on the coordinates D's gradients use least |
//! | 5 | [`Crafter::MaliciousDataset`] | D relabelled by θ₀, learning rate 0, and the gradient canary |
//! | 5 | [`Crafter::OpposedDataset`] | D = copies of one example, learning rate 0, the canary minus its clipped gradient |
//!
//! [`Crafter::OpposedDataset`] is Chua et al.'s (ICML 2024) lower-bound instance of shuffled
//! batches ([`crate::accounting::shuffle_lower`]): every other record contributes g, the
//! canary −g, so a batch's sum shows how many of D's records it holds — under shuffling, which
//! batch holds the canary's slot in either world — while Poisson sampling hides it in the
//! binomial count of D's records.
//!
//! # Choices made here (where the paper leaves room)
//!
//! - The gradient canary's coordinates are ranked by M_j = Σ_{i∈D} |clip(∇ℓ(θ₀; z_i))_j|,
//!   the first update without noise, which the adversary computes from D and θ₀; Nasr et al.
//!   measure the first t_o released updates instead, which a canary fixed before training
//!   cannot read. Ties go to the lower index. On MNIST the weights of always-black pixels have
//!   M_j = 0 at every step, so a Dirac canary there is as isolated as in crafter 5.
//! - The ClipBKD direction (Jagielski, Ullman, Oprea 2020) approximates a unit eigenvector
//!   of the smallest eigenvalue of D's input covariance: at most 200 steps of power iteration
//!   on ρ̄I − Σ (ρ̄ = tr Σ ≥ λ_max, matrix-free), started at the pixel of least variance and
//!   stopped when vᵀΣv stops decreasing — so the direction's variance is never above that
//!   pixel's. A pixel of variance 0 (MNIST's border) is already an exact eigenvector of the
//!   smallest eigenvalue 0; elsewhere convergence is slow when tr Σ is large against the
//!   eigengap, and the result is an approximation. It is scaled to the largest input norm of
//!   D.
//! - The adaptive canary (crafter 3) starts each step at the query and ascends
//!   ⟨clip(∇_θℓ(θ_t; x, y_q)), ∇_θℓ(θ_t; x_q, y_q)⟩ in x: to first order, a step on x lowers
//!   the query's loss by ρ/B times this inner product, so ascending it is **descent** on the
//!   query's loss after the step (the paper's text; its pseudo-code, Crafter 3 line 8,
//!   ascends the loss instead). The gradient in x is Jᵀv of
//!   [`clipped_gradient_vjp`]; a
//!   step is taken only if it raises the inner product (else its length is halved). At the
//!   query itself the clipped gradient is C·v/‖v‖ whenever ‖v‖ ≥ C, already the maximum
//!   (Cauchy–Schwarz): the adaptive canary then stays the query, and only gains where the
//!   query's gradient is inside the clipping ball (a larger gradient along v). Inputs
//!   may leave the data's range [0, 1], as may ClipBKD's: DP-SGD's guarantee covers any
//!   input, so the audit may use any.
//! - The shadow-model gradient-ascent canary of Crafter 2 is not built: the mislabelled and
//!   ClipBKD canaries are the input-space canaries here.
//!
//! # Citations
//!
//! Nasr, Song, Thakurta, Papernot, Carlini, "Adversary instantiation: lower bounds for
//! differentially private machine learning", IEEE S&P 2021, §IV-A–F, Crafters 1–5
//! (`nasr2021-adversary-instantiation.txt`); Jagielski, Ullman, Oprea, "Auditing
//! differentially private machine learning: how private is private SGD?", NeurIPS 2020
//! (ClipBKD).

use crate::accounting::fil::fisher::dot;
use crate::attacks::gradient_matching::{clipped_gradient_vjp, MatchWorkspace};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::nn::{Sequential, Workspace};
use crate::train::clip::clip;
use crate::train::dpsgd::{Clipping, Secret};
use alloc::vec::Vec;

/// The shape of a gradient canary of norm C (crafters 4 and 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradientShape {
    /// C·e_p on the least-used coordinate p.
    Dirac,
    /// ±C/√k on the k least-used coordinates, signs alternating in rank order (Nasr et al.'s
    /// Crafter 4 with k = 2n); k ≥ 2 and even.
    Spread(usize),
}

/// A crafter (Nasr et al. 2021, Table I).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crafter {
    /// Crafter 1: an example drawn from the data distribution (an example of the pool).
    Example,
    /// Crafter 2: the same example, labelled with the class θ₀ finds least likely.
    Mislabelled,
    /// Crafter 2 (ClipBKD): a scaled lowest-variance direction of D's inputs with the least
    /// likely label.
    ClipBkd,
    /// Crafter 3: a fresh input canary each step for the mislabelled query (module docs).
    Adaptive,
    /// Crafter 4: a gradient canary of the given shape.
    Gradient(GradientShape),
    /// Crafter 5: D relabelled by θ₀'s predictions, learning rate 0 and a gradient canary.
    MaliciousDataset(GradientShape),
    /// Crafter 5 as Chua et al.'s shuffling instance: D = n copies of D's first example,
    /// labelled with the class θ₀ finds least likely, learning rate 0, and the gradient
    /// canary −g, g that example's clipped gradient at θ₀ (module docs).
    OpposedDataset,
}

impl Crafter {
    /// One crafter of each kind of Nasr et al.'s Table I, in its order: the example, the
    /// mislabelled example, ClipBKD, the adaptive canary, the Dirac gradient canary and the
    /// malicious dataset with the Dirac canary.
    pub const TABLE_ONE: [Crafter; 6] = [
        Crafter::Example,
        Crafter::Mislabelled,
        Crafter::ClipBkd,
        Crafter::Adaptive,
        Crafter::Gradient(GradientShape::Dirac),
        Crafter::MaliciousDataset(GradientShape::Dirac),
    ];

    /// The crafter's number in Nasr et al.'s Table I.
    pub fn number(self) -> u8 {
        match self {
            Crafter::Example => 1,
            Crafter::Mislabelled | Crafter::ClipBkd => 2,
            Crafter::Adaptive => 3,
            Crafter::Gradient(_) => 4,
            Crafter::MaliciousDataset(_) | Crafter::OpposedDataset => 5,
        }
    }

    /// A short stable name (`example`, `mislabelled`, `clipbkd`, `adaptive`,
    /// `gradient-dirac`, `gradient-spread-K`, `dataset-dirac`, `dataset-spread-K`,
    /// `dataset-opposed`) for
    /// tables and files.
    pub fn name(self) -> alloc::string::String {
        use alloc::format;
        use alloc::string::ToString;
        let shape = |s: GradientShape| match s {
            GradientShape::Dirac => "dirac".to_string(),
            GradientShape::Spread(k) => format!("spread-{k}"),
        };
        match self {
            Crafter::Example => "example".to_string(),
            Crafter::Mislabelled => "mislabelled".to_string(),
            Crafter::ClipBkd => "clipbkd".to_string(),
            Crafter::Adaptive => "adaptive".to_string(),
            Crafter::Gradient(s) => format!("gradient-{}", shape(s)),
            Crafter::MaliciousDataset(s) => format!("dataset-{}", shape(s)),
            Crafter::OpposedDataset => "dataset-opposed".to_string(),
        }
    }

    /// `true` for crafter 5 (learning rate 0, so θ_t ≡ θ₀).
    pub fn freezes_parameters(self) -> bool {
        matches!(self, Crafter::MaliciousDataset(_) | Crafter::OpposedDataset)
    }
}

/// The adaptive canary's inner optimisation (crafter 3): `iterations` normalised ascent steps
/// from the query, the first of length `step` (in input units), each taken only if it raises
/// the alignment and halved otherwise (so the crafted input is never worse than the query).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveConfig {
    /// Ascent steps per training step (≥ 1).
    pub iterations: usize,
    /// The length of each step in input space (finite, > 0).
    pub step: f64,
}

impl AdaptiveConfig {
    /// Checks both fields.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `iterations` = 0; [`Error::InvalidParameter`] `step` unless
    /// finite and positive.
    pub fn validate(&self) -> Result<()> {
        if self.iterations == 0 {
            return Err(Error::InvalidCount {
                name: "iterations",
                value: 0,
                expected: ">= 1",
            });
        }
        crate::error::check_positive("step", self.step)?;
        Ok(())
    }
}

impl Default for AdaptiveConfig {
    /// 4 steps of length 0.5 (MNIST pixels are in [0, 1]).
    fn default() -> Self {
        AdaptiveConfig {
            iterations: 4,
            step: 0.5,
        }
    }
}

/// A crafted canary.
#[derive(Clone, Debug, PartialEq)]
pub enum Canary {
    /// An input canary (crafters 1, 2): inserted and queried as it is.
    Example {
        /// The input (length d).
        x: Vec<f64>,
        /// Its label.
        label: u32,
    },
    /// The adaptive canary (crafter 3): the query (x_q, y_q) the distinguishers read; the
    /// inserted example is crafted from it at every step ([`Canary::adaptive_input`]).
    Adaptive {
        /// The query input (length d).
        query: Vec<f64>,
        /// The query's label, also the label of every inserted example.
        label: u32,
        /// The per-step crafting.
        config: AdaptiveConfig,
    },
    /// A gradient canary (crafters 4, 5): the pseudo-example's gradient (length p, norm C).
    /// Its "loss" for the loss distinguishers is ⟨c, θ⟩, whose gradient is c.
    Gradient(Vec<f64>),
}

/// The adversary's workspace for a canary: buffers for the crafting of adaptive inputs and
/// for clipped gradients.
#[derive(Clone, Debug)]
pub struct CanaryWorkspace {
    ws: Workspace<f64>,
    mws: MatchWorkspace,
    /// ∇_θℓ at the query (p).
    v: Vec<f64>,
    /// Jᵀv (d).
    gx: Vec<f64>,
    /// A proposed input (d).
    trial: Vec<f64>,
}

impl CanaryWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Sequential) -> Self {
        CanaryWorkspace {
            ws: model.workspace(),
            mws: MatchWorkspace::new(model),
            v: alloc::vec![0.0; model.num_params()],
            gx: alloc::vec![0.0; model.input_len()],
            trial: alloc::vec![0.0; model.input_len()],
        }
    }

    /// ⟨clip(∇_θℓ(θ; x, label)), v⟩ with v in `self.v`.
    fn alignment(
        &mut self,
        model: &Sequential,
        params: &[f64],
        x: &[f64],
        label: usize,
        clipping: Clipping,
    ) -> Result<f64> {
        self.mws
            .clipped_gradient(model, params, x, label, clipping)?;
        Ok(dot(&self.mws.g, &self.v))
    }
}

impl Canary {
    /// The canary's loss at `params`: ℓ(θ; x, label) for an input canary and for the
    /// adaptive canary's query, ⟨c, θ⟩ for a gradient canary. What distinguishers 1 and 2
    /// read.
    ///
    /// # Errors
    ///
    /// As [`Sequential::loss`]; [`Error::Inconsistent`] if a canary gradient or `params` is
    /// not of length p.
    pub fn loss(
        &self,
        model: &Sequential,
        params: &[f64],
        ws: &mut CanaryWorkspace,
    ) -> Result<f64> {
        match self {
            Canary::Example { x, label }
            | Canary::Adaptive {
                query: x, label, ..
            } => model.loss(params, x, *label as usize, &mut ws.ws),
            Canary::Gradient(c) => {
                if c.len() != params.len() || c.len() != model.num_params() {
                    return Err(Error::Inconsistent {
                        what: "a canary gradient and the parameters must have num_params() entries",
                        value: c.len() as f64,
                    });
                }
                Ok(dot(c, params))
            }
        }
    }

    /// The input the adaptive canary inserts at parameters `params` (crafter 3, module
    /// docs), written into `x` (length d); for other canaries their input, and nothing for a
    /// gradient canary.
    ///
    /// # Errors
    ///
    /// As [`clipped_gradient_vjp`] and [`Sequential::loss_and_grad`]; [`Error::Inconsistent`]
    /// if `x` or the canary's input is not of length d; [`Error::InvalidCount`] `iterations`
    /// = 0 and [`Error::InvalidParameter`] `step` unless finite and positive (an adaptive
    /// canary's configuration).
    pub fn adaptive_input(
        &self,
        model: &Sequential,
        params: &[f64],
        clipping: Clipping,
        x: &mut [f64],
        ws: &mut CanaryWorkspace,
    ) -> Result<()> {
        if x.len() != model.input_len() {
            return Err(Error::Inconsistent {
                what: "x.len() must equal the model's input_len()",
                value: x.len() as f64,
            });
        }
        let fits = |v: &[f64]| {
            if v.len() == x.len() {
                Ok(())
            } else {
                Err(Error::Inconsistent {
                    what: "the canary's input must have the model's input_len() entries",
                    value: v.len() as f64,
                })
            }
        };
        match self {
            Canary::Example { x: x0, .. } => {
                fits(x0)?;
                x.copy_from_slice(x0);
                Ok(())
            }
            Canary::Gradient(_) => Ok(()),
            Canary::Adaptive {
                query,
                label,
                config,
            } => {
                fits(query)?;
                config.validate()?;
                let label = *label as usize;
                x.copy_from_slice(query);
                model.loss_and_grad(params, query, label, &mut ws.v, &mut ws.ws)?;
                let mut current = ws.alignment(model, params, x, label, clipping)?;
                let mut step = config.step;
                for _ in 0..config.iterations {
                    clipped_gradient_vjp(
                        model,
                        params,
                        x,
                        label,
                        clipping,
                        &ws.v,
                        &mut ws.gx,
                        &mut ws.mws,
                    )?;
                    let norm = libm::sqrt(dot(&ws.gx, &ws.gx));
                    if !(norm > 0.0 && norm.is_finite()) {
                        break;
                    }
                    // Backtracking: take the step only if it raises the alignment, else halve it.
                    ws.trial.copy_from_slice(x);
                    let s = step / norm;
                    for (t, &g) in ws.trial.iter_mut().zip(&ws.gx) {
                        *t += s * g;
                    }
                    let trial = core::mem::take(&mut ws.trial);
                    let value = ws.alignment(model, params, &trial, label, clipping);
                    ws.trial = trial;
                    let value = value?;
                    if value > current {
                        x.copy_from_slice(&ws.trial);
                        current = value;
                    } else {
                        step /= 2.0;
                    }
                }
                Ok(())
            }
        }
    }

    /// The secret the trainer inserts for this canary, given the crafted input `x` of an
    /// adaptive canary ([`adaptive_input`](Self::adaptive_input); ignored otherwise).
    pub fn secret<'s>(&'s self, x: &'s [f64]) -> Secret<'s> {
        match self {
            Canary::Example { x, label } => Secret::Example { x, label: *label },
            Canary::Adaptive { label, .. } => Secret::Example { x, label: *label },
            Canary::Gradient(c) => Secret::Gradient(c),
        }
    }
}

/// What a crafter produced: the canary and the training set D (relabelled for crafter 5).
#[derive(Clone, Debug)]
pub struct Crafted {
    /// The canary.
    pub canary: Canary,
    /// The training set D both worlds train on.
    pub data: Dataset,
    /// The pool index of the example crafters 1–3 start from (`None` for others).
    pub pool_index: Option<usize>,
}

/// Runs `crafter` (module docs) for `model` at the initial parameters `init` with `clipping`
/// on the training set `data`; crafters 1–3 take the example `pool_index` of `pool` (examples
/// from the same distribution, not in D).
///
/// # Formula
///
/// Crafter 1: (x, y) = the pool's example `pool_index`. Crafter 2: label argmax_k ℓ(θ₀; x, k) (the least
/// likely class; lowest k on ties); ClipBKD: x = ‖D‖_max·v, v a unit eigenvector of the
/// smallest eigenvalue of D's input covariance. Crafters 4–5: M_j = Σ_i |clip(∇ℓ(θ₀;
/// z_i))_j|, c = C·e_p (p = argmin M) or ±C/√k on the k smallest M_j. Crafter 5 first
/// relabels every example of D by θ₀'s prediction.
///
/// # Citations
///
/// Nasr et al. 2021, §IV, Crafters 1–5; Jagielski et al. 2020 (ClipBKD).
///
/// # Errors
///
/// [`Error::InvalidCount`] `pool_index` ≥ the pool's size (crafters 1–3); `spread` unless
/// even, ≥ 2 and ≤ p; `iterations` = 0; [`Error::InvalidParameter`] `step` unless finite and
/// positive, `clip_norm` unless finite and positive; [`Error::Inconsistent`] if the data, the
/// pool or `init` do not fit the model; the model's errors.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::canary::{craft, Canary, Crafter, GradientShape};
/// use reconbound::data::synthetic::gaussian_blobs;
/// use reconbound::nn::arch;
/// use reconbound::train::{clip::ClipMethod, dpsgd::Clipping};
///
/// let data = gaussian_blobs(30, 4, 2, 0.15, 1)?;
/// let pool = gaussian_blobs(5, 4, 2, 0.15, 2)?;
/// let model = arch::logistic_regression(4)?;
/// let init = model.init_params(0);
/// let clipping = Clipping { method: ClipMethod::Hard, norm: 1.0 };
/// let crafted = craft(Crafter::Gradient(GradientShape::Dirac), &model, &init, clipping, &data, &pool, 0, Default::default())?;
/// let Canary::Gradient(c) = &crafted.canary else { unreachable!() };
/// assert_eq!(c.iter().filter(|&&v| v != 0.0).count(), 1);
/// assert_eq!(c.iter().map(|v| v.abs()).sum::<f64>(), 1.0); // C·e_p
/// # Ok::<(), reconbound::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn craft(
    crafter: Crafter,
    model: &Sequential,
    init: &[f64],
    clipping: Clipping,
    data: &Dataset,
    pool: &Dataset,
    pool_index: usize,
    adaptive: AdaptiveConfig,
) -> Result<Crafted> {
    crate::error::check_positive("clip_norm", clipping.norm)?;
    if init.len() != model.num_params() {
        return Err(Error::Inconsistent {
            what: "init.len() must equal the model's num_params()",
            value: init.len() as f64,
        });
    }
    let mut ws = model.workspace();
    let pool_example = |ws: &mut Workspace<f64>| -> Result<(Vec<f64>, u32, u32)> {
        let (x, y) = pool.example(pool_index).map_err(|_| Error::InvalidCount {
            name: "pool_index",
            value: pool_index as u64,
            expected: "< the pool's size",
        })?;
        let least = least_likely_label(model, init, x, ws)?;
        Ok((x.to_vec(), y, least))
    };
    let (canary, data, index) = match crafter {
        Crafter::Example => {
            let (x, label, _) = pool_example(&mut ws)?;
            (Canary::Example { x, label }, data.clone(), Some(pool_index))
        }
        Crafter::Mislabelled => {
            let (x, _, label) = pool_example(&mut ws)?;
            (Canary::Example { x, label }, data.clone(), Some(pool_index))
        }
        Crafter::Adaptive => {
            adaptive.validate()?;
            let (query, _, label) = pool_example(&mut ws)?;
            let canary = Canary::Adaptive {
                query,
                label,
                config: adaptive,
            };
            (canary, data.clone(), Some(pool_index))
        }
        Crafter::ClipBkd => {
            let x = clipbkd_input(data)?;
            let label = least_likely_label(model, init, &x, &mut ws)?;
            (Canary::Example { x, label }, data.clone(), None)
        }
        Crafter::Gradient(shape) => {
            let c = gradient_canary(model, init, clipping, data, shape)?;
            (Canary::Gradient(c), data.clone(), None)
        }
        Crafter::MaliciousDataset(shape) => {
            let relabelled = relabel_by_prediction(model, init, data)?;
            let c = gradient_canary(model, init, clipping, &relabelled, shape)?;
            (Canary::Gradient(c), relabelled, None)
        }
        Crafter::OpposedDataset => {
            let (copies, c) = opposed_dataset(model, init, clipping, data, &mut ws)?;
            (Canary::Gradient(c), copies, None)
        }
    };
    if data.dim() != model.input_len() {
        return Err(Error::Inconsistent {
            what: "the data's dimension must equal the model's input_len()",
            value: data.dim() as f64,
        });
    }
    Ok(Crafted {
        canary,
        data,
        pool_index: index,
    })
}

/// [`Crafter::OpposedDataset`]: D's size in copies of D's first example (least likely label
/// at θ₀) and the canary −clip(∇ℓ(θ₀; that example)).
fn opposed_dataset(
    model: &Sequential,
    init: &[f64],
    clipping: Clipping,
    data: &Dataset,
    ws: &mut Workspace<f64>,
) -> Result<(Dataset, Vec<f64>)> {
    let (x, _) = data.example(0).map_err(|_| Error::InvalidCount {
        name: "train_size",
        value: 0,
        expected: ">= 1 (the opposed dataset copies D's first example)",
    })?;
    let label = least_likely_label(model, init, x, ws)?;
    let mut g = alloc::vec![0.0; model.num_params()];
    model.loss_and_grad(init, x, label as usize, &mut g, ws)?;
    clip(&mut g, clipping.method, clipping.norm)?;
    if dot(&g, &g) == 0.0 {
        return Err(Error::Inconsistent {
            what: "the opposed dataset's example has a zero clipped gradient at θ₀",
            value: 0.0,
        });
    }
    g.iter_mut().for_each(|v| *v = -*v);
    let n = data.len();
    let mut features = Vec::with_capacity(n * x.len());
    for _ in 0..n {
        features.extend_from_slice(x);
    }
    let copies = Dataset::new(
        features,
        alloc::vec![label; n],
        data.shape(),
        data.num_classes(),
    )?;
    Ok((copies, g))
}

/// argmax_k ℓ(θ; x, k): the class the model finds least likely (lowest k on ties).
pub(crate) fn least_likely_label(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    ws: &mut Workspace<f64>,
) -> Result<u32> {
    let mut best = (0u32, f64::NEG_INFINITY);
    for k in 0..model.num_classes() {
        let l = model.loss(params, x, k, ws)?;
        if l > best.1 {
            best = (k as u32, l);
        }
    }
    Ok(best.0)
}

/// D with every label replaced by the model's prediction at `params` (crafter 5).
pub(crate) fn relabel_by_prediction(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
) -> Result<Dataset> {
    let mut ws = model.workspace();
    let mut labels = Vec::with_capacity(data.len());
    for (x, _) in data.iter() {
        labels.push(model.predict(params, x, &mut ws)? as u32);
    }
    Dataset::new(
        data.features().to_vec(),
        labels,
        data.shape(),
        data.num_classes(),
    )
}

/// The gradient canary of `shape` ranked by M_j = Σ_i |clip(∇ℓ(θ₀; z_i))_j| (module docs).
fn gradient_canary(
    model: &Sequential,
    init: &[f64],
    clipping: Clipping,
    data: &Dataset,
    shape: GradientShape,
) -> Result<Vec<f64>> {
    let mut all = gradient_canaries(model, init, clipping, data, shape, 1)?;
    all.pop().ok_or(Error::Inconsistent {
        what: "no gradient canary crafted",
        value: 0.0,
    })
}

/// `m` gradient canaries of `shape` on disjoint coordinates: canary i takes the coordinates of
/// usage ranks i·k … (i + 1)·k − 1 (k = 1 for the Dirac), so the canaries are orthogonal.
pub(crate) fn gradient_canaries(
    model: &Sequential,
    init: &[f64],
    clipping: Clipping,
    data: &Dataset,
    shape: GradientShape,
    m: usize,
) -> Result<Vec<Vec<f64>>> {
    let p = model.num_params();
    let k = match shape {
        GradientShape::Dirac => 1,
        GradientShape::Spread(k) => {
            if k < 2 || k % 2 != 0 || k > p {
                return Err(Error::InvalidCount {
                    name: "spread",
                    value: k as u64,
                    expected: "even, >= 2 and <= the model's num_params()",
                });
            }
            k
        }
    };
    if m == 0 || m.saturating_mul(k) > p {
        return Err(Error::InvalidCount {
            name: "canaries",
            value: m as u64,
            expected: ">= 1, with canaries × coordinates per canary <= the model's num_params()",
        });
    }
    let mut ws = model.workspace();
    let (mut usage, mut g) = (alloc::vec![0.0; p], alloc::vec![0.0; p]);
    for (x, y) in data.iter() {
        model.loss_and_grad(init, x, y as usize, &mut g, &mut ws)?;
        clip(&mut g, clipping.method, clipping.norm)?;
        for (m, &gj) in usage.iter_mut().zip(&g) {
            *m += libm::fabs(gj);
        }
    }
    let mut order: Vec<usize> = (0..p).collect();
    // Ascending usage, lower index first on ties (a stable sort keeps index order).
    order.sort_by(|&a, &b| {
        let (ua, ub) = (usage.get(a).copied(), usage.get(b).copied());
        ua.partial_cmp(&ub).unwrap_or(core::cmp::Ordering::Equal)
    });
    let v = clipping.norm / libm::sqrt(k as f64);
    let mut canaries = Vec::with_capacity(m);
    for window in order.chunks(k).take(m) {
        let mut c = alloc::vec![0.0; p];
        for (rank, &j) in window.iter().enumerate() {
            if let Some(cj) = c.get_mut(j) {
                *cj = if rank % 2 == 0 { v } else { -v };
            }
        }
        canaries.push(c);
    }
    Ok(canaries)
}

/// ClipBKD's input: ‖D‖_max times a unit eigenvector of the smallest eigenvalue of the
/// covariance of D's inputs (module docs).
fn clipbkd_input(data: &Dataset) -> Result<Vec<f64>> {
    let (n, d) = (data.len(), data.dim());
    if n == 0 || d == 0 {
        return Err(Error::InvalidCount {
            name: "data",
            value: n as u64,
            expected: "at least one example of positive dimension",
        });
    }
    let nf = n as f64;
    let mut mean = alloc::vec![0.0; d];
    for (x, _) in data.iter() {
        mean.iter_mut().zip(x).for_each(|(m, &v)| *m += v / nf);
    }
    let mut var = alloc::vec![0.0; d];
    for (x, _) in data.iter() {
        for ((s, &v), &m) in var.iter_mut().zip(x).zip(&mean) {
            *s += (v - m) * (v - m) / nf;
        }
    }
    // Σ v = (1/n) Σ_i (x_i − x̄)⟨x_i − x̄, v⟩, matrix-free.
    let sigma_times = |v: &[f64], out: &mut [f64]| {
        out.iter_mut().for_each(|o| *o = 0.0);
        for (x, _) in data.iter() {
            let mut a = 0.0;
            for ((&xi, &m), &vi) in x.iter().zip(&mean).zip(v) {
                a += (xi - m) * vi;
            }
            for ((o, &xi), &m) in out.iter_mut().zip(x).zip(&mean) {
                *o += (xi - m) * a / nf;
            }
        }
    };
    // Gershgorin-free bound of λ_max: the trace (Σ is positive semidefinite).
    let trace: f64 = var.iter().sum();
    let start = var
        .iter()
        .enumerate()
        .fold((0usize, f64::INFINITY), |best, (j, &v)| {
            if v < best.1 {
                (j, v)
            } else {
                best
            }
        })
        .0;
    let mut v = alloc::vec![0.0; d];
    if let Some(s) = v.get_mut(start) {
        *s = 1.0;
    }
    let mut w = alloc::vec![0.0; d];
    let rayleigh = |v: &[f64], w: &mut [f64]| -> f64 {
        sigma_times(v, w);
        dot(v, w)
    };
    let mut current = rayleigh(&v, &mut w);
    if current > 0.0 && trace > 0.0 {
        // Power iteration on (ρ̄I − Σ): v ← ρ̄v − Σv, normalised.
        for _ in 0..200 {
            let mut next: Vec<f64> = v.iter().zip(&w).map(|(&a, &b)| trace * a - b).collect();
            let norm = libm::sqrt(dot(&next, &next));
            if !(norm > 0.0 && norm.is_finite()) {
                break;
            }
            next.iter_mut().for_each(|x| *x /= norm);
            let mut wn = alloc::vec![0.0; d];
            let r = rayleigh(&next, &mut wn);
            if r.partial_cmp(&current) != Some(core::cmp::Ordering::Less) {
                break;
            }
            v = next;
            w = wn;
            current = r;
        }
    }
    let scale = data.max_l2_norm();
    let scale = if scale > 0.0 { scale } else { 1.0 };
    Ok(v.into_iter().map(|x| x * scale).collect())
}
