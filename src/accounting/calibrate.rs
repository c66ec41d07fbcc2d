//! One calibrator for every target: the noise that makes a DP-SGD run meet a target
//! guarantee, always on the safe side (the returned noise was verified to meet the target).
//!
//! A [`Target`] is what the run must guarantee — ε(δ) by RDP, a ReRo γ at baseline κ
//! (Hayes et al. 2023), or a membership risk read from the certified trade-off curve
//! ([`crate::accounting::tradeoff`]: the advantage, or the TPR at an FPR; Kulynych et al.
//! 2024 calibrate to these) — and the run is one phase (Poisson rate q, T steps: the calibrated
//! noise multiplier σ, [`noise_multiplier`]) or a schedule of phases (the factor c applied to
//! every σ_i, [`noise_scale`]). Each answer carries the guarantee it achieves.
//!
//! Bisection on the decreasing map from the noise to the guarantee, keeping an end that meets
//! the target: [`rdp::calibrate_noise_multiplier`], [`Schedule::calibrate_noise_scale`],
//! [`rero::dpsgd::calibrate_noise_multiplier`], [`rero::schedule::calibrate_noise_scale`]
//! (their docs give the tolerances and the ranges searched).
//!
//! # Examples
//! ```
//! use reconbound::accounting::calibrate::{noise_multiplier, Target};
//!
//! // the σ for ε = 2 at δ = 1e-5 (q = 0.01, 1,000 steps), and for γ = 0.2 at κ = 0.1
//! let e = noise_multiplier(Target::Epsilon { epsilon: 2.0, delta: 1e-5 }, 0.01, 1000)?;
//! assert!(e.achieved <= 2.0 && e.achieved > 1.99);
//! let g = noise_multiplier(Target::Gamma { gamma: 0.2, kappa: 0.1 }, 1.0, 10)?;
//! assert!(g.achieved <= 0.2);
//! # Ok::<(), reconbound::Error>(())
//! ```

use crate::accounting::pld::PldConfig;
use crate::accounting::rdp::{self, Conversion};
use crate::accounting::rero;
use crate::accounting::schedule::{Phase, Schedule};
use crate::accounting::tradeoff::TradeoffCurve;
use crate::error::{check_open_unit, invalid, Result};

/// What a calibrated run must guarantee.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// ε(δ) ≤ `epsilon` by RDP (improved conversion).
    Epsilon {
        /// The target ε (finite, > 0).
        epsilon: f64,
        /// δ ∈ (0, 1).
        delta: f64,
    },
    /// Reconstruction robustness: any attack's success ≤ `gamma` at baseline κ (Hayes et al.
    /// 2023 Thm 2, certified).
    Gamma {
        /// The target γ ∈ (κ, 1).
        gamma: f64,
        /// The baseline κ ∈ (0, 1).
        kappa: f64,
    },
    /// Membership advantage max(TPR − FPR) ≤ `advantage` (certified upper bracket of the
    /// trade-off curve's TV).
    Advantage {
        /// The target advantage ∈ (0, 1).
        advantage: f64,
    },
    /// Membership TPR ≤ `tpr` at false-positive rate `fpr` (certified upper bracket of
    /// 1 − f(FPR)).
    Tpr {
        /// The target TPR ∈ (FPR, 1).
        tpr: f64,
        /// The FPR ∈ (0, 1).
        fpr: f64,
    },
}

/// Checks a risk target and returns (the target value, the curve's resolution).
fn risk_target(target: Target) -> Result<(f64, f64)> {
    match target {
        Target::Advantage { advantage } => {
            let a = check_open_unit("target_advantage", advantage)?;
            Ok((a, a.min(1e-3)))
        }
        Target::Tpr { tpr, fpr } => {
            let fpr = check_open_unit("fpr", fpr)?;
            let t = check_open_unit("target_tpr", tpr)?;
            if t <= fpr {
                return invalid(
                    "target_tpr",
                    t,
                    "in (fpr, 1): the blind guess already has TPR = FPR",
                );
            }
            Ok((t, fpr.min(1e-3)))
        }
        _ => invalid("target", f64::NAN, "a risk target"),
    }
}

/// The certified upper bracket of a risk target's measure for the schedule.
fn risk_of(target: Target, schedule: &Schedule, resolution: f64) -> Result<f64> {
    let curve = TradeoffCurve::of_schedule(schedule, resolution, &PldConfig::default())?;
    Ok(match target {
        Target::Tpr { fpr, .. } => curve.tpr(fpr)?.upper,
        _ => curve.advantage().upper,
    })
}

/// Largest factor searched: the noise multipliers of the schedule times this.
const MAX_SCALE: f64 = 1e8;

/// The smallest factor c (to relative 1e-5) with the risk of `schedule` scaled by c at most
/// the target: grow or shrink by 2 from c = 1 to a bracket, then bisect on log c.
fn calibrate_risk(target: Target, schedule: &Schedule) -> Result<Calibrated> {
    let (want, resolution) = risk_target(target)?;
    // As σ → 0 the record's steps are identified with certainty: the advantage tends to
    // 1 − p₀ and the TPR at FPR α to 1 − p₀(1 − α), p₀ = Π(1 − q_i)^{T_i} the probability
    // that it is never sampled; every σ > 0 stays at or below these (rounded up), so a
    // target at or above them is met by every σ and there is nothing to calibrate.
    let phases: alloc::vec::Vec<(f64, u64)> = schedule
        .merged()
        .iter()
        .map(|p| (p.sampling_rate, p.steps))
        .collect();
    let (limit, name) = match target {
        Target::Tpr { fpr, .. } => (rero::dpsgd::gamma_limit(fpr, &phases), "target_tpr"),
        _ => (rero::dpsgd::gamma_limit(0.0, &phases), "target_advantage"),
    };
    if want >= limit && limit < 1.0 {
        return invalid(
            name,
            want,
            "below the σ → 0 limit (1 − p₀(1 − FPR) for a TPR, 1 − p₀ for the advantage, p₀ the probability that the record is never sampled): every noise multiplier meets a target at or above it",
        );
    }
    // a noise whose curve cannot be certified (its PLD grid too large: small σ at a tiny
    // FPR) is one that is not shown to meet the target — the search moves on to more noise
    // instead of giving up on a reachable target (issue 43); only a certified risk is ever
    // returned
    let uncertified = core::cell::Cell::new(false);
    let risk = |c: f64| -> Result<f64> {
        match risk_of(target, &schedule.scaled(c)?, resolution) {
            Err(crate::Error::Numerical { .. }) => {
                uncertified.set(true);
                Ok(f64::INFINITY)
            }
            other => other,
        }
    };
    let max_sigma = schedule
        .phases()
        .iter()
        .map(|p| p.noise_multiplier)
        .fold(0.0f64, f64::max);
    let cap = MAX_SCALE / max_sigma.max(1e-300);
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    let mut at_hi = risk(hi)?;
    if at_hi <= want {
        // shrink until the target is missed
        loop {
            lo = 0.5 * hi;
            if lo < 1e-6 {
                break;
            }
            let r = risk(lo)?;
            if r > want {
                break;
            }
            hi = lo;
            at_hi = r;
        }
    } else {
        while at_hi > want {
            lo = hi;
            hi *= 2.0;
            if hi > cap {
                return Err(crate::Error::Numerical {
                    what: "no noise multiplier up to 1e8 meets the target",
                    value: want,
                });
            }
            at_hi = risk(hi)?;
        }
    }
    let mut lo_uncertified = false;
    while hi / lo > 1.0 + 1e-5 {
        let mid = libm::sqrt(lo * hi);
        uncertified.set(false);
        let r = risk(mid)?;
        if r <= want {
            hi = mid;
            at_hi = r;
        } else {
            lo = mid;
            lo_uncertified = uncertified.get();
        }
    }
    Ok(Calibrated {
        noise: hi,
        achieved: at_hi,
        smallest_certifiable: lo_uncertified,
    })
}

/// A calibrated noise and the guarantee it achieves.
///
/// For the risk targets the noise is found by bisection on log c between a noise that meets
/// the target (its certified upper bracket does) and one that does not, to relative 1e-5;
/// `achieved` is the upper bracket at the returned noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibrated {
    /// The noise multiplier σ (one phase) or the factor c on every σ_i (a schedule).
    pub noise: f64,
    /// The guarantee achieved at that noise (ε by RDP, or the certified γ's upper end):
    /// at most the target.
    pub achieved: f64,
    /// `true` when a little less noise could not be certified (a risk target at a tiny FPR:
    /// the PLD grid's limit), so `noise` is the smallest certifiable noise that meets the
    /// target, not necessarily the smallest that does; `false` otherwise.
    pub smallest_certifiable: bool,
}

/// The smallest noise multiplier σ (to the bisection's tolerance) such that T steps at
/// Poisson rate q meet `target`.
///
/// # Errors
/// An invalid target or run; a target no σ in the searched range reaches
/// ([`crate::Error::Numerical`] or [`crate::Error::NotConverged`]).
pub fn noise_multiplier(target: Target, sampling_rate: f64, steps: u64) -> Result<Calibrated> {
    match target {
        Target::Advantage { .. } | Target::Tpr { .. } => {
            let one = Schedule::single(Phase {
                sampling_rate,
                noise_multiplier: 1.0,
                steps,
            })?;
            calibrate_risk(target, &one)
        }
        Target::Epsilon { epsilon, delta } => {
            let c = Conversion::Improved;
            let sigma = rdp::calibrate_noise_multiplier(epsilon, delta, sampling_rate, steps, c)?;
            let achieved = rdp::epsilon(sampling_rate, sigma, steps, delta, c)?.epsilon;
            Ok(Calibrated {
                noise: sigma,
                achieved,
                smallest_certifiable: false,
            })
        }
        Target::Gamma { gamma, kappa } => {
            let sigma =
                rero::dpsgd::calibrate_noise_multiplier(gamma, kappa, sampling_rate, steps)?;
            let achieved = rero::dpsgd::gamma(kappa, sampling_rate, sigma, steps)?.gamma;
            Ok(Calibrated {
                noise: sigma,
                achieved,
                smallest_certifiable: false,
            })
        }
    }
}

/// The smallest factor c (to the bisection's tolerance) such that `schedule` with every σ_i
/// multiplied by c meets `target`.
///
/// # Errors
/// As [`noise_multiplier`].
pub fn noise_scale(target: Target, schedule: &Schedule) -> Result<Calibrated> {
    match target {
        Target::Advantage { .. } | Target::Tpr { .. } => calibrate_risk(target, schedule),
        Target::Epsilon { epsilon, delta } => {
            let c = Conversion::Improved;
            let scale = schedule.calibrate_noise_scale(epsilon, delta, c)?;
            let achieved = schedule.scaled(scale)?.epsilon_rdp(delta, c)?.epsilon;
            Ok(Calibrated {
                noise: scale,
                achieved,
                smallest_certifiable: false,
            })
        }
        Target::Gamma { gamma, kappa } => {
            let scale = rero::schedule::calibrate_noise_scale(gamma, kappa, schedule)?;
            let achieved = rero::schedule::gamma(kappa, &schedule.scaled(scale)?)?.gamma;
            Ok(Calibrated {
                noise: scale,
                achieved,
                smallest_certifiable: false,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::schedule::Phase;

    /// The answer meets its target, and 1 % less noise does not (the calibration is tight to
    /// its tolerance, 1e-6 relative for ε and 1e-4 for γ, far below 1 %).
    #[test]
    fn calibrated_noise_meets_the_target_and_one_percent_less_does_not() {
        let t = Target::Epsilon {
            epsilon: 2.0,
            delta: 1e-5,
        };
        let e = noise_multiplier(t, 0.01, 1000).unwrap();
        assert!(e.achieved <= 2.0);
        let less = rdp::epsilon(0.01, 0.99 * e.noise, 1000, 1e-5, Conversion::Improved);
        assert!(less.unwrap().epsilon > 2.0);
        let t = Target::Gamma {
            gamma: 0.3,
            kappa: 0.1,
        };
        let g = noise_multiplier(t, 1.0, 10).unwrap();
        assert!(g.achieved <= 0.3);
        let less = rero::dpsgd::gamma(0.1, 1.0, 0.99 * g.noise, 10).unwrap();
        assert!(less.gamma > 0.3);
    }

    /// A one-phase schedule's scale is the one-phase σ divided by the phase's σ (to the
    /// tolerances), and the scaled schedule meets the target.
    #[test]
    fn schedule_scale_meets_the_target() {
        let s = Schedule::new(&[
            Phase {
                sampling_rate: 0.01,
                noise_multiplier: 2.0,
                steps: 100,
            },
            Phase {
                sampling_rate: 0.01,
                noise_multiplier: 1.0,
                steps: 900,
            },
        ])
        .unwrap();
        let t = Target::Epsilon {
            epsilon: 2.0,
            delta: 1e-5,
        };
        let c = noise_scale(t, &s).unwrap();
        assert!(c.achieved <= 2.0 && c.achieved > 1.99, "{c:?}");
    }

    /// The risk targets: the σ for advantage 0.1 (q = 0.01, T = 1000) and for TPR 0.05 at
    /// FPR 0.01 gives a curve whose upper bracket meets the target, and 1 % less noise does
    /// not (the search is tight to 1e-5 relative).
    #[test]
    fn risk_calibration_round_trips_and_one_percent_less_noise_misses() {
        let risk = |t: Target, sigma: f64| -> f64 {
            let s = Schedule::single(Phase {
                sampling_rate: 0.01,
                noise_multiplier: sigma,
                steps: 1000,
            })
            .unwrap();
            let c = TradeoffCurve::of_schedule(&s, 1e-3, &PldConfig::default()).unwrap();
            match t {
                Target::Tpr { fpr, .. } => c.tpr(fpr).unwrap().upper,
                _ => c.advantage().upper,
            }
        };
        for (t, want) in [
            (Target::Advantage { advantage: 0.1 }, 0.1),
            (
                Target::Tpr {
                    tpr: 0.05,
                    fpr: 0.01,
                },
                0.05,
            ),
        ] {
            let c = noise_multiplier(t, 0.01, 1000).unwrap();
            assert!(c.achieved <= want, "{t:?}: {c:?}");
            assert!(risk(t, c.noise) <= want);
            assert!(risk(t, 0.99 * c.noise) > want, "{t:?}: {c:?}");
        }
    }

    /// A TPR target at or below its FPR, or outside (0, 1), is refused naming it.
    #[test]
    fn unreachable_risk_targets_are_refused() {
        for (t, name) in [
            (
                Target::Tpr {
                    tpr: 0.01,
                    fpr: 0.01,
                },
                "target_tpr",
            ),
            (Target::Tpr { tpr: 0.5, fpr: 0.0 }, "fpr"),
            (Target::Advantage { advantage: 0.0 }, "target_advantage"),
            (Target::Advantage { advantage: 1.0 }, "target_advantage"),
            // q = 0.01, T = 100: p₀ = 0.99^100 = 0.366, so every σ has advantage ≤ 0.634
            // and TPR at 1 % ≤ 0.638 (the search used to fail on a grid too large at σ → 0)
            (Target::Advantage { advantage: 0.7 }, "target_advantage"),
            (
                Target::Tpr {
                    tpr: 0.7,
                    fpr: 0.01,
                },
                "target_tpr",
            ),
        ] {
            match noise_multiplier(t, 0.01, 100) {
                Err(crate::Error::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{t:?}: {other:?}"),
            }
        }
    }

    /// Targets out of range are errors naming them.
    #[test]
    fn bad_targets_are_errors() {
        let t = Target::Gamma {
            gamma: 0.05,
            kappa: 0.1,
        };
        assert!(noise_multiplier(t, 0.5, 10).is_err());
        let t = Target::Epsilon {
            epsilon: -1.0,
            delta: 1e-5,
        };
        assert!(noise_multiplier(t, 0.5, 10).is_err());
    }
}
