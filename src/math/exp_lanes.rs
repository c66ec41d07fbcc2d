//! `libm::exp` and `libm::expm1` over a slice, vectorised, **bit for bit**: the same
//! operations in the same order on each lane, written branch-free (every case computed, one
//! selected, thresholds as float comparisons, the truncation in floating point) so that LLVM
//! vectorises the loop (4 lanes in the 256-bit build, 8 with AVX-512). For the shadow models'
//! activations (ELU) and softmax, where the scalar calls took 18 % of a model's training
//! (measured on the 2-core Zen 5 of issue 32; a whole block of 32 examples at a time: 41.9 →
//! 35.5 ms a model). Written four lanes at a time with integer tests and `as i32`, the same
//! code stayed scalar.
//!
//! # Why the bits are libm's
//!
//! The `libm` crate computes both functions by the method of FreeBSD's `e_exp.c` and
//! `s_expm1.c` (Sun, 1993/2004): x = k·ln2 + r with |r| ≤ ½ln2, ln2 split into a head
//! `LN2_HI` (k·LN2_HI exact) and a tail `LN2_LO`, a rational approximation in r, and a
//! scaling by 2^k. The only branches are on |x| (which k, or a tiny or huge x) and on k.
//! Here every lane runs the operations of its branch, as IEEE double operations in libm's
//! order (Rust never contracts a·b + c into an fma), so each result is the value libm
//! rounds. Three identities let the branches share one sequence:
//!
//! - **k = 0 as a case of the general reduction**: hi = x − 0·LN2_HI = x − (+0) = x (also for
//!   x = −0), lo = 0·LN2_LO = +0, r = hi − lo = x, and for expm1 c = (hi − r) − lo = +0:
//!   libm's k = 0 branch sets exactly these (hi = x, lo = 0, c = 0).
//! - **k = ±1** (½ln2 < |x| < 1.5·ln2, where libm sets k = ±1 without the product):
//!   x − (±1)·LN2_HI rounds the same as libm's x ∓ LN2_HI, and (±1)·LN2_LO = ±LN2_LO exactly.
//! - **scalbn(y, k) = y·2^k** for the normal results of the fast range (|x| < 700 for exp,
//!   −56·ln2 < x ≤ 0 for expm1: |k| ≤ 1010): `libm::scalbn` multiplies by 2^k once when k is
//!   in the normal exponent range, and a multiplication by a power of two with a normal
//!   result is exact; y·2⁰ = y.
//!
//! An argument outside the fast range (NaN, ±∞, |x| ≥ 700 for exp, x < −56·ln2 for expm1)
//! sends the whole slice to the scalar `libm` calls. The tests compare the bits with `libm`
//! on millions of arguments over every branch and its boundaries; they are also the guard
//! against a later `libm` (Cargo.toml asks for 0.2.16 or a later 0.2) that computed either
//! function another way: the scalar paths (`Scalar::exp`, `Scalar::elu`) would then give
//! other bits than these lanes, and the tests would fail.

/// ln2 head (the high 32 bits of ln2: k·LN2_HI is exact for |k| < 2²⁰).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// ln2 − LN2_HI.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// 1/ln2.
const INV_LN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);

/// exp's rational approximation R(r²) = 2 + P1·r² + … + P5·r¹⁰ (`e_exp.c`).
const P: [f64; 5] = [
    f64::from_bits(0x3fc5_5555_5555_553e),
    f64::from_bits(0xbf66_c16c_16be_bd93),
    f64::from_bits(0x3f11_566a_af25_de2c),
    f64::from_bits(0xbebb_bd41_c5d2_6bf1),
    f64::from_bits(0x3e66_3769_72be_a4d0),
];

/// expm1's rational approximation 1 + Q1·z + … + Q5·z⁵, z = r²/2 (`s_expm1.c`).
const Q: [f64; 5] = [
    f64::from_bits(0xbfa1_1111_1111_10f4),
    f64::from_bits(0x3f5a_01a0_19fe_5585),
    f64::from_bits(0xbf14_ce19_9eaa_dbb7),
    f64::from_bits(0x3ed0_cfca_86e6_5239),
    f64::from_bits(0xbe8a_fdb7_6e09_c32d),
];

/// |x| = `a` ≥ the double whose high word is `h` and low word 0: for a non-NaN x, libm's test
/// of the high word of |x| against `h`, as a float comparison (vectorised).
#[inline(always)]
fn at_least(a: f64, h: u32) -> bool {
    a >= f64::from_bits((h as u64) << 32)
}

/// −56·ln2 < x (high word of |x| below 0x4043687a): expm1's fast range for x ≤ 0 (NaN fails
/// the comparison).
const EXPM1_FAST: f64 = f64::from_bits(0x4043_687a_u64 << 32);

/// 1.5·2⁵²: t + S − S rounds t to an integer (to nearest) for |t| < 2⁵¹.
const SHIFTER: f64 = 6_755_399_441_055_744.0;

/// t truncated towards zero for |t| < 2⁵¹, as a double (what `t as i32 as f64` gives for
/// |t| < 2³¹): rounded to nearest, then moved one towards zero if it went past t. Branch-free.
#[inline(always)]
fn trunc(t: f64) -> f64 {
    let r = (t + SHIFTER) - SHIFTER;
    let down = if t >= 0.0 && r > t { 1.0 } else { 0.0 };
    let up = if t < 0.0 && r < t { 1.0 } else { 0.0 };
    (r - down) + up
}

/// 2^k for an integer k (a double) with |k| ≤ 1022: k + 1023 in the low bits of 2⁵² + k +
/// 1023, shifted into the exponent field.
#[inline(always)]
fn two_to(k: f64) -> f64 {
    f64::from_bits((k + 4_503_599_627_371_519.0).to_bits() << 52)
}

/// k for |x| above ½ln2: (x/ln2 ± ½) truncated (libm's `as i32`), or ±1 below 1.5·ln2, or 0
/// below ½ln2; a double, from |x| = `a`.
#[inline(always)]
fn reduction_k(x: f64, a: f64) -> f64 {
    let neg = x < 0.0;
    let half = if neg { -0.5 } else { 0.5 };
    let big = trunc(INV_LN2 * x + half);
    let one = if neg { -1.0 } else { 1.0 };
    let k = if at_least(a, 0x3fd6_2e43) { one } else { 0.0 };
    if at_least(a, 0x3ff0_a2b2) {
        big
    } else {
        k
    }
}

/// `libm::exp` of one lane of the fast range (|x| < 700, not NaN).
#[inline(always)]
fn exp_lane(x: f64) -> f64 {
    exp_lane_with(x, LN2_LO)
}

/// [`exp_lane`] with the tail of ln2 a parameter (the tests' negative control).
#[inline(always)]
fn exp_lane_with(x: f64, ln2_lo: f64) -> f64 {
    let a = x.abs();
    let k = reduction_k(x, a);
    let hi = x - k * LN2_HI;
    let lo = k * ln2_lo;
    let r = hi - lo;
    let rr = r * r;
    let [p1, p2, p3, p4, p5] = P;
    let c = r - rr * (p1 + rr * (p2 + rr * (p3 + rr * (p4 + rr * p5))));
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    let tiny = 1.0 + x;
    // libm: 1 + x for a high word of |x| at most 0x3e300000.
    if at_least(a, 0x3e30_0001) {
        y * two_to(k)
    } else {
        tiny
    }
}

/// `libm::expm1` of one lane with −56·ln2 < x ≤ 0 (not NaN).
#[inline(always)]
fn expm1_nonpositive_lane(x: f64) -> f64 {
    let a = x.abs();
    let k = reduction_k(x, a);
    let hi = x - k * LN2_HI;
    let lo = k * LN2_LO;
    let r = hi - lo;
    let c = (hi - r) - lo;
    let hfx = 0.5 * r;
    let hxs = r * hfx;
    let [q1, q2, q3, q4, q5] = Q;
    let r1 = 1.0 + hxs * (q1 + hxs * (q2 + hxs * (q3 + hxs * (q4 + hxs * q5))));
    let t = 3.0 - r1 * hfx;
    let e = hxs * ((r1 - t) / (6.0 - r * t));
    let k0 = r - (r * e - hxs);
    let e2 = r * (e - c) - c - hxs;
    let k_minus_1 = 0.5 * (r - e2) - 0.5;
    let k_below = (r - e2 + 1.0) * two_to(k) - 1.0;
    let reduced = if k == -1.0 { k_minus_1 } else { k_below };
    let v = if k == 0.0 { k0 } else { reduced };
    // libm: x itself for a high word of |x| below 0x3c900000.
    if at_least(a, 0x3c90_0000) {
        v
    } else {
        x
    }
}

/// `v ← libm::exp(v)` for every entry, bit for bit (module docs), vectorised when every entry
/// is in the fast range (|x| < 700), else by the scalar calls.
#[inline]
pub(crate) fn exp_in_place(v: &mut [f64]) {
    // A reduction without early exit (vectorised): the common case is all in range.
    if v.iter().fold(true, |ok, &x| ok & (x.abs() < 700.0)) {
        for x in v.iter_mut() {
            *x = exp_lane(*x);
        }
    } else {
        for x in v.iter_mut() {
            *x = libm::exp(*x);
        }
    }
}

/// ELU with α = 1, y = x for x > 0 and 1·`libm::expm1(x)` otherwise (what
/// `Scalar::elu(1.0)` computes for `f64`), bit for bit (module docs), vectorised when every
/// x ≤ 0 is in the fast range (−56·ln2 < x; NaN is not), else by the scalar calls.
#[inline]
pub(crate) fn elu(x: &[f64], y: &mut [f64]) {
    if x.iter()
        .fold(true, |ok, &v| ok & ((v > 0.0) | (v.abs() < EXPM1_FAST)))
    {
        for (y, &v) in y.iter_mut().zip(x) {
            // Positive lanes compute expm1(+0) and keep x.
            let m = expm1_nonpositive_lane(if v > 0.0 { 0.0 } else { v });
            *y = if v > 0.0 { v } else { 1.0 * m };
        }
    } else {
        for (y, &v) in y.iter_mut().zip(x) {
            *y = if v > 0.0 { v } else { 1.0 * libm::expm1(v) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{elu, exp_in_place};
    use crate::rng::Rng;
    use alloc::vec::Vec;

    /// Arguments over every branch: uniform on wide and narrow intervals, log-uniform
    /// magnitudes from 2⁻⁶⁰ to 2¹⁰ of both signs, the thresholds' neighbours (±4 ulps) and
    /// special values. Seed fixed.
    fn arguments(seed: u64, n: usize) -> Vec<f64> {
        let mut r = Rng::from_seed(seed);
        let mut v = Vec::with_capacity(n + 200);
        for i in 0..n {
            let u = r.uniform();
            let s = if r.uniform() < 0.5 { -1.0 } else { 1.0 };
            v.push(match i % 4 {
                0 => 100.0 * (2.0 * u - 1.0),
                1 => 3.0 * (2.0 * u - 1.0),
                2 => s * libm::exp2(-60.0 + 70.0 * u),
                _ => 1500.0 * (2.0 * u - 1.0),
            });
        }
        let thresholds = [
            0.5 * core::f64::consts::LN_2,
            1.5 * core::f64::consts::LN_2,
            56.0 * core::f64::consts::LN_2,
            libm::exp2(-28.0),
            libm::exp2(-54.0),
            700.0,
            708.396_418_532_264_1,
            709.782_712_893_384,
            745.133_219_101_941_1,
        ];
        for t in thresholds {
            for d in -4i64..=4 {
                let b = f64::to_bits(t) as i64 + d;
                v.push(f64::from_bits(b as u64));
                v.push(-f64::from_bits(b as u64));
            }
        }
        v.extend([
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1.0,
            -1.0,
        ]);
        v
    }

    /// `f` applied to `x` in slices of `len` (a copy), against `want` entry by entry.
    fn check_in_slices(x: &[f64], len: usize, f: impl Fn(&mut [f64]), want: impl Fn(f64) -> f64) {
        for c in x.chunks(len) {
            let mut y = c.to_vec();
            f(&mut y);
            for (&a, &b) in c.iter().zip(&y) {
                assert_eq!(b.to_bits(), want(a).to_bits(), "{a:e} (slices of {len})");
            }
        }
    }

    #[test]
    fn exp_in_place_is_bit_identical_to_libm_exp() {
        // Exact, on 2·10⁶ arguments (seed 20261128), every branch of e_exp.c and the fast
        // range's edges. The arguments of the fast range (|x| < 700, 1.73 million) in slices
        // of 1, 7, 10 (a softmax row) and 320 (a block): the vectorised loop and its scalar
        // tail; then every argument in slices of 10, where a slice holding one from outside
        // the range takes libm's calls.
        let x = arguments(20_261_128, 2_000_000);
        let fast: Vec<f64> = x.iter().copied().filter(|&v| v.abs() < 700.0).collect();
        assert!(fast.len() > 1_700_000, "{}", fast.len());
        for len in [1, 7, 10, 320] {
            check_in_slices(&fast, len, exp_in_place, libm::exp);
        }
        check_in_slices(&x, 10, exp_in_place, libm::exp);
    }

    #[test]
    fn elu_is_bit_identical_to_libm_expm1_below_zero() {
        // Exact, on 2·10⁶ arguments (seed 20261129) of both signs: x for x > 0, libm's
        // expm1 below (the branches k = 0, −1, ≤ −2, tiny x). The fast range (x > 0 or
        // −56·ln2 < x ≤ 0, 1.6 million) in slices of 1, 7, 10 and 320; then every argument
        // (huge negative x, NaN and ±∞ too) in slices of 10.
        let x = arguments(20_261_129, 2_000_000);
        let want = |a: f64| if a > 0.0 { a } else { 1.0 * libm::expm1(a) };
        let by_elu = |y: &mut [f64]| {
            let x = y.to_vec();
            elu(&x, y);
        };
        let fast: Vec<f64> = x
            .iter()
            .copied()
            .filter(|&v| v > 0.0 || v.abs() < super::EXPM1_FAST)
            .collect();
        assert!(fast.len() > 1_500_000, "{}", fast.len());
        for len in [1, 7, 10, 320] {
            check_in_slices(&fast, len, by_elu, want);
        }
        check_in_slices(&x, 10, by_elu, want);
    }

    #[test]
    fn a_tail_of_ln2_wrong_in_its_fifth_digit_is_caught() {
        // Negative control: the same lanes with LN2_LO 10⁻⁴ off (a typo in its fifth digit)
        // differ from libm on some of the test's arguments (20,000 of them, seed 20261128),
        // so the bit-identity test can fail. (One ulp of LN2_LO moves k·LN2_LO by less than
        // 10⁻²² and changes no result.)
        let lo = super::LN2_LO * 1.0001;
        let x = arguments(20_261_128, 20_000);
        let fast = x.iter().filter(|&&v| v.abs() < 700.0);
        let differ = fast
            .filter(|&&v| super::exp_lane_with(v, lo).to_bits() != libm::exp(v).to_bits())
            .count();
        assert!(differ > 0, "{differ}");
    }
}
