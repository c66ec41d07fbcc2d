//! The crate's single error type and the validation helpers every public entry point uses.
//!
//! Every variant carries the offending value and names the parameter, so that the message
//! alone tells a user what to change: `noise_multiplier = -1 is out of range: must be finite
//! and > 0`.

use core::fmt;

/// Everything that can go wrong in `reconbound`.
///
/// `Copy` and `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A real-valued parameter is NaN, infinite or outside its valid range.
    InvalidParameter {
        /// Parameter name as the public API (or CLI flag) spells it.
        name: &'static str,
        /// The value that was passed.
        value: f64,
        /// The valid range, in words (e.g. `"finite and > 0"`, `"in (0, 1]"`).
        expected: &'static str,
    },
    /// An integer parameter (count, size, steps) is outside its valid range.
    InvalidCount {
        /// Parameter name.
        name: &'static str,
        /// The value that was passed.
        value: u64,
        /// The valid range, in words.
        expected: &'static str,
    },
    /// Two or more parameters are individually valid but inconsistent with each other,
    /// e.g. `orders` and `rdp` of different lengths, or weights that do not sum to 1.
    Inconsistent {
        /// What is inconsistent, in words.
        what: &'static str,
        /// A value that shows the inconsistency (a length, a sum).
        value: f64,
    },
    /// An iterative method did not reach its tolerance; no result is returned because it
    /// would not be a valid bound.
    NotConverged {
        /// The computation that failed.
        what: &'static str,
        /// The last iterate or residual.
        value: f64,
    },
    /// A file could not be opened or read (std only).
    Io {
        /// What was being read.
        what: &'static str,
        /// The operating system's error code, or −1 if there is none.
        code: i32,
    },
    /// The inputs are valid but the result cannot be represented or certified in `f64`
    /// (overflow, a bound that would be infinite, an error bound larger than requested).
    Numerical {
        /// The computation that failed.
        what: &'static str,
        /// The offending intermediate value.
        value: f64,
    },
    /// A run of trials was interrupted between two trials at its caller's request
    /// ([`crate::attacks::trial::with_interrupt`], std only): no result is returned.
    Interrupted,
}

/// A real number as a person reads it in a message: plain decimals for magnitudes in
/// [1e-4, 1e15) (and 0), scientific notation otherwise (`1e-300`, `7.04e-12`, not hundreds
/// of digits), `+∞`/`−∞` for infinities and `NaN` — never Rust's `inf`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shown(pub f64);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_nan() {
            f.write_str("NaN")
        } else if v == f64::INFINITY {
            f.write_str("+∞")
        } else if v == f64::NEG_INFINITY {
            f.write_str("−∞")
        } else if v == 0.0 || (1e-4..1e15).contains(&libm::fabs(v)) {
            write!(f, "{v}")
        } else {
            write!(f, "{v:e}")
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidParameter {
                name,
                value,
                expected,
            } => write!(
                f,
                "{name} = {} is out of range: must be {expected}",
                Shown(value)
            ),
            Error::InvalidCount {
                name,
                value,
                expected,
            } => write!(f, "{name} = {value} is out of range: must be {expected}"),
            // NaN marks "no value to show" (never printed as "(NaN)", issue 43)
            Error::Inconsistent { what, value } if value.is_nan() => {
                write!(f, "inconsistent input: {what}")
            }
            Error::Inconsistent { what, value } => {
                write!(f, "inconsistent input: {what} ({})", Shown(value))
            }
            Error::Numerical { what, value } if value.is_nan() => {
                write!(f, "numerical failure: {what}")
            }
            Error::NotConverged { what, value } => {
                write!(f, "{what} did not converge (last value {})", Shown(value))
            }
            Error::Io { what, code } => write!(f, "{what} (OS error {code})"),
            Error::Numerical { what, value } => {
                write!(f, "numerical failure: {what} (value {})", Shown(value))
            }
            Error::Interrupted => write!(f, "interrupted between trials"),
        }
    }
}

impl core::error::Error for Error {}

impl Error {
    /// The parameter an [`Error::InvalidParameter`] or [`Error::InvalidCount`] names
    /// (as the public API spells it), `None` for other variants.
    ///
    /// ```
    /// use reconbound::accounting::rdp;
    /// let e = rdp::subsampled_gaussian_rdp(0.5, -1.0, 2.0).unwrap_err();
    /// assert_eq!(e.parameter(), Some("noise_multiplier"));
    /// ```
    pub fn parameter(&self) -> Option<&'static str> {
        match *self {
            Error::InvalidParameter { name, .. } | Error::InvalidCount { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// Test helper: the parameter an error names, or `"inconsistent"` / `"other"`.
#[cfg(test)]
pub(crate) fn error_name(e: Error) -> &'static str {
    match e {
        Error::Inconsistent { .. } => "inconsistent",
        _ => e.parameter().unwrap_or("other"),
    }
}

/// Shorthand for `core::result::Result<T, reconbound::Error>`.
pub type Result<T> = core::result::Result<T, Error>;

/// `Err(InvalidParameter)` for `name = value` with the range `expected`.
pub fn invalid<T>(name: &'static str, value: f64, expected: &'static str) -> Result<T> {
    Err(Error::InvalidParameter {
        name,
        value,
        expected,
    })
}

/// Finite and strictly positive (σ, sensitivity, diameter, …).
pub fn check_positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        invalid(name, value, "finite and > 0")
    }
}

/// Finite and non-negative.
pub fn check_non_negative(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        invalid(name, value, "finite and >= 0")
    }
}

/// Finite (any sign).
pub fn check_finite(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        invalid(name, value, "finite")
    }
}

/// A probability in the open interval (0, 1) (δ, confidence levels).
pub fn check_open_unit(name: &'static str, value: f64) -> Result<f64> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        invalid(name, value, "in (0, 1)")
    }
}

/// A rate or probability in (0, 1] (sampling rate q, baseline κ).
pub fn check_unit_rate(name: &'static str, value: f64) -> Result<f64> {
    if value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        invalid(name, value, "in (0, 1]")
    }
}

/// A probability in the closed interval [0, 1].
pub fn check_probability(name: &'static str, value: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        invalid(name, value, "in [0, 1]")
    }
}

/// A Rényi order α: finite and > 1.
pub fn check_order(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 1.0 {
        Ok(value)
    } else {
        invalid(name, value, "finite and > 1")
    }
}

/// A count that must be at least `min` (`expected` names the range in words).
pub fn check_count(
    name: &'static str,
    value: u64,
    min: u64,
    expected: &'static str,
) -> Result<u64> {
    if value >= min {
        Ok(value)
    } else {
        Err(Error::InvalidCount {
            name,
            value,
            expected,
        })
    }
}

/// Number of composition steps T ≥ 1.
pub fn check_steps(value: u64) -> Result<u64> {
    check_count("steps", value, 1, ">= 1")
}

/// The DP-SGD triple every accountant takes, checked in this order: `sampling_rate` ∈ (0, 1],
/// `noise_multiplier` finite and > 0, `steps` ≥ 1.
pub fn check_dpsgd(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
) -> Result<(f64, f64, u64)> {
    Ok((
        check_unit_rate("sampling_rate", sampling_rate)?,
        check_positive("noise_multiplier", noise_multiplier)?,
        check_steps(steps)?,
    ))
}

/// A result that must be finite before it is returned as a bound.
pub fn check_result(what: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::Numerical { what, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_reject_nan_infinities_and_out_of_range() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0] {
            assert!(check_positive("sigma", v).is_err(), "{v}");
        }
        for v in [f64::NAN, 0.0, 1.0, -0.5, 2.0] {
            assert!(check_open_unit("delta", v).is_err(), "{v}");
        }
        for v in [f64::NAN, 0.0, 1.0 + 1e-16 * 4.0, -0.1] {
            assert!(check_unit_rate("q", v).is_err(), "{v}");
        }
        assert!(check_unit_rate("q", 1.0).is_ok());
        for v in [f64::NAN, 1.0, 0.5, f64::INFINITY] {
            assert!(check_order("alpha", v).is_err(), "{v}");
        }
        assert!(check_steps(0).is_err());
        assert!(check_result("x", f64::NAN).is_err());
    }

    #[test]
    fn message_names_parameter_value_and_range() {
        let e = check_positive("noise_multiplier", -2.0).unwrap_err();
        #[cfg(feature = "std")]
        assert_eq!(
            std::format!("{e}"),
            "noise_multiplier = -2 is out of range: must be finite and > 0"
        );
        assert!(matches!(
            e,
            Error::InvalidParameter {
                name: "noise_multiplier",
                ..
            }
        ));
    }
}
