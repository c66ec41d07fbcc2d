//! Numerical building blocks, all written here and checked against `../shared/vectors/`:
//! the normal distribution ([`normal`]), log-space arithmetic and log-gamma ([`special`]),
//! the regularised incomplete beta function and Clopper–Pearson intervals ([`beta`]),
//! bracketing root finding ([`root`]), a radix-2 FFT for PLD composition ([`fft`]) and small
//! dense linear algebra ([`linalg`]: Cholesky).
//!
//! Every function goes through `libm`, never through `std`'s float methods, so results are
//! bit-identical with and without `std`.

pub mod beta;
pub(crate) mod exp_lanes;
#[cfg(feature = "alloc")]
pub mod fft;
pub mod linalg;
pub mod normal;
pub mod root;
pub mod special;
pub(crate) mod tanh;

/// √x correctly rounded: `f64::sqrt` with `std` (the VEX-encoded `vsqrtsd` in AVX builds),
/// `libm::sqrt` without (correctly rounded too: the same bits). On x86-64 `libm::sqrt` is
/// inline assembly with the legacy SSE encoding, which in code that keeps 256-bit registers
/// live costs far more than the square root (measured on the Intel Xeon of issue 19: 8 % of
/// a DP-SGD step, one `sqrtsd` per example). Use it in hot loops.
#[inline(always)]
pub(crate) fn sqrt(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrt(x)
    }
}
