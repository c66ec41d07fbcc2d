//! Deterministic splits, subsets, label filtering, flattening and projection to the unit ℓ2
//! ball.

use super::Dataset;
use crate::error::{check_open_unit, invalid, Error, Result};
use crate::rng::Rng;
use alloc::vec::Vec;

impl Dataset {
    /// The examples at `indices`, in that order (repetitions allowed, e.g. for a bootstrap).
    ///
    /// # Errors
    /// `indices` empty, or an index `>= len()` (value the index).
    pub fn subset(&self, indices: &[usize]) -> Result<Dataset> {
        if indices.is_empty() {
            return Err(Error::InvalidCount {
                name: "indices",
                value: 0,
                expected: "at least one index",
            });
        }
        let d = self.dim();
        let mut features = Vec::with_capacity(indices.len().saturating_mul(d));
        let mut labels = Vec::with_capacity(indices.len());
        for &i in indices {
            let (x, y) = self.example(i).map_err(|_| Error::InvalidCount {
                name: "indices",
                value: i as u64,
                expected: "every index < len()",
            })?;
            features.extend_from_slice(x);
            labels.push(y);
        }
        Ok(Dataset::from_valid_parts(
            features,
            labels,
            self.shape(),
            self.num_classes(),
        ))
    }

    /// The examples whose label is in `keep`, relabelled by position in `keep`: label
    /// `keep[j]` becomes `j`, and the result has `keep.len()` classes. Order is preserved.
    ///
    /// E.g. `filter_labels(&[0, 1])` on MNIST gives the 0-vs-1 binary problem (labels 0/1);
    /// `filter_labels(&[3, 8])` maps 3 → 0 and 8 → 1.
    ///
    /// # Errors
    /// `keep` empty, holding a label `>= num_classes()` or a repeated label; no example with
    /// a label in `keep` (all named `"keep"`).
    ///
    /// # Examples
    /// ```
    /// let mnist = reconbound::data::embedded_mnist()?;
    /// let binary = mnist.filter_labels(&[0, 1])?;
    /// assert_eq!(binary.num_classes(), 2);
    /// assert_eq!(binary.class_counts(), vec![214, 219]);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn filter_labels(&self, keep: &[u32]) -> Result<Dataset> {
        if keep.is_empty() {
            return Err(Error::InvalidCount {
                name: "keep",
                value: 0,
                expected: "at least one label",
            });
        }
        // map[label] = new label + 1 (0: dropped)
        let mut map = alloc::vec![0u32; self.num_classes()];
        for (j, &l) in keep.iter().enumerate() {
            match map.get_mut(l as usize) {
                // j < keep.len() <= num_classes <= MAX_CLASSES = 2^20: no overflow.
                Some(slot) if *slot == 0 => *slot = j as u32 + 1,
                Some(_) => {
                    return Err(Error::InvalidCount {
                        name: "keep",
                        value: u64::from(l),
                        expected: "distinct labels (this one is repeated)",
                    })
                }
                None => {
                    return Err(Error::InvalidCount {
                        name: "keep",
                        value: u64::from(l),
                        expected: "labels < num_classes",
                    })
                }
            }
        }
        let mut features = Vec::new();
        let mut labels = Vec::new();
        for (x, y) in self.iter() {
            if let Some(&m) = map.get(y as usize) {
                if m > 0 {
                    features.extend_from_slice(x);
                    labels.push(m - 1);
                }
            }
        }
        if labels.is_empty() {
            return Err(Error::InvalidCount {
                name: "keep",
                value: 0,
                expected: "labels that occur in the data set (no example kept)",
            });
        }
        Ok(Dataset::from_valid_parts(
            features,
            labels,
            self.shape(),
            keep.len(),
        ))
    }

    /// The same data with shape `(1, 1, dim())`: a flat vector per example (features are
    /// already stored row-major, so only the shape changes).
    pub fn flatten(self) -> Dataset {
        let d = self.dim();
        // The same features: the support (a function of the features and dim) is kept.
        self.with_shape((1, 1, d))
    }

    /// Scale every example with ‖x‖₂ > 1 down onto the unit sphere, `x ← x / ‖x‖₂`, so that
    /// every example satisfies ‖x‖₂ ≤ 1 — the assumption behind the sensitivity 2/(nλ) of
    /// output-perturbed logistic regression (Chaudhuri et al. 2011), hence behind its
    /// (2, 4/(nλσ)²)-RDP in Guo et al. 2022, Sec. 7.1
    /// (`guo2022-bounding-reconstruction-fil-rdp.txt`).
    ///
    /// This changes the data: norms above 1 become 1 (for MNIST, ‖x‖₂ is typically 9–10, so
    /// every pixel shrinks about tenfold). Features stay in [0, 1] because scaling down keeps
    /// them non-negative and no larger than before. Examples already inside the ball are
    /// unchanged.
    ///
    /// # Rounding
    /// The bound holds for the stored floats in exact arithmetic, not only as computed: an
    /// example is scaled whenever its computed norm `r̂` satisfies `r̂·t > 1` with
    /// `t = 1 + (dim + 4)·ε`, and then divided by `r̂·t`, which covers the rounding of the sum
    /// of squares (relative error ≤ dim·ε/2), of the square root and of the scaling. Examples
    /// with norm in (1/t, 1] are therefore shrunk by a relative amount below (dim + 4)·ε.
    ///
    /// # Examples
    /// ```
    /// let mnist = reconbound::data::embedded_mnist()?.project_to_unit_ball();
    /// assert!(mnist.max_l2_norm() <= 1.0);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn project_to_unit_ball(self) -> Dataset {
        let d = self.dim();
        let t = 1.0 + (d as f64 + 4.0) * f64::EPSILON;
        let (mut features, labels, shape, k) = self.into_parts();
        for x in features.chunks_exact_mut(d) {
            let r = libm::sqrt(x.iter().map(|v| v * v).sum::<f64>());
            let scaled = r * t;
            if scaled > 1.0 {
                let f = 1.0 / scaled;
                x.iter_mut().for_each(|v| *v *= f);
            }
        }
        Dataset::from_valid_parts(features, labels, shape, k)
    }
}

/// The indices of `0..n` that are not in `test`, in increasing order. `test` must be sorted
/// increasingly (as [`crate::rng::Rng::subset`] returns it); entries at or beyond `n` are ignored.
pub fn complement(n: usize, test: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(n.saturating_sub(test.len()));
    let mut t = test.iter().peekable();
    for i in 0..n {
        if t.peek() == Some(&&i) {
            t.next();
        } else {
            out.push(i);
        }
    }
    out
}

fn split_at_indices(dataset: &Dataset, test: &[usize]) -> Result<(Dataset, Dataset)> {
    let train = complement(dataset.len(), test);
    Ok((dataset.subset(&train)?, dataset.subset(test)?))
}

/// `(train, test)` with exactly `test_size` examples drawn uniformly without replacement
/// (seeded by `seed` through [`Rng::subset`]) for the test set; both parts keep the original
/// order of the examples.
///
/// # Errors
/// `test_size` not in `1..len()` (both parts must be non-empty).
///
/// # Examples
/// ```
/// use reconbound::data::{split_by_size, synthetic};
/// let ds = synthetic::gaussian_blobs(10, 2, 2, 1.0, 0)?;
/// let (train, test) = split_by_size(&ds, 3, 99)?;
/// assert_eq!((train.len(), test.len()), (7, 3));
/// assert_eq!(split_by_size(&ds, 3, 99)?, (train, test)); // deterministic
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn split_by_size(dataset: &Dataset, test_size: usize, seed: u64) -> Result<(Dataset, Dataset)> {
    let n = dataset.len();
    if test_size == 0 || test_size >= n {
        return Err(Error::InvalidCount {
            name: "test_size",
            value: test_size as u64,
            expected: "in 1..len() (both parts non-empty)",
        });
    }
    let test = Rng::from_seed(seed).subset(n, test_size)?;
    split_at_indices(dataset, &test)
}

/// `(train, test)` with `round(test_fraction · len())` test examples, as [`split_by_size`].
///
/// # Errors
/// `test_fraction` not in (0, 1), or rounding to an empty part.
pub fn split(dataset: &Dataset, test_fraction: f64, seed: u64) -> Result<(Dataset, Dataset)> {
    check_open_unit("test_fraction", test_fraction)?;
    let size = libm::round(test_fraction * dataset.len() as f64) as usize;
    if size == 0 || size >= dataset.len() {
        return invalid(
            "test_fraction",
            test_fraction,
            "such that round(test_fraction × len) is in 1..len",
        );
    }
    split_by_size(dataset, size, seed)
}

/// Stratified `(train, test)`: from each class `c` (in increasing order), `round(test_fraction
/// · n_c)` examples drawn uniformly without replacement go to the test set, so class
/// proportions are preserved up to rounding. One generator seeded by `seed` serves all
/// classes in order; both parts keep the original order of the examples.
///
/// # Errors
/// `test_fraction` not in (0, 1), or a split with an empty part.
///
/// # Examples
/// ```
/// use reconbound::data::{embedded_mnist, stratified_split};
/// let (train, test) = stratified_split(&embedded_mnist()?, 0.25, 1)?;
/// assert_eq!(test.class_counts(), vec![54, 55, 47, 54, 45, 48, 49, 53, 45, 50]);
/// assert_eq!(train.len() + test.len(), 2000);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn stratified_split(
    dataset: &Dataset,
    test_fraction: f64,
    seed: u64,
) -> Result<(Dataset, Dataset)> {
    check_open_unit("test_fraction", test_fraction)?;
    let mut by_class: Vec<Vec<usize>> = alloc::vec![Vec::new(); dataset.num_classes()];
    for (i, &y) in dataset.labels().iter().enumerate() {
        if let Some(v) = by_class.get_mut(y as usize) {
            v.push(i);
        }
    }
    let mut rng = Rng::from_seed(seed);
    let mut test = Vec::new();
    for members in &by_class {
        let k = libm::round(test_fraction * members.len() as f64) as usize;
        let k = k.min(members.len());
        for j in rng.subset(members.len(), k)? {
            if let Some(&i) = members.get(j) {
                test.push(i);
            }
        }
    }
    test.sort_unstable();
    if test.is_empty() || test.len() >= dataset.len() {
        return invalid(
            "test_fraction",
            test_fraction,
            "such that both stratified parts are non-empty",
        );
    }
    split_at_indices(dataset, &test)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic::gaussian_blobs;
    use alloc::vec;

    #[test]
    fn split_partitions_examples_deterministically() {
        let ds = gaussian_blobs(50, 3, 4, 0.5, 3).unwrap();
        let (tr, te) = split(&ds, 0.2, 5).unwrap();
        assert_eq!((tr.len(), te.len()), (40, 10));
        assert_eq!(split(&ds, 0.2, 5).unwrap(), (tr.clone(), te.clone()));
        assert_ne!(split(&ds, 0.2, 6).unwrap().1, te);
        // every example lands in exactly one part: compare the multisets of rows
        let mut all: Vec<Vec<u64>> = tr
            .iter()
            .chain(te.iter())
            .map(|(x, y)| {
                x.iter()
                    .map(|v| v.to_bits())
                    .chain([u64::from(y)])
                    .collect()
            })
            .collect();
        let mut orig: Vec<Vec<u64>> = ds
            .iter()
            .map(|(x, y)| {
                x.iter()
                    .map(|v| v.to_bits())
                    .chain([u64::from(y)])
                    .collect()
            })
            .collect();
        all.sort();
        orig.sort();
        assert_eq!(all, orig);
        for f in [0.0, 1.0, f64::NAN, 0.001] {
            assert!(split(&ds, f, 0).is_err(), "{f}");
        }
        assert!(split_by_size(&ds, 50, 0).is_err());
        assert!(split_by_size(&ds, 0, 0).is_err());
    }

    #[test]
    fn filter_subset_flatten_and_projection() {
        let ds = Dataset::new(
            vec![1.0, 1.0, 0.3, 0.4, 0.0, 0.0, 0.6, 0.8],
            vec![2, 0, 1, 2],
            (1, 2, 1),
            3,
        )
        .unwrap();
        let f = ds.filter_labels(&[2, 1]).unwrap();
        assert_eq!(f.labels(), &[0, 1, 0]);
        assert_eq!(f.num_classes(), 2);
        assert_eq!(f.features(), &[1.0, 1.0, 0.0, 0.0, 0.6, 0.8]);
        assert!(ds.filter_labels(&[]).is_err());
        assert!(ds.filter_labels(&[1, 1]).is_err());
        assert!(ds.filter_labels(&[3]).is_err());
        let s = ds.subset(&[3, 3, 0]).unwrap();
        assert_eq!(s.labels(), &[2, 2, 2]);
        assert!(ds.subset(&[4]).is_err());
        assert!(ds.subset(&[]).is_err());
        assert_eq!(ds.clone().flatten().shape(), (1, 1, 2));
        let p = ds.project_to_unit_ball();
        let (x0, _) = p.example(0).unwrap();
        // (1, 1) → (1/√2, 1/√2) shrunk by (dim + 4)ε = 6ε at most: 1e-15 relative tolerance
        assert!(libm::fabs(x0[0] - core::f64::consts::FRAC_1_SQRT_2) < 1e-15);
        assert_eq!(p.example(1).unwrap().0, &[0.3, 0.4]); // inside the ball: unchanged
        assert_eq!(p.example(2).unwrap().0, &[0.0, 0.0]);
        assert!(p.max_l2_norm() <= 1.0);
    }
}
