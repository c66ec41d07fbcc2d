//! [`Dual<N>`]: forward-mode dual numbers with `N` tangent lanes.

use core::cmp::Ordering;
use core::iter::Sum;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use super::scalar::Scalar;
use crate::error::{Error, Result};

/// A value with `N` forward-mode tangent lanes: `value + Σ_k tangent[k]·ε_k`, ε_j ε_k = 0.
///
/// Lane k carries the directional derivative of the value along the k-th seeded input
/// direction, so one evaluation with `Dual<N>` yields N directional derivatives. Lanes never
/// interact: lane k of any result is bit-identical to the single lane of the same computation
/// run with `Dual<1>` seeded with lane k's tangents, and the value is bit-identical to the
/// `f64` computation.
///
/// Plain data (`Copy`, no allocation): an `f64` and an `[f64; N]`.
///
/// **`==`, `<`, `>` … compare values only** (tangents are ignored), consistently with
/// [`Scalar::max`]/[`Scalar::min`]; compare `tangent` arrays explicitly when you need to.
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{Dual, Scalar};
///
/// // f(x, y) = x·y + eˣ: seed x in lane 0 and y in lane 1.
/// let x = Dual::<2>::variable(3.0, 0)?;
/// let y = Dual::<2>::variable(5.0, 1)?;
/// let f = x * y + x.exp();
/// assert_eq!(f.value, 15.0 + libm::exp(3.0));
/// assert_eq!(f.tangent, [5.0 + libm::exp(3.0), 3.0]); // [∂f/∂x, ∂f/∂y]
/// # Ok::<(), reconbound::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Dual<const N: usize> {
    /// The value f(x).
    pub value: f64,
    /// The N directional derivatives of the value, one per lane.
    pub tangent: [f64; N],
}

impl<const N: usize> Dual<N> {
    /// A dual number with the given value and tangents.
    ///
    /// ```
    /// use reconbound::autodiff::Dual;
    /// let d = Dual::new(1.0, [2.0, 3.0]);
    /// assert_eq!((d.value, d.tangent), (1.0, [2.0, 3.0]));
    /// ```
    #[inline]
    pub const fn new(value: f64, tangent: [f64; N]) -> Self {
        Dual { value, tangent }
    }

    /// A constant: the given value with all tangents 0.
    ///
    /// ```
    /// use reconbound::autodiff::Dual;
    /// assert_eq!(Dual::<2>::constant(4.0).tangent, [0.0, 0.0]);
    /// ```
    #[inline]
    pub const fn constant(value: f64) -> Self {
        Dual {
            value,
            tangent: [0.0; N],
        }
    }

    /// An input variable seeded in lane `lane`: tangent e_lane (1 in that lane, 0 elsewhere).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] naming `lane` if `lane >= N`.
    ///
    /// ```
    /// use reconbound::autodiff::Dual;
    /// assert_eq!(Dual::<3>::variable(2.0, 1)?.tangent, [0.0, 1.0, 0.0]);
    /// assert!(Dual::<3>::variable(2.0, 3).is_err());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    #[inline]
    pub fn variable(value: f64, lane: usize) -> Result<Self> {
        let mut d = Self::constant(value);
        match d.tangent.get_mut(lane) {
            Some(t) => {
                *t = 1.0;
                Ok(d)
            }
            None => Err(Error::InvalidCount {
                name: "lane",
                value: lane as u64,
                expected: "< N (the number of tangent lanes)",
            }),
        }
    }

    /// Lane-wise map of the tangents.
    #[inline]
    fn map_tangent(self, value: f64, f: impl Fn(f64) -> f64) -> Self {
        let mut t = self.tangent;
        for a in t.iter_mut() {
            *a = f(*a);
        }
        Dual { value, tangent: t }
    }

    /// Lane-wise combination of two tangent arrays.
    #[inline]
    fn zip_tangent(self, rhs: Self, value: f64, f: impl Fn(f64, f64) -> f64) -> Self {
        let mut t = self.tangent;
        for (a, b) in t.iter_mut().zip(rhs.tangent.iter()) {
            *a = f(*a, *b);
        }
        Dual { value, tangent: t }
    }
}

impl<const N: usize> Default for Dual<N> {
    /// The constant 0.
    #[inline]
    fn default() -> Self {
        Self::constant(0.0)
    }
}

impl<const N: usize> Scalar for Dual<N> {
    const LANES: usize = N;

    #[inline]
    fn cst(c: f64) -> Self {
        Self::constant(c)
    }

    #[inline]
    fn re(self) -> f64 {
        self.value
    }

    /// Value fma(u, v, acc) (the `f64` bits); tangent acc′ + (u′·v + u·v′), lane by lane.
    #[inline(always)]
    fn mul_add(self, a: Self, acc: Self) -> Self {
        let (u, v) = (self.value, a.value);
        let mut t = acc.tangent;
        for ((s, &du), &dv) in t.iter_mut().zip(&self.tangent).zip(&a.tangent) {
            *s += du * v + u * dv;
        }
        Dual {
            value: crate::nn::gemm::fma(u, v, acc.value),
            tangent: t,
        }
    }

    /// Value fma(u, c, acc) (the `f64` bits); tangent acc′ + u′·c, lane by lane.
    #[inline(always)]
    fn mul_add_cst(self, c: f64, acc: Self) -> Self {
        let mut t = acc.tangent;
        for (s, &du) in t.iter_mut().zip(&self.tangent) {
            *s += du * c;
        }
        Dual {
            value: crate::nn::gemm::fma(self.value, c, acc.value),
            tangent: t,
        }
    }

    /// Tangent lane k becomes f′(x)·ẋ_k; if f′(x) is not finite, lanes with ẋ_k = 0 become 0.
    #[inline]
    fn chain<D: FnOnce() -> f64>(self, value: f64, derivative: D) -> Self {
        if N == 0 {
            return Self::constant(value);
        }
        let d = derivative();
        if d.is_finite() {
            self.map_tangent(value, |t| t * d)
        } else {
            self.map_tangent(value, |t| if t == 0.0 { 0.0 } else { t * d })
        }
    }
}

impl<const N: usize> PartialEq for Dual<N> {
    /// Compares values only; tangents are ignored.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<const N: usize> PartialOrd for Dual<N> {
    /// Orders by value only; tangents are ignored.
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        self.zip_tangent(rhs, self.value + rhs.value, |a, b| a + b)
    }
}

impl<const N: usize> Sub for Dual<N> {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        self.zip_tangent(rhs, self.value - rhs.value, |a, b| a - b)
    }
}

impl<const N: usize> Mul for Dual<N> {
    type Output = Self;
    /// (u·v)′ = u′·v + u·v′.
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn mul(self, rhs: Self) -> Self {
        let (u, v) = (self.value, rhs.value);
        self.zip_tangent(rhs, u * v, |du, dv| du * v + u * dv)
    }
}

impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    /// (u/v)′ = (u′ − q·v′)/v with q = u/v.
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn div(self, rhs: Self) -> Self {
        let v = rhs.value;
        let q = self.value / v;
        self.zip_tangent(rhs, q, |du, dv| (du - q * dv) / v)
    }
}

impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self.map_tangent(-self.value, |t| -t)
    }
}

impl<const N: usize> Add<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn add(self, rhs: f64) -> Self {
        Dual {
            value: self.value + rhs,
            tangent: self.tangent,
        }
    }
}

impl<const N: usize> Sub<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: f64) -> Self {
        Dual {
            value: self.value - rhs,
            tangent: self.tangent,
        }
    }
}

impl<const N: usize> Mul<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: f64) -> Self {
        self.map_tangent(self.value * rhs, |t| t * rhs)
    }
}

impl<const N: usize> Div<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn div(self, rhs: f64) -> Self {
        self.map_tangent(self.value / rhs, |t| t / rhs)
    }
}

impl<const N: usize> Add<Dual<N>> for f64 {
    type Output = Dual<N>;
    #[inline]
    fn add(self, rhs: Dual<N>) -> Dual<N> {
        Dual {
            value: self + rhs.value,
            tangent: rhs.tangent,
        }
    }
}

impl<const N: usize> Sub<Dual<N>> for f64 {
    type Output = Dual<N>;
    #[inline]
    fn sub(self, rhs: Dual<N>) -> Dual<N> {
        rhs.map_tangent(self - rhs.value, |t| -t)
    }
}

impl<const N: usize> Mul<Dual<N>> for f64 {
    type Output = Dual<N>;
    #[inline]
    fn mul(self, rhs: Dual<N>) -> Dual<N> {
        rhs.map_tangent(self * rhs.value, |t| self * t)
    }
}

impl<const N: usize> Div<Dual<N>> for f64 {
    type Output = Dual<N>;
    /// (c/v)′ = −q·v′/v with q = c/v.
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn div(self, rhs: Dual<N>) -> Dual<N> {
        let v = rhs.value;
        let q = self / v;
        rhs.map_tangent(q, |dv| -(q * dv) / v)
    }
}

macro_rules! assign_ops {
    ($($tr:ident $method:ident $op:tt),*) => {$(
        impl<const N: usize> $tr for Dual<N> {
            #[inline]
            fn $method(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
        impl<const N: usize> $tr<f64> for Dual<N> {
            #[inline]
            fn $method(&mut self, rhs: f64) {
                *self = *self $op rhs;
            }
        }
    )*};
}
assign_ops!(AddAssign add_assign +, SubAssign sub_assign -, MulAssign mul_assign *, DivAssign div_assign /);

impl<const N: usize> Sum for Dual<N> {
    /// Left-to-right sum starting from −0 (the exact additive identity, as `f64`'s `Sum`
    /// does), so values and lanes are bit-identical to summing `f64`s.
    #[inline]
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::new(-0.0, [-0.0; N]), |a, b| a + b)
    }
}
