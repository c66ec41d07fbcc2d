//! `reconbound check`: a certified verdict on the ε another library printed for a run
//! ([`reconbound::accounting::verdict`]), with what the claim assumed when it differs from the
//! run (sampler, microbatches, accumulation, step counting).

use super::args::{parse, switch, value, Spec, UsageError};
use super::commands::defaults;
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{Object, Value};
use super::run_flags::{self, RUN_FLAGS};
use reconbound::accounting::description::{Counting, Description, Length, Rate, Sampler};
use reconbound::accounting::run::Adjacency;
use reconbound::accounting::verdict::{self, Bracket, Check, Verdict};
use std::format;
use std::string::String;
use std::vec::Vec;

/// The exit status of an optimistic verdict (0: consistent or conservative; 2: bad input;
/// 1: no certifiable answer).
pub(crate) const OPTIMISTIC_EXIT: i32 = 3;

/// A library whose ε `check` knows: its name, what it computes, its stated precision.
struct Library {
    name: &'static str,
    what: &'static str,
    tolerance: f64,
}

const LIBRARIES: [Library; 9] = [
    Library {
        name: "other",
        what: "an ε computed elsewhere",
        tolerance: 0.0,
    },
    Library {
        name: "opacus-rdp",
        what: "Opacus's RDP accountant (Poisson, add/remove; RDP at its orders: an upper bound)",
        tolerance: 0.0,
    },
    Library {
        name: "opacus-prv",
        what: "Opacus's PRV accountant (Gopi, Lee & Wutschitz 2021): its eps_upper, within 2·eps_error = 0.02 of the exact ε at its default eps_error 0.01",
        tolerance: 0.02,
    },
    Library {
        name: "opacus-gdp",
        what: "Opacus's GDP accountant (a central-limit approximation, Bu et al. 2020: not a bound)",
        tolerance: 0.0,
    },
    Library {
        name: "dp-accounting-rdp",
        what: "dp_accounting's RdpAccountant (Poisson, add/remove)",
        tolerance: 0.0,
    },
    Library {
        name: "dp-accounting-pld",
        what: "dp_accounting's PLDAccountant (Poisson, add/remove; a discretised PLD)",
        tolerance: 0.0,
    },
    Library {
        name: "prv-accountant",
        what: "prv_accountant (Gopi, Lee & Wutschitz 2021): eps_upper is within 2·eps_error of the exact ε; eps_error 0.01 assumed unless --tolerance",
        tolerance: 0.02,
    },
    Library {
        name: "tf-privacy",
        what: "TensorFlow Privacy's compute_dp_sgd_privacy (RDP; Poisson, σ at sensitivity C)",
        tolerance: 0.0,
    },
    Library {
        name: "jax-privacy",
        what: "jax_privacy (dp_accounting's accountants)",
        tolerance: 0.0,
    },
];

const HELP: &str = "\
usage: reconbound check [run flags | --run FILE] --claimed-epsilon E --delta D
                        [--library NAME] [--tolerance X] [--json]
       reconbound check [run flags | --run FILE] --target-epsilon E --delta D ...
                        (a claimed σ: the run's --noise-multiplier reaches ε = E)

A certified verdict on an ε that another library printed for this run: the run's certified
ε(δ) bracket (the mechanism is not (ε, δ)-DP below its lower end; it is at its upper end) and
  optimistic    the claim is below the lower end: a privacy bug (with by how much);
  consistent    within the bracket, or above it by at most the library's stated precision
                (or not refuted, where no upper end is certified: shuffled batches);
  conservative  above the upper end by more than that precision (by how much).
Exit status: 0 consistent or conservative, 3 optimistic, 2 bad input, 1 no certified answer.
Every library's accountant assumes Poisson sampling at the rate it was given, add/remove, the
noise multiplier at sensitivity C and the steps it was told: where the run differs (shuffled
or fixed-size batches, microbatches, accumulation, Opacus's step count), the verdict is on the
real run, and the assumptions the claim matches are named.
With no claim: the certified bracket of the run at δ (default 1e-5, the run 'bound''s default).

--library: other (default), opacus-rdp, opacus-prv, opacus-gdp, dp-accounting-rdp,
  dp-accounting-pld, prv-accountant, tf-privacy, jax-privacy (sets --tolerance: 0.02 for
  opacus-prv and prv-accountant, 2·eps_error at their default eps_error 0.01; 0 otherwise).

Example (jax_privacy PR #271: validation used the physical batch's rate, ε ≈ 0.72, where the
run with 8 accumulation steps spends ε ≥ 5.613; exit 3):
  reconbound check --noise-multiplier 1 --batch-size 10 --accumulation 8 --dataset-size 1000 \\
      --steps 100 --claimed-epsilon 0.72 --delta 1e-5 --library jax-privacy

JSON keys: command, verdict (optimistic | consistent | conservative, or null with no claim),
claimed_epsilon, delta, library, tolerance, epsilon_lower, epsilon_lower_by, epsilon_upper
(null when none is certified), epsilon_upper_by, margin, upper_certified, run (the run file),
explanations [{assumption, epsilon_lower, epsilon_upper, claim_consistent (the claim within 1 %
of that bracket)}], message.
";

/// `check --help` (issue 43: it fits a screen; [`HELP`] and the run flags are
/// `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound check [run flags | --run FILE] --claimed-epsilon E --delta D
                        [--library NAME] [--tolerance X] [--json]
       reconbound check [run flags | --run FILE] --target-epsilon E --delta D ...
                        (a claimed σ: the run's --noise-multiplier reaches ε = E)

Is the ε another library printed for my run right? A certified verdict on the claim, from the
run's certified ε(δ) bracket:
  optimistic    below the lower end: a privacy bug (exit 3);
  consistent    within the bracket, or above it by at most the library's stated precision;
  conservative  above the upper end by more than that precision.
Where the run is not what the library's accountant assumes (shuffled or fixed-size batches,
microbatches, accumulation, Opacus's step count), the verdict is on the real run.
Exit status: 0 consistent or conservative, 3 optimistic, 2 bad input, 1 no certified answer.

Common flags:
  --noise-multiplier S        σ (noise std σ·C)
  --sampling-rate Q           q, or --batch-size B --dataset-size N for q = B/N
  --steps T | --epochs E      noisy steps, or epochs (T = ⌈E/q⌉)
  --counting expected|opacus  how epochs become steps (opacus: its loader's q and steps)
  --sampling poisson|full-batch|fixed-size|shuffled    the sampler [poisson]
  --run FILE                  a run file ('reconbound run --json') instead of the run flags
  --claimed-epsilon E         the ε to check, at --delta D
  --library NAME              opacus-rdp, opacus-prv, dp-accounting-pld, tf-privacy,
                              jax-privacy, … (sets --tolerance) [other]
  --json                      every number at full precision, as JSON
  (--accumulation, --microbatches, --relation, --phase: reconbound check --help-all)

Example (an Opacus run: σ 1.1, batch 256 of 60,000, 60 epochs; ε = 3 is conservative):
  reconbound check --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 60 --counting opacus --claimed-epsilon 3 --delta 1e-5 --library opacus-rdp
";

/// `reconbound check`: the outcome (stdout, exit status 0 or 3).
pub(crate) fn check(args: &[String]) -> Result<(String, i32), Failure> {
    let mut specs: Vec<Spec> = RUN_FLAGS.to_vec();
    specs.extend([
        value("claimed-epsilon"),
        value("target-epsilon"),
        value("delta"),
        value("library"),
        value("tolerance"),
        switch("json"),
    ]);
    let f = parse(args, &specs)?;
    if f.help {
        let full = String::from(HELP) + "\n" + run_flags::HELP;
        return Ok((f.help_text("check", SHORT_HELP, full), 0));
    }
    f.exclusive("claimed-epsilon", "target-epsilon")?;
    let claim_flag = if f.has("target-epsilon") {
        "target-epsilon"
    } else {
        "claimed-epsilon"
    };
    // -0 is 0 (never echoed as "ε = -0")
    let claimed = f.f64(claim_flag)?.map(|e| e + 0.0);
    let delta = match (f.f64("delta")?, claimed) {
        (Some(d), _) => d,
        (None, None) => defaults::DELTA,
        (None, Some(_)) => {
            return Err(UsageError(format!(
            "flag '--delta' is required with '--{claim_flag}' (an ε without its δ claims nothing)"
        ))
            .into())
        }
    };
    reconbound::error::check_open_unit("delta", delta)?;
    let library = match f.raw("library") {
        None => &LIBRARIES[0],
        Some(name) => LIBRARIES.iter().find(|l| l.name == name).ok_or_else(|| {
            UsageError(format!(
                "--library = '{}' is not one of {}",
                super::args::printable(name),
                LIBRARIES
                    .iter()
                    .map(|l| l.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    let tolerance = f.f64("tolerance")?.unwrap_or(library.tolerance);
    reconbound::error::check_non_negative("tolerance", tolerance)?;
    let no_run_flag = !run_flags_given(&f);
    if no_run_flag && claimed.is_some() {
        return Err(UsageError(format!(
            "a claim needs its run: give the run flags or '--run FILE' with '--{claim_flag}' (without a claim, 'check' shows the default run's bracket)"
        ))
        .into());
    }
    let d = run_flags::description(&f, no_run_flag)?;
    let r = d.resolve()?;
    let b = verdict::bracket(&r, delta)?;
    let mut o = Object::new();
    o.str("command", "check");
    let c = match claimed {
        Some(e) => {
            let c = verdict::check(e, delta, &b, tolerance).map_err(|e| rename(e, claim_flag))?;
            o.str("verdict", c.verdict.as_str());
            o.num("claimed_epsilon", e);
            Some(c)
        }
        None => {
            o.put("verdict", Value::Null)
                .put("claimed_epsilon", Value::Null);
            None
        }
    };
    o.num("delta", delta)
        .str("library", library.name)
        .num("tolerance", tolerance)
        .num("epsilon_lower", b.lower)
        .str("epsilon_lower_by", b.lower_by.as_str());
    match b.upper {
        Some(u) => o.num("epsilon_upper", u),
        None => o.put("epsilon_upper", Value::Null),
    };
    o.str("epsilon_upper_by", b.upper_by.as_str());
    o.num("margin", c.map_or(0.0, |c| c.margin))
        .put("upper_certified", Value::Bool(b.upper.is_some()))
        .put("run", Value::Obj(run_flags::to_json(&d, &r)));
    let explanations = explain(&d, delta, claimed, tolerance)?;
    o.put(
        "explanations",
        Value::Arr(
            explanations
                .iter()
                .map(|(label, eb, ok)| {
                    let mut x = Object::new();
                    x.str("assumption", label).num("epsilon_lower", eb.lower);
                    match eb.upper {
                        Some(u) => x.num("epsilon_upper", u),
                        None => x.put("epsilon_upper", Value::Null),
                    };
                    match ok {
                        Some(ok) => x.put("claim_consistent", Value::Bool(*ok)),
                        None => x.put("claim_consistent", Value::Null),
                    };
                    Value::Obj(x)
                })
                .collect(),
        ),
    );
    let message = headline(c.as_ref(), &b, delta, claim_flag);
    o.str("message", &message);
    let code = match c {
        Some(c) if c.verdict == Verdict::Optimistic => OPTIMISTIC_EXIT,
        _ => 0,
    };
    if f.has("json") {
        return Ok((o.render() + "\n", code));
    }
    let mut t = message;
    t.push('\n');
    t.push_str(&format!(
        "certified ε at δ = {}: ε {} (lower end: {}; upper end: {})\n",
        shown(delta),
        bracket_text(&b),
        b.lower_by.as_str(),
        b.upper_by.as_str()
    ));
    if let Some(e) = claimed {
        t.push_str(&format!(
            "claim: ε = {} at δ = {} from {} ({}); tolerance {}\n",
            shown(e),
            shown(delta),
            library.name,
            library.what,
            shown(tolerance)
        ));
    }
    t.push_str(&run_flags::text(&d, &r));
    for (label, eb, ok) in &explanations {
        t.push_str(&format!(
            "if {label}: ε {}{}\n",
            bracket_text(eb),
            match ok {
                Some(true) => " — the claim matches this assumption (within 1 %)",
                Some(false) => "",
                None => "",
            }
        ));
    }
    Ok((t, code))
}

/// Whether any run flag is given (without one, `check` uses `bound`'s default run).
fn run_flags_given(f: &super::args::Flags) -> bool {
    RUN_FLAGS.iter().any(|s| f.has(s.name))
}

/// The core names the claim `claimed_epsilon`; the flag may be `--target-epsilon`.
fn rename(e: reconbound::Error, flag: &'static str) -> Failure {
    match e {
        reconbound::Error::InvalidParameter {
            name: "claimed_epsilon",
            value,
            expected,
        } => Failure::Invalid(reconbound::Error::InvalidParameter {
            name: if flag == "target-epsilon" {
                "target_epsilon"
            } else {
                "claimed_epsilon"
            },
            value,
            expected,
        }),
        other => other.into(),
    }
}

fn bracket_text(b: &Bracket) -> String {
    match b.upper {
        Some(u) => format!(
            "∈ [{}, {}]",
            sig(b.lower, 6, Side::Down),
            sig(u, 6, Side::Up)
        ),
        None => format!("≥ {} (no certified upper end)", sig(b.lower, 6, Side::Down)),
    }
}

/// The one-line answer.
fn headline(c: Option<&Check>, b: &Bracket, delta: f64, flag: &str) -> String {
    let Some(c) = c else {
        if b.lower_by == verdict::Source::None {
            return format!(
                "no claim given (--claimed-epsilon E --delta D): nothing is certified from below for this run at δ = {}{}",
                shown(delta),
                match b.upper {
                    Some(u) => format!("; it spends at most ε = {}", sig(u, 6, Side::Up)),
                    None => String::new(),
                }
            );
        }
        return format!(
            "no claim given (--claimed-epsilon E --delta D): this run certifiably spends ε ≥ {} at δ = {}{}",
            sig(b.lower, 6, Side::Down),
            shown(delta),
            match b.upper {
                Some(u) => format!(" and at most {}", sig(u, 6, Side::Up)),
                None => String::new(),
            }
        );
    };
    let e = shown(c.claimed_epsilon);
    let d = shown(delta);
    let what = if flag == "target-epsilon" {
        "the noise multiplier's claimed ε"
    } else {
        "the claimed ε"
    };
    match c.verdict {
        Verdict::Optimistic => format!(
            "OPTIMISTIC: {what} = {e} at δ = {d} is below what this run certifiably spends, ε ≥ {} (short by {}): the run is not ({e}, {d})-DP",
            sig(b.lower, 6, Side::Down),
            sig(c.margin, 3, Side::Down)
        ),
        Verdict::Conservative => format!(
            "CONSERVATIVE: {what} = {e} at δ = {d} holds, with room: the run certifiably spends at most ε = {} (by {})",
            sig(b.upper.unwrap_or(f64::NAN), 6, Side::Up),
            sig(c.margin, 3, Side::Down)
        ),
        Verdict::Consistent if c.upper_certified() && b.lower_by != verdict::Source::None => format!(
            "CONSISTENT: {what} = {e} at δ = {d} agrees with the run's certified ε {}",
            bracket_text(b)
        ),
        Verdict::Consistent if c.upper_certified() => format!(
            "CONSISTENT (not refuted): {what} = {e} at δ = {d} is at most the run's certified upper end {}, but no lower end is certified for this run (the PLD has no value here), so it is not confirmed either",
            sig(b.upper.unwrap_or(f64::NAN), 6, Side::Up)
        ),
        Verdict::Consistent => format!(
            "CONSISTENT (not refuted, not confirmed): {what} = {e} at δ = {d} is not below the certified lower end {}, and no upper end is certified for this run",
            sig(b.lower, 6, Side::Down)
        ),
    }
}

type Explanation = (String, Bracket, Option<bool>);

/// The assumptions a library's accountant makes that the run breaks, each with the bracket it
/// would give and whether the claim agrees with it.
fn explain(
    d: &Description,
    delta: f64,
    claimed: Option<f64>,
    tolerance: f64,
) -> Result<Vec<Explanation>, Failure> {
    let mut alts: Vec<(String, Description)> = Vec::new();
    if d.phases.is_none() {
        if matches!(d.sampler, Sampler::Shuffled | Sampler::FixedSize) {
            let mut a = d.clone();
            a.sampler = Sampler::Poisson;
            a.relation = Some(Adjacency::AddRemove);
            alts.push((
                format!(
                    "Poisson sampling at the same rate, add/remove (what the accountants assume) instead of {} batches",
                    d.sampler.as_str()
                ),
                a,
            ));
        }
        if let Ok(r) = d.resolve() {
            if r.microbatched {
                let mut a = d.clone();
                a.microbatches = None;
                alts.push((
                    String::from(
                        "the noise multiplier at sensitivity C, ignoring the microbatches' 2C (TensorFlow Privacy #620)",
                    ),
                    a,
                ));
            }
        }
        if d.accumulation > 1 {
            let mut a = d.clone();
            a.accumulation = 1;
            alts.push((
                String::from(
                    "the physical batch's rate instead of the accumulated effective batch's (jax_privacy PR #271)",
                ),
                a,
            ));
        }
        if let (Length::Epochs(_), Rate::Batch { .. }, Sampler::Poisson) =
            (d.length, d.rate, d.sampler)
        {
            let mut a = d.clone();
            a.counting = match d.counting {
                Counting::Expected => Counting::Opacus,
                Counting::Opacus => Counting::Expected,
            };
            alts.push((format!("{} step counting", a.counting.as_str()), a));
        }
    }
    let mut out = Vec::new();
    for (label, a) in alts {
        // an assumption the accountants cannot evaluate explains nothing: skipped, and the
        // verdict on the real run stands
        let Ok(r) = a.resolve() else { continue };
        let Ok(eb) = verdict::bracket(&r, delta) else {
            continue;
        };
        let ok = claimed.map(|e| verdict::claim_matches(e, &eb, tolerance));
        out.push((label, eb, ok));
    }
    Ok(out)
}
