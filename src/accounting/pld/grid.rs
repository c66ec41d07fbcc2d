//! A PLD's grid: its accessors, and the valid moves of its masses (trimming, covering,
//! folding and re-splitting the coarse tail, truncation to the +∞ atom, coarsening).

use super::*;

impl Pld {
    /// Grid spacing Δ.
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// Index of the first grid point: `masses()[i]` sits at loss `(offset + i)·Δ`.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// Stored (tilted) masses at the grid points: the mass under the first measure of the
    /// pair at loss ℓ_i = (offset + i)·Δ is `masses()[i] · exp(log_scale() − tilt()·ℓ_i)`
    /// (for an untilted PLD, `tilt() = 0` and `log_scale()` ≈ 0).
    pub fn masses(&self) -> &[f64] {
        &self.masses
    }

    /// The tilt λ ≥ 0 of the stored masses.
    pub fn tilt(&self) -> f64 {
        self.tilt
    }

    /// The log-scale of the stored masses (see [`Pld::masses`]).
    pub fn log_scale(&self) -> f64 {
        self.log_scale
    }

    /// The untilted masses p_i = `masses()[i]·exp(log_scale() − tilt()·ℓ_i)`.
    pub fn untilted_masses(&self) -> Vec<f64> {
        (0..self.masses.len()).map(|i| self.untilted(i)).collect()
    }

    /// Mass of the atom at +∞ (always 0 for an optimistic PLD).
    pub fn infinity_mass(&self) -> f64 {
        self.infinity_mass
    }

    /// Certified bound on the roundoff error of `masses()` in the tilted ℓ₁ norm (the
    /// units of `masses()`): the true masses p′ satisfy Σ_i |p′_i − p_i|·e^{tilt·ℓ_i} ≤
    /// `roundoff()·exp(log_scale())`. For `tilt() = 0` this is the plain ℓ₁ bound.
    pub fn roundoff(&self) -> f64 {
        self.roundoff
    }

    /// Whether this PLD over- or under-estimates δ.
    pub fn bound(&self) -> Bound {
        self.bound
    }

    pub(super) fn loss(&self, i: usize) -> f64 {
        (self.offset + i as i64) as f64 * self.interval
    }

    /// The loss of the grid point above point `i` (its right neighbour), if any.
    pub(super) fn loss_above(&self, i: usize) -> Option<f64> {
        (i + 1 < self.masses.len()).then(|| self.loss(i + 1))
    }

    pub(super) fn untilted(&self, i: usize) -> f64 {
        let p = self.masses.get(i).copied().unwrap_or(0.0);
        if p == 0.0 {
            return 0.0; // (never 0·∞ = NaN)
        }
        if self.tilt == 0.0 {
            return p * libm::exp(self.log_scale);
        }
        p * libm::exp(self.log_scale - self.tilt * self.loss(i))
    }

    /// K with |Σ_ℓ (p′_ℓ − p_ℓ) f(ℓ)| ≤ K·c(λ)·e^{−λε} for every f with 0 ≤ f(ℓ) ≤
    /// (1 − e^{ε−ℓ})₊: K = roundoff·e^{log_scale}.
    pub(super) fn error_scale(&self) -> f64 {
        if self.roundoff <= 0.0 {
            return 0.0;
        }
        libm::exp(libm::log(self.roundoff) + self.log_scale) * (1.0 + 1e-12)
    }

    /// The roundoff term of δ(ε): K·c(λ)·e^{−λε}.
    pub(super) fn error_term(&self, epsilon: f64) -> f64 {
        if self.roundoff <= 0.0 {
            return 0.0;
        }
        let v = libm::log(self.roundoff) + self.log_scale - self.tilt * epsilon;
        libm::exp(v + 1e-12 * (1.0 + libm::fabs(v))) * tilt_weight(self.tilt)
    }

    pub(super) fn trim(&mut self) {
        let start = self.masses.iter().position(|&m| m > 0.0).unwrap_or(0);
        let end = self
            .masses
            .iter()
            .rposition(|&m| m > 0.0)
            .map_or(start, |e| e + 1);
        if start > 0 || end < self.masses.len() {
            self.masses.truncate(end.max(start));
            self.masses.drain(..start.min(self.masses.len()));
            self.offset += start as i64;
        }
        let empty = match self.tail.as_mut() {
            Some(t) => {
                let st = t.masses.iter().position(|&m| m > 0.0).unwrap_or(0);
                let en = t
                    .masses
                    .iter()
                    .rposition(|&m| m > 0.0)
                    .map_or(st, |e| e + 1);
                t.masses.truncate(en.max(st));
                t.masses.drain(..st.min(t.masses.len()));
                t.offset += st as i64;
                t.masses.is_empty()
            }
            None => false,
        };
        if empty {
            self.tail = None;
        }
    }

    /// Total stored (tilted) mass, fine part and tail.
    pub(super) fn total(&self) -> f64 {
        let t: f64 = self.tail.as_ref().map_or(0.0, |t| t.masses.iter().sum());
        self.masses.iter().sum::<f64>() + t
    }

    /// Make sure the fine array covers the global fine indices [lo, hi].
    pub(super) fn cover(&mut self, lo: i64, hi: i64) {
        if self.masses.is_empty() {
            self.offset = lo;
        }
        if lo < self.offset {
            let k = (self.offset - lo) as usize;
            let mut v = alloc::vec![0.0f64; k];
            v.extend_from_slice(&self.masses);
            self.masses = v;
            self.offset = lo;
        }
        let end = self.offset + self.masses.len() as i64 - 1;
        if hi > end {
            self.masses
                .resize(self.masses.len() + (hi - end) as usize, 0.0);
        }
    }

    /// Put the tail back on the fine grid (exact: lattice points are grid points).
    pub(super) fn fold_tail(&mut self) {
        if let Some(t) = self.tail.take() {
            if t.masses.is_empty() {
                return;
            }
            let lo = t.offset * t.ratio;
            let hi = (t.offset + t.masses.len() as i64 - 1) * t.ratio;
            self.cover(lo, hi);
            for (j, &p) in t.masses.iter().enumerate() {
                let g = (t.offset + j as i64) * t.ratio - self.offset;
                if let Some(x) = self.masses.get_mut(g as usize) {
                    *x += p;
                }
            }
            self.trim();
        }
    }

    /// Move atoms (global fine index g, tilted mass p) onto the lattice of spacing r·Δ with
    /// a second-order rule: pessimistic — the connect-the-dots split of each atom between
    /// its two neighbouring lattice points (lower fraction (e^{(r−d)Δ} − 1)/(e^{rΔ} − 1) at
    /// distance dΔ above the lower point, nudged down); optimistic — the atoms between two
    /// lattice points are merged into one bin atom and placed by [`merge_to_grid`]. Both
    /// preserve the pair's masses up to domination (exact for test functions affine in
    /// e^{−ℓ} between lattice points). Returns (masses, first lattice index, tilted mass
    /// moved).
    pub(super) fn to_lattice(&self, atoms: &[f64], first_g: i64, r: i64) -> (Vec<f64>, i64, f64) {
        if atoms.is_empty() {
            return (Vec::new(), 0, 0.0);
        }
        let d = self.interval;
        let lam = self.tilt;
        let lo = first_g.div_euclid(r);
        let hi = (first_g + atoms.len() as i64 - 1).div_euclid(r) + 1;
        let nb = (hi - lo) as usize;
        let mut out = alloc::vec![0.0f64; nb + 1];
        let span = libm::expm1(r as f64 * d);
        let mut moved = 0.0;
        match self.bound {
            Bound::Pessimistic => {
                let mut lo_fac = Vec::with_capacity(r as usize);
                let mut hi_fac = Vec::with_capacity(r as usize);
                for k in 0..r {
                    let f = libm::expm1((r - k) as f64 * d) / span * (1.0 - 16.0 * U);
                    let f = f.clamp(0.0, 1.0);
                    lo_fac.push(f * libm::exp(-lam * d * k as f64));
                    hi_fac.push((1.0 - f) * libm::exp(lam * d * (r - k) as f64));
                }
                let mut dist = first_g.rem_euclid(r) as usize;
                let mut j = 0usize;
                for &p in atoms.iter() {
                    if dist == 0 {
                        if let Some(x) = out.get_mut(j) {
                            *x += p;
                        }
                    } else if p != 0.0 {
                        let (fl, fh) = (
                            lo_fac.get(dist).copied().unwrap_or(0.0),
                            hi_fac.get(dist).copied().unwrap_or(0.0),
                        );
                        if let Some(x) = out.get_mut(j) {
                            *x += p * fl;
                        }
                        if let Some(x) = out.get_mut(j + 1) {
                            *x += p * fh;
                        }
                        moved += p;
                    }
                    dist += 1;
                    if dist as i64 == r {
                        dist = 0;
                        j += 1;
                    }
                }
            }
            Bound::Optimistic => {
                // bin j: mass (units of its lower lattice point), excesses at both points
                let mut mass = alloc::vec![0.0f64; nb];
                let mut ex_lo = alloc::vec![0.0f64; nb];
                let mut ex_hi = alloc::vec![0.0f64; nb];
                let mut down = Vec::with_capacity(r as usize);
                let mut e_lo = Vec::with_capacity(r as usize);
                let mut e_hi = Vec::with_capacity(r as usize);
                for k in 0..r {
                    down.push(libm::exp(-lam * d * k as f64));
                    e_lo.push(-libm::expm1(-(k as f64) * d));
                    e_hi.push(libm::expm1((r - k) as f64 * d));
                }
                let mut dist = first_g.rem_euclid(r) as usize;
                let mut j = 0usize;
                for &p in atoms.iter() {
                    if dist == 0 {
                        if let Some(x) = out.get_mut(j) {
                            *x += p;
                        }
                    } else if p != 0.0 {
                        let q = p * down.get(dist).copied().unwrap_or(0.0);
                        if let (Some(m), Some(a), Some(b)) =
                            (mass.get_mut(j), ex_lo.get_mut(j), ex_hi.get_mut(j))
                        {
                            *m += q;
                            *a += q * e_lo.get(dist).copied().unwrap_or(0.0);
                            *b += q * e_hi.get(dist).copied().unwrap_or(0.0);
                        }
                        moved += p;
                    }
                    dist += 1;
                    if dist as i64 == r {
                        dist = 0;
                        j += 1;
                    }
                }
                let rates = |j: usize| -> (f64, f64) {
                    let m = mass.get(j).copied().unwrap_or(0.0);
                    if m <= 0.0 {
                        return (0.0, 0.0);
                    }
                    (
                        ex_lo.get(j).copied().unwrap_or(0.0) / m,
                        ex_hi.get(j).copied().unwrap_or(0.0) / m,
                    )
                };
                let g = libm::exp(lam * d * r as f64);
                merge_to_grid(&mass, rates, g, &mut out);
            }
        }
        (out, lo, moved)
    }

    /// The fine masses moved onto the lattice of spacing r·Δ ([`Pld::to_lattice`]):
    /// (masses, first lattice index).
    pub(super) fn lattice_image(&self, r: i64) -> (Vec<f64>, i64) {
        let (m, lo, _) = self.to_lattice(&self.masses, self.offset, r);
        (m, lo)
    }

    /// Re-split into a fine part and a coarse tail: the fine suffix of tilted mass ≤
    /// [`SPLIT_MASS`] of the total (from a lattice point on) is moved onto the tail lattice
    /// (loss rounded up / down), tail points below the split are folded into the fine part.
    pub(super) fn resplit(&mut self, ratio: i64) {
        let r = self.tail.as_ref().map_or(ratio, |t| t.ratio);
        if r < 2 {
            self.fold_tail();
            return;
        }
        let n = self.masses.len();
        let limit = SPLIT_MASS * self.total();
        let mut acc = 0.0;
        let mut s = n;
        while s > 1 && acc + self.masses[s - 1] <= limit {
            acc += self.masses[s - 1];
            s -= 1;
        }
        if s > FINE_MAX {
            // at most FINE_MAX fine points, unless the untilted bulk needs more
            let total_u: f64 = (0..n).map(|i| self.untilted(i)).sum();
            let limit_u = SPLIT_MASS * total_u;
            let mut acc_u = 0.0;
            let mut s_u = n;
            while s_u > 1 {
                let m = self.untilted(s_u - 1);
                if acc_u + m > limit_u {
                    break;
                }
                acc_u += m;
                s_u -= 1;
            }
            s = FINE_MAX.max(s_u).min(s);
        }
        let k_split = (self.offset + s as i64 + r - 1).div_euclid(r);
        let g_split = k_split * r;
        let s_al = (g_split - self.offset).clamp(0, n as i64) as usize;
        if self.tail.is_none() && n - s_al < 4 * r as usize {
            return; // not worth a tail
        }
        let old = self.tail.take();
        // fold old tail points below the split
        let mut keep: Vec<(i64, f64)> = Vec::new();
        if let Some(t) = old {
            let mut low: Vec<(i64, f64)> = Vec::new();
            for (j, &p) in t.masses.iter().enumerate() {
                let k = t.offset + j as i64;
                if k < k_split {
                    low.push((k * r, p));
                } else {
                    keep.push((k, p));
                }
            }
            if let (Some(&(lo, _)), Some(&(hi, _))) = (low.first(), low.last()) {
                self.cover(lo, hi);
                for (g, p) in low {
                    if let Some(x) = self.masses.get_mut((g - self.offset) as usize) {
                        *x += p;
                    }
                }
            }
        }
        // move the fine suffix onto the lattice
        let pess = self.bound == Bound::Pessimistic;
        let n = self.masses.len();
        let s_al = (g_split - self.offset).clamp(0, n as i64) as usize;
        let (img, img_lo, moved) = match self.masses.get(s_al..) {
            Some(sl) => self.to_lattice(sl, self.offset + s_al as i64, r),
            None => (Vec::new(), 0, 0.0),
        };
        for (j, &p) in img.iter().enumerate() {
            if p != 0.0 {
                keep.push((img_lo + j as i64, p));
            }
        }
        self.masses.truncate(s_al);
        if !keep.is_empty() {
            let lo = keep.iter().map(|x| x.0).min().unwrap_or(k_split);
            let hi = keep.iter().map(|x| x.0).max().unwrap_or(k_split);
            let mut m = alloc::vec![0.0f64; (hi - lo + 1) as usize];
            for (k, p) in keep {
                if let Some(x) = m.get_mut((k - lo) as usize) {
                    *x += p;
                }
            }
            self.tail = Some(Tail {
                masses: m,
                offset: lo,
                ratio: r,
            });
        }
        // moving mass by < rΔ multiplies the tilted weight of its error by ≤ e^{λrΔ}
        let _ = pess;
        let g = libm::exp(self.tilt * self.interval * r as f64) * (1.0 + 8.0 * U);
        self.roundoff =
            (self.roundoff * g + 16.0 * U * moved * g + STEP_SLACK * moved) * (1.0 + 1e-12);
        self.trim();
    }

    /// Truncate the tails. Upper tail (from the top of the coarse tail, then the fine part):
    /// the longest suffix whose untilted mass plus, for λ > 0, the bound on its roundoff
    /// error (≤ e^{log_scale − λℓ_cut}·roundoff, as 1{ℓ ≥ ℓ_cut} ≤ e^{λ(ℓ−ℓ_cut)}) is
    /// ≤ tail_mass/2 (plus the untilted size of `extra` at the top point); pessimistic moves
    /// both to +∞, optimistic drops the suffix. Lower tail: tilted mass ≤ tail_mass/2 + `extra`; dropped in both (pessimistic: the
    /// dropped tilted mass is added to the roundoff budget, which bounds its effect on δ
    /// exactly like roundoff).
    pub(super) fn truncate(&mut self, extra: f64) {
        let half = self.tail_mass / 2.0;
        let (lam, ls, d) = (self.tilt, self.log_scale, self.interval);
        let n = self.masses.len();
        let top_loss = match self.tail.as_ref() {
            Some(t) if !t.masses.is_empty() => {
                (t.offset + t.masses.len() as i64 - 1) as f64 * t.ratio as f64 * d
            }
            _ => self.loss(n.saturating_sub(1)),
        };
        let allow_up = half + extra * libm::exp(ls - lam * top_loss);
        // Cost of a cut at loss l: the untilted mass moved to +∞ plus, for λ > 0, the untilted
        // size of the roundoff bound of that mass, R·e^{s − λl} (with λ = 0 the +∞ atom has
        // weight 1 in the ℓ₁ norm of the budget, which keeps covering it: see `product`).
        // The whole cost must fit in the allowance, so the +∞ atom grows by at most
        // `tail_mass` per truncation however the roundoff budget grows.
        let rl = if self.roundoff > 0.0 && lam > 0.0 {
            libm::log(self.roundoff)
        } else {
            f64::NEG_INFINITY
        };
        let moved_err = |l: f64| libm::exp(rl + ls - lam * l);
        let cut_ok = |acc: f64, l: f64| acc + moved_err(l) <= allow_up;
        let mut acc = 0.0;
        let mut cut: Option<f64> = None;
        let mut tail_gone = true;
        if let Some(t) = self.tail.as_mut() {
            let dt = t.ratio as f64 * d;
            let mut top = t.masses.len();
            while top > 0 {
                let l = (t.offset + top as i64 - 1) as f64 * dt;
                let m = t.masses[top - 1] * libm::exp(ls - lam * l);
                if !cut_ok(acc + m, l) {
                    break;
                }
                acc += m;
                top -= 1;
                cut = Some(l);
            }
            t.masses.truncate(top);
            tail_gone = top == 0;
        }
        let mut top = n;
        if tail_gone {
            self.tail = None;
            while top > 1 {
                let m = self.untilted(top - 1);
                if !cut_ok(acc + m, self.loss(top - 1)) {
                    break;
                }
                acc += m;
                top -= 1;
                cut = Some(self.loss(top));
            }
        }
        if let (Some(c), Bound::Pessimistic) = (cut, self.bound) {
            let e = moved_err(c);
            self.infinity_mass =
                ((self.infinity_mass + acc * (1.0 + 1e-9) + e) * (1.0 + 4.0 * U)).min(1.0);
        }
        let allow_lo = half + extra;
        let mut bottom = 0;
        let mut acc_lo = 0.0;
        while bottom + 1 < top {
            let m = self.masses[bottom];
            if acc_lo + m > allow_lo {
                break;
            }
            acc_lo += m;
            bottom += 1;
        }
        if bottom > 0 && self.bound == Bound::Pessimistic {
            self.roundoff = (self.roundoff + acc_lo) * (1.0 + 1e-12);
        }
        self.masses.truncate(top);
        self.masses.drain(..bottom.min(self.masses.len()));
        self.offset += bottom as i64;
        self.trim();
    }

    /// Coarsen the grid by a factor 2 (Δ → 2Δ): the atom at the odd point (2K+1)Δ is split
    /// (pessimistic: fraction 1/(1 + e^{Δ}) to 2KΔ, nudged down, the rest to 2(K+1)Δ — the
    /// exact connect-the-dots split of that atom) or merged with its neighbours
    /// ([`merge_to_grid`], optimistic); atoms on even points stay. In tilted units a piece
    /// moving by ±Δ is multiplied by e^{±λΔ}. A coarse tail keeps its lattice (its ratio
    /// halves; at ratio 1 it is folded into the fine part).
    pub(super) fn coarsen(&mut self) {
        let d = self.interval;
        let lam = self.tilt;
        let first = self.offset.div_euclid(2);
        let last = (self.offset + self.masses.len() as i64 - 1).div_euclid(2);
        let nb = (last - first + 1).max(1) as usize;
        let mut out = alloc::vec![0.0f64; nb + 1];
        let s: f64 = self.total();
        let parity = self.offset.rem_euclid(2) as usize;
        match self.bound {
            Bound::Pessimistic => {
                let f_lo = 1.0 / (1.0 + libm::exp(d)) * (1.0 - 8.0 * U);
                let lo_fac = f_lo * libm::exp(-lam * d);
                let hi_fac = (1.0 - f_lo) * libm::exp(lam * d);
                for (i, &p) in self.masses.iter().enumerate() {
                    let k = (i + parity) / 2;
                    if (i + parity) % 2 == 0 {
                        if let Some(x) = out.get_mut(k) {
                            *x += p;
                        }
                    } else {
                        if let Some(x) = out.get_mut(k) {
                            *x += p * lo_fac;
                        }
                        if let Some(x) = out.get_mut(k + 1) {
                            *x += p * hi_fac;
                        }
                    }
                }
            }
            Bound::Optimistic => {
                let mut odd = alloc::vec![0.0f64; nb];
                let down = libm::exp(-lam * d);
                for (i, &p) in self.masses.iter().enumerate() {
                    let k = (i + parity) / 2;
                    if (i + parity) % 2 == 0 {
                        if let Some(x) = out.get_mut(k) {
                            *x += p;
                        }
                    } else if let Some(x) = odd.get_mut(k) {
                        *x = p * down; // units of the lower point 2KΔ
                    }
                }
                // atom at the bin's midpoint: excess rates (1 − e^{−Δ}, e^{Δ} − 1)
                let r = (-libm::expm1(-d), libm::expm1(d));
                let g = libm::exp(2.0 * lam * d);
                merge_to_grid(&odd, |_| r, g, &mut out);
            }
        }
        self.masses = out;
        self.offset = first;
        self.interval = 2.0 * d;
        let grow = libm::exp(lam * d);
        self.roundoff =
            (self.roundoff * grow + STEP_SLACK * s + 16.0 * U * s * grow) * (1.0 + 1e-12);
        let fold = match self.tail.as_mut() {
            Some(t) => {
                t.ratio /= 2;
                t.ratio < 2
            }
            None => false,
        };
        if fold {
            self.fold_tail();
        }
        self.trim();
    }
}
