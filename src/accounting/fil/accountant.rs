//! The FIL accountant of DP-SGD (Guo et al. 2022, Alg. 1): a training [`Observer`] that, at
//! every step, adds κ·I_t(z) (or its trace) for every example z in the batch.
//!
//! # The computation
//!
//! At step t with parameters w_t (from [`StepInfo`]) and noise std s of the gradient sum
//! (s = `noise_std`·`normaliser` = σ·S, the smaller of that and σ·S from the configuration),
//! for every example z = (x, y) of the batch the accountant recomputes the clipped gradient
//! g̃_t(z) and derivatives J e_i of J = ∂g̃_t(z)/∂x along input coordinates. Then:
//!
//! - [`FilMode::Trace`] with k coordinates: Tr(I_t) ≈ (d/k)·Σ_{i∈S} ‖J e_i‖²/s² (Eq. 5), S a
//!   uniform k-subset of 0..d drawn **without replacement, fresh per example and step**
//!   (k = d: S = 0..d, the exact trace, no randomness). The squared norms come from
//!   [`Sequential::clipped_jvp_sq_norms`] (up to 64 coordinates per call), which never forms
//!   the p-vectors J e_i: ‖J e_i‖² = c²‖dg_i‖² + (2cc′/‖g‖ + c′²)(g·dg_i)² from the one
//!   clipping factor c(‖g‖) of [`crate::train::clip`], with layer-wise identities for
//!   ‖dg_i‖² and g·dg_i. It agrees with the direct computation below to ~1e-10 relative
//!   (tested in `nn`).
//! - [`FilMode::Full`]: I_t = JᵀJ/s² (d × d), from the columns J e_i computed in `Dual<8>`
//!   arithmetic ([`Sequential::loss_and_grad_jvp`] then [`clip`], 8 coordinates per pass),
//!   by blocks of columns ([`super::fisher::GRAM_BLOCK_BYTES`]).
//!
//! κ·Tr(I_t) (and κ·I_t) is added to the example's total; a step whose batch misses the
//! example adds nothing. The label is treated as public; z is the input x.
//!
//! # Randomness
//!
//! The coordinates of example i at step t are drawn from `Rng::for_trial(m, t·n + i)`
//! (wrapping arithmetic; distinct for t < 2⁶⁴/n) by a partial Fisher–Yates shuffle, exactly
//! as [`Rng::subset`]`(d, k)`, where m = `Rng::for_trial(seed, 0x4649_4C5F_434F_4F52)`'s
//! first output. The extra level keeps these streams apart from DP-SGD's
//! (`Rng::for_trial(seed, 2t)` and `(seed, 2t + 1)`) even when both runs use the same seed:
//! otherwise the coordinates of example 0 at step 0 would reuse the very draws that decided
//! whether it is in the batch. Same seeds, same inputs → bit-identical results.
//!
//! # Memory
//!
//! Trace mode: the workspace of [`Sequential::clipped_jvp_sq_norms`] for min(k, 64)
//! coordinates — O(min(k, 64)·(Σ layer sizes + largest layer's weights)) floats, about
//! 1.6·p·k for the MNIST ConvNet at k = 50 (17 MB; the p × d Jacobian would be 163 MB; checked
//! by `tests/memory`) — O(d) for the coordinates, O(n) results; nothing is allocated per
//! example or per step. Full mode
//! additionally keeps one d × d matrix per example that has been in a batch (**n·d² floats**:
//! 4.9 GB for n = 1000, d = 784 — use it for small d; d ≤ [`MAX_FULL_DIM`]), a d × d scratch
//! and a block of at most 32 MiB of Jacobian columns.

use super::bounds::{dfil, spectral_mse_bound, unbiased_mse_bound};
use super::fisher::{gram_into, noise_variance, GramWork, CHUNK, GRAM_BLOCK_BYTES};
use super::kappa::{
    classical_step_epsilon, default_delta, kappa as kappa_of, step_epsilon, step_mu, Adjacency,
};
use crate::autodiff::Dual;
use crate::data::Dataset;
use crate::error::{check_count, check_open_unit, Error, Result};
use crate::nn::{FilWorkspace, Sequential, Workspace};
use crate::rng::Rng;
use crate::train::clip::clip;
use crate::train::dpsgd::{Clipping, DpSgdConfig};
use crate::train::observer::{check_fits, Observer, StepInfo};
use crate::train::sampling::{BatchSampler, Sampling};
use alloc::vec::Vec;

/// The largest input dimension d accepted by [`FilMode::Full`].
pub const MAX_FULL_DIM: usize = 1024;

/// JVP lanes per forward-over-reverse pass (Full mode).
const LANES: usize = CHUNK;

/// The most coordinates per call of [`Sequential::clipped_jvp_sq_norms`] (Trace mode): 64
/// covers the paper's k = 50 in one call (one primal pass per example and step) and bounds
/// the workspace at O(64 · (Σ layer sizes + largest layer's weights)) floats.
const FAST_CHUNK: usize = 64;

/// The trial index that derives the coordinate-sampling master seed from the configured
/// seed ("FIL_COOR" in ASCII).
const COORD_STREAM: u64 = 0x4649_4C5F_434F_4F52;

/// Which κ of Guo Thm 4 multiplies each step's Fisher information.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KappaRule {
    /// κ = 1 (Eq. 2): valid for every sampling scheme.
    One,
    /// κ = q/(q + (1−q)e^{−ε}) (Eq. 3) with the exact-tail ε at per-step failure probability
    /// `delta` (None → δ = 1/(n·T)). Poisson (add/remove ε) and fixed-size (replace-one ε);
    /// full batch gives κ = 1; shuffle → Error::InvalidParameter "kappa".
    Subsampled {
        /// The per-step failure probability δ ∈ (0, 1); `None` for 1/(n·T).
        delta: Option<f64>,
    },
}

/// How Tr(I) (and I) is computed per example and step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilMode {
    /// Unbiased estimate of the trace from `coords` = k distinct input coordinates drawn
    /// uniformly without replacement per example per step, scaled by d/k (k = d: exact trace).
    Trace {
        /// k, in 1..=d.
        coords: usize,
    },
    /// The full d × d matrix (for small d; d ≤ 1024 enforced, error "d" otherwise), giving also
    /// ‖I‖₂ and the biased bound.
    Full,
}

/// The configuration of a [`FilAccountant`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FilConfig {
    /// Trace estimate or full matrix.
    pub mode: FilMode,
    /// κ = 1 or the subsampled κ of Eq. 3.
    pub kappa: KappaRule,
    /// Seed of the coordinate sampling (see the [module docs](self)).
    pub seed: u64,
}

impl Default for FilConfig {
    /// `Trace { coords: 50 }` (Guo §7.2), `Subsampled { delta: None }`, seed 0.
    fn default() -> Self {
        FilConfig {
            mode: FilMode::Trace { coords: 50 },
            kappa: KappaRule::Subsampled { delta: None },
            seed: 0,
        }
    }
}

/// One example's FIL after a run ([`FilAccountant::results`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FilExample {
    /// The example's index in the training set.
    pub index: usize,
    /// Its label (treated as public).
    pub label: u32,
    /// Number of steps in which the example was in the batch.
    pub steps_in_batch: u64,
    /// κ Σ_t Tr(I_t) (an unbiased estimate in Trace mode with k < d).
    pub trace: f64,
    /// η̄² = trace/d.
    pub dfil: f64,
    /// Thm 2 unbiased bound d/trace; None when trace == 0 (never sampled: no information).
    pub mse_bound: Option<f64>,
    /// Full mode: 1/‖I‖₂ (certified); None otherwise.
    pub spectral_bound: Option<f64>,
}

/// Eq. 4: the average of R independent runs for one example ([`average_runs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FilAverage {
    /// The example's index.
    pub index: usize,
    /// Its label.
    pub label: u32,
    /// R, the number of runs.
    pub runs: usize,
    /// The mean of the runs' traces.
    pub mean_trace: f64,
    /// The sample standard deviation of the traces over runs (0 for R = 1).
    pub std_trace: f64,
    /// The smallest trace.
    pub min_trace: f64,
    /// The largest trace.
    pub max_trace: f64,
    /// mean_trace/d.
    pub dfil: f64,
    /// d/mean_trace, rounded down; None when mean_trace == 0.
    pub mse_bound: Option<f64>,
}

/// The `Dual<8>` gradient and its workspace.
#[derive(Clone, Debug)]
struct DualBuf {
    grad: Vec<Dual<LANES>>,
    ws: Workspace<Dual<LANES>>,
}

/// The dual buffers and the coordinate buffers, reused for every example.
#[derive(Clone, Debug)]
struct Jvp {
    /// Full mode only.
    buf: Option<DualBuf>,
    pool: Vec<usize>,
    coords: Vec<usize>,
    /// Trace mode: the workspace of [`Sequential::clipped_jvp_sq_norms`] and its output.
    fast: FilWorkspace,
    sq: Vec<f64>,
}

/// One example at one step: the parameters, the input and the label.
#[derive(Clone, Copy)]
struct Example<'b> {
    params: &'b [f64],
    x: &'b [f64],
    label: usize,
}

/// Writes the clipped gradient and its derivatives along `coords` (≤ 8) into `buf.grad`.
fn clipped_jvp(
    model: &Sequential,
    ex: Example<'_>,
    clipping: Clipping,
    coords: &[usize],
    buf: &mut DualBuf,
) -> Result<()> {
    model.loss_and_grad_jvp::<LANES>(
        ex.params,
        ex.x,
        ex.label,
        coords,
        &mut buf.grad,
        &mut buf.ws,
    )?;
    clip(&mut buf.grad, clipping.method, clipping.norm)?;
    Ok(())
}

/// `k` distinct coordinates of 0..d into `out`, ascending: the same draws and result as
/// [`Rng::subset`]`(d, k)`, without allocating (`pool` is reused).
fn draw_coords(
    rng: &mut Rng,
    d: usize,
    k: usize,
    pool: &mut Vec<usize>,
    out: &mut Vec<usize>,
) -> Result<()> {
    pool.clear();
    pool.extend(0..d);
    for i in 0..k.min(d) {
        let j = i + rng.below((d - i) as u64)? as usize;
        pool.swap(i, j);
    }
    out.clear();
    out.extend_from_slice(pool.get(..k).unwrap_or_default());
    out.sort_unstable();
    Ok(())
}

/// The FIL accountant of Alg. 1: observe a DP-SGD run ([`crate::train::dpsgd::train`] with
/// this as the observer), then read [`results`](Self::results).
///
/// The accountant recomputes g̃ and J e_i itself from (params, batch) with the model and data
/// it was given ([`Observer::wants_per_example`] is `false`). See the [module docs](self) for
/// the computation, randomness and memory.
#[derive(Clone, Debug)]
pub struct FilAccountant<'a> {
    model: &'a Sequential,
    data: &'a Dataset,
    mode: FilMode,
    n: usize,
    d: usize,
    p: usize,
    kappa: f64,
    epsilon: Option<f64>,
    delta: Option<f64>,
    classical: Option<f64>,
    sampling_rate: f64,
    clipping: Clipping,
    noise_std_of_sum: f64,
    coord_seed: u64,
    steps_observed: u64,
    steps_in_batch: Vec<u64>,
    trace: Vec<f64>,
    /// Full mode: κ Σ_t I_t per example, empty until the example is first in a batch.
    matrices: Vec<Vec<f64>>,
    jvp: Jvp,
    gram: Vec<f64>,
    gram_work: GramWork,
    /// The block budget of Full mode ([`GRAM_BLOCK_BYTES`]; smaller in tests).
    gram_block_bytes: usize,
}

impl<'a> FilAccountant<'a> {
    /// An accountant for DP-SGD on `model` and `data` with the run's configuration `train`
    /// (sampling, batch size, clipping, σ, steps) and the FIL configuration `config`.
    ///
    /// # Formula
    ///
    /// κ = 1 ([`KappaRule::One`], or q = 1) or κ = q/(q + (1 − q)e^{−ε}) with
    /// ε = μΦ⁻¹(1 − δ) + μ²/2, μ = 1/σ (Poisson) or 2/σ (fixed-size), q = B/n,
    /// δ = `delta` or 1/(n·T) ([`super::kappa`]).
    ///
    /// # Citations
    ///
    /// Guo, Karrer, Chaudhuri, van der Maaten 2022, Alg. 1, Thms 3–4, Eq. 4–5,
    /// `guo2022-bounding-reconstruction-fil-rdp.txt`.
    ///
    /// # Errors
    ///
    /// - As [`DpSgdConfig::validate`]; [`Error::InvalidParameter`] `noise_multiplier` if
    ///   clipping is off or σ = 0 (FIL needs noise), or σ·S is too small or large for s²;
    /// - [`Error::Inconsistent`] if the data do not fit the model; [`Error::InvalidCount`]
    ///   `batch_size` as for [`BatchSampler::new`];
    /// - [`Error::InvalidCount`] `fil_coords` unless k ∈ 1..=d; `d` if d > [`MAX_FULL_DIM`]
    ///   in Full mode;
    /// - [`Error::InvalidParameter`] `kappa` for [`KappaRule::Subsampled`] with shuffled
    ///   epochs; `delta` unless in (0, 1); the errors of [`super::kappa`].
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// use reconbound::data::synthetic::gaussian_blobs;
    /// use reconbound::nn::arch;
    /// use reconbound::train::dpsgd::DpSgdConfig;
    /// use reconbound::train::sampling::Sampling;
    ///
    /// let data = gaussian_blobs(100, 4, 2, 0.3, 1)?;
    /// let model = arch::logistic_regression(4)?;
    /// let dp = DpSgdConfig { batch_size: 10, steps: 20, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// // Poisson, q = 0.1, σ = 1, δ = 1/(100·20): ε = Φ⁻¹(1 − δ) + 1/2.
    /// assert!((fil.step_epsilon().unwrap() - 3.790_526_731_491_895).abs() < 1e-12);
    /// assert!(fil.kappa() > 0.1 && fil.kappa() < 1.0);
    /// // Shuffled epochs admit only κ = 1.
    /// let shuffle = DpSgdConfig { sampling: Sampling::Shuffle, ..dp };
    /// assert!(FilAccountant::new(&model, &data, &shuffle, &FilConfig::default().with_coords(4)).is_err());
    /// let one = FilConfig { kappa: KappaRule::One, mode: FilMode::Full, seed: 0 };
    /// assert_eq!(FilAccountant::new(&model, &data, &shuffle, &one)?.kappa(), 1.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(
        model: &'a Sequential,
        data: &'a Dataset,
        train: &DpSgdConfig,
        config: &FilConfig,
    ) -> Result<Self> {
        train.validate()?;
        let clipping = match train.clipping {
            Some(c) if train.noise_multiplier > 0.0 => c,
            _ => {
                return Err(Error::InvalidParameter {
                    name: "noise_multiplier",
                    value: train.noise_multiplier,
                    expected: "> 0 with clipping on (FIL accounting needs noise)",
                })
            }
        };
        check_fits(model, data)?;
        let sampler = BatchSampler::new(train.sampling, data.len(), train.batch_size)?;
        let q = sampler.sampling_rate();
        let s = train.noise_std_of_sum()?;
        noise_variance(s).map_err(|_| {
            // Blame σ if σ² alone is out of range, else the clipping norm behind S.
            let sigma = train.noise_multiplier;
            if noise_variance(sigma).is_err() {
                Error::InvalidParameter {
                    name: "noise_multiplier",
                    value: sigma,
                    expected: "with (σ·S)² a normal f64 (S the clipping sensitivity)",
                }
            } else {
                Error::InvalidParameter {
                    name: "clip_norm",
                    value: clipping.norm,
                    expected: "with (σ·S)² a normal f64 (S the clipping sensitivity)",
                }
            }
        })?;
        let (n, d, p) = (data.len(), data.dim(), model.num_params());
        match config.mode {
            FilMode::Trace { coords } if coords == 0 || coords > d => {
                return Err(Error::InvalidCount {
                    name: "fil_coords",
                    value: coords as u64,
                    expected: "in 1..=d (the input dimension)",
                })
            }
            FilMode::Full if d > MAX_FULL_DIM => {
                return Err(Error::InvalidCount {
                    name: "d",
                    value: d as u64,
                    expected: "<= 1024 for FilMode::Full (n·d² floats); use FilMode::Trace",
                })
            }
            _ => {}
        }
        let (kappa, epsilon, delta, classical) = match config.kappa {
            KappaRule::One => (1.0, None, None, None),
            KappaRule::Subsampled { delta } => {
                if let Some(dl) = delta {
                    check_open_unit("delta", dl)?;
                }
                if train.sampling == Sampling::Shuffle {
                    return Err(Error::InvalidParameter {
                        name: "kappa",
                        value: q,
                        expected: "KappaRule::One with shuffled epochs (batches are not independent across steps)",
                    });
                }
                match Adjacency::of_sampling(train.sampling) {
                    Some(adj) if q < 1.0 => {
                        let dl = match delta {
                            Some(dl) => dl,
                            None => default_delta(n, train.steps)?,
                        };
                        let mu = step_mu(train.noise_multiplier, adj)?;
                        let eps = step_epsilon(mu, dl)?;
                        let classical = classical_step_epsilon(mu, dl)?;
                        (kappa_of(q, eps)?, Some(eps), Some(dl), Some(classical))
                    }
                    // Full batch (or B = n): q = 1, κ = 1 whatever ε.
                    _ => (1.0, None, None, None),
                }
            }
        };
        let k = match config.mode {
            FilMode::Trace { coords } => coords,
            FilMode::Full => d,
        };
        let (matrices, gram) = match config.mode {
            FilMode::Full => (alloc::vec![Vec::new(); n], alloc::vec![0.0; d * d]),
            FilMode::Trace { .. } => (Vec::new(), Vec::new()),
        };
        let coord_seed = Rng::for_trial(config.seed, COORD_STREAM).next_u64();
        // Trace mode runs the fast path in chunks of at most FAST_CHUNK coordinates; Full mode
        // the `Dual<8>` columns. Each mode allocates only its own buffers.
        let (fast_chunk, buf) = match config.mode {
            FilMode::Trace { .. } => (k.clamp(1, FAST_CHUNK), None),
            FilMode::Full => (
                0,
                Some(DualBuf {
                    grad: alloc::vec![Dual::default(); p],
                    ws: model.workspace::<Dual<LANES>>(),
                }),
            ),
        };
        Ok(FilAccountant {
            model,
            data,
            mode: config.mode,
            n,
            d,
            p,
            kappa,
            epsilon,
            delta,
            classical,
            sampling_rate: q,
            clipping,
            noise_std_of_sum: s,
            coord_seed,
            steps_observed: 0,
            steps_in_batch: alloc::vec![0; n],
            trace: alloc::vec![0.0; n],
            matrices,
            jvp: Jvp {
                buf,
                pool: Vec::with_capacity(d),
                coords: Vec::with_capacity(k),
                fast: model.fil_workspace(fast_chunk),
                sq: alloc::vec![0.0; fast_chunk],
            },
            gram,
            gram_work: GramWork::default(),
            gram_block_bytes: GRAM_BLOCK_BYTES,
        })
    }

    /// The κ multiplying every step's Fisher information (1 for [`KappaRule::One`] and the
    /// full batch).
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let one = FilConfig { kappa: KappaRule::One, ..FilConfig::default().with_coords(4) };
    /// assert_eq!(FilAccountant::new(&model, &data, &dp, &one)?.kappa(), 1.0);
    /// let sub = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// assert!(sub.kappa() > 0.1 && sub.kappa() <= 1.0); // q = 0.1
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn kappa(&self) -> f64 {
        self.kappa
    }

    /// The per-step ε used for κ (None for KappaRule::One / full batch).
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// use reconbound::accounting::fil::kappa::{step_epsilon, step_mu, Adjacency};
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// // Fixed-size batches: replace-one, μ = 2/σ = 4; δ = 1/(n·T).
    /// let mu = step_mu(0.5, Adjacency::ReplaceOne)?;
    /// assert_eq!(fil.step_epsilon(), Some(step_epsilon(mu, fil.step_delta().unwrap())?));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn step_epsilon(&self) -> Option<f64> {
        self.epsilon
    }

    /// The per-step failure probability δ of that ε (None when no ε is used).
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// let delta = fil.step_delta().unwrap();
    /// assert!(delta <= 1.0 / 500.0 && delta > 0.999 / 500.0); // 1/(n·T)
    /// let full = DpSgdConfig { sampling: Sampling::FullBatch, ..dp };
    /// let fil = FilAccountant::new(&model, &data, &full, &FilConfig::default().with_coords(4))?;
    /// assert_eq!((fil.step_delta(), fil.step_epsilon(), fil.kappa()), (None, None, 1.0));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn step_delta(&self) -> Option<f64> {
        self.delta
    }

    /// The classical ε = μ√(2 ln(1.25/δ)) at the same μ and δ, for comparison with Alg. 1
    /// line 4 ([`super::kappa::classical_step_epsilon`]; not used, and not a valid bound when
    /// ≥ 1). None when no ε is used.
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// // μ = 4 ≫ 1: the classical value is ≥ 1 (no guarantee) and only shown for comparison.
    /// assert!(fil.classical_step_epsilon().unwrap() > 1.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn classical_step_epsilon(&self) -> Option<f64> {
        self.classical
    }

    /// The sampling rate q = B/n (1 for the full batch).
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// assert_eq!(fil.sampling_rate(), 0.1);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn sampling_rate(&self) -> f64 {
        self.sampling_rate
    }

    /// The noise std of the gradient sum, σ·S, from the configuration.
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// // σ·1.11522·C for GELU clipping: the divisor of Eq. 1 is its square, not σ².
    /// assert!((fil.noise_std_of_sum() - 0.5 * 1.11522 * 2.0).abs() < 1e-15);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn noise_std_of_sum(&self) -> f64 {
        self.noise_std_of_sum
    }

    /// The input dimension d.
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(4))?;
    /// assert_eq!(fil.dim(), 4);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The mode (trace estimate or full matrix).
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// let fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(3))?;
    /// assert_eq!(fil.mode(), FilMode::Trace { coords: 3 });
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn mode(&self) -> FilMode {
        self.mode
    }

    /// Number of steps observed so far.
    ///
    /// ```
    /// # use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// # use reconbound::data::synthetic::gaussian_blobs;
    /// # use reconbound::nn::arch;
    /// # use reconbound::train::clip::ClipMethod;
    /// # use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
    /// # use reconbound::train::sampling::Sampling;
    /// # let data = gaussian_blobs(50, 4, 2, 0.3, 1)?;
    /// # let model = arch::logistic_regression(4)?;
    /// // 50 examples in 4 dimensions, GELU clipping, σ = 0.5, fixed-size batches of 5, T = 10.
    /// # let clipping = Some(Clipping { method: ClipMethod::Gelu, norm: 2.0 });
    /// # let dp = DpSgdConfig { clipping, noise_multiplier: 0.5, sampling: Sampling::FixedSize,
    /// #                        batch_size: 5, steps: 10, ..DpSgdConfig::default() };
    /// use reconbound::train::dpsgd::train;
    /// let mut fil = FilAccountant::new(&model, &data, &dp, &FilConfig::default().with_coords(2))?;
    /// assert_eq!(fil.steps_observed(), 0);
    /// train(&model, &data, &dp, &mut model.init_params(0), &mut fil)?;
    /// assert_eq!(fil.steps_observed(), 10);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn steps_observed(&self) -> u64 {
        self.steps_observed
    }

    /// One row per training example, in index order.
    ///
    /// # Errors
    ///
    /// [`Error::Numerical`] if a bound cannot be computed (overflow); the errors of
    /// [`spectral_mse_bound`] in Full mode.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// use reconbound::data::synthetic::gaussian_blobs;
    /// use reconbound::nn::arch;
    /// use reconbound::train::dpsgd::{train, DpSgdConfig};
    /// use reconbound::train::sampling::Sampling;
    ///
    /// let data = gaussian_blobs(20, 3, 2, 0.3, 1)?;
    /// let model = arch::logistic_regression(3)?;
    /// let dp = DpSgdConfig { sampling: Sampling::FullBatch, steps: 3, ..DpSgdConfig::default() };
    /// let config = FilConfig { mode: FilMode::Full, kappa: KappaRule::One, seed: 0 };
    /// let mut fil = FilAccountant::new(&model, &data, &dp, &config)?;
    /// let mut params = model.init_params(1);
    /// train(&model, &data, &dp, &mut params, &mut fil)?;
    /// for r in fil.results()? {
    ///     assert_eq!(r.steps_in_batch, 3);
    ///     // 1/‖I‖₂ ≤ d/Tr(I) (Thm 2).
    ///     assert!(r.spectral_bound.unwrap() <= r.mse_bound.unwrap());
    /// }
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn results(&self) -> Result<Vec<FilExample>> {
        let labels = self.data.labels();
        let mut out = Vec::with_capacity(self.n);
        for (index, (&trace, &steps_in_batch)) in
            self.trace.iter().zip(&self.steps_in_batch).enumerate()
        {
            let mse_bound = if trace > 0.0 {
                Some(unbiased_mse_bound(trace, self.d)?)
            } else {
                None
            };
            let spectral_bound = match self.fisher_matrix(index) {
                Some(m) if trace > 0.0 => Some(spectral_mse_bound(m, self.d)?),
                _ => None,
            };
            out.push(FilExample {
                index,
                label: labels.get(index).copied().unwrap_or(0),
                steps_in_batch,
                trace,
                dfil: dfil(trace, self.d)?,
                mse_bound,
                spectral_bound,
            });
        }
        Ok(out)
    }

    /// Full mode only: the accumulated κ Σ_t I_t of example `index` (d × d row-major);
    /// `None` in Trace mode, for `index ≥ n`, and for an example never in a batch (its
    /// Fisher information is 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
    /// use reconbound::data::synthetic::gaussian_blobs;
    /// use reconbound::nn::arch;
    /// use reconbound::train::dpsgd::{train, DpSgdConfig};
    /// use reconbound::train::sampling::Sampling;
    ///
    /// let data = gaussian_blobs(10, 2, 2, 0.3, 1)?;
    /// let model = arch::logistic_regression(2)?;
    /// let dp = DpSgdConfig { sampling: Sampling::FullBatch, steps: 2, ..DpSgdConfig::default() };
    /// let config = FilConfig { mode: FilMode::Full, kappa: KappaRule::One, seed: 0 };
    /// let mut fil = FilAccountant::new(&model, &data, &dp, &config)?;
    /// train(&model, &data, &dp, &mut model.init_params(1), &mut fil)?;
    /// let m = fil.fisher_matrix(0).unwrap();
    /// assert_eq!(m.len(), 4);
    /// assert_eq!(m[1], m[2]); // symmetric
    /// assert!((m[0] + m[3] - fil.results()?[0].trace).abs() < 1e-12 * fil.results()?[0].trace);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn fisher_matrix(&self, index: usize) -> Option<&[f64]> {
        match self.matrices.get(index) {
            Some(m) if !m.is_empty() => Some(m),
            _ => None,
        }
    }

    /// (d/k)·Σ_{i∈S} ‖J e_i‖² for example `index` at `step` (without the 1/s²).
    fn trace_sum(&mut self, ex: Example<'_>, step: u64, index: usize, k: usize) -> Result<f64> {
        let d = self.d;
        let jvp = &mut self.jvp;
        if k == d {
            jvp.coords.clear();
            jvp.coords.extend(0..d);
        } else {
            let trial = step.wrapping_mul(self.n as u64).wrapping_add(index as u64);
            let mut rng = Rng::for_trial(self.coord_seed, trial);
            draw_coords(&mut rng, d, k, &mut jvp.pool, &mut jvp.coords)?;
        }
        let mut sum = 0.0;
        for chunk in jvp.coords.chunks(jvp.fast.max_coords().max(1)) {
            let sq = jvp.sq.get_mut(..chunk.len()).unwrap_or_default();
            self.model.clipped_jvp_sq_norms(
                ex.params,
                ex.x,
                ex.label,
                chunk,
                self.clipping.method,
                self.clipping.norm,
                sq,
                &mut jvp.fast,
            )?;
            sum += sq.iter().sum::<f64>();
        }
        Ok(if k == d {
            sum
        } else {
            sum * (d as f64 / k as f64)
        })
    }

    /// JᵀJ of example (x, label) into `self.gram`; returns Tr(JᵀJ).
    fn gram(&mut self, ex: Example<'_>) -> Result<f64> {
        let (model, clipping, p, d) = (self.model, self.clipping, self.p, self.d);
        let buf = self.jvp.buf.as_mut().ok_or(Error::Inconsistent {
            what: "the Full-mode buffers of a Trace-mode accountant",
            value: 0.0,
        })?;
        let mut lanes = [0usize; LANES];
        gram_into(
            p,
            d,
            self.gram_block_bytes,
            |first, count, out| {
                let mut c0 = 0;
                while c0 < count {
                    let cc = LANES.min(count - c0);
                    for (l, v) in lanes.iter_mut().enumerate() {
                        *v = first + c0 + l;
                    }
                    let coords = lanes.get(..cc).unwrap_or_default();
                    clipped_jvp(model, ex, clipping, coords, buf)?;
                    for (l, col) in out.chunks_exact_mut(p).skip(c0).take(cc).enumerate() {
                        for (o, g) in col.iter_mut().zip(&buf.grad) {
                            *o = g.tangent.get(l).copied().unwrap_or(0.0);
                        }
                    }
                    c0 += cc;
                }
                Ok(())
            },
            &mut self.gram,
            &mut self.gram_work,
        )?;
        Ok((0..d).filter_map(|i| self.gram.get(i * d + i)).sum())
    }
}

impl Observer for FilAccountant<'_> {
    /// `false`: the accountant recomputes what it needs from (params, batch).
    fn wants_per_example(&self) -> bool {
        false
    }

    /// Adds κ·Tr(I_t) (and κ·I_t in Full mode) for every example of the batch.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `params` has the wrong length or the step's noise std
    /// (`noise_std`·`normaliser`) differs from σ·S of the configuration by more than 1e-9
    /// relative; [`Error::InvalidCount`] for a batch index ≥ n; the errors of the JVP and of
    /// clipping; [`Error::Numerical`] if a total is not finite or a Full-mode matrix cannot
    /// be allocated. After an error the totals are unspecified (training stops).
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        if info.params.len() != self.p {
            return Err(Error::Inconsistent {
                what: "params.len() must equal the model's num_params()",
                value: info.params.len() as f64,
            });
        }
        let s_info = info.noise_std * info.normaliser;
        let s_cfg = self.noise_std_of_sum;
        let agrees = libm::fabs(s_info - s_cfg) <= 1e-9 * s_cfg; // false for NaN
        if !agrees {
            return Err(Error::Inconsistent {
                what: "the step's noise std σ·S (noise_std × normaliser) differs from the DpSgdConfig given to FilAccountant::new",
                value: s_info,
            });
        }
        // The smaller of the two (they agree to ~1 ulp): more information, a safer bound.
        let s = s_info.min(s_cfg);
        let scale = self.kappa / (s * s);
        let d = self.d;
        for &index in info.batch {
            let data = self.data;
            let (x, y) = data.example(index).map_err(|_| Error::InvalidCount {
                name: "batch",
                value: index as u64,
                expected: "indices < n (the training set size)",
            })?;
            if let Some(c) = self.steps_in_batch.get_mut(index) {
                *c += 1;
            }
            let ex = Example {
                params: info.params,
                x,
                label: y as usize,
            };
            let add = match self.mode {
                FilMode::Trace { coords } => self.trace_sum(ex, info.step, index, coords)? * scale,
                FilMode::Full => {
                    let tr = self.gram(ex)? * scale;
                    let m = match self.matrices.get_mut(index) {
                        Some(m) => m,
                        None => continue,
                    };
                    if m.is_empty() {
                        m.try_reserve_exact(d * d).map_err(|_| Error::Numerical {
                            what: "cannot allocate an example's d × d Fisher matrix (FilMode::Full keeps n·d² floats)",
                            value: (d * d) as f64,
                        })?;
                        m.resize(d * d, 0.0);
                    }
                    for (a, &g) in m.iter_mut().zip(&self.gram) {
                        *a += scale * g;
                    }
                    tr
                }
            };
            if let Some(t) = self.trace.get_mut(index) {
                *t += add;
                if !t.is_finite() {
                    return Err(Error::Numerical {
                        what: "an example's accumulated Fisher trace is not finite",
                        value: *t,
                    });
                }
            }
        }
        self.steps_observed += 1;
        Ok(())
    }
}

impl FilConfig {
    /// This configuration with `FilMode::Trace { coords }`.
    ///
    /// ```
    /// use reconbound::accounting::fil::{FilConfig, FilMode};
    /// assert_eq!(FilConfig::default().with_coords(8).mode, FilMode::Trace { coords: 8 });
    /// ```
    pub fn with_coords(self, coords: usize) -> Self {
        FilConfig {
            mode: FilMode::Trace { coords },
            ..self
        }
    }
}

/// Eq. 4: per example, the average over R independent runs (same examples, different seeds)
/// of the accumulated trace, with its spread and the resulting dFIL and unbiased bound.
///
/// # Formula
///
/// mean = (1/R)Σ_r trace_r; sd = √(Σ_r (trace_r − mean)²/(R − 1)) (0 for R = 1);
/// dFIL = mean/d; MSE ≥ d/mean (Thm 2), rounded down.
///
/// # Citations
///
/// Guo, Karrer, Chaudhuri, van der Maaten 2022, Eq. 4 and §7.2 (10 runs),
/// `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// [`Error::InvalidCount`] `runs` if empty, `d` if 0; [`Error::Inconsistent`] if the runs
/// have different lengths or rows disagree on index or label; [`Error::InvalidParameter`]
/// `trace` if a trace is negative or not finite.
///
/// # Examples
///
/// ```
/// use reconbound::accounting::fil::{average_runs, FilExample};
/// let row = |trace: f64| FilExample {
///     index: 0, label: 1, steps_in_batch: 3, trace, dfil: trace / 2.0,
///     mse_bound: Some(2.0 / trace), spectral_bound: None,
/// };
/// let avg = average_runs(&[vec![row(1.0)], vec![row(3.0)]], 2)?;
/// assert_eq!((avg[0].mean_trace, avg[0].min_trace, avg[0].max_trace), (2.0, 1.0, 3.0));
/// assert!((avg[0].std_trace - 2f64.sqrt()).abs() < 1e-15);
/// assert_eq!(avg[0].dfil, 1.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn average_runs(runs: &[Vec<FilExample>], d: usize) -> Result<Vec<FilAverage>> {
    let first = match runs.first() {
        Some(f) => f,
        None => {
            return Err(Error::InvalidCount {
                name: "runs",
                value: 0,
                expected: ">= 1",
            })
        }
    };
    check_count("d", d as u64, 1, ">= 1")?;
    for run in runs {
        if run.len() != first.len() {
            return Err(Error::Inconsistent {
                what: "all runs must have the same number of examples",
                value: run.len() as f64,
            });
        }
        for (a, b) in run.iter().zip(first) {
            if a.index != b.index || a.label != b.label {
                return Err(Error::Inconsistent {
                    what: "runs disagree on an example's index or label (different data?)",
                    value: a.index as f64,
                });
            }
            if !(a.trace.is_finite() && a.trace >= 0.0) {
                return Err(Error::InvalidParameter {
                    name: "trace",
                    value: a.trace,
                    expected: "finite and >= 0",
                });
            }
        }
    }
    let r = runs.len();
    let mut out = Vec::with_capacity(first.len());
    for (row, head) in first.iter().enumerate() {
        let traces = runs.iter().filter_map(|run| run.get(row)).map(|e| e.trace);
        let mean = traces.clone().sum::<f64>() / r as f64;
        let std = if r > 1 {
            let ss: f64 = traces.clone().map(|t| (t - mean) * (t - mean)).sum();
            libm::sqrt(ss / (r - 1) as f64)
        } else {
            0.0
        };
        let min = traces.clone().fold(f64::INFINITY, f64::min);
        let max = traces.fold(f64::NEG_INFINITY, f64::max);
        out.push(FilAverage {
            index: head.index,
            label: head.label,
            runs: r,
            mean_trace: mean,
            std_trace: std,
            min_trace: min,
            max_trace: max,
            dfil: dfil(mean, d)?,
            mse_bound: if mean > 0.0 {
                Some(unbiased_mse_bound(mean, d)?)
            } else {
                None
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic::gaussian_blobs;
    use crate::error::error_name;
    use crate::nn::arch;
    use crate::train::clip::ClipMethod;
    use crate::train::dpsgd::train;
    use alloc::vec;

    fn dp(sampling: Sampling) -> DpSgdConfig {
        DpSgdConfig {
            learning_rate: 0.5,
            momentum: 0.0,
            weight_decay: 0.0,
            clipping: Some(Clipping {
                method: ClipMethod::Gelu,
                norm: 0.5,
            }),
            noise_multiplier: 0.8,
            sampling,
            batch_size: 5,
            steps: 4,
            seed: 3,
        }
    }

    fn cfg(mode: FilMode, kappa: KappaRule, seed: u64) -> FilConfig {
        FilConfig { mode, kappa, seed }
    }

    #[test]
    fn draw_coords_is_rng_subset_without_allocating() {
        // Same draws, same result as Rng::subset for every (d, k) tried.
        let (mut pool, mut out) = (Vec::new(), Vec::new());
        for (d, k) in [(1, 1), (10, 3), (784, 50), (784, 784), (33, 32)] {
            for seed in 0..5 {
                let mut a = Rng::for_trial(seed, d as u64);
                let mut b = a.clone();
                draw_coords(&mut a, d, k, &mut pool, &mut out).unwrap();
                assert_eq!(out, b.subset(d, k).unwrap(), "d {d} k {k} seed {seed}");
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }

    #[test]
    fn kappa_rules_per_sampling_scheme() {
        let data = gaussian_blobs(50, 3, 2, 0.3, 1).unwrap();
        let model = arch::logistic_regression(3).unwrap();
        let sub = KappaRule::Subsampled { delta: None };
        let mode = FilMode::Trace { coords: 2 };
        // Poisson: μ = 1/σ, δ = 1/(n·T); fixed-size: μ = 2/σ.
        for (sampling, adj) in [
            (Sampling::Poisson, Adjacency::AddRemove),
            (Sampling::FixedSize, Adjacency::ReplaceOne),
        ] {
            let c = dp(sampling);
            let f = FilAccountant::new(&model, &data, &c, &cfg(mode, sub, 0)).unwrap();
            let delta = default_delta(50, 4).unwrap();
            let eps = step_epsilon(step_mu(0.8, adj).unwrap(), delta).unwrap();
            assert_eq!(f.step_delta(), Some(delta));
            assert_eq!(f.step_epsilon(), Some(eps));
            assert_eq!(f.kappa(), kappa_of(0.1, eps).unwrap());
            let classical = classical_step_epsilon(step_mu(0.8, adj).unwrap(), delta).unwrap();
            assert_eq!(f.classical_step_epsilon(), Some(classical));
            assert_eq!(f.sampling_rate(), 0.1);
            // An explicit δ is used as given.
            let f = FilAccountant::new(
                &model,
                &data,
                &c,
                &cfg(mode, KappaRule::Subsampled { delta: Some(1e-3) }, 0),
            )
            .unwrap();
            assert_eq!(f.step_delta(), Some(1e-3));
            // κ = 1 never uses ε.
            let f = FilAccountant::new(&model, &data, &c, &cfg(mode, KappaRule::One, 0)).unwrap();
            assert_eq!(
                (f.kappa(), f.step_epsilon(), f.step_delta()),
                (1.0, None, None)
            );
        }
        // Poisson κ is smaller than fixed-size κ (μ = 1/σ vs 2/σ).
        let kp = FilAccountant::new(&model, &data, &dp(Sampling::Poisson), &cfg(mode, sub, 0))
            .unwrap()
            .kappa();
        let kf = FilAccountant::new(&model, &data, &dp(Sampling::FixedSize), &cfg(mode, sub, 0))
            .unwrap()
            .kappa();
        assert!(kp < kf && kp > 0.1, "{kp} {kf}");
        // Full batch and B = n: κ = 1, no ε.
        for c in [
            dp(Sampling::FullBatch),
            DpSgdConfig {
                batch_size: 50,
                ..dp(Sampling::FixedSize)
            },
        ] {
            let f = FilAccountant::new(&model, &data, &c, &cfg(mode, sub, 0)).unwrap();
            assert_eq!(
                (f.kappa(), f.step_epsilon(), f.step_delta()),
                (1.0, None, None)
            );
        }
        // Shuffle: only κ = 1.
        let e = FilAccountant::new(&model, &data, &dp(Sampling::Shuffle), &cfg(mode, sub, 0));
        assert_eq!(error_name(e.unwrap_err()), "kappa");
        let f = FilAccountant::new(
            &model,
            &data,
            &dp(Sampling::Shuffle),
            &cfg(mode, KappaRule::One, 0),
        )
        .unwrap();
        assert_eq!(f.kappa(), 1.0);
    }

    #[test]
    fn new_rejects_bad_configurations_naming_the_parameter() {
        let data = gaussian_blobs(20, 3, 2, 0.3, 1).unwrap();
        let model = arch::logistic_regression(3).unwrap();
        let c = dp(Sampling::Poisson);
        let one = KappaRule::One;
        let name = |c: &DpSgdConfig, f: &FilConfig| {
            error_name(FilAccountant::new(&model, &data, c, f).unwrap_err())
        };
        let tr = |k| cfg(FilMode::Trace { coords: k }, one, 0);
        assert_eq!(name(&c, &tr(0)), "fil_coords");
        assert_eq!(name(&c, &tr(4)), "fil_coords");
        let no_noise = DpSgdConfig {
            noise_multiplier: 0.0,
            ..c
        };
        assert_eq!(name(&no_noise, &tr(3)), "noise_multiplier");
        let no_clip = DpSgdConfig {
            clipping: None,
            noise_multiplier: 0.0,
            ..c
        };
        assert_eq!(name(&no_clip, &tr(3)), "noise_multiplier");
        let tiny = DpSgdConfig {
            noise_multiplier: 1e-300,
            ..c
        };
        assert_eq!(name(&tiny, &tr(3)), "noise_multiplier");
        let big_batch = DpSgdConfig {
            batch_size: 21,
            ..c
        };
        assert_eq!(name(&big_batch, &tr(3)), "batch_size");
        let bad_delta = cfg(FilMode::Full, KappaRule::Subsampled { delta: Some(0.0) }, 0);
        assert_eq!(name(&c, &bad_delta), "delta");
        let bad_delta = cfg(
            FilMode::Full,
            KappaRule::Subsampled {
                delta: Some(f64::NAN),
            },
            0,
        );
        assert_eq!(name(&dp(Sampling::FullBatch), &bad_delta), "delta");
        // Model/data mismatch.
        let other = arch::logistic_regression(4).unwrap();
        assert!(matches!(
            FilAccountant::new(&other, &data, &c, &tr(3)),
            Err(Error::Inconsistent { .. })
        ));
        // Full mode refuses d > 1024.
        let wide = Dataset::new(vec![0.5; 2 * 1025], vec![0, 1], (1, 1, 1025), 2).unwrap();
        let wide_model = arch::logistic_regression(1025).unwrap();
        let c2 = DpSgdConfig { batch_size: 1, ..c };
        let e = FilAccountant::new(&wide_model, &wide, &c2, &cfg(FilMode::Full, one, 0));
        assert_eq!(error_name(e.unwrap_err()), "d");
        assert!(FilAccountant::new(&wide_model, &wide, &c2, &tr(1025)).is_ok());
    }

    #[test]
    fn observe_checks_noise_params_and_batch() {
        let data = gaussian_blobs(10, 3, 2, 0.3, 1).unwrap();
        let model = arch::logistic_regression(3).unwrap();
        let c = dp(Sampling::FixedSize);
        let mut f =
            FilAccountant::new(&model, &data, &c, &cfg(FilMode::Full, KappaRule::One, 0)).unwrap();
        let params = [0.1, -0.2, 0.3, 0.0];
        let s = f.noise_std_of_sum();
        let info = |noise_std: f64, batch: &'static [usize], params: &'static [f64]| StepInfo {
            step: 0,
            params,
            batch,
            clipped: None,
            released: params,
            batch_sum: params,
            loss_sum: 0.0,
            normaliser: 5.0,
            noise_std,
        };
        static P: [f64; 4] = [0.1, -0.2, 0.3, 0.0];
        assert!(f.observe(&info(s / 5.0, &[0, 3], &P)).is_ok());
        assert_eq!(f.steps_observed(), 1);
        // σ vs σ·S mismatch (e.g. the accountant built for another run).
        assert!(matches!(
            f.observe(&info(0.8 / 5.0, &[0], &P)),
            Err(Error::Inconsistent { .. })
        ));
        assert_eq!(
            error_name(f.observe(&info(s / 5.0, &[10], &P)).unwrap_err()),
            "batch"
        );
        static SHORT: [f64; 3] = [0.0; 3];
        assert!(matches!(
            f.observe(&info(s / 5.0, &[0], &SHORT)),
            Err(Error::Inconsistent { .. })
        ));
        let _ = params;
        let r = f.results().unwrap();
        assert_eq!(r[0].steps_in_batch, 1);
        assert!(r[0].trace > 0.0 && r[0].spectral_bound.is_some());
        assert_eq!(r[1].trace, 0.0);
        assert_eq!((r[1].mse_bound, r[1].spectral_bound), (None, None));
        assert!(f.fisher_matrix(1).is_none() && f.fisher_matrix(0).is_some());
        assert!(f.fisher_matrix(99).is_none());
    }

    #[test]
    fn same_seed_bit_identical_different_seed_different_estimates() {
        let data = gaussian_blobs(30, 6, 2, 0.3, 2).unwrap();
        let model = arch::mlp(6, &[4], 2, crate::nn::Activation::Tanh).unwrap();
        let c = dp(Sampling::Poisson);
        let run = |seed: u64| {
            let mut f = FilAccountant::new(
                &model,
                &data,
                &c,
                &cfg(
                    FilMode::Trace { coords: 2 },
                    KappaRule::Subsampled { delta: None },
                    seed,
                ),
            )
            .unwrap();
            let mut params = model.init_params(4);
            train(&model, &data, &c, &mut params, &mut f).unwrap();
            f.results().unwrap()
        };
        let (a, b, other) = (run(1), run(1), run(2));
        assert_eq!(a, b);
        for (x, y) in a.iter().zip(&other) {
            assert_eq!(x.steps_in_batch, y.steps_in_batch); // same DP-SGD run
        }
        assert!(a.iter().zip(&other).any(|(x, y)| x.trace != y.trace));
    }

    #[test]
    fn full_mode_blocked_gram_equals_one_block() {
        // d = 21 coordinates with a budget of 8 columns: three blocks, columns recomputed by
        // JVP passes that start at offsets not aligned to 8. Same matrices as one block (the
        // same inner products, so bit for bit), and their traces equal the exact trace mode
        // (1e-12 relative: different summation order).
        let d = 21;
        let data = gaussian_blobs(6, d, 2, 0.4, 3).unwrap();
        let model = arch::mlp(d, &[3], 2, crate::nn::Activation::Tanh).unwrap();
        let c = DpSgdConfig {
            batch_size: 3,
            ..dp(Sampling::FixedSize)
        };
        let full = cfg(FilMode::Full, KappaRule::One, 0);
        let mut one = FilAccountant::new(&model, &data, &c, &full).unwrap();
        let mut blocked = FilAccountant::new(&model, &data, &c, &full).unwrap();
        blocked.gram_block_bytes = 8 * model.num_params() * 8;
        let mut exact = FilAccountant::new(
            &model,
            &data,
            &c,
            &cfg(FilMode::Trace { coords: d }, KappaRule::One, 0),
        )
        .unwrap();
        let mut params = model.init_params(5);
        train(
            &model,
            &data,
            &c,
            &mut params,
            &mut (&mut one, &mut (&mut blocked, &mut exact)),
        )
        .unwrap();
        let (a, b, e) = (
            one.results().unwrap(),
            blocked.results().unwrap(),
            exact.results().unwrap(),
        );
        assert_eq!(a, b);
        for i in 0..6 {
            assert_eq!(one.fisher_matrix(i), blocked.fisher_matrix(i));
            if a[i].trace > 0.0 {
                assert!(((a[i].trace - e[i].trace) / e[i].trace).abs() < 1e-12);
            }
        }
        assert!(a.iter().any(|r| r.trace > 0.0));
    }

    #[test]
    fn average_runs_statistics_and_errors() {
        let row = |index: usize, label: u32, trace: f64| FilExample {
            index,
            label,
            steps_in_batch: 1,
            trace,
            dfil: trace,
            mse_bound: None,
            spectral_bound: None,
        };
        let runs = vec![
            vec![row(0, 1, 2.0), row(1, 0, 0.0)],
            vec![row(0, 1, 4.0), row(1, 0, 0.0)],
            vec![row(0, 1, 9.0), row(1, 0, 0.0)],
        ];
        let a = average_runs(&runs, 3).unwrap();
        assert_eq!(a[0].mean_trace, 5.0);
        // Sample sd of (2, 4, 9): √((9 + 1 + 16)/2) = √13.
        assert!((a[0].std_trace - libm::sqrt(13.0)).abs() < 1e-15);
        assert_eq!((a[0].min_trace, a[0].max_trace, a[0].runs), (2.0, 9.0, 3));
        assert_eq!(a[0].dfil, 5.0 / 3.0);
        assert!(a[0].mse_bound.unwrap() <= 0.6);
        assert_eq!((a[1].mean_trace, a[1].mse_bound), (0.0, None));
        let single = average_runs(&runs[..1], 3).unwrap();
        assert_eq!(single[0].std_trace, 0.0);
        assert_eq!(error_name(average_runs(&[], 3).unwrap_err()), "runs");
        assert_eq!(error_name(average_runs(&runs, 0).unwrap_err()), "d");
        let ragged = vec![runs[0].clone(), runs[1][..1].to_vec()];
        assert_eq!(
            error_name(average_runs(&ragged, 3).unwrap_err()),
            "inconsistent"
        );
        let relabelled = vec![runs[0].clone(), vec![row(0, 2, 1.0), row(1, 0, 0.0)]];
        assert_eq!(
            error_name(average_runs(&relabelled, 3).unwrap_err()),
            "inconsistent"
        );
        let bad = vec![vec![row(0, 1, f64::NAN), row(1, 0, 0.0)]];
        assert_eq!(error_name(average_runs(&bad, 3).unwrap_err()), "trace");
    }
}
