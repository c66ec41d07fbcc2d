use reconbound::attacks::audit::canary::Crafter;
use reconbound::attacks::audit::run::{Audit, AuditConfig};
use reconbound::nn::{arch, Activation};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;
use std::time::Instant;
fn main() {
    let mnist = reconbound::data::embedded_mnist().unwrap().flatten();
    let d: Vec<usize> = (0..1000).collect();
    let p: Vec<usize> = (1000..2000).collect();
    let data = mnist.subset(&d).unwrap();
    let pool = mnist.subset(&p).unwrap();
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let sigma: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1.0);
    let cfg = AuditConfig {
        dpsgd: DpSgdConfig {
            learning_rate: 100.0,
            momentum: 0.0,
            weight_decay: 0.0,
            clipping: Some(Clipping {
                method: ClipMethod::Hard,
                norm: 0.1,
            }),
            noise_multiplier: sigma,
            sampling: Sampling::FullBatch,
            batch_size: 1001,
            steps: 100,
            seed: 0,
        },
        init_seed: 0,
        pool_index: 0,
        adaptive: Default::default(),
    };
    for crafter in Crafter::TABLE_ONE {
        let t0 = Instant::now();
        let audit = Audit::new(&model, crafter, &cfg, &data, &pool).unwrap();
        let t1 = Instant::now();
        let trials = 4;
        let mut outs = vec![];
        for k in 0..trials {
            outs.push(audit.run_trial(1, k).unwrap());
        }
        let dt = t1.elapsed().as_secs_f64() / trials as f64;
        println!(
            "{:?}: craft {:.3}s, per trial {:.3}s",
            crafter,
            (t1 - t0).as_secs_f64(),
            dt
        );
        for o in &outs {
            println!(
                "  without {:?}\n  with    {:?} steps {}",
                o.without, o.with, o.canary_steps
            );
        }
    }
}
