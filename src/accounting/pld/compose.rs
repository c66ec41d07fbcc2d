//! Composition by FFT: the products of two PLDs with their roundoff bounds, T-fold
//! composition by repeated squaring ([`compose_many`]), and the heterogeneous composition of
//! schedules ([`Pld::convolve`]).

use super::*;

impl Pld {
    /// Cross terms of a product involving coarse tails, on the tail lattice: A_f′∗B_t +
    /// A_t∗(B_f′ + B_t), with X_f′ the fine part moved onto the lattice ([`Pld::lattice_image`]).
    /// Returns (masses, first lattice index, ratio, ℓ₁ roundoff bound).
    pub(super) fn cross_terms(a: &Pld, b: &Pld, ws: &mut Workspace) -> Result<Option<Cross>> {
        let r = match (a.tail.as_ref(), b.tail.as_ref()) {
            (None, None) => return Ok(None),
            (Some(x), Some(y)) => x.ratio.min(y.ratio),
            (Some(t), None) | (None, Some(t)) => t.ratio,
        };
        // a tail on the lattice r (r divides its ratio: both are powers of two)
        let on = |t: &Tail| -> Tail {
            if t.ratio == r {
                return t.clone();
            }
            let f = t.ratio / r;
            let mut m = alloc::vec![0.0f64; (t.masses.len().saturating_sub(1)) * f as usize + 1];
            for (j, &p) in t.masses.iter().enumerate() {
                if let Some(x) = m.get_mut(j * f as usize) {
                    *x = p;
                }
            }
            Tail {
                masses: m,
                offset: t.offset * f,
                ratio: r,
            }
        };
        let ta_own = a.tail.as_ref().map(on);
        let tb_own = b.tail.as_ref().map(on);
        let mut parts: Vec<(Vec<f64>, i64)> = Vec::new();
        let mut err = 0.0;
        // a square (a is b) needs its fine part's lattice image once, not twice
        let same = core::ptr::eq(a, b);
        let mut a_image: Option<(Vec<f64>, i64)> = None;
        if let Some(tb) = tb_own.as_ref() {
            let (ac, ao) = a.lattice_image(r);
            let ((m, e), _) = ws.products(&ac, &tb.masses, fft::Products::Ab)?;
            err += e + 8.0 * U * m.iter().sum::<f64>();
            parts.push((m, ao + tb.offset));
            if same {
                a_image = Some((ac, ao));
            }
        }
        if let Some(ta) = ta_own.as_ref() {
            let (mut bc, mut bo) = match a_image.take() {
                Some(img) => img,
                None => b.lattice_image(r),
            };
            if let Some(tb) = tb_own.as_ref() {
                // bc + tb on the lattice
                let lo = bo.min(tb.offset);
                let hi = (bo + bc.len() as i64).max(tb.offset + tb.masses.len() as i64);
                let mut v = alloc::vec![0.0f64; (hi - lo) as usize];
                for (j, &p) in bc.iter().enumerate() {
                    if let Some(x) = v.get_mut((bo - lo) as usize + j) {
                        *x += p;
                    }
                }
                for (j, &p) in tb.masses.iter().enumerate() {
                    if let Some(x) = v.get_mut((tb.offset - lo) as usize + j) {
                        *x += p;
                    }
                }
                bc = v;
                bo = lo;
            }
            let ((m, e), _) = ws.products(&ta.masses, &bc, fft::Products::Ab)?;
            err += e + 8.0 * U * m.iter().sum::<f64>();
            parts.push((m, ta.offset + bo));
        }
        let lo = parts.iter().map(|p| p.1).min().unwrap_or(0);
        let hi = parts
            .iter()
            .map(|p| p.1 + p.0.len() as i64)
            .max()
            .unwrap_or(0);
        let mut out = alloc::vec![0.0f64; (hi - lo).max(0) as usize];
        for (m, o) in parts {
            for (j, &p) in m.iter().enumerate() {
                if let Some(x) = out.get_mut((o - lo) as usize + j) {
                    *x += p;
                }
            }
        }
        Ok(Some((out, lo, r, err)))
    }

    /// The PLD of the product of `a` and `b` (same grid spacing and tilt) from their
    /// convolved fine (tilted) masses, the cross terms of their tails and the ℓ₁ roundoff
    /// bounds: offsets and log-scales add, the +∞ atom composes, the roundoff budget
    /// propagates (‖x∗B‖ ≤ ‖x‖‖B‖ in the tilted norm, times e^{λrΔ} for errors moved up onto
    /// the tail lattice), tails are truncated, the tail re-split and the grid coarsened to
    /// `max_points`.
    pub(super) fn product(
        a: &Pld,
        b: &Pld,
        masses: Vec<f64>,
        err: f64,
        max_points: usize,
        cross: Option<Cross>,
    ) -> Pld {
        // With λ = 0 the budget is the plain ℓ₁ norm over the grid and the +∞ atom (whose
        // truncation error `truncate` leaves in the budget), so the norms include p∞.
        let with_inf = |x: &Pld| {
            let t = x.total();
            if x.tilt > 0.0 || x.infinity_mass <= 0.0 {
                t
            } else {
                t + libm::exp(libm::log(x.infinity_mass) - x.log_scale) * (1.0 + 8.0 * U)
            }
        };
        let s1 = with_inf(a);
        let s2 = with_inf(b);
        let grow = match &cross {
            Some((_, _, r, _)) => libm::exp(a.tilt * a.interval * *r as f64) * (1.0 + 8.0 * U),
            None => 1.0,
        };
        let err_c = cross.as_ref().map_or(0.0, |c| c.3);
        // the log-scales' sum is rounded once: a relative error ≤ u·|sum| of e^{log_scale},
        // i.e. ≤ 2u·|sum|·(s1·s2) on the tilted mass (for u·|sum| ≪ 1)
        let log_scale = a.log_scale + b.log_scale;
        let scale_round = 2.0 * U * libm::fabs(log_scale) * s1 * s2;
        let roundoff =
            (a.roundoff * (s2 + b.roundoff) + b.roundoff * s1) * grow + err + err_c + scale_round;
        let infinity_mass = match a.bound {
            Bound::Pessimistic => ((a.infinity_mass + b.infinity_mass
                - a.infinity_mass * b.infinity_mass)
                * (1.0 + 4.0 * U))
                .min(1.0),
            Bound::Optimistic => 0.0,
        };
        let ratio = cross.as_ref().map_or(TAIL_RATIO, |c| c.2);
        let mut out = Pld {
            interval: a.interval,
            offset: a.offset + b.offset,
            masses,
            tilt: a.tilt,
            log_scale,
            infinity_mass,
            roundoff: roundoff * (1.0 + 1e-12),
            bound: a.bound,
            tail_mass: a.tail_mass,
            tail: cross.map(|(m, o, r, _)| Tail {
                masses: m,
                offset: o,
                ratio: r,
            }),
        };
        // FFT noise in the far tails would widen the support: the tails may also absorb up
        // to the roundoff bound of this product (a valid truncation either way).
        out.trim();
        out.truncate(err + err_c);
        if out.tail.is_some() {
            out.resplit(ratio);
        }
        while out.masses.len() > max_points {
            out.coarsen();
        }
        out.renormalize();
        out
    }

    /// Rescale the stored masses and the roundoff bound by the norm bound S = total +
    /// roundoff of the true (tilted) masses when S has drifted out of [1e-30, 1e30], moving
    /// ln S into the log-scale (exact up to one rounding per mass, charged to the budget).
    /// Without it, a PLD whose tilted mass was truncated away (a tilt far above the useful
    /// range moves the tilted bulk to +∞ and drops the untilted bulk into the budget) would
    /// square its roundoff bound at every product until it underflowed to 0.
    pub(super) fn renormalize(&mut self) {
        let s = self.total() + self.roundoff;
        if !(s.is_finite() && s > 0.0) || (1e-30..=1e30).contains(&s) {
            return;
        }
        let f = 1.0 / s;
        for x in self.masses.iter_mut() {
            *x *= f;
        }
        if let Some(t) = self.tail.as_mut() {
            for x in t.masses.iter_mut() {
                *x *= f;
            }
        }
        let ln_s = libm::log(s);
        self.log_scale += ln_s;
        // the new total is ≤ 1; each scaled mass and f itself are correct to 2u relative; ln s
        // is correct to a few ulps of |ln s| and the sum to one ulp of |log_scale|: a relative
        // error ≤ 4u·(|ln s| + |log_scale|) of e^{log_scale}, on a total ≤ 1
        let scale_round = 8.0 * U * (libm::fabs(ln_s) + libm::fabs(self.log_scale) + 2.0);
        self.roundoff = (self.roundoff * f + 16.0 * U + scale_round) * (1.0 + 1e-12);
    }

    /// Coarsen the finer of two PLDs until both have the same grid spacing.
    pub(super) fn align(a: &mut Pld, b: &mut Pld) {
        while a.interval < b.interval {
            a.coarsen();
        }
        while b.interval < a.interval {
            b.coarsen();
        }
    }

    /// The PLD of `steps`-fold composition, by FFT with exponentiation by squaring; grids
    /// longer than `max_points` (clamped to [64, [`MAX_GRID_POINTS`]]) are coarsened by 2.
    ///
    /// # Formula
    /// ω_T = ω^{∗T} (O(log T) convolutions); the +∞ atom composes as 1 − (1 − p∞)^T; tails
    /// are truncated after each convolution as described in the module docs. Tilting
    /// commutes with convolution, so the tilt of `self` is kept.
    ///
    /// # Citations
    /// Koskela, Jälkö, Honkela 2020, Sec. 4; Meiser, Mohammadi 2018 (privacy buckets).
    ///
    /// # Errors
    /// `steps` = 0; [`Error::Numerical`] if the grid would exceed [`MAX_GRID_POINTS`].
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::pld::{Bound, Direction, Pld, PldConfig};
    /// let c = PldConfig::default();
    /// let p = Pld::subsampled_gaussian(1.0, 3f64.sqrt(), Direction::Add, Bound::Pessimistic, &c)
    ///     .unwrap()
    ///     .compose(3, 1 << 13)
    ///     .unwrap();
    /// assert!((p.delta(1.0) - 0.12694).abs() < 1e-3);
    /// ```
    pub fn compose(&self, steps: u64, max_points: usize) -> Result<Pld> {
        compose_one(
            self.clone(),
            steps,
            max_points,
            false,
            &mut Workspace::default(),
        )
    }
}

// ---- Heterogeneous composition (schedules, crate::accounting::pld_schedule) ----

impl Pld {
    /// The PLD of the composition of two composed PLDs of the same tilt, bound and tail
    /// mass (e.g. two phases of a schedule): the finer grid is coarsened to the coarser
    /// (valid moves), the fine masses convolved, the product formed as one step of
    /// [`compose_many`] (roundoff propagation, +∞ atom, tail truncation, coarsening to
    /// `max_points`).
    ///
    /// # Errors
    /// [`Error::Inconsistent`] if the tilts, bounds or tail masses differ;
    /// [`Error::Numerical`] if the grid would exceed [`MAX_GRID_POINTS`].
    pub(crate) fn convolve(a: &Pld, b: &Pld, max_points: usize) -> Result<Pld> {
        if a.tilt.to_bits() != b.tilt.to_bits()
            || a.bound != b.bound
            || a.tail_mass.to_bits() != b.tail_mass.to_bits()
        {
            return Err(Error::Inconsistent {
                what: "PLDs to convolve differ in tilt, bound or tail mass",
                value: b.tilt,
            });
        }
        let (mut a, mut b) = (a.clone(), b.clone());
        a.fold_tail();
        b.fold_tail();
        Pld::align(&mut a, &mut b);
        let mut ws = Workspace::default();
        let ((m, e), _) = ws.products(&a.masses, &b.masses, fft::Products::Ab)?;
        let mut out = Pld::product(&a, &b, m, e, max_points.clamp(64, MAX_GRID_POINTS), None);
        out.fold_tail();
        Ok(out)
    }
}

// ---- end of heterogeneous composition ----

pub(super) fn check_len(len: usize) -> Result<()> {
    if len > MAX_GRID_POINTS {
        return numerical("composed PLD grid would exceed MAX_GRID_POINTS", len as f64);
    }
    Ok(())
}

/// Reusable FFT plans and work buffers of one composition.
#[derive(Default)]
pub(crate) struct Workspace {
    split: Option<fft::SplitFft>,
    half: Option<fft::Fft>,
    work: (Vec<f64>, Vec<f64>),
}

impl Workspace {
    pub(super) fn split(&mut self, len: usize) -> Result<&fft::SplitFft> {
        check_len(len)?;
        let n = len.next_power_of_two().max(2);
        if self.split.as_ref().is_none_or(|p| p.max_len() < n) {
            self.split = Some(fft::SplitFft::new(n));
        }
        self.split.as_ref().ok_or(Error::Numerical {
            what: "FFT plan",
            value: n as f64,
        })
    }

    pub(super) fn half(&mut self, len: usize) -> Result<Option<&fft::Fft>> {
        check_len(len)?;
        let n = len.next_power_of_two().max(2);
        if self.half.as_ref().is_none_or(|p| p.max_len() < n) {
            self.half = Some(fft::Fft::new(n));
        }
        Ok(self.half.as_ref())
    }

    /// (a ∗ b, b ∗ b) or (a ∗ a, b ∗ b) or (a ∗ b, —) from one packed transform pair.
    pub(super) fn products(
        &mut self,
        a: &[f64],
        b: &[f64],
        which: fft::Products,
    ) -> Result<(Conv, Conv)> {
        let len = match which {
            fft::Products::AaBb => 2 * a.len().max(b.len()),
            fft::Products::AbBb => (a.len() + b.len()).max(2 * b.len()),
            fft::Products::Ab => a.len() + b.len(),
        };
        self.split(len)?;
        let Workspace { split, work, .. } = self;
        match split.as_ref() {
            Some(plan) => Ok(fft::packed_products(a, b, which, plan, work)),
            None => numerical("FFT plan", len as f64),
        }
    }

    pub(super) fn square(&mut self, a: &[f64]) -> Result<(Vec<f64>, f64)> {
        let plan = self.half(2 * a.len())?;
        Ok(fft::self_convolve(a, plan))
    }
}

/// Grid-size cap at squaring level `level` (the PLD of 2^level steps) out of `top`:
/// `max_points`·2^{(top − level)/3}. The discretisation error of coarsening at level k is
/// multiplied by the T/2^k copies composed after it, so early levels keep finer grids;
/// minimising Σ_k Δ_k²·2^{−k} at a fixed total length Σ_k range/Δ_k gives Δ_k ∝ 2^{k/3}.
pub(super) fn level_cap(max_points: usize, level: u32, top: u32) -> usize {
    let f = libm::exp2((top.saturating_sub(level)) as f64 / 3.0);
    ((max_points as f64 * f) as usize).clamp(64, MAX_GRID_POINTS)
}

/// `steps`-fold composition of one or two PLDs (composed in lockstep so that their
/// transforms can be packed pairwise), by exponentiation by squaring.
/// The most steps a PLD composition composes (2^48): beyond, the grid's offsets could overflow.
pub const MAX_COMPOSED_STEPS: u64 = 1 << 48;

pub(crate) fn compose_many(
    bases: Vec<Pld>,
    steps: u64,
    max_points: usize,
    split: bool,
    ws: &mut Workspace,
) -> Result<Vec<Pld>> {
    let steps = check_steps(steps)?;
    if steps > MAX_COMPOSED_STEPS {
        // the grid's offsets (i64) add at every doubling: beyond 2^48 steps they could
        // overflow; no DP-SGD run has that many steps
        return Err(Error::InvalidCount {
            name: "steps",
            value: steps,
            expected: "<= 2^48 for a PLD composition",
        });
    }
    let max_points = max_points.clamp(64, MAX_GRID_POINTS);
    let top = 63 - steps.leading_zeros();
    let cap = |level: u32| level_cap(max_points, level, top);
    let mut b = bases;
    if steps == 1 {
        return Ok(b);
    }
    for x in b.iter_mut() {
        while x.masses.len() > PRE * cap(0) {
            x.coarsen();
        }
        if split {
            x.resplit(TAIL_RATIO);
        }
    }
    let n = b.len();
    let mut result: Vec<Option<Pld>> = alloc::vec![None; n];
    let mut k = steps;
    let mut level = 0u32;
    loop {
        let bit = k & 1 == 1;
        k >>= 1;
        let last = k == 0;
        let cap_r = cap(level);
        let cap_b = cap(level + 1);
        // squares still needed this round, by chain index
        let mut squares: Vec<usize> = Vec::new();
        let mut new_b: Vec<Option<Pld>> = alloc::vec![None; n];
        for i in 0..n {
            let bi = match b.get(i) {
                Some(x) => x,
                None => continue,
            };
            let need_square = !last;
            let slot = match result.get_mut(i) {
                Some(s) => s,
                None => continue,
            };
            if !bit {
                if need_square {
                    squares.push(i);
                }
                continue;
            }
            match slot.take() {
                None => {
                    *slot = Some(bi.clone());
                    if need_square {
                        squares.push(i);
                    }
                }
                Some(mut r) => {
                    let mut bc = bi.clone();
                    Pld::align(&mut r, &mut bc);
                    if need_square && bc.interval == bi.interval {
                        let ((m, e), (s2, e2)) =
                            ws.products(&r.masses, &bi.masses, fft::Products::AbBb)?;
                        let c1 = Pld::cross_terms(&r, bi, ws)?;
                        let c2 = Pld::cross_terms(bi, bi, ws)?;
                        *slot = Some(Pld::product(&r, bi, m, e, cap_r, c1));
                        if let Some(x) = new_b.get_mut(i) {
                            *x = Some(Pld::product(bi, bi, s2, e2, cap_b, c2));
                        }
                    } else {
                        let ((m, e), _) = ws.products(&r.masses, &bc.masses, fft::Products::Ab)?;
                        let c1 = Pld::cross_terms(&r, &bc, ws)?;
                        *slot = Some(Pld::product(&r, &bc, m, e, cap_r, c1));
                        if need_square {
                            squares.push(i);
                        }
                    }
                }
            }
        }
        // remaining squarings: two at a time in one packed transform, a lone one by the
        // half-length real transform
        let mut it = squares.chunks(2);
        for ch in it.by_ref() {
            match *ch {
                [i, j] => {
                    if let (Some(x), Some(y)) = (b.get(i), b.get(j)) {
                        let ((s1, e1), (s2, e2)) =
                            ws.products(&x.masses, &y.masses, fft::Products::AaBb)?;
                        let c1 = Pld::cross_terms(x, x, ws)?;
                        let c2 = Pld::cross_terms(y, y, ws)?;
                        let p1 = Pld::product(x, x, s1, e1, cap_b, c1);
                        let p2 = Pld::product(y, y, s2, e2, cap_b, c2);
                        if let Some(z) = new_b.get_mut(i) {
                            *z = Some(p1);
                        }
                        if let Some(z) = new_b.get_mut(j) {
                            *z = Some(p2);
                        }
                    }
                }
                [i] => {
                    if let Some(x) = b.get(i) {
                        let (s1, e1) = ws.square(&x.masses)?;
                        let c1 = Pld::cross_terms(x, x, ws)?;
                        let p1 = Pld::product(x, x, s1, e1, cap_b, c1);
                        if let Some(z) = new_b.get_mut(i) {
                            *z = Some(p1);
                        }
                    }
                }
                _ => {}
            }
        }
        if last {
            break;
        }
        for (x, nb) in b.iter_mut().zip(new_b) {
            if let Some(v) = nb {
                *x = v;
            }
        }
        level += 1;
    }
    let mut out = Vec::with_capacity(n);
    for r in result {
        let mut r = r.ok_or(Error::Numerical {
            what: "PLD composition produced nothing",
            value: steps as f64,
        })?;
        r.fold_tail();
        out.push(r);
    }
    Ok(out)
}

/// `steps`-fold composition of one PLD.
pub(crate) fn compose_one(
    base: Pld,
    steps: u64,
    max_points: usize,
    split: bool,
    ws: &mut Workspace,
) -> Result<Pld> {
    compose_many(alloc::vec![base], steps, max_points, split, ws)?
        .pop()
        .ok_or(Error::Numerical {
            what: "PLD composition produced nothing",
            value: steps as f64,
        })
}

/// The fine/coarse split of the upper tail is used only with an automatic tilt λ > 0: it
/// relies on the tilted mass locating the δ-relevant region (a forced or zero tilt keeps
/// the whole PLD on the fine grid).
pub(crate) fn use_split(forced: Option<f64>, tilt: f64) -> bool {
    forced.is_none() && tilt > 0.0
}

pub(super) fn directions(q: f64) -> &'static [Direction] {
    if q >= 1.0 {
        &[Direction::Add]
    } else {
        &[Direction::Add, Direction::Remove]
    }
}
