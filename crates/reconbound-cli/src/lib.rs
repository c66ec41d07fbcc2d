#![forbid(unsafe_code)]
#![deny(missing_docs)]
//! The `reconbound` command line, as a library so that it can be tested and fuzzed: [`run`]
//! takes the arguments (without the program name) and returns what to print and the exit
//! status. The binary (`src/main.rs`) only forwards to it.
//!
//! A client of the numerical core, the crate `reconbound`, through its public API only: this
//! crate parses flags, calls the core and renders its results (text, JSON, CSV, SVG, HTML).
//!
//! Exit status (one rule for every command):
//! - **0**: the requested result was computed and delivered.
//! - **2**: usage error or invalid input, found before any work and with nothing written: an
//!   unknown or malformed flag, a value outside the range the command supports — also when
//!   the range depends on other flags, such as a target ε or γ that no noise multiplier
//!   σ ≤ 1e8 reaches, or σ > 1e8 itself —, an input file that cannot be read or exceeds its
//!   size cap, an output path that cannot be written or that names another output or an
//!   input. One line on stderr names the flag (and its value).
//! - **3** (`check` only): the claim checked is optimistic — below what the run certifiably
//!   spends; the verdict is on standard output as for 0.
//! - **1**: a valid request without a certifiable answer (a numerical failure, a PLD with no
//!   certified value under `--accountant pld`), or a result that could not be delivered (an
//!   output file or standard output that fails while being written: a full disk,
//!   `/dev/full`, a closed pipe). The message says why.
//!
//! Subcommands and JSON keys are stable: scripts use them to cross-check other
//! implementations. See `reconbound <subcommand> --help`.

pub mod api;
pub mod args;
mod attack;
mod attack_glm;
mod attack_gm;
mod attack_reconn;
mod attack_run;
mod audit;
mod audit_claim;
mod audit_one_run;
mod check;
mod commands;
pub mod conformance;
mod epsilon_fixed;
mod estimate;
mod failure;
mod fil_logreg;
pub mod format;
mod html;
pub(crate) mod input;
pub mod json;
mod merge;
mod output;
mod report;
mod run_flags;
mod run_page;
mod schedule;
mod shadow_io;
mod shard;
mod svg;
mod tradeoff;
mod train;

use std::format;
use std::string::String;
use std::vec::Vec;

pub use args::UsageError;
pub use output::on_interrupt;

/// What a command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Text for standard output.
    pub stdout: String,
    /// Text for standard error.
    pub stderr: String,
    /// Process exit status.
    pub code: i32,
}

impl Outcome {
    fn ok(stdout: String) -> Self {
        Outcome {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }

    fn usage(msg: &str) -> Self {
        Outcome {
            stdout: String::new(),
            stderr: format!("reconbound: {msg}\n"),
            code: 2,
        }
    }
}

/// Top-level help.
pub const HELP: &str = "\
reconbound — bounds on training-data reconstruction under differentially private learning

usage: reconbound <command> [flags]    (reconbound <command> --help for its flags)

The numerical core is the Rust crate 'reconbound' (no_std); this command line is its client
(crate 'reconbound-cli'), as is the Python package: every number printed here comes from it.

commands:
  run        describe a training run once (batch, data set, epochs, sampler, accumulation,
             microbatches, relation): the mechanism, and the run file every command takes (--run)
  check      a certified verdict on the ε another library printed for a run: optimistic,
             consistent or conservative (exit 3 when optimistic)
  bound      every guarantee for one DP-SGD configuration (ε by RDP and PLD, ReRo γ, Fano, MSE)
  rdp        Rényi DP of the Poisson-subsampled Gaussian at given orders
  epsilon    ε(δ) of DP-SGD by RDP and/or PLD accounting (--sampling fixed: fixed-size batches, replace-one)
  rero       reconstruction robustness γ (Hayes et al. 2023) for DP-SGD
  tradeoff   the certified trade-off curve (f-DP): membership TPR at an FPR, advantage, ε, γ
  fano       the Fano bound of Guo et al. 2022b (Hayes et al. 2023 App. H)
  calibrate  the noise multiplier for a target ε or a target γ
  train      DP-SGD (or output-perturbed logistic regression) on MNIST/CIFAR-10: accuracy, ε, time
  fil-logreg per-example Fisher information leakage of output-perturbed logistic regression (Guo §7.1)
  attack     run an attack beside the bound it must not beat: glm (Balle §III, Guo §7.2),
             gradient-matching and prior-aware (Hayes et al. 2023), reconn (Balle §IV–VI)
  audit      a privacy audit (Nasr et al. 2021): crafted canaries, distinguishers, the empirical
             ε as a lower bound beside the accountant's ε by RDP and PLD
  estimate   the audit's estimators on scores (or one-run guesses) from any implementation,
             read from a CSV file
  merge      reassemble the shard files of an 'attack prior-aware', 'audit' or 'report'
             --shard K/M run into the whole run's result
  report     the page of YOUR run (--run FILE, no training): the one-line answer, the claimed
             ε checked, ε, the trade-off curve, γ, MSE; without --run, the crate's own demo:
             it trains a model and shows ε, ReRo γ beside the prior-aware attack, MSE and FIL,
             the audit
";

/// What the top-level `--help` adds to [`HELP`] (issue 43).
const EXAMPLE: &str = "\
Example (every guarantee for the README's MNIST run):
  reconbound bound
";

/// Run the command line on `args` (without the program name).
pub fn run(args: &[String]) -> Outcome {
    let Some(cmd) = args.first() else {
        return Outcome::usage("missing command (try 'reconbound --help')");
    };
    let rest: Vec<String> = args.iter().skip(1).cloned().collect();
    let rest = if matches!(
        cmd.as_str(),
        "bound" | "epsilon" | "rero" | "tradeoff" | "calibrate"
    ) {
        match run_flags::normalise(cmd, &rest) {
            Ok(r) => r,
            Err(e) => return failed(e),
        }
    } else {
        rest
    };
    let result = match cmd.as_str() {
        "--help" | "-h" | "help" => {
            let short = String::from(HELP) + "\n" + EXAMPLE;
            let text = args::help_text(false, "<command>", &short, String::from(HELP));
            return Outcome::ok(text);
        }
        "--help-all" => return Outcome::ok(String::from(HELP)),
        "--version" | "-V" => {
            return Outcome::ok(format!("reconbound {}\n", env!("CARGO_PKG_VERSION")))
        }
        "run" => run_flags::run_command(&rest),
        "check" => match check::check(&rest) {
            Ok((stdout, code)) => {
                return Outcome {
                    stdout,
                    stderr: String::new(),
                    code,
                }
            }
            Err(e) => return failed(e),
        },
        "bound" => commands::bound(&rest),
        "rdp" => commands::rdp(&rest),
        "epsilon" if epsilon_fixed::wants(&rest) => epsilon_fixed::epsilon(&rest),
        "epsilon" => commands::epsilon(&rest),
        "rero" => commands::rero(&rest),
        "tradeoff" => tradeoff::tradeoff(&rest),
        "fano" => commands::fano(&rest),
        "calibrate" => commands::calibrate(&rest),
        "train" => train::train(&rest),
        "fil-logreg" => fil_logreg::fil_logreg(&rest),
        "attack" => attack::attack(&rest),
        "audit" => audit::audit(&rest),
        "estimate" => estimate::estimate(&rest),
        "merge" => merge::merge(&rest),
        "report" if run_page::wants(&rest) => run_page::report(&rest),
        "report" => report::report(&rest),
        other => {
            let shown: String = other.chars().filter(|c| !c.is_control()).take(40).collect();
            return Outcome::usage(&format!(
                "unknown command '{shown}' (commands: run, check, bound, rdp, epsilon, rero, tradeoff, fano, calibrate, train, fil-logreg, attack, audit, estimate, merge, report)"
            ));
        }
    };
    match result {
        Ok(text) => Outcome::ok(text),
        Err(e) => failed(e),
    }
}

/// The outcome of a failed command: exit 2 for bad input, 1 for no certified answer.
fn failed(e: failure::Failure) -> Outcome {
    match e {
        failure::Failure::Usage(e) => Outcome::usage(&e.0),
        failure::Failure::Invalid(e) => Outcome::usage(&failure::render_invalid(&e)),
        failure::Failure::Compute(msg) => Outcome {
            stdout: String::new(),
            stderr: format!("reconbound: {msg}\n"),
            code: 1,
        },
    }
}
