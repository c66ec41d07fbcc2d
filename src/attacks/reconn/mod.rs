//! RecoNN, the model-based reconstruction attack of Balle, Cherubin & Hayes 2022 (§IV–VI;
//! Hayes et al. 2023, App. A): an informed adversary trains many shadow models on D⁻ ∪ {zᵢ}
//! for images zᵢ of its own, learns a reconstructor from a model's parameters to the image it
//! was trained on, and applies it to the released model. [`shadow_set`] holds the shadow
//! models' file format: written once, reused, sharded over machines and merged byte for byte.

pub mod shadow_set;
