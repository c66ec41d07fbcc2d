//! Bracketing root finding: Brent's method (inverse quadratic interpolation and secant
//! steps, safeguarded by bisection), which keeps a sign-change bracket at every step.

use crate::error::{invalid, Error, Result};

/// A bracket [lo, hi] known to contain a root: f(lo) and f(hi) have opposite signs or
/// one of them is 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// Left end.
    pub lo: f64,
    /// Right end.
    pub hi: f64,
    /// f(lo).
    pub f_lo: f64,
    /// f(hi).
    pub f_hi: f64,
    /// The best estimate of the root (the end with the smaller |f|), in [lo, hi].
    pub best: f64,
}

/// Brent's method: find x in [lo, hi] with f(x) = 0, given f(lo) and f(hi) of opposite
/// signs (or one of them zero). Returns the final bracket, of width ≤ `xtol` + 4ε·|x|.
///
/// Callers that need a *conservative* root (e.g. the smallest σ that certainly meets a
/// target) pick `lo` or `hi` of the bracket by the sign of f, not `best`.
///
/// # Errors
/// `lo`, `hi` not finite or not `lo < hi`; `xtol` not finite and > 0;
/// f(lo), f(hi) NaN or not bracketing ([`Error::Inconsistent`]); f NaN at an interior
/// point ([`Error::Numerical`]); [`Error::NotConverged`] after `max_iter` evaluations.
///
/// # Examples
/// ```
/// use reconbound::math::root::brent_bracket;
/// let b = brent_bracket(|x| x * x - 2.0, 0.0, 2.0, 1e-15, 100).unwrap();
/// assert!(b.lo <= core::f64::consts::SQRT_2 && core::f64::consts::SQRT_2 <= b.hi);
/// assert!(b.hi - b.lo <= 1e-15 + 1e-15);
/// ```
pub fn brent_bracket<F: FnMut(f64) -> f64>(
    mut f: F,
    lo: f64,
    hi: f64,
    xtol: f64,
    max_iter: usize,
) -> Result<Bracket> {
    if !lo.is_finite() {
        return invalid("lo", lo, "finite and < hi");
    }
    if !(hi.is_finite() && lo < hi) {
        return invalid("hi", hi, "finite and > lo");
    }
    if !(xtol.is_finite() && xtol > 0.0) {
        return invalid("xtol", xtol, "finite and > 0");
    }
    let (mut a, mut b) = (lo, hi);
    let (mut fa, mut fb) = (f(a), f(b));
    if fa.is_nan() || fb.is_nan() || (fa > 0.0 && fb > 0.0) || (fa < 0.0 && fb < 0.0) {
        return Err(Error::Inconsistent {
            what: "root finder: f(lo) and f(hi) do not bracket a root",
            value: if fa.is_nan() { fa } else { fb },
        });
    }
    let make = |x: f64, fx: f64, y: f64, fy: f64| {
        let (lo, f_lo, hi, f_hi) = if x <= y {
            (x, fx, y, fy)
        } else {
            (y, fy, x, fx)
        };
        let best = if libm::fabs(fx) <= libm::fabs(fy) {
            x
        } else {
            y
        };
        Bracket {
            lo,
            hi,
            f_lo,
            f_hi,
            best,
        }
    };
    if fa == 0.0 {
        return Ok(make(a, fa, a, fa));
    }
    if fb == 0.0 {
        return Ok(make(b, fb, b, fb));
    }
    // Brent (1973), "zeroin": b is the best iterate, c the other end of the bracket,
    // a the previous b.
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..max_iter {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if libm::fabs(fc) < libm::fabs(fb) {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol1 = 2.0 * f64::EPSILON * libm::fabs(b) + 0.5 * xtol;
        let xm = 0.5 * (c - b);
        if libm::fabs(xm) <= tol1 || fb == 0.0 {
            return Ok(make(b, fb, c, fc));
        }
        if libm::fabs(e) >= tol1 && libm::fabs(fa) > libm::fabs(fb) {
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * xm * s;
                q = 1.0 - s;
            } else {
                let qq = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * xm * qq * (qq - r) - (b - a) * (r - 1.0));
                q = (qq - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            }
            p = libm::fabs(p);
            let min1 = 3.0 * xm * q - libm::fabs(tol1 * q);
            let min2 = libm::fabs(e * q);
            if 2.0 * p < min1.min(min2) {
                e = d;
                d = p / q;
            } else {
                d = xm;
                e = d;
            }
        } else {
            d = xm;
            e = d;
        }
        a = b;
        fa = fb;
        b += if libm::fabs(d) > tol1 {
            d
        } else if xm > 0.0 {
            tol1
        } else {
            -tol1
        };
        fb = f(b);
        if fb.is_nan() {
            return Err(Error::Numerical {
                what: "root finder: f is NaN",
                value: b,
            });
        }
    }
    Err(Error::NotConverged {
        what: "root finder",
        value: b,
    })
}

/// Find x in [lo, hi] with f(x) = 0, given f(lo) and f(hi) of opposite signs (or zero),
/// to absolute tolerance `xtol` in x (plus 4ε·|x|), by Brent's method; returns the best
/// iterate of [`brent_bracket`].
///
/// # Errors
/// Bounds not finite or not ordered; `xtol` not > 0; f(lo), f(hi) not bracketing or NaN;
/// f NaN inside; [`Error::NotConverged`] after `max_iter` iterations.
///
/// # Examples
/// ```
/// use reconbound::math::root::brent;
/// let x = brent(|x| libm::cos(x) - x, 0.0, 1.0, 1e-14, 100).unwrap();
/// assert!((x - 0.739_085_133_215_160_6).abs() < 1e-13);
/// assert!(brent(|x| x * x + 1.0, -1.0, 1.0, 1e-12, 100).is_err());
/// ```
pub fn brent<F: FnMut(f64) -> f64>(
    f: F,
    lo: f64,
    hi: f64,
    xtol: f64,
    max_iter: usize,
) -> Result<f64> {
    brent_bracket(f, lo, hi, xtol, max_iter).map(|b| b.best)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn brent_finds_known_roots_within_tolerance() {
        // Tolerance = the requested xtol plus rounding (4ε|x|).
        type Case = (fn(f64) -> f64, f64, f64, f64);
        let cases: [Case; 4] = [
            (|x| x * x - 2.0, 0.0, 2.0, core::f64::consts::SQRT_2),
            (|x| libm::exp(x) - 10.0, -5.0, 5.0, core::f64::consts::LN_10),
            (|x| x * x * x, -1.0, 3.0, 0.0),
            // Step function: pure bisection behaviour, root at the jump 0.3.
            (|x| if x < 0.3 { -1.0 } else { 1.0 }, 0.0, 1.0, 0.3),
        ];
        for (f, lo, hi, root) in cases {
            let b = brent_bracket(f, lo, hi, 1e-13, 200).unwrap();
            assert!(b.lo <= b.hi);
            assert!(
                b.hi - b.lo <= 1e-13 + 8.0 * f64::EPSILON * (1.0 + root),
                "{b:?}"
            );
            let x = brent(f, lo, hi, 1e-13, 200).unwrap();
            assert!(libm::fabs(x - root) <= 2e-13, "root {root}: got {x}");
        }
    }

    #[test]
    fn brent_counts_evaluations_reasonably() {
        // Smooth function: superlinear convergence, far fewer than bisection's ~50 steps.
        let mut n = 0;
        let x = brent(
            |x| {
                n += 1;
                libm::cos(x) - x
            },
            0.0,
            1.0,
            1e-15,
            100,
        )
        .unwrap();
        assert!(libm::fabs(x - 0.739_085_133_215_160_6) < 1e-15);
        assert!(n < 15, "{n} evaluations");
    }

    #[test]
    fn brent_errors() {
        assert!(matches!(
            brent(|x| x * x + 1.0, -1.0, 1.0, 1e-12, 100),
            Err(Error::Inconsistent { .. })
        ));
        assert!(brent(|_| f64::NAN, -1.0, 1.0, 1e-12, 100).is_err());
        assert!(matches!(
            brent(
                |x| if x == -1.0 {
                    -1.0
                } else if x == 1.0 {
                    1.0
                } else {
                    f64::NAN
                },
                -1.0,
                1.0,
                1e-12,
                100
            ),
            Err(Error::Numerical { .. })
        ));
        assert!(brent(|x| x, 1.0, -1.0, 1e-12, 100).is_err());
        assert!(brent(|x| x, f64::NAN, 1.0, 1e-12, 100).is_err());
        assert!(brent(|x| x, -1.0, f64::INFINITY, 1e-12, 100).is_err());
        assert!(brent(|x| x, -1.0, 1.0, 0.0, 100).is_err());
        assert!(brent(|x| x, -1.0, 1.0, f64::NAN, 100).is_err());
        assert!(matches!(
            brent(|x| libm::exp(x) - 1.5, -1.0, 1.0, 1e-15, 2),
            Err(Error::NotConverged { .. })
        ));
        assert_eq!(brent(|x| x - 1.0, -1.0, 1.0, 1e-12, 100), Ok(1.0));
    }
}
