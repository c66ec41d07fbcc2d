//! Attacks against the bounds: reconstruction attacks whose realised error is compared with
//! the lower bounds of [`crate::accounting`].
//!
//! - [`glm`]: the GLM attack of Balle et al. 2022 (§III) against output-perturbed logistic
//!   regression, as evaluated by Guo et al. 2022 (§7.2) against the per-example FIL bound.

#[cfg(feature = "alloc")]
pub mod glm;
