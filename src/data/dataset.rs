//! The validated in-memory [`Dataset`].

use super::support::Support;
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// Largest supported number of classes, 2²⁰ (per-class tables then stay below 25 MB).
pub const MAX_CLASSES: usize = 1 << 20;

/// A labelled data set: `len()` examples of `dim()` features each, every feature a finite
/// `f64` in [0, 1], every label in `0..num_classes`.
///
/// Features are stored row-major in one flat vector (`len() × dim()`); example `i` is
/// `features()[i·dim() .. (i+1)·dim()]`, itself laid out as `shape = (channels, height,
/// width)` in channel-major (CHW) order. A flat vector has shape `(1, 1, dim)` (see
/// [`Dataset::flatten`]).
///
/// The fields are private so that every `Dataset` satisfies these invariants; build one with
/// [`Dataset::new`] (validated), a reader ([`crate::data::idx`], [`crate::data::cifar`]), the
/// embedded default ([`crate::data::embedded_mnist`]) or a synthetic generator
/// ([`crate::data::synthetic`]).
///
/// A sparse data set (16 or more features, at most half of them and three quarters of their
/// quads of 4 consecutive features nonzero, as MNIST's 20 % and 28 %) also keeps, built once
/// when it is made, each example's nonzero quads with their features and its ‖x‖²: 36 bytes
/// per nonzero quad and 20 per example, and the same quads by block of 32 examples, 33 bytes
/// per nonzero quad (for the 10,000 vendored digits, 20.2 + 18.9 MB beside the features'
/// 62.7 MB). Batched training skips the zero quads with them and gets the same bits
/// as the dense loops, faster (`nn::Sequential::clipped_grad_sum`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    features: Vec<f64>,
    labels: Vec<u32>,
    shape: (usize, usize, usize),
    num_classes: usize,
    /// The nonzero quads of each example with their features (none for dense data), derived
    /// from `features`.
    support: Support,
}

impl Dataset {
    /// A validated data set.
    ///
    /// `features` holds `labels.len()` examples of `channels × height × width` features each,
    /// row-major; `shape = (channels, height, width)`.
    ///
    /// # Errors
    /// - `shape`: a zero dimension, or a product that overflows `usize`;
    /// - `num_classes`: 0 or above [`MAX_CLASSES`];
    /// - `labels`: empty, or a label `>= num_classes`;
    /// - `features`: length not `labels.len() × channels × height × width`
    ///   ([`Error::Inconsistent`]), or a value that is NaN, infinite or outside [0, 1].
    ///
    /// # Examples
    /// ```
    /// use reconbound::data::Dataset;
    /// let ds = Dataset::new(vec![0.0, 0.5, 1.0, 0.25], vec![0, 1], (1, 1, 2), 2)?;
    /// assert_eq!((ds.len(), ds.dim()), (2, 2));
    /// assert_eq!(ds.example(1)?, (&[1.0, 0.25][..], 1));
    /// assert!(Dataset::new(vec![0.0, 2.0], vec![0], (1, 1, 2), 2).is_err());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(
        features: Vec<f64>,
        labels: Vec<u32>,
        shape: (usize, usize, usize),
        num_classes: usize,
    ) -> Result<Self> {
        let dim = shape_dim(shape)?;
        if num_classes == 0 || num_classes > MAX_CLASSES {
            return Err(Error::InvalidCount {
                name: "num_classes",
                value: num_classes as u64,
                expected: "in 1..=1048576 (MAX_CLASSES)",
            });
        }
        if labels.is_empty() {
            return Err(Error::InvalidCount {
                name: "labels",
                value: 0,
                expected: "at least one example",
            });
        }
        if labels.len().checked_mul(dim) != Some(features.len()) {
            return Err(Error::Inconsistent {
                what: "features.len() must equal labels.len() × channels × height × width",
                value: features.len() as f64,
            });
        }
        check_values(&features, &labels, num_classes)?;
        Ok(Dataset::from_valid_parts(
            features,
            labels,
            shape,
            num_classes,
        ))
    }

    /// Internal constructor for transformations that preserve the invariants (features
    /// taken from a valid data set or scaled down, labels re-mapped within range).
    pub(crate) fn from_valid_parts(
        features: Vec<f64>,
        labels: Vec<u32>,
        shape: (usize, usize, usize),
        num_classes: usize,
    ) -> Self {
        debug_assert!(labels.len() * shape.0 * shape.1 * shape.2 == features.len());
        let support = Support::of(&features, shape.0 * shape.1 * shape.2);
        Dataset {
            features,
            labels,
            shape,
            num_classes,
            support,
        }
    }

    /// This data set with the example (`x`, `label`) appended, validated as [`Dataset::new`]
    /// validates it: the data set `Dataset::new` makes of the concatenation, with the support
    /// extended by the new example instead of built again from every feature (the RecoNN
    /// models' training sets, D⁻ ∪ {z}, one per model).
    ///
    /// # Errors
    /// `x`: length not `dim()` ([`Error::Inconsistent`]) or a value NaN, infinite or outside
    /// [0, 1]; `labels`: `label >= num_classes()`.
    pub(crate) fn with_example(&self, x: &[f64], label: u32) -> Result<Dataset> {
        let dim = self.dim();
        if x.len() != dim {
            return Err(Error::Inconsistent {
                what: "the new example's length must equal dim()",
                value: x.len() as f64,
            });
        }
        check_values(x, &[label], self.num_classes)?;
        let mut features = Vec::with_capacity(self.features.len() + dim);
        features.extend_from_slice(&self.features);
        features.extend_from_slice(x);
        let mut labels = Vec::with_capacity(self.labels.len() + 1);
        labels.extend_from_slice(&self.labels);
        labels.push(label);
        let support = match self.support.appended(x, dim) {
            Some(s) => s,
            None => Support::of(&features, dim),
        };
        Ok(Dataset {
            features,
            labels,
            shape: self.shape,
            num_classes: self.num_classes,
            support,
        })
    }

    /// Number of examples (always ≥ 1).
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Always `false`: a `Dataset` holds at least one example. Provided for API symmetry.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of features per example, `channels × height × width` (always ≥ 1).
    pub fn dim(&self) -> usize {
        self.shape.0 * self.shape.1 * self.shape.2
    }

    /// `(channels, height, width)` of one example.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.shape
    }

    /// Number of classes; every label is `< num_classes()`.
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// All features, row-major (`len() × dim()`).
    pub fn features(&self) -> &[f64] {
        &self.features
    }

    /// All labels.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// The fingerprint of the content: FNV-1a (64 bits) of the shape, the number of
    /// classes, the example count, every feature's f64 bits (little-endian) and every label.
    /// Two datasets with one fingerprint are, but for a 2⁻⁶⁴-scale accident, the same pixels
    /// and labels, whatever path they were read from. Shard files
    /// (`reconbound … --shard K/M`) and RecoNN shadow sets
    /// ([`ShadowSetSpec`](crate::attacks::reconn::shadow_set::ShadowSetSpec)) record it.
    ///
    /// # Citations
    /// Fowler, Noll, Vo, "FNV hash" (IETF draft-eastlake-fnv), FNV-1a.
    pub fn fingerprint(&self) -> u64 {
        use crate::fingerprint::{fnv1a64, FNV_OFFSET};
        let (c, h, w) = self.shape();
        let mut state = FNV_OFFSET;
        for n in [c, h, w, self.num_classes(), self.len()] {
            state = fnv1a64(state, &(n as u64).to_le_bytes());
        }
        for x in self.features() {
            state = fnv1a64(state, &x.to_bits().to_le_bytes());
        }
        for l in self.labels() {
            state = fnv1a64(state, &l.to_le_bytes());
        }
        state
    }

    /// Example `i`: its features (length `dim()`) and its label.
    ///
    /// # Errors
    /// `index >= len()` (named `"index"`).
    pub fn example(&self, index: usize) -> Result<(&[f64], u32)> {
        let d = self.dim();
        let row = if index < self.labels.len() {
            // index < len and len × d = features.len(), so neither product overflows.
            self.features.get(index * d..(index + 1) * d)
        } else {
            None
        };
        match (self.labels.get(index), row) {
            (Some(&label), Some(x)) => Ok((x, label)),
            _ => Err(Error::InvalidCount {
                name: "index",
                value: index as u64,
                expected: "< len()",
            }),
        }
    }

    /// Iterator over `(features, label)` of every example, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[f64], u32)> + '_ {
        self.features
            .chunks_exact(self.dim())
            .zip(self.labels.iter().copied())
    }

    /// Number of examples of each class: a vector of length `num_classes()`.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = alloc::vec![0usize; self.num_classes];
        for &l in &self.labels {
            if let Some(c) = counts.get_mut(l as usize) {
                *c += 1;
            }
        }
        counts
    }

    /// The largest ℓ2 norm of an example, `max_i ‖x_i‖₂` (computed with `libm::sqrt`; rounding
    /// error at most a few ulps times `dim()`).
    pub fn max_l2_norm(&self) -> f64 {
        self.features
            .chunks_exact(self.dim())
            .map(|x| libm::sqrt(x.iter().map(|v| v * v).sum::<f64>()))
            .fold(0.0, f64::max)
    }

    /// The same data set with another shape of the same size (`shape`'s product must be
    /// `dim()`: callers reshape, e.g. flatten), keeping its support.
    pub(crate) fn with_shape(mut self, shape: (usize, usize, usize)) -> Dataset {
        debug_assert!(shape.0 * shape.1 * shape.2 == self.dim());
        self.shape = shape;
        self
    }

    /// The nonzero quads of each example, for the dense layers that skip zero inputs (none
    /// kept for dense data).
    pub(crate) fn support(&self) -> &Support {
        &self.support
    }

    /// The same data set without its support (every layer takes its dense loops): for tests
    /// that compare the two.
    #[cfg(test)]
    pub(crate) fn without_support(mut self) -> Dataset {
        self.support = Support::default();
        self
    }

    /// `(features, labels, shape, num_classes)`, consuming the data set.
    pub fn into_parts(self) -> (Vec<f64>, Vec<u32>, (usize, usize, usize), usize) {
        (self.features, self.labels, self.shape, self.num_classes)
    }
}

/// Every label below `num_classes`, every feature finite and in [0, 1] (the errors of
/// [`Dataset::new`]).
fn check_values(features: &[f64], labels: &[u32], num_classes: usize) -> Result<()> {
    if let Some(&bad) = labels.iter().find(|&&l| l as usize >= num_classes) {
        return Err(Error::InvalidCount {
            name: "labels",
            value: u64::from(bad),
            expected: "< num_classes",
        });
    }
    if let Some(&bad) = features.iter().find(|&&x| !(0.0..=1.0).contains(&x)) {
        return Err(Error::InvalidParameter {
            name: "features",
            value: bad,
            expected: "finite and in [0, 1]",
        });
    }
    Ok(())
}

/// `channels × height × width`, checked: every factor ≥ 1, no overflow.
pub(crate) fn shape_dim(shape: (usize, usize, usize)) -> Result<usize> {
    let (c, h, w) = shape;
    if c == 0 || h == 0 || w == 0 {
        return Err(Error::InvalidCount {
            name: "shape",
            value: 0,
            expected: "channels, height and width all >= 1",
        });
    }
    c.checked_mul(h)
        .and_then(|v| v.checked_mul(w))
        .ok_or(Error::InvalidCount {
            name: "shape",
            value: u64::MAX,
            expected: "channels × height × width representable in usize",
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn with_example_is_new_of_the_concatenation_and_validates_like_it() {
        // The embedded digits (a support and its block index): 999 + 1 (a partial block) and
        // 64 + 1 (a new block), the same data set as `new` builds, support included.
        let digits = crate::data::embedded_mnist().unwrap();
        for n in [999usize, 64] {
            let head = digits.subset(&(0..n).collect::<Vec<_>>()).unwrap();
            let (x, y) = digits.example(1234).unwrap();
            let got = head.with_example(x, y).unwrap();
            let mut f = head.features().to_vec();
            f.extend_from_slice(x);
            let mut l = head.labels().to_vec();
            l.push(y);
            let want = Dataset::new(f, l, head.shape(), head.num_classes()).unwrap();
            assert!(got.support().min_nonzero().is_some());
            assert!(got == want, "n = {n}");
        }
        let d = Dataset::new(vec![0.0; 6], vec![0, 1], (1, 1, 3), 2).unwrap();
        let name = |r: Result<Dataset>| match r.unwrap_err() {
            Error::InvalidCount { name, .. } | Error::InvalidParameter { name, .. } => name,
            Error::Inconsistent { what, .. } => what,
            e => panic!("unexpected {e:?}"),
        };
        assert_eq!(name(d.with_example(&[0.0; 3], 2)), "labels");
        assert_eq!(name(d.with_example(&[0.0, 1.5, 0.0], 1)), "features");
        assert_eq!(name(d.with_example(&[0.0, f64::NAN, 0.0], 1)), "features");
        assert!(name(d.with_example(&[0.0; 2], 1)).contains("dim()"));
        assert_eq!(d.with_example(&[0.0, 1.0, 0.5], 1).unwrap().len(), 3);
    }

    #[test]
    fn new_rejects_each_invalid_parameter_by_name() {
        let ok = Dataset::new(vec![0.0; 6], vec![0, 1], (1, 1, 3), 2).unwrap();
        assert_eq!((ok.len(), ok.dim(), ok.num_classes()), (2, 3, 2));
        let name = |r: Result<Dataset>| match r.unwrap_err() {
            Error::InvalidCount { name, .. } | Error::InvalidParameter { name, .. } => name,
            Error::Inconsistent { what, .. } => what,
            e => panic!("unexpected {e:?}"),
        };
        assert_eq!(
            name(Dataset::new(vec![0.0; 6], vec![0, 1], (0, 1, 3), 2)),
            "shape"
        );
        assert_eq!(
            name(Dataset::new(vec![], vec![0], (usize::MAX, 2, 1), 2)),
            "shape"
        );
        assert_eq!(
            name(Dataset::new(vec![0.0; 6], vec![0, 1], (1, 1, 3), 0)),
            "num_classes"
        );
        assert_eq!(
            name(Dataset::new(
                vec![0.0; 6],
                vec![0, 1],
                (1, 1, 3),
                MAX_CLASSES + 1
            )),
            "num_classes"
        );
        assert!(Dataset::new(vec![0.0; 6], vec![0, 1], (1, 1, 3), MAX_CLASSES).is_ok());
        assert_eq!(name(Dataset::new(vec![], vec![], (1, 1, 3), 2)), "labels");
        assert_eq!(
            name(Dataset::new(vec![0.0; 6], vec![0, 2], (1, 1, 3), 2)),
            "labels"
        );
        assert!(name(Dataset::new(vec![0.0; 5], vec![0, 1], (1, 1, 3), 2)).starts_with("features"));
        for bad in [f64::NAN, f64::INFINITY, -0.1, 1.0 + f64::EPSILON] {
            let mut f = vec![0.0; 6];
            f[4] = bad;
            assert_eq!(
                name(Dataset::new(f, vec![0, 1], (1, 1, 3), 2)),
                "features",
                "{bad}"
            );
        }
    }

    #[test]
    fn accessors_return_rows_and_reject_out_of_range_index() {
        let ds = Dataset::new(vec![0.1, 0.2, 0.3, 0.4], vec![1, 0], (1, 2, 1), 3).unwrap();
        assert_eq!(ds.example(0).unwrap(), (&[0.1, 0.2][..], 1));
        assert_eq!(ds.example(1).unwrap(), (&[0.3, 0.4][..], 0));
        assert!(ds.example(2).is_err());
        assert!(ds.example(usize::MAX).is_err());
        assert_eq!(ds.class_counts(), vec![1, 1, 0]);
        assert_eq!(ds.iter().count(), 2);
        // ‖(0.3, 0.4)‖ = 0.5 up to one rounding
        assert!(libm::fabs(ds.max_l2_norm() - 0.5) < 1e-15);
    }
}
