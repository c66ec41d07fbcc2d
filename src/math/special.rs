//! Log-space arithmetic, log-gamma, log-binomial coefficients and the helpers the
//! incomplete beta function needs (Stirling remainder, ln(1 + u) − u).
//!
//! The log-space kernels (`log_add_exp`, `log_sub_exp`, `log_sum_exp`) are total functions
//! on f64 (no `Result`): NaN in gives NaN out; their edge cases are documented on each.

use crate::error::{invalid, Error, Result};
use crate::math::normal::LN_SQRT_2PI;

/// ln(eᵃ + eᵇ) without overflow; −∞ is the identity.
///
/// NaN if either argument is NaN; +∞ if either is +∞.
///
/// # Examples
/// ```
/// use reconbound::math::special::log_add_exp;
/// assert!((log_add_exp(1000.0, 1000.0) - (1000.0 + core::f64::consts::LN_2)).abs() < 1e-12);
/// assert_eq!(log_add_exp(f64::NEG_INFINITY, 2.0), 2.0);
/// ```
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi.is_infinite() {
        return hi;
    }
    hi + libm::log1p(libm::exp(lo - hi))
}

/// ln(1 − eᵈ) for d ≤ 0, accurate for d near 0 and for d ≪ 0 (Mächler's switch at −ln 2).
/// −∞ at d = 0, NaN for d > 0 or NaN.
///
/// # Examples
/// ```
/// use reconbound::math::special::log1mexp;
/// assert!((log1mexp(-1e-20) - (1e-20f64).ln()).abs() < 1e-12);
/// assert_eq!(log1mexp(0.0), f64::NEG_INFINITY);
/// ```
pub fn log1mexp(d: f64) -> f64 {
    if d.is_nan() || d > 0.0 {
        f64::NAN
    } else if d > -core::f64::consts::LN_2 {
        libm::log(-libm::expm1(d))
    } else {
        libm::log1p(-libm::exp(d))
    }
}

/// ln(eᵃ − eᵇ) for a ≥ b; −∞ when a = b.
///
/// Total kernel: for b ≥ a (the difference would be ≤ 0) it returns −∞, i.e. it clamps the
/// difference to 0 — callers that must detect b > a use [`log_sub_exp_checked`]. NaN if
/// either argument is NaN; +∞ if a = +∞ > b; −∞ for a = b = +∞ (by the clamp rule).
///
/// # Examples
/// ```
/// use reconbound::math::special::log_sub_exp;
/// assert!((log_sub_exp(2.0f64.ln(), 1.0f64.ln())).abs() < 1e-15);
/// assert_eq!(log_sub_exp(1.0, 1.0), f64::NEG_INFINITY);
/// assert_eq!(log_sub_exp(1.0, f64::NEG_INFINITY), 1.0);
/// ```
pub fn log_sub_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if b >= a {
        return f64::NEG_INFINITY;
    }
    if b == f64::NEG_INFINITY || a == f64::INFINITY {
        return a;
    }
    a + log1mexp(b - a)
}

/// ln(eᵃ − eᵇ), with an error instead of the clamp of [`log_sub_exp`] when b > a.
///
/// # Errors
/// `a` or `b` NaN; `b` > `a` ([`Error::Inconsistent`], value b − a).
///
/// # Examples
/// ```
/// use reconbound::math::special::log_sub_exp_checked;
/// assert!(log_sub_exp_checked(0.0, 1.0).is_err());
/// assert!(log_sub_exp_checked(1.0, 0.0).is_ok());
/// ```
pub fn log_sub_exp_checked(a: f64, b: f64) -> Result<f64> {
    if a.is_nan() {
        return invalid("a", a, "not NaN");
    }
    if b.is_nan() {
        return invalid("b", b, "not NaN");
    }
    if b > a {
        return Err(Error::Inconsistent {
            what: "log_sub_exp: b > a, e^a - e^b < 0",
            value: b - a,
        });
    }
    Ok(log_sub_exp(a, b))
}

/// ln Σ exp(xᵢ) over a slice, without overflow; −∞ for an empty slice or all −∞.
///
/// NaN if any element is NaN, +∞ if any is +∞. Computed as m + log1p(Σ_{i≠i*} e^{xᵢ−m})
/// with m = xᵢ* the maximum, so a sum dominated by one term keeps full relative precision.
///
/// # Examples
/// ```
/// use reconbound::math::special::log_sum_exp;
/// let v = log_sum_exp(&[0.0, 0.0, 0.0, 0.0]);
/// assert!((v - 4.0f64.ln()).abs() < 1e-15);
/// assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
/// ```
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let mut m = f64::NEG_INFINITY;
    let mut arg = usize::MAX;
    for (i, &x) in xs.iter().enumerate() {
        if x.is_nan() {
            return f64::NAN;
        }
        if x > m || arg == usize::MAX {
            m = x;
            arg = i;
        }
    }
    if m.is_infinite() {
        return m;
    }
    let mut s = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        if i != arg {
            s += libm::exp(x - m);
        }
    }
    m + libm::log1p(s)
}

/// ln Γ(x) for x > 0 (libm `lgamma`, a few ulp). For x ≤ 0 it returns ln|Γ(x)| (+∞ at
/// the poles 0, −1, −2, …); NaN in, NaN out.
///
/// # Examples
/// ```
/// use reconbound::math::special::ln_gamma;
/// assert!((ln_gamma(5.0) - 24.0f64.ln()).abs() < 1e-14);
/// ```
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// Stirling remainder s(x) = ln Γ(x + 1) − (x + ½) ln x + x − ln √(2π) for x > 0
/// (s(x) ≈ 1/(12x)), accurate to about 1e-16 absolute for x ≥ 1.
///
/// For x ≥ 10 the asymptotic series through x⁻¹³ (truncation < 3e-17 absolute); below, the
/// definition with libm's `lgamma`. s(0) = +∞; NaN for x < 0 or NaN.
///
/// # Examples
/// ```
/// use reconbound::math::special::stirling_remainder;
/// assert!((stirling_remainder(1.0) - 0.081_061_466_795_327_26).abs() < 1e-15);
/// ```
pub fn stirling_remainder(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::INFINITY;
    }
    if x >= 10.0 {
        if x == f64::INFINITY {
            return 0.0;
        }
        let r = 1.0 / x;
        let r2 = r * r;
        // Bernoulli-number series: B_{2k} / (2k(2k−1) x^{2k−1}).
        const S: [f64; 7] = [
            1.0 / 12.0,
            -1.0 / 360.0,
            1.0 / 1260.0,
            -1.0 / 1680.0,
            1.0 / 1188.0,
            -691.0 / 360_360.0,
            1.0 / 156.0,
        ];
        let mut acc = S[6];
        acc = acc * r2 + S[5];
        acc = acc * r2 + S[4];
        acc = acc * r2 + S[3];
        acc = acc * r2 + S[2];
        acc = acc * r2 + S[1];
        acc = acc * r2 + S[0];
        acc * r
    } else {
        libm::lgamma(x + 1.0) - (x + 0.5) * libm::log(x) + x - LN_SQRT_2PI
    }
}

/// ln(1 + u) − u for u ≥ −1, without cancellation near u = 0 (−∞ at u = −1, NaN below).
///
/// # Examples
/// ```
/// use reconbound::math::special::log1pmx;
/// // ln(1+u) − u = −u²/2 + u³/3 − u⁴/4 + …
/// let want = -0.5e-10 + 1e-15 / 3.0 - 0.25e-20;
/// assert!((log1pmx(1e-5) / want - 1.0).abs() < 1e-14);
/// ```
pub fn log1pmx(u: f64) -> f64 {
    if u.is_nan() || u < -1.0 {
        return f64::NAN;
    }
    if libm::fabs(u) > 0.5 {
        if u == f64::INFINITY {
            return f64::NEG_INFINITY;
        }
        return libm::log1p(u) - u;
    }
    // t = u/(2+u); ln(1+u) = 2(t + t³/3 + t⁵/5 + …), u − 2t = u t.
    let t = u / (2.0 + u);
    let t2 = t * t;
    // Σ_{k≥1} t^{2k}/(2k+1); |t| ≤ 1/3 so 18 terms reach 1e-18 relative.
    let mut sum = 0.0;
    let mut k = 18.0;
    while k >= 1.0 {
        sum = (sum + 1.0 / (2.0 * k + 1.0)) * t2;
        k -= 1.0;
    }
    2.0 * t * sum - u * t
}

/// ln C(n, k) = ln Γ(n+1) − ln Γ(k+1) − ln Γ(n−k+1) for real n ≥ k ≥ 0.
///
/// Accuracy: with m = min(k, n−k) ≥ 1 and n ≥ 20 it uses the saddle-point form
/// ln C(n,k) = k ln(n/k) + (n−k) ln(n/(n−k)) + ½ ln(n/(2πk(n−k))) + s(n) − s(k) − s(n−k)
/// (s = [`stirling_remainder`]), whose terms do not cancel: relative error ≲ 1e-14 even
/// for n = 1e9 (where differences of ln Γ would lose 6 digits) and finite up to
/// n = f64::MAX. For n ≥ 20 and fractional m < 1 a Stirling difference for
/// ln Γ(n+1) − ln Γ(n−m+1) (absolute error ≲ 1e-15·m·ln n); for n < 20 the difference of
/// `lgamma` values (absolute error ≲ 1e-14). ln C(n, 0) = ln C(n, n) = 0 exactly.
///
/// # Errors
/// `n` or `k` not finite, negative, or `k > n`.
///
/// # Examples
/// ```
/// use reconbound::math::special::ln_binomial;
/// assert!((ln_binomial(10.0, 3.0).unwrap() - 120.0f64.ln()).abs() < 1e-14);
/// assert!((ln_binomial(1e6, 1.0).unwrap() - 1e6f64.ln()).abs() < 1e-13);
/// assert!(ln_binomial(3.0, 4.0).is_err());
/// ```
pub fn ln_binomial(n: f64, k: f64) -> Result<f64> {
    if !(n.is_finite() && n >= 0.0) {
        return invalid("n", n, "finite and >= 0");
    }
    if !(k.is_finite() && k >= 0.0 && k <= n) {
        return invalid("k", k, "finite and in [0, n]");
    }
    Ok(ln_binomial_unchecked(n, k))
}

/// [`ln_binomial`] without validation (requires finite n ≥ k ≥ 0).
pub(crate) fn ln_binomial_unchecked(n: f64, k: f64) -> f64 {
    if k == 0.0 || k == n {
        return 0.0;
    }
    let nk = n - k;
    if n < 20.0 {
        return libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(nk + 1.0);
    }
    if k < 1.0 || nk < 1.0 {
        // m = min(k, n−k) < 1, j = n − m: lnΓ(n+1) − lnΓ(j+1) by Stirling,
        // = −(j+½)·log1p(−m/n) + m(ln n − 1) + s(n) − s(j); no overflow for huge n.
        let (m, j) = if k < nk { (k, nk) } else { (nk, k) };
        return -(j + 0.5) * libm::log1p(-m / n) + m * (libm::log(n) - 1.0) + stirling_remainder(n)
            - stirling_remainder(j)
            - libm::lgamma(m + 1.0);
    }
    // k ln(n/k) + (n−k) ln(n/(n−k)), the second as −(n−k) log1p(−k/n) when k is the smaller.
    let entropy = if k <= nk {
        k * libm::log(n / k) - nk * libm::log1p(-k / n)
    } else {
        nk * libm::log(n / nk) - k * libm::log1p(-nk / n)
    };
    let half_log = 0.5 * (libm::log(n / k) - libm::log(nk)) - LN_SQRT_2PI;
    entropy + half_log + stirling_remainder(n) - stirling_remainder(k) - stirling_remainder(nk)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn stirling_remainder_matches_mpmath() {
        // mpmath (40 digits) values of lnΓ(x+1) − (x+½)ln x + x − ln√(2π); relative 1e-14
        // (series branch x ≥ 10, truncation < 3e-17 absolute) and 1e-15 absolute at x = 1.
        let refs = [
            (10.0, 0.008_330_563_433_362_871),
            (10.5, 0.007_934_114_564_314_020_5),
            (12.0, 0.006_942_840_107_209_529_9),
            (15.0, 0.005_554_733_551_962_801_4),
            (100.0, 0.000_833_330_555_634_914_683_4),
        ];
        for (x, r) in refs {
            assert!(
                libm::fabs(stirling_remainder(x) / r - 1.0) < 1e-14,
                "x = {x}"
            );
        }
        assert!(libm::fabs(stirling_remainder(1.0) - 0.081_061_466_795_327_26) < 1e-15);
    }

    #[test]
    fn log1pmx_matches_direct_formula_away_from_zero() {
        // Relative 1e-13 at |u| ≥ 0.1 where log1p(u) − u loses at most 3 digits.
        for u in [-0.5, -0.3, -0.1, 0.1, 0.3, 0.5] {
            let d = libm::log1p(u) - u;
            assert!(libm::fabs(log1pmx(u) / d - 1.0) < 1e-13, "u = {u}");
        }
        assert_eq!(log1pmx(-1.0), f64::NEG_INFINITY);
        assert!(log1pmx(-1.5).is_nan());
    }

    #[test]
    fn ln_binomial_small_exact_and_large_reference() {
        // Exact small values: relative 1e-14.
        let mut c = 1.0f64;
        for k in 0..=30u32 {
            let kf = f64::from(k);
            let v = ln_binomial(30.0, kf).unwrap();
            assert!(
                libm::fabs(v - libm::log(c)) <= 1e-14 * (1.0 + libm::fabs(v)),
                "k = {k}"
            );
            c = c * (30.0 - kf) / (kf + 1.0);
        }
        // mpmath (40 digits): ln C(1e6, 3) = ln(166666166667000000),
        // ln C(1e6, 5e5) = 693140.0470130636..., ln C(1e9, 12345) = 151865.68708500024...;
        // relative 1e-14.
        let v = ln_binomial(1e6, 3.0).unwrap();
        assert!(libm::fabs(v / 39.654_769_204_662_267 - 1.0) < 1e-14, "{v}");
        let v = ln_binomial(1e6, 5e5).unwrap();
        assert!(libm::fabs(v / 693_140.047_013_063_7 - 1.0) < 1e-14, "{v}");
        let v = ln_binomial(1e9, 12345.0).unwrap();
        assert!(libm::fabs(v / 151_865.687_085_000_25 - 1.0) < 1e-14, "{v}");
        assert!(ln_binomial(f64::NAN, 1.0).is_err());
        assert!(ln_binomial(5.0, -1.0).is_err());
        assert!(ln_binomial(f64::INFINITY, 1.0).is_err());
    }

    #[test]
    fn log_space_kernels_edge_cases() {
        assert!(log_add_exp(f64::NAN, 0.0).is_nan());
        assert_eq!(log_add_exp(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(
            log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(log_sub_exp(0.0, 1.0), f64::NEG_INFINITY);
        assert_eq!(log_sub_exp(f64::INFINITY, 0.0), f64::INFINITY);
        // ln(e^0 − e^{−40}) = log1p(−e^{−40}) ≈ −4.248e-18, relative 1e-14.
        let v = log_sub_exp(0.0, -40.0);
        assert!(
            libm::fabs(v / -4.248_354_255_291_589e-18 - 1.0) < 1e-14,
            "{v}"
        );
        // ln(e^{1e-10} − 1) ≈ ln(1e-10), absolute 1e-12.
        assert!(libm::fabs(log_sub_exp(1e-10, 0.0) - libm::log(1e-10)) < 1e-9);
        assert!(log_sum_exp(&[1.0, f64::NAN]).is_nan());
        assert_eq!(log_sum_exp(&[1.0, f64::INFINITY]), f64::INFINITY);
        assert_eq!(
            log_sum_exp(&[f64::NEG_INFINITY, f64::NEG_INFINITY]),
            f64::NEG_INFINITY
        );
        // 1 + 1e-300-ish terms: log1p keeps them.
        let v = log_sum_exp(&[0.0, -40.0]);
        assert!(
            libm::fabs(v / 4.248_354_255_291_589e-18 - 1.0) < 1e-14,
            "{v}"
        );
    }
}
