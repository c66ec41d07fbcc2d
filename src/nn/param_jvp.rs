//! The derivative of the input gradient along a parameter direction,
//! d/dε ∇_x ℓ(θ + εu; x) = (∂∇_θℓ/∂x)ᵀu ([`Sequential::input_grad_param_jvp`]): the
//! vector–Jacobian product of the per-example gradient with respect to the input, by one
//! forward-over-reverse pass with parameter tangents (mixed partials commute).
//!
//! Mathematically this is [`Sequential::forward_backward`] with `W = S = Dual<1>`, the
//! parameters seeded with tangent u, the input constant and an empty parameter gradient. With a
//! dense first layer (most of p in an MLP) that layer is not turned into `Dual`s: its input has
//! no tangent, so forward its output is W·x + b (the `f64` kernel) with tangent U·x + u_b (the
//! same kernel on u), and backward only the tangent of its input gradient is needed,
//! Σ_o (δ̇_o·W_oi + δ_o·U_oi) — the generic pass's `Dual` arithmetic term by term in the same
//! order, so the result equals it (up to the sign of zeros). Other first layers take the
//! generic pass.

use alloc::vec::Vec;

use super::{
    all_finite, check_loss, first_non_finite, inconsistent, layer_params, Sequential, Workspace,
};
use crate::autodiff::Dual;
use crate::error::{Error, Result};
use crate::nn::kernels;
use crate::nn::layer::Layer;

/// Buffers for [`Sequential::input_grad_param_jvp`]: a `Dual<1>` [`Workspace`], the
/// parameters as `Dual<1>` (p; with a dense first layer only the other layers' are written)
/// and the `Dual<1>` input gradient (d). Make one with
/// [`Sequential::param_jvp_workspace`] and reuse it.
#[derive(Clone, Debug)]
pub struct ParamJvpWorkspace {
    ws: Workspace<Dual<1>>,
    params: Vec<Dual<1>>,
    gx: Vec<Dual<1>>,
}

impl Sequential {
    /// A workspace for [`input_grad_param_jvp`](Self::input_grad_param_jvp). Allocates;
    /// reuse it.
    pub fn param_jvp_workspace(&self) -> ParamJvpWorkspace {
        ParamJvpWorkspace {
            ws: self.workspace(),
            params: alloc::vec![Dual::default(); self.num_params],
            gx: alloc::vec![Dual::default(); self.input_len],
        }
    }

    /// The derivative of the input gradient along the parameter direction u = `direction`,
    /// d/dε ∇_x ℓ(θ + εu; x, label) at ε = 0, written into `out` (length d); returns the loss.
    /// By symmetry of mixed partials this is (∂∇_θℓ/∂x)ᵀu: a vector–Jacobian product of the
    /// per-example gradient with respect to the input, for any d, at the cost of about two
    /// gradient evaluations (module `param_jvp`).
    ///
    /// Equal (up to the sign of zeros) to the tangent of `input_grad` from
    /// [`forward_backward`](Self::forward_backward) with `W = S = Dual<1>`, the parameters
    /// seeded with tangent u, the input constant and an empty `grad`.
    ///
    /// # Errors
    ///
    /// - [`Error::Inconsistent`] if `params`, `direction` (length p), `x`, `out` (length d) or
    ///   `ws` do not fit the model.
    /// - [`Error::InvalidParameter`] `params` / `direction` / `x` if a value is not finite.
    /// - [`Error::InvalidCount`] `label` if it is not a valid class.
    /// - [`Error::Numerical`] if the loss or a derivative is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::nn::arch;
    /// let model = arch::logistic_regression(1)?;
    /// // ∂ℓ/∂x = σ(w·x + b)·w at label 0; along u = (1, 0) at w = b = 0, x = 3:
    /// // d/dw of σ(w·x)·w = σ(0) = 1/2.
    /// let mut out = [0.0];
    /// let mut ws = model.param_jvp_workspace();
    /// model.input_grad_param_jvp(&[0.0, 0.0], &[1.0, 0.0], &[3.0], 0, &mut out, &mut ws)?;
    /// assert_eq!(out, [0.5]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn input_grad_param_jvp(
        &self,
        params: &[f64],
        direction: &[f64],
        x: &[f64],
        label: usize,
        out: &mut [f64],
        ws: &mut ParamJvpWorkspace,
    ) -> Result<f64> {
        self.check_params::<f64, f64>(params)?;
        if direction.len() != self.num_params {
            return inconsistent("direction.len() must equal num_params()", direction.len());
        }
        if !all_finite(direction) {
            return Err(Error::InvalidParameter {
                name: "direction",
                value: first_non_finite(direction),
                expected: "finite",
            });
        }
        self.check_x(x)?;
        self.check_label(label)?;
        self.check_workspace(&ws.ws)?;
        if ws.params.len() != self.num_params || ws.gx.len() != self.input_len {
            return inconsistent(
                "ws was not made by this model's param_jvp_workspace()",
                ws.params.len(),
            );
        }
        if out.len() != self.input_len {
            return inconsistent("out.len() must equal input_len()", out.len());
        }
        let loss = self.param_jvp_unchecked(params, direction, x, label, out, ws);
        check_loss(loss)?;
        if !all_finite(out) {
            return Err(Error::Numerical {
                what: "non-finite derivative of the input gradient",
                value: first_non_finite(out),
            });
        }
        Ok(loss)
    }

    /// [`input_grad_param_jvp`](Self::input_grad_param_jvp) on validated inputs.
    fn param_jvp_unchecked(
        &self,
        params: &[f64],
        direction: &[f64],
        x: &[f64],
        label: usize,
        out: &mut [f64],
        pw: &mut ParamJvpWorkspace,
    ) -> f64 {
        let Some(node0) = self.nodes.first() else {
            return f64::NAN;
        };
        let dense0 = matches!(node0.layer, Layer::Dense { .. });
        // Parameters as Dual<1> with tangent u: all of them, or those after a dense first
        // layer (whose entries in `pw.params` are then never read).
        let start = if dense0 {
            node0.offset + node0.weights + node0.biases
        } else {
            0
        };
        let (Some(dp), Some(w), Some(u)) = (
            pw.params.get_mut(start..),
            params.get(start..),
            direction.get(start..),
        ) else {
            return f64::NAN;
        };
        for ((d, &wj), &uj) in dp.iter_mut().zip(w).zip(u) {
            *d = Dual::new(wj, [uj]);
        }
        let ws = &mut pw.ws;
        if !dense0 {
            if let Some(input) = ws.acts.get_mut(..self.input_len) {
                for (d, &v) in input.iter_mut().zip(x) {
                    *d = Dual::constant(v);
                }
            }
            let loss = self.run_unchecked(&pw.params, label, &mut [], Some(&mut pw.gx), ws);
            for (o, g) in out.iter_mut().zip(&pw.gx) {
                *o = g.tangent[0];
            }
            return loss.value;
        }
        // The dense first layer forward in f64: values W·x + b, tangents U·x + u_b.
        let (w0, b0) = layer_params(node0, params);
        let (u0, ub0) = layer_params(node0, direction);
        let out0 = node0.out_len;
        let (Some(&a1), Some(y64)) = (self.act_offsets.get(1), ws.y64.get_mut(..out0)) else {
            return f64::NAN;
        };
        let Some(y) = ws.acts.get_mut(a1..a1 + out0) else {
            return f64::NAN;
        };
        kernels::dense_forward(w0, b0, x, y64);
        for (d, &v) in y.iter_mut().zip(y64.iter()) {
            *d = Dual::constant(v);
        }
        tangent_forward(w0, u0, ub0, x, y64);
        for (d, &t) in y.iter_mut().zip(y64.iter()) {
            d.tangent[0] = t;
        }
        self.forward_unchecked(&pw.params, ws, 1);
        let loss = self.loss_and_backward(&pw.params, label, &mut [], None, ws, 1);
        // ws.d0 holds δ, the gradient with respect to the first layer's output. The tangent
        // of its input gradient: Σ_o (δ̇_o·W_oi + δ_o·U_oi), rows in order (as the generic
        // pass accumulates Dual products δ_o·W_oi).
        let n = self.input_len;
        out.fill(0.0);
        let Some(dy) = ws.d0.get(..out0) else {
            return f64::NAN;
        };
        for ((d, wrow), urow) in dy.iter().zip(w0.chunks_exact(n)).zip(u0.chunks_exact(n)) {
            let (dv, dt) = (d.value, d.tangent[0]);
            for ((o, &wv), &uv) in out.iter_mut().zip(wrow).zip(urow) {
                *o += dt * wv + dv * uv;
            }
        }
        loss.value
    }
}

/// The tangents of the dense layer y = W·x + b for `Dual<1>` parameters (W, U), (b, u_b) and a
/// constant input x, term by term as `kernels::dense_forward` computes them with
/// `W = S = Dual<1>`: lane r of the 8 interleaved accumulators adds 0·W_oi + x_i·U_oi (the
/// tangent of the fused `Scalar::mul_add`, whose value part alone is fused) over i ≡ r mod 8,
/// combined as ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), then + u_b.
fn tangent_forward(w: &[f64], u: &[f64], ub: &[f64], x: &[f64], y: &mut [f64]) {
    let n = x.len();
    if n == 0 {
        return;
    }
    for (((yo, wrow), urow), &bo) in y
        .iter_mut()
        .zip(w.chunks_exact(n))
        .zip(u.chunks_exact(n))
        .zip(ub)
    {
        let mut acc = [0.0f64; 8];
        for (i, ((&wv, &uv), &xv)) in wrow.iter().zip(urow).zip(x).enumerate() {
            if let Some(s) = acc.get_mut(i % 8) {
                *s += 0.0 * wv + xv * uv;
            }
        }
        *yo = crate::autodiff::tree8(acc) + bo;
    }
}
