//! Hayes, Mahloujifar, Balle 2023 (Thm 2 / Cor. 3): γ for DP-SGD.

use crate::common::{read_csv, rel_err};
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::rero::dpsgd::{
    gamma, gamma_full_batch, gamma_monte_carlo, gamma_numerical,
};

#[test]
fn hayes23_full_batch_gamma_matches_reference_vectors() {
    // ../shared/vectors/rero_full_batch.csv (closed form Φ(Φ⁻¹(κ) + √T/σ) at high precision):
    // relative 1e-12, the accuracy of Φ and Φ⁻¹; and one-sided: the certified value is never
    // below the reference, the certified lower value never above it.
    for row in read_csv("rero_full_batch.csv") {
        let (kappa, sigma, steps, reference) = (row[0], row[1], row[2] as u64, row[3]);
        let g = gamma(kappa, 1.0, sigma, steps).unwrap();
        assert!(rel_err(g.gamma, reference) <= 1e-12, "{row:?}: {g:?}");
        assert!(
            g.lower <= reference && reference <= g.gamma,
            "{row:?}: {g:?}"
        );
        let c = gamma_full_batch(kappa, sigma, steps).unwrap();
        assert!(rel_err(c, reference) <= 1e-12, "{row:?}: {c}");
        assert!(c >= reference, "{row:?}: {c} below the reference");
    }
    // The reviewer's case (mpmath, 30 digits): κ far in the tail, where Φ⁻¹'s error is
    // amplified by |z|; the unrounded closed form came out 3.7e-14 relative below it.
    let c = gamma_full_batch(9.578371404649841e-146, 0.7127273119936723, 1).unwrap();
    assert!(c >= 1.6847080162610214e-130, "{c}");
    assert!(rel_err(c, 1.6847080162610214e-130) <= 1e-11, "{c}");
}

#[test]
fn hayes23_numerical_gamma_brackets_closed_form_at_q_one() {
    // The PLD method at q = 1 must bracket the closed form (1e-12 slack for Φ) with a stated
    // error ≤ 1e-5 at the default settings.
    for &(kappa, sigma, steps) in &[
        (0.1, 1.0, 1u64),
        (0.01, 2.0, 100),
        (0.5, 4.0, 10),
        (0.001, 0.7, 3),
    ] {
        let exact = gamma_full_batch(kappa, sigma, steps).unwrap();
        let g = gamma_numerical(kappa, 1.0, sigma, steps, &PldConfig::default()).unwrap();
        assert!(
            g.lower <= exact + 1e-12 && exact <= g.gamma + 1e-12,
            "κ={kappa} σ={sigma} T={steps}: {g:?} vs {exact}"
        );
        assert!(
            g.gamma - g.lower <= 1e-5,
            "κ={kappa} σ={sigma} T={steps}: {g:?}"
        );
    }
}

#[test]
fn hayes23_exact_gamma_agrees_with_monte_carlo_1e6_samples() {
    // Hayes et al. estimate γ by Monte Carlo with 10⁶ samples. The certified bracket must be
    // consistent with a 10⁶-sample run: γ.lower ≤ mc.upper (one-sided bound at confidence
    // 1 − 1e-7), and mc.estimate ≥ γ.lower − 5.3·sd, sd from the binomial count plus the
    // τ̂ quantile error propagated with slope e^τ ≤ γ/κ (γ concave in κ): failure
    // probability ≲ 1e-7 each. T = 10 keeps this ~1 s per case at opt-level 2.
    let n = 1_000_000u64;
    for (i, &(kappa, q)) in [(0.1, 0.01), (0.1, 0.1), (0.05, 0.5)].iter().enumerate() {
        let seed = 20230 + i as u64;
        let g = gamma(kappa, q, 1.0, 10).unwrap();
        assert!(
            g.gamma - g.lower <= 1e-5,
            "q={q}: stated error {}",
            g.gamma - g.lower
        );
        let mc = gamma_monte_carlo(kappa, q, 1.0, 10, n, seed, 1.0 - 1e-7).unwrap();
        assert!(g.lower <= mc.upper, "seed {seed}, q={q}: {g:?} vs {mc:?}");
        let nf = n as f64;
        let sd = (g.gamma * (1.0 - g.gamma) / nf).sqrt()
            + g.gamma / kappa * (kappa * (1.0 - kappa) / nf).sqrt();
        assert!(
            (mc.estimate - g.gamma).abs() <= 5.3 * sd,
            "seed {seed}, q={q}: {g:?} vs {mc:?} (sd {sd})"
        );
    }
}

#[test]
fn hayes23_monte_carlo_is_deterministic_and_shardable() {
    // Same seed → bit-identical result; the upper bound covers the q = 1 closed form.
    let a = gamma_monte_carlo(0.1, 0.3, 1.0, 5, 20_000, 99, 0.999).unwrap();
    let b = gamma_monte_carlo(0.1, 0.3, 1.0, 5, 20_000, 99, 0.999).unwrap();
    assert_eq!(a, b);
    let exact = gamma_full_batch(0.1, 1.0, 4).unwrap();
    let mc = gamma_monte_carlo(0.1, 1.0, 1.0, 4, 50_000, 7, 1.0 - 1e-7).unwrap();
    assert!(mc.upper >= exact, "seed 7: {mc:?} vs {exact}");
}

#[test]
fn hayes23_gamma_default_error_at_most_1e_5_for_q_001_t_100() {
    // The performance case of the design: (q = 0.01, σ = 1, T = 100, κ = 0.1).
    let g = gamma(0.1, 0.01, 1.0, 100).unwrap();
    assert!(
        g.gamma - g.lower <= 1e-5 && g.lower >= 0.1 && g.gamma <= 1.0,
        "{g:?}"
    );
    // the bracket is also consistent with a finer computation
    let fine = PldConfig {
        value_discretization_interval: 3e-5,
        max_points: 1 << 16,
        ..PldConfig::default()
    };
    let h = gamma_numerical(0.1, 0.01, 1.0, 100, &fine).unwrap();
    assert!(h.lower <= g.gamma && g.lower <= h.gamma, "{g:?} vs {h:?}");
}

#[test]
fn small_kappa_gamma_brackets_closed_forms_down_to_1e_12() {
    // Issue 13.1: γ certified and tight down to κ = 1e-12 (before, the lower bound collapsed
    // to κ and the upper was 100× loose at κ = 1e-12 on MNIST). Exact references:
    // q = 1, the closed form Φ(Φ⁻¹(κ) + √T/σ) (σ up to 1000); T = 1, any q,
    // γ = (1 − q)κ + q·Φ̄(Φ⁻¹(1 − κ) − 1/σ) (L is increasing in x, so the Neyman–Pearson set is
    // {x > σΦ⁻¹(1 − κ)}). Containment with 1e-12 relative slack (Φ), width ≤ 1e-3·γ.
    use reconbound::math::normal;
    let c = PldConfig::default();
    for &k in &[1e-3, 1e-6, 1e-9, 1e-12] {
        for &(sigma, steps) in &[(1.0, 1u64), (30.0, 10), (5.0, 1000), (1000.0, 10000)] {
            let g = gamma_numerical(k, 1.0, sigma, steps, &c).unwrap();
            let exact = gamma_full_batch(k, sigma, steps).unwrap();
            assert!(
                g.lower <= exact * (1.0 + 1e-12) && exact <= g.gamma * (1.0 + 1e-12),
                "q=1 κ={k} σ={sigma} T={steps}: {g:?} vs {exact}"
            );
            assert!(g.gamma - g.lower <= 1e-3 * exact, "κ={k} σ={sigma}: {g:?}");
        }
        for &(q, sigma) in &[(0.01, 1.0), (0.3, 0.5), (0.001, 0.3), (0.5, 3.0)] {
            let g = gamma_numerical(k, q, sigma, 1, &c).unwrap();
            let x = -sigma * normal::quantile(k).unwrap();
            let exact = (1.0 - q) * k + q * normal::sf((x - 1.0) / sigma);
            assert!(
                g.lower <= exact * (1.0 + 1e-12) && exact <= g.gamma * (1.0 + 1e-12),
                "T=1 q={q} κ={k} σ={sigma}: {g:?} vs {exact}"
            );
            assert!(g.gamma - g.lower <= 1e-3 * exact, "T=1 q={q} κ={k}: {g:?}");
        }
    }
}

#[test]
fn small_kappa_gamma_matches_dp_accounting_single_direction() {
    // γ = min_ε [e^ε κ + H_{e^ε}(μ_T‖ν_T)] from dp_accounting 0.6.0 (connect the dots,
    // log_mass_truncation_bound −80, tail_mass_truncation 1e-30; its `_pmf_remove` is μ‖ν),
    // minimised over ε ∈ [−1, 40) step 1e-3. Both its grid and the ε-grid overestimate, so
    // it must be ≥ our certified lower bound, and ≤ our upper bound + 1e-4 relative (measured
    // ≤ 4.3e-5: grid 1e-4 for MNIST); at κ = 1e-12 its FFT noise is ~0.2 % (q = 0.01:
    // 1.68514e-11 at grid 1e-4, 1.68829e-11 at grid 1e-5), the stated tolerance there.
    let mnist = (256.0 / 60000.0, 1.1, 14063u64);
    let small = (0.01, 1.0, 100u64);
    // ((q, σ, T), κ, dp_accounting γ, relative tolerance)
    type Row = ((f64, f64, u64), f64, f64, f64);
    let rows: [Row; 8] = [
        (mnist, 1e-3, 0.00605098172658246, 1e-4),
        (mnist, 1e-6, 1.5526813475857896e-05, 1e-4),
        (mnist, 1e-9, 3.245848310825133e-08, 1e-4),
        (mnist, 1e-12, 6.101108445581256e-11, 1e-4),
        (small, 1e-3, 0.0017761766847859402, 1e-4),
        (small, 1e-6, 3.2810534742360624e-06, 1e-4),
        (small, 1e-9, 7.316355715592954e-09, 1e-4),
        (small, 1e-12, 1.6882914593609448e-11, 2e-3),
    ];
    for &((q, sigma, steps), k, reference, tol) in &rows {
        let g = gamma(k, q, sigma, steps).unwrap();
        assert!(
            g.lower * (1.0 - tol) <= reference && reference <= g.gamma * (1.0 + tol),
            "q={q} κ={k}: {g:?} vs dp_accounting {reference}"
        );
        assert!(g.gamma - g.lower <= 1e-3 * g.gamma, "q={q} κ={k}: {g:?}");
    }
    // σ = 1000: γ − κ ≈ 0.2 % of κ; the bracket must resolve it (width ≤ 1e-3·(γ − κ))
    let g = gamma(1e-12, mnist.0, 1000.0, mnist.2).unwrap();
    assert!(g.gamma - g.lower <= 1e-3 * (g.gamma - 1e-12), "{g:?}");
}

#[test]
fn gamma_never_exceeds_its_noiseless_limit() {
    // γ ≤ 1 − (1 − q)^T(1 − κ) for every σ (the target is never sampled with probability
    // (1 − q)^T); at tiny σ the certified bound is capped there instead of at 1.
    use reconbound::accounting::rero::dpsgd::gamma_noiseless_limit;
    let (k, q, steps) = (0.001, 0.0001, 1000u64);
    let lim = gamma_noiseless_limit(k, q, steps).unwrap();
    let exact = 1.0 - (1.0 - q).powi(steps as i32) * (1.0 - k);
    assert!(
        lim >= exact && lim <= exact * (1.0 + 1e-10),
        "{lim} vs {exact}"
    );
    for &sigma in &[0.1, 0.3, 1.0] {
        let g = gamma(k, q, sigma, steps).unwrap();
        assert!(g.gamma <= lim && g.lower <= g.gamma, "σ={sigma}: {g:?}");
    }
}

#[test]
fn hayes23_gamma_falls_back_to_its_noiseless_cap_when_the_pld_overflows() {
    // κ = 1e-300 with q = 1e-12: the tilted composition has no finite Neyman–Pearson value;
    // γ is then the σ → 0 limit 1 − (1 − q)^T(1 − κ) (valid for every σ: μ_T = p₀ν_T +
    // (1 − p₀)ρ), rounded up by at most 1e-9 relative, instead of an error. Exact:
    // 1 − (1 − 1e-12)^100 (1 − 1e-300) = 1e-10 − 4950e-24 + … = 9.99999999950500e-11.
    let g = gamma(1e-300, 1e-12, 1.0, 100).unwrap();
    let limit =
        reconbound::accounting::rero::dpsgd::gamma_noiseless_limit(1e-300, 1e-12, 100).unwrap();
    assert!(
        g.gamma >= 9.999_999_999_505e-11 && g.gamma <= limit && limit <= 1.000_000_001e-10,
        "{g:?} {limit}"
    );
    assert!(g.lower >= 1e-300 && g.lower <= g.gamma, "{g:?}");
}
