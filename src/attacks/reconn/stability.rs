//! Whether every model's training is stable: the sharpness λ (the Hessian eigenvalue of
//! largest magnitude of the training loss) at the trained parameters, times the learning
//! rate ρ, against 2.
//!
//! **Why 2.** Full-batch gradient descent w ← w − ρ∇L(w) near a point where L is locally
//! quadratic with Hessian H moves the error along an eigenvector of H with eigenvalue λ by
//! the factor 1 − ρλ per step: it shrinks iff 0 < ρλ < 2 and grows (oscillating in sign)
//! when ρλ > 2. Cohen, Kaur, Li, Kolter & Talwalkar (ICLR 2021, "Gradient descent on neural
//! networks typically occurs at the edge of stability") observe that full-batch GD on
//! neural networks drives λ up until ρλ ≈ 2 and then hovers there, the loss decreasing
//! non-monotonically: a regime in which the trajectory amplifies small differences.
//!
//! **Why RecoNN cares.** Every shadow and released model starts from the same θ₀ and trains
//! on D⁻ plus one target; the reconstructor learns the inverse of the map target ↦ model. At
//! the edge of stability that map is chaotic and the reconstructor learns nothing from a few
//! thousand samples. Measured on the vendored MNIST digits (issue 31; README "RecoNN"), at the
//! peer's ρ = 0.5, T = 100: ρλ at the final model (the model trained on D⁻ and shadow
//! target 0) lies in 1.67–2.11 over seeds 0–15, its largest from step 40 on in 1.96–2.86; moving a
//! target by 1e-6 moves the model by up to 0.62× that (seed 0; 0.32× at seed 2) against
//! 0.004–0.08× elsewhere, and the last layers of 20 shadow models spread with median sd 0.045 at seed 0
//! against 0.0016–0.037 for other seeds. With seed 0 the reconstructor then fails (mean MSE
//! 0.0995, above the mean image's 0.0655). At ρ = 0.25, T = 200 (the same ρ·T, the crate's
//! default) ρλ at the final model lies in 0.94–1.58 over the same seeds (at most 1.86 from
//! step 40 on), the spread is 0.0011–0.0028 for every seed, and the attack at seeds 0–3
//! beats the mean image and the NN oracle on 8–14 % of targets.
//!
//! **What is computed.** λ by power iteration on Hessian–vector products of the mean loss
//! over the training set (each product exact, forward-over-reverse: [`Sequential::forward_backward`]
//! with parameters of type `Dual<1>` seeded with the direction), from a fixed start drawn
//! from a fixed seed, for [`POWER_ITERATIONS`] products or until the Rayleigh quotient changes
//! by less than 1e-4 relative. It is a diagnostic, not a bound: power iteration estimates the
//! eigenvalue of largest magnitude (from below once converged; a negative λ is reported as
//! such) and one model stands for all (every model shares θ₀ and D⁻ and differs in one
//! example).

use crate::autodiff::Dual;
use crate::error::{Error, Result};
use crate::nn::Sequential;
use crate::rng::Rng;
use alloc::vec;
use alloc::vec::Vec;

/// Most Hessian–vector products of one estimate (each costs about two gradients of the whole
/// training set).
pub const POWER_ITERATIONS: usize = 50;

/// ρλ at or above this is the edge of stability (module docs).
pub const EDGE_OF_STABILITY: f64 = 2.0;

/// The stream of the power iteration's start (fixed: the estimate depends on the parameters
/// and the data only).
const START_SEED: u64 = 0x5348_4152_504e_4553;

/// The sharpness of a trained model and what it means for its learning rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stability {
    /// λ, the Hessian eigenvalue of largest magnitude of the mean training loss at the
    /// trained parameters (power-iteration estimate).
    pub sharpness: f64,
    /// ρλ: stable below [`EDGE_OF_STABILITY`] (2).
    pub lr_times_sharpness: f64,
}

impl Stability {
    /// Whether ρλ ≥ 2: training ends at the edge of stability and the map from a target to
    /// its model is likely chaotic (module docs).
    pub fn at_edge(&self) -> bool {
        self.lr_times_sharpness >= EDGE_OF_STABILITY
    }
}

/// The Hessian eigenvalue of largest magnitude of the mean loss (1/n)·Σᵢ ℓ(w; xᵢ, yᵢ) at
/// `params` over the n examples (`xs` row-major n × d, labels `ys`), by power iteration
/// (module docs).
///
/// A product that vanishes (the start lies in the Hessian's kernel) gives 0.
///
/// # Errors
/// [`Error::InvalidCount`] `examples` when there are none or `xs` and `ys` disagree; the
/// model's errors (parameters or inputs that do not fit); [`Error::Numerical`] if a product
/// is not finite.
pub fn sharpness(model: &Sequential, params: &[f64], xs: &[f64], ys: &[u32]) -> Result<f64> {
    let d = model.input_len();
    let p = model.num_params();
    if ys.is_empty() || xs.len() != ys.len() * d {
        return Err(Error::InvalidCount {
            name: "examples",
            value: ys.len() as u64,
            expected: ">= 1 example, with xs holding one row of input_len() values per label",
        });
    }
    if params.len() != p {
        return Err(Error::InvalidCount {
            name: "params",
            value: params.len() as u64,
            expected: "num_params() values",
        });
    }
    let mut rng = Rng::from_seed(START_SEED);
    let mut u: Vec<f64> = (0..p).map(|_| rng.uniform() - 0.5).collect();
    let mut ws = model.workspace::<Dual<1>>();
    let mut grad = vec![Dual::<1>::default(); p];
    let mut x = vec![Dual::<1>::default(); d];
    let mut w = vec![Dual::<1>::default(); p];
    let mut hu = vec![0.0; p];
    let mut lambda = 0.0;
    for it in 0..POWER_ITERATIONS {
        let norm = crate::autodiff::l2_norm(&u[..]);
        if norm == 0.0 {
            // H·u = 0: u is in the kernel and its Rayleigh quotient, 0, is the estimate
            return Ok(lambda);
        }
        if !norm.is_finite() {
            return Err(Error::Numerical {
                what: "sharpness: a Hessian-vector product overflowed",
                value: norm,
            });
        }
        for (wi, (&v, &ui)) in w.iter_mut().zip(params.iter().zip(&u)) {
            *wi = Dual {
                value: v,
                tangent: [ui / norm],
            };
        }
        hu.fill(0.0);
        for (row, &y) in xs.chunks_exact(d).zip(ys) {
            for (xi, &v) in x.iter_mut().zip(row) {
                *xi = Dual::constant(v);
            }
            model.forward_backward(&w, &x, y as usize, &mut grad, None, &mut ws)?;
            for (h, g) in hu.iter_mut().zip(&grad) {
                *h += g.tangent[0];
            }
        }
        let n = ys.len() as f64;
        let mut next = 0.0;
        for (h, wi) in hu.iter_mut().zip(&w) {
            *h /= n;
            next += *h * wi.tangent[0];
        }
        if !next.is_finite() {
            return Err(Error::Numerical {
                what: "sharpness: a Hessian-vector product is not finite",
                value: next,
            });
        }
        let settled = it > 0 && libm::fabs(next - lambda) <= 1e-4 * libm::fabs(next);
        lambda = next;
        if settled {
            break;
        }
        core::mem::swap(&mut u, &mut hu);
    }
    Ok(lambda)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::arch;

    /// Logistic regression's Hessian is known in closed form: for one example x (with the
    /// bias input 1) and p = σ(w·x), H = p(1 − p)·x̃x̃ᵀ, rank one with eigenvalue
    /// p(1 − p)·|x̃|². At w = 0, p = 1/2: λ = |x̃|²/4.
    #[test]
    fn sharpness_of_logistic_regression_is_the_closed_form() -> Result<()> {
        let model = arch::logistic_regression(2)?;
        let x = [3.0, 4.0];
        let lam = sharpness(&model, &[0.0; 3], &x, &[1])?;
        // |x̃|² = 9 + 16 + 1 = 26; λ = 6.5. Power iteration on a rank-one matrix converges
        // in one step (up to rounding): tolerance 1e-12 relative.
        assert!((lam - 6.5).abs() <= 6.5e-12, "{lam}");
        // x̃ = (3, 4, 1) and (−3, −4, 1) (labels 1 and 0, p = 1/2 at w = 0): the mean of the
        // two outer products over 4 cancels the cross terms with the bias, leaving
        // diag-blocks xxᵀ/4 and 1/4: λ = 25/4. The second eigenvalue is 1/4 (ratio 0.04), so
        // the stopping rule (relative change 1e-4) leaves a Rayleigh quotient within about
        // 1e-8 relative: tolerance 1e-6 relative.
        let lam2 = sharpness(&model, &[0.0; 3], &[3.0, 4.0, -3.0, -4.0], &[1, 0])?;
        assert!((lam2 - 6.25).abs() <= 6.25e-6, "{lam2}");
        Ok(())
    }

    #[test]
    fn sharpness_refuses_mismatched_examples() {
        let Ok(model) = arch::logistic_regression(2) else {
            return;
        };
        assert!(matches!(
            sharpness(&model, &[0.0; 3], &[], &[]),
            Err(Error::InvalidCount {
                name: "examples",
                ..
            })
        ));
        assert!(matches!(
            sharpness(&model, &[0.0; 3], &[1.0], &[0]),
            Err(Error::InvalidCount {
                name: "examples",
                ..
            })
        ));
        assert!(matches!(
            sharpness(&model, &[0.0; 2], &[1.0, 2.0], &[0]),
            Err(Error::InvalidCount { name: "params", .. })
        ));
    }
}
