//! Bracketing root finding. (STUB: bisection only.)

use crate::error::{invalid, Error, Result};

/// Find x in [lo, hi] with f(x) = 0, given f(lo) and f(hi) of opposite signs (or zero),
/// to absolute tolerance `xtol` in x.
///
/// # Errors
/// Bounds not finite or not ordered; `xtol` not > 0; f(lo), f(hi) not bracketing or NaN;
/// [`Error::NotConverged`] after `max_iter` iterations.
pub fn brent<F: FnMut(f64) -> f64>(
    mut f: F,
    lo: f64,
    hi: f64,
    xtol: f64,
    max_iter: usize,
) -> Result<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return invalid("lo", lo, "finite and < hi");
    }
    if !(xtol > 0.0) {
        return invalid("xtol", xtol, "> 0");
    }
    let (mut a, mut b) = (lo, hi);
    let (fa, fb) = (f(a), f(b));
    if fa.is_nan() || fb.is_nan() || fa * fb > 0.0 {
        return Err(Error::Inconsistent {
            what: "root finder: f(lo) and f(hi) do not bracket a root",
            value: fa,
        });
    }
    if fa == 0.0 {
        return Ok(a);
    }
    if fb == 0.0 {
        return Ok(b);
    }
    for _ in 0..max_iter {
        let m = 0.5 * (a + b);
        if b - a <= xtol {
            return Ok(m);
        }
        let fm = f(m);
        if fm.is_nan() {
            return Err(Error::Numerical { what: "root finder: f is NaN", value: m });
        }
        if (fm < 0.0) == (fa < 0.0) {
            a = m;
        } else {
            b = m;
        }
    }
    Err(Error::NotConverged { what: "root finder", value: 0.5 * (a + b) })
}
