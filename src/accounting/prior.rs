//! The baseline success probability κ of a prior.
//!
//! For a prior π over the data space, an error function ℓ and a threshold η,
//! κ = κ_{π,ℓ}(η) = sup_{z₀} P_{Z~π}[ℓ(Z, z₀) ≤ η] (Balle, Cherubin, Hayes 2022, §VII-B): the
//! success probability of the best *oblivious* attack, which ignores the released model. Every
//! ReRo bound of [`crate::accounting::rero`] starts from it.
//!
//! - [`kappa_uniform`]: uniform prior over m points, exact match: κ = 1/m.
//! - [`kappa_weighted`]: discrete prior with weights p_i, exact match: κ = max_i p_i.
//! - [`kappa_linf_ball`] / [`log_kappa_linf_ball`]: target uniform on [0, 1]^d, success when at
//!   least a fraction ρ of coordinates are within η (Hayes et al. 2023, App. I).
//! - [`kappa_from_samples`]: an upper confidence bound on κ from N samples of the prior
//!   (Hayes et al. 2023, App. J, Prop. 5).
//!
//! All values are rounded **up** (κ enters every bound as an upper bound on a probability).

use crate::error::{
    check_count, check_open_unit, check_positive, check_probability, Error, Result,
};
use crate::math::special::{ln_binomial, log_add_exp};

/// Tolerance on |Σ weights − 1| accepted by [`kappa_weighted`] (absolute).
pub const WEIGHT_SUM_TOLERANCE: f64 = 1e-9;

/// κ of a uniform prior over `prior_size` points with the exact-match criterion.
///
/// # Formula
/// κ = 1/m, rounded up to the next `f64` unless 1/m is exact.
///
/// # Citations
/// Balle, Cherubin, Hayes 2022, §VII-B (baseline κ); Hayes, Mahloujifar, Balle 2023, §3
/// (uniform priors of size m) (balle2022-informed-adversaries-excerpt.txt,
/// hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `prior_size` < 2.
///
/// # Examples
/// ```
/// use reconbound::accounting::prior::kappa_uniform;
/// assert_eq!(kappa_uniform(4).unwrap(), 0.25);
/// // The double nearest 1/10 lies above 1/10, so it is returned as is.
/// assert_eq!(kappa_uniform(10).unwrap(), 0.1);
/// ```
pub fn kappa_uniform(prior_size: u64) -> Result<f64> {
    let m = check_count("prior_size", prior_size, 2, ">= 2")?;
    let mf = m as f64;
    let r = 1.0 / mf;
    // Exact iff m is a power of two (then m converts exactly too).
    if m.is_power_of_two() {
        return Ok(r);
    }
    if m <= 1 << 53 {
        // m converts exactly and the division is correctly rounded: r ≥ 1/m exactly iff
        // r·m − 1 ≥ 0, which one fused multiply-add evaluates without rounding.
        return Ok(if libm::fma(r, mf, -1.0) >= 0.0 {
            r
        } else {
            r.next_up()
        });
    }
    // m as f64 is itself rounded (m > 2^53) and the division rounds: two ulps up cover both.
    Ok(r.next_up().next_up().min(1.0))
}

/// κ of a discrete prior with the given weights, exact-match criterion.
///
/// # Formula
/// κ = max_i p_i / Σ_i p_i (the weights are renormalised, which moves κ by at most the stated
/// tolerance), rounded up, at most 1.
///
/// Weights must be finite and ≥ 0, at least two of them, and sum to 1 within
/// [`WEIGHT_SUM_TOLERANCE`] = 1e-9 (absolute).
///
/// # Citations
/// Balle, Cherubin, Hayes 2022, §VII-B (balle2022-informed-adversaries-excerpt.txt).
///
/// # Errors
/// - fewer than two weights (`prior_size`);
/// - a weight NaN, infinite or negative (`weights`);
/// - |Σ p_i − 1| > 1e-9 ([`Error::Inconsistent`], value = the sum).
///
/// # Examples
/// ```
/// use reconbound::accounting::prior::kappa_weighted;
/// let k = kappa_weighted(&[0.5, 0.25, 0.25]).unwrap();
/// assert!(k >= 0.5 && k < 0.5 + 1e-15);
/// ```
pub fn kappa_weighted(weights: &[f64]) -> Result<f64> {
    let (sum, max) = validate_weights(weights)?;
    let k = max / sum;
    Ok(k.next_up().next_up().min(1.0))
}

/// Validate prior weights; returns (Σ p_i, max p_i). Shared with [`crate::accounting::fano`].
pub(crate) fn validate_weights(weights: &[f64]) -> Result<(f64, f64)> {
    check_count("prior_size", weights.len() as u64, 2, ">= 2")?;
    let mut sum = 0.0;
    let mut max = 0.0f64;
    for &w in weights {
        if !(w.is_finite() && w >= 0.0) {
            return crate::error::invalid("weights", w, "finite and >= 0");
        }
        sum += w;
        max = max.max(w);
    }
    if libm::fabs(sum - 1.0) > WEIGHT_SUM_TOLERANCE {
        return Err(Error::Inconsistent {
            what: "weights must sum to 1 within 1e-9 (value: the sum)",
            value: sum,
        });
    }
    Ok((sum, max))
}

/// The number of coordinates that must be hit: k = ⌈ρd⌉, where ρd within a relative 1e-9
/// above an integer counts as that integer. `ρ` is usually a decimal (0.1, 0.3) that binary
/// floating point stores slightly above or below its value; rounding k down in that case only
/// increases κ (the safe side).
fn min_hits(rho: f64, d: u64) -> u64 {
    let target = rho * d as f64;
    let k = libm::ceil(target - 1e-9 * target.max(1.0));
    if k <= 0.0 {
        0
    } else {
        k as u64
    }
}

/// ln κ for the ℓ∞-ball criterion with a fraction ρ of coordinates (Hayes et al. 2023, App. I).
///
/// # Formula
/// The target Z is uniform on [0, 1]^d; a reconstruction ẑ succeeds if
/// (1/d) Σ_i 𝟙[|Z_i − ẑ_i| < η] ≥ ρ, i.e. at least k = ⌈ρd⌉ coordinates are within η
/// (ρ = 1: ‖Z − ẑ‖_∞ < η; ρd within a relative 1e-9 above an integer is rounded down to it,
/// which only increases κ). For a fixed guess z₀ the coordinates are independent and
/// P[|Z_i − z₀_i| < η] = |(z₀_i − η, z₀_i + η) ∩ [0, 1]| ≤ p := min(2η, 1), with equality
/// at z₀_i = 1/2. The tail P[Σ_i B_i ≥ k] of independent Bernoullis is non-decreasing in each
/// success probability, so the supremum over z₀ is attained at the centre:
///
/// κ = P[Bin(d, p) ≥ k] = Σ_{j=k}^{d} C(d, j) p^j (1 − p)^{d−j},
///
/// summed in log space; past the mode the remaining terms are bounded by a geometric series
/// (the term ratio is decreasing), which is added so the result stays an upper bound. A
/// relative slack for the rounding of ln C(d, j) is added. The paper quotes (2·32/256)^{dρ},
/// which is the ρ = 1 value (2η)^d; for ρ < 1 it is not the binomial tail.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, App. I (hayes2023-rero-dpsgd-appendix.txt); baseline κ from
/// Balle, Cherubin, Hayes 2022, §VII-B.
///
/// # Errors
/// `eta` not finite and > 0; `rho` ∉ [0, 1]; `dimension` = 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::prior::log_kappa_linf_ball;
/// // MNIST, ρ = 1, 2η = 0.25: κ = 0.25^784 ≈ 9.66e-473 (Hayes et al. App. I).
/// let lk = log_kappa_linf_ball(0.125, 1.0, 784).unwrap();
/// assert!((lk / core::f64::consts::LN_10 - (-472.0150)).abs() < 1e-3);
/// ```
pub fn log_kappa_linf_ball(eta: f64, rho: f64, dimension: u64) -> Result<f64> {
    let eta = check_positive("eta", eta)?;
    let rho = check_probability("rho", rho)?;
    let d = check_count("dimension", dimension, 1, ">= 1")?;
    if eta >= 0.5 {
        return Ok(0.0);
    }
    let k = min_hits(rho, d);
    if k == 0 {
        return Ok(0.0);
    }
    let p = 2.0 * eta; // exact (power-of-two scaling), p < 1
    let lp = libm::log(p);
    let lq = libm::log1p(-p);
    let df = d as f64;
    let mode = libm::floor((df + 1.0) * p);
    let term = |j: u64| -> Result<f64> {
        let jf = j as f64;
        Ok(ln_binomial(df, jf)? + jf * lp + (df - jf) * lq)
    };
    let mut acc = f64::NEG_INFINITY;
    let mut j = k;
    loop {
        let t = term(j)?;
        acc = log_add_exp(acc, t);
        if j == d {
            break;
        }
        let jf = j as f64;
        if jf >= mode {
            // Ratio of term j+1 to term j: (d − j)/(j + 1) · p/(1 − p), decreasing in j.
            let ratio = (df - jf) / (jf + 1.0) * p / (1.0 - p);
            if ratio < 0.5 && t < acc - 40.0 {
                // Remaining sum ≤ t · r/(1 − r) ≤ t · 2r < t·1 ≤ e^{acc − 40}.
                let rest = t + libm::log(ratio / (1.0 - ratio));
                acc = log_add_exp(acc, rest);
                break;
            }
        }
        j += 1;
    }
    // Rounding slack: ln C(d, j) and the products have absolute error of a few ulps of
    // ln Γ(d + 1) + d(|ln p| + |ln(1 − p)|); the log-sum adds a few ulps per term.
    let scale = libm::lgamma(df + 1.0) + df * (libm::fabs(lp) + libm::fabs(lq)) + 1.0;
    let slack = 64.0 * f64::EPSILON * scale + 1e-13;
    Ok((acc + slack).min(0.0))
}

/// κ for the ℓ∞-ball criterion; see [`log_kappa_linf_ball`] for the formula.
///
/// If κ is below the smallest positive `f64`, the smallest positive subnormal is returned
/// (still an upper bound); use [`log_kappa_linf_ball`] with
/// [`crate::accounting::rero::balle::log_gamma_from_rdp`] to keep the exact magnitude.
///
/// # Formula
/// κ = P[Bin(d, min(2η, 1)) ≥ ⌈ρd⌉], rounded up.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, App. I (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `eta` not finite and > 0; `rho` ∉ [0, 1]; `dimension` = 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::prior::kappa_linf_ball;
/// // d = 2, ρ = 0.5, 2η = 0.5: P[Bin(2, 0.5) ≥ 1] = 0.75.
/// let k = kappa_linf_ball(0.25, 0.5, 2).unwrap();
/// assert!(k >= 0.75 && k < 0.75 + 1e-12);
/// ```
pub fn kappa_linf_ball(eta: f64, rho: f64, dimension: u64) -> Result<f64> {
    let lk = log_kappa_linf_ball(eta, rho, dimension)?;
    let k = libm::exp(lk) * (1.0 + 4.0 * f64::EPSILON);
    Ok(k.clamp(f64::from_bits(1), 1.0))
}

/// Upper confidence bound on κ from N independent samples of the prior
/// (Hayes et al. 2023, App. J, Prop. 5, with the confidence solved for κ).
///
/// `max_hits` is κ̂·N: the largest number of samples within the success region of a single
/// guess, maximised over **all** guesses z₀ (for exact match on a discrete space: the largest
/// multiplicity of a value among the samples). It must be at least the count of the
/// unknown optimal guess z*, which holds for the supremum (an upper bound on it is also fine).
///
/// # Formula
/// Prop. 5's proof applies the multiplicative Chernoff bound to the count of z*:
/// P[κ̂ < (1 − τ)κ] ≤ exp(−Nτ²κ/2). (The proposition as printed states the failure probability
/// as exp(−Nτ²/2), dropping the factor κ ≤ 1 that the proof carries; that version is not
/// implied by the proof, so we keep κ.) Setting τ = c/√κ with c = √(2 ln(1/δ)/N) makes the
/// failure probability δ, and the event κ(1 − τ) ≤ κ̂, i.e. κ − c√κ ≤ κ̂, solves to
///
/// κ ≤ ((c + √(c² + 4κ̂))/2)²   with probability ≥ 1 − δ,
///
/// which equals Prop. 5's κ̂/(1 − τ) at τ = c/√κ_upper. Rounded up, capped at 1.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, App. J Prop. 5 and its proof in App. M.3
/// (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `samples` = 0; `max_hits` > `samples`; `failure_probability` ∉ (0, 1).
///
/// # Examples
/// ```
/// use reconbound::accounting::prior::kappa_from_samples;
/// // 1000 samples, the most frequent value seen 12 times, 1e-6 failure probability.
/// let k = kappa_from_samples(12, 1000, 1e-6).unwrap();
/// assert!(k > 0.012 && k < 0.06);
/// ```
pub fn kappa_from_samples(max_hits: u64, samples: u64, failure_probability: f64) -> Result<f64> {
    let n = check_count("samples", samples, 1, ">= 1")?;
    if max_hits > n {
        return Err(Error::InvalidCount {
            name: "max_hits",
            value: max_hits,
            expected: "<= samples",
        });
    }
    let delta = check_open_unit("failure_probability", failure_probability)?;
    let nf = n as f64;
    let kappa_hat = max_hits as f64 / nf;
    let c2 = 2.0 * (-libm::log(delta)) / nf;
    let c = libm::sqrt(c2);
    let s = 0.5 * (c + libm::sqrt(c2 + 4.0 * kappa_hat));
    let k = s * s * (1.0 + 16.0 * f64::EPSILON);
    Ok(k.clamp(kappa_hat, 1.0).max(f64::MIN_POSITIVE))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::error::error_name as name;

    #[test]
    fn uniform_and_weighted_kappa() {
        assert_eq!(kappa_uniform(2).unwrap(), 0.5);
        let k = kappa_uniform(3).unwrap();
        assert!((1.0 / 3.0..1.0 / 3.0 + 1e-15).contains(&k));
        // Certified: k·3 ≥ 1 exactly, and k is the smallest such double.
        for m in [3u64, 7, 10, 100, 12_665, 999_999_937] {
            let k = kappa_uniform(m).unwrap();
            assert!(libm::fma(k, m as f64, -1.0) >= 0.0, "{m}");
            assert!(libm::fma(k.next_down(), m as f64, -1.0) < 0.0, "{m}");
        }
        assert_eq!(name(kappa_uniform(1).unwrap_err()), "prior_size");
        assert_eq!(name(kappa_uniform(0).unwrap_err()), "prior_size");
        let k = kappa_weighted(&[0.1, 0.6, 0.3]).unwrap();
        assert!((0.6..0.6 + 1e-15).contains(&k));
        assert_eq!(name(kappa_weighted(&[1.0]).unwrap_err()), "prior_size");
        assert_eq!(
            name(kappa_weighted(&[0.5, f64::NAN]).unwrap_err()),
            "weights"
        );
        assert_eq!(name(kappa_weighted(&[1.5, -0.5]).unwrap_err()), "weights");
        assert_eq!(
            name(kappa_weighted(&[0.5, f64::INFINITY]).unwrap_err()),
            "weights"
        );
        assert_eq!(
            name(kappa_weighted(&[0.5, 0.4]).unwrap_err()),
            "inconsistent"
        );
    }

    #[test]
    fn min_hits_is_exact_ceiling() {
        assert_eq!(min_hits(0.6, 784), 471); // 470.4
        assert_eq!(min_hits(0.5, 10), 5);
        assert_eq!(min_hits(0.1, 10), 1); // binary 0.1 is above 1/10: ρd = 1 + 5.6e-17 → 1
        assert_eq!(min_hits(0.7, 10), 7); // binary 0.7 is below 7/10 → 7
        assert_eq!(min_hits(0.70001, 10), 8);
        assert_eq!(min_hits(1.0, 7), 7);
        assert_eq!(min_hits(0.0, 7), 0);
    }

    #[test]
    fn hayes23_app_i_linf_kappa_rho_one_mnist_cifar() {
        // Paper: 9.66e-473 (MNIST, d = 784) and 2.96e-1850 (CIFAR-10, d = 3072) with
        // 2η = 2·32/256. Checked on log10 to 1e-3 (the paper prints 3 digits).
        let l = log_kappa_linf_ball(0.125, 1.0, 784).unwrap() / core::f64::consts::LN_10;
        assert!((l - (-473.0 + libm::log10(9.66))).abs() < 1e-3, "{l}");
        let l = log_kappa_linf_ball(0.125, 1.0, 3072).unwrap() / core::f64::consts::LN_10;
        assert!((l - (-1850.0 + libm::log10(2.96))).abs() < 1e-3, "{l}");
    }

    #[test]
    fn linf_kappa_matches_direct_binomial_tail() {
        // Small cases against a direct sum in linear space. Lower side 1e-13 relative (both
        // are accurate to ~1e-14); upper side 1e-11: the log result carries an upward
        // rounding slack of 64 ε (ln Γ(d+1) + d|ln p| + d|ln(1−p)|) ≈ 3e-12 for d = 40.
        for &(eta, rho, d) in &[
            (0.1, 0.5, 10u64),
            (0.05, 0.3, 40),
            (0.2, 0.9, 25),
            (0.3, 0.2, 7),
        ] {
            let p: f64 = 2.0 * eta;
            let k = libm::ceil(rho * d as f64 - 1e-12) as u64;
            let mut direct = 0.0;
            for j in k..=d {
                direct += libm::exp(
                    ln_binomial(d as f64, j as f64).unwrap()
                        + j as f64 * libm::log(p)
                        + (d - j) as f64 * libm::log1p(-p),
                );
            }
            let got = kappa_linf_ball(eta, rho, d).unwrap();
            assert!(
                got >= direct * (1.0 - 1e-13),
                "{eta} {rho} {d}: {got} < {direct}"
            );
            assert!(
                got <= direct * (1.0 + 1e-11),
                "{eta} {rho} {d}: {got} vs {direct}"
            );
        }
        assert_eq!(kappa_linf_ball(0.5, 1.0, 100).unwrap(), 1.0);
        assert_eq!(kappa_linf_ball(0.1, 0.0, 100).unwrap(), 1.0);
        // Underflow returns the smallest subnormal, still an upper bound.
        assert_eq!(kappa_linf_ball(0.125, 1.0, 784).unwrap(), f64::from_bits(1));
    }

    #[test]
    fn linf_kappa_large_dimension_is_fast_and_finite() {
        let l = log_kappa_linf_ball(0.01, 0.5, 10_000_000).unwrap();
        assert!(l.is_finite() && l < -1e6);
        let l = log_kappa_linf_ball(0.3, 0.1, 10_000_000).unwrap();
        assert!(l <= 0.0 && l > -1e-9, "{l}");
    }

    #[test]
    fn linf_bad_inputs() {
        for e in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
            assert_eq!(name(log_kappa_linf_ball(e, 0.5, 3).unwrap_err()), "eta");
        }
        for r in [f64::NAN, -0.1, 1.1, f64::INFINITY] {
            assert_eq!(name(kappa_linf_ball(0.1, r, 3).unwrap_err()), "rho");
        }
        assert_eq!(name(kappa_linf_ball(0.1, 0.5, 0).unwrap_err()), "dimension");
    }

    #[test]
    fn hayes23_prop5_bound_formula_and_coverage() {
        // Formula: κ̂ = 0.1, N = 1000, δ = e^{-5}: c² = 0.01, bound = ((0.1 + √0.41)/2)².
        let b = kappa_from_samples(100, 1000, libm::exp(-5.0)).unwrap();
        let exact = libm::pow((0.1 + libm::sqrt(0.41)) / 2.0, 2.0);
        assert!(b >= exact && b < exact * (1.0 + 1e-13), "{b} {exact}");
        // Consistency with Prop. 5: κ̂/(1 − τ) with τ = c/√bound.
        let tau = 0.1 / libm::sqrt(exact);
        assert!((0.1 / (1.0 - tau) - exact).abs() < 1e-12);
        assert_eq!(kappa_from_samples(1000, 1000, 0.5).unwrap(), 1.0);
        assert!(kappa_from_samples(0, 1000, 0.5).unwrap() > 0.0);
        assert_eq!(name(kappa_from_samples(0, 0, 0.5).unwrap_err()), "samples");
        assert_eq!(name(kappa_from_samples(5, 4, 0.5).unwrap_err()), "max_hits");
        for d in [f64::NAN, 0.0, 1.0, -1.0, f64::INFINITY] {
            assert_eq!(
                name(kappa_from_samples(1, 4, d).unwrap_err()),
                "failure_probability"
            );
        }
    }

    #[test]
    fn hayes23_prop5_bound_covers_true_kappa_by_simulation() {
        // Uniform prior on 50 points (κ = 0.02), N = 200 samples, δ = 0.05: the bound must
        // fail in at most 5% of runs. 2000 runs with seed 11; failures are Binomial(2000, ≤0.05)
        // so P[> 160 failures] < 1e-6 (Chernoff); the assertion uses 160.
        let mut failures = 0;
        for run in 0..2000u64 {
            let mut rng = crate::rng::Rng::for_trial(11, run);
            let mut counts = [0u64; 50];
            for _ in 0..200 {
                let i = rng.below(50).unwrap() as usize;
                if let Some(c) = counts.get_mut(i) {
                    *c += 1;
                }
            }
            let max = counts.iter().copied().max().unwrap_or(0);
            if kappa_from_samples(max, 200, 0.05).unwrap() < 0.02 {
                failures += 1;
            }
        }
        assert!(failures <= 160, "seed 11: {failures} failures of 2000");
    }
}
