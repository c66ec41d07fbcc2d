//! The reconstructor network of RecoNN (Balle, Cherubin, Hayes 2022 §IV-B): an MLP from a
//! model's features to an image, features → H (ReLU) → pixels (sigmoid), trained with the
//! loss MSE + MAE by Adam on mini-batches, with early stopping on a held-out tenth.
//!
//! **Choices** (the excerpt fixes the architecture and the loss, not the rest; each matches the
//! peer's JAX run `../shared/bench/jax_reconn_experiment.py` where it has one):
//! - H = 1,000 hidden units; W₁ ~ N(0, 2/F) (He), W₂ ~ N(0, 1/H), biases 0.
//! - Loss: mean over the batch and the pixels of (ẑ − z)² + |ẑ − z|; the gradient of |·| at 0
//!   is 0.
//! - Adam (Kingma & Ba 2015, Alg. 1): step 1e-3, β₁ = 0.9, β₂ = 0.999, ε̂ = 1e-8, bias
//!   corrected; batches of 64 in a fresh permutation per epoch.
//! - Early stopping: the shadow pairs with index ≡ 9 (mod 10) are held out; after each epoch
//!   their mean MSE is measured and the parameters of the best epoch are kept; training stops
//!   after `patience` epochs without improvement or at `max_epochs` (the JAX run trains 60
//!   epochs on every pair, without a held-out set).
//!
//! **Arithmetic.** The products are the crate's `nn::gemm` kernels, one fused multiply-add chain per
//! entry in a fixed order; threads split the rows of each product and the Adam update, so
//! the result is the same bits for any number of threads.

use crate::error::{Error, Result};
use crate::nn::gemm::{matmul_nt_threads, matmul_threads, matmul_tn_threads};
use crate::rng::Rng;
use alloc::vec;
use alloc::vec::Vec;

/// The reconstructor's hyperparameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconstructorConfig {
    /// Hidden units H ≥ 1 (1,000).
    pub hidden: usize,
    /// Adam step size > 0 (1e-3).
    pub learning_rate: f64,
    /// Mini-batch size ≥ 1 (64).
    pub batch_size: usize,
    /// Most epochs ≥ 1 (60).
    pub max_epochs: usize,
    /// Epochs without a better held-out MSE before stopping, ≥ 1 (10).
    pub patience: usize,
}

impl Default for ReconstructorConfig {
    fn default() -> Self {
        ReconstructorConfig {
            hidden: 1000,
            learning_rate: 1e-3,
            batch_size: 64,
            max_epochs: 60,
            patience: 10,
        }
    }
}

impl ReconstructorConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::InvalidCount`] for a count of 0; [`Error::InvalidParameter`] `learning_rate`.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("hidden", self.hidden),
            ("batch_size", self.batch_size),
            ("max_epochs", self.max_epochs),
            ("patience", self.patience),
        ] {
            if v == 0 {
                return Err(Error::InvalidCount {
                    name,
                    value: 0,
                    expected: ">= 1",
                });
            }
        }
        crate::error::check_positive("learning_rate", self.learning_rate)?;
        Ok(())
    }
}

/// A trained reconstructor.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconstructor {
    inputs: usize,
    hidden: usize,
    outputs: usize,
    /// W₁ (F × H), b₁ (H), W₂ (H × P), b₂ (P), row-major, in that order.
    params: Vec<f64>,
    /// Epochs run and the epoch whose parameters were kept (from 1).
    epochs_run: usize,
    best_epoch: usize,
    best_heldout_mse: f64,
}

/// Training history of one epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochRecord {
    /// Epoch number from 1.
    pub epoch: usize,
    /// Mean training loss (MSE + MAE) over the epoch's batches.
    pub train_loss: f64,
    /// Mean per-pixel MSE on the held-out pairs.
    pub heldout_mse: f64,
}

struct Shapes {
    f: usize,
    h: usize,
    p: usize,
}

impl Shapes {
    fn w1(&self) -> core::ops::Range<usize> {
        0..self.f * self.h
    }
    fn b1(&self) -> core::ops::Range<usize> {
        self.f * self.h..self.f * self.h + self.h
    }
    fn w2(&self) -> core::ops::Range<usize> {
        let s = self.f * self.h + self.h;
        s..s + self.h * self.p
    }
    fn b2(&self) -> core::ops::Range<usize> {
        let s = self.f * self.h + self.h + self.h * self.p;
        s..s + self.p
    }
    fn len(&self) -> usize {
        self.f * self.h + self.h + self.h * self.p + self.p
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + libm::exp(-x))
    } else {
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}

/// Work buffers of one batch.
struct Batch {
    x: Vec<f64>,   // B × F
    z: Vec<f64>,   // B × P
    h: Vec<f64>,   // B × H (pre-activation, then ReLU)
    o: Vec<f64>,   // B × P
    d2: Vec<f64>,  // B × P
    dh: Vec<f64>,  // B × H
    d1t: Vec<f64>, // B × H (δ of the first layer)
}

impl Batch {
    fn new(b: usize, s: &Shapes) -> Batch {
        Batch {
            x: vec![0.0; b * s.f],
            z: vec![0.0; b * s.p],
            h: vec![0.0; b * s.h],
            o: vec![0.0; b * s.p],
            d2: vec![0.0; b * s.p],
            dh: vec![0.0; b * s.h],
            d1t: vec![0.0; b * s.h],
        }
    }
}

impl Reconstructor {
    /// Trains a reconstructor on `pairs` (feature row i of `features`, image row i of
    /// `images`): `features` is K × F and `images` K × P, row-major. Pairs with index ≡ 9
    /// (mod 10) are held out for early stopping. `seed` fixes the initialisation and the
    /// batch order; `threads` only the speed. `on_epoch` sees each epoch's record (progress).
    ///
    /// # Errors
    /// [`ReconstructorConfig::validate`]; [`Error::InvalidCount`] `shadow_models` below 10
    /// (no held-out pair), [`Error::Inconsistent`] for shapes that do not match;
    /// [`Error::Numerical`] if the loss becomes non-finite.
    #[allow(clippy::too_many_arguments)]
    pub fn train(
        config: &ReconstructorConfig,
        features: &[f64],
        inputs: usize,
        images: &[f64],
        outputs: usize,
        seed: u64,
        threads: usize,
        on_epoch: &mut dyn FnMut(&EpochRecord),
    ) -> Result<Reconstructor> {
        config.validate()?;
        if inputs == 0 || outputs == 0 || features.len() % inputs != 0 {
            return Err(Error::Inconsistent {
                what: "features.len() must be a multiple of inputs (≥ 1)",
                value: features.len() as f64,
            });
        }
        let k = features.len() / inputs;
        if images.len() != k * outputs {
            return Err(Error::Inconsistent {
                what: "images.len() must equal (number of feature rows) × outputs",
                value: images.len() as f64,
            });
        }
        if k < 10 {
            return Err(Error::InvalidCount {
                name: "shadow_models",
                value: k as u64,
                expected: ">= 10 (a tenth of the pairs is held out for early stopping)",
            });
        }
        let s = Shapes {
            f: inputs,
            h: config.hidden,
            p: outputs,
        };
        let mut rng = Rng::for_stream(seed, super::setting::STREAM_RECONSTRUCTOR, 0);
        let mut params = vec![0.0; s.len()];
        let sd1 = libm::sqrt(2.0 / s.f as f64);
        for w in &mut params[s.w1()] {
            *w = sd1 * rng.gaussian();
        }
        let sd2 = libm::sqrt(1.0 / s.h as f64);
        for w in &mut params[s.w2()] {
            *w = sd2 * rng.gaussian();
        }
        let train_idx: Vec<usize> = (0..k).filter(|i| i % 10 != 9).collect();
        let held_idx: Vec<usize> = (0..k).filter(|i| i % 10 == 9).collect();
        let mut m1 = vec![0.0; s.len()];
        let mut m2 = vec![0.0; s.len()];
        let mut grad = vec![0.0; s.len()];
        let bmax = config.batch_size;
        let mut work = Batch::new(bmax, &s);
        let mut best = params.clone();
        let mut best_mse = f64::INFINITY;
        let mut best_epoch = 0;
        let mut since_best = 0;
        let mut t: i32 = 0;
        let mut epochs_run = 0;
        let mut me = Reconstructor {
            inputs,
            hidden: s.h,
            outputs,
            params: Vec::new(),
            epochs_run: 0,
            best_epoch: 0,
            best_heldout_mse: f64::INFINITY,
        };
        for epoch in 1..=config.max_epochs {
            let mut order_rng =
                Rng::for_stream(seed, super::setting::STREAM_RECONSTRUCTOR, epoch as u64);
            let perm = order_rng.permutation(train_idx.len())?;
            let mut loss_sum = 0.0;
            let mut batches = 0usize;
            for chunk in perm.chunks(bmax) {
                let b = chunk.len();
                for (r, &pi) in chunk.iter().enumerate() {
                    let i = train_idx[pi];
                    work.x[r * s.f..(r + 1) * s.f]
                        .copy_from_slice(&features[i * s.f..(i + 1) * s.f]);
                    work.z[r * s.p..(r + 1) * s.p].copy_from_slice(&images[i * s.p..(i + 1) * s.p]);
                }
                let loss = Self::batch_gradient(&s, &params, &mut work, b, threads, &mut grad);
                if !loss.is_finite() {
                    return Err(Error::Numerical {
                        what: "the reconstructor's training loss is not finite",
                        value: loss,
                    });
                }
                loss_sum += loss;
                batches += 1;
                t += 1;
                adam(
                    threads,
                    config.learning_rate,
                    t,
                    &mut params,
                    &grad,
                    &mut m1,
                    &mut m2,
                );
            }
            epochs_run = epoch;
            me.params = core::mem::take(&mut params);
            let held_mse = me.mean_mse(features, images, &held_idx, threads)?;
            params = core::mem::take(&mut me.params);
            on_epoch(&EpochRecord {
                epoch,
                train_loss: loss_sum / batches.max(1) as f64,
                heldout_mse: held_mse,
            });
            if held_mse < best_mse {
                best_mse = held_mse;
                best.copy_from_slice(&params);
                best_epoch = epoch;
                since_best = 0;
            } else {
                since_best += 1;
                if since_best >= config.patience {
                    break;
                }
            }
        }
        me.params = best;
        me.epochs_run = epochs_run;
        me.best_epoch = best_epoch;
        me.best_heldout_mse = best_mse;
        Ok(me)
    }

    /// Forward and backward of one batch of `b` rows in `work` (x, z filled); the gradient of
    /// the batch's mean loss into `grad`; returns the loss.
    fn batch_gradient(
        s: &Shapes,
        params: &[f64],
        work: &mut Batch,
        b: usize,
        threads: usize,
        grad: &mut [f64],
    ) -> f64 {
        let (f, h, p) = (s.f, s.h, s.p);
        let w1 = &params[s.w1()];
        let b1 = &params[s.b1()];
        let w2 = &params[s.w2()];
        let b2 = &params[s.b2()];
        // Forward.
        matmul_threads(b, h, f, &work.x, w1, &mut work.h, threads);
        for row in work.h[..b * h].chunks_exact_mut(h) {
            for (v, &bb) in row.iter_mut().zip(b1) {
                *v = (*v + bb).max(0.0);
            }
        }
        matmul_threads(b, p, h, &work.h, w2, &mut work.o, threads);
        let scale = 1.0 / (b * p) as f64;
        let mut loss = 0.0;
        for ((orow, zrow), drow) in work.o[..b * p]
            .chunks_exact_mut(p)
            .zip(work.z[..b * p].chunks_exact(p))
            .zip(work.d2[..b * p].chunks_exact_mut(p))
        {
            for (((o, &z), d), &bias) in orow.iter_mut().zip(zrow).zip(drow.iter_mut()).zip(b2) {
                let y = sigmoid(*o + bias);
                *o = y;
                let e = y - z;
                loss += e * e + e.abs();
                let sign = if e > 0.0 {
                    1.0
                } else if e < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                *d = (2.0 * e + sign) * scale * y * (1.0 - y);
            }
        }
        // Backward: second layer.
        matmul_tn_threads(
            h,
            p,
            b,
            &work.h[..b * h],
            &work.d2[..b * p],
            &mut grad[s.w2()],
            threads,
        );
        {
            let gb2 = &mut grad[s.b2()];
            gb2.fill(0.0);
            for row in work.d2[..b * p].chunks_exact(p) {
                for (g, &d) in gb2.iter_mut().zip(row) {
                    *g += d;
                }
            }
        }
        matmul_nt_threads(
            b,
            h,
            p,
            &work.d2[..b * p],
            w2,
            &mut work.dh[..b * h],
            threads,
        );
        for ((d, &hv), out) in work.dh[..b * h]
            .iter()
            .zip(&work.h[..b * h])
            .zip(work.d1t[..b * h].iter_mut())
        {
            *out = if hv > 0.0 { *d } else { 0.0 };
        }
        {
            let gb1 = &mut grad[s.b1()];
            gb1.fill(0.0);
            for row in work.d1t[..b * h].chunks_exact(h) {
                for (g, &d) in gb1.iter_mut().zip(row) {
                    *g += d;
                }
            }
        }
        matmul_tn_threads(
            f,
            h,
            b,
            &work.x[..b * f],
            &work.d1t[..b * h],
            &mut grad[s.w1()],
            threads,
        );
        loss * scale
    }

    /// The reconstructions of the feature rows `rows` (indices into `features`), each P long,
    /// concatenated.
    ///
    /// # Errors
    /// [`Error::Inconsistent`] if `features` is not a whole number of rows or a row index is
    /// out of range.
    pub fn reconstruct(
        &self,
        features: &[f64],
        rows: &[usize],
        threads: usize,
    ) -> Result<Vec<f64>> {
        let s = Shapes {
            f: self.inputs,
            h: self.hidden,
            p: self.outputs,
        };
        if features.len() % s.f != 0 || rows.iter().any(|&r| (r + 1) * s.f > features.len()) {
            return Err(Error::Inconsistent {
                what: "feature rows of the reconstructor's input width, row indices in range",
                value: features.len() as f64,
            });
        }
        let mut out = Vec::with_capacity(rows.len() * s.p);
        let block = 64;
        let mut x = vec![0.0; block * s.f];
        let mut hbuf = vec![0.0; block * s.h];
        let mut o = vec![0.0; block * s.p];
        for chunk in rows.chunks(block) {
            let b = chunk.len();
            for (r, &i) in chunk.iter().enumerate() {
                x[r * s.f..(r + 1) * s.f].copy_from_slice(&features[i * s.f..(i + 1) * s.f]);
            }
            matmul_threads(b, s.h, s.f, &x, &self.params[s.w1()], &mut hbuf, threads);
            let b1 = &self.params[s.b1()];
            for row in hbuf[..b * s.h].chunks_exact_mut(s.h) {
                for (v, &bb) in row.iter_mut().zip(b1) {
                    *v = (*v + bb).max(0.0);
                }
            }
            matmul_threads(b, s.p, s.h, &hbuf, &self.params[s.w2()], &mut o, threads);
            let b2 = &self.params[s.b2()];
            for row in o[..b * s.p].chunks_exact(s.p) {
                out.extend(row.iter().zip(b2).map(|(&v, &bb)| sigmoid(v + bb)));
            }
        }
        Ok(out)
    }

    /// Mean per-pixel MSE of the reconstructions of `rows` against their images.
    fn mean_mse(
        &self,
        features: &[f64],
        images: &[f64],
        rows: &[usize],
        threads: usize,
    ) -> Result<f64> {
        if rows.is_empty() {
            return Ok(0.0);
        }
        let rec = self.reconstruct(features, rows, threads)?;
        let p = self.outputs;
        let mut total = 0.0;
        for (r, &i) in rows.iter().enumerate() {
            total += mse(&rec[r * p..(r + 1) * p], &images[i * p..(i + 1) * p]);
        }
        Ok(total / rows.len() as f64)
    }

    /// Epochs run, the epoch kept (best held-out MSE) and that MSE.
    pub fn training_summary(&self) -> (usize, usize, f64) {
        (self.epochs_run, self.best_epoch, self.best_heldout_mse)
    }

    /// Input width F.
    pub fn inputs(&self) -> usize {
        self.inputs
    }
}

/// Mean squared error per pixel, Σ (a_i − b_i)² / n (0 for empty input).
pub fn mse(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let mut s = 0.0;
    for (&x, &y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s / n as f64
}

/// One Adam step (Kingma & Ba 2015, Alg. 1, β₁ = 0.9, β₂ = 0.999, ε̂ = 1e-8, bias corrected)
/// at step number `t` ≥ 1.
fn adam(
    threads: usize,
    lr: f64,
    t: i32,
    params: &mut [f64],
    grad: &[f64],
    m1: &mut [f64],
    m2: &mut [f64],
) {
    const B1: f64 = 0.9;
    const B2: f64 = 0.999;
    const EPS: f64 = 1e-8;
    let c1 = 1.0 - libm::pow(B1, f64::from(t));
    let c2 = 1.0 - libm::pow(B2, f64::from(t));
    let step = |p: &mut [f64], g: &[f64], a: &mut [f64], v: &mut [f64]| {
        for (((pv, &gv), av), vv) in p.iter_mut().zip(g).zip(a.iter_mut()).zip(v.iter_mut()) {
            *av = B1 * *av + (1.0 - B1) * gv;
            *vv = B2 * *vv + (1.0 - B2) * gv * gv;
            *pv -= lr * (*av / c1) / (crate::math::sqrt(*vv / c2) + EPS);
        }
    };
    #[cfg(not(feature = "std"))]
    let _ = threads;
    #[cfg(feature = "std")]
    if threads > 1 {
        let chunk = params.len().div_ceil(threads);
        std::thread::scope(|s| {
            for (((p, g), a), v) in params
                .chunks_mut(chunk)
                .zip(grad.chunks(chunk))
                .zip(m1.chunks_mut(chunk))
                .zip(m2.chunks_mut(chunk))
            {
                s.spawn(move || step(p, g, a, v));
            }
        });
        return;
    }
    step(params, grad, m1, m2);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss_of(s: &Shapes, params: &[f64], x: &[f64], z: &[f64], b: usize) -> f64 {
        let mut work = Batch::new(b, s);
        work.x[..b * s.f].copy_from_slice(x);
        work.z[..b * s.p].copy_from_slice(z);
        let mut g = vec![0.0; s.len()];
        Reconstructor::batch_gradient(s, params, &mut work, b, 1, &mut g)
    }

    /// The hand-written backward against central differences of the loss (mean over the
    /// batch and the pixels of (ẑ − z)² + |ẑ − z|): a wrong factor (a missing 1/(B·P), 2e
    /// instead of e, the sigmoid's derivative) moves the gradient by far more than the 1e-6
    /// relative tolerance (central differences with h = 1e-6 are accurate to ~1e-9 here;
    /// targets are chosen so that no |ẑ − z| crosses 0 within h).
    #[test]
    fn reconstructor_gradient_matches_finite_differences() {
        let s = Shapes { f: 5, h: 4, p: 3 };
        let b = 3;
        let mut rng = Rng::from_seed(11);
        let params: Vec<f64> = (0..s.len()).map(|_| 0.7 * rng.gaussian()).collect();
        let x: Vec<f64> = (0..b * s.f).map(|_| rng.gaussian()).collect();
        let z: Vec<f64> = (0..b * s.p)
            .map(|i| if i % 2 == 0 { 0.0 } else { 1.0 })
            .collect();
        let mut work = Batch::new(b, &s);
        work.x[..b * s.f].copy_from_slice(&x);
        work.z[..b * s.p].copy_from_slice(&z);
        let mut g = vec![0.0; s.len()];
        for threads in [1, 2] {
            let loss = Reconstructor::batch_gradient(&s, &params, &mut work, b, threads, &mut g);
            assert!((loss - loss_of(&s, &params, &x, &z, b)).abs() < 1e-15);
            for i in 0..s.len() {
                let h = 1e-6;
                let mut p = params.clone();
                p[i] += h;
                let up = loss_of(&s, &p, &x, &z, b);
                p[i] -= 2.0 * h;
                let down = loss_of(&s, &p, &x, &z, b);
                let fd = (up - down) / (2.0 * h);
                assert!(
                    (g[i] - fd).abs() <= 1e-6 * fd.abs().max(1e-3),
                    "parameter {i}: backward {} vs finite differences {fd}",
                    g[i]
                );
            }
        }
    }

    /// Kingma & Ba's first step moves every parameter by −lr·sign(g) (m̂ = g, v̂ = g²), up to
    /// ε̂ = 1e-8 relative to |g|.
    #[test]
    fn adam_first_step_is_lr_times_sign() {
        let g = [0.5, -2.0, 1e-3];
        for threads in [1, 2] {
            let mut p = [1.0, 1.0, 1.0];
            let (mut m, mut v) = ([0.0; 3], [0.0; 3]);
            adam(threads, 0.1, 1, &mut p, &g, &mut m, &mut v);
            for (pv, gv) in p.iter().zip(g) {
                let expect = 1.0 - 0.1 * gv.signum();
                assert!(
                    (pv - expect).abs() < 0.1 * 1e-8 / gv.abs() + 1e-15,
                    "{pv} {expect}"
                );
            }
        }
    }

    /// A reconstructor learns a linear code of the images (features = A·z) well below the
    /// mean image's MSE, and gives the same bits on one or two threads.
    #[test]
    fn reconstructor_learns_a_linear_code_with_the_same_bits_on_any_thread_count() {
        let (k, f, p) = (400, 12, 6);
        let mut rng = Rng::from_seed(5);
        let a: Vec<f64> = (0..f * p).map(|_| rng.gaussian()).collect();
        let mut images = Vec::with_capacity(k * p);
        let mut features = Vec::with_capacity(k * f);
        for _ in 0..k {
            let z: Vec<f64> = (0..p).map(|_| rng.uniform()).collect();
            for r in 0..f {
                features.push((0..p).map(|c| a[r * p + c] * z[c]).sum::<f64>());
            }
            images.extend(z);
        }
        let config = ReconstructorConfig {
            hidden: 32,
            batch_size: 16,
            max_epochs: 40,
            ..ReconstructorConfig::default()
        };
        let one =
            Reconstructor::train(&config, &features, f, &images, p, 3, 1, &mut |_| {}).unwrap();
        let two =
            Reconstructor::train(&config, &features, f, &images, p, 3, 2, &mut |_| {}).unwrap();
        assert_eq!(one, two);
        let (_, _, held) = one.training_summary();
        // Uniform pixels: the mean image's MSE is 1/12 ≈ 0.083.
        assert!(held < 0.02, "held-out MSE {held}");
        assert!(Reconstructor::train(
            &config,
            &features[..9 * f],
            f,
            &images[..9 * p],
            p,
            3,
            1,
            &mut |_| {}
        )
        .is_err());
    }
}
