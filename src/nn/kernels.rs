//! The layer kernels: one implementation per layer, generic over the parameter type
//! `W: Weight<S>` and the activation type `S: Scalar`. Per example, no allocation, no
//! indexing that can go out of bounds (slices are taken with `get` or by chunking).
//!
//! Summation orders are fixed and independent of `S`, so the value computed with
//! `S = Dual<N>` is bit-identical to the `f64` computation and lanes never interact.

use super::Weight;
use crate::autodiff::Scalar;

/// Σ_i w_i·x_i with 8 interleaved accumulators (lane r sums the indices ≡ r mod 8, in order),
/// combined as ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). Fixed order for every `S`.
#[inline(always)]
pub(crate) fn dot<W: Weight<S>, S: Scalar>(w: &[W], x: &[S]) -> S {
    let mut acc = [S::zero(); 8];
    let wc = w.chunks_exact(8);
    let xc = x.chunks_exact(8);
    let (wr, xr) = (wc.remainder(), xc.remainder());
    for (a, b) in wc.zip(xc) {
        for ((s, &wv), &xv) in acc.iter_mut().zip(a).zip(b) {
            *s += wv.times(xv);
        }
    }
    for ((s, &wv), &xv) in acc.iter_mut().zip(wr).zip(xr) {
        *s += wv.times(xv);
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

/// Dense forward: y_o = b_o + Σ_i W[o, i]·x_i.
pub(crate) fn dense_forward<W: Weight<S>, S: Scalar>(w: &[W], b: &[W], x: &[S], y: &mut [S]) {
    let n = x.len();
    if n == 0 {
        return;
    }
    for ((yo, row), &bo) in y.iter_mut().zip(w.chunks_exact(n)).zip(b) {
        *yo = dot(row, x) + bo.to_scalar();
    }
}

/// Dense backward: ∇W[o, i] = δ_o·x_i, ∇b_o = δ_o, and if wanted δx_i = Σ_o W[o, i]·δ_o.
/// The input `x` has type `X` (`S`, or `f64` when its tangents are handled separately).
pub(crate) fn dense_backward<W: Weight<S>, X: Weight<S>, S: Scalar>(
    w: &[W],
    x: &[X],
    dy: &[S],
    gw: &mut [S],
    gb: &mut [S],
    dx: Option<&mut [S]>,
) {
    let n = x.len();
    if n == 0 {
        return;
    }
    for ((grow, &d), g) in gw.chunks_exact_mut(n).zip(dy).zip(gb.iter_mut()) {
        *g = d;
        for (gv, &xv) in grow.iter_mut().zip(x) {
            *gv = xv.times(d);
        }
    }
    if let Some(dx) = dx {
        dx.fill(S::zero());
        for (row, &d) in w.chunks_exact(n).zip(dy) {
            for (o, &wv) in dx.iter_mut().zip(row) {
                *o += wv.times(d);
            }
        }
    }
}

/// Geometry of a 2-D convolution or pooling window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geom {
    /// Input channels, height, width.
    pub c: usize,
    pub h: usize,
    pub w: usize,
    /// Output height and width.
    pub ho: usize,
    pub wo: usize,
    /// Kernel, stride, padding.
    pub k: usize,
    pub s: usize,
    pub p: usize,
}

/// The convolution runs on a zero-padded, polyphase copy of the input (no im2col): for stride
/// s the padded input xp (size (H + 2p) × (W + 2p)) is split into s² phase planes
/// P[c][ra][rb][u][v] = xp[c, s·u + ra, s·v + rb] of size hq × wq (hq = ⌈(H + 2p)/s⌉), so
/// x[c, s·i + a − p, s·j + b − p] = P[c][a mod s][b mod s][i + ⌊a/s⌋][j + ⌊b/s⌋]. With the
/// output kept "wide" (row stride wq instead of wo), every kernel tap (c, a, b) is then one
/// contiguous axpy (forward, input gradient) or dot product (weight gradient) of length
/// (ho − 1)·wq + wo over a plane: long, unit-stride inner loops that vectorise. The wide
/// columns j ≥ wo are scratch: ignored in the forward pass, zero in the backward pass.
impl Geom {
    /// Phase-plane height and width.
    #[inline]
    fn hq(&self) -> usize {
        (self.h + 2 * self.p).div_ceil(self.s)
    }
    #[inline]
    fn wq(&self) -> usize {
        (self.w + 2 * self.p).div_ceil(self.s)
    }
    /// Elements of one phase plane.
    #[inline]
    fn plane(&self) -> usize {
        self.hq() * self.wq()
    }
    /// Length of the padded polyphase buffer.
    pub(crate) fn pad_len(&self) -> usize {
        self.c * self.s * self.s * self.plane()
    }
    /// [`Geom::pad_len`] and [`Geom::wide_len`], or `None` if a size overflows `usize`
    /// (checked once, when the model is built; the unchecked versions are then exact).
    pub(crate) fn checked_scratch(&self) -> Option<(usize, usize)> {
        let hp = self.h.checked_add(self.p.checked_mul(2)?)?;
        let wp = self.w.checked_add(self.p.checked_mul(2)?)?;
        let plane = hp.div_ceil(self.s).checked_mul(wp.div_ceil(self.s))?;
        let pad = self
            .c
            .checked_mul(self.s.checked_mul(self.s)?)?
            .checked_mul(plane)?;
        let wide = self
            .ho
            .saturating_sub(1)
            .checked_mul(wp.div_ceil(self.s))?
            .checked_add(self.wo)?;
        Some((pad, wide))
    }

    /// Distance between channels in the padded buffer.
    #[inline]
    pub(crate) fn channel_stride(&self) -> usize {
        self.s * self.s * self.plane()
    }
    /// Length of the wide output range, (ho − 1)·wq + wo.
    pub(crate) fn wide_len(&self) -> usize {
        (self.ho.saturating_sub(1)) * self.wq() + self.wo
    }
    /// Offset of tap (c, a, b) in the padded buffer (model construction precomputes the
    /// offsets of (0, a, b); channel c adds c·[`Geom::channel_stride`]).
    #[inline(always)]
    pub(crate) fn tap(&self, c: usize, a: usize, b: usize) -> usize {
        let s = self.s;
        ((c * s + a % s) * s + b % s) * self.plane() + (a / s) * self.wq() + b / s
    }
    /// For input row (c, h) and column phase rb: the first column w0 with (w0 + p) mod s =
    /// rb, the number n of columns w0, w0 + s, … < W, and the padded index of (c, h, w0);
    /// consecutive such columns are contiguous in the padded buffer.
    #[inline]
    fn row_phase(&self, c: usize, h: usize, rb: usize) -> (usize, usize, usize) {
        let (hh, s) = (h + self.p, self.s);
        let w0 = (rb + s - self.p % s) % s;
        let n = if w0 < self.w {
            (self.w - w0).div_ceil(s)
        } else {
            0
        };
        let start =
            ((c * s + hh % s) * s + rb) * self.plane() + (hh / s) * self.wq() + (w0 + self.p) / s;
        (w0, n, start)
    }
}

/// Writes the padded polyphase copy of `x` into `pad` (zeros elsewhere).
fn fill_padded<X: Scalar>(g: &Geom, x: &[X], pad: &mut [X]) {
    pad.fill(X::zero());
    let plane_in = g.h * g.w;
    if plane_in == 0 || g.w == 0 {
        return;
    }
    for (c, x_c) in x.chunks_exact(plane_in).enumerate() {
        for (h, row) in x_c.chunks_exact(g.w).enumerate() {
            for rb in 0..g.s {
                let (w0, n, start) = g.row_phase(c, h, rb);
                if let Some(dst) = pad.get_mut(start..start + n) {
                    for (d, &v) in dst.iter_mut().zip(row.iter().skip(w0).step_by(g.s)) {
                        *d = v;
                    }
                }
            }
        }
    }
}

/// The inverse of [`fill_padded`] on the gradient: δx[c, h, w] = δpad[padded index of (c, h, w)].
fn gather_padded<S: Scalar>(g: &Geom, dpad: &[S], dx: &mut [S]) {
    let plane_in = g.h * g.w;
    if plane_in == 0 || g.w == 0 {
        return;
    }
    for (c, dx_c) in dx.chunks_exact_mut(plane_in).enumerate() {
        for (h, row) in dx_c.chunks_exact_mut(g.w).enumerate() {
            for rb in 0..g.s {
                let (w0, n, start) = g.row_phase(c, h, rb);
                if let Some(src) = dpad.get(start..start + n) {
                    for (v, &d) in row.iter_mut().skip(w0).step_by(g.s).zip(src) {
                        *v = d;
                    }
                }
            }
        }
    }
}

/// Conv2d forward: y[o, i, j] = (Σ_{c, a, b} W[o, c, a, b]·x[c, s·i + a − p, s·j + b − p]) + b[o]
/// (zero padding; taps added in the order (c, a, b), the bias last). `taps[a·k + b]` is the
/// offset of tap (0, a, b) in the padded buffer ([`Geom::tap`]). `pad` (length
/// [`Geom::pad_len`]) and `wide` (length [`Geom::wide_len`]) are scratch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_forward<W: Weight<S>, S: Scalar>(
    g: &Geom,
    taps: &[usize],
    w: &[W],
    bias: &[W],
    x: &[S],
    y: &mut [S],
    pad: &mut [S],
    wide: &mut [S],
) {
    let (plane_out, kk, wq) = (g.ho * g.wo, g.k * g.k, g.wq());
    if plane_out == 0 || kk == 0 || g.c == 0 || g.wo == 0 || taps.len() != kk {
        return;
    }
    let cstride = g.channel_stride();
    fill_padded(g, x, pad);
    let len = wide.len();
    for ((y_o, w_o), &bo) in y
        .chunks_exact_mut(plane_out)
        .zip(w.chunks_exact(g.c * kk))
        .zip(bias)
    {
        wide.fill(S::zero());
        for (c, w_oc) in w_o.chunks_exact(kk).enumerate() {
            let base = c * cstride;
            // Taps q..q+4 (q = a·k + b) in one sweep over `wide`: per element the terms are
            // still added in tap order, so the result equals tap-by-tap accumulation.
            let mut wc = w_oc.chunks_exact(4);
            let mut tc = taps.chunks_exact(4);
            for (w4, t4) in (&mut wc).zip(&mut tc) {
                let (&[w0, w1, w2, w3], &[t0, t1, t2, t3]) = (w4, t4) else {
                    continue;
                };
                let (Some(s0), Some(s1), Some(s2), Some(s3)) = (
                    pad.get(base + t0..base + t0 + len),
                    pad.get(base + t1..base + t1 + len),
                    pad.get(base + t2..base + t2 + len),
                    pad.get(base + t3..base + t3 + len),
                ) else {
                    continue;
                };
                for ((((yv, &x0), &x1), &x2), &x3) in
                    wide.iter_mut().zip(s0).zip(s1).zip(s2).zip(s3)
                {
                    *yv = (((*yv + w0.times(x0)) + w1.times(x1)) + w2.times(x2)) + w3.times(x3);
                }
            }
            for (&wv, &t) in wc.remainder().iter().zip(tc.remainder()) {
                let Some(src) = pad.get(base + t..base + t + len) else {
                    continue;
                };
                for (yv, &xv) in wide.iter_mut().zip(src) {
                    *yv += wv.times(xv);
                }
            }
        }
        let bs: S = bo.to_scalar();
        for (i, y_row) in y_o.chunks_exact_mut(g.wo).enumerate() {
            if let Some(src) = wide.get(i * wq..i * wq + g.wo) {
                for (yv, &v) in y_row.iter_mut().zip(src) {
                    *yv = v + bs;
                }
            }
        }
    }
}

/// Conv2d backward: ∇W[o, c, a, b] = Σ_{i, j} δy[o, i, j]·x[c, s·i + a − p, s·j + b − p],
/// ∇b[o] = Σ_{i, j} δy[o, i, j], and if `dx` is given
/// δx[c, h, w] = Σ W[o, c, a, b]·δy[o, i, j] over the taps that read x[c, h, w].
/// `pad`, `dpad` (length [`Geom::pad_len`]) and `wide` (length [`Geom::wide_len`]) are scratch.
/// The input `x` (and `pad`) has type `X` (`S`, or `f64` when its tangents are handled
/// separately).
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_backward<W: Weight<S>, X: Weight<S> + Scalar, S: Scalar>(
    g: &Geom,
    taps: &[usize],
    w: &[W],
    x: &[X],
    dy: &[S],
    gw: &mut [S],
    gb: &mut [S],
    dx: Option<&mut [S]>,
    pad: &mut [X],
    dpad: &mut [S],
    wide: &mut [S],
) {
    let (plane_out, kk, wq) = (g.ho * g.wo, g.k * g.k, g.wq());
    if plane_out == 0 || kk == 0 || g.c == 0 || g.wo == 0 || taps.len() != kk {
        return;
    }
    let cstride = g.channel_stride();
    fill_padded(g, x, pad);
    let want_dx = dx.is_some();
    if want_dx {
        dpad.fill(S::zero());
    }
    let len = wide.len();
    for (((dy_o, gw_o), gbo), w_o) in dy
        .chunks_exact(plane_out)
        .zip(gw.chunks_exact_mut(g.c * kk))
        .zip(gb.iter_mut())
        .zip(w.chunks_exact(g.c * kk))
    {
        let mut sum = S::zero();
        for &d in dy_o {
            sum += d;
        }
        *gbo = sum;
        // δy in the wide layout, zeros in the scratch columns.
        wide.fill(S::zero());
        for (i, d_row) in dy_o.chunks_exact(g.wo).enumerate() {
            if let Some(dst) = wide.get_mut(i * wq..i * wq + g.wo) {
                dst.copy_from_slice(d_row);
            }
        }
        for (c, (gw_oc, w_oc)) in gw_o
            .chunks_exact_mut(kk)
            .zip(w_o.chunks_exact(kk))
            .enumerate()
        {
            let base = c * cstride;
            for ((gv, &wv), &t) in gw_oc.iter_mut().zip(w_oc).zip(taps) {
                if let Some(src) = pad.get(base + t..base + t + len) {
                    *gv = dot(src, wide);
                }
                if want_dx {
                    if let Some(dst) = dpad.get_mut(base + t..base + t + len) {
                        for (dv, &d) in dst.iter_mut().zip(wide.iter()) {
                            *dv += wv.times(d);
                        }
                    }
                }
            }
        }
    }
    if let Some(dx) = dx {
        gather_padded(g, dpad, dx);
    }
}

/// AvgPool2d forward: y[c, i, j] = (Σ_{a, b < k} x[c, s·i + a, s·j + b])·(1/k²), summed in the
/// order (a, b).
pub(crate) fn pool_forward<S: Scalar>(g: &Geom, x: &[S], y: &mut [S]) {
    let (plane_in, plane_out) = (g.h * g.w, g.ho * g.wo);
    if plane_in == 0 || plane_out == 0 || g.wo == 0 {
        return;
    }
    let inv = 1.0 / (g.k * g.k) as f64;
    for (x_c, y_c) in x.chunks_exact(plane_in).zip(y.chunks_exact_mut(plane_out)) {
        for (i, y_row) in y_c.chunks_exact_mut(g.wo).enumerate() {
            y_row.fill(S::zero());
            for a in 0..g.k {
                let row = i * g.s + a;
                for b in 0..g.k {
                    let Some(x_row) = x_c.get(row * g.w + b..(row + 1) * g.w) else {
                        continue;
                    };
                    for (yv, &xv) in y_row.iter_mut().zip(x_row.iter().step_by(g.s)) {
                        *yv += xv;
                    }
                }
            }
            for yv in y_row.iter_mut() {
                *yv *= inv;
            }
        }
    }
}

/// AvgPool2d backward: δx[c, s·i + a, s·j + b] += δy[c, i, j]·(1/k²).
pub(crate) fn pool_backward<S: Scalar>(g: &Geom, dy: &[S], dx: &mut [S]) {
    let (plane_in, plane_out) = (g.h * g.w, g.ho * g.wo);
    if plane_in == 0 || plane_out == 0 || g.wo == 0 {
        return;
    }
    let inv = 1.0 / (g.k * g.k) as f64;
    dx.fill(S::zero());
    for (dx_c, dy_c) in dx
        .chunks_exact_mut(plane_in)
        .zip(dy.chunks_exact(plane_out))
    {
        for (i, d_row) in dy_c.chunks_exact(g.wo).enumerate() {
            for a in 0..g.k {
                let row = i * g.s + a;
                for b in 0..g.k {
                    let Some(dx_row) = dx_c.get_mut(row * g.w + b..(row + 1) * g.w) else {
                        continue;
                    };
                    for (xv, &d) in dx_row.iter_mut().step_by(g.s).zip(d_row) {
                        *xv += d * inv;
                    }
                }
            }
        }
    }
}
