//! From audit trials to an empirical ε: pick one distinguisher's scores, choose how the
//! threshold is paid for, and run an estimator of [`super::epsilon`].
//!
//! The valid ways are the only ways: a threshold is fixed before the trials
//! ([`ThresholdRule::Fixed`]), searched on calibration trials that the estimate never reads
//! ([`ThresholdRule::HeldOut`], split by trial index, so shards and threads split the same
//! way), or searched on all trials with a Bonferroni correction over every candidate
//! ([`ThresholdRule::Bonferroni`]).
//!
//! # Citations
//!
//! Nasr et al. 2021, §III-C, Eqs. 4–5; Nasr et al. 2023 (GDP); `docs/DESIGN.md`, "Audits".

use super::epsilon::{
    bonferroni_candidates, epsilon_at_threshold, epsilon_bonferroni, epsilon_from_counts,
    epsilon_held_out, gdp_epsilon, gdp_from_counts, Counts, Scores, Threshold,
};
use super::run::{AuditOutcome, Distinguisher};
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// How the decision threshold is chosen and paid for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThresholdRule {
    /// Searched on the trials with index < `calibration`; the estimate uses the others.
    HeldOut {
        /// The number of calibration trial indices (from 0).
        calibration: u64,
    },
    /// Searched on all trials, paid with a Bonferroni correction over the 2(N₀ + N₁ − 1)
    /// candidate rules.
    Bonferroni,
    /// Fixed before the trials were run.
    Fixed(Threshold),
}

impl ThresholdRule {
    /// A short name: `held-out`, `bonferroni`, `fixed`.
    pub fn name(&self) -> &'static str {
        match self {
            ThresholdRule::HeldOut { .. } => "held-out",
            ThresholdRule::Bonferroni => "bonferroni",
            ThresholdRule::Fixed(_) => "fixed",
        }
    }
}

/// The estimator of the empirical ε.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimator {
    /// Clopper–Pearson with δ (Nasr et al. 2021, Eqs. 4–5): a (1 − α) lower bound.
    ClopperPearson,
    /// The Gaussian-DP estimate (Nasr et al. 2023): valid only if the trade-off curve is
    /// Gaussian.
    Gdp,
}

impl Estimator {
    /// `cp` or `gdp`.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::ClopperPearson => "cp",
            Estimator::Gdp => "gdp",
        }
    }
}

/// An empirical ε with what it was computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Empirical {
    /// The estimator.
    pub estimator: Estimator,
    /// The threshold rule.
    pub rule: ThresholdRule,
    /// The empirical ε (≥ 0).
    pub epsilon: f64,
    /// μ̂ of the GDP estimate (`None` for Clopper–Pearson).
    pub mu: Option<f64>,
    /// The threshold used.
    pub threshold: Threshold,
    /// The number of candidate rules paid for (1 unless Bonferroni).
    pub candidates: u64,
    /// The counts on the trials the estimate reads.
    pub counts: Counts,
    /// FP̄ and FN̄, the upper confidence limits of the two error rates.
    pub fpr_upper: f64,
    /// See `fpr_upper`.
    pub fnr_upper: f64,
    /// The confidence parameter α (the estimate holds with probability ≥ 1 − α).
    pub alpha: f64,
    /// δ.
    pub delta: f64,
}

/// The estimator and threshold rule that bring an audit of the gradient test
/// ([`Distinguisher::GradientTest`]) closest to the accountant's bound, chosen from the
/// sampling alone, before any trial:
/// - the full batch (`sampling_rate` = 1): the run's trade-off curve is exactly Gaussian
///   (μ = √T/σ), so Nasr et al. 2023's lower confidence bound on μ is valid
///   ([`Estimator::Gdp`]); the threshold is fixed in advance at 0, the equal-prior (Bayes)
///   threshold of the likelihood-ratio score, so every trial is scored (the GDP bound is
///   tightest where both error rates are moderate);
/// - Poisson sampling: Clopper–Pearson (valid for any mechanism) with the threshold held out
///   on the first `trials`/2 trials, as Clopper–Pearson is tightest at a threshold the
///   trials pick.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::evaluate::{gradient_test_plan, Estimator, ThresholdRule};
/// let (e, r) = gradient_test_plan(1.0, 150);
/// assert_eq!(e, Estimator::Gdp);
/// assert!(matches!(r, ThresholdRule::Fixed(t) if t.tau == 0.0));
/// let (e, r) = gradient_test_plan(0.01, 150);
/// assert_eq!((e, r), (Estimator::ClopperPearson, ThresholdRule::HeldOut { calibration: 75 }));
/// ```
pub fn gradient_test_plan(sampling_rate: f64, trials: u64) -> (Estimator, ThresholdRule) {
    if sampling_rate == 1.0 {
        (
            Estimator::Gdp,
            ThresholdRule::Fixed(Threshold::at_least(0.0)),
        )
    } else {
        (
            Estimator::ClopperPearson,
            ThresholdRule::HeldOut {
                calibration: trials / 2,
            },
        )
    }
}

/// The empirical ε of `distinguisher` over `outcomes` (any order) with `estimator` and the
/// threshold `rule`, at confidence 1 − `alpha` and `delta`.
///
/// # Formula
///
/// The scores of each world are collected in trial-index order; then
/// [`epsilon_at_threshold`] (fixed), [`epsilon_held_out`] (held out) or
/// [`epsilon_bonferroni`] (Bonferroni) for Clopper–Pearson, and [`gdp_from_counts`] at the
/// fixed or held-out threshold or [`gdp_epsilon`] (Bonferroni) for GDP.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5; Nasr et al. 2023.
///
/// # Errors
///
/// [`Error::InvalidCount`] `trials` if there are none, or `calibration` if it leaves no
/// calibration or no evaluation trial; [`Error::Inconsistent`] if a trial index repeats;
/// the estimators' errors (`alpha`, `delta`; δ > 0 for GDP).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::evaluate::{empirical_epsilon, Estimator, ThresholdRule};
/// use reconbound::attacks::audit::run::{AuditOutcome, Distinguisher};
/// // 200 trials whose gradient test separates perfectly.
/// let outcomes: Vec<AuditOutcome> = (0..200)
///     .map(|k| AuditOutcome { trial: k, without: [0.0, 0.0, 0.0, -1.0 - k as f64],
///                             with: [0.0, 0.0, 0.0, 1.0 + k as f64], canary_steps: 1 })
///     .collect();
/// let e = empirical_epsilon(&outcomes, Distinguisher::GradientTest, Estimator::ClopperPearson,
///                           ThresholdRule::HeldOut { calibration: 50 }, 0.05, 1e-5)?;
/// assert_eq!(e.counts.negatives, 150);
/// assert!(e.epsilon > 3.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn empirical_epsilon(
    outcomes: &[AuditOutcome],
    distinguisher: Distinguisher,
    estimator: Estimator,
    rule: ThresholdRule,
    alpha: f64,
    delta: f64,
) -> Result<Empirical> {
    if outcomes.is_empty() {
        return Err(Error::InvalidCount {
            name: "trials",
            value: 0,
            expected: ">= 1",
        });
    }
    let mut sorted: Vec<&AuditOutcome> = outcomes.iter().collect();
    sorted.sort_by_key(|o| o.trial);
    if let Some(w) = sorted
        .windows(2)
        .find(|w| matches!(w, [a, b] if a.trial == b.trial))
    {
        return Err(Error::Inconsistent {
            what: "a trial index appears twice",
            value: w.first().map_or(0.0, |o| o.trial as f64),
        });
    }
    let k = distinguisher.index();
    let without: Vec<f64> = sorted
        .iter()
        .map(|o| o.without.get(k).copied().unwrap_or(f64::NAN))
        .collect();
    let with: Vec<f64> = sorted
        .iter()
        .map(|o| o.with.get(k).copied().unwrap_or(f64::NAN))
        .collect();
    let mut calibrating = 0;
    if let ThresholdRule::HeldOut { calibration } = rule {
        calibrating = sorted.iter().filter(|o| o.trial < calibration).count();
        if calibrating == 0 || calibrating == sorted.len() {
            return Err(Error::InvalidCount {
                name: "calibration",
                value: calibration,
                expected: "a trial index that leaves calibration trials below it and evaluation trials from it",
            });
        }
    }
    empirical_epsilon_of_scores(
        Scores {
            without: &without,
            with: &with,
        },
        [calibrating, calibrating],
        estimator,
        rule,
        alpha,
        delta,
    )
}

/// The empirical ε of the scores of the two worlds, as [`empirical_epsilon`] computes it
/// from audit trials: the front door for scores from any implementation (the command line's
/// `estimate`). `scores.without` are the trials without the canary (world 0, "out"),
/// `scores.with` those with it (world 1, "in"), each in trial order; higher means "in".
///
/// With [`ThresholdRule::HeldOut`], the first `calibrating[0]` scores of `without` and the
/// first `calibrating[1]` of `with` calibrate the threshold and the rest give the counts
/// (for audit trials 0, 1, …: `calibrating` = [N, N] with N = `calibration`); the rule's
/// `calibration` is reported as given. The other rules ignore `calibrating` and read every
/// score.
///
/// # Formula
///
/// As [`empirical_epsilon`]: [`epsilon_at_threshold`], [`epsilon_held_out`] or
/// [`epsilon_bonferroni`] for Clopper–Pearson, [`gdp_from_counts`] at the fixed or held-out
/// threshold or [`gdp_epsilon`] (Bonferroni) for GDP.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5; Nasr et al. 2023.
///
/// # Errors
///
/// [`Error::InvalidCount`] `calibration` if, with a held-out rule, a world has no
/// calibration or no evaluation score; the estimators' errors (no scores in a world,
/// scores not finite, `alpha`, `delta`; δ > 0 for GDP).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::Scores;
/// use reconbound::attacks::audit::evaluate::{empirical_epsilon_of_scores, Estimator, ThresholdRule};
/// let without: Vec<f64> = (0..200).map(|k| -1.0 - k as f64).collect();
/// let with: Vec<f64> = (0..150).map(|k| 1.0 + k as f64).collect();
/// let e = empirical_epsilon_of_scores(Scores { without: &without, with: &with }, [50, 40],
///     Estimator::ClopperPearson, ThresholdRule::HeldOut { calibration: 50 }, 0.05, 1e-5)?;
/// assert_eq!((e.counts.negatives, e.counts.positives), (150, 110));
/// assert_eq!((e.counts.false_positives, e.counts.false_negatives), (0, 0));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn empirical_epsilon_of_scores(
    scores: Scores<'_>,
    calibrating: [usize; 2],
    estimator: Estimator,
    rule: ThresholdRule,
    alpha: f64,
    delta: f64,
) -> Result<Empirical> {
    let all = scores;
    let (cp, threshold, candidates) = match rule {
        ThresholdRule::Fixed(t) => {
            let e = epsilon_at_threshold(all, t, alpha, delta)?;
            (e.estimate, e.threshold, e.candidates)
        }
        ThresholdRule::Bonferroni => {
            if estimator == Estimator::Gdp {
                let g = gdp_epsilon(all, alpha, delta)?;
                return Ok(Empirical {
                    estimator,
                    rule,
                    epsilon: g.estimate.epsilon,
                    mu: Some(g.estimate.mu),
                    threshold: g.threshold,
                    candidates: g.candidates,
                    counts: g.estimate.counts,
                    fpr_upper: g.estimate.fpr_upper,
                    fnr_upper: g.estimate.fnr_upper,
                    alpha,
                    delta,
                });
            }
            let e = epsilon_bonferroni(all, alpha, delta)?;
            (e.estimate, e.threshold, e.candidates)
        }
        ThresholdRule::HeldOut { calibration } => {
            let [n0, n1] = calibrating;
            let (Some((c0, e0)), Some((c1, e1))) = (parts(all.without, n0), parts(all.with, n1))
            else {
                return Err(held_out_error(calibration));
            };
            let e = epsilon_held_out(
                Scores {
                    without: c0,
                    with: c1,
                },
                Scores {
                    without: e0,
                    with: e1,
                },
                alpha,
                delta,
            )?;
            (e.estimate, e.threshold, e.candidates)
        }
    };
    match estimator {
        Estimator::ClopperPearson => Ok(Empirical {
            estimator,
            rule,
            epsilon: cp.epsilon,
            mu: None,
            threshold,
            candidates,
            counts: cp.counts,
            fpr_upper: cp.fpr_upper,
            fnr_upper: cp.fnr_upper,
            alpha,
            delta,
        }),
        Estimator::Gdp => {
            let g = gdp_from_counts(cp.counts, alpha, delta)?;
            Ok(Empirical {
                estimator,
                rule,
                epsilon: g.epsilon,
                mu: Some(g.mu),
                threshold,
                candidates,
                counts: g.counts,
                fpr_upper: g.fpr_upper,
                fnr_upper: g.fnr_upper,
                alpha,
                delta,
            })
        }
    }
}

/// `x` split after its first `n` entries, if both parts are non-empty.
fn parts(x: &[f64], n: usize) -> Option<(&[f64], &[f64])> {
    let c = x.get(..n).filter(|c| !c.is_empty());
    let e = x.get(n..).filter(|e| !e.is_empty());
    c.zip(e)
}

fn held_out_error(calibration: u64) -> Error {
    Error::InvalidCount {
        name: "calibration",
        value: calibration,
        expected: "a split that leaves calibration and evaluation scores in both worlds",
    }
}

/// The largest empirical ε that `negatives` + `positives` scored trials can give: every one
/// classified correctly, at the level per rate of `rule`: α/2, or α/(2K) for
/// [`ThresholdRule::Bonferroni`] with K = [`bonferroni_candidates`]`(negatives, positives)`
/// (a Bonferroni search reads every trial). Give the trials the estimate reads: for a
/// held-out rule, the evaluation trials only. What `audit` and `estimate` print as "the most
/// the trials could show".
///
/// # Errors
///
/// The estimators' errors (`alpha`, `delta`; no trials).
pub fn empirical_epsilon_max(
    estimator: Estimator,
    rule: ThresholdRule,
    negatives: u64,
    positives: u64,
    alpha: f64,
    delta: f64,
) -> Result<f64> {
    let alpha = match rule {
        ThresholdRule::Bonferroni => alpha / bonferroni_candidates(negatives, positives) as f64,
        _ => alpha,
    };
    let perfect = Counts {
        negatives,
        false_positives: 0,
        positives,
        false_negatives: 0,
    };
    Ok(match estimator {
        Estimator::ClopperPearson => epsilon_from_counts(perfect, alpha, delta)?.epsilon,
        Estimator::Gdp => gdp_from_counts(perfect, alpha, delta)?.epsilon,
    })
}
