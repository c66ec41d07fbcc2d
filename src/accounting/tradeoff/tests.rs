//! Tests of the trade-off curve: closed forms, the crate's γ, peer values (riskcal 1.5.1,
//! Riess et al. 2026) and the brackets' soundness.

use super::*;
use crate::accounting::rero::balle::gamma_from_rdp;
use crate::accounting::rero::dpsgd;
use crate::accounting::schedule::Phase;

fn phase(q: f64, sigma: f64, steps: u64) -> Schedule {
    match Schedule::single(Phase {
        sampling_rate: q,
        noise_multiplier: sigma,
        steps,
    }) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// Orders 1.05–3 by 0.05 and 3.5–31.5 by 0.5: the grid the reference values of Riess et
/// al.'s conversion were computed on (notes/tradeoff-and-audits.md).
fn riess_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (21..=60).map(|i| f64::from(i) * 0.05).collect();
    v.extend((7..=63).map(|i| f64::from(i) * 0.5));
    v
}

fn gaussian_rdp(mu: f64, orders: &[f64]) -> Vec<f64> {
    orders.iter().map(|a| a * mu * mu / 2.0).collect()
}

#[test]
fn gaussian_beta_is_the_gdp_closed_form_to_1e_14() {
    // f(α) = Φ(Φ⁻¹(1 − α) − μ); the bracket contains it and is at most 1e-13 wide
    // (Φ and Φ⁻¹ are accurate to ~1e-15 relative; the bracket allows 1e-14).
    for &mu in &[0.1, 0.5, 1.0, 2.0, 5.0] {
        let f = TradeoffCurve::gaussian(mu).unwrap();
        for &a in &[1e-6, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999] {
            let exact = normal::sf(normal::quantile(a).unwrap() + mu);
            let b = f.beta(a).unwrap();
            assert!(
                b.lower <= exact * (1.0 + 1e-15) && exact * (1.0 - 1e-15) <= b.upper,
                "mu {mu} alpha {a}: {b:?} vs {exact}"
            );
            assert!(b.width() <= 1e-13 + 1e-13 * exact, "{b:?}");
        }
    }
}

#[test]
fn full_batch_gamma_is_hayes_theorem_2_bit_for_bit() {
    // q = 1: the curve's γ is the same closed form as rero::dpsgd::gamma (same bracket).
    for &(sigma, steps, kappa) in &[
        (1.0, 1, 0.1),
        (6.376702409523684, 100, 0.1),
        (0.5, 10, 0.01),
    ] {
        let f = TradeoffCurve::of_schedule(&phase(1.0, sigma, steps), 0.01, &PldConfig::default())
            .unwrap();
        let g = f.gamma(kappa).unwrap();
        let h = dpsgd::gamma(kappa, 1.0, sigma, steps).unwrap();
        assert_eq!((g.lower, g.upper), (h.lower, h.gamma));
    }
}

#[test]
fn riskcal_full_batch_beta_is_within_its_discretisation_of_the_bracket() {
    // riskcal 1.5.1 get_beta_for_dpsgd(σ = 6.376702409523684, q = 1, T = 100, α = 0.1) =
    // 0.3871876 (7 digits) from a PLD on grid 1e-4; the exact value is 0.38718744, so
    // riskcal is 1.6e-7 off: tolerance 2e-7 (its discretisation, measured).
    let f = TradeoffCurve::of_schedule(
        &phase(1.0, 6.376702409523684, 100),
        0.01,
        &PldConfig::default(),
    )
    .unwrap();
    let b = f.beta(0.1).unwrap();
    assert!(b.width() < 1e-13, "{b:?}");
    assert!(
        b.lower - 2e-7 <= 0.3871876 && 0.3871876 <= b.upper + 2e-7,
        "{b:?}"
    );
}

#[test]
fn abadi_default_matches_dp_accounting_per_direction_and_riskcal_advantage() {
    // q = 256/60000, σ = 1.1, T = 14,063. Peer values from dp_accounting 0.6.0's own PLD
    // (from_gaussian_mechanism, connect-dots, grid 1e-4, self_compose), per direction:
    // 1 − f(α) = min_ε e^ε α + δ(ε) on ε ∈ [−1, 6] by 1e-3. dp_accounting's "remove"
    // PLD is this crate's Add (μ‖ν) and its "add" our Remove. Tolerance 2e-5: grid 1e-4
    // (pessimistic, second order) and the ε grid of the minimum (both overstate).
    // riskcal 1.5.1's advantage (δ(0)) 0.2244785 is compared the same way; its
    // symmetrised β (0.9602004 at α = 0.01, TPR 0.0397996) lies between the directions
    // and is not the envelope (at α = 0.001 it is below both directions: 0.005535).
    let f = TradeoffCurve::of_schedule(
        &phase(256.0 / 60000.0, 1.1, 14063),
        1e-3,
        &PldConfig::default(),
    )
    .unwrap();
    assert_eq!(f.source(), Source::Pld);
    let Kind::Pld { add, remove, .. } = &f.kind else {
        panic!("not a PLD curve");
    };
    for &(a, dp_ours_add, dp_ours_remove) in &[
        (0.001, 0.006050981726912447, 0.005701166979719584),
        (0.01, 0.04020818313752075, 0.038906875871011264),
        (0.1, 0.23962824787740367, 0.23732571551730927),
    ] {
        // add: its own pair; remove: its scout's upper bound and the add pair reversed
        // (T(ν, μ) = T(μ, ν)⁻¹), wide below the crossing where the envelope does not use it
        let (up, lo) = (&add.0, &add.1);
        for (hi, lo, want, width) in [
            (
                up.neyman_pearson(a),
                lo.neyman_pearson(a),
                dp_ours_add,
                3e-5,
            ),
            (
                remove.neyman_pearson(a).min(up.neyman_pearson_reversed(a)),
                lo.neyman_pearson_reversed(a),
                dp_ours_remove,
                1.0,
            ),
        ] {
            // the bracket's own width: the grid's second-order error (measured ≤ 1.3e-5)
            assert!(hi - lo < width, "α {a}: [{lo}, {hi}]");
            assert!(
                lo - 2e-5 <= want && want <= hi + 2e-5,
                "α {a}: [{lo}, {hi}] vs {want}"
            );
        }
        let tpr = f.tpr(a).unwrap();
        assert!(tpr.lower - 2e-5 <= dp_ours_add && dp_ours_add <= tpr.upper + 2e-5);
        assert!(tpr.width() < 3e-5, "α {a}: {tpr:?}");
    }
    let adv = f.advantage();
    assert!(adv.width() < 1e-4, "{adv:?}");
    assert!(
        adv.lower - 2e-5 <= 0.2244785 && 0.2244785 <= adv.upper + 2e-5,
        "{adv:?}"
    );
}

#[test]
fn poisson_gamma_lies_in_the_crates_hayes_bracket() {
    // The curve's γ is rero::dpsgd::gamma's (κ-targeted grid and tilt) bit for bit when its
    // resolution is κ; at another resolution the brackets overlap (both contain γ).
    for &(q, sigma, steps, kappa) in &[
        (0.01, 1.0, 100, 0.1),
        (256.0 / 60000.0, 1.1, 14063, 0.1),
        (0.1, 2.0, 50, 0.01),
    ] {
        let f = TradeoffCurve::of_schedule(&phase(q, sigma, steps), kappa, &PldConfig::default())
            .unwrap();
        let g = f.gamma(kappa).unwrap();
        let h = dpsgd::gamma(kappa, q, sigma, steps).unwrap();
        // one implementation: with the resolution at κ, the same bits
        assert_eq!((g.lower, g.upper), (h.lower, h.gamma));
        // at another resolution, another grid: the brackets still overlap
        let coarse =
            TradeoffCurve::of_schedule(&phase(q, sigma, steps), 0.5, &PldConfig::default())
                .unwrap()
                .gamma(kappa)
                .unwrap();
        assert!(
            coarse.lower <= h.gamma && h.lower <= coarse.upper,
            "{coarse:?} vs {h:?}"
        );
        assert!(coarse.width() < 1e-4, "{coarse:?}");
    }
}

#[test]
fn membership_envelope_is_at_least_the_add_direction() {
    // TPR (envelope of both directions) ≥ γ's add direction at the same level.
    let f =
        TradeoffCurve::of_schedule(&phase(0.01, 1.0, 1000), 1e-3, &PldConfig::default()).unwrap();
    for &a in &[1e-3, 0.01, 0.1, 0.5] {
        assert!(f.tpr(a).unwrap().upper >= f.gamma(a).unwrap().lower);
    }
}

#[test]
fn riess_conversion_reproduces_the_reference_values_and_beats_balle() {
    // Reference (notes/tradeoff-and-audits.md, checked by direct bisection): γ = 1 − f(κ)
    // on the Gaussian RDP curve, orders of riess_orders(): (κ, μ) = (0.1, 2) → 0.92815,
    // (0.1, 1) → 0.48375, (0.01, 2) → 0.54884 (printed to 5 digits: ±5e-6).
    let orders = riess_orders();
    for &(kappa, mu, want, exact) in &[
        (0.1, 2.0, 0.92815, 0.76376),
        (0.1, 1.0, 0.48375, 0.38914),
        (0.01, 2.0, 0.54884, 0.37208),
    ] {
        let rdp = gaussian_rdp(mu, &orders);
        let f = TradeoffCurve::from_rdp(&orders, &rdp).unwrap();
        let g = f.gamma(kappa).unwrap();
        assert!(
            (g.upper - want).abs() < 5e-6 + 1e-9,
            "κ {kappa} μ {mu}: {g:?}"
        );
        assert!(g.width() < 1e-12, "{g:?}");
        assert!(g.upper > exact, "never below the exact curve");
        let balle = gamma_from_rdp(kappa, &orders, &rdp).unwrap().gamma;
        assert!(g.upper < balle, "strictly below Balle's {balle}: {g:?}");
    }
}

#[test]
fn riess_gamma_lies_between_exact_and_balle_on_random_gaussians() {
    // Property: for random μ ∈ (0.1, 4) and κ ∈ (1e-4, 0.5), the exact Φ(Φ⁻¹(κ) + μ) ≤ the
    // RDP γ ≤ Balle's (1e-12 slack for rounding). Fixed seed 0x7ade0ff.
    let mut rng = crate::rng::Rng::from_seed(0x7ade0ff);
    let orders: Vec<f64> = rdp::DEFAULT_ORDERS.to_vec();
    for _ in 0..200 {
        let mu = 0.1 + 3.9 * rng.uniform();
        let kappa = libm::exp(libm::log(1e-4) + (libm::log(0.5) - libm::log(1e-4)) * rng.uniform());
        let rdp = gaussian_rdp(mu, &orders);
        let f = TradeoffCurve::from_rdp(&orders, &rdp).unwrap();
        let g = f.gamma(kappa).unwrap().upper;
        let exact = normal::cdf(normal::quantile(kappa).unwrap() + mu);
        let balle = gamma_from_rdp(kappa, &orders, &rdp).unwrap().gamma;
        assert!(
            exact <= g + 1e-12 && g <= balle + 1e-12,
            "μ {mu} κ {kappa}: {exact} {g} {balle}"
        );
    }
}

#[test]
fn a_wrong_constant_in_the_conversion_is_caught() {
    // Negative control: dropping the second Rényi inequality (g₂) gives a looser γ at
    // (κ, μ) = (0.1, 2) than the reference 0.92815, so the reference test above can fail.
    let orders = riess_orders();
    let rdp = gaussian_rdp(2.0, &orders);
    let mut best: f64 = 0.0;
    for (&a, &rho) in orders.iter().zip(&rdp) {
        // g₁ alone: (1 − κ)^{1−a} y^a + κ^{1−a}(1 − y)^a ≤ e^{(a−1)ρ}, smallest y by bisection
        let (mut lo, mut hi) = (0.0f64, 0.9f64);
        for _ in 0..100 {
            let y = 0.5 * (lo + hi);
            let g1 = libm::pow(0.9, 1.0 - a) * libm::pow(y, a)
                + libm::pow(0.1, 1.0 - a) * libm::pow(1.0 - y, a);
            if g1 > libm::exp((a - 1.0) * rho) {
                lo = y;
            } else {
                hi = y;
            }
        }
        best = best.max(lo);
    }
    assert!(
        (1.0 - best) - 0.92815 > 1e-3,
        "g₁ alone gives γ {}",
        1.0 - best
    );
}

#[test]
fn advantage_and_bayes_accuracy_of_the_gaussian_are_closed_forms() {
    // TV of μ-GDP = 2Φ(μ/2) − 1; Bayes accuracy at π = 1/2 = (1 + TV)/2; Bayes security
    // 2Φ(−μ/2) (Cherubin et al. 2024, q = 1). Tolerance 1e-13 (rounding).
    for &mu in &[0.3, 1.0, 3.0] {
        let f = TradeoffCurve::gaussian(mu).unwrap();
        let tv = 2.0 * normal::cdf(mu / 2.0) - 1.0;
        let a = f.advantage();
        assert!(
            a.lower <= tv && tv <= a.upper && a.width() < 1e-13,
            "{a:?} {tv}"
        );
        let acc = f.bayes_accuracy(0.5).unwrap();
        let want = 0.5 + tv / 2.0;
        assert!(
            acc.lower <= want + 1e-15 && want - 1e-15 <= acc.upper,
            "{acc:?} {want}"
        );
    }
}

#[test]
fn pld_bayes_accuracy_at_one_half_is_half_plus_half_the_advantage() {
    let f =
        TradeoffCurve::of_schedule(&phase(0.05, 1.0, 200), 1e-3, &PldConfig::default()).unwrap();
    let adv = f.advantage();
    let acc = f.bayes_accuracy(0.5).unwrap();
    assert!(acc.lower <= 0.5 + adv.upper / 2.0 + 1e-15);
    assert!(0.5 + adv.lower / 2.0 <= acc.upper + 1e-15);
    // a skewed prior: never below the blind guess
    let skew = f.bayes_accuracy(0.9).unwrap();
    assert!(skew.lower >= 0.9 && skew.upper <= 1.0);
}

#[test]
fn rdp_source_advantage_bounds_the_gaussian_truth_from_above() {
    // The RDP-implied curve lies below the true Gaussian curve, so its advantage (upper)
    // is at least the true TV.
    let orders = rdp::DEFAULT_ORDERS.to_vec();
    for &mu in &[0.5, 1.0, 2.0] {
        let f = TradeoffCurve::from_rdp(&orders, &gaussian_rdp(mu, &orders)).unwrap();
        let tv = 2.0 * normal::cdf(mu / 2.0) - 1.0;
        let a = f.advantage();
        assert!(a.upper >= tv, "μ {mu}: {a:?} < {tv}");
        assert!(a.lower <= a.upper);
    }
}

#[test]
fn bad_levels_are_refused_naming_the_parameter() {
    let f = TradeoffCurve::gaussian(1.0).unwrap();
    for (r, name) in [
        (f.beta(-0.1).map(|_| ()), "alpha"),
        (f.beta(f64::NAN).map(|_| ()), "alpha"),
        (f.tpr(1.5).map(|_| ()), "alpha"),
        (f.gamma(0.0).map(|_| ()), "kappa"),
        (f.bayes_accuracy(1.0).map(|_| ()), "prior"),
        (TradeoffCurve::gaussian(0.0).map(|_| ()), "mu"),
        (TradeoffCurve::from_rdp(&[2.0], &[-1.0]).map(|_| ()), "rdp"),
        (
            TradeoffCurve::from_rdp(&[1.0], &[1.0]).map(|_| ()),
            "orders",
        ),
    ] {
        match r {
            Err(crate::Error::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(f.points(1, 1e-3).is_err() && f.points(10, 0.5).is_err());
}

#[test]
fn points_span_resolution_to_one_and_decrease() {
    let f = TradeoffCurve::gaussian(1.0).unwrap();
    let p = f.points(50, 1e-4).unwrap();
    assert_eq!(p.len(), 50);
    assert!((p[0].0 - 1e-4).abs() < 1e-18 && p[49].0 == 1.0);
    for w in p.windows(2) {
        assert!(w[0].0 < w[1].0 && w[0].1.lower >= w[1].1.lower);
    }
    assert_eq!(p[49].1.upper, 0.0);
}

#[test]
fn epsilon_from_the_curve_agrees_with_the_pld_accountant() {
    // The dual of the curve and pld::epsilon bracket the same ε (their brackets overlap);
    // full batch: the analytic Gaussian ε (4.377178 at σ = 1, δ = 1e-5, dp_accounting).
    let cfg = PldConfig::default();
    let f = TradeoffCurve::of_schedule(&phase(256.0 / 60000.0, 1.1, 14063), 1e-3, &cfg).unwrap();
    let e = f.epsilon(1e-5).unwrap();
    let p = crate::accounting::pld::epsilon(256.0 / 60000.0, 1.1, 14063, 1e-5, &cfg).unwrap();
    assert!(e.lower <= p.value && p.lower <= e.upper, "{e:?} vs {p:?}");
    assert!(e.width() < 1e-3, "{e:?}");
    let g = TradeoffCurve::of_schedule(&phase(1.0, 1.0, 1), 1e-3, &cfg).unwrap();
    let e = g.epsilon(1e-5).unwrap();
    assert!(
        e.lower <= 4.377179 && 4.377178 <= e.upper && e.width() < 1e-9,
        "{e:?}"
    );
}

#[test]
fn fixed_size_runs_get_the_rdp_conversion_and_shuffled_runs_none() {
    use crate::accounting::run::Sampling;
    let fixed = Run::new(
        Sampling::FixedSize {
            batch_size: 64,
            dataset_size: 1600,
        },
        4.0,
        300,
    )
    .unwrap();
    let f = TradeoffCurve::of_run(&fixed, 1e-3, &PldConfig::default())
        .unwrap()
        .unwrap();
    assert_eq!(f.source(), Source::Rdp);
    let b = f.beta(0.01).unwrap();
    assert!(
        b.lower > 0.5 && b.lower <= b.upper && b.upper <= 0.99,
        "{b:?}"
    );
    let shuffled = Run::new(
        Sampling::Shuffled {
            batch_size: 64,
            dataset_size: 1600,
        },
        1.0,
        300,
    )
    .unwrap();
    assert!(matches!(
        TradeoffCurve::of_run(&shuffled, 1e-3, &PldConfig::default()).unwrap(),
        Err(Unsupported::Shuffled)
    ));
}

#[test]
fn curve_below_the_crossing_is_the_four_composition_bracket_bit_for_bit() {
    // Issue 29: the curve composes the add pair and the remove direction's pessimistic PLD
    // on a coarser grid (three compositions, not four). Where the add direction is the
    // larger (α below the crossing f(α) = α, ≈ 0.4 here), the envelope's bracket must be
    // the one of all four full compositions bit for bit; above it both must overlap (exact
    // comparison: certified brackets of one number) and the new one be at least as narrow
    // at α ≥ 0.7 (measured: 8.8e-6 against 5.0e-5 at 0.7, 2.1e-7 against 2.7e-3 at 0.99).
    use crate::accounting::pld::Direction;
    let one = phase(256.0 / 60000.0, 1.1, 14063);
    let c = PldConfig::default();
    let f = TradeoffCurve::of_schedule(&one, 1e-3, &c).unwrap();
    let old =
        pld_schedule::composed_pairs(&one, 1e-3, &c, &[Direction::Add, Direction::Remove]).unwrap();
    let old_power = |a: f64| {
        let side = |p: &(Pld, Pld)| {
            (
                finite_or(p.1.neyman_pearson(a), a),
                finite_or(p.0.neyman_pearson(a), 1.0),
            )
        };
        let (x, y) = (side(&old[0]), side(&old[1]));
        Bracket {
            lower: x.0.max(y.0),
            upper: x.1.max(y.1),
        }
        .clamped(a, 1.0)
    };
    for a in [1e-4, 1e-3, 0.01, 0.1, 0.3] {
        let (new, old) = (f.power(a), old_power(a));
        assert_eq!(
            new.lower.to_bits(),
            old.lower.to_bits(),
            "α {a}: {new:?} {old:?}"
        );
        assert_eq!(
            new.upper.to_bits(),
            old.upper.to_bits(),
            "α {a}: {new:?} {old:?}"
        );
    }
    for a in [0.5, 0.7, 0.9, 0.99] {
        let (new, old) = (f.power(a), old_power(a));
        assert!(
            new.lower <= old.upper && old.lower <= new.upper,
            "α {a}: {new:?} {old:?}"
        );
        if a >= 0.7 {
            assert!(new.width() <= old.width(), "α {a}: {new:?} {old:?}");
        }
    }
}

#[test]
fn an_audit_corner_above_the_curve_contradicts_it() {
    // 1-GDP: 1 − f(0.05) = Φ(Φ⁻¹(0.05) + 1) = 0.25952 (scipy.stats.norm); a corner with TPR ≥
    // 0.30 at FPR ≤ 0.05 is above it, one with TPR ≥ 0.20 is not
    let f = TradeoffCurve::gaussian(1.0).unwrap();
    let (bound, above) = f.audit_corner(0.05, 0.30).unwrap();
    assert!((bound - 0.259_52).abs() < 1e-4 && above, "{bound}");
    assert!(!f.audit_corner(0.05, 0.20).unwrap().1);
    assert_eq!(
        f.audit_corner(0.05, 1.5).unwrap_err().parameter(),
        Some("tpr_lower")
    );
}

#[test]
fn many_levels_through_the_envelope_equal_one_call_per_level_to_1e_12() {
    // beta_lower_many reads each PLD's lines through their lower envelope; every value
    // must be a certified lower end (≤ the scan's, which is the least over every line) and
    // the scan's up to the envelope's rounding. Tolerance 1e-12 relative (+1e-300): the
    // envelope's choice can differ from the scan's only between lines equal to a few ulps.
    let mut levels = vec![
        0.0,
        1e-300,
        1e-12,
        1e-9,
        1e-6,
        1e-3,
        0.5,
        0.999,
        1.0 - 1e-9,
        1.0,
    ];
    levels.extend((1..200).map(|i| f64::from(i) / 200.0));
    levels.extend((1..60).map(|i| libm::pow(10.0, -f64::from(i) / 5.0)));
    let two = Schedule::new(&[
        Phase {
            sampling_rate: 0.02,
            noise_multiplier: 0.9,
            steps: 300,
        },
        Phase {
            sampling_rate: 0.3,
            noise_multiplier: 2.0,
            steps: 5,
        },
    ])
    .unwrap();
    for (name, s, resolution) in [
        ("q 0.01 σ 1 T 1000", phase(0.01, 1.0, 1000), 1e-6),
        ("q 0.5 σ 0.8 T 4", phase(0.5, 0.8, 4), 1e-3),
        ("q 0.001 σ 0.6 T 10", phase(0.001, 0.6, 10), 1e-9),
        ("two phases", two, 1e-6),
    ] {
        let f = TradeoffCurve::of_schedule(&s, resolution, &PldConfig::default()).unwrap();
        let many = f.beta_lower_many(&levels).unwrap();
        let mut same = 0;
        for (&a, &m) in levels.iter().zip(&many) {
            let one = f.beta(a).unwrap().lower;
            same += usize::from(m.to_bits() == one.to_bits());
            assert!(m <= one, "{name}, α {a}: many {m} above one {one}");
            assert!(
                one - m <= 1e-12 * one + 1e-300,
                "{name}, α {a}: many {m}, one {one}"
            );
        }
        // the envelope picks the scan's own line nearly always: the same bits
        assert!(
            same * 100 >= levels.len() * 95,
            "{name}: {same} of {} bit-equal",
            levels.len()
        );
    }
    // a wrong level is refused, naming it
    let f = TradeoffCurve::of_schedule(&phase(0.1, 1.0, 10), 1e-6, &PldConfig::default()).unwrap();
    assert_eq!(
        f.beta_lower_many(&[0.5, 1.5]).unwrap_err().parameter(),
        Some("alpha")
    );
}

#[test]
fn epsilon_at_a_large_delta_of_a_run_whose_losses_overflow_exp_is_certified() {
    // Issue 43: q 0.5, σ 0.5, T 10,000 at δ 0.5 failed with "+infinity mass and roundoff
    // exceed delta (value 3.38e-6)" — a value below δ: e^ε·S₂ with S₂ = 0 and e^ε = ∞ gave
    // NaN above the top grid point. Now an ε, above the RDP-free lower end.
    let f =
        TradeoffCurve::of_schedule(&phase(0.5, 0.5, 10_000), 1e-3, &PldConfig::default()).unwrap();
    let e = f.epsilon(0.5).unwrap();
    assert!(
        e.upper.is_finite() && e.upper >= e.lower && e.lower > 100.0,
        "{e:?}"
    );
}

#[test]
fn fixed_size_batches_keep_the_sampling_cap_the_rdp_curve_misses() {
    // Issue 43: batches of 10 of 100, T = 20, σ = 1 (replace-one): the RDP conversion alone
    // gave TPR ≤ 0.99983 at FPR 0.1 %; a record is never sampled with probability
    // p₀ = 0.9^20 = 0.12157665, so TPR ≤ FPR + 1 − p₀ = 0.87942335 (module docs), and the
    // advantage ≤ 1 − p₀ = 0.87842335. Tolerance 1e-9: p₀ is rounded down by ~1e-15.
    let run = Run::fixed_size(10, 100, 1.0, 20).unwrap();
    let f = TradeoffCurve::of_run(&run, 1e-3, &PldConfig::default())
        .unwrap()
        .unwrap();
    let p0 = 0.9f64.powi(20);
    let tpr = f.tpr(1e-3).unwrap().upper;
    assert!(
        tpr <= 1e-3 + 1.0 - p0 + 1e-9 && tpr > 1e-3 + 1.0 - p0 - 1e-9,
        "{tpr}"
    );
    let adv = f.advantage().upper;
    assert!((adv - (1.0 - p0)).abs() < 1e-9, "{adv}");
    // never below what the RDP curve alone certifies at small noise: the cap only lowers
    let alone = TradeoffCurve::from_rdp(
        &rdp::DEFAULT_ORDERS,
        &run.fixed_size_rdp(&rdp::DEFAULT_ORDERS).unwrap().unwrap(),
    )
    .unwrap();
    for a in [1e-6, 1e-3, 0.1, 0.5] {
        assert!(
            f.tpr(a).unwrap().upper <= alone.tpr(a).unwrap().upper,
            "{a}"
        );
    }
    // a generic RDP curve has no cap
    assert!(alone.tpr(1e-3).unwrap().upper > 0.99);
}
