//! `reconbound tradeoff`: the certified trade-off curve (f-DP) of one DP-SGD configuration
//! and the risks read from it ([`reconbound::accounting::tradeoff`]): the largest
//! membership TPR at given FPRs, the advantage, Bayes security and accuracy, ε(δ), γ at the
//! prior; the curve itself as a table (`--csv`) or an ROC plot (`--plot`).

use super::args::{parse, value as v, Flags, Spec};
use super::commands::{one_phase, put_config, rate_and_steps, BOUND_SINGLE};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{Object, Value};
use super::output::{check_flag_paths, check_writable, write_whole};
use super::schedule::{self as sched, PHASE, SCHEDULE};
use super::svg;
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::run::{Run, Sampling};
use reconbound::accounting::tradeoff::{Bracket, Source, TradeoffCurve, MAX_POINTS};
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

/// Documented defaults.
pub(crate) mod defaults {
    /// The FPRs of the risk table.
    pub const FPR: [f64; 3] = [0.001, 0.01, 0.1];
    /// Points of the curve written by `--csv` / `--plot` when `--points` is not given.
    pub const POINTS: usize = 200;
    /// The smallest α of the curve's table and plot.
    pub const RESOLUTION: f64 = 1e-4;
    /// The prior of "member" of the Bayes accuracy.
    pub const PRIOR: f64 = 0.5;
}

const HELP: &str = "\
usage: reconbound tradeoff [--noise-multiplier S] [--sampling-rate Q | --batch-size B
         --dataset-size N] [--steps T | --epochs E] [--phase Q,S,T ... | --schedule FILE]
         [--sampling poisson|fixed]
         [--fpr LIST] [--prior P] [--kappa K] [--delta D] [--points N] [--csv FILE]
         [--plot FILE.svg] [--quiet] [--json]

How well could someone tell whether my record was in the training set? The trade-off curve
f(α) of the run (f-DP, Dong, Roth & Su 2022) is the smallest false-negative rate β of any
membership test at false-positive rate α; every bound reconbound prints is a point of it:
  - membership: TPR ≤ 1 − f(FPR), for any attack, at every FPR;
  - advantage max(TPR − FPR) = TV; Bayes security (Cherubin et al. 2024) = 1 − advantage;
  - the accuracy of the best guess of membership at a prior P: 1 − min_α[(1−P)α + P·f(α)];
  - reconstruction: Hayes et al.'s γ(κ) = 1 − f(κ) (the target's own direction);
  - ε(δ): the dual of the same curve (equal to 'epsilon --accountant pld').
The run flags are those of 'bound' (defaults: σ = 1.1, q = 256/60000, T = 14063, the
README's configuration). Under Poisson sampling (q < 1) the curve comes from the certified
PLDs of both directions of add/remove adjacency (the lower envelope: valid for every test
in either order); for q = 1 (or full-batch phases) from the closed form of μ-GDP,
μ = √(Σ T/σ²); with --sampling fixed (batches of exactly B of N, replace-one adjacency:
TPR then bounds telling D from D with one record replaced) from the optimal RDP → f-DP
conversion (Riess et al. 2026) of Wang et al.'s RDP at σ/2. Every number is a certified bracket [lower, upper]; the side printed first
is the one to report (an upper bound on a risk, a lower bound on β), the other shows the
discretisation's width.

  --fpr LIST     false-positive rates of the TPR table, each in (0, 1) (default
                 0.001,0.01,0.1)
  --prior P      the prior of 'member' of the Bayes accuracy, in (0, 1) (default 0.5)
  --kappa K      also print γ(K), in (0, 1) (reconstruction with a baseline K)
  --delta D      ε(δ) at D, in (0, 1) (default 1e-5)
  --points N     the curve at N values of α from 1e-4 to 1 (half log-spaced below 0.01),
                 N in 2..=10000 (default 200 with --csv or --plot; in the JSON only when
                 given)
  --csv FILE     the curve: alpha,beta_lower,beta_upper,tpr_upper
  --plot FILE    an ROC plot (TPR against FPR, log FPR axis) with the blind guess
  --quiet        accepted for symmetry with the long commands (this one shows no progress)

JSON keys: command, config (as 'bound'; for fixed: sampling, batch_size, dataset_size,
noise_multiplier, steps), source (pld | gaussian | rdp), mu (gaussian), delta,
prior, fpr [{fpr, tpr, tpr_lower, beta, beta_upper}], advantage, advantage_lower,
bayes_security, bayes_accuracy, bayes_accuracy_lower, epsilon, epsilon_lower, kappa, gamma,
gamma_lower (with --kappa), curve [{alpha, beta, beta_upper}] (with --points).
Timing: one curve composes four PLDs (about 30 ms at the default), each risk then takes
under a millisecond.";

/// `tradeoff --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound tradeoff [run flags | --run FILE] [--sampling poisson|fixed] [--fpr LIST]
         [--prior P] [--kappa K] [--delta D] [--points N] [--csv FILE] [--plot FILE.svg]
         [--quiet] [--json]

How well could someone tell whether my record was in the training set? The run's certified
trade-off curve f(α) (f-DP: the smallest false-negative rate β of any membership test at
false-positive rate α) and every risk read from it: the best attack's TPR ≤ 1 − f(FPR), its
advantage max(TPR − FPR), the accuracy of the best guess at a prior P, ε(δ) and γ(κ). Every
number is a certified bracket [lower, upper]; the side printed first is the one to report.

Common flags:
  --noise-multiplier S          σ [1.1]
  --sampling-rate Q             q, or --batch-size B --dataset-size N for q = B/N [256/60000]
  --steps T | --epochs E        noisy steps, or epochs with T = ⌈E/q⌉ [60 epochs: T = 14063]
  --sampling poisson|fixed      Poisson batches (add/remove), or batches of exactly B of N
                                (replace-one) [poisson]
  --phase Q,S,T | --schedule FILE.csv   phases, in order, instead of one (q, σ, T)
  --run FILE                    a run file ('reconbound run --json'; its flags: run --help)
  --fpr LIST                    the FPRs of the TPR table [0.001,0.01,0.1]
  --prior P                     the prior of 'member' of the best guess's accuracy [0.5]
  --kappa K                     also γ(K): reconstruction with a baseline K
  --delta D                     ε(δ) at D [1e-5]
  --csv FILE | --plot FILE.svg  the curve as CSV, or an ROC plot
  --json                        every number at full precision, as JSON

Example (the membership risk of the README's MNIST run at 0.1 % and 1 % FPR):
  reconbound tradeoff --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 60 --fpr 0.001,0.01
";

fn flags() -> Vec<Spec> {
    let mut s: Vec<Spec> = BOUND_SINGLE.iter().map(|&n| v(n)).collect();
    s.extend([
        v("sampling"),
        v("fpr"),
        v("prior"),
        v("kappa"),
        v("delta"),
        v("points"),
        v("csv"),
        v("plot"),
        super::args::switch("json"),
        super::args::switch("quiet"),
        PHASE,
        SCHEDULE,
    ]);
    s
}

/// What to read from the curve, checked: the core's errors name the parameter (the flag
/// of the same name on the command line, the keyword in Python).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// FPRs of the TPR table, each in (0, 1), at least one.
    pub fpr: Vec<f64>,
    /// Prior of "member" of the Bayes accuracy, in (0, 1).
    pub prior: f64,
    /// Baseline κ of γ, in (0, 1), if asked.
    pub kappa: Option<f64>,
    /// δ of ε(δ), in (0, 1).
    pub delta: f64,
    /// Points of the curve in the JSON (2..=[`MAX_POINTS`]), if asked.
    pub points: Option<usize>,
}

impl Options {
    /// The defaults of the command line: FPRs 0.1 %, 1 %, 10 %, prior 1/2, δ = 1e-5.
    pub fn new() -> Options {
        Options {
            fpr: defaults::FPR.to_vec(),
            prior: defaults::PRIOR,
            kappa: None,
            delta: super::commands::defaults::DELTA,
            points: None,
        }
    }

    /// Every field in range.
    ///
    /// # Errors
    /// The core's [`reconbound::Error`] naming the field (`fpr`, `prior`, `kappa`, `delta`,
    /// `points`) and its value.
    pub fn check(&self) -> Result<(), reconbound::Error> {
        use reconbound::error::check_open_unit;
        if self.fpr.is_empty() {
            return Err(reconbound::Error::InvalidCount {
                name: "fpr",
                value: 0,
                expected: "at least one false-positive rate in (0, 1)",
            });
        }
        for &x in &self.fpr {
            check_open_unit("fpr", x)?;
        }
        check_open_unit("prior", self.prior)?;
        if let Some(k) = self.kappa {
            check_open_unit("kappa", k)?;
        }
        check_open_unit("delta", self.delta)?;
        if let Some(n) = self.points {
            if !(2..=MAX_POINTS).contains(&n) {
                return Err(reconbound::Error::InvalidCount {
                    name: "points",
                    value: n as u64,
                    expected: "in 2..=10000",
                });
            }
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

/// What the command was asked for, checked.
struct Request {
    run: Run,
    is_schedule: bool,
    options: Options,
    csv: Option<String>,
    plot: Option<String>,
    json: bool,
}

fn request(f: &Flags) -> Result<Request, Failure> {
    let (run, is_schedule) = match f.raw("sampling") {
        None | Some("poisson") => match sched::from_flags(f, &BOUND_SINGLE)? {
            Some(s) => (Run::schedule(s), true),
            None => {
                let sigma = f
                    .f64("noise-multiplier")?
                    .unwrap_or(super::commands::defaults::NOISE_MULTIPLIER);
                reconbound::error::check_positive("noise_multiplier", sigma)?;
                let (q, steps) = rate_and_steps(f, true)?;
                (Run::schedule(one_phase(q, sigma, steps)?), false)
            }
        },
        Some("fixed") => {
            for flag in ["sampling-rate", "phase", "schedule"] {
                if f.has(flag) {
                    return Err(Failure::Usage(super::args::UsageError(format!(
                        "flag '--{flag}' does not apply with '--sampling fixed' (give --batch-size, --dataset-size, --steps or --epochs)"
                    ))));
                }
            }
            let d = &super::commands::defaults::NOISE_MULTIPLIER;
            let sigma = f.f64("noise-multiplier")?.unwrap_or(*d);
            let b = f.u64("batch-size")?.unwrap_or(super::commands::defaults::BATCH_SIZE);
            let n = f
                .u64("dataset-size")?
                .unwrap_or(super::commands::defaults::DATASET_SIZE);
            // T as 'bound' takes it (--steps, or --epochs E: ⌈E·N/B⌉)
            let (_, steps) = rate_and_steps(f, true)?;
            (Run::fixed_size(b, n, sigma, steps)?, false)
        }
        Some(other) => {
            return Err(Failure::Usage(super::args::UsageError(format!(
                "--sampling = '{}' is not one of poisson, fixed (shuffled epochs have no certified curve)",
                other.chars().filter(|c| !c.is_control()).take(20).collect::<String>()
            ))))
        }
    };
    let mut options = Options::new();
    if let Some(list) = f.f64_list("fpr")? {
        options.fpr = list;
    }
    if let Some(p) = f.f64("prior")? {
        options.prior = p;
    }
    options.kappa = f.f64("kappa")?;
    if let Some(d) = f.f64("delta")? {
        options.delta = d;
    }
    options.points = f
        .u64("points")?
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    // checked once, by `answer`, before any computation or write
    check_flag_paths(f, &["csv", "plot"], &["schedule"], &[])?;
    let csv = f.raw("csv").map(String::from);
    let plot = f.raw("plot").map(String::from);
    for (flag, p) in [("csv", &csv), ("plot", &plot)] {
        if let Some(p) = p {
            check_writable(flag, p)?;
        }
    }
    Ok(Request {
        run,
        is_schedule,
        options,
        csv,
        plot,
        json: f.has("json"),
    })
}

/// Everything the command prints, computed.
struct Answer {
    source: Source,
    /// (FPR, β, TPR).
    rows: Vec<(f64, Bracket, Bracket)>,
    advantage: Bracket,
    accuracy: Bracket,
    epsilon: Bracket,
    gamma: Option<(f64, Bracket)>,
    curve: Vec<(f64, Bracket)>,
}

/// The curve of `run` and what `o` asks of it; `n` points of the curve (the JSON's, or
/// those of `--csv`/`--plot`).
fn answer(run: &Run, o: &Options, n: Option<usize>) -> Result<Answer, Failure> {
    o.check()?;
    // One curve at the default resolution answers everything at or above it; a level
    // below it (an FPR or κ of 1e-12, 1e-300) gets a curve of its own, so that asking for
    // it never loosens the other numbers (issue 43: --kappa 1e-300 moved TPR at 0.1 % from
    // 0.006051 to 0.8799). Curves are shared between levels of one resolution.
    let curve_at = |resolution: f64| -> Result<TradeoffCurve, Failure> {
        match TradeoffCurve::of_run(run, resolution, &PldConfig::default())? {
            Ok(c) => Ok(c),
            Err(why) => Err(Failure::Usage(super::args::UsageError(why.reason()))),
        }
    };
    let curve = curve_at(DEFAULT_RESOLUTION)?;
    let mut fine: Vec<(f64, TradeoffCurve)> = Vec::new();
    let mut for_level = |level: f64| -> Result<usize, Failure> {
        if level >= DEFAULT_RESOLUTION || level <= 0.0 {
            return Ok(usize::MAX);
        }
        if let Some(i) = fine.iter().position(|(r, _)| *r == level) {
            return Ok(i);
        }
        fine.push((level, curve_at(level)?));
        Ok(fine.len() - 1)
    };
    let mut which = Vec::with_capacity(o.fpr.len());
    for &a in &o.fpr {
        which.push(for_level(a)?);
    }
    let gamma_curve = match o.kappa {
        Some(k) => Some(for_level(k)?),
        None => None,
    };
    let pick = |i: usize| fine.get(i).map_or(&curve, |(_, c)| c);
    let rows = o
        .fpr
        .iter()
        .zip(&which)
        .map(|(&a, &i)| Ok((a, pick(i).beta(a)?, pick(i).tpr(a)?)))
        .collect::<Result<Vec<_>, reconbound::Error>>()?;
    let gamma = match (o.kappa, gamma_curve) {
        (Some(k), Some(i)) => Some((k, pick(i).gamma(k)?)),
        _ => None,
    };
    let points = match n {
        Some(n) => curve.points(n, defaults::RESOLUTION)?,
        None => Vec::new(),
    };
    // ε(δ) of a Poisson run is the accountant's, by the same function as 'epsilon
    // --accountant pld' (the same bits); fixed-size batches read it from the curve
    let epsilon = match reconbound::accounting::run::pld_epsilon(run, o.delta)? {
        Ok(e) => Bracket {
            lower: e.lower,
            upper: e.value,
        },
        Err(_) => curve.epsilon(o.delta)?,
    };
    Ok(Answer {
        source: curve.source(),
        rows,
        advantage: curve.advantage(),
        accuracy: curve.bayes_accuracy(o.prior)?,
        epsilon,
        gamma,
        curve: points,
    })
}

/// The resolution of the curve that answers every level at or above it (the smallest
/// default level, FPR 0.1 %).
const DEFAULT_RESOLUTION: f64 = 1e-3;

/// The `config` object: `bound`'s keys for Poisson runs, the batch sizes for fixed-size ones.
fn config_of(run: &Run, as_schedule: bool) -> Object {
    let mut config = Object::new();
    match run.as_schedule() {
        Some(s) => put_config(&mut config, s, as_schedule),
        None => {
            if let (
                Some(Sampling::FixedSize {
                    batch_size,
                    dataset_size,
                }),
                Some((sigma, steps)),
            ) = (run.sampling(), run.noise_and_steps())
            {
                config
                    .str("sampling", "fixed")
                    .int("batch_size", batch_size)
                    .int("dataset_size", dataset_size)
                    .num("noise_multiplier", sigma)
                    .int("steps", steps);
            }
        }
    }
    config
}

/// A line naming the run: σ, q, T; the batches; or the schedule's phases.
fn run_line(run: &Run, is_schedule: bool) -> String {
    match (run.as_schedule(), run.sampling(), run.noise_and_steps()) {
        (Some(s), _, _) => match (is_schedule, s.phases()) {
            (false, [p]) => format!(
                "configuration: σ = {}, q = {}, T = {}\n",
                shown(p.noise_multiplier),
                super::format::plain(p.sampling_rate, 6),
                p.steps
            ),
            _ => sched::phases_text(s, false),
        },
        (
            None,
            Some(Sampling::FixedSize {
                batch_size,
                dataset_size,
            }),
            Some((sigma, steps)),
        ) => format!(
            "configuration: σ = {}, fixed-size batches of {batch_size} of {dataset_size}, T = {steps} (replace-one adjacency)\n",
            shown(sigma)
        ),
        _ => String::new(),
    }
}

/// `reconbound tradeoff … --json` for `run` (Poisson phases or a schedule, printed as
/// `bound` prints them — `as_schedule`: the phases form even for one phase — or fixed-size
/// batches, RDP only) and the options: the typed entry point of [`super::api`].
pub(crate) fn json_output(run: &Run, as_schedule: bool, o: &Options) -> Result<String, Failure> {
    let a = answer(run, o, o.points)?;
    let config = config_of(run, as_schedule);
    Ok(to_json(config, o, &a))
}

fn to_json(config: Object, r: &Options, a: &Answer) -> String {
    let mut o = Object::new();
    o.str("command", "tradeoff");
    o.put("config", Value::Obj(config));
    o.str("source", a.source.as_str());
    if let Source::Gaussian { mu } = a.source {
        o.num("mu", mu);
    }
    o.num("delta", r.delta).num("prior", r.prior);
    let rows = a
        .rows
        .iter()
        .map(|&(x, b, t)| {
            let mut row = Object::new();
            row.num("fpr", x)
                .num("tpr", t.upper)
                .num("tpr_lower", t.lower)
                .num("beta", b.lower)
                .num("beta_upper", b.upper);
            Value::Obj(row)
        })
        .collect();
    o.put("fpr", Value::Arr(rows));
    o.num("advantage", a.advantage.upper)
        .num("advantage_lower", a.advantage.lower)
        .num(
            "bayes_security",
            (1.0 - a.advantage.upper).next_down().max(0.0),
        )
        .num("bayes_accuracy", a.accuracy.upper)
        .num("bayes_accuracy_lower", a.accuracy.lower)
        .num("epsilon", a.epsilon.upper)
        .num("epsilon_lower", a.epsilon.lower);
    if let Some((k, g)) = a.gamma {
        o.num("kappa", k)
            .num("gamma", g.upper)
            .num("gamma_lower", g.lower);
    }
    if r.points.is_some() {
        let pts = a
            .curve
            .iter()
            .map(|&(x, b)| {
                let mut p = Object::new();
                p.num("alpha", x)
                    .num("beta", b.lower)
                    .num("beta_upper", b.upper);
                Value::Obj(p)
            })
            .collect();
        o.put("curve", Value::Arr(pts));
    }
    o.render() + "\n"
}

fn percent(x: f64) -> String {
    super::format::fpr_label(x)
}

fn row(t: &mut String, label: &str, value: &str, note: &str) {
    let pad = 34usize.saturating_sub(label.chars().count());
    t.push_str(&format!("  {label}{}{value}  {note}\n", " ".repeat(pad)));
}

fn to_text(req: &Request, a: &Answer) -> String {
    let r = &req.options;
    let mut t =
        String::from("reconbound tradeoff: the certified trade-off curve of one DP-SGD run\n\n");
    t.push_str(&headline(r, a));
    t.push_str(&run_line(&req.run, req.is_schedule));
    t.push_str(&match a.source {
        Source::Gaussian { mu } => format!(
            "curve: μ-GDP in closed form, μ = {} (full batch)\n",
            sig(mu, 6, Side::Up)
        ),
        Source::Pld => String::from(
            "curve: certified PLD, both directions of add/remove adjacency (lower envelope)\n",
        ),
        Source::Rdp => String::from(
            "curve: the optimal RDP → f-DP conversion (Riess et al. 2026) of the replace-one RDP curve\n",
        ),
    });
    t.push_str("\nmembership inference: the best attack's TPR at a given FPR (upper bounds)\n");
    for &(x, _, tp) in &a.rows {
        row(
            &mut t,
            &format!("TPR at FPR {}", percent(x)),
            &format!("≤ {}", sig(tp.upper, 4, Side::Up)),
            &format!(
                "[{}, {}]  ({}× the blind guess)",
                sig(tp.lower, 6, Side::Down),
                sig(tp.upper, 6, Side::Up),
                sig(tp.upper / x, 3, Side::Up)
            ),
        );
    }
    row(
        &mut t,
        "advantage max(TPR − FPR)",
        &format!("≤ {}", sig(a.advantage.upper, 4, Side::Up)),
        &format!(
            "Bayes security ≥ {}  (Cherubin et al. 2024)",
            sig(
                (1.0 - a.advantage.upper).next_down().max(0.0),
                4,
                Side::Down
            )
        ),
    );
    row(
        &mut t,
        &format!("best guess accuracy, prior {}", shown(r.prior)),
        &format!("≤ {}", sig(a.accuracy.upper, 4, Side::Up)),
        &format!(
            "blind guess {}",
            sig(r.prior.max(1.0 - r.prior), 4, Side::Nearest)
        ),
    );
    t.push_str("\nthe same curve, other questions\n");
    row(
        &mut t,
        &format!("ε(δ = {})", shown(r.delta)),
        &format!("≤ {}", sig(a.epsilon.upper, 6, Side::Up)),
        &match a.source {
            Source::Rdp => String::from("by RDP, improved conversion"),
            _ => format!("[{}, …]", sig(a.epsilon.lower, 6, Side::Down)),
        },
    );
    if let Some((k, g)) = a.gamma {
        row(
            &mut t,
            &format!("reconstruction γ(κ = {})", shown(k)),
            &format!("≤ {}", sig(g.upper, 6, Side::Up)),
            "Hayes et al. 2023 Thm 2: 1 − f(κ), the target's direction",
        );
    }
    t
}

/// The answer first (issue 43): the best membership attack's TPR at the FPR asked for (1 %
/// when it is among those asked, else the first), its advantage, and ε(δ) — the numbers to
/// quote, rounded as the rows below round them.
fn headline(r: &Options, a: &Answer) -> String {
    let row = a
        .rows
        .iter()
        .find(|(x, _, _)| *x == 0.01)
        .or_else(|| a.rows.first());
    let at = match row {
        Some(&(x, _, tp)) => format!(
            "no membership test on this run has a true-positive rate above {} at a false-positive rate of {} (a blind guess: {}), and",
            sig(tp.upper, 4, Side::Up),
            percent(x),
            percent(x)
        ),
        None => String::from("no membership test on this run"),
    };
    let eps_by = match a.source {
        Source::Rdp => "by RDP, replace-one adjacency",
        _ => "certified, add/remove adjacency",
    };
    let text = format!(
        "{at} none gains more than {} in TPR − FPR at any false-positive rate. The run is ({}, {})-DP ({eps_by}).",
        sig(a.advantage.upper, 4, Side::Up),
        sig(a.epsilon.upper, 6, Side::Up),
        shown(r.delta)
    );
    super::format::wrap("answer: ", &text, 92) + "\n"
}

fn csv(a: &Answer) -> String {
    let mut s = String::from("alpha,beta_lower,beta_upper,tpr_upper\n");
    for &(x, b) in &a.curve {
        s.push_str(&format!(
            "{x},{},{},{}\n",
            b.lower,
            b.upper,
            b.complement().upper
        ));
    }
    s
}

fn plot(r: &Request, a: &Answer) -> String {
    // the source in words (issue 43: the subtitle ended in "; pld")
    let source = match a.source {
        Source::Gaussian { .. } => "the Gaussian-DP curve (closed form)",
        Source::Pld => "the certified PLD curve",
        Source::Rdp => "the curve its RDP implies",
    };
    let subtitle = format!(
        "{}; {source}",
        run_line(&r.run, r.is_schedule)
            .trim_end()
            .trim_start_matches("configuration: "),
    );
    roc_svg(&a.curve, &subtitle, Vec::new())
}

/// The membership trade-off (ROC) plot of a certified curve: the TPR bound 1 − f(FPR) (the
/// upper side of the complement of each bracket), the blind guess, and `estimates` (an
/// audit's corners) — `tradeoff --plot` and the report's plot.
pub(crate) fn roc_svg(
    curve: &[(f64, Bracket)],
    subtitle: &str,
    estimates: Vec<svg::Estimates>,
) -> String {
    let tpr: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| p.0 < 1.0)
        .map(|&(x, b)| (x, b.complement().upper))
        .collect();
    let blind: Vec<(f64, f64)> = tpr.iter().map(|&(x, _)| (x, x)).collect();
    svg::curve_plot_svg(&svg::CurvePlot {
        decades: true,
        y_log: true,
        y_max: 1.0,
        titles: svg::Titles {
            title: "Membership inference: the certified trade-off curve",
            subtitle,
            x_label: "false-positive rate (log scale)",
            y_label: "true-positive rate of the best attack (log scale)",
        },
        curves: std::vec![
            svg::Curve {
                label: String::from("1 − f(FPR), certified (any attack lies below)"),
                points: tpr,
                stroke: svg::CERTIFIED,
            },
            svg::Curve {
                label: String::from("blind guess TPR = FPR"),
                points: blind,
                stroke: svg::REFERENCE,
            },
        ],
        estimates,
    })
}

/// `reconbound tradeoff …`.
pub(crate) fn tradeoff(args: &[String]) -> Out {
    let f = parse(args, &flags())?;
    if f.help {
        let full = String::from(HELP) + "\n" + sched::HELP;
        return Ok(f.help_text("tradeoff", SHORT_HELP, full));
    }
    let r = request(&f)?;
    let n = r
        .options
        .points
        .or((r.csv.is_some() || r.plot.is_some()).then_some(defaults::POINTS));
    let a = answer(&r.run, &r.options, n)?;
    if let Some(p) = &r.csv {
        write_whole("csv", p, &csv(&a))?;
    }
    if let Some(p) = &r.plot {
        write_whole("plot", p, &plot(&r, &a))?;
    }
    Ok(if r.json {
        to_json(config_of(&r.run, r.is_schedule), &r.options, &a)
    } else {
        to_text(&r, &a)
    })
}
