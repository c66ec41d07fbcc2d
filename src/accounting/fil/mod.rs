//! Fisher information leakage (FIL) accounting: Guo, Karrer, Chaudhuri, van der Maaten 2022,
//! §5–6 and App. B (`guo2022-bounding-reconstruction-fil-rdp.txt`).
//!
//! # What is computed
//!
//! A release h whose law depends on a training example z ∈ ℝ^d has Fisher information matrix
//! I_h(z) = −E_h[∇²_z ln p(h | z)]. For a Gaussian mechanism h = f(z) + N(0, s²I_p) it is
//! I = JᵀJ/s² with J = ∂f/∂z (p × d) ([`fisher`]; Hannun et al. 2021; Guo Eq. 1). Through
//! the Cramér–Rao bound it limits every reconstruction attack ẑ(h) ([`bounds`], Guo Thm 2):
//!
//! - any attack with mean μ(z): MSE := E‖ẑ − z‖²/d ≥ Tr(J_μ I⁻¹ J_μᵀ)/d + ‖μ(z) − z‖²/d;
//! - an unbiased attack: MSE ≥ d/Tr(I) = 1/η̄² (η̄² = Tr(I)/d is the dFIL) ≥ 1/‖I‖₂.
//!
//! # DP-SGD (Guo §6, Alg. 1)
//!
//! One step releases ḡ_t = (Σ_{i∈B_t} g̃_t(z_i) + N(0, s²I))/B with s = σ·S the noise std of
//! the **sum** (S = [`ClipMethod::max_norm`](crate::train::clip::ClipMethod::max_norm) of C:
//! C for hard, 1.11522·C for GELU clipping — the paper prints 1/σ², i.e. C = 1 and no GELU
//! factor; we divide by s² = σ²S²). Dividing by B does not change Fisher information, so
//! given the batch the step's FIL about z ∈ B_t is I_t(z) = J_tᵀJ_t/s² with
//! J_t = ∂g̃_t(z)/∂z. Composition (Thm 3): the sum of the per-step matrices of a realised run
//! is an unbiased Monte Carlo estimate of an upper bound on the FIL of the final model
//! (average several runs: [`accountant::average_runs`], Eq. 4). Subsampling (Thm 4): each
//! step's matrix is multiplied by κ ([`kappa`]); a step whose batch misses z adds 0.
//!
//! The trace is computed by Eq. 5, Tr(I_t) = Σ_i ‖J_t e_i‖²/s², from Jacobian–vector products,
//! never forming the p × d Jacobian: the squared norms by
//! [`crate::nn::Sequential::clipped_jvp_sq_norms`] (layer-wise identities, no p-vector per
//! coordinate), the full matrix from columns computed forward-over-reverse, 8 input
//! coordinates per pass ([`crate::nn::Sequential::loss_and_grad_jvp`] then
//! [`crate::train::clip::clip`] in dual arithmetic).
//! With k < d coordinates drawn uniformly **without replacement**, fresh for every example and
//! step, (d/k)·Σ_{i∈S} ‖J e_i‖²/s² is an unbiased estimate of the trace with variance
//! d(d − k)/(k(d − 1))·Σ_i (a_i − ā)², a_i = ‖J e_i‖²/s² (finite-population sampling; the
//! public reference code reuses one coordinate k times, which we do not copy).
//!
//! # κ and the per-step ε (Thm 4, Eq. 3)
//!
//! κ = q/(q + (1 − q)e^{−ε}), with ε a bound on the per-step privacy loss of the Gaussian
//! mechanism that fails with probability ≤ δ. We use the exact tail of the privacy-loss law
//! N(μ²/2, μ²) of a Gaussian mechanism with sensitivity Δ and noise std s, μ = Δ/s:
//! ε = μ·Φ⁻¹(1 − δ) + μ²/2 ([`kappa::step_epsilon`]); Alg. 1 line 4 prints the classical
//! 1.115·2·√(2 ln(1.25/δ))/σ ([`kappa::classical_step_epsilon`], valid only when < 1; the
//! exact tail is smaller whenever the classical value is valid). In units of the noise σ·S:
//!
//! - **fixed-size batches** (Guo's setting, replace-one adjacency): Δ = 2S, μ = 2/σ;
//! - **Poisson sampling** (add/remove adjacency): Δ = S, μ = 1/σ — see the sketch below;
//! - **full batch** (q = 1): κ = 1 whatever ε;
//! - **shuffled epochs**: the batches of different steps are not independent, so only κ = 1
//!   (Eq. 2) is offered; asking for the subsampled κ is an error.
//!
//! By default δ = 1/(n·T), so that the total failure probability over T steps is ≤ 1/n (as
//! in the paper, §6.1). If the per-step bound fails, Eq. 3 fails and only Eq. 2 (κ = 1)
//! holds; the accountant reports both ε and δ.
//!
//! ## Proof sketch of Eq. 3 for Poisson sampling (add/remove adjacency)
//!
//! Fix a step and write D′ = D ∖ {z}. Under Poisson sampling the batch is B′ ∪ {z} with
//! probability q and B′ otherwise, B′ ⊆ D′ drawn independently of z's coin. The density of
//! the release is the mixture
//!
//! p(g; z) = (1 − q)·P₀(g) + q·P₁(g; z),  P₀ = E_{B′}[p_{B′}],  P₁ = E_{B′}[p_{B′∪{z}}(·; z)],
//!
//! and only the second term depends on z, so the directional derivative along u is
//! ∂_u p = q·∂_u P₁. If each step is ε-DP under add/remove adjacency at the realised g,
//! p_{B′}(g) ≥ e^{−ε}·p_{B′∪{z}}(g) for every B′, hence P₀ ≥ e^{−ε}P₁ and
//!
//! uᵀI(z)u = ∫ (q ∂_u P₁)² / ((1 − q)P₀ + qP₁) ≤ q²/(q + (1 − q)e^{−ε}) · ∫ (∂_u P₁)²/P₁
//!         ≤ q²/(q + (1 − q)e^{−ε}) · E_{B′}[uᵀ I(z | B′ ∪ {z}) u]
//!
//! by the convexity of Fisher information in the mixture (Guo App. B, Eq. 6). Finally
//! E_B[I(z | B)] = q·E_{B′}[I(z | B′ ∪ {z})] + (1 − q)·0, so I(z) ⪯ κ·E_B[I(z | B)] with
//! κ = q/(q + (1 − q)e^{−ε}). The Gaussian sum mechanism with ‖g̃‖ ≤ S and noise σS has the
//! add/remove privacy loss N(μ²/2, μ²), μ = 1/σ, which exceeds ε with probability δ at
//! ε = μΦ⁻¹(1 − δ) + μ²/2. For fixed-size batches Guo's proof replaces one element of the
//! batch (B′ and B′^{(j)} differ by a replacement), so the sensitivity is 2S and μ = 2/σ. As
//! in the paper, the pointwise density bound is taken to hold outside a failure event of
//! probability δ per step. This step is heuristic, in the paper and here: the bound is
//! needed for every B′ at the realised g, while the tail probability δ controls the
//! privacy loss of one pair of neighbouring batches. Eq. 2 (κ = 1, [`KappaRule::One`])
//! needs no such step.
//!
//! # Files
//!
//! - [`fisher`]: I = JᵀJ/s² and its trace from Jacobian columns.
//! - [`bounds`]: Thm 2 (unbiased, spectral, biased) and the dFIL.
//! - [`kappa`]: κ of Eq. 3, the exact-tail and the classical per-step ε.
//! - [`accountant`]: the DP-SGD observer of Alg. 1 ([`accountant::FilAccountant`]).
//! - [`logreg`]: FIL of output-perturbed logistic regression (Guo §7.1).
//!
//! # Examples
//!
//! ```
//! use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
//! use reconbound::data::synthetic::gaussian_blobs;
//! use reconbound::nn::arch;
//! use reconbound::train::dpsgd::{train, DpSgdConfig};
//!
//! let data = gaussian_blobs(40, 3, 2, 0.3, 1)?;
//! let model = arch::logistic_regression(3)?;
//! let dp = DpSgdConfig { batch_size: 8, steps: 5, ..DpSgdConfig::default() };
//! let config = FilConfig { mode: FilMode::Trace { coords: 3 }, kappa: KappaRule::One, seed: 1 };
//! let mut fil = FilAccountant::new(&model, &data, &dp, &config)?;
//! let mut params = model.init_params(2);
//! train(&model, &data, &dp, &mut params, &mut fil)?;
//! let rows = fil.results()?;
//! assert_eq!(rows.len(), 40);
//! for r in &rows {
//!     // Either never sampled (no information, no bound) or a finite MSE bound d/Tr(I).
//!     assert_eq!(r.mse_bound.is_none(), r.steps_in_batch == 0);
//! }
//! # Ok::<(), reconbound::Error>(())
//! ```

pub mod accountant;
pub mod bounds;
pub mod fisher;
pub mod kappa;
pub mod logreg;

pub use accountant::{
    average_runs, FilAccountant, FilAverage, FilConfig, FilExample, FilMode, KappaRule,
};
pub use bounds::{
    biased_mse_bound, dfil, spectral_mse_bound, spectral_norm_upper, unbiased_mse_bound,
};
pub use fisher::{gaussian_fisher_matrix, gaussian_fisher_trace};
