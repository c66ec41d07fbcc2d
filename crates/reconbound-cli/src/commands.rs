//! The subcommands: parse flags, call the library, render a table or one JSON object.

use super::args::{parse, switch, value as v, Flags, Spec, UsageError};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{Object, Value};
use super::schedule::{self as sched, PHASE, SCHEDULE};
use reconbound::accounting::calibrate::{self, Calibrated, Target};
use reconbound::accounting::run::{self, Run};
use reconbound::accounting::schedule::Schedule;
use reconbound::accounting::{fano, guarantees, pld, prior, rdp, rero};
use reconbound::Error;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

type Out = Result<String, Failure>;

const JSON: Spec = switch("json");

/// The documented default configuration of `reconbound bound`: DP-SGD on MNIST as in
/// Abadi et al. 2016 (batch 256 of 60,000, σ = 1.1, 60 epochs → 14,063 steps), δ = 1e-5,
/// a uniform prior over 10 candidates (κ = 0.1), data in [0, 1]^d.
pub(crate) mod defaults {
    /// σ.
    pub const NOISE_MULTIPLIER: f64 = 1.1;
    /// B.
    pub const BATCH_SIZE: u64 = 256;
    /// N.
    pub const DATASET_SIZE: u64 = 60_000;
    /// Epochs.
    pub const EPOCHS: f64 = 60.0;
    /// δ.
    pub const DELTA: f64 = 1e-5;
    /// m.
    pub const PRIOR_SIZE: u64 = 10;
    /// Per-coordinate diameter.
    pub const DIAMETER: f64 = 1.0;
    /// Δ² of `fano`: orthonormal candidate means, as in Hayes et al. Table 2.
    pub const SENSITIVITY_SQ: f64 = 2.0;
    /// Δ² of the Fano line of `bound`: the worst case ‖g_i − g_j‖² ≤ (2C)² for clipped
    /// gradients of two candidates, in units of C.
    pub const WORST_CASE_SENSITIVITY_SQ: f64 = 4.0;
}

const BOUND_HELP: &str = "\
usage: reconbound bound [--noise-multiplier S] [--sampling-rate Q | --batch-size B --dataset-size N]
                        [--steps T | --epochs E] [--delta D] [--prior-size M | --kappa K]
                        [--diameter X] [--json]
       reconbound bound (--phase Q,S,T [--phase ...] | --schedule FILE.csv) [--delta D]
                        [--prior-size M | --kappa K] [--diameter X] [--json]

Every guarantee the papers give for one DP-SGD configuration (Poisson sampling at rate q,
noise multiplier σ, T steps): κ; ε(δ) by RDP (improved and Mironov conversions) and by PLD;
ReRo γ by Balle et al. 2022 Thm 2 from RDP, by the optimal RDP → f-DP conversion (Riess et
al. 2026) and by Hayes et al. 2023 (certified numerical composition), and which is the
tightest; the membership risks of the certified trade-off curve (the best attack's TPR at
0.1 %, 1 % and 10 % FPR and its advantage: 'reconbound tradeoff' gives more); the Fano
success bound of Guo et al. 2022b (pairwise KL ≤ qTΔ²/(2σ²) with the
worst case Δ² = 4 for clipped gradients); the Guo et al. 2022 Thm 1 MSE
lower bound for unbiased reconstructions of data with per-coordinate diameter X.

Defaults (DP-SGD on MNIST, Abadi et al. 2016): σ = 1.1, B = 256, N = 60000 (q = B/N),
60 epochs (T = ceil(E/q) = 14063), δ = 1e-5, M = 10 (κ = 1/M), X = 1.

JSON keys: command, noise_multiplier, sampling_rate, steps, delta, kappa, prior_size (with
--prior-size), orders, rdp,
epsilon_rdp, best_order, epsilon_rdp_mironov, best_order_mironov, epsilon_pld,
epsilon_pld_lower, gamma_balle, gamma_balle_order, gamma_rdp, gamma, gamma_lower, method,
tightest (hayes | rdp | balle | fano: the smallest success bound), membership [{fpr, tpr,
tpr_lower}] (or null and membership_note), advantage, advantage_lower, fano_success_bound, fano_advantage, fano_sensitivity_sq, rdp_order2, rdp_order2_substitution,
diameter, mse_lower_bound. When the PLD cannot certify a configuration (e.g. δ = 1e-300, whose
tail no PLD grid holds, or σ so small that the grid would be too large; δ = 1e-200 still
certifies at the defaults), the epsilon_pld / gamma value is null and epsilon_pld_note /
gamma_note says why ('epsilon --accountant pld' exits 1 instead). Two degenerate cases have
closed forms instead: ε = 0 when even ε = 0 meets δ (σ = 1e300), and, for full-batch runs
(q = 1), the Gaussian tail bound μz + μ²/2 with lower end 0.
The MSE bound uses (2, ε)-RDP under substitution (Guo et al. Thm 1 compares D ∪ {z} with
D ∪ {z′}): ε ≤ 1.5·r₄ + r₃ from the add/remove RDP (Mironov 2017 Prop. 11).
For a schedule the RDP curves (orders 3, 4 of the MSE bound too) add over the phases, the
Fano KL bound is Σ_i q_i·T_i·Δ²/(2σ_i²), γ and ε by PLD compose the phases.
";

/// `bound --help` (issue 43: it fits a screen; [`BOUND_HELP`] is `--help-all`).
const BOUND_SHORT_HELP: &str = "\
usage: reconbound bound [--noise-multiplier S] [--sampling-rate Q | --batch-size B --dataset-size N]
                        [--steps T | --epochs E] [--delta D] [--prior-size M | --kappa K]
                        [--diameter X] [--json]
       reconbound bound (--phase Q,S,T [--phase ...] | --schedule FILE.csv | --run FILE)
                        [--delta D] [--prior-size M | --kappa K] [--diameter X] [--json]

How much could an attacker learn about one training example of this DP-SGD run (Poisson
sampling at rate q, noise multiplier σ, T steps)? Every guarantee the papers give: ε(δ) by RDP
and by PLD; the chance γ of reconstructing the example from a prior of M candidates (ReRo:
Balle et al. 2022, Hayes et al. 2023) and which bound is the tightest; the best membership
attack's TPR at 0.1 %, 1 % and 10 % FPR ('reconbound tradeoff' gives more); Fano's success
bound; Guo et al.'s MSE lower bound for unbiased reconstructions.

Common flags (defaults: DP-SGD on MNIST, Abadi et al. 2016):
  --noise-multiplier S          σ [1.1]
  --sampling-rate Q             q, or --batch-size B --dataset-size N for q = B/N [256/60000]
  --steps T | --epochs E        noisy steps, or epochs with T = ⌈E/q⌉ [60 epochs: T = 14063]
  --delta D                     δ of ε(δ) [1e-5]
  --prior-size M | --kappa K    the prior: M candidates (κ = 1/M), or the baseline κ [10]
  --diameter X                  per-coordinate diameter of the data, for the MSE bound [1]
  --phase Q,S,T | --schedule FILE.csv   phases, in order, instead of one (q, σ, T)
  --run FILE                    a run file ('reconbound run --json'; its flags: run --help)
  --json                        every number at full precision, as JSON

Example (the README's MNIST run, trained for 30 epochs instead of 60):
  reconbound bound --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --epochs 30
";

/// The one-phase flags of `bound` (a schedule excludes them).
pub(crate) const BOUND_SINGLE: [&str; 6] = [
    "noise-multiplier",
    "sampling-rate",
    "batch-size",
    "dataset-size",
    "steps",
    "epochs",
];

/// The sampling rate and step count from `--sampling-rate | --batch-size/--dataset-size`
/// and `--steps | --epochs`, with the defaults of `bound` when `defaults` is set.
pub(crate) fn rate_and_steps(f: &Flags, with_defaults: bool) -> Result<(f64, u64), Failure> {
    f.exclusive("sampling-rate", "batch-size")?;
    f.exclusive("sampling-rate", "dataset-size")?;
    f.exclusive("steps", "epochs")?;
    let q = if let Some(q) = f.f64("sampling-rate")? {
        q
    } else if f.has("batch-size") || f.has("dataset-size") || with_defaults {
        let b = f
            .u64("batch-size")?
            .or(with_defaults.then_some(defaults::BATCH_SIZE));
        let n = f
            .u64("dataset-size")?
            .or(with_defaults.then_some(defaults::DATASET_SIZE));
        let (Some(b), Some(n)) = (b, n) else {
            return Err(UsageError(String::from(
                "flags '--batch-size' and '--dataset-size' go together",
            ))
            .into());
        };
        if b == 0 {
            return Err(UsageError(String::from(
                "--batch-size = 0 is out of range: must be >= 1",
            ))
            .into());
        }
        if n < b {
            return Err(UsageError(format!(
                "--dataset-size = {n} is out of range: must be >= --batch-size ({b})"
            ))
            .into());
        }
        b as f64 / n as f64
    } else {
        f.f64_required("sampling-rate")?
    };
    reconbound::error::check_unit_rate("sampling_rate", q)?;
    let steps = if let Some(t) = f.u64("steps")? {
        t
    } else if f.has("epochs") || with_defaults {
        let e = f.f64("epochs")?.unwrap_or(defaults::EPOCHS);
        let e = reconbound::error::check_positive("epochs", e)?;
        let t = libm::ceil(e / q);
        if !(t.is_finite() && t <= 1e15) {
            return Err(UsageError(format!(
                "--epochs = {e} is out of range: gives more than 1e15 steps at this sampling rate"
            ))
            .into());
        }
        t as u64
    } else {
        return Err(UsageError(String::from("flag '--steps' is required")).into());
    };
    reconbound::error::check_steps(steps)?;
    Ok((q, steps))
}

/// κ from `--kappa` or `--prior-size` (uniform prior), or the default prior size.
fn kappa(f: &Flags, default_prior: Option<u64>) -> Result<(f64, Option<u64>), Failure> {
    f.exclusive("kappa", "prior-size")?;
    if let Some(k) = f.f64("kappa")? {
        reconbound::error::check_unit_rate("kappa", k)?;
        return Ok((k, None));
    }
    let m = match (f.u64("prior-size")?, default_prior) {
        (Some(m), _) | (None, Some(m)) => m,
        (None, None) => {
            return Err(UsageError(String::from(
                "one of '--kappa' or '--prior-size' is required",
            ))
            .into())
        }
    };
    Ok((prior::kappa_uniform(m)?, Some(m)))
}

/// A certified bracket (upper value, lower value): the PLD ε estimate or the Hayes γ.
trait Bracket {
    fn upper_lower(&self) -> (f64, f64);
}

impl Bracket for pld::Estimate {
    fn upper_lower(&self) -> (f64, f64) {
        (self.value, self.lower)
    }
}

impl Bracket for rero::dpsgd::GammaBound {
    fn upper_lower(&self) -> (f64, f64) {
        (self.gamma, self.lower)
    }
}

/// `keys[0]`, `keys[1]`: upper and lower value; or `keys[0]: null` and `keys[2]`: the note.
fn put_optional<B: Bracket>(o: &mut Object, r: &Result<B, String>, keys: [&str; 3]) {
    match r {
        Ok(b) => {
            let (up, lo) = b.upper_lower();
            o.num(keys[0], up).num(keys[1], lo);
        }
        Err(note) => {
            o.put(keys[0], Value::Null).str(keys[2], note);
        }
    }
}

fn arr(xs: &[f64]) -> Value {
    Value::Arr(xs.iter().map(|&x| Value::Num(x)).collect())
}

/// One step's RDP at every order, composed over `steps`.
fn rdp_curve(q: f64, sigma: f64, steps: u64, orders: &[f64]) -> Result<Vec<f64>, Failure> {
    Ok(rdp::rdp_curve(q, sigma, steps, orders)?)
}

/// [`guarantees::RdpMse`] of T DP-SGD steps (Poisson rate q, noise multiplier σ): shared by
/// `bound` and `train --fil`.
pub(crate) fn rdp_mse_lower_bound(
    q: f64,
    sigma: f64,
    steps: u64,
    diameter: f64,
) -> Result<guarantees::RdpMse, Failure> {
    let run = Schedule::single(reconbound::accounting::schedule::Phase {
        sampling_rate: q,
        noise_multiplier: sigma,
        steps,
    })?;
    Ok(guarantees::rdp_mse_lower_bound(&run, diameter)?)
}

/// The flags of `bound`.
const BOUND_FLAGS: [Spec; 13] = [
    v("noise-multiplier"),
    v("sampling-rate"),
    v("batch-size"),
    v("dataset-size"),
    v("steps"),
    v("epochs"),
    v("delta"),
    v("prior-size"),
    v("kappa"),
    v("diameter"),
    PHASE,
    SCHEDULE,
    JSON,
];

pub(crate) fn bound(args: &[String]) -> Out {
    let f = parse(args, &BOUND_FLAGS)?;
    if f.help {
        let full = String::from(BOUND_HELP) + "\n" + sched::HELP;
        return Ok(f.help_text("bound", BOUND_SHORT_HELP, full));
    }
    let b = BoundConfig::parse(&f)?.compute()?;
    if f.has("json") {
        return Ok(b.to_json().render() + "\n");
    }
    Ok(b.table())
}

/// A `bound` request, validated: the configuration its guarantees are computed for, and what
/// the table and the JSON say about how it was given.
pub(crate) struct BoundConfig {
    /// The run: one phase, or a schedule.
    pub(crate) schedule: Schedule,
    /// Given as a schedule (`--phase`, `--schedule`): the `phases` form, even for one phase.
    pub(crate) is_schedule: bool,
    /// δ.
    pub(crate) delta: f64,
    /// The prior (with its size when uniform: the Fano bound needs it).
    pub(crate) prior: guarantees::Prior,
    /// The per-coordinate diameter of the data (the MSE bound).
    pub(crate) diameter: f64,
    /// The table's note on q: `batch B of N` when q is B/N of `--batch-size` and
    /// `--dataset-size` (or their defaults), empty otherwise.
    pub(crate) rate_note: String,
}

/// What `bound` prints: the core's guarantees ([`guarantees::guarantees`]) of a
/// [`BoundConfig`], rendered by [`Bound::to_json`] and [`Bound::table`].
pub(crate) struct Bound {
    /// The request.
    pub(crate) config: BoundConfig,
    /// Its guarantees.
    pub(crate) guarantees: guarantees::Guarantees,
}

impl BoundConfig {
    /// The request of `bound`'s flags, checked as they are read.
    fn parse(f: &Flags) -> Result<Self, Failure> {
        let (schedule, is_schedule) = match sched::from_flags(f, &BOUND_SINGLE)? {
            Some(s) => (s, true),
            None => {
                let sigma = f
                    .f64("noise-multiplier")?
                    .unwrap_or(defaults::NOISE_MULTIPLIER);
                reconbound::error::check_positive("noise_multiplier", sigma)?;
                let (q, steps) = rate_and_steps(f, true)?;
                (one_phase(q, sigma, steps)?, false)
            }
        };
        let delta = f.f64("delta")?.unwrap_or(defaults::DELTA);
        reconbound::error::check_open_unit("delta", delta)?;
        let (kappa, prior_size) = kappa(f, Some(defaults::PRIOR_SIZE))?;
        let diameter = f.f64("diameter")?.unwrap_or(defaults::DIAMETER);
        reconbound::error::check_positive("diameter", diameter)?;
        let rate_note = if f.has("sampling-rate") || is_schedule {
            String::new()
        } else {
            let b = f.u64("batch-size")?.unwrap_or(defaults::BATCH_SIZE);
            let n = f.u64("dataset-size")?.unwrap_or(defaults::DATASET_SIZE);
            format!("batch {b} of {n}")
        };
        Ok(BoundConfig {
            schedule,
            is_schedule,
            delta,
            prior: guarantees::Prior {
                kappa,
                size: prior_size,
            },
            diameter,
            rate_note,
        })
    }

    /// `bound --noise-multiplier σ --sampling-rate q --steps T --delta δ --prior-size m`
    /// (data in [0, 1]^d), checked in the order of those flags' own checks.
    pub(crate) fn one_phase(
        sigma: f64,
        q: f64,
        steps: u64,
        delta: f64,
        prior_size: u64,
    ) -> Result<Self, Failure> {
        reconbound::error::check_positive("noise_multiplier", sigma)?;
        reconbound::error::check_unit_rate("sampling_rate", q)?;
        reconbound::error::check_steps(steps)?;
        let schedule = one_phase(q, sigma, steps)?;
        reconbound::error::check_open_unit("delta", delta)?;
        Ok(BoundConfig {
            schedule,
            is_schedule: false,
            delta,
            prior: guarantees::Prior::uniform(prior_size)?,
            diameter: defaults::DIAMETER,
            rate_note: String::new(),
        })
    }

    /// The core's guarantees of the request.
    pub(crate) fn compute(self) -> Result<Bound, Failure> {
        let g = guarantees::guarantees(&self.schedule, self.delta, self.prior, self.diameter)?;
        Ok(Bound {
            config: self,
            guarantees: g,
        })
    }
}

impl Bound {
    /// The object `bound --json` prints (the one-phase keys unless the request was a
    /// schedule).
    pub(crate) fn to_json(&self) -> Object {
        let (c, g) = (&self.config, &self.guarantees);
        let (eps, eps_m, balle) = (g.epsilon_rdp, g.epsilon_rdp_mironov, g.gamma_balle);
        let eps_pld = g.epsilon_pld.as_ref().map_err(|why| why.reason());
        let hayes = g.gamma.as_ref().map_err(|why| why.reason());
        let mut o = Object::new();
        o.str("command", "bound");
        put_config(&mut o, &c.schedule, c.is_schedule);
        o.num("delta", c.delta).num("kappa", g.prior.kappa);
        if let Some(m) = c.prior.size {
            o.int("prior_size", m);
        }
        o.put("orders", arr(&g.orders))
            .put("rdp", arr(&g.rdp))
            .num("epsilon_rdp", eps.epsilon)
            .num("best_order", eps.order)
            .num("epsilon_rdp_mironov", eps_m.epsilon)
            .num("best_order_mironov", eps_m.order)
            .num("gamma_balle", balle.gamma)
            .num("gamma_balle_order", balle.order)
            .num("gamma_rdp", g.gamma_rdp.upper)
            .str("method", "exact");
        put_optional(
            &mut o,
            &eps_pld.cloned(),
            ["epsilon_pld", "epsilon_pld_lower", "epsilon_pld_note"],
        );
        put_optional(
            &mut o,
            &hayes.cloned(),
            ["gamma", "gamma_lower", "gamma_note"],
        );
        o.str("tightest", g.tightest().as_str());
        match &g.membership {
            Ok(m) => {
                let rows = guarantees::MEMBERSHIP_FPRS
                    .iter()
                    .zip(&m.tpr)
                    .map(|(&fpr, t)| {
                        let mut r = Object::new();
                        r.num("fpr", fpr)
                            .num("tpr", t.upper)
                            .num("tpr_lower", t.lower);
                        Value::Obj(r)
                    })
                    .collect();
                o.put("membership", Value::Arr(rows))
                    .num("advantage", m.advantage.upper)
                    .num("advantage_lower", m.advantage.lower);
            }
            Err(why) => {
                o.put("membership", Value::Null)
                    .str("membership_note", &why.reason());
            }
        }
        match g.fano {
            Some(fb) => {
                o.num("fano_success_bound", fb.success_bound)
                    .num("fano_advantage", fb.advantage)
                    .num("fano_sensitivity_sq", defaults::WORST_CASE_SENSITIVITY_SQ);
            }
            None => {
                o.put("fano_success_bound", Value::Null)
                    .str("fano_note", "needs --prior-size (a uniform prior)");
            }
        }
        o.num("rdp_order2", g.mse.rdp2)
            .num("rdp_order2_substitution", g.mse.rdp2_sub)
            .num("diameter", c.diameter)
            .num("mse_lower_bound", g.mse.mse);
        o
    }

    /// The table `bound` prints.
    pub(crate) fn table(&self) -> String {
        let (c, g) = (&self.config, &self.guarantees);
        let mut t = String::new();
        t.push_str(if c.is_schedule {
            "reconbound bound: reconstruction guarantees of a DP-SGD schedule\n\n"
        } else {
            "reconbound bound: reconstruction guarantees of one DP-SGD configuration\n\n"
        });
        t.push_str(&self.headline());
        t.push_str("configuration\n");
        t.push_str(&self.configuration_rows());
        t.push_str(&Self::privacy_rows(g));
        t.push_str(&Self::rero_rows(g));
        t.push_str(&Self::membership_rows(g));
        t.push_str(
            "\nmean squared error of any unbiased reconstruction (lower bound, rounded down)\n",
        );
        row(
            &mut t,
            "MSE ≥",
            &sig(g.mse.mse, 6, Side::Down),
            &format!(
                "Guo et al. 2022 Thm 1: (2, {})-RDP under substitution, diameter {} per coordinate",
                sig(g.mse.rdp2_sub, 4, Side::Up),
                c.diameter
            ),
        );
        t
    }

    /// The answer first (issue 43): the number to quote for reconstruction (the tightest
    /// success bound, named) and for ε(δ) (the smallest upper bound held, named), rounded as
    /// the rows below round them.
    fn headline(&self) -> String {
        let (c, g) = (&self.config, &self.guarantees);
        let who = match c.prior.size {
            Some(m) => format!("that it is one of {m} equally likely candidates"),
            None => format!(
                "a prior whose best blind guess is right with probability κ = {}",
                super::format::plain(c.prior.kappa, 6)
            ),
        };
        let b = g.tightest();
        let success = match g.success_bound(b) {
            // a bound of 1 says nothing: the answer says so
            Some(v) if v < 1.0 => format!(
                "{} with probability ≤ {} ({}, the tightest bound below; a blind guess: {})",
                // exact match for the uniform prior; with --kappa, success is whatever a
                // blind guess achieves with probability κ (ReRo's η-ball)
                if c.prior.size.is_some() {
                    "reconstructs it exactly"
                } else {
                    "reconstructs it as closely as that blind guess must"
                },
                sig(v, 6, Side::Up),
                match b {
                    guarantees::SuccessBound::Hayes => "γ for DP-SGD",
                    guarantees::SuccessBound::RdpOptimal => "γ from RDP, optimal conversion",
                    guarantees::SuccessBound::Balle => "γ from RDP",
                    guarantees::SuccessBound::Fano => "Fano's bound",
                },
                super::format::plain(c.prior.kappa, 6)
            ),
            _ => String::from("may reconstruct it: no bound below is informative (every one is 1)"),
        };
        let (src, eps) = g.tightest_epsilon();
        let by = match src {
            guarantees::EpsilonSource::Pld => "certified PLD",
            guarantees::EpsilonSource::Rdp => "RDP, improved conversion",
            guarantees::EpsilonSource::RdpMironov => "RDP, Mironov's conversion",
        };
        let text = format!(
            "an attacker who knows every other training example and {who} {success}. The run is ({}, {})-DP ({by}, the tightest ε below).",
            sig(eps, 6, Side::Up),
            shown(c.delta)
        );
        super::format::wrap("answer: ", &text, 92) + "\n"
    }

    /// The table's configuration: the phase (or the schedule's phases), δ and κ.
    fn configuration_rows(&self) -> String {
        let c = &self.config;
        let mut t = String::new();
        let prior_note = match c.prior.size {
            Some(m) => format!("uniform prior over {m} candidates, exact match"),
            None => String::from("given with --kappa"),
        };
        let rows: Vec<(&str, String, String)> = match (c.is_schedule, c.schedule.phases()) {
            (false, [p]) => std::vec![
                (
                    "noise multiplier σ",
                    // 6 significant digits, as the page (issue 43: a calibrated σ printed
                    // 2.8517480817685996)
                    super::format::plain(p.noise_multiplier, 6),
                    String::new()
                ),
                if p.sampling_rate >= 1.0 {
                    (
                        "sampling",
                        String::from("full batch"),
                        String::from("every example in every step (q = 1)"),
                    )
                } else {
                    (
                        "sampling rate q (Poisson)",
                        sig(p.sampling_rate, 6, Side::Nearest),
                        c.rate_note.clone(),
                    )
                },
                ("steps T", p.steps.to_string(), String::new()),
            ],
            _ => {
                t.push_str(&sched::phases_text(&c.schedule, false));
                Vec::new()
            }
        };
        for (label, value, note) in rows.iter().chain(
            [
                ("δ", shown(c.delta), String::new()),
                (
                    "baseline κ",
                    super::format::plain(c.prior.kappa, 6),
                    prior_note,
                ),
            ]
            .iter(),
        ) {
            row(&mut t, label, value, note);
        }
        t
    }

    /// The table's ε by RDP (both conversions) and by PLD.
    fn privacy_rows(g: &guarantees::Guarantees) -> String {
        let mut t = String::from("\nprivacy (add/remove adjacency; upper bounds, rounded up)\n");
        let (eps, eps_m) = (g.epsilon_rdp, g.epsilon_rdp_mironov);
        row(
            &mut t,
            "ε(δ) by RDP, improved conversion",
            &sig(eps.epsilon, 6, Side::Up),
            &format!("best order α = {}  [Balle et al. 2020]", order(eps.order)),
        );
        row(
            &mut t,
            "ε(δ) by RDP, Mironov's conversion",
            &sig(eps_m.epsilon, 6, Side::Up),
            &format!("best order α = {}  [Mironov 2017]", order(eps_m.order)),
        );
        match &g.epsilon_pld {
            Ok(p) => row(
                &mut t,
                "ε(δ) by PLD, certified",
                &sig(p.value, 6, Side::Up),
                &format!(
                    "true ε ≥ {} (certified bracket)",
                    sig(p.lower, 6, Side::Down)
                ),
            ),
            Err(why) => row(&mut t, "ε(δ) by PLD, certified", "-", &why.reason()),
        }
        t
    }

    /// The table's γ (Balle et al. from RDP, Hayes et al.) and the Fano bound.
    fn rero_rows(g: &guarantees::Guarantees) -> String {
        let mut t = String::from(
            "\nreconstruction robustness: P[exact reconstruction] ≤ γ (upper bounds, rounded up)\n",
        );
        let balle = g.gamma_balle;
        row(
            &mut t,
            "γ from RDP",
            &sig(balle.gamma, 6, Side::Up),
            &format!("Balle et al. 2022 Thm 2, order α = {}", order(balle.order)),
        );
        row(
            &mut t,
            "γ from RDP, optimal conversion",
            &sig(g.gamma_rdp.upper, 6, Side::Up),
            "Riess et al. 2026: the best any RDP bound gives",
        );
        match &g.gamma {
            Ok(h) => row(
                &mut t,
                "γ for DP-SGD",
                &sig(h.gamma, 6, Side::Up),
                &format!(
                    "Hayes et al. 2023 Thm 2; true γ ≥ {}",
                    sig(h.lower, 6, Side::Down)
                ),
            ),
            Err(why) => row(&mut t, "γ for DP-SGD", "-", &why.reason()),
        }
        match g.fano {
            // a bound of 1 says nothing (not "the attack always wins"): said so
            Some(fb) if fb.success_bound >= 1.0 => row(
                &mut t,
                "success bound by Fano",
                "none",
                "Guo et al. 2022b, Δ² = 4, KL ≤ qTΔ²/(2σ²): no information at this KL (the bound is 1)",
            ),
            Some(fb) => row(
                &mut t,
                "success bound by Fano",
                &sig(fb.success_bound, 6, Side::Up),
                &format!(
                    "Guo et al. 2022b, Δ² = 4, KL ≤ qTΔ²/(2σ²); advantage {}",
                    sig(fb.advantage, 4, Side::Up)
                ),
            ),
            None => row(
                &mut t,
                "success bound by Fano",
                "-",
                "needs --prior-size (a uniform prior)",
            ),
        }
        t.push_str(&format!("  tightest: {}\n", tightest_why(g.tightest())));
        t
    }

    /// The table's membership risks (the certified trade-off curve).
    fn membership_rows(g: &guarantees::Guarantees) -> String {
        let mut t = String::from(
            "\nmembership inference: the best attack (upper bounds; 'reconbound tradeoff' for the curve)\n",
        );
        match &g.membership {
            Ok(m) => {
                for (&fpr, tpr) in guarantees::MEMBERSHIP_FPRS.iter().zip(&m.tpr) {
                    row(
                        &mut t,
                        &format!("TPR at FPR {}", super::format::fpr_label(fpr)),
                        &sig(tpr.upper, 4, Side::Up),
                        &format!("{}× the blind guess", sig(tpr.upper / fpr, 3, Side::Up)),
                    );
                }
                row(
                    &mut t,
                    "advantage max(TPR − FPR)",
                    &sig(m.advantage.upper, 4, Side::Up),
                    "the total variation of the trade-off curve",
                );
            }
            Err(why) => row(&mut t, "TPR at a given FPR", "-", &why.reason()),
        }
        t
    }
}

/// Why the tightest success bound ([`guarantees::Guarantees::tightest`]) is, and the others
/// are looser, in the table's words.
fn tightest_why(b: guarantees::SuccessBound) -> &'static str {
    match b {
        guarantees::SuccessBound::Hayes => {
            "γ for DP-SGD, the exact 1 − f(κ) of this run's trade-off curve;\n            \
             the RDP bounds see only its Rényi moments, Fano only the mutual information"
        }
        guarantees::SuccessBound::RdpOptimal => {
            "γ from RDP by the optimal conversion (Hayes et al.'s γ was not certified here)"
        }
        guarantees::SuccessBound::Balle => "γ from RDP (Balle et al.)",
        guarantees::SuccessBound::Fano => {
            "the Fano bound (the numerical γ was not certified here and the RDP curve is loose)"
        }
    }
}

/// A Rényi order as the table shows it.
fn order(a: f64) -> String {
    sig(a, 4, Side::Nearest)
}

fn row(t: &mut String, label: &str, value: &str, note: &str) {
    let pad = 36usize.saturating_sub(label.chars().count());
    t.push_str("  ");
    t.push_str(label);
    for _ in 0..pad {
        t.push(' ');
    }
    t.push_str(value);
    if !note.is_empty() {
        let pad = 12usize.saturating_sub(value.chars().count());
        for _ in 0..pad {
            t.push(' ');
        }
        t.push_str(note);
    }
    t.push('\n');
}

const RDP_HELP: &str = "\
usage: reconbound rdp --noise-multiplier S --sampling-rate Q --orders A1,A2,... [--steps T] [--json]

Rényi DP of T steps (default 1) of the Poisson-subsampled Gaussian mechanism at each order:
T · ln(E_{x~N(0,σ²)}[((1−q) + q e^{(2x−1)/(2σ²)})^α])/(α−1), exact at integer and fractional
orders (Mironov, Talwar, Zhang 2019).

JSON keys: command, noise_multiplier, sampling_rate, steps, orders, rdp (same order as orders).
";

/// What `rdp --help` adds to [`RDP_HELP`] (issue 43).
const RDP_EXAMPLE: &str = "\
Example (1,000 steps at q = 0.01, σ = 1.1):
  reconbound rdp --noise-multiplier 1.1 --sampling-rate 0.01 --orders 2,4,8,16,32 --steps 1000
";

pub(crate) fn rdp(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("noise-multiplier"),
            v("sampling-rate"),
            v("orders"),
            v("steps"),
            JSON,
        ],
    )?;
    if f.help {
        let short = String::from(RDP_HELP) + "\n" + RDP_EXAMPLE;
        return Ok(f.help_text("rdp", &short, String::from(RDP_HELP)));
    }
    let sigma = f.f64_required("noise-multiplier")?;
    let q = f.f64_required("sampling-rate")?;
    let orders = f
        .f64_list("orders")?
        .ok_or_else(|| UsageError(String::from("flag '--orders' is required")))?;
    let steps = f.u64("steps")?.unwrap_or(1);
    reconbound::error::check_steps(steps)?;
    let curve = rdp_curve(q, sigma, steps, &orders)?;
    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "rdp")
            .num("noise_multiplier", sigma)
            .num("sampling_rate", q)
            .int("steps", steps)
            .put("orders", arr(&orders))
            .put("rdp", arr(&curve));
        return Ok(o.render() + "\n");
    }
    let mut t = format!(
        "Rényi DP of {steps} step(s), σ = {}, q = {} (upper bounds, rounded up)\n",
        shown(sigma),
        shown(q)
    );
    t.push_str("  order α      RDP\n");
    for (a, r) in orders.iter().zip(&curve) {
        t.push_str(&format!(
            "  {:<12} {}\n",
            sig(*a, 6, Side::Nearest),
            sig(*r, 10, Side::Up)
        ));
    }
    Ok(t)
}

const EPSILON_HELP: &str = "\
usage: reconbound epsilon (--noise-multiplier S (--sampling-rate Q | --batch-size B --dataset-size N)
                           (--steps T | --epochs E) | --phase Q,S,T [--phase ...] | --schedule FILE.csv)
                          --delta D [--accountant rdp|pld|all] [--json]
       reconbound epsilon --sampling fixed --batch-size B --dataset-size N --noise-multiplier S
                          --steps T --delta D [--json]

ε(δ) of T steps of DP-SGD with Poisson sampling (add/remove adjacency), rounded up:
rdp: RDP on the default order grid (1.1–10.9 step 0.1, 11–63, 128, 256, 512, 1024), converted
     by the improved formula (Canonne–Kamath–Steinke 2020; Balle et al. 2020) and by Mironov's;
pld: a certified privacy-loss-distribution accountant (pessimistic discretisation, FFT
     composition), with the optimistic value beside it as the error bound.
Default: all.
q = B/N and T = ⌈E/q⌉ as 'bound' computes them. Opacus counts steps otherwise: its Poisson
loader has q = 1/len(loader) and len(loader) = ⌈N/B⌉ steps per epoch (batch 512 of 50,000
over 20 epochs: q = 1/98, 1,960 steps, where ⌈E·N/B⌉ gives 1,954); give such a run as
--sampling-rate and --steps.

JSON keys: command, noise_multiplier, sampling_rate, steps, delta, accountant, and for rdp:
epsilon_rdp, best_order, epsilon_rdp_mironov, best_order_mironov; for pld: epsilon_pld,
epsilon_pld_lower.

--sampling fixed: batches of exactly B of the N examples drawn without replacement, under
replace-one adjacency (N public): RDP of Wang, Balle, Kasiviswanathan 2019 Thm 9 (as
dp_accounting's SampledWithoutReplacementDpEvent) with σ/2 (the sensitivity of a clipped sum
is 2C when an example is replaced); no PLD. --sampling shuffle has no tight analysis and is
refused. See `reconbound epsilon --sampling fixed --help`.
";

/// What `epsilon --help` adds to [`EPSILON_HELP`] (issue 43).
const EPSILON_EXAMPLE: &str = "\
Example (the README's MNIST run: σ 1.1, batch 256 of 60,000, 60 epochs):
  reconbound epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 60 --delta 1e-5
";

/// The one-phase flags of `epsilon` and `rero` (a schedule excludes them).
const SINGLE: [&str; 6] = [
    "sampling-rate",
    "noise-multiplier",
    "steps",
    "batch-size",
    "dataset-size",
    "epochs",
];

/// The schedule, or the one phase of `--sampling-rate/--noise-multiplier/--steps`
/// (validated as for the plain command) as a one-phase schedule with `false`.
fn schedule_or_phase(f: &Flags) -> Result<(Schedule, bool), Failure> {
    if let Some(s) = sched::from_flags(f, &SINGLE)? {
        return Ok((s, true));
    }
    let sigma = f.f64_required("noise-multiplier")?;
    reconbound::error::check_positive("noise_multiplier", sigma)?;
    // q as --sampling-rate or --batch-size/--dataset-size, T as --steps or --epochs, as
    // 'bound' takes them (without its defaults)
    let (q, steps) = rate_and_steps(f, false)?;
    Ok((one_phase(q, sigma, steps)?, false))
}

/// A one-phase schedule of a validated (q, σ, T) (any T ≥ 1: the 1e7 limit is for schedules).
pub(crate) fn one_phase(q: f64, sigma: f64, steps: u64) -> Result<Schedule, Failure> {
    let p = reconbound::accounting::schedule::Phase {
        sampling_rate: q,
        noise_multiplier: sigma,
        steps,
    };
    Ok(Schedule::single(p)?)
}

/// `noise_multiplier`, `sampling_rate`, `steps` of one phase, or `phases` and `steps`.
pub(crate) fn put_config(o: &mut Object, s: &Schedule, is_schedule: bool) {
    match (is_schedule, s.phases()) {
        (false, [p]) => {
            o.num("noise_multiplier", p.noise_multiplier)
                .num("sampling_rate", p.sampling_rate)
                .int("steps", p.steps);
        }
        _ => sched::put_phases(o, s),
    }
}

pub(crate) fn epsilon(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("noise-multiplier"),
            v("sampling-rate"),
            v("steps"),
            v("batch-size"),
            v("dataset-size"),
            v("epochs"),
            v("delta"),
            v("accountant"),
            PHASE,
            SCHEDULE,
            JSON,
        ],
    )?;
    if f.help {
        let short = String::from(EPSILON_HELP) + "\n" + sched::SHORT_HELP + "\n" + EPSILON_EXAMPLE;
        let full = String::from(EPSILON_HELP) + "\n" + sched::HELP;
        return Ok(f.help_text("epsilon", &short, full));
    }
    let (schedule, is_schedule) = schedule_or_phase(&f)?;
    let delta = f.f64_required("delta")?;
    reconbound::error::check_open_unit("delta", delta)?;
    let accountant = f.raw("accountant").unwrap_or("all");
    match accountant {
        "rdp" | "pld" | "all" => {}
        other => {
            return Err(UsageError(format!(
                "flag '--accountant': '{}' is not one of rdp, pld, all",
                other.chars().take(20).collect::<String>()
            ))
            .into())
        }
    };
    epsilon_output(&schedule, is_schedule, delta, accountant, f.has("json"))
}

/// The `epsilon` command's output for a validated schedule: the JSON object (`json`) or the
/// text. `accountant` is `"rdp"`, `"pld"` or `"all"` (checked by the caller).
pub(crate) fn epsilon_output(
    schedule: &Schedule,
    is_schedule: bool,
    delta: f64,
    accountant: &str,
    json: bool,
) -> Out {
    let (use_rdp, use_pld) = (accountant != "pld", accountant != "rdp");
    let mut o = Object::new();
    o.str("command", "epsilon");
    put_config(&mut o, schedule, is_schedule);
    o.num("delta", delta).str("accountant", accountant);
    let mut t = match (is_schedule, schedule.phases()) {
        (false, [p]) => format!(
            "ε(δ = {}) of {} DP-SGD steps, σ = {}, q = {} (upper bounds, rounded up)\n",
            shown(delta),
            p.steps,
            shown(p.noise_multiplier),
            shown(p.sampling_rate)
        ),
        _ => format!(
            "ε(δ = {}) (upper bounds, rounded up) of a DP-SGD {}",
            shown(delta),
            sched::phases_text(schedule, false)
        ),
    };
    let run = Run::schedule(schedule.clone());
    // a Poisson schedule always has an RDP answer; `Unsupported` is for other samplings
    let rdp_of = |c| -> Result<rdp::EpsilonBound, Failure> {
        run::rdp_epsilon(&run, delta, c)?.map_err(|why| Failure::Compute(why.reason()))
    };
    if use_rdp {
        let e = rdp_of(rdp::Conversion::Improved)?;
        let m = rdp_of(rdp::Conversion::Mironov)?;
        o.num("epsilon_rdp", e.epsilon)
            .num("best_order", e.order)
            .num("epsilon_rdp_mironov", m.epsilon)
            .num("best_order_mironov", m.order);
        t.push_str(&format!(
            "  RDP, improved conversion   {}   (order {})\n  RDP, Mironov's conversion  {}   (order {})\n",
            sig(e.epsilon, 7, Side::Up),
            sig(e.order, 4, Side::Nearest),
            sig(m.epsilon, 7, Side::Up),
            sig(m.order, 4, Side::Nearest)
        ));
    }
    if use_pld {
        let p = run::pld_epsilon(&run, delta)?.map_err(|why| why.reason());
        if let (Err(note), false) = (&p, use_rdp) {
            // --accountant pld asked for this value only: no certified value, no success.
            return Err(Failure::Compute(format!(
                "epsilon --accountant pld: no certified ε(δ) by PLD for this configuration ({note}); try --accountant rdp"
            )));
        }
        put_optional(
            &mut o,
            &p,
            ["epsilon_pld", "epsilon_pld_lower", "epsilon_pld_note"],
        );
        match &p {
            Ok(p) => t.push_str(&format!(
                "  PLD, certified             {}   (true ε ≥ {})\n",
                sig(p.value, 7, Side::Up),
                sig(p.lower, 7, Side::Down)
            )),
            Err(note) => t.push_str(&format!("  PLD, certified             -   ({note})\n")),
        }
    }
    if json {
        return Ok(o.render() + "\n");
    }
    Ok(t)
}

/// Largest samples × steps a `rero --method monte-carlo` run may ask for (4e9 Gaussian draws,
/// about 3 minutes on two cores).
const MAX_MONTE_CARLO_DRAWS: f64 = 2e9;

const RERO_HELP: &str = "\
usage: reconbound rero (--noise-multiplier S (--sampling-rate Q | --batch-size B --dataset-size N)
                        (--steps T | --epochs E) | --phase Q,S,T [--phase ...] | --schedule FILE.csv)
                       (--kappa K | --prior-size M)
                       [--method exact|monte-carlo] [--samples N] [--seed X] [--json]

Reconstruction robustness of DP-SGD (Hayes, Mahloujifar, Balle 2023, Thm 2): any attack's
success probability is at most γ = sup_{ν(E) ≤ κ} μ(E), κ the prior's baseline (1/M for a
uniform prior of size M).
exact (default): closed form for q = 1; otherwise a certified numerical composition of the
  privacy-loss law (an upper bound; gamma_lower is the matching lower bound).
monte-carlo: the estimator of the paper with N samples (default 1000000) from seed X
  (default 0), and a one-sided 95 % upper confidence bound gamma_upper; N·T may be at most
  2e9 (about 3 minutes; samples are split over the cores, with results identical to one core).

JSON keys: command, noise_multiplier, sampling_rate, steps, kappa, method, gamma, and
gamma_lower (exact) or gamma_upper, samples, seed (monte-carlo).
A schedule of more than one phase takes --method exact only (a one-phase --phase or
--schedule takes monte-carlo too): the closed form Φ(Φ⁻¹(κ) + √(Σ T_i/σ_i²)) when every
phase has q = 1, else the certified composition of the phases (direction with-target ‖
without-target).
";

/// What `rero --help` adds to [`RERO_HELP`] and the schedules (issue 43).
const RERO_EXAMPLE: &str = "\
Example (the README's MNIST run, a prior of 10 candidates):
  reconbound rero --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 60 --prior-size 10
";

pub(crate) fn rero(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("noise-multiplier"),
            v("sampling-rate"),
            v("steps"),
            v("batch-size"),
            v("dataset-size"),
            v("epochs"),
            v("kappa"),
            v("prior-size"),
            v("method"),
            v("samples"),
            v("seed"),
            PHASE,
            SCHEDULE,
            JSON,
        ],
    )?;
    if f.help {
        let full = String::from(RERO_HELP) + "\n" + sched::HELP;
        let short = full.clone() + "\n" + RERO_EXAMPLE;
        return Ok(f.help_text("rero", &short, full));
    }
    let (schedule, is_schedule) = schedule_or_phase(&f)?;
    let (kappa, _) = kappa(&f, None)?;
    let method = f.raw("method").unwrap_or("exact");
    if is_schedule && method != "exact" && schedule.phases().len() != 1 {
        return Err(UsageError(String::from(
            "flag '--method': a schedule of more than one phase (--phase/--schedule) takes only 'exact'",
        ))
        .into());
    }
    let mut o = Object::new();
    o.str("command", "rero");
    put_config(&mut o, &schedule, is_schedule);
    o.num("kappa", kappa).str("method", method);
    let prefix = if is_schedule {
        sched::phases_text(&schedule, false)
    } else {
        String::new()
    };
    let text = match method {
        "exact" => {
            if f.has("samples") || f.has("seed") {
                return Err(UsageError(String::from(
                    "flags '--samples' and '--seed' need '--method monte-carlo'",
                ))
                .into());
            }
            let g = rero::schedule::gamma(kappa, &schedule)?;
            o.num("gamma", g.gamma).num("gamma_lower", g.lower);
            format!(
                "{prefix}ReRo γ (Hayes et al. 2023), exact: {}   (certified upper bound; true γ ≥ {})\n",
                sig(g.gamma, 7, Side::Up),
                sig(g.lower, 7, Side::Down)
            )
        }
        "monte-carlo" => {
            let (q, sigma, steps) = match schedule.phases() {
                [p] => (p.sampling_rate, p.noise_multiplier, p.steps),
                _ => {
                    return Err(Failure::Compute(String::from(
                        "internal: one phase expected",
                    )))
                }
            };
            let samples = f.u64("samples")?.unwrap_or(1_000_000);
            let seed = f.u64("seed")?.unwrap_or(0);
            // Each sample draws 2T Gaussians (~5 ns each): refuse runs of more than a few
            // minutes rather than appear to hang.
            if (samples as f64) * (steps as f64) > MAX_MONTE_CARLO_DRAWS {
                return Err(UsageError(format!(
                    "--samples = {samples} with --steps = {steps} needs {:.1e} Gaussian draws (over a few minutes); \
                     use --samples ≤ {:.0} or --method exact",
                    2.0 * samples as f64 * steps as f64,
                    libm::floor(MAX_MONTE_CARLO_DRAWS / steps as f64)
                ))
                .into());
            }
            let g = rero::dpsgd::gamma_monte_carlo(kappa, q, sigma, steps, samples, seed, 0.95)?;
            o.num("gamma", g.estimate)
                .num("gamma_upper", g.upper)
                .int("samples", samples)
                .int("seed", seed);
            format!(
                "ReRo γ (Hayes et al. 2023), Monte Carlo with {samples} samples, seed {seed}: {}   (95 % upper confidence bound {})\n",
                sig(g.estimate, 6, Side::Nearest),
                sig(g.upper, 6, Side::Up)
            )
        }
        other => {
            return Err(UsageError(format!(
                "flag '--method': '{}' is not one of exact, monte-carlo",
                other.chars().take(20).collect::<String>()
            ))
            .into())
        }
    };
    if f.has("json") {
        return Ok(o.render() + "\n");
    }
    Ok(text)
}

const FANO_HELP: &str = "\
usage: reconbound fano --prior-size M --noise-multiplier S [--sensitivity-sq D2]
                       [--method closed|monte-carlo] [--samples N] [--seed X] [--json]

The Fano bound of Guo et al. 2022b for one Gaussian release N(μ_Z, σ²I) with Z uniform over M
candidates whose means are at squared distance D2 (default 2: orthonormal means), as compared
in Hayes et al. 2023 App. H, Table 2: the success probability is at most 1 − t for the
smallest t with H(π) − I + t ln t + (1−t) ln(1−t) − t ln(M−1) ≤ 0.
closed (default): I ≤ −Σ_i p_i ln(p_i + (1−p_i) e^{−D2/(2σ²)}), a certified bound.
monte-carlo: I estimated by sampling (N samples, default 100000, seed X, default 0) — an
  estimate, not a certified bound.

JSON keys: command, prior_size, noise_multiplier, sensitivity_sq, method, mutual_information,
success_bound, advantage (Hayes et al. Eq. 4: (success − 1/M)/(1 − 1/M)), and for
monte-carlo mutual_information_std_error, samples, seed.
";

/// What `fano --help` adds to [`FANO_HELP`] (issue 43).
const FANO_EXAMPLE: &str = "\
Example (10 candidates, σ = 1.1):
  reconbound fano --prior-size 10 --noise-multiplier 1.1
";

pub(crate) fn fano(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("prior-size"),
            v("noise-multiplier"),
            v("sensitivity-sq"),
            v("method"),
            v("samples"),
            v("seed"),
            JSON,
        ],
    )?;
    if f.help {
        let short = String::from(FANO_HELP) + "\n" + FANO_EXAMPLE;
        return Ok(f.help_text("fano", &short, String::from(FANO_HELP)));
    }
    let m = f
        .u64("prior-size")?
        .ok_or_else(|| UsageError(String::from("flag '--prior-size' is required")))?;
    let sigma = f.f64_required("noise-multiplier")?;
    let d2 = f.f64("sensitivity-sq")?.unwrap_or(defaults::SENSITIVITY_SQ);
    let method = f.raw("method").unwrap_or("closed");
    let mut o = Object::new();
    o.str("command", "fano")
        .int("prior_size", m)
        .num("noise_multiplier", sigma)
        .num("sensitivity_sq", d2)
        .str("method", method);
    let (b, note) = match method {
        "closed" => {
            if f.has("samples") || f.has("seed") {
                return Err(UsageError(String::from(
                    "flags '--samples' and '--seed' need '--method monte-carlo'",
                ))
                .into());
            }
            (
                fano::fano_closed_form(m, sigma, d2)?,
                String::from("closed-form mutual-information bound"),
            )
        }
        "monte-carlo" => {
            let samples = f.u64("samples")?.unwrap_or(100_000);
            let seed = f.u64("seed")?.unwrap_or(0);
            // Each sample costs M log-add-exps: refuse runs of more than a few minutes.
            if (samples as f64) * (m as f64) > 1e9 {
                return Err(UsageError(format!(
                    "--samples = {samples} with --prior-size = {m} needs {:.1e} evaluations (over a few minutes); use --samples ≤ {:.0} or --method closed",
                    samples as f64 * m as f64,
                    libm::floor(1e9 / m as f64)
                ))
                .into());
            }
            let (b, se) = fano::fano_monte_carlo(m, sigma, d2, samples, seed)?;
            o.num("mutual_information_std_error", se)
                .int("samples", samples)
                .int("seed", seed);
            (
                b,
                format!(
                    "Monte Carlo estimate of I, {samples} samples, seed {seed}, standard error {}",
                    sig(se, 2, Side::Up)
                ),
            )
        }
        other => {
            return Err(UsageError(format!(
                "flag '--method': '{}' is not one of closed, monte-carlo",
                other.chars().take(20).collect::<String>()
            ))
            .into())
        }
    };
    o.num("mutual_information", b.mutual_information)
        .num("success_bound", b.success_bound)
        .num("advantage", b.advantage);
    if f.has("json") {
        return Ok(o.render() + "\n");
    }
    Ok(format!(
        "Fano bound (Guo et al. 2022b), M = {m}, σ = {}, Δ² = {}: success ≤ {}, advantage ≤ {}\n  ({note}; I = {})\n",
        shown(sigma),
        shown(d2),
        sig(b.success_bound, 6, Side::Up),
        sig(b.advantage, 6, Side::Up),
        sig(b.mutual_information, 6, Side::Nearest)
    ))
}

const CALIBRATE_HELP: &str = "\
usage: reconbound calibrate (--target-epsilon E --delta D | --target-gamma G (--kappa K | --prior-size M)
                             | --target-advantage A | --target-tpr T --fpr F)
                            (--sampling-rate Q --steps T | --phase Q,S,T [--phase ...] | --schedule FILE.csv)
                            [--json]

The smallest noise multiplier σ (to relative 1e-6 for a target ε, 1e-4 for a target γ; always
on the safe side) such that T steps of DP-SGD with Poisson rate Q satisfy ε(δ) ≤ E by RDP accounting (improved conversion, default
orders), or have ReRo γ ≤ G by the certified Hayes et al. 2023 bound. G must lie in
(κ, 1 − (1 − Q)^T(1 − κ)): γ ≥ κ for every σ, and every σ > 0 gives γ ≤ that σ → 0 limit;
a target outside is refused at once (exit 2).
Membership risk (Kulynych et al. 2024), read from the certified trade-off curve of
'reconbound tradeoff' (PLD, both directions): --target-advantage A, max(TPR − FPR) ≤ A with
A in (0, 1); --target-tpr T --fpr F, the best attack's TPR at FPR F at most T, with
F < T < 1. The σ returned is the smallest (to relative 1e-5) whose certified upper bracket
meets the target; 1 % less noise misses it. A target no σ ≤ 1e8 meets is refused (exit 2),
and so is one every σ meets: at or above the σ → 0 limit 1 − p₀(1 − F) (advantage: 1 − p₀,
p₀ = Π(1 − q_i)^T_i the probability that the record is never sampled).

JSON keys: command, sampling_rate, steps, noise_multiplier, and target_epsilon, delta,
epsilon_rdp — or target_gamma, kappa, gamma — or target_advantage, advantage — or
target_tpr, fpr, tpr (the two risk targets also smallest_certifiable: true when less noise
could not be certified at that level, so σ is the smallest certifiable one meeting it).
With a schedule, every σ_i is multiplied by one factor c, the smallest (same tolerances, safe
side) meeting the target: JSON has noise_scale (c), phases (with the scaled σ_i, the values
the bound was verified at) and steps (the total) instead of sampling_rate, steps and
noise_multiplier; the σ_i given are the shape of the schedule.
";

/// What `calibrate --help` adds to [`CALIBRATE_HELP`] (issue 43).
const CALIBRATE_EXAMPLE: &str = "\
Example (the σ for ε = 3 at δ = 1e-5 over 15,000 steps at q = 0.004):
  reconbound calibrate --target-epsilon 3 --delta 1e-5 --sampling-rate 0.004 --steps 15000
";

/// `calibrate` with a schedule: one factor c on every σ_i.
fn calibrate_schedule(f: &Flags, schedule: &Schedule) -> Out {
    let mut o = Object::new();
    o.str("command", "calibrate");
    let (c, text) = if let Some(target) = f.f64("target-epsilon")? {
        if f.has("kappa") || f.has("prior-size") {
            return Err(UsageError(String::from(
                "flags '--kappa'/'--prior-size' go with '--target-gamma'",
            ))
            .into());
        }
        let delta = f.f64_required("delta")?;
        let t = Target::Epsilon {
            epsilon: target,
            delta,
        };
        let Calibrated {
            noise: c, achieved, ..
        } = calibrate::noise_scale(t, schedule)
            .map_err(|e| unreachable_target("target-epsilon", target, e))?;
        sched::put_phases(&mut o, &schedule.scaled(c)?);
        o.num("noise_scale", c)
            .num("target_epsilon", target)
            .num("delta", delta)
            .num("epsilon_rdp", achieved);
        (
            c,
            format!(
                "gives ε(δ = {}) = {} ≤ {} by RDP\n",
                shown(delta),
                sig(achieved, 7, Side::Up),
                shown(target)
            ),
        )
    } else if let Some(target) = f.f64("target-gamma")? {
        if f.has("delta") {
            return Err(
                UsageError(String::from("flag '--delta' goes with '--target-epsilon'")).into(),
            );
        }
        let (kappa, _) = kappa(f, None)?;
        // as for one phase: the σ → 0 limit and κ bound every reachable target, with numbers
        let limit = rero::schedule::gamma_noiseless_limit(kappa, schedule)?;
        check_target_gamma(
            target,
            kappa,
            limit,
            "1 − Π_i(1 − q_i)^T_i(1 − κ)",
            "noise scale",
        )?;
        let t = Target::Gamma {
            gamma: target,
            kappa,
        };
        let Calibrated {
            noise: c, achieved, ..
        } = calibrate::noise_scale(t, schedule)
            .map_err(|e| unreachable_target("target-gamma", target, e))?;
        sched::put_phases(&mut o, &schedule.scaled(c)?);
        o.num("noise_scale", c)
            .num("target_gamma", target)
            .num("kappa", kappa)
            .num("gamma", achieved);
        (
            c,
            format!(
                "gives ReRo γ = {} ≤ {} (κ = {})\n",
                sig(achieved, 7, Side::Up),
                shown(target),
                shown(kappa)
            ),
        )
    } else if let Some((t, flag, target)) = risk_target(f)? {
        let Calibrated {
            noise: c,
            achieved,
            smallest_certifiable,
        } = calibrate::noise_scale(t, schedule).map_err(|e| unreachable_target(flag, target, e))?;
        sched::put_phases(&mut o, &schedule.scaled(c)?);
        o.num("noise_scale", c);
        let text = put_risk(&mut o, t, achieved) + &certifiable_note(&mut o, smallest_certifiable);
        (c, text)
    } else {
        return Err(UsageError(String::from(TARGET_REQUIRED)).into());
    };
    if f.has("json") {
        return Ok(o.render() + "\n");
    }
    let scaled = schedule.scaled(c)?;
    Ok(format!(
        "noise scale c = {} on every σ_i: the calibrated {}{text}",
        sig(c, 7, Side::Up),
        sched::phases_text(&scaled, true)
    ))
}

/// A `--target-gamma` that calibration can meet: below `limit`, the σ → 0 limit of γ
/// (`formula` as the message writes it; at or above it every σ > 0 meets the target), and
/// above κ (γ ≥ κ for every σ). `what` names what is calibrated.
fn check_target_gamma(
    target: f64,
    kappa: f64,
    limit: f64,
    formula: &str,
    what: &str,
) -> Result<(), UsageError> {
    if target >= limit && target < 1.0 {
        return Err(UsageError(format!(
            "flag '--target-gamma' = {} is at or above {formula} = {}, the largest γ any {what} \
             gives (σ → 0): every {what} meets it; choose a target below",
            shown(target),
            sig(limit, 7, Side::Down)
        )));
    }
    if target <= kappa {
        return Err(UsageError(format!(
            "flag '--target-gamma' = {} is at or below κ = {}: γ ≥ κ for every σ (guessing \
             from the prior alone), so no {what} reaches it",
            shown(target),
            shown(kappa)
        )));
    }
    Ok(())
}

/// A calibration that no noise multiplier in the supported range (σ ≤ 1e8) reaches is a
/// target out of range: exit 2 naming the flag, as `attack --epsilon` does (the exit-code rule
/// of [`super`]); other errors pass through.
fn unreachable_target(flag: &str, target: f64, e: Error) -> Failure {
    match e {
        Error::Numerical { what, .. } => Failure::Usage(UsageError(format!(
            "--{flag} = {} is out of range: {what}",
            shown(target)
        ))),
        other => other.into(),
    }
}

pub(crate) fn calibrate(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("target-epsilon"),
            v("delta"),
            v("target-gamma"),
            v("target-advantage"),
            v("target-tpr"),
            v("fpr"),
            v("kappa"),
            v("prior-size"),
            v("sampling-rate"),
            v("steps"),
            PHASE,
            SCHEDULE,
            JSON,
        ],
    )?;
    if f.help {
        let short =
            String::from(CALIBRATE_HELP) + "\n" + sched::SHORT_HELP + "\n" + CALIBRATE_EXAMPLE;
        let full = String::from(CALIBRATE_HELP) + "\n" + sched::HELP;
        return Ok(f.help_text("calibrate", &short, full));
    }
    let targets = [
        "target-epsilon",
        "target-gamma",
        "target-advantage",
        "target-tpr",
    ];
    if targets.iter().filter(|t| f.has(t)).count() > 1 {
        return Err(UsageError(String::from(
            "give one target: '--target-epsilon', '--target-gamma', '--target-advantage' or '--target-tpr'",
        ))
        .into());
    }
    if let Some(s) = sched::from_flags(&f, &["sampling-rate", "steps"])? {
        return calibrate_schedule(&f, &s);
    }
    let q = f.f64_required("sampling-rate")?;
    reconbound::error::check_unit_rate("sampling_rate", q)?;
    let steps = f
        .u64("steps")?
        .ok_or_else(|| UsageError(String::from("flag '--steps' is required")))?;
    reconbound::error::check_steps(steps)?;
    let mut o = Object::new();
    o.str("command", "calibrate")
        .num("sampling_rate", q)
        .int("steps", steps);
    let text = if let Some(target) = f.f64("target-epsilon")? {
        if f.has("kappa") || f.has("prior-size") {
            return Err(UsageError(String::from(
                "flags '--kappa'/'--prior-size' go with '--target-gamma'",
            ))
            .into());
        }
        let delta = f.f64_required("delta")?;
        let t = Target::Epsilon {
            epsilon: target,
            delta,
        };
        let Calibrated {
            noise: sigma,
            achieved,
            ..
        } = calibrate::noise_multiplier(t, q, steps)
            .map_err(|e| unreachable_target("target-epsilon", target, e))?;
        o.num("target_epsilon", target)
            .num("delta", delta)
            .num("noise_multiplier", sigma)
            .num("epsilon_rdp", achieved);
        format!(
            "noise multiplier σ = {}   gives ε(δ = {}) = {} ≤ {} by RDP\n",
            sig(sigma, 7, Side::Up),
            shown(delta),
            sig(achieved, 7, Side::Up),
            shown(target)
        )
    } else if let Some(target) = f.f64("target-gamma")? {
        if f.has("delta") {
            return Err(
                UsageError(String::from("flag '--delta' goes with '--target-epsilon'")).into(),
            );
        }
        let (kappa, _) = kappa(&f, None)?;
        // every σ > 0 gives γ ≤ the σ → 0 limit: a target at or above it needs no search;
        // one below κ can never be met (γ ≥ κ)
        let limit = rero::dpsgd::gamma_noiseless_limit(kappa, q, steps)?;
        check_target_gamma(
            target,
            kappa,
            limit,
            "1 − (1 − q)^T(1 − κ)",
            "noise multiplier",
        )?;
        let t = Target::Gamma {
            gamma: target,
            kappa,
        };
        let Calibrated {
            noise: sigma,
            achieved,
            ..
        } = calibrate::noise_multiplier(t, q, steps)
            .map_err(|e| unreachable_target("target-gamma", target, e))?;
        o.num("target_gamma", target)
            .num("kappa", kappa)
            .num("noise_multiplier", sigma)
            .num("gamma", achieved);
        format!(
            "noise multiplier σ = {}   gives ReRo γ = {} ≤ {} (κ = {})\n",
            sig(sigma, 7, Side::Up),
            sig(achieved, 7, Side::Up),
            shown(target),
            shown(kappa)
        )
    } else if let Some((t, flag, target)) = risk_target(&f)? {
        let Calibrated {
            noise: sigma,
            achieved,
            smallest_certifiable,
        } = calibrate::noise_multiplier(t, q, steps)
            .map_err(|e| unreachable_target(flag, target, e))?;
        o.num("noise_multiplier", sigma);
        format!(
            "noise multiplier σ = {}   {}{}",
            sig(sigma, 7, Side::Up),
            put_risk(&mut o, t, achieved),
            certifiable_note(&mut o, smallest_certifiable)
        )
    } else {
        return Err(UsageError(String::from(TARGET_REQUIRED)).into());
    };
    if f.has("json") {
        return Ok(o.render() + "\n");
    }
    Ok(text)
}

const TARGET_REQUIRED: &str = "one of '--target-epsilon', '--target-gamma', '--target-advantage' or '--target-tpr' is required";

/// `--target-advantage A` or `--target-tpr T --fpr F` as a core target, with its flag and
/// value (`None` if neither is given).
fn risk_target(f: &Flags) -> Result<Option<(Target, &'static str, f64)>, Failure> {
    if f.has("target-advantage") || f.has("target-tpr") {
        // a membership target reads the trade-off curve alone: flags of the other targets
        // would be ignored, so they are refused
        for (flag, goes) in [
            ("delta", "'--target-epsilon'"),
            ("kappa", "'--target-gamma'"),
            ("prior-size", "'--target-gamma'"),
        ] {
            if f.has(flag) {
                return Err(UsageError(format!(
                    "flag '--{flag}' goes with {goes}, not with a membership target (the trade-off curve has no δ, κ or prior)"
                ))
                .into());
            }
        }
    }
    if let Some(a) = f.f64("target-advantage")? {
        if f.has("fpr") {
            return Err(UsageError(String::from("flag '--fpr' goes with '--target-tpr'")).into());
        }
        return Ok(Some((
            Target::Advantage { advantage: a },
            "target-advantage",
            a,
        )));
    }
    match (f.f64("target-tpr")?, f.f64("fpr")?) {
        (Some(t), Some(fpr)) => Ok(Some((Target::Tpr { tpr: t, fpr }, "target-tpr", t))),
        (Some(_), None) => Err(UsageError(String::from(
            "flag '--target-tpr' needs '--fpr F' (the false-positive rate it is stated at)",
        ))
        .into()),
        (None, Some(_)) => {
            Err(UsageError(String::from("flag '--fpr' goes with '--target-tpr'")).into())
        }
        (None, None) => Ok(None),
    }
}

/// The JSON key `smallest_certifiable` and, when set, the line saying what it means: less
/// noise could not be certified at this level, so the σ found is the smallest certifiable
/// one that meets the target, not necessarily the smallest that does.
fn certifiable_note(o: &mut Object, smallest_certifiable: bool) -> String {
    o.put("smallest_certifiable", Value::Bool(smallest_certifiable));
    if smallest_certifiable {
        String::from("  (less noise could not be certified at this FPR — the PLD grid's limit — so this is the smallest certifiable noise that meets the target, not necessarily the smallest that does)\n")
    } else {
        String::new()
    }
}

/// The JSON keys and the text of a risk target met with `achieved` (the certified upper
/// bracket of the trade-off curve's measure).
fn put_risk(o: &mut Object, t: Target, achieved: f64) -> String {
    match t {
        Target::Tpr { tpr, fpr } => {
            o.num("target_tpr", tpr)
                .num("fpr", fpr)
                .num("tpr", achieved);
            format!(
                "gives membership TPR ≤ {} ≤ {} at FPR {} (certified trade-off curve)\n",
                sig(achieved, 7, Side::Up),
                shown(tpr),
                shown(fpr)
            )
        }
        Target::Advantage { advantage } => {
            o.num("target_advantage", advantage)
                .num("advantage", achieved);
            format!(
                "gives membership advantage ≤ {} ≤ {} (certified trade-off curve)\n",
                sig(achieved, 7, Side::Up),
                shown(advantage)
            )
        }
        _ => String::new(),
    }
}
