//! Gradient matching (Hayes, Mahloujifar, Balle 2023, §2 Eq. 1, App. A, D).

use reconbound::attacks::gradient_matching::{
    clipped_gradient_vjp, prior_score, reconstruction_grid, GradientMatching, MatchWorkspace,
    ObservedStep, Optimizer, ReconstructionConfig, ResidualRecorder,
};
use reconbound::autodiff::Dual;
use reconbound::data::Dataset;
use reconbound::nn::{arch, Activation, Layer, Loss, Sequential, Shape};
use reconbound::rng::Rng;
use reconbound::train::clip::{clip, ClipMethod};
use reconbound::train::dpsgd::{Clipping, DpSgd, DpSgdConfig, Secret};
use reconbound::train::sampling::Sampling;
use reconbound::Error;

fn clipping(method: ClipMethod, norm: f64) -> Clipping {
    Clipping { method, norm }
}

/// ‖∇_θℓ(θ; x, y)‖ before clipping.
fn grad_norm(model: &Sequential, params: &[f64], x: &[f64], y: usize) -> f64 {
    let mut g = vec![0.0; model.num_params()];
    model
        .loss_and_grad(params, x, y, &mut g, &mut model.workspace())
        .unwrap();
    g.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// clip(∇_θℓ(θ; x, y)).
fn clipped_grad(model: &Sequential, params: &[f64], x: &[f64], y: usize, c: Clipping) -> Vec<f64> {
    let mut g = vec![0.0; model.num_params()];
    model
        .loss_and_grad(params, x, y, &mut g, &mut model.workspace())
        .unwrap();
    clip(&mut g, c.method, c.norm).unwrap();
    g
}

/// T steps with parameters from `init_params(seed + t)` scaled by `scale`, and residuals
/// N(0, s²) per coordinate.
fn random_steps(model: &Sequential, t: usize, scale: f64, s: f64, seed: u64) -> Vec<ObservedStep> {
    let mut r = Rng::for_trial(seed, 0);
    (0..t)
        .map(|k| ObservedStep {
            params: model
                .init_params(seed + k as u64)
                .iter()
                .map(|w| w * scale)
                .collect(),
            residual: (0..model.num_params()).map(|_| s * r.gaussian()).collect(),
        })
        .collect()
}

fn small_mlp() -> Sequential {
    arch::mlp(6, &[5], 3, Activation::Tanh).unwrap()
}

/// A small ConvNet on 1 × 4 × 4 inputs: conv 2 × 3 × 3 (padding 1), tanh, 2 × 2 average
/// pooling, dense 3 — exercises every layer kind in the parameter-tangent pass.
fn small_convnet() -> Sequential {
    let layers = [
        Layer::Conv2d {
            out_channels: 2,
            kernel: 3,
            stride: 1,
            padding: 1,
        },
        Layer::Act(Activation::Tanh),
        Layer::AvgPool2d {
            kernel: 2,
            stride: 2,
        },
        Layer::Dense { units: 3 },
    ];
    Sequential::new(Shape::new(1, 4, 4), &layers, Loss::SoftmaxCrossEntropy).unwrap()
}

#[test]
fn hayes23_gradient_matching_jtv_matches_finite_differences() {
    // ∇_z L from the dual pass against central differences of L, on the MLP 6–5–3 (tanh),
    // T = 3 steps, label 2, for hard clipping active at every step (C = ‖g‖_min/3), hard
    // clipping inactive (C = 3‖g‖_max: K = I) and GELU clipping (C = median ‖g‖).
    //
    // Tolerance: h = 1e-5; truncation h²/6·|∂³L| ≲ 1e-10 and rounding ≈ 4ε·|L|/(2h) ≲ 1e-10
    // (|L| ≤ 10 here, the third derivatives O(1–10)); we allow 1e-7·(1 + ‖∇L‖_∞) per
    // coordinate: three orders of magnitude of margin, while a missing rank-one term of K or
    // a wrong sign is O(‖∇L‖) (checked below: dropping the factor 2 fails).
    let model = small_mlp();
    let label = 2;
    let mut r = Rng::for_trial(11, 0);
    let z: Vec<f64> = (0..6).map(|_| 0.1 + 0.8 * r.uniform()).collect();
    let steps = random_steps(&model, 3, 1.5, 0.05, 100);
    let norms: Vec<f64> = steps
        .iter()
        .map(|s| grad_norm(&model, &s.params, &z, label))
        .collect();
    let (lo, hi) = norms
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &n| (a.min(n), b.max(n)));
    let mut sorted = norms.clone();
    sorted.sort_by(f64::total_cmp);
    let cases = [
        ("hard active", clipping(ClipMethod::Hard, lo / 3.0)),
        ("hard inactive", clipping(ClipMethod::Hard, 3.0 * hi)),
        ("gelu", clipping(ClipMethod::Gelu, sorted[1])),
    ];
    let h = 1e-5;
    for (name, c) in cases {
        let attack = GradientMatching::new(&model, label, c, &steps).unwrap();
        let mut ws = attack.workspace();
        let mut grad = vec![0.0; 6];
        let l = attack.loss_and_grad(&z, &mut grad, &mut ws).unwrap();
        assert_eq!(l, attack.loss(&z, &mut ws).unwrap(), "{name}");
        let scale = 1.0 + grad.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let mut worst = 0.0f64;
        for i in 0..6 {
            let (mut zp, mut zm) = (z.clone(), z.clone());
            zp[i] += h;
            zm[i] -= h;
            let fd = (attack.loss(&zp, &mut ws).unwrap() - attack.loss(&zm, &mut ws).unwrap())
                / (2.0 * h);
            let err = (fd - grad[i]).abs();
            worst = worst.max(err / scale);
            assert!(
                err <= 1e-7 * scale,
                "{name}, coordinate {i}: dual {} vs finite difference {fd} (L = {l})",
                grad[i]
            );
            // Not vacuous: the gradient is far from half of itself.
            assert!((fd - 0.5 * grad[i]).abs() > 1e-4 * scale || grad[i].abs() < 1e-3 * scale);
        }
        eprintln!(
            "{name}: L = {l:.4e}, ‖∇L‖∞ = {:.3e}, worst relative error {worst:.2e}",
            scale - 1.0
        );
    }
}

/// The explicit p × d Jacobian ∂clip(∇_θℓ)/∂x from d input-coordinate JVPs
/// (`loss_and_grad_jvp` with `Dual<D>`, every coordinate in its own lane, then `clip` on the
/// `Dual` gradient), returned column-major as d columns of length p.
fn explicit_jacobian<const D: usize>(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    y: usize,
    c: Clipping,
) -> Vec<Vec<f64>> {
    let coords: Vec<usize> = (0..D).collect();
    let mut g = vec![Dual::<D>::default(); model.num_params()];
    let mut ws = model.workspace::<Dual<D>>();
    model
        .loss_and_grad_jvp(params, x, y, &coords, &mut g, &mut ws)
        .unwrap();
    clip(&mut g, c.method, c.norm).unwrap();
    (0..D)
        .map(|i| g.iter().map(|d| d.tangent[i]).collect())
        .collect()
}

fn check_vjp_against_explicit<const D: usize>(model: &Sequential, name: &str) {
    // Jᵀv from the parameter-tangent pass against Σ_j J_ji v_j from the explicit Jacobian.
    // Both are exact formulas evaluated in different orders, so they agree to rounding:
    // relative 1e-12 of the largest |Jᵀv| entry (observed ~1e-15).
    let mut r = Rng::for_trial(23, D as u64);
    let x: Vec<f64> = (0..D).map(|_| r.uniform()).collect();
    let params: Vec<f64> = model.init_params(4).iter().map(|w| 1.3 * w).collect();
    let v: Vec<f64> = (0..model.num_params()).map(|_| r.gaussian()).collect();
    let n = grad_norm(model, &params, &x, 1);
    let mut ws = MatchWorkspace::new(model);
    for (case, c) in [
        ("hard active", clipping(ClipMethod::Hard, 0.4 * n)),
        ("hard inactive", clipping(ClipMethod::Hard, 2.0 * n)),
        ("gelu", clipping(ClipMethod::Gelu, 0.8 * n)),
    ] {
        let jac = explicit_jacobian::<D>(model, &params, &x, 1, c);
        let explicit: Vec<f64> = jac
            .iter()
            .map(|col| col.iter().zip(&v).map(|(a, b)| a * b).sum())
            .collect();
        let mut out = vec![0.0; D];
        clipped_gradient_vjp(model, &params, &x, 1, c, &v, &mut out, &mut ws).unwrap();
        let size = explicit.iter().fold(0.0f64, |m, e| m.max(e.abs()));
        assert!(size > 1e-3, "{name} {case}: degenerate test ({size})");
        for (i, (a, b)) in out.iter().zip(&explicit).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * size,
                "{name} {case}, coordinate {i}: {a} vs explicit {b}"
            );
        }
    }
}

#[test]
fn hayes23_gradient_matching_jtv_matches_explicit_jacobian() {
    check_vjp_against_explicit::<6>(&small_mlp(), "mlp 6-5-3 tanh");
    check_vjp_against_explicit::<16>(&small_convnet(), "convnet 1x4x4");
    check_vjp_against_explicit::<5>(
        &arch::mlp(5, &[4, 3], 2, Activation::Elu).unwrap(),
        "mlp 5-4-3-2 elu",
    );
}

/// D⁻ (9 points) and a target (the 10th) in [0, 1]^6 with 3 classes; the trainer's data
/// set is D⁻ ++ [target].
fn attack_setup() -> (Dataset, Dataset, Vec<f64>, usize) {
    let mut r = Rng::for_trial(31, 0);
    let n = 10;
    let features: Vec<f64> = (0..n * 6).map(|_| r.uniform()).collect();
    let labels: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
    let all = Dataset::new(features, labels, (1, 1, 6), 3).unwrap();
    let known = all.subset(&(0..n - 1).collect::<Vec<_>>()).unwrap();
    let (target, label) = all.example(n - 1).unwrap();
    (all.clone(), known, target.to_vec(), label as usize)
}

fn train_and_record(
    model: &Sequential,
    data: &Dataset,
    known: &Dataset,
    c: Clipping,
    sigma: f64,
    steps: u64,
) -> Vec<ObservedStep> {
    let config = DpSgdConfig {
        learning_rate: 0.5,
        momentum: 0.0,
        weight_decay: 0.0,
        clipping: Some(c),
        noise_multiplier: sigma,
        sampling: Sampling::FullBatch,
        batch_size: data.len(),
        steps,
        seed: 7,
    };
    let mut params = model.init_params(3);
    // D = D⁻ ++ [target]: the target is the trainer's secret, its last example.
    let n = known.len();
    assert_eq!(data.len(), n + 1);
    let (x, label) = data.example(n).unwrap();
    let secret = Secret::Example { x, label };
    let mut rec = ResidualRecorder::new(model);
    DpSgd::with_secret(model, known, &config, secret)
        .unwrap()
        .run(&mut params, &mut rec)
        .unwrap();
    rec.into_steps()
}

#[test]
fn residual_recorder_gives_the_targets_clipped_gradient_at_sigma0() {
    // Full batch, σ = 0: ḡ_t = n·(Σ_i g̃_i / n) − Σ_{known} g̃_j = g̃_target up to rounding of
    // the sum of 10 gradients of norm ≤ C and of the multiplication by n: ≤ 1e-13·C per
    // coordinate (observed ~1e-17).
    let (data, known, target, label) = attack_setup();
    let model = small_mlp();
    let c = clipping(ClipMethod::Hard, 0.5);
    let steps = train_and_record(&model, &data, &known, c, 0.0, 5);
    assert_eq!(steps.len(), 5);
    for (t, s) in steps.iter().enumerate() {
        let g = clipped_grad(&model, &s.params, &target, label, c);
        for (a, b) in s.residual.iter().zip(&g) {
            assert!((a - b).abs() <= 1e-13, "step {t}: {a} vs {b}");
        }
    }
}

/// The attack on a DP-SGD run of T = 20 full-batch steps (C = 0.5, noise multiplier
/// `sigma`) on D⁻ ++ [target]: (reconstruction, final loss, steps, noise std of a residual
/// coordinate σ·S).
fn run_attack(sigma: f64, method: ClipMethod) -> (Vec<f64>, f64, Vec<ObservedStep>, f64) {
    let (data, known, _, label) = attack_setup();
    let model = small_mlp();
    let c = clipping(method, 0.5);
    let steps = train_and_record(&model, &data, &known, c, sigma, 20);
    let attack = GradientMatching::new(&model, label, c, &steps).unwrap();
    let config = ReconstructionConfig {
        iterations: 1500,
        restarts: 3,
        seed: 5,
        ..ReconstructionConfig::default()
    };
    let rec = attack.reconstruct(&config).unwrap();
    let noise_std = sigma * method.max_norm(0.5).unwrap();
    (rec.z, rec.loss, steps, noise_std)
}

fn mse(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len() as f64
}

#[test]
fn hayes23_gradient_matching_recovers_target_sigma0_and_degrades_with_noise() {
    // MLP 6–5–3 (tanh, p = 53), d = 6, D⁻ of 9 uniform points, full-batch DP-SGD for T = 20
    // steps with C = 0.5; the attack: Adam, 1,500 iterations, 3 restarts, projected.
    //
    // σ = 0: the target is identifiable (the first layer's weight gradient is δ xᵀ and its bias
    // gradient δ, so clipping, a common scale, keeps x) and the attack must find it: MSE
    // ≤ 1e-20 (observed ~1e-33: the optimum to rounding).
    //
    // σ > 0: the residuals carry N(0, (σS)²) noise on each of pT = 1,060 coordinates. Checks:
    // (a) the optimiser reaches a loss no worse than the target's own, L(ẑ) ≤ L(z);
    // (b) at σ = 0.001 (linear regime) the minimum is the noise energy off a d-dimensional
    //     manifold, L(ẑ) ≈ (σS)²·χ²_{pT−d}: relative sd √(2/1054) = 4.4%, accepted within
    //     ±25% (5.7 sd, two-sided normal tail 1.4e-8);
    // (c) the MSE grows with σ, and in the linear regime as σ² (the noise draws are the same
    //     up to the factor σ: same seed): MSE(0.01)/MSE(0.001) ∈ [50, 200] (100 in the limit;
    //     observed ≈ 101);
    // (d) σ = 0.3 (SNR per step C/(σC√p) ≈ 0.46) leaves MSE ≥ 1e-3 (observed ≈ 2e-2).
    let (_, _, target, _) = attack_setup();
    let model = small_mlp();
    for method in [ClipMethod::Hard, ClipMethod::Gelu] {
        let mut mses = Vec::new();
        for sigma in [0.0, 0.001, 0.01, 0.1, 0.3] {
            let (z, loss, steps, noise_std) = run_attack(sigma, method);
            let m = mse(&z, &target);
            let (_, _, _, label) = attack_setup();
            let c = clipping(method, 0.5);
            let attack = GradientMatching::new(&model, label, c, &steps).unwrap();
            let truth_loss = attack.loss(&target, &mut attack.workspace()).unwrap();
            eprintln!(
                "{method:?} σ = {sigma}: MSE {m:.3e}, L(ẑ) = {loss:.4e}, L(z) = {truth_loss:.4e}"
            );
            if sigma == 0.0 {
                assert!(m <= 1e-20, "{method:?}: MSE {m} at σ = 0");
            } else {
                assert!(
                    loss <= truth_loss,
                    "{method:?} σ = {sigma}: {loss} > {truth_loss}"
                );
            }
            if sigma == 0.001 {
                let dof = (model.num_params() * steps.len() - 6) as f64;
                let ratio = loss / (noise_std * noise_std * dof);
                assert!((0.75..=1.25).contains(&ratio), "{method:?}: ratio {ratio}");
            }
            mses.push(m);
        }
        for w in mses.windows(2) {
            assert!(
                w[0] < w[1],
                "{method:?}: MSE not increasing with σ: {mses:?}"
            );
        }
        let r = mses[2] / mses[1];
        assert!((50.0..=200.0).contains(&r), "{method:?}: MSE ratio {r}");
        assert!(mses[4] >= 1e-3, "{method:?}: {mses:?}");
    }
}

#[test]
fn hayes23_app_d_prior_score_of_a_recovered_target() {
    // App. D: with the target and n − 1 = 9 other points (here D⁻), a σ = 0 reconstruction is
    // nearer to the target than to any of them; the prior score's MSE is the same MSE.
    let (_, known, target, _) = attack_setup();
    let (z, _, _, _) = run_attack(0.0, ClipMethod::Hard);
    let s = prior_score(&z, &target, known.features()).unwrap();
    assert!(
        s.success && s.mse <= 1e-20 && s.nearest_other > 0.1,
        "{s:?}"
    );
    // Scored against a set containing the reconstruction itself, the target loses.
    let mut others = known.features().to_vec();
    others.extend_from_slice(&z);
    assert!(!prior_score(&z, &target, &others).unwrap().success);
}

#[test]
fn reconstruction_is_deterministic_and_keeps_the_best_restart() {
    // Same seed → bit-identical reconstruction; the winner is the restart with the smallest
    // final loss (first on ties); another seed starts elsewhere (after 5 iterations the
    // losses differ).
    let model = small_mlp();
    let steps = random_steps(&model, 3, 1.0, 0.1, 40);
    let attack = GradientMatching::new(&model, 1, clipping(ClipMethod::Gelu, 0.3), &steps).unwrap();
    let config = ReconstructionConfig {
        iterations: 5,
        restarts: 4,
        seed: 9,
        ..ReconstructionConfig::default()
    };
    let a = attack.reconstruct(&config).unwrap();
    let b = attack.reconstruct(&config).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.restart_losses.len(), 4);
    let best = a
        .restart_losses
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    assert_eq!(a.loss, best);
    assert_eq!(a.restart_losses[a.restart as usize], best);
    assert!(a.z.iter().all(|v| (0.0..=1.0).contains(v)), "projected");
    assert_eq!(a.loss, attack.loss(&a.z, &mut attack.workspace()).unwrap());
    let c = attack
        .reconstruct(&ReconstructionConfig { seed: 10, ..config })
        .unwrap();
    assert_ne!(a.restart_losses, c.restart_losses);
}

#[test]
fn gradient_descent_also_recovers_the_target_at_sigma0() {
    // Plain gradient descent at Hayes et al.'s learning rate 0.01 (App. A), constant, on the
    // σ = 0 problem of the recovery test: 5,000 steps reach MSE ≤ 1e-20 (observed ~1e-30).
    // (Steps of 0.3 and more overshoot on this problem and stall near the box's corners.)
    let (data, known, target, label) = attack_setup();
    let model = small_mlp();
    let c = clipping(ClipMethod::Hard, 0.5);
    let steps = train_and_record(&model, &data, &known, c, 0.0, 20);
    let attack = GradientMatching::new(&model, label, c, &steps).unwrap();
    let config = ReconstructionConfig {
        optimizer: Optimizer::GradientDescent,
        learning_rate: 0.01,
        anneal: false,
        iterations: 5000,
        restarts: 1,
        project: true,
        seed: 2,
    };
    let rec = attack.reconstruct(&config).unwrap();
    let m = mse(&rec.z, &target);
    assert!(m <= 1e-20, "MSE {m}, loss {}", rec.loss);
}

#[test]
fn reconstruction_grid_pairs_targets_and_reconstructions() {
    // Hayes et al. Fig. 6 data: a target row and a reconstruction row, captions with the MSE.
    let rows = reconstruction_grid(
        &[0.0, 1.0, 0.5, 0.5, 0.2, 0.2],
        &[0.0, 1.0, 2.0, 0.5, 0.2, -0.2],
        2,
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].label.as_str(), rows[1].label.as_str()),
        ("target", "reconstruction")
    );
    assert_eq!(rows[0].images.len(), 3);
    assert_eq!(rows[0].images[2].caption, "target 2");
    let captions: Vec<&str> = rows[1].images.iter().map(|i| i.caption.as_str()).collect();
    assert_eq!(captions, ["MSE 0.0000", "MSE 1.1250", "MSE 0.0800"]);
    assert_eq!(rows[1].images[1].pixels, vec![1.0, 0.5]); // clamped to [0, 1]
}

#[test]
fn gradient_matching_rejects_bad_input_naming_the_parameter() {
    fn name(e: Error) -> &'static str {
        match e {
            Error::Inconsistent { .. } => "inconsistent",
            _ => e.parameter().unwrap_or("other"),
        }
    }
    let model = small_mlp();
    let other = arch::mlp(4, &[3], 3, Activation::Tanh).unwrap();
    let steps = random_steps(&model, 2, 1.0, 0.1, 1);
    let c = clipping(ClipMethod::Hard, 1.0);
    // The objective.
    let new = |label, c, steps: &[ObservedStep]| {
        GradientMatching::new(&model, label, c, steps)
            .map(|_| ())
            .unwrap_err()
    };
    assert_eq!(
        name(new(0, clipping(ClipMethod::Hard, 0.0), &steps)),
        "clip_norm"
    );
    assert_eq!(
        name(new(0, clipping(ClipMethod::Gelu, f64::NAN), &steps)),
        "clip_norm"
    );
    assert_eq!(name(new(3, c, &steps)), "label");
    assert_eq!(name(new(0, c, &[])), "steps");
    let mut bad = steps.clone();
    bad[1].residual[4] = f64::NAN;
    assert_eq!(name(new(0, c, &bad)), "steps.residual");
    let mut bad = steps.clone();
    bad[0].params[0] = f64::INFINITY;
    assert_eq!(name(new(0, c, &bad)), "steps.params");
    let mut bad = steps.clone();
    bad[1].residual.pop();
    assert_eq!(name(new(0, c, &bad)), "inconsistent");
    let mut bad = steps.clone();
    bad[0].params.push(0.0);
    assert_eq!(name(new(0, c, &bad)), "inconsistent");
    // Evaluations.
    let attack = GradientMatching::new(&model, 0, c, &steps).unwrap();
    let mut ws = attack.workspace();
    let mut g = vec![0.0; 6];
    let z = [0.5; 6];
    let err = |r: Result<f64, Error>| name(r.unwrap_err());
    assert_eq!(
        err(attack.loss_and_grad(&[0.5, f64::NAN, 0.5, 0.5, 0.5, 0.5], &mut g, &mut ws)),
        "z"
    );
    assert_eq!(err(attack.loss(&[0.5; 5], &mut ws)), "inconsistent");
    assert_eq!(
        err(attack.loss_and_grad(&z, &mut [0.0; 5], &mut ws)),
        "inconsistent"
    );
    assert_eq!(
        err(attack.loss(&z, &mut MatchWorkspace::new(&other))),
        "inconsistent"
    );
    assert!(attack.loss_and_grad(&z, &mut g, &mut ws).is_ok());
    // Jᵀv.
    let p = model.num_params();
    let params = model.init_params(1);
    let v = vec![1.0; p];
    let mut vjp = |params: &[f64], x: &[f64], label, c, v: &[f64], out: &mut [f64]| {
        name(clipped_gradient_vjp(&model, params, x, label, c, v, out, &mut ws).unwrap_err())
    };
    let mut nan_v = v.clone();
    nan_v[3] = f64::NAN;
    assert_eq!(vjp(&params, &z, 0, c, &nan_v, &mut g), "v");
    assert_eq!(vjp(&params, &z, 0, c, &v[1..], &mut g), "inconsistent");
    assert_eq!(vjp(&params, &z, 0, c, &v, &mut [0.0; 7]), "inconsistent");
    assert_eq!(vjp(&params, &z, 5, c, &v, &mut g), "label");
    assert_eq!(
        vjp(
            &params,
            &[0.5, 0.5, f64::NAN, 0.5, 0.5, 0.5],
            0,
            c,
            &v,
            &mut g
        ),
        "x"
    );
    assert_eq!(vjp(&params[1..], &z, 0, c, &v, &mut g), "inconsistent");
    assert_eq!(
        vjp(&params, &z, 0, clipping(ClipMethod::Hard, -1.0), &v, &mut g),
        "clip_norm"
    );
    // The optimiser's configuration.
    let base = ReconstructionConfig::default();
    for (config, expect) in [
        (
            ReconstructionConfig {
                learning_rate: 0.0,
                ..base
            },
            "learning_rate",
        ),
        (
            ReconstructionConfig {
                learning_rate: f64::INFINITY,
                ..base
            },
            "learning_rate",
        ),
        (
            ReconstructionConfig {
                iterations: 0,
                ..base
            },
            "iterations",
        ),
        (
            ReconstructionConfig {
                restarts: 0,
                ..base
            },
            "restarts",
        ),
    ] {
        assert_eq!(name(attack.reconstruct(&config).unwrap_err()), expect);
    }
    // Scoring.
    let score = |r: &[f64], t: &[f64], o: &[f64]| name(prior_score(r, t, o).unwrap_err());
    assert_eq!(score(&[], &[], &[1.0]), "target");
    assert_eq!(score(&[0.0], &[0.0], &[]), "others");
    assert_eq!(
        score(&[0.0, 1.0], &[0.0, 1.0], &[1.0, 2.0, 3.0]),
        "inconsistent"
    );
    assert_eq!(score(&[0.0], &[0.0, 1.0], &[1.0, 2.0]), "inconsistent");
    assert_eq!(score(&[f64::NAN], &[0.0], &[1.0]), "reconstruction");
    assert_eq!(score(&[0.0], &[f64::INFINITY], &[1.0]), "target");
    assert_eq!(score(&[0.0], &[0.0], &[f64::NAN]), "others");
    // The grid.
    let grid = |t: &[f64], r: &[f64], d| name(reconstruction_grid(t, r, d).unwrap_err());
    assert_eq!(grid(&[0.0], &[0.0], 0), "dim");
    assert_eq!(grid(&[], &[], 1), "targets");
    assert_eq!(grid(&[0.0, 1.0], &[0.0], 1), "inconsistent");
    assert_eq!(grid(&[0.0, 1.0, 0.5], &[0.0, 1.0, 0.5], 2), "inconsistent");
    assert_eq!(grid(&[0.0], &[f64::NAN], 1), "reconstructions");
}
