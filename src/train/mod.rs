//! Training: per-example gradient clipping ([`clip`]), DP-SGD ([`dpsgd`]) with its batch
//! samplers ([`sampling`]) and training observers ([`observer`]), and output-perturbed
//! L2-regularised logistic regression ([`logreg`]).
//!
//! DP-SGD never stores its trace: at every step it calls an [`observer::Observer`] with the
//! step index, the parameters before the update, the batch, the clipped per-example
//! gradients (only when an observer asks for them) and the released noisy gradient, so that
//! accountants, attacks and loggers run online in O(p) memory.
//!
//! Everything but [`clip`] requires the `alloc` feature.

pub mod clip;
#[cfg(feature = "alloc")]
pub(crate) mod clipped_sum;
#[cfg(feature = "alloc")]
pub mod dpsgd;
#[cfg(feature = "alloc")]
pub mod logreg;
#[cfg(feature = "alloc")]
pub mod observer;
#[cfg(feature = "alloc")]
pub mod sampling;
