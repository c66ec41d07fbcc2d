//! Jacobian–vector products of a vector function written generically over [`Scalar`]:
//! k directional derivatives in ⌈k/N⌉ evaluations with [`Dual<N>`].
//!
//! Output layout everywhere: column-major, `out[j·m + r] = ∂f_r/∂v_j`, i.e. the j-th block of
//! `m = f.output_dim()` numbers is J·v_j, the derivative of f along the j-th requested
//! coordinate or direction.

use super::dual::Dual;
use super::scalar::Scalar;
use crate::error::{check_finite, Error, Result};

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// A function f: ℝᵈ → ℝᵐ written once, generically over the scalar type — the Rust form of
/// "a closure generic over `S: Scalar`".
///
/// `eval` must write every entry of `y` (it receives `y` filled with zeros), must be
/// deterministic, and must not depend on anything but the values and the arithmetic of its
/// inputs; then its value with `S = Dual<N>` equals its value with `S = f64` bit for bit.
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{Scalar, ScalarFn};
///
/// /// f(x) = (x₀·x₁, tanh x₂).
/// struct F;
/// impl ScalarFn for F {
///     fn input_dim(&self) -> usize { 3 }
///     fn output_dim(&self) -> usize { 2 }
///     fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> reconbound::Result<()> {
///         if let ([a, b, c], [p, q]) = (x, y) {
///             *p = *a * *b;
///             *q = c.tanh();
///         }
///         Ok(())
///     }
/// }
/// let mut y = [0.0; 2];
/// F.eval(&[2.0, 3.0, 0.0], &mut y)?;
/// assert_eq!(y, [6.0, 0.0]);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub trait ScalarFn {
    /// d, the length of the input `x`.
    fn input_dim(&self) -> usize;
    /// m, the length of the output `y`.
    fn output_dim(&self) -> usize;
    /// Writes f(x) into `y` (`x.len() == input_dim()`, `y.len() == output_dim()`).
    ///
    /// # Errors
    ///
    /// Whatever the function itself reports; the JVP helpers pass it through.
    fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> Result<()>;
}

/// The number of passes ⌈k/lanes⌉ the JVP helpers make for k directions with `lanes`
/// tangent lanes (0 when `lanes` is 0, which the helpers reject).
///
/// ```
/// use reconbound::autodiff::pass_count;
/// assert_eq!(pass_count(10, 4), 3);
/// assert_eq!(pass_count(8, 4), 2);
/// assert_eq!(pass_count(0, 4), 0);
/// ```
pub const fn pass_count(k: usize, lanes: usize) -> usize {
    if lanes == 0 {
        0
    } else {
        k.div_ceil(lanes)
    }
}

/// Derivatives of f at `x` along the input coordinates `coords` (J·e_c for each c, the
/// columns of the Jacobian), in ⌈k/N⌉ evaluations of f with `Dual<N>`, k = `coords.len()`.
/// No allocation: `scratch` (length ≥ d + m) holds the dual inputs and outputs.
///
/// Writes `out[j·m + r] = ∂f_r/∂x_{coords[j]}`. Coordinates may repeat. Lane l of pass p
/// handles `coords[p·N + l]`; unused lanes of the last pass carry zero tangents. Each
/// column is bit-identical whatever N is (lanes never interact), in particular equal to the
/// k runs with N = 1. Returns the number of passes.
///
/// # Errors
///
/// - [`Error::InvalidCount`] `lanes` if N = 0; `coords` if a coordinate is ≥ d.
/// - [`Error::Inconsistent`] if `x.len() != f.input_dim()`, `out.len() != k·m` or
///   `scratch.len() < d + m`.
/// - [`Error::InvalidParameter`] `x` if an input is not finite.
/// - [`Error::Numerical`] if f returns a non-finite value or derivative (never NaN out).
/// - any error of `f.eval`.
///
/// On error the contents of `out` are unspecified (earlier passes may have written it).
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{jvp_coordinates_in, Dual, Scalar, ScalarFn};
///
/// /// f(x) = (x₀·x₁, x₁·x₂): a 2 × 3 Jacobian [[x₁, x₀, 0], [0, x₂, x₁]].
/// struct F;
/// impl ScalarFn for F {
///     fn input_dim(&self) -> usize { 3 }
///     fn output_dim(&self) -> usize { 2 }
///     fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> reconbound::Result<()> {
///         if let ([a, b, c], [p, q]) = (x, y) {
///             *p = *a * *b;
///             *q = *b * *c;
///         }
///         Ok(())
///     }
/// }
/// let x = [2.0, 3.0, 5.0];
/// let mut out = [0.0; 6];
/// let mut scratch = [Dual::<2>::default(); 5];
/// // Columns 0, 1, 2 of the Jacobian in ⌈3/2⌉ = 2 passes.
/// let passes = jvp_coordinates_in(&F, &x, &[0, 1, 2], &mut out, &mut scratch)?;
/// assert_eq!(passes, 2);
/// assert_eq!(out, [3.0, 0.0, 2.0, 5.0, 0.0, 3.0]);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn jvp_coordinates_in<const N: usize, F: ScalarFn>(
    f: &F,
    x: &[f64],
    coords: &[usize],
    out: &mut [f64],
    scratch: &mut [Dual<N>],
) -> Result<usize> {
    let d = f.input_dim();
    for &c in coords {
        if c >= d {
            return Err(Error::InvalidCount {
                name: "coords",
                value: c as u64,
                expected: "< the input dimension d",
            });
        }
    }
    run(f, x, coords.len(), out, scratch, |j, i| {
        if coords.get(j) == Some(&i) {
            1.0
        } else {
            0.0
        }
    })
}

/// Derivatives of f at `x` along k arbitrary directions v_0 … v_{k−1} (J·v_j), in ⌈k/N⌉
/// evaluations with `Dual<N>`. `directions` holds the directions row by row
/// (`directions[j·d + i]` = i-th component of v_j, so its length is k·d). Otherwise as
/// [`jvp_coordinates_in`]: writes `out[j·m + r] = (J v_j)_r`, returns the number of passes;
/// with unit vectors as directions the result equals `jvp_coordinates_in` bit for bit.
///
/// # Errors
///
/// As [`jvp_coordinates_in`]; [`Error::Inconsistent`] if `directions.len()` is not a
/// multiple of d (or d = 0 with non-empty `directions`), [`Error::InvalidParameter`]
/// `directions` if a component is not finite.
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{jvp_directions_in, Dual, Scalar, ScalarFn};
///
/// /// f(x) = x₀² + x₁².
/// struct F;
/// impl ScalarFn for F {
///     fn input_dim(&self) -> usize { 2 }
///     fn output_dim(&self) -> usize { 1 }
///     fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> reconbound::Result<()> {
///         if let ([a, b], [p]) = (x, y) {
///             *p = *a * *a + *b * *b;
///         }
///         Ok(())
///     }
/// }
/// // ∇f(1, 2) = (2, 4); along (1, 1) and (3, −1): 6 and 2.
/// let mut out = [0.0; 2];
/// let mut scratch = [Dual::<4>::default(); 3];
/// let passes = jvp_directions_in(&F, &[1.0, 2.0], &[1.0, 1.0, 3.0, -1.0], &mut out, &mut scratch)?;
/// assert_eq!((passes, out), (1, [6.0, 2.0]));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn jvp_directions_in<const N: usize, F: ScalarFn>(
    f: &F,
    x: &[f64],
    directions: &[f64],
    out: &mut [f64],
    scratch: &mut [Dual<N>],
) -> Result<usize> {
    let d = f.input_dim();
    let k = match directions.len().checked_div(d) {
        Some(k) if k * d == directions.len() => k,
        None if directions.is_empty() => 0,
        _ => {
            return Err(Error::Inconsistent {
                what: "directions.len() must be a multiple of the input dimension d",
                value: directions.len() as f64,
            })
        }
    };
    for &v in directions {
        check_finite("directions", v)?;
    }
    run(f, x, k, out, scratch, |j, i| {
        directions.get(j * d + i).copied().unwrap_or(0.0)
    })
}

/// [`jvp_coordinates_in`] with the output and scratch allocated: returns the k·m numbers
/// `out[j·m + r] = ∂f_r/∂x_{coords[j]}`.
///
/// # Errors
///
/// As [`jvp_coordinates_in`].
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{jvp_coordinates, Scalar, ScalarFn};
///
/// /// f(x) = (exp x₀, x₀·x₁).
/// struct F;
/// impl ScalarFn for F {
///     fn input_dim(&self) -> usize { 2 }
///     fn output_dim(&self) -> usize { 2 }
///     fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> reconbound::Result<()> {
///         if let ([a, b], [p, q]) = (x, y) {
///             *p = a.exp();
///             *q = *a * *b;
///         }
///         Ok(())
///     }
/// }
/// let cols = jvp_coordinates::<4, _>(&F, &[0.0, 7.0], &[1, 0])?;
/// assert_eq!(cols, vec![0.0, 0.0, 1.0, 7.0]); // ∂f/∂x₁ then ∂f/∂x₀
/// # Ok::<(), reconbound::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn jvp_coordinates<const N: usize, F: ScalarFn>(
    f: &F,
    x: &[f64],
    coords: &[usize],
) -> Result<Vec<f64>> {
    let (mut out, mut scratch) = buffers::<N, F>(f, coords.len())?;
    jvp_coordinates_in(f, x, coords, &mut out, &mut scratch)?;
    Ok(out)
}

/// [`jvp_directions_in`] with the output and scratch allocated.
///
/// # Errors
///
/// As [`jvp_directions_in`].
///
/// # Examples
///
/// ```
/// use reconbound::autodiff::{jvp_directions, Scalar, ScalarFn};
///
/// /// f(x) = x₀·x₁.
/// struct F;
/// impl ScalarFn for F {
///     fn input_dim(&self) -> usize { 2 }
///     fn output_dim(&self) -> usize { 1 }
///     fn eval<S: Scalar>(&self, x: &[S], y: &mut [S]) -> reconbound::Result<()> {
///         if let ([a, b], [p]) = (x, y) {
///             *p = *a * *b;
///         }
///         Ok(())
///     }
/// }
/// // ∇f(2, 3) = (3, 2); along (1, −1): 1.
/// assert_eq!(jvp_directions::<2, _>(&F, &[2.0, 3.0], &[1.0, -1.0])?, vec![1.0]);
/// # Ok::<(), reconbound::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn jvp_directions<const N: usize, F: ScalarFn>(
    f: &F,
    x: &[f64],
    directions: &[f64],
) -> Result<Vec<f64>> {
    let d = f.input_dim();
    let k = directions.len().checked_div(d).unwrap_or(0);
    let (mut out, mut scratch) = buffers::<N, F>(f, k)?;
    jvp_directions_in(f, x, directions, &mut out, &mut scratch)?;
    Ok(out)
}

/// Output (k·m zeros) and scratch (d + m duals) for the allocating helpers.
#[cfg(feature = "alloc")]
fn buffers<const N: usize, F: ScalarFn>(f: &F, k: usize) -> Result<(Vec<f64>, Vec<Dual<N>>)> {
    let (d, m) = (f.input_dim(), f.output_dim());
    let len = k.checked_mul(m).ok_or(Error::Inconsistent {
        what: "coords.len() * output dimension overflows usize",
        value: k as f64,
    })?;
    let scratch_len = d.checked_add(m).ok_or(Error::Inconsistent {
        what: "input dimension + output dimension overflows usize",
        value: d as f64,
    })?;
    let mut out = Vec::new();
    out.resize(len, 0.0);
    let mut scratch = Vec::new();
    scratch.resize(scratch_len, Dual::<N>::default());
    Ok((out, scratch))
}

/// The shared driver: validates, then for each pass seeds lane l of input i with
/// `seed(p·N + l, i)`, evaluates f and copies the used lanes into `out`.
fn run<const N: usize, F: ScalarFn>(
    f: &F,
    x: &[f64],
    k: usize,
    out: &mut [f64],
    scratch: &mut [Dual<N>],
    seed: impl Fn(usize, usize) -> f64,
) -> Result<usize> {
    if N == 0 {
        return Err(Error::InvalidCount {
            name: "lanes",
            value: 0,
            expected: ">= 1 (N, the number of tangent lanes)",
        });
    }
    let (d, m) = (f.input_dim(), f.output_dim());
    if x.len() != d {
        return Err(Error::Inconsistent {
            what: "x.len() must equal the input dimension d",
            value: x.len() as f64,
        });
    }
    for &v in x {
        check_finite("x", v)?;
    }
    if k.checked_mul(m) != Some(out.len()) {
        return Err(Error::Inconsistent {
            what: "out.len() must equal (number of directions) * output dimension",
            value: out.len() as f64,
        });
    }
    let need = d.checked_add(m);
    let (xs, rest) = match need {
        Some(n) if n <= scratch.len() => scratch.split_at_mut(d),
        _ => {
            return Err(Error::Inconsistent {
                what: "scratch.len() must be at least input dimension + output dimension",
                value: scratch.len() as f64,
            })
        }
    };
    let ys = rest.get_mut(..m).ok_or(Error::Inconsistent {
        what: "scratch.len() must be at least input dimension + output dimension",
        value: d as f64,
    })?;
    let passes = pass_count(k, N);
    for p in 0..passes {
        let base = p * N;
        let lanes = N.min(k - base);
        for (i, (xi, &v)) in xs.iter_mut().zip(x).enumerate() {
            *xi = Dual::constant(v);
            for (l, t) in xi.tangent.iter_mut().take(lanes).enumerate() {
                *t = seed(base + l, i);
            }
        }
        for y in ys.iter_mut() {
            *y = Dual::constant(0.0);
        }
        f.eval(xs, ys)?;
        for (r, y) in ys.iter().enumerate() {
            if !y.value.is_finite() {
                return Err(Error::Numerical {
                    what: "jvp: f returned a non-finite value",
                    value: y.value,
                });
            }
            for (l, &t) in y.tangent.iter().take(lanes).enumerate() {
                if !t.is_finite() {
                    return Err(Error::Numerical {
                        what: "jvp: f returned a non-finite derivative",
                        value: t,
                    });
                }
                if let Some(o) = out.get_mut((base + l) * m + r) {
                    *o = t;
                }
            }
        }
    }
    Ok(passes)
}
