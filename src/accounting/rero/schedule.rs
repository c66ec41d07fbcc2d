//! Hayes et al.'s γ for a [`Schedule`] of DP-SGD phases (heterogeneous composition).
//!
//! ν = N(0, σ_t²) per step, μ = Π_t[(1−q_t)N(0, σ_t²) + q_t N(1, σ_t²)], γ =
//! sup_{ν(E) ≤ κ} μ(E) = min_ε [e^ε κ + H_{e^ε}(μ‖ν)] (single direction μ‖ν).
//! - All phases full-batch (q = 1): the loss law is Gaussian, γ = Φ(Φ⁻¹(κ) + μ) with
//!   μ = √(Σ_i T_i/σ_i²) (closed form).
//! - Otherwise: the certified PLD bracket of the composition
//!   ([`crate::accounting::pld_schedule`]).
//!
//! A schedule that merges into one phase delegates to [`dpsgd::gamma`] (bit for bit).

use crate::accounting::pld::PldConfig;
use crate::accounting::pld_schedule;
use crate::accounting::rdp::bisect_scale;
use crate::accounting::rero::dpsgd::{self, full_batch_bracket_shift, GammaBound};
use crate::accounting::schedule::Schedule;
use crate::error::{check_open_unit, check_unit_rate, invalid, Result};

/// μ = √(Σ_i T_i/σ_i²) of a full-batch schedule and its relative rounding error bound
/// (k divisions, k − 1 additions of positive terms, one square root, each ≤ u relative).
pub(crate) fn full_batch_shift(schedule: &Schedule) -> (f64, f64) {
    let phases = schedule.merged();
    let s: f64 = phases
        .iter()
        .map(|p| p.steps as f64 / (p.noise_multiplier * p.noise_multiplier))
        .sum();
    let k = phases.len() as f64;
    (libm::sqrt(s), (2.0 * k + 2.0) * 1.2e-16)
}

/// γ of a schedule by numerical composition at `config` (PLD bracket), or by the closed form
/// when every phase is full-batch.
///
/// # Formula
/// All q_i = 1: γ = Φ(Φ⁻¹(κ) + √(Σ_i T_i/σ_i²)). Otherwise γ = min_ε [e^ε κ +
/// H_{e^ε}(μ‖ν)], H bracketed by the convolution of the phases' pessimistic / optimistic
/// composed PLDs (direction μ‖ν). Capped to [κ, 1].
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3 (hayes2023-rero-dpsgd-appendix.txt);
/// Koskela, Jälkö, Honkela 2020 (heterogeneous PLD composition).
///
/// # Errors
/// `kappa` ∉ (0, 1], bad config; [`crate::Error::Numerical`] if the PLD grid would be too large.
///
/// # Examples
/// ```
/// use reconbound::accounting::{pld::PldConfig, rero::schedule::gamma_numerical, schedule::Schedule};
/// let s = Schedule::parse_csv("0.01,2,50\n0.01,1,50\n").unwrap();
/// let g = gamma_numerical(0.1, &s, &PldConfig::default()).unwrap();
/// assert!(g.lower <= g.gamma && g.gamma - g.lower < 1e-5);
/// ```
pub fn gamma_numerical(kappa: f64, schedule: &Schedule, config: &PldConfig) -> Result<GammaBound> {
    let kappa = check_unit_rate("kappa", kappa)?;
    if let Some(p) = schedule.as_single() {
        return dpsgd::gamma_numerical(kappa, p.sampling_rate, p.noise_multiplier, p.steps, config);
    }
    if kappa == 1.0 {
        return Ok(GammaBound {
            gamma: 1.0,
            lower: 1.0,
        });
    }
    let (up, lo) = pld_schedule::composed_pair_for_kappa(schedule, kappa, config)?;
    Ok(dpsgd::gamma_from_pair(
        &up,
        &lo,
        kappa,
        noiseless_limit(kappa, schedule),
    ))
}

/// γ's limit as every σ_i → 0: 1 − Π_i(1 − q_i)^{T_i}(1 − κ) (the target is in no batch with
/// probability Π_i(1 − q_i)^{T_i}), rounded up; as [`dpsgd::gamma_noiseless_limit`]. Every γ
/// of the schedule's sampling is at most this, whatever its noise: a target γ at or above it
/// is met by every noise scale.
///
/// # Errors
/// `kappa` ∉ (0, 1].
///
/// # Examples
/// ```
/// use reconbound::accounting::{rero::schedule::gamma_noiseless_limit, schedule::Schedule};
/// // 10 steps at q = 0.1 (σ = 1), then the full batch: the limit is 1
/// let s = Schedule::parse_csv("0.1,1,10\n1,1,1\n").unwrap();
/// assert_eq!(gamma_noiseless_limit(0.1, &s).unwrap(), 1.0);
/// let s = Schedule::parse_csv("0.1,1,10\n").unwrap();
/// let limit = 1.0 - 0.9f64.powi(10) * 0.9;
/// assert!((gamma_noiseless_limit(0.1, &s).unwrap() - limit).abs() < 1e-12);
/// ```
pub fn gamma_noiseless_limit(kappa: f64, schedule: &Schedule) -> Result<f64> {
    let kappa = check_unit_rate("kappa", kappa)?;
    Ok(noiseless_limit(kappa, schedule))
}

/// [`gamma_noiseless_limit`] for a validated κ.
fn noiseless_limit(kappa: f64, schedule: &Schedule) -> f64 {
    let phases: alloc::vec::Vec<(f64, u64)> = schedule
        .phases()
        .iter()
        .map(|p| (p.sampling_rate, p.steps))
        .collect();
    dpsgd::gamma_limit(kappa, &phases)
}

/// γ of a schedule: the closed form when every phase is full-batch, otherwise
/// [`gamma_numerical`] at [`PldConfig::default`].
///
/// # Formula
/// All q_i = 1: γ = Φ(Φ⁻¹(κ) + √(Σ_i T_i/σ_i²)); otherwise min_ε [e^ε κ + H_{e^ε}(μ‖ν)].
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3 (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// As [`gamma_numerical`].
///
/// # Examples
/// ```
/// use reconbound::accounting::{rero::schedule::gamma, schedule::Schedule};
/// use reconbound::math::normal::{cdf, quantile};
/// // two full-batch phases: μ = √(4/1 + 9/9) = √5
/// let s = Schedule::parse_csv("1,1,4\n1,3,9\n").unwrap();
/// let g = gamma(0.1, &s).unwrap();
/// let exact = cdf(quantile(0.1).unwrap() + 5f64.sqrt());
/// assert!(g.lower <= exact && exact <= g.gamma && g.gamma - g.lower < 1e-13);
/// ```
pub fn gamma(kappa: f64, schedule: &Schedule) -> Result<GammaBound> {
    let kappa = check_unit_rate("kappa", kappa)?;
    if let Some(p) = schedule.as_single() {
        return dpsgd::gamma(kappa, p.sampling_rate, p.noise_multiplier, p.steps);
    }
    if schedule.phases().iter().all(|p| p.sampling_rate >= 1.0) {
        let (shift, rel) = full_batch_shift(schedule);
        return full_batch_bracket_shift(kappa, shift, rel);
    }
    gamma_numerical(kappa, schedule, &PldConfig::default())
}

/// The smallest factor c (up to relative 10⁻⁴) such that the schedule with every σ_i
/// multiplied by c has γ ≤ `target_gamma` by [`gamma`]. Always on the safe side: the γ of
/// [`Schedule::scaled`]`(c)` was verified ≤ target (a factor whose PLD grid is too large
/// counts as "γ too large").
///
/// # Formula
/// Bisection in ln c on the decreasing map c ↦ γ(c·σ₁, …, c·σ_k).
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3.
///
/// # Errors
/// `target_gamma` ∉ (κ, 1), `kappa` ∉ (0, 1); [`crate::Error::Numerical`] if no factor ≤ 2²⁰
/// reaches the target.
///
/// # Examples
/// ```
/// use reconbound::accounting::{rero::schedule::{calibrate_noise_scale, gamma}, schedule::Schedule};
/// let s = Schedule::parse_csv("1,1,4\n1,3,9\n").unwrap();
/// let c = calibrate_noise_scale(0.2, 0.1, &s).unwrap();
/// assert!(gamma(0.1, &s.scaled(c).unwrap()).unwrap().gamma <= 0.2);
/// ```
pub fn calibrate_noise_scale(target_gamma: f64, kappa: f64, schedule: &Schedule) -> Result<f64> {
    let kappa = check_open_unit("kappa", kappa)?;
    if !(target_gamma > kappa && target_gamma < 1.0) {
        return invalid("target_gamma", target_gamma, "in (kappa, 1)");
    }
    if target_gamma >= noiseless_limit(kappa, schedule) {
        return invalid(
            "target_gamma",
            target_gamma,
            "below 1 − Π_i(1 − q_i)^{T_i}(1 − κ), the σ → 0 limit of γ (every scale meets a larger target)",
        );
    }
    let safe = |c: f64| -> bool {
        match schedule.scaled(c) {
            Ok(s) => match gamma(kappa, &s) {
                Ok(g) => g.gamma <= target_gamma,
                Err(_) => false,
            },
            Err(_) => false,
        }
    };
    bisect_scale(
        safe,
        1e-4,
        1_048_576.0,
        "target_gamma cannot be reached with a noise scale <= 2^20",
        target_gamma,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::schedule::Phase;
    use crate::math::normal;

    fn p(q: f64, s: f64, t: u64) -> Phase {
        Phase {
            sampling_rate: q,
            noise_multiplier: s,
            steps: t,
        }
    }

    #[test]
    fn full_batch_closed_form_lies_in_the_pld_bracket() {
        // All q = 1: γ = Φ(Φ⁻¹(κ) + √(Σ T_i/σ_i²)) exactly (μ² = 4/4 + 10/25 + 3/1 = 4.4).
        // The PLD path (gamma_numerical, which does not use the closed form for schedules)
        // must bracket it, within 1e-4 relative (grid and tilt are chosen from κ for every κ
        // down to 1e-12, as for one phase; measured 3.4e-5 at κ = 0.01); the closed-form
        // bracket is ≤ 1e-13 wide.
        let s = Schedule::new(&[p(1.0, 2.0, 4), p(1.0, 5.0, 10), p(1.0, 1.0, 3)]).unwrap();
        for kappa in [0.01, 0.1, 0.5] {
            let exact = normal::cdf(normal::quantile(kappa).unwrap() + libm::sqrt(4.4));
            let num = gamma_numerical(kappa, &s, &PldConfig::default()).unwrap();
            assert!(
                num.lower <= exact && exact <= num.gamma,
                "κ={kappa}: {num:?} {exact}"
            );
            assert!(
                num.gamma - num.lower < 1e-4 * num.gamma,
                "κ={kappa}: {num:?}"
            );
            let closed = gamma(kappa, &s).unwrap();
            assert!(
                closed.lower <= exact && exact <= closed.gamma,
                "κ={kappa}: {closed:?}"
            );
            assert!(closed.gamma - closed.lower < 1e-13, "κ={kappa}: {closed:?}");
        }
    }

    #[test]
    fn calibration_refuses_targets_every_scale_meets() {
        // γ → 1 − Π(1 − q_i)^{T_i}(1 − κ) as every σ_i → 0: (0.99^50·0.98^50)·0.9 = 0.1982…,
        // so the limit is 0.8018; a target at or above it is met by any scale and refused at
        // once; just below it a scale is found and verified.
        let s = Schedule::new(&[p(0.01, 2.0, 50), p(0.02, 1.0, 50)]).unwrap();
        let limit = noiseless_limit(0.1, &s);
        let exact = 1.0 - libm::pow(0.99, 50.0) * libm::pow(0.98, 50.0) * 0.9;
        assert!(limit >= exact && limit - exact < 1e-12, "{limit} {exact}");
        for target in [limit, 0.9, 0.99] {
            let e = calibrate_noise_scale(target, 0.1, &s).unwrap_err();
            assert_eq!(e.parameter(), Some("target_gamma"), "{e}");
        }
        let c = calibrate_noise_scale(limit - 0.05, 0.1, &s).unwrap();
        assert!(gamma(0.1, &s.scaled(c).unwrap()).unwrap().gamma <= limit - 0.05);
    }

    #[test]
    fn one_phase_schedule_is_the_plain_gamma_bit_for_bit() {
        let s = Schedule::new(&[p(0.01, 1.0, 60), p(0.01, 1.0, 40)]).unwrap();
        let a = gamma(0.1, &s).unwrap();
        let b = dpsgd::gamma(0.1, 0.01, 1.0, 100).unwrap();
        assert_eq!(a.gamma.to_bits(), b.gamma.to_bits());
        assert_eq!(a.lower.to_bits(), b.lower.to_bits());
    }

    #[test]
    fn heterogeneous_gamma_lies_between_its_phases_and_their_worst_case() {
        // Composition raises γ above each phase alone and below the schedule with every
        // phase at the smallest σ (monotonicity of the trade-off in each phase's σ).
        let s = Schedule::new(&[p(0.02, 2.0, 100), p(0.02, 1.0, 100)]).unwrap();
        let g = gamma(0.1, &s).unwrap();
        let a = dpsgd::gamma(0.1, 0.02, 1.0, 100).unwrap();
        let worst = dpsgd::gamma(0.1, 0.02, 1.0, 200).unwrap();
        assert!(
            g.lower > a.gamma && g.gamma < worst.lower,
            "{g:?} {a:?} {worst:?}"
        );
    }

    #[test]
    fn calibrated_gamma_scale_is_safe_and_tight() {
        // Safe: γ(c) ≤ target; tight: γ(c·(1 − 2e-4)) > target (bisection to 1e-4).
        let s = Schedule::new(&[p(0.02, 2.0, 100), p(0.02, 1.0, 100)]).unwrap();
        let c = calibrate_noise_scale(0.3, 0.1, &s).unwrap();
        let g = |c: f64| gamma(0.1, &s.scaled(c).unwrap()).unwrap().gamma;
        assert!(g(c) <= 0.3);
        assert!(g(c * (1.0 - 2e-4)) > 0.3);
        assert!(calibrate_noise_scale(0.05, 0.1, &s).is_err());
    }
}
