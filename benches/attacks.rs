//! The gradient-matching attack (Hayes et al. 2023, §2): one evaluation of L(z) and ∇_z L
//! over T = 100 steps on the MNIST MLP 784–10–10 (ELU), against its unit of cost, 100 clipped
//! per-example gradients (`loss_and_grad` + `clip`) at the same parameters; and L(z) alone.
//! The ratio of the first to the second is the cost of ∇_z L in clipped-gradient evaluations
//! per step (goal ≤ 4).

use criterion::{criterion_group, criterion_main, Criterion};
use reconbound::attacks::gradient_matching::{GradientMatching, ObservedStep};
use reconbound::nn::{arch, Activation};
use reconbound::rng::Rng;
use reconbound::train::clip::{clip, ClipMethod};
use reconbound::train::dpsgd::Clipping;
use std::hint::black_box;

const STEPS: u64 = 100;

fn gradient_matching(c: &mut Criterion) {
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let clipping = Clipping {
        method: ClipMethod::Hard,
        norm: 0.1,
    };
    let mut r = Rng::from_seed(3);
    let p = model.num_params();
    let steps: Vec<ObservedStep> = (0..STEPS)
        .map(|t| ObservedStep {
            params: model.init_params(t),
            residual: (0..p).map(|_| 0.01 * r.gaussian()).collect(),
        })
        .collect();
    let z: Vec<f64> = (0..784).map(|_| r.uniform()).collect();
    let attack = GradientMatching::new(&model, 3, clipping, &steps).unwrap();
    let mut ws = attack.workspace();
    let mut grad = vec![0.0; 784];

    let mut g = c.benchmark_group("gradient_matching_mlp_784_10_10_elu_T100");
    g.bench_function("loss_and_grad", |b| {
        b.iter(|| {
            black_box(
                attack
                    .loss_and_grad(black_box(&z), &mut grad, &mut ws)
                    .unwrap(),
            );
        })
    });
    g.bench_function("loss", |b| {
        b.iter(|| black_box(attack.loss(black_box(&z), &mut ws).unwrap()))
    });
    let mut mws = model.workspace::<f64>();
    let mut gp = vec![0.0; p];
    g.bench_function("clipped_gradient_x100", |b| {
        b.iter(|| {
            for s in &steps {
                model
                    .loss_and_grad(&s.params, black_box(&z), 3, &mut gp, &mut mws)
                    .unwrap();
                clip(&mut gp, clipping.method, clipping.norm).unwrap();
                black_box(&gp);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, gradient_matching);
criterion_main!(benches);
