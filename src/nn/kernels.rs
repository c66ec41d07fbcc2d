//! The layer kernels: one implementation per layer, generic over the parameter type
//! `W: Weight<S>` and the activation type `S: Scalar`. Per example, no allocation, no
//! indexing that can go out of bounds (slices are taken with `get` or by chunking).
//!
//! The dense kernels ([`dot`], [`dense_forward`], [`dense_input_grad`]) accumulate with the
//! fused multiply-add ([`Weight::times_add`], [`Scalar::mul_add`]): correctly rounded on every
//! platform, in hardware when the build targets FMA, a slow software routine otherwise (see
//! `nn::gemm`). The convolution products ([`gemm`] here) still multiply and add separately.
//!
//! Summation orders are fixed and independent of `S`, so the value computed with
//! `S = Dual<N>` is bit-identical to the `f64` computation and lanes never interact. Only
//! register blocking (which entries are computed together, never in which order an entry is
//! summed) depends on the size of `S` and on the target: 4 × 4 `f64` accumulators (8 SSE2
//! registers) or 4 × 8 with AVX ([`VEC_NR`]), 2 × 1 or 1 × 1 `Dual<N>` accumulators.

use super::Weight;
use crate::autodiff::Scalar;

/// Σ_i w_i·x_i with 8 interleaved accumulators (lane r is the fused multiply-add chain
/// a_r ← fma(w_i, x_i, a_r) over the indices i ≡ r mod 8 in increasing order, from 0),
/// combined as ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). Fixed order for every `S`
/// and every vector width (2, 4 or 8 lanes compute the same 8 chains).
#[inline(always)]
pub(crate) fn dot<W: Weight<S>, S: Scalar>(w: &[W], x: &[S]) -> S {
    let mut acc = [S::zero(); 8];
    let wc = w.chunks_exact(8);
    let xc = x.chunks_exact(8);
    let (wr, xr) = (wc.remainder(), xc.remainder());
    for (a, b) in wc.zip(xc) {
        for ((s, &wv), &xv) in acc.iter_mut().zip(a).zip(b) {
            *s = wv.times_add(xv, *s);
        }
    }
    for ((s, &wv), &xv) in acc.iter_mut().zip(wr).zip(xr) {
        *s = wv.times_add(xv, *s);
    }
    crate::autodiff::tree8(acc)
}

/// Dense forward: y_o = (Σ_i W[o, i]·x_i) + b_o, the sum in the order of [`dot`] (8
/// interleaved fma chains, fixed combining tree), then one addition of the bias.
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
        dense_input_grad(w, n, dy, dx);
    }
}

/// The input gradient of a dense layer on `n` inputs (W is `units × n`): δx_i = Σ_o W[o, i]·δ_o,
/// each entry one fused multiply-add chain from 0 in increasing o (δx_i ← fma(W[o, i], δ_o,
/// δx_i)). [`dense_backward`] and the batched pass
/// (`batch.rs`) share it, so both give the same bits.
#[inline(always)]
pub(crate) fn dense_input_grad<W: Weight<S>, S: Scalar>(w: &[W], n: usize, dy: &[S], dx: &mut [S]) {
    dx.fill(S::zero());
    if n == 0 {
        return;
    }
    for (row, &d) in w.chunks_exact(n).zip(dy) {
        for (o, &wv) in dx.iter_mut().zip(row) {
            *o = wv.times_add(d, *o);
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
    /// Output channels (convolution; = `c` for pooling), height and width.
    pub o: usize,
    pub ho: usize,
    pub wo: usize,
    /// Kernel, stride, padding.
    pub k: usize,
    pub s: usize,
    pub p: usize,
}

/// Convolutions are small matrix products on an unrolled ("im2col") copy of the input: with
/// K = C·k² taps (c, a, b) in that order and P = ho·wo output positions,
/// X[(c·k + a)·k + b, i·wo + j] = x[c, s·i + a − p, s·j + b − p] (0 in the padding). Then
/// forward Y = W·X (O × K times K × P, Y is the output in channels-first layout), weight
/// gradient ∇W = δY·Xᵀ (Xᵀ is built directly, P × K) and input gradient δXᵀ = δYᵀ·W followed
/// by a scatter-add back onto the input. Every entry of a product is one accumulator summed
/// over the inner index in increasing order, starting from 0 (see [`gemm`]), whatever the
/// register blocking, so results are identical for every scalar type.
impl Geom {
    /// Elements of the unrolled input, K·P = C·k²·ho·wo.
    pub(crate) fn col_len(&self) -> usize {
        self.c * self.k * self.k * self.ho * self.wo
    }
    /// Scratch for the input side of a convolution: the unrolled input, then (forward) the
    /// zero-padded polyphase copy of the input.
    pub(crate) fn pad_len(&self) -> usize {
        self.col_len() + self.poly_len()
    }
    /// Twice the elements of the output, 2·O·ho·wo (scratch for δY or δYᵀ, duplicated).
    pub(crate) fn wide_len(&self) -> usize {
        2 * self.o * self.ho * self.wo
    }
    /// [`Geom::pad_len`] and [`Geom::wide_len`], or `None` if a size overflows `usize`
    /// (checked once, when the model is built; the unchecked versions are then exact).
    pub(crate) fn checked_scratch(&self) -> Option<(usize, usize)> {
        let hp = self.h.checked_add(self.p.checked_mul(2)?)?;
        let wp = self.w.checked_add(self.p.checked_mul(2)?)?;
        let poly = hp
            .div_ceil(self.s)
            .checked_mul(wp.div_ceil(self.s))?
            .checked_mul(self.s.checked_mul(self.s)?)?
            .checked_mul(self.c)?;
        let plane = self.ho.checked_mul(self.wo)?;
        let col = self
            .c
            .checked_mul(self.k.checked_mul(self.k)?)?
            .checked_mul(plane)?;
        Some((
            col.checked_add(poly)?,
            self.o.checked_mul(plane)?.checked_mul(2)?,
        ))
    }
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
    /// Length of the zero-padded polyphase copy of the input (see [`im2col`]).
    pub(crate) fn poly_len(&self) -> usize {
        self.c * self.s * self.s * self.plane()
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

    /// The input row of padded row `hh` = s·i + a, if it is inside the input.
    #[inline]
    fn in_row(&self, hh: usize) -> Option<usize> {
        hh.checked_sub(self.p).filter(|&h| h < self.h)
    }
}

/// Writes the padded polyphase copy of `x` into `pad` (zeros elsewhere).
fn fill_padded<X: Scalar>(g: &Geom, x: &[X], pad: &mut [X]) {
    pad.fill(X::zero());
    let plane_in = g.h * g.w;
    if plane_in == 0 || g.w == 0 || g.s == 0 {
        return;
    }
    let (s, plane, wq) = (g.s, g.plane(), g.wq());
    for rb in 0..s {
        // Columns w0, w0 + s, … (n of them) have phase rb and start at v0 in their rows.
        let (w0, n, _) = g.row_phase(0, 0, rb);
        let v0 = (w0 + g.p) / s;
        for (c, x_c) in x.chunks_exact(plane_in).enumerate() {
            // Padded row hh = h + p = s·u + ra.
            let (mut u, mut ra) = (g.p / s, g.p % s);
            for row in x_c.chunks_exact(g.w) {
                let start = ((c * s + ra) * s + rb) * plane + u * wq + v0;
                if let (Some(dst), Some(src)) = (pad.get_mut(start..start + n), row.get(w0..)) {
                    match s {
                        1 => copy_run(dst, src),
                        2 => {
                            for (d, pair) in dst.iter_mut().zip(src.chunks(2)) {
                                if let Some(&v) = pair.first() {
                                    *d = v;
                                }
                            }
                        }
                        _ => {
                            for (d, &v) in dst.iter_mut().zip(src.iter().step_by(s)) {
                                *d = v;
                            }
                        }
                    }
                }
                ra += 1;
                if ra == s {
                    ra = 0;
                    u += 1;
                }
            }
        }
    }
}

/// Copies `src` into `dst` (the shorter length), four values at a time: for the short rows
/// of the unrolling kernels, where a `memcpy` call would cost more than the copy.
#[inline(always)]
fn copy_run<X: Copy>(dst: &mut [X], src: &[X]) {
    let n = dst.len().min(src.len());
    let (Some(dst), Some(src)) = (dst.get_mut(..n), src.get(..n)) else {
        return;
    };
    let mut d4 = dst.chunks_exact_mut(4);
    let mut s4 = src.chunks_exact(4);
    for (d, s) in (&mut d4).zip(&mut s4) {
        if let (Some(d), Some(s)) = (d.first_chunk_mut::<4>(), s.first_chunk::<4>()) {
            *d = *s;
        }
    }
    for (d, &v) in d4.into_remainder().iter_mut().zip(s4.remainder()) {
        *d = v;
    }
}

/// Writes X (K × P, see [`Geom`]) into `col`, through the zero-padded polyphase copy `poly`
/// (length [`Geom::poly_len`]) of the input: with phase planes
/// P[c][ra][rb][u][v] = xpad[c, s·u + ra, s·v + rb] (hq × wq each),
/// X[(c, a, b), (i, j)] = P[c][a mod s][b mod s][i + ⌊a/s⌋][j + ⌊b/s⌋], contiguous in j.
pub(crate) fn im2col<X: Scalar>(g: &Geom, x: &[X], col: &mut [X], poly: &mut [X]) {
    let plane_out = g.ho * g.wo;
    if plane_out == 0 || g.wo == 0 || g.s == 0 {
        return;
    }
    fill_padded(g, x, poly);
    let (s, plane, wq) = (g.s, g.plane(), g.wq());
    if wq == 0 {
        return;
    }
    let mut rows = col.chunks_exact_mut(plane_out);
    for c in 0..g.c {
        let (mut ra, mut qa) = (0, 0);
        for _a in 0..g.k {
            let (mut rb, mut qb) = (0, 0);
            for _b in 0..g.k {
                let Some(row) = rows.next() else {
                    return;
                };
                let base = ((c * s + ra) * s + rb) * plane + qa * wq + qb;
                let src = poly.get(base..).unwrap_or_default();
                for (r, src_row) in row.chunks_exact_mut(g.wo).zip(src.chunks(wq)) {
                    copy_run(r, src_row);
                }
                rb += 1;
                if rb == s {
                    rb = 0;
                    qb += 1;
                }
            }
            ra += 1;
            if ra == s {
                ra = 0;
                qa += 1;
            }
        }
    }
}

/// Writes Xᵀ (P × K, see [`Geom`]) into the first [`Geom::col_len`] elements of `col`,
/// through a plain zero-padded copy of the input (C × (H + 2p) × (W + 2p)) in the rest of
/// `col` (length [`Geom::pad_len`]; the polyphase part is large enough): every row of taps
/// (c, a, ·) of a position is then one contiguous run of k values.
fn im2col_t<X: Scalar>(g: &Geom, x: &[X], col: &mut [X]) {
    let (plane_in, kk) = (g.h * g.w, g.c * g.k * g.k);
    if plane_in == 0 || kk == 0 || g.wo == 0 {
        return;
    }
    let (colt, rest) = col.split_at_mut(g.col_len().min(col.len()));
    let (hp, wp) = (g.h + 2 * g.p, g.w + 2 * g.p);
    let src: &[X] = if g.p == 0 {
        x
    } else {
        // `col` has length Geom::pad_len (callers' contract), which holds the padded copy.
        let Some(padded) = rest.get_mut(..g.c * hp * wp) else {
            return;
        };
        padded.fill(X::zero());
        for (pad_c, x_c) in padded
            .chunks_exact_mut(hp * wp)
            .zip(x.chunks_exact(plane_in))
        {
            for (dst, row) in pad_c
                .chunks_exact_mut(wp)
                .skip(g.p)
                .zip(x_c.chunks_exact(g.w))
            {
                if let Some(d) = dst.get_mut(g.p..g.p + g.w) {
                    d.copy_from_slice(row);
                }
            }
        }
        padded
    };
    match g.k {
        2 => unroll_t::<X, 2>(g, src, hp, wp, colt),
        3 => unroll_t::<X, 3>(g, src, hp, wp, colt),
        4 => unroll_t::<X, 4>(g, src, hp, wp, colt),
        5 => unroll_t::<X, 5>(g, src, hp, wp, colt),
        8 => unroll_t::<X, 8>(g, src, hp, wp, colt),
        _ => unroll_t::<X, 0>(g, src, hp, wp, colt),
    }
}

/// The copy loop of [`im2col_t`] from the padded input `src` (hp × wp planes), for kernel
/// size `K` = `g.k` (`K` = 0: any size, slower).
#[inline(always)]
fn unroll_t<X: Copy, const K: usize>(g: &Geom, src: &[X], hp: usize, wp: usize, colt: &mut [X]) {
    let k = if K == 0 { g.k } else { K };
    let mut rows = colt.chunks_exact_mut(g.c * k * k);
    for i in 0..g.ho {
        for j in 0..g.wo {
            let Some(row) = rows.next() else {
                return;
            };
            let mut start = g.s * i * wp + g.s * j;
            for row_c in row.chunks_exact_mut(k * k) {
                for (a, r) in row_c.chunks_exact_mut(k).enumerate() {
                    let at = start + a * wp;
                    if K == 0 {
                        if let Some(s) = src.get(at..at + k) {
                            r.copy_from_slice(s);
                        }
                    } else if let (Some(d), Some(s)) = (
                        r.first_chunk_mut::<K>(),
                        src.get(at..at + K).and_then(|s| s.first_chunk::<K>()),
                    ) {
                        *d = *s;
                    }
                }
                start += hp * wp;
            }
        }
    }
}

/// The adjoint of [`im2col_t`]: δx[c, h, w] = Σ δXᵀ[pos, tap] over the (position, tap) pairs
/// reading x[c, h, w], added in increasing position, then tap order.
pub(crate) fn col2im_t<S: Scalar>(g: &Geom, dcol: &[S], dx: &mut [S]) {
    let (plane_in, kk) = (g.h * g.w, g.c * g.k * g.k);
    dx.fill(S::zero());
    if plane_in == 0 || kk == 0 || g.wo == 0 {
        return;
    }
    if g.p == 0 {
        // No padding: every run of k taps lands inside the input (same additions, same order).
        match g.k {
            2 => return scatter_t::<S, 2>(g, dcol, dx),
            3 => return scatter_t::<S, 3>(g, dcol, dx),
            4 => return scatter_t::<S, 4>(g, dcol, dx),
            5 => return scatter_t::<S, 5>(g, dcol, dx),
            8 => return scatter_t::<S, 8>(g, dcol, dx),
            _ => {}
        }
    }
    let mut rows = dcol.chunks_exact(kk);
    for i in 0..g.ho {
        for j in 0..g.wo {
            let Some(row) = rows.next() else {
                return;
            };
            let b0 = g.p.saturating_sub(g.s * j).min(g.k);
            let b1 = (g.w + g.p).saturating_sub(g.s * j).clamp(b0, g.k);
            for (dx_c, row_c) in dx
                .chunks_exact_mut(plane_in)
                .zip(row.chunks_exact(g.k * g.k))
            {
                for (a, r) in row_c.chunks_exact(g.k).enumerate() {
                    let Some(h) = g.in_row(g.s * i + a) else {
                        continue;
                    };
                    // An output position wholly in the padding reads nothing.
                    let Some(start) = (h * g.w + g.s * j + b0).checked_sub(g.p) else {
                        continue;
                    };
                    if let (Some(dst), Some(src)) =
                        (dx_c.get_mut(start..start + (b1 - b0)), r.get(b0..b1))
                    {
                        for (d, &v) in dst.iter_mut().zip(src) {
                            *d += v;
                        }
                    }
                }
            }
        }
    }
}

/// [`col2im_t`] without padding, for kernel size `K` = `g.k`: position by position, the run
/// of K taps (c, a, ·) is added onto input row (c, s·i + a) from column s·j on.
#[inline(always)]
fn scatter_t<S: Scalar, const K: usize>(g: &Geom, dcol: &[S], dx: &mut [S]) {
    let plane_in = g.h * g.w;
    let mut rows = dcol.chunks_exact(g.c * K * K);
    for i in 0..g.ho {
        for j in 0..g.wo {
            let Some(row) = rows.next() else {
                return;
            };
            let start = g.s * i * g.w + g.s * j;
            for (dx_c, row_c) in dx.chunks_exact_mut(plane_in).zip(row.chunks_exact(K * K)) {
                for (a, r) in row_c.chunks_exact(K).enumerate() {
                    let at = start + a * g.w;
                    if let (Some(d), Some(r)) = (
                        dx_c.get_mut(at..at + K)
                            .and_then(|d| d.first_chunk_mut::<K>()),
                        r.first_chunk::<K>(),
                    ) {
                        for (dv, &v) in d.iter_mut().zip(r) {
                            *dv += v;
                        }
                    }
                }
            }
        }
    }
}

/// C = A·B for row-major A (m × kd), B (kd × n), C (m × n), with products `mul(a, b)`:
/// C[i, j] = (((0 + mul(A[i, 0], B[0, j])) + mul(A[i, 1], B[1, j])) + …), the inner index in
/// increasing order. Register blocks of MR × NR entries (chosen by the size of `S`) change
/// which entries are computed together, never an entry's summation order.
#[inline(always)]
pub(crate) fn gemm<A: Copy, B: Copy, S: Scalar>(
    m: usize,
    n: usize,
    kd: usize,
    a: &[A],
    b: &[B],
    c: &mut [S],
    mul: impl Fn(A, B) -> S + Copy,
) {
    if kd == 0 || n == 0 {
        c.fill(S::zero());
        return;
    }
    let (sa, sb, ss) = (
        core::mem::size_of::<A>(),
        core::mem::size_of::<B>(),
        core::mem::size_of::<S>(),
    );
    if ss <= 8 {
        gemm_blocked::<A, B, S, 4, VEC_NR>(m, n, kd, a, b, c, mul);
    } else if sa > 8 && sb > 8 {
        gemm_blocked::<A, B, S, DDM, DDN>(m, n, kd, a, b, c, mul);
    } else if sa > 8 {
        gemm_blocked::<A, B, S, DFM, DFN>(m, n, kd, a, b, c, mul);
    } else {
        gemm_blocked::<A, B, S, FDM, FDN>(m, n, kd, a, b, c, mul);
    }
}
/// Columns of C per register block of the `f64`-sized products: 8 (two 4-wide vectors per
/// row) when the build targets AVX, else 4 (two SSE2 pairs). Blocking never changes an
/// entry's summation order, so results are the same bits either way.
#[cfg(target_feature = "avx")]
pub(crate) const VEC_NR: usize = 8;
/// Columns of C per register block of the `f64`-sized products (see the AVX variant).
#[cfg(not(target_feature = "avx"))]
pub(crate) const VEC_NR: usize = 4;
const DDM: usize = 1;
const DDN: usize = 1;
const DFM: usize = 2;
const DFN: usize = 1;
const FDM: usize = 2;
const FDN: usize = 1;

#[inline(never)]
fn gemm_blocked<A: Copy, B: Copy, S: Scalar, const MR: usize, const NR: usize>(
    m: usize,
    n: usize,
    kd: usize,
    a: &[A],
    b: &[B],
    c: &mut [S],
    mul: impl Fn(A, B) -> S + Copy,
) {
    let mut a_rows = a.chunks_exact(kd).take(m);
    let mut c_rows = c.chunks_exact_mut(n).take(m);
    let mut left = m;
    while left >= MR {
        let rows: [&[A]; MR] = core::array::from_fn(|_| a_rows.next().unwrap_or_default());
        let outs: [&mut [S]; MR] = core::array::from_fn(|_| c_rows.next().unwrap_or_default());
        panel::<A, B, S, MR, NR>(rows, outs, n, kd, b, mul);
        left -= MR;
    }
    for (row, out) in a_rows.zip(c_rows) {
        panel::<A, B, S, 1, NR>([row], [out], n, kd, b, mul);
    }
}

#[inline(always)]
fn panel<A: Copy, B: Copy, S: Scalar, const MR: usize, const NR: usize>(
    rows: [&[A]; MR],
    mut outs: [&mut [S]; MR],
    n: usize,
    kd: usize,
    b: &[B],
    mul: impl Fn(A, B) -> S + Copy,
) {
    if rows.iter().any(|r| r.len() != kd) || outs.iter().any(|r| r.len() != n) {
        return;
    }
    let mut j = 0;
    while j + NR <= n {
        micro::<A, B, S, MR, NR, 1>(&rows, &mut outs, j, n, kd, b, mul);
        j += NR;
    }
    while j < n {
        micro::<A, B, S, MR, 1, 1>(&rows, &mut outs, j, n, kd, b, mul);
        j += 1;
    }
}

/// Entries C[i0 + r, j + q], r < MR, q < NR (rows of A in `rows`, of C in `outs`), A\[i, k\]
/// read at `rows[i][AS·k]`: `AS` = 2 reads the first of each pair of a duplicated A ([`gemm_dup`];
/// one broadcast load with AVX), with the same products and order as [`micro_dup`].
#[inline(always)]
fn micro<A: Copy, B: Copy, S: Scalar, const MR: usize, const NR: usize, const AS: usize>(
    rows: &[&[A]; MR],
    outs: &mut [&mut [S]; MR],
    j: usize,
    n: usize,
    kd: usize,
    b: &[B],
    mul: impl Fn(A, B) -> S + Copy,
) {
    let mut acc = [[S::zero(); NR]; MR];
    let mut off = j;
    for k in 0..kd {
        let Some(bv) = b.get(off..off + NR).and_then(|s| s.first_chunk::<NR>()) else {
            break;
        };
        off += n;
        for (acc_r, row) in acc.iter_mut().zip(rows) {
            let Some(&av) = row.get(AS * k) else {
                continue;
            };
            for (s, &bq) in acc_r.iter_mut().zip(bv) {
                *s += mul(av, bq);
            }
        }
    }
    for (acc_r, out) in acc.iter().zip(outs.iter_mut()) {
        if let Some(dst) = out.get_mut(j..j + NR) {
            dst.copy_from_slice(acc_r);
        }
    }
}

/// [`gemm`] for `size_of::<S>() <= 8` with A given duplicated: `a2` holds every A[i, k]
/// twice in a row (row i is a2[2·i·kd..2·(i + 1)·kd]), so a pair of equal values is one
/// vector load instead of a load and a shuffle (SSE2 has no broadcast load). Same results as
/// [`gemm`] (same summation order); use it only for `f64`-sized `S`, where it is faster.
#[inline]
pub(crate) fn gemm_dup<A: Copy, B: Copy, S: Scalar>(
    m: usize,
    n: usize,
    kd: usize,
    a2: &[A],
    b: &[B],
    c: &mut [S],
    mul: impl Fn(A, B) -> S + Copy,
) {
    gemm_dup_mr::<A, B, S, DUP_MR>(m, n, kd, a2, b, c, mul);
}

/// [`gemm_dup`] with `MR` rows of A per register block (`MR` ≤ 6 keeps the 2·`MR`
/// accumulators and the operands in the 16 SSE2 registers); pick `MR` dividing `m` so no
/// row falls to the one-row tail. Same results as [`gemm_dup`] and [`gemm`] (same summation
/// order).
#[inline(never)]
pub(crate) fn gemm_dup_mr<A: Copy, B: Copy, S: Scalar, const MR: usize>(
    m: usize,
    n: usize,
    kd: usize,
    a2: &[A],
    b: &[B],
    c: &mut [S],
    mul: impl Fn(A, B) -> S + Copy,
) {
    if kd == 0 || n == 0 {
        c.fill(S::zero());
        return;
    }
    let mut a_rows = a2.chunks_exact(2 * kd).take(m);
    let mut c_rows = c.chunks_exact_mut(n).take(m);
    let mut left = m;
    while MR > 0 && left >= MR {
        let rows: [&[A]; MR] = core::array::from_fn(|_| a_rows.next().unwrap_or_default());
        let outs: [&mut [S]; MR] = core::array::from_fn(|_| c_rows.next().unwrap_or_default());
        dup_panel(rows, outs, n, kd, b, mul);
        left -= MR;
    }
    for (row, out) in a_rows.zip(c_rows) {
        dup_panel([row], [out], n, kd, b, mul);
    }
}

/// [`gemm_dup`] with register blocks of 5 rows when 5 divides `m` (no one-row tail, e.g. the
/// 25 positions of the MNIST ConvNet's second convolution), else of 4. Same results.
#[inline]
pub(crate) fn gemm_dup_fit<A: Copy, B: Copy, S: Scalar>(
    m: usize,
    n: usize,
    kd: usize,
    a2: &[A],
    b: &[B],
    c: &mut [S],
    mul: impl Fn(A, B) -> S + Copy,
) {
    if m % 5 == 0 {
        gemm_dup_mr::<A, B, S, 5>(m, n, kd, a2, b, c, mul);
    } else {
        gemm_dup(m, n, kd, a2, b, c, mul);
    }
}

/// Rows of A per register block of [`gemm_dup`].
const DUP_MR: usize = 4;
/// All columns of C for MR rows of duplicated A.
#[inline(always)]
fn dup_panel<A: Copy, B: Copy, S: Scalar, const MR: usize>(
    rows: [&[A]; MR],
    mut outs: [&mut [S]; MR],
    n: usize,
    kd: usize,
    b: &[B],
    mul: impl Fn(A, B) -> S + Copy,
) {
    if rows.iter().any(|r| r.len() != 2 * kd) || outs.iter().any(|r| r.len() != n) {
        return;
    }
    let mut j = 0;
    if VEC_NR == 8 {
        // AVX: blocks of eight columns from broadcast loads of A (the first of each pair).
        while j + 8 <= n {
            micro::<A, B, S, MR, 8, 2>(&rows, &mut outs, j, n, kd, b, mul);
            j += 8;
        }
    }
    while j + 4 <= n {
        micro_dup::<A, B, S, MR>(&rows, &mut outs, j, n, kd, b, mul);
        j += 4;
    }
    if n % 4 == 3 && n >= 4 {
        // The last three columns as one more block of four ending at column n − 1 (cheaper
        // than three single columns): its first column is recomputed in the same order, so
        // the same value is stored again.
        micro_dup::<A, B, S, MR>(&rows, &mut outs, n - 4, n, kd, b, mul);
        return;
    }
    while j < n {
        micro_dup1::<A, B, S, MR>(&rows, &mut outs, j, n, kd, b, mul);
        j += 1;
    }
}

#[inline(always)]
fn micro_dup<A: Copy, B: Copy, S: Scalar, const MR: usize>(
    rows: &[&[A]; MR],
    outs: &mut [&mut [S]; MR],
    j: usize,
    n: usize,
    kd: usize,
    b: &[B],
    mul: impl Fn(A, B) -> S + Copy,
) {
    let mut acc = [[S::zero(); 4]; MR];
    let mut off = j;
    for k in 0..kd {
        let Some(&[b0, b1, b2, b3]) = b.get(off..off + 4).and_then(|s| s.first_chunk::<4>()) else {
            break;
        };
        off += n;
        for (acc_r, row) in acc.iter_mut().zip(rows) {
            let Some(&[a0, a1]) = row.get(2 * k..2 * k + 2).and_then(|s| s.first_chunk::<2>())
            else {
                continue;
            };
            acc_r[0] += mul(a0, b0);
            acc_r[1] += mul(a1, b1);
            acc_r[2] += mul(a0, b2);
            acc_r[3] += mul(a1, b3);
        }
    }
    for (acc_r, out) in acc.iter().zip(outs.iter_mut()) {
        if let Some(dst) = out.get_mut(j..j + 4) {
            dst.copy_from_slice(acc_r);
        }
    }
}

#[inline(always)]
fn micro_dup1<A: Copy, B: Copy, S: Scalar, const MR: usize>(
    rows: &[&[A]; MR],
    outs: &mut [&mut [S]; MR],
    j: usize,
    n: usize,
    kd: usize,
    b: &[B],
    mul: impl Fn(A, B) -> S + Copy,
) {
    let mut acc = [S::zero(); MR];
    let b_j = b.get(j..).unwrap_or_default();
    for (k, &b_k) in b_j.iter().step_by(n).take(kd).enumerate() {
        for (s, row) in acc.iter_mut().zip(rows) {
            if let Some(&a) = row.get(2 * k) {
                *s += mul(a, b_k);
            }
        }
    }
    for (&v, out) in acc.iter().zip(outs.iter_mut()) {
        if let Some(d) = out.get_mut(j) {
            *d = v;
        }
    }
}

/// Writes every element of `src` twice into `dst` (see [`gemm_dup`]).
pub(crate) fn duplicate<S: Copy>(src: &[S], dst: &mut [S]) {
    for (d, &v) in dst.chunks_exact_mut(2).zip(src) {
        d.fill(v);
    }
}

/// Conv2d forward: y[o, i, j] = (Σ_{c, a, b} W[o, c, a, b]·x[c, s·i + a − p, s·j + b − p]) + b[o]
/// (zero padding; taps added in the order (c, a, b), the bias last). `col` (length
/// [`Geom::pad_len`]) is scratch.
pub(crate) fn conv_forward<W: Weight<S>, S: Scalar>(
    g: &Geom,
    w: &[W],
    bias: &[W],
    x: &[S],
    y: &mut [S],
    col: &mut [S],
) {
    let (plane_out, kk) = (g.ho * g.wo, g.c * g.k * g.k);
    if plane_out == 0 || kk == 0 {
        return;
    }
    let (col, poly) = col.split_at_mut(g.col_len().min(col.len()));
    im2col(g, x, col, poly);
    gemm(g.o, plane_out, kk, w, col, y, |wv: W, xv: S| wv.times(xv));
    for (y_o, &bo) in y.chunks_exact_mut(plane_out).zip(bias) {
        let bs: S = bo.to_scalar();
        for v in y_o.iter_mut() {
            *v += bs;
        }
    }
}

/// Conv2d backward: ∇W[o, c, a, b] = Σ_{i, j} δy[o, i, j]·x[c, s·i + a − p, s·j + b − p]
/// (positions in increasing order), ∇b[o] = Σ_{i, j} δy[o, i, j], and if `dx` is given
/// δx[c, h, w] = Σ W[o, c, a, b]·δy[o, i, j] over the taps that read x[c, h, w].
/// `col` (length [`Geom::pad_len`]), `dcol` (the same, or empty without `dx`) and `dyt`
/// (length [`Geom::wide_len`]) are scratch. The input `x` (and `col`) has type `X` (`S`, or
/// `f64` when its tangents are handled separately).
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_backward<W: Weight<S>, X: Weight<S> + Scalar, S: Scalar>(
    g: &Geom,
    w: &[W],
    x: &[X],
    dy: &[S],
    gw: &mut [S],
    gb: &mut [S],
    dx: Option<&mut [S]>,
    col: &mut [X],
    dcol: &mut [S],
    dyt: &mut [S],
) {
    let (plane_out, kk) = (g.ho * g.wo, g.c * g.k * g.k);
    if plane_out == 0 || kk == 0 {
        return;
    }
    for (dy_o, gbo) in dy.chunks_exact(plane_out).zip(gb.iter_mut()) {
        let mut sum = S::zero();
        for &d in dy_o {
            sum += d;
        }
        *gbo = sum;
    }
    let dup = core::mem::size_of::<S>() <= 8;
    if !gw.is_empty() {
        im2col_t(g, x, col);
        if dup {
            duplicate(dy, dyt);
            gemm_dup(g.o, kk, plane_out, dyt, col, gw, |d: S, xv: X| xv.times(d));
        } else {
            gemm(g.o, kk, plane_out, dy, col, gw, |d: S, xv: X| xv.times(d));
        }
    }
    if let Some(dx) = dx {
        // δYᵀ (P × O; duplicated for `f64`), then δXᵀ = δYᵀ·W (P × K) into `dcol`,
        // scattered onto δx.
        let rep = if dup { 2 } else { 1 };
        for (o, dy_o) in dy.chunks_exact(plane_out).enumerate() {
            for (pos, &d) in dy_o.iter().enumerate() {
                let at = (pos * g.o + o) * rep;
                if let Some(t) = dyt.get_mut(at..at + rep) {
                    t.fill(d);
                }
            }
        }
        if dup {
            gemm_dup(plane_out, kk, g.o, dyt, w, dcol, |d: S, wv: W| wv.times(d));
        } else {
            gemm(plane_out, kk, g.o, dyt, w, dcol, |d: S, wv: W| wv.times(d));
        }
        col2im_t(g, dcol, dx);
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
            if g.k == 2 && g.s == 1 {
                // The common 2 × 2 stride-1 window in one pass, same order of additions.
                let r0 = x_c.get(i * g.w..(i + 1) * g.w).unwrap_or_default();
                let r1 = x_c.get((i + 1) * g.w..(i + 2) * g.w).unwrap_or_default();
                let (r0b, r1b) = (
                    r0.get(1..).unwrap_or_default(),
                    r1.get(1..).unwrap_or_default(),
                );
                for ((((yv, &x00), &x01), &x10), &x11) in
                    y_row.iter_mut().zip(r0).zip(r0b).zip(r1).zip(r1b)
                {
                    *yv = ((((S::zero() + x00) + x01) + x10) + x11) * inv;
                }
                continue;
            }
            y_row.fill(S::zero());
            for a in 0..g.k {
                let row = i * g.s + a;
                for b in 0..g.k {
                    let Some(x_row) = x_c.get(row * g.w + b..(row + 1) * g.w) else {
                        continue;
                    };
                    if g.s == 1 {
                        for (yv, &xv) in y_row.iter_mut().zip(x_row) {
                            *yv += xv;
                        }
                    } else {
                        for (yv, &xv) in y_row.iter_mut().zip(x_row.iter().step_by(g.s)) {
                            *yv += xv;
                        }
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
    if g.k == 2 && g.s == 1 && g.ho + 1 == g.h && g.wo + 1 == g.w {
        // The common 2 × 2 stride-1 window as a gather, each δx entry summed from 0 in the
        // order of the general loop below: (i = h − 1, j = w), (h − 1, w − 1), (h, w),
        // (h, w − 1); missing terms (borders) skipped, as they are never added there.
        if dx.len() != (dy.len() / plane_out) * plane_in {
            dx.fill(S::zero());
        }
        for (dx_c, dy_c) in dx
            .chunks_exact_mut(plane_in)
            .zip(dy.chunks_exact(plane_out))
        {
            for (r, dx_row) in dx_c.chunks_exact_mut(g.w).enumerate() {
                let prev = r
                    .checked_sub(1)
                    .and_then(|i| dy_c.get(i * g.wo..(i + 1) * g.wo));
                let cur = dy_c.get(r * g.wo..(r + 1) * g.wo);
                let (Some((first, rest)), Some(last)) =
                    (dx_row.split_first_mut(), g.wo.checked_sub(1))
                else {
                    continue;
                };
                // Column 0 (j = 0 only) and the last column (j = wo − 1 only).
                let mut acc = S::zero();
                for row in [prev, cur].into_iter().flatten() {
                    if let Some(&d) = row.first() {
                        acc += d * inv;
                    }
                }
                *first = acc;
                let (mid, end) = rest.split_at_mut(last.min(rest.len()));
                if let Some(e) = end.first_mut() {
                    let mut acc = S::zero();
                    for row in [prev, cur].into_iter().flatten() {
                        if let Some(&d) = row.get(last) {
                            acc += d * inv;
                        }
                    }
                    *e = acc;
                }
                // Interior columns c = 1..wo: terms j = c, then j = c − 1, per row.
                match (prev, cur) {
                    (Some(p), Some(q)) => {
                        let (p1, q1) = (
                            p.get(1..).unwrap_or_default(),
                            q.get(1..).unwrap_or_default(),
                        );
                        for ((((xv, &a), &b), &c), &d) in
                            mid.iter_mut().zip(p1).zip(p).zip(q1).zip(q)
                        {
                            *xv = (((S::zero() + a * inv) + b * inv) + c * inv) + d * inv;
                        }
                    }
                    (Some(p), None) | (None, Some(p)) => {
                        let p1 = p.get(1..).unwrap_or_default();
                        for ((xv, &a), &b) in mid.iter_mut().zip(p1).zip(p) {
                            *xv = (S::zero() + a * inv) + b * inv;
                        }
                    }
                    (None, None) => mid.fill(S::zero()),
                }
            }
        }
        return;
    }
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
                    if g.s == 1 {
                        for (xv, &d) in dx_row.iter_mut().zip(d_row) {
                            *xv += d * inv;
                        }
                    } else {
                        for (xv, &d) in dx_row.iter_mut().step_by(g.s).zip(d_row) {
                            *xv += d * inv;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use alloc::vec;

    /// The general 2 × 2 stride-1 loop of `pool_backward` (fill, then scatter-add).
    fn pool_backward_general(g: &Geom, dy: &[f64], dx: &mut [f64]) {
        let inv = 1.0 / (g.k * g.k) as f64;
        dx.fill(0.0);
        let (plane_in, plane_out) = (g.h * g.w, g.ho * g.wo);
        for c in 0..g.c {
            for i in 0..g.ho {
                for a in 0..g.k {
                    for b in 0..g.k {
                        for j in 0..g.wo {
                            dx[c * plane_in + (i + a) * g.w + j + b] +=
                                dy[c * plane_out + i * g.wo + j] * inv;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pool_backward_2x2_stride1_gather_is_bit_identical_to_the_scatter_loop() {
        // Exact: the specialised path must add the same terms in the same order (the
        // training and FIL code rely on bit-identical gradients), including signed zeros.
        let mut r = Rng::from_seed(11);
        for (c, h, w) in [(3, 5, 7), (2, 2, 2), (1, 2, 6), (4, 6, 2), (16, 13, 13)] {
            let g = Geom {
                c,
                h,
                w,
                o: c,
                ho: h - 1,
                wo: w - 1,
                k: 2,
                s: 1,
                p: 0,
            };
            let dy: Vec<f64> = (0..c * g.ho * g.wo)
                .map(|i| match i % 7 {
                    0 => -0.0,
                    1 => 0.0,
                    _ => r.gaussian() * 1e3,
                })
                .collect();
            let (mut a, mut b) = (vec![1.0; c * h * w], vec![2.0; c * h * w]);
            pool_backward(&g, &dy, &mut a);
            pool_backward_general(&g, &dy, &mut b);
            assert!(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{c}×{h}×{w}"
            );
        }
    }

    /// A convolution geometry (output size from the usual floor formula).
    fn conv_geom(c: usize, h: usize, w: usize, o: usize, k: usize, s: usize, p: usize) -> Geom {
        Geom {
            c,
            h,
            w,
            o,
            ho: (h + 2 * p - k) / s + 1,
            wo: (w + 2 * p - k) / s + 1,
            k,
            s,
            p,
        }
    }

    /// x[c, h, w] with zero padding, by definition.
    fn tap(g: &Geom, x: &[f64], c: usize, hh: usize, ww: usize) -> f64 {
        match (hh.checked_sub(g.p), ww.checked_sub(g.p)) {
            (Some(h), Some(w)) if h < g.h && w < g.w => x[(c * g.h + h) * g.w + w],
            _ => 0.0,
        }
    }

    const GEOMS: [(usize, usize, usize, usize, usize, usize, usize); 9] = [
        (1, 28, 28, 16, 8, 2, 2),
        (16, 12, 12, 32, 4, 2, 0),
        (3, 11, 9, 5, 3, 1, 1),
        (2, 13, 10, 6, 5, 3, 2),
        (4, 6, 6, 8, 2, 2, 1),
        (2, 9, 8, 3, 6, 1, 2),
        (1, 7, 7, 3, 7, 1, 3),
        (3, 5, 6, 2, 1, 1, 0),
        (2, 10, 9, 4, 3, 2, 0),
    ];

    #[test]
    fn unrolled_inputs_match_their_definition() {
        // Exact: the unrolling kernels only copy (and zero-pad), so every entry of X (im2col)
        // and Xᵀ (im2col_t) must equal x[c, s·i + a − p, s·j + b − p] bit for bit. Covers the
        // specialised kernel sizes and others.
        let mut r = Rng::from_seed(5);
        for &(c, h, w, o, k, s, p) in &GEOMS {
            let g = conv_geom(c, h, w, o, k, s, p);
            let x: Vec<f64> = (0..c * h * w).map(|_| r.gaussian()).collect();
            let (kk, np) = (c * k * k, g.ho * g.wo);
            let mut col = vec![f64::NAN; g.pad_len()];
            let (xm, poly) = col.split_at_mut(g.col_len());
            im2col(&g, &x, xm, poly);
            let mut colt = vec![f64::NAN; g.pad_len()];
            im2col_t(&g, &x, &mut colt);
            for ci in 0..c {
                for a in 0..k {
                    for b in 0..k {
                        let t = (ci * k + a) * k + b;
                        for i in 0..g.ho {
                            for j in 0..g.wo {
                                let want = tap(&g, &x, ci, s * i + a, s * j + b).to_bits();
                                let pos = i * g.wo + j;
                                assert_eq!(xm[t * np + pos].to_bits(), want, "X {c}×{h}×{w} k{k}");
                                assert_eq!(
                                    colt[pos * kk + t].to_bits(),
                                    want,
                                    "Xᵀ {c}×{h}×{w} k{k}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn col2im_t_adds_in_position_order_bit_for_bit() {
        // Exact: δx[c, h, w] must be the sum, from 0 and in increasing position order, of
        // the δXᵀ entries whose tap reads x[c, h, w] (the unpadded fast path and the
        // general loop alike); a naive scatter in that order is the reference.
        let mut r = Rng::from_seed(6);
        for &(c, h, w, o, k, s, p) in &GEOMS {
            let g = conv_geom(c, h, w, o, k, s, p);
            let (kk, np) = (c * k * k, g.ho * g.wo);
            let dcol: Vec<f64> = (0..np * kk).map(|_| r.gaussian() * 1e3).collect();
            let mut want = vec![0.0; c * h * w];
            for pos in 0..np {
                let (i, j) = (pos / g.wo, pos % g.wo);
                for ci in 0..c {
                    for a in 0..k {
                        for b in 0..k {
                            let (hh, ww) = (s * i + a, s * j + b);
                            if let (Some(hi), Some(wi)) = (hh.checked_sub(p), ww.checked_sub(p)) {
                                if hi < h && wi < w {
                                    want[(ci * h + hi) * w + wi] +=
                                        dcol[pos * kk + (ci * k + a) * k + b];
                                }
                            }
                        }
                    }
                }
            }
            let mut dx = vec![f64::NAN; c * h * w];
            col2im_t(&g, &dcol, &mut dx);
            assert!(
                dx.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{c}×{h}×{w} k{k} s{s} p{p}"
            );
        }
    }

    #[test]
    fn gemm_column_tails_equal_the_definition_bit_for_bit() {
        // Exact: column tails (n mod 4 = 3: an overlapping block of four; else single
        // columns) must still give the one-accumulator, increasing-k sum (the definition),
        // for `gemm` and the duplicated-A kernels alike.
        let mut r = Rng::from_seed(7);
        for (m, n, kd) in [
            (4, 5, 7),
            (5, 6, 3),
            (8, 7, 25),
            (3, 3, 4),
            (10, 25, 16),
            (2, 1, 5),
            (5, 11, 9),
        ] {
            let a: Vec<f64> = (0..m * kd).map(|_| r.gaussian()).collect();
            let b: Vec<f64> = (0..kd * n).map(|_| r.gaussian()).collect();
            let mut a2 = vec![0.0; 2 * m * kd];
            duplicate(&a, &mut a2);
            let (mut c1, mut c2, mut c3) = (vec![0.0; m * n], vec![1.0; m * n], vec![2.0; m * n]);
            gemm(m, n, kd, &a, &b, &mut c1, |u: f64, v: f64| u * v);
            // The definition: one accumulator from 0, k increasing.
            for i in 0..m {
                for j in 0..n {
                    let mut acc = 0.0;
                    for k in 0..kd {
                        acc += a[i * kd + k] * b[k * n + j];
                    }
                    assert_eq!(c1[i * n + j].to_bits(), acc.to_bits(), "gemm {m}×{n}×{kd}");
                }
            }
            gemm_dup(m, n, kd, &a2, &b, &mut c2, |u: f64, v: f64| u * v);
            gemm_dup_fit(m, n, kd, &a2, &b, &mut c3, |u: f64, v: f64| u * v);
            for c in [&c2, &c3] {
                assert!(
                    c.iter().zip(&c1).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{m}×{n}×{kd}"
                );
            }
        }
    }
}
