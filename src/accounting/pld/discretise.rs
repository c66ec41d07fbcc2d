//! Discretisation of one step: the optimistic grid-aligned merge and the pessimistic
//! connect-the-dots placement of the bins (module docs of [`super`]), the tilt weight c(λ),
//! and the one-step PLDs built from them.

use super::*;

/// Optimistic placement by grid-aligned merging.
///
/// Bin j holds one atom of mass `mass[j]` (in the units of its lower grid point j) whose
/// loss lies in [y_j, y_{j+1}]; `rates(j)` = (positive excess per unit mass at the lower
/// point, magnitude of the negative excess per unit mass at the upper point), i.e.
/// ((M − e^{y_j}N)/M, (e^{y_{j+1}}N − M)/M). Bin j's atom sends `down_j` of its mass to point
/// j and `up_j` to point j+1, merged there with the neighbouring bin's piece so that the
/// merged atom's excess M − e^{y}N is (up to a 1e-12 nudge to the safe side) exactly zero.
/// Two chains run towards the heaviest bin (from the bottom upwards, from the top
/// downwards), so that in a unimodal distribution every piece finds a partner; pieces
/// without one are rounded down (merging and rounding down are post-processing: the result
/// is dominated). Masses are in tilted units: a unit of bin j is e^{λ y_j}·(untilted), so a
/// piece moving to the upper point j+1 is multiplied by `g` = e^{λ(y_{j+1} − y_j)}; `g` = 1
/// for untilted masses. The merge is linear in the masses, so it commutes with tilting.
pub(super) fn merge_to_grid<F: Fn(usize) -> (f64, f64)>(
    mass: &[f64],
    rates: F,
    g: f64,
    out: &mut [f64],
) {
    let nb = mass.len();
    let m = mass
        .iter()
        .enumerate()
        .fold(
            (0usize, -1.0f64),
            |acc, (j, &b)| if b > acc.1 { (j, b) } else { acc },
        )
        .0;
    let mass_of = |j: usize| mass.get(j).copied().unwrap_or(0.0);
    let mut add = |k: usize, v: f64| {
        if let Some(x) = out.get_mut(k) {
            *x += v;
        }
    };
    // lower chain: bins 0..m; `prev_up` (units of bin j−1) is the previous bin's up-piece
    let (mut prev_up, mut prev_rate) = (0.0f64, 0.0f64);
    let mut d_req = 0.0;
    for j in 0..=m {
        let mj = mass_of(j);
        let (pr, nr) = if mj > 0.0 { rates(j) } else { (0.0, 0.0) };
        let up_here = prev_up * g; // the same piece in units of bin j
        let need = up_here * prev_rate;
        if mj <= 0.0 || (pr <= 0.0 && need > 0.0) {
            // nothing to merge with: previous up-piece rounds down to point j−1
            if j > 0 {
                add(j - 1, prev_up);
            }
            prev_up = 0.0;
            if j == m {
                d_req = 0.0;
                break;
            }
            add(j, mj); // an atom with zero positive excess sits on point j
            prev_rate = 0.0;
            continue;
        }
        let want = if need > 0.0 {
            need / pr * (1.0 + 1e-12)
        } else {
            0.0
        };
        if j == m {
            d_req = want;
            break;
        }
        if want <= mj {
            add(j, up_here + want);
            prev_up = mj - want;
        } else {
            let frac = (mj * pr / need * (1.0 - 1e-12)).clamp(0.0, 1.0);
            add(j, frac * up_here + mj);
            if j > 0 {
                add(j - 1, (1.0 - frac) * prev_up);
            }
            prev_up = 0.0;
        }
        prev_rate = nr;
    }
    // upper chain: bins nb−1 down to m+1; `next_down` (units of bin j+1) is the next bin's
    // down-piece
    let (mut next_down, mut next_rate) = (0.0f64, 0.0f64);
    let mut u_req = 0.0;
    for j in (m..nb).rev() {
        let mj = mass_of(j);
        let (pr, nr) = if mj > 0.0 { rates(j) } else { (0.0, 0.0) };
        let need = next_down / g * next_rate;
        if mj <= 0.0 || (nr <= 0.0 && need > 0.0) {
            add(j + 1, next_down); // down-pieces above point j+1 round down to it
            next_down = 0.0;
            next_rate = 0.0;
            if j == m {
                u_req = 0.0;
                break;
            }
            add(j + 1, mj * g); // zero negative excess: the atom sits on point j+1
            continue;
        }
        let want = if need > 0.0 {
            need / nr * (1.0 - 1e-12)
        } else {
            0.0
        };
        if j == m {
            u_req = want;
            break;
        }
        if want <= mj {
            add(j + 1, next_down + want * g);
            next_down = mj - want;
        } else {
            // all of bin j goes up; the unmatched down-pieces round down to point j+1 too
            add(j + 1, next_down + mj * g);
            next_down = 0.0;
        }
        next_rate = pr;
    }
    // meet at bin m (prev_up in units of bin m−1, next_down in units of bin m+1)
    let mm = mass_of(m);
    if mm > 0.0 {
        if d_req + u_req <= mm {
            add(m, prev_up * g + d_req + (mm - d_req - u_req));
            add(m + 1, next_down + u_req * g);
        } else {
            let sc = mm / (d_req + u_req) * (1.0 - 1e-12);
            add(m, sc * prev_up * g + sc * d_req);
            if m > 0 {
                add(m - 1, (1.0 - sc) * prev_up);
            }
            add(m + 1, next_down + sc * u_req * g);
            add(m, mm - sc * (d_req + u_req));
        }
    } else {
        if m > 0 {
            add(m - 1, prev_up);
        }
        add(m + 1, next_down);
    }
}

/// One step's bin (μ-mass M, scaled ν-mass N e^{y}, downward-split nudge, error of M).
#[derive(Clone, Copy)]
pub(super) struct Bin {
    m: f64,
    ns: f64,
    nudge: f64,
}

/// Untilted grid masses (points 0..=bins.len()) from the bins of width `d`.
///
/// Pessimistic: connect-the-dots split, mass (N e^{y} − e^{−d}M)/(1 − e^{−d}) to the lower
/// point minus a nudge covering the roundoff of that expression (so the computed lower share
/// never exceeds the exact one: the rest is moved up, which only raises δ). Optimistic:
/// [`merge_to_grid`]. A bin with N = 0 (loss +∞ or unknown) is treated as loss at its upper
/// edge in the pessimistic case and at its lower edge in the optimistic case.
pub(super) fn place(bins: &[Bin], d: f64, bound: Bound) -> Vec<f64> {
    let mut masses = alloc::vec![0.0f64; bins.len() + 1];
    let one_minus_e = -libm::expm1(-d);
    let e_minus = libm::exp(-d);
    let e_plus = libm::exp(d);
    match bound {
        Bound::Pessimistic => {
            for (j, b) in bins.iter().enumerate() {
                if b.m <= 0.0 {
                    continue;
                }
                let low = (b.ns - e_minus * b.m) / one_minus_e
                    - 16.0 * U * b.m * (1.0 + 1.0 / one_minus_e)
                    - b.nudge;
                let low = if b.ns > 0.0 { low.clamp(0.0, b.m) } else { 0.0 };
                if let Some(x) = masses.get_mut(j) {
                    *x += low;
                }
                if let Some(x) = masses.get_mut(j + 1) {
                    *x += b.m - low;
                }
            }
        }
        Bound::Optimistic => {
            let mass: Vec<f64> = bins.iter().map(|b| b.m).collect();
            let rates = |j: usize| -> (f64, f64) {
                let b = bins.get(j).copied().unwrap_or(Bin {
                    m: 0.0,
                    ns: 0.0,
                    nudge: 0.0,
                });
                if b.m <= 0.0 || b.ns <= 0.0 {
                    return (0.0, 0.0);
                }
                (
                    ((b.m - b.ns) / b.m).max(0.0),
                    ((e_plus * b.ns - b.m) / b.m).max(0.0),
                )
            };
            merge_to_grid(&mass, rates, 1.0, &mut masses);
        }
    }
    masses
}

/// c(λ) = sup_{u ≥ 0} e^{−λu}(1 − e^{−u}) = λ^λ/(1+λ)^{1+λ} (1 for λ = 0), rounded up:
/// for ℓ > ε, e^{−λℓ}(1 − e^{ε−ℓ}) ≤ c(λ)·e^{−λε}.
pub(super) fn tilt_weight(lambda: f64) -> f64 {
    if lambda <= 0.0 {
        return 1.0;
    }
    // λ ln λ − (1+λ) ln(1+λ) = −λ ln(1 + 1/λ) − ln(1+λ), without the cancellation of the
    // first form at large λ (which lost up to 2e-10 relative at λ ≈ 1e5)
    let v = -lambda * libm::log1p(1.0 / lambda) - libm::log1p(lambda);
    libm::exp(v + 1e-12 * (1.0 + libm::fabs(v)))
}

impl Pld {
    /// The discretised PLD of one step of the Poisson-subsampled Gaussian mechanism.
    ///
    /// # Formula
    /// See the module docs: bins [iΔ, (i+1)Δ) of the loss L (or −L), masses by differences
    /// of Φ at x = L⁻¹(iΔ) = ½ + σ² ln((e^{iΔ} − 1 + q)/q); pessimistic by connect-the-dots
    /// splitting, optimistic by grid-aligned merging. Stored tilted by `config.tilt`
    /// (0 if `None`).
    ///
    /// # Citations
    /// Koskela, Jälkö, Honkela 2020 (PLD + FFT); Doroshenko et al. 2022 (connect the dots);
    /// Mironov, Talwar, Zhang 2019 (the subsampled Gaussian pair).
    ///
    /// # Errors
    /// `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0, bad config fields;
    /// [`Error::Numerical`] if the loss range needs more than [`MAX_GRID_POINTS`] points.
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::pld::{Bound, Direction, Pld, PldConfig};
    /// let c = PldConfig::default();
    /// let up = Pld::subsampled_gaussian(1.0, 1.0, Direction::Add, Bound::Pessimistic, &c).unwrap();
    /// let lo = Pld::subsampled_gaussian(1.0, 1.0, Direction::Add, Bound::Optimistic, &c).unwrap();
    /// // exact: δ(1) = Φ(−0.5) − e Φ(−1.5)
    /// use reconbound::math::normal::cdf;
    /// let exact = cdf(-0.5) - 1f64.exp() * cdf(-1.5);
    /// assert!(lo.delta(1.0) <= exact && exact <= up.delta(1.0));
    /// assert!(up.delta(1.0) - lo.delta(1.0) < 1e-6);
    /// ```
    pub fn subsampled_gaussian(
        sampling_rate: f64,
        noise_multiplier: f64,
        direction: Direction,
        bound: Bound,
        config: &PldConfig,
    ) -> Result<Pld> {
        let (_, _, tilt) = config.validate()?;
        let (up, lo) = Self::subsampled_gaussian_pair(
            sampling_rate,
            noise_multiplier,
            direction,
            config,
            tilt.unwrap_or(0.0),
            false,
        )?;
        Ok(match bound {
            Bound::Pessimistic => up,
            Bound::Optimistic => lo,
        })
    }

    /// Both discretisations (pessimistic, optimistic) of one step, sharing the Φ evaluations,
    /// tilted by `tilt` ≥ 0.
    pub(crate) fn subsampled_gaussian_pair(
        sampling_rate: f64,
        noise_multiplier: f64,
        direction: Direction,
        config: &PldConfig,
        tilt: f64,
        split: bool,
    ) -> Result<(Pld, Pld)> {
        let (up, lo) = Self::subsampled_gaussian_bounds(
            sampling_rate,
            noise_multiplier,
            direction,
            config,
            tilt,
            split,
            true,
        )?;
        match lo {
            Some(lo) => Ok((up, lo)),
            None => numerical("PLD one-step construction produced nothing", sampling_rate),
        }
    }

    /// [`Pld::subsampled_gaussian_pair`], the optimistic PLD only if `optimistic` (the same
    /// bits either way: the pessimistic PLD does not depend on it).
    pub(crate) fn subsampled_gaussian_bounds(
        sampling_rate: f64,
        noise_multiplier: f64,
        direction: Direction,
        config: &PldConfig,
        tilt: f64,
        split: bool,
        optimistic: bool,
    ) -> Result<(Pld, Option<Pld>)> {
        let q = check_unit_rate("sampling_rate", sampling_rate)?;
        let sigma = check_positive("noise_multiplier", noise_multiplier)?;
        let (delta_grid, tail, _) = config.validate()?;
        // x-range holding all but tail/4 of each measure on each side.
        let z = -normal::quantile(tail / 4.0)?;
        let (x_lo, x_hi) = (-sigma * z, 1.0 + sigma * z);
        let (l_lo, l_hi) = match direction {
            Direction::Add => (step_loss(x_lo, q, sigma), step_loss(x_hi, q, sigma)),
            Direction::Remove => {
                let (a, b) = (-sigma * z, sigma * z);
                (-step_loss(b, q, sigma), -step_loss(a, q, sigma))
            }
        };
        if !(l_lo.is_finite() && l_hi.is_finite()) {
            return numerical(
                "PLD loss range is not finite",
                if l_lo.is_finite() { l_hi } else { l_lo },
            );
        }
        let i_lo_f = libm::floor(l_lo / delta_grid);
        let i_hi_f = libm::ceil(l_hi / delta_grid);
        let points = i_hi_f - i_lo_f + 1.0;
        if !(points.is_finite() && points <= MAX_GRID_POINTS as f64)
            || i_lo_f.abs() > 1e15
            || i_hi_f.abs() > 1e15
        {
            return numerical("PLD grid would exceed MAX_GRID_POINTS", points);
        }
        let i_hi = i_hi_f as i64;
        let mut i_lo = i_lo_f as i64;
        let edge = |i: i64| edge_tails(i as f64 * delta_grid, q, sigma, direction);
        // Inside a composition with tilt λ > 0, the lower tail of tilted mass ≤ tail/4
        // (bounded by P[ℓ ≤ y]·e^{λy}, as the tilted total M(λ) ≥ 1 by Jensen) is dropped
        // and charged to the error budget instead of being moved up.
        let tilt_cut = split && tilt > 0.0;
        if tilt_cut {
            let ok = |i: i64| edge(i)[0] * libm::exp(tilt * i as f64 * delta_grid) <= tail / 4.0;
            let (mut lo, mut hi) = (i_lo, i_hi.min(0));
            if lo < hi && ok(hi) {
                lo = hi;
            } else {
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if ok(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
            }
            if ok(lo) {
                i_lo = lo;
            }
        }
        // Inside a composition the far upper tail (tilted mass ≲ SPLIT_MASS) is discretised
        // directly on the coarse tail lattice (bins of TAIL_RATIO·Δ): the split point is
        // only a heuristic (any split is valid).
        let r = TAIL_RATIO;
        let split_at = |lam: f64| {
            let small = |k: i64| {
                let y = (k * r) as f64 * delta_grid;
                edge(k * r)[1] * libm::exp(lam * y) * 10.0 <= SPLIT_MASS
            };
            let (mut lo, mut hi) = (i_lo.div_euclid(r) + 1, (i_hi + r - 1).div_euclid(r));
            if lo >= hi || !small(hi) {
                i_hi
            } else {
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if small(mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                (hi * r).min(i_hi)
            }
        };
        let i_split = if split {
            let s = split_at(tilt);
            // at most FINE_MAX fine points, unless the untilted bulk needs more
            let cap = (i_lo + FINE_MAX as i64).div_euclid(r) * r;
            if s > cap {
                cap.max(split_at(0.0))
            } else {
                s
            }
        } else {
            i_hi
        };
        // edge indices: fine up to i_split, then every r-th up to ≥ i_hi
        let mut idx: Vec<i64> = (i_lo..=i_split).collect();
        let mut k = i_split;
        while k < i_hi {
            k += r;
            idx.push(k);
        }
        let i_top = idx.last().copied().unwrap_or(i_lo);
        if i_top - i_lo + 1 > MAX_GRID_POINTS as i64 {
            return numerical(
                "PLD grid would exceed MAX_GRID_POINTS",
                (i_top - i_lo) as f64,
            );
        }
        let n_pts = (i_top - i_lo + 1) as usize;
        let edges: Vec<[f64; 4]> = idx.iter().map(|&i| edge(i)).collect();
        let first = edges.first().copied().unwrap_or([0.0, 1.0, 0.0, 1.0]);
        let last = edges.last().copied().unwrap_or([1.0, 0.0, 1.0, 0.0]);
        let below = first[0];
        let above = last[1];
        // Bins [y_j, y_{j+1}): μ-mass M_j and scaled ν-mass N_j e^{y_j} ∈ [M_j e^{−w}, M_j]
        // (w the bin width); fine and coarse bins are placed separately.
        // err[i]: bound on the error of the μ-mass placed at point i
        let mut err = alloc::vec![0.0f64; n_pts];
        if let Some(e) = err.first_mut() {
            *e = PHI_REL * below;
        }
        let mut up_masses = alloc::vec![0.0f64; n_pts];
        let mut lo_masses = alloc::vec![0.0f64; n_pts];
        let mut start = 0usize;
        while start + 1 < idx.len() {
            let step = idx[start + 1] - idx[start];
            let mut end = start + 1;
            while end + 1 < idx.len() && idx[end + 1] - idx[end] == step {
                end += 1;
            }
            let width = step as f64 * delta_grid;
            let one_minus_e = -libm::expm1(-width);
            let e_minus = libm::exp(-width);
            let mut bins: Vec<Bin> = Vec::with_capacity(end - start);
            for j in start..end {
                let (a, b) = (edges[j], edges[j + 1]);
                let (m, em) = bin_mass(a[0], a[1], b[0], b[1]);
                let (n, en) = bin_mass(a[2], a[3], b[2], b[3]);
                let y = idx[j] as f64 * delta_grid;
                let (n_scaled, ens) = if n > 0.0 && m > 0.0 {
                    let s = libm::exp(libm::log(n) + y);
                    let e = s * (en / n + 8.0 * U * (1.0 + libm::fabs(y)));
                    (s.clamp(m * e_minus, m), e)
                } else {
                    (0.0, 0.0)
                };
                bins.push(Bin {
                    m,
                    ns: n_scaled,
                    nudge: (ens + em) / one_minus_e,
                });
                if let Some(e) = err.get_mut((idx[j + 1] - i_lo) as usize) {
                    *e += em;
                }
            }
            let up = place(&bins, width, Bound::Pessimistic);
            for (t, &u) in up.iter().enumerate() {
                let g = (idx[start] - i_lo) as usize + t * step as usize;
                if let Some(x) = up_masses.get_mut(g) {
                    *x += u;
                }
            }
            if optimistic {
                let lo = place(&bins, width, Bound::Optimistic);
                for (t, &l) in lo.iter().enumerate() {
                    let g = (idx[start] - i_lo) as usize + t * step as usize;
                    if let Some(y) = lo_masses.get_mut(g) {
                        *y += l;
                    }
                }
            }
            start = end;
        }
        if tilt_cut {
            // dropped (both bounds); the pessimistic PLD charges it to its budget at the
            // lowest point, whose tilt weight is the largest over the dropped range
            if let Some(e) = err.first_mut() {
                *e += below * (1.0 + PHI_REL);
            }
        } else if let Some(f) = up_masses.first_mut() {
            *f += below;
        }
        let up = Pld::from_untilted(
            &up_masses,
            &err,
            i_lo,
            delta_grid,
            tilt,
            above * (1.0 + PHI_REL),
            Bound::Pessimistic,
            tail,
        );
        let lo = optimistic.then(|| {
            Pld::from_untilted(
                &lo_masses,
                &err,
                i_lo,
                delta_grid,
                tilt,
                0.0,
                Bound::Optimistic,
                tail,
            )
        });
        Ok((up, lo))
    }

    /// A PLD from untilted masses at (offset + i)·Δ with per-point absolute error bounds:
    /// stored tilted by `tilt` and normalised to total 1.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn from_untilted(
        untilted: &[f64],
        err: &[f64],
        offset: i64,
        interval: f64,
        tilt: f64,
        infinity_mass: f64,
        bound: Bound,
        tail_mass: f64,
    ) -> Pld {
        let n = untilted.len();
        let loss = |i: usize| (offset + i as i64) as f64 * interval;
        // reference: the largest exponent λℓ, so that every factor is ≤ 1 (no overflow)
        let c0 = tilt * loss(n.saturating_sub(1));
        let mut masses = Vec::with_capacity(n);
        let mut e_sum = 0.0;
        let mut max_arg: f64 = 0.0;
        for (i, (&p, &e)) in untilted
            .iter()
            .zip(err.iter().chain(core::iter::repeat(&0.0)))
            .enumerate()
        {
            let arg = tilt * loss(i) - c0;
            max_arg = max_arg.max(libm::fabs(tilt * loss(i)));
            let f = if tilt == 0.0 || (p == 0.0 && e == 0.0) {
                1.0
            } else {
                libm::exp(arg)
            };
            masses.push(p * f);
            e_sum += e * f;
        }
        let s: f64 = masses.iter().sum();
        let (scale, log_scale) = if s > 0.0 && s.is_finite() {
            (1.0 / s, c0 + libm::log(s))
        } else {
            (1.0, c0)
        };
        for x in masses.iter_mut() {
            *x *= scale;
        }
        // roundoff (tilted units): the Φ errors, the per-step slack, the tilting roundings
        // (each factor e^{λℓ − c0} is correct to (|λℓ| + |c0| + 4)·u relative), and masses
        // flushed to zero by underflow
        let tilt_round = (2.0 * max_arg + 8.0) * U * 2.0;
        let roundoff =
            (e_sum * scale + STEP_SLACK + tilt_round + n as f64 * f64::MIN_POSITIVE * scale)
                * (1.0 + 1e-12);
        let mut out = Pld {
            interval,
            offset,
            masses,
            tilt,
            log_scale,
            infinity_mass,
            roundoff,
            bound,
            tail_mass,
            tail: None,
        };
        out.trim();
        out
    }
}
