//! The Gram matrix (or the squared norms) of the input-coordinate derivatives of the clipped
//! per-example gradient — the quantity Fisher information leakage needs (Guo et al. 2022,
//! Alg. 1 and Eq. 5) — without ever forming the p-dimensional derivative vectors.
//!
//! # Method
//!
//! With g = ∇_w ℓ, n = ‖g‖, g̃ = c(n)·g ([`crate::train::clip`]'s one clipping factor) and
//! dg_a = ∂g/∂x_{coords\[a\]}: dg̃ = c·dg + c′·(g·dg/n)·g, so
//! ⟨dg̃_a, dg̃_b⟩ = c²·⟨dg_a, dg_b⟩ + (2cc′/n + c′²)·(g·dg_a)(g·dg_b); c and c′ come from
//! evaluating the clipping factor on `Dual<1>` (value n, tangent 1), hence the same kink
//! conventions as [`clip`](crate::train::clip::clip). Only ⟨dg_a, dg_b⟩ and g·dg_a are needed,
//! layer by layer:
//!
//! - a dense layer's weight gradient is δ·aᵀ (δ: output gradient, a: input), so
//!   ⟨dG_a, dG_b⟩ = (dδ_a·dδ_b)(a·a) + (dδ_a·δ)(a·da_b) + (δ·dδ_b)(da_a·a) + (δ·δ)(da_a·da_b)
//!   and g·dG_a = (δ·dδ_a)(a·a) + (δ·δ)(a·da_a): O(in + out) per pair of coordinates; for the
//!   first layer da = e_c (one-hot) and these are table look-ups;
//! - a convolution's weight gradient is Δ·Xᵀ (Δ: output gradient, channels × positions; X:
//!   unrolled input, taps × positions); its derivative dΔ·Xᵀ + Δ·dXᵀ is formed per coordinate
//!   (a product with the shared X, plus a scatter over the non-zero entries of the input
//!   tangent dX, which for an input pixel is a small window); with few output positions
//!   (see `pos_gram`) the squared norm goes through the position Gram XᵀX instead, and its
//!   dX terms are gathered in the forward pass over the same (tap, value) pairs as the
//!   forward tangent W·dX;
//! - activation tangents and their backward-pass derivatives run in `f64`, one coordinate
//!   ("lane") at a time, skipping exact zeros of the input tangent (the receptive field of
//!   the seeded pixel, tracked as a box from a one-hot input through convolutions,
//!   activations and poolings) in convolutions and poolings;
//! - the large products (dΔ·Xᵀ, dΔᵀ·W, the dense layers' input-gradient tangents of all
//!   lanes) run on packed operands (`fil_kernels`), summing in the order of
//!   `kernels::gemm`.
//!
//! Rounding differs from the reference (`loss_and_grad_jvp` + `clip` + dot products): the
//! same quantities are summed in different orders. Agreement is to ~1e-14 relative to the
//! size of the terms, c²·√(⟨dg_a,dg_a⟩⟨dg_b,dg_b⟩) + |2cc′/n + c′²|·|g·dg_a|·|g·dg_b|; an entry
//! much smaller than that (cancellation, e.g. a derivative almost parallel to g under hard
//! clipping) is accurate only to that absolute level.

use alloc::vec::Vec;

#[path = "fil_kernels.rs"]
mod fil_kernels;
use fil_kernels::{
    gemm_packed_mr, pack_a_mr, pack_a_t_mr, pack_b_t, packed_a_len, packed_b_len, pick_mr,
};

use super::{backward_node, geom, inconsistent, layer_params, Sequential, Workspace};
use crate::autodiff::{l2_norm, Dual, Scalar};
use crate::error::{check_positive, Error, Result};
use crate::nn::activation::Activation;
use crate::nn::kernels::{self, Geom};
use crate::nn::layer::Layer;
use crate::nn::loss::Loss;
use crate::train::clip::{clip_factor, ClipMethod};

/// Reusable buffers for [`Sequential::clipped_jvp_gram`] and
/// [`Sequential::clipped_jvp_sq_norms`], for up to `max_coords` coordinates per call. Memory
/// O(max_coords · (Σ layer sizes + largest layer's weights)) plus an `f64` [`Workspace`];
/// independent of the input dimension beyond the activations. Make it with
/// [`Sequential::fil_workspace`] and reuse it (the calls allocate nothing).
#[derive(Clone, Debug)]
pub struct FilWorkspace {
    ws: Workspace<f64>,
    max_coords: usize,
    /// The per-example gradient of the last call.
    grad: Vec<f64>,
    /// Gradient of the loss with respect to every layer boundary (activation layout).
    dl: Vec<f64>,
    /// Forward tangents, per boundary b: max_coords lanes of length len_b starting at
    /// max_coords·act_offsets\[b\].
    tf: Vec<f64>,
    /// Backward tangents (lane-major, max_coords × max_len), current and next.
    tb0: Vec<f64>,
    tb1: Vec<f64>,
    /// Per-lane derivatives of a layer's weight gradient (convolutions: taps × channels).
    e: Vec<f64>,
    /// Per-lane derivatives of a layer's bias gradient.
    db: Vec<f64>,
    /// Transposed weights / weight gradient of a convolution (taps × channels).
    wt: Vec<f64>,
    gt: Vec<f64>,
    /// Unrolled input of a convolution plus its polyphase scratch.
    col: Vec<f64>,
    /// Gwᵀ·Δ then ΔᵀΔ (forward, squared norms); Xᵀ then XᵀX; Δ·XᵀX.
    col2: Vec<f64>,
    xt: Vec<f64>,
    dpp: Vec<f64>,
    /// Per lane, for position-Gram convolutions: Y_k, Mt_k, Nt_k (see `pos_gram`).
    pg: Vec<f64>,
    /// Transposed output gradient (positions × channels) and the unrolled input gradient of
    /// one lane.
    dt: Vec<f64>,
    dcol: Vec<f64>,
    /// Element-wise coefficients of an activation's tangent maps.
    ca: Vec<f64>,
    cb: Vec<f64>,
    /// g·dg per lane, ⟨dg_a, dg_b⟩ (max_coords²), and per-lane scratch.
    s: Vec<f64>,
    d: Vec<f64>,
    u: Vec<f64>,
    w: Vec<f64>,
    /// Per input channel of a convolution, the bounding box of a lane's non-zero entries.
    bx: Vec<usize>,
    /// (tap or position, value) pairs of one output position or one tap.
    pt: Vec<usize>,
    pv: Vec<f64>,
    /// Packed operands (see `fil_kernels`): X and W of a convolution (per call), dΔ_kᵀ as
    /// left and as right operand (per lane).
    px: Vec<f64>,
    pw: Vec<f64>,
    pka: Vec<f64>,
    pkb: Vec<f64>,
    /// Position-Gram convolutions: XᵀX and Δᵀ packed (per call); dΔ_k packed as left and
    /// as right operand (per lane).
    pq: Vec<f64>,
    pkc: Vec<f64>,
    /// Per position-Gram convolution (other than layer 0) and lane: Nt = dXᵀ·X and ⟨tt, dX⟩
    /// (see `conv_tangent_forward`), gathered in the forward pass.
    ntf: Vec<f64>,
    /// Dense columns of a lane's dX and their positions (see [`SqTables`]).
    dd: Vec<f64>,
    tps: Vec<usize>,
    /// Dense layers: the lanes' output-gradient tangents and W, packed.
    pda: Vec<f64>,
    pdw: Vec<f64>,
    /// Forward pass: per lane, a box \[r0, r1, c0, c1\] (rows and columns, inclusive) outside
    /// of which every channel of the current lane is exactly zero.
    fbx: Vec<usize>,
    /// The boxes of every layer boundary, and whether they are valid.
    fbs: Vec<usize>,
    fok: Vec<bool>,
    /// Position-Gram convolutions: \[Wᵀ | X\] (see [`SqTables`]) and a scratch row.
    wx: Vec<f64>,
    gtmp: Vec<f64>,
}

/// Buffer lengths of a [`FilWorkspace`].
#[derive(PartialEq, Eq)]
struct Sizes {
    max_coords: usize,
    grad: usize,
    dl: usize,
    tf: usize,
    tb: usize,
    e: usize,
    db: usize,
    wt: usize,
    col: usize,
    dt: usize,
    dcol: usize,
    d: usize,
    col2: usize,
    xt: usize,
    pg: usize,
    pl: usize,
    bx: usize,
    px: usize,
    pw: usize,
    pka: usize,
    pkb: usize,
    pq: usize,
    pkc: usize,
    ntf: usize,
    dd: usize,
    tps: usize,
    pda: usize,
    pdw: usize,
    fbx: usize,
    fbs: usize,
    fok: usize,
    wx: usize,
    gtmp: usize,
}

impl FilWorkspace {
    /// The per-example gradient ∇_w ℓ (before clipping) of the last successful call, bit for
    /// bit what [`Sequential::loss_and_grad`] returns.
    pub fn gradient(&self) -> &[f64] {
        &self.grad
    }

    /// The largest number of coordinates per call.
    pub fn max_coords(&self) -> usize {
        self.max_coords
    }

    /// Keeps the current forward boxes (`fbx`) as those of boundary `b`, valid if `ok`.
    fn save_boxes(&mut self, b: usize, ok: bool) {
        let n = self.fbx.len();
        if let (Some(dst), Some(f)) = (self.fbs.get_mut(b * n..(b + 1) * n), self.fok.get_mut(b)) {
            dst.copy_from_slice(&self.fbx);
            *f = ok;
        }
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            max_coords: self.max_coords,
            grad: self.grad.len(),
            dl: self.dl.len(),
            tf: self.tf.len(),
            tb: self.tb0.len().min(self.tb1.len()),
            e: self.e.len(),
            db: self.db.len(),
            wt: self.wt.len().min(self.gt.len()),
            col: self.col.len(),
            dt: self
                .dt
                .len()
                .min(self.dpp.len())
                .min(self.ca.len())
                .min(self.cb.len()),
            dcol: self.dcol.len(),
            d: self.d.len(),
            col2: self.col2.len(),
            xt: self.xt.len(),
            pg: self.pg.len(),
            pl: self.pt.len().min(self.pv.len()),
            bx: self.bx.len(),
            px: self.px.len(),
            pw: self.pw.len(),
            pka: self.pka.len(),
            pkb: self.pkb.len(),
            pq: self.pq.len(),
            pkc: self.pkc.len(),
            ntf: self.ntf.len(),
            dd: self.dd.len(),
            tps: self.tps.len(),
            pda: self.pda.len(),
            pdw: self.pdw.len(),
            fbx: self.fbx.len(),
            fbs: self.fbs.len(),
            fok: self.fok.len(),
            wx: self.wx.len(),
            gtmp: self.gtmp.len(),
        }
    }
}

/// Calls `f(pos, tap)` for every (output position, tap) pair of the convolution `g` that
/// reads input element `idx` (flat index (c·H + h)·W + w); tap = (c·k + a)·k + b.
#[inline]
fn for_each_tap(g: &Geom, idx: usize, mut f: impl FnMut(usize, usize)) {
    let plane = g.h * g.w;
    if plane == 0 || g.w == 0 || g.s == 0 {
        return;
    }
    if g.ho == 0 || g.wo == 0 {
        return;
    }
    let (c, hh, ww) = (idx / plane, (idx / g.w) % g.h + g.p, idx % g.w + g.p);
    // Output rows i with a = hh − s·i in 0..k: i from ⌈(hh − k + 1)/s⌉ to ⌊hh/s⌋ (no
    // per-tap divisions).
    let first = |t: usize| (t + 1).saturating_sub(g.k).div_ceil(g.s);
    let (i0, i1) = (first(hh), (hh / g.s).min(g.ho - 1));
    let (j0, j1) = (first(ww), (ww / g.s).min(g.wo - 1));
    for i in i0..=i1 {
        let a = hh - g.s * i;
        for j in j0..=j1 {
            f(i * g.wo + j, (c * g.k + a) * g.k + (ww - g.s * j));
        }
    }
}

/// Whether a convolution's inner products go through the position Gram XᵀX (P × P, P
/// output positions) rather than the explicit tap-space products dΔ·Xᵀ (K taps): when
/// 2P ≤ K (the products then cost O·P² instead of O·K·P per coordinate) and P ≤ 64 (bounds
/// the 2P² per-coordinate storage).
fn pos_gram(g: &Geom) -> bool {
    let (np, kk) = (g.ho * g.wo, g.c * g.k * g.k);
    2 * np <= kk && np <= 64
}

/// For a position-Gram convolution: the lengths of XᵀX packed as right operand plus Δᵀ
/// duplicated (see `kernels::gemm_dup`), and of dΔ_k packed as left operand.
fn pg_packed_lens(g: &Geom) -> (usize, usize) {
    let np = g.ho * g.wo;
    (
        packed_b_len(np, np) + 2 * g.o * np,
        packed_a_len(g.o, np, pick_mr(g.o)),
    )
}

/// dst += v·src.
#[inline(always)]
fn axpy(dst: &mut [f64], v: f64, src: &[f64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d += v * s;
    }
}

/// Writes the transpose of the row-major `rows × cols` matrix `src` into `dst`
/// (`cols × rows`).
fn transpose(src: &[f64], rows: usize, cols: usize, dst: &mut [f64]) {
    if cols == 0 || rows == 0 {
        return;
    }
    let (Some(src), Some(dst)) = (src.get(..rows * cols), dst.get_mut(..rows * cols)) else {
        return;
    };
    for (c, drow) in dst.chunks_exact_mut(rows).enumerate() {
        for (d, &v) in drow.iter_mut().zip(src.iter().skip(c).step_by(cols)) {
            *d = v;
        }
    }
}

/// Writes into `bx[4·c..4·c + 4]`, for every input channel c of the convolution `g`, the
/// padded-coordinate bounding box \[r0 + p, r1 + p, q0 + p, q1 + p\] of the non-zero (or NaN)
/// entries of channel c of `lane` (C × H × W), or \[1, 0, 1, 0\] (empty) if there are none.
fn channel_boxes(g: &Geom, lane: &[f64], bx: &mut [usize]) {
    if g.w == 0 || g.h == 0 {
        return;
    }
    for (plane, b) in lane
        .chunks_exact(g.h * g.w)
        .zip(bx.chunks_exact_mut(4))
        .take(g.c)
    {
        let mut bb = [1, 0, 1, 0];
        let mut any = false;
        for (r, row) in plane.chunks_exact(g.w).enumerate() {
            let Some(q0) = row.iter().position(|&v| v != 0.0) else {
                continue;
            };
            let q1 = row.iter().rposition(|&v| v != 0.0).unwrap_or(q0);
            if any {
                bb = [bb[0], r + g.p, bb[2].min(q0 + g.p), bb[3].max(q1 + g.p)];
            } else {
                bb = [r + g.p, r + g.p, q0 + g.p, q1 + g.p];
                any = true;
            }
        }
        b.copy_from_slice(&bb);
    }
}

/// The output indices i < n whose window \[s·i − p, s·i − p + k − 1\] meets \[lo, hi\]
/// (inclusive bounds; (1, 0) if there are none).
fn window_hits(lo: usize, hi: usize, k: usize, s: usize, p: usize, n: usize) -> (usize, usize) {
    if lo > hi || n == 0 || s == 0 || k == 0 {
        return (1, 0);
    }
    let i0 = (lo + p + 1).saturating_sub(k).div_ceil(s);
    let i1 = ((hi + p) / s).min(n - 1);
    if i0 > i1 {
        (1, 0)
    } else {
        (i0, i1)
    }
}

/// The box \[r0, r1, c0, c1\] (inclusive, unpadded) of the output of `g` reached from an
/// input box.
fn box_through(g: &Geom, b: [usize; 4]) -> [usize; 4] {
    let (r0, r1) = window_hits(b[0], b[1], g.k, g.s, g.p, g.ho);
    let (c0, c1) = window_hits(b[2], b[3], g.k, g.s, g.p, g.wo);
    [r0, r1, c0, c1]
}

/// Calls `f(idx, [c, r, q])` for the flat indices idx = (c·H + r)·W + q of every channel
/// c < C and (r, q) in the box `b` (inclusive) of a C × H × W tensor.
#[inline]
fn for_box(c: usize, h: usize, w: usize, b: [usize; 4], mut f: impl FnMut(usize, [usize; 3])) {
    if b[0] > b[1] || b[2] > b[3] || b[1] >= h || b[3] >= w {
        return;
    }
    for ch in 0..c {
        for r in b[0]..=b[1] {
            let base = (ch * h + r) * w;
            for q in b[2]..=b[3] {
                f(base + q, [ch, r, q]);
            }
        }
    }
}

/// The offsets a < k with lo ≤ t + a ≤ hi.
#[inline(always)]
fn offset_range(lo: usize, hi: usize, t: usize, k: usize) -> core::ops::Range<usize> {
    if hi < t || lo > hi {
        return 0..0;
    }
    let a0 = lo.saturating_sub(t);
    a0..(hi - t + 1).min(k).max(a0)
}

/// dst\[ch·stride\] = Σ_n pv\[n\]·src\[pt\[n\]·o + ch\] for ch in 0..o, each sum in the order of
/// the pairs starting from 0 (as repeated `axpy`s would), `B` channels at a time in registers.
#[inline(always)]
fn gather_rows(pt: &[usize], pv: &[f64], src: &[f64], o: usize, dst: &mut [f64], stride: usize) {
    const B: usize = 8;
    let mut ch = 0;
    while ch + B <= o {
        let mut acc = [0.0f64; B];
        for (&t, &v) in pt.iter().zip(pv) {
            if let Some(row) = src.get(t * o + ch..).and_then(|r| r.first_chunk::<B>()) {
                for (a, &w) in acc.iter_mut().zip(row) {
                    *a += v * w;
                }
            }
        }
        for (b, &a) in acc.iter().enumerate() {
            if let Some(d) = dst.get_mut((ch + b) * stride) {
                *d = a;
            }
        }
        ch += B;
    }
    while ch < o {
        let mut acc = 0.0;
        for (&t, &v) in pt.iter().zip(pv) {
            acc += v * src.get(t * o + ch).copied().unwrap_or(0.0);
        }
        if let Some(d) = dst.get_mut(ch * stride) {
            *d = acc;
        }
        ch += 1;
    }
}

/// Forward tangent of a convolution (no bias) for a dense input tangent `lane` (C × H × W):
/// `yk` (channel-major, O × P) = W·dX, where `wt` is Wᵀ (taps × channels). Each output
/// position sums its (tap, value) pairs over the non-zero entries of the lane in increasing
/// input index, as a scatter over those entries would.
///
/// With `sq` (squared norms through the position Gram), also the terms of ‖dG‖² and g·dG
/// that involve the input tangent dX (taps × positions), into `nt` (see [`SqTables`]):
/// Nt = dXᵀ·X (positions × positions, `nt[..P²]`), ⟨Gwᵀ·Δ, dX⟩ = ⟨Gw, Δ·dXᵀ⟩ (`nt[P²]`) and
/// ‖Δ·dXᵀ‖² = Σ_{p,q} (ΔᵀΔ)\[p, q\]·⟨dX\[·, p\], dX\[·, q\]⟩ (`nt[P² + 1]`), over the same
/// pairs (the last through dense copies of the touched columns of dX).
#[allow(clippy::too_many_arguments)]
fn conv_tangent_forward(
    g: &Geom,
    wt: &[f64],
    lane: &[f64],
    yk: &mut [f64],
    bx: &mut [usize],
    pt: &mut [usize],
    pv: &mut [f64],
    sq: Option<(&mut SqTables<'_>, &mut [f64])>,
    known: Option<[usize; 4]>,
) {
    let (mut st, mut touched) = (0.0, 0);
    let kk = g.c * g.k * g.k;
    let (mut tabs, nt) = match sq {
        Some((t, nt)) => (Some(t), nt),
        None => (None, &mut [][..]),
    };
    match known {
        // One box for every channel, in padded coordinates.
        Some([r0, r1, c0, c1]) => {
            let b = if r0 <= r1 && c0 <= c1 {
                [r0 + g.p, r1 + g.p, c0 + g.p, c1 + g.p]
            } else {
                [1, 0, 1, 0]
            };
            for d in bx.chunks_exact_mut(4).take(g.c) {
                d.copy_from_slice(&b);
            }
        }
        None => channel_boxes(g, lane, bx),
    }
    let (np, plane) = (g.ho * g.wo, g.h * g.w);
    for i in 0..g.ho {
        for j in 0..g.wo {
            let pos = i * g.wo + j;
            let mut n = 0;
            for (c, b) in bx.chunks_exact(4).take(g.c).enumerate() {
                let pl = lane.get(c * plane..(c + 1) * plane).unwrap_or_default();
                for a in offset_range(b[0], b[1], g.s * i, g.k) {
                    let r = g.s * i + a - g.p;
                    for bb in offset_range(b[2], b[3], g.s * j, g.k) {
                        let v = pl.get(r * g.w + g.s * j + bb - g.p).copied().unwrap_or(0.0);
                        if v != 0.0 {
                            if let (Some(t), Some(x)) = (pt.get_mut(n), pv.get_mut(n)) {
                                (*t, *x) = ((c * g.k + a) * g.k + bb, v);
                                n += 1;
                            }
                        }
                    }
                }
            }
            let (Some(pt), Some(pv)) = (pt.get(..n), pv.get(..n)) else {
                return;
            };
            if let Some(tb) = tabs.as_deref_mut() {
                // One gather over the rows [Wᵀ | X] of `wx`, then Y's column and Nt's row.
                let wd = (g.o + np).next_multiple_of(4);
                fil_kernels::gather_rows_into(pt, pv, tb.wx, wd, tb.tmp);
                let (yo, no) = tb.tmp.split_at(g.o.min(tb.tmp.len()));
                for (yv, &v) in yk
                    .get_mut(pos..)
                    .unwrap_or_default()
                    .iter_mut()
                    .step_by(np)
                    .zip(yo)
                {
                    *yv = v;
                }
                if let Some(d) = nt.get_mut(pos * np..(pos + 1) * np) {
                    d.copy_from_slice(no.get(..np).unwrap_or_default());
                }
                for (&t, &v) in pt.iter().zip(pv) {
                    st += v * tb.tt.get(t * np + pos).copied().unwrap_or(f64::NAN);
                }
                // The dense column dX[·, pos] (taps are distinct within a position).
                if n > 0 {
                    if let (Some(row), Some(tp)) = (
                        tb.dd.get_mut(touched * kk..(touched + 1) * kk),
                        tb.touched.get_mut(touched),
                    ) {
                        for (&t, &v) in pt.iter().zip(pv) {
                            if let Some(d) = row.get_mut(t) {
                                *d = v;
                            }
                        }
                        *tp = pos;
                        touched += 1;
                    }
                }
            } else {
                gather_rows(pt, pv, wt, g.o, yk.get_mut(pos..).unwrap_or_default(), np);
            }
        }
    }
    let Some(tb) = tabs else {
        return;
    };
    let mut quad = 0.0;
    let tps = tb.touched.get(..touched).unwrap_or_default();
    for (a, &p) in tps.iter().enumerate() {
        let rp = tb.dd.get(a * kk..(a + 1) * kk).unwrap_or_default();
        let grow = tb.gd.get(p * np..(p + 1) * np).unwrap_or_default();
        let mut acc = 0.0;
        for (b, &q) in tps.iter().enumerate().skip(a + 1) {
            let rq = tb.dd.get(b * kk..(b + 1) * kk).unwrap_or_default();
            acc += grow.get(q).copied().unwrap_or(f64::NAN) * dot(rp, rq);
        }
        quad += 2.0 * acc + grow.get(p).copied().unwrap_or(f64::NAN) * dot(rp, rp);
    }
    if let Some(dd) = tb.dd.get_mut(..touched * kk) {
        dd.fill(0.0);
    }
    if let Some([s, q]) = nt.get_mut(np * np..).and_then(|r| r.first_chunk_mut::<2>()) {
        (*s, *q) = (st, quad);
    }
}

/// Per-example tables and scratch of the squared-norm terms gathered by
/// `conv_tangent_forward`: X (`col`) and Gwᵀ·Δ (`tt`, both taps × positions), ΔᵀΔ (`gd`,
/// positions × positions), dense columns of dX (`dd`, positions × taps, zero on entry and on
/// exit) and the positions they belong to (`touched`).
struct SqTables<'a> {
    /// Rows \[Wᵀ\[t\] | X\[t\] | 0\] (taps × (O + P rounded up to a multiple of 4)) and a
    /// scratch row.
    wx: &'a [f64],
    tmp: &'a mut [f64],
    tt: &'a [f64],
    gd: &'a [f64],
    dd: &'a mut [f64],
    touched: &'a mut [usize],
}

#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    kernels::dot::<f64, f64>(a, b)
}

/// The non-zero entries of an input tangent: the one-hot e_c of an input coordinate, or a
/// dense lane scanned for non-zeros.
#[derive(Clone, Copy)]
enum Tangent<'a> {
    OneHot(usize),
    Dense(&'a [f64]),
}

impl Tangent<'_> {
    #[inline]
    fn for_each_nonzero(self, mut f: impl FnMut(usize, f64)) {
        match self {
            Tangent::OneHot(c) => f(c, 1.0),
            Tangent::Dense(v) => {
                for (i, &t) in v.iter().enumerate() {
                    if t != 0.0 {
                        f(i, t);
                    }
                }
            }
        }
    }
}

impl Sequential {
    /// Per lane, the `fw.ntf` entries of the position-Gram convolutions (other than layer 0)
    /// before layer `l` (all of them for `l` = number of layers).
    fn sq_pg_offset(&self, l: usize) -> usize {
        let mut off = 0;
        for (i, n) in self.nodes.iter().enumerate().take(l) {
            if let Layer::Conv2d { .. } = n.layer {
                let g = geom(n);
                if i != 0 && pos_gram(&g) {
                    off += g.ho * g.wo * g.ho * g.wo + 2;
                }
            }
        }
        off
    }

    fn fil_sizes(&self, max_coords: usize) -> Sizes {
        let (mut mw, mut mb, mut col, mut dcol) = (0usize, 0usize, 0usize, 0usize);
        let (mut xt, mut lane_pg, mut pl, mut bx) = (0usize, 0usize, 0usize, 0usize);
        let (mut px, mut pw, mut pka, mut pkb) = (0usize, 0usize, 0usize, 0usize);
        let (mut pq, mut pkc, mut dd, mut tps) = (0usize, 0usize, 0usize, 0usize);
        let (mut pda, mut pdw, mut wx, mut gtmp) = (0usize, 0usize, 0usize, 0usize);
        for n in &self.nodes {
            mw = mw.max(n.weights);
            mb = mb.max(n.biases);
            if let Layer::Dense { .. } = n.layer {
                pda = pda.max(packed_a_len(max_coords, n.out_len, pick_mr(max_coords)));
                pdw = pdw.max(packed_b_len(n.out_len, n.in_len));
            }
            if let Layer::Conv2d { .. } = n.layer {
                let g = geom(n);
                col = col.max(g.pad_len());
                dcol = dcol.max(g.col_len());
                pl = pl.max(g.c * g.k * g.k).max(g.ho * g.wo);
                bx = bx.max(4 * g.c);
                let (kk, np) = (g.c * g.k * g.k, g.ho * g.wo);
                pw = pw.max(packed_b_len(g.o, kk));
                pka = pka.max(packed_a_len(np, g.o, pick_mr(np)));
                if !pos_gram(&g) {
                    px = px.max(packed_a_len(kk, np, pick_mr(kk)));
                    pkb = pkb.max(packed_b_len(np, g.o));
                }
                if pos_gram(&g) {
                    let pp = g.ho * g.wo * g.ho * g.wo;
                    xt = xt.max(g.col_len() + pp);
                    lane_pg = lane_pg.max(n.out_len + 2 * pp);
                    let (q, c) = pg_packed_lens(&g);
                    pq = pq.max(q);
                    pkc = pkc.max(c);
                    dd = dd.max(g.col_len());
                    let wd = (g.o + g.ho * g.wo).next_multiple_of(4);
                    wx = wx.max(g.c * g.k * g.k * wd);
                    gtmp = gtmp.max(wd);
                    tps = tps.max(g.ho * g.wo);
                }
            }
        }
        Sizes {
            max_coords,
            grad: self.num_params,
            dl: self.acts_len,
            tf: max_coords.saturating_mul(self.acts_len),
            tb: max_coords.saturating_mul(self.max_len),
            e: max_coords.saturating_mul(mw),
            db: max_coords.saturating_mul(mb),
            wt: mw,
            col,
            dt: self.max_len,
            dcol,
            d: max_coords.saturating_mul(max_coords),
            col2: 2 * dcol,
            xt,
            pg: max_coords.saturating_mul(lane_pg).max(2 * self.max_len),
            pl,
            bx,
            px,
            pw,
            pka,
            pkb,
            pq,
            pkc,
            ntf: max_coords.saturating_mul(self.sq_pg_offset(self.nodes.len())),
            dd,
            tps,
            pda,
            pdw,
            fbx: 4 * max_coords,
            fbs: (self.nodes.len() + 1).saturating_mul(4 * max_coords),
            fok: self.nodes.len() + 1,
            wx,
            gtmp,
        }
    }

    /// A workspace for [`clipped_jvp_gram`](Self::clipped_jvp_gram) and
    /// [`clipped_jvp_sq_norms`](Self::clipped_jvp_sq_norms) with up to `max_coords`
    /// coordinates per call. Allocates O(max_coords · (Σ layer sizes + largest layer's
    /// weights)) `f64`s; reuse it.
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(3)?;
    /// let ws = model.fil_workspace(2);
    /// assert_eq!(ws.max_coords(), 2);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn fil_workspace(&self, max_coords: usize) -> FilWorkspace {
        let z = self.fil_sizes(max_coords);
        let v = |n: usize| {
            let mut v = Vec::new();
            v.resize(n, 0.0);
            v
        };
        FilWorkspace {
            ws: self.workspace::<f64>(),
            max_coords,
            grad: v(z.grad),
            dl: v(z.dl),
            tf: v(z.tf),
            tb0: v(z.tb),
            tb1: v(z.tb),
            e: v(z.e),
            db: v(z.db),
            wt: v(z.wt),
            gt: v(z.wt),
            col: v(z.col),
            dt: v(z.dt),
            dcol: v(z.dcol),
            col2: v(z.col2),
            xt: v(z.xt),
            dpp: v(z.dt),
            pg: v(z.pg),
            ca: v(z.dt),
            cb: v(z.dt),
            s: v(max_coords),
            d: v(z.d),
            u: v(max_coords),
            w: v(max_coords),
            bx: alloc::vec![0; z.bx],
            pt: alloc::vec![0; z.pl],
            pv: v(z.pl),
            px: v(z.px),
            pw: v(z.pw),
            pka: v(z.pka),
            pkb: v(z.pkb),
            pq: v(z.pq),
            pkc: v(z.pkc),
            ntf: v(z.ntf),
            dd: v(z.dd),
            tps: alloc::vec![0; z.tps],
            pda: v(z.pda),
            pdw: v(z.pdw),
            fbx: alloc::vec![0; z.fbx],
            fbs: alloc::vec![0; z.fbs],
            fok: alloc::vec![false; z.fok],
            wx: v(z.wx),
            gtmp: v(z.gtmp),
        }
    }

    /// The loss and the Gram matrix of the derivatives of the clipped per-example gradient
    /// along the input coordinates `coords`:
    /// `gram[a·m + b]` = ⟨∂g̃/∂x_{coords\[a\]}, ∂g̃/∂x_{coords\[b\]}⟩ (m = `coords.len()`,
    /// row-major, symmetric), g̃ = [`clip`](crate::train::clip::clip)`(∇_w ℓ(w; x, label),
    /// method, clip_norm)`. Its trace over coordinates drawn without replacement estimates
    /// Tr(JᵀJ) (Guo et al. 2022, Eq. 5); the full matrix over all d coordinates is JᵀJ.
    /// Coordinates may repeat. The same as [`loss_and_grad_jvp`](Self::loss_and_grad_jvp)
    /// followed by `clip` and inner products of the tangent lanes, up to rounding (see the
    /// method notes in the source module), but without p-dimensional tangents: dense layers
    /// cost O(in + out) per pair of coordinates, and a seeded pixel's tangent is propagated
    /// only through its receptive field where it is sparse. For the trace alone use
    /// [`clipped_jvp_sq_norms`](Self::clipped_jvp_sq_norms) (the Gram needs m²/2 inner
    /// products of each convolution's weight-gradient derivatives).
    ///
    /// `ws.gradient()` then holds ∇_w ℓ (unclipped).
    ///
    /// # Formula
    ///
    /// With g = ∇_w ℓ, n = ‖g‖, the clipping factor c(n) (hard: min(1, C/n); GELU:
    /// 1/(GELU(n/C − 1) + 1)) and dg_a = ∂g/∂x_{coords\[a\]}:
    /// ⟨dg̃_a, dg̃_b⟩ = c²⟨dg_a, dg_b⟩ + (2cc′/n + c′²)(g·dg_a)(g·dg_b) (the second term is 0
    /// at g = 0). Hard clipping: c′ = 0 for n ≤ C (at n = C the derivative from inside, as
    /// `clip`).
    ///
    /// # Citations
    ///
    /// Guo, Karrer, Chaudhuri, van der Maaten 2022, Alg. 1 and Eq. 5,
    /// `guo2022-bounding-reconstruction-fil-rdp.txt`.
    ///
    /// # Errors
    ///
    /// - As [`loss_and_grad`](Self::loss_and_grad) (`params`, `x`, `label`).
    /// - [`Error::InvalidParameter`] `clip_norm` unless finite and > 0.
    /// - [`Error::InvalidCount`] `coords` if there are more than `ws.max_coords()` or one is
    ///   ≥ d.
    /// - [`Error::Inconsistent`] if `gram.len()` ≠ m² or `ws` was not made by this model.
    /// - [`Error::Numerical`] if the loss, the gradient, its norm or an entry of the Gram
    ///   matrix is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// use reconbound::train::clip::ClipMethod;
    /// let model = arch::logistic_regression(2)?;
    /// let mut ws = model.fil_workspace(2);
    /// let mut gram = [0.0; 4];
    /// // w = 0, label 1: ∇_w ℓ = −(x₀, x₁, 1)/2, ∂/∂x₀ = (−1/2, 0, 0), ∂/∂x₁ = (0, −1/2, 0);
    /// // ‖g‖ = √21/2 < C = 10, so no clipping: Gram = diag(1/4, 1/4).
    /// model.clipped_jvp_gram(&[0.0; 3], &[2.0, 4.0], 1, &[0, 1], ClipMethod::Hard, 10.0,
    ///     &mut gram, &mut ws)?;
    /// assert_eq!(gram, [0.25, 0.0, 0.0, 0.25]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn clipped_jvp_gram(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        method: ClipMethod,
        clip_norm: f64,
        gram: &mut [f64],
        ws: &mut FilWorkspace,
    ) -> Result<f64> {
        if Some(gram.len()) != coords.len().checked_mul(coords.len()) {
            return inconsistent("gram.len() must equal coords.len()²", gram.len());
        }
        self.fil_run(params, x, label, coords, method, clip_norm, gram, true, ws)
    }

    /// The loss and the squared norms ‖∂g̃/∂x_{coords\[a\]}‖² (the diagonal of
    /// [`clipped_jvp_gram`](Self::clipped_jvp_gram)) written into `sq_norms` (length m =
    /// `coords.len()`); their mean over coordinates drawn uniformly without replacement
    /// times d is the unbiased estimate of Tr(JᵀJ) of Guo et al. 2022, Eq. 5. Cheaper than
    /// the Gram matrix (no cross products).
    ///
    /// # Formula
    ///
    /// ‖dg̃_a‖² = c²‖dg_a‖² + (2cc′/n + c′²)(g·dg_a)², notation of
    /// [`clipped_jvp_gram`](Self::clipped_jvp_gram).
    ///
    /// # Citations
    ///
    /// Guo, Karrer, Chaudhuri, van der Maaten 2022, Alg. 1 and Eq. 5,
    /// `guo2022-bounding-reconstruction-fil-rdp.txt`.
    ///
    /// # Errors
    ///
    /// As [`clipped_jvp_gram`](Self::clipped_jvp_gram), with `sq_norms.len()` ≠ m an
    /// [`Error::Inconsistent`].
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// use reconbound::train::clip::ClipMethod;
    /// let model = arch::logistic_regression(2)?;
    /// let mut ws = model.fil_workspace(2);
    /// let mut sq = [0.0; 2];
    /// model.clipped_jvp_sq_norms(&[0.0; 3], &[2.0, 4.0], 1, &[0, 1], ClipMethod::Hard, 10.0,
    ///     &mut sq, &mut ws)?;
    /// assert_eq!(sq, [0.25, 0.25]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn clipped_jvp_sq_norms(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        method: ClipMethod,
        clip_norm: f64,
        sq_norms: &mut [f64],
        ws: &mut FilWorkspace,
    ) -> Result<f64> {
        if sq_norms.len() != coords.len() {
            return inconsistent("sq_norms.len() must equal coords.len()", sq_norms.len());
        }
        self.fil_run(
            params, x, label, coords, method, clip_norm, sq_norms, false, ws,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn fil_run(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        method: ClipMethod,
        clip_norm: f64,
        out: &mut [f64],
        full: bool,
        fw: &mut FilWorkspace,
    ) -> Result<f64> {
        self.check_params::<f64, f64>(params)?;
        self.check_x(x)?;
        self.check_label(label)?;
        check_positive("clip_norm", clip_norm)?;
        if fw.sizes() != self.fil_sizes(fw.max_coords) {
            return inconsistent(
                "ws was not made by this model's fil_workspace()",
                fw.grad.len(),
            );
        }
        self.check_workspace(&fw.ws)?;
        if coords.len() > fw.max_coords {
            return Err(Error::InvalidCount {
                name: "coords",
                value: coords.len() as u64,
                expected: "at most ws.max_coords() coordinates",
            });
        }
        if let Some(&c) = coords.iter().find(|&&c| c >= self.input_len) {
            return Err(Error::InvalidCount {
                name: "coords",
                value: c as u64,
                expected: "< input_len() (a coordinate of x)",
            });
        }
        // The first layer with parameters: nothing below it needs a backward pass.
        let first = self
            .nodes
            .iter()
            .position(|n| n.weights + n.biases > 0)
            .unwrap_or(0);
        if let Some(input) = fw.ws.acts.get_mut(..self.input_len) {
            input.copy_from_slice(x);
        }
        self.forward_unchecked(params, &mut fw.ws, 0);
        let loss = self.fil_primal_backward(params, label, first, fw);
        super::check_output(loss, &fw.grad)?;
        let norm = l2_norm(&fw.grad);
        if !norm.is_finite() {
            return Err(Error::Numerical {
                what: "the gradient norm is not finite",
                value: norm,
            });
        }
        let f = clip_factor(Dual::<1>::new(norm, [1.0]), method, clip_norm);
        let (c, cp) = (f.value, f.tangent[0]);
        let m = coords.len();
        if m == 0 {
            return Ok(loss);
        }
        self.fil_tangents(params, coords, first, full, fw);
        let kappa = if norm > 0.0 {
            2.0 * c * cp / norm + cp * cp
        } else {
            0.0
        };
        let c2 = c * c;
        let (d, s) = (&fw.d, &fw.s);
        if full {
            for (i, row) in out.chunks_exact_mut(m).enumerate() {
                for (j, o) in row.iter_mut().enumerate() {
                    let (a, b) = if i <= j { (i, j) } else { (j, i) };
                    let dij = d.get(a * m + b).copied().unwrap_or(f64::NAN);
                    let (si, sj) = (
                        s.get(i).copied().unwrap_or(f64::NAN),
                        s.get(j).copied().unwrap_or(f64::NAN),
                    );
                    *o = c2 * dij + kappa * (si * sj);
                }
            }
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                let dii = d.get(i * m + i).copied().unwrap_or(f64::NAN);
                let si = s.get(i).copied().unwrap_or(f64::NAN);
                // A squared norm: under hard clipping c² ‖dg‖² and κ(g·dg)² (κ < 0) can cancel
                // to a tiny negative number; clamp at 0 (its true value is ≥ 0).
                // (`max` would also turn a NaN into 0; this keeps it for the check below.)
                let v = c2 * dii + kappa * (si * si);
                *o = if v < 0.0 { 0.0 } else { v };
            }
        }
        if let Some(&bad) = out.iter().find(|v| !v.is_finite()) {
            return Err(Error::Numerical {
                what: "non-finite derivative of the clipped gradient",
                value: bad,
            });
        }
        Ok(loss)
    }

    /// Loss and backward pass in `f64` (the same kernels, in the same order, as
    /// [`loss_and_grad`](Self::loss_and_grad), so `fw.grad` is bit-identical), keeping the
    /// gradient with respect to every layer boundary in `fw.dl`.
    fn fil_primal_backward(
        &self,
        params: &[f64],
        label: usize,
        first: usize,
        fw: &mut FilWorkspace,
    ) -> f64 {
        let ws = &mut fw.ws;
        let start = self.act_offsets.last().copied().unwrap_or(0);
        let out_len = self.output_len();
        let (Some(z), Some(dz)) = (ws.acts.get(start..), fw.dl.get_mut(start..start + out_len))
        else {
            return f64::NAN;
        };
        let loss = self.loss.value_and_grad(z, label, dz);
        for (l, node) in self.nodes.iter().enumerate().skip(first).rev() {
            let need_dx = l > first;
            let (Some(&a0), Some(&a1)) = (self.act_offsets.get(l), self.act_offsets.get(l + 1))
            else {
                return f64::NAN;
            };
            let cut = a1.min(fw.dl.len());
            let (lo, hi) = fw.dl.split_at_mut(cut);
            let (Some(x), Some(y), Some(dy), Some(dx)) = (
                ws.acts.get(a0..a1),
                ws.acts.get(a1..a1 + node.out_len),
                hi.get(..node.out_len),
                lo.get_mut(a0..),
            ) else {
                return f64::NAN;
            };
            let dx_opt = if need_dx { Some(dx) } else { None };
            let scratch = (&mut ws.pad[..], &mut ws.dpad[..], &mut ws.wide[..]);
            if !backward_node(node, params, x, y, dy, &mut fw.grad, dx_opt, scratch) {
                return f64::NAN;
            }
        }
        loss
    }

    /// Forward tangents of every layer along the seeded coordinates, then their backward
    /// derivatives, accumulating ⟨dg_a, dg_b⟩ into `fw.d` (upper triangle, or the diagonal
    /// unless `full`) and g·dg_a into `fw.s`.
    fn fil_tangents(
        &self,
        params: &[f64],
        coords: &[usize],
        first: usize,
        full: bool,
        fw: &mut FilWorkspace,
    ) {
        let (m, mx) = (coords.len(), fw.max_coords);
        fw.s.fill(0.0);
        fw.d.fill(0.0);
        // Layer 0 reads the seeded input directly if it is dense or convolutional; otherwise
        // the one-hot input tangents are written out.
        let onehot0 = matches!(
            self.nodes.first().map(|n| n.layer),
            Some(Layer::Dense { .. } | Layer::Conv2d { .. })
        );
        if !onehot0 {
            let d = self.input_len;
            for (k, lane) in fw.tf.chunks_exact_mut(d).take(m).enumerate() {
                lane.fill(0.0);
                if let Some(t) = coords.get(k).and_then(|&c| lane.get_mut(c)) {
                    *t = 1.0;
                }
            }
        }
        // Forward. `boxed`: the lanes' boxes in `fw.fbx` are valid (from a one-hot input
        // through convolutions, poolings and activations).
        let mut boxed = false;
        fw.fok.fill(false);
        for (l, node) in self.nodes.iter().enumerate() {
            let (Some(&a0), Some(&a1)) = (self.act_offsets.get(l), self.act_offsets.get(l + 1))
            else {
                return;
            };
            fw.save_boxes(l, boxed);
            let (n_in, n_out) = (node.in_len, node.out_len);
            let cut = (mx * a1).min(fw.tf.len());
            let (lo, hi) = fw.tf.split_at_mut(cut);
            let xin = lo.get(mx * a0..).unwrap_or_default();
            let (Some(x), Some(y)) = (fw.ws.acts.get(a0..a1), fw.ws.acts.get(a1..a1 + n_out))
            else {
                return;
            };
            let lanes_out = hi.chunks_exact_mut(n_out).take(m);
            let (w, _) = layer_params(node, params);
            match node.layer {
                Layer::Dense { .. } => {
                    boxed = false;
                    for (k, yk) in lanes_out.enumerate() {
                        if l == 0 {
                            let c = coords.get(k).copied().unwrap_or(0);
                            for (o, yv) in yk.iter_mut().enumerate() {
                                *yv = w.get(o * n_in + c).copied().unwrap_or(0.0);
                            }
                        } else if let Some(xk) = xin.get(k * n_in..(k + 1) * n_in) {
                            for (yv, row) in yk.iter_mut().zip(w.chunks_exact(n_in)) {
                                *yv = dot(row, xk);
                            }
                        }
                    }
                }
                Layer::Conv2d { .. } => {
                    let g = geom(node);
                    let (kk, o, np) = (g.c * g.k * g.k, g.o, g.ho * g.wo);
                    if l == 0 {
                        // One-hot input: scatter the few (position, tap) pairs straight into
                        // the channel-major output, reading W's columns.
                        for ((k, yk), bk) in lanes_out.enumerate().zip(fw.fbx.chunks_exact_mut(4)) {
                            yk.fill(0.0);
                            let c = coords.get(k).copied().unwrap_or(0);
                            if g.w > 0 && g.h > 0 {
                                let (r, q) = ((c / g.w) % g.h, c % g.w);
                                bk.copy_from_slice(&box_through(&g, [r, r, q, q]));
                            }
                            for_each_tap(&g, c, |pos, tap| {
                                let wcol = w.get(tap..).unwrap_or_default().iter().step_by(kk);
                                let ycol = yk.get_mut(pos..).unwrap_or_default();
                                for (yv, &wv) in ycol.iter_mut().step_by(np).zip(wcol) {
                                    *yv += wv;
                                }
                            });
                        }
                        boxed = m <= fw.fbx.len() / 4;
                        continue;
                    }
                    transpose(w, o, kk, &mut fw.wt);
                    // Squared norms through the position Gram: the dX terms are gathered here
                    // (see `conv_tangent_forward`), per lane into `fw.ntf`.
                    let (sq, lane_nt) = (!full && pos_gram(&g), np * np + 2);
                    let mut tabs = None;
                    let mut nt_lanes = fw.ntf.get_mut(..0).unwrap_or_default().chunks_mut(1);
                    if sq {
                        let (Some(gw), Some(delta)) = (
                            fw.grad.get(node.offset..node.offset + node.weights),
                            fw.dl.get(a1..a1 + n_out),
                        ) else {
                            return;
                        };
                        transpose(gw, o, kk, &mut fw.gt);
                        let cut = g.col_len().min(fw.col.len());
                        let (col, poly) = fw.col.split_at_mut(cut);
                        kernels::im2col(&g, x, col, poly);
                        let (Some(c2), Some(gt), Some(dd), Some(tps)) = (
                            fw.col2.get_mut(..g.col_len() + np * np),
                            fw.gt.get(..kk * o),
                            fw.dd.get_mut(..g.col_len()),
                            fw.tps.get_mut(..np),
                        ) else {
                            return;
                        };
                        let (t1, t2) = c2.split_at_mut(g.col_len());
                        // Gwᵀ·Δ (taps × positions) and ΔᵀΔ (positions × positions).
                        kernels::gemm(kk, np, o, gt, delta, t1, |u: f64, v: f64| u * v);
                        transpose(delta, o, np, &mut fw.dt);
                        let dt = fw.dt.get(..n_out).unwrap_or_default();
                        kernels::gemm(np, np, o, dt, delta, t2, |u: f64, v: f64| u * v);
                        dd.fill(0.0);
                        let wd = (o + np).next_multiple_of(4);
                        let (Some(wx), Some(tmp), Some(wt)) = (
                            fw.wx.get_mut(..kk * wd),
                            fw.gtmp.get_mut(..wd),
                            fw.wt.get(..kk * o),
                        ) else {
                            return;
                        };
                        for ((row, wr), xr) in wx
                            .chunks_exact_mut(wd)
                            .zip(wt.chunks_exact(o))
                            .zip(col.chunks_exact(np))
                        {
                            let (a, b) = row.split_at_mut(o);
                            let (b, z) = b.split_at_mut(np);
                            a.copy_from_slice(wr);
                            b.copy_from_slice(xr);
                            z.fill(0.0);
                        }
                        tabs = Some(SqTables {
                            wx,
                            tmp,
                            tt: t1,
                            gd: t2,
                            dd,
                            touched: tps,
                        });
                        let off = mx * self.sq_pg_offset(l);
                        let Some(nt) = fw.ntf.get_mut(off..off + mx * lane_nt) else {
                            return;
                        };
                        nt_lanes = nt.chunks_mut(lane_nt);
                    }
                    for ((k, yk), bk) in lanes_out.enumerate().zip(fw.fbx.chunks_exact_mut(4)) {
                        let lane = xin.get(k * n_in..(k + 1) * n_in).unwrap_or_default();
                        let known = match bk.first_chunk::<4>() {
                            Some(&b) if boxed => {
                                bk.copy_from_slice(&box_through(&g, b));
                                Some(b)
                            }
                            _ => None,
                        };
                        let sqk = match (tabs.as_mut(), nt_lanes.next()) {
                            (Some(t), Some(nt)) => Some((t, nt)),
                            _ => None,
                        };
                        if sq && sqk.is_none() {
                            return;
                        }
                        conv_tangent_forward(
                            &g, &fw.wt, lane, yk, &mut fw.bx, &mut fw.pt, &mut fw.pv, sqk, known,
                        );
                    }
                }
                Layer::AvgPool2d { .. } => {
                    let g = geom(node);
                    let inv = 1.0 / (g.k * g.k) as f64;
                    let pin = g.h * g.w;
                    for ((xk, yk), bk) in xin
                        .chunks_exact(n_in)
                        .zip(lanes_out)
                        .zip(fw.fbx.chunks_exact_mut(4))
                    {
                        let Some(&b) = bk.first_chunk::<4>().filter(|_| boxed) else {
                            kernels::pool_forward(&g, xk, yk);
                            continue;
                        };
                        // Only the outputs whose window meets the box (the same sums, in the
                        // order of `pool_forward`); zeros elsewhere.
                        let ob = box_through(&g, b);
                        bk.copy_from_slice(&ob);
                        yk.fill(0.0);
                        for_box(g.c, g.ho, g.wo, ob, |idx, [ch, i, j]| {
                            let mut acc = 0.0;
                            for a in 0..g.k {
                                let base = ch * pin + (g.s * i + a) * g.w + g.s * j;
                                for v in xk.get(base..base + g.k).unwrap_or_default() {
                                    acc += *v;
                                }
                            }
                            if let Some(y) = yk.get_mut(idx) {
                                *y = acc * inv;
                            }
                        });
                    }
                }
                Layer::Act(a) => {
                    let Some(fd) = fw.ca.get_mut(..n_out) else {
                        return;
                    };
                    let mut finite = true;
                    for ((f, &xv), &yv) in fd.iter_mut().zip(x).zip(y) {
                        *f = act_derivative(a, xv, yv);
                        finite &= f.is_finite();
                    }
                    // Zero stays zero (finite f′): the boxes stay valid.
                    boxed &= finite;
                    for (xk, yk) in xin.chunks_exact(n_in).zip(lanes_out) {
                        for ((yv, &xv), &f) in yk.iter_mut().zip(xk).zip(fd.iter()) {
                            *yv = f * xv;
                        }
                    }
                }
            }
        }
        fw.save_boxes(self.nodes.len(), boxed);
        // Loss: the tangent of ∂ℓ/∂z.
        let start = self.act_offsets.last().copied().unwrap_or(0);
        let out_len = self.output_len();
        {
            let (Some(z), Some(zt), Some(sm)) = (
                fw.ws.acts.get(start..start + out_len),
                fw.tf.get(mx * start..),
                fw.ca.get_mut(..out_len),
            ) else {
                return;
            };
            match self.loss {
                Loss::SoftmaxCrossEntropy => {
                    let mut zmax = f64::NEG_INFINITY;
                    for &v in z {
                        if v > zmax {
                            zmax = v;
                        }
                    }
                    let mut sum = 0.0;
                    for (e, &v) in sm.iter_mut().zip(z) {
                        *e = libm::exp(v - zmax);
                        sum += *e;
                    }
                    for e in sm.iter_mut() {
                        *e /= sum;
                    }
                    for (zk, tk) in zt
                        .chunks_exact(out_len)
                        .zip(fw.tb0.chunks_exact_mut(out_len))
                        .take(m)
                    {
                        let sd = dot(sm, zk);
                        for ((t, &sv), &zv) in tk.iter_mut().zip(sm.iter()).zip(zk) {
                            *t = sv * (zv - sd);
                        }
                    }
                }
                Loss::Logistic => {
                    let zv = z.first().copied().unwrap_or(f64::NAN);
                    let ds = Scalar::sigmoid(zv) * Scalar::sigmoid(-zv);
                    for (zk, tk) in zt
                        .chunks_exact(out_len)
                        .zip(fw.tb0.chunks_exact_mut(out_len))
                        .take(m)
                    {
                        for (t, &v) in tk.iter_mut().zip(zk) {
                            *t = ds * v;
                        }
                    }
                }
            }
        }
        // Backward.
        for (l, node) in self.nodes.iter().enumerate().skip(first).rev() {
            let need_dx = l > first;
            let (Some(&a0), Some(&a1)) = (self.act_offsets.get(l), self.act_offsets.get(l + 1))
            else {
                return;
            };
            let (n_in, n_out) = (node.in_len, node.out_len);
            let (Some(a), Some(y), Some(delta)) = (
                fw.ws.acts.get(a0..a1),
                fw.ws.acts.get(a1..a1 + n_out),
                fw.dl.get(a1..a1 + n_out),
            ) else {
                return;
            };
            let xin = fw.tf.get(mx * a0..).unwrap_or_default();
            let yt = fw.tf.get(mx * a1..).unwrap_or_default();
            let (tb, next) = (&fw.tb0, &mut fw.tb1);
            let (w, _) = layer_params(node, params);
            match node.layer {
                Layer::Dense { .. } => {
                    let aa = dot(a, a);
                    let dd = dot(delta, delta);
                    for (k, ((u, wv), tk)) in
                        fw.u.iter_mut()
                            .zip(fw.w.iter_mut())
                            .zip(tb.chunks_exact(n_out))
                            .take(m)
                            .enumerate()
                    {
                        *u = dot(tk, delta);
                        *wv = if l == 0 {
                            coords
                                .get(k)
                                .and_then(|&c| a.get(c))
                                .copied()
                                .unwrap_or(f64::NAN)
                        } else {
                            dot(a, xin.get(k * n_in..(k + 1) * n_in).unwrap_or_default())
                        };
                    }
                    for i in 0..m {
                        let (ui, wi) = (fw.u.get(i).copied(), fw.w.get(i).copied());
                        let (Some(ui), Some(wi)) = (ui, wi) else {
                            return;
                        };
                        let ti = tb.get(i * n_out..(i + 1) * n_out).unwrap_or_default();
                        if let Some(s) = fw.s.get_mut(i) {
                            *s += ui * aa + dd * wi + ui;
                        }
                        let end = if full { m } else { i + 1 };
                        for j in i..end {
                            let (Some(&uj), Some(&wj)) = (fw.u.get(j), fw.w.get(j)) else {
                                return;
                            };
                            let tj = tb.get(j * n_out..(j + 1) * n_out).unwrap_or_default();
                            let ddij = dot(ti, tj);
                            let daij = if l == 0 {
                                match (coords.get(i), coords.get(j)) {
                                    (Some(ci), Some(cj)) if ci == cj => 1.0,
                                    _ => 0.0,
                                }
                            } else {
                                dot(
                                    xin.get(i * n_in..(i + 1) * n_in).unwrap_or_default(),
                                    xin.get(j * n_in..(j + 1) * n_in).unwrap_or_default(),
                                )
                            };
                            if let Some(dv) = fw.d.get_mut(i * m + j) {
                                *dv += ddij * aa + ui * wj + wi * uj + dd * daij + ddij;
                            }
                        }
                    }
                    if need_dx {
                        // All lanes at once: next = dδ·W (m × n_in), packed operands.
                        let mr = pick_mr(m);
                        let (Some(pa), Some(pb), Some(tbm)) = (
                            fw.pda.get_mut(..packed_a_len(m, n_out, mr)),
                            fw.pdw.get_mut(..packed_b_len(n_out, n_in)),
                            tb.get(..m * n_out),
                        ) else {
                            return;
                        };
                        fil_kernels::pack_a_n_mr(mr, tbm, m, n_out, pa);
                        fil_kernels::pack_b_n(w, n_out, n_in, pb);
                        gemm_packed_mr(mr, m, n_in, n_out, pa, pb, next, n_in);
                    }
                }
                Layer::Conv2d { .. } => {
                    let g = geom(node);
                    let (kk, o, np) = (g.c * g.k * g.k, g.o, g.ho * g.wo);
                    let (ko, pp) = (kk * o, np * np);
                    // Few positions, many taps: inner products through the position Gram
                    // XᵀX instead of forming dΔ·Xᵀ (see `pos_gram`).
                    let pg = pos_gram(&g);
                    let Some(gall) = fw
                        .grad
                        .get(node.offset..node.offset + node.weights + node.biases)
                    else {
                        return;
                    };
                    let (gw, gb) = gall.split_at(node.weights.min(gall.len()));
                    transpose(gw, o, kk, &mut fw.gt);
                    let cut = g.col_len().min(fw.col.len());
                    let (col, poly) = fw.col.split_at_mut(cut);
                    kernels::im2col(&g, a, col, poly);
                    let col: &[f64] = col;
                    transpose(delta, o, np, &mut fw.dt);
                    // Δ·XᵀX.
                    let Some(dpp) = fw.dpp.get_mut(..n_out) else {
                        return;
                    };
                    // Squared norms only, position Gram, dense input tangent: the dX terms come
                    // from per-example tables (see `conv_tangent_forward`); E_k and Nt_k are not formed.
                    let sq_pg = pg && !full && l != 0;
                    let mut nt_all: &[f64] = &[];
                    // X packed (left operand of E_k = X·dΔ_kᵀ), W packed (right operand of
                    // dΔ_kᵀ·W), dΔ_kᵀ packed as left (`pka`) or right (`pkb`) operand.
                    let (mrx, mrp) = (pick_mr(kk), pick_mr(np));
                    let (Some(px), Some(pw), Some(pka), Some(pkb)) = (
                        fw.px
                            .get_mut(..if pg { 0 } else { packed_a_len(kk, np, mrx) }),
                        fw.pw
                            .get_mut(..if need_dx { packed_b_len(o, kk) } else { 0 }),
                        fw.pka
                            .get_mut(..if need_dx { packed_a_len(np, o, mrp) } else { 0 }),
                        fw.pkb.get_mut(..if pg { 0 } else { packed_b_len(np, o) }),
                    ) else {
                        return;
                    };
                    if need_dx {
                        fil_kernels::pack_b(
                            o,
                            kk,
                            |k, j| w.get(k * kk + j).copied().unwrap_or(0.0),
                            pw,
                        );
                    }
                    if pg {
                        // PP = XᵀX (positions × positions), ΔPP = Δ·PP.
                        let Some(xtp) = fw.xt.get_mut(..g.col_len() + pp) else {
                            return;
                        };
                        let (xt, pm) = xtp.split_at_mut(g.col_len());
                        transpose(col, kk, np, xt);
                        kernels::gemm(np, np, kk, xt, col, pm, |u: f64, v: f64| u * v);
                        kernels::gemm(o, np, np, delta, pm, dpp, |u: f64, v: f64| u * v);
                        let (lq, _) = pg_packed_lens(&g);
                        let Some(pq) = fw.pq.get_mut(..lq) else {
                            return;
                        };
                        let (ppp, dtd) = pq.split_at_mut(packed_b_len(np, np));
                        fil_kernels::pack_b_n(pm, np, np, ppp);
                        kernels::duplicate(fw.dt.get(..n_out).unwrap_or_default(), dtd);
                        if sq_pg {
                            // Nt_k, ⟨Gwᵀ·Δ, dX_k⟩ and ‖Δ·dX_kᵀ‖² per lane, from the forward pass.
                            let off = mx * self.sq_pg_offset(l);
                            nt_all = fw.ntf.get(off..off + mx * (pp + 2)).unwrap_or_default();
                        }
                    } else {
                        pack_a_mr(
                            mrx,
                            kk,
                            np,
                            |i, k| col.get(i * np + k).copied().unwrap_or(0.0),
                            px,
                        );
                    }
                    let (px, pw): (&[f64], &[f64]) = (px, pw);
                    let dpp: &[f64] = dpp;
                    let (dt, gt) = (&fw.dt, &fw.gt);
                    let lane_pg = if pg { n_out + 2 * pp } else { 0 };
                    let mut pg_lanes = fw.pg.chunks_mut(lane_pg.max(1));
                    for (k, ((tk, ek), dbk)) in tb
                        .chunks_exact(n_out)
                        .zip(fw.e.chunks_exact_mut(ko))
                        .zip(fw.db.chunks_exact_mut(o))
                        .take(m)
                        .enumerate()
                    {
                        let pgk: &mut [f64] = if pg {
                            match pg_lanes.next() {
                                Some(c) => c,
                                None => return,
                            }
                        } else {
                            &mut []
                        };
                        let (yk, mn) = pgk.split_at_mut(n_out.min(pgk.len()));
                        let (mtk, ntk) = mn.split_at_mut(pp.min(mn.len()));
                        if pg {
                            // Y_k = dΔ_k·PP, Mt_k = Δᵀ·dΔ_k; E_k holds only dX_k·Δᵀ below.
                            let (lq, lc) = pg_packed_lens(&g);
                            let (Some(pq), Some(pkc)) = (fw.pq.get(..lq), fw.pkc.get_mut(..lc))
                            else {
                                return;
                            };
                            let (ppp, dtd) = pq.split_at(packed_b_len(np, np));
                            let mro = pick_mr(o);
                            fil_kernels::pack_a_n_mr(mro, tk, o, np, pkc);
                            gemm_packed_mr(mro, o, np, np, pkc, ppp, yk, np);
                            kernels::gemm_dup_fit(np, np, o, dtd, tk, mtk, |u: f64, v: f64| u * v);
                            if !sq_pg {
                                ek.fill(0.0);
                                ntk.fill(0.0);
                            }
                        } else {
                            // E_k = X·dΔ_kᵀ (taps × channels).
                            pack_b_t(tk, np, o, pkb);
                            gemm_packed_mr(mrx, kk, o, np, px, pkb, ek, o);
                        }
                        // + dX_k·Δᵀ over the non-zero entries of the input tangent (and, with
                        // the position Gram, Nt_k = dX_kᵀ·X).
                        let lane = xin.get(k * n_in..(k + 1) * n_in).unwrap_or_default();
                        let t = if l == 0 {
                            Tangent::OneHot(coords.get(k).copied().unwrap_or(0))
                        } else {
                            Tangent::Dense(lane)
                        };
                        // (⟨Gw, Δ·dXᵀ⟩, ⟨Mt_k, Nt_k⟩, ‖Δ·dXᵀ‖²) in squared-norm mode.
                        let mut sq_terms = (0.0, 0.0, 0.0);
                        if sq_pg {
                            let ntk = nt_all.get(k * (pp + 2)..(k + 1) * (pp + 2));
                            let ntk = ntk.unwrap_or_default();
                            let (nt, sq) = ntk.split_at(pp.min(ntk.len()));
                            let (st, quad) = match sq {
                                [st, quad] => (*st, *quad),
                                _ => (f64::NAN, f64::NAN),
                            };
                            sq_terms = (st, dot(mtk, nt), quad);
                        } else {
                            t.for_each_nonzero(|idx, v| {
                                for_each_tap(&g, idx, |pos, tap| {
                                    if let (Some(dst), Some(src)) = (
                                        ek.get_mut(tap * o..(tap + 1) * o),
                                        dt.get(pos * o..(pos + 1) * o),
                                    ) {
                                        axpy(dst, v, src);
                                    }
                                    if pg {
                                        if let (Some(dst), Some(src)) = (
                                            ntk.get_mut(pos * np..(pos + 1) * np),
                                            col.get(tap * np..(tap + 1) * np),
                                        ) {
                                            axpy(dst, v, src);
                                        }
                                    }
                                });
                            });
                        }
                        for (b, row) in dbk.iter_mut().zip(tk.chunks_exact(np)) {
                            *b = fil_kernels::sum8(row);
                        }
                        let (st, cross, quad) = sq_terms;
                        if let Some(s) = fw.s.get_mut(k) {
                            let gte = if sq_pg {
                                st
                            } else {
                                dot(gt.get(..ko).unwrap_or_default(), ek)
                            };
                            let mut sk = gte + dot(gb, dbk);
                            if pg {
                                sk += dot(dpp, tk);
                            }
                            *s += sk;
                        }
                        if sq_pg {
                            // ‖dG_k‖² = ‖Δ·dX_kᵀ‖² + 2⟨Mt_k, Nt_k⟩ + ⟨Y_k, dΔ_k⟩ + ‖db_k‖².
                            if let Some(dv) = fw.d.get_mut(k * m + k) {
                                *dv += quad + 2.0 * cross + dot(yk, tk) + dot(dbk, dbk);
                            }
                        }
                        if need_dx {
                            let (Some(dcol), Some(nk)) = (
                                fw.dcol.get_mut(..g.col_len()),
                                next.get_mut(k * n_in..(k + 1) * n_in),
                            ) else {
                                return;
                            };
                            // dΔ_kᵀ·W (positions × taps).
                            pack_a_t_mr(mrp, tk, np, o, pka);
                            gemm_packed_mr(mrp, np, kk, o, pka, pw, dcol, kk);
                            fil_kernels::col2im_fast(&g, dcol, nk);
                        }
                    }
                    for i in 0..if sq_pg { 0 } else { m } {
                        let end = if full { m } else { i + 1 };
                        let ei = fw.e.get(i * ko..(i + 1) * ko).unwrap_or_default();
                        let bi = fw.db.get(i * o..(i + 1) * o).unwrap_or_default();
                        let pgi = fw
                            .pg
                            .get(i * lane_pg..(i + 1) * lane_pg)
                            .unwrap_or_default();
                        for j in i..end {
                            let ej = fw.e.get(j * ko..(j + 1) * ko).unwrap_or_default();
                            let bj = fw.db.get(j * o..(j + 1) * o).unwrap_or_default();
                            let mut v = dot(ei, ej) + dot(bi, bj);
                            if pg {
                                // ⟨dΔ_i·Xᵀ, dΔ_j·Xᵀ⟩ = ⟨Y_i, dΔ_j⟩; cross terms ⟨Mt_i, Nt_j⟩ +
                                // ⟨Nt_i, Mt_j⟩.
                                let tj = tb.get(j * n_out..(j + 1) * n_out).unwrap_or_default();
                                let pgj = fw
                                    .pg
                                    .get(j * lane_pg..(j + 1) * lane_pg)
                                    .unwrap_or_default();
                                let (yi, mni) = pgi.split_at(n_out.min(pgi.len()));
                                let (mti, nti) = mni.split_at(pp.min(mni.len()));
                                let (_, mnj) = pgj.split_at(n_out.min(pgj.len()));
                                let (mtj, ntj) = mnj.split_at(pp.min(mnj.len()));
                                v += dot(yi, tj) + dot(mti, ntj) + dot(nti, mtj);
                            }
                            if let Some(dv) = fw.d.get_mut(i * m + j) {
                                *dv += v;
                            }
                        }
                    }
                }
                Layer::AvgPool2d { .. } => {
                    if need_dx {
                        let g = geom(node);
                        for (tk, nk) in tb
                            .chunks_exact(n_out)
                            .zip(next.chunks_exact_mut(n_in))
                            .take(m)
                        {
                            kernels::pool_backward(&g, tk, nk);
                        }
                    }
                }
                Layer::Act(act) => {
                    if need_dx {
                        // δ̇x = α ⊙ δ̇y + β ⊙ (ẏ, or ẋ for GELU).
                        let (Some(ca), Some(cb)) = (fw.ca.get_mut(..n_out), fw.cb.get_mut(..n_out))
                        else {
                            return;
                        };
                        let mut finite = true;
                        for ((((al, be), &xv), &yv), &dv) in
                            ca.iter_mut().zip(cb.iter_mut()).zip(a).zip(y).zip(delta)
                        {
                            (*al, *be) = act_backward_coefs(act, xv, yv, dv);
                            finite &= be.is_finite();
                        }
                        let src = if act == Activation::Gelu { xin } else { yt };
                        // ẏ and ẋ vanish outside the output's boxes (the same as the input's):
                        // there δ̇x = α ⊙ δ̇y (β finite).
                        let boxes = match fw.fok.get(l + 1) {
                            Some(true) if finite => {
                                let n = fw.fbx.len();
                                fw.fbs.get((l + 1) * n..(l + 2) * n)
                            }
                            _ => None,
                        };
                        let g = geom(node);
                        for (k, ((tk, nk), sk)) in tb
                            .chunks_exact(n_out)
                            .zip(next.chunks_exact_mut(n_in))
                            .zip(src.chunks_exact(n_out))
                            .take(m)
                            .enumerate()
                        {
                            if let Some(&b) = boxes
                                .and_then(|bs| bs.get(4 * k..))
                                .and_then(|r| r.first_chunk::<4>())
                            {
                                for ((nv, &tv), &al) in nk.iter_mut().zip(tk).zip(ca.iter()) {
                                    *nv = al * tv;
                                }
                                for_box(g.c, g.h, g.w, b, |idx, _| {
                                    if let (Some(nv), Some(&sv), Some(&be)) =
                                        (nk.get_mut(idx), sk.get(idx), cb.get(idx))
                                    {
                                        *nv += be * sv;
                                    }
                                });
                                continue;
                            }
                            for ((((nv, &tv), &sv), &al), &be) in
                                nk.iter_mut().zip(tk).zip(sk).zip(ca.iter()).zip(cb.iter())
                            {
                                *nv = al * tv + be * sv;
                            }
                        }
                    }
                }
            }
            if need_dx {
                core::mem::swap(&mut fw.tb0, &mut fw.tb1);
            }
        }
    }
}

/// f′(x) of the activation (y = f(x)), as [`Scalar`]'s chain rule computes it.
#[inline]
fn act_derivative(a: Activation, x: f64, _y: f64) -> f64 {
    match a {
        Activation::Tanh => {
            let e = libm::exp(-2.0 * libm::fabs(x));
            let s = 1.0 + e;
            4.0 * e / (s * s)
        }
        Activation::Elu => {
            if x > 0.0 {
                1.0
            } else {
                libm::exp(x)
            }
        }
        Activation::Gelu => crate::math::normal::cdf(x) + x * crate::math::normal::pdf(x),
        Activation::Relu => {
            if x > 0.0 {
                1.0
            } else {
                0.0
            }
        }
    }
}

/// The derivative of the backward map δx = δy·f′(x): δ̇x = α·δ̇y + β·t, with t = ẏ (tanh,
/// ELU, ReLU) or ẋ (GELU). Returns (α, β).
#[inline]
fn act_backward_coefs(a: Activation, x: f64, y: f64, dy: f64) -> (f64, f64) {
    match a {
        // δx = δy·(1 − y²).
        Activation::Tanh => (1.0 - y * y, -2.0 * y * dy),
        // x > 0: δx = δy; else δx = δy·(y + 1).
        Activation::Elu => {
            if x > 0.0 {
                (1.0, 0.0)
            } else {
                (y + 1.0, dy)
            }
        }
        // δx = δy·(Φ(x) + x·φ(x)); d/dx (Φ + xφ) = φ·(2 − x²).
        Activation::Gelu => {
            let pdf = crate::math::normal::pdf(x);
            (
                crate::math::normal::cdf(x) + x * pdf,
                dy * pdf * (2.0 - x * x),
            )
        }
        Activation::Relu => (if x > 0.0 { 1.0 } else { 0.0 }, 0.0),
    }
}

#[cfg(test)]
mod tests {
    //! The fast path against the reference: `loss_and_grad_jvp` (Dual<8> lanes), `clip` in
    //! Dual arithmetic and plain inner products of the clipped tangent columns.
    //!
    //! Tolerance: both compute the same sums in different orders (and the fast path uses the
    //! algebraic identities of the module notes), so they agree to a few hundred ulps of the
    //! size of the terms, scale_ab = c²·‖dg_a‖‖dg_b‖ + |2cc′/n + c′²|·|g·dg_a||g·dg_b|
    //! (computed from the reference's unclipped columns). We require
    //! |fast − ref| ≤ 1e-10·scale_ab: five orders of magnitude above rounding, far below any
    //! error of the method (a missing term or lane mix-up changes entries by O(scale)).

    use super::*;
    use crate::nn::{arch, Activation, Layer, Loss, Shape};
    use crate::rng::Rng;
    use alloc::vec;

    /// The small models of the `nn` tests (every layer kind), plus the cases below.
    fn models() -> Vec<(&'static str, Sequential)> {
        use crate::nn::tests::{conv_stack, small_models};
        use Activation::*;
        let act_first = Sequential::new(
            Shape::flat(7),
            &[
                Layer::Act(Elu),
                Layer::Dense { units: 4 },
                Layer::Act(Gelu),
                Layer::Dense { units: 1 },
            ],
            Loss::Logistic,
        )
        .unwrap();
        let dense_then_conv = Sequential::new(
            Shape::flat(6),
            &[
                Layer::Dense { units: 18 },
                Layer::Act(Tanh),
                Layer::Conv2d {
                    out_channels: 2,
                    kernel: 2,
                    stride: 1,
                    padding: 1,
                },
                Layer::Act(Elu),
                Layer::Dense { units: 3 },
            ],
            Loss::SoftmaxCrossEntropy,
        );
        // A flat vector is (n, 1, 1): a convolution on it sees n channels of 1 × 1.
        let mut v: Vec<_> = small_models()
            .into_iter()
            .map(|(name, m, _)| (name, m))
            .collect();
        v.extend([
            ("conv s2 p1 gelu", conv_stack(Gelu)),
            ("act first, logistic", act_first),
            ("mnist convnet", arch::mnist_tanh_convnet().unwrap()),
            ("mlp 784 10 10 elu", arch::mlp(784, &[10], 10, Elu).unwrap()),
        ]);
        if let Ok(m) = dense_then_conv {
            v.push(("dense then conv", m));
        }
        v
    }

    fn params_for(model: &Sequential, seed: u64) -> Vec<f64> {
        let mut r = Rng::from_seed(seed + 1000);
        model
            .init_params(seed)
            .into_iter()
            .map(|w| if w == 0.0 { 0.1 * r.gaussian() } else { w })
            .collect()
    }

    /// Reference: columns dg_a (unclipped) and dg̃_a (clipped), g, via Dual<8> passes.
    fn reference(
        model: &Sequential,
        p: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        method: ClipMethod,
        c: f64,
    ) -> (Vec<Vec<f64>>, Vec<Vec<f64>>, Vec<f64>) {
        let mut ws = model.workspace::<Dual<8>>();
        let mut grad = vec![Dual::<8>::default(); model.num_params()];
        let (mut raw, mut clipped) = (Vec::new(), Vec::new());
        let mut g = Vec::new();
        for chunk in coords.chunks(8) {
            model
                .loss_and_grad_jvp(p, x, label, chunk, &mut grad, &mut ws)
                .unwrap();
            g = grad.iter().map(|d| d.value).collect();
            for k in 0..chunk.len() {
                raw.push(grad.iter().map(|d| d.tangent[k]).collect::<Vec<_>>());
            }
            crate::train::clip::clip(&mut grad, method, c).unwrap();
            for k in 0..chunk.len() {
                clipped.push(grad.iter().map(|d| d.tangent[k]).collect::<Vec<_>>());
            }
        }
        (raw, clipped, g)
    }

    fn ip(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[allow(clippy::too_many_arguments)]
    fn check(
        name: &str,
        model: &Sequential,
        p: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        method: ClipMethod,
        c: f64,
    ) {
        let m = coords.len();
        let mut fw = model.fil_workspace(m.max(1));
        let mut gram = vec![0.0; m * m];
        let mut sq = vec![0.0; m];
        let loss = model
            .clipped_jvp_gram(p, x, label, coords, method, c, &mut gram, &mut fw)
            .unwrap();
        // The value part is bit-identical to loss_and_grad.
        let mut ws = model.workspace::<f64>();
        let mut g64 = vec![0.0; model.num_params()];
        let l64 = model.loss_and_grad(p, x, label, &mut g64, &mut ws).unwrap();
        assert_eq!(loss.to_bits(), l64.to_bits(), "{name}");
        assert!(
            fw.gradient()
                .iter()
                .zip(&g64)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}"
        );
        let loss2 = model
            .clipped_jvp_sq_norms(p, x, label, coords, method, c, &mut sq, &mut fw)
            .unwrap();
        assert_eq!(loss2.to_bits(), l64.to_bits(), "{name}");
        let (raw, clipped, g) = reference(model, p, x, label, coords, method, c);
        let n = libm::sqrt(ip(&g, &g));
        let f = clip_factor(Dual::<1>::new(n, [1.0]), method, c);
        let (cf, cp) = (f.value, f.tangent[0]);
        let kappa = if n > 0.0 {
            2.0 * cf * cp / n + cp * cp
        } else {
            0.0
        };
        for i in 0..m {
            for j in 0..m {
                let want = ip(&clipped[i], &clipped[j]);
                let scale = cf * cf * libm::sqrt(ip(&raw[i], &raw[i]) * ip(&raw[j], &raw[j]))
                    + libm::fabs(kappa * ip(&g, &raw[i]) * ip(&g, &raw[j]));
                let got = gram[i * m + j];
                assert!(
                    libm::fabs(got - want) <= 1e-10 * scale,
                    "{name} {method:?} C={c} ({i},{j}): {got} vs {want} (scale {scale})"
                );
                if i == j {
                    assert!(
                        libm::fabs(sq[i] - want) <= 1e-10 * scale,
                        "{name} {method:?} C={c} sq {i}: {} vs {want}",
                        sq[i]
                    );
                }
            }
            // Symmetric bit for bit.
            for j in 0..m {
                assert_eq!(gram[i * m + j].to_bits(), gram[j * m + i].to_bits());
            }
        }
    }

    #[test]
    fn gram_matches_jvp_clip_reference_every_architecture_hard_and_gelu() {
        for (seed, (name, model)) in models().into_iter().enumerate() {
            let seed = seed as u64;
            let d = model.input_len();
            let p = params_for(&model, 7 + seed);
            let mut r = Rng::from_seed(100 + seed);
            let x: Vec<f64> = (0..d).map(|_| r.uniform()).collect();
            let label = (seed as usize) % model.num_classes();
            let mut ws = model.workspace::<f64>();
            let mut g = vec![0.0; model.num_params()];
            model.loss_and_grad(&p, &x, label, &mut g, &mut ws).unwrap();
            let n = libm::sqrt(ip(&g, &g));
            // m = 50 coordinates with repeats (drawn with replacement; d may be < 50), the
            // first coordinate repeated explicitly; and m = 1.
            let big = d > 100;
            let mut coords: Vec<usize> = (0..if big { 20 } else { 49 })
                .map(|_| r.below(d as u64).unwrap() as usize)
                .collect();
            coords.push(coords[0]);
            let one = [d / 2];
            for (method, c) in [
                (ClipMethod::Hard, 0.3 * n), // outside the ball: clipped
                (ClipMethod::Hard, 3.0 * n), // inside: identity
                (ClipMethod::Gelu, 0.7 * n),
                (ClipMethod::Gelu, 2.0 * n),
            ] {
                check(name, &model, &p, &x, label, &coords, method, c);
                check(name, &model, &p, &x, label, &one, method, c);
            }
        }
    }

    #[test]
    fn gram_m50_on_mnist_convnet_matches_reference() {
        let model = arch::mnist_tanh_convnet().unwrap();
        let p = params_for(&model, 3);
        let mut r = Rng::from_seed(5);
        let x: Vec<f64> = (0..784).map(|_| r.uniform()).collect();
        let coords: Vec<usize> = (0..50).map(|k| (k * 97 + 13) % 784).collect();
        check(
            "mnist m=50",
            &model,
            &p,
            &x,
            4,
            &coords,
            ClipMethod::Gelu,
            0.5,
        );
        check(
            "mnist m=50",
            &model,
            &p,
            &x,
            4,
            &coords,
            ClipMethod::Hard,
            0.05,
        );
    }

    /// Every input coordinate (corners, edges, pixels no output reads) of small ConvNets
    /// whose second convolution goes through the position Gram, so the forward boxes
    /// (one-hot pixel → convolution → activation → pooling → convolution with padding) and
    /// the gathered squared-norm terms meet every border case; plus the corners and edge
    /// midpoints of the MNIST ConvNet. Same tolerance as `check`.
    #[test]
    fn every_coordinate_at_image_borders_matches_reference() {
        use crate::nn::tests::{conv, pool};
        use Activation::*;
        let models = [
            (
                // Stride 3 > kernel 2: a third of the rows and columns reach no output.
                "stride > kernel",
                Sequential::new(
                    Shape::new(1, 9, 9),
                    &[
                        conv(8, 2, 3, 1),
                        Layer::Act(Tanh),
                        pool(2, 1),
                        conv(5, 3, 2, 1),
                        Layer::Act(Gelu),
                        Layer::Dense { units: 3 },
                    ],
                    Loss::SoftmaxCrossEntropy,
                )
                .unwrap(),
            ),
            (
                // Padding 2 around a 3 × 3 kernel, 3 × 3 stride-2 pooling, padded second conv.
                "wide padding",
                Sequential::new(
                    Shape::new(2, 8, 7),
                    &[
                        conv(6, 3, 1, 2),
                        Layer::Act(Elu),
                        pool(3, 2),
                        conv(4, 3, 2, 1),
                        Layer::Act(Tanh),
                        Layer::Dense { units: 1 },
                    ],
                    Loss::Logistic,
                )
                .unwrap(),
            ),
        ];
        for (seed, (name, model)) in models.iter().enumerate() {
            let seed = seed as u64;
            let d = model.input_len();
            let p = params_for(model, 40 + seed);
            let mut r = Rng::from_seed(50 + seed);
            let x: Vec<f64> = (0..d).map(|_| r.uniform()).collect();
            let coords: Vec<usize> = (0..d).collect();
            for (method, c) in [(ClipMethod::Hard, 1e-3), (ClipMethod::Gelu, 0.7)] {
                check(name, model, &p, &x, 0, &coords, method, c);
            }
        }
        let mnist = arch::mnist_tanh_convnet().unwrap();
        let p = params_for(&mnist, 9);
        let mut r = Rng::from_seed(60);
        let x: Vec<f64> = (0..784).map(|_| r.uniform()).collect();
        let at = |h: usize, w: usize| h * 28 + w;
        let coords = [
            at(0, 0),
            at(0, 27),
            at(27, 0),
            at(27, 27),
            at(0, 13),
            at(13, 0),
            at(27, 14),
            at(14, 27),
            at(1, 1),
            at(26, 26),
            at(14, 14),
        ];
        check(
            "mnist borders",
            &mnist,
            &p,
            &x,
            2,
            &coords,
            ClipMethod::Gelu,
            0.5,
        );
    }

    #[test]
    fn gram_at_zero_gradient_and_on_the_hard_boundary() {
        // Zero weights in a logistic regression with x = 0 give g = (0, …, 0, σ(0) − y) ≠ 0;
        // to get g = 0 exactly use ‖g‖-boundary C = n (tie: factor 1, derivative from inside).
        let model = arch::logistic_regression(3).unwrap();
        let p = [0.3, -0.2, 0.5, 0.1];
        let x = [0.4, 0.7, -0.2];
        let mut ws = model.workspace::<f64>();
        let mut g = vec![0.0; 4];
        model.loss_and_grad(&p, &x, 1, &mut g, &mut ws).unwrap();
        let n = l2_norm(&g);
        check(
            "boundary",
            &model,
            &p,
            &x,
            1,
            &[0, 1, 2, 1],
            ClipMethod::Hard,
            n,
        );
    }

    #[test]
    fn fil_inputs_are_validated() {
        let model = arch::mlp(4, &[3], 2, Activation::Tanh).unwrap();
        let p = model.init_params(1);
        let x = [0.1, 0.2, 0.3, 0.4];
        let mut fw = model.fil_workspace(2);
        let mut gram = [0.0; 4];
        let h = ClipMethod::Hard;
        let name_of = |e: Error| match e {
            Error::InvalidCount { name, .. } | Error::InvalidParameter { name, .. } => name,
            Error::Inconsistent { what, .. } => what,
            _ => "other",
        };
        let e = model
            .clipped_jvp_gram(&p, &x, 0, &[0, 1, 2], h, 1.0, &mut [0.0; 9], &mut fw)
            .unwrap_err();
        assert_eq!(name_of(e), "coords");
        let e = model
            .clipped_jvp_gram(&p, &x, 0, &[0, 4], h, 1.0, &mut gram, &mut fw)
            .unwrap_err();
        assert_eq!(name_of(e), "coords");
        let e = model
            .clipped_jvp_gram(&p, &x, 0, &[0, 1], h, 0.0, &mut gram, &mut fw)
            .unwrap_err();
        assert_eq!(name_of(e), "clip_norm");
        let e = model
            .clipped_jvp_gram(&p, &x, 2, &[0, 1], h, 1.0, &mut gram, &mut fw)
            .unwrap_err();
        assert_eq!(name_of(e), "label");
        let e = model
            .clipped_jvp_gram(
                &p,
                &[0.1, f64::NAN, 0.0, 0.0],
                0,
                &[0],
                h,
                1.0,
                &mut [0.0],
                &mut fw,
            )
            .unwrap_err();
        assert_eq!(name_of(e), "x");
        let mut bad = p.clone();
        bad[0] = f64::INFINITY;
        let e = model
            .clipped_jvp_gram(&bad, &x, 0, &[0], h, 1.0, &mut [0.0], &mut fw)
            .unwrap_err();
        assert_eq!(name_of(e), "params");
        assert!(matches!(
            model.clipped_jvp_gram(&p, &x, 0, &[0, 1], h, 1.0, &mut [0.0; 3], &mut fw),
            Err(Error::Inconsistent { .. })
        ));
        assert!(matches!(
            model.clipped_jvp_sq_norms(&p, &x, 0, &[0, 1], h, 1.0, &mut [0.0; 3], &mut fw),
            Err(Error::Inconsistent { .. })
        ));
        let other = arch::mlp(4, &[5], 2, Activation::Tanh).unwrap();
        let mut wrong = other.fil_workspace(2);
        assert!(matches!(
            model.clipped_jvp_gram(&p, &x, 0, &[0, 1], h, 1.0, &mut gram, &mut wrong),
            Err(Error::Inconsistent { .. })
        ));
        // A gradient whose norm overflows: a numerical error, not a panic or a NaN output.
        let lr = arch::logistic_regression(2).unwrap();
        let mut lw = lr.fil_workspace(1);
        assert!(matches!(
            lr.clipped_jvp_gram(
                &[0.0; 3],
                &[1e160, 1e160],
                1,
                &[0],
                h,
                1.0,
                &mut [0.0],
                &mut lw
            ),
            Err(Error::Numerical { .. })
        ));
        // m = 0: just the loss.
        let l = model
            .clipped_jvp_gram(&p, &x, 0, &[], h, 1.0, &mut [], &mut fw)
            .unwrap();
        assert!(l > 0.0);
    }
}
