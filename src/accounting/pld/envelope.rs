//! The Neyman–Pearson power of a pessimistic PLD at many levels at once.
//!
//! [`Pld::neyman_pearson`] of a pessimistic PLD is the minimum over the grid's losses ℓ_k
//! of a value affine in the level κ (one line per grid point, module docs there), and
//! [`Pld::neyman_pearson_reversed`]'s is the minimum of lines in α. Any one of those lines,
//! evaluated by the scalar function's own expression, is a certified upper bound — the
//! minimum is only the tightest. So the many-level functions here build the lower
//! envelope of the lines once (the monotone convex-hull trick, O(n log n)), pick for each
//! level the lines the envelope says are least (and their neighbours on it, against
//! rounding in the envelope), and evaluate those with the scalar expression: every value is
//! as certified as the scalar one, and equal to it whenever the envelope picks the line
//! the scan would (the tests check agreement to 1e-12 relative). A level query costs
//! O(log n) instead of O(n): the convex claim of a curve ([`crate::attacks::audit::epsilon::CurveClaim`])
//! reads ~3,500 levels of four PLDs.
//!
//! Optimistic PLDs take the scalar path (their bound is not a minimum of lines).

use super::*;

/// One line y = slope·x + intercept, with the index of the grid point it comes from
/// (`usize::MAX`: the constant line of the ε → −∞ end).
#[derive(Clone, Copy, Debug)]
struct Line {
    slope: f64,
    intercept: f64,
    id: usize,
}

/// The lower envelope of `lines` (min over lines), as the lines that attain it in order of
/// decreasing slope (the order in which they are least as x grows) and the x at which each
/// hands over to the next.
fn lower_envelope(mut lines: Vec<Line>) -> (Vec<Line>, Vec<f64>) {
    lines.retain(|l| l.slope.is_finite() && l.intercept.is_finite());
    // decreasing slope; among equal slopes the lower intercept first
    lines.sort_by(|a, b| {
        b.slope
            .total_cmp(&a.slope)
            .then(a.intercept.total_cmp(&b.intercept))
    });
    lines.dedup_by(|b, a| a.slope == b.slope);
    let mut hull: Vec<Line> = Vec::with_capacity(lines.len());
    for l3 in lines {
        while hull.len() >= 2 {
            let (l1, l2) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // l2 is never the least when l1 and l3 cross at or before l1 and l2 do:
            // (b3 − b1)/(m1 − m3) ≤ (b2 − b1)/(m1 − m2), slopes m1 > m2 > m3
            let lhs = (l3.intercept - l1.intercept) * (l1.slope - l2.slope);
            let rhs = (l2.intercept - l1.intercept) * (l1.slope - l3.slope);
            if lhs <= rhs {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(l3);
    }
    let cuts = hull
        .windows(2)
        .map(|w| (w[1].intercept - w[0].intercept) / (w[0].slope - w[1].slope))
        .collect();
    (hull, cuts)
}

/// The envelope's lines near `x`: the one it names and up to two on each side.
fn candidates<'a>(hull: &'a [Line], cuts: &[f64], x: f64) -> &'a [Line] {
    let j = cuts.partition_point(|&c| c < x);
    let lo = j.saturating_sub(2);
    let hi = (j + 3).min(hull.len());
    &hull[lo..hi]
}

impl Pld {
    /// [`Pld::neyman_pearson`] at each of `levels`: for a pessimistic PLD each value is a
    /// certified upper bound found through the lower envelope of its lines (module docs),
    /// equal to the scalar value up to the rounding of the envelope's choice; for an
    /// optimistic PLD the scalar values.
    pub fn neyman_pearson_many(&self, levels: &[f64]) -> Vec<f64> {
        if self.bound != Bound::Pessimistic {
            return levels.iter().map(|&k| self.neyman_pearson(k)).collect();
        }
        let c = self.infinity_mass;
        let n = self.masses.len();
        let rel = (n as f64 + 16.0) * 2.0 * U;
        // (s1, s2, e, r) of each grid point, as the scan accumulates them
        let mut terms: Vec<(f64, f64, f64, f64)> = Vec::with_capacity(n);
        let mut lines = Vec::with_capacity(n + 1);
        let (mut s1, mut s2) = (0.0, 0.0);
        for k in (0..n).rev() {
            let lk = self.loss(k);
            let e = libm::exp(lk);
            if e.is_finite() {
                let r = self.error_term(lk);
                lines.push(Line {
                    slope: e * (1.0 + rel),
                    intercept: c + s1 - e * s2 + r + rel * (c + s1 + e * s2 + r),
                    id: terms.len(),
                });
                terms.push((s1, s2, e, r));
            }
            let p = self.untilted(k);
            s1 += p;
            s2 += p * libm::exp(-lk);
        }
        // the ε → −∞ end (untilted only): a constant
        let floor = (self.tilt <= 0.0).then(|| {
            let r = self.error_scale();
            let v = c + s1 + r;
            v + rel * v
        });
        if let Some(v) = floor {
            lines.push(Line {
                slope: 0.0,
                intercept: v,
                id: usize::MAX,
            });
        }
        let (hull, cuts) = lower_envelope(lines);
        let at = |kappa: f64, l: &Line| -> f64 {
            match terms.get(l.id) {
                Some(&(s1, s2, e, r)) => {
                    let v = c + s1 + e * (kappa - s2) + r;
                    v + rel * (c + s1 + e * (kappa + s2) + r)
                }
                None => floor.unwrap_or(f64::INFINITY),
            }
        };
        levels
            .iter()
            .map(|&kappa| {
                let best = candidates(&hull, &cuts, kappa)
                    .iter()
                    .map(|l| at(kappa, l))
                    .fold(f64::INFINITY, f64::min);
                best * (1.0 + 16.0 * U)
            })
            .collect()
    }

    /// [`Pld::neyman_pearson_reversed`] at each of `levels`, as
    /// [`Pld::neyman_pearson_many`]: the lines are g(α) = 1 + e^{−ℓ_k}(α − 1 + δ(ℓ_k)) and
    /// the constant 1.
    pub fn neyman_pearson_reversed_many(&self, levels: &[f64]) -> Vec<f64> {
        if self.bound != Bound::Pessimistic {
            return levels
                .iter()
                .map(|&a| self.neyman_pearson_reversed(a))
                .collect();
        }
        let p_inf = self.infinity_mass;
        let n = self.masses.len();
        let rel = (n as f64 + 16.0) * 2.0 * U;
        // (v, certified δ) of each grid point
        let mut terms: Vec<(f64, f64)> = Vec::with_capacity(n);
        let mut lines = Vec::with_capacity(n + 1);
        let (mut s1, mut s2) = (0.0, 0.0);
        for k in (0..n).rev() {
            let lk = self.loss(k);
            let v = libm::exp(-lk);
            if v.is_finite() {
                // δ at ℓ_k exactly as neyman_pearson_reversed's delta_at (pessimistic)
                let e = libm::exp(lk);
                let r = self.error_term(lk);
                let raw = p_inf + s1 - e * s2;
                let slack = rel * (s1 + e * s2) + 4.0 * U * (p_inf + r + raw.abs());
                let d = raw + r + slack;
                lines.push(Line {
                    slope: v,
                    intercept: 1.0 + v * (d - 1.0),
                    id: terms.len(),
                });
                terms.push((v, d));
            }
            let p = self.untilted(k);
            s1 += p;
            s2 += p * libm::exp(-lk);
        }
        lines.push(Line {
            slope: 0.0,
            intercept: 1.0,
            id: usize::MAX,
        });
        let (hull, cuts) = lower_envelope(lines);
        levels
            .iter()
            .map(|&alpha| {
                // g at a grid point as neyman_pearson_reversed's g_at (pessimistic side)
                let g_at = |v: f64, d: f64| -> f64 {
                    let cc = (alpha - 1.0) + d;
                    let vv = if cc >= 0.0 {
                        v * (1.0 + 4.0 * U)
                    } else {
                        v * (1.0 - 4.0 * U)
                    };
                    let g = 1.0 + vv * cc;
                    g + 16.0 * U * (1.0 + vv * (alpha + 1.0 + d.abs()))
                };
                let best = candidates(&hull, &cuts, alpha)
                    .iter()
                    .map(|l| match terms.get(l.id) {
                        Some(&(v, d)) => g_at(v, d),
                        None => 1.0,
                    })
                    .fold(1.0f64, f64::min);
                best * (1.0 + 16.0 * U)
            })
            .collect()
    }
}
