//! Numerical building blocks, all written here and checked against `../shared/vectors/`:
//! the normal distribution ([`normal`]), log-space arithmetic and log-gamma ([`special`]),
//! the regularised incomplete beta function and Clopper–Pearson intervals ([`beta`]),
//! bracketing root finding ([`root`]), a radix-2 FFT for PLD composition ([`fft`]) and small
//! dense linear algebra ([`linalg`]: Cholesky).
//!
//! Every function goes through `libm`, never through `std`'s float methods, so results are
//! bit-identical with and without `std`.

pub mod beta;
#[cfg(feature = "alloc")]
pub mod fft;
pub mod linalg;
pub mod normal;
pub mod root;
pub mod special;
pub(crate) mod tanh;
