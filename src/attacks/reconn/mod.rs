//! RecoNN, the model-based reconstruction attack of Balle, Cherubin & Hayes 2022 (§IV–VI),
//! the "model-based attack" of Hayes, Mahloujifar & Balle 2023 (App. A).
//!
//! **Threat model (the informed adversary).** The adversary knows D⁻ (all training examples
//! but one), the training algorithm and, by default, the initialisation θ₀. It trains K
//! *shadow models* on D⁻ ∪ {zᵢ} for images zᵢ of its own data D̄, then a *reconstructor*
//! network that maps a model's features to the image it was trained on, and applies it to a
//! released model. Its view of a released model is that model's parameters (white box) or its
//! logits on 200 fixed images of D̄ (black box, §VI-C) — never the target, the training noise
//! or the released model's initialisation when it is unknown.
//!
//! - [`setting`]: the splits (D⁻, D̄, the released targets: disjoint), the training of every
//!   model (full-batch GD or DP-GD, known or unknown θ₀), model i a pure function of
//!   (seed, i);
//! - [`reconstructor`]: the MLP features → 1,000 (ReLU) → 784 (sigmoid), MSE + MAE, Adam,
//!   early stopping;
//! - [`experiment`]: features, standardisation, the evaluation against the NN oracle (the
//!   closest image of D̄: the best guess without the model) and the mean image, and, under DP,
//!   Hayes-style success (MSE ≤ η) beside γ at κ(η) estimated from D̄;
//! - [`shadow_set`]: the shadow models' file format — written once, reused, sharded over
//!   machines and merged byte for byte, refused when it does not match the run;
//! - [`stability`]: the sharpness of a trained model against its learning rate (ρλ < 2):
//!   why the default training is ρ = 0.25, T = 200 and not the peer's ρ = 0.5, T = 100.
//!
//! **Judging it.** A reconstruction is only interesting when it is closer to the target than
//! the NN oracle: that image is available to the adversary without looking at the model.
//! Controls that must fail: a reconstructor trained on shuffled (feature, target) pairs, and
//! released models trained without their target ([`experiment::Control`]); and, as tests, an
//! unknown θ₀ (Balle Table II) and strong DP (Fig. 8, where the success must also stay
//! below γ at κ(η)).

pub mod experiment;
pub mod reconstructor;
pub mod setting;
pub mod shadow_set;
pub mod stability;
