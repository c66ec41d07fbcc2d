//! Whole-workload benchmarks of the accountants (issue 2's speed goals):
//! - ε by RDP for DP-SGD on MNIST (q = 256/60000, σ = 1.1, T = 14063, δ = 1e-5), default
//!   order grid, improved conversion — goal < 0.2 ms (dp_accounting 0.6.0: 19 ms);
//! - ε by PLD for the same, default config — goal < 34.9 ms at equal or better accuracy
//!   (dp_accounting 0.6.0, grid 1e-4: 2.381779 in 349 ms; ours: certified [2.381583, 2.381744],
//!   three compositions: pessimistic Add and Remove, optimistic for the worse direction);
//! - Hayes γ, certified numerical composition, (q = 0.01, σ = 1, T = 100, κ = 0.1) — goal
//!   < 50 ms at error ≤ 1e-5;
//! - Hayes γ by Monte Carlo, same configuration, 10⁶ samples (numpy reference: 2.6 s).

use criterion::{criterion_group, criterion_main, Criterion};
use reconbound::accounting::{pld, rdp, rero};
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

criterion_group!(benches, epsilon_rdp, epsilon_pld, gamma);
criterion_main!(benches);
