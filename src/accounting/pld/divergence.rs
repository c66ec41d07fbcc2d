//! What a PLD answers: the hockey-stick divergence δ(ε), ε(δ) and the Neyman–Pearson
//! test at a level κ (the ReRo γ), each moved by its error bound to the safe side.

use super::*;

impl Pld {
    /// δ(ε) = H_{e^ε} = p∞ + Σ_ℓ p_ℓ (1 − e^{ε−ℓ})₊, moved by the roundoff bound
    /// K·c(λ)·e^{−λε} (K = roundoff·e^{log_scale}, c(λ) = λ^λ/(1+λ)^{1+λ}, see the module
    /// docs) and the summation roundoff to the safe side (up for a pessimistic PLD, down for
    /// an optimistic one) and clamped to [0, 1]. NaN `epsilon` gives 1 (pessimistic) or 0
    /// (optimistic).
    pub fn delta(&self, epsilon: f64) -> f64 {
        if epsilon.is_nan() {
            return match self.bound {
                Bound::Pessimistic => 1.0,
                Bound::Optimistic => 0.0,
            };
        }
        let mut s = 0.0;
        for i in 0..self.masses.len() {
            let l = self.loss(i);
            if l > epsilon {
                s += self.untilted(i) * (-libm::expm1(epsilon - l));
            }
        }
        let n = self.masses.len() as f64;
        let e = self.error_term(epsilon);
        let v = match self.bound {
            Bound::Pessimistic => {
                (self.infinity_mass + s * (1.0 + (n + 16.0) * 2.0 * U) + e) * (1.0 + 4.0 * U)
            }
            Bound::Optimistic => (s * (1.0 - (n + 16.0) * 2.0 * U) - e) * (1.0 - 4.0 * U),
        };
        match self.bound {
            Bound::Pessimistic if v.is_nan() => 1.0,
            Bound::Optimistic if v.is_nan() => 0.0,
            _ => v.clamp(0.0, 1.0),
        }
    }

    /// The smallest ε ≥ 0 with δ(ε) ≤ `delta` (pessimistic: an ε at which the certified
    /// δ(ε) is ≤ `delta`; optimistic: an ε at which the certified lower δ(ε) still exceeds
    /// `delta`, or 0), located on the piecewise form δ(ε) = p∞ + S₁ − e^ε S₂ ± K c e^{−λε}
    /// between grid points and refined by bisection.
    ///
    /// # Errors
    /// `delta` ∉ (0, 1); [`Error::Numerical`] if δ(ε) ≥ `delta` for every ε (the +∞ atom or
    /// the roundoff budget alone exceeds `delta`).
    pub fn epsilon(&self, delta: f64) -> Result<f64> {
        let delta = check_open_unit("delta", delta)?;
        let pess = self.bound == Bound::Pessimistic;
        let n = self.masses.len();
        let rel = (n as f64 + 16.0) * 2.0 * U;
        let kc = self.error_scale() * tilt_weight(self.tilt);
        let lam = self.tilt;
        let p_inf = self.infinity_mass;
        // certified δ on a piece with suffix sums (s1, s2)
        let value = |eps: f64, s1: f64, s2: f64| -> f64 {
            let e = if kc > 0.0 {
                kc * libm::exp(-lam * eps) * (1.0 + 1e-12)
            } else {
                0.0
            };
            // e^ε·S₂ with S₂ = 0 is 0, also where e^ε overflows (never ∞·0 = NaN, which
            // read as "δ exceeded" for any δ)
            let es2 = if s2 == 0.0 { 0.0 } else { libm::exp(eps) * s2 };
            let raw = s1 - es2;
            let slack = rel * (s1 + es2) + 4.0 * U * (p_inf + e);
            if pess {
                p_inf + raw + e + slack
            } else {
                raw - e - slack
            }
        };
        // ok(eps): pessimistic — certified δ(ε) ≤ delta; optimistic — certified δ(ε) > delta
        let ok = |v: f64| if pess { v <= delta } else { v > delta };
        if pess && p_inf * (1.0 + 4.0 * U) >= delta {
            return numerical("PLD: +infinity mass exceeds delta", p_inf);
        }
        // above the top grid point: δ = p∞ ± K c e^{−λε}
        let top = if n > 0 { self.loss(n - 1) } else { 0.0 };
        let top0 = top.max(0.0);
        if pess && !ok(value(top0, 0.0, 0.0)) {
            if lam <= 0.0 {
                return numerical("PLD: +infinity mass and roundoff exceed delta", p_inf + kc);
            }
            // solve p∞ + K c e^{−λε} = delta (with slack), then step up until certified
            let gap = delta / (1.0 + 8.0 * U) - p_inf;
            let mut e = libm::log(kc / gap) / lam;
            e = e.max(top0);
            for _ in 0..64 {
                if ok(value(e, 0.0, 0.0)) {
                    return Ok(e);
                }
                e += 1e-12 * (1.0 + libm::fabs(e));
            }
            return numerical("PLD: roundoff bound exceeds delta", kc);
        }
        let bisect = |lo0: f64, hi0: f64, s1: f64, s2: f64| -> f64 {
            // invariant: pessimistic ok(hi); optimistic ok(lo)
            let (mut lo, mut hi) = (lo0, hi0);
            for _ in 0..80 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if pess == ok(value(mid, s1, s2)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            if pess {
                hi
            } else {
                lo
            }
        };
        // Walk down from the top: on [ℓ_{k−1}, ℓ_k] the atoms with loss > ε are i ≥ k.
        // Pessimistic: the right end ℓ_k is certified (checked as the left end of the piece
        // above, or above the top); the first piece whose left end is not certified holds
        // the crossing. Optimistic: the first piece whose left end is certified above
        // `delta` is refined (any such ε is a lower bound on the true ε).
        let mut s1 = 0.0;
        let mut s2 = 0.0;
        for k in (0..n).rev() {
            let lk = self.loss(k);
            if lk <= 0.0 {
                break;
            }
            let p = self.untilted(k);
            s1 += p;
            s2 += p * libm::exp(-lk);
            let left = if k > 0 {
                self.loss(k - 1).max(0.0)
            } else {
                0.0
            };
            let good = ok(value(left, s1, s2));
            if pess != good {
                return Ok(bisect(left, lk, s1, s2));
            }
            if left <= 0.0 {
                return Ok(0.0);
            }
        }
        // no atom above 0
        if pess {
            if ok(value(0.0, 0.0, 0.0)) {
                return Ok(0.0);
            }
            return Ok(bisect(0.0, top0, 0.0, 0.0));
        }
        Ok(0.0)
    }

    /// min over ε of e^ε κ + δ(ε): for a pessimistic PLD of μ_T‖ν_T an upper bound on
    /// sup{μ_T(E) : ν_T(E) ≤ κ} (for every ε, μ(E) ≤ e^ε ν(E) + H_{e^ε}(μ‖ν)); for an
    /// optimistic one a lower bound (the Neyman–Pearson lemma makes the minimum exact).
    /// δ(ε) includes the roundoff term K·c(λ)·e^{−λε}. Not clamped; `kappa` is not validated
    /// here.
    ///
    /// Pessimistic: any ε gives an upper bound; the grid points are tried (and, untilted,
    /// ε → −∞, value p∞ + Σp). Optimistic: on each piece [ℓ_k, ℓ_{k+1}] the certified lower
    /// function s₁ + e^ε(κ − s₂) − K c e^{−λε} is monotone or concave, so its minimum is at
    /// an endpoint; the true δ is also non-increasing and ≥ 0, so on the piece
    /// e^ε κ + δ(ε) ≥ e^{ℓ_k}κ + max_{j ≥ k+1} δ_lo(ℓ_j): the larger of the two bounds is
    /// used (with a tilt the roundoff term makes δ_lo useless at small losses, where the
    /// monotone bound takes over). Below the lowest point the bound is max_j δ_lo(ℓ_j).
    pub fn neyman_pearson(&self, kappa: f64) -> f64 {
        let pess = self.bound == Bound::Pessimistic;
        let c = if pess { self.infinity_mass } else { 0.0 };
        let n = self.masses.len();
        let rel = (n as f64 + 16.0) * 2.0 * U;
        let mut s1 = 0.0;
        let mut s2 = 0.0;
        let mut best = f64::INFINITY;
        let adjust = |v: f64, mag: f64| if pess { v + rel * mag } else { v - rel * mag };
        // optimistic: running max of the certified δ_lo at the grid points above, and the
        // certified lower function at the previous (upper) grid point
        let mut m_run = 0.0f64;
        let mut f_up: Option<f64> = None;
        for k in (0..n).rev() {
            // ε = ℓ_k: terms with ℓ > ℓ_k are the suffix accumulated so far.
            let lk = self.loss(k);
            let e = libm::exp(lk);
            if e.is_finite() {
                let r = self.error_term(lk);
                if pess {
                    let v = adjust(c + s1 + e * (kappa - s2) + r, c + s1 + e * (kappa + s2) + r);
                    best = best.min(v);
                } else {
                    let f_k = adjust(s1 + e * (kappa - s2) - r, s1 + e * (kappa + s2) + r);
                    // piece [ℓ_k, ℓ_{k+1}] (or [ℓ_k, ∞) above the top, where δ ≥ 0)
                    let end_min = f_up.map_or(f_k, |f| f.min(f_k));
                    let mono = (e * kappa * (1.0 - 4.0 * U) + m_run * (1.0 - 4.0 * U)).max(0.0);
                    // δ(ε) ≥ 1 − e^ε (μ, ν probability laws): e^ε κ + 1 − e^ε decreases
                    let trivial = match self.loss_above(k) {
                        Some(hi) if hi < 0.0 => {
                            let eh = libm::exp(hi) * (1.0 + 4.0 * U);
                            (1.0 - eh * (1.0 - kappa)) * (1.0 - 4.0 * U)
                        }
                        _ => 0.0,
                    };
                    best = best.min(end_min.max(mono).max(trivial));
                    let d_lo = adjust(s1 - e * s2 - r, s1 + e * s2 + r);
                    m_run = m_run.max(d_lo);
                    f_up = Some(f_k);
                }
            } else if !pess {
                f_up = None;
            }
            let p = self.untilted(k);
            s1 += p;
            s2 += p * libm::exp(-lk);
        }
        if pess {
            if self.tilt <= 0.0 {
                let r = self.error_scale();
                best = best.min(adjust(c + s1 + r, c + s1 + r));
            }
        } else {
            // ε below the lowest point: δ(ε) ≥ max_j δ_lo(ℓ_j); untilted, the certified lower
            // function there is monotone between ε → −∞ (value Σp − K) and ℓ_0
            // and δ(ε) ≥ 1 − e^ε: with u = e^ε ≤ e^{ℓ_0}, uκ + max(M, 1 − u) is least at
            // u = min(1 − M, e^{ℓ_0})
            let u = (1.0 - m_run).min(if n > 0 { libm::exp(self.loss(0)) } else { 1.0 });
            let mut low = ((u * kappa + m_run.max(1.0 - u)) * (1.0 - 8.0 * U)).max(m_run);
            if self.tilt <= 0.0 {
                let r = self.error_scale();
                let all = adjust(s1 - r, s1 + r);
                low = low.max(f_up.map_or(all, |f| f.min(all)));
            }
            best = best.min(low);
        }
        match self.bound {
            Bound::Pessimistic => best * (1.0 + 16.0 * U),
            Bound::Optimistic => best * (1.0 - 16.0 * U),
        }
    }
}

// ---- The reversed pair (issue 29): the other direction of add/remove from this PLD ----

impl Pld {
    /// The power 1 − T(Q, P)(α) of the *reversed* pair, read from this PLD of P‖Q: a
    /// certified upper bound for a pessimistic PLD, a lower bound for an optimistic one.
    /// With P‖Q = μ_T‖ν_T (add) this is the remove direction ν_T‖μ_T, so one composed pair
    /// brackets both directions of add/remove adjacency.
    ///
    /// # Formula
    /// For probability laws P, Q and every real ε,
    /// H_{e^ε}(Q‖P) = ∫(dQ − e^ε dP)₊ = 1 − e^ε + e^ε H_{e^{−ε}}(P‖Q) (write
    /// (dQ − e^ε dP)₊ = (dQ − e^ε dP) + (e^ε dP − dQ)₊), so with u = e^ε, x = −ε
    /// (Dong, Roth & Su 2022, T(Q, P) = T(P, Q)⁻¹, in hockey-stick form):
    /// 1 − T(Q, P)(α) = min_ε [e^ε α + H_{e^ε}(Q‖P)] = inf_{x ∈ ℝ} g(x),
    /// g(x) = 1 + e^{−x}(α − 1 + δ(x)), δ(x) = H_{e^x}(P‖Q).
    /// g is increasing in δ(x), and this PLD's certified δ lies above (pessimistic) or below
    /// (optimistic) the true δ at every real x (module docs of [`crate::accounting::pld`]),
    /// so the bracket carries over:
    /// - pessimistic: any x gives an upper bound; the grid points x = ℓ_k are tried (and
    ///   x → ∞, value 1).
    /// - optimistic: on a piece x ∈ [ℓ_k, ℓ_{k+1}] with v = e^{−x}, the certified lower
    ///   δ_lo(x) = s₁ − e^x s₂ − K c e^{−λx} (suffix sums over the atoms above x) makes
    ///   g ≥ 1 − s₂ + v(α − 1 + s₁) − K c v^{1+λ}, concave in v, so at least its smaller end
    ///   value; the true δ is non-increasing, so δ(x) ≥ M = max_{j > k} δ_lo(ℓ_j) and
    ///   g ≥ 1 + v(α − 1 + M), linear in v (least at an end); δ ≥ 1 − e^x (P, Q
    ///   probability laws) gives g ≥ vα ≥ e^{−ℓ_{k+1}}α; δ ≥ 0 gives g ≥ 1 − v(1 − α).
    ///   Each is a lower bound on the whole piece, so their maximum is; the minimum over
    ///   the pieces (and the two unbounded ends, see the code) bounds the infimum.
    ///
    /// Not clamped; `alpha` is not validated here.
    pub fn neyman_pearson_reversed(&self, alpha: f64) -> f64 {
        let pess = self.bound == Bound::Pessimistic;
        let p_inf = if pess { self.infinity_mass } else { 0.0 };
        let n = self.masses.len();
        let rel = (n as f64 + 16.0) * 2.0 * U;
        let a1 = alpha - 1.0;
        // certified δ at ℓ_k from the suffix sums over j > k, moved to the safe side
        let delta_at = |lk: f64, s1: f64, s2: f64| -> f64 {
            let e = libm::exp(lk);
            let r = self.error_term(lk);
            let raw = p_inf + s1 - e * s2;
            let slack = rel * (s1 + e * s2) + 4.0 * U * (p_inf + r + raw.abs());
            if pess {
                raw + r + slack
            } else {
                raw - r - slack
            }
        };
        // g at x = ℓ_k from v ≈ e^{−ℓ_k} (libm's exp, within an ulp) and a certified δ:
        // 1 + v(α − 1 + δ) moved to the safe side. v is widened by 4u towards the side that
        // moves g outward (up for a pessimistic PLD when α − 1 + δ ≥ 0, …), and the
        // arithmetic (four roundings, each within u of its operands' magnitudes, with
        // |α − 1 + δ| ≤ α + 1 + |δ|) is covered by 16u·(1 + v(α + 1 + |δ|)).
        let g_at = |v: f64, d: f64| -> f64 {
            let c = a1 + d;
            let vv = if (c >= 0.0) == pess {
                v * (1.0 + 4.0 * U)
            } else {
                v * (1.0 - 4.0 * U)
            };
            let g = 1.0 + vv * c;
            let slack = 16.0 * U * (1.0 + vv * (alpha + 1.0 + d.abs()));
            if pess {
                g + slack
            } else {
                g - slack
            }
        };
        let mut s1 = 0.0;
        let mut s2 = 0.0;
        if pess {
            let mut best = 1.0f64;
            for k in (0..n).rev() {
                let lk = self.loss(k);
                let v = libm::exp(-lk);
                if v.is_finite() {
                    best = best.min(g_at(v, delta_at(lk, s1, s2)));
                }
                let p = self.untilted(k);
                s1 += p;
                s2 += p * libm::exp(-lk);
            }
            return best * (1.0 + 16.0 * U);
        }
        // optimistic: walk down; `g_up` is the direct bound at the point above, `m_run` the
        // running max of δ_lo at the points above
        let mut best = f64::INFINITY;
        let mut m_run = 0.0f64;
        let mut g_up: Option<f64> = None;
        let mut v_up: Option<f64> = None;
        for k in (0..n).rev() {
            let lk = self.loss(k);
            let ve = libm::exp(-lk);
            // v ≤ e^{−ℓ_k} (rounded down): as the lower end of the next piece and as v₀ below
            // the bottom it only enlarges the range the lower bounds are taken over
            let v = ve * (1.0 - 4.0 * U);
            let d = delta_at(lk, s1, s2);
            let g_k = if v.is_finite() {
                g_at(ve, d)
            } else {
                f64::NEG_INFINITY
            };
            let piece = match v_up {
                // above the top: δ ≥ 0, g ≥ 1 − v(1 − α) for v ≤ e^{−ℓ_top}
                None => 1.0 - ve * (1.0 + 4.0 * U) * (1.0 - alpha) - 4.0 * U * (1.0 + 2.0 * ve),
                Some(vu) => {
                    let direct = g_up.map_or(g_k, |g| g.min(g_k));
                    // 1 + w(α − 1 + M) at an end w, w widened to the side that lowers it
                    let c = a1 + m_run;
                    let lin = |w: f64| {
                        let ww = if c >= 0.0 {
                            w * (1.0 - 4.0 * U)
                        } else {
                            w * (1.0 + 8.0 * U)
                        };
                        (1.0 + ww * c) - 16.0 * U * (1.0 + ww * 2.0)
                    };
                    let mono = lin(v).min(lin(vu));
                    let trivial = vu * alpha * (1.0 - 4.0 * U);
                    direct.max(mono).max(trivial)
                }
            };
            best = best.min(piece);
            m_run = m_run.max(d);
            g_up = Some(g_k);
            v_up = Some(v);
            let p = self.untilted(k);
            s1 += p;
            s2 += p * libm::exp(-lk);
        }
        // below the bottom (v ≥ v₀ = e^{−ℓ_0}): δ ≥ max(M, 1 − 1/v), so
        // g ≥ max(1 + v(α − 1 + M), vα); both increase in v unless α − 1 + M < 0, when the
        // first falls until they meet at v* = 1/(1 − M)
        if let Some(v0) = v_up {
            let c = a1 + m_run;
            let low = if c < 0.0 && m_run < 1.0 && 1.0 / (1.0 - m_run) >= v0 {
                // the crossing, where both equal α/(1 − M)
                alpha / (1.0 - m_run) * (1.0 - 8.0 * U)
            } else {
                ((1.0 + v0 * c) - 8.0 * U * (1.0 + v0 * 2.0)).max(v0 * alpha * (1.0 - 4.0 * U))
            };
            best = best.min(low);
        } else {
            best = best.min(alpha * (1.0 - 4.0 * U));
        }
        best * (1.0 - 16.0 * U)
    }
}
