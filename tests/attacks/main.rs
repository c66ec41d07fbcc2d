//! Attacks against the bounds: the gradient-matching reconstruction attack of Hayes et al.
//! 2023 (its gradient against finite differences and against the explicit Jacobian, recovery
//! from noise-free DP-SGD, degradation with noise, input validation).
//!
//! Tests are deterministic (fixed seeds); tolerances are stated and justified beside each.

mod gradient_matching;
