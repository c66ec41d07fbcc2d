//! One calibrator for every target: the noise that makes a DP-SGD run meet a target
//! guarantee, always on the safe side (the returned noise was verified to meet the target).
//!
//! A [`Target`] is what the run must guarantee — ε(δ) by RDP, or a ReRo γ at baseline κ
//! (Hayes et al. 2023) — and the run is one phase (Poisson rate q, T steps: the calibrated
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

use crate::accounting::rdp::{self, Conversion};
use crate::accounting::rero;
use crate::accounting::schedule::Schedule;
use crate::error::Result;

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
}

/// A calibrated noise and the guarantee it achieves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibrated {
    /// The noise multiplier σ (one phase) or the factor c on every σ_i (a schedule).
    pub noise: f64,
    /// The guarantee achieved at that noise (ε by RDP, or the certified γ's upper end):
    /// at most the target.
    pub achieved: f64,
}

/// The smallest noise multiplier σ (to the bisection's tolerance) such that T steps at
/// Poisson rate q meet `target`.
///
/// # Errors
/// An invalid target or run; a target no σ in the searched range reaches
/// ([`crate::Error::Numerical`] or [`crate::Error::NotConverged`]).
pub fn noise_multiplier(target: Target, sampling_rate: f64, steps: u64) -> Result<Calibrated> {
    match target {
        Target::Epsilon { epsilon, delta } => {
            let c = Conversion::Improved;
            let sigma = rdp::calibrate_noise_multiplier(epsilon, delta, sampling_rate, steps, c)?;
            let achieved = rdp::epsilon(sampling_rate, sigma, steps, delta, c)?.epsilon;
            Ok(Calibrated {
                noise: sigma,
                achieved,
            })
        }
        Target::Gamma { gamma, kappa } => {
            let sigma =
                rero::dpsgd::calibrate_noise_multiplier(gamma, kappa, sampling_rate, steps)?;
            let achieved = rero::dpsgd::gamma(kappa, sampling_rate, sigma, steps)?.gamma;
            Ok(Calibrated {
                noise: sigma,
                achieved,
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
        Target::Epsilon { epsilon, delta } => {
            let c = Conversion::Improved;
            let scale = schedule.calibrate_noise_scale(epsilon, delta, c)?;
            let achieved = schedule.scaled(scale)?.epsilon_rdp(delta, c)?.epsilon;
            Ok(Calibrated {
                noise: scale,
                achieved,
            })
        }
        Target::Gamma { gamma, kappa } => {
            let scale = rero::schedule::calibrate_noise_scale(gamma, kappa, schedule)?;
            let achieved = rero::schedule::gamma(kappa, &schedule.scaled(scale)?)?.gamma;
            Ok(Calibrated {
                noise: scale,
                achieved,
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
