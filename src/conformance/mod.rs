//! Does a DP-SGD trainer do what its accountant assumes? Tests of one trainer's observed
//! behaviour against the mechanism of DP-SGD's analysis (Abadi et al. 2016; Mironov, Talwar &
//! Zhang 2019): records sampled independently with probability q, every per-example gradient
//! clipped to C, Gaussian noise of standard deviation σ·C added to the sum, the sum divided by
//! a constant (the expected batch size), T steps. The trainer is driven from outside (the
//! Python package's `reconbound.conformance` adapters for Opacus, jax_privacy and a numpy
//! reference); this module holds every statistic.
//!
//! Each test has a stated false-alarm rate α: an honest trainer fails it with probability at
//! most α (exactly, not asymptotically: Clopper–Pearson intervals for counts, the
//! Laurent–Massart χ² tail bounds for the noise), and the deterministic tests (clipping,
//! normalisation, steps) never fail an honest trainer.
//!
//! - [`sampler`]: from the batches' record indices over T steps on N records —
//!   `sampler-rate` (the inclusions K of N·T independent Bernoulli(q) draws: q inside the
//!   two-sided Clopper–Pearson interval of K), `sampler-batch-sizes` (a Poisson batch size is
//!   Binomial(N, q), so the steps whose batch has exactly B₀ = round(N·q) records are
//!   Binomial(T, p₀), p₀ = P[Bin(N, q) = B₀]; too many of them — constant batches of
//!   shuffled or fixed-size sampling — is refuted one-sided), `sampler-independence` (a record
//!   is in both batches of a disjoint pair of steps (2k, 2k + 1) with probability q′², q′ the
//!   rate it is sampled at, independently over records and pairs; shuffling puts a record in
//!   at most one batch an epoch, so too few such pairs — and a record twice in one batch —
//!   refute it. So that a wrong rate fails the rate test only, the pairs' Clopper–Pearson
//!   interval (α/4 a side) must meet the square of the rate's (α/4 a side): whatever q′, an
//!   independent sampler fails with probability ≤ α).
//! - [`noise`]: the update's coordinates with zero per-example gradients, multiplied by the
//!   normaliser over C (so that they are N(0, σ²) under the mechanism): with S = Σ zᵢ² over
//!   n coordinates, χ²ₙ's tails (Laurent & Massart 2000, Lemma 1: P[χ²ₙ − n ≥ 2√(nt) + 2t] ≤
//!   e^{−t}, P[n − χ²ₙ ≥ 2√(nt)] ≤ e^{−t}) give S/(n + 2√(nt) + 2t) ≤ σ² ≤ S/(n − 2√(nt)),
//!   each with probability ≥ 1 − e^{−t}, t = ln(2/α). The claimed σ outside is refuted:
//!   below the interval is less noise than claimed (optimistic), above it more (conservative).
//! - [`noise_gaussian`]: the same coordinates over σ against the standard normal: the
//!   Kolmogorov distance of their empirical distribution from Φ beyond the
//!   Dvoretzky–Kiefer–Wolfowitz–Massart band √(ln(2/α)/(2n)) refutes a Gaussian noise of the
//!   claimed scale (another shape, or another scale). `expected` is the band's radius.
//! - [`updates`]: noiseless steps (σ = 0) where every example's gradient has the same
//!   direction and a norm far above C: the update's norm times the normaliser over C is the
//!   realised batch size b_t exactly when each example contributes C (clipping) and the sum
//!   is divided by the constant expected batch size (normalisation). The contribution c =
//!   median(ratio_t / b_t) is C·E/D for a trainer that clips to C and divides by a constant D
//!   (the claimed E, or 1 for a trainer that releases the sum):
//!   a clipping norm C′ and a normaliser D cannot be told apart from updates alone, and only
//!   their ratio matters for privacy (dividing by a constant is post-processing), so the noise
//!   test measures the noise in units of c (the Python kit divides its coordinates by it): a
//!   clipping norm above the claimed one shows as less noise. `clipping` compares c at two
//!   gradient norms, 1000·C and 10·C: it fails when c grows by more than [`CLIPPING_GROWTH`]
//!   (no clipping: 100×), whatever D is; `normalisation` when a step's ratio is
//!   not c·b_t (dividing by the realised batch, as Opacus #571 and #819 describe, makes it the
//!   constant expected size instead), so each fault fails its own test.
//! - [`steps`]: the steps the accountant recorded against the optimizer steps taken.
//!
//! # Citations
//! Abadi et al. 2016 (DP-SGD); Mironov, Talwar & Zhang 2019 (the sampled Gaussian);
//! Clopper & Pearson 1934; Laurent & Massart 2000, Ann. Statist. 28(5), Lemma 1; Chua et al.
//! ICML 2024 (shuffled batches accounted as Poisson).

#[cfg(test)]
mod tests;

use alloc::vec;

use crate::error::{check_count, check_open_unit, check_positive, check_unit_rate, Error, Result};
use crate::math::beta::clopper_pearson;
use crate::math::special::ln_binomial;

/// The clipping test's limit on how much the contribution per example may grow when the
/// gradients grow from 10·C to 1000·C: 1 when both are clipped (up to the spread of the
/// batches drawn, a few per cent), 100 when neither is; 2 separates them whatever constant
/// the trainer divides by.
pub const CLIPPING_GROWTH: f64 = 2.0;

/// The most count trials a Clopper–Pearson interval here takes (N·T records-steps).
pub const MAX_TRIALS: u64 = 9_999_999;

/// One test's result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestResult {
    /// The test: `sampler-rate`, `sampler-batch-sizes`, `sampler-independence`, `noise`,
    /// `noise-gaussian`, `clipping`, `normalisation`, `steps`.
    pub name: &'static str,
    /// Whether the trainer passed.
    pub passed: bool,
    /// The false-alarm rate (0 for a deterministic test).
    pub alpha: f64,
    /// What was measured (a rate, a noise multiplier, a ratio, a count).
    pub measured: f64,
    /// Its lower confidence limit (at the test's level; the value itself when exact).
    pub measured_lower: f64,
    /// Its upper confidence limit.
    pub measured_upper: f64,
    /// What the mechanism gives.
    pub expected: f64,
    /// What a failure means, in words (empty when passed).
    pub finding: &'static str,
}

impl TestResult {
    fn exact(
        name: &'static str,
        passed: bool,
        measured: f64,
        expected: f64,
        finding: &'static str,
    ) -> Self {
        TestResult {
            name,
            passed,
            alpha: 0.0,
            measured,
            measured_lower: measured,
            measured_upper: measured,
            expected,
            finding: if passed { "" } else { finding },
        }
    }
}

fn check_alpha(alpha: f64) -> Result<f64> {
    let a = check_open_unit("alpha", alpha)?;
    if a > 0.5 {
        return Err(Error::InvalidParameter {
            name: "alpha",
            value: a,
            expected: "in (0, 0.5]",
        });
    }
    Ok(a)
}

/// The sampler's three tests (module docs) on `batches`, the record indices (in 0..N) of each
/// step's batch, for Poisson sampling at rate `sampling_rate` from `dataset_size` = N
/// records; each test at false-alarm rate `alpha`.
///
/// # Errors
/// `sampling_rate` ∉ (0, 1), `alpha` ∉ (0, ½], N = 0, fewer than 2 steps, an index ≥ N,
/// N·T above [`MAX_TRIALS`]; a budget too small to detect constant batches or shuffling at
/// this α (`steps`: a test that cannot fail is not run).
pub fn sampler(
    batches: &[&[u64]],
    dataset_size: u64,
    sampling_rate: f64,
    alpha: f64,
) -> Result<[TestResult; 3]> {
    let q = check_unit_rate("sampling_rate", sampling_rate)?;
    if q >= 1.0 {
        return Err(Error::InvalidParameter {
            name: "sampling_rate",
            value: q,
            expected: "in (0, 1): the full batch has no sampler to test",
        });
    }
    let alpha = check_alpha(alpha)?;
    let n = check_count("dataset_size", dataset_size, 1, ">= 1")?;
    let t = check_count("steps", batches.len() as u64, 2, ">= 2 batches")?;
    let trials = n
        .checked_mul(t)
        .filter(|&x| x <= MAX_TRIALS)
        .ok_or(Error::InvalidCount {
            name: "steps",
            value: t,
            expected: "dataset_size × steps <= 9999999",
        })?;
    let mut total = 0u64;
    for b in batches {
        for &i in *b {
            if i >= n {
                return Err(Error::InvalidCount {
                    name: "index",
                    value: i,
                    expected: "< dataset_size",
                });
            }
        }
        total += b.len() as u64;
    }
    // rate: K of N·T Bernoulli(q), two-sided
    let ci = clopper_pearson(total.min(trials), trials, alpha / 2.0)?;
    let rate = TestResult {
        name: "sampler-rate",
        passed: total <= trials && ci.lower <= q && q <= ci.upper,
        alpha,
        measured: total as f64 / trials as f64,
        measured_lower: ci.lower,
        measured_upper: ci.upper,
        expected: q,
        finding: "records are included at a rate other than the accounted q",
    };
    // the rate at α/4 a side, for the independence test whatever the rate is
    let rate_ci = clopper_pearson(total.min(trials), trials, alpha / 4.0)?;
    // batch sizes: steps with exactly B₀ records, one-sided (too many)
    let b0 = libm::round(n as f64 * q);
    let ln_p0 = ln_binomial(n as f64, b0)? + b0 * libm::log(q) + (n as f64 - b0) * libm::log1p(-q);
    let p0 = libm::exp(ln_p0);
    // a budget too small to detect anything is refused, not passed: T constant batches
    // refute Poisson only if α^(1/T) > p₀, and no pair in N·⌊T/2⌋ refutes it only if the
    // Clopper–Pearson upper limit of 0 successes, 1 − (α/4)^(1/(N·⌊T/2⌋)), is below q²/2
    if libm::exp(libm::log(alpha) / t as f64) <= p0 {
        return Err(Error::InvalidCount {
            name: "steps",
            value: t,
            expected: "more than ln(alpha)/ln(p0) batches: too few to detect constant batch sizes at this alpha",
        });
    }
    let pair_trials_power = n * (t / 2);
    let zero_upper = -libm::expm1(libm::log(alpha / 4.0) / pair_trials_power as f64);
    if zero_upper >= 0.5 * q * q {
        return Err(Error::InvalidCount {
            name: "steps",
            value: t,
            expected: "enough pairs of steps that a shuffled sampler (no record in both) is refuted at this alpha",
        });
    }
    let at_b0 = batches.iter().filter(|b| b.len() as f64 == b0).count() as u64;
    let ci = clopper_pearson(at_b0, t, alpha)?;
    let sizes = TestResult {
        name: "sampler-batch-sizes",
        passed: ci.lower <= p0,
        alpha,
        measured: at_b0 as f64 / t as f64,
        measured_lower: ci.lower,
        measured_upper: ci.upper,
        expected: p0,
        finding: "too many batches of exactly round(N·q) records: constant batch sizes (shuffled or fixed-size batches), not Poisson",
    };
    // independence: disjoint pairs of steps, a record in both with probability q²
    let mut seen = vec![0u64; n as usize];
    let mut both = 0u64;
    let mut repeated = false;
    let pairs = t / 2;
    for k in 0..pairs as usize {
        let stamp = 2 * k as u64 + 1;
        for &i in batches[2 * k] {
            if seen[i as usize] == stamp {
                repeated = true;
            }
            seen[i as usize] = stamp;
        }
        for &i in batches[2 * k + 1] {
            let s = &mut seen[i as usize];
            if *s == stamp {
                both += 1;
            } else if *s == stamp + 1 {
                repeated = true;
            }
            *s = stamp + 1;
        }
    }
    let pair_trials = n * pairs;
    let ci = clopper_pearson(both.min(pair_trials), pair_trials, alpha / 4.0)?;
    let q2 = q * q;
    // independence at any rate: the pairs' interval must meet the squared rate interval
    let (lo2, hi2) = (rate_ci.lower * rate_ci.lower, rate_ci.upper * rate_ci.upper);
    let independence = TestResult {
        name: "sampler-independence",
        passed: !repeated && ci.lower <= hi2 && lo2 <= ci.upper,
        alpha,
        measured: both as f64 / pair_trials as f64,
        measured_lower: ci.lower,
        measured_upper: ci.upper,
        expected: q2,
        finding: if repeated {
            "a record twice in one batch: sampling with replacement, not Poisson"
        } else {
            "a record's inclusions in two steps are not independent (shuffling puts it in one batch an epoch)"
        },
    };
    Ok([rate, sizes, independence])
}

/// The noise test (module docs): `z` are the update's coordinates with zero per-example
/// gradients times the normaliser over C, N(0, σ²) under the mechanism; `noise_multiplier`
/// is the claimed σ. `measured` is the root mean square of `z`, within
/// [`measured_lower`, `measured_upper`] with probability ≥ 1 − α.
///
/// # Errors
/// `noise_multiplier` not finite and > 0, `alpha` ∉ (0, ½], a non-finite coordinate, fewer
/// coordinates than 4·ln(2/α) + 1 (no upper limit).
///
/// [`measured_lower`]: TestResult::measured_lower
/// [`measured_upper`]: TestResult::measured_upper
pub fn noise(z: &[f64], noise_multiplier: f64, alpha: f64) -> Result<TestResult> {
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let alpha = check_alpha(alpha)?;
    let t = libm::log(2.0 / alpha);
    let n = z.len() as f64;
    if n <= 4.0 * t {
        return Err(Error::InvalidCount {
            name: "coordinates",
            value: z.len() as u64,
            expected: "> 4·ln(2/alpha): too few to bound the noise from above",
        });
    }
    check_coordinates(z)?;
    let s: f64 = z.iter().map(|x| x * x).sum();
    let root = libm::sqrt(n * t);
    // rounding: the sum of squares carries a relative error of at most n·u; widen by 1e-9
    let lower = libm::sqrt(s / (n + 2.0 * root + 2.0 * t) * (1.0 - 1e-9));
    let upper = libm::sqrt(s / (n - 2.0 * root) * (1.0 + 1e-9));
    let passed = lower <= sigma && sigma <= upper;
    Ok(TestResult {
        name: "noise",
        passed,
        alpha,
        measured: libm::sqrt(s / n),
        measured_lower: lower,
        measured_upper: upper,
        expected: sigma,
        finding: if upper < sigma {
            "less noise than claimed: the run spends more privacy than accounted"
        } else {
            "more noise than claimed (conservative)"
        },
    })
}

/// Every noise coordinate finite (the first that is not, named `coordinate`).
fn check_coordinates(z: &[f64]) -> Result<()> {
    match z.iter().find(|x| !x.is_finite()) {
        Some(&x) => Err(Error::InvalidParameter {
            name: "coordinate",
            value: x,
            expected: "finite",
        }),
        None => Ok(()),
    }
}

/// The largest distance between an empirical distribution function and the normal one a
/// DKW–Massart band allows at α: √(ln(2/α)/(2n)).
fn dkw_radius(n: usize, alpha: f64) -> f64 {
    libm::sqrt(libm::log(2.0 / alpha) / (2.0 * n as f64))
}

/// The `noise-gaussian` test (module docs): `z` the same coordinates as [`noise`]'s (N(0, σ²)
/// under the mechanism), standardised by the claimed σ; the Kolmogorov distance
/// D = sup_x |F_n(x) − Φ(x)| of their empirical distribution from the standard normal
/// against the Dvoretzky–Kiefer–Wolfowitz band with Massart's constant,
/// P[D > √(ln(2/α)/(2n))] ≤ α for iid draws of Φ (exact for every n). Detects noise of the
/// right variance but another shape (Laplace, uniform, a mixture) once its distance from Φ
/// exceeds the band's radius (0.0085 for 100,000 coordinates at α = 1e-6), and the wrong
/// scale too (σ/2: D ≈ 0.19).
///
/// # Citations
/// Dvoretzky, Kiefer & Wolfowitz 1956; Massart 1990, Ann. Probab. 18(3) (the constant 2).
///
/// # Errors
/// As [`noise`].
pub fn noise_gaussian(z: &[f64], noise_multiplier: f64, alpha: f64) -> Result<TestResult> {
    let sigma = check_positive("noise_multiplier", noise_multiplier)?;
    let alpha = check_alpha(alpha)?;
    let n = z.len();
    let radius = dkw_radius(n.max(1), alpha);
    if n == 0 || radius >= 0.5 {
        return Err(Error::InvalidCount {
            name: "coordinates",
            value: n as u64,
            expected: "> 2·ln(2/alpha): too few to test the noise's shape",
        });
    }
    check_coordinates(z)?;
    let mut x: alloc::vec::Vec<f64> = z.iter().map(|v| v / sigma).collect();
    x.sort_by(f64::total_cmp);
    let nf = n as f64;
    let mut d = 0.0f64;
    for (i, &v) in x.iter().enumerate() {
        let f = crate::math::normal::cdf(v);
        // F_n jumps from i/n to (i + 1)/n at v
        d = d.max(f - i as f64 / nf).max((i + 1) as f64 / nf - f);
    }
    // Φ is computed to a few ulps: widen the band by 1e-12 in the trainer's favour
    let passed = d <= radius + 1e-12;
    Ok(TestResult {
        name: "noise-gaussian",
        passed,
        alpha,
        measured: d,
        measured_lower: d,
        measured_upper: d,
        expected: radius,
        finding: "the noise is not N(0, (σ·C)²) in units of the clipped sum: another shape or scale (the accountant's curves assume it)",
    })
}

/// The median contribution per example, median(ratio_t / b_t) over steps with b_t > 0.
fn contribution(ratios: &[f64], batch_sizes: &[u64]) -> Result<f64> {
    if ratios.len() != batch_sizes.len() {
        return Err(Error::Inconsistent {
            what: "ratios and batch_sizes of different lengths",
            value: ratios.len() as f64,
        });
    }
    let mut per_example = alloc::vec::Vec::new();
    for (&r, &b) in ratios.iter().zip(batch_sizes) {
        if !(r.is_finite() && r >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "ratio",
                value: r,
                expected: "finite and >= 0",
            });
        }
        if b > 0 {
            per_example.push(r / b as f64);
        }
    }
    if per_example.is_empty() {
        return Err(Error::InvalidCount {
            name: "steps",
            value: 0,
            expected: "at least one step with a non-empty batch",
        });
    }
    per_example.sort_by(f64::total_cmp);
    Ok(per_example[per_example.len() / 2])
}

/// The clipping and normalisation tests (module docs) on noiseless steps at two gradient
/// norms: `ratios[t]` is the update's norm times the claimed normaliser over C, `batch_sizes[t]`
/// the realised batch b_t, with every example's gradient of norm 1000·C (`high`) and 10·C
/// (`low`), one direction. Returns the two tests and the contribution c at 1000·C (the noise
/// test's unit). Normalisation is exact up to the relative `tolerance`.
///
/// # Errors
/// Different lengths, no step with a non-empty batch, a ratio not finite and ≥ 0, `tolerance`
/// ∉ [0, 1).
pub fn updates(
    high: (&[f64], &[u64]),
    low: (&[f64], &[u64]),
    tolerance: f64,
) -> Result<([TestResult; 2], f64)> {
    if !(0.0..1.0).contains(&tolerance) {
        return Err(Error::InvalidParameter {
            name: "tolerance",
            value: tolerance,
            expected: "in [0, 1)",
        });
    }
    let (ratios, batch_sizes) = high;
    let c = contribution(ratios, batch_sizes)?;
    let c_low = contribution(low.0, low.1)?;
    // clipping: a clipped contribution does not grow with the gradient (100× here)
    let growth = c / c_low.max(f64::MIN_POSITIVE);
    // normalisation: every step's ratio is the same multiple c of its realised batch
    let mut worst = 0.0f64;
    for (&r, &b) in ratios.iter().zip(batch_sizes) {
        let want = c * b as f64;
        worst = worst.max(if b > 0 {
            (r - want).abs() / want.max(f64::MIN_POSITIVE)
        } else {
            r
        });
    }
    let clipping = TestResult::exact(
        "clipping",
        growth <= CLIPPING_GROWTH,
        growth,
        1.0,
        "an example's contribution grows with its gradient: clipping is off, or its norm is above 10·C",
    );
    let normalisation = TestResult::exact(
        "normalisation",
        worst <= tolerance,
        worst,
        0.0,
        "the sum is not divided by a constant (the realised batch, for one), which leaks the batch size",
    );
    Ok(([clipping, normalisation], c))
}

/// The steps test: the steps the accountant recorded against the optimizer steps taken.
pub fn steps(taken: u64, accounted: u64) -> TestResult {
    TestResult::exact(
        "steps",
        taken == accounted,
        accounted as f64,
        taken as f64,
        "the accountant recorded another number of steps than the optimizer took",
    )
}
