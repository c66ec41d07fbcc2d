//! DP-SGD (Abadi et al. 2016) on a [`Sequential`] model, with observers.
//!
//! # The step
//!
//! At step t (from 0) with parameters w_t:
//! 1. draw the batch B_t ([`Sampling`]);
//! 2. per example, g_i = ∇_w ℓ(w_t; z_i) and g̃_i = clip(g_i) (the crate's one clipping
//!    function, [`crate::train::clip::clip`]; no clipping for non-private SGD), summed —
//!    for models of dense layers and activations by the batched path
//!    [`Sequential::clipped_grad_sum`] (ghost clipping: per-example norms from layer-wise
//!    identities, the sum as matrix products in a fixed order; the same sum up to rounding),
//!    for other models one example at a time in batch order;
//! 3. release ḡ_t = (Σ_{i∈B_t} g̃_i + N(0, σ²S²I)) / B, with S the sensitivity of one clipped
//!    gradient ([`ClipMethod::max_norm`]: C for hard clipping, 1.11522·C for GELU clipping, so
//!    that σ keeps its meaning as the noise multiplier of the accountants) and B the
//!    **expected** batch size under Poisson sampling (dividing by the realised size would leak
//!    it), the batch size for fixed-size and shuffled batches, n for the full batch;
//! 4. call the observer with (t, w_t, B_t, the g̃_i if asked for, ḡ_t);
//! 5. d = ḡ_t + λ_wd·w_t (weight decay **after** the noise: a post-processing of public
//!    values), v ← μ·v + d (v_0 = 0), w_{t+1} = w_t − ρ·v.
//!
//! Non-private SGD is the same trainer with σ = 0 and no clipping.
//!
//! # Randomness and determinism
//!
//! Step t draws its batch from `Rng::for_trial(seed, 2t)` and its noise from
//! `Rng::for_trial(seed, 2t + 1)` (indices wrap modulo 2⁶⁴: distinct for t < 2⁶³) ([`Rng::for_trial`], the crate's one seed-and-index → RNG
//! map); shuffled epochs draw their permutation from the sampling stream of the step that
//! starts the epoch. The clipped gradients are summed the same way whether or not an
//! observer keeps them (kept rows are computed beside the batched sum), so one seed gives
//! bit-identical parameters with any observers.
//! The initial parameters are the caller's (e.g. [`Sequential::init_params`]).
//!
//! # Memory
//!
//! O(p) (parameters, one gradient, the running sum, the released gradient, the velocity)
//! plus the per-example workspace; a B × p buffer only if an observer
//! [wants per-example gradients](Observer::wants_per_example).

use super::clip::{clip, ClipMethod};
use super::observer::{check_fits, Observer, StepInfo};
use super::sampling::{BatchSampler, Sampling};
use crate::data::Dataset;
use crate::error::{
    check_non_negative, check_positive, check_steps, invalid as invalid_value, Error, Result,
};
use crate::nn::{BatchWorkspace, Sequential, Workspace};
use crate::rng::Rng;
use alloc::vec::Vec;

/// Per-example gradient clipping: method and norm C.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clipping {
    /// Hard or GELU clipping.
    pub method: ClipMethod,
    /// The clipping norm C > 0.
    pub norm: f64,
}

/// The hyperparameters of a DP-SGD run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DpSgdConfig {
    /// Learning rate ρ ≥ 0 (ρ = 0 keeps the parameters at their initial values: the
    /// "malicious dataset" audit of Nasr et al. 2021, crafter 5).
    pub learning_rate: f64,
    /// Momentum μ ∈ [0, 1) (heavy ball: v ← μv + d, w ← w − ρv).
    pub momentum: f64,
    /// Weight decay λ_wd ≥ 0, added to the released gradient (after the noise).
    pub weight_decay: f64,
    /// Per-example clipping; `None` for non-private SGD (then `noise_multiplier` must be 0).
    pub clipping: Option<Clipping>,
    /// Noise multiplier σ ≥ 0: the noise std on the gradient sum is σ·S
    /// (S = [`ClipMethod::max_norm`] of the clipping).
    pub noise_multiplier: f64,
    /// The batch sampling scheme.
    pub sampling: Sampling,
    /// B: the expected (Poisson) or fixed batch size; ignored for the full batch.
    pub batch_size: usize,
    /// Number of steps T ≥ 1 run by [`train`] / [`DpSgd::run`].
    pub steps: u64,
    /// Master seed of the sampling and noise streams.
    pub seed: u64,
}

impl Default for DpSgdConfig {
    /// ρ = 0.1, μ = 0.5, no weight decay, hard clipping at C = 1, σ = 1, Poisson sampling
    /// with B = 64, 300 steps, seed 0 (momentum and C as in Guo et al. 2022, App. C,
    /// Table 3; B and T sized for the embedded MNIST subset).
    fn default() -> Self {
        DpSgdConfig {
            learning_rate: 0.1,
            momentum: 0.5,
            weight_decay: 0.0,
            clipping: Some(Clipping {
                method: ClipMethod::Hard,
                norm: 1.0,
            }),
            noise_multiplier: 1.0,
            sampling: Sampling::Poisson,
            batch_size: 64,
            steps: 300,
            seed: 0,
        }
    }
}

impl DpSgdConfig {
    /// Checks every field (not the batch size against the data, which [`DpSgd::new`] does).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `learning_rate` unless finite and ≥ 0; `momentum` unless in
    /// [0, 1); `weight_decay` unless finite and ≥ 0; `clip_norm` unless finite and > 0;
    /// `noise_multiplier` unless finite and ≥ 0, and 0 when clipping is off;
    /// [`Error::InvalidCount`] `steps` if 0.
    pub fn validate(&self) -> Result<()> {
        check_non_negative("learning_rate", self.learning_rate)?;
        if !(self.momentum >= 0.0 && self.momentum < 1.0) {
            return Err(Error::InvalidParameter {
                name: "momentum",
                value: self.momentum,
                expected: "in [0, 1)",
            });
        }
        check_non_negative("weight_decay", self.weight_decay)?;
        check_non_negative("noise_multiplier", self.noise_multiplier)?;
        match self.clipping {
            Some(c) => {
                check_positive("clip_norm", c.norm)?;
            }
            None => {
                if self.noise_multiplier != 0.0 {
                    return Err(Error::InvalidParameter {
                        name: "noise_multiplier",
                        value: self.noise_multiplier,
                        expected: "0 when clipping is off (the noise scale is σ times the clipping sensitivity)",
                    });
                }
            }
        }
        check_steps(self.steps)?;
        Ok(())
    }

    /// The standard deviation of the noise added to the gradient sum: σ·S (0 without noise).
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate).
    pub fn noise_std_of_sum(&self) -> Result<f64> {
        self.validate()?;
        match self.clipping {
            Some(c) if self.noise_multiplier > 0.0 => {
                Ok(self.noise_multiplier * c.method.max_norm(c.norm)?)
            }
            _ => Ok(0.0),
        }
    }
}

/// What one [`DpSgd::step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// The step index.
    pub step: u64,
    /// The realised batch size (without the secret).
    pub batch_size: usize,
    /// The sum of the per-example losses of the batch (before the update; without the
    /// secret).
    pub loss_sum: f64,
    /// `true` if the [`Secret`] (with several, any of them) was drawn into this step's batch
    /// (always `false` without one). For the caller that runs an experiment (e.g. to check an
    /// audit), never for an adversary.
    pub secret_in_batch: bool,
    /// How many of the secrets were drawn (0 or 1 with one secret).
    pub secrets_in_batch: usize,
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainSummary {
    /// Steps taken.
    pub steps: u64,
    /// Per-example gradients computed (the sum of the realised batch sizes, the secret
    /// included).
    pub examples: u64,
    /// The sampling rate q = B/n used by the accountants (1 for the full batch).
    pub sampling_rate: f64,
    /// The noise std on the gradient sum, σ·S.
    pub noise_std_of_sum: f64,
}

/// A DP-SGD trainer over one model and one training set, stepping on caller-owned
/// parameters. [`train`] runs it for `config.steps` steps.
#[derive(Debug)]
pub struct DpSgd<'a> {
    model: &'a Sequential,
    data: &'a Dataset,
    config: DpSgdConfig,
    sampler: BatchSampler,
    noise_std: f64,
    ws: Workspace<f64>,
    /// The batched (ghost-clipping) path's buffers, for models of dense layers only.
    batch_ws: Option<BatchWorkspace>,
    grad: Vec<f64>,
    sum: Vec<f64>,
    released: Vec<f64>,
    velocity: Vec<f64>,
    per_example: Vec<f64>,
    batch: Vec<usize>,
    step: u64,
    examples: u64,
    /// The secrets, examples n, n + 1, … of the population (empty without).
    secrets: Vec<Secret<'a>>,
    /// The indices (into `secrets`) drawn this step, ascending.
    drawn: Vec<usize>,
    /// The first drawn secret's clipped gradient, then the whole sum (batch sum + secrets) of
    /// a step that includes one (empty without a secret).
    secret_grad: Vec<f64>,
    /// Another drawn secret's clipped gradient (empty unless there are several secrets).
    extra_grad: Vec<f64>,
}

/// A contribution to the training batch that observers are not shown as a batch index: the
/// target of a reconstruction attack, or an audit's canary (Nasr et al. 2021, crafters 1–5).
///
/// [`DpSgd::with_secret`] trains on the training set D⁻ plus the secret as example number
/// n = |D⁻|: it is sampled exactly like an example with that index (Poisson at rate
/// q = B/(n + 1), in every fixed-size or shuffled batch it is drawn into, always for the full
/// batch), its clipped gradient is added to the batch sum **last** (after the examples of D⁻,
/// as for the highest index), and noise is added to the whole sum. An observer sees the batch
/// without the secret, and [`StepInfo::batch_sum`] without its gradient: under Poisson
/// sampling and the full batch, what an informed adversary knows. (Under fixed-size and
/// shuffled batches D⁻'s part of a batch has B − 1 examples exactly when the secret is in it:
/// the attacks refuse those schemes, [`crate::attacks::prior_aware::check_sampling`].) With a
/// [`Secret::Example`] the released gradients are those of training on D⁻ with the example
/// appended: bit for bit where gradients are summed one example at a time, up to the rounding
/// of the batched sum for dense models (D⁻'s sum, then the secret, against one sum).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Secret<'a> {
    /// A training example (features, label).
    Example {
        /// The features (length d).
        x: &'a [f64],
        /// The label (a class of the model).
        label: u32,
    },
    /// A gradient canary (Nasr et al. 2021, Sec. IV, crafters 4–5): a pseudo-example whose
    /// **unclipped** gradient is this vector (length p) at every step; it is clipped like any
    /// example (a vector of norm ≤ C is used as is under hard clipping).
    Gradient(&'a [f64]),
}

impl Secret<'_> {
    /// Checks that the secret fits `model`.
    ///
    /// # Errors
    ///
    /// For [`Secret::Example`], [`Error::Inconsistent`] if `x` is not of length d,
    /// [`Error::InvalidParameter`] `x` if a value is not finite, [`Error::InvalidCount`]
    /// `label` unless a class of the model; for [`Secret::Gradient`],
    /// [`Error::Inconsistent`] unless of length p and [`Error::InvalidParameter`]
    /// `canary_gradient` if a value is not finite.
    pub fn check(&self, model: &Sequential) -> Result<()> {
        match *self {
            Secret::Example { x, label } => {
                if x.len() != model.input_len() {
                    return Err(Error::Inconsistent {
                        what: "the secret example's length differs from the model's input length",
                        value: x.len() as f64,
                    });
                }
                if let Some(&v) = x.iter().find(|v| !v.is_finite()) {
                    return invalid_value("x", v, "finite");
                }
                if label as usize >= model.num_classes() {
                    return Err(Error::InvalidCount {
                        name: "label",
                        value: u64::from(label),
                        expected: "< the number of classes of the model",
                    });
                }
            }
            Secret::Gradient(g) => {
                if g.len() != model.num_params() {
                    return Err(Error::Inconsistent {
                        what: "the canary gradient's length differs from the model's num_params()",
                        value: g.len() as f64,
                    });
                }
                if let Some(&v) = g.iter().find(|v| !v.is_finite()) {
                    return invalid_value("canary_gradient", v, "finite");
                }
            }
        }
        Ok(())
    }

    /// Its clipped gradient at `params`, written into `out` (length p): clip(∇_w ℓ(w; x,
    /// label)) for an example, clip(g) for a gradient canary — what the trainer adds when the
    /// secret is drawn, and what an adversary computes for a hypothesised candidate. The
    /// unclipped gradient with `clipping = None`.
    ///
    /// # Errors
    ///
    /// As [`Sequential::loss_and_grad`] and [`clip`]; [`Error::Inconsistent`] if a canary or
    /// `out` is not of length p.
    pub fn clipped_gradient(
        &self,
        model: &Sequential,
        params: &[f64],
        clipping: Option<Clipping>,
        out: &mut [f64],
        ws: &mut Workspace<f64>,
    ) -> Result<()> {
        match *self {
            Secret::Example { x, label } => {
                model.loss_and_grad(params, x, label as usize, out, ws)?;
            }
            Secret::Gradient(g) => {
                if g.len() != out.len() || out.len() != model.num_params() {
                    return Err(Error::Inconsistent {
                        what:
                            "a canary gradient and `out` must have the model's num_params() entries",
                        value: g.len() as f64,
                    });
                }
                out.copy_from_slice(g);
            }
        }
        if let Some(c) = clipping {
            clip(out, c.method, c.norm)?;
        }
        Ok(())
    }
}

impl<'a> DpSgd<'a> {
    /// A trainer for `model` on `data` with `config`; no step taken yet.
    ///
    /// # Errors
    ///
    /// As [`DpSgdConfig::validate`]; [`Error::InvalidCount`] `batch_size` unless in
    /// 1..=n (Poisson, fixed, shuffle); [`Error::Inconsistent`] if the data do not fit the
    /// model.
    pub fn new(model: &'a Sequential, data: &'a Dataset, config: &DpSgdConfig) -> Result<Self> {
        Self::with_population(model, data, config, data.len())
    }

    /// [`new`](Self::new) with batches drawn from `population` indices (n, or n + 1 with a
    /// secret).
    fn with_population(
        model: &'a Sequential,
        data: &'a Dataset,
        config: &DpSgdConfig,
        population: usize,
    ) -> Result<Self> {
        let noise_std = config.noise_std_of_sum()?;
        check_fits(model, data)?;
        let sampler = BatchSampler::new(config.sampling, population, config.batch_size)?;
        let p = model.num_params();
        Ok(DpSgd {
            model,
            data,
            config: *config,
            sampler,
            noise_std,
            ws: model.workspace(),
            batch_ws: model.batch_workspace(),
            grad: alloc::vec![0.0; p],
            sum: alloc::vec![0.0; p],
            released: alloc::vec![0.0; p],
            velocity: alloc::vec![0.0; p],
            per_example: Vec::new(),
            batch: Vec::new(),
            step: 0,
            examples: 0,
            secrets: Vec::new(),
            drawn: Vec::new(),
            secret_grad: Vec::new(),
            extra_grad: Vec::new(),
        })
    }

    /// A trainer for `model` on the training set `data` (D⁻) plus a [`Secret`] that observers
    /// do not see (see its docs): the target of an attack or a canary. `config.batch_size` is
    /// B for a population of n + 1 (the sampling rate is B/(n + 1)).
    ///
    /// Poisson sampling and the full batch only: under fixed-size or shuffled batches of
    /// B < n + 1, observers would see a batch of B − 1 examples of D⁻ exactly when the secret
    /// was drawn, so its membership would leak through the batch size (a batch of all n + 1
    /// is allowed: the secret is in every batch).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `sampling` (its value the batch size B, its range naming
    /// the scheme) for fixed-size or shuffled batches with B < n + 1;
    /// as [`DpSgd::new`] with n + 1 examples; for [`Secret::Example`],
    /// [`Error::Inconsistent`] if `x` is not of length d, [`Error::InvalidParameter`] `x` if a
    /// value is not finite, [`Error::InvalidCount`] `label` unless a class of the model; for
    /// [`Secret::Gradient`], [`Error::Inconsistent`] unless of length p and
    /// [`Error::InvalidParameter`] `canary_gradient` if a value is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::data::synthetic::gaussian_blobs;
    /// use reconbound::nn::arch;
    /// use reconbound::train::dpsgd::{DpSgd, DpSgdConfig, Secret};
    ///
    /// let data = gaussian_blobs(20, 4, 2, 0.15, 1)?;
    /// let model = arch::logistic_regression(4)?;
    /// let config = DpSgdConfig { batch_size: 7, steps: 5, ..DpSgdConfig::default() };
    /// let target = [0.5, 0.1, 0.2, 0.9];
    /// let secret = Secret::Example { x: &target, label: 1 };
    /// let mut trainer = DpSgd::with_secret(&model, &data, &config, secret)?;
    /// assert_eq!(trainer.sampling_rate(), 7.0 / 21.0);
    /// let mut params = model.init_params(3);
    /// trainer.run(&mut params, &mut ())?;
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn with_secret(
        model: &'a Sequential,
        data: &'a Dataset,
        config: &DpSgdConfig,
        secret: Secret<'a>,
    ) -> Result<Self> {
        Self::with_secrets(model, data, config, &[secret])
    }

    /// [`with_secret`](Self::with_secret) with m ≥ 1 secrets, examples n, …, n + m − 1 of a
    /// population of n + m: each is sampled like an example of its index (independently
    /// under Poisson sampling, at q = B/(n + m)), and those drawn are added to the batch sum
    /// last, in index order. What the one-run audit of Steinke, Nasr, Jagielski 2023 trains
    /// (its canaries left out are zero gradients, so that the population stays n + m). With
    /// one secret it is [`with_secret`](Self::with_secret), bit for bit.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `secrets` if empty; [`Error::InvalidParameter`] `sampling` for
    /// fixed-size or shuffled batches of B < n + m (a batch of B − 1 from D⁻ would show that a
    /// secret was drawn); as [`with_secret`](Self::with_secret) for each secret and for a
    /// population of n + m.
    pub fn with_secrets(
        model: &'a Sequential,
        data: &'a Dataset,
        config: &DpSgdConfig,
        secrets: &[Secret<'a>],
    ) -> Result<Self> {
        if secrets.is_empty() {
            return Err(Error::InvalidCount {
                name: "secrets",
                value: 0,
                expected: ">= 1",
            });
        }
        for secret in secrets {
            secret.check(model)?;
        }
        let n = data
            .len()
            .checked_add(secrets.len())
            .ok_or(Error::Inconsistent {
                what: "training set too large",
                value: data.len() as f64,
            })?;
        let mut trainer = Self::with_population(model, data, config, n)?;
        check_secret_sampling(config, n)?;
        trainer.secrets = secrets.to_vec();
        trainer.secret_grad = alloc::vec![0.0; model.num_params()];
        if secrets.len() > 1 {
            trainer.extra_grad = alloc::vec![0.0; model.num_params()];
        }
        Ok(trainer)
    }

    /// The sampling rate q = B/n (1 for the full batch): what the accountants need.
    pub fn sampling_rate(&self) -> f64 {
        self.sampler.sampling_rate()
    }

    /// The normaliser B.
    pub fn normaliser(&self) -> usize {
        self.sampler.batch_size()
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> u64 {
        self.step
    }

    /// One DP-SGD step (module docs) on `params`, observed by `observer`.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `params.len()` differs from the model's; the errors of the
    /// per-example gradient ([`Sequential::loss_and_grad`]: non-finite parameters, loss or
    /// gradient) and of [`clip`]; the observer's error; [`Error::Numerical`] if an updated
    /// parameter is not finite. On any error `params` and the trainer's momentum are left as
    /// they were and the step counter does not advance.
    pub fn step<O: Observer + ?Sized>(
        &mut self,
        params: &mut [f64],
        observer: &mut O,
    ) -> Result<StepStats> {
        self.step_impl(params, observer, None)
    }

    /// One step as [`step`](Self::step) with `secret` in place of the trainer's secret for
    /// this step only: a secret regenerated at every step, such as the adaptive input canary
    /// of Nasr et al. 2021 (§IV-D, crafter 3), which is crafted from the current parameters.
    /// It is sampled as the trainer's secret (example number n).
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] unless the trainer was built by
    /// [`with_secret`](Self::with_secret) (one secret); as [`Secret::check`] and
    /// [`step`](Self::step).
    pub fn step_with_secret<O: Observer + ?Sized>(
        &mut self,
        params: &mut [f64],
        observer: &mut O,
        secret: Secret<'_>,
    ) -> Result<StepStats> {
        if self.secrets.len() != 1 {
            return Err(Error::Inconsistent {
                what: "step_with_secret needs a trainer built by DpSgd::with_secret (one secret)",
                value: self.secrets.len() as f64,
            });
        }
        secret.check(self.model)?;
        self.step_impl(params, observer, Some(secret))
    }

    /// [`step`](Self::step), with `replacement` in place of the (one) secret if given.
    fn step_impl<O: Observer + ?Sized>(
        &mut self,
        params: &mut [f64],
        observer: &mut O,
        replacement: Option<Secret<'_>>,
    ) -> Result<StepStats> {
        let p = self.model.num_params();
        if params.len() != p {
            return Err(Error::Inconsistent {
                what: "params.len() must equal the model's num_params()",
                value: params.len() as f64,
            });
        }
        let t = self.step;
        let seed = self.config.seed;
        let mut sampling_rng = Rng::for_trial(seed, t.wrapping_mul(2));
        self.sampler
            .next_batch(&mut sampling_rng, &mut self.batch)?;
        // The secrets are examples n, n + 1, … (batches are ascending, so they are last).
        let n = self.data.len();
        self.drawn.clear();
        while let Some(&i) = self.batch.last() {
            if i < n || self.secrets.is_empty() {
                break;
            }
            self.drawn.push(i - n);
            self.batch.pop();
        }
        self.drawn.reverse();
        let secret_in_batch = !self.drawn.is_empty();
        let keep = observer.wants_per_example();
        if keep {
            self.per_example.clear();
            self.per_example.resize(self.batch.len() * p, 0.0);
        }
        let loss_sum = self.batch_sum(params, keep)?;
        // With secrets drawn: the first one's clipped gradient plus the batch sum (the same
        // additions as accumulating it after the others), then each further one added, into
        // `secret_grad`.
        let clipping = self.config.clipping;
        for k in 0..self.drawn.len() {
            let j = self.drawn.get(k).copied().unwrap_or(usize::MAX);
            let stored = self.secrets.get(j).copied().ok_or(Error::Inconsistent {
                what: "a drawn secret outside the secrets",
                value: j as f64,
            })?;
            let out = if k == 0 {
                &mut self.secret_grad[..]
            } else {
                &mut self.extra_grad[..]
            };
            match replacement {
                Some(r) => r.clipped_gradient(self.model, params, clipping, out, &mut self.ws)?,
                None => stored.clipped_gradient(self.model, params, clipping, out, &mut self.ws)?,
            }
            if k == 0 {
                for (g, &s) in self.secret_grad.iter_mut().zip(&self.sum) {
                    *g += s; // s + g: IEEE addition commutes
                }
            } else {
                for (g, &e) in self.secret_grad.iter_mut().zip(&self.extra_grad) {
                    *g += e;
                }
            }
        }
        let total: &[f64] = if secret_in_batch {
            &self.secret_grad
        } else {
            &self.sum
        };
        let b = self.sampler.batch_size() as f64;
        if self.noise_std > 0.0 {
            let mut noise_rng = Rng::for_trial(seed, t.wrapping_mul(2).wrapping_add(1));
            let s = self.noise_std;
            for (r, &sum) in self.released.iter_mut().zip(total) {
                *r = (sum + s * noise_rng.gaussian()) / b;
            }
        } else {
            for (r, &sum) in self.released.iter_mut().zip(total) {
                *r = sum / b;
            }
        }
        let info = StepInfo {
            step: t,
            params,
            batch: &self.batch,
            clipped: if keep {
                Some(&self.per_example[..])
            } else {
                None
            },
            released: &self.released,
            batch_sum: &self.sum,
            loss_sum,
            normaliser: b,
            noise_std: self.noise_std / b,
        };
        observer.observe(&info)?;
        // New velocity into `sum` (no longer needed) and new parameters into `grad`, so that
        // `params` and the velocity stay untouched if the update fails.
        let (rho, mu, wd) = (
            self.config.learning_rate,
            self.config.momentum,
            self.config.weight_decay,
        );
        let mut finite = true;
        for ((((new, v_new), &v), &r), &w) in self
            .grad
            .iter_mut()
            .zip(self.sum.iter_mut())
            .zip(&self.velocity)
            .zip(&self.released)
            .zip(params.iter())
        {
            let d = if wd > 0.0 { r + wd * w } else { r };
            *v_new = if mu > 0.0 { mu * v + d } else { d };
            *new = w - rho * *v_new;
            finite &= new.is_finite();
        }
        if !finite {
            let bad = self
                .grad
                .iter()
                .copied()
                .find(|v| !v.is_finite())
                .unwrap_or(f64::NAN);
            return Err(Error::Numerical {
                what: "a parameter became non-finite (learning rate too large?)",
                value: bad,
            });
        }
        core::mem::swap(&mut self.velocity, &mut self.sum);
        params.copy_from_slice(&self.grad);
        self.step += 1;
        self.examples += (self.batch.len() + self.drawn.len()) as u64;
        Ok(StepStats {
            step: t,
            batch_size: self.batch.len(),
            loss_sum,
            secret_in_batch,
            secrets_in_batch: self.drawn.len(),
        })
    }

    /// The clipped-gradient sum of the batch's examples (`self.batch`, the secret excluded)
    /// into `self.sum`, and their loss sum; with `keep`, also every clipped per-example
    /// gradient into `self.per_example`. Models of dense layers and activations take the
    /// batched path ([`Sequential::clipped_grad_sum`], ghost clipping), whatever the
    /// observers: the per-example rows, when kept, are computed beside it, so the released
    /// gradient is the same bits with or without observers. Other models sum per-example
    /// gradients in batch order.
    fn batch_sum(&mut self, params: &[f64], keep: bool) -> Result<f64> {
        let p = self.model.num_params();
        if let Some(bws) = self.batch_ws.as_mut() {
            let loss_sum = if self.batch.is_empty() {
                self.sum.iter_mut().for_each(|s| *s = 0.0);
                0.0
            } else {
                self.model.clipped_grad_sum(
                    params,
                    self.data,
                    &self.batch,
                    self.config.clipping,
                    &mut self.sum,
                    bws,
                )?
            };
            if keep {
                for (k, &i) in self.batch.iter().enumerate() {
                    let (x, y) = self.data.example(i)?;
                    let row = self.per_example.get_mut(k * p..(k + 1) * p).ok_or(
                        Error::Inconsistent {
                            what: "per-example buffer",
                            value: k as f64,
                        },
                    )?;
                    self.model
                        .loss_and_grad(params, x, y as usize, row, &mut self.ws)?;
                    if let Some(c) = self.config.clipping {
                        clip(row, c.method, c.norm)?;
                    }
                }
            }
            return Ok(loss_sum);
        }
        self.sum.iter_mut().for_each(|s| *s = 0.0);
        let mut loss_sum = 0.0;
        for (k, &i) in self.batch.iter().enumerate() {
            let (x, y) = self.data.example(i)?;
            let g = if keep {
                match self.per_example.get_mut(k * p..(k + 1) * p) {
                    Some(row) => row,
                    None => {
                        return Err(Error::Inconsistent {
                            what: "per-example buffer",
                            value: k as f64,
                        })
                    }
                }
            } else {
                &mut self.grad[..]
            };
            loss_sum += self
                .model
                .loss_and_grad(params, x, y as usize, g, &mut self.ws)?;
            if let Some(c) = self.config.clipping {
                clip(g, c.method, c.norm)?;
            }
            for (s, gi) in self.sum.iter_mut().zip(g.iter()) {
                *s += *gi;
            }
        }
        Ok(loss_sum)
    }

    /// Runs the remaining steps up to `config.steps`.
    ///
    /// # Errors
    ///
    /// As [`step`](Self::step).
    pub fn run<O: Observer + ?Sized>(
        &mut self,
        params: &mut [f64],
        observer: &mut O,
    ) -> Result<TrainSummary> {
        while self.step < self.config.steps {
            self.step(params, observer)?;
        }
        Ok(self.summary())
    }

    /// The summary of the steps taken so far.
    pub fn summary(&self) -> TrainSummary {
        TrainSummary {
            steps: self.step,
            examples: self.examples,
            sampling_rate: self.sampler.sampling_rate(),
            noise_std_of_sum: self.noise_std,
        }
    }
}

/// `Err` for a sampling scheme under which observers of a trainer with secrets would learn
/// whether a secret was drawn: fixed-size or shuffled batches of B smaller than the
/// population (n + m) hold B − 1 examples of D⁻ exactly when one secret is in the batch.
fn check_secret_sampling(config: &DpSgdConfig, population: usize) -> Result<()> {
    let expected = match config.sampling {
        Sampling::Poisson | Sampling::FullBatch => return Ok(()),
        _ if config.batch_size == population => return Ok(()),
        Sampling::FixedSize => "poisson or full with a secret (the value is the batch size B): fixed-size batches ('fixed') of B < n + m hold B − 1 examples of D⁻ exactly when a secret is drawn, so the batch size reveals it",
        Sampling::Shuffle => "poisson or full with a secret (the value is the batch size B): shuffled batches ('shuffle') of B < n + m hold B − 1 examples of D⁻ exactly when a secret is drawn, so the batch size reveals it",
    };
    Err(Error::InvalidParameter {
        name: "sampling",
        value: config.batch_size as f64,
        expected,
    })
}

/// Trains `model` on `data` by DP-SGD for `config.steps` steps, updating `params` in place
/// and calling `observer` at every step.
///
/// # Formula
///
/// ḡ_t = (Σ_{i∈B_t} clip(∇ℓ(w_t; z_i)) + N(0, σ²S²I)) / B; v ← μv + ḡ_t + λ_wd·w_t;
/// w_{t+1} = w_t − ρ·v (see the [module docs](self)).
///
/// # Citations
///
/// Abadi et al. 2016, Alg. 1; Guo, Karrer, Chaudhuri, van der Maaten 2022, Sec. 6.1
/// (`guo2022-bounding-reconstruction-fil-rdp.txt`; GELU clipping).
///
/// # Errors
///
/// As [`DpSgd::new`] and [`DpSgd::step`].
///
/// # Examples
///
/// ```
/// use reconbound::data::synthetic::gaussian_blobs;
/// use reconbound::nn::arch;
/// use reconbound::train::dpsgd::{train, DpSgdConfig};
///
/// let data = gaussian_blobs(200, 4, 2, 0.15, 1)?;
/// let model = arch::logistic_regression(4)?;
/// let mut params = model.init_params(1);
/// let config = DpSgdConfig { batch_size: 20, steps: 50, ..DpSgdConfig::default() };
/// let summary = train(&model, &data, &config, &mut params, &mut ())?;
/// assert_eq!(summary.steps, 50);
/// assert_eq!(summary.sampling_rate, 0.1);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn train<O: Observer + ?Sized>(
    model: &Sequential,
    data: &Dataset,
    config: &DpSgdConfig,
    params: &mut [f64],
    observer: &mut O,
) -> Result<TrainSummary> {
    DpSgd::new(model, data, config)?.run(params, observer)
}
