//! `reconbound attack gradient-matching`: the gradient-matching reconstruction attack of
//! Hayes, Mahloujifar, Balle 2023 (§2, App. A, D) on the crate's DP-SGD, scored against n − 1
//! other points (App. D) beside the ReRo bound at κ = 1/n, and by its MSE.

use super::args::{parse, switch as s, value as v};
use super::attack_run::{load_pool, parse_run_flags, rero_bounds, run_flags_and, RunDefaults};
use super::failure::{shown, Failure};
use super::fil_logreg::row;
use super::format::{min_median_max, sig, Side};
use super::json::{self, Object, Value};
use super::output::{check_writable, write_whole, Progress};
use super::svg;
use reconbound::attacks::game::ScoreKind;
use reconbound::attacks::gradient_matching::{
    GradientMatchingOutcome, GradientMatchingSetup, Measure, ReconstructionConfig,
};
use reconbound::attacks::trial::{run_trials, success_rate};
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

fn usage(msg: String) -> Failure {
    Failure::Usage(super::args::UsageError(msg))
}

/// Documented defaults of `attack gradient-matching`.
mod defaults {
    /// |D⁻| (Hayes et al. use 999; a smaller set keeps the default run short).
    pub const TRAIN_SIZE: u64 = 99;
    /// n − 1 of the App. D score (Hayes et al.: n = 10).
    pub const OTHERS: u64 = 9;
    /// DP-SGD learning rate.
    pub const LR: f64 = 1.0;
    /// Targets attacked.
    pub const TRIALS: u64 = 10;
    /// Optimiser iterations per restart.
    pub const ITERATIONS: u64 = 300;
    /// Restarts.
    pub const RESTARTS: u64 = 2;
    /// Images shown in the --images grid.
    pub const GRID: usize = 10;
}

const HELP: &str = "\
usage: reconbound attack gradient-matching [--model mlp|mnist-convnet] [--data embedded|<idx dir>]
         [--train-size N] [--others K] [--sampling-rate Q] [--steps T] [--clip C] [--lr R]
         [--noise-multiplier S | --epsilon E [--delta D]] [--trials R] [--iterations I]
         [--restarts P] [--step-size H] [--seed X] [--threads J] [--csv FILE] [--images FILE.svg]
         [--quiet] [--json]

The gradient-matching reconstruction attack of Hayes, Mahloujifar, Balle 2023 (§2, App. A):
per trial (a pure function of the seed and the trial index), draw D⁻ (N examples) and a
target from the data, and K other points of the target's class, train the model by DP-SGD on D⁻ plus the target (hard
clipping at C, noise multiplier S, T steps, Poisson rate Q or the full batch for Q = 1), and
reconstruct the target, label known, as ẑ = argmin_z Σ_t ‖clip(∇ℓ(θ_t; z)) − r_t‖², r_t the
released gradient sum minus D⁻'s part, by Adam (step size H, cosine-annealed, I iterations)
from U[0, 1]^d with several restarts, projected onto [0, 1]^d. Its gradient in z is one
dual-number pass through the backward with the parameters' tangent set (no d input JVPs).

Scored by App. D — success when ẑ is nearer to the target than to each of the K others — with
a two-sided 95 % Clopper–Pearson interval, beside the ReRo bounds at κ = 1/(K + 1), and by the
MSE ‖ẑ − z‖²/d. Scored this way the attack is a prior-aware attack with a prior of K + 1
candidates of one class, so γ applies; the others share the target's class because the
adversary is given the label (Hayes et al. draw them from all classes).

Defaults: MLP 784-10-10 (ELU), embedded MNIST, N = 99, K = 9, Q = 1, T = 100, C = 0.1,
learning rate 1, ε = 8 at δ = 1e-5, 10 trials, I = 300, P = 2 restarts, H = 0.05, seed 0.

JSON keys: command, attack, model, data, train_size, others, sampling_rate, batch_size, steps,
clip, lr, delta, epsilon, noise_multiplier, iterations, restarts, step_size, seed, kappa,
trials, successes, success_rate, success_lower, success_upper, gamma, gamma_lower,
gamma_balle, above_bound, mse_mean, mse_median, mse_min, mse_max, loss_median.
CSV (--csv): trial,target,success,mse,distance,nearest_other,loss.
";

/// What `attack gradient-matching --help` adds to [`HELP`] (issue 43).
const EXAMPLE: &str = "\
Example (one trial of 100 Adam iterations):
  reconbound attack gradient-matching --trials 1 --iterations 100
";

pub(crate) fn gradient_matching(args: &[String]) -> Out {
    let f = parse(
        args,
        &run_flags_and(&[
            v("others"),
            v("iterations"),
            v("restarts"),
            v("step-size"),
            v("csv"),
            v("images"),
            s("json"),
        ]),
    )?;
    if f.help {
        let short = String::from(HELP) + "\n" + EXAMPLE;
        return Ok(f.help_text("attack gradient-matching", &short, String::from(HELP)));
    }
    let r = parse_run_flags(
        &f,
        &RunDefaults {
            train_size: defaults::TRAIN_SIZE,
            lr: defaults::LR,
            trials: defaults::TRIALS,
            delta_with_sigma: false,
        },
    )?;
    let (epsilon, sigma) = r.single("gradient-matching")?;
    if !(1..=100_000).contains(&r.trials) {
        return Err(usage(format!(
            "--trials = {} is out of range: must be in 1..=100000",
            r.trials
        )));
    }
    let others = f.u64("others")?.unwrap_or(defaults::OTHERS);
    if !(1..=100_000).contains(&others) {
        return Err(usage(format!(
            "--others = {others} is out of range: must be in 1..=100000"
        )));
    }
    let iterations = f.u64("iterations")?.unwrap_or(defaults::ITERATIONS);
    let restarts = f.u64("restarts")?.unwrap_or(defaults::RESTARTS);
    for (name, value, max) in [
        ("iterations", iterations, 10_000_000u64),
        ("restarts", restarts, 1000),
    ] {
        if !(1..=max).contains(&value) {
            return Err(usage(format!(
                "--{name} = {value} is out of range: must be in 1..={max}"
            )));
        }
    }
    let reconstruction = ReconstructionConfig {
        iterations,
        restarts,
        learning_rate: match f.f64("step-size")? {
            None => ReconstructionConfig::default().learning_rate,
            Some(h) if h > 0.0 && h.is_finite() => h,
            Some(h) => {
                return Err(usage(format!(
                    "--step-size = {} is out of range: must be finite and > 0",
                    shown(h)
                )))
            }
        },
        ..ReconstructionConfig::default()
    };
    let threads = super::shard::parse_threads(&f)?;
    super::output::check_flag_paths(&f, &["csv", "images"], &["data"], &[])?;
    let csv = f.raw("csv").map(String::from);
    let images = f.raw("images").map(String::from);
    if let Some(p) = &csv {
        check_writable("csv", p)?;
    }
    if let Some(p) = &images {
        check_writable("images", p)?;
    }
    let (model, pool, shape) = load_pool(&r.run, 1, "--train-size + 1")?;
    // the K others come from the pool outside D⁻ and the target: name both flags when it is
    // too small (before any work, and again if a trial's class runs short)
    let others_short = |n: u64| {
        usage(format!(
            "--train-size = {} and --others = {others} do not fit: --data has {} examples, and each trial needs --train-size + 1 of them for D⁻ and the target plus --others more of the target's class{}; lower --train-size or --others",
            r.run.train_size,
            pool.len(),
            if n > 0 { format!(" ({n} are needed in all)") } else { String::new() }
        ))
    };
    let needed = r.run.train_size.saturating_add(1).saturating_add(others);
    if (pool.len() as u64) < needed {
        return Err(others_short(needed));
    }
    let kappa = 1.0 / (others + 1) as f64;
    let bounds = rero_bounds(kappa, r.run.sampling_rate, &[sigma], r.run.steps)?;
    let b = bounds.first().ok_or_else(|| {
        Failure::Compute(String::from("internal: no bound for the noise multiplier"))
    })?;
    let setup = GradientMatchingSetup {
        model: &model,
        pool: &pool,
        train_size: r.run.train_size as usize,
        others: others as usize,
        dpsgd: r.run.dpsgd(sigma),
        reconstruction,
    };
    let indices: Vec<u64> = (0..r.trials).collect();
    let progress = Progress::new(
        String::from("attack gradient-matching"),
        indices.len(),
        f.has("quiet"),
    );
    let outcomes = run_trials(&indices, threads, |i| setup.run_trial(r.seed, i), &|done| {
        progress.tick(done)
    })
    .map_err(|e| match e.parameter() {
        Some("others") => others_short(0),
        _ => Failure::from(e),
    })?;
    progress.finish();
    if !f.has("quiet") {
        super::output::note(&format!(
            "attack gradient-matching: {} trials in {:.1} s on {threads} thread(s)",
            indices.len(),
            progress.seconds()
        ));
    }

    let k = outcomes.iter().filter(|o| o.score.success).count() as u64;
    let rate = success_rate(k, r.trials, 0.95)?;
    let mses: Vec<f64> = outcomes.iter().map(|o| o.score.mse).collect();
    let mse_mean = mses.iter().sum::<f64>() / mses.len() as f64;
    let (mse_min, mse_median, mse_max) = min_median_max(mses);
    let (_, loss_median, _) = min_median_max(outcomes.iter().map(|o| o.loss).collect());

    if let Some(p) = &csv {
        let columns: Vec<String> = Measure::KINDS.iter().map(|m| m.column()).collect();
        let mut t = format!("trial,target,success,{}\n", columns.join(","));
        for o in &outcomes {
            let values: Vec<String> = o
                .measures()
                .values()
                .iter()
                .map(|&x| json::number(x))
                .collect();
            t.push_str(&format!(
                "{},{},{},{}\n",
                o.trial,
                o.target,
                u8::from(o.score.success),
                values.join(",")
            ));
        }
        write_whole("csv", p, &t)?;
    }
    if let Some(p) = &images {
        write_whole(
            "images",
            p,
            &grid(&outcomes, &pool, shape, sigma, epsilon, r.seed)?,
        )?;
    }

    let above = rate.lower > b.gamma;
    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "attack")
            .str("attack", "gradient-matching");
        r.run.write_data(&mut o);
        o.int("others", others);
        r.run.write_dpsgd(&mut o);
        match epsilon {
            Some(e) => o.num("epsilon", e),
            None => o.put("epsilon", Value::Null),
        };
        o.num("noise_multiplier", sigma)
            .int("iterations", iterations)
            .int("restarts", restarts)
            .num("step_size", reconstruction.learning_rate)
            .int("seed", r.seed)
            .num("kappa", kappa)
            .int("trials", rate.trials)
            .int("successes", rate.successes)
            .num("success_rate", rate.rate)
            .num("success_lower", rate.lower)
            .num("success_upper", rate.upper)
            .num("gamma", b.gamma)
            .num("gamma_lower", b.gamma_lower)
            .num("gamma_balle", b.gamma_balle)
            .put("above_bound", Value::Bool(above))
            .num("mse_mean", mse_mean)
            .num("mse_median", mse_median)
            .num("mse_min", mse_min)
            .num("mse_max", mse_max)
            .num("loss_median", loss_median);
        let mut text = o.render();
        text.push('\n');
        return Ok(text);
    }
    let mut t = String::new();
    t.push_str("gradient-matching attack (Hayes, Mahloujifar, Balle 2023 §2), scored by App. D\n");
    t.push_str(&format!(
        "  model {} on {}, |D⁻| = {}, {}, T = {}, C = {}, lr = {}, σ = {}{}\n",
        r.run.model,
        r.run.data,
        r.run.train_size,
        r.run.batch_label(),
        r.run.steps,
        shown(r.run.clip),
        shown(r.run.lr),
        sig(sigma, 6, Side::Nearest),
        epsilon.map_or(String::new(), |e| format!(
            " (ε = {} at δ = {} by RDP)",
            shown(e),
            shown(r.run.delta)
        )),
    ));
    t.push_str(&format!(
        "  Adam, {iterations} iterations × {restarts} restarts, step size {}; {} trials, seed {}\n\n",
        shown(reconstruction.learning_rate),
        r.trials,
        r.seed
    ));
    row(
        &mut t,
        "success (App. D, 95 % CI)",
        &format!(
            "{} [{}, {}]",
            sig(rate.rate, 4, Side::Nearest),
            sig(rate.lower, 4, Side::Down),
            sig(rate.upper, 4, Side::Up)
        ),
        &format!(
            "nearer to the target than to each of {others} other points ({}/{})",
            rate.successes, rate.trials
        ),
    );
    row(
        &mut t,
        "γ Hayes (κ = 1/n)",
        &sig(b.gamma, 4, Side::Up),
        &format!(
            "bound for any attack, n = {} (κ = {})",
            others + 1,
            shown(kappa)
        ),
    );
    row(
        &mut t,
        "γ Balle (from RDP)",
        &sig(b.gamma_balle, 4, Side::Up),
        "",
    );
    row(
        &mut t,
        "MSE: mean / median",
        &format!(
            "{} / {}",
            sig(mse_mean, 4, Side::Nearest),
            sig(mse_median, 4, Side::Nearest)
        ),
        &format!(
            "min {}, max {} (‖ẑ − z‖²/d)",
            sig(mse_min, 4, Side::Nearest),
            sig(mse_max, 4, Side::Nearest)
        ),
    );
    row(
        &mut t,
        "matching loss L(ẑ): median",
        &sig(loss_median, 4, Side::Nearest),
        "",
    );
    if above {
        t.push_str("\n  WARNING: the attack's whole interval lies above the bound γ — a bug in the bound, the trainer or the attack (or a 2.5 % chance).\n");
    }
    Ok(t)
}

/// Targets over their reconstructions (Hayes et al. Fig. 6), the first trials.
fn grid(
    outcomes: &[GradientMatchingOutcome],
    pool: &reconbound::data::Dataset,
    shape: (usize, usize, usize),
    sigma: f64,
    epsilon: Option<f64>,
    seed: u64,
) -> Result<String, Failure> {
    let shown_n = outcomes.len().min(defaults::GRID);
    let mut top = Vec::with_capacity(shown_n);
    let mut bottom = Vec::with_capacity(shown_n);
    for o in outcomes.iter().take(shown_n) {
        let (x, y) = pool.example(o.target)?;
        top.push(svg::GridImage {
            pixels: x,
            caption: format!("#{} (label {y})", o.target),
        });
        bottom.push(svg::GridImage {
            pixels: &o.reconstruction,
            caption: format!(
                "MSE {}{}",
                sig(o.score.mse, 3, Side::Nearest),
                if o.score.success { ", nearest" } else { "" }
            ),
        });
    }
    let subtitle = format!(
        "σ = {}{}, first {shown_n} trials, seed {seed}; 'nearest': nearer to the target than to the other points (App. D)",
        sig(sigma, 4, Side::Nearest),
        epsilon.map_or(String::new(), |e| format!(" (ε = {})", shown(e)))
    );
    svg::image_grid_svg(&svg::ImageGrid {
        title: "Gradient matching: targets over their reconstructions (Hayes et al. 2023, Fig. 6)",
        subtitle: &subtitle,
        shape,
        rows: std::vec![
            svg::GridRow {
                label: String::from("target"),
                images: top,
            },
            svg::GridRow {
                label: String::from("reconstruction"),
                images: bottom,
            },
        ],
    })
    .map_err(|e| usage(format!("--images: {e}")))
}
