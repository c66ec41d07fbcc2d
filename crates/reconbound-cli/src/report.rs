//! `reconbound report`: one configuration, every answer — the accountant's ε, the ReRo bounds
//! against the prior size beside the prior-aware attack, the MSE bounds (Guo et al. Thm 1 and
//! the per-example FIL of a training run), the audit's empirical ε — as one self-contained HTML
//! page (inline SVG, no scripts, printable) and, with `--json`, every number of the page.
//!
//! Nothing is computed here: the numbers are the typed results of `bound` ([`Bound`]: the
//! core's guarantees), `train --fil` ([`Trained`]), `attack prior-aware`
//! ([`PriorAwareSummary`]), `audit` ([`AuditSummary`]) and, with `--reconn K`,
//! `attack reconn` ([`Reconn`]) — each run through the command's own entry point on a
//! configuration built here and checked as the command checks its flags — and those of
//! [`rero_bounds`] for the curve over the prior size. Each section of the JSON is rendered
//! from its result by the code that renders the command's `--json`, the summary and the
//! terminal's lines read the results' fields; the page ([`super::html`]) and the JSON are both
//! rendered from one [`Report`].

use super::args::{parse, switch as s, value as v, Flags, Spec, UsageError};
use super::attack::{self, run_prior_aware, PriorAwareConfig, PriorAwareSummary};
use super::attack_reconn::{Reconn, ReconnRun};
use super::attack_run::{self, parse_run_flags, rero_bounds, RunDefaults, RUN_FLAGS};
use super::audit::{self, run_audit, AuditRun, AuditSummary};
use super::audit_claim::Pairing;
use super::commands::{Bound, BoundConfig};
use super::failure::Failure;
use super::format::{sig, Side};
use super::json::{self, Object, Value};
use super::output::{check_writable, write_whole};
use super::shard::{merge_shards, parse_shard, parse_threads, shard_kind, Sharding};
use super::train::{FilOptions, TrainConfig, Trained};
use super::{html, svg};
use reconbound::accounting::guarantees::{self, Guarantees};
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::tradeoff::{Bracket, TradeoffCurve};
use reconbound::attacks::audit::canary::{Crafter, GradientShape};
use reconbound::attacks::audit::claim::Claim;
use reconbound::attacks::audit::evaluate::{gradient_test_plan, Estimator, ThresholdRule};
use reconbound::attacks::audit::run::{BatchView, Distinguisher};
use reconbound::attacks::trial::SuccessRate;
use reconbound::train::clip::ClipMethod;
use reconbound::train::sampling::Sampling;
use std::boxed::Box;
use std::format;
use std::io::IsTerminal as _;
use std::string::{String, ToString};
use std::time::Instant;
use std::vec::Vec;

type Out = Result<String, Failure>;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// Documented defaults of `report` (the training run's are `attack prior-aware`'s).
pub(crate) mod defaults {
    /// Trials of the prior-aware attack.
    pub const TRIALS: u64 = 400;
    /// Trials per world of the audit.
    pub const AUDIT_TRIALS: u64 = 150;
    /// K of the FIL run's `--fil-coords`.
    pub const FIL_COORDS: u64 = 50;
    /// The page.
    pub const OUT: &str = "reconbound-report.html";
}

/// The prior sizes m of the ReRo curve (κ = 1/m); the report's own m is added.
const PRIOR_SIZES: [u64; 16] = [
    2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 70, 100, 200, 300, 500, 1000,
];

/// Points of the report's trade-off curve (α from 1e-4 to 1).
const TRADEOFF_POINTS: usize = 120;

/// The header kind of a report shard file.
pub(crate) const SHARD_KIND: &str = "report";

/// The audit's threat model: the strongest that fits the run (the adversary of DP-SGD's
/// analysis: a gradient canary inserted at every step, read through the released gradients,
/// at the run's own learning rate — crafter 5 would set it to 0).
const AUDIT_CRAFTER: Crafter = Crafter::Gradient(GradientShape::Dirac);
/// The audit's distinguisher: the likelihood-ratio test on the released gradients.
const AUDIT_DISTINGUISHER: Distinguisher = Distinguisher::GradientTest;

const HELP: &str = "\
usage: reconbound report [--model mlp|mnist-convnet] [--data embedded|<idx dir>] [--train-size N]
         [--sampling-rate Q] [--steps T] [--clip C] [--lr R]
         [--noise-multiplier S | --epsilon E [--delta D]] [--prior-size M]
         [--trials R] [--audit-trials A] [--fil-coords K] [--seed X] [--threads K]
         [--reconn K] [--out FILE.html] [--shard K/M] [--quiet] [--json]
       reconbound report --run FILE ...   the page of YOUR run, no training
                                          (reconbound report --run x --help)

The crate's own demo: how well could someone reconstruct a training example from this model, and how sure are we?
One DP-SGD configuration (the training run of 'attack prior-aware' and 'audit': hard
clipping at C, noise multiplier S, T steps, Poisson sampling at rate Q or the full batch for
Q = 1, no momentum, |D| = N + 1 training examples) and, for exactly that (Q, S, T, δ), in one
self-contained HTML page (inline SVG, no scripts, readable offline and printable):
  1. the configuration and the accountant's ε by RDP and by PLD (certified bracket);
  2. reconstruction robustness: Hayes et al.'s γ and Balle et al.'s γ against the prior size
     (κ = 1/m, m = 2 … 1000), with the prior-aware attack's success at m = M and its 95 %
     Clopper–Pearson interval ('attack prior-aware', R trials);
  3. MSE: Guo et al. Thm 1 from RDP, and the per-example FIL bounds of one training run of
     N + 1 examples ('train --fil', K coordinates): histogram with the RDP bound and MSE = 1
     marked, the most and least exposed training images;
  4. the audit ('audit', A trials per world): the empirical ε of the strongest threat model
     that fits the run (Nasr et al.'s gradient canary, crafter 4, read through the released
     gradients, distinguisher 3) next to ε, and its (FPR, TPR) corner on the ROC plot under
     the run's certified trade-off curve ('tradeoff': membership TPR ≤ 1 − f(FPR));
  5. a plain-language summary at the top, every number linked to its section and paper;
  6. how to reproduce it: the command, the seed, the crate version, the wall time;
  with --reconn K, a RecoNN section ('attack reconn --shadow-models K': Balle et al. 2022's
  model-based attack on the vendored 10,000 MNIST digits, its own non-private setting, judged
  against the NN oracle). Off by default: K = 1000 adds about 10 minutes on 2 cores, past
  the page's two-minute budget. Sharded reports run it in 'merge'.
Every bound is for the run it is shown beside; 'bound' (the README's default, q = 256/60000,
T = 14063) is another configuration. The terminal gets 'bound's table for the configuration;
progress goes to stderr only when it is a terminal (--quiet silences it).

Defaults: 'attack prior-aware's run — MLP 784-10-10 (ELU), embedded MNIST, N = 999, M = 10,
Q = 1, T = 100, C = 0.1, learning rate 10, ε = 8 at δ = 1e-5 (σ calibrated by RDP) — with
R = 400 attack trials (95 % intervals of about ±0.05), A = 150 audit trials per world
(full batch: the Gaussian-DP estimate at the likelihood-ratio threshold 0 fixed in advance,
all trials scored; Poisson sampling: Clopper–Pearson, threshold held out on the first 75),
K = 50 FIL coordinates (train's default), seed 0, all cores, --out reconbound-report.html:
under 2 minutes on 2 cores.

Bad input (an unwritable --out, a configuration the PLD cannot certify, data that do not
parse, any flag out of range) exits 2 before any training, and writes nothing.

--shard K/M runs only the trial parts (the attack's and the audit's trials with index
≡ K (mod M)) and prints them as JSON lines for 'reconbound merge SHARD_FILE... --out
FILE.html', which trains the FIL run and writes the page of the unsharded run.

JSON keys: command, version, command_line, out, config {model, data, train_size, prior_size,
sampling_rate, batch_size, steps, clip, lr, delta, epsilon (target or null),
noise_multiplier, trials, audit_trials, fil_coords, seed}, summary {prior_size, gamma,
gamma_lower, gamma_balle, attack_score, attack_trials, attack_successes,
attack_success_rate, attack_success_lower, attack_success_upper, epsilon_rdp, epsilon_pld,
epsilon_pld_lower, epsilon_empirical, epsilon_empirical_max, membership_tpr (the best
attack's TPR at membership_fpr = 0.01), membership_fpr, advantage, audit_fpr_upper,
audit_tpr_lower (the audit's corner under the trade-off curve), mse_lower_bound,
fil_mse_bound_median}, bound ('bound --json'), rero_curve [{prior_size, kappa, gamma,
gamma_lower, gamma_balle, gamma_balle_order}], tradeoff_curve [{fpr, tpr}] (the certified
1 − f, 120 points from 1e-4 to 1), attack ('attack prior-aware --json'), audit
('audit --json'), train ('train --fil --json' without seconds), reconn ('attack reconn
--json', with --reconn K only; config then has reconn too), seconds (of a merged
report: the sum of its shards' wall times and the merge's own).
Everything but seconds is identical across runs with the same flags.
";

/// `report --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound report [--model mlp|mnist-convnet] [--data embedded|<idx dir>] [--train-size N]
         [--sampling-rate Q] [--steps T] [--clip C] [--lr R]
         [--noise-multiplier S | --epsilon E [--delta D]] [--prior-size M]
         [--trials R] [--audit-trials A] [--fil-coords K] [--seed X] [--threads K]
         [--reconn K] [--out FILE.html] [--shard K/M] [--quiet] [--json]
       reconbound report --run FILE ...   the page of YOUR run, no training
                                          (reconbound report --run x --help)

The crate's own demo: how well could someone reconstruct a training example from this model,
and how sure are we? It trains one DP-SGD configuration and writes one self-contained HTML
page: the accountant's ε (RDP, PLD), ReRo γ beside the prior-aware attack's success, Guo et
al.'s MSE bound beside the per-example FIL bounds of one training run, and the audit's
empirical ε under the run's certified trade-off curve, a plain-language summary on top.
For a run trained elsewhere: 'reconbound report --run FILE' (no training).

Common flags (defaults: 'attack prior-aware's run; under 2 minutes on 2 cores):
  --epsilon E           σ calibrated by RDP to ε = E at --delta [8, 1e-5];
                        or --noise-multiplier S
  --sampling-rate Q     Poisson rate, 1 for the full batch [1]; --steps T [100]
  --prior-size M        candidates of the reconstruction prior [10]
  --trials R            attack trials [400]; --audit-trials A: audit trials per world [150]
  --fil-coords K        input coordinates of the FIL estimate [50]
  --reconn K            a RecoNN section, K shadow models (K = 1000 adds about 10 minutes)
  --out FILE.html       the page [reconbound-report.html]
  --shard K/M           only the trials K mod M, for 'reconbound merge'
  --json                every number at full precision, as JSON

Example (a one-second smoke run: 10 steps, 20 attack and 10 audit trials):
  reconbound report --steps 10 --trials 20 --audit-trials 10 --fil-coords 5 --out demo.html
";

/// The report's flags.
fn flags() -> Vec<Spec> {
    RUN_FLAGS
        .iter()
        .copied()
        .chain([
            v("prior-size"),
            v("audit-trials"),
            v("fil-coords"),
            v("reconn"),
            v("out"),
            v("shard"),
            s("json"),
        ])
        .collect()
}

/// The configuration of a report, validated: everything that determines its numbers.
#[derive(Clone, Debug, PartialEq)]
struct Config {
    run: attack_run::Training,
    epsilon: Option<f64>,
    sigma: f64,
    prior_size: u64,
    trials: u64,
    audit_trials: u64,
    fil_coords: u64,
    seed: u64,
    /// K of the RecoNN section (0: no section).
    reconn: u64,
}

/// `x` as a flag value that reads back as the same f64.
fn num_arg(x: f64) -> String {
    format!("{x}")
}

/// `--flag value` pairs as arguments.
fn flat(pairs: Vec<(&'static str, String)>) -> Vec<String> {
    pairs
        .into_iter()
        .flat_map(|(flag, value)| [String::from(flag), value])
        .collect()
}

impl Config {
    fn parse(f: &Flags) -> Result<Self, Failure> {
        let r = parse_run_flags(
            f,
            &RunDefaults {
                train_size: attack_run::defaults::TRAIN_SIZE,
                lr: attack_run::defaults::LR,
                trials: defaults::TRIALS,
                delta_with_sigma: false,
            },
        )?;
        let (epsilon, sigma) = r.single("report")?;
        let audit_trials = f.u64("audit-trials")?.unwrap_or(defaults::AUDIT_TRIALS);
        let fil_coords = f.u64("fil-coords")?.unwrap_or(defaults::FIL_COORDS);
        let reconn = match f.u64("reconn")? {
            None => 0,
            Some(k) if (10..=8000).contains(&k) => k,
            Some(k) => {
                return Err(usage(format!(
                    "--reconn = {k} is out of range: must be in 10..=8000 (shadow models of the RecoNN section)"
                )))
            }
        };
        Ok(Config {
            run: r.run,
            epsilon,
            sigma,
            prior_size: f
                .u64("prior-size")?
                .unwrap_or(attack_run::defaults::PRIOR_SIZE),
            trials: r.trials,
            audit_trials,
            fil_coords,
            seed: r.seed,
            reconn,
        })
    }

    /// `--model … --lr R` and the noise: the flags of the training run (`--delta` with
    /// `--epsilon` only).
    fn run_args(&self) -> Vec<String> {
        let r = &self.run;
        let mut a = std::vec![
            ("--model", r.model.clone()),
            ("--data", r.data.clone()),
            ("--train-size", r.train_size.to_string()),
            ("--sampling-rate", num_arg(r.sampling_rate)),
            ("--steps", r.steps.to_string()),
            ("--clip", num_arg(r.clip)),
            ("--lr", num_arg(r.lr)),
        ];
        match self.epsilon {
            Some(e) => a.extend([("--epsilon", num_arg(e)), ("--delta", num_arg(r.delta))]),
            None => a.push(("--noise-multiplier", num_arg(self.sigma))),
        }
        flat(a)
    }

    /// The report's own flags in one canonical order (what the page prints as the command).
    fn canonical_args(&self) -> Vec<String> {
        let mut a = std::vec![String::from("report")];
        a.extend(self.run_args());
        a.extend(flat(std::vec![
            ("--prior-size", self.prior_size.to_string()),
            ("--trials", self.trials.to_string()),
            ("--audit-trials", self.audit_trials.to_string()),
            ("--fil-coords", self.fil_coords.to_string()),
            ("--seed", self.seed.to_string()),
        ]));
        if self.reconn > 0 {
            a.extend([String::from("--reconn"), self.reconn.to_string()]);
        }
        a
    }

    /// `attack prior-aware` of the run: R trials at the report's one point, against a
    /// uniform prior of m candidates, scored by the default score.
    fn prior_aware(&self) -> Result<PriorAwareConfig, Failure> {
        PriorAwareConfig {
            run: self.run.clone(),
            prior_size: self.prior_size,
            epsilons: self.epsilon.map(|e| std::vec![e]),
            noise_multipliers: std::vec![self.sigma],
            trials: self.trials,
            seed: self.seed,
            score: attack_run::defaults::SCORE,
        }
        .checked()
    }

    /// `audit` of the run in the strongest threat model that fits it ([`AUDIT_CRAFTER`],
    /// [`AUDIT_DISTINGUISHER`]), A trials per world, every other flag at its default.
    /// The audit's estimator and threshold rule: the core's plan for the gradient test
    /// ([`gradient_test_plan`]: Gaussian DP at the fixed threshold 0 on the full batch,
    /// held-out Clopper–Pearson under Poisson sampling).
    fn audit_plan(&self) -> (Estimator, ThresholdRule) {
        gradient_test_plan(self.run.sampling_rate, self.audit_trials)
    }

    fn audit(&self) -> Result<AuditRun, Failure> {
        let (estimator, rule) = self.audit_plan();
        AuditRun {
            run: self.run.clone(),
            epsilon: self.epsilon,
            noise_multiplier: self.sigma,
            trials: self.audit_trials,
            seed: self.seed,
            crafters: std::vec![AUDIT_CRAFTER],
            pairing: Pairing::List(std::vec![AUDIT_DISTINGUISHER]),
            estimator,
            rule,
            alpha: audit::defaults::ALPHA,
            view: BatchView::Informed,
            claim: Claim::Trainer,
            shuffle: false,
            init: reconbound::attacks::audit::init::Init::Random,
            final_model: false,
        }
        .checked()
    }

    /// `train --fil` of the same DP-SGD run on N + 1 examples (the attack's D⁻ plus its
    /// target, the audit's D plus its canary: the same q), with its FIL figures, checked as
    /// `train` checks its flags.
    fn train(&self, quiet: bool) -> Result<TrainConfig, Failure> {
        let r = &self.run;
        let full = r.sampling_rate == 1.0;
        TrainConfig {
            model: r.model.clone(),
            data: r.data.clone(),
            // N + 1 <= 10⁸ + 1 and K <= d (checked): counts of any machine
            train_size: Some(r.train_size as usize + 1),
            test_size: None,
            steps: Some(r.steps),
            epochs: None,
            batch_size: (!full).then_some(r.batch_size),
            noise_multiplier: self.sigma,
            clip: Some(r.clip),
            clipping: Some(ClipMethod::Hard),
            lr: r.lr,
            momentum: 0.0,
            weight_decay: 0.0,
            sampling: if full {
                Sampling::FullBatch
            } else {
                Sampling::Poisson
            },
            delta: r.delta,
            seed: self.seed,
            fil: Some(FilOptions {
                coords: Some(self.fil_coords as usize),
                runs: 1,
                kappa_one: false,
                delta: None,
                csv: None,
                plot: None,
                images: None,
                figures: true,
            }),
            quiet,
        }
        .checked()
    }

    /// `bound` for the report's (q, σ, T, δ) and its uniform prior of m candidates.
    fn bound(&self) -> Result<BoundConfig, Failure> {
        let r = &self.run;
        BoundConfig::one_phase(
            self.sigma,
            r.sampling_rate,
            r.steps,
            r.delta,
            self.prior_size,
        )
    }

    fn to_json(&self) -> Object {
        let r = &self.run;
        let mut o = Object::new();
        r.write_data(&mut o);
        o.int("prior_size", self.prior_size);
        r.write_dpsgd(&mut o);
        match self.epsilon {
            Some(e) => o.num("epsilon", e),
            None => o.put("epsilon", Value::Null),
        };
        o.num("noise_multiplier", self.sigma)
            .int("trials", self.trials)
            .int("audit_trials", self.audit_trials)
            .int("fil_coords", self.fil_coords)
            .int("seed", self.seed);
        if self.reconn > 0 {
            o.int("reconn", self.reconn);
        }
        o
    }
}

/// A number of the summary, or `null` when its section has none.
fn number(x: Option<f64>) -> Value {
    x.map_or(Value::Null, Value::Num)
}

/// One point of the ReRo curve.
struct CurvePoint {
    prior_size: u64,
    bounds: attack_run::PointBounds,
}

/// Everything on the page: the configuration and each part's typed result.
pub(crate) struct Report {
    /// The configuration.
    config: Config,
    /// The page's path.
    out: String,
    /// The core's guarantees for (q, σ, T, δ) and the prior of m candidates.
    bound: Bound,
    /// The ReRo bounds against the prior size.
    curve: Vec<CurvePoint>,
    /// The certified trade-off curve: (α, f(α) bracket) from 1e-4 to 1.
    tradeoff: Vec<(f64, Bracket)>,
    /// The prior-aware attack's rates.
    attack: PriorAwareSummary,
    /// The audit's empirical ε.
    audit: AuditSummary,
    /// The FIL training run.
    train: Trained,
    /// The RecoNN section (with `--reconn K`).
    reconn: Option<Reconn>,
    /// The wall time (of a merged report: its shards' and the merge's).
    seconds: f64,
}

impl Report {
    /// The summary's numbers: those of the sections (no number is computed here). The
    /// attack's is the rate of the score it was told to use before its trials (`--score`,
    /// default sum), not the best of the three after the fact: that choice would look at the
    /// trials and its interval would not hold (choices made by looking at trials are paid
    /// for, never free).
    fn summary(&self) -> Object {
        let mut o = Object::new();
        let g = &self.bound.guarantees;
        let hayes = g.gamma.as_ref().ok();
        let pld = g.epsilon_pld.as_ref().ok();
        o.int("prior_size", self.config.prior_size)
            .put("gamma", number(hayes.map(|h| h.gamma)))
            .put("gamma_lower", number(hayes.map(|h| h.lower)))
            .num("gamma_balle", g.gamma_balle.gamma);
        match self.attack.headline() {
            Some((score, r)) => {
                o.str("attack_score", score.name())
                    .int("attack_trials", r.trials)
                    .int("attack_successes", r.successes)
                    .num("attack_success_rate", r.rate)
                    .num("attack_success_lower", r.lower)
                    .num("attack_success_upper", r.upper);
            }
            None => {
                o.put("attack_score", Value::Null);
            }
        }
        o.num("epsilon_rdp", g.epsilon_rdp.epsilon)
            .put("epsilon_pld", number(pld.map(|e| e.value)))
            .put("epsilon_pld_lower", number(pld.map(|e| e.lower)));
        o.put("epsilon_empirical", number(self.audit.epsilon_empirical()))
            .num("epsilon_empirical_max", self.audit.epsilon_empirical_max());
        let membership = g.membership.as_ref().ok();
        o.put(
            "membership_tpr",
            number(membership.and_then(|m| m.tpr.get(1)).map(|t| t.upper)),
        )
        .num("membership_fpr", guarantees::MEMBERSHIP_FPRS[1])
        .put("advantage", number(membership.map(|m| m.advantage.upper)));
        let corner = self.audit.tradeoff_corner();
        o.put("audit_fpr_upper", number(corner.map(|c| c.0)))
            .put("audit_tpr_lower", number(corner.map(|c| c.1)));
        o.num("mse_lower_bound", g.mse.mse);
        o.put(
            "fil_mse_bound_median",
            number(self.train.fil_mse_bound_median()),
        );
        o
    }

    /// The report as one JSON object: what `--json` prints and what the page shows.
    pub(crate) fn to_json(&self, with_seconds: bool) -> Object {
        let mut o = Object::new();
        o.str("command", "report")
            .str("version", env!("CARGO_PKG_VERSION"))
            .str("command_line", &command_line(&self.config))
            .str("out", &self.out)
            .put("config", Value::Obj(self.config.to_json()))
            .put("summary", Value::Obj(self.summary()))
            .put("bound", Value::Obj(self.bound.to_json()));
        let curve: Vec<Value> = self
            .curve
            .iter()
            .map(|p| {
                let mut c = Object::new();
                c.int("prior_size", p.prior_size)
                    .num("kappa", 1.0 / p.prior_size as f64)
                    .num("gamma", p.bounds.gamma)
                    .num("gamma_lower", p.bounds.gamma_lower)
                    .num("gamma_balle", p.bounds.gamma_balle)
                    .num("gamma_balle_order", p.bounds.gamma_balle_order);
                Value::Obj(c)
            })
            .collect();
        let tradeoff: Vec<Value> = self
            .tradeoff
            .iter()
            .map(|&(a, b)| {
                let mut c = Object::new();
                c.num("fpr", a).num("tpr", tpr_upper(b));
                Value::Obj(c)
            })
            .collect();
        o.put("rero_curve", Value::Arr(curve))
            .put("tradeoff_curve", Value::Arr(tradeoff))
            .put("attack", Value::Obj(self.attack.to_json()))
            .put("audit", Value::Obj(self.audit.to_json()))
            .put("train", Value::Obj(self.train.to_json(false)));
        if let Some(r) = &self.reconn {
            o.put("reconn", Value::Obj(r.to_json()));
        }
        if with_seconds {
            o.num("seconds", self.seconds);
        }
        o
    }

    /// The ReRo bounds against the prior size, with the attack's success at m = M.
    fn rero_plot(&self) -> String {
        let c = &self.config;
        let line = |f: fn(&attack_run::PointBounds) -> f64| -> Vec<(f64, f64)> {
            self.curve
                .iter()
                .map(|p| (p.prior_size as f64, f(&p.bounds)))
                .collect()
        };
        let mut estimates = Vec::new();
        if let Some((score, r)) = self.attack.headline() {
            estimates.push(svg::Estimates {
                label: format!(
                    "prior-aware attack ({}), {} trials, 95 % interval",
                    score.name(),
                    c.trials
                ),
                points: std::vec![(c.prior_size as f64, r.rate, r.lower, r.upper)],
                colour: "#2ca02c",
            });
        }
        let subtitle = format!(
            "{}, {}, T = {}, σ = {}",
            c.run.model_label(),
            sampling_label(c.run.sampling_rate),
            c.run.steps,
            super::format::plain(c.sigma, html::digits::INPUT)
        );
        svg::curve_plot_svg(&svg::CurvePlot {
            y_log: false,
            // the axis at the powers of ten the prior sizes span (issue 43: powers of two ran it
            // to 1024 for m ≤ 1000)
            decades: true,
            y_max: 1.0,
            titles: svg::Titles {
                title: "Reconstruction robustness against the prior size",
                subtitle: &subtitle,
                x_label: "prior size m (uniform prior, κ = 1/m)",
                y_label: "P[exact reconstruction]",
            },
            curves: std::vec![
                svg::Curve {
                    label: String::from("γ, Hayes et al. 2023 (certified)"),
                    points: line(|b| b.gamma),
                    stroke: svg::CERTIFIED,
                },
                svg::Curve {
                    label: String::from("γ from RDP, Balle et al. 2022"),
                    points: line(|b| b.gamma_balle),
                    stroke: svg::FROM_RDP,
                },
                svg::Curve {
                    label: String::from("baseline κ = 1/m"),
                    points: self
                        .curve
                        .iter()
                        .map(|p| (p.prior_size as f64, 1.0 / p.prior_size as f64))
                        .collect(),
                    stroke: svg::REFERENCE,
                },
            ],
            estimates,
        })
    }
}

/// The run's sampling as the page's figures say it: `full batch`, or `q = …` rounded as the
/// page rounds its inputs (issue 43: the figures printed q at full precision).
fn sampling_label(q: f64) -> String {
    if q >= 1.0 {
        String::from("full batch")
    } else {
        format!("q = {}", super::format::plain(q, html::digits::INPUT))
    }
}

/// The TPR bound 1 − f(α): the upper side of the complement of f's bracket.
fn tpr_upper(b: Bracket) -> f64 {
    b.complement().upper
}

impl Report {
    /// The membership trade-off (ROC): the certified curve, the blind guess and the
    /// audit's corner (FPR̄, TPR̲), which must lie under the curve.
    fn tradeoff_plot(&self) -> String {
        let c = &self.config;
        let mut estimates = Vec::new();
        if let Some((fpr, tpr_lo)) = self.audit.tradeoff_corner() {
            estimates.push(svg::Estimates {
                label: format!(
                    "audit: FPR ≤ {}, TPR ≥ {} together at 95 % ({} trials per world)",
                    sig(fpr, 3, Side::Up),
                    sig(tpr_lo.max(0.0), 3, Side::Down),
                    c.audit_trials
                ),
                points: std::vec![(fpr, tpr_lo.max(0.0), tpr_lo.max(0.0), tpr_lo.max(0.0))],
                colour: "#2ca02c",
            });
        }
        let subtitle = format!(
            "{}, T = {}, σ = {}",
            sampling_label(c.run.sampling_rate),
            c.run.steps,
            super::format::plain(c.sigma, html::digits::INPUT)
        );
        super::tradeoff::roc_svg(&self.tradeoff, &subtitle, estimates)
    }
}

/// The page's command: `reconbound` and the canonical flags, each a shell word (a value
/// with a space or a shell character quoted, [`html::shell_word`]).
fn command_line(c: &Config) -> String {
    let mut s = String::from("reconbound");
    for a in c.canonical_args() {
        s.push(' ');
        s.push_str(&html::shell_word(&a));
    }
    s
}

/// How the trial parts are obtained: run here (on `threads` threads), or reassembled from
/// shard files.
enum Trials {
    Run {
        threads: usize,
    },
    Merged {
        attack: Box<PriorAwareSummary>,
        audit: Box<AuditSummary>,
    },
}

/// Every check that can be made before any training: the configuration of each part, the
/// data, the accountant's certificate. Returns `bound`'s guarantees of the configuration.
fn check(c: &Config) -> Result<Bound, Failure> {
    if !(2..=10_000).contains(&c.prior_size) {
        return Err(usage(format!(
            "--prior-size = {} is out of range: must be in 2..=10000",
            c.prior_size
        )));
    }
    if c.fil_coords == 0 {
        return Err(usage(String::from(
            "--fil-coords = 0 is out of range: must be in 1..=d (the input dimension)",
        )));
    }
    c.prior_aware()?;
    c.audit()?;
    // The data (a directory that does not parse fails here), the model, the sizes.
    let (_, pool, _) = attack_run::load_pool(&c.run, c.prior_size, "--train-size + --prior-size")?;
    let d = pool.dim() as u64;
    if c.fil_coords > d {
        return Err(usage(format!(
            "--fil-coords = {} is out of range: must be in 1..={d} (the input dimension)",
            c.fil_coords
        )));
    }
    drop(pool);
    // a configuration the accountants cannot certify is bad input here (the help's exit 2,
    // before any training), not a failure of a run
    let bound = c.bound()?.compute().map_err(|e| match e {
        Failure::Compute(why) => usage(format!(
            "the configuration cannot be certified, so there is no page to write ({why}); change --noise-multiplier, --sampling-rate or --steps"
        )),
        other => other,
    })?;
    certified(&bound.guarantees)?;
    Ok(bound)
}

/// Refuses a configuration whose ε by PLD or γ of Hayes et al. the accountant cannot certify
/// (the report's summary states both).
fn certified(g: &Guarantees) -> Result<(), Failure> {
    let pld = g.epsilon_pld.as_ref().map(|e| e.value);
    let gamma = g.gamma.as_ref().map(|b| b.gamma);
    for (key, value) in [("epsilon_pld", pld), ("gamma", gamma)] {
        let why = match value {
            Ok(x) if x.is_finite() => continue,
            Ok(_) => String::from("no certified value"),
            Err(why) => why.reason(),
        };
        return Err(usage(format!(
            "--noise-multiplier / --epsilon, --sampling-rate, --steps, --delta: the PLD accountant cannot certify {key} for this configuration ({why})"
        )));
    }
    Ok(())
}

/// Is progress shown (stderr a terminal, no `--quiet`)?
fn progress_shown(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// Everything but the trials' summaries: checks, curve, FIL run; then the page.
fn build(
    c: &Config,
    out: &str,
    trials: Trials,
    quiet: bool,
    start: Instant,
) -> Result<Report, Failure> {
    let bound = check(c)?;
    let curve = rero_curve(c)?;
    let tradeoff = TradeoffCurve::of_schedule(&bound.config.schedule, 1e-3, &PldConfig::default())?
        .points(TRADEOFF_POINTS, 1e-4)?;
    let sub_quiet = !progress_shown(quiet);
    let trained = c.train(sub_quiet)?.run()?;
    let (attack, audit) = match trials {
        Trials::Run { threads } => {
            let sharding = Sharding {
                shard: None,
                threads,
                quiet: sub_quiet,
            };
            let attack = run_prior_aware(&c.prior_aware()?, sharding)?;
            let audit = run_audit(&c.audit()?, sharding)?;
            (attack.whole("attack prior-aware")?, audit.whole("audit")?)
        }
        Trials::Merged { attack, audit } => (*attack, *audit),
    };
    let reconn = if c.reconn > 0 {
        Some(reconn(c, sub_quiet)?)
    } else {
        None
    };
    Ok(Report {
        config: c.clone(),
        out: String::from(out),
        bound,
        curve,
        tradeoff,
        attack,
        audit,
        train: trained,
        reconn,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The ReRo bounds of the run at the prior sizes of [`PRIOR_SIZES`] and the report's m.
fn rero_curve(c: &Config) -> Result<Vec<CurvePoint>, Failure> {
    let mut sizes: Vec<u64> = PRIOR_SIZES.to_vec();
    if !sizes.contains(&c.prior_size) {
        sizes.push(c.prior_size);
        sizes.sort_unstable();
    }
    let mut curve = Vec::with_capacity(sizes.len());
    for &m in &sizes {
        let b = rero_bounds(1.0 / m as f64, c.run.sampling_rate, &[c.sigma], c.run.steps)?;
        if let Some(bounds) = b.into_iter().next() {
            curve.push(CurvePoint {
                prior_size: m,
                bounds,
            });
        }
    }
    Ok(curve)
}

/// The RecoNN section: `attack reconn --shadow-models K --seed X` (its own setting).
fn reconn(c: &Config, quiet: bool) -> Result<Reconn, Failure> {
    ReconnRun::with_shadow_models(c.reconn, c.seed, quiet)?
        .run()?
        .ok_or_else(|| {
            Failure::Compute(String::from(
                "internal: 'attack reconn' ran a part of a shadow set where the whole run was asked for",
            ))
        })
}

/// Writes the page and returns what the terminal gets.
fn finish(report: &Report, json: bool) -> Out {
    let page = html::page(
        &report.to_json(true),
        &html::Figures {
            rero: &report.rero_plot(),
            tradeoff: &report.tradeoff_plot(),
            histogram: report.train.histogram().unwrap_or_default(),
            images: report.train.images().unwrap_or_default(),
            reconn_images: report
                .reconn
                .as_ref()
                .and_then(Reconn::images)
                .unwrap_or_default(),
        },
    );
    write_whole("out", &report.out, &page)?;
    if json {
        let mut text = report.to_json(true).render();
        text.push('\n');
        return Ok(text);
    }
    let g = &report.bound.guarantees;
    let headline = report.attack.headline();
    let rate = |f: fn(&SuccessRate) -> f64| headline.map_or(f64::NAN, |(_, r)| f(&r));
    let mut t = report.bound.table();
    t.push_str(&format!(
        "\nprior-aware attack, score {} (fixed before the trials): success {} [{}, {}] over {} trials (γ ≤ {})\n",
        headline.map_or("-", |(score, _)| score.name()),
        sig(rate(|r| r.rate), html::digits::RATE, Side::Nearest),
        sig(rate(|r| r.lower), html::digits::RATE, Side::Down),
        sig(rate(|r| r.upper), html::digits::RATE, Side::Up),
        report.config.trials,
        sig(
            g.gamma.as_ref().map_or(f64::NAN, |h| h.gamma),
            html::digits::GAMMA,
            Side::Up
        ),
    ));
    t.push_str(&format!(
        "audit (gradient canary / released gradients): ε ≥ {} at 95 % confidence, {} trials per world (ε ≤ {} by PLD)\n",
        sig(
            report.audit.epsilon_empirical().unwrap_or(f64::NAN),
            html::digits::AUDIT_EPSILON,
            Side::Down
        ),
        report.config.audit_trials,
        sig(
            g.epsilon_pld.as_ref().map_or(f64::NAN, |e| e.value),
            html::digits::EPSILON,
            Side::Up
        ),
    ));
    t.push_str(&format!(
        "wrote the report to {} ({:.1} s)\n",
        report.out, report.seconds
    ));
    Ok(t)
}

/// `reconbound report …`.
pub(crate) fn report(args: &[String]) -> Out {
    let start = Instant::now();
    let f = parse(args, &flags())?;
    if f.help {
        return Ok(f.help_text("report", SHORT_HELP, String::from(HELP)));
    }
    let c = Config::parse(&f)?;
    let threads = parse_threads(&f)?;
    let quiet = f.has("quiet");
    if let Some(shard) = parse_shard(&f)? {
        for flag in ["out", "json"] {
            if f.has(flag) {
                return Err(usage(format!(
                    "flag '--{flag}' does not apply with '--shard' (the page is written by 'reconbound merge … --out FILE')"
                )));
            }
        }
        check(&c)?;
        let sharding = Sharding {
            shard: Some(shard),
            threads,
            quiet: true,
        };
        let attack_lines =
            run_prior_aware(&c.prior_aware()?, sharding)?.shard("attack prior-aware")?;
        let audit_lines = run_audit(&c.audit()?, sharding)?.shard("audit")?;
        let mut header = Object::new();
        let canonical: Vec<Value> = c.canonical_args().into_iter().map(Value::Str).collect();
        header
            .str("reconbound_shard", SHARD_KIND)
            .str("version", env!("CARGO_PKG_VERSION"))
            .put("args", Value::Arr(canonical))
            // this shard's wall time: a merged report's time is the sum of its shards'
            .num("seconds", start.elapsed().as_secs_f64());
        let mut text = header.render();
        text.push('\n');
        text.push_str(&attack_lines);
        text.push_str(&audit_lines);
        return Ok(text);
    }
    let out = f.raw("out").unwrap_or(defaults::OUT);
    let data: Vec<(&str, &str)> = f
        .raw("data")
        .filter(|d| *d != "embedded")
        .map(|d| ("data", d))
        .into_iter()
        .collect();
    super::output::check_distinct(&[("out", out)], &data)?;
    check_writable("out", out)?;
    let report = build(&c, out, Trials::Run { threads }, quiet, start)?;
    finish(&report, f.has("json"))
}

/// `reconbound merge` of report shard files (name, text): the trial parts reassembled, then
/// the rest of the report, written to `out`.
pub(crate) fn merge(files: &[(String, String)], out: Option<&str>, json: bool) -> Out {
    let start = Instant::now();
    let Some(out) = out else {
        return Err(usage(String::from(
            "merge: report shards need --out FILE.html (the page to write)",
        )));
    };
    check_writable("out", out)?;
    let mut args: Option<Vec<String>> = None;
    let mut shard_seconds = 0.0;
    let (mut attack_files, mut audit_files) = (Vec::new(), Vec::new());
    for (name, text) in files {
        let bad = |msg: &str| usage(format!("merge: '{name}': {msg}"));
        let mut lines = text.lines();
        let head = match lines.next().map(json::parse) {
            Some(Ok(Value::Obj(o))) => o,
            _ => return Err(bad("line 1 is not a report shard header")),
        };
        match head.get("version") {
            Some(Value::Str(v)) if v == env!("CARGO_PKG_VERSION") => {}
            _ => return Err(bad("written by another version of reconbound")),
        }
        match head.get("seconds").and_then(Value::as_f64) {
            Some(s) if s.is_finite() && s >= 0.0 => shard_seconds += s,
            _ => return Err(bad("header: seconds must be a number >= 0")),
        }
        let these: Vec<String> = match head.get("args") {
            Some(Value::Arr(a)) => a
                .iter()
                .map(|x| match x {
                    Value::Str(s) => Ok(s.clone()),
                    _ => Err(bad("header: args must be strings")),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(bad("header without args")),
        };
        match &args {
            None => args = Some(these),
            Some(prev) if *prev != these => {
                return Err(bad(
                    "another configuration or seed than the first file (shards of one report only)",
                ))
            }
            Some(_) => {}
        }
        // The attack's shard, then the audit's: split at the second header.
        let rest: Vec<&str> = lines.collect();
        let split = rest
            .iter()
            .position(|l| shard_kind(l).as_deref() == Some(super::audit::SHARD_KIND))
            .ok_or_else(|| bad("no audit shard in the file"))?;
        let (a, b) = rest.split_at(split);
        attack_files.push((name.clone(), a.join("\n")));
        audit_files.push((name.clone(), b.join("\n")));
    }
    let Some(args) = args else {
        return Err(usage(String::from("merge: no shard files given")));
    };
    let f = parse(args.get(1..).unwrap_or_default(), &flags())?;
    let c = Config::parse(&f)?;
    let (pa, pa_out) = merge_shards::<PriorAwareConfig>(&attack_files)?;
    let (au, au_out) = merge_shards::<AuditRun>(&audit_files)?;
    if pa != c.prior_aware()? || au != c.audit()? {
        return Err(usage(String::from(
            "merge: the attack's or the audit's trials are of another configuration than the report's header",
        )));
    }
    let attack = Box::new(attack::merged_summary(&pa, &pa_out)?);
    let audit = Box::new(audit::merged_summary(&au, au_out)?);
    let mut report = build(&c, out, Trials::Merged { attack, audit }, true, start)?;
    // the whole run's wall time: the shards' (their trials) and the merge's own (the rest)
    report.seconds += shard_seconds;
    finish(&report, json)
}
