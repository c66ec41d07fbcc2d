//! Forward-mode automatic differentiation: the [`Scalar`] trait, its implementations for
//! `f64` and for [`Dual<N>`] (a value with N tangent lanes), and JVP helpers.
//!
//! Layers are written once, generically over `S: Scalar` (forward and hand-written
//! backward). Run with `S = f64` they compute numbers; run with `S = Dual<N>`, inputs seeded
//! with unit tangents, they also compute N directional derivatives of every intermediate,
//! e.g. N columns of ∂(per-example gradient)/∂(input) in one pass (forward-over-reverse;
//! see `docs/DESIGN.md`). No tape, no allocation.
//!
//! - [`Scalar`]: arithmetic (also mixed with `f64`), `cst`, `re`, and the elementary
//!   functions `exp, ln, ln_1p, exp_m1, tanh, sqrt, powi, erf, normal_cdf, gelu, sigmoid,
//!   softplus, elu, abs, max, min`, each with its derivative written once and applied through
//!   the single chain-rule hook [`Scalar::chain`]. Comparisons look only at values; the
//!   conventions at kinks (ties, `abs`/`sqrt` at 0, `elu` at 0) are tabulated in the
//!   [`Scalar`] docs.
//! - [`Dual<N>`]: `f64` value + `[f64; N]` tangent; lanes never interact, so every lane is
//!   bit-identical to a `Dual<1>` run and the value to the `f64` run.
//! - [`jvp_coordinates_in`], [`jvp_directions_in`] (and allocating versions): k directional
//!   derivatives of a [`ScalarFn`] in ⌈k/N⌉ passes.
//!
//! # Examples
//!
//! ```
//! use reconbound::autodiff::{Dual, Scalar};
//!
//! fn gelu_clip_factor<S: Scalar>(norm: S, c: f64) -> S {
//!     // 1 / (GELU(‖g‖/C − 1) + 1)
//!     S::one() / ((norm / c - 1.0).gelu() + 1.0)
//! }
//! let f = gelu_clip_factor(Dual::<1>::variable(1.0, 0)?, 1.0);
//! assert_eq!(f.re(), 1.0); // GELU(0) = 0
//! assert_eq!(f.tangent[0], -0.5); // −GELU′(0)/C = −Φ(0)
//! # Ok::<(), reconbound::Error>(())
//! ```

mod dual;
mod jvp;
mod scalar;
#[cfg(test)]
mod tests;

pub use dual::Dual;
#[cfg(feature = "alloc")]
pub use jvp::{jvp_coordinates, jvp_directions};
pub use jvp::{jvp_coordinates_in, jvp_directions_in, pass_count, ScalarFn};
#[cfg(feature = "alloc")]
pub(crate) use scalar::interleaved_sum;
#[cfg(feature = "alloc")]
pub(crate) use scalar::tree4;
pub(crate) use scalar::tree8;
pub use scalar::{l2_norm, Scalar};
