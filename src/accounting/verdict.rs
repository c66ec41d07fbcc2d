//! A certified verdict on an ε that another library printed for a run.
//!
//! A claim is "the run is (ε_c, δ)-DP". [`bracket`] gives what the crate certifies about the
//! run's exact ε(δ) — a lower end ε_L (the mechanism is **not** (ε, δ)-DP for any ε < ε_L)
//! and, where an accountant applies, an upper end ε_U (it is (ε_U, δ)-DP) — and [`check`]
//! compares the claim with it:
//!
//! - **optimistic**: ε_c < ε_L. The claim is false: there are neighbouring data sets and an
//!   event whose probabilities violate (ε_c, δ)-DP. Every value below the certified lower end
//!   is flagged, whatever the library's stated precision (a privacy bug, by ε_L − ε_c).
//! - **consistent**: ε_L ≤ ε_c ≤ ε_U + tolerance (the library's stated precision), or
//!   ε_c ≥ ε_L where no upper end is certified (then [`Check::upper_certified`] is false: the
//!   claim is not refuted, and not confirmed either).
//! - **conservative**: ε_c > ε_U + tolerance: a true guarantee, looser than the run's, by
//!   ε_c − ε_U.
//!
//! # Where the lower ends come from
//!
//! - **Poisson sampling, add/remove** (the full batch is q = 1): the certified PLD's lower end
//!   ([`super::run::pld_epsilon`]: the optimistic PLD of the dominating pair, which is the
//!   exact pair of one record with gradient C·u against its absence, Mironov, Talwar & Zhang
//!   2019, Koskela et al. 2020). Its upper end is the smaller of the PLD's and RDP's.
//! - **Replace-one** (fixed-size batches; a claim under replace-one for Poisson sampling):
//!   take a data set D whose other records all have clipped gradient 0, and replace a record
//!   z by a record z′ whose clipped gradient is 0 too (allowed: the analysis holds for every
//!   gradient in the ball of radius C). Every step's release is then noise plus z's gradient
//!   when z's slot is in the batch, against noise alone: the pair (D ∪ {z}, D ∪ {z′}) is the
//!   add/remove pair of z at the same sampling probability q (B/N for fixed-size batches: a
//!   slot is in a batch of B drawn without replacement with probability B/N, independently
//!   across steps), and swapping z and z′ gives the other direction. With microbatches, z's
//!   microbatch's clipped mean can move from −C·u to +C·u (the other records' gradients
//!   −L·u): the pair at σ/2 ([`Resolved::add_remove_pair`]). So the replace-one ε(δ) is at least the
//!   add/remove ε(δ) of the Poisson run at the same q, σ, T, whose certified lower end is
//!   ours. The upper end of fixed-size batches is the replace-one RDP of Wang, Balle &
//!   Kasiviswanathan 2019 (Thm 9 at σ/2); full-batch replace-one is the Gaussian mechanism
//!   of sensitivity 2C, exactly the full batch at σ/2 (upper and lower); Poisson sampling
//!   at q < 1 under replace-one has no certified upper end here.
//! - **Shuffled epochs**: no accountant; the lower end is the max test of Chua et al. 2024
//!   ([`super::shuffle_lower`], zero-out neighbours, which are replace-one neighbours too:
//!   ⊥ is a record with gradient 0) when B divides N and at least one whole epoch is run
//!   (the releases after the last whole epoch are ignored: post-processing), else 0. Not
//!   with microbatches: the instance puts the slot's batch 1 and 2 (in units of C) above the
//!   others, which microbatches, each clipped into the ball of radius C, cannot. There is no
//!   upper end.
//!
//! # Examples
//! ```
//! use reconbound::accounting::description::{Description, Length, Rate};
//! use reconbound::accounting::verdict::{bracket, check, Verdict};
//! // q = 0.01, σ = 1, T = 1000: the certified ε at δ = 1e-5 is 1.8282…
//! let run = Description::new(1.0, Rate::SamplingRate(0.01), Length::Steps(1000)).resolve()?;
//! let b = bracket(&run, 1e-5)?;
//! assert_eq!(check(1.7, 1e-5, &b, 0.0)?.verdict, Verdict::Optimistic);
//! assert_eq!(check(1.82823, 1e-5, &b, 0.0)?.verdict, Verdict::Consistent);
//! assert_eq!(check(2.1, 1e-5, &b, 0.0)?.verdict, Verdict::Conservative);
//! # Ok::<(), reconbound::Error>(())
//! ```
//!
//! # Citations
//! Mironov, Talwar & Zhang 2019 (the Poisson-subsampled Gaussian's dominating pair);
//! Wang, Balle & Kasiviswanathan 2019, Thm 9; Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha &
//! Zhang, ICML 2024 (shuffled batches); Gopi, Lee & Wutschitz 2021 and Koskela, Jälkö &
//! Honkela 2020 (numerical PLD accounting with error bounds).

use crate::accounting::description::Resolved;
use crate::accounting::rdp::Conversion;
use crate::accounting::run::{self, Adjacency, Run, Sampling};
use crate::accounting::shuffle_lower;
use crate::error::{check_non_negative, check_open_unit, Result};

/// Where an end of a [`Bracket`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The certified PLD of the run.
    Pld,
    /// RDP at the default orders, the improved conversion.
    Rdp,
    /// The certified PLD of the add/remove Poisson pair at the same (q, σ, T) (module docs:
    /// a lower end under replace-one).
    PoissonPair,
    /// The max test of Chua et al. 2024 on shuffled batches.
    ShuffleMaxTest,
    /// Nothing certified (a lower end of 0, or no upper end).
    None,
}

impl Source {
    /// `pld`, `rdp`, `pld-poisson-pair`, `shuffle-max-test` or `none` (the JSON value).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Pld => "pld",
            Source::Rdp => "rdp",
            Source::PoissonPair => "pld-poisson-pair",
            Source::ShuffleMaxTest => "shuffle-max-test",
            Source::None => "none",
        }
    }
}

/// What is certified about a run's exact ε(δ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bracket {
    /// ε(δ) ≥ `lower`.
    pub lower: f64,
    /// Where `lower` comes from.
    pub lower_by: Source,
    /// ε(δ) ≤ `upper`, where an accountant applies.
    pub upper: Option<f64>,
    /// Where `upper` comes from.
    pub upper_by: Source,
}

/// The three verdicts (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The claim is below what the run certifiably spends.
    Optimistic,
    /// Within the bracket (or its precision), or not refuted where no upper end exists.
    Consistent,
    /// Above the certified upper end by more than the tolerance.
    Conservative,
}

impl Verdict {
    /// `optimistic`, `consistent` or `conservative`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Optimistic => "optimistic",
            Verdict::Consistent => "consistent",
            Verdict::Conservative => "conservative",
        }
    }
}

/// A claim checked against a [`Bracket`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    /// The verdict.
    pub verdict: Verdict,
    /// ε_c.
    pub claimed_epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The bracket it was checked against.
    pub bracket: Bracket,
    /// The tolerance above the upper end.
    pub tolerance: f64,
    /// By how much: ε_L − ε_c when optimistic, ε_c − ε_U when conservative, 0 otherwise.
    pub margin: f64,
}

impl Check {
    /// Whether the bracket has an upper end (a consistent claim is then confirmed).
    pub fn upper_certified(&self) -> bool {
        self.bracket.upper.is_some()
    }
}

/// How close a claim must be to a bracket to *match* it ([`claim_matches`]): 1 % relative, since
/// libraries print rounded values (jax_privacy's "0.72" for 0.71801…).
pub const MATCH_RELATIVE: f64 = 0.01;

/// Whether `claimed_epsilon` matches `bracket` — the bracket of the run under some assumption
/// (Poisson sampling instead of shuffling, σ instead of the microbatches' σ/2, …): within
/// [`MATCH_RELATIVE`] below its lower end and above its upper end plus `tolerance`. A
/// diagnostic of which assumption a claim was computed under, not a verdict.
pub fn claim_matches(claimed_epsilon: f64, bracket: &Bracket, tolerance: f64) -> bool {
    claimed_epsilon >= bracket.lower * (1.0 - MATCH_RELATIVE)
        && bracket
            .upper
            .is_none_or(|u| claimed_epsilon <= u * (1.0 + MATCH_RELATIVE) + tolerance)
}

/// The certified bracket of `run`'s ε(δ) under its relation (module docs).
///
/// # Errors
/// `delta` ∉ (0, 1); the accountants' errors for invalid input.
pub fn bracket(run: &Resolved, delta: f64) -> Result<Bracket> {
    let delta = check_open_unit("delta", delta)?;
    let none = Bracket {
        lower: 0.0,
        lower_by: Source::None,
        upper: None,
        upper_by: Source::None,
    };
    // the lower end of the add/remove pair of a record against one with a zero gradient
    let pair_lower = |b: Bracket| Bracket {
        lower: b.lower,
        lower_by: if b.lower_by == Source::None {
            Source::None
        } else {
            Source::PoissonPair
        },
        upper: None,
        upper_by: Source::None,
    };
    match run.run.sampling() {
        Some(Sampling::Shuffled {
            batch_size,
            dataset_size,
        }) => {
            // the instance of Chua et al. needs the slot's batch at 1 and 2 (in units of C)
            // above the others: microbatches, each in the ball of radius C, cannot make it
            if run.microbatched || dataset_size % batch_size != 0 {
                return Ok(none);
            }
            let Some((sigma, _)) = run.run.noise_and_steps() else {
                return Ok(none);
            };
            let per_epoch = dataset_size / batch_size;
            let epochs = run.steps / per_epoch;
            if epochs == 0 {
                return Ok(none);
            }
            let lb = shuffle_lower::epsilon_lower_bound(sigma, per_epoch, epochs, delta)?;
            Ok(Bracket {
                lower: lb.epsilon.max(0.0),
                lower_by: Source::ShuffleMaxTest,
                ..none
            })
        }
        Some(Sampling::FixedSize { .. }) => {
            let upper = match run::rdp_epsilon(&run.run, delta, Conversion::Improved)? {
                Ok(b) => Some(b.epsilon),
                Err(_) => None,
            };
            Ok(Bracket {
                upper,
                upper_by: if upper.is_some() {
                    Source::Rdp
                } else {
                    Source::None
                },
                ..pair_lower(add_remove(&run.add_remove_pair, delta)?)
            })
        }
        _ if run.relation == Adjacency::ReplaceOne => {
            // Poisson sampling (or a schedule) under replace-one: with every phase the full
            // batch, `run` is the Gaussian of sensitivity 2C exactly (σ/2 at C)
            let all_full = run
                .run
                .as_schedule()
                .is_some_and(|s| s.phases().iter().all(|p| p.sampling_rate >= 1.0));
            if all_full {
                return add_remove(&run.run, delta);
            }
            Ok(pair_lower(add_remove(&run.add_remove_pair, delta)?))
        }
        _ => add_remove(&run.run, delta),
    }
}

/// The bracket of a Poisson run (or schedule) under add/remove: the PLD's lower end, the
/// smaller of the PLD's and RDP's upper ends.
fn add_remove(run: &Run, delta: f64) -> Result<Bracket> {
    let rdp = run::rdp_epsilon(run, delta, Conversion::Improved)?.ok();
    let pld = run::pld_epsilon(run, delta)?.ok();
    let (upper, upper_by) = match (pld, rdp) {
        (Some(p), Some(r)) if r.epsilon < p.value => (Some(r.epsilon), Source::Rdp),
        (Some(p), _) => (Some(p.value), Source::Pld),
        (None, Some(r)) => (Some(r.epsilon), Source::Rdp),
        (None, None) => (None, Source::None),
    };
    Ok(Bracket {
        lower: pld.map_or(0.0, |p| p.lower),
        lower_by: if pld.is_some() {
            Source::Pld
        } else {
            Source::None
        },
        upper,
        upper_by,
    })
}

/// The claim "(`claimed_epsilon`, `delta`)-DP" against `bracket`, with `tolerance` (the
/// claiming library's stated precision) above the upper end (module docs).
///
/// # Errors
/// `claimed_epsilon` or `tolerance` not finite and ≥ 0; `delta` ∉ (0, 1).
pub fn check(claimed_epsilon: f64, delta: f64, bracket: &Bracket, tolerance: f64) -> Result<Check> {
    let eps = check_non_negative("claimed_epsilon", claimed_epsilon)?;
    let delta = check_open_unit("delta", delta)?;
    let tolerance = check_non_negative("tolerance", tolerance)?;
    let (verdict, margin) = if eps < bracket.lower {
        (Verdict::Optimistic, bracket.lower - eps)
    } else {
        match bracket.upper {
            Some(u) if eps > u + tolerance => (Verdict::Conservative, eps - u),
            _ => (Verdict::Consistent, 0.0),
        }
    };
    Ok(Check {
        verdict,
        claimed_epsilon: eps,
        delta,
        bracket: *bracket,
        tolerance,
        margin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::description::{Description, Length, Rate, Sampler};

    fn poisson(q: f64, sigma: f64, t: u64) -> Resolved {
        Description::new(sigma, Rate::SamplingRate(q), Length::Steps(t))
            .resolve()
            .unwrap()
    }

    #[test]
    fn poisson_bracket_is_the_pld_bracket() {
        // values of `reconbound epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps
        // 1000 --delta 1e-5`: PLD [1.8282116, 1.8282556], RDP 2.1013653
        let b = bracket(&poisson(0.01, 1.0, 1000), 1e-5).unwrap();
        assert_eq!(b.lower_by, Source::Pld);
        assert_eq!(b.upper_by, Source::Pld);
        assert!((b.lower - 1.828_211_6).abs() < 1e-6, "{b:?}");
        assert!((b.upper.unwrap() - 1.828_255_6).abs() < 1e-6, "{b:?}");
    }

    #[test]
    fn verdicts_at_the_ends_of_the_bracket() {
        let b = Bracket {
            lower: 1.0,
            lower_by: Source::Pld,
            upper: Some(1.1),
            upper_by: Source::Pld,
        };
        let v = |e: f64, tol: f64| check(e, 1e-5, &b, tol).unwrap().verdict;
        assert_eq!(v(0.999_999, 0.0), Verdict::Optimistic);
        assert_eq!(v(1.0, 0.0), Verdict::Consistent);
        assert_eq!(v(1.1, 0.0), Verdict::Consistent);
        assert_eq!(v(1.100_001, 0.0), Verdict::Conservative);
        assert_eq!(v(1.15, 0.1), Verdict::Consistent);
        // a stated precision never excuses a value below the lower end
        assert_eq!(v(0.95, 0.1), Verdict::Optimistic);
        let c = check(0.9, 1e-5, &b, 0.0).unwrap();
        assert!((c.margin - 0.1).abs() < 1e-15);
        // no upper end: never conservative, not confirmed
        let open = Bracket {
            upper: None,
            upper_by: Source::None,
            ..b
        };
        let c = check(100.0, 1e-5, &open, 0.0).unwrap();
        assert_eq!(c.verdict, Verdict::Consistent);
        assert!(!c.upper_certified());
        // matching: jax_privacy's printed 0.72 matches the physical-batch bracket
        // [0.718013, 0.718062] (PR #271), 0.70 does not, nor 0.73
        let physical = Bracket {
            lower: 0.718013,
            lower_by: Source::Pld,
            upper: Some(0.718062),
            upper_by: Source::Pld,
        };
        assert!(claim_matches(0.72, &physical, 0.0));
        assert!(!claim_matches(0.70, &physical, 0.0) && !claim_matches(0.73, &physical, 0.0));
        assert!(claim_matches(1e9, &open, 0.0));
    }

    #[test]
    fn bad_claims_name_the_parameter() {
        let b = bracket(&poisson(0.01, 1.0, 10), 1e-5).unwrap();
        for (e, d, t, name) in [
            (f64::NAN, 1e-5, 0.0, "claimed_epsilon"),
            (-1.0, 1e-5, 0.0, "claimed_epsilon"),
            (1.0, 0.0, 0.0, "delta"),
            (1.0, 1e-5, f64::INFINITY, "tolerance"),
        ] {
            assert_eq!(check(e, d, &b, t).unwrap_err().parameter(), Some(name));
        }
    }

    #[test]
    fn fixed_size_lower_end_is_the_poisson_pair_and_below_its_rdp() {
        let mut d = Description::new(
            1.0,
            Rate::Batch {
                batch_size: 100,
                dataset_size: 10_000,
            },
            Length::Steps(500),
        );
        d.sampler = Sampler::FixedSize;
        let b = bracket(&d.resolve().unwrap(), 1e-5).unwrap();
        assert_eq!((b.lower_by, b.upper_by), (Source::PoissonPair, Source::Rdp));
        let p = bracket(&poisson(0.01, 1.0, 500), 1e-5).unwrap();
        assert_eq!(b.lower, p.lower);
        assert!(b.lower < b.upper.unwrap());
    }

    #[test]
    fn full_batch_replace_one_is_the_full_batch_at_half_sigma() {
        let mut d = Description::new(2.0, Rate::Full, Length::Steps(4));
        d.relation = Some(Adjacency::ReplaceOne);
        let b = bracket(&d.resolve().unwrap(), 1e-5).unwrap();
        let half = bracket(&poisson(1.0, 1.0, 4), 1e-5).unwrap();
        assert_eq!(b, half);
    }

    #[test]
    fn microbatches_with_replace_one_are_the_gaussian_of_sensitivity_2c() {
        // review of issue 40: σ 2, full batch, 10 microbatches, replace-one: ε 4.37717 at
        // δ 1e-5 (the Gaussian at σ/sensitivity = 1), not the ε of σ/4
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
        let b = bracket(&d.resolve().unwrap(), 1e-5).unwrap();
        assert!(
            (b.lower - 4.37717).abs() < 1e-4 && b.upper.unwrap() < 4.378,
            "{b:?}"
        );
        assert_eq!(
            check(5.0, 1e-5, &b, 0.0).unwrap().verdict,
            Verdict::Conservative
        );
    }

    #[test]
    fn shuffled_with_microbatches_has_no_lower_end() {
        let mut d = Description::new(
            1.0,
            Rate::Batch {
                batch_size: 100,
                dataset_size: 1000,
            },
            Length::Steps(10),
        );
        d.sampler = Sampler::Shuffled;
        d.microbatches = Some(10);
        let b = bracket(&d.resolve().unwrap(), 0.01).unwrap();
        assert_eq!((b.lower, b.lower_by, b.upper), (0.0, Source::None, None));
    }

    #[test]
    fn shuffled_has_a_lower_end_only_and_it_exceeds_poisson() {
        // Chua et al.: σ = 1, one epoch of 100 batches; Poisson at q = 0.01 certifies ≈ 0.72
        let mut d = Description::new(
            1.0,
            Rate::Batch {
                batch_size: 100,
                dataset_size: 10_000,
            },
            Length::Steps(100),
        );
        d.sampler = Sampler::Shuffled;
        let b = bracket(&d.resolve().unwrap(), 1e-5).unwrap();
        assert_eq!((b.lower_by, b.upper), (Source::ShuffleMaxTest, None));
        let p = bracket(&poisson(0.01, 1.0, 100), 1e-5).unwrap();
        assert!(b.lower > 4.0 && p.upper.unwrap() < 1.0, "{b:?} {p:?}");
        assert_eq!(
            check(p.upper.unwrap(), 1e-5, &b, 0.0).unwrap().verdict,
            Verdict::Optimistic
        );
    }
}
