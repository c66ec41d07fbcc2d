//! Dense `f64` and `f32` matrix products for large layers (the RecoNN reconstructor's 7,960 ×
//! 1,000 layer, the batched gradient sums): row-major C = A·B, Aᵀ·B and A·Bᵀ.
//!
//! **Two element types** (issue 32). The kernels are generic over the sealed [`Real`]
//! (`f64`, `f32`): one code path, each type with its own register tile (`f32`: the same
//! registers, twice the lanes). Everything below holds for both; an `f32` product is the
//! `f32` fma chain (`f32::mul_add` / `libm::fmaf`, correctly rounded), never an `f64` one
//! rounded at the end. The RecoNN reconstructor uses `f32` with `--precision f32`.
//!
//! **Canonical order.** Every entry is one fused multiply-add chain over the inner index in
//! increasing order, starting from +0: c ← fma(a_k, b_k, c) for k = 0, 1, …, kd − 1. `fma` is
//! correctly rounded on every IEEE platform (hardware or software), so the result depends on
//! this order alone, never on the vector width, the blocking or the number of threads: SSE2,
//! AVX2 and AVX-512 builds, `std` and `no_std` builds, and [`matmul_threads`] with any thread
//! count give the same bits.
//!
//! **Speed.** With `alloc` the products are cache-blocked (panels of A and B packed into
//! contiguous buffers, `KC` inner indices at a time; an entry's partial chain is stored in C
//! between two `KC` blocks and resumed from there, which does not round) and register-blocked
//! (an `MR` × `NR` tile of C in vector registers: 6 × 16 with AVX-512, 4 × 12 with AVX, 4 × 4
//! otherwise, in `f64`; 6 × 32, 4 × 24, 4 × 8 in `f32`); the tile loop is written so that the
//! compiler vectorises it (no `unsafe`, no intrinsics), and a whole tile's rows and a packed
//! register row are moved as fixed-length arrays (a slice copy of run-time length is a call
//! to `memmove`, which took a quarter of the 1000³ product before issue 32). Measured on a
//! 2-core AMD EPYC (Zen 5; README "Dense kernels", against the peak that
//! `scripts/fma_peak.rs` measures), 1000³: 84–94 % of the 256-bit fma peak in this
//! repository's build (f64 and f32), 80–89 % of the 512-bit peak in the opt-in AVX-512 build
//! (README, "Builds and CPUs"). The fused multiply-add runs at hardware speed only when the
//! build targets a CPU with FMA (`-C target-cpu=native`, or `-C target-feature=+fma`);
//! otherwise `mul_add` (and `libm::fma` without `std`) is a correctly rounded software
//! routine, about 10–20× slower per operation — same bits, much slower products (README,
//! "Speed").
//!
//! **No run-time dispatch.** The crate is `#![forbid(unsafe_code)]`. Since Rust 1.86 a
//! `#[target_feature(enable = "fma")]` function is safe to *define*, but calling it from code
//! compiled without that feature still needs an `unsafe` block after
//! `is_x86_feature_detected!`; we keep the crate free of `unsafe` and let the build's target
//! flags choose the instructions (this repository's `.cargo/config.toml` targets the host).

/// a·b + c rounded once: `f64::mul_add` with `std` (a hardware FMA where the target has
/// one), `libm::fma` without; both are correctly rounded, so the bits are the same.
#[inline(always)]
pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        a.mul_add(b, c)
    }
    #[cfg(not(feature = "std"))]
    {
        libm::fma(a, b, c)
    }
}

/// The element types of the products: `f64` and `f32`. Sealed (implemented here only): the
/// canonical order needs a correctly rounded fused multiply-add, which both have (`f64`:
/// [`fma`]; `f32`: `f32::mul_add` with `std`, `libm::fmaf` without), so an `f32` product is,
/// like an `f64` one, the same bits on every build and thread count (issue 32). Each type
/// has its own register tile: the same number of vector registers, twice the lanes for `f32`.
pub(crate) trait Real:
    Copy
    + Send
    + Sync
    + PartialEq
    + PartialOrd
    + core::fmt::Debug
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::AddAssign
    + core::ops::SubAssign
    + sealed::Sealed
    + 'static
{
    /// +0.
    const ZERO: Self;
    /// Rows of C per register tile.
    const MR: usize;
    /// Columns of C per register tile.
    const NR: usize;
    /// a·b + c rounded once (correctly rounded on every build).
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// One MR × NR register tile (see [`tile`]), instantiated with this type's tile shape.
    #[cfg(feature = "alloc")]
    #[allow(clippy::too_many_arguments)]
    fn tile(
        kc: usize,
        ap: &[Self],
        bp: &[Self],
        c: &mut [Self],
        n: usize,
        i0: usize,
        j0: usize,
        mr: usize,
        nr: usize,
        first: bool,
    );
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// `f64` rows of C per register tile.
#[cfg(target_feature = "avx512f")]
const MR64: usize = 6;
/// `f64` columns of C per register tile (two 8-lane vectors, or four 4-lane vectors when
/// the compiler prefers 256-bit vectors: 24 of the 32 registers either way).
#[cfg(target_feature = "avx512f")]
const NR64: usize = 16;
/// `f64` rows of C per register tile.
#[cfg(all(target_feature = "avx", not(target_feature = "avx512f")))]
const MR64: usize = 4;
/// `f64` columns of C per register tile (three 4-lane vectors).
#[cfg(all(target_feature = "avx", not(target_feature = "avx512f")))]
const NR64: usize = 12;
/// `f64` rows of C per register tile.
#[cfg(not(target_feature = "avx"))]
const MR64: usize = 4;
/// `f64` columns of C per register tile (two SSE2 pairs).
#[cfg(not(target_feature = "avx"))]
const NR64: usize = 4;
/// `f32` rows of C per register tile (as `f64`).
const MR32: usize = MR64;
/// `f32` columns of C per register tile: the `f64` tile's registers, twice the lanes (32
/// with AVX-512, 24 with AVX, 8 with SSE2).
const NR32: usize = 2 * NR64;

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const MR: usize = MR64;
    const NR: usize = NR64;
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        fma(a, b, c)
    }
    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn tile(
        kc: usize,
        ap: &[f64],
        bp: &[f64],
        c: &mut [f64],
        n: usize,
        i0: usize,
        j0: usize,
        mr: usize,
        nr: usize,
        first: bool,
    ) {
        tile::<f64, MR64, NR64>(kc, ap, bp, c, n, i0, j0, mr, nr, first);
    }
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const MR: usize = MR32;
    const NR: usize = NR32;
    /// a·b + c rounded once: `f32::mul_add` with `std`, `libm::fmaf` without (both
    /// correctly rounded: the same bits).
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        #[cfg(feature = "std")]
        {
            a.mul_add(b, c)
        }
        #[cfg(not(feature = "std"))]
        {
            libm::fmaf(a, b, c)
        }
    }
    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn tile(
        kc: usize,
        ap: &[f32],
        bp: &[f32],
        c: &mut [f32],
        n: usize,
        i0: usize,
        j0: usize,
        mr: usize,
        nr: usize,
        first: bool,
    ) {
        tile::<f32, MR32, NR32>(kc, ap, bp, c, n, i0, j0, mr, nr, first);
    }
}

/// Inner indices per cache block (a packed NR-column panel of B, KC × NR, stays in L1: 24 KB
/// with AVX in either type, since the `f32` tile is twice as wide). 256 rather than 192
/// (issue 32, measured on the 2-core AMD EPYC, one pinned thread, load ≈ 1, two interleaved
/// rounds): the 1000³ product took 42.6 / 41.8 ms against 49.2 / 45.2 in `f64` and 18.6 /
/// 18.6 against 21.7 / 19.1 ms in `f32` (fewer passes over C, whose tiles are reloaded
/// from beyond L2 once per block); the reconstructor's shapes did not move beyond noise.
const KC: usize = 256;
/// Register tiles of rows of A per cache block (a packed MC × KC block of A, MC = 32·MR,
/// stays in L2).
const MC_TILES: usize = 32;
/// Register tiles of columns of B per cache block (a packed KC × NC block of B, NC = 170·NR,
/// stays in L3).
const NC_TILES: usize = 170;
/// Below this many multiply-adds the plain loops are used (same order, same bits).
const SMALL: usize = 32 * 32 * 32;

/// A matrix operand read through strides: element (i, k) is `s[off + i·rs + k·cs]`.
#[derive(Clone, Copy)]
struct View<'a, T> {
    s: &'a [T],
    off: usize,
    rs: usize,
    cs: usize,
}

impl<T: Real> View<'_, T> {
    #[inline(always)]
    fn at(&self, i: usize, k: usize) -> T {
        self.s
            .get(self.off + i * self.rs + k * self.cs)
            .copied()
            .unwrap_or(T::ZERO)
    }
}

/// C (m × n) = A (m × kd) · B (kd × n), all row-major, in the canonical order (module
/// docs): C[i, j] = fma chain over k = 0, 1, …, kd − 1 of A[i, k]·B[k, j] from +0. Slices
/// shorter than their shape leave C unchanged (internal kernel: callers validate shapes).
pub(crate) fn matmul<T: Real>(m: usize, n: usize, kd: usize, a: &[T], b: &[T], c: &mut [T]) {
    matmul_threads(m, n, kd, a, b, c, 1);
}

/// C (m × n) = Aᵀ · B with A stored kd × m and B kd × n (row-major): C[i, j] = Σ_k A[k, i]·B[k, j],
/// one fma chain per entry over k ascending from +0 (module docs).
pub(crate) fn matmul_tn<T: Real>(m: usize, n: usize, kd: usize, a: &[T], b: &[T], c: &mut [T]) {
    matmul_tn_threads(m, n, kd, a, b, c, 1);
}

/// C (m × n) = A · Bᵀ with A stored m × kd and B n × kd (row-major): C[i, j] = Σ_k A[i, k]·B[j, k],
/// one fma chain per entry over k ascending from +0 (module docs).
pub(crate) fn matmul_nt<T: Real>(m: usize, n: usize, kd: usize, a: &[T], b: &[T], c: &mut [T]) {
    matmul_nt_threads(m, n, kd, a, b, c, 1);
}

/// [`matmul`] with C split into bands of rows or columns ([`split_threads`]) over up to
/// `threads` scoped threads (with `std`; without it, or for `threads` ≤ 1, on the calling
/// thread). Same bits for every `threads`.
pub(crate) fn matmul_threads<T: Real>(
    m: usize,
    n: usize,
    kd: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
) {
    if a.len() < m * kd || b.len() < kd * n || c.len() < m * n {
        return;
    }
    let av = View {
        s: a,
        off: 0,
        rs: kd,
        cs: 1,
    };
    let bv = View {
        s: b,
        off: 0,
        rs: n,
        cs: 1,
    };
    split_threads(m, n, kd, av, bv, &mut c[..m * n], threads);
}

/// [`matmul_tn`] with C split over up to `threads` threads (see [`matmul_threads`]).
pub(crate) fn matmul_tn_threads<T: Real>(
    m: usize,
    n: usize,
    kd: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
) {
    if a.len() < kd * m || b.len() < kd * n || c.len() < m * n {
        return;
    }
    let av = View {
        s: a,
        off: 0,
        rs: 1,
        cs: m,
    };
    let bv = View {
        s: b,
        off: 0,
        rs: n,
        cs: 1,
    };
    split_threads(m, n, kd, av, bv, &mut c[..m * n], threads);
}

/// [`matmul_nt`] with C split over up to `threads` threads (see [`matmul_threads`]).
pub(crate) fn matmul_nt_threads<T: Real>(
    m: usize,
    n: usize,
    kd: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
) {
    if a.len() < m * kd || b.len() < n * kd || c.len() < m * n {
        return;
    }
    let av = View {
        s: a,
        off: 0,
        rs: kd,
        cs: 1,
    };
    let bv = View {
        s: b,
        off: 0,
        rs: 1,
        cs: kd,
    };
    split_threads(m, n, kd, av, bv, &mut c[..m * n], threads);
}

/// Splits C (m × n, `c.len() == m·n`) into `threads` bands of whole register tiles and
/// computes each on its own scoped thread: bands of rows, or, when C has fewer rows than
/// columns (the reconstructor's 128-row products, whose B is the 7,960 × 1,000 weight matrix),
/// bands of columns, so that each thread packs its part of the larger operand B rather than
/// all of it (a band of columns is computed into the thread's own buffer, m × its width, and
/// copied into C). Every entry is computed by exactly one call of [`product`], in the
/// canonical order, so the split does not change any bit.
fn split_threads<T: Real>(
    m: usize,
    n: usize,
    kd: usize,
    a: View<'_, T>,
    b: View<'_, T>,
    c: &mut [T],
    threads: usize,
) {
    #[cfg(feature = "std")]
    if threads > 1 && m < n && n >= 2 * T::NR && m > 0 && m * n * kd >= 4 * SMALL {
        let tiles = n.div_ceil(T::NR);
        let per = tiles.div_ceil(threads.min(tiles)) * T::NR;
        let mut bands: alloc::vec::Vec<(usize, alloc::vec::Vec<T>)> = (0..n)
            .step_by(per)
            .map(|j0| (j0, alloc::vec![T::ZERO; m * per.min(n - j0)]))
            .collect();
        std::thread::scope(|sc| {
            for (j0, buf) in bands.iter_mut() {
                let w = buf.len() / m;
                let bb = View {
                    off: b.off + *j0 * b.cs,
                    ..b
                };
                sc.spawn(move || product(m, w, kd, a, bb, buf));
            }
        });
        for (j0, buf) in &bands {
            let w = buf.len() / m;
            for (crow, brow) in c.chunks_exact_mut(n).zip(buf.chunks_exact(w)) {
                if let Some(dst) = crow.get_mut(*j0..*j0 + w) {
                    dst.copy_from_slice(brow);
                }
            }
        }
        return;
    }
    #[cfg(feature = "std")]
    if threads > 1 && m >= 2 * T::MR && n > 0 && m * n * kd >= 4 * SMALL {
        let tiles = m.div_ceil(T::MR);
        let per = tiles.div_ceil(threads.min(tiles)) * T::MR;
        std::thread::scope(|sc| {
            for (t, band) in c.chunks_mut(per * n).enumerate() {
                let rows = band.len() / n;
                let ab = View {
                    off: a.off + t * per * a.rs,
                    ..a
                };
                sc.spawn(move || product(rows, n, kd, ab, b, band));
            }
        });
        return;
    }
    let _ = threads;
    product(m, n, kd, a, b, c);
}

/// C = A·B for strided views, C row-major m × n; canonical order.
fn product<T: Real>(m: usize, n: usize, kd: usize, a: View<'_, T>, b: View<'_, T>, c: &mut [T]) {
    if m == 0 || n == 0 {
        return;
    }
    #[cfg(feature = "alloc")]
    if m * n * kd >= SMALL && m >= T::MR && n >= T::NR {
        blocked(m, n, kd, a, b, c);
        return;
    }
    plain(m, n, kd, a, b, c);
}

/// The definition, entry by entry (small products, and builds without `alloc`).
fn plain<T: Real>(m: usize, n: usize, kd: usize, a: View<'_, T>, b: View<'_, T>, c: &mut [T]) {
    for (i, crow) in c.chunks_exact_mut(n).take(m).enumerate() {
        crow.fill(T::ZERO);
        for k in 0..kd {
            let av = a.at(i, k);
            for (j, cv) in crow.iter_mut().enumerate() {
                *cv = T::fma(av, b.at(k, j), *cv);
            }
        }
    }
}

/// Cache- and register-blocked product (BLIS loop order: NC columns of B, KC inner indices,
/// MC rows of A, then NR × MR tiles). Packed panels are padded with zeros to whole tiles;
/// padded rows and columns produce tile entries that are never stored, and a stored entry's
/// chain only involves its own row of A and column of B.
#[cfg(feature = "alloc")]
fn blocked<T: Real>(m: usize, n: usize, kd: usize, a: View<'_, T>, b: View<'_, T>, c: &mut [T]) {
    use alloc::vec;
    let (mr_t, nr_t) = (T::MR, T::NR);
    let (mc_b, nc_b) = (MC_TILES * mr_t, NC_TILES * nr_t);
    let nc_max = nc_b.min(n.div_ceil(nr_t) * nr_t);
    let mc_max = mc_b.min(m.div_ceil(mr_t) * mr_t);
    let kc_max = KC.min(kd.max(1));
    let mut bp = vec![T::ZERO; kc_max * nc_max];
    let mut ap = vec![T::ZERO; kc_max * mc_max];
    if kd == 0 {
        c.fill(T::ZERO);
        return;
    }
    let mut jc = 0;
    while jc < n {
        let nc = nc_b.min(n - jc);
        let mut pc = 0;
        while pc < kd {
            let kc = KC.min(kd - pc);
            pack_b(b, pc, kc, jc, nc, &mut bp);
            let mut ic = 0;
            while ic < m {
                let mc = mc_b.min(m - ic);
                pack_a(a, ic, mc, pc, kc, &mut ap);
                for (jt, bpanel) in bp
                    .chunks_exact(kc * nr_t)
                    .take(nc.div_ceil(nr_t))
                    .enumerate()
                {
                    let j0 = jc + jt * nr_t;
                    let nr = nr_t.min(n - j0);
                    for (it, apanel) in ap
                        .chunks_exact(kc * mr_t)
                        .take(mc.div_ceil(mr_t))
                        .enumerate()
                    {
                        let i0 = ic + it * mr_t;
                        let mr = mr_t.min(m - i0);
                        T::tile(kc, apanel, bpanel, c, n, i0, j0, mr, nr, pc == 0);
                    }
                }
                ic += mc;
            }
            pc += kc;
        }
        jc += nc;
    }
}

/// Packs B[pc..pc + kc, jc..jc + nc] into panels of NR columns: panel t holds, for each k,
/// the NR values B[pc + k, jc + t·NR + q] (zeros past column n).
#[cfg(feature = "alloc")]
fn pack_b<T: Real>(b: View<'_, T>, pc: usize, kc: usize, jc: usize, nc: usize, bp: &mut [T]) {
    let nr_t = T::NR;
    for (t, panel) in bp
        .chunks_exact_mut(kc * nr_t)
        .take(nc.div_ceil(nr_t))
        .enumerate()
    {
        let j0 = jc + t * nr_t;
        let nr = nr_t.min(jc + nc - j0);
        for (k, dst) in panel.chunks_exact_mut(nr_t).enumerate() {
            if b.cs == 1 {
                let start = b.off + (pc + k) * b.rs + j0;
                match b.s.get(start..start + nr) {
                    Some(src) => copy_row(dst, src, nr),
                    None => dst[..nr].fill(T::ZERO),
                }
            } else {
                for (q, d) in dst[..nr].iter_mut().enumerate() {
                    *d = b.at(pc + k, j0 + q);
                }
            }
            dst[nr..].fill(T::ZERO);
        }
    }
}

/// dst[..len] = src[..len] (`len` ≤ both lengths), as a fixed-length vector move when `len`
/// is a whole register row (a slice copy of run-time length is a call to `memmove`).
#[cfg(feature = "alloc")]
#[inline(always)]
fn copy_row<T: Real>(dst: &mut [T], src: &[T], len: usize) {
    macro_rules! fixed {
        ($($w:literal),*) => {
            $(if len == $w {
                if let (Some(d), Some(s)) = (dst.first_chunk_mut::<$w>(), src.first_chunk::<$w>()) {
                    *d = *s;
                    return;
                }
            })*
        };
    }
    fixed!(4, 6, 8, 12, 16, 24, 32);
    if let (Some(d), Some(s)) = (dst.get_mut(..len), src.get(..len)) {
        d.copy_from_slice(s);
    }
}

/// Packs A[ic..ic + mc, pc..pc + kc] into panels of MR rows: panel t holds, for each k, the
/// MR values A[ic + t·MR + r, pc + k] (zeros past row m).
#[cfg(feature = "alloc")]
fn pack_a<T: Real>(a: View<'_, T>, ic: usize, mc: usize, pc: usize, kc: usize, ap: &mut [T]) {
    let mr_t = T::MR;
    for (t, panel) in ap
        .chunks_exact_mut(kc * mr_t)
        .take(mc.div_ceil(mr_t))
        .enumerate()
    {
        let i0 = ic + t * mr_t;
        let mr = mr_t.min(ic + mc - i0);
        if a.rs == 1 {
            for (k, dst) in panel.chunks_exact_mut(mr_t).enumerate() {
                let start = a.off + (pc + k) * a.cs + i0;
                match a.s.get(start..start + mr) {
                    Some(src) => copy_row(dst, src, mr),
                    None => dst[..mr].fill(T::ZERO),
                }
                dst[mr..].fill(T::ZERO);
            }
        } else {
            for r in 0..mr_t {
                if r < mr {
                    let start = a.off + (i0 + r) * a.rs + pc * a.cs;
                    if a.cs == 1 {
                        if let Some(src) = a.s.get(start..start + kc) {
                            for (dst, &v) in panel.chunks_exact_mut(mr_t).zip(src) {
                                dst[r] = v;
                            }
                            continue;
                        }
                    }
                    for (k, dst) in panel.chunks_exact_mut(mr_t).enumerate() {
                        dst[r] = a.at(i0 + r, pc + k);
                    }
                } else {
                    for dst in panel.chunks_exact_mut(mr_t) {
                        dst[r] = T::ZERO;
                    }
                }
            }
        }
    }
}

/// One MR × NR tile of C at (i0, j0) (mr × nr of it inside C): resumes each entry's chain
/// from C (or from +0 when `first`), runs it over the kc packed inner indices and stores it.
/// Instantiated by [`Real::tile`] with each type's tile shape (array lengths must be
/// constants, which an associated constant of a generic type is not).
#[cfg(feature = "alloc")]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn tile<T: Real, const MR: usize, const NR: usize>(
    kc: usize,
    ap: &[T],
    bp: &[T],
    c: &mut [T],
    n: usize,
    i0: usize,
    j0: usize,
    mr: usize,
    nr: usize,
    first: bool,
) {
    let mut acc = [[T::ZERO; NR]; MR];
    if mr == MR && nr == NR {
        // A whole tile: fixed-length rows, which the compiler moves as vectors (a slice copy
        // of run-time length is a call to `memmove`: with two per row of every tile they
        // took a quarter of the 1000³ product's time, issue 32). Its own path with constant
        // trip counts: one path for both kinds of tile, through `copy_row` with the run-time
        // `mr`, measured 20–25 % slower on the 1000³ product (the rows went through memory).
        if !first {
            for (r, row) in acc.iter_mut().enumerate() {
                let s = (i0 + r) * n + j0;
                if let Some(src) = c.get(s..).and_then(|t| t.first_chunk::<NR>()) {
                    *row = *src;
                }
            }
        }
        micro(kc, ap, bp, &mut acc);
        for (r, row) in acc.iter().enumerate() {
            let s = (i0 + r) * n + j0;
            if let Some(dst) = c.get_mut(s..).and_then(|t| t.first_chunk_mut::<NR>()) {
                *dst = *row;
            }
        }
        return;
    }
    if !first {
        for (r, row) in acc.iter_mut().enumerate().take(mr) {
            let s = (i0 + r) * n + j0;
            if let Some(src) = c.get(s..s + nr) {
                row[..nr].copy_from_slice(src);
            }
        }
    }
    micro(kc, ap, bp, &mut acc);
    for (r, row) in acc.iter().enumerate().take(mr) {
        let s = (i0 + r) * n + j0;
        if let Some(dst) = c.get_mut(s..s + nr) {
            dst.copy_from_slice(&row[..nr]);
        }
    }
}

/// The register kernel: for each packed k, acc[r][q] ← fma(A[r], B[q], acc[r][q]).
#[cfg(feature = "alloc")]
#[inline(always)]
fn micro<T: Real, const MR: usize, const NR: usize>(
    kc: usize,
    ap: &[T],
    bp: &[T],
    acc: &mut [[T; NR]; MR],
) {
    let mut t = *acc;
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)).take(kc) {
        let (Some(a), Some(b)) = (a.first_chunk::<MR>(), b.first_chunk::<NR>()) else {
            break;
        };
        for (tr, &ar) in t.iter_mut().zip(a) {
            for (s, &bq) in tr.iter_mut().zip(b) {
                *s = T::fma(ar, bq, *s);
            }
        }
    }
    *acc = t;
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn data(len: usize, seed: u64) -> Vec<f64> {
        let mut r = crate::rng::Rng::from_seed(seed);
        (0..len).map(|_| r.uniform() * 2.0 - 1.0).collect()
    }

    /// Naive definition with plain (unfused) f64 arithmetic in another order (k descending):
    /// an independent reference for the relative-error check.
    fn naive(
        m: usize,
        n: usize,
        kd: usize,
        a: impl Fn(usize, usize) -> f64,
        b: impl Fn(usize, usize) -> f64,
    ) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for k in (0..kd).rev() {
                    s += a(i, k) * b(k, j);
                }
                c[i * n + j] = s;
            }
        }
        c
    }

    /// The canonical order written out entry by entry.
    fn canonical(
        m: usize,
        n: usize,
        kd: usize,
        a: impl Fn(usize, usize) -> f64,
        b: impl Fn(usize, usize) -> f64,
    ) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for k in 0..kd {
                    s = fma(a(i, k), b(k, j), s);
                }
                c[i * n + j] = s;
            }
        }
        c
    }

    fn close(x: &[f64], y: &[f64], kd: usize) {
        for (&u, &v) in x.iter().zip(y) {
            // |error| ≤ kd·ε·Σ|a||b| ≤ kd·ε·kd for entries in [−1, 1]; relative to the sum of
            // magnitudes, 1e-12 for these sizes.
            assert!((u - v).abs() <= 1e-12 * (kd as f64).max(1.0), "{u} vs {v}");
        }
    }

    #[test]
    fn gemm_products_match_the_naive_reference_and_the_canonical_order_bit_for_bit() {
        // Odd shapes: tails in every blocking direction (MR, NR, KC, MC), and a small one.
        for &(m, n, kd) in &[
            (3, 5, 7),
            (37, 29, 201),
            (MC_TILES * MR64 + 3, NR64 * 2 + 5, KC + 17),
            (2 * MR64 + 1, NR64 * 9 + 5, KC + 40),
            (9, 1, 400),
            (1, 50, 33),
        ] {
            let a = data(m * kd, 1);
            let b = data(kd * n, 2);
            let at = |i: usize, k: usize| a[i * kd + k];
            let bt = |k: usize, j: usize| b[k * n + j];
            let mut c = vec![f64::NAN; m * n];
            matmul(m, n, kd, &a, &b, &mut c);
            close(&c, &naive(m, n, kd, at, bt), kd);
            assert_eq!(c, canonical(m, n, kd, at, bt));
            // Aᵀ·B with A stored kd × m.
            let a_t: Vec<f64> = (0..kd * m).map(|x| a[(x % m) * kd + x / m]).collect();
            let mut c2 = vec![f64::NAN; m * n];
            matmul_tn(m, n, kd, &a_t, &b, &mut c2);
            assert_eq!(c2, c);
            // A·Bᵀ with B stored n × kd.
            let b_t: Vec<f64> = (0..n * kd).map(|x| b[(x % kd) * n + x / kd]).collect();
            let mut c3 = vec![f64::NAN; m * n];
            matmul_nt(m, n, kd, &a, &b_t, &mut c3);
            assert_eq!(c3, c);
            for threads in [2, 3, 7] {
                let mut d = vec![f64::NAN; m * n];
                matmul_threads(m, n, kd, &a, &b, &mut d, threads);
                assert_eq!(d, c);
                matmul_tn_threads(m, n, kd, &a_t, &b, &mut d, threads);
                assert_eq!(d, c);
                matmul_nt_threads(m, n, kd, &a, &b_t, &mut d, threads);
                assert_eq!(d, c);
            }
        }
    }

    /// The f32 canonical order written out entry by entry with `libm::fmaf` (the `no_std`
    /// routine, so a `std` build also checks that `f32::mul_add` gives its bits).
    fn canonical_f32(
        m: usize,
        n: usize,
        kd: usize,
        a: impl Fn(usize, usize) -> f32,
        b: impl Fn(usize, usize) -> f32,
    ) -> Vec<f32> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0_f32;
                for k in 0..kd {
                    s = libm::fmaf(a(i, k), b(k, j), s);
                }
                c[i * n + j] = s;
            }
        }
        c
    }

    /// f32 products (issue 32) are the canonical fma chain bit for bit (tolerance: none) in
    /// all three layouts and on 1, 2 and 3 threads, for shapes with tails in every blocking
    /// direction of the f32 tile (MR32 × NR32, KC, MC) and a small one (plain loops); and
    /// they are f32 products, not f64 ones rounded at the end (which would differ from the
    /// f32 chain in many entries of a 201-term sum).
    #[test]
    fn gemm_f32_products_match_the_canonical_f32_chain_bit_for_bit_in_every_layout() {
        for &(m, n, kd) in &[
            (3, 5, 7),
            (37, 29, 201),
            (MC_TILES * MR32 + 3, NR32 * 2 + 5, KC + 17),
            (2 * MR32 + 1, NR32 * 9 + 5, KC + 40),
            (9, 1, 400),
            (1, 50, 33),
            (2 * MR32 + 1, NR32 + 1, 2 * KC + 1),
        ] {
            let a: Vec<f32> = data(m * kd, 1).iter().map(|&v| v as f32).collect();
            let b: Vec<f32> = data(kd * n, 2).iter().map(|&v| v as f32).collect();
            let at = |i: usize, k: usize| a[i * kd + k];
            let bt = |k: usize, j: usize| b[k * n + j];
            let want = canonical_f32(m, n, kd, at, bt);
            let a_t: Vec<f32> = (0..kd * m).map(|x| a[(x % m) * kd + x / m]).collect();
            let b_t: Vec<f32> = (0..n * kd).map(|x| b[(x % kd) * n + x / kd]).collect();
            for threads in [1, 2, 3] {
                let mut c = vec![f32::NAN; m * n];
                matmul_threads(m, n, kd, &a, &b, &mut c, threads);
                assert_eq!(c, want, "NN {m}x{n}x{kd}, {threads} threads");
                let mut c = vec![f32::NAN; m * n];
                matmul_tn_threads(m, n, kd, &a_t, &b, &mut c, threads);
                assert_eq!(c, want, "TN {m}x{n}x{kd}, {threads} threads");
                let mut c = vec![f32::NAN; m * n];
                matmul_nt_threads(m, n, kd, &a, &b_t, &mut c, threads);
                assert_eq!(c, want, "NT {m}x{n}x{kd}, {threads} threads");
            }
            if kd == 201 {
                let wide = canonical(
                    m,
                    n,
                    kd,
                    |i, k| f64::from(at(i, k)),
                    |k, j| f64::from(bt(k, j)),
                );
                let differ = wide
                    .iter()
                    .zip(&want)
                    .filter(|&(&w, &v)| w as f32 != v)
                    .count();
                assert!(differ > m * n / 10, "{differ} of {} entries differ", m * n);
            }
        }
    }

    #[test]
    fn gemm_with_empty_inner_dimension_is_zero_and_short_slices_leave_c_unchanged() {
        let mut c = vec![f64::NAN; 6 * 30];
        matmul(6, 30, 0, &[], &[], &mut c);
        assert!(c.iter().all(|&v| v == 0.0));
        let mut d = vec![7.0; 4];
        matmul(2, 2, 2, &[1.0; 3], &[1.0; 4], &mut d);
        assert_eq!(d, [7.0; 4]);
    }
}
