//! The support (nonzero quads of features) of each example of a sparse data set, kept beside the
//! features so that dense layers can skip zero inputs without scanning them at every step
//! (`nn::batch`, "Zero inputs"). Built once, when the [`Dataset`](super::Dataset) is made; a
//! function of the features only.
//!
//! Beside the per-example lists, a block index holds the same quads by block of 32
//! consecutive examples and, within a block, by quad ([`Support::block`]): the weight sum of
//! a full batch in order visits each quad once per block (`nn::batch`). It costs 33 bytes per
//! nonzero quad (the features copied, so a run is contiguous) on top of the support's 36.
//!
//! The unit is the quad: features 4q..4q + 4 (the last one cut at `dim`), the width of a
//! 4-lane vector. The 8-way dot products of `nn::kernels::dot` put feature j in lane j mod 8,
//! so an even quad fills lanes 0–3 and an odd one lanes 4–7: a kernel that visits a lane
//! group's nonzero quads in increasing order visits each lane's nonzero features in
//! increasing order, and the zero features it also visits (inside a nonzero quad) are the
//! dense loop's own operations.

use crate::autodiff::interleaved_sum;
use alloc::vec::Vec;

/// Largest fraction of nonzero features for which a support is kept (a denser data set has
/// none: its indices would cost more than skipping saves).
const MAX_DENSITY: (usize, usize) = (1, 2);

/// Largest fraction of nonzero quads for which a support is kept (scattered nonzero features
/// leave few zero quads to skip).
const MAX_QUAD_DENSITY: (usize, usize) = (3, 4);

/// Fewest features per example for which a support is kept (below, its 20 bytes per example
/// would outweigh the features it lets a layer skip).
const MIN_DIM: usize = 16;

/// Examples per block of the block index ([`Support::block`]): `nn::batch`'s block size.
pub(crate) const BLOCK: usize = 32;

/// Four features (or weights, or sums) of one quad, aligned to 32 bytes so that a 4-lane
/// vector load or store never straddles two cache lines (unaligned, every other one did, and
/// the stores of the weight sum stalled on them).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[repr(C, align(32))]
pub(crate) struct Quad(pub(crate) [f64; 4]);

impl Quad {
    /// The first four values of `c`, zeros past its end (a quad cut at `dim`). By value: a
    /// slice copy here is a call to `memcpy` per quad.
    #[inline(always)]
    pub(crate) fn padded(c: &[f64]) -> Quad {
        match c.first_chunk::<4>() {
            Some(&a) => Quad(a),
            None => {
                let mut a = [0.0; 4];
                a.iter_mut().zip(c).for_each(|(d, &v)| *d = v);
                Quad(a)
            }
        }
    }
}

/// The number of quads of `dim` features, ⌈dim/4⌉.
pub(crate) fn quads_of(dim: usize) -> usize {
    dim.div_ceil(4)
}

/// Per example: the indices of its nonzero quads (a quad with at least one nonzero feature),
/// the even ones (lanes 0–3) then the odd ones (lanes 4–7), increasing within each; and ‖x‖²
/// summed as `interleaved_sum` sums it; for the data set, the smallest nonzero |feature| (the
/// guard of the skipping fma chains of `nn::batch`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Support {
    /// Every example's nonzero quads, even then odd, one example after the other.
    quads: Vec<u32>,
    /// The features of each quad in `quads` (zeros past `dim`): the kernels read an
    /// example's nonzero quads from here, contiguous, not from its scattered cache lines.
    values: Vec<Quad>,
    /// Example i's quads are `quads[start[i]..start[i + 1]]`; empty when there is no support.
    start: Vec<usize>,
    /// The number of even quads of example i.
    even: Vec<u32>,
    /// ‖x_i‖², as `interleaved_sum(x_i, |v| v·v)` computes it.
    sq_norm: Vec<f64>,
    /// The smallest nonzero |feature| (+∞ if every feature is 0).
    min_nonzero: f64,
    /// The number of nonzero features (for [`Support::appended`]'s thresholds).
    nonzeros: usize,
    /// The block index: the same quads by block of [`BLOCK`] consecutive examples (examples
    /// 32b..32b + 32) and, within a block, by quad. Block b's runs (one per quad nonzero in
    /// one of its examples, in increasing quad order) are `block_runs[b]..block_runs[b + 1]`;
    /// run r is quad `run_quad[r]`, its entries `run_start[r]..run_start[r + 1]`, one per
    /// example of the block with that quad nonzero, in increasing example order. Empty (no
    /// block index) when there is no support.
    block_runs: Vec<usize>,
    /// The quad of each run.
    run_quad: Vec<u32>,
    /// Where each run's entries start (one more than the runs: the end).
    run_start: Vec<usize>,
    /// Each entry's example, counted from the block's first one.
    entry_example: Vec<u8>,
    /// Each entry's features (a copy of the example's quad: a run's are contiguous).
    entry_value: Vec<Quad>,
}

/// The runs of one block of the block index ([`Support::block`]): for each quad nonzero in
/// one of the block's examples, in increasing quad order, the examples (counted from the
/// block's first one, increasing) with that quad nonzero, and their features.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockSupport<'a> {
    run_quad: &'a [u32],
    run_start: &'a [usize],
    entry_example: &'a [u8],
    entry_value: &'a [Quad],
}

impl<'a> BlockSupport<'a> {
    /// Each run: (quad, examples of the block, their features of that quad).
    pub(crate) fn runs(
        &self,
    ) -> impl Iterator<Item = (usize, &'a [u8], &'a [Quad])> + 'a + use<'a> {
        let (ex, val) = (self.entry_example, self.entry_value);
        self.run_quad
            .iter()
            .zip(self.run_start.windows(2))
            .map(move |(&q, w)| {
                let (a, b) = match *w {
                    [a, b] => (a, b),
                    _ => (0, 0),
                };
                (
                    q as usize,
                    ex.get(a..b).unwrap_or_default(),
                    val.get(a..b).unwrap_or_default(),
                )
            })
    }
}

/// One example's support: its nonzero quads by lane group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExampleSupport<'a> {
    quads: &'a [u32],
    values: &'a [Quad],
    even: usize,
    /// ‖x‖² (the bits of `interleaved_sum(x, |v| v·v)`).
    pub(crate) sq_norm: f64,
}

impl<'a> ExampleSupport<'a> {
    /// All nonzero quads, the even ones then the odd ones, increasing within each, and
    /// their features.
    pub(crate) fn all(&self) -> (&'a [u32], &'a [Quad]) {
        (self.quads, self.values)
    }

    /// The nonzero quads of lane group `h` (0: even quads, lanes 0–3; 1: odd quads, lanes
    /// 4–7), increasing, and their features; empty for h ≥ 2.
    pub(crate) fn group(&self, h: usize) -> (&'a [u32], &'a [Quad]) {
        let split = self.even.min(self.quads.len());
        let (even, odd) = self.quads.split_at(split);
        let (ev, ov) = self.values.split_at(split.min(self.values.len()));
        match h {
            0 => (even, ev),
            1 => (odd, ov),
            _ => (&[], &[]),
        }
    }
}

/// A copy of `v` with room for `extra` more.
fn grown<T: Clone>(v: &[T], extra: usize) -> Vec<T> {
    let mut w = Vec::with_capacity(v.len() + extra);
    w.extend_from_slice(v);
    w
}

/// The number of nonzero features and of nonzero quads of `features` (examples of `dim`).
fn counts(features: &[f64], dim: usize) -> (usize, usize) {
    let (mut nonzeros, mut nonzero_quads) = (0usize, 0usize);
    for x in features.chunks_exact(dim) {
        for c in x.chunks(4) {
            let k = c.iter().filter(|&&v| v != 0.0).count();
            nonzeros += k;
            nonzero_quads += usize::from(k > 0);
        }
    }
    (nonzeros, nonzero_quads)
}

/// Whether `examples` examples of `dim` features with these counts keep a support: at most
/// half of the features and three quarters of the quads nonzero.
fn sparse_enough(nonzeros: usize, nonzero_quads: usize, examples: usize, dim: usize) -> bool {
    let total_quads = examples * quads_of(dim);
    nonzeros <= examples * dim / MAX_DENSITY.1 * MAX_DENSITY.0
        && nonzero_quads <= total_quads / MAX_QUAD_DENSITY.1 * MAX_QUAD_DENSITY.0
}

impl Support {
    /// The support of `features` (examples of `dim` values each), or none (every query gives
    /// `None`) if more than half of the features or three quarters of the quads are nonzero,
    /// or `dim` is below 16 or not below `u32::MAX`. Counts first, so dense data costs one
    /// pass and no allocation.
    pub(crate) fn of(features: &[f64], dim: usize) -> Support {
        let none = Support::default();
        if dim < MIN_DIM || dim >= u32::MAX as usize {
            return none;
        }
        let examples = features.len() / dim;
        let (nonzeros, nonzero_quads) = counts(features, dim);
        if !sparse_enough(nonzeros, nonzero_quads, examples, dim) {
            return none;
        }
        let mut s = Support {
            nonzeros,
            quads: Vec::with_capacity(nonzero_quads),
            values: Vec::with_capacity(nonzero_quads),
            start: Vec::with_capacity(examples + 1),
            even: Vec::with_capacity(examples),
            sq_norm: Vec::with_capacity(examples),
            min_nonzero: f64::INFINITY,
            ..Support::default()
        };
        s.start.push(0);
        let mut odd = Vec::new();
        for x in features.chunks_exact(dim) {
            s.push_example(x, &mut odd);
        }
        s.block_runs.push(0);
        s.run_start.push(0);
        s.index_blocks(quads_of(dim), 0);
        s
    }

    /// The support of this support's features with the example `x` appended, exactly
    /// `Support::of` of them (the same thresholds on the new totals, the same lists, the last
    /// block of the index rebuilt), without reading the other examples' features again;
    /// `None` when this data set has no support (a denser one: then call `Support::of`).
    pub(crate) fn appended(&self, x: &[f64], dim: usize) -> Option<Support> {
        if self.start.is_empty() || x.len() != dim {
            return None;
        }
        let examples = self.examples();
        let (nz, nzq) = counts(x, dim);
        let (nonzeros, nonzero_quads) = (self.nonzeros + nz, self.quads.len() + nzq);
        if !sparse_enough(nonzeros, nonzero_quads, examples + 1, dim) {
            return Some(Support::default());
        }
        // A copy with room for the example (one allocation per list, no regrowth).
        let quads = quads_of(dim);
        let mut s = Support {
            quads: grown(&self.quads, quads),
            values: grown(&self.values, quads),
            start: grown(&self.start, 1),
            even: grown(&self.even, 1),
            sq_norm: grown(&self.sq_norm, 1),
            min_nonzero: self.min_nonzero,
            nonzeros,
            block_runs: grown(&self.block_runs, 1),
            run_quad: grown(&self.run_quad, quads),
            run_start: grown(&self.run_start, quads),
            entry_example: grown(&self.entry_example, BLOCK * quads),
            entry_value: grown(&self.entry_value, BLOCK * quads),
        };
        // Drop the last block's index if it is partial (x joins it).
        let from = examples - examples % BLOCK;
        if from < examples {
            let b = from / BLOCK;
            let r = s.block_runs.get(b).copied().unwrap_or(0);
            let e = s.run_start.get(r).copied().unwrap_or(0);
            s.block_runs.truncate(b + 1);
            s.run_quad.truncate(r);
            s.run_start.truncate(r + 1);
            s.entry_example.truncate(e);
            s.entry_value.truncate(e);
        }
        s.push_example(x, &mut Vec::new());
        s.index_blocks(quads, from);
        Some(s)
    }

    /// Appends example `x`'s nonzero quads (even ones, then odd ones), their features and
    /// ‖x‖², and lowers the smallest nonzero |feature|; `odd` is scratch.
    fn push_example(&mut self, x: &[f64], odd: &mut Vec<(u32, Quad)>) {
        odd.clear();
        let first = self.quads.len();
        for (q, c) in (0u32..).zip(x.chunks(4)) {
            let mut any = false;
            for &v in c.iter().filter(|&&v| v != 0.0) {
                any = true;
                self.min_nonzero = self.min_nonzero.min(libm::fabs(v));
            }
            match (any, q % 2) {
                (false, _) => {}
                (true, 0) => {
                    self.quads.push(q);
                    self.values.push(Quad::padded(c));
                }
                (true, _) => odd.push((q, Quad::padded(c))),
            }
        }
        // At most ⌈dim/4⌉ < u32::MAX quads per example.
        self.even.push((self.quads.len() - first) as u32);
        for &(q, v) in odd.iter() {
            self.quads.push(q);
            self.values.push(v);
        }
        self.start.push(self.quads.len());
        self.sq_norm.push(interleaved_sum(x, |v: f64| v * v));
    }

    /// Builds the block index of the examples from `from` (a multiple of [`BLOCK`]; the index
    /// holds the blocks before it) from the per-example quads (`quads` quads per example): per
    /// block a counting sort of its entries by quad, stable, so each run lists its examples
    /// in increasing order.
    fn index_blocks(&mut self, quads: usize, from: usize) {
        let examples = self.sq_norm.len();
        let mut count = alloc::vec![0usize; quads];
        let mut next = alloc::vec![0usize; quads];
        let more = self.quads.len().saturating_sub(self.entry_value.len());
        self.entry_example.reserve_exact(more);
        self.entry_value.reserve_exact(more);
        for first in (from..examples).step_by(BLOCK) {
            let span = |i: usize| {
                let (a, b) = (self.start.get(i).copied(), self.start.get(i + 1).copied());
                a.zip(b).map_or(0..0, |(a, b)| a..b)
            };
            let last = (first + BLOCK).min(examples);
            count.fill(0);
            for i in first..last {
                for &q in self.quads.get(span(i)).unwrap_or_default() {
                    if let Some(c) = count.get_mut(q as usize) {
                        *c += 1;
                    }
                }
            }
            let mut end = self.entry_value.len();
            for (q, (&c, n)) in count.iter().zip(next.iter_mut()).enumerate() {
                if c > 0 {
                    *n = end;
                    end += c;
                    // q < ⌈dim/4⌉ < u32::MAX.
                    self.run_quad.push(q as u32);
                    self.run_start.push(end);
                }
            }
            self.entry_example.resize(end, 0);
            self.entry_value.resize(end, Quad::default());
            for i in first..last {
                let r = span(i);
                let pairs = self.quads.get(r.clone()).unwrap_or_default();
                let values = self.values.get(r).unwrap_or_default();
                for (&q, v) in pairs.iter().zip(values) {
                    if let Some(n) = next.get_mut(q as usize) {
                        if let (Some(e), Some(d)) =
                            (self.entry_example.get_mut(*n), self.entry_value.get_mut(*n))
                        {
                            // i − first < BLOCK = 32.
                            *e = (i - first) as u8;
                            *d = *v;
                        }
                        *n += 1;
                    }
                }
            }
            self.block_runs.push(self.run_quad.len());
        }
    }

    /// Block b of the block index (examples 32b..32b + 32, fewer in the last block), if the
    /// data set has a support and b is one of its blocks.
    pub(crate) fn block(&self, b: usize) -> Option<BlockSupport<'_>> {
        let (&r0, &r1) = (self.block_runs.get(b)?, self.block_runs.get(b + 1)?);
        Some(BlockSupport {
            run_quad: self.run_quad.get(r0..r1)?,
            run_start: self.run_start.get(r0..r1 + 1)?,
            entry_example: &self.entry_example,
            entry_value: &self.entry_value,
        })
    }

    /// The number of examples.
    pub(crate) fn examples(&self) -> usize {
        self.sq_norm.len()
    }

    /// Example `i`'s support, if the data set has one.
    pub(crate) fn example(&self, i: usize) -> Option<ExampleSupport<'_>> {
        let (&a, &b) = (self.start.get(i)?, self.start.get(i + 1)?);
        Some(ExampleSupport {
            quads: self.quads.get(a..b)?,
            values: self.values.get(a..b)?,
            even: *self.even.get(i)? as usize,
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
    use super::{Quad, Support};
    use crate::autodiff::interleaved_sum;

    #[test]
    fn support_lists_nonzero_quads_per_example_even_then_odd() {
        // 18 features per example (quads 0..4, the last one of 2 features). Example 0: nonzero
        // at 1, 9, 3, 15, 17 (quads 0, 2, 0, 3, 4); example 1: none; example 2: at 0.
        let mut f = [0.0; 54];
        (f[1], f[9], f[3], f[15], f[17], f[36]) = (0.5, 0.25, 1.0, 0.125, 2.0, 0.75);
        let s = Support::of(&f, 18);
        let e0 = s.example(0).unwrap();
        assert_eq!(e0.all().0, &[0, 2, 4, 3]);
        assert_eq!(
            (e0.group(0).0, e0.group(1).0, e0.group(2).0),
            (&[0, 2, 4][..], &[3][..], &[][..])
        );
        // Each quad's features, zeros past dim.
        assert_eq!(
            e0.all().1,
            &[
                Quad([0.0, 0.5, 0.0, 1.0]),
                Quad([0.0, 0.25, 0.0, 0.0]),
                Quad([0.0, 2.0, 0.0, 0.0]),
                Quad([0.0, 0.0, 0.0, 0.125])
            ]
        );
        assert_eq!(e0.group(1).1, &[Quad([0.0, 0.0, 0.0, 0.125])]);
        assert_eq!(core::mem::align_of::<Quad>(), 32);
        assert_eq!(
            e0.sq_norm.to_bits(),
            interleaved_sum(&f[..18], |v: f64| v * v).to_bits()
        );
        assert_eq!(s.example(1).unwrap().all().0, &[] as &[u32]);
        assert_eq!(s.example(2).unwrap().group(0).0, &[0]);
        assert!(s.example(3).is_none());
        assert_eq!(s.min_nonzero(), Some(0.125));
    }

    #[test]
    fn block_index_lists_each_blocks_quads_with_their_examples_in_order() {
        // 70 examples of 18 features (blocks of 32, 32 and 6), about a third of the features
        // nonzero; seed fixed. Every block's runs: quads increasing, examples increasing, and
        // together exactly the block's (example, quad, features) of the per-example support.
        let mut r = crate::rng::Rng::from_seed(20_261_128);
        let (n, d) = (70usize, 18usize);
        let f: alloc::vec::Vec<f64> = (0..n * d)
            .map(|_| {
                if r.uniform() < 0.3 {
                    0.5 + r.uniform()
                } else {
                    0.0
                }
            })
            .collect();
        let s = Support::of(&f, d);
        assert_eq!(s.examples(), n);
        for b in 0..3 {
            let runs = s.block(b).unwrap();
            let mut got = alloc::vec::Vec::new();
            let mut last_q = None;
            for (q, ex, val) in runs.runs() {
                assert!(last_q < Some(q) && !ex.is_empty() && ex.len() == val.len());
                assert!(ex.windows(2).all(|w| w[0] < w[1]));
                last_q = Some(q);
                got.extend(
                    ex.iter()
                        .zip(val)
                        .map(|(&e, v)| (32 * b + e as usize, q, *v)),
                );
            }
            let mut want = alloc::vec::Vec::new();
            for i in 32 * b..(32 * b + 32).min(n) {
                let (qs, vs) = s.example(i).unwrap().all();
                want.extend(qs.iter().zip(vs).map(|(&q, v)| (i, q as usize, *v)));
            }
            got.sort_by_key(|&(i, q, _)| (i, q));
            want.sort_by_key(|&(i, q, _)| (i, q));
            assert_eq!(got, want, "block {b}");
        }
        assert!(s.block(3).is_none());
        assert!(Support::default().block(0).is_none());
    }

    #[test]
    fn an_appended_example_gives_the_support_of_the_concatenation() {
        // Exact (PartialEq on every list and the block index): n examples then one more, for
        // n ending a block (32, 64), inside one (1, 45, 999) and the thresholds crossed both
        // ways (a dense example that takes the data over half nonzero: no support; data
        // without a support: None, the caller builds it). Seed fixed.
        let mut r = crate::rng::Rng::from_seed(20_261_130);
        let d = 20usize;
        // Nonzero features only among the first 10 (at most half of them and 3 of 5 quads:
        // every set keeps a support).
        let mut example = |p: f64| -> alloc::vec::Vec<f64> {
            (0..d)
                .map(|j| match j < 10 && r.uniform() < p {
                    true => 0.1 + 0.9 * r.uniform(),
                    false => 0.0,
                })
                .collect()
        };
        for n in [1usize, 32, 45, 64, 999] {
            let mut f: alloc::vec::Vec<f64> = (0..n).flat_map(|_| example(0.5)).collect();
            let s = Support::of(&f, d);
            assert!(s.min_nonzero().is_some(), "n = {n}");
            let x = example(0.5);
            let appended = s.appended(&x, d).unwrap();
            f.extend_from_slice(&x);
            assert_eq!(appended, Support::of(&f, d), "n = {n}");
            assert!(appended.examples() == n + 1);
        }
        // Exactly half nonzero (10 of 20 in one quad pattern that leaves quads zero), then a
        // dense example: the concatenation has no support, and neither has the append.
        let half: alloc::vec::Vec<f64> = (0..d).map(|j| if j < 10 { 0.5 } else { 0.0 }).collect();
        let s = Support::of(&half, d);
        assert!(s.min_nonzero().is_some());
        let dense = alloc::vec![0.5; d];
        let appended = s.appended(&dense, d).unwrap();
        assert!(appended.min_nonzero().is_none());
        assert_eq!(appended, Support::of(&[half.clone(), dense].concat(), d));
        // No support to extend.
        assert!(Support::of(&alloc::vec![0.5; d], d)
            .appended(&half, d)
            .is_none());
        assert!(s.appended(&half[..10], d).is_none());
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
        // Half the features but every quad nonzero: none.
        let g: [f64; 16] = core::array::from_fn(|j| if j % 2 == 0 { 0.5 } else { 0.0 });
        assert!(Support::of(&g, 16).example(0).is_none());
        // Fewer than 16 features: none.
        assert!(Support::of(&[0.25, 0.0], 2).example(0).is_none());
    }
}
