//! Dense products in the canonical FMA order (`nn::gemm`), `f64` (`gemm_f64`) and `f32`
//! (`gemm_f32`, issue 32): a 1000 × 1000 × 1000 product and the RecoNN reconstructor's
//! shapes (batch 128, 7,960 → 1,000 → 784), one thread. Throughput is in multiply-adds (criterion's "elements"); GFLOP/s = 2 × that.
//! Also the shadow-model training of the RecoNN attack: non-private full-batch gradient
//! descent of the MLP 784-10-10 (ELU) on 1,000 MNIST digits, 100 steps (`train::dpsgd` with
//! no clipping and no noise: the batched `clipped_grad_sum` path), as
//! `../shared/bench/jax_reconn_bench.py` times it in JAX.
//!
//! A build without FMA (`RUSTFLAGS="-C target-cpu=x86-64"`) computes the same bits with the
//! software `fma` routine; `cargo bench -p reconbound-benches --bench kernels -- reconn_fwd2` measures its cost.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, bench_gemm, Activation};
use reconbound::rng::Rng;
use reconbound::train::dpsgd::{train, DpSgdConfig};
use reconbound::train::sampling::Sampling;
use std::hint::black_box;

fn data(len: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng::from_seed(seed);
    (0..len).map(|_| r.uniform() - 0.5).collect()
}

/// The layout of a benchmarked product: C = A·B, Aᵀ·B or A·Bᵀ.
#[derive(Clone, Copy)]
enum Layout {
    Nn,
    Tn,
    Nt,
}

/// The benchmarked products (name, layout, m, n, kd), in both precisions: a 1000³ product
/// and the reconstructor's shapes (batch 128, 7,960 → 1,000 → 784).
const CASES: [(&str, Layout, usize, usize, usize); 5] = [
    ("square_1000", Layout::Nn, 1000, 1000, 1000),
    ("reconn_fwd1_128x7960x1000", Layout::Nn, 128, 1000, 7960),
    ("reconn_fwd2_128x1000x784", Layout::Nn, 128, 784, 1000),
    (
        "reconn_wgrad_tn_7960x1000_k128",
        Layout::Tn,
        7960,
        1000,
        128,
    ),
    ("reconn_back_nt_128x1000x784", Layout::Nt, 128, 1000, 784),
];

type Product<T> = fn(usize, usize, usize, &[T], &[T], &mut [T], usize);

/// Every case of [`CASES`] in the group `group`, one thread, with `products` the (A·B, Aᵀ·B,
/// A·Bᵀ) entry points of one precision and `of` the conversion of the f64 test data.
fn gemm_group<T: Copy + Default>(
    c: &mut Criterion,
    group: &str,
    products: [Product<T>; 3],
    of: fn(f64) -> T,
) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for (name, layout, m, n, kd) in CASES {
        let f = products[layout as usize];
        // Operand lengths cover every layout (A: m·kd = kd·m, B: kd·n = n·kd).
        let a: Vec<T> = data(m * kd, 1).into_iter().map(of).collect();
        let b: Vec<T> = data(kd * n, 2).into_iter().map(of).collect();
        let mut out = vec![T::default(); m * n];
        g.throughput(Throughput::Elements((m * n * kd) as u64));
        g.bench_function(name, |bch| {
            bch.iter(|| {
                f(m, n, kd, black_box(&a), black_box(&b), &mut out, 1);
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn gemm(c: &mut Criterion) {
    let products: [Product<f64>; 3] = [
        bench_gemm::matmul,
        bench_gemm::matmul_tn,
        bench_gemm::matmul_nt,
    ];
    gemm_group(c, "gemm_f64", products, |v| v);
}

/// The same products in `f32` (issue 32: the reconstructor's `--precision f32`), one thread.
fn gemm_f32(c: &mut Criterion) {
    let products: [Product<f32>; 3] = [
        bench_gemm::matmul_f32,
        bench_gemm::matmul_tn_f32,
        bench_gemm::matmul_nt_f32,
    ];
    gemm_group(c, "gemm_f32", products, |v| v as f32);
}

fn shadow_model_gd(c: &mut Criterion) {
    let data = embedded_mnist().unwrap();
    let idx: Vec<usize> = (0..1000).collect();
    let data = data.subset(&idx).unwrap().flatten();
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let config = DpSgdConfig {
        learning_rate: 0.5,
        momentum: 0.0,
        weight_decay: 0.0,
        clipping: None,
        noise_multiplier: 0.0,
        sampling: Sampling::FullBatch,
        batch_size: 1000,
        steps: 100,
        seed: 1,
    };
    let init = model.init_params(1);
    let mut g = c.benchmark_group("shadow_model_gd");
    g.sample_size(10);
    g.bench_function("mlp_784_10_10_elu_n1000_T100", |b| {
        b.iter(|| {
            let mut p = init.clone();
            train(&model, &data, &config, &mut p, &mut ()).unwrap();
            black_box(p)
        })
    });
    g.finish();
}

criterion_group!(benches, gemm, gemm_f32, shadow_model_gd);
criterion_main!(benches);
