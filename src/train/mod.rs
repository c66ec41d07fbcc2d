//! Training: per-example gradient clipping (hard and GELU) for DP-SGD.

pub mod clip;
