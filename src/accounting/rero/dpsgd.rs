//! The ReRo bound of Hayes, Mahloujifar, Balle 2023 (Thm 2 / Cor. 3) for DP-SGD.
//!
//! ν = N(0, σ²I_T) (without the target), μ = Π_t[(1−q)N(0, σ²) + qN(1, σ²)] (with it;
//! sensitivity in units of the clipping norm), and γ = sup_{ν(E) ≤ κ} μ(E) = μ(L > τ) with
//! L = Σ_t ln(1 − q + q e^{(2x_t−1)/(2σ²)}) and ν(L > τ) = κ (Neyman–Pearson).
//! - [`gamma_full_batch`]: q = 1, closed form Φ(Φ⁻¹(κ) + √T/σ).
//! - [`gamma_numerical`]: any q, certified bracket by PLD composition (the default for q < 1).
//! - [`gamma`]: dispatch between the two.
//! - [`gamma_monte_carlo`]: the paper's Monte Carlo estimate, seeded, with an upper
//!   confidence bound.
//!
//! The numerical and Monte Carlo functions need the `alloc` feature.

#[cfg(feature = "alloc")]
use crate::accounting::pld::{Pld, PldConfig, StepLoss};
#[cfg(feature = "alloc")]
use crate::accounting::pld_schedule::composed_pair_for_kappa;
#[cfg(feature = "alloc")]
use crate::accounting::schedule::{Phase, Schedule};
#[cfg(feature = "alloc")]
use crate::error::{check_count, check_dpsgd, check_open_unit, Error};
use crate::error::{check_positive, check_steps, check_unit_rate, Result};
use crate::math::normal;
#[cfg(feature = "alloc")]
use crate::rng::Rng;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// γ for DP-SGD with full batches (q = 1): γ = Φ(Φ⁻¹(κ) + √T/σ).
///
/// # Formula
/// With q = 1 the with-target output law is N(𝟙, σ²I_T) against N(0, σ²I_T); the
/// Neyman–Pearson set of ν-mass κ has μ-mass Φ(Φ⁻¹(κ) + √T/σ).
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 with q = 1 (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `kappa` ∉ (0, 1], `noise_multiplier` not finite and > 0, `steps` = 0.
///
/// # Examples
/// ```
/// let g = reconbound::accounting::rero::dpsgd::gamma_full_batch(0.1, 1.0, 1).unwrap();
/// assert!((g - 0.389143691645361).abs() < 1e-12);
/// ```
pub fn gamma_full_batch(kappa: f64, noise_multiplier: f64, steps: u64) -> Result<f64> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let steps = check_steps(steps)?;
    if kappa == 1.0 {
        return Ok(1.0);
    }
    Ok(full_batch_bracket(kappa, sigma, steps)?.gamma)
}

/// The closed form of [`gamma_full_batch`] as a certified bracket (validated inputs).
///
/// The absolute error of z = Φ⁻¹(κ) + √T/σ (Φ⁻¹ to 1e-15 relative, the shift and the sum to
/// a few ulps) moves ln Φ(z) by at most (|z| + 1)·|Δz| (φ/Φ ≤ |z| + 1), and Φ is accurate to
/// 1e-14 relative: one relative nudge up (down) covers both.
fn full_batch_bracket(kappa: f64, sigma: f64, steps: u64) -> Result<GammaBound> {
    if kappa == 1.0 {
        return Ok(GammaBound {
            gamma: 1.0,
            lower: 1.0,
        });
    }
    full_batch_bracket_shift(kappa, libm::sqrt(steps as f64) / sigma, 5e-16)
}

/// Φ(Φ⁻¹(κ) + μ) as a certified bracket for a shift μ computed to relative error
/// `shift_rel` (κ ∈ (0, 1]): the closed form of [`full_batch_bracket`], shared with
/// schedules of full-batch phases (μ = √(Σ T_i/σ_i²)).
pub(crate) fn full_batch_bracket_shift(
    kappa: f64,
    shift: f64,
    shift_rel: f64,
) -> Result<GammaBound> {
    if kappa == 1.0 {
        return Ok(GammaBound {
            gamma: 1.0,
            lower: 1.0,
        });
    }
    let (z, rel) = shifted_quantile(kappa, shift, shift_rel)?;
    let g = normal::cdf(z);
    Ok(GammaBound {
        gamma: (g * (1.0 + rel)).clamp(kappa, 1.0),
        lower: (g * (1.0 - rel)).clamp(kappa, 1.0),
    })
}

/// z = Φ⁻¹(κ) + μ for κ ∈ (0, 1) and a shift μ computed to relative error `shift_rel`, with
/// the relative error `rel` that bounds how far Φ(z) and Φ(−z) = 1 − Φ(z), as computed, can
/// be from their exact values: Φ⁻¹ is accurate to 1e-15 relative, the shift and the sum to a
/// few ulps, an error Δz moves ln Φ(z) and ln Φ(−z) by at most (|z| + 1)·|Δz| (the Mills
/// ratio bound φ/Φ ≤ |z| + 1), and Φ is accurate to 1e-14 relative.
pub(crate) fn shifted_quantile(kappa: f64, shift: f64, shift_rel: f64) -> Result<(f64, f64)> {
    let z0 = normal::quantile(kappa)?;
    let z = z0 + shift;
    let dz = 1e-15 * libm::fabs(z0) + shift_rel * shift + 2.5e-16 * libm::fabs(z);
    Ok((z, 1.01 * (libm::fabs(z) + 1.0) * dz + 1e-14))
}

/// A certified two-sided value of Hayes et al.'s γ: `lower ≤ γ ≤ gamma`; the error is
/// `gamma − lower`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GammaBound {
    /// Certified upper bound on γ (the ReRo success-probability bound to report).
    pub gamma: f64,
    /// Certified lower bound on γ.
    pub lower: f64,
}

/// γ by deterministic numerical composition of the privacy loss (any q ∈ (0, 1]).
///
/// # Formula
/// γ = sup_{ν_T(E) ≤ κ} μ_T(E) = min_ε [e^ε κ + H_{e^ε}(μ_T‖ν_T)] (for every ε,
/// μ(E) ≤ e^ε ν(E) + H_{e^ε}(μ‖ν), with equality at the Neyman–Pearson set {L > τ}).
/// H is bracketed by the pessimistic / optimistic PLDs of [`crate::accounting::pld`]
/// (single direction μ‖ν), so the two minima bracket γ. Capped to [κ, 1].
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3 and App. M.1 (hayes2023-rero-dpsgd-appendix.txt);
/// the PLD construction of [`crate::accounting::pld`].
///
/// # Errors
/// `kappa` ∉ (0, 1], `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0,
/// `steps` = 0, bad config; [`Error::Numerical`] if the PLD grid would be too large.
///
/// # Examples
/// ```
/// use reconbound::accounting::{pld::PldConfig, rero::dpsgd::gamma_numerical};
/// let g = gamma_numerical(0.1, 1.0, 1.0, 1, &PldConfig::default()).unwrap();
/// assert!(g.lower <= 0.389143691645361 && 0.389143691645361 <= g.gamma);
/// ```
#[cfg(feature = "alloc")]
pub fn gamma_numerical(
    kappa: f64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    config: &PldConfig,
) -> Result<GammaBound> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    if kappa == 1.0 {
        return Ok(GammaBound {
            gamma: 1.0,
            lower: 1.0,
        });
    }
    let one = Schedule::single(Phase {
        sampling_rate: q,
        noise_multiplier: sigma,
        steps,
    })?;
    let (up, lo) = composed_pair_for_kappa(&one, kappa, config)?;
    Ok(gamma_from_pair(
        &up,
        &lo,
        kappa,
        gamma_limit(kappa, &[(q, steps)]),
    ))
}

/// γ and its lower bound from the (pessimistic, optimistic) composed PLDs of μ_T‖ν_T: the
/// Neyman–Pearson values at κ, kept in [κ, cap] with `cap` the σ → 0 limit. A composition
/// whose tilted masses over- or underflowed gives no Neyman–Pearson value; the cap is still
/// a valid γ (μ_T = p₀ν_T + (1 − p₀)ρ) and κ a valid lower bound.
#[cfg(feature = "alloc")]
pub(crate) fn gamma_from_pair(up: &Pld, lo: &Pld, kappa: f64, cap: f64) -> GammaBound {
    let cap = cap.max(kappa);
    let np = up.neyman_pearson(kappa);
    let gamma = if np.is_nan() {
        cap
    } else {
        np.clamp(kappa, cap)
    };
    let lower = lo.neyman_pearson(kappa);
    let lower = if lower.is_nan() {
        kappa
    } else {
        lower.clamp(kappa, gamma)
    };
    GammaBound { gamma, lower }
}

/// The σ → 0 limit of γ, 1 − (1 − q)^T(1 − κ) (rounded up): an upper bound on γ for every
/// σ > 0, approached as σ → 0, so no noise multiplier can give a larger γ.
///
/// # Formula
/// μ_T = p₀ν_T + (1 − p₀)·ρ with p₀ = (1 − q)^T the probability that the target is never
/// sampled (ρ the law given that it is), so μ_T(E) ≤ 1 − p₀ + p₀κ whenever ν_T(E) ≤ κ; as
/// σ → 0 the steps where the target is sampled are identified with certainty.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 (γ = sup_{ν(E) ≤ κ} μ(E); hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `kappa` ∉ (0, 1], `sampling_rate` ∉ (0, 1], `steps` = 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::dpsgd::{gamma, gamma_noiseless_limit};
/// let lim = gamma_noiseless_limit(0.01, 0.01, 100).unwrap();
/// assert!((lim - (1.0 - 0.99f64.powi(100) * 0.99)).abs() < 1e-12);
/// assert!(gamma(0.01, 0.01, 0.2, 100).unwrap().gamma <= lim);
/// ```
pub fn gamma_noiseless_limit(kappa: f64, sampling_rate: f64, steps: u64) -> Result<f64> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let q = check_unit_rate("sampling_rate", sampling_rate)?;
    let steps = check_steps(steps)?;
    Ok(gamma_limit(kappa, &[(q, steps)]))
}

/// [`gamma_noiseless_limit`] for validated inputs.
pub(crate) fn gamma_limit(kappa: f64, phases: &[(f64, u64)]) -> f64 {
    if phases.iter().any(|&(q, _)| q >= 1.0) {
        return 1.0;
    }
    // L = ln p₀ = Σ T·ln(1 − q): n same-sign terms, off by at most (n + 2)·u·|L| in all
    let log_p0: f64 = phases
        .iter()
        .map(|&(q, steps)| steps as f64 * libm::log1p(-q))
        .sum();
    let err_l = (phases.len() as f64 + 2.0) * 2.0 * f64::EPSILON * libm::fabs(log_p0);
    // 1 − p₀(1 − κ) = (1 − p₀) + κp₀, with 1 − p₀ = −expm1(L) accurate also when p₀ ≈ 1; an
    // error e in L moves −expm1(L) by at most e (its slope is p₀ ≤ 1)
    let one_minus_p0 = -libm::expm1(log_p0);
    let limit = (one_minus_p0 * (1.0 + 1e-12) + err_l + kappa * libm::exp(log_p0) * (1.0 + 1e-12))
        * (1.0 + 4.0 * f64::EPSILON);
    limit.min(1.0)
}

/// γ for DP-SGD: the closed form for q = 1 (`lower = gamma`), otherwise
/// [`gamma_numerical`] at [`PldConfig::default`].
///
/// # Formula
/// q = 1: γ = Φ(Φ⁻¹(κ) + √T/σ); q < 1: γ = min_ε [e^ε κ + H_{e^ε}(μ_T‖ν_T)].
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3 (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// As [`gamma_numerical`].
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::dpsgd::gamma;
/// let g = gamma(0.1, 0.01, 1.0, 100).unwrap();
/// assert!(g.gamma >= g.lower && g.gamma - g.lower <= 1e-5);
/// ```
#[cfg(feature = "alloc")]
pub fn gamma(
    kappa: f64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
) -> Result<GammaBound> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    if q == 1.0 {
        return full_batch_bracket(kappa, sigma, steps);
    }
    gamma_numerical(kappa, q, sigma, steps, &PldConfig::default())
}

/// A Monte Carlo estimate of γ with a one-sided upper confidence bound.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg(feature = "alloc")]
pub struct MonteCarloGamma {
    /// Plug-in estimate: fraction of μ-samples with L > τ̂, τ̂ the empirical (1−κ)-quantile
    /// of the ν-samples.
    pub estimate: f64,
    /// Upper confidence bound on γ at the requested confidence.
    pub upper: f64,
    /// Number of samples drawn under each of ν and μ.
    pub samples: u64,
    /// The seed.
    pub seed: u64,
}

/// ln of P[Bin(n, p) ≤ k] Chernoff bound: −n·KL(k/n ‖ p) for k/n ≤ p (0 otherwise).
#[cfg(feature = "alloc")]
fn kl_bernoulli(a: f64, p: f64) -> f64 {
    let t1 = if a > 0.0 { a * libm::log(a / p) } else { 0.0 };
    let t2 = if a < 1.0 {
        (1.0 - a) * libm::log((1.0 - a) / (1.0 - p))
    } else {
        0.0
    };
    t1 + t2
}

/// Smallest p ≥ a with n·KL(a‖p) ≥ ln(1/β): an upper confidence bound on a binomial rate
/// (Chernoff–Hoeffding: P[p̂ ≤ a] ≤ exp(−n KL(a‖p)) for a ≤ p).
#[cfg(feature = "alloc")]
fn kl_upper(a: f64, n: f64, log_inv_beta: f64) -> f64 {
    if a >= 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (a, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if n * kl_bernoulli(a, mid) >= log_inv_beta {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// One sample of L = Σ_t L(x_t) with x_t = σ z_t + b_t, b_t ~ Bernoulli(q) under μ (b ≡ 0 under ν).
#[cfg(feature = "alloc")]
fn sample_loss(
    rng: &mut Rng,
    loss: &StepLoss,
    q: f64,
    sigma: f64,
    steps: u64,
    with_target: bool,
) -> Result<f64> {
    let mut l = 0.0;
    for _ in 0..steps {
        let mut x = sigma * rng.gaussian();
        if with_target && (q >= 1.0 || rng.bernoulli(q)?) {
            x += 1.0;
        }
        l += loss.at(x);
    }
    Ok(l)
}

/// The (ν, μ) loss samples of trials `range`, in trial order. With `std`, the trials are split
/// into contiguous chunks over the available cores; every trial draws from
/// `Rng::for_trial(seed, i)` alone, so the result is bit-identical to the sequential run
/// (and to the `alloc`-only build).
#[cfg(feature = "alloc")]
fn sample_pairs(
    seed: u64,
    range: core::ops::Range<u64>,
    q: f64,
    sigma: f64,
    steps: u64,
) -> Result<(Vec<f64>, Vec<f64>)> {
    #[cfg(feature = "std")]
    {
        let len = range.end - range.start;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(16) as u64;
        if threads > 1 && len >= 4096 {
            let chunk = len.div_ceil(threads);
            let parts: Vec<Result<(Vec<f64>, Vec<f64>)>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|k| {
                        let lo = range.start + (k * chunk).min(len);
                        let hi = range.start + ((k + 1) * chunk).min(len);
                        scope.spawn(move || sample_pairs_sequential(seed, lo..hi, q, sigma, steps))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or(Err(Error::Numerical {
                            what: "Monte Carlo worker thread failed",
                            value: f64::NAN,
                        }))
                    })
                    .collect()
            });
            let mut null = Vec::with_capacity(len as usize);
            let mut alt = Vec::with_capacity(len as usize);
            for part in parts {
                let (n, a) = part?;
                null.extend_from_slice(&n);
                alt.extend_from_slice(&a);
            }
            return Ok((null, alt));
        }
    }
    sample_pairs_sequential(seed, range, q, sigma, steps)
}

#[cfg(feature = "alloc")]
fn sample_pairs_sequential(
    seed: u64,
    range: core::ops::Range<u64>,
    q: f64,
    sigma: f64,
    steps: u64,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let len = usize::try_from(range.end - range.start).map_err(|_| Error::InvalidCount {
        name: "samples",
        value: range.end - range.start,
        expected: "addressable in memory",
    })?;
    let mut null = Vec::with_capacity(len);
    let mut alt = Vec::with_capacity(len);
    let loss = StepLoss::new(q, sigma);
    for i in range {
        let mut rng = Rng::for_trial(seed, i);
        null.push(sample_loss(&mut rng, &loss, q, sigma, steps, false)?);
        alt.push(sample_loss(&mut rng, &loss, q, sigma, steps, true)?);
    }
    Ok((null, alt))
}

/// γ by Monte Carlo, as in Hayes et al. (who use 10⁶ samples without an error bar), with a
/// one-sided upper confidence bound.
///
/// # Formula
/// Sample i uses `Rng::for_trial(seed, i)`: first L under ν, then L under μ (so runs split
/// into shards reproduce the single run). With β = (1 − confidence)/2:
/// τ_lo = the j-th smallest ν-sample, j − 1 the largest k with P[Bin(n, 1−κ) ≤ k] ≤ β by the
/// Chernoff bound exp(−n KL(k/n ‖ 1−κ)), so P(τ_lo > τ) ≤ β; then k = #{μ-samples > τ_lo}
/// and `upper` = the Chernoff (KL) upper bound on μ(L > τ_lo) ≥ γ at level β. The μ-samples
/// are independent of τ_lo, so `upper` ≥ γ with probability ≥ `confidence`.
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Sec. 4 / App. M (Monte Carlo estimate of γ);
/// Hoeffding 1963 (Chernoff–KL bound).
///
/// # Errors
/// `kappa` ∉ (0, 1], `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0,
/// `steps` = 0, `samples` = 0, `confidence` ∉ (0, 1).
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::dpsgd::gamma_monte_carlo;
/// let mc = gamma_monte_carlo(0.1, 1.0, 1.0, 1, 20_000, 7, 0.999).unwrap();
/// assert!(mc.upper >= 0.389143691645361 && (mc.estimate - 0.389).abs() < 0.02);
/// ```
#[cfg(feature = "alloc")]
pub fn gamma_monte_carlo(
    kappa: f64,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    samples: u64,
    seed: u64,
    confidence: f64,
) -> Result<MonteCarloGamma> {
    let kappa = check_unit_rate("kappa", kappa)?;
    let (q, sigma, steps) = check_dpsgd(sampling_rate, noise_multiplier, steps)?;
    let samples = check_count("samples", samples, 1, ">= 1")?;
    let confidence = check_open_unit("confidence", confidence)?;
    let n_usize = usize::try_from(samples).map_err(|_| Error::InvalidCount {
        name: "samples",
        value: samples,
        expected: "addressable in memory",
    })?;
    let (mut null, alt) = sample_pairs(seed, 0..samples, q, sigma, steps)?;
    null.sort_by(f64::total_cmp);
    let n = samples as f64;
    let beta = (1.0 - confidence) / 2.0;
    let log_inv_beta = -libm::log(beta);
    // point estimate: τ̂ = empirical (1−κ)-quantile
    let idx_hat = (libm::ceil((1.0 - kappa) * n) as usize).clamp(1, n_usize) - 1;
    let tau_hat = null.get(idx_hat).copied().unwrap_or(f64::NEG_INFINITY);
    // lower confidence bound on τ: largest k with n·KL(k/n ‖ 1−κ) ≥ ln(1/β), k/n ≤ 1−κ
    let p = 1.0 - kappa;
    let mut k_lo: Option<usize> = None;
    let (mut a, mut b) = (0usize, libm::floor(p * n) as usize);
    if p > 0.0 && n * kl_bernoulli(0.0, p) >= log_inv_beta {
        // binary search on k ∈ [0, ⌊pn⌋] (KL decreasing in k there)
        while a < b {
            let mid = (a + b).div_ceil(2);
            if n * kl_bernoulli(mid as f64 / n, p) >= log_inv_beta {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        k_lo = Some(a);
    }
    // τ_lo = X_(k+1) (1-based), i.e. index k; with no valid k, τ_lo = −∞.
    let tau_lo = match k_lo {
        Some(k) => null.get(k).copied().unwrap_or(f64::NEG_INFINITY),
        None => f64::NEG_INFINITY,
    };
    let over_hat = alt.iter().filter(|&&l| l > tau_hat).count() as f64;
    let over_lo = alt.iter().filter(|&&l| l > tau_lo).count() as f64;
    let estimate = (over_hat / n).clamp(0.0, 1.0);
    let upper = kl_upper(over_lo / n, n, log_inv_beta).clamp(kappa, 1.0);
    Ok(MonteCarloGamma {
        estimate,
        upper: upper.max(estimate),
        samples,
        seed,
    })
}

/// The smallest noise multiplier (to relative 1e-4, rounded to the safe side) for which the
/// certified γ of [`gamma`] is at most `target_gamma`.
///
/// # Formula
/// γ(σ) is non-increasing in σ; bracket by doubling from σ = 1/16, then bisect on σ. The
/// returned σ is always one at which `gamma(kappa, q, σ, T).gamma ≤ target_gamma` was
/// verified (a σ whose PLD grid is too large counts as "γ too large").
///
/// # Citations
/// Hayes, Mahloujifar, Balle 2023, Thm 2 / Cor. 3 (hayes2023-rero-dpsgd-appendix.txt).
///
/// # Errors
/// `target_gamma` ∉ (κ, 1) or ≥ [`gamma_noiseless_limit`] (every σ meets it), `kappa`
/// ∉ (0, 1), `sampling_rate` ∉ (0, 1], `steps` = 0;
/// [`Error::NotConverged`] if even σ = 2²⁰ does not reach the target.
///
/// # Examples
/// ```
/// use reconbound::accounting::rero::dpsgd::{calibrate_noise_multiplier, gamma};
/// let s = calibrate_noise_multiplier(0.2, 0.1, 1.0, 100).unwrap();
/// assert!(gamma(0.1, 1.0, s, 100).unwrap().gamma <= 0.2);
/// assert!(gamma(0.1, 1.0, s * 0.999, 100).unwrap().gamma > 0.2);
/// ```
#[cfg(feature = "alloc")]
pub fn calibrate_noise_multiplier(
    target_gamma: f64,
    kappa: f64,
    sampling_rate: f64,
    steps: u64,
) -> Result<f64> {
    let kappa = check_open_unit("kappa", kappa)?;
    let q = check_unit_rate("sampling_rate", sampling_rate)?;
    let steps = check_steps(steps)?;
    if !(target_gamma > kappa && target_gamma < 1.0) {
        return crate::error::invalid("target_gamma", target_gamma, "in (kappa, 1)");
    }
    if target_gamma >= gamma_limit(kappa, &[(q, steps)]) {
        return crate::error::invalid(
            "target_gamma",
            target_gamma,
            "below 1 − (1 − q)^T(1 − κ), the σ → 0 limit of γ (every σ > 0 meets a larger target)",
        );
    }
    let ok = |sigma: f64| -> Result<bool> {
        match gamma(kappa, q, sigma, steps) {
            Ok(g) => Ok(g.gamma <= target_gamma),
            Err(Error::Numerical { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let mut lo = 0.0625;
    if ok(lo)? {
        // search downwards
        let mut s = lo;
        for _ in 0..40 {
            let next = s / 2.0;
            if !ok(next)? {
                lo = next;
                break;
            }
            s = next;
            lo = next / 2.0;
        }
        let mut hi = s;
        while (hi - lo) > 1e-4 * hi {
            let mid = 0.5 * (lo + hi);
            if ok(mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        return Ok(hi);
    }
    let mut hi = lo * 2.0;
    while !ok(hi)? {
        lo = hi;
        hi *= 2.0;
        if hi > 1_048_576.0 {
            return Err(Error::NotConverged {
                what: "calibrate_noise_multiplier: target_gamma not reached",
                value: hi,
            });
        }
    }
    while (hi - lo) > 1e-4 * hi {
        let mid = 0.5 * (lo + hi);
        if ok(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splitting the trials over threads changes nothing: every trial has its own stream.
    #[cfg(feature = "std")]
    #[test]
    fn monte_carlo_threads_reproduce_the_sequential_run_bit_for_bit() {
        let (q, sigma, steps, seed) = (0.1, 1.0, 5, 42);
        let par = sample_pairs(seed, 0..5000, q, sigma, steps).unwrap();
        let seq = sample_pairs_sequential(seed, 0..5000, q, sigma, steps).unwrap();
        assert_eq!(par.0.len(), 5000);
        for (a, b) in par.0.iter().zip(&seq.0).chain(par.1.iter().zip(&seq.1)) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        // Shards merge: trials 2000..5000 alone are the tail of the full run.
        let shard = sample_pairs_sequential(seed, 2000..5000, q, sigma, steps).unwrap();
        assert_eq!(shard.0[..], seq.0[2000..]);
    }
}
