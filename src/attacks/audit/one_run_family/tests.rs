//! Tests of the family bound: the Gaussian case against the μ search, soundness by
//! simulation on two non-Gaussian mechanisms (Poisson-subsampled Gaussian, randomised
//! response) with their negative controls, a trainer with half its claimed noise, and bad
//! input.

use super::*;
use crate::attacks::audit::epsilon::{one_run_fdp_epsilon, one_run_guesses};
use crate::attacks::audit::one_run_fdp::one_run_fdp_curve;
use crate::error::error_name;
use crate::math::beta::beta_inc;
use crate::rng::Rng;
use alloc::vec::Vec;

const ALPHA: f64 = 0.05;
const DELTA: f64 = 1e-5;
const M: u64 = 1000;

fn counts(canaries: u64, guesses: u64, correct: u64) -> OneRunCounts {
    OneRunCounts {
        canaries,
        guesses,
        correct,
    }
}

fn family(c: OneRunCounts, run: &Run) -> FamilyBound {
    one_run_fdp_family(c, ALPHA, DELTA, run, 1, &PldConfig::default())
        .unwrap()
        .unwrap()
}

/// The largest K with P[Bin(n, p) > K] ≤ `tail` fails: the smallest K with
/// P[Bin(n, p) ≥ K + 1] ≤ `tail`.
fn binomial_cap(n: u64, p: f64, tail: f64) -> u64 {
    (0..n)
        .find(|&k| beta_inc((k + 1) as f64, (n - k) as f64, p).unwrap() <= tail)
        .unwrap_or(n)
}

/// One run of white-box Dirac canaries in DP-SGD with Poisson sampling at rate q, T steps,
/// noise σ (in units of C): canary j, in with probability ½, adds 1 to its coordinate in a
/// step it is sampled in, and every step adds N(0, σ²); the adversary scores each canary by
/// the likelihood ratio of the claimed mechanism, Σ_t ln(1 − q + q·e^{(2y_t − 1)/(2σ²)}),
/// and guesses "in" on the k highest, "out" on the k lowest. Trial `i` of seed 42.
fn poisson_run(q: f64, sigma: f64, claimed_sigma: f64, steps: u64, k: u64, i: u64) -> OneRunCounts {
    let mut rng = Rng::for_trial(42, i);
    let mut included = Vec::with_capacity(M as usize);
    let mut scores = Vec::with_capacity(M as usize);
    let s2 = 2.0 * claimed_sigma * claimed_sigma;
    for _ in 0..M {
        let inc = rng.bernoulli(0.5).unwrap();
        let mut score = 0.0;
        for _ in 0..steps {
            let hit = inc && rng.bernoulli(q).unwrap();
            let y = f64::from(u8::from(hit)) + sigma * rng.gaussian();
            score += libm::log(1.0 - q + q * libm::exp((2.0 * y - 1.0) / s2));
        }
        included.push(inc);
        scores.push(score);
    }
    one_run_guesses(&scores, &included, k, k).unwrap()
}

/// One run of randomised response at ε₀: canary j, in with probability ½, is seen as 1 with
/// probability e^ε₀/(1 + e^ε₀) if in and 1/(1 + e^ε₀) if out; "in" guessed on the 500
/// highest (ties in index order, independent of the inclusions), "out" on the 500 lowest.
fn rr_run(eps0: f64, i: u64) -> OneRunCounts {
    let mut rng = Rng::for_trial(7, i);
    let p = libm::exp(eps0) / (1.0 + libm::exp(eps0));
    let mut included = Vec::with_capacity(M as usize);
    let mut scores = Vec::with_capacity(M as usize);
    for _ in 0..M {
        let inc = rng.bernoulli(0.5).unwrap();
        let truthful = rng.bernoulli(p).unwrap();
        included.push(inc);
        scores.push(f64::from(u8::from(inc == truthful)));
    }
    one_run_guesses(&scores, &included, M / 2, M / 2).unwrap()
}

#[test]
fn full_batch_family_bound_is_the_gdp_bound_within_its_one_percent_search() {
    // One full-batch step is exactly μ-GDP with μ = 1/σ, so the family of the run is the
    // Gaussian family: the family bound is the μ search's bound, less what stopping the
    // scale search at 1 % costs (the refuted end is reported: never above). Tolerance:
    // within 0 and −6 % of the GDP ε (1 % in σ moves ε by under 3 % here; 6 % leaves room).
    let run = Run::full_batch(1.0, 1).unwrap();
    for (r, v) in [(100u64, 100u64), (200, 190), (1000, 731), (100, 90)] {
        let c = counts(M, r, v);
        let b = family(c, &run);
        let gdp = one_run_fdp_epsilon(c, ALPHA, DELTA, 1).unwrap();
        assert!(
            b.epsilon <= gdp * (1.0 + 1e-9) && b.epsilon >= 0.94 * gdp,
            "r {r}, v {v}: family {b:?}, gdp {gdp}"
        );
    }
    // 100 of 100 right refutes σ = 1 (μ = 1; the guesses reach μ ≈ 2.4): claim refuted,
    // and the bound is the ε at the refuted scale below 1
    let b = family(counts(M, 100, 100), &run);
    assert!(b.claim_refuted && b.p_value <= ALPHA, "{b:?}");
    assert!(b.noise_scale.unwrap() < 1.0, "{b:?}");
}

#[test]
fn poisson_mechanism_refutes_its_own_curve_at_most_at_rate_alpha_and_a_false_claim_often() {
    // q = 0.5, σ = 2, T = 4 (certified ε 2.5237 at δ 1e-5; its curve is not Gaussian),
    // 1,000 canaries, 50 + 50 guesses by the likelihood ratio. The family bound exceeds the
    // true ε only if the run's own curve is refuted (module docs), which has probability
    // < α = 0.05 per run: over 400 runs the count is below Bin(400, 0.05), and a count
    // above K has probability ≤ 1e-6 (K from the binomial tail). Observed: see the
    // assertion message; 0 of 400 here). Negative control: the same guesses against the
    // claim of 4·σ (certified ε 0.30: a false claim, the mechanism leaks more) are refuted
    // in most runs (observed 310 of 400; at least 250 required, 7 standard deviations
    // below) — the trials can show a curve above the truth, so the first count is a test
    // that can fail.
    let (q, sigma, steps, k, n) = (0.5, 2.0, 4u64, 50u64, 400u64);
    let run = Run::poisson(q, sigma, steps).unwrap();
    let s = run.as_schedule().unwrap();
    let own = TradeoffCurve::of_schedule(s, PROBE_RESOLUTION, &PldConfig::default()).unwrap();
    let loose = Run::poisson(q, 4.0 * sigma, steps).unwrap();
    let false_claim = TradeoffCurve::of_schedule(
        loose.as_schedule().unwrap(),
        PROBE_RESOLUTION,
        &PldConfig::default(),
    )
    .unwrap();
    let cap = binomial_cap(n, ALPHA, 1e-6);
    let (mut refuted, mut control) = (0u64, 0u64);
    let mut runs = Vec::new();
    for i in 0..n {
        let c = poisson_run(q, sigma, sigma, steps, k, i);
        refuted += u64::from(one_run_fdp_curve(c, ALPHA, &own).unwrap().refuted);
        control += u64::from(one_run_fdp_curve(c, ALPHA, &false_claim).unwrap().refuted);
        runs.push(c);
    }
    assert!(
        refuted <= cap,
        "{refuted} of {n} refuted the true curve (cap {cap})"
    );
    assert!(
        control >= 250,
        "negative control: {control} of {n} refuted 4σ"
    );
    // The full bound on a few runs: never above the truth unless the true curve is refuted
    // in that run (the proof's implication, checked run by run).
    let truth = run::pld_epsilon(&run, DELTA).unwrap().unwrap().value;
    for &c in runs.iter().take(6) {
        let b = family(c, &run);
        let own_refuted = one_run_fdp_curve(c, ALPHA, &own).unwrap().refuted;
        assert!(
            b.epsilon <= truth || own_refuted,
            "{c:?}: {b:?} above {truth}"
        );
    }
}

#[test]
fn randomised_response_counts_read_as_gaussian_overshoot_and_its_own_curve_holds() {
    // Randomised response at ε₀ = 1 is (1, 0)-DP, so no lower bound may exceed 1. Read as a
    // Gaussian curve, its counts (median 731 of 1,000 right) give the GDP-family ε 1.643 at
    // δ 1e-5 — above 1 in about half the runs: the reason that number is labelled "assumes
    // a Gaussian curve" and is not a lower bound for non-Gaussian runs. Negative control
    // (the GDP reading over 1 in ≥ 60 of 200 runs; Bin(200, ½) < 60 has probability ~1e-9).
    // Its own curve f(x) = max(0, 1 − e·x, (1 − x)/e) is refuted in at most K of 200 runs
    // (K at 1e-6 of Bin(200, 0.05)).
    let e = core::f64::consts::E;
    let f = |x: f64| Ok(((1.0 - e * x).max((1.0 - x) / e) * (1.0 - 1e-15)).max(0.0));
    let median = counts(M, M, 731);
    let g = one_run_fdp_epsilon(median, ALPHA, DELTA, 1).unwrap();
    assert!((g - 1.643).abs() < 2e-3, "{g}");
    let cap = binomial_cap(200, ALPHA, 1e-6);
    let (mut over, mut refuted) = (0u64, 0u64);
    for i in 0..200 {
        let c = rr_run(1.0, i);
        over += u64::from(one_run_fdp_epsilon(c, ALPHA, DELTA, 1).unwrap() > 1.0);
        refuted += u64::from(
            crate::attacks::audit::one_run_fdp::one_run_fdp_refutes(c, ALPHA, f).unwrap(),
        );
    }
    assert!(over >= 60, "the GDP reading over ε₀ in {over} of 200");
    assert!(
        refuted <= cap,
        "RR's own curve refuted in {refuted} of 200 (cap {cap})"
    );
}

#[test]
fn a_trainer_with_a_quarter_of_its_noise_is_refuted_in_one_run() {
    // The run claims σ = 2 (q 0.5, T 4: ε 2.52) and adds σ = 0.5 (ε 27.0): one run of
    // 1,000 canaries and 100 guesses refutes the claim, the refuted scale is below 1, and
    // the bound lies between the claimed ε and the ε of what ran; seed 42 trial 0. (At
    // half the noise, ε 6.68, the same guesses reach 1.73: a one-run audit at q = 0.5 sees
    // a canary in half the steps only.)
    let claimed = Run::poisson(0.5, 2.0, 4).unwrap();
    let ran = Run::poisson(0.5, 0.5, 4).unwrap();
    let c = poisson_run(0.5, 0.5, 2.0, 4, 50, 0);
    let b = family(c, &claimed);
    let truth = run::pld_epsilon(&ran, DELTA).unwrap().unwrap().value;
    let claimed_eps = run::pld_epsilon(&claimed, DELTA).unwrap().unwrap().value;
    assert!(
        b.claim_refuted && b.noise_scale.unwrap() < 1.0,
        "{c:?}: {b:?}"
    );
    assert!(
        b.epsilon > claimed_eps && b.epsilon <= truth,
        "{b:?}, {claimed_eps}, {truth}"
    );
}

#[test]
fn unsupported_runs_and_bad_input_are_named() {
    let c = counts(M, 100, 90);
    let cfg = PldConfig::default();
    let fixed = Run::fixed_size(10, 100, 1.0, 10).unwrap();
    assert!(one_run_fdp_family(c, ALPHA, DELTA, &fixed, 1, &cfg)
        .unwrap()
        .is_err());
    let shuffled = Run::shuffled(10, 100, 1.0, 10).unwrap();
    assert_eq!(
        one_run_fdp_family(c, ALPHA, DELTA, &shuffled, 1, &cfg).unwrap(),
        Err(Unsupported::Shuffled)
    );
    let run = Run::poisson(0.1, 1.0, 10).unwrap();
    let name =
        |r: Result<core::result::Result<FamilyBound, Unsupported>>| error_name(r.unwrap_err());
    assert_eq!(
        name(one_run_fdp_family(c, 0.0, DELTA, &run, 1, &cfg)),
        "alpha"
    );
    assert_eq!(
        name(one_run_fdp_family(c, ALPHA, 1.0, &run, 1, &cfg)),
        "delta"
    );
    assert_eq!(
        name(one_run_fdp_family(c, ALPHA, DELTA, &run, 0, &cfg)),
        "candidates"
    );
    assert_eq!(
        name(one_run_fdp_family(
            counts(10, 20, 5),
            ALPHA,
            DELTA,
            &run,
            1,
            &cfg
        )),
        "guesses"
    );
    // no guess right: nothing refuted, ε 0, no scale
    let b = family(counts(M, 100, 0), &run);
    assert_eq!(
        (b.epsilon, b.noise_scale, b.claim_refuted),
        (0.0, None, false)
    );
}
