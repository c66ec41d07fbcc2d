//! The clipped-gradient sum of a whole batch for networks of dense layers and element-wise
//! activations, without per-example gradients ("ghost clipping"):
//! [`Sequential::clipped_grad_sum`] and its [`BatchWorkspace`].
//!
//! # Method
//!
//! A dense layer's per-example weight gradient is the outer product δ_i a_iᵀ of its output
//! gradient δ_i and its input a_i, and its bias gradient is δ_i. Hence (Goodfellow 2015;
//! Li et al. 2022; Bu et al. 2023)
//!
//! - ‖g_i‖² = Σ_layers (‖a_i‖²‖δ_i‖² + ‖δ_i‖²): per-example norms from O(Σ layer sizes)
//!   numbers, never the p-vector g_i;
//! - Σ_i c_i g_i is, per layer, the bias sum Σ_i c_i δ_i and the weight sum
//!   Σ_i (c_i δ_i) a_iᵀ = Eᵀ A with E = diag(c) Δ: one matrix product over the batch.
//!
//! Examples go through in blocks of [`BATCH_BLOCK`] = 32 (a cache size: a block of 784-pixel
//! inputs is 200 kB): the forward pass of a block as matrix products (every entry summed as in
//! the per-example pass), the losses, the backward pass to every layer's δ, the per-example
//! norms and clipping factors, then the block's contribution to the sums (register-blocked
//! products whose accumulators start from the running sums).
//!
//! Summation orders and the bits of the result: [`Sequential::clipped_grad_sum`].
//!
//! # Zero inputs (why skipping them changes no bit)
//!
//! Images are mostly background: 80 % of the embedded MNIST pixels are 0. A data set keeps
//! each example's support — its nonzero quads (features 4q..4q + 4 with a nonzero one; 56 of
//! 196 for an average digit) with their features, the even quads (lanes 0–3 of the 8-way dot
//! products, feature j in lane j mod 8) before the odd ones (lanes 4–7), and ‖x‖² computed
//! once as [`interleaved_sum`] computes it — built with the data set (none for data with more
//! than half its features or three quarters of its quads nonzero: `data::support`). The
//! first dense layer's sums over its input x then visit only those quads, four lanes at a
//! time: the forward dot products and the weight sum Σ_i e_i x_iᵀ, under a third of the work,
//! and ‖x‖² is read, not summed. They give exactly the bits of the dense loops, because a
//! skipped term is a no-op, the zero features inside a visited quad are the dense loop's own
//! operations (and the padding past the last feature, weight 0 times feature 0, a no-op like
//! a skipped term), and the kept terms of each accumulator come in the same order (a lane
//! group's quads in increasing order):
//!
//! - **Unfused sums** (the weight sum; ‖x‖²): s ← fl(s + t) with t = fl(u·v) a double. The sum
//!   of two doubles is exactly 0 only as x + (−x), which rounds to +0, and is never a nonzero
//!   value below 2⁻¹⁰⁷⁴ (both are multiples of 2⁻¹⁰⁷⁴), so an accumulator that starts at +0 is
//!   never −0. A skipped term is t = e·(±0) = ±0 (e finite: checked per example), and
//!   fl(s ± 0) = s for every s ≠ −0.
//! - **The fused forward chain** a_r ← fma(w, x, a_r): fma rounds the exact w·x + a_r once, and
//!   a nonzero exact value of magnitude at most 2⁻¹⁰⁷⁵ rounds to a signed zero, −0 for a negative one, after
//!   which fma(w, 0, −0) = +0 for w > 0 is not a no-op. If every nonzero |w| and |x| is at
//!   least 2⁻⁴⁸⁵ ([`MIN_SKIP`]), every product w·x is a multiple of 2⁻¹⁰⁷⁴, so is every exact
//!   w·x + a_r, and the chain (from +0) is never −0: skipping is exact. The guard is checked
//!   per call on the weights and per data set on the features (digits scaled by 1/255 pass
//!   it); where it fails the forward pass takes the dense loop (the test
//!   `ghost_sum_skips_no_zero_feature_where_an_fma_can_underflow_to_minus_zero` builds such a
//!   case and shows that skipping there would turn a +0 into −0).
//!
//! Skipping is thus not part of the definition of the result (the bits are those of the dense
//! loops, on every build, with or without a support); it only saves time. The weights are
//! rearranged once per call into quads (a feature quad's 4-lane weights for every unit
//! contiguous); the forward pass advances one lane group's `units` chains at a time in
//! registers, for 10 units the even quads of a whole block and then the odd ones (half the
//! weights in use at a time); the weight sum accumulates into quads of the same layout,
//! rearranged back once at the end of the call. A quad's features are read from the support,
//! contiguous, not from the example's scattered cache lines.
//!
//! When a block is a whole block of the data set's block index (examples 32b..32b + 32 in
//! order: the full batch of the shadow models), the 10-unit weight sum goes quad by quad
//! instead of example by example (`block_add_outer`): each quad's accumulators are read once,
//! advance in registers over the block's examples with that quad nonzero, in increasing
//! order, and are written once. Each accumulator gets the same terms in the same order, so
//! the bits are the same; example by example every term was a load and a store of its
//! accumulator, and the stores were the bottleneck (shadow model 47.6 → 41.9 ms on the Zen 5
//! of issue 32). The softmax's exponentials and the ELU's expm1 of a block go through
//! `math::exp_lanes`, libm's bits in vector lanes.

use super::{
    all_finite, check_loss, finite, first_non_finite, inconsistent, kernels, layer_params, Layer,
    Node, Sequential,
};
use crate::autodiff::{interleaved_sum, tree4, tree8};
use crate::data::{quads_of, BlockSupport, Dataset, ExampleSupport, Quad, Support, BLOCK};
use crate::error::{check_positive, Error, Result};
use crate::math::sqrt;
use crate::nn::gemm::fma;
use crate::train::clip::clip_factor;
use crate::train::dpsgd::Clipping;
use alloc::vec::Vec;

/// Examples per block of [`Sequential::clipped_grad_sum`]: a cache size only (a block of
/// 784-pixel inputs, 200 kB, stays in L2 between the forward pass and the weight sums); the
/// result does not depend on it (every sum runs in batch order across blocks).
pub(crate) const BATCH_BLOCK: usize = 32;

// The data sets' block index is by blocks of this size (`block_add_outer`).
const _: () = assert!(BATCH_BLOCK == BLOCK);

/// 2⁻⁴⁸⁵: where every nonzero weight and feature of the first dense layer is at least this in
/// magnitude, its forward chains may skip zero features without changing a bit (module docs,
/// "Zero inputs").
const MIN_SKIP: f64 = f64::from_bits((1023 - 485) << 52);

/// A weight that passes the guard of the skipping forward chains: 0, or finite and at least
/// [`MIN_SKIP`] in magnitude (on the bits of |w|: 0, or in [bits(2⁻⁴⁸⁵), bits(+∞))).
#[inline(always)]
fn skippable(w: f64) -> bool {
    let a = w.to_bits() & !(1 << 63);
    a == 0 || (a >= MIN_SKIP.to_bits() && a < f64::INFINITY.to_bits())
}

/// How a call treats the first dense layer's zero features (module docs, "Zero inputs").
#[derive(Clone, Copy, Debug)]
struct Sparse {
    /// The forward chains skip them too (the guard holds): the weights in quads in `ws.wt`.
    forward: bool,
}

/// Reusable buffers of [`Sequential::clipped_grad_sum`] for one model: every layer's output
/// and output gradient for a block of 32 examples, 64·Σ layer sizes `f64`s, and when the
/// first layer is dense (n inputs, u units) its weights and weight sum in quads and the
/// lanes of its skipping forward pass, 8·⌈n/4⌉·u + 8·u `f64`s (module docs, "Zero inputs"); all
/// independent of the batch size. Make it with [`Sequential::batch_workspace`] and reuse
/// it (the calls allocate nothing).
#[derive(Clone, Debug)]
pub struct BatchWorkspace {
    /// Each layer's output length (to check that the workspace fits the model).
    lens: Vec<usize>,
    /// Offsets of each layer's block in `outs` and `douts` (length L + 1).
    offsets: Vec<usize>,
    /// Layer outputs of a block, layer l's in `outs[offsets[l]..offsets[l + 1]]`,
    /// example-major (BATCH_BLOCK × out_len).
    outs: Vec<f64>,
    /// Loss gradients with respect to the layer outputs, same layout; a dense layer's δ_i is
    /// scaled in place to c_i·δ_i once its example's clipping factor is known.
    douts: Vec<f64>,
    /// The first layer's weights in quads (⌈inputs/4⌉ × units quads of 4 features: `to_quads`),
    /// when the first layer is dense (empty otherwise): the sparse forward pass reads a
    /// feature quad's weights for every unit at once.
    wt: Vec<Quad>,
    /// The first layer's weight sum in quads, same condition and layout: the sparse weight
    /// sum adds a feature quad's terms for every unit at once.
    gt: Vec<Quad>,
    /// The two lane groups (lanes 0–3, 4–7) of the sparse forward chains, `units` quads each.
    lanes: Vec<[f64; 4]>,
}

/// Rows of a block: one slice per example.
type Rows<'a> = [&'a [f64]; BATCH_BLOCK];

impl Sequential {
    /// A workspace for [`clipped_grad_sum`](Self::clipped_grad_sum), or `None` if the model has
    /// a layer other than [`Layer::Dense`] and [`Layer::Act`] (convolutions and pooling: use
    /// [`loss_and_grad`](Self::loss_and_grad) and [`clip`](crate::train::clip::clip) per
    /// example) or its buffers would overflow `usize`. Allocates 64·Σ layer sizes `f64`s
    /// (blocks of 32 examples) and 8·⌈n/4⌉·u + 8·u for a dense first layer of n inputs and u
    /// units (the skipping of zero features); reuse it.
    ///
    /// ```
    /// use reconbound::nn::{arch, Activation};
    /// assert!(arch::mlp(784, &[10], 10, Activation::Elu)?.batch_workspace().is_some());
    /// assert!(arch::mnist_tanh_convnet()?.batch_workspace().is_none());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn batch_workspace(&self) -> Option<BatchWorkspace> {
        let mut offsets = Vec::with_capacity(self.nodes.len() + 1);
        let mut total = 0usize;
        for n in &self.nodes {
            if !matches!(n.layer, Layer::Dense { .. } | Layer::Act(_)) {
                return None;
            }
            offsets.push(total);
            total = total.checked_add(n.out_len.checked_mul(BATCH_BLOCK)?)?;
        }
        offsets.push(total);
        let (n, units) = match self.nodes.first() {
            Some(node) if matches!(node.layer, Layer::Dense { .. }) => (node.in_len, node.out_len),
            _ => (0, 0),
        };
        let t = quads_of(n).checked_mul(units)?;
        // More bytes than an allocation can hold: `None`, not a capacity-overflow panic.
        let limit = isize::MAX as usize;
        if t > limit / 32 || units > limit / 64 || total > limit / 8 {
            return None;
        }
        Some(BatchWorkspace {
            lens: self.nodes.iter().map(|n| n.out_len).collect(),
            offsets,
            outs: alloc::vec![0.0; total],
            douts: alloc::vec![0.0; total],
            wt: alloc::vec![Quad::default(); t],
            gt: alloc::vec![Quad::default(); t],
            lanes: alloc::vec![[0.0; 4]; units.checked_mul(2)?],
        })
    }

    /// The sum of the clipped per-example gradients of a batch, Σ_i clip(∇_w ℓ(w; x_i, y_i)),
    /// written into `sum` (length p, overwritten); returns the sum of the per-example losses.
    /// The examples are `data.example(i)` for i in `batch`, in that order (repeats allowed);
    /// `clipping` is the method and norm C, or `None` for the plain gradient sum. For models of
    /// dense layers and element-wise activations (see [`batch_workspace`](Self::batch_workspace)).
    ///
    /// The same quantity as [`loss_and_grad`](Self::loss_and_grad), then
    /// [`clip`](crate::train::clip::clip), then `sum += g̃_i` per example — the DP-SGD loop —
    /// without forming any per-example gradient ("ghost clipping"); the same bits when no
    /// gradient is scaled (no clipping, or hard clipping inactive on every example), else equal
    /// up to rounding (below).
    ///
    /// # Summation order and bits
    ///
    /// - Forward, losses, backward (every logit, loss and δ_i) are **bit-identical** to
    ///   [`loss_and_grad`](Self::loss_and_grad): a dense output is the same 8-way interleaved
    ///   dot product plus the bias (computed for 2 examples × 2 units at a time), activations
    ///   and losses are the same functions, a dense input gradient the same loop. So is the
    ///   returned loss sum, added from 0 in batch order.
    /// - ‖g_i‖² = (…((0 + t_1) + t_2) + …) over the dense layers in model order, with
    ///   t_l = fl(fl(‖a‖²·‖δ‖²) + ‖δ‖²), each squared norm summed as
    ///   [`l2_norm`](crate::autodiff::l2_norm) sums (8 interleaved partial sums); ‖g_i‖ is its
    ///   square root and c_i the clipping factor of [`clip`](crate::train::clip::clip) at ‖g_i‖
    ///   (the crate's one clipping definition). `clip` sums the p squares fl(δ_o·a_k)² instead,
    ///   so ‖g_i‖ and hence c_i differ from the per-example path by rounding (measured ≲ 1e-15
    ///   relative). If that sum is unreliable (an overflowing ‖a‖², a subnormal ‖δ‖²) the norm
    ///   is recomputed with exact power-of-two scaling and `hypot`.
    /// - e_i = fl(c_i·δ_i) (δ_i itself when c_i = 1, as `clip` leaves g_i); bias entry o of the
    ///   sum is (…((0 + e_{1,o}) + e_{2,o}) + …) and weight entry (o, k) is
    ///   (…((0 + e_{1,o}·a_{1,k}) + e_{2,o}·a_{2,k}) + …), examples in batch order. The
    ///   per-example path adds fl(fl(δ_{i,o}·a_{i,k})·c_i) in the same order: the same bits
    ///   when every c_i is 1, else each term differs by a few ulps (2 roundings, plus that of
    ///   c_i), so an entry differs by ≲ 4ε·Σ_i |g̃_{i,j}| (measured on MNIST: ≤ 1.5e-15 of
    ///   Σ_i |g̃_{i,j}|, ≤ 3.6e-16 normwise).
    /// - Blocks (32 examples) and register blocks change which entries are computed together,
    ///   never an entry's order, so the result is a pure function of the inputs: the same bits
    ///   for every batch split and on every x86-64 level (Rust never fuses a·b + c).
    ///
    /// Cost: per example about 2·(forward MACs) for the products plus O(Σ layer sizes), against
    /// the per-example path's forward, backward, norm, scaling and accumulation over all p
    /// parameters. Memory: the workspace only ([`batch_workspace`](Self::batch_workspace)),
    /// nothing allocated per call.
    ///
    /// # Formula
    ///
    /// Per dense layer with input a_i and output gradient δ_i of example i (backward pass):
    /// ‖g_i‖² = Σ_layers (‖a_i‖²‖δ_i‖² + ‖δ_i‖²), c_i = the clipping factor of
    /// [`clip`](crate::train::clip::clip) at ‖g_i‖ (min(1, C/‖g_i‖) for hard clipping,
    /// 1/(GELU(‖g_i‖/C − 1) + 1) for GELU clipping, 1 without clipping), and
    /// Σ_i g̃_i = (Σ_i c_i δ_i, Σ_i (c_i δ_i) a_iᵀ) per layer (bias, weights `(units, n)`).
    ///
    /// # Citations
    ///
    /// Goodfellow 2015, "Efficient per-example gradient computations" (per-example norms of
    /// dense layers); Li, Tramèr, Liang, Hashimoto 2022, "Large language models can be strong
    /// differentially private learners", Sec. 4 (ghost clipping); Bu, Wang, Zha, Karypis
    /// 2023, "Differentially private optimization on large model at small cost" (book-keeping:
    /// the clipped sum as one product with the stored δ). DP-SGD step: Abadi et al. 2016.
    ///
    /// # Errors
    ///
    /// Validation first, before any computation:
    /// - [`Error::Inconsistent`] if `params` or `sum` is not of length p, `ws` was not made
    ///   for this model's layers, or `data.dim()` differs from [`input_len`](Self::input_len);
    /// - [`Error::InvalidParameter`] `params` if a parameter is not finite; `clip_norm` unless
    ///   C is finite and > 0;
    /// - [`Error::InvalidCount`] `index` for an index ≥ `data.len()`, `label` for an
    ///   example whose label is not a class of the model.
    ///
    /// Then per example, in batch order, as the per-example path reports them:
    /// [`Error::Numerical`] for a non-finite loss, a non-finite gradient entry (exactly when
    /// `loss_and_grad` finds one), and with clipping a gradient norm whose square is not
    /// finite (as [`clip`](crate::train::clip::clip); at the threshold ‖g‖ ≈ 1.34e154 the two
    /// norms may round to different sides). On an error `sum` holds a partial sum (the first
    /// layer's weight entries may still be 0 when its zero features are skipped: module docs).
    /// The sum itself is not checked for overflow (as the per-example loop does not).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::data::embedded_mnist;
    /// use reconbound::nn::{arch, Activation};
    /// use reconbound::train::clip::{clip, ClipMethod};
    /// use reconbound::train::dpsgd::Clipping;
    ///
    /// let data = embedded_mnist()?.flatten();
    /// let model = arch::mlp(784, &[10], 10, Activation::Elu)?;
    /// let params = model.init_params(1);
    /// let clipping = Clipping { method: ClipMethod::Gelu, norm: 0.5 };
    /// let batch: Vec<usize> = (0..100).collect();
    /// let mut ws = model.batch_workspace().expect("dense layers only");
    /// let mut sum = vec![0.0; model.num_params()];
    /// let loss = model.clipped_grad_sum(&params, &data, &batch, Some(clipping), &mut sum, &mut ws)?;
    ///
    /// // The same as clipping and adding per-example gradients, up to rounding.
    /// let (mut reference, mut reference_loss) = (vec![0.0; sum.len()], 0.0);
    /// let (mut pws, mut g) = (model.workspace::<f64>(), vec![0.0; sum.len()]);
    /// for &i in &batch {
    ///     let (x, y) = data.example(i)?;
    ///     reference_loss += model.loss_and_grad(&params, x, y as usize, &mut g, &mut pws)?;
    ///     clip(&mut g, ClipMethod::Gelu, 0.5)?;
    ///     reference.iter_mut().zip(&g).for_each(|(s, v)| *s += v);
    /// }
    /// assert_eq!(loss, reference_loss); // the losses are the same bits
    /// let scale = reconbound::autodiff::l2_norm(&reference);
    /// assert!(sum.iter().zip(&reference).all(|(a, b)| (a - b).abs() <= 1e-13 * scale));
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn clipped_grad_sum(
        &self,
        params: &[f64],
        data: &Dataset,
        batch: &[usize],
        clipping: Option<Clipping>,
        sum: &mut [f64],
        ws: &mut BatchWorkspace,
    ) -> Result<f64> {
        self.clipped_grad_sum_in_blocks(params, data, batch, clipping, sum, ws, BATCH_BLOCK)
    }

    /// [`clipped_grad_sum`](Self::clipped_grad_sum) with blocks of `block` ≤ [`BATCH_BLOCK`]
    /// examples (the tests check that the block size does not change a bit).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn clipped_grad_sum_in_blocks(
        &self,
        params: &[f64],
        data: &Dataset,
        batch: &[usize],
        clipping: Option<Clipping>,
        sum: &mut [f64],
        ws: &mut BatchWorkspace,
        block: usize,
    ) -> Result<f64> {
        self.check_params::<f64, f64>(params)?;
        if sum.len() != self.num_params {
            return inconsistent("sum.len() must equal num_params()", sum.len());
        }
        if ws.lens.len() != self.nodes.len()
            || ws
                .lens
                .iter()
                .zip(&self.nodes)
                .any(|(&l, n)| l != n.out_len)
            || ws.offsets.last() != Some(&ws.outs.len())
            || ws.douts.len() != ws.outs.len()
            || ws.wt.len() != ws.gt.len()
        {
            return inconsistent(
                "ws was not made by this model's batch_workspace()",
                ws.lens.len(),
            );
        }
        if data.dim() != self.input_len {
            return inconsistent("data.dim() must equal input_len()", data.dim());
        }
        if let Some(c) = clipping {
            check_positive("clip_norm", c.norm)?;
        }
        for &i in batch {
            let (_, y) = data.example(i)?;
            self.check_label(y as usize)?;
        }
        sum.fill(0.0);
        let mut loss_sum = 0.0;
        let sparse = self.sparse_mode(params, data, ws);
        for chunk in batch.chunks(block.clamp(1, BATCH_BLOCK)) {
            let losses = self.block_forward_backward(params, data, chunk, ws, sparse);
            loss_sum =
                self.block_clip_and_add(data, chunk, &losses, clipping, sum, ws, loss_sum, sparse)?;
        }
        if sparse.is_some() {
            // The first layer's weight sum, from quads back to units × inputs.
            if let Some(node) = self.nodes.first() {
                let gw = sum.get_mut(node.offset..node.offset + node.weights);
                from_quads(&ws.gt, node.out_len, gw.unwrap_or_default());
            }
        }
        Ok(loss_sum)
    }

    /// Whether this call skips the first dense layer's zero features (the data set has a
    /// support and the first layer is dense) and whether its forward chains may too (the
    /// guard of the module docs holds for the weights and the features); prepares the
    /// weights in quads and zeroes the weight sum in quads.
    fn sparse_mode(
        &self,
        params: &[f64],
        data: &Dataset,
        ws: &mut BatchWorkspace,
    ) -> Option<Sparse> {
        let node = self.nodes.first()?;
        // Only a first layer that is dense reads the features (a workspace of another
        // model can match this one's sizes: module docs of `example_norm2`'s ‖x‖²).
        if !matches!(node.layer, Layer::Dense { .. })
            || ws.wt.is_empty()
            || ws.wt.len() != quads_of(node.in_len) * node.out_len
            || ws.lanes.len() != 2 * node.out_len
        {
            return None;
        }
        let min_x = data.support().min_nonzero()?;
        let (w, _) = layer_params(node, params);
        let forward = min_x >= MIN_SKIP && w.iter().all(|&v| skippable(v));
        if forward {
            to_quads(w, node.out_len, &mut ws.wt);
        }
        ws.gt.fill(Quad::default());
        Some(Sparse { forward })
    }

    /// The inputs of a block (validated indices): features and labels.
    fn block_inputs<'a>(
        &self,
        data: &'a Dataset,
        chunk: &[usize],
    ) -> (Rows<'a>, [usize; BATCH_BLOCK]) {
        let (d, feats, labels) = (self.input_len, data.features(), data.labels());
        let mut xs: Rows<'a> = [&[]; BATCH_BLOCK];
        let mut ys = [0usize; BATCH_BLOCK];
        for ((x, y), &i) in xs.iter_mut().zip(ys.iter_mut()).zip(chunk) {
            *x = feats.get(i * d..(i + 1) * d).unwrap_or_default();
            *y = labels.get(i).map_or(0, |&l| l as usize);
        }
        (xs, ys)
    }

    /// Forward pass, losses and backward pass of a block (validated inputs): every layer's
    /// output into `ws.outs`, every layer's output gradient into `ws.douts` (the first layer's
    /// input gradient is not computed). Returns the losses, not yet checked.
    fn block_forward_backward(
        &self,
        params: &[f64],
        data: &Dataset,
        chunk: &[usize],
        ws: &mut BatchWorkspace,
        sparse: Option<Sparse>,
    ) -> [f64; BATCH_BLOCK] {
        let mut losses = [f64::NAN; BATCH_BLOCK];
        let (xs, ys) = self.block_inputs(data, chunk);
        let bn = chunk.len().min(BATCH_BLOCK);
        let off = &ws.offsets;
        for (l, node) in self.nodes.iter().enumerate() {
            let Some(&o) = off.get(l) else {
                return losses;
            };
            let o = o.min(ws.outs.len());
            let (head, tail) = ws.outs.split_at_mut(o);
            let Some(y) = tail.get_mut(..bn * node.out_len) else {
                return losses;
            };
            let ins = input_rows(l, node, &xs, head, off, bn);
            let ins = ins.get(..bn).unwrap_or_default();
            match node.layer {
                Layer::Dense { .. } => {
                    let (w, b) = layer_params(node, params);
                    if l == 0 && sparse.is_some_and(|s| s.forward) {
                        let support = data.support();
                        sparse_forward_rows(&ws.wt, (w, b), support, chunk, ins, &mut ws.lanes, y);
                    } else {
                        dense_forward_rows(w, b, node.in_len, ins, y);
                    }
                }
                Layer::Act(a) => {
                    // Element-wise: the whole block at once (the previous layer's outputs,
                    // contiguous) gives the per-example bits.
                    let start = l.checked_sub(1).and_then(|p| off.get(p)).copied();
                    match start.and_then(|s| head.get(s..s + bn * node.in_len)) {
                        Some(x) => a.forward_f64(x, y),
                        None => {
                            for (x, y) in ins.iter().zip(y.chunks_exact_mut(node.out_len)) {
                                a.forward_f64(x, y);
                            }
                        }
                    }
                }
                _ => return losses,
            }
        }
        let k = self.output_len();
        let Some(&o_last) = off.get(self.nodes.len().saturating_sub(1)) else {
            return losses;
        };
        if let (Some(z), Some(dz)) = (
            ws.outs.get(o_last..o_last + bn * k),
            ws.douts.get_mut(o_last..o_last + bn * k),
        ) {
            let (ys, ls) = (ys.get(..bn), losses.get_mut(..bn));
            if let (Some(ys), Some(ls)) = (ys, ls) {
                self.loss.block_value_and_grad(z, k, ys, dz, ls);
            }
        }
        for (l, node) in self.nodes.iter().enumerate().skip(1).rev() {
            let (Some(&o_in), Some(&o_out)) = (off.get(l - 1), off.get(l)) else {
                break;
            };
            let split = o_out.min(ws.douts.len());
            let (dhead, dtail) = ws.douts.split_at_mut(split);
            let (Some(dy), Some(dx)) = (
                dtail.get(..bn * node.out_len),
                dhead.get_mut(o_in..o_in + bn * node.in_len),
            ) else {
                break;
            };
            match node.layer {
                Layer::Dense { .. } => {
                    let (w, _) = layer_params(node, params);
                    for (dy, dx) in dy
                        .chunks_exact(node.out_len)
                        .zip(dx.chunks_exact_mut(node.in_len))
                    {
                        input_grad(w, node.in_len, dy, dx);
                    }
                }
                Layer::Act(a) => {
                    // Element-wise: the whole block at once gives the per-example bits.
                    if let (Some(x), Some(y)) = (
                        ws.outs.get(o_in..o_in + bn * node.in_len),
                        ws.outs.get(o_out..o_out + bn * node.out_len),
                    ) {
                        a.backward(x, y, dy, dx);
                    }
                }
                _ => break,
            }
        }
        losses
    }

    /// Per example of a block, in batch order: the checks of the per-example path (loss,
    /// gradient, norm), the clipping factor c and δ ← c·δ for every dense layer; then the
    /// block's bias and weight sums. Returns the updated loss sum.
    #[allow(clippy::too_many_arguments)]
    fn block_clip_and_add(
        &self,
        data: &Dataset,
        chunk: &[usize],
        losses: &[f64; BATCH_BLOCK],
        clipping: Option<Clipping>,
        sum: &mut [f64],
        ws: &mut BatchWorkspace,
        mut loss_sum: f64,
        sparse: Option<Sparse>,
    ) -> Result<f64> {
        let (xs, _) = self.block_inputs(data, chunk);
        let bn = chunk.len().min(BATCH_BLOCK);
        let support =
            |i: usize| sparse.and_then(|_| data.support().example(chunk.get(i).copied()?));
        for (i, &loss) in losses.iter().enumerate().take(bn) {
            check_loss(loss)?;
            let norm2 = self.example_norm2(&xs, ws, i, support(i))?;
            let factor = match clipping {
                None => 1.0,
                Some(c) => {
                    let norm = match norm2 {
                        Some(n2) => sqrt(n2),
                        None => self.careful_norm(&xs, ws, i),
                    };
                    if !finite(norm * norm) {
                        return Err(Error::Numerical {
                            what: "the gradient norm is not finite",
                            value: norm * norm,
                        });
                    }
                    clip_factor(norm, c.method, c.norm)
                }
            };
            if factor != 1.0 {
                for (l, node) in self.dense_layers() {
                    let o = ws.offsets.get(l).copied().unwrap_or(0) + i * node.out_len;
                    if let Some(d) = ws.douts.get_mut(o..o + node.out_len) {
                        for v in d.iter_mut() {
                            *v *= factor;
                        }
                    }
                }
            }
            loss_sum += loss;
        }
        for (l, node) in self.dense_layers() {
            let Some(&o) = ws.offsets.get(l) else {
                continue;
            };
            let ins = input_rows(l, node, &xs, &ws.outs, &ws.offsets, bn);
            let (Some(e), Some(g)) = (
                ws.douts.get(o..o + bn * node.out_len),
                sum.get_mut(node.offset..node.offset + node.weights + node.biases),
            ) else {
                continue;
            };
            let (gw, gb) = g.split_at_mut(node.weights);
            for e_i in e.chunks_exact(node.out_len) {
                for (s, &v) in gb.iter_mut().zip(e_i) {
                    *s += v;
                }
            }
            if l == 0 && sparse.is_some() {
                if let (Some(e10), Some(runs)) = (
                    e.get(..bn * 10)
                        .filter(|e| node.out_len == 10 && all_finite(e)),
                    whole_block(data.support(), chunk),
                ) {
                    block_add_outer(&mut ws.gt, e10, runs);
                    continue;
                }
                for (i, (x, e_i)) in ins.iter().zip(e.chunks_exact(node.out_len)).enumerate() {
                    sparse_add_outer(&mut ws.gt, x, e_i, support(i).map(|s| s.all()));
                }
                continue;
            }
            add_outer(
                gw,
                node.in_len,
                e,
                node.out_len,
                ins.get(..bn).unwrap_or_default(),
            );
        }
        Ok(loss_sum)
    }

    /// The dense layers with their indices.
    fn dense_layers(&self) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.layer, Layer::Dense { .. }))
    }

    /// Example `i` of the block: (input a, output gradient δ) of every dense layer.
    fn example_pairs<'a>(
        &'a self,
        xs: &'a Rows<'a>,
        ws: &'a BatchWorkspace,
        i: usize,
    ) -> impl Iterator<Item = (&'a [f64], &'a [f64])> + 'a {
        self.dense_layers().map(move |(l, node)| {
            let a = match l.checked_sub(1).and_then(|p| ws.offsets.get(p)) {
                None => xs.get(i).copied().unwrap_or_default(),
                Some(&o) => {
                    let o = o + i * node.in_len;
                    ws.outs.get(o..o + node.in_len).unwrap_or_default()
                }
            };
            let o = ws.offsets.get(l).copied().unwrap_or(0) + i * node.out_len;
            (a, ws.douts.get(o..o + node.out_len).unwrap_or_default())
        })
    }

    /// ‖g_i‖² = Σ_layers (‖a‖²‖δ‖² + ‖δ‖²) of example `i` (module docs for the order), after
    /// checking that every entry of g_i is finite; `Ok(None)` if that sum is not reliable (an
    /// overflowing or non-finite term, or a ‖δ‖² below the normal range), in which case the
    /// finiteness was checked exactly and [`careful_norm`](Self::careful_norm) gives the norm.
    ///
    /// Fast certificate: if fl(‖a‖²·‖δ‖²) is finite, so are a, δ and every δ_o·a_k (its
    /// square is at most ‖a‖²‖δ‖² ≲ 1.8e308). Exact test otherwise: a and δ finite and
    /// fl(max|δ|·max|a|) finite, which holds iff every fl(δ_o·a_k) is (rounding is
    /// monotone and the maximum is one of the products).
    /// With `support` (the example's support, when the first layer is dense), the first
    /// layer's ‖x‖² is the one the data set computed with it: the same bits.
    fn example_norm2(
        &self,
        xs: &Rows<'_>,
        ws: &BatchWorkspace,
        i: usize,
        support: Option<ExampleSupport<'_>>,
    ) -> Result<Option<f64>> {
        let mut n2 = 0.0;
        let mut reliable = true;
        for (j, (a, d)) in self.example_pairs(xs, ws, i).enumerate() {
            let sa = match support {
                Some(nz) if j == 0 => nz.sq_norm,
                _ => sq_sum(a),
            };
            let sd = sq_sum(d);
            let prod = sa * sd;
            reliable &= finite(prod) && sd >= f64::MIN_POSITIVE;
            n2 += prod + sd;
        }
        if reliable && finite(n2) {
            return Ok(Some(n2));
        }
        for (a, d) in self.example_pairs(xs, ws, i) {
            if !all_finite(d) {
                return Err(non_finite_gradient(first_non_finite(d)));
            }
            if !all_finite(a) {
                return Err(non_finite_gradient(first_non_finite(a)));
            }
            let bound = max_abs(a) * max_abs(d);
            if !finite(bound) {
                return Err(non_finite_gradient(bound));
            }
        }
        Ok(None)
    }

    /// ‖g_i‖ of example `i` without overflow or underflow in the intermediate steps (finite
    /// gradient entries): per layer t = ‖δ‖·hypot(‖a‖, 1) from power-of-two-scaled norms,
    /// combined by hypot. For the rare examples [`example_norm2`](Self::example_norm2) cannot
    /// certify; agrees with the fast formula to a few ulps per layer where both are exact.
    fn careful_norm(&self, xs: &Rows<'_>, ws: &BatchWorkspace, i: usize) -> f64 {
        let mut norm = 0.0;
        for (a, d) in self.example_pairs(xs, ws, i) {
            let nd = scaled_l2(d);
            if nd == 0.0 {
                continue;
            }
            norm = libm::hypot(norm, nd * libm::hypot(scaled_l2(a), 1.0));
        }
        norm
    }
}

/// Σ v_k² as [`interleaved_sum`] sums it, the 10-entry case (a 10-unit layer: the MLPs of
/// the attacks) compiled for its length: the general loop's masked tail goes through memory
/// and stalled the per-example norms.
#[inline(always)]
fn sq_sum(v: &[f64]) -> f64 {
    match v.first_chunk::<10>() {
        Some(c) if v.len() == 10 => interleaved_sum(c, |x: f64| x * x),
        _ => interleaved_sum(v, |x: f64| x * x),
    }
}

/// `kernels::dense_input_grad(w, n, dy, dx)` (δx_i the fma chain over o from 0), the
/// 10-input case (the MLPs' 10 → 10 layer) with the chains in registers: the general loop
/// keeps δx in memory and waits on a store and a load per unit.
#[inline(always)]
fn input_grad(w: &[f64], n: usize, dy: &[f64], dx: &mut [f64]) {
    if let (10, Some(dx10)) = (n, dx.first_chunk_mut::<10>()) {
        let mut acc = [0.0f64; 10];
        for (row, &d) in w.chunks_exact(10).zip(dy) {
            for (a, &wv) in acc.iter_mut().zip(row) {
                *a = fma(d, wv, *a);
            }
        }
        *dx10 = acc;
        return;
    }
    kernels::dense_input_grad(w, n, dy, dx);
}

fn non_finite_gradient(value: f64) -> Error {
    Error::Numerical {
        what: "non-finite gradient",
        value,
    }
}

/// max_k |v_k| of finite values (0 for an empty slice).
fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, &x| m.max(libm::fabs(x)))
}

/// ‖v‖₂ of finite values, scaled by an exact power of two so that no square overflows or
/// underflows (up to entries 2⁻¹⁰²² times smaller than the largest).
fn scaled_l2(v: &[f64]) -> f64 {
    let m = max_abs(v);
    if m == 0.0 || !finite(m) {
        return m;
    }
    let e = libm::ilogb(m);
    // v·2^−e in two exact steps (a single factor 2^−e would overflow for subnormal m).
    let (s1, s2) = (libm::scalbn(1.0, -(e / 2)), libm::scalbn(1.0, e / 2 - e));
    let sq = interleaved_sum(v, |x: f64| {
        let y = x * s1 * s2;
        y * y
    });
    libm::scalbn(libm::sqrt(sq), e)
}

/// `kernels::dense_forward(w, b, x, y)` bit for bit for 10 units, with `wt` = W transposed
/// (inputs × 10): lane r of every output is the fma chain over the inputs j ≡ r mod 8 in
/// increasing order from +0, ten outputs at a time, then the tree and the bias.
#[inline(always)]
fn short_forward(wt: &[f64], b: &[f64; 10], x: &[f64], y: &mut [f64; 10]) {
    let mut lanes = [[0.0f64; 10]; 8];
    for (j, (&xv, w)) in x.iter().zip(wt.chunks_exact(10)).enumerate() {
        if let Some(acc) = lanes.get_mut(j % 8) {
            for (a, &wv) in acc.iter_mut().zip(w) {
                *a = fma(wv, xv, *a);
            }
        }
    }
    let [l0, l1, l2, l3, l4, l5, l6, l7] = &lanes;
    for (o, (yo, &bo)) in y.iter_mut().zip(b).enumerate() {
        let v = |l: &[f64; 10]| l.get(o).copied().unwrap_or(0.0);
        *yo = tree8([v(l0), v(l1), v(l2), v(l3), v(l4), v(l5), v(l6), v(l7)]) + bo;
    }
}

/// `w` (`rows` × n, row-major) transposed into `t` (n × `rows`).
fn transpose(w: &[f64], rows: usize, t: &mut [f64]) {
    let n = w.len().checked_div(rows).unwrap_or(0);
    if n == 0 {
        return;
    }
    for (r, row) in w.chunks_exact(n).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if let Some(slot) = t.get_mut(j * rows + r) {
                *slot = v;
            }
        }
    }
}

/// `w` (`units` × `dim`, row-major) in quads (`wq`, ⌈dim/4⌉ × `units` quads): quad
/// q·units + o holds W[o, 4q..4q + 4], zeros past `dim`. A feature quad's weights for every
/// unit are contiguous.
fn to_quads(w: &[f64], units: usize, wq: &mut [Quad]) {
    let dim = w.len().checked_div(units).unwrap_or(0);
    if dim == 0 {
        return;
    }
    for (o, row) in w.chunks_exact(dim).enumerate() {
        for (q, c) in row.chunks(4).enumerate() {
            if let Some(slot) = wq.get_mut(q * units + o) {
                *slot = Quad::padded(c);
            }
        }
    }
}

/// The inverse of [`to_quads`]: `gw` (`units` × `dim`) from its quads `gq` (the padding
/// past `dim` dropped).
fn from_quads(gq: &[Quad], units: usize, gw: &mut [f64]) {
    let dim = gw.len().checked_div(units).unwrap_or(0);
    if dim == 0 {
        return;
    }
    for (o, row) in gw.chunks_exact_mut(dim).enumerate() {
        for (q, c) in row.chunks_mut(4).enumerate() {
            if let Some(slot) = gq.get(q * units + o) {
                match c.first_chunk_mut::<4>() {
                    Some(d) => *d = slot.0,
                    None => c.iter_mut().zip(&slot.0).for_each(|(d, &v)| *d = v),
                }
            }
        }
    }
}

/// Features 4q..4q + 4 of `x`, zeros past its end (`None` past the last quad).
#[inline(always)]
fn quad_of(x: &[f64], q: usize) -> Option<[f64; 4]> {
    let rest = x.get(4 * q..).filter(|r| !r.is_empty())?;
    Some(Quad::padded(rest).0)
}

/// acc_o ← fma(w_o, x, acc_o) for the weight quads `w` of one feature quad `x`, lane by
/// lane.
#[inline(always)]
fn quad_madd(acc: &mut [[f64; 4]], w: &[Quad], x: &Quad) {
    for (a, wo) in acc.iter_mut().zip(w) {
        for ((s, &wv), &xv) in a.iter_mut().zip(&wo.0).zip(&x.0) {
            *s = fma(wv, xv, *s);
        }
    }
}

/// y_o = tree8(lanes 0–3 of `lo[o]`, lanes 4–7 of `hi[o]`) + b_o: the end of
/// `kernels::dense_forward`.
#[inline(always)]
fn finish_quads(lo: &[[f64; 4]], hi: &[[f64; 4]], b: &[f64], y: &mut [f64]) {
    for (((yo, &bo), l), h) in y.iter_mut().zip(b).zip(lo).zip(hi) {
        let ([a0, a1, a2, a3], [a4, a5, a6, a7]) = (*l, *h);
        *yo = tree8([a0, a1, a2, a3, a4, a5, a6, a7]) + bo;
    }
}

/// The first dense layer's outputs for a block (`y`, example-major) by
/// [`sparse_forward`], every entry the bits of `kernels::dense_forward` (an example without
/// a support takes that loop). For 10 units (the MLPs of the attacks), lane group by lane
/// group: the even quads of every example of the block, then the odd ones, so that only
/// half the weights (31 kB for 784 inputs) are in use at a time (meant to keep them in the
/// L1 cache; measured no faster than example by example, and kept as the simpler loop for
/// the register-resident chains); tree8 of lanes 0–7 is tree4(lanes 0–3) + tree4(lanes
/// 4–7), so each group's chains are reduced as soon as they end.
fn sparse_forward_rows(
    wq: &[Quad],
    (w, b): (&[f64], &[f64]),
    support: &Support,
    chunk: &[usize],
    ins: &[&[f64]],
    lanes: &mut [[f64; 4]],
    y: &mut [f64],
) {
    let units = b.len();
    if units == 10 {
        for h in 0..2 {
            for ((&i, x), y) in chunk.iter().zip(ins).zip(y.chunks_exact_mut(10)) {
                let Some(nz) = support.example(i) else {
                    if h == 1 {
                        kernels::dense_forward(w, b, x, y);
                    }
                    continue;
                };
                let (quads, values) = nz.group(h);
                let acc = quad_chains::<10>(wq, quads, values);
                for ((yo, &a), &bo) in y.iter_mut().zip(&acc).zip(b) {
                    let s = tree4(a);
                    *yo = if h == 0 { s } else { (*yo + s) + bo };
                }
            }
        }
        return;
    }
    for ((&i, x), y) in chunk.iter().zip(ins).zip(y.chunks_exact_mut(units.max(1))) {
        match support.example(i) {
            Some(nz) => sparse_forward(wq, b, nz, lanes, y),
            None => kernels::dense_forward(w, b, x, y),
        }
    }
}

/// `kernels::dense_forward(w, b, x, y)` bit for bit, visiting only the nonzero quads of x
/// (`nz`, which holds their features; the guard of the module docs holds): lane r of output
/// o is the fma chain over the features j ≡ r mod 8 in increasing order, from +0, which the
/// even quads (lanes 0–3) and the odd ones (lanes 4–7), each in increasing order, advance
/// four lanes at a time; `wq` is W in quads ([`to_quads`]), `lanes` (2 × units quads)
/// scratch.
fn sparse_forward(
    wq: &[Quad],
    b: &[f64],
    nz: ExampleSupport<'_>,
    lanes: &mut [[f64; 4]],
    y: &mut [f64],
) {
    let units = b.len();
    lanes.fill([0.0; 4]);
    for (h, acc) in lanes.chunks_exact_mut(units.max(1)).take(2).enumerate() {
        let (quads, values) = nz.group(h);
        for (&q, xq) in quads.iter().zip(values) {
            let q = q as usize;
            if let Some(w) = wq.get(q * units..(q + 1) * units) {
                quad_madd(acc, w, xq);
            }
        }
    }
    let (lo, hi) = lanes.split_at(units.min(lanes.len()));
    finish_quads(lo, hi, b, y);
}

/// The `U` four-lane fma chains of one lane group of [`sparse_forward_rows`] over its
/// nonzero `quads` (features `values`), from +0, in registers (independent, so the fma
/// latency overlaps). Kept out of line: inlined beside the reduction, the vectoriser
/// shuffles lanes across the accumulators inside the loop (measured 13 % slower).
#[inline(never)]
fn quad_chains<const U: usize>(wq: &[Quad], quads: &[u32], values: &[Quad]) -> [[f64; 4]; U] {
    let mut acc = [[0.0f64; 4]; U];
    for (&q, xq) in quads.iter().zip(values) {
        let q = q as usize;
        if let Some(w) = wq.get(q * U..).and_then(|r| r.first_chunk::<U>()) {
            quad_madd(&mut acc, w, xq);
        }
    }
    acc
}

/// Adds example x's terms to the weight sum in quads `gq` ([`to_quads`] layout): for every
/// feature j, G[o, j] ← fl(G[o, j] + fl(e_o·x_j)), as [`add_outer`] adds them; with `nz`
/// (x's nonzero quads and their features) and a finite `e`, only those quads (a skipped
/// term adds ±0 to a sum that is never −0: module docs, "Zero inputs"), else every quad.
fn sparse_add_outer(gq: &mut [Quad], x: &[f64], e: &[f64], nz: Option<(&[u32], &[Quad])>) {
    let nz = nz.filter(|_| e.iter().all(|&v| finite(v)));
    let units = e.len();
    match (e.first_chunk::<10>(), nz) {
        (Some(&e10), Some((quads, values))) if units == 10 => {
            // A local copy: its broadcasts stay in registers across the stores to gq.
            for (&q, xq) in quads.iter().zip(values) {
                let q = q as usize;
                if let Some(g) = gq.get_mut(q * 10..).and_then(|r| r.first_chunk_mut::<10>()) {
                    outer_quad(g, &e10, xq.0);
                }
            }
        }
        (_, Some((quads, values))) => {
            for (&q, xq) in quads.iter().zip(values) {
                let q = q as usize;
                if let Some(g) = gq.get_mut(q * units..(q + 1) * units) {
                    outer_quad(g, e, xq.0);
                }
            }
        }
        (_, None) => {
            for q in 0..quads_of(x.len()) {
                let g = gq.get_mut(q * units..(q + 1) * units);
                if let (Some(g), Some(xq)) = (g, quad_of(x, q)) {
                    outer_quad(g, e, xq);
                }
            }
        }
    }
}

/// Block b of the data set's block index if `chunk` is exactly block b (examples
/// 32b..32b + 32, fewer in the last block, in increasing order): the full batch in order.
fn whole_block<'a>(support: &'a Support, chunk: &[usize]) -> Option<BlockSupport<'a>> {
    let &first = chunk.first()?;
    let expected = support.examples().checked_sub(first)?.min(BLOCK);
    let consecutive = chunk.iter().enumerate().all(|(k, &i)| i == first + k);
    (first % BLOCK == 0 && chunk.len() == expected && consecutive)
        .then(|| support.block(first / BLOCK))
        .flatten()
}

/// The weight sum's terms of a whole block of 10-unit examples (`e` the block's c·δ,
/// example-major, finite), quad by quad from the block index (`runs`): each quad's 10
/// accumulators are read once, advance over the block's examples with that quad nonzero in
/// increasing order (G[o, j] ← fl(G[o, j] + fl(e_o·x_j)) as [`sparse_add_outer`] adds them,
/// so each accumulator gets the same terms in the same order: the same bits), and are written
/// once. Example by example, every term was a read and a write of the accumulator, and the
/// writes were the bottleneck.
fn block_add_outer(gq: &mut [Quad], e: &[f64], runs: BlockSupport<'_>) {
    for (q, examples, values) in runs.runs() {
        let Some(g) = gq.get_mut(q * 10..).and_then(|r| r.first_chunk_mut::<10>()) else {
            continue;
        };
        let mut acc = *g;
        for (&i, xq) in examples.iter().zip(values) {
            if let Some(e10) = e.get(i as usize * 10..).and_then(|r| r.first_chunk::<10>()) {
                outer_quad(&mut acc, e10, xq.0);
            }
        }
        *g = acc;
    }
}

/// g_o ← fl(g_o + fl(e_o·x)) lane by lane, for the quads `g` of one feature quad `x` (whole
/// quads read and written, which the vectoriser maps onto one 4-lane multiply and add).
#[inline(always)]
fn outer_quad(g: &mut [Quad], e: &[f64], x: [f64; 4]) {
    let [x0, x1, x2, x3] = x;
    for (go, &eo) in g.iter_mut().zip(e) {
        let [g0, g1, g2, g3] = go.0;
        go.0 = [g0 + eo * x0, g1 + eo * x1, g2 + eo * x2, g3 + eo * x3];
    }
}

/// The inputs of layer `l` for a block: the examples' features for l = 0, else the previous
/// layer's outputs in `outs` (a prefix of the workspace's `outs` reaching past them).
fn input_rows<'a>(
    l: usize,
    node: &Node,
    xs: &Rows<'a>,
    outs: &'a [f64],
    offsets: &[usize],
    bn: usize,
) -> Rows<'a> {
    let Some(&start) = l.checked_sub(1).and_then(|p| offsets.get(p)) else {
        return *xs;
    };
    let mut rows: Rows<'a> = [&[]; BATCH_BLOCK];
    let n = node.in_len.max(1);
    let src = outs.get(start..start + bn * n).unwrap_or_default();
    for (r, c) in rows.iter_mut().zip(src.chunks_exact(n)) {
        *r = c;
    }
    rows
}

/// Dense forward for a block: y_i,o = dot(W[o, ·], x_i) + b_o (y example-major, `xs.len()`
/// × units), every entry exactly as `kernels::dense_forward` computes it: pairs of examples ×
/// pairs of units share their loads ([`dot_2x2`]), an odd unit or example goes through
/// `kernels::dot` / `kernels::dense_forward` themselves.
fn dense_forward_rows(w: &[f64], b: &[f64], n: usize, xs: &[&[f64]], y: &mut [f64]) {
    let units = b.len();
    if n == 0 || units == 0 {
        return;
    }
    if n < 2 * 8 {
        // Short rows (a hidden layer of the attacks' MLPs): one chunk at most, where sharing
        // loads across a 2 × 2 block gains less than its out-of-line reduction costs; for 10
        // units, vectorised across the units instead.
        if let (10, Some(b10)) = (units, b.first_chunk::<10>()) {
            let mut wt = [0.0f64; 10 * 15];
            if let Some(wt) = wt.get_mut(..10 * n) {
                transpose(w, 10, wt);
                for (x, y) in xs.iter().zip(y.chunks_exact_mut(10)) {
                    if let Some(y) = y.first_chunk_mut::<10>() {
                        short_forward(wt, b10, x, y);
                    }
                }
                return;
            }
        }
        for (x, y) in xs.iter().zip(y.chunks_exact_mut(units)) {
            kernels::dense_forward(w, b, x, y);
        }
        return;
    }
    let mut xp = xs.chunks_exact(2);
    let mut yp = y.chunks_exact_mut(2 * units);
    for (x2, y2) in (&mut xp).zip(&mut yp) {
        let Some(&[x0, x1]) = x2.first_chunk::<2>() else {
            continue;
        };
        let (y0, y1) = y2.split_at_mut(units);
        let mut w2 = w.chunks_exact(2 * n);
        let (mut y0p, mut y1p, mut bp) = (
            y0.chunks_exact_mut(2),
            y1.chunks_exact_mut(2),
            b.chunks_exact(2),
        );
        for (((wq, y0q), y1q), bq) in (&mut w2).zip(&mut y0p).zip(&mut y1p).zip(&mut bp) {
            let (wa, wb) = wq.split_at(n);
            let r = dot_2x2(x0, x1, wa, wb);
            if let (Some([a0, a1]), Some([c0, c1]), Some(&[b0, b1])) = (
                y0q.first_chunk_mut::<2>(),
                y1q.first_chunk_mut::<2>(),
                bq.first_chunk::<2>(),
            ) {
                let [[r00, r01], [r10, r11]] = r;
                (*a0, *a1, *c0, *c1) = (r00 + b0, r01 + b1, r10 + b0, r11 + b1);
            }
        }
        // An odd last unit.
        if let (Some(wl), Some(a), Some(c), Some(&bl)) = (
            w2.remainder().get(..n),
            y0p.into_remainder().first_mut(),
            y1p.into_remainder().first_mut(),
            bp.remainder().first(),
        ) {
            *a = kernels::dot(wl, x0) + bl;
            *c = kernels::dot(wl, x1) + bl;
        }
    }
    // An odd last example.
    if let Some(&x) = xp.remainder().first() {
        kernels::dense_forward(w, b, x, yp.into_remainder());
    }
}

/// Four values: half of the eight accumulators of a dot product.
type V4 = [f64; 4];

/// s ← fma(a, b, s), lane by lane.
#[inline(always)]
fn madd(s: &mut V4, a: &V4, b: &V4) {
    for ((s, &a), &b) in s.iter_mut().zip(a).zip(b) {
        *s = fma(a, b, *s);
    }
}

/// The two halves of a chunk of 8 values.
#[inline(always)]
fn halves(c: &[f64]) -> (V4, V4) {
    match c.first_chunk::<8>() {
        Some(&[a, b, c, d, e, f, g, h]) => ([a, b, c, d], [e, f, g, h]),
        None => ([0.0; 4], [0.0; 4]),
    }
}

/// The four dot products x_r·w_q (r, q ∈ {0, 1}), each exactly `kernels::dot(w_q, x_r)`:
/// lane j of its 8 accumulators is the fma chain over the indices ≡ j mod 8 in increasing
/// order (the values
/// after the last full chunk go to lanes 0, 1, …), combined as ((a0 + a1) + (a2 + a3)) +
/// ((a4 + a5) + (a6 + a7)). 8 loads, 8 products and 8 sums of 4-wide vectors per chunk.
#[inline(always)]
fn dot_2x2(x0: &[f64], x1: &[f64], w0: &[f64], w1: &[f64]) -> [[f64; 2]; 2] {
    let n = x0.len().min(x1.len()).min(w0.len()).min(w1.len());
    let full = n - n % 8;
    let z = [0.0f64; 4];
    let mut acc = [[z; 2]; 4];
    let (c0s, c1s, d0s, d1s) = (cut(x0, full), cut(x1, full), cut(w0, full), cut(w1, full));
    for (((c0, c1), d0), d1) in c0s.zip(c1s).zip(d0s).zip(d1s) {
        let ((c0l, c0h), (c1l, c1h)) = (halves(c0), halves(c1));
        let ((d0l, d0h), (d1l, d1h)) = (halves(d0), halves(d1));
        let [a00, a01, a10, a11] = &mut acc;
        madd(&mut a00[0], &c0l, &d0l);
        madd(&mut a00[1], &c0h, &d0h);
        madd(&mut a01[0], &c0l, &d1l);
        madd(&mut a01[1], &c0h, &d1h);
        madd(&mut a10[0], &c1l, &d0l);
        madd(&mut a10[1], &c1h, &d0h);
        madd(&mut a11[0], &c1l, &d1l);
        madd(&mut a11[1], &c1h, &d1h);
    }
    let [xt, wt] = [[x0, x1], [w0, w1]].map(|p| p.map(|s| s.get(full..n).unwrap_or_default()));
    finish_2x2(acc, xt, wt)
}

/// The chunks of 8 of the first `full` values.
#[inline(always)]
fn cut(s: &[f64], full: usize) -> core::slice::ChunksExact<'_, f64> {
    s.get(..full).unwrap_or_default().chunks_exact(8)
}

/// The eight values at `k..k + 8` (zeros if out of range; callers pass full chunks).
#[inline(always)]
fn chunk8(s: &[f64], k: usize) -> &[f64; 8] {
    s.get(k..)
        .and_then(|s| s.first_chunk::<8>())
        .unwrap_or(&[0.0; 8])
}

/// The tails and the reduction of [`dot_2x2`]. Kept out of line: inlined, the reduction
/// (which pairs adjacent lanes) leads the vectoriser to shuffle lanes across accumulators
/// inside the main loop, which made it about twice as slow.
#[inline(never)]
fn finish_2x2(acc: [[V4; 2]; 4], xt: [&[f64]; 2], wt: [&[f64]; 2]) -> [[f64; 2]; 2] {
    let mut out = [[0.0; 2]; 2];
    for (r, (out_r, x)) in out.iter_mut().zip(xt).enumerate() {
        for (q, (o, w)) in out_r.iter_mut().zip(wt).enumerate() {
            let Some([[a0, a1, a2, a3], [a4, a5, a6, a7]]) = acc.get(2 * r + q).copied() else {
                continue;
            };
            let mut a = [a0, a1, a2, a3, a4, a5, a6, a7];
            for ((s, &xv), &wv) in a.iter_mut().zip(x).zip(w) {
                *s = fma(xv, wv, *s);
            }
            *o = tree8(a);
        }
    }
    out
}

/// G += Σ_i e_i ⊗ a_i for G = `gw` (units × n, row-major), e_i the rows of `e` (units each)
/// and a_i = `rows[i]` (n each): entry (o, k) becomes (…((G_ok + e_1o·a_1k) + e_2o·a_2k) + …),
/// the examples in order, whatever the register blocking (5 or 4 units × 8 columns, the
/// accumulators loaded from and stored back to G). Deliberately *not* fused: each term is
/// the rounded per-example gradient entry fl(e_io·a_ik), so with every clipping factor 1 the
/// sum is bit-identical to adding materialised per-example gradients in batch order (the
/// path of non-dense models and of the per-example observers).
fn add_outer(gw: &mut [f64], n: usize, e: &[f64], units: usize, rows: &[&[f64]]) {
    if n == 0 || units == 0 {
        return;
    }
    let mut grows = gw.chunks_exact_mut(n);
    let mut o = 0;
    if units % 5 == 0 {
        while o + 5 <= units {
            let g: [&mut [f64]; 5] = core::array::from_fn(|_| grows.next().unwrap_or_default());
            outer_group::<5>(g, o, n, e, units, rows);
            o += 5;
        }
    }
    while o + 4 <= units {
        let g: [&mut [f64]; 4] = core::array::from_fn(|_| grows.next().unwrap_or_default());
        outer_group::<4>(g, o, n, e, units, rows);
        o += 4;
    }
    while o < units {
        let g: [&mut [f64]; 1] = [grows.next().unwrap_or_default()];
        outer_group::<1>(g, o, n, e, units, rows);
        o += 1;
    }
}

/// [`add_outer`] for the `U` rows `g` of G starting at unit `o0`.
#[inline(always)]
fn outer_group<const U: usize>(
    mut g: [&mut [f64]; U],
    o0: usize,
    n: usize,
    e: &[f64],
    units: usize,
    rows: &[&[f64]],
) {
    let full = n - n % 8;
    let mut k = 0;
    while k < full {
        let mut acc = [[0.0f64; 8]; U];
        for (a, gq) in acc.iter_mut().zip(g.iter()) {
            *a = *chunk8(gq, k);
        }
        for (x, e_i) in rows.iter().zip(e.chunks_exact(units)) {
            let xv = chunk8(x, k);
            let Some(ev) = e_i.get(o0..).and_then(|s| s.first_chunk::<U>()) else {
                continue;
            };
            for (a, &eq) in acc.iter_mut().zip(ev) {
                for (s, &xk) in a.iter_mut().zip(xv) {
                    *s += eq * xk;
                }
            }
        }
        for (a, gq) in acc.iter().zip(g.iter_mut()) {
            if let Some(c) = gq.get_mut(k..).and_then(|s| s.first_chunk_mut::<8>()) {
                *c = *a;
            }
        }
        k += 8;
    }
    for k in full..n {
        let mut acc = [0.0f64; U];
        for (a, gq) in acc.iter_mut().zip(g.iter()) {
            *a = gq.get(k).copied().unwrap_or(0.0);
        }
        for (x, e_i) in rows.iter().zip(e.chunks_exact(units)) {
            let (Some(&xk), Some(ev)) =
                (x.get(k), e_i.get(o0..).and_then(|s| s.first_chunk::<U>()))
            else {
                continue;
            };
            for (a, &eq) in acc.iter_mut().zip(ev) {
                *a += eq * xk;
            }
        }
        for (a, gq) in acc.iter().zip(g.iter_mut()) {
            if let Some(c) = gq.get_mut(k) {
                *c = *a;
            }
        }
    }
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
