//! Radix-2 FFT and linear convolution. (STUB: direct convolution.)

use alloc::vec;
use alloc::vec::Vec;

/// Linear convolution of two non-negative sequences: `out[k] = Σ_i a[i] b[k−i]`.
pub fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}
