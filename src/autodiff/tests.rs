//! Unit tests of `Scalar`, `Dual<N>` and the JVP helpers.
//!
//! Reference values: mpmath 1.3.0 at 40 significant digits, rounded to the nearest `f64`
//! (script reproduced at the end of this file). Each row is
//! `(function, x, f(x), f′(x), x·f″(x)/f′(x))`; the inputs are the exact `f64` values shown.

// Reference constants are printed digits of mpmath values (e.g. √2 in the sqrt rows), and
// lane loops index several arrays at once.
#![allow(clippy::approx_constant, clippy::needless_range_loop)]

use super::*;
use crate::error::Error;

const EPS: f64 = f64::EPSILON;

/// ELU's α in the reference rows.
const ALPHA: f64 = 1.3;

#[rustfmt::skip]
const ROWS: &[(&str, f64, f64, f64, f64)] = &[
    ("exp", -20.5, 1.2501528663867426e-09, 1.2501528663867426e-09, -20.5),
    ("exp", -1.25, 0.2865047968601901, 0.2865047968601901, -1.25),
    ("exp", 0.3, 1.3498588075760032, 1.3498588075760032, 0.3),
    ("exp", 2.0, 7.38905609893065, 7.38905609893065, 2.0),
    ("exp", 7.75, 2321.572414611057, 2321.572414611057, 7.75),
    ("ln", 1e-300, -690.7755278982137, 9.999999999999999e+299, -1.0),
    ("ln", 0.001, -6.907755278982137, 1000.0, -1.0),
    ("ln", 0.75, -0.2876820724517809, 1.3333333333333333, -1.0),
    ("ln", 1.0, 0.0, 1.0, -1.0),
    ("ln", 123.5, 4.816241156068032, 0.008097165991902834, -1.0),
    ("ln_1p", -0.75, -1.3862943611198906, 4.0, 3.0),
    ("ln_1p", -1e-10, -1.00000000005e-10, 1.0000000001, 1.0000000001000001e-10),
    ("ln_1p", 1e-12, 9.999999999995e-13, 0.999999999999, -9.99999999999e-13),
    ("ln_1p", 0.5, 0.4054651081081644, 0.6666666666666666, -0.3333333333333333),
    ("ln_1p", 40.0, 3.713572066704308, 0.024390243902439025, -0.975609756097561),
    ("exp_m1", -30.0, -0.9999999999999064, 9.357622968840175e-14, -30.0),
    ("exp_m1", -0.5, -0.3934693402873666, 0.6065306597126334, -0.5),
    ("exp_m1", 1e-10, 1.00000000005e-10, 1.0000000001, 1e-10),
    ("exp_m1", 0.25, 0.2840254166877415, 1.2840254166877414, 0.25),
    ("exp_m1", 3.0, 19.085536923187668, 20.085536923187668, 3.0),
    ("tanh", -19.0, -0.9999999999999999, 1.2556531168192118e-16, -38.0),
    ("tanh", -0.8, -0.664036770267849, 0.559055167732244, -1.0624588324285584),
    ("tanh", 1e-09, 1e-09, 1.0, -2e-18),
    ("tanh", 0.6, 0.5370495669980353, 0.7115777625872228, -0.6444594803976423),
    ("tanh", 4.0, 0.999329299739067, 0.001340950683025897, -7.994634397912536),
    ("sqrt", 1e-300, 1e-150, 5e+149, -0.5),
    ("sqrt", 0.01, 0.1, 5.0, -0.5),
    ("sqrt", 2.0, 1.4142135623730951, 0.3535533905932738, -0.5),
    ("sqrt", 3.5, 1.8708286933869707, 0.2672612419124244, -0.5),
    ("sqrt", 10000000000.0, 100000.0, 5e-06, -0.5),
    ("erf", -2.5, -0.999593047982555, 0.0021782842303527095, -12.5),
    ("erf", -0.1, -0.1124629160182849, 1.1171516067889369, -0.020000000000000004),
    ("erf", 0.4, 0.42839235504666845, 0.9615412988393077, -0.32000000000000006),
    ("erf", 1.5, 0.9661051464753108, 0.11893028922362937, -4.5),
    ("erf", 5.0, 0.9999999999984626, 1.5670866531017336e-11, -50.0),
    ("normal_cdf", -12.0, 1.776482112077679e-33, 2.1463837356630605e-32, -144.0),
    ("normal_cdf", -1.5, 0.06680720126885807, 0.12951759566589172, -2.25),
    ("normal_cdf", 0.2, 0.579259709439103, 0.3910426939754559, -0.04000000000000001),
    ("normal_cdf", 1.0, 0.8413447460685429, 0.24197072451914334, -1.0),
    ("normal_cdf", 6.0, 0.9999999990134123, 6.075882849823285e-09, -36.0),
    ("gelu", -9.0, -1.0157295653584566e-18, -9.138937373906639e-18, -79.97558917872571),
    ("gelu", -1.5, -0.1002108019032871, -0.12746919222997952, -0.3810261720893405),
    ("gelu", -0.4, -0.13783130335587035, 0.1972702022683465, -1.3739876582807027),
    ("gelu", 0.7, 0.5306254434438489, 0.9766141011336599, 0.3379558079138318),
    ("gelu", 3.0, 2.99595030590511, 1.011945647204184, -0.09197017340588384),
    ("sigmoid", -40.0, 4.248354255291589e-18, 4.248354255291589e-18, -40.0),
    ("sigmoid", -2.0, 0.11920292202211756, 0.10499358540350652, -1.5231883119115297),
    ("sigmoid", 0.1, 0.52497918747894, 0.24937604019289197, -0.004995837495787998),
    ("sigmoid", 1.5, 0.8175744761936437, 0.14914645207033286, -0.952723428580931),
    ("sigmoid", 38.0, 1.0, 3.1391327920480296e-17, -38.0),
    ("softplus", -50.0, 1.9287498479639178e-22, 1.9287498479639178e-22, -50.0),
    ("softplus", -3.0, 0.04858735157374206, 0.04742587317756678, -2.8577223804672998),
    ("softplus", 0.2, 0.7981388693815918, 0.549833997312478, 0.09003320053750442),
    ("softplus", 2.5, 2.5788897342925496, 0.9241418199787564, 0.18964545005310887),
    ("softplus", 45.0, 45.0, 1.0, 1.2881333612472272e-18),
    ("elu", -6.0, -1.2967776221703338, 0.003222377829666266, -6.0),
    ("elu", -0.5, -0.5115101423735765, 0.7884898576264234, -0.5),
    ("elu", -1e-08, -1.2999999935000001e-08, 1.299999987, -1e-08),
    ("elu", 0.5, 0.5, 1.0, 0.0),
    ("elu", 3.0, 3.0, 1.0, 0.0),
];

/// `(n, x, xⁿ, n·xⁿ⁻¹)`, mpmath exact rational arithmetic rounded to `f64`.
#[rustfmt::skip]
const POWI_ROWS: &[(i32, f64, f64, f64)] = &[
    (-3, -1.7, -0.20354162426216163, -0.3591911016391088),
    (-3, 0.3, 37.03703703703704, -370.37037037037044),
    (-3, 2.5, 0.064, -0.0768),
    (0, -1.7, 1.0, 0.0),
    (0, 0.3, 1.0, 0.0),
    (0, 2.5, 1.0, 0.0),
    (1, -1.7, -1.7, 1.0),
    (1, 0.3, 0.3, 1.0),
    (1, 2.5, 2.5, 1.0),
    (2, -1.7, 2.8899999999999997, -3.4),
    (2, 0.3, 0.09, 0.6),
    (2, 2.5, 6.25, 5.0),
    (5, -1.7, -14.198569999999998, 41.76049999999999),
    (5, 0.3, 0.0024299999999999994, 0.040499999999999994),
    (5, 2.5, 97.65625, 195.3125),
    (7, -1.7, -41.03386729999999, 168.96298299999998),
    (7, 0.3, 0.00021869999999999995, 0.005102999999999999),
    (7, 2.5, 610.3515625, 1708.984375),
];

/// Applies the elementary function named in a reference row.
fn apply<S: Scalar>(name: &str, x: S) -> S {
    match name {
        "exp" => x.exp(),
        "ln" => x.ln(),
        "ln_1p" => x.ln_1p(),
        "exp_m1" => x.exp_m1(),
        "tanh" => x.tanh(),
        "sqrt" => x.sqrt(),
        "erf" => x.erf(),
        "normal_cdf" => x.normal_cdf(),
        "gelu" => x.gelu(),
        "sigmoid" => x.sigmoid(),
        "softplus" => x.softplus(),
        "elu" => x.elu(ALPHA),
        other => panic!("no elementary function {other}"),
    }
}

#[test]
fn reference_rows_cover_every_elementary_function() {
    // Guards the tables below against silently dropping a function.
    for name in [
        "exp",
        "ln",
        "ln_1p",
        "exp_m1",
        "tanh",
        "sqrt",
        "erf",
        "normal_cdf",
        "gelu",
        "sigmoid",
        "softplus",
        "elu",
    ] {
        assert!(ROWS.iter().filter(|r| r.0 == name).count() >= 5, "{name}");
    }
    assert_eq!(POWI_ROWS.len(), 18);
}

#[test]
fn elementary_values_match_mpmath_references() {
    // Tolerance 8ε·(|f| + |x·f′|): a few ulps of libm error plus the propagated rounding
    // of the argument (condition number |x f′/f|; e.g. Φ(−12) = ½erfc(12/√2) has
    // condition 145). Absolute in |x·f′| so that ln(1) = 0 is covered too.
    for &(name, x, f, d, _) in ROWS {
        let got = apply(name, x);
        let tol = 8.0 * EPS * (f.abs() + (x * d).abs());
        assert!(
            (got - f).abs() <= tol,
            "{name}({x}) = {got:e}, reference {f:e}, |err| {:e} > {tol:e}",
            (got - f).abs()
        );
    }
}

#[test]
fn elementary_derivatives_match_mpmath_references() {
    // Value of Dual<1> must equal the f64 value bit for bit. Tangent tolerance
    // 16ε·|f′|·(1 + |x f″/f′|): the derivative formulas take ≤ 6 roundings, and the
    // rounding of their arguments propagates with condition |x f″/f′| (e.g. 145 for φ(−12)).
    for &(name, x, f, d, cond_d) in ROWS {
        let y = apply(name, Dual::<1>::variable(x, 0).unwrap());
        assert_eq!(
            y.value.to_bits(),
            apply(name, x).to_bits(),
            "{name}({x}) value"
        );
        let tol = 16.0 * EPS * d.abs() * (1.0 + cond_d.abs());
        assert!(
            (y.tangent[0] - d).abs() <= tol,
            "{name}'({x}) = {:e}, reference {d:e} (f = {f:e}), tol {tol:e}",
            y.tangent[0]
        );
    }
}

#[test]
fn elementary_derivatives_match_central_differences() {
    // Central difference with h = 6e-6·|x| (≈ ε^{1/3}, relative so that rows at 1e-300 or
    // 1e10 and the ELU row at −1e-8 stay on one side of any kink). Truncation h²|f‴|/6 is
    // below 2e-7·|f′| for every row (worst: Φ at −12, (6e-6·12)²·143/6 ≈ 1.2e-7);
    // rounding is ≈ ε(|f| + |x f′|)/h, allowed 16×.
    for &(name, x, f, d, _) in ROWS {
        let h = 6e-6 * x.abs();
        let fd = (apply(name, x + h) - apply(name, x - h)) / ((x + h) - (x - h));
        let y = apply(name, Dual::<1>::variable(x, 0).unwrap());
        let tol = 1e-6 * d.abs() + 16.0 * EPS * (f.abs() + (x * d).abs()) / h;
        assert!(
            (y.tangent[0] - fd).abs() <= tol,
            "{name}'({x}): dual {:e}, central difference {fd:e}, tol {tol:e}",
            y.tangent[0]
        );
    }
}

#[test]
fn powi_values_and_derivatives_match_exact_references() {
    // Square-and-multiply with |n| ≤ 7 makes ≤ 5 roundings, each error at most doubled by
    // later squarings: tolerance 2ε(|n| + 1) relative, for value and derivative.
    for &(n, x, v, d) in POWI_ROWS {
        let y = Dual::<1>::variable(x, 0).unwrap().powi(n);
        let tol_v = 2.0 * EPS * f64::from(n.abs() + 1) * v.abs();
        let tol_d = 2.0 * EPS * f64::from((n - 1).abs() + 1) * d.abs();
        assert!(
            (y.value - v).abs() <= tol_v,
            "{x}^{n} = {:e} vs {v:e}",
            y.value
        );
        assert!(
            (y.tangent[0] - d).abs() <= tol_d,
            "d {x}^{n} = {:e} vs {d:e}",
            y.tangent[0]
        );
        assert_eq!(y.value.to_bits(), Scalar::powi(x, n).to_bits());
    }
    // Exactness claims of the docs: x² is x·x bit for bit, x¹ = x, x⁰ = 1 (also at 0).
    for x in [0.1, -1.7, 3.0e150, 1.0 / 3.0] {
        assert_eq!(Scalar::powi(x, 2).to_bits(), (x * x).to_bits());
        assert_eq!(Scalar::powi(x, 1).to_bits(), x.to_bits());
        assert_eq!(Scalar::powi(x, 0), 1.0);
    }
    assert_eq!(Scalar::powi(0.0, 0), 1.0);
    // The extreme exponent does not overflow the integer arithmetic.
    assert_eq!(Scalar::powi(1.0, i32::MIN), 1.0);
    assert_eq!(
        Dual::<1>::variable(1.0, 0).unwrap().powi(i32::MIN).tangent[0],
        i32::MIN as f64
    );
}

#[test]
fn tanh_derivative_keeps_relative_accuracy_in_the_tail() {
    // sech²(20) = 1.6993417021166355e-17 (mpmath); 1 − tanh² would give 0 here.
    let y = Dual::<1>::variable(20.0, 0).unwrap().tanh();
    let want = 1.6993417021166355e-17;
    assert!(
        (y.tangent[0] - want).abs() <= 64.0 * EPS * want,
        "{:e}",
        y.tangent[0]
    );
    let y = Dual::<1>::variable(-20.0, 0).unwrap().tanh();
    assert!(
        (y.tangent[0] - want).abs() <= 64.0 * EPS * want,
        "{:e}",
        y.tangent[0]
    );
}

/// A composite that uses every operation of `Scalar` (and `l2_norm`) on 4 inputs, all in
/// the domains of the functions (inputs near (0.7, −1.3, 2.1, 0.4)).
fn every_op<S: Scalar>(x: &[S; 4]) -> S {
    let [a, b, c, d] = *x;
    let arith = a * b + c / d - (-a);
    let mixed = (a + 1.5) * 2.0 / 3.0 - 0.25;
    let mut u = a;
    u += b;
    u -= c;
    u *= d;
    u /= a;
    u += 1.0;
    u -= 0.5;
    u *= 3.0;
    u /= 7.0;
    let total: S = x.iter().copied().sum();
    let elem = c.ln()
        + a.ln_1p()
        + b.exp_m1()
        + (a * b).tanh()
        + c.sqrt()
        + b.powi(3)
        + d.powi(-2)
        + a.erf()
        + b.normal_cdf()
        + c.gelu()
        + b.sigmoid()
        + a.softplus()
        + b.elu(1.3)
        + a.elu(0.5)
        + b.abs()
        + a.max(b) * 2.0
        + a.min(b) * 3.0
        + (d * 2.0).exp()
        + l2_norm(x);
    let cmp = if a < b { S::one() } else { S::zero() } + S::cst(0.125);
    arith * mixed + u * total + elem / (S::one() + cmp)
}

const EVERY_OP_X: [f64; 4] = [0.7, -1.3, 2.1, 0.4];
/// Tangent of input i in lane l: `EVERY_OP_T[i][l]` (arbitrary, non-unit directions).
const EVERY_OP_T: [[f64; 4]; 4] = [
    [1.0, 0.0, -0.3, 2.5],
    [0.0, 1.0, 0.7, -1.1],
    [0.25, -2.0, 0.0, 0.9],
    [-0.6, 0.1, 1.3, 0.0],
];

#[test]
fn dual_lanes_equal_single_lane_runs_bitwise_on_every_operation() {
    // Lanes never interact and every lane is computed by the same f64 operations, so the
    // comparison is exact (to_bits), as is the comparison of values with the f64 run.
    let xs4: [Dual<4>; 4] = core::array::from_fn(|i| Dual::new(EVERY_OP_X[i], EVERY_OP_T[i]));
    let y4 = every_op(&xs4);
    let y64 = every_op(&EVERY_OP_X);
    assert!(y64.is_finite());
    assert_eq!(y4.value.to_bits(), y64.to_bits());
    for l in 0..4 {
        let xs1: [Dual<1>; 4] =
            core::array::from_fn(|i| Dual::new(EVERY_OP_X[i], [EVERY_OP_T[i][l]]));
        let y1 = every_op(&xs1);
        assert_eq!(y1.value.to_bits(), y64.to_bits());
        assert!(
            y1.tangent[0].is_finite() && y1.tangent[0] != 0.0,
            "lane {l}"
        );
        assert_eq!(y4.tangent[l].to_bits(), y1.tangent[0].to_bits(), "lane {l}");
    }
}

#[test]
fn every_op_composite_matches_central_differences() {
    // Checks the whole composite's derivative along each lane's direction v:
    // (f(x + hv) − f(x − hv))/2h, h = 1e-6; truncation h²|f‴|/6 and rounding ε|f|/h are both
    // ≈ 1e-10 for this O(10) function, tolerance 1e-7·(1 + |f′|).
    let y = every_op(&core::array::from_fn::<Dual<4>, 4, _>(|i| {
        Dual::new(EVERY_OP_X[i], EVERY_OP_T[i])
    }));
    let h = 1e-6;
    for l in 0..4 {
        let xp: [f64; 4] = core::array::from_fn(|i| EVERY_OP_X[i] + h * EVERY_OP_T[i][l]);
        let xm: [f64; 4] = core::array::from_fn(|i| EVERY_OP_X[i] - h * EVERY_OP_T[i][l]);
        let fd = (every_op(&xp) - every_op(&xm)) / (2.0 * h);
        let tol = 1e-7 * (1.0 + fd.abs());
        assert!(
            (y.tangent[l] - fd).abs() <= tol,
            "lane {l}: {} vs {fd}",
            y.tangent[l]
        );
    }
}

#[test]
fn mixed_f64_operands_equal_constant_operands() {
    // `d op c`, `c op d` with an f64 c equal `d op cst(c)` / `cst(c) op d` (== on values
    // and tangents: they may differ only in the sign of a zero tangent).
    let d = Dual::new(1.7, [0.3, -2.0, 0.0]);
    let c = -0.45;
    let k = Dual::<3>::cst(c);
    let pairs = [
        (d + c, d + k),
        (d - c, d - k),
        (d * c, d * k),
        (d / c, d / k),
        (c + d, k + d),
        (c - d, k - d),
        (c * d, k * d),
        (c / d, k / d),
    ];
    for (i, (a, b)) in pairs.iter().enumerate() {
        assert_eq!(a.value.to_bits(), b.value.to_bits(), "pair {i}");
        assert_eq!(a.tangent, b.tangent, "pair {i}");
    }
    let mut e = d;
    e += c;
    e -= k;
    e *= c;
    e /= k;
    assert_eq!(e.value.to_bits(), d.value.to_bits());
    assert_eq!(e.tangent, d.tangent);
}

#[test]
fn dual_sum_matches_f64_sum_bitwise() {
    // f64's Sum starts from −0.0; so does Dual's, so an all-(−0) sum stays −0.
    let v = [-0.0, -0.0];
    let s64: f64 = v.iter().copied().sum();
    let s: Dual<2> = v.iter().map(|&x| Dual::new(x, [-0.0, 1.0])).sum();
    assert_eq!(s.value.to_bits(), s64.to_bits());
    assert_eq!(s.tangent, [0.0, 2.0]);
    assert!(s.tangent[0].is_sign_negative());
    let w = [0.1, 0.2, 0.3, -0.7];
    let s64: f64 = w.iter().copied().sum();
    let s: Dual<1> = w.iter().map(|&x| Dual::new(x, [x])).sum();
    assert_eq!(s.value.to_bits(), s64.to_bits());
    assert_eq!(s.tangent[0].to_bits(), s64.to_bits());
}

/// f(x, y) = tanh(x·y + eˣ) / √(1 + x²), generically.
fn mixed<S: Scalar>(x: S, y: S) -> S {
    (x * y + x.exp()).tanh() / (S::one() + x * x).sqrt()
}

#[test]
fn mixed_expression_matches_hand_derived_partials() {
    // With u = xy + eˣ, s = √(1 + x²):
    //   ∂f/∂x = sech²u·(y + eˣ)/s − tanh u · x/s³,   ∂f/∂y = sech²u · x/s.
    // Reference evaluated in f64 with libm (sech² = 1/cosh²); tolerance 64ε times the sum of
    // the absolute values of the terms (they may cancel).
    for (x, y) in [(0.3, -0.8), (1.1, 0.5), (-2.0, 1.7), (0.05, 3.0)] {
        let d = mixed(
            Dual::<2>::variable(x, 0).unwrap(),
            Dual::<2>::variable(y, 1).unwrap(),
        );
        let u = x * y + libm::exp(x);
        let sech2 = 1.0 / (libm::cosh(u) * libm::cosh(u));
        let s = libm::sqrt(1.0 + x * x);
        let t1 = sech2 * (y + libm::exp(x)) / s;
        let t2 = libm::tanh(u) * x / (s * s * s);
        let dy = sech2 * x / s;
        let tol_x = 64.0 * EPS * (t1.abs() + t2.abs());
        assert!(
            (d.tangent[0] - (t1 - t2)).abs() <= tol_x,
            "∂x at ({x},{y}): {}",
            d.tangent[0]
        );
        assert!(
            (d.tangent[1] - dy).abs() <= 64.0 * EPS * dy.abs(),
            "∂y at ({x},{y})"
        );
        assert_eq!(d.value.to_bits(), mixed(x, y).to_bits());
    }
}

/// Hard clipping g·min(1, C/‖g‖), generically.
fn hard_clip<S: Scalar, const P: usize>(g: [S; P], c: f64) -> [S; P] {
    let factor = S::one().min(S::cst(c) / l2_norm(&g));
    g.map(|gi| gi * factor)
}

/// GELU clipping g / (GELU(‖g‖/C − 1) + 1), generically.
fn gelu_clip<S: Scalar, const P: usize>(g: [S; P], c: f64) -> [S; P] {
    let factor = S::one() / ((l2_norm(&g) / c - 1.0).gelu() + 1.0);
    g.map(|gi| gi * factor)
}

#[test]
fn clipping_derivatives_match_hand_derived_formulas() {
    // Outside the ball, d/dt [C g/‖g‖] = C(ġ/‖g‖ − g⟨g,ġ⟩/‖g‖³); inside, ġ.
    // GELU clipping with n = ‖g‖, r = n/C − 1, a = GELU(r) + 1:
    //   d/dt [g/a] = ġ/a − g·GELU′(r)·(⟨g,ġ⟩/n)/(C a²), GELU′(r) = Φ(r) + rφ(r).
    // Tolerance 64ε·(|first term| + |second term|), normalised by ‖ġ‖ ~ 1.
    let c = 1.5;
    let gdot = [0.3, -1.1, 0.8];
    for g in [[2.0, -1.0, 0.5], [0.2, 0.3, -0.1]] {
        let n = libm::sqrt(g.iter().map(|v| v * v).sum::<f64>());
        let dot: f64 = g.iter().zip(&gdot).map(|(a, b)| a * b).sum();
        let gd: [Dual<1>; 3] = core::array::from_fn(|i| Dual::new(g[i], [gdot[i]]));
        let hc = hard_clip(gd, c);
        let gc = gelu_clip(gd, c);
        let r = n / c - 1.0;
        let a = r * crate::math::normal::cdf(r) + 1.0;
        let gelu_d = crate::math::normal::cdf(r) + r * crate::math::normal::pdf(r);
        for i in 0..3 {
            let (h1, h2) = if n > c {
                (c * gdot[i] / n, c * g[i] * dot / (n * n * n))
            } else {
                (gdot[i], 0.0)
            };
            let tol = 64.0 * EPS * (h1.abs() + h2.abs());
            assert!(
                (hc[i].tangent[0] - (h1 - h2)).abs() <= tol,
                "hard {i} n={n}"
            );
            let (e1, e2) = (gdot[i] / a, g[i] * gelu_d * (dot / n) / (c * a * a));
            let tol = 64.0 * EPS * (e1.abs() + e2.abs());
            assert!(
                (gc[i].tangent[0] - (e1 - e2)).abs() <= tol,
                "gelu {i} n={n}"
            );
        }
    }
}

#[test]
fn max_min_ties_pick_the_first_argument() {
    let a = Dual::new(1.0, [1.0, 2.0]);
    let b = Dual::new(1.0, [3.0, 4.0]);
    assert_eq!(a.max(b).tangent, [1.0, 2.0]);
    assert_eq!(b.max(a).tangent, [3.0, 4.0]);
    assert_eq!(a.min(b).tangent, [1.0, 2.0]);
    assert_eq!(b.min(a).tangent, [3.0, 4.0]);
    // +0 and −0 tie too.
    let p = Dual::new(0.0, [1.0]);
    let m = Dual::new(-0.0, [2.0]);
    assert_eq!(p.max(m).tangent, [1.0]);
    assert_eq!(m.min(p).tangent, [2.0]);
    // Away from ties: the larger / smaller value with its own tangent.
    let c = Dual::new(2.0, [5.0, 6.0]);
    assert_eq!(a.max(c).tangent, [5.0, 6.0]);
    assert_eq!(c.min(a).tangent, [1.0, 2.0]);
    // Same selection for f64.
    assert_eq!(Scalar::max(1.0_f64, 2.0), 2.0);
    assert_eq!(Scalar::min(1.0_f64, 2.0), 1.0);
    assert!(Scalar::max(0.0_f64, -0.0).is_sign_positive());
    assert!(Scalar::min(-0.0_f64, 0.0).is_sign_negative());
}

#[test]
fn max_min_propagate_nan_in_either_position() {
    let nan = Dual::new(f64::NAN, [7.0]);
    let one = Dual::new(1.0, [1.0]);
    for r in [nan.max(one), one.max(nan), nan.min(one), one.min(nan)] {
        assert!(r.value.is_nan());
        assert_eq!(r.tangent, [7.0]);
    }
    assert!(Scalar::max(1.0, f64::NAN).is_nan());
    assert!(Scalar::min(f64::NAN, 1.0).is_nan());
}

#[test]
fn gelu_value_equals_x_times_normal_cdf_bitwise() {
    // The documented identity; derivatives agree to rounding (product rule vs Φ + xφ):
    // tolerance 8ε·(|Φ| + |xφ|).
    for x in [-9.0, -1.5, -0.4, 0.0, 0.7, 3.0] {
        let d = Dual::<1>::variable(x, 0).unwrap();
        let (g, p) = (d.gelu(), d * d.normal_cdf());
        assert_eq!(g.value.to_bits(), p.value.to_bits(), "{x}");
        let scale = crate::math::normal::cdf(x).abs() + (x * crate::math::normal::pdf(x)).abs();
        assert!(
            (g.tangent[0] - p.tangent[0]).abs() <= 8.0 * EPS * scale,
            "{x}"
        );
    }
}

#[test]
fn comparisons_look_only_at_values() {
    let a = Dual::new(1.0, [5.0]);
    let b = Dual::new(1.0, [-5.0]);
    assert!(a == b);
    assert!(Dual::new(1.0, [100.0]) < Dual::new(2.0, [0.0]));
    assert!(Dual::new(f64::NAN, [0.0]) != Dual::new(f64::NAN, [0.0]));
}

#[test]
fn abs_at_zero_has_zero_tangent() {
    for z in [0.0, -0.0] {
        let y = Dual::new(z, [1.0, -2.0]).abs();
        assert_eq!(y.value.to_bits(), 0.0f64.to_bits(), "|{z}| must be +0");
        assert_eq!(y.tangent, [0.0, 0.0]);
        // Consistent with √(x²) at 0.
        let x = Dual::new(z, [1.0, -2.0]);
        assert_eq!((x * x).sqrt().tangent, [0.0, 0.0]);
    }
    assert_eq!(Dual::new(-2.0, [1.0, -2.0]).abs().tangent, [-1.0, 2.0]);
    assert_eq!(Dual::new(2.0, [1.0, -2.0]).abs().tangent, [1.0, -2.0]);
}

#[test]
fn sqrt_at_zero_has_zero_tangent_and_no_nan() {
    for z in [0.0, -0.0] {
        let y = Dual::new(z, [1.0, -1.0, 0.0]).sqrt();
        assert_eq!(y.value.to_bits(), z.to_bits());
        assert_eq!(y.tangent, [0.0, 0.0, 0.0]);
    }
    // The smallest positive input still has the (huge, finite) true derivative.
    let tiny = Dual::new(f64::MIN_POSITIVE, [1.0]).sqrt();
    assert!(tiny.tangent[0].is_finite() && tiny.tangent[0] > 1e153);
    // Negative input: NaN value, as f64 (not silently a number).
    assert!(Dual::new(-1.0, [1.0]).sqrt().value.is_nan());
}

#[test]
fn norm_and_hard_clip_of_zero_vector_have_zero_tangent() {
    let g = [Dual::new(0.0, [1.0, 0.0]), Dual::new(0.0, [-2.0, 3.0])];
    let n = l2_norm(&g);
    assert_eq!((n.value, n.tangent), (0.0, [0.0, 0.0]));
    // min(1, C/‖g‖) at g = 0: C/0 = ∞ (NaN tangent), min selects the constant 1.
    let factor = Dual::<2>::one().min(Dual::cst(1.0) / n);
    assert_eq!((factor.value, factor.tangent), (1.0, [0.0, 0.0]));
    let clipped = hard_clip(g, 1.0);
    for gi in clipped {
        assert_eq!(gi.value, 0.0);
        assert!(gi.tangent.iter().all(|t| t.is_finite()));
    }
    // The clipped gradient at 0 moves with ġ (factor 1): tangent = ġ.
    assert_eq!(clipped[1].tangent, [-2.0, 3.0]);
    // GELU clipping at 0 is smooth: factor 1/(GELU(−1) + 1), tangent ġ·factor.
    let gc = gelu_clip(g, 1.0);
    assert!(gc.iter().all(|v| v.tangent.iter().all(|t| t.is_finite())));
}

#[test]
fn hard_clip_at_the_threshold_uses_the_inside_derivative() {
    // ‖g‖ = 5 = C exactly: the tie in min(1, C/‖g‖) picks the constant 1, so the tangent
    // of the clipped gradient is ġ; just outside it is the projected one.
    let g = [Dual::new(3.0, [1.0]), Dual::new(4.0, [0.0])];
    let at = hard_clip(g, 5.0);
    assert_eq!([at[0].tangent[0], at[1].tangent[0]], [1.0, 0.0]);
    let out = hard_clip(g, 4.0);
    // C(ġ/n − g⟨g,ġ⟩/n³) with n = 5, C = 4, ⟨g,ġ⟩ = 3.
    let want = [4.0 * (0.2 - 9.0 / 125.0), 4.0 * (-12.0 / 125.0)];
    for i in 0..2 {
        assert!((out[i].tangent[0] - want[i]).abs() <= 8.0 * EPS, "{i}");
    }
}

#[test]
fn elu_at_zero_uses_the_left_branch() {
    for z in [0.0, -0.0] {
        let y = Dual::new(z, [1.0, -2.0]).elu(ALPHA);
        assert_eq!(y.value, 0.0);
        assert_eq!(y.tangent, [ALPHA, -2.0 * ALPHA]);
    }
    assert_eq!(Dual::new(1e-300, [1.0]).elu(ALPHA).tangent, [1.0]);
}

#[test]
fn infinite_derivatives_leave_zero_tangent_lanes_at_zero() {
    // ln(0) = −∞ with f′ = +∞: lanes with ẋ = 0 stay 0 (no 0·∞ = NaN), others are ±∞.
    let y = Dual::new(0.0, [1.0, 0.0, -1.0]).ln();
    assert_eq!(y.value, f64::NEG_INFINITY);
    assert_eq!(y.tangent, [f64::INFINITY, 0.0, f64::NEG_INFINITY]);
    // 0⁻¹ = ∞ with a constant input: tangent exactly 0.
    let y = Dual::<2>::cst(0.0).powi(-1);
    assert_eq!((y.value, y.tangent), (f64::INFINITY, [0.0, 0.0]));
    // x⁰ = 1 with derivative 0, including at 0.
    let y = Dual::new(0.0, [1.0]).powi(0);
    assert_eq!((y.value, y.tangent), (1.0, [0.0]));
}

#[test]
fn variable_rejects_a_lane_out_of_range() {
    assert_eq!(Dual::<2>::variable(1.0, 1).unwrap().tangent, [0.0, 1.0]);
    assert!(matches!(
        Dual::<2>::variable(1.0, 2),
        Err(Error::InvalidCount {
            name: "lane",
            value: 2,
            ..
        })
    ));
    assert!(Dual::<0>::variable(1.0, 0).is_err());
    // Dual<0> is a plain value.
    assert_eq!(Dual::<0>::cst(2.0).exp().value, libm::exp(2.0));
}

/// f: ℝ⁵ → ℝ³ mixing most operations, for the JVP tests.
struct TestFn;

impl ScalarFn for TestFn {
    fn input_dim(&self) -> usize {
        5
    }
    fn output_dim(&self) -> usize {
        3
    }
    fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> crate::Result<()> {
        let ([x0, x1, x2, x3, x4], [y0, y1, y2]) = (x, y) else {
            return Err(Error::Inconsistent {
                what: "TestFn dimensions",
                value: 0.0,
            });
        };
        *y0 = (*x0 * *x1 + *x2).tanh() * *x3;
        *y1 = (*x4 - *x0).softplus() + x1.gelu() * (S::one() + *x2 * *x2).sqrt();
        *y2 = l2_norm(x) * (-*x3).exp() + x4.elu(1.0) / (S::cst(2.0) + x1.sigmoid());
        Ok(())
    }
}

const JVP_X: [f64; 5] = [0.4, -1.2, 0.9, 0.3, -0.6];
const JVP_COORDS: [usize; 7] = [4, 0, 2, 2, 1, 3, 0];

fn jvp_with<const N: usize>(coords: &[usize]) -> ([f64; 21], usize) {
    let mut out = [0.0; 21];
    let mut scratch = [Dual::<N>::default(); 8];
    let passes = jvp_coordinates_in(
        &TestFn,
        &JVP_X,
        coords,
        &mut out[..coords.len() * 3],
        &mut scratch,
    )
    .unwrap();
    (out, passes)
}

#[test]
fn jvp_columns_equal_single_lane_runs_bitwise() {
    // k = 7 coordinates (with repeats) in ⌈7/N⌉ passes; every N gives the N = 1 bits.
    let (one, p1) = jvp_with::<1>(&JVP_COORDS);
    assert_eq!(p1, 7);
    let bits = |a: &[f64; 21]| a.map(f64::to_bits);
    let (o, p) = jvp_with::<2>(&JVP_COORDS);
    assert_eq!((bits(&o), p), (bits(&one), 4));
    let (o, p) = jvp_with::<3>(&JVP_COORDS);
    assert_eq!((bits(&o), p), (bits(&one), 3));
    let (o, p) = jvp_with::<4>(&JVP_COORDS);
    assert_eq!((bits(&o), p), (bits(&one), 2));
    let (o, p) = jvp_with::<7>(&JVP_COORDS);
    assert_eq!((bits(&o), p), (bits(&one), 1));
    let (o, p) = jvp_with::<8>(&JVP_COORDS);
    assert_eq!((bits(&o), p), (bits(&one), 1));
    // Repeated coordinates give identical columns.
    assert_eq!(one[6..9], one[9..12]);
    assert_eq!(one[3..6], one[18..21]);
}

#[test]
fn jvp_columns_match_central_differences() {
    // h = 1e-6: truncation h²|f‴|/6 ≈ 1e-13 and rounding ε|f|/h ≈ 2e-10 for this O(1)
    // function; tolerance 1e-8 absolute.
    let (out, _) = jvp_with::<4>(&JVP_COORDS);
    let h = 1e-6;
    for (j, &c) in JVP_COORDS.iter().enumerate() {
        let (mut xp, mut xm) = (JVP_X, JVP_X);
        xp[c] += h;
        xm[c] -= h;
        let (mut yp, mut ym) = ([0.0; 3], [0.0; 3]);
        TestFn.eval(&xp, &mut yp).unwrap();
        TestFn.eval(&xm, &mut ym).unwrap();
        for r in 0..3 {
            let fd = (yp[r] - ym[r]) / (xp[c] - xm[c]);
            let got = out[j * 3 + r];
            assert!((got - fd).abs() <= 1e-8, "∂y{r}/∂x{c}: {got} vs {fd}");
        }
    }
    // The Jacobian has no structurally zero column here (a test that could not fail).
    assert!(out.iter().filter(|v| **v != 0.0).count() >= 17);
}

#[test]
fn jvp_directions_equal_coordinates_for_unit_vectors_and_are_linear() {
    let mut dirs = [0.0; 35];
    for (j, &c) in JVP_COORDS.iter().enumerate() {
        dirs[j * 5 + c] = 1.0;
    }
    let mut out = [0.0; 21];
    let mut scratch = [Dual::<3>::default(); 8];
    let p = jvp_directions_in(&TestFn, &JVP_X, &dirs, &mut out, &mut scratch).unwrap();
    let (coords, _) = jvp_with::<3>(&JVP_COORDS);
    assert_eq!(p, 3);
    assert_eq!(out.map(f64::to_bits), coords.map(f64::to_bits));
    // J·v = Σ_i v_i J e_i (up to rounding: 16ε times the sum of absolute terms).
    let v = [0.5, -1.5, 2.0, 0.25, -0.75];
    let mut jv = [0.0; 3];
    jvp_directions_in(&TestFn, &JVP_X, &v, &mut jv, &mut scratch).unwrap();
    let mut cols = [0.0; 15];
    jvp_coordinates_in(&TestFn, &JVP_X, &[0, 1, 2, 3, 4], &mut cols, &mut scratch).unwrap();
    for r in 0..3 {
        let terms: [f64; 5] = core::array::from_fn(|i| v[i] * cols[i * 3 + r]);
        let sum: f64 = terms.iter().sum();
        let abs: f64 = terms.iter().map(|t| t.abs()).sum();
        assert!((jv[r] - sum).abs() <= 16.0 * EPS * abs, "row {r}");
    }
}

#[cfg(feature = "alloc")]
#[test]
fn allocating_jvp_helpers_equal_the_in_place_ones() {
    let (in_place, _) = jvp_with::<2>(&JVP_COORDS);
    let v = jvp_coordinates::<2, _>(&TestFn, &JVP_X, &JVP_COORDS).unwrap();
    assert_eq!(v.as_slice(), &in_place[..]);
    let dirs = [1.0, 0.0, 0.0, 0.0, 0.0];
    let w = jvp_directions::<2, _>(&TestFn, &JVP_X, &dirs).unwrap();
    assert_eq!(w.as_slice(), &in_place[3..6]);
}

/// f(x) = ln x₀ (fails at x₀ ≤ 0) or an error from eval itself when x₀ > 10.
struct LogFn;

impl ScalarFn for LogFn {
    fn input_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> crate::Result<()> {
        if let ([a], [b]) = (x, y) {
            if a.re() > 10.0 {
                return Err(Error::NotConverged {
                    what: "LogFn",
                    value: a.re(),
                });
            }
            *b = a.ln();
        }
        Ok(())
    }
}

#[test]
fn jvp_helpers_validate_inputs_and_outputs() {
    let mut out = [0.0; 3];
    let mut s4 = [Dual::<4>::default(); 8];
    let x = JVP_X;
    let inconsistent = |r: crate::Result<usize>| matches!(r, Err(Error::Inconsistent { .. }));
    // N = 0 lanes.
    let mut s0 = [Dual::<0>::default(); 8];
    assert!(matches!(
        jvp_coordinates_in(&TestFn, &x, &[0], &mut out, &mut s0),
        Err(Error::InvalidCount { name: "lanes", .. })
    ));
    // Coordinate out of range.
    assert!(matches!(
        jvp_coordinates_in(&TestFn, &x, &[5], &mut out, &mut s4),
        Err(Error::InvalidCount {
            name: "coords",
            value: 5,
            ..
        })
    ));
    // Wrong x length, non-finite x, wrong out length, short scratch.
    assert!(inconsistent(jvp_coordinates_in(
        &TestFn,
        &x[..4],
        &[0],
        &mut out,
        &mut s4
    )));
    let mut bad = x;
    bad[2] = f64::NAN;
    assert!(matches!(
        jvp_coordinates_in(&TestFn, &bad, &[0], &mut out, &mut s4),
        Err(Error::InvalidParameter { name: "x", .. })
    ));
    assert!(inconsistent(jvp_coordinates_in(
        &TestFn,
        &x,
        &[0, 1],
        &mut out,
        &mut s4
    )));
    assert!(inconsistent(jvp_coordinates_in(
        &TestFn,
        &x,
        &[0],
        &mut out,
        &mut s4[..7]
    )));
    // Directions not a multiple of d, non-finite direction.
    assert!(inconsistent(jvp_directions_in(
        &TestFn, &x, &[1.0; 6], &mut out, &mut s4
    )));
    let mut dir = [0.0; 5];
    dir[1] = f64::INFINITY;
    assert!(matches!(
        jvp_directions_in(&TestFn, &x, &dir, &mut out, &mut s4),
        Err(Error::InvalidParameter {
            name: "directions",
            ..
        })
    ));
    // k = 0: no pass, nothing written.
    assert_eq!(
        jvp_coordinates_in(&TestFn, &x, &[], &mut [], &mut s4),
        Ok(0)
    );
    // Non-finite value or derivative of f is an error, not a NaN in `out`.
    let mut o1 = [0.0; 1];
    let mut s = [Dual::<2>::default(); 2];
    assert!(matches!(
        jvp_coordinates_in(&LogFn, &[0.0], &[0], &mut o1, &mut s),
        Err(Error::Numerical { .. })
    ));
    assert!(matches!(
        jvp_coordinates_in(&LogFn, &[-1.0], &[0], &mut o1, &mut s),
        Err(Error::Numerical { .. })
    ));
    // Errors of f itself pass through; a valid point works.
    assert!(matches!(
        jvp_coordinates_in(&LogFn, &[11.0], &[0], &mut o1, &mut s),
        Err(Error::NotConverged { what: "LogFn", .. })
    ));
    assert_eq!(
        jvp_coordinates_in(&LogFn, &[4.0], &[0], &mut o1, &mut s),
        Ok(1)
    );
    assert_eq!(o1, [0.25]);
}

// Reference script (python3, mpmath 1.3.0), abridged: for each row,
//   mp.dps = 40; x = mpf(float(s))
//   row = (name, x, f(x), df(x), x * diff(df, x, h=|x|·1e-12) / df(x))
// with Phi(x) = erfc(−x/√2)/2, phi(x) = exp(−x²/2)/√(2π), sig(x) = 1/(1 + exp(−x)),
//   tanh′ = sech², gelu = x·Phi, gelu′ = Phi + x·phi, softplus = log1p(exp(x)),
//   elu = x (x > 0) else 1.3·expm1(x), elu′ = 1 (x > 0) else 1.3·exp(x);
// powi rows: (n, x, x**n, n·x**(n−1)) in exact mpf arithmetic.
