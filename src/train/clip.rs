//! Per-example gradient clipping for DP-SGD — the crate's one clipping function, [`clip`],
//! generic over [`Scalar`]: run on `f64` gradients it clips; run on `Dual<N>` gradients (from
//! [`Sequential::loss_and_grad_jvp`](crate::nn::Sequential::loss_and_grad_jvp)) it also
//! differentiates the clipped gradient g̃ along the seeded input coordinates, giving N
//! columns of ∂g̃/∂x for Fisher information leakage.

use crate::autodiff::l2_norm;
use crate::autodiff::Scalar;
use crate::error::{check_positive, Error, Result};

/// The largest norm of a GELU-clipped gradient in units of C, rounded up:
/// sup_{t ≥ 0} t/(GELU(t − 1) + 1) = 1.115215… (at t ≈ 1.5487), so ‖g̃‖ ≤ 1.11522·C.
pub const GELU_CLIP_MAX_NORM_FACTOR: f64 = 1.11522;

/// How a per-example gradient g is scaled to bound its norm by (a multiple of) C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClipMethod {
    /// Hard clipping (Abadi et al. 2016): g̃ = g·min(1, C/‖g‖); ‖g̃‖ ≤ C. Not differentiable
    /// at ‖g‖ = C (there the factor is the constant 1: the derivative from inside the ball)
    /// nor at g = 0 (factor 1, tangent 0).
    Hard,
    /// GELU clipping (Guo et al. 2022, Sec. 6.1): g̃ = g / (GELU(‖g‖/C − 1) + 1) with the exact
    /// GELU(u) = u·Φ(u): a smooth replacement of max(1, ‖g‖/C). ‖g̃‖ ≤ 1.11522·C (the maximum
    /// of t/(GELU(t − 1) + 1) is 1.115215… at t ≈ 1.5487); small gradients are *enlarged*
    /// (by up to 1/(1 − Φ(−1)) ≈ 1.189 at g → 0). The sensitivity to use for the noise is
    /// [`ClipMethod::max_norm`].
    Gelu,
}

impl ClipMethod {
    /// The largest possible norm of a clipped gradient for clipping norm `clip_norm`:
    /// C for hard clipping, 1.11522·C for GELU clipping.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `clip_norm` unless finite and > 0.
    ///
    /// ```
    /// use reconbound::train::clip::ClipMethod;
    /// assert_eq!(ClipMethod::Hard.max_norm(2.0)?, 2.0);
    /// assert_eq!(ClipMethod::Gelu.max_norm(1.0)?, 1.11522);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn max_norm(self, clip_norm: f64) -> Result<f64> {
        check_positive("clip_norm", clip_norm)?;
        Ok(match self {
            ClipMethod::Hard => clip_norm,
            ClipMethod::Gelu => GELU_CLIP_MAX_NORM_FACTOR * clip_norm,
        })
    }
}

/// Clips the flat gradient `grad` in place and returns its norm ‖g‖ before clipping.
///
/// # Formula
///
/// With n = ‖g‖₂ ([`l2_norm`]) and C = `clip_norm`:
/// - [`ClipMethod::Hard`]: g̃ = g·f, f = min(1, C/n) (`S::one().min(S::cst(C) / n)`);
///   inside the ball (n ≤ C) g̃ = g bit for bit. ‖g̃‖ ≤ C up to rounding (relative excess of
///   the computed norm ≤ (p + 3)·ε for p entries).
/// - [`ClipMethod::Gelu`]: g̃ = g·f, f = 1/(GELU(n/C − 1) + 1), GELU(u) = u·Φ(u);
///   ‖g̃‖ ≤ 1.11522·C.
///
/// The factor f is computed in `S` arithmetic, so with `S = Dual<N>` the tangents are the
/// exact derivatives of g̃ (ġ̃ = ġ·f + g·ḟ), except at the kinks of hard clipping documented
/// on [`ClipMethod::Hard`].
///
/// # Citations
///
/// Abadi et al. 2016 (hard clipping); Guo, Karrer, Chaudhuri, van der Maaten 2022, Sec. 6.1
/// (GELU clipping), `guo2022-bounding-reconstruction-fil-rdp.txt`.
///
/// # Errors
///
/// - [`Error::InvalidParameter`] `clip_norm` unless finite and > 0.
/// - [`Error::Numerical`] if ‖g‖ is not finite (a non-finite entry, or ‖g‖ ≳ 1.3e154).
///   `grad` is left unchanged.
///
/// # Examples
///
/// ```
/// use reconbound::train::clip::{clip, ClipMethod};
///
/// let mut g = [3.0, 4.0];
/// let norm = clip(&mut g, ClipMethod::Hard, 1.0)?;
/// assert_eq!(norm, 5.0);
/// assert!((g[0] - 0.6).abs() < 1e-15 && (g[1] - 0.8).abs() < 1e-15);
///
/// // GELU clipping at ‖g‖ = C divides by GELU(0) + 1 = 1: unchanged.
/// let mut g = [0.0, 2.0];
/// clip(&mut g, ClipMethod::Gelu, 2.0)?;
/// assert_eq!(g, [0.0, 2.0]);
/// // Large gradients end up with norm ≈ C.
/// let mut g = [0.0, 1e6];
/// clip(&mut g, ClipMethod::Gelu, 1.0)?;
/// assert!((g[1] - 1.0).abs() < 1e-5);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn clip<S: Scalar>(grad: &mut [S], method: ClipMethod, clip_norm: f64) -> Result<S> {
    check_positive("clip_norm", clip_norm)?;
    let norm = norm_of(grad);
    if !norm.re().is_finite() {
        return Err(Error::Numerical {
            what: "the gradient norm is not finite",
            value: norm.re(),
        });
    }
    let factor = clip_factor(norm, method, clip_norm);
    if method == ClipMethod::Hard && factor.re() == 1.0 {
        // Inside the ball (or on its boundary): `min` returned its first argument, the
        // constant 1 with tangent 0, so g·f = g — leave g (and its tangents) untouched.
        return Ok(norm);
    }
    for g in grad.iter_mut() {
        *g *= factor;
    }
    Ok(norm)
}

/// The clipping factor f(‖g‖) of [`clip`] (g̃ = g·f), in `S` arithmetic: for hard clipping
/// `S::one().min(S::cst(C) / norm)`, for GELU clipping `S::one() / ((norm / C − 1).gelu() +
/// 1)`. The one definition of clipping: [`clip`] uses it, and evaluated on `Dual<1>` (value
/// ‖g‖, tangent 1) it gives f and f′ for the Gram matrix of the clipped-gradient derivatives
/// ([`Sequential::clipped_jvp_gram`](crate::nn::Sequential::clipped_jvp_gram)). Kinks as
/// documented on [`ClipMethod::Hard`]: at ‖g‖ = C (a tie) and at ‖g‖ = 0 the constant 1 is
/// selected (tangent 0).
#[inline]
pub(crate) fn clip_factor<S: Scalar>(norm: S, method: ClipMethod, clip_norm: f64) -> S {
    match method {
        ClipMethod::Hard => S::one().min(S::cst(clip_norm) / norm),
        ClipMethod::Gelu => S::one() / ((norm / clip_norm - 1.0).gelu() + 1.0),
    }
}

/// The Jacobian K = ∂g̃/∂g of clipping g ↦ g̃ = g·f(‖g‖), as K = a·I + b·g̃ g̃ᵀ: returns
/// (a, b) for the norm n = ‖g‖ that [`clip`] returned. K is symmetric, so K·v = Kᵀ·v =
/// a·v + b·⟨g̃, v⟩·g̃ serves as a Jacobian–vector and a vector–Jacobian product.
///
/// # Formula
///
/// K = f·I + (f′(n)/n)·g gᵀ and g = g̃/f (f > 0 for finite n), so a = f and
/// b = f′/(n·f²), with f and f′ from [`clip_factor`] evaluated on `Dual<1>` (value n, tangent
/// 1): a is bit-identical to the factor [`clip`] applies, and the kinks follow its conventions.
/// Hard clipping outside the ball: f = C/n, f′ = −C/n², b = −1/(n·C) (K = (C/n)·I −
/// (C/n³)·g gᵀ); inside (n ≤ C): K = I (b = 0). GELU clipping: f′ =
/// −GELU′(n/C − 1)/(C·(GELU(n/C − 1) + 1)²). At g = 0 (n = 0), b = 0: K = f(0)·I.
#[cfg(feature = "alloc")]
pub(crate) fn clip_jacobian(norm: f64, method: ClipMethod, clip_norm: f64) -> (f64, f64) {
    let f = clip_factor(
        crate::autodiff::Dual::<1>::new(norm, [1.0]),
        method,
        clip_norm,
    );
    let (a, df) = (f.value, f.tangent[0]);
    let b = if df == 0.0 || norm == 0.0 {
        0.0
    } else {
        df / (norm * a * a)
    };
    (a, b)
}

/// [`l2_norm`]`(v)`, bit for bit: l2_norm sums the squares in 8 interleaved partial sums
/// (partial sum r takes the indices ≡ r mod 8, in increasing order), combined as
/// ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then √. For large `S` (`Dual<N>`,
/// N ≥ 2) eight partial sums do not fit in registers, so they are computed two at a time
/// (four passes over `v`, each partial sum in the same order); for `f64` this is l2_norm.
#[inline]
fn norm_of<S: Scalar>(v: &[S]) -> S {
    if core::mem::size_of::<S>() <= 16 {
        return l2_norm(v);
    }
    let mut acc = [S::zero(); 8];
    for (r, pair) in acc.chunks_exact_mut(2).enumerate() {
        let (mut s0, mut s1) = (S::zero(), S::zero());
        for c in v.get(2 * r..).unwrap_or_default().chunks(8) {
            if let Some(&x) = c.first() {
                s0 += x * x;
            }
            if let Some(&x) = c.get(1) {
                s1 += x * x;
            }
        }
        pair.copy_from_slice(&[s0, s1]);
    }
    crate::autodiff::tree8(acc).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autodiff::Dual;
    use proptest::prelude::*;

    /// t/(GELU(t − 1) + 1): the clipped norm in units of C for ‖g‖ = t·C.
    fn gelu_ratio(t: f64) -> f64 {
        t / ((t - 1.0) * crate::math::normal::cdf(t - 1.0) + 1.0)
    }

    #[test]
    fn gelu_clip_ratio_maximum_is_1_11522_near_1_5487() {
        // Golden-section search on [1, 2] (the ratio is unimodal there: it increases to the
        // maximum and decreases after); converges to ~1e-9 in t, the value to ~1e-16.
        let (mut a, mut b) = (1.0_f64, 2.0_f64);
        let r = 0.5 * (libm::sqrt(5.0) - 1.0);
        for _ in 0..100 {
            let c = b - r * (b - a);
            let d = a + r * (b - a);
            if gelu_ratio(c) > gelu_ratio(d) {
                b = d;
            } else {
                a = c;
            }
        }
        let t = 0.5 * (a + b);
        let m = gelu_ratio(t);
        // The paper's 1.5487 is given to 4 decimals: |t − 1.5487| ≤ 5e-5.
        assert!((t - 1.5487).abs() < 5e-5, "argmax {t}");
        // The constant must be an upper bound, and tight to its 6 significant digits.
        assert!(
            m <= GELU_CLIP_MAX_NORM_FACTOR && m > GELU_CLIP_MAX_NORM_FACTOR - 1e-5,
            "{m}"
        );
        // A coarse scan of [0, 100] never exceeds the maximum (global, not just local).
        for i in 0..=100_000 {
            let t = i as f64 * 1e-3;
            assert!(gelu_ratio(t) <= m * (1.0 + 1e-15), "t = {t}");
        }
        // Attained: clipping a gradient of norm 1.5487·C gives norm within 1e-8 of the max.
        let c = 2.0;
        let mut g = [1.5487 * c * 0.6, 1.5487 * c * 0.8];
        clip(&mut g, ClipMethod::Gelu, c).unwrap();
        let n = libm::sqrt(g[0] * g[0] + g[1] * g[1]);
        assert!((n / c - m).abs() < 1e-8, "{}", n / c);
    }

    proptest! {
        // Random gradients of 1–50 entries with norms spread over many scales around C.
        #[test]
        fn gelu_clipped_norm_at_most_1_11522_c(
            v in proptest::collection::vec(-1.0f64..1.0, 1..50),
            log_scale in -8.0f64..8.0,
            c in 0.01f64..100.0,
        ) {
            let s = libm::exp(log_scale) * c;
            let mut g: Vec<f64> = v.iter().map(|x| x * s).collect();
            clip(&mut g, ClipMethod::Gelu, c).unwrap();
            let n = l2_norm(&g);
            // Exact bound 1.115215…·C < 1.11522·C: the margin 4e-6 dwarfs rounding.
            prop_assert!(n <= GELU_CLIP_MAX_NORM_FACTOR * c, "norm {} for C = {}", n, c);
        }

        #[test]
        fn hard_clipped_norm_at_most_c_and_identity_inside(
            v in proptest::collection::vec(-1.0f64..1.0, 1..50),
            log_scale in -8.0f64..8.0,
            c in 0.01f64..100.0,
        ) {
            let s = libm::exp(log_scale) * c;
            let g0: Vec<f64> = v.iter().map(|x| x * s).collect();
            let mut g = g0.clone();
            let norm = clip(&mut g, ClipMethod::Hard, c).unwrap();
            let n = l2_norm(&g);
            // Rounding: the computed norm of the scaled vector exceeds C by at most a few
            // ulps per entry; allow (p + 3)·ε relative.
            let tol = (g.len() as f64 + 3.0) * f64::EPSILON;
            prop_assert!(n <= c * (1.0 + tol), "norm {} for C = {}", n, c);
            if norm <= c {
                prop_assert_eq!(&g, &g0);
            } else {
                prop_assert!((n - c).abs() <= c * tol);
            }
        }
    }

    #[test]
    fn clip_tangents_match_finite_differences() {
        // g(x) = (x, 2x, 3 − x) seeded in lane 0; compare d/dx of the clipped vector with a
        // central difference (h = 1e-6: truncation ~1e-12, rounding ~1e-10; tolerance 1e-8).
        let c = 1.5;
        let f = |x: f64, m: ClipMethod| {
            let mut g = [x, 2.0 * x, 3.0 - x];
            clip(&mut g, m, c).unwrap();
            g
        };
        for m in [ClipMethod::Hard, ClipMethod::Gelu] {
            for x in [0.1, 0.4, 2.0] {
                let xd = Dual::<1>::variable(x, 0).unwrap();
                let mut g = [xd, xd * 2.0, Dual::cst(3.0) - xd];
                clip(&mut g, m, c).unwrap();
                let h = 1e-6;
                let (p, q) = (f(x + h, m), f(x - h, m));
                for k in 0..3 {
                    let fd = (p[k] - q[k]) / (2.0 * h);
                    assert!((g[k].tangent[0] - fd).abs() < 1e-8, "{m:?} x={x} k={k}");
                    assert_eq!(g[k].value, f(x, m)[k]);
                }
            }
        }
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn clip_jacobian_times_v_matches_dual_clip_tangents() {
        // K·v = a·v + b·⟨g̃, v⟩·g̃ must equal d/dε clip(g + εv), computed by `clip` on Dual<1>
        // gradients (g seeded with tangent v), for hard clipping outside and inside the ball,
        // GELU clipping at several n/C, and g = 0. Both are the same closed form evaluated in
        // a different order: agreement to 1e-14 relative to max(|K·v|, |v|) (a few ulps of
        // the O(1) terms; cancellation between a·v and the rank-one term is bounded by their
        // size, ≤ 2‖v‖).
        let mut r = crate::rng::Rng::from_seed(5);
        let p = 23;
        let v: Vec<f64> = (0..p).map(|_| r.gaussian()).collect();
        let g0: Vec<f64> = (0..p).map(|_| r.gaussian()).collect();
        let n0 = l2_norm(&g0);
        let cases = [
            (ClipMethod::Hard, 0.3 * n0, 1.0),  // clipped
            (ClipMethod::Hard, 2.0 * n0, 1.0),  // inside the ball: K = I
            (ClipMethod::Gelu, 0.7 * n0, 1.0),  // GELU, n/C ≈ 1.4
            (ClipMethod::Gelu, 5.0 * n0, 1.0),  // GELU, small gradient (enlarged)
            (ClipMethod::Gelu, 0.01 * n0, 1.0), // GELU, large gradient
            (ClipMethod::Gelu, 1.0, 0.0),       // g = 0
            (ClipMethod::Hard, 1.0, 0.0),       // g = 0
        ];
        for (m, c, scale) in cases {
            let g: Vec<f64> = g0.iter().map(|x| x * scale).collect();
            let mut gd: Vec<Dual<1>> = g.iter().zip(&v).map(|(&a, &b)| Dual::new(a, [b])).collect();
            clip(&mut gd, m, c).unwrap();
            let mut gc = g.clone();
            let n = clip(&mut gc, m, c).unwrap();
            let (a, b) = clip_jacobian(n, m, c);
            let gv: f64 = gc.iter().zip(&v).map(|(x, y)| x * y).sum();
            let out: Vec<f64> = v
                .iter()
                .zip(&gc)
                .map(|(vi, gi)| a * vi + b * gv * gi)
                .collect();
            let size = out.iter().chain(&v).fold(0.0f64, |s, &x| s.max(x.abs()));
            for (k, (o, d)) in out.iter().zip(&gd).enumerate() {
                assert_eq!(gc[k], d.value);
                assert!(
                    (o - d.tangent[0]).abs() <= 1e-14 * size,
                    "{m:?} C={c} k={k}: {o} vs {}",
                    d.tangent[0]
                );
            }
            if m == ClipMethod::Hard && (n <= c || scale == 0.0) {
                assert_eq!((a, b), (1.0, 0.0), "K = I inside the ball");
            }
        }
        // Hard clipping outside the ball: a = C/n and b = −1/(n·C) in closed form.
        let (a, b) = clip_jacobian(4.0, ClipMethod::Hard, 0.5);
        assert_eq!(a, 0.125);
        assert!((b + 0.5).abs() < 1e-15, "{b}");
    }

    #[test]
    fn l2_norm_conventions_used_by_clipping() {
        // Summation in 8 interleaved partial sums vs a plain serial sum: relative difference
        // ≤ p·ε (p = 37 here).
        let v: Vec<f64> = (0..37).map(|i| libm::sin(i as f64) * 3.0).collect();
        let serial = libm::sqrt(v.iter().map(|x| x * x).sum::<f64>());
        let a = l2_norm(&v);
        assert!(
            (a - serial).abs() <= 37.0 * f64::EPSILON * serial,
            "{a} vs {serial}"
        );
        assert_eq!(l2_norm(&[3.0, 4.0]), 5.0);
        assert_eq!(l2_norm::<f64>(&[]), 0.0);
        let z = [Dual::new(0.0, [1.0]), Dual::new(0.0, [-2.0])];
        assert_eq!(l2_norm(&z).tangent, [0.0]);
        let d = [Dual::new(3.0, [1.0]), Dual::new(4.0, [0.0])];
        assert!((l2_norm(&d).tangent[0] - 0.6).abs() < 1e-15);
    }

    #[test]
    fn norm_of_is_bit_identical_to_l2_norm() {
        // `clip` computes the norm in a register-friendly order for Dual<N> (partial sums two
        // at a time); it must equal l2_norm bit for bit, value and every lane, for lengths
        // around multiples of 8 (remainder handling) and with exact zeros and mixed signs.
        let mut r = crate::rng::Rng::from_seed(41);
        for len in [0usize, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1001] {
            let v: Vec<Dual<8>> = (0..len)
                .map(|i| {
                    let z = if i % 5 == 0 { 0.0 } else { r.gaussian() };
                    Dual::new(z * 1e3, core::array::from_fn(|_| r.gaussian()))
                })
                .collect();
            let (a, b) = (norm_of(&v), l2_norm(&v));
            assert_eq!(a.value.to_bits(), b.value.to_bits(), "len {len}");
            for (x, y) in a.tangent.iter().zip(&b.tangent) {
                assert_eq!(x.to_bits(), y.to_bits(), "len {len}");
            }
            let v2: Vec<Dual<2>> = v
                .iter()
                .map(|d| Dual::new(d.value, [d.tangent[0], d.tangent[7]]))
                .collect();
            let (a, b) = (norm_of(&v2), l2_norm(&v2));
            assert_eq!(a.value.to_bits(), b.value.to_bits(), "len {len}");
            assert_eq!(
                a.tangent.map(f64::to_bits),
                b.tangent.map(f64::to_bits),
                "len {len}"
            );
        }
    }

    #[test]
    fn clip_rejects_bad_clip_norm_and_non_finite_gradients() {
        let mut g = [1.0, 2.0];
        for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                clip(&mut g, ClipMethod::Hard, c),
                Err(Error::InvalidParameter {
                    name: "clip_norm",
                    ..
                })
            ));
        }
        let mut bad = [1.0, f64::NAN];
        assert!(matches!(
            clip(&mut bad, ClipMethod::Gelu, 1.0),
            Err(Error::Numerical { .. })
        ));
        let mut zero = [0.0; 3];
        assert_eq!(clip(&mut zero, ClipMethod::Hard, 1.0).unwrap(), 0.0);
        assert_eq!(zero, [0.0; 3]);
    }
}
