//! Whole DP-SGD steps: one step of the MNIST tanh ConvNet (Guo et al. 2022 App. C) on the
//! embedded MNIST subset, Poisson sampling with expected batch 64 (q = 64/2000), hard
//! clipping C = 1, σ = 1, momentum 0.5: per-example gradients, clipping, noise, update.

use criterion::{criterion_group, criterion_main, Criterion};
use reconbound::data::embedded_mnist;
use reconbound::nn::arch;
use reconbound::train::dpsgd::{DpSgd, DpSgdConfig};
use std::hint::black_box;

fn dpsgd_step(c: &mut Criterion) {
    let data = embedded_mnist().unwrap();
    let model = arch::mnist_tanh_convnet().unwrap();
    let config = DpSgdConfig {
        steps: u64::MAX,
        ..DpSgdConfig::default()
    };
    let mut params = model.init_params(1);
    let mut trainer = DpSgd::new(&model, &data, &config).unwrap();
    let mut g = c.benchmark_group("dpsgd_step");
    g.sample_size(20);
    g.bench_function("mnist_tanh_convnet_batch_64", |b| {
        b.iter(|| {
            trainer.step(&mut params, &mut ()).unwrap();
            black_box(&params);
        })
    });
    g.finish();
}

criterion_group!(benches, dpsgd_step);
criterion_main!(benches);
