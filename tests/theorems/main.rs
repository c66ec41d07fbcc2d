//! Integration tests: numerical checks of Guo, Karrer, Chaudhuri, van der Maaten 2022,
//! "Bounding Training Data Reconstruction in Private Deep Learning" (ICML 2022), Thms 1–4
//! (/work/shared/papers/guo2022-bounding-reconstruction-fil-rdp.txt, proofs in App. A, B),
//! on mechanisms where every quantity is known in closed form.
//!
//! - [`cramer_rao`]: Thm 2 (Cramér–Rao) on the linear Gaussian mechanism h = Az + N(0, s²I).
//! - [`hcr`]: Thm 1 (Hammersley–Chapman–Robbins, RDP → MSE) on z + N(0, s²I), z ∈ [0, M]^d.
//! - [`composition`]: Thm 3 (composition), fixed and adaptive linear-Gaussian steps.
//! - [`subsampling`]: Thm 4 (subsampling), Eq. 2 and Eq. 3, by quadrature in d = 1.
//!
//! Monte Carlo tests use `Rng::for_trial(seed, i)` per trial, fixed seeds, and confidence
//! intervals at total failure probability ≤ 1e-6 per test (derivations beside each test; the
//! helpers below are the two tail bounds they use).

#[path = "../common/mod.rs"]
mod common;

mod accountant;
mod composition;
mod cramer_rao;
mod hcr;
mod subsampling;

use reconbound::math::linalg::{cholesky_in_place, cholesky_solve};

/// Failure probability allowed per test.
pub const FAIL_PROB: f64 = 1e-6;

/// The x with `events`·e^{−x} = `FAIL_PROB`: a union bound over `events` one-sided tail events,
/// each at probability e^{−x}.
pub fn tail_x(events: f64) -> f64 {
    (events / FAIL_PROB).ln()
}

/// Laurent & Massart (2000), Lemma 1: for Y = Σ_k a_k (X_k² − 1), a_k ≥ 0, X_k iid N(0, 1),
/// P(Y ≥ 2‖a‖₂√x + 2‖a‖_∞ x) ≤ e^{−x} and P(Y ≤ −2‖a‖₂√x) ≤ e^{−x}.
/// Returns (lower width, upper width) of the interval for Y.
pub fn laurent_massart(a_norm2: f64, a_norm_inf: f64, x: f64) -> (f64, f64) {
    let lo = 2.0 * a_norm2 * x.sqrt();
    (lo, lo + 2.0 * a_norm_inf * x)
}

/// Chernoff bound for a centred Gaussian with standard deviation `sd`: P(G ≥ sd·√(2x)) ≤ e^{−x}.
pub fn gaussian_width(sd: f64, x: f64) -> f64 {
    sd * (2.0 * x).sqrt()
}

/// AᵀA/s² for a p × d row-major matrix A, computed directly (test reference).
pub fn ata_over_s2(a: &[f64], p: usize, d: usize, s: f64) -> Vec<f64> {
    let mut out = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            let mut acc = 0.0;
            for k in 0..p {
                acc += a[k * d + i] * a[k * d + j];
            }
            out[i * d + j] = acc / (s * s);
        }
    }
    out
}

/// The inverse of a symmetric positive definite d × d matrix (Cholesky, column by column).
pub fn spd_inverse(m: &[f64], d: usize) -> Vec<f64> {
    let mut l = m.to_vec();
    cholesky_in_place(&mut l, d).unwrap();
    let mut inv = vec![0.0; d * d];
    for j in 0..d {
        let mut e = vec![0.0; d];
        e[j] = 1.0;
        cholesky_solve(&l, d, &mut e).unwrap();
        for i in 0..d {
            inv[i * d + j] = e[i];
        }
    }
    inv
}

/// Trace of a d × d row-major matrix.
pub fn trace(m: &[f64], d: usize) -> f64 {
    (0..d).map(|i| m[i * d + i]).sum()
}

/// Frobenius norm.
pub fn frobenius(m: &[f64]) -> f64 {
    m.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Largest |a_ij − b_ij|.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Largest |a_ij|.
pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

/// Row-major product of an (n × m) and an (m × k) matrix.
pub fn matmul(a: &[f64], b: &[f64], n: usize, m: usize, k: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * k];
    for i in 0..n {
        for j in 0..k {
            out[i * k + j] = (0..m).map(|l| a[i * m + l] * b[l * k + j]).sum();
        }
    }
    out
}

/// Transpose of an n × m row-major matrix.
pub fn transpose(a: &[f64], n: usize, m: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * m];
    for i in 0..n {
        for j in 0..m {
            out[j * n + i] = a[i * m + j];
        }
    }
    out
}

/// The n × n Householder reflector I − 2vvᵀ/(vᵀv) (orthogonal and symmetric).
pub fn householder(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    let vv: f64 = v.iter().map(|x| x * x).sum();
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            h[i * n + j] = if i == j { 1.0 } else { 0.0 } - 2.0 * v[i] * v[j] / vv;
        }
    }
    h
}

/// Composite Simpson rule with `n` (even) intervals.
pub fn simpson<F: Fn(f64) -> f64>(f: &F, lo: f64, hi: f64, n: usize) -> f64 {
    assert!(n >= 2 && n % 2 == 0);
    let h = (hi - lo) / n as f64;
    let mut s = f(lo) + f(hi);
    for i in 1..n {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        s += w * f(lo + h * i as f64);
    }
    s * h / 3.0
}

/// Simpson with `n` and 2n intervals: (the 2n value, an error estimate). For an analytic
/// integrand the 2n rule's error is ≈ |S_2n − S_n|/15 (Richardson); we report
/// 10·|S_2n − S_n|, 150 times that, as a deliberately conservative estimate.
pub fn simpson_with_error<F: Fn(f64) -> f64>(f: &F, lo: f64, hi: f64, n: usize) -> (f64, f64) {
    let coarse = simpson(f, lo, hi, n);
    let fine = simpson(f, lo, hi, 2 * n);
    (fine, 10.0 * (fine - coarse).abs())
}
