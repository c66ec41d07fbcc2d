//! `reconbound attack <name>`: run an attack against the bound it must not beat.
//!
//! `attack prior-aware` runs the prior-aware attacks of Hayes et al. 2023 on the crate's own
//! DP-SGD (trials spread over threads, or one shard of them written as JSON lines for
//! `reconbound merge`), and prints each success rate with its Clopper–Pearson interval beside
//! the certified ReRo bound γ (Hayes et al.) and Balle et al.'s γ from RDP.

use super::args::{parse, value as v, Flags, Spec, UsageError};
use super::attack_run::{
    defaults, line, load_pool, parse_run_flags, parse_sharding, rero_bounds, sharded_flags_and,
    with_items, OutputOptions, PointBounds, RunDefaults, Training,
};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{self, Object, Value};
use super::output::write_whole;
use super::shard::{named_json, run_groups, Ran, ShardedRun, Sharding};
use super::svg;
use reconbound::attacks::game::Named;
use reconbound::attacks::prior_aware::{PriorAwareOutcome, PriorAwareSetup, Score};
use reconbound::attacks::trial::{success_rate, SuccessRate};
use reconbound::data::Dataset;
use reconbound::nn::Sequential;
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// The attacks `reconbound attack` runs.
const ATTACKS: &str = "glm, gradient-matching, prior-aware, reconn";

const HELP: &str = "\
usage: reconbound attack <attack> [flags]    (reconbound attack <attack> --help)

attacks:
  glm          Balle et al. 2022 §III on output-perturbed logistic regression, against the
               per-example FIL bound (Guo et al. 2022 §7.2)
  gradient-matching
               Hayes et al. 2023 §2 on DP-SGD, scored by App. D against the ReRo bound γ, and MSE
  prior-aware  Hayes et al. 2023 Alg. 2 / Alg. 3 / App. G on DP-SGD, against the ReRo bound γ
  reconn       Balle et al. 2022 §IV–VI: shadow models and a reconstructor network, against
               the NN oracle (and γ under DP)
";

/// What `attack --help` adds to [`HELP`] (issue 43).
const EXAMPLE: &str = "\
Example (the GLM attack, two noise draws):
  reconbound attack glm --trials 2
";

/// `reconbound attack <name> …`.
pub(crate) fn attack(args: &[String]) -> Out {
    match args.first().map(String::as_str) {
        None => Err(usage(format!(
            "attack: missing attack name (attacks: {ATTACKS}; try 'reconbound attack --help')"
        ))),
        Some("--help" | "-h" | "help") => Ok(super::args::help_text(
            false,
            "attack <attack>",
            &(String::from(HELP) + "\n" + EXAMPLE),
            String::from(HELP),
        )),
        Some("--help-all") => Ok(String::from(HELP)),
        Some("glm") => super::attack_glm::attack_glm(args.get(1..).unwrap_or_default()),
        Some("gradient-matching") => {
            super::attack_gm::gradient_matching(args.get(1..).unwrap_or_default())
        }
        Some("prior-aware") => prior_aware(args.get(1..).unwrap_or_default()),
        Some("reconn") => super::attack_reconn::reconn(args.get(1..).unwrap_or_default()),
        Some(other) => Err(usage(format!(
            "unknown attack '{}' (attacks: {ATTACKS})",
            other
                .chars()
                .filter(|c| !c.is_control())
                .take(40)
                .collect::<String>()
        ))),
    }
}

const PRIOR_AWARE_HELP: &str = "\
usage: reconbound attack prior-aware [--model mlp|mnist-convnet] [--data embedded|<idx dir>]
         [--prior-size M] [--train-size N] [--sampling-rate Q] [--steps T] [--clip C] [--lr R]
         [--noise-multiplier S | --epsilon E1,E2,... [--delta D]] [--trials R] [--seed X]
         [--score sum|top|loglik] [--threads K] [--shard K/M] [--csv FILE] [--plot FILE.svg]
         [--quiet] [--json]

The prior-aware reconstruction attack of Hayes, Mahloujifar, Balle 2023 against the bound it
must not beat. Per trial (a pure function of the seed and the trial index): draw D⁻ (N
examples) and a uniform prior of M further candidates from the data, pick the target
uniformly from the prior, train the model by DP-SGD on D⁻ plus the target (hard clipping at
C, noise multiplier S, T steps, Poisson sampling at rate Q, or the full batch for Q = 1, no
momentum), and let the adversary — who knows D⁻, which of D⁻ is in each batch, every θ_t and
released gradient, Q, C, S and the prior — guess the target by

  sum     Alg. 2: Σ_t ⟨clip(∇ℓ(θ_t; z)), r_t⟩/C², r_t the released gradient sum minus D⁻'s part
  top     Alg. 3: the sum of the ⌈QT⌉ largest per-step terms
  loglik  App. G: Σ_t ln(1 − Q + Q·exp((‖r_t‖² − ‖r_t − g_t^z‖²)/(2S²C²))) + ln(1/M)

All three are computed in every trial; --score picks the one in the table (default sum).
Success rates carry two-sided 95 % Clopper–Pearson intervals, beside the certified ReRo bound
γ of Hayes et al. (κ = 1/M) and Balle et al.'s γ from RDP: an attack whose interval lies above
γ is a bug. With a list of ε, S is calibrated per point by RDP (δ = D) and the trials of every
point share their draws (same seed and indices).

Defaults (Hayes et al. App. A): MLP 784-10-10 (ELU), embedded MNIST, N = 999, M = 10, Q = 1,
T = 100, C = 0.1, learning rate 10, ε = 8 at δ = 1e-5, 500 trials, seed 0, all cores.
Q·(N + 1) must be an integer (the expected batch size B).

--shard K/M runs only the trials with index ≡ K (mod M) and prints them as JSON lines (a
header with the whole configuration, then one line per trial) for 'reconbound merge', which
prints exactly what the unsharded run prints. Threads never change a result.

JSON keys: command, attack, model, data, train_size, prior_size, sampling_rate, batch_size,
steps, clip, lr, delta, seed, score, kappa, confidence, points (one object per ε or σ:
epsilon, noise_multiplier, trials, successes, success_rate, success_lower, success_upper,
gamma, gamma_lower, gamma_balle, gamma_balle_order, above_bound, scores {sum, top, loglik}:
{successes, success_rate, success_lower, success_upper}); with one point its keys are also
at the top level.
";

/// `attack prior-aware --help` (issue 43: it fits a screen; [`PRIOR_AWARE_HELP`] is
/// `--help-all`).
const PRIOR_AWARE_SHORT_HELP: &str = "\
usage: reconbound attack prior-aware [--model mlp|mnist-convnet] [--data embedded|<idx dir>]
         [--prior-size M] [--train-size N] [--sampling-rate Q] [--steps T] [--clip C] [--lr R]
         [--noise-multiplier S | --epsilon E1,E2,... [--delta D]] [--trials R] [--seed X]
         [--score sum|top|loglik] [--threads K] [--shard K/M] [--csv FILE] [--plot FILE.svg]
         [--quiet] [--json]

Does the strongest reconstruction attack stay below the bound? The prior-aware attack of
Hayes, Mahloujifar, Balle 2023: per trial, DP-SGD trains on N examples the adversary knows
plus a target drawn from a prior of M candidates, and the adversary, who sees every θ_t and
released gradient, guesses which candidate it was. Its success rate, with a two-sided 95 %
Clopper–Pearson interval, beside the certified ReRo bound γ (κ = 1/M) and Balle et al.'s γ
from RDP: an interval above γ is a bug.

Common flags (defaults: Hayes et al. App. A, MLP 784-10-10 on the embedded MNIST images):
  --epsilon E1,E2,...   one point per ε, σ calibrated by RDP at --delta [8, 1e-5];
                        or --noise-multiplier S
  --prior-size M        candidates of the prior [10]
  --trials R            trials per point [500]
  --sampling-rate Q     Poisson rate, 1 for the full batch [1]; Q·(N + 1) an integer
  --steps T             DP-SGD steps [100]
  --train-size N        the examples the adversary knows [999]
  --score S             the guess of the table: sum (Alg. 2), top (Alg. 3), loglik (App. G) [sum]
  --shard K/M           only the trials K mod M, for 'reconbound merge'
  --json                every number at full precision, as JSON

Example (20 trials of 20 steps at ε = 8):
  reconbound attack prior-aware --trials 20 --steps 20
";

/// Everything that determines the trials and the summary of a prior-aware run (the shard
/// header): two runs with equal configurations give equal outcomes for equal indices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PriorAwareConfig {
    /// The training of every trial.
    pub(crate) run: Training,
    /// m: the candidates of the uniform prior.
    pub(crate) prior_size: u64,
    /// The ε of each point (`None` when σ was given).
    pub(crate) epsilons: Option<Vec<f64>>,
    /// The σ of each point.
    pub(crate) noise_multipliers: Vec<f64>,
    /// Trials per point.
    pub(crate) trials: u64,
    /// The seed of every trial.
    pub(crate) seed: u64,
    /// The score of the headline rates, fixed before the trials.
    pub(crate) score: Score,
}

impl PriorAwareConfig {
    fn to_json(&self) -> Object {
        let mut o = Object::new();
        self.run.write_data(&mut o);
        o.int("prior_size", self.prior_size);
        self.run.write_dpsgd(&mut o);
        match &self.epsilons {
            Some(e) => o.put("epsilons", nums(e)),
            None => o.put("epsilons", Value::Null),
        };
        o.put("noise_multipliers", nums(&self.noise_multipliers))
            .int("trials", self.trials)
            .int("seed", self.seed)
            .str("score", self.score.name());
        o
    }

    fn from_json(o: &Object) -> Result<Self, String> {
        let epsilons = match o.get("epsilons") {
            Some(Value::Null) => None,
            _ => Some(o.get_f64s("epsilons")?),
        };
        let score = o.get_str("score")?;
        let c = PriorAwareConfig {
            run: Training::read(o)?,
            prior_size: o.get_u64("prior_size")?,
            epsilons,
            noise_multipliers: o.get_f64s("noise_multipliers")?,
            trials: o.get_u64("trials")?,
            seed: o.get_u64("seed")?,
            score: Score::from_name(score).ok_or_else(|| format!("unknown score '{score}'"))?,
        };
        c.check_size()?;
        Ok(c)
    }

    fn points(&self) -> usize {
        self.noise_multipliers.len()
    }

    /// The configuration checked as `attack prior-aware` checks its flags (the training's
    /// own values are [`parse_run_flags`]'s to check).
    pub(crate) fn checked(self) -> Result<Self, Failure> {
        check_prior(self.prior_size, self.run.steps)?;
        self.check_size().map_err(usage)?;
        Ok(self)
    }

    /// The limits every configuration (parsed or read from a shard header) must meet, so
    /// that a run — and a merge, which holds one slot per trial — stays within memory.
    fn check_size(&self) -> Result<(), String> {
        super::shard::check_size(
            self.points() as u64,
            "--epsilon / --noise-multiplier",
            "values",
            self.trials,
        )
    }
}
/// At most this many per-step scores m·T kept per trial (Alg. 3 keeps every step's score of
/// every candidate: 8 bytes each, per thread).
const MAX_SCORES: u64 = 10_000_000;

fn nums(xs: &[f64]) -> Value {
    Value::Arr(xs.iter().map(|&x| Value::Num(x)).collect())
}

fn setup<'a>(
    c: &PriorAwareConfig,
    model: &'a Sequential,
    pool: &'a Dataset,
    sigma: f64,
) -> PriorAwareSetup<'a> {
    PriorAwareSetup {
        model,
        pool,
        train_size: c.run.train_size as usize,
        prior_size: c.prior_size as usize,
        dpsgd: c.run.dpsgd(sigma),
    }
}

/// `--prior-size` in 2..=10000, and m·T within [`MAX_SCORES`].
fn check_prior(prior_size: u64, steps: u64) -> Result<(), Failure> {
    if !(2..=10_000).contains(&prior_size) {
        return Err(usage(format!(
            "--prior-size = {prior_size} is out of range: must be in 2..=10000"
        )));
    }
    if prior_size.saturating_mul(steps) > MAX_SCORES {
        return Err(usage(format!(
            "--prior-size × --steps = {prior_size} × {steps} is out of range: must be <= {MAX_SCORES} (the per-step scores Alg. 3 keeps); lower --steps or --prior-size"
        )));
    }
    Ok(())
}

fn parse_prior_aware(f: &Flags) -> Result<PriorAwareConfig, Failure> {
    let r = parse_run_flags(
        f,
        &RunDefaults {
            train_size: defaults::TRAIN_SIZE,
            lr: defaults::LR,
            trials: defaults::TRIALS,
            delta_with_sigma: false,
        },
    )?;
    let prior_size = f.u64("prior-size")?.unwrap_or(defaults::PRIOR_SIZE);
    check_prior(prior_size, r.run.steps)?;
    let score = match f.raw("score") {
        None => defaults::SCORE,
        Some(name) => Score::from_name(name).ok_or_else(|| {
            usage(format!(
                "flag '--score': '{}' is not one of sum, top, loglik",
                name.chars().take(20).collect::<String>()
            ))
        })?,
    };
    let config = PriorAwareConfig {
        run: r.run,
        prior_size,
        epsilons: r.epsilons,
        noise_multipliers: r.noise_multipliers,
        trials: r.trials,
        seed: r.seed,
        score,
    };
    config.check_size().map_err(usage)?;
    Ok(config)
}

fn prior_aware_flags() -> Vec<Spec> {
    sharded_flags_and(&[v("prior-size"), v("score")])
}

fn prior_aware(args: &[String]) -> Out {
    let f = parse(args, &prior_aware_flags())?;
    if f.help {
        let full = String::from(PRIOR_AWARE_HELP);
        return Ok(f.help_text("attack prior-aware", PRIOR_AWARE_SHORT_HELP, full));
    }
    let config = parse_prior_aware(&f)?;
    let (sharding, outputs) = parse_sharding(&f)?;
    match run_prior_aware(&config, sharding)? {
        Ran::Shard(lines) => Ok(lines),
        Ran::Whole(summary) => summary.output(&outputs),
    }
}

/// The trials of a prior-aware run — one shard of them with `sharding.shard` — after every
/// bound (a configuration they cannot certify fails before any training): the shard's JSON
/// lines, or the whole run's summary.
pub(crate) fn run_prior_aware(
    config: &PriorAwareConfig,
    sharding: Sharding,
) -> Result<Ran<PriorAwareSummary>, Failure> {
    let what = "--train-size + --prior-size";
    let (model, pool, _) = load_pool(&config.run, config.prior_size, what)?;
    let bounds = prior_aware_bounds(config)?;
    let setups: Vec<PriorAwareSetup<'_>> = config
        .noise_multipliers
        .iter()
        .map(|&sigma| setup(config, &model, &pool, sigma))
        .collect();
    run_groups(
        config,
        "attack prior-aware",
        &setups,
        sharding,
        |su, i| su.run_trial(config.seed, i),
        |outcomes| PriorAwareSummary::new(config, bounds, &outcomes),
    )
}

fn prior_aware_bounds(c: &PriorAwareConfig) -> Result<Vec<PointBounds>, Failure> {
    rero_bounds(
        1.0 / c.prior_size as f64,
        c.run.sampling_rate,
        &c.noise_multipliers,
        c.run.steps,
    )
}

impl ShardedRun for PriorAwareConfig {
    type Outcome = PriorAwareOutcome;
    type Scores = Score;
    const KIND: &'static str = "attack prior-aware";

    fn to_json(&self) -> Object {
        PriorAwareConfig::to_json(self)
    }

    fn from_json(o: &Object) -> Result<Self, String> {
        PriorAwareConfig::from_json(o)
    }

    fn groups(&self) -> usize {
        self.points()
    }

    fn trials(&self) -> u64 {
        self.trials
    }

    fn group_name(&self, group: usize) -> String {
        format!("point {group}")
    }

    fn write_line(&self, group: usize, o: &PriorAwareOutcome) -> Object {
        let mut line = Object::new();
        line.int("point", group as u64)
            .int("trial", o.trial)
            .int("target", u64::from(o.target))
            .put(
                "guesses",
                named_json(&o.guesses, |g| Value::Int(u64::from(g))),
            )
            .int("steps_in_batch", o.steps_in_batch);
        line
    }

    fn read_line(&self, o: &Object) -> Result<(usize, u64, PriorAwareOutcome), String> {
        let int = |key: &str| o.get(key).and_then(Value::as_u64);
        let (Some(point), Some(trial), Some(target), Some(steps_in_batch)) = (
            int("point"),
            int("trial"),
            int("target"),
            int("steps_in_batch"),
        ) else {
            return Err(String::from(
                "missing point, trial, target or steps_in_batch",
            ));
        };
        let prior = self.prior_size;
        if target >= prior {
            return Err(String::from("target >= prior_size"));
        }
        // Entries that are not integers are dropped here and refused by merge's canonical
        // check (the line it would write differs).
        let raw: Vec<u64> = match o.get("guesses") {
            Some(Value::Arr(g)) => g.iter().filter_map(Value::as_u64).collect(),
            _ => Vec::new(),
        };
        if raw.iter().any(|&g| g >= prior) {
            return Err(String::from("a guess is not a candidate (>= prior_size)"));
        }
        let guesses = Named::from_values(raw.into_iter().map(|g| g as u32).collect())
            .map_err(|_| format!("'guesses' must be {} candidates", Score::ALL.len()))?;
        let point = usize::try_from(point).unwrap_or(usize::MAX);
        Ok((
            point,
            trial,
            PriorAwareOutcome {
                trial,
                target: u32::try_from(target).unwrap_or(u32::MAX),
                guesses,
                steps_in_batch,
            },
        ))
    }
}

/// `merge` of prior-aware shards: the summary of the unsharded run.
pub(crate) fn merged_summary(
    config: &PriorAwareConfig,
    outcomes: &[Vec<PriorAwareOutcome>],
) -> Result<PriorAwareSummary, Failure> {
    PriorAwareSummary::new(config, prior_aware_bounds(config)?, outcomes)
}

const CONFIDENCE: f64 = 0.95;

struct PointSummary {
    rates: Named<Score, SuccessRate, 3>,
}

/// The summary of a prior-aware run: each point's success rate by every score, with its
/// Clopper–Pearson interval, beside the point's bounds. `attack prior-aware` prints it by
/// [`PriorAwareSummary::output`] (`--json`: [`PriorAwareSummary::to_json`]).
pub(crate) struct PriorAwareSummary {
    config: PriorAwareConfig,
    bounds: Vec<PointBounds>,
    points: Vec<PointSummary>,
}

impl PriorAwareSummary {
    /// The rates of the outcomes of every point (in trial order), beside `bounds`.
    fn new(
        c: &PriorAwareConfig,
        bounds: Vec<PointBounds>,
        outcomes: &[Vec<PriorAwareOutcome>],
    ) -> Result<Self, Failure> {
        let mut points = Vec::with_capacity(outcomes.len());
        for point in outcomes {
            let n = point.len() as u64;
            let rates = Named::try_from_fn(|score| {
                let k = point.iter().filter(|o| o.success(score)).count() as u64;
                success_rate(k, n, CONFIDENCE)
            })?;
            points.push(PointSummary { rates });
        }
        Ok(PriorAwareSummary {
            config: c.clone(),
            bounds,
            points,
        })
    }

    /// The rate of the configuration's score at `p`.
    fn headline_of(&self, p: &PointSummary) -> Option<SuccessRate> {
        p.rates.get(self.config.score).copied()
    }

    /// The configuration's score and its rate, for a run of one point.
    pub(crate) fn headline(&self) -> Option<(Score, SuccessRate)> {
        match self.points.as_slice() {
            [p] => self.headline_of(p).map(|r| (self.config.score, r)),
            _ => None,
        }
    }

    /// Writes the files of `outputs` (`--csv`, `--plot`) and returns what the command prints.
    pub(crate) fn output(&self, outputs: &OutputOptions) -> Out {
        let (c, bounds, points) = (&self.config, &self.bounds, &self.points);
        if let Some(path) = &outputs.csv {
            write_whole("csv", path, &csv(c, bounds, points))?;
        }
        if let Some(path) = &outputs.plot {
            write_whole("plot", path, &plot(c, bounds, points))?;
        }
        if outputs.json {
            return Ok(line(&self.to_json()));
        }
        Ok(self.text())
    }

    /// The object `attack prior-aware --json` prints.
    pub(crate) fn to_json(&self) -> Object {
        let c = &self.config;
        let mut o = Object::new();
        o.str("command", "attack").str("attack", "prior-aware");
        for (k, val) in c.to_json().entries() {
            if !matches!(k.as_str(), "epsilons" | "noise_multipliers" | "trials") {
                o.put(k, val.clone());
            }
        }
        o.num("kappa", 1.0 / c.prior_size as f64)
            .num("confidence", CONFIDENCE);
        let points = (0..self.points.len())
            .filter_map(|j| self.point_json(j))
            .collect();
        with_items(o, "points", points)
    }

    /// The object of point `j`.
    fn point_json(&self, j: usize) -> Option<Object> {
        let c = &self.config;
        let (p, b) = (self.points.get(j)?, self.bounds.get(j)?);
        let mut po = Object::new();
        match &c.epsilons {
            Some(e) => po.num("epsilon", e.get(j).copied().unwrap_or(f64::NAN)),
            None => po.put("epsilon", Value::Null),
        };
        po.num(
            "noise_multiplier",
            c.noise_multipliers.get(j).copied().unwrap_or(f64::NAN),
        );
        if let Some(r) = self.headline_of(p) {
            po.int("trials", r.trials)
                .int("successes", r.successes)
                .num("success_rate", r.rate)
                .num("success_lower", r.lower)
                .num("success_upper", r.upper);
            po.num("gamma", b.gamma)
                .num("gamma_lower", b.gamma_lower)
                .num("gamma_balle", b.gamma_balle)
                .num("gamma_balle_order", b.gamma_balle_order)
                .put(
                    "above_bound",
                    Value::Bool(p.rates.values().iter().any(|r| r.lower > b.gamma)),
                );
        }
        let mut so = Object::new();
        for (score, r) in p.rates.iter() {
            let mut ro = Object::new();
            ro.int("successes", r.successes)
                .num("success_rate", r.rate)
                .num("success_lower", r.lower)
                .num("success_upper", r.upper);
            so.put(score.name(), Value::Obj(ro));
        }
        po.put("scores", Value::Obj(so));
        Some(po)
    }

    /// What `attack prior-aware` prints without `--json`.
    fn text(&self) -> String {
        let c = &self.config;
        let kappa = 1.0 / c.prior_size as f64;
        let mut t = String::new();
        t.push_str(&format!(
            "prior-aware attack (Hayes, Mahloujifar, Balle 2023, {}) against ReRo bounds\n",
            match c.score {
                Score::Sum => "Alg. 2",
                Score::Top => "Alg. 3",
                Score::LogLikelihood => "App. G",
            }
        ));
        t.push_str(&format!(
            "  model {} on {}, |D⁻| = {}, prior of m = {} (κ = {}), {}, T = {}, C = {}, lr = {}\n",
            c.run.model_label(),
            c.run.data,
            c.run.train_size,
            c.prior_size,
            shown(kappa),
            c.run.batch_label(),
            c.run.steps,
            shown(c.run.clip),
            shown(c.run.lr)
        ));
        t.push_str(&format!(
            "  {} trials per point, seed {}, two-sided 95 % Clopper–Pearson intervals\n\n",
            c.trials, c.seed
        ));
        t.push_str(&format!(
            "  {:>8}  {:>10}  {:>24}  {:>9}  {:>9}  {:>9}  {:>8}\n",
            if c.epsilons.is_some() { "ε" } else { "" },
            "σ",
            format!("success ({})", c.score.name()),
            "γ Hayes",
            "γ Balle",
            "γ − rate",
            ""
        ));
        let mut above = 0usize;
        for (j, (p, b)) in self.points.iter().zip(&self.bounds).enumerate() {
            let Some(r) = self.headline_of(p) else {
                continue;
            };
            let eps = c
                .epsilons
                .as_ref()
                .and_then(|e| e.get(j))
                .map_or(String::new(), |&e| shown(e));
            let sigma = c.noise_multipliers.get(j).copied().unwrap_or(f64::NAN);
            let verdict = if p.rates.values().iter().any(|r| r.lower > b.gamma) {
                above += 1;
                "ABOVE γ"
            } else {
                "≤ γ"
            };
            t.push_str(&format!(
                "  {eps:>8}  {:>10}  {:>24}  {:>9}  {:>9}  {:>9}  {verdict:>8}\n",
                sig(sigma, 6, Side::Nearest),
                format!(
                    "{} [{}, {}]",
                    sig(r.rate, 4, Side::Nearest),
                    sig(r.lower, 4, Side::Down),
                    sig(r.upper, 4, Side::Up)
                ),
                sig(b.gamma, 4, Side::Up),
                sig(b.gamma_balle, 4, Side::Up),
                sig(b.gamma - r.rate, 3, Side::Nearest),
            ));
        }
        t.push_str(&self.other_scores());
        if above > 0 {
            t.push_str(&format!(
                "\n  WARNING: at {above} point(s) an attack's whole interval lies above the bound γ — a bug in the bound, the trainer or the attack (or a 2.5 % chance per point and score).\n"
            ));
        }
        t
    }

    /// The text's lines of every score's rate at each point.
    fn other_scores(&self) -> String {
        let c = &self.config;
        let mut t = String::from("\n  other scores (success rate [95 % interval]):\n");
        for (j, p) in self.points.iter().enumerate() {
            let label = match &c.epsilons {
                Some(e) => format!("ε = {}", shown(e.get(j).copied().unwrap_or(f64::NAN))),
                None => format!(
                    "σ = {}",
                    sig(
                        c.noise_multipliers.get(j).copied().unwrap_or(f64::NAN),
                        6,
                        Side::Nearest
                    )
                ),
            };
            let parts: Vec<String> = p
                .rates
                .iter()
                .map(|(s, r)| {
                    format!(
                        "{} {} [{}, {}]",
                        s.name(),
                        sig(r.rate, 4, Side::Nearest),
                        sig(r.lower, 4, Side::Down),
                        sig(r.upper, 4, Side::Up)
                    )
                })
                .collect();
            t.push_str(&format!("    {label}: {}\n", parts.join("; ")));
        }
        t
    }
}

fn csv(c: &PriorAwareConfig, bounds: &[PointBounds], points: &[PointSummary]) -> String {
    let mut s = String::from(
        "epsilon,noise_multiplier,score,trials,successes,success_rate,success_lower,success_upper,gamma,gamma_lower,gamma_balle,kappa\n",
    );
    for (j, (p, b)) in points.iter().zip(bounds).enumerate() {
        let eps = c
            .epsilons
            .as_ref()
            .and_then(|e| e.get(j))
            .map_or(String::new(), |e| json::number(*e));
        let sigma = c.noise_multipliers.get(j).copied().unwrap_or(f64::NAN);
        for (score, r) in p.rates.iter() {
            s.push_str(&format!(
                "{eps},{},{},{},{},{},{},{},{},{},{},{}\n",
                json::number(sigma),
                score.name(),
                r.trials,
                r.successes,
                json::number(r.rate),
                json::number(r.lower),
                json::number(r.upper),
                json::number(b.gamma),
                json::number(b.gamma_lower),
                json::number(b.gamma_balle),
                json::number(1.0 / c.prior_size as f64)
            ));
        }
    }
    s
}

fn plot(c: &PriorAwareConfig, bounds: &[PointBounds], points: &[PointSummary]) -> String {
    // x: ε, or σ when no ε was given.
    let xs: Vec<f64> = match &c.epsilons {
        Some(e) => e.clone(),
        None => c.noise_multipliers.clone(),
    };
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| {
        xs.get(a)
            .unwrap_or(&0.0)
            .total_cmp(xs.get(b).unwrap_or(&0.0))
    });
    let at = |j: usize| xs.get(j).copied().unwrap_or(f64::NAN);
    let curve = |f: &dyn Fn(&PointBounds) -> f64| -> Vec<(f64, f64)> {
        order
            .iter()
            .filter_map(|&j| bounds.get(j).map(|b| (at(j), f(b))))
            .collect()
    };
    let kappa = 1.0 / c.prior_size as f64;
    let colours = ["#4c72b0", "#dd8452", "#55a868"];
    let estimates = Score::ALL
        .iter()
        .zip(colours)
        .map(|(score, colour)| svg::Estimates {
            label: format!(
                "attack: {} ({}), 95 % interval",
                score.name(),
                match score {
                    Score::Sum => "Alg. 2",
                    Score::Top => "Alg. 3",
                    Score::LogLikelihood => "App. G",
                }
            ),
            points: order
                .iter()
                .filter_map(|&j| {
                    points
                        .get(j)
                        .and_then(|p| p.rates.get(*score))
                        .map(|r| (at(j), r.rate, r.lower, r.upper))
                })
                .collect(),
            colour,
        })
        .collect();
    let subtitle = format!(
        "{}, |D⁻| = {}, m = {}, {}, T = {}, C = {}, {} trials per point, seed {}",
        c.run.model,
        c.run.train_size,
        c.prior_size,
        c.run.sampling_label(),
        c.run.steps,
        shown(c.run.clip),
        c.trials,
        c.seed
    );
    svg::curve_plot_svg(&svg::CurvePlot {
        y_log: false,
        decades: false,
        y_max: 1.0,
        titles: svg::Titles {
            title: "Reconstruction success against the ReRo bound (Hayes et al. 2023, Fig. 2)",
            subtitle: &subtitle,
            x_label: if c.epsilons.is_some() {
                "ε (δ fixed; σ calibrated by RDP)"
            } else {
                "noise multiplier σ"
            },
            y_label: "probability of successful reconstruction",
        },
        curves: std::vec![
            svg::Curve {
                label: String::from("γ, Hayes et al. Thm 2 (certified)"),
                points: curve(&|b| b.gamma),
                stroke: svg::CERTIFIED,
            },
            svg::Curve {
                label: String::from("γ, Balle et al. Thm 2 (from RDP)"),
                points: curve(&|b| b.gamma_balle),
                stroke: svg::FROM_RDP,
            },
            svg::Curve {
                label: format!("baseline κ = 1/m = {}", sig(kappa, 4, Side::Nearest)),
                points: curve(&|_| kappa),
                stroke: svg::REFERENCE,
            },
        ],
        estimates,
    })
}
