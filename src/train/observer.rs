//! Training observers: DP-SGD calls [`Observer::observe`] once per step with a [`StepInfo`]
//! (the step index, the parameters before the update, the batch, the clipped per-example
//! gradients if asked for, the released noisy gradient). Accountants, attacks and loggers are
//! observers; compose them with tuples (`(a, b)` observes with `a`, then `b`) or `&mut`
//! references. Nothing is stored by the trainer: an observer keeps what it needs, in O(p).

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::nn::{Sequential, Workspace};
use alloc::vec::Vec;

/// What DP-SGD shows an observer at one step.
#[derive(Clone, Copy, Debug)]
pub struct StepInfo<'a> {
    /// The step index t, counting from 0.
    pub step: u64,
    /// The parameters w_t **before** this step's update (length p).
    pub params: &'a [f64],
    /// The batch: ascending example indices into the training set (may be empty under
    /// Poisson sampling).
    pub batch: &'a [usize],
    /// The clipped per-example gradients g̃_i, `batch.len()` rows of length p back to back
    /// (row k belongs to `batch[k]`), **only** if some observer's
    /// [`Observer::wants_per_example`] is `true`; otherwise `None` and the trainer keeps
    /// only their running sum. Unclipped gradients when clipping is off (non-private SGD).
    pub clipped: Option<&'a [f64]>,
    /// The released gradient ḡ_t = (Σ_i g̃_i + N(0, s²I)) / B (length p), before weight
    /// decay and momentum; s = [`noise_std`](Self::noise_std)·B.
    pub released: &'a [f64],
    /// Σ_{i ∈ batch} g̃_i: the sum of the clipped gradients of the examples listed in `batch`
    /// (length p). Without a [secret](crate::train::dpsgd::Secret) this is the whole sum
    /// behind `released`; with one, the secret's clipped gradient is **not** in it (it is
    /// added after, if sampled). It is a function of the parameters, the training set and
    /// `batch` alone — what an informed adversary who knows the training set apart from the
    /// secret computes itself — so attacks reuse it instead of recomputing it. (With a secret
    /// under fixed-size or shuffled batches, `batch` itself reveals whether the secret was
    /// drawn: D⁻'s part has one example fewer.) With per-example rows kept (`clipped`), their
    /// sum equals `batch_sum` up to rounding for dense models, whose sum is batched.
    pub batch_sum: &'a [f64],
    /// The sum of the per-example losses of the examples in `batch` at `params` (0 for an
    /// empty batch; the secret's loss is not included).
    pub loss_sum: f64,
    /// The normaliser B: the expected batch size (Poisson), the fixed batch size, or n.
    pub normaliser: f64,
    /// The standard deviation of each coordinate of the noise in `released`: σ·S/B with
    /// S the clipping sensitivity (C for hard, 1.11522·C for GELU clipping); 0 without noise.
    pub noise_std: f64,
}

/// Something that watches DP-SGD step by step.
pub trait Observer {
    /// `true` if [`StepInfo::clipped`] must be provided (costs a B × p buffer). Default
    /// `false`: the trainer then sums the clipped gradients on the fly.
    fn wants_per_example(&self) -> bool {
        false
    }

    /// Called once per step, before the update is applied.
    ///
    /// # Errors
    ///
    /// Any error stops training and is returned by the trainer.
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()>;
}

/// The observer that does nothing.
impl Observer for () {
    fn observe(&mut self, _: &StepInfo<'_>) -> Result<()> {
        Ok(())
    }
}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn wants_per_example(&self) -> bool {
        (**self).wants_per_example()
    }
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        (**self).observe(info)
    }
}

/// Two observers in sequence: `.0` first, then `.1`.
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn wants_per_example(&self) -> bool {
        self.0.wants_per_example() || self.1.wants_per_example()
    }
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        self.0.observe(info)?;
        self.1.observe(info)
    }
}

/// One row of a [`Metrics`] history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricsRecord {
    /// The step index.
    pub step: u64,
    /// The realised batch size.
    pub batch_size: usize,
    /// The mean per-example loss of the batch at the parameters before the update (NaN for
    /// an empty batch).
    pub batch_loss: f64,
    /// The accuracy on the evaluation set at the parameters before the update, on the
    /// steps where it was evaluated.
    pub accuracy: Option<f64>,
}

/// The loss/accuracy logger: records every step's mean batch loss, and the accuracy on an
/// evaluation set every `every` steps (at the parameters before the update). Memory O(T)
/// scalars.
#[derive(Clone, Debug)]
pub struct Metrics<'a> {
    model: &'a Sequential,
    eval: Option<&'a Dataset>,
    every: u64,
    ws: Workspace<f64>,
    /// One record per observed step.
    pub history: Vec<MetricsRecord>,
}

impl<'a> Metrics<'a> {
    /// A logger for `model`; with `eval = Some((data, every))` it also measures the accuracy
    /// on `data` at steps 0, every, 2·every, …
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `every` if 0; [`Error::Inconsistent`] if the evaluation data
    /// do not fit the model (dimension or classes).
    pub fn new(model: &'a Sequential, eval: Option<(&'a Dataset, u64)>) -> Result<Self> {
        let (eval, every) = match eval {
            Some((d, every)) => {
                if every == 0 {
                    return Err(Error::InvalidCount {
                        name: "every",
                        value: 0,
                        expected: ">= 1",
                    });
                }
                check_fits(model, d)?;
                (Some(d), every)
            }
            None => (None, 1),
        };
        Ok(Metrics {
            model,
            eval,
            every,
            ws: model.workspace(),
            history: Vec::new(),
        })
    }

    /// The accuracy of `params` on the evaluation set, if there is one.
    ///
    /// # Errors
    ///
    /// As [`accuracy`].
    pub fn evaluate(&mut self, params: &[f64]) -> Result<Option<f64>> {
        match self.eval {
            Some(d) => accuracy_with(self.model, params, d, &mut self.ws).map(Some),
            None => Ok(None),
        }
    }
}

impl Observer for Metrics<'_> {
    fn observe(&mut self, info: &StepInfo<'_>) -> Result<()> {
        let accuracy = if info.step % self.every == 0 {
            self.evaluate(info.params)?
        } else {
            None
        };
        let batch_loss = if info.batch.is_empty() {
            f64::NAN
        } else {
            info.loss_sum / info.batch.len() as f64
        };
        self.history.push(MetricsRecord {
            step: info.step,
            batch_size: info.batch.len(),
            batch_loss,
            accuracy,
        });
        Ok(())
    }
}

/// `Err` unless `data` has the model's input dimension and labels it can predict.
pub(crate) fn check_fits(model: &Sequential, data: &Dataset) -> Result<()> {
    if data.dim() != model.input_len() {
        return Err(Error::Inconsistent {
            what: "the data's dimension differs from the model's input length",
            value: data.dim() as f64,
        });
    }
    if data.num_classes() > model.num_classes() {
        return Err(Error::Inconsistent {
            what: "the data have more classes than the model outputs",
            value: data.num_classes() as f64,
        });
    }
    Ok(())
}

fn accuracy_with(
    model: &Sequential,
    params: &[f64],
    data: &Dataset,
    ws: &mut Workspace<f64>,
) -> Result<f64> {
    let mut correct = 0usize;
    for (x, y) in data.iter() {
        if model.predict(params, x, ws)? == y as usize {
            correct += 1;
        }
    }
    Ok(correct as f64 / data.len() as f64)
}

/// The fraction of `data` that `model` with `params` classifies correctly.
///
/// # Errors
///
/// [`Error::Inconsistent`] if the data do not fit the model or `params` has the wrong
/// length; [`Error::InvalidParameter`] `params` if a value is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::data::Dataset;
/// use reconbound::nn::arch;
/// use reconbound::train::observer::accuracy;
/// let model = arch::logistic_regression(1)?;
/// let data = Dataset::new(vec![0.2, 0.9], vec![0, 1], (1, 1, 1), 2)?;
/// // w = 10, b = −5: predicts 1 iff x > 0.5.
/// assert_eq!(accuracy(&model, &[10.0, -5.0], &data)?, 1.0);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn accuracy(model: &Sequential, params: &[f64], data: &Dataset) -> Result<f64> {
    check_fits(model, data)?;
    let mut ws = model.workspace();
    accuracy_with(model, params, data, &mut ws)
}
