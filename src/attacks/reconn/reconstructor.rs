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
//!
//! **Precision** (issue 32). [`Precision::F64`] trains in `f64`; [`Precision::F32`] keeps the
//! parameters, Adam's moments, the activations and the gradients in `f32`, as the JAX peer
//! does (its default dtype): the standardised features (computed in `f64` by the experiment)
//! and the images are rounded to `f32` a batch at a time, Adam's bias corrections and step are
//! the same expressions evaluated in `f32` (as optax does), the sigmoid is `libm::expf`, and
//! the reconstructions are returned as `f64`, so the held-out MSE, early stopping and
//! everything downstream (MSE against the targets, the NN oracle, the verdicts) stay `f64`.
//! `f32` fmas are correctly rounded like `f64` ones and `libm` is the same code on every
//! build, so an `f32` reconstructor is also the same bits on every build and thread count
//! (`tests/golden_bits.rs`). One generic training loop serves both types. The reconstructor
//! is an attack's learned model: no bound depends on its precision.

use crate::error::{Error, Result};
use crate::nn::gemm::{matmul_nt_threads, matmul_threads, matmul_tn_threads, Real};
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
    /// The arithmetic of the training and the reconstructions (module docs, "Precision").
    pub precision: Precision,
}

/// The floating-point type a reconstructor trains and reconstructs in (issue 32).
///
/// `F32` is the default: it reconstructs as well as `F64` within the noise of training
/// (seed 1, R = 100, the peer's training, three reconstructor seeds each: mean MSE f32 − f64
/// = +0.00053 ± 0.00055 at K = 1,000 and −0.00022 ± 0.00045 at K = 2,000; at K = 8,000 one f32
/// run gave 0.0237 against f64's 0.0241) at about half the time per epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// `f32` parameters, moments, activations and gradients (as the JAX peer).
    #[default]
    F32,
    /// `f64` throughout.
    F64,
}

impl Precision {
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

impl Default for ReconstructorConfig {
    fn default() -> Self {
        ReconstructorConfig {
            hidden: 1000,
            learning_rate: 1e-3,
            batch_size: 64,
            max_epochs: 60,
            patience: 10,
            precision: Precision::default(),
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
    params: Params,
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

/// The parameters in the precision they were trained in.
#[derive(Clone, Debug, PartialEq)]
enum Params {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// The arithmetic the training loop needs beyond the products' (sealed through [`Real`]).
trait Float: Real + core::ops::Neg<Output = Self> {
    const ONE: Self;
    /// The nearest value of this type (exact for `f64`).
    fn of(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// `libm`'s exp (the same code on every build).
    fn exp(self) -> Self;
    /// `libm`'s pow.
    fn pow(self, e: Self) -> Self;
    /// Correctly rounded √.
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    /// max(self, 0) (0 for NaN, as `f64::max`).
    fn relu(self) -> Self;
}

impl Float for f64 {
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn of(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn exp(self) -> f64 {
        libm::exp(self)
    }
    #[inline(always)]
    fn pow(self, e: f64) -> f64 {
        libm::pow(self, e)
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        crate::math::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    #[inline(always)]
    fn relu(self) -> f64 {
        self.max(0.0)
    }
}

impl Float for f32 {
    const ONE: f32 = 1.0;
    #[inline(always)]
    fn of(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn exp(self) -> f32 {
        libm::expf(self)
    }
    #[inline(always)]
    fn pow(self, e: f32) -> f32 {
        libm::powf(self, e)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        #[cfg(feature = "std")]
        {
            f32::sqrt(self)
        }
        #[cfg(not(feature = "std"))]
        {
            libm::sqrtf(self)
        }
    }
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn relu(self) -> f32 {
        self.max(0.0)
    }
}

/// Copies `src` into `dst` rounded to `T` (a copy for `f64`).
#[inline]
fn convert<T: Float>(dst: &mut [T], src: &[f64]) {
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = T::of(v);
    }
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

fn sigmoid<T: Float>(x: T) -> T {
    if x >= T::ZERO {
        T::ONE / (T::ONE + (-x).exp())
    } else {
        let e = x.exp();
        e / (T::ONE + e)
    }
}

/// Work buffers of one batch.
struct Batch<T> {
    x: Vec<T>,   // B × F
    z: Vec<T>,   // B × P
    h: Vec<T>,   // B × H (pre-activation, then ReLU)
    o: Vec<T>,   // B × P
    d2: Vec<T>,  // B × P
    dh: Vec<T>,  // B × H
    d1t: Vec<T>, // B × H (δ of the first layer)
}

impl<T: Float> Batch<T> {
    fn new(b: usize, s: &Shapes) -> Batch<T> {
        Batch {
            x: vec![T::ZERO; b * s.f],
            z: vec![T::ZERO; b * s.p],
            h: vec![T::ZERO; b * s.h],
            o: vec![T::ZERO; b * s.p],
            d2: vec![T::ZERO; b * s.p],
            dh: vec![T::ZERO; b * s.h],
            d1t: vec![T::ZERO; b * s.h],
        }
    }
}

impl Reconstructor {
    /// Trains a reconstructor on `pairs` (feature row i of `features`, image row i of
    /// `images`): `features` is K × F and `images` K × P, row-major. Pairs with index ≡ 9
    /// (mod 10) are held out for early stopping. `seed` fixes the initialisation and the
    /// batch order; `threads` only the speed; `config.precision` the arithmetic (module
    /// docs). `on_epoch` sees each epoch's record (progress).
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
        let data = Pairs {
            features,
            images,
            k,
        };
        let (params, summary) = match config.precision {
            Precision::F32 => {
                let (p, sm) = fit::<f32>(config, &s, &data, seed, threads, on_epoch)?;
                (Params::F32(p), sm)
            }
            Precision::F64 => {
                let (p, sm) = fit::<f64>(config, &s, &data, seed, threads, on_epoch)?;
                (Params::F64(p), sm)
            }
        };
        Ok(Reconstructor {
            inputs,
            hidden: s.h,
            outputs,
            params,
            epochs_run: summary.0,
            best_epoch: summary.1,
            best_heldout_mse: summary.2,
        })
    }

    /// The reconstructions of the feature rows `rows` (indices into `features`), each P long,
    /// concatenated (computed in the reconstructor's precision, returned as `f64`).
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
        let s = self.shapes();
        match &self.params {
            Params::F32(p) => reconstruct(&s, p, features, rows, threads),
            Params::F64(p) => reconstruct(&s, p, features, rows, threads),
        }
    }

    fn shapes(&self) -> Shapes {
        Shapes {
            f: self.inputs,
            h: self.hidden,
            p: self.outputs,
        }
    }

    /// Epochs run, the epoch kept (best held-out MSE) and that MSE.
    pub fn training_summary(&self) -> (usize, usize, f64) {
        (self.epochs_run, self.best_epoch, self.best_heldout_mse)
    }

    /// Input width F.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The precision the reconstructor was trained in (and reconstructs in).
    pub fn precision(&self) -> Precision {
        match self.params {
            Params::F32(_) => Precision::F32,
            Params::F64(_) => Precision::F64,
        }
    }

    /// The parameters' bit patterns, widened to 64 bits (`f32` bits in the low half): W₁
    /// (F × H), b₁, W₂ (H × P), b₂. For reproducibility checks (`tests/golden_bits.rs`).
    pub fn parameter_bits(&self) -> Vec<u64> {
        match &self.params {
            Params::F32(p) => p.iter().map(|v| u64::from(v.to_bits())).collect(),
            Params::F64(p) => p.iter().map(|v| v.to_bits()).collect(),
        }
    }
}

/// The training pairs: K feature rows of width F, K images of width P.
struct Pairs<'a> {
    features: &'a [f64],
    images: &'a [f64],
    k: usize,
}

/// The training loop of [`Reconstructor::train`] in the arithmetic of `T` (inputs checked):
/// the kept parameters and (epochs run, epoch kept, its held-out MSE).
fn fit<T: Float>(
    config: &ReconstructorConfig,
    s: &Shapes,
    data: &Pairs<'_>,
    seed: u64,
    threads: usize,
    on_epoch: &mut dyn FnMut(&EpochRecord),
) -> Result<(Vec<T>, (usize, usize, f64))> {
    let (features, images, k) = (data.features, data.images, data.k);
    let mut rng = Rng::for_stream(seed, super::setting::STREAM_RECONSTRUCTOR, 0);
    let mut params = vec![T::ZERO; s.len()];
    let sd1 = libm::sqrt(2.0 / s.f as f64);
    for w in &mut params[s.w1()] {
        *w = T::of(sd1 * rng.gaussian());
    }
    let sd2 = libm::sqrt(1.0 / s.h as f64);
    for w in &mut params[s.w2()] {
        *w = T::of(sd2 * rng.gaussian());
    }
    let train_idx: Vec<usize> = (0..k).filter(|i| i % 10 != 9).collect();
    let held_idx: Vec<usize> = (0..k).filter(|i| i % 10 == 9).collect();
    let mut m1 = vec![T::ZERO; s.len()];
    let mut m2 = vec![T::ZERO; s.len()];
    let mut grad = vec![T::ZERO; s.len()];
    let bmax = config.batch_size;
    let mut work = Batch::<T>::new(bmax, s);
    let mut best = params.clone();
    let mut best_mse = f64::INFINITY;
    let mut best_epoch = 0;
    let mut since_best = 0;
    let mut t: i32 = 0;
    let mut epochs_run = 0;
    let lr = T::of(config.learning_rate);
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
                convert(
                    &mut work.x[r * s.f..(r + 1) * s.f],
                    &features[i * s.f..(i + 1) * s.f],
                );
                convert(
                    &mut work.z[r * s.p..(r + 1) * s.p],
                    &images[i * s.p..(i + 1) * s.p],
                );
            }
            let loss = batch_gradient(s, &params, &mut work, b, threads, &mut grad).to_f64();
            if !loss.is_finite() {
                return Err(Error::Numerical {
                    what: "the reconstructor's training loss is not finite",
                    value: loss,
                });
            }
            loss_sum += loss;
            batches += 1;
            t += 1;
            adam(threads, lr, t, &mut params, &grad, &mut m1, &mut m2);
        }
        epochs_run = epoch;
        let held_mse = mean_mse(s, &params, features, images, &held_idx, threads)?;
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
    Ok((best, (epochs_run, best_epoch, best_mse)))
}

/// Forward and backward of one batch of `b` rows in `work` (x, z filled); the gradient of
/// the batch's mean loss into `grad`; returns the loss.
fn batch_gradient<T: Float>(
    s: &Shapes,
    params: &[T],
    work: &mut Batch<T>,
    b: usize,
    threads: usize,
    grad: &mut [T],
) -> T {
    let (f, h, p) = (s.f, s.h, s.p);
    let w1 = &params[s.w1()];
    let b1 = &params[s.b1()];
    let w2 = &params[s.w2()];
    let b2 = &params[s.b2()];
    // Forward.
    matmul_threads(b, h, f, &work.x, w1, &mut work.h, threads);
    for row in work.h[..b * h].chunks_exact_mut(h) {
        for (v, &bb) in row.iter_mut().zip(b1) {
            *v = (*v + bb).relu();
        }
    }
    matmul_threads(b, p, h, &work.h, w2, &mut work.o, threads);
    let scale = T::ONE / T::of((b * p) as f64);
    let two = T::of(2.0);
    let mut loss = T::ZERO;
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
            let sign = if e > T::ZERO {
                T::ONE
            } else if e < T::ZERO {
                -T::ONE
            } else {
                T::ZERO
            };
            *d = (two * e + sign) * scale * y * (T::ONE - y);
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
    column_sums(&work.d2[..b * p], &mut grad[s.b2()]);
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
        *out = if hv > T::ZERO { *d } else { T::ZERO };
    }
    column_sums(&work.d1t[..b * h], &mut grad[s.b1()]);
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

/// A bias gradient: `out[j]` = Σ over the rows of `rows` (row-major, `out.len()` columns) of
/// their entry j, added row by row from +0.
fn column_sums<T: Float>(rows: &[T], out: &mut [T]) {
    out.fill(T::ZERO);
    for row in rows.chunks_exact(out.len().max(1)) {
        for (g, &d) in out.iter_mut().zip(row) {
            *g += d;
        }
    }
}

/// [`Reconstructor::reconstruct`] with the parameters `params` in the arithmetic of `T`.
fn reconstruct<T: Float>(
    s: &Shapes,
    params: &[T],
    features: &[f64],
    rows: &[usize],
    threads: usize,
) -> Result<Vec<f64>> {
    if features.len() % s.f != 0 || rows.iter().any(|&r| (r + 1) * s.f > features.len()) {
        return Err(Error::Inconsistent {
            what: "feature rows of the reconstructor's input width, row indices in range",
            value: features.len() as f64,
        });
    }
    let mut out = Vec::with_capacity(rows.len() * s.p);
    let block = 64;
    let mut x = vec![T::ZERO; block * s.f];
    let mut hbuf = vec![T::ZERO; block * s.h];
    let mut o = vec![T::ZERO; block * s.p];
    for chunk in rows.chunks(block) {
        let b = chunk.len();
        for (r, &i) in chunk.iter().enumerate() {
            convert(
                &mut x[r * s.f..(r + 1) * s.f],
                &features[i * s.f..(i + 1) * s.f],
            );
        }
        matmul_threads(b, s.h, s.f, &x, &params[s.w1()], &mut hbuf, threads);
        let b1 = &params[s.b1()];
        for row in hbuf[..b * s.h].chunks_exact_mut(s.h) {
            for (v, &bb) in row.iter_mut().zip(b1) {
                *v = (*v + bb).relu();
            }
        }
        matmul_threads(b, s.p, s.h, &hbuf, &params[s.w2()], &mut o, threads);
        let b2 = &params[s.b2()];
        for row in o[..b * s.p].chunks_exact(s.p) {
            out.extend(row.iter().zip(b2).map(|(&v, &bb)| sigmoid(v + bb).to_f64()));
        }
    }
    Ok(out)
}

/// Mean per-pixel MSE (in `f64`) of the reconstructions of `rows` against their images.
fn mean_mse<T: Float>(
    s: &Shapes,
    params: &[T],
    features: &[f64],
    images: &[f64],
    rows: &[usize],
    threads: usize,
) -> Result<f64> {
    if rows.is_empty() {
        return Ok(0.0);
    }
    let rec = reconstruct(s, params, features, rows, threads)?;
    let p = s.p;
    let mut total = 0.0;
    for (r, &i) in rows.iter().enumerate() {
        total += mse(&rec[r * p..(r + 1) * p], &images[i * p..(i + 1) * p]);
    }
    Ok(total / rows.len() as f64)
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
/// at step number `t` ≥ 1, every quantity in the arithmetic of `T` (the bias corrections
/// too, as optax computes them in the parameters' dtype).
fn adam<T: Float>(
    threads: usize,
    lr: T,
    t: i32,
    params: &mut [T],
    grad: &[T],
    m1: &mut [T],
    m2: &mut [T],
) {
    let b1 = T::of(0.9);
    let b2 = T::of(0.999);
    let eps = T::of(1e-8);
    let c1 = T::ONE - b1.pow(T::of(f64::from(t)));
    let c2 = T::ONE - b2.pow(T::of(f64::from(t)));
    let (d1, d2) = (T::ONE - b1, T::ONE - b2);
    let step = |p: &mut [T], g: &[T], a: &mut [T], v: &mut [T]| {
        for (((pv, &gv), av), vv) in p.iter_mut().zip(g).zip(a.iter_mut()).zip(v.iter_mut()) {
            *av = b1 * *av + d1 * gv;
            *vv = b2 * *vv + d2 * gv * gv;
            *pv -= lr * (*av / c1) / ((*vv / c2).sqrt() + eps);
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
        batch_gradient(s, params, &mut work, b, 1, &mut g)
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
            let loss = batch_gradient(&s, &params, &mut work, b, threads, &mut g);
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

    /// The f32 forward and backward compute the same function as the f64 ones: at parameters
    /// and inputs that are f32 values, loss and gradient agree to 1e-4 relative (f32 rounding
    /// over sums of at most 5 terms, an exp and a division: a few 1e-7 relative; a wrong
    /// conversion or a missing factor is off by far more).
    #[test]
    fn reconstructor_f32_gradient_matches_the_f64_gradient() {
        let s = Shapes { f: 5, h: 4, p: 3 };
        let b = 3;
        let mut rng = Rng::from_seed(11);
        let r32 = |v: f64| f64::from(v as f32);
        let params: Vec<f64> = (0..s.len()).map(|_| r32(0.7 * rng.gaussian())).collect();
        let x: Vec<f64> = (0..b * s.f).map(|_| r32(rng.gaussian())).collect();
        let z: Vec<f64> = (0..b * s.p).map(|_| r32(rng.uniform())).collect();
        let mut w64 = Batch::<f64>::new(b, &s);
        w64.x.copy_from_slice(&x);
        w64.z.copy_from_slice(&z);
        let mut g64 = vec![0.0; s.len()];
        let l64 = batch_gradient(&s, &params, &mut w64, b, 1, &mut g64);
        let p32: Vec<f32> = params.iter().map(|&v| v as f32).collect();
        let mut w32 = Batch::<f32>::new(b, &s);
        convert(&mut w32.x, &x);
        convert(&mut w32.z, &z);
        let mut g32 = vec![0.0_f32; s.len()];
        let l32 = batch_gradient(&s, &p32, &mut w32, b, 1, &mut g32);
        assert!(
            (f64::from(l32) - l64).abs() <= 1e-4 * l64.abs(),
            "{l32} {l64}"
        );
        for (i, (&u, &v)) in g32.iter().zip(&g64).enumerate() {
            assert!(
                (f64::from(u) - v).abs() <= 1e-4 * v.abs().max(1e-3),
                "parameter {i}: f32 {u} vs f64 {v}"
            );
        }
    }

    /// Adam in f32: the first step is −lr·sign(g) up to ε̂ (0.1·1e-8/|g|) and a few f32
    /// roundings near 1 (1e-6, about 8 ulps).
    #[test]
    fn adam_f32_first_step_is_lr_times_sign() {
        let g = [0.5_f32, -2.0, 1e-3];
        for threads in [1, 2] {
            let mut p = [1.0_f32; 3];
            let (mut m, mut v) = ([0.0_f32; 3], [0.0_f32; 3]);
            adam(threads, 0.1_f32, 1, &mut p, &g, &mut m, &mut v);
            for (pv, gv) in p.iter().zip(g) {
                let expect = 1.0 - 0.1 * gv.signum();
                assert!(
                    (pv - expect).abs() < 0.1 * 1e-8 / gv.abs() + 1e-6,
                    "{pv} {expect}"
                );
            }
        }
    }

    /// Kingma & Ba's first step moves every parameter by −lr·sign(g) (m̂ = g, v̂ = g²), up to
    /// ε̂ = 1e-8 relative to |g|.
    #[test]
    fn adam_first_step_is_lr_times_sign() {
        let g: [f64; 3] = [0.5, -2.0, 1e-3];
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
        for precision in [Precision::F64, Precision::F32] {
            let config = ReconstructorConfig {
                precision,
                ..config
            };
            let one =
                Reconstructor::train(&config, &features, f, &images, p, 3, 1, &mut |_| {}).unwrap();
            let two =
                Reconstructor::train(&config, &features, f, &images, p, 3, 2, &mut |_| {}).unwrap();
            assert_eq!(one, two);
            assert_eq!(one.precision(), precision);
            let (_, _, held) = one.training_summary();
            // Uniform pixels: the mean image's MSE is 1/12 ≈ 0.083.
            assert!(held < 0.02, "{precision:?}: held-out MSE {held}");
        }
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
