//! Small dense linear algebra on caller-owned row-major slices (no allocation): Cholesky
//! factorisation of a symmetric positive definite matrix and the solve with its factor
//! (the Newton step of logistic regression), and the largest eigenvalue of a symmetric matrix
//! by power iteration with a Gershgorin bound (the spectral norm of a Fisher information
//! matrix, certified in [`crate::accounting::fil::bounds::spectral_norm_upper`]).

use crate::error::{Error, Result};

fn check_square(what: &'static str, a: &[f64], n: usize) -> Result<()> {
    if n == 0 || n.checked_mul(n) != Some(a.len()) {
        return Err(Error::Inconsistent {
            what,
            value: a.len() as f64,
        });
    }
    Ok(())
}

/// Factors the symmetric positive definite n × n matrix `a` (row-major; only the lower
/// triangle, entries (i, j) with j ≤ i, is read) in place into its Cholesky factor L
/// (A = L·Lᵀ, L lower triangular with positive diagonal). The strict upper triangle is set
/// to 0.
///
/// # Formula
///
/// L_jj = √(A_jj − Σ_{k<j} L_jk²), L_ij = (A_ij − Σ_{k<j} L_ik L_jk)/L_jj for i > j
/// (Cholesky–Banachiewicz, row by row; sums in index order, so results are deterministic).
///
/// # Citations
///
/// Golub & Van Loan, *Matrix Computations*, 4th ed., Alg. 4.2.1.
///
/// # Errors
///
/// [`Error::Inconsistent`] if n = 0 or `a.len() != n²`; [`Error::Numerical`] if a pivot is
/// not finite and > 0 (the matrix is not numerically positive definite, or has a NaN).
///
/// # Examples
///
/// ```
/// use reconbound::math::linalg::cholesky_in_place;
/// let mut a = [4.0, 0.0, 2.0, 5.0]; // [[4, 2], [2, 5]] (upper entry ignored)
/// cholesky_in_place(&mut a, 2)?;
/// assert_eq!(a, [2.0, 0.0, 1.0, 2.0]);
/// assert!(cholesky_in_place(&mut [1.0, 0.0, 2.0, 1.0], 2).is_err()); // indefinite
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn cholesky_in_place(a: &mut [f64], n: usize) -> Result<()> {
    check_square("a.len() must equal n * n, n >= 1", a, n)?;
    for i in 0..n {
        let (done, rest) = a.split_at_mut(i * n);
        let row_i = rest.get_mut(..n).unwrap_or(&mut []);
        for j in 0..=i {
            let row_j: &[f64] = if j < i {
                done.get(j * n..j * n + n).unwrap_or(&[])
            } else {
                &[]
            };
            let mut s = row_i.get(j).copied().unwrap_or(f64::NAN);
            if j < i {
                for (x, y) in row_i.iter().zip(row_j).take(j) {
                    s -= x * y;
                }
                let d = row_j.get(j).copied().unwrap_or(f64::NAN);
                if let Some(v) = row_i.get_mut(j) {
                    *v = s / d;
                }
            } else {
                for x in row_i.iter().take(i) {
                    s -= x * x;
                }
                if !(s.is_finite() && s > 0.0) {
                    return Err(Error::Numerical {
                        what: "Cholesky: the matrix is not numerically positive definite",
                        value: s,
                    });
                }
                if let Some(v) = row_i.get_mut(i) {
                    *v = libm::sqrt(s);
                }
            }
        }
        for v in row_i.iter_mut().skip(i + 1) {
            *v = 0.0;
        }
    }
    Ok(())
}

/// Solves L·Lᵀ·x = b in place (`b` becomes x), with L from [`cholesky_in_place`].
///
/// # Formula
///
/// Forward substitution L·y = b, then back substitution Lᵀ·x = y.
///
/// # Errors
///
/// [`Error::Inconsistent`] if `l.len() != n²` or `b.len() != n`; [`Error::Numerical`] if the
/// solution is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::math::linalg::{cholesky_in_place, cholesky_solve};
/// let mut a = [4.0, 2.0, 2.0, 5.0];
/// cholesky_in_place(&mut a, 2)?;
/// let mut b = [6.0, 7.0]; // A·(1, 1)
/// cholesky_solve(&a, 2, &mut b)?;
/// assert!((b[0] - 1.0).abs() < 1e-15 && (b[1] - 1.0).abs() < 1e-15);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) -> Result<()> {
    check_square("l.len() must equal n * n, n >= 1", l, n)?;
    if b.len() != n {
        return Err(Error::Inconsistent {
            what: "b.len() must equal n",
            value: b.len() as f64,
        });
    }
    // L·y = b.
    for (i, row) in l.chunks_exact(n).enumerate() {
        let mut s = b.get(i).copied().unwrap_or(f64::NAN);
        for (x, y) in row.iter().zip(b.iter()).take(i) {
            s -= x * y;
        }
        let d = row.get(i).copied().unwrap_or(f64::NAN);
        if let Some(v) = b.get_mut(i) {
            *v = s / d;
        }
    }
    // Lᵀ·x = y, columns of L read as rows of Lᵀ.
    for i in (0..n).rev() {
        let mut s = b.get(i).copied().unwrap_or(f64::NAN);
        for k in (i + 1)..n {
            s -= l.get(k * n + i).copied().unwrap_or(f64::NAN) * b.get(k).copied().unwrap_or(0.0);
        }
        let d = l.get(i * n + i).copied().unwrap_or(f64::NAN);
        if let Some(v) = b.get_mut(i) {
            *v = s / d;
        }
    }
    if let Some(&bad) = b.iter().find(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what: "Cholesky solve: non-finite solution",
            value: bad,
        });
    }
    Ok(())
}

/// An estimate of the largest eigenvalue λ_max of the symmetric n × n matrix `a` (row-major)
/// by power iteration: the Rayleigh quotient vᵀAv of the last iterate. Not a bound by
/// itself (it approaches λ_max from below for positive semidefinite `a`); certify it, e.g. by
/// a Cholesky factorisation of λ̂·I − A.
///
/// `v` is the start vector on entry (any vector not orthogonal to the top eigenvector, e.g.
/// a fixed pseudo-random one) and the normalised last iterate on return; `w` is scratch.
///
/// # Formula
///
/// v ← A v / ‖A v‖, λ = vᵀ A v (v of unit norm), until two consecutive relative changes of
/// λ are ≤ 4ε or `max_iter` iterations. For positive semidefinite `a` the error after k steps
/// is O((λ₂/λ_max)^{2k})·λ_max. Sums in index order (deterministic). Symmetry is not checked.
///
/// # Citations
///
/// Golub & Van Loan, *Matrix Computations*, 4th ed., §8.2.1 (the power method).
///
/// # Errors
///
/// [`Error::Inconsistent`] if n = 0 or a slice has the wrong length;
/// [`Error::InvalidParameter`] `v` if the start vector is 0 or not finite; [`Error::Numerical`]
/// if an iterate becomes non-finite (an entry of `a` is not finite).
///
/// # Examples
///
/// ```
/// use reconbound::math::linalg::power_iteration;
/// let a = [2.0, 1.0, 1.0, 2.0]; // eigenvalues 3 and 1
/// let (mut v, mut w) = ([1.0, 0.0], [0.0; 2]);
/// let lambda = power_iteration(&a, 2, &mut v, &mut w, 200)?;
/// assert!((lambda - 3.0).abs() < 1e-14);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn power_iteration(
    a: &[f64],
    n: usize,
    v: &mut [f64],
    w: &mut [f64],
    max_iter: usize,
) -> Result<f64> {
    check_square("a.len() must equal n * n, n >= 1", a, n)?;
    if v.len() != n || w.len() != n {
        return Err(Error::Inconsistent {
            what: "v.len() and w.len() must equal n",
            value: v.len().min(w.len()) as f64,
        });
    }
    let norm = norm2(v);
    if !(norm.is_finite() && norm > 0.0) {
        return Err(Error::InvalidParameter {
            name: "v",
            value: norm,
            expected: "a finite nonzero start vector",
        });
    }
    v.iter_mut().for_each(|x| *x /= norm);
    let mut lambda = f64::NAN;
    let mut quiet = 0;
    for _ in 0..max_iter.max(1) {
        mat_vec(a, n, v, w);
        let rayleigh: f64 = v.iter().zip(w.iter()).map(|(x, y)| x * y).sum();
        let nw = norm2(w);
        if !(rayleigh.is_finite() && nw.is_finite()) {
            return Err(Error::Numerical {
                what: "power iteration: non-finite iterate (a non-finite matrix entry?)",
                value: rayleigh,
            });
        }
        let change = libm::fabs(rayleigh - lambda);
        lambda = rayleigh;
        if nw == 0.0 {
            // A v = 0: v is in the null space; λ = 0 is its Rayleigh quotient.
            break;
        }
        v.iter_mut().zip(w.iter()).for_each(|(x, &y)| *x = y / nw);
        if change <= 4.0 * f64::EPSILON * libm::fabs(lambda) {
            quiet += 1;
            if quiet >= 2 {
                break;
            }
        } else {
            quiet = 0;
        }
    }
    Ok(lambda)
}

/// An upper bound on the spectral radius (the largest |eigenvalue|) of the n × n matrix `a`,
/// hence on λ_max and on ‖A‖₂ of a symmetric matrix: Gershgorin's max_i Σ_j |a_ij|, rounded
/// up.
///
/// # Formula
///
/// ρ(A) ≤ ‖A‖_∞ = max_i Σ_j |a_ij|; each row sum is multiplied by (1 + (n + 2)ε) to cover
/// the rounding of the n additions.
///
/// # Citations
///
/// Golub & Van Loan, *Matrix Computations*, 4th ed., Thm 7.2.1 (Gershgorin) and §2.3.2.
///
/// # Errors
///
/// [`Error::Inconsistent`] if n = 0 or `a.len() != n²`; [`Error::Numerical`] if an entry or
/// the bound is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::math::linalg::gershgorin_upper;
/// let g = gershgorin_upper(&[2.0, -1.0, -1.0, 2.0], 2)?; // eigenvalues 1 and 3
/// assert!(g >= 3.0 && g < 3.0 + 1e-14);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gershgorin_upper(a: &[f64], n: usize) -> Result<f64> {
    check_square("a.len() must equal n * n, n >= 1", a, n)?;
    let slack = 1.0 + (n as f64 + 2.0) * f64::EPSILON;
    let mut bound = 0.0f64;
    for row in a.chunks_exact(n) {
        let s: f64 = row.iter().map(|x| libm::fabs(*x)).sum();
        if !s.is_finite() {
            return Err(Error::Numerical {
                what: "Gershgorin bound: a row sum is not finite",
                value: s,
            });
        }
        bound = bound.max(s * slack);
    }
    Ok(bound)
}

/// w = A v for the n × n row-major `a` (lengths checked by the callers).
fn mat_vec(a: &[f64], n: usize, v: &[f64], w: &mut [f64]) {
    for (wi, row) in w.iter_mut().zip(a.chunks_exact(n)) {
        *wi = row.iter().zip(v.iter()).map(|(x, y)| x * y).sum();
    }
}

/// The Euclidean norm, scaled by the largest entry (no overflow or underflow for finite
/// input); NaN if an entry is not finite.
fn norm2(v: &[f64]) -> f64 {
    let scale = v.iter().fold(0.0f64, |m, x| {
        if x.is_finite() {
            m.max(libm::fabs(*x))
        } else {
            f64::NAN
        }
    });
    if !scale.is_finite() {
        return f64::NAN;
    }
    if scale == 0.0 {
        return 0.0;
    }
    let s: f64 = v.iter().map(|x| (x / scale) * (x / scale)).sum();
    scale * libm::sqrt(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn cholesky_solves_random_spd_systems_to_1e_12() {
        // A = MᵀM + n·I for a random M (well conditioned: κ ≲ 10); the solution of A x = A x*
        // is x* to a few ulps times κ — tolerance 1e-12 relative.
        let mut rng = Rng::from_seed(11);
        for n in [1usize, 2, 5, 17, 40] {
            let m: [f64; 1600] = core::array::from_fn(|_| rng.gaussian());
            let mut a = [0.0; 1600];
            for i in 0..n {
                for j in 0..n {
                    let mut s = if i == j { n as f64 } else { 0.0 };
                    for k in 0..n {
                        s += m[k * n + i] * m[k * n + j];
                    }
                    a[i * n + j] = s;
                }
            }
            let x_star: [f64; 40] = core::array::from_fn(|i| (i as f64) - 3.5);
            let mut b = [0.0; 40];
            for i in 0..n {
                b[i] = (0..n).map(|j| a[i * n + j] * x_star[j]).sum();
            }
            let full = a;
            cholesky_in_place(&mut a[..n * n], n).unwrap();
            // L·Lᵀ reproduces A.
            for i in 0..n {
                for j in 0..n {
                    let s: f64 = (0..n).map(|k| a[i * n + k] * a[j * n + k]).sum();
                    assert!((s - full[i * n + j]).abs() < 1e-12 * n as f64 * n as f64);
                }
            }
            cholesky_solve(&a[..n * n], n, &mut b[..n]).unwrap();
            for i in 0..n {
                assert!(
                    (b[i] - x_star[i]).abs() <= 1e-12 * (1.0 + x_star[i].abs()),
                    "n = {n}, i = {i}: {} vs {}",
                    b[i],
                    x_star[i]
                );
            }
        }
    }

    #[test]
    fn bad_shapes_and_indefinite_matrices_are_errors() {
        assert!(cholesky_in_place(&mut [1.0, 2.0, 3.0], 2).is_err());
        assert!(cholesky_in_place(&mut [], 0).is_err());
        assert!(cholesky_in_place(&mut [0.0], 1).is_err());
        assert!(cholesky_in_place(&mut [f64::NAN], 1).is_err());
        assert!(cholesky_in_place(&mut [-1.0], 1).is_err());
        assert!(cholesky_solve(&[1.0], 1, &mut [1.0, 2.0]).is_err());
        assert!(cholesky_solve(&[0.0], 1, &mut [1.0]).is_err());
    }

    /// Q·diag(λ)·Qᵀ with Q = I − 2uuᵀ/‖u‖² (a Householder reflection, orthogonal and
    /// symmetric), so the spectrum is λ up to a few ulps.
    fn with_spectrum(lambda: &[f64], seed: u64) -> Vec<f64> {
        let n = lambda.len();
        let mut rng = Rng::from_seed(seed);
        let u: Vec<f64> = (0..n).map(|_| rng.gaussian()).collect();
        let uu: f64 = u.iter().map(|x| x * x).sum();
        let q = |i: usize, j: usize| f64::from(u8::from(i == j)) - 2.0 * u[i] * u[j] / uu;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| q(i, k) * lambda[k] * q(j, k)).sum();
            }
        }
        // Exact symmetry (the two orders of the sum may differ in the last bit).
        for i in 0..n {
            for j in 0..i {
                a[j * n + i] = a[i * n + j];
            }
        }
        a
    }

    #[test]
    fn power_iteration_finds_the_top_eigenvalue_of_known_spectra() {
        // Spectra built exactly (up to ~n ulps); well separated and tight (ratio 0.99)
        // tops converge to ~1e-14 relative in ≤ 5000 iterations.
        let cases: [(&[f64], f64); 4] = [
            (&[3.0, 1.0], 3.0),
            (&[0.5, 2.0, 1e-3, 0.0, 1.0], 2.0),
            (&[1.0, 0.99, 0.5, 0.1, 0.0, 0.0], 1.0),
            (&[7.0, 7.0, 1.0], 7.0),
        ];
        for (k, (spec, top)) in cases.iter().enumerate() {
            let n = spec.len();
            let a = with_spectrum(spec, 3 + k as u64);
            let mut v: Vec<f64> = (0..n).map(|i| 1.0 + 0.1 * i as f64).collect();
            let mut w = vec![0.0; n];
            let l = power_iteration(&a, n, &mut v, &mut w, 5000).unwrap();
            assert!((l - top).abs() <= 1e-12 * top, "case {k}: {l} vs {top}");
            let g = gershgorin_upper(&a, n).unwrap();
            assert!(g >= *top, "case {k}: Gershgorin {g} < {top}");
        }
    }

    #[test]
    fn power_iteration_and_gershgorin_reject_bad_input() {
        let (mut v, mut w) = ([0.0; 2], [0.0; 2]);
        assert!(power_iteration(&[1.0, 0.0, 0.0, 1.0], 2, &mut v, &mut w, 10).is_err());
        let mut v = [1.0, f64::NAN];
        assert!(power_iteration(&[1.0, 0.0, 0.0, 1.0], 2, &mut v, &mut w, 10).is_err());
        let mut v = [1.0, 1.0];
        assert!(power_iteration(&[1.0, f64::NAN, 0.0, 1.0], 2, &mut v, &mut w, 10).is_err());
        assert!(power_iteration(&[1.0; 3], 2, &mut v, &mut w, 10).is_err());
        assert!(gershgorin_upper(&[1.0, f64::INFINITY, 0.0, 1.0], 2).is_err());
        assert!(gershgorin_upper(&[], 0).is_err());
        // The zero matrix: λ = 0.
        let mut v = [1.0, 2.0];
        assert_eq!(
            power_iteration(&[0.0; 4], 2, &mut v, &mut w, 10).unwrap(),
            0.0
        );
    }
}
