//! Losses on the logits, generic over [`Scalar`]: softmax cross-entropy with an integer
//! label, and the binary logistic loss.

use crate::autodiff::Scalar;
use crate::math::exp_lanes::exp_in_place;

/// The training loss applied to the model's output (the logits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Softmax cross-entropy with an integer label y ∈ {0, …, K−1} (K ≥ 2 logits):
    /// ℓ(z, y) = log Σ_k e^{z_k} − z_y, computed stably as m + log Σ_k e^{z_k − m} with
    /// m = max_k z_k; gradient softmax(z) − e_y.
    SoftmaxCrossEntropy,
    /// Binary logistic loss on one logit z with label y ∈ {0, 1}:
    /// ℓ(z, y) = log(1 + e^{−s z}), s = 2y − 1 (computed as softplus(−s z), no overflow);
    /// gradient σ(z) − y.
    Logistic,
}

impl Loss {
    /// The number of classes for `outputs` logits (K for cross-entropy, 2 for logistic).
    pub(crate) fn classes(self, outputs: usize) -> usize {
        match self {
            Loss::SoftmaxCrossEntropy => outputs,
            Loss::Logistic => 2,
        }
    }

    /// Loss value and its gradient with respect to the logits (written into `dz`).
    /// Assumes a valid label and `dz.len() == z.len()` (≥ 2 for cross-entropy, 1 for logistic).
    pub(crate) fn value_and_grad<S: Scalar>(self, z: &[S], label: usize, dz: &mut [S]) -> S {
        match self {
            Loss::SoftmaxCrossEntropy => {
                let m = softmax_shift(z, dz);
                for v in dz.iter_mut() {
                    *v = v.exp();
                }
                softmax_finish(z, label, dz, m)
            }
            Loss::Logistic => logistic(z, label, dz),
        }
    }

    /// [`value_and_grad`](Self::value_and_grad) in `f64` for the examples of a block, the same
    /// bits: `z` and `dz` hold `k` logits per example (example-major), `labels` and `losses`
    /// one entry per example. The softmax's exponentials of the whole block go through
    /// `math::exp_lanes` (bit for bit `libm::exp`, vectorised).
    pub(crate) fn block_value_and_grad(
        self,
        z: &[f64],
        k: usize,
        labels: &[usize],
        dz: &mut [f64],
        losses: &mut [f64],
    ) {
        let k = k.max(1);
        let n = labels.len().min(losses.len());
        let (Some(z), Some(dz)) = (z.get(..n * k), dz.get_mut(..n * k)) else {
            return;
        };
        match self {
            Loss::SoftmaxCrossEntropy => {
                // Each example's maximum waits in `losses` for the second pass.
                for ((z, d), l) in z
                    .chunks_exact(k)
                    .zip(dz.chunks_exact_mut(k))
                    .zip(&mut *losses)
                {
                    *l = softmax_shift(z, d);
                }
                exp_in_place(dz);
                for (((z, d), l), &y) in z
                    .chunks_exact(k)
                    .zip(dz.chunks_exact_mut(k))
                    .zip(losses.iter_mut())
                    .zip(labels)
                {
                    *l = softmax_finish(z, y, d, *l);
                }
            }
            Loss::Logistic => {
                for (((z, d), l), &y) in z
                    .chunks_exact(k)
                    .zip(dz.chunks_exact_mut(k))
                    .zip(losses.iter_mut())
                    .zip(labels)
                {
                    *l = logistic(z, y, d);
                }
            }
        }
    }
}

/// Softmax cross-entropy, first part: dz_k = z_k − m with m = max_k z_k by value; returns m.
/// The maximum is a constant shift, so its tangent does not matter for the result, but using
/// the element keeps log-sum-exp exact in S arithmetic.
#[inline(always)]
fn softmax_shift<S: Scalar>(z: &[S], dz: &mut [S]) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for v in z {
        if v.re() > m {
            m = v.re();
        }
    }
    for (d, &v) in dz.iter_mut().zip(z) {
        *d = v - m;
    }
    m
}

/// Softmax cross-entropy, second part, with dz_k = e^{z_k − m}: the gradient softmax(z) − e_y
/// into `dz` and the loss ℓ = m + log Σ e^{z−m} − z_y, with (m − z_y) formed first (exact
/// when z_y = m).
#[inline(always)]
fn softmax_finish<S: Scalar>(z: &[S], label: usize, dz: &mut [S], m: f64) -> S {
    let mut sum = S::zero();
    for &e in dz.iter() {
        sum += e;
    }
    let log_sum = sum.ln();
    let inv = S::one() / sum;
    for d in dz.iter_mut() {
        *d *= inv;
    }
    let mut zy = S::zero();
    if let (Some(d), Some(&v)) = (dz.get_mut(label), z.get(label)) {
        *d -= 1.0;
        zy = v;
    }
    (S::zero() - zy + m) + log_sum
}

/// The logistic loss and its gradient.
#[inline(always)]
fn logistic<S: Scalar>(z: &[S], label: usize, dz: &mut [S]) -> S {
    let mut loss = S::zero();
    if let (Some(d), Some(&v)) = (dz.first_mut(), z.first()) {
        if label == 1 {
            loss = (-v).softplus();
            // σ(z) − 1 = −σ(−z), accurate for large z.
            *d = -(-v).sigmoid();
        } else {
            loss = v.softplus();
            *d = v.sigmoid();
        }
    }
    loss
}
