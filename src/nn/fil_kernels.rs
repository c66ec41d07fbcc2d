//! Packed matrix products of the FIL fast path (`f64` only).
//!
//! C = A·B with A packed in blocks of `MR` rows, each entry duplicated (SSE2 has no broadcast
//! load, so a pair of equal values is one vector load; AVX builds read the first of each pair
//! with a broadcast load), and B packed in blocks of [`NB`] columns (4, or 8 with AVX),
//! both laid out in the order the micro-kernel reads them (k-major inside a block): the inner
//! loop has no strided access and no bounds checks. Every entry is summed from 0 over k in
//! increasing order, as [`kernels::gemm`] does. Padding rows/columns
//! of the packed operands are zero and never written out.

use crate::nn::kernels::{self, Geom};

/// Columns per block of packed B: [`kernels::VEC_NR`] (8 with AVX, else 4).
pub(super) const NB: usize = kernels::VEC_NR;

/// Length of A (m × kd) packed with `mr` rows per block.
pub(super) fn packed_a_len(m: usize, kd: usize, mr: usize) -> usize {
    m.div_ceil(mr.max(1)) * mr * kd * 2
}

/// Length of B (kd × n) packed in blocks of [`NB`] columns.
pub(super) fn packed_b_len(kd: usize, n: usize) -> usize {
    n.div_ceil(NB) * NB * kd
}

/// Packs A (m × kd), A\[i, k\] = `a(i, k)`, into `out`: block bi, step k, row r holds
/// A\[bi·MR + r, k\] twice (0 beyond row m).
pub(super) fn pack_a<const MR: usize>(
    m: usize,
    kd: usize,
    a: impl Fn(usize, usize) -> f64,
    out: &mut [f64],
) {
    if kd == 0 {
        return;
    }
    for (bi, blk) in out.chunks_exact_mut(2 * MR * kd).enumerate() {
        for (k, step) in blk.chunks_exact_mut(2 * MR).enumerate() {
            for (r, pair) in step.chunks_exact_mut(2).enumerate() {
                let i = bi * MR + r;
                pair.fill(if i < m { a(i, k) } else { 0.0 });
            }
        }
    }
}

/// Packs B (kd × n), B\[k, j\] = `b(k, j)`, into `out`: block jb, step k holds
/// B\[k, NB·jb .. NB·jb + NB\] (0 beyond column n).
pub(super) fn pack_b(kd: usize, n: usize, b: impl Fn(usize, usize) -> f64, out: &mut [f64]) {
    if kd == 0 {
        return;
    }
    for (jb, blk) in out.chunks_exact_mut(NB * kd).enumerate() {
        for (k, step) in blk.chunks_exact_mut(NB).enumerate() {
            for (q, v) in step.iter_mut().enumerate() {
                let j = jb * NB + q;
                *v = if j < n { b(k, j) } else { 0.0 };
            }
        }
    }
}

/// C\[i·ldc + j\] = Σ_k A\[i, k\]·B\[k, j\] (i < m, j < n) from packed `ap` ([`pack_a`] with
/// `MR`) and `bp` ([`pack_b`]), each sum from 0 in increasing k.
#[inline(never)]
pub(super) fn gemm_packed<const MR: usize>(
    m: usize,
    n: usize,
    kd: usize,
    ap: &[f64],
    bp: &[f64],
    c: &mut [f64],
    ldc: usize,
) {
    if kd == 0 {
        // Empty sums.
        for i in 0..m {
            if let Some(row) = c.get_mut(i * ldc..i * ldc + n) {
                row.fill(0.0);
            }
        }
        return;
    }
    let a_blocks = ap.chunks_exact(2 * MR * kd).take(m.div_ceil(MR));
    for (bi, ablk) in a_blocks.enumerate() {
        for (jb, bblk) in bp.chunks_exact(NB * kd).take(n.div_ceil(NB)).enumerate() {
            let mut acc = [[0.0f64; NB]; MR];
            for (ak, bk) in ablk.chunks_exact(2 * MR).zip(bblk.chunks_exact(NB)) {
                if NB == 4 {
                    // SSE2: the pair (a, a) times (b0, b1) and (b2, b3).
                    let Some(&[b0, b1, b2, b3]) = bk.first_chunk::<4>() else {
                        continue;
                    };
                    for (acc_r, pair) in acc.iter_mut().zip(ak.chunks_exact(2)) {
                        let Some(&[a0, a1]) = pair.first_chunk::<2>() else {
                            continue;
                        };
                        acc_r[0] += a0 * b0;
                        acc_r[1] += a1 * b1;
                        acc_r[2] += a0 * b2;
                        acc_r[3] += a1 * b3;
                    }
                } else {
                    let Some(bv) = bk.first_chunk::<NB>() else {
                        continue;
                    };
                    for (acc_r, pair) in acc.iter_mut().zip(ak.chunks_exact(2)) {
                        let Some(&a0) = pair.first() else {
                            continue;
                        };
                        for (s, &b) in acc_r.iter_mut().zip(bv) {
                            *s += a0 * b;
                        }
                    }
                }
            }
            for (r, acc_r) in acc.iter().enumerate() {
                let i = bi * MR + r;
                if i >= m {
                    break;
                }
                let j0 = jb * NB;
                let dst = c.get_mut(i * ldc + j0..).unwrap_or_default();
                if j0 + NB <= n {
                    if let Some(d) = dst.first_chunk_mut::<NB>() {
                        *d = *acc_r;
                    }
                } else {
                    for (d, &v) in dst.iter_mut().zip(acc_r).take(n - j0) {
                        *d = v;
                    }
                }
            }
        }
    }
}

/// Packs A = Mᵀ (m × kd) for row-major M (kd × m) as [`pack_a`] would.
pub(super) fn pack_a_t<const MR: usize>(mat: &[f64], m: usize, kd: usize, out: &mut [f64]) {
    if kd == 0 || m == 0 {
        return;
    }
    for (bi, blk) in out.chunks_exact_mut(2 * MR * kd).enumerate() {
        let i0 = bi * MR;
        let w = m.saturating_sub(i0).min(MR);
        for (step, row) in blk.chunks_exact_mut(2 * MR).zip(mat.chunks_exact(m)) {
            let src = row.get(i0..i0 + w).unwrap_or_default();
            let (head, tail) = step.split_at_mut(2 * w);
            for (pair, &v) in head.chunks_exact_mut(2).zip(src) {
                pair.fill(v);
            }
            tail.fill(0.0);
        }
    }
}

/// Packs B = Mᵀ (kd × n) for row-major M (n × kd) as [`pack_b`] would.
pub(super) fn pack_b_t(mat: &[f64], kd: usize, n: usize, out: &mut [f64]) {
    if kd == 0 || n == 0 {
        return;
    }
    for (jb, blk) in out.chunks_exact_mut(NB * kd).enumerate() {
        let j0 = jb * NB;
        let row = |q: usize| {
            mat.get((j0 + q) * kd..(j0 + q + 1) * kd)
                .filter(|_| j0 + q < n)
                .unwrap_or_default()
        };
        let rows: [&[f64]; NB] = core::array::from_fn(row);
        if rows.iter().all(|r| r.len() == kd) {
            for (k, step) in blk.chunks_exact_mut(NB).enumerate() {
                for (d, r) in step.iter_mut().zip(&rows) {
                    *d = r.get(k).copied().unwrap_or(0.0);
                }
            }
        } else {
            for (k, step) in blk.chunks_exact_mut(NB).enumerate() {
                for (q, v) in step.iter_mut().enumerate() {
                    *v = row(q).get(k).copied().unwrap_or(0.0);
                }
            }
        }
    }
}

/// Σ x\[i\] with 8 interleaved accumulators (as [`kernels::dot`] with ones).
pub(super) fn sum8(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let c = x.chunks_exact(8);
    let r = c.remainder();
    for ch in c {
        for (a, &v) in acc.iter_mut().zip(ch) {
            *a += v;
        }
    }
    for (a, &v) in acc.iter_mut().zip(r) {
        *a += v;
    }
    crate::autodiff::tree8(acc)
}

/// Rows per register block for a product with m rows of A: 5 or 6 if that divides m (no
/// padding rows), else 4.
pub(super) fn pick_mr(m: usize) -> usize {
    if m % 5 == 0 {
        5
    } else if m % 6 == 0 {
        6
    } else {
        4
    }
}

/// [`pack_a`] with a run-time `mr` (one of 4, 5, 6; [`pick_mr`]).
pub(super) fn pack_a_mr(
    mr: usize,
    m: usize,
    kd: usize,
    a: impl Fn(usize, usize) -> f64,
    out: &mut [f64],
) {
    match mr {
        5 => pack_a::<5>(m, kd, a, out),
        6 => pack_a::<6>(m, kd, a, out),
        _ => pack_a::<4>(m, kd, a, out),
    }
}

/// [`pack_a_t`] with a run-time `mr`.
pub(super) fn pack_a_t_mr(mr: usize, mat: &[f64], m: usize, kd: usize, out: &mut [f64]) {
    match mr {
        5 => pack_a_t::<5>(mat, m, kd, out),
        6 => pack_a_t::<6>(mat, m, kd, out),
        _ => pack_a_t::<4>(mat, m, kd, out),
    }
}

/// [`gemm_packed`] with a run-time `mr` (as the packing of `ap`).
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_packed_mr(
    mr: usize,
    m: usize,
    n: usize,
    kd: usize,
    ap: &[f64],
    bp: &[f64],
    c: &mut [f64],
    ldc: usize,
) {
    match mr {
        5 => gemm_packed::<5>(m, n, kd, ap, bp, c, ldc),
        6 => gemm_packed::<6>(m, n, kd, ap, bp, c, ldc),
        _ => gemm_packed::<4>(m, n, kd, ap, bp, c, ldc),
    }
}

/// Packs A = M (m × kd) for row-major M as [`pack_a`] would.
pub(super) fn pack_a_n<const MR: usize>(mat: &[f64], m: usize, kd: usize, out: &mut [f64]) {
    if kd == 0 || m == 0 {
        return;
    }
    for (bi, blk) in out.chunks_exact_mut(2 * MR * kd).enumerate() {
        let rows: [&[f64]; MR] = core::array::from_fn(|r| {
            let i = bi * MR + r;
            mat.get(i * kd..(i + 1) * kd)
                .filter(|_| i < m)
                .unwrap_or_default()
        });
        for (k, step) in blk.chunks_exact_mut(2 * MR).enumerate() {
            for (pair, row) in step.chunks_exact_mut(2).zip(&rows) {
                pair.fill(row.get(k).copied().unwrap_or(0.0));
            }
        }
    }
}

/// [`pack_a_n`] with a run-time `mr`.
pub(super) fn pack_a_n_mr(mr: usize, mat: &[f64], m: usize, kd: usize, out: &mut [f64]) {
    match mr {
        5 => pack_a_n::<5>(mat, m, kd, out),
        6 => pack_a_n::<6>(mat, m, kd, out),
        _ => pack_a_n::<4>(mat, m, kd, out),
    }
}

/// Packs B = M (kd × n) for row-major M as [`pack_b`] would.
pub(super) fn pack_b_n(mat: &[f64], kd: usize, n: usize, out: &mut [f64]) {
    if kd == 0 || n == 0 {
        return;
    }
    for (jb, blk) in out.chunks_exact_mut(NB * kd).enumerate() {
        let j0 = jb * NB;
        let w = n.saturating_sub(j0).min(NB);
        for (step, row) in blk.chunks_exact_mut(NB).zip(mat.chunks_exact(n)) {
            let src = row.get(j0..j0 + w).unwrap_or_default();
            if let (Some(d), Some(s)) = (step.first_chunk_mut::<NB>(), src.first_chunk::<NB>()) {
                *d = *s;
            } else {
                for (q, d) in step.iter_mut().enumerate() {
                    *d = src.get(q).copied().unwrap_or(0.0);
                }
            }
        }
    }
}

/// δx = [`col2im_t`](kernels::col2im_t)`(δXᵀ)` (`dcol`: positions × taps), bit for bit (each
/// δx entry is summed from 0 in increasing position, at most one tap per position), with the
/// kernel rows unrolled for the common kernel sizes.
pub(super) fn col2im_fast(g: &Geom, dcol: &[f64], dx: &mut [f64]) {
    match g.k {
        2 => col2im_k::<2>(g, dcol, dx),
        3 => col2im_k::<3>(g, dcol, dx),
        4 => col2im_k::<4>(g, dcol, dx),
        5 => col2im_k::<5>(g, dcol, dx),
        8 => col2im_k::<8>(g, dcol, dx),
        _ => kernels::col2im_t(g, dcol, dx),
    }
}

fn col2im_k<const K: usize>(g: &Geom, dcol: &[f64], dx: &mut [f64]) {
    let (plane, kk) = (g.h * g.w, g.c * K * K);
    dx.fill(0.0);
    if plane == 0 || kk == 0 || g.wo == 0 || g.k != K {
        return;
    }
    for (pos, row) in dcol.chunks_exact(kk).take(g.ho * g.wo).enumerate() {
        // Padded coordinates of the window's corner.
        let (hh0, ww0) = (g.s * (pos / g.wo), g.s * (pos % g.wo));
        let inside = ww0 >= g.p && ww0 + K <= g.w + g.p;
        for (dx_c, row_c) in dx.chunks_exact_mut(plane).zip(row.chunks_exact(K * K)) {
            for (a, r) in row_c.chunks_exact(K).enumerate() {
                let hh = hh0 + a;
                if hh < g.p || hh >= g.h + g.p {
                    continue;
                }
                let base = (hh - g.p) * g.w;
                if inside {
                    let dst = dx_c
                        .get_mut(base + ww0 - g.p..)
                        .and_then(|d| d.first_chunk_mut::<K>());
                    if let (Some(dst), Some(src)) = (dst, r.first_chunk::<K>()) {
                        for (d, &v) in dst.iter_mut().zip(src) {
                            *d += v;
                        }
                    }
                } else {
                    for (b, &v) in r.iter().enumerate() {
                        let ww = ww0 + b;
                        if ww >= g.p && ww < g.w + g.p {
                            if let Some(d) = dx_c.get_mut(base + ww - g.p) {
                                *d += v;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// out\[j\] = Σ_n pv\[n\]·src\[pt\[n\]·width + j\] for j < `width`, each sum from 0 in the order
/// of the pairs (as [`gather_rows`](super::gather_rows)), 16, 12, 8 or 4 columns at a time
/// in registers (pad `width` to a multiple of 4 with zero columns for speed).
pub(super) fn gather_rows_into(
    pt: &[usize],
    pv: &[f64],
    src: &[f64],
    width: usize,
    out: &mut [f64],
) {
    let Some(out) = out.get_mut(..width) else {
        return;
    };
    let mut ch = 0;
    while ch + 16 <= width {
        gather_block::<16>(pt, pv, src, width, ch, out);
        ch += 16;
    }
    // One pass for the rest of the multiple of 4 (a pass over the pairs is a dependent
    // chain per accumulator: fewer, wider passes).
    match width - ch {
        12..=15 => gather_block::<12>(pt, pv, src, width, ch, out),
        8..=11 => gather_block::<8>(pt, pv, src, width, ch, out),
        4..=7 => gather_block::<4>(pt, pv, src, width, ch, out),
        _ => {}
    }
    ch += (width - ch) / 4 * 4;
    while ch < width {
        gather_block::<1>(pt, pv, src, width, ch, out);
        ch += 1;
    }
}

#[inline(always)]
fn gather_block<const B: usize>(
    pt: &[usize],
    pv: &[f64],
    src: &[f64],
    width: usize,
    ch: usize,
    out: &mut [f64],
) {
    let mut acc = [0.0f64; B];
    for (&t, &v) in pt.iter().zip(pv) {
        if let Some(row) = src.get(t * width + ch..).and_then(|r| r.first_chunk::<B>()) {
            for (a, &w) in acc.iter_mut().zip(row) {
                *a += v * w;
            }
        }
    }
    if let Some(d) = out.get_mut(ch..).and_then(|d| d.first_chunk_mut::<B>()) {
        *d = acc;
    }
}

#[cfg(test)]
mod tests {
    //! The packed products, packings, gathers and `col2im_fast` against the plain kernels:
    //! bit for bit (same summation order), over shapes with and without padding rows and
    //! columns, every register-block height, and border / stride / padding variants.

    use super::*;
    use crate::rng::Rng;
    use alloc::vec;
    use alloc::vec::Vec;

    fn rand(n: usize, r: &mut Rng) -> Vec<f64> {
        (0..n).map(|_| r.gaussian()).collect()
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn packed_products_equal_gemm_bit_for_bit() {
        let mut r = Rng::from_seed(11);
        for &(m, n, kd) in &[
            (1, 1, 1),
            (25, 256, 32),
            (64, 16, 169),
            (7, 9, 5),
            (12, 3, 4),
            (50, 512, 32),
            (4, 4, 0),
        ] {
            let a = rand(m * kd, &mut r);
            let b = rand(kd * n, &mut r);
            let mut want = vec![0.0; m * n];
            kernels::gemm(m, n, kd, &a, &b, &mut want, |u: f64, v: f64| u * v);
            let at: Vec<f64> = (0..kd * m).map(|i| a[(i % m) * kd + i / m]).collect();
            let bt: Vec<f64> = (0..n * kd).map(|i| b[(i % kd) * n + i / kd]).collect();
            for mr in [4, 5, 6, pick_mr(m)] {
                let mut ap = vec![f64::NAN; packed_a_len(m, kd, mr)];
                let mut bp = vec![f64::NAN; packed_b_len(kd, n)];
                pack_a_mr(mr, m, kd, |i, k| a[i * kd + k], &mut ap);
                pack_b(kd, n, |k, j| b[k * n + j], &mut bp);
                // The specialised packings give the same buffers.
                let mut ap2 = vec![f64::NAN; ap.len()];
                pack_a_n_mr(mr, &a, m, kd, &mut ap2);
                assert_eq!(bits(&ap), bits(&ap2), "pack_a_n {m} {n} {kd} {mr}");
                pack_a_t_mr(mr, &at, m, kd, &mut ap2);
                assert_eq!(bits(&ap), bits(&ap2), "pack_a_t {m} {n} {kd} {mr}");
                let mut bp2 = vec![f64::NAN; bp.len()];
                pack_b_n(&b, kd, n, &mut bp2);
                assert_eq!(bits(&bp), bits(&bp2), "pack_b_n {m} {n} {kd}");
                pack_b_t(&bt, kd, n, &mut bp2);
                assert_eq!(bits(&bp), bits(&bp2), "pack_b_t {m} {n} {kd}");
                // Into a wider C (ldc > n): the extra column stays untouched.
                let mut c = vec![7.0; m * (n + 1)];
                gemm_packed_mr(mr, m, n, kd, &ap, &bp, &mut c, n + 1);
                for i in 0..m {
                    assert_eq!(
                        bits(&c[i * (n + 1)..i * (n + 1) + n]),
                        bits(&want[i * n..(i + 1) * n]),
                        "gemm {m} {n} {kd} {mr} row {i}"
                    );
                    assert_eq!(c[i * (n + 1) + n], 7.0);
                }
            }
        }
    }

    #[test]
    fn col2im_fast_equals_col2im_t_bit_for_bit() {
        let mut r = Rng::from_seed(12);
        for k in [1, 2, 3, 4, 5, 8, 9] {
            for s in 1..=3 {
                for p in 0..=3 {
                    let (c, h, w) = (2, 9, 8);
                    let (hp, wp) = (h + 2 * p, w + 2 * p);
                    if hp < k || wp < k {
                        continue;
                    }
                    let (ho, wo) = ((hp - k) / s + 1, (wp - k) / s + 1);
                    let g = Geom {
                        c,
                        h,
                        w,
                        o: 3,
                        ho,
                        wo,
                        k,
                        s,
                        p,
                    };
                    let dcol = rand(g.col_len(), &mut r);
                    let mut want = vec![f64::NAN; c * h * w];
                    let mut got = vec![f64::NAN; c * h * w];
                    kernels::col2im_t(&g, &dcol, &mut want);
                    col2im_fast(&g, &dcol, &mut got);
                    assert_eq!(bits(&got), bits(&want), "k {k} s {s} p {p}");
                }
            }
        }
    }

    #[test]
    fn gather_rows_into_equals_gather_rows_bit_for_bit() {
        let mut r = Rng::from_seed(13);
        for width in [1, 3, 4, 8, 12, 16, 25, 32, 57, 60] {
            let rows = 40;
            let src = rand(rows * width, &mut r);
            let pt: Vec<usize> = (0..23).map(|i| (i * 7 + 3) % rows).collect();
            let pv = rand(pt.len(), &mut r);
            let mut want = vec![f64::NAN; width];
            super::super::gather_rows(&pt, &pv, &src, width, &mut want, 1);
            let mut got = vec![f64::NAN; width + 1];
            gather_rows_into(&pt, &pv, &src, width, &mut got);
            assert_eq!(bits(&got[..width]), bits(&want), "width {width}");
            assert!(got[width].is_nan());
        }
    }
}
