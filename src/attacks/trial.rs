//! Trials: the unit of every attack and audit experiment.
//!
//! A trial is a **pure function of (master seed, trial index)**: everything random in it — the
//! data draw, the prior, the target, the model's initialisation, the training noise, the
//! attack's own coin flips — comes from [`Rng::for_trial`](crate::rng::Rng::for_trial)`(seed, index)` (the crate's one map
//! from a seed and an index to a generator) and from seeds drawn from it in a fixed order. So
//! the outcome of trial i does not depend on which thread, process or machine ran it, nor on
//! what ran before it:
//!
//! - [`run_trials`] (std) spreads trials over threads and returns the outcomes **in index
//!   order**, bit-identical to one thread;
//! - a [`Shard`] K/M is the subset of trials with index ≡ K (mod M): M machines (a Slurm job
//!   array, a Kubernetes Indexed Job — any batch scheduler) each run one shard, and the
//!   command line's `reconbound merge` reassembles the outcomes by index into exactly the
//!   result of a single run;
//! - summaries (success rates and their intervals, [`SuccessRate`]) are computed from the
//!   outcomes in index order only, never from partial aggregates, so a merged run prints the
//!   same bytes as an unsharded one.

use crate::error::{Error, Result};
use crate::math::beta::clopper_pearson;

/// The trials of a run that one process runs: those with index ≡ `index` (mod `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl Shard {
    /// The whole run (shard 0 of 1).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count` (K/M on the command line).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `shard_count` if 0, `shard_index` unless < `count`.
    ///
    /// # Examples
    ///
    /// ```
    /// use reconbound::attacks::trial::Shard;
    /// let s = Shard::new(1, 3)?;
    /// assert_eq!(s.trials(8).collect::<Vec<_>>(), [1, 4, 7]);
    /// assert!(Shard::new(3, 3).is_err());
    /// # Ok::<(), reconbound::Error>(())
    /// ```
    pub fn new(index: u64, count: u64) -> Result<Self> {
        if count == 0 {
            return Err(Error::InvalidCount {
                name: "shard_count",
                value: 0,
                expected: ">= 1",
            });
        }
        if index >= count {
            return Err(Error::InvalidCount {
                name: "shard_index",
                value: index,
                expected: "< the number of shards (shards are numbered 0..M-1)",
            });
        }
        Ok(Shard { index, count })
    }

    /// K, the shard's number (from 0).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// M, the number of shards.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `true` if trial `trial` belongs to this shard.
    pub fn contains(&self, trial: u64) -> bool {
        trial % self.count == self.index
    }

    /// The trial indices of this shard among `total` trials, ascending.
    pub fn trials(&self, total: u64) -> impl Iterator<Item = u64> + use<> {
        let (k, m) = (self.index, self.count);
        (0..total.saturating_sub(k).div_ceil(m)).map(move |j| k + j * m)
    }
}

/// A success count with its two-sided Clopper–Pearson confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuccessRate {
    /// Number of trials n ≥ 1.
    pub trials: u64,
    /// Number of successes k ≤ n.
    pub successes: u64,
    /// k/n.
    pub rate: f64,
    /// Lower end of the interval (0 when k = 0).
    pub lower: f64,
    /// Upper end of the interval (1 when k = n).
    pub upper: f64,
    /// The interval's confidence level 1 − α (e.g. 0.95), split α/2 per side.
    pub confidence: f64,
}

/// k successes in n trials, with the two-sided Clopper–Pearson interval at `confidence`.
///
/// # Formula
///
/// lower = Beta⁻¹(α/2; k, n − k + 1), upper = Beta⁻¹(1 − α/2; k + 1, n − k), α = 1 −
/// `confidence` ([`clopper_pearson`], which widens both ends by a relative 4e-12 to cover
/// its own rounding): the interval covers the true rate with probability ≥ `confidence`.
///
/// # Citations
///
/// Clopper & Pearson 1934; used for attack success rates by Hayes, Mahloujifar, Balle 2023,
/// App. A ("95 % confidence intervals around our lower bound estimate").
///
/// # Errors
///
/// As [`clopper_pearson`]; [`Error::InvalidParameter`] `confidence` unless in (0, 1).
///
/// # Examples
///
/// ```
/// use reconbound::attacks::trial::success_rate;
/// let s = success_rate(210, 1000, 0.95)?;
/// assert!(s.lower < 0.21 && 0.21 < s.upper && s.upper - s.lower < 0.06);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn success_rate(successes: u64, trials: u64, confidence: f64) -> Result<SuccessRate> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(Error::InvalidParameter {
            name: "confidence",
            value: confidence,
            expected: "in (0, 1)",
        });
    }
    let ci = clopper_pearson(successes, trials, (1.0 - confidence) / 2.0)?;
    Ok(SuccessRate {
        trials,
        successes,
        rate: successes as f64 / trials as f64,
        lower: ci.lower,
        upper: ci.upper,
        confidence,
    })
}

#[cfg(feature = "std")]
std::thread_local! {
    /// The interruption flag of the runs started on this thread ([`with_interrupt`]).
    static INTERRUPT: core::cell::RefCell<Option<std::sync::Arc<core::sync::atomic::AtomicBool>>> =
        const { core::cell::RefCell::new(None) };
}

/// Runs `f` on this thread with `flag` as the interruption flag of every [`run_trials`] it
/// starts (also through the command line's `cli::run`): once `flag` is set (from any thread —
/// a Ctrl-C handler, the Python package on `KeyboardInterrupt`), each worker stops before its
/// next trial and the run returns [`Error::Interrupted`]; trials already running finish, so a
/// run stops within about one trial's time. The flag only stops runs; it never changes a
/// result that is returned. The previous flag of this thread is restored when `f` returns.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::trial::{run_trials, with_interrupt};
/// use reconbound::Error;
/// use std::sync::{atomic::{AtomicBool, Ordering}, Arc};
/// let flag = Arc::new(AtomicBool::new(false));
/// let seen = flag.clone();
/// let r = with_interrupt(flag.clone(), || {
///     run_trials(&[0, 1, 2, 3], 1, |i| { if i == 1 { seen.store(true, Ordering::Relaxed) } Ok(i) }, &|_| {})
/// });
/// assert_eq!(r, Err(Error::Interrupted));
/// # Ok::<(), reconbound::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn with_interrupt<R>(
    flag: std::sync::Arc<core::sync::atomic::AtomicBool>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<std::sync::Arc<core::sync::atomic::AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            INTERRUPT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let _restore = Restore(INTERRUPT.with(|c| c.borrow_mut().replace(flag)));
    f()
}

/// Runs `trial(i)` for every index in `indices` on up to `threads` threads and returns the
/// outcomes in the order of `indices`. Thread j runs the indices at positions j, j + threads,
/// …; since each trial is a pure function of its index, the result is the same bits for every
/// thread count. `progress(done)` is called (from the worker threads) after each trial with
/// the number of trials finished so far.
///
/// # Errors
///
/// [`Error::InvalidCount`] `threads` if 0; otherwise the error of the failed trial with the
/// smallest position in `indices` (the same error whatever the thread count);
/// [`Error::Interrupted`] if the interruption flag of [`with_interrupt`] was set.
///
/// # Examples
///
/// ```
/// use reconbound::attacks::trial::run_trials;
/// use reconbound::rng::Rng;
/// let draw = |i: u64| Ok(Rng::for_trial(7, i).uniform());
/// let one = run_trials(&[0, 1, 2, 3, 4], 1, draw, &|_| {})?;
/// let two = run_trials(&[0, 1, 2, 3, 4], 2, draw, &|_| {})?;
/// assert_eq!(one, two);
/// # Ok::<(), reconbound::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn run_trials<T, F>(
    indices: &[u64],
    threads: usize,
    trial: F,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<std::vec::Vec<T>>
where
    T: Send,
    F: Fn(u64) -> Result<T> + Sync,
{
    use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::vec::Vec;
    if threads == 0 {
        return Err(Error::InvalidCount {
            name: "threads",
            value: 0,
            expected: ">= 1",
        });
    }
    let threads = threads.min(indices.len().max(1));
    let done = AtomicUsize::new(0);
    // After a failure, workers skip positions beyond the first failed one (a later failure
    // cannot be reported, an earlier one still runs).
    let failed_at = AtomicUsize::new(usize::MAX);
    let stop = AtomicBool::new(false);
    let interrupt = INTERRUPT.with(|c| c.borrow().clone());
    let interrupted = || interrupt.as_ref().is_some_and(|f| f.load(Ordering::SeqCst));
    let work = |j: usize| -> Vec<(usize, Result<T>)> {
        let mut out = Vec::new();
        for pos in (j..indices.len()).step_by(threads) {
            if stop.load(Ordering::Relaxed) && pos > failed_at.load(Ordering::Relaxed) {
                break;
            }
            let Some(&i) = indices.get(pos) else { break };
            let r = if interrupted() {
                Err(Error::Interrupted)
            } else {
                trial(i)
            };
            if r.is_err() {
                failed_at.fetch_min(pos, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
            }
            out.push((pos, r));
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        }
        out
    };
    let mut panicked = false;
    let mut parts: Vec<Vec<(usize, Result<T>)>> = if threads == 1 {
        std::vec![work(0)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|j| s.spawn(move || work(j))).collect();
            handles
                .into_iter()
                .filter_map(|h| match h.join() {
                    Ok(part) => Some(part),
                    Err(_) => {
                        panicked = true;
                        None
                    }
                })
                .collect()
        })
    };
    if panicked {
        // A bug, not an input error (the library does not panic on valid input); one thread
        // lets the panic propagate instead.
        return Err(Error::Numerical {
            what: "a trial thread panicked",
            value: f64::NAN,
        });
    }
    let mut slots: Vec<Option<Result<T>>> = (0..indices.len()).map(|_| None).collect();
    for part in parts.iter_mut() {
        for (pos, r) in part.drain(..) {
            if let Some(slot) = slots.get_mut(pos) {
                *slot = Some(r);
            }
        }
    }
    if interrupted() {
        // Whichever position saw it first: an interrupted run returns no outcomes.
        return Err(Error::Interrupted);
    }
    let mut out = Vec::with_capacity(indices.len());
    for slot in slots {
        match slot {
            Some(Ok(t)) => out.push(t),
            Some(Err(e)) => return Err(e),
            None => {
                return Err(Error::Inconsistent {
                    what: "a trial was not run",
                    value: out.len() as f64,
                })
            }
        }
    }
    Ok(out)
}

/// The number of threads to use by default: the machine's available parallelism (1 if it
/// cannot be determined).
#[cfg(feature = "std")]
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use alloc::vec::Vec;

    #[test]
    fn shards_partition_the_trials() {
        for total in [0u64, 1, 7, 10, 11] {
            for m in 1..5u64 {
                let mut all: Vec<u64> = (0..m)
                    .flat_map(|k| Shard::new(k, m).unwrap().trials(total).collect::<Vec<_>>())
                    .collect();
                all.sort_unstable();
                assert_eq!(all, (0..total).collect::<Vec<_>>(), "total {total}, m {m}");
            }
        }
        assert!(Shard::new(0, 0).is_err());
        assert_eq!(
            Shard::new(2, 2).unwrap_err().parameter(),
            Some("shard_index")
        );
        assert!(Shard::new(2, 3).unwrap().contains(5));
    }

    #[test]
    #[cfg(feature = "std")]
    fn an_interrupted_run_stops_before_its_next_trials_and_an_unset_flag_changes_nothing() {
        use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let indices: Vec<u64> = (0..1000).collect();
        let f = |i: u64| Ok(Rng::for_trial(3, i).gaussian().to_bits());
        let plain = run_trials(&indices, 2, f, &|_| {}).unwrap();
        let unset = Arc::new(AtomicBool::new(false));
        assert_eq!(
            with_interrupt(unset, || run_trials(&indices, 2, f, &|_| {})).unwrap(),
            plain
        );
        for threads in [1, 2, 4] {
            let flag = Arc::new(AtomicBool::new(false));
            let ran = AtomicUsize::new(0);
            // The 10th trial to start (on whichever thread) sets the flag.
            let g = |i: u64| {
                if ran.fetch_add(1, Ordering::SeqCst) + 1 == 10 {
                    flag.store(true, Ordering::SeqCst);
                }
                Ok(i)
            };
            let r = with_interrupt(flag.clone(), || run_trials(&indices, threads, g, &|_| {}));
            assert_eq!(r, Err(Error::Interrupted));
            // No worker starts a trial once it sees the flag: besides the 10, each of the
            // other workers can at most be entering the trial it had checked the flag for.
            let n = ran.load(Ordering::SeqCst);
            assert!(n <= 10 + (threads - 1), "{threads} threads ran {n} trials");
        }
        // The flag is this thread's for the call only: afterwards runs are not interrupted.
        assert_eq!(run_trials(&indices, 2, f, &|_| {}).unwrap(), plain);
    }

    #[test]
    fn threads_give_the_bits_of_one_thread_and_the_first_error() {
        let indices: Vec<u64> = (0..37).collect();
        let f = |i: u64| {
            let mut r = Rng::for_trial(11, i);
            Ok((i, r.gaussian().to_bits()))
        };
        let one = run_trials(&indices, 1, f, &|_| {}).unwrap();
        for t in [2, 3, 8, 64] {
            assert_eq!(run_trials(&indices, t, f, &|_| {}).unwrap(), one);
        }
        let failing = |i: u64| {
            if i == 5 || i == 20 {
                Err(Error::InvalidCount {
                    name: "trial",
                    value: i,
                    expected: "not 5 or 20",
                })
            } else {
                Ok(i)
            }
        };
        for t in [1, 2, 3] {
            let e = run_trials(&indices, t, failing, &|_| {}).unwrap_err();
            assert!(matches!(e, Error::InvalidCount { value: 5, .. }), "{e:?}");
        }
        assert!(run_trials(&indices, 0, f, &|_| {}).is_err());
        assert!(run_trials(&[], 2, f, &|_| {}).unwrap().is_empty());
    }

    #[test]
    fn success_rate_interval_contains_the_rate() {
        let s = success_rate(0, 10, 0.95).unwrap();
        assert_eq!((s.lower, s.rate), (0.0, 0.0));
        let s = success_rate(10, 10, 0.95).unwrap();
        assert_eq!(s.upper, 1.0);
        assert!(success_rate(1, 10, 1.0).is_err());
        assert!(success_rate(11, 10, 0.9).is_err());
    }
}
