//! What an audit tests, and its verdict.
//!
//! An audit's empirical ε is a lower bound on the trained mechanism's ε that holds with
//! probability ≥ 1 − α per row (Nasr et al. 2021, Eqs. 4–5; Steinke, Nasr, Jagielski 2023 for
//! one run). It tests a [`Claim`] — the accountant's ε for the trainer's own σ, for a claimed
//! σ′ at the same (q, T, δ), or a given ε — and refutes it when some row's lower bound is
//! above the claimed ε. With k rows, each wrong with probability ≤ α, a refutation by any of
//! them is wrong with probability ≤ k·α (the union bound, [`claim_error`]). A GDP estimate
//! is no lower bound on ε: it refutes nothing by its ε ([`Verdict::refuted`] is `None`) —
//! but its μ̂ refutes a claimed **curve** μ_c-GDP when μ̂ > μ_c, for any mechanism
//! ([`gdp_verdict`]; full-batch claims, [`claimed_gdp_mu`]). The f-DP one-run test refutes a
//! claimed curve directly ([`ClaimedCurve`]).
//!
//! # Examples
//! ```
//! use reconbound::attacks::audit::claim::{accountant, verdict, Claim};
//!
//! // a trainer at σ = 0.5 claimed as σ′ = 1 (full batch, one step, δ = 1e-5)
//! let claim = Claim::NoiseMultiplier(1.0).checked()?;
//! let theory = accountant(1.0, claim.accountant_noise_multiplier(0.5), 1, 1e-5)?;
//! // the claimed ε is the certified PLD ε at σ′ = 1 (4.3772 exactly, a hair above)
//! let v = verdict(claim, theory.upper(), &[4.9, 2.0], 0.05, false);
//! assert!(v.claimed > 4.377 && v.claimed < 4.38);
//! assert_eq!((v.refuting, v.refuted), (1, Some(true)));
//! assert_eq!(v.error, Some(0.1)); // two rows at α = 0.05 each
//! # Ok::<(), reconbound::Error>(())
//! ```

use super::epsilon::OneRunCounts;
use super::one_run_fdp::{one_run_fdp_p_value, one_run_fdp_refutes, CurveClaim, FdpVerdict};
use crate::accounting::pld;
use crate::accounting::rdp::{self, Conversion};
use crate::accounting::run::{self, Run, Unsupported};
use crate::accounting::schedule::{Phase, Schedule};
use crate::accounting::tradeoff::TradeoffCurve;
use crate::error::{invalid, Result};
use alloc::vec::Vec;

/// What an audit tests: the claim whose ε an empirical lower bound above it refutes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Claim {
    /// The trainer's own σ: the accountant's ε for the run itself.
    Trainer,
    /// A claimed noise multiplier σ′: the accountant's ε at σ′ (the run's q, T, δ).
    NoiseMultiplier(f64),
    /// A claimed ε, as given.
    Epsilon(f64),
}

impl Claim {
    /// `"trainer"`, `"noise-multiplier"` or `"epsilon"`.
    pub fn name(self) -> &'static str {
        match self {
            Claim::Trainer => "trainer",
            Claim::NoiseMultiplier(_) => "noise-multiplier",
            Claim::Epsilon(_) => "epsilon",
        }
    }

    /// σ′ or ε; `None` for the trainer's own σ.
    pub fn value(self) -> Option<f64> {
        match self {
            Claim::Trainer => None,
            Claim::NoiseMultiplier(x) | Claim::Epsilon(x) => Some(x),
        }
    }

    /// The claim, checked: σ′ finite and > 0, ε finite and ≥ 0.
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] naming `claimed_noise_multiplier` or
    /// `claimed_epsilon`.
    pub fn checked(self) -> Result<Claim> {
        match self {
            Claim::NoiseMultiplier(x) if !(x > 0.0 && x.is_finite()) => {
                invalid("claimed_noise_multiplier", x, "finite and > 0")
            }
            Claim::Epsilon(x) if !(x >= 0.0 && x.is_finite()) => {
                invalid("claimed_epsilon", x, "finite and >= 0")
            }
            c => Ok(c),
        }
    }

    /// The σ the accountant runs at: σ′, or the trainer's `trainer` σ.
    pub fn accountant_noise_multiplier(self, trainer: f64) -> f64 {
        match self {
            Claim::NoiseMultiplier(s) => s,
            _ => trainer,
        }
    }

    /// The claimed ε: the given ε, or the accountant's upper bound `accountant_upper`
    /// ([`Theory::upper`]).
    pub fn epsilon(self, accountant_upper: f64) -> f64 {
        match self {
            Claim::Epsilon(e) => e,
            _ => accountant_upper,
        }
    }
}

/// The accountant's ε of an audited run (Poisson rate q, or the full batch at q = 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Theory {
    /// By RDP, improved conversion.
    pub rdp: rdp::EpsilonBound,
    /// By the certified PLD, or why there is none.
    pub pld: core::result::Result<pld::Estimate, Unsupported>,
}

impl Theory {
    /// The PLD's certified upper bound, or RDP's where the PLD has none.
    pub fn upper(&self) -> f64 {
        self.pld.as_ref().map_or(self.rdp.epsilon, |e| e.value)
    }
}

/// The accountant's ε of T DP-SGD steps at Poisson rate q, noise multiplier σ, δ
/// ([`run::rdp_epsilon`] and [`run::pld_epsilon`] of [`Run::poisson`]: the PLD with its
/// closed forms for degenerate runs).
///
/// # Errors
/// Invalid (q, σ, T, δ).
pub fn accountant(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
) -> Result<Theory> {
    let r = Run::poisson(sampling_rate, noise_multiplier, steps)?;
    Ok(Theory {
        // a Poisson run's RDP accountant: `run::rdp_epsilon` of it, which is this
        rdp: rdp::epsilon(
            sampling_rate,
            noise_multiplier,
            steps,
            delta,
            Conversion::Improved,
        )?,
        pld: run::pld_epsilon(&r, delta)?,
    })
}

/// An audit's verdict on its claim ([`verdict`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// The claimed ε ([`Claim::epsilon`]).
    pub claimed: f64,
    /// The rows whose lower bound is above the claimed ε.
    pub refuting: usize,
    /// The rows (each a lower bound at level α).
    pub rows: usize,
    /// Whether the claim is refuted; `None` for an estimate that is no lower bound.
    pub refuted: Option<bool>,
    /// The probability that the refutation is wrong ([`claim_error`]); `None` for an
    /// estimate.
    pub error: Option<f64>,
}

/// The verdict of rows with empirical ε `rows` (each a lower bound at level `alpha`, or an
/// `estimate` that is none) on `claim`, whose accountant's upper bound is `accountant_upper`.
pub fn verdict(
    claim: Claim,
    accountant_upper: f64,
    rows: &[f64],
    alpha: f64,
    estimate: bool,
) -> Verdict {
    let claimed = claim.epsilon(accountant_upper);
    let refuting = rows.iter().filter(|&&e| e > claimed).count();
    Verdict {
        claimed,
        refuting,
        rows: rows.len(),
        refuted: (!estimate).then_some(refuting > 0),
        error: (!estimate).then(|| claim_error(alpha, rows.len())),
    }
}

/// The trade-off curve a [`Claim`] asserts for a run at (q, T, δ), which the f-DP one-run
/// test ([`super::one_run_fdp`]) can refute directly — sharper than comparing ε's, and valid
/// for any mechanism, Gaussian or not (Mahloujifar, Melis & Chaudhuri, ICML 2025):
/// - [`Claim::Trainer`], [`Claim::NoiseMultiplier`]: the accountant's certified curve at the
///   trainer's σ or at σ′ ([`TradeoffCurve::of_schedule`], μ-GDP in closed form for the
///   full batch; for Poisson sampling the PLD envelope, made convex by [`CurveClaim`]);
/// - [`Claim::Epsilon`]: the (ε, δ)-DP curve max(0, 1 − δ − e^ε·α, e^{−ε}(1 − δ − α)).
#[derive(Clone, Debug)]
pub enum ClaimedCurve {
    /// The accountant's certified curve.
    Accountant(TradeoffCurve),
    /// The (ε, δ)-DP curve.
    EpsilonDelta {
        /// ε.
        epsilon: f64,
        /// δ.
        delta: f64,
    },
}

/// The resolution of the accountant's curve a claim asserts (the lower bracket is certified
/// at any resolution; this one keeps it within about 1e-3 of the curve).
const CLAIM_RESOLUTION: f64 = 1e-3;

impl ClaimedCurve {
    /// The curve `claim` asserts for T = `steps` steps at sampling rate q, the trainer at σ =
    /// `trainer_sigma`, at δ.
    ///
    /// # Errors
    ///
    /// Invalid (q, σ, T, δ); the accountant's errors (a PLD grid too large).
    pub fn new(
        claim: Claim,
        trainer_sigma: f64,
        sampling_rate: f64,
        steps: u64,
        delta: f64,
    ) -> Result<Self> {
        match claim.checked()? {
            Claim::Epsilon(epsilon) => {
                if !(0.0..1.0).contains(&delta) {
                    return invalid("delta", delta, "in [0, 1)");
                }
                Ok(ClaimedCurve::EpsilonDelta { epsilon, delta })
            }
            c => {
                let phase = Phase {
                    sampling_rate,
                    noise_multiplier: c.accountant_noise_multiplier(trainer_sigma),
                    steps,
                };
                let schedule = Schedule::single(phase)?;
                Ok(ClaimedCurve::Accountant(TradeoffCurve::of_schedule(
                    &schedule,
                    CLAIM_RESOLUTION,
                    &pld::PldConfig::default(),
                )?))
            }
        }
    }

    /// The f-DP one-run verdict of each of `counts` on this curve at level α (one
    /// [`FdpVerdict`] per entry, in order).
    ///
    /// # Errors
    ///
    /// As [`one_run_fdp_refutes`].
    pub fn verdicts(&self, counts: &[OneRunCounts], alpha: f64) -> Result<Vec<FdpVerdict>> {
        let mut out = Vec::with_capacity(counts.len());
        match self {
            ClaimedCurve::Accountant(curve) => {
                let claim = CurveClaim::new(curve)?;
                for &c in counts {
                    out.push(FdpVerdict {
                        refuted: one_run_fdp_refutes(c, alpha, |x| claim.beta_lower(x))?,
                        p_value: one_run_fdp_p_value(c, |x| claim.beta_lower(x))?,
                    });
                }
            }
            &ClaimedCurve::EpsilonDelta { epsilon, delta } => {
                let f = |x: f64| Ok(epsilon_delta_beta(epsilon, delta, x));
                for &c in counts {
                    out.push(FdpVerdict {
                        refuted: one_run_fdp_refutes(c, alpha, f)?,
                        p_value: one_run_fdp_p_value(c, f)?,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// The (ε, δ)-DP trade-off curve at α, moved down by 4 units in the last place so that
/// rounding never puts it above the curve.
fn epsilon_delta_beta(epsilon: f64, delta: f64, alpha: f64) -> f64 {
    let a = 1.0 - delta - libm::exp(epsilon) * alpha;
    let b = libm::exp(-epsilon) * (1.0 - delta - alpha);
    (a.max(b) * (1.0 - 4.0 * f64::EPSILON)).max(0.0)
}

/// The μ of the Gaussian-DP curve a claim asserts: √T/σ (σ′, or the trainer's σ) for the
/// full batch (q = 1), whose accountant's curve is exactly μ-GDP; `None` for Poisson sampling
/// (its curve is not Gaussian) and for an ε claim.
pub fn claimed_gdp_mu(
    claim: Claim,
    trainer_sigma: f64,
    sampling_rate: f64,
    steps: u64,
) -> Option<f64> {
    match claim {
        Claim::Epsilon(_) => None,
        c if sampling_rate == 1.0 => {
            let sigma = c.accountant_noise_multiplier(trainer_sigma);
            (sigma > 0.0 && sigma.is_finite()).then(|| libm::sqrt(steps as f64) / sigma)
        }
        _ => None,
    }
}

/// The verdict of rows with GDP estimates `mus` (μ̂ = Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄) from
/// Clopper–Pearson upper limits at α/2 each) on a claim of `mu_claimed`-GDP: a row refutes
/// when μ̂ > μ_c. Valid for any mechanism, Gaussian or not: with probability ≥ 1 − α the
/// true rates satisfy FPR ≤ FPR̄ and FNR ≤ FNR̄, and μ̂ > μ_c means FNR̄ < G(FPR̄), G(x) =
/// Φ(Φ⁻¹(1 − x) − μ_c) the claimed curve, so FNR ≤ FNR̄ < G(FPR̄) ≤ G(FPR) (G decreases):
/// a test below the claimed curve, which no μ_c-GDP mechanism has (Nasr, Hayes, Steinke et
/// al. 2023; Dong, Roth & Su 2022). `claimed` is the accountant's ε of the claim, shown
/// beside it.
pub fn gdp_verdict(accountant_upper: f64, mu_claimed: f64, mus: &[f64], alpha: f64) -> Verdict {
    let refuting = mus.iter().filter(|&&m| m > mu_claimed).count();
    Verdict {
        claimed: accountant_upper,
        refuting,
        rows: mus.len(),
        refuted: Some(refuting > 0),
        error: Some(claim_error(alpha, mus.len())),
    }
}

/// What one audit row offers its claim: its empirical ε and, for a GDP estimate, its μ̂.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowEstimate {
    /// The row's empirical ε (a lower bound for Clopper–Pearson, an estimate for GDP).
    pub epsilon: f64,
    /// μ̂ of a GDP estimate (`None` for Clopper–Pearson).
    pub mu: Option<f64>,
}

/// The verdict of an audit's `rows` on `claim`, and whether each row refutes it (`None`
/// where the estimator refutes nothing), for a run of T = `steps` at sampling rate q with
/// the trainer at σ = `trainer_sigma`: Clopper–Pearson rows by their ε ([`verdict`]); GDP
/// rows by their μ̂ when the claim is a Gaussian curve ([`claimed_gdp_mu`], [`gdp_verdict`]),
/// and by nothing otherwise (`gdp`: the rows are GDP estimates).
#[allow(clippy::too_many_arguments)]
pub fn audit_verdict(
    claim: Claim,
    trainer_sigma: f64,
    sampling_rate: f64,
    steps: u64,
    accountant_upper: f64,
    rows: &[RowEstimate],
    alpha: f64,
    gdp: bool,
) -> (Verdict, Vec<Option<bool>>) {
    let mu_c = if gdp {
        claimed_gdp_mu(claim, trainer_sigma, sampling_rate, steps)
    } else {
        None
    };
    match mu_c {
        Some(mu_c) => {
            let mus: Vec<f64> = rows.iter().map(|r| r.mu.unwrap_or(0.0)).collect();
            let each = mus.iter().map(|&m| Some(m > mu_c)).collect();
            (gdp_verdict(accountant_upper, mu_c, &mus, alpha), each)
        }
        None => {
            let eps: Vec<f64> = rows.iter().map(|r| r.epsilon).collect();
            let v = verdict(claim, accountant_upper, &eps, alpha, gdp);
            let each = eps
                .iter()
                .map(|&e| v.refuted.map(|_| e > v.claimed))
                .collect();
            (v, each)
        }
    }
}

/// The probability that a refutation by any of `rows` rows, each a lower bound at level α,
/// is wrong: at most rows·α (the union bound), capped at 1.
pub fn claim_error(alpha: f64, rows: usize) -> f64 {
    (alpha * rows as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use alloc::vec;

    /// A claim refutes only above its ε; an estimate refutes nothing; the error is the union
    /// bound, capped at 1.
    #[test]
    fn verdict_counts_rows_above_the_claim_and_pays_the_union_bound() {
        let v = verdict(Claim::Epsilon(2.0), 9.0, &[1.0, 2.0, 2.5, 3.0], 0.05, false);
        assert_eq!(v.claimed, 2.0);
        assert_eq!((v.refuting, v.rows, v.refuted), (2, 4, Some(true)));
        assert_eq!(v.error, Some(0.2));
        let v = verdict(Claim::Trainer, 9.0, &[1.0, 2.0], 0.05, false);
        assert_eq!((v.claimed, v.refuted), (9.0, Some(false)));
        let v = verdict(Claim::Trainer, 1.0, &[5.0], 0.05, true);
        assert_eq!((v.refuting, v.refuted, v.error), (1, None, None));
        assert_eq!(claim_error(0.3, 5), 1.0);
    }

    /// Bad claims name their parameter.
    #[test]
    fn bad_claims_name_their_parameter() {
        for (c, want) in [
            (Claim::NoiseMultiplier(0.0), "claimed_noise_multiplier"),
            (Claim::NoiseMultiplier(f64::NAN), "claimed_noise_multiplier"),
            (Claim::Epsilon(-1.0), "claimed_epsilon"),
            (Claim::Epsilon(f64::INFINITY), "claimed_epsilon"),
        ] {
            match c.checked() {
                Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, want),
                other => panic!("{c:?}: {other:?}"),
            }
        }
        assert_eq!(Claim::Epsilon(0.0).checked(), Ok(Claim::Epsilon(0.0)));
    }

    /// The f-DP verdicts on a claimed curve: one full-batch step at σ = 1 is 1-GDP. 100 of
    /// 100 correct among 1,000 canaries refute 1-GDP (jax_privacy's f-DP ε for these counts is
    /// 5.549 > 4.378) but not 3-GDP (σ′ = 1/3); an (ε, δ) claim at ε = 6 is not refuted,
    /// at ε = 3 it is. Half the guesses right refutes nothing (p = 1).
    #[test]
    fn claimed_curves_are_refuted_by_counts_beyond_them_only() {
        let all = OneRunCounts {
            canaries: 1000,
            guesses: 100,
            correct: 100,
        };
        let chance = OneRunCounts { correct: 50, ..all };
        let v = |claim, counts| {
            ClaimedCurve::new(claim, 1.0, 1.0, 1, 1e-5)
                .unwrap()
                .verdicts(&[counts], 0.05)
                .unwrap()[0]
        };
        assert!(v(Claim::Trainer, all).refuted);
        assert!(v(Claim::Trainer, all).p_value < 0.05);
        assert!(!v(Claim::NoiseMultiplier(1.0 / 3.0), all).refuted);
        assert!(!v(Claim::Epsilon(6.0), all).refuted);
        assert!(v(Claim::Epsilon(3.0), all).refuted);
        let c = v(Claim::Trainer, chance);
        assert!(!c.refuted && c.p_value > 0.5, "{c:?}");
        assert!(ClaimedCurve::new(Claim::Epsilon(-1.0), 1.0, 1.0, 1, 1e-5).is_err());
    }

    /// A GDP claim exists for the full batch only; a row refutes above μ_c alone.
    #[test]
    fn gdp_claims_are_full_batch_curves_refuted_above_their_mu() {
        assert_eq!(claimed_gdp_mu(Claim::Trainer, 0.5, 1.0, 4), Some(4.0));
        assert_eq!(
            claimed_gdp_mu(Claim::NoiseMultiplier(2.0), 0.5, 1.0, 4),
            Some(1.0)
        );
        assert_eq!(claimed_gdp_mu(Claim::Trainer, 0.5, 0.1, 4), None);
        assert_eq!(claimed_gdp_mu(Claim::Epsilon(1.0), 0.5, 1.0, 4), None);
        let v = gdp_verdict(4.378, 1.0, &[0.9, 1.0, 1.2], 0.05);
        assert_eq!((v.refuting, v.refuted), (1, Some(true)));
        assert!((v.error.unwrap() - 0.15).abs() < 1e-15);
        assert_eq!(gdp_verdict(4.378, 1.0, &[0.99], 0.05).refuted, Some(false));
    }

    /// The audit's verdict picks its test by the estimator and the claim: ε for
    /// Clopper–Pearson, μ̂ for GDP against a full-batch claim, nothing for GDP under Poisson.
    #[test]
    fn audit_verdict_reads_the_rows_by_their_estimator() {
        let rows = [
            RowEstimate {
                epsilon: 5.0,
                mu: Some(0.9),
            },
            RowEstimate {
                epsilon: 3.0,
                mu: Some(1.2),
            },
        ];
        // Clopper–Pearson, claim ε 4.378: the first row refutes by its ε.
        let (v, each) = audit_verdict(Claim::Trainer, 1.0, 1.0, 1, 4.378, &rows, 0.05, false);
        assert_eq!(
            (v.refuted, each),
            (Some(true), vec![Some(true), Some(false)])
        );
        // GDP on the full batch, claim μ = 1: the second row refutes by its μ̂.
        let (v, each) = audit_verdict(Claim::Trainer, 1.0, 1.0, 1, 4.378, &rows, 0.05, true);
        assert_eq!(
            (v.refuted, each),
            (Some(true), vec![Some(false), Some(true)])
        );
        // GDP under Poisson sampling: no verdict.
        let (v, each) = audit_verdict(Claim::Trainer, 1.0, 0.1, 1, 4.378, &rows, 0.05, true);
        assert_eq!((v.refuted, each), (None, vec![None, None]));
    }

    /// The accountant of a claim is the run's own accountant, bit for bit.
    #[test]
    fn accountant_is_the_runs_accountant() {
        let t = accountant(0.01, 1.1, 1000, 1e-5).unwrap();
        let p = pld::epsilon(0.01, 1.1, 1000, 1e-5, &pld::PldConfig::default()).unwrap();
        assert_eq!(t.pld, Ok(p));
        assert_eq!(t.upper(), p.value);
        let r = rdp::epsilon(0.01, 1.1, 1000, 1e-5, Conversion::Improved).unwrap();
        assert_eq!(t.rdp, r);
    }
}
