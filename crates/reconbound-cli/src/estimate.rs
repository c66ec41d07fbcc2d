//! `reconbound estimate`: the audit estimators of [`reconbound::attacks::audit`] on scores or
//! guesses from any implementation (Opacus, JAX, …), read from a CSV file: the empirical ε
//! of per-trial scores of the two worlds ([`empirical_epsilon_of_scores`], the path `audit`
//! takes) or the one-run ε of guesses and truths ([`one_run_epsilon`]; beside it the f-DP
//! one-run ε against the curves of the run the guesses come from, [`one_run_fdp_family`],
//! when the run is given, and the same counts read against Gaussian curves,
//! [`one_run_fdp_epsilon`], labelled as assuming one).

use super::args::{parse, switch, value as v, Flags, Spec, UsageError};
use super::audit::{empirical_json, threshold_text};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::input::read_text_bounded;
use super::json::{Object, Value};
use super::output::printable;
use super::run_flags::{self, RUN_FLAGS};
use reconbound::accounting::description::{Description, Resolved};
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::run::{Adjacency, Unsupported};
use reconbound::attacks::audit::epsilon::{
    one_run_epsilon, one_run_fdp_epsilon, one_run_fdp_mu, OneRunCounts, Scores, Threshold,
};
use reconbound::attacks::audit::evaluate::{
    empirical_epsilon_max, empirical_epsilon_of_scores, Estimator, ThresholdRule,
};
use reconbound::attacks::audit::one_run_family::{one_run_fdp_family, FamilyBound};
use reconbound::attacks::audit::one_run_verdict::one_run_verdict;
use reconbound::rng::Rng;
use std::format;
use std::string::String;
use std::vec::Vec;

type Out = Result<String, Failure>;

/// The cap on a `--scores` or `--guesses` file: 256 MiB, some 20 million rows.
pub(crate) const CSV_CAP: u64 = 256 << 20;

/// The confidence parameter α by default (as `audit`'s).
const ALPHA: f64 = 0.05;

const HELP: &str = "\
usage: reconbound estimate --scores FILE.csv --delta D [--estimator cp|gdp]
         [--threshold held-out|bonferroni|VALUE] [--calibration N]
         [--calibration-rows random|first] [--seed X] [--alpha A] [--json]
       reconbound estimate --guesses FILE.csv --delta D [RUN] [--alpha A] [--json]

The estimators of 'reconbound audit' on the scores of any implementation (an Opacus or JAX
training audited by its own distinguisher): the same numbers 'audit' prints for one row
when given the same scores.

--scores FILE.csv: one trial per line, columns (named by a header line, any order)
  world   0 = trained without the canary ('out'), 1 = with it ('in')
  score   the distinguisher's score, finite; higher means 'in'
  split   (optional) calibration or test: the rows that calibrate a held-out threshold
Empirical ε as in 'audit': FP of N₀ and FN of N₁ at a threshold (score >= τ guesses 'in'),
their one-sided Clopper–Pearson upper limits FPR̄, FNR̄, then (Nasr et al. 2021 Eqs. 4–5)
  cp   (default) ε >= max(ln((1 − δ − FPR̄)/FNR̄), ln((1 − δ − FNR̄)/FPR̄)) with probability
       >= 1 − α
  gdp  μ̂ = max(Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄), 0) and the ε of μ̂-GDP at δ: an estimate, a lower
       bound only if the trade-off curve is Gaussian (Nasr et al. 2023)
The threshold:
  held-out    (default) searched on calibration rows and applied to the others, which alone
              give the counts (α/2 per rate). Calibration rows: those with split =
              calibration if the file has a split column (--calibration then does not
              apply), else N rows of each world (--calibration N, default: half the
              smaller world, rounded down) picked by a permutation seeded by --seed X
              (default 0): never the file's first rows, whose order may depend on the
              scores (a file sorted by score would void the interval). --calibration-rows
              first takes the first N rows in file order instead, for files whose order is
              independent of the scores — 'audit' splits by trial index that way, so its
              --csv scores in trial order with --calibration-rows first give its numbers
  bonferroni  searched on all rows; each limit at α/(2K), K = 2(N₀ + N₁ − 1) rules
  VALUE       fixed in advance: score >= VALUE guesses 'in' (α/2 per rate); VALUE must not
              come from these scores
A split column applies only with held-out.

--guesses FILE.csv: the one-run audit (Steinke, Nasr, Jagielski 2023), one canary per line,
columns (header line, any order)
  guess   1 (or +1) = guessed 'in', -1 = guessed 'out', 0 = abstained
  truth   1 = the canary was in the training, 0 = out (each included independently with
          probability 1/2)
m = the canaries (rows), r = the guesses (non-zero), v = the correct ones; ε is the largest
that v of r refutes at level α with the 2·m·δ term (refused unless 2·m·δ < α). The guess
rule must be fixed in advance (a rule picked after looking at the truths is not paid for).
With the run the guesses come from (RUN: the run flags below, or --run FILE), the f-DP
one-run audit (Mahloujifar, Melis, Chaudhuri 2025) against that run's own curves: ε f-DP,
the ε at δ of the least noise (the run's σ scaled by one factor) whose certified trade-off
curve the same counts refute at level α — a lower bound on the ε of the trainer if it is the
run up to its noise, for Poisson sampling, the full batch and schedules (fixed-size and
shuffled runs have no add/remove curve: none) — and whether the run's own curve is refuted
(valid for any trainer). Beside them, always, μ-GDP: μ̂, the largest μ whose μ-GDP curve the
counts refute, and its ε at δ (as jax_privacy's epsilon_one_run_fdp), which assumes a
Gaussian curve: a lower bound only for full-batch runs (randomised response at ε₀ = 1 reads
1.643 at its median outcome). None at δ = 0.

Files: comma-separated, UTF-8 (a byte-order mark is accepted), a header line first, blank
lines and lines starting with # ignored, at most 256 MiB. A malformed line, an unknown or
repeated column, or a non-finite score is refused with its line number (exit 2).

Printed: the rows of each world, then the threshold and its rule, FP/N₀, FN/N₁, FPR̄, FNR̄,
the empirical ε (a lower bound at confidence 1 − α, or the GDP estimate) and the most these
trials could show (no error at all); for --guesses m, r, v, ε, the f-DP ε against the run
and the μ-GDP reading.

Defaults: cp, held-out, α = 0.05. --delta is required.

Columns other than those named here (a trial number, a timestamp) are ignored and listed
(the text's 'columns ignored' line; JSON: ignored_columns).

JSON keys (--scores): command, estimator, threshold_rule, calibration (N, or null with a
split column or another rule), calibration_rows (random | first, or null), split_seed (the
seed of random rows, else null), calibration_out, calibration_in (calibration rows of each
world, null unless held-out), fixed_threshold, alpha, confidence, delta, trials_out,
trials_in, ignored_columns, epsilon_empirical, gdp_mu, threshold, threshold_direction, candidates, negatives,
false_positives, positives, false_negatives, fpr_upper, fnr_upper, epsilon_empirical_max
(the keys of one 'audit' row).
JSON keys (--guesses): command, estimator (one-run), alpha, confidence, delta, canaries,
guesses, correct, epsilon_empirical, epsilon_fdp, epsilon_fdp_noise_scale,
claim_refuted_fdp, p_value_fdp (null without a run, at δ = 0 or for an unsupported run),
epsilon_fdp_unavailable (why, else null), epsilon_fdp_note (what it assumes), epsilon_gdp (null at δ = 0), mu_gdp, gdp_note,
epsilon_certified, claim_refuted, claim_error (the verdict on the claim that the trainer is the
run: refuted when ε ≥ … exceeds the run's certified ε or the f-DP test refutes its curve; the
error is α per test), claim_unavailable (why there is no verdict: no run, δ = 0, fixed-size
batches or shuffled epochs; else null),
run (the run file, or null), ignored_columns.
";

/// `estimate --help` (issue 43: it fits a screen; [`HELP`] and the run flags are
/// `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound estimate --scores FILE.csv --delta D [--estimator cp|gdp]
         [--threshold held-out|bonferroni|VALUE] [--calibration N]
         [--calibration-rows random|first] [--seed X] [--alpha A] [--json]
       reconbound estimate --guesses FILE.csv --delta D [RUN] [--alpha A] [--json]

What ε do the trials of my own audit prove? The estimators of 'reconbound audit' on the
scores (or one-run guesses) of any implementation, read from a CSV file: the empirical ε, a
lower bound at confidence 1 − α, and the most these trials could show (the same numbers
'audit' prints for one row when given the same scores).

Common flags (defaults in brackets):
  --scores FILE.csv   one trial per line under a header line: world (0 = trained without
                      the canary, 1 = with it) and score (finite; higher means 'in')
  --guesses FILE.csv  the one-run audit: guess (1 'in', -1 'out', 0 abstained) and truth
                      (1 in, 0 out) per canary
  --delta D           δ (required)
  --estimator E       cp (Clopper–Pearson: a lower bound) or gdp (an estimate) [cp]
  --threshold T       held-out (picked on calibration rows, counted on the others),
                      bonferroni, or a VALUE fixed in advance [held-out]
  --alpha A           the ε holds at confidence 1 − A [0.05]
  RUN                 with --guesses, the run the guesses come from (run flags or --run
                      FILE): the f-DP ε against that run's own curves
  --json              every number at full precision, as JSON

Example (eight trials, and a threshold fixed in advance):
  printf 'world,score\\n0,0.12\\n0,0.31\\n0,0.18\\n0,0.44\\n1,0.74\\n1,0.93\\n1,0.52\\n1,0.81\\n' > scores.csv
  reconbound estimate --scores scores.csv --delta 1e-5 --threshold 0.5
";

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// A CSV file read line by line: the header's column index of each wanted column (`None`
/// for an optional one that is absent), and the text after the header, whose data lines
/// [`Table::each`] hands out one at a time (no table of all lines is built: a file of
/// millions of rows costs its text and the caller's columns).
struct Table<'a> {
    columns: Vec<Option<usize>>,
    /// The header's number of fields.
    width: usize,
    /// The text after the header line, and the number of that line.
    body: &'a str,
    header_line: usize,
    flag: &'a str,
    path: &'a str,
    /// Header names that are not columns of this command, ignored (as printed).
    ignored: Vec<String>,
}

/// The non-blank, non-comment lines of `text` from line number `first`: (number, line).
fn content_lines(text: &str, first: usize) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').enumerate().filter_map(move |(i, raw)| {
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        (!line.is_empty() && !line.starts_with('#')).then_some((first + i, line))
    })
}

impl<'a> Table<'a> {
    /// Calls `f` with each data line's number and fields, in file order, after checking
    /// that it has the header's number of fields.
    ///
    /// # Errors
    /// A line with another number of fields, no data line at all, or `f`'s error.
    fn each<F>(&self, mut f: F) -> Result<(), Failure>
    where
        F: FnMut(usize, &[&'a str]) -> Result<(), Failure>,
    {
        let mut fields: Vec<&'a str> = Vec::with_capacity(self.width);
        let mut any = false;
        for (n, line) in content_lines(self.body, self.header_line + 1) {
            fields.clear();
            fields.extend(line.split(',').map(str::trim));
            if fields.len() != self.width {
                return Err(usage(format!(
                    "flag '--{}': '{}' line {n}: {} fields, but the header names {} columns",
                    self.flag,
                    printable(self.path),
                    fields.len(),
                    self.width
                )));
            }
            any = true;
            f(n, &fields)?;
        }
        if !any {
            return Err(usage(format!(
                "flag '--{}': '{}' has no data lines after its header",
                self.flag,
                printable(self.path)
            )));
        }
        Ok(())
    }
}

/// Parse the header of `text` (the file `path` of `--flag`), which names the `required`
/// columns and may name the `optional` ones, in any order.
fn table<'a>(
    text: &'a str,
    flag: &'a str,
    path: &'a str,
    required: &[&str],
    optional: &[&str],
) -> Result<Table<'a>, Failure> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let at = |n: usize, why: String| {
        usage(format!(
            "flag '--{flag}': '{}' line {n}: {why}",
            printable(path)
        ))
    };
    let wanted = || {
        let mut all: Vec<&str> = required.to_vec();
        all.extend(optional.iter().copied());
        all.join(", ")
    };
    let Some((hn, header)) = content_lines(text, 1).next() else {
        return Err(usage(format!(
            "flag '--{flag}': '{}' has no header line (columns {})",
            printable(path),
            wanted()
        )));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    // other columns (a trial number, a timestamp) are ignored, and said so (issue 31: an
    // extra column was refused)
    let mut ignored = Vec::new();
    for (j, name) in names.iter().enumerate() {
        if !required.contains(name) && !optional.contains(name) {
            ignored.push(printable(name).chars().take(30).collect::<String>());
        }
        if names.iter().take(j).any(|m| m == name) {
            return Err(at(
                hn,
                format!("column '{name}' appears twice in the header"),
            ));
        }
    }
    let find = |c: &str| names.iter().position(|m| *m == c);
    let mut columns = Vec::new();
    for c in required {
        let Some(j) = find(c) else {
            let others = if ignored.is_empty() {
                String::new()
            } else {
                format!("; it has {}", ignored.join(", "))
            };
            return Err(at(
                hn,
                format!(
                    "the header has no column '{c}' (columns: {}{others})",
                    wanted()
                ),
            ));
        };
        columns.push(Some(j));
    }
    columns.extend(optional.iter().map(|c| find(c)));
    // the body: the text after the header's line
    let body = text.splitn(hn + 1, '\n').nth(hn).unwrap_or("");
    Ok(Table {
        columns,
        width: names.len(),
        body,
        header_line: hn,
        flag,
        path,
        ignored,
    })
}

/// Field `column` of a data line (present: the line has as many fields as the header).
fn field<'a>(fields: &[&'a str], column: Option<usize>) -> &'a str {
    column.and_then(|j| fields.get(j)).copied().unwrap_or("")
}

fn cut(s: &str) -> String {
    printable(s).chars().take(30).collect()
}

/// The scores of a `--scores` file: each world's scores in file order, and with a split
/// column each world's calibration scores first and their number.
struct ScoreFile {
    without: Vec<f64>,
    with: Vec<f64>,
    split: Option<[usize; 2]>,
    /// The file's columns that are not world, score or split, ignored.
    ignored: Vec<String>,
}

fn read_scores(path: &str) -> Result<ScoreFile, Failure> {
    let text = read_text_bounded(path, CSV_CAP, "scores")?;
    let t = table(&text, "scores", path, &["world", "score"], &["split"])?;
    let (cw, cs, cp) = match t.columns.as_slice() {
        [w, s, p] => (*w, *s, *p),
        _ => return Err(Failure::Compute(String::from("internal: column lookup"))),
    };
    let at = |n: usize, why: String| {
        usage(format!(
            "flag '--scores': '{}' line {n}: {why}",
            printable(path)
        ))
    };
    // [world][calibration?]
    let mut parts: [[Vec<f64>; 2]; 2] = Default::default();
    t.each(|n, fields| {
        let world = match field(fields, cw) {
            "0" => 0,
            "1" => 1,
            other => {
                return Err(at(
                    n,
                    format!(
                        "world '{}' is not 0 (without the canary) or 1 (with it)",
                        cut(other)
                    ),
                ))
            }
        };
        let raw = field(fields, cs);
        let score = raw
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| at(n, format!("score '{}' is not a finite number", cut(raw))))?;
        let calibrates = match cp.map(|_| field(fields, cp)) {
            None | Some("test") => false,
            Some("calibration") => true,
            Some(other) => {
                return Err(at(
                    n,
                    format!("split '{}' is not calibration or test", cut(other)),
                ))
            }
        };
        if let Some(p) = parts
            .get_mut(world)
            .and_then(|w| w.get_mut(usize::from(!calibrates)))
        {
            p.push(score);
        }
        Ok(())
    })?;
    let [[c0, e0], [c1, e1]] = parts;
    let split = cp.map(|_| [c0.len(), c1.len()]);
    let join = |mut c: Vec<f64>, e: Vec<f64>| {
        c.extend(e);
        c
    };
    Ok(ScoreFile {
        without: join(c0, e0),
        with: join(c1, e1),
        split,
        ignored: t.ignored,
    })
}

fn parse_estimator(raw: Option<&str>) -> Result<Estimator, Failure> {
    match raw.map(str::trim) {
        None | Some("cp") => Ok(Estimator::ClopperPearson),
        Some("gdp") => Ok(Estimator::Gdp),
        Some(other) => Err(usage(format!(
            "flag '--estimator': '{}' is not one of cp, gdp (for the one-run audit give --guesses)",
            cut(other)
        ))),
    }
}

/// The threshold rule `--threshold` names (held-out when absent); `calibration` is filled
/// in later for held-out.
fn parse_rule(raw: Option<&str>) -> Result<ThresholdRule, Failure> {
    Ok(match raw.map(str::trim) {
        None | Some("held-out") => ThresholdRule::HeldOut { calibration: 0 },
        Some("bonferroni") => ThresholdRule::Bonferroni,
        Some(raw) => match raw.parse::<f64>() {
            Ok(tau) if tau.is_finite() => ThresholdRule::Fixed(Threshold::at_least(tau)),
            _ => {
                return Err(usage(format!(
                    "flag '--threshold': '{}' is not held-out, bonferroni or a finite number",
                    cut(raw)
                )))
            }
        },
    })
}

/// α ∈ (0, 1) and δ ∈ [0, 1), checked in that order (GDP also needs δ > 0: see
/// [`checked_request`]).
fn check_alpha_delta(alpha: f64, delta: f64) -> Result<(f64, f64), Failure> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(usage(format!(
            "--alpha = {} is out of range: must be in (0, 1)",
            shown(alpha)
        )));
    }
    if !(0.0..1.0).contains(&delta) {
        return Err(usage(format!(
            "--delta = {} is out of range: must be in [0, 1) (in (0, 1) for gdp)",
            shown(delta)
        )));
    }
    Ok((alpha, delta))
}

/// `reconbound estimate …`.
pub(crate) fn estimate(args: &[String]) -> Out {
    let mut specs: Vec<Spec> = std::vec![
        v("scores"),
        v("guesses"),
        v("delta"),
        v("estimator"),
        v("threshold"),
        v("calibration"),
        v("calibration-rows"),
        v("seed"),
        v("alpha"),
        switch("json"),
    ];
    specs.extend(RUN_FLAGS);
    let f = parse(args, &specs)?;
    if f.help {
        let full = String::from(HELP) + "\n" + run_flags::HELP;
        return Ok(f.help_text("estimate", SHORT_HELP, full));
    }
    f.exclusive("scores", "guesses")?;
    let delta = f.f64_required("delta")?;
    let alpha = f.f64("alpha")?.unwrap_or(ALPHA);
    let (alpha, delta) = check_alpha_delta(alpha, delta)?;
    if let Some(path) = f.raw("guesses") {
        for name in [
            "estimator",
            "threshold",
            "calibration",
            "calibration-rows",
            "seed",
        ] {
            if f.has(name) {
                return Err(usage(format!(
                    "flag '--{name}' applies only with '--scores' (the one-run audit of --guesses has no threshold)"
                )));
            }
        }
        let run = guessed_run(&f)?;
        return one_run(path, alpha, delta, f.has("json"), run.as_ref());
    }
    if let Some(s) = RUN_FLAGS.iter().find(|s| f.has(s.name)) {
        return Err(usage(format!(
            "flag '--{}' applies only with '--guesses' (the run the one-run guesses are tested against)",
            s.name
        )));
    }
    let Some(path) = f.raw("scores") else {
        return Err(usage(String::from(
            "flag '--scores' (or '--guesses' for the one-run audit) is required",
        )));
    };
    let calibration = f.u64("calibration")?;
    let req = checked_request(
        f.raw("estimator"),
        f.raw("threshold"),
        calibration,
        calibration_rows(f.raw("calibration-rows"), f.u64("seed")?)?,
        alpha,
        delta,
    )?;
    // the calibration rows' flags pick rows for a held-out threshold without a split
    // column: anywhere else they would be ignored, so they are refused (issue 43)
    let row_flags = ["seed", "calibration-rows"];
    if let Some(flag) = row_flags.iter().find(|n| f.has(n)) {
        if !matches!(req.rule, ThresholdRule::HeldOut { .. }) {
            return Err(usage(format!(
                "flag '--{flag}' applies only with '--threshold held-out' (it picks the calibration rows)"
            )));
        }
    }
    let s = read_scores(path)?;
    if let Some(flag) = row_flags.iter().find(|n| f.has(n)) {
        if s.split.is_some() {
            return Err(usage(format!(
                "flag '--{flag}' does not apply: '{}' has a split column, which names the calibration rows",
                printable(path)
            )));
        }
    }
    let shown_path = printable(path);
    let source = format!("flag '--scores': '{shown_path}'");
    scores_output(&s, &source, &shown_path, req, f.has("json"))
}

/// [`calibration_rows`] for a typed request (`rows` "random" or "first").
fn calibration_rows_of(rows: &str, seed: Option<u64>) -> Result<Option<u64>, Failure> {
    calibration_rows(Some(rows), seed)
}

/// The ignored columns as a JSON array of their names.
fn ignored_json(ignored: &[String]) -> Value {
    Value::Arr(ignored.iter().map(|c| Value::Str(c.clone())).collect())
}

/// A line naming the ignored columns, or nothing.
fn ignored_line(ignored: &[String]) -> String {
    if ignored.is_empty() {
        String::new()
    } else {
        format!("  columns ignored: {}\n", ignored.join(", "))
    }
}

/// Most rows of one world: the Clopper–Pearson limits are computed for at most
/// [`reconbound::math::beta::MAX_SHAPE`] − 1 trials
/// ([`reconbound::math::beta::clopper_pearson`]).
const MAX_WORLD_ROWS: usize = reconbound::math::beta::MAX_SHAPE as usize - 1;

/// Each world has at least one row and at most [`MAX_WORLD_ROWS`], named by the file
/// (issue 31: 1e7 rows named a `--trials` flag that `estimate` does not have).
fn check_world_sizes(source: &str, n0: usize, n1: usize) -> Result<(), Failure> {
    if n0 == 0 || n1 == 0 {
        return Err(usage(format!(
            "{source} has {n0} rows of world 0 and {n1} of world 1: each world needs at least one"
        )));
    }
    if n0 > MAX_WORLD_ROWS || n1 > MAX_WORLD_ROWS {
        return Err(usage(format!(
            "{source} has {n0} rows of world 0 and {n1} of world 1: at most {MAX_WORLD_ROWS} per world (the Clopper–Pearson limits' range)"
        )));
    }
    Ok(())
}

/// `--calibration-rows random|first` (default random) and `--seed X` (default 0, with random
/// only): the seed of the calibration rows' permutation, or `None` for the first rows.
fn calibration_rows(rows: Option<&str>, seed: Option<u64>) -> Result<Option<u64>, Failure> {
    match rows {
        None | Some("random") => Ok(Some(seed.unwrap_or(0))),
        Some("first") if seed.is_none() => Ok(None),
        Some("first") => Err(usage(String::from(
            "flag '--seed' applies only with '--calibration-rows random' (it permutes the rows)",
        ))),
        Some(other) => Err(usage(format!(
            "flag '--calibration-rows': '{}' is not one of random, first",
            cut(other)
        ))),
    }
}

/// `scores` sorted, then in the order of the permutation of stream `world` of `seed`: the
/// calibration rows (the first of this order) are a uniformly random subset, independent of
/// the values, and the result depends on the scores and the seed only — not on the file's
/// order.
fn permuted_scores(scores: &[f64], seed: u64, world: u64) -> Result<Vec<f64>, Failure> {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    let order = Rng::for_trial(seed, world).permutation(sorted.len())?;
    Ok(order
        .into_iter()
        .filter_map(|i| sorted.get(i).copied())
        .collect())
}

/// What `estimate --scores` computes, its flags checked one by one.
struct ScoreRequest {
    delta: f64,
    alpha: f64,
    estimator: Estimator,
    rule: ThresholdRule,
    calibration: Option<u64>,
    /// Without a split column: the seed of the permutation that picks the calibration rows,
    /// or `None` for the first rows in file order (`--calibration-rows first`).
    seed: Option<u64>,
}

/// The output of `estimate --scores` for scores `s` (from `source`, named so in messages;
/// `shown_path` in the text).
fn scores_output(
    s: &ScoreFile,
    source: &str,
    shown_path: &str,
    req: ScoreRequest,
    json: bool,
) -> Out {
    let ScoreRequest {
        delta,
        alpha,
        estimator,
        mut rule,
        calibration,
        seed,
    } = req;
    let held_out = matches!(rule, ThresholdRule::HeldOut { .. });
    let (n0, n1) = (s.without.len(), s.with.len());
    check_world_sizes(source, n0, n1)?;
    let calibrating = match (s.split, held_out) {
        (Some(_), false) => {
            return Err(usage(format!(
                "{source} has a split column, which applies only with '--threshold held-out' (drop the column to use every row)"
            )))
        }
        (Some(_), true) if calibration.is_some() => {
            return Err(usage(format!(
                "flag '--calibration' does not apply: {source} has a split column, which chooses the calibration rows"
            )))
        }
        (Some([c0, c1]), true) => {
            for (world, c, n) in [(0, c0, n0), (1, c1, n1)] {
                if c == 0 || c == n {
                    return Err(usage(format!(
                        "{source}: world {world} has {c} calibration rows of {n}: held-out needs calibration and test rows in each world"
                    )));
                }
            }
            [c0, c1]
        }
        (None, true) => {
            let smaller = n0.min(n1) as u64;
            if smaller < 2 {
                return Err(usage(format!(
                    "{source} has {n0} rows of world 0 and {n1} of world 1: '--threshold held-out' needs at least 2 in each (calibration and test rows)"
                )));
            }
            let c = calibration.unwrap_or(smaller / 2);
            if !(1..smaller).contains(&c) {
                return Err(usage(format!(
                    "--calibration = {c} is out of range: must be in 1..={} (the smaller world's rows − 1: N rows of each world choose the threshold, the others are scored)",
                    smaller - 1
                )));
            }
            rule = ThresholdRule::HeldOut { calibration: c };
            [c as usize, c as usize]
        }
        (None, false) => [0, 0],
    };
    // Without a split column the calibration rows are a seeded random subset of each world,
    // never the file's first rows: a file sorted by score (or by anything the scores depend
    // on) would make the held-out rows depend on the calibration rows, and the interval
    // would not hold. Each world is permuted by its own stream of the seed.
    let permuted: Option<[Vec<f64>; 2]> = match (s.split, rule, seed) {
        (None, ThresholdRule::HeldOut { .. }, Some(seed)) => Some([
            permuted_scores(&s.without, seed, 0)?,
            permuted_scores(&s.with, seed, 1)?,
        ]),
        _ => None,
    };
    let scores = match &permuted {
        Some([w0, w1]) => Scores {
            without: w0,
            with: w1,
        },
        None => Scores {
            without: &s.without,
            with: &s.with,
        },
    };
    let e = empirical_epsilon_of_scores(scores, calibrating, estimator, rule, alpha, delta)?;
    let max = empirical_epsilon_max(
        estimator,
        rule,
        e.counts.negatives,
        e.counts.positives,
        alpha,
        delta,
    )?;
    let gdp = estimator == Estimator::Gdp;
    if json {
        let mut o = Object::new();
        o.str("command", "estimate")
            .str("estimator", estimator.name())
            .str("threshold_rule", rule.name());
        match (rule, s.split) {
            (ThresholdRule::HeldOut { calibration }, None) => {
                o.int("calibration", calibration);
                match seed {
                    Some(x) => o.str("calibration_rows", "random").int("split_seed", x),
                    None => o
                        .str("calibration_rows", "first")
                        .put("split_seed", Value::Null),
                }
            }
            _ => o
                .put("calibration", Value::Null)
                .put("calibration_rows", Value::Null)
                .put("split_seed", Value::Null),
        };
        match rule {
            ThresholdRule::HeldOut { .. } => o
                .int("calibration_out", calibrating[0] as u64)
                .int("calibration_in", calibrating[1] as u64),
            _ => o
                .put("calibration_out", Value::Null)
                .put("calibration_in", Value::Null),
        };
        match rule {
            ThresholdRule::Fixed(t) => o.num("fixed_threshold", t.tau),
            _ => o.put("fixed_threshold", Value::Null),
        };
        o.num("alpha", alpha)
            .num("confidence", 1.0 - alpha)
            .num("delta", delta)
            .int("trials_out", n0 as u64)
            .int("trials_in", n1 as u64)
            .put("ignored_columns", ignored_json(&s.ignored));
        empirical_json(&mut o, &e).num("epsilon_empirical_max", max);
        let mut text = o.render();
        text.push('\n');
        return Ok(text);
    }
    let level = format!("{} %", shown(100.0 * (1.0 - alpha)));
    let mut t = format!(
        "empirical ε from the scores in '{shown_path}' ({})\n  {n0} trials without the canary (world 0), {n1} with it (world 1); δ = {}, α = {}\n\n",
        if gdp {
            "GDP estimate, Nasr et al. 2023"
        } else {
            "Clopper–Pearson with δ, Nasr et al. 2021"
        },
        shown(delta),
        shown(alpha)
    );
    t.push_str(&ignored_line(&s.ignored));
    let eps_head = if gdp {
        String::from("ε GDP est.")
    } else {
        format!("ε ≥ ({level})")
    };
    t.push_str(&format!(
        "  {:>14}  {:>11}  {:>11}  {:>7}  {:>7}  {:>11}  {:>7}\n",
        format!("τ ({})", rule.name()),
        "FP/N₀",
        "FN/N₁",
        "FPR ≤",
        "FNR ≤",
        eps_head,
        "ε max"
    ));
    t.push_str(&format!(
        "  {:>14}  {:>11}  {:>11}  {:>7}  {:>7}  {:>11}  {:>7}\n\n",
        threshold_text(e.threshold),
        format!("{}/{}", e.counts.false_positives, e.counts.negatives),
        format!("{}/{}", e.counts.false_negatives, e.counts.positives),
        sig(e.fpr_upper, 3, Side::Up),
        sig(e.fnr_upper, 3, Side::Up),
        sig(e.epsilon, 4, if gdp { Side::Nearest } else { Side::Down }),
        sig(max, 4, Side::Nearest),
    ));
    t.push_str(&match (rule, s.split) {
        (ThresholdRule::HeldOut { calibration }, None) => format!(
            "  τ (held-out): the best Clopper–Pearson rule on {} {calibration} rows of each world, which\n    the estimate never reads, applied to the others, which alone give the counts;\n    FPR, FNR ≤ at α/2 per rate.\n",
            match seed {
                Some(x) => format!("a random choice (seed {x}) of"),
                None => String::from("the first (in file order)"),
            }
        ),
        (ThresholdRule::HeldOut { .. }, Some([c0, c1])) => format!(
            "  τ (held-out): the best Clopper–Pearson rule on the split = calibration rows ({c0} of world 0, {c1} of\n    world 1), applied to the test rows, which alone give the counts; FPR, FNR ≤ at α/2 per rate.\n"
        ),
        (ThresholdRule::Bonferroni, _) => format!(
            "  τ (bonferroni): searched on all rows and paid for by Bonferroni over K = 2(N₀ + N₁ − 1) = {}\n    candidate rules: FPR, FNR ≤ are one-sided limits at α/(2K).\n",
            e.candidates
        ),
        (ThresholdRule::Fixed(tau), _) => format!(
            "  τ (fixed): {}, fixed before the trials (score ≥ τ guesses 'in'); FPR, FNR ≤ at α/2 per rate.\n",
            shown(tau.tau)
        ),
    });
    if gdp {
        t.push_str(&format!(
            "  ε GDP est.: μ̂ = {}, then the ε of μ̂-GDP at δ: a lower bound only if the trade-off curve\n    is Gaussian. ε max: the most these trials could show (no error at all).\n",
            sig(e.mu.unwrap_or(0.0), 4, Side::Nearest)
        ));
    } else {
        t.push_str(&format!(
            "  ε ≥: Clopper–Pearson lower bound with δ (Nasr et al. Eqs. 4–5), with probability ≥ {level};\n    ε max: the most these trials could show (no error at all).\n"
        ));
    }
    Ok(t)
}

/// The run of the one-run guesses, if any run flag (or `--run FILE`) is given: its
/// description and resolution.
fn guessed_run(f: &Flags) -> Result<Option<(Description, Resolved)>, Failure> {
    if !RUN_FLAGS.iter().any(|s| f.has(s.name)) {
        return Ok(None);
    }
    let d = run_flags::description(f, false)?;
    let r = d.resolve()?;
    Ok(Some((d, r)))
}

/// Why a run has no family bound: the one-run game adds and removes canaries, and the crate
/// certifies add/remove curves for Poisson sampling, the full batch and schedules only.
/// Why `estimate --guesses` gives no verdict on a run certified for replace-one (issue 44, an
/// independent review: the one-run game adds and removes canaries).
const NO_ADD_REMOVE_VERDICT: &str = "the one-run game adds and removes canaries, and this run's guarantees are for replace-one at a fixed data-set size (fixed-size batches): no theorem here connects the two";

const NO_ADD_REMOVE_CURVE: &str = "the one-run game adds and removes canaries; add/remove curves are certified for Poisson sampling, the full batch and schedules, not for fixed-size batches, shuffled epochs or a replace-one run";

/// `estimate --guesses FILE`: the one-run ε of guesses and truths.
fn one_run(
    path: &str,
    alpha: f64,
    delta: f64,
    json: bool,
    run: Option<&(Description, Resolved)>,
) -> Out {
    let text = read_text_bounded(path, CSV_CAP, "guesses")?;
    let t = table(&text, "guesses", path, &["guess", "truth"], &[])?;
    let (cg, ct) = match t.columns.as_slice() {
        [g, t] => (*g, *t),
        _ => return Err(Failure::Compute(String::from("internal: column lookup"))),
    };
    let at = |n: usize, why: String| {
        usage(format!(
            "flag '--guesses': '{}' line {n}: {why}",
            printable(path)
        ))
    };
    let (mut m, mut r, mut v) = (0u64, 0u64, 0u64);
    t.each(|n, fields| {
        let guess: Option<bool> = match field(fields, cg) {
            "1" | "+1" => Some(true),
            "-1" => Some(false),
            "0" => None,
            other => {
                return Err(at(
                    n,
                    format!(
                        "guess '{}' is not 1 (in), -1 (out) or 0 (abstain)",
                        cut(other)
                    ),
                ))
            }
        };
        let truth = match field(fields, ct) {
            "1" => true,
            "0" => false,
            other => {
                return Err(at(
                    n,
                    format!("truth '{}' is not 1 (in) or 0 (out)", cut(other)),
                ))
            }
        };
        m += 1;
        if let Some(g) = guess {
            r += 1;
            v += u64::from(g == truth);
        }
        Ok(())
    })?;
    one_run_output(
        m,
        r,
        v,
        &printable(path),
        alpha,
        delta,
        json,
        &t.ignored,
        run,
    )
}

/// What the one-run guesses say against their run's own family of curves: the bound, or
/// why there is none.
enum Family {
    /// No run given.
    NoRun,
    /// δ = 0: no ε to bound.
    NoDelta,
    /// The run has no add/remove curve the family bound can use.
    Unsupported(String),
    /// The bound.
    Bound(FamilyBound),
}

/// What the family bound assumes, and what it does not.
const FDP_NOTE: &str = "a lower bound if the trainer is this run up to its noise (σ scaled); claim_refuted_fdp holds for any trainer; epsilon_empirical for any mechanism";

/// The label of the Gaussian-family reading of one-run counts.
const GDP_NOTE: &str = "assumes a Gaussian trade-off curve: a lower bound only for full-batch runs";

/// The output of `estimate --guesses` for m canaries, r guesses and v correct ones
/// (`shown_path` names their source in the text; `ignored` the file's other columns; `run`
/// the run they are tested against, if given).
#[allow(clippy::too_many_arguments)]
fn one_run_output(
    m: u64,
    r: u64,
    v: u64,
    shown_path: &str,
    alpha: f64,
    delta: f64,
    json: bool,
    ignored: &[String],
    run: Option<&(Description, Resolved)>,
) -> Out {
    let counts = OneRunCounts {
        canaries: m,
        guesses: r,
        correct: v,
    };
    let epsilon = one_run_epsilon(counts, alpha, delta, 1)?;
    // the same counts read against μ-GDP (a lower bound only for Gaussian curves)
    let mu_gdp = one_run_fdp_mu(counts, alpha, 1)?;
    let epsilon_gdp = if delta > 0.0 {
        Some(one_run_fdp_epsilon(counts, alpha, delta, 1)?)
    } else {
        None
    };
    let family = match run {
        None => Family::NoRun,
        Some(_) if delta == 0.0 => Family::NoDelta,
        Some((_, res))
            if res.relation != Adjacency::AddRemove || res.run.as_schedule().is_none() =>
        {
            Family::Unsupported(String::from(NO_ADD_REMOVE_CURVE))
        }
        Some((_, res)) => {
            match one_run_fdp_family(counts, alpha, delta, &res.run, 1, &PldConfig::default())? {
                Ok(b) => Family::Bound(b),
                Err(u) => Family::Unsupported(u.reason()),
            }
        }
    };
    // the verdict on the claim that the trainer is the run (the core's: both tests, α each),
    // or why there is none
    let verdict: Result<_, String> = match (run, delta > 0.0) {
        (None, _) => Err(String::from("no run given (the run flags or --run FILE)")),
        (Some(_), false) => Err(String::from("no verdict at δ = 0")),
        (Some((_, res)), true) => {
            let f = match &family {
                Family::Bound(b) => Some(b),
                _ => None,
            };
            match one_run_verdict(counts, alpha, delta, &res.run, f)? {
                Ok(v) => Ok(v),
                Err(u @ Unsupported::Shuffled) => Err(u.reason()),
                Err(_) => Err(String::from(NO_ADD_REMOVE_VERDICT)),
            }
        }
    };
    if json {
        let mut o = Object::new();
        o.str("command", "estimate")
            .str("estimator", "one-run")
            .num("alpha", alpha)
            .num("confidence", 1.0 - alpha)
            .num("delta", delta)
            .int("canaries", m)
            .int("guesses", r)
            .int("correct", v)
            .num("epsilon_empirical", epsilon);
        match &family {
            Family::Bound(b) => {
                o.num("epsilon_fdp", b.epsilon);
                match b.noise_scale {
                    Some(c) => o.num("epsilon_fdp_noise_scale", c),
                    None => o.put("epsilon_fdp_noise_scale", Value::Null),
                };
                o.put("claim_refuted_fdp", Value::Bool(b.claim_refuted))
                    .num("p_value_fdp", b.p_value)
                    .put("epsilon_fdp_unavailable", Value::Null)
                    .str("epsilon_fdp_note", FDP_NOTE);
            }
            other => {
                let why = match other {
                    Family::NoRun => "no run given (the run flags or --run FILE)",
                    Family::NoDelta => "no ε at δ = 0",
                    Family::Unsupported(w) => w.as_str(),
                    Family::Bound(_) => "",
                };
                o.put("epsilon_fdp", Value::Null)
                    .put("epsilon_fdp_noise_scale", Value::Null)
                    .put("claim_refuted_fdp", Value::Null)
                    .put("p_value_fdp", Value::Null)
                    .str("epsilon_fdp_unavailable", why)
                    .str("epsilon_fdp_note", FDP_NOTE);
            }
        }
        match epsilon_gdp {
            Some(e) => o.num("epsilon_gdp", e),
            None => o.put("epsilon_gdp", Value::Null),
        };
        o.num("mu_gdp", mu_gdp).str("gdp_note", GDP_NOTE);
        match &verdict {
            Ok(v) => o
                .num("epsilon_certified", v.epsilon_certified)
                .put("claim_refuted", Value::Bool(v.refuted))
                .num("claim_error", v.error)
                .put("claim_unavailable", Value::Null),
            Err(why) => o
                .put("epsilon_certified", Value::Null)
                .put("claim_refuted", Value::Null)
                .put("claim_error", Value::Null)
                .str("claim_unavailable", why),
        };
        match run {
            Some((d, res)) => o.put("run", Value::Obj(run_flags::to_json(d, res))),
            None => o.put("run", Value::Null),
        };
        o.put("ignored_columns", ignored_json(ignored));
        let mut text = o.render();
        text.push('\n');
        return Ok(text);
    }
    let level = format!("{} %", shown(100.0 * (1.0 - alpha)));
    let gdp = match epsilon_gdp {
        Some(e) => format!("ε {}", sig(e, 4, Side::Down)),
        None => String::from("ε: none at δ = 0"),
    };
    let fdp = match &family {
        Family::Bound(b) => format!(
            "  f-DP one run against the run's own curves (Mahloujifar, Melis, Chaudhuri 2025): ε ≥ {}\n    (the least noise, {} × the run's σ, whose certified curve these counts refute at level α;\n    a lower bound if the trainer is this run up to its noise)\n  the run's own curve: {} (p-value {})\n",
            sig(b.epsilon, 4, Side::Down),
            b.noise_scale.map_or(String::from("none up to 4096"), |c| sig(c, 4, Side::Up)),
            if b.claim_refuted { "REFUTED at level α" } else { "not refuted" },
            sig(b.p_value, 3, Side::Up)
        ),
        Family::NoRun => String::from(
            "  f-DP one run against a run's own curves: give the run (its flags or --run FILE)\n",
        ),
        Family::NoDelta => String::from("  f-DP one run against the run's curves: no ε at δ = 0\n"),
        Family::Unsupported(w) => format!("  f-DP one run against the run's curves: none ({w})\n"),
    };
    let claim = match &verdict {
        Ok(v) => {
            let tests = if v.refuted_by_curve.is_some() {
                "ε ≥ … above it, or the f-DP test refuting the run's curve"
            } else {
                "ε ≥ … above it"
            };
            String::from("\n")
                + &super::format::wrap(
                    "  ",
                    &format!(
                        "the claim that the trainer is this run (certified ε ≤ {}): {} ({tests}; a true claim is refuted with probability ≤ {}, α per test)",
                        sig(v.epsilon_certified, 4, Side::Up),
                        if v.refuted { "REFUTED" } else { "not refuted" },
                        shown(v.error),
                    ),
                    94,
                )
        }
        Err(why) if run.is_some() => format!("\n  no verdict on the claimed run: {why}\n"),
        Err(_) => String::new(),
    };
    Ok(format!(
        "one-run audit (Steinke, Nasr, Jagielski 2023) of the guesses in '{}'\n  m = {m} canaries, r = {r} guesses, v = {v} correct; δ = {}, α = {}\n\n  ε ≥ {} (with probability ≥ {level}; the 2·m·δ term included, the guess rule fixed in advance)\n{fdp}  read as Gaussian (μ-GDP): μ {}, {gdp} — {GDP_NOTE}\n{claim}",
        shown_path,
        shown(delta),
        shown(alpha),
        sig(epsilon, 4, Side::Down),
        sig(mu_gdp, 4, Side::Down),
    ) + &ignored_line(ignored))
}

/// The checks `estimate --scores` makes of its flags before it reads a file (α and δ
/// checked already, [`check_alpha_delta`]): the estimator, δ > 0 for GDP, the threshold rule
/// and whether `--calibration` applies.
fn checked_request(
    estimator: Option<&str>,
    threshold: Option<&str>,
    calibration: Option<u64>,
    seed: Option<u64>,
    alpha: f64,
    delta: f64,
) -> Result<ScoreRequest, Failure> {
    let estimator = parse_estimator(estimator)?;
    if estimator == Estimator::Gdp && delta == 0.0 {
        return Err(usage(String::from(
            "--delta = 0 is out of range: must be in (0, 1) with '--estimator gdp'",
        )));
    }
    let rule = parse_rule(threshold)?;
    if calibration.is_some() && !matches!(rule, ThresholdRule::HeldOut { .. }) {
        return Err(usage(String::from(
            "flag '--calibration' applies only with '--threshold held-out'",
        )));
    }
    Ok(ScoreRequest {
        delta,
        alpha,
        estimator,
        rule,
        calibration,
        seed,
    })
}

/// `estimate --scores … --json` of scores given as values ([`crate::api::estimate_scores_json`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scores_json(
    scores_out: &[f64],
    scores_in: &[f64],
    splits: Option<(&[bool], &[bool])>,
    delta: f64,
    estimator: &str,
    threshold: &str,
    calibration: Option<u64>,
    calibration_rows: &str,
    seed: Option<u64>,
    alpha: f64,
) -> Out {
    let (alpha, delta) = check_alpha_delta(alpha, delta)?;
    let req = checked_request(
        Some(estimator),
        Some(threshold),
        calibration,
        calibration_rows_of(calibration_rows, seed)?,
        alpha,
        delta,
    )?;
    for (name, xs) in [("scores_out", scores_out), ("scores_in", scores_in)] {
        if let Some((i, x)) = xs.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(usage(format!(
                "{name}[{i}] = {} is not a finite number",
                shown(*x)
            )));
        }
    }
    // with splits: each world's calibration scores first (in order), then its test scores,
    // as a file's split column gives them
    let (without, with, split) = match splits {
        None => (scores_out.to_vec(), scores_in.to_vec(), None),
        Some((s0, s1)) => {
            if s0.len() != scores_out.len() || s1.len() != scores_in.len() {
                return Err(usage(format!(
                    "splits: {} and {} flags for {} and {} scores: give one per score",
                    s0.len(),
                    s1.len(),
                    scores_out.len(),
                    scores_in.len()
                )));
            }
            let order = |xs: &[f64], flags: &[bool]| {
                let cal = xs.iter().zip(flags).filter(|(_, &c)| c).map(|(x, _)| *x);
                let test = xs.iter().zip(flags).filter(|(_, &c)| !c).map(|(x, _)| *x);
                let n = flags.iter().filter(|&&c| c).count();
                (cal.chain(test).collect::<Vec<f64>>(), n)
            };
            let ((w0, c0), (w1, c1)) = (order(scores_out, s0), order(scores_in, s1));
            (w0, w1, Some([c0, c1]))
        }
    };
    let s = ScoreFile {
        without,
        with,
        split,
        ignored: Vec::new(),
    };
    scores_output(&s, "the scores", "the scores", req, true)
}

/// `estimate --guesses … --json` of guesses given as values ([`crate::api::estimate_guesses_json`]).
pub(crate) fn guesses_json(
    guesses: &[i64],
    truths: &[i64],
    delta: f64,
    alpha: f64,
    run_args: &[String],
) -> Out {
    let (alpha, delta) = check_alpha_delta(alpha, delta)?;
    let run = guessed_run(&parse(run_args, &RUN_FLAGS)?)?;
    if guesses.len() != truths.len() {
        return Err(usage(format!(
            "guesses ({}) and truths ({}) differ in length",
            guesses.len(),
            truths.len()
        )));
    }
    let (mut r, mut v) = (0u64, 0u64);
    for (i, (&g, &t)) in guesses.iter().zip(truths).enumerate() {
        let truth = match t {
            1 => true,
            0 => false,
            other => {
                return Err(usage(format!(
                    "truths[{i}] = {other} is not 1 (in) or 0 (out)"
                )))
            }
        };
        match g {
            1 | -1 => {
                r += 1;
                v += u64::from((g == 1) == truth);
            }
            0 => {}
            other => {
                return Err(usage(format!(
                    "guesses[{i}] = {other} is not 1 (in), -1 (out) or 0 (abstain)"
                )))
            }
        }
    }
    one_run_output(
        guesses.len() as u64,
        r,
        v,
        "the guesses",
        alpha,
        delta,
        true,
        &[],
        run.as_ref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: 1e7 rows in a world named a `--trials` flag; the file is named instead.
    #[test]
    fn a_world_beyond_the_clopper_pearson_range_names_the_file() {
        let src = "flag '--scores': 'big.csv'";
        assert!(check_world_sizes(src, MAX_WORLD_ROWS, 1).is_ok());
        match check_world_sizes(src, 10_000_000, 5) {
            Err(Failure::Usage(UsageError(m))) => {
                assert!(
                    m.starts_with(src) && m.contains("at most 9999999") && !m.contains("--trials"),
                    "{m}"
                );
            }
            _ => panic!("not a usage error"),
        }
        assert!(check_world_sizes(src, 0, 5).is_err());
    }
}
