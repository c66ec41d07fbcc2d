//! Tests of the batched clipped-gradient sum against the per-example path
//! (`loss_and_grad` + `clip` + `sum += g̃`, the DP-SGD loop).
//!
//! Tolerances. The forward and backward passes are the per-example bits, so the loss sum is
//! compared exactly, and so is the gradient sum whenever no gradient is scaled (no clipping,
//! or hard clipping inactive). With scaling, each term differs by rounding only: c_i through
//! ‖g_i‖ (the per-example norm sums p squares in 8 partial sums, ours a few per-layer
//! products: relative difference ≲ 1e-15), and fl(fl(c·δ)·a) against fl(fl(δ·a)·c) (≤ 2
//! ulps). The error of an entry of the sum is thus ≲ 4ε·Σ_i |g̃_i,j| (ε = 2.2e-16); we
//! check max_j |Δ_j| / Σ_i |g̃_i,j| ≤ 1e-14 (≈ 45ε, margin for the norm's rounding) and the
//! normwise ‖Δ‖/‖Σ g̃‖ ≤ 1e-12 (the goal). Measured on 1,000 MNIST digits (printed by
//! `ghost_sum_matches_per_example_clipping_on_mnist_to_1e_12`): entrywise ≤ 1.5e-15,
//! normwise ≤ 3.6e-16, for the three MLPs and four clippings there.

use super::super::Sequential;
use super::BATCH_BLOCK;
use crate::data::{embedded_mnist, Dataset};
use crate::error::Error;
use crate::nn::{arch, Activation, Layer, Loss, Shape};
use crate::rng::Rng;
use crate::train::clip::{clip, ClipMethod};
use crate::train::dpsgd::Clipping;
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;

/// The per-example path: Σ_i clip(∇ℓ_i) in batch order, the loss sum, and Σ_i |g̃_i| (the
/// rounding scale of each entry).
fn per_example(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
    batch: &[usize],
    clipping: Option<Clipping>,
) -> Result<(Vec<f64>, f64, Vec<f64>), Error> {
    let p = model.num_params();
    let (mut sum, mut abs, mut g) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    let mut ws = model.workspace::<f64>();
    let mut loss = 0.0;
    for &i in batch {
        let (x, y) = data.example(i)?;
        loss += model.loss_and_grad(params, x, y as usize, &mut g, &mut ws)?;
        if let Some(c) = clipping {
            clip(&mut g, c.method, c.norm)?;
        }
        for ((s, a), &v) in sum.iter_mut().zip(abs.iter_mut()).zip(&g) {
            *s += v;
            *a += v.abs();
        }
    }
    Ok((sum, loss, abs))
}

/// The batched path with fresh buffers.
fn batched(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
    batch: &[usize],
    clipping: Option<Clipping>,
) -> Result<(Vec<f64>, f64), Error> {
    let mut ws = model.batch_workspace().unwrap();
    let mut sum = vec![f64::NAN; model.num_params()];
    let loss = model.clipped_grad_sum(params, data, batch, clipping, &mut sum, &mut ws)?;
    Ok((sum, loss))
}

/// (max_j |a_j − b_j| / scale_j, ‖a − b‖₂ / ‖b‖₂); entries with scale 0 must agree exactly.
fn errors(a: &[f64], b: &[f64], scale: &[f64]) -> (f64, f64) {
    let mut entry: f64 = 0.0;
    let (mut d2, mut b2) = (0.0, 0.0);
    for ((&x, &y), &s) in a.iter().zip(b).zip(scale) {
        let d = (x - y).abs();
        if s == 0.0 {
            assert_eq!(x, y, "an entry with no terms must be 0 in both");
        } else {
            entry = entry.max(d / s);
        }
        d2 += d * d;
        b2 += y * y;
    }
    (
        entry,
        if b2 > 0.0 {
            (d2 / b2).sqrt()
        } else {
            d2.sqrt()
        },
    )
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn hard(norm: f64) -> Option<Clipping> {
    Some(Clipping {
        method: ClipMethod::Hard,
        norm,
    })
}

fn gelu(norm: f64) -> Option<Clipping> {
    Some(Clipping {
        method: ClipMethod::Gelu,
        norm,
    })
}

/// The per-example gradient norms, sorted.
fn sorted_norms(model: &Sequential, params: &[f64], data: &Dataset, batch: &[usize]) -> Vec<f64> {
    let mut ws = model.workspace::<f64>();
    let mut g = vec![0.0; model.num_params()];
    let mut norms: Vec<f64> = batch
        .iter()
        .map(|&i| {
            let (x, y) = data.example(i).unwrap();
            model
                .loss_and_grad(params, x, y as usize, &mut g, &mut ws)
                .unwrap();
            crate::autodiff::l2_norm(&g)
        })
        .collect();
    norms.sort_by(f64::total_cmp);
    norms
}

/// LeCun initialisation plus small random biases (so that every bias path is exercised).
fn params_with_biases(model: &Sequential, seed: u64) -> Vec<f64> {
    let mut p = model.init_params(seed);
    let mut r = Rng::from_seed(seed ^ 0x5eed);
    for v in p.iter_mut().filter(|v| **v == 0.0) {
        *v = 0.1 * r.gaussian();
    }
    p
}

fn mnist(n: usize) -> Dataset {
    let data = embedded_mnist().unwrap();
    let idx: Vec<usize> = (0..n).collect();
    data.subset(&idx).unwrap()
}

/// A batch over `n` examples in a scrambled order with a few repeats.
fn scrambled_batch(n: usize, len: usize, seed: u64) -> Vec<usize> {
    let mut r = Rng::from_seed(seed);
    (0..len)
        .map(|_| r.below(n as u64).unwrap() as usize)
        .collect()
}

#[test]
fn ghost_sum_is_bit_identical_to_per_example_path_when_nothing_is_scaled() {
    // Exact: forward/backward are the per-example bits, and with every clipping factor 1 the
    // terms fl(δ·a) are added in the same (batch) order. Hard clipping at C = 1e6 is inactive
    // (MNIST gradient norms at initialisation are < 10).
    let data = mnist(1000);
    let batch: Vec<usize> = (0..1000).collect();
    for (model, seed) in [
        (arch::mlp(784, &[10], 10, Activation::Elu).unwrap(), 1),
        (arch::mlp(784, &[16, 12], 10, Activation::Tanh).unwrap(), 2),
    ] {
        let params = params_with_biases(&model, seed);
        assert!(sorted_norms(&model, &params, &data, &batch)[999] < 1e6);
        for clipping in [None, hard(1e6)] {
            let (want, want_loss, _) =
                per_example(&model, &params, &data, &batch, clipping).unwrap();
            let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
            assert_eq!(got_loss.to_bits(), want_loss.to_bits());
            assert_eq!(bits(&got), bits(&want), "{clipping:?}");
        }
    }
}

#[test]
fn ghost_sum_matches_per_example_clipping_on_mnist_to_1e_12() {
    // Hard clipping active on every example (C below the smallest norm) and on about half
    // (C = median norm), GELU clipping at the median and at C = 1; the MLP 784-10-10 ELU of
    // the attack and a two-hidden-layer tanh / ELU MLP. Loss sums exact; tolerances in the
    // module docs.
    let data = mnist(1000);
    let batch = scrambled_batch(1000, 1000, 3);
    for (model, seed) in [
        (arch::mlp(784, &[10], 10, Activation::Elu).unwrap(), 1),
        (arch::mlp(784, &[16, 12], 10, Activation::Tanh).unwrap(), 2),
        (arch::mlp(784, &[24, 10], 10, Activation::Elu).unwrap(), 4),
    ] {
        let params = params_with_biases(&model, seed);
        let norms = sorted_norms(&model, &params, &data, &batch);
        let (min, median) = (norms[0], norms[500]);
        for clipping in [hard(0.5 * min), hard(median), gelu(median), gelu(1.0)] {
            let (want, want_loss, scale) =
                per_example(&model, &params, &data, &batch, clipping).unwrap();
            let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
            assert_eq!(got_loss.to_bits(), want_loss.to_bits());
            let (entry, normwise) = errors(&got, &want, &scale);
            std::println!(
                "p = {}, {clipping:?}: entrywise {entry:.2e}, normwise {normwise:.2e}",
                model.num_params()
            );
            assert!(
                entry <= 1e-14 && normwise <= 1e-12,
                "{entry:e} {normwise:e}"
            );
        }
    }
}

#[test]
fn ghost_sum_does_not_depend_on_the_block_size() {
    // Exact: every sum runs in batch order across blocks, so blocks of 1, 2, 3, 7 and 32
    // examples must give the same bits (odd counts exercise the one-example tails).
    let data = mnist(300);
    let batch = scrambled_batch(300, 77, 5);
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let params = params_with_biases(&model, 7);
    let mut ws = model.batch_workspace().unwrap();
    for clipping in [None, hard(0.3), gelu(0.3)] {
        let mut first: Option<(Vec<u64>, u64)> = None;
        for block in [BATCH_BLOCK, 1, 2, 3, 7] {
            let mut sum = vec![0.0; model.num_params()];
            let loss = model
                .clipped_grad_sum_in_blocks(
                    &params, &data, &batch, clipping, &mut sum, &mut ws, block,
                )
                .unwrap();
            let got = (bits(&sum), loss.to_bits());
            match &first {
                None => first = Some(got),
                Some(f) => assert!(*f == got, "block {block}, {clipping:?}"),
            }
        }
    }
}

#[test]
fn ghost_sum_in_batch_order_by_the_block_index_changes_no_bit() {
    // Exact: a batch of whole blocks in order (0..n, the full batch of the shadow models)
    // takes the weight sum quad by quad from the data set's block index; blocks of 31 (never
    // a whole block), the dense loops and a batch starting at 5 (no whole block) take the
    // example-by-example sums. n = 300 ends in a partial block of 12; with and without
    // clipping, for the 10-unit first layer (the block path) and a 16-unit one (never).
    let data = mnist(300);
    for (model, seed) in [
        (arch::mlp(784, &[10], 10, Activation::Elu).unwrap(), 1),
        (arch::mlp(784, &[16], 10, Activation::Elu).unwrap(), 2),
    ] {
        let params = params_with_biases(&model, seed);
        let mut ws = model.batch_workspace().unwrap();
        for (lo, n) in [(0usize, 300usize), (0, 45), (5, 300), (32, 300)] {
            let batch: Vec<usize> = (lo..n).collect();
            // The block path is taken (a whole first block) except for the start at 5.
            let first = batch.get(..32.min(batch.len())).unwrap();
            assert_eq!(super::whole_block(data.support(), first).is_some(), lo != 5);
            for clipping in [None, hard(0.05), gelu(0.3)] {
                let (want, want_loss) = batched_dense(&model, &params, &data, &batch, clipping);
                let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
                let mut by31 = vec![0.0; model.num_params()];
                let loss31 = model
                    .clipped_grad_sum_in_blocks(
                        &params, &data, &batch, clipping, &mut by31, &mut ws, 31,
                    )
                    .unwrap();
                assert_eq!(got_loss.to_bits(), want_loss.to_bits());
                assert_eq!(loss31.to_bits(), want_loss.to_bits());
                assert_eq!(bits(&got), bits(&want), "{lo}..{n}, {clipping:?}");
                assert_eq!(bits(&by31), bits(&want), "{lo}..{n}, {clipping:?}");
            }
        }
    }
}

#[test]
fn whole_blocks_are_recognised_and_nothing_else() {
    // The block path is taken exactly for chunks that are a whole block of the index.
    let data = mnist(70);
    let s = data.support();
    let whole = |c: &[usize]| super::whole_block(s, c).is_some();
    let block = |a: usize, b: usize| (a..b).collect::<Vec<usize>>();
    assert!(whole(&block(0, 32)) && whole(&block(32, 64)) && whole(&block(64, 70)));
    assert!(!whole(&block(0, 31)) && !whole(&block(1, 33)) && !whole(&block(64, 69)));
    assert!(!whole(&[0, 2, 1]) && !whole(&[]) && !whole(&block(96, 100)));
    let mut rev = block(0, 32);
    rev.reverse();
    assert!(!whole(&rev));
    let dense = data.clone().without_support();
    assert!(super::whole_block(dense.support(), &block(0, 32)).is_none());
}

#[test]
fn ghost_sum_single_example_is_the_clipped_gradient() {
    // A batch of one example is g̃ itself: within 1e-14 relative (‖g̃‖ scale) of `clip`'s
    // result, and under hard clipping its norm is at most C up to rounding ((p + 3)·ε as
    // `clip` documents).
    let data = mnist(20);
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let params = params_with_biases(&model, 9);
    let p = model.num_params();
    for i in 0..20 {
        for clipping in [hard(0.05), gelu(0.05), hard(1e3)] {
            let (want, _, _) = per_example(&model, &params, &data, &[i], clipping).unwrap();
            let (got, _) = batched(&model, &params, &data, &[i], clipping).unwrap();
            let n = crate::autodiff::l2_norm(&want);
            let d: f64 = got.iter().zip(&want).map(|(a, b)| (a - b) * (a - b)).sum();
            assert!(d.sqrt() <= 1e-14 * n, "{i} {clipping:?}");
            if let Some(Clipping {
                method: ClipMethod::Hard,
                norm,
            }) = clipping
            {
                let tol = (p as f64 + 3.0) * f64::EPSILON;
                assert!(crate::autodiff::l2_norm(&got) <= norm * (1.0 + tol));
            }
        }
    }
}

#[test]
fn ghost_norm_fast_and_careful_formulas_agree() {
    // The overflow-safe norm (power-of-two scaling, hypot) and the fast one compute the same
    // ‖g_i‖ with different roundings: both within a few ulps per layer, so 1e-14 relative.
    // Also against l2_norm of the materialised gradient (8-way sum of p squares): 1e-14.
    let data = mnist(64);
    let chunk: Vec<usize> = (0..BATCH_BLOCK).collect();
    for (model, seed) in [
        (arch::mlp(784, &[10], 10, Activation::Elu).unwrap(), 1),
        (arch::mlp(784, &[16, 12], 10, Activation::Tanh).unwrap(), 2),
    ] {
        let params = params_with_biases(&model, seed);
        let mut ws = model.batch_workspace().unwrap();
        let (xs, _) = model.block_inputs(&data, &chunk);
        let _ = model.block_forward_backward(&params, &data, &chunk, &mut ws, None);
        let mut pws = model.workspace::<f64>();
        let mut g = vec![0.0; model.num_params()];
        for i in 0..BATCH_BLOCK {
            let fast = libm::sqrt(model.example_norm2(&xs, &ws, i, None).unwrap().unwrap());
            let careful = model.careful_norm(&xs, &ws, i);
            let (x, y) = data.example(i).unwrap();
            model
                .loss_and_grad(&params, x, y as usize, &mut g, &mut pws)
                .unwrap();
            let exact = crate::autodiff::l2_norm(&g);
            assert!((fast - careful).abs() <= 1e-14 * exact, "{fast} {careful}");
            assert!((fast - exact).abs() <= 1e-14 * exact, "{fast} {exact}");
        }
    }
}

#[test]
fn scaled_l2_is_exact_scaling_of_l2_norm() {
    // Power-of-two scaling is exact, so on a vector whose squares neither overflow nor
    // underflow scaled_l2 equals l2_norm to rounding (1 ulp of the sum and sqrt: 4ε), and
    // the same vector times 2^±700 (where l2_norm over/underflows) gives the same value
    // times 2^±700.
    let mut r = Rng::from_seed(13);
    for len in [1usize, 3, 8, 13, 100] {
        let v: Vec<f64> = (0..len).map(|_| r.gaussian()).collect();
        let n = crate::autodiff::l2_norm(&v);
        let s = super::scaled_l2(&v);
        assert!((s - n).abs() <= 4.0 * f64::EPSILON * n, "{s} {n}");
        for k in [700, -700, -1000] {
            let f = libm::scalbn(1.0, k);
            let w: Vec<f64> = v.iter().map(|x| x * f).collect();
            let sw = super::scaled_l2(&w);
            assert!(
                (sw / f - s).abs() <= 4.0 * f64::EPSILON * s,
                "2^{k}: {sw} {s}"
            );
        }
    }
    assert_eq!(super::scaled_l2(&[0.0, -0.0]), 0.0);
    assert_eq!(super::scaled_l2(&[]), 0.0);
    // Subnormal values: 3·2^-1074 and 4·2^-1074 give 5·2^-1074 exactly.
    let t = f64::from_bits(1);
    assert_eq!(super::scaled_l2(&[3.0 * t, 4.0 * t]), 5.0 * t);
}

/// A random small model of dense layers and activations: 0–3 hidden layers of 1–7 units,
/// input widths with and without a multiple of 8, sometimes an activation first or two
/// dense layers in a row, cross-entropy (2–5 classes) or logistic.
fn random_model(r: &mut Rng) -> Sequential {
    let acts = [
        Activation::Tanh,
        Activation::Elu,
        Activation::Gelu,
        Activation::Relu,
    ];
    let d = [1usize, 5, 8, 13, 16, 21][r.below(6).unwrap() as usize];
    let mut layers = Vec::new();
    if r.below(4).unwrap() == 0 {
        layers.push(Layer::Act(acts[r.below(4).unwrap() as usize]));
    }
    for _ in 0..r.below(4).unwrap() {
        // Sometimes 10 units: the layers of the attacks' MLPs have their own kernels.
        let units = match r.below(8).unwrap() {
            0 => 10,
            k => k as usize,
        };
        layers.push(Layer::Dense { units });
        if r.below(5).unwrap() != 0 {
            layers.push(Layer::Act(acts[r.below(4).unwrap() as usize]));
        }
    }
    let (loss, out) = if r.below(3).unwrap() == 0 {
        (Loss::Logistic, 1)
    } else {
        (Loss::SoftmaxCrossEntropy, 2 + r.below(4).unwrap() as usize)
    };
    layers.push(Layer::Dense { units: out });
    Sequential::new(Shape::flat(d), &layers, loss).unwrap()
}

/// Uniform features, or for half the seeds sparse ones (each 0 with probability 0.8, −0 one
/// time in eight of those, so that a data set of 16 or more features keeps a support and the
/// first dense layer skips zero features).
fn random_data(r: &mut Rng, d: usize, classes: usize, n: usize) -> Dataset {
    let sparse = r.below(2).unwrap() == 0;
    let features: Vec<f64> = (0..n * d)
        .map(|_| {
            let v = r.uniform();
            match (sparse, r.uniform()) {
                (true, u) if u < 0.1 => -0.0,
                (true, u) if u < 0.8 => 0.0,
                _ => v,
            }
        })
        .collect();
    let labels: Vec<u32> = (0..n)
        .map(|_| r.below(classes as u64).unwrap() as u32)
        .collect();
    Dataset::new(features, labels, (1, 1, d), classes).unwrap()
}

proptest! {
    // Random small models, data (dense or sparse), parameter scales, batches (odd lengths,
    // repeats) and clippings (none, hard or GELU with C spread over 1e-3..1e3 times the
    // median norm).
    #[test]
    fn ghost_sum_matches_per_example_path_on_random_small_models(seed in any::<u64>()) {
        let mut r = Rng::from_seed(seed);
        let model = random_model(&mut r);
        let classes = model.num_classes();
        let data = random_data(&mut r, model.input_len(), classes, 40);
        let mut params = model.init_params(seed);
        let scale = libm::exp(r.gaussian());
        for v in params.iter_mut() {
            *v = *v * scale + 0.1 * r.gaussian();
        }
        let len = 1 + r.below(70).unwrap() as usize;
        let batch = scrambled_batch(40, len, seed ^ 1);
        let norms = sorted_norms(&model, &params, &data, &batch);
        let c = norms[norms.len() / 2].max(1e-300) * libm::exp(6.9 * (2.0 * r.uniform() - 1.0));
        let clipping = match r.below(3).unwrap() {
            0 => None,
            1 => hard(c),
            _ => gelu(c),
        };
        let (want, want_loss, abs) = per_example(&model, &params, &data, &batch, clipping).unwrap();
        let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
        prop_assert_eq!(got_loss.to_bits(), want_loss.to_bits());
        // Skipping zero features changes no bit, whatever the clipping.
        let (dense, dense_loss) = batched_dense(&model, &params, &data, &batch, clipping);
        prop_assert_eq!(dense_loss.to_bits(), got_loss.to_bits());
        prop_assert_eq!(bits(&dense), bits(&got));
        if clipping.is_none() || norms[norms.len() - 1] <= c * 0.999 && clipping == hard(c) {
            prop_assert_eq!(bits(&got), bits(&want));
        } else {
            let (entry, _) = errors(&got, &want, &abs);
            prop_assert!(entry <= 1e-14, "entrywise {:e}", entry);
        }
    }
}

/// `true` if both errors are the same variant with the same description.
fn same_error(a: Error, b: Error) -> bool {
    match (a, b) {
        (Error::Numerical { what: x, .. }, Error::Numerical { what: y, .. }) => x == y,
        (Error::Inconsistent { .. }, Error::Inconsistent { .. }) => true,
        (Error::InvalidParameter { name: x, .. }, Error::InvalidParameter { name: y, .. })
        | (Error::InvalidCount { name: x, .. }, Error::InvalidCount { name: y, .. }) => x == y,
        _ => false,
    }
}

#[test]
fn ghost_sum_validation_errors() {
    let data = mnist(10);
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let params = model.init_params(1);
    let p = model.num_params();
    let mut ws = model.batch_workspace().unwrap();
    let mut sum = vec![0.0; p];
    let batch = [0usize, 3, 9];
    let mut run = |params: &[f64], data: &Dataset, batch: &[usize], c, sum: &mut [f64]| {
        model
            .clipped_grad_sum(params, data, batch, c, sum, &mut ws)
            .unwrap_err()
    };
    // Parameters: length, then finiteness.
    assert!(matches!(
        run(&params[1..], &data, &batch, None, &mut sum),
        Error::Inconsistent { .. }
    ));
    let mut bad = params.clone();
    bad[4000] = f64::NAN;
    assert_eq!(
        run(&bad, &data, &batch, None, &mut sum).parameter(),
        Some("params")
    );
    // The output buffer.
    assert!(matches!(
        run(&params, &data, &batch, None, &mut vec![0.0; p + 1]),
        Error::Inconsistent { .. }
    ));
    // The clipping norm.
    for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            run(&params, &data, &batch, hard(c), &mut sum).parameter(),
            Some("clip_norm")
        );
    }
    // Indices and labels.
    assert_eq!(
        run(&params, &data, &[0, 10], None, &mut sum).parameter(),
        Some("index")
    );
    let small = arch::mlp(784, &[4], 3, Activation::Tanh).unwrap();
    let mut sws = small.batch_workspace().unwrap();
    let e = small
        .clipped_grad_sum(
            &small.init_params(1),
            &data,
            &[0, 1, 2, 3],
            None,
            &mut vec![0.0; small.num_params()],
            &mut sws,
        )
        .unwrap_err();
    assert_eq!(e.parameter(), Some("label"), "{e}");
    // Data of another dimension.
    let other = random_data(&mut Rng::from_seed(1), 10, 10, 5);
    assert!(matches!(
        run(&params, &other, &[0], None, &mut sum),
        Error::Inconsistent { .. }
    ));
    // A workspace of another model.
    let e = small
        .clipped_grad_sum(
            &small.init_params(1),
            &data,
            &[1],
            None,
            &mut vec![0.0; small.num_params()],
            &mut model.batch_workspace().unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Inconsistent { .. }), "{e}");
    // An empty batch: a zero sum and loss, as the per-example loop.
    let mut sum = vec![1.0; p];
    let loss = model
        .clipped_grad_sum(&params, &data, &[], hard(1.0), &mut sum, &mut ws)
        .unwrap();
    assert_eq!(loss, 0.0);
    assert!(sum.iter().all(|&v| v == 0.0));
}

#[test]
fn ghost_sum_refuses_convolutions_and_pooling() {
    // Models with a convolution or a pooling layer have no batch workspace (callers fall
    // back to the per-example path).
    assert!(arch::mnist_tanh_convnet()
        .unwrap()
        .batch_workspace()
        .is_none());
    let pool = Sequential::new(
        Shape::new(1, 4, 4),
        &[
            Layer::AvgPool2d {
                kernel: 2,
                stride: 2,
            },
            Layer::Dense { units: 2 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap();
    assert!(pool.batch_workspace().is_none());
    assert!(arch::logistic_regression(5)
        .unwrap()
        .batch_workspace()
        .is_some());
}

/// Dense 3 → ELU → Dense → `mid` → Dense 2 on 4 inputs, all-ones data, with the given
/// weights per dense layer (biases 0).
fn three_layer(mid: Activation, w: [f64; 3]) -> (Sequential, Vec<f64>, Dataset) {
    let model = Sequential::new(
        Shape::flat(4),
        &[
            Layer::Dense { units: 3 },
            Layer::Act(Activation::Elu),
            Layer::Dense { units: 2 },
            Layer::Act(mid),
            Layer::Dense { units: 2 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap();
    let mut params = vec![0.0; model.num_params()];
    for (l, &wl) in [0usize, 2, 4].iter().zip(&w) {
        let r = model.param_range(*l).unwrap();
        let units = model.layer(*l).unwrap().2.len().unwrap();
        let n = (r.len() - units) / units;
        for (k, j) in r.clone().take(r.len() - units).enumerate() {
            // The last layer's second row negated: logits ±w·Σa.
            params[j] = if *l == 4 && k >= n { -wl } else { wl };
        }
    }
    let data = Dataset::new(vec![1.0; 8], vec![0, 1], (1, 1, 4), 2).unwrap();
    (model, params, data)
}

#[test]
fn ghost_sum_numerical_errors_match_the_per_example_path() {
    // Each case: the per-example path fails with Error::Numerical; the batched path must
    // fail with the same description (value may differ: ours names the overflowing bound).
    let cases = [
        // Logits overflow: non-finite loss.
        (
            three_layer(Activation::Elu, [1e200, 1e200, 1e200]),
            hard(1.0),
        ),
        // Hidden ELU output +∞, then tanh(∞) = 1: finite loss, but the second dense layer's
        // weight gradient is 0·∞ = NaN.
        (three_layer(Activation::Tanh, [1e308, 1.0, 1.0]), None),
        // Hidden activations ~1e156, last-layer weights 1e-200: finite loss and gradient
        // entries, but ‖g‖² overflows, which `clip` reports.
        (
            three_layer(Activation::Elu, [1e156, 1.0, 1e-200]),
            gelu(1.0),
        ),
    ];
    for (k, ((model, params, data), clipping)) in cases.into_iter().enumerate() {
        let want = per_example(&model, &params, &data, &[0, 1], clipping).unwrap_err();
        let got = batched(&model, &params, &data, &[0, 1], clipping).unwrap_err();
        assert!(matches!(want, Error::Numerical { .. }), "case {k}: {want}");
        assert!(same_error(got, want), "case {k}: {got} vs {want}");
    }
    // The overflowing-norm model without clipping: no error in either path, same bits.
    let (model, params, data) = three_layer(Activation::Elu, [1e156, 1.0, 1e-200]);
    let (want, want_loss, _) = per_example(&model, &params, &data, &[0, 1], None).unwrap();
    let (got, got_loss) = batched(&model, &params, &data, &[0, 1], None).unwrap();
    assert_eq!(bits(&got), bits(&want));
    assert_eq!(got_loss.to_bits(), want_loss.to_bits());
}

#[test]
fn ghost_sum_careful_norm_where_squares_overflow() {
    // Hidden activations ~1e155 (‖a‖² overflows) with a confident softmax (logit margin
    // ~620, δ ~ e^-620): the gradient entries δ·a ~ 1e-106 are finite and so is ‖g‖², so the
    // per-example path succeeds; the fast norm formula cannot (‖a‖² = ∞) and the careful one
    // must give the same result to rounding. C is set near ‖g‖ so the factor matters.
    let (model, params, _) = three_layer(Activation::Elu, [1.3e155 / 4.0, 1.0, 4e-154]);
    let data = Dataset::new(vec![1.0; 4], vec![0], (1, 1, 4), 2).unwrap();
    let norm = sorted_norms(&model, &params, &data, &[0])[0];
    assert!(norm > 0.0 && norm.is_finite() && norm < 1e-50, "{norm}");
    for clipping in [hard(0.5 * norm), gelu(norm)] {
        let (want, want_loss, abs) = per_example(&model, &params, &data, &[0], clipping).unwrap();
        let (got, got_loss) = batched(&model, &params, &data, &[0], clipping).unwrap();
        assert_eq!(got_loss.to_bits(), want_loss.to_bits());
        let (entry, _) = errors(&got, &want, &abs);
        assert!(entry <= 1e-14, "{clipping:?}: {entry:e}");
    }
}

/// The batched path with the zero-feature skipping turned off (the data set without its
/// support: every loop dense).
fn batched_dense(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
    batch: &[usize],
    clipping: Option<Clipping>,
) -> (Vec<f64>, f64) {
    let data = data.clone().without_support();
    assert!(data.support().min_nonzero().is_none());
    batched(model, params, &data, batch, clipping).unwrap()
}

#[test]
fn min_skip_is_two_to_the_minus_485() {
    assert_eq!(super::MIN_SKIP, libm::scalbn(1.0, -485));
    assert!(super::skippable(0.0) && super::skippable(-0.0) && super::skippable(-1.0 / 255.0));
    assert!(super::skippable(super::MIN_SKIP) && super::skippable(f64::MAX));
    assert!(!super::skippable(libm::scalbn(1.0, -486)) && !super::skippable(-f64::MIN_POSITIVE));
    assert!(!super::skippable(f64::NAN) && !super::skippable(f64::NEG_INFINITY));
}

#[test]
fn ghost_sum_skipping_zero_features_changes_no_bit() {
    // Exact (module docs, "Zero inputs"): with and without skipping the zero pixels of MNIST
    // digits (80 % of them), under every clipping (scaled δ included), for MLPs with ELU,
    // tanh and ReLU, a batch with repeats and an odd length (one-example tails).
    let data = mnist(300);
    let nonzero = data.features().iter().filter(|&&v| v != 0.0).count();
    assert!(nonzero * 4 < data.features().len(), "{nonzero}");
    assert!(data.support().min_nonzero() == Some(1.0 / 255.0));
    let batch = scrambled_batch(300, 251, 11);
    for (model, seed) in [
        (arch::mlp(784, &[10], 10, Activation::Elu).unwrap(), 1),
        (arch::mlp(784, &[16, 12], 10, Activation::Tanh).unwrap(), 2),
        (arch::mlp(784, &[7], 10, Activation::Relu).unwrap(), 3),
    ] {
        let params = params_with_biases(&model, seed);
        for clipping in [None, hard(0.05), gelu(0.3)] {
            let (want, want_loss) = batched_dense(&model, &params, &data, &batch, clipping);
            let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
            assert_eq!(got_loss.to_bits(), want_loss.to_bits());
            assert_eq!(bits(&got), bits(&want), "{clipping:?}");
        }
    }
}

/// Dense 16 → 2 → ELU → Dense 2 on two identical examples whose first 8 features are `x` and
/// last 8 are 0; the first unit's weights are `w` on the first 8 and +1 on the last 8, its
/// bias −0. Every product w·x is −2⁻¹⁰⁸⁰: each of the 8 fma chains rounds it to −0, and the
/// next feature's fma(1, 0, −0) = +0 turns it back, so the dense loop gives the first hidden
/// unit +0 + (−0) = +0 and a loop that skipped the zero features would give −0 + (−0) = −0.
fn underflow_case(w: f64, x: f64) -> (Sequential, Vec<f64>, Dataset) {
    let model = Sequential::new(
        Shape::flat(16),
        &[
            Layer::Dense { units: 2 },
            Layer::Act(Activation::Elu),
            Layer::Dense { units: 2 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap();
    let mut params = vec![0.5; model.num_params()];
    for (k, j) in model.param_range(0).unwrap().enumerate() {
        params[j] = match k {
            0..=7 => w,
            8..=15 => 1.0,
            32 => -0.0,
            _ => 0.25,
        };
    }
    let mut feats = vec![0.0; 32];
    for e in 0..2 {
        feats[16 * e..16 * e + 8].fill(x);
    }
    let data = Dataset::new(feats, vec![0, 1], (1, 1, 16), 2).unwrap();
    (model, params, data)
}

/// The first hidden unit of both examples after the block's forward pass, as bits; the
/// forward skipping forced on with `force`, else as the call decides it.
fn first_unit_bits(model: &Sequential, params: &[f64], data: &Dataset, force: bool) -> [u64; 2] {
    let mut ws = model.batch_workspace().unwrap();
    let mut sparse = model.sparse_mode(params, data, &mut ws);
    if force {
        let (w, _) = super::layer_params(&model.nodes[0], params);
        super::to_quads(w, 2, &mut ws.wt);
        sparse = Some(super::Sparse { forward: true });
    }
    let _ = model.block_forward_backward(params, data, &[0, 1], &mut ws, sparse);
    [ws.outs[0].to_bits(), ws.outs[2].to_bits()]
}

#[test]
fn ghost_sum_skips_no_zero_feature_where_an_fma_can_underflow_to_minus_zero() {
    // The guard of the skipping forward chains (every nonzero |w|, |x| ≥ 2⁻⁴⁸⁵, module docs
    // "Zero inputs") fails on the weights in the first case and on the features in the
    // second: both must take the dense loop, whose first hidden unit is +0 (the per-example
    // pass's bits; the second example is the same). Negative control: with skipping forced
    // on, the sparse loop gives −0.
    let plus_zero = [0.0f64.to_bits(); 2];
    for (w, x) in [
        (-libm::scalbn(1.0, -780), libm::scalbn(1.0, -300)),
        (-libm::scalbn(1.0, -300), libm::scalbn(1.0, -780)),
    ] {
        let (model, params, data) = underflow_case(w, x);
        assert!(data.support().min_nonzero().is_some());
        assert_eq!(first_unit_bits(&model, &params, &data, false), plus_zero);
        assert_eq!(
            first_unit_bits(&model, &params, &data, true),
            [(-0.0f64).to_bits(); 2],
            "the control: skipping without the guard turns +0 into -0"
        );
        let (want, want_loss, _) = per_example(&model, &params, &data, &[0, 1], None).unwrap();
        let (got, got_loss) = batched(&model, &params, &data, &[0, 1], None).unwrap();
        assert_eq!(got_loss.to_bits(), want_loss.to_bits());
        assert_eq!(bits(&got), bits(&want), "w = {w:e}, x = {x:e}");
    }
}

#[test]
fn quads_layout_round_trips_and_pads_with_zeros() {
    // 3 units × 18 inputs: 5 quads, the last one of 2 inputs padded with +0. Quad q·3 + o
    // holds W[o, 4q..4q + 4]; from_quads drops the padding.
    let w: Vec<f64> = (0..54).map(|k| k as f64 + 0.5).collect();
    let mut wq = vec![super::Quad([f64::NAN; 4]); 15];
    super::to_quads(&w, 3, &mut wq);
    assert_eq!(wq[3 + 2].0, [40.5, 41.5, 42.5, 43.5]); // q = 1, o = 2: W[2, 4..8]
    assert_eq!(wq[12 + 1].0, [34.5, 35.5, 0.0, 0.0]); // q = 4, o = 1: W[1, 16..18]
    assert!(wq
        .iter()
        .all(|q| q.0.iter().all(|v| v.to_bits() != (-0.0f64).to_bits())));
    let mut back = vec![0.0; 54];
    super::from_quads(&wq, 3, &mut back);
    assert_eq!(bits(&back), bits(&w));
}

#[test]
fn ghost_sum_skipping_is_exact_on_partial_quads_and_every_unit_kernel() {
    // Widths whose last quad is partial (17, 18, 21, 23: in lanes 0–3 or 4–7) or not (20),
    // first layers of 1, 3 and 11 units (the general loops) and 10 (their own kernels);
    // sparse features with −0 among the zeros and the last feature often nonzero (so the
    // padded quad is visited). Skipping against the dense loops, bit for bit, under every
    // clipping. Seeds fixed (20261127 + width·100 + units).
    for d in [17usize, 18, 20, 21, 23] {
        for units in [1usize, 3, 10, 11] {
            let seed = 20_261_127 + 100 * d as u64 + units as u64;
            let mut r = Rng::from_seed(seed);
            let model = Sequential::new(
                Shape::flat(d),
                &[
                    Layer::Dense { units },
                    Layer::Act(Activation::Elu),
                    Layer::Dense { units: 3 },
                ],
                Loss::SoftmaxCrossEntropy,
            )
            .unwrap();
            let n = 40;
            let features: Vec<f64> = (0..n * d)
                .map(|k| {
                    let (u, v) = (r.uniform(), 0.05 + 0.95 * r.uniform());
                    match (k % d == d - 1, u) {
                        (true, u) if u < 0.6 => v,
                        (_, u) if u < 0.1 => -0.0,
                        (_, u) if u < 0.8 => 0.0,
                        _ => v,
                    }
                })
                .collect();
            let labels: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
            let data = Dataset::new(features, labels, (1, 1, d), 3).unwrap();
            assert!(data.support().min_nonzero().is_some(), "d = {d}");
            let params = params_with_biases(&model, seed);
            let batch = scrambled_batch(n, 37, seed);
            for clipping in [None, hard(0.05), gelu(0.3)] {
                let (want, want_loss) = batched_dense(&model, &params, &data, &batch, clipping);
                let (got, got_loss) = batched(&model, &params, &data, &batch, clipping).unwrap();
                assert_eq!(
                    got_loss.to_bits(),
                    want_loss.to_bits(),
                    "d = {d}, u = {units}"
                );
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "d = {d}, u = {units}, {clipping:?}"
                );
            }
        }
    }
}

#[test]
fn ghost_sum_with_a_workspace_of_another_model_of_the_same_sizes_skips_nothing() {
    // A = Dense 16 → 16, tanh, Dense 2 and B = tanh, Dense 16 → 16, Dense 2 have workspaces
    // of the same sizes. B's first layer is not dense, so nothing of its features may be
    // skipped (its first dense layer's input is tanh(x), not x): with A's workspace, B's
    // sum must be the one with its own.
    let dense = |u| Layer::Dense { units: u };
    let act = Layer::Act(Activation::Tanh);
    let loss = Loss::SoftmaxCrossEntropy;
    let a = Sequential::new(Shape::flat(16), &[dense(16), act, dense(2)], loss).unwrap();
    let b = Sequential::new(Shape::flat(16), &[act, dense(16), dense(2)], loss).unwrap();
    let mut feats = vec![0.0; 4 * 16];
    for (k, v) in feats.iter_mut().enumerate() {
        if k % 8 < 2 {
            *v = 0.25 + 0.1 * (k % 7) as f64;
        }
    }
    let data = Dataset::new(feats, vec![0, 1, 0, 1], (1, 1, 16), 2).unwrap();
    assert!(data.support().min_nonzero().is_some());
    let params = params_with_biases(&b, 3);
    let mut ws = a.batch_workspace().unwrap();
    assert!(b.sparse_mode(&params, &data, &mut ws).is_none());
    let mut sum = vec![f64::NAN; b.num_params()];
    let got = b
        .clipped_grad_sum(&params, &data, &[0, 1, 2, 3], hard(0.1), &mut sum, &mut ws)
        .unwrap();
    let (want, want_loss) = batched(&b, &params, &data, &[0, 1, 2, 3], hard(0.1)).unwrap();
    assert_eq!(got.to_bits(), want_loss.to_bits());
    assert_eq!(bits(&sum), bits(&want));
}
