//! Rényi DP of the Gaussian mechanism on fixed-size batches sampled WITHOUT replacement,
//! under REPLACE-ONE adjacency (Wang, Balle, Kasiviswanathan 2019) — the bound
//! dp_accounting's `RdpAccountant` implements for `SampledWithoutReplacementDpEvent`.
//!
//! # Setting and adjacency
//!
//! Each step draws a uniformly random subset of exactly m of the n examples (m = batch size,
//! n = dataset size, γ = m/n) and releases a Gaussian mechanism on it. Neighbouring datasets
//! have the SAME size n and differ in one example (replace-one, "substitution"): n is public.
//! Add/remove adjacency does not apply (the batch size would reveal the dataset size), so
//! these numbers must not be compared with Poisson add/remove ε as if they were the same
//! guarantee; replace-one ε(δ) is at most the add/remove ε of the group of size 2.
//!
//! The base mechanism's RDP is ε(α) = α/(2σ²), with σ = noise std / replace-one sensitivity
//! (dp_accounting's `GaussianDpEvent(noise_multiplier)` convention: sensitivity 1). For
//! DP-SGD, replacing one example moves the sum of gradients clipped to norm C by up to 2C, so
//! a run with noise std σ_C·C (the usual noise multiplier σ_C) is this mechanism with
//! σ = σ_C/2 — see [`replace_one_noise_multiplier`]. Passing σ_C itself (as if the
//! sensitivity were C) would understate ε.
//!
//! # The bound (WBK 2019, Thm 9, with the ternary-|χ|^α bound of Thm 27 of arXiv:1808.00087)
//!
//! With L(x) = e^{(2x−1)/(2σ²)} the likelihood ratio of N(1, σ²) to N(0, σ²) (sensitivity 1),
//! x ~ N(0, σ²), t = 1/(2σ²), E[L^j] = e^{t j(j−1)} = e^{(j−1)ε(j)} and
//! μ_k = E[(L − 1)^k] (k even), the RDP of one step at integer α ≥ 2 is at most
//!
//! ```text
//! r_α = ln A_α/(α − 1),  A_α = 1 + Σ_{j=2}^{α} C(α,j) γ^j B_j,
//! B_2 = min{4(e^{2t} − 1), 2e^{2t}},
//! B_j = min{4·√(μ_{2⌊j/2⌋}·μ_{2⌈j/2⌉}), 2e^{t j(j−1)}}   (3 ≤ j, α ≤ 256),
//! B_j = 2e^{t j(j−1)}                                       (3 ≤ j, α > 256).
//! ```
//!
//! The first entry of each min is 4× the ternary-|χ|^j divergence bound (Cauchy–Schwarz:
//! E|L−1|^j ≤ √(E(L−1)^{2⌊j/2⌋} E(L−1)^{2⌈j/2⌉})), the second is Theorem 9's
//! 2e^{(j−1)ε(j)} (the factor min{2, (e^{ε(∞)} − 1)^j} is 2 for the Gaussian, ε(∞) = ∞).
//! Like dp_accounting we use the ternary entry only up to α = [`MAX_TERNARY_ORDER`]; above it
//! (orders 512 and 1024 of the default grid) the plain Theorem 9 bound, looser but valid.
//! q = 1 (m = n) gives the plain Gaussian α/(2σ²).
//!
//! *Fractional orders* as dp_accounting (WBK Cor. 10): the cumulant (α − 1)·r_α = ln E[·^α]
//! is convex in α (Hölder), so linear interpolation of the integer-order bounds of ln A
//! between ⌊α⌋ and ⌈α⌉ (ln A_1 = 0) is an upper bound; r_α = that / (α − 1).
//!
//! # Where it is loose
//!
//! - Theorem 9 is an upper bound for ANY base mechanism with RDP ε(·); it does not use the
//!   Gaussian's structure beyond the moments, and the ternary entry bounds E|L−1|^j by
//!   Cauchy–Schwarz and adds a factor 4. The exact RDP of the sampled-without-replacement
//!   Gaussian under replace-one is not known in closed form; this is not it.
//! - Above α = 256 only the cruder 2e^{(j−1)ε(j)} entry is used (dp_accounting's choice; the
//!   ternary entry would be valid there too).
//! - Fractional orders are interpolated (convexity), not computed.
//! - For large σ and m close to n the bound can exceed the plain Gaussian's α/(2σ²) (e.g.
//!   σ = 40, T = 1, 999 of 1000 examples: ε = 0.2087 against 0.1816 for m = n), although
//!   subsampling cannot increase the RDP (joint quasi-convexity). dp_accounting does not take
//!   that minimum and neither do we, so the two agree; the minimum would be valid and tighter.
//! - Conversion to (ε, δ) through RDP loses against a PLD; no PLD is provided here
//!   (dp_accounting's PLD accountant has no `SampledWithoutReplacementDpEvent` either).
//!
//! # Numerics (and a dp_accounting defect)
//!
//! μ_k = Σ_{i=0}^{k} C(k,i)(−1)^{k−i} e^{t i(i−1)} is an alternating sum. dp_accounting
//! evaluates it by repeated differencing in log-magnitude/sign form, which cancels
//! catastrophically for large σ: at σ = 10 its ln μ_32 is off by 9.6 (too large), at σ = 50
//! already ln μ_16 is off by 18 (measured against mpmath at 1200 digits; dp_accounting 0.6.0),
//! so its ternary entry is then meaningless (too large: its bound is looser than the
//! theorem's, not optimistic, in the cases checked). It shows when γ is large: at γ = 1/2,
//! σ = 50, α = 128 dp_accounting gives 0.374, the theorem (mpmath, exact moments) 0.017473;
//! at small γ the j ≥ 3 terms are negligible and both agree to ~1e-12. Here the alternating sum is accepted
//! only when its a-posteriori relative error bound is ≤ 10⁻¹¹, or ≤ 10⁻⁹ with at most three
//! digits lost to cancellation (small σ: the bound is then dominated by the rounding of
//! logarithms of size up to ~10⁵, which the series would share); otherwise μ_k comes from the
//! series of non-negative terms
//!
//! ```text
//! μ_p = Σ_{m≥0} c_{m,p},  c_{0,p} = [p = 0],
//! c_{m+1,p} = t·p(p−1)/(m+1) · (c_{m,p−2} + 2c_{m,p−1} + c_{m,p}),
//! ```
//!
//! (expand e^{t i(i−1)} = Σ_m t^m (i^{\underline 2})^m/m! in falling factorials, whose
//! products have non-negative coefficients; Δ^p i^{\underline p}|₀ = p!), summed in log
//! space with a tracked rounding bound, and truncated when the rigorous tail bound
//! Σ_{m>M} c_{m,p} ≤ x^{M+1}/(M+1)!·(1 − x/(M+2))⁻¹, x = t p(p−1) (from
//! c_{m,p} ≤ (t p(p−1))^m/m!), is below 10⁻¹⁷ of the partial sum. If neither certifies μ_k
//! within its budget, the ternary entry is dropped for the j that need it (valid, looser).
//! All rounding errors are bounded and the returned RDP is rounded upward.

use crate::accounting::rdp::{
    compose, epsilon_from_rdp, Conversion, EpsilonBound, LogSum, DEFAULT_ORDERS,
};
use crate::error::{check_count, check_open_unit, check_order, check_positive, check_steps};
use crate::error::{invalid, Error, Result};

const EPS: f64 = f64::EPSILON;
const LN_2: f64 = core::f64::consts::LN_2;

/// Largest Rényi order at which the ternary-|χ|^j entry is used (dp_accounting's `max_alpha`).
pub const MAX_TERNARY_ORDER: u64 = 256;
/// Largest Rényi order accepted (the sum has α terms).
pub const MAX_ORDER: f64 = 1.0e6;
/// Index bound of the moment table (even moments up to 2·⌈256/2⌉).
const NMOM: usize = MAX_TERNARY_ORDER as usize + 1;
/// Step budget of the non-negative series for the moments.
const SERIES_MAX_STEPS: u64 = 20_000;

fn round_up(x: f64) -> f64 {
    x + libm::fabs(x) * 4.0 * EPS
}

/// The noise multiplier of a DP-SGD run (noise std σ_C·C for gradients clipped to norm C)
/// expressed relative to the replace-one sensitivity of the sum of clipped gradients, 2C.
///
/// # Formula
/// σ = σ_C / 2: replacing one example changes Σ_i clip(g_i) by at most 2C.
///
/// # Citations
/// Wang, Balle, Kasiviswanathan 2019, Sec. 2 (replace-one / substitution adjacency);
/// dp_accounting's `GaussianDpEvent` noise multiplier is std / sensitivity.
///
/// # Errors
/// `noise_multiplier` not finite and > 0.
///
/// # Examples
/// ```
/// use reconbound::accounting::rdp_without_replacement::replace_one_noise_multiplier;
/// assert_eq!(replace_one_noise_multiplier(1.1).unwrap(), 0.55);
/// ```
pub fn replace_one_noise_multiplier(noise_multiplier: f64) -> Result<f64> {
    let half = check_positive("noise_multiplier", noise_multiplier)? * 0.5;
    if half == 0.0 {
        // the smallest subnormal halves to 0: name the value the user gave
        return invalid(
            "noise_multiplier",
            noise_multiplier,
            "finite and > 0 (and its half must be > 0)",
        );
    }
    Ok(half)
}

/// Upper bounds of ln μ_k, μ_k = E[(L − 1)^k], even k ≤ 256 (NaN: not certified).
struct Moments {
    ln_mu: [f64; NMOM],
}

/// ln μ_n by the alternating sum, with a bound on its relative error (∞ if unusable) and the
/// cancellation factor (P + N)/(P − N) of the sum.
fn moment_alternating(t: f64, n: usize) -> (f64, f64, f64) {
    let nf = n as f64;
    let mut pos = LogSum::new();
    let mut neg = LogSum::new();
    let (mut lnc, mut lnc_err, mut max_err) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..=n {
        let fi = i as f64;
        if i >= 1 {
            let step = libm::log((nf - fi + 1.0) / fi);
            lnc += step;
            lnc_err += (libm::fabs(lnc) + 2.0 * libm::fabs(step) + 2.0) * EPS;
        }
        let e = t * (fi * (fi - 1.0)); // fi(fi − 1) is exact
        let v = lnc + e;
        let err = lnc_err + (libm::fabs(v) + libm::fabs(e)) * 2.0 * EPS;
        max_err = max_err.max(err);
        if (n - i) % 2 == 0 {
            pos.add(v);
        } else {
            neg.add(v);
        }
    }
    let (lp, ln) = (pos.value(), neg.value());
    let e = max_err + 2.0 * nf * EPS + (libm::fabs(lp) + libm::fabs(ln)) * EPS;
    if ln >= lp || ln.is_nan() || !lp.is_finite() {
        return (f64::NAN, f64::INFINITY, f64::INFINITY);
    }
    let d = ln - lp;
    let l = lp + libm::log(-libm::expm1(d));
    // |P̂ − P| ≤ P(e^e − 1), likewise N: relative error of P − N ≤ (e^e − 1)(P + N)/(P − N).
    let amp = (1.0 + libm::exp(d)) / (-libm::expm1(d));
    let rel = libm::expm1(e) * 1.01 * amp + 4.0 * EPS * (libm::fabs(l) + 1.0);
    (l, rel, amp)
}

fn log_add3(a: f64, b: f64, c: f64) -> f64 {
    let m = a.max(b).max(c);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + libm::log(libm::exp(a - m) + libm::exp(b - m) + libm::exp(c - m))
}

impl Moments {
    /// Moments μ_2, μ_4, …, μ_{n_max} for t = 1/(2σ²) (see the module docs).
    fn new(t: f64, n_max: usize) -> Self {
        let n_max = n_max.min(NMOM - 1);
        let mut ln_mu = [f64::NAN; NMOM];
        let mut alt = [(f64::NAN, f64::INFINITY); NMOM];
        let mut need = 0usize;
        let mut n = 2;
        while n <= n_max {
            let (l, rel, amp) = moment_alternating(t, n);
            // Mild cancellation (≤ 3 digits lost): the sum is as accurate as the series
            // would be (its error is dominated by rounding of the large logarithms).
            if rel <= 1e-11 || (amp <= 1e3 && rel <= 1e-9) {
                ln_mu[n] = l + 2.0 * rel;
            } else {
                alt[n] = (l, rel);
                need = n;
            }
            n += 2;
        }
        if need > 0 {
            Self::series(t, need, &mut ln_mu, &alt);
        }
        Moments { ln_mu }
    }

    /// The non-negative series for every even p ≤ p_max not yet certified.
    fn series(t: f64, p_max: usize, ln_mu: &mut [f64; NMOM], alt: &[(f64, f64); NMOM]) {
        let ln_t = libm::log(t);
        let mut lc = [f64::NEG_INFINITY; NMOM];
        lc[0] = 0.0;
        let mut sums = [LogSum::new(); NMOM];
        let mut done = [true; NMOM];
        let mut pending = 0usize;
        for p in (2..=p_max).step_by(2) {
            if ln_mu[p].is_nan() {
                done[p] = false;
                pending += 1;
            }
        }
        let mut err = 0.0f64; // absolute error bound of every ln c_{m,p}
        let mut ln_fact = 0.0f64; // ln(M!)
        let mut step: u64 = 0;
        while pending > 0 && step < SERIES_MAX_STEPS {
            let mf = step as f64 + 1.0;
            let lm = libm::log(mf);
            let mut delta = 0.0f64;
            for p in (2..=p_max).rev() {
                let s = log_add3(lc[p - 2], LN_2 + lc[p - 1], lc[p]);
                if s == f64::NEG_INFINITY {
                    lc[p] = s;
                    continue;
                }
                let lpp = libm::log((p * (p - 1)) as f64);
                let k = ln_t + lpp - lm;
                let v = k + s;
                lc[p] = v;
                sums[p].add(v);
                delta = delta.max(
                    (libm::fabs(ln_t)
                        + libm::fabs(lpp)
                        + libm::fabs(lm)
                        + libm::fabs(k)
                        + libm::fabs(s)
                        + libm::fabs(v)
                        + 6.0)
                        * 2.0
                        * EPS,
                );
            }
            lc[0] = f64::NEG_INFINITY;
            lc[1] = f64::NEG_INFINITY;
            err += delta;
            ln_fact += lm;
            step += 1;
            // Terms m = 0..=M are in, M = step. Tail ≤ x^{M+1}/(M+1)!·(1 − x/(M+2))⁻¹.
            let big_m = step as f64;
            for p in (2..=p_max).step_by(2) {
                if done[p] {
                    continue;
                }
                let x = t * (p * (p - 1)) as f64;
                if big_m + 2.0 < 2.0 * x {
                    continue;
                }
                let ln_tail =
                    (big_m + 1.0) * libm::log(x) - ln_fact - libm::log(big_m + 1.0) + LN_2;
                let s = sums[p].value();
                if s.is_finite() && ln_tail <= s - 40.0 {
                    let e = err + 4.0 * big_m * EPS + libm::fabs(s) * 2.0 * EPS + 1e-17;
                    ln_mu[p] = s + 2.0 * e;
                    done[p] = true;
                    pending -= 1;
                }
            }
        }
        for p in (2..=p_max).step_by(2) {
            if !done[p] {
                let (l, rel) = alt[p];
                if rel <= 1e-3 {
                    ln_mu[p] = l + 2.0 * rel;
                }
            }
        }
    }
}

/// Validated parameters of one step.
struct Kernel {
    ln_q: f64,
    q_is_one: bool,
    /// t = 1/(2σ²)
    t: f64,
    sigma: f64,
    moments: Option<Moments>,
}

impl Kernel {
    fn new(
        sample_size: u64,
        dataset_size: u64,
        noise_multiplier: f64,
        max_order: f64,
    ) -> Result<Self> {
        let m = check_count("sample_size", sample_size, 1, ">= 1")?;
        let n = check_count("dataset_size", dataset_size, 1, ">= 1")?;
        if m > n {
            return Err(Error::InvalidCount {
                name: "sample_size",
                value: m,
                expected: "<= dataset_size",
            });
        }
        let sigma = check_positive("noise_multiplier", noise_multiplier)?;
        let q = m as f64 / n as f64; // as dp_accounting: q = m / n, one rounding
        let t = 0.5 / (sigma * sigma);
        let huge = sigma > 1e100;
        let moments = if m == n || huge {
            None
        } else {
            let need = libm::ceil(max_order.min(MAX_TERNARY_ORDER as f64) / 2.0) * 2.0;
            Some(Moments::new(t, need as usize))
        };
        Ok(Kernel {
            ln_q: libm::log(q),
            q_is_one: m == n,
            t,
            sigma,
            moments,
        })
    }

    /// Upper bound of ln A_α at integer α ≥ 2.
    fn ln_a_upper(&self, alpha: u64) -> f64 {
        let t = self.t;
        let nf = alpha as f64;
        let ternary = if alpha <= MAX_TERNARY_ORDER {
            self.moments.as_ref()
        } else {
            None
        };
        let mut sum = LogSum::new();
        let (mut lnc, mut lnc_err, mut max_err) = (0.0f64, 0.0f64, 0.0f64);
        for j in 1..=alpha {
            let jf = j as f64;
            let step = libm::log((nf - jf + 1.0) / jf);
            lnc += step;
            lnc_err += (libm::fabs(lnc) + 2.0 * libm::fabs(step) + 2.0) * EPS;
            if j < 2 {
                continue;
            }
            let plain = LN_2 + t * (jf * (jf - 1.0));
            let b = if j == 2 {
                // ln(e^{2t} − 1) ≤ 2t: the overestimate for 2t > 40 is below 1e-17.
                let lx = if 2.0 * t > 40.0 {
                    2.0 * t
                } else {
                    libm::log(libm::expm1(2.0 * t))
                };
                (2.0 * LN_2 + lx).min(plain)
            } else {
                match ternary {
                    Some(mo) => {
                        let lo = mo.ln_mu[2 * (j as usize / 2)];
                        let hi = mo.ln_mu[2 * (j as usize).div_ceil(2)];
                        let tern = 2.0 * LN_2 + 0.5 * (lo + hi);
                        if tern.is_nan() {
                            plain
                        } else {
                            tern.min(plain)
                        }
                    }
                    None => plain,
                }
            };
            let jq = jf * self.ln_q;
            let v = lnc + jq + b;
            let err = lnc_err + (libm::fabs(v) + libm::fabs(jq) + libm::fabs(b) + 4.0) * 2.0 * EPS;
            max_err = max_err.max(err);
            sum.add(v);
        }
        let la = sum.value() + max_err + 2.0 * nf * EPS;
        let la = la + libm::fabs(la) * 2.0 * EPS;
        if la < -700.0 {
            // ln(1 + x) ≤ x; never below the smallest normal.
            return round_up(libm::exp(la.max(-708.0)));
        }
        let ln_a = if la < 0.0 {
            libm::log1p(libm::exp(la))
        } else {
            la + libm::log1p(libm::exp(-la))
        };
        round_up(ln_a)
    }

    /// RDP bound at order α (validated, ≤ MAX_ORDER).
    fn rdp(&self, alpha: f64) -> Result<f64> {
        if self.q_is_one {
            // Plain Gaussian (m = n), the same expression as the Poisson accountant at q = 1.
            let r = alpha * (0.5 / (self.sigma * self.sigma));
            return crate::error::check_result("Gaussian RDP overflows", round_up(r));
        }
        if self.sigma > 1e100 {
            // For astronomically large σ the plain Gaussian is an upper bound, as subsampling
            // cannot increase the Rényi divergence (joint quasi-convexity).
            let r = alpha * (0.5 / self.sigma) / self.sigma;
            return crate::error::check_result(
                "Gaussian RDP overflows",
                round_up(r).max(f64::MIN_POSITIVE),
            );
        }
        let lo = libm::floor(alpha);
        let r = if lo == alpha {
            self.ln_a_upper(alpha as u64) / (alpha - 1.0)
        } else {
            let frac = alpha - lo;
            let k_lo = if lo < 2.0 {
                0.0
            } else {
                self.ln_a_upper(lo as u64)
            };
            let k_hi = self.ln_a_upper(lo as u64 + 1);
            round_up((1.0 - frac) * k_lo + frac * k_hi) / (alpha - 1.0)
        };
        crate::error::check_result(
            "sampled-without-replacement Gaussian RDP overflows",
            round_up(r),
        )
    }
}

fn check_wor_order(order: f64) -> Result<f64> {
    let a = check_order("order", order)?;
    if a > MAX_ORDER {
        return invalid("order", a, "in (1, 1e6]");
    }
    Ok(a)
}

/// RDP at order α of one step of the Gaussian mechanism on a batch of `sample_size` examples
/// drawn without replacement from `dataset_size`, under REPLACE-ONE adjacency.
///
/// `noise_multiplier` is noise std / replace-one sensitivity (dp_accounting's convention);
/// for DP-SGD pass [`replace_one_noise_multiplier`]`(σ)`.
///
/// # Formula
/// r_α = ln(1 + Σ_{j=2}^{α} C(α,j) γ^j B_j)/(α − 1), γ = m/n, B_j as in the module docs
/// (Theorem 9 with the ternary-|χ|^j entry for α ≤ 256); fractional α by interpolating
/// ln A between ⌊α⌋ and ⌈α⌉; m = n gives α/(2σ²). Rounded upward.
///
/// # Citations
/// Wang, Balle, Kasiviswanathan 2019, "Subsampled Rényi differential privacy and analytical
/// moments accountant", AISTATS, Thm 9, Cor. 10, and the ternary-|χ|^α bound of the appendix
/// (Thm 27 of arXiv:1808.00087); as implemented by dp_accounting's
/// `_compute_rdp_sample_wor_gaussian`.
///
/// # Errors
/// `sample_size` = 0 or > `dataset_size`; `noise_multiplier` not finite and > 0; `order` not
/// finite, ≤ 1 or > 10⁶; [`Error::Numerical`] if the RDP overflows `f64`.
///
/// # Examples
/// ```
/// use reconbound::accounting::rdp_without_replacement::wor_gaussian_rdp_replace_one;
/// // m = n: the plain Gaussian α/(2σ²).
/// assert!((wor_gaussian_rdp_replace_one(10, 10, 1.0, 4.0).unwrap() - 2.0).abs() < 1e-14);
/// let r = wor_gaussian_rdp_replace_one(256, 60_000, 1.1, 8.0).unwrap();
/// assert!(r > 0.0 && r < 1e-3);
/// ```
pub fn wor_gaussian_rdp_replace_one(
    sample_size: u64,
    dataset_size: u64,
    noise_multiplier: f64,
    order: f64,
) -> Result<f64> {
    let a = check_wor_order(order)?;
    Kernel::new(sample_size, dataset_size, noise_multiplier, libm::ceil(a))?.rdp(a)
}

/// RDP of `steps` steps (composition adds) at each of `orders`, written to `out`, for
/// fixed-size batches without replacement under replace-one adjacency.
///
/// # Formula
/// `out[i]` = T · r_α, α = `orders[i]`, r_α of [`wor_gaussian_rdp_replace_one`].
///
/// # Citations
/// Wang, Balle, Kasiviswanathan 2019, Thm 9; Mironov 2017, Prop. 1 (composition).
///
/// # Errors
/// As [`wor_gaussian_rdp_replace_one`] (an order is reported as `orders`); `steps` = 0;
/// [`Error::Inconsistent`] if `orders` is empty or `out` has a different length.
///
/// # Examples
/// ```
/// use reconbound::accounting::rdp_without_replacement::wor_rdp_curve_replace_one_into;
/// let mut out = [0.0; 2];
/// wor_rdp_curve_replace_one_into(64, 1600, 0.5, 300, &[2.0, 8.0], &mut out).unwrap();
/// assert!(out[0] < out[1]);
/// ```
pub fn wor_rdp_curve_replace_one_into(
    sample_size: u64,
    dataset_size: u64,
    noise_multiplier: f64,
    steps: u64,
    orders: &[f64],
    out: &mut [f64],
) -> Result<()> {
    let t = check_steps(steps)?;
    crate::accounting::rdp::check_orders_and_out(orders, out)?;
    let mut max_order = 2.0f64;
    for &a in orders {
        if check_order("orders", a).is_err() || a > MAX_ORDER {
            return invalid("orders", a, "in (1, 1e6]");
        }
        max_order = max_order.max(libm::ceil(a));
    }
    let k = Kernel::new(sample_size, dataset_size, noise_multiplier, max_order)?;
    for (o, &a) in out.iter_mut().zip(orders) {
        *o = compose(k.rdp(a)?, t)?;
    }
    Ok(())
}

/// (ε, δ) under replace-one adjacency of `steps` steps of the Gaussian mechanism on
/// fixed-size batches of `sample_size` drawn without replacement from `dataset_size`,
/// minimised over [`DEFAULT_ORDERS`] (the same grid as dp_accounting's `DEFAULT_RDP_ORDERS`).
/// An order whose RDP overflows is skipped.
///
/// # Formula
/// ε = min_α conv(T·r_α, α, δ), r_α of [`wor_gaussian_rdp_replace_one`], with the chosen
/// [`Conversion`] (dp_accounting's `get_epsilon` uses [`Conversion::Improved`]).
///
/// # Citations
/// Wang, Balle, Kasiviswanathan 2019, Thm 9; Canonne, Kamath, Steinke 2020, Prop. 12;
/// Mironov 2017, Props 1 and 3.
///
/// # Errors
/// `sample_size` = 0 or > `dataset_size`; `noise_multiplier` not finite and > 0; `steps` = 0;
/// `delta` ∉ (0, 1); [`Error::Numerical`] if no order gives a finite RDP.
///
/// # Examples
/// ```
/// use reconbound::accounting::rdp::Conversion;
/// use reconbound::accounting::rdp_without_replacement::{
///     epsilon_replace_one, replace_one_noise_multiplier,
/// };
/// // DP-SGD with σ = 1 (sensitivity 2C under replace-one), B = 64 of n = 1600, 300 steps.
/// let s = replace_one_noise_multiplier(1.0).unwrap();
/// let e = epsilon_replace_one(64, 1600, s, 300, 1e-5, Conversion::Improved).unwrap();
/// assert!(e.epsilon > 1.0 && e.epsilon.is_finite());
/// ```
pub fn epsilon_replace_one(
    sample_size: u64,
    dataset_size: u64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    conversion: Conversion,
) -> Result<EpsilonBound> {
    let t = check_steps(steps)?;
    let delta = check_open_unit("delta", delta)?;
    let k = Kernel::new(
        sample_size,
        dataset_size,
        noise_multiplier,
        MAX_TERNARY_ORDER as f64,
    )?;
    let mut curve = [0.0f64; DEFAULT_ORDERS.len()];
    // ln A at the integer orders 2..=11 serve the fractional orders too.
    for (o, &a) in curve.iter_mut().zip(DEFAULT_ORDERS.iter()) {
        *o = k
            .rdp(a)
            .and_then(|r| compose(r, t))
            .unwrap_or(f64::INFINITY);
    }
    epsilon_from_rdp(&DEFAULT_ORDERS, &curve, delta, conversion)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// μ_k by the alternating sum and by the non-negative series agree where both are
    /// accurate (σ = 2, where the sum's certified error is below 1e-11): the series (with its
    /// upward inflation by twice its rounding bound) is above the sum up to 1e-12·|ln μ| and
    /// within 1e-9·max(1, |ln μ|) of it.
    #[test]
    fn moment_series_matches_alternating_sum() {
        let t = 0.5 / (2.0 * 2.0);
        let mut forced = [f64::NAN; NMOM];
        let alt = [(f64::NAN, f64::INFINITY); NMOM];
        Moments::series(t, 64, &mut forced, &alt);
        for n in (2..=64).step_by(2) {
            let (l, rel, _) = moment_alternating(t, n);
            assert!(rel < 1e-11, "n={n} rel={rel}");
            let scale = libm::fabs(l).max(1.0);
            assert!(
                forced[n] >= l - 1e-12 * scale && forced[n] - l <= 1e-9 * scale,
                "n={n}: series {} vs sum {l}",
                forced[n]
            );
        }
    }

    /// ln μ_n against mpmath (1200 digits, the alternating sum; printed to 20 digits) from
    /// σ = 0.5 to 1000, including σ ≥ 10 where dp_accounting's differencing is off by up to
    /// 10² in ln μ: ours is an upper bound (≥ the reference up to its printing, 1e-15
    /// relative) and within 1e-9·max(1, |ln μ|) of it.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits as printed
    fn moments_match_mpmath_and_are_upper_bounds() {
        const REF: [(f64, usize, f64); 13] = [
            (0.5, 256, 130560.0),
            (1.0, 64, 2016.0),
            (2.0, 128, 2031.9999999999979186),
            (5.0, 16, -4.5811902367188809586),
            (5.0, 32, 11.006097833802095057),
            (10.0, 32, -24.539946936697676314),
            (10.0, 64, -16.085505291244999746),
            (10.0, 128, 46.961699256343529394),
            (10.0, 256, 307.51647432459078007),
            (50.0, 16, -47.884915979399987251),
            (50.0, 128, -239.44159351082854851),
            (50.0, 256, -376.24529389485789456),
            (1000.0, 256, -1184.8840168095531271),
        ];
        for &(s, n, want) in &REF {
            let m = Moments::new(0.5 / (s * s), 256);
            let got = m.ln_mu[n];
            let scale = libm::fabs(want).max(1.0);
            assert!(got >= want - 1e-15 * scale, "σ={s} n={n}: {got} < {want}");
            assert!(got - want <= 1e-9 * scale, "σ={s} n={n}: {got} vs {want}");
        }
    }

    /// μ_2 = e^{2t} − 1 exactly (both methods).
    #[test]
    fn second_moment_is_closed_form() {
        for &s in &[0.5, 1.0, 3.0, 30.0] {
            let t = 0.5 / (s * s);
            let m = Moments::new(t, 8);
            let exact = libm::log(libm::expm1(2.0 * t));
            assert!(
                m.ln_mu[2] >= exact - 1e-14 && m.ln_mu[2] - exact < 1e-12,
                "σ={s}"
            );
        }
    }
}
