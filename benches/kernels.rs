//! Dense `f64` products in the canonical FMA order (`nn::gemm`): a 1000 × 1000 × 1000
//! product and the RecoNN reconstructor's shapes (batch 128, 7,960 → 1,000 → 784), one
//! thread. Throughput is in multiply-adds (criterion's "elements"); GFLOP/s = 2 × that.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reconbound::nn::bench_gemm;
use reconbound::rng::Rng;
use std::hint::black_box;

fn data(len: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng::from_seed(seed);
    (0..len).map(|_| r.uniform() - 0.5).collect()
}

type Product = fn(usize, usize, usize, &[f64], &[f64], &mut [f64], usize);

fn gemm(c: &mut Criterion) {
    let mut g = c.benchmark_group("gemm_f64");
    g.sample_size(10);
    let cases: [(&str, Product, usize, usize, usize); 5] = [
        ("square_1000", bench_gemm::matmul, 1000, 1000, 1000),
        (
            "reconn_fwd1_128x7960x1000",
            bench_gemm::matmul,
            128,
            1000,
            7960,
        ),
        (
            "reconn_fwd2_128x1000x784",
            bench_gemm::matmul,
            128,
            784,
            1000,
        ),
        (
            "reconn_wgrad_tn_7960x1000_k128",
            bench_gemm::matmul_tn,
            7960,
            1000,
            128,
        ),
        (
            "reconn_back_nt_128x1000x784",
            bench_gemm::matmul_nt,
            128,
            1000,
            784,
        ),
    ];
    for (name, f, m, n, kd) in cases {
        // Operand lengths cover every layout (A: m·kd = kd·m, B: kd·n = n·kd).
        let a = data(m * kd, 1);
        let b = data(kd * n, 2);
        let mut out = vec![0.0; m * n];
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

criterion_group!(benches, gemm);
criterion_main!(benches);
