//! Guo, Karrer, Chaudhuri, van der Maaten 2022 (guo2022-bounding-reconstruction-fil-rdp.txt):
//! the FIL accountant of Alg. 1 — Eq. 1 with the noise std σ·S of the gradient sum, Eq. 5
//! (trace from JVPs, unbiased from k coordinates without replacement), Thm 3 (per-step
//! sum), Thm 4 (κ once per step in the batch), Full vs Trace.

use reconbound::accounting::fil::kappa::{default_delta, kappa, step_epsilon, step_mu, Adjacency};
use reconbound::accounting::fil::{
    gaussian_fisher_trace, FilAccountant, FilConfig, FilMode, KappaRule,
};
use reconbound::autodiff::Dual;
use reconbound::data::synthetic::gaussian_blobs;
use reconbound::data::{embedded_mnist, Dataset};
use reconbound::nn::{arch, Activation, Sequential};
use reconbound::train::clip::{clip, ClipMethod};
use reconbound::train::dpsgd::{Clipping, DpSgd, DpSgdConfig};
use reconbound::train::observer::{Observer, StepInfo};
use reconbound::train::sampling::Sampling;

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// Keeps every step's parameters and batch.
#[derive(Default)]
struct Recorder {
    steps: Vec<(u64, Vec<f64>, Vec<usize>, f64)>,
}

impl Observer for Recorder {
    fn observe(&mut self, s: &StepInfo<'_>) -> reconbound::Result<()> {
        self.steps.push((
            s.step,
            s.params.to_vec(),
            s.batch.to_vec(),
            s.noise_std * s.normaliser,
        ));
        Ok(())
    }
}

/// J e_i of the clipped gradient by a `Dual<1>` pass (an independent path from the
/// accountant's `Dual<8>` chunks).
fn clipped_column(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    label: usize,
    clipping: Clipping,
    coord: usize,
    out: &mut [f64],
) -> reconbound::Result<()> {
    let mut grad = vec![Dual::<1>::default(); model.num_params()];
    let mut ws = model.workspace::<Dual<1>>();
    model.loss_and_grad_jvp(params, x, label, &[coord], &mut grad, &mut ws)?;
    clip(&mut grad, clipping.method, clipping.norm)?;
    for (o, g) in out.iter_mut().zip(&grad) {
        *o = g.tangent[0];
    }
    Ok(())
}

/// The clipped gradient at x (f64 path).
fn clipped_grad(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    label: usize,
    c: Clipping,
) -> Vec<f64> {
    let mut g = vec![0.0; model.num_params()];
    let mut ws = model.workspace::<f64>();
    model
        .loss_and_grad(params, x, label, &mut g, &mut ws)
        .unwrap();
    clip(&mut g, c.method, c.norm).unwrap();
    g
}

/// A step of DP-SGD shown to an observer directly (fixed parameters, chosen batch).
fn step_info<'a>(
    step: u64,
    params: &'a [f64],
    batch: &'a [usize],
    noise_std_of_sum: f64,
) -> StepInfo<'a> {
    StepInfo {
        step,
        params,
        batch,
        clipped: None,
        released: params,
        batch_sum: params,
        loss_sum: 0.0,
        normaliser: 4.0,
        noise_std: noise_std_of_sum / 4.0,
    }
}

#[test]
fn guo22_alg1_linear_model_analytic_trace() {
    // Logistic regression ℓ = −y ln σ(u) − (1 − y) ln(1 − σ(u)), u = w·x + b: ∇ = r·(x, 1),
    // r = σ(u) − y, so J e_i = σ′(u)·w_i·(x, 1) + r·e_i and
    // Tr(JᵀJ) = σ′²‖w‖²‖(x, 1)‖² + 2σ′·r·(w·x) + d·r².
    // Hard clipping at C = 100 is inactive (‖g‖ ≤ ‖(x, 1)‖ ≤ √6), so g̃ = g; the noise std
    // of the sum is σ·C = 70 and the trace must be Tr(JᵀJ)/(σC)² — dividing by σ² instead
    // would be off by 10⁴. Tolerance 1e-10 relative (a few dozen roundings).
    let d = 5;
    let data = gaussian_blobs(12, d, 2, 0.5, 4).unwrap();
    let model = arch::logistic_regression(d).unwrap();
    let (sigma, c) = (0.7, 100.0);
    let dp = DpSgdConfig {
        learning_rate: 0.1,
        momentum: 0.0,
        weight_decay: 0.0,
        clipping: Some(Clipping {
            method: ClipMethod::Hard,
            norm: c,
        }),
        noise_multiplier: sigma,
        sampling: Sampling::FixedSize,
        batch_size: 4,
        steps: 1,
        seed: 11,
    };
    let config = FilConfig {
        mode: FilMode::Trace { coords: d },
        kappa: KappaRule::One,
        seed: 5,
    };
    let mut fil = FilAccountant::new(&model, &data, &dp, &config).unwrap();
    let mut rec = Recorder::default();
    // Larger weights than the default init so that σ′·w is not negligible against r.
    let mut params: Vec<f64> = model.init_params(7).iter().map(|w| 3.0 * w).collect();
    params[d] = 0.3;
    let w0 = params.clone();
    let mut trainer = DpSgd::new(&model, &data, &dp).unwrap();
    trainer
        .step(&mut params, &mut (&mut fil, &mut rec))
        .unwrap();
    let (_, seen, batch, s) = &rec.steps[0];
    assert_eq!(seen, &w0);
    assert!(rel(*s, sigma * c) < 1e-15, "noise std of the sum {s}");
    let rows = fil.results().unwrap();
    for (i, row) in rows.iter().enumerate() {
        if !batch.contains(&i) {
            assert_eq!(
                (row.trace, row.steps_in_batch, row.mse_bound),
                (0.0, 0, None)
            );
            continue;
        }
        let (x, y) = data.example(i).unwrap();
        let (w, b) = (&w0[..d], w0[d]);
        let wx: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
        let sig = 1.0 / (1.0 + (-(wx + b)).exp());
        let sp = sig * (1.0 - sig);
        let r = sig - y as f64;
        let ww: f64 = w.iter().map(|a| a * a).sum();
        let xx: f64 = x.iter().map(|a| a * a).sum::<f64>() + 1.0;
        let want = (sp * sp * ww * xx + 2.0 * sp * r * wx + d as f64 * r * r) / (sigma * c).powi(2);
        assert!(
            rel(row.trace, want) < 1e-10,
            "example {i}: {} vs {want}",
            row.trace
        );
        assert_eq!(row.steps_in_batch, 1);
        // Thm 2: d/Tr(I), rounded down.
        let mse = row.mse_bound.unwrap();
        assert!(mse <= d as f64 / row.trace && rel(mse, d as f64 / row.trace) < 1e-15);
        assert_eq!(row.dfil, row.trace / d as f64);
    }
}

#[test]
fn guo22_eq5_convnet_jvp_matches_finite_differences() {
    // MNIST tanh ConvNet, GELU clipping active (C = ‖g‖/2). J e_i from loss_and_grad_jvp +
    // clip against central differences of the clipped gradient, h = 1e-4: truncation
    // O(h²·g‴) ≈ 1e-8 relative and rounding ≈ ε·‖g̃‖/h ≈ 1e-12, so 1e-5 relative (the brief's
    // tolerance) has a wide margin yet catches any missing term (the clipping factor's
    // derivative alone is O(1) of the column).
    let mnist = embedded_mnist().unwrap();
    let model = arch::mnist_tanh_convnet().unwrap();
    let params = model.init_params(3);
    let (x, y) = mnist.example(0).unwrap();
    let label = y as usize;
    let mut g = vec![0.0; model.num_params()];
    let mut ws = model.workspace::<f64>();
    model
        .loss_and_grad(&params, x, label, &mut g, &mut ws)
        .unwrap();
    let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    let clipping = Clipping {
        method: ClipMethod::Gelu,
        norm: 0.5 * norm,
    };
    let coords = [185usize, 350, 406, 433, 600];
    let mut dg = vec![Dual::<8>::default(); model.num_params()];
    let mut dws = model.workspace::<Dual<8>>();
    model
        .loss_and_grad_jvp(&params, x, label, &coords, &mut dg, &mut dws)
        .unwrap();
    clip(&mut dg, clipping.method, clipping.norm).unwrap();
    let h = 1e-4;
    for (lane, &i) in coords.iter().enumerate() {
        let mut xp = x.to_vec();
        let mut xm = x.to_vec();
        xp[i] += h;
        xm[i] -= h;
        let (gp, gm) = (
            clipped_grad(&model, &params, &xp, label, clipping),
            clipped_grad(&model, &params, &xm, label, clipping),
        );
        let (mut err, mut nrm) = (0.0, 0.0);
        for ((a, b), d) in gp.iter().zip(&gm).zip(&dg) {
            let fd = (a - b) / (2.0 * h);
            err += (fd - d.tangent[lane]).powi(2);
            nrm += d.tangent[lane].powi(2);
        }
        assert!(nrm > 0.0, "coordinate {i}: zero column");
        assert!(
            (err / nrm).sqrt() < 1e-5,
            "coordinate {i}: relative error {}",
            (err / nrm).sqrt()
        );
    }
}

#[test]
fn guo22_eq5_convnet_accountant_exact_trace_matches_finite_differences() {
    // End to end on the ConvNet: the accountant's exact trace (k = d, one step, one example)
    // equals Σ_i ‖J e_i‖²/s² with every column by central differences (h = 1e-4; each
    // column is accurate to ~1e-8 relative, see above; tolerance 1e-6 relative on the sum).
    let mnist = embedded_mnist().unwrap();
    let data = mnist.subset(&[0, 1, 2, 3]).unwrap();
    let model = arch::mnist_tanh_convnet().unwrap();
    let params = model.init_params(5);
    let dp = DpSgdConfig {
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 0.05,
        }),
        noise_multiplier: 1.3,
        sampling: Sampling::FixedSize,
        batch_size: 2,
        steps: 1,
        ..DpSgdConfig::default()
    };
    let config = FilConfig {
        mode: FilMode::Trace { coords: 784 },
        kappa: KappaRule::One,
        seed: 0,
    };
    let mut fil = FilAccountant::new(&model, &data, &dp, &config).unwrap();
    let s = fil.noise_std_of_sum();
    assert!(rel(s, 1.3 * 1.11522 * 0.05) < 1e-15);
    fil.observe(&step_info(0, &params, &[2], s)).unwrap();
    let got = fil.results().unwrap()[2].trace;
    let (x, y) = data.example(2).unwrap();
    let c = dp.clipping.unwrap();
    let h = 1e-4;
    let mut want = 0.0;
    for i in 0..784 {
        let mut xp = x.to_vec();
        let mut xm = x.to_vec();
        xp[i] += h;
        xm[i] -= h;
        let (gp, gm) = (
            clipped_grad(&model, &params, &xp, y as usize, c),
            clipped_grad(&model, &params, &xm, y as usize, c),
        );
        want += gp
            .iter()
            .zip(&gm)
            .map(|(a, b)| ((a - b) / (2.0 * h)).powi(2))
            .sum::<f64>();
    }
    want /= s * s;
    assert!(rel(got, want) < 1e-6, "{got} vs {want}");
}

/// The per-coordinate a_i = ‖J e_i‖²/s² of one example of a small tanh MLP (d = 16), the
/// model, data and noise std used by the estimator tests.
struct EstimatorSetup {
    model: Sequential,
    data: Dataset,
    dp: DpSgdConfig,
    params: Vec<f64>,
    a: Vec<f64>,
    s: f64,
}

fn estimator_setup() -> EstimatorSetup {
    let d = 16;
    let data = gaussian_blobs(2, d, 2, 0.8, 21).unwrap();
    let model = arch::mlp(d, &[3], 2, Activation::Tanh).unwrap();
    let params: Vec<f64> = model.init_params(8).iter().map(|w| 2.0 * w).collect();
    let dp = DpSgdConfig {
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 0.3,
        }),
        noise_multiplier: 0.9,
        sampling: Sampling::FixedSize,
        batch_size: 1,
        steps: 1,
        ..DpSgdConfig::default()
    };
    let c = dp.clipping.unwrap();
    let s = 0.9 * 1.11522 * 0.3;
    let (x, y) = data.example(0).unwrap();
    let mut a = vec![0.0; d];
    for (i, ai) in a.iter_mut().enumerate() {
        *ai = gaussian_fisher_trace(model.num_params(), d, s, &[i], |k, out: &mut [f64]| {
            clipped_column(&model, &params, x, y as usize, c, k, out)
        })
        .unwrap();
    }
    EstimatorSetup {
        model,
        data,
        dp,
        params,
        a,
        s,
    }
}

/// All k-subsets of 0..d (lexicographic).
fn subsets(d: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn rec(start: usize, d: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..d {
            cur.push(i);
            rec(i + 1, d, k, cur, out);
            cur.pop();
        }
    }
    rec(0, d, k, &mut cur, &mut out);
    out
}

/// Exact law of the estimator X = (d/k)Σ_{i∈S} a_i over uniform k-subsets S: (mean,
/// variance, fourth central moment, max |X − mean|).
fn exact_moments(a: &[f64], k: usize) -> (f64, f64, f64, f64) {
    let d = a.len();
    let xs: Vec<f64> = subsets(d, k)
        .iter()
        .map(|s| s.iter().map(|&i| a[i]).sum::<f64>() * d as f64 / k as f64)
        .collect();
    let m = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / m;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / m;
    let m4 = xs.iter().map(|x| (x - mean).powi(4)).sum::<f64>() / m;
    let max_dev = xs.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max);
    (mean, var, m4, max_dev)
}

/// The finite-population variance of (d/k)Σ_{i∈S} a_i, S a uniform k-subset of d:
/// Var(Σ_S a) = k·σ²_pop·(d − k)/(d − 1) with σ²_pop = (1/d)Σ(a_i − ā)², times (d/k)²:
/// d(d − k)/(k(d − 1))·Σ(a_i − ā)².
fn finite_population_variance(a: &[f64], k: usize) -> f64 {
    let d = a.len() as f64;
    let mean = a.iter().sum::<f64>() / d;
    let ss: f64 = a.iter().map(|x| (x - mean).powi(2)).sum();
    d * (d - k as f64) / (k as f64 * (d - 1.0)) * ss
}

/// Bernstein: for R iid draws with |Y − EY| ≤ m and Var(Y) = v,
/// P(|Ȳ − EY| ≥ t) ≤ 2 exp(−R t²/(2v + 2mt/3)); the t at which this equals `fail`.
fn bernstein_radius(r: usize, v: f64, m: f64, fail: f64) -> f64 {
    let c = (2.0 / fail).ln();
    let r = r as f64;
    (c * m / 3.0 + ((c * m / 3.0).powi(2) + 2.0 * r * c * v).sqrt()) / r
}

/// R estimates of the trace of example 0, one per step (fresh coordinates per step), from
/// the accountant in Trace mode with k coordinates.
fn estimates(setup: &EstimatorSetup, k: usize, seed: u64, r: usize) -> Vec<f64> {
    let config = FilConfig {
        mode: FilMode::Trace { coords: k },
        kappa: KappaRule::One,
        seed,
    };
    let mut fil = FilAccountant::new(&setup.model, &setup.data, &setup.dp, &config).unwrap();
    let mut prev = 0.0;
    let mut out = Vec::with_capacity(r);
    for t in 0..r as u64 {
        fil.observe(&step_info(t, &setup.params, &[0], setup.s))
            .unwrap();
        let now = fil.results().unwrap()[0].trace;
        out.push(now - prev);
        prev = now;
    }
    out
}

#[test]
fn guo22_eq5_trace_estimator_unbiased() {
    // X = (d/k)Σ_{i∈S} a_i is bounded: |X − Tr| ≤ M (M from the exact law over all
    // subsets), with exact variance V. Bernstein bounds |mean of R − Tr| by t at failure
    // probability 1e-6. The check discriminates: t is < 1 % of Tr, while forgetting the
    // d/k scaling (a factor 8) or a biased sampler would move the mean by far more.
    let setup = estimator_setup();
    let (d, k, r, seed) = (16, 2, 100_000, 20_240_601u64);
    let tr: f64 = setup.a.iter().sum();
    let (mean_exact, var, _, max_dev) = exact_moments(&setup.a, k);
    assert!(rel(mean_exact, tr) < 1e-13);
    // The accountant's exact trace (k = d) is the sum of the a_i.
    let exact = estimates(&setup, d, seed, 1)[0];
    assert!(rel(exact, tr) < 1e-13, "{exact} vs {tr}");
    let xs = estimates(&setup, k, seed, r);
    let mean = xs.iter().sum::<f64>() / r as f64;
    let t = bernstein_radius(r, var, max_dev, 1e-6);
    assert!(t < 0.01 * tr, "test too weak: radius {t} vs trace {tr}");
    assert!(
        (mean - tr).abs() <= t,
        "seed {seed}: mean {mean} vs exact trace {tr}, allowed ±{t}"
    );
}

#[test]
fn guo22_eq5_trace_estimator_variance_falls_as_1_over_k() {
    // Sampling k of d coordinates without replacement: Var = d(d − k)/(k(d − 1))·Σ(a_i − ā)²
    // (checked against the exact law over all subsets), so Var(k)/Var(4k) = 4(d − k)/(d − 4k)
    // = 7 for d = 16, k = 2 (not 4 as with replacement, and not 1 as when one coordinate is
    // reused k times). The empirical variance about the known mean, V̂ = mean of (X − Tr)²,
    // averages Y = (X − Tr)² ∈ [0, M²] with Var(Y) = μ₄ − V² (exact): Bernstein at 5e-7 per
    // k (union 1e-6) gives the radius, asserted < 15 % of V so the test discriminates.
    let setup = estimator_setup();
    let (d, r, seed) = (16usize, 100_000usize, 77_031u64);
    let tr: f64 = setup.a.iter().sum();
    let mut got = Vec::new();
    for k in [2usize, 8] {
        let (_, var, m4, max_dev) = exact_moments(&setup.a, k);
        let formula = finite_population_variance(&setup.a, k);
        assert!(
            rel(formula, var) < 1e-12,
            "k {k}: formula {formula} vs exact {var}"
        );
        let xs = estimates(&setup, k, seed + k as u64, r);
        let vhat = xs.iter().map(|x| (x - tr).powi(2)).sum::<f64>() / r as f64;
        let t = bernstein_radius(r, m4 - var * var, max_dev * max_dev, 5e-7);
        assert!(
            t < 0.15 * var,
            "k {k}: test too weak: radius {t} vs variance {var}"
        );
        assert!(
            (vhat - var).abs() <= t,
            "seed {}: k {k}: empirical variance {vhat} vs {var} ± {t}",
            seed + k as u64
        );
        got.push((vhat, var));
    }
    let ratio = got[0].1 / got[1].1;
    let want = 4.0 * (d as f64 - 2.0) / (d as f64 - 8.0);
    assert!(rel(ratio, want) < 1e-12, "{ratio} vs {want}");
    let emp = got[0].0 / got[1].0;
    assert!(emp > 5.0 && emp < 9.5, "empirical ratio {emp} (exact 7)");
}

#[test]
fn guo22_full_matrix_trace_equals_exact_trace_mode() {
    // One run observed by a Full and a Trace { k = d } accountant: per example, Tr of the
    // accumulated matrix = the trace (1e-12 relative: different summation orders); the
    // matrix is symmetric; 1/‖I‖₂ ≤ d/Tr(I) ≤ Tr(I⁻¹)/d (Thm 2's chain).
    let d = 6;
    let data = gaussian_blobs(16, d, 3, 0.6, 9).unwrap();
    let model = arch::mlp(d, &[5], 3, Activation::Tanh).unwrap();
    let dp = DpSgdConfig {
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 0.4,
        }),
        noise_multiplier: 1.1,
        sampling: Sampling::Poisson,
        batch_size: 6,
        steps: 5,
        seed: 4,
        ..DpSgdConfig::default()
    };
    let sub = KappaRule::Subsampled { delta: None };
    let mut full = FilAccountant::new(
        &model,
        &data,
        &dp,
        &FilConfig {
            mode: FilMode::Full,
            kappa: sub,
            seed: 1,
        },
    )
    .unwrap();
    let mut trace = FilAccountant::new(
        &model,
        &data,
        &dp,
        &FilConfig {
            mode: FilMode::Trace { coords: d },
            kappa: sub,
            seed: 2,
        },
    )
    .unwrap();
    let mut params = model.init_params(6);
    reconbound::train::dpsgd::train(
        &model,
        &data,
        &dp,
        &mut params,
        &mut (&mut full, &mut trace),
    )
    .unwrap();
    let (rf, rt) = (full.results().unwrap(), trace.results().unwrap());
    let mut sampled = 0;
    for (a, b) in rf.iter().zip(&rt) {
        assert_eq!(a.steps_in_batch, b.steps_in_batch);
        if a.steps_in_batch == 0 {
            assert_eq!((a.trace, b.trace), (0.0, 0.0));
            assert!(full.fisher_matrix(a.index).is_none());
            continue;
        }
        sampled += 1;
        assert!(
            rel(a.trace, b.trace) < 1e-12,
            "example {}: {} vs {}",
            a.index,
            a.trace,
            b.trace
        );
        let m = full.fisher_matrix(a.index).unwrap();
        let diag: f64 = (0..d).map(|i| m[i * d + i]).sum();
        assert!(rel(diag, a.trace) < 1e-12);
        for i in 0..d {
            for j in 0..d {
                assert_eq!(m[i * d + j], m[j * d + i]);
            }
        }
        let (spec, unb) = (a.spectral_bound.unwrap(), a.mse_bound.unwrap());
        assert!(spec <= unb, "example {}: {spec} > {unb}", a.index);
        assert!(b.spectral_bound.is_none());
        let mut ident = vec![0.0; d * d];
        for i in 0..d {
            ident[i * d + i] = 1.0;
        }
        if let Ok(biased) =
            reconbound::accounting::fil::biased_mse_bound(m, d, &ident, &vec![0.0; d])
        {
            assert!(
                unb <= biased * (1.0 + 1e-12),
                "example {}: {unb} > {biased}",
                a.index
            );
        }
    }
    assert!(sampled >= 8, "too few sampled examples ({sampled})");
}

#[test]
fn guo22_thm4_kappa_once_per_step_in_batch_and_never_sampled_zero() {
    // Poisson sampling, q = 0.05, 6 steps: two accountants (κ = 1 and the subsampled κ) and
    // a recorder on one run. Per example: steps_in_batch = the number of recorded batches
    // containing it; the κ = 1 trace = Σ over those steps of Tr(I_t), recomputed
    // independently (Dual<1> columns at the recorded parameters, 1e-12 relative); the
    // subsampled trace = κ × that (1e-14); never-sampled examples have trace 0 and no bound.
    let d = 3;
    let n = 40;
    let data = gaussian_blobs(n, d, 2, 0.5, 13).unwrap();
    let model = arch::logistic_regression(d).unwrap();
    let sigma = 0.9;
    let dp = DpSgdConfig {
        learning_rate: 0.5,
        momentum: 0.0,
        weight_decay: 0.0,
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 0.2,
        }),
        noise_multiplier: sigma,
        sampling: Sampling::Poisson,
        batch_size: 2,
        steps: 6,
        seed: 31,
    };
    let mode = FilMode::Trace { coords: d };
    let mut one = FilAccountant::new(
        &model,
        &data,
        &dp,
        &FilConfig {
            mode,
            kappa: KappaRule::One,
            seed: 0,
        },
    )
    .unwrap();
    let mut sub = FilAccountant::new(
        &model,
        &data,
        &dp,
        &FilConfig {
            mode,
            kappa: KappaRule::Subsampled { delta: None },
            seed: 0,
        },
    )
    .unwrap();
    // κ of Eq. 3 with the add/remove ε (μ = 1/σ) at δ = 1/(n·T).
    let delta = default_delta(n, 6).unwrap();
    let eps = step_epsilon(step_mu(sigma, Adjacency::AddRemove).unwrap(), delta).unwrap();
    let k = kappa(0.05, eps).unwrap();
    assert_eq!(sub.kappa(), k);
    assert!(k > 0.05 && k < 1.0);
    let mut rec = Recorder::default();
    let mut params = model.init_params(2);
    reconbound::train::dpsgd::train(
        &model,
        &data,
        &dp,
        &mut params,
        &mut (&mut one, &mut (&mut sub, &mut rec)),
    )
    .unwrap();
    let (r1, rk) = (one.results().unwrap(), sub.results().unwrap());
    let c = dp.clipping.unwrap();
    let s = sigma * 1.11522 * 0.2;
    let (mut never, mut twice) = (0, 0);
    for i in 0..n {
        let steps: Vec<&(u64, Vec<f64>, Vec<usize>, f64)> =
            rec.steps.iter().filter(|st| st.2.contains(&i)).collect();
        assert_eq!(r1[i].steps_in_batch, steps.len() as u64);
        assert_eq!(rk[i].steps_in_batch, steps.len() as u64);
        if steps.is_empty() {
            never += 1;
            assert_eq!((r1[i].trace, rk[i].trace), (0.0, 0.0));
            assert_eq!((r1[i].mse_bound, rk[i].mse_bound), (None, None));
            continue;
        }
        if steps.len() >= 2 {
            twice += 1;
        }
        let (x, y) = data.example(i).unwrap();
        let all: Vec<usize> = (0..d).collect();
        let want: f64 = steps
            .iter()
            .map(|st| {
                gaussian_fisher_trace(model.num_params(), d, s, &all, |j, out: &mut [f64]| {
                    clipped_column(&model, &st.1, x, y as usize, c, j, out)
                })
                .unwrap()
            })
            .sum();
        assert!(
            rel(r1[i].trace, want) < 1e-12,
            "example {i}: {} vs {want}",
            r1[i].trace
        );
        assert!(rel(rk[i].trace, k * r1[i].trace) < 1e-14, "example {i}");
    }
    // The run must exercise both cases (fixed seed 31).
    assert!(never > 0 && twice > 0, "never {never}, twice {twice}");
}
