//! Small dense linear algebra on caller-owned row-major slices (no allocation): Cholesky
//! factorisation of a symmetric positive definite matrix and the solve with its factor
//! (the Newton step of logistic regression).

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
}
