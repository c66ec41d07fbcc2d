//! The gradient-matching reconstruction attack (Hayes, Mahloujifar, Balle 2023, §2) on the
//! embedded MNIST subset: full-batch DP-SGD on D = D⁻ ++ [target] (|D⁻| = 99) with the MLP
//! 784–10–10 (ELU), C = 0.1, T = 100 steps, at a few noise multipliers; the adversary
//! reconstructs the target from the residual gradients and is scored as in App. D against 9
//! other MNIST images. Prints one line per noise multiplier and the Fig. 6 grid data's
//! captions, one column per noise multiplier (rendering the grid as SVG is left to the
//! command line: its SVG helpers are crate-private).
//!
//! `cargo run --release --example gradient_matching_mnist` (about 10 s).

use reconbound::attacks::gradient_matching::{
    prior_score, reconstruction_grid, GradientMatching, ReconstructionConfig, ResidualRecorder,
};
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, Activation};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{train, Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;

fn main() -> Result<(), reconbound::Error> {
    let mnist = embedded_mnist()?;
    let n = 100;
    let data = mnist.subset(&(0..n).collect::<Vec<_>>())?;
    let known = mnist.subset(&(0..n - 1).collect::<Vec<_>>())?;
    let others = mnist.subset(&(n..n + 9).collect::<Vec<_>>())?;
    let (target, label) = data.example(n - 1)?;
    let model = arch::mlp(784, &[10], 10, Activation::Elu)?;
    let clipping = Clipping {
        method: ClipMethod::Hard,
        norm: 0.1,
    };
    let (mut targets, mut reconstructions) = (Vec::new(), Vec::new());
    for sigma in [0.0, 0.5, 2.0] {
        let config = DpSgdConfig {
            learning_rate: 1.0,
            momentum: 0.0,
            weight_decay: 0.0,
            clipping: Some(clipping),
            noise_multiplier: sigma,
            sampling: Sampling::FullBatch,
            batch_size: n,
            steps: 100,
            seed: 1,
        };
        let mut params = model.init_params(1);
        let mut recorder = ResidualRecorder::new(&model, clipping, &known)?;
        train(&model, &data, &config, &mut params, &mut recorder)?;
        let steps = recorder.into_steps();
        let attack = GradientMatching::new(&model, label as usize, clipping, &steps)?;
        let rec = attack.reconstruct(&ReconstructionConfig {
            iterations: 300,
            restarts: 2,
            ..ReconstructionConfig::default()
        })?;
        let score = prior_score(&rec.z, target, others.features())?;
        println!(
            "sigma = {sigma}: L(z_hat) = {:.4e}, MSE = {:.4e}, nearer to the target than to 9 others: {}",
            rec.loss, score.mse, score.success
        );
        targets.extend_from_slice(target);
        reconstructions.extend_from_slice(&rec.z);
    }
    for row in reconstruction_grid(&targets, &reconstructions, 784)? {
        let captions: Vec<&str> = row.images.iter().map(|i| i.caption.as_str()).collect();
        println!("{}: {}", row.label, captions.join(" | "));
    }
    Ok(())
}
