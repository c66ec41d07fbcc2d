//! `reconbound audit`: the privacy audit of Nasr, Song, Thakurta, Papernot, Carlini 2021 on the
//! crate's own DP-SGD — trainings with and without a crafted canary, each scored by every
//! distinguisher ([`reconbound::attacks::audit::run`]), turned into an empirical ε
//! ([`reconbound::attacks::audit::evaluate`]) and printed beside the accountant's ε by RDP and PLD
//! for the same (q, σ, T, δ). Trials spread over threads, or one shard of them is written as
//! JSON lines for `reconbound merge` ([`super::shard`]).

use super::args::{parse, value as v, Flags, Spec, UsageError};
use super::attack_run::{
    defaults as run_defaults, line, load_pool, parse_run_flags, parse_sharding, sharded_flags_and,
    with_items, OutputOptions, RunDefaults, Training,
};
use super::audit_claim::{
    accountant_at, check_claim, claim_line, parse_claim, parse_crafter, parse_crafters, parse_view,
    read_claim, theory_line, verdict_text, view_line, write_claim, write_claim_verdict,
    write_theory, Pairing,
};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{self, Object, Value};
use super::output::write_whole;
use super::shard::{check_size, named_json, read_named, run_groups, Ran, ShardedRun, Sharding};
use super::svg;
use reconbound::attacks::audit::canary::{AdaptiveConfig, Crafter, GradientShape};
use reconbound::attacks::audit::claim::{self, Claim, Theory, Verdict};
use reconbound::attacks::audit::epsilon::{bonferroni_candidates, Direction, Threshold};
use reconbound::attacks::audit::evaluate::{
    empirical_epsilon, empirical_epsilon_max, Empirical, Estimator, ThresholdRule,
};
use reconbound::attacks::audit::init::Init;
use reconbound::attacks::audit::run::{
    named_scores, Audit, AuditConfig, AuditOutcome, BatchView, Distinguisher, WorldScores,
};
use reconbound::attacks::game::{Named, ScoreKind};
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// The `reconbound_shard` value of an audit's shard files.
pub(crate) const SHARD_KIND: &str = "audit";

/// Documented defaults of `audit` (the rest are `attack prior-aware`'s: C = 0.1, T = 100,
/// learning rate 10, ε = 8, δ = 1e-5, full batch).
pub(crate) mod defaults {
    /// |D|: the first N examples of the data.
    pub const TRAIN_SIZE: u64 = 1000;
    /// Trainings per world.
    pub const TRIALS: u64 = 100;
    /// The confidence parameter α of the empirical ε.
    pub const ALPHA: f64 = 0.05;
}

const HELP: &str = "\
usage: reconbound audit [--crafter LIST] [--distinguisher LIST] [--model mlp|mnist-convnet]
         [--data embedded|<idx dir>] [--train-size N] [--trials N] [--sampling-rate Q]
         [--steps T] [--clip C] [--lr R] [--noise-multiplier S | --epsilon E] [--delta D]
         [--estimator cp|gdp|one-run] [--threshold held-out|bonferroni|VALUE]
         [--calibration N] [--canaries M] [--guesses R]
         [--view informed|expected-batch|final-model] [--init random|crafted]
         [--sampling poisson|shuffle] [--claimed-noise-multiplier S′ | --claimed-epsilon E]
         [--alpha A] [--seed X] [--threads K] [--shard K/M] [--csv FILE] [--plot FILE.svg]
         [--quiet] [--json]

The privacy audit of Nasr, Song, Thakurta, Papernot, Carlini 2021 (§IV) on the crate's own
DP-SGD, beside the accountant's ε it must not beat. D is the first N examples of the data; a
trial (a pure function of the seed and the trial index) trains once on D and once on D plus
the canary (hard clipping at C, noise multiplier S, T steps, Poisson sampling at rate Q over
the N + 1 indices, or the full batch for Q = 1, no momentum), from the same θ₀ (the model's
initialisation with the seed), and scores both trainings by every distinguisher. --trials N
is the number of trainings in each world.

Crafters (--crafter, a comma list; Nasr et al. Table I):
  1, example            an example of the data not in D (the first one: data index N)
  2, mislabelled        that example with the label θ₀ finds least likely
  clipbkd               a scaled lowest-variance direction of D's inputs, least likely label
  3, adaptive           an input canary re-crafted from θ_t at every step
  4, gradient-dirac     a gradient canary C·e_p on the coordinate D's gradients use least
  gradient-spread-K     ±C/√K on the K least-used coordinates (K even)
  5, dataset-dirac      D relabelled by θ₀, learning rate 0, and the Dirac gradient canary
  dataset-spread-K      the same with the spread canary
  dataset-opposed       D = N copies of D's first example (least likely label), learning
                        rate 0, the canary minus that example's clipped gradient (Chua et
                        al. 2024's instance for shuffled batches: --sampling shuffle)
  all                   example, mislabelled, clipbkd, adaptive, gradient-dirac, dataset-dirac
                        (the default)

Distinguishers (--distinguisher, a comma list; scores oriented so that higher means 'in'):
  1          final-loss: −(ℓ(θ_T; canary) − ℓ(θ₀; canary))
  2, 2-mean  mean-loss: −mean_t (ℓ(θ_t) − ℓ(θ₀));   2-max  max-loss: −max_t (ℓ(θ_t) − ℓ(θ₀))
             (losses relative to the public θ₀'s: the same decisions as the raw loss)
  3          gradient: the likelihood-ratio test Σ_t ln(1 − q + q·exp((2Z_t − 1)/(2σ²)))
             on the released gradients, Z_t = ⟨r_t, c⟩/‖c‖², r_t = B·ḡ_t − K_t
  paired     (default) Nasr et al.'s Table I: example, mislabelled, clipbkd → 1 and 2-mean;
             adaptive → 2-mean; gradient and dataset canaries → 3
  all        all four for every crafter
Every trial scores all four, so more distinguishers cost no training: one table row per
(crafter, distinguisher).

Adversary view (--view; what Distinguisher 3 subtracts of D's part of the gradient sum):
  informed        (default) K_t = the clipped sum over D's actual batch at step t: the
                  adversary of DP-SGD's analysis, who knows D and D's batches (never the
                  canary's membership, sampled independently); the accountant's ε holds
                  against it
  expected-batch  K_t = q × D's whole clipped sum: D's batches secret too (weaker under
                  Poisson sampling). Under the full batch both are D's whole sum.
  final-model     the black-box adversary: it sees the final model θ_T only. Only
                  Distinguisher 1 (final-loss: θ_T and the public θ₀) is reported and the
                  default; 2, 3, paired and all are refused (they read the intermediate
                  models or the released gradients), as are adaptive (re-crafted from every
                  θ_t) and the dataset-* crafters (θ_T = θ₀)

θ₀ (--init; public, the same in both worlds and every trial):
  random   (default) the model's initialisation with the seed
  crafted  Annamalai & De Cristofaro (NeurIPS 2024): the auditor, who knows D, the model and
           the hyperparameters, pre-trains that initialisation on D without noise (2000
           full-batch steps of clipped gradient descent at lr 50, the audit's C) so that
           D's clipped gradients at θ₀ nearly cancel. Training then moves θ along the
           canary's (nearly constant, norm-C) gradient plus noise, and the final loss of a
           mislabelled canary is close to the optimal test of the full-batch Gaussian
           mechanism, μ = √T/σ. Input canaries only (example, mislabelled, clipbkd,
           adaptive). The black-box audit of the paper:
  reconbound audit --view final-model --init crafted --crafter mislabelled
    --sampling-rate 1 --epsilon 10 --steps 10 --trials 2000

The shuffling pitfall (--sampling shuffle; Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha,
Zhang, ICML 2024): the trainer shuffles the N + 1 slots every epoch into (N + 1)/B batches
of B = Q·(N + 1), as many implementations do, while the claim is the Poisson accountant's
ε at the same Q (what they report). Only the dataset-* crafters (learning rate 0: the
releases are exactly the shuffled mechanism's), (N + 1)/B must be an integer and T whole
epochs, and the view is expected-batch (D's batches would show the canary's slot).
Distinguisher 3 is then the likelihood ratio of the shuffled pair, epoch by epoch. Printed
beside it: a lower bound on the shuffled mechanism's ε (Chua et al.'s instance, the max
test, in closed form): a Poisson ε below it is no guarantee for the shuffled trainer.
Example (refutes the Poisson ε 0.61 of Q = 0.001, σ = 0.7, T = 1000):
  reconbound audit --sampling shuffle --crafter dataset-opposed --train-size 1999
    --sampling-rate 0.001 --steps 1000 --noise-multiplier 0.7 --trials 20000

Claims (auditing a DP-SGD implementation: reproduce its configuration — q, T, C, data —
with the crate's trainer at the σ it actually uses, and test the ε it claims):
  --claimed-noise-multiplier S′  the accountant's ε (RDP, PLD) is computed for S′ at the
                  same q, T, δ while the trainer runs at --noise-multiplier S (or the σ
                  --epsilon calibrates)
  --claimed-epsilon E            the claimed ε at δ is E itself (the accountant's ε printed
                  is the trainer's)
  The claim is refuted when some row's empirical lower bound exceeds the claimed ε; each
  row holds at 1 − α, so a refutation is wrong with probability at most α × the rows
  (claim_error). A claim that is not refuted is not proven. Without a claim the claim is
  the trainer's own σ. The flags exclude each other. With --estimator gdp a GDP estimate
  is no lower bound on ε, but on the full batch the claimed curve is μ-GDP (μ = √T/σ′, or
  the trainer's σ) and a row whose μ̂ exceeds μ refutes it for any mechanism (its CP limits
  put the test below the claimed curve); --claimed-epsilon and Poisson claims are refused
  with gdp (no Gaussian curve to refute).

Empirical ε: FP of N₀ and FN of N₁ at a threshold (score >= τ guesses 'in'), their one-sided
Clopper–Pearson upper limits FPR̄, FNR̄, then (Nasr et al. Eqs. 4–5)
  cp   ε >= max(ln((1 − δ − FPR̄)/FNR̄), ln((1 − δ − FNR̄)/FPR̄)) with probability >= 1 − α
  gdp  μ̂ = max(Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄), 0) and the ε of μ̂-GDP at δ: an estimate, a lower
       bound only if the trade-off curve is Gaussian (Nasr et al. 2023)
The threshold is paid for, never picked on the trials it is scored on for free:
  held-out    (default) searched on the trials with index < --calibration (default N/2)
              and applied to the others, which alone give the counts (α/2 per rate)
  bonferroni  searched on all trials; each limit at α/(2K), K = 2(N₀ + N₁ − 1) rules
  VALUE       fixed in advance: score >= VALUE guesses 'in' in every row (α/2 per rate).
              VALUE must not come from these trials: a τ printed by a run with the same
              seed was chosen on trials this run scores again (use another --seed)
  one-run     (--estimator one-run [--canaries M] [--guesses R]) the one-run audit of
              Steinke, Nasr, Jagielski 2023: ONE training of D plus M canaries (default
              1000), each included independently with probability 1/2 (a zero gradient in
              its place otherwise, so the training samples n + M indices at q = B/(n + M));
              every canary scored by the distinguishers; 'in' guessed on the R/2 highest
              and 'out' on the R/2 lowest scores (R = 100 by default, fixed in advance); ε
              from the correct guesses with the 2·M·δ term (refused unless 2·M·δ < α).
              Crafters: example, mislabelled, gradient-*, dataset-* (default: example,
              mislabelled, gradient-dirac, dataset-dirac); --trials, --shard, --threshold,
              --calibration, --csv and --plot do not apply.

Printed: the configuration, the accountant's ε for (q, σ, T, δ) by RDP and by PLD (certified
[lower, upper]), then per row the threshold, FP/N₀, FN/N₁, FPR̄, FNR̄, the empirical ε (a
lower bound at confidence 1 − α, or the GDP estimate), the most the trials could show (no
error at all) and the PLD ε. A Clopper–Pearson lower bound above the PLD ε is a bug (or a
chance of at most α per row) and is flagged ABOVE; a GDP estimate above it is flagged
'estimate above the accountant', with no such guarantee (an estimate, not a bound).

Defaults: all crafters, paired distinguishers, MLP 784-10-10 (ELU), embedded MNIST,
N = 1000, Q = 1, T = 100, C = 0.1, learning rate 10, ε = 8 (σ calibrated by RDP) at
δ = 1e-5, 100 trials per world, held-out threshold on trials 0..49, cp, α = 0.05, seed 0,
all cores. Every crafter runs the same trial seeds. Q·(N + 1) must be an integer.

--shard K/M runs only the trials with index ≡ K (mod M) and prints them as JSON lines (a
header with the whole configuration, then one line per crafter and trial with its eight
scores) for 'reconbound merge', which prints exactly what the unsharded run prints. Threads
never change a result.

JSON keys: command, model, data, train_size, sampling_rate, batch_size, steps, clip, lr,
delta, epsilon (the target, or null), noise_multiplier, trials, seed, pool_index, crafters,
distinguishers, estimator, threshold_rule, calibration, fixed_threshold, alpha,
adversary_view (informed, expected-batch or final-model), trainer_sampling (poisson or
shuffle), claim (trainer, noise-multiplier or epsilon), claim_value (S′, E or null), init
(random or crafted), confidence, epsilon_rdp, epsilon_rdp_order, epsilon_pld,
epsilon_pld_lower (or null and epsilon_pld_note) — the accountant's ε for S′ with
--claimed-noise-multiplier, else for the trainer's σ —, epsilon_empirical_max,
epsilon_claimed, claim_refuted (true/false), shuffle_epsilon_lower (the shuffled
mechanism's lower bound, or null), claim_error (α × the rows), rows (crafter,
crafter_number, distinguisher, distinguisher_number, epsilon_empirical, gdp_mu, threshold,
threshold_direction, candidates, negatives, false_positives, positives, false_negatives,
fpr_upper, fnr_upper, canary_steps_mean, above_pld, refutes_claim); with one row its keys
are also at the top level. The one-run audit prints adversary_view, claim, claim_value,
epsilon_claimed, claim_refuted, claim_error and per row refutes_claim too, and the f-DP
test of each row's counts against the claim's own certified trade-off curve (Mahloujifar,
Melis, Chaudhuri 2025; the accountant's curve at σ′ or the trainer's σ, or the (ε, δ)-DP
curve of --claimed-epsilon; valid for any mechanism): claim_refuted_fdp, claim_error_fdp,
per row epsilon_fdp (the f-DP ε against the trainer's own curves, its σ scaled: a lower
bound), epsilon_gdp (the counts read against Gaussian curves: a lower bound only for the full
batch), refutes_claim_fdp, p_value_fdp; and the counts of each row: canaries, guesses,
correct.
CSV (--csv): crafter,trial,world,final_loss,max_loss,mean_loss,gradient,canary_steps
(world 0 without the canary, 1 with it; scores in round-trip precision).
";

/// `audit --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound audit [--crafter LIST] [--distinguisher LIST] [--trials N]
         [--sampling-rate Q] [--steps T] [--noise-multiplier S | --epsilon E] [--delta D]
         [--estimator cp|gdp|one-run] [--view informed|expected-batch|final-model]
         [--claimed-noise-multiplier S′ | --claimed-epsilon E] [--alpha A] [--seed X]
         [--threads K] [--shard K/M] [--csv FILE] [--plot FILE.svg] [--quiet] [--json]
         (every flag: --help-all)

Is the ε a DP-SGD implementation claims too small? The privacy audit of Nasr et al. 2021
(§IV) on the crate's own DP-SGD: N trainings without and N with a crafted canary, scored by
distinguishers; the empirical ε, a lower bound at confidence 1 − α, beside the accountant's ε
by RDP and PLD, which it must not exceed (a row above the PLD ε is flagged ABOVE). A claimed
ε or σ is refuted when some row's lower bound exceeds it.

Common flags (defaults in brackets: MLP 784-10-10 on the embedded MNIST images, N = 1000):
  --crafter LIST         the canaries: example, mislabelled, clipbkd, adaptive,
                         gradient-dirac, dataset-dirac, … or all [all]
  --distinguisher LIST   1 (final loss), 2 (mean loss), 2-max, 3 (gradient), paired or all
                         [paired: Nasr et al.'s Table I]
  --trials N             trainings in each world [100]
  --epsilon E            σ calibrated by RDP to ε = E at --delta [8, 1e-5];
                         or --noise-multiplier S
  --sampling-rate Q      Poisson rate, 1 for the full batch [1]; --steps T [100]
  --estimator E          cp (Clopper–Pearson: a lower bound), gdp (an estimate) or one-run
                         (one training, M canaries) [cp]
  --view V               informed, expected-batch or final-model (black box) [informed]
  --claimed-noise-multiplier S′ | --claimed-epsilon E   the claim to test
  --alpha A              each row holds at confidence 1 − A [0.05]
  --shard K/M            only the trials K mod M, for 'reconbound merge'
  --csv FILE             every score; --plot FILE.svg: the scores' plot
  --json                 every number at full precision, as JSON

Example (the gradient canary read through the released gradients: 40 trials of 5 steps):
  reconbound audit --crafter gradient-dirac --distinguisher 3 --trials 40 --steps 5
";

fn parse_estimator(raw: Option<&str>) -> Result<Estimator, String> {
    match raw.map(str::trim) {
        None | Some("cp") => Ok(Estimator::ClopperPearson),
        Some("gdp") => Ok(Estimator::Gdp),
        Some(other) => Err(format!(
            "flag '--estimator': '{}' is not one of cp, gdp, one-run",
            other
                .chars()
                .filter(|c| !c.is_control())
                .take(30)
                .collect::<String>()
        )),
    }
}

/// Everything that determines the trials and the summary of an audit (the shard header):
/// two runs with equal configurations give equal outcomes for equal indices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AuditRun {
    /// The training of every trial (without and with the canary).
    pub(crate) run: Training,
    /// The target ε σ was calibrated to (`None` when σ was given).
    pub(crate) epsilon: Option<f64>,
    /// σ of the trainer.
    pub(crate) noise_multiplier: f64,
    /// Trainings per world.
    pub(crate) trials: u64,
    /// The seed of every trial.
    pub(crate) seed: u64,
    /// The canaries.
    pub(crate) crafters: Vec<Crafter>,
    /// The distinguishers of each crafter.
    pub(crate) pairing: Pairing,
    /// The empirical ε's estimator.
    pub(crate) estimator: Estimator,
    /// How the threshold is chosen.
    pub(crate) rule: ThresholdRule,
    /// The confidence parameter α.
    pub(crate) alpha: f64,
    /// Distinguisher 3's view of D's batches.
    pub(crate) view: BatchView,
    /// The claim under audit.
    pub(crate) claim: Claim,
    /// The trainer shuffles (the claim stays the Poisson accountant's at the same q).
    pub(crate) shuffle: bool,
    /// θ₀: the model's random initialisation or the crafted θ₀ (`--init`).
    pub(crate) init: Init,
    /// `--view final-model`: the adversary sees θ_T only (Distinguisher 1 alone is reported).
    pub(crate) final_model: bool,
}

/// The pool example crafters 1–3 start from: the first example not in D.
const POOL_INDEX: u64 = 0;

/// `--view final-model`: the black-box adversary, who sees the final model θ_T only.
const FINAL_MODEL: &str = "final-model";

impl AuditRun {
    fn to_json(&self) -> Object {
        let mut o = Object::new();
        self.run.write_data(&mut o);
        self.run.write_dpsgd(&mut o);
        match self.epsilon {
            Some(e) => o.num("epsilon", e),
            None => o.put("epsilon", Value::Null),
        };
        o.num("noise_multiplier", self.noise_multiplier)
            .int("trials", self.trials)
            .int("seed", self.seed)
            .int("pool_index", POOL_INDEX)
            .put(
                "crafters",
                Value::Arr(self.crafters.iter().map(|c| Value::Str(c.name())).collect()),
            )
            .str("distinguishers", &self.pairing.name())
            .str("estimator", self.estimator.name())
            .str("threshold_rule", self.rule.name());
        match self.rule {
            ThresholdRule::HeldOut { calibration } => o.int("calibration", calibration),
            _ => o.put("calibration", Value::Null),
        };
        match self.rule {
            ThresholdRule::Fixed(t) => o.num("fixed_threshold", t.tau),
            _ => o.put("fixed_threshold", Value::Null),
        };
        o.num("alpha", self.alpha);
        o.str(
            "adversary_view",
            if self.final_model {
                FINAL_MODEL
            } else {
                self.view.name()
            },
        );
        o.str(
            "trainer_sampling",
            if self.shuffle { "shuffle" } else { "poisson" },
        );
        write_claim(self.claim, &mut o);
        o.str("init", self.init.name());
        o
    }

    fn from_json(o: &Object) -> Result<Self, String> {
        let epsilon = match o.get("epsilon") {
            Some(Value::Null) => None,
            _ => Some(o.get_f64("epsilon")?),
        };
        if o.get_u64("pool_index")? != POOL_INDEX {
            return Err(String::from("another pool_index"));
        }
        let crafters = match o.get("crafters") {
            Some(Value::Arr(items)) => items
                .iter()
                .map(|x| match x {
                    Value::Str(name) => {
                        parse_crafter(name).ok_or_else(|| format!("unknown crafter '{name}'"))
                    }
                    _ => Err(String::from("non-string entry in 'crafters'")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(String::from("missing 'crafters'")),
        };
        let rule = match o.get_str("threshold_rule")? {
            "held-out" => ThresholdRule::HeldOut {
                calibration: o.get_u64("calibration")?,
            },
            "bonferroni" => ThresholdRule::Bonferroni,
            "fixed" => ThresholdRule::Fixed(Threshold::at_least(o.get_f64("fixed_threshold")?)),
            other => return Err(format!("unknown threshold_rule '{other}'")),
        };
        let c = AuditRun {
            run: Training::read(o)?,
            epsilon,
            noise_multiplier: o.get_f64("noise_multiplier")?,
            trials: o.get_u64("trials")?,
            seed: o.get_u64("seed")?,
            crafters,
            pairing: Pairing::parse(o.get_str("distinguishers")?)?,
            estimator: parse_estimator(Some(o.get_str("estimator")?))?,
            rule,
            alpha: o.get_f64("alpha")?,
            view: match o.get_str("adversary_view")? {
                FINAL_MODEL => BatchView::Informed,
                v => {
                    BatchView::from_name(v).ok_or_else(|| String::from("unknown adversary_view"))?
                }
            },
            final_model: o.get_str("adversary_view")? == FINAL_MODEL,
            // Shards written before crafted θ₀ have no key: the random initialisation.
            init: match o.get("init") {
                None => Init::Random,
                Some(Value::Str(v)) => {
                    Init::from_name(v).ok_or_else(|| String::from("unknown init"))?
                }
                Some(_) => return Err(String::from("unknown init")),
            },
            claim: read_claim(o)?,
            // Shards written before shuffled audits have no key: Poisson.
            shuffle: match o.get("trainer_sampling") {
                None => false,
                Some(Value::Str(v)) if v == "poisson" => false,
                Some(Value::Str(v)) if v == "shuffle" => true,
                Some(_) => return Err(String::from("unknown trainer_sampling")),
            },
        };
        c.check()?;
        Ok(c)
    }

    /// The configuration checked as `audit` checks its flags once they are read (the
    /// training's own values are [`parse_run_flags`]'s to check).
    pub(crate) fn checked(self) -> Result<Self, Failure> {
        self.check().map_err(usage)?;
        Ok(self)
    }

    /// The limits every configuration (parsed or read from a shard header) must meet.
    fn check(&self) -> Result<(), String> {
        let trials = self.trials;
        check_size(self.crafters.len() as u64, "--crafter", "crafters", trials)?;
        if let ThresholdRule::HeldOut { calibration } = self.rule {
            if trials < 2 {
                return Err(format!(
                    "--trials = {trials} is out of range: must be >= 2 with --threshold held-out (calibration trials and scored trials)"
                ));
            }
            if !(1..trials).contains(&calibration) {
                return Err(format!(
                    "--calibration = {calibration} is out of range: must be in 1..={} (--trials - 1: trials below it choose the threshold, the others are scored)",
                    trials.saturating_sub(1)
                ));
            }
        }
        if let ThresholdRule::Fixed(t) = self.rule {
            if !t.tau.is_finite() {
                return Err(format!(
                    "--threshold = {} is out of range: must be held-out, bonferroni or a finite number",
                    shown(t.tau)
                ));
            }
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!(
                "--alpha = {} is out of range: must be in (0, 1)",
                shown(self.alpha)
            ));
        }
        if !(self.noise_multiplier > 0.0 && self.noise_multiplier.is_finite()) {
            return Err(format!(
                "--noise-multiplier = {} is out of range: must be finite and > 0",
                shown(self.noise_multiplier)
            ));
        }
        if self.estimator == Estimator::Gdp
            && self.claim != Claim::Trainer
            && self.gdp_mu_claimed().is_none()
        {
            return Err(String::from(
                "flag '--claimed-noise-multiplier' applies with '--estimator gdp' only on the full batch (--sampling-rate 1), whose claimed curve is Gaussian; --claimed-epsilon not at all (a GDP estimate is no lower bound on ε)",
            ));
        }
        check_claim(self.claim)?;
        self.check_black_box()?;
        if self.shuffle {
            self.check_shuffle()?;
        }
        Ok(())
    }

    /// What `--init crafted` and `--view final-model` need (the core refuses the same
    /// crafters for a crafted θ₀, naming `init`).
    fn check_black_box(&self) -> Result<(), String> {
        if matches!(self.init, Init::Crafted(_)) {
            if let Some(c) = self
                .crafters
                .iter()
                .find(|c| c.freezes_parameters() || matches!(c, Crafter::Gradient(_)))
            {
                return Err(format!(
                    "flag '--crafter': {} does not apply with '--init crafted' (the crafted θ₀ is for a canary the trainer receives as an example: example, mislabelled, clipbkd, adaptive; crafter 5 freezes the parameters at θ₀ and gradient canaries insert no example)",
                    c.name()
                ));
            }
        }
        if !self.final_model {
            return Ok(());
        }
        if let Some(c) = self
            .crafters
            .iter()
            .find(|c| c.freezes_parameters() || matches!(c, Crafter::Adaptive))
        {
            return Err(format!(
                "flag '--crafter': {} does not apply with '--view final-model' (the adaptive canary is re-crafted from every θ_t, and crafter 5 keeps θ_T = θ₀: only the released gradients would show it)",
                c.name()
            ));
        }
        let reads_more = match &self.pairing {
            Pairing::List(l) => l
                .iter()
                .find(|d| **d != Distinguisher::FinalLoss)
                .map(|d| format!("{} ({})", d.number(), d.name())),
            Pairing::All | Pairing::Paired => Some(self.pairing.name()),
        };
        match reads_more {
            Some(d) => Err(format!(
                "flag '--distinguisher': {d} does not apply with '--view final-model', which releases θ_T only (2 reads the intermediate models, 3 the released gradients): only 1, final-loss (θ_T and the public θ₀)"
            )),
            None => Ok(()),
        }
    }

    /// What `--sampling shuffle` needs (the core checks the same, naming its parameters).
    fn check_shuffle(&self) -> Result<(), String> {
        if self.run.sampling_rate >= 1.0 {
            return Err(String::from(
                "--sampling shuffle needs --sampling-rate below 1 (the full batch has nothing to shuffle)",
            ));
        }
        if let Some(c) = self.crafters.iter().find(|c| !c.freezes_parameters()) {
            return Err(format!(
                "flag '--crafter': {} does not apply with '--sampling shuffle' (only dataset-dirac, dataset-spread-K, dataset-opposed: learning rate 0, the releases exactly the shuffled mechanism's)",
                c.name()
            ));
        }
        if self.view != BatchView::ExpectedBatch {
            return Err(String::from(
                "--view informed does not apply with '--sampling shuffle': D's batches would show which batch holds the canary's slot, which the shuffled mechanism does not release",
            ));
        }
        let slots = self.run.train_size + 1;
        let per_epoch = slots / self.run.batch_size.max(1);
        if self.run.batch_size == 0 || slots % self.run.batch_size != 0 {
            return Err(format!(
                "--sampling-rate = {} is out of range with '--sampling shuffle': B = {} must divide --train-size + 1 = {slots} (every slot in a batch each epoch)",
                shown(self.run.sampling_rate),
                self.run.batch_size
            ));
        }
        if self.run.steps % per_epoch != 0 {
            return Err(format!(
                "--steps = {} is out of range with '--sampling shuffle': must be a multiple of (--train-size + 1)/B = {per_epoch} (whole epochs)",
                self.run.steps
            ));
        }
        Ok(())
    }

    /// The lower bound on the shuffled mechanism's ε at the trainer's σ (`None` unless the
    /// trainer shuffles; the configuration was checked).
    fn shuffle_lower(&self) -> Result<Option<f64>, Failure> {
        if !self.shuffle {
            return Ok(None);
        }
        let per_epoch = (self.run.train_size + 1) / self.run.batch_size.max(1);
        let b = reconbound::accounting::shuffle_lower::epsilon_lower_bound(
            self.noise_multiplier,
            per_epoch,
            self.run.steps / per_epoch.max(1),
            self.run.delta,
        )?;
        Ok(Some(b.epsilon))
    }

    /// The claimed curve's μ when it is Gaussian and the estimator is GDP (the full batch).
    fn gdp_mu_claimed(&self) -> Option<f64> {
        if self.estimator != Estimator::Gdp {
            return None;
        }
        claim::claimed_gdp_mu(
            self.claim,
            self.noise_multiplier,
            self.run.sampling_rate,
            self.run.steps,
        )
    }

    /// The verdict on the claim and each row's part in it: the core's
    /// [`claim::audit_verdict`] of the rows' estimates.
    fn verdict(&self, upper: f64, rows: &[Row]) -> (Verdict, Vec<Option<bool>>) {
        let estimates: Vec<claim::RowEstimate> = rows
            .iter()
            .map(|r| claim::RowEstimate {
                epsilon: r.e.epsilon,
                mu: r.e.mu,
            })
            .collect();
        claim::audit_verdict(
            self.claim,
            self.noise_multiplier,
            self.run.sampling_rate,
            self.run.steps,
            upper,
            &estimates,
            self.alpha,
            self.estimator == Estimator::Gdp,
        )
    }

    /// The table rows: (crafter index, distinguisher), crafters in order.
    fn rows(&self) -> Vec<(usize, Distinguisher)> {
        self.crafters
            .iter()
            .enumerate()
            .flat_map(|(j, &c)| self.pairing.for_crafter(c).into_iter().map(move |d| (j, d)))
            .collect()
    }

    /// The trainer's configuration of every trial (crafter 5 sets its learning rate to 0).
    fn audit_config(&self) -> AuditConfig {
        let mut dpsgd = self.run.dpsgd(self.noise_multiplier);
        if self.shuffle {
            dpsgd.sampling = reconbound::train::sampling::Sampling::Shuffle;
        }
        AuditConfig {
            dpsgd,
            init_seed: self.seed,
            pool_index: POOL_INDEX as usize,
            adaptive: AdaptiveConfig::default(),
            view: self.view,
        }
    }
}

/// A world's scores as the shard line's array (the order of [`Distinguisher::KINDS`]).
fn scores_json(s: &WorldScores) -> Value {
    named_json(&named_scores(s), Value::Num)
}

/// The scores of world `key` of a shard line.
fn read_scores(o: &Object, key: &str) -> Result<WorldScores, String> {
    let n: Named<Distinguisher, f64, 4> = read_named(o, key, "numbers", Value::as_f64)?;
    Ok(*n.values())
}

impl ShardedRun for AuditRun {
    type Outcome = AuditOutcome;
    type Scores = Distinguisher;
    const KIND: &'static str = SHARD_KIND;

    fn to_json(&self) -> Object {
        AuditRun::to_json(self)
    }

    fn from_json(o: &Object) -> Result<Self, String> {
        AuditRun::from_json(o)
    }

    fn groups(&self) -> usize {
        self.crafters.len()
    }

    fn trials(&self) -> u64 {
        self.trials
    }

    fn group_name(&self, group: usize) -> String {
        match self.crafters.get(group) {
            Some(c) => format!("crafter {}", c.name()),
            None => format!("crafter {group}"),
        }
    }

    fn write_line(&self, group: usize, o: &AuditOutcome) -> Object {
        let mut line = Object::new();
        line.str(
            "crafter",
            &self
                .crafters
                .get(group)
                .map_or_else(String::new, |c| c.name()),
        )
        .int("trial", o.trial)
        .put("without", scores_json(&o.without))
        .put("with", scores_json(&o.with))
        .int("canary_steps", o.canary_steps);
        line
    }

    fn read_line(&self, o: &Object) -> Result<(usize, u64, AuditOutcome), String> {
        let name = match o.get("crafter") {
            Some(Value::Str(n)) => n,
            _ => return Err(String::from("missing crafter")),
        };
        let group = self
            .crafters
            .iter()
            .position(|c| c.name() == *name)
            .ok_or_else(|| format!("crafter '{name}' is not in the configuration"))?;
        let int = |key: &str| o.get(key).and_then(Value::as_u64);
        let (Some(trial), Some(canary_steps)) = (int("trial"), int("canary_steps")) else {
            return Err(String::from("missing trial or canary_steps"));
        };
        if canary_steps > self.run.steps {
            return Err(String::from("canary_steps > steps"));
        }
        let outcome = AuditOutcome {
            trial,
            without: read_scores(o, "without")?,
            with: read_scores(o, "with")?,
            canary_steps,
        };
        Ok((group, trial, outcome))
    }
}

/// The flags of `audit` that are not [`parse_run_flags`]'s.
fn parse_audit(f: &Flags) -> Result<AuditRun, Failure> {
    let r = parse_run_flags(
        f,
        &RunDefaults {
            train_size: defaults::TRAIN_SIZE,
            lr: run_defaults::LR,
            trials: defaults::TRIALS,
            delta_with_sigma: true,
        },
    )?;
    let (epsilon, noise_multiplier) = r.single("audit")?;
    let crafters = parse_crafters(f.raw("crafter").unwrap_or("all")).map_err(usage)?;
    let pairing = Pairing::parse(f.raw("distinguisher").unwrap_or("paired")).map_err(usage)?;
    let estimator = parse_estimator(f.raw("estimator")).map_err(usage)?;
    let rule = match f.raw("threshold").map(str::trim) {
        None | Some("held-out") => ThresholdRule::HeldOut {
            calibration: f
                .u64("calibration")?
                .unwrap_or(default_calibration(r.trials)),
        },
        Some("bonferroni") => ThresholdRule::Bonferroni,
        Some(_) => match f.f64("threshold") {
            Ok(Some(tau)) => ThresholdRule::Fixed(Threshold::at_least(tau)),
            _ => {
                return Err(usage(format!(
                    "flag '--threshold': '{}' is not held-out, bonferroni or a number",
                    f.raw("threshold")
                        .unwrap_or_default()
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(30)
                        .collect::<String>()
                )))
            }
        },
    };
    if f.has("calibration") && !matches!(rule, ThresholdRule::HeldOut { .. }) {
        return Err(usage(String::from(
            "flag '--calibration' applies only with '--threshold held-out'",
        )));
    }
    let claim = parse_claim(f, estimator == Estimator::Gdp)?;
    let shuffle = match f.raw("sampling").map(str::trim) {
        None | Some("poisson") => false,
        Some("shuffle") => true,
        Some(other) => {
            return Err(usage(format!(
                "flag '--sampling': '{}' is not one of poisson, shuffle",
                super::args::printable(other)
            )))
        }
    };
    let final_model = f.raw("view").map(str::trim) == Some(FINAL_MODEL);
    // Shuffled batches: D's batches stay secret (the default view there). The final-model
    // view reports no score that reads D's batches (Distinguisher 3 is computed, not shown).
    let view = if final_model {
        BatchView::Informed
    } else if shuffle && !f.has("view") {
        BatchView::ExpectedBatch
    } else {
        parse_view(f).map_err(|e| match e {
            Failure::Usage(UsageError(m)) => usage(m.replace(
                "informed, expected-batch",
                "informed, expected-batch, final-model",
            )),
            other => other,
        })?
    };
    // The final model alone: Distinguisher 1 unless a list is given (checked below).
    let pairing = if final_model && !f.has("distinguisher") {
        Pairing::List(std::vec![Distinguisher::FinalLoss])
    } else {
        pairing
    };
    // and the crafters it can audit unless a list is given (issue 43: the default "all" was
    // refused for crafters the user never named)
    let crafters = if final_model && !f.has("crafter") {
        crafters
            .into_iter()
            .filter(|c| !(c.freezes_parameters() || matches!(c, Crafter::Adaptive)))
            .collect()
    } else {
        crafters
    };
    let init = match f.raw("init").map(str::trim) {
        None => Init::Random,
        Some(v) => Init::from_name(v).ok_or_else(|| {
            usage(format!(
                "flag '--init': '{}' is not one of random, crafted",
                v.chars()
                    .filter(|c| !c.is_control())
                    .take(30)
                    .collect::<String>()
            ))
        })?,
    };
    AuditRun {
        run: r.run,
        epsilon,
        noise_multiplier,
        trials: r.trials,
        seed: r.seed,
        crafters,
        pairing,
        estimator,
        rule,
        alpha: f.f64("alpha")?.unwrap_or(defaults::ALPHA),
        view,
        claim,
        shuffle,
        init,
        final_model,
    }
    .checked()
}

/// The calibration trials of `--threshold held-out` (default): the first half.
pub(crate) fn default_calibration(trials: u64) -> u64 {
    trials / 2
}

/// `reconbound audit …`.
fn audit_flags() -> Vec<Spec> {
    sharded_flags_and(&[
        v("crafter"),
        v("distinguisher"),
        v("estimator"),
        v("threshold"),
        v("calibration"),
        v("alpha"),
        v("canaries"),
        v("guesses"),
        v("view"),
        v("init"),
        v("sampling"),
        v("claimed-noise-multiplier"),
        v("claimed-epsilon"),
    ])
}

pub(crate) fn audit(args: &[String]) -> Out {
    let f = parse(args, &audit_flags())?;
    if f.help {
        return Ok(f.help_text("audit", SHORT_HELP, String::from(HELP)));
    }
    if f.raw("estimator").map(str::trim) == Some("one-run") {
        return super::audit_one_run::one_run(&f);
    }
    for name in ["canaries", "guesses"] {
        if f.has(name) {
            return Err(usage(format!(
                "flag '--{name}' applies only with '--estimator one-run'"
            )));
        }
    }
    let config = parse_audit(&f)?;
    let (sharding, outputs) = parse_sharding(&f)?;
    match run_audit(&config, sharding)? {
        Ran::Shard(lines) => Ok(lines),
        Ran::Whole(summary) => summary.output(&outputs),
    }
}

/// The trials of an audit — one shard of them with `sharding.shard` — after the accountant
/// (a configuration it refuses fails before any training): the shard's JSON lines, or the
/// whole run's summary.
pub(crate) fn run_audit(
    config: &AuditRun,
    sharding: Sharding,
) -> Result<Ran<AuditSummary>, Failure> {
    let (model, all, _) = load_pool(&config.run, 1, "--train-size + 1")?;
    let p = model.num_params();
    for c in &config.crafters {
        if let Crafter::Gradient(GradientShape::Spread(k))
        | Crafter::MaliciousDataset(GradientShape::Spread(k)) = c
        {
            if *k > p {
                return Err(usage(format!(
                    "flag '--crafter': {} is out of range: K must be even, >= 2 and <= {p} (the model's parameters)",
                    c.name()
                )));
            }
        }
    }
    let n = config.run.train_size as usize;
    let data = all.subset(&(0..n).collect::<Vec<_>>())?;
    let pool = all.subset(&(n..all.len()).collect::<Vec<_>>())?;
    let theory = accountant(config)?;
    let audit_config = config.audit_config();
    let mut audits = Vec::with_capacity(config.crafters.len());
    for &c in &config.crafters {
        let a = Audit::with_init(&model, c, &audit_config, config.init, &data, &pool)?;
        if a.sampling_rate().to_bits() != config.run.sampling_rate.to_bits() {
            return Err(Failure::Compute(format!(
                "internal: the audit samples at q = {} but the accountant is run at q = {}",
                a.sampling_rate(),
                config.run.sampling_rate
            )));
        }
        audits.push(a);
    }
    run_groups(
        config,
        "audit",
        &audits,
        sharding,
        |a, i| a.run_trial(config.seed, i),
        |outcomes| AuditSummary::new(config, theory, outcomes),
    )
}

/// `merge` of audit shards: the summary of the unsharded run.
pub(crate) fn merged_summary(
    config: &AuditRun,
    outcomes: Vec<Vec<AuditOutcome>>,
) -> Result<AuditSummary, Failure> {
    AuditSummary::new(config, accountant(config)?, outcomes)
}

/// The accountant's ε for the claim: at S′ with `--claimed-noise-multiplier`, else at the
/// trainer's σ.
fn accountant(c: &AuditRun) -> Result<Theory, Failure> {
    accountant_at(
        c.run.sampling_rate,
        c.claim.accountant_noise_multiplier(c.noise_multiplier),
        c.run.steps,
        c.run.delta,
    )
}

/// One table row.
struct Row {
    crafter: Crafter,
    distinguisher: Distinguisher,
    e: Empirical,
    canary_steps_mean: f64,
}

fn evaluate(c: &AuditRun, outcomes: &[Vec<AuditOutcome>]) -> Result<Vec<Row>, Failure> {
    let mut rows = Vec::new();
    for (j, d) in c.rows() {
        let (Some(&crafter), Some(trials)) = (c.crafters.get(j), outcomes.get(j)) else {
            continue;
        };
        let e = empirical_epsilon(trials, d, c.estimator, c.rule, c.alpha, c.run.delta)?;
        let steps: u64 = trials.iter().map(|o| o.canary_steps).sum();
        rows.push(Row {
            crafter,
            distinguisher: d,
            e,
            canary_steps_mean: steps as f64 / trials.len().max(1) as f64,
        });
    }
    Ok(rows)
}

/// The largest empirical ε the trials can give: every trial the estimate reads classified
/// correctly, at the rule's level per rate.
fn ceiling(c: &AuditRun) -> Result<f64, Failure> {
    let n = match c.rule {
        ThresholdRule::HeldOut { calibration } => c.trials - calibration,
        ThresholdRule::Fixed(_) | ThresholdRule::Bonferroni => c.trials,
    };
    Ok(empirical_epsilon_max(
        c.estimator,
        c.rule,
        n,
        n,
        c.alpha,
        c.run.delta,
    )?)
}

pub(super) fn threshold_text(t: Threshold) -> String {
    let side = match t.direction {
        Direction::AtLeast => "≥",
        Direction::Below => "<",
    };
    format!("{side} {}", sig(t.tau, 4, Side::Nearest))
}

/// The keys of one empirical ε (an `audit` row, the `estimate` object), in this order:
/// `epsilon_empirical`, `gdp_mu`, `threshold`, `threshold_direction`, `candidates`,
/// `negatives`, `false_positives`, `positives`, `false_negatives`, `fpr_upper`, `fnr_upper`.
pub(super) fn empirical_json<'o>(o: &'o mut Object, e: &Empirical) -> &'o mut Object {
    o.num("epsilon_empirical", e.epsilon);
    match e.mu {
        Some(mu) => o.num("gdp_mu", mu),
        None => o.put("gdp_mu", Value::Null),
    };
    o.num("threshold", e.threshold.tau)
        .str("threshold_direction", direction_name(e.threshold.direction))
        .int("candidates", e.candidates)
        .int("negatives", e.counts.negatives)
        .int("false_positives", e.counts.false_positives)
        .int("positives", e.counts.positives)
        .int("false_negatives", e.counts.false_negatives)
        .num("fpr_upper", e.fpr_upper)
        .num("fnr_upper", e.fnr_upper)
}

pub(super) fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::AtLeast => "at-least",
        Direction::Below => "below",
    }
}

/// The summary of an audit: each row's empirical ε (crafter × distinguisher) beside the
/// accountant's ε, with the trials' outcomes (the `--csv` table). `audit` prints it by
/// [`AuditSummary::output`] (`--json`: [`AuditSummary::to_json`]).
pub(crate) struct AuditSummary {
    config: AuditRun,
    theory: Theory,
    outcomes: Vec<Vec<AuditOutcome>>,
    rows: Vec<Row>,
    /// The largest empirical ε the trials can give ([`ceiling`]).
    max: f64,
    /// The lower bound on the shuffled mechanism's ε (`--sampling shuffle`).
    shuffle_lower: Option<f64>,
}

impl AuditSummary {
    /// The rows of the outcomes of every crafter (in trial order), beside `theory`.
    fn new(
        c: &AuditRun,
        theory: Theory,
        outcomes: Vec<Vec<AuditOutcome>>,
    ) -> Result<Self, Failure> {
        let rows = evaluate(c, &outcomes)?;
        let max = ceiling(c)?;
        Ok(AuditSummary {
            config: c.clone(),
            theory,
            outcomes,
            rows,
            max,
            shuffle_lower: c.shuffle_lower()?,
        })
    }

    /// The empirical ε of an audit of one row.
    pub(crate) fn epsilon_empirical(&self) -> Option<f64> {
        match self.rows.as_slice() {
            [r] => Some(r.e.epsilon),
            _ => None,
        }
    }

    /// The largest empirical ε the trials can give.
    pub(crate) fn epsilon_empirical_max(&self) -> f64 {
        self.max
    }

    /// The empirical trade-off point of an audit of one row: (FPR̄, 1 − FN̄R̄), the upper
    /// confidence limit of the false-positive rate and the lower one of the true-positive
    /// rate, which hold together at the audit's confidence (its two limits split α). An
    /// f-DP mechanism has TPR ≤ 1 − f(FPR) with f decreasing, so this corner lies under the
    /// certified curve 1 − f unless the claim is wrong (or the 1 − α event failed).
    pub(crate) fn tradeoff_corner(&self) -> Option<(f64, f64)> {
        match self.rows.as_slice() {
            [r] => Some((r.e.fpr_upper, 1.0 - r.e.fnr_upper)),
            _ => None,
        }
    }

    /// Writes the files of `outputs` (`--csv`, `--plot`) and returns what the command prints.
    pub(crate) fn output(&self, outputs: &OutputOptions) -> Out {
        let (c, theory) = (&self.config, &self.theory);
        if let Some(path) = &outputs.csv {
            write_whole("csv", path, &csv(c, &self.outcomes))?;
        }
        if let Some(path) = &outputs.plot {
            write_whole("plot", path, &plot(c, theory, &self.rows, self.max))?;
        }
        if outputs.json {
            return Ok(line(&self.to_json()));
        }
        Ok(table(c, theory, &self.rows, self.max, self.shuffle_lower))
    }

    /// The object `audit --json` prints.
    pub(crate) fn to_json(&self) -> Object {
        let (c, theory) = (&self.config, &self.theory);
        let upper = theory.upper();
        let mut o = Object::new();
        o.str("command", "audit");
        for (k, val) in c.to_json().entries() {
            o.put(k, val.clone());
        }
        o.num("confidence", 1.0 - c.alpha);
        write_theory(theory, &mut o);
        o.num("epsilon_empirical_max", self.max);
        match self.shuffle_lower {
            Some(v) => o.num("shuffle_epsilon_lower", v),
            None => o.put("shuffle_epsilon_lower", Value::Null),
        };
        // A GDP estimate is no lower bound on ε: under Poisson sampling it refutes nothing
        // and the verdicts are null; on the full batch its μ̂ refutes a Gaussian claimed curve.
        let (v, refutes) = c.verdict(upper, &self.rows);
        write_claim_verdict(&mut o, &v);
        let arr: Vec<Object> = self
            .rows
            .iter()
            .zip(refutes)
            .map(|(r, refutes)| {
                let mut ro = Object::new();
                let e = &r.e;
                ro.str("crafter", &r.crafter.name())
                    .int("crafter_number", u64::from(r.crafter.number()))
                    .str("distinguisher", r.distinguisher.name())
                    .int("distinguisher_number", u64::from(r.distinguisher.number()));
                empirical_json(&mut ro, e)
                    .num("canary_steps_mean", r.canary_steps_mean)
                    .put("above_pld", Value::Bool(e.epsilon > upper))
                    .put("refutes_claim", refutes.map_or(Value::Null, Value::Bool));
                ro
            })
            .collect();
        with_items(o, "rows", arr)
    }
}

fn table(
    c: &AuditRun,
    theory: &Theory,
    rows: &[Row],
    max: f64,
    shuffle_lower: Option<f64>,
) -> String {
    let mut t = String::new();
    t.push_str(
        "privacy audit (Nasr, Song, Thakurta, Papernot, Carlini 2021) of the crate's DP-SGD\n",
    );
    t.push_str(&format!(
        "  model {} on {}, |D| = {} (+ the canary), lr = {}\n",
        c.run.model_label(),
        c.run.data,
        c.run.train_size,
        shown(c.run.lr)
    ));
    t.push_str(&format!(
        "  {}, σ = {}{}, T = {}, C = {}\n  δ = {}, α = {}, {} trials per world, seed {}\n",
        if c.shuffle {
            format!(
                "SHUFFLED batches of B = {} (the claim: Poisson q = {})",
                c.run.batch_size,
                shown(c.run.sampling_rate)
            )
        } else {
            c.run.batch_label()
        },
        sig(c.noise_multiplier, 6, Side::Nearest),
        c.epsilon.map_or(String::new(), |e| format!(
            " (calibrated to ε = {} by RDP)",
            shown(e)
        )),
        c.run.steps,
        shown(c.run.clip),
        shown(c.run.delta),
        shown(c.alpha),
        c.trials,
        c.seed
    ));
    if c.final_model {
        t.push_str("  adversary view final-model (black box): the final model θ_T only — no intermediate model, no\n    released gradient; Distinguisher 1 reads θ_T and the public θ₀\n");
    } else if c.shuffle {
        t.push_str("  adversary view expected-batch (Distinguisher 3): K = B × the mean of D's projections (D known, its\n    batches secret: under shuffling they would show the canary's slot); the shuffled pair's likelihood ratio\n");
    } else {
        t.push_str(&view_line(c.view, c.run.sampling_rate == 1.0));
    }
    if let Init::Crafted(k) = c.init {
        t.push_str(&format!(
            "  θ₀ crafted (Annamalai & De Cristofaro 2024): the seed's initialisation pre-trained on D without noise\n    ({} full-batch steps of clipped gradient descent at lr {}), so D's clipped gradients at θ₀ nearly cancel\n",
            k.steps,
            shown(k.learning_rate)
        ));
    }
    t.push_str(&claim_line(c.claim, c.noise_multiplier));
    t.push_str(&theory_line(theory));
    if let Some(lower) = shuffle_lower {
        t.push_str(&format!(
            "  the trainer SHUFFLES (B = {}, {} batches per epoch) while the accountant above is Poisson's at the same q —
  the pitfall of Chua et al. 2024: the shuffled mechanism's ε ≥ {} at δ = {} (their instance, max test),
  so the Poisson ε is no guarantee for this trainer\n",
            c.run.batch_size,
            (c.run.train_size + 1) / c.run.batch_size.max(1),
            sig(lower, 4, Side::Down),
            shown(c.run.delta)
        ));
    }
    let gdp = c.estimator == Estimator::Gdp;
    let level = format!("{} %", shown(100.0 * (1.0 - c.alpha)));
    let threat = |r: &Row| {
        format!(
            "{} {} / {} {}",
            r.crafter.number(),
            r.crafter.name(),
            r.distinguisher.number(),
            r.distinguisher.name()
        )
    };
    let head = "threat model (crafter / distinguisher)";
    let w = rows
        .iter()
        .map(|r| threat(r).chars().count())
        .chain([head.chars().count()])
        .max()
        .unwrap_or(0);
    t.push_str(&format!(
        "  {:<w$}  {:>14}  {:>9}  {:>9}  {:>7}  {:>7}  {:>11}  {:>7}\n",
        head,
        format!("τ ({})", c.rule.name()),
        "FP/N₀",
        "FN/N₁",
        "FPR ≤",
        "FNR ≤",
        if gdp {
            String::from("ε GDP est.")
        } else {
            format!("ε ≥ ({level})")
        },
        "ε PLD"
    ));
    let upper = theory.upper();
    let (v, refutes) = c.verdict(upper, rows);
    let explicit = c.claim != Claim::Trainer;
    let mut above = 0usize;
    for (r, refutes) in rows.iter().zip(refutes) {
        let e = &r.e;
        let flag = if explicit {
            if refutes == Some(true) {
                "  REFUTES"
            } else {
                ""
            }
        } else if e.epsilon > upper {
            above += 1;
            above_flag(gdp)
        } else {
            ""
        };
        t.push_str(&format!(
            "  {:<w$}  {:>14}  {:>9}  {:>9}  {:>7}  {:>7}  {:>11}  {:>7}{flag}\n",
            threat(r),
            threshold_text(e.threshold),
            format!("{}/{}", e.counts.false_positives, e.counts.negatives),
            format!("{}/{}", e.counts.false_negatives, e.counts.positives),
            sig(e.fpr_upper, 3, Side::Up),
            sig(e.fnr_upper, 3, Side::Up),
            sig(e.epsilon, 4, if gdp { Side::Nearest } else { Side::Down }),
            sig(upper, 4, Side::Up),
        ));
    }
    t.push('\n');
    let verdict = verdict_text(c.claim, &v, c.alpha);
    let per_rate = match c.rule {
        ThresholdRule::HeldOut { calibration } => format!(
            "  τ (held-out): each row's best Clopper–Pearson rule on the calibration trials 0..{}, which\n    the estimate never reads, applied to trials {}..{}, which alone give the counts;\n    FPR, FNR ≤: one-sided Clopper–Pearson limits at α/2 per rate.\n",
            calibration - 1,
            calibration,
            c.trials - 1
        ),
        ThresholdRule::Bonferroni => format!(
            "  τ (bonferroni): searched on all trials and paid for by Bonferroni over\n    K = 2(N₀ + N₁ − 1) = {} candidate rules per row: FPR, FNR ≤ are one-sided limits at α/(2K).\n",
            bonferroni_candidates(c.trials, c.trials)
        ),
        ThresholdRule::Fixed(tau) => format!(
            "  τ (fixed): {} for every row, fixed before the trials (score ≥ τ guesses 'in'; scores are\n    −(loss − loss at θ₀) for distinguishers 1–2, the log-likelihood ratio for 3); FPR, FNR ≤ at α/2 per rate.\n",
            shown(tau.tau)
        ),
    };
    t.push_str(&per_rate);
    if gdp {
        t.push_str(&format!(
            "  ε GDP est.: μ̂ = max(Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄), 0), then the ε of μ̂-GDP at δ (Nasr et al. 2023):\n    a lower bound only if the trade-off curve is Gaussian. At most {} with these trials.\n",
            sig(max, 4, Side::Nearest)
        ));
    } else {
        t.push_str(&format!(
            "  ε ≥: Clopper–Pearson lower bound with δ (Nasr et al. Eqs. 4–5), with probability ≥ {level}\n    per row; at most {} with these trials (no error at all).\n",
            sig(max, 4, Side::Nearest)
        ));
    }
    if above > 0 && shuffle_lower.is_some() {
        t.push_str(&format!(
            "\n  {above} row(s) above the Poisson accountant's ε: the shuffled trainer is not as private as its Poisson\n    claim (the pitfall, shown with probability ≥ 1 − α per row; the shuffled mechanism's own ε is not\n    certified by the crate — only bounded below, above)\n"
        ));
    } else if above > 0 {
        t.push_str(&above_note(gdp, above));
    }
    t.push_str(&verdict);
    if let Some(mu_c) = c.gdp_mu_claimed() {
        t.push_str(&format!(
            "  (GDP on the full batch: a row refutes when its μ̂ exceeds the claimed curve's μ = {} — its\n    Clopper–Pearson limits then put the test below that curve, for any mechanism)\n",
            sig(mu_c, 4, Side::Up)
        ));
    }
    t
}

/// The flag after a row whose ε is above the accountant's (PLD) ε.
fn above_flag(gdp: bool) -> &'static str {
    if gdp {
        "  estimate above the accountant"
    } else {
        "  ABOVE"
    }
}

/// The footnote for `above` rows above the accountant's ε. A Clopper–Pearson lower bound
/// there is a bug or an event of probability ≤ α per row; a GDP estimate carries no such
/// guarantee (it assumes a Gaussian trade-off curve and has no confidence level), so its
/// note makes no α claim.
fn above_note(gdp: bool, above: usize) -> String {
    if gdp {
        format!(
            "\n  NOTE: {above} row(s) with a GDP estimate above the accountant's ε. An estimate, not a bound:\n    it has no confidence level; rerun with --estimator cp for a lower bound that can convict.\n"
        )
    } else {
        format!(
            "\n  WARNING: {above} row(s) exceed the accountant's ε — a bug in the accountant, the trainer\n    or the audit (or a chance of at most α per row).\n"
        )
    }
}

fn csv(c: &AuditRun, outcomes: &[Vec<AuditOutcome>]) -> String {
    let columns: Vec<String> = Distinguisher::KINDS.iter().map(|d| d.column()).collect();
    let mut s = format!("crafter,trial,world,{},canary_steps\n", columns.join(","));
    for (crafter, trials) in c.crafters.iter().zip(outcomes) {
        let name = crafter.name();
        for o in trials {
            for (world, scores, steps) in [(0, &o.without, 0), (1, &o.with, o.canary_steps)] {
                let cols: Vec<String> = named_scores(scores)
                    .values()
                    .iter()
                    .map(|&x| json::number(x))
                    .collect();
                s.push_str(&format!(
                    "{name},{},{world},{},{steps}\n",
                    o.trial,
                    cols.join(",")
                ));
            }
        }
    }
    s
}

fn plot(c: &AuditRun, theory: &Theory, rows: &[Row], max: f64) -> String {
    let gdp = c.estimator == Estimator::Gdp;
    let colour = "#4c72b0";
    let bars = rows
        .iter()
        .map(|r| svg::Bar {
            label: format!(
                "{} {}\n{} {}",
                r.crafter.number(),
                r.crafter.name(),
                r.distinguisher.number(),
                r.distinguisher.name()
            ),
            value: r.e.epsilon,
            text: sig(r.e.epsilon, 3, if gdp { Side::Nearest } else { Side::Down }),
            colour,
        })
        .collect();
    let mut levels = Vec::new();
    if let Ok(e) = &theory.pld {
        levels.push(svg::Level {
            label: format!(
                "accountant's ε by PLD (certified upper bound) = {}",
                sig(e.value, 4, Side::Up)
            ),
            value: e.value,
            stroke: svg::CERTIFIED,
        });
    }
    levels.push(svg::Level {
        label: format!(
            "accountant's ε by RDP = {}",
            sig(theory.rdp.epsilon, 4, Side::Up)
        ),
        value: theory.rdp.epsilon,
        stroke: svg::FROM_RDP,
    });
    levels.push(svg::Level {
        label: format!(
            "the most {} trials per world can show (no error) = {}",
            match c.rule {
                ThresholdRule::HeldOut { calibration } => c.trials - calibration,
                _ => c.trials,
            },
            sig(max, 4, Side::Nearest)
        ),
        value: max,
        stroke: svg::REFERENCE,
    });
    let subtitle = format!(
        "{}, |D| = {}, {}, σ = {}, T = {}, C = {}, δ = {}, {} trials per world, {} threshold, seed {}",
        c.run.model,
        c.run.train_size,
        c.run.sampling_label(),
        sig(c.noise_multiplier, 4, Side::Nearest),
        c.run.steps,
        shown(c.run.clip),
        shown(c.run.delta),
        c.trials,
        c.rule.name(),
        c.seed
    );
    let series_label = if gdp {
        String::from("empirical ε: GDP estimate (Nasr et al. 2023; assumes a Gaussian trade-off)")
    } else {
        format!(
            "empirical ε: Clopper–Pearson lower bound at {} % confidence (Nasr et al. Eqs. 4–5)",
            shown(100.0 * (1.0 - c.alpha))
        )
    };
    svg::bar_chart_svg(&svg::BarChart {
        titles: svg::Titles {
            title:
                "Privacy audit: empirical ε against the accountant's ε (Nasr et al. 2021, Fig. 1)",
            subtitle: &subtitle,
            x_label: "threat model (crafter / distinguisher)",
            y_label: "ε",
        },
        bars,
        series: std::vec![(series_label, colour)],
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crafter_names_parse_back() {
        for c in Crafter::TABLE_ONE
            .into_iter()
            .chain([Crafter::Gradient(GradientShape::Spread(8))])
            .chain([Crafter::MaliciousDataset(GradientShape::Spread(2))])
        {
            assert_eq!(parse_crafter(&c.name()), Some(c));
        }
        for bad in [
            "6",
            "gradient-spread-3",
            "gradient-spread-0",
            "dataset-spread-",
            "",
        ] {
            assert_eq!(parse_crafter(bad), None, "{bad}");
        }
        assert!(parse_crafters("1,example").is_err());
        assert_eq!(parse_crafters("all").unwrap().len(), 6);
    }

    #[test]
    fn gdp_row_above_the_accountant_is_an_estimate_without_an_alpha_claim() {
        assert_eq!(above_flag(true), "  estimate above the accountant");
        let gdp = above_note(true, 2);
        assert!(gdp.contains("2 row(s) with a GDP estimate above"), "{gdp}");
        assert!(gdp.contains("not a bound"), "{gdp}");
        assert!(!gdp.contains("chance"), "{gdp}");
        assert!(!gdp.contains("bug"), "{gdp}");
        assert_eq!(above_flag(false), "  ABOVE");
        let cp = above_note(false, 1);
        assert!(cp.contains("chance of at most α per row"), "{cp}");
    }

    fn parsed(args: &[&str]) -> AuditRun {
        let args: Vec<String> = args.iter().map(|a| String::from(*a)).collect();
        match parse_audit(&parse(&args, &audit_flags()).unwrap()) {
            Ok(c) => c,
            Err(_) => panic!("{args:?} refused"),
        }
    }

    #[test]
    fn init_and_the_final_model_view_round_trip_and_an_old_header_reads_as_random() {
        let c = parsed(&[
            "--init",
            "crafted",
            "--view",
            "final-model",
            "--crafter",
            "2",
        ]);
        assert_eq!(c.init.name(), "crafted");
        assert!(c.final_model);
        assert_eq!(
            c.pairing,
            Pairing::List(std::vec![Distinguisher::FinalLoss])
        );
        assert_eq!(AuditRun::from_json(&c.to_json()).unwrap(), c);
        let default = parsed(&[]);
        assert_eq!((default.init, default.final_model), (Init::Random, false));
        let mut old = Object::new();
        for (k, v) in default.to_json().entries() {
            if k != "init" {
                old.put(k, v.clone());
            }
        }
        assert_ne!(old.entries().len(), default.to_json().entries().len());
        assert_eq!(AuditRun::from_json(&old).unwrap(), default);
        let mut bad = Object::new();
        for (k, v) in default.to_json().entries() {
            let v = if k == "init" {
                Value::Str(String::from("pretrained"))
            } else {
                v.clone()
            };
            bad.put(k, v);
        }
        assert!(AuditRun::from_json(&bad).is_err());
    }

    #[test]
    fn pairings_parse_back_and_follow_table_one() {
        for raw in ["paired", "all", "1,2,3", "2-max,gradient"] {
            let p = Pairing::parse(raw).unwrap();
            assert_eq!(Pairing::parse(&p.name()).unwrap(), p, "{raw}");
        }
        assert!(Pairing::parse("2,2-mean").is_err());
        assert!(Pairing::parse("1,paired").is_err());
        let p = Pairing::Paired;
        assert_eq!(
            p.for_crafter(Crafter::Example),
            [Distinguisher::FinalLoss, Distinguisher::MeanLoss]
        );
        assert_eq!(p.for_crafter(Crafter::Adaptive), [Distinguisher::MeanLoss]);
        assert_eq!(
            p.for_crafter(Crafter::MaliciousDataset(GradientShape::Dirac)),
            [Distinguisher::GradientTest]
        );
    }
}
