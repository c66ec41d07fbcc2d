//! Batch sampling for DP-SGD: Poisson sampling at rate q = B/n, fixed-size batches without
//! replacement, shuffled epochs and the full batch.
//!
//! Poisson sampling and the full batch have the add/remove analysis of the crate's RDP and
//! PLD accountants ([`Sampling::has_privacy_accounting`]). Fixed-size batches have a
//! replace-one RDP bound ([`crate::accounting::rdp_without_replacement`], Wang, Balle,
//! Kasiviswanathan 2019). Shuffled epochs have none: no ε is claimed for them, and the
//! Poisson ε is not a guarantee (it can underestimate theirs: Chua et al., ICML 2024;
//! Annamalai et al. 2024).

use crate::error::{check_positive, Error, Result};
use crate::rng::Rng;
use alloc::vec::Vec;

/// How DP-SGD draws the batch of each step from n training examples with (nominal / expected)
/// batch size B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Every example independently with probability q = B/n; the realised batch size is
    /// Binomial(n, q). The setting of the subsampled-Gaussian analysis (Abadi et al. 2016;
    /// Mironov, Talwar, Zhang 2019).
    Poisson,
    /// B distinct examples drawn uniformly without replacement, independently at each step.
    FixedSize,
    /// Shuffled epochs: a fresh uniform permutation at the start of each epoch, cut into
    /// ⌊n/B⌋ consecutive batches of exactly B (the last n mod B examples of the permutation
    /// are dropped for that epoch).
    Shuffle,
    /// Every example at every step (B = n, q = 1).
    FullBatch,
}

impl Sampling {
    /// The name used on the command line: `poisson`, `fixed`, `shuffle`, `full`.
    pub fn name(self) -> &'static str {
        match self {
            Sampling::Poisson => "poisson",
            Sampling::FixedSize => "fixed",
            Sampling::Shuffle => "shuffle",
            Sampling::FullBatch => "full",
        }
    }

    /// `true` for the schemes whose ε the crate's accountants compute (Poisson and full
    /// batch, both as Poisson-subsampled Gaussians with q = B/n resp. q = 1, under add/remove
    /// adjacency). Fixed-size and shuffled batches have no add/remove analysis: the Poisson ε
    /// at the same q is **not** a guarantee for them (fixed-size batches have the replace-one
    /// bound of [`crate::accounting::rdp_without_replacement`] instead).
    ///
    /// ```
    /// use reconbound::train::sampling::Sampling;
    /// assert!(Sampling::Poisson.has_privacy_accounting());
    /// assert!(!Sampling::Shuffle.has_privacy_accounting());
    /// ```
    pub fn has_privacy_accounting(self) -> bool {
        matches!(self, Sampling::Poisson | Sampling::FullBatch)
    }
}

/// Draws batches of indices in `0..n` by one [`Sampling`] scheme. The randomness comes from
/// the generator passed to [`BatchSampler::next_batch`] (DP-SGD passes the sampling stream of
/// the step, see [`crate::train::dpsgd`]); shuffled epochs also keep their permutation between
/// calls.
#[derive(Clone, Debug)]
pub struct BatchSampler {
    sampling: Sampling,
    n: usize,
    batch_size: usize,
    rate: f64,
    perm: Vec<usize>,
    cursor: usize,
}

impl BatchSampler {
    /// A sampler over `dataset_size` examples with batch size `batch_size` (the expected size
    /// for Poisson sampling; ignored for [`Sampling::FullBatch`], whose batch size is n).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `dataset_size` if 0; `batch_size` unless in 1..=dataset_size
    /// (any value for the full batch).
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::rng::Rng;
    /// use reconbound::train::sampling::{BatchSampler, Sampling};
    /// let mut s = BatchSampler::new(Sampling::FixedSize, 10, 3)?;
    /// let mut batch = Vec::new();
    /// s.next_batch(&mut Rng::from_seed(1), &mut batch)?;
    /// assert_eq!(batch.len(), 3);
    /// assert_eq!(s.sampling_rate(), 0.3);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(sampling: Sampling, dataset_size: usize, batch_size: usize) -> Result<Self> {
        if dataset_size == 0 {
            return Err(Error::InvalidCount {
                name: "dataset_size",
                value: 0,
                expected: ">= 1",
            });
        }
        let batch_size = if sampling == Sampling::FullBatch {
            dataset_size
        } else {
            batch_size
        };
        if batch_size == 0 || batch_size > dataset_size {
            return Err(Error::InvalidCount {
                name: "batch_size",
                value: batch_size as u64,
                expected: "in 1..=dataset_size",
            });
        }
        let rate = if batch_size == dataset_size {
            1.0
        } else {
            batch_size as f64 / dataset_size as f64
        };
        Ok(BatchSampler {
            sampling,
            n: dataset_size,
            batch_size,
            rate,
            perm: Vec::new(),
            cursor: dataset_size,
        })
    }

    /// The scheme.
    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// The nominal batch size B: the expected size for Poisson sampling, n for the full batch.
    /// DP-SGD divides the noisy sum by B (never by the realised size).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// q = B/n (exactly 1 for the full batch).
    pub fn sampling_rate(&self) -> f64 {
        self.rate
    }

    /// The number of steps of `epochs` passes over the data: ⌈E·n/B⌉ for Poisson and
    /// fixed-size batches (E/q), ⌈E·⌊n/B⌋⌉ for shuffled epochs, ⌈E⌉ for the full batch.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] `epochs` unless finite and > 0, or if the step count
    /// exceeds 10¹⁵.
    ///
    /// ```
    /// use reconbound::train::sampling::{BatchSampler, Sampling};
    /// assert_eq!(BatchSampler::new(Sampling::Poisson, 1600, 64)?.steps_for_epochs(12.0)?, 300);
    /// assert_eq!(BatchSampler::new(Sampling::Shuffle, 100, 30)?.steps_for_epochs(2.0)?, 6);
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn steps_for_epochs(&self, epochs: f64) -> Result<u64> {
        check_positive("epochs", epochs)?;
        let per_epoch = match self.sampling {
            Sampling::Poisson | Sampling::FixedSize => self.n as f64 / self.batch_size as f64,
            Sampling::Shuffle => (self.n / self.batch_size) as f64,
            Sampling::FullBatch => 1.0,
        };
        let t = libm::ceil(epochs * per_epoch);
        if !(t.is_finite() && t <= 1e15) {
            return Err(Error::InvalidParameter {
                name: "epochs",
                value: epochs,
                expected: "giving at most 1e15 steps",
            });
        }
        Ok((t as u64).max(1))
    }

    /// The next batch, written into `batch` (cleared first) as ascending indices in `0..n`.
    /// Poisson sampling draws exactly n 64-bit outputs from `rng` (example i is in the batch
    /// iff the top 53 bits k of its output satisfy k < ⌊q·2⁵³⌋: inclusion probability
    /// ⌊q·2⁵³⌋/2⁵³ ∈ (q − 2⁻⁵³, q], never above the q the accountants use); fixed-size batches use [`Rng::subset`]; shuffled epochs draw a
    /// Fisher–Yates permutation from `rng` when an epoch starts (and nothing otherwise); the
    /// full batch draws nothing.
    ///
    /// # Errors
    ///
    /// None in practice (the sizes were validated by [`BatchSampler::new`]); the `Result` is
    /// that of [`Rng::subset`].
    pub fn next_batch(&mut self, rng: &mut Rng, batch: &mut Vec<usize>) -> Result<()> {
        batch.clear();
        match self.sampling {
            Sampling::Poisson => {
                // q·2⁵³ is exact (a power-of-two scaling); its floor fits in u64.
                let threshold = libm::floor(self.rate * 9_007_199_254_740_992.0) as u64;
                for i in 0..self.n {
                    if (rng.next_u64() >> 11) < threshold {
                        batch.push(i);
                    }
                }
            }
            Sampling::FixedSize => {
                *batch = rng.subset(self.n, self.batch_size)?;
            }
            Sampling::Shuffle => {
                if self.cursor + self.batch_size > self.n {
                    self.perm.clear();
                    self.perm.extend(0..self.n);
                    for i in (1..self.n).rev() {
                        let j = rng.below(i as u64 + 1)? as usize;
                        self.perm.swap(i, j);
                    }
                    self.cursor = 0;
                }
                let end = self.cursor + self.batch_size;
                if let Some(slice) = self.perm.get(self.cursor..end) {
                    batch.extend_from_slice(slice);
                }
                self.cursor = end;
                batch.sort_unstable();
            }
            Sampling::FullBatch => batch.extend(0..self.n),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffled_epochs_visit_every_example_once_per_epoch() {
        let mut s = BatchSampler::new(Sampling::Shuffle, 10, 3).unwrap();
        let mut rng = Rng::from_seed(4);
        let mut b = Vec::new();
        for _epoch in 0..5 {
            let mut seen = [0u32; 10];
            for _ in 0..3 {
                s.next_batch(&mut rng, &mut b).unwrap();
                assert_eq!(b.len(), 3);
                for &i in &b {
                    seen[i] += 1;
                }
            }
            // 9 of 10 examples, each once; one dropped (10 mod 3 = 1).
            assert_eq!(seen.iter().filter(|&&c| c == 1).count(), 9, "{seen:?}");
            assert_eq!(seen.iter().filter(|&&c| c == 0).count(), 1, "{seen:?}");
        }
    }

    #[test]
    fn full_batch_and_fixed_size_batches() {
        let mut rng = Rng::from_seed(1);
        let mut b = Vec::new();
        let mut s = BatchSampler::new(Sampling::FullBatch, 7, 0).unwrap();
        s.next_batch(&mut rng, &mut b).unwrap();
        assert_eq!(b, (0..7).collect::<Vec<_>>());
        assert_eq!((s.batch_size(), s.sampling_rate()), (7, 1.0));
        let mut s = BatchSampler::new(Sampling::FixedSize, 7, 4).unwrap();
        for _ in 0..20 {
            s.next_batch(&mut rng, &mut b).unwrap();
            assert_eq!(b.len(), 4);
            assert!(b.windows(2).all(|w| w[0] < w[1]) && b[3] < 7);
        }
    }

    #[test]
    fn bad_sizes_are_rejected() {
        for (n, b) in [(0, 1), (5, 0), (5, 6)] {
            assert!(
                BatchSampler::new(Sampling::Poisson, n, b).is_err(),
                "{n} {b}"
            );
        }
        let s = BatchSampler::new(Sampling::Poisson, 5, 5).unwrap();
        assert_eq!(s.sampling_rate(), 1.0);
        for e in [0.0, -1.0, f64::NAN, 1e300] {
            assert!(s.steps_for_epochs(e).is_err(), "{e}");
        }
    }
}
