//! The f-DP one-run lower bound against the **claimed mechanism's own family of curves**
//! (issue 42): for a run described as Poisson phases (q_i, σ_i, T_i) — full batch,
//! Poisson sampling, schedules — the largest ε such that the one-run guesses refute the
//! certified trade-off curve of the same run with every noise multiplier scaled by a
//! common c > 0. Where the run's curve is not Gaussian (any q < 1) this replaces the
//! Gaussian-family bound ([`super::one_run_fdp::one_run_fdp_epsilon`]), which is a lower
//! bound only for Gaussian curves: on randomised response at ε₀ = 1 its median outcome
//! reads 1.643.
//!
//! # The family and why the bound holds (proof)
//! Let M_c be the run at noise scale c: the same sampling and steps, noise σ_i·c. Its
//! certified curves are those of the per-step dominating pair (the subsampled Gaussian of
//! one record, composed over the steps). For c′ ≥ c that pair at c′ is the pair at c
//! followed by independent Gaussian noise of variance (c′² − c²)σ_i² — a post-processing
//! — so each step's trade-off function, in each direction of adding or removing a record,
//! is pointwise at least the one at c (Dong, Roth & Su 2022, Lemma 2.9), and composition
//! keeps the order (their Lemma 3.2: the composition of larger trade-off functions is
//! larger). (The adaptive trainer is not literally a post-processing of the less noisy one
//! — later gradients see noisier iterates — but its curves are those of the dominating
//! pairs, which are.) So are the symmetrised convex claims T̃_c = max(f̌_c, f̌_c⁻¹) (f̌_c the
//! convex hull of the two directions' minimum) the f-DP test may use
//! ([`super::one_run_fdp::CurveClaim`]), and ε(δ) falls as c grows.
//!
//! Suppose the audited mechanism is M_1 (the trainer does what the run says). Each probe
//! tests, at level α, a certified lower bound ĝ_c ≤ T̃_c; a probe at c ≤ 1 tests a claim
//! below T̃_c ≤ T̃_1. The recursion's refutation is monotone in the claim (module docs of
//! [`super::one_run_fdp`]), so any refutation at some c ≤ 1 implies the recursion with
//! T̃_1 itself refutes — an event of probability < α since M_1 is T̃_1-DP. The bound
//! reported is ε_lo(c*), the certified *lower* end of ε(δ) of M_{c*} for a refuted scale
//! c*. If it exceeded ε(δ) of M_1, then ε(M_{c*}) ≥ ε_lo(c*) > ε(M_1), so c* < 1 (ε falls
//! as the noise grows) and a claim at a scale below 1 was refuted: probability < α,
//! **however many scales were probed** — the search needs no Bonferroni correction, only
//! the number of guess rules tried (`candidates`, as elsewhere).
//!
//! The bound is on the ε of the mechanism that ran, *assuming it is a member of the
//! family* (the trainer is the claimed run up to its noise); the (ε, δ) bound of Steinke
//! et al. ([`super::epsilon::one_run_epsilon`]) needs no such assumption. The claim itself
//! (c = 1) is tested and reported separately (`claim_refuted`, `p_value`), valid for any
//! mechanism.
//!
//! # The search
//! The refuted scales are (about) an interval [c*, ∞): more noise, less leakage, a claim
//! easier to refute; the bound wants c*, the least noise still refuted. From c = 1: if
//! refuted, halving down (to [`MIN_NOISE_SCALE`]) while refuted; if not, doubling up (to
//! [`MAX_NOISE_SCALE`]) until refuted; then bisection on ln c until the refuted and the
//! unrefuted scale are within 1 % ([`SCALE_TOLERANCE`]). A probe whose curve cannot be
//! certified (the PLD grid too large at a tiny scale) counts as not refuted: the search
//! only ever reports a scale it saw refuted. Refutation of the *certified* curves need not
//! be exactly monotone in c (each is computed on its own grid); the bisection then finds
//! one refuted scale, not necessarily the largest — still a valid bound.
//!
//! Fixed-size batches and shuffled epochs have no add/remove curve here (the crate's
//! fixed-size curve is replace-one, and the one-run game adds and removes canaries), so
//! they are refused with [`Unsupported`].

use super::one_run_counts::{check_one_run, OneRunCounts};
use super::one_run_fdp::{check_candidates, p_value_of, refutes_at, CurveClaim};
use crate::accounting::pld::PldConfig;
use crate::accounting::run::{self, Run, Unsupported};
use crate::accounting::schedule::Schedule;
use crate::accounting::tradeoff::TradeoffCurve;
use crate::error::{check_open_unit, Result};

/// The smallest noise scale the search tries (σ/64: a trainer with far less noise than it
/// claims is reported at this scale).
pub const MIN_NOISE_SCALE: f64 = 1.0 / 64.0;

/// The largest noise scale the search tries (4096·σ: guesses that refute no curve up to it
/// report ε = 0).
pub const MAX_NOISE_SCALE: f64 = 4096.0;

/// The bisection stops when the refuted and the unrefuted scale differ by at most this
/// factor (1 %).
pub const SCALE_TOLERANCE: f64 = 1.01;

/// The resolution of each probe's curve ([`TradeoffCurve::of_schedule`]): the claim is
/// read near 0 through its inverse, where small levels matter.
const PROBE_RESOLUTION: f64 = 1e-6;

/// The f-DP one-run bound against a run's own family (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FamilyBound {
    /// The lower bound on ε(δ) of the mechanism that ran, if a member of the family (0 when
    /// no scale up to [`MAX_NOISE_SCALE`] is refuted).
    pub epsilon: f64,
    /// The refuted noise scale c* the bound is the ε of (`None`: none refuted).
    pub noise_scale: Option<f64>,
    /// The claimed run itself (c = 1) is refuted at level α/K.
    pub claim_refuted: bool,
    /// The p-value of the claimed run's curve: K·p with p from
    /// [`super::one_run_fdp::one_run_fdp_p_value`] and K the `candidates` (Bonferroni), at
    /// most 1 — comparable with α as it is.
    pub p_value: f64,
    /// The number of curves probed.
    pub probes: u32,
}

/// One probe: whether the guesses refute, at `level`, the certified curve of `schedule`
/// scaled by `scale` (`false` when that curve cannot be certified).
fn refuted_at(
    c: OneRunCounts,
    level: f64,
    schedule: &Schedule,
    scale: f64,
    config: &PldConfig,
) -> Result<bool> {
    let Ok(s) = schedule.scaled(scale) else {
        return Ok(false);
    };
    let Ok(curve) = TradeoffCurve::of_schedule(&s, PROBE_RESOLUTION, config) else {
        return Ok(false);
    };
    let claim = CurveClaim::new(&curve)?;
    refutes_at(c, level, &mut |x| claim.beta_lower(x))
}

/// The largest ε such that one-run guesses refute, at level α/K, the certified curve of
/// `run` with its noise multipliers scaled (module docs), and the verdict on `run` itself.
///
/// # Formula
///
/// ε = ε_lo(c*) with c* = the smallest noise scale found (to 1 %) whose certified curve
/// the recursion of [`super::one_run_fdp::one_run_fdp_refutes`] refutes at α/K, ε_lo the
/// certified lower end of the PLD ε(δ) of the run at scale c* ([`run::pld_epsilon`]); 0
/// when no scale up to 4096 is refuted. If the mechanism that ran is the run at some
/// scale c₀, P[ε > ε(δ) at c₀] < α.
///
/// # Citations
///
/// Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One Run", ICML 2025
/// (the test); Dong, Roth & Su 2022, Lemma 2.9 (post-processing orders the family); the
/// proof in the module docs.
///
/// # Errors
///
/// [`crate::Error::InvalidParameter`] `alpha` or `delta` ∉ (0, 1);
/// [`crate::Error::InvalidCount`] the counts (as [`super::one_run_fdp::one_run_fdp_refutes`])
/// or `candidates` = 0; the claimed run's own curve not certifiable (its PLD grid too
/// large). `Ok(Err(_))` for fixed-size batches and shuffled epochs (module docs).
///
/// # Examples
///
/// ```
/// use reconbound::accounting::pld::PldConfig;
/// use reconbound::accounting::run::Run;
/// use reconbound::attacks::audit::epsilon::OneRunCounts;
/// use reconbound::attacks::audit::one_run_family::one_run_fdp_family;
/// // 1,000 canaries, 100 guesses, 95 right, against 10 steps at q = 0.5, σ = 1
/// let run = Run::poisson(0.5, 1.0, 10)?;
/// let c = OneRunCounts { canaries: 1000, guesses: 100, correct: 95 };
/// let b = one_run_fdp_family(c, 0.05, 1e-5, &run, 1, &PldConfig::default())?.unwrap();
/// assert!(b.epsilon > 0.0 && !b.claim_refuted);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn one_run_fdp_family(
    counts: OneRunCounts,
    alpha: f64,
    delta: f64,
    run: &Run,
    candidates: u64,
    config: &PldConfig,
) -> Result<core::result::Result<FamilyBound, Unsupported>> {
    let c = check_one_run(counts)?;
    let alpha = check_open_unit("alpha", alpha)?;
    let delta = check_open_unit("delta", delta)?;
    let level = alpha / check_candidates(candidates)? as f64;
    config.validate()?;
    let Some(schedule) = run.as_schedule() else {
        return Ok(Err(match run.sampling() {
            Some(run::Sampling::Shuffled { .. }) => Unsupported::Shuffled,
            _ => Unsupported::PldFixedSize,
        }));
    };
    // the claim itself: its curve must be certifiable (an error, not a skipped probe)
    let curve = TradeoffCurve::of_schedule(schedule, PROBE_RESOLUTION, config)?;
    let claim = CurveClaim::new(&curve)?;
    let mut g = |x: f64| claim.beta_lower(x);
    let claim_refuted = refutes_at(c, level, &mut g)?;
    let p_value = (p_value_of(c, &mut g)? * candidates as f64).min(1.0);
    let mut probes = 1u32;
    // refuted scales form (about) [c*, ∞): more noise, less leakage, easier to refute.
    // (refuted, not refuted) as the search goes
    let (mut refuted, mut kept): (Option<f64>, Option<f64>) = if claim_refuted {
        (Some(1.0), None)
    } else {
        (None, Some(1.0))
    };
    if claim_refuted {
        // less noise while still refuted
        let mut s = 0.5;
        while s >= MIN_NOISE_SCALE {
            probes += 1;
            if refuted_at(c, level, schedule, s, config)? {
                refuted = Some(s);
                s *= 0.5;
            } else {
                kept = Some(s);
                break;
            }
        }
    } else {
        // more noise until refuted
        let mut s = 2.0;
        while s <= MAX_NOISE_SCALE {
            probes += 1;
            if refuted_at(c, level, schedule, s, config)? {
                refuted = Some(s);
                break;
            }
            kept = Some(s);
            s *= 2.0;
        }
    }
    if let (Some(mut r), Some(mut n)) = (refuted, kept) {
        while r > n * SCALE_TOLERANCE {
            let mid = libm::sqrt(r) * libm::sqrt(n);
            if !(mid > n && mid < r) {
                break;
            }
            probes += 1;
            if refuted_at(c, level, schedule, mid, config)? {
                r = mid;
            } else {
                n = mid;
            }
        }
        refuted = Some(r);
    }
    let Some(scale) = refuted else {
        return Ok(Ok(FamilyBound {
            epsilon: 0.0,
            noise_scale: None,
            claim_refuted,
            p_value,
            probes,
        }));
    };
    let scaled = Run::schedule(schedule.scaled(scale)?);
    let epsilon = match run::pld_epsilon(&scaled, delta)? {
        Ok(e) => e.lower.max(0.0),
        // a refuted scale whose ε cannot be bracketed reports nothing (never a guess)
        Err(_) => 0.0,
    };
    Ok(Ok(FamilyBound {
        epsilon,
        noise_scale: Some(scale),
        claim_refuted,
        p_value,
        probes,
    }))
}

#[cfg(test)]
mod tests;
