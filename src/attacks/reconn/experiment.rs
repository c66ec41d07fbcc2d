//! One RecoNN experiment: shadow models → features → reconstructor → released models →
//! evaluation against the NN oracle, the mean image and, under DP, the ReRo bound.
//!
//! **κ(η) from the adversary's data.** Hayes et al. 2023 (App. J, Prop. 5) bound the prior's
//! κ(η) = sup_{z₀} P_{z∼π}\[MSE(z, z₀) ≤ η\] from N samples x₁, …, x_N of π by the largest
//! number of samples within η of a single guess z₀, maximised over all z₀ ∈ ℝᴾ (then
//! [`kappa_from_samples`] adds the confidence margin). We cannot search every z₀, so
//! [`ball_count_bound`] computes a number h(η) that is at least |B(z₀)| for **every** z₀,
//! B(z₀) = {b : MSE(x_b, z₀) ≤ η} — in particular for Prop. 5's optimal guess, so h(η)
//! may stand for its count and κ stays an upper bound (γ(κ) never optimistic).
//!
//! *The count.* For a sample a let d₍₁₎ ≤ d₍₂₎ ≤ … ≤ d₍N₎ be its MSEs to all N samples,
//! sorted (d₍₁₎ = 0: a itself counts). c(a) is the largest k with
//! d₍ₖ₎ ≤ 4η and (d₍₁₎ + … + d₍ₖ₎)/k ≤ 2η — a's k nearest samples are each within 4η
//! of it and within 2η on average — and h(η) = max over the samples of c(a). Ties among the
//! nearest do not matter: c(a) depends on the sorted distances only.
//!
//! *Claim.* For every z₀ ∈ ℝᴾ (a sample or not) with s = |B(z₀)| ≥ 1, h(η) ≥ s.
//!
//! *Proof.* MSE(u, v) = ‖u − v‖²/P, so √MSE is a scaled Euclidean norm. Write B = B(z₀)
//! and m = (1/s) Σ_{b∈B} x_b for its centroid.
//! 1. Pairs: for b, b′ ∈ B the triangle inequality for √MSE gives
//!    √MSE(x_b, x_b′) ≤ √MSE(x_b, z₀) + √MSE(z₀, x_b′) ≤ 2√η, i.e. MSE(x_b, x_b′) ≤ 4η.
//! 2. Mean: for any point u, (1/s) Σ_{b∈B} ‖x_b − u‖² = ‖m − u‖² + V with
//!    V = (1/s) Σ_{b∈B} ‖x_b − m‖² (the cross term vanishes: Σ_b (x_b − m) = 0). At u = z₀
//!    it gives V ≤ (1/s) Σ_b ‖x_b − z₀‖² ≤ ηP. Let a be the member of B **closest to the
//!    centroid** m: ‖x_a − m‖² ≤ min_b ‖x_b − m‖² ≤ V. At u = x_a it gives
//!    (1/s) Σ_{b∈B} ‖x_b − x_a‖² = ‖m − x_a‖² + V ≤ 2V ≤ 2ηP: the mean over B of
//!    MSE(x_a, x_b) (b = a included, at 0) is at most 2η.
//! 3. Count: B is s of the N samples, so the k-th smallest of a's N distances is at most
//!    the k-th smallest of its distances to B. With k = s, a's s nearest samples have largest
//!    MSE ≤ max_{b∈B} MSE(x_a, x_b) ≤ 4η (step 1) and sum ≤ Σ_{b∈B} MSE(x_a, x_b) ≤ 2ηs
//!    (step 2). So c(a) ≥ s, and h(η) ≥ c(a) ≥ s. ∎
//!
//! The member to take is the one closest to the *centroid*, as the issue (31) states; the
//! member closest to z₀ does not do: on the line (P = 1) with η = 1, z₀ = 0, one sample at 0.9
//! and s − 1 at −1 are all in B(0), and the mean MSE from 0.9 to B is 3.61(s − 1)/s > 2η
//! for s ≥ 3 (from −1 it is 3.61/s). Both limits are sharp: two samples at ±√η around z₀ are
//! at MSE exactly 4η with mean 2η. The count is never larger than the one used before
//! issue 31 (the samples within 4η of a, maximised over a: valid by step 1 alone), and on
//! MNIST much smaller — the first 2,000 images of D̄ of `attack reconn --seed 1`'s split
//! (|D⁻| = 999, `data/mnist-10k`): η = 0.01: h = 91 (κ = 0.0784) against 120 (0.0965);
//! η = 0.02: 245 (κ = 0.171) against 526 (0.331), so γ at ε = 1 (σ = 40.45, T = 100) is 0.241
//! instead of 0.424; η = 0.04: 1,163 (κ = 0.678) against 1,908 (κ = 1, vacuous).
//! Rounding cannot drop a member: both limits are widened by a relative 4(P + N + 8)·ε, more
//! than the error of any computed MSE and prefix sum.
//!
//! The samples are the first min(2,000, |D̄|) images of D̄, a uniform sample of the data
//! the targets come from. Cost O(N²P) (2,000 images of 784 pixels: 3·10⁹ multiply-adds),
//! rows over threads, the same bits for any thread count.

use super::reconstructor::{mse, Reconstructor, ReconstructorConfig};
use super::setting::{ModelTrainer, Privacy, Role, Splits, Training};
use super::stability::Stability;
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
    /// Black box: the logits on [`LOGIT_PROBES`] fixed images of D̄ ([`logit_probes`]: the
    /// last ones, never a shadow target), standardised per coordinate by the shadow set.
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

/// The black-box probes (Balle et al. 2022 §VI-C: 200 images of D̄): the last
/// [`LOGIT_PROBES`] images of D̄. Shadow model i's target is `splits.aux[i]`, i < K, so the
/// probes are none of the K shadow targets — a probe that is also a shadow target (as the
/// first 200 were before issue 31) gives that shadow model's features a trace of its own
/// target that no released model's features have (their targets are not in D̄). The same
/// probes for every K.
///
/// # Errors
/// [`Error::InvalidCount`] `shadow_models` above |D̄| − [`LOGIT_PROBES`] (then no 200 images
/// of D̄ are left beyond the shadow targets).
pub fn logit_probes(splits: &Splits, shadow_models: usize) -> Result<&[usize]> {
    let n = splits.aux.len();
    match n.checked_sub(LOGIT_PROBES) {
        Some(start) if shadow_models <= start => Ok(&splits.aux[start..]),
        _ => Err(Error::InvalidCount {
            name: "shadow_models",
            value: shadow_models as u64,
            expected: "<= |D-bar| - 200 with logit features (the 200 probes are images of D-bar beyond the shadow targets)",
        }),
    }
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

impl ReroCheck {
    /// Whether the success interval lies wholly above the bound (its lower end > γ): a bug
    /// in the bound, the trainer or the attack — or the interval's 2.5 % chance of missing
    /// from below.
    pub fn above_bound(&self) -> bool {
        self.success.lower > self.gamma
    }
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
    /// The sharpness of released model 0 at its trained parameters against its learning
    /// rate ([`super::stability`]): ρλ ≥ 2 means training ended at the edge of stability,
    /// where the map from a target to its model is chaotic. `None` when the estimate failed
    /// (a Hessian–vector product overflowed).
    pub stability: Option<Stability>,
}

/// What a RecoNN run shows, in one word: the verdict its output ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconnVerdict {
    /// Mean MSE below the mean image's, and a 95 % interval of the fraction of targets
    /// reconstructed closer than the NN oracle that excludes 0: the attack beats both
    /// baselines.
    Reconstructs,
    /// Mean MSE below the mean image's, but no target shown closer than the NN oracle (the
    /// interval's lower end is 0): better than a blind guess, no better than the adversary's
    /// own closest image.
    BeatsTheMeanImageOnly,
    /// Mean MSE at or above the mean image's: no better than a blind guess.
    Fails,
}

impl ReconnOutcome {
    /// The run's verdict ([`ReconnVerdict`]) from its mean MSE, the mean image's and the
    /// NN-oracle interval.
    pub fn verdict(&self) -> ReconnVerdict {
        let below =
            self.mse_mean.partial_cmp(&self.baseline_mse_mean) == Some(core::cmp::Ordering::Less);
        if !below {
            ReconnVerdict::Fails
        } else if self.beats_nn_oracle.lower > 0.0 {
            ReconnVerdict::Reconstructs
        } else {
            ReconnVerdict::BeatsTheMeanImageOnly
        }
    }
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

/// κ(η) from the first [`KAPPA_SAMPLES`] images of `pool`: [`kappa_from_samples`] at failure
/// probability 1e-6 of [`ball_count_bound`]'s count (module docs).
///
/// # Errors
/// `eta` not finite and > 0; an empty pool; an index outside `data`.
pub fn kappa_of_eta(data: &Dataset, pool: &[usize], eta: f64, threads: usize) -> Result<f64> {
    let eta = crate::error::check_positive("eta", eta)?;
    let samples = &pool[..pool.len().min(KAPPA_SAMPLES)];
    let mut xs = Vec::with_capacity(samples.len());
    for &i in samples {
        xs.push(data.example(i)?.0);
    }
    let max_hits = ball_count_bound(&xs, eta, threads)?;
    kappa_from_samples(max_hits, samples.len() as u64, 1e-6)
}

/// An upper bound on the number of `samples` inside any MSE-ball of radius η, whatever its
/// centre (module docs, "κ(η) from the adversary's data", for the proof): for each sample a,
/// the largest k such that a's k nearest samples (a itself included, at MSE 0) are each
/// within MSE 4η of a and within 2η of it on average; the largest over a. 0 for no samples.
///
/// O(N² P) for N samples of P pixels, rows shared over `threads` threads; every row is
/// computed alone, so the result is the same for any thread count.
///
/// # Errors
/// `eta` not finite and > 0; samples of different lengths ([`Error::Inconsistent`]).
pub fn ball_count_bound(samples: &[&[f64]], eta: f64, threads: usize) -> Result<u64> {
    let eta = crate::error::check_positive("eta", eta)?;
    let xs = samples;
    let p = xs.first().map_or(0, |x| x.len());
    if let Some(bad) = xs.iter().find(|x| x.len() != p) {
        return Err(Error::Inconsistent {
            what: "kappa samples: every image as long as the first (value: a length)",
            value: bad.len() as f64,
        });
    }
    // Rounding: every MSE (P squares summed, then divided) and every prefix sum of k ≤ N of
    // them is within a relative (P + N + 8)·u of the exact value (u = ε/2); both limits are
    // widened by 4(P + N + 8)·ε, more than that, so a sample inside an η-ball in exact
    // arithmetic is never dropped by rounding (the count only grows: still an upper bound).
    let slack = 1.0 + 4.0 * (p + xs.len() + 8) as f64 * f64::EPSILON;
    let (most, mean) = (4.0 * eta * slack, 2.0 * eta * slack);
    let count = |a: usize| -> u64 {
        let mut d: Vec<f64> = xs.iter().map(|b| mse(xs[a], b)).collect();
        d.sort_by(f64::total_cmp);
        let (mut sum, mut best) = (0.0, 0u64);
        for (k, &v) in d.iter().enumerate() {
            sum += v;
            // the k + 1 nearest: the farthest within 4η, the mean within 2η
            if v <= most && sum <= mean * (k + 1) as f64 {
                best = (k + 1) as u64;
            }
        }
        best
    };
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
    Ok(hits.iter().copied().max().unwrap_or(0))
}

/// Runs the attack: features of the shadow models, the reconstructor, the released models and
/// the evaluation. `shadows` must hold every shadow model 0..K in order (trained by
/// [`train_shadows`] with the same data, splits and training, or read back from a file).
///
/// # Errors
/// [`Error::InvalidCount`] `released` above the released split or 0, `shadow_models`
/// mismatch or, with logit features, above |D̄| − [`LOGIT_PROBES`] ([`logit_probes`]); the
/// training's errors.
pub fn attack(
    data: &Dataset,
    splits: &Splits,
    config: &ReconnConfig,
    shadows: &ShadowModels,
    progress: Progress<'_>,
) -> Result<ReconnOutcome> {
    check_shadow_count(splits, config.shadow_models)?;
    if config.features == Features::Logits {
        logit_probes(splits, config.shadow_models)?;
    }
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
    let role = match config.control {
        Control::WithoutTarget => Role::Control,
        _ => Role::Released,
    };
    let items: Vec<(u64, usize)> = (0..targets.len())
        .map(|j| Ok((j as u64, trained_on(splits, config.control, j)?)))
        .collect::<Result<_>>()?;
    train_models(
        &trainer,
        role,
        &items,
        config.threads,
        "released models",
        progress,
    )
}

/// The example released model j is trained on besides D⁻: its target, or with
/// [`Control::WithoutTarget`] the next target of the released split.
fn trained_on(splits: &Splits, control: Control, j: usize) -> Result<usize> {
    let r = &splits.released;
    let at = match control {
        Control::WithoutTarget => (j + 1) % r.len().max(1),
        _ => j,
    };
    r.get(at).copied().ok_or(Error::InvalidCount {
        name: "released",
        value: j as u64,
        expected: "a model index within the released split",
    })
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
    let probes: &[usize] = match config.features {
        Features::Logits => logit_probes(splits, k)?,
        Features::Params => &[],
    };
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
    // a diagnostic: a failed estimate (a non-finite Hessian-vector product) loses no run
    let stability = match released.first() {
        Some(r0) => trainer
            .stability(r0, trained_on(splits, config.control, 0)?)
            .ok(),
        None => None,
    };
    Ok(ReconnOutcome {
        stability,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attacks::trial::success_rate;
    use crate::rng::Rng;

    /// The verdict: worse than (or equal to) the mean image fails whatever the NN count;
    /// below it, reconstructs only when the NN-oracle interval excludes 0 (k ≥ 1).
    #[test]
    fn verdict_needs_both_baselines_beaten_to_say_reconstructs() {
        let outcome = |mse_mean: f64, k: u64| ReconnOutcome {
            targets: Vec::new(),
            mse_mean,
            mse_median: mse_mean,
            nn_oracle_mse_mean: 0.03,
            nn_oracle_mse_median: 0.03,
            baseline_mse_mean: 0.0645,
            beats_nn_oracle: success_rate(k, 100, 0.95).unwrap(),
            test_accuracy: 0.9,
            reconstructor_epochs: (1, 1, 0.0),
            feature_width: 7960,
            rero: None,
            stability: Some(Stability {
                sharpness: 3.0,
                lr_times_sharpness: 0.75,
            }),
        };
        assert_eq!(outcome(0.0995, 0).verdict(), ReconnVerdict::Fails);
        assert_eq!(outcome(0.0995, 40).verdict(), ReconnVerdict::Fails);
        assert_eq!(outcome(0.0645, 40).verdict(), ReconnVerdict::Fails);
        assert_eq!(
            outcome(0.04, 0).verdict(),
            ReconnVerdict::BeatsTheMeanImageOnly
        );
        assert_eq!(outcome(0.037, 1).verdict(), ReconnVerdict::Reconstructs);
        assert_eq!(outcome(f64::NAN, 50).verdict(), ReconnVerdict::Fails);
    }

    /// The 4η count this module used before issue 31: for each sample, the samples within
    /// MSE 4η of it; the largest. Valid but loose: the tests compare against it.
    fn four_eta_count(xs: &[&[f64]], eta: f64) -> u64 {
        xs.iter()
            .map(|a| xs.iter().filter(|b| mse(a, b) <= 4.0 * eta).count() as u64)
            .max()
            .unwrap_or(0)
    }

    /// The samples within MSE η of `z` (the count of the guess z).
    fn in_ball(xs: &[&[f64]], z: &[f64], eta: f64) -> u64 {
        xs.iter().filter(|b| mse(b, z) <= eta).count() as u64
    }

    fn refs(points: &[Vec<f64>]) -> Vec<&[f64]> {
        points.iter().map(Vec::as_slice).collect()
    }

    /// `k` ≤ 16 points z + r·e_i (i < k) in P = 16 dimensions, z = ½𝟙, r²/P = 0.9η — all
    /// within 0.9η of z, pairwise at MSE 1.8η — and `far` 0/1 images with an even number of
    /// ones (pairwise MSE ≥ 2/16, and ≥ 15/64 from the cluster: beyond 4η for η < 0.03).
    /// Pixels in \[0, 1\] (a valid data set) for η ≤ 0.017.
    fn orthogonal_cluster(k: usize, far: usize, eta: f64) -> (Vec<Vec<f64>>, Vec<f64>) {
        let p = 16;
        assert!(k <= p && 0.9 * eta * p as f64 <= 0.25 && far <= 1 << 15);
        let z = vec![0.5; p];
        let r = libm::sqrt(0.9 * eta * p as f64);
        let mut pts = Vec::new();
        for i in 0..k {
            let mut x = z.clone();
            x[i] += r;
            pts.push(x);
        }
        let even = (0u32..1 << 16).filter(|b| b.count_ones() % 2 == 0);
        for bits in even.take(far) {
            pts.push((0..p).map(|i| f64::from((bits >> i) & 1)).collect());
        }
        (pts, z)
    }

    /// A cluster of known size: its k members lie within η of one centre and every other point
    /// is far, so the largest ball holds exactly k samples, and the count is exactly k. The
    /// members are pairwise at MSE 1.8η (in (η, 4η]) and at mean MSE 1.8η(k−1)/k from each
    /// other (in (η, 2η] for k ≥ 3): the count is 1 if its 4η became η, and 2 if its 2η became
    /// η. Exact integers: no tolerance.
    #[test]
    fn ball_count_is_the_size_of_a_cluster_of_known_size() {
        let eta = 0.01;
        for k in [3usize, 5, 9] {
            let (pts, z) = orthogonal_cluster(k, 20, eta);
            let xs = refs(&pts);
            assert_eq!(in_ball(&xs, &z, eta), k as u64, "the cluster is an η-ball");
            assert_eq!(ball_count_bound(&xs, eta, 1).unwrap(), k as u64, "k = {k}");
            assert_eq!(four_eta_count(&xs, eta), k as u64);
        }
        // The smallest clusters: k = 2 (mean 0.9η, largest 1.8η), and a lone sample, which
        // counts itself.
        let (pts, _) = orthogonal_cluster(2, 5, eta);
        assert_eq!(ball_count_bound(&refs(&pts), eta, 1).unwrap(), 2);
        let (pts, _) = orthogonal_cluster(0, 5, eta);
        assert_eq!(ball_count_bound(&refs(&pts), eta, 1).unwrap(), 1);
        assert_eq!(ball_count_bound(&[], eta, 1).unwrap(), 0);
    }

    /// `kappa_of_eta` on a data set holding one cluster of known size k among N images is
    /// Prop. 5's upper confidence bound at k/N: the same bits as [`kappa_from_samples`]`(k, N)`.
    /// Also: only the first [`KAPPA_SAMPLES`] images of the pool count, and any thread count
    /// gives the same bits.
    #[test]
    fn kappa_of_eta_is_prop5_at_a_known_cluster_size() {
        let eta = 0.01;
        let k = 7;
        let (pts, _) = orthogonal_cluster(k, 93, eta);
        let n = pts.len();
        let features: Vec<f64> = pts.concat();
        let data = Dataset::new(features, vec![0; n], (1, 4, 4), 1).unwrap();
        let pool: Vec<usize> = (0..n).rev().collect();
        let want = kappa_from_samples(k as u64, n as u64, 1e-6).unwrap();
        for threads in [1, 2, 3, 8] {
            let got = kappa_of_eta(&data, &pool, eta, threads).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{threads} threads");
        }
        // More than KAPPA_SAMPLES images: the first 2,000 of the pool (here the cluster and
        // 1,993 others, then 10 more copies of a cluster member that must not count).
        let (mut big, _) = orthogonal_cluster(k, KAPPA_SAMPLES - k, eta);
        for _ in 0..10 {
            big.push(pts[0].clone());
        }
        let nb = big.len();
        let data = Dataset::new(big.concat(), vec![0; nb], (1, 4, 4), 1).unwrap();
        let pool: Vec<usize> = (0..nb).collect();
        let want = kappa_from_samples(k as u64, KAPPA_SAMPLES as u64, 1e-6).unwrap();
        let got = kappa_of_eta(&data, &pool, eta, 2).unwrap();
        assert_eq!(got.to_bits(), want.to_bits());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = kappa_of_eta(&data, &pool, bad, 1).unwrap_err();
            assert_eq!(crate::error::error_name(e), "eta");
        }
    }

    /// Tighter than the 4η count: a sample a and six samples a + u_i, u_i orthogonal with
    /// ‖u_i‖²/P = 2.8η. The 4η count takes all seven. The true largest ball holds two: a and
    /// one a + u_i fit around their midpoint (MSE 0.7η), but no three do — the smallest ball
    /// around a, a + u_i, a + u_j has the hypotenuse as diameter (MSE radius 1.4η), around
    /// three a + u_i the circumradius is at MSE 5.6η/3 = 1.87η. The count: from a, k = 3 has
    /// mean 2.8η·2/3 = 1.87η ≤ 2η and k = 4 has 2.1η > 2η; from a + u_i, the others are at
    /// 5.6η > 4η. So 3: true 2 ≤ 3 ≤ 7. Exact integers.
    #[test]
    fn ball_count_is_tighter_than_the_4_eta_count_and_still_an_upper_bound() {
        let (eta, p) = (0.01, 8);
        let r = libm::sqrt(2.8 * eta * p as f64);
        let a = vec![0.3; p];
        let mut pts = vec![a.clone()];
        for i in 0..6 {
            let mut x = a.clone();
            x[i] += r;
            pts.push(x);
        }
        let xs = refs(&pts);
        assert_eq!(four_eta_count(&xs, eta), 7);
        assert_eq!(ball_count_bound(&xs, eta, 1).unwrap(), 3);
        // A ball around a midpoint holds 2; around the centre of a, a + u_0, a + u_1's
        // smallest enclosing ball (the hypotenuse's midpoint), only the two ends of it.
        let mut mid = a.clone();
        mid[0] += 0.5 * r;
        assert_eq!(in_ball(&xs, &mid, eta), 2);
        let mut c = a.clone();
        c[0] += 0.5 * r;
        c[1] += 0.5 * r;
        assert_eq!(in_ball(&xs, &c, eta), 0);
    }

    /// On the line (P = 1) the largest ball is known exactly: the most points in a closed
    /// interval of length 2√η, attained with a point at its left end (centre x_i + √η). For
    /// random points (seeded; 50 draws of 60 points, three radii) the count is at least that
    /// and at most the 4η count — exact integers, no tolerance — and equal to the true size in
    /// some. (On the line the mean condition rarely binds — points spread evenly to both sides
    /// of a within ±t have mean squared distance t²/3 — so the count is mostly the 4η count's;
    /// in many dimensions, where most neighbours sit near the largest distance, it binds: the
    /// orthogonal example above, and MNIST, module docs.)
    #[test]
    fn ball_count_bounds_the_largest_interval_on_the_line() {
        let mut rng = Rng::for_stream(31, 0x004b_4150_5041, 0);
        let mut exact = 0;
        for _ in 0..50 {
            let pts: Vec<Vec<f64>> = (0..60).map(|_| vec![rng.uniform()]).collect();
            let xs = refs(&pts);
            for eta in [1e-4, 1e-3, 1e-2] {
                let h = libm::sqrt(eta);
                let truth = xs
                    .iter()
                    .flat_map(|x| [x[0] - h, x[0], x[0] + h])
                    .map(|z| in_ball(&xs, &[z], eta))
                    .max()
                    .unwrap();
                let got = ball_count_bound(&xs, eta, 2).unwrap();
                let old = four_eta_count(&xs, eta);
                assert!(truth <= got && got <= old, "{truth} {got} {old}");
                exact += usize::from(got == truth);
            }
        }
        assert!(exact > 0);
    }

    /// In the plane (P = 2) the largest disc of radius ρ = √(2η) holding the most points can
    /// be moved until two points lie on its boundary (or it is centred on a point): trying
    /// every such centre finds the true largest ball. For random points (seeded; 20 draws of
    /// 40 points in the unit square, two radii) the count is at least every such ball's size
    /// and at most the 4η count. Exact integers, no tolerance.
    #[test]
    fn ball_count_bounds_every_disc_in_the_plane() {
        let mut rng = Rng::for_stream(31, 0x004b_4150_5042, 0);
        for _ in 0..20 {
            let pts: Vec<Vec<f64>> = (0..40)
                .map(|_| vec![rng.uniform(), rng.uniform()])
                .collect();
            let xs = refs(&pts);
            for eta in [2e-3, 1e-2] {
                let rho2 = 2.0 * eta;
                let mut centres: Vec<[f64; 2]> = xs.iter().map(|x| [x[0], x[1]]).collect();
                for (i, a) in xs.iter().enumerate() {
                    for b in &xs[i + 1..] {
                        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                        let d2 = dx * dx + dy * dy;
                        if d2 == 0.0 || d2 > 4.0 * rho2 {
                            continue;
                        }
                        let (mx, my) = (0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]));
                        let t = libm::sqrt((rho2 - d2 / 4.0) / d2);
                        // a hair inside, so both boundary points count despite rounding
                        for s in [t, -t] {
                            centres.push([mx - s * dy, my + s * dx]);
                        }
                    }
                }
                let truth = centres
                    .iter()
                    .map(|z| in_ball(&xs, z, eta * (1.0 + 1e-12)))
                    .max()
                    .unwrap();
                let got = ball_count_bound(&xs, eta, 3).unwrap();
                assert!(truth <= got, "{truth} > {got}");
                assert!(got <= four_eta_count(&xs, eta));
            }
        }
    }

    /// The conditions are sharp: two samples at ±√η around z (P = 1) are an η-ball whose
    /// members are at MSE exactly 4η with mean exactly 2η — counted 2, not 1. Binary
    /// fractions: every MSE is exact.
    #[test]
    fn ball_count_takes_the_limits_of_both_conditions() {
        let eta = 0.25; // √η = 0.5
        let pts = [vec![0.0], vec![1.0], vec![3.0]];
        assert_eq!(ball_count_bound(&refs(&pts), eta, 1).unwrap(), 2);
    }

    /// The count is the same for any thread count (every row alone), and ragged samples are
    /// refused.
    #[test]
    fn ball_count_is_the_same_for_any_thread_count() {
        let mut rng = Rng::for_stream(31, 0x004b_4150_5043, 0);
        let pts: Vec<Vec<f64>> = (0..101)
            .map(|_| (0..4).map(|_| rng.uniform()).collect())
            .collect();
        let xs = refs(&pts);
        let one = ball_count_bound(&xs, 0.01, 1).unwrap();
        for t in [2, 3, 7, 200] {
            assert_eq!(ball_count_bound(&xs, 0.01, t).unwrap(), one);
        }
        let ragged = [&[0.0, 1.0][..], &[0.0][..]];
        assert!(ball_count_bound(&ragged, 0.01, 1).is_err());
    }

    /// The logit probes are the last 200 images of D̄, none of them a shadow target
    /// (`aux[..K]`) for any K the check lets through, the same for every K; K beyond
    /// |D̄| − 200 is refused naming `shadow_models`.
    #[test]
    fn logit_probes_are_never_shadow_targets() {
        let splits = Splits::draw(10_000, 999, 1).unwrap();
        let n = splits.aux.len();
        assert_eq!(n, 8001);
        let last = logit_probes(&splits, n - LOGIT_PROBES).unwrap();
        assert_eq!(last.len(), LOGIT_PROBES);
        for k in [10, 1000, n - LOGIT_PROBES] {
            let probes = logit_probes(&splits, k).unwrap();
            assert_eq!(probes, last, "K = {k}");
            assert!(
                probes.iter().all(|p| !splits.aux[..k].contains(p)),
                "K = {k}"
            );
        }
        let e = logit_probes(&splits, n - LOGIT_PROBES + 1).unwrap_err();
        assert_eq!(crate::error::error_name(e), "shadow_models");
        // A D̄ of fewer than 200 images has no probes to spare.
        let small = Splits::draw(200, 10, 1).unwrap();
        assert!(small.aux.len() < LOGIT_PROBES);
        assert!(logit_probes(&small, 10).is_err());
    }

    /// `above_bound` is the 95 % interval's lower end strictly above γ.
    #[test]
    fn rero_check_is_above_the_bound_only_when_its_interval_is() {
        let check = |hits: u64, gamma: f64| ReroCheck {
            eta: 0.02,
            kappa: 0.1,
            gamma,
            success: success_rate(hits, 100, 0.95).unwrap(),
        };
        // 60/100: Clopper–Pearson 95 % lower end 0.497.
        assert!(check(60, 0.4).above_bound());
        assert!(!check(60, 0.5).above_bound());
        assert!(
            !check(0, 0.0).above_bound(),
            "lower end 0 is not above γ = 0"
        );
        let c = check(60, 0.5);
        assert!(!ReroCheck {
            gamma: c.success.lower,
            ..c
        }
        .above_bound());
    }
}
