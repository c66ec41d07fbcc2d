//! The trade-off curve of a DP-SGD run (f-DP), certified, and the risks read from it.
//!
//! # One object
//! For two output laws — ν without the target record, μ with it — the trade-off function
//! f(α) = inf{β_φ : α_φ ≤ α} is the smallest type-II error β = 1 − E_μ\[φ\] of any test φ
//! whose type-I error α = E_ν\[φ\] is at most α (Dong, Roth & Su 2022). Every guarantee the
//! crate prints is a point or a functional of it:
//! - reconstruction robustness: γ(κ) = 1 − f(κ) (Kaissis, Hayes, Ziller & Rueckert 2023;
//!   Hayes et al. 2023 Thm 2 writes it as sup{μ(E) : ν(E) ≤ κ});
//! - membership inference: TPR ≤ 1 − f(FPR);
//! - the advantage max_α (1 − α − f(α)) = TV(μ, ν), and Bayes security 1 − advantage
//!   (Cherubin et al. 2024);
//! - the accuracy of the best guess of membership at a prior π of "member":
//!   1 − min_α [(1 − π)α + π f(α)];
//! - ε(δ), the dual: the smallest ε with f(α) ≥ 1 − δ − e^ε α for all α.
//!
//! # Which curve
//! Under add/remove adjacency a guarantee covers both orders of the pair, T(ν, μ) and
//! T(μ, ν). The membership measures ([`TradeoffCurve::beta`], [`TradeoffCurve::tpr`],
//! [`TradeoffCurve::advantage`], [`TradeoffCurve::bayes_accuracy`]) use the lower envelope
//! of both directions, as dp_accounting's PLD pair and riskcal do: valid for every test
//! in either order. The reconstruction bound [`TradeoffCurve::gamma`] is Hayes et al.'s γ,
//! T(ν, μ) alone (the target is in the training set of the released model), so it is
//! exactly the γ of [`crate::accounting::rero`].
//!
//! # How each source gives a bracket
//! Every value is a bracket [lower, upper] that contains the exact value of the curve the
//! accountant describes; `lower` of β (and `upper` of a risk) is the side to report.
//! - **Gaussian** (full batch, or a schedule of full-batch phases: the privacy loss is
//!   Gaussian, μ-GDP with μ = √(Σ T_i/σ_i²)): f(α) = Φ(Φ⁻¹(1 − α) − μ) in closed form, both
//!   directions equal; the bracket is the rounding error of Φ, Φ⁻¹ and μ.
//! - **PLD** (Poisson sampling, q < 1): certified pessimistic and optimistic PLDs of
//!   [`crate::accounting::pld`]. For every ε, μ(E) ≤ e^ε ν(E) + H_{e^ε}(μ‖ν)
//!   (H the hockey-stick divergence), with equality at the Neyman–Pearson set {L > ε}; so
//!   1 − f(α) = min_ε [e^ε α + H_{e^ε}(μ‖ν)] ([`crate::accounting::pld::Pld::neyman_pearson`]).
//!   A pessimistic PLD's H is at least the true one for every ε, so its minimum bounds
//!   1 − f from above; an optimistic PLD's minimum bounds it from below (the module docs of
//!   `neyman_pearson` give the piecewise argument). The envelope of both directions is the
//!   larger 1 − f of the two, bracketed by the larger of each side. TV = H_1 and the Bayes
//!   accuracy (1 − π) + π·H_{(1−π)/π}(μ‖ν) come from the same PLDs' δ(ε).
//!
//! # Three compositions, not four (issue 29)
//! The two directions are one pair read in both orders: T(ν, μ) = T(μ, ν)⁻¹ (a test φ of
//! μ against ν with errors (α, β) is the test 1 − φ of ν against μ with errors (β, α)), in
//! hockey-stick form H_{e^ε}(ν‖μ) = 1 − e^ε + e^ε H_{e^{−ε}}(μ‖ν) for every real ε
//! ([`crate::accounting::pld::Pld::neyman_pearson_reversed`] proves and evaluates it).
//! That map is increasing in H, so a PLD certified above (below) at every ε certifies the
//! other order above (below) too. The curve composes:
//! - the add direction μ‖ν, pessimistic and optimistic, on the grid and tilt chosen for
//!   `resolution` (the same bits as before);
//! - the remove direction ν‖μ, pessimistic only, on a grid 4× coarser with a quarter of
//!   the grid cap ([`crate::accounting::pld::PldConfig`] scaled by `scout_config`), about a
//!   quarter of a composition's cost.
//!
//! Each direction's power 1 − f(α) is then bracketed by
//! - add: \[opt_add(α), min(pess_add(α), rev pess_remove(α))\],
//! - remove: \[rev opt_add(α), min(pess_remove(α), rev pess_add(α))\],
//!
//! every entry a certified bound of its direction (rev = read in the other order), and the
//! envelope is \[max of the lower, max of the upper\] as before. The reported side (the
//! upper bound of the power, the lower of β) keeps a pessimistic PLD of each direction, so
//! it is as tight as with four compositions wherever the add direction is the larger (in
//! every configuration measured, all α below the crossing f(α) = α, where the add
//! bracket is bit for bit the old one). The lower bound of the remove direction comes from
//! the add optimistic PLD reversed: its tilt, chosen for small levels in the add order,
//! weighs the far lower tail little, so this side is loose at small α (the README run:
//! width 1e-2 at α = 1e-3) — where the envelope takes the add direction's lower bound
//! anyway — and tight above the crossing. Measured widths of the power bracket at the
//! README run (q = 256/60000, σ = 1.1, T = 14,063, resolution 1e-3), four compositions →
//! three: α ≤ 0.3 the same bits (6.2e-7 at 1e-3, 1.2e-5 at 0.1); α = 0.5: 2.3e-5 → 1.6e-5;
//! 0.7: 5.0e-5 → 8.8e-6; 0.9: 4.1e-4 → 2.7e-6; 0.99: 2.7e-3 → 2.1e-7 (the reversed
//! pessimistic add PLD is the tighter upper bound there). On q = 0.01, σ = 1, T = 100 the
//! side above the crossing widens (α = 0.5: 1.2e-6 → 1.2e-5), below it stays the same.
//! TV is symmetric (TV(μ, ν) = TV(ν, μ)), so the advantage's bracket is the add pair's
//! with the smaller of the two pessimistic upper bounds; the Bayes accuracy of each order
//! at prior π is (1 − π) + π·H_{e^ε}(P‖Q) = π + (1 − π)·H_{e^{−ε}}(Q‖P), e^ε = (1 − π)/π,
//! bounded both ways; ε(δ) takes the larger pessimistic ε (the remove one from its
//! coarser PLD) and the add direction's optimistic ε as the lower end.
//! - **RDP** (fixed-size batches, or any RDP curve): the optimal RDP → f-DP conversion of
//!   Riess et al. 2026 ([`from_rdp`]'s docs), a lower bound on f that is the
//!   tightest the RDP curve implies; the bracket contains that implied curve. For
//!   fixed-size batches ([`TradeoffCurve::of_run`]) also the sampling cap f(α) ≥ p₀ − α,
//!   p₀ = (1 − B/n)^T: the two neighbouring data sets differ in one slot, which every step
//!   samples with probability B/n independently of the data, so with probability p₀ it is
//!   never sampled and the two runs' outputs can be coupled to agree — both laws are
//!   p₀R + (1 − p₀)·(their own part), so a test of level α under one has power at most
//!   p₀·R(reject) + 1 − p₀ ≤ α + 1 − p₀ under the other (in both orders). The RDP curve
//!   does not see this (issue 43: TPR ≤ 0.99983 at FPR 0.1 % where sampling alone caps it
//!   at 0.879, B/n = 0.1, T = 20). The
//!   advantage and Bayes accuracy are maximised over a grid of α: on [α_i, α_{i+1}], f
//!   decreasing gives (1 − π)α + π f(α) ≥ (1 − π)α_i + π f(α_{i+1}), so the grid bound is
//!   certified.
//!
//! # Examples
//! ```
//! use reconbound::accounting::tradeoff::TradeoffCurve;
//!
//! // One full-batch step with σ = 1: 1-GDP.
//! let f = TradeoffCurve::gaussian(1.0)?;
//! let b = f.beta(0.05)?;
//! // Φ(Φ⁻¹(0.95) − 1) = 0.740488977...
//! assert!(b.lower <= 0.740_488_978 && 0.740_488_977 <= b.upper);
//! // TPR at 5 % FPR is at most 1 − f(0.05)
//! assert!((f.tpr(0.05)?.upper - (1.0 - b.lower)).abs() < 1e-15);
//! # Ok::<(), reconbound::Error>(())
//! ```

pub mod from_rdp;
#[cfg(test)]
mod tests;

use alloc::vec::Vec;

use crate::accounting::pld::{Pld, PldConfig};
use crate::accounting::rero::dpsgd::{
    full_batch_bracket_shift, gamma_from_pair, gamma_limit, shifted_quantile,
};
use crate::accounting::rero::schedule::full_batch_shift;
use crate::accounting::run::{Run, Unsupported};
use crate::accounting::schedule::Schedule;
use crate::accounting::{pld_schedule, rdp};
use crate::error::{check_open_unit, check_positive, Result};
use crate::math::normal;

/// A certified bracket: `lower` ≤ the exact value ≤ `upper`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bracket {
    /// Certified lower bound.
    pub lower: f64,
    /// Certified upper bound.
    pub upper: f64,
}

impl Bracket {
    /// `upper − lower`: how far the bracket leaves the value open.
    pub fn width(&self) -> f64 {
        self.upper - self.lower
    }

    /// 1 − the value, with the sides swapped and rounded outward (β ↔ TPR, γ ↔ f(κ)).
    pub fn complement(self) -> Bracket {
        Bracket {
            lower: (1.0 - self.upper).next_down().max(0.0),
            upper: (1.0 - self.lower).next_up().min(1.0),
        }
    }

    /// Kept inside [lo, hi] (each side clamped).
    fn clamped(self, lo: f64, hi: f64) -> Bracket {
        Bracket {
            lower: self.lower.clamp(lo, hi),
            upper: self.upper.clamp(lo, hi),
        }
    }
}

/// Where a curve's values come from (what the brackets contain).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// The closed form of μ-GDP (full-batch runs).
    Gaussian {
        /// μ = √(Σ T_i/σ_i²).
        mu: f64,
    },
    /// The certified PLDs of both directions (Poisson sampling): the add pair and the
    /// remove direction's pessimistic PLD (module docs).
    Pld,
    /// The optimal conversion of an RDP curve (the bracket contains the curve the RDP
    /// guarantee implies, which lies below the mechanism's own).
    Rdp,
}

impl Source {
    /// A short name: `gaussian`, `pld` or `rdp`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Source::Gaussian { .. } => "gaussian",
            Source::Pld => "pld",
            Source::Rdp => "rdp",
        }
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Gaussian {
        mu: f64,
        mu_rel: f64,
    },
    Pld {
        /// (pessimistic, optimistic) of μ‖ν.
        add: alloc::boxed::Box<(Pld, Pld)>,
        /// Pessimistic of ν‖μ, on the coarser scout grid.
        remove: alloc::boxed::Box<Pld>,
        /// Hayes et al.'s σ → 0 cap of γ, as a function of κ: the phases (q, T).
        phases: Vec<(f64, u64)>,
    },
    Rdp {
        orders: Vec<f64>,
        rdp: Vec<f64>,
        /// p₀, a lower bound on the probability that the differing record is never
        /// sampled (fixed-size batches: (1 − B/n)^T; 0 when unknown): f(α) ≥ p₀ − α.
        never_sampled: f64,
    },
}

/// The certified trade-off curve of a mechanism: see the module docs.
#[derive(Clone, Debug)]
pub struct TradeoffCurve {
    kind: Kind,
}

/// The α grid of the RDP source's advantage and Bayes accuracy maximisation: 0, a
/// geometric part from 1e-12 and a linear part, increasing, ending below 1.
fn alpha_grid() -> Vec<f64> {
    let mut g = Vec::with_capacity(600);
    g.push(0.0);
    let mut a = 1e-12f64;
    while a < 0.01 {
        g.push(a);
        a *= 1.1;
    }
    let mut i = 1u32;
    while f64::from(i) / 400.0 < 1.0 {
        g.push(f64::from(i) / 400.0);
        i += 1;
    }
    g
}

impl TradeoffCurve {
    /// The curve of μ-GDP: f(α) = Φ(Φ⁻¹(1 − α) − μ).
    ///
    /// # Errors
    /// `mu` not finite and > 0.
    pub fn gaussian(mu: f64) -> Result<TradeoffCurve> {
        let mu = check_positive("mu", mu)?;
        Ok(TradeoffCurve {
            kind: Kind::Gaussian { mu, mu_rel: 0.0 },
        })
    }

    /// The curve an RDP guarantee implies (both directions bounded by `rdp` at `orders`),
    /// by the optimal conversion of Riess et al. 2026.
    ///
    /// # Errors
    /// `orders` empty or of another length than `rdp`, an order not finite and > 1, an RDP
    /// value negative or NaN (+∞ marks an unusable order).
    pub fn from_rdp(orders: &[f64], rdp: &[f64]) -> Result<TradeoffCurve> {
        from_rdp::check_curve(orders, rdp)?;
        Ok(TradeoffCurve {
            kind: Kind::Rdp {
                orders: orders.to_vec(),
                rdp: rdp.to_vec(),
                never_sampled: 0.0,
            },
        })
    }

    /// The curve of a schedule of Poisson-subsampled Gaussian phases: the closed form if
    /// every phase is full-batch, else the certified PLDs of both directions, composed on
    /// a grid and with a tilt chosen for levels near `resolution` (the smallest α or κ of
    /// interest: any level is certified, those at or above it are the tightest).
    ///
    /// # Errors
    /// `resolution` ∉ (0, 1), bad config, more than
    /// [`pld_schedule::MAX_DISTINCT_PHASES`] distinct phases; [`crate::Error::Numerical`] if
    /// the grid would be too large.
    pub fn of_schedule(
        schedule: &Schedule,
        resolution: f64,
        config: &PldConfig,
    ) -> Result<TradeoffCurve> {
        let resolution = check_open_unit("resolution", resolution)?;
        config.validate()?;
        let phases = schedule.merged();
        if phases.iter().all(|p| p.sampling_rate >= 1.0) {
            let (mu, mu_rel) = full_batch_shift(schedule);
            return Ok(TradeoffCurve {
                kind: Kind::Gaussian { mu, mu_rel },
            });
        }
        let (add, remove) = pld_schedule::composed_envelope(schedule, resolution, config)?;
        Ok(TradeoffCurve {
            kind: Kind::Pld {
                add: alloc::boxed::Box::new(add),
                remove: alloc::boxed::Box::new(remove),
                phases: phases.iter().map(|p| (p.sampling_rate, p.steps)).collect(),
            },
        })
    }

    /// The curve of a run (see [`crate::accounting::run`]): [`TradeoffCurve::of_schedule`]
    /// for Poisson sampling and the full batch, the RDP conversion of the replace-one RDP
    /// curve (at [`rdp::DEFAULT_ORDERS`]) for fixed-size batches; shuffled epochs have no
    /// certified curve ([`Unsupported::Shuffled`]).
    ///
    /// # Errors
    /// As [`TradeoffCurve::of_schedule`].
    pub fn of_run(
        run: &Run,
        resolution: f64,
        config: &PldConfig,
    ) -> Result<core::result::Result<TradeoffCurve, Unsupported>> {
        if let Some(s) = run.as_schedule() {
            return Ok(Ok(TradeoffCurve::of_schedule(s, resolution, config)?));
        }
        check_open_unit("resolution", resolution)?;
        match run.fixed_size_rdp(&rdp::DEFAULT_ORDERS)? {
            Some(curve) => {
                let mut f = TradeoffCurve::from_rdp(&rdp::DEFAULT_ORDERS, &curve)?;
                if let (
                    Some(crate::accounting::run::Sampling::FixedSize {
                        batch_size,
                        dataset_size,
                    }),
                    Some((_, steps)),
                    Kind::Rdp { never_sampled, .. },
                ) = (run.sampling(), run.noise_and_steps(), &mut f.kind)
                {
                    *never_sampled = never_sampled_lower(batch_size, dataset_size, steps);
                }
                Ok(Ok(f))
            }
            None => Ok(Err(Unsupported::Shuffled)),
        }
    }

    /// What the brackets come from.
    pub fn source(&self) -> Source {
        match &self.kind {
            Kind::Gaussian { mu, .. } => Source::Gaussian { mu: *mu },
            Kind::Pld { .. } => Source::Pld,
            Kind::Rdp { .. } => Source::Rdp,
        }
    }

    /// f(α): the smallest type-II error of a test at type-I error α (lower envelope of
    /// both directions). Report `lower`.
    ///
    /// # Errors
    /// `alpha` ∉ [0, 1].
    pub fn beta(&self, alpha: f64) -> Result<Bracket> {
        let alpha = crate::error::check_probability("alpha", alpha)?;
        Ok(self.beta_unchecked(alpha))
    }

    fn beta_unchecked(&self, alpha: f64) -> Bracket {
        if alpha >= 1.0 {
            return Bracket {
                lower: 0.0,
                upper: 0.0,
            };
        }
        match &self.kind {
            Kind::Rdp {
                rdp, never_sampled, ..
            } if alpha <= 0.0 => {
                // a test that never rejects under ν rejects under μ with probability 0
                // when some D_a(μ‖ν), a > 1, is finite (μ ≪ ν)
                let v = if rdp.iter().any(|r| r.is_finite()) {
                    1.0
                } else {
                    *never_sampled
                };
                Bracket {
                    lower: v,
                    upper: 1.0,
                }
            }
            Kind::Rdp {
                orders,
                rdp,
                never_sampled,
            } => {
                let (lo, hi) = from_rdp::beta(orders, rdp, alpha);
                // the sampling cap f(α) ≥ p₀ − α (module docs), rounded down
                let lo = lo.max((*never_sampled - alpha).next_down().max(0.0));
                Bracket {
                    lower: lo,
                    upper: hi.max(lo),
                }
            }
            Kind::Gaussian { mu, mu_rel } => gaussian_beta(alpha, *mu, *mu_rel),
            Kind::Pld { .. } => self.power(alpha).complement().clamped(0.0, 1.0 - alpha),
        }
    }

    /// `beta(α).lower` at each of `alphas` (each in [0, 1]): the same values as one call
    /// per level, computed for a PLD curve through the lower envelope of its PLDs' lines
    /// ([`Pld::neyman_pearson_many`]), each equally certified and equal to the single call's
    /// up to the envelope's rounding (checked to 1e-12 relative in the tests).
    ///
    /// # Errors
    /// A level ∉ [0, 1].
    pub fn beta_lower_many(&self, alphas: &[f64]) -> Result<Vec<f64>> {
        for &a in alphas {
            crate::error::check_probability("alpha", a)?;
        }
        let Kind::Pld { add, remove, .. } = &self.kind else {
            return Ok(alphas
                .iter()
                .map(|&a| self.beta_unchecked(a).lower)
                .collect());
        };
        let up = &add.0;
        let (np_up, rev_remove) = (
            up.neyman_pearson_many(alphas),
            remove.neyman_pearson_reversed_many(alphas),
        );
        let (np_remove, rev_up) = (
            remove.neyman_pearson_many(alphas),
            up.neyman_pearson_reversed_many(alphas),
        );
        Ok(alphas
            .iter()
            .enumerate()
            .map(|(i, &alpha)| {
                if alpha >= 1.0 {
                    return 0.0;
                }
                // as power(): each direction's upper end from its own PLD and the other's
                // reversed, the larger of the two directions
                let a_hi = finite_or(np_up[i], 1.0).min(finite_or(rev_remove[i], 1.0));
                let r_hi = finite_or(np_remove[i], 1.0).min(finite_or(rev_up[i], 1.0));
                let upper = a_hi.max(r_hi).clamp(alpha, 1.0);
                (1.0 - upper).next_down().max(0.0).clamp(0.0, 1.0 - alpha)
            })
            .collect())
    }

    /// 1 − f(α) for the Gaussian and PLD sources (the best test's power at level α).
    fn power(&self, alpha: f64) -> Bracket {
        match &self.kind {
            Kind::Gaussian { mu, mu_rel } => gaussian_power(alpha, *mu, *mu_rel),
            Kind::Pld { add, remove, .. } => {
                let (up, lo) = (&add.0, &add.1);
                // each direction from its own PLDs and from the other's reversed
                let a_hi = finite_or(up.neyman_pearson(alpha), 1.0)
                    .min(finite_or(remove.neyman_pearson_reversed(alpha), 1.0));
                let r_hi = finite_or(remove.neyman_pearson(alpha), 1.0)
                    .min(finite_or(up.neyman_pearson_reversed(alpha), 1.0));
                let a_lo = || finite_or(lo.neyman_pearson(alpha), alpha);
                let r_lo = || finite_or(lo.neyman_pearson_reversed(alpha), alpha);
                // a direction's lower bound is at most its upper bound, so when that is
                // below the other direction's lower bound it cannot be the maximum: its
                // scan is skipped (the same value as taking the maximum of both)
                let lower = if r_hi >= a_hi {
                    let r = r_lo();
                    if a_hi <= r {
                        r
                    } else {
                        a_lo().max(r)
                    }
                } else {
                    let a = a_lo();
                    if r_hi <= a {
                        a
                    } else {
                        a.max(r_lo())
                    }
                };
                Bracket {
                    lower,
                    upper: a_hi.max(r_hi),
                }
                .clamped(alpha, 1.0)
            }
            Kind::Rdp { .. } => self.beta_unchecked(alpha).complement(),
        }
    }

    /// The largest membership TPR at false-positive rate `fpr`: 1 − f(FPR). Report `upper`.
    ///
    /// # Errors
    /// `fpr` ∉ [0, 1].
    pub fn tpr(&self, fpr: f64) -> Result<Bracket> {
        Ok(self.beta(fpr)?.complement())
    }

    /// An audit's corner against the curve: with FPR ≤ `fpr_upper` and TPR ≥ `tpr_lower`
    /// holding together (at the audit's confidence), the test's true point lies under the curve
    /// only if TPR ≤ 1 − f(FPR) ≤ 1 − f(FPR̄) (the curve's complement rises with FPR). Returns
    /// the certified TPR bound at `fpr_upper` and whether the corner is above it — the audit
    /// then contradicts the curve: the trainer is not this mechanism, or the audit's α came up.
    ///
    /// # Errors
    /// `fpr_upper` ∉ [0, 1], `tpr_lower` not in [0, 1].
    pub fn audit_corner(&self, fpr_upper: f64, tpr_lower: f64) -> Result<(f64, bool)> {
        let tpr_lower = crate::error::check_probability("tpr_lower", tpr_lower)?;
        let bound = self.tpr(fpr_upper)?.upper;
        Ok((bound, tpr_lower > bound))
    }

    /// Hayes et al.'s γ at the baseline κ: 1 − T(ν, μ)(κ), the add direction alone (see
    /// the module docs), kept in [κ, 1] (and, from the PLD, below the σ → 0 limit
    /// 1 − (1 − q)^T(1 − κ)). Report `upper`.
    ///
    /// # Errors
    /// `kappa` ∉ (0, 1].
    pub fn gamma(&self, kappa: f64) -> Result<Bracket> {
        let kappa = crate::error::check_unit_rate("kappa", kappa)?;
        if kappa == 1.0 {
            return Ok(Bracket {
                lower: 1.0,
                upper: 1.0,
            });
        }
        Ok(match &self.kind {
            Kind::Gaussian { mu, mu_rel } => gaussian_power(kappa, *mu, *mu_rel),
            Kind::Pld { add, phases, .. } => {
                let g = gamma_from_pair(&add.0, &add.1, kappa, gamma_limit(kappa, phases));
                Bracket {
                    lower: g.lower,
                    upper: g.gamma,
                }
            }
            Kind::Rdp { .. } => self.beta_unchecked(kappa).complement().clamped(kappa, 1.0),
        })
    }

    /// The advantage of the best membership test: max_α (1 − α − f(α)) = TV(μ, ν). Report
    /// `upper`. Bayes security (Cherubin et al. 2024) is 1 − advantage.
    pub fn advantage(&self) -> Bracket {
        match &self.kind {
            Kind::Gaussian { mu, mu_rel } => {
                // TV = 1 − 2Φ(−μ/2); Φ to 1e-14 relative, an error Δμ moves it by
                // φ(μ/2)·Δμ ≤ 0.4·Δμ
                let s = normal::sf(0.5 * mu);
                let err = 2.0 * s * 1e-14 + 0.4 * mu * (mu_rel + 1e-16) + 1e-16;
                let v = 1.0 - 2.0 * s;
                Bracket {
                    lower: v - err,
                    upper: v + err,
                }
                .clamped(0.0, 1.0)
            }
            // TV(μ, ν) = TV(ν, μ): every PLD bounds the same value
            Kind::Pld { add, remove, .. } => Bracket {
                lower: add.1.delta(0.0),
                upper: add.0.delta(0.0).min(remove.delta(0.0)),
            },
            Kind::Rdp { never_sampled, .. } => {
                let b = self.grid_accuracy(0.5);
                // the sampling cap: TPR − FPR ≤ 1 − p₀ exactly (module docs)
                let cap = (1.0 - *never_sampled).next_up().min(1.0);
                let upper = (2.0 * b.upper - 1.0).min(cap);
                Bracket {
                    lower: (2.0 * b.lower - 1.0).min(upper),
                    upper,
                }
                .clamped(0.0, 1.0)
            }
        }
    }

    /// The accuracy of the best guess of membership when the record is a member with
    /// probability `prior`: 1 − min_α [(1 − π)α + π f(α)] (at π = 1/2, (1 + advantage)/2).
    /// Report `upper`; the blind guess has max(π, 1 − π).
    ///
    /// # Errors
    /// `prior` ∉ (0, 1).
    pub fn bayes_accuracy(&self, prior: f64) -> Result<Bracket> {
        let pi = check_open_unit("prior", prior)?;
        let blind = pi.max(1.0 - pi);
        Ok(match &self.kind {
            Kind::Gaussian { mu, mu_rel } => {
                // the likelihood-ratio test x > t, t = μ/2 + ln((1 − π)/π)/μ:
                // (1 − π)Φ(t) + πΦ(μ − t); stationary in t, so an error in t is second
                // order; Δμ moves the value by at most π·φ·Δμ ≤ 0.4·Δμ
                let t = 0.5 * mu + libm::log((1.0 - pi) / pi) / mu;
                let v = (1.0 - pi) * normal::cdf(t) + pi * normal::cdf(mu - t);
                let err = v * 1e-13 + 0.4 * mu * (mu_rel + 1e-16) + 1e-16;
                Bracket {
                    lower: v - err,
                    upper: v + err,
                }
            }
            Kind::Pld { add, remove, .. } => {
                // the accuracy with the member's law first: (1 − π) + π·H_{e^ε}(P‖Q), e^ε =
                // (1 − π)/π, equal to π + (1 − π)·H_{e^{−ε}}(Q‖P) (module docs), so each
                // direction is also bounded by the other's PLD at −ε
                let eps = libm::log((1.0 - pi) / pi);
                let first = |h: f64| (1.0 - pi) + pi * h;
                let second = |h: f64| pi + (1.0 - pi) * h;
                let (up, lo) = (&add.0, &add.1);
                let add_lo = first(lo.delta(eps)).next_down();
                let add_hi = first(up.delta(eps))
                    .min(second(remove.delta(-eps)))
                    .next_up();
                let rem_lo = second(lo.delta(-eps)).next_down();
                let rem_hi = first(remove.delta(eps))
                    .min(second(up.delta(-eps)))
                    .next_up();
                Bracket {
                    lower: add_lo.max(rem_lo),
                    upper: add_hi.max(rem_hi),
                }
            }
            Kind::Rdp { .. } => self.grid_accuracy(pi),
        }
        .clamped(blind, 1.0))
    }

    /// [`TradeoffCurve::bayes_accuracy`] by the α grid (see the module docs).
    fn grid_accuracy(&self, pi: f64) -> Bracket {
        let grid = alpha_grid();
        let betas: Vec<Bracket> = grid.iter().map(|&a| self.beta_unchecked(a)).collect();
        // upper: 1 − min over segments [α_i, α_{i+1}] (and [α_n, 1]) of
        // (1 − π)α_i + π f_lo(α_{i+1}); lower: 1 − min over points of (1 − π)α + π f_hi(α)
        let mut min_lo = f64::INFINITY;
        let mut min_hi = f64::INFINITY;
        for (i, (&a, b)) in grid.iter().zip(&betas).enumerate() {
            let next = betas.get(i + 1).map_or(0.0, |n| n.lower);
            min_lo = min_lo.min((1.0 - pi) * a + pi * next);
            min_hi = min_hi.min((1.0 - pi) * a + pi * b.upper);
        }
        min_hi = min_hi.min(1.0 - pi);
        Bracket {
            lower: (1.0 - min_hi).next_down(),
            upper: (1.0 - min_lo * (1.0 - 1e-15)).next_up(),
        }
    }

    /// ε(δ), the dual of the curve: the smallest ε ≥ 0 with f(α) ≥ 1 − δ − e^ε α for every
    /// α (both directions). From the PLDs, the ε of each direction's δ(ε); for μ-GDP the
    /// analytic Gaussian ε (Balle & Wang 2018); from an RDP curve, its ε by the improved
    /// conversion (Canonne, Kamath & Steinke 2020), which this curve's dual can only
    /// tighten. Report `upper`.
    ///
    /// # Errors
    /// `delta` ∉ (0, 1); [`crate::Error::Numerical`] if the PLD's +∞ atom alone exceeds δ.
    pub fn epsilon(&self, delta: f64) -> Result<Bracket> {
        let delta = check_open_unit("delta", delta)?;
        match &self.kind {
            Kind::Gaussian { mu, mu_rel } => {
                // ε grows with μ: bracket μ by its rounding, then ε to 1e-14 (bisection)
                let hi = crate::accounting::gaussian::analytic_epsilon(
                    delta,
                    mu * (1.0 + mu_rel + 1e-15),
                )?;
                let lo = crate::accounting::gaussian::analytic_epsilon(
                    delta,
                    mu * (1.0 - mu_rel - 1e-15),
                )?;
                Ok(Bracket {
                    lower: lo * (1.0 - 1e-13),
                    upper: hi,
                })
            }
            Kind::Pld { add, remove, .. } => Ok(Bracket {
                lower: add.1.epsilon(delta)?,
                upper: add.0.epsilon(delta)?.max(remove.epsilon(delta)?),
            }),
            Kind::Rdp { orders, rdp, .. } => {
                let e = rdp::epsilon_from_rdp(orders, rdp, delta, rdp::Conversion::Improved)?;
                Ok(Bracket {
                    lower: 0.0,
                    upper: e.epsilon,
                })
            }
        }
    }

    /// `n` points (α, f(α)) of the curve, α from `resolution` to 1 spaced evenly in
    /// log α below 0.01 and in α above, both ends included, for plotting and tables.
    ///
    /// # Errors
    /// `n` < 2 or > [`MAX_POINTS`]; `resolution` ∉ (0, 0.01].
    pub fn points(&self, n: usize, resolution: f64) -> Result<Vec<(f64, Bracket)>> {
        if !(2..=MAX_POINTS).contains(&n) {
            return Err(crate::Error::InvalidCount {
                name: "points",
                value: n as u64,
                expected: "in 2..=10000",
            });
        }
        let r = check_open_unit("resolution", resolution)?;
        if r > 0.01 {
            return crate::error::invalid("resolution", r, "in (0, 0.01]");
        }
        Ok(alphas(n, r)
            .into_iter()
            .map(|a| (a, self.beta_unchecked(a)))
            .collect())
    }
}

/// Most points [`TradeoffCurve::points`] gives.
pub const MAX_POINTS: usize = 10_000;

/// `n` levels from `r` to 1: half log-spaced on [r, 0.01], half linear on [0.01, 1].
fn alphas(n: usize, r: f64) -> Vec<f64> {
    let n_log = n / 2;
    let n_lin = n - n_log;
    let mut v = Vec::with_capacity(n);
    let (l0, l1) = (libm::log(r), libm::log(0.01));
    for i in 0..n_log {
        v.push(libm::exp(l0 + (l1 - l0) * i as f64 / n_log as f64));
    }
    for i in 0..n_lin {
        let t = if n_lin > 1 {
            i as f64 / (n_lin - 1) as f64
        } else {
            1.0
        };
        v.push(0.01 + 0.99 * t);
    }
    if let Some(first) = v.first_mut() {
        *first = r;
    }
    if let Some(last) = v.last_mut() {
        *last = 1.0;
    }
    v
}

/// A lower bound on (1 − B/n)^T, the probability that a given record is in none of T
/// batches of B drawn without replacement from n: exp(T·ln(1 − B/n)), its logarithm moved
/// down by 4 ulps and the result by 8 (libm's log1p and exp are within an ulp).
fn never_sampled_lower(batch_size: u64, dataset_size: u64, steps: u64) -> f64 {
    if batch_size >= dataset_size || dataset_size == 0 {
        return 0.0;
    }
    let l = steps as f64 * libm::log1p(-(batch_size as f64) / dataset_size as f64);
    (libm::exp(l * (1.0 + 4.0 * f64::EPSILON)) * (1.0 - 8.0 * f64::EPSILON)).max(0.0)
}

/// `v` unless NaN (a composition whose tilted masses over- or underflowed), else `other`.
fn finite_or(v: f64, other: f64) -> f64 {
    if v.is_nan() {
        other
    } else {
        v
    }
}

/// 1 − f(α) = Φ(Φ⁻¹(α) + μ) of μ-GDP as a bracket (μ to relative `mu_rel`): Hayes et
/// al.'s full-batch γ bracket, the same bits as [`crate::accounting::rero::dpsgd::gamma`].
fn gaussian_power(alpha: f64, mu: f64, mu_rel: f64) -> Bracket {
    if alpha <= 0.0 {
        return Bracket {
            lower: 0.0,
            upper: 0.0,
        };
    }
    match full_batch_bracket_shift(alpha, mu, mu_rel.max(5e-16)) {
        Ok(g) => Bracket {
            lower: g.lower,
            upper: g.gamma,
        },
        Err(_) => Bracket {
            lower: alpha,
            upper: 1.0,
        },
    }
}

/// f(α) = Φ(−(Φ⁻¹(α) + μ)) of μ-GDP as a bracket, from the upper tail (accurate to
/// relative `rel` also where f is tiny, unlike 1 − Φ(z)).
fn gaussian_beta(alpha: f64, mu: f64, mu_rel: f64) -> Bracket {
    match shifted_quantile(alpha, mu, mu_rel.max(5e-16)) {
        Ok((z, rel)) => {
            let s = normal::sf(z);
            Bracket {
                lower: s * (1.0 - rel),
                upper: s * (1.0 + rel),
            }
            .clamped(0.0, 1.0 - alpha)
        }
        Err(_) => Bracket {
            lower: 0.0,
            upper: 1.0 - alpha,
        },
    }
}
