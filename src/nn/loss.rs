//! Losses on the logits, generic over [`Scalar`]: softmax cross-entropy with an integer
//! label, and the binary logistic loss.

use crate::autodiff::Scalar;

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
                // The maximum by value; a constant shift, so its tangent does not matter for
                // the result, but using the element keeps log-sum-exp exact in S arithmetic.
                let mut m = f64::NEG_INFINITY;
                for v in z {
                    if v.re() > m {
                        m = v.re();
                    }
                }
                let mut sum = S::zero();
                for (d, &v) in dz.iter_mut().zip(z) {
                    let e = (v - m).exp();
                    *d = e;
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
                // ℓ = m + log Σ e^{z−m} − z_y, with (m − z_y) formed first (exact when
                // z_y = m).
                (S::zero() - zy + m) + log_sum
            }
            Loss::Logistic => {
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
        }
    }
}
