//! Fisher information of a Gaussian mechanism about its input: h = f(z) + N(0, s²I_p) with
//! z ∈ ℝ^d has I(z) = JᵀJ/s², J = ∂f/∂z (p × d), from the Jacobian's columns J e_i.
//!
//! The columns come from a caller's closure (for DP-SGD: forward-over-reverse JVPs of the
//! clipped gradient, [`crate::nn::Sequential::loss_and_grad_jvp`]), so the p × d Jacobian is
//! never stored: the trace needs one column at a time, the full matrix a block of columns
//! bounded by [`GRAM_BLOCK_BYTES`] (columns of later blocks are requested again, once per
//! earlier block).

use crate::error::{check_count, check_positive, Error, Result};
use alloc::vec::Vec;

/// Memory budget of the block of Jacobian columns kept by [`gaussian_fisher_matrix`]
/// (32 MiB): min(d, ⌊budget/(8p)⌋ rounded down to a multiple of 8, at least 8) columns. If
/// all d columns fit, every column is requested once; otherwise columns after the first block
/// are requested ⌈d/m⌉ − 1 more times at most.
pub const GRAM_BLOCK_BYTES: usize = 32 << 20;

/// Columns requested at a time outside the stored block (the JVP lanes of one pass).
pub(crate) const CHUNK: usize = 8;

/// Reusable buffers of [`gram_into`]: the stored block and one chunk of columns.
#[derive(Clone, Debug, Default)]
pub(crate) struct GramWork {
    block: Vec<f64>,
    chunk: Vec<f64>,
}

/// Validates s and returns s² (a normal `f64`).
pub(crate) fn noise_variance(noise_std: f64) -> Result<f64> {
    let s = check_positive("noise_std", noise_std)?;
    let s2 = s * s;
    if !s2.is_normal() {
        return Err(Error::InvalidParameter {
            name: "noise_std",
            value: s,
            expected: "finite and > 0 with noise_std² a normal f64 (about 1.5e-154 to 1.3e154)",
        });
    }
    Ok(s2)
}

fn check_dims(p: usize, d: usize) -> Result<()> {
    check_count("p", p as u64, 1, ">= 1")?;
    check_count("d", d as u64, 1, ">= 1")?;
    Ok(())
}

/// Σ_j a_j b_j with 8 interleaved partial sums (fixed order: deterministic), combined
/// pairwise.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, &u), &v) in acc.iter_mut().zip(x).zip(y) {
            *s += u * v;
        }
    }
    for ((s, &u), &v) in acc.iter_mut().zip(ra).zip(rb) {
        *s += u * v;
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

fn first_non_finite(v: &[f64]) -> Option<f64> {
    v.iter().copied().find(|x| !x.is_finite())
}

fn non_finite_column(value: f64) -> Error {
    Error::Numerical {
        what: "a Jacobian column has a non-finite entry",
        value,
    }
}

/// The d × d Gram matrix JᵀJ (row-major, exactly symmetric) into `gram`, from
/// `fill(first, count, out)` writing the columns J e_first, …, J e_{first+count−1} into `out`
/// (count × p, column after column). Blocked as described on [`GRAM_BLOCK_BYTES`], with the
/// budget `block_bytes`.
pub(crate) fn gram_into<F>(
    p: usize,
    d: usize,
    block_bytes: usize,
    mut fill: F,
    gram: &mut [f64],
    work: &mut GramWork,
) -> Result<()>
where
    F: FnMut(usize, usize, &mut [f64]) -> Result<()>,
{
    check_dims(p, d)?;
    if Some(gram.len()) != d.checked_mul(d) {
        return Err(Error::Inconsistent {
            what: "gram.len() must equal d * d",
            value: gram.len() as f64,
        });
    }
    let fit = (block_bytes / 8 / p) / CHUNK * CHUNK;
    let m = fit.max(CHUNK).min(d);
    let block_len = m.checked_mul(p).ok_or(Error::Numerical {
        what: "Jacobian block size overflows",
        value: m as f64,
    })?;
    work.block.resize(block_len, 0.0);
    if m < d {
        work.chunk.resize(CHUNK * p, 0.0);
    }
    let mut a0 = 0;
    while a0 < d {
        let am = m.min(d - a0);
        let block = work.block.get_mut(..am * p).unwrap_or_default();
        block.iter_mut().for_each(|v| *v = 0.0);
        fill(a0, am, block)?;
        if let Some(bad) = first_non_finite(block) {
            return Err(non_finite_column(bad));
        }
        let block: &[f64] = block;
        for (i, ci) in block.chunks_exact(p).enumerate() {
            for (j, cj) in block.chunks_exact(p).enumerate().skip(i) {
                let g = dot(ci, cj);
                set_sym(gram, d, a0 + i, a0 + j, g);
            }
        }
        let mut b0 = a0 + am;
        while b0 < d {
            let bm = CHUNK.min(d - b0);
            let chunk = work.chunk.get_mut(..bm * p).unwrap_or_default();
            chunk.iter_mut().for_each(|v| *v = 0.0);
            fill(b0, bm, chunk)?;
            if let Some(bad) = first_non_finite(chunk) {
                return Err(non_finite_column(bad));
            }
            for (i, ci) in block.chunks_exact(p).enumerate() {
                for (j, cj) in chunk.chunks_exact(p).enumerate() {
                    set_sym(gram, d, a0 + i, b0 + j, dot(ci, cj));
                }
            }
            b0 += bm;
        }
        a0 += am;
    }
    Ok(())
}

#[inline]
fn set_sym(gram: &mut [f64], d: usize, i: usize, j: usize, g: f64) {
    if let Some(v) = gram.get_mut(i * d + j) {
        *v = g;
    }
    if let Some(v) = gram.get_mut(j * d + i) {
        *v = g;
    }
}

/// The Fisher information matrix I = JᵀJ/s² (d × d, row-major, exactly symmetric) of
/// h = f(z) + N(0, s²I_p) about z ∈ ℝ^d, from the Jacobian columns J e_i delivered by
/// `column(i, out)` writing J e_i (length p) into `out` (zeroed before each call).
///
/// `column` may be called more than once for the same i when the p × d Jacobian exceeds
/// [`GRAM_BLOCK_BYTES`] (it must then return the same column); memory is O(d² + p·m).
///
/// # Formula
///
/// I_ij = ⟨J e_i, J e_j⟩ / s² (Guo Eq. 1 with the noise std s of the release; for a DP-SGD
/// step s = σ·S is the std of the noise on the gradient **sum**).
///
/// # Citations
///
/// Hannun, Guo, van der Maaten 2021 (Fisher information of the Gaussian mechanism); Guo,
/// Karrer, Chaudhuri, van der Maaten 2022, Eq. 1 and Alg. 1 line 10,
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_std` unless finite and > 0 with s² a normal `f64`;
/// [`Error::InvalidCount`] `p` or `d` if 0; [`Error::Numerical`] if a column has a non-finite
/// entry or an entry of I is not finite, or d² overflows; errors of `column` are passed
/// through.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::gaussian_fisher_matrix;
/// // f(z) = A z with A = [[1, 0], [1, 2], [0, 1]] (p = 3, d = 2), s = 2.
/// let a = [[1.0, 0.0], [1.0, 2.0], [0.0, 1.0]];
/// let i = gaussian_fisher_matrix(3, 2, 2.0, |col, out: &mut [f64]| {
///     for (o, row) in out.iter_mut().zip(&a) {
///         *o = row[col];
///     }
///     Ok(())
/// })?;
/// // AᵀA = [[2, 2], [2, 5]], divided by s² = 4.
/// assert_eq!(i, vec![0.5, 0.5, 0.5, 1.25]);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gaussian_fisher_matrix<F>(
    p: usize,
    d: usize,
    noise_std: f64,
    mut column: F,
) -> Result<Vec<f64>>
where
    F: FnMut(usize, &mut [f64]) -> Result<()>,
{
    let s2 = noise_variance(noise_std)?;
    check_dims(p, d)?;
    let dd = d.checked_mul(d).ok_or(Error::Numerical {
        what: "d * d overflows",
        value: d as f64,
    })?;
    let mut gram = alloc::vec![0.0; dd];
    let mut work = GramWork::default();
    gram_into(
        p,
        d,
        GRAM_BLOCK_BYTES,
        |first, count, out| {
            for (c, col) in out.chunks_exact_mut(p).take(count).enumerate() {
                column(first + c, col)?;
            }
            Ok(())
        },
        &mut gram,
        &mut work,
    )?;
    for g in gram.iter_mut() {
        *g /= s2;
    }
    if let Some(bad) = first_non_finite(&gram) {
        return Err(Error::Numerical {
            what: "a Fisher information entry is not finite",
            value: bad,
        });
    }
    Ok(gram)
}

/// Σ_{i ∈ coords} ‖J e_i‖²/s²: the part of Tr(I) = Tr(JᵀJ)/s² on the coordinates `coords`
/// (no d/k scaling; `coords` = 0..d gives the trace). Each column is requested once, into a
/// buffer of length p (zeroed before each call).
///
/// # Formula
///
/// Guo Eq. 5: Tr(I) = Σ_{i=1}^{d} eᵢᵀ I eᵢ = Σ_i ‖J e_i‖²/s². With k coordinates drawn
/// uniformly without replacement, (d/k) times this sum is an unbiased estimate of Tr(I).
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Eq. 5,
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] `noise_std` as for [`gaussian_fisher_matrix`];
/// [`Error::InvalidCount`] `p` or `d` if 0, `coords` if an index is ≥ d or repeated;
/// [`Error::Numerical`] if a column has a non-finite entry or the sum is not finite; errors
/// of `column` are passed through.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::gaussian_fisher_trace;
/// let a = [[1.0, 0.0], [1.0, 2.0], [0.0, 1.0]];
/// let col = |c: usize, out: &mut [f64]| {
///     for (o, row) in out.iter_mut().zip(&a) {
///         *o = row[c];
///     }
///     Ok(())
/// };
/// // Tr(AᵀA)/s² = (2 + 5)/4.
/// assert_eq!(gaussian_fisher_trace(3, 2, 2.0, &[0, 1], col)?, 1.75);
/// assert_eq!(gaussian_fisher_trace(3, 2, 2.0, &[1], col)?, 1.25);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gaussian_fisher_trace<F>(
    p: usize,
    d: usize,
    noise_std: f64,
    coords: &[usize],
    mut column: F,
) -> Result<f64>
where
    F: FnMut(usize, &mut [f64]) -> Result<()>,
{
    let s2 = noise_variance(noise_std)?;
    check_dims(p, d)?;
    let mut seen = alloc::vec![false; d];
    for &c in coords {
        match seen.get_mut(c) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::InvalidCount {
                    name: "coords",
                    value: c as u64,
                    expected: "distinct indices < d",
                })
            }
        }
    }
    let mut out = alloc::vec![0.0; p];
    let mut sum = 0.0;
    for &c in coords {
        out.iter_mut().for_each(|v| *v = 0.0);
        column(c, &mut out)?;
        if let Some(bad) = first_non_finite(&out) {
            return Err(non_finite_column(bad));
        }
        sum += dot(&out, &out);
    }
    crate::error::check_result("Fisher trace is not finite", sum / s2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::error_name;
    use crate::rng::Rng;

    fn dense_jacobian(p: usize, d: usize, seed: u64) -> Vec<f64> {
        let mut r = Rng::from_seed(seed);
        (0..p * d).map(|_| r.gaussian()).collect() // row-major p × d
    }

    #[test]
    fn fisher_matrix_equals_jt_j_over_s2_and_trace_matches() {
        // A random 13 × 5 Jacobian: I = JᵀJ/s² entry by entry (relative 1e-14: sums of 13
        // products) and exactly symmetric; the trace over all coordinates equals Tr(I).
        let (p, d, s) = (13, 5, 0.7);
        let j = dense_jacobian(p, d, 3);
        let col = |c: usize, out: &mut [f64]| {
            for (r, o) in out.iter_mut().enumerate() {
                *o = j[r * d + c];
            }
            Ok(())
        };
        let i = gaussian_fisher_matrix(p, d, s, col).unwrap();
        for a in 0..d {
            for b in 0..d {
                let want: f64 = (0..p).map(|r| j[r * d + a] * j[r * d + b]).sum::<f64>() / (s * s);
                assert!((i[a * d + b] - want).abs() <= 1e-14 * want.abs().max(1.0));
                assert_eq!(i[a * d + b], i[b * d + a]);
            }
        }
        let all: Vec<usize> = (0..d).collect();
        let t = gaussian_fisher_trace(p, d, s, &all, col).unwrap();
        let tr: f64 = (0..d).map(|a| i[a * d + a]).sum();
        assert!((t - tr).abs() <= 1e-14 * tr);
        // A subset: the sum of the selected diagonal entries.
        let t2 = gaussian_fisher_trace(p, d, s, &[4, 1], col).unwrap();
        assert!((t2 - (i[4 * d + 4] + i[d + 1])).abs() <= 1e-14 * t2);
    }

    #[test]
    fn blocked_gram_equals_single_block() {
        // A budget of 8 columns with d = 21 needs three blocks and re-requests columns; the
        // result must equal the one-block Gram matrix bit for bit (same `dot`).
        let (p, d) = (50, 21);
        let colval =
            |c: usize, r: usize| libm::sin(r as f64 * 0.1 + c as f64 * 0.37) * (1.0 + c as f64);
        let run = |budget: usize| {
            let mut calls = 0usize;
            let mut gram = vec![0.0; d * d];
            let mut work = GramWork::default();
            gram_into(
                p,
                d,
                budget,
                |first, count, out: &mut [f64]| {
                    for (c, col) in out.chunks_exact_mut(p).take(count).enumerate() {
                        calls += 1;
                        for (r, o) in col.iter_mut().enumerate() {
                            *o = colval(first + c, r);
                        }
                    }
                    Ok(())
                },
                &mut gram,
                &mut work,
            )
            .unwrap();
            (gram, calls)
        };
        let (one, calls_one) = run(GRAM_BLOCK_BYTES);
        let (blocked, calls_blocked) = run(8 * p * 8);
        assert_eq!(calls_one, d);
        // Block 0 (8 columns) then 13 later columns; block 1 then 5; block 2 (5 columns).
        assert_eq!(calls_blocked, 8 + 13 + 8 + 5 + 5);
        assert_eq!(one, blocked);
        for a in 0..d {
            let ca: Vec<f64> = (0..p).map(|r| colval(a, r)).collect();
            for b in 0..d {
                let want: f64 = (0..p).map(|r| ca[r] * colval(b, r)).sum();
                assert!((one[a * d + b] - want).abs() <= 1e-13 * (1.0 + want.abs()));
            }
        }
    }

    #[test]
    fn errors_name_the_parameter_and_pass_column_errors_through() {
        let ok = |_: usize, out: &mut [f64]| {
            out.iter_mut().for_each(|v| *v = 1.0);
            Ok(())
        };
        assert_eq!(
            error_name(gaussian_fisher_matrix(2, 2, 0.0, ok).unwrap_err()),
            "noise_std"
        );
        assert_eq!(
            error_name(gaussian_fisher_matrix(2, 2, 1e-160, ok).unwrap_err()),
            "noise_std"
        );
        assert_eq!(
            error_name(gaussian_fisher_matrix(0, 2, 1.0, ok).unwrap_err()),
            "p"
        );
        assert_eq!(
            error_name(gaussian_fisher_matrix(2, 0, 1.0, ok).unwrap_err()),
            "d"
        );
        assert_eq!(
            error_name(gaussian_fisher_trace(2, 2, 1.0, &[2], ok).unwrap_err()),
            "coords"
        );
        assert_eq!(
            error_name(gaussian_fisher_trace(2, 2, 1.0, &[1, 1], ok).unwrap_err()),
            "coords"
        );
        let nan = |_: usize, out: &mut [f64]| {
            out[0] = f64::NAN;
            Ok(())
        };
        assert!(matches!(
            gaussian_fisher_matrix(2, 2, 1.0, nan),
            Err(Error::Numerical { .. })
        ));
        assert!(matches!(
            gaussian_fisher_trace(2, 2, 1.0, &[0], nan),
            Err(Error::Numerical { .. })
        ));
        let fail = |_: usize, _: &mut [f64]| -> Result<()> {
            Err(Error::InvalidCount {
                name: "from_column",
                value: 1,
                expected: "x",
            })
        };
        assert_eq!(
            error_name(gaussian_fisher_matrix(2, 2, 1.0, fail).unwrap_err()),
            "from_column"
        );
        assert_eq!(
            error_name(gaussian_fisher_trace(2, 2, 1.0, &[0], fail).unwrap_err()),
            "from_column"
        );
        // Overflowing entries are an error, not infinity.
        let huge = |_: usize, out: &mut [f64]| {
            out.iter_mut().for_each(|v| *v = 1e200);
            Ok(())
        };
        assert!(gaussian_fisher_matrix(2, 2, 1.0, huge).is_err());
        assert!(gaussian_fisher_trace(2, 2, 1.0, &[0], huge).is_err());
    }
}
