//! The verdict of one training run's guesses on the claim that the trainer is a given run: the
//! claim is refuted or not, with the probability that a true claim is refuted. Issue 44: the
//! verdict was decided in Python (`reconbound.audit_trainer`); it is the core's, and
//! `reconbound estimate --guesses` with a run prints it.
//!
//! # The two tests and their error
//!
//! The claim "the trainer is `run`" implies that the trainer is (ε_c, δ)-DP for the run's
//! certified ε_c = ε(δ) (the smallest upper bound the accountants hold, [`certified_epsilon`]).
//!
//! 1. Steinke, Nasr & Jagielski 2023: their lower bound ε̂ ([`super::epsilon::one_run_epsilon`])
//!    satisfies P[ε̂ > ε] ≤ α for every (ε, δ)-DP mechanism. So under the claim,
//!    P[ε̂ > ε_c] ≤ α: ε̂ > ε_c refutes it at level α, for any trainer that meets the claim.
//! 2. Mahloujifar, Melis & Chaudhuri 2025 ([`super::one_run_family::one_run_fdp_family`]'s
//!    `claim_refuted`): the guesses against the claimed run's own certified trade-off curve,
//!    at level α as well, for any trainer whose curve is at least as private.
//!
//! The claim is refuted when either test refutes it. A true claim is refuted with probability
//! at most α per test run (the union bound): `error` = α·(tests), 2α when both ran.
//!
//! Neither test needs the trainer to be the claimed run: a trainer whose privacy is at least
//! the run's — (ε_c, δ)-DP and its trade-off curve at least the run's certified curve — is
//! refuted with probability ≤ `error`. (The family's `epsilon` lower bound is different: it
//! assumes the trainer is the run up to its noise.)
//!
//! Only runs whose guarantees are for add/remove adjacency get a verdict: the one-run game
//! adds and removes canaries, while fixed-size batches are certified for replace-one at a
//! fixed data-set size, which no theorem here connects to that game (an independent review,
//! issue 44). Shuffled epochs have no certified ε. Both are `Ok(Err(_))`.

use super::epsilon::one_run_epsilon;
use super::one_run_counts::{check_one_run, OneRunCounts};
use super::one_run_family::FamilyBound;
use crate::accounting::guarantees::tightest_epsilon;
use crate::accounting::run::{self, Adjacency, Run, Unsupported};
use crate::error::{check_open_unit, Result};

/// The verdict of [`one_run_verdict`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneRunVerdict {
    /// ε_c: the claimed run's certified ε(δ) ([`certified_epsilon`]).
    pub epsilon_certified: f64,
    /// Steinke et al.'s lower bound ε̂ (valid for any mechanism) is above ε_c.
    pub refuted_by_epsilon: bool,
    /// The f-DP test refutes the claimed curve (`None`: not run, no family bound given).
    pub refuted_by_curve: Option<bool>,
    /// Either test refutes the claim.
    pub refuted: bool,
    /// The probability that a true claim is refuted is at most this: α times the tests run.
    pub error: f64,
}

/// The smallest upper bound on `run`'s ε(δ) among the accountants that apply (the certified
/// PLD's, RDP's improved and Mironov's conversions: [`tightest_epsilon`]); `Ok(Err(why))`
/// when none applies (shuffled epochs).
///
/// # Errors
/// As [`run::epsilon_all`].
pub fn certified_epsilon(run: &Run, delta: f64) -> Result<core::result::Result<f64, Unsupported>> {
    Ok(run::epsilon_all(run, delta)?.map(|e| tightest_epsilon(&e.rdp, &e.rdp_mironov, &e.pld).1))
}

/// The verdict of one run's `counts` (m canaries, r guesses, v correct; a guessing rule fixed
/// before the guesses were seen) on the claim that the trainer is `run`, at level `alpha`
/// per test and `delta`; `family` is [`super::one_run_family::one_run_fdp_family`]'s bound for
/// the same counts, α, δ and run at one candidate rule, when it applies. `Ok(Err(why))` when
/// the run has no certified ε(δ) or its guarantees are not for add/remove adjacency
/// (fixed-size batches: module docs).
///
/// # Errors
/// [`crate::Error::InvalidParameter`] `alpha` or `delta` ∉ (0, 1);
/// [`crate::Error::InvalidCount`] the counts ([`super::epsilon::one_run_epsilon`]).
///
/// # Examples
///
/// ```
/// use reconbound::accounting::run::Run;
/// use reconbound::attacks::audit::epsilon::OneRunCounts;
/// use reconbound::attacks::audit::one_run_verdict::one_run_verdict;
/// // 1,000 canaries, 200 guesses, all right: far above what σ = 20 for 10 steps allows
/// let run = Run::poisson(0.5, 20.0, 10)?;
/// let c = OneRunCounts { canaries: 1000, guesses: 200, correct: 200 };
/// let v = one_run_verdict(c, 0.05, 1e-5, &run, None)?.unwrap();
/// assert!(v.refuted && v.refuted_by_epsilon && v.error == 0.05);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_verdict(
    counts: OneRunCounts,
    alpha: f64,
    delta: f64,
    run: &Run,
    family: Option<&FamilyBound>,
) -> Result<core::result::Result<OneRunVerdict, Unsupported>> {
    let alpha = check_open_unit("alpha", alpha)?;
    let delta = check_open_unit("delta", delta)?;
    let counts = check_one_run(counts)?;
    if run.adjacency() != Adjacency::AddRemove {
        return Ok(Err(Unsupported::PldFixedSize));
    }
    let certified = match certified_epsilon(run, delta)? {
        Ok(e) => e,
        Err(why) => return Ok(Err(why)),
    };
    let lower = one_run_epsilon(counts, alpha, delta, 1)?;
    let by_epsilon = lower > certified;
    let by_curve = family.map(|f| f.claim_refuted);
    let tests = if by_curve.is_some() { 2.0 } else { 1.0 };
    Ok(Ok(OneRunVerdict {
        epsilon_certified: certified,
        refuted_by_epsilon: by_epsilon,
        refuted_by_curve: by_curve,
        refuted: by_epsilon || by_curve == Some(true),
        error: (tests * alpha).min(1.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::pld::PldConfig;
    use crate::attacks::audit::one_run_family::one_run_fdp_family;

    fn counts(guesses: u64, correct: u64) -> OneRunCounts {
        OneRunCounts {
            canaries: 1000,
            guesses,
            correct,
        }
    }

    /// A weak claim (σ = 20, 10 steps) is refuted by 200 right guesses of 200, by both tests;
    /// the error is α per test. A strong claim (σ = 0.5) is not refuted by the same guesses
    /// — the negative control: a verdict that refuted everything would fail it.
    #[test]
    fn refutes_a_weak_claim_by_both_tests_and_not_a_strong_one() {
        let c = counts(200, 200);
        let weak = Run::poisson(0.5, 20.0, 10).unwrap();
        let f = one_run_fdp_family(c, 0.05, 1e-5, &weak, 1, &PldConfig::default())
            .unwrap()
            .unwrap();
        let v = one_run_verdict(c, 0.05, 1e-5, &weak, Some(&f))
            .unwrap()
            .unwrap();
        assert!(v.refuted && v.refuted_by_epsilon && v.refuted_by_curve == Some(true));
        assert_eq!(v.error, 0.1);
        let eps = certified_epsilon(&weak, 1e-5).unwrap().unwrap();
        assert_eq!(v.epsilon_certified, eps);
        let strong = Run::poisson(0.5, 0.5, 10).unwrap();
        let f = one_run_fdp_family(c, 0.05, 1e-5, &strong, 1, &PldConfig::default())
            .unwrap()
            .unwrap();
        let v = one_run_verdict(c, 0.05, 1e-5, &strong, Some(&f))
            .unwrap()
            .unwrap();
        assert!(!v.refuted && !v.refuted_by_epsilon && v.refuted_by_curve == Some(false));
    }

    /// ε_c is the smallest upper bound held: never above RDP's, and the PLD's when certified.
    #[test]
    fn the_certified_epsilon_is_the_smallest_upper_bound() {
        let run = Run::poisson(0.01, 1.1, 1000).unwrap();
        let all = run::epsilon_all(&run, 1e-5).unwrap().unwrap();
        let e = certified_epsilon(&run, 1e-5).unwrap().unwrap();
        assert_eq!(e, all.pld.unwrap().value);
        assert!(e <= all.rdp.epsilon && e <= all.rdp_mironov.epsilon);
    }

    /// Bad input names the parameter; shuffled epochs have no certified ε, fixed-size batches
    /// no add/remove guarantee: no verdict for either, however strong the guesses.
    #[test]
    fn refuses_bad_levels_and_says_why_without_a_certified_epsilon() {
        let run = Run::poisson(0.5, 1.0, 10).unwrap();
        assert!(one_run_verdict(counts(10, 10), 0.0, 1e-5, &run, None).is_err());
        assert!(one_run_verdict(counts(10, 10), 0.05, 1.0, &run, None).is_err());
        assert!(one_run_verdict(counts(10, 11), 0.05, 1e-5, &run, None).is_err());
        let shuffled = Run::shuffled(10, 100, 1.0, 20).unwrap();
        assert!(one_run_verdict(counts(10, 10), 0.05, 1e-5, &shuffled, None)
            .unwrap()
            .is_err());
        let fixed = Run::fixed_size(10, 100, 1.0, 20).unwrap();
        assert!(one_run_verdict(counts(200, 200), 0.05, 1e-5, &fixed, None)
            .unwrap()
            .is_err());
    }
}
