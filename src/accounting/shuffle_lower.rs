//! A certified **lower** bound on the ε of DP-SGD with shuffled batches (ABLQ_S), the number
//! a Poisson accountant must not be used to replace.
//!
//! Implementations often shuffle the data once per epoch and cut it into batches, yet report
//! the ε of Poisson sampling at the same rate q = B/n. Chua, Ghazi, Kamath, Kumar,
//! Manurangsi, Sinha & Zhang (ICML 2024, "How private are DP-SGD implementations?") show that
//! the two can differ by a wide margin: shuffling can be far **less** private. This module
//! computes, in closed form, a lower bound on the ε(δ) of the shuffled mechanism from one
//! pair of neighbouring inputs of theirs; an audit of a shuffled trainer is shown beside it
//! ([`crate::attacks::audit`]).
//!
//! # The mechanism and the instance
//!
//! ABLQ_S: the n′ slots of the data are shuffled at the start of each of E epochs and cut into
//! T_b = n′/B batches of B; each step releases its batch's sum of clipped gradients plus
//! N(0, σ²C²I). Neighbours are **zero-out** neighbours (one slot holds a record or ⊥, whose
//! gradient is 0): the pair the crate's audits train (world D holds a zero-gradient secret in
//! the canary's slot), and for Poisson sampling the same PLD as add/remove, so a Poisson
//! claim is a claim about this pair too.
//!
//! The instance (their construction with the other records at −1 and the differing one at
//! +1): the n′ − 1 other slots all hold a record whose clipped gradient is g, ‖g‖ = C; the
//! differing slot holds −g (world 1) or ⊥ (world 0). Project each release on −g/C² and add
//! B: a batch without the differing slot gives exactly 0 + noise, the slot's batch gives
//! 1 + noise in world 0 (one −1 fewer) and 2 + noise in world 1. The projection is
//! post-processing, so with y ∈ ℝ^{E·T_b} these scores (noise N(0, σ²) per coordinate, the
//! slot's batch t*_e uniform in each epoch e, independently):
//!
//!   P (world 0): y_{e,t} = [t = t*_e] + σξ,   Q (world 1): y_{e,t} = 2·[t = t*_e] + σξ,
//!
//! and every (ε, δ) the mechanism satisfies holds between P and Q in both directions.
//!
//! # The bound
//!
//! For any event A, (ε, δ)-DP gives Q(A) ≤ e^ε P(A) + δ and P(A) ≤ e^ε Q(A) + δ, so
//! ε ≥ ln((Q(A) − δ)/P(A)) and ε ≥ ln((P(A) − δ)/Q(A)). With A_τ = {max_{e,t} y_{e,t} ≤ τ}
//! both probabilities are products (the epochs and, given t*, the coordinates are
//! independent):
//!
//!   ln P(A_τ) = E·[ln Φ((τ − 1)/σ) + (T_b − 1)·ln Φ(τ/σ)],
//!   ln Q(A_τ) = E·[ln Φ((τ − 2)/σ) + (T_b − 1)·ln Φ(τ/σ)].
//!
//! [`epsilon_lower_bound`] takes the best of both directions, for A_τ and its complement,
//! over a grid of τ: every τ gives a valid bound, so the grid's maximum is one. The
//! probabilities are moved against the bound by 1e-12 relative before the logarithm (ln Φ
//! is accurate to about 1e-15), so rounding never raises it.
//!
//! The max test is not the Neyman–Pearson test of (P, Q) (the audit scores with the
//! likelihood ratio); the bound is close to the exact ε of the pair for one epoch (within
//! 0.04 of the μ-GDP ε at μ = 1/σ, which dominates the pair by joint convexity, at
//! σ ≤ 1 and T_b ≤ 100) and looser for several epochs. It is a lower bound on the
//! mechanism's ε, never an upper one: the shuffled mechanism's true ε is unknown (Chua et
//! al. give no tight accountant) and is at most that of √E/σ-GDP (the slot's batch revealed,
//! which [`upper_bound_mu`] states).
//!
//! # Citations
//!
//! Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024, §3–4 (ABLQ_S, the
//! lower-bound instance); Annamalai, Balle, Hayes & De Cristofaro, NDSS 2026 (auditing it).

use crate::error::{check_count, check_open_unit, check_positive, Error, Result};
use crate::math::normal::log_cdf;

/// Grid points of τ searched by [`epsilon_lower_bound`].
const GRID: usize = 20_000;
/// Relative margin moving each probability against the bound before its logarithm.
const ROUNDING: f64 = 1e-12;

/// A lower bound on the ε(δ) of shuffled DP-SGD, and the test that gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShuffleLowerBound {
    /// ε: the mechanism is not (ε′, δ)-DP for any ε′ below it.
    pub epsilon: f64,
    /// The threshold τ (in units of the clipping norm) of the max test that gives it.
    pub threshold: f64,
    /// `true` when the event is {max > τ} (world 1 against world 0), `false` for {max ≤ τ}
    /// (world 0 against world 1).
    pub max_above: bool,
}

/// The μ of the Gaussian-DP curve that dominates the module's instance: √E/σ (its slot's
/// batch revealed, E full-batch Gaussian steps of sensitivity 1 at noise σ).
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_multiplier` unless finite and > 0;
/// [`Error::InvalidCount`] `epochs` = 0.
pub fn upper_bound_mu(noise_multiplier: f64, epochs: u64) -> Result<f64> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_count("epochs", epochs, 1, ">= 1")?;
    Ok(libm::sqrt(epochs as f64) / noise_multiplier)
}

/// A lower bound on ε(δ) of DP-SGD with shuffled batches (module docs): noise multiplier σ,
/// `batches_per_epoch` = T_b batches in each of `epochs` epochs, zero-out neighbours.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_multiplier` unless finite and > 0, `delta` unless in
/// (0, 1); [`Error::InvalidCount`] `batches_per_epoch` or `epochs` = 0, or their product
/// above 10¹².
///
/// # Examples
///
/// ```
/// use reconbound::accounting::shuffle_lower::epsilon_lower_bound;
/// // 100 batches, one epoch, σ = 1: a Poisson accountant at q = 0.01 says ε = 0.72.
/// let lb = epsilon_lower_bound(1.0, 100, 1, 1e-5)?;
/// assert!(lb.epsilon > 4.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn epsilon_lower_bound(
    noise_multiplier: f64,
    batches_per_epoch: u64,
    epochs: u64,
    delta: f64,
) -> Result<ShuffleLowerBound> {
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    check_open_unit("delta", delta)?;
    check_count("batches_per_epoch", batches_per_epoch, 1, ">= 1")?;
    check_count("epochs", epochs, 1, ">= 1")?;
    let total = batches_per_epoch.saturating_mul(epochs);
    if total > 1_000_000_000_000 {
        return Err(Error::InvalidCount {
            name: "batches_per_epoch",
            value: total,
            expected: "batches_per_epoch × epochs <= 1e12",
        });
    }
    let (e, others) = (epochs as f64, (batches_per_epoch - 1) as f64);
    // τ from below the slot's mean to far above the largest of the E·T_b noise maxima.
    let spread = sigma * (10.0 + libm::sqrt(2.0 * libm::log(total as f64 + 1.0)));
    let (lo, hi) = (-spread, 2.0 + spread);
    let mut best = ShuffleLowerBound {
        epsilon: 0.0,
        threshold: 0.0,
        max_above: true,
    };
    for k in 0..=GRID {
        let tau = lo + (hi - lo) * (k as f64 / GRID as f64);
        let rest = others * log_cdf(tau / sigma);
        let log_p = e * (log_cdf((tau - 1.0) / sigma) + rest);
        let log_q = e * (log_cdf((tau - 2.0) / sigma) + rest);
        // {max > τ}: Q(A) − δ over P(A); {max ≤ τ}: P(A) − δ over Q(A).
        let above = ratio_bound(-libm::expm1(log_q), -libm::expm1(log_p), delta);
        let below = ratio_bound(libm::exp(log_p), libm::exp(log_q), delta);
        for (eps, max_above) in [(above, true), (below, false)] {
            if eps > best.epsilon {
                best = ShuffleLowerBound {
                    epsilon: eps,
                    threshold: tau,
                    max_above,
                };
            }
        }
    }
    Ok(best)
}

/// ln((num − δ)/den) with num moved down and den up by [`ROUNDING`]; 0 when not positive or
/// not finite (an event that shows nothing).
fn ratio_bound(num: f64, den: f64, delta: f64) -> f64 {
    let num = num * (1.0 - ROUNDING) - delta;
    let den = den * (1.0 + ROUNDING);
    if num > 0.0 && den > 0.0 {
        let v = libm::log(num / den);
        if v.is_finite() {
            return v.max(0.0);
        }
    }
    0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::gaussian::analytic_epsilon;
    use crate::accounting::pld::{epsilon, PldConfig};

    /// Values from an independent evaluation of the same max test (scipy's norm.logcdf, a
    /// 6,000-point τ grid on [−3, 15]): the crate's finer grid may only be higher, and by
    /// little (the optimum is flat); tolerance 0.02 above, 1e-3 below (grid resolution).
    #[test]
    fn max_test_bound_matches_an_independent_evaluation() {
        for &(sigma, tb, epochs, want) in &[
            (1.0, 100, 1, 4.063),
            (1.0, 10, 1, 4.343),
            (0.7, 10, 1, 6.651),
            (1.5, 100, 1, 1.464),
            (2.0, 10, 2, 1.590),
        ] {
            let got = epsilon_lower_bound(sigma, tb, epochs, 1e-5)
                .unwrap()
                .epsilon;
            assert!(
                got > want - 1e-3 && got < want + 0.02,
                "σ {sigma}, T_b {tb}, E {epochs}: {got} against {want}"
            );
        }
    }

    /// The pair is dominated by √E/σ-GDP (module docs): the lower bound may never exceed
    /// that ε. A bound that forgot the −1 of the slot's world-0 mean (P with no shift)
    /// would be the zero-out mixture, far below; one that forgot the mixture (t* known)
    /// would equal the GDP ε exactly — at σ = 1, T_b = 100 the max test gives 4.063 < 4.378.
    #[test]
    fn bound_never_exceeds_the_dominating_gaussian() {
        for &sigma in &[0.5, 0.8, 1.0, 2.0, 4.0] {
            for &tb in &[1u64, 2, 10, 100, 1000] {
                for &epochs in &[1u64, 3] {
                    let lb = epsilon_lower_bound(sigma, tb, epochs, 1e-5).unwrap();
                    let mu = upper_bound_mu(sigma, epochs).unwrap();
                    let gdp = analytic_epsilon(1e-5, mu).unwrap();
                    assert!(lb.epsilon <= gdp + 1e-9, "σ {sigma} T_b {tb} E {epochs}");
                }
            }
        }
        // One batch per epoch is the full batch: the max test is the Gaussian's best test.
        let one = epsilon_lower_bound(1.0, 1, 1, 1e-5).unwrap().epsilon;
        let gdp = analytic_epsilon(1e-5, 1.0).unwrap();
        assert!((one - gdp).abs() < 1e-3, "{one} against {gdp}");
    }

    /// Chua et al.'s point: the Poisson accountant's ε at q = 1/T_b (0.718 at σ = 1,
    /// q = 0.01, 100 steps, δ = 1e-5, the crate's PLD) is far below the shuffled
    /// mechanism's.
    #[test]
    fn shuffled_mechanism_exceeds_the_poisson_claim() {
        let poisson = epsilon(0.01, 1.0, 100, 1e-5, &PldConfig::default())
            .unwrap()
            .value;
        let lb = epsilon_lower_bound(1.0, 100, 1, 1e-5).unwrap().epsilon;
        assert!(
            poisson < 0.8 && lb > 5.0 * poisson,
            "{lb} against {poisson}"
        );
    }

    #[test]
    fn bad_input_names_the_parameter() {
        let name = |r: Result<ShuffleLowerBound>| match r {
            Err(Error::InvalidParameter { name, .. } | Error::InvalidCount { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            name(epsilon_lower_bound(0.0, 10, 1, 1e-5)),
            "noise_multiplier"
        );
        assert_eq!(
            name(epsilon_lower_bound(f64::NAN, 10, 1, 1e-5)),
            "noise_multiplier"
        );
        assert_eq!(
            name(epsilon_lower_bound(1.0, 0, 1, 1e-5)),
            "batches_per_epoch"
        );
        assert_eq!(name(epsilon_lower_bound(1.0, 10, 0, 1e-5)), "epochs");
        assert_eq!(name(epsilon_lower_bound(1.0, 10, 1, 0.0)), "delta");
        assert_eq!(name(epsilon_lower_bound(1.0, 10, 1, 1.0)), "delta");
        assert_eq!(
            name(epsilon_lower_bound(1.0, 1 << 40, 1 << 20, 1e-5)),
            "batches_per_epoch"
        );
    }
}
