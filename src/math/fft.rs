//! Radix-2 FFT and linear convolution of non-negative sequences (used to compose PLDs).
//!
//! [`Fft`] is an iterative in-place radix-2 Cooley–Tukey transform of size 2ᵏ with a table of
//! twiddle factors, each computed directly by `libm::cos`/`libm::sin` (no recurrence, so every
//! twiddle is correct to about one ulp). [`convolve`] and [`convolve_with_bound`] compute the
//! linear convolution of two real sequences with **one** forward complex transform (the two
//! inputs packed as real and imaginary part) and one inverse transform; [`self_convolve`]
//! squares a sequence the same way (half-length real transform). [`SplitFft`] is a faster
//! split-format (separate real/imaginary arrays) radix-2² plan without bit reversal (DIF
//! forward, DIT inverse, per-stage contiguous twiddle tables); [`packed_products`] uses it to
//! get two real products (a ∗ b and b ∗ b, or a ∗ a and b ∗ b) from one forward and one
//! inverse transform, which is what the PLD composition uses.
//!
//! # Roundoff
//! For a radix-2 FFT with twiddles accurate to `u` (unit roundoff), the computed transform ŷ
//! of x satisfies ‖ŷ − y‖₂ ≤ c·log₂N·u·‖y‖₂ with c ≈ 5 (Higham, *Accuracy and Stability of
//! Numerical Algorithms*, 2nd ed., Thm 24.2). Propagating this through forward transform,
//! pointwise product (|A_k| ≤ ‖a‖₁) and inverse transform gives, for the output c = a ∗ b,
//! ‖ĉ − c‖₂ ≤ (3c·log₂N + 4)·u·(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂); [`convolve_with_bound`] returns
//! √len(c) times this with c = 10 (a factor two of headroom) as a bound on ‖ĉ − c‖₁.
//! Clamping negative outputs to 0 does not increase the error of a non-negative true result.

use alloc::vec;
use alloc::vec::Vec;

/// A complex number (real, imaginary), the element type of [`Fft`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    #[inline]
    fn mul(self, o: Complex) -> Complex {
        Complex {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

/// A radix-2 FFT plan for sizes up to `max_len` (a power of two).
#[derive(Clone, Debug)]
pub struct Fft {
    /// twiddles[k] = exp(−2πi k / max_len), k < max_len / 2.
    twiddles: Vec<Complex>,
    max_len: usize,
}

impl Fft {
    /// A plan for transforms of any power-of-two length ≤ `max_len` (rounded up to a power
    /// of two, at least 2).
    pub fn new(max_len: usize) -> Self {
        let n = max_len.max(2).next_power_of_two();
        let half = n / 2;
        let mut twiddles = Vec::with_capacity(half);
        for k in 0..half {
            let angle = -2.0 * core::f64::consts::PI * (k as f64) / (n as f64);
            twiddles.push(Complex {
                re: libm::cos(angle),
                im: libm::sin(angle),
            });
        }
        Fft {
            twiddles,
            max_len: n,
        }
    }

    /// The largest supported length.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// In-place transform of `data` (length a power of two ≤ `max_len`; other lengths are
    /// left unchanged and `false` is returned). `inverse` uses exp(+2πi…) and does **not**
    /// divide by the length.
    pub fn transform(&self, data: &mut [Complex], inverse: bool) -> bool {
        let n = data.len();
        if n < 2 || !n.is_power_of_two() || n > self.max_len {
            return n <= 1;
        }
        // bit reversal permutation
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if j > i {
                data.swap(i, j);
            }
        }
        // stage len = 2: butterflies without twiddles
        for c in data.chunks_exact_mut(2) {
            let (x, y) = (c[0], c[1]);
            c[0] = Complex {
                re: x.re + y.re,
                im: x.im + y.im,
            };
            c[1] = Complex {
                re: x.re - y.re,
                im: x.im - y.im,
            };
        }
        // stage len = 4: twiddles 1 and ∓i
        if n >= 4 {
            for c in data.chunks_exact_mut(4) {
                let (x0, x1, x2, x3) = (c[0], c[1], c[2], c[3]);
                // t = x3 · w, w = −i (forward) or +i (inverse)
                let t = if inverse {
                    Complex {
                        re: -x3.im,
                        im: x3.re,
                    }
                } else {
                    Complex {
                        re: x3.im,
                        im: -x3.re,
                    }
                };
                c[0] = Complex {
                    re: x0.re + x2.re,
                    im: x0.im + x2.im,
                };
                c[2] = Complex {
                    re: x0.re - x2.re,
                    im: x0.im - x2.im,
                };
                c[1] = Complex {
                    re: x1.re + t.re,
                    im: x1.im + t.im,
                };
                c[3] = Complex {
                    re: x1.re - t.re,
                    im: x1.im - t.im,
                };
            }
        }
        // remaining stages two at a time (radix-2², halves the passes over memory):
        // stage `len` then stage `2·len` on blocks of 2·len = 4q points.
        let mut len = 8;
        let mut tw1: Vec<Complex> = Vec::with_capacity(n / 4);
        let mut tw2: Vec<Complex> = Vec::with_capacity(n / 4);
        let stage_twiddles = |out: &mut Vec<Complex>, l: usize, count: usize| {
            out.clear();
            let stride = self.max_len / l;
            for k in 0..count {
                let mut w = self.twiddles.get(k * stride).copied().unwrap_or_default();
                if inverse {
                    w.im = -w.im;
                }
                out.push(w);
            }
        };
        while 2 * len <= n {
            let q = len / 2;
            stage_twiddles(&mut tw1, len, q);
            stage_twiddles(&mut tw2, 2 * len, q);
            for chunk in data.chunks_exact_mut(2 * len) {
                let (h0, h1) = chunk.split_at_mut(len);
                let (p0, p1) = h0.split_at_mut(q);
                let (p2, p3) = h1.split_at_mut(q);
                let quads = p0
                    .iter_mut()
                    .zip(p1.iter_mut())
                    .zip(p2.iter_mut().zip(p3.iter_mut()));
                for (((x0, x1), (x2, x3)), (w1, w2)) in quads.zip(tw1.iter().zip(tw2.iter())) {
                    let t = x1.mul(*w1);
                    let b0 = Complex {
                        re: x0.re + t.re,
                        im: x0.im + t.im,
                    };
                    let b1 = Complex {
                        re: x0.re - t.re,
                        im: x0.im - t.im,
                    };
                    let t = x3.mul(*w1);
                    let b2 = Complex {
                        re: x2.re + t.re,
                        im: x2.im + t.im,
                    };
                    let b3 = Complex {
                        re: x2.re - t.re,
                        im: x2.im - t.im,
                    };
                    let t = b2.mul(*w2);
                    *x0 = Complex {
                        re: b0.re + t.re,
                        im: b0.im + t.im,
                    };
                    *x2 = Complex {
                        re: b0.re - t.re,
                        im: b0.im - t.im,
                    };
                    // W_{2len}^{k+q} = W_{2len}^k · (∓i)
                    let u = b3.mul(*w2);
                    let t = if inverse {
                        Complex {
                            re: -u.im,
                            im: u.re,
                        }
                    } else {
                        Complex {
                            re: u.im,
                            im: -u.re,
                        }
                    };
                    *x1 = Complex {
                        re: b1.re + t.re,
                        im: b1.im + t.im,
                    };
                    *x3 = Complex {
                        re: b1.re - t.re,
                        im: b1.im - t.im,
                    };
                }
            }
            len *= 4;
        }
        if len <= n {
            let half = len / 2;
            stage_twiddles(&mut tw1, len, half);
            for chunk in data.chunks_exact_mut(len) {
                let (lo, hi) = chunk.split_at_mut(half);
                for ((x, y), w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw1.iter()) {
                    let t = y.mul(*w);
                    *y = Complex {
                        re: x.re - t.re,
                        im: x.im - t.im,
                    };
                    *x = Complex {
                        re: x.re + t.re,
                        im: x.im + t.im,
                    };
                }
            }
        }
        true
    }
}

fn norm2(a: &[f64]) -> f64 {
    libm::sqrt(a.iter().map(|x| x * x).sum::<f64>())
}

fn norm1(a: &[f64]) -> f64 {
    a.iter().map(|x| libm::fabs(*x)).sum::<f64>()
}

/// Bound on ‖ĉ − c‖₁ for the FFT convolution of `a` and `b` (see the module docs).
pub fn convolution_error_bound(a: &[f64], b: &[f64], fft_len: usize) -> f64 {
    let u = f64::EPSILON / 2.0;
    let log2n = fft_len.max(2).trailing_zeros() as f64;
    let out_len = (a.len() + b.len()).saturating_sub(1) as f64;
    let l2 = (30.0 * log2n + 4.0) * u * (norm2(a) * norm1(b) + norm1(a) * norm2(b));
    libm::sqrt(out_len) * l2 * (1.0 + 1e-6)
}

/// Linear convolution `out[k] = Σ_i a[i] b[k−i]` of two non-negative sequences, by FFT
/// (direct summation for short inputs). Negative roundoff is clamped to 0.
pub fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    convolve_with_bound(a, b, None).0
}

/// [`convolve`] with a reusable plan (created if `None` or too small) and a bound on the
/// ℓ₁ roundoff error of the result (0 for direct summation is **not** claimed: the direct
/// path returns a bound of `len·u·‖a‖₁‖b‖₁`).
pub fn convolve_with_bound(a: &[f64], b: &[f64], plan: Option<&Fft>) -> (Vec<f64>, f64) {
    if a.is_empty() || b.is_empty() {
        return (Vec::new(), 0.0);
    }
    let out_len = a.len() + b.len() - 1;
    if a.len().min(b.len()) <= 32 {
        let mut out = vec![0.0; out_len];
        for (i, &x) in a.iter().enumerate() {
            if let Some(dst) = out.get_mut(i..i + b.len()) {
                for (o, &y) in dst.iter_mut().zip(b.iter()) {
                    *o += x * y;
                }
            }
        }
        let bound = (a.len().min(b.len()) as f64 + 1.0) * f64::EPSILON * norm1(a) * norm1(b);
        return (out, bound);
    }
    let n = out_len.next_power_of_two();
    let owned;
    let fft = match plan {
        Some(p) if p.max_len() >= n => p,
        _ => {
            owned = Fft::new(n);
            &owned
        }
    };
    let mut z = vec![Complex::default(); n];
    for (k, zk) in z.iter_mut().enumerate() {
        zk.re = a.get(k).copied().unwrap_or(0.0);
        zk.im = b.get(k).copied().unwrap_or(0.0);
    }
    fft.transform(&mut z, false);
    // A_k = (Z_k + conj Z_{−k})/2, B_k = (Z_k − conj Z_{−k})/(2i); C_k = A_k B_k.
    let mut c = vec![Complex::default(); n];
    for k in 0..n {
        let zk = z[k];
        let zm = z[(n - k) % n];
        let ar = 0.5 * (zk.re + zm.re);
        let ai = 0.5 * (zk.im - zm.im);
        let br = 0.5 * (zk.im + zm.im);
        let bi = -0.5 * (zk.re - zm.re);
        c[k] = Complex {
            re: ar * br - ai * bi,
            im: ar * bi + ai * br,
        };
    }
    fft.transform(&mut c, true);
    let scale = 1.0 / n as f64;
    let out: Vec<f64> = c
        .iter()
        .take(out_len)
        .map(|v| (v.re * scale).max(0.0))
        .collect();
    (out, convolution_error_bound(a, b, n))
}

/// `a ∗ a` by FFT, with a reusable plan and an ℓ₁ roundoff bound (see [`convolve_with_bound`]).
///
/// Uses the real-input trick: the length-N real transform is computed from one length-N/2
/// complex transform of (a_even + i·a_odd) plus a twiddle post-processing step, and the
/// inverse likewise, so a squaring costs two half-length complex transforms. The roundoff
/// bound is that of [`convolution_error_bound`] (the half-length transforms plus the
/// pre-/post-processing butterfly have log₂N levels in all) with 8u more for the packing.
pub fn self_convolve(a: &[f64], plan: Option<&Fft>) -> (Vec<f64>, f64) {
    if a.len() <= 32 {
        return convolve_with_bound(a, a, plan);
    }
    let out_len = 2 * a.len() - 1;
    let n = out_len.next_power_of_two();
    let m = n / 2;
    let owned;
    let fft = match plan {
        Some(p) if p.max_len() >= n => p,
        _ => {
            owned = Fft::new(n);
            &owned
        }
    };
    let stride = fft.max_len / n;
    let tw = |k: usize| -> Complex {
        // W_N^k = exp(−2πik/N) for k < N/2
        fft.twiddles.get(k * stride).copied().unwrap_or_default()
    };
    let mut z = vec![Complex::default(); m];
    for (j, zj) in z.iter_mut().enumerate() {
        zj.re = a.get(2 * j).copied().unwrap_or(0.0);
        zj.im = a.get(2 * j + 1).copied().unwrap_or(0.0);
    }
    fft.transform(&mut z, false);
    // X_k = E_k + W^k O_k for k = 0..=m, then Y_k = X_k²
    let mut y = vec![Complex::default(); m + 1];
    for (k, yk) in y.iter_mut().enumerate() {
        let zk = z[k % m];
        let zm = z[(m - k % m) % m];
        let e = Complex {
            re: 0.5 * (zk.re + zm.re),
            im: 0.5 * (zk.im - zm.im),
        };
        let o = Complex {
            re: 0.5 * (zk.im + zm.im),
            im: -0.5 * (zk.re - zm.re),
        };
        let w = if k < m {
            tw(k)
        } else {
            Complex { re: -1.0, im: 0.0 }
        };
        let wo = w.mul(o);
        let x = Complex {
            re: e.re + wo.re,
            im: e.im + wo.im,
        };
        *yk = x.mul(x);
    }
    // inverse: Z'_k = E'_k + i·O'_k, E' = (Y_k + conj Y_{m−k})/2, O' = (Y_k − conj Y_{m−k}) W^{−k}/2
    for k in 0..m {
        let yk = y[k];
        let ym = y[m - k];
        let e = Complex {
            re: 0.5 * (yk.re + ym.re),
            im: 0.5 * (yk.im - ym.im),
        };
        let d = Complex {
            re: 0.5 * (yk.re - ym.re),
            im: 0.5 * (yk.im + ym.im),
        };
        let w = tw(k);
        let winv = Complex {
            re: w.re,
            im: -w.im,
        };
        let o = d.mul(winv);
        z[k] = Complex {
            re: e.re - o.im,
            im: e.im + o.re,
        };
    }
    fft.transform(&mut z, true);
    let scale = 1.0 / m as f64;
    let mut out = Vec::with_capacity(out_len);
    for v in z.iter() {
        out.push((v.re * scale).max(0.0));
        out.push((v.im * scale).max(0.0));
    }
    out.truncate(out_len);
    let u = f64::EPSILON / 2.0;
    let log2n = n.trailing_zeros() as f64;
    let bound = libm::sqrt(out_len as f64)
        * (30.0 * log2n + 12.0)
        * u
        * 2.0
        * norm2(a)
        * norm1(a)
        * (1.0 + 1e-6);
    (out, bound)
}

/// A split-format (separate real and imaginary arrays) radix-2 plan without bit reversal:
/// the forward transform is decimation in frequency (natural order in, bit-reversed order
/// out), the inverse decimation in time (bit-reversed in, natural out), so a pointwise
/// product between them needs no permutation. In bit-reversed order the conjugate partner
/// X_{N−k} of the entry at position p ∈ [2^j, 2^{j+1}) sits at the mirrored position
/// 3·2^j − 1 − p (and positions 0 and 1 are their own partners), which is what the packed
/// products below use. Twiddles are stored per stage, contiguously, each computed directly
/// by `libm::cos`/`libm::sin`.
#[derive(Clone, Debug)]
pub struct SplitFft {
    /// stage_re/im[len/2 + k] = Re/Im exp(−2πi k/len), k < len/2, for len = 2, 4, …, max_len
    tw_re: Vec<f64>,
    tw_im: Vec<f64>,
    max_len: usize,
}

impl SplitFft {
    /// A plan for every power-of-two length ≤ `max_len` (rounded up to a power of two ≥ 2).
    pub fn new(max_len: usize) -> Self {
        let n = max_len.max(2).next_power_of_two();
        let mut tw_re = vec![0.0; n];
        let mut tw_im = vec![0.0; n];
        let mut len = 2;
        while len <= n {
            let h = len / 2;
            for k in 0..h {
                let angle = -2.0 * core::f64::consts::PI * (k as f64) / (len as f64);
                tw_re[h + k] = libm::cos(angle);
                tw_im[h + k] = libm::sin(angle);
            }
            len *= 2;
        }
        SplitFft {
            tw_re,
            tw_im,
            max_len: n,
        }
    }

    /// The largest supported length.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    fn twiddles(&self, len: usize) -> (&[f64], &[f64]) {
        let h = len / 2;
        (
            self.tw_re.get(h..len).unwrap_or(&[]),
            self.tw_im.get(h..len).unwrap_or(&[]),
        )
    }

    /// Forward DIF transform in place (natural order in, bit-reversed order out). Lengths
    /// that are not a power of two ≤ `max_len`, or differ between `re` and `im`, are left
    /// unchanged and `false` is returned. Stages are done two at a time (radix 2², the
    /// twiddle W_len^{k+len/4} applied as W_len^k·(−i), exactly the same roundings as two
    /// radix-2 stages up to the exact multiplication by −i).
    pub fn forward(&self, re: &mut [f64], im: &mut [f64]) -> bool {
        let n = re.len();
        if n != im.len() || n < 2 || !n.is_power_of_two() || n > self.max_len {
            return n <= 1 && n == im.len();
        }
        let mut len = n;
        while len >= 4 {
            let q = len / 4;
            let (w1r, w1i) = self.twiddles(len);
            let (w2r, w2i) = self.twiddles(len / 2);
            let (w1r, w1i, w2r, w2i) = (&w1r[..q], &w1i[..q], &w2r[..q], &w2i[..q]);
            for (cr, ci) in re.chunks_exact_mut(len).zip(im.chunks_exact_mut(len)) {
                let (r01, r23) = cr.split_at_mut(2 * q);
                let (r0, r1) = r01.split_at_mut(q);
                let (r2, r3) = r23.split_at_mut(q);
                let (i01, i23) = ci.split_at_mut(2 * q);
                let (i0, i1) = i01.split_at_mut(q);
                let (i2, i3) = i23.split_at_mut(q);
                let (r0, r1, r2, r3) = (&mut r0[..q], &mut r1[..q], &mut r2[..q], &mut r3[..q]);
                let (i0, i1, i2, i3) = (&mut i0[..q], &mut i1[..q], &mut i2[..q], &mut i3[..q]);
                for k in 0..q {
                    let (x0r, x0i, x1r, x1i) = (r0[k], i0[k], r1[k], i1[k]);
                    let (x2r, x2i, x3r, x3i) = (r2[k], i2[k], r3[k], i3[k]);
                    let (ar, ai) = (w1r[k], w1i[k]);
                    let (br, bi) = (w2r[k], w2i[k]);
                    // stage len
                    let (u0r, u0i) = (x0r + x2r, x0i + x2i);
                    let (d2r, d2i) = (x0r - x2r, x0i - x2i);
                    let (u2r, u2i) = (d2r * ar - d2i * ai, d2r * ai + d2i * ar);
                    let (u1r, u1i) = (x1r + x3r, x1i + x3i);
                    // (x1 − x3)·(−i)
                    let (d3r, d3i) = (x1i - x3i, x3r - x1r);
                    let (u3r, u3i) = (d3r * ar - d3i * ai, d3r * ai + d3i * ar);
                    // stage len/2 on both halves
                    r0[k] = u0r + u1r;
                    i0[k] = u0i + u1i;
                    let (e1r, e1i) = (u0r - u1r, u0i - u1i);
                    r1[k] = e1r * br - e1i * bi;
                    i1[k] = e1r * bi + e1i * br;
                    r2[k] = u2r + u3r;
                    i2[k] = u2i + u3i;
                    let (e3r, e3i) = (u2r - u3r, u2i - u3i);
                    r3[k] = e3r * br - e3i * bi;
                    i3[k] = e3r * bi + e3i * br;
                }
            }
            len = q;
        }
        if len == 2 {
            for (cr, ci) in re.chunks_exact_mut(2).zip(im.chunks_exact_mut(2)) {
                let (ur, ui, vr, vi) = (cr[0], ci[0], cr[1], ci[1]);
                cr[0] = ur + vr;
                ci[0] = ui + vi;
                cr[1] = ur - vr;
                ci[1] = ui - vi;
            }
        }
        true
    }

    /// Inverse DIT transform in place (bit-reversed order in, natural order out), with
    /// exp(+2πi…) and **without** division by the length. Same length rules and the same
    /// radix-2² pairing of stages as [`SplitFft::forward`].
    pub fn inverse(&self, re: &mut [f64], im: &mut [f64]) -> bool {
        let n = re.len();
        if n != im.len() || n < 2 || !n.is_power_of_two() || n > self.max_len {
            return n <= 1 && n == im.len();
        }
        let mut done = 1;
        if n.trailing_zeros() % 2 == 1 {
            for (cr, ci) in re.chunks_exact_mut(2).zip(im.chunks_exact_mut(2)) {
                let (ur, ui, vr, vi) = (cr[0], ci[0], cr[1], ci[1]);
                cr[0] = ur + vr;
                ci[0] = ui + vi;
                cr[1] = ur - vr;
                ci[1] = ui - vi;
            }
            done = 2;
        }
        while 4 * done <= n {
            let q = done;
            let len = 4 * q;
            let (w1r, w1i) = self.twiddles(len);
            let (w2r, w2i) = self.twiddles(2 * q);
            let (w1r, w1i, w2r, w2i) = (&w1r[..q], &w1i[..q], &w2r[..q], &w2i[..q]);
            for (cr, ci) in re.chunks_exact_mut(len).zip(im.chunks_exact_mut(len)) {
                let (r01, r23) = cr.split_at_mut(2 * q);
                let (r0, r1) = r01.split_at_mut(q);
                let (r2, r3) = r23.split_at_mut(q);
                let (i01, i23) = ci.split_at_mut(2 * q);
                let (i0, i1) = i01.split_at_mut(q);
                let (i2, i3) = i23.split_at_mut(q);
                let (r0, r1, r2, r3) = (&mut r0[..q], &mut r1[..q], &mut r2[..q], &mut r3[..q]);
                let (i0, i1, i2, i3) = (&mut i0[..q], &mut i1[..q], &mut i2[..q], &mut i3[..q]);
                for k in 0..q {
                    let (br, bi) = (w2r[k], w2i[k]);
                    let (ar, ai) = (w1r[k], w1i[k]);
                    // stage 2q on both halves: y·conj(W_{2q}^k)
                    let (vr, vi) = (r1[k], i1[k]);
                    let (tr, ti) = (vr * br + vi * bi, vi * br - vr * bi);
                    let (y0r, y0i) = (r0[k] + tr, i0[k] + ti);
                    let (y1r, y1i) = (r0[k] - tr, i0[k] - ti);
                    let (vr, vi) = (r3[k], i3[k]);
                    let (tr, ti) = (vr * br + vi * bi, vi * br - vr * bi);
                    let (y2r, y2i) = (r2[k] + tr, i2[k] + ti);
                    let (y3r, y3i) = (r2[k] - tr, i2[k] - ti);
                    // stage len: conj(W_len^k), and conj(W_len^{k+q}) = conj(W_len^k)·i
                    let (tr, ti) = (y2r * ar + y2i * ai, y2i * ar - y2r * ai);
                    r0[k] = y0r + tr;
                    i0[k] = y0i + ti;
                    r2[k] = y0r - tr;
                    i2[k] = y0i - ti;
                    let (sr, si) = (y3r * ar + y3i * ai, y3i * ar - y3r * ai);
                    let (tr, ti) = (-si, sr);
                    r1[k] = y1r + tr;
                    i1[k] = y1i + ti;
                    r3[k] = y1r - tr;
                    i3[k] = y1i - ti;
                }
            }
            done = len;
        }
        true
    }
}

/// Which products [`packed_products`] forms from the packed pair z = a + i·b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Products {
    /// (a ∗ b, b ∗ b): a multiply and a squaring (exponentiation by squaring).
    AbBb,
    /// (a ∗ a, b ∗ b): two squarings.
    AaBb,
    /// (a ∗ b, nothing): one multiply.
    Ab,
}

/// Two linear convolutions of non-negative sequences from one forward and one inverse
/// complex transform of length N (no bit reversal, see [`SplitFft`]), with an ℓ₁ roundoff
/// bound for each. The spectra A_k = (Z_k + conj Z_{N−k})/2, B_k = (Z_k − conj Z_{N−k})/(2i)
/// of the packed z = a + i·b give the two requested (Hermitian) product spectra X, Y, and
/// W = X + iY is inverted: its real part is the first product, its imaginary part the second.
/// Negative outputs are clamped to 0 (the true results are non-negative).
///
/// # Roundoff
/// As in the module docs, with the norms of the packed pair: each product's ℓ₁ error is
/// at most √len·(30 log₂N + 4)·u·2·(‖a‖₂ + ‖b‖₂)(‖a‖₁ + ‖b‖₁) (a ≥ 2× margin for the
/// cross-talk of the packing).
pub fn packed_products(
    a: &[f64],
    b: &[f64],
    which: Products,
    plan: &SplitFft,
    work: &mut (Vec<f64>, Vec<f64>),
) -> ((Vec<f64>, f64), (Vec<f64>, f64)) {
    if a.is_empty() || b.is_empty() {
        return ((Vec::new(), 0.0), (Vec::new(), 0.0));
    }
    let len1 = match which {
        Products::AaBb => 2 * a.len() - 1,
        _ => a.len() + b.len() - 1,
    };
    let len2 = match which {
        Products::Ab => 0,
        _ => 2 * b.len() - 1,
    };
    let n = len1.max(len2).next_power_of_two().max(2);
    let owned;
    let fft = if plan.max_len() >= n {
        plan
    } else {
        owned = SplitFft::new(n);
        &owned
    };
    let (re, im) = work;
    re.clear();
    re.resize(n, 0.0);
    im.clear();
    im.resize(n, 0.0);
    for (x, &v) in re.iter_mut().zip(a.iter()) {
        *x = v;
    }
    for (x, &v) in im.iter_mut().zip(b.iter()) {
        *x = v;
    }
    fft.forward(re, im);
    // pointwise, in bit-reversed order, over mirrored partner pairs (p, q)
    let pair = |p: usize, q: usize, re: &mut [f64], im: &mut [f64]| {
        let (zr, zi) = (re[p], im[p]);
        let (mr, mi) = (re[q], im[q]);
        let (ar, ai) = (0.5 * (zr + mr), 0.5 * (zi - mi));
        let (br, bi) = (0.5 * (zi + mi), -0.5 * (zr - mr));
        let (xr, xi) = match which {
            Products::AaBb => (ar * ar - ai * ai, 2.0 * ar * ai),
            _ => (ar * br - ai * bi, ar * bi + ai * br),
        };
        let (yr, yi) = match which {
            Products::Ab => (0.0, 0.0),
            _ => (br * br - bi * bi, 2.0 * br * bi),
        };
        // W_p = X + iY; the partner gets conj(X) + i conj(Y)
        re[p] = xr - yi;
        im[p] = xi + yr;
        if q != p {
            re[q] = xr + yi;
            im[q] = -xi + yr;
        }
    };
    pair(0, 0, re, im);
    if n >= 2 {
        pair(1, 1, re, im);
    }
    let mut j = 2;
    while j < n {
        for p in j..(j + j / 2) {
            let q = 3 * j - 1 - p;
            pair(p, q, re, im);
        }
        j *= 2;
    }
    fft.inverse(re, im);
    let scale = 1.0 / n as f64;
    let first: Vec<f64> = re.iter().take(len1).map(|v| (v * scale).max(0.0)).collect();
    let second: Vec<f64> = im.iter().take(len2).map(|v| (v * scale).max(0.0)).collect();
    let l1 = norm1(a) + norm1(b);
    let l2 = norm2(a) + norm2(b);
    let u = f64::EPSILON / 2.0;
    let log2n = n.trailing_zeros() as f64;
    let per = (30.0 * log2n + 4.0) * u * l2 * l1 * 2.0 * (1.0 + 1e-6);
    (
        (first, libm::sqrt(len1 as f64) * per),
        (second, libm::sqrt(len2 as f64) * per),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; a.len() + b.len() - 1];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                out[i + j] += x * y;
            }
        }
        out
    }

    #[test]
    fn fft_convolution_matches_direct_sum_within_stated_bound() {
        // Deterministic pseudo-random non-negative inputs of awkward lengths.
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for &(la, lb) in &[(33usize, 100usize), (1000, 777), (4096, 4096), (50, 3000)] {
            let a: Vec<f64> = (0..la).map(|_| next()).collect();
            let b: Vec<f64> = (0..lb).map(|_| next()).collect();
            let (c, bound) = convolve_with_bound(&a, &b, None);
            let d = direct(&a, &b);
            assert_eq!(c.len(), d.len());
            let err: f64 = c.iter().zip(&d).map(|(x, y)| (x - y).abs()).sum();
            assert!(err <= bound, "{la}x{lb}: err {err} > bound {bound}");
            // the bound is not vacuous: within 1e-9 of the total mass
            let total: f64 = d.iter().sum();
            assert!(bound < 1e-9 * total, "bound {bound} too loose");
            let (sq, sbound) = self_convolve(&a, None);
            let dsq = direct(&a, &a);
            let serr: f64 = sq.iter().zip(&dsq).map(|(x, y)| (x - y).abs()).sum();
            assert!(serr <= sbound, "square {la}: {serr} > {sbound}");
        }
    }

    #[test]
    fn packed_products_match_direct_sums_within_stated_bound() {
        // Split-format DIF/DIT transforms with mirrored partners: every product within its
        // certified ℓ₁ bound, on awkward lengths.
        let mut s = 987u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let plan = SplitFft::new(1 << 14);
        let mut work = (Vec::new(), Vec::new());
        for &(la, lb) in &[
            (1usize, 1usize),
            (2, 3),
            (33, 100),
            (1000, 777),
            (4096, 4096),
        ] {
            let a: Vec<f64> = (0..la).map(|_| next()).collect();
            let b: Vec<f64> = (0..lb).map(|_| next()).collect();
            let (ab, aa, bb) = (direct(&a, &b), direct(&a, &a), direct(&b, &b));
            for which in [Products::AbBb, Products::AaBb, Products::Ab] {
                let ((x, ex), (y, ey)) = packed_products(&a, &b, which, &plan, &mut work);
                let dx = if which == Products::AaBb { &aa } else { &ab };
                assert_eq!(x.len(), dx.len());
                let errx: f64 = x.iter().zip(dx).map(|(p, q)| (p - q).abs()).sum();
                assert!(errx <= ex, "{which:?} {la}x{lb}: {errx} > {ex}");
                if which != Products::Ab {
                    assert_eq!(y.len(), bb.len());
                    let erry: f64 = y.iter().zip(&bb).map(|(p, q)| (p - q).abs()).sum();
                    assert!(erry <= ey, "{which:?} {la}x{lb}: {erry} > {ey}");
                } else {
                    assert!(y.is_empty());
                }
                let total: f64 = dx.iter().sum();
                assert!(
                    ex < 1e-9 * total.max(1e-300) + 1e-12,
                    "bound {ex} too loose"
                );
            }
        }
    }

    #[test]
    fn fft_round_trip_and_known_transform() {
        let fft = Fft::new(8);
        let mut x = [Complex::default(); 8];
        x[1].re = 1.0; // δ_1 → exp(−2πik/8)
        fft.transform(&mut x, false);
        for (k, v) in x.iter().enumerate() {
            let ang = -2.0 * core::f64::consts::PI * k as f64 / 8.0;
            assert!((v.re - ang.cos()).abs() < 1e-15 && (v.im - ang.sin()).abs() < 1e-15);
        }
        fft.transform(&mut x, true);
        assert!((x[1].re / 8.0 - 1.0).abs() < 1e-15 && x[0].re.abs() < 1e-15);
    }
}
