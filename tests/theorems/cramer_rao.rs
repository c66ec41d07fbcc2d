//! Guo et al. 2022 Thm 2 (Cramér–Rao, App. A Thm A.2 and App. B) on the linear Gaussian
//! mechanism h = Az + N(0, s² I_p), z ∈ R^d, d = 3, p = 5.
//!
//! A = U diag(σ) Vᵀ with U (5 × 3, orthonormal columns) and V (3 × 3, orthogonal) Householder
//! reflectors, so I = AᵀA/s² = V diag(σ²/s²) Vᵀ has the known eigenvalues λ_j = σ_j²/s² and
//! Tr(I) = Σλ_j, Tr(I⁻¹) = Σ1/λ_j, ‖I‖₂ = max λ_j exactly.
//!
//! The least-squares estimator ẑ = (AᵀA)⁻¹Aᵀh is unbiased with error e ~ N(0, I⁻¹): it attains
//! the Cramér–Rao bound Tr(I⁻¹)/d, and Thm 2's chain reads
//! 1/‖I‖₂ ≤ d/Tr(I) ≤ Tr(I⁻¹)/d = MSE(ẑ). The shrinkage estimator cẑ attains the biased bound
//! c²Tr(I⁻¹)/d + (1 − c)²‖z‖²/d (its covariance is c²I⁻¹ = J_μ I⁻¹ J_μᵀ with J_μ = cI).
//!
//! API under test: `accounting::fil::fisher::{gaussian_fisher_matrix, gaussian_fisher_trace}`,
//! `accounting::fil::bounds::{unbiased_mse_bound, dfil, spectral_norm_upper,
//! spectral_mse_bound, biased_mse_bound}`.

use super::{
    ata_over_s2, frobenius, gaussian_width, householder, laurent_massart, matmul, max_abs,
    max_abs_diff, spd_inverse, tail_x, trace, transpose,
};
use reconbound::accounting::fil::bounds::{
    biased_mse_bound, dfil, spectral_mse_bound, spectral_norm_upper, unbiased_mse_bound,
};
use reconbound::accounting::fil::fisher::{gaussian_fisher_matrix, gaussian_fisher_trace};
use reconbound::rng::Rng;

const D: usize = 3;
const P: usize = 5;
const S: f64 = 0.8;
const Z: [f64; D] = [0.3, -0.5, 0.8];

/// The mechanism's matrix and the exact spectrum of its Fisher information.
struct Design {
    /// A, P × D row-major.
    a: Vec<f64>,
    /// V (D × D), the eigenvectors of I (columns).
    v: Vec<f64>,
    /// λ_j = σ_j²/s².
    lambdas: [f64; D],
}

impl Design {
    fn new(sv: [f64; D]) -> Self {
        let h5 = householder(&[1.0, 2.0, -1.0, 3.0, 0.5]);
        let v = householder(&[1.0, -2.0, 0.5]);
        let mut a = vec![0.0; P * D];
        for k in 0..P {
            for i in 0..D {
                // A_ki = Σ_j U_kj σ_j V_ij, U = first three columns of h5.
                a[k * D + i] = (0..D).map(|j| h5[k * P + j] * sv[j] * v[i * D + j]).sum();
            }
        }
        let lambdas = sv.map(|x| x * x / (S * S));
        Design { a, v, lambdas }
    }

    fn fisher(&self) -> Vec<f64> {
        let a = &self.a;
        gaussian_fisher_matrix(P, D, S, |i, out: &mut [f64]| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = a[k * D + i];
            }
            Ok(())
        })
        .unwrap()
    }

    /// V diag(f(λ)) Vᵀ.
    fn spectral(&self, f: impl Fn(f64) -> f64) -> Vec<f64> {
        let mut m = vec![0.0; D * D];
        for i in 0..D {
            for j in 0..D {
                m[i * D + j] = (0..D)
                    .map(|k| self.v[i * D + k] * f(self.lambdas[k]) * self.v[j * D + k])
                    .sum();
            }
        }
        m
    }

    fn trace_fisher(&self) -> f64 {
        self.lambdas.iter().sum()
    }

    fn trace_inverse(&self) -> f64 {
        self.lambdas.iter().map(|l| 1.0 / l).sum()
    }

    /// ‖I⁻¹‖_F = (Σ 1/λ_j²)^½ (orthogonal invariance).
    fn frobenius_inverse(&self) -> f64 {
        self.lambdas
            .iter()
            .map(|l| 1.0 / (l * l))
            .sum::<f64>()
            .sqrt()
    }

    /// K = (AᵀA)⁻¹Aᵀ (D × P), the least-squares estimator.
    fn estimator(&self) -> Vec<f64> {
        let ata = ata_over_s2(&self.a, P, D, 1.0);
        matmul(&spd_inverse(&ata, D), &transpose(&self.a, P, D), D, D, P)
    }
}

/// A generic design: λ = (6.25, 1.5625, 0.390625), so 1/‖I‖₂ = 0.16 < d/Tr(I) = 0.3657 <
/// Tr(I⁻¹)/d = 1.12 (strict chain).
fn generic() -> Design {
    Design::new([2.0, 1.0, 0.5])
}

/// An isotropic design: I = (1.5/0.8)² I_3, the whole chain collapses to s²/σ² = 0.284444.
fn isotropic() -> Design {
    Design::new([1.5, 1.5, 1.5])
}

/// Runs `trials` releases; returns (Σ‖ẑ − z‖², Σ‖cẑ − z‖²) for the shrinkage factor `c`.
fn monte_carlo(design: &Design, seed: u64, trials: u64, c: f64) -> (f64, f64) {
    let k = design.estimator();
    let az: Vec<f64> = (0..P)
        .map(|r| (0..D).map(|i| design.a[r * D + i] * Z[i]).sum())
        .collect();
    let (mut sum, mut sum_c) = (0.0, 0.0);
    for t in 0..trials {
        let mut rng = Rng::for_trial(seed, t);
        let h: Vec<f64> = az.iter().map(|m| m + S * rng.gaussian()).collect();
        for i in 0..D {
            let zi: f64 = (0..P).map(|r| k[i * P + r] * h[r]).sum();
            sum += (zi - Z[i]).powi(2);
            sum_c += (c * zi - Z[i]).powi(2);
        }
    }
    (sum, sum_c)
}

#[test]
fn guo22_thm2_gaussian_fisher_matrix_equals_ata_over_s2() {
    // Tolerance 1e-12 relative to the largest entry: every entry is a sum of p = 5 products
    // (rounding ≲ 10 ulp ≈ 2e-15); any other discrepancy is a formula error (e.g. 1/s
    // instead of 1/s², or a transposed Jacobian).
    for design in [generic(), isotropic()] {
        let fisher = design.fisher();
        assert_eq!(fisher.len(), D * D);
        let direct = ata_over_s2(&design.a, P, D, S);
        let tol = 1e-12 * max_abs(&direct);
        assert!(
            max_abs_diff(&fisher, &direct) <= tol,
            "{fisher:?} vs {direct:?}"
        );
        // And the spectral form V diag(σ²/s²) Vᵀ (the construction adds ≈ 1e-15 rounding).
        let spectral = design.spectral(|l| l);
        assert!(
            max_abs_diff(&fisher, &spectral) <= tol,
            "{fisher:?} vs {spectral:?}"
        );
        // Symmetric by construction (contract): exactly.
        for i in 0..D {
            for j in 0..D {
                assert_eq!(fisher[i * D + j], fisher[j * D + i], "({i}, {j})");
            }
        }
        // Trace over all coordinates = Σλ; over a subset = those diagonal entries (no d/k
        // scaling). Same 1e-12 tolerance, same reason.
        let column = |i: usize, out: &mut [f64]| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = design.a[k * D + i];
            }
            Ok(())
        };
        let tr = gaussian_fisher_trace(P, D, S, &[0, 1, 2], column).unwrap();
        let exact = design.trace_fisher();
        assert!((tr - exact).abs() <= 1e-12 * exact, "{tr} vs {exact}");
        let sub = gaussian_fisher_trace(P, D, S, &[2, 0], column).unwrap();
        let sub_exact = direct[8] + direct[0];
        assert!(
            (sub - sub_exact).abs() <= 1e-12 * exact,
            "{sub} vs {sub_exact}"
        );
        // dFIL = Tr/d and the unbiased bound d/Tr (rounded down): 1e-12 relative.
        let f = dfil(tr, D).unwrap();
        assert!((f - tr / 3.0).abs() <= 1e-12 * f, "{f}");
        let b = unbiased_mse_bound(tr, D).unwrap();
        assert!(b <= 3.0 / tr && b >= 3.0 / tr * (1.0 - 1e-12), "{b}");
    }
}

#[test]
fn guo22_thm2_unbiased_cramer_rao_attained_by_least_squares() {
    // M = 400,000 releases of each design. ‖ẑ − z‖² = Σ_j μ_j X_j² with μ_j the eigenvalues of
    // Σ = I⁻¹, so S − M·Tr(Σ) = Σ_{m,j} μ_j (X_mj² − 1) and Laurent–Massart applies with
    // ‖a‖₂ = √M ‖Σ‖_F, ‖a‖_∞ = max μ_j: two one-sided events per design, two designs, each at
    // e^{−x}, x = ln(4/1e-6) → failure probability ≤ 1e-6. The interval is ≈ ±1% of the MSE.
    const SEED: u64 = 0x7468_6d32_0001;
    const TRIALS: u64 = 400_000;
    let x = tail_x(4.0);
    for (name, design) in [("generic", generic()), ("isotropic", isotropic())] {
        let (sum, _) = monte_carlo(&design, SEED, TRIALS, 1.0);
        let m = TRIALS as f64;
        let mse = sum / (m * D as f64);
        let mu_max = 1.0 / design.lambdas.iter().copied().fold(f64::INFINITY, f64::min);
        let (lo, hi) = laurent_massart(m.sqrt() * design.frobenius_inverse(), mu_max, x);
        let (lo, hi) = (lo / (m * D as f64), hi / (m * D as f64));
        let cramer_rao = design.trace_inverse() / D as f64;
        eprintln!("{name}: MSE {mse:.6}, Tr(I⁻¹)/d {cramer_rao:.6}, CI [−{lo:.2e}, +{hi:.2e}]");
        // Tightness: the efficient estimator's MSE is Tr(I⁻¹)/d.
        assert!(
            mse >= cramer_rao - lo && mse <= cramer_rao + hi,
            "{name}: MSE {mse} not in [{}, {}] (seed {SEED:#x})",
            cramer_rao - lo,
            cramer_rao + hi
        );
        // Thm 2: no unbiased estimator beats d/Tr(I) (from the accountant's trace).
        let tr = trace(&design.fisher(), D);
        let bound = unbiased_mse_bound(tr, D).unwrap();
        assert!(
            mse >= bound - lo,
            "{name}: MSE {mse} below d/Tr(I) = {bound} − {lo} (seed {SEED:#x})"
        );
        if name == "isotropic" {
            // Here d/Tr(I) = Tr(I⁻¹)/d = 1/‖I‖₂: the accountant's bounds are attained, so the
            // same interval also pins their values (a bound off by > 1% fails).
            let spectral = spectral_mse_bound(&design.fisher(), D).unwrap();
            for (what, b) in [("d/Tr(I)", bound), ("1/‖I‖₂", spectral)] {
                assert!(
                    mse >= b - lo && mse <= b + hi,
                    "{what} = {b} not attained: MSE {mse}, CI [−{lo}, +{hi}] (seed {SEED:#x})"
                );
            }
        }
    }
}

#[test]
fn guo22_thm2_biased_bound_attained_by_shrinkage() {
    // ẑ_c = cẑ: μ(z) = cz, J_μ = cI, bias (c − 1)z; MSE = c²Tr(I⁻¹)/d + (1 − c)²‖z‖²/d exactly.
    let design = generic();
    let fisher = design.fisher();
    let z_sq: f64 = Z.iter().map(|v| v * v).sum();
    for c in [0.6, 0.25, 1.0] {
        let mut jac = vec![0.0; D * D];
        for i in 0..D {
            jac[i * D + i] = c;
        }
        let bias: Vec<f64> = Z.iter().map(|v| (c - 1.0) * v).collect();
        let b = biased_mse_bound(&fisher, D, &jac, &bias).unwrap();
        let exact = (c * c * design.trace_inverse() + (1.0 - c).powi(2) * z_sq) / D as f64;
        // 1e-12 relative: a 3 × 3 Cholesky solve of a matrix with condition number 16 whose
        // entries carry ~1e-16 rounding (total ≲ 1e-14), plus the function's downward rounding.
        assert!(
            (b - exact).abs() <= 1e-12 * exact,
            "c = {c}: {b} vs {exact}"
        );
    }
    // Cauchy–Schwarz step of Thm 2's proof: Tr(I⁻¹)/d (biased bound at J = I, bias 0) ≥ d/Tr(I).
    let mut eye = vec![0.0; D * D];
    for i in 0..D {
        eye[i * D + i] = 1.0;
    }
    let cr = biased_mse_bound(&fisher, D, &eye, &[0.0; D]).unwrap();
    let unb = unbiased_mse_bound(trace(&fisher, D), D).unwrap();
    assert!(cr > 3.0 * unb, "{cr} vs {unb}"); // 1.12 vs 0.366 for this design

    // Monte Carlo, c = 0.6, M = 400,000: Σ‖cẑ − z‖² − M·exact = c²(S − M Tr Σ) + 2c(c − 1) zᵀE,
    // E = Σ_m e_m ~ N(0, M Σ). Laurent–Massart for S (two events at e^{−x}) and the Gaussian
    // Chernoff bound for zᵀE (sd √(M zᵀΣz), two events): x = ln(4/1e-6), failure ≤ 1e-6.
    const SEED: u64 = 0x7468_6d32_0002;
    const TRIALS: u64 = 400_000;
    let c = 0.6;
    let x = tail_x(4.0);
    let m = TRIALS as f64;
    let (_, sum_c) = monte_carlo(&design, SEED, TRIALS, c);
    let mse = sum_c / (m * D as f64);
    let sigma = design.spectral(|l| 1.0 / l);
    let z_sigma_z: f64 = (0..D)
        .map(|i| (0..D).map(|j| Z[i] * sigma[i * D + j] * Z[j]).sum::<f64>())
        .sum();
    let mu_max = 1.0 / design.lambdas.iter().copied().fold(f64::INFINITY, f64::min);
    let (lm_lo, lm_hi) = laurent_massart(m.sqrt() * frobenius(&sigma), mu_max, x);
    let g = 2.0 * c * (1.0 - c) * gaussian_width((m * z_sigma_z).sqrt(), x);
    let lo = (c * c * lm_lo + g) / (m * D as f64);
    let hi = (c * c * lm_hi + g) / (m * D as f64);
    let mut jac = vec![0.0; D * D];
    for i in 0..D {
        jac[i * D + i] = c;
    }
    let bias: Vec<f64> = Z.iter().map(|v| (c - 1.0) * v).collect();
    let bound = biased_mse_bound(&fisher, D, &jac, &bias).unwrap();
    eprintln!("shrinkage c = {c}: MSE {mse:.6}, bound {bound:.6}, CI [−{lo:.2e}, +{hi:.2e}]");
    assert!(
        mse >= bound - lo && mse <= bound + hi,
        "shrinkage MSE {mse} vs biased bound {bound}, CI [−{lo}, +{hi}] (seed {SEED:#x})"
    );
    // The biased estimator beats the unbiased Cramér–Rao value Tr(I⁻¹)/d = 1.12 (0.4555 +
    // 1% here), so the bias term of Thm 2 is essential.
    assert!(bound + hi < cr, "{bound} + {hi} vs {cr}");
    assert!(
        mse < cr,
        "shrinkage MSE {mse} ≥ Tr(I⁻¹)/d {cr} (seed {SEED:#x})"
    );
}

/// Q diag(λ) Qᵀ for Q = H(v1)·H(v2), symmetrised exactly.
fn known_spectrum(lambdas: &[f64], v1: &[f64], v2: &[f64]) -> Vec<f64> {
    let d = lambdas.len();
    let q = matmul(&householder(v1), &householder(v2), d, d, d);
    let mut m = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            m[i * d + j] = (0..d)
                .map(|k| q[i * d + k] * lambdas[k] * q[j * d + k])
                .sum();
        }
    }
    let mt = transpose(&m, d, d);
    m.iter().zip(&mt).map(|(a, b)| 0.5 * (a + b)).collect()
}

#[test]
fn guo22_thm2_spectral_le_trace_le_inverse_trace() {
    // Thm 2's last inequalities 1/‖I‖₂ ≤ d/Tr(I) ≤ Tr(I⁻¹)/d, on the two designs and on 12
    // matrices Q diag(λ) Qᵀ (d = 2..7, λ uniform in [0.1, 10], fixed seed) with known λ_max.
    // spectral_norm_upper must be certified: ≥ λ_max up to the rounding of the matrix entries
    // (perturbation ≤ ‖E‖_F ≲ 1e-15·λ_max; we allow 1e-12), and not loose by more than 1e-6
    // relative (the contract raises a power-iteration estimate only until a Cholesky
    // certificate succeeds; a looser value would waste the bound).
    const SEED: u64 = 0x7468_6d32_0003;
    let mut cases: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    for (name, design) in [("generic", generic()), ("isotropic", isotropic())] {
        cases.push((name.into(), design.fisher(), design.lambdas.to_vec()));
    }
    for t in 0..12u64 {
        let mut rng = Rng::for_trial(SEED, t);
        let d = 2 + (t % 6) as usize;
        let lambdas: Vec<f64> = (0..d).map(|_| 0.1 + 9.9 * rng.uniform()).collect();
        let v1: Vec<f64> = (0..d).map(|_| rng.gaussian()).collect();
        let v2: Vec<f64> = (0..d).map(|_| rng.gaussian()).collect();
        cases.push((
            format!("random {t} (seed {SEED:#x})"),
            known_spectrum(&lambdas, &v1, &v2),
            lambdas,
        ));
    }
    for (name, fisher, lambdas) in cases {
        let d = lambdas.len();
        let lmax = lambdas.iter().copied().fold(0.0, f64::max);
        let tr_inv: f64 = lambdas.iter().map(|l| 1.0 / l).sum();
        let upper = spectral_norm_upper(&fisher, d).unwrap();
        assert!(
            upper >= lmax * (1.0 - 1e-12) && upper <= lmax * (1.0 + 1e-6),
            "{name}: ‖I‖₂ upper {upper} vs λ_max {lmax}"
        );
        let spectral = spectral_mse_bound(&fisher, d).unwrap();
        assert!(
            spectral <= 1.0 / upper * (1.0 + 4.0 * f64::EPSILON)
                && spectral >= 1.0 / upper * (1.0 - 1e-12),
            "{name}: {spectral} vs 1/{upper}"
        );
        let unb = unbiased_mse_bound(trace(&fisher, d), d).unwrap();
        let mut eye = vec![0.0; d * d];
        for i in 0..d {
            eye[i * d + i] = 1.0;
        }
        let cr = biased_mse_bound(&fisher, d, &eye, &vec![0.0; d]).unwrap();
        // Tr(I⁻¹)/d through the API agrees with Σ1/λ_j/d (condition number ≤ 100: 1e-12).
        assert!(
            (cr - tr_inv / d as f64).abs() <= 1e-12 * cr,
            "{name}: {cr} vs {}",
            tr_inv / d as f64
        );
        // The chain, with 1e-12 relative slack for the isotropic case (equalities).
        let slack = 1.0 + 1e-12;
        assert!(
            spectral <= unb * slack && unb <= cr * slack,
            "{name}: {spectral} ≤ {unb} ≤ {cr} fails"
        );
        if name == "generic" {
            // Strict, with the gaps of the design (0.16 < 0.3657 < 1.12).
            assert!(
                spectral < 0.5 * unb && unb < 0.5 * cr,
                "{spectral} {unb} {cr}"
            );
        }
        if name == "isotropic" {
            assert!((spectral - cr).abs() <= 1e-6 * cr, "{spectral} vs {cr}");
        }
    }
}
