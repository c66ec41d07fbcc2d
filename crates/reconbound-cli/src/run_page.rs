//! `reconbound report --run FILE`: the page of the user's own run, with no training — the
//! one-line answer first (membership and reconstruction against a blind guess), the claimed ε
//! checked ([`super::check`]), the certified ε bracket, the trade-off curve (TPR at FPR, the
//! ROC, the advantage), γ for the user's prior with its curve over the prior size, the MSE
//! bound for the data's range. Every number is a value of the JSON (`--json`), rendered by
//! the code that renders `bound`, `check` and `tradeoff`; nothing is computed here.

use super::args::{parse, switch, value, Spec, UsageError};
use super::attack_run::rero_bounds;
use super::check;
use super::commands::{defaults, BoundConfig};
use super::failure::Failure;
use super::format::plain;
use super::format::{fpr_label, sig, Side};
use super::html::{digits, figure, vacuous, Page, STYLE};
use super::json::{Object, Value};
use super::output::{check_distinct, check_writable, write_whole};
use super::run_flags;
use reconbound::accounting::description::Sampler;
use reconbound::accounting::guarantees::Prior;
use reconbound::accounting::pld::PldConfig;
use reconbound::accounting::run::Adjacency;
use reconbound::accounting::tradeoff::TradeoffCurve;
use std::format;
use std::string::{String, ToString};
use std::time::Instant;
use std::vec::Vec;

/// The page's default file.
pub(crate) const OUT: &str = "reconbound-run-report.html";

/// The prior sizes of the ReRo curve.
const PRIOR_SIZES: [u64; 16] = [
    2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 70, 100, 200, 300, 500, 1000,
];

/// Points of the trade-off curve (FPR from 1e-4 to 1).
const TRADEOFF_POINTS: usize = 120;

pub(crate) const HELP: &str = "\
usage: reconbound report --run FILE [--claimed-epsilon E [--library NAME] [--tolerance X]]
                         [--delta D] [--prior-size M | --kappa K] [--diameter X]
                         [--scores FILE.csv | --guesses FILE.csv] [--out FILE.html] [--quiet] [--json]

The page of YOUR run, with no training: the run file (reconbound run ... --json; from Python
reconbound.write_run, from_opacus, from_dp_event) is accounted as it is described. The page
answers first, in one line, how well someone could tell whether a record was in training (the
best membership attack's TPR at 1 % FPR, against a blind guess's 1 %) and reconstruct it (the
chance of picking the right one of M candidates, against 1/M); then the claimed ε checked
(reconbound check), the certified ε bracket, the trade-off curve, γ for the prior and its
curve over the prior size, and Guo et al.'s MSE bound for data of per-coordinate diameter X.
With --scores or --guesses (your own canary runs, the CSV files of 'reconbound estimate
--help'): the audit's ε beside the certified one, and its point under the trade-off curve.
Defaults: δ 1e-5, M = 10, X = 1, --out reconbound-run-report.html (written whole: a
failed write leaves the old file; the run file itself is refused as --out).
Without --run, 'report' is the crate's own demo (it trains a model): reconbound report --help.

JSON keys: command (report), kind (run), run (the run file), delta, check (reconbound check's
object, or null without a claim), bound (reconbound bound's object), audit (reconbound
estimate's object, or null), tradeoff [[fpr, tpr]]
(the certified TPR upper bound), rero_curve [{prior_size, gamma, gamma_balle}] (null for a
schedule of phases), answer (the one-line answer), out, seconds.
";

/// What `report --run FILE --help` adds to [`HELP`] (issue 43).
const EXAMPLE: &str = "\
Example (an Opacus run described once, then its page):
  reconbound run --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 30 --counting opacus --json > run.json
  reconbound report --run run.json --out run.html
";

fn specs() -> Vec<Spec> {
    std::vec![
        value("run"),
        value("claimed-epsilon"),
        value("library"),
        value("tolerance"),
        value("delta"),
        value("prior-size"),
        value("kappa"),
        value("diameter"),
        value("out"),
        value("scores"),
        value("guesses"),
        switch("json"),
        switch("quiet"),
    ]
}

/// Whether `report`'s arguments ask for the page of a run file.
pub(crate) fn wants(args: &[String]) -> bool {
    args.iter().any(|a| a == "--run" || a.starts_with("--run="))
}

/// `reconbound report --run FILE …`.
pub(crate) fn report(args: &[String]) -> Result<String, Failure> {
    let start = Instant::now();
    let f = parse(args, &specs())?;
    if f.help {
        let short = String::from(HELP) + "\n" + EXAMPLE;
        return Ok(f.help_text("report --run FILE", &short, String::from(HELP)));
    }
    let Some(path) = f.raw("run") else {
        return Err(UsageError(String::from("flag '--run' is required")).into());
    };
    if f.has("claimed-epsilon") && !f.has("delta") {
        return Err(UsageError(String::from(
            "flag '--delta' is required with '--claimed-epsilon' (an ε without its δ claims nothing)",
        ))
        .into());
    }
    for flag in ["library", "tolerance"] {
        if f.has(flag) && !f.has("claimed-epsilon") {
            return Err(UsageError(format!(
                "flag '--{flag}' applies to a claim: give '--claimed-epsilon' with it"
            ))
            .into());
        }
    }
    let out = f.raw("out").unwrap_or(OUT);
    f.exclusive("scores", "guesses")?;
    let mut inputs = std::vec![("run", path)];
    for flag in ["scores", "guesses"] {
        if let Some(p) = f.raw(flag) {
            inputs.push((flag, p));
        }
    }
    check_distinct(&[("out", out)], &inputs)?;
    check_writable("out", out)?;
    let run_f = parse(
        &[String::from("--run"), String::from(path)],
        &run_flags::RUN_FLAGS,
    )?;
    let d = run_flags::description(&run_f, false)?;
    let r = d.resolve()?;
    if matches!(d.sampler, Sampler::FixedSize | Sampler::Shuffled) {
        return Err(UsageError(format!(
            "flag '--run': the page accounts Poisson runs and the full batch; {} batches have no trade-off curve here ('reconbound check --run {path}' gives their ε bracket)",
            d.sampler.as_str()
        ))
        .into());
    }
    let Some(schedule) = r.run.as_schedule() else {
        return Err(UsageError(String::from("flag '--run': not a Poisson run")).into());
    };
    // under replace-one the full batch's run is already the Gaussian of sensitivity 2C
    let schedule = schedule.clone();
    if r.relation == Adjacency::ReplaceOne
        && schedule.phases().iter().any(|p| p.sampling_rate < 1.0)
    {
        return Err(UsageError(String::from(
            "flag '--run': replace-one with Poisson sampling has no certified upper bound here ('reconbound check' gives its lower bound)",
        ))
        .into());
    }
    let delta = f.f64("delta")?.unwrap_or(defaults::DELTA);
    reconbound::error::check_open_unit("delta", delta)?;
    f.exclusive("kappa", "prior-size")?;
    let prior = match (f.f64("kappa")?, f.u64("prior-size")?) {
        (Some(k), _) => Prior::baseline(k)?,
        (None, m) => {
            let m = m.unwrap_or(defaults::PRIOR_SIZE);
            if !(2..=1_000_000).contains(&m) {
                return Err(UsageError(format!(
                    "--prior-size = {m} is out of range: must be in 2..=1000000"
                ))
                .into());
            }
            Prior::uniform(m)?
        }
    };
    let diameter = f.f64("diameter")?.unwrap_or(defaults::DIAMETER);
    reconbound::error::check_positive("diameter", diameter)?;
    // a schedule of one phase (Opacus's history of one call) is shown as that phase
    let is_schedule = schedule.phases().len() > 1;
    let bound = BoundConfig {
        schedule: schedule.clone(),
        is_schedule,
        delta,
        prior,
        diameter,
        rate_note: String::new(),
    }
    .compute()?;
    let check_obj = match f.raw("claimed-epsilon") {
        Some(e) => {
            let mut a = std::vec![
                String::from("--run"),
                String::from(path),
                String::from("--claimed-epsilon"),
                e.to_string(),
                String::from("--delta"),
                delta.to_string(),
                String::from("--json"),
            ];
            for flag in ["library", "tolerance"] {
                if let Some(v) = f.raw(flag) {
                    a.push(format!("--{flag}"));
                    a.push(v.to_string());
                }
            }
            let (text, _) = check::check(&a)?;
            match super::json::parse(text.trim()) {
                Ok(v @ Value::Obj(_)) => v,
                _ => return Err(Failure::Compute(String::from("internal: check's JSON"))),
            }
        }
        None => Value::Null,
    };
    // the user's own canary runs: `estimate` on them, as it prints them
    let audit = match (f.raw("scores"), f.raw("guesses")) {
        (Some(file), _) | (None, Some(file)) => {
            let flag = if f.has("scores") {
                "--scores"
            } else {
                "--guesses"
            };
            let a = [flag, file, "--delta", &delta.to_string(), "--json"].map(String::from);
            let text = super::estimate::estimate(&a)?;
            match super::json::parse(text.trim()) {
                Ok(v @ Value::Obj(_)) => v,
                _ => return Err(Failure::Compute(String::from("internal: estimate's JSON"))),
            }
        }
        _ => Value::Null,
    };
    let tc = TradeoffCurve::of_schedule(&schedule, 1e-3, &PldConfig::default())?;
    let curve = tc.points(TRADEOFF_POINTS, 1e-4)?;
    // the audit's corner (FPR̄, TPR̲) against the certified TPR at FPR̄: above it, the trainer
    // is not the mechanism described (or the audit's 5 % chance)
    let corner = match &audit {
        Value::Obj(a) => match (
            a.get("fpr_upper").and_then(Value::as_f64),
            a.get("fnr_upper").and_then(Value::as_f64),
        ) {
            (Some(fpr), Some(fnr)) => {
                let tpr = (1.0 - fnr).max(0.0);
                let (bound, above) = tc.audit_corner(fpr, tpr)?;
                Some((tpr, bound, above))
            }
            _ => None,
        },
        _ => None,
    };
    let tradeoff: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| p.0 < 1.0)
        .map(|&(x, b)| (x, b.complement().upper))
        .collect();
    let rero_curve = match schedule.as_single() {
        Some(p) => {
            let mut pts = Vec::new();
            for m in PRIOR_SIZES {
                if let Some(b) = rero_bounds(
                    1.0 / m as f64,
                    p.sampling_rate,
                    &[p.noise_multiplier],
                    p.steps,
                )?
                .into_iter()
                .next()
                {
                    pts.push((m, b.gamma, b.gamma_balle));
                }
            }
            Some(pts)
        }
        None => None,
    };
    let mut o = Object::new();
    o.str("command", "report")
        .str("kind", "run")
        .put("run", Value::Obj(run_flags::to_json(&d, &r)))
        .num("delta", delta)
        .put("check", check_obj)
        .put("bound", Value::Obj(bound.to_json()))
        .put("audit", audit);
    match corner {
        Some((tpr, bound, above)) => {
            o.num("audit_tpr_lower", tpr)
                .num("audit_curve_tpr", bound)
                .put("audit_above_curve", Value::Bool(above));
        }
        None => {
            o.put("audit_tpr_lower", Value::Null)
                .put("audit_curve_tpr", Value::Null)
                .put("audit_above_curve", Value::Null);
        }
    }
    o.put(
        "tradeoff",
        Value::Arr(
            tradeoff
                .iter()
                .map(|&(x, y)| Value::Arr(std::vec![Value::Num(x), Value::Num(y)]))
                .collect(),
        ),
    );
    match &rero_curve {
        Some(pts) => o.put(
            "rero_curve",
            Value::Arr(
                pts.iter()
                    .map(|&(m, g, b)| {
                        let mut x = Object::new();
                        x.int("prior_size", m).num("gamma", g).num("gamma_balle", b);
                        Value::Obj(x)
                    })
                    .collect(),
            ),
        ),
        None => o.put("rero_curve", Value::Null),
    };
    let answer = answer(&o);
    o.str("answer", &answer).str("out", out);
    let subtitle = format!(
        "{}, T = {}, σ over the sensitivity = {}{}",
        if is_schedule {
            String::from("schedule of phases")
        } else if r.sampling_rate >= 1.0 {
            String::from("full batch")
        } else {
            format!(
                "Poisson sampling, q = {}",
                plain(r.sampling_rate, digits::INPUT)
            )
        },
        r.steps,
        plain(r.accounted_noise_multiplier, digits::INPUT),
        match (r.relation, r.microbatched) {
            (Adjacency::ReplaceOne, _) => " (replace-one: sensitivity 2C)",
            (_, true) => " (microbatches: sensitivity 2C)",
            _ => "",
        }
    );
    let mut points = Vec::new();
    {
        let p = Page { r: &o };
        if let (Some(fpr), Some(fnr)) = (p.f("audit.fpr_upper"), p.f("audit.fnr_upper")) {
            let tpr = (1.0 - fnr).max(0.0);
            points.push(super::svg::Estimates {
                label: format!(
                    "your audit: FPR ≤ {}, TPR ≥ {} together at 95 %",
                    sig(fpr, digits::ERROR_RATE, Side::Up),
                    sig(tpr, digits::ERROR_RATE, Side::Down)
                ),
                points: std::vec![(fpr.max(1e-4), tpr, tpr, tpr)],
                colour: "#2ca02c",
            });
        }
    }
    let roc = super::tradeoff::roc_svg(&curve, &subtitle, points);
    let rero_svg = rero_curve
        .as_ref()
        .map(|pts| rero_plot(pts, &subtitle))
        .unwrap_or_default();
    o.num("seconds", start.elapsed().as_secs_f64());
    let page = page(&o, path, &roc, &rero_svg, &run_flags::text(&d, &r));
    write_whole("out", out, &page)?;
    if f.has("json") {
        return Ok(o.render() + "\n");
    }
    let claim = match at_str(&o, "check", "message") {
        Some(m) => format!("{m}\n"),
        None => String::new(),
    };
    Ok(format!(
        "{answer}\n{claim}wrote the page of the run to {out}\n"
    ))
}

/// The string at `o[outer][key]`, if there is one.
fn at_str(o: &Object, outer: &str, key: &str) -> Option<String> {
    match o.get(outer) {
        Some(Value::Obj(inner)) => match inner.get(key) {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The one-line answer, from the JSON's numbers, rounded as the page and `bound` round them
/// (issue 43: the number to quote for reconstruction is the tightest certified one, said with
/// why; a bound of 1 is "no information"; the certified ε last).
fn answer(o: &Object) -> String {
    let p = Page { r: o };
    let fpr = p
        .f("bound.membership.1.fpr")
        .map_or_else(|| String::from("1 %"), fpr_label);
    let member = match p.f("bound.membership.1.tpr") {
        Some(t) if vacuous(t, digits::TPR) => format!(
            "nothing limits a membership attack's true-positive rate at {fpr} false positives (no information: the bound is 1)"
        ),
        Some(t) => format!(
            "a membership attack's true-positive rate at {fpr} false positives is at most {} (a blind guess: {fpr})",
            pct(t, digits::TPR, Side::Up)
        ),
        None => String::from("no certified membership curve for this run"),
    };
    let tight = p.tightest("bound");
    let kappa = p
        .f("bound.kappa")
        .map_or_else(|| String::from("–"), |k| plain(k, digits::INPUT));
    let recon = match (p.f(&tight.key), p.f("bound.prior_size")) {
        (Some(g), _) if vacuous(g, digits::GAMMA) => format!(
            "nothing limits how often a reconstruction succeeds (no information: the bound is 1; a blind guess: {kappa})"
        ),
        (Some(g), m) => format!(
            "{} succeeds with probability at most {} (a blind guess: {kappa}) — {}, the tightest certified bound: {}",
            match m {
                Some(m) => format!("picking the right one of {} equally likely candidates", m as u64),
                None => String::from("reconstruction"),
            },
            sig(g, digits::GAMMA, Side::Up),
            tight.name,
            tight.why
        ),
        (None, _) => String::from("no certified reconstruction bound for this run"),
    };
    let eps = match (p.f("bound.epsilon_pld"), p.f("delta")) {
        (Some(e), Some(d)) => format!(
            "; the run is ({}, {})-DP by the certified PLD accountant",
            sig(e, digits::EPSILON, Side::Up),
            plain(d, 3)
        ),
        _ => String::new(),
    };
    format!("For this run, {member}; {recon}{eps}.")
}

/// A probability as a percentage, to `digits` significant digits towards `side` (the digits
/// `bound` prints the probability with: one rounding, of 100·x).
fn pct(x: f64, digits: usize, side: Side) -> String {
    // the product is rounded once: nudge it one ulp towards the side before rounding to the
    // digits shown (an independent review)
    let y = 100.0 * x;
    let y = match side {
        Side::Up => y.next_up(),
        Side::Down => y.next_down(),
        Side::Nearest => y,
    };
    format!("{} %", sig(y, digits, side))
}

fn rero_plot(pts: &[(u64, f64, f64)], subtitle: &str) -> String {
    use super::svg;
    svg::curve_plot_svg(&svg::CurvePlot {
        y_log: false,
        // the powers of ten the prior sizes span (issue 43: powers of two ran to 1024)
        decades: true,
        y_max: 1.0,
        titles: svg::Titles {
            title: "Reconstruction robustness against the prior size",
            subtitle,
            x_label: "prior size m (uniform prior, κ = 1/m)",
            y_label: "P[exact reconstruction]",
        },
        curves: std::vec![
            svg::Curve {
                label: String::from("γ, Hayes et al. 2023 (certified)"),
                points: pts.iter().map(|&(m, g, _)| (m as f64, g)).collect(),
                stroke: svg::CERTIFIED,
            },
            svg::Curve {
                label: String::from("γ from RDP, Balle et al. 2022"),
                points: pts.iter().map(|&(m, _, b)| (m as f64, b)).collect(),
                stroke: svg::FROM_RDP,
            },
            svg::Curve {
                label: String::from("baseline κ = 1/m"),
                points: pts
                    .iter()
                    .map(|&(m, _, _)| (m as f64, 1.0 / m as f64))
                    .collect(),
                stroke: svg::REFERENCE,
            },
        ],
        estimates: Vec::new(),
    })
}

fn page(o: &Object, path: &str, roc: &str, rero: &str, run_text: &str) -> String {
    use super::svg::escape;
    let p = Page { r: o };
    let mut section = 0;
    let mut next = || {
        section += 1;
        section
    };
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<title>reconbound: your run</title>\n<style>");
    h.push_str(STYLE);
    h.push_str("</style>\n</head>\n<body>\n");
    h.push_str(
        "<h1>Your run: could someone tell a record was in training, or reconstruct it?</h1>\n",
    );
    h.push_str(&format!(
        "<p class=\"sub\">The page of a run file ({}), accounted as described — no model was trained here — reconbound {}, δ = {}</p>\n",
        escape(path),
        env!("CARGO_PKG_VERSION"),
        p.n("delta", 3, Side::Nearest, "epsilon"),
    ));
    h.push_str(&format!(
        "<section id=\"answer\">\n<div class=\"summary\"><p><b>{}</b></p>\n",
        p.t("answer")
    ));
    if p.f("check.claimed_epsilon").is_some() {
        h.push_str(&format!(
            "<p>The claimed ε, checked (<a href=\"#claim\">§1</a>): {}</p>\n",
            p.t("check.message")
        ));
    }
    h.push_str("</div>\n</section>\n");

    if p.f("check.claimed_epsilon").is_some() {
        h.push_str(&format!(
            "<section id=\"claim\">\n<h2>{}. The claimed ε, checked</h2>\n<table>\n",
            next()
        ));
        h.push_str(&format!(
            "<tr><th>claimed ε (by {})</th><td class=\"r\">{}</td></tr>\n<tr><th>certified lower end ({})</th><td class=\"r\">{}</td></tr>\n<tr><th>certified upper end ({})</th><td class=\"r\">{}</td></tr>\n<tr><th>verdict</th><td>{}</td></tr>\n",
            p.t("check.library"),
            p.n("check.claimed_epsilon", 6, Side::Nearest, "claim"),
            p.t("check.epsilon_lower_by"),
            p.n("check.epsilon_lower", 6, Side::Down, "claim"),
            p.t("check.epsilon_upper_by"),
            p.n("check.epsilon_upper", 6, Side::Up, "claim"),
            p.t("check.verdict"),
        ));
        h.push_str("</table>\n<p class=\"note\">Optimistic: below what the run certifiably spends (the run is not DP at the claimed ε — a privacy bug). Consistent: within the certified bracket or the library's stated precision. Conservative: a true guarantee, looser than the run's.</p>\n</section>\n");
    }

    h.push_str(&format!(
        "<section id=\"epsilon\">\n<h2>{}. Privacy: ε at δ</h2>\n<table>\n",
        next()
    ));
    h.push_str(&format!(
        "<tr><th>ε by the certified PLD (quote this)</th><td class=\"r\">≤ {}</td><td>the exact ε is ≥ {} (certified bracket)</td></tr>\n<tr><th>ε by RDP (improved conversion)</th><td class=\"r\">≤ {}</td><td>order α = {}</td></tr>\n",
        p.n("bound.epsilon_pld", digits::EPSILON, Side::Up, "epsilon"),
        p.n("bound.epsilon_pld_lower", digits::EPSILON, Side::Down, "epsilon"),
        p.n("bound.epsilon_rdp", digits::EPSILON, Side::Up, "epsilon"),
        p.n("bound.best_order", digits::ORDER, Side::Nearest, "epsilon"),
    ));
    h.push_str("</table>\n</section>\n");

    h.push_str(&format!("<section id=\"tradeoff\">\n<h2>{}. Membership: the certified trade-off curve</h2>\n<table>\n<tr><th>false-positive rate</th><th>true-positive rate of the best attack, at most</th></tr>\n", next()));
    for i in 0..3 {
        // the false-positive rate as `bound` labels it (1 %, not 0.01)
        let fpr = p
            .f(&format!("bound.membership.{i}.fpr"))
            .map_or_else(|| String::from("–"), fpr_label);
        h.push_str(&format!(
            "<tr><td class=\"r\">{fpr}</td><td class=\"r\">{}</td></tr>\n",
            p.prob_upper(
                &format!("bound.membership.{i}.tpr"),
                digits::TPR,
                "tradeoff"
            ),
        ));
    }
    h.push_str(&match p.f("bound.advantage") {
        Some(a) if vacuous(a, digits::TPR) => String::from(
            "</table>\n<p>No information on an attack's TPR − FPR (the advantage): its bound is 1.</p>\n",
        ),
        _ => format!(
            "</table>\n<p>No attack's TPR − FPR exceeds {} (the advantage).</p>\n",
            p.n("bound.advantage", digits::TPR, Side::Up, "tradeoff")
        ),
    });
    h.push_str(&figure(
        roc,
        "The certified trade-off curve 1 − f(FPR) of the run (Dong, Roth & Su 2022, f-DP; computed from the certified PLD): every membership attack on this run lies on or below it.",
    ));
    h.push_str("</section>\n");

    h.push_str(&format!(
        "<section id=\"rero\">\n<h2>{}. Reconstruction</h2>\n<table>\n",
        next()
    ));
    h.push_str(&format!(
        "<tr><th>baseline κ (a blind guess)</th><td class=\"r\">{}</td></tr>\n<tr><th>γ for DP-SGD, Hayes et al. 2023{}</th><td class=\"r\">{}</td></tr>\n<tr><th>γ from RDP, optimal conversion, Riess et al. 2026</th><td class=\"r\">{}</td></tr>\n<tr><th>γ from RDP, Balle et al. 2022 Thm 2</th><td class=\"r\">{}</td></tr>\n",
        p.n("bound.kappa", digits::INPUT, Side::Nearest, "rero"),
        if p.t("bound.tightest") == "hayes" {
            " (the tightest: quote this)"
        } else {
            ""
        },
        p.prob_upper("bound.gamma", digits::GAMMA, "rero"),
        p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero"),
        p.prob_upper("bound.gamma_balle", digits::GAMMA, "rero"),
    ));
    h.push_str("</table>\n");
    if rero.is_empty() {
        h.push_str(
            "<p class=\"note\">(No curve over the prior size for a schedule of phases.)</p>\n",
        );
    } else {
        h.push_str(&figure(
            rero,
            &format!(
                "γ against the prior size m: the probability that any reconstruction picks the right one of m equally likely candidates. γ from RDP by the optimal conversion (Riess et al. 2026) is computed for your prior only: {} (the table above).",
                p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero")
            ),
        ));
    }
    h.push_str("</section>\n");

    h.push_str(&format!(
        "<section id=\"mse\">\n<h2>{}. Reconstruction error</h2>\n",
        next()
    ));
    h.push_str(&format!(
        "<p>Any unbiased reconstruction of a record whose coordinates range over an interval of length {} has mean squared error per coordinate ≥ {} (Guo et al. 2022, Thm 1, from the (2, ε)-RDP under substitution, ε = {}).</p>\n</section>\n",
        p.n("bound.diameter", digits::INPUT, Side::Nearest, "mse"),
        p.n("bound.mse_lower_bound", digits::MSE, Side::Down, "mse"),
        p.n("bound.rdp_order2_substitution", digits::ORDER, Side::Up, "mse"),
    ));

    if p.f("audit.epsilon_empirical").is_some() {
        let one_run = p.t("audit.estimator") == "one-run";
        h.push_str(&format!(
            "<section id=\"audit\">\n<h2>{}. Your audit, beside the bound</h2>\n<table>\n",
            next()
        ));
        if one_run {
            h.push_str(&format!(
                "<tr><th>canaries, guesses, correct</th><td class=\"r\">{}, {}, {}</td></tr>\n",
                p.n("audit.canaries", 1, Side::Nearest, "audit"),
                p.n("audit.guesses", 1, Side::Nearest, "audit"),
                p.n("audit.correct", 1, Side::Nearest, "audit"),
            ));
        } else {
            h.push_str(&format!(
                "<tr><th>trials out, in</th><td class=\"r\">{}, {}</td></tr>\n<tr><th>FPR, FNR (95 % upper limits)</th><td class=\"r\">{}, {}</td></tr>\n",
                p.n("audit.trials_out", 1, Side::Nearest, "audit"),
                p.n("audit.trials_in", 1, Side::Nearest, "audit"),
                p.n("audit.fpr_upper", digits::ERROR_RATE, Side::Up, "audit"),
                p.n("audit.fnr_upper", digits::ERROR_RATE, Side::Up, "audit"),
            ));
        }
        h.push_str(&format!(
            "<tr><th>ε shown by the audit ({})</th><td class=\"r\">≥ {}</td></tr>\n<tr><th>ε certified for the run (PLD)</th><td class=\"r\">≤ {}</td></tr>\n</table>\n",
            match p.t("audit.estimator").as_str() {
                "one-run" => "Steinke, Nasr &amp; Jagielski 2023, one run, 95 %",
                "gdp" => "Nasr et al. 2023, a Gaussian-DP estimate, 95 %",
                _ => "Nasr et al. 2021, Clopper–Pearson, 95 %",
            },
            p.n("audit.epsilon_empirical", digits::AUDIT_EPSILON, Side::Down, "audit"),
            p.n("bound.epsilon_pld", digits::EPSILON, Side::Up, "audit"),
        ));
        if let (Some(tpr), Some(curve)) = (p.f("audit_tpr_lower"), p.f("audit_curve_tpr")) {
            // the curve at the audit's own FPR, then the audit's TPR against it (issue 43)
            h.push_str(&format!(
                "<p>Its point, at a false-positive rate of its own: at its FPR ≤ {} the certified curve allows {}; its TPR ≥ {} (the two limits hold together at 95 %) lies {}.</p>\n",
                p.n("audit.fpr_upper", digits::ERROR_RATE, Side::Up, "tradeoff"),
                if vacuous(curve, digits::TPR) {
                    String::from("any true-positive rate (no information there)")
                } else {
                    format!(
                        "a true-positive rate of at most {}",
                        p.n("audit_curve_tpr", digits::TPR, Side::Up, "tradeoff")
                    )
                },
                p.n("audit_tpr_lower", digits::TPR, Side::Down, "tradeoff"),
                if tpr > curve { "above it" } else { "under it, as it must" },
            ));
        }
        let (e, b) = (p.f("audit.epsilon_empirical"), p.f("bound.epsilon_pld"));
        let above =
            matches!((e, b), (Some(e), Some(b)) if e > b) || p.t("audit_above_curve") == "true";
        h.push_str(if above {
            "<p><b>The audit shows more than the run certifies.</b> Either the trainer is not the mechanism this run file describes (a sampler, noise, clipping or step count other than stated), the scores are not of this run, or this is the audit's 5 % chance of error: rerun it with fresh canaries before concluding.</p>\n"
        } else {
            "<p class=\"note\">The audit is a lower bound (at 95 % confidence) on the ε of the training that produced its scores; it lies at or below the certified ε and its point under the curve, as they must for a trainer that is the mechanism described. The gap is the audit's power, not a looseness of the bound.</p>\n"
        });
        h.push_str("</section>\n");
    }
    h.push_str(&format!(
        "<section id=\"run\">\n<h2>{}. The run</h2>\n",
        next()
    ));
    h.push_str(&format!("<pre>{}</pre>\n", escape(run_text)));
    h.push_str(&format!(
        "<p>Reproduce: <code>reconbound report --run {}</code> (this page), <code>reconbound check --run {}</code> (a claim), <code>reconbound bound --run {}</code> (every number in the terminal).</p>\n</section>\n",
        escape(&super::html::shell_word(path)),
        escape(&super::html::shell_word(path)),
        escape(&super::html::shell_word(path)),
    ));
    h.push_str("<section id=\"refs\">\n<h2>References</h2>\n<ul class=\"note\">\n<li>Dong, Roth &amp; Su, Gaussian differential privacy, JRSS B 2022 (trade-off curves).</li>\n<li>Hayes, Mahloujifar &amp; Balle, Bounding training data reconstruction in DP-SGD, NeurIPS 2023 (γ).</li>\n<li>Balle, Cherubin &amp; Hayes, Reconstructing training data with informed adversaries, IEEE S&amp;P 2022 (γ from RDP).</li>\n<li>Guo, Karrer, Chaudhuri &amp; van der Maaten, Bounding training data reconstruction in private (deep) learning, ICML 2022 (MSE).</li>\n<li>Riess, Gomez, du Pin Calmon, Schnabel &amp; Kaissis, arXiv:2602.04562, 2026 (γ from RDP, the optimal conversion).</li>\n<li>Mironov, Talwar &amp; Zhang 2019 (RDP of the sampled Gaussian); Koskela, Jälkö &amp; Honkela 2020 and Gopi, Lee &amp; Wutschitz 2021 (numerical PLD accounting).</li>\n<li>Nasr, Song, Thakurta, Papernot &amp; Carlini, Adversary instantiation, IEEE S&amp;P 2021 (an audit's ε by Clopper–Pearson); Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini &amp; Terzis, Tight auditing of differentially private machine learning, USENIX Security 2023 (the Gaussian-DP estimate); Steinke, Nasr &amp; Jagielski, Privacy auditing with one (1) training run, NeurIPS 2023 (one-run audits).</li>\n</ul>\n</section>\n</body>\n</html>\n");
    h
}
