//! The [`Sequential`] model and its [`Workspace`].

use alloc::vec::Vec;
use core::ops::Range;

use super::kernels::{self, Geom};
use super::layer::{resolve, Layer, Node, Shape};
use super::loss::Loss;
use super::Weight;
use crate::autodiff::{Dual, Scalar};
use crate::error::{Error, Result};
use crate::rng::Rng;

#[path = "batch.rs"]
mod batch;
pub use batch::BatchWorkspace;
#[path = "fil_norms.rs"]
mod fil_norms;
pub use fil_norms::FilWorkspace;
#[path = "jvp_lanes.rs"]
mod jvp_lanes;
#[path = "param_jvp.rs"]
mod param_jvp;
pub use param_jvp::ParamJvpWorkspace;

/// A feed-forward network: layers applied in order to one example, followed by a loss on the
/// output (the logits). Shapes are inferred and checked when the model is built; parameters
/// are one flat slice (layout in the [module docs](crate::nn)); forward and backward passes run
/// one example at a time in a reusable [`Workspace`] and allocate nothing.
#[derive(Clone, Debug)]
pub struct Sequential {
    input: Shape,
    input_len: usize,
    nodes: Vec<Node>,
    loss: Loss,
    num_params: usize,
    /// Offsets of each layer's input in the activation buffer (length L + 1; the last entry
    /// is the offset of the logits), and the total length.
    act_offsets: Vec<usize>,
    acts_len: usize,
    /// The largest layer input or output.
    max_len: usize,
    /// The largest convolution scratch buffers ([`Geom::pad_len`], [`Geom::wide_len`]).
    pad_len: usize,
    wide_len: usize,
}

/// Reusable per-example buffers for a [`Sequential`] model with activations of type `S`:
/// every layer's input and output, two gradient buffers and the convolution scratch (the
/// unrolled input of a convolution, k²·C·ho·wo values, and its gradient, plus a padded copy of
/// the input and two copies of an output): O(Σ layer sizes · k²) values. A `Dual<N>`
/// workspace of a model with convolutions also holds the `f64` lane scratch of the JVP pass
/// ([`Sequential::loss_and_grad_jvp`]), which includes N copies of the largest convolution's
/// weights and one of all convolution parameters: O(Σ layer sizes · k² + N·p) in all. Make
/// one with [`Sequential::workspace`] and reuse it for every example (the hot path allocates
/// nothing).
#[derive(Clone, Debug)]
pub struct Workspace<S> {
    acts: Vec<S>,
    d0: Vec<S>,
    d1: Vec<S>,
    /// Convolution scratch: unrolled input (then a padded polyphase copy of the input), its
    /// gradient, the output gradient (duplicated or transposed).
    pad: Vec<S>,
    dpad: Vec<S>,
    wide: Vec<S>,
    /// `f64` scratch for the first layer of the JVP pass (its input has no tangents but the
    /// seeded ones, which are handled sparsely): output, unrolled input.
    y64: Vec<f64>,
    pad64: Vec<f64>,
    /// `f64` lane scratch of the struct-of-arrays convolutions in the JVP pass (empty for
    /// `f64` workspaces).
    lanes: jvp_lanes::LaneScratch,
}

fn inconsistent<T>(what: &'static str, value: usize) -> Result<T> {
    Err(Error::Inconsistent {
        what,
        value: value as f64,
    })
}

/// `true` if x is finite: x − x is 0 for finite x and NaN for ±∞ and NaN. Unlike
/// `is_finite` (integer bit tests), SSE2 evaluates this on two values per instruction.
#[inline(always)]
#[allow(clippy::eq_op)]
fn finite(x: f64) -> bool {
    x - x == 0.0
}

/// (every value finite, every tangent finite), in one branch-free sweep: v − v is 0 for
/// finite v and NaN otherwise, and NaN is sticky under addition, so a sum of such differences
/// is 0 iff every term is finite. Two sets of partial sums keep the additions independent.
fn dual_finite<const N: usize>(grad: &[Dual<N>]) -> (bool, bool) {
    let (mut v0, mut v1, mut t0, mut t1) = (0.0f64, 0.0f64, [0.0f64; N], [0.0f64; N]);
    let pairs = grad.chunks_exact(2);
    if let Some(g) = pairs.remainder().first() {
        v1 += nan_if_infinite(g.value);
        for (s, &x) in t1.iter_mut().zip(&g.tangent) {
            *s += nan_if_infinite(x);
        }
    }
    for pair in pairs {
        if let [a, b] = pair {
            v0 += nan_if_infinite(a.value);
            v1 += nan_if_infinite(b.value);
            for (s, &x) in t0.iter_mut().zip(&a.tangent) {
                *s += nan_if_infinite(x);
            }
            for (s, &x) in t1.iter_mut().zip(&b.tangent) {
                *s += nan_if_infinite(x);
            }
        }
    }
    (
        v0 + v1 == 0.0,
        t0.iter().zip(&t1).all(|(&a, &b)| a + b == 0.0),
    )
}

/// x − x: 0 for finite x, NaN for ±∞ and NaN.
#[inline(always)]
#[allow(clippy::eq_op)]
fn nan_if_infinite(x: f64) -> f64 {
    x - x
}

/// `true` if every value (`re()`) is finite.
fn all_finite<S: Scalar>(v: &[S]) -> bool {
    all_finite_by(v, |x| x.re())
}

/// `true` if `f(x)` is finite for every x in `v`. Fast path, one addition per value: the sum
/// of the values (in 8 interleaved partial sums, so SSE2 adds two at a time) is finite only if
/// every term is, since ±∞ and NaN propagate (∞ + finite = ∞, ∞ − ∞ = NaN). A finite sum
/// therefore certifies the vector; otherwise (a non-finite value, or an overflowing sum of
/// finite ones) the exact test decides.
#[inline(always)]
fn all_finite_by<T: Copy>(v: &[T], f: impl Fn(T) -> f64 + Copy) -> bool {
    finite(crate::autodiff::interleaved_sum(v, f))
        || v.chunks(64)
            .all(|c| c.iter().fold(true, |ok, &x| ok & finite(f(x))))
}

/// The first non-finite value, for the error message.
fn first_non_finite<S: Scalar>(v: &[S]) -> f64 {
    v.iter()
        .map(|x| x.re())
        .find(|x| !x.is_finite())
        .unwrap_or(f64::NAN)
}

impl Sequential {
    /// Builds the model `layers` on inputs of shape `input` with the loss `loss`, inferring
    /// and checking every layer's shape.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidCount`] `input` if the input shape is empty; `layers` if there are
    ///   none; `units`, `out_channels`, `kernel`, `stride` (0), `padding` (≥ kernel) of the
    ///   offending layer.
    /// - [`Error::Inconsistent`] if a kernel does not fit its (padded) input, sizes overflow,
    ///   or the output does not suit the loss (cross-entropy needs ≥ 2 logits, logistic
    ///   exactly 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::{Activation, Layer, Loss, Sequential, Shape};
    ///
    /// let layers = [
    ///     Layer::Conv2d { out_channels: 4, kernel: 3, stride: 1, padding: 1 },
    ///     Layer::Act(Activation::Tanh),
    ///     Layer::AvgPool2d { kernel: 2, stride: 2 },
    ///     Layer::Dense { units: 10 },
    /// ];
    /// let model = Sequential::new(Shape::new(1, 8, 8), &layers, Loss::SoftmaxCrossEntropy)?;
    /// assert_eq!(model.num_params(), (4 * 9 + 4) + (4 * 4 * 4 * 10 + 10));
    /// // A 5 × 5 kernel does not fit a 2 × 2 input without padding.
    /// let bad = [Layer::Conv2d { out_channels: 1, kernel: 5, stride: 1, padding: 0 }];
    /// assert!(Sequential::new(Shape::new(1, 2, 2), &bad, Loss::Logistic).is_err());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(input: Shape, layers: &[Layer], loss: Loss) -> Result<Self> {
        let input_len = match input.len() {
            Some(n) if n > 0 => n,
            _ => {
                return Err(Error::InvalidCount {
                    name: "input",
                    value: 0,
                    expected: "a shape with at least one element (and no overflow)",
                })
            }
        };
        if layers.is_empty() {
            return Err(Error::InvalidCount {
                name: "layers",
                value: 0,
                expected: ">= 1 layer",
            });
        }
        let mut nodes = Vec::with_capacity(layers.len());
        let mut act_offsets = Vec::with_capacity(layers.len() + 1);
        let (mut shape, mut offset, mut acts_len, mut max_len) = (input, 0usize, 0usize, input_len);
        let (mut pad_len, mut wide_len) = (0usize, 0usize);
        act_offsets.push(0);
        acts_len += input_len;
        for &layer in layers {
            let node = resolve(layer, shape, offset)?;
            offset = offset
                .checked_add(node.weights)
                .and_then(|o| o.checked_add(node.biases))
                .ok_or(Error::Inconsistent {
                    what: "parameter count overflows usize",
                    value: f64::INFINITY,
                })?;
            act_offsets.push(acts_len);
            acts_len = acts_len
                .checked_add(node.out_len)
                .ok_or(Error::Inconsistent {
                    what: "activation sizes overflow usize",
                    value: f64::INFINITY,
                })?;
            max_len = max_len.max(node.out_len);
            if let Layer::Conv2d { .. } = node.layer {
                let g = geom(&node);
                let (pad, wide) = g.checked_scratch().ok_or(Error::Inconsistent {
                    what: "Conv2d scratch sizes overflow usize",
                    value: f64::INFINITY,
                })?;
                pad_len = pad_len.max(pad);
                wide_len = wide_len.max(wide);
            }
            shape = node.output;
            nodes.push(node);
        }
        let out_len = nodes.last().map_or(0, |n| n.out_len);
        match loss {
            Loss::SoftmaxCrossEntropy if out_len < 2 => {
                return inconsistent(
                    "softmax cross-entropy needs at least 2 outputs (logits)",
                    out_len,
                )
            }
            Loss::Logistic if out_len != 1 => {
                return inconsistent("the logistic loss needs exactly 1 output (logit)", out_len)
            }
            _ => {}
        }
        Ok(Sequential {
            input,
            input_len,
            nodes,
            loss,
            num_params: offset,
            act_offsets,
            acts_len,
            max_len,
            pad_len,
            wide_len,
        })
    }

    /// The number of parameters p (length of the flat parameter vector).
    pub fn num_params(&self) -> usize {
        self.num_params
    }

    /// The input shape.
    pub fn input_shape(&self) -> Shape {
        self.input
    }

    /// The input length d = C·H·W.
    pub fn input_len(&self) -> usize {
        self.input_len
    }

    /// The number of outputs (logits).
    pub fn output_len(&self) -> usize {
        self.nodes.last().map_or(0, |n| n.out_len)
    }

    /// The number of classes labels range over (the number of logits for cross-entropy, 2 for
    /// the logistic loss).
    pub fn num_classes(&self) -> usize {
        self.loss.classes(self.output_len())
    }

    /// The loss.
    pub fn loss_kind(&self) -> Loss {
        self.loss
    }

    /// The number of layers.
    pub fn num_layers(&self) -> usize {
        self.nodes.len()
    }

    /// Layer `index` with its input and output shapes, or `None` if out of range.
    pub fn layer(&self, index: usize) -> Option<(Layer, Shape, Shape)> {
        self.nodes.get(index).map(|n| (n.layer, n.input, n.output))
    }

    /// The range of layer `index`'s parameters (weights, then biases) in the flat vector;
    /// empty for layers without parameters, `None` if `index` is out of range.
    pub fn param_range(&self, index: usize) -> Option<Range<usize>> {
        self.nodes
            .get(index)
            .map(|n| n.offset..n.offset + n.weights + n.biases)
    }

    /// Seeded LeCun-normal initialisation: every weight N(0, 1/fan_in) (fan_in = inputs of a
    /// dense unit, C·k² for a convolution), every bias 0, drawn layer by layer in layout order
    /// from [`Rng::from_seed`]`(seed)`. Same seed → bit-identical parameters.
    ///
    /// ```
    /// use reconbound::nn::{arch, Activation};
    /// let model = arch::mlp(4, &[3], 2, Activation::Tanh)?;
    /// let p = model.init_params(7);
    /// assert_eq!(p, model.init_params(7));
    /// assert_eq!(&p[12..15], &[0.0; 3]); // biases of the first layer
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn init_params(&self, seed: u64) -> Vec<f64> {
        let mut rng = Rng::from_seed(seed);
        let mut params = Vec::with_capacity(self.num_params);
        for n in &self.nodes {
            if n.weights == 0 && n.biases == 0 {
                continue;
            }
            let scale = 1.0 / libm::sqrt(n.fan_in.max(1) as f64);
            for _ in 0..n.weights {
                params.push(rng.gaussian() * scale);
            }
            params.resize(params.len() + n.biases, 0.0);
        }
        params
    }

    /// A workspace for activations of type `S` (`f64` for [`loss_and_grad`](Self::loss_and_grad),
    /// `Dual<N>` for [`loss_and_grad_jvp`](Self::loss_and_grad_jvp)). Allocates; reuse it.
    pub fn workspace<S: Scalar>(&self) -> Workspace<S> {
        let mut acts = Vec::new();
        acts.resize(self.acts_len, S::zero());
        let mut d0 = Vec::new();
        d0.resize(self.max_len, S::zero());
        let mut pad = Vec::new();
        pad.resize(self.pad_len, S::zero());
        let mut wide = Vec::new();
        wide.resize(self.wide_len, S::zero());
        let mut y64 = Vec::new();
        y64.resize(self.max_len, 0.0);
        let mut pad64 = Vec::new();
        pad64.resize(self.pad_len, 0.0);
        Workspace {
            acts,
            d1: d0.clone(),
            d0,
            dpad: pad.clone(),
            pad,
            wide,
            y64,
            pad64,
            lanes: jvp_lanes::LaneScratch::new(self, S::LANES),
        }
    }

    fn check_workspace<S>(&self, ws: &Workspace<S>) -> Result<()> {
        if ws.acts.len() != self.acts_len
            || ws.d0.len() != self.max_len
            || ws.d1.len() != self.max_len
            || ws.pad.len() != self.pad_len
            || ws.dpad.len() != self.pad_len
            || ws.wide.len() != self.wide_len
            || ws.y64.len() != self.max_len
            || ws.pad64.len() != self.pad_len
        {
            return inconsistent("ws was not made by this model's workspace()", ws.acts.len());
        }
        Ok(())
    }

    fn check_params<W: Weight<S>, S: Scalar>(&self, params: &[W]) -> Result<()> {
        if params.len() != self.num_params {
            return inconsistent("params.len() must equal num_params()", params.len());
        }
        if !all_finite_by(params, |w: W| w.value()) {
            let bad = params
                .iter()
                .map(|w| w.value())
                .find(|v| !v.is_finite())
                .unwrap_or(f64::NAN);
            return Err(Error::InvalidParameter {
                name: "params",
                value: bad,
                expected: "finite",
            });
        }
        Ok(())
    }

    fn check_x<S: Scalar>(&self, x: &[S]) -> Result<()> {
        if x.len() != self.input_len {
            return inconsistent("x.len() must equal input_len()", x.len());
        }
        if !all_finite(x) {
            return Err(Error::InvalidParameter {
                name: "x",
                value: first_non_finite(x),
                expected: "finite",
            });
        }
        Ok(())
    }

    fn check_label(&self, label: usize) -> Result<()> {
        if label >= self.num_classes() {
            return Err(Error::InvalidCount {
                name: "label",
                value: label as u64,
                expected: "< the number of classes (2 for the logistic loss)",
            });
        }
        Ok(())
    }

    /// The logits of input `x` (written into `ws`, which the result borrows).
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `params`, `x` or `ws` do not fit the model;
    /// [`Error::InvalidParameter`] `params` / `x` if a value is not finite;
    /// [`Error::Numerical`] if a logit is not finite.
    pub fn logits<'a>(
        &self,
        params: &[f64],
        x: &[f64],
        ws: &'a mut Workspace<f64>,
    ) -> Result<&'a [f64]> {
        self.check_params::<f64, f64>(params)?;
        self.check_x(x)?;
        self.check_workspace(ws)?;
        if let Some(input) = ws.acts.get_mut(..self.input_len) {
            input.copy_from_slice(x);
        }
        self.forward_unchecked(params, ws, 0);
        let start = self.act_offsets.last().copied().unwrap_or(0);
        let z = ws.acts.get(start..).unwrap_or(&[]);
        if !all_finite(z) {
            return Err(Error::Numerical {
                what: "non-finite logit",
                value: first_non_finite(z),
            });
        }
        Ok(z)
    }

    /// The predicted class: the index of the largest logit (the first on ties) for
    /// cross-entropy; 1 if the logit is > 0, else 0, for the logistic loss.
    ///
    /// # Errors
    ///
    /// As [`logits`](Self::logits).
    pub fn predict(&self, params: &[f64], x: &[f64], ws: &mut Workspace<f64>) -> Result<usize> {
        let loss = self.loss;
        let z = self.logits(params, x, ws)?;
        Ok(match loss {
            Loss::Logistic => usize::from(z.first().is_some_and(|&v| v > 0.0)),
            Loss::SoftmaxCrossEntropy => {
                let mut best = 0;
                let mut best_v = f64::NEG_INFINITY;
                for (k, &v) in z.iter().enumerate() {
                    if v > best_v {
                        best = k;
                        best_v = v;
                    }
                }
                best
            }
        })
    }

    /// The fraction of examples classified correctly: `xs` holds n inputs back to back
    /// (`xs.len() = n·input_len()`), `labels` their n labels.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if `xs.len() != labels.len()·input_len()` or `labels` is empty;
    /// [`Error::InvalidCount`] `label` for a label out of range; as [`logits`](Self::logits).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(2)?;
    /// let params = [1.0, -1.0, 0.0]; // w = (1, −1), b = 0
    /// let mut ws = model.workspace::<f64>();
    /// let acc = model.accuracy(&params, &[1.0, 0.0, 0.0, 1.0, 2.0, 1.0], &[1, 0, 0], &mut ws)?;
    /// assert_eq!(acc, 2.0 / 3.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn accuracy(
        &self,
        params: &[f64],
        xs: &[f64],
        labels: &[usize],
        ws: &mut Workspace<f64>,
    ) -> Result<f64> {
        if labels.is_empty() || labels.len().checked_mul(self.input_len) != Some(xs.len()) {
            return inconsistent(
                "xs.len() must equal labels.len() * input_len(), labels non-empty",
                xs.len(),
            );
        }
        let mut correct = 0usize;
        for (x, &y) in xs.chunks_exact(self.input_len).zip(labels) {
            self.check_label(y)?;
            if self.predict(params, x, ws)? == y {
                correct += 1;
            }
        }
        Ok(correct as f64 / labels.len() as f64)
    }

    /// The loss ℓ(w; x, label) alone.
    ///
    /// # Errors
    ///
    /// As [`loss_and_grad`](Self::loss_and_grad).
    pub fn loss(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        ws: &mut Workspace<f64>,
    ) -> Result<f64> {
        self.check_label(label)?;
        let loss = self.loss;
        self.logits(params, x, ws)?;
        let start = self.act_offsets.last().copied().unwrap_or(0);
        let (Some(z), Some(dz)) = (ws.acts.get(start..), ws.d0.get_mut(..self.output_len())) else {
            return inconsistent("ws was not made by this model's workspace()", ws.d0.len());
        };
        let l = loss.value_and_grad(z, label, dz);
        check_loss(l)
    }

    /// The per-example loss and its gradient ∇_w ℓ(w; x, label), written into `grad`
    /// (length p; overwritten, not accumulated).
    ///
    /// # Errors
    ///
    /// - [`Error::Inconsistent`] if `params`, `grad` (length p), `x` (length d) or `ws` do not
    ///   fit the model.
    /// - [`Error::InvalidParameter`] `params` / `x` if a value is not finite.
    /// - [`Error::InvalidCount`] `label` if it is not a valid class.
    /// - [`Error::Numerical`] if the loss or the gradient is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(2)?;
    /// let mut ws = model.workspace::<f64>();
    /// let mut grad = [0.0; 3];
    /// // w = 0: loss ln 2, gradient (σ(0) − 1)·(x, 1) = −(x, 1)/2.
    /// let loss = model.loss_and_grad(&[0.0; 3], &[2.0, 4.0], 1, &mut grad, &mut ws)?;
    /// assert!((loss - core::f64::consts::LN_2).abs() < 1e-15);
    /// assert_eq!(grad, [-1.0, -2.0, -0.5]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn loss_and_grad(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        grad: &mut [f64],
        ws: &mut Workspace<f64>,
    ) -> Result<f64> {
        self.check_params::<f64, f64>(params)?;
        self.check_x(x)?;
        self.check_label(label)?;
        self.check_workspace(ws)?;
        if grad.len() != self.num_params {
            return inconsistent("grad.len() must equal num_params()", grad.len());
        }
        if let Some(input) = ws.acts.get_mut(..self.input_len) {
            input.copy_from_slice(x);
        }
        let loss = self.run_unchecked(params, label, grad, None, ws);
        // A dense first layer's weight gradient (most of p for an MLP) is certified finite
        // from bounds (dense0_bounded; ws.d0 still holds its δ) and the rest is swept; if
        // that does not certify, the whole gradient is swept (same errors).
        let dy = ws.d0.get(..self.nodes.first().map_or(0, |n| n.out_len));
        if let Some(r) = dy.and_then(|dy| self.dense0_bounded(x, dy.iter().copied())) {
            let (head, tail) = grad.split_at(r.start.min(grad.len()));
            let tail = tail.get(r.len()..).unwrap_or_default();
            if finite(loss) && all_finite(head) && all_finite(tail) {
                return Ok(loss);
            }
        }
        check_output(loss, grad)
    }

    /// The per-example loss and gradient together with the gradient's derivatives along up to
    /// N input coordinates — N columns `∂(∇_w ℓ)/∂x_{coords[k]}` of the p × d Jacobian, in one
    /// forward-over-reverse pass with `Dual<N>` activations (parameters stay `f64`).
    ///
    /// `grad[j].value` = ∂ℓ/∂w_j (bit-identical to [`loss_and_grad`](Self::loss_and_grad)) and
    /// `grad[j].tangent[k]` = `∂²ℓ/∂x_{coords[k]}∂w_j`; lanes k ≥ `coords.len()` are 0. Memory
    /// O(p·N). Apply [`crate::train::clip::clip`] to `grad` to get the columns of ∂g̃/∂x for
    /// the clipped gradient g̃. Each lane is bit-identical to a `Dual<1>` run seeded with its
    /// coordinate alone. Coordinates may repeat.
    ///
    /// # Errors
    ///
    /// As [`loss_and_grad`](Self::loss_and_grad); [`Error::InvalidCount`] `coords` if there
    /// are more than N coordinates or one is ≥ d; [`Error::Numerical`] if a derivative is not
    /// finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::autodiff::Dual;
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(2)?;
    /// let mut ws = model.workspace::<Dual<2>>();
    /// let mut grad = [Dual::<2>::default(); 3];
    /// // w = 0, label 1: ∇_w ℓ = −(x₀, x₁, 1)/2, so ∂/∂x₀ = (−1/2, 0, 0), ∂/∂x₁ = (0, −1/2, 0)
    /// // plus the σ′ terms w_i·x/4, which vanish at w = 0.
    /// model.loss_and_grad_jvp(&[0.0; 3], &[2.0, 4.0], 1, &[0, 1], &mut grad, &mut ws)?;
    /// assert_eq!(grad[0].tangent, [-0.5, 0.0]);
    /// assert_eq!(grad[1].tangent, [0.0, -0.5]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn loss_and_grad_jvp<const N: usize>(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        grad: &mut [Dual<N>],
        ws: &mut Workspace<Dual<N>>,
    ) -> Result<f64> {
        self.check_params::<f64, Dual<N>>(params)?;
        self.check_x(x)?;
        self.check_label(label)?;
        self.check_workspace(ws)?;
        if grad.len() != self.num_params {
            return inconsistent("grad.len() must equal num_params()", grad.len());
        }
        if coords.len() > N {
            return Err(Error::InvalidCount {
                name: "coords",
                value: coords.len() as u64,
                expected: "at most N coordinates (the number of tangent lanes)",
            });
        }
        if let Some(&c) = coords.iter().find(|&&c| c >= self.input_len) {
            return Err(Error::InvalidCount {
                name: "coords",
                value: c as u64,
                expected: "< input_len() (a coordinate of x)",
            });
        }
        let loss = self.jvp_unchecked(params, x, label, coords, grad, ws);
        check_loss(loss.value)?;
        // Finiteness of values and tangents. The first layer's weight gradient of a dense first
        // layer is most of p; it is δ_o·x_i (plus δ_o's value in lane k of column c_k), so it is
        // certified from the bound |fl(δ·x_i)| ≤ fl(|δ|·max|x|) (rounding is monotone) and a
        // direct check of the seeded entries; everything else is swept. If the shortcut cannot
        // certify, the whole gradient is swept (same errors as without it).
        let skip = self.dense0_certified(x, coords, grad, ws);
        let (values_ok, tangents_ok) = match skip {
            Some(r) => {
                let (head, tail) = grad.split_at(r.start.min(grad.len()));
                let tail = tail.get(r.len()..).unwrap_or_default();
                let (a, b) = (dual_finite(head), dual_finite(tail));
                (a.0 && b.0, a.1 && b.1)
            }
            None => dual_finite(grad),
        };
        // The value error takes precedence, as in `check_output`.
        if !values_ok {
            return Err(Error::Numerical {
                what: "non-finite gradient",
                value: first_non_finite(grad),
            });
        }
        if !tangents_ok {
            let bad = grad
                .iter()
                .flat_map(|g| g.tangent.iter())
                .copied()
                .find(|t| !t.is_finite())
                .unwrap_or(f64::NAN);
            return Err(Error::Numerical {
                what: "non-finite derivative of the gradient",
                value: bad,
            });
        }
        Ok(loss.value)
    }

    /// The general forward and backward pass, generic over the parameter type `W` and the
    /// activation type `S`: returns the loss, writes ∇_w ℓ into `grad` and, if `input_grad`
    /// is given, ∇_x ℓ into it (the first layer's input gradient is computed only then). With
    /// `W = f64`, `S = Dual<N>` and `x` seeded with arbitrary tangents it gives derivatives of
    /// ∇_w ℓ along arbitrary input directions. With `W = S = Dual<N>` and parameters seeded this
    /// differentiates ∇_x ℓ with respect to parameters (d/dw of ∇_x ℓ); with `W = f64` and
    /// seeded inputs it is [`loss_and_grad_jvp`](Self::loss_and_grad_jvp).
    ///
    /// An empty `grad` skips the parameter gradient (the loss and `input_grad` are the same,
    /// bit for bit): the cheaper pass when only ∇_x ℓ or its tangents are wanted.
    ///
    /// # Errors
    ///
    /// As [`loss_and_grad`](Self::loss_and_grad) (`grad` must have length p or 0,
    /// `input_grad` length d); only values (`re()`) are checked for finiteness.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::autodiff::{Dual, Scalar};
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(1)?;
    /// // Seed w₀ in lane 0: d/dw₀ of ∂ℓ/∂x₀ at w = (0, 0), x = 3, label 0:
    /// // ∂ℓ/∂x = σ(w·x + b)·w, so d/dw₀ = σ(0) = 1/2.
    /// let params = [Dual::<1>::variable(0.0, 0)?, Dual::constant(0.0)];
    /// let x = [Dual::constant(3.0)];
    /// let mut grad = [Dual::default(); 2];
    /// let mut gx = [Dual::default(); 1];
    /// let mut ws = model.workspace::<Dual<1>>();
    /// model.forward_backward(&params, &x, 0, &mut grad, Some(&mut gx), &mut ws)?;
    /// assert_eq!(gx[0].tangent, [0.5]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn forward_backward<W: Weight<S>, S: Scalar + Weight<S>>(
        &self,
        params: &[W],
        x: &[S],
        label: usize,
        grad: &mut [S],
        input_grad: Option<&mut [S]>,
        ws: &mut Workspace<S>,
    ) -> Result<S> {
        self.check_params::<W, S>(params)?;
        self.check_x(x)?;
        self.check_label(label)?;
        self.check_workspace(ws)?;
        if !grad.is_empty() && grad.len() != self.num_params {
            return inconsistent("grad.len() must equal num_params() (or 0)", grad.len());
        }
        if let Some(g) = &input_grad {
            if g.len() != self.input_len {
                return inconsistent("input_grad.len() must equal input_len()", g.len());
            }
        }
        if let Some(input) = ws.acts.get_mut(..self.input_len) {
            input.copy_from_slice(x);
        }
        let loss = self.run_unchecked(params, label, grad, input_grad, ws);
        check_output(loss.re(), grad)?;
        Ok(loss)
    }

    /// With a dense first layer: the range of its weight gradient in the flat gradient if
    /// every entry is certified finite without reading it, else `None`. Entry (o, i) is the
    /// product fl(δ_o·x_i) (a value or a tangent lane of δ_o times the constant x_i), and with
    /// m = max|x_i|, |fl(δ·x_i)| ≤ fl(|δ|·m) since rounding is monotone: so it suffices that
    /// fl(|v|·m) is finite for every value and tangent v of δ (`deltas`, read from `ws.d0`
    /// by the caller).
    fn dense0_bounded(
        &self,
        x: &[f64],
        mut deltas: impl Iterator<Item = f64>,
    ) -> Option<Range<usize>> {
        let node0 = self.nodes.first()?;
        let Layer::Dense { .. } = node0.layer else {
            return None;
        };
        let m = x.iter().fold(0.0f64, |m, &v| m.max(libm::fabs(v)));
        (finite(m) && deltas.all(|v| finite(libm::fabs(v) * m)))
            .then_some(node0.offset..node0.offset + node0.weights)
    }

    /// [`dense0_bounded`](Self::dense0_bounded) after [`jvp_unchecked`](Self::jvp_unchecked):
    /// entry (o, i) of the first layer's weight gradient is δ_o·x_i (value and lanes:
    /// `Dual × f64`), plus δ_o's value in lane k when i = c_k; ws.d0 still holds δ. The seeded
    /// entries (a sum) are checked directly.
    fn dense0_certified<const N: usize>(
        &self,
        x: &[f64],
        coords: &[usize],
        grad: &[Dual<N>],
        ws: &Workspace<Dual<N>>,
    ) -> Option<Range<usize>> {
        let dy = ws.d0.get(..self.nodes.first()?.out_len)?;
        let range = self.dense0_bounded(
            x,
            dy.iter()
                .flat_map(|d| core::iter::once(d.value).chain(d.tangent.iter().copied())),
        )?;
        let gw = grad.get(range.clone())?;
        let (n, outs) = (self.input_len, dy.len());
        let seeded_ok = coords.iter().all(|&c| {
            (0..outs).all(|o| {
                gw.get(o * n + c)
                    .is_some_and(|g| finite(g.value) && g.tangent.iter().all(|&t| finite(t)))
            })
        });
        seeded_ok.then_some(range)
    }

    /// The JVP pass, validated inputs. When the first layer is dense or convolutional its input
    /// x is constant except for the seeded coordinates, so that layer runs in `f64` and the
    /// seeded tangents are added sparsely: forward, the tangent of output r in lane k is the
    /// one weight W[r, c_k] linking it to x_{c_k}; backward, ∇W = δ ⊗ x has tangent
    /// δ̇ ⊗ x + δ ⊗ ẋ, where ẋ is e_{c_k} in lane k. Mathematically the same as the generic
    /// pass (to which other first layers fall back); roughly halves the first layer's cost.
    /// Models with a convolution take [`jvp_lanes`](Self::jvp_lanes) instead (same first-layer
    /// handling, convolutions in struct-of-arrays form; `jvp_lanes.rs`).
    fn jvp_unchecked<const N: usize>(
        &self,
        params: &[f64],
        x: &[f64],
        label: usize,
        coords: &[usize],
        grad: &mut [Dual<N>],
        ws: &mut Workspace<Dual<N>>,
    ) -> Dual<N> {
        // With convolutions: the struct-of-arrays pass (jvp_lanes.rs).
        if let Some(loss) = self.jvp_lanes(params, x, label, coords, grad, ws) {
            return loss;
        }
        let nan = Dual::constant(f64::NAN);
        let Some(node0) = self.nodes.first() else {
            return nan;
        };
        if !matches!(node0.layer, Layer::Dense { .. } | Layer::Conv2d { .. }) {
            if let Some(input) = ws.acts.get_mut(..self.input_len) {
                for (d, &v) in input.iter_mut().zip(x) {
                    *d = Dual::constant(v);
                }
                for (lane, &c) in coords.iter().enumerate() {
                    if let Some(t) = input.get_mut(c).and_then(|d| d.tangent.get_mut(lane)) {
                        *t = 1.0;
                    }
                }
            }
            return self.run_unchecked(params, label, grad, None, ws);
        }
        if self.jvp_first_forward(params, x, coords, ws).is_none() {
            return nan;
        }
        let (w, _) = layer_params(node0, params);
        let (out0, g) = (node0.out_len, geom(node0));
        self.forward_unchecked(params, ws, 1);
        let loss = self.loss_and_backward(params, label, grad, None, ws, 1);
        let (Some(dy), Some(g0)) = (
            ws.d0.get(..out0),
            grad.get_mut(node0.offset..node0.offset + node0.weights + node0.biases),
        ) else {
            return nan;
        };
        let (gw, gb) = g0.split_at_mut(node0.weights);
        if let Layer::Dense { .. } = node0.layer {
            kernels::dense_backward(w, x, dy, gw, gb, None);
        } else if let (Some(pad), Some(wide)) = (
            ws.pad64.get_mut(..g.pad_len()),
            ws.wide.get_mut(..g.wide_len()),
        ) {
            kernels::conv_backward(&g, w, x, dy, gw, gb, None, pad, &mut [], wide);
        }
        seed_first_backward(node0, coords, dy, gw);
        loss
    }

    /// The first (dense or convolutional) layer of the JVP pass, forward: its output in `f64`
    /// (`ws.y64`, the same kernel as [`loss_and_grad`](Self::loss_and_grad)), copied into
    /// `ws.acts` as `Dual` constants, then in lane k the one weight W[r, c_k] linking output r
    /// to the seeded coordinate x_{c_k}. `None` if a buffer is missing.
    pub(super) fn jvp_first_forward<const N: usize>(
        &self,
        params: &[f64],
        x: &[f64],
        coords: &[usize],
        ws: &mut Workspace<Dual<N>>,
    ) -> Option<()> {
        let node0 = self.nodes.first()?;
        let (w, b) = layer_params(node0, params);
        let out0 = node0.out_len;
        let a1 = *self.act_offsets.get(1)?;
        let y64 = ws.y64.get_mut(..out0)?;
        match node0.layer {
            Layer::Dense { .. } => kernels::dense_forward(w, b, x, y64),
            Layer::Conv2d { .. } => {
                let g = geom(node0);
                kernels::conv_forward(&g, w, b, x, y64, ws.pad64.get_mut(..g.pad_len())?);
            }
            _ => return None,
        }
        let y = ws.acts.get_mut(a1..a1 + out0)?;
        for (d, &v) in y.iter_mut().zip(y64.iter()) {
            *d = Dual::constant(v);
        }
        for (lane, &c) in coords.iter().enumerate() {
            for_each_input_tap(node0, c, |r, j| {
                if let (Some(t), Some(&wv)) =
                    (y.get_mut(r).and_then(|d| d.tangent.get_mut(lane)), w.get(j))
                {
                    *t = wv;
                }
            });
        }
        Some(())
    }

    /// Forward pass on the input already in `ws.acts[..d]`.
    fn forward_unchecked<W: Weight<S>, S: Scalar>(
        &self,
        params: &[W],
        ws: &mut Workspace<S>,
        first: usize,
    ) {
        for (l, node) in self.nodes.iter().enumerate().skip(first) {
            let (Some(&start), Some(&mid)) = (self.act_offsets.get(l), self.act_offsets.get(l + 1))
            else {
                return;
            };
            let (head, tail) = ws.acts.split_at_mut(mid);
            let (Some(x), Some(y)) = (head.get(start..), tail.get_mut(..node.out_len)) else {
                return;
            };
            let (w, b) = layer_params(node, params);
            match node.layer {
                Layer::Dense { .. } => kernels::dense_forward(w, b, x, y),
                Layer::Conv2d { .. } => {
                    let g = geom(node);
                    if let Some(pad) = ws.pad.get_mut(..g.pad_len()) {
                        kernels::conv_forward(&g, w, b, x, y, pad);
                    }
                }
                Layer::AvgPool2d { .. } => kernels::pool_forward(&geom(node), x, y),
                Layer::Act(a) => a.forward(x, y),
            }
        }
    }

    /// Forward, loss and backward pass on the input already in `ws.acts[..d]`; inputs
    /// validated by the caller.
    fn run_unchecked<W: Weight<S>, S: Scalar + Weight<S>>(
        &self,
        params: &[W],
        label: usize,
        grad: &mut [S],
        input_grad: Option<&mut [S]>,
        ws: &mut Workspace<S>,
    ) -> S {
        self.forward_unchecked(params, ws, 0);
        self.loss_and_backward(params, label, grad, input_grad, ws, 0)
    }

    /// Loss on the logits in `ws` and backward pass through layers L−1 down to `stop`
    /// (inclusive); afterwards `ws.d0` holds the gradient with respect to layer `stop`'s
    /// output (or, with `stop = 0` and `input_grad`, the input gradient).
    fn loss_and_backward<W: Weight<S>, S: Scalar + Weight<S>>(
        &self,
        params: &[W],
        label: usize,
        grad: &mut [S],
        input_grad: Option<&mut [S]>,
        ws: &mut Workspace<S>,
        stop: usize,
    ) -> S {
        let start = self.act_offsets.last().copied().unwrap_or(0);
        let out_len = self.output_len();
        let (Some(z), Some(dz)) = (ws.acts.get(start..), ws.d0.get_mut(..out_len)) else {
            return S::cst(f64::NAN);
        };
        let loss = self.loss.value_and_grad(z, label, dz);
        let want_input_grad = input_grad.is_some();
        for (l, node) in self.nodes.iter().enumerate().skip(stop).rev() {
            let need_dx = l > 0 || want_input_grad;
            let (Some(&a0), Some(&a1)) = (self.act_offsets.get(l), self.act_offsets.get(l + 1))
            else {
                break;
            };
            let (Some(x), Some(y), Some(dy), Some(dx)) = (
                ws.acts.get(a0..a1),
                ws.acts.get(a1..a1 + node.out_len),
                ws.d0.get(..node.out_len),
                ws.d1.get_mut(..node.in_len),
            ) else {
                break;
            };
            let dx_opt = if need_dx { Some(dx) } else { None };
            let scratch = (&mut ws.pad[..], &mut ws.dpad[..], &mut ws.wide[..]);
            if !backward_node(node, params, x, y, dy, grad, dx_opt, scratch) {
                break;
            }
            if need_dx {
                core::mem::swap(&mut ws.d0, &mut ws.d1);
            }
        }
        if let (Some(g), Some(d)) = (input_grad, ws.d0.get(..self.input_len)) {
            g.copy_from_slice(d);
        }
        loss
    }
}

/// Calls `f(r, j)` for every output r of the dense or convolutional layer `node` that reads
/// input coordinate `c`, with j the index (within the layer's weights) of the weight linking
/// them — one per output (a convolution reads an input element through at most one tap per
/// output position).
fn for_each_input_tap(node: &Node, c: usize, mut f: impl FnMut(usize, usize)) {
    match node.layer {
        Layer::Dense { units } => {
            for o in 0..units {
                f(o, o * node.in_len + c);
            }
        }
        Layer::Conv2d { .. } => {
            let g = geom(node);
            let (plane, p, kk) = (g.h * g.w, g.ho * g.wo, g.c * g.k * g.k);
            if plane == 0 || g.w == 0 {
                return;
            }
            let (ci, h, w) = (c / plane, (c / g.w) % g.h, c % g.w);
            let (ir, jr) = (
                taps_reading(&g, h + g.p, g.ho),
                taps_reading(&g, w + g.p, g.wo),
            );
            for o in 0..g.o {
                for (a, i) in ir.clone() {
                    for (b, j) in jr.clone() {
                        f(o * p + i * g.wo + j, o * kk + (ci * g.k + a) * g.k + b);
                    }
                }
            }
        }
        _ => {}
    }
}

/// For padded coordinate t (row h + p or column w + p of the input): the pairs (kernel offset
/// a < k, output index i < n) with s·i + a = t, in increasing a — the taps of one axis that
/// read input row (or column) t − p.
fn taps_reading(
    g: &Geom,
    t: usize,
    n: usize,
) -> impl Iterator<Item = (usize, usize)> + Clone + use<> {
    let s = g.s.max(1);
    let lo = t.saturating_sub(s * n.saturating_sub(1));
    let a0 = lo + (t - lo) % s;
    let end = g.k.min(t + 1);
    (a0..end).step_by(s).map(move |a| (a, (t - a) / s))
}

/// The first layer of the JVP pass, backward: its input x is constant except for the seeded
/// coordinates, so ∇W = δ ⊗ x (computed by the caller with `f64` x) has the extra tangent
/// δ ⊗ ẋ — in lane k, δ_r's value added to the weight linking output r to x_{c_k}.
pub(super) fn seed_first_backward<const N: usize>(
    node0: &Node,
    coords: &[usize],
    dy: &[Dual<N>],
    gw: &mut [Dual<N>],
) {
    for (lane, &c) in coords.iter().enumerate() {
        for_each_input_tap(node0, c, |r, j| {
            if let (Some(t), Some(d)) = (
                gw.get_mut(j).and_then(|v| v.tangent.get_mut(lane)),
                dy.get(r),
            ) {
                *t += d.value;
            }
        });
    }
}

/// The weights and biases of `node` in `params` (empty for layers without parameters).
#[inline]
/// One layer's backward pass: its parameter gradient into `grad` (the model's flat gradient,
/// at the layer's offset) and, if `dx` is given, the gradient of its input. `scratch` is the
/// workspace's (pad, dpad, wide) buffers for convolutions. Shared by
/// [`Sequential::forward_backward`] and the FIL primal pass, so both run the same kernels in
/// the same order. `false` if the layer's slice of `grad` is missing.
#[allow(clippy::too_many_arguments)]
pub(super) fn backward_node<W: Weight<S>, S: Scalar + Weight<S>>(
    node: &Node,
    params: &[W],
    x: &[S],
    y: &[S],
    dy: &[S],
    grad: &mut [S],
    dx: Option<&mut [S]>,
    scratch: (&mut [S], &mut [S], &mut [S]),
) -> bool {
    match node.layer {
        Layer::Dense { .. } | Layer::Conv2d { .. } => {
            let (w, _) = layer_params(node, params);
            // An empty `grad`: no parameter gradient (the kernels skip empty gw, gb).
            let (gw, gb): (&mut [S], &mut [S]) = if grad.is_empty() {
                (&mut [], &mut [])
            } else {
                match grad.get_mut(node.offset..node.offset + node.weights + node.biases) {
                    Some(g) => g.split_at_mut(node.weights),
                    None => return false,
                }
            };
            if let Layer::Dense { .. } = node.layer {
                kernels::dense_backward(w, x, dy, gw, gb, dx);
            } else {
                let g = geom(node);
                let (pad, dpad, wide) = scratch;
                if let (Some(pad), Some(dpad), Some(wide)) = (
                    pad.get_mut(..g.pad_len()),
                    dpad.get_mut(..g.pad_len()),
                    wide.get_mut(..g.wide_len()),
                ) {
                    kernels::conv_backward(&g, w, x, dy, gw, gb, dx, pad, dpad, wide);
                }
            }
        }
        Layer::AvgPool2d { .. } => {
            if let Some(dx) = dx {
                kernels::pool_backward(&geom(node), dy, dx);
            }
        }
        Layer::Act(a) => {
            if let Some(dx) = dx {
                a.backward(x, y, dy, dx);
            }
        }
    }
    true
}

fn layer_params<'a, W>(node: &Node, params: &'a [W]) -> (&'a [W], &'a [W]) {
    let w_end = node.offset + node.weights;
    match (
        params.get(node.offset..w_end),
        params.get(w_end..w_end + node.biases),
    ) {
        (Some(w), Some(b)) => (w, b),
        _ => (&[], &[]),
    }
}

fn geom(node: &Node) -> Geom {
    let (k, s, p) = match node.layer {
        Layer::Conv2d {
            kernel,
            stride,
            padding,
            ..
        } => (kernel, stride, padding),
        Layer::AvgPool2d { kernel, stride } => (kernel, stride, 0),
        _ => (1, 1, 0),
    };
    Geom {
        c: node.input.channels,
        o: node.output.channels,
        h: node.input.height,
        w: node.input.width,
        ho: node.output.height,
        wo: node.output.width,
        k,
        s,
        p,
    }
}

fn check_loss(l: f64) -> Result<f64> {
    if l.is_finite() {
        Ok(l)
    } else {
        Err(Error::Numerical {
            what: "non-finite loss",
            value: l,
        })
    }
}

fn check_output<S: Scalar>(loss: f64, grad: &[S]) -> Result<f64> {
    check_loss(loss)?;
    if !all_finite(grad) {
        return Err(Error::Numerical {
            what: "non-finite gradient",
            value: first_non_finite(grad),
        });
    }
    Ok(loss)
}

#[cfg(test)]
mod finite_tests {
    use super::{all_finite, all_finite_by};
    use alloc::vec;

    #[test]
    fn finiteness_scan_is_exact_including_overflowing_sums() {
        // Exact booleans: the summing fast path may only certify, never decide "non-finite"
        // (a finite vector whose sum overflows must still pass, via the exact test).
        let huge = vec![f64::MAX; 37];
        assert!(all_finite(&huge));
        let mixed = [f64::MAX, -f64::MAX, f64::MAX, 1.0, -0.0];
        assert!(all_finite_by(&mixed, |x| x));
        for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            for at in [0, 5, 8, 20, 36] {
                let mut v = vec![1.5; 37];
                v[at] = bad;
                assert!(!all_finite(&v), "{bad} at {at}");
            }
        }
        // +∞ and −∞ in different partial sums meet as NaN; in the same one they give NaN too.
        let mut v = vec![0.0; 16];
        v[1] = f64::INFINITY;
        v[2] = f64::NEG_INFINITY;
        assert!(!all_finite(&v));
        assert!(all_finite::<f64>(&[]));
    }
}
