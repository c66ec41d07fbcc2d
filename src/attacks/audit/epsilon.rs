//! Empirical ε: statistical lower bounds on the ε of a training algorithm from what an
//! audit's distinguisher got right.
//!
//! # Conventions
//!
//! - A trial is run in one of two worlds: **with** the canary (the *positive* world, N₁
//!   trials) or **without** it (the *negative* world, N₀ trials). A false positive is a guess
//!   "in" in a negative trial, a false negative a guess "out" in a positive trial (Nasr et
//!   al. 2021 define them the other way round; Eq. 4 is symmetric in the two, so nothing
//!   changes).
//! - A distinguisher outputs one `f64` score per trial. The decision rule is a
//!   [`Threshold`]: by default ([`Direction::AtLeast`]) **score ≥ τ guesses "in"**, so larger
//!   scores should mean "the canary was there"; [`Direction::Below`] (score < τ guesses
//!   "in") is the inverted distinguisher, the exact complement of the same τ.
//! - `alpha` is the failure probability of the whole statement: with probability ≥ 1 − α
//!   over the trials, the returned ε is at most the true ε of the algorithm at `delta`.
//!
//! # Choosing the threshold
//!
//! A threshold picked *after* looking at the trials it is evaluated on inflates ε (tf-privacy
//! and Nasr et al. pick after the fact). The API offers exactly three valid ways and no
//! fourth:
//!
//! 1. [`epsilon_at_threshold`]: the threshold was fixed before these trials were seen (from
//!    other runs, or a theory). Each rate is bounded at α/2.
//! 2. [`epsilon_held_out`]: the threshold is searched on *calibration* trials and ε is
//!    computed on separate *evaluation* trials, which the search never reads. Each rate is
//!    bounded at α/2 on the evaluation trials. The split must be decided before the scores
//!    are seen (e.g. by trial index).
//! 3. [`epsilon_bonferroni`] (and [`gdp_epsilon`]): the threshold is searched on the same
//!    trials, every candidate in both directions, and the search is paid for: with
//!    N = N₀ + N₁ trials there are at most K = 2(N − 1) non-trivial candidate rules
//!    ([`bonferroni_candidates`]: N − 1 thresholds between distinct scores, two directions),
//!    and each rate of each candidate is bounded at α/(2K).
//!
//! [`epsilon_from_counts`] takes the four counts of a rule fixed in advance.
//!
//! Why (3) is valid although the candidates depend on the data: for one direction the false
//! positive count FP(τ) and the true rate p(τ) are both monotone in τ, so "some τ has
//! p(τ) > FP̄(FP(τ))" happens only if, for some k ∈ {0, …, N₀ − 1}, FP ≤ k at the edge t_k
//! of the (deterministic) set {τ : p(τ) > FP̄(k)}, where the true rate is ≥ FP̄(k) (at an
//! open edge, just inside it) — probability ≤ a each, by the definition of the
//! Clopper–Pearson limit at level a. So all thresholds of one direction fail together with
//! probability ≤ N₀·a for FP (N₁·a for FN); both directions ≤ 2N·a = αN/(2(N − 1)) ≤ α at
//! a = α/(2K). K does not depend on ties or on the observed scores.
//!
//! # Estimators
//!
//! - Clopper–Pearson with δ ([`epsilon_from_counts`] and the three above): a (1 − α) lower
//!   confidence bound on ε, valid for every mechanism (Nasr et al. 2021, Eqs. 4–5).
//! - Gaussian DP ([`gdp_epsilon`], [`gdp_from_counts`]): a lower confidence bound μ̂ on the
//!   μ of a μ-GDP mechanism, turned into ε at δ through the Gaussian trade-off curve. The ε
//!   is an **estimate**: it is a lower bound only if the mechanism's trade-off curve is
//!   Gaussian (Nasr et al. 2023).
//! - One run ([`one_run_epsilon`], [`one_run_p_value`], [`one_run_guesses`]): m canaries
//!   included independently with probability ½ in a single training run (Steinke, Nasr,
//!   Jagielski 2023).
//! - One run against a trade-off curve ([`one_run_fdp_epsilon`], [`one_run_fdp_mu`],
//!   [`one_run_fdp_refutes`], [`one_run_fdp_curve`], re-exported from
//!   [`super::one_run_fdp`]): the same counts tested against an f-DP claim (Mahloujifar,
//!   Melis & Chaudhuri 2025).

use crate::accounting::gaussian::analytic_epsilon;
use crate::error::{check_open_unit, invalid, Error, Result};
use crate::math::beta::{beta_inc, beta_inc_complement, clopper_pearson};
use crate::math::normal;
use crate::math::root::brent_bracket;
use crate::math::special::{ln_binomial_unchecked, log_add_exp};
use alloc::vec::Vec;

use super::one_run_counts::check_one_run;
pub use super::one_run_counts::OneRunCounts;
pub use super::one_run_fdp::{
    one_run_fdp_curve, one_run_fdp_epsilon, one_run_fdp_mu, one_run_fdp_p_value,
    one_run_fdp_refutes, CurveClaim, FdpVerdict,
};

/// The outcome counts of a decision rule over N₀ negative and N₁ positive trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// N₀: trials in the world without the canary (≥ 1).
    pub negatives: u64,
    /// FP: negative trials guessed "in" (≤ N₀).
    pub false_positives: u64,
    /// N₁: trials in the world with the canary (≥ 1).
    pub positives: u64,
    /// FN: positive trials guessed "out" (≤ N₁).
    pub false_negatives: u64,
}

/// A Clopper–Pearson empirical ε with what it was computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpEpsilon {
    /// The lower bound on ε (≥ 0).
    pub epsilon: f64,
    /// The counts it was computed from.
    pub counts: Counts,
    /// FP̄: the one-sided Clopper–Pearson upper limit of the false positive rate.
    pub fpr_upper: f64,
    /// FN̄: the one-sided Clopper–Pearson upper limit of the false negative rate.
    pub fnr_upper: f64,
    /// The one-sided level of each limit: α/2, or α/(2K) after a Bonferroni search.
    pub alpha_per_rate: f64,
}

/// Which side of the threshold guesses "in".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// score ≥ τ guesses "in" (the default: larger scores mean "the canary was there").
    AtLeast,
    /// score < τ guesses "in" (the inverted distinguisher).
    Below,
}

/// A decision rule on scores: a threshold τ and the side that guesses "in".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold {
    /// τ (±∞ allowed: the rules that guess all "in" or all "out").
    pub tau: f64,
    /// Which side of τ guesses "in".
    pub direction: Direction,
}

impl Threshold {
    /// The rule "score ≥ τ guesses in".
    pub fn at_least(tau: f64) -> Self {
        Threshold {
            tau,
            direction: Direction::AtLeast,
        }
    }

    /// `true` if the rule guesses "in" for `score`.
    pub fn guesses_in(&self, score: f64) -> bool {
        match self.direction {
            Direction::AtLeast => score >= self.tau,
            Direction::Below => score < self.tau,
        }
    }
}

/// The scores of an audit's trials, one per trial, split by world.
#[derive(Clone, Copy, Debug)]
pub struct Scores<'a> {
    /// Scores of the trials without the canary (negatives; N₀ = length).
    pub without: &'a [f64],
    /// Scores of the trials with the canary (positives; N₁ = length).
    pub with: &'a [f64],
}

/// An estimate with the threshold it was computed at and the number of candidate rules it
/// was chosen from (1 when the threshold was fixed before the trials were seen).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtThreshold<T> {
    /// The estimate.
    pub estimate: T,
    /// The decision rule.
    pub threshold: Threshold,
    /// K: the number of candidate rules paid for (Bonferroni), 1 if none.
    pub candidates: u64,
}

/// A Gaussian-DP estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GdpEstimate {
    /// μ̂ ≥ 0: a lower confidence bound on μ if the mechanism is μ-GDP.
    pub mu: f64,
    /// The ε at `delta` of a μ̂-GDP mechanism (0 when μ̂ = 0) — an estimate.
    pub epsilon: f64,
    /// The counts μ̂ was computed from.
    pub counts: Counts,
    /// FP̄: the one-sided Clopper–Pearson upper limit of the false positive rate.
    pub fpr_upper: f64,
    /// FN̄: the one-sided Clopper–Pearson upper limit of the false negative rate.
    pub fnr_upper: f64,
    /// The one-sided level of each limit.
    pub alpha_per_rate: f64,
}

// ---------------------------------------------------------------------------------------
// Validation

fn check_alpha(alpha: f64) -> Result<f64> {
    check_open_unit("alpha", alpha)
}

/// δ ∈ [0, 1).
fn check_delta(delta: f64) -> Result<f64> {
    if (0.0..1.0).contains(&delta) {
        Ok(delta)
    } else {
        invalid("delta", delta, "in [0, 1)")
    }
}

fn check_counts(c: Counts) -> Result<Counts> {
    let bad = |name: &'static str, value: u64, expected: &'static str| {
        Err(Error::InvalidCount {
            name,
            value,
            expected,
        })
    };
    if c.negatives == 0 {
        return bad("negatives", 0, ">= 1");
    }
    if c.false_positives > c.negatives {
        return bad("false_positives", c.false_positives, "<= negatives");
    }
    if c.positives == 0 {
        return bad("positives", 0, ">= 1");
    }
    if c.false_negatives > c.positives {
        return bad("false_negatives", c.false_negatives, "<= positives");
    }
    Ok(c)
}

/// Scores of one world: at least one, all finite. `name` names the slice in errors.
fn check_scores(name: &'static str, scores: &[f64]) -> Result<()> {
    if scores.is_empty() {
        return Err(Error::InvalidCount {
            name,
            value: 0,
            expected: "at least one score",
        });
    }
    match scores.iter().find(|s| !s.is_finite()) {
        Some(&s) => invalid(name, s, "finite (every score)"),
        None => Ok(()),
    }
}

fn check_world_scores(s: Scores<'_>, without: &'static str, with: &'static str) -> Result<()> {
    check_scores(without, s.without)?;
    check_scores(with, s.with)
}

// ---------------------------------------------------------------------------------------
// Clopper–Pearson with δ

/// ln(num/den) for den > 0, −∞ when num ≤ 0 (that inequality gives no bound).
fn ln_ratio(num: f64, den: f64) -> f64 {
    if num > 0.0 {
        libm::log(num) - libm::log(den)
    } else {
        f64::NEG_INFINITY
    }
}

/// Eq. 5 from the upper limits, clamped at 0.
fn epsilon_from_limits(fpr_upper: f64, fnr_upper: f64, delta: f64) -> Result<f64> {
    if !(fpr_upper > 0.0 && fnr_upper > 0.0) {
        // Not reachable with Clopper–Pearson upper limits (> 0 for every count); refuse
        // rather than return an infinite ε.
        return Err(Error::Numerical {
            what: "empirical epsilon: an upper rate limit is 0",
            value: fpr_upper.min(fnr_upper),
        });
    }
    let a = ln_ratio(1.0 - delta - fpr_upper, fnr_upper);
    let b = ln_ratio(1.0 - delta - fnr_upper, fpr_upper);
    Ok(a.max(b).max(0.0))
}

/// Upper Clopper–Pearson limits of FPR and FNR at one-sided level `a` (validated counts).
fn rate_limits(c: Counts, a: f64) -> Result<(f64, f64)> {
    Ok((
        clopper_pearson(c.false_positives, c.negatives, a)?.upper,
        clopper_pearson(c.false_negatives, c.positives, a)?.upper,
    ))
}

fn cp_epsilon_at(c: Counts, a: f64, delta: f64) -> Result<CpEpsilon> {
    let (fpr_upper, fnr_upper) = rate_limits(c, a)?;
    Ok(CpEpsilon {
        epsilon: epsilon_from_limits(fpr_upper, fnr_upper, delta)?,
        counts: c,
        fpr_upper,
        fnr_upper,
        alpha_per_rate: a,
    })
}

/// Empirical ε of a decision rule fixed before the trials were run, from its counts.
///
/// # Formula
///
/// ε = max(ln((1 − δ − FP̄)/FN̄), ln((1 − δ − FN̄)/FP̄), 0), where FP̄ and FN̄ are the
/// one-sided Clopper–Pearson upper limits of FP/N₀ and FN/N₁, each at level α/2 (so both
/// hold together with probability ≥ 1 − α); a term whose numerator is ≤ 0 gives no bound.
/// An (ε, δ)-DP mechanism has FPR + e^ε FNR ≤ 1 − δ and FNR + e^ε FPR ≤ 1 − δ (Kairouz et
/// al. 2015), so with probability ≥ 1 − α the result is at most its ε. Limits are
/// [`clopper_pearson`]'s, widened outwards for rounding, so ε errs low.
///
/// Assumes the trials are independent, each a fresh training run in its world, and that
/// the rule was fixed independently of them (otherwise use [`epsilon_held_out`] or
/// [`epsilon_bonferroni`]).
///
/// # Citations
///
/// Nasr, Song, Thakurta, Papernot, Carlini, "Adversary instantiation: lower bounds for
/// differentially private machine learning", IEEE S&P 2021, §III-C, Eqs. 4–5
/// (nasr2021-adversary-instantiation.txt); Clopper & Pearson 1934.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `alpha` ∉ (0, 1), `delta` ∉ [0, 1);
/// [`Error::InvalidCount`] `negatives`/`positives` = 0, `false_positives` > `negatives`,
/// `false_negatives` > `positives`, or a count ≥ 1e7 (from [`clopper_pearson`]).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{epsilon_from_counts, Counts};
/// // Nasr et al.: 1000 trials per world, all correct, two-sided 95 %, δ = 1e-5 → 5.6006.
/// let c = Counts { negatives: 1000, false_positives: 0, positives: 1000, false_negatives: 0 };
/// let e = epsilon_from_counts(c, 0.05, 1e-5)?;
/// assert!((e.epsilon - 5.6006).abs() < 5e-5);
/// assert_eq!(e.alpha_per_rate, 0.025);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn epsilon_from_counts(counts: Counts, alpha: f64, delta: f64) -> Result<CpEpsilon> {
    let alpha = check_alpha(alpha)?;
    let delta = check_delta(delta)?;
    cp_epsilon_at(check_counts(counts)?, alpha / 2.0, delta)
}

/// The counts of `threshold` on `scores` (validated scores).
fn counts_at(scores: Scores<'_>, threshold: Threshold) -> Counts {
    let ins = |s: &[f64]| s.iter().filter(|&&x| threshold.guesses_in(x)).count() as u64;
    let (n0, n1) = (scores.without.len() as u64, scores.with.len() as u64);
    Counts {
        negatives: n0,
        false_positives: ins(scores.without),
        positives: n1,
        false_negatives: n1 - ins(scores.with),
    }
}

/// (a) Empirical ε at a threshold **chosen before these trials were seen**.
///
/// # Formula
///
/// FP = #{negative scores guessed "in" by `threshold`}, FN = #{positive scores guessed
/// "out"}; then [`epsilon_from_counts`] (each rate at α/2, no search, `candidates` = 1).
///
/// Assumes independent trials and a threshold that does not depend on them. A threshold
/// tuned on these scores makes the result invalid: use [`epsilon_held_out`] or
/// [`epsilon_bonferroni`] for that.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5 (nasr2021-adversary-instantiation.txt).
///
/// # Errors
///
/// [`Error::InvalidParameter`] `alpha` ∉ (0, 1), `delta` ∉ [0, 1), `threshold.tau` NaN, a
/// non-finite score (`scores.without`, `scores.with`); [`Error::InvalidCount`] for an empty
/// world or ≥ 1e7 trials.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{epsilon_at_threshold, Scores, Threshold};
/// let without = [0.1, 0.2, 0.3, 0.4];
/// let with = [0.6, 0.7, 0.8, 0.35];
/// let e = epsilon_at_threshold(
///     Scores { without: &without, with: &with }, Threshold::at_least(0.5), 0.05, 0.0)?;
/// assert_eq!((e.estimate.counts.false_positives, e.estimate.counts.false_negatives), (0, 1));
/// assert_eq!(e.candidates, 1);
/// assert!(e.estimate.epsilon == 0.0); // four trials per world prove nothing at 95 %
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn epsilon_at_threshold(
    scores: Scores<'_>,
    threshold: Threshold,
    alpha: f64,
    delta: f64,
) -> Result<AtThreshold<CpEpsilon>> {
    let alpha = check_alpha(alpha)?;
    let delta = check_delta(delta)?;
    if threshold.tau.is_nan() {
        return invalid("threshold.tau", threshold.tau, "not NaN");
    }
    check_world_scores(scores, "scores.without", "scores.with")?;
    let estimate = cp_epsilon_at(counts_at(scores, threshold), alpha / 2.0, delta)?;
    Ok(AtThreshold {
        estimate,
        threshold,
        candidates: 1,
    })
}

/// Every non-trivial threshold rule on the scores, in a fixed order: for each distinct
/// score u above the smallest, ascending, the rule "≥ u" and then "< u", with its counts.
/// (u = the smallest score gives the all-"in" rule and its complement; both prove nothing.)
fn candidate_rules(
    scores: Scores<'_>,
    mut visit: impl FnMut(Threshold, Counts) -> Result<()>,
) -> Result<()> {
    let sorted = |s: &[f64]| {
        let mut v: Vec<f64> = s.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let (neg, pos) = (sorted(scores.without), sorted(scores.with));
    let (n0, n1) = (neg.len() as u64, pos.len() as u64);
    // i, j: how many negative, positive scores are < the current threshold.
    let (mut i, mut j) = (0usize, 0usize);
    loop {
        let tau = match (neg.get(i), pos.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => return Ok(()),
        };
        if i + j > 0 {
            let (below0, below1) = (i as u64, j as u64);
            visit(
                Threshold::at_least(tau),
                Counts {
                    negatives: n0,
                    false_positives: n0 - below0,
                    positives: n1,
                    false_negatives: below1,
                },
            )?;
            visit(
                Threshold {
                    tau,
                    direction: Direction::Below,
                },
                Counts {
                    negatives: n0,
                    false_positives: below0,
                    positives: n1,
                    false_negatives: n1 - below1,
                },
            )?;
        }
        while neg.get(i).is_some_and(|&x| x <= tau) {
            i += 1;
        }
        while pos.get(j).is_some_and(|&x| x <= tau) {
            j += 1;
        }
    }
}

/// Clopper–Pearson upper limits at one level, memoised by count (a search asks for the
/// same count many times; both directions share them).
struct LimitCache {
    trials: u64,
    alpha: f64,
    upper: Vec<f64>,
}

impl LimitCache {
    fn new(trials: u64, alpha: f64) -> Self {
        LimitCache {
            trials,
            alpha,
            upper: alloc::vec![f64::NAN; (trials as usize).saturating_add(1)],
        }
    }

    fn upper(&mut self, k: u64) -> Result<f64> {
        match self.upper.get_mut(k as usize) {
            Some(u) if !u.is_nan() => Ok(*u),
            Some(u) => {
                *u = clopper_pearson(k, self.trials, self.alpha)?.upper;
                Ok(*u)
            }
            None => Ok(clopper_pearson(k, self.trials, self.alpha)?.upper),
        }
    }
}

/// Limits of both rates of `c` at the caches' level.
fn cached_limits(c: Counts, fp: &mut LimitCache, fnc: &mut LimitCache) -> Result<(f64, f64)> {
    Ok((fp.upper(c.false_positives)?, fnc.upper(c.false_negatives)?))
}

/// Youden's J = TPR − FPR of a rule (validated counts).
fn youden(c: Counts) -> f64 {
    (c.positives - c.false_negatives) as f64 / c.positives as f64
        - c.false_positives as f64 / c.negatives as f64
}

/// Eq. 5 at the empirical rates FP/N₀ and FN/N₁ instead of their upper limits, nudged up for
/// rounding: at least the Clopper–Pearson ε of the same counts ([`epsilon_from_limits`] is
/// non-increasing in both limits, and an upper limit is ≥ its empirical rate), +∞ where a
/// count is 0. Cheap: no incomplete-beta inverse.
fn epsilon_point_bound(c: Counts, delta: f64) -> f64 {
    let shrink = 1.0 - 8.0 * f64::EPSILON;
    let p0 = c.false_positives as f64 / c.negatives as f64 * shrink;
    let p1 = c.false_negatives as f64 / c.positives as f64 * shrink;
    if !(p0 > 0.0 && p1 > 0.0) {
        return f64::INFINITY;
    }
    let a = ln_ratio(1.0 - delta - p0, p1);
    let b = ln_ratio(1.0 - delta - p1, p0);
    let e = a.max(b).max(0.0);
    e + 1e-12 * (1.0 + e)
}

/// The rule with the largest Clopper–Pearson ε at one-sided level `a` per rate among all
/// candidates; ties (e.g. all ε = 0 on few trials) go to the larger Youden J = TPR − FPR,
/// then to the first rule. `None` if there is no non-trivial candidate.
///
/// Exactly the exhaustive search, with far fewer Clopper–Pearson limits: the candidates are
/// visited in decreasing order of [`epsilon_point_bound`], an upper bound on their ε, and the
/// search stops once that bound is below the best ε found (no later candidate can reach it,
/// nor tie it). The rule chosen is the lexicographic maximum of (ε, J, −position), as the
/// scan in candidate order chooses it.
fn best_cp_rule(scores: Scores<'_>, a: f64, delta: f64) -> Result<Option<(Threshold, CpEpsilon)>> {
    let mut all: Vec<(f64, Threshold, Counts)> = Vec::new();
    candidate_rules(scores, |t, c| {
        all.push((epsilon_point_bound(c, delta), t, c));
        Ok(())
    })?;
    // positions in candidate order, by decreasing bound (stable: ties keep that order)
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&i, &j| all[j].0.total_cmp(&all[i].0));
    let mut fp = LimitCache::new(scores.without.len() as u64, a);
    let mut fnc = LimitCache::new(scores.with.len() as u64, a);
    // (position, threshold, estimate) of the best so far
    let mut best: Option<(usize, Threshold, CpEpsilon)> = None;
    for i in order {
        let Some(&(bound, t, c)) = all.get(i) else {
            continue;
        };
        if best.as_ref().is_some_and(|(_, _, b)| bound < b.epsilon) {
            break;
        }
        let (fpr_upper, fnr_upper) = cached_limits(c, &mut fp, &mut fnc)?;
        let epsilon = epsilon_from_limits(fpr_upper, fnr_upper, delta)?;
        let better = |(p, _, b): &(usize, Threshold, CpEpsilon)| {
            epsilon > b.epsilon
                || (epsilon == b.epsilon
                    && (youden(c) > youden(b.counts) || (youden(c) == youden(b.counts) && i < *p)))
        };
        if best.as_ref().is_none_or(better) {
            best = Some((
                i,
                t,
                CpEpsilon {
                    epsilon,
                    counts: c,
                    fpr_upper,
                    fnr_upper,
                    alpha_per_rate: a,
                },
            ));
        }
    }
    Ok(best.map(|(_, t, e)| (t, e)))
}

/// K = 2(N₀ + N₁ − 1): the most non-trivial threshold rules that N₀ + N₁ scores can induce
/// (N₀ + N₁ − 1 thresholds between distinct scores, in two directions), the Bonferroni
/// count of [`epsilon_bonferroni`] and [`gdp_epsilon`]. It depends on the numbers of
/// trials only, never on the scores.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::bonferroni_candidates;
/// assert_eq!(bonferroni_candidates(1000, 1000), 3998);
/// ```
pub fn bonferroni_candidates(negatives: u64, positives: u64) -> u64 {
    2 * (negatives.saturating_add(positives).saturating_sub(1))
}

/// (b) Empirical ε with the threshold searched on **held-out calibration trials** and ε
/// computed on the **evaluation trials**, which the search never reads.
///
/// # Formula
///
/// On the calibration scores, every non-trivial rule (each distinct score u above the
/// smallest as τ, both directions) is scored by its Clopper–Pearson ε at α/2 per rate; the
/// best (on ties, e.g. when few calibration trials give ε = 0 everywhere, the larger Youden
/// J = TPR − FPR, then the first) is then applied to the evaluation scores, and ε is
/// [`epsilon_from_counts`] of its evaluation counts (α/2 per rate, `candidates` = 1). With
/// no non-trivial calibration rule (all calibration scores equal) the rule "≥ +∞" (all
/// "out", ε = 0) is used.
///
/// Assumes the calibration/evaluation split was fixed before the scores were seen (e.g. by
/// trial index) and that all trials are independent.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5 (nasr2021-adversary-instantiation.txt); a sample split as in
/// jax_privacy's `Split` threshold strategy.
///
/// # Errors
///
/// As [`epsilon_at_threshold`], naming `calibration.without`, `calibration.with`,
/// `evaluation.without` or `evaluation.with`.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{epsilon_held_out, Scores};
/// let cal = Scores { without: &[0.0, 0.1, 0.2], with: &[0.9, 1.0, 1.1] };
/// let eval_without: Vec<f64> = (0..500).map(|i| i as f64 / 1000.0).collect();
/// let eval_with: Vec<f64> = (0..500).map(|i| 0.8 + i as f64 / 1000.0).collect();
/// let eval = Scores { without: &eval_without, with: &eval_with };
/// let e = epsilon_held_out(cal, eval, 0.05, 1e-5)?;
/// assert_eq!(e.threshold.tau, 0.9); // chosen on the calibration scores only
/// assert!(e.estimate.epsilon > 4.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn epsilon_held_out(
    calibration: Scores<'_>,
    evaluation: Scores<'_>,
    alpha: f64,
    delta: f64,
) -> Result<AtThreshold<CpEpsilon>> {
    let alpha = check_alpha(alpha)?;
    let delta = check_delta(delta)?;
    check_world_scores(calibration, "calibration.without", "calibration.with")?;
    check_world_scores(evaluation, "evaluation.without", "evaluation.with")?;
    let threshold = match best_cp_rule(calibration, alpha / 2.0, delta)? {
        Some((t, _)) => t,
        None => Threshold::at_least(f64::INFINITY),
    };
    let estimate = cp_epsilon_at(counts_at(evaluation, threshold), alpha / 2.0, delta)?;
    Ok(AtThreshold {
        estimate,
        threshold,
        candidates: 1,
    })
}

/// (c) Empirical ε with the threshold searched on **the same trials**, paid for with a
/// Bonferroni correction over every candidate rule.
///
/// # Formula
///
/// ε = max over the non-trivial rules (each distinct score u above the smallest as τ, both
/// [`Direction`]s) of Eq. 5 with FP̄, FN̄ at one-sided level α/(2K),
/// K = [`bonferroni_candidates`](N₀, N₁) = 2(N₀ + N₁ − 1); 0 if there is no non-trivial
/// rule. The returned threshold is the maximiser (on ties the larger Youden J, then the
/// first). All limits hold
/// together with probability ≥ 1 − α, uniformly over thresholds (see the module docs), so
/// the maximum is a valid (1 − α) lower bound. It is smaller than the fixed-threshold ε of
/// the same rule: that is the price of the search.
///
/// Assumes independent trials.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5 (nasr2021-adversary-instantiation.txt); Bonferroni over
/// thresholds as jax_privacy's `Bonferroni` threshold strategy (which counts only the ROC
/// hull's thresholds, a number that depends on the data; K here does not).
///
/// # Errors
///
/// As [`epsilon_at_threshold`].
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{epsilon_at_threshold, epsilon_bonferroni, Scores};
/// let without: Vec<f64> = (0..1000).map(|i| i as f64).collect();
/// let with: Vec<f64> = (0..1000).map(|i| 2000.0 + i as f64).collect();
/// let s = Scores { without: &without, with: &with };
/// let searched = epsilon_bonferroni(s, 0.05, 1e-5)?;
/// assert_eq!(searched.candidates, 3998);
/// let fixed = epsilon_at_threshold(s, searched.threshold, 0.05, 1e-5)?;
/// assert!(searched.estimate.epsilon < fixed.estimate.epsilon);
/// assert!((fixed.estimate.epsilon - 5.6006).abs() < 5e-5);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn epsilon_bonferroni(
    scores: Scores<'_>,
    alpha: f64,
    delta: f64,
) -> Result<AtThreshold<CpEpsilon>> {
    let alpha = check_alpha(alpha)?;
    let delta = check_delta(delta)?;
    check_world_scores(scores, "scores.without", "scores.with")?;
    let (n0, n1) = (scores.without.len() as u64, scores.with.len() as u64);
    let k = bonferroni_candidates(n0, n1);
    let a = alpha / (2.0 * k as f64);
    let (threshold, estimate) = match best_cp_rule(scores, a, delta)? {
        Some(best) => best,
        None => {
            let t = Threshold::at_least(f64::INFINITY);
            (t, cp_epsilon_at(counts_at(scores, t), a, delta)?)
        }
    };
    Ok(AtThreshold {
        estimate,
        threshold,
        candidates: k,
    })
}

// ---------------------------------------------------------------------------------------
// Gaussian DP

/// Φ⁻¹(1 − FP̄) − Φ⁻¹(FN̄) (possibly −∞, never NaN: both limits are in (0, 1]).
fn gdp_mu_term(fpr_upper: f64, fnr_upper: f64) -> Result<f64> {
    Ok(-normal::quantile(fpr_upper)? - normal::quantile(fnr_upper)?)
}

fn gdp_estimate(
    c: Counts,
    fpr_upper: f64,
    fnr_upper: f64,
    a: f64,
    mu: f64,
    delta: f64,
) -> Result<GdpEstimate> {
    let mu = mu.max(0.0);
    let epsilon = if mu > 0.0 {
        analytic_epsilon(delta, mu)?
    } else {
        0.0
    };
    Ok(GdpEstimate {
        mu,
        epsilon,
        counts: c,
        fpr_upper,
        fnr_upper,
        alpha_per_rate: a,
    })
}

/// Gaussian-DP estimate for a decision rule fixed before the trials were run.
///
/// # Formula
///
/// μ̂ = max(Φ⁻¹(1 − FP̄) − Φ⁻¹(FN̄), 0) with FP̄, FN̄ the Clopper–Pearson upper limits at α/2
/// each — clamped at 0, never |·| (a rule worse than chance proves nothing; taking the
/// absolute value was a bug of jax_privacy's `epsilon_from_gdp`). A μ-GDP mechanism has
/// FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ) (its trade-off function is at least G_μ), so with probability ≥ 1 − α,
/// μ̂ ≤ μ. Then ε is the ε at δ of the Gaussian trade-off curve G_μ̂, the root of
/// Φ(−ε/μ̂ + μ̂/2) − e^ε Φ(−ε/μ̂ − μ̂/2) = δ ([`analytic_epsilon`]); 0 when μ̂ = 0.
///
/// **An estimate**: ε is a lower bound on the mechanism's ε only under the assumption that
/// its trade-off curve is Gaussian (true for the Gaussian mechanism and, asymptotically,
/// for DP-SGD; not in general).
///
/// # Citations
///
/// Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis, "Tight auditing of
/// differentially private machine learning", USENIX Security 2023 (the GDP estimate of
/// their audits); Dong, Roth, Su 2019, "Gaussian differential privacy", the trade-off
/// function G_μ and Cor. 2.13.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `alpha` ∉ (0, 1), `delta` ∉ (0, 1); count errors as
/// [`epsilon_from_counts`].
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{gdp_from_counts, Counts};
/// let c = Counts { negatives: 1000, false_positives: 20, positives: 1000, false_negatives: 400 };
/// let g = gdp_from_counts(c, 0.05, 1e-5)?;
/// assert!(g.mu > 1.0 && g.mu < 2.307); // raw rates: Φ⁻¹(0.98) − Φ⁻¹(0.4) = 2.307
/// // All wrong: the rule is worse than chance, μ̂ = 0 (not |μ̂|).
/// let c = Counts { negatives: 1000, false_positives: 1000, positives: 1000, false_negatives: 1000 };
/// assert_eq!(gdp_from_counts(c, 0.05, 1e-5)?.epsilon, 0.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gdp_from_counts(counts: Counts, alpha: f64, delta: f64) -> Result<GdpEstimate> {
    let alpha = check_alpha(alpha)?;
    let delta = check_open_unit("delta", delta)?;
    let c = check_counts(counts)?;
    let a = alpha / 2.0;
    let (fpr_upper, fnr_upper) = rate_limits(c, a)?;
    let mu = gdp_mu_term(fpr_upper, fnr_upper)?;
    gdp_estimate(c, fpr_upper, fnr_upper, a, mu, delta)
}

/// Gaussian-DP estimate with the threshold searched on the same trials, paid for with a
/// Bonferroni correction over every candidate rule.
///
/// # Formula
///
/// μ̂ = max(0, max over the non-trivial rules (both [`Direction`]s) of
/// Φ⁻¹(1 − FP̄) − Φ⁻¹(FN̄)), with FP̄, FN̄ at one-sided level α/(2K),
/// K = [`bonferroni_candidates`](N₀, N₁); then ε as in [`gdp_from_counts`]. The inverted
/// rules are candidates in their own right (and paid for), so no absolute value is needed.
///
/// **An estimate** under a Gaussian trade-off assumption, as [`gdp_from_counts`]; μ̂ itself
/// is a (1 − α) lower confidence bound on μ for any μ-GDP mechanism.
///
/// # Citations
///
/// Nasr et al. 2023, "Tight auditing of differentially private machine learning";
/// Dong, Roth, Su 2019, Cor. 2.13.
///
/// # Errors
///
/// As [`epsilon_bonferroni`], and `delta` ∉ (0, 1).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{gdp_epsilon, Scores};
/// use reconbound::math::normal::quantile;
/// // Scores at the normal quantiles: N(0, 1) without the canary, N(1, 1) with it.
/// let n = 2000;
/// let q: Vec<f64> = (0..n).map(|i| quantile((i as f64 + 0.5) / n as f64).unwrap()).collect();
/// let with: Vec<f64> = q.iter().map(|x| x + 1.0).collect();
/// let g = gdp_epsilon(Scores { without: &q, with: &with }, 0.05, 1e-5)?;
/// assert!(g.estimate.mu > 0.6 && g.estimate.mu < 1.0);
/// assert!(g.estimate.epsilon < 4.3772); // ε of 1-GDP at δ = 1e-5
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gdp_epsilon(scores: Scores<'_>, alpha: f64, delta: f64) -> Result<AtThreshold<GdpEstimate>> {
    let alpha = check_alpha(alpha)?;
    let delta = check_open_unit("delta", delta)?;
    check_world_scores(scores, "scores.without", "scores.with")?;
    let (n0, n1) = (scores.without.len() as u64, scores.with.len() as u64);
    let k = bonferroni_candidates(n0, n1);
    let a = alpha / (2.0 * k as f64);
    let mut fp = LimitCache::new(n0, a);
    let mut fnc = LimitCache::new(n1, a);
    let mut best: Option<(Threshold, Counts, f64, f64, f64)> = None;
    candidate_rules(scores, |t, c| {
        let (fpr_upper, fnr_upper) = cached_limits(c, &mut fp, &mut fnc)?;
        let mu = gdp_mu_term(fpr_upper, fnr_upper)?;
        if best.is_none_or(|b| mu > b.4) {
            best = Some((t, c, fpr_upper, fnr_upper, mu));
        }
        Ok(())
    })?;
    let (threshold, c, fpr_upper, fnr_upper, mu) = match best {
        Some(b) => b,
        None => {
            let t = Threshold::at_least(f64::INFINITY);
            let c = counts_at(scores, t);
            let (fpr_upper, fnr_upper) = rate_limits(c, a)?;
            (t, c, fpr_upper, fnr_upper, 0.0)
        }
    };
    Ok(AtThreshold {
        estimate: gdp_estimate(c, fpr_upper, fnr_upper, a, mu, delta)?,
        threshold,
        candidates: k,
    })
}

// ---------------------------------------------------------------------------------------
// One run

/// The one-run p-value for validated counts, ε ≥ 0 and c = 2mδ ≥ 0.
fn one_run_p_unchecked(c: OneRunCounts, epsilon: f64, two_m_delta: f64) -> Result<f64> {
    let (r, v) = (c.guesses, c.correct);
    if v == 0 {
        return Ok(1.0);
    }
    let (rf, vf) = (r as f64, v as f64);
    // q = e^ε/(1 + e^ε); 1 − q = 1/(1 + e^ε) and the logs, all without cancellation.
    let ln_q = -libm::log1p(libm::exp(-epsilon));
    let ln_1mq = ln_q - epsilon;
    let one_minus_q = libm::exp(ln_1mq);
    // β = P[Bin(r, q) ≥ v] = 1 − I_{1−q}(r − v + 1, v); below = P[Bin(r, q) ≤ v − 1].
    let beta = beta_inc_complement(rf - vf + 1.0, vf, one_minus_q)?;
    if two_m_delta == 0.0 {
        return Ok(beta);
    }
    let below = beta_inc(rf - vf + 1.0, vf, one_minus_q)?;
    // max_{1≤i≤v} S_i/i with S_i = P[Bin(r, q) ≥ v − i] − β = Σ_{j=v−i}^{v−1} P[Bin = j],
    // accumulated in log space (the terms may underflow one by one, not their sum). Since
    // S_i ≤ below, no i' > i can beat below/i'.
    let mut ln_s = f64::NEG_INFINITY;
    let mut best = 0.0f64;
    for i in 1..=v {
        let j = (v - i) as f64;
        let ln_pmf = ln_binomial_unchecked(rf, j) + j * ln_q + (rf - j) * ln_1mq;
        ln_s = log_add_exp(ln_s, ln_pmf);
        best = best.max(libm::exp(ln_s) / i as f64);
        if below / (i as f64 + 1.0) <= best {
            break;
        }
    }
    Ok((beta + two_m_delta * best).min(1.0))
}

/// The p-value of the one-run audit: an upper bound on the probability that v or more of r
/// guesses are correct if the algorithm is (ε, δ)-DP.
///
/// # Formula
///
/// p(ε) = min(1, β + 2mδ · max_{1≤i≤v} (P[Bin(r, q_ε) ≥ v − i] − β)/i), with
/// q_ε = e^ε/(1 + e^ε) and β = P[Bin(r, q_ε) ≥ v] (p = 1 when v = 0). Binomial tails are
/// regularised incomplete beta functions; the sums of point probabilities are accumulated
/// in log space.
///
/// Assumes the m canaries were included independently with probability ½ each, and that
/// the guesses are a function of the trained model (and of randomness independent of the
/// inclusions).
///
/// # Citations
///
/// Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023:
/// the main theorem (ε-DP: P[W ≥ v] ≤ β) and its (ε, δ) extension with the 2mδ term, as
/// computed by the authors' `p_value_DP_audit` and jax_privacy's `_one_run_p_value`. (The
/// paper is not in `../shared/papers/`; theorem numbers are not given here for that
/// reason.)
///
/// # Errors
///
/// [`Error::InvalidParameter`] `epsilon` not finite and ≥ 0, `delta` ∉ [0, 1];
/// [`Error::InvalidCount`] `canaries` = 0, `guesses` > `canaries` or ≥ 1e7, `correct` >
/// `guesses`.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_p_value, OneRunCounts};
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// // δ = 0: β = q^100, q = e/(1 + e).
/// let q = 1f64.exp() / (1.0 + 1f64.exp());
/// assert!((one_run_p_value(c, 1.0, 0.0)? / q.powi(100) - 1.0).abs() < 1e-12);
/// assert!(one_run_p_value(c, 1.0, 1e-5)? > one_run_p_value(c, 1.0, 0.0)?);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_p_value(counts: OneRunCounts, epsilon: f64, delta: f64) -> Result<f64> {
    let c = check_one_run(counts)?;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return invalid("epsilon", epsilon, "finite and >= 0");
    }
    if !(0.0..=1.0).contains(&delta) {
        return invalid("delta", delta, "in [0, 1]");
    }
    one_run_p_unchecked(c, epsilon, 2.0 * c.canaries as f64 * delta)
}

/// The one-run audit's lower bound on ε: the largest ε that the guesses refute at level α.
///
/// # Formula
///
/// ε = sup{ε ≥ 0 : p(ε) ≤ α/K} with p from [`one_run_p_value`] and K = `candidates`; 0 if
/// p(0) > α/K. For 2mδ ≤ 1, p is non-decreasing in ε (each β + 2mδ·S_i/i has derivative
/// r·b(v−1)(1 − 2mδ/i) + (2mδ/i)·r·b(v−i−1) ≥ 0, b the Bin(r − 1, q) point
/// probabilities), so the supremum is the unique crossing, found by Brent's method to
/// 1e-12; the end of the final bracket where p ≤ α/K is returned (ε errs low).
///
/// `candidates` is the number of guess rules (pairs (k₊, k₋), thresholds) tried on these
/// same canaries before this one was picked: the test is run at α/K (Bonferroni). Use 1 for
/// a rule fixed in advance.
///
/// **The δ rule**: refused unless 2mδ < α. The δ term is at most 2mδ (each S_i/i ≤ 1), so
/// with 2mδ ≥ α it alone could exhaust α whatever the guesses; 2mδ < α also keeps p
/// monotone (2mδ ≤ 1), which the root search relies on. The rule is on the family level
/// α, not α/K, and it is not stricter (e.g. 2mδ ≤ α/10) because the published examples
/// need 2mδ = 0.4α (m = 1000, δ = 1e-5, α = 0.05) and 0.8α (jax_privacy's table). Past a
/// search the δ term can dominate p (ε then falls below its δ = 0 value: still valid, but
/// set mostly by δ); compare with δ = 0 to see how much.
///
/// # Citations
///
/// Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023,
/// the main theorem and its (ε, δ) extension (see [`one_run_p_value`]); the root search as
/// jax_privacy's `_epsilon_one_run`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `alpha` ∉ (0, 1); `delta` ∉ [0, 1) or 2·canaries·δ ≥ α;
/// [`Error::InvalidCount`] `candidates` = 0 and the count errors of [`one_run_p_value`];
/// [`Error::NotConverged`] if no ε ≤ 2¹⁰ has p(ε) > α/K (cannot happen for v ≥ 1).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::{one_run_epsilon, OneRunCounts};
/// // Steinke et al.: m = 1000 canaries, 100 guesses, all correct, 95 % confidence.
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 100 };
/// let e0 = one_run_epsilon(c, 0.05, 0.0, 1)?;
/// assert!((e0 - 3.492965).abs() < 1e-6); // ln(q/(1 − q)) with q¹⁰⁰ = 0.05
/// let e5 = one_run_epsilon(c, 0.05, 1e-5, 1)?;
/// assert!((e5 - 3.465376).abs() < 1e-6);
/// assert!(one_run_epsilon(c, 0.05, 1e-4, 1).is_err()); // 2mδ = 0.2 ≥ α
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_epsilon(
    counts: OneRunCounts,
    alpha: f64,
    delta: f64,
    candidates: u64,
) -> Result<f64> {
    let c = check_one_run(counts)?;
    let alpha = check_alpha(alpha)?;
    let delta = check_delta(delta)?;
    if candidates == 0 {
        return Err(Error::InvalidCount {
            name: "candidates",
            value: 0,
            expected: ">= 1",
        });
    }
    let two_m_delta = 2.0 * c.canaries as f64 * delta;
    if two_m_delta >= alpha {
        return invalid(
            "delta",
            delta,
            "< alpha / (2 * canaries): the one-run delta term 2*m*delta must stay below alpha",
        );
    }
    let level = alpha / candidates as f64;
    if one_run_p_unchecked(c, 0.0, two_m_delta)? > level {
        return Ok(0.0);
    }
    let mut lo = 0.0f64;
    let mut hi = 1.0f64;
    while one_run_p_unchecked(c, hi, two_m_delta)? <= level {
        lo = hi;
        hi *= 2.0;
        if hi > 1024.0 {
            return Err(Error::NotConverged {
                what: "one-run epsilon: p(epsilon) stays below alpha",
                value: hi,
            });
        }
    }
    let mut failure: Option<Error> = None;
    let bracket = brent_bracket(
        |e| match one_run_p_unchecked(c, e, two_m_delta) {
            Ok(p) => p - level,
            Err(err) => {
                failure.get_or_insert(err);
                f64::NAN
            }
        },
        lo,
        hi,
        1e-12,
        200,
    );
    if let Some(err) = failure {
        return Err(err);
    }
    let b = bracket?;
    Ok(if b.f_hi <= 0.0 { b.hi } else { b.lo })
}

/// The one-run guess rule: guess "in" for the k₊ highest scores and "out" for the k₋
/// lowest, abstain on the rest; count the correct guesses.
///
/// # Formula
///
/// Sort the m scores ascending (ties by canary index, so the rule never looks at
/// `included`); the last k₊ are guessed "in", the first k₋ "out"; r = k₊ + k₋ and
/// v = #{guessed "in" and included} + #{guessed "out" and not included}. Feed the result to
/// [`one_run_epsilon`] with `candidates` = 1 only if k₊ and k₋ were fixed in advance.
///
/// # Citations
///
/// Steinke, Nasr, Jagielski 2023 (their auditor guesses "in" on the k₊ highest and "out"
/// on the k₋ lowest scores).
///
/// # Errors
///
/// [`Error::Inconsistent`] if `scores` and `included` differ in length;
/// [`Error::InvalidCount`] `canaries` = 0 (no scores), `k_plus` + `k_minus` > m;
/// [`Error::InvalidParameter`] `scores` not finite.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::epsilon::one_run_guesses;
/// let scores = [0.9, 0.1, 0.5, 0.8, 0.2];
/// let included = [true, false, true, false, false];
/// let c = one_run_guesses(&scores, &included, 2, 2)?;
/// // "in": 0.9 (right), 0.8 (wrong); "out": 0.1 (right), 0.2 (right).
/// assert_eq!((c.canaries, c.guesses, c.correct), (5, 4, 3));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_guesses(
    scores: &[f64],
    included: &[bool],
    k_plus: u64,
    k_minus: u64,
) -> Result<OneRunCounts> {
    if scores.len() != included.len() {
        return Err(Error::Inconsistent {
            what: "scores and included differ in length",
            value: included.len() as f64,
        });
    }
    if scores.is_empty() {
        return Err(Error::InvalidCount {
            name: "canaries",
            value: 0,
            expected: ">= 1 (at least one score)",
        });
    }
    check_scores("scores", scores)?;
    let m = scores.len() as u64;
    if k_plus.saturating_add(k_minus) > m {
        return Err(Error::InvalidCount {
            name: "k_plus",
            value: k_plus,
            expected: "<= canaries - k_minus (k_plus + k_minus <= number of scores)",
        });
    }
    let mut order: Vec<(f64, bool)> = scores
        .iter()
        .copied()
        .zip(included.iter().copied())
        .collect();
    // Stable: equal scores stay in index order.
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let right_out = order.iter().take(k_minus as usize).filter(|x| !x.1).count();
    let right_in = order
        .iter()
        .rev()
        .take(k_plus as usize)
        .filter(|x| x.1)
        .count();
    Ok(OneRunCounts {
        canaries: m,
        guesses: k_plus + k_minus,
        correct: (right_out + right_in) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exhaustive search that [`best_cp_rule`] prunes: every candidate's limits, in
    /// candidate order, the first strictly better kept.
    fn best_cp_rule_exhaustive(
        scores: Scores<'_>,
        a: f64,
        delta: f64,
    ) -> Option<(Threshold, CpEpsilon)> {
        let mut best: Option<(Threshold, CpEpsilon)> = None;
        candidate_rules(scores, |t, c| {
            let (fpr_upper, fnr_upper) = rate_limits(c, a)?;
            let epsilon = epsilon_from_limits(fpr_upper, fnr_upper, delta)?;
            let better = |(_, b): (Threshold, CpEpsilon)| {
                epsilon > b.epsilon || (epsilon == b.epsilon && youden(c) > youden(b.counts))
            };
            if best.is_none_or(better) {
                best = Some((
                    t,
                    CpEpsilon {
                        epsilon,
                        counts: c,
                        fpr_upper,
                        fnr_upper,
                        alpha_per_rate: a,
                    },
                ));
            }
            Ok(())
        })
        .unwrap();
        best
    }

    /// The pruned search chooses exactly the exhaustive search's rule (threshold, direction,
    /// counts, limits, ε: every bit) on random scores: separated and overlapping worlds,
    /// heavy ties (scores rounded to a few values), tiny and unequal worlds, δ from 0 to 0.1,
    /// the held-out and the Bonferroni levels. Seeded: a failure is reproducible.
    #[test]
    fn pruned_search_picks_the_exhaustive_searchs_rule_bit_for_bit() {
        let mut rng = crate::rng::Rng::from_seed(20261127);
        for case in 0..400u32 {
            let n0 = 1 + (rng.next_u64() % 60) as usize;
            let n1 = 1 + (rng.next_u64() % 60) as usize;
            let shift = (rng.next_u64() % 5) as f64 * 0.75;
            let levels = 1 + rng.next_u64() % 8; // few distinct values: ties
            let draw = |rng: &mut crate::rng::Rng, mu: f64| {
                let x = rng.gaussian() + mu;
                if case % 2 == 0 {
                    libm::round(x * levels as f64) / levels as f64
                } else {
                    x
                }
            };
            let without: Vec<f64> = (0..n0).map(|_| draw(&mut rng, 0.0)).collect();
            let with: Vec<f64> = (0..n1).map(|_| draw(&mut rng, shift)).collect();
            let s = Scores {
                without: &without,
                with: &with,
            };
            let delta = [0.0, 1e-5, 0.01, 0.1][(case % 4) as usize];
            for a in [0.025, 0.05 / (2.0 * (n0 + n1) as f64)] {
                let want = best_cp_rule_exhaustive(s, a, delta);
                let got = best_cp_rule(s, a, delta).unwrap();
                let bits = |r: &Option<(Threshold, CpEpsilon)>| {
                    r.map(|(t, e)| {
                        (
                            t.tau.to_bits(),
                            t.direction,
                            e.counts,
                            e.epsilon.to_bits(),
                            e.fpr_upper.to_bits(),
                            e.fnr_upper.to_bits(),
                        )
                    })
                };
                assert_eq!(bits(&got), bits(&want), "case {case}, a = {a}, δ = {delta}");
            }
        }
    }
    use crate::error::error_name;
    use crate::rng::Rng;

    /// All rules "≥ u" and "< u" for the distinct scores u above the smallest, by brute force.
    fn brute_force_rules(s: Scores<'_>) -> Vec<(Threshold, Counts)> {
        let mut u: Vec<f64> = s.without.iter().chain(s.with).copied().collect();
        u.sort_unstable_by(f64::total_cmp);
        u.dedup();
        let mut out = Vec::new();
        for &tau in u.iter().skip(1) {
            for direction in [Direction::AtLeast, Direction::Below] {
                let t = Threshold { tau, direction };
                out.push((t, counts_at(s, t)));
            }
        }
        out
    }

    #[test]
    fn candidate_rules_match_brute_force_counts_with_ties() {
        // Scores on a grid of 7 values so that ties within and across worlds are common.
        for seed in 0..20u64 {
            let mut rng = Rng::for_trial(0xA0D1, seed);
            let n0 = 1 + (rng.uniform() * 12.0) as usize;
            let n1 = 1 + (rng.uniform() * 12.0) as usize;
            let mut grid =
                |n: usize| -> Vec<f64> { (0..n).map(|_| (rng.uniform() * 7.0).floor()).collect() };
            let (without, with) = (grid(n0), grid(n1));
            let s = Scores {
                without: &without,
                with: &with,
            };
            let mut got = Vec::new();
            candidate_rules(s, |t, c| {
                got.push((t, c));
                Ok(())
            })
            .unwrap();
            assert_eq!(got, brute_force_rules(s), "seed {seed}");
            assert!(got.len() as u64 <= bonferroni_candidates(n0 as u64, n1 as u64));
        }
        // One distinct score: no non-trivial rule.
        let s = Scores {
            without: &[1.0, 1.0],
            with: &[1.0],
        };
        candidate_rules(s, |_, _| panic!("no candidate expected")).unwrap();
    }

    #[test]
    fn limit_cache_returns_the_clopper_pearson_limits() {
        let mut cache = LimitCache::new(50, 0.01);
        for k in [0u64, 3, 50, 3, 0, 17] {
            let want = clopper_pearson(k, 50, 0.01).unwrap().upper;
            assert_eq!(cache.upper(k).unwrap().to_bits(), want.to_bits(), "k = {k}");
        }
    }

    #[test]
    fn zero_upper_limit_is_refused_not_infinite() {
        assert!(matches!(
            epsilon_from_limits(0.0, 0.1, 0.0),
            Err(Error::Numerical { .. })
        ));
        assert!(epsilon_from_limits(0.1, 0.0, 0.0).is_err());
        // Limits of 1 prove nothing: ε = 0, not NaN.
        assert_eq!(epsilon_from_limits(1.0, 1.0, 0.0).unwrap(), 0.0);
    }

    /// p(ε) summed term by term in f64 (the definition, no log space, no early stop).
    fn naive_p(m: u64, r: u64, v: u64, eps: f64, delta: f64) -> f64 {
        let q = 1.0 / (1.0 + libm::exp(-eps));
        let pmf = |j: u64| {
            libm::exp(
                ln_binomial_unchecked(r as f64, j as f64)
                    + j as f64 * libm::log(q)
                    + (r - j) as f64 * libm::log1p(-q),
            )
        };
        let beta: f64 = (v..=r).map(pmf).sum();
        let mut best = 0.0f64;
        let mut s = 0.0;
        for i in 1..=v {
            s += pmf(v - i);
            best = best.max(s / i as f64);
        }
        (beta + 2.0 * m as f64 * delta * best).min(1.0)
    }

    #[test]
    fn one_run_p_value_matches_term_by_term_sum() {
        // Tolerance 1e-11 relative (+1e-300 absolute): both sums are accurate to ~1e-13
        // here (at most 1000 positive terms, each to ~1e-14); a wrong index or a wrong early
        // stop changes p by far more.
        for &(m, r, v) in &[
            (10u64, 10u64, 10u64),
            (100, 10, 9),
            (1000, 100, 100),
            (1000, 100, 90),
            (1000, 1000, 700),
            (1000, 100, 1),
            (1000, 100, 0),
        ] {
            for &eps in &[0.0, 0.5, 1.0, 3.0, 8.0] {
                for &delta in &[0.0, 1e-6, 1e-3, 1e-1] {
                    let c = OneRunCounts {
                        canaries: m,
                        guesses: r,
                        correct: v,
                    };
                    let got = one_run_p_value(c, eps, delta).unwrap();
                    let want = if v == 0 {
                        1.0
                    } else {
                        naive_p(m, r, v, eps, delta)
                    };
                    assert!(
                        (got - want).abs() <= 1e-11 * want + 1e-300,
                        "m {m} r {r} v {v} eps {eps} delta {delta}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn one_run_p_value_is_non_decreasing_in_epsilon_when_2m_delta_le_1() {
        // The derivative argument of `one_run_epsilon`'s docs, checked on a grid, including
        // 2mδ = 1 exactly (the edge of the argument).
        for &(m, r, v, delta) in &[
            (1000u64, 100u64, 95u64, 5e-4),
            (5000, 300, 240, 1e-4),
            (100, 100, 80, 5e-3),
        ] {
            let c = OneRunCounts {
                canaries: m,
                guesses: r,
                correct: v,
            };
            let mut prev = 0.0;
            for k in 0..=400 {
                let p = one_run_p_value(c, k as f64 * 0.02, delta).unwrap();
                assert!(
                    p >= prev * (1.0 - 1e-12),
                    "m {m} r {r} v {v} eps {}",
                    k as f64 * 0.02
                );
                prev = p;
            }
        }
    }

    #[test]
    fn one_run_epsilon_is_the_crossing_of_p_and_alpha() {
        let c = OneRunCounts {
            canaries: 1000,
            guesses: 200,
            correct: 170,
        };
        for &(alpha, delta, k) in &[(0.05, 0.0, 1u64), (0.05, 1e-5, 1), (0.01, 2e-6, 7)] {
            let e = one_run_epsilon(c, alpha, delta, k).unwrap();
            let level = alpha / k as f64;
            assert!(one_run_p_value(c, e, delta).unwrap() <= level);
            assert!(
                one_run_p_value(c, e + 1e-9, delta).unwrap() > level,
                "{alpha} {delta} {k}"
            );
        }
    }

    #[test]
    fn errors_name_their_parameter() {
        let c = Counts {
            negatives: 10,
            false_positives: 0,
            positives: 10,
            false_negatives: 0,
        };
        assert_eq!(
            error_name(epsilon_from_counts(c, 0.0, 0.0).unwrap_err()),
            "alpha"
        );
        assert_eq!(
            error_name(epsilon_from_counts(c, 0.05, 1.0).unwrap_err()),
            "delta"
        );
        assert_eq!(
            error_name(gdp_from_counts(c, 0.05, 0.0).unwrap_err()),
            "delta"
        );
        let o = OneRunCounts {
            canaries: 10,
            guesses: 11,
            correct: 0,
        };
        assert_eq!(
            error_name(one_run_epsilon(o, 0.05, 0.0, 1).unwrap_err()),
            "guesses"
        );
        assert_eq!(
            error_name(one_run_p_value(o, 1.0, 0.0).unwrap_err()),
            "guesses"
        );
        let s = Scores {
            without: &[0.0, f64::NAN],
            with: &[1.0],
        };
        assert_eq!(
            error_name(epsilon_bonferroni(s, 0.05, 0.0).unwrap_err()),
            "scores.without"
        );
        let s = Scores {
            without: &[0.0],
            with: &[],
        };
        assert_eq!(
            error_name(gdp_epsilon(s, 0.05, 1e-5).unwrap_err()),
            "scores.with"
        );
        assert_eq!(
            error_name(epsilon_held_out(s, s, 0.05, 0.0).unwrap_err()),
            "calibration.with"
        );
        let t = Threshold::at_least(f64::NAN);
        let s = Scores {
            without: &[0.0],
            with: &[1.0],
        };
        assert_eq!(
            error_name(epsilon_at_threshold(s, t, 0.05, 0.0).unwrap_err()),
            "threshold.tau"
        );
    }
}
