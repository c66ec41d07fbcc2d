//! Fuzz the accountant entry points with arbitrary floats (NaN, ±∞, subnormals, huge values):
//! every call returns a finite value or an error, never a panic or NaN. Step and sample counts
//! are capped so that each input runs quickly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::accounting::fil::{bounds, kappa as fil_kappa};
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
    // FIL (Guo et al. 2022 Thms 2 and 4): κ, the per-step ε and the Thm 2 bounds.
    ok(fil_kappa::step_mu(sigma, fil_kappa::Adjacency::AddRemove));
    ok(fil_kappa::step_epsilon(sigma, delta));
    ok(fil_kappa::classical_step_epsilon(sigma, delta));
    ok(fil_kappa::kappa(q, alpha));
    ok(fil_kappa::default_delta(steps as usize, steps));
    ok(bounds::unbiased_mse_bound(kappa, steps as usize));
    ok(bounds::dfil(kappa, steps as usize));
    let m = [q, sigma, sigma, alpha];
    ok(bounds::spectral_norm_upper(&m, 2));
    ok(bounds::spectral_mse_bound(&m, 2));
    ok(bounds::biased_mse_bound(&m, 2, &[1.0, 0.0, 0.0, 1.0], &[delta, kappa]));
});
