//! Property tests for the ReRo, Fano and MSE bounds (Balle 2022 Thm 2 / Cor. 3; Guo 2022b
//! Fano as in Hayes 2023 App. H; Guo 2022 Thm 1).

use proptest::prelude::*;
use reconbound::accounting::fano::fano_closed_form;
use reconbound::accounting::mse::{mse_lower_bound_unbiased, mse_lower_bound_uniform};
use reconbound::accounting::rero::balle::{gamma_from_dp, gamma_from_rdp};

/// Gaussian RDP α Δ²/(2σ²) at the given orders (computed inline, sensitivity Δ).
fn gaussian_rdp(orders: &[f64], sigma: f64, sens_sq: f64) -> Vec<f64> {
    orders
        .iter()
        .map(|a| a * sens_sq / (2.0 * sigma * sigma))
        .collect()
}

const ORDERS: [f64; 8] = [1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 64.0];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn balle22_thm2_gamma_in_kappa_one(kappa in 1e-12f64..=1.0, sigma in 1e-3f64..1e4) {
        let rdp = gaussian_rdp(&ORDERS, sigma, 1.0);
        let g = gamma_from_rdp(kappa, &ORDERS, &rdp).unwrap();
        prop_assert!(g.gamma.is_finite() && g.gamma >= kappa && g.gamma <= 1.0);
        prop_assert!(ORDERS.contains(&g.order));
    }

    #[test]
    fn balle22_thm2_monotone_in_kappa_and_epsilon(
        k1 in 1e-9f64..=1.0, k2 in 1e-9f64..=1.0, e1 in 0.0f64..50.0, e2 in 0.0f64..50.0,
    ) {
        let (klo, khi) = (k1.min(k2), k1.max(k2));
        let (elo, ehi) = (e1.min(e2), e1.max(e2));
        let orders = [2.0, 4.0, 10.0];
        let at = |k: f64, e: f64| gamma_from_rdp(k, &orders, &[e, 2.0 * e, 5.0 * e]).unwrap().gamma;
        prop_assert!(at(klo, elo) <= at(khi, elo));
        prop_assert!(at(klo, elo) <= at(klo, ehi));
        let dp = |k: f64, e: f64| gamma_from_dp(k, e).unwrap();
        prop_assert!(dp(klo, elo) <= dp(khi, elo));
        prop_assert!(dp(klo, elo) <= dp(klo, ehi));
        prop_assert!(dp(klo, elo) >= klo && dp(klo, elo) <= 1.0);
    }

    #[test]
    fn fano_success_in_range_and_non_increasing_in_sigma(
        m in 2u64..2000, s1 in 1e-3f64..1e4, s2 in 1e-3f64..1e4,
    ) {
        let (slo, shi) = (s1.min(s2), s1.max(s2));
        let a = fano_closed_form(m, slo, 2.0).unwrap();
        let b = fano_closed_form(m, shi, 2.0).unwrap();
        let p = 1.0 / m as f64;
        for x in [a, b] {
            prop_assert!(x.success_bound.is_finite() && x.advantage.is_finite());
            prop_assert!(x.success_bound >= p && x.success_bound <= 1.0);
            prop_assert!(x.advantage >= 0.0 && x.advantage <= 1.0);
        }
        // Non-increasing in σ (up to the 1e-12 certification step of the root).
        prop_assert!(b.success_bound <= a.success_bound + 1e-12, "{a:?} {b:?}");
    }

    #[test]
    fn guo22_thm1_mse_decreasing_in_epsilon(
        e1 in 1e-6f64..1e6, e2 in 1e-6f64..1e6, diam in 1e-3f64..1e3, d in 1usize..50,
    ) {
        let (elo, ehi) = (e1.min(e2), e1.max(e2));
        let lo = mse_lower_bound_uniform(elo, diam, d as u64).unwrap();
        let hi = mse_lower_bound_uniform(ehi, diam, d as u64).unwrap();
        prop_assert!(lo.is_finite() && hi.is_finite() && hi >= 0.0);
        prop_assert!(hi <= lo);
        if ehi > elo * (1.0 + 1e-6) && ehi < 700.0 {
            prop_assert!(hi < lo);
        }
        let v = mse_lower_bound_unbiased(elo, &vec![diam; d]).unwrap();
        // Underflows to 0 (still a valid lower bound) once e^{-ε} does.
        prop_assert!(v.is_finite() && v >= 0.0);
        if elo < 600.0 {
            prop_assert!(v > 0.0);
        }
    }
}

#[test]
fn extreme_valid_inputs_are_finite() {
    for sigma in [1e-3, 1e4] {
        let g = gamma_from_rdp(0.01, &ORDERS, &gaussian_rdp(&ORDERS, sigma, 1.0)).unwrap();
        assert!(g.gamma.is_finite() && (0.01..=1.0).contains(&g.gamma));
        let f = fano_closed_form(100, sigma, 2.0).unwrap();
        assert!(f.success_bound.is_finite() && f.advantage.is_finite());
    }
    assert_eq!(gamma_from_dp(0.01, 1e6).unwrap(), 1.0);
    assert_eq!(gamma_from_rdp(0.01, &[2.0], &[1e6]).unwrap().gamma, 1.0);
    let m = mse_lower_bound_uniform(1e6, 1.0, 784).unwrap();
    assert!(m.is_finite() && m >= 0.0);
}
