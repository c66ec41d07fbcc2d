//! Seeded synthetic data sets for tests and examples. Same arguments and seed → bit-identical
//! data (all randomness from [`crate::rng::Rng`], all math through `libm`).

use super::Dataset;
use crate::error::{check_positive, invalid, Error, Result};
use crate::rng::Rng;
use alloc::vec::Vec;

fn check_sizes(n: usize, dim: usize) -> Result<usize> {
    if n == 0 {
        return Err(Error::InvalidCount {
            name: "n",
            value: 0,
            expected: ">= 1",
        });
    }
    if dim == 0 {
        return Err(Error::InvalidCount {
            name: "dim",
            value: 0,
            expected: ">= 1",
        });
    }
    n.checked_mul(dim).ok_or(Error::InvalidCount {
        name: "n",
        value: n as u64,
        expected: "n × dim representable in usize",
    })
}

/// The logistic function 1/(1 + e^{−t}), in [0, 1] for every finite t.
fn logistic(t: f64) -> f64 {
    1.0 / (1.0 + libm::exp(-t))
}

/// Gaussian blobs: `n` examples in `dim` dimensions from `num_classes` classes, squashed to
/// (0, 1) by the logistic function.
///
/// Class centres `c_k ~ N(0, 4·I)` (in logit space) are drawn first; example `i` has label
/// `i mod num_classes` (so class sizes differ by at most one) and features
/// `x_j = 1/(1 + exp(−(c_{k,j} + spread·z_j)))`, `z ~ N(0, I)`. Shape `(1, 1, dim)`.
///
/// # Errors
/// `n`, `dim` or `num_classes` zero, `num_classes > n`, `n × dim` overflowing `usize`;
/// `spread` not finite and positive.
///
/// # Examples
/// ```
/// use reconbound::data::synthetic;
/// let ds = synthetic::gaussian_blobs(100, 5, 3, 0.5, 42)?;
/// assert_eq!((ds.len(), ds.dim(), ds.class_counts()), (100, 5, vec![34, 33, 33]));
/// assert_eq!(ds, synthetic::gaussian_blobs(100, 5, 3, 0.5, 42)?);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn gaussian_blobs(
    n: usize,
    dim: usize,
    num_classes: usize,
    spread: f64,
    seed: u64,
) -> Result<Dataset> {
    let total = check_sizes(n, dim)?;
    if num_classes == 0 || num_classes > n || num_classes > super::MAX_CLASSES {
        return Err(Error::InvalidCount {
            name: "num_classes",
            value: num_classes as u64,
            expected: "in 1..=n and at most MAX_CLASSES (every class present)",
        });
    }
    check_positive("spread", spread)?;
    let mut rng = Rng::from_seed(seed);
    // num_classes <= n, so num_classes × dim <= n × dim does not overflow.
    let centres: Vec<f64> = (0..num_classes * dim)
        .map(|_| 2.0 * rng.gaussian())
        .collect();
    let mut features = Vec::with_capacity(total);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let k = i % num_classes;
        labels.push(k as u32);
        let c = centres.get(k * dim..(k + 1) * dim).unwrap_or(&[]);
        features.extend(c.iter().map(|&cj| logistic(cj + spread * rng.gaussian())));
    }
    Dataset::new(features, labels, (1, 1, dim), num_classes)
}

/// A linearly separable binary data set and its separating direction.
///
/// A unit normal `w` is drawn uniformly on the sphere; each example is drawn uniformly from
/// [0, 1]^dim, rejected while `|w·(x − ½·1)| < margin` (or the product is exactly 0), and
/// labelled `1` if `w·(x − ½·1) > 0`, else `0` (products computed in f64 in coordinate
/// order). Returns the data set (shape `(1, 1, dim)`, 2 classes) and `w`.
///
/// `margin ≤ 0.1` keeps the rejection rate below 29 % in every dimension (a hyperplane
/// section of the unit cube has volume at most √2, Ball 1986).
///
/// # Errors
/// `n` or `dim` zero; `margin` outside [0, 0.1]; [`Error::NotConverged`] if 10,000
/// consecutive draws are rejected (probability below 0.29^10000).
///
/// # Examples
/// ```
/// use reconbound::data::synthetic;
/// let (ds, w) = synthetic::linearly_separable(50, 4, 0.05, 1)?;
/// for (x, y) in ds.iter() {
///     let s: f64 = x.iter().zip(&w).map(|(xi, wi)| wi * (xi - 0.5)).sum();
///     assert!(s.abs() >= 0.05 && (s > 0.0) == (y == 1));
/// }
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn linearly_separable(
    n: usize,
    dim: usize,
    margin: f64,
    seed: u64,
) -> Result<(Dataset, Vec<f64>)> {
    let total = check_sizes(n, dim)?;
    if !(0.0..=0.1).contains(&margin) {
        return invalid("margin", margin, "in [0, 0.1]");
    }
    let mut rng = Rng::from_seed(seed);
    let mut w: Vec<f64> = alloc::vec![0.0; dim];
    loop {
        w.iter_mut().for_each(|v| *v = rng.gaussian());
        let norm = libm::sqrt(w.iter().map(|v| v * v).sum::<f64>());
        if norm > 0.0 {
            w.iter_mut().for_each(|v| *v /= norm);
            break;
        }
    }
    let mut features = Vec::with_capacity(total);
    let mut labels = Vec::with_capacity(n);
    let mut x = alloc::vec![0.0; dim];
    for _ in 0..n {
        let mut accepted = None;
        for _ in 0..10_000 {
            x.iter_mut().for_each(|v| *v = rng.uniform());
            let s: f64 = x.iter().zip(&w).map(|(xi, wi)| wi * (xi - 0.5)).sum();
            if s != 0.0 && libm::fabs(s) >= margin {
                accepted = Some(s > 0.0);
                break;
            }
        }
        let positive = accepted.ok_or(Error::NotConverged {
            what: "linearly_separable rejection sampling",
            value: margin,
        })?;
        features.extend_from_slice(&x);
        labels.push(u32::from(positive));
    }
    Ok((Dataset::new(features, labels, (1, 1, dim), 2)?, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_deterministic_in_range_and_class_separated() {
        let a = gaussian_blobs(300, 8, 3, 0.3, 7).unwrap();
        assert_eq!(a, gaussian_blobs(300, 8, 3, 0.3, 7).unwrap());
        assert_ne!(a, gaussian_blobs(300, 8, 3, 0.3, 8).unwrap());
        assert!(a.features().iter().all(|&v| v > 0.0 && v < 1.0));
        assert_eq!(a.class_counts(), [100, 100, 100]);
        // Nearest-class-mean classification is (almost) perfect for well separated blobs:
        // centres are ~4 logit units apart per coordinate, noise 0.3.
        let d = a.dim();
        let mut means = alloc::vec![0.0; 3 * d];
        for (x, y) in a.iter() {
            for j in 0..d {
                means[y as usize * d + j] += x[j] / 100.0;
            }
        }
        let correct = a
            .iter()
            .filter(|(x, y)| {
                let dist = |k: usize| -> f64 {
                    (0..d)
                        .map(|j| (x[j] - means[k * d + j]) * (x[j] - means[k * d + j]))
                        .sum()
                };
                (0..3).all(|k| dist(*y as usize) <= dist(k))
            })
            .count();
        assert!(correct >= 297, "seed 7: {correct}/300 nearest-mean correct");
        assert!(gaussian_blobs(0, 1, 1, 1.0, 0).is_err());
        assert!(gaussian_blobs(1, 0, 1, 1.0, 0).is_err());
        assert!(gaussian_blobs(1, 1, 0, 1.0, 0).is_err());
        assert!(gaussian_blobs(2, 1, 3, 1.0, 0).is_err());
        assert!(gaussian_blobs(1, 1, 1, 0.0, 0).is_err());
        assert!(gaussian_blobs(usize::MAX, 2, 1, 1.0, 0).is_err());
    }

    #[test]
    fn separable_set_respects_margin_and_both_labels_occur() {
        let (ds, w) = linearly_separable(400, 3, 0.1, 11).unwrap();
        let norm: f64 = w.iter().map(|v| v * v).sum();
        assert!(libm::fabs(norm - 1.0) < 1e-15);
        for (x, y) in ds.iter() {
            let s: f64 = x.iter().zip(&w).map(|(xi, wi)| wi * (xi - 0.5)).sum();
            assert!(libm::fabs(s) >= 0.1 && (s > 0.0) == (y == 1));
        }
        let c = ds.class_counts();
        // symmetric about the centre: each class ~200, sd 10; 6 sd slack
        assert!(c[0].abs_diff(200) < 60, "seed 11: {c:?}");
        assert!(linearly_separable(1, 1, 0.11, 0).is_err());
        assert!(linearly_separable(1, 1, f64::NAN, 0).is_err());
    }
}
