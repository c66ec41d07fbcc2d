//! Per-example workloads of the nn module: the clipped gradient of one example (the inner
//! loop of DP-SGD) and the input-coordinate JVPs of the clipped gradient (the inner loop of
//! FIL accounting, 8 coordinates per pass with `Dual<8>`), for the paper architectures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reconbound::autodiff::Dual;
use reconbound::nn::{arch, Activation, Sequential};
use reconbound::rng::Rng;
use reconbound::train::clip::{clip, ClipMethod};
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

criterion_group!(benches, clipped_gradient, clipped_gradient_jvp8);
criterion_main!(benches);
