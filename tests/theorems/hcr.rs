//! Guo et al. 2022 Thm 1 (Hammersley–Chapman–Robbins, App. A Thm A.1 and App. B) on the
//! Gaussian mechanism h = z + N(0, s² I_d) over the box Z = Π_i [0, diam_i].
//!
//! The theorem assumes (2, ε)-RDP of the learner between any two data sets differing in the
//! target (substitution z ↔ z′, both in Z): for the Gaussian mechanism ε = 2Δ²/(2s²) with Δ the
//! ℓ2 diameter of Z (for [0, M]^d: Δ = M√d, ε = dM²/s²). Its unbiased bound is then
//! Σ_i diam_i²/(4d(e^ε − 1)); ẑ = h is unbiased with MSE s² (the Cramér–Rao value, Fisher
//! information I = I_d/s²), and in d = 1 the bound tends to s²/4 as M → 0 (Guo §4).
//!
//! API under test: `accounting::rdp::gaussian_rdp`, `accounting::mse::{mse_lower_bound_uniform,
//! mse_lower_bound_unbiased, mse_lower_bound_biased}`, and for the comparison with Thm 2
//! `accounting::fil::fisher::gaussian_fisher_trace`, `accounting::fil::bounds::unbiased_mse_bound`.

use super::{gaussian_width, laurent_massart, simpson_with_error, tail_x};
use reconbound::accounting::fil::bounds::unbiased_mse_bound;
use reconbound::accounting::fil::fisher::gaussian_fisher_trace;
use reconbound::accounting::mse::{
    mse_lower_bound_biased, mse_lower_bound_unbiased, mse_lower_bound_uniform,
};
use reconbound::accounting::rdp::gaussian_rdp;
use reconbound::rng::Rng;

/// χ²(N(Δ, s²) ‖ N(0, s²)) = ∫ φ_s(h)·(P/Q(h) − 1)² dh by Simpson, with
/// P/Q(h) − 1 = expm1((2hΔ − Δ²)/(2s²)) (no cancellation): (value, error estimate).
fn chi_square_gaussian_shift(delta: f64, s: f64) -> (f64, f64) {
    let norm = 1.0 / (s * (2.0 * std::f64::consts::PI).sqrt());
    let f = |h: f64| {
        let r = ((2.0 * h * delta - delta * delta) / (2.0 * s * s)).exp_m1();
        norm * (-h * h / (2.0 * s * s)).exp() * r * r
    };
    // The integrand is ≤ φ_s(h)(1 + e^{(2hΔ − Δ²)/s²}) = φ_s(h) + e^{Δ²/s²}φ_s(h − 2Δ): the
    // window ±(2|Δ| + 40s) leaves a tail below (1 + e^{Δ²/s²})·e^{−800}, nothing in f64.
    let w = 2.0 * delta.abs() + 40.0 * s;
    simpson_with_error(&f, -w, w, 40_000)
}

#[test]
fn guo22_thm1_order2_rdp_is_log_one_plus_chi_square() {
    // The proof's first step: D₂(P‖Q) = ln(1 + χ²(P‖Q)), so (2, ε)-RDP gives χ² ≤ e^ε − 1.
    // For a Gaussian shift Δ, χ² by quadrature equals expm1(gaussian_rdp(2, Δ, s)) to 1e-10
    // relative (Simpson on 80,000 intervals over ±40s: error estimate < 1e-13; gaussian_rdp
    // rounds up by ~1 ulp).
    for s in [0.5, 1.3] {
        for delta in [0.1, 0.5, 1.0, 2.0] {
            let eps = gaussian_rdp(2.0, delta, s).unwrap();
            let ratio = delta * delta / (s * s);
            // ε = 2Δ²/(2s²), rounded up by a few ulps (1e-14 relative).
            assert!(
                eps >= ratio && eps <= ratio * (1.0 + 1e-14),
                "s = {s}, Δ = {delta}: ε = {eps}"
            );
            let exact = ratio.exp_m1();
            let (chi2, err) = chi_square_gaussian_shift(delta, s);
            assert!(err <= 1e-12 * exact, "quadrature not converged: {err}");
            assert!(
                (chi2 - exact).abs() <= 1e-10 * exact + err,
                "s = {s}, Δ = {delta}: χ² {chi2} vs e^ε − 1 = {exact}"
            );
            assert!(chi2 <= eps.exp_m1() * (1.0 + 1e-10) + err);
        }
    }
    // The substitution ε of the box [0, M]^d: Δ = M√d, ε = dM²/s² (rounded up, 1e-14).
    for (d, m, s) in [(1usize, 1.0, 1.0), (3, 0.5, 1.3), (5, 2.0, 0.7)] {
        let eps = gaussian_rdp(2.0, m * (d as f64).sqrt(), s).unwrap();
        let exact = d as f64 * m * m / (s * s);
        assert!(
            eps >= exact * (1.0 - 1e-15) && eps <= exact * (1.0 + 1e-14),
            "d = {d}, M = {m}: {eps} vs {exact}"
        );
    }
}

#[test]
fn guo22_thm1_unbiased_and_biased_bounds_below_monte_carlo_mse() {
    // ẑ = h and ẑ = c·h (c = 0.5) for the target at the centre of four boxes in d = 3, s = 1,
    // N = 200,000 releases (the noise is shared by all boxes: ẑ − z = n does not depend on Z).
    // CI: Σ‖n‖² = s²χ²_{3N} (Laurent–Massart, a_k = s², ‖a‖₂ = s²√(3N), ‖a‖_∞ = s²; two
    // events), and for c·h the cross term 2c(c − 1)zᵀΣn ~ N(0, 4c²(1 − c)² s² N‖z‖²) (Chernoff,
    // two events per box): 2 + 8 = 10 events at e^{−x}, x = ln(10/1e-6) → failure ≤ 1e-6.
    const SEED: u64 = 0x7468_6d32_0101;
    const N: u64 = 200_000;
    const D: usize = 3;
    let s = 1.0;
    let c = 0.5;
    let mut sum_sq = 0.0;
    let mut sum_vec = [0.0; D];
    for t in 0..N {
        let mut rng = Rng::for_trial(SEED, t);
        for v in sum_vec.iter_mut() {
            let n = s * rng.gaussian();
            sum_sq += n * n;
            *v += n;
        }
    }
    let x = tail_x(10.0);
    let nf = N as f64;
    let scale = nf * D as f64;
    let (lo, hi) = laurent_massart(s * s * scale.sqrt(), s * s, x);
    let mse = sum_sq / scale;
    eprintln!(
        "ẑ = h: MSE {mse:.6}, s² = {}, CI [−{:.2e}, +{:.2e}]",
        s * s,
        lo / scale,
        hi / scale
    );
    // ẑ = h attains the Cramér–Rao value s².
    assert!(
        mse >= s * s - lo / scale && mse <= s * s + hi / scale,
        "MSE {mse} vs s² (seed {SEED:#x})"
    );
    let boxes: [[f64; D]; 4] = [[0.25; D], [1.0; D], [3.0; D], [0.5, 1.0, 2.0]];
    for diam in boxes {
        let l2 = diam.iter().map(|v| v * v).sum::<f64>().sqrt();
        let eps = gaussian_rdp(2.0, l2, s).unwrap();
        let sum_diam_sq: f64 = diam.iter().map(|v| v * v).sum();
        let exact = sum_diam_sq / (4.0 * D as f64 * eps.exp_m1());
        let bound = mse_lower_bound_unbiased(eps, &diam).unwrap();
        // Rounded down by ≲ 1e-13 relative (its documented slack).
        assert!(
            bound <= exact && bound >= exact * (1.0 - 1e-12),
            "{diam:?}: {bound} vs {exact}"
        );
        if diam.iter().all(|&v| v == diam[0]) {
            let u = mse_lower_bound_uniform(eps, diam[0], D as u64).unwrap();
            assert!((u - bound).abs() <= 1e-12 * bound, "{u} vs {bound}");
        }
        // Thm 1, unbiased: the Monte Carlo MSE of ẑ = h is not below the bound.
        assert!(
            mse >= bound - lo / scale,
            "{diam:?}: MSE {mse} < bound {bound} (seed {SEED:#x})"
        );
        // With ℓ2 sensitivity the small-box limit is s²/(4d); the bound never exceeds it.
        assert!(bound <= s * s / (4.0 * D as f64));

        // Thm 1, biased: ẑ = c·h, μ(z) = cz, γ_i = c, bias (c − 1)z, z the box centre.
        let z: Vec<f64> = diam.iter().map(|v| 0.5 * v).collect();
        let z_sq: f64 = z.iter().map(|v| v * v).sum();
        let bias_sq = (1.0 - c) * (1.0 - c) * z_sq;
        let biased = mse_lower_bound_biased(eps, &[c; D], &diam, bias_sq).unwrap();
        let exact_b = c * c * exact + bias_sq / D as f64;
        assert!(
            biased <= exact_b && biased >= exact_b * (1.0 - 1e-12),
            "{diam:?}: {biased} vs {exact_b}"
        );
        let z_dot: f64 = z.iter().zip(&sum_vec).map(|(a, b)| a * b).sum();
        let sum_c = c * c * sum_sq + 2.0 * c * (c - 1.0) * z_dot + nf * bias_sq;
        let mse_c = sum_c / scale;
        let g = 2.0 * c * (1.0 - c) * gaussian_width(s * (nf * z_sq).sqrt(), x);
        let true_c = c * c * s * s + bias_sq / D as f64;
        assert!(
            mse_c >= true_c - (c * c * lo + g) / scale
                && mse_c <= true_c + (c * c * hi + g) / scale,
            "{diam:?}: shrinkage MSE {mse_c} vs {true_c} (seed {SEED:#x})"
        );
        assert!(
            mse_c >= biased - (c * c * lo + g) / scale,
            "{diam:?}: shrinkage MSE {mse_c} < biased bound {biased} (seed {SEED:#x})"
        );
    }
}

#[test]
fn guo22_thm1_small_diameter_limit_is_quarter_variance() {
    // d = 1, Z = [0, M]: ε = M²/s², bound M²/(4(e^ε − 1)) = (M²/(4ε))·ε/(e^ε − 1), and for
    // 0 < x ≤ 1: 1 − x/2 ≤ x/(e^x − 1) ≤ 1 − x/2 + x²/12 (Bernoulli series; the lower side is
    // g(x) = x − (1 − x/2)(e^x − 1) ≥ 0 since g(0) = 0, g′ = (1 + (x − 1)e^x)/2 ≥ 0). Brackets
    // are widened by 1e-12 relative for the library's rounding (documented ≲ 2e-13). At
    // M = 1e-5 the bracket is 1e-12 wide while a naive exp(ε) − 1 would be off by ~1e-6:
    // the test pins both the limit s²/4 and the first-order term −(s²/4)·ε/2.
    for s in [1.0, 0.37] {
        let mut gaps = Vec::new();
        for m in [1e-3, 1e-5] {
            let eps = gaussian_rdp(2.0, m, s).unwrap();
            let f = mse_lower_bound_uniform(eps, m, 1).unwrap();
            let base = m * m / (4.0 * eps);
            let lo = base * (1.0 - eps / 2.0) * (1.0 - 1e-12);
            let hi = base * (1.0 - eps / 2.0 + eps * eps / 12.0) * (1.0 + 1e-12);
            assert!(
                f >= lo && f <= hi,
                "s = {s}, M = {m}: {f} not in [{lo}, {hi}]"
            );
            let quarter = s * s / 4.0;
            assert!(f <= quarter, "s = {s}, M = {m}: {f} > s²/4 = {quarter}");
            gaps.push((quarter - f) / quarter);
        }
        // The relative gap to s²/4 is ≈ ε/2: it shrinks by (1e-3/1e-5)² = 1e4. ±1%: the
        // library's rounding (≲ 2e-13 relative) is ≤ 0.4% of the 5e-11 gap at M = 1e-5.
        let ratio = gaps[0] / gaps[1];
        assert!(
            (ratio / 1e4 - 1.0).abs() < 1e-2,
            "s = {s}: gap ratio {ratio}"
        );
    }
}

#[test]
fn guo22_thm1_rdp_bound_below_fil_bound() {
    // For the same mechanism z + N(0, s²I_d) on [0, M]^d, Thm 1 gives
    // M²/(4(e^{dM²/s²} − 1)) ≤ s²/(4d) while Thm 2 (FIL: I = I_d/s², trace d/s²) gives s², the
    // estimator ẑ = h's actual MSE. Check Thm 1 ≤ s²/(4d) ≤ s² = Thm 2 (to 1e-12) on a grid,
    // and that Thm 1 decreases in M (x/(e^x − 1) decreases) and vanishes for large boxes.
    for d in [1usize, 2, 5] {
        for s in [0.5, 2.0] {
            let column = |i: usize, out: &mut [f64]| {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = if k == i { 1.0 } else { 0.0 };
                }
                Ok(())
            };
            let coords: Vec<usize> = (0..d).collect();
            let tr = gaussian_fisher_trace(d, d, s, &coords, column).unwrap();
            assert!((tr - d as f64 / (s * s)).abs() <= 1e-12 * tr, "{tr}");
            let fil = unbiased_mse_bound(tr, d).unwrap();
            assert!((fil - s * s).abs() <= 1e-12 * s * s, "{fil}");
            let mut prev = f64::INFINITY;
            for m in [1e-4, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0] {
                let eps = gaussian_rdp(2.0, m * (d as f64).sqrt(), s).unwrap();
                let b = mse_lower_bound_uniform(eps, m, d as u64).unwrap();
                assert!(
                    b >= 0.0 && b <= s * s / (4.0 * d as f64) && b < fil,
                    "d = {d}, s = {s}, M = {m}: Thm 1 {b} vs Thm 2 {fil}"
                );
                assert!(b <= prev, "d = {d}, s = {s}, M = {m}: not decreasing");
                prev = b;
            }
            // M = 20: ε ≥ 100, the bound is < 100·e^{−100} (worthless, as Guo §4 notes).
            assert!(prev < 1e-40, "{prev}");
        }
    }
}
