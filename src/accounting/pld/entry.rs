//! Entry points: ε(δ), δ(ε) and the hockey-stick divergence of T steps of the
//! Poisson-subsampled Gaussian, both directions, certified upper and lower bounds.

use super::*;

/// One-step pessimistic and optimistic PLDs of both directions at a common tilt.
pub(crate) fn one_steps(
    q: f64,
    sigma: f64,
    config: &PldConfig,
    tilt: f64,
    split: bool,
) -> Result<(Vec<Pld>, Vec<Pld>)> {
    let mut ups = Vec::with_capacity(2);
    let mut los = Vec::with_capacity(2);
    for &d in directions(q) {
        let (up, lo) = Pld::subsampled_gaussian_pair(q, sigma, d, config, tilt, split)?;
        ups.push(up);
        los.push(lo);
    }
    Ok((ups, los))
}

pub(crate) fn composed_pair_from(
    up: Pld,
    lo: Pld,
    steps: u64,
    max_points: usize,
    split: bool,
) -> Result<(Pld, Pld)> {
    composed_pair_in(up, lo, steps, max_points, split, &mut Workspace::default())
}

/// [`composed_pair_from`] in a workspace kept across calls (its transform tables are
/// reused; the results are the same bits).
pub(crate) fn composed_pair_in(
    up: Pld,
    lo: Pld,
    steps: u64,
    max_points: usize,
    split: bool,
    ws: &mut Workspace,
) -> Result<(Pld, Pld)> {
    let mut v = compose_many(alloc::vec![up, lo], steps, max_points, split, ws)?.into_iter();
    match (v.next(), v.next()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => numerical("PLD composition produced nothing", steps as f64),
    }
}

/// Certified ε(δ) of `steps` Poisson-subsampled Gaussian steps under add/remove adjacency.
///
/// # Formula
/// ε(δ) = smallest ε ≥ 0 with max(H_{e^ε}(μ_T‖ν_T), H_{e^ε}(ν_T‖μ_T)) ≤ δ, each hockey-stick
/// divergence bracketed by the pessimistic/optimistic PLDs of the module docs. `value` is
/// the larger pessimistic ε of the two directions; `lower` the larger optimistic ε (a lower
/// bound on the max).
///
/// # Cost (issue 32)
/// The add direction's pair (pessimistic and optimistic, composed in lockstep, two real
/// products per complex transform) and a *scout* of the remove direction: its pessimistic
/// PLD alone on a grid 4× coarser with a cap 4× smaller (`scout_config`), a quarter of a
/// chain's cost. The scout's ε is a certified upper
/// bound on the remove direction's ε like any pessimistic PLD's; when it is at most the
/// add direction's pessimistic ε, the maximum is the add direction's and `value`, `lower`
/// are the add pair's. Otherwise the remove direction's pair is composed on the full grid
/// and `value` is the larger pessimistic ε (the remove one the smaller of its two upper
/// bounds), `lower` the larger optimistic ε. So the usual cost is two and a quarter
/// compositions instead of three, and either way both sides stay certified: every number
/// taken is a certified bound on its own direction, and the maximum of upper (lower)
/// bounds of the two directions bounds the maximum from above (below).
///
/// # Citations
/// Koskela, Jälkö, Honkela 2020; Doroshenko et al. 2022; Zhu, Dong, Wang 2022 (both
/// directions of add/remove adjacency).
///
/// # Errors
/// `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0, `steps` = 0,
/// `delta` ∉ (0, 1), bad config; [`Error::Numerical`] if the grid is too large or the
/// truncated mass exceeds `delta`.
///
/// # Examples
/// ```
/// use reconbound::accounting::pld::{epsilon, PldConfig};
/// // full batch, σ = 1, one step: exact ε(1e-5) = 4.377178...
/// let e = epsilon(1.0, 1.0, 1, 1e-5, &PldConfig::default()).unwrap();
/// assert!(e.lower <= 4.377179 && e.value >= 4.377178 && e.value - e.lower < 1e-3);
/// ```
pub fn epsilon(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    config: &PldConfig,
) -> Result<Estimate> {
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    let delta = check_open_unit("delta", delta)?;
    let (_, _, forced) = config.validate()?;
    let config = &config_for_target(config, q, sigma, steps, delta);
    let tilt =
        forced.unwrap_or_else(|| auto_tilt_for_delta(q, sigma, steps, delta, config.tail_mass));
    let split = use_split(forced, tilt);
    let (first, second) = (Direction::Add, Direction::Remove);
    epsilon_scouted(q, sigma, steps, delta, config, tilt, split, first, second)
}

/// [`epsilon`] with the full pair of `first` and the scout of `second` (when q < 1), the
/// full pair of `second` only if its scout exceeds the `first`'s pessimistic ε. [`epsilon`]
/// scouts the remove direction; the other order is the fallback's test.
#[allow(clippy::too_many_arguments)]
pub(super) fn epsilon_scouted(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    config: &PldConfig,
    tilt: f64,
    split: bool,
    first: Direction,
    second: Direction,
) -> Result<Estimate> {
    let mut ws = Workspace::default();
    let pair = |d: Direction, ws: &mut Workspace| -> Result<(Pld, Pld)> {
        let (up, lo) = Pld::subsampled_gaussian_pair(q, sigma, d, config, tilt, split)?;
        composed_pair_in(up, lo, steps, config.max_points, split, ws)
    };
    let (up, lo) = pair(first, &mut ws)?;
    let (mut value, mut lower) = (up.epsilon(delta)?, lo.epsilon(delta)?);
    if directions(q).len() > 1 {
        // the other direction: first its scout (a coarser pessimistic chain, an upper
        // bound); only if that does not settle the maximum, its full pair
        let scout = scout_upper(q, sigma, steps, second, config, tilt, split, &mut ws)
            .and_then(|p| p.epsilon(delta));
        match scout {
            Ok(e) if e <= value => {}
            _ => {
                let (up, lo) = pair(second, &mut ws)?;
                let e = up.epsilon(delta)?;
                value = value.max(match scout {
                    Ok(s) => e.min(s),
                    Err(_) => e,
                });
                lower = lower.max(lo.epsilon(delta)?);
            }
        }
    }
    let value = crate::error::check_result("PLD epsilon", value)?;
    Ok(Estimate {
        value,
        lower: lower.min(value),
    })
}

/// How much coarser the scout chain of [`scout_upper`] is than the configuration it is
/// given: its grid interval is this factor larger and its grid cap this factor smaller.
pub(crate) const SCOUT_COARSENING: usize = 4;

/// The configuration of a scout chain: Δ × [`SCOUT_COARSENING`] (at most 1), `max_points`
/// / [`SCOUT_COARSENING`] (at least 64); tail mass and tilt as given.
pub(crate) fn scout_config(config: &PldConfig) -> PldConfig {
    let mut c = *config;
    c.value_discretization_interval =
        (c.value_discretization_interval * SCOUT_COARSENING as f64).min(1.0);
    c.max_points = (c.max_points / SCOUT_COARSENING).max(64);
    c
}

/// The pessimistic composed PLD of `steps` steps in direction `dir` on the scout grid
/// ([`scout_config`] of `config`), at `tilt`: a certified upper bound like any pessimistic
/// PLD (the grid only decides how tight), at about a quarter of the composition's cost. It
/// tells whether a direction can be the worse one before its full pair is composed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scout_upper(
    q: f64,
    sigma: f64,
    steps: u64,
    dir: Direction,
    config: &PldConfig,
    tilt: f64,
    split: bool,
    ws: &mut Workspace,
) -> Result<Pld> {
    let c = scout_config(config);
    let (up, _) = Pld::subsampled_gaussian_bounds(q, sigma, dir, &c, tilt, split, false)?;
    compose_one(up, steps, c.max_points, split, ws)
}

/// Certified δ(ε) of `steps` Poisson-subsampled Gaussian steps under add/remove adjacency.
///
/// # Formula
/// δ(ε) = max(H_{e^ε}(μ_T‖ν_T), H_{e^ε}(ν_T‖μ_T)) with H from the PLD:
/// δ = p∞ + Σ_ℓ p_ℓ (1 − e^{ε−ℓ})₊. `lower` is the optimistic δ of the direction with the
/// larger pessimistic δ.
///
/// # Citations
/// Koskela, Jälkö, Honkela 2020; Doroshenko et al. 2022.
///
/// # Errors
/// As [`epsilon`], with `epsilon` required finite and ≥ 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::pld::{delta, PldConfig};
/// // dp_accounting's test: q = 0.2, σ = 0.5, 3 steps, δ(1) ≈ 0.15594
/// let d = delta(0.2, 0.5, 3, 1.0, &PldConfig::default()).unwrap();
/// assert!((d.value - 0.15594).abs() < 1e-3 && d.value - d.lower < 1e-4);
/// ```
pub fn delta(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    epsilon: f64,
    config: &PldConfig,
) -> Result<Estimate> {
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    let eps = check_non_negative("epsilon", epsilon)?;
    let (_, _, forced) = config.validate()?;
    let (auto, ln_delta) = chernoff_tilt_for_epsilon(&[(q, sigma, steps)], eps, config.tail_mass);
    let tilt = forced.unwrap_or(auto);
    let split = use_split(forced, tilt);
    // the Chernoff bound on δ as the target (it exceeds δ by a small polynomial factor)
    let config = &config_for_target(config, q, sigma, steps, libm::exp(ln_delta.min(0.0)));
    let (ups, los) = one_steps(q, sigma, config, tilt, split)?;
    let mut ws = Workspace::default();
    let mut value: f64 = 0.0;
    let mut worst: Option<Pld> = None;
    for (up, lo) in compose_many(ups, steps, config.max_points, split, &mut ws)?
        .into_iter()
        .zip(los)
    {
        let d = up.delta(eps);
        if worst.is_none() || d > value {
            worst = Some(lo);
        }
        value = value.max(d);
    }
    let lower = match worst {
        Some(lo) => compose_one(lo, steps, config.max_points, split, &mut ws)?.delta(eps),
        None => 0.0,
    };
    Ok(Estimate {
        value,
        lower: lower.min(value),
    })
}

/// Certified hockey-stick divergence H_{e^ε} of one direction after `steps` steps
/// (`epsilon` may be negative).
///
/// # Formula
/// H_{e^ε}(P‖Q) = ∫ (dP − e^ε dQ)₊ = p∞ + E_ω[(1 − e^{ε−Y})₊].
///
/// # Citations
/// Koskela, Jälkö, Honkela 2020; Doroshenko et al. 2022.
///
/// # Errors
/// As [`epsilon`], with `epsilon` required finite.
///
/// # Examples
/// ```
/// use reconbound::accounting::pld::{hockey_stick, Direction, PldConfig};
/// let h = hockey_stick(0.5, 1.0, 10, 0.0, Direction::Add, &PldConfig::default()).unwrap();
/// assert!(h.lower <= h.value && h.value <= 1.0);
/// ```
pub fn hockey_stick(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    epsilon: f64,
    direction: Direction,
    config: &PldConfig,
) -> Result<Estimate> {
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    let eps = crate::error::check_finite("epsilon", epsilon)?;
    let (_, _, forced) = config.validate()?;
    let tilt = forced.unwrap_or_else(|| {
        if eps > 0.0 {
            auto_tilt_for_epsilon(q, sigma, steps, eps, config.tail_mass)
        } else {
            0.0
        }
    });
    let split = use_split(forced, tilt);
    let target = if eps > 0.0 {
        let ln_delta = chernoff_tilt_for_epsilon(&[(q, sigma, steps)], eps, config.tail_mass).1;
        libm::exp(ln_delta.min(0.0))
    } else {
        1.0
    };
    let config = &config_for_target(config, q, sigma, steps, target);
    let (up, lo) = Pld::subsampled_gaussian_pair(q, sigma, direction, config, tilt, split)?;
    let (up, lo) = composed_pair_from(up, lo, steps, config.max_points, split)?;
    let value = up.delta(eps);
    Ok(Estimate {
        value,
        lower: lo.delta(eps).min(value),
    })
}
