//! Fuzz the accountant entry points with arbitrary floats (NaN, ±∞, subnormals, huge values):
//! every call returns a finite value or an error, never a panic or NaN. Step and sample counts
//! are capped so that each input runs quickly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::accounting::{fano, gaussian, mse, prior, rdp, rero};

fn f(data: &[u8], i: usize) -> f64 {
    let mut b = [0u8; 8];
    for (k, slot) in b.iter_mut().enumerate() {
        *slot = data.get(i * 8 + k).copied().unwrap_or(0);
    }
    f64::from_le_bytes(b)
}

fn ok(r: reconbound::Result<f64>) {
    if let Ok(x) = r {
        assert!(x.is_finite(), "non-finite result {x}");
    }
}

fuzz_target!(|data: &[u8]| {
    let (q, sigma, alpha, delta, kappa) = (f(data, 0), f(data, 1), f(data, 2), f(data, 3), f(data, 4));
    let steps = (data.first().copied().unwrap_or(1) as u64) * 4;
    ok(rdp::subsampled_gaussian_rdp(q, sigma, alpha));
    ok(rdp::gaussian_rdp(alpha, q, sigma));
    ok(rdp::epsilon(q, sigma, steps, delta, rdp::Conversion::Improved).map(|e| e.epsilon));
    ok(gaussian::analytic_delta(alpha, sigma));
    ok(rero::balle::gamma_from_dp(kappa, alpha));
    ok(rero::dpsgd::gamma_full_batch(kappa, sigma, steps));
    ok(prior::kappa_uniform(steps));
    ok(fano::fano_closed_form(steps, sigma, alpha).map(|b| b.success_bound));
    ok(mse::mse_lower_bound_uniform(alpha, sigma, steps));
});
