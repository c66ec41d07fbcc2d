//! One game for every attack and audit: a **challenge** (what a trial draws), a **view** per
//! threat model (what the adversary sees) and a **guess** (what it answers, scored by named
//! score sets).
//!
//! # The challenge
//!
//! A [`Challenge`] is what the challenger of one trial draws from
//! [`Rng::for_trial`]`(master seed, trial index)`: the known training set D⁻, the prior
//! (the candidates the target is one of), which candidate is the target, and the seeds of the
//! initialisation, of DP-SGD and of the adversary's optimiser. [`Challenge::draw`] is the one
//! function that draws it; the prior-aware attack ([`PriorDraw::Uniform`]: m candidates drawn
//! with D⁻) and gradient matching ([`PriorDraw::SameClass`]: the target drawn with D⁻, the
//! others among the pool's examples of its class) both use it. [`Challenge::trainer`] and
//! [`Challenge::play`] then train on D⁻ with the target as the trainer's
//! [`Secret`] — the target's gradient is added after D⁻'s
//! sum, and only the challenger learns whether it was drawn.
//!
//! # The views
//!
//! A threat model is a type, not a flag: an adversary implements [`Adversary`] for one view
//! and its scoring code receives that view only, never the [`StepInfo`] the trainer shows.
//!
//! - [`ModelView`]: a released model (the parameters θ_t), nothing else;
//! - [`GradientView`]: every released gradient ḡ_t with the θ_t it was computed at and the
//!   public normaliser B — D⁻'s batches stay secret;
//! - [`InformedView`]: a [`GradientView`] and D⁻'s actual batch at every step, with the sum of
//!   D⁻'s clipped gradients over it (what an informed adversary who knows D⁻ computes
//!   itself; DP-SGD's analysis grants it).
//!
//! No view holds the target's identity, whether the secret was in a batch, or the trainer's
//! noise. [`observe`] turns the trainer's [`StepInfo`] into the adversary's view; an attack
//! that is also an [`Observer`] forwards to it.
//!
//! # The guess and its scores
//!
//! An attack answers with a guess per score of a named score set: a [`ScoreKind`] lists the
//! scores (their names, in a fixed order) and [`Named`] holds one value per score. Shard lines,
//! CSV columns and JSON keys are written from that one description.
//!
//! # Example
//!
//! ```
//! use reconbound::attacks::game::{Challenge, PriorDraw};
//! use reconbound::data::embedded_mnist;
//! let pool = embedded_mnist()?;
//! let c = Challenge::draw(&pool, 20, PriorDraw::Uniform { size: 5 }, 7, 3)?;
//! assert_eq!((c.dminus.len(), c.prior.len()), (20, 5));
//! assert!(c.target < 5);
//! // One trial, one challenge: drawn again from (seed, index), it is the same.
//! assert_eq!(c, Challenge::draw(&pool, 20, PriorDraw::Uniform { size: 5 }, 7, 3)?);
//! # Ok::<(), reconbound::Error>(())
//! ```

use crate::data::Dataset;
use crate::error::{check_count, Error, Result};
use crate::nn::Sequential;
use crate::rng::Rng;
use crate::train::dpsgd::{DpSgd, DpSgdConfig, Secret};
use crate::train::observer::{Observer, StepInfo};
use alloc::vec::Vec;
use core::marker::PhantomData;

/// How a [`Challenge`] draws its prior.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorDraw {
    /// Hayes et al. App. A: |D⁻| + m pool indices without replacement, which m of them form
    /// the prior (the rest is D⁻), the target uniformly among the m.
    Uniform {
        /// m, the number of candidates (≥ 2).
        size: usize,
    },
    /// Hayes et al. App. D with the label known: |D⁻| + 1 pool indices, which of them is the
    /// target (the rest is D⁻), then `others` points among the pool's remaining examples of
    /// the target's class. The prior is the target and the others in ascending order, so the
    /// target's position tells nothing the set does not.
    SameClass {
        /// n − 1, the number of other candidates (≥ 1).
        others: usize,
    },
}

/// The seeds a trial draws after its data, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrialSeeds {
    /// The initialisation θ₀ ([`Sequential::init_params`]).
    pub init: u64,
    /// DP-SGD's sampling and noise ([`DpSgdConfig::seed`]).
    pub train: u64,
    /// The adversary's optimiser (gradient matching's starting points); unused by attacks
    /// without one.
    pub optimiser: u64,
}

/// What one trial draws (module docs): pool indices of D⁻ and of the prior, the target's
/// position in the prior, the seeds. Known to the challenger only; an adversary is given the
/// prior's candidates (and D⁻ if informed), never [`target`](Self::target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The trial index.
    pub trial: u64,
    /// D⁻: pool indices, ascending.
    pub dminus: Vec<usize>,
    /// The prior's candidates: pool indices, ascending.
    pub prior: Vec<usize>,
    /// The target's position in [`prior`](Self::prior).
    pub target: usize,
    /// The seeds drawn after the data.
    pub seeds: TrialSeeds,
}

impl Challenge {
    /// Draws trial `trial` of a run with seed `master_seed` from `pool`: a pure function of
    /// the arguments. From [`Rng::for_trial`]`(master_seed, trial)`, in this order:
    ///
    /// - [`PriorDraw::Uniform`]: |D⁻| + m pool indices without replacement, which m of them
    ///   form the prior (the rest, ascending, is D⁻), the target's position;
    /// - [`PriorDraw::SameClass`]: |D⁻| + 1 pool indices without replacement, which of them is
    ///   the target (the rest is D⁻), the others among the pool's remaining examples of the
    ///   target's class (the prior: the target and the others, ascending);
    ///
    /// then the initialisation seed, the DP-SGD seed and the optimiser seed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `train_size` if 0, `prior_size` if m < 2, `others` if 0 or more
    /// than the pool's other examples of the target's class, `pool` if it is too small.
    pub fn draw(
        pool: &Dataset,
        train_size: usize,
        prior: PriorDraw,
        master_seed: u64,
        trial: u64,
    ) -> Result<Challenge> {
        check_count("train_size", train_size as u64, 1, ">= 1")?;
        let n = train_size;
        let mut rng = Rng::for_trial(master_seed, trial);
        let (dminus, prior, target) = match prior {
            PriorDraw::Uniform { size: m } => {
                check_count("prior_size", m as u64, 2, ">= 2 candidates")?;
                if pool.len() < n.saturating_add(m) {
                    return Err(Error::InvalidCount {
                        name: "pool",
                        value: pool.len() as u64,
                        expected:
                            ">= train_size + prior_size examples to draw D⁻ and the prior from",
                    });
                }
                let chosen = rng.subset(pool.len(), n + m)?;
                let prior_pos = rng.subset(n + m, m)?;
                let target = rng.below(m as u64)? as usize;
                let mut is_prior = alloc::vec![false; n + m];
                for &j in &prior_pos {
                    if let Some(f) = is_prior.get_mut(j) {
                        *f = true;
                    }
                }
                let dminus = chosen
                    .iter()
                    .zip(&is_prior)
                    .filter(|&(_, &p)| !p)
                    .map(|(&i, _)| i)
                    .collect();
                let prior = prior_pos
                    .iter()
                    .map(|&j| chosen.get(j).copied().unwrap_or(usize::MAX))
                    .collect();
                (dminus, prior, target)
            }
            PriorDraw::SameClass { others: k } => {
                check_count("others", k as u64, 1, ">= 1")?;
                if pool.len() <= n {
                    return Err(Error::InvalidCount {
                        name: "pool",
                        value: pool.len() as u64,
                        expected: ">= train_size + 1 examples",
                    });
                }
                let chosen = rng.subset(pool.len(), n + 1)?;
                let pos = rng.below((n + 1) as u64)? as usize;
                let target = chosen.get(pos).copied().unwrap_or(usize::MAX);
                let dminus = chosen
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != pos)
                    .map(|(_, &i)| i)
                    .collect();
                let (_, target_label) = pool.example(target)?;
                // The others share the target's label: the adversary knows it, so a prior of
                // other labels would tell it the answer (and γ at κ = 1/n would not apply).
                let eligible: Vec<usize> = (0..pool.len())
                    .filter(|i| chosen.binary_search(i).is_err())
                    .filter(|&i| pool.labels().get(i) == Some(&target_label))
                    .collect();
                if eligible.len() < k {
                    return Err(Error::InvalidCount {
                        name: "others",
                        value: k as u64,
                        expected:
                            "<= the pool's examples of the target's class outside D⁻ and the target",
                    });
                }
                let mut prior = Vec::with_capacity(k + 1);
                prior.push(target);
                prior.extend(
                    rng.subset(eligible.len(), k)?
                        .into_iter()
                        .filter_map(|j| eligible.get(j).copied()),
                );
                // Ascending, as the uniform prior: listed target first, the order named it
                // (issue 31). Its rank is uniform given the set (target and others are
                // exchangeable), and sorting draws nothing, so the seeds below are unchanged.
                prior.sort_unstable();
                let at = prior.binary_search(&target).unwrap_or(usize::MAX);
                (dminus, prior, at)
            }
        };
        let seeds = TrialSeeds {
            init: rng.next_u64(),
            train: rng.next_u64(),
            optimiser: rng.next_u64(),
        };
        Ok(Challenge {
            trial,
            dminus,
            prior,
            target,
            seeds,
        })
    }

    /// D⁻ as a data set (the pool's examples [`dminus`](Self::dminus), in order).
    ///
    /// # Errors
    ///
    /// As [`Dataset::subset`] (an index outside `pool`).
    pub fn train_set(&self, pool: &Dataset) -> Result<Dataset> {
        pool.subset(&self.dminus)
    }

    /// The prior's candidates as secrets, in the prior's order.
    ///
    /// # Errors
    ///
    /// As [`Dataset::example`] (an index outside `pool`).
    pub fn candidates<'p>(&self, pool: &'p Dataset) -> Result<Vec<Secret<'p>>> {
        self.prior
            .iter()
            .map(|&i| {
                pool.example(i)
                    .map(|(x, label)| Secret::Example { x, label })
            })
            .collect()
    }

    /// The target as a secret.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if the target is outside the prior; as [`Dataset::example`].
    pub fn secret<'p>(&self, pool: &'p Dataset) -> Result<Secret<'p>> {
        let i = *self.prior.get(self.target).ok_or(Error::Inconsistent {
            what: "target outside the prior",
            value: self.target as f64,
        })?;
        let (x, label) = pool.example(i)?;
        Ok(Secret::Example { x, label })
    }

    /// The trainer of this trial: DP-SGD `dpsgd` with the trial's seed on `dminus` (from
    /// [`train_set`](Self::train_set)) with `secret` (the target, from
    /// [`secret`](Self::secret)).
    ///
    /// # Errors
    ///
    /// As [`DpSgd::with_secret`].
    pub fn trainer<'d>(
        &self,
        model: &'d Sequential,
        dminus: &'d Dataset,
        dpsgd: &DpSgdConfig,
        secret: Secret<'d>,
    ) -> Result<DpSgd<'d>> {
        let config = DpSgdConfig {
            seed: self.seeds.train,
            ..*dpsgd
        };
        DpSgd::with_secret(model, dminus, &config, secret)
    }

    /// Trains from the trial's θ₀ for the `steps` of the trainer's configuration, every step
    /// shown to `observer` (the adversary, through its view), and returns the final
    /// parameters and in how many steps the secret was drawn (for the challenger, never for
    /// the adversary).
    ///
    /// # Errors
    ///
    /// As [`DpSgd::step`].
    pub fn play<O: Observer + ?Sized>(
        &self,
        model: &Sequential,
        trainer: &mut DpSgd<'_>,
        steps: u64,
        observer: &mut O,
    ) -> Result<(Vec<f64>, u64)> {
        let mut params = model.init_params(self.seeds.init);
        let mut steps_in_batch = 0u64;
        for _ in 0..steps {
            let stats = trainer.step(&mut params, observer)?;
            steps_in_batch += u64::from(stats.secret_in_batch);
        }
        Ok((params, steps_in_batch))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Implements the sealed [`StepView`] of the view type `$view` as `|info| body`.
macro_rules! step_view {
    ($view:ident, |$info:ident| $body:expr_2021) => {
        impl sealed::Sealed for $view<'_> {}
        impl<'s> StepView<'s> for $view<'s> {
            fn of($info: &StepInfo<'s>) -> Self {
                $body
            }
        }
    };
}

/// A view made from what the trainer shows at one step (sealed: [`ModelView`],
/// [`GradientView`], [`InformedView`]).
pub trait StepView<'s>: sealed::Sealed + Sized {
    /// The view of `info`: what it holds of the step, nothing more.
    fn of(info: &StepInfo<'s>) -> Self;
}

/// The released-model view: the parameters θ_t, nothing else.
#[derive(Clone, Copy, Debug)]
pub struct ModelView<'s> {
    params: &'s [f64],
}

impl<'s> ModelView<'s> {
    /// The view of the released parameters `params`.
    pub fn new(params: &'s [f64]) -> Self {
        ModelView { params }
    }

    /// The released parameters.
    pub fn params(&self) -> &'s [f64] {
        self.params
    }
}

step_view!(ModelView, |info| ModelView {
    params: info.params,
});

/// The every-released-gradient view: at step t, θ_t, the released gradient ḡ_t and the
/// public normaliser B; D⁻'s batches are not in it.
#[derive(Clone, Copy, Debug)]
pub struct GradientView<'s> {
    step: u64,
    model: ModelView<'s>,
    released: &'s [f64],
    normaliser: f64,
}

impl<'s> GradientView<'s> {
    /// The step index t.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// θ_t, the parameters the gradient was computed at.
    pub fn params(&self) -> &'s [f64] {
        self.model.params()
    }

    /// The released gradient ḡ_t.
    pub fn released(&self) -> &'s [f64] {
        self.released
    }

    /// The normaliser B the trainer divides by (public: the expected batch size).
    pub fn normaliser(&self) -> f64 {
        self.normaliser
    }
}

step_view!(GradientView, |info| GradientView {
    step: info.step,
    model: ModelView::of(info),
    released: info.released,
    normaliser: info.normaliser,
});

/// The informed view: a [`GradientView`] and D⁻'s actual batch at the step with the sum of
/// D⁻'s clipped gradients over it (the target's gradient is never in it).
#[derive(Clone, Copy, Debug)]
pub struct InformedView<'s> {
    gradients: GradientView<'s>,
    batch: &'s [usize],
    known_sum: &'s [f64],
}

impl<'s> InformedView<'s> {
    /// What the uninformed adversary sees of the step.
    pub fn gradients(&self) -> &GradientView<'s> {
        &self.gradients
    }

    /// D⁻'s part of the batch: ascending indices into D⁻.
    pub fn batch(&self) -> &'s [usize] {
        self.batch
    }

    /// Σ_{j ∈ D⁻ ∩ B_t} clip(∇ℓ(θ_t; z_j)): what the adversary who knows D⁻ and its batch
    /// computes itself.
    pub fn known_sum(&self) -> &'s [f64] {
        self.known_sum
    }

    /// The residual B·ḡ_t − [`known_sum`](Self::known_sum) into `out` (same length).
    pub fn residual(&self, out: &mut [f64]) {
        let b = self.gradients.normaliser;
        for ((r, &g), &known) in out
            .iter_mut()
            .zip(self.gradients.released)
            .zip(self.known_sum)
        {
            *r = b * g - known;
        }
    }
}

step_view!(InformedView, |info| InformedView {
    gradients: GradientView::of(info),
    batch: info.batch,
    known_sum: info.batch_sum,
});

/// An adversary of one threat model: it is shown each training step through its
/// [`View`](Self::View) only.
pub trait Adversary {
    /// The view of its threat model.
    type View<'s>: StepView<'s>;

    /// Sees one step.
    ///
    /// # Errors
    ///
    /// The adversary's own (e.g. a view that does not fit its model); it stops training.
    fn see(&mut self, view: &Self::View<'_>) -> Result<()>;
}

/// Shows the step `info` to `adversary` through its view: what an adversary's
/// [`Observer::observe`] forwards to.
///
/// # Errors
///
/// As [`Adversary::see`].
pub fn observe<A: Adversary + ?Sized>(adversary: &mut A, info: &StepInfo<'_>) -> Result<()> {
    adversary.see(&A::View::of(info))
}

/// A named score set: the scores an attack or audit computes per trial, in a fixed order.
pub trait ScoreKind: Copy + Eq + Sized + 'static {
    /// Every score, in the set's order.
    const KINDS: &'static [Self];

    /// The score's stable name (a JSON key, `--score` value).
    fn name(self) -> &'static str;

    /// The score's CSV column: its name with `-` written `_`.
    fn column(self) -> alloc::string::String {
        self.name().replace('-', "_")
    }

    /// The score's position in [`KINDS`](Self::KINDS).
    fn position(self) -> usize {
        Self::KINDS
            .iter()
            .position(|&k| k == self)
            .unwrap_or(usize::MAX)
    }

    /// The names of [`KINDS`](Self::KINDS), in order.
    fn names() -> Vec<&'static str> {
        Self::KINDS.iter().map(|k| k.name()).collect()
    }
}

/// One value per score of the set `K` (a guess, a score, a success rate), in the order of
/// [`ScoreKind::KINDS`]: `N` values for the `N` scores of `K` (checked when compiled), so a
/// set of `Copy` values is `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Named<K, V, const N: usize> {
    values: [V; N],
    kind: PhantomData<K>,
}

impl<K: ScoreKind, V, const N: usize> Named<K, V, N> {
    /// `N` is the number of scores of `K` (a compile-time check).
    const FITS: () = assert!(N == K::KINDS.len(), "N must be the number of scores of K");

    /// The values `f(k)` for every score k, in order.
    pub fn from_fn(mut f: impl FnMut(K) -> V) -> Self {
        let () = Self::FITS;
        // i < N = K::KINDS.len() (FITS).
        Named {
            values: core::array::from_fn(|i| f(K::KINDS[i])),
            kind: PhantomData,
        }
    }

    /// The values `f(k)` for every score k, in order.
    ///
    /// # Errors
    ///
    /// The first of `f`'s errors.
    pub fn try_from_fn<E: From<Error>>(
        f: impl FnMut(K) -> core::result::Result<V, E>,
    ) -> core::result::Result<Self, E> {
        let values = K::KINDS
            .iter()
            .copied()
            .map(f)
            .collect::<core::result::Result<Vec<V>, E>>()?;
        Ok(Self::from_values(values)?)
    }

    /// One value per score, in the set's order.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] unless there are as many values as scores.
    pub fn from_values(values: Vec<V>) -> Result<Self> {
        let () = Self::FITS;
        let values = <[V; N]>::try_from(values).map_err(|v| Error::Inconsistent {
            what: "one value per score of the set is needed",
            value: v.len() as f64,
        })?;
        Ok(Named {
            values,
            kind: PhantomData,
        })
    }

    /// The value of score `k`.
    pub fn get(&self, k: K) -> Option<&V> {
        self.values.get(k.position())
    }

    /// The values in the set's order.
    pub fn values(&self) -> &[V; N] {
        &self.values
    }

    /// (score, value) pairs in the set's order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        K::KINDS.iter().copied().zip(&self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attacks::prior_aware::Score;
    use crate::data::embedded_mnist;

    /// The prior-aware draw as `PriorAwareSetup::run_trial` wrote it before the game.
    fn old_uniform(pool: &Dataset, n: usize, m: usize, seed: u64, trial: u64) -> Challenge {
        let mut rng = Rng::for_trial(seed, trial);
        let chosen = rng.subset(pool.len(), n + m).unwrap();
        let prior_pos = rng.subset(n + m, m).unwrap();
        let target = rng.below(m as u64).unwrap() as usize;
        let (init, train) = (rng.next_u64(), rng.next_u64());
        let dminus = (0..n + m)
            .filter(|j| !prior_pos.contains(j))
            .map(|j| chosen[j])
            .collect();
        let prior = prior_pos.iter().map(|&j| chosen[j]).collect();
        Challenge {
            trial,
            dminus,
            prior,
            target,
            seeds: TrialSeeds {
                init,
                train,
                optimiser: rng.next_u64(),
            },
        }
    }

    /// The gradient-matching draw as `GradientMatchingSetup::run_trial` wrote it before the
    /// game, with the prior sorted since issue 31 (it listed the target first).
    fn old_same_class(pool: &Dataset, n: usize, k: usize, seed: u64, trial: u64) -> Challenge {
        let mut rng = Rng::for_trial(seed, trial);
        let chosen = rng.subset(pool.len(), n + 1).unwrap();
        let pos = rng.below((n + 1) as u64).unwrap() as usize;
        let target = chosen[pos];
        let mut dminus = chosen.clone();
        dminus.remove(pos);
        let label = pool.labels()[target];
        let eligible: Vec<usize> = (0..pool.len())
            .filter(|i| !chosen.contains(i) && pool.labels()[*i] == label)
            .collect();
        let mut prior = std::vec![target];
        prior.extend(
            rng.subset(eligible.len(), k)
                .unwrap()
                .iter()
                .map(|&j| eligible[j]),
        );
        prior.sort_unstable();
        let at = prior.iter().position(|&i| i == target).unwrap();
        let (init, train, optimiser) = (rng.next_u64(), rng.next_u64(), rng.next_u64());
        Challenge {
            trial,
            dminus,
            prior,
            target: at,
            seeds: TrialSeeds {
                init,
                train,
                optimiser,
            },
        }
    }

    #[test]
    fn challenge_draws_are_the_attacks_former_draws_bit_for_bit() {
        let pool = embedded_mnist()
            .unwrap()
            .subset(&(0..300).collect::<Vec<_>>())
            .unwrap();
        for (seed, trial) in [(0, 0), (7, 3), (123_456_789, 41), (u64::MAX, 999)] {
            let c = Challenge::draw(&pool, 50, PriorDraw::Uniform { size: 10 }, seed, trial);
            assert_eq!(c.unwrap(), old_uniform(&pool, 50, 10, seed, trial));
            let c = Challenge::draw(&pool, 50, PriorDraw::SameClass { others: 9 }, seed, trial);
            assert_eq!(c.unwrap(), old_same_class(&pool, 50, 9, seed, trial));
        }
    }

    /// Issue 31: a `SameClass` prior listed the target first, so the candidates' order named
    /// it. The prior is now ascending, as the uniform one: the target's position is its rank
    /// in the set — uniform given the set (the target and the others are exchangeable) — and
    /// the candidate at `target` is the trained secret. Over 200 trials (seed 31, n = 10
    /// candidates) the position takes at least 5 of the 10 values and is 0 in at most 60
    /// (binomial(200, 1/10): mean 20, P[≥ 60] < 1e-12; at least 5 values fail with P < 1e-30).
    #[test]
    fn same_class_priors_do_not_put_the_target_first() {
        let pool = embedded_mnist()
            .unwrap()
            .subset(&(0..600).collect::<Vec<_>>())
            .unwrap();
        let mut seen = [0u32; 10];
        for trial in 0..200 {
            let c =
                Challenge::draw(&pool, 40, PriorDraw::SameClass { others: 9 }, 31, trial).unwrap();
            assert!(c.prior.windows(2).all(|w| w[0] < w[1]), "ascending");
            assert_eq!(c, old_same_class(&pool, 40, 9, 31, trial), "the same draw");
            // The secret is the example the trial drew as its target (not D⁻'s).
            let mut rng = Rng::for_trial(31, trial);
            let chosen = rng.subset(pool.len(), 41).unwrap();
            let drawn = chosen[rng.below(41).unwrap() as usize];
            assert_eq!(c.prior[c.target], drawn);
            assert_eq!(
                c.candidates(&pool).unwrap()[c.target],
                c.secret(&pool).unwrap()
            );
            seen[c.target] += 1;
        }
        assert!(seen[0] <= 60, "{seen:?}");
        assert!(seen.iter().filter(|&&v| v > 0).count() >= 5, "{seen:?}");
    }

    #[test]
    fn challenge_refuses_draws_that_do_not_fit_the_pool() {
        let pool = embedded_mnist()
            .unwrap()
            .subset(&(0..30).collect::<Vec<_>>())
            .unwrap();
        let name = |r: Result<Challenge>| r.unwrap_err().parameter();
        let uniform = |n, m| Challenge::draw(&pool, n, PriorDraw::Uniform { size: m }, 1, 0);
        assert_eq!(name(uniform(0, 5)), Some("train_size"));
        assert_eq!(name(uniform(10, 1)), Some("prior_size"));
        assert_eq!(name(uniform(26, 5)), Some("pool"));
        let same = |n, k| Challenge::draw(&pool, n, PriorDraw::SameClass { others: k }, 1, 0);
        assert_eq!(name(same(10, 0)), Some("others"));
        assert_eq!(name(same(30, 1)), Some("pool"));
        assert_eq!(name(same(10, 25)), Some("others"));
        // The target is in the prior, D⁻ and the prior are disjoint.
        let c = uniform(20, 5).unwrap();
        assert!(c.prior.iter().all(|i| !c.dminus.contains(i)));
        let secret = c.secret(&pool).unwrap();
        assert_eq!(c.candidates(&pool).unwrap()[c.target], secret);
    }

    #[test]
    fn named_sets_follow_the_kinds_order() {
        let n: Named<Score, u32, 3> = Named::from_fn(|s: Score| s.position() as u32 * 10);
        assert_eq!(n.values(), &[0, 10, 20]);
        assert_eq!(n.get(Score::LogLikelihood), Some(&20));
        let names: Vec<&str> = n.iter().map(|(k, _)| k.name()).collect();
        assert_eq!(names, ["sum", "top", "loglik"]);
        assert_eq!(Score::LogLikelihood.column(), "loglik");
        assert!(Named::<Score, u32, 3>::from_values(std::vec![1, 2]).is_err());
        let t: Result<Named<Score, u32, 3>> = Named::try_from_fn(|s| match s {
            Score::Top => Err(Error::Numerical {
                what: "x",
                value: 1.0,
            }),
            _ => Ok(1),
        });
        assert!(t.is_err());
    }
}
