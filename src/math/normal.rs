//! The standard normal distribution: density φ, Φ, its upper tail, ln Φ deep in the tail,
//! and Φ⁻¹ (also from ln p, for tails far below the smallest double).
//!
//! Accuracy (measured against mpmath/scipy reference values, see
//! `tests/reference_vectors/math_vectors.rs`):
//! * [`cdf`], [`sf`]: relative error ≲ 1e-15 wherever the result is a normal double
//!   (the rounding of x/√2 is corrected to first order, see [`cdf`]).
//! * [`log_cdf`], [`log_sf`]: relative error ≲ 1e-15 for every finite x, including
//!   x → −∞ (Mills-ratio continued fraction) and x → +∞ (log1p of the tail).
//! * [`quantile`], [`quantile_from_log`]: relative error ≲ 1e-15 for p from the smallest
//!   subnormal to 1 − 2⁻⁵³ and `log_p` down to −f64::MAX.

use crate::error::{check_probability, invalid, Result};

/// ln √(2π).
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// 1/√(2π).
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// 1/√2 rounded to a double.
const FRAC_1_SQRT_2_HI: f64 = core::f64::consts::FRAC_1_SQRT_2;
/// 1/√2 − FRAC_1_SQRT_2_HI (the rounding error of the double above).
const FRAC_1_SQRT_2_LO: f64 = -4.833_646_656_726_457e-17;
/// √(2/π).
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// ln ¼.
const LN_QUARTER: f64 = -1.386_294_361_119_890_6;
/// ln ¾.
const LN_THREE_QUARTERS: f64 = -0.287_682_072_451_780_9;
/// ln 2 − LN_2 (the rounding error of the double ln 2).
const LN_2_LO: f64 = 2.319_046_813_846_299_6e-17;
/// Below this x, ln Φ(x) is computed from the Mills ratio instead of ln(Φ(x)).
const MILLS_THRESHOLD: f64 = -20.0;

/// Standard normal density φ(x) = e^{−x²/2}/√(2π), to a few ulp. NaN in, NaN out; 0 at ±∞.
///
/// # Examples
/// ```
/// let d = reconbound::math::normal::pdf(0.0);
/// assert!((d - 0.398_942_280_401_432_7).abs() < 1e-16);
/// ```
pub fn pdf(x: f64) -> f64 {
    // x² = hi + lo exactly; −hi/2 is exact, so only exp's own rounding remains
    // (forming −x²/2 − ln√(2π) first would cost up to x²·1e-16 relative).
    let hi = x * x;
    if !hi.is_finite() {
        return if x.is_nan() { x } else { 0.0 };
    }
    let lo = libm::fma(x, x, -hi);
    libm::exp(-0.5 * hi) * (1.0 - 0.5 * lo) * FRAC_1_SQRT_2PI
}

/// ln φ(x) = −x²/2 − ln √(2π). −∞ at ±∞, NaN in, NaN out.
///
/// # Examples
/// ```
/// use reconbound::math::normal::{log_pdf, LN_SQRT_2PI};
/// assert_eq!(log_pdf(0.0), -LN_SQRT_2PI);
/// ```
pub fn log_pdf(x: f64) -> f64 {
    -0.5 * x * x - LN_SQRT_2PI
}

/// Φ(x) = P[N(0,1) ≤ x] = ½ erfc(−x/√2). NaN in, NaN out; Φ(−∞) = 0, Φ(+∞) = 1.
///
/// For x < −3 the rounding error of the argument −x/√2 (which would otherwise cost a
/// relative error of about x²·1e-16) is corrected to first order, so that the result is
/// accurate to a few ulp down to the subnormal range (x ≈ −37.5); below about −38.5 the
/// result underflows to 0 — use [`log_cdf`] there.
///
/// # Examples
/// ```
/// use reconbound::math::normal::cdf;
/// assert_eq!(cdf(0.0), 0.5);
/// assert!((cdf(-1.0) - 0.158_655_253_931_457_07).abs() < 1e-16);
/// ```
pub fn cdf(x: f64) -> f64 {
    let z = -x * FRAC_1_SQRT_2_HI;
    let e = 0.5 * libm::erfc(z);
    if z > 2.0 && e > 0.0 {
        // True argument z_t = z + dz; d ln erfc(z)/dz = −2z − 1/z + O(z⁻³) for large z.
        let dz = libm::fma(-x, FRAC_1_SQRT_2_HI, -z) + (-x) * FRAC_1_SQRT_2_LO;
        let h = -2.0 * z - 1.0 / z + 1.0 / (z * z * z);
        e + e * (h * dz)
    } else {
        e
    }
}

/// Upper tail 1 − Φ(x) = Φ(−x), accurate (relative) for large x. NaN in, NaN out.
///
/// # Examples
/// ```
/// use reconbound::math::normal::sf;
/// assert!((sf(1.0) - 0.158_655_253_931_457_07).abs() < 1e-16);
/// ```
pub fn sf(x: f64) -> f64 {
    cdf(-x)
}

/// Mills ratio R(t) = Φ(−t)/φ(t) for t ≥ 20, by the continued fraction
/// R(t) = 1/(t + 1/(t + 2/(t + 3/(t + …)))) evaluated backwards from a fixed depth.
///
/// At t ≥ 20 forty levels give full double precision (the truncation error is below
/// 1e-30 relative).
fn mills_ratio_large(t: f64) -> f64 {
    let mut f = t;
    let mut k = 40.0;
    while k >= 1.0 {
        f = t + k / f;
        k -= 1.0;
    }
    1.0 / f
}

/// ln Φ(x), accurate where Φ(x) underflows (x → −∞) and where Φ(x) rounds to 1 (x → +∞).
///
/// * x ≥ 0: ln Φ(x) = log1p(−Φ(−x)) (so ln Φ(9) = −1.13e-19 is right, not 0);
/// * −20 ≤ x < 0: ln(Φ(x));
/// * x < −20: ln Φ(x) = −x²/2 − ln√(2π) + ln R(−x) with the Mills ratio R computed by its
///   continued fraction — valid down to x = −f64::MAX (the result is −∞ once x²/2
///   overflows, i.e. for x < −1.9e154, where the true value is below −f64::MAX anyway).
///
/// `log_cdf(−∞) = −∞`, `log_cdf(+∞) = 0`, NaN in, NaN out.
///
/// # Examples
/// ```
/// use reconbound::math::normal::log_cdf;
/// assert!((log_cdf(-38.0) / -726.557_216_018_820_1 - 1.0).abs() < 1e-14);
/// assert!((log_cdf(9.0) / -1.128_588_405_953_832_4e-19 - 1.0).abs() < 1e-12);
/// ```
pub fn log_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 0.0 {
        libm::log1p(-sf(x))
    } else if x >= MILLS_THRESHOLD {
        libm::log(cdf(x))
    } else if x == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        log_pdf(x) + libm::log(mills_ratio_large(-x))
    }
}

/// ln(1 − Φ(x)) = ln Φ(−x). NaN in, NaN out.
///
/// # Examples
/// ```
/// use reconbound::math::normal::{log_cdf, log_sf};
/// assert_eq!(log_sf(3.0), log_cdf(-3.0));
/// ```
pub fn log_sf(x: f64) -> f64 {
    log_cdf(-x)
}

/// φ(x)/Φ(x), the derivative of ln Φ(x), for finite x (no overflow, no cancellation).
fn inverse_mills(x: f64) -> f64 {
    if x >= MILLS_THRESHOLD {
        pdf(x) / cdf(x)
    } else {
        1.0 / mills_ratio_large(-x)
    }
}

/// Acklam's rational approximation of Φ⁻¹ in the central region |p − ½| ≤ 0.47575
/// (relative error about 1e-9); only a starting point for refinement.
fn acklam_central(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    let q = p - 0.5;
    let r = q * q;
    let num = ((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5];
    let den = ((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0;
    num * q / den
}

/// Acklam's lower-tail approximation written in terms of ln p (p < 0.02425 in the
/// original); a starting point only.
fn acklam_lower_from_log(log_p: f64) -> f64 {
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let q = libm::sqrt(-2.0 * log_p);
    let num = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q) + C[5];
    let den = (((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0;
    num / den
}

/// Solves ln Φ(x) = `log_p` for `log_p` < ln ¼ (so x < −0.674) by Newton's method on
/// g(x) = ln Φ(x) − log_p. g is increasing and concave, so Newton converges monotonically
/// from any start after the first step; from the starting values below it takes 2–4
/// steps.
fn lower_tail_from_log(log_p: f64) -> f64 {
    // Very deep tails: x² = 2v with v = w − ½ln(2v) − ln√(2π), w = −log_p. The next
    // asymptotic term is O(1/v), i.e. relative O(1/v²) in x: negligible once v > 1e9.
    if log_p < -1e9 {
        let w = -log_p;
        let mut v = w;
        for _ in 0..4 {
            v = w - 0.5 * (core::f64::consts::LN_2 + libm::log(v)) - LN_SQRT_2PI;
        }
        return -core::f64::consts::SQRT_2 * libm::sqrt(v);
    }
    let mut x = if log_p > -700.0 {
        acklam_lower_from_log(log_p)
    } else {
        let w = -log_p;
        let mut v = w;
        for _ in 0..3 {
            v = w - 0.5 * (core::f64::consts::LN_2 + libm::log(v)) - LN_SQRT_2PI;
        }
        -core::f64::consts::SQRT_2 * libm::sqrt(v)
    };
    for _ in 0..60 {
        let g = log_cdf(x) - log_p;
        let step = g / inverse_mills(x);
        if !step.is_finite() {
            break;
        }
        x -= step;
        if libm::fabs(step) <= 2.0 * f64::EPSILON * libm::fabs(x) {
            break;
        }
    }
    x
}

/// Solves Φ(x) = p for p ∈ [¼, ¾] as erf(x/√2) = 2p − 1 (exact in this range), so that
/// x keeps full relative precision also when it is tiny (p close to ½).
fn central(p: f64) -> f64 {
    central_from_erf(2.0 * p - 1.0)
}

/// Solves erf(x/√2) = q for |q| ≤ ½ by Newton's method from Acklam's starting value.
fn central_from_erf(q: f64) -> f64 {
    if q == 0.0 {
        return 0.0;
    }
    let mut x = acklam_central(0.5 + 0.5 * q);
    for _ in 0..20 {
        let r = libm::erf(x * FRAC_1_SQRT_2_HI) - q;
        // d erf(x/√2)/dx = √(2/π) e^{−x²/2}.
        let step = r / (SQRT_2_OVER_PI * libm::exp(-0.5 * x * x));
        x -= step;
        if libm::fabs(step) <= 2.0 * f64::EPSILON * libm::fabs(x) {
            break;
        }
    }
    x
}

/// Φ⁻¹(p) for p ∈ [0, 1]; Φ⁻¹(0) = −∞, Φ⁻¹(1) = +∞.
///
/// Central region p ∈ [¼, ¾]: Newton on erf(x/√2) = 2p − 1. Lower tail: Newton on
/// ln Φ(x) = ln p (works for subnormal p). Upper tail: −Φ⁻¹(1 − p), with 1 − p exact.
/// Relative error ≲ 1e-15 (checked against `normal_quantile.csv` and by round trips).
///
/// # Errors
/// `p` NaN or outside [0, 1].
///
/// # Examples
/// ```
/// use reconbound::math::normal::quantile;
/// assert!((quantile(0.975).unwrap() - 1.959_963_984_540_054).abs() < 1e-14);
/// assert!((quantile(1e-300).unwrap() / -37.047_096_299_361_2 - 1.0).abs() < 1e-14);
/// assert!(quantile(1.5).is_err());
/// ```
pub fn quantile(p: f64) -> Result<f64> {
    let p = check_probability("p", p)?;
    if p == 0.0 {
        return Ok(f64::NEG_INFINITY);
    }
    if p == 1.0 {
        return Ok(f64::INFINITY);
    }
    Ok(quantile_unchecked(p))
}

/// Φ⁻¹(p) for p ∈ (0, 1) (no validation).
fn quantile_unchecked(p: f64) -> f64 {
    if p < 0.25 {
        lower_tail_from_log(libm::log(p))
    } else if p <= 0.75 {
        central(p)
    } else {
        -lower_tail_or_central(1.0 - p)
    }
}

/// Φ⁻¹(q) for q ∈ (0, ½].
fn lower_tail_or_central(q: f64) -> f64 {
    if q < 0.25 {
        lower_tail_from_log(libm::log(q))
    } else {
        central(q)
    }
}

/// The x with ln Φ(x) = `log_p`, for `log_p` ≤ 0, computed without forming p = e^{log_p}
/// (which underflows for `log_p` < −745): works down to `log_p` = −f64::MAX.
/// `quantile_from_log(0) = +∞`, `quantile_from_log(−∞) = −∞`.
///
/// For `log_p` ∈ [ln ¼, ln ¾] the central solver gets 2p − 1 = expm1(`log_p` + ln 2) (ln 2
/// in two parts), so tiny quantiles keep full relative precision; above ln ¾ the upper
/// tail is used: x = −Φ⁻¹(−expm1(`log_p`)).
///
/// # Errors
/// `log_p` NaN or > 0.
///
/// # Examples
/// ```
/// use reconbound::math::normal::{log_cdf, quantile_from_log};
/// let x = quantile_from_log(-1e6).unwrap();
/// assert!((log_cdf(x) / -1e6 - 1.0).abs() < 1e-14);
/// assert!((quantile_from_log(-690.775_527_898_213_7).unwrap() / -37.047_096_299_361_2 - 1.0).abs() < 1e-13);
/// ```
pub fn quantile_from_log(log_p: f64) -> Result<f64> {
    if log_p.is_nan() || log_p > 0.0 {
        return invalid("log_p", log_p, "<= 0");
    }
    if log_p == 0.0 {
        return Ok(f64::INFINITY);
    }
    if log_p == f64::NEG_INFINITY {
        return Ok(f64::NEG_INFINITY);
    }
    if log_p < LN_QUARTER {
        Ok(lower_tail_from_log(log_p))
    } else if log_p <= LN_THREE_QUARTERS {
        // 2p − 1 = expm1(log_p + ln 2) with ln 2 in two parts: log_p + LN_2 is exact
        // (Sterbenz) on most of this range, so 2p − 1 keeps its relative precision near ½.
        let d = (log_p + core::f64::consts::LN_2) + LN_2_LO;
        Ok(central_from_erf(libm::expm1(d)))
    } else {
        // p ≥ ½: 1 − p = −expm1(log_p) to full relative precision.
        let q = -libm::expm1(log_p);
        if q <= 0.0 {
            return Ok(f64::INFINITY);
        }
        Ok(-lower_tail_or_central(q))
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        if b == 0.0 {
            libm::fabs(a)
        } else {
            libm::fabs((a - b) / b)
        }
    }

    #[test]
    fn mills_ratio_matches_cdf_over_pdf_where_both_are_representable() {
        // Relative 1e-14: cdf is accurate to a few ulp down to x = −37.
        // Integer t so that −t²/2 is exact and pdf(t) carries only exp's rounding.
        for i in 20..=37 {
            let t = f64::from(i);
            let direct = cdf(-t) / pdf(t);
            assert!(rel(mills_ratio_large(t), direct) < 1e-14, "t = {t}");
        }
    }

    #[test]
    fn log_cdf_is_continuous_across_branch_points() {
        // Relative 1e-14 between the two formulas at the switch points.
        let a = libm::log(cdf(-20.0));
        let b = log_pdf(-20.0) + libm::log(mills_ratio_large(20.0));
        assert!(rel(a, b) < 1e-14, "{a} {b}");
        assert!(rel(log_cdf(-1e-300), log_cdf(0.0)) < 1e-15);
    }

    #[test]
    fn infinities_and_nan() {
        assert_eq!(cdf(f64::NEG_INFINITY), 0.0);
        assert_eq!(cdf(f64::INFINITY), 1.0);
        assert_eq!(log_cdf(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(log_cdf(f64::INFINITY), 0.0);
        assert!(log_cdf(f64::NAN).is_nan());
        assert!(cdf(f64::NAN).is_nan());
        assert_eq!(quantile(0.0), Ok(f64::NEG_INFINITY));
        assert_eq!(quantile(1.0), Ok(f64::INFINITY));
        assert!(quantile(f64::NAN).is_err());
        assert!(quantile(-0.1).is_err());
        assert!(quantile_from_log(f64::NAN).is_err());
        assert!(quantile_from_log(1e-300).is_err());
        assert_eq!(quantile_from_log(0.0), Ok(f64::INFINITY));
        assert_eq!(quantile_from_log(f64::NEG_INFINITY), Ok(f64::NEG_INFINITY));
    }
}
