//! Certified PLD accounting of a [`Schedule`]: heterogeneous composition of
//! Poisson-subsampled Gaussian phases.
//!
//! Each phase's one-step PLDs (pessimistic and optimistic, both directions) are built on
//! one grid Δ (`value_discretization_interval`) with one tilt λ shared by all phases, composed
//! over the phase's steps as in [`crate::accounting::pld`], and the composed phases are
//! convolved ([`crate::accounting::pld`]'s product step: both bounds stay on their side, the
//! roundoff budget propagates). A composition of dominating (dominated) pairs dominates (is
//! dominated by) the composition of the true pairs, so the bracket stays certified.
//! Both add/remove directions are composed and the worse is reported, as [`pld::epsilon`].
//! A schedule that merges into one phase ([`Schedule::as_single`]) delegates to the
//! single-phase function (bit for bit).
//!
//! Cost: composition commutes, so equal (q, σ) anywhere in the schedule are composed as one
//! phase ([`Schedule::grouped`]); the composed phases are folded into one running product as
//! they are made, so memory is that of two PLDs on the grid (bounded by `max_points`)
//! whatever the number of phases, and time grows with the number of *distinct* phases, at
//! most [`MAX_DISTINCT_PHASES`] (more is refused: at about 0.05 s per distinct phase and
//! call, a calibration making tens of calls would run for many minutes). Each fold is the
//! same `Pld::convolve` as before, charging its roundoff, so the bracket stays certified;
//! for a schedule whose equal phases are adjacent, the result is bit for bit the one of
//! composing every phase and then convolving the list from the left.

use alloc::vec::Vec;

use crate::accounting::pld::{
    self, compose_many, compose_one, one_steps, use_split, Estimate, Pld, PldConfig, Workspace,
};
use crate::accounting::schedule::{Phase, Schedule};
use crate::error::{check_open_unit, check_result, Error, Result};

/// The phases as (q, σ, T) for the tilt choice of [`pld`].
fn tuples(phases: &[Phase]) -> Vec<(f64, f64, u64)> {
    phases
        .iter()
        .map(|p| (p.sampling_rate, p.noise_multiplier, p.steps))
        .collect()
}

/// The configuration of a schedule for a target probability (δ of ε(δ), κ of γ): each
/// phase's [`pld::config_for_target`] with the total steps, and the smallest grid interval
/// and tail mass over the phases that carry the loss (one grid for all; the +∞ atom of the
/// whole composition then stays within the same share of the target as for one phase).
fn schedule_config(phases: &[Phase], config: &PldConfig, target: f64) -> PldConfig {
    let total = phases
        .iter()
        .map(|p| p.steps)
        .fold(0u64, u64::saturating_add);
    // A phase whose privacy loss is negligible beside the others' must not set the grid: a
    // phase at σ = 1e4 asks for an interval 1e4 times finer, and the grid of the whole
    // composition exceeded its limit (issue 43). Any interval gives certified PLDs (the
    // rounding is to the safe side); it only sets their width, which the phases that carry
    // the loss decide. Weight: the χ² growth T·q²·(e^{1/σ²} − 1) of a phase; those below
    // 1e-6 of the largest do not choose.
    let weight = |p: &Phase| {
        p.steps as f64
            * p.sampling_rate
            * p.sampling_rate
            * libm::expm1(1.0 / (p.noise_multiplier * p.noise_multiplier))
    };
    let heaviest = phases.iter().map(weight).fold(0.0f64, f64::max);
    let mut c = *config;
    for p in phases
        .iter()
        .filter(|p| weight(p) >= 1e-6 * heaviest || weight(p).is_nan())
    {
        let pc = pld::config_for_target(config, p.sampling_rate, p.noise_multiplier, total, target);
        c.value_discretization_interval = c
            .value_discretization_interval
            .min(pc.value_discretization_interval);
        c.tail_mass = c.tail_mass.min(pc.tail_mass);
    }
    c
}

/// At most this many distinct (q, σ) phases ([`Schedule::grouped`]) are composed by PLD.
pub const MAX_DISTINCT_PHASES: usize = 64;

/// The distinct phases of `schedule`, at most [`MAX_DISTINCT_PHASES`].
///
/// # Errors
/// [`Error::InvalidCount`] (`distinct_phases`) beyond the limit.
fn distinct(schedule: &Schedule) -> Result<Vec<Phase>> {
    let phases = schedule.grouped();
    if phases.len() > MAX_DISTINCT_PHASES {
        return Err(Error::InvalidCount {
            name: "distinct_phases",
            value: phases.len() as u64,
            expected:
                "at most 64 distinct (sampling_rate, noise_multiplier) pairs for PLD accounting",
        });
    }
    Ok(phases)
}

/// `acc` ⊗ `p` (or `p` when `acc` is empty): the running product of the composed phases.
fn fold_in(acc: &mut Option<Pld>, p: Pld, max_points: usize) -> Result<()> {
    *acc = Some(match acc.take() {
        None => p,
        Some(a) => Pld::convolve(&a, &p, max_points)?,
    });
    Ok(())
}

/// The product [`fold_in`] built.
fn folded(acc: Option<Pld>) -> Result<Pld> {
    acc.ok_or(Error::Numerical {
        what: "PLD schedule composition produced nothing",
        value: 0.0,
    })
}

/// Certified ε(δ) of a schedule under add/remove adjacency.
///
/// # Formula
/// ε(δ) = smallest ε ≥ 0 with max_d H_{e^ε}(P_d‖Q_d) ≤ δ over both directions d, where
/// P_d‖Q_d is the product over phases p of T_p-fold compositions of the phase's one-step
/// pair; each bracketed by pessimistic/optimistic PLDs on a common grid and tilt (grid and
/// truncation chosen from δ, the Chernoff-optimal tilt of the schedule unless `config.tilt`
/// forces it, as [`pld::epsilon`] for one phase). `value` is the larger
/// pessimistic ε; `lower` the optimistic ε of that direction.
///
/// # Citations
/// Koskela, Jälkö, Honkela 2020 (PLD composition of heterogeneous mechanisms by
/// convolution); Doroshenko et al. 2022 (connect the dots); Zhu, Dong, Wang 2022 (both
/// directions).
///
/// # Errors
/// `delta` ∉ (0, 1), bad config; [`Error::InvalidCount`] (`distinct_phases`) for more than
/// [`MAX_DISTINCT_PHASES`] distinct (q, σ); [`Error::Numerical`] if the grid is too large or
/// the truncated mass exceeds `delta`.
///
/// # Examples
/// ```
/// use reconbound::accounting::{pld::PldConfig, pld_schedule, schedule::Schedule};
/// let s = Schedule::parse_csv("0.01,2,100\n0.01,1,1000\n0.02,0.8,500\n").unwrap();
/// let e = pld_schedule::epsilon(&s, 1e-5, &PldConfig::default()).unwrap();
/// // dp_accounting 0.6.0 (PLDAccountant, grid 1e-5): 5.020109
/// assert!(e.lower <= 5.020109 && 5.020109 <= e.value && e.value - e.lower < 1e-3);
/// ```
pub fn epsilon(schedule: &Schedule, delta: f64, config: &PldConfig) -> Result<Estimate> {
    let delta = check_open_unit("delta", delta)?;
    if let Some(p) = schedule.as_single() {
        return pld::epsilon(p.sampling_rate, p.noise_multiplier, p.steps, delta, config);
    }
    let (_, _, forced) = config.validate()?;
    let phases = distinct(schedule)?;
    let config = &schedule_config(&phases, config, delta);
    let tilt = forced
        .unwrap_or_else(|| pld::chernoff_tilt_for_delta(&tuples(&phases), delta, config.tail_mass));
    epsilon_of(&phases, delta, config, tilt)
}

/// [`epsilon`] of the given phases as they are (no merging, no delegation), at `tilt`.
fn epsilon_of(phases: &[Phase], delta: f64, config: &PldConfig, tilt: f64) -> Result<Estimate> {
    let (_, _, forced) = config.validate()?;
    let split = use_split(forced, tilt);
    // both directions unless every phase is full-batch (then they coincide)
    let n_dir = if phases.iter().all(|p| p.sampling_rate >= 1.0) {
        1
    } else {
        2
    };
    let mut ws = Workspace::default();
    // per direction: the running product of the composed pessimistic phases; the one-step
    // optimistic phases (at most MAX_DISTINCT_PHASES), composed for the worse direction only
    let mut ups: Vec<Option<Pld>> = (0..n_dir).map(|_| None).collect();
    let mut los: Vec<Vec<(Pld, u64)>> = (0..n_dir).map(|_| Vec::new()).collect();
    for p in phases {
        let (mut u, mut l) = if n_dir == 1 {
            one_steps(p.sampling_rate, p.noise_multiplier, config, tilt, split)?
        } else {
            // both directions even for a full-batch phase of a mixed schedule
            both_directions(p.sampling_rate, p.noise_multiplier, config, tilt, split)?
        };
        u.truncate(n_dir);
        l.truncate(n_dir);
        let composed = compose_many(u, p.steps, config.max_points, split, &mut ws)?;
        for (d, c) in composed.into_iter().enumerate() {
            if let Some(acc) = ups.get_mut(d) {
                fold_in(acc, c, config.max_points)?;
            }
        }
        for (d, x) in l.into_iter().enumerate() {
            if let Some(v) = los.get_mut(d) {
                v.push((x, p.steps));
            }
        }
    }
    let mut value: f64 = 0.0;
    let mut worst: Option<usize> = None;
    for (d, acc) in ups.into_iter().enumerate() {
        let e = check_result("PLD epsilon of a direction", folded(acc)?.epsilon(delta)?)?;
        if worst.is_none() || e > value {
            worst = Some(d);
        }
        value = value.max(e);
    }
    let lower = match worst.and_then(|d| los.into_iter().nth(d)) {
        Some(v) => {
            let mut acc = None;
            for (x, t) in v {
                let c = compose_one(x, t, config.max_points, split, &mut ws)?;
                fold_in(&mut acc, c, config.max_points)?;
            }
            folded(acc)?.epsilon(delta)?
        }
        None => 0.0,
    };
    let value = check_result("PLD epsilon", value)?;
    Ok(Estimate {
        value,
        lower: lower.min(value),
    })
}

/// One-step pairs of both directions (Add, Remove), also for q = 1.
fn both_directions(
    q: f64,
    sigma: f64,
    config: &PldConfig,
    tilt: f64,
    split: bool,
) -> Result<(Vec<Pld>, Vec<Pld>)> {
    if q < 1.0 {
        return one_steps(q, sigma, config, tilt, split);
    }
    // q = 1: the two directions are the same Gaussian pair (the loss law is symmetric).
    let (u, l) = one_steps(q, sigma, config, tilt, split)?;
    let (u0, l0) = match (u.first(), l.first()) {
        (Some(a), Some(b)) => (a.clone(), b.clone()),
        _ => {
            return Err(Error::Numerical {
                what: "PLD one-step construction produced nothing",
                value: sigma,
            })
        }
    };
    Ok((alloc::vec![u0.clone(), u0], alloc::vec![l0.clone(), l0]))
}

/// (pessimistic, optimistic) PLDs of the whole schedule in the add direction μ‖ν, for the
/// Neyman–Pearson value at `kappa` (the ReRo γ path): truncation and grid from the schedule's
/// configuration at target κ, tilt `config.tilt` or [`pld::chernoff_tilt_for_kappa`] of
/// the schedule, as [`pld::composed_pair_for_kappa`] for one phase.
/// (pessimistic, optimistic) composed PLDs of μ_T‖ν_T (direction add) for the
/// Neyman–Pearson value at `kappa` ([`Pld::neyman_pearson`]): the add pair of
/// [`composed_pairs`] at target κ. Hayes et al.'s γ (one phase or a schedule) and the
/// trade-off curve's γ ([`crate::accounting::tradeoff`]) all come from here.
pub(crate) fn composed_pair_for_kappa(
    schedule: &Schedule,
    kappa: f64,
    config: &PldConfig,
) -> Result<(Pld, Pld)> {
    let mut v = composed_pairs(schedule, kappa, config, &[pld::Direction::Add])?.into_iter();
    v.next().ok_or(Error::Numerical {
        what: "PLD schedule composition produced nothing",
        value: kappa,
    })
}

/// (pessimistic, optimistic) composed PLDs of the schedule, one pair per direction of
/// `directions`, for Neyman–Pearson values near the level `target`
/// ([`Pld::neyman_pearson`]): truncation and grid from [`pld::config_for_target`] with
/// that target, tilt `config.tilt` or [`pld::chernoff_tilt_for_kappa`] at it. A full-batch
/// phase has one direction (its loss law is symmetric): its add pair serves both.
pub(crate) fn composed_pairs(
    schedule: &Schedule,
    target: f64,
    config: &PldConfig,
    directions: &[pld::Direction],
) -> Result<Vec<(Pld, Pld)>> {
    let (phases, config, tilt, split) = setup(schedule, target, config)?;
    let mut out = Vec::with_capacity(directions.len());
    let mut ws = Workspace::default();
    for &d in directions {
        out.push(chain_pair(&phases, d, &config, tilt, split, &mut ws)?);
    }
    Ok(out)
}

/// The distinct phases, the schedule's grid configuration at `target`, the tilt and the split
/// of a composition ([`composed_pairs`], [`composed_envelope`]).
fn setup(
    schedule: &Schedule,
    target: f64,
    config: &PldConfig,
) -> Result<(Vec<Phase>, PldConfig, f64, bool)> {
    let (_, _, forced) = config.validate()?;
    let phases = distinct(schedule)?;
    let config = schedule_config(&phases, config, target);
    let tilt = forced.unwrap_or_else(|| {
        pld::chernoff_tilt_for_kappa(&tuples(&phases), target, config.tail_mass)
    });
    let split = use_split(forced, tilt);
    Ok((phases, config, tilt, split))
}

/// The (pessimistic, optimistic) pair of every phase in direction `d` (a full-batch phase's
/// add pair: its loss law is symmetric), composed and folded over the phases.
fn chain_pair(
    phases: &[Phase],
    d: pld::Direction,
    config: &PldConfig,
    tilt: f64,
    split: bool,
    ws: &mut Workspace,
) -> Result<(Pld, Pld)> {
    let (mut up, mut lo) = (None, None);
    for p in phases {
        let d = if p.sampling_rate >= 1.0 {
            pld::Direction::Add
        } else {
            d
        };
        let (u, l) = Pld::subsampled_gaussian_pair(
            p.sampling_rate,
            p.noise_multiplier,
            d,
            config,
            tilt,
            split,
        )?;
        let (u, l) = pld::composed_pair_in(u, l, p.steps, config.max_points, split, ws)?;
        fold_in(&mut up, u, config.max_points)?;
        fold_in(&mut lo, l, config.max_points)?;
    }
    Ok((folded(up)?, folded(lo)?))
}

/// The PLDs of the trade-off curve's envelope ([`crate::accounting::tradeoff`]): the add
/// direction's (pessimistic, optimistic) pair of [`composed_pairs`] at `target` (the same
/// bits), and the remove direction's pessimistic PLD alone on the scout grid
/// ([`pld::scout_config`]: 4× coarser, a quarter of the cap), at the same tilt and tail
/// mass. A full-batch phase composes its add PLD in the remove chain too (its loss law is
/// symmetric). Every PLD is certified on its side; how the curve reads both directions
/// from these three is in the tradeoff module's docs.
pub(crate) fn composed_envelope(
    schedule: &Schedule,
    target: f64,
    config: &PldConfig,
) -> Result<((Pld, Pld), Pld)> {
    let (phases, config, tilt, split) = setup(schedule, target, config)?;
    let config = &config;
    let mut ws = Workspace::default();
    let add = chain_pair(&phases, pld::Direction::Add, config, tilt, split, &mut ws)?;
    let scout = pld::scout_config(config);
    let mut rem = None;
    for p in &phases {
        let d = if p.sampling_rate >= 1.0 {
            pld::Direction::Add
        } else {
            pld::Direction::Remove
        };
        let r = pld::scout_upper(
            p.sampling_rate,
            p.noise_multiplier,
            p.steps,
            d,
            config,
            tilt,
            split,
            &mut ws,
        )?;
        fold_in(&mut rem, r, scout.max_points)?;
    }
    Ok((add, folded(rem)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::normal;

    fn p(q: f64, s: f64, t: u64) -> Phase {
        Phase {
            sampling_rate: q,
            noise_multiplier: s,
            steps: t,
        }
    }

    #[test]
    fn alternating_one_step_phases_compose_as_their_two_distinct_phases_bit_for_bit() {
        // Issue 20 item 3: 400 one-step phases alternating q = 0.02/0.01 cost two phases
        // (composition commutes) and give exactly the two-phase schedule's bits (exact
        // equality: the same operations in the same order).
        let alt: Vec<Phase> = (0..400)
            .map(|i| p(if i % 2 == 0 { 0.02 } else { 0.01 }, 1.0, 1))
            .collect();
        let alt = Schedule::new(&alt).unwrap();
        let two = Schedule::new(&[p(0.02, 1.0, 200), p(0.01, 1.0, 200)]).unwrap();
        let c = PldConfig::default();
        assert_eq!(
            epsilon(&alt, 1e-5, &c).unwrap(),
            epsilon(&two, 1e-5, &c).unwrap()
        );
        let (a, b) = (
            composed_pair_for_kappa(&alt, 0.1, &c).unwrap(),
            composed_pair_for_kappa(&two, 0.1, &c).unwrap(),
        );
        assert_eq!(a.0.epsilon(1e-5).unwrap(), b.0.epsilon(1e-5).unwrap());
        assert_eq!(a.1.epsilon(1e-5).unwrap(), b.1.epsilon(1e-5).unwrap());
    }

    #[test]
    fn more_distinct_phases_than_the_limit_are_refused_before_any_work() {
        let many: Vec<Phase> = (0..=MAX_DISTINCT_PHASES)
            .map(|i| p(0.01 + i as f64 * 1e-4, 1.0, 1))
            .collect();
        let s = Schedule::new(&many).unwrap();
        for e in [
            epsilon(&s, 1e-5, &PldConfig::default()).unwrap_err(),
            composed_pair_for_kappa(&s, 0.1, &PldConfig::default()).unwrap_err(),
        ] {
            assert!(
                matches!(
                    e,
                    Error::InvalidCount {
                        name: "distinct_phases",
                        value: 65,
                        ..
                    }
                ),
                "{e:?}"
            );
        }
        // Repeats of the allowed distinct phases are fine: the count is of distinct pairs.
        let mut ok = many[..MAX_DISTINCT_PHASES].to_vec();
        ok.extend_from_slice(&many[..MAX_DISTINCT_PHASES]);
        assert_eq!(
            Schedule::new(&ok).unwrap().distinct_phases(),
            MAX_DISTINCT_PHASES
        );
    }

    #[test]
    fn a_phase_of_negligible_loss_does_not_set_the_grid() {
        // Issue 43: a phase at σ = 1e4 beside 40 steps at σ = 1 asked for an interval so fine
        // that the grid exceeded its limit, and every certified number was gone. Now the
        // schedule is certified and within the bracket of the first phase alone (the second
        // adds a loss below 1e-7): [lower, value] of the pair overlaps the single phase's,
        // and its value exceeds the single lower end.
        let s = Schedule::new(&[p(0.01, 1.0, 40), p(0.01, 1e4, 1)]).unwrap();
        let e = epsilon(&s, 1e-5, &PldConfig::default()).unwrap();
        let one = epsilon(
            &Schedule::single(p(0.01, 1.0, 40)).unwrap(),
            1e-5,
            &PldConfig::default(),
        )
        .unwrap();
        assert!(
            e.value >= one.lower && e.lower <= one.value + 1e-6,
            "{e:?} {one:?}"
        );
        assert!(e.value - e.lower < 1e-3, "{e:?}");
    }

    #[test]
    fn one_phase_schedule_is_the_plain_pld_epsilon_bit_for_bit() {
        let c = PldConfig::default();
        let s = Schedule::new(&[p(0.01, 1.1, 600), p(0.01, 1.1, 400)]).unwrap();
        let a = epsilon(&s, 1e-5, &c).unwrap();
        let b = pld::epsilon(0.01, 1.1, 1000, 1e-5, &c).unwrap();
        assert_eq!(a.value.to_bits(), b.value.to_bits());
        assert_eq!(a.lower.to_bits(), b.lower.to_bits());
    }

    #[test]
    fn small_delta_schedules_are_certified_narrow_and_below_rdp() {
        // Issue 13: the grid and truncation chosen from δ serve schedules too. For δ down to
        // 1e-15 the three-phase MNIST-like schedule gets a bracket of width ≤ 1e-3·ε (the
        // issue's goal), ε grows as δ falls, and the certified PLD value never exceeds the
        // RDP bound of the same schedule (both are upper bounds; the PLD is the tight one).
        let q = 256.0 / 60000.0;
        let s = Schedule::new(&[p(q, 1.5, 2000), p(q, 1.1, 9000), p(2.0 * q, 1.3, 3063)]).unwrap();
        let mut last = 0.0;
        for delta in [1e-5, 1e-8, 1e-10, 1e-12, 1e-15] {
            let e = epsilon(&s, delta, &PldConfig::default()).unwrap();
            let rdp = s
                .epsilon_rdp(delta, crate::accounting::rdp::Conversion::Improved)
                .unwrap();
            assert!(e.value - e.lower <= 1e-3 * e.value, "δ={delta}: {e:?}");
            assert!(
                e.lower > last && e.value <= rdp.epsilon,
                "δ={delta}: {e:?} {last} {rdp:?}"
            );
            last = e.value;
        }
    }

    #[test]
    fn two_equal_phases_composed_apart_bracket_the_single_phase() {
        // The heterogeneous path (two phases convolved, not merged) and the one-phase path
        // certify the same true ε: their brackets must overlap, and each is narrow (< 2e-3).
        let c = PldConfig::default();
        let one = pld::epsilon(0.01, 1.1, 1000, 1e-5, &c).unwrap();
        let phases = [p(0.01, 1.1, 600), p(0.01, 1.1, 400)];
        let c2 = schedule_config(&phases, &c, 1e-5);
        let tilt = pld::chernoff_tilt_for_delta(&tuples(&phases), 1e-5, c2.tail_mass);
        let two = epsilon_of(&phases, 1e-5, &c2, tilt).unwrap();
        assert!(
            two.lower <= one.value && one.lower <= two.value,
            "{two:?} {one:?}"
        );
        assert!(
            two.value - two.lower < 2e-3 && one.value - one.lower < 2e-3,
            "{two:?} {one:?}"
        );
    }

    /// Exact ε(δ) of the Gaussian mechanism with μ = Δ/s (bisection on the analytic δ(ε)).
    fn gaussian_epsilon(mu: f64, delta: f64) -> f64 {
        let d = |e: f64| {
            normal::cdf(mu / 2.0 - e / mu) - libm::exp(e) * normal::cdf(-mu / 2.0 - e / mu)
        };
        let (mut lo, mut hi) = (0.0, 100.0);
        for _ in 0..200 {
            let m = 0.5 * (lo + hi);
            if d(m) > delta {
                lo = m;
            } else {
                hi = m;
            }
        }
        hi
    }

    #[test]
    fn full_batch_schedule_brackets_the_gaussian_epsilon() {
        // All q = 1: the composition is the Gaussian mechanism with μ = √(Σ T_i/σ_i²) =
        // √(4/4 + 10/25 + 3/1) = √4.4; the certified bracket must contain the exact ε
        // (bisection to 1e-13) and be narrow (< 1e-3).
        let s = Schedule::new(&[p(1.0, 2.0, 4), p(1.0, 5.0, 10), p(1.0, 1.0, 3)]).unwrap();
        let e = epsilon(&s, 1e-5, &PldConfig::default()).unwrap();
        let exact = gaussian_epsilon(libm::sqrt(4.4), 1e-5);
        assert!(
            e.lower <= exact + 1e-12 && exact <= e.value + 1e-12,
            "{e:?} {exact}"
        );
        assert!(e.value - e.lower < 1e-3, "{e:?}");
    }

    #[test]
    fn mixed_schedule_with_a_full_batch_phase_composes_both_directions() {
        // A q = 1 phase inside a schedule with q < 1 phases: the bracket is certified and
        // above each phase alone (composition only adds privacy loss).
        let c = PldConfig::default();
        let s = Schedule::new(&[p(0.05, 1.0, 200), p(1.0, 8.0, 5)]).unwrap();
        let e = epsilon(&s, 1e-5, &c).unwrap();
        let a = pld::epsilon(0.05, 1.0, 200, 1e-5, &c).unwrap();
        let b = pld::epsilon(1.0, 8.0, 5, 1e-5, &c).unwrap();
        assert!(e.lower <= e.value && e.value - e.lower < 2e-3, "{e:?}");
        assert!(e.lower > a.value && e.lower > b.value, "{e:?} {a:?} {b:?}");
    }
}
