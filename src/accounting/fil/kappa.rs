//! κ of Guo et al. 2022, Thm 4, Eq. 3, and the per-step ε it needs.
//!
//! One DP-SGD step is a Gaussian mechanism on the sum of clipped gradients with noise std
//! σ·S (S the clipping sensitivity of one example). Its privacy loss against a neighbouring
//! batch is N(μ²/2, μ²) with μ = Δ/(σS): μ = 1/σ under add/remove adjacency (Poisson
//! sampling, Δ = S) and μ = 2/σ under replace-one adjacency (fixed-size batches, Δ = 2S).
//! The loss exceeds ε = μ·Φ⁻¹(1 − δ) + μ²/2 with probability exactly δ ([`step_epsilon`]);
//! Eq. 3 then gives κ = q/(q + (1 − q)e^{−ε}) ([`kappa`]). See the [module docs](super) for
//! the proof sketch for Poisson sampling.

use crate::error::{check_non_negative, check_open_unit, check_positive, check_unit_rate};
use crate::error::{check_result, Error, Result};
use crate::math::normal::quantile;
use crate::train::sampling::Sampling;

const EPS: f64 = f64::EPSILON;

/// The adjacency relation under which the per-step ε of Eq. 3 is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjacency {
    /// Add or remove one example (Poisson sampling): sensitivity S, μ = 1/σ.
    AddRemove,
    /// Replace one example of a fixed-size batch (Guo's proof of Thm 4): sensitivity 2S,
    /// μ = 2/σ.
    ReplaceOne,
}

impl Adjacency {
    /// The sensitivity of the gradient sum in units of S (the largest clipped-gradient
    /// norm): 1 for add/remove, 2 for replace-one.
    ///
    /// ```
    /// use reconbound::accounting::fil::kappa::Adjacency;
    /// assert_eq!(Adjacency::AddRemove.sensitivity_factor(), 1.0);
    /// assert_eq!(Adjacency::ReplaceOne.sensitivity_factor(), 2.0);
    /// ```
    pub fn sensitivity_factor(self) -> f64 {
        match self {
            Adjacency::AddRemove => 1.0,
            Adjacency::ReplaceOne => 2.0,
        }
    }

    /// The adjacency of Eq. 3 for a batch sampling scheme: add/remove for Poisson sampling,
    /// replace-one for fixed-size batches; `None` for shuffled epochs (batches are not
    /// independent across steps: only κ = 1 is valid) and the full batch (q = 1, κ = 1).
    ///
    /// ```
    /// use reconbound::accounting::fil::kappa::Adjacency;
    /// use reconbound::train::sampling::Sampling;
    /// assert_eq!(Adjacency::of_sampling(Sampling::Poisson), Some(Adjacency::AddRemove));
    /// assert_eq!(Adjacency::of_sampling(Sampling::FixedSize), Some(Adjacency::ReplaceOne));
    /// assert_eq!(Adjacency::of_sampling(Sampling::Shuffle), None);
    /// ```
    pub fn of_sampling(sampling: Sampling) -> Option<Adjacency> {
        match sampling {
            Sampling::Poisson => Some(Adjacency::AddRemove),
            Sampling::FixedSize => Some(Adjacency::ReplaceOne),
            Sampling::Shuffle | Sampling::FullBatch => None,
        }
    }
}

/// μ = Δ/(σ·S) of one DP-SGD step: the sensitivity factor of `adjacency` over the noise
/// multiplier, rounded up.
///
/// # Formula
///
/// μ = 1/σ (add/remove) or 2/σ (replace-one): the noise std of the gradient sum is σ·S and
/// the sensitivity S or 2S, with S = [`ClipMethod::max_norm`](crate::train::clip::ClipMethod::max_norm)
/// of the clipping norm (so the GELU factor 1.11522 cancels).
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 4 and its proof (App. B),
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_multiplier` unless finite and > 0;
/// [`Error::Numerical`] if μ overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::kappa::{step_mu, Adjacency};
/// assert!((step_mu(0.5, Adjacency::ReplaceOne)? - 4.0).abs() < 1e-15);
/// assert!(step_mu(0.0, Adjacency::AddRemove).is_err());
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn step_mu(noise_multiplier: f64, adjacency: Adjacency) -> Result<f64> {
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let mu = adjacency.sensitivity_factor() / sigma;
    check_result(
        "step mu overflows (noise_multiplier too small)",
        mu.next_up(),
    )
}

/// The exact-tail per-step ε: the privacy loss N(μ²/2, μ²) of a Gaussian mechanism with
/// μ = sensitivity/noise std exceeds ε with probability exactly δ. Rounded up.
///
/// # Formula
///
/// ε = μ·Φ⁻¹(1 − δ) + μ²/2 (computed as −μ·Φ⁻¹(δ) + μ²/2), at least 0. Always valid,
/// unlike the classical value [`classical_step_epsilon`], and smaller than it whenever that
/// one is valid (< 1).
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 4 (Eq. 3) and §6.1 (failure
/// probability δ per step), `guo2022-bounding-reconstruction-fil-rdp.txt`; the privacy-loss
/// law of the Gaussian mechanism: Balle & Wang 2018, Lemma 3 / Dong, Roth, Su 2019.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `mu` unless finite and > 0, `delta` unless in (0, 1);
/// [`Error::Numerical`] if ε overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::kappa::step_epsilon;
/// // μ = 1 (Poisson, σ = 1), δ = 1e-5: Φ⁻¹(1 − 1e-5) + 1/2.
/// let e = step_epsilon(1.0, 1e-5)?;
/// assert!((e - 4.764_890_793_922_825).abs() < 1e-13);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn step_epsilon(mu: f64, delta: f64) -> Result<f64> {
    let mu = check_positive("mu", mu)?;
    let delta = check_open_unit("delta", delta)?;
    // Φ⁻¹(1 − δ) = −Φ⁻¹(δ), accurate for tiny δ (relative error ≲ 1e-15).
    let z = -quantile(delta)?;
    let e = mu * z + 0.5 * mu * mu;
    // Rounding: quantile ≲ 1e-15 relative, three operations; 32ε relative covers them.
    let up = e + libm::fabs(e) * 32.0 * EPS;
    check_result("step epsilon overflows", up.max(0.0))
}

/// The classical per-step ε of the Gaussian mechanism (Dwork & Roth Thm A.1), as printed in
/// Guo et al. Alg. 1 line 4 — **for comparison only**: it is a valid (ε, δ) guarantee only
/// when it is < 1.
///
/// # Formula
///
/// ε = μ·√(2 ln(1.25/δ)). Alg. 1 line 4, ε = 1.115·2·√(2 ln(1.25/δ))/σ, is this with
/// μ = 2·1.115/σ: replace-one sensitivity 2·1.115·C of GELU-clipped gradients over Guo's
/// noise σC. In this crate the noise is σ·S with S = 1.11522·C for GELU clipping, so the
/// comparable value is `classical_step_epsilon(step_mu(σ, adjacency)?, δ)`.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Alg. 1 line 4,
/// `guo2022-bounding-reconstruction-fil-rdp.txt`; Dwork & Roth 2014, Thm A.1.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `mu` unless finite and > 0, `delta` unless in (0, 1);
/// [`Error::Numerical`] on overflow.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::kappa::{classical_step_epsilon, step_epsilon};
/// // Alg. 1 line 4 with σ = 1, δ = 1e-5: 1.115·2·√(2 ln 125000) ≈ 10.8039.
/// let c = classical_step_epsilon(2.0 * 1.115, 1e-5)?;
/// assert!((c - 10.803_915_735_610_018).abs() < 1e-12);
/// // Where the classical value is valid (< 1) the exact tail is smaller.
/// let mu = 0.1;
/// assert!(step_epsilon(mu, 1e-5)? < classical_step_epsilon(mu, 1e-5)?);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn classical_step_epsilon(mu: f64, delta: f64) -> Result<f64> {
    let mu = check_positive("mu", mu)?;
    let delta = check_open_unit("delta", delta)?;
    let e = mu * libm::sqrt(2.0 * libm::log(1.25 / delta));
    check_result("classical step epsilon overflows", e)
}

/// κ of Guo et al. Thm 4, Eq. 3: the factor on the expected per-step Fisher information of a
/// subsampled step whose mechanism is ε-DP. Rounded up, at most 1.
///
/// # Formula
///
/// κ = q / (q + (1 − q)·e^{−ε}); κ = 1 exactly for q = 1, κ → q as ε → 0.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 4, Eq. 3 and Alg. 1 line 4,
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `sampling_rate` unless in (0, 1], `epsilon` unless finite and
/// ≥ 0.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::kappa::kappa;
/// assert_eq!(kappa(1.0, 3.0)?, 1.0);
/// let k = kappa(0.01, 1.0)?; // 0.01/(0.01 + 0.99/e)
/// assert!((k - 0.026_723_630_989_395_224).abs() < 1e-15);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn kappa(sampling_rate: f64, epsilon: f64) -> Result<f64> {
    let q = check_unit_rate("sampling_rate", sampling_rate)?;
    let e = check_non_negative("epsilon", epsilon)?;
    if q == 1.0 {
        return Ok(1.0);
    }
    let k = q / (q + (1.0 - q) * libm::exp(-e));
    // Four roundings (1 − q, exp ≤ 1 ulp, ·, +, /): 16ε relative covers them.
    Ok((k + k * 16.0 * EPS).min(1.0))
}

/// The default per-step failure probability δ = 1/(n·T): the total failure probability of
/// Eq. 3 over T steps is then at most 1/n (Guo et al. §6.1). Rounded down.
///
/// # Formula
///
/// δ = 1/(n·T).
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, §6.1 ("the total failure probability across
/// all iterations is at most 1/|D_train|"), `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidCount`] `dataset_size` if < 2 (a single example is always in the batch:
/// q = 1, no δ is needed), `steps` if 0; [`Error::Numerical`] if δ underflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::kappa::default_delta;
/// let d = default_delta(1000, 100)?;
/// assert!(d <= 1e-5 && d > 1e-5 * (1.0 - 1e-15));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn default_delta(dataset_size: usize, steps: u64) -> Result<f64> {
    if dataset_size < 2 {
        return Err(Error::InvalidCount {
            name: "dataset_size",
            value: dataset_size as u64,
            expected: ">= 2",
        });
    }
    crate::error::check_steps(steps)?;
    let delta = 1.0 / (dataset_size as f64 * steps as f64);
    // Two roundings (the product, the quotient): step down twice.
    let delta = delta.next_down().next_down();
    if !(delta.is_normal() && delta > 0.0) {
        return Err(Error::Numerical {
            what: "default delta = 1/(n·T) underflows",
            value: delta,
        });
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::error_name;
    use crate::math::normal::sf;

    // Reference values computed with mpmath at 40 digits:
    // Φ⁻¹(1 − 1e-5) = 4.264890793922824628…
    const Z_1E5: f64 = 4.264_890_793_922_825;

    #[test]
    fn guo22_thm4_step_epsilon_units_poisson_1_over_sigma_fixed_2_over_sigma() {
        // A wrong sensitivity (σ vs σC, the GELU factor, 1 vs 2) changes ε by ≥ 10 %;
        // tolerance 1e-13 absolute covers the 32ε rounding nudge at ε ≈ 10.
        let mu = step_mu(1.0, Adjacency::AddRemove).unwrap();
        assert_eq!(mu, 1.0f64.next_up());
        let e = step_epsilon(mu, 1e-5).unwrap();
        assert!((e - (Z_1E5 + 0.5)).abs() < 1e-13, "{e}");
        let mu = step_mu(1.0, Adjacency::ReplaceOne).unwrap();
        let e = step_epsilon(mu, 1e-5).unwrap();
        assert!((e - 10.529_781_587_845_65).abs() < 1e-13, "{e}");
        // σ = 2, replace-one: μ = 1 again.
        let e2 = step_epsilon(step_mu(2.0, Adjacency::ReplaceOne).unwrap(), 1e-5).unwrap();
        assert!((e2 - (Z_1E5 + 0.5)).abs() < 1e-13, "{e2}");
        // μ = 0.5, δ = 1e-6 (mpmath: 2.501712154411449474…); rounded up by 32ε relative
        // (1.8e-14 here), so the value lies in [want − 1e-15, want + 3e-14].
        let e3 = step_epsilon(0.5, 1e-6).unwrap();
        let want = 2.501_712_154_411_449_5;
        assert!(e3 >= want - 1e-15 && e3 - want < 3e-14, "{e3}");
    }

    #[test]
    fn guo22_thm4_step_epsilon_is_the_delta_tail_of_the_privacy_loss() {
        // P[N(μ²/2, μ²) > ε] = Φ̄((ε − μ²/2)/μ) must equal δ and never exceed it. The 32ε
        // upward nudge moves the argument x by ≤ 32ε·ε/μ ≲ 6e-14 here, i.e. the tail by a
        // relative x·Δx ≲ 5e-13; tolerance 1e-10 relative.
        for &mu in &[0.05, 0.3, 1.0, 2.0, 8.0] {
            for &delta in &[0.3, 1e-3, 1e-5, 1e-9, 1e-15] {
                let e = step_epsilon(mu, delta).unwrap();
                let tail = sf((e - 0.5 * mu * mu) / mu);
                assert!(
                    tail <= delta * (1.0 + 1e-12),
                    "mu {mu} delta {delta}: {tail}"
                );
                if e > 0.0 {
                    assert!(
                        (tail - delta).abs() <= 1e-10 * delta,
                        "mu {mu} delta {delta}: {tail}"
                    );
                }
                // Hockey-stick δ(ε) ≤ P[L > ε]: the analytic δ at this ε is at most δ.
                let hs = crate::accounting::gaussian::analytic_delta(e, mu).unwrap();
                assert!(hs <= delta, "mu {mu} delta {delta}: {hs}");
            }
        }
    }

    #[test]
    fn guo22_alg1_line4_classical_epsilon_and_exact_tail_is_smaller_when_valid() {
        // 1.115·2·√(2 ln(1.25e5)) = 10.8039157356100184… (mpmath).
        let c = classical_step_epsilon(2.0 * 1.115, 1e-5).unwrap();
        assert!((c - 10.803_915_735_610_018).abs() < 1e-12, "{c}");
        for &delta in &[1e-3, 1e-5, 1e-8] {
            for i in 1..200 {
                let mu = i as f64 * 0.005;
                let c = classical_step_epsilon(mu, delta).unwrap();
                if c < 1.0 {
                    let e = step_epsilon(mu, delta).unwrap();
                    assert!(e <= c, "mu {mu} delta {delta}: {e} > {c}");
                }
            }
        }
    }

    #[test]
    fn guo22_eq3_kappa_values() {
        // mpmath references; the result is rounded up by 16ε relative: it must lie in
        // [want, want + 5e-15] (values ≤ 1). A wrong formula moves κ by ≫ 1e-14.
        let cases = [
            (0.01, 1.0, 0.026_723_630_989_395_224),
            (0.004, 10.5, 0.993_190_116_594_273_3),
            (0.5, 0.1, 0.524_979_187_478_940),
            (1e-6, 30.0, 0.999_999_906_423_872_6),
        ];
        for (q, e, want) in cases {
            let k = kappa(q, e).unwrap();
            assert!(k >= want - 1e-16 && k - want < 5e-15, "q {q} eps {e}: {k}");
        }
        assert_eq!(kappa(1.0, 0.0).unwrap(), 1.0);
        assert_eq!(kappa(1.0, 50.0).unwrap(), 1.0);
        // ε = 0: κ = q (rounded up by ≤ 16ε).
        let k = kappa(0.25, 0.0).unwrap();
        assert!((0.25..0.25 * (1.0 + 1e-14)).contains(&k));
        // Large ε: κ → 1 but never above.
        assert_eq!(kappa(0.5, 800.0).unwrap(), 1.0);
    }

    #[test]
    fn default_delta_is_one_over_n_t_rounded_down() {
        let d = default_delta(60_000, 5_000).unwrap();
        assert!(d <= 1.0 / 3e8 && d > (1.0 / 3e8) * (1.0 - 1e-15));
        assert_eq!(
            error_name(default_delta(1, 10).unwrap_err()),
            "dataset_size"
        );
        assert_eq!(error_name(default_delta(10, 0).unwrap_err()), "steps");
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(
            error_name(step_mu(-1.0, Adjacency::AddRemove).unwrap_err()),
            "noise_multiplier"
        );
        assert_eq!(
            error_name(step_mu(f64::NAN, Adjacency::AddRemove).unwrap_err()),
            "noise_multiplier"
        );
        assert_eq!(error_name(step_epsilon(0.0, 0.1).unwrap_err()), "mu");
        assert_eq!(error_name(step_epsilon(1.0, 0.0).unwrap_err()), "delta");
        assert_eq!(error_name(step_epsilon(1.0, 1.0).unwrap_err()), "delta");
        assert_eq!(
            error_name(classical_step_epsilon(1.0, 2.0).unwrap_err()),
            "delta"
        );
        assert_eq!(error_name(kappa(0.0, 1.0).unwrap_err()), "sampling_rate");
        assert_eq!(error_name(kappa(1.5, 1.0).unwrap_err()), "sampling_rate");
        assert_eq!(error_name(kappa(0.5, -1.0).unwrap_err()), "epsilon");
        assert_eq!(
            error_name(kappa(0.5, f64::INFINITY).unwrap_err()),
            "epsilon"
        );
        assert!(matches!(
            step_mu(1e-320, Adjacency::ReplaceOne),
            Err(Error::Numerical { .. })
        ));
    }
}
