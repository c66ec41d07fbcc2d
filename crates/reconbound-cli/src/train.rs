//! `reconbound train`: DP-SGD (or non-private SGD) of a paper architecture, or
//! output-perturbed logistic regression, on MNIST or CIFAR-10; prints the test accuracy, the
//! run's ε and the wall time. With `--fil`, also the per-example Fisher information leakage
//! of the run (Guo et al. 2022 Alg. 1) with its table, histogram and image grid.

use super::args::{parse, switch as s, value as v, Flags, Spec, UsageError};
use super::commands::rdp_mse_lower_bound;
use super::failure::Failure;
use super::format::{sig, Side};
use super::json::{number, Object, Value};
use super::svg;
use reconbound::accounting::fil::accountant::{
    average_runs, FilAccountant, FilConfig, FilExample, FilMode, KappaRule,
};
use reconbound::accounting::guarantees::RdpMse;
use reconbound::accounting::run::{self, Run, Unsupported};
use reconbound::accounting::{pld, rdp};
use reconbound::data::{self, Dataset};
use reconbound::error::{check_non_negative, check_open_unit, check_positive};
use reconbound::nn::{arch, Activation, Sequential};
use reconbound::rng::Rng;
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgd, DpSgdConfig};
use reconbound::train::logreg;
use reconbound::train::observer::{accuracy, Metrics, Observer};
use reconbound::train::sampling::{BatchSampler, Sampling};
use std::format;
use std::io::Write as _;
use std::string::String;
use std::time::Instant;
use std::vec::Vec;

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
    /// K of `--fil-coords` (at most d).
    pub const FIL_COORDS: usize = 50;
    /// Largest `--fil-runs`.
    pub const MAX_FIL_RUNS: u64 = 1000;
    /// Examples per row of the `--fil-images` grid.
    pub const FIL_IMAGES_PER_ROW: usize = 8;
    /// Bins of the `--plot` histogram.
    pub const FIL_PLOT_BINS: usize = 30;
}

const HELP: &str = "\
usage: reconbound train [--model mlp|mnist-convnet|cifar-convnet|logreg] [--data embedded|<idx dir>|<cifar file>]
                        [--train-size N] [--test-size M] [--steps T | --epochs E] [--batch-size B]
                        [--noise-multiplier S] [--clip C] [--clip-mode hard|gelu|none]
                        [--sampling poisson|fixed|shuffle|full] [--lr R] [--momentum M]
                        [--weight-decay W] [--lambda L] [--delta D] [--seed X] [--quiet] [--json]
                        [--fil [--fil-coords K] [--fil-runs R] [--fil-kappa one|subsampled]
                               [--fil-delta P] [--fil-out FILE.csv] [--plot FILE.svg]
                               [--fil-images FILE.svg]]

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

Privacy (ε at δ = D, upper bounds, with the adjacency they hold for):
  poisson, full: add/remove adjacency; RDP (improved conversion, and Mironov's) at q = B/n
    (q = 1 for the full batch) and the certified PLD accountant.
  fixed: replace-one adjacency (n public; neighbours differ in one example); RDP of the
    Gaussian on batches of exactly B drawn without replacement (Wang, Balle, Kasiviswanathan
    2019, Thm 9 with the ternary-|χ|^α bound, as dp_accounting's
    SampledWithoutReplacementDpEvent), with noise multiplier S/2 because replacing one example
    moves the sum of clipped gradients by up to 2·sens. A valid but loose bound (no PLD).
  shuffle: no ε. No tight analysis of shuffled epochs is implemented, and the Poisson ε is
    not a guarantee: it can underestimate their ε (Chua et al., ICML 2024; Annamalai et al.
    2024).
  S = 0: no ε. Determinism: one seed gives bit-identical results (data split,
initialisation, batches, noise: streams derived from the seed by Rng::for_trial).

Fisher information leakage (--fil; mlp and the ConvNets, S > 0; Guo et al. 2022 Alg. 1): at
each step, for every example z in the batch, Tr(I_t(z)) = Σ_i ‖∂g̃(z)/∂z_i‖²/(S·sens)² (Eq. 5;
g̃ the clipped gradient, sens its largest norm) from K = --fil-coords input coordinates drawn
without replacement per example and step, scaled by d/K (K = d: exact trace; default
K = min(50, d)), times κ (Thm 4), summed over the steps (Thm 3). Per example: dFIL
η̄² = Tr(I)/d and the Thm 2 bound MSE ≥ d/Tr(I) for unbiased reconstructions. The sum over the
realised run (and, for K < d, the trace) is an unbiased estimate: the per-example bounds are
estimates, not certified bounds.
  --fil-kappa subsampled (default; 'one' for --sampling shuffle, the only valid rule there):
    κ = q/(q + (1−q)e^{−ε}) (Eq. 3), ε the per-step privacy loss of the Gaussian mechanism
    (sensitivity sens for Poisson, 2·sens for fixed-size batches) exceeded with probability
    ≤ P = --fil-delta (default 1/(n·T)); q = 1 (full batch): κ = 1.
    one: κ = 1 (Eq. 2), valid for every sampling scheme.
  --fil-runs R: R runs with seeds X, X+1, …, X+R−1 on the same data split, the FIL averaged
    over the runs (Eq. 4); test accuracy and loss are those of the first run (seed X).
  Compared with the RDP bound of Thm 1, computed as 'reconbound bound' does ((2, ε)-RDP under
  substitution, ε ≤ 1.5·r₄ + r₃; data in [0, 1]^d, diameter 1): Poisson and full batch only.
  --fil-out FILE.csv: one row per training example, columns
    index,label,steps_in_batch,trace,dfil,mse_bound (mse_bound empty for an example never
    sampled) and, for R > 1, trace_sd,trace_min,trace_max (steps_in_batch, trace, dfil and
    mse_bound are then of the mean over the runs).
  --plot FILE.svg: histogram of the per-example MSE bounds, log axis, with the RDP bound and
    MSE = 1 (perfect privacy) marked (Guo et al. Fig. 2).
  --fil-images FILE.svg: the 8 sampled examples with the highest and the 8 with the lowest
    dFIL (Guo et al. Fig. 6).
Printed MSE bounds are rounded down, dFIL, κ and ε up; JSON and CSV hold the exact values.

JSON keys: command, model, data, parameters, train_size, test_size, sampling, batch_size,
sampling_rate, steps, noise_multiplier, clip, clip_mode, lr, momentum, weight_decay, seed,
delta, test_accuracy, train_loss, adjacency (add-remove, or replace-one for fixed batches),
epsilon_analysis (the analysis the ε are of, in words), epsilon_rdp, best_order,
epsilon_rdp_mironov, best_order_mironov, epsilon_pld, epsilon_pld_lower, [epsilon_note],
seconds; for logreg: lambda, gradient_norm, gradient_norm_relative,
newton_iterations, test_accuracy_nonprivate, rdp_order2 instead of the SGD keys.
With --fil (before seconds): fil_kappa, fil_step_epsilon, fil_step_delta (null with
--fil-kappa one), fil_coords, fil_runs, fil_examples_sampled (in a batch at least once, in
any run), fil_mse_bound_min, fil_mse_bound_median (lower middle for an even count),
fil_mse_bound_max (the three null if no example was sampled), fil_dfil_max,
fil_trace_relative_sd_median (R > 1: median over the sampled examples of the sd/mean of
Tr(I) across runs), mse_lower_bound_rdp (or null and mse_lower_bound_rdp_note).
Everything but seconds is identical across runs with the same seed.
";

/// `train --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound train [--model mlp|mnist-convnet|cifar-convnet|logreg] [--data embedded|<idx dir>|<cifar file>]
                        [--train-size N] [--test-size M] [--steps T | --epochs E] [--batch-size B]
                        [--noise-multiplier S] [--clip C] [--clip-mode hard|gelu|none]
                        [--sampling poisson|fixed|shuffle|full] [--lr R] [--momentum M]
                        [--weight-decay W] [--lambda L] [--delta D] [--seed X] [--quiet] [--json]
                        [--fil [--fil-coords K] [--fil-runs R] [--fil-kappa one|subsampled]
                               [--fil-delta P] [--fil-out FILE.csv] [--plot FILE.svg]
                               [--fil-images FILE.svg]]

What accuracy does this much privacy cost? Trains a model with DP-SGD (or output-perturbed
logistic regression) and reports its test accuracy, the run's ε(δ) and the wall time; with
--fil, each training example's Fisher information leakage and Guo et al.'s MSE bound for
unbiased reconstructions (estimates from the realised run, not certified bounds).

Common flags (defaults in brackets):
  --model M             mlp, mnist-convnet, cifar-convnet or logreg [mnist-convnet]
  --data D              embedded (the 2,000 MNIST images shipped with the crate), a directory
                        of MNIST IDX files or a CIFAR-10 binary batch file [embedded]
  --train-size N        training examples; the test set is the rest (at most 10000) [1600]
  --batch-size B        the (expected) batch size [64]
  --steps T | --epochs E   noisy steps, or epochs [12 epochs: 300 steps]
  --sampling S          poisson, fixed, shuffle or full [poisson]; ε is reported for poisson
                        and full (add/remove) and fixed (replace-one), none for shuffle
  --noise-multiplier S  σ [1]; 0 with --clip-mode none is plain SGD
  --clip C              per-example gradient clipping norm [1]
  --lr R                learning rate [0.5]
  --delta D             δ of ε(δ) [1e-5]
  --seed X              one seed gives bit-identical results [0]
  --fil                 the Fisher information leakage (mlp and the ConvNets)
  --json                every number at full precision, as JSON

Example (the MLP of Hayes et al. 2023, 2 epochs on the embedded images):
  reconbound train --model mlp --epochs 2
";

/// Stream indices of `Rng::for_trial(seed, ·)` reserved for the data split and the
/// initialisation (DP-SGD uses 0..2T).
const SPLIT_STREAM: u64 = u64::MAX;
const TEST_STREAM: u64 = u64::MAX - 1;
const INIT_STREAM: u64 = u64::MAX - 2;
/// Stream of the FIL accountant's coordinate draws.
const FIL_STREAM: u64 = u64::MAX - 3;

/// The flags that only `--fil` uses.
const FIL_FLAGS: [&str; 7] = [
    "fil-coords",
    "fil-runs",
    "fil-kappa",
    "fil-delta",
    "fil-out",
    "plot",
    "fil-images",
];

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

pub(crate) fn load_data(spec: &str) -> Result<Dataset, Failure> {
    let shown: String = spec.chars().filter(|c| !c.is_control()).take(80).collect();
    if spec == "embedded" {
        return Ok(data::embedded_mnist()?);
    }
    let path = std::path::Path::new(spec);
    let loaded = if path.is_dir() {
        check_idx_files(path)?;
        data::idx::mnist_from_dir(path)
    } else if path.is_file() {
        data::cifar::cifar10_from_files(&[path])
    } else {
        return Err(usage(format!(
            "--data: '{shown}' is neither 'embedded', a directory of MNIST IDX files nor a CIFAR-10 batch file"
        )));
    };
    loaded.map_err(|e| {
        usage(format!(
            "--data: cannot load '{shown}': {}",
            super::failure::data_error(&e)
        ))
    })
}

/// The IDX pair `mnist_from_dir` will read in `dir` (the first of
/// [`data::idx::MNIST_FILE_NAMES`] whose images file exists), checked to be regular files
/// before any is opened: a FIFO would block the read, a link to a device feed it bytes
/// forever, and a missing labels file was reported without its name (issue 31).
pub(crate) fn check_idx_files(dir: &std::path::Path) -> Result<(), Failure> {
    for (images, labels) in data::idx::MNIST_FILE_NAMES {
        if std::fs::symlink_metadata(dir.join(images)).is_err() {
            continue;
        }
        for name in [images, labels] {
            let p = dir.join(name);
            let shown = super::output::printable(&p.to_string_lossy());
            match std::fs::metadata(&p) {
                Err(e) => {
                    return Err(usage(format!("--data: '{shown}' cannot be read: {e}")));
                }
                Ok(m) if !m.is_file() => {
                    return Err(usage(format!(
                        "--data: '{shown}' is not a regular file (a FIFO, a device or a directory): IDX files are read whole"
                    )));
                }
                Ok(_) => {}
            }
        }
        return Ok(());
    }
    Ok(())
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

/// The flags of `train`.
const FLAGS: [Spec; 27] = [
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
    s("fil"),
    v("fil-coords"),
    v("fil-runs"),
    v("fil-kappa"),
    v("fil-delta"),
    v("fil-out"),
    v("plot"),
    v("fil-images"),
];

/// What `train` says when `--fil` is asked of logistic regression.
const LOGREG_FIL: &str = "flag '--fil' applies only to the neural models (mlp, mnist-convnet, cifar-convnet), not to '--model logreg'";

/// `reconbound train …`.
pub(crate) fn train(args: &[String]) -> Out {
    let f = parse(args, &FLAGS)?;
    if f.help {
        return Ok(f.help_text("train", SHORT_HELP, String::from(HELP)));
    }
    super::output::check_flag_paths(&f, &["fil-out", "plot", "fil-images"], &["data"], &[])?;
    let model_name = f.raw("model").unwrap_or(defaults::MODEL);
    check_model(model_name)?;
    let delta = f.f64("delta")?.unwrap_or(defaults::DELTA);
    check_open_unit("delta", delta)?;
    let seed = f.u64("seed")?.unwrap_or(0);
    let data_spec = f.raw("data").unwrap_or("embedded");
    if !f.has("fil") {
        if let Some(flag) = FIL_FLAGS.iter().find(|&&n| f.has(n)) {
            return Err(usage(format!("flag '--{flag}' needs '--fil'")));
        }
    }
    if model_name == "logreg" {
        if f.has("fil") {
            return Err(usage(String::from(LOGREG_FIL)));
        }
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
    let trained = TrainConfig::parse(&f, model_name, data_spec, delta, seed)?.run()?;
    if f.has("json") {
        return Ok(trained.to_json(true).render() + "\n");
    }
    Ok(trained.text())
}

/// `--model`: one of the models `train` trains.
fn check_model(name: &str) -> Result<(), Failure> {
    if matches!(name, "mlp" | "mnist-convnet" | "cifar-convnet" | "logreg") {
        return Ok(());
    }
    Err(usage(format!(
        "flag '--model': '{}' is not one of mlp, mnist-convnet, cifar-convnet, logreg",
        name.chars().take(20).collect::<String>()
    )))
}

/// `--clip-mode` (default hard): the clipping, or `None` for none.
fn parse_clip_mode(raw: Option<&str>) -> Result<Option<ClipMethod>, Failure> {
    match raw.unwrap_or("hard") {
        "hard" => Ok(Some(ClipMethod::Hard)),
        "gelu" => Ok(Some(ClipMethod::Gelu)),
        "none" => Ok(None),
        other => Err(usage(format!(
            "flag '--clip-mode': '{}' is not one of hard, gelu, none",
            other.chars().take(20).collect::<String>()
        ))),
    }
}

/// The name `--clip-mode` gives `clipping`.
fn clip_mode_name(clipping: Option<ClipMethod>) -> &'static str {
    match clipping {
        Some(ClipMethod::Hard) => "hard",
        Some(ClipMethod::Gelu) => "gelu",
        None => "none",
    }
}

/// Without clipping, no noise and no `--clip` (`clip_given`).
fn check_clipping(
    clipping: Option<ClipMethod>,
    sigma: f64,
    clip_given: bool,
) -> Result<(), Failure> {
    if clipping.is_none() && sigma != 0.0 {
        return Err(usage(format!(
            "--noise-multiplier = {sigma} needs clipping: with '--clip-mode none' it must be 0"
        )));
    }
    if clipping.is_none() && clip_given {
        return Err(usage(String::from(
            "flag '--clip' has no effect with '--clip-mode none'",
        )));
    }
    Ok(())
}

/// `--momentum` ∈ [0, 1).
fn check_momentum(momentum: f64) -> Result<(), Failure> {
    if !(0.0..1.0).contains(&momentum) {
        return Err(usage(format!(
            "--momentum = {momentum} is out of range: must be in [0, 1)"
        )));
    }
    Ok(())
}

/// `--batch-size` (`None`: the default) >= 1, and not given with the full batch.
fn check_batch_size(batch_size: Option<u64>, sampling: Sampling) -> Result<(), Failure> {
    if batch_size.unwrap_or(defaults::BATCH_SIZE) == 0 {
        return Err(usage(String::from(
            "--batch-size = 0 is out of range: must be >= 1",
        )));
    }
    if sampling == Sampling::FullBatch && batch_size.is_some() {
        return Err(usage(String::from(
            "flag '--batch-size' does not apply to '--sampling full' (the batch is the training set)",
        )));
    }
    Ok(())
}

/// `--epochs`, if given, > 0.
fn check_epochs(epochs: Option<f64>) -> Result<(), Failure> {
    if let Some(e) = epochs {
        check_positive("epochs", e)?;
    }
    Ok(())
}

/// `--steps`, if given, >= 1.
fn check_steps(steps: Option<u64>) -> Result<(), Failure> {
    if steps == Some(0) {
        return Err(usage(String::from(
            "--steps = 0 is out of range: must be >= 1",
        )));
    }
    Ok(())
}

/// A DP-SGD (or plain SGD) run of `train` on a neural model, validated: what `train`'s flags
/// give ([`TrainConfig::parse`]) or a client builds and checks ([`TrainConfig::checked`]).
/// `None` stands for a flag not given (its default, which may depend on the data).
pub(crate) struct TrainConfig {
    /// `mlp`, `mnist-convnet` or `cifar-convnet`.
    pub(crate) model: String,
    /// `embedded`, an IDX directory or a CIFAR-10 file.
    pub(crate) data: String,
    /// Training examples.
    pub(crate) train_size: Option<usize>,
    /// Test examples.
    pub(crate) test_size: Option<usize>,
    /// T (else from the epochs).
    pub(crate) steps: Option<u64>,
    /// Epochs (when T is not given).
    pub(crate) epochs: Option<f64>,
    /// B (not with the full batch).
    pub(crate) batch_size: Option<u64>,
    /// σ.
    pub(crate) noise_multiplier: f64,
    /// C (not without clipping).
    pub(crate) clip: Option<f64>,
    /// The clipping (`None`: `--clip-mode none`).
    pub(crate) clipping: Option<ClipMethod>,
    /// The learning rate.
    pub(crate) lr: f64,
    /// μ.
    pub(crate) momentum: f64,
    /// The weight decay.
    pub(crate) weight_decay: f64,
    /// How batches are drawn.
    pub(crate) sampling: Sampling,
    /// δ of ε.
    pub(crate) delta: f64,
    /// The seed.
    pub(crate) seed: u64,
    /// `--fil` and its options.
    pub(crate) fil: Option<FilOptions>,
    /// No progress on stderr.
    pub(crate) quiet: bool,
}

impl TrainConfig {
    /// The run of `train`'s flags (for a neural `model`), each value checked as its flag is
    /// read, before the data are loaded.
    fn parse(f: &Flags, model: &str, data: &str, delta: f64, seed: u64) -> Result<Self, Failure> {
        f.exclusive("steps", "epochs")?;
        let sigma = f
            .f64("noise-multiplier")?
            .unwrap_or(defaults::NOISE_MULTIPLIER);
        check_non_negative("noise_multiplier", sigma)?;
        let clip = f.f64("clip")?;
        check_positive("clip", clip.unwrap_or(defaults::CLIP))?;
        let clipping = parse_clip_mode(f.raw("clip-mode"))?;
        check_clipping(clipping, sigma, clip.is_some())?;
        let lr = f.f64("lr")?.unwrap_or(defaults::LR);
        check_positive("lr", lr)?;
        let momentum = f.f64("momentum")?.unwrap_or(defaults::MOMENTUM);
        check_momentum(momentum)?;
        let weight_decay = f.f64("weight-decay")?.unwrap_or(0.0);
        check_non_negative("weight_decay", weight_decay)?;
        let sampling = parse_sampling(f)?;
        let batch_size = f.u64("batch-size")?;
        check_batch_size(batch_size, sampling)?;
        let epochs = f.f64("epochs")?;
        check_epochs(epochs)?;
        let steps = f.u64("steps")?;
        check_steps(steps)?;
        let fil = FilOptions::parse(f, sigma, sampling)?;
        let config = TrainConfig {
            model: String::from(model),
            data: String::from(data),
            train_size: None,
            test_size: None,
            steps,
            epochs,
            batch_size,
            noise_multiplier: sigma,
            clip,
            clipping,
            lr,
            momentum,
            weight_decay,
            sampling,
            delta,
            seed,
            fil,
            quiet: f.has("quiet"),
        };
        match (size_flag(f, "train-size"), size_flag(f, "test-size")) {
            (Ok(train_size), Ok(test_size)) => Ok(TrainConfig {
                train_size,
                test_size,
                ..config
            }),
            (Err(e), _) | (Ok(_), Err(e)) => {
                // the sizes are read once the data are loaded (their defaults depend on
                // them): the data's and the model's errors come first
                config.load()?;
                Err(e)
            }
        }
    }

    /// The run, checked as `train` checks its flags (in the same order, with the same
    /// messages).
    pub(crate) fn checked(self) -> Result<Self, Failure> {
        check_model(&self.model)?;
        if self.model == "logreg" {
            return Err(usage(String::from(LOGREG_FIL)));
        }
        check_open_unit("delta", self.delta)?;
        if self.steps.is_some() && self.epochs.is_some() {
            return Err(usage(String::from(
                "flags '--steps' and '--epochs' exclude each other",
            )));
        }
        check_non_negative("noise_multiplier", self.noise_multiplier)?;
        check_positive("clip", self.clip_norm())?;
        check_clipping(self.clipping, self.noise_multiplier, self.clip.is_some())?;
        check_positive("lr", self.lr)?;
        check_momentum(self.momentum)?;
        check_non_negative("weight_decay", self.weight_decay)?;
        check_batch_size(self.batch_size, self.sampling)?;
        check_epochs(self.epochs)?;
        check_steps(self.steps)?;
        if let Some(o) = &self.fil {
            o.check(self.noise_multiplier, self.sampling)?;
        }
        Ok(self)
    }

    /// C (its default when not given).
    fn clip_norm(&self) -> f64 {
        self.clip.unwrap_or(defaults::CLIP)
    }

    /// The data and the model, checked against each other.
    fn load(&self) -> Result<(Dataset, Sequential), Failure> {
        let data = load_data(&self.data)?;
        let model: Sequential = match self.model.as_str() {
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
        Ok((data, model))
    }

    /// The training and test sets: the sizes given, or the defaults for `data`.
    fn split(&self, data: &Dataset) -> Result<(Dataset, Dataset), Failure> {
        let n_all = data.len();
        let train_size = self
            .train_size
            .unwrap_or(defaults::TRAIN_SIZE.min(n_all.saturating_sub(1)));
        let test_size = self.test_size.unwrap_or(
            n_all
                .saturating_sub(train_size)
                .min(defaults::MAX_TEST_SIZE),
        );
        split(data, train_size, test_size, self.seed)
    }

    /// The batch sampler over `n` training examples.
    fn sampler(&self, n: usize) -> Result<BatchSampler, Failure> {
        let batch_size = self.batch_size.unwrap_or(defaults::BATCH_SIZE);
        let b = usize::try_from(batch_size).unwrap_or(usize::MAX);
        if self.sampling != Sampling::FullBatch && b > n {
            return Err(usage(format!(
                "--batch-size = {batch_size} is out of range: must be <= --train-size ({n})"
            )));
        }
        Ok(BatchSampler::new(self.sampling, n, b)?)
    }

    /// The core's ε of the run (`n` training examples in batches of `sampler`, T steps), or
    /// why there is none.
    fn epsilon(
        &self,
        sampler: &BatchSampler,
        n: usize,
        steps: u64,
    ) -> Result<Result<RunEpsilon, String>, Failure> {
        let sigma = self.noise_multiplier;
        if sigma == 0.0 {
            return Ok(Err(String::from(
                "no epsilon: the noise multiplier is 0, the run is not differentially private",
            )));
        }
        let b = sampler.batch_size() as u64;
        let run = match self.sampling {
            Sampling::Shuffle => Run::shuffled(b, n as u64, sigma, steps)?,
            Sampling::FixedSize => Run::fixed_size(b, n as u64, sigma, steps)?,
            _ => Run::poisson(sampler.sampling_rate(), sigma, steps)?,
        };
        Ok(match run::epsilon_all(&run, self.delta)? {
            Ok(e) => Ok(RunEpsilon(e)),
            Err(why @ Unsupported::Shuffled) => {
                Err(why.reason() + "; use --sampling poisson, fixed or full")
            }
            Err(why) => Err(why.reason()),
        })
    }

    /// Trains: the data loaded and split, ε accounted (a bad combination fails before any
    /// training), the run (with `--fil`, its R runs), the test accuracy and the FIL report.
    pub(crate) fn run(self) -> Result<Trained, Failure> {
        let (data, model) = self.load()?;
        let (train_set, test_set) = self.split(&data)?;
        drop(data);
        let sampler = self.sampler(train_set.len())?;
        let steps = match self.steps {
            Some(t) => t,
            None => sampler.steps_for_epochs(self.epochs.unwrap_or(defaults::EPOCHS))?,
        };
        let dpsgd = DpSgdConfig {
            learning_rate: self.lr,
            momentum: self.momentum,
            weight_decay: self.weight_decay,
            clipping: self.clipping.map(|method| Clipping {
                method,
                norm: self.clip_norm(),
            }),
            noise_multiplier: self.noise_multiplier,
            sampling: self.sampling,
            batch_size: sampler.batch_size(),
            steps,
            seed: self.seed,
        };
        let q = sampler.sampling_rate();
        let epsilon = self.epsilon(&sampler, train_set.len(), steps)?;
        let fil_coords = match &self.fil {
            Some(o) => o.coords_for(train_set.dim())?,
            None => 0,
        };
        let mut progress = Progress {
            quiet: self.quiet,
            start: Instant::now(),
            last_report: 0.0,
            reported: false,
            runs: self.fil.as_ref().map_or(1, |o| o.runs),
            steps,
        };
        let start = progress.start;
        let runs = self.train_runs(&model, &train_set, &dpsgd, fil_coords, &mut progress)?;
        let fil = match (&self.fil, runs.fil_rule) {
            (Some(o), Some(rule)) => Some(FilReport::new(
                o,
                rule,
                fil_coords,
                &runs.fil,
                &train_set,
                self.sampling,
                (q, self.noise_multiplier, steps),
            )?),
            _ => None,
        };
        let test_accuracy = accuracy(&model, &runs.params, &test_set)?;
        let train_loss = train_loss(&runs.metrics);
        let figures = match (&self.fil, &fil) {
            (Some(o), Some(rep)) => self.fil_figures(o, rep, &train_set, steps)?,
            _ => None,
        };
        let seconds = start.elapsed().as_secs_f64();
        Ok(Trained {
            parameters: model.num_params(),
            train_size: train_set.len(),
            test_size: test_set.len(),
            batch_size: sampler.batch_size(),
            sampling_rate: q,
            steps,
            test_accuracy,
            train_loss,
            epsilon,
            fil,
            figures,
            seconds,
            config: self,
        })
    }

    /// Writes the FIL files of `o` (`--fil-out`, `--plot`, `--fil-images`) and returns the
    /// histogram and the image grid if [`FilOptions::figures`] asks for them.
    fn fil_figures(
        &self,
        o: &FilOptions,
        rep: &FilReport,
        train_set: &Dataset,
        steps: u64,
    ) -> Result<Option<(String, String)>, Failure> {
        // "full batch", not "full sampling", and σ to 6 digits as the report page rounds it
        // (issue 43: the page's FIL figures come from here)
        let sampling = match self.sampling {
            Sampling::FullBatch => String::from("full batch"),
            s => format!("{} sampling", s.name()),
        };
        let what = format!(
            "{} on {}, σ = {}, {sampling}, T = {steps}",
            self.model,
            self.data,
            sig(self.noise_multiplier, 6, Side::Nearest),
        );
        rep.write_files(o, train_set, &what)?;
        if !o.figures {
            return Ok(None);
        }
        Ok(Some((rep.histogram(&what), rep.images(train_set, &what)?)))
    }

    /// The R runs (one without `--fil`), run r with seed X + r on the same split: the
    /// parameters and metrics of the first, and each run's FIL.
    fn train_runs<'m>(
        &self,
        model: &'m Sequential,
        train_set: &Dataset,
        dpsgd: &DpSgdConfig,
        fil_coords: usize,
        progress: &mut Progress,
    ) -> Result<Runs<'m>, Failure> {
        let mut first: Option<(Vec<f64>, Metrics<'m>)> = None;
        let mut fil_runs: Vec<Vec<FilExample>> = Vec::new();
        let mut fil_rule: Option<(f64, Option<f64>, Option<f64>)> = None;
        for r in 0..progress.runs {
            let run_seed = self.seed.wrapping_add(r);
            let run_config = DpSgdConfig {
                seed: run_seed,
                ..*dpsgd
            };
            let init_seed = Rng::for_trial(run_seed, INIT_STREAM).next_u64();
            let mut params = model.init_params(init_seed);
            let mut metrics = Metrics::new(model, None)?;
            let mut trainer = DpSgd::new(model, train_set, &run_config)?;
            match &self.fil {
                None => progress.run(r, &mut trainer, &mut params, &mut metrics)?,
                Some(o) => {
                    let fil_config = FilConfig {
                        mode: FilMode::Trace { coords: fil_coords },
                        kappa: if o.kappa_one {
                            KappaRule::One
                        } else {
                            KappaRule::Subsampled { delta: o.delta }
                        },
                        seed: Rng::for_trial(run_seed, FIL_STREAM).next_u64(),
                    };
                    let mut acc = FilAccountant::new(model, train_set, &run_config, &fil_config)
                        .map_err(fil_failure)?;
                    progress.run(r, &mut trainer, &mut params, &mut (&mut metrics, &mut acc))?;
                    fil_rule = Some((acc.kappa(), acc.step_epsilon(), acc.step_delta()));
                    fil_runs.push(acc.results().map_err(fil_failure)?);
                }
            }
            if first.is_none() {
                first = Some((params, metrics));
            }
        }
        progress.finish();
        let Some((params, metrics)) = first else {
            return Err(Failure::Compute(String::from("no training run")));
        };
        Ok(Runs {
            params,
            metrics,
            fil: fil_runs,
            fil_rule,
        })
    }
}

/// The trainings of one `train` run.
struct Runs<'m> {
    /// The first run's parameters.
    params: Vec<f64>,
    /// The first run's metrics.
    metrics: Metrics<'m>,
    /// The FIL of each run's examples (`--fil`).
    fil: Vec<Vec<FilExample>>,
    /// κ, the per-step ε and δ of the FIL accountant (`--fil`).
    fil_rule: Option<(f64, Option<f64>, Option<f64>)>,
}

/// The mean per-example loss over the last (up to) 10 % of the steps.
fn train_loss(metrics: &Metrics<'_>) -> f64 {
    let tail = (metrics.history.len() / 10).max(1);
    let (mut loss_sum, mut count) = (0.0, 0usize);
    for r in metrics.history.iter().rev().take(tail) {
        if r.batch_size > 0 {
            loss_sum += r.batch_loss * r.batch_size as f64;
            count += r.batch_size;
        }
    }
    if count > 0 {
        loss_sum / count as f64
    } else {
        f64::NAN
    }
}

/// What a [`TrainConfig`] run gives: the run as trained, its test accuracy, training loss
/// and ε, with `--fil` its FIL report (and, when asked, its figures); `train` prints it by
/// [`Trained::to_json`] or [`Trained::text`].
pub(crate) struct Trained {
    /// The run's configuration.
    config: TrainConfig,
    /// The model's parameter count.
    parameters: usize,
    /// Training examples.
    train_size: usize,
    /// Test examples.
    test_size: usize,
    /// B.
    batch_size: usize,
    /// q.
    sampling_rate: f64,
    /// T.
    steps: u64,
    /// The first run's test accuracy.
    test_accuracy: f64,
    /// The first run's mean training loss over its last 10 % of steps.
    train_loss: f64,
    /// ε, or why there is none.
    epsilon: Result<RunEpsilon, String>,
    /// The FIL report (`--fil`).
    fil: Option<FilReport>,
    /// The FIL histogram and image grid as SVG text ([`FilOptions::figures`]).
    figures: Option<(String, String)>,
    /// The wall time of the trainings and the FIL report.
    seconds: f64,
}

impl Trained {
    /// The FIL histogram (`--plot`'s figure), when the figures were asked for.
    pub(crate) fn histogram(&self) -> Option<&str> {
        self.figures.as_ref().map(|(h, _)| h.as_str())
    }

    /// The FIL image grid (`--fil-images`' figure), when the figures were asked for.
    pub(crate) fn images(&self) -> Option<&str> {
        self.figures.as_ref().map(|(_, i)| i.as_str())
    }

    /// The median per-example MSE bound of the FIL report (`None` without one, or when no
    /// example was sampled).
    pub(crate) fn fil_mse_bound_median(&self) -> Option<f64> {
        self.fil.as_ref().and_then(|r| r.bounds).map(|b| b.1)
    }

    /// The object `train --json` prints (with its wall time `seconds` when `with_seconds`).
    pub(crate) fn to_json(&self, with_seconds: bool) -> Object {
        let c = &self.config;
        let mut o = Object::new();
        o.str("command", "train")
            .str("model", &c.model)
            .str("data", &c.data)
            .int("parameters", self.parameters as u64)
            .int("train_size", self.train_size as u64)
            .int("test_size", self.test_size as u64)
            .str("sampling", c.sampling.name())
            .int("batch_size", self.batch_size as u64)
            .num("sampling_rate", self.sampling_rate)
            .int("steps", self.steps)
            .num("noise_multiplier", c.noise_multiplier);
        if c.clipping.is_some() {
            o.num("clip", c.clip_norm());
        } else {
            o.put("clip", Value::Null);
        }
        o.str("clip_mode", clip_mode_name(c.clipping))
            .num("lr", c.lr)
            .num("momentum", c.momentum)
            .num("weight_decay", c.weight_decay)
            .int("seed", c.seed)
            .num("delta", c.delta)
            .num("test_accuracy", self.test_accuracy)
            .num("train_loss", self.train_loss);
        match &self.epsilon {
            Ok(e) => e.put_json(&mut o),
            Err(note) => {
                o.put("epsilon_rdp", Value::Null)
                    .put("epsilon_pld", Value::Null)
                    .str("epsilon_note", note);
            }
        }
        if let Some(rep) = &self.fil {
            rep.put_json(&mut o);
        }
        if with_seconds {
            o.num("seconds", self.seconds);
        }
        o
    }

    /// What `train` prints without `--json`.
    pub(crate) fn text(&self) -> String {
        let c = &self.config;
        let sigma = c.noise_multiplier;
        let mut t = format!(
            "reconbound train: {} ({} parameters) on {}: {} training / {} test examples\n",
            c.model, self.parameters, c.data, self.train_size, self.test_size
        );
        let clip_text = match c.clipping {
            Some(_) => format!("clip {} C = {}", clip_mode_name(c.clipping), c.clip_norm()),
            None => String::from("no clipping"),
        };
        t.push_str(&format!(
            "  {} SGD: {} sampling, q = {}, B = {}, {} steps, σ = {sigma}, {clip_text}, lr {}, momentum {}, weight decay {}, seed {}\n",
            if sigma > 0.0 { "DP" } else { "non-private" },
            c.sampling.name(),
            sig(self.sampling_rate, 6, Side::Nearest),
            self.batch_size,
            self.steps,
            c.lr,
            c.momentum,
            c.weight_decay,
            c.seed,
        ));
        t.push_str(&format!(
            "  test accuracy                {}\n  training loss (last 10 %)    {}\n",
            sig(self.test_accuracy, 6, Side::Nearest),
            sig(self.train_loss, 6, Side::Nearest)
        ));
        match &self.epsilon {
            Ok(e) => t.push_str(&e.text(c.delta)),
            Err(note) => t.push_str(&format!("  ε                            -   ({note})\n")),
        }
        if let (Some(o), Some(rep)) = (&c.fil, &self.fil) {
            t.push_str(&rep.text(o));
        }
        t.push_str(&format!(
            "  wall time                    {:.2} s\n",
            self.seconds
        ));
        t
    }
}

/// The core's ε of a run ([`run::epsilon_all`]), rendered for `train`.
struct RunEpsilon(run::RunEpsilon);

/// What `train` says when the PLD has no certified value for the run.
fn pld_note(why: &Unsupported) -> String {
    match why {
        Unsupported::NoCertifiedValue(_) | Unsupported::PldTailAboveDelta { .. } => {
            String::from(PLD_NOTE)
        }
        other => other.reason(),
    }
}

impl RunEpsilon {
    fn put_json(&self, o: &mut Object) {
        let e = &self.0;
        o.num("epsilon_rdp", e.rdp.epsilon)
            .num("best_order", e.rdp.order)
            .num("epsilon_rdp_mironov", e.rdp_mironov.epsilon)
            .num("best_order_mironov", e.rdp_mironov.order)
            .str("adjacency", e.adjacency.as_str())
            .str("epsilon_analysis", &e.analysis);
        put_pld(o, &e.pld);
    }

    fn text(&self, delta: f64) -> String {
        let e = &self.0;
        let mut t = format!(
            "  ε(δ = {delta:e}) by RDP       {}   (upper bound, {} adjacency; order α = {}; Mironov's conversion: {}; {})\n",
            sig(e.rdp.epsilon, 6, Side::Up),
            e.adjacency.as_str(),
            sig(e.rdp.order, 4, Side::Nearest),
            sig(e.rdp_mironov.epsilon, 6, Side::Up),
            e.analysis,
        );
        t.push_str(&pld_line(delta, &e.pld));
        t
    }
}

const PLD_NOTE: &str = "the PLD accountant's grid cannot resolve an epsilon this large";

/// `epsilon_pld` and `epsilon_pld_lower`, or `epsilon_pld: null` and the note.
fn put_pld(o: &mut Object, p: &Result<pld::Estimate, Unsupported>) {
    match p {
        Ok(p) => {
            o.num("epsilon_pld", p.value)
                .num("epsilon_pld_lower", p.lower);
        }
        Err(why) => {
            o.put("epsilon_pld", Value::Null)
                .str("epsilon_pld_note", &pld_note(why));
        }
    }
}

/// The PLD line of the text output.
fn pld_line(delta: f64, p: &Result<pld::Estimate, Unsupported>) -> String {
    match p {
        Ok(p) => format!(
            "  ε(δ = {delta:e}) by PLD       {}   (certified upper bound; true ε ≥ {})\n",
            sig(p.value, 6, Side::Up),
            sig(p.lower, 6, Side::Down)
        ),
        Err(why) => format!("  ε(δ = {delta:e}) by PLD       -   ({})\n", pld_note(why)),
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
            reconbound::Error::InvalidParameter {
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
    let e_pld = run::pld_epsilon(&Run::full_batch(multiplier, 1)?, delta)?;
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
        put_pld(&mut o, &e_pld);
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
        pld_line(delta, &e_pld)
    ))
}

/// Training steps with progress on stderr (unless `--quiet`): one line, rewritten about once a
/// second, ended by [`Progress::finish`].
struct Progress {
    quiet: bool,
    start: Instant,
    last_report: f64,
    reported: bool,
    runs: u64,
    steps: u64,
}

impl Progress {
    /// Run `steps` steps of `trainer` on `params`, observed by `observer`, as run `r`.
    fn run<O: Observer + ?Sized>(
        &mut self,
        r: u64,
        trainer: &mut DpSgd<'_>,
        params: &mut [f64],
        observer: &mut O,
    ) -> Result<(), Failure> {
        let steps = self.steps;
        for t in 0..steps {
            trainer.step(params, observer)?;
            let elapsed = self.start.elapsed().as_secs_f64();
            if !self.quiet && elapsed >= 1.0 && elapsed - self.last_report >= 1.0 {
                self.last_report = elapsed;
                self.reported = true;
                let run = if self.runs > 1 {
                    format!("run {}/{}, ", r + 1, self.runs)
                } else {
                    String::new()
                };
                let mut err = std::io::stderr();
                let _ = write!(
                    err,
                    "\rtrain: {run}step {}/{steps} ({:.0} %), {elapsed:.1} s",
                    t + 1,
                    100.0 * (t + 1) as f64 / steps as f64
                );
                let _ = err.flush();
            }
        }
        Ok(())
    }

    fn finish(&self) {
        if self.reported {
            let mut err = std::io::stderr();
            let _ = writeln!(err);
        }
    }
}

/// The `--fil` options of a run, checked before the data are loaded.
pub(crate) struct FilOptions {
    /// K of `--fil-coords` (`None`: min(50, d); checked against d once the data are loaded).
    pub(crate) coords: Option<usize>,
    /// R of `--fil-runs`.
    pub(crate) runs: u64,
    /// κ = 1 (`--fil-kappa one`, the default under shuffled epochs), else the subsampled κ.
    pub(crate) kappa_one: bool,
    /// `--fil-delta` (`None`: 1/(n·T)).
    pub(crate) delta: Option<f64>,
    /// `--fil-out`.
    pub(crate) csv: Option<String>,
    /// `--plot`.
    pub(crate) plot: Option<String>,
    /// `--fil-images`.
    pub(crate) images: Option<String>,
    /// The histogram and the image grid returned as SVG text ([`Trained::histogram`],
    /// [`Trained::images`]).
    pub(crate) figures: bool,
}

/// With `--fil`, σ > 0.
fn check_fil_sigma(sigma: f64) -> Result<(), Failure> {
    if sigma <= 0.0 {
        return Err(usage(format!(
            "--noise-multiplier = {sigma} is out of range with '--fil': must be > 0 (without noise the Fisher information is unbounded)"
        )));
    }
    Ok(())
}

/// `--fil-coords` >= 1 (and <= d: [`FilOptions::coords_for`]).
fn check_fil_coords(coords: Option<usize>) -> Result<(), Failure> {
    if coords == Some(0) {
        return Err(usage(String::from(
            "--fil-coords = 0 is out of range: must be in 1..=d (the input dimension)",
        )));
    }
    Ok(())
}

/// `--fil-runs` in 1..=1000.
fn check_fil_runs(runs: u64) -> Result<(), Failure> {
    if runs == 0 || runs > defaults::MAX_FIL_RUNS {
        return Err(usage(format!(
            "--fil-runs = {runs} is out of range: must be in 1..={}",
            defaults::MAX_FIL_RUNS
        )));
    }
    Ok(())
}

/// The subsampled κ needs independent batches.
fn check_fil_kappa(kappa_one: bool, sampling: Sampling) -> Result<(), Failure> {
    if !kappa_one && sampling == Sampling::Shuffle {
        return Err(usage(String::from(
            "flag '--fil-kappa': 'subsampled' needs independent batches; with '--sampling shuffle' only 'one' is valid",
        )));
    }
    Ok(())
}

/// `--fil-delta`, if given: only with the subsampled κ, in (0, 1).
fn check_fil_delta(delta: Option<f64>, kappa_one: bool) -> Result<(), Failure> {
    match delta {
        None => Ok(()),
        Some(_) if kappa_one => Err(usage(String::from(
            "flag '--fil-delta' applies only to '--fil-kappa subsampled'",
        ))),
        Some(p) => check_open_unit("fil_delta", p)
            .map(|_| ())
            .map_err(Failure::from),
    }
}

/// An output file of `--name`, written after training: its folder must exist and the file
/// be writable.
fn check_fil_path(name: &str, p: &str) -> Result<(), Failure> {
    if p.is_empty() {
        return Err(usage(format!("flag '--{name}' needs a file name")));
    }
    let dir = std::path::Path::new(p).parent();
    if let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(usage(format!(
                "--{name}: cannot write '{}': its folder does not exist",
                printable(p)
            )));
        }
    }
    super::output::check_writable(name, p)
}

impl FilOptions {
    /// `None` without `--fil`; otherwise its options, each checked as its flag is read.
    fn parse(f: &Flags, sigma: f64, sampling: Sampling) -> Result<Option<Self>, Failure> {
        if !f.has("fil") {
            return Ok(None);
        }
        check_fil_sigma(sigma)?;
        let coords = match f.u64("fil-coords")? {
            None => None,
            Some(k) => Some(usize::try_from(k).map_err(|_| {
                usage(format!(
                    "--fil-coords = {k} is out of range: must be in 1..=d (the input dimension)"
                ))
            })?),
        };
        check_fil_coords(coords)?;
        let runs = f.u64("fil-runs")?.unwrap_or(1);
        check_fil_runs(runs)?;
        let kappa_one = match f.raw("fil-kappa") {
            None => sampling == Sampling::Shuffle,
            Some("one") => true,
            Some("subsampled") => false,
            Some(other) => {
                return Err(usage(format!(
                    "flag '--fil-kappa': '{}' is not one of one, subsampled",
                    other
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(20)
                        .collect::<String>()
                )))
            }
        };
        check_fil_kappa(kappa_one, sampling)?;
        let delta = f.f64("fil-delta")?;
        check_fil_delta(delta, kappa_one)?;
        // Output files are written after training: check their folders first.
        let path = |name: &str| -> Result<Option<String>, Failure> {
            let Some(p) = f.raw(name) else {
                return Ok(None);
            };
            check_fil_path(name, p)?;
            Ok(Some(String::from(p)))
        };
        Ok(Some(FilOptions {
            coords,
            runs,
            kappa_one,
            delta,
            csv: path("fil-out")?,
            plot: path("plot")?,
            images: path("fil-images")?,
            figures: false,
        }))
    }

    /// The options checked as [`FilOptions::parse`] checks them, for a run at σ with
    /// `sampling`.
    fn check(&self, sigma: f64, sampling: Sampling) -> Result<(), Failure> {
        check_fil_sigma(sigma)?;
        check_fil_coords(self.coords)?;
        check_fil_runs(self.runs)?;
        check_fil_kappa(self.kappa_one, sampling)?;
        check_fil_delta(self.delta, self.kappa_one)?;
        for (name, p) in [
            ("fil-out", &self.csv),
            ("plot", &self.plot),
            ("fil-images", &self.images),
        ] {
            if let Some(p) = p {
                check_fil_path(name, p)?;
            }
        }
        Ok(())
    }

    /// K for data of dimension `d` (the default min(50, d)).
    fn coords_for(&self, d: usize) -> Result<usize, Failure> {
        let k = self.coords.unwrap_or(defaults::FIL_COORDS.min(d));
        if k > d {
            return Err(usage(format!(
                "--fil-coords = {k} is out of range: must be in 1..={d} (the input dimension)"
            )));
        }
        Ok(k)
    }
}

/// Errors of the FIL accountant, named by the `train` flags that set them.
fn fil_failure(e: reconbound::Error) -> Failure {
    let flag = match e.parameter() {
        Some("delta") => Some("--fil-delta"),
        Some("kappa") => Some("--fil-kappa"),
        Some("fil_coords" | "coords") => Some("--fil-coords"),
        _ => None,
    };
    match (flag, e) {
        (
            Some(flag),
            reconbound::Error::InvalidParameter {
                value, expected, ..
            },
        ) => usage(format!(
            "{flag} = {} is out of range: must be {expected}",
            super::failure::shown(value)
        )),
        (
            Some(flag),
            reconbound::Error::InvalidCount {
                value, expected, ..
            },
        ) => usage(format!(
            "{flag} = {value} is out of range: must be {expected}"
        )),
        (_, e) => Failure::from(e),
    }
}

/// One training example's FIL over the runs.
struct FilRow {
    index: usize,
    label: u32,
    /// Σ over the runs of the steps with the example in the batch.
    steps_total: u64,
    /// κ Σ_t Tr(I_t) (mean over the runs).
    trace: f64,
    dfil: f64,
    mse_bound: Option<f64>,
    /// (sd, min, max) of the trace over the runs, for R > 1.
    spread: Option<(f64, f64, f64)>,
}

/// What `--fil` reports.
struct FilReport {
    kappa: f64,
    step_epsilon: Option<f64>,
    step_delta: Option<f64>,
    coords: usize,
    dim: usize,
    runs: u64,
    rows: Vec<FilRow>,
    sampled: usize,
    /// (min, median (lower middle), max) of the per-example bounds.
    bounds: Option<(f64, f64, f64)>,
    dfil_max: f64,
    relative_sd_median: Option<f64>,
    /// The RDP (Thm 1) comparison, or why there is none.
    rdp: Result<RdpMse, String>,
}

impl FilReport {
    fn new(
        o: &FilOptions,
        (kappa, step_epsilon, step_delta): (f64, Option<f64>, Option<f64>),
        coords: usize,
        runs: &[Vec<FilExample>],
        train_set: &Dataset,
        sampling: Sampling,
        (q, sigma, steps): (f64, f64, u64),
    ) -> Result<Self, Failure> {
        let dim = train_set.dim();
        let n = train_set.len();
        let mut steps_total = std::vec![0u64; n];
        for run in runs {
            for ex in run {
                if let Some(s) = steps_total.get_mut(ex.index) {
                    *s = s.saturating_add(ex.steps_in_batch);
                }
            }
        }
        let steps_of = |i: usize| steps_total.get(i).copied().unwrap_or(0);
        let rows: Vec<FilRow> = match runs {
            [one] => one
                .iter()
                .map(|ex| FilRow {
                    index: ex.index,
                    label: ex.label,
                    steps_total: steps_of(ex.index),
                    trace: ex.trace,
                    dfil: ex.dfil,
                    mse_bound: ex.mse_bound,
                    spread: None,
                })
                .collect(),
            _ => average_runs(runs, dim)
                .map_err(fil_failure)?
                .iter()
                .map(|a| FilRow {
                    index: a.index,
                    label: a.label,
                    steps_total: steps_of(a.index),
                    trace: a.mean_trace,
                    dfil: a.dfil,
                    mse_bound: a.mse_bound,
                    spread: Some((a.std_trace, a.min_trace, a.max_trace)),
                })
                .collect(),
        };
        let sampled = rows.iter().filter(|r| r.steps_total > 0).count();
        let mut bounds: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.mse_bound)
            .filter(|b| b.is_finite())
            .collect();
        bounds.sort_by(f64::total_cmp);
        let summary = match (bounds.first(), bounds.last()) {
            (Some(&lo), Some(&hi)) => {
                let mid = bounds.get((bounds.len() - 1) / 2).copied().unwrap_or(lo);
                Some((lo, mid, hi))
            }
            _ => None,
        };
        let dfil_max = rows.iter().map(|r| r.dfil).fold(0.0, f64::max);
        let relative_sd_median = if o.runs > 1 {
            let mut rel: Vec<f64> = rows
                .iter()
                .filter(|r| r.trace > 0.0)
                .filter_map(|r| r.spread.map(|(sd, _, _)| sd / r.trace))
                .filter(|x| x.is_finite())
                .collect();
            rel.sort_by(f64::total_cmp);
            rel.get(rel.len().saturating_sub(1) / 2).copied()
        } else {
            None
        };
        let rdp = if sampling.has_privacy_accounting() {
            match rdp_mse_lower_bound(q, sigma, steps, 1.0) {
                Ok(v) => Ok(v),
                Err(Failure::Compute(msg)) => Err(format!("not available: {msg}")),
                Err(e) => return Err(e),
            }
        } else {
            Err(format!(
                "not available: the Thm 1 comparison is implemented for Poisson and full-batch sampling only, not for {} sampling",
                if sampling == Sampling::Shuffle {
                    "shuffled-epoch"
                } else {
                    "fixed-size"
                }
            ))
        };
        Ok(FilReport {
            kappa,
            step_epsilon,
            step_delta,
            coords,
            dim,
            runs: o.runs,
            rows,
            sampled,
            bounds: summary,
            dfil_max,
            relative_sd_median,
            rdp,
        })
    }

    fn put_json(&self, o: &mut Object) {
        let opt = |x: Option<f64>| x.map_or(Value::Null, Value::Num);
        o.num("fil_kappa", self.kappa)
            .put("fil_step_epsilon", opt(self.step_epsilon))
            .put("fil_step_delta", opt(self.step_delta))
            .int("fil_coords", self.coords as u64)
            .int("fil_runs", self.runs)
            .int("fil_examples_sampled", self.sampled as u64)
            .put("fil_mse_bound_min", opt(self.bounds.map(|b| b.0)))
            .put("fil_mse_bound_median", opt(self.bounds.map(|b| b.1)))
            .put("fil_mse_bound_max", opt(self.bounds.map(|b| b.2)))
            .num("fil_dfil_max", self.dfil_max);
        if self.runs > 1 {
            o.put("fil_trace_relative_sd_median", opt(self.relative_sd_median));
        }
        match &self.rdp {
            Ok(r) => {
                o.num("mse_lower_bound_rdp", r.mse);
            }
            Err(note) => {
                o.put("mse_lower_bound_rdp", Value::Null)
                    .str("mse_lower_bound_rdp_note", note);
            }
        }
    }

    fn text(&self, o: &FilOptions) -> String {
        let mut t = String::new();
        let exact = self.coords == self.dim;
        t.push_str(&format!(
            "  Fisher information leakage (Guo et al. 2022 Alg. 1): Tr(I) {} per example and step, {} run{}\n",
            if exact {
                format!("exact (all d = {} coordinates)", self.dim)
            } else {
                format!("from K = {} of d = {} coordinates", self.coords, self.dim)
            },
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        ));
        let rule = match (self.step_epsilon, self.step_delta) {
            (Some(e), Some(d)) => format!(
                "Thm 4 Eq. 3: per-step ε = {} exceeded with probability ≤ δ = {}",
                sig(e, 4, Side::Up),
                sig(d, 4, Side::Nearest)
            ),
            (None, Some(_)) => String::from("q = 1: every example is in every batch"),
            _ if o.kappa_one => String::from("Thm 4 Eq. 2: κ = 1"),
            _ => String::from("κ = 1"),
        };
        line(&mut t, "κ", &sig(self.kappa, 6, Side::Up), &rule);
        line(
            &mut t,
            "examples ever sampled",
            &format!("{} of {}", self.sampled, self.rows.len()),
            "",
        );
        match self.bounds {
            Some((lo, mid, hi)) => line(
                &mut t,
                "per-example MSE ≥ d/Tr(I)",
                &format!(
                    "min {}, median {}, max {}",
                    sig(lo, 4, Side::Down),
                    sig(mid, 4, Side::Down),
                    sig(hi, 4, Side::Down)
                ),
                "Thm 2, unbiased reconstructions; rounded down",
            ),
            None => line(
                &mut t,
                "per-example MSE ≥ d/Tr(I)",
                "-",
                "no example was sampled",
            ),
        }
        line(
            &mut t,
            "dFIL η̄² = Tr(I)/d",
            &format!("max {}", sig(self.dfil_max, 4, Side::Up)),
            "rounded up",
        );
        match &self.rdp {
            Ok(r) => line(
                &mut t,
                "MSE ≥ by RDP (Thm 1)",
                &sig(r.mse, 4, Side::Down),
                &format!(
                    "(2, {})-RDP under substitution, data in [0, 1]^d; rounded down",
                    sig(r.rdp2_sub, 4, Side::Up)
                ),
            ),
            Err(note) => line(&mut t, "MSE ≥ by RDP (Thm 1)", "-", note),
        }
        if let Some(rel) = self.relative_sd_median {
            line(
                &mut t,
                &format!("spread over {} runs", self.runs),
                &sig(rel, 3, Side::Nearest),
                "median over examples of sd/mean of Tr(I)",
            );
        }
        t.push_str(&format!(
            "  note: estimates, not certified bounds: the FIL summed over the realised run is an unbiased estimate (Guo et al. Thm 3){}\n",
            if exact { "" } else { ", and so is the trace from K < d coordinates" }
        ));
        for (what, path) in [
            ("table", &o.csv),
            ("histogram", &o.plot),
            ("images", &o.images),
        ] {
            if let Some(p) = path {
                t.push_str(&format!("  wrote FIL {what} to {}\n", printable(p)));
            }
        }
        t
    }

    fn csv(&self) -> String {
        let mut s = String::from("index,label,steps_in_batch,trace,dfil,mse_bound");
        if self.runs > 1 {
            s.push_str(",trace_sd,trace_min,trace_max");
        }
        s.push('\n');
        for r in &self.rows {
            let steps = if self.runs == 1 {
                format!("{}", r.steps_total)
            } else {
                number(r.steps_total as f64 / self.runs as f64)
            };
            s.push_str(&format!(
                "{},{},{steps},{},{},{}",
                r.index,
                r.label,
                number(r.trace),
                number(r.dfil),
                r.mse_bound.map(number).unwrap_or_default()
            ));
            if let Some((sd, lo, hi)) = r.spread {
                s.push_str(&format!(",{},{},{}", number(sd), number(lo), number(hi)));
            }
            s.push('\n');
        }
        s
    }

    fn histogram(&self, what: &str) -> String {
        let values: Vec<f64> = self.rows.iter().filter_map(|r| r.mse_bound).collect();
        let mut markers = Vec::new();
        if let Ok(r) = &self.rdp {
            markers.push(svg::Marker {
                value: r.mse,
                label: format!("RDP Thm 1 bound ({})", sig(r.mse, 3, Side::Down)),
            });
        }
        markers.push(svg::Marker {
            value: 1.0,
            label: String::from("MSE = 1 (perfect privacy)"),
        });
        svg::histogram_svg(&svg::HistogramPlot {
            title: "Per-example MSE lower bounds d/Tr(I) from the Fisher information leakage",
            subtitle: what,
            x_label: "MSE lower bound for unbiased reconstruction (Guo et al. 2022 Thm 2)",
            y_label: "training examples",
            values: &values,
            bins: defaults::FIL_PLOT_BINS,
            markers: &markers,
        })
    }

    fn images(&self, train_set: &Dataset, what: &str) -> Result<String, Failure> {
        let mut sampled: Vec<&FilRow> = self.rows.iter().filter(|r| r.steps_total > 0).collect();
        // Highest dFIL first; ties by index, so the order is deterministic.
        sampled.sort_by(|a, b| b.dfil.total_cmp(&a.dfil).then(a.index.cmp(&b.index)));
        let k = defaults::FIL_IMAGES_PER_ROW;
        let pick =
            |rows: &mut dyn Iterator<Item = &&FilRow>| -> Result<Vec<svg::GridImage<'_>>, Failure> {
                let mut out = Vec::new();
                for r in rows.take(k) {
                    let (pixels, _) = train_set.example(r.index)?;
                    out.push(svg::GridImage {
                        pixels,
                        caption: format!("dFIL {}, #{}", sig(r.dfil, 3, Side::Up), r.index),
                    });
                }
                Ok(out)
            };
        let highest = pick(&mut sampled.iter())?;
        let lowest = pick(&mut sampled.iter().rev())?;
        svg::image_grid_svg(&svg::ImageGrid {
            title: "Training examples with the highest and lowest dFIL",
            subtitle: what,
            shape: train_set.shape(),
            rows: std::vec![
                svg::GridRow {
                    label: String::from("highest dFIL"),
                    images: highest,
                },
                svg::GridRow {
                    label: String::from("lowest dFIL"),
                    images: lowest,
                },
            ],
        })
        .map_err(|e| usage(format!("--fil-images: {e}")))
    }

    /// Write the files asked for by `--fil-out`, `--plot`, `--fil-images`.
    fn write_files(&self, o: &FilOptions, train_set: &Dataset, what: &str) -> Result<(), Failure> {
        if let Some(p) = &o.csv {
            write_file("fil-out", p, &self.csv())?;
        }
        if let Some(p) = &o.plot {
            write_file("plot", p, &self.histogram(what))?;
        }
        if let Some(p) = &o.images {
            write_file("fil-images", p, &self.images(train_set, what)?)?;
        }
        Ok(())
    }
}

fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

fn write_file(flag: &str, path: &str, text: &str) -> Result<(), Failure> {
    super::output::write_whole(flag, path, text)
}

/// `  label` padded to the value column of the `train` report, then `value` and `(note)`.
fn line(t: &mut String, label: &str, value: &str, note: &str) {
    t.push_str("  ");
    t.push_str(label);
    // Combining marks (the bar of η̄) take no column.
    let width = label
        .chars()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .count();
    for _ in width..29 {
        t.push(' ');
    }
    t.push_str(value);
    if !note.is_empty() {
        t.push_str("   (");
        t.push_str(note);
        t.push(')');
    }
    t.push('\n');
}
