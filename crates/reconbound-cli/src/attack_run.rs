//! The DP-SGD run a trial-running command trains (`attack prior-aware`, `attack
//! gradient-matching`, `attack reconn`, `audit`, `report`): its flags and their defaults, the
//! model and data pool it loads, the output options of a sharded command, and the ReRo bounds
//! its trials are shown beside. Shared by the attack and audit commands, one floor below them
//! (issue 44: it lived in the `attack` dispatcher, which its sub-commands then imported).

use super::args::{switch as s, value as v, Flags, Spec, UsageError};
use super::failure::{shown, Failure};
use super::json::{Object, Value};
use super::output::check_writable;
use super::shard::Sharding;
use reconbound::accounting::calibrate::{self, Target};
use reconbound::accounting::guarantees;
use reconbound::attacks::prior_aware::Score;
use reconbound::data::Dataset;
use reconbound::nn::{arch, Activation, Sequential};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// Documented defaults of `attack prior-aware`: Hayes et al. 2023 App. A on MNIST (`audit`
/// shares the learning rate, C, T, ε and δ).
pub(crate) mod defaults {
    /// |D⁻|.
    pub const TRAIN_SIZE: u64 = 999;
    /// m.
    pub const PRIOR_SIZE: u64 = 10;
    /// T.
    pub const STEPS: u64 = 100;
    /// C.
    pub const CLIP: f64 = 0.1;
    /// Learning rate (no momentum, as Hayes et al.; they sweep it per ε).
    pub const LR: f64 = 10.0;
    /// ε when neither --epsilon nor --noise-multiplier is given.
    pub const EPSILON: f64 = 8.0;
    /// δ.
    pub const DELTA: f64 = 1e-5;
    /// Trials per point.
    pub const TRIALS: u64 = 500;
    /// The score of the headline rates.
    pub const SCORE: super::Score = super::Score::Sum;
}

/// The DP-SGD training every trial of a command runs (shared by `attack prior-aware` and
/// `audit`), as its shard header records it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Training {
    pub(crate) model: String,
    pub(crate) data: String,
    pub(crate) train_size: u64,
    pub(crate) sampling_rate: f64,
    pub(crate) batch_size: u64,
    pub(crate) steps: u64,
    pub(crate) clip: f64,
    pub(crate) lr: f64,
    pub(crate) delta: f64,
}

impl Training {
    /// `model`, `data`, `train_size`.
    pub(crate) fn write_data(&self, o: &mut Object) {
        o.str("model", &self.model)
            .str("data", &self.data)
            .int("train_size", self.train_size);
    }

    /// `sampling_rate`, `batch_size`, `steps`, `clip`, `lr`, `delta`.
    pub(crate) fn write_dpsgd(&self, o: &mut Object) {
        o.num("sampling_rate", self.sampling_rate)
            .int("batch_size", self.batch_size)
            .int("steps", self.steps)
            .num("clip", self.clip)
            .num("lr", self.lr)
            .num("delta", self.delta);
    }

    /// The keys of [`write_data`](Self::write_data) and [`write_dpsgd`](Self::write_dpsgd).
    pub(crate) fn read(o: &Object) -> Result<Self, String> {
        Ok(Training {
            model: o.get_str("model")?.to_string(),
            data: o.get_str("data")?.to_string(),
            train_size: o.get_u64("train_size")?,
            sampling_rate: o.get_f64("sampling_rate")?,
            batch_size: o.get_u64("batch_size")?,
            steps: o.get_u64("steps")?,
            clip: o.get_f64("clip")?,
            lr: o.get_f64("lr")?,
            delta: o.get_f64("delta")?,
        })
    }

    /// The trainer's configuration at noise multiplier `sigma` ([`dpsgd_config`]).
    pub(crate) fn dpsgd(&self, sigma: f64) -> DpSgdConfig {
        dpsgd_config(
            self.lr,
            self.clip,
            sigma,
            self.sampling_rate,
            self.batch_size,
            self.steps,
        )
    }

    /// The model as the tables name it.
    pub(crate) fn model_label(&self) -> &str {
        if self.model == "mlp" {
            "MLP (ELU, 10 hidden)"
        } else {
            self.model.as_str()
        }
    }

    /// `full batch` or `Poisson q = … (B = …)`, as the tables say it.
    pub(crate) fn batch_label(&self) -> String {
        if self.sampling_rate == 1.0 {
            String::from("full batch")
        } else {
            format!(
                "Poisson q = {} (B = {})",
                shown(self.sampling_rate),
                self.batch_size
            )
        }
    }

    /// `full batch` or `q = …`, as the plots' subtitles say it.
    pub(crate) fn sampling_label(&self) -> String {
        if self.sampling_rate == 1.0 {
            String::from("full batch")
        } else {
            format!("q = {}", shown(self.sampling_rate))
        }
    }
}

/// At most this many training examples |D⁻|.
pub(crate) const MAX_TRAIN_SIZE: u64 = 100_000_000;

/// The model of `--model` for data of dimension `dim` with `classes` classes.
fn build_model(name: &str, data: &Dataset) -> Result<Sequential, Failure> {
    match name {
        "mlp" => Ok(arch::mlp(
            data.dim(),
            &[10],
            data.num_classes().max(2),
            Activation::Elu,
        )?),
        "mnist-convnet" => {
            if data.shape() != (1, 28, 28) {
                return Err(usage(format!(
                    "--model mnist-convnet needs 1×28×28 images; --data gives {:?}",
                    data.shape()
                )));
            }
            Ok(arch::mnist_tanh_convnet()?)
        }
        other => Err(usage(format!(
            "flag '--model': '{}' is not one of mlp, mnist-convnet",
            other.chars().take(20).collect::<String>()
        ))),
    }
}

/// The DP-SGD configuration of the attack commands: hard clipping at C, no momentum or weight
/// decay, Poisson sampling at rate q (the full batch for q = 1).
pub(crate) fn dpsgd_config(
    lr: f64,
    clip: f64,
    sigma: f64,
    sampling_rate: f64,
    batch_size: u64,
    steps: u64,
) -> DpSgdConfig {
    DpSgdConfig {
        learning_rate: lr,
        momentum: 0.0,
        weight_decay: 0.0,
        clipping: Some(Clipping {
            method: ClipMethod::Hard,
            norm: clip,
        }),
        noise_multiplier: sigma,
        sampling: if sampling_rate == 1.0 {
            Sampling::FullBatch
        } else {
            Sampling::Poisson
        },
        batch_size: batch_size as usize,
        steps,
        seed: 0,
    }
}

/// (channels, height, width) of the data's images.
pub(crate) type Shape3 = (usize, usize, usize);

/// The model and the pool of `run`'s `--data` for its `--model` (flattened for the MLP), with
/// at least `--train-size` + `extra` examples (`what` names the flags that need them), and
/// the data's image shape.
pub(crate) fn load_pool(
    run: &Training,
    extra: u64,
    what: &str,
) -> Result<(Sequential, Dataset, Shape3), Failure> {
    let need = run.train_size.saturating_add(extra);
    let pool = super::train::load_data(&run.data)?;
    let shape = pool.shape();
    let pool = if run.model == "mlp" {
        pool.flatten()
    } else {
        pool
    };
    let net = build_model(&run.model, &pool)?;
    if (pool.len() as u64) < need {
        return Err(usage(format!(
            "{what} = {need} is out of range: --data has only {} examples",
            pool.len()
        )));
    }
    Ok((net, pool, shape))
}

/// The DP-SGD run every trial of an attack command trains (flags shared by
/// `attack prior-aware` and `attack gradient-matching`), validated.
pub(crate) struct RunFlags {
    pub(crate) run: Training,
    pub(crate) epsilons: Option<Vec<f64>>,
    pub(crate) noise_multipliers: Vec<f64>,
    pub(crate) trials: u64,
    pub(crate) seed: u64,
}

/// The largest noise multiplier a trial-running command trains with: 1e8, the upper end of
/// `rdp::calibrate_noise_multiplier`'s search.
pub(crate) const MAX_NOISE_MULTIPLIER: f64 = 1e8;

/// The flags [`parse_run_flags`] reads, and `--threads` and `--quiet` of every trial-running
/// command.
pub(crate) const RUN_FLAGS: [Spec; 14] = [
    v("model"),
    v("data"),
    v("train-size"),
    v("sampling-rate"),
    v("steps"),
    v("clip"),
    v("lr"),
    v("noise-multiplier"),
    v("epsilon"),
    v("delta"),
    v("trials"),
    v("seed"),
    v("threads"),
    s("quiet"),
];

/// The flags of [`RUN_FLAGS`] and `extra`.
pub(crate) fn run_flags_and(extra: &[Spec]) -> Vec<Spec> {
    RUN_FLAGS.iter().chain(extra).copied().collect()
}

/// The flags of a sharded trial-running command ([`RUN_FLAGS`], `--shard`, `--csv`,
/// `--plot`, `--json`) and `extra`.
pub(crate) fn sharded_flags_and(extra: &[Spec]) -> Vec<Spec> {
    run_flags_and(&[v("shard"), v("csv"), v("plot"), s("json")])
        .into_iter()
        .chain(extra.iter().copied())
        .collect()
}

/// `--shard`, `--threads`, `--quiet` and the output files of a sharded command, checked
/// before any work.
pub(crate) fn parse_sharding(f: &Flags) -> Result<(Sharding, OutputOptions), Failure> {
    Ok((Sharding::parse(f)?, OutputOptions::parse(f)?))
}

impl RunFlags {
    /// (ε, σ) of a command that takes one value of `--epsilon` / `--noise-multiplier`
    /// (ε is `None` when σ was given).
    pub(crate) fn single(&self, command: &str) -> Result<(Option<f64>, f64), Failure> {
        match self.noise_multipliers.as_slice() {
            [one] => Ok((
                self.epsilons.as_ref().and_then(|e| e.first().copied()),
                *one,
            )),
            _ => Err(usage(format!(
                "--epsilon / --noise-multiplier: {command} takes one value"
            ))),
        }
    }
}

/// The defaults of [`RunFlags`] that differ between commands.
pub(crate) struct RunDefaults {
    pub(crate) train_size: u64,
    pub(crate) lr: f64,
    pub(crate) trials: u64,
    /// `--delta` is accepted with `--noise-multiplier` (`audit`, whose δ is also the δ of
    /// the empirical ε); otherwise it applies only with `--epsilon`.
    pub(crate) delta_with_sigma: bool,
}

fn positive_flag(f: &Flags, name: &str, default: f64) -> Result<f64, Failure> {
    let x = f.f64(name)?.unwrap_or(default);
    if !(x > 0.0 && x.is_finite()) {
        return Err(usage(format!(
            "--{name} = {} is out of range: must be finite and > 0",
            shown(x)
        )));
    }
    Ok(x)
}

/// `--model --data --train-size --sampling-rate --steps --clip --lr (--noise-multiplier |
/// --epsilon [--delta]) --trials --seed`.
pub(crate) fn parse_run_flags(f: &Flags, d: &RunDefaults) -> Result<RunFlags, Failure> {
    let model = f.raw("model").unwrap_or("mlp").to_string();
    if !matches!(model.as_str(), "mlp" | "mnist-convnet") {
        return Err(usage(format!(
            "flag '--model': '{}' is not one of mlp, mnist-convnet",
            model.chars().take(20).collect::<String>()
        )));
    }
    let data = f.raw("data").unwrap_or("embedded").to_string();
    let train_size = f.u64("train-size")?.unwrap_or(d.train_size);
    if !(1..=MAX_TRAIN_SIZE).contains(&train_size) {
        return Err(usage(format!(
            "--train-size = {train_size} is out of range: must be in 1..={MAX_TRAIN_SIZE}"
        )));
    }
    let q = f.f64("sampling-rate")?.unwrap_or(1.0);
    if !(q > 0.0 && q <= 1.0) {
        return Err(usage(format!(
            "--sampling-rate = {} is out of range: must be in (0, 1]",
            shown(q)
        )));
    }
    let n1 = (train_size + 1) as f64;
    let b = libm::round(q * n1);
    if libm::fabs(q * n1 - b) > 1e-9 * q * n1 || b < 1.0 {
        return Err(usage(format!(
            "--sampling-rate = {} is out of range: Q·(N + 1) = {} must be an integer >= 1 (the expected batch size B of the {} training examples)",
            shown(q),
            shown(q * n1),
            train_size + 1
        )));
    }
    let sampling_rate = if q == 1.0 { 1.0 } else { b / n1 };
    let steps = f.u64("steps")?.unwrap_or(defaults::STEPS);
    if steps == 0 || steps > 10_000_000 {
        return Err(usage(format!(
            "--steps = {steps} is out of range: must be in 1..=10000000"
        )));
    }
    let clip = positive_flag(f, "clip", defaults::CLIP)?;
    let lr = positive_flag(f, "lr", d.lr)?;
    f.exclusive("noise-multiplier", "epsilon")?;
    let delta = f.f64("delta")?.unwrap_or(defaults::DELTA);
    if !(delta > 0.0 && delta < 1.0) {
        return Err(usage(format!(
            "--delta = {} is out of range: must be in (0, 1)",
            shown(delta)
        )));
    }
    if f.has("noise-multiplier") && f.has("delta") && !d.delta_with_sigma {
        return Err(usage(String::from(
            "flag '--delta' applies only with '--epsilon' (σ is calibrated to (ε, δ))",
        )));
    }
    // a point given twice would run its trials twice and print two identical rows
    for name in ["noise-multiplier", "epsilon"] {
        if let Some(list) = f.f64_list(name)? {
            for (i, x) in list.iter().enumerate() {
                if list.get(..i).is_some_and(|before| before.contains(x)) {
                    return Err(usage(format!(
                        "--{name}: {} is given twice (each point once)",
                        shown(*x)
                    )));
                }
            }
        }
    }
    let (epsilons, noise_multipliers) = match f.f64_list("noise-multiplier")? {
        Some(sigmas) => {
            for &s in &sigmas {
                // 1e8: the largest σ calibration returns; far beyond it DP-SGD's noise
                // overflows the model (σ = 1e300 gives non-finite losses)
                if !(s > 0.0 && s <= MAX_NOISE_MULTIPLIER) {
                    return Err(usage(format!(
                        "--noise-multiplier = {} is out of range: must be in (0, 1e8] (the largest σ calibration gives)",
                        shown(s)
                    )));
                }
            }
            (None, sigmas)
        }
        None => {
            let eps = f
                .f64_list("epsilon")?
                .unwrap_or_else(|| std::vec![defaults::EPSILON]);
            let mut sigmas = Vec::with_capacity(eps.len());
            for &e in &eps {
                if !(e > 0.0 && e.is_finite()) {
                    return Err(usage(format!(
                        "--epsilon = {} is out of range: must be finite and > 0",
                        shown(e)
                    )));
                }
                let target = Target::Epsilon { epsilon: e, delta };
                let s = calibrate::noise_multiplier(target, sampling_rate, steps)
                    .map_err(|err| usage(format!("--epsilon = {}: {err}", shown(e))))?;
                sigmas.push(s.noise);
            }
            (Some(eps), sigmas)
        }
    };
    Ok(RunFlags {
        run: Training {
            model,
            data,
            train_size,
            sampling_rate,
            batch_size: b as u64,
            steps,
            clip,
            lr,
            delta,
        },
        epsilons,
        noise_multipliers,
        trials: f.u64("trials")?.unwrap_or(d.trials),
        seed: f.u64("seed")?.unwrap_or(0),
    })
}

/// Output options of `attack prior-aware`, `audit` and `merge` (checked before any work).
pub(crate) struct OutputOptions {
    pub(crate) json: bool,
    pub(crate) csv: Option<String>,
    pub(crate) plot: Option<String>,
}

impl OutputOptions {
    pub(crate) fn parse(f: &Flags) -> Result<Self, Failure> {
        super::output::check_flag_paths(f, &["csv", "plot"], &["data"], &[])?;
        let csv = f.raw("csv").map(String::from);
        let plot = f.raw("plot").map(String::from);
        if let Some(p) = &csv {
            check_writable("csv", p)?;
        }
        if let Some(p) = &plot {
            check_writable("plot", p)?;
        }
        Ok(OutputOptions {
            json: f.has("json"),
            csv,
            plot,
        })
    }
}

/// The bounds of each point: (Hayes γ, its certified lower end, Balle γ, its order).
pub(crate) struct PointBounds {
    pub(crate) gamma: f64,
    pub(crate) gamma_lower: f64,
    pub(crate) gamma_balle: f64,
    pub(crate) gamma_balle_order: f64,
}

/// The ReRo bounds at κ for each noise multiplier of a run (rate q, T steps), by the core
/// ([`guarantees::rero_bounds`]).
pub(crate) fn rero_bounds(
    kappa: f64,
    sampling_rate: f64,
    noise_multipliers: &[f64],
    steps: u64,
) -> Result<Vec<PointBounds>, Failure> {
    noise_multipliers
        .iter()
        .map(|&sigma| {
            let b = guarantees::rero_bounds(kappa, sampling_rate, sigma, steps)?;
            Ok(PointBounds {
                gamma: b.hayes.gamma,
                gamma_lower: b.hayes.lower,
                gamma_balle: b.balle.gamma,
                gamma_balle_order: b.balle.order,
            })
        })
        .collect()
}

/// `o` with the array `key` of `items` (and, when there is exactly one item, its keys also
/// at the top level).
pub(crate) fn with_items(mut o: Object, key: &str, items: Vec<Object>) -> Object {
    if let [only] = items.as_slice() {
        for (k, val) in only.entries() {
            o.put(k, val.clone());
        }
    }
    o.put(key, Value::Arr(items.into_iter().map(Value::Obj).collect()));
    o
}

/// `o` on one line, as a command prints it.
pub(crate) fn line(o: &Object) -> String {
    let mut text = o.render();
    text.push('\n');
    text
}
