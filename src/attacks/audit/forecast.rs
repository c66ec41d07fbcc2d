//! What an audit of a Gaussian mechanism with known μ can reach with N trials per world: the
//! threshold to fix in advance and the empirical ε it should return.
//!
//! Crafter 5 with Distinguisher 3 on the full batch is exactly such an audit: θ_t ≡ θ₀, the
//! canary is in every batch, and Σ_t Z_t is N(0, Tσ_t²) without and N(T, Tσ_t²) with the
//! canary, so the gradient test's score is an increasing function of a standard normal
//! shifted by μ = √T/σ (σ_t = σ for a canary of norm C under hard clipping). The empirical
//! ε of Nasr et al.'s Eqs. 4–5 is limited by the trial count long before it reaches the ε of
//! μ-GDP: with FP = 0 of N the false-positive limit is still 1 − (α/2)^{1/N} ≈ ln(2/α)/N.
//! [`gaussian_audit_forecast`] finds the threshold that maximises the Clopper–Pearson ε at
//! the median counts, which depends on (μ, N, α, δ) only — so it may be fixed before the
//! trials and no search has to be paid for — and the range the ε of an actual audit at that
//! threshold falls in with probability ≥ 1 − 4·`tail` (both counts within their `tail` and
//! 1 − `tail` binomial quantiles; the ε of Eqs. 4–5 decreases in both counts; each end of
//! the range alone holds with probability ≥ 1 − 2·`tail`).
//!
//! # Citations
//!
//! Nasr et al. 2021, §IV-F, §IV-G (tightness of the Gaussian mechanism), Eqs. 4–5;
//! Dong, Roth, Su 2019 (μ-GDP trade-off function).

use super::epsilon::{epsilon_from_counts, Counts};
use crate::error::{Error, Result};
use crate::math::beta::beta_inc;
use crate::math::normal;

/// The forecast of a Gaussian audit (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianForecast {
    /// The threshold u* in standard units (a trial guesses "in" when its standardised score
    /// is ≥ u*).
    pub threshold: f64,
    /// The false-positive and false-negative rates at u*: Φ(−u*), Φ(u* − μ).
    pub fpr: f64,
    /// See `fpr`.
    pub fnr: f64,
    /// The empirical ε at the median counts: what the audit returns typically.
    pub epsilon_median: f64,
    /// The empirical ε at the upper `tail` quantiles of both counts (a lower end).
    pub epsilon_low: f64,
    /// The empirical ε at the lower `tail` quantiles of both counts (an upper end).
    pub epsilon_high: f64,
}

/// The smallest k with P[Bin(n, p) ≤ k] ≥ level (level ∈ (0, 1)).
fn binomial_quantile(n: u64, p: f64, level: f64) -> Result<u64> {
    if p <= 0.0 {
        return Ok(0);
    }
    if p >= 1.0 {
        return Ok(n);
    }
    // P[X ≤ k] = 1 − P[X ≥ k + 1] = 1 − I_p(k + 1, n − k) for k < n.
    let cdf = |k: u64| -> Result<f64> {
        if k >= n {
            Ok(1.0)
        } else {
            Ok(1.0 - beta_inc((k + 1) as f64, (n - k) as f64, p)?)
        }
    };
    let (mut lo, mut hi) = (0u64, n);
    if cdf(0)? >= level {
        return Ok(0);
    }
    // cdf(lo) < level ≤ cdf(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cdf(mid)? >= level {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The threshold and empirical ε of a Clopper–Pearson audit of a Gaussian mechanism with
/// separation `mu` and `trials` trials per world (module docs).
///
/// # Formula
///
/// For u on a grid of step 0.01 over [−2, μ + 8]: FPR = Φ(−u), FNR = Φ(u − μ), ε(u) =
/// [`epsilon_from_counts`] at the binomial medians of FP ~ Bin(N, FPR) and FN ~ Bin(N, FNR);
/// u* = the first maximiser. `epsilon_low` and `epsilon_high` are ε at the (1 − tail) and
/// `tail` quantiles of both counts.
///
/// # Citations
///
/// Nasr et al. 2021, Eqs. 4–5 and §IV-G.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `mu` unless in [0, 40] (at μ = 40 a threshold between the
/// worlds errs with probability Φ(−20) < 1e-88), `tail` ∉ (0, 0.5); `trials` 0 or
/// ≥ 1e7 ([`Error::InvalidCount`]); `alpha`, `delta` as [`epsilon_from_counts`].
///
/// # Examples
///
/// ```
/// use reconbound::attacks::audit::forecast::gaussian_audit_forecast;
/// use reconbound::accounting::gaussian::analytic_epsilon;
/// // μ = 3: ε(1e-5) of the mechanism is over 14, but 1,000 trials per world show about 4.7.
/// assert!(analytic_epsilon(1e-5, 3.0)? > 14.0);
/// let f = gaussian_audit_forecast(3.0, 1000, 0.05, 1e-5, 1e-7)?;
/// assert!(f.epsilon_median > 4.5 && f.epsilon_median < 4.8);
/// assert!(f.epsilon_low <= f.epsilon_median && f.epsilon_median <= f.epsilon_high);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gaussian_audit_forecast(
    mu: f64,
    trials: u64,
    alpha: f64,
    delta: f64,
    tail: f64,
) -> Result<GaussianForecast> {
    if !(0.0..=40.0).contains(&mu) {
        return Err(Error::InvalidParameter {
            name: "mu",
            value: mu,
            expected: "in [0, 40]",
        });
    }
    if !(tail > 0.0 && tail < 0.5) {
        return Err(Error::InvalidParameter {
            name: "tail",
            value: tail,
            expected: "in (0, 0.5)",
        });
    }
    if trials == 0 || trials >= 10_000_000 {
        return Err(Error::InvalidCount {
            name: "trials",
            value: trials,
            expected: "in 1..1e7",
        });
    }
    let eps = |fp: u64, fn_: u64| -> Result<f64> {
        let c = Counts {
            negatives: trials,
            false_positives: fp,
            positives: trials,
            false_negatives: fn_,
        };
        Ok(epsilon_from_counts(c, alpha, delta)?.epsilon)
    };
    let mut best: Option<(f64, f64)> = None;
    let steps = libm::ceil((mu + 10.0) / 0.01) as u64;
    for i in 0..=steps {
        let u = -2.0 + 0.01 * i as f64;
        let (fpr, fnr) = (normal::sf(u), normal::cdf(u - mu));
        let e = eps(
            binomial_quantile(trials, fpr, 0.5)?,
            binomial_quantile(trials, fnr, 0.5)?,
        )?;
        if best.is_none_or(|(_, b)| e > b) {
            best = Some((u, e));
        }
    }
    let (u, median) = best.unwrap_or((0.0, 0.0));
    let (fpr, fnr) = (normal::sf(u), normal::cdf(u - mu));
    let low = eps(
        binomial_quantile(trials, fpr, 1.0 - tail)?,
        binomial_quantile(trials, fnr, 1.0 - tail)?,
    )?;
    let high = eps(
        binomial_quantile(trials, fpr, tail)?,
        binomial_quantile(trials, fnr, tail)?,
    )?;
    Ok(GaussianForecast {
        threshold: u,
        fpr,
        fnr,
        epsilon_median: median,
        epsilon_low: low,
        epsilon_high: high,
    })
}
