//! A training run as its user describes it, and the mechanism its guarantees are about.
//!
//! Users know their run in their library's words: a noise multiplier, a batch size, a data
//! set size and a number of epochs, a sampler, gradient accumulation, TensorFlow Privacy's
//! microbatches. Accountants take a mechanism: a sampling rate q, a noise multiplier in units
//! of the sensitivity, a step count T. A [`Description`] holds the first, and
//! [`Description::resolve`] derives the second ([`Resolved`]: the [`Run`] every accountant
//! of [`super::run`] takes, plus the steps of the derivation in words), so that the command
//! line (its run flags and `--run FILE`) and Python read one description the same way.
//!
//! # From the description to the mechanism
//!
//! - **Effective batch.** With gradient accumulation over K physical batches of B, one noisy
//!   release sums K·B examples: the sampled batch is the effective one, B_e = K·B (jax_privacy
//!   PR #271: validating with the physical batch and calibrating with the effective one gave
//!   ε 0.72 against 5.6 at σ = 1).
//! - **Rate and steps.** `expected` counting (TensorFlow Privacy's
//!   `compute_dp_sgd_privacy`, dp_accounting's examples, this crate's `bound --epochs`):
//!   q = B_e/N and T = ⌈E/q⌉. `opacus` counting (Opacus's `make_private` with Poisson
//!   sampling): q = 1/⌈N/B_e⌉ (`DPDataLoader.from_data_loader`: `sample_rate = 1 /
//!   len(data_loader)`), and its sampler runs `int(1/q)` steps an epoch — ⌈N/B_e⌉, or one
//!   fewer where 1/(1/⌈N/B_e⌉) rounds below it in f64 (93 batches of 10 from 930 give 92
//!   steps) — so T = ⌈E·int(1/q)⌉, the steps Opacus's accountant records. (Opacus 1.6.0's
//!   accountant then records the rate 1/len(its DP loader) = 1/int(1/q), 1/92 there: a
//!   higher rate than its sampler's, so its ε is conservative for that run, not the run's.)
//! - **Microbatches** (TensorFlow Privacy `num_microbatches` = M < B_e): each microbatch's
//!   mean gradient is clipped to C, and adding or removing one example moves its microbatch's
//!   clipped value anywhere in the ball of radius C, so by up to 2C (TensorFlow Privacy issue
//!   #620). The released sum is then the Gaussian mechanism of sensitivity 2C, exactly the
//!   mechanism of noise multiplier σ/2 at sensitivity C; the bound is tight (a microbatch whose
//!   other members' clipped mean is −C·u turns into +C·u). M = B_e (one example per
//!   microbatch) is plain DP-SGD.
//! - **Sampler.** Poisson at q (add/remove; the full batch is q = 1), fixed-size batches of
//!   B_e from N without replacement (replace-one: [`super::rdp_without_replacement`]),
//!   shuffled epochs (no accountant: [`super::shuffle_lower`] gives a lower bound).
//!
//! # Examples
//! ```
//! use reconbound::accounting::description::{Counting, Description, Rate, Sampler, Length};
//! // An Opacus run: σ 1.1, batch 256 of 60,000, 30 epochs.
//! let mut d = Description::new(1.1, Rate::Batch { batch_size: 256, dataset_size: 60_000 },
//!     Length::Epochs(30.0));
//! d.counting = Counting::Opacus;
//! let r = d.resolve()?;
//! assert_eq!(r.steps, 7050); // 30 · ⌈60000/256⌉ = 30 · 235
//! assert_eq!(r.sampling_rate, 1.0 / 235.0);
//! # Ok::<(), reconbound::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::accounting::run::{Adjacency, Run};
use crate::accounting::schedule::Schedule;
use crate::error::{check_count, check_positive, check_unit_rate, Error, Result, Shown};

/// The most steps a description's epochs may give: the most a PLD composes.
const MAX_EPOCH_STEPS: u64 = crate::accounting::pld::MAX_COMPOSED_STEPS;

/// How batches are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// Every example joins a step's batch independently with probability q.
    Poisson,
    /// Every example in every step (q = 1).
    FullBatch,
    /// Batches of exactly B_e drawn without replacement, independently at each step.
    FixedSize,
    /// A random permutation per epoch, cut into batches of B_e.
    Shuffled,
}

impl Sampler {
    /// The name the command line, the run file and Python use: `poisson`, `full-batch`,
    /// `fixed-size`, `shuffled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sampler::Poisson => "poisson",
            Sampler::FullBatch => "full-batch",
            Sampler::FixedSize => "fixed-size",
            Sampler::Shuffled => "shuffled",
        }
    }

    /// The sampler of a name ([`Sampler::as_str`]; also `full`, `fixed`, `shuffle`).
    pub fn parse(s: &str) -> Option<Sampler> {
        Some(match s {
            "poisson" => Sampler::Poisson,
            "full-batch" | "full" => Sampler::FullBatch,
            "fixed-size" | "fixed" => Sampler::FixedSize,
            "shuffled" | "shuffle" => Sampler::Shuffled,
            _ => return None,
        })
    }
}

/// How epochs become steps (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// q = B_e/N, T = ⌈E/q⌉.
    Expected,
    /// Opacus: q = 1/⌈N/B_e⌉, T = ⌈E·int(1/q)⌉ (module docs).
    Opacus,
}

impl Counting {
    /// `expected` or `opacus`.
    pub fn as_str(self) -> &'static str {
        match self {
            Counting::Expected => "expected",
            Counting::Opacus => "opacus",
        }
    }

    /// The counting of a name ([`Counting::as_str`]).
    pub fn parse(s: &str) -> Option<Counting> {
        match s {
            "expected" => Some(Counting::Expected),
            "opacus" => Some(Counting::Opacus),
            _ => None,
        }
    }
}

/// The sampling rate, or the batch it comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// q itself (Poisson only).
    SamplingRate(f64),
    /// A (physical) batch size B of a data set of N examples.
    Batch {
        /// B: the batch of one forward pass (the effective batch is K·B with accumulation K).
        batch_size: u64,
        /// N.
        dataset_size: u64,
    },
    /// No rate: the full batch.
    Full,
}

/// How long the run is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Length {
    /// T noisy releases (optimizer steps).
    Steps(u64),
    /// E epochs (converted by the [`Counting`]).
    Epochs(f64),
}

/// A run as its user describes it (module docs). Build it with [`Description::new`] and set
/// the other fields; [`Description::phases`] for a schedule of Poisson phases.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// σ: the noise standard deviation is σ·C.
    pub noise_multiplier: f64,
    /// The rate or the batch.
    pub rate: Rate,
    /// Steps or epochs.
    pub length: Length,
    /// The sampler.
    pub sampler: Sampler,
    /// How epochs become steps.
    pub counting: Counting,
    /// K ≥ 1 physical batches per noisy release.
    pub accumulation: u64,
    /// TensorFlow Privacy's `num_microbatches` M (M divides B_e), if used.
    pub microbatches: Option<u64>,
    /// The neighbouring relation; `None`: the sampler's own (replace-one for fixed-size
    /// batches, add/remove otherwise).
    pub relation: Option<Adjacency>,
    /// A schedule of Poisson phases instead of one phase (the other fields but `relation`
    /// are then unused).
    pub phases: Option<Schedule>,
}

/// The mechanism of a [`Description`].
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The run the accountants analyse, under the description's relation: Poisson phases at
    /// the noise multiplier over the sensitivity in units of C (σ/2 with microbatches or
    /// under replace-one, σ otherwise), fixed-size batches at σ (their replace-one analysis
    /// doubles the sensitivity itself), shuffled epochs at σ. For Poisson sampling at q < 1
    /// under replace-one no accountant here has an upper bound: `run` is then the
    /// Poisson-subsampled Gaussian at σ/2, which is not a guarantee for it (the command line
    /// and [`super::verdict`] refuse or bound it from below only).
    pub run: Run,
    /// The add/remove pair of one record against one whose clipped gradient is 0, at the same
    /// sampling probability: Poisson at q (B_e/N for fixed-size and shuffled batches) and the
    /// noise multiplier over the add/remove sensitivity (σ/2 with microbatches): the lower
    /// ends of [`super::verdict`] for replace-one and fixed-size batches.
    pub add_remove_pair: Run,
    /// q of one step (B_e/N for fixed-size and shuffled batches; the first phase's for a
    /// schedule).
    pub sampling_rate: f64,
    /// T, the noisy releases in all.
    pub steps: u64,
    /// The noise multiplier over the sensitivity under the relation (σ/2 with microbatches
    /// or under replace-one).
    pub accounted_noise_multiplier: f64,
    /// Whether microbatches of several examples make the add/remove sensitivity 2C.
    pub microbatched: bool,
    /// The effective batch B_e and N, when the description has a batch.
    pub batch: Option<(u64, u64)>,
    /// The neighbouring relation the guarantees are stated for.
    pub relation: Adjacency,
    /// How the description became the mechanism, one step a line ("q = 1/235 (Opacus: …)").
    pub derivation: Vec<String>,
}

/// ⌈x·n / (y·d)⌉ for finite x, y > 0 and integers n, d ≥ 1, exactly (x and y are read as the
/// binary fractions they are); `None` when it exceeds 2^64 − 1.
fn ceil_ratio(x: f64, n: u64, y: f64, d: u64) -> Option<u64> {
    fn parts(v: f64) -> (u128, i32) {
        let bits = v.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as u128;
        if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1u128 << 52), exp - 1075)
        }
    }
    let ((mx, ex), (my, ey)) = (parts(x), parts(y));
    let mut num = mx.checked_mul(u128::from(n))?;
    let mut den = my.checked_mul(u128::from(d))?;
    if num == 0 {
        return Some(0);
    }
    let shift = ex - ey;
    if shift >= 0 {
        let sh = shift as u32;
        if sh >= num.leading_zeros() {
            return None;
        }
        num <<= sh;
    } else {
        let sh = (-shift) as u32;
        if sh >= den.leading_zeros() {
            return Some(1); // den > 2^127 > num: 0 < ratio < 1
        }
        den <<= sh;
    }
    u64::try_from(num.div_ceil(den)).ok()
}

impl Description {
    /// A Poisson run with the rate or batch and length given; counting `expected`, no
    /// accumulation, no microbatches, the sampler's relation.
    pub fn new(noise_multiplier: f64, rate: Rate, length: Length) -> Description {
        Description {
            noise_multiplier,
            rate,
            length,
            sampler: if rate == Rate::Full {
                Sampler::FullBatch
            } else {
                Sampler::Poisson
            },
            counting: Counting::Expected,
            accumulation: 1,
            microbatches: None,
            relation: None,
            phases: None,
        }
    }

    /// A schedule of Poisson phases.
    pub fn phases(schedule: Schedule) -> Description {
        Description {
            noise_multiplier: schedule.phases()[0].noise_multiplier,
            rate: Rate::SamplingRate(schedule.phases()[0].sampling_rate),
            length: Length::Steps(schedule.total_steps()),
            sampler: Sampler::Poisson,
            counting: Counting::Expected,
            accumulation: 1,
            microbatches: None,
            relation: None,
            phases: Some(schedule),
        }
    }

    /// The mechanism (module docs).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] `noise_multiplier` not finite and > 0, `sampling_rate` ∉
    /// (0, 1], `epochs` not finite and > 0 or giving more than 2^48 steps; [`Error::InvalidCount`] `steps`, `batch_size`,
    /// `dataset_size`, `accumulation` = 0, an effective batch above N, `microbatches` that do
    /// not divide the effective batch; [`Error::Inconsistent`] a combination that does not
    /// describe a run (a sampling rate with accumulation, with fixed-size or shuffled batches,
    /// or with the full batch; add/remove with fixed-size batches; microbatches without a
    /// batch).
    pub fn resolve(&self) -> Result<Resolved> {
        let relation_default = match self.sampler {
            Sampler::FixedSize => Adjacency::ReplaceOne,
            _ => Adjacency::AddRemove,
        };
        let relation = self.relation.unwrap_or(relation_default);
        if let Some(s) = &self.phases {
            let p = s.phases()[0];
            let mut derivation = Vec::new();
            derivation.push(format!(
                "{} Poisson phases, {} steps in all",
                s.phases().len(),
                s.total_steps()
            ));
            // phases have no microbatches: the relation's sensitivity is C or 2C
            let run = if relation == Adjacency::ReplaceOne {
                derivation.push(String::from(
                    "replace-one: sensitivity 2C, every phase accounted at σ/2",
                ));
                Run::schedule(s.scaled(0.5)?)
            } else {
                Run::schedule(s.clone())
            };
            return Ok(Resolved {
                run,
                add_remove_pair: Run::schedule(s.clone()),
                sampling_rate: p.sampling_rate,
                steps: s.total_steps(),
                accounted_noise_multiplier: p.noise_multiplier
                    * if relation == Adjacency::ReplaceOne {
                        0.5
                    } else {
                        1.0
                    },
                microbatched: false,
                batch: None,
                relation,
                derivation,
            });
        }
        let sigma = check_positive("noise_multiplier", self.noise_multiplier)?;
        let k = check_count("accumulation", self.accumulation, 1, ">= 1")?;
        if self.sampler == Sampler::FullBatch && self.counting == Counting::Opacus {
            return Err(Error::Inconsistent {
                what:
                    "sampler full-batch with Opacus step counting (a full-batch step is an epoch)",
                value: 0.0,
            });
        }
        let mut derivation = Vec::new();
        // q, and the effective batch when there is one
        let (q, batch) = match (self.sampler, self.rate) {
            (Sampler::FullBatch, Rate::Full) => (1.0, None),
            (Sampler::FullBatch, Rate::SamplingRate(q)) => {
                if q != 1.0 {
                    return Err(Error::Inconsistent {
                        what: "sampler full-batch with a sampling_rate other than 1",
                        value: q,
                    });
                }
                (1.0, None)
            }
            (Sampler::FullBatch, Rate::Batch {
                batch_size,
                dataset_size,
            }) => {
                check_count("dataset_size", dataset_size, 1, ">= 1")?;
                if batch_size.saturating_mul(k) != dataset_size {
                    return Err(Error::Inconsistent {
                        what: "sampler full-batch with a batch (times accumulation) other than the data set",
                        value: batch_size as f64,
                    });
                }
                (1.0, Some((dataset_size, dataset_size)))
            }
            (_, Rate::Full) => (1.0, None),
            (Sampler::Poisson, Rate::SamplingRate(q)) => {
                check_unit_rate("sampling_rate", q)?;
                if k > 1 {
                    return Err(Error::Inconsistent {
                        what: "accumulation with a sampling_rate (give batch_size and dataset_size, or the effective rate without accumulation)",
                        value: k as f64,
                    });
                }
                (q, None)
            }
            (_, Rate::SamplingRate(q)) => {
                return Err(Error::Inconsistent {
                    what: "fixed-size or shuffled batches need batch_size and dataset_size, not a sampling_rate",
                    value: q,
                })
            }
            (sampler, Rate::Batch {
                batch_size,
                dataset_size,
            }) => {
                check_count("batch_size", batch_size, 1, ">= 1")?;
                check_count("dataset_size", dataset_size, 1, ">= 1")?;
                let be = batch_size.saturating_mul(k);
                if be > dataset_size {
                    return Err(Error::InvalidCount {
                        name: if k > 1 { "accumulation" } else { "batch_size" },
                        value: if k > 1 { k } else { batch_size },
                        expected: "an effective batch (accumulation × batch_size) <= dataset_size",
                    });
                }
                if k > 1 {
                    derivation.push(format!(
                        "effective batch {be} = {k} accumulated batches of {batch_size}"
                    ));
                }
                let q = match (sampler, self.counting) {
                    (Sampler::Poisson, Counting::Opacus) => {
                        let per_epoch = dataset_size.div_ceil(be);
                        derivation.push(format!(
                            "q = 1/{per_epoch} (Opacus: 1/len(data_loader), ⌈{dataset_size}/{be}⌉ batches an epoch)"
                        ));
                        1.0 / per_epoch as f64
                    }
                    _ => {
                        derivation.push(format!("q = {be}/{dataset_size}"));
                        be as f64 / dataset_size as f64
                    }
                };
                (q, Some((be, dataset_size)))
            }
        };
        let steps = match self.length {
            Length::Steps(t) => check_count("steps", t, 1, ">= 1")?,
            Length::Epochs(e) => {
                let e = check_positive("epochs", e)?;
                // exact: ⌈E·N/B_e⌉ from the batch, ⌈E/q⌉ from a rate, ⌈E·int(1/q)⌉ for Opacus
                let t = match (self.counting, batch) {
                    (Counting::Opacus, _) => {
                        ceil_ratio(e, opacus_steps_per_epoch(q).max(1.0) as u64, 1.0, 1)
                    }
                    (Counting::Expected, Some((be, n))) => ceil_ratio(e, n, 1.0, be),
                    (Counting::Expected, None) => ceil_ratio(e, 1, q, 1),
                };
                let Some(t) = t.filter(|&t| t <= MAX_EPOCH_STEPS) else {
                    return Err(Error::InvalidParameter {
                        name: "epochs",
                        value: e,
                        expected: "giving at most 2^48 steps at this sampling rate",
                    });
                };
                derivation.push(match self.counting {
                    Counting::Opacus => {
                        let per_epoch = opacus_steps_per_epoch(q);
                        let loader = libm::round(1.0 / q);
                        if per_epoch < loader {
                            format!("T = {t} ({} epochs of {per_epoch} steps: Opacus's sampler runs int(1/q) = {per_epoch} steps an epoch, one fewer than its {loader} batches, as 1/(1/{loader}) rounds below {loader}; its accountant records q = 1/{per_epoch}, above the sampler's, which is conservative)", Shown(e))
                        } else {
                            format!("T = {t} ({} epochs of {per_epoch} steps)", Shown(e))
                        }
                    }
                    Counting::Expected => match batch {
                        Some((be, n)) => format!("T = {t} (⌈{} epochs × {n}/{be}⌉)", Shown(e)),
                        None => format!("T = {t} (⌈{} epochs / q⌉)", Shown(e)),
                    },
                });
                t
            }
        };
        let mut microbatched = false;
        if let Some(m) = self.microbatches {
            let Some((be, _)) = batch else {
                return Err(Error::Inconsistent {
                    what: "microbatches need batch_size and dataset_size",
                    value: m as f64,
                });
            };
            check_count("microbatches", m, 1, ">= 1")?;
            if be % m != 0 {
                return Err(Error::InvalidCount {
                    name: "microbatches",
                    value: m,
                    expected: "a divisor of the effective batch size",
                });
            }
            if m < be {
                microbatched = true;
                derivation.push(format!(
                    "{m} microbatches of {} examples: sensitivity 2C under add/remove (TensorFlow Privacy #620), accounted as σ/2 = {}",
                    be / m,
                    Shown(sigma / 2.0)
                ));
            }
        }
        // σ over the sensitivity: of the add/remove pair, and under the run's relation (one
        // replaced example moves the sum, or its microbatch's clipped mean, by up to 2C)
        let pair_sigma = if microbatched { sigma / 2.0 } else { sigma };
        let relation_sigma = if microbatched || relation == Adjacency::ReplaceOne {
            sigma / 2.0
        } else {
            sigma
        };
        if relation == Adjacency::ReplaceOne && !microbatched && self.sampler != Sampler::FixedSize
        {
            derivation.push(format!(
                "replace-one: sensitivity 2C, accounted as σ/2 = {}",
                Shown(relation_sigma)
            ));
        }
        let add_remove_pair = Run::poisson(q, pair_sigma, steps)?;
        let (run, accounted) = match self.sampler {
            Sampler::Poisson | Sampler::FullBatch => {
                (Run::poisson(q, relation_sigma, steps)?, relation_sigma)
            }
            Sampler::FixedSize | Sampler::Shuffled => {
                let Some((be, n)) = batch else {
                    return Err(Error::Inconsistent {
                        what: "fixed-size or shuffled batches need batch_size and dataset_size",
                        value: 0.0,
                    });
                };
                if self.sampler == Sampler::FixedSize {
                    (Run::fixed_size(be, n, sigma, steps)?, sigma / 2.0)
                } else {
                    (Run::shuffled(be, n, sigma, steps)?, relation_sigma)
                }
            }
        };
        if self.sampler == Sampler::FixedSize && relation == Adjacency::AddRemove {
            return Err(Error::Inconsistent {
                what: "relation add-remove with fixed-size batches (their batch size fixes the data set's size: they are accounted under replace-one)",
                value: 0.0,
            });
        }
        Ok(Resolved {
            run,
            add_remove_pair,
            sampling_rate: q,
            steps,
            accounted_noise_multiplier: accounted,
            microbatched,
            batch,
            relation,
            derivation,
        })
    }
}

/// The steps of one epoch of Opacus's Poisson loader at rate q: its
/// `UniformWithReplacementSampler` runs `int(1 / sample_rate)` steps, which is ⌈N/B⌉ − 1 where
/// 1/(1/⌈N/B⌉) rounds below ⌈N/B⌉ in f64 (5.9 % of loader lengths up to 200,000, the first
/// 93, 99, 105).
fn opacus_steps_per_epoch(q: f64) -> f64 {
    libm::trunc(1.0 / q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::schedule::Phase;

    fn batch(b: u64, n: u64) -> Rate {
        Rate::Batch {
            batch_size: b,
            dataset_size: n,
        }
    }

    #[test]
    fn opacus_counting_uses_the_loader_length() {
        // Opacus: 60,000 / 256 → 235 batches an epoch (the last one partial), q = 1/235
        let mut d = Description::new(1.1, batch(256, 60_000), Length::Epochs(30.0));
        d.counting = Counting::Opacus;
        let r = d.resolve().unwrap();
        assert_eq!((r.sampling_rate, r.steps), (1.0 / 235.0, 7050));
        assert_eq!(r.run, Run::poisson(1.0 / 235.0, 1.1, 7050).unwrap());
        // 930 examples in batches of 10: 93 batches, but 1/(1/93) = 92.99999999999999 and
        // Opacus's sampler runs int(1/q) = 92 steps an epoch (measured: len(DPDataLoader))
        let mut d = Description::new(1.0, batch(10, 930), Length::Epochs(2.0));
        d.counting = Counting::Opacus;
        let r = d.resolve().unwrap();
        assert_eq!((r.sampling_rate, r.steps), (1.0 / 93.0, 184));
    }

    #[test]
    fn expected_counting_matches_bound_epochs() {
        // bound's defaults: q = 256/60000, T = ⌈60 / q⌉ = 14063
        let d = Description::new(1.1, batch(256, 60_000), Length::Epochs(60.0));
        let r = d.resolve().unwrap();
        assert_eq!(r.sampling_rate, 256.0 / 60_000.0);
        assert_eq!(r.steps, 14_063);
    }

    #[test]
    fn accumulation_samples_the_effective_batch() {
        let mut d = Description::new(1.0, batch(64, 10_000), Length::Steps(100));
        d.accumulation = 4;
        let r = d.resolve().unwrap();
        assert_eq!(r.sampling_rate, 256.0 / 10_000.0);
        assert_eq!(r.batch, Some((256, 10_000)));
        // with a sampling rate, accumulation is ambiguous: refused
        let mut d = Description::new(1.0, Rate::SamplingRate(0.01), Length::Steps(100));
        d.accumulation = 2;
        assert!(matches!(d.resolve(), Err(Error::Inconsistent { .. })));
    }

    #[test]
    fn microbatches_of_several_examples_halve_the_noise_multiplier() {
        let mut d = Description::new(1.2, batch(256, 60_000), Length::Steps(1000));
        d.microbatches = Some(32);
        let r = d.resolve().unwrap();
        assert_eq!(r.accounted_noise_multiplier, 0.6);
        assert_eq!(r.run, Run::poisson(256.0 / 60_000.0, 0.6, 1000).unwrap());
        // one example per microbatch: plain DP-SGD
        d.microbatches = Some(256);
        assert_eq!(d.resolve().unwrap().accounted_noise_multiplier, 1.2);
        // not a divisor
        d.microbatches = Some(100);
        assert!(matches!(
            d.resolve(),
            Err(Error::InvalidCount {
                name: "microbatches",
                ..
            })
        ));
    }

    #[test]
    fn samplers_and_relations() {
        let mut d = Description::new(1.0, batch(100, 1_000), Length::Steps(50));
        d.sampler = Sampler::FixedSize;
        let r = d.resolve().unwrap();
        assert_eq!(r.relation, Adjacency::ReplaceOne);
        assert_eq!(r.run, Run::fixed_size(100, 1_000, 1.0, 50).unwrap());
        d.relation = Some(Adjacency::AddRemove);
        assert!(matches!(d.resolve(), Err(Error::Inconsistent { .. })));
        d.sampler = Sampler::Shuffled;
        assert_eq!(
            d.resolve().unwrap().run,
            Run::shuffled(100, 1_000, 1.0, 50).unwrap()
        );
        let d = Description::new(2.0, Rate::Full, Length::Steps(3));
        assert_eq!(d.resolve().unwrap().run, Run::full_batch(2.0, 3).unwrap());
    }

    #[test]
    fn epochs_become_steps_exactly() {
        // review of issue 40: ⌈E/q⌉ in f64 with q = 100/4900 gave 50; ⌈E·N/B⌉ = 49, as TF
        // Privacy and dp_accounting count
        let d = Description::new(1.0, batch(100, 4900), Length::Epochs(1.0));
        assert_eq!(d.resolve().unwrap().steps, 49);
        // every (E, B, N) of a grid, against integer arithmetic
        for n in [10u64, 99, 1000, 4900, 60_000] {
            for b in [1u64, 3, 7, 10, 100, 256] {
                if b > n {
                    continue;
                }
                for e in [1u64, 2, 3, 5, 10, 60] {
                    let d = Description::new(1.0, batch(b, n), Length::Epochs(e as f64));
                    assert_eq!(
                        d.resolve().unwrap().steps,
                        (e * n).div_ceil(b),
                        "{e} {b} {n}"
                    );
                }
            }
        }
        // a fractional epoch count, read as the binary fraction it is: 2.5 · 1000/100 = 25
        let d = Description::new(1.0, batch(100, 1000), Length::Epochs(2.5));
        assert_eq!(d.resolve().unwrap().steps, 25);
        // Opacus's count with a rate given: int(1/q) steps an epoch (q = 1/93: 92)
        let mut d = Description::new(1.0, Rate::SamplingRate(1.0 / 93.0), Length::Epochs(2.0));
        d.counting = Counting::Opacus;
        assert_eq!(d.resolve().unwrap().steps, 184);
    }

    #[test]
    fn ceil_ratio_is_exact() {
        assert_eq!(ceil_ratio(3.0, 10, 1.0, 4), Some(8));
        assert_eq!(ceil_ratio(1.0, 1, 0.1, 1), Some(10)); // 0.1 is a little above 1/10
        assert_eq!(ceil_ratio(1.0, 1, 0.3, 1), Some(4)); // 1/0.3 = 3.33…
        assert_eq!(ceil_ratio(1e-300, 1, 1.0, 1), Some(1));
        assert_eq!(ceil_ratio(1e300, 1, 1.0, 1), None);
        assert_eq!(ceil_ratio(5e-324, 1, 1e300, u64::MAX), Some(1));
    }

    #[test]
    fn microbatches_and_replace_one_double_the_sensitivity_once() {
        // the review: σ/2 for microbatches and σ/2 again for replace-one made σ/4
        let mut d = Description::new(
            2.0,
            Rate::Batch {
                batch_size: 100,
                dataset_size: 100,
            },
            Length::Steps(1),
        );
        d.sampler = Sampler::FullBatch;
        d.microbatches = Some(10);
        d.relation = Some(Adjacency::ReplaceOne);
        let r = d.resolve().unwrap();
        assert_eq!(r.accounted_noise_multiplier, 1.0);
        assert_eq!(r.run, Run::full_batch(1.0, 1).unwrap());
        // fixed-size batches with microbatches: still 2C, the replace-one analysis at σ
        let mut d = Description::new(1.0, batch(100, 10_000), Length::Steps(10));
        d.sampler = Sampler::FixedSize;
        d.microbatches = Some(10);
        let r = d.resolve().unwrap();
        assert_eq!(r.run, Run::fixed_size(100, 10_000, 1.0, 10).unwrap());
        assert_eq!(r.add_remove_pair, Run::poisson(0.01, 0.5, 10).unwrap());
    }

    #[test]
    fn full_batch_refuses_what_it_cannot_mean() {
        let mut d = Description::new(1.0, batch(256, 60_000), Length::Steps(3));
        d.sampler = Sampler::FullBatch;
        assert!(matches!(d.resolve(), Err(Error::Inconsistent { .. })));
        let mut d = Description::new(1.0, Rate::Full, Length::Epochs(3.0));
        d.counting = Counting::Opacus;
        assert!(matches!(d.resolve(), Err(Error::Inconsistent { .. })));
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let d = Description::new(f64::NAN, Rate::SamplingRate(0.01), Length::Steps(1));
        assert_eq!(
            d.resolve().unwrap_err().parameter(),
            Some("noise_multiplier")
        );
        let d = Description::new(1.0, Rate::SamplingRate(1.5), Length::Steps(1));
        assert_eq!(d.resolve().unwrap_err().parameter(), Some("sampling_rate"));
        let d = Description::new(1.0, batch(10, 5), Length::Steps(1));
        assert_eq!(d.resolve().unwrap_err().parameter(), Some("batch_size"));
        let d = Description::new(1.0, Rate::SamplingRate(1e-18), Length::Epochs(1.0));
        assert_eq!(d.resolve().unwrap_err().parameter(), Some("epochs"));
    }

    #[test]
    fn phases_resolve_to_their_schedule() {
        let s = Schedule::new(&[
            Phase {
                sampling_rate: 0.01,
                noise_multiplier: 1.0,
                steps: 10,
            },
            Phase {
                sampling_rate: 0.02,
                noise_multiplier: 2.0,
                steps: 5,
            },
        ])
        .unwrap();
        let r = Description::phases(s.clone()).resolve().unwrap();
        assert_eq!(r.run, Run::schedule(s));
        assert_eq!(r.steps, 15);
    }
}
