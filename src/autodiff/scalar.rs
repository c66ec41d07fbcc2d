//! The [`Scalar`] trait: the number type every layer's forward and backward pass is
//! generic over, its implementation for `f64`, and [`l2_norm`].
//!
//! Every elementary function is a provided method of [`Scalar`], written once: it computes
//! the value `f(x)` through `libm` (tanh through the crate's own `math::tanh`, more accurate
//! than `libm::tanh` and vectorisable) and hands it, with a closure for the derivative
//! `f′(x)`, to the single chain-rule hook [`Scalar::chain`]. For `f64` the hook returns the
//! value and never calls the closure (no cost); for [`Dual`](crate::autodiff::Dual) it
//! multiplies every tangent lane by `f′(x)`. (`f64` overrides tanh only to skip the
//! derivative's e^{−2|x|}; the value is the same, bit for bit.)

use core::fmt::Debug;
use core::iter::Sum;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A real number that may carry derivative information: `f64`, or
/// [`Dual<N>`](crate::autodiff::Dual) (a value with `N` forward-mode tangent lanes).
///
/// Code written generically over `S: Scalar` runs on plain numbers with `S = f64` and, with
/// `S = Dual<N>`, also returns the derivatives of its result along `N` input directions.
///
/// # Value semantics
///
/// - **Values are identical across implementations.** Every operation computes the value
///   part of a `Dual` with exactly the same `f64` operations as the `f64` implementation, so
///   `f(x).re()` is bit-identical for `S = f64` and `S = Dual<N>`, whatever `N`.
/// - **Comparisons look only at the value.** `==`, `<`, [`max`](Scalar::max),
///   [`min`](Scalar::min) and every branch inside an elementary function (e.g. the sign test
///   of [`elu`](Scalar::elu)) inspect `re()` only. Branching code therefore differentiates the
///   branch it takes: the result is the derivative of the selected piece.
/// - **Mixed arithmetic with `f64`** (`s + 1.0`, `s * c`, `s /= 2.0`) treats the `f64` as a
///   constant (zero tangent). Write `S::cst(1.0) - s` for `1 − s`.
/// - **Method resolution on concrete `f64`:** with a concrete `x: f64`, `x.exp()`,
///   `x.sqrt()`, `x.max(y)`, … call `std`'s inherent methods (not `libm`; `f64::max` drops
///   NaN). Only generic code (`S: Scalar`) or the path form `Scalar::exp(x)` reaches these
///   methods.
///
/// # Kinks and singular points (documented conventions)
///
/// | expression | at | value | tangent |
/// |---|---|---|---|
/// | `a.max(b)`, `a.min(b)` | `a.re() == b.re()` | `a` | tangent of `a` (ties pick the **first** argument) |
/// | `a.max(b)`, `a.min(b)` | either value NaN | the NaN argument | its tangent |
/// | [`abs`](Scalar::abs) | `x = ±0` | `+0` | `0` |
/// | [`sqrt`](Scalar::sqrt) | `x = ±0` | `±0` | `0` (see below) |
/// | [`elu`](Scalar::elu) | `x = 0` | `0` | `α·ẋ` (the `x ≤ 0` branch, as PyTorch) |
/// | [`powi`](Scalar::powi)`(0)` | any `x`, also `0` | `1` | `0` |
/// | any elementary `f` | `f′(x)` infinite or NaN | `f(x)` | `0` in lanes where `ẋ = 0`, else `f′(x)·ẋ` |
///
/// `sqrt` at 0: the derivative is +∞, but the only place a zero reaches `sqrt` in this crate
/// is a squared norm `Σ vᵢ²` at `v = 0`, a minimum, where the tangent of `Σ vᵢ²` is itself
/// exactly 0. We return tangent 0, the element of minimal norm of the Clarke
/// subdifferential (the unit ball) of `‖·‖` at 0; this matches `abs` at 0 (`|x| = √(x²)`).
/// Consequently the hard-clipping factor `S::one().min(S::cst(c) / l2_norm(g))` has value 1
/// and tangent 0 at `g = 0` (the division gives an infinite value there and a NaN tangent,
/// which `min` discards because it selects the constant), and at `‖g‖ = C` exactly the tie
/// picks the constant 1: the derivative from inside the ball.
///
/// The last row keeps quantities that do not depend on the seeded inputs exactly
/// tangent-free even where a derivative is infinite (`ln(0)`, `powi(0, −1)`): no `0·∞ = NaN`.
/// Arithmetic operators follow IEEE 754 without such exceptions; when a value is infinite
/// or NaN its tangent is unspecified.
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{Dual, Scalar};
///
/// // Written once, generic over the scalar type.
/// fn f<S: Scalar>(x: S) -> S {
///     (x * x + 1.0).sqrt().ln()
/// }
/// let y = f(2.0_f64);
/// let d = f(Dual::<1>::variable(2.0, 0)?);
/// assert_eq!(d.re(), y); // bit-identical value
/// // d/dx ln √(x² + 1) = x / (x² + 1) = 0.4 at x = 2.
/// assert!((d.tangent[0] - 0.4).abs() < 1e-15);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub trait Scalar:
    Copy
    + Debug
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + AddAssign<f64>
    + SubAssign<f64>
    + MulAssign<f64>
    + DivAssign<f64>
    + Sum
{
    /// The number of tangent lanes: 0 for `f64`, N for `Dual<N>`.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// assert_eq!((<f64 as Scalar>::LANES, <Dual<8> as Scalar>::LANES), (0, 8));
    /// ```
    const LANES: usize = 0;

    /// The constant `c` (zero tangent).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let c = Dual::<3>::cst(2.5);
    /// assert_eq!((c.re(), c.tangent), (2.5, [0.0; 3]));
    /// ```
    fn cst(c: f64) -> Self;

    /// The value (real part), without derivative information.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// assert_eq!(Dual::new(1.5, [4.0, 5.0]).re(), 1.5);
    /// assert_eq!(Scalar::re(1.5_f64), 1.5);
    /// ```
    fn re(self) -> f64;

    /// The chain-rule hook every elementary function goes through: returns a scalar with
    /// value `value` (= f(x), x = `self`) and tangent `f′(x)·ẋ`, where `derivative()` returns
    /// f′(x). The `f64` implementation returns `value` and never calls `derivative`.
    /// Lanes with ẋ = 0 get tangent 0 even when f′(x) is infinite or NaN.
    ///
    /// Use it to add an elementary function without touching this trait:
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// // x ↦ x³ with derivative 3x², in one place.
    /// fn cube<S: Scalar>(x: S) -> S {
    ///     let v = x.re();
    ///     x.chain(v * v * v, || 3.0 * v * v)
    /// }
    /// assert_eq!(cube(2.0_f64), 8.0);
    /// assert_eq!(cube(Dual::<1>::variable(2.0, 0)?).tangent, [12.0]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    fn chain<D: FnOnce() -> f64>(self, value: f64, derivative: D) -> Self;

    /// `acc + self·a` with the value rounded once: the fused multiply-add
    /// fma(self, a, acc) (`f64::mul_add` with `std`, `libm::fma` without; both correctly
    /// rounded, so every build gives the same bits). The dense kernels accumulate with it.
    /// For `Dual` the tangent is `acc′ + (self′·a + self·a′)`, lane by lane (the tangent of
    /// `acc + self * a`), and the value is the `f64` result.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let x = Dual::new(0.1, [1.0]);
    /// let y = x.mul_add(Dual::cst(3.0), Dual::cst(0.7));
    /// assert_eq!(y.re(), Scalar::mul_add(0.1_f64, 3.0, 0.7)); // one rounding
    /// assert_eq!(y.tangent, [3.0]);
    /// ```
    fn mul_add(self, a: Self, acc: Self) -> Self;

    /// `acc + self·c` for a constant `c` (zero tangent), the value rounded once as in
    /// [`mul_add`](Scalar::mul_add); for `Dual` the tangent is `acc′ + self′·c`.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::new(0.1, [1.0]).mul_add_cst(3.0, Dual::cst(0.7));
    /// assert_eq!((y.re(), y.tangent), (Scalar::mul_add_cst(0.1_f64, 3.0, 0.7), [3.0]));
    /// ```
    fn mul_add_cst(self, c: f64, acc: Self) -> Self;

    /// The constant 0.
    ///
    /// ```
    /// use reconbound::autodiff::Scalar;
    /// assert_eq!(<f64 as Scalar>::zero(), 0.0);
    /// ```
    #[inline]
    fn zero() -> Self {
        Self::cst(0.0)
    }

    /// The constant 1.
    ///
    /// ```
    /// use reconbound::autodiff::Scalar;
    /// assert_eq!(<f64 as Scalar>::one(), 1.0);
    /// ```
    #[inline]
    fn one() -> Self {
        Self::cst(1.0)
    }

    /// eˣ (`libm::exp`); derivative eˣ.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.exp();
    /// assert_eq!((y.re(), y.tangent[0]), (1.0, 1.0));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn exp(self) -> Self {
        let y = libm::exp(self.re());
        self.chain(y, || y)
    }

    /// Natural logarithm ln x (`libm::log`); derivative 1/x. At x = 0 the value is −∞ and
    /// lanes with non-zero tangent get ±∞; for x < 0 the value is NaN.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(4.0, 0)?.ln();
    /// assert_eq!(y.tangent[0], 0.25);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn ln(self) -> Self {
        let x = self.re();
        self.chain(libm::log(x), || 1.0 / x)
    }

    /// ln(1 + x), accurate for small x (`libm::log1p`); derivative 1/(1 + x).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(1.0, 0)?.ln_1p();
    /// assert_eq!(y.tangent[0], 0.5);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn ln_1p(self) -> Self {
        let x = self.re();
        self.chain(libm::log1p(x), || 1.0 / (1.0 + x))
    }

    /// eˣ − 1, accurate for small x (`libm::expm1`); derivative eˣ (computed by `libm::exp`).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.exp_m1();
    /// assert_eq!((y.re(), y.tangent[0]), (0.0, 1.0));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn exp_m1(self) -> Self {
        let x = self.re();
        self.chain(libm::expm1(x), || libm::exp(x))
    }

    /// tanh x (the crate's own `math::tanh`, within 1.6 ulp, branch-free so that loops over
    /// slices vectorise); derivative sech²x, computed as 4e/(1 + e)² with e = e^{−2|x|}
    /// (produced by the same evaluation), which keeps full relative accuracy in the tails
    /// where 1 − tanh²x would round to 0.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.tanh();
    /// assert_eq!((y.re(), y.tangent[0]), (0.0, 1.0));
    /// let tail = Dual::<1>::variable(20.0, 0)?.tanh();
    /// assert!(tail.tangent[0] > 0.0); // ≈ 4e−40, not 0
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn tanh(self) -> Self {
        let x = self.re();
        let (y, e) = crate::math::tanh::tanh_and_exp_neg2(x);
        self.chain(y, || {
            let e = crate::math::tanh::exp_neg2_abs(x, e);
            let s = 1.0 + e;
            4.0 * e / (s * s)
        })
    }

    /// √x (correctly rounded, as `libm::sqrt`); derivative 1/(2√x) for x > 0. **At x = ±0 the tangent is 0** (the
    /// derivative is +∞; see the trait docs for why 0 is the convention); for x < 0 the value
    /// is NaN.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(4.0, 0)?.sqrt();
    /// assert_eq!((y.re(), y.tangent[0]), (2.0, 0.25));
    /// let z = Dual::<1>::variable(0.0, 0)?.sqrt();
    /// assert_eq!((z.re(), z.tangent[0]), (0.0, 0.0));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn sqrt(self) -> Self {
        let y = crate::math::sqrt(self.re());
        self.chain(y, || if y == 0.0 { 0.0 } else { 0.5 / y })
    }

    /// xⁿ for an integer n, by binary exponentiation (square-and-multiply; exact for
    /// n ∈ {0, 1, 2}, so `x.powi(2)` equals `x * x` bit for bit); x⁻ⁿ = 1/xⁿ. Derivative
    /// n·xⁿ⁻¹ (0 for n = 0, including at x = 0: x⁰ = 1 everywhere).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(2.0, 0)?.powi(3);
    /// assert_eq!((y.re(), y.tangent[0]), (8.0, 12.0));
    /// let z = Dual::<1>::variable(2.0, 0)?.powi(-1);
    /// assert_eq!((z.re(), z.tangent[0]), (0.5, -0.25));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn powi(self, n: i32) -> Self {
        let x = self.re();
        let n = i64::from(n);
        self.chain(powi_f64(x, n), || {
            if n == 0 {
                0.0
            } else {
                // n as f64 is exact: |n| ≤ 2³¹.
                n as f64 * powi_f64(x, n - 1)
            }
        })
    }

    /// The error function erf x (`libm::erf`); derivative (2/√π)·e^{−x²}.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.erf();
    /// assert_eq!(y.tangent[0], core::f64::consts::FRAC_2_SQRT_PI);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn erf(self) -> Self {
        let x = self.re();
        self.chain(libm::erf(x), || {
            core::f64::consts::FRAC_2_SQRT_PI * libm::exp(-(x * x))
        })
    }

    /// The standard normal cdf Φ(x) = ½ erfc(−x/√2) ([`crate::math::normal::cdf`]);
    /// derivative φ(x) = e^{−x²/2}/√(2π) ([`crate::math::normal::pdf`]).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.normal_cdf();
    /// assert_eq!(y.re(), 0.5);
    /// assert!((y.tangent[0] - 0.398_942_280_401_432_7).abs() < 1e-16);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn normal_cdf(self) -> Self {
        let x = self.re();
        self.chain(crate::math::normal::cdf(x), || crate::math::normal::pdf(x))
    }

    /// The exact GELU x·Φ(x) (Hendrycks & Gimpel 2016; not the tanh approximation);
    /// derivative Φ(x) + x·φ(x). Its value equals `x * x.normal_cdf()` bit for bit.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.gelu();
    /// assert_eq!((y.re(), y.tangent[0]), (0.0, 0.5));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn gelu(self) -> Self {
        let x = self.re();
        self.chain(x * crate::math::normal::cdf(x), || {
            crate::math::normal::cdf(x) + x * crate::math::normal::pdf(x)
        })
    }

    /// The logistic sigmoid σ(x) = 1/(1 + e^{−x}), evaluated without overflow (e^x/(1 + e^x)
    /// for x < 0); derivative σ(x)·σ(−x), accurate in both tails.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.sigmoid();
    /// assert_eq!((y.re(), y.tangent[0]), (0.5, 0.25));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn sigmoid(self) -> Self {
        let x = self.re();
        self.chain(sigmoid_f64(x), || sigmoid_f64(x) * sigmoid_f64(-x))
    }

    /// softplus(x) = ln(1 + eˣ), evaluated without overflow (x + ln(1 + e^{−x}) for x > 0);
    /// derivative σ(x). The logistic loss of margin m is `(-m).softplus()`.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.softplus();
    /// assert_eq!((y.re(), y.tangent[0]), (core::f64::consts::LN_2, 0.5));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn softplus(self) -> Self {
        let x = self.re();
        let y = if x > 0.0 {
            x + libm::log1p(libm::exp(-x))
        } else {
            libm::log1p(libm::exp(x))
        };
        self.chain(y, || sigmoid_f64(x))
    }

    /// ELU: x for x > 0, α·(eˣ − 1) for x ≤ 0 (`libm::expm1`); derivative 1 for x > 0 and
    /// α·eˣ for x ≤ 0. **At x = 0 the tangent is α·ẋ** (the x ≤ 0 branch, as PyTorch's
    /// `elu_backward`); both branches give value 0 there. `alpha` is used as given.
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(0.0, 0)?.elu(1.5);
    /// assert_eq!((y.re(), y.tangent[0]), (0.0, 1.5));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn elu(self, alpha: f64) -> Self {
        let x = self.re();
        if x > 0.0 {
            self.chain(x, || 1.0)
        } else {
            self.chain(alpha * libm::expm1(x), || alpha * libm::exp(x))
        }
    }

    /// |x| (`libm::fabs`); derivative sign(x). **At x = ±0 the tangent is 0** (consistent
    /// with `(x * x).sqrt()`, see [`sqrt`](Scalar::sqrt)).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let y = Dual::<1>::variable(-3.0, 0)?.abs();
    /// assert_eq!((y.re(), y.tangent[0]), (3.0, -1.0));
    /// assert_eq!(Dual::<1>::variable(0.0, 0)?.abs().tangent[0], 0.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    fn abs(self) -> Self {
        let x = self.re();
        self.chain(libm::fabs(x), || {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        })
    }

    /// The larger of `self` and `other` **by value**, with that argument's tangent. Ties
    /// (equal values, including +0 and −0) return `self`, the first argument; if either value
    /// is NaN the NaN argument is returned (NaN propagates, unlike `f64::max`).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let a = Dual::new(1.0, [1.0]);
    /// let b = Dual::new(1.0, [2.0]);
    /// assert_eq!(a.max(b).tangent, [1.0]); // tie: first argument
    /// assert_eq!(b.max(a).tangent, [2.0]);
    /// ```
    #[inline]
    fn max(self, other: Self) -> Self {
        let (a, b) = (self.re(), other.re());
        if a >= b || a.is_nan() {
            self
        } else {
            other
        }
    }

    /// The smaller of `self` and `other` **by value**, with that argument's tangent. Ties
    /// return `self`, the first argument; if either value is NaN the NaN argument is returned.
    /// Hard clipping writes `S::one().min(S::cst(c) / norm)`: at `norm = c` the factor is the
    /// constant 1 (tangent 0).
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// let one = Dual::<1>::one();
    /// let r = Dual::new(1.0, [-3.0]);
    /// assert_eq!(one.min(r).tangent, [0.0]); // tie: first argument
    /// ```
    #[inline]
    fn min(self, other: Self) -> Self {
        let (a, b) = (self.re(), other.re());
        if a <= b || a.is_nan() {
            self
        } else {
            other
        }
    }
}

/// xⁿ by square-and-multiply; negative n as 1/x^|n|.
#[inline]
pub(crate) fn powi_f64(x: f64, n: i64) -> f64 {
    let mut e = n.unsigned_abs();
    let mut base = x;
    let mut acc = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        e >>= 1;
        if e > 0 {
            base *= base;
        }
    }
    if n < 0 {
        1.0 / acc
    } else {
        acc
    }
}

/// σ(x) without overflow.
#[inline]
pub(crate) fn sigmoid_f64(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + libm::exp(-x))
    } else {
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}

impl Scalar for f64 {
    #[inline]
    fn cst(c: f64) -> Self {
        c
    }

    #[inline]
    fn re(self) -> f64 {
        self
    }

    #[inline]
    fn chain<D: FnOnce() -> f64>(self, value: f64, _derivative: D) -> Self {
        value
    }

    #[inline(always)]
    fn mul_add(self, a: Self, acc: Self) -> Self {
        crate::nn::gemm::fma(self, a, acc)
    }

    #[inline(always)]
    fn mul_add_cst(self, c: f64, acc: Self) -> Self {
        crate::nn::gemm::fma(self, c, acc)
    }

    /// tanh x, bit-identical to the value of the provided method (`math::tanh::tanh` is the
    /// first component of `tanh_and_exp_neg2`), without the derivative's e^{−2|x|}.
    #[inline]
    fn tanh(self) -> Self {
        crate::math::tanh::tanh(self)
    }
}

/// The Euclidean norm √(Σ vᵢ²), summed left to right. For `v = 0` (or empty `v`) the value
/// is 0 and the tangent is 0 (see [`Scalar::sqrt`]); elsewhere the tangent is
/// ⟨v, v̇⟩/‖v‖. The sum of squares overflows to +∞ once ‖v‖ exceeds about 1.3e154.
///
/// ```
/// use reconbound::autodiff::{l2_norm, Dual, Scalar};
/// assert_eq!(l2_norm(&[3.0_f64, 4.0]), 5.0);
/// let v = [Dual::new(3.0, [1.0]), Dual::new(4.0, [0.0])];
/// assert!((l2_norm(&v).tangent[0] - 0.6).abs() < 1e-15); // ⟨v, v̇⟩/‖v‖ = 3/5
/// let zero = [Dual::new(0.0, [1.0]), Dual::new(0.0, [-2.0])];
/// assert_eq!(l2_norm(&zero).tangent, [0.0]);
/// ```
#[inline]
pub fn l2_norm<S: Scalar>(v: &[S]) -> S {
    interleaved_sum(v, |x| x * x).sqrt()
}

/// Σ f(vᵢ) in eight interleaved partial sums (partial sum r takes the indices ≡ r mod 8, in
/// increasing order), combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)): a fixed
/// order (deterministic, the same value for every S), and the sum vectorises instead of
/// waiting on one chain of additions (≈ 8× faster on large vectors). Used by [`l2_norm`] and
/// the finiteness scans of `nn`.
#[inline(always)]
pub(crate) fn interleaved_sum<T: Copy, S: Scalar>(v: &[T], f: impl Fn(T) -> S) -> S {
    let mut acc = [S::zero(); 8];
    let chunks = v.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += f(x);
        }
    }
    for (a, &x) in acc.iter_mut().zip(rest) {
        *a += f(x);
    }
    tree8(acc)
}

/// The crate's one combining tree of 8 partial sums (lanes of a dot product or of
/// [`interleaved_sum`]): ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)).
#[inline(always)]
pub(crate) fn tree8<S: Scalar>([a0, a1, a2, a3, a4, a5, a6, a7]: [S; 8]) -> S {
    tree4([a0, a1, a2, a3]) + tree4([a4, a5, a6, a7])
}

/// Each half of [`tree8`]: (a0 + a1) + (a2 + a3).
#[inline(always)]
pub(crate) fn tree4<S: Scalar>([a0, a1, a2, a3]: [S; 4]) -> S {
    (a0 + a1) + (a2 + a3)
}
