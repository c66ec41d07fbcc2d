//! The RecoNN experiment's setting: the data splits, the training algorithm every model
//! (shadow or released) runs, and the seeds of each model.

use super::stability::{sharpness, Stability};
use crate::accounting::rdp::{calibrate_noise_multiplier, Conversion};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::nn::{arch, Activation, Sequential, Workspace};
use crate::rng::Rng;
use crate::train::clip::ClipMethod;
use crate::train::dpsgd::{train, Clipping, DpSgdConfig};
use crate::train::sampling::Sampling;
use alloc::vec::Vec;

/// Stream labels: each kind of randomness of a run has its own stream of generators, indexed
/// by the model (or epoch) number ([`Rng::for_stream`]).
pub(crate) const STREAM_SPLIT: u64 = 0x5245_434f_4e4e_0001;
pub(crate) const STREAM_INIT: u64 = 0x5245_434f_4e4e_0002;
pub(crate) const STREAM_SHADOW: u64 = 0x5245_434f_4e4e_0003;
pub(crate) const STREAM_RELEASED: u64 = 0x5245_434f_4e4e_0004;
pub(crate) const STREAM_RECONSTRUCTOR: u64 = 0x5245_434f_4e4e_0005;
pub(crate) const STREAM_CONTROL: u64 = 0x5245_434f_4e4e_0006;
pub(crate) const STREAM_SAMPLING: u64 = 0x5245_434f_4e4e_0007;

/// How every model of the experiment is initialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// One θ₀ shared by every shadow and released model and known to the adversary (Balle
    /// et al. 2022 §IV, the default).
    Known,
    /// Each model its own θ₀, drawn from the model's seed and unknown to the adversary
    /// (Balle et al. 2022, Table II: the attack then fails).
    Unknown,
}

/// The training algorithm of every model: full-batch gradient descent, non-private or DP-GD.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Privacy {
    /// Plain full-batch gradient descent (no clipping, no noise).
    NonPrivate,
    /// DP-GD: per-example clipping at `clip_norm`, Gaussian noise of std σ·C on the gradient
    /// sum, fresh for each model and unknown to the adversary (Balle et al. 2022 §VI-D).
    DpGd {
        /// σ.
        noise_multiplier: f64,
        /// C.
        clip_norm: f64,
    },
}

/// How each step's batch is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batching {
    /// Every example at every step (Balle et al. 2022 §IV, the default).
    FullBatch,
    /// Poisson sampling at rate B/n (non-private only; Balle et al. 2022 Fig. 6). With
    /// `seed_known` every model draws the same batches (the adversary knows the sampling
    /// seed); otherwise each model its own.
    Poisson {
        /// B, the expected batch size.
        batch_size: usize,
        /// Whether the adversary knows the sampling seed.
        seed_known: bool,
    },
}

/// The training of every model (shadow and released): the attacks' MLP 784-10-10 (ELU)
/// trained by full-batch gradient descent on D⁻ ∪ {z}.
///
/// Defaults: |D⁻| = 999, T = 200 steps at learning rate ρ = 0.25, no momentum, known
/// initialisation, non-private. Balle et al. 2022 §IV and the peer's JAX run
/// (`../shared/bench/jax_reconn_experiment.py`) train T = 100 steps at ρ = 0.5
/// ([`Training::peer`]); at that rate full-batch GD on this model sits at the edge of
/// stability (ρλ ≈ 2, [`super::stability`]) and for some seeds (seed 0 among them) the map
/// from a target to its model is chaotic and the attack fails. ρ = 0.25 keeps ρλ ≤ 1.6 at
/// the trained model for seeds 0–15 and T = 200 keeps the peer's ρ·T = 50 (training
/// accuracy 0.97–0.99 on D⁻, test 0.86–0.89, as the peer's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Training {
    /// |D⁻| (the fixed part of every training set), ≥ 1.
    pub d_minus: usize,
    /// T ≥ 1 gradient steps.
    pub steps: u64,
    /// Learning rate > 0.
    pub learning_rate: f64,
    /// Known or unknown initialisation.
    pub init: Init,
    /// Non-private or DP-GD.
    pub privacy: Privacy,
    /// The full batch or Poisson mini-batches.
    pub batching: Batching,
}

impl Default for Training {
    fn default() -> Self {
        Training {
            d_minus: 999,
            steps: 200,
            learning_rate: 0.25,
            init: Init::Known,
            privacy: Privacy::NonPrivate,
            batching: Batching::FullBatch,
        }
    }
}

impl Training {
    /// The peer's training (Balle et al. 2022 §IV, `../shared/bench/jax_reconn_experiment.py`):
    /// T = 100 steps at ρ = 0.5, otherwise the default. At the edge of stability for some
    /// seeds ([`super::stability`]): compare with the peer under it, attack under the default.
    pub fn peer() -> Training {
        Training {
            steps: 100,
            learning_rate: 0.5,
            ..Training::default()
        }
    }

    /// DP-GD at (ε, δ): C = 1 and σ the smallest noise multiplier for which T full-batch
    /// Gaussian steps are (ε, δ)-DP by the RDP accountant (Balle et al. 2022 §VI-D calibrate
    /// by RDP; [`calibrate_noise_multiplier`], always on the safe side).
    ///
    /// # Errors
    /// Those of [`calibrate_noise_multiplier`] (`target_epsilon`, `delta`, `steps`).
    pub fn dp_at_epsilon(self, epsilon: f64, delta: f64) -> Result<Training> {
        let s = calibrate_noise_multiplier(epsilon, delta, 1.0, self.steps, Conversion::Improved)?;
        Ok(Training {
            privacy: Privacy::DpGd {
                noise_multiplier: s,
                clip_norm: 1.0,
            },
            ..self
        })
    }

    /// The model every run trains: MLP 784-10-10 with ELU (7,960 parameters).
    ///
    /// # Errors
    /// None in practice (fixed shapes).
    pub fn model(input: usize, classes: usize) -> Result<Sequential> {
        arch::mlp(input, &[10], classes, Activation::Elu)
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::InvalidCount`] `d_minus` = 0 or `steps` = 0; [`Error::InvalidParameter`]
    /// `learning_rate` not finite and > 0, `noise_multiplier` not finite and ≥ 0,
    /// `clip_norm` not finite and > 0; [`Error::InvalidCount`] `batch_size` = 0, and
    /// [`Error::InvalidParameter`] `noise_multiplier` for DP-GD with Poisson batches (the
    /// trainer draws batches and noise from one seed, so a known sampling seed would make the
    /// noise known: not supported).
    pub fn validate(&self) -> Result<()> {
        if self.d_minus == 0 {
            return Err(Error::InvalidCount {
                name: "d_minus",
                value: 0,
                expected: ">= 1",
            });
        }
        crate::error::check_steps(self.steps)?;
        crate::error::check_positive("learning_rate", self.learning_rate)?;
        if let Privacy::DpGd {
            noise_multiplier,
            clip_norm,
        } = self.privacy
        {
            crate::error::check_non_negative("noise_multiplier", noise_multiplier)?;
            crate::error::check_positive("clip_norm", clip_norm)?;
        }
        if let Batching::Poisson { batch_size, .. } = self.batching {
            if batch_size == 0 {
                return Err(Error::InvalidCount {
                    name: "batch_size",
                    value: 0,
                    expected: ">= 1",
                });
            }
            if let Privacy::DpGd {
                noise_multiplier, ..
            } = self.privacy
            {
                return Err(Error::InvalidParameter {
                    name: "noise_multiplier",
                    value: noise_multiplier,
                    expected:
                        "no DP noise with Poisson batches (RecoNN's DP runs use the full batch)",
                });
            }
        }
        Ok(())
    }

    /// The trainer's configuration for one model whose noise (or, with Poisson batches of an
    /// unknown seed, sampling) stream has seed `noise_seed`; `shared_seed` is the run's
    /// sampling seed known to the adversary.
    pub(crate) fn config(&self, n: usize, noise_seed: u64, shared_seed: u64) -> DpSgdConfig {
        let (clipping, noise_multiplier) = match self.privacy {
            Privacy::NonPrivate => (None, 0.0),
            Privacy::DpGd {
                noise_multiplier,
                clip_norm,
            } => (
                Some(Clipping {
                    method: ClipMethod::Hard,
                    norm: clip_norm,
                }),
                noise_multiplier,
            ),
        };
        let (sampling, batch_size, seed) = match self.batching {
            Batching::FullBatch => (Sampling::FullBatch, n, noise_seed),
            Batching::Poisson {
                batch_size,
                seed_known,
            } => (
                Sampling::Poisson,
                batch_size,
                if seed_known { shared_seed } else { noise_seed },
            ),
        };
        DpSgdConfig {
            learning_rate: self.learning_rate,
            momentum: 0.0,
            weight_decay: 0.0,
            clipping,
            noise_multiplier,
            sampling,
            batch_size,
            steps: self.steps,
            seed,
        }
    }
}

/// The disjoint parts of the data (Balle et al. 2022 §IV): D⁻, the adversary's own data D̄
/// (shadow targets, logit probes, the NN oracle's pool) and the pool of the released models'
/// targets.
///
/// One uniform permutation of the data from the run's seed: D⁻ is its first |D⁻| entries, the
/// released pool its last ⌊n/10⌋ (at most 1,000), D̄ everything between. The split does not
/// depend on K or R, so one shadow set serves runs with any number of released models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Splits {
    /// Indices (into the data) of D⁻.
    pub d_minus: Vec<usize>,
    /// Indices of D̄, the adversary's data; shadow model i's target is `aux[i]`.
    pub aux: Vec<usize>,
    /// Indices of the released models' targets; released model j's target is `released[j]`.
    pub released: Vec<usize>,
}

impl Splits {
    /// The split of `n` examples for a run with seed `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidCount`] `data` when n cannot hold D⁻, 10 released targets and 10
    /// examples of D̄.
    pub fn draw(n: usize, d_minus: usize, seed: u64) -> Result<Splits> {
        let released = (n / 10).min(1000);
        if released < 10 || d_minus.saturating_add(released).saturating_add(10) > n {
            return Err(Error::InvalidCount {
                name: "data",
                value: n as u64,
                expected: ">= |D-| + 10 + max(10, n/10) examples (D-, the adversary's data and the released targets must be disjoint)",
            });
        }
        let mut rng = Rng::for_stream(seed, STREAM_SPLIT, 0);
        let perm = rng.permutation(n)?;
        Ok(Splits {
            d_minus: perm[..d_minus].to_vec(),
            aux: perm[d_minus..n - released].to_vec(),
            released: perm[n - released..].to_vec(),
        })
    }
}

/// Trains every model of one experiment: D⁻, θ₀ and the training algorithm fixed, the target
/// varying. Shadow model i and released model j are pure functions of (seed, i) and
/// (seed, j) in their own streams.
#[derive(Debug)]
pub struct ModelTrainer<'a> {
    data: &'a Dataset,
    model: Sequential,
    training: Training,
    seed: u64,
    /// D⁻, with its support: each model's training set is D⁻ with its target appended
    /// ([`Dataset::with_example`]), the support extended rather than built again.
    d_minus: Dataset,
    theta0: Vec<f64>,
}

/// Which models a trainer trains: the adversary's shadow models or the released ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Shadow model i, trained by the adversary on D⁻ ∪ {z_i}.
    Shadow,
    /// Released model j, trained by the victim on D⁻ ∪ {z_j}.
    Released,
    /// A control: a released model trained on D⁻ ∪ {z'} with z' another image than the one
    /// it is judged against.
    Control,
}

impl<'a> ModelTrainer<'a> {
    /// A trainer on `data` with D⁻ = `d_minus` (indices into `data`).
    ///
    /// # Errors
    /// [`Training::validate`]; [`Error::InvalidCount`] `d_minus` if its length is not
    /// `training.d_minus` or an index is out of range.
    pub fn new(
        data: &'a Dataset,
        d_minus: &[usize],
        training: Training,
        seed: u64,
    ) -> Result<Self> {
        training.validate()?;
        if d_minus.len() != training.d_minus {
            return Err(Error::InvalidCount {
                name: "d_minus",
                value: d_minus.len() as u64,
                expected: "the training's |D-|",
            });
        }
        let model = Training::model(data.dim(), data.num_classes())?;
        let mut d_minus_x = Vec::with_capacity(d_minus.len() * data.dim());
        let mut d_minus_y = Vec::with_capacity(d_minus.len());
        for &i in d_minus {
            let (x, y) = data.example(i)?;
            d_minus_x.extend_from_slice(x);
            d_minus_y.push(y);
        }
        let theta0 = model.init_params(Rng::for_stream(seed, STREAM_INIT, 0).next_u64());
        let d_minus = Dataset::new(d_minus_x, d_minus_y, data.shape(), data.num_classes())?;
        Ok(ModelTrainer {
            data,
            model,
            training,
            seed,
            d_minus,
            theta0,
        })
    }

    /// The model trained.
    pub fn model(&self) -> &Sequential {
        &self.model
    }

    /// The training algorithm.
    pub fn training(&self) -> &Training {
        &self.training
    }

    /// The shared initialisation θ₀ (used by every model when the initialisation is known).
    pub fn theta0(&self) -> &[f64] {
        &self.theta0
    }

    /// Model `index` of `role`, trained on D⁻ ∪ {z} with z the example `target` of the data (last).
    ///
    /// # Errors
    /// `target` out of range; the trainer's errors.
    pub fn train(&self, role: Role, index: u64, target: usize) -> Result<Vec<f64>> {
        let stream = match role {
            Role::Shadow => STREAM_SHADOW,
            Role::Released => STREAM_RELEASED,
            Role::Control => STREAM_CONTROL,
        };
        let mut rng = Rng::for_stream(self.seed, stream, index);
        let noise_seed = rng.next_u64();
        let init_seed = rng.next_u64();
        let mut params = match self.training.init {
            Init::Known => self.theta0.clone(),
            Init::Unknown => self.model.init_params(init_seed),
        };
        let (x, y) = self.data.example(target)?;
        let ds = self.d_minus.with_example(x, y)?;
        let shared = Rng::for_stream(self.seed, STREAM_SAMPLING, 0).next_u64();
        let config = self.training.config(ds.len(), noise_seed, shared);
        train(&self.model, &ds, &config, &mut params, &mut ())?;
        Ok(params)
    }

    /// The stability of a model trained on D⁻ ∪ {z} (z the example `target`) at `params`:
    /// the sharpness of its mean training loss and ρλ against 2
    /// ([`super::stability`]).
    ///
    /// # Errors
    /// `target` out of range; those of [`super::stability::sharpness`].
    pub fn stability(&self, params: &[f64], target: usize) -> Result<Stability> {
        let (xs, ys) = self.training_set(target)?;
        let lambda = sharpness(&self.model, params, &xs, &ys)?;
        Ok(Stability {
            sharpness: lambda,
            lr_times_sharpness: self.training.learning_rate * lambda,
        })
    }

    /// The features (row-major) and labels of D⁻ ∪ {z}, z the example `target` (last): the
    /// training set of every model, and the set its stability is measured on.
    fn training_set(&self, target: usize) -> Result<(Vec<f64>, Vec<u32>)> {
        let (x, y) = self.data.example(target)?;
        let mut xs = self.d_minus.features().to_vec();
        xs.extend_from_slice(x);
        let mut ys = self.d_minus.labels().to_vec();
        ys.push(y);
        Ok((xs, ys))
    }

    /// Accuracy of `params` on the examples `indices` of the data.
    ///
    /// # Errors
    /// An index out of range; `indices` empty.
    pub fn accuracy(&self, params: &[f64], indices: &[usize]) -> Result<f64> {
        let mut xs = Vec::with_capacity(indices.len() * self.data.dim());
        let mut ys = Vec::with_capacity(indices.len());
        for &i in indices {
            let (x, y) = self.data.example(i)?;
            xs.extend_from_slice(x);
            ys.push(y as usize);
        }
        let mut ws: Workspace<f64> = self.model.workspace();
        self.model.accuracy(params, &xs, &ys, &mut ws)
    }

    /// The logits of `params` on the examples `probes`, concatenated (black-box features,
    /// Balle et al. 2022 §VI-C).
    ///
    /// # Errors
    /// An index out of range; the model's errors.
    pub fn logits(&self, params: &[f64], probes: &[usize]) -> Result<Vec<f64>> {
        let mut ws: Workspace<f64> = self.model.workspace();
        let mut out = Vec::with_capacity(probes.len() * self.model.output_len());
        for &i in probes {
            let (x, _) = self.data.example(i)?;
            out.extend_from_slice(self.model.logits(params, x, &mut ws)?);
        }
        Ok(out)
    }
}
