//! dp_accounting's RDP of the Gaussian on fixed-size batches sampled without replacement
//! (`SampledWithoutReplacementDpEvent`, `NeighboringRelation.REPLACE_ONE`; Wang, Balle,
//! Kasiviswanathan 2019, Thm 9), reproduced by `accounting::rdp_without_replacement`.
//!
//! Reference values: dp_accounting 0.6.0 (Python 3.11, numpy float64),
//! `RdpAccountant(neighboring_relation=REPLACE_ONE)` with its `DEFAULT_RDP_ORDERS` (the same
//! grid as our `DEFAULT_ORDERS`), composed with
//! `SelfComposedDpEvent(SampledWithoutReplacementDpEvent(n, m, GaussianDpEvent(σ)), T)`,
//! `get_epsilon_and_optimal_order(δ)` (the improved conversion of Canonne–Kamath–Steinke),
//! and `_compute_rdp_sample_wor_gaussian(m/n, σ, [α])` for per-order values. σ is
//! dp_accounting's noise multiplier: std / replace-one sensitivity.

use reconbound::accounting::rdp::{subsampled_gaussian_rdp, Conversion};
use reconbound::accounting::rdp_without_replacement::{
    epsilon_replace_one, replace_one_noise_multiplier, wor_gaussian_rdp_replace_one,
};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// (n, m, σ, T, δ, dp_accounting ε, dp_accounting's optimal order).
const EPSILON_CASES: [(u64, u64, f64, u64, f64, f64, f64); 10] = [
    (60000, 256, 1.1, 14063, 1e-05, 5.243466908809535, 5.0),
    (1600, 64, 0.5, 300, 1e-05, 58.43406567539447, 2.0),
    (50000, 1000, 0.8, 500, 1e-06, 9.228201388380763, 3.0),
    (10000, 100, 2.0, 1000, 1e-05, 1.445298242121019, 13.0),
    (1000, 500, 0.7, 50, 0.001, 84.45436168925693, 2.0),
    (100000, 10, 5.0, 100000, 1e-08, 0.0675415394480775, 256.0),
    (5000, 2500, 3.0, 20, 1e-05, 7.274501415265281, 5.0),
    (60000, 600, 0.6, 1000, 1e-05, 13.338116892989126, 2.0),
    (2000, 20, 1.5, 2000, 1e-05, 3.088369967336832, 7.0),
    (1000, 999, 1.0, 5, 1e-05, 14.596434573323975, 4.0),
];

/// The ε of ten configurations (σ from 0.5 to 5, γ from 1e-4 to 0.999, T from 5 to 1e5,
/// δ from 1e-8 to 1e-3) equals dp_accounting's to 1e-9 relative, at the same optimal order.
/// Same theorem, same orders, same conversion: the only differences are rounding (our
/// binomial coefficients are accumulated, theirs come from lgamma; we round upward) and
/// dp_accounting's cancellation in the moments (accurate to ~5e-9 in ln μ at σ = 5, which
/// enters ε through the small j ≥ 3 terms only). Ours must not be below theirs by more
/// than the tolerance.
#[test]
fn wbk19_thm9_epsilon_equals_dp_accounting_for_ten_configurations() {
    for &(n, m, s, t, d, want, order) in &EPSILON_CASES {
        let b = epsilon_replace_one(m, n, s, t, d, Conversion::Improved).unwrap();
        assert!(
            rel(b.epsilon, want) < 1e-9,
            "n={n} m={m} σ={s} T={t} δ={d}: {} vs {want} ({:e})",
            b.epsilon,
            rel(b.epsilon, want)
        );
        assert_eq!(b.order, order, "n={n} m={m} σ={s}");
    }
}

/// (n, m, σ, α, dp_accounting's `_compute_rdp_sample_wor_gaussian`).
const ORDER_CASES: [(u64, u64, f64, f64, f64); 16] = [
    (60000, 256, 1.1, 2.0, 8.319752726513772e-05),
    (60000, 256, 1.1, 7.0, 0.0003023355466076465),
    (60000, 256, 1.1, 32.0, 7.612547932687499),
    (60000, 256, 1.1, 1024.0, 417.6789167992782),
    (60000, 256, 1.1, 4.5, 0.0001938936920481868),
    (1000, 500, 0.7, 3.0, 2.4202805682487813),
    (1000, 500, 0.7, 256.0, 260.5313426153584),
    (1000, 500, 0.7, 1.5, 1.5786580154278937),
    (10000, 100, 2.0, 2.0, 0.00011360371352886809),
    (10000, 100, 2.0, 32.0, 0.0020793016331292226),
    (10000, 100, 2.0, 256.0, 27.37948854732396),
    (10000, 100, 2.0, 4.5, 0.00026318844184426325),
    (1600, 64, 0.5, 3.0, 1.5535642683863138),
    (1600, 64, 0.5, 7.0, 10.360169402181505),
    (1600, 64, 0.5, 1024.0, 2044.7786552321754),
    (1600, 64, 0.5, 4.5, 5.202436476326637),
];

/// Per-order RDP (integer orders on both sides of α = 256, where the ternary entry stops,
/// and fractional orders, interpolated) equals dp_accounting's to 1e-9 relative.
#[test]
fn wbk19_per_order_rdp_equals_dp_accounting() {
    for &(n, m, s, a, want) in &ORDER_CASES {
        let r = wor_gaussian_rdp_replace_one(m, n, s, a).unwrap();
        assert!(
            rel(r, want) < 1e-9,
            "n={n} m={m} σ={s} α={a}: {r} vs {want} ({:e})",
            rel(r, want)
        );
    }
}

/// m = n: no subsampling, the plain Gaussian α/(2σ²) under replace-one with σ = std /
/// replace-one sensitivity (dp_accounting returns alpha / (2 sigma**2) there too); equal to
/// the Poisson accountant at q = 1.
#[test]
fn full_batch_is_the_plain_gaussian() {
    for &(s, a) in &[(1.0, 2.0), (0.7, 7.5), (3.0, 64.0)] {
        let r = wor_gaussian_rdp_replace_one(100, 100, s, a).unwrap();
        let want = a / (2.0 * s * s);
        // `want` is itself rounded: r may not sit below it by more than one rounding, and
        // sits above it by at most the upward nudge (4u ≈ 8.9e-16) plus a few roundings.
        assert!(
            r >= want * (1.0 - f64::EPSILON) && rel(r, want) < 2e-15,
            "{s} {a}: {r}"
        );
        assert_eq!(r, subsampled_gaussian_rdp(1.0, s, a).unwrap());
    }
}

/// The RDP increases with the batch size m (n fixed) at every order checked, and never
/// exceeds the full-batch Gaussian α/(2σ²) by more than the bound's own slack allows at
/// small orders (it must stay below the plain Theorem 9 value, checked via m = n).
#[test]
fn rdp_increases_with_sampling_rate() {
    for &s in &[0.6, 1.0, 2.5] {
        for &a in &[2.0, 3.0, 5.5, 16.0, 100.0] {
            let mut prev = 0.0;
            for m in [1u64, 5, 20, 80, 200, 500, 999] {
                let r = wor_gaussian_rdp_replace_one(m, 1000, s, a).unwrap();
                assert!(r > prev, "σ={s} α={a} m={m}: {r} <= {prev}");
                prev = r;
            }
        }
    }
}

/// DP-SGD's noise multiplier halves under replace-one (sensitivity 2C): a run with σ_C = 2
/// is dp_accounting's σ = 1, whose ε (1000 of 1000, i.e. full batch, 5 steps) is larger
/// than that of σ = 2 — passing σ_C unchanged would understate ε.
#[test]
fn dpsgd_noise_multiplier_is_halved_for_replace_one() {
    let s = replace_one_noise_multiplier(2.0).unwrap();
    assert_eq!(s, 1.0);
    let right = epsilon_replace_one(999, 1000, s, 5, 1e-5, Conversion::Improved).unwrap();
    assert!(rel(right.epsilon, 14.596434573323975) < 1e-9);
    let wrong = epsilon_replace_one(999, 1000, 2.0, 5, 1e-5, Conversion::Improved).unwrap();
    assert!(wrong.epsilon < right.epsilon / 2.0);
}

/// Where dp_accounting's moments are destroyed by cancellation (σ ≥ 10: its ln μ_32 is off
/// by 9.6 at σ = 10, vs mpmath at 1200 digits) and the j ≥ 3 terms matter (γ = 1/2, high
/// orders), its per-order RDP is far looser than the theorem it implements. Reference: the
/// same Theorem 9 + ternary formula, A = 1 + Σ_j C(α,j) γ^j B_j, evaluated by mpmath at
/// 1500 digits with μ_k from the alternating sum; ours must be ≥ it (valid) and within 1e-9
/// relative, and
/// dp_accounting's value (`_compute_rdp_sample_wor_gaussian(0.5, σ, [α])`) well above.
/// At small γ these terms are negligible and both agree to ~1e-12 (e.g. 256 of 60,000).
#[test]
#[allow(clippy::excessive_precision)] // mpmath's digits as printed
fn dp_accounting_is_looser_at_large_sigma_and_large_rate() {
    // (σ, α, mpmath value of the theorem, dp_accounting)
    for &(s, a, exact, dp) in &[
        (50.0, 128.0, 0.017473063210079921017, 0.3741782112730192),
        (10.0, 64.0, 0.11852238839958742067, 0.13858482312602644),
        (50.0, 256.0, 0.020565901972231625138, 0.41559500614620865),
    ] {
        let r = wor_gaussian_rdp_replace_one(500, 1000, s, a).unwrap();
        assert!(
            r >= exact && rel(r, exact) < 1e-9,
            "σ={s} α={a}: {r} vs {exact}"
        );
        assert!(dp > 1.1 * r, "σ={s} α={a}: {r} vs dp_accounting {dp}");
    }
    // At the ε level with small γ the defect is invisible: n = 60000, m = 256, σ = 10,
    // T = 10000, δ = 1e-5: dp_accounting 0.318932182462873 (order 46), ours equal to 1e-9.
    let b = epsilon_replace_one(256, 60000, 10.0, 10000, 1e-5, Conversion::Improved).unwrap();
    assert!(rel(b.epsilon, 0.318932182462873) < 1e-9, "{b:?}");
}

/// Validation: m = 0, m > n, σ ≤ 0, order ≤ 1 or > 1e6 are errors naming the parameter.
#[test]
fn invalid_inputs_name_the_parameter() {
    let e = wor_gaussian_rdp_replace_one(0, 10, 1.0, 2.0).unwrap_err();
    assert_eq!(e.parameter(), Some("sample_size"));
    let e = wor_gaussian_rdp_replace_one(11, 10, 1.0, 2.0).unwrap_err();
    assert_eq!(e.parameter(), Some("sample_size"));
    let e = wor_gaussian_rdp_replace_one(1, 10, 0.0, 2.0).unwrap_err();
    assert_eq!(e.parameter(), Some("noise_multiplier"));
    let e = wor_gaussian_rdp_replace_one(1, 10, 1.0, 1.0).unwrap_err();
    assert_eq!(e.parameter(), Some("order"));
    let e = wor_gaussian_rdp_replace_one(1, 10, 1.0, 2e6).unwrap_err();
    assert_eq!(e.parameter(), Some("order"));
    let e = epsilon_replace_one(1, 10, 1.0, 1, 1.0, Conversion::Improved).unwrap_err();
    assert_eq!(e.parameter(), Some("delta"));
}
