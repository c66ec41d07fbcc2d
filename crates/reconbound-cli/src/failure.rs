//! Why a command failed ([`Failure`]: usage, invalid input, or no certifiable answer, with
//! their exit statuses) and how an offending value or a core error is worded for the user.
//! One floor below every command and the input and output helpers (issue 44: it lived in
//! `commands.rs`, which the readers and writers then imported).

use super::args::UsageError;
use reconbound::Error;
use std::format;
use std::string::{String, ToString};

/// Why a command failed.
pub(crate) enum Failure {
    /// Bad flags or invalid input: exit 2.
    Usage(UsageError),
    /// Invalid input found by the core (a parameter out of range): exit 2, the message
    /// naming the flag ([`render_invalid`]).
    Invalid(Error),
    /// Valid input, uncertifiable result: exit 1.
    Compute(String),
}

/// The message of an invalid-input error of the core, with the parameter named by its flag
/// (`noise_multiplier` → `--noise-multiplier`).
pub(crate) fn render_invalid(e: &Error) -> String {
    match *e {
        Error::InvalidParameter {
            name,
            value,
            expected,
        } => format!(
            "{} = {} is out of range: must be {expected}",
            flag(name),
            shown(value)
        ),
        Error::InvalidCount {
            name: "file_bytes", ..
        } => data_error(e),
        Error::InvalidCount {
            name,
            value,
            expected,
        } => format!(
            "{} = {value} is out of range: must be {expected}",
            flag(name)
        ),
        _ => e.to_string(),
    }
}

/// The message of a data reader's error: a file's size said as one (issue 43: "path = 4238
/// is out of range" read as a path), the others as the core words them (their names are
/// the reader's, not flags).
pub(crate) fn data_error(e: &Error) -> String {
    match *e {
        Error::InvalidCount {
            name: "file_bytes",
            value,
            expected,
        } => format!("a data file of {value} bytes is refused: it must be {expected}"),
        _ => e.to_string(),
    }
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Failure::Usage(e)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidParameter { .. }
            | Error::InvalidCount { .. }
            | Error::Inconsistent { .. } => Failure::Invalid(e),
            _ => Failure::Compute(e.to_string()),
        }
    }
}

/// An offending value as a user reads it: plain decimals in [1e-4, 1e15), else scientific
/// notation (`1e-300`, not three hundred zeros).
pub(crate) fn shown(v: f64) -> String {
    reconbound::error::Shown(v).to_string()
}

/// The CLI flag for a library parameter name (`noise_multiplier` → `--noise-multiplier`).
fn flag(name: &str) -> String {
    let mapped = match name {
        "order" | "orders" => "orders",
        "epsilon" | "target_epsilon" => "target-epsilon",
        "gamma" | "target_gamma" => "target-gamma",
        "clip_norm" => "clip",
        other => other,
    };
    format!("--{}", mapped.replace('_', "-"))
}
