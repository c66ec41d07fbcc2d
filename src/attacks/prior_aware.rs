//! The prior-aware reconstruction attacks of Hayes, Mahloujifar, Balle 2023 (Alg. 2, Alg. 3,
//! App. G): an informed adversary who knows the prior — m candidates, one of which is the
//! target — picks the candidate whose clipped gradients best explain the released ones.
//!
//! # The adversary
//!
//! It knows the training set D⁻ apart from the target, which of D⁻ is in each batch, every
//! θ_t and released gradient ḡ_t, the sampling rate q, the clipping norm C, the noise
//! multiplier σ, the loss, and the prior (each candidate with its label). It does **not**
//! know which candidate is the target nor whether the target was in a batch. At step t it
//! forms the residual
//!
//! ```text
//! r_t = B·ḡ_t − Σ_{j ∈ D⁻ ∩ B_t} clip(∇ℓ(θ_t; z_j))   (= clip(∇ℓ(θ_t; z*))·[z* ∈ B_t] + N(0, σ²S²I))
//! ```
//!
//! with B the **expected** batch size the trainer divides by and S the clipping sensitivity
//! (C, or 1.11522·C for GELU clipping). The known sum is [`StepInfo::batch_sum`]: the trainer
//! computes exactly what the adversary would (a function of θ_t, D⁻ and the batch), so it is
//! reused rather than recomputed — `tests/attacks` checks the two agree bit for bit. For
//! each candidate z with clipped gradient g_t^z the attack accumulates
//!
//! - [`Score::Sum`] (Alg. 2): Σ_t ⟨g_t^z, r_t⟩/C²;
//! - [`Score::Top`] (Alg. 3): the sum of the ⌈qT⌉ largest per-step terms ⟨g_t^z, r_t⟩/C² —
//!   under subsampling most steps do not contain the target and only add noise;
//! - [`Score::LogLikelihood`] (App. G): Σ_t ln(1 − q + q·exp((‖r_t‖² − ‖r_t − g_t^z‖²)/(2σ²S²)))
//!   \+ ln p_z, the log-posterior of z (Bayes rule with prior p; the paper writes s_z·p_z);
//!   ‖r‖² − ‖r − g‖² is evaluated as 2⟨r, g⟩ − ‖g‖² (no cancellation of two large norms);
//!
//! and guesses the candidate with the largest score, ties broken uniformly at random by the
//! adversary's own coin.
//!
//! # What it must not beat
//!
//! Whatever the attack, P[guess = target] ≤ γ, the ReRo bound of Hayes et al. Thm 2 for
//! κ = max_z p_z (1/m for a uniform prior), [`crate::accounting::rero::dpsgd::gamma`]. For the
//! full batch with orthogonal candidate gradients of norm S, constant over steps, Alg. 2
//! succeeds with probability ∫φ(x − μ)Φ(x)^{m−1}dx, μ = √T/σ
//! ([`orthogonal_success_probability`]), below γ = Φ(Φ⁻¹(1/m) + μ) (equal for m = 2 only
//! with antipodal gradients).
//!
//! # Citations
//!
//! Hayes, Mahloujifar, Balle, "Bounding Training Data Reconstruction in DP-SGD", NeurIPS 2023,
//! Alg. 2 (Sec. 3.3), Alg. 3 and App. G (`hayes2023-rero-dpsgd-appendix.txt`); App. A for the
//! experimental set-up reproduced by [`PriorAwareSetup`].

use crate::accounting::fil::fisher::dot;
use crate::attacks::game::{self, Adversary, Challenge, InformedView, Named, PriorDraw, ScoreKind};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::math::normal;
use crate::math::special::log_add_exp;
use crate::nn::{Sequential, Workspace};
use crate::rng::Rng;
#[cfg(doc)]
use crate::train::dpsgd::DpSgd;
use crate::train::dpsgd::{Clipping, DpSgdConfig, Secret};
use crate::train::observer::{Observer, StepInfo};
use crate::train::sampling::Sampling;
use alloc::vec::Vec;

/// The score a prior-aware attack maximises over the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Hayes et al. Alg. 2: the sum over steps of ⟨clip(∇ℓ(θ_t; z)), r_t⟩/C².
    Sum,
    /// Hayes et al. Alg. 3: the sum of the ⌈qT⌉ largest per-step terms of [`Score::Sum`].
    Top,
    /// Hayes et al. App. G: the log-likelihood of the residuals under "z is the target",
    /// plus ln p_z.
    LogLikelihood,
}

impl ScoreKind for Score {
    const KINDS: &'static [Score] = &Score::ALL;

    fn name(self) -> &'static str {
        Score::name(self)
    }
}

impl Score {
    /// All scores, in the order of [`PriorAwareOutcome::guesses`].
    pub const ALL: [Score; 3] = [Score::Sum, Score::Top, Score::LogLikelihood];

    /// The command-line name: `sum`, `top`, `loglik`.
    pub fn name(self) -> &'static str {
        match self {
            Score::Sum => "sum",
            Score::Top => "top",
            Score::LogLikelihood => "loglik",
        }
    }

    /// The score of a command-line name.
    pub fn from_name(name: &str) -> Option<Score> {
        Score::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The position in [`Score::ALL`].
    pub fn index(self) -> usize {
        match self {
            Score::Sum => 0,
            Score::Top => 1,
            Score::LogLikelihood => 2,
        }
    }
}

/// The prior-aware attack as a DP-SGD [`Observer`] (module docs): it scores every candidate
/// at every step, in O(p + m·T) memory.
#[derive(Debug)]
pub struct PriorAwareAttack<'a> {
    model: &'a Sequential,
    candidates: Vec<Secret<'a>>,
    log_prior: Vec<f64>,
    clipping: Clipping,
    sampling_rate: f64,
    noise_std_of_sum: f64,
    sum: Vec<f64>,
    loglik: Vec<f64>,
    per_step: Vec<f64>,
    grad: Vec<f64>,
    residual: Vec<f64>,
    ws: Workspace<f64>,
    steps: u64,
}

impl<'a> PriorAwareAttack<'a> {
    /// An attack on `model` with the prior `candidates` (uniform if `prior` is `None`, else
    /// the probabilities p_z, in the candidates' order), for DP-SGD with `clipping`, sampling
    /// rate q (1 for the full batch) and noise multiplier σ.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidCount`] `prior_size` if fewer than 2 candidates;
    ///   [`Error::Inconsistent`] if two candidates are equal (same features and label, or the
    ///   same canary gradient): the prior must consist of distinct candidates;
    /// - [`Error::Inconsistent`] / [`Error::InvalidParameter`] `x` / [`Error::InvalidCount`]
    ///   `label` for a candidate that does not fit the model (as [`DpSgd::with_secret`]);
    /// - [`Error::InvalidParameter`] `sampling_rate` unless in (0, 1], `noise_multiplier`
    ///   unless finite and > 0, `clip_norm` unless finite and > 0, `prior` unless every
    ///   p_z > 0 and Σ p_z = 1 within 1e-9 (and of length m).
    pub fn new(
        model: &'a Sequential,
        candidates: &[Secret<'a>],
        prior: Option<&[f64]>,
        clipping: Clipping,
        sampling_rate: f64,
        noise_multiplier: f64,
    ) -> Result<Self> {
        let m = candidates.len();
        if m < 2 {
            return Err(Error::InvalidCount {
                name: "prior_size",
                value: m as u64,
                expected: ">= 2 candidates",
            });
        }
        if !(sampling_rate > 0.0 && sampling_rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "sampling_rate",
                value: sampling_rate,
                expected: "in (0, 1]",
            });
        }
        if !(noise_multiplier > 0.0 && noise_multiplier.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "noise_multiplier",
                value: noise_multiplier,
                expected: "finite and > 0",
            });
        }
        let s = clipping.method.max_norm(clipping.norm)?;
        for c in candidates {
            c.check(model)?;
        }
        for (i, a) in candidates.iter().enumerate() {
            if candidates.iter().skip(i + 1).any(|b| same_candidate(a, b)) {
                return Err(Error::Inconsistent {
                    what: "the prior has two equal candidates (its candidates must be distinct)",
                    value: i as f64,
                });
            }
        }
        let log_prior = match prior {
            None => alloc::vec![-libm::log(m as f64); m],
            Some(p) => {
                if p.len() != m {
                    return Err(Error::Inconsistent {
                        what: "the prior's probabilities and its candidates differ in number",
                        value: p.len() as f64,
                    });
                }
                if let Some(&bad) = p.iter().find(|&&v| !(v > 0.0 && v <= 1.0)) {
                    return Err(Error::InvalidParameter {
                        name: "prior",
                        value: bad,
                        expected: "probabilities in (0, 1]",
                    });
                }
                let total: f64 = p.iter().sum();
                if libm::fabs(total - 1.0) > 1e-9 {
                    return Err(Error::InvalidParameter {
                        name: "prior",
                        value: total,
                        expected: "probabilities that sum to 1 (within 1e-9)",
                    });
                }
                p.iter().map(|&v| libm::log(v)).collect()
            }
        };
        let p = model.num_params();
        Ok(PriorAwareAttack {
            model,
            candidates: candidates.to_vec(),
            log_prior,
            clipping,
            sampling_rate,
            noise_std_of_sum: noise_multiplier * s,
            sum: alloc::vec![0.0; m],
            loglik: alloc::vec![0.0; m],
            per_step: Vec::new(),
            grad: alloc::vec![0.0; p],
            residual: alloc::vec![0.0; p],
            ws: model.workspace(),
            steps: 0,
        })
    }

    /// The number of candidates m.
    pub fn prior_size(&self) -> usize {
        self.candidates.len()
    }

    /// Steps observed so far.
    pub fn steps_observed(&self) -> u64 {
        self.steps
    }

    /// The candidates' scores (one per candidate, in their order) after the steps observed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `steps` if no step was observed; [`Error::Numerical`] if a
    /// score is not finite.
    pub fn scores(&self, score: Score) -> Result<Vec<f64>> {
        if self.steps == 0 {
            return Err(Error::InvalidCount {
                name: "steps",
                value: 0,
                expected: ">= 1 observed step",
            });
        }
        let m = self.candidates.len();
        let out: Vec<f64> = match score {
            Score::Sum => self.sum.clone(),
            Score::LogLikelihood => self
                .loglik
                .iter()
                .zip(&self.log_prior)
                .map(|(l, p)| l + p)
                .collect(),
            Score::Top => {
                let k = top_count(self.sampling_rate, self.steps);
                let mut column = Vec::with_capacity(self.steps as usize);
                (0..m)
                    .map(|c| {
                        column.clear();
                        column.extend(self.per_step.iter().skip(c).step_by(m).copied());
                        column.sort_unstable_by(|a, b| b.total_cmp(a));
                        column.iter().take(k).sum()
                    })
                    .collect()
            }
        };
        if let Some(&bad) = out.iter().find(|v| !v.is_finite()) {
            return Err(Error::Numerical {
                what: "a prior-aware score is not finite",
                value: bad,
            });
        }
        Ok(out)
    }

    /// The attack's guess for `score`: the index of the candidate with the largest score,
    /// ties broken uniformly at random with `coin` (the adversary's own randomness).
    ///
    /// # Errors
    ///
    /// As [`scores`](Self::scores).
    pub fn guess(&self, score: Score, coin: &mut Rng) -> Result<usize> {
        let s = self.scores(score)?;
        let best = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ties: Vec<usize> = (0..s.len()).filter(|&i| s.get(i) == Some(&best)).collect();
        let pick = if ties.len() > 1 {
            coin.below(ties.len() as u64)? as usize
        } else {
            0
        };
        ties.get(pick).copied().ok_or(Error::Numerical {
            what: "no largest score",
            value: best,
        })
    }
}

/// ⌈qT⌉ (at least 1, at most T): the number of steps Alg. 3 keeps. Computed in integers
/// when q·T is within rounding of an integer, so that q = 0.02, T = 1000 keeps 20, not 21.
pub fn top_count(sampling_rate: f64, steps: u64) -> usize {
    let x = sampling_rate * steps as f64;
    let r = libm::round(x);
    let k = if libm::fabs(x - r) <= 1e-9 * x.max(1.0) {
        r
    } else {
        libm::ceil(x)
    };
    let steps = usize::try_from(steps.max(1)).unwrap_or(usize::MAX);
    (k as usize).clamp(1, steps)
}

fn same_candidate(a: &Secret<'_>, b: &Secret<'_>) -> bool {
    match (a, b) {
        (Secret::Example { x: xa, label: la }, Secret::Example { x: xb, label: lb }) => {
            la == lb && xa == xb
        }
        (Secret::Gradient(ga), Secret::Gradient(gb)) => ga == gb,
        _ => false,
    }
}

impl Observer for PriorAwareAttack<'_> {
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        game::observe(self, info)
    }
}

impl Adversary for PriorAwareAttack<'_> {
    type View<'s> = InformedView<'s>;

    fn see(&mut self, view: &InformedView<'_>) -> Result<()> {
        let p = self.model.num_params();
        if view.gradients().released().len() != p || view.known_sum().len() != p {
            return Err(Error::Inconsistent {
                what: "the released gradient's length differs from the model's num_params()",
                value: view.gradients().released().len() as f64,
            });
        }
        view.residual(&mut self.residual);
        let c2 = self.clipping.norm * self.clipping.norm;
        let two_var = 2.0 * self.noise_std_of_sum * self.noise_std_of_sum;
        let q = self.sampling_rate;
        let (ln_q, ln_1mq) = (libm::log(q), libm::log1p(-q));
        for (c, cand) in self.candidates.iter().enumerate() {
            cand.clipped_gradient(
                self.model,
                view.gradients().params(),
                Some(self.clipping),
                &mut self.grad,
                &mut self.ws,
            )?;
            let inner = dot(&self.grad, &self.residual);
            let norm_sq = dot(&self.grad, &self.grad);
            let term = inner / c2;
            self.per_step.push(term);
            if let Some(s) = self.sum.get_mut(c) {
                *s += term;
            }
            let x = (2.0 * inner - norm_sq) / two_var;
            let l = if q == 1.0 {
                x
            } else {
                log_add_exp(ln_1mq, ln_q + x)
            };
            if let Some(s) = self.loglik.get_mut(c) {
                *s += l;
            }
        }
        self.steps += 1;
        Ok(())
    }
}

/// The stream label of the adversary's tie-breaking coin: `Rng::for_trial(seed, ·)` at this
/// index ("TIEBREAK" in ASCII, far beyond any trial count) seeds the coins of all trials.
pub const TIE_BREAK_STREAM: u64 = 0x5449_4542_5245_414B;

/// The adversary's coin for breaking ties between candidates in trial `trial` of a run with
/// seed `master_seed`: [`Rng::for_trial`]`(m, trial)` with m the first output of
/// [`Rng::for_trial`]`(master_seed, `[`TIE_BREAK_STREAM`]`)` (the two-level derivation of the
/// FIL accountant's coordinates). The coin is thus independent of the trial's own stream
/// [`Rng::for_trial`]`(master_seed, trial)`, which draws the prior and the target: an
/// adversary's coin must not share draws with the challenger.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::prior_aware::tie_break_coin;
/// use reconbound::rng::Rng;
/// let (mut coin, mut trial) = (tie_break_coin(7, 3), Rng::for_trial(7, 3));
/// assert_ne!(coin.next_u64(), trial.next_u64());
/// assert_eq!(tie_break_coin(7, 3).next_u64(), tie_break_coin(7, 3).next_u64());
/// ```
pub fn tie_break_coin(master_seed: u64, trial: u64) -> Rng {
    let coins = Rng::for_trial(master_seed, TIE_BREAK_STREAM).next_u64();
    Rng::for_trial(coins, trial)
}

/// `Err` unless the sampling hides whether the secret was drawn: Poisson sampling or the full
/// batch. Under fixed-size or shuffled batches of B from n + 1 examples, D⁻'s part of a batch
/// has B − 1 examples exactly when the secret is in it, so an observer (and
/// [`StepInfo::batch_sum`]) would learn its membership; Hayes et al.'s bound assumes Poisson
/// sampling besides.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `sampling` (value 0) for fixed-size and shuffled batches.
pub fn check_sampling(sampling: Sampling) -> Result<()> {
    if sampling.has_privacy_accounting() {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "sampling",
            value: 0.0,
            expected: "Poisson or the full batch (fixed-size and shuffled batches reveal whether the target was drawn, and the bound assumes Poisson sampling)",
        })
    }
}

/// The success probability of Alg. 2 when the m candidates' clipped gradients are orthogonal,
/// of norm S and the same at every step, with T full-batch steps at noise multiplier σ:
/// P[N(μ, 1) > max of m − 1 independent N(0, 1)], μ = √T/σ.
///
/// # Formula
///
/// ∫ φ(x − μ) Φ(x)^{m−1} dx, by composite Simpson's rule on [μ − 12, μ + 12] with 12,000
/// intervals (outside, the integrand is below φ(12) ≈ 2e-32; Simpson's error is below 1e-12
/// for these integrands).
///
/// # Citations
///
/// Hayes, Mahloujifar, Balle 2023, Sec. 3.3 (the attack) — the integral is the order
/// statistic of m independent Gaussian scores; `docs/DESIGN.md`, "Attacks".
///
/// # Errors
///
/// [`Error::InvalidCount`] `prior_size` if < 2; [`Error::InvalidParameter`] `mu` unless
/// finite and ≥ 0.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::prior_aware::orthogonal_success_probability;
/// // m = 2: P[N(μ, 1) > N(0, 1)] = Φ(μ/√2).
/// let p = orthogonal_success_probability(2, 1.0)?;
/// assert!((p - 0.760249938906205).abs() < 1e-12);
/// assert!((orthogonal_success_probability(10, 0.0)? - 0.1).abs() < 1e-12);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn orthogonal_success_probability(prior_size: u64, mu: f64) -> Result<f64> {
    if prior_size < 2 {
        return Err(Error::InvalidCount {
            name: "prior_size",
            value: prior_size,
            expected: ">= 2",
        });
    }
    if !(mu >= 0.0 && mu.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "mu",
            value: mu,
            expected: "finite and >= 0",
        });
    }
    let k = (prior_size - 1) as f64;
    let f = |x: f64| {
        let lc = normal::log_cdf(x);
        normal::pdf(x - mu) * libm::exp(k * lc)
    };
    const N: usize = 12_000;
    let (a, b) = (mu - 12.0, mu + 12.0);
    let h = (b - a) / N as f64;
    let mut acc = f(a) + f(b);
    for i in 1..N {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        acc += w * f(a + h * i as f64);
    }
    Ok((acc * h / 3.0).clamp(0.0, 1.0))
}

/// The experiment of Hayes et al. App. A: per trial, draw D⁻ and a uniform prior of m
/// candidates from a pool of data, train on D⁻ plus a target drawn uniformly from the prior,
/// and let the prior-aware attack (all three [`Score`]s) guess the target.
#[derive(Clone, Copy, Debug)]
pub struct PriorAwareSetup<'a> {
    /// The model (initialised per trial by [`Sequential::init_params`]).
    pub model: &'a Sequential,
    /// The data D⁻ and the candidates are drawn from, disjointly, without replacement.
    pub pool: &'a Dataset,
    /// |D⁻| (the training set has |D⁻| + 1 examples).
    pub train_size: usize,
    /// m, the number of candidates (κ = 1/m).
    pub prior_size: usize,
    /// The DP-SGD run; its `seed` is ignored (each trial draws its own), `clipping` must be
    /// set and `noise_multiplier` > 0; `batch_size` is B out of |D⁻| + 1 (q = B/(|D⁻| + 1)).
    pub dpsgd: DpSgdConfig,
}

/// What one trial of a [`PriorAwareSetup`] gave. Integers only, so a shard file of outcomes
/// reassembles exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PriorAwareOutcome {
    /// The trial index.
    pub trial: u64,
    /// The target's position in the prior (0..m).
    pub target: u32,
    /// The attack's guess (a position in the prior) for each [`Score`].
    pub guesses: Named<Score, u32, 3>,
    /// In how many steps the target was in the batch (known to the experiment, never to the
    /// adversary).
    pub steps_in_batch: u64,
}

impl PriorAwareOutcome {
    /// `true` if the guess of `score` is the target.
    pub fn success(&self, score: Score) -> bool {
        self.guesses.get(score) == Some(&self.target)
    }
}

impl PriorAwareSetup<'_> {
    /// Checks the set-up (the checks of a trial that do not depend on its draw).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `prior_size` if < 2, `train_size` if 0,
    /// [`Error::InvalidCount`] `pool` if it has fewer than |D⁻| + m examples;
    /// [`Error::Inconsistent`] if the pool does not fit the model; as
    /// [`DpSgdConfig::validate`] and [`check_sampling`]; [`Error::InvalidParameter`]
    /// `noise_multiplier` if 0 and `clip_norm` if clipping is off (the attack and its bound
    /// need both).
    pub fn validate(&self) -> Result<()> {
        if self.prior_size < 2 {
            return Err(Error::InvalidCount {
                name: "prior_size",
                value: self.prior_size as u64,
                expected: ">= 2 candidates",
            });
        }
        if self.train_size == 0 {
            return Err(Error::InvalidCount {
                name: "train_size",
                value: 0,
                expected: ">= 1",
            });
        }
        let need = self.train_size.saturating_add(self.prior_size);
        if self.pool.len() < need {
            return Err(Error::InvalidCount {
                name: "pool",
                value: self.pool.len() as u64,
                expected: ">= train_size + prior_size examples to draw D⁻ and the prior from",
            });
        }
        if self.pool.dim() != self.model.input_len()
            || self.pool.num_classes() > self.model.num_classes()
        {
            return Err(Error::Inconsistent {
                what: "the pool does not fit the model (dimension or classes)",
                value: self.pool.dim() as f64,
            });
        }
        if self.prior_size > u32::MAX as usize {
            return Err(Error::InvalidCount {
                name: "prior_size",
                value: self.prior_size as u64,
                expected: "<= 2^32 - 1",
            });
        }
        self.dpsgd.validate()?;
        check_sampling(self.dpsgd.sampling)?;
        if self.dpsgd.clipping.is_none() {
            return Err(Error::InvalidParameter {
                name: "clip_norm",
                value: f64::NAN,
                expected: "set: the prior-aware attack and its bound need clipped gradients",
            });
        }
        if self.dpsgd.noise_multiplier.is_nan() || self.dpsgd.noise_multiplier <= 0.0 {
            return Err(Error::InvalidParameter {
                name: "noise_multiplier",
                value: self.dpsgd.noise_multiplier,
                expected: "> 0",
            });
        }
        Ok(())
    }

    /// Trial `trial` of a run with seed `master_seed`: a pure function of the two.
    ///
    /// The [`Challenge`] of [`PriorDraw::Uniform`] — from [`Rng::for_trial`]`(master_seed,
    /// trial)`, in this order: |D⁻| + m pool indices without replacement, which m of them
    /// form the prior (the rest, ascending, is D⁻), the target's position, the initialisation
    /// seed, the DP-SGD seed — and the attack sees the training through its
    /// [`InformedView`]. The adversary's
    /// tie-breaking coin is a stream of its own, [`tie_break_coin`]`(master_seed, trial)`,
    /// never drawn from the stream that drew the target.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate), [`DpSgd::with_secret`], [`DpSgd::step`] and
    /// [`PriorAwareAttack::new`] (e.g. two equal candidates drawn from a pool with
    /// duplicates).
    pub fn run_trial(&self, master_seed: u64, trial: u64) -> Result<PriorAwareOutcome> {
        self.validate()?;
        let challenge = Challenge::draw(
            self.pool,
            self.train_size,
            PriorDraw::Uniform {
                size: self.prior_size,
            },
            master_seed,
            trial,
        )?;
        let mut coin = tie_break_coin(master_seed, trial);
        let dminus = challenge.train_set(self.pool)?;
        let candidates = challenge.candidates(self.pool)?;
        let clipping = self.dpsgd.clipping.ok_or(Error::InvalidParameter {
            name: "clip_norm",
            value: f64::NAN,
            expected: "set",
        })?;
        let secret = challenge.secret(self.pool)?;
        let mut trainer = challenge.trainer(self.model, &dminus, &self.dpsgd, secret)?;
        let mut attack = PriorAwareAttack::new(
            self.model,
            &candidates,
            None,
            clipping,
            trainer.sampling_rate(),
            self.dpsgd.noise_multiplier,
        )?;
        let (_, steps_in_batch) =
            challenge.play(self.model, &mut trainer, self.dpsgd.steps, &mut attack)?;
        let guesses = Named::try_from_fn(|score| {
            attack
                .guess(score, &mut coin)
                .map(|g| u32::try_from(g).unwrap_or(u32::MAX))
        })?;
        Ok(PriorAwareOutcome {
            trial,
            target: challenge.target as u32,
            guesses,
            steps_in_batch,
        })
    }
}
