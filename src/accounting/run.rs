//! A DP-SGD run as a value, and one accountant interface over it.
//!
//! In the spirit of dp_accounting's `DpEvent` → `PrivacyAccountant` → typed result: a [`Run`]
//! says how batches are sampled ([`Sampling`]: Poisson at rate q — the full batch at q = 1 —,
//! fixed-size batches without replacement, or shuffled epochs), with which noise multiplier
//! and for how many steps, or a schedule of Poisson phases ([`Schedule`]). An [`Accountant`]
//! (RDP with either conversion, or the certified PLD) turns it into a typed bound
//! ([`Epsilon`]), or says why it cannot ([`Unsupported`]: a reason a person reads, never a
//! number that is not a guarantee). [`epsilon_all`] gives every accountant's answer at once
//! ([`RunEpsilon`]), as the command line's `train`, `epsilon` and `bound` print them.
//!
//! Two layers of failure, never mixed up:
//! - `Err(`[`Error`]`)`: the input is invalid (a parameter out of range), as everywhere else;
//! - `Ok(Err(`[`Unsupported`]`))`: the run is valid but this accountant has no guarantee for
//!   it (shuffled batches; the PLD of fixed-size batches; a PLD whose grid cannot certify
//!   this configuration). The other accountants' answers still stand.
//!
//! # Adjacency
//! Poisson sampling and the full batch are accounted under add/remove adjacency (the worse
//! of both directions); fixed-size batches under replace-one adjacency, where the sum of
//! clipped gradients has sensitivity 2C, so the accountant sees the noise multiplier σ/2
//! (Wang, Balle, Kasiviswanathan 2019, Thm 9; [`rdp_without_replacement`]).
//!
//! # The certified PLD of a run
//! [`pld_schedule::epsilon`], with two closed forms in front of it for the configurations
//! its grid cannot resolve:
//!
//! - **Total variation.** δ(ε) = max over both directions of H_{e^ε}(P‖Q) is non-increasing
//!   in ε, and δ(0) = TV(P, Q). For one step, P = (1−q)N(0, σ²) + qN(1, σ²) and
//!   Q = N(0, σ²) (sensitivity in units of C), so TV(P, Q) = q·TV(N(1, σ²), N(0, σ²)) =
//!   q(2Φ(1/(2σ)) − 1) ≤ q/(σ√(2π)), since Φ' ≤ 1/√(2π). TV is subadditive over products,
//!   so a schedule has δ(0) ≤ Σ_p T_p q_p/(σ_p√(2π)); when every phase is full-batch (q = 1)
//!   the composition is exactly one Gaussian pair with μ = √(Σ_p T_p/σ_p²) and
//!   δ(0) = 2Φ(μ/2) − 1 ≤ μ/√(2π). If the smaller of these bounds (with a relative margin
//!   for rounding) is ≤ δ, then ε(δ) = 0 is certified, upper and lower.
//! - **Gaussian tail.** When every phase is full-batch and the PLD has no value (its grid
//!   would be too large, as for σ = 0.05, T = 3, or δ below what it resolves), the pair is
//!   exactly N(μ, 1) against N(0, 1), whose privacy loss L is N(μ²/2, μ²) under either, so
//!   δ(ε) = E[(1 − e^{ε−L})₊] ≤ P(L > ε) = Φ̄((ε − μ²/2)/μ) ≤ ½·exp(−((ε − μ²/2)/μ)²/2) for
//!   ε ≥ μ²/2. With z = √(2 ln(1/(2δ))), ε = μz + μ²/2 gives δ(ε) ≤ δ: a certified upper
//!   bound (with the rounding margin), returned with the trivial lower bound 0.
//!
//! Citations: Balle & Wang 2018 (analytic Gaussian mechanism, Thm 8); Φ̄(z) ≤ ½e^{−z²/2}
//! for z ≥ 0 (Chernoff); Dong, Roth, Su 2022 (composition of Gaussian mechanisms is μ-GDP with
//! μ = √(Σ μ_t²)); TV(λP₁ + (1−λ)Q, Q) = λ·TV(P₁, Q) and TV(⊗Pᵢ, ⊗Qᵢ) ≤ Σ TV(Pᵢ, Qᵢ).
//!
//! # Examples
//! ```
//! use reconbound::accounting::run::{epsilon, epsilon_all, Accountant, Run, Unsupported};
//! use reconbound::accounting::rdp::Conversion;
//!
//! // Abadi et al. 2016: Poisson sampling, q = 256/60000, σ = 1.1, 14,063 steps, δ = 1e-5.
//! let run = Run::poisson(256.0 / 60000.0, 1.1, 14063)?;
//! let all = epsilon_all(&run, 1e-5)?.expect("Poisson runs are accounted");
//! let pld = all.pld.expect("a certified PLD value");
//! assert!(pld.lower <= pld.value && pld.value <= all.rdp.epsilon);
//!
//! // One accountant at a time, with the same answer.
//! let e = epsilon(&run, 1e-5, Accountant::Rdp(Conversion::Improved))?;
//! assert_eq!(e.unwrap().upper(), all.rdp.epsilon);
//!
//! // Shuffled epochs have no guarantee here: a typed "unsupported, because …".
//! let shuffled = Run::shuffled(256, 60000, 1.1, 14063)?;
//! assert_eq!(epsilon_all(&shuffled, 1e-5)?.unwrap_err(), Unsupported::Shuffled);
//! # Ok::<(), reconbound::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::accounting::pld::{self, PldConfig};
use crate::accounting::pld_schedule;
use crate::accounting::rdp::{self, Conversion};
use crate::accounting::rdp_without_replacement;
use crate::accounting::schedule::{Phase, Schedule};
use crate::error::{check_count, check_open_unit, check_positive, Error, Result, Shown};

/// How each step picks its batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Every example joins a step's batch independently with probability `rate` ∈ (0, 1];
    /// `rate` = 1 is the full batch.
    Poisson {
        /// The sampling rate q.
        rate: f64,
    },
    /// Batches of exactly `batch_size` examples drawn uniformly without replacement from
    /// `dataset_size`, independently at every step.
    FixedSize {
        /// The batch size B.
        batch_size: u64,
        /// The data set's size n.
        dataset_size: u64,
    },
    /// Shuffled epochs: a random permutation per epoch, cut into batches of `batch_size`.
    Shuffled {
        /// The batch size B.
        batch_size: u64,
        /// The data set's size n.
        dataset_size: u64,
    },
}

/// The neighbouring relation a guarantee is stated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjacency {
    /// Add or remove one example (both directions).
    AddRemove,
    /// Replace one example by another.
    ReplaceOne,
}

impl Adjacency {
    /// `"add-remove"` or `"replace-one"` (the command line's JSON value).
    pub fn as_str(self) -> &'static str {
        match self {
            Adjacency::AddRemove => "add-remove",
            Adjacency::ReplaceOne => "replace-one",
        }
    }
}

/// A DP-SGD run: sampling, noise multiplier σ (the noise std is σ·C) and steps, or a schedule
/// of Poisson phases. Built by the constructors, which validate every field.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Poisson(Schedule),
    Batches {
        sampling: Sampling,
        noise_multiplier: f64,
        steps: u64,
    },
}

impl Run {
    /// T steps of Poisson sampling at rate q (q = 1: the full batch) with noise multiplier σ.
    ///
    /// # Errors
    /// `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0, `steps` = 0.
    pub fn poisson(sampling_rate: f64, noise_multiplier: f64, steps: u64) -> Result<Run> {
        Ok(Run::schedule(Schedule::single(Phase {
            sampling_rate,
            noise_multiplier,
            steps,
        })?))
    }

    /// T full-batch steps (every example in every step) with noise multiplier σ.
    ///
    /// # Errors
    /// As [`Run::poisson`].
    pub fn full_batch(noise_multiplier: f64, steps: u64) -> Result<Run> {
        Run::poisson(1.0, noise_multiplier, steps)
    }

    /// A schedule of Poisson phases, composed in order.
    pub fn schedule(schedule: Schedule) -> Run {
        Run {
            kind: Kind::Poisson(schedule),
        }
    }

    /// T steps of fixed-size batches of B from n without replacement, noise multiplier σ.
    ///
    /// # Errors
    /// `batch_size` ∉ 1..=`dataset_size`, `dataset_size` = 0, `noise_multiplier` not finite
    /// and > 0, `steps` = 0.
    pub fn fixed_size(
        batch_size: u64,
        dataset_size: u64,
        noise_multiplier: f64,
        steps: u64,
    ) -> Result<Run> {
        Run::batches(
            Sampling::FixedSize {
                batch_size,
                dataset_size,
            },
            noise_multiplier,
            steps,
        )
    }

    /// T steps of shuffled epochs in batches of B from n, noise multiplier σ.
    ///
    /// # Errors
    /// As [`Run::fixed_size`].
    pub fn shuffled(
        batch_size: u64,
        dataset_size: u64,
        noise_multiplier: f64,
        steps: u64,
    ) -> Result<Run> {
        Run::batches(
            Sampling::Shuffled {
                batch_size,
                dataset_size,
            },
            noise_multiplier,
            steps,
        )
    }

    /// One phase of any [`Sampling`].
    ///
    /// # Errors
    /// As [`Run::poisson`] or [`Run::fixed_size`].
    pub fn new(sampling: Sampling, noise_multiplier: f64, steps: u64) -> Result<Run> {
        match sampling {
            Sampling::Poisson { rate } => Run::poisson(rate, noise_multiplier, steps),
            _ => Run::batches(sampling, noise_multiplier, steps),
        }
    }

    fn batches(sampling: Sampling, noise_multiplier: f64, steps: u64) -> Result<Run> {
        if let Sampling::FixedSize {
            batch_size,
            dataset_size,
        }
        | Sampling::Shuffled {
            batch_size,
            dataset_size,
        } = sampling
        {
            check_count("dataset_size", dataset_size, 1, ">= 1")?;
            if batch_size == 0 || batch_size > dataset_size {
                return Err(Error::InvalidCount {
                    name: "batch_size",
                    value: batch_size,
                    expected: "in 1..=dataset_size",
                });
            }
        }
        check_positive("noise_multiplier", noise_multiplier)?;
        check_count("steps", steps, 1, ">= 1")?;
        Ok(Run {
            kind: Kind::Batches {
                sampling,
                noise_multiplier,
                steps,
            },
        })
    }

    /// The schedule of a Poisson run, `None` for fixed-size or shuffled batches.
    pub fn as_schedule(&self) -> Option<&Schedule> {
        match &self.kind {
            Kind::Poisson(s) => Some(s),
            Kind::Batches { .. } => None,
        }
    }

    /// The replace-one RDP curve of a fixed-size-batch run at `orders` (Wang, Balle &
    /// Kasiviswanathan 2019 Thm 9 at σ/2, as [`rdp_epsilon`] uses it); `None` for Poisson
    /// runs and shuffled epochs. An order whose RDP overflows is +∞.
    ///
    /// # Errors
    /// An order not finite and > 1 or above the kernel's limit; `orders` empty.
    pub fn fixed_size_rdp(&self, orders: &[f64]) -> Result<Option<Vec<f64>>> {
        let Kind::Batches {
            sampling:
                Sampling::FixedSize {
                    batch_size,
                    dataset_size,
                },
            noise_multiplier,
            steps,
        } = &self.kind
        else {
            return Ok(None);
        };
        let half = rdp_without_replacement::replace_one_noise_multiplier(*noise_multiplier)?;
        let mut out = alloc::vec![0.0; orders.len()];
        rdp_without_replacement::wor_rdp_curve_replace_one_into(
            *batch_size,
            *dataset_size,
            half,
            *steps,
            orders,
            &mut out,
        )?;
        Ok(Some(out))
    }

    /// The sampling of a one-phase run (`None` for a schedule of several phases).
    pub fn sampling(&self) -> Option<Sampling> {
        match &self.kind {
            Kind::Poisson(s) => s.as_single().map(|p| Sampling::Poisson {
                rate: p.sampling_rate,
            }),
            Kind::Batches { sampling, .. } => Some(*sampling),
        }
    }

    /// The noise multiplier and steps of a one-phase run (`None` for a schedule of several
    /// phases).
    pub fn noise_and_steps(&self) -> Option<(f64, u64)> {
        match &self.kind {
            Kind::Poisson(s) => s.as_single().map(|p| (p.noise_multiplier, p.steps)),
            Kind::Batches {
                noise_multiplier,
                steps,
                ..
            } => Some((*noise_multiplier, *steps)),
        }
    }

    /// The neighbouring relation this run's guarantees are stated for.
    pub fn adjacency(&self) -> Adjacency {
        match &self.kind {
            Kind::Batches {
                sampling: Sampling::FixedSize { .. },
                ..
            } => Adjacency::ReplaceOne,
            _ => Adjacency::AddRemove,
        }
    }

    /// What the accountants analyse, in words (with the paper), e.g. `"Poisson-subsampled
    /// Gaussian (Mironov, Talwar, Zhang 2019)"`.
    pub fn analysis(&self) -> String {
        match &self.kind {
            Kind::Poisson(s) => String::from(
                if s.phases().iter().all(|p| p.sampling_rate >= 1.0) {
                    "full batch, Gaussian mechanism (Mironov 2017)"
                } else {
                    "Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019)"
                },
            ),
            Kind::Batches {
                sampling:
                    Sampling::FixedSize {
                        batch_size,
                        dataset_size,
                    },
                noise_multiplier,
                ..
            } => format!(
                "fixed-size batches of {batch_size} from {dataset_size} without replacement, sensitivity 2·C so σ/2 = {} (Wang, Balle, Kasiviswanathan 2019, Thm 9)",
                noise_multiplier / 2.0
            ),
            Kind::Batches { .. } => String::from("shuffled epochs: no analysis"),
        }
    }
}

/// Why an accountant has no guarantee for a valid run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unsupported {
    /// Shuffled epochs: no tight analysis is implemented, and the Poisson ε at the same rate
    /// is not a guarantee for them.
    Shuffled,
    /// Fixed-size batches without replacement have an RDP accountant only.
    PldFixedSize,
    /// The PLD's grid cannot certify ε(δ) for this run: the tail it must truncate (charged
    /// as an infinite loss) already exceeds δ.
    PldTailAboveDelta {
        /// The δ asked for.
        delta: f64,
    },
    /// The certified computation (the PLD's ε(δ), the Hayes γ's composition) has no value
    /// for this run: its grid would be too large, or a computation did not converge. The
    /// error says which.
    NoCertifiedValue(Error),
}

impl Unsupported {
    /// The reason in one line, with the papers (the command line's JSON notes add what to use
    /// instead, in its flags).
    pub fn reason(&self) -> String {
        match self {
            Unsupported::Shuffled => String::from(
                "no epsilon: shuffled epochs have no tight privacy analysis implemented, and the Poisson-sampling epsilon at the same rate is not a guarantee for them: it can underestimate the true epsilon of shuffled batches (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, 'How private are DP-SGD implementations?', ICML 2024; Annamalai, Balle, De Cristofaro, Hayes, 'To shuffle or not to shuffle: auditing DP-SGD with shuffling', 2024)",
            ),
            Unsupported::PldFixedSize => String::from(
                "no PLD accountant for fixed-size batches without replacement; RDP only",
            ),
            Unsupported::PldTailAboveDelta { delta } => format!(
                "not available: the tail of the privacy-loss law that the PLD grid must truncate (charged as an infinite loss) already exceeds δ = {}",
                Shown(*delta)
            ),
            Unsupported::NoCertifiedValue(e) => format!("not available: {e}"),
        }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason())
    }
}

/// An accountant: how a run's (ε, δ) guarantee is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accountant {
    /// Rényi DP at [`rdp::DEFAULT_ORDERS`], converted to (ε, δ) by the given conversion.
    Rdp(Conversion),
    /// The certified privacy-loss distribution ([`PldConfig::default`]): an upper bound and
    /// a lower bound on the mechanism's exact ε(δ).
    Pld,
}

/// One accountant's ε(δ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Epsilon {
    /// By RDP: ε rounded up and the minimising order.
    Rdp(rdp::EpsilonBound),
    /// By the certified PLD: upper and lower bounds on the exact ε(δ).
    Pld(pld::Estimate),
}

impl Epsilon {
    /// The guarantee: ε(δ) is at most this.
    pub fn upper(&self) -> f64 {
        match self {
            Epsilon::Rdp(b) => b.epsilon,
            Epsilon::Pld(e) => e.value,
        }
    }
}

/// A run's ε(δ) by every accountant that applies ([`epsilon_all`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RunEpsilon {
    /// By RDP, improved conversion (Canonne, Kamath, Steinke 2020).
    pub rdp: rdp::EpsilonBound,
    /// By RDP, Mironov's conversion (2017, Prop. 3).
    pub rdp_mironov: rdp::EpsilonBound,
    /// By the certified PLD, or why there is none.
    pub pld: core::result::Result<pld::Estimate, Unsupported>,
    /// The neighbouring relation of these guarantees.
    pub adjacency: Adjacency,
    /// What was analysed ([`Run::analysis`]).
    pub analysis: String,
}

/// `run`'s ε(δ) by `accountant`: `Ok(Ok(bound))`, or `Ok(Err(why))` when this accountant has
/// no guarantee for this valid run.
///
/// # Errors
/// `delta` ∉ (0, 1); the errors of the underlying accountant for invalid input
/// ([`rdp::epsilon`], [`rdp_without_replacement::epsilon_replace_one`],
/// [`pld_schedule::epsilon`]); an RDP curve that is infinite at every order
/// ([`Error::Numerical`]).
pub fn epsilon(
    run: &Run,
    delta: f64,
    accountant: Accountant,
) -> Result<core::result::Result<Epsilon, Unsupported>> {
    let delta = check_open_unit("delta", delta)?;
    Ok(match accountant {
        Accountant::Rdp(c) => rdp_epsilon(run, delta, c)?.map(Epsilon::Rdp),
        Accountant::Pld => pld_epsilon(run, delta)?.map(Epsilon::Pld),
    })
}

/// `run`'s ε(δ) by RDP (both conversions) and by the certified PLD, with the adjacency and
/// what was analysed; `Ok(Err(why))` when no accountant applies (shuffled epochs). A PLD
/// without a certified value is `pld: Err(why)` beside the RDP values.
///
/// # Errors
/// As [`epsilon`].
pub fn epsilon_all(run: &Run, delta: f64) -> Result<core::result::Result<RunEpsilon, Unsupported>> {
    let delta = check_open_unit("delta", delta)?;
    let improved = match rdp_epsilon(run, delta, Conversion::Improved)? {
        Ok(b) => b,
        Err(why) => return Ok(Err(why)),
    };
    let mironov = match rdp_epsilon(run, delta, Conversion::Mironov)? {
        Ok(b) => b,
        Err(why) => return Ok(Err(why)),
    };
    Ok(Ok(RunEpsilon {
        rdp: improved,
        rdp_mironov: mironov,
        pld: pld_epsilon(run, delta)?,
        adjacency: run.adjacency(),
        analysis: run.analysis(),
    }))
}

/// [`epsilon`] by RDP, typed: the Poisson schedule's RDP at [`rdp::DEFAULT_ORDERS`], or
/// replace-one RDP of fixed-size batches at σ/2; shuffled epochs have none.
///
/// # Errors
/// As [`epsilon`].
pub fn rdp_epsilon(
    run: &Run,
    delta: f64,
    conversion: Conversion,
) -> Result<core::result::Result<rdp::EpsilonBound, Unsupported>> {
    let delta = check_open_unit("delta", delta)?;
    match &run.kind {
        Kind::Poisson(s) => Ok(Ok(s.epsilon_rdp(delta, conversion)?)),
        Kind::Batches {
            sampling:
                Sampling::FixedSize {
                    batch_size,
                    dataset_size,
                },
            noise_multiplier,
            steps,
        } => {
            let half = rdp_without_replacement::replace_one_noise_multiplier(*noise_multiplier)?;
            Ok(Ok(rdp_without_replacement::epsilon_replace_one(
                *batch_size,
                *dataset_size,
                half,
                *steps,
                delta,
                conversion,
            )?))
        }
        Kind::Batches { .. } => Ok(Err(Unsupported::Shuffled)),
    }
}

/// [`epsilon`] by the certified PLD, typed: a Poisson schedule's (with the closed forms of
/// the module docs in front of [`pld_schedule::epsilon`]); fixed-size batches and shuffled
/// epochs have none.
///
/// # Errors
/// As [`epsilon`].
pub fn pld_epsilon(
    run: &Run,
    delta: f64,
) -> Result<core::result::Result<pld::Estimate, Unsupported>> {
    let delta = check_open_unit("delta", delta)?;
    match &run.kind {
        Kind::Poisson(s) => schedule_pld(s, delta),
        Kind::Batches {
            sampling: Sampling::Shuffled { .. },
            ..
        } => Ok(Err(Unsupported::Shuffled)),
        Kind::Batches { .. } => Ok(Err(Unsupported::PldFixedSize)),
    }
}

/// The certified PLD ε(δ) of a schedule (add/remove adjacency), with the closed forms of the
/// module docs in front of [`pld_schedule::epsilon`]; its numerical failures become
/// [`Unsupported`].
fn schedule_pld(
    schedule: &Schedule,
    delta: f64,
) -> Result<core::result::Result<pld::Estimate, Unsupported>> {
    let inv_sqrt_2pi = 0.398_942_280_401_432_7;
    let phases = schedule.phases();
    let subsampled: f64 = phases
        .iter()
        .map(|p| p.steps as f64 * p.sampling_rate / p.noise_multiplier)
        .sum::<f64>()
        * inv_sqrt_2pi;
    // each term is off by a few units of roundoff u, a sum of n terms by n·u more, and
    // 1/√(2π) or ln 2 by less than u: the factor (1 + 1e-12)(1 + 4(n + 3)u) covers them all
    let n = phases.len() as f64;
    let margin = (1.0 + 1e-12) * (1.0 + 4.0 * (n + 3.0) * f64::EPSILON);
    // μ of a composition of full-batch phases (rounded up), if every phase is one
    let mu_full = phases.iter().all(|p| p.sampling_rate >= 1.0).then(|| {
        let mu2: f64 = phases
            .iter()
            .map(|p| p.steps as f64 / (p.noise_multiplier * p.noise_multiplier))
            .sum();
        libm::sqrt(mu2) * margin
    });
    let full = mu_full.map_or(f64::INFINITY, |mu| mu * inv_sqrt_2pi);
    let tv = subsampled.min(full) * margin;
    if tv.is_finite() && tv <= delta {
        return Ok(Ok(pld::Estimate {
            value: 0.0,
            lower: 0.0,
        }));
    }
    let r = match pld_schedule::epsilon(schedule, delta, &PldConfig::default()) {
        Ok(e) => Ok(e),
        Err(e @ (Error::Numerical { what, .. } | Error::NotConverged { what, .. })) => {
            if what.contains("+infinity mass") {
                Err(Unsupported::PldTailAboveDelta { delta })
            } else {
                Err(Unsupported::NoCertifiedValue(e))
            }
        }
        Err(e) => return Err(e),
    };
    if let (Err(_), Some(mu)) = (&r, mu_full) {
        // full batch, and no PLD value: the Gaussian tail bound (module docs)
        let z = libm::sqrt(-2.0 * (core::f64::consts::LN_2 + libm::log(delta))) * margin;
        let value = (mu * z + 0.5 * mu * mu) * margin;
        if value.is_finite() {
            return Ok(Ok(pld::Estimate { value, lower: 0.0 }));
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poisson runs: each accountant's answer is the bit-identical value of the function it
    /// stands for (the typed layer computes nothing of its own).
    #[test]
    fn poisson_run_answers_are_the_accountants_own_values() {
        let run = Run::poisson(0.01, 1.1, 1000).unwrap();
        let all = epsilon_all(&run, 1e-5).unwrap().unwrap();
        let c = Conversion::Improved;
        assert_eq!(all.rdp, rdp::epsilon(0.01, 1.1, 1000, 1e-5, c).unwrap());
        let m = Conversion::Mironov;
        assert_eq!(
            all.rdp_mironov,
            rdp::epsilon(0.01, 1.1, 1000, 1e-5, m).unwrap()
        );
        let p = pld::epsilon(0.01, 1.1, 1000, 1e-5, &PldConfig::default()).unwrap();
        assert_eq!(all.pld, Ok(p));
        assert_eq!(all.adjacency, Adjacency::AddRemove);
        assert_eq!(
            all.analysis,
            "Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019)"
        );
    }

    /// Fixed-size batches: replace-one RDP at σ/2, and a typed refusal from the PLD.
    #[test]
    fn fixed_size_run_is_replace_one_rdp_at_half_the_noise_and_has_no_pld() {
        let run = Run::fixed_size(100, 10_000, 1.0, 100).unwrap();
        let all = epsilon_all(&run, 1e-5).unwrap().unwrap();
        let want = rdp_without_replacement::epsilon_replace_one(
            100,
            10_000,
            0.5,
            100,
            1e-5,
            Conversion::Improved,
        )
        .unwrap();
        assert_eq!(all.rdp, want);
        assert_eq!(all.pld, Err(Unsupported::PldFixedSize));
        assert_eq!(all.adjacency, Adjacency::ReplaceOne);
        assert!(all.analysis.contains("σ/2 = 0.5"), "{}", all.analysis);
    }

    /// Shuffled epochs: every accountant refuses, with the reason naming the pitfall.
    #[test]
    fn shuffled_run_is_unsupported_by_every_accountant() {
        let run = Run::shuffled(100, 10_000, 1.0, 100).unwrap();
        for a in [
            Accountant::Rdp(Conversion::Improved),
            Accountant::Rdp(Conversion::Mironov),
            Accountant::Pld,
        ] {
            assert_eq!(epsilon(&run, 1e-5, a).unwrap(), Err(Unsupported::Shuffled));
        }
        assert!(Unsupported::Shuffled.reason().contains("Chua"));
    }

    /// A release so noisy that TV ≤ δ: ε = 0 is certified in closed form; the full batch with
    /// a grid too fine to build gets the Gaussian tail bound, which is above the exact ε.
    #[test]
    fn degenerate_runs_get_the_closed_forms_and_they_are_valid() {
        let run = Run::poisson(0.01, 1e300, 10).unwrap();
        let e = epsilon(&run, 1e-5, Accountant::Pld).unwrap().unwrap();
        assert_eq!(
            e,
            Epsilon::Pld(pld::Estimate {
                value: 0.0,
                lower: 0.0
            })
        );
        // full batch, σ = 0.05, T = 3: μ = √1200, exact ε by the analytic Gaussian
        let run = Run::full_batch(0.05, 3).unwrap();
        let e = epsilon(&run, 1e-5, Accountant::Pld).unwrap().unwrap();
        let exact = crate::accounting::gaussian::full_batch_epsilon(0.05, 3, 1e-5).unwrap();
        assert!(e.upper() >= exact, "{e:?} below the exact {exact}");
    }

    /// Invalid input is an error naming the parameter, not an `Unsupported`.
    #[test]
    fn invalid_runs_and_deltas_are_errors_naming_the_parameter() {
        let name = |e: Error| match e {
            Error::InvalidParameter { name, .. } | Error::InvalidCount { name, .. } => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            name(Run::poisson(1.5, 1.0, 1).unwrap_err()),
            "sampling_rate"
        );
        assert_eq!(
            name(Run::poisson(0.5, -1.0, 1).unwrap_err()),
            "noise_multiplier"
        );
        assert_eq!(name(Run::poisson(0.5, 1.0, 0).unwrap_err()), "steps");
        assert_eq!(
            name(Run::fixed_size(0, 10, 1.0, 1).unwrap_err()),
            "batch_size"
        );
        assert_eq!(
            name(Run::fixed_size(11, 10, 1.0, 1).unwrap_err()),
            "batch_size"
        );
        assert_eq!(
            name(Run::shuffled(1, 0, 1.0, 1).unwrap_err()),
            "dataset_size"
        );
        let run = Run::poisson(0.5, 1.0, 1).unwrap();
        assert_eq!(
            name(epsilon(&run, 0.0, Accountant::Pld).unwrap_err()),
            "delta"
        );
        assert_eq!(name(epsilon_all(&run, 1.0).unwrap_err()), "delta");
    }
}
