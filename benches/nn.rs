//! Per-example workloads of the nn module: the clipped gradient of one example (the inner
//! loop of DP-SGD) and the input-coordinate JVPs of the clipped gradient (the inner loop of
//! FIL accounting, 8 coordinates per pass with `Dual<8>`), for the paper architectures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reconbound::autodiff::Dual;
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, Activation, Sequential};
use reconbound::rng::Rng;
use reconbound::train::clip::{clip, ClipMethod};
use reconbound::train::dpsgd::Clipping;
use std::hint::black_box;

fn models() -> Vec<(&'static str, Sequential)> {
    vec![
        (
            "mlp_784_10_10_elu",
            arch::mlp(784, &[10], 10, Activation::Elu).unwrap(),
        ),
        (
            "mlp_784_100_10_tanh",
            arch::mlp(784, &[100], 10, Activation::Tanh).unwrap(),
        ),
        ("mnist_tanh_convnet", arch::mnist_tanh_convnet().unwrap()),
    ]
}

fn input(d: usize) -> Vec<f64> {
    let mut r = Rng::from_seed(3);
    (0..d).map(|_| r.uniform()).collect()
}

fn clipped_gradient(c: &mut Criterion) {
    let mut g = c.benchmark_group("clipped_gradient");
    for (name, m) in models() {
        let p = m.init_params(1);
        let x = input(m.input_len());
        let mut ws = m.workspace::<f64>();
        let mut grad = vec![0.0; m.num_params()];
        g.throughput(Throughput::Elements(1));
        g.bench_function(name, |b| {
            b.iter(|| {
                m.loss_and_grad(&p, black_box(&x), 3, &mut grad, &mut ws)
                    .unwrap();
                clip(&mut grad, ClipMethod::Gelu, 1.0).unwrap();
                black_box(&grad);
            })
        });
    }
    g.finish();
}

fn clipped_gradient_jvp8(c: &mut Criterion) {
    let mut g = c.benchmark_group("clipped_gradient_jvp_8_coords");
    for (name, m) in models() {
        let p = m.init_params(1);
        let x = input(m.input_len());
        let mut ws = m.workspace::<Dual<8>>();
        let mut grad = vec![Dual::<8>::default(); m.num_params()];
        let coords: Vec<usize> = (0..8).map(|k| 100 + 61 * k).collect();
        // Reported per pass of 8 coordinates; divide by 8 for the time per coordinate.
        g.throughput(Throughput::Elements(8));
        g.bench_function(name, |b| {
            b.iter(|| {
                m.loss_and_grad_jvp(&p, black_box(&x), 3, &coords, &mut grad, &mut ws)
                    .unwrap();
                clip(&mut grad, ClipMethod::Gelu, 1.0).unwrap();
                black_box(&grad);
            })
        });
    }
    g.finish();
}

/// One FIL step for one example (Guo et al. 2022, Alg. 1 / Eq. 5): the per-example gradient
/// and the squared norms of the clipped gradient's derivatives along k = 50 input
/// coordinates. `reference`: `loss_and_grad_jvp::<8>` in 7 passes, `clip` in Dual arithmetic,
/// squared norms of the lanes. `fast`: `clipped_jvp_sq_norms`. `gram`: the full 50 × 50 Gram
/// matrix with `clipped_jvp_gram`. Reported per example.
fn fil_step(c: &mut Criterion) {
    let mut g = c.benchmark_group("fil_step_50_coords");
    g.sample_size(20);
    for (name, m) in models() {
        if name == "mlp_784_100_10_tanh" {
            continue;
        }
        let p = m.init_params(1);
        let x = input(m.input_len());
        let coords: Vec<usize> = (0..50).map(|k| (k * 97 + 13) % m.input_len()).collect();
        g.throughput(Throughput::Elements(1));
        let mut ws = m.workspace::<Dual<8>>();
        let mut grad = vec![Dual::<8>::default(); m.num_params()];
        let mut sq = vec![0.0; 50];
        g.bench_function(format!("{name}/reference"), |b| {
            b.iter(|| {
                for (chunk, out) in coords.chunks(8).zip(sq.chunks_mut(8)) {
                    m.loss_and_grad_jvp(&p, black_box(&x), 3, chunk, &mut grad, &mut ws)
                        .unwrap();
                    clip(&mut grad, ClipMethod::Gelu, 1.0).unwrap();
                    for (k, o) in out.iter_mut().enumerate() {
                        *o = grad.iter().map(|d| d.tangent[k] * d.tangent[k]).sum();
                    }
                }
                black_box(&sq);
            })
        });
        let mut fw = m.fil_workspace(50);
        g.bench_function(format!("{name}/fast"), |b| {
            b.iter(|| {
                m.clipped_jvp_sq_norms(
                    &p,
                    black_box(&x),
                    3,
                    &coords,
                    ClipMethod::Gelu,
                    1.0,
                    &mut sq,
                    &mut fw,
                )
                .unwrap();
                black_box(&sq);
            })
        });
        let mut gram = vec![0.0; 50 * 50];
        g.bench_function(format!("{name}/gram"), |b| {
            b.iter(|| {
                m.clipped_jvp_gram(
                    &p,
                    black_box(&x),
                    3,
                    &coords,
                    ClipMethod::Gelu,
                    1.0,
                    &mut gram,
                    &mut fw,
                )
                .unwrap();
                black_box(&gram);
            })
        });
    }
    g.finish();
}

/// The clipped-gradient sum of a full batch of 1,000 MNIST digits on the MLP 784-10-10 ELU —
/// one DP-SGD step of a prior-aware attack trial (Hayes et al. 2023). `per_example`: the
/// DP-SGD loop, 1,000 × (`loss_and_grad` + `clip` + accumulate); `batched`:
/// `clipped_grad_sum` (ghost clipping, no per-example gradient). GELU clipping at C = 1.
/// Reported per example (throughput 1,000).
fn clipped_grad_sum(c: &mut Criterion) {
    let mut g = c.benchmark_group("clipped_grad_sum_1000");
    let data = embedded_mnist().unwrap();
    let m = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let p = m.init_params(1);
    let batch: Vec<usize> = (0..1000).collect();
    let (method, norm) = (ClipMethod::Gelu, 1.0);
    let mut sum = vec![0.0; m.num_params()];
    g.throughput(Throughput::Elements(batch.len() as u64));
    let mut ws = m.workspace::<f64>();
    let mut grad = vec![0.0; m.num_params()];
    g.bench_function("mlp_784_10_10_elu/per_example", |b| {
        b.iter(|| {
            sum.fill(0.0);
            let mut loss = 0.0;
            for &i in &batch {
                let (x, y) = data.example(i).unwrap();
                loss += m
                    .loss_and_grad(&p, black_box(x), y as usize, &mut grad, &mut ws)
                    .unwrap();
                clip(&mut grad, method, norm).unwrap();
                for (s, v) in sum.iter_mut().zip(&grad) {
                    *s += v;
                }
            }
            black_box((&sum, loss));
        })
    });
    let mut bws = m.batch_workspace().unwrap();
    let clipping = Some(Clipping { method, norm });
    g.bench_function("mlp_784_10_10_elu/batched", |b| {
        b.iter(|| {
            let loss = m
                .clipped_grad_sum(&p, black_box(&data), &batch, clipping, &mut sum, &mut bws)
                .unwrap();
            black_box((&sum, loss));
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    clipped_gradient,
    clipped_gradient_jvp8,
    fil_step,
    clipped_grad_sum
);
criterion_main!(benches);
