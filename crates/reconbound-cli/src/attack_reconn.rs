//! `reconbound attack reconn`: the RecoNN attack of Balle, Cherubin & Hayes 2022 (§IV–VI) on
//! MNIST — shadow models, a reconstructor network, released models — judged against the NN
//! oracle and the mean image, and under DP against the ReRo bound γ at κ(η).

use super::args::{parse, printable, switch as s, value as v, Flags, Spec};
use super::failure::{shown, Failure};
use super::fil_logreg::row;
use super::format::{sig, Side};
use super::json::{self, Object, Value};
use super::output::{check_writable, write_whole, Progress};
use super::svg;
use reconbound::attacks::reconn::experiment::{
    attack_released, released_models, train_shadows, Control, Features, ReconnConfig,
    ReconnOutcome, ReconnVerdict, ShadowModels, LOGIT_PROBES,
};
use reconbound::attacks::reconn::reconstructor::{Precision, ReconstructorConfig};
use reconbound::attacks::reconn::setting::{Batching, Init, Privacy, Splits, Training};
use reconbound::attacks::reconn::shadow_set::{ShadowModel, ShadowSetSpec};
use reconbound::attacks::trial::{default_threads, Shard};
use reconbound::data::Dataset;
use std::format;
use std::string::String;
use std::sync::Mutex;
use std::vec::Vec;

type Out = Result<String, Failure>;

fn usage(msg: String) -> Failure {
    Failure::Usage(super::args::UsageError(msg))
}

/// Documented defaults of `attack reconn`.
mod defaults {
    /// K: shadow models (Balle et al. train 10K–40K; 1,000 already beats the mean image).
    pub const SHADOW_MODELS: u64 = 1000;
    /// R: released models.
    pub const RELEASED: usize = 100;
    /// |D⁻|.
    pub const TRAIN_SIZE: usize = 999;
    /// Hidden units of the reconstructor.
    pub const HIDDEN: usize = 1000;
    /// The reconstructor's learning rate.
    pub const RECONSTRUCTOR_LR: f64 = 1e-3;
    /// The reconstructor's batch size.
    pub const BATCH_SIZE: usize = 64;
    /// The reconstructor's largest number of epochs.
    pub const EPOCHS: usize = 60;
    /// The reconstructor's early-stopping patience (epochs).
    pub const PATIENCE: usize = 10;
    /// δ of the ε points.
    pub const DELTA: f64 = 1e-5;
    /// η of Hayes-style success under DP.
    pub const ETA: f64 = 0.02;
    /// Images shown in the --images grid.
    pub const GRID: usize = 10;
}

/// The 10,000 vendored MNIST digits: `data/mnist-10k` under the working directory, else the
/// repository's copy (the path this binary was built from: the workspace's root, two folders
/// above this crate).
fn default_data() -> String {
    let local = "data/mnist-10k";
    if std::path::Path::new(local).is_dir() {
        return String::from(local);
    }
    String::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist-10k"))
}

const HELP: &str = "\
usage: reconbound attack reconn [--data DIR] [--shadow-models K[,K2,…]] [--released R]
         [--features params|logits] [--noise-multiplier S | --epsilon E1,E2,… [--delta D]]
         [--unknown-init] [--sampling full|poisson --train-batch B [--unknown-sampling-seed]]
         [--train-size N] [--steps T] [--lr R] [--epochs E] [--patience P]
         [--batch-size B] [--hidden H] [--precision f32|f64] [--eta η]
         [--control shuffled-pairs|without-target]
         [--save-shadows FILE | --shadows FILE] [--shard K/M] [--threads J] [--seed X]
         [--json] [--csv FILE] [--plot FILE.svg] [--images FILE.svg] [--quiet]

RecoNN (Balle, Cherubin, Hayes 2022 §IV–VI; Hayes et al. 2023 App. A 'model-based'): the
informed adversary knows D⁻ (N examples), the training algorithm and, unless --unknown-init,
the initialisation θ₀. It trains K shadow models on D⁻ ∪ {z_i}, z_i from its own data D̄,
learns a reconstructor MLP (features → H ReLU → 784 sigmoid, H ≤ 4,000, about 1 GB; loss
MSE + MAE, Adam 1e-3, batches of B, early stopping on a held-out tenth, at most E epochs,
patience P; in f32 as the JAX peer does, or with --precision f64 in f64, its
reconstructions compared in f64 either way) and applies it to R released models trained on
D⁻ ∪ {z_j}, z_j from a split of their own. Every model: MLP 784-10-10 (ELU), full-batch gradient descent, T steps at
learning rate R, non-private or DP-GD (C = 1, noise multiplier S in [0, 1e8], or S
calibrated by RDP to each ε at δ — an ε that needs σ > 1e8 is refused naming --epsilon;
fresh noise per model).
Non-private runs may use Poisson mini-batches of expected size B instead (--sampling poisson,
Balle Fig. 6): the same batches for every model (the adversary knows the sampling seed) or,
with --unknown-sampling-seed, each model its own.
Features: the 7,960 parameters (params) or the logits on the last 200 images of D̄ (logits;
never a shadow target, so K ≤ |D̄| − 200), standardised by the shadow set. One permutation
of the data from the seed splits it into D⁻, D̄ and the released pool (n/10, at most
1,000): disjoint, and independent of K and R.

Judged per target by the MSE per pixel, beside the NN oracle (the closest image of D̄: the
adversary's best guess without the model) and the mean image of D̄; the fraction reconstructed
closer than the NN oracle gets a 95 % Clopper–Pearson interval. Under DP, Hayes-style success
(MSE ≤ η) is shown beside γ at κ(η), κ estimated from D̄ (Hayes et al. 2023 App. J). Each
point ends with a one-line verdict: the attack reconstructs (mean MSE below the mean
image's and the NN-oracle interval above 0), is better than a blind guess only, or fails.
A list of K trains the largest set once and a reconstructor on each prefix (Balle Fig. 5c);
a list of ε trains one shadow set per ε (Fig. 8). --control runs a control that must fail.

Shadow sets: --save-shadows FILE writes the set (with --shard K/M only the models i ≡ K mod M,
and nothing else runs); 'reconbound merge PART… --out FILE' joins parts into the bytes of the
unsharded file; --shadows FILE reuses a set, refused unless it was trained with this data, D⁻,
θ₀ and training configuration.

Every point reports ρλ, the learning rate times the sharpness λ of released model 0 at its
last step: full-batch gradient descent is stable below 2; at 2 (the edge of stability) the
map from a target to its model turns chaotic and the attack can fail. The default T = 200,
lr 0.25 stays below it (ρλ ≤ 1.6 for seeds 0–15); the peer's T = 100, lr 0.5 (Balle et al.,
the JAX run) sits at it for many seeds.

Defaults: --data data/mnist-10k (the vendored 10,000 digits), K = 1000, R = 100, params,
non-private, N = 999, T = 200, lr 0.25, E = 60, P = 10, B = 64, H = 1000, precision f32,
η = 0.02, δ = 1e-5, seed 0.

JSON keys: command, attack, data, data_fingerprint, train_size, steps, lr, init, sampling,
features, precision, released, seed, control (none,
shuffled-pairs or without-target), points (one object per point: shadow_models, epsilon,
noise_multiplier, test_accuracy, mse_mean, mse_median, nn_oracle_mse_mean,
nn_oracle_mse_median, baseline_mse_mean, beats_nn_oracle, beats_nn_oracle_rate,
beats_nn_oracle_lower, beats_nn_oracle_upper, epochs_run, best_epoch, heldout_mse,
sharpness, lr_times_sharpness, eta, kappa, gamma, success,
success_rate, success_lower, success_upper, above_bound); with one point its keys also at the
top level.
CSV (--csv): shadow_models,epsilon,noise_multiplier,index,target,mse,nn_oracle_mse,nn_index,
baseline_mse,beats_nn_oracle.
";

/// `attack reconn --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound attack reconn [--data DIR] [--shadow-models K[,K2,…]] [--released R]
         [--features params|logits] [--noise-multiplier S | --epsilon E1,E2,… [--delta D]]
         [--train-size N] [--steps T] [--lr R] [--epochs E] [--hidden H] [--seed X]
         [--save-shadows FILE | --shadows FILE] [--shard K/M] [--threads J]
         [--json] [--csv FILE] [--plot FILE.svg] [--images FILE.svg] [--quiet]
         (every flag: --help-all)

Can an informed adversary rebuild a training image from the released model? RecoNN (Balle,
Cherubin, Hayes 2022 §IV–VI): knowing N training examples, it trains K shadow models, each on
those plus one image of its own, learns a reconstructor network from a model's parameters (or
logits) to that image, and applies it to R released models. Judged per target against the NN
oracle (the closest image the adversary has) and the mean image, with a one-line verdict;
under DP, Hayes-style success beside γ.

Common flags (defaults in brackets):
  --data DIR            a directory of MNIST IDX files [data/mnist-10k, the vendored digits]
  --shadow-models K     shadow models; a list trains a reconstructor on each prefix [1000]
  --released R          released models attacked [100]
  --noise-multiplier S  DP-GD with noise multiplier S [non-private]; or --epsilon E1,E2,…,
                        σ calibrated by RDP at --delta [1e-5]
  --train-size N        the examples the adversary knows [999]
  --steps T, --lr R     full-batch gradient descent of every model [200, 0.25]
  --hidden H            the reconstructor's hidden units [1000]
  --epochs E            the reconstructor's epochs at most [60]
  --save-shadows FILE | --shadows FILE   write the shadow set, or reuse one
  --json                every number at full precision, as JSON

Example (a one-second smoke run, far too small for the attack to succeed):
  reconbound attack reconn --shadow-models 50 --released 10 --train-size 99 --steps 20 \\
      --hidden 50 --epochs 10
";

/// A progress line per stage (shadow models, reconstructor epochs, released models).
struct Stages {
    quiet: bool,
    prefix: String,
    current: Mutex<Option<(String, Progress)>>,
}

impl Stages {
    fn tick(&self, stage: &str, done: usize, total: usize) {
        let Ok(mut cur) = self.current.lock() else {
            return;
        };
        let same = cur.as_ref().is_some_and(|(s, _)| s == stage);
        if !same {
            if let Some((_, p)) = cur.take() {
                p.finish();
            }
            *cur = Some((
                String::from(stage),
                Progress::new(format!("{}: {stage}", self.prefix), total, self.quiet),
            ));
        }
        if let Some((_, p)) = cur.as_ref() {
            p.tick(done);
        }
    }
    fn finish(&self) {
        if let Ok(mut cur) = self.current.lock() {
            if let Some((_, p)) = cur.take() {
                p.finish();
            }
        }
    }
}

fn count_list(f: &Flags, name: &str, default: u64) -> Result<Vec<u64>, Failure> {
    let Some(raw) = f.raw(name) else {
        return Ok(std::vec![default]);
    };
    let mut out = Vec::new();
    for part in raw.split(',') {
        // the same integers as every other count flag (`20`, `20.0`, `2e1`: issue 31, where
        // `--steps 1e2` was taken and `--shadow-models 20.0` refused)
        let k: u64 = reconbound::text::exact_u64(part.trim()).ok_or_else(|| {
            usage(format!(
                "--{name}: '{}' is not a whole number (a comma-separated list of counts)",
                printable(part)
            ))
        })?;
        out.push(k);
    }
    Ok(out)
}

/// Most hidden units of the reconstructor: its two weight matrices (7,960 × H and H × 784,
/// with Adam's two moments and the gradient: four copies) take about 1 GB at 4,000 in f64
/// (Balle et al. use 1,000); 100,000 would need about 27 GB.
const MAX_HIDDEN: u64 = 4_000;

fn count_in(name: &str, value: u64, lo: u64, hi: u64) -> Result<usize, Failure> {
    if (lo..=hi).contains(&value) {
        Ok(value as usize)
    } else {
        Err(usage(format!(
            "--{name} = {value} is out of range: must be in {lo}..={hi}"
        )))
    }
}

/// One privacy point: (ε, training).
struct Point {
    epsilon: Option<f64>,
    training: Training,
}

/// One measured point: its K, its privacy point and the outcome.
struct Measured {
    k: usize,
    epsilon: Option<f64>,
    sigma: f64,
    outcome: ReconnOutcome,
}

/// The flags of `attack reconn`.
const FLAGS: [Spec; 31] = [
    v("data"),
    v("shadow-models"),
    v("released"),
    v("features"),
    v("noise-multiplier"),
    v("epsilon"),
    v("delta"),
    s("unknown-init"),
    v("sampling"),
    v("train-batch"),
    s("unknown-sampling-seed"),
    v("train-size"),
    v("steps"),
    v("lr"),
    v("epochs"),
    v("patience"),
    v("batch-size"),
    v("hidden"),
    v("precision"),
    v("eta"),
    v("control"),
    v("save-shadows"),
    v("shadows"),
    v("shard"),
    v("threads"),
    v("seed"),
    s("json"),
    v("csv"),
    v("plot"),
    v("images"),
    s("quiet"),
];

/// `reconbound attack reconn …`.
pub(crate) fn reconn(args: &[String]) -> Out {
    let f = parse(args, &FLAGS)?;
    if f.help {
        return Ok(f.help_text("attack reconn", SHORT_HELP, String::from(HELP)));
    }
    let Some(r) = ReconnRun::parse(&f)?.run()? else {
        return Ok(String::new());
    };
    if f.has("json") {
        let mut text = r.to_json().render();
        text.push('\n');
        return Ok(text);
    }
    Ok(r.to_text())
}

/// An `attack reconn` run, validated: the setting, the privacy points and the shadow-model
/// counts to measure, the reconstructor, and where the shadow set and the files go.
pub(crate) struct ReconnRun {
    /// `--data` (the vendored digits by default).
    data: String,
    /// K of each point.
    shadow_models: Vec<usize>,
    /// R: released models.
    released: usize,
    /// What the reconstructor reads of a model.
    features: Features,
    /// The control experiment, if any.
    control: Control,
    /// The training of every model (the non-private setting of the points).
    training: Training,
    /// The privacy points.
    points: Vec<Point>,
    /// The reconstructor network's training.
    reconstructor: ReconstructorConfig,
    /// η of the success under DP.
    eta: f64,
    /// The seed.
    seed: u64,
    /// Threads.
    threads: usize,
    /// `--shard K/M`: train part K of the shadow set.
    shard: Option<Shard>,
    /// `--shadows`: a shadow set to read.
    shadows: Option<String>,
    /// `--save-shadows`: where the shadow set goes.
    save_shadows: Option<String>,
    /// `--csv`.
    csv: Option<String>,
    /// `--plot`.
    plot: Option<String>,
    /// `--images`.
    images: Option<String>,
    /// No progress on stderr.
    quiet: bool,
}

/// The non-private training of `attack reconn`'s defaults: full-batch gradient descent from a
/// known initialisation.
/// T and ρ are the core's [`Training::default`] (ρ = 0.25, T = 200: below the edge of
/// stability, `reconbound::attacks::reconn::stability`).
fn default_training() -> Training {
    Training {
        d_minus: defaults::TRAIN_SIZE,
        init: Init::Known,
        privacy: Privacy::NonPrivate,
        batching: Batching::FullBatch,
        ..Training::default()
    }
}

impl ReconnRun {
    /// `attack reconn --shadow-models K --seed X` (every other flag at its default), checked
    /// as those flags are.
    pub(crate) fn with_shadow_models(k: u64, seed: u64, quiet: bool) -> Result<Self, Failure> {
        let training = default_training();
        Ok(ReconnRun {
            data: default_data(),
            shadow_models: std::vec![count_in("shadow-models", k, 10, 1_000_000)?],
            released: defaults::RELEASED,
            features: Features::Params,
            control: Control::None,
            training,
            points: std::vec![Point {
                epsilon: None,
                training,
            }],
            reconstructor: ReconstructorConfig {
                hidden: defaults::HIDDEN,
                learning_rate: defaults::RECONSTRUCTOR_LR,
                batch_size: defaults::BATCH_SIZE,
                max_epochs: defaults::EPOCHS,
                patience: defaults::PATIENCE,
                precision: Precision::default(),
            },
            eta: defaults::ETA,
            seed,
            threads: default_threads(),
            shard: None,
            shadows: None,
            save_shadows: None,
            csv: None,
            plot: None,
            images: None,
            quiet,
        })
    }

    /// The run of `attack reconn`'s flags, each checked as it is read (before the data are
    /// loaded).
    fn parse(f: &Flags) -> Result<Self, Failure> {
        let ks: Vec<usize> = count_list(f, "shadow-models", defaults::SHADOW_MODELS)?
            .into_iter()
            .map(|k| count_in("shadow-models", k, 10, 1_000_000))
            .collect::<Result<_, _>>()?;
        let released = count_in(
            "released",
            f.u64("released")?.unwrap_or(defaults::RELEASED as u64),
            1,
            1_000_000,
        )?;
        let features = match f.raw("features").unwrap_or("params") {
            "params" => Features::Params,
            "logits" => Features::Logits,
            other => {
                return Err(usage(format!(
                    "--features = '{}' is not one of params, logits",
                    printable(other)
                )))
            }
        };
        let control = match f.raw("control") {
            None => Control::None,
            Some("shuffled-pairs") => Control::ShuffledPairs,
            Some("without-target") => Control::WithoutTarget,
            Some(other) => {
                return Err(usage(format!(
                    "--control = '{}' is not one of shuffled-pairs, without-target",
                    printable(other)
                )))
            }
        };
        f.exclusive("noise-multiplier", "epsilon")?;
        f.exclusive("save-shadows", "shadows")?;
        let mut base = Training {
            d_minus: count_in(
                "train-size",
                f.u64("train-size")?.unwrap_or(defaults::TRAIN_SIZE as u64),
                1,
                10_000_000,
            )?,
            steps: count_in(
                "steps",
                f.u64("steps")?.unwrap_or(default_training().steps),
                1,
                1_000_000,
            )? as u64,
            learning_rate: match f.f64("lr")? {
                None => default_training().learning_rate,
                Some(r) if r > 0.0 && r.is_finite() => r,
                Some(r) => {
                    return Err(usage(format!(
                        "--lr = {} is out of range: must be finite and > 0",
                        shown(r)
                    )))
                }
            },
            init: if f.has("unknown-init") {
                Init::Unknown
            } else {
                Init::Known
            },
            privacy: Privacy::NonPrivate,
            batching: match f.raw("sampling").unwrap_or("full") {
                "full" => {
                    for flag in ["train-batch", "unknown-sampling-seed"] {
                        if f.has(flag) {
                            return Err(usage(format!(
                                "flag '--{flag}' applies only with '--sampling poisson'"
                            )));
                        }
                    }
                    Batching::FullBatch
                }
                "poisson" => {
                    if f.has("epsilon") || f.f64("noise-multiplier")?.is_some_and(|s| s > 0.0) {
                        return Err(usage(String::from(
                            "--sampling poisson is for non-private runs: DP-GD runs use the full batch (drop --epsilon/--noise-multiplier or --sampling)",
                        )));
                    }
                    // the expected batch is drawn from every model's training set,
                    // D⁻ plus its target: at most |D⁻| + 1 (issue 31: 1,001 named the core's
                    // batch_size and dataset_size, and no --train-batch silently meant 100)
                    let Some(b) = f.u64("train-batch")? else {
                        return Err(usage(String::from(
                            "--sampling poisson needs --train-batch B (the expected batch size of every model's training)",
                        )));
                    };
                    let n = f.u64("train-size")?.unwrap_or(defaults::TRAIN_SIZE as u64);
                    Batching::Poisson {
                        batch_size: count_in("train-batch", b, 1, n.saturating_add(1))?,
                        seed_known: !f.has("unknown-sampling-seed"),
                    }
                }
                other => {
                    return Err(usage(format!(
                        "--sampling = '{}' is not one of full, poisson",
                        printable(other)
                    )))
                }
            },
        };
        let delta = match f.f64("delta")? {
            None => defaults::DELTA,
            Some(d) if f.has("epsilon") && d > 0.0 && d < 1.0 => d,
            Some(d) if f.has("epsilon") => {
                return Err(usage(format!(
                    "--delta = {} is out of range: must be in (0, 1)",
                    shown(d)
                )))
            }
            Some(_) => {
                return Err(usage(String::from(
                    "flag '--delta' applies only with '--epsilon' (σ is calibrated to (ε, δ))",
                )))
            }
        };
        let mut points = Vec::new();
        if let Some(eps) = f.f64_list("epsilon")? {
            for e in eps {
                if !(e > 0.0 && e.is_finite()) {
                    return Err(usage(format!(
                        "--epsilon = {} is out of range: every ε must be finite and > 0",
                        shown(e)
                    )));
                }
                // a target no σ ≤ 1e8 meets is the flag's value out of range (exit 2), as
                // for 'attack prior-aware'
                let training = base
                    .dp_at_epsilon(e, delta)
                    .map_err(|err| usage(format!("--epsilon = {}: {err}", shown(e))))?;
                points.push(Point {
                    epsilon: Some(e),
                    training,
                });
            }
        } else if let Some(s) = f.f64("noise-multiplier")? {
            // 1e8: the largest σ calibration gives; far beyond it the noise overflows the
            // model (σ = 1e300 gave non-finite losses, exit 1)
            if !(0.0..=super::attack_run::MAX_NOISE_MULTIPLIER).contains(&s) {
                return Err(usage(format!(
                    "--noise-multiplier = {} is out of range: must be in [0, 1e8] (0: no noise; 1e8 the largest σ calibration gives)",
                    shown(s)
                )));
            }
            if s > 0.0 {
                base.privacy = Privacy::DpGd {
                    noise_multiplier: s,
                    clip_norm: 1.0,
                };
            }
            points.push(Point {
                epsilon: None,
                training: base,
            });
        } else {
            points.push(Point {
                epsilon: None,
                training: base,
            });
        }
        if ks.len() > 1 && points.len() > 1 {
            return Err(usage(String::from(
                "--shadow-models and --epsilon: give a list for one of them, not both",
            )));
        }
        let reconstructor = ReconstructorConfig {
            hidden: count_in(
                "hidden",
                f.u64("hidden")?.unwrap_or(defaults::HIDDEN as u64),
                1,
                MAX_HIDDEN,
            )?,
            learning_rate: defaults::RECONSTRUCTOR_LR,
            batch_size: count_in(
                "batch-size",
                f.u64("batch-size")?.unwrap_or(defaults::BATCH_SIZE as u64),
                1,
                100_000,
            )?,
            max_epochs: count_in(
                "epochs",
                f.u64("epochs")?.unwrap_or(defaults::EPOCHS as u64),
                1,
                100_000,
            )?,
            patience: count_in(
                "patience",
                f.u64("patience")?.unwrap_or(defaults::PATIENCE as u64),
                1,
                100_000,
            )?,
            precision: match f.raw("precision") {
                None => Precision::default(),
                Some("f32") => Precision::F32,
                Some("f64") => Precision::F64,
                Some(other) => {
                    return Err(usage(format!(
                        "--precision = '{}' is not one of f32, f64",
                        printable(other)
                    )))
                }
            },
        };
        // η is the radius of the ReRo check against the DP bound: without DP there is no
        // bound to check (issue 31: it was silently ignored)
        if f.has("eta") && !f.has("epsilon") && !f.f64("noise-multiplier")?.is_some_and(|s| s > 0.0)
        {
            return Err(usage(String::from(
                "flag '--eta' applies only to private runs (--epsilon or --noise-multiplier > 0): it sets the radius of the check against the ReRo bound",
            )));
        }
        let eta = match f.f64("eta")? {
            None => defaults::ETA,
            Some(e) if e > 0.0 && e.is_finite() => e,
            Some(e) => {
                return Err(usage(format!(
                    "--eta = {} is out of range: must be finite and > 0",
                    shown(e)
                )))
            }
        };
        let seed = f.u64("seed")?.unwrap_or(0);
        let threads = super::shard::parse_threads(f)?;
        let shard = super::shard::parse_shard(f)?;
        if shard.is_some() && !f.has("save-shadows") {
            return Err(usage(String::from(
                "--shard K/M trains part of a shadow set: give --save-shadows FILE for the part",
            )));
        }
        if (f.has("save-shadows") || f.has("shadows")) && (points.len() > 1) {
            return Err(usage(String::from(
                "--save-shadows/--shadows hold one shadow set: give one privacy point (one --epsilon or --noise-multiplier)",
            )));
        }
        super::output::check_flag_paths(
            f,
            &["csv", "plot", "images", "save-shadows"],
            &["data", "shadows"],
            &[],
        )?;
        for flag in ["csv", "plot", "images"] {
            if let Some(p) = f.raw(flag) {
                check_writable(flag, p)?;
            }
        }
        if let Some(p) = f.raw("save-shadows") {
            super::shadow_io::check_shadow_output("save-shadows", p)?;
        }
        Ok(ReconnRun {
            data: f.raw("data").map_or_else(default_data, String::from),
            shadow_models: ks,
            released,
            features,
            control,
            training: base,
            points,
            reconstructor,
            eta,
            seed,
            threads,
            shard,
            shadows: f.raw("shadows").map(String::from),
            save_shadows: f.raw("save-shadows").map(String::from),
            csv: f.raw("csv").map(String::from),
            plot: f.raw("plot").map(String::from),
            images: f.raw("images").map(String::from),
            quiet: f.has("quiet"),
        })
    }

    /// Loads the data, trains (or reads) the shadow models, trains the released models and
    /// attacks them: every measured point, or `None` for a part of a shadow set (`--shard`,
    /// written to `--save-shadows`).
    pub(crate) fn run(&self) -> Result<Option<Reconn>, Failure> {
        let (ks, released, seed, threads, shard) = (
            &self.shadow_models,
            self.released,
            self.seed,
            self.threads,
            self.shard,
        );
        let base = self.training;
        let data_spec = &self.data;
        let data = super::train::load_data(data_spec)?;
        if data.dim() != 784 || data.num_classes() != 10 {
            return Err(usage(format!(
                "--data: RecoNN needs 28 × 28 MNIST-like images in 10 classes; '{}' has {} features and {} classes",
                data_spec.chars().filter(|c| !c.is_control()).take(80).collect::<String>(),
                data.dim(),
                data.num_classes()
            )));
        }
        let splits = Splits::draw(data.len(), base.d_minus, seed).map_err(|_| {
            usage(format!(
                "--train-size = {} does not fit: --data has {} examples and needs |D⁻| + max(10, n/10) released targets + at least 10 of the adversary's own",
                base.d_minus,
                data.len()
            ))
        })?;
        let kmax = ks.iter().copied().max().unwrap_or(10);
        if kmax > splits.aux.len() {
            return Err(usage(format!(
                "--shadow-models = {kmax} is out of range: the adversary's data D̄ holds {} images (the data minus D⁻ and the released split)",
                splits.aux.len()
            )));
        }
        if self.features == Features::Logits && kmax.saturating_add(LOGIT_PROBES) > splits.aux.len()
        {
            return Err(usage(format!(
                "--shadow-models = {kmax} is out of range with --features logits: at most {} (the adversary's data D̄ holds {} images and the {LOGIT_PROBES} logit probes are its last, beyond the shadow targets)",
                splits.aux.len().saturating_sub(LOGIT_PROBES),
                splits.aux.len()
            )));
        }
        if released > splits.released.len() {
            return Err(usage(format!(
                "--released = {released} is out of range: the released split holds {} targets (n/10, at most 1,000)",
                splits.released.len()
            )));
        }
        let stages = Stages {
            quiet: self.quiet,
            prefix: String::from("attack reconn"),
            current: Mutex::new(None),
        };
        let progress = |stage: &str, done: usize, total: usize| stages.tick(stage, done, total);
        let started = std::time::Instant::now();
        let fingerprint = super::shard::data_fingerprint(&data);
        let mut measured: Vec<Measured> = Vec::new();
        for point in &self.points {
            let config = ReconnConfig {
                training: point.training,
                shadow_models: kmax,
                released,
                features: self.features,
                reconstructor: self.reconstructor,
                seed,
                threads,
                control: self.control,
                eta: self.eta,
            };
            let sigma = match point.training.privacy {
                Privacy::NonPrivate => 0.0,
                Privacy::DpGd {
                    noise_multiplier, ..
                } => noise_multiplier,
            };
            let spec = shadow_spec(&data, &splits, &config)?;
            let shadows: ShadowModels = match self.shadows.as_deref() {
                Some(path) => {
                    let sh = read_shadows("shadows", path, &spec)?;
                    if let Some((i, stored, want)) = sh.mismatched_target(&splits) {
                        return Err(usage(format!(
                            "--shadows: '{}': shadow model {i} has target {stored}, where this run's split gives it {}: the set was not made by this run (or was altered)",
                            super::output::printable(path),
                            want.map_or_else(|| String::from("no target"), |u| format!("example {u}"))
                        )));
                    }
                    sh
                }
                None => {
                    let part = shard.unwrap_or(Shard::WHOLE);
                    let sh = train_shadows(&data, &splits, &config, part, &progress)?;
                    if let Some(path) = self.save_shadows.as_deref() {
                        write_shadows("save-shadows", path, &spec, part, &sh)?;
                    }
                    sh
                }
            };
            if let Some(part) = shard {
                stages.finish();
                if !self.quiet {
                    super::output::note(&format!(
                        "attack reconn: {} shadow models of shard {}/{} in {:.1} s",
                        shadows.params.len(),
                        part.index(),
                        part.count(),
                        started.elapsed().as_secs_f64()
                    ));
                }
                return Ok(None);
            }
            let rel = released_models(&data, &splits, &config, &progress)?;
            for &k in ks {
                let cfg = ReconnConfig {
                    shadow_models: k,
                    ..config
                };
                let outcome = attack_released(&data, &splits, &cfg, &shadows, &rel, &progress)?;
                measured.push(Measured {
                    k,
                    epsilon: point.epsilon,
                    sigma,
                    outcome,
                });
            }
        }
        stages.finish();
        if !self.quiet {
            super::output::note(&format!(
                "attack reconn: {} point(s) in {:.1} s on {threads} thread(s)",
                measured.len(),
                started.elapsed().as_secs_f64()
            ));
        }
        if let Some(p) = &self.csv {
            write_whole("csv", p, &csv(&measured))?;
        }
        let images = match measured.last() {
            Some(m) => Some(grid(m, &data, seed)?),
            None => None,
        };
        if let (Some(p), Some(svg)) = (&self.images, &images) {
            write_whole("images", p, svg)?;
        }
        if let Some(p) = &self.plot {
            write_whole("plot", p, &plot(&measured, seed))?;
        }
        Ok(Some(Reconn {
            data: data_spec.clone(),
            fingerprint,
            training: base,
            features: self.features,
            precision: self.reconstructor.precision,
            released,
            seed,
            control: self.control,
            measured,
            images,
        }))
    }
}

/// What an `attack reconn` run gives: its setting and every measured point, with the image
/// grid of the last; the command prints it by [`Reconn::to_json`] or [`Reconn::to_text`].
pub(crate) struct Reconn {
    data: String,
    fingerprint: String,
    training: Training,
    features: Features,
    /// The reconstructor's arithmetic (`--precision`).
    precision: Precision,
    released: usize,
    seed: u64,
    control: Control,
    measured: Vec<Measured>,
    /// The `--images` grid of the last point.
    images: Option<String>,
}

impl Reconn {
    /// The `--images` grid of the last point (targets, reconstructions, NN-oracle images).
    pub(crate) fn images(&self) -> Option<&str> {
        self.images.as_deref()
    }
}

fn control_name(c: Control) -> &'static str {
    match c {
        Control::None => "none",
        Control::ShuffledPairs => "shuffled-pairs",
        Control::WithoutTarget => "without-target",
    }
}

fn init_name(i: Init) -> &'static str {
    match i {
        Init::Known => "known",
        Init::Unknown => "unknown",
    }
}

fn above_bound(m: &Measured) -> Option<bool> {
    m.outcome.rero.map(|r| r.above_bound())
}

fn point_json(o: &mut Object, m: &Measured) {
    let r = &m.outcome;
    o.int("shadow_models", m.k as u64);
    match m.epsilon {
        Some(e) => o.num("epsilon", e),
        None => o.put("epsilon", Value::Null),
    };
    o.num("noise_multiplier", m.sigma)
        .num("test_accuracy", r.test_accuracy)
        .num("mse_mean", r.mse_mean)
        .num("mse_median", r.mse_median)
        .num("nn_oracle_mse_mean", r.nn_oracle_mse_mean)
        .num("nn_oracle_mse_median", r.nn_oracle_mse_median)
        .num("baseline_mse_mean", r.baseline_mse_mean)
        .int("beats_nn_oracle", r.beats_nn_oracle.successes)
        .num("beats_nn_oracle_rate", r.beats_nn_oracle.rate)
        .num("beats_nn_oracle_lower", r.beats_nn_oracle.lower)
        .num("beats_nn_oracle_upper", r.beats_nn_oracle.upper)
        .int("epochs_run", r.reconstructor_epochs.0 as u64)
        .int("best_epoch", r.reconstructor_epochs.1 as u64)
        .num("heldout_mse", r.reconstructor_epochs.2)
        .put(
            "sharpness",
            r.stability.map_or(Value::Null, |s| Value::Num(s.sharpness)),
        )
        .put(
            "lr_times_sharpness",
            r.stability
                .map_or(Value::Null, |s| Value::Num(s.lr_times_sharpness)),
        );
    match r.rero {
        Some(c) => {
            o.num("eta", c.eta)
                .num("kappa", c.kappa)
                .num("gamma", c.gamma)
                .int("success", c.success.successes)
                .num("success_rate", c.success.rate)
                .num("success_lower", c.success.lower)
                .num("success_upper", c.success.upper)
                .put("above_bound", Value::Bool(c.above_bound()));
        }
        None => {
            for k in [
                "eta",
                "kappa",
                "gamma",
                "success",
                "success_rate",
                "success_lower",
                "success_upper",
                "above_bound",
            ] {
                o.put(k, Value::Null);
            }
        }
    }
}

impl Reconn {
    /// The object `attack reconn --json` prints.
    pub(crate) fn to_json(&self) -> Object {
        let mut o = Object::new();
        o.str("command", "attack")
            .str("attack", "reconn")
            .str("data", &self.data)
            .str("data_fingerprint", &self.fingerprint)
            .int("train_size", self.training.d_minus as u64)
            .int("steps", self.training.steps)
            .num("lr", self.training.learning_rate)
            .str("init", init_name(self.training.init))
            .str(
                "sampling",
                match self.training.batching {
                    Batching::FullBatch => "full",
                    Batching::Poisson {
                        seed_known: true, ..
                    } => "poisson-known-seed",
                    Batching::Poisson { .. } => "poisson-unknown-seed",
                },
            )
            .str("features", self.features.name())
            .str("precision", self.precision.name())
            .int("released", self.released as u64)
            .int("seed", self.seed)
            .str("control", control_name(self.control));
        if let [m] = self.measured.as_slice() {
            point_json(&mut o, m);
        }
        let pts = self
            .measured
            .iter()
            .map(|m| {
                let mut p = Object::new();
                point_json(&mut p, m);
                Value::Obj(p)
            })
            .collect();
        o.put("points", Value::Arr(pts));
        o
    }

    /// What `attack reconn` prints without `--json`.
    pub(crate) fn to_text(&self) -> String {
        let mut t = String::new();
        t.push_str("RecoNN (Balle, Cherubin, Hayes 2022 §IV–VI): reconstructing a training image from a released model\n");
        t.push_str(&format!(
            "  data {}, |D⁻| = {}, MLP 784-10-10 (ELU), {}, T = {}, lr {}, θ₀ {}, features {}, reconstructor in {}, R = {} released models, seed {}{}\n",
            self.data,
            self.training.d_minus,
            match self.training.batching {
                Batching::FullBatch => String::from("full-batch GD"),
                Batching::Poisson {
                    batch_size,
                    seed_known,
                } => format!(
                    "SGD on Poisson batches of expected size {batch_size} (sampling seed {})",
                    if seed_known { "known" } else { "unknown" }
                ),
            },
            self.training.steps,
            shown(self.training.learning_rate),
            init_name(self.training.init),
            self.features.name(),
            self.precision.name(),
            self.released,
            self.seed,
            match self.control {
                Control::None => String::new(),
                c => format!(", CONTROL {} (must fail)", control_name(c)),
            }
        ));
        for m in &self.measured {
            point_text(&mut t, m);
        }
        t
    }
}

/// The text's lines of one measured point.
fn point_text(t: &mut String, m: &Measured) {
    let r = &m.outcome;
    t.push('\n');
    t.push_str(&format!(
        "  K = {} shadow models, {}; released models' test accuracy {}\n",
        m.k,
        match m.epsilon {
            Some(e) => format!("DP-GD ε = {} (σ = {})", shown(e), sig(m.sigma, 4, Side::Up)),
            None if m.sigma > 0.0 => format!("DP-GD σ = {}", shown(m.sigma)),
            None => String::from("non-private"),
        },
        sig(r.test_accuracy, 3, Side::Nearest)
    ));
    row(
        t,
        "reconstruction MSE mean / median",
        &format!(
            "{} / {}",
            sig(r.mse_mean, 4, Side::Nearest),
            sig(r.mse_median, 4, Side::Nearest)
        ),
        &format!(
            "reconstructor: {} epochs, kept epoch {} (held-out MSE {})",
            r.reconstructor_epochs.0,
            r.reconstructor_epochs.1,
            sig(r.reconstructor_epochs.2, 4, Side::Nearest)
        ),
    );
    row(
        t,
        "NN oracle MSE mean / median",
        &format!(
            "{} / {}",
            sig(r.nn_oracle_mse_mean, 4, Side::Nearest),
            sig(r.nn_oracle_mse_median, 4, Side::Nearest)
        ),
        "the closest image of the adversary's data D̄",
    );
    row(
        t,
        "mean-image MSE",
        &sig(r.baseline_mse_mean, 4, Side::Nearest),
        "",
    );
    row(
        t,
        "closer than the NN oracle (95 % CI)",
        &format!(
            "{} [{}, {}]",
            sig(r.beats_nn_oracle.rate, 3, Side::Nearest),
            sig(r.beats_nn_oracle.lower, 3, Side::Down),
            sig(r.beats_nn_oracle.upper, 3, Side::Up)
        ),
        &format!(
            "{}/{} targets",
            r.beats_nn_oracle.successes, r.beats_nn_oracle.trials
        ),
    );
    if let Some(c) = r.rero {
        row(
            t,
            &format!("success MSE ≤ {} (95 % CI)", shown(c.eta)),
            &format!(
                "{} [{}, {}]",
                sig(c.success.rate, 3, Side::Nearest),
                sig(c.success.lower, 3, Side::Down),
                sig(c.success.upper, 3, Side::Up)
            ),
            &format!(
                "bound γ = {} at κ(η) = {} (Hayes et al. 2023 Thm 2, App. J)",
                sig(c.gamma, 4, Side::Up),
                sig(c.kappa, 4, Side::Up)
            ),
        );
    }
    match r.stability {
        Some(s) => row(
            t,
            "training stability ρλ",
            &sig(s.lr_times_sharpness, 3, Side::Nearest),
            &format!(
                "stable below 2; λ = {}, released model 0's sharpness at its last step",
                sig(s.sharpness, 4, Side::Nearest)
            ),
        ),
        None => row(
            t,
            "training stability ρλ",
            "n/a",
            "the sharpness estimate overflowed",
        ),
    }
    if r.stability.is_some_and(|s| s.at_edge()) {
        t.push_str("  WARNING: ρλ ≥ 2: training ends at the edge of stability, where the map from a target to its model is chaotic and the reconstructor may learn nothing (lower --lr and raise --steps; README, RecoNN).\n");
    }
    if above_bound(m) == Some(true) {
        t.push_str("  WARNING: the success interval lies above the bound γ — a bug in the bound, the trainer or the attack (or a 2.5 % chance).\n");
    }
    t.push_str(&verdict_line(r));
}

/// The point's one-line verdict (the core's [`ReconnOutcome::verdict`]).
fn verdict_line(r: &ReconnOutcome) -> String {
    let b = &r.beats_nn_oracle;
    let nn = format!(
        "{} of {} targets closer than the NN oracle, 95 % interval [{}, {}]",
        b.successes,
        b.trials,
        sig(b.lower, 3, Side::Down),
        sig(b.upper, 3, Side::Up)
    );
    let mse = format!(
        "mean MSE {} against the mean image's {}",
        sig(r.mse_mean, 4, Side::Nearest),
        sig(r.baseline_mse_mean, 4, Side::Nearest)
    );
    match r.verdict() {
        ReconnVerdict::Reconstructs => {
            format!("  verdict: the attack reconstructs — {mse}, {nn}\n")
        }
        ReconnVerdict::BeatsTheMeanImageOnly => format!(
            "  verdict: better than a blind guess only — {mse}, but {nn} (none shown closer)\n"
        ),
        ReconnVerdict::Fails => {
            format!("  verdict: the attack fails — {mse} (no better than a blind guess); {nn}\n")
        }
    }
}

fn csv(measured: &[Measured]) -> String {
    let mut t = String::from(
        "shadow_models,epsilon,noise_multiplier,index,target,mse,nn_oracle_mse,nn_index,baseline_mse,beats_nn_oracle\n",
    );
    for m in measured {
        for (j, o) in m.outcome.targets.iter().enumerate() {
            t.push_str(&format!(
                "{},{},{},{j},{},{},{},{},{},{}\n",
                m.k,
                m.epsilon.map_or(String::new(), json::number),
                json::number(m.sigma),
                o.target,
                json::number(o.mse),
                json::number(o.nn_mse),
                o.nn_index,
                json::number(o.baseline_mse),
                u8::from(o.mse < o.nn_mse)
            ));
        }
    }
    t
}

/// Targets over reconstructions over NN-oracle images (Balle et al. Figs. 4, 9).
fn grid(m: &Measured, data: &Dataset, seed: u64) -> Result<String, Failure> {
    let n = m.outcome.targets.len().min(defaults::GRID);
    let mut top = Vec::with_capacity(n);
    let mut mid = Vec::with_capacity(n);
    let mut bottom = Vec::with_capacity(n);
    for o in m.outcome.targets.iter().take(n) {
        let (x, y) = data.example(o.target)?;
        top.push(svg::GridImage {
            pixels: x,
            caption: format!("#{} (label {y})", o.target),
        });
        mid.push(svg::GridImage {
            pixels: &o.reconstruction,
            caption: format!("MSE {}", sig(o.mse, 3, Side::Nearest)),
        });
        let (nx, _) = data.example(o.nn_index)?;
        bottom.push(svg::GridImage {
            pixels: nx,
            caption: format!("MSE {}", sig(o.nn_mse, 3, Side::Nearest)),
        });
    }
    let subtitle = format!(
        "K = {} shadow models, {}; first {n} released targets, seed {seed}",
        m.k,
        match m.epsilon {
            Some(e) => format!("DP-GD ε = {}", shown(e)),
            None if m.sigma > 0.0 => format!("DP-GD σ = {}", shown(m.sigma)),
            None => String::from("non-private"),
        }
    );
    svg::image_grid_svg(&svg::ImageGrid {
        title:
            "RecoNN: targets, reconstructions and NN-oracle images (Balle et al. 2022, Figs. 4, 9)",
        subtitle: &subtitle,
        shape: (1, 28, 28),
        rows: std::vec![
            svg::GridRow {
                label: String::from("target"),
                images: top,
            },
            svg::GridRow {
                label: String::from("RecoNN"),
                images: mid,
            },
            svg::GridRow {
                label: String::from("NN oracle"),
                images: bottom,
            },
        ],
    })
    .map_err(|e| usage(format!("--images: {e}")))
}

/// Mean MSE against K (Balle et al. Fig. 5c) when K varies, else against ε (Fig. 8), with
/// the NN oracle and the mean image; against ε the legend also gives the released models'
/// test accuracy. A single point is drawn against K.
fn plot(measured: &[Measured], seed: u64) -> String {
    let by_eps = measured.len() > 1 && measured.iter().all(|m| m.epsilon.is_some());
    let x_of = |m: &Measured| {
        if by_eps {
            m.epsilon.unwrap_or(f64::NAN)
        } else {
            m.k as f64
        }
    };
    let series = |f: &dyn Fn(&ReconnOutcome) -> f64| -> Vec<(f64, f64)> {
        measured.iter().map(|m| (x_of(m), f(&m.outcome))).collect()
    };
    let mut curves = std::vec![
        svg::Curve {
            label: String::from("RecoNN: mean MSE of the reconstructions"),
            points: series(&|o| o.mse_mean),
            stroke: svg::CERTIFIED,
        },
        svg::Curve {
            label: String::from("NN oracle: mean MSE of the closest image of D̄"),
            points: series(&|o| o.nn_oracle_mse_mean),
            stroke: svg::FROM_RDP,
        },
        svg::Curve {
            label: String::from("mean image of D̄"),
            points: series(&|o| o.baseline_mse_mean),
            stroke: svg::REFERENCE,
        },
    ];
    if by_eps {
        let acc: Vec<String> = measured
            .iter()
            .map(|m| {
                format!(
                    "ε = {}: {}",
                    shown(m.epsilon.unwrap_or(f64::NAN)),
                    sig(m.outcome.test_accuracy, 3, Side::Nearest)
                )
            })
            .collect();
        curves.push(svg::Curve {
            label: format!("released models' test accuracy: {}", acc.join(", ")),
            points: Vec::new(),
            stroke: svg::REFERENCE,
        });
    }
    let top = measured
        .iter()
        .flat_map(|m| {
            [
                m.outcome.mse_mean,
                m.outcome.nn_oracle_mse_mean,
                m.outcome.baseline_mse_mean,
            ]
        })
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let y_max = if top > 0.0 {
        let step = libm::pow(10.0, libm::floor(libm::log10(top)));
        libm::ceil(top * 1.1 / step) * step
    } else {
        1.0
    };
    let subtitle = match measured.first() {
        Some(m) if by_eps => format!(
            "K = {} shadow models, R = {} released, DP-GD (C = 1), seed {seed}",
            m.k,
            m.outcome.targets.len()
        ),
        Some(m) => format!(
            "{}, R = {} released, seed {seed}",
            match m.epsilon {
                Some(e) => format!("DP-GD ε = {}", shown(e)),
                None if m.sigma > 0.0 => format!("DP-GD σ = {}", shown(m.sigma)),
                None => String::from("non-private"),
            },
            m.outcome.targets.len()
        ),
        None => String::new(),
    };
    svg::curve_plot_svg(&svg::CurvePlot {
        y_log: false,
        decades: false,
        y_max,
        titles: svg::Titles {
            title: if by_eps {
                "RecoNN against ε (Balle et al. 2022, Fig. 8)"
            } else {
                "RecoNN against the number of shadow models (Balle et al. 2022, Fig. 5c)"
            },
            subtitle: &subtitle,
            x_label: if by_eps {
                "ε (δ = 1e-5)"
            } else {
                "K, shadow models"
            },
            y_label: "mean MSE per pixel",
        },
        curves,
        estimates: Vec::new(),
    })
}

/// What a shadow set depends on, as canonical `key=value;…` text: the model, the batching,
/// D⁻ (its size and a hash of its indices), θ₀ (a hash of its bits, or "unknown"), the
/// training (steps, learning rate, privacy, as exact bits) and the seed (every model's noise
/// and, with an unknown θ₀, its initialisation). The file's header fingerprints it with the
/// data's content and K; a set whose text, data or K differs is refused, naming the key.
fn shadow_spec(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
) -> Result<ShadowSetSpec, Failure> {
    use reconbound::fingerprint::{fnv1a64, FNV_OFFSET};
    let trainer = reconbound::attacks::reconn::setting::ModelTrainer::new(
        data,
        &splits.d_minus,
        config.training,
        config.seed,
    )?;
    let mut dm = FNV_OFFSET;
    for &i in &splits.d_minus {
        dm = fnv1a64(dm, &(i as u64).to_le_bytes());
    }
    let theta0 = match config.training.init {
        Init::Known => {
            let mut h = FNV_OFFSET;
            for x in trainer.theta0() {
                h = fnv1a64(h, &x.to_bits().to_le_bytes());
            }
            format!("{h:016x}")
        }
        Init::Unknown => String::from("unknown"),
    };
    let privacy = match config.training.privacy {
        Privacy::NonPrivate => String::from("none"),
        Privacy::DpGd {
            noise_multiplier,
            clip_norm,
        } => format!(
            "dp-gd(sigma={:016x},clip={:016x})",
            noise_multiplier.to_bits(),
            clip_norm.to_bits()
        ),
    };
    let batching = match config.training.batching {
        Batching::FullBatch => String::from("full-batch"),
        Batching::Poisson {
            batch_size,
            seed_known,
        } => format!(
            "poisson(batch={batch_size},seed={})",
            if seed_known { "known" } else { "unknown" }
        ),
    };
    let description = format!(
        "model=mlp-784-10-10-elu;batching={batching};d_minus_size={};d_minus={dm:016x};theta0={theta0};steps={};lr={:016x};privacy={privacy};seed={}",
        splits.d_minus.len(),
        config.training.steps,
        config.training.learning_rate.to_bits(),
        config.seed,
    );
    let param_len = u32::try_from(trainer.model().num_params())
        .map_err(|_| Failure::Compute(String::from("internal: parameter count above 2^32")))?;
    Ok(ShadowSetSpec::new(
        description,
        data.fingerprint(),
        config.shadow_models as u64,
        param_len,
    )?)
}

/// The shadow set of `--flag path`, refused unless it matches `spec` and is whole.
fn read_shadows(flag: &str, path: &str, spec: &ShadowSetSpec) -> Result<ShadowModels, Failure> {
    let (shard, models) = super::shadow_io::read_shadow_set(flag, path, spec)?;
    if shard != Shard::WHOLE {
        return Err(usage(format!(
            "--{flag}: '{}' is part {}/{} of a shadow set: merge the parts first ('reconbound merge PART... --out FILE')",
            super::output::printable(path),
            shard.index(),
            shard.count()
        )));
    }
    let mut out = ShadowModels {
        indices: Vec::with_capacity(models.len()),
        targets: Vec::with_capacity(models.len()),
        params: Vec::with_capacity(models.len()),
    };
    for m in models {
        out.indices.push(m.index);
        out.targets.push(m.target as usize);
        out.params.push(m.params);
    }
    Ok(out)
}

/// Writes `models` (part `shard` of the set) to the new file `--flag path`.
fn write_shadows(
    flag: &str,
    path: &str,
    spec: &ShadowSetSpec,
    shard: Shard,
    models: &ShadowModels,
) -> Result<(), Failure> {
    let items = models
        .indices
        .iter()
        .zip(&models.targets)
        .zip(&models.params)
        .map(|((&index, &target), params)| {
            Ok(ShadowModel {
                index,
                target: u32::try_from(target).map_err(|_| {
                    Failure::Compute(String::from("internal: target index above 2^32"))
                })?,
                params: params.clone(),
            })
        });
    super::shadow_io::write_shadow_set(flag, path, spec, shard, items)
}
