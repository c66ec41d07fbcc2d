//! Whole attack workloads.
//!
//! `prior_aware_trial/hayes_default`: one trial of Hayes et al. 2023's default experiment
//! (App. A): draw D⁻ (999 embedded MNIST images) and a prior of 10, train the MLP 784-10-10
//! (ELU) for 100 full-batch DP-SGD steps on the 1,000 examples (C = 0.1, σ = 1), and score the
//! 10 candidates at every step with all three prior-aware scores — one thread. The issue's
//! peer: 0.80 s per trial in JAX (jit, vmap over chunks of 100, one thread).

use criterion::{criterion_group, criterion_main, Criterion};
use reconbound::attacks::prior_aware::PriorAwareSetup;
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, Activation};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;
use std::hint::black_box;

fn prior_aware_trial(c: &mut Criterion) {
    let pool = embedded_mnist().unwrap().flatten();
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let setup = PriorAwareSetup {
        model: &model,
        pool: &pool,
        train_size: 999,
        prior_size: 10,
        dpsgd: DpSgdConfig {
            learning_rate: 10.0,
            momentum: 0.0,
            clipping: Some(Clipping {
                method: ClipMethod::Hard,
                norm: 0.1,
            }),
            noise_multiplier: 1.0,
            sampling: Sampling::FullBatch,
            steps: 100,
            ..DpSgdConfig::default()
        },
    };
    let mut g = c.benchmark_group("prior_aware_trial");
    g.sample_size(10);
    let mut i = 0u64;
    g.bench_function("hayes_default", |b| {
        b.iter(|| {
            i += 1;
            black_box(setup.run_trial(0, i).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, prior_aware_trial);
criterion_main!(benches);
