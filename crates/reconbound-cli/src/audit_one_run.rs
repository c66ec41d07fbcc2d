//! `reconbound audit --estimator one-run`: the one-run audit of Steinke, Nasr, Jagielski 2023
//! ([`reconbound::attacks::audit::one_run`]) — m canaries, each in the one training with
//! probability ½, k₊ = k₋ = R/2 guesses fixed in advance — beside the accountant's ε at the
//! training's sampling rate B/(N + m).

use super::args::Flags;
use super::attack_run::{defaults as run_defaults, load_pool, parse_run_flags, RunDefaults};
use super::audit_claim::Pairing;
use super::audit_claim::{
    accountant_at, parse_claim, parse_crafters, parse_view, write_claim_verdict,
};
use super::audit_claim::{
    claim_line, theory_line, verdict_text, view_line, write_claim, write_theory,
};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{Object, Value};
use super::shard::parse_threads;
use reconbound::accounting::calibrate::{self, Target};
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::run::Run;
use reconbound::attacks::audit::canary::{AdaptiveConfig, Crafter, GradientShape};
use reconbound::attacks::audit::claim::{self, Claim, ClaimedCurve, Theory};
use reconbound::attacks::audit::epsilon::{one_run_fdp_epsilon, FdpVerdict};
use reconbound::attacks::audit::one_run::{one_run_estimate, OneRunAudit, OneRunEstimate};
use reconbound::attacks::audit::one_run_family::one_run_fdp_family;
use reconbound::attacks::audit::run::{AuditConfig, BatchView, Distinguisher};
use reconbound::attacks::trial::run_trials;
use std::format;
use std::string::String;
use std::vec::Vec;

fn usage(msg: String) -> Failure {
    Failure::Usage(super::args::UsageError(msg))
}

/// Documented defaults of the one-run audit.
mod defaults {
    /// |D|.
    pub const TRAIN_SIZE: u64 = 1000;
    /// m: Steinke et al.'s example size.
    pub const CANARIES: u64 = 1000;
    /// r = k₊ + k₋.
    pub const GUESSES: u64 = 100;
    /// α.
    pub const ALPHA: f64 = 0.05;
    /// The crafters one training can hold many of.
    pub const CRAFTERS: &str = "example,mislabelled,gradient-dirac,dataset-dirac";
}

/// The flags of `audit` that have no meaning for one training.
const NOT_FOR_ONE_RUN: [&str; 7] = [
    "trials",
    "shard",
    "threshold",
    "calibration",
    "csv",
    "plot",
    "init",
];

/// `reconbound audit --estimator one-run …` (flags already parsed by `audit`).
pub(crate) fn one_run(f: &Flags) -> Result<String, Failure> {
    for name in NOT_FOR_ONE_RUN {
        if f.has(name) {
            let why = if name == "init" {
                "the crafted θ₀ is the multi-trial black-box audit's (--view final-model); one run keeps the model's random θ₀"
            } else {
                "one training, m canaries: use --canaries and --guesses"
            };
            return Err(usage(format!(
                "flag '--{name}' does not apply with '--estimator one-run' ({why})"
            )));
        }
    }
    let r = parse_run_flags(
        f,
        &RunDefaults {
            train_size: defaults::TRAIN_SIZE,
            lr: run_defaults::LR,
            trials: 1,
            delta_with_sigma: true,
        },
    )?;
    let (target, sigma_flag) = r.single("audit")?;
    let crafters = parse_crafters(f.raw("crafter").unwrap_or(defaults::CRAFTERS)).map_err(usage)?;
    if let Some(c) = crafters
        .iter()
        .find(|c| matches!(c, Crafter::ClipBkd | Crafter::Adaptive))
    {
        return Err(usage(format!(
            "flag '--crafter': {} is not available with '--estimator one-run' (ClipBKD crafts one canary; the adaptive canary is re-crafted every step); use example, mislabelled, gradient-* or dataset-*",
            c.name()
        )));
    }
    let pairing = Pairing::parse(f.raw("distinguisher").unwrap_or("paired")).map_err(usage)?;
    let m = f.u64("canaries")?.unwrap_or(defaults::CANARIES);
    let guesses = f.u64("guesses")?.unwrap_or(defaults::GUESSES);
    if m == 0 || m > 100_000 {
        return Err(usage(format!(
            "--canaries = {m} is out of range: must be in 1..=100000"
        )));
    }
    if !f.has("guesses") && guesses > m {
        // the user gave --canaries only: its value is what conflicts with the default
        return Err(usage(format!(
            "--canaries = {m} is out of range: must be >= --guesses ({guesses}, its default); give a smaller even --guesses or more canaries"
        )));
    }
    if guesses == 0 || guesses % 2 != 0 || guesses > m {
        return Err(usage(format!(
            "--guesses = {guesses} is out of range: must be even, >= 2 and <= --canaries ({m}); half are 'in' guesses on the highest scores, half 'out' on the lowest"
        )));
    }
    let alpha = f.f64("alpha")?.unwrap_or(defaults::ALPHA);
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(usage(format!(
            "--alpha = {} is out of range: must be in (0, 1)",
            shown(alpha)
        )));
    }
    let delta = r.run.delta;
    if 2.0 * m as f64 * delta >= alpha {
        return Err(usage(format!(
            "--delta = {} is too large for --canaries {m}: the one-run test needs 2·m·δ = {} < α = {}",
            shown(delta),
            shown(2.0 * m as f64 * delta),
            shown(alpha)
        )));
    }
    let (model, all, _) = load_pool(&r.run, 1, "--train-size + 1")?;
    let n = r.run.train_size as usize;
    let pool_size = all.len() - n.min(all.len());
    let needs_pool = crafters
        .iter()
        .any(|c| matches!(c, Crafter::Example | Crafter::Mislabelled));
    if needs_pool && m as usize > pool_size {
        return Err(usage(format!(
            "--canaries = {m} is out of range: the example canaries come from the {pool_size} examples of --data not in D"
        )));
    }
    let per_canary = |c: &Crafter| match c {
        Crafter::Gradient(GradientShape::Spread(k))
        | Crafter::MaliciousDataset(GradientShape::Spread(k)) => *k as u64,
        _ => 1,
    };
    let p = model.num_params() as u64;
    if let Some(c) = crafters
        .iter()
        .find(|c| !matches!(c, Crafter::Example | Crafter::Mislabelled) && per_canary(c) * m > p)
    {
        return Err(usage(format!(
            "--canaries = {m} is out of range for {}: {m} canaries on disjoint coordinates need {} of the model's {p} parameters",
            c.name(),
            per_canary(c) * m
        )));
    }
    // The training samples from n + m indices: q = B/(n + m) (1 for the full batch).
    let full_batch = r.run.sampling_rate == 1.0;
    let q = if full_batch {
        1.0
    } else {
        r.run.batch_size as f64 / (n as f64 + m as f64)
    };
    let sigma = match target {
        Some(e) => {
            let target = Target::Epsilon { epsilon: e, delta };
            calibrate::noise_multiplier(target, q, r.run.steps)?.noise
        }
        None => sigma_flag,
    };
    let claim = parse_claim(f, false)?;
    let view = parse_view(f)?;
    // The accountant's ε for the claim: at S′ with --claimed-noise-multiplier.
    let theory = accountant_at(
        q,
        claim.accountant_noise_multiplier(sigma),
        r.run.steps,
        delta,
    )?;
    let data = all.subset(&(0..n).collect::<Vec<_>>())?;
    let pool = all.subset(&(n..all.len()).collect::<Vec<_>>())?;
    let config = AuditConfig {
        dpsgd: r.run.dpsgd(sigma),
        init_seed: r.seed,
        pool_index: 0,
        adaptive: AdaptiveConfig::default(),
        view,
    };
    let mut audits = Vec::with_capacity(crafters.len());
    for &c in &crafters {
        let a = OneRunAudit::new(&model, c, &config, m as usize, &data, &pool)?;
        if a.sampling_rate().to_bits() != q.to_bits() {
            return Err(Failure::Compute(format!(
                "internal: the one-run audit samples at q = {} but the accountant is run at q = {q}",
                a.sampling_rate()
            )));
        }
        audits.push(a);
    }
    let threads = parse_threads(f)?;
    let indices: Vec<u64> = (0..audits.len() as u64).collect();
    let outcomes = run_trials(
        &indices,
        threads,
        |i| match audits.get(i as usize) {
            Some(a) => a.run(r.seed),
            None => Err(reconbound::Error::Inconsistent {
                what: "crafter index",
                value: i as f64,
            }),
        },
        &|_| {},
    )?;
    let mut rows = Vec::new();
    for ((&c, outcome), _) in crafters.iter().zip(&outcomes).zip(&audits) {
        for d in pairing.for_crafter(c) {
            let e = one_run_estimate(outcome, d, guesses / 2, guesses / 2, alpha, delta)?;
            // the f-DP one-run ε of the same counts against the trainer's own family of
            // curves (its σ scaled), and read against Gaussian curves (both need δ > 0)
            let fdp = if delta > 0.0 {
                let run = Run::poisson(q, sigma, r.run.steps)?;
                let family =
                    one_run_fdp_family(e.counts, alpha, delta, &run, 1, &PldConfig::default())?
                        .map(|b| b.epsilon)
                        .ok();
                Some((family, one_run_fdp_epsilon(e.counts, alpha, delta, 1)?))
            } else {
                None
            };
            rows.push((c, d, e, fdp));
        }
    }
    // The f-DP test of every row's counts against the curve the claim asserts.
    let counts: Vec<_> = rows.iter().map(|(_, _, e, _)| e.counts).collect();
    let curve = ClaimedCurve::new(claim, sigma, q, r.run.steps, delta)?;
    let fdp_verdicts = curve.verdicts(&counts, alpha)?;
    let header = Header {
        model: r.run.model_label().to_string(),
        data: r.run.data.clone(),
        n: r.run.train_size,
        batch: r.run.batch_label(),
        q,
        sigma,
        target,
        steps: r.run.steps,
        clip: r.run.clip,
        lr: r.run.lr,
        delta,
        alpha,
        m,
        guesses,
        seed: r.seed,
        pairing: pairing.name(),
        view,
        claim,
    };
    if f.has("json") {
        Ok(json(&header, &theory, &rows, &fdp_verdicts))
    } else {
        Ok(text(&header, &theory, &rows, &fdp_verdicts))
    }
}

/// What the output reports of the configuration.
struct Header {
    model: String,
    data: String,
    n: u64,
    batch: String,
    q: f64,
    sigma: f64,
    target: Option<f64>,
    steps: u64,
    clip: f64,
    lr: f64,
    delta: f64,
    alpha: f64,
    m: u64,
    guesses: u64,
    seed: u64,
    pairing: String,
    view: BatchView,
    claim: Claim,
}

/// A row: the threat model, the one-run estimate and, at δ > 0, the f-DP ε of its counts
/// against the trainer's family of curves (if it has one) and read as Gaussian.
type Row = (
    Crafter,
    Distinguisher,
    OneRunEstimate,
    Option<(Option<f64>, f64)>,
);

fn text(h: &Header, theory: &Theory, rows: &[Row], fdp: &[FdpVerdict]) -> String {
    let mut t = String::new();
    t.push_str("one-run privacy audit (Steinke, Nasr, Jagielski 2023) of the crate's DP-SGD\n");
    t.push_str(&format!(
        "  model {} on {}, |D| = {} + {} canaries, each in with probability 1/2, lr = {}\n",
        h.model,
        h.data,
        h.n,
        h.m,
        shown(h.lr)
    ));
    t.push_str(&format!(
        "  {} (q = {} over the {} indices), σ = {}{}, T = {}, C = {}\n",
        h.batch,
        shown(h.q),
        h.n + h.m,
        sig(h.sigma, 6, Side::Nearest),
        h.target.map_or(String::new(), |e| format!(
            " (calibrated to ε = {} by RDP)",
            shown(e)
        )),
        h.steps,
        shown(h.clip)
    ));
    t.push_str(&format!(
        "  δ = {}, α = {}, {} guesses ({} 'in' on the highest scores, {} 'out' on the lowest), seed {}\n",
        shown(h.delta),
        shown(h.alpha),
        h.guesses,
        h.guesses / 2,
        h.guesses / 2,
        h.seed
    ));
    t.push_str(&view_line(h.view, h.q == 1.0));
    t.push_str(&claim_line(h.claim, h.sigma));
    t.push_str(&theory_line(theory));
    t.push_str(&format!(
        "  {:<40} {:>9} {:>14} {:>10} {:>10}\n",
        "threat model (crafter / distinguisher)", "correct", "ε ≥ (one run)", "ε PLD", "ε f-DP"
    ));
    let upper = theory.upper();
    let eps: Vec<f64> = rows.iter().map(|(_, _, e, _)| e.epsilon).collect();
    let v = claim::verdict(h.claim, upper, &eps, h.alpha, false);
    let claimed = v.claimed;
    let explicit = h.claim != Claim::Trainer;
    let mut above = 0;
    for ((c, d, e, fdp), f) in rows.iter().zip(fdp) {
        let mut flag = if explicit {
            if e.epsilon > claimed {
                String::from("  ← refutes the claim")
            } else {
                String::new()
            }
        } else if e.epsilon > upper {
            above += 1;
            String::from("  ← above the accountant")
        } else {
            String::new()
        };
        if f.refuted {
            flag.push_str(if explicit {
                "  ← f-DP refutes the claim's curve"
            } else {
                "  ← f-DP refutes the accountant's curve"
            });
        }
        t.push_str(&format!(
            "  {:<40} {:>9} {:>14} {:>10} {:>10}{flag}\n",
            format!("{} {} / {} {}", c.number(), c.name(), d.number(), d.name()),
            format!("{}/{}", e.counts.correct, e.counts.guesses),
            sig(e.epsilon, 4, Side::Down),
            sig(upper, 4, Side::Up),
            fdp.and_then(|x| x.0)
                .map_or(String::from("-"), |x| sig(x, 4, Side::Down))
        ));
    }
    t.push_str(&format!(
        "\n  ε ≥: the one-run lower bound (Steinke et al.), with probability ≥ {} % per row: the\n    largest ε whose p-value, with its 2·m·δ = {} term, stays ≤ α for these correct guesses\n    (guesses fixed in advance; inclusion drawn independently, the scores never read it).\n",
        shown(100.0 * (1.0 - h.alpha)),
        shown(2.0 * h.m as f64 * h.delta)
    ));
    t.push_str("  ε f-DP: the same counts against the trainer's own trade-off curves (Mahloujifar, Melis,\n    Chaudhuri 2025): the ε of the least noise (its σ scaled) whose certified curve they refute\n    at level α, a lower bound with probability ≥ 1 − α per row (JSON also epsilon_gdp: the\n    counts read against Gaussian curves, a lower bound only for the full batch).\n");
    if above > 0 {
        t.push_str(&format!(
            "  {above} row(s) above the accountant's ε: a bug, or a chance of at most α per row.\n"
        ));
    }
    t.push_str(&verdict_text(h.claim, &v, h.alpha));
    t.push_str(&fdp_verdict_text(h.claim, fdp, h.alpha));
    t
}

/// The f-DP verdict: the counts tested against the claim's own trade-off curve (valid for
/// any mechanism), with the union bound over the rows.
fn fdp_verdict_text(claim: Claim, fdp: &[FdpVerdict], alpha: f64) -> String {
    let refuting = fdp.iter().filter(|v| v.refuted).count();
    let curve = match claim {
        Claim::Epsilon(_) => "the (ε, δ)-DP curve of the claimed ε",
        Claim::NoiseMultiplier(_) => "the accountant's certified curve at σ′",
        Claim::Trainer => "the accountant's certified curve at the trainer's σ",
    };
    let p = fdp.iter().map(|v| v.p_value).fold(1.0f64, f64::min);
    if refuting > 0 {
        format!(
            "  f-DP (Mahloujifar et al. 2025) against {curve}: REFUTED — {refuting} of {} row(s) at level α;\n    wrong with probability at most {} (α × the rows); smallest p-value {}\n",
            fdp.len(),
            shown(claim::claim_error(alpha, fdp.len())),
            sig(p, 3, Side::Up)
        )
    } else {
        format!(
            "  f-DP (Mahloujifar et al. 2025) against {curve}: not refuted (smallest p-value {}; not a proof)\n",
            sig(p, 3, Side::Up)
        )
    }
}

fn json(h: &Header, theory: &Theory, rows: &[Row], fdp: &[FdpVerdict]) -> String {
    let mut o = Object::new();
    o.str("command", "audit")
        .str("estimator", "one-run")
        .str("model", &h.model)
        .str("data", &h.data)
        .int("train_size", h.n)
        .int("canaries", h.m)
        .int("guesses", h.guesses)
        .num("sampling_rate", h.q)
        .int("steps", h.steps)
        .num("clip", h.clip)
        .num("lr", h.lr)
        .num("delta", h.delta)
        .num("alpha", h.alpha);
    match h.target {
        Some(e) => o.num("epsilon", e),
        None => o.put("epsilon", Value::Null),
    };
    o.num("noise_multiplier", h.sigma)
        .int("trials", 1)
        .int("seed", h.seed)
        .str("distinguishers", &h.pairing)
        .str("adversary_view", h.view.name());
    write_claim(h.claim, &mut o);
    write_theory(theory, &mut o);
    let upper = theory.upper();
    let eps: Vec<f64> = rows.iter().map(|(_, _, e, _)| e.epsilon).collect();
    let v = claim::verdict(h.claim, upper, &eps, h.alpha, false);
    let claimed = v.claimed;
    write_claim_verdict(&mut o, &v);
    o.put(
        "claim_refuted_fdp",
        Value::Bool(fdp.iter().any(|v| v.refuted)),
    )
    .num("claim_error_fdp", claim::claim_error(h.alpha, fdp.len()));
    let list: Vec<Value> = rows
        .iter()
        .zip(fdp)
        .map(|((c, d, e, fdp), f)| {
            let mut r = Object::new();
            r.str("crafter", &c.name())
                .int("crafter_number", u64::from(c.number()))
                .str("distinguisher", d.name())
                .int("canaries", e.counts.canaries)
                .int("guesses", e.counts.guesses)
                .int("correct", e.counts.correct)
                .num("epsilon_empirical", e.epsilon)
                .put("above_pld", Value::Bool(e.epsilon > upper))
                .put("refutes_claim", Value::Bool(e.epsilon > claimed))
                .put(
                    "epsilon_fdp",
                    fdp.and_then(|x| x.0).map_or(Value::Null, Value::Num),
                )
                .put("epsilon_gdp", fdp.map_or(Value::Null, |x| Value::Num(x.1)))
                .put("refutes_claim_fdp", Value::Bool(f.refuted))
                .num("p_value_fdp", f.p_value);
            Value::Obj(r)
        })
        .collect();
    if let [(_, _, e, _)] = rows {
        o.num("epsilon_empirical", e.epsilon)
            .int("correct", e.counts.correct);
    }
    o.put("rows", Value::Arr(list));
    let mut s = o.render();
    s.push('\n');
    s
}
