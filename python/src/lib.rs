//! `reconbound._native`: the Python package's entry points.
//!
//! - Typed ([`epsilon`], [`bound`], [`tradeoff`], [`estimate_scores`], [`estimate_guesses`],
//!   the conformance kit's [`conformance_sampler`], [`conformance_noise`],
//!   [`conformance_updates`], [`conformance_steps`]): values in (floats,
//!   integers, lists — no flags, no files), the core computes (`reconbound::accounting::run`,
//!   the audit estimators), and the command line's renderer (`reconbound_cli::api`) gives
//!   the JSON object the CLI prints for the same request, byte for byte. Invalid input raises
//!   `ValueError(message, parameter, real value, count value)` with the core's parameter name
//!   and value (the one that applies, the other `None`); a valid request without a
//!   certifiable answer raises `RuntimeError(message, None, None, None)`.
//!   `reconbound/__init__.py` turns these into result objects and `UsageError` /
//!   `UncertifiableError`.
//! - [`run`] hands an argument list to `reconbound_cli::run` — the whole command line,
//!   in-process — on a worker thread with the GIL released (the escape hatch `call`).
//!
//! Ctrl-C: while the command runs, the calling thread wakes every 50 ms to let Python handle
//! its signals (`check_signals`). On `KeyboardInterrupt` it sets the run's interruption flag
//! (`reconbound::attacks::trial::with_interrupt`), so every trial loop stops before its next
//! trial, waits for the worker to return, and raises the `KeyboardInterrupt`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use reconbound::accounting::run::Run;
use reconbound::accounting::schedule::{Phase, Schedule, ScheduleError};
use reconbound::Error;
use reconbound_cli::api::{self, CommandError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// run(args: list[str]) -> tuple[int, str, str]
///
/// Run `reconbound ARGS...` in-process (without the program name) and return
/// (exit status, stdout, stderr). The GIL is released while the command runs; Ctrl-C stops
/// a run of trials between two trials and raises KeyboardInterrupt.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<(i32, String, String)> {
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<reconbound_cli::Outcome>();
    let worker_flag = Arc::clone(&flag);
    let worker = std::thread::Builder::new()
        .name(String::from("reconbound"))
        .spawn(move || {
            let out = reconbound::attacks::trial::with_interrupt(worker_flag, || {
                reconbound_cli::run(&args)
            });
            let _ = tx.send(out);
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let mut rx = rx;
    loop {
        // The receiver moves into the GIL-free closure and back (it is Send, not Sync).
        let (received, back) = py.detach(move || {
            let r = rx.recv_timeout(Duration::from_millis(50));
            (r, rx)
        });
        rx = back;
        match received {
            Ok(out) => {
                let _ = worker.join();
                return Ok((out.code, out.stdout, out.stderr));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    flag.store(true, Ordering::SeqCst);
                    // The run returns within about one trial; its output is discarded.
                    let _ = py.detach(|| worker.join());
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "reconbound: the command's thread ended without a result (a bug: please report it)",
                ));
            }
        }
    }
}

/// The Python exception of a typed entry point's error: `ValueError(message, parameter,
/// real value, count value)` for invalid input (parameter and value from the core's error
/// when it has them), `RuntimeError(message, None, None, None)` for a request without a
/// certifiable answer.
fn raised(e: CommandError) -> PyErr {
    let message = e.message();
    match e {
        CommandError::Invalid(Error::InvalidParameter { name, value, .. }) => {
            PyValueError::new_err((message, Some(name), Some(value), None::<u64>))
        }
        CommandError::Invalid(Error::InvalidCount { name, value, .. }) => {
            PyValueError::new_err((message, Some(name), None::<f64>, Some(value)))
        }
        CommandError::Invalid(_) | CommandError::Usage(_) => {
            PyValueError::new_err((message, None::<&str>, None::<f64>, None::<u64>))
        }
        CommandError::Uncertifiable(_) => {
            PyRuntimeError::new_err((message, None::<&str>, None::<f64>, None::<u64>))
        }
    }
}

/// The run a Python `Run` describes: `kind` "poisson" with its phases (q, σ, T), or "fixed" /
/// "shuffled" with one phase (σ, T) and (batch_size, dataset_size).
fn run_of(
    kind: &str,
    phases: &[(f64, f64, u64)],
    batches: Option<(u64, u64)>,
) -> Result<Run, CommandError> {
    match (kind, phases, batches) {
        ("poisson", [(q, sigma, steps)], None) => Ok(Run::poisson(*q, *sigma, *steps)?),
        ("poisson", _, None) => {
            let list: Vec<Phase> = phases
                .iter()
                .map(|&(sampling_rate, noise_multiplier, steps)| Phase {
                    sampling_rate,
                    noise_multiplier,
                    steps,
                })
                .collect();
            match Schedule::new(&list) {
                Ok(s) => Ok(Run::schedule(s)),
                // a phase's field: the core's error, which names the field and its value
                Err(ScheduleError::Phase { error, .. }) => Err(CommandError::Invalid(error)),
                Err(other) => Err(CommandError::Usage(format!("phases: {other}"))),
            }
        }
        ("fixed", [(_, sigma, steps)], Some((b, n))) => Ok(Run::fixed_size(b, n, *sigma, *steps)?),
        ("shuffled", [(_, sigma, steps)], Some((b, n))) => Ok(Run::shuffled(b, n, *sigma, *steps)?),
        _ => Err(CommandError::Usage(String::from(
            "a run is Poisson phases, or one phase of fixed-size or shuffled batches",
        ))),
    }
}

/// epsilon(kind, phases, batches, delta, accountant, as_schedule) -> str
///
/// The JSON object of `reconbound epsilon ... --json` for the run (see `run_of`), computed
/// by the core's accountants (`reconbound::accounting::run`).
#[pyfunction]
fn epsilon(
    py: Python<'_>,
    kind: &str,
    phases: Vec<(f64, f64, u64)>,
    batches: Option<(u64, u64)>,
    delta: f64,
    accountant: &str,
    as_schedule: bool,
) -> PyResult<String> {
    let kind = kind.to_owned();
    let accountant = accountant.to_owned();
    py.detach(move || {
        let run = run_of(&kind, &phases, batches)?;
        api::epsilon_json(&run, delta, &accountant, as_schedule)
    })
    .map_err(raised)
}

/// bound(kind, phases, batches, delta, kappa, prior_size, diameter, as_schedule) -> str
///
/// The JSON object of `reconbound bound ... --json` for the run, computed by the core
/// (`reconbound::accounting::guarantees`): a uniform prior of `prior_size` candidates, or a
/// baseline `kappa` (exactly one of the two).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn bound(
    py: Python<'_>,
    kind: &str,
    phases: Vec<(f64, f64, u64)>,
    batches: Option<(u64, u64)>,
    delta: f64,
    kappa: Option<f64>,
    prior_size: Option<u64>,
    diameter: f64,
    as_schedule: bool,
) -> PyResult<String> {
    use reconbound::accounting::guarantees::Prior;
    let kind = kind.to_owned();
    py.detach(move || {
        let run = run_of(&kind, &phases, batches)?;
        let prior = match (kappa, prior_size) {
            (None, Some(m)) => Prior::uniform(m)?,
            (Some(k), None) => Prior::baseline(k)?,
            _ => {
                return Err(CommandError::Usage(String::from(
                    "give prior_size (a uniform prior) or kappa, not both",
                )))
            }
        };
        api::bound_json(&run, delta, prior, diameter, as_schedule)
    })
    .map_err(raised)
}

/// tradeoff(kind, phases, batches, fpr, prior, kappa, delta, points, as_schedule) -> str
///
/// The JSON object of `reconbound tradeoff ... --json` for the run: the certified trade-off
/// curve (`reconbound::accounting::tradeoff`) and the risks read from it.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn tradeoff(
    py: Python<'_>,
    kind: &str,
    phases: Vec<(f64, f64, u64)>,
    batches: Option<(u64, u64)>,
    fpr: Vec<f64>,
    prior: f64,
    kappa: Option<f64>,
    delta: f64,
    points: Option<u64>,
    as_schedule: bool,
) -> PyResult<String> {
    let kind = kind.to_owned();
    py.detach(move || {
        let run = run_of(&kind, &phases, batches)?;
        let options = api::TradeoffOptions {
            fpr,
            prior,
            kappa,
            delta,
            points: points.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        };
        api::tradeoff_json(&run, as_schedule, &options)
    })
    .map_err(raised)
}

/// estimate_scores(scores_out, scores_in, split_out, split_in, delta, estimator, threshold,
/// calibration, calibration_rows, seed, alpha) -> str
///
/// The JSON object of `reconbound estimate --scores FILE --json` for these scores, with no
/// file.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn estimate_scores(
    py: Python<'_>,
    scores_out: Vec<f64>,
    scores_in: Vec<f64>,
    split_out: Option<Vec<bool>>,
    split_in: Option<Vec<bool>>,
    delta: f64,
    estimator: &str,
    threshold: &str,
    calibration: Option<u64>,
    calibration_rows: &str,
    seed: Option<u64>,
    alpha: f64,
) -> PyResult<String> {
    let (estimator, threshold) = (estimator.to_owned(), threshold.to_owned());
    let calibration_rows = calibration_rows.to_owned();
    py.detach(move || {
        let splits = match (&split_out, &split_in) {
            (Some(a), Some(b)) => Some((a.as_slice(), b.as_slice())),
            (None, None) => None,
            _ => {
                return Err(CommandError::Usage(String::from(
                    "give both split_out and split_in, or neither",
                )))
            }
        };
        api::estimate_scores_json(
            &scores_out,
            &scores_in,
            splits,
            delta,
            &estimator,
            &threshold,
            calibration,
            &calibration_rows,
            seed,
            alpha,
        )
    })
    .map_err(raised)
}

/// estimate_guesses(guesses, truths, delta, alpha, run_args) -> str
///
/// The JSON object of `reconbound estimate --guesses FILE --json RUN` for these guesses, with
/// no file; `run_args` the run flags the guesses are tested against (empty: no run).
#[pyfunction]
fn estimate_guesses(
    py: Python<'_>,
    guesses: Vec<i64>,
    truths: Vec<i64>,
    delta: f64,
    alpha: f64,
    run_args: Vec<String>,
) -> PyResult<String> {
    py.detach(move || api::estimate_guesses_json(&guesses, &truths, delta, alpha, &run_args))
        .map_err(raised)
}

/// The claimed run of a conformance test.
fn claimed(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    n: u64,
) -> reconbound_cli::conformance::Claimed {
    reconbound_cli::conformance::Claimed {
        sampling_rate: q,
        noise_multiplier: sigma,
        steps,
        delta,
        dataset_size: n,
    }
}

/// conformance_sampler(batches, dataset_size, sampling_rate, noise_multiplier, steps, delta,
/// alpha) -> str
///
/// The sampler tests of the conformance kit (`reconbound::conformance::sampler`) on the
/// record indices of each step's batch: `{"tests": [...]}` as JSON.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn conformance_sampler(
    py: Python<'_>,
    batches: Vec<Vec<u64>>,
    dataset_size: u64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    alpha: f64,
) -> PyResult<String> {
    py.detach(move || {
        let c = claimed(sampling_rate, noise_multiplier, steps, delta, dataset_size);
        reconbound_cli::conformance::sampler_json(&batches, &c, alpha)
    })
    .map_err(raised)
}

/// conformance_noise(z, sampling_rate, noise_multiplier, steps, delta, alpha) -> str
///
/// The noise test on the update's coordinates (zero gradients) times the normaliser over C.
#[pyfunction]
fn conformance_noise(
    py: Python<'_>,
    z: Vec<f64>,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    alpha: f64,
) -> PyResult<String> {
    py.detach(move || {
        let c = claimed(sampling_rate, noise_multiplier, steps, delta, 0);
        reconbound_cli::conformance::noise_json(&z, &c, alpha)
    })
    .map_err(raised)
}

/// conformance_updates(ratios, batch_sizes, low_ratios, low_batch_sizes, tolerance,
/// sampling_rate, noise_multiplier, steps, delta) -> str
///
/// The clipping and normalisation tests on noiseless steps, with gradients of norm 1000·C
/// and 10·C.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn conformance_updates(
    py: Python<'_>,
    ratios: Vec<f64>,
    batch_sizes: Vec<u64>,
    low_ratios: Vec<f64>,
    low_batch_sizes: Vec<u64>,
    tolerance: f64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
) -> PyResult<String> {
    py.detach(move || {
        let c = claimed(sampling_rate, noise_multiplier, steps, delta, 0);
        reconbound_cli::conformance::updates_json(
            (&ratios, &batch_sizes),
            (&low_ratios, &low_batch_sizes),
            tolerance,
            &c,
        )
    })
    .map_err(raised)
}

/// conformance_steps(taken, accounted, sampling_rate, noise_multiplier, steps, delta) -> str
///
/// The steps test.
#[pyfunction]
fn conformance_steps(
    py: Python<'_>,
    taken: u64,
    accounted: u64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
) -> PyResult<String> {
    py.detach(move || {
        let c = claimed(sampling_rate, noise_multiplier, steps, delta, 0);
        reconbound_cli::conformance::steps_json(taken, accounted, &c)
    })
    .map_err(raised)
}

/// sig(x, digits, side) -> str
///
/// `x` to `digits` significant digits (1 to 17) rounded towards `side` ("up" for an upper
/// bound, "down" for a lower bound, "nearest" for a plain value, without trailing zeros): the
/// command line's rounding (`reconbound_cli::format::sig`), so that Python prints a number as
/// the terminal and the pages do (issue 43).
#[pyfunction]
fn sig(x: f64, digits: usize, side: &str) -> PyResult<String> {
    use reconbound_cli::format::{self, Side};
    let side = match side {
        "up" => Side::Up,
        "down" => Side::Down,
        "nearest" => Side::Nearest,
        other => {
            return Err(PyValueError::new_err((
                format!("side = {other:?} is not one of \"up\", \"down\", \"nearest\""),
                "side",
                None::<f64>,
                None::<u64>,
            )))
        }
    };
    if !(1..=17).contains(&digits) {
        return Err(PyValueError::new_err((
            format!("digits = {digits} is out of range: must be in 1..=17"),
            "digits",
            None::<f64>,
            Some(digits as u64),
        )));
    }
    // a plain value without trailing zeros, a bound with them (they state its precision): as
    // the pages show them
    Ok(if side == Side::Nearest {
        format::plain(x, digits)
    } else {
        format::sig(x, digits, side)
    })
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(bound, m)?)?;
    m.add_function(wrap_pyfunction!(tradeoff, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_scores, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_guesses, m)?)?;
    m.add_function(wrap_pyfunction!(conformance_sampler, m)?)?;
    m.add_function(wrap_pyfunction!(conformance_noise, m)?)?;
    m.add_function(wrap_pyfunction!(conformance_updates, m)?)?;
    m.add_function(wrap_pyfunction!(conformance_steps, m)?)?;
    m.add_function(wrap_pyfunction!(sig, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
