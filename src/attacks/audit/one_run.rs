//! The one-run audit (Steinke, Nasr, Jagielski 2023): m canaries, each included in one
//! training independently with probability ½, scored by the distinguishers of
//! [`super::run`]; the auditor guesses "in" for the k₊ highest scores and "out" for the k₋
//! lowest, and the number of correct guesses gives a lower bound on ε
//! ([`one_run_epsilon`]).
//!
//! # The training
//!
//! D plus m secrets ([`DpSgd::with_secrets`]): canary i where S_i = 1, a zero gradient where
//! S_i = 0, so that the population is n + m and every index is sampled at q = B/(n + m)
//! whatever S (a zero gradient changes nothing). The S_i and the training seed come from
//! `Rng::for_trial(seed, 0)`. The accountant's ε is that of one example at rate q: the
//! guarantee the audit tests holds for each canary, the others being part of the data.
//!
//! Canaries: for crafters 1–2, the pool examples `pool_index` … `pool_index + m − 1` (as they
//! are, or with the label θ₀ finds least likely); for crafters 4–5, m gradient canaries on
//! disjoint least-used coordinates (orthogonal; crafter 5 relabels D and sets the learning
//! rate to 0). ClipBKD crafts one direction and the adaptive canary is re-crafted every step:
//! neither is run here.
//!
//! # Scores
//!
//! Per canary, the four scores of [`Distinguisher::ALL`] as in [`super::run`], from the same
//! adversary's view ([`AuditConfig::view`]): the residual r_t = B·ḡ_t − K_t with K_t the
//! known part of D's sum — the sum over D's actual batch (the trainer's `batch_sum`, which
//! holds no canary; [`BatchView::Informed`], the default) or its expectation
//! ([`BatchView::ExpectedBatch`]). The other canaries' gradients are not known to the
//! adversary (their S_j are secret) and stay in r_t; gradient canaries are orthogonal, so
//! they do not disturb each other's Z_t.
//!
//! # Citations
//!
//! Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023;
//! Nasr et al. 2021, §IV (crafters and distinguishers).

use super::canary::{gradient_canaries, least_likely_label, relabel_by_prediction, Canary};
use super::canary::{CanaryWorkspace, Crafter};
use super::epsilon::{one_run_epsilon, one_run_guesses, OneRunCounts};
use super::run::{informed, trainer_config, AuditConfig, BatchView, Distinguisher};
use super::run::{ExpectedPart, InformedPart, KnownPart};
use super::run::{Tally, WorldScores};
use crate::accounting::fil::fisher::dot;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::nn::Sequential;
use crate::rng::Rng;
use crate::train::dpsgd::{Clipping, DpSgd, DpSgdConfig, Secret};
use crate::train::sampling::Sampling;
use alloc::vec::Vec;

/// One training of a one-run audit: which canaries were included (for scoring the guesses
/// afterwards, never for the scores) and every canary's scores.
#[derive(Clone, Debug, PartialEq)]
pub struct OneRunOutcome {
    /// S_i: canary i was in the training set.
    pub included: Vec<bool>,
    /// Canary i's scores, indexed by [`Distinguisher::index`]; higher means "in".
    pub scores: Vec<WorldScores>,
}

/// The estimate of a one-run audit for one distinguisher.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneRunEstimate {
    /// m, r = k₊ + k₋ and the correct guesses v.
    pub counts: OneRunCounts,
    /// The lower bound on ε (confidence 1 − α).
    pub epsilon: f64,
}

/// A one-run audit of one crafter: m canaries crafted once, θ₀ and the trainer's
/// configuration.
#[derive(Clone, Debug)]
pub struct OneRunAudit<'a> {
    model: &'a Sequential,
    canaries: Vec<Canary>,
    data: Dataset,
    dpsgd: DpSgdConfig,
    clipping: Clipping,
    init: Vec<f64>,
    zero: Vec<f64>,
    view: BatchView,
}

impl<'a> OneRunAudit<'a> {
    /// Crafts `canaries` canaries of `crafter` (module docs) for `model` on `data`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `crafter` for ClipBKD and the adaptive canary;
    /// [`Error::InvalidCount`] `canaries` = 0, or more than the pool holds from `pool_index`
    /// (crafters 1–2) or than fit on disjoint coordinates (crafters 4–5); as
    /// [`super::run::Audit::new`].
    pub fn new(
        model: &'a Sequential,
        crafter: Crafter,
        config: &AuditConfig,
        canaries: usize,
        data: &Dataset,
        pool: &Dataset,
    ) -> Result<Self> {
        let (dpsgd, clipping) = trainer_config(crafter, config)?;
        if canaries == 0 {
            return Err(Error::InvalidCount {
                name: "canaries",
                value: 0,
                expected: ">= 1",
            });
        }
        let init = model.init_params(config.init_seed);
        let mut ws = model.workspace();
        let mut pool_canary = |i: usize, mislabel: bool| -> Result<Canary> {
            let index = config.pool_index.saturating_add(i);
            let (x, y) = pool.example(index).map_err(|_| Error::InvalidCount {
                name: "canaries",
                value: canaries as u64,
                expected: "at most the pool's size minus pool_index (one pool example each)",
            })?;
            let label = if mislabel {
                least_likely_label(model, &init, x, &mut ws)?
            } else {
                y
            };
            Ok(Canary::Example {
                x: x.to_vec(),
                label,
            })
        };
        let (crafted, data) = match crafter {
            Crafter::Example | Crafter::Mislabelled => {
                let mislabel = crafter == Crafter::Mislabelled;
                let list = (0..canaries)
                    .map(|i| pool_canary(i, mislabel))
                    .collect::<Result<Vec<_>>>()?;
                (list, data.clone())
            }
            Crafter::Gradient(shape) => {
                let list = gradient_canaries(model, &init, clipping, data, shape, canaries)?;
                (
                    list.into_iter().map(Canary::Gradient).collect(),
                    data.clone(),
                )
            }
            Crafter::MaliciousDataset(shape) => {
                let relabelled = relabel_by_prediction(model, &init, data)?;
                let list = gradient_canaries(model, &init, clipping, &relabelled, shape, canaries)?;
                (list.into_iter().map(Canary::Gradient).collect(), relabelled)
            }
            Crafter::ClipBkd | Crafter::Adaptive | Crafter::OpposedDataset => {
                return Err(Error::InvalidParameter {
                    name: "crafter",
                    value: f64::from(crafter.number()),
                    expected: "example, mislabelled, gradient or dataset-dirac/-spread canaries (ClipBKD and the opposed dataset craft one canary; the adaptive canary is re-crafted every step)",
                });
            }
        };
        if data.dim() != model.input_len() {
            return Err(Error::Inconsistent {
                what: "the data's dimension must equal the model's input_len()",
                value: data.dim() as f64,
            });
        }
        let zero = alloc::vec![0.0; model.num_params()];
        let audit = OneRunAudit {
            model,
            canaries: crafted,
            data,
            dpsgd,
            clipping,
            init,
            zero,
            view: config.view,
        };
        // The trainer must accept the configuration before the run.
        let secrets: Vec<Secret<'_>> = audit
            .canaries
            .iter()
            .map(|_| Secret::Gradient(&audit.zero))
            .collect();
        DpSgd::with_secrets(model, &audit.data, &audit.dpsgd, &secrets)?;
        Ok(audit)
    }

    /// The canaries.
    pub fn canaries(&self) -> &[Canary] {
        &self.canaries
    }

    /// The trainer's configuration (learning rate 0 for crafter 5).
    pub fn dpsgd(&self) -> &DpSgdConfig {
        &self.dpsgd
    }

    /// The scores' view of D's batches.
    pub fn view(&self) -> BatchView {
        self.view
    }

    /// The sampling rate of each canary and example: B/(n + m), 1 for the full batch.
    pub fn sampling_rate(&self) -> f64 {
        match self.dpsgd.sampling {
            Sampling::FullBatch => 1.0,
            _ => self.dpsgd.batch_size as f64 / (self.data.len() + self.canaries.len()) as f64,
        }
    }

    /// The one training of seed `seed`: S drawn, trained, every canary scored.
    ///
    /// # Errors
    ///
    /// The trainer's and the model's errors; [`Error::Numerical`] if a score is not finite.
    pub fn run(&self, seed: u64) -> Result<OneRunOutcome> {
        let model = self.model;
        let p = model.num_params();
        let mut rng = Rng::for_trial(seed, 0);
        let mut included = Vec::with_capacity(self.canaries.len());
        for _ in &self.canaries {
            included.push(rng.bernoulli(0.5)?);
        }
        let config = DpSgdConfig {
            seed: rng.next_u64(),
            ..self.dpsgd
        };
        let secrets: Vec<Secret<'_>> = self
            .canaries
            .iter()
            .zip(&included)
            .map(|(c, &s)| {
                if s {
                    c.secret(&[])
                } else {
                    Secret::Gradient(&self.zero)
                }
            })
            .collect();
        if informed(self.view, self.dpsgd.sampling) {
            self.train_and_score(&config, &secrets, included, |_| InformedPart::new(p))
        } else {
            self.train_and_score(&config, &secrets, included, |q| {
                ExpectedPart::new(model, &self.data, q, self.clipping)
            })
        }
    }

    /// [`run`](Self::run)'s training and scores, Distinguisher 3's adversary `part(q)` of
    /// the threat model of [`view`](Self::view).
    fn train_and_score<K: KnownPart>(
        &self,
        config: &DpSgdConfig,
        secrets: &[Secret<'_>],
        included: Vec<bool>,
        part: impl FnOnce(f64) -> K,
    ) -> Result<OneRunOutcome> {
        let model = self.model;
        let p = model.num_params();
        let mut trainer = DpSgd::with_secrets(model, &self.data, config, secrets)?;
        let q = trainer.sampling_rate();
        let s = config.noise_std_of_sum()?;
        let mut view = part(q);
        let mut ws = model.workspace();
        let mut cws = CanaryWorkspace::new(model);
        let mut params = self.init.clone();
        let mut before = alloc::vec![0.0; p];
        let mut c = alloc::vec![0.0; p];
        let mut tallies = Vec::with_capacity(self.canaries.len());
        for canary in &self.canaries {
            tallies.push(Tally::new(canary.loss(model, &params, &mut cws)?));
        }
        // A gradient canary's clipped gradient is the same at every step: c̃ = f·c (clipping
        // scales radially), so Z_t needs only f·⟨r_t, c⟩ and a = ‖c̃‖², found once here.
        let mut fixed = Vec::with_capacity(self.canaries.len());
        for canary in &self.canaries {
            fixed.push(match canary {
                Canary::Gradient(g) => {
                    canary.secret(&[]).clipped_gradient(
                        model,
                        &params,
                        Some(self.clipping),
                        &mut c,
                        &mut ws,
                    )?;
                    let gg = dot(g, g);
                    let f = if gg > 0.0 { dot(&c, g) / gg } else { 0.0 };
                    Some((f, dot(&c, &c)))
                }
                _ => None,
            });
        }
        for _ in 0..config.steps {
            before.copy_from_slice(&params);
            trainer.step(&mut params, &mut view)?;
            for ((canary, tally), fixed) in self.canaries.iter().zip(tallies.iter_mut()).zip(&fixed)
            {
                match (canary, fixed) {
                    (Canary::Gradient(g), Some((f, a))) => {
                        tally.add_gradient_test(f * view.residual_dot(g), *a, q, s);
                    }
                    _ => {
                        canary.secret(&[]).clipped_gradient(
                            model,
                            &before,
                            Some(self.clipping),
                            &mut c,
                            &mut ws,
                        )?;
                        tally.add_gradient_test(view.residual_dot(&c), dot(&c, &c), q, s);
                    }
                }
                tally.add_loss(canary.loss(model, &params, &mut cws)?);
            }
        }
        let mut scores = Vec::with_capacity(self.canaries.len());
        for (canary, tally) in self.canaries.iter().zip(&tallies) {
            scores.push(tally.finish(canary.loss(model, &params, &mut cws)?)?);
        }
        Ok(OneRunOutcome { included, scores })
    }
}

/// The one-run estimate of `distinguisher` on `outcome`: guess "in" for the `guesses_in`
/// highest scores and "out" for the `guesses_out` lowest ([`one_run_guesses`]), fixed in
/// advance, then [`one_run_epsilon`] at confidence 1 − `alpha` and `delta`.
///
/// # Formula
///
/// v = correct guesses among r = k₊ + k₋; ε = sup{ε : p(ε) ≤ α} (Steinke et al.).
///
/// # Citations
///
/// Steinke, Nasr, Jagielski 2023.
///
/// # Errors
///
/// As [`one_run_guesses`] and [`one_run_epsilon`] (e.g. 2mδ ≥ α, or no guess).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::one_run::{one_run_estimate, OneRunOutcome};
/// use reconbound::attacks::audit::run::Distinguisher;
/// // 1,000 canaries whose gradient test separates perfectly; 100 guesses each way.
/// let included: Vec<bool> = (0..1000).map(|i| i % 2 == 0).collect();
/// let scores = included.iter().map(|&s| [0.0, 0.0, 0.0, if s { 1.0 } else { -1.0 }]).collect();
/// let outcome = OneRunOutcome { included, scores };
/// let e = one_run_estimate(&outcome, Distinguisher::GradientTest, 50, 50, 0.05, 0.0)?;
/// assert_eq!(e.counts.correct, 100);
/// assert!((e.epsilon - 3.492965).abs() < 1e-6); // Steinke et al.: 100 of 100 correct
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_estimate(
    outcome: &OneRunOutcome,
    distinguisher: Distinguisher,
    guesses_in: u64,
    guesses_out: u64,
    alpha: f64,
    delta: f64,
) -> Result<OneRunEstimate> {
    let k = distinguisher.index();
    let scores: Vec<f64> = outcome
        .scores
        .iter()
        .map(|s| s.get(k).copied().unwrap_or(f64::NAN))
        .collect();
    let counts = one_run_guesses(&scores, &outcome.included, guesses_in, guesses_out)?;
    let epsilon = one_run_epsilon(counts, alpha, delta, 1)?;
    Ok(OneRunEstimate { counts, epsilon })
}
