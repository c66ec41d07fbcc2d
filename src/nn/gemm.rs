//! Dense `f64` matrix products for large layers (the RecoNN reconstructor's 7,960 × 1,000
//! layer): row-major C = A·B, Aᵀ·B and A·Bᵀ.
//!
//! **Canonical order.** Every entry is one fused multiply-add chain over the inner index in
//! increasing order, starting from 0: c ← fma(a_k, b_k, c) for k = 0, 1, …, kd − 1. `fma` is
//! correctly rounded on every IEEE platform (hardware or software), so the result depends on
//! this order alone, never on the vector width, the blocking or the number of threads.

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

/// C (m × n) = A (m × kd) · B (kd × n), all row-major. Slices shorter than their shape
/// leave C unchanged (internal kernel: callers validate shapes).
pub(crate) fn matmul(m: usize, n: usize, kd: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    if a.len() < m * kd || b.len() < kd * n || c.len() < m * n {
        return;
    }
    for i in 0..m {
        let crow = &mut c[i * n..(i + 1) * n];
        crow.fill(0.0);
        for k in 0..kd {
            let av = a[i * kd + k];
            for (cv, &bv) in crow.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *cv = fma(av, bv, *cv);
            }
        }
    }
}

/// C (m × n) = Aᵀ · B with A stored kd × m and B kd × n (row-major): C[i, j] = Σ_k A[k, i]·B[k, j].
pub(crate) fn matmul_tn(m: usize, n: usize, kd: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    if a.len() < kd * m || b.len() < kd * n || c.len() < m * n {
        return;
    }
    for i in 0..m {
        let crow = &mut c[i * n..(i + 1) * n];
        crow.fill(0.0);
        for k in 0..kd {
            let av = a[k * m + i];
            for (cv, &bv) in crow.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *cv = fma(av, bv, *cv);
            }
        }
    }
}

/// C (m × n) = A · Bᵀ with A stored m × kd and B n × kd (row-major): C[i, j] = Σ_k A[i, k]·B[j, k].
pub(crate) fn matmul_nt(m: usize, n: usize, kd: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    if a.len() < m * kd || b.len() < n * kd || c.len() < m * n {
        return;
    }
    for i in 0..m {
        let arow = &a[i * kd..(i + 1) * kd];
        for j in 0..n {
            let brow = &b[j * kd..(j + 1) * kd];
            let mut s = 0.0;
            for (&x, &y) in arow.iter().zip(brow) {
                s = fma(x, y, s);
            }
            c[i * n + j] = s;
        }
    }
}
