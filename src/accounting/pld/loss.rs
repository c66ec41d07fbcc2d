//! The mechanism's privacy loss: L(x) = ln(1 − q + q e^{(2x−1)/(2σ²)}) of one step of the
//! Poisson-subsampled Gaussian, its inverse, and the masses of its bins under both measures
//! (differences of the smaller Φ tails).

use super::*;

/// x with L(x) = y, L(x) = ln(1 − q + q e^{(2x−1)/(2σ²)}); −∞ when y ≤ ln(1−q).
pub(super) fn x_of_loss(y: f64, q: f64, sigma: f64) -> f64 {
    let s2 = sigma * sigma;
    if q >= 1.0 {
        return 0.5 + s2 * y;
    }
    let t = libm::expm1(y) + q;
    if t <= 0.0 {
        return f64::NEG_INFINITY;
    }
    0.5 + s2 * (libm::log(t) - libm::log(q))
}

/// The one-step privacy loss L(x) = ln(1 − q + q e^{(2x−1)/(2σ²)}), computed stably.
pub(crate) fn step_loss(x: f64, q: f64, sigma: f64) -> f64 {
    StepLoss::new(q, sigma).at(x)
}

/// The one-step privacy loss L(x) = ln(1 − q + q e^{(2x−1)/(2σ²)}) with its constants
/// precomputed, for loops that evaluate it many times (Monte Carlo).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepLoss {
    q: f64,
    ln_q: f64,
    ln_1mq: f64,
    inv_2s2: f64,
}

impl StepLoss {
    pub(crate) fn new(q: f64, sigma: f64) -> Self {
        StepLoss {
            q,
            ln_q: libm::log(q),
            ln_1mq: libm::log1p(-q),
            inv_2s2: 1.0 / (2.0 * sigma * sigma),
        }
    }

    /// L(x), without cancellation: log1p(q·expm1(a)) while e^a is representable, else the
    /// log-sum-exp form.
    #[inline]
    pub(crate) fn at(&self, x: f64) -> f64 {
        let a = (2.0 * x - 1.0) * self.inv_2s2;
        if self.q >= 1.0 {
            return a;
        }
        if a < 30.0 {
            return libm::log1p(self.q * libm::expm1(a));
        }
        let l2 = self.ln_q + a;
        let (hi, lo) = if self.ln_1mq >= l2 {
            (self.ln_1mq, l2)
        } else {
            (l2, self.ln_1mq)
        };
        hi + libm::log1p(libm::exp(lo - hi))
    }
}

/// (mass ≤ x, mass > x) of N(m, σ²) mixtures: returns (Φ((x−m)/σ), Φ̄((x−m)/σ)).
pub(super) fn tails(x: f64, m: f64, sigma: f64) -> (f64, f64) {
    let z = (x - m) / sigma;
    // one tail evaluation: the smaller tail accurately, the larger (≥ ½) as its complement
    if z <= 0.0 {
        let c = normal::cdf(z);
        (c, 1.0 - c)
    } else {
        let t = normal::sf(z);
        (1.0 - t, t)
    }
}

/// Tail masses of the loss at the edge y: (P[ℓ ≤ y], P[ℓ > y], Q[ℓ ≤ y], Q[ℓ > y]).
pub(super) fn edge_tails(y: f64, q: f64, sigma: f64, dir: Direction) -> [f64; 4] {
    match dir {
        Direction::Add => {
            let x = x_of_loss(y, q, sigma);
            let (c0, s0) = tails(x, 0.0, sigma);
            let (c1, s1) = tails(x, 1.0, sigma);
            [(1.0 - q) * c0 + q * c1, (1.0 - q) * s0 + q * s1, c0, s0]
        }
        Direction::Remove => {
            // −L(x) > y ⇔ x < L⁻¹(−y)
            let x = x_of_loss(-y, q, sigma);
            let (c0, s0) = tails(x, 0.0, sigma);
            let (c1, s1) = tails(x, 1.0, sigma);
            [s0, c0, (1.0 - q) * s0 + q * s1, (1.0 - q) * c0 + q * c1]
        }
    }
}

/// Mass between two edges from their (≤, >) tails, differencing the smaller tails, with a
/// bound on its absolute error (relative error `PHI_REL` of each tail used, plus rounding).
pub(super) fn bin_mass(le_a: f64, gt_a: f64, le_b: f64, gt_b: f64) -> (f64, f64) {
    let (m, used) = if gt_a < le_b {
        (gt_a - gt_b, gt_a + gt_b)
    } else {
        (le_b - le_a, le_a + le_b)
    };
    let m = m.max(0.0);
    (m, PHI_REL * used + 2.0 * U * m)
}
