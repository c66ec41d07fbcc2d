//! `reconbound train`: DP-SGD (or non-private SGD) of a paper architecture, or
//! output-perturbed logistic regression, on MNIST or CIFAR-10; prints the test accuracy, the
//! run's ε and the wall time.

use super::args::{parse, Flags, Spec, UsageError};
use super::commands::Failure;
use super::format::{sig, Side};
use super::json::{Object, Value};
use crate::accounting::{pld, rdp};
use crate::data::{self, Dataset};
use crate::error::{check_non_negative, check_open_unit, check_positive};
use crate::nn::{arch, Activation, Sequential};
use crate::rng::Rng;
use crate::train::clip::ClipMethod;
use crate::train::dpsgd::{Clipping, DpSgd, DpSgdConfig};
use crate::train::logreg;
use crate::train::observer::{accuracy, Metrics};
use crate::train::sampling::{BatchSampler, Sampling};
use std::format;
use std::io::Write as _;
use std::string::String;
use std::time::Instant;

type Out = Result<String, Failure>;

/// Documented defaults of `reconbound train`.
pub(crate) mod defaults {
    /// Model.
    pub const MODEL: &str = "mnist-convnet";
    /// Training examples (the rest of the embedded 2,000 is the test set).
    pub const TRAIN_SIZE: usize = 1600;
    /// Largest default test set.
    pub const MAX_TEST_SIZE: usize = 10_000;
    /// B.
    pub const BATCH_SIZE: u64 = 64;
    /// Epochs (T = ⌈E·n/B⌉ = 300 at n = 1600, B = 64).
    pub const EPOCHS: f64 = 12.0;
    /// σ.
    pub const NOISE_MULTIPLIER: f64 = 1.0;
    /// C (Guo et al. 2022 App. C Table 3).
    pub const CLIP: f64 = 1.0;
    /// ρ.
    pub const LR: f64 = 0.5;
    /// μ (Guo et al. 2022 App. C Table 3).
    pub const MOMENTUM: f64 = 0.5;
    /// δ.
    pub const DELTA: f64 = 1e-5;
    /// λ of `--model logreg`.
    pub const LAMBDA: f64 = 1e-2;
    /// Output noise σ of `--model logreg`.
    pub const LOGREG_NOISE: f64 = 1.0;
}

const HELP: &str = "\
usage: reconbound train [--model mlp|mnist-convnet|cifar-convnet|logreg] [--data embedded|<idx dir>|<cifar file>]
                        [--train-size N] [--test-size M] [--steps T | --epochs E] [--batch-size B]
                        [--noise-multiplier S] [--clip C] [--clip-mode hard|gelu|none]
                        [--sampling poisson|fixed|shuffle|full] [--lr R] [--momentum M]
                        [--weight-decay W] [--lambda L] [--delta D] [--seed X] [--quiet] [--json]

Trains a model with DP-SGD and reports its test accuracy, the run's ε(δ) and the wall time.
Each step: batch by --sampling; per-example gradients clipped to norm C (hard: g·min(1, C/‖g‖);
gelu: g/(GELU(‖g‖/C − 1) + 1), sensitivity 1.11522·C; none: no clipping, needs S = 0);
released gradient (Σ clipped + N(0, S²·sens²·I)) / B, with B the EXPECTED batch size for Poisson
sampling; momentum M, weight decay W after the noise, learning rate R. S = 0 with
--clip-mode none is plain SGD.

Models: mlp (one hidden layer of 10 ELU units, Hayes et al. 2023), mnist-convnet and
cifar-convnet (the tanh ConvNets of Guo et al. 2022 App. C), logreg (output-perturbed
L2-regularised logistic regression on classes 0 vs 1, inputs projected into the unit ball,
no intercept: exact minimiser by Newton's method, plus N(0, S²I) with S = --noise-multiplier;
(2, ε)-RDP with ε = 4/(nλS)², reported with the final gradient norm).
Data: embedded (the 2,000 MNIST images shipped with the crate), a directory of MNIST IDX
files, or a CIFAR-10 binary batch file.

Defaults: --model mnist-convnet --data embedded --train-size 1600 (the other 400 images are
the test set; for other data the test set is at most 10000 of the rest) --batch-size 64
--epochs 12 (300 steps) --sampling poisson --noise-multiplier 1 --clip 1 --clip-mode hard
--lr 0.5 --momentum 0.5 --weight-decay 0 --delta 1e-5 --seed 0. For logreg: train 80 % of
the 0/1 examples, test 20 %, --lambda 0.01 --noise-multiplier 1.

Privacy: ε by RDP (improved conversion) and by the certified PLD accountant, for Poisson
sampling at q = B/n and for the full batch (q = 1). Fixed-size and shuffled batches get no ε
(no tight analysis of those schemes is implemented; the Poisson ε is not a guarantee for
them); neither does S = 0. Determinism: one seed gives bit-identical results (data split,
initialisation, batches, noise: streams derived from the seed by Rng::for_trial).

JSON keys: command, model, data, parameters, train_size, test_size, sampling, batch_size,
sampling_rate, steps, noise_multiplier, clip, clip_mode, lr, momentum, weight_decay, seed,
delta, test_accuracy, train_loss, epsilon_rdp, best_order, epsilon_pld, epsilon_pld_lower,
[epsilon_note], seconds; for logreg: lambda, gradient_norm, gradient_norm_relative,
newton_iterations, test_accuracy_nonprivate, rdp_order2 instead of the SGD keys.
Everything but seconds is identical across runs with the same seed.
";

const fn v(name: &'static str) -> Spec {
    Spec {
        name,
        takes_value: true,
    }
}

const fn s(name: &'static str) -> Spec {
    Spec {
        name,
        takes_value: false,
    }
}

/// Stream indices of `Rng::for_trial(seed, ·)` reserved for the data split and the
/// initialisation (DP-SGD uses 0..2T).
const SPLIT_STREAM: u64 = u64::MAX;
const TEST_STREAM: u64 = u64::MAX - 1;
const INIT_STREAM: u64 = u64::MAX - 2;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

fn load_data(spec: &str) -> Result<Dataset, Failure> {
    let shown: String = spec.chars().filter(|c| !c.is_control()).take(80).collect();
    if spec == "embedded" {
        return Ok(data::embedded_mnist()?);
    }
    let path = std::path::Path::new(spec);
    let loaded = if path.is_dir() {
        data::idx::mnist_from_dir(path)
    } else if path.is_file() {
        data::cifar::cifar10_from_files(&[path])
    } else {
        return Err(usage(format!(
            "--data: '{shown}' is neither 'embedded', a directory of MNIST IDX files nor a CIFAR-10 batch file"
        )));
    };
    loaded.map_err(|e| usage(format!("--data: cannot load '{shown}': {e}")))
}

/// (train, test) of the requested sizes, drawn by seeded splits.
fn split(
    data: &Dataset,
    train_size: usize,
    test_size: usize,
    seed: u64,
) -> Result<(Dataset, Dataset), Failure> {
    let n = data.len();
    if train_size == 0 || train_size >= n {
        return Err(usage(format!(
            "--train-size = {train_size} is out of range: must be in 1..{n} (the data have {n} examples, and at least one is needed for testing)"
        )));
    }
    let rest = n - train_size;
    if test_size == 0 || test_size > rest {
        return Err(usage(format!(
            "--test-size = {test_size} is out of range: must be in 1..={rest} (examples not used for training)"
        )));
    }
    let split_seed = Rng::for_trial(seed, SPLIT_STREAM).next_u64();
    let (train, others) = data::split_by_size(data, rest, split_seed)?;
    let test = if test_size == rest {
        others
    } else {
        let test_seed = Rng::for_trial(seed, TEST_STREAM).next_u64();
        data::split_by_size(&others, test_size, test_seed)?.1
    };
    Ok((train, test))
}

fn parse_sampling(f: &Flags) -> Result<Sampling, Failure> {
    Ok(match f.raw("sampling").unwrap_or("poisson") {
        "poisson" => Sampling::Poisson,
        "fixed" => Sampling::FixedSize,
        "shuffle" => Sampling::Shuffle,
        "full" => Sampling::FullBatch,
        other => {
            return Err(usage(format!(
                "flag '--sampling': '{}' is not one of poisson, fixed, shuffle, full",
                other.chars().take(20).collect::<String>()
            )))
        }
    })
}

fn size_flag(f: &Flags, name: &str) -> Result<Option<usize>, Failure> {
    match f.u64(name)? {
        None => Ok(None),
        Some(v) => usize::try_from(v)
            .map(Some)
            .map_err(|_| usage(format!("--{name} = {v} is out of range: too large"))),
    }
}

pub(crate) fn train(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("model"),
            v("data"),
            v("train-size"),
            v("test-size"),
            v("steps"),
            v("epochs"),
            v("batch-size"),
            v("noise-multiplier"),
            v("clip"),
            v("clip-mode"),
            v("sampling"),
            v("lr"),
            v("momentum"),
            v("weight-decay"),
            v("lambda"),
            v("delta"),
            v("seed"),
            s("quiet"),
            s("json"),
        ],
    )?;
    if f.help {
        return Ok(String::from(HELP));
    }
    let model_name = f.raw("model").unwrap_or(defaults::MODEL);
    if !matches!(
        model_name,
        "mlp" | "mnist-convnet" | "cifar-convnet" | "logreg"
    ) {
        return Err(usage(format!(
            "flag '--model': '{}' is not one of mlp, mnist-convnet, cifar-convnet, logreg",
            model_name.chars().take(20).collect::<String>()
        )));
    }
    let delta = f.f64("delta")?.unwrap_or(defaults::DELTA);
    check_open_unit("delta", delta)?;
    let seed = f.u64("seed")?.unwrap_or(0);
    let data_spec = f.raw("data").unwrap_or("embedded");
    if model_name == "logreg" {
        for flag in [
            "steps",
            "epochs",
            "batch-size",
            "clip",
            "clip-mode",
            "sampling",
            "lr",
            "momentum",
            "weight-decay",
        ] {
            if f.has(flag) {
                return Err(usage(format!(
                    "flag '--{flag}' does not apply to '--model logreg' (output perturbation)"
                )));
            }
        }
        return logistic(&f, data_spec, seed, delta);
    }
    if f.has("lambda") {
        return Err(usage(String::from(
            "flag '--lambda' applies only to '--model logreg'",
        )));
    }
    f.exclusive("steps", "epochs")?;

    // Hyperparameters first (cheap checks before loading data).
    let sigma = f
        .f64("noise-multiplier")?
        .unwrap_or(defaults::NOISE_MULTIPLIER);
    check_non_negative("noise_multiplier", sigma)?;
    let clip_norm = f.f64("clip")?.unwrap_or(defaults::CLIP);
    check_positive("clip", clip_norm)?;
    let clip_mode = f.raw("clip-mode").unwrap_or("hard");
    let clipping = match clip_mode {
        "hard" => Some(ClipMethod::Hard),
        "gelu" => Some(ClipMethod::Gelu),
        "none" => None,
        other => {
            return Err(usage(format!(
                "flag '--clip-mode': '{}' is not one of hard, gelu, none",
                other.chars().take(20).collect::<String>()
            )))
        }
    };
    if clipping.is_none() && sigma != 0.0 {
        return Err(usage(format!(
            "--noise-multiplier = {sigma} needs clipping: with '--clip-mode none' it must be 0"
        )));
    }
    if clipping.is_none() && f.has("clip") {
        return Err(usage(String::from(
            "flag '--clip' has no effect with '--clip-mode none'",
        )));
    }
    let lr = f.f64("lr")?.unwrap_or(defaults::LR);
    check_positive("lr", lr)?;
    let momentum = f.f64("momentum")?.unwrap_or(defaults::MOMENTUM);
    if !(0.0..1.0).contains(&momentum) {
        return Err(usage(format!(
            "--momentum = {momentum} is out of range: must be in [0, 1)"
        )));
    }
    let weight_decay = f.f64("weight-decay")?.unwrap_or(0.0);
    check_non_negative("weight_decay", weight_decay)?;
    let sampling = parse_sampling(&f)?;
    let batch_size = f.u64("batch-size")?.unwrap_or(defaults::BATCH_SIZE);
    if batch_size == 0 {
        return Err(usage(String::from(
            "--batch-size = 0 is out of range: must be >= 1",
        )));
    }
    if sampling == Sampling::FullBatch && f.has("batch-size") {
        return Err(usage(String::from(
            "flag '--batch-size' does not apply to '--sampling full' (the batch is the training set)",
        )));
    }
    let epochs = f.f64("epochs")?;
    if let Some(e) = epochs {
        check_positive("epochs", e)?;
    }
    let steps_flag = f.u64("steps")?;
    if steps_flag == Some(0) {
        return Err(usage(String::from(
            "--steps = 0 is out of range: must be >= 1",
        )));
    }

    let data = load_data(data_spec)?;
    let model: Sequential = match model_name {
        "mlp" => arch::mlp(
            data.dim(),
            &[10],
            data.num_classes().max(2),
            Activation::Elu,
        )?,
        "mnist-convnet" => {
            if data.shape() != (1, 28, 28) {
                return Err(usage(format!(
                    "--model mnist-convnet needs 1×28×28 images; --data gives {:?}",
                    data.shape()
                )));
            }
            arch::mnist_tanh_convnet()?
        }
        _ => {
            if data.shape() != (3, 32, 32) {
                return Err(usage(format!(
                    "--model cifar-convnet needs 3×32×32 images; --data gives {:?}",
                    data.shape()
                )));
            }
            arch::cifar10_tanh_convnet()?
        }
    };
    if data.num_classes() > model.num_classes() {
        return Err(usage(format!(
            "--data has {} classes; the model outputs {}",
            data.num_classes(),
            model.num_classes()
        )));
    }
    let n_all = data.len();
    let train_size =
        size_flag(&f, "train-size")?.unwrap_or(defaults::TRAIN_SIZE.min(n_all.saturating_sub(1)));
    let test_size = size_flag(&f, "test-size")?.unwrap_or(
        n_all
            .saturating_sub(train_size)
            .min(defaults::MAX_TEST_SIZE),
    );
    let (train_set, test_set) = split(&data, train_size, test_size, seed)?;
    drop(data);
    let b = usize::try_from(batch_size).unwrap_or(usize::MAX);
    if sampling != Sampling::FullBatch && b > train_set.len() {
        return Err(usage(format!(
            "--batch-size = {batch_size} is out of range: must be <= --train-size ({})",
            train_set.len()
        )));
    }
    let sampler = BatchSampler::new(sampling, train_set.len(), b)?;
    let steps = match steps_flag {
        Some(t) => t,
        None => sampler.steps_for_epochs(epochs.unwrap_or(defaults::EPOCHS))?,
    };
    let config = DpSgdConfig {
        learning_rate: lr,
        momentum,
        weight_decay,
        clipping: clipping.map(|method| Clipping {
            method,
            norm: clip_norm,
        }),
        noise_multiplier: sigma,
        sampling,
        batch_size: sampler.batch_size(),
        steps,
        seed,
    };
    let q = sampler.sampling_rate();

    // The privacy accounting does not depend on the run: do it first, so that a bad
    // combination fails fast.
    let mut eps: Option<(rdp::EpsilonBound, Option<pld::Estimate>)> = None;
    let mut note: Option<String> = None;
    if sigma == 0.0 {
        note = Some(String::from(
            "no epsilon: the noise multiplier is 0, the run is not differentially private",
        ));
    } else if !sampling.has_privacy_accounting() {
        note = Some(format!(
            "no epsilon: {} sampling has no tight privacy analysis implemented (the Poisson-sampling epsilon at the same rate is not a guarantee for it); use --sampling poisson or full",
            if sampling == Sampling::Shuffle { "shuffled-epoch" } else { "fixed-size" }
        ));
    } else {
        let e_rdp = rdp::epsilon(q, sigma, steps, delta, rdp::Conversion::Improved)?;
        let e_pld = pld_epsilon(q, sigma, steps, delta)?;
        eps = Some((e_rdp, e_pld));
    }

    let quiet = f.has("quiet");
    let start = Instant::now();
    let init_seed = Rng::for_trial(seed, INIT_STREAM).next_u64();
    let mut params = model.init_params(init_seed);
    let mut metrics = Metrics::new(&model, None)?;
    let mut trainer = DpSgd::new(&model, &train_set, &config)?;
    let mut last_report = 0.0f64;
    let mut reported = false;
    for t in 0..steps {
        trainer.step(&mut params, &mut metrics)?;
        let elapsed = start.elapsed().as_secs_f64();
        if !quiet && elapsed >= 1.0 && elapsed - last_report >= 1.0 {
            last_report = elapsed;
            reported = true;
            let mut err = std::io::stderr();
            let _ = write!(
                err,
                "\rtrain: step {}/{steps} ({:.0} %), {elapsed:.1} s",
                t + 1,
                100.0 * (t + 1) as f64 / steps as f64
            );
            let _ = err.flush();
        }
    }
    if reported {
        let mut err = std::io::stderr();
        let _ = writeln!(err);
    }
    let test_accuracy = accuracy(&model, &params, &test_set)?;
    // Mean per-example loss over the last (up to) 10 % of the steps.
    let tail = (metrics.history.len() / 10).max(1);
    let (mut loss_sum, mut count) = (0.0, 0usize);
    for r in metrics.history.iter().rev().take(tail) {
        if r.batch_size > 0 {
            loss_sum += r.batch_loss * r.batch_size as f64;
            count += r.batch_size;
        }
    }
    let train_loss = if count > 0 {
        loss_sum / count as f64
    } else {
        f64::NAN
    };
    let seconds = start.elapsed().as_secs_f64();

    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "train")
            .str("model", model_name)
            .str("data", data_spec)
            .int("parameters", model.num_params() as u64)
            .int("train_size", train_set.len() as u64)
            .int("test_size", test_set.len() as u64)
            .str("sampling", sampling.name())
            .int("batch_size", sampler.batch_size() as u64)
            .num("sampling_rate", q)
            .int("steps", steps)
            .num("noise_multiplier", sigma);
        if clipping.is_some() {
            o.num("clip", clip_norm);
        } else {
            o.put("clip", Value::Null);
        }
        o.str("clip_mode", clip_mode)
            .num("lr", lr)
            .num("momentum", momentum)
            .num("weight_decay", weight_decay)
            .int("seed", seed)
            .num("delta", delta)
            .num("test_accuracy", test_accuracy)
            .num("train_loss", train_loss);
        match eps {
            Some((e, p)) => {
                o.num("epsilon_rdp", e.epsilon).num("best_order", e.order);
                put_pld(&mut o, p);
            }
            None => {
                o.put("epsilon_rdp", Value::Null)
                    .put("epsilon_pld", Value::Null)
                    .str("epsilon_note", note.as_deref().unwrap_or(""));
            }
        }
        o.num("seconds", seconds);
        return Ok(o.render() + "\n");
    }

    let mut t = format!(
        "reconbound train: {model_name} ({} parameters) on {data_spec}: {} training / {} test examples\n",
        model.num_params(),
        train_set.len(),
        test_set.len()
    );
    let clip_text = match clipping {
        Some(_) => format!("clip {clip_mode} C = {clip_norm}"),
        None => String::from("no clipping"),
    };
    t.push_str(&format!(
        "  {} SGD: {} sampling, q = {}, B = {}, {steps} steps, σ = {sigma}, {clip_text}, lr {lr}, momentum {momentum}, weight decay {weight_decay}, seed {seed}\n",
        if sigma > 0.0 { "DP" } else { "non-private" },
        sampling.name(),
        sig(q, 6, Side::Nearest),
        sampler.batch_size(),
    ));
    t.push_str(&format!(
        "  test accuracy                {}\n  training loss (last 10 %)    {}\n",
        sig(test_accuracy, 6, Side::Nearest),
        sig(train_loss, 6, Side::Nearest)
    ));
    match eps {
        Some((e, p)) => {
            t.push_str(&format!(
                "  ε(δ = {delta:e}) by RDP       {}   (upper bound; order α = {})\n",
                sig(e.epsilon, 6, Side::Up),
                sig(e.order, 4, Side::Nearest),
            ));
            t.push_str(&pld_line(delta, p));
        }
        None => t.push_str(&format!(
            "  ε                            -   ({})\n",
            note.as_deref().unwrap_or("")
        )),
    }
    t.push_str(&format!("  wall time                    {seconds:.2} s\n"));
    Ok(t)
}

/// The certified PLD ε, or `None` when the PLD grid cannot reach it (very large ε): the RDP
/// ε is then the only one reported.
fn pld_epsilon(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
) -> Result<Option<pld::Estimate>, Failure> {
    match pld::epsilon(q, sigma, steps, delta, &pld::PldConfig::default()) {
        Ok(e) => Ok(Some(e)),
        Err(crate::Error::Numerical { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

const PLD_NOTE: &str = "the PLD accountant's grid cannot resolve an epsilon this large";

fn put_pld(o: &mut Object, p: Option<pld::Estimate>) {
    match p {
        Some(p) => {
            o.num("epsilon_pld", p.value)
                .num("epsilon_pld_lower", p.lower);
        }
        None => {
            o.put("epsilon_pld", Value::Null)
                .str("epsilon_pld_note", PLD_NOTE);
        }
    }
}

fn pld_line(delta: f64, p: Option<pld::Estimate>) -> String {
    match p {
        Some(p) => format!(
            "  ε(δ = {delta:e}) by PLD       {}   (certified upper bound; true ε ≥ {})\n",
            sig(p.value, 6, Side::Up),
            sig(p.lower, 6, Side::Down)
        ),
        None => format!("  ε(δ = {delta:e}) by PLD       -   ({PLD_NOTE})\n"),
    }
}

/// `--model logreg`: output-perturbed logistic regression on classes 0 vs 1.
fn logistic(f: &Flags, data_spec: &str, seed: u64, delta: f64) -> Out {
    let lambda = f.f64("lambda")?.unwrap_or(defaults::LAMBDA);
    check_positive("lambda", lambda)?;
    let sigma = f.f64("noise-multiplier")?.unwrap_or(defaults::LOGREG_NOISE);
    check_positive("noise_multiplier", sigma)?;
    let data = load_data(data_spec)?
        .filter_labels(&[0, 1])
        .map_err(|e| usage(format!("--data: no examples of classes 0 and 1 ({e})")))?
        .flatten()
        .project_to_unit_ball();
    let n_all = data.len();
    if n_all < 2 {
        return Err(usage(String::from(
            "--data: fewer than 2 examples of classes 0 and 1",
        )));
    }
    let default_test = (libm::round(n_all as f64 * 0.2) as usize).clamp(1, n_all - 1);
    let train_size = size_flag(f, "train-size")?.unwrap_or(n_all - default_test);
    let test_size = size_flag(f, "test-size")?.unwrap_or(n_all.saturating_sub(train_size).max(1));
    let (train_set, test_set) = split(&data, train_size, test_size, seed)?;
    let start = Instant::now();
    let out =
        logreg::output_perturbation(&train_set, lambda, sigma, seed).map_err(|e| match e {
            crate::Error::InvalidParameter {
                name: "noise_std", ..
            } => usage(format!(
                "--noise-multiplier = {sigma} is out of range: must be finite and > 0"
            )),
            other => Failure::from(other),
        })?;
    let n = train_set.len() as u64;
    let acc = logreg::accuracy(&out.released, &test_set)?;
    let acc_np = logreg::accuracy(&out.fit.weights, &test_set)?;
    // The Gaussian mechanism with sensitivity Δ = 2/(nλ) and noise σ: RDP α·Δ²/(2σ²) at every
    // order (ε(δ) by the improved conversion) and its exact PLD (one full-batch step with
    // noise multiplier σ/Δ, rounded down so that ε stays an upper bound).
    let orders = rdp::DEFAULT_ORDERS;
    let mut curve = [0.0; rdp::DEFAULT_ORDERS.len()];
    for (r, &a) in curve.iter_mut().zip(orders.iter()) {
        *r = rdp::gaussian_rdp(a, out.sensitivity, sigma)?;
    }
    let e_rdp = rdp::epsilon_from_rdp(&orders, &curve, delta, rdp::Conversion::Improved)?;
    let multiplier = sigma / out.sensitivity * (1.0 - 4.0 * f64::EPSILON);
    let e_pld = pld_epsilon(1.0, multiplier, 1, delta)?;
    let relative = if out.fit.initial_gradient_norm > 0.0 {
        out.fit.gradient_norm / out.fit.initial_gradient_norm
    } else {
        0.0
    };
    let seconds = start.elapsed().as_secs_f64();
    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "train")
            .str("model", "logreg")
            .str("data", data_spec)
            .int("parameters", train_set.dim() as u64)
            .int("train_size", n)
            .int("test_size", test_set.len() as u64)
            .int("steps", 1)
            .num("lambda", lambda)
            .num("noise_multiplier", sigma)
            .int("seed", seed)
            .num("delta", delta)
            .num("gradient_norm", out.fit.gradient_norm)
            .num("gradient_norm_relative", relative)
            .int("newton_iterations", u64::from(out.fit.iterations))
            .num("test_accuracy", acc)
            .num("test_accuracy_nonprivate", acc_np)
            .num("rdp_order2", out.rdp_order2)
            .num("epsilon_rdp", e_rdp.epsilon)
            .num("best_order", e_rdp.order);
        put_pld(&mut o, e_pld);
        o.num("seconds", seconds);
        return Ok(o.render() + "\n");
    }
    Ok(format!(
        "reconbound train: output-perturbed logistic regression, classes 0 vs 1 of {data_spec} (unit ball, no intercept): {n} training / {} test examples, d = {}\n\
         \x20 λ = {lambda}, noise σ = {sigma}, seed {seed}\n\
         \x20 Newton: {} iterations, final gradient norm {} ({} relative to w = 0)\n\
         \x20 test accuracy                {}   (non-private minimiser: {})\n\
         \x20 (2, ε)-RDP, ε = 4/(nλσ)²      {}\n\
         \x20 ε(δ = {delta:e}) by RDP       {}   (upper bound; order α = {})\n\
         {}\
         \x20 wall time                    {seconds:.2} s\n",
        test_set.len(),
        train_set.dim(),
        out.fit.iterations,
        sig(out.fit.gradient_norm, 3, Side::Up),
        sig(relative, 3, Side::Up),
        sig(acc, 6, Side::Nearest),
        sig(acc_np, 6, Side::Nearest),
        sig(out.rdp_order2, 6, Side::Up),
        sig(e_rdp.epsilon, 6, Side::Up),
        sig(e_rdp.order, 4, Side::Nearest),
        pld_line(delta, e_pld)
    ))
}
