//! Guo et al. 2022, Thm 2: mean squared error lower bounds for reconstruction attacks from
//! the Fisher information I = I_h(z) of the release about the target z ∈ ℝ^d.
//!
//! With MSE := E‖ẑ(h) − z‖²/d:
//!
//! - any attack with mean μ(z): MSE ≥ Tr(J_μ I⁻¹ J_μᵀ)/d + ‖μ(z) − z‖²/d ([`biased_mse_bound`]);
//! - an unbiased attack: MSE ≥ Tr(I⁻¹)/d ≥ d/Tr(I) ([`unbiased_mse_bound`]) ≥ 1/‖I‖₂
//!   ([`spectral_mse_bound`]).
//!
//! Every bound is rounded down from the computed inputs; ‖I‖₂ is certified from above
//! ([`spectral_norm_upper`]).

use crate::error::{check_count, check_non_negative, check_positive, check_result, Error, Result};
use crate::math::linalg::{cholesky_in_place, cholesky_solve, gershgorin_upper, power_iteration};
use crate::rng::Rng;
use alloc::vec::Vec;

const EPS: f64 = f64::EPSILON;
const U: f64 = 0.5 * f64::EPSILON;

/// γ_k = k·u/(1 − k·u) (Higham's rounding-error constant; u = ε/2).
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U;
    ku / (1.0 - ku)
}

fn check_d(d: usize) -> Result<f64> {
    check_count("d", d as u64, 1, ">= 1")?;
    Ok(d as f64)
}

/// A finite `d × d` matrix named `name` (length checked against d²).
fn check_square(name: &'static str, what: &'static str, m: &[f64], d: usize) -> Result<()> {
    if d.checked_mul(d) != Some(m.len()) {
        return Err(Error::Inconsistent {
            what,
            value: m.len() as f64,
        });
    }
    if let Some(&bad) = m.iter().find(|x| !x.is_finite()) {
        return Err(Error::InvalidParameter {
            name,
            value: bad,
            expected: "finite entries",
        });
    }
    Ok(())
}

/// A finite, exactly symmetric d × d Fisher matrix.
fn check_fisher(fisher: &[f64], d: usize) -> Result<()> {
    check_square("fisher", "fisher.len() must equal d * d", fisher, d)?;
    for i in 0..d {
        for j in 0..i {
            let (a, b) = (fisher.get(i * d + j), fisher.get(j * d + i));
            if a != b {
                return Err(Error::Inconsistent {
                    what: "the Fisher matrix must be exactly symmetric (fisher[i*d + j] == fisher[j*d + i])",
                    value: (i * d + j) as f64,
                });
            }
        }
    }
    Ok(())
}

/// x rounded down to the next double (x ≥ 0 computed by one correctly rounded operation
/// stays a lower bound of the exact value); never below 0.
fn down(x: f64) -> f64 {
    if x > 0.0 {
        x.next_down().max(0.0)
    } else {
        0.0
    }
}

/// Guo Thm 2 for an unbiased attack: MSE ≥ d/Tr(I), rounded down.
///
/// # Formula
///
/// E‖ẑ(h) − z‖²/d ≥ Tr(I⁻¹)/d ≥ d/Tr(I) (Cauchy–Schwarz) = 1/η̄², η̄² = Tr(I)/d the dFIL.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 2 and its proof (App. B),
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `trace` unless finite and > 0 (zero information gives no
/// bound); [`Error::InvalidCount`] `d` if 0; [`Error::Numerical`] if d/trace overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::unbiased_mse_bound;
/// let b = unbiased_mse_bound(4.0, 2)?;
/// assert!(b <= 0.5 && b > 0.5 * (1.0 - 1e-15));
/// assert!(unbiased_mse_bound(0.0, 2).is_err());
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn unbiased_mse_bound(trace: f64, d: usize) -> Result<f64> {
    let t = check_positive("trace", trace)?;
    let df = check_d(d)?;
    let r = check_result("d / trace overflows", df / t)?;
    Ok(down(r))
}

/// The dFIL η̄² = Tr(I)/d (Guo §7.1): the average diagonal Fisher information.
///
/// # Formula
///
/// η̄² = Tr(I)/d; Thm 2 gives MSE ≥ 1/η̄² for unbiased attacks.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, §7.1 and Thm 2,
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `trace` unless finite and ≥ 0; [`Error::InvalidCount`] `d` if 0.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::dfil;
/// assert_eq!(dfil(3.0, 4)?, 0.75);
/// assert_eq!(dfil(0.0, 4)?, 0.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn dfil(trace: f64, d: usize) -> Result<f64> {
    let t = check_non_negative("trace", trace)?;
    let df = check_d(d)?;
    Ok(t / df)
}

/// A certified upper bound on ‖I‖₂ = λ_max of the symmetric positive semidefinite d × d
/// matrix `fisher` (row-major).
///
/// # Formula
///
/// Power iteration ([`power_iteration`], fixed pseudo-random start) gives λ₀ ≤ λ_max
/// (also λ₀ ≥ max_i I_ii); for λ̂ = λ₀(1 + τ), τ = 4(d + 1)u·8^j, j = 0, 1, …, the Cholesky
/// factorisation of M̃ = fl(λ̂·I − A) is attempted. When it succeeds, the computed factor
/// satisfies L̂L̂ᵀ = M̃ + ΔM with ‖ΔM‖₂ ≤ γ_{d+1}‖L̂‖_F² (Higham, Thm 10.3), and
/// ‖M̃ − (λ̂I − A)‖₂ ≤ u(λ̂ + max_i|A_ii|), so
/// λ_max ≤ λ̂ + u(λ̂ + max_i|A_ii|) + γ_{d+1}‖L̂‖_F²(1 + (d² + 2)u), rounded up. The result is
/// never above the Gershgorin bound max_i Σ_j |A_ij| ([`gershgorin_upper`]), which is returned
/// if certification fails. For d ≤ 1024 and a well separated top eigenvalue the bound is
/// within ~1e-10 relative of λ_max. A zero matrix gives 0.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 2 (η² = ‖I‖₂),
/// `guo2022-bounding-reconstruction-fil-rdp.txt`; Higham, *Accuracy and Stability of
/// Numerical Algorithms*, 2nd ed., Thm 10.3 (backward error of Cholesky).
///
/// # Errors
///
/// [`Error::InvalidCount`] `d` if 0; [`Error::Inconsistent`] if `fisher.len() != d²` or the
/// matrix is not exactly symmetric; [`Error::InvalidParameter`] `fisher` if an entry is not
/// finite; [`Error::Numerical`] if the bound overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::spectral_norm_upper;
/// let l = spectral_norm_upper(&[2.0, 1.0, 1.0, 2.0], 2)?; // eigenvalues 3, 1
/// assert!(l >= 3.0 && l < 3.0 * (1.0 + 1e-12));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn spectral_norm_upper(fisher: &[f64], d: usize) -> Result<f64> {
    check_d(d)?;
    check_fisher(fisher, d)?;
    if fisher.iter().all(|&x| x == 0.0) {
        return Ok(0.0);
    }
    // Every return below is at most g: an overflowing Gershgorin bound is an error here.
    let g = check_result(
        "spectral norm bound overflows",
        gershgorin_upper(fisher, d)?,
    )?;
    let mut rng = Rng::from_seed(0x5bec_7a1e);
    let mut v: Vec<f64> = (0..d).map(|_| rng.gaussian()).collect();
    let mut w = alloc::vec![0.0; d];
    // ~1e9 multiply-adds at most (d = 1024: ~950 iterations).
    let dd = (d * d) as f64;
    let max_iter = (1e9 / dd).clamp(500.0, 10_000.0) as usize;
    let rq = power_iteration(fisher, d, &mut v, &mut w, max_iter)?;
    let diag_max = (0..d)
        .filter_map(|i| fisher.get(i * d + i))
        .fold(f64::NEG_INFINITY, |m, &x| m.max(x));
    let diag_abs = (0..d)
        .filter_map(|i| fisher.get(i * d + i))
        .fold(0.0f64, |m, &x| m.max(libm::fabs(x)));
    let mut base = rq.max(diag_max);
    if base.is_nan() || base <= 0.0 {
        // Not positive semidefinite with a positive top eigenvalue found: start from the
        // Gershgorin bound's scale.
        base = g * 1e-3;
    }
    let mut m = alloc::vec![0.0; d * d];
    let mut tau = 4.0 * (d as f64 + 1.0) * U;
    for _ in 0..40 {
        let lh = base * (1.0 + tau);
        if lh.is_nan() || lh >= g {
            return Ok(g);
        }
        for ((mi, &ai), k) in m.iter_mut().zip(fisher).zip(0..) {
            *mi = if k / d == k % d { lh - ai } else { -ai };
        }
        if cholesky_in_place(&mut m, d).is_ok() {
            let fro: f64 = m.iter().map(|x| x * x).sum::<f64>() * (1.0 + (dd + 2.0) * U);
            let err = U * (lh + diag_abs) + gamma(d + 1) * fro;
            let bound = ((lh + err) * (1.0 + 4.0 * EPS)).next_up();
            let bound = check_result("spectral norm bound overflows", bound)?;
            return Ok(bound.min(g));
        }
        tau *= 8.0;
    }
    Ok(g)
}

/// Guo Thm 2, last inequality: MSE ≥ 1/‖I‖₂ = 1/η² for an unbiased attack, with ‖I‖₂ from
/// [`spectral_norm_upper`] (certified from above), rounded down. Weaker than
/// [`unbiased_mse_bound`] (d/Tr(I) ≥ 1/‖I‖₂) but it is the FIL η² of Hannun et al.
///
/// # Formula
///
/// MSE ≥ d/Tr(I) ≥ 1/η², η² = ‖I‖₂ = λ_max(I).
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 2, `guo2022-bounding-reconstruction-fil-rdp.txt`;
/// Hannun, Guo, van der Maaten 2021 (FIL η).
///
/// # Errors
///
/// As [`spectral_norm_upper`]; [`Error::InvalidParameter`] `fisher` if the matrix is zero (no
/// information: no bound); [`Error::Numerical`] if 1/‖I‖₂ overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::spectral_mse_bound;
/// let b = spectral_mse_bound(&[2.0, 1.0, 1.0, 2.0], 2)?;
/// assert!(b <= 1.0 / 3.0 && b > (1.0 / 3.0) * (1.0 - 1e-12));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn spectral_mse_bound(fisher: &[f64], d: usize) -> Result<f64> {
    let l = spectral_norm_upper(fisher, d)?;
    if l <= 0.0 {
        return Err(Error::InvalidParameter {
            name: "fisher",
            value: l,
            expected: "a nonzero matrix (zero Fisher information gives no bound)",
        });
    }
    let r = check_result("1 / spectral norm overflows", 1.0 / l)?;
    Ok(down(r))
}

/// Guo Thm 2 for an attack with mean μ(z): MSE ≥ Tr(J_μ I⁻¹ J_μᵀ)/d + ‖μ(z) − z‖²/d, rounded
/// down.
///
/// `fisher` is I (d × d, row-major, symmetric positive definite), `estimator_jacobian` is
/// J_μ = ∂μ/∂z (d × d, row-major: row r is ∂μ_r/∂z) and `bias` is μ(z) − z (length d).
///
/// # Formula
///
/// The variance term is evaluated in a form that is a lower bound for any approximation:
/// for each row j_r of J_μ, x_r ≈ I⁻¹j_r by Cholesky, and
/// j_rᵀI⁻¹j_r = max_x (2 j_rᵀx − xᵀIx) ≥ 2 j_rᵀx_r − x_rᵀI x_r (equality at the exact
/// solution, error quadratic in the solve's error). The floating-point evaluation of the right
/// side is bounded by γ_{2d+8}(2Σ|j_r,i x_r,i| + Σ_i |x_r,i| Σ_k |I_ik||x_r,k|) and
/// subtracted, so the result stays a lower bound however ill-conditioned I is.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Thm 2 (via the Cramér–Rao bound,
/// Thm A.2), `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidCount`] `d` if 0; [`Error::Inconsistent`] if a length is wrong or `fisher`
/// is not exactly symmetric; [`Error::InvalidParameter`] `fisher`, `estimator_jacobian`,
/// `bias` if an entry is not finite; [`Error::Numerical`] if the Fisher matrix is singular or
/// not positive definite (Cholesky fails), or a result overflows.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::biased_mse_bound;
/// // I = [[2, 1], [1, 2]], unbiased (J_μ = identity, no bias): Tr(I⁻¹)/d = (4/3)/2.
/// let b = biased_mse_bound(&[2.0, 1.0, 1.0, 2.0], 2, &[1.0, 0.0, 0.0, 1.0], &[0.0, 0.0])?;
/// assert!(b <= 2.0 / 3.0 && b > (2.0 / 3.0) * (1.0 - 1e-13));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn biased_mse_bound(
    fisher: &[f64],
    d: usize,
    estimator_jacobian: &[f64],
    bias: &[f64],
) -> Result<f64> {
    let df = check_d(d)?;
    check_fisher(fisher, d)?;
    check_square(
        "estimator_jacobian",
        "estimator_jacobian.len() must equal d * d",
        estimator_jacobian,
        d,
    )?;
    if bias.len() != d {
        return Err(Error::Inconsistent {
            what: "bias.len() must equal d",
            value: bias.len() as f64,
        });
    }
    if let Some(&bad) = bias.iter().find(|x| !x.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "bias",
            value: bad,
            expected: "finite entries",
        });
    }
    let mut l = fisher.to_vec();
    cholesky_in_place(&mut l, d).map_err(|e| Error::Numerical {
        what: "biased_mse_bound: the Fisher matrix is singular or not positive definite (Cholesky failed)",
        value: match e {
            Error::Numerical { value, .. } => value,
            _ => f64::NAN,
        },
    })?;
    let g = gamma(2 * d + 8);
    let mut x = alloc::vec![0.0; d];
    let (mut total, mut err, mut abs_total) = (0.0f64, 0.0f64, 0.0f64);
    for j in estimator_jacobian.chunks_exact(d) {
        x.copy_from_slice(j);
        cholesky_solve(&l, d, &mut x)?;
        let (mut jx, mut jx_abs) = (0.0, 0.0);
        for (a, b) in j.iter().zip(&x) {
            jx += a * b;
            jx_abs += libm::fabs(a * b);
        }
        let (mut xix, mut xix_abs) = (0.0, 0.0);
        for (row, &xi) in fisher.chunks_exact(d).zip(&x) {
            let (mut y, mut y_abs) = (0.0, 0.0);
            for (a, b) in row.iter().zip(&x) {
                y += a * b;
                y_abs += libm::fabs(a * b);
            }
            xix += xi * y;
            xix_abs += libm::fabs(xi) * y_abs;
        }
        let f = 2.0 * jx - xix;
        total += f;
        abs_total += libm::fabs(f);
        err += g * (2.0 * jx_abs + xix_abs);
    }
    err += gamma(d + 2) * abs_total;
    let variance = check_result("biased bound: variance term overflows", total - err)?;
    let variance = down(down(variance.max(0.0)) / df);
    let bias_sq: f64 = bias.iter().map(|b| b * b).sum();
    let bias_sq = check_result("biased bound: squared bias overflows", bias_sq)?;
    let bias_term = down(down(bias_sq * (1.0 - gamma(d + 2))) / df);
    check_result("biased MSE bound overflows", down(variance + bias_term))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::error_name;
    use alloc::vec;

    /// Q·diag(λ)·Qᵀ with a Householder Q: a symmetric matrix with spectrum λ (to a few ulps).
    fn with_spectrum(lambda: &[f64], seed: u64) -> Vec<f64> {
        let n = lambda.len();
        let mut rng = Rng::from_seed(seed);
        let u: Vec<f64> = (0..n).map(|_| rng.gaussian()).collect();
        let uu: f64 = u.iter().map(|x| x * x).sum();
        let q = |i: usize, j: usize| f64::from(u8::from(i == j)) - 2.0 * u[i] * u[j] / uu;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..n).map(|k| q(i, k) * lambda[k] * q(j, k)).sum();
                a[i * n + j] = s;
                a[j * n + i] = s;
            }
        }
        a
    }

    #[test]
    fn guo22_thm2_two_by_two_with_known_eigenvalues() {
        // I = [[2, 1], [1, 2]]: eigenvalues 3 and 1, Tr = 4, Tr(I⁻¹) = 4/3.
        let i = [2.0, 1.0, 1.0, 2.0];
        let l = spectral_norm_upper(&i, 2).unwrap();
        assert!((3.0..3.0 * (1.0 + 1e-13)).contains(&l), "{l}");
        let spectral = spectral_mse_bound(&i, 2).unwrap();
        let unbiased = unbiased_mse_bound(4.0, 2).unwrap();
        let biased = biased_mse_bound(&i, 2, &[1.0, 0.0, 0.0, 1.0], &[0.0; 2]).unwrap();
        // Each rounded down by at most a few ulps (relative 1e-13).
        assert!(spectral <= 1.0 / 3.0 && spectral > (1.0 / 3.0) * (1.0 - 1e-13));
        assert!(unbiased <= 0.5 && unbiased > 0.5 * (1.0 - 1e-15));
        assert!(
            biased <= 2.0 / 3.0 && biased > (2.0 / 3.0) * (1.0 - 1e-13),
            "{biased}"
        );
        // Thm 2's chain for unbiased attacks: 1/η² ≤ d/Tr(I) ≤ Tr(I⁻¹)/d.
        assert!(spectral <= unbiased && unbiased <= biased);
        assert_eq!(dfil(4.0, 2).unwrap(), 2.0);
    }

    #[test]
    fn guo22_thm2_biased_bound_scaling_and_bias_term() {
        // J_μ = c·I, bias b: c²·Tr(I⁻¹)/d + ‖b‖²/d. I = diag(1, 4, 0.5): Tr(I⁻¹) = 3.25.
        let i = [1.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.5];
        let c = 0.5;
        let j = [c, 0.0, 0.0, 0.0, c, 0.0, 0.0, 0.0, c];
        let b = [0.3, -0.4, 1.2];
        let want = (c * c * 3.25 + (0.09 + 0.16 + 1.44)) / 3.0;
        let got = biased_mse_bound(&i, 3, &j, &b).unwrap();
        assert!(got <= want && got > want * (1.0 - 1e-14), "{got} vs {want}");
        // A general J_μ against the explicit inverse of a diagonal I.
        let j = [1.0, 2.0, 0.0, 0.0, 1.0, -1.0, 3.0, 0.0, 1.0];
        let inv = [1.0, 0.25, 2.0];
        let want: f64 = (0..3)
            .map(|r| {
                (0..3)
                    .map(|k| j[r * 3 + k] * j[r * 3 + k] * inv[k])
                    .sum::<f64>()
            })
            .sum::<f64>()
            / 3.0;
        let got = biased_mse_bound(&i, 3, &j, &[0.0; 3]).unwrap();
        assert!(got <= want && got > want * (1.0 - 1e-14), "{got} vs {want}");
    }

    #[test]
    fn spectral_norm_upper_is_certified_and_tight_on_known_spectra() {
        // ≥ λ_max always; within 1e-9 relative (the brief's tolerance; the construction of
        // the matrix moves its spectrum by ~n ulps, far below).
        let cases: [(Vec<f64>, u64); 6] = [
            (vec![5.0], 1),
            (vec![3.0, 1.0], 2),
            (vec![1.0, 0.999, 0.5, 0.0, 0.0], 3),
            (vec![7.0, 7.0, 1e-3, 2.0], 4),
            ((0..40).map(|k| 1.0 / (1.0 + k as f64)).collect(), 5),
            (
                (0..200)
                    .map(|k| if k == 7 { 1e3 } else { (k % 13) as f64 })
                    .collect(),
                6,
            ),
        ];
        for (spec, seed) in cases {
            let n = spec.len();
            let a = with_spectrum(&spec, seed);
            let top = spec.iter().copied().fold(0.0, f64::max);
            let l = spectral_norm_upper(&a, n).unwrap();
            // The matrix's true top eigenvalue differs from `top` by ≲ n·ε·top.
            let slack = 4.0 * n as f64 * f64::EPSILON * top;
            assert!(l >= top - slack, "n {n}: {l} < {top}");
            assert!(l <= top * (1.0 + 1e-9), "n {n}: {l} vs {top}");
            // Rank deficient: the biased bound needs I⁻¹ (errors), the unbiased one does not.
        }
        // Singular PSD matrix.
        let a = with_spectrum(&[2.0, 0.0, 0.0], 9);
        assert!(spectral_norm_upper(&a, 3).unwrap() >= 2.0 - 1e-14);
        assert!(matches!(
            biased_mse_bound(&[1.0, 1.0, 1.0, 1.0], 2, &[1.0, 0.0, 0.0, 1.0], &[0.0; 2]),
            Err(Error::Numerical { .. })
        ));
        assert_eq!(spectral_norm_upper(&[0.0; 4], 2).unwrap(), 0.0);
        assert_eq!(
            error_name(spectral_mse_bound(&[0.0; 4], 2).unwrap_err()),
            "fisher"
        );
    }

    #[test]
    fn biased_bound_is_a_lower_bound_on_ill_conditioned_matrices() {
        // Condition number 1e12: the exact Tr(I⁻¹)/d is dominated by the small eigenvalues;
        // the certified evaluation must not exceed it (relative slack only for the
        // construction, ~n ulps of the largest eigenvalue, relative to 1/λ_min: 1e-3 here).
        let spec = [1e6, 1.0, 1e-6, 3.0];
        let a = with_spectrum(&spec, 11);
        let mut ident = vec![0.0; 16];
        for k in 0..4 {
            ident[k * 5] = 1.0;
        }
        let want: f64 = spec.iter().map(|l| 1.0 / l).sum::<f64>() / 4.0;
        let got = biased_mse_bound(&a, 4, &ident, &[0.0; 4]).unwrap();
        assert!(
            got <= want * (1.0 + 1e-3) && got > want * 0.99,
            "{got} vs {want}"
        );
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(error_name(unbiased_mse_bound(0.0, 3).unwrap_err()), "trace");
        assert_eq!(
            error_name(unbiased_mse_bound(f64::NAN, 3).unwrap_err()),
            "trace"
        );
        assert_eq!(error_name(unbiased_mse_bound(1.0, 0).unwrap_err()), "d");
        assert_eq!(error_name(dfil(-1.0, 3).unwrap_err()), "trace");
        assert_eq!(error_name(dfil(1.0, 0).unwrap_err()), "d");
        assert_eq!(error_name(spectral_norm_upper(&[1.0], 0).unwrap_err()), "d");
        assert_eq!(
            error_name(spectral_norm_upper(&[1.0, 2.0], 2).unwrap_err()),
            "inconsistent"
        );
        assert_eq!(
            error_name(spectral_norm_upper(&[1.0, 2.0, 2.5, 1.0], 2).unwrap_err()),
            "inconsistent"
        );
        assert_eq!(
            error_name(spectral_norm_upper(&[f64::NAN], 1).unwrap_err()),
            "fisher"
        );
        let i = [2.0, 1.0, 1.0, 2.0];
        assert_eq!(
            error_name(
                biased_mse_bound(&i, 2, &[1.0, f64::INFINITY, 0.0, 1.0], &[0.0; 2]).unwrap_err()
            ),
            "estimator_jacobian"
        );
        assert_eq!(
            error_name(
                biased_mse_bound(&i, 2, &[1.0, 0.0, 0.0, 1.0], &[f64::NAN, 0.0]).unwrap_err()
            ),
            "bias"
        );
        assert_eq!(
            error_name(biased_mse_bound(&i, 2, &[1.0, 0.0, 0.0, 1.0], &[0.0]).unwrap_err()),
            "inconsistent"
        );
        // Overflow is an error, never infinity.
        assert!(unbiased_mse_bound(1e-310, 10).is_err());
    }
}
