//! Whole-workload benchmarks of the accountants (issue 2's speed goals):
//! - ε by RDP for DP-SGD on MNIST (q = 256/60000, σ = 1.1, T = 14063, δ = 1e-5), default
//!   order grid, improved conversion — goal < 0.2 ms (dp_accounting 0.6.0: 19 ms);
//! - ε by PLD for the same, default config — goal < 34.9 ms at equal or better accuracy
//!   (dp_accounting 0.6.0, grid 1e-4: 2.381779 in 349 ms; ours: certified [2.381583, 2.381744]);
//!   and the same at δ = 1e-12 (issue 13: at most 2× the time of δ = 1e-5). Issue 32: the
//!   add direction's pair (pessimistic and optimistic in lockstep) and a 4× coarser scout of
//!   the remove direction (its full pair only if the scout does not show it to be the
//!   smaller), instead of three full compositions; also δ = 1e-10. Measured 2026-11-27 on
//!   the 2-core machine (load ≈ 3 from other sessions), one core (taskset), old and new
//!   binaries interleaved: δ = 1e-5 19.2 → 14.2 ms, δ = 1e-10 17.0 ms, δ = 1e-12 31.1 →
//!   22.9 ms. dp_accounting 0.6.0 (grid 1e-4) in the same session: 204 ms warm at both δ
//!   (14× / 12×); on a fresh process, interleaved (eleven runs, medians): its call 225 ms
//!   (δ = 1e-5) / 220 ms (1e-10) against `reconbound epsilon --accountant pld` 17.6 / 20.7 ms
//!   for the whole process (12.8× / 10.6×; the old build 23.6 / 28.1 ms, 9.5× / 7.8×) and a
//!   fresh Python's `reconbound.epsilon` call 15.4 / 18.8 ms (14.6× / 11.7×). A fresh
//!   call's first-call costs before the composition (δ = 1e-5 / 1e-10): tilt search 0.95 /
//!   1.05 ms, one-step PLDs 2.3 / 3.1 ms (warm 1.4 / 2.2), FFT tables to 2¹⁵ 0.36 ms (warm
//!   0.24); the process itself ≈ 4–5 ms (`--accountant rdp`).
//! - Hayes γ, certified numerical composition, (q = 0.01, σ = 1, T = 100, κ = 0.1) — goal
//!   < 50 ms at error ≤ 1e-5;
//! - Hayes γ by Monte Carlo, same configuration, 10⁶ samples (numpy reference: 2.6 s);
//! - ε by RDP for fixed-size batches without replacement (replace-one; Wang, Balle,
//!   Kasiviswanathan 2019), 256 of 60000, σ = 1.1, T = 14063, δ = 1e-5, default orders.
//! - ε by PLD of a three-phase schedule of the same 14063 steps (q, 1.5, 2000), (q, 1.1, 9000),
//!   (2q, 1.3, 3063) against the one-phase MNIST run above (issue 13 item 3). Measured on
//!   the 2-core machine: one phase 30.7 ms, three phases 83.5 ms (2.7×: three compositions
//!   per direction on a grid chosen for the finest phase, plus two convolutions).
//! - The certified trade-off curve of the MNIST run (issue 29): the add direction's pair
//!   and the remove direction's pessimistic PLD on a 4× coarser grid (the other bounds of
//!   each direction read from the add pair in the other order, `tradeoff`'s module docs),
//!   and each risk read from it (TPR at one FPR, the advantage), and one TPR from nothing
//!   (curve + TPR, what riskcal's `get_beta_for_dpsgd` does per call). Measured 2026-11-27
//!   as above (interleaved, three runs): curve 25.6 → 14.4 ms, TPR 0.77 → 0.72 ms (five
//!   Neyman–Pearson scans where four were: a direction's lower-bound scan is skipped when its
//!   upper bound shows it cannot be the maximum), advantage 0.130 → 0.076 ms, curve + TPR
//!   15.0 ms. riskcal 1.5.1 in the same session (warm, median of seven): 196 ms per curve
//!   (100 α), 191 ms per β, 295 ms per advantage — 13.6×, 12.7× and 20× from nothing.

use criterion::{criterion_group, criterion_main, Criterion};
use reconbound::accounting::schedule::{Phase, Schedule};
use reconbound::accounting::tradeoff::TradeoffCurve;
use reconbound::accounting::{pld, pld_schedule, rdp, rdp_without_replacement, rero};
use std::hint::black_box;
use std::time::Duration;

const Q: f64 = 256.0 / 60000.0;
const SIGMA: f64 = 1.1;
const STEPS: u64 = 14063;
const DELTA: f64 = 1e-5;

fn epsilon_rdp(c: &mut Criterion) {
    c.bench_function("epsilon_rdp_mnist_dpsgd", |b| {
        b.iter(|| {
            rdp::epsilon(
                black_box(Q),
                black_box(SIGMA),
                black_box(STEPS),
                black_box(DELTA),
                rdp::Conversion::Improved,
            )
            .unwrap()
        })
    });
}

fn epsilon_rdp_without_replacement(c: &mut Criterion) {
    c.bench_function("epsilon_rdp_without_replacement_mnist", |b| {
        b.iter(|| {
            rdp_without_replacement::epsilon_replace_one(
                black_box(256),
                black_box(60000),
                black_box(SIGMA),
                black_box(STEPS),
                black_box(DELTA),
                rdp::Conversion::Improved,
            )
            .unwrap()
        })
    });
}

fn epsilon_pld(c: &mut Criterion) {
    let mut g = c.benchmark_group("pld");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("epsilon_pld_mnist_dpsgd", |b| {
        b.iter(|| {
            pld::epsilon(
                black_box(Q),
                black_box(SIGMA),
                black_box(STEPS),
                black_box(DELTA),
                &pld::PldConfig::default(),
            )
            .unwrap()
        })
    });
    // issue 32: the second δ of the comparison with dp_accounting
    g.bench_function("epsilon_pld_mnist_dpsgd_delta1e-10", |b| {
        b.iter(|| {
            pld::epsilon(
                black_box(Q),
                black_box(SIGMA),
                black_box(STEPS),
                black_box(1e-10),
                &pld::PldConfig::default(),
            )
            .unwrap()
        })
    });
    // issue 13.1: a small δ chooses its own truncation, grid and tilt; goal ≤ 2× δ = 1e-5
    g.bench_function("epsilon_pld_mnist_dpsgd_delta1e-12", |b| {
        b.iter(|| {
            pld::epsilon(
                black_box(Q),
                black_box(SIGMA),
                black_box(STEPS),
                black_box(1e-12),
                &pld::PldConfig::default(),
            )
            .unwrap()
        })
    });
    g.finish();
}

fn gamma(c: &mut Criterion) {
    let mut g = c.benchmark_group("hayes_gamma");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("gamma_exact_q0.01_T100", |b| {
        b.iter(|| {
            rero::dpsgd::gamma(
                black_box(0.1),
                black_box(0.01),
                black_box(1.0),
                black_box(100),
            )
            .unwrap()
        })
    });
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("gamma_monte_carlo_1e6_q0.01_T100", |b| {
        b.iter(|| {
            rero::dpsgd::gamma_monte_carlo(0.1, 0.01, 1.0, 100, black_box(1_000_000), 7, 0.95)
                .unwrap()
        })
    });
    g.finish();
}

fn epsilon_pld_schedule(c: &mut Criterion) {
    let p = |q: f64, s: f64, t: u64| Phase {
        sampling_rate: q,
        noise_multiplier: s,
        steps: t,
    };
    let three = Schedule::new(&[p(Q, 1.5, 2000), p(Q, 1.1, 9000), p(2.0 * Q, 1.3, 3063)]).unwrap();
    let one = Schedule::new(&[p(Q, SIGMA, STEPS)]).unwrap();
    let mut g = c.benchmark_group("pld_schedule");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    for (name, s) in [("one_phase_14063", &one), ("three_phases_14063", &three)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                pld_schedule::epsilon(black_box(s), black_box(DELTA), &pld::PldConfig::default())
                    .unwrap()
            })
        });
    }
    g.finish();
}

fn tradeoff_curve(c: &mut Criterion) {
    let one = Schedule::new(&[Phase {
        sampling_rate: Q,
        noise_multiplier: SIGMA,
        steps: STEPS,
    }])
    .unwrap();
    let mut g = c.benchmark_group("tradeoff");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("curve_mnist_dpsgd", |b| {
        b.iter(|| {
            TradeoffCurve::of_schedule(black_box(&one), 1e-3, &pld::PldConfig::default()).unwrap()
        })
    });
    let curve = TradeoffCurve::of_schedule(&one, 1e-3, &pld::PldConfig::default()).unwrap();
    g.sample_size(100).measurement_time(Duration::from_secs(3));
    g.bench_function("tpr_at_fpr_0.01", |b| {
        b.iter(|| curve.tpr(black_box(0.01)).unwrap())
    });
    g.bench_function("advantage", |b| b.iter(|| black_box(&curve).advantage()));
    // one risk from nothing (what riskcal's get_beta_for_dpsgd does per call): the curve,
    // then the TPR at one FPR
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("curve_and_tpr_at_fpr_0.01", |b| {
        b.iter(|| {
            TradeoffCurve::of_schedule(black_box(&one), 1e-3, &pld::PldConfig::default())
                .unwrap()
                .tpr(0.01)
                .unwrap()
        })
    });
    g.finish();
}

/// A one-run audit's claim against a certified curve (issue 42): [`CurveClaim::new`] on the
/// MNIST run's PLD curve (its convex minorant, `beta` at ~3,500 levels through the lower
/// envelope of the PLD's lines: 2.4 s by the scan it replaced), and the family bound of 1,000
/// canaries, 100 guesses, 95 right against a Poisson run (q = 0.5, σ = 1, T = 10: a search
/// over noise scales, a curve and a claim per probe). Measured 2026-11-28 on the 2-core
/// machine (load ≈ 1): 3.01 ms and 160 ms.
fn one_run_claims(c: &mut Criterion) {
    use reconbound::accounting::run::Run;
    use reconbound::attacks::audit::epsilon::{CurveClaim, OneRunCounts};
    use reconbound::attacks::audit::one_run_family::one_run_fdp_family;
    let one = Schedule::new(&[Phase {
        sampling_rate: Q,
        noise_multiplier: SIGMA,
        steps: STEPS,
    }])
    .unwrap();
    let curve = TradeoffCurve::of_schedule(&one, 1e-3, &pld::PldConfig::default()).unwrap();
    let mut g = c.benchmark_group("one_run");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.bench_function("curve_claim_mnist_dpsgd", |b| {
        b.iter(|| CurveClaim::new(black_box(&curve)).unwrap())
    });
    let run = Run::poisson(0.5, 1.0, 10).unwrap();
    let counts = OneRunCounts {
        canaries: 1000,
        guesses: 100,
        correct: 95,
    };
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("family_bound_poisson", |b| {
        b.iter(|| {
            one_run_fdp_family(
                black_box(counts),
                0.05,
                1e-5,
                &run,
                1,
                &pld::PldConfig::default(),
            )
            .unwrap()
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    tradeoff_curve,
    one_run_claims,
    epsilon_rdp,
    epsilon_rdp_without_replacement,
    epsilon_pld,
    gamma,
    epsilon_pld_schedule
);
criterion_main!(benches);
