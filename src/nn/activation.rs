//! Element-wise activation functions and their derivatives, generic over [`Scalar`].

use crate::autodiff::Scalar;
use crate::math::exp_lanes;

/// 1/√(2π).
const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// An element-wise activation function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// tanh x; derivative 1 − tanh²x (computed from the output).
    Tanh,
    /// ELU with α = 1: x for x > 0, eˣ − 1 for x ≤ 0; derivative 1, resp. eˣ = y + 1
    /// (the x ≤ 0 branch at x = 0, as PyTorch). C¹, second derivative jumps at 0.
    Elu,
    /// The exact GELU x·Φ(x) (not the tanh approximation); derivative Φ(x) + x·φ(x).
    Gelu,
    /// ReLU max(0, x); derivative 1 for x > 0, 0 for x ≤ 0. **Not smooth**: second
    /// derivatives vanish almost everywhere and the Fisher information leakage through a ReLU
    /// network is undefined; use it for training and attacks, not for FIL accounting.
    Relu,
}

impl Activation {
    /// y = f(x), element-wise.
    #[inline]
    pub(crate) fn forward<S: Scalar>(self, x: &[S], y: &mut [S]) {
        match self {
            Activation::Tanh => map(x, y, |v| v.tanh()),
            Activation::Elu => map(x, y, |v| v.elu(1.0)),
            Activation::Gelu => map(x, y, |v| v.gelu()),
            Activation::Relu => map(x, y, |v| if v.re() > 0.0 { v } else { S::zero() }),
        }
    }

    /// [`forward`](Self::forward) for `f64`, the same bits, ELU vectorised
    /// (`math::exp_lanes`, bit for bit `libm::expm1`).
    #[inline]
    pub(crate) fn forward_f64(self, x: &[f64], y: &mut [f64]) {
        match self {
            Activation::Elu => exp_lanes::elu(x, y),
            _ => self.forward(x, y),
        }
    }

    /// δx = δy ⊙ f′(x), element-wise, given the input `x` and output `y` of the forward pass.
    /// The derivative is computed in `S` arithmetic, so its own tangent is exact (second
    /// derivatives flow through).
    #[inline]
    pub(crate) fn backward<S: Scalar>(self, x: &[S], y: &[S], dy: &[S], dx: &mut [S]) {
        match self {
            Activation::Tanh => {
                for ((d, &yv), &g) in dx.iter_mut().zip(y).zip(dy) {
                    *d = g * (S::one() - yv * yv);
                }
            }
            Activation::Elu => {
                for (((d, &xv), &yv), &g) in dx.iter_mut().zip(x).zip(y).zip(dy) {
                    *d = if xv.re() > 0.0 { g } else { g * (yv + 1.0) };
                }
            }
            Activation::Gelu => {
                for ((d, &xv), &g) in dx.iter_mut().zip(x).zip(dy) {
                    let pdf = (xv * xv * (-0.5)).exp() * INV_SQRT_2PI;
                    *d = g * (xv.normal_cdf() + xv * pdf);
                }
            }
            Activation::Relu => {
                for ((d, &xv), &g) in dx.iter_mut().zip(x).zip(dy) {
                    *d = if xv.re() > 0.0 { g } else { S::zero() };
                }
            }
        }
    }
}

#[inline]
fn map<S: Scalar>(x: &[S], y: &mut [S], f: impl Fn(S) -> S) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = f(v);
    }
}
