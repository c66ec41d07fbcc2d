//! Privacy-loss distributions (PLDs) of the Poisson-subsampled Gaussian mechanism,
//! discretised so that the result stays a certified **upper** bound (and, separately, a
//! certified **lower** bound), composed by FFT.
//!
//! # Setting
//! One DP-SGD step with sampling rate q and noise multiplier σ (sensitivity 1 in units of the
//! clipping norm C): without the target the output is ν = N(0, σ²), with it
//! μ = (1−q)N(0, σ²) + qN(1, σ²). The privacy loss of μ‖ν ([`Direction::Add`]) is
//! L(x) = ln(1 − q + q e^{(2x−1)/(2σ²)}), x ~ μ; that of ν‖μ ([`Direction::Remove`]) is
//! −L(x), x ~ ν. L is increasing in x, so the mass of the loss in an interval is a
//! difference of Φ values at the preimages (computed as a difference of the smaller tails).
//! For a PLD ω (the law of the loss Y under the first measure, with an atom at +∞ for the
//! mass where the second measure vanishes) the hockey-stick divergence is
//! δ(ε) = H_{e^ε} = ω(+∞) + E[(1 − e^{ε−Y})₊], and T-fold composition convolves ω.
//!
//! # Discretisation (grid Δ = `value_discretization_interval`)
//! The loss axis is cut into bins [iΔ, (i+1)Δ); each bin has masses (M_i, N_i) under the two
//! measures. Both bounds avoid the O(TΔ) drift of plain rounding:
//! - **Pessimistic** ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022):
//!   every atom of loss λ ∈ [iΔ, (i+1)Δ] is *split* into atoms at iΔ and (i+1)Δ with the
//!   same total mass under both measures; by linearity the bin's mass to iΔ is
//!   (N_i e^{iΔ} − e^{−Δ}M_i)/(1 − e^{−Δ}). Splitting is the inverse of post-processing, so
//!   the discrete pair *dominates* the true one (Blackwell), and dominance is preserved by
//!   composition: δ_pess(ε) ≥ δ(ε) for every ε ∈ ℝ and every number of steps.
//! - **Optimistic**: the bins themselves are a post-processing (a quantisation of the loss);
//!   adjacent bin atoms are then *merged* (fractionally) so that every merged atom has loss
//!   exactly on the grid — merging is post-processing, so this pair is *dominated* by the
//!   true one. Pieces that cannot be matched are rounded down (lowers δ pointwise).
//! - Tails: mass beyond the loss range (each side ≤ `tail_mass`/4 per step) goes to the +∞ atom
//!   (upper tail) or to the lowest grid point (lower tail) in the pessimistic PLD and is
//!   dropped in the optimistic one. After every convolution the upper tail goes to +∞
//!   (pessimistic, with a bound on its roundoff) or is dropped (optimistic), where its
//!   untilted mass plus that roundoff bound is ≤ `tail_mass`/2; the lower tail (tilted mass ≤ `tail_mass`/2 plus the convolution's
//!   roundoff bound, so that FFT noise does not widen the support) is dropped in both, the
//!   pessimistic PLD adding the dropped tilted mass to its error budget (below).
//!   Moving loss up (down) raises (lowers) δ(ε) = E[φ_ε(ΣY_t)] pointwise, φ_ε increasing.
//!
//! # Exponential tilting and the error budget
//! Masses are stored *tilted*: p̃_ℓ = p_ℓ e^{λℓ − s} with a tilt λ ≥ 0 and a log-scale s
//! (normalising Σp̃ to about 1). Convolution commutes with tilting ((a e^{λℓ}) ∗ (b e^{λℓ}) =
//! (a ∗ b) e^{λℓ}), so the composition runs on p̃ and the log-scales add. All errors — FFT
//! roundoff (bounded rigorously, see [`crate::math::fft`]), the Φ evaluation errors of the
//! one-step bins (relative 1e-14 per tail value, a 10× margin on [`normal::cdf`]'s ≲ 1e-15),
//! a per-step and per-coarsening slack of 1e-13 of the tilted mass, dropped lower tails —
//! are carried as one bound R on the error x of the masses in the tilted ℓ₁ norm
//! ‖x‖_λ = Σ|x_ℓ|e^{λℓ} (in units of e^{s}). It propagates through a product as
//! ‖x∗B + A∗y‖_λ ≤ ‖x‖_λ‖B‖_λ + ‖A‖_λ‖y‖_λ. Since for ℓ > ε
//! (1 − e^{ε−ℓ}) ≤ c(λ) e^{λ(ℓ−ε)} with c(λ) = λ^λ/(1+λ)^{1+λ}, the error of δ(ε) is at most
//! R e^{s} c(λ) e^{−λε}, added to the pessimistic δ and subtracted from the optimistic δ.
//! With λ = 0 this is the plain ℓ₁ budget (over the grid and the +∞ atom). With λ the
//! Chernoff-optimal tilt for the (q, σ, T, δ) at hand (the automatic choice: the λ
//! minimising (T ln E[e^{λY}] + ln c(λ) − ln δ)/λ for the truncated one-step loss Y, up to
//! λ = 1e5), e^{s} c(λ) e^{−λε} is the Chernoff bound on δ, within a small factor of δ
//! itself, so the roundoff costs a relative ~R of δ instead of R/δ: the FFT error is
//! relative to the tilted mass, which sits where δ is decided. Any λ ≥ 0 gives a valid
//! bound; λ only affects tightness. Upper-tail mass moved to +∞ carries its own error bound
//! R e^{s − λℓ_cut} (as 1{ℓ ≥ ℓ_cut} ≤ e^{λ(ℓ − ℓ_cut)}; for λ > 0). Thus the stated error of
//! an [`Estimate`] is `value − lower`, a certified bracket of the true value.
//!
//! # Parameters chosen from the target
//! [`epsilon`] (and [`delta`], [`hockey_stick`], the ReRo γ with κ for δ) lower `tail_mass`
//! to 1e-4·δ/(2T + 64), which bounds the whole +∞ atom by 1e-4·δ, and the grid Δ to 1/64 of
//! the one-step loss scale q·√(e^{1/σ²} − 1) (large σ, small q); see `config_for_target`.
//! So δ down to 1e-15 (κ down to 1e-12) gets a bracket of relative width ~1e-4, at a cost
//! that grows only with the loss range (√ln(1/δ)).
//!
//! # Composition layout
//! Inside a composition the far upper tail of a PLD (tilted mass ≲ 1e-6 of the total) is
//! kept on a coarse lattice of 32 grid steps (the one-step bins there are built directly at
//! that width; later, mass is moved onto the lattice by the connect-the-dots split /
//! grid-aligned merge, both valid and second order), so the FFTs of the early squarings
//! span only the bulk; cross terms with the tail are convolved on the coarse lattice. Grids
//! may be finer at early squaring levels (see [`PldConfig::max_points`]). Transforms are
//! radix-2² split-format FFTs without bit reversal, two real products packed per complex
//! transform (see [`crate::math::fft::packed_products`]).
//!
//! # Layout
//! One file per job: `loss` (the mechanism's privacy loss and its bins' masses),
//! `discretise` (the one-step PLDs: connect-the-dots and grid-aligned merging), `grid` (a
//! PLD's grid and the valid moves of its masses), `compose` (FFT products, T-fold and
//! heterogeneous composition), `divergence` (δ(ε), ε(δ), the Neyman–Pearson test), `tilt`
//! (grid, tail mass and tilt chosen from the target) and `entry` (the public ε, δ and
//! hockey-stick functions); the types and this proof stay here.
//!
//! # Add/remove adjacency
//! [`epsilon`] and [`delta`] bound both directions and report the worse one (for q = 1 both
//! coincide and one is computed); [`epsilon`] composes the remove direction first on a
//! coarser scout grid and in full only if the scout does not show it to be the smaller
//! (its docs). The two directions are one pair in both orders, T(ν, μ) = T(μ, ν)⁻¹:
//! [`Pld::neyman_pearson_reversed`] reads a PLD of μ‖ν as one of ν‖μ (the trade-off
//! curve uses it, [`crate::accounting::tradeoff`]). ReRo (Hayes et al. 2023) uses the single direction μ‖ν via
//! [`Pld::neyman_pearson`].

use alloc::vec::Vec;

use crate::error::{
    check_dpsgd, check_non_negative, check_open_unit, check_positive, check_steps, check_unit_rate,
    invalid, Error, Result,
};
use crate::math::fft;
use crate::math::normal;

/// Largest number of grid points a PLD may hold (FFT length ≤ 2²³): beyond it the requested
/// accuracy cannot be met cheaply and [`Error::Numerical`] is returned.
pub const MAX_GRID_POINTS: usize = 1 << 22;

/// Slack (relative to the tilted mass) added per step and per coarsening for roundoff not
/// bounded term by term.
const STEP_SLACK: f64 = 1e-13;
/// Relative error allowed for each Φ tail value of the one-step bins (normal::cdf / sf are
/// accurate to ≲ 1e-15 relative; a 10× margin).
const PHI_REL: f64 = 1e-14;
/// Unit roundoff.
const U: f64 = f64::EPSILON / 2.0;
/// The one-step PLD is coarsened before the first squaring only beyond PRE·max_points points
/// (its discretisation error is multiplied by T, so it keeps its fine grid where affordable).
const PRE: usize = 4;

/// Discretisation parameters of a PLD computation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PldConfig {
    /// Grid spacing Δ of the loss axis. The pessimistic/optimistic construction has error
    /// O(Δ²) per step (second order), not O(Δ) like plain rounding.
    pub value_discretization_interval: f64,
    /// Probability mass that may be truncated from each tail, per step and per convolution
    /// (moved to +∞ in the pessimistic PLD, dropped in the optimistic one). [`epsilon`],
    /// [`delta`], [`hockey_stick`] and the ReRo γ lower it further to 1e-4·target/(2T + 64)
    /// (target δ, or κ), so that all truncations together cost at most 1e-4 of the target.
    pub tail_mass: f64,
    /// Grid-size cap of the composed PLD after the last squaring: beyond it the grid is
    /// coarsened by a factor 2 (connect-the-dots split / grid-aligned merge again, both
    /// second order). Earlier squaring levels k (the PLD of 2^k steps, out of K = ⌊log₂T⌋)
    /// may keep `max_points`·2^{(K−k)/3} points, since a coarsening at level k is repeated in
    /// all T/2^k copies composed after it. At least 64 and at most [`MAX_GRID_POINTS`].
    pub max_points: usize,
    /// Exponential tilt λ ≥ 0 of the stored masses (see the module docs): `None` chooses it
    /// automatically (the Chernoff-optimal λ of the truncated one-step loss for [`epsilon`]
    /// at δ, for [`delta`] at ε, for the ReRo γ at the ε where ν_T(L > ε) ≈ κ; 0 for
    /// [`Pld::subsampled_gaussian`]); `Some(λ)` forces it (finite, in [0, 1000]). Any λ
    /// gives a valid bound; λ only affects how small the roundoff term is relative to δ.
    pub tilt: Option<f64>,
}

impl Default for PldConfig {
    /// Δ = 7e-5 for the one-step PLD (dp_accounting's default is 1e-4), tail mass 1e-15 (as
    /// dp_accounting), grid cap 2¹² after the last squaring (more at earlier levels, see
    /// `max_points`), automatic tilt. Both discretisations are second order, and the
    /// returned bracket `value − lower` states the achieved accuracy, FFT roundoff included.
    /// The entry points lower Δ and `tail_mass` further where the configuration or the
    /// target needs it (see the module docs). Measured: q = 256/60000, σ = 1.1, T = 14063,
    /// δ = 1e-5 gives ε ∈ [2.381583, 2.381744] (dp_accounting 0.6.0: 2.381779 at grid 1e-4,
    /// 2.381691 at grid 1e-5), δ = 1e-12 gives [4.174395, 4.174730];
    /// q = 0.01, σ = 1, T = 100, κ = 0.1 gives γ to 4e-7 in ~8 ms.
    fn default() -> Self {
        PldConfig {
            value_discretization_interval: 7e-5,
            tail_mass: 1e-15,
            max_points: 1 << 12,
            tilt: None,
        }
    }
}

impl PldConfig {
    pub(crate) fn validate(&self) -> Result<(f64, f64, Option<f64>)> {
        let d = check_positive(
            "value_discretization_interval",
            self.value_discretization_interval,
        )?;
        if d > 1.0 {
            return invalid("value_discretization_interval", d, "finite, > 0 and <= 1");
        }
        let t = self.tail_mass;
        if !(t > 0.0 && t <= 1e-3) {
            return invalid("tail_mass", t, "in (0, 1e-3]");
        }
        if !(64..=MAX_GRID_POINTS).contains(&self.max_points) {
            return Err(Error::InvalidCount {
                name: "max_points",
                value: self.max_points as u64,
                expected: "in [64, 2^22]",
            });
        }
        let tilt = match self.tilt {
            None => None,
            Some(l) => {
                let l = check_non_negative("tilt", l)?;
                if l > 1000.0 {
                    return invalid("tilt", l, "finite, >= 0 and <= 1000");
                }
                Some(l)
            }
        };
        Ok((d, t, tilt))
    }
}

/// Which of the two dominating directions of add/remove adjacency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// μ‖ν: with the target against without (the direction ReRo uses).
    Add,
    /// ν‖μ: without the target against with.
    Remove,
}

/// Whether a PLD over- or under-estimates every hockey-stick divergence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// δ(ε) ≥ the true δ(ε) for every ε (a dominating discrete pair).
    Pessimistic,
    /// δ(ε) ≤ the true δ(ε) for every ε (a dominated discrete pair).
    Optimistic,
}

/// A certified two-sided estimate: `lower ≤ true value ≤ value`; the error is `value − lower`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Certified upper bound (from the pessimistic PLD).
    pub value: f64,
    /// Certified lower bound (from the optimistic PLD).
    pub lower: f64,
}

/// A discretised privacy-loss distribution: masses at losses (offset + i)·Δ, stored tilted
/// (see [`Pld::masses`] and the module docs), plus an atom at +∞.
#[derive(Clone, Debug, PartialEq)]
pub struct Pld {
    interval: f64,
    offset: i64,
    masses: Vec<f64>,
    tilt: f64,
    log_scale: f64,
    infinity_mass: f64,
    roundoff: f64,
    bound: Bound,
    tail_mass: f64,
    /// Internal to a composition (always `None` in a returned PLD): the sparse upper part.
    tail: Option<Tail>,
}

/// The upper part of a PLD during composition, on a coarser lattice: masses (tilted like
/// the fine part) at losses (offset + j)·ratio·Δ, all above the fine part's points. Mass is
/// moved onto the lattice by rounding its loss up (pessimistic) or down (optimistic), both
/// valid moves; it only holds the far upper tail (tilted mass ≤ [`SPLIT_MASS`] of the
/// total when created), so the first-order rounding costs little, while the fine FFTs only
/// span the bulk.
#[derive(Clone, Debug, PartialEq)]
struct Tail {
    masses: Vec<f64>,
    offset: i64,
    ratio: i64,
}

/// Cross terms of a product on the tail lattice: (masses, first lattice index, lattice
/// ratio, ℓ₁ roundoff bound).
type Cross = (Vec<f64>, i64, i64, f64);
/// A convolution result with its ℓ₁ roundoff bound.
type Conv = (Vec<f64>, f64);

/// Tilted mass fraction above the split between the fine part and the coarse tail.
const SPLIT_MASS: f64 = 1e-6;
/// Initial tail lattice spacing in fine grid steps.
const TAIL_RATIO: i64 = 32;
/// Most fine points kept below the split when the untilted bulk fits in them: a large tilt
/// puts tilted mass far into the one-step upper tail (for λ ≈ 11 at q = 0.0043, σ = 1.1 the
/// tilted one-step mass peaks at loss ≈ 2.8), which would otherwise all stay on the fine grid.
const FINE_MAX: usize = 1 << 14;

mod compose;
pub use compose::MAX_COMPOSED_STEPS;
mod discretise;
mod divergence;
mod entry;
mod envelope;
mod grid;
mod loss;
#[cfg(test)]
mod tests;
mod tilt;

pub(crate) use compose::{compose_many, compose_one, use_split, Workspace};
pub(crate) use entry::{composed_pair_in, one_steps, scout_config, scout_upper};
pub use entry::{delta, epsilon, hockey_stick};
pub(crate) use loss::{step_loss, StepLoss};
pub(crate) use tilt::{
    chernoff_tilt_for_delta, chernoff_tilt_for_epsilon, chernoff_tilt_for_kappa, config_for_target,
};
#[allow(unused_imports)]
use {compose::*, discretise::*, entry::*, grid::*, loss::*, tilt::*};

fn numerical<T>(what: &'static str, value: f64) -> Result<T> {
    Err(Error::Numerical { what, value })
}
