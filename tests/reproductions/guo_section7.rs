//! Guo, Karrer, Chaudhuri, van der Maaten 2022, §7.1: output-perturbed logistic regression on
//! binary MNIST (n = 12,665, λ = σ = 1e-2) is (2, ε)-RDP with ε = 4/(nλσ)² = 2.4937, and
//! Thm 1 (unbiased, diam_i = 1 on [0, 1]^d) gives MSE ≥ 1/(4(e^ε − 1)) = 0.0225.
//! Source: /work/shared/papers/guo2022-bounding-reconstruction-fil-rdp.txt (the EARLIER
//! version's ε = 2/(nλσ) is superseded).

use reconbound::accounting::mse::{mse_lower_bound_unbiased, mse_lower_bound_uniform};

/// (2, ε)-RDP of output perturbation: sensitivity 2/(nλ), Gaussian RDP α Δ²/(2σ²) at α = 2.
fn epsilon_section7() -> f64 {
    let (n, lambda, sigma) = (12_665.0f64, 1e-2f64, 1e-2f64);
    let sens = 2.0 / (n * lambda);
    2.0 * sens * sens / (2.0 * sigma * sigma)
}

#[test]
fn guo22_section7_1_rdp_epsilon() {
    // Printed 2.49 in §7.1 (2.4937 to 4 decimals): tolerance 5e-5.
    let eps = epsilon_section7();
    assert!((eps - 2.4937).abs() < 5e-5, "{eps}");
}

#[test]
fn guo22_section7_1_mse_bound_any_dimension() {
    // MSE ≥ 0.0225 (to the 3 significant digits quoted): tolerance 5e-5; the bound does not
    // depend on d when all diameters are 1 (checked for d = 1, 784, 3072; both APIs agree to
    // 1e-11 relative — the slice version rounds down by a further ≈ 2(d + 16)ε for its sum).
    let eps = epsilon_section7();
    for d in [1usize, 784, 3072] {
        let b = mse_lower_bound_unbiased(eps, &vec![1.0; d]).unwrap();
        assert!((b - 0.0225).abs() < 5e-5, "d = {d}: {b}");
        let u = mse_lower_bound_uniform(eps, 1.0, d as u64).unwrap();
        assert!(((u - b) / b).abs() < 1e-11, "d = {d}: {u} vs {b}");
        // A lower bound: never above the exact value 1/(4(e^ε − 1)).
        let exact = 1.0 / (4.0 * eps.exp_m1());
        assert!(b <= exact && u <= exact);
    }
}
