//! Small neural networks, generic over [`Scalar`]: layers, activations, losses, a
//! [`Sequential`] model with a hand-written backward pass, LeCun-normal initialisation and the
//! architectures of the papers.
//!
//! # Forward-over-reverse
//!
//! Forward and backward passes are written once, generically over the activation type
//! `S: Scalar`. With `S = f64` they give the per-example loss and gradient
//! ([`Sequential::loss_and_grad`]); with `S = Dual<N>` and input coordinates seeded with unit
//! tangents they also give N directional derivatives of the gradient along input coordinates,
//! i.e. N columns of J = ∂∇_w ℓ/∂x ([`Sequential::loss_and_grad_jvp`]) — the building block of
//! Fisher information leakage (Guo et al. 2022, Eq. 5), in O(p·N) memory, never a p × d matrix.
//! Clipping ([`crate::train::clip`]) runs in the same arithmetic, so the same pass gives the
//! columns of ∂g̃/∂x for the clipped gradient g̃.
//!
//! Parameters are a second type `W: Weight<S>`: `f64` in the fast path (a `Dual<N>` activation
//! times an `f64` weight costs N + 1 multiplies), or `S` itself when derivatives with respect to
//! parameters are wanted (e.g. d/dw of ∇_x ℓ, [`Sequential::forward_backward`]). Each layer
//! has one implementation serving both.
//!
//! # Layout
//!
//! - Tensors are channels-first `(C, H, W)`, row-major, flat: element `(c, h, w)` sits at
//!   `(c·H + h)·W + w`. A flat vector of length n is the shape `(n, 1, 1)`; a
//!   [`Layer::Dense`] after a convolution flattens in this order (as PyTorch's `flatten`).
//! - All parameters live in one flat `&[f64]`, layer after layer in model order; within a
//!   layer the weights come first, then the bias:
//!   - `Dense { units }` on n inputs: weight `(units, n)` row-major (`W[o·n + i]`), then
//!     `units` biases;
//!   - `Conv2d` with `C` input and `O` output channels, kernel `k`: weight `(O, C, k, k)`
//!     (`W[((o·C + c)·k + i)·k + j]`), then `O` biases;
//!   - pooling and activations have no parameters.
//!
//!   This is PyTorch's `state_dict` order and layout, so parameters can be exchanged as is.
//!   [`Sequential::param_range`] gives each layer's slice.
//!
//! # Performance
//!
//! One example per call, no allocation after [`Sequential::workspace`]. Dense layers are dot
//! products with 8 interleaved accumulators (fixed order, so results are deterministic and
//! identical for every scalar type); convolutions are small matrix products on an unrolled
//! (im2col) copy of the input, register-blocked (4 × 4 `f64` accumulators, 4 × 8 when the
//! build targets AVX), each entry summed in a fixed order. [`Sequential::loss_and_grad_jvp`]
//! runs a dense or convolutional first layer in `f64` and adds the seeded tangents sparsely;
//! on models with convolutions it computes each convolution's values with the `f64` kernels
//! and its tangent lanes as `f64` products, summing a lane's input tangent only inside the box
//! its pixel reaches (struct-of-arrays form, `jvp_lanes.rs`). Figures: `benches/nn.rs` (criterion;
//! the measured medians are in the closing note of the issue that introduced them).
//!
//! For models of dense layers and activations, the DP-SGD inner loop — the sum of a batch's
//! clipped per-example gradients — has a batched form, [`Sequential::clipped_grad_sum`]
//! ("ghost clipping": per-example norms from each layer's input and output gradient, the
//! clipped sum as one product per layer; no per-example gradient, allocation-free with a
//! [`BatchWorkspace`]); its forward and backward passes are the per-example bits.
//!
//! The code is portable Rust (no `unsafe`, no intrinsics); wider vectors come from the target
//! the crate is compiled for. This repository's own builds use `-C target-cpu=native` without
//! AVX-512 (`.cargo/config.toml`); a crate that depends on reconbound chooses its own target.
//! Results are the same bits for every x86-64 CPU level (and any target with IEEE binary64
//! arithmetic, i.e. not x87): blocking changes which entries are computed together, never an
//! entry's summation order, and Rust never fuses a·b + c into an FMA (`tests/golden_bits.rs`,
//! which `.ci/run` also runs on a baseline x86-64 build).
//!
//! # Smoothness
//!
//! Tanh, ELU (α = 1) and GELU (exact, x·Φ(x)) are smooth enough for the FIL machinery (ELU is
//! C¹ with a jump in its second derivative at 0). **ReLU is not differentiable at 0 and its
//! second derivative is 0 almost everywhere: the Fisher information through a ReLU network is
//! undefined (or degenerate), so do not use it for FIL accounting**; it is provided for
//! training and attacks only.
//!
//! # Examples
//!
//! ```
//! use reconbound::nn::{arch, Activation};
//!
//! let model = arch::mlp(784, &[10], 10, Activation::Elu)?;
//! assert_eq!(model.num_params(), 7_960);
//! let params = model.init_params(1);
//! let mut ws = model.workspace::<f64>();
//! let mut grad = vec![0.0; model.num_params()];
//! let x = vec![0.5; 784];
//! let loss = model.loss_and_grad(&params, &x, 3, &mut grad, &mut ws)?;
//! assert!(loss > 0.0);
//! # Ok::<(), reconbound::Error>(())
//! ```

use crate::autodiff::{Dual, Scalar};

// Without `alloc` there is no model to run the kernels; keep them compiled (and checked).
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
mod activation;
#[allow(dead_code)]
pub(crate) mod gemm;
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
mod kernels;
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
mod layer;
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
mod loss;

#[cfg(feature = "alloc")]
pub mod arch;
#[cfg(feature = "alloc")]
mod model;
#[cfg(all(test, feature = "alloc"))]
mod tests;

pub use activation::Activation;
pub use layer::{Layer, Shape};
pub use loss::Loss;
#[cfg(feature = "alloc")]
pub use model::{BatchWorkspace, FilWorkspace, ParamJvpWorkspace, Sequential, Workspace};

/// A parameter type that can multiply an activation of type `S`: `f64` (parameters are
/// constants, the fast path) or `S` itself (parameters carry tangents, e.g. to differentiate
/// with respect to weights). Layers are written once over `(W, S)`.
///
/// `w.times(s)` has the same value as `s.re() * w.re()` bit for bit in both cases.
///
/// ```
/// use reconbound::autodiff::{Dual, Scalar};
/// use reconbound::nn::Weight;
/// let s = Dual::new(2.0, [1.0]);
/// assert_eq!(Weight::<Dual<1>>::times(3.0, s).tangent, [3.0]);
/// assert_eq!(Dual::new(3.0, [1.0]).times(s).tangent, [5.0]);
/// ```
pub trait Weight<S: Scalar>: Copy {
    /// The product `self · s`.
    fn times(self, s: S) -> S;
    /// `acc + self · s` with the value rounded once ([`Scalar::mul_add`]); the tangent is
    /// that of `acc + self.times(s)`.
    fn times_add(self, s: S, acc: S) -> S;
    /// The parameter as an activation value (for biases).
    fn to_scalar(self) -> S;
    /// The value of the parameter.
    fn value(self) -> f64;
}

impl<S: Scalar> Weight<S> for f64 {
    #[inline(always)]
    fn times(self, s: S) -> S {
        s * self
    }
    #[inline(always)]
    fn times_add(self, s: S, acc: S) -> S {
        s.mul_add_cst(self, acc)
    }
    #[inline(always)]
    fn to_scalar(self) -> S {
        S::cst(self)
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
}

impl<const N: usize> Weight<Dual<N>> for Dual<N> {
    #[inline(always)]
    fn times(self, s: Dual<N>) -> Dual<N> {
        s * self
    }
    #[inline(always)]
    fn times_add(self, s: Dual<N>, acc: Dual<N>) -> Dual<N> {
        Scalar::mul_add(s, self, acc)
    }
    #[inline(always)]
    fn to_scalar(self) -> Dual<N> {
        self
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self.value
    }
}

/// The dense `f64` and `f32` products of the crate's internal `gemm` module, exposed for the
/// benchmarks only (not a stable API): row-major C = A·B, Aᵀ·B, A·Bᵀ (see the module docs
/// of `nn::gemm` for the canonical order). Slices shorter than their shape leave C unchanged.
#[doc(hidden)]
pub mod bench_gemm {
    /// C (m × n) = A (m × kd)·B (kd × n) on up to `threads` threads.
    pub fn matmul(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
        threads: usize,
    ) {
        super::gemm::matmul_threads(m, n, kd, a, b, c, threads);
    }
    /// C (m × n) = Aᵀ·B, A stored kd × m, on up to `threads` threads.
    pub fn matmul_tn(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
        threads: usize,
    ) {
        super::gemm::matmul_tn_threads(m, n, kd, a, b, c, threads);
    }
    /// C (m × n) = A·Bᵀ, B stored n × kd, on up to `threads` threads.
    pub fn matmul_nt(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
        threads: usize,
    ) {
        super::gemm::matmul_nt_threads(m, n, kd, a, b, c, threads);
    }
    /// [`matmul`] in `f32` (the same canonical order, in `f32` fmas; issue 32).
    pub fn matmul_f32(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        threads: usize,
    ) {
        super::gemm::matmul_threads(m, n, kd, a, b, c, threads);
    }
    /// [`matmul_tn`] in `f32`.
    pub fn matmul_tn_f32(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        threads: usize,
    ) {
        super::gemm::matmul_tn_threads(m, n, kd, a, b, c, threads);
    }
    /// [`matmul_nt`] in `f32`.
    pub fn matmul_nt_f32(
        m: usize,
        n: usize,
        kd: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        threads: usize,
    ) {
        super::gemm::matmul_nt_threads(m, n, kd, a, b, c, threads);
    }
}
