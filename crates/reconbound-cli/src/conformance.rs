//! The conformance kit's results as JSON (the Python package's `reconbound.conformance`
//! drives the trainer and calls these through [`super::api`]): each test of
//! [`reconbound::conformance`] with the ε consequence — the certified ε bracket of the run as
//! claimed, and, for a failed test, the certified lower end of the ε of the mechanism
//! actually measured ([`reconbound::accounting::verdict`]), the verdict type of `check`.

use super::api::CommandError;
use super::json::{Object, Value};
use reconbound::accounting::description::{Description, Length, Rate, Sampler};
use reconbound::accounting::verdict;
use reconbound::conformance::{self, TestResult};
use std::string::String;
use std::vec::Vec;

/// The run as claimed: Poisson at q, σ, T; δ.
#[derive(Clone, Copy, Debug)]
pub struct Claimed {
    /// q.
    pub sampling_rate: f64,
    /// σ.
    pub noise_multiplier: f64,
    /// T.
    pub steps: u64,
    /// δ.
    pub delta: f64,
    /// N (for a shuffled reading of the batches).
    pub dataset_size: u64,
}

fn lower(d: &Description, delta: f64) -> Result<Option<f64>, CommandError> {
    let Ok(r) = d.resolve() else {
        return Ok(None);
    };
    let b = verdict::bracket(&r, delta)?;
    Ok((b.lower_by != verdict::Source::None).then_some(b.lower))
}

fn poisson(q: f64, sigma: f64, steps: u64) -> Description {
    Description::new(sigma, Rate::SamplingRate(q), Length::Steps(steps))
}

/// The certified upper ε of the run as claimed (computed once per call: a PLD).
fn claimed_upper(claimed: &Claimed) -> Result<Option<f64>, CommandError> {
    let r = poisson(
        claimed.sampling_rate,
        claimed.noise_multiplier,
        claimed.steps,
    )
    .resolve()?;
    Ok(verdict::bracket(&r, claimed.delta)?.upper)
}

/// The test's JSON, with the claimed run's ε and the measured mechanism's lower end.
fn put(
    t: &TestResult,
    claimed: &Claimed,
    claimed_epsilon: Option<f64>,
    measured: Option<Description>,
    note: &str,
) -> Result<Value, CommandError> {
    let mut o = Object::new();
    o.str("name", t.name)
        .put("passed", Value::Bool(t.passed))
        .num("alpha", t.alpha)
        .num("measured", t.measured)
        .num("measured_lower", t.measured_lower)
        .num("measured_upper", t.measured_upper)
        .num("expected", t.expected)
        .str("finding", t.finding);
    match claimed_epsilon {
        Some(u) => o.num("epsilon_claimed", u),
        None => o.put("epsilon_claimed", Value::Null),
    };
    let m = match (&measured, t.passed) {
        (Some(d), false) => lower(d, claimed.delta)?,
        _ => None,
    };
    match m {
        Some(e) => o.num("epsilon_measured_lower", e),
        None => o.put("epsilon_measured_lower", Value::Null),
    };
    o.str("epsilon_note", if t.passed { "" } else { note });
    Ok(Value::Obj(o))
}

fn array(items: Vec<Value>) -> String {
    let mut o = Object::new();
    o.put("tests", Value::Arr(items));
    o.render()
}

/// The sampler's tests on `batches` (record indices per step) at `alpha`.
///
/// # Errors
/// As [`conformance::sampler`]; a claimed run the accountants refuse.
pub fn sampler_json(
    batches: &[Vec<u64>],
    claimed: &Claimed,
    alpha: f64,
) -> Result<String, CommandError> {
    let refs: Vec<&[u64]> = batches.iter().map(|b| b.as_slice()).collect();
    let r = conformance::sampler(&refs, claimed.dataset_size, claimed.sampling_rate, alpha)?;
    let eps = claimed_upper(claimed)?;
    let (sigma, steps) = (claimed.noise_multiplier, claimed.steps);
    // the rate measured: its lower confidence limit (the least the data allow)
    let rate = poisson(r[0].measured_lower.max(f64::MIN_POSITIVE), sigma, steps);
    // constant batches: shuffled epochs of round(N·q)
    let b = libm::round(claimed.dataset_size as f64 * claimed.sampling_rate).max(1.0) as u64;
    let mut shuffled = Description::new(
        sigma,
        Rate::Batch {
            batch_size: b,
            dataset_size: claimed.dataset_size,
        },
        Length::Steps(steps),
    );
    shuffled.sampler = Sampler::Shuffled;
    Ok(array(std::vec![
        put(&r[0], claimed, eps, Some(rate), "the ε at the lower confidence limit of the measured rate")?,
        put(
            &r[1],
            claimed, eps,
            Some(shuffled.clone()),
            "the batches read as shuffled epochs: the lower bound of Chua et al. 2024 (none when B does not divide N)",
        )?,
        put(
            &r[2],
            claimed, eps,
            Some(shuffled),
            "the batches read as shuffled epochs: the lower bound of Chua et al. 2024 (none when B does not divide N)",
        )?,
    ]))
}

/// The noise tests on `z` at `alpha`: its scale ([`conformance::noise`]) and its shape
/// ([`conformance::noise_gaussian`]).
///
/// # Errors
/// As [`conformance::noise`] and [`conformance::noise_gaussian`].
pub fn noise_json(z: &[f64], claimed: &Claimed, alpha: f64) -> Result<String, CommandError> {
    let r = conformance::noise(z, claimed.noise_multiplier, alpha)?;
    let shape = conformance::noise_gaussian(z, claimed.noise_multiplier, alpha)?;
    let eps = claimed_upper(claimed)?;
    let measured = poisson(claimed.sampling_rate, r.measured_upper, claimed.steps);
    Ok(array(std::vec![
        put(
            &r,
            claimed,
            eps,
            Some(measured),
            "the ε at the upper confidence limit of the measured noise multiplier"
        )?,
        put(
            &shape,
            claimed,
            eps,
            None,
            "none: the crate certifies Gaussian noise only"
        )?,
    ]))
}

/// The clipping and normalisation tests on noiseless steps at gradient norms 1000·C (`high`)
/// and 10·C (`low`); the clipping test's JSON also has `contribution`, c at 1000·C (the unit
/// of the noise test).
///
/// # Errors
/// As [`conformance::updates`].
pub fn updates_json(
    high: (&[f64], &[u64]),
    low: (&[f64], &[u64]),
    tolerance: f64,
    claimed: &Claimed,
) -> Result<String, CommandError> {
    let (r, c) = conformance::updates(high, low, tolerance)?;
    let eps = claimed_upper(claimed)?;
    let mut clipping = put(
        &r[0],
        claimed,
        eps,
        None,
        "no ε: without clipping the sensitivity is unbounded",
    )?;
    if let Value::Obj(o) = &mut clipping {
        o.num("contribution", c);
    }
    Ok(array(std::vec![
        clipping,
        put(
            &r[1],
            claimed,
            eps,
            None,
            "no ε: a data-dependent normaliser is not the accounted mechanism",
        )?,
    ]))
}

/// The steps test. The claimed run has T steps; a trainer that takes `taken` optimizer steps
/// for every `accounted` its accountant records runs ⌈T·taken/accounted⌉ (none when the
/// accountant recorded nothing).
///
/// # Errors
/// A claimed run the accountants refuse.
pub fn steps_json(taken: u64, accounted: u64, claimed: &Claimed) -> Result<String, CommandError> {
    let r = conformance::steps(taken, accounted);
    let eps = claimed_upper(claimed)?;
    let measured = (accounted > 0 && taken > 0)
        .then(|| libm::ceil(claimed.steps as f64 * taken as f64 / accounted as f64))
        .filter(|t| *t <= 1e7)
        .map(|t| poisson(claimed.sampling_rate, claimed.noise_multiplier, t as u64));
    Ok(array(std::vec![put(
        &r,
        claimed,
        eps,
        measured,
        "the ε of the steps taken: T × taken / accounted"
    )?]))
}
