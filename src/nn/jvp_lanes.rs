//! The JVP pass with convolutions in "struct of arrays" form.
//!
//! [`Sequential::loss_and_grad_jvp`] on a model with convolutions runs every layer in
//! `Dual<N>` arithmetic except the convolutions (and the first layer, as in the generic sparse
//! path). A convolution's values come from the very `f64` kernels of
//! [`Sequential::loss_and_grad`] (same operations, same bits); its N tangent lanes come from
//! `f64` matrix products ([`lane_products`]) in which every lane is computed by the same
//! operations whatever N is and whatever the other lanes hold (a lane equals its `Dual<1>`
//! run bit for bit).
//!
//! For a convolution with constant weights W, unrolled input X (K taps × P positions) and
//! output gradient δY (O channels × P):
//! - forward, Ẏ = W·Ẋ: a lane's input tangent is non-zero only where its seeded pixel reaches
//!   (a small box), so each output position sums t·Wᵀ\[tap\] over its taps reading a non-zero
//!   tangent t inside the lane's bounding box (eight channels at a time in registers);
//! - weight gradient ∇W = δY·Xᵀ: tangent δ̇Y·Xᵀ, one product per output channel with the
//!   lanes as columns (read and written in the `Dual` layout), plus δY·Ẋᵀ, per tap a sum
//!   over the positions reading a non-zero tangent; bias Σ_pos δ̇Y;
//! - input gradient δX = col2im(δYᵀ·W): tangent col2im(δ̇Yᵀ·W), one product per position with
//!   the lanes as columns, then one col2im on `Dual`s.
//!
//! Each tangent entry is summed in a fixed order (products in increasing inner index, sparse
//! sums in increasing input index); exactly-zero input tangents are skipped, which changes at
//! most the sign of a zero. Mathematically this is the generic pass; the sums differ only in
//! order (the tests compare with it at 1e-12 relative).

use alloc::vec::Vec;

use super::{backward_node, geom, layer_params, seed_first_backward, Sequential, Workspace};
use crate::autodiff::{Dual, Scalar};
use crate::nn::kernels::{self, Geom};
use crate::nn::layer::{Layer, Node};

/// `f64` scratch of the struct-of-arrays convolutions, for `lanes` tangent lanes (empty for
/// `f64` workspaces and for models without convolutions).
#[derive(Clone, Debug, Default)]
pub(super) struct LaneScratch {
    /// Values of a convolution's input, output, output gradient, transposed output gradient
    /// (positions × channels) and input gradient (each up to the largest layer).
    xv: Vec<f64>,
    yv: Vec<f64>,
    dyv: Vec<f64>,
    dyt: Vec<f64>,
    /// Weight and bias gradient values of a convolution.
    gw: Vec<f64>,
    /// Transposed weights (taps × channels).
    wt: Vec<f64>,
    /// Unrolled input gradient (values) and the output-gradient scratch of
    /// [`kernels::conv_backward`].
    dpad: Vec<f64>,
    wide: Vec<f64>,
    /// The sparse weight-gradient term δY·Ẋᵀ, taps × channels × lanes.
    sp: Vec<f64>,
    /// Per lane, a convolution's output tangent (forward).
    la: Vec<f64>,
    /// The (tap or position, tangent) pairs of one output position or one tap (up to K·P).
    qi: Vec<usize>,
    qv: Vec<f64>,
    /// Per kernel offset, the range of output rows, then of output columns, reading a lane's
    /// bounding box (4·k).
    tab: Vec<usize>,
}

/// Buffer lengths of a [`LaneScratch`] for a model and a lane count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sizes {
    act: usize,
    params: usize,
    weights: usize,
    pad: usize,
    wide: usize,
    kernel: usize,
    lanes: usize,
}

impl Sizes {
    /// `None` if the model has no convolution or there are no lanes (the pass does not apply).
    fn of(model: &Sequential, lanes: usize) -> Option<Sizes> {
        let mut s = Sizes {
            act: model.max_len,
            params: 0,
            weights: 0,
            pad: model.pad_len,
            wide: model.wide_len,
            kernel: 0,
            lanes,
        };
        let mut any = false;
        for n in &model.nodes {
            if let Layer::Conv2d { .. } = n.layer {
                any = true;
                s.params = s.params.max(n.weights.checked_add(n.biases)?);
                s.weights = s.weights.max(n.weights);
                if let Layer::Conv2d { kernel, .. } = n.layer {
                    s.kernel = s.kernel.max(kernel);
                }
            }
        }
        (any && lanes > 0).then_some(s)
    }
}

impl LaneScratch {
    /// Scratch for `model` with `lanes` tangent lanes (empty if the pass does not apply).
    pub(super) fn new(model: &Sequential, lanes: usize) -> LaneScratch {
        let Some(s) = Sizes::of(model, lanes) else {
            return LaneScratch::default();
        };
        // A size that overflows gives an empty buffer, which `fits` then rejects.
        let v = |n: Option<usize>| alloc::vec![0.0f64; n.unwrap_or(0)];
        let u = |n: Option<usize>| alloc::vec![0usize; n.unwrap_or(0)];
        LaneScratch {
            xv: v(Some(s.act)),
            yv: v(Some(s.act)),
            dyv: v(Some(s.act)),
            dyt: v(Some(s.act)),
            gw: v(Some(s.params)),
            wt: v(Some(s.weights)),
            dpad: v(Some(s.pad)),
            wide: v(Some(s.wide)),
            sp: v(s.weights.checked_mul(lanes)),
            la: v(s.act.checked_mul(lanes)),
            qi: u(Some(s.pad)),
            qv: v(Some(s.pad)),
            tab: u(s.kernel.checked_mul(4)),
        }
    }

    /// `true` if every buffer is large enough for `s`.
    fn fits(&self, s: &Sizes) -> bool {
        let big = |b: &Vec<f64>, n: Option<usize>| n.is_some_and(|n| b.len() >= n);
        big(&self.xv, Some(s.act))
            && big(&self.yv, Some(s.act))
            && big(&self.dyv, Some(s.act))
            && big(&self.dyt, Some(s.act))
            && big(&self.gw, Some(s.params))
            && big(&self.wt, Some(s.weights))
            && big(&self.dpad, Some(s.pad))
            && big(&self.wide, Some(s.wide))
            && big(&self.sp, s.weights.checked_mul(s.lanes))
            && big(&self.la, s.act.checked_mul(s.lanes))
            && self.qv.len() >= s.pad
            && self.qi.len() >= s.pad
            && s.kernel.checked_mul(4).is_some_and(|n| self.tab.len() >= n)
    }
}

/// Per lane, the bounding box \[r0, r1, c0, c1\] (input rows r0..=r1, columns c0..=c1, over all
/// channels) of the non-zero (or NaN) tangents of `x` (C × H × W), or `None` if there are
/// none.
fn lane_boxes<const N: usize>(g: &Geom, x: &[Dual<N>]) -> [Option<[usize; 4]>; N] {
    let mut boxes = [None; N];
    if g.h == 0 || g.w == 0 {
        return boxes;
    }
    for x_c in x.chunks_exact(g.h * g.w) {
        for (h, row) in x_c.chunks_exact(g.w).enumerate() {
            for (w, xe) in row.iter().enumerate() {
                for (bx, &t) in boxes.iter_mut().zip(&xe.tangent) {
                    if t != 0.0 {
                        *bx = Some(match *bx {
                            None => [h, h, w, w],
                            Some([r0, r1, c0, c1]) => [r0.min(h), r1.max(h), c0.min(w), c1.max(w)],
                        });
                    }
                }
            }
        }
    }
    boxes
}

/// The kernel offsets a < k for which output row (or column) i reads an input row in
/// lo..=hi: s·i + a − p ∈ \[lo, hi\].
#[inline]
fn tap_range(g: &Geom, i: usize, lo: usize, hi: usize) -> core::ops::Range<usize> {
    let base = g.s * i;
    if hi + g.p < base {
        return 0..0;
    }
    let a0 = (lo + g.p).saturating_sub(base);
    a0..(hi + g.p - base + 1).min(g.k).max(a0)
}

/// The output rows (or columns) i < n that read an input row in lo..=hi through kernel
/// offset a: s·i + a − p ∈ \[lo, hi\].
#[inline]
fn pos_range(g: &Geom, a: usize, n: usize, lo: usize, hi: usize) -> (usize, usize) {
    if hi + g.p < a || g.s == 0 {
        return (0, 0);
    }
    let i0 = (lo + g.p).saturating_sub(a).div_ceil(g.s);
    (i0, ((hi + g.p - a) / g.s + 1).min(n).max(i0))
}

/// For q < o: `emit(q, Σ_n v\[n\]·src\[idx\[n\]·o + q\])`, each sum from 0 in pair order, eight
/// entries at a time in registers.
#[inline(always)]
fn gather(idx: &[usize], v: &[f64], src: &[f64], o: usize, mut emit: impl FnMut(usize, f64)) {
    let mut cb = 0;
    while cb + 8 <= o {
        let mut acc = [0.0f64; 8];
        for (&i, &t) in idx.iter().zip(v) {
            if let Some(s) = src.get(i * o + cb..).and_then(|s| s.first_chunk::<8>()) {
                for (a, &w) in acc.iter_mut().zip(s) {
                    *a += t * w;
                }
            }
        }
        for (q, &a) in acc.iter().enumerate() {
            emit(cb + q, a);
        }
        cb += 8;
    }
    for q in cb..o {
        let mut acc = 0.0f64;
        for (&i, &t) in idx.iter().zip(v) {
            if let Some(&w) = src.get(i * o + q) {
                acc += t * w;
            }
        }
        emit(q, acc);
    }
}

/// Convolution forward on `Dual` activations (see the module docs): values by
/// [`kernels::conv_forward`] in `f64`, lane tangents Ẏ = W·Ẋ scattered from the non-zero
/// entries of each lane of `x`.
fn conv_forward_lanes<const N: usize>(
    node: &Node,
    params: &[f64],
    x: &[Dual<N>],
    y: &mut [Dual<N>],
    pad: &mut [f64],
    s: &mut LaneScratch,
) -> Option<()> {
    let g = geom(node);
    let (o, p, k) = (g.o, g.ho * g.wo, g.c * g.k * g.k);
    if o == 0 || p == 0 || k == 0 || node.out_len == 0 {
        return None;
    }
    let (w, b) = layer_params(node, params);
    let LaneScratch {
        xv,
        yv,
        wt,
        la,
        qi,
        qv,
        ..
    } = s;
    let xv = xv.get_mut(..node.in_len)?;
    for (d, v) in xv.iter_mut().zip(x) {
        *d = v.value;
    }
    let yv = yv.get_mut(..node.out_len)?;
    kernels::conv_forward(&g, w, b, xv, yv, pad.get_mut(..g.pad_len())?);
    let wt = wt.get_mut(..node.weights)?;
    for (ch, row) in w.chunks_exact(k).enumerate() {
        for (tap, &v) in row.iter().enumerate() {
            *wt.get_mut(tap * o + ch)? = v;
        }
    }
    let la = la.get_mut(..N * node.out_len)?;
    let boxes = lane_boxes(&g, x);
    let (hw, w_in) = (g.h * g.w, g.w);
    for ((lane, yl), bx) in la.chunks_exact_mut(node.out_len).enumerate().zip(boxes) {
        // Ẏ[:, pos] = Σ over the taps of pos reading a non-zero tangent (increasing tap, i.e.
        // input index) of t·Wᵀ[tap]; only taps inside the lane's bounding box can.
        yl.fill(0.0);
        let Some([r0, r1, c0, c1]) = bx else {
            continue;
        };
        for i in 0..g.ho {
            let ar = tap_range(&g, i, r0, r1);
            if ar.is_empty() {
                continue;
            }
            for j in 0..g.wo {
                let br = tap_range(&g, j, c0, c1);
                if br.is_empty() {
                    continue;
                }
                let mut n = 0;
                for c in 0..g.c {
                    for a in ar.clone() {
                        // s·i + a ≥ p and s·j + b ≥ p (tap_range).
                        let row = c * hw + (g.s * i + a - g.p) * w_in;
                        let tap0 = (c * g.k + a) * g.k;
                        for b in br.clone() {
                            let t = x
                                .get(row + g.s * j + b - g.p)
                                .and_then(|d| d.tangent.get(lane))
                                .copied()
                                .unwrap_or(0.0);
                            if t != 0.0 {
                                if let (Some(qi), Some(qv)) = (qi.get_mut(n), qv.get_mut(n)) {
                                    (*qi, *qv) = (tap0 + b, t);
                                    n += 1;
                                }
                            }
                        }
                    }
                }
                let pos = i * g.wo + j;
                gather(qi.get(..n)?, qv.get(..n)?, wt, o, |ch, v| {
                    if let Some(d) = yl.get_mut(ch * p + pos) {
                        *d = v;
                    }
                });
            }
        }
    }
    for (e, (d, &v)) in y.iter_mut().zip(yv.iter()).enumerate() {
        d.value = v;
        for (lane, t) in d.tangent.iter_mut().enumerate() {
            *t = la.get(lane * node.out_len + e).copied().unwrap_or(0.0);
        }
    }
    Some(())
}

/// The input of a convolution in the backward pass: `f64` (the first layer, whose seeded
/// tangents the caller adds) or `Dual`.
#[derive(Clone, Copy)]
enum ConvInput<'a, const N: usize> {
    Plain(&'a [f64]),
    Dual(&'a [Dual<N>]),
}

/// Rows of a register block of [`lane_products`]: with 8 lanes, 4 rows are 8 4-wide AVX
/// accumulators (6 rows measured slower); SSE2 has half the width, so half the rows.
const LANE_MR: usize = if kernels::VEC_NR == 8 { 4 } else { 2 };

/// C\[r\]\[lane\] = Σ_{q < len} dy\[t0 + q·ts\].tangent\[lane\]·a\[a0 + q·sa + r\] for r < MR,
/// each sum from 0 in increasing q (products t·a): MR rows of a lanes-as-columns product, read
/// straight from the `Dual` layout (the N tangents of an entry are contiguous).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn lane_products<const N: usize, const MR: usize>(
    dy: &[Dual<N>],
    t0: usize,
    ts: usize,
    a: &[f64],
    a0: usize,
    sa: usize,
    len: usize,
) -> [[f64; N]; MR] {
    let mut acc = [[0.0f64; N]; MR];
    for q in 0..len {
        let (Some(d), Some(av)) = (
            dy.get(t0 + q * ts),
            a.get(a0 + q * sa..).and_then(|s| s.first_chunk::<MR>()),
        ) else {
            break;
        };
        for (acc_r, &ar) in acc.iter_mut().zip(av) {
            for (c, &t) in acc_r.iter_mut().zip(&d.tangent) {
                *c += t * ar;
            }
        }
    }
    acc
}

/// For every tap < k, `emit(tap, lanes)` with the lanes of
/// Σ_{q < len} dy\[t0 + q·ts\].tangent·a\[q·sa + tap\] ([`lane_products`], [`LANE_MR`] taps at
/// a time, then 2 and 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn lane_products_all<const N: usize>(
    dy: &[Dual<N>],
    t0: usize,
    ts: usize,
    a: &[f64],
    sa: usize,
    len: usize,
    k: usize,
    mut emit: impl FnMut(usize, &[f64; N]),
) {
    let mut tap = 0;
    while tap + LANE_MR <= k {
        let c = lane_products::<N, LANE_MR>(dy, t0, ts, a, tap, sa, len);
        for (r, c_r) in c.iter().enumerate() {
            emit(tap + r, c_r);
        }
        tap += LANE_MR;
    }
    if LANE_MR > 2 && tap + 2 <= k {
        let c = lane_products::<N, 2>(dy, t0, ts, a, tap, sa, len);
        for (r, c_r) in c.iter().enumerate() {
            emit(tap + r, c_r);
        }
        tap += 2;
    }
    while tap < k {
        let [c] = lane_products::<N, 1>(dy, t0, ts, a, tap, sa, len);
        emit(tap, &c);
        tap += 1;
    }
}

/// Weight-gradient entries of a convolution in `Dual` layout: per output channel ch and tap,
/// the lanes of Σ_pos δ̇Y\[ch, pos\]·Xᵀ\[pos, tap\] (each lane summed from 0 in position order)
/// with `xt` = Xᵀ (P × K); then gw\[ch·k + tap\] = (gv\[ch·k + tap\]; those lanes (+ the
/// sparse term sp\[(tap·o + ch)·N..\])).
fn wgrad_lanes<const N: usize>(
    (o, k, p): (usize, usize, usize),
    dy: &[Dual<N>],
    xt: &[f64],
    gv: &[f64],
    sp: Option<&[f64]>,
    gw: &mut [Dual<N>],
) -> Option<()> {
    if k == 0 || p == 0 || N == 0 {
        return Some(());
    }
    if dy.len() < o * p || xt.len() < p * k || gv.len() < o * k || gw.len() < o * k {
        return None;
    }
    for (ch, (g_row, v_row)) in gw
        .chunks_exact_mut(k)
        .zip(gv.chunks_exact(k))
        .take(o)
        .enumerate()
    {
        lane_products_all(dy, ch * p, 1, xt, k, p, k, |tap, c| {
            if let (Some(gd), Some(&v)) = (g_row.get_mut(tap), v_row.get(tap)) {
                gd.value = v;
                gd.tangent = *c;
                if let Some(s) =
                    sp.and_then(|sp| sp.get((tap * o + ch) * N..(tap * o + ch + 1) * N))
                {
                    for (a, &b) in gd.tangent.iter_mut().zip(s) {
                        *a += b;
                    }
                }
            }
        });
    }
    Some(())
}

/// Unrolled input-gradient tangents of a convolution in `Dual` layout (values 0): per
/// position pos and tap, dcol\[pos·k + tap\].tangent = the lanes of Σ_ch δ̇Y\[ch, pos\]·W\[ch, tap\]
/// (each lane summed from 0 in channel order).
fn dgrad_lanes<const N: usize>(
    (o, k, p): (usize, usize, usize),
    dy: &[Dual<N>],
    w: &[f64],
    dcol: &mut [Dual<N>],
) -> Option<()> {
    if k == 0 || o == 0 || N == 0 {
        return Some(());
    }
    if dy.len() < o * p || w.len() < o * k || dcol.len() < p * k {
        return None;
    }
    for (pos, drow) in dcol.chunks_exact_mut(k).take(p).enumerate() {
        lane_products_all(dy, pos, p, w, k, o, k, |tap, c| {
            if let Some(dd) = drow.get_mut(tap) {
                dd.value = 0.0;
                dd.tangent = *c;
            }
        });
    }
    Some(())
}

/// Convolution backward with `Dual` output gradient `dy` (see the module docs): values by
/// [`kernels::conv_backward`] in `f64`; weight-gradient tangents δ̇Y·Xᵀ (+ δY·Ẋᵀ for a `Dual`
/// input), bias tangents Σ δ̇Y and, if `dx` is given, input-gradient tangents col2im(δ̇Yᵀ·W).
/// `dcol` is `Dual` scratch (length K·P).
#[allow(clippy::too_many_arguments)]
fn conv_backward_lanes<const N: usize>(
    node: &Node,
    params: &[f64],
    x: ConvInput<'_, N>,
    dy: &[Dual<N>],
    grad: &mut [Dual<N>],
    dx: Option<&mut [Dual<N>]>,
    pad: &mut [f64],
    dcol: &mut [Dual<N>],
    s: &mut LaneScratch,
) -> Option<()> {
    let g = geom(node);
    let (o, p, k) = (g.o, g.ho * g.wo, g.c * g.k * g.k);
    if o == 0 || p == 0 || k == 0 || node.in_len == 0 {
        return None;
    }
    let (w, _) = layer_params(node, params);
    let LaneScratch {
        xv,
        yv,
        dyv,
        dyt,
        gw: gw64,
        dpad,
        wide,
        sp,
        qi,
        qv,
        tab,
        ..
    } = s;
    let xs: &[f64] = match x {
        ConvInput::Plain(v) => v,
        ConvInput::Dual(xd) => {
            let xv = xv.get_mut(..node.in_len)?;
            for (d, v) in xv.iter_mut().zip(xd) {
                *d = v.value;
            }
            xv
        }
    };
    let dyv = dyv.get_mut(..node.out_len)?;
    for (d, v) in dyv.iter_mut().zip(dy) {
        *d = v.value;
    }
    let (gw64, gb64) = gw64
        .get_mut(..node.weights + node.biases)?
        .split_at_mut(node.weights);
    let dxv = yv.get_mut(..node.in_len)?;
    let want_dx = dx.is_some();
    let dpad = dpad.get_mut(..g.pad_len())?;
    kernels::conv_backward(
        &g,
        w,
        xs,
        dyv,
        gw64,
        gb64,
        if want_dx { Some(&mut dxv[..]) } else { None },
        pad.get_mut(..g.pad_len())?,
        dpad,
        wide.get_mut(..g.wide_len())?,
    );
    let (gw, gb) = grad
        .get_mut(node.offset..node.offset + node.weights + node.biases)?
        .split_at_mut(node.weights);
    // Bias: Σ_pos δY in position order (values as the f64 kernel).
    for ((gbo, dy_o), &v) in gb.iter_mut().zip(dy.chunks_exact(p)).zip(gb64.iter()) {
        let mut sum = Dual::<N>::zero();
        for &d in dy_o {
            sum += d;
        }
        sum.value = v;
        *gbo = sum;
    }
    // δY·Ẋᵀ: per lane and tap, Σ over the lane's pairs at that tap (increasing input index)
    // of t·δYᵀ[pos], into sp (taps × channels × lanes).
    let sparse = if let ConvInput::Dual(xd) = x {
        let dyt = dyt.get_mut(..node.out_len)?;
        for (ch, dy_c) in dyv.chunks_exact(p).enumerate() {
            for (pos, &v) in dy_c.iter().enumerate() {
                *dyt.get_mut(pos * o + ch)? = v;
            }
        }
        let sp = sp.get_mut(..N * node.weights)?;
        let boxes = lane_boxes(&g, xd);
        let (hw, w_in) = (g.h * g.w, g.w);
        let tab = tab.get_mut(..4 * g.k)?;
        for (lane, bx) in boxes.into_iter().enumerate() {
            // Per tap, Σ over the positions reading a non-zero tangent through it (increasing
            // position, i.e. input index) of t·δYᵀ[pos]: the rows and columns of the lane's
            // bounding box give each offset's position range.
            let [r0, r1, c0, c1] = bx.unwrap_or([1, 0, 1, 0]);
            let (ir, jr) = tab.split_at_mut(2 * g.k);
            for (a, (q, r)) in ir
                .chunks_exact_mut(2)
                .zip(jr.chunks_exact_mut(2))
                .enumerate()
            {
                let ((i0, i1), (j0, j1)) = if bx.is_some() {
                    (
                        pos_range(&g, a, g.ho, r0, r1),
                        pos_range(&g, a, g.wo, c0, c1),
                    )
                } else {
                    ((0, 0), (0, 0))
                };
                q.copy_from_slice(&[i0, i1]);
                r.copy_from_slice(&[j0, j1]);
            }
            for c in 0..g.c {
                for (a, ia) in ir.chunks_exact(2).enumerate() {
                    for (b, jb) in jr.chunks_exact(2).enumerate() {
                        let tap = (c * g.k + a) * g.k + b;
                        let mut n = 0;
                        if let (&[i0, i1], &[j0, j1]) = (ia, jb) {
                            for i in i0..i1 {
                                // s·i + a ≥ p and s·j + b ≥ p (pos_range).
                                let row = c * hw + (g.s * i + a - g.p) * w_in;
                                for j in j0..j1 {
                                    let t = xd
                                        .get(row + g.s * j + b - g.p)
                                        .and_then(|d| d.tangent.get(lane))
                                        .copied()
                                        .unwrap_or(0.0);
                                    if t != 0.0 {
                                        if let (Some(qi), Some(qv)) = (qi.get_mut(n), qv.get_mut(n))
                                        {
                                            (*qi, *qv) = (i * g.wo + j, t);
                                            n += 1;
                                        }
                                    }
                                }
                            }
                        }
                        if n == 0 {
                            for ch in 0..o {
                                *sp.get_mut((tap * o + ch) * N + lane)? = 0.0;
                            }
                            continue;
                        }
                        gather(qi.get(..n)?, qv.get(..n)?, dyt, o, |ch, v| {
                            if let Some(d) = sp.get_mut((tap * o + ch) * N + lane) {
                                *d = v;
                            }
                        });
                    }
                }
            }
        }
        Some(&sp[..])
    } else {
        None
    };
    // δ̇Y·Xᵀ with Xᵀ (P × K) left in `pad` by conv_backward, plus the sparse term.
    wgrad_lanes((o, k, p), dy, pad.get(..p * k)?, gw64, sparse, gw)?;
    let Some(dx) = dx else {
        return Some(());
    };
    // δ̇X = col2im(δ̇Yᵀ·W), all lanes at once in Dual layout.
    let dcol = dcol.get_mut(..k * p)?;
    dgrad_lanes((o, k, p), dy, w, dcol)?;
    kernels::col2im_t(&g, dcol, dx);
    for (d, &v) in dx.iter_mut().zip(dxv.iter()) {
        d.value = v;
    }
    Some(())
}

impl Sequential {
    /// The JVP pass of [`jvp_unchecked`](Self::jvp_unchecked) with convolutions in
    /// struct-of-arrays form (module docs), or `None` (nothing written) if it does not apply:
    /// no convolution, a first layer other than dense or convolutional, or `ws` without the
    /// lane scratch for this model. The first layer is handled as in the generic sparse path:
    /// `f64` forward plus the seeded weights; backward, the seeded entries δ_o added to the
    /// weight gradient's lanes. Afterwards `ws.d0` holds δ of the first layer's output.
    pub(super) fn jvp_lanes<const N: usize>(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        grad: &mut [Dual<N>],
        ws: &mut Workspace<Dual<N>>,
    ) -> Option<Dual<N>> {
        let node0 = self.nodes.first()?;
        if !matches!(node0.layer, Layer::Dense { .. } | Layer::Conv2d { .. }) {
            return None;
        }
        let sizes = Sizes::of(self, N)?;
        if !ws.lanes.fits(&sizes) {
            return None;
        }
        Some(
            self.jvp_lanes_run(params, x, label, coords, grad, ws)
                .unwrap_or(Dual::constant(f64::NAN)),
        )
    }

    fn jvp_lanes_run<const N: usize>(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        grad: &mut [Dual<N>],
        ws: &mut Workspace<Dual<N>>,
    ) -> Option<Dual<N>> {
        let node0 = self.nodes.first()?;
        let (w, _) = layer_params(node0, params);
        let out0 = node0.out_len;
        self.jvp_first_forward(params, x, coords, ws)?;
        // Forward through layers 1.., convolutions in struct-of-arrays form.
        for (l, node) in self.nodes.iter().enumerate().skip(1) {
            let start = *self.act_offsets.get(l)?;
            let mid = *self.act_offsets.get(l + 1)?;
            if mid > ws.acts.len() {
                return None;
            }
            let (head, tail) = ws.acts.split_at_mut(mid);
            let (x, y) = (head.get(start..)?, tail.get_mut(..node.out_len)?);
            let (w, b) = layer_params(node, params);
            match node.layer {
                Layer::Dense { .. } => kernels::dense_forward(w, b, x, y),
                Layer::Conv2d { .. } => {
                    conv_forward_lanes(node, params, x, y, &mut ws.pad64, &mut ws.lanes)?
                }
                Layer::AvgPool2d { .. } => kernels::pool_forward(&geom(node), x, y),
                Layer::Act(a) => a.forward(x, y),
            }
        }
        // Loss, then backward through layers L−1..1.
        let start = *self.act_offsets.last()?;
        let out_len = self.output_len();
        let loss =
            self.loss
                .value_and_grad(ws.acts.get(start..)?, label, ws.d0.get_mut(..out_len)?);
        for (l, node) in self.nodes.iter().enumerate().skip(1).rev() {
            let a0 = *self.act_offsets.get(l)?;
            let a1 = *self.act_offsets.get(l + 1)?;
            let x = ws.acts.get(a0..a1)?;
            let dy = ws.d0.get(..node.out_len)?;
            let dx = ws.d1.get_mut(..node.in_len)?;
            if let Layer::Conv2d { .. } = node.layer {
                conv_backward_lanes(
                    node,
                    params,
                    ConvInput::Dual(x),
                    dy,
                    grad,
                    Some(dx),
                    &mut ws.pad64,
                    &mut ws.dpad[..],
                    &mut ws.lanes,
                )?;
            } else {
                let y = ws.acts.get(a1..a1 + node.out_len)?;
                let scratch = (&mut ws.pad[..], &mut ws.dpad[..], &mut ws.wide[..]);
                if !backward_node(node, params, x, y, dy, grad, Some(dx), scratch) {
                    return None;
                }
            }
            core::mem::swap(&mut ws.d0, &mut ws.d1);
        }
        // The first layer: its input x is f64, the seeded tangents are added sparsely.
        let dy = ws.d0.get(..out0)?;
        if let Layer::Dense { .. } = node0.layer {
            let (gw, gb) = grad
                .get_mut(node0.offset..node0.offset + node0.weights + node0.biases)?
                .split_at_mut(node0.weights);
            kernels::dense_backward(w, x, dy, gw, gb, None);
        } else {
            conv_backward_lanes(
                node0,
                params,
                ConvInput::Plain(x),
                dy,
                grad,
                None,
                &mut ws.pad64,
                &mut ws.dpad[..],
                &mut ws.lanes,
            )?;
        }
        let gw = grad.get_mut(node0.offset..node0.offset + node0.weights)?;
        seed_first_backward(node0, coords, dy, gw);
        Some(loss)
    }
}

#[cfg(test)]
mod tests {
    use crate::autodiff::Dual;
    use crate::nn::{arch, Activation, Layer, Loss, Sequential, Shape};
    use crate::rng::Rng;
    use alloc::vec::Vec;

    fn gaussian_vec(seed: u64, n: usize, scale: f64) -> Vec<f64> {
        let mut r = Rng::from_seed(seed);
        (0..n).map(|_| r.gaussian() * scale).collect()
    }

    /// Models whose convolutions after the first layer take a sparse input tangent, with
    /// padding, strides 1–3, kernels larger than the stride, odd channel counts (the 8-wide
    /// register blocks' tails) and odd tap counts (the tap-pair tails), a dense first layer
    /// feeding a convolution (through a reshape-free flat-to-(C,1,1) path), and the MNIST
    /// ConvNet.
    fn conv_models() -> Vec<(&'static str, Sequential)> {
        use crate::nn::tests::{conv, pool};
        use Activation::*;
        let ce = Loss::SoftmaxCrossEntropy;
        let m = |shape, layers: &[Layer]| Sequential::new(shape, layers, ce).unwrap();
        alloc::vec![
            ("mnist convnet", arch::mnist_tanh_convnet().unwrap()),
            (
                "conv p1 s1, conv p2 s2 (odd taps), 11 channels",
                m(
                    Shape::new(2, 9, 8),
                    &[
                        conv(3, 3, 1, 1),
                        Layer::Act(Tanh),
                        conv(11, 3, 2, 2),
                        Layer::Act(Elu),
                        Layer::Dense { units: 3 },
                    ],
                ),
            ),
            (
                "conv s3 k5 p4, pool, conv k2 s1 p1, conv k1",
                m(
                    Shape::new(1, 11, 10),
                    &[
                        conv(9, 5, 3, 4),
                        Layer::Act(Gelu),
                        pool(2, 1),
                        conv(17, 2, 1, 1),
                        Layer::Act(Tanh),
                        conv(5, 1, 1, 0),
                        Layer::Dense { units: 4 },
                    ],
                ),
            ),
            (
                "dense first, then conv on (C, 1, 1)",
                m(
                    Shape::new(1, 4, 4),
                    &[
                        Layer::Dense { units: 6 },
                        Layer::Act(Tanh),
                        conv(8, 1, 1, 0),
                        Layer::Act(Tanh),
                        Layer::Dense { units: 3 },
                    ],
                ),
            ),
            (
                "pool first (generic fallback), conv",
                m(
                    Shape::new(2, 6, 6),
                    &[
                        pool(2, 2),
                        conv(4, 2, 1, 1),
                        Layer::Act(Tanh),
                        Layer::Dense { units: 2 }
                    ],
                ),
            ),
        ]
    }

    /// Every corner, edge midpoints, the centre, and a repeated coordinate (per channel 0 and
    /// the last channel), 8 at a time.
    fn coords_for(shape: Shape) -> Vec<usize> {
        let (c, h, w) = (shape.channels, shape.height, shape.width);
        let mut v = Vec::new();
        for ch in [0, c - 1] {
            for (i, j) in [
                (0, 0),
                (0, w - 1),
                (h - 1, 0),
                (h - 1, w - 1),
                (0, w / 2),
                (h / 2, 0),
                (h - 1, w / 2),
                (h / 2, w - 1),
                (h / 2, w / 2),
                (h / 2, w / 2),
            ] {
                v.push((ch * h + i) * w + j);
            }
        }
        v
    }

    #[test]
    fn conv_lanes_jvp_equals_generic_seeded_pass_at_corners_edges_and_repeats() {
        // The struct-of-arrays pass sums each tangent entry in another order than the generic
        // Dual pass (forward_backward with seeded inputs), and skips exactly-zero input
        // tangents: agreement to 1e-12 relative (1e-12 absolute below 1), values bit for bit.
        // A wrongly computed sparse region (a missed or extra tap at a border, a stride or
        // padding slip) changes tangents at O(1) relative and fails this.
        for (s, (name, m)) in conv_models().into_iter().enumerate() {
            let mut r = Rng::from_seed(500 + s as u64);
            let p: Vec<f64> = m
                .init_params(7 + s as u64)
                .iter()
                .map(|&w| w + 0.05 * r.gaussian())
                .collect();
            let x = gaussian_vec(600 + s as u64, m.input_len(), 0.8);
            let n = m.num_params();
            let mut ws = m.workspace::<Dual<8>>();
            for chunk in coords_for(m.input_shape()).chunks(8) {
                let mut a = alloc::vec![Dual::<8>::default(); n];
                let la = m
                    .loss_and_grad_jvp(&p, &x, 1, chunk, &mut a, &mut ws)
                    .unwrap();
                let mut xd: Vec<Dual<8>> = x.iter().map(|&v| Dual::constant(v)).collect();
                for (lane, &c) in chunk.iter().enumerate() {
                    xd[c].tangent[lane] = 1.0;
                }
                let mut b = alloc::vec![Dual::<8>::default(); n];
                let lb = m
                    .forward_backward(&p, &xd, 1, &mut b, None, &mut ws)
                    .unwrap();
                assert_eq!(la.to_bits(), lb.value.to_bits(), "{name}");
                let mut nonzero = 0;
                for j in 0..n {
                    assert_eq!(a[j].value.to_bits(), b[j].value.to_bits(), "{name} {j}");
                    for k in 0..8 {
                        let (u, v) = (a[j].tangent[k], b[j].tangent[k]);
                        nonzero += usize::from(v != 0.0);
                        assert!(
                            (u - v).abs() <= 1e-12 * v.abs().max(1.0),
                            "{name}: param {j} lane {k} (coord {:?}): {u} vs {v}",
                            chunk.get(k)
                        );
                    }
                }
                assert!(nonzero > n, "{name}: tangents vanish, the test is vacuous");
            }
        }
    }

    #[test]
    fn conv_lanes_each_lane_equals_its_dual1_run_bit_for_bit() {
        // Lanes never interact and every lane runs the same operations whatever N is: each
        // lane of a Dual<8> pass equals the Dual<1> pass of its coordinate bit for bit, and
        // a Dual<3> pass with fewer coordinates than lanes leaves the spare lanes 0 (±0).
        for (s, (name, m)) in conv_models().into_iter().enumerate() {
            let p = m.init_params(30 + s as u64);
            let x = gaussian_vec(40 + s as u64, m.input_len(), 1.0);
            let n = m.num_params();
            let coords = coords_for(m.input_shape());
            let chunk = &coords[..8];
            let mut g8 = alloc::vec![Dual::<8>::default(); n];
            m.loss_and_grad_jvp(&p, &x, 0, chunk, &mut g8, &mut m.workspace())
                .unwrap();
            let mut g1 = alloc::vec![Dual::<1>::default(); n];
            let mut ws1 = m.workspace::<Dual<1>>();
            for (lane, &c) in chunk.iter().enumerate() {
                m.loss_and_grad_jvp(&p, &x, 0, &[c], &mut g1, &mut ws1)
                    .unwrap();
                for j in 0..n {
                    assert_eq!(
                        g1[j].tangent[0].to_bits(),
                        g8[j].tangent[lane].to_bits(),
                        "{name}: lane {lane}, param {j}"
                    );
                }
            }
            let mut g3 = alloc::vec![Dual::<3>::default(); n];
            m.loss_and_grad_jvp(&p, &x, 0, &chunk[..2], &mut g3, &mut m.workspace())
                .unwrap();
            for j in 0..n {
                assert_eq!(g3[j].tangent[2], 0.0, "{name} {j}"); // ±0
                assert_eq!(g3[j].tangent[1].to_bits(), g8[j].tangent[1].to_bits());
            }
        }
    }
}
