//! Parameters chosen from the target: the grid, the tail mass and the Chernoff-optimal tilt λ
//! (module docs of [`super`], "Exponential tilting" and "Parameters chosen from the target").

use super::*;

/// Share of the target (δ for ε(δ), κ for the ReRo γ) that all truncations of a
/// composition together may move to the +∞ atom (pessimistic) or drop (optimistic).
pub(super) const TAIL_SHARE: f64 = 1e-4;

/// Grid steps per standard deviation of the one-step loss (the default Δ = 7e-5 is
/// 1/64 of it for q = 256/60000, σ = 1.1).
pub(super) const STEPS_PER_STD: f64 = 64.0;
/// Largest one-step grid the automatic Δ may ask for (the far upper tail is then
/// discretised on the coarse lattice, and the grid is coarsened to the level caps).
pub(super) const MAX_AUTO_POINTS: f64 = (1u64 << 16) as f64;

/// The configuration to compose `steps` steps of (q, σ) with, for a target probability
/// `target` (δ of ε(δ), the Chernoff estimate of δ(ε), κ of ReRo): `config` with
/// - `tail_mass` lowered, if needed, to `TAIL_SHARE`·target/(2T + 64);
/// - Δ lowered, if needed, to s₁/64 with s₁ = q·√(e^{1/σ²} − 1) the scale of the one-step
///   loss (its standard deviation for small q), but not below the one-step loss range / 2¹⁶.
///
/// Heterogeneous compositions (several (q, σ, T) phases on one grid) take the smallest Δ and
/// `tail_mass` over their phases, with `target` and `steps` the totals.
///
/// # Why
/// The +∞ atom of a composition collects the one-step upper tails (≤ tail/4 per step) and
/// the upper truncations of every product (≤ tail/2 plus the untilted roundoff of the cut,
/// which `truncate` keeps within the same allowance); the PLD of 2^k steps appears in
/// at most T/2^k copies of the result, so the atom is at most
/// tail·(T/4 + Σ_k T/2^k + 64) ≤ tail·(2T + 64) = `TAIL_SHARE`·target. The lower bound loses
/// at most the same mass. The loss range grows only like √(ln(1/tail)) (the far upper tail
/// sits on the coarse lattice). Each connect-the-dots split adds a variance ≤ Δ²/4 per step
/// to a loss of variance ≈ s₁² per step, so Δ = s₁/64 keeps the added variance below 1e-4
/// of the true one however small the losses are (large σ, small q); later levels are
/// coarsened to their caps on the scale of the composed PLD. Any value keeps the bounds
/// certified: these choices only decide how wide the bracket is.
pub(crate) fn config_for_target(
    config: &PldConfig,
    q: f64,
    sigma: f64,
    steps: u64,
    target: f64,
) -> PldConfig {
    let mut c = *config;
    let t = TAIL_SHARE * target / (2.0 * steps as f64 + 64.0);
    if t.is_finite() && t > 0.0 && t < c.tail_mass {
        c.tail_mass = t.max(1e-300);
    }
    let s1 = q * libm::sqrt(libm::expm1(1.0 / (sigma * sigma)));
    if s1.is_finite() && s1 > 0.0 {
        let mut d = s1 / STEPS_PER_STD;
        if let Ok(z) = normal::quantile(c.tail_mass / 4.0) {
            let z = -z;
            let range = step_loss(1.0 + sigma * z, q, sigma) - step_loss(-sigma * z, q, sigma);
            if range.is_finite() {
                d = d.max(range / MAX_AUTO_POINTS);
            }
        }
        if d.is_finite() && d > 0.0 && d < c.value_discretization_interval {
            c.value_discretization_interval = d;
        }
    }
    c
}

/// Largest automatic tilt (beyond it the tilted masses span too many orders of magnitude
/// to gain anything).
pub(super) const MAX_AUTO_TILT: f64 = 1e5;

/// Most trapezoid nodes of [`StepMgf`] (for σ below ~5e-4 the step σ/32 is widened so the
/// range has at most this many nodes: the tilt is a heuristic choice, any step is valid).
pub(super) const MGF_NODES: f64 = 65536.0;

/// ln E[e^{λY}] of one step's loss Y in direction `dir`, over the x-range the one-step PLD
/// keeps for `tail_mass` (|x| ≤ σz and |x − 1| ≤ σz, z = Φ⁻¹(1 − tail/4)): both directions
/// are E_ν[e^{βL(x)}] with β = λ + 1 (add) or −λ (remove), computed by the trapezoidal rule
/// with step σ/32 in log-sum-exp form. A heuristic only (it chooses the tilt); the
/// truncation matters: the moment of the untruncated loss is infinite-like at large λ
/// (the Rényi divergence of the subsampled Gaussian grows fast beyond α ≈ σ² ln(1/q)),
/// while the truncated one is what the tilted masses see. The nodes' −u²/2 and L(x) are
/// computed once per phase and reused for every candidate λ.
pub(super) struct StepMgf {
    /// (−u²/2, L(x)) at the nodes x, u = x/σ.
    nodes: Vec<(f64, f64)>,
    h: f64,
    sigma: f64,
    steps: f64,
}

impl StepMgf {
    pub(super) fn new(q: f64, sigma: f64, steps: u64, tail_mass: f64) -> StepMgf {
        let z = match normal::quantile(tail_mass / 4.0) {
            Ok(v) => -v,
            Err(_) => 8.0,
        };
        let sl = StepLoss::new(q, sigma);
        let (lo, hi) = (-sigma * z, 1.0 + sigma * z);
        let mut h = sigma / 32.0;
        if (hi - lo) / h > MGF_NODES {
            h = (hi - lo) / MGF_NODES;
        }
        let n = libm::ceil((hi - lo) / h) as usize;
        let nodes = (0..=n)
            .map(|i| {
                let x = lo + i as f64 * h;
                let u = x / sigma;
                (-0.5 * u * u, sl.at(x))
            })
            .collect();
        StepMgf {
            nodes,
            h,
            sigma,
            steps: steps as f64,
        }
    }

    pub(super) fn log_mgf(&self, lambda: f64, dir: Direction) -> f64 {
        let beta = match dir {
            Direction::Add => lambda + 1.0,
            Direction::Remove => -lambda,
        };
        let mut best = f64::NEG_INFINITY;
        for &(a, l) in &self.nodes {
            best = best.max(a + beta * l);
        }
        if !best.is_finite() {
            return best;
        }
        let s: f64 = self
            .nodes
            .iter()
            .map(|&(a, l)| libm::exp(a + beta * l - best))
            .sum();
        best + libm::log(s * self.h / (self.sigma * libm::sqrt(2.0 * core::f64::consts::PI)))
    }
}

/// Candidate automatic tilts: 0.25·1.125^k up to [`MAX_AUTO_TILT`].
pub(super) fn tilt_candidates() -> impl Iterator<Item = f64> {
    (0..160)
        .map(|k| 0.25 * libm::pow(1.125, k as f64))
        .take_while(|&l| l <= MAX_AUTO_TILT)
}

/// max over the directions of Σ_phases T·ln E[e^{λY}] (the log-scale s of the composed
/// tilted PLD, up to discretisation).
pub(super) fn composed_log_mgf(phases: &[StepMgf], q_full: bool, lambda: f64) -> f64 {
    let mut worst = f64::NEG_INFINITY;
    let dirs: &[Direction] = if q_full {
        &[Direction::Add]
    } else {
        &[Direction::Add, Direction::Remove]
    };
    for &d in dirs {
        let s: f64 = phases.iter().map(|p| p.steps * p.log_mgf(lambda, d)).sum();
        worst = worst.max(s);
    }
    worst
}

/// The phases' trapezoid tables and whether every phase is full-batch.
pub(super) fn step_mgfs(phases: &[(f64, f64, u64)], tail_mass: f64) -> (Vec<StepMgf>, bool) {
    let q_full = phases.iter().all(|p| p.0 >= 1.0);
    let tables = phases
        .iter()
        .map(|&(q, sigma, t)| StepMgf::new(q, sigma, t, tail_mass))
        .collect();
    (tables, q_full)
}

/// Automatic tilt for ε(δ) of a composition of `phases` (q, σ, T): the λ (on a geometric
/// grid up to [`MAX_AUTO_TILT`]) minimising the Chernoff bound on ε,
/// (s(λ) + ln c(λ) − ln δ)/λ with s(λ) the composed log-moment of the truncated loss
/// ([`composed_log_mgf`]): the roundoff term K·c(λ)·e^{−λε} of the result is then about
/// roundoff·δ·e^{λ(ε_Chernoff − ε)}, a small multiple of roundoff·δ. (The RDP order over a
/// fixed grid of orders is a poor proxy for small q and large σ, where RDP is loose.)
pub(crate) fn chernoff_tilt_for_delta(
    phases: &[(f64, f64, u64)],
    delta: f64,
    tail_mass: f64,
) -> f64 {
    let ld = libm::log(delta);
    let (tables, q_full) = step_mgfs(phases, tail_mass);
    let mut best = (f64::INFINITY, 0.0);
    for lam in tilt_candidates() {
        let v = (composed_log_mgf(&tables, q_full, lam) + libm::log(tilt_weight(lam)) - ld) / lam;
        if v < best.0 {
            best = (v, lam);
        }
    }
    best.1
}

/// Automatic tilt for δ(ε) of a composition of `phases`: the λ minimising the Chernoff
/// bound s(λ) + ln c(λ) − λε on ln δ; returns (λ, that bound on ln δ).
pub(crate) fn chernoff_tilt_for_epsilon(
    phases: &[(f64, f64, u64)],
    eps: f64,
    tail_mass: f64,
) -> (f64, f64) {
    let (tables, q_full) = step_mgfs(phases, tail_mass);
    let s: Vec<(f64, f64)> = tilt_candidates()
        .map(|lam| (lam, composed_log_mgf(&tables, q_full, lam)))
        .collect();
    tilt_for_epsilon_from(&s, eps)
}

/// [`chernoff_tilt_for_epsilon`] from the candidates' (λ, s(λ)) computed once.
fn tilt_for_epsilon_from(s: &[(f64, f64)], eps: f64) -> (f64, f64) {
    let mut best = (0.0, 0.0);
    for &(lam, sl) in s {
        let v = sl + libm::log(tilt_weight(lam)) - lam * eps;
        if v < best.1 {
            best = (lam, v);
        }
    }
    best
}

/// Automatic tilt for the Neyman–Pearson value γ = min_ε [e^ε κ + H_{e^ε}(μ_T‖ν_T)] (ReRo)
/// of a composition of `phases`: the minimising ε* is where ν_T(L > ε*) ≈ κ, estimated by
/// the Chernoff bound ν(L > ε) ≤ e^{s(λ) − (λ+1)ε} (E_ν[e^{(λ+1)L}] = E_μ[e^{λL}]) as
/// ε* = min_λ (s(λ) − ln κ)/(λ + 1); the tilt is then [`chernoff_tilt_for_epsilon`] at ε*,
/// or 0 when ε* ≤ 0 (large κ: the minimum sits at small losses, where an untilted budget is
/// tightest). The composed log-moments s(λ) of the candidates are computed once for both
/// searches (the same values, so the same tilt, as computing them twice).
pub(crate) fn chernoff_tilt_for_kappa(
    phases: &[(f64, f64, u64)],
    kappa: f64,
    tail_mass: f64,
) -> f64 {
    let lk = libm::log(kappa);
    let (tables, q_full) = step_mgfs(phases, tail_mass);
    let s: Vec<(f64, f64)> = tilt_candidates()
        .map(|lam| (lam, composed_log_mgf(&tables, q_full, lam)))
        .collect();
    let mut eps = f64::INFINITY;
    for &(lam, sl) in &s {
        let v = (sl - lk) / (lam + 1.0);
        eps = eps.min(v);
    }
    if !(eps > 0.0 && eps.is_finite()) {
        return 0.0;
    }
    tilt_for_epsilon_from(&s, eps).0
}

/// Automatic tilt for ε(δ) of T steps of (q, σ): [`chernoff_tilt_for_delta`] of one phase.
pub(super) fn auto_tilt_for_delta(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    tail_mass: f64,
) -> f64 {
    chernoff_tilt_for_delta(&[(q, sigma, steps)], delta, tail_mass)
}

/// Automatic tilt for δ(ε) of T steps of (q, σ): [`chernoff_tilt_for_epsilon`] of one phase.
pub(super) fn auto_tilt_for_epsilon(
    q: f64,
    sigma: f64,
    steps: u64,
    eps: f64,
    tail_mass: f64,
) -> f64 {
    chernoff_tilt_for_epsilon(&[(q, sigma, steps)], eps, tail_mass).0
}
