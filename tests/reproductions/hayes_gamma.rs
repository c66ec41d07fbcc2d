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
