//! The support (nonzero features) of each example of a sparse data set, kept beside the
//! features so that dense layers can skip zero inputs without scanning them at every step
//! (`nn::batch`, "Zero inputs"). Built once, when the [`Dataset`](super::Dataset) is made; a
//! function of the features only.

use crate::autodiff::interleaved_sum;
use alloc::vec::Vec;

/// Largest fraction of nonzero features for which a support is kept (a denser data set has
/// none: its indices would cost more than skipping saves).
const MAX_DENSITY: (usize, usize) = (1, 2);

/// Fewest features per example for which a support is kept (below, its 48 bytes per example
/// would outweigh the features it lets a layer skip).
const MIN_DIM: usize = 16;

/// Per example: the indices of its nonzero features grouped by lane (feature j is in lane
/// j mod 8, the lanes of the 8-way dot products of `nn::kernels::dot`), increasing within a
/// lane, and ‖x‖² summed as `interleaved_sum` sums it; for the data set, the smallest nonzero
/// |feature| (the guard of the skipping fma chains of `nn::batch`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Support {
    /// Every example's nonzero feature indices, lane by lane, one example after the other.
    index: Vec<u32>,
    /// Example i's indices are `index[start[i]..start[i + 1]]`; empty when there is no support.
    start: Vec<usize>,
    /// The end of each lane r of example i, relative to `start[i]`: `lane_end[8i + r]`.
    lane_end: Vec<u32>,
    /// ‖x_i‖², as `interleaved_sum(x_i, |v| v·v)` computes it.
    sq_norm: Vec<f64>,
    /// The smallest nonzero |feature| (+∞ if every feature is 0).
    min_nonzero: f64,
}

/// One example's support: its nonzero features lane by lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExampleSupport<'a> {
    index: &'a [u32],
    lane_end: &'a [u32],
    /// ‖x‖² (the bits of `interleaved_sum(x, |v| v·v)`).
    pub(crate) sq_norm: f64,
}

impl<'a> ExampleSupport<'a> {
    /// All nonzero feature indices (lane by lane, increasing within a lane).
    pub(crate) fn all(&self) -> &'a [u32] {
        self.index
    }

    /// The nonzero feature indices j ≡ r mod 8, increasing (empty for r ≥ 8).
    pub(crate) fn lane(&self, r: usize) -> &'a [u32] {
        let from = match r.checked_sub(1) {
            None => 0,
            Some(p) => self.lane_end.get(p).map_or(0, |&e| e as usize),
        };
        let to = self.lane_end.get(r).map_or(from, |&e| e as usize);
        self.index.get(from..to).unwrap_or_default()
    }
}

impl Support {
    /// The support of `features` (examples of `dim` values each), or none (every query gives
    /// `None`) if more than half of them are nonzero, `dim` is below 16 or not below
    /// `u32::MAX`. Counts the nonzero features first, so dense data costs one pass and no
    /// allocation.
    pub(crate) fn of(features: &[f64], dim: usize) -> Support {
        let none = Support::default();
        if dim < MIN_DIM || dim >= u32::MAX as usize {
            return none;
        }
        let cap = features.len() / MAX_DENSITY.1 * MAX_DENSITY.0;
        let nonzeros = features.iter().filter(|&&v| v != 0.0).count();
        if nonzeros > cap {
            return none;
        }
        let examples = features.len() / dim;
        let mut s = Support {
            index: Vec::with_capacity(nonzeros),
            start: Vec::with_capacity(examples + 1),
            lane_end: Vec::with_capacity(8 * examples),
            sq_norm: Vec::with_capacity(examples),
            min_nonzero: f64::INFINITY,
        };
        s.start.push(0);
        let mut nonzero: Vec<u32> = Vec::new();
        for x in features.chunks_exact(dim) {
            // One pass for the nonzero features, then a counting sort by lane (stable, so
            // increasing within a lane).
            nonzero.clear();
            let mut count = [0usize; 8];
            for (j, &v) in (0u32..).zip(x) {
                if v != 0.0 {
                    nonzero.push(j);
                    s.min_nonzero = s.min_nonzero.min(libm::fabs(v));
                    if let Some(c) = count.get_mut(j as usize % 8) {
                        *c += 1;
                    }
                }
            }
            let first = s.index.len();
            let mut next = [0usize; 8];
            let mut end = 0;
            for (n, c) in next.iter_mut().zip(count) {
                *n = first + end;
                end += c;
                // At most dim ≤ u32::MAX indices per example.
                s.lane_end.push(end as u32);
            }
            s.index.resize(first + end, 0);
            for &j in &nonzero {
                if let Some(n) = next.get_mut(j as usize % 8) {
                    if let Some(slot) = s.index.get_mut(*n) {
                        *slot = j;
                    }
                    *n += 1;
                }
            }
            if s.index.len() > cap {
                return none;
            }
            s.start.push(s.index.len());
            s.sq_norm.push(interleaved_sum(x, |v: f64| v * v));
        }
        s
    }

    /// Example `i`'s support, if the data set has one.
    pub(crate) fn example(&self, i: usize) -> Option<ExampleSupport<'_>> {
        let (&a, &b) = (self.start.get(i)?, self.start.get(i + 1)?);
        Some(ExampleSupport {
            index: self.index.get(a..b)?,
            lane_end: self.lane_end.get(8 * i..8 * i + 8)?,
            sq_norm: *self.sq_norm.get(i)?,
        })
    }

    /// The smallest nonzero |feature| of the data set, if it has a support.
    pub(crate) fn min_nonzero(&self) -> Option<f64> {
        (!self.start.is_empty()).then_some(self.min_nonzero)
    }
}

#[cfg(test)]
mod tests {
    use super::Support;
    use crate::autodiff::interleaved_sum;

    #[test]
    fn support_lists_nonzero_indices_per_example_by_lane() {
        // 16 features per example. Example 0: nonzero at 1, 9, 3, 15 (lanes 1, 1, 3, 7);
        // example 1: none; example 2: at 0.
        let mut f = [0.0; 48];
        (f[1], f[9], f[3], f[15], f[32]) = (0.5, 0.25, 1.0, 0.125, 0.75);
        let s = Support::of(&f, 16);
        let e0 = s.example(0).unwrap();
        assert_eq!(e0.all(), &[1, 9, 3, 15]);
        assert_eq!(
            (e0.lane(0), e0.lane(1), e0.lane(3), e0.lane(7), e0.lane(8)),
            (&[][..], &[1, 9][..], &[3][..], &[15][..], &[][..])
        );
        assert_eq!(
            e0.sq_norm.to_bits(),
            interleaved_sum(&f[..16], |v: f64| v * v).to_bits()
        );
        assert_eq!(s.example(1).unwrap().all(), &[] as &[u32]);
        assert_eq!(s.example(2).unwrap().lane(0), &[0]);
        assert!(s.example(3).is_none());
        assert_eq!(s.min_nonzero(), Some(0.125));
    }

    #[test]
    fn support_is_not_kept_for_dense_or_narrow_data() {
        // 9 of 16 nonzero: more than half, no support; exactly half: kept.
        let mut f = [0.0; 16];
        f[..9].fill(0.5);
        let s = Support::of(&f, 16);
        assert!(s.example(0).is_none() && s.min_nonzero().is_none());
        f[8] = 0.0;
        assert!(Support::of(&f, 16).example(0).is_some());
        // Fewer than 16 features: none.
        assert!(Support::of(&[0.25, 0.0], 2).example(0).is_none());
    }
}
