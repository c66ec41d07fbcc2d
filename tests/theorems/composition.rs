//! Guo et al. 2022 Thm 3 (composition, App. B: chain rule of Fisher information).
//!
//! Fixed schedule: T linear-Gaussian releases h_t = A_t z + N(0, s_t² I_{p_t}) with independent
//! noise. The joint release is one Gaussian with stacked matrix [A_1; …; A_T] and noise
//! diag(s_t²), whose Fisher information Σ_rows r rᵀ/s_t² must equal Σ_t A_tᵀA_t/s_t² (the sum
//! of the per-step matrices of `gaussian_fisher_matrix`).
//!
//! Adaptive schedule (d = 1): h_1 = a_1 z + N(0, s²), h_2 = A(h_1) z + N(0, s²) with
//! A(h) = c_0 + c_1 h. The joint density is φ_s(h_1 − a_1 z)·φ_s(h_2 − A(h_1) z); its score is
//! a_1 u_1/s² + A(h_1) u_2/s² and the cross term vanishes (E[u_2 | h_1] = 0), so
//! I_joint(z) = a_1²/s² + E[A(h_1)²]/s² = (a_1² + (c_0 + c_1 a_1 z)² + c_1² s²)/s²
//! = E[Σ_t I_t(z | past)], which the per-run sum a_1²/s² + A(h_1)²/s² estimates without bias.
//!
//! API under test: `accounting::fil::fisher::{gaussian_fisher_matrix, gaussian_fisher_trace}`,
//! `accounting::fil::bounds::unbiased_mse_bound`.

use super::{
    frobenius, gaussian_width, laurent_massart, max_abs, max_abs_diff, simpson, spd_inverse,
    tail_x, trace,
};
use reconbound::accounting::fil::bounds::unbiased_mse_bound;
use reconbound::accounting::fil::fisher::{gaussian_fisher_matrix, gaussian_fisher_trace};
use reconbound::rng::Rng;

const D: usize = 3;
const ROWS: [usize; 4] = [2, 4, 3, 5];
const NOISE: [f64; 4] = [0.5, 1.0, 2.0, 0.7];
const Z: [f64; D] = [0.4, -1.1, 0.25];

/// The fixed schedule's matrices A_t (p_t × D row-major), entries N(0, 1) from a fixed seed.
fn schedule() -> Vec<Vec<f64>> {
    const SEED: u64 = 0x7468_6d32_0200;
    ROWS.iter()
        .enumerate()
        .map(|(t, &p)| {
            let mut rng = Rng::for_trial(SEED, t as u64);
            (0..p * D).map(|_| rng.gaussian()).collect()
        })
        .collect()
}

fn step_fisher(a: &[f64], p: usize, s: f64) -> Vec<f64> {
    gaussian_fisher_matrix(p, D, s, |i, out: &mut [f64]| {
        for (k, o) in out.iter_mut().enumerate() {
            *o = a[k * D + i];
        }
        Ok(())
    })
    .unwrap()
}

#[test]
fn guo22_thm3_fixed_schedule_fisher_is_sum_of_steps() {
    // 1e-12 relative to the largest entry: both sides sum 14 products per entry (≲ 30 ulp);
    // anything larger is a formula error (a missing step, 1/s instead of 1/s²).
    let steps = schedule();
    // The joint release's Fisher information, straight from the stacked Gaussian.
    let mut joint = vec![0.0; D * D];
    for (t, a) in steps.iter().enumerate() {
        let s2 = NOISE[t] * NOISE[t];
        for row in a.chunks_exact(D) {
            for i in 0..D {
                for j in 0..D {
                    joint[i * D + j] += row[i] * row[j] / s2;
                }
            }
        }
    }
    let mut sum = vec![0.0; D * D];
    let mut trace_sum = 0.0;
    let mut sub_sum = 0.0;
    for (t, a) in steps.iter().enumerate() {
        let f = step_fisher(a, ROWS[t], NOISE[t]);
        for (x, y) in sum.iter_mut().zip(&f) {
            *x += y;
        }
        let column = |i: usize, out: &mut [f64]| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = a[k * D + i];
            }
            Ok(())
        };
        trace_sum += gaussian_fisher_trace(ROWS[t], D, NOISE[t], &[0, 1, 2], column).unwrap();
        sub_sum += gaussian_fisher_trace(ROWS[t], D, NOISE[t], &[1], column).unwrap();
    }
    let tol = 1e-12 * max_abs(&joint);
    assert!(max_abs_diff(&sum, &joint) <= tol, "{sum:?} vs {joint:?}");
    let tr = trace(&joint, D);
    assert!((trace_sum - tr).abs() <= 1e-12 * tr, "{trace_sum} vs {tr}");
    assert!(
        (sub_sum - joint[4]).abs() <= 1e-12 * tr,
        "{sub_sum} vs {}",
        joint[4]
    );
}

#[test]
fn guo22_thm3_joint_release_attains_composed_cramer_rao() {
    // The generalised least-squares estimator ẑ = I⁻¹ Σ_t A_tᵀh_t/s_t² (I = Σ_t I_t from the
    // API) has error N(0, I⁻¹): its MSE must equal Tr((Σ_t I_t)⁻¹)/d. N = 200,000 runs;
    // Laurent–Massart with ‖a‖₂ = √N‖I⁻¹‖_F, ‖a‖_∞ ≤ ‖I⁻¹‖_F, two events, x = ln(2/1e-6).
    const SEED: u64 = 0x7468_6d32_0201;
    const N: u64 = 200_000;
    let steps = schedule();
    let mut fisher = vec![0.0; D * D];
    let mut per_step = Vec::new();
    for (t, a) in steps.iter().enumerate() {
        let f = step_fisher(a, ROWS[t], NOISE[t]);
        for (x, y) in fisher.iter_mut().zip(&f) {
            *x += y;
        }
        per_step.push(f);
    }
    let inv = spd_inverse(&fisher, D);
    let mut sum = 0.0;
    for m in 0..N {
        let mut rng = Rng::for_trial(SEED, m);
        let mut rhs = [0.0; D];
        for (t, a) in steps.iter().enumerate() {
            let s = NOISE[t];
            for row in a.chunks_exact(D) {
                let h: f64 =
                    row.iter().zip(&Z).map(|(x, z)| x * z).sum::<f64>() + s * rng.gaussian();
                for i in 0..D {
                    rhs[i] += row[i] * h / (s * s);
                }
            }
        }
        for i in 0..D {
            let zi: f64 = (0..D).map(|j| inv[i * D + j] * rhs[j]).sum();
            sum += (zi - Z[i]).powi(2);
        }
    }
    let nf = N as f64;
    let x = tail_x(2.0);
    let fro = frobenius(&inv);
    let (lo, hi) = laurent_massart(nf.sqrt() * fro, fro, x);
    let (lo, hi) = (lo / (nf * D as f64), hi / (nf * D as f64));
    let mse = sum / (nf * D as f64);
    let cr = trace(&inv, D) / D as f64;
    eprintln!("joint GLS: MSE {mse:.6}, Tr((ΣI_t)⁻¹)/d {cr:.6}, CI [−{lo:.2e}, +{hi:.2e}]");
    assert!(
        mse >= cr - lo && mse <= cr + hi,
        "joint MSE {mse} vs Tr((ΣI_t)⁻¹)/d = {cr}, CI [−{lo}, +{hi}] (seed {SEED:#x})"
    );
    let bound = unbiased_mse_bound(trace(&fisher, D), D).unwrap();
    assert!(
        mse >= bound - lo,
        "MSE {mse} < d/Tr(ΣI_t) {bound} (seed {SEED:#x})"
    );
    // Composition adds information: the joint MSE is below every single step's Cramér–Rao
    // value (steps with p_t ≥ d; the step with p_1 = 2 < d is singular, its bound infinite).
    for (t, f) in per_step.iter().enumerate().skip(1) {
        let single = trace(&spd_inverse(f, D), D) / D as f64;
        assert!(
            mse + lo < single,
            "step {t}: joint MSE {mse} not below single-step {single} (seed {SEED:#x})"
        );
    }
}

// Adaptive example (d = 1).
const A1: f64 = 1.2;
const S: f64 = 0.8;
const Z1: f64 = 0.7;
const C0: f64 = 0.5;
const C1: f64 = 1.5;

fn coefficient(h1: f64) -> f64 {
    C0 + C1 * h1
}

/// I_joint = (a_1² + (c_0 + c_1 a_1 z)² + c_1² s²)/s² = (1.44 + 3.0976 + 1.44)/0.64 = 9.34.
fn joint_fisher_closed_form() -> f64 {
    let beta = C0 + C1 * A1 * Z1;
    (A1 * A1 + beta * beta + C1 * C1 * S * S) / (S * S)
}

#[test]
fn guo22_thm3_adaptive_joint_fisher_closed_form_by_quadrature() {
    // The closed form above, checked against the definition I = ∫∫ (∂_z p)²/p dh_1 dh_2 of the
    // joint density, with ∂_z p by central differences (δ = 1e-5: truncation ~δ²·score² ≈ 1e-9,
    // cancellation ~1e-16/(δ·score) ≈ 1e-11) and 2-D Simpson over ±12s in h_1 and in
    // u_2 = h_2 − A(h_1)z (tails < e^{−72}; 500 intervals each, 20 points per s: Simpson on
    // Gaussians converges geometrically). Tolerance 1e-7 relative.
    let phi = |u: f64| (-u * u / (2.0 * S * S)).exp() / (S * (2.0 * std::f64::consts::PI).sqrt());
    let density = |h1: f64, h2: f64, z: f64| phi(h1 - A1 * z) * phi(h2 - coefficient(h1) * z);
    let delta = 1e-5;
    let inner = |h1: f64| {
        let centre = coefficient(h1) * Z1;
        let f = |u2: f64| {
            let h2 = centre + u2;
            let dp = (density(h1, h2, Z1 + delta) - density(h1, h2, Z1 - delta)) / (2.0 * delta);
            let p = density(h1, h2, Z1);
            if p > 0.0 {
                dp * dp / p
            } else {
                0.0
            }
        };
        simpson(&f, -12.0 * S, 12.0 * S, 500)
    };
    let numeric = simpson(&inner, A1 * Z1 - 12.0 * S, A1 * Z1 + 12.0 * S, 500);
    let exact = joint_fisher_closed_form();
    eprintln!("adaptive quadrature: {numeric:.12} vs {exact:.12}");
    assert!(
        (numeric - exact).abs() <= 1e-7 * exact,
        "quadrature {numeric} vs closed form {exact}"
    );
}

#[test]
fn guo22_thm3_adaptive_per_run_sum_is_unbiased_for_joint_fisher() {
    // N = 200,000 runs. Per run: h_1 = a_1 z + s g, and the accountant's per-step matrices
    // I_1 = a_1²/s² and I_2 = A(h_1)²/s² (gaussian_fisher_matrix with p = d = 1, the column of
    // step 2 depending on the realised h_1). With A(h_1) = β + γg (β = c_0 + c_1 a_1 z,
    // γ = c_1 s): mean − I_joint = (2βγ Ḡ + γ²(Q/N − 1))/s², Ḡ = Σg/N ~ N(0, 1/N) (Chernoff,
    // two events) and Q = Σg² ~ χ²_N (Laurent–Massart, two events): x = ln(4/1e-6).
    const SEED: u64 = 0x7468_6d32_0202;
    const N: u64 = 200_000;
    let mut sum = 0.0;
    for m in 0..N {
        let mut rng = Rng::for_trial(SEED, m);
        let i1 = gaussian_fisher_matrix(1, 1, S, |_, out: &mut [f64]| {
            out[0] = A1;
            Ok(())
        })
        .unwrap();
        let h1 = A1 * Z1 + S * rng.gaussian();
        let i2 = gaussian_fisher_matrix(1, 1, S, |_, out: &mut [f64]| {
            out[0] = coefficient(h1);
            Ok(())
        })
        .unwrap();
        sum += i1[0] + i2[0];
    }
    let nf = N as f64;
    let mean = sum / nf;
    let exact = joint_fisher_closed_form();
    let beta = C0 + C1 * A1 * Z1;
    let gamma = C1 * S;
    let x = tail_x(4.0);
    let (q_lo, q_hi) = laurent_massart(nf.sqrt(), 1.0, x);
    let g = 2.0 * beta.abs() * gamma * gaussian_width(1.0 / nf.sqrt(), x);
    let lo = (g + gamma * gamma * q_lo / nf) / (S * S);
    let hi = (g + gamma * gamma * q_hi / nf) / (S * S);
    eprintln!("adaptive: mean per-run FIM {mean:.5}, I_joint {exact:.5}, CI [−{lo:.3}, +{hi:.3}]");
    assert!(
        mean >= exact - lo && mean <= exact + hi,
        "per-run FIM mean {mean} vs E[ΣI_t] = {exact}, CI [−{lo}, +{hi}] (seed {SEED:#x})"
    );
    // Power: evaluating step 2 at the mean release (A(E h_1), non-adaptive) gives
    // (a_1² + β²)/s² = 7.09, outside the interval — the test tells the two apart.
    let wrong = (A1 * A1 + beta * beta) / (S * S);
    assert!(wrong < exact - lo, "{wrong} vs {exact} − {lo}");
}
