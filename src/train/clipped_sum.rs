//! Σ clip(∇ℓ(θ; z_i)) over a set of examples: the clipped gradient sum a DP-SGD step adds
//! noise to, as the audits' distinguishers recompute it (one floor below the audits, so
//! that `attacks::audit::run` and `attacks::audit::init` both read it from here).

use super::clip::clip;
use super::dpsgd::Clipping;
use crate::data::Dataset;
use crate::error::Result;
use crate::nn::{BatchWorkspace, Sequential, Workspace};

/// Σ_{i ∈ indices} clip(∇ℓ(θ; z_i)) into `out`: batched for dense models, one example at a
/// time otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) fn clipped_sum(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
    indices: &[usize],
    clipping: Clipping,
    out: &mut [f64],
    ws: &mut Workspace<f64>,
    bws: &mut Option<BatchWorkspace>,
) -> Result<()> {
    if let Some(bws) = bws.as_mut() {
        model.clipped_grad_sum(params, data, indices, Some(clipping), out, bws)?;
        return Ok(());
    }
    out.iter_mut().for_each(|o| *o = 0.0);
    let mut g = alloc::vec![0.0; out.len()];
    for &i in indices {
        let (x, y) = data.example(i)?;
        model.loss_and_grad(params, x, y as usize, &mut g, ws)?;
        clip(&mut g, clipping.method, clipping.norm)?;
        out.iter_mut().zip(&g).for_each(|(o, &v)| *o += v);
    }
    Ok(())
}
