//! One RecoNN experiment: shadow models → features → reconstructor → released models →
//! evaluation against the NN oracle, the mean image and, under DP, the ReRo bound.
//!
//! **κ(η) from the adversary's data.** Hayes et al. 2023 (App. J, Prop. 5) bound the prior's
//! κ(η) = sup_{z₀} P_{z∼π}[MSE(z, z₀) ≤ η] from N samples by the largest number of samples
//! within η of a single guess z₀, maximised over all z₀ (then
//! [`kappa_from_samples`] adds the confidence
//! margin). We cannot maximise over every image z₀, so we count an upper bound on it: two
//! samples within η of one z₀ are within 2√(Pη) of each other in ℓ₂ (P pixels), i.e. at MSE
//! ≤ 4η, so the number of samples in any η-ball is at most the largest number of samples
//! within MSE 4η of one sample. The samples are the first min(2,000, |D̄|) images of D̄, a
//! uniform sample of the data the targets come from.

use super::reconstructor::{mse, Reconstructor, ReconstructorConfig};
use super::setting::{ModelTrainer, Privacy, Role, Splits, Training};
use crate::accounting::prior::kappa_from_samples;
use crate::accounting::rero::dpsgd::gamma_full_batch;
use crate::attacks::trial::{success_rate, Shard, SuccessRate};
use crate::data::Dataset;
use crate::error::{Error, Result};
use alloc::vec;
use alloc::vec::Vec;

/// Number of fixed images of D̄ whose logits form the black-box features (Balle §VI-C).
pub const LOGIT_PROBES: usize = 200;

/// Number of images of D̄ on which the released models' test accuracy is measured.
pub const TEST_IMAGES: usize = 1000;

/// Number of samples of D̄ from which κ(η) is estimated (module docs).
pub const KAPPA_SAMPLES: usize = 2000;

/// What the adversary reads off a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Features {
    /// White box: the flattened parameters (7,960), standardised per coordinate by the
    /// shadow set.
    Params,
    /// Black box: the logits on [`LOGIT_PROBES`] fixed images of D̄ (the first ones),
    /// standardised per coordinate by the shadow set.
    Logits,
}

impl Features {
    /// `params` or `logits`.
    pub fn name(self) -> &'static str {
        match self {
            Features::Params => "params",
            Features::Logits => "logits",
        }
    }
}

/// A control that must fail to reconstruct (a pipeline that passes one is broken).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// The attack as specified.
    None,
    /// The reconstructor learns from shuffled (feature, target) pairs: feature row i is paired
    /// with the image of shadow model π(i) for a fixed permutation π.
    ShuffledPairs,
    /// Released model j is trained on D⁻ ∪ {z′} with z′ the next released target, and judged
    /// against its own target z_j, which it never saw.
    WithoutTarget,
}

/// An experiment's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconnConfig {
    /// The training of every model.
    pub training: Training,
    /// K ≥ 10 shadow models.
    pub shadow_models: usize,
    /// R ≥ 1 released models.
    pub released: usize,
    /// White box or black box.
    pub features: Features,
    /// The reconstructor.
    pub reconstructor: ReconstructorConfig,
    /// The run's seed (splits, θ₀, every model's noise, the reconstructor).
    pub seed: u64,
    /// Threads (speed only: results are the same bits for any count).
    pub threads: usize,
    /// A control, or none.
    pub control: Control,
    /// η of Hayes-style success (MSE ≤ η) reported under DP.
    pub eta: f64,
}

impl Default for ReconnConfig {
    fn default() -> Self {
        ReconnConfig {
            training: Training::default(),
            shadow_models: 1000,
            released: 100,
            features: Features::Params,
            reconstructor: ReconstructorConfig::default(),
            seed: 0,
            threads: 1,
            control: Control::None,
            eta: 0.02,
        }
    }
}

/// Progress of a long stage: `(stage, done, total)`.
pub type Progress<'p> = &'p (dyn Fn(&str, usize, usize) + Sync);

/// The shadow models of a run (or of a shard of it): index i, its target (an index into the
/// data: `splits.aux[i]`) and its trained parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ShadowModels {
    /// Shadow model indices, increasing.
    pub indices: Vec<u64>,
    /// Target of each (index into the data).
    pub targets: Vec<usize>,
    /// Trained parameters of each.
    pub params: Vec<Vec<f64>>,
}

impl ShadowModels {
    /// The first shadow model whose stored target is not the one this run's split gives it
    /// (shadow model i trains on D⁻ ∪ {z_i} with z_i = `splits.aux[i]`), as (i, the stored
    /// target, the run's target or `None` when i is beyond D̄); `None` when every target
    /// agrees. A shadow set read from a file must pass this: a record that points at another
    /// example (a released target, say) would let the reconstructor train on what it must
    /// not see, even with a valid checksum.
    pub fn mismatched_target(&self, splits: &Splits) -> Option<(u64, usize, Option<usize>)> {
        self.indices.iter().zip(&self.targets).find_map(|(&i, &t)| {
            let want = usize::try_from(i)
                .ok()
                .and_then(|i| splits.aux.get(i))
                .copied();
            (want != Some(t)).then_some((i, t, want))
        })
    }
}

/// The released models' targets: the first R of the released split.
fn released_targets(splits: &Splits, r: usize) -> Result<&[usize]> {
    splits.released.get(..r).ok_or(Error::InvalidCount {
        name: "released",
        value: r as u64,
        expected: "<= the released split (n/10 examples, at most 1,000)",
    })
}

/// Trains `items` = (model index, target) of `role` on up to `threads` threads; the result is
/// in the order of `items` and the same bits for any thread count.
fn train_models(
    trainer: &ModelTrainer<'_>,
    role: Role,
    items: &[(u64, usize)],
    threads: usize,
    stage: &str,
    progress: Progress<'_>,
) -> Result<Vec<Vec<f64>>> {
    let total = items.len();
    let run = |pos: u64| -> Result<Vec<f64>> {
        let (index, target) = items[pos as usize];
        trainer.train(role, index, target)
    };
    #[cfg(feature = "std")]
    {
        let positions: Vec<u64> = (0..total as u64).collect();
        crate::attacks::trial::run_trials(&positions, threads.max(1), run, &|done| {
            progress(stage, done, total)
        })
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = threads;
        let mut out = Vec::with_capacity(total);
        for pos in 0..total {
            out.push(run(pos as u64)?);
            progress(stage, pos + 1, total);
        }
        Ok(out)
    }
}

/// Trains the shadow models of `shard` (all of them with [`Shard::WHOLE`]): model i on
/// D⁻ ∪ {z_i}, z_i the example `splits.aux[i]` of the data, i < K.
///
/// # Errors
/// [`Error::InvalidCount`] `shadow_models` below 10 or above |D̄|; the trainer's errors.
pub fn train_shadows(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
    shard: Shard,
    progress: Progress<'_>,
) -> Result<ShadowModels> {
    check_shadow_count(splits, config.shadow_models)?;
    let trainer = ModelTrainer::new(data, &splits.d_minus, config.training, config.seed)?;
    let items: Vec<(u64, usize)> = shard
        .trials(config.shadow_models as u64)
        .map(|i| (i, splits.aux[i as usize]))
        .collect();
    let params = train_models(
        &trainer,
        Role::Shadow,
        &items,
        config.threads,
        "shadow models",
        progress,
    )?;
    Ok(ShadowModels {
        indices: items.iter().map(|&(i, _)| i).collect(),
        targets: items.iter().map(|&(_, t)| t).collect(),
        params,
    })
}

/// `Err` unless 10 ≤ K ≤ |D̄|.
///
/// # Errors
/// [`Error::InvalidCount`] `shadow_models`.
pub fn check_shadow_count(splits: &Splits, k: usize) -> Result<()> {
    if k < 10 {
        return Err(Error::InvalidCount {
            name: "shadow_models",
            value: k as u64,
            expected: ">= 10 (a tenth is held out for early stopping)",
        });
    }
    if k > splits.aux.len() {
        return Err(Error::InvalidCount {
            name: "shadow_models",
            value: k as u64,
            expected: "<= the adversary's data |D-bar| (the data minus D- and the released split)",
        });
    }
    Ok(())
}

/// Per-coordinate standardisation fitted on the shadow set: (x − mean)/(sd + 1e-8), sd the
/// population standard deviation (as the peer's JAX run).
#[derive(Clone, Debug, PartialEq)]
pub struct Standardiser {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl Standardiser {
    /// Fitted on the rows of `rows` (each `width` long, at least one row).
    ///
    /// # Errors
    /// [`Error::Inconsistent`] if `rows` is empty or not a whole number of rows.
    pub fn fit(rows: &[f64], width: usize) -> Result<Standardiser> {
        if width == 0 || rows.is_empty() || rows.len() % width != 0 {
            return Err(Error::Inconsistent {
                what: "standardiser: a non-empty whole number of rows",
                value: rows.len() as f64,
            });
        }
        let n = (rows.len() / width) as f64;
        let mut mean = vec![0.0; width];
        for row in rows.chunks_exact(width) {
            for (m, &v) in mean.iter_mut().zip(row) {
                *m += v;
            }
        }
        for m in &mut mean {
            *m /= n;
        }
        let mut var = vec![0.0; width];
        for row in rows.chunks_exact(width) {
            for ((s, &v), &m) in var.iter_mut().zip(row).zip(&mean) {
                let d = v - m;
                *s += d * d;
            }
        }
        let scale = var
            .iter()
            .map(|&s| 1.0 / (libm::sqrt(s / n) + 1e-8))
            .collect();
        Ok(Standardiser { mean, scale })
    }

    /// Standardises `rows` in place.
    pub fn apply(&self, rows: &mut [f64]) {
        let w = self.mean.len();
        for row in rows.chunks_exact_mut(w) {
            for ((v, &m), &s) in row.iter_mut().zip(&self.mean).zip(&self.scale) {
                *v = (*v - m) * s;
            }
        }
    }
}

/// The features of each model in `params` (rows concatenated) and their width.
fn features_of(
    trainer: &ModelTrainer<'_>,
    kind: Features,
    probes: &[usize],
    params: &[Vec<f64>],
) -> Result<(Vec<f64>, usize)> {
    match kind {
        Features::Params => {
            let w = trainer.model().num_params();
            let mut out = Vec::with_capacity(params.len() * w);
            for p in params {
                out.extend_from_slice(p);
            }
            Ok((out, w))
        }
        Features::Logits => {
            let w = probes.len() * trainer.model().output_len();
            let mut out = Vec::with_capacity(params.len() * w);
            for p in params {
                out.extend(trainer.logits(p, probes)?);
            }
            Ok((out, w))
        }
    }
}

/// One released target's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetOutcome {
    /// The target (index into the data).
    pub target: usize,
    /// MSE per pixel of the reconstruction.
    pub mse: f64,
    /// MSE of the NN oracle: the closest image of D̄ to the target.
    pub nn_mse: f64,
    /// The NN oracle's image (index into the data).
    pub nn_index: usize,
    /// MSE of the mean image of D̄.
    pub baseline_mse: f64,
    /// The reconstruction (P pixels).
    pub reconstruction: Vec<f64>,
}

/// Mean and median of a non-empty list (0 for an empty one).
pub fn mean_median(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    };
    (mean, median)
}

/// Hayes-style success of one DP point: the fraction of targets reconstructed within MSE η,
/// beside the bound γ at κ(η).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReroCheck {
    /// η.
    pub eta: f64,
    /// κ(η) estimated from D̄ (upper confidence bound at failure probability 1e-6).
    pub kappa: f64,
    /// γ(κ) of T full-batch DP-GD steps (Hayes et al. 2023, Thm 2 with q = 1); 1 without
    /// noise.
    pub gamma: f64,
    /// Targets with MSE ≤ η, out of R, with a 95 % Clopper–Pearson interval.
    pub success: SuccessRate,
}

/// The outcome of one experiment (one training setting).
#[derive(Clone, Debug, PartialEq)]
pub struct ReconnOutcome {
    /// Every released target, in order.
    pub targets: Vec<TargetOutcome>,
    /// Mean and median MSE of the reconstructions.
    pub mse_mean: f64,
    /// Median MSE of the reconstructions.
    pub mse_median: f64,
    /// Mean MSE of the NN oracle.
    pub nn_oracle_mse_mean: f64,
    /// Median MSE of the NN oracle.
    pub nn_oracle_mse_median: f64,
    /// Mean MSE of the mean image.
    pub baseline_mse_mean: f64,
    /// Targets reconstructed strictly closer than the NN oracle, with a 95 % interval.
    pub beats_nn_oracle: SuccessRate,
    /// Mean test accuracy of the released models on [`TEST_IMAGES`] images of D̄.
    pub test_accuracy: f64,
    /// The reconstructor's epochs run, the epoch kept and its held-out MSE.
    pub reconstructor_epochs: (usize, usize, f64),
    /// Feature width F.
    pub feature_width: usize,
    /// Hayes-style success beside γ (DP runs; `None` without noise).
    pub rero: Option<ReroCheck>,
}

/// The closest image of `pool` to `z` by MSE (ties: the first) and that MSE.
pub fn nn_oracle(data: &Dataset, pool: &[usize], z: &[f64]) -> Result<(usize, f64)> {
    let mut best = (usize::MAX, f64::INFINITY);
    for &i in pool {
        let (x, _) = data.example(i)?;
        let d = mse(x, z);
        if d < best.1 {
            best = (i, d);
        }
    }
    if best.0 == usize::MAX {
        return Err(Error::InvalidCount {
            name: "pool",
            value: 0,
            expected: ">= 1 image",
        });
    }
    Ok(best)
}

/// κ(η) from the first [`KAPPA_SAMPLES`] images of `pool` (module docs: the 4η bound).
///
/// # Errors
/// `eta` not finite and > 0; an empty pool.
pub fn kappa_of_eta(data: &Dataset, pool: &[usize], eta: f64, threads: usize) -> Result<f64> {
    let eta = crate::error::check_positive("eta", eta)?;
    let samples = &pool[..pool.len().min(KAPPA_SAMPLES)];
    let mut xs = Vec::with_capacity(samples.len());
    for &i in samples {
        xs.push(data.example(i)?.0);
    }
    let count =
        |a: usize| -> u64 { xs.iter().filter(|b| mse(xs[a], b) <= 4.0 * eta).count() as u64 };
    let mut hits = vec![0u64; xs.len()];
    #[cfg(feature = "std")]
    {
        let per = xs.len().div_ceil(threads.max(1)).max(1);
        std::thread::scope(|s| {
            for (k, chunk) in hits.chunks_mut(per).enumerate() {
                let count = &count;
                s.spawn(move || {
                    for (j, h) in chunk.iter_mut().enumerate() {
                        *h = count(k * per + j);
                    }
                });
            }
        });
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = threads;
        for (j, h) in hits.iter_mut().enumerate() {
            *h = count(j);
        }
    }
    let max_hits = hits.iter().copied().max().unwrap_or(0);
    kappa_from_samples(max_hits, samples.len() as u64, 1e-6)
}

/// Runs the attack: features of the shadow models, the reconstructor, the released models and
/// the evaluation. `shadows` must hold every shadow model 0..K in order (trained by
/// [`train_shadows`] with the same data, splits and training, or read back from a file).
///
/// # Errors
/// [`Error::InvalidCount`] `released` above the released split or 0, `shadow_models`
/// mismatch; the training's errors.
pub fn attack(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
    shadows: &ShadowModels,
    progress: Progress<'_>,
) -> Result<ReconnOutcome> {
    check_shadow_count(splits, config.shadow_models)?;
    if config.released == 0 {
        return Err(Error::InvalidCount {
            name: "released",
            value: 0,
            expected: ">= 1",
        });
    }
    let released = released_models(data, splits, config, progress)?;
    attack_released(data, splits, config, shadows, &released, progress)
}

/// The released models of `config`: model j trained on D⁻ ∪ {z_j} for the first R targets of
/// the released split (with [`Control::WithoutTarget`], on the next target instead).
///
/// # Errors
/// [`Error::InvalidCount`] `released` out of range; the training's errors.
pub fn released_models(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
    progress: Progress<'_>,
) -> Result<Vec<Vec<f64>>> {
    let targets = released_targets(splits, config.released)?;
    let trainer = ModelTrainer::new(data, &splits.d_minus, config.training, config.seed)?;
    let (role, items): (Role, Vec<(u64, usize)>) = match config.control {
        Control::WithoutTarget => (
            Role::Control,
            (0..targets.len())
                .map(|j| (j as u64, splits.released[(j + 1) % splits.released.len()]))
                .collect(),
        ),
        _ => (
            Role::Released,
            targets
                .iter()
                .enumerate()
                .map(|(j, &t)| (j as u64, t))
                .collect(),
        ),
    };
    train_models(
        &trainer,
        role,
        &items,
        config.threads,
        "released models",
        progress,
    )
}

/// [`attack`] on released models already trained ([`released_models`] with the same
/// configuration): a sweep over K trains them once.
///
/// # Errors
/// As [`attack`].
pub fn attack_released(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
    shadows: &ShadowModels,
    released: &[Vec<f64>],
    progress: Progress<'_>,
) -> Result<ReconnOutcome> {
    check_shadow_count(splits, config.shadow_models)?;
    let targets = released_targets(splits, config.released)?;
    if released.len() != targets.len() {
        return Err(Error::InvalidCount {
            name: "released",
            value: released.len() as u64,
            expected: "one released model per target",
        });
    }
    if shadows.params.len() < config.shadow_models
        || shadows
            .indices
            .iter()
            .enumerate()
            .any(|(p, &i)| i != p as u64)
    {
        return Err(Error::InvalidCount {
            name: "shadow_models",
            value: shadows.params.len() as u64,
            expected: "a shadow set holding models 0..K in order",
        });
    }
    if shadows.targets.len() != shadows.params.len()
        || shadows.indices.len() != shadows.params.len()
    {
        return Err(Error::Inconsistent {
            what: "shadow models: as many indices and targets as parameter vectors (value: the targets)",
            value: shadows.targets.len() as f64,
        });
    }
    if let Some((i, _, _)) = shadows.mismatched_target(splits) {
        return Err(Error::Inconsistent {
            what: "shadow models: a model's target is not the example the run's split gives it (value: the model's index)",
            value: i as f64,
        });
    }
    let k = config.shadow_models;
    let trainer = ModelTrainer::new(data, &splits.d_minus, config.training, config.seed)?;
    let probes = &splits.aux[..LOGIT_PROBES.min(splits.aux.len())];
    let (mut feats, width) = features_of(&trainer, config.features, probes, &shadows.params[..k])?;
    let stdz = Standardiser::fit(&feats, width)?;
    stdz.apply(&mut feats);
    let p = data.dim();
    let mut images = Vec::with_capacity(k * p);
    let order: Vec<usize> = match config.control {
        Control::ShuffledPairs => {
            let mut rng =
                crate::rng::Rng::for_stream(config.seed, super::setting::STREAM_CONTROL, u64::MAX);
            rng.permutation(k)?
        }
        _ => (0..k).collect(),
    };
    for &o in &order {
        let target = shadows.targets.get(o).copied().ok_or(Error::InvalidCount {
            name: "shadow_models",
            value: o as u64,
            expected: "a target for every shadow model",
        })?;
        images.extend_from_slice(data.example(target)?.0);
    }
    let total_epochs = config.reconstructor.max_epochs;
    let rec = Reconstructor::train(
        &config.reconstructor,
        &feats,
        width,
        &images,
        p,
        config.seed,
        config.threads,
        &mut |e| progress("reconstructor epochs", e.epoch, total_epochs),
    )?;
    drop(feats);
    let (mut rfeats, rwidth) = features_of(&trainer, config.features, probes, released)?;
    stdz.apply(&mut rfeats);
    let rows: Vec<usize> = (0..released.len()).collect();
    let _ = rwidth;
    let recon = rec.reconstruct(&rfeats, &rows, config.threads)?;
    // Test accuracy.
    let test = &splits.aux[..TEST_IMAGES.min(splits.aux.len())];
    let mut acc = 0.0;
    for r in released {
        acc += trainer.accuracy(r, test)?;
    }
    let test_accuracy = acc / released.len() as f64;
    // Evaluation.
    let pool = &splits.aux;
    let mut mean_img = vec![0.0; p];
    for &i in pool {
        for (m, &v) in mean_img.iter_mut().zip(data.example(i)?.0) {
            *m += v;
        }
    }
    for m in &mut mean_img {
        *m /= pool.len() as f64;
    }
    let mut outcomes = Vec::with_capacity(targets.len());
    for (j, &t) in targets.iter().enumerate() {
        let z = data.example(t)?.0;
        let r = recon[j * p..(j + 1) * p].to_vec();
        let (nn_index, nn_mse) = nn_oracle(data, pool, z)?;
        outcomes.push(TargetOutcome {
            target: t,
            mse: mse(&r, z),
            nn_mse,
            nn_index,
            baseline_mse: mse(&mean_img, z),
            reconstruction: r,
        });
    }
    let mses: Vec<f64> = outcomes.iter().map(|o| o.mse).collect();
    let nns: Vec<f64> = outcomes.iter().map(|o| o.nn_mse).collect();
    let bases: Vec<f64> = outcomes.iter().map(|o| o.baseline_mse).collect();
    let (mse_mean, mse_median) = mean_median(&mses);
    let (nn_mean, nn_median) = mean_median(&nns);
    let (baseline_mean, _) = mean_median(&bases);
    let beats = outcomes.iter().filter(|o| o.mse < o.nn_mse).count() as u64;
    let beats_nn_oracle = success_rate(beats, outcomes.len() as u64, 0.95)?;
    let rero = match config.training.privacy {
        Privacy::DpGd {
            noise_multiplier, ..
        } if noise_multiplier > 0.0 => {
            let kappa = kappa_of_eta(data, pool, config.eta, config.threads)?;
            let gamma = gamma_full_batch(kappa, noise_multiplier, config.training.steps)?;
            let hits = outcomes.iter().filter(|o| o.mse <= config.eta).count() as u64;
            Some(ReroCheck {
                eta: config.eta,
                kappa,
                gamma,
                success: success_rate(hits, outcomes.len() as u64, 0.95)?,
            })
        }
        _ => None,
    };
    Ok(ReconnOutcome {
        targets: outcomes,
        mse_mean,
        mse_median,
        nn_oracle_mse_mean: nn_mean,
        nn_oracle_mse_median: nn_median,
        baseline_mse_mean: baseline_mean,
        beats_nn_oracle,
        test_accuracy,
        reconstructor_epochs: rec.training_summary(),
        feature_width: width,
        rero,
    })
}
