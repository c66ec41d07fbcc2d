use reconbound::attacks::prior_aware::PriorAwareSetup;
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, Activation};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;
fn main() {
    let pool = embedded_mnist().unwrap().flatten();
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let setup = PriorAwareSetup {
        model: &model,
        pool: &pool,
        train_size: 999,
        prior_size: 10,
        dpsgd: DpSgdConfig {
            learning_rate: 10.0,
            momentum: 0.0,
            clipping: Some(Clipping {
                method: ClipMethod::Hard,
                norm: 0.1,
            }),
            noise_multiplier: 1.0,
            sampling: Sampling::FullBatch,
            batch_size: 0,
            steps: 100,
            ..DpSgdConfig::default()
        },
    };
    let t = std::time::Instant::now();
    for i in 0..4 {
        setup.run_trial(1, i).unwrap();
    }
    println!("{:.3} s per trial", t.elapsed().as_secs_f64() / 4.0);
}
