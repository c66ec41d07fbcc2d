//! Tests of the layers, losses, model and architectures.
//!
//! Tolerances:
//! - backward vs central finite differences of the loss (h = 1e-5): truncation h²·|ℓ'''|/6
//!   ≈ 1e-11 and rounding ε·|ℓ|/h ≈ 1e-10 absolute; we require
//!   |g − fd| ≤ 1e-6·max(|g|, |fd|, 1e-4) (the floor keeps the bound relative to the size
//!   of the rounding error, 1e-10).
//! - input-directional derivatives of the gradient vs central differences of the gradient
//!   (h = 1e-5): |jvp − fd| ≤ 1e-5·max(‖column‖∞, 1e-4) per column.
//! - mixed partials computed two ways: the same quantity accumulated in different orders,
//!   agreement to ~1e-14 relative; we require ≤ 1e-9·max(1, |a|).

use super::*;
use crate::autodiff::{Dual, Scalar};
use crate::error::Error;
use crate::rng::Rng;
use alloc::vec;
use alloc::vec::Vec;

fn gaussian_vec(seed: u64, n: usize, scale: f64) -> Vec<f64> {
    let mut r = Rng::from_seed(seed);
    (0..n).map(|_| r.gaussian() * scale).collect()
}

/// Random small parameters: LeCun init plus small random biases (so biases are exercised).
fn params_for(model: &Sequential, seed: u64) -> Vec<f64> {
    let mut p = model.init_params(seed);
    let noise = gaussian_vec(seed + 1000, p.len(), 0.05);
    for (l, _) in (0..model.num_layers()).map(|l| (l, ())) {
        if let Some(r) = model.param_range(l) {
            for j in r {
                if p[j] == 0.0 {
                    p[j] = noise[j];
                }
            }
        }
    }
    p
}

/// `k` indices spread over 0..n (always including the first and last).
fn sample(n: usize, k: usize, seed: u64) -> Vec<usize> {
    if n <= k {
        return (0..n).collect();
    }
    let mut r = Rng::from_seed(seed);
    let mut v: Vec<usize> = (0..k - 2)
        .map(|_| r.below(n as u64).unwrap() as usize)
        .collect();
    v.push(0);
    v.push(n - 1);
    v
}

/// Parameter indices to check: a sample from every layer's weights and biases.
fn param_sample(model: &Sequential, per_layer: usize, seed: u64) -> Vec<usize> {
    let mut out = Vec::new();
    for l in 0..model.num_layers() {
        let r = model.param_range(l).unwrap();
        if r.is_empty() {
            continue;
        }
        for i in sample(r.len(), per_layer, seed + l as u64) {
            out.push(r.start + i);
        }
    }
    out
}

fn check_backward_fd(model: &Sequential, label: usize, per_layer: usize, seed: u64) {
    let p = params_for(model, seed);
    let x = gaussian_vec(seed + 1, model.input_len(), 0.5);
    let mut ws = model.workspace::<f64>();
    let mut g = vec![0.0; model.num_params()];
    let loss = model.loss_and_grad(&p, &x, label, &mut g, &mut ws).unwrap();
    assert_eq!(loss, model.loss(&p, &x, label, &mut ws).unwrap());
    let h = 1e-5;
    let mut q = p.clone();
    for j in param_sample(model, per_layer, seed) {
        q[j] = p[j] + h;
        let lp = model.loss(&q, &x, label, &mut ws).unwrap();
        q[j] = p[j] - h;
        let lm = model.loss(&q, &x, label, &mut ws).unwrap();
        q[j] = p[j];
        let fd = (lp - lm) / (2.0 * h);
        let scale = g[j].abs().max(fd.abs()).max(1e-4);
        assert!(
            (g[j] - fd).abs() <= 1e-6 * scale,
            "param {j}: backward {} vs finite difference {fd} (seed {seed})",
            g[j]
        );
    }
}

/// d/dx_i of ∇_w ℓ by Dual<4> lanes vs central differences of the gradient.
fn check_input_jvp_fd(model: &Sequential, label: usize, coords: &[usize], seed: u64) {
    let p = params_for(model, seed);
    let x = gaussian_vec(seed + 1, model.input_len(), 0.5);
    let n = model.num_params();
    let mut ws = model.workspace::<f64>();
    let mut wsd = model.workspace::<Dual<4>>();
    let mut gd = vec![Dual::<4>::default(); n];
    let (mut gp, mut gm, mut g0) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let h = 1e-5;
    for chunk in coords.chunks(4) {
        let l = model
            .loss_and_grad_jvp(&p, &x, label, chunk, &mut gd, &mut wsd)
            .unwrap();
        let l0 = model
            .loss_and_grad(&p, &x, label, &mut g0, &mut ws)
            .unwrap();
        // Values are bit-identical to the f64 pass.
        assert_eq!(l, l0);
        assert!(gd.iter().zip(&g0).all(|(a, b)| a.value == *b));
        for (lane, &i) in chunk.iter().enumerate() {
            let mut xp = x.clone();
            xp[i] += h;
            model
                .loss_and_grad(&p, &xp, label, &mut gp, &mut ws)
                .unwrap();
            xp[i] = x[i] - h;
            model
                .loss_and_grad(&p, &xp, label, &mut gm, &mut ws)
                .unwrap();
            let fd: Vec<f64> = gp
                .iter()
                .zip(&gm)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect();
            let col_max = fd.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-4);
            for j in 0..n {
                let t = gd[j].tangent[lane];
                assert!(
                    (t - fd[j]).abs() <= 1e-5 * col_max,
                    "coordinate {i}, param {j}: jvp {t} vs fd {} (seed {seed})",
                    fd[j]
                );
            }
        }
        // Unused lanes stay 0.
        for lane in chunk.len()..4 {
            assert!(gd.iter().all(|g| g.tangent[lane] == 0.0));
        }
    }
}

/// ∂²ℓ/∂w_j∂x_i as d/dx of ∇_w ℓ and as d/dw of ∇_x ℓ.
fn check_mixed_partials(
    model: &Sequential,
    label: usize,
    xs: &[usize],
    ws_idx: &[usize],
    seed: u64,
) {
    let p = params_for(model, seed);
    let x = gaussian_vec(seed + 1, model.input_len(), 0.5);
    let n = model.num_params();
    let d = model.input_len();
    // (a) d/dx_i of ∇_w ℓ, lanes = input coordinates.
    let mut a = vec![vec![0.0; n]; xs.len()];
    let mut wsd = model.workspace::<Dual<4>>();
    let mut gd = vec![Dual::<4>::default(); n];
    for (c, chunk) in xs.chunks(4).enumerate() {
        model
            .loss_and_grad_jvp(&p, &x, label, chunk, &mut gd, &mut wsd)
            .unwrap();
        for (lane, _) in chunk.iter().enumerate() {
            for j in 0..n {
                a[c * 4 + lane][j] = gd[j].tangent[lane];
            }
        }
    }
    // (b) d/dw_j of ∇_x ℓ, lanes = parameters; W = S = Dual<4>.
    let xd: Vec<Dual<4>> = x.iter().map(|&v| Dual::constant(v)).collect();
    let mut gx = vec![Dual::<4>::default(); d];
    for chunk in ws_idx.chunks(4) {
        let mut pd: Vec<Dual<4>> = p.iter().map(|&v| Dual::constant(v)).collect();
        for (lane, &j) in chunk.iter().enumerate() {
            pd[j].tangent[lane] = 1.0;
        }
        let loss = model
            .forward_backward(&pd, &xd, label, &mut gd, Some(&mut gx), &mut wsd)
            .unwrap();
        assert!(loss.value.is_finite());
        // An empty `grad` skips the parameter gradient: same loss and input gradient, bit
        // for bit (the input-gradient path does not read the parameter gradient).
        let mut gx_only = vec![Dual::<4>::default(); d];
        let loss_only = model
            .forward_backward(&pd, &xd, label, &mut [], Some(&mut gx_only), &mut wsd)
            .unwrap();
        assert_eq!(loss_only.value.to_bits(), loss.value.to_bits());
        for (u, v) in gx_only.iter().zip(&gx) {
            assert_eq!(u.value.to_bits(), v.value.to_bits());
            assert_eq!(u.tangent.map(f64::to_bits), v.tangent.map(f64::to_bits));
        }
        for (lane, &j) in chunk.iter().enumerate() {
            for (c, &i) in xs.iter().enumerate() {
                let b = gx[i].tangent[lane];
                let av = a[c][j];
                assert!(
                    (av - b).abs() <= 1e-9 * av.abs().max(1.0),
                    "w{j}, x{i}: d/dx of grad_w {av} vs d/dw of grad_x {b} (seed {seed})"
                );
            }
        }
    }
}

/// The conv → act → pool → conv → tanh → dense stack of the small test models (input 2 × 7 × 6,
/// stride 2 and padding 1 first), with `act` after the first convolution.
/// A `Conv2d` layer, for building test models tersely.
pub(crate) fn conv(out_channels: usize, kernel: usize, stride: usize, padding: usize) -> Layer {
    Layer::Conv2d {
        out_channels,
        kernel,
        stride,
        padding,
    }
}

/// An `AvgPool2d` layer, for building test models tersely.
pub(crate) fn pool(kernel: usize, stride: usize) -> Layer {
    Layer::AvgPool2d { kernel, stride }
}

pub(crate) fn conv_stack(act: Activation) -> Sequential {
    Sequential::new(
        Shape::new(2, 7, 6),
        &[
            Layer::Conv2d {
                out_channels: 3,
                kernel: 3,
                stride: 2,
                padding: 1,
            },
            Layer::Act(act),
            Layer::AvgPool2d {
                kernel: 2,
                stride: 1,
            },
            Layer::Conv2d {
                out_channels: 2,
                kernel: 2,
                stride: 1,
                padding: 0,
            },
            Layer::Act(Activation::Tanh),
            Layer::Dense { units: 4 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap()
}

/// Small models of every layer kind, each with a label to use: (name, model, label).
pub(crate) fn small_models() -> Vec<(&'static str, Sequential, usize)> {
    use Activation::*;
    let pool_s2 = Sequential::new(
        Shape::new(1, 5, 6),
        &[
            Layer::AvgPool2d {
                kernel: 2,
                stride: 2,
            },
            Layer::Conv2d {
                out_channels: 2,
                kernel: 2,
                stride: 1,
                padding: 1,
            },
            Layer::Act(Gelu),
            Layer::Dense { units: 3 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap();
    vec![
        ("mlp tanh", arch::mlp(6, &[5, 4], 3, Tanh).unwrap(), 2),
        ("mlp elu", arch::mlp(6, &[5], 3, Elu).unwrap(), 1),
        ("mlp gelu", arch::mlp(6, &[5], 3, Gelu).unwrap(), 0),
        ("mlp relu", arch::mlp(6, &[5], 3, Relu).unwrap(), 2),
        ("conv s2 p1 tanh", conv_stack(Tanh), 3),
        ("conv s2 p1 elu", conv_stack(Elu), 1),
        ("pool s2 + conv p1 gelu", pool_s2, 2),
        (
            "logistic regression",
            arch::logistic_regression(5).unwrap(),
            1,
        ),
        (
            "logistic regression label 0",
            arch::logistic_regression(5).unwrap(),
            0,
        ),
    ]
}

#[test]
fn every_layer_backward_matches_central_differences() {
    for (i, (name, m, label)) in small_models().into_iter().enumerate() {
        // Small models: check every parameter.
        std::eprintln!("{name}");
        check_backward_fd(&m, label, usize::MAX, 10 + i as u64);
    }
}

#[test]
fn every_layer_input_jvp_of_gradient_matches_differences_of_gradient() {
    for (i, (name, m, label)) in small_models().into_iter().enumerate() {
        if name == "mlp relu" {
            continue; // the second derivative of ReLU is 0 a.e.: checked below separately
        }
        let coords: Vec<usize> = (0..m.input_len()).collect();
        check_input_jvp_fd(&m, label, &coords, 20 + i as u64);
    }
}

#[test]
fn every_layer_mixed_partials_agree_both_ways() {
    for (i, (_, m, label)) in small_models().into_iter().enumerate() {
        let xs: Vec<usize> = (0..m.input_len()).collect();
        let ws: Vec<usize> = (0..m.num_params()).collect();
        check_mixed_partials(&m, label, &xs, &ws, 30 + i as u64);
    }
}

#[test]
fn architectures_backward_matches_central_differences() {
    let mlp = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    check_backward_fd(&mlp, 3, 12, 41);
    let mnist = arch::mnist_tanh_convnet().unwrap();
    check_backward_fd(&mnist, 7, 12, 42);
    let cifar = arch::cifar10_tanh_convnet().unwrap();
    check_backward_fd(&cifar, 5, 3, 43);
}

#[test]
fn architectures_input_jvp_and_mixed_partials() {
    let mlp = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    check_input_jvp_fd(&mlp, 3, &[0, 300, 405, 783], 51);
    check_mixed_partials(
        &mlp,
        3,
        &[0, 300, 405, 783],
        &sample(mlp.num_params(), 8, 1),
        52,
    );
    let mnist = arch::mnist_tanh_convnet().unwrap();
    check_input_jvp_fd(&mnist, 7, &[0, 29, 400, 783], 53);
    check_mixed_partials(
        &mnist,
        7,
        &[0, 29, 400, 783],
        &param_sample(&mnist, 2, 3),
        54,
    );
}

#[test]
fn parameter_counts_of_the_paper_architectures() {
    // Hayes et al. / Balle et al. MLP: 784·10 + 10 + 10·10 + 10 = 7,960.
    assert_eq!(
        arch::mlp(784, &[10], 10, Activation::Elu)
            .unwrap()
            .num_params(),
        7_960
    );
    // Guo App. C Table 1: (16·64 + 16) + (32·16·16 + 32) + (512·32 + 32) + (32·10 + 10).
    assert_eq!(arch::mnist_tanh_convnet().unwrap().num_params(), 26_010);
    // Guo App. C Table 2: 896 + 9,248 + 18,496 + 36,928 + 73,856 + 147,584 + 262,272 + 1,290.
    assert_eq!(arch::cifar10_tanh_convnet().unwrap().num_params(), 550_570);
    assert_eq!(arch::logistic_regression(10).unwrap().num_params(), 11);
    let m = arch::mnist_tanh_convnet().unwrap();
    let shapes: Vec<Shape> = (0..m.num_layers()).map(|l| m.layer(l).unwrap().2).collect();
    assert_eq!(shapes[0], Shape::new(16, 13, 13));
    assert_eq!(shapes[2], Shape::new(16, 12, 12));
    assert_eq!(shapes[3], Shape::new(32, 5, 5));
    assert_eq!(shapes[5], Shape::new(32, 4, 4));
    assert_eq!(m.output_len(), 10);
}

#[test]
fn dual_lanes_equal_separate_dual1_runs_bit_for_bit_on_mnist_convnet() {
    let m = arch::mnist_tanh_convnet().unwrap();
    let p = params_for(&m, 61);
    let x = gaussian_vec(62, 784, 1.0);
    let coords = [5usize, 100, 100, 783];
    let n = m.num_params();
    let mut g4 = vec![Dual::<4>::default(); n];
    let mut ws4 = m.workspace::<Dual<4>>();
    let l4 = m
        .loss_and_grad_jvp(&p, &x, 2, &coords, &mut g4, &mut ws4)
        .unwrap();
    let mut g1 = vec![Dual::<1>::default(); n];
    let mut ws1 = m.workspace::<Dual<1>>();
    for (lane, &c) in coords.iter().enumerate() {
        let l1 = m
            .loss_and_grad_jvp(&p, &x, 2, &[c], &mut g1, &mut ws1)
            .unwrap();
        assert_eq!(l1.to_bits(), l4.to_bits());
        for j in 0..n {
            assert_eq!(g1[j].value.to_bits(), g4[j].value.to_bits(), "value {j}");
            assert_eq!(
                g1[j].tangent[0].to_bits(),
                g4[j].tangent[lane].to_bits(),
                "lane {lane}, param {j}"
            );
        }
    }
    // Repeated coordinate: identical lanes.
    assert!(g4
        .iter()
        .all(|g| g.tangent[1].to_bits() == g.tangent[2].to_bits()));
    let mut g = vec![0.0; n];
    let l = m
        .loss_and_grad(&p, &x, 2, &mut g, &mut m.workspace())
        .unwrap();
    assert_eq!(l.to_bits(), l4.to_bits());
    assert!(g
        .iter()
        .zip(&g4)
        .all(|(a, b)| a.to_bits() == b.value.to_bits()));
}

/// Straightforward reference forward pass (explicit index formulas, no shared code).
fn naive_logits(m: &Sequential, p: &[f64], x: &[f64]) -> Vec<f64> {
    let mut a = x.to_vec();
    for l in 0..m.num_layers() {
        let (layer, si, so) = m.layer(l).unwrap();
        let r = m.param_range(l).unwrap();
        let w = &p[r];
        let mut y = vec![0.0; so.len().unwrap()];
        match layer {
            Layer::Dense { units } => {
                let n = a.len();
                for o in 0..units {
                    let mut s = w[units * n + o];
                    for i in 0..n {
                        s += w[o * n + i] * a[i];
                    }
                    y[o] = s;
                }
            }
            Layer::Conv2d {
                out_channels,
                kernel: k,
                stride: s,
                padding: pd,
            } => {
                let c_in = si.channels;
                for o in 0..out_channels {
                    for i in 0..so.height {
                        for j in 0..so.width {
                            let mut acc = w[out_channels * c_in * k * k + o];
                            for c in 0..c_in {
                                for u in 0..k {
                                    for v in 0..k {
                                        let (r, q) = (
                                            (i * s + u) as isize - pd as isize,
                                            (j * s + v) as isize - pd as isize,
                                        );
                                        if r < 0
                                            || q < 0
                                            || r >= si.height as isize
                                            || q >= si.width as isize
                                        {
                                            continue;
                                        }
                                        acc += w[((o * c_in + c) * k + u) * k + v]
                                            * a[(c * si.height + r as usize) * si.width
                                                + q as usize];
                                    }
                                }
                            }
                            y[(o * so.height + i) * so.width + j] = acc;
                        }
                    }
                }
            }
            Layer::AvgPool2d {
                kernel: k,
                stride: s,
            } => {
                for c in 0..si.channels {
                    for i in 0..so.height {
                        for j in 0..so.width {
                            let mut acc = 0.0;
                            for u in 0..k {
                                for v in 0..k {
                                    acc += a[(c * si.height + i * s + u) * si.width + j * s + v];
                                }
                            }
                            y[(c * so.height + i) * so.width + j] = acc / (k * k) as f64;
                        }
                    }
                }
            }
            Layer::Act(act) => {
                for (o, &v) in y.iter_mut().zip(&a) {
                    *o = match act {
                        Activation::Tanh => libm::tanh(v),
                        Activation::Elu => {
                            if v > 0.0 {
                                v
                            } else {
                                libm::expm1(v)
                            }
                        }
                        Activation::Gelu => v * crate::math::normal::cdf(v),
                        Activation::Relu => v.max(0.0),
                    };
                }
            }
        }
        a = y;
    }
    a
}

#[test]
fn forward_matches_naive_reference_implementation() {
    // Different summation order: agreement to 1e-12 relative to the logit scale.
    let mut models: Vec<Sequential> = small_models().into_iter().map(|t| t.1).collect();
    models.push(arch::mnist_tanh_convnet().unwrap());
    models.push(arch::cifar10_tanh_convnet().unwrap());
    for (i, m) in models.iter().enumerate() {
        let p = params_for(m, 70 + i as u64);
        let x = gaussian_vec(80 + i as u64, m.input_len(), 1.0);
        let mut ws = m.workspace::<f64>();
        let z = m.logits(&p, &x, &mut ws).unwrap().to_vec();
        let r = naive_logits(m, &p, &x);
        for (a, b) in z.iter().zip(&r) {
            assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "model {i}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn relu_jvp_matches_differences_away_from_kinks() {
    // With ReLU the gradient is piecewise smooth in x; with no pre-activation near 0 the
    // finite differences (h = 1e-5) do not cross a kink, so they must still agree.
    let m = arch::mlp(6, &[5], 3, Activation::Relu).unwrap();
    let p = params_for(&m, 90);
    let x = gaussian_vec(91, 6, 0.5);
    let mut ws = m.workspace::<f64>();
    m.logits(&p, &x, &mut ws).unwrap();
    check_input_jvp_fd(&m, 1, &[0, 1, 2, 3, 4, 5], 90);
}

#[test]
fn shape_errors_at_construction() {
    let ce = Loss::SoftmaxCrossEntropy;
    let s = Shape::new(1, 4, 4);
    let dense = Layer::Dense { units: 3 };
    // Kernel larger than the padded input.
    assert!(matches!(
        Sequential::new(s, &[conv(2, 7, 1, 1), dense], ce),
        Err(Error::Inconsistent { .. })
    ));
    // Pooling window larger than its input (2 × 2 after a 3 × 3 valid conv).
    assert!(matches!(
        Sequential::new(
            s,
            &[
                conv(2, 3, 1, 0),
                Layer::AvgPool2d {
                    kernel: 3,
                    stride: 1
                },
                dense
            ],
            ce
        ),
        Err(Error::Inconsistent { .. })
    ));
    for (bad, name) in [
        (conv(0, 3, 1, 0), "out_channels"),
        (conv(1, 0, 1, 0), "kernel"),
        (conv(1, 3, 0, 0), "stride"),
        (conv(1, 3, 1, 3), "padding"),
        (Layer::Dense { units: 0 }, "units"),
        (
            Layer::AvgPool2d {
                kernel: 2,
                stride: 0,
            },
            "stride",
        ),
        (
            Layer::AvgPool2d {
                kernel: 0,
                stride: 1,
            },
            "kernel",
        ),
    ] {
        match Sequential::new(s, &[bad, dense], ce) {
            Err(Error::InvalidCount { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert!(Sequential::new(s, &[], ce).is_err());
    // Absurd sizes: errors, not overflow panics (tests run with overflow checks off in
    // release; the debug run of this test checks them).
    assert!(Sequential::new(s, &[conv(1, 3, usize::MAX, 1), dense], ce).is_err());
    assert!(Sequential::new(s, &[conv(1, 3, 1 << 40, 1), dense], ce).is_err());
    assert!(Sequential::new(s, &[Layer::Dense { units: usize::MAX }, dense], ce).is_err());
    assert!(Sequential::new(Shape::new(0, 4, 4), &[dense], ce).is_err());
    assert!(Sequential::new(Shape::new(usize::MAX, 4, 4), &[dense], ce).is_err());
    // Loss/output mismatch.
    assert!(Sequential::new(s, &[Layer::Dense { units: 1 }], ce).is_err());
    assert!(Sequential::new(s, &[dense], Loss::Logistic).is_err());
    assert!(arch::mlp(10, &[0], 10, Activation::Tanh).is_err());
    assert!(arch::mlp(10, &[5], 1, Activation::Tanh).is_err());
    assert!(arch::logistic_regression(0).is_err());
}

#[test]
fn bad_labels_inputs_and_buffers_give_errors() {
    let m = arch::mlp(4, &[3], 3, Activation::Tanh).unwrap();
    let p = m.init_params(1);
    let x = [0.1, 0.2, 0.3, 0.4];
    let mut ws = m.workspace::<f64>();
    let mut g = vec![0.0; m.num_params()];
    let e = m.loss_and_grad(&p, &x, 3, &mut g, &mut ws).unwrap_err();
    assert!(matches!(
        e,
        Error::InvalidCount {
            name: "label",
            value: 3,
            ..
        }
    ));
    let e = m
        .loss_and_grad(&p, &[0.1, f64::NAN, 0.0, 0.0], 0, &mut g, &mut ws)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "x", .. }));
    let e = m
        .loss_and_grad(&p, &[f64::INFINITY, 0.0, 0.0, 0.0], 0, &mut g, &mut ws)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "x", .. }));
    assert!(matches!(
        m.loss_and_grad(&p, &x[..3], 0, &mut g, &mut ws),
        Err(Error::Inconsistent { .. })
    ));
    assert!(m.loss_and_grad(&p[1..], &x, 0, &mut g, &mut ws).is_err());
    let mut bad_p = p.clone();
    bad_p[5] = f64::NAN;
    assert!(matches!(
        m.loss_and_grad(&bad_p, &x, 0, &mut g, &mut ws),
        Err(Error::InvalidParameter { name: "params", .. })
    ));
    assert!(m.loss_and_grad(&p, &x, 0, &mut g[1..], &mut ws).is_err());
    let other = arch::mlp(4, &[4], 3, Activation::Tanh).unwrap();
    assert!(m
        .loss_and_grad(&p, &x, 0, &mut g, &mut other.workspace())
        .is_err());
    // JVP: too many coordinates, coordinate out of range.
    let mut wsd = m.workspace::<Dual<2>>();
    let mut gd = vec![Dual::<2>::default(); m.num_params()];
    assert!(matches!(
        m.loss_and_grad_jvp(&p, &x, 0, &[0, 1, 2], &mut gd, &mut wsd),
        Err(Error::InvalidCount { name: "coords", .. })
    ));
    assert!(matches!(
        m.loss_and_grad_jvp(&p, &x, 0, &[4], &mut gd, &mut wsd),
        Err(Error::InvalidCount {
            name: "coords",
            value: 4,
            ..
        })
    ));
    assert!(m
        .loss_and_grad_jvp(&p, &x, 0, &[], &mut gd, &mut wsd)
        .is_ok());
    // Logistic: labels 0 and 1 only.
    let lr = arch::logistic_regression(4).unwrap();
    let mut gl = [0.0; 5];
    assert!(lr
        .loss_and_grad(&[0.0; 5], &x, 2, &mut gl, &mut lr.workspace())
        .is_err());
    // forward_backward: input_grad length.
    let mut gx = [0.0; 3];
    assert!(m
        .forward_backward(&p, &x, 0, &mut g, Some(&mut gx), &mut ws)
        .is_err());
    // Accuracy: mismatched lengths, bad label.
    assert!(m.accuracy(&p, &x, &[0, 1], &mut ws).is_err());
    assert!(m.accuracy(&p, &x, &[5], &mut ws).is_err());
    assert!(m.accuracy(&p, &x, &[], &mut ws).is_err());
    // Huge parameters: a non-finite logit is an error, not NaN.
    let huge = vec![1e308; m.num_params()];
    assert!(m.loss_and_grad(&huge, &x, 0, &mut g, &mut ws).is_err());
}

#[test]
fn softmax_cross_entropy_stable_for_huge_logits_and_gradient_sums_to_zero() {
    let z = [1e4, -1e4, 0.0, 5e3];
    let mut dz = [0.0; 4];
    // Label 0 holds the largest logit: ℓ = ln(1 + e^{−5000} + …) = 0 exactly in f64.
    let l0 = Loss::SoftmaxCrossEntropy.value_and_grad(&z, 0, &mut dz);
    assert_eq!(l0, 0.0);
    assert_eq!(dz, [0.0, 0.0, 0.0, 0.0]);
    // Label 1: ℓ = 1e4 − (−1e4) = 2e4 (plus e^{−5000}, below rounding).
    let l1 = Loss::SoftmaxCrossEntropy.value_and_grad(&z, 1, &mut dz);
    assert_eq!(l1, 2e4);
    assert_eq!(dz, [1.0, -1.0, 0.0, 0.0]);
    // Moderate logits: the gradient sums to 0 up to rounding of K terms (≤ 4ε).
    let z = [-1e4, 3.0, 2.5, -1.0, 9e3 - 9e3 + 0.7];
    let mut dz = [0.0; 5];
    for y in 0..5 {
        let l = Loss::SoftmaxCrossEntropy.value_and_grad(&z, y, &mut dz);
        assert!(l.is_finite() && l >= 0.0);
        let s: f64 = dz.iter().sum();
        assert!(s.abs() <= 4.0 * f64::EPSILON, "sum {s}");
    }
    // Also in Dual arithmetic, seeded on a huge logit: finite value and tangents.
    let zd = [
        Dual::<1>::variable(1e4, 0).unwrap(),
        Dual::cst(-1e4),
        Dual::cst(0.0),
    ];
    let mut dzd = [Dual::<1>::default(); 3];
    let l = Loss::SoftmaxCrossEntropy.value_and_grad(&zd, 2, &mut dzd);
    assert_eq!(l.value, 1e4);
    assert_eq!(l.tangent[0], 1.0);
    assert!(dzd
        .iter()
        .all(|d| d.value.is_finite() && d.tangent[0].is_finite()));
    // Logistic loss at huge margins: finite, gradient accurate in the tail.
    let mut dl = [0.0];
    let l = Loss::Logistic.value_and_grad(&[800.0], 0, &mut dl);
    assert_eq!((l, dl[0]), (800.0, 1.0));
    let l = Loss::Logistic.value_and_grad(&[40.0], 1, &mut dl);
    assert!((l - libm::exp(-40.0)).abs() < 1e-30 && (dl[0] + libm::exp(-40.0)).abs() < 1e-30);
}

#[test]
fn lecun_init_has_variance_one_over_fan_in() {
    let m = arch::mlp(784, &[100], 10, Activation::Tanh).unwrap();
    let p = m.init_params(2026);
    assert_eq!(p, m.init_params(2026));
    assert_ne!(p, m.init_params(2027));
    let w = &p[..78_400];
    let var = w.iter().map(|v| v * v).sum::<f64>() / w.len() as f64;
    // Sample variance of 78,400 N(0, 1/784) draws: relative sd √(2/78400) = 0.5%; 5.5σ.
    assert!(
        (var * 784.0 - 1.0).abs() < 5.5 * (2.0f64 / 78_400.0).sqrt(),
        "seed 2026: {var}"
    );
    assert!(p[78_400..78_500].iter().all(|&b| b == 0.0));
    let mean = w.iter().sum::<f64>() / w.len() as f64;
    assert!(
        mean.abs() < 5.5 * (1.0f64 / 784.0 / 78_400.0).sqrt(),
        "seed 2026: {mean}"
    );
}

#[test]
fn predict_and_accuracy() {
    let m = Sequential::new(
        Shape::flat(2),
        &[Layer::Dense { units: 3 }],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap();
    // Logits = x₀·(1, 0, −1) + x₁·(0, 1, 0).
    let p = [1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0];
    let mut ws = m.workspace();
    assert_eq!(m.predict(&p, &[2.0, 1.0], &mut ws).unwrap(), 0);
    assert_eq!(m.predict(&p, &[-2.0, 1.0], &mut ws).unwrap(), 2);
    assert_eq!(m.predict(&p, &[0.0, 1.0], &mut ws).unwrap(), 1);
    let acc = m
        .accuracy(
            &p,
            &[2.0, 1.0, -2.0, 1.0, 0.0, 1.0, 0.0, 0.0],
            &[0, 2, 2, 0],
            &mut ws,
        )
        .unwrap();
    assert_eq!(acc, 0.75); // the last: all logits 0, ties → class 0
}

#[test]
fn input_grad_param_jvp_equals_generic_dual_pass() {
    // input_grad_param_jvp (a dense first layer in f64, the rest in Dual<1>) against the
    // generic pass it specialises: forward_backward with W = S = Dual<1>, parameters seeded
    // with the direction, x constant, no parameter gradient. The same Dual arithmetic term by
    // term in the same order, so the results are equal (== on values: only the sign of a zero
    // could differ); models without a dense first layer take the generic pass itself.
    let mut models: Vec<(&'static str, Sequential, usize)> = small_models();
    models.push((
        "mlp 784-10-10 elu",
        arch::mlp(784, &[10], 10, Activation::Elu).unwrap(),
        3,
    ));
    models.push(("mnist convnet", arch::mnist_tanh_convnet().unwrap(), 7));
    for (s, (name, m, label)) in models.iter().enumerate() {
        let p = params_for(m, 200 + s as u64);
        let u = gaussian_vec(210 + s as u64, m.num_params(), 1.0);
        let x = gaussian_vec(220 + s as u64, m.input_len(), 0.7);
        let d = m.input_len();
        let mut out = vec![0.0; d];
        let mut pw = m.param_jvp_workspace();
        let la = m
            .input_grad_param_jvp(&p, &u, &x, *label, &mut out, &mut pw)
            .unwrap();
        let pd: Vec<Dual<1>> = p.iter().zip(&u).map(|(&w, &t)| Dual::new(w, [t])).collect();
        let xd: Vec<Dual<1>> = x.iter().map(|&v| Dual::constant(v)).collect();
        let mut gx = vec![Dual::<1>::default(); d];
        let mut ws = m.workspace::<Dual<1>>();
        let lb = m
            .forward_backward(&pd, &xd, *label, &mut [], Some(&mut gx), &mut ws)
            .unwrap();
        assert_eq!(la.to_bits(), lb.value.to_bits(), "{name}");
        assert!(out.iter().any(|&v| v != 0.0), "{name}: degenerate");
        for (i, (a, b)) in out.iter().zip(&gx).enumerate() {
            assert!(*a == b.tangent[0], "{name}, x{i}: {a} vs {}", b.tangent[0]);
        }
        // Reusing the workspace gives the same bits.
        let mut again = vec![0.0; d];
        m.input_grad_param_jvp(&p, &u, &x, *label, &mut again, &mut pw)
            .unwrap();
        assert_eq!(
            again.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn input_grad_param_jvp_rejects_bad_input() {
    let m = arch::mlp(3, &[2], 2, Activation::Tanh).unwrap();
    let other = arch::mlp(4, &[2], 2, Activation::Tanh).unwrap();
    let p = params_for(&m, 1);
    let n = m.num_params();
    let u = vec![0.5; n];
    let x = [0.1, 0.2, 0.3];
    let mut out = [0.0; 3];
    let mut pw = m.param_jvp_workspace();
    let name = |r: crate::Result<f64>| crate::error::error_name(r.unwrap_err());
    let mut bad_u = u.clone();
    bad_u[2] = f64::NAN;
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &bad_u, &x, 0, &mut out, &mut pw)),
        "direction"
    );
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &u[1..], &x, 0, &mut out, &mut pw)),
        "inconsistent"
    );
    let mut bad_p = p.clone();
    bad_p[0] = f64::INFINITY;
    assert_eq!(
        name(m.input_grad_param_jvp(&bad_p, &u, &x, 0, &mut out, &mut pw)),
        "params"
    );
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &u, &[0.1, f64::NAN, 0.3], 0, &mut out, &mut pw)),
        "x"
    );
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &u, &x, 2, &mut out, &mut pw)),
        "label"
    );
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &u, &x, 0, &mut [0.0; 2], &mut pw)),
        "inconsistent"
    );
    let mut pw_other = other.param_jvp_workspace();
    assert_eq!(
        name(m.input_grad_param_jvp(&p, &u, &x, 0, &mut out, &mut pw_other)),
        "inconsistent"
    );
    // Parameters so large that the loss overflows: an error, not a NaN derivative.
    let huge = vec![1e308; n];
    assert!(m
        .input_grad_param_jvp(&huge, &u, &x, 0, &mut out, &mut pw)
        .is_err());
}

#[test]
fn sparse_first_layer_jvp_equals_generic_seeded_pass() {
    // loss_and_grad_jvp handles the first layer's seeded tangents sparsely; the generic pass
    // (forward_backward with W = f64, S = Dual<4>, x seeded) computes the same numbers with
    // the first layer's terms summed in another order: agreement to 1e-12 relative (values:
    // bit for bit).
    let models = [
        arch::mnist_tanh_convnet().unwrap(),
        arch::mlp(784, &[10], 10, Activation::Elu).unwrap(),
        small_models().remove(4).1,
    ];
    for (s, m) in models.iter().enumerate() {
        let p = params_for(m, 100 + s as u64);
        let x = gaussian_vec(110 + s as u64, m.input_len(), 0.7);
        let d = m.input_len();
        let coords = [0, d / 3, d / 2 + 1, d - 1];
        let n = m.num_params();
        let mut ws = m.workspace::<Dual<4>>();
        let mut a = vec![Dual::<4>::default(); n];
        let la = m
            .loss_and_grad_jvp(&p, &x, 1, &coords, &mut a, &mut ws)
            .unwrap();
        let mut xd: Vec<Dual<4>> = x.iter().map(|&v| Dual::constant(v)).collect();
        for (lane, &c) in coords.iter().enumerate() {
            xd[c].tangent[lane] = 1.0;
        }
        let mut b = vec![Dual::<4>::default(); n];
        let lb = m
            .forward_backward(&p, &xd, 1, &mut b, None, &mut ws)
            .unwrap();
        assert_eq!(la.to_bits(), lb.value.to_bits());
        for j in 0..n {
            assert_eq!(
                a[j].value.to_bits(),
                b[j].value.to_bits(),
                "model {s} value {j}"
            );
            for k in 0..4 {
                let (u, v) = (a[j].tangent[k], b[j].tangent[k]);
                assert!(
                    (u - v).abs() <= 1e-12 * v.abs().max(1.0),
                    "model {s} param {j} lane {k}: {u} vs {v}"
                );
            }
        }
    }
}

#[test]
fn loss_and_grad_reports_overflow_in_the_first_dense_layer_gradient() {
    // loss_and_grad certifies a dense first layer's weight gradient δ_o·x_i from the bound
    // fl(|δ|·max|x|) instead of sweeping it: the bound must not hide an overflow, and must not
    // reject a finite gradient. Dense(1) → Dense(1) → logistic; w2 = 1e10 makes δ1 = 1e10.
    let m = Sequential::new(
        Shape::flat(2),
        &[Layer::Dense { units: 1 }, Layer::Dense { units: 1 }],
        Loss::Logistic,
    )
    .unwrap();
    let mut ws = m.workspace::<f64>();
    let mut grad = vec![0.0; m.num_params()];
    let p = [1e-300, 0.0, 0.0, 1e10, 0.0];
    // δ1·1e300 overflows in both weight-gradient entries.
    let r = m.loss_and_grad(&p, &[1e300, 1e300], 0, &mut grad, &mut ws);
    assert!(
        matches!(r, Err(Error::Numerical { what, value }) if what == "non-finite gradient"
            && value == f64::INFINITY),
        "{r:?}"
    );
    // x = 1e290: z2 = 1, δ1 = σ(1)·1e10 and δ1·1e290 = σ(1)·1e300 is finite: accepted, and
    // exact (σ(1) = 0.7310585786300049, to 1e-12).
    let r = m.loss_and_grad(&p, &[1e290, 1e290], 0, &mut grad, &mut ws);
    assert!(r.is_ok(), "{r:?}");
    assert!(
        (grad[0] / 0.7310585786300049e300 - 1.0).abs() < 1e-12,
        "{}",
        grad[0]
    );
}

#[test]
fn jvp_reports_overflow_in_the_first_dense_layer_gradient() {
    // Dense(1) → Dense(1) → logistic on x = (x0, 1e300). The first layer's weight gradient
    // δ1·x_i is certified finite from a bound instead of being read, so check that the
    // bound does not hide an overflow: (a) the value δ1·1e300 overflows, (b) only a tangent
    // overflows (δ̇1 = w2²·σ′(z2)·a in the lane seeded at x0 is 2.5e11, times 1e300).
    let m = Sequential::new(
        Shape::flat(2),
        &[Layer::Dense { units: 1 }, Layer::Dense { units: 1 }],
        Loss::Logistic,
    )
    .unwrap();
    let mut ws = m.workspace::<Dual<2>>();
    let mut grad = vec![Dual::<2>::default(); m.num_params()];
    // (a) w1 = (1e-300, 0), w2 = 1e10, x = (1e300, 1e300): z2 = 1e10, δ1 = 1e10.
    let p = [1e-300, 0.0, 0.0, 1e10, 0.0];
    let r = m.loss_and_grad_jvp(&p, &[1e300, 1e300], 0, &[0, 1], &mut grad, &mut ws);
    assert!(
        matches!(r, Err(Error::Numerical { what, .. }) if what == "non-finite gradient"),
        "{r:?}"
    );
    // (b) w1 = (1e4, 0), w2 = 1e4, x = (0, 1e300): z2 = 0, δ1 = 5e3 (gradient 5e303, finite).
    let p = [1e4, 0.0, 0.0, 1e4, 0.0];
    let r = m.loss_and_grad_jvp(&p, &[0.0, 1e300], 0, &[0], &mut grad, &mut ws);
    assert!(
        matches!(r, Err(Error::Numerical { what, .. })
            if what == "non-finite derivative of the gradient"),
        "{r:?}"
    );
    // Without the overflow (x1 = 1e200) the same pass succeeds and the tangent is exact:
    // d/dx0 of δ1·x1 = 2.5e11·1e200.
    let r = m.loss_and_grad_jvp(&p, &[0.0, 1e200], 0, &[0], &mut grad, &mut ws);
    assert!(r.is_ok(), "{r:?}");
    let t = grad[1].tangent[0];
    assert!((t / 2.5e211 - 1.0).abs() < 1e-12, "{t}");
}
