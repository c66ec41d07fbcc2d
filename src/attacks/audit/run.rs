//! One audit trial: train in both worlds (D, and D′ = D plus the canary) and score each
//! training with every distinguisher of Nasr et al. 2021 (§IV).
//!
//! # The worlds
//!
//! Both worlds train on D with the crate's DP-SGD from the same public θ₀ (the model's random
//! initialisation, or the crafted θ₀ of [`super::init`], [`Audit::with_init`]). World D′ adds the
//! canary as the trainer's secret ([`DpSgd::with_secret`]); world D adds a **zero-gradient**
//! secret in its place, so that both draw batches from n + 1 indices at the same rate
//! q = B/(n + 1) and divide by the same B: a zero gradient changes nothing, so world D is
//! DP-SGD on D alone at rate q, and the pair is add/remove-adjacent as the accountant
//! assumes ([`crate::accounting::pld::epsilon`] at q, σ, T). Fixed-size and shuffled batches
//! are refused ([`check_sampling`]): D's part of the batch would reveal the canary — except
//! shuffled batches for crafter 5, which the audit of the shuffling pitfall needs (below).
//!
//! # The distinguishers
//!
//! Every training is scored by all of [`Distinguisher::ALL`] at once, each oriented so that a
//! **higher score means "the canary was in"**:
//!
//! - [`Distinguisher::FinalLoss`] (Distinguisher 1): −(ℓ(θ_T; canary) − ℓ(θ₀; canary));
//! - [`Distinguisher::MaxLoss`], [`Distinguisher::MeanLoss`] (Distinguisher 2): −max_t and
//!   −mean_t of ℓ(θ_t; canary) − ℓ(θ₀; canary) over the models θ_1 … θ_T after each update.
//!   The losses are taken relative to the public θ₀'s: a constant shift for one canary in
//!   both worlds (the same decisions as the raw loss), but what makes canaries with
//!   different initial losses comparable in the one-run audit ([`super::one_run`]);
//! - [`Distinguisher::GradientTest`] (Distinguisher 3): with c̃_t the canary's clipped
//!   gradient at θ_t (for the adaptive canary, the input inserted at step t),
//!   a_t = ‖c̃_t‖², the residual r_t = B·ḡ_t − K_t and Z_t = ⟨r_t, c̃_t⟩/a_t, the score
//!   Σ_t ln(1 − q + q·exp((2Z_t − 1)/(2σ_t²))), σ_t = σS/‖c̃_t‖ (S the clipping sensitivity):
//!   the log-likelihood ratio of "Z_t ~ N(0, σ_t²)" against "(1 − q)N(0, σ_t²) + qN(1, σ_t²)".
//!   For a canary of norm C under hard clipping σ_t = σ and this is the issue's
//!   Σ_t ln(1 − q + q·exp((2Z_t − 1)/(2σ²))), Z_t = ⟨r_t, c⟩/C². K_t is what the adversary
//!   knows of D's part, fixed by the [`BatchView`] of [`AuditConfig::view`]:
//!   - [`BatchView::Informed`] (the default): Σ_{i∈B_t∩D} clip(∇ℓ(θ_t; z_i)), the sum over
//!     D's **actual** batch at step t (the trainer's [`StepInfo::batch_sum`], which never
//!     holds the canary). The threat model of DP-SGD's analysis gives the adversary D and
//!     D's batches; only the canary's membership is secret, and it is sampled independently
//!     of D's batch, so the accountant's ε holds against this adversary too.
//!   - [`BatchView::ExpectedBatch`]: its expectation q·Σ_{i∈D} clip(∇ℓ(θ_t; z_i)), for an
//!     adversary to whom D's batches are secret too (weaker under Poisson sampling: D's
//!     sampling variance stays in r_t).
//!
//!   Under the full batch both are D's whole sum. Steps with a_t = 0 add nothing.
//!   Distinguisher 3 reads the released noisy gradients ḡ_t, the output the DP-SGD analysis
//!   releases (with ρ > 0 they follow from consecutive models).
//!
//! No score reads whether the canary was drawn, or the noise; only the informed view reads
//! which of D's examples were. The threat model is a type ([`crate::attacks::game`]): the
//! informed adversary is shown each step as an [`InformedView`], the other as a
//! [`GradientView`], which holds no batch; [`BatchView`] only names which of the two a
//! training uses (the informed one under the full batch, whose batch is all of D).
//!
//! # Crafter 5 without training
//!
//! With the learning rate 0 (crafter 5), θ_t ≡ θ₀: the losses are constant and every clipped
//! gradient is the same at every step and in every trial. [`Audit`] computes them once —
//! s_i = ⟨clip(∇ℓ(θ₀; z_i)), c̃⟩ for i ∈ D and a = ‖c̃‖² — and a world is then
//! Z_t = (Σ_{i∈B_t∩D} s_i − k_t + a·[canary ∈ B_t] + σS‖c̃‖·ξ_t)/a, ξ_t ~ N(0, 1), with
//! k_t = Σ_{i∈B_t∩D} s_i (the batch members' projections, informed view: D's part cancels)
//! or k_t = q·Σ_i s_i (expected-batch view):
//! the batch is drawn exactly as the trainer draws it (same streams), and ⟨noise, c̃⟩ of the
//! trainer's N(0, σ²S²I) is drawn as the one Gaussian it is in distribution. The bits differ
//! from training with ρ = 0 ([`Audit::scores_by_training`], the reference it is tested
//! against), the distribution does not.
//!
//! # Shuffled batches
//!
//! With [`Sampling::Shuffle`] the trainer shuffles the n + 1 slots (D's n and the canary's
//! or the zero secret's) every epoch into T_b = (n + 1)/B batches — what many
//! implementations do while reporting Poisson's ε at q = B/(n + 1) (Chua et al., ICML 2024).
//! Only crafter 5 is audited so (its scores need no training: θ_t ≡ θ₀, the releases are
//! exactly the shuffled mechanism's, ABLQ_S), B must divide n + 1 and T be whole epochs, and
//! the adversary does not see D's batches ([`BatchView::ExpectedBatch`]: the batch short of
//! one of D's records is the slot's, in both worlds, and the mechanism does not release it).
//! It knows D, so it takes y_t = (the released projection − B·s̄)/a, s̄ the mean of D's
//! s_i: a batch without the slot has mean 0, the slot's batch mean u = −s̄/a (world D) or
//! u + 1 (world D′) when D's s_i are all equal, and noise variance v = σ²S²/a. Distinguisher 3
//! is then the log-likelihood ratio of the two mixtures over the slot's batch, summed over
//! epochs: Σ_e [ln Σ_t exp(((u + 1)y_t − (u + 1)²/2)/v) − ln Σ_t exp((u·y_t − u²/2)/v)] —
//! exact for [`Crafter::OpposedDataset`] (all s_i = −a, u = 1: Chua et al.'s instance, whose
//! ε is bounded below by [`crate::accounting::shuffle_lower`]), a valid score for the others.
//! [`Audit::scores_by_training`] has no shuffled form (it refuses).
//!
//! # Randomness
//!
//! Trial k draws the seeds of its two trainings from `Rng::for_trial(master_seed, k)`, so a
//! trial is a pure function of (master seed, k) and shards merge exactly.
//!
//! # Citations
//!
//! Nasr, Song, Thakurta, Papernot, Carlini 2021, §IV, Distinguishers 1–3, Protocols 1–4
//! (`nasr2021-adversary-instantiation.txt`); `docs/DESIGN.md`, "Audits".

use super::canary::{craft, AdaptiveConfig, Canary, CanaryWorkspace, Crafter};
use super::init::{initial_params, Init};
use crate::accounting::fil::fisher::dot;
use crate::attacks::game::{self, Adversary, GradientView, InformedView, Named, ScoreKind};
use crate::attacks::prior_aware::check_sampling;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::math::special::{log_add_exp, log_sum_exp};
use crate::nn::{BatchWorkspace, Sequential, Workspace};
use crate::rng::Rng;
use crate::train::clip::clip;
use crate::train::clipped_sum::clipped_sum;
use crate::train::dpsgd::{Clipping, DpSgd, DpSgdConfig, Secret};
use crate::train::observer::{Observer, StepInfo};
use crate::train::sampling::{BatchSampler, Sampling};
use alloc::vec::Vec;

/// A distinguisher (Nasr et al. 2021, Distinguishers 1–3); see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinguisher {
    /// Distinguisher 1: the canary's loss on the final model.
    FinalLoss,
    /// Distinguisher 2 (max): the largest loss over the intermediate models.
    MaxLoss,
    /// Distinguisher 2 (mean): the mean loss over the intermediate models.
    MeanLoss,
    /// Distinguisher 3: the likelihood-ratio test on the released gradients.
    GradientTest,
}

impl Distinguisher {
    /// All distinguishers, in the order of [`WorldScores`].
    pub const ALL: [Distinguisher; 4] = [
        Distinguisher::FinalLoss,
        Distinguisher::MaxLoss,
        Distinguisher::MeanLoss,
        Distinguisher::GradientTest,
    ];

    /// The position in [`Distinguisher::ALL`] and in [`WorldScores`].
    pub fn index(self) -> usize {
        match self {
            Distinguisher::FinalLoss => 0,
            Distinguisher::MaxLoss => 1,
            Distinguisher::MeanLoss => 2,
            Distinguisher::GradientTest => 3,
        }
    }

    /// The number in Nasr et al. (1, 2, 2, 3).
    pub fn number(self) -> u8 {
        match self {
            Distinguisher::FinalLoss => 1,
            Distinguisher::MaxLoss | Distinguisher::MeanLoss => 2,
            Distinguisher::GradientTest => 3,
        }
    }

    /// A short stable name: `final-loss`, `max-loss`, `mean-loss`, `gradient`.
    pub fn name(self) -> &'static str {
        match self {
            Distinguisher::FinalLoss => "final-loss",
            Distinguisher::MaxLoss => "max-loss",
            Distinguisher::MeanLoss => "mean-loss",
            Distinguisher::GradientTest => "gradient",
        }
    }
}

impl ScoreKind for Distinguisher {
    const KINDS: &'static [Distinguisher] = &Distinguisher::ALL;

    fn name(self) -> &'static str {
        Distinguisher::name(self)
    }
}

/// The scores of one training, indexed by [`Distinguisher::index`]; higher means "in".
/// [`named_scores`] gives them as the named score set of [`Distinguisher`].
pub type WorldScores = [f64; 4];

/// One training's scores as a named score set, one per [`Distinguisher`]: what shard lines,
/// CSV columns and JSON keys are written from.
pub fn named_scores(scores: &WorldScores) -> Named<Distinguisher, f64, 4> {
    Named::from_fn(|d: Distinguisher| scores.get(d.index()).copied().unwrap_or(f64::NAN))
}

/// One term of Distinguisher 3: ln(1 − q + q·exp((2z − 1)/(2s²))), computed without
/// overflow.
///
/// # Formula
///
/// log_add_exp(ln(1 − q), ln q + (2z − 1)/(2s²)); 0 for q = 0; the exponent itself for q = 1.
///
/// # Citations
///
/// Nasr et al. 2021, Distinguisher 3 and Eq. 6 (the watermark likelihood); `docs/DESIGN.md`, "Audits".
///
/// # Errors
///
/// [`Error::InvalidParameter`] `sampling_rate` ∉ [0, 1], `noise` unless finite and > 0, `z`
/// unless finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::run::gradient_test_term;
/// // q = 1: the Gaussian log-likelihood ratio (2z − 1)/(2σ²).
/// assert_eq!(gradient_test_term(1.0, 1.0, 0.5)?, 2.0);
/// // z = 1/2 is where both hypotheses are equally likely.
/// assert!(gradient_test_term(0.5, 0.3, 2.0)?.abs() < 1e-15);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gradient_test_term(z: f64, sampling_rate: f64, noise: f64) -> Result<f64> {
    crate::error::check_probability("sampling_rate", sampling_rate)?;
    crate::error::check_positive("noise", noise)?;
    crate::error::check_finite("z", z)?;
    Ok(term_unchecked(z, sampling_rate, noise))
}

fn term_unchecked(z: f64, q: f64, s: f64) -> f64 {
    let e = (2.0 * z - 1.0) / (2.0 * s * s);
    if q <= 0.0 {
        0.0
    } else if q >= 1.0 {
        e
    } else {
        log_add_exp(libm::log1p(-q), libm::log(q) + e)
    }
}

/// What Distinguisher 3's adversary knows of D's part of each step's gradient sum (module
/// docs): the sum over D's actual batch, or its expectation. The name of a threat model, read
/// once per training to pick the adversary's type: the informed one sees each step through
/// an [`InformedView`], the other through a [`GradientView`] that holds no batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchView {
    /// K_t = Σ_{i∈B_t∩D} clip(∇ℓ(θ_t; z_i)): D's actual batch (never the canary), the
    /// adversary of DP-SGD's analysis. The default.
    #[default]
    Informed,
    /// K_t = q·Σ_{i∈D} clip(∇ℓ(θ_t; z_i)): D's batches are secret too (the same as
    /// [`BatchView::Informed`] for the full batch).
    ExpectedBatch,
}

impl BatchView {
    /// `informed` or `expected-batch`.
    pub fn name(self) -> &'static str {
        match self {
            BatchView::Informed => "informed",
            BatchView::ExpectedBatch => "expected-batch",
        }
    }

    /// The view named `name` ([`BatchView::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "informed" => Some(BatchView::Informed),
            "expected-batch" => Some(BatchView::ExpectedBatch),
            _ => None,
        }
    }
}

/// What the audit fixes before its trials.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuditConfig {
    /// The DP-SGD hyperparameters (clipping required, σ > 0, Poisson or full-batch sampling;
    /// `batch_size` is B for the n + 1 indices; `seed` is ignored: each training's seed comes
    /// from the trial). Crafter 5 sets the learning rate to 0 whatever is given here.
    pub dpsgd: DpSgdConfig,
    /// The seed of θ₀ ([`Sequential::init_params`]), the same public θ₀ in every trial (the
    /// random start of a crafted θ₀, [`Audit::with_init`]).
    pub init_seed: u64,
    /// The pool example crafters 1–3 start from.
    pub pool_index: usize,
    /// The adaptive canary's inner optimisation (crafter 3).
    pub adaptive: AdaptiveConfig,
    /// What Distinguisher 3 knows of D's part of the sum ([`BatchView::Informed`] by
    /// default).
    pub view: BatchView,
}

/// One trial: the scores of the training without and with the canary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuditOutcome {
    /// The trial index.
    pub trial: u64,
    /// World D's scores.
    pub without: WorldScores,
    /// World D′'s scores.
    pub with: WorldScores,
    /// Steps whose batch drew the canary in world D′ (for the experimenter; no score reads
    /// it).
    pub canary_steps: u64,
}

/// Crafter 5's precomputation (module docs).
#[derive(Clone, Debug)]
struct Frozen {
    /// s_i = ⟨clip(∇ℓ(θ₀; z_i)), c̃⟩.
    projections: Vec<f64>,
    /// Σ_i s_i in index order.
    total: f64,
    /// a = ‖c̃‖².
    self_projection: f64,
}

/// The trainer's configuration of an audit of `crafter` (learning rate 0 for crafter 5) and
/// its clipping, validated: clipping set, σ > 0, Poisson or full-batch sampling.
pub(super) fn trainer_config(
    crafter: Crafter,
    config: &AuditConfig,
) -> Result<(DpSgdConfig, Clipping)> {
    let mut dpsgd = config.dpsgd;
    if crafter.freezes_parameters() {
        dpsgd.learning_rate = 0.0;
    }
    dpsgd.validate()?;
    let clipping = dpsgd.clipping.ok_or(Error::InvalidParameter {
        name: "clip_norm",
        value: f64::NAN,
        expected: "set (an audit needs clipping and noise)",
    })?;
    crate::error::check_positive("noise_multiplier", dpsgd.noise_multiplier)?;
    if dpsgd.sampling == Sampling::Shuffle {
        check_shuffle(crafter, config.view)?;
    } else {
        check_sampling(dpsgd.sampling)?;
    }
    Ok((dpsgd, clipping))
}

/// Shuffled batches (module docs, "Shuffled batches"): crafter 5 only (its releases are
/// exactly ABLQ_S's, scored without training) and D's batches secret.
fn check_shuffle(crafter: Crafter, view: BatchView) -> Result<()> {
    if !crafter.freezes_parameters() {
        return Err(Error::InvalidParameter {
            name: "sampling",
            value: f64::from(crafter.number()),
            expected: "shuffled batches with a crafter-5 canary only (dataset-dirac, dataset-spread-K, dataset-opposed: learning rate 0, the releases exactly ABLQ_S's)",
        });
    }
    if view == BatchView::Informed {
        return Err(Error::InvalidParameter {
            name: "view",
            value: 0.0,
            expected: "expected-batch under shuffled batches (D's batches would show which batch holds the canary's slot, which the mechanism does not release)",
        });
    }
    Ok(())
}

/// T_b = (n + 1)/B batches per epoch of shuffled batches over `slots` = n + 1 indices,
/// checked: B must divide the slots (no slot dropped) and `steps` be whole epochs.
fn shuffle_epoch(slots: usize, batch_size: usize, steps: u64) -> Result<u64> {
    if batch_size == 0 || slots % batch_size != 0 {
        return Err(Error::InvalidCount {
            name: "batch_size",
            value: batch_size as u64,
            expected: "dividing n + 1 under shuffled batches (every slot in a batch each epoch)",
        });
    }
    let per_epoch = (slots / batch_size) as u64;
    if steps % per_epoch != 0 {
        return Err(Error::InvalidCount {
            name: "steps",
            value: steps,
            expected: "a multiple of (n + 1)/B under shuffled batches (whole epochs)",
        });
    }
    Ok(per_epoch)
}

/// An audit of one crafter on one model and training set: the crafted canary, θ₀ and the
/// trainer's configuration, ready to run trials ([`run_trial`](Self::run_trial)).
#[derive(Clone, Debug)]
pub struct Audit<'a> {
    model: &'a Sequential,
    crafter: Crafter,
    canary: Canary,
    data: Dataset,
    dpsgd: DpSgdConfig,
    clipping: Clipping,
    init: Vec<f64>,
    zero: Vec<f64>,
    frozen: Option<Frozen>,
    view: BatchView,
}

impl<'a> Audit<'a> {
    /// Crafts the canary of `crafter` for `model` on the training set `data` (crafters 1–3
    /// take `pool`'s example `config.pool_index`), and fixes θ₀.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `clip_norm` if clipping is off, `noise_multiplier` unless
    /// positive, `sampling` unless Poisson, full batch or (crafter 5 only) shuffled, `view`
    /// informed with shuffled batches, [`Error::InvalidCount`] `batch_size` not dividing
    /// n + 1 or `steps` not whole epochs with shuffled batches; as [`DpSgdConfig::validate`],
    /// [`craft`] and [`DpSgd::with_secret`] (e.g. `batch_size` out of range).
    pub fn new(
        model: &'a Sequential,
        crafter: Crafter,
        config: &AuditConfig,
        data: &Dataset,
        pool: &Dataset,
    ) -> Result<Self> {
        Self::with_init(model, crafter, config, Init::Random, data, pool)
    }

    /// [`new`](Self::new) from the θ₀ of `init` ([`super::init`]): the random
    /// initialisation at `config.init_seed`, or the crafted θ₀ of Annamalai & De Cristofaro
    /// (pre-trained on `data` without noise at the audit's clipping), the same public θ₀ in
    /// both worlds and every trial. The canary is crafted at that θ₀.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new); [`Error::InvalidParameter`] `init` for a crafted θ₀ with a
    /// canary it does not fit: crafter 5 (learning rate 0: θ never leaves θ₀, and D is
    /// relabelled by θ₀) and gradient canaries (crafter 4: inserted gradients, not examples —
    /// the crafted θ₀ is the black-box audit's, whose canary is an example); as
    /// [`initial_params`].
    pub fn with_init(
        model: &'a Sequential,
        crafter: Crafter,
        config: &AuditConfig,
        init: Init,
        data: &Dataset,
        pool: &Dataset,
    ) -> Result<Self> {
        let (dpsgd, clipping) = trainer_config(crafter, config)?;
        if matches!(init, Init::Crafted(_))
            && (crafter.freezes_parameters() || matches!(crafter, Crafter::Gradient(_)))
        {
            return Err(Error::InvalidParameter {
                name: "init",
                value: f64::from(crafter.number()),
                expected: "a crafted θ₀ with an input canary only (example, mislabelled, clipbkd, adaptive): crafter 5 freezes the parameters at θ₀, gradient canaries insert no example",
            });
        }
        let init = initial_params(model, init, config.init_seed, data, clipping)?;
        let crafted = craft(
            crafter,
            model,
            &init,
            clipping,
            data,
            pool,
            config.pool_index,
            config.adaptive,
        )?;
        let zero = alloc::vec![0.0; model.num_params()];
        if dpsgd.sampling == Sampling::Shuffle {
            // Scored without the trainer (module docs), whose shuffled batches refuse a
            // secret: the sampler's and the epochs' checks instead.
            BatchSampler::new(Sampling::Shuffle, crafted.data.len() + 1, dpsgd.batch_size)?;
            shuffle_epoch(crafted.data.len() + 1, dpsgd.batch_size, dpsgd.steps)?;
        } else {
            // Check the trainer accepts this configuration (batch size, data) before any trial.
            DpSgd::with_secret(model, &crafted.data, &dpsgd, Secret::Gradient(&zero))?;
        }
        let mut audit = Audit {
            model,
            crafter,
            canary: crafted.canary,
            data: crafted.data,
            dpsgd,
            clipping,
            init,
            zero,
            frozen: None,
            view: config.view,
        };
        if crafter.freezes_parameters() {
            audit.frozen = Some(audit.precompute()?);
        }
        Ok(audit)
    }

    /// The crafter.
    pub fn crafter(&self) -> Crafter {
        self.crafter
    }

    /// The crafted canary.
    pub fn canary(&self) -> &Canary {
        &self.canary
    }

    /// The training set both worlds train on (D relabelled for crafter 5).
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// The trainer's configuration (learning rate 0 for crafter 5; `seed` unused).
    pub fn dpsgd(&self) -> &DpSgdConfig {
        &self.dpsgd
    }

    /// Distinguisher 3's view of D's batches.
    pub fn view(&self) -> BatchView {
        self.view
    }

    /// The public θ₀ every training starts from.
    pub fn initial_params(&self) -> &[f64] {
        &self.init
    }

    /// The sampling rate q of every example and of the canary: B/(n + 1), 1 for the full
    /// batch — what the accountant is run at.
    pub fn sampling_rate(&self) -> f64 {
        match self.dpsgd.sampling {
            Sampling::FullBatch => 1.0,
            _ => self.dpsgd.batch_size as f64 / (self.data.len() as f64 + 1.0),
        }
    }

    fn precompute(&self) -> Result<Frozen> {
        let p = self.model.num_params();
        let mut ws = self.model.workspace();
        let mut c = alloc::vec![0.0; p];
        let secret = self.canary.secret(&[]);
        secret.clipped_gradient(self.model, &self.init, Some(self.clipping), &mut c, &mut ws)?;
        let mut g = alloc::vec![0.0; p];
        let mut projections = Vec::with_capacity(self.data.len());
        for (x, y) in self.data.iter() {
            self.model
                .loss_and_grad(&self.init, x, y as usize, &mut g, &mut ws)?;
            clip(&mut g, self.clipping.method, self.clipping.norm)?;
            projections.push(dot(&g, &c));
        }
        let total = projections.iter().sum();
        Ok(Frozen {
            projections,
            total,
            self_projection: dot(&c, &c),
        })
    }

    /// Trial `trial`: one training in each world, seeded from (`master_seed`, `trial`).
    ///
    /// # Errors
    ///
    /// The trainer's and the model's errors (e.g. a parameter that becomes non-finite);
    /// [`Error::Numerical`] if a score is not finite.
    pub fn run_trial(&self, master_seed: u64, trial: u64) -> Result<AuditOutcome> {
        let mut rng = Rng::for_trial(master_seed, trial);
        let (seed0, seed1) = (rng.next_u64(), rng.next_u64());
        let (without, _) = self.scores(seed0, false)?;
        let (with, canary_steps) = self.scores(seed1, true)?;
        Ok(AuditOutcome {
            trial,
            without,
            with,
            canary_steps,
        })
    }

    /// The scores of one training with training seed `seed`, with or without the canary,
    /// and the number of steps that drew the canary. Crafter 5 takes the precomputed path
    /// (module docs); others train.
    ///
    /// # Errors
    ///
    /// As [`run_trial`](Self::run_trial).
    pub fn scores(&self, seed: u64, with_canary: bool) -> Result<(WorldScores, u64)> {
        match &self.frozen {
            Some(f) => self.frozen_scores(f, seed, with_canary),
            None => self.scores_by_training(seed, with_canary),
        }
    }

    /// [`scores`](Self::scores) by training with the crate's DP-SGD, also for crafter 5 (at
    /// learning rate 0): the reference of the precomputed path.
    ///
    /// # Errors
    ///
    /// As [`run_trial`](Self::run_trial).
    pub fn scores_by_training(&self, seed: u64, with_canary: bool) -> Result<(WorldScores, u64)> {
        if self.dpsgd.sampling == Sampling::Shuffle {
            return Err(Error::InvalidParameter {
                name: "sampling",
                value: 0.0,
                expected: "Poisson or the full batch (shuffled audits are scored without training)",
            });
        }
        if informed(self.view, self.dpsgd.sampling) {
            self.train_and_score(seed, with_canary, |_| {
                InformedPart::new(self.model.num_params())
            })
        } else {
            self.train_and_score(seed, with_canary, |q| {
                ExpectedPart::new(self.model, &self.data, q, self.clipping)
            })
        }
    }

    /// [`scores_by_training`](Self::scores_by_training) with Distinguisher 3's adversary
    /// `part(q)`, of the threat model of [`view`](Self::view).
    fn train_and_score<K: KnownPart>(
        &self,
        seed: u64,
        with_canary: bool,
        part: impl FnOnce(f64) -> K,
    ) -> Result<(WorldScores, u64)> {
        let model = self.model;
        let (p, d) = (model.num_params(), model.input_len());
        let config = DpSgdConfig { seed, ..self.dpsgd };
        let adaptive = matches!(self.canary, Canary::Adaptive { .. });
        let mut x = alloc::vec![0.0; d];
        let query: &[f64] = match &self.canary {
            Canary::Adaptive { query, .. } => query,
            _ => &[],
        };
        if query.len() == d {
            x.copy_from_slice(query);
        }
        let secret = if with_canary {
            self.canary.secret(query)
        } else {
            Secret::Gradient(&self.zero)
        };
        let mut trainer = DpSgd::with_secret(model, &self.data, &config, secret)?;
        let q = trainer.sampling_rate();
        let s = config.noise_std_of_sum()?;
        let mut params = self.init.clone();
        let mut cws = CanaryWorkspace::new(model);
        let mut ws = model.workspace();
        let mut c = alloc::vec![0.0; p];
        let mut view = part(q);
        // A gradient canary's clipped gradient does not depend on θ: computed at step 0 only.
        let constant_canary = matches!(self.canary, Canary::Gradient(_));
        let mut tally = Tally::new(self.canary.loss(model, &params, &mut cws)?);
        let mut canary_steps = 0u64;
        for t in 0..config.steps {
            if adaptive {
                self.canary
                    .adaptive_input(model, &params, self.clipping, &mut x, &mut cws)?;
            }
            if t == 0 || !constant_canary {
                self.canary.secret(&x).clipped_gradient(
                    model,
                    &params,
                    Some(self.clipping),
                    &mut c,
                    &mut ws,
                )?;
            }
            let stats = if adaptive && with_canary {
                trainer.step_with_secret(&mut params, &mut view, self.canary.secret(&x))?
            } else {
                trainer.step(&mut params, &mut view)?
            };
            canary_steps += u64::from(stats.secret_in_batch && with_canary);
            tally.add_gradient_test(view.residual_dot(&c), dot(&c, &c), q, s);
            tally.add_loss(self.canary.loss(model, &params, &mut cws)?);
        }
        let scores = tally.finish(self.canary.loss(model, &params, &mut cws)?)?;
        Ok((scores, canary_steps))
    }

    fn frozen_scores(
        &self,
        f: &Frozen,
        seed: u64,
        with_canary: bool,
    ) -> Result<(WorldScores, u64)> {
        let n = self.data.len();
        let config = &self.dpsgd;
        let mut sampler = BatchSampler::new(config.sampling, n + 1, config.batch_size)?;
        let q = self.sampling_rate();
        let s = config.noise_std_of_sum()?;
        let a = f.self_projection;
        let full_batch = config.sampling == Sampling::FullBatch;
        let sees_batches = informed(self.view, config.sampling);
        let mut batch = Vec::new();
        let (mut llr, mut canary_steps) = (0.0, 0u64);
        let sd = s * libm::sqrt(a);
        if config.sampling == Sampling::Shuffle {
            return self.shuffled_scores(f, seed, with_canary, &mut sampler, sd);
        }
        for t in 0..config.steps {
            let (sum, drawn) = if full_batch {
                (f.total, true)
            } else {
                let mut sampling_rng = Rng::for_trial(seed, t.wrapping_mul(2));
                sampler.next_batch(&mut sampling_rng, &mut batch)?;
                let drawn = batch.last() == Some(&n);
                let mut sum = 0.0;
                for &i in &batch {
                    sum += f.projections.get(i).copied().unwrap_or(0.0);
                }
                (sum, drawn)
            };
            let drawn = drawn && with_canary;
            canary_steps += u64::from(drawn);
            if a > 0.0 {
                let mut noise = Rng::for_trial(seed, t.wrapping_mul(2).wrapping_add(1));
                // K_t: the batch members' projections (informed; D's part cancels) or
                // their expectation; the full batch's sum is both.
                let known = if sees_batches { sum } else { q * f.total };
                let mut r = sum - known + sd * noise.gaussian();
                if drawn {
                    r += a;
                }
                llr += term_unchecked(r / a, q, s / libm::sqrt(a));
            }
        }
        // θ_t ≡ θ₀: every loss equals the initial loss, so the relative losses are 0.
        let scores = [0.0, 0.0, 0.0, llr];
        check_scores(&scores)?;
        Ok((scores, canary_steps))
    }
}

impl Audit<'_> {
    /// [`frozen_scores`](Self::frozen_scores) under shuffled batches (module docs,
    /// "Shuffled batches"): Distinguisher 3 is the log-likelihood ratio of the pair, epoch by
    /// epoch, from the released projections alone.
    fn shuffled_scores(
        &self,
        f: &Frozen,
        seed: u64,
        with_canary: bool,
        sampler: &mut BatchSampler,
        sd: f64,
    ) -> Result<(WorldScores, u64)> {
        let n = self.data.len();
        let config = &self.dpsgd;
        let per_epoch = shuffle_epoch(n + 1, config.batch_size, config.steps)?;
        let a = f.self_projection;
        let mut batch = Vec::new();
        let (mut llr, mut canary_steps) = (0.0, 0u64);
        if a > 0.0 {
            // y_t = (released projection − B·s̄)/a; the slot's batch has mean u (world D) or
            // u + 1 (world D′), u = −s̄/a, every other batch 0; noise variance v.
            let mean = f.total / n as f64;
            let known = config.batch_size as f64 * mean;
            let u = -mean / a;
            let v = sd * sd / (a * a);
            let (mut with_terms, mut without_terms) = (Vec::new(), Vec::new());
            for t in 0..config.steps {
                let mut sampling_rng = Rng::for_trial(seed, t.wrapping_mul(2));
                sampler.next_batch(&mut sampling_rng, &mut batch)?;
                let drawn = batch.last() == Some(&n) && with_canary;
                canary_steps += u64::from(drawn);
                let mut sum = 0.0;
                for &i in &batch {
                    sum += f.projections.get(i).copied().unwrap_or(0.0);
                }
                let mut noise = Rng::for_trial(seed, t.wrapping_mul(2).wrapping_add(1));
                let mut r = sum - known + sd * noise.gaussian();
                if drawn {
                    r += a;
                }
                let y = r / a;
                with_terms.push(((u + 1.0) * y - 0.5 * (u + 1.0) * (u + 1.0)) / v);
                without_terms.push((u * y - 0.5 * u * u) / v);
                if (t + 1) % per_epoch == 0 {
                    llr += log_sum_exp(&with_terms) - log_sum_exp(&without_terms);
                    with_terms.clear();
                    without_terms.clear();
                }
            }
        }
        let scores = [0.0, 0.0, 0.0, llr];
        check_scores(&scores)?;
        Ok((scores, canary_steps))
    }
}

fn check_scores(scores: &WorldScores) -> Result<()> {
    match scores.iter().find(|v| !v.is_finite()) {
        Some(&v) => Err(Error::Numerical {
            what: "an audit score is not finite",
            value: v,
        }),
        None => Ok(()),
    }
}

/// Distinguisher 3 reads K_t through the view of `view`'s threat model: the informed view
/// ([`InformedPart`]) for [`BatchView::Informed`] and for the full batch (whose batch, all of
/// D, is public), the released gradients alone ([`ExpectedPart`]) otherwise.
pub(super) fn informed(view: BatchView, sampling: Sampling) -> bool {
    view == BatchView::Informed || sampling == Sampling::FullBatch
}

/// Distinguisher 3's adversary (module docs): it sees each step through the view of its
/// threat model and keeps the residual r_t = B·ḡ_t − K_t, K_t what it knows of D's part.
pub(super) trait KnownPart: Observer {
    /// ⟨r_t, c⟩ for the last step seen, summed in coordinate order.
    fn residual_dot(&self, c: &[f64]) -> f64 {
        let mut r_dot_c = 0.0;
        for (&r, &cj) in self.residual().iter().zip(c) {
            r_dot_c += r * cj;
        }
        r_dot_c
    }

    /// r_t of the last step seen.
    fn residual(&self) -> &[f64];
}

/// The informed adversary: K_t = Σ_{i∈B_t∩D} clip(∇ℓ(θ_t; z_i)), D's clipped sum over its
/// actual batch ([`InformedView::known_sum`], never the canary).
pub(super) struct InformedPart {
    residual: Vec<f64>,
}

impl InformedPart {
    /// For a model of `p` parameters.
    pub(super) fn new(p: usize) -> Self {
        InformedPart {
            residual: alloc::vec![0.0; p],
        }
    }
}

impl Adversary for InformedPart {
    type View<'s> = InformedView<'s>;

    fn see(&mut self, view: &InformedView<'_>) -> Result<()> {
        view.residual(&mut self.residual);
        Ok(())
    }
}

impl Observer for InformedPart {
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        game::observe(self, info)
    }
}

impl KnownPart for InformedPart {
    fn residual(&self) -> &[f64] {
        &self.residual
    }
}

/// The adversary to whom D's batches are secret: it sees the released gradients only and
/// takes K_t = q·Σ_{i∈D} clip(∇ℓ(θ_t; z_i)), computed from D at θ_t.
pub(super) struct ExpectedPart<'d> {
    model: &'d Sequential,
    data: &'d Dataset,
    q: f64,
    clipping: Clipping,
    all: Vec<usize>,
    bws: Option<BatchWorkspace>,
    ws: Workspace<f64>,
    known: Vec<f64>,
    residual: Vec<f64>,
}

impl<'d> ExpectedPart<'d> {
    /// For `model` trained on `data` at sampling rate `q` with `clipping`.
    pub(super) fn new(
        model: &'d Sequential,
        data: &'d Dataset,
        q: f64,
        clipping: Clipping,
    ) -> Self {
        let p = model.num_params();
        ExpectedPart {
            model,
            data,
            q,
            clipping,
            all: (0..data.len()).collect(),
            bws: model.batch_workspace(),
            ws: model.workspace(),
            known: alloc::vec![0.0; p],
            residual: alloc::vec![0.0; p],
        }
    }
}

impl Adversary for ExpectedPart<'_> {
    type View<'s> = GradientView<'s>;

    fn see(&mut self, view: &GradientView<'_>) -> Result<()> {
        clipped_sum(
            self.model,
            view.params(),
            self.data,
            &self.all,
            self.clipping,
            &mut self.known,
            &mut self.ws,
            &mut self.bws,
        )?;
        let (q, b) = (self.q, view.normaliser());
        for ((r, &g), &k) in self
            .residual
            .iter_mut()
            .zip(view.released())
            .zip(&self.known)
        {
            *r = b * g - q * k;
        }
        Ok(())
    }
}

impl Observer for ExpectedPart<'_> {
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        game::observe(self, info)
    }
}

impl KnownPart for ExpectedPart<'_> {
    fn residual(&self) -> &[f64] {
        &self.residual
    }
}

/// One canary's scores, accumulated step by step (module docs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Tally {
    initial_loss: f64,
    llr: f64,
    max_loss: f64,
    sum_loss: f64,
    steps: u64,
}

impl Tally {
    /// A tally for a canary whose loss at θ₀ is `initial_loss`.
    pub(super) fn new(initial_loss: f64) -> Self {
        Tally {
            initial_loss,
            llr: 0.0,
            max_loss: f64::NEG_INFINITY,
            sum_loss: 0.0,
            steps: 0,
        }
    }

    /// Distinguisher 3's term for ⟨r_t, c̃_t⟩ = `r_dot_c` and a_t = ‖c̃_t‖² = `a` (nothing
    /// when a_t = 0), noise std `s` on the sum.
    pub(super) fn add_gradient_test(&mut self, r_dot_c: f64, a: f64, q: f64, s: f64) {
        if a > 0.0 {
            self.llr += term_unchecked(r_dot_c / a, q, s / libm::sqrt(a));
        }
    }

    /// The canary's loss at the model after a step.
    pub(super) fn add_loss(&mut self, l: f64) {
        let l = l - self.initial_loss;
        self.max_loss = if l > self.max_loss { l } else { self.max_loss };
        self.sum_loss += l;
        self.steps += 1;
    }

    /// The scores, given the loss at the final model.
    pub(super) fn finish(&self, final_loss: f64) -> Result<WorldScores> {
        let scores = [
            -(final_loss - self.initial_loss),
            -self.max_loss,
            -(self.sum_loss / self.steps as f64),
            self.llr,
        ];
        check_scores(&scores)?;
        Ok(scores)
    }
}
