//! What an audit tests, and its verdict.
//!
//! An audit's empirical ε is a lower bound on the trained mechanism's ε that holds with
//! probability ≥ 1 − α per row (Nasr et al. 2021, Eqs. 4–5; Steinke, Nasr, Jagielski 2023 for
//! one run). It tests a [`Claim`] — the accountant's ε for the trainer's own σ, for a claimed
//! σ′ at the same (q, T, δ), or a given ε — and refutes it when some row's lower bound is
//! above the claimed ε. With k rows, each wrong with probability ≤ α, a refutation by any of
//! them is wrong with probability ≤ k·α (the union bound, [`claim_error`]). A GDP estimate
//! is no lower bound: it refutes nothing ([`Verdict::refuted`] is `None`).
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

use crate::accounting::pld;
use crate::accounting::rdp::{self, Conversion};
use crate::accounting::run::{self, Run, Unsupported};
use crate::error::{invalid, Result};

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

/// The probability that a refutation by any of `rows` rows, each a lower bound at level α,
/// is wrong: at most rows·α (the union bound), capped at 1.
pub fn claim_error(alpha: f64, rows: usize) -> f64 {
    (alpha * rows as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

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
