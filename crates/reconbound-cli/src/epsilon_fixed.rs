//! `reconbound epsilon --sampling fixed|poisson|shuffle …`: the ε of fixed-size batches
//! drawn without replacement (replace-one adjacency, Wang, Balle, Kasiviswanathan 2019), or
//! why there is none. Without `--sampling` the command is the Poisson `epsilon` of
//! `commands.rs`; `--sampling poisson` forwards to it.

use super::args::{parse, switch, value as v, UsageError};
use super::commands::{self};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::Object;
use reconbound::accounting::run::{self, Run};
use reconbound::accounting::{rdp, rdp_without_replacement as wor};
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

const HELP: &str = "\
usage: reconbound epsilon --sampling fixed --batch-size B --dataset-size N
                          --noise-multiplier S --steps T --delta D [--json]
       reconbound epsilon --sampling poisson … (the same as without --sampling)

ε(δ) of T DP-SGD steps on batches of exactly B of the N examples drawn without replacement,
under REPLACE-ONE adjacency (N public; neighbouring datasets differ in one example), rounded
up: RDP of Wang, Balle, Kasiviswanathan 2019 (Thm 9 with the ternary-|χ|^α bound, as
dp_accounting's SampledWithoutReplacementDpEvent) on the default order grid, converted by the
improved formula and by Mironov's. S is the DP-SGD noise multiplier (noise std S·C, gradients
clipped to C); replacing one example moves the sum of clipped gradients by up to 2C, so the
bound uses S/2. A valid but loose bound; no PLD. Not comparable with add/remove ε.
--sampling-rate and --accountant are refused here (q is B/N; RDP only).
--sampling shuffle: no ε (exit 2): shuffled epochs have no tight analysis, and the Poisson ε
can underestimate theirs (Chua et al., ICML 2024; Annamalai et al. 2024).

JSON keys: command, sampling, adjacency, batch_size, dataset_size, noise_multiplier,
noise_multiplier_replace_one, steps, delta, epsilon_rdp, best_order, epsilon_rdp_mironov,
best_order_mironov.
";

/// What `epsilon --sampling fixed --help` adds to [`HELP`] (issue 43).
const EXAMPLE: &str = "\
Example (batches of exactly 256 of 60,000, σ 1.1, 14,063 steps):
  reconbound epsilon --sampling fixed --batch-size 256 --dataset-size 60000 \\
      --noise-multiplier 1.1 --steps 14063 --delta 1e-5
";

/// `true` when the arguments name a sampling scheme (`--sampling X` or `--sampling=X`).
pub(crate) fn wants(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--sampling" || a.starts_with("--sampling="))
}

/// `reconbound epsilon` with `--sampling`.
pub(crate) fn epsilon(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("sampling"),
            v("batch-size"),
            v("dataset-size"),
            v("noise-multiplier"),
            v("sampling-rate"),
            v("steps"),
            v("delta"),
            v("accountant"),
            switch("json"),
        ],
    )?;
    if f.help {
        let short = String::from(HELP) + "\n" + EXAMPLE;
        return Ok(f.help_text("epsilon --sampling fixed", &short, String::from(HELP)));
    }
    match f.raw("sampling").unwrap_or("") {
        "fixed" => {}
        "poisson" => {
            // The Poisson command, without the --sampling flag it does not know.
            let mut rest: Vec<String> = Vec::new();
            let mut skip = false;
            for a in args {
                if skip {
                    skip = false;
                } else if a == "--sampling" {
                    skip = true;
                } else if !a.starts_with("--sampling=") {
                    rest.push(a.clone());
                }
            }
            return commands::epsilon(&rest);
        }
        "shuffle" => {
            return Err(UsageError(String::from(
                "flag '--sampling': shuffle has no epsilon (no tight analysis of shuffled epochs; the Poisson epsilon can underestimate theirs: Chua et al., ICML 2024; Annamalai et al. 2024)",
            ))
            .into())
        }
        other => {
            return Err(UsageError(format!(
                "flag '--sampling': '{}' is not one of fixed, poisson, shuffle",
                other.chars().take(20).collect::<String>()
            ))
            .into())
        }
    }
    for flag in ["sampling-rate", "accountant"] {
        if f.has(flag) {
            return Err(UsageError(format!(
                "flag '--{flag}' does not apply to --sampling fixed (give --batch-size and --dataset-size; RDP only)"
            ))
            .into());
        }
    }
    let required = |name: &str| {
        f.u64(name)?
            .ok_or_else(|| UsageError(format!("flag '--{name}' is required")))
    };
    let b = required("batch-size")?;
    let n = required("dataset-size")?;
    if b == 0 {
        return Err(UsageError(String::from(
            "--batch-size = 0 is out of range: must be >= 1",
        ))
        .into());
    }
    if n == 0 {
        return Err(UsageError(String::from(
            "--dataset-size = 0 is out of range: must be >= 1 (and >= --batch-size)",
        ))
        .into());
    }
    if b > n {
        return Err(UsageError(format!(
            "--batch-size = {b} is out of range: must be <= --dataset-size ({n})"
        ))
        .into());
    }
    let sigma = f.f64_required("noise-multiplier")?;
    let steps = required("steps")?;
    reconbound::error::check_steps(steps)?;
    let delta = f.f64_required("delta")?;
    reconbound::error::check_open_unit("delta", delta)?;
    output(b, n, sigma, steps, delta, f.has("json"))
}

/// The output of `epsilon --sampling fixed` for validated B ≤ n, T and δ: the JSON object
/// (`json`) or the text.
pub(crate) fn output(b: u64, n: u64, sigma: f64, steps: u64, delta: f64, json: bool) -> Out {
    let s = wor::replace_one_noise_multiplier(sigma)?;
    let run = Run::fixed_size(b, n, sigma, steps)?;
    // fixed-size batches always have an RDP answer; `Unsupported` is for shuffled epochs
    let rdp_of = |c| -> Result<rdp::EpsilonBound, Failure> {
        run::rdp_epsilon(&run, delta, c)?.map_err(|why| Failure::Compute(why.reason()))
    };
    let e = rdp_of(rdp::Conversion::Improved)?;
    let m = rdp_of(rdp::Conversion::Mironov)?;
    if json {
        let mut o = Object::new();
        o.str("command", "epsilon")
            .str("sampling", "fixed")
            .str("adjacency", "replace-one")
            .int("batch_size", b)
            .int("dataset_size", n)
            .num("noise_multiplier", sigma)
            .num("noise_multiplier_replace_one", s)
            .int("steps", steps)
            .num("delta", delta)
            .num("epsilon_rdp", e.epsilon)
            .num("best_order", e.order)
            .num("epsilon_rdp_mironov", m.epsilon)
            .num("best_order_mironov", m.order);
        return Ok(o.render() + "\n");
    }
    Ok(format!(
        "ε(δ = {}) of {steps} DP-SGD steps on fixed-size batches of {b} from {n} without replacement, σ = {} (σ/2 = {} per replace-one sensitivity 2C); replace-one adjacency; Wang, Balle, Kasiviswanathan 2019 (upper bounds, rounded up)\n  RDP, improved conversion   {}   (order {})\n  RDP, Mironov's conversion  {}   (order {})\n",
        shown(delta),
        shown(sigma),
        shown(s),
        sig(e.epsilon, 7, Side::Up),
        sig(e.order, 4, Side::Nearest),
        sig(m.epsilon, 7, Side::Up),
        sig(m.order, 4, Side::Nearest)
    ))
}
