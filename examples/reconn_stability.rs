//! The measurements behind RecoNN's default training (README, "The default training: below
//! the edge of stability"; `attacks::reconn::stability`): for each seed and each of the
//! peer's training (ρ = 0.5, T = 100) and the default (ρ = 0.25, T = 200), on the vendored
//! MNIST digits —
//! - ρλ at shadow model 0's trained parameters, and its largest value from step 40 on
//!   (checkpoints every 20 steps; each checkpoint retrains from θ₀, which gives the same
//!   bits as stopping there);
//! - how far moving a target by about 1e-6 moves the model (for shadow models 0–2: the
//!   target x becomes x·(1 − 1e-6) + 0.5e-6, a pixel-wise move that stays in [0, 1]);
//! - the median over the last layer's 110 coordinates of their sd across shadow models 0–19;
//! - shadow model 0's accuracy on D⁻ and on the last 1,000 images of D̄.
//!
//! `cargo run --release --example reconn_stability [SEEDS]` (SEEDS `0-15` by default; run
//! from the repository's root).

use reconbound::attacks::reconn::setting::{ModelTrainer, Role, Splits, Training};
use reconbound::data::{idx::mnist_from_dir, Dataset};
use reconbound::Result;

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

fn main() -> Result<()> {
    let seeds: Vec<u64> = match std::env::args().nth(1) {
        Some(s) => {
            let (a, b) = s.split_once('-').unwrap_or((&s, &s));
            match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(a), Ok(b)) if a <= b => (a..=b).collect(),
                _ => {
                    eprintln!("usage: reconn_stability [FIRST-LAST], e.g. 0-15");
                    std::process::exit(2);
                }
            }
        }
        None => (0..16).collect(),
    };
    let data = mnist_from_dir("data/mnist-10k")?;
    println!("training           seed  ρλ(T)  max ρλ(t≥40)  moved by (3 targets)        sd    acc D⁻  acc test");
    for (name, training) in [
        ("peer ρ 0.5 T 100", Training::peer()),
        ("default ρ 0.25 T 200", Training::default()),
    ] {
        for &seed in &seeds {
            let splits = Splits::draw(data.len(), training.d_minus, seed)?;
            // the data with moved copies of shadow targets 0-2 appended
            let (mut xs, mut ys, shape, classes) = data.clone().into_parts();
            let n = ys.len();
            let mut moved = Vec::new();
            for t in 0..3 {
                let (x, y) = data.example(splits.aux[t])?;
                let xp: Vec<f64> = x.iter().map(|v| v * (1.0 - 1e-6) + 0.5e-6).collect();
                moved.push(distance(x, &xp));
                xs.extend_from_slice(&xp);
                ys.push(y);
            }
            let extended = Dataset::new(xs, ys, shape, classes)?;
            let trainer = ModelTrainer::new(&extended, &splits.d_minus, training, seed)?;
            let mut gains = Vec::new();
            for (t, d) in moved.iter().enumerate() {
                let a = trainer.train(Role::Shadow, t as u64, splits.aux[t])?;
                let b = trainer.train(Role::Shadow, t as u64, n + t)?;
                gains.push(distance(&a, &b) / d);
            }
            let models = (0..20)
                .map(|i| trainer.train(Role::Shadow, i as u64, splits.aux[i]))
                .collect::<Result<Vec<_>>>()?;
            let p = models[0].len();
            let mut sds: Vec<f64> = (p - 110..p)
                .map(|j| {
                    let m = models.iter().map(|v| v[j]).sum::<f64>() / 20.0;
                    (models.iter().map(|v| (v[j] - m).powi(2)).sum::<f64>() / 19.0).sqrt()
                })
                .collect();
            sds.sort_by(f64::total_cmp);
            let end = trainer.stability(&models[0], splits.aux[0])?;
            let mut late: f64 = 0.0;
            let mut t = 40;
            while t <= training.steps {
                let at_t = ModelTrainer::new(
                    &data,
                    &splits.d_minus,
                    Training {
                        steps: t,
                        ..training
                    },
                    seed,
                )?;
                let params = at_t.train(Role::Shadow, 0, splits.aux[0])?;
                late = late.max(at_t.stability(&params, splits.aux[0])?.lr_times_sharpness);
                t += 20;
            }
            let test = &splits.aux[splits.aux.len() - 1000..];
            println!(
                "{name:<20} {seed:>3}  {:>5.2}  {late:>12.2}  {:.1e} {:.1e} {:.1e}  {:.4}  {:.3}   {:.3}",
                end.lr_times_sharpness,
                gains[0],
                gains[1],
                gains[2],
                (sds[54] + sds[55]) / 2.0,
                trainer.accuracy(&models[0], &splits.d_minus)?,
                trainer.accuracy(&models[0], test)?,
            );
        }
    }
    Ok(())
}
