//! Typed entry points for other clients (the Python package): a result computed by the core
//! from values — a [`Run`], δ, scores — and rendered exactly as the command line renders it,
//! without flags or files. Each returns the JSON object the corresponding command prints with
//! `--json` (the same bytes), or a [`CommandError`] that keeps the core's typed [`Error`]
//! (parameter, value, valid range) for invalid input.

use crate::commands;
use crate::failure::Failure;
use crate::{epsilon_fixed, estimate, tradeoff};
use reconbound::accounting::guarantees::Prior;
use reconbound::accounting::run::{Run, Sampling};
use reconbound::Error;
use std::string::String;

pub use crate::tradeoff::Options as TradeoffOptions;

/// Why a typed entry point gave no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandError {
    /// Invalid input found by the core: the parameter, its value and the valid range.
    Invalid(Error),
    /// Invalid input found by the command line's own checks (the message names it).
    Usage(String),
    /// A valid request without a certifiable answer (the command line's exit status 1).
    Uncertifiable(String),
}

impl CommandError {
    /// The message, with the parameter named as the library names it (`noise_multiplier`).
    pub fn message(&self) -> String {
        match self {
            CommandError::Invalid(e) => std::format!("{e}"),
            CommandError::Usage(m) | CommandError::Uncertifiable(m) => m.clone(),
        }
    }
}

impl From<Failure> for CommandError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Usage(u) => CommandError::Usage(u.0),
            Failure::Invalid(e) => CommandError::Invalid(e),
            Failure::Compute(m) => CommandError::Uncertifiable(m),
        }
    }
}

impl From<Error> for CommandError {
    fn from(e: Error) -> Self {
        CommandError::from(Failure::from(e))
    }
}

/// `reconbound epsilon ... --json` for `run` at `delta` by `accountant` (`"rdp"`, `"pld"` or
/// `"all"`): Poisson runs and schedules as `epsilon --noise-multiplier … | --phase …` prints
/// them (`as_schedule`: the `phases` form even for one phase, as `--phase` gives it),
/// fixed-size batches as `epsilon --sampling fixed` (RDP only: `accountant` must be
/// `"rdp"` or `"all"`).
///
/// # Errors
/// `delta` ∉ (0, 1) ([`CommandError::Invalid`]); an unknown `accountant`, a shuffled run or
/// the PLD of fixed-size batches ([`CommandError::Usage`]); `"pld"` alone without a
/// certified value ([`CommandError::Uncertifiable`]).
pub fn epsilon_json(
    run: &Run,
    delta: f64,
    accountant: &str,
    as_schedule: bool,
) -> Result<String, CommandError> {
    reconbound::error::check_open_unit("delta", delta)?;
    if !matches!(accountant, "rdp" | "pld" | "all") {
        return Err(CommandError::Usage(std::format!(
            "accountant = '{}' is not one of rdp, pld, all",
            accountant.chars().take(20).collect::<String>()
        )));
    }
    if let Some(schedule) = run.as_schedule() {
        return Ok(commands::epsilon_output(
            schedule,
            as_schedule,
            delta,
            accountant,
            true,
        )?);
    }
    match run.sampling() {
        Some(Sampling::FixedSize {
            batch_size,
            dataset_size,
        }) => {
            if accountant == "pld" {
                return Err(CommandError::Usage(String::from(
                    "accountant = 'pld' does not apply to fixed-size batches (RDP only)",
                )));
            }
            let (sigma, steps) = run.noise_and_steps().ok_or_else(|| {
                CommandError::Usage(String::from("a fixed-size run has one phase"))
            })?;
            Ok(epsilon_fixed::output(
                batch_size,
                dataset_size,
                sigma,
                steps,
                delta,
                true,
            )?)
        }
        _ => Err(CommandError::Usage(String::from(
            "shuffled epochs have no epsilon (no tight analysis; the Poisson epsilon can underestimate theirs: Chua et al., ICML 2024)",
        ))),
    }
}

/// `reconbound bound ... --json` for a Poisson `run` (or schedule) at `delta`, for `prior`
/// (its size, if given, also gives the Fano bound) and data of per-coordinate diameter
/// `diameter`: every guarantee of [`reconbound::accounting::guarantees::guarantees`],
/// rendered as the command renders it (`as_schedule`: the `phases` form even for one phase).
///
/// # Errors
/// Invalid δ, prior or diameter ([`CommandError::Invalid`]); a run that is not Poisson
/// ([`CommandError::Usage`]: `bound` accounts Poisson sampling and the full batch).
pub fn bound_json(
    run: &Run,
    delta: f64,
    prior: Prior,
    diameter: f64,
    as_schedule: bool,
) -> Result<String, CommandError> {
    let Some(schedule) = run.as_schedule() else {
        return Err(CommandError::Usage(String::from(
            "bound takes Poisson runs and schedules (for fixed-size batches use epsilon: RDP only)",
        )));
    };
    let request = commands::BoundConfig {
        schedule: schedule.clone(),
        is_schedule: as_schedule,
        delta,
        prior,
        diameter,
        rate_note: String::new(),
    };
    Ok(request.compute()?.to_json().render() + "\n")
}

/// `reconbound estimate --scores FILE --json` for the scores given as values: `scores_out`
/// of the trainings without the canary, `scores_in` of those with it (each in trial order,
/// higher meaning 'in'); `splits`, if given, one flag per score (`true` = a calibration row)
/// for the held-out threshold. `estimator` is `"cp"` or `"gdp"`; `threshold` is
/// `"held-out"`, `"bonferroni"` or a number fixed in advance (as text, as the flag takes it);
/// `calibration` the held-out rows per world when there are no splits, picked by
/// `calibration_rows`: `"random"` (a permutation seeded by `seed`, default 0) or `"first"`
/// (the first rows, for scores in an order independent of their values, as trial order).
///
/// # Errors
/// As the command: invalid scores, δ or α ([`CommandError::Invalid`] or
/// [`CommandError::Usage`]).
#[allow(clippy::too_many_arguments)]
pub fn estimate_scores_json(
    scores_out: &[f64],
    scores_in: &[f64],
    splits: Option<(&[bool], &[bool])>,
    delta: f64,
    estimator: &str,
    threshold: &str,
    calibration: Option<u64>,
    calibration_rows: &str,
    seed: Option<u64>,
    alpha: f64,
) -> Result<String, CommandError> {
    Ok(estimate::scores_json(
        scores_out,
        scores_in,
        splits,
        delta,
        estimator,
        threshold,
        calibration,
        calibration_rows,
        seed,
        alpha,
    )?)
}

/// `reconbound estimate --guesses FILE --json` for the guesses given as values: one per
/// canary, +1 'in', −1 'out', 0 abstained; `truths` 1 = in, 0 = out.
///
/// # Errors
/// As the command.
pub fn estimate_guesses_json(
    guesses: &[i64],
    truths: &[i64],
    delta: f64,
    alpha: f64,
    run_args: &[String],
) -> Result<String, CommandError> {
    Ok(estimate::guesses_json(
        guesses, truths, delta, alpha, run_args,
    )?)
}

/// `reconbound tradeoff ... --json` for `run` and `options`: the certified trade-off curve
/// ([`reconbound::accounting::tradeoff`]) and the risks read from it. Poisson runs and
/// schedules as the command prints them (`as_schedule`: the phases form even for one
/// phase); fixed-size batches by the RDP conversion (config with `sampling: "fixed"`).
///
/// # Errors
/// An option out of range ([`CommandError::Invalid`], naming it); a shuffled run
/// ([`CommandError::Usage`]: no certified curve).
pub fn tradeoff_json(
    run: &Run,
    as_schedule: bool,
    options: &TradeoffOptions,
) -> Result<String, CommandError> {
    Ok(tradeoff::json_output(run, as_schedule, options)?)
}
