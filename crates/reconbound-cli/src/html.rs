//! The page of `reconbound report`: one self-contained HTML file (inline CSS and SVG, no
//! scripts, nothing fetched), rendered from the report's JSON object — every number on it is a
//! value of that object, shown as `<a class="num" data-key="path" data-value="exact">rounded</a>`
//! (upper bounds rounded up, lower bounds down) and linked to the section that gives it.

use super::format::{sig, Side};
use super::json::{number, Object, Value};
use super::svg::escape;
use std::format;
use std::string::String;

/// The figures of the page (SVG documents, as the commands write them).
pub(crate) struct Figures<'a> {
    /// ReRo γ against the prior size, with the attack's success.
    pub(crate) rero: &'a str,
    /// The membership trade-off (ROC) with the audit's corner.
    pub(crate) tradeoff: &'a str,
    /// The per-example FIL MSE bounds.
    pub(crate) histogram: &'a str,
    /// The most and least exposed training images.
    pub(crate) images: &'a str,
    /// RecoNN's targets, reconstructions and NN-oracle images (empty without a RecoNN section).
    pub(crate) reconn_images: &'a str,
}

/// `null`: what the JSON writes for a number that is not finite.
static NULL: Value = Value::Null;

/// The value at `path` (keys and array indices separated by dots) of `o`, as the report's
/// JSON has it: a number that is not finite is `null` there ([`super::json`] writes it so),
/// and the page shows it as no number.
fn at<'a>(o: &'a Object, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut cur = o.get(parts.next()?)?;
    for p in parts {
        cur = match cur {
            Value::Obj(inner) => inner.get(p)?,
            Value::Arr(items) => items.get(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match cur {
        Value::Num(x) if !x.is_finite() => Some(&NULL),
        v => Some(v),
    }
}

/// `x` to `digits` significant digits towards `side`; a plain value (an input, a rate) without
/// trailing zeros (`0.1`, not `0.100000`), a bound with them (they state its precision).
fn shown(x: f64, digits: usize, side: Side) -> String {
    let s = sig(x, digits, side);
    if side != Side::Nearest {
        return s;
    }
    let (mantissa, exp) = match s.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (s.as_str(), None),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    match exp {
        Some(e) => format!("{mantissa}e{e}"),
        None => String::from(mantissa),
    }
}

/// What the page shows for one number of the report.
struct Page<'a> {
    r: &'a Object,
}

impl Page<'_> {
    /// The number at `path`, rounded to `digits` towards `side`, linked to `#href`.
    fn n(&self, path: &str, digits: usize, side: Side, href: &str) -> String {
        match at(self.r, path) {
            Some(Value::Num(x)) => format!(
                "<a class=\"num\" href=\"#{href}\" data-key=\"{path}\" data-value=\"{}\">{}</a>",
                number(*x),
                shown(*x, digits, side)
            ),
            Some(Value::Int(k)) => format!(
                "<a class=\"num\" href=\"#{href}\" data-key=\"{path}\" data-value=\"{k}\">{k}</a>"
            ),
            _ => String::from("<span class=\"na\">–</span>"),
        }
    }

    /// The text at `path` (escaped).
    fn t(&self, path: &str) -> String {
        match at(self.r, path) {
            Some(Value::Str(s)) => escape(s),
            Some(Value::Num(x)) => number(*x),
            Some(Value::Int(k)) => format!("{k}"),
            Some(Value::Bool(b)) => format!("{b}"),
            _ => String::from("–"),
        }
    }

    fn has(&self, path: &str) -> bool {
        matches!(at(self.r, path), Some(Value::Num(_) | Value::Int(_)))
    }
}

const STYLE: &str = "
body { font-family: 'DejaVu Sans', Arial, sans-serif; max-width: 980px; margin: 24px auto;
  padding: 0 16px; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 2px; margin-top: 1.6em; }
.sub { color: #555; margin-top: 0; }
.summary { background: #f4f7fb; border: 1px solid #c9d6e8; padding: 10px 16px; border-radius: 4px; }
.summary li { margin: 4px 0; }
table { border-collapse: collapse; margin: 8px 0 12px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.r { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
a.num { color: #1a4f8b; text-decoration: none; border-bottom: 1px dotted #1a4f8b; }
.note { color: #555; font-size: 0.92em; }
figure { margin: 10px 0; page-break-inside: avoid; }
svg { max-width: 100%; height: auto; display: block; }
code, pre { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; word-break: break-all; }
@media print { body { max-width: none; margin: 0; } a.num { border-bottom: none; color: #000; }
  h2 { page-break-after: avoid; } }
";

/// An SVG document without its XML prolog, for inline use.
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => svg.get(i..).unwrap_or(svg),
        None => svg,
    }
}

fn figure(svg: &str, caption: &str) -> String {
    if svg.is_empty() {
        return format!("<p class=\"note\">({caption}: nothing to draw)</p>\n");
    }
    format!(
        "<figure>{}<figcaption class=\"note\">{caption}</figcaption></figure>\n",
        inline_svg(svg)
    )
}

/// The score names of `attack prior-aware`, as the papers name them.
fn score_label(name: &str) -> &'static str {
    match name {
        "sum" => "Alg. 2 (sum)",
        "top" => "Alg. 3 (top steps)",
        "loglik" => "App. G (log-likelihood)",
        _ => "?",
    }
}

/// The page of a report (its JSON object `r`).
pub(crate) fn page(r: &Object, figures: &Figures<'_>) -> String {
    let p = Page { r };
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<title>reconbound report</title>\n<style>");
    h.push_str(STYLE);
    h.push_str("</style>\n</head>\n<body>\n");
    h.push_str("<h1>How well could someone reconstruct a training example from this model?</h1>\n");
    let sampling = if at(r, "config.sampling_rate").and_then(Value::as_f64) == Some(1.0) {
        String::from("full batch")
    } else {
        format!(
            "Poisson sampling at q = {} (B = {})",
            p.n("config.sampling_rate", 6, Side::Nearest, "config"),
            p.n("config.batch_size", 1, Side::Nearest, "config")
        )
    };
    h.push_str(&format!(
        "<p class=\"sub\">DP-SGD: {} on {}, {} + 1 training examples, {sampling}, T = {} steps, C = {}, learning rate {}, σ = {}, δ = {} — reconbound {}, seed {}</p>\n",
        p.t("config.model"),
        p.t("config.data"),
        p.n("config.train_size", 1, Side::Nearest, "config"),
        p.n("config.steps", 1, Side::Nearest, "config"),
        p.n("config.clip", 6, Side::Nearest, "config"),
        p.n("config.lr", 6, Side::Nearest, "config"),
        p.n("config.noise_multiplier", 6, Side::Nearest, "config"),
        p.n("config.delta", 3, Side::Nearest, "config"),
        p.t("version"),
        p.n("config.seed", 1, Side::Nearest, "reproduce"),
    ));

    // 5. Summary.
    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"summary\"><ul>\n");
    h.push_str(&format!(
        "<li>How well could someone tell whether a record was in the training set? No membership attack on this run reaches a true-positive rate above {tpr} at a false-positive rate of {fpr} (a blind guess has {fpr}), and no attack's TPR − FPR exceeds {adv} (<a href=\"#tradeoff\">§4</a>, the certified trade-off curve). The audit's attack reached FPR ≤ {afpr} with TPR ≥ {atpr} at 95 % confidence — a point under the curve, as it must be.</li>\n",
        tpr = p.n("summary.membership_tpr", 3, Side::Up, "tradeoff"),
        fpr = p.n("summary.membership_fpr", 3, Side::Nearest, "tradeoff"),
        adv = p.n("summary.advantage", 3, Side::Up, "tradeoff"),
        afpr = p.n("summary.audit_fpr_upper", 3, Side::Up, "tradeoff"),
        atpr = p.n("summary.audit_tpr_lower", 3, Side::Down, "tradeoff"),
    ));
    h.push_str(&format!(
        "<li>How well could someone reconstruct it? Any attack picks the right one of {m} equally likely candidates with probability ≤ {g} (<a href=\"#rero\">§2</a>, Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a>; the baseline of guessing is 1/{m}). The attack we ran, the prior-aware attack with its {score} score (fixed before the trials), picked it {rate} of the time (95 % interval [{lo}, {up}], {k} of {n} trials).</li>\n",
        m = p.n("summary.prior_size", 1, Side::Nearest, "rero"),
        g = p.n("summary.gamma", 3, Side::Up, "rero"),
        score = score_label(&p.t("summary.attack_score")),
        rate = p.n("summary.attack_success_rate", 3, Side::Nearest, "attack"),
        lo = p.n("summary.attack_success_lower", 3, Side::Down, "attack"),
        up = p.n("summary.attack_success_upper", 3, Side::Up, "attack"),
        k = p.n("summary.attack_successes", 1, Side::Nearest, "attack"),
        n = p.n("summary.attack_trials", 1, Side::Nearest, "attack"),
    ));
    h.push_str(&format!(
        "<li>The training run is ({eps}, δ)-differentially private by the certified PLD accountant (true ε ≥ {lo}; ≤ {rdp} by RDP) (<a href=\"#config\">§1</a>, <a href=\"#ref-pld\">[5]</a>, <a href=\"#ref-rdp\">[6]</a>). The audit's strongest threat model showed ε ≥ {emp} at 95 % confidence — the most its trials could show is {max} (<a href=\"#audit\">§4</a>, Nasr et al. 2021 <a href=\"#ref-nasr\">[4]</a>).</li>\n",
        eps = p.n("summary.epsilon_pld", 4, Side::Up, "config"),
        lo = p.n("summary.epsilon_pld_lower", 4, Side::Down, "config"),
        rdp = p.n("summary.epsilon_rdp", 4, Side::Up, "config"),
        emp = p.n("summary.epsilon_empirical", 3, Side::Down, "audit"),
        max = p.n("summary.epsilon_empirical_max", 3, Side::Nearest, "audit"),
    ));
    h.push_str(&format!(
        "<li>Any unbiased reconstruction of a training image (pixels in [0, 1]) has mean squared error ≥ {mse} per pixel (<a href=\"#mse\">§3</a>, Guo et al. 2022 Thm 1 <a href=\"#ref-guo\">[3]</a>); this run's Fisher information leakage estimates the median training image's bound at {fil}.</li>\n",
        mse = p.n("summary.mse_lower_bound", 3, Side::Down, "mse"),
        fil = p.n("summary.fil_mse_bound_median", 3, Side::Down, "fil"),
    ));
    h.push_str("</ul></div>\n<p class=\"note\">Bounds are rounded to their safe side (upper bounds up, lower bounds down); every number links to the section that gives it. The attack's score (sum, top or loglik) is fixed before the trials, so its interval holds as stated; the other scores are computed in the same trials and shown in section 2 for information, each with its own interval; none is picked after the fact.</p>\n</section>\n");

    // 1. Configuration and accounting.
    h.push_str("<section id=\"config\">\n<h2>1. Configuration and the accountant's ε</h2>\n");
    h.push_str("<p>One DP-SGD configuration: the training run of the prior-aware attack (§2) and of the audit (§4), and the run whose Fisher information leakage is accounted (§3). Every bound on this page is for its (q, σ, T, δ). (<code>reconbound bound</code>'s default — q = 256/60000, T = 14063 — is another configuration.)</p>\n<table>\n");
    let rows: [(&str, String); 9] = [
        ("model", p.t("config.model")),
        ("data", p.t("config.data")),
        (
            "training examples |D⁻| (+ the target or canary)",
            p.n("config.train_size", 1, Side::Nearest, "config"),
        ),
        (
            "sampling rate q",
            p.n("config.sampling_rate", 6, Side::Nearest, "config"),
        ),
        ("steps T", p.n("config.steps", 1, Side::Nearest, "config")),
        (
            "clipping norm C (hard), learning rate, momentum 0",
            format!(
                "{}, {}",
                p.n("config.clip", 6, Side::Nearest, "config"),
                p.n("config.lr", 6, Side::Nearest, "config")
            ),
        ),
        (
            "noise multiplier σ",
            if p.has("config.epsilon") {
                format!(
                    "{} (calibrated by RDP to ε = {})",
                    p.n("config.noise_multiplier", 6, Side::Nearest, "config"),
                    p.n("config.epsilon", 4, Side::Nearest, "config")
                )
            } else {
                p.n("config.noise_multiplier", 6, Side::Nearest, "config")
            },
        ),
        ("δ", p.n("config.delta", 3, Side::Nearest, "config")),
        (
            "prior size m (κ = 1/m)",
            p.n("config.prior_size", 1, Side::Nearest, "config"),
        ),
    ];
    for (label, value) in &rows {
        h.push_str(&format!("<tr><th>{label}</th><td>{value}</td></tr>\n"));
    }
    h.push_str("</table>\n<table>\n<tr><th>accountant</th><th>ε(δ)</th><th></th></tr>\n");
    h.push_str(&format!(
        "<tr><td>RDP, improved conversion <a href=\"#ref-rdp\">[6]</a></td><td class=\"r\">≤ {}</td><td>best order α = {}</td></tr>\n",
        p.n("bound.epsilon_rdp", 6, Side::Up, "config"),
        p.n("bound.best_order", 4, Side::Nearest, "config")
    ));
    h.push_str(&format!(
        "<tr><td>PLD, certified <a href=\"#ref-pld\">[5]</a></td><td class=\"r\">≤ {}</td><td>certified bracket: the true ε is in [{}, {}]</td></tr>\n</table>\n</section>\n",
        p.n("bound.epsilon_pld", 6, Side::Up, "config"),
        p.n("bound.epsilon_pld_lower", 6, Side::Down, "config"),
        p.n("bound.epsilon_pld", 6, Side::Up, "config"),
    ));

    // 2. Reconstruction robustness.
    h.push_str("<section id=\"rero\">\n<h2>2. Reconstruction robustness</h2>\n");
    h.push_str("<p>With a uniform prior over m candidates (κ = 1/m), no adversary who knows everything but which candidate was trained on — the other training examples, every released gradient, the prior — reconstructs it exactly with probability above γ: Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a> (certified numerical value) and Balle et al. 2022 Thm 2 from RDP <a href=\"#ref-balle\">[2]</a>.</p>\n");
    h.push_str(&figure(
        figures.rero,
        "γ against the prior size; the marker is the attack's success rate at m = M with its 95 % Clopper–Pearson interval.",
    ));
    h.push_str("<table>\n<tr><th>m</th><th>κ</th><th>γ Hayes (certified)</th><th>γ Balle (RDP)</th></tr>\n");
    let points = match at(r, "rero_curve") {
        Some(Value::Arr(a)) => a.len(),
        _ => 0,
    };
    for i in 0..points {
        let k = |key: &str| format!("rero_curve.{i}.{key}");
        h.push_str(&format!(
            "<tr><td class=\"r\">{}</td><td class=\"r\">{}</td><td class=\"r\">≤ {} (≥ {})</td><td class=\"r\">≤ {}</td></tr>\n",
            p.n(&k("prior_size"), 1, Side::Nearest, "rero"),
            p.n(&k("kappa"), 4, Side::Nearest, "rero"),
            p.n(&k("gamma"), 4, Side::Up, "rero"),
            p.n(&k("gamma_lower"), 4, Side::Down, "rero"),
            p.n(&k("gamma_balle"), 4, Side::Up, "rero"),
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&format!(
        "<p>At m = {}: the Fano bound of Guo et al. 2022b <a href=\"#ref-fano\">[7]</a> is {} (worst-case sensitivity Δ² = 4).</p>\n",
        p.n("config.prior_size", 1, Side::Nearest, "rero"),
        p.n("bound.fano_success_bound", 4, Side::Up, "rero"),
    ));
    h.push_str("<h3 id=\"attack\">The prior-aware attack beside its bound</h3>\n");
    h.push_str(&format!(
        "<p>Per trial (a pure function of seed {} and the trial index), D⁻ and a prior of {} further candidates are drawn from the data, the target is picked uniformly, the model is trained on D⁻ plus the target with exactly the configuration of §1, and the adversary scores every candidate from the released gradients (Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a>). {} trials, two-sided 95 % Clopper–Pearson intervals. A whole interval above γ would be a bug.</p>\n",
        p.n("attack.seed", 1, Side::Nearest, "reproduce"),
        p.n("attack.prior_size", 1, Side::Nearest, "attack"),
        p.n("attack.trials", 1, Side::Nearest, "attack"),
    ));
    h.push_str("<table>\n<tr><th>score</th><th>successes / trials</th><th>success rate [95 % interval]</th><th>γ Hayes (must not be beaten)</th><th>γ Balle</th></tr>\n");
    for score in ["sum", "top", "loglik"] {
        let k = |key: &str| format!("attack.scores.{score}.{key}");
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"r\">{} / {}</td><td class=\"r\">{} [{}, {}]</td><td class=\"r\">≤ {}</td><td class=\"r\">≤ {}</td></tr>\n",
            score_label(score),
            p.n(&k("successes"), 1, Side::Nearest, "attack"),
            p.n("attack.trials", 1, Side::Nearest, "attack"),
            p.n(&k("success_rate"), 4, Side::Nearest, "attack"),
            p.n(&k("success_lower"), 4, Side::Down, "attack"),
            p.n(&k("success_upper"), 4, Side::Up, "attack"),
            p.n("attack.gamma", 4, Side::Up, "rero"),
            p.n("attack.gamma_balle", 4, Side::Up, "rero"),
        ));
    }
    h.push_str(&format!(
        "</table>\n<p class=\"note\">Any whole interval above γ: {}.</p>\n</section>\n",
        p.t("attack.above_bound")
    ));

    // 3. MSE.
    h.push_str("<section id=\"mse\">\n<h2>3. Mean squared error of a reconstruction</h2>\n");
    h.push_str(&format!(
        "<p>Guo et al. 2022 Thm 1 <a href=\"#ref-guo\">[3]</a>: the run is (2, {})-RDP under substitution (from the add/remove RDP at orders 4 and 3, Mironov 2017 Prop. 11 <a href=\"#ref-rdp\">[6]</a>), so any unbiased reconstruction of data in [0, 1]<sup>d</sup> has MSE ≥ <b>{}</b> per coordinate.</p>\n",
        p.n("bound.rdp_order2_substitution", 4, Side::Up, "mse"),
        p.n("bound.mse_lower_bound", 4, Side::Down, "mse"),
    ));
    h.push_str(&format!(
        "<h3 id=\"fil\">Per-example Fisher information leakage</h3>\n<p>One training run of the configuration (seed {}, {} training examples; test accuracy {} on {} held-out images), with Guo et al.'s Alg. 1 <a href=\"#ref-guo\">[3]</a>: per example the FIL summed over the steps, Tr(I) from K = {} of d input coordinates per example and step, κ = {} (Thm 4), and the Thm 2 bound MSE ≥ d/Tr(I) for unbiased reconstructions. These are estimates from the realised run (Thm 3), not certified bounds.</p>\n",
        p.n("train.seed", 1, Side::Nearest, "reproduce"),
        p.n("train.train_size", 1, Side::Nearest, "fil"),
        p.n("train.test_accuracy", 4, Side::Nearest, "fil"),
        p.n("train.test_size", 1, Side::Nearest, "fil"),
        p.n("train.fil_coords", 1, Side::Nearest, "fil"),
        p.n("train.fil_kappa", 4, Side::Up, "fil"),
    ));
    h.push_str(&format!(
        "<table>\n<tr><th>per-example MSE ≥ d/Tr(I)</th><td>min {}, median {}, max {}</td></tr>\n<tr><th>examples ever in a batch</th><td>{}</td></tr>\n<tr><th>largest dFIL Tr(I)/d</th><td>{}</td></tr>\n<tr><th>MSE ≥ by RDP (Thm 1)</th><td>{}</td></tr>\n</table>\n",
        p.n("train.fil_mse_bound_min", 4, Side::Down, "fil"),
        p.n("train.fil_mse_bound_median", 4, Side::Down, "fil"),
        p.n("train.fil_mse_bound_max", 4, Side::Down, "fil"),
        p.n("train.fil_examples_sampled", 1, Side::Nearest, "fil"),
        p.n("train.fil_dfil_max", 4, Side::Up, "fil"),
        p.n("train.mse_lower_bound_rdp", 4, Side::Down, "mse"),
    ));
    h.push_str(&figure(
        figures.histogram,
        "Per-example MSE lower bounds from the FIL, with the RDP bound of Thm 1 and MSE = 1 marked (Guo et al. Fig. 2).",
    ));
    h.push_str(&figure(
        figures.images,
        "The training images with the highest dFIL (most exposed) and the lowest (least exposed) (Guo et al. Fig. 6).",
    ));
    h.push_str("</section>\n");

    // 4. Audit.
    h.push_str("<section id=\"audit\">\n<h2>4. The audit</h2>\n");
    h.push_str("<p id=\"tradeoff\">Every bound on this page is a point of one object, the run's trade-off curve f (f-DP, Dong, Roth &amp; Su 2022): no test of whether the canary (or any record) was trained on has a true-positive rate above 1 − f at its false-positive rate; γ(κ) = 1 − f(κ) is its reconstruction reading and ε(δ) its dual. The audit's (FPR, TPR) corner, the pair of confidence limits that hold together, must lie under it: the distance between the two is how much an attack could still gain — or how loose the bound is.</p>\n");
    h.push_str(&figure(
        figures.tradeoff,
        "The certified trade-off curve of the run (log FPR axis), the blind guess, and the audit's corner (FPR upper limit, TPR lower limit).",
    ));
    let fixed = p.t("audit.threshold_rule") == "fixed";
    let how = if fixed {
        format!(
            "the threshold is fixed in advance at {} — the likelihood-ratio score's equal-prior (Bayes) threshold, chosen before any trial — so every trial is scored; the run is full-batch, so its trade-off curve is exactly Gaussian and the estimate is Gaussian DP (Nasr et al. 2023): μ̂ = Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄), a lower confidence bound on the run's μ, and the ε it implies",
            p.n("audit.threshold", 3, Side::Nearest, "audit"),
        )
    } else {
        format!(
            "the threshold is chosen on the first {} trials and the others are scored (Clopper–Pearson, valid for any mechanism)",
            p.n("audit.calibration", 1, Side::Nearest, "audit"),
        )
    };
    h.push_str(&format!(
        "<p>Nasr et al. 2021 <a href=\"#ref-nasr\">[4]</a>: the strongest threat model that fits this run — a gradient canary (crafter 4, a Dirac gradient of norm C on the coordinate D's gradients use least) inserted at every step it is sampled, read through the released gradients by the likelihood-ratio test (distinguisher 3), at the run's own learning rate. D is the first {} examples of the data; each of {} trials trains once without and once with the canary; {how}. The empirical ε is a lower bound at confidence {}: it must stay below the accountant's ε.</p>\n",
        p.n("audit.train_size", 1, Side::Nearest, "audit"),
        p.n("audit.trials", 1, Side::Nearest, "audit"),
        p.n("audit.confidence", 3, Side::Nearest, "audit"),
    ));
    let mu_row = if p.has("audit.gdp_mu") {
        format!(
            "<tr><th>μ (95 % lower bound; the run's μ = √T/σ)</th><td>≥ {}</td></tr>\n",
            p.n("audit.gdp_mu", 4, Side::Down, "audit")
        )
    } else {
        String::new()
    };
    let gap = if p.has("audit.epsilon_empirical")
        && at(r, "audit.epsilon_empirical").and_then(Value::as_f64) > Some(0.0)
    {
        "What is left between the two is the trials' (their count and the estimator), or a bound that is loose for this threat model; the plot above shows it on the trade-off curve."
    } else {
        "The audit showed nothing (ε ≥ 0): its trials could not tell the two worlds apart at this confidence."
    };
    h.push_str(&format!(
        "<table>\n<tr><th>threat model</th><td>{} / {}</td></tr>\n<tr><th>false positives / trials without the canary</th><td>{} / {} (rate ≤ {})</td></tr>\n<tr><th>false negatives / trials with the canary</th><td>{} / {} (rate ≤ {})</td></tr>\n{mu_row}<tr><th>empirical ε (95 % lower bound)</th><td><b>≥ {}</b></td></tr>\n<tr><th>the most these trials could show (no error at all)</th><td>{}</td></tr>\n<tr><th>the accountant's ε (PLD, certified; RDP)</th><td>≤ {}; ≤ {}</td></tr>\n</table>\n<p class=\"note\">Empirical ε above the accountant's: {}. {gap}</p>\n</section>\n",
        p.t("audit.crafter"),
        p.t("audit.distinguisher"),
        p.n("audit.false_positives", 1, Side::Nearest, "audit"),
        p.n("audit.negatives", 1, Side::Nearest, "audit"),
        p.n("audit.fpr_upper", 3, Side::Up, "audit"),
        p.n("audit.false_negatives", 1, Side::Nearest, "audit"),
        p.n("audit.positives", 1, Side::Nearest, "audit"),
        p.n("audit.fnr_upper", 3, Side::Up, "audit"),
        p.n("audit.epsilon_empirical", 4, Side::Down, "audit"),
        p.n("audit.epsilon_empirical_max", 4, Side::Nearest, "audit"),
        p.n("audit.epsilon_pld", 4, Side::Up, "config"),
        p.n("audit.epsilon_rdp", 4, Side::Up, "config"),
        p.t("audit.above_pld"),
    ));

    // 5. RecoNN (with --reconn K).
    if p.has("reconn.mse_mean") {
        h.push_str("<section id=\"reconn\">\n<h2>5. RecoNN: a reconstruction attack on a released model</h2>\n");
        h.push_str(&format!(
            "<p>Balle, Cherubin, Hayes 2022 <a href=\"#ref-balle\">[2]</a> (§IV–VI): an informed adversary who knows D⁻ ({} MNIST digits of the vendored 10,000), the training (the MLP 784-10-10, full-batch gradient descent, {} steps at learning rate {}) and the initialisation trains {} shadow models on D⁻ plus an image of its own, learns a reconstructor network from a model's parameters to its image, and applies it to {} released models. This section's setting is its own (non-private, as Balle et al. Fig. 5c), not the run above: it shows what a model that leaks lets an attacker recover. A reconstruction counts only when it is closer to the target than the NN oracle, the closest image of the adversary's own data.</p>\n",
            p.n("reconn.train_size", 1, Side::Nearest, "reconn"),
            p.n("reconn.steps", 1, Side::Nearest, "reconn"),
            p.n("reconn.lr", 3, Side::Nearest, "reconn"),
            p.n("reconn.shadow_models", 1, Side::Nearest, "reconn"),
            p.n("reconn.released", 1, Side::Nearest, "reconn"),
        ));
        h.push_str(&format!(
            "<table>\n<tr><th>reconstruction MSE per pixel, mean / median</th><td>{} / {}</td></tr>\n<tr><th>NN oracle MSE, mean / median</th><td>{} / {}</td></tr>\n<tr><th>mean image MSE</th><td>{}</td></tr>\n<tr><th>targets closer than the NN oracle (95 % Clopper–Pearson)</th><td>{} [{}, {}]</td></tr>\n<tr><th>released models' test accuracy</th><td>{}</td></tr>\n</table>\n",
            p.n("reconn.mse_mean", 4, Side::Nearest, "reconn"),
            p.n("reconn.mse_median", 4, Side::Nearest, "reconn"),
            p.n("reconn.nn_oracle_mse_mean", 4, Side::Nearest, "reconn"),
            p.n("reconn.nn_oracle_mse_median", 4, Side::Nearest, "reconn"),
            p.n("reconn.baseline_mse_mean", 4, Side::Nearest, "reconn"),
            p.n("reconn.beats_nn_oracle_rate", 3, Side::Nearest, "reconn"),
            p.n("reconn.beats_nn_oracle_lower", 3, Side::Down, "reconn"),
            p.n("reconn.beats_nn_oracle_upper", 3, Side::Up, "reconn"),
            p.n("reconn.test_accuracy", 3, Side::Nearest, "reconn"),
        ));
        if !figures.reconn_images.is_empty() {
            h.push_str(&figure(
                figures.reconn_images,
                "Released targets (top), their reconstructions (middle) and the NN oracle's images (bottom), with each image's MSE to its target.",
            ));
        }
        h.push_str("</section>\n");
    }

    // 6. Reproduce.
    h.push_str("<section id=\"reproduce\">\n<h2>How to reproduce this page</h2>\n");
    h.push_str(&format!(
        "<pre>{} --out {}</pre>\n<p>Seed {}, reconbound {}, wall time {} s. Every number but the wall time is the same for the same command (and for its <code>--shard K/M</code> files merged by <code>reconbound merge … --out FILE</code>); <code>--json</code> prints every number of this page.</p>\n</section>\n",
        p.t("command_line"),
        p.t("out"),
        p.n("config.seed", 1, Side::Nearest, "reproduce"),
        p.t("version"),
        p.n("seconds", 3, Side::Nearest, "reproduce"),
    ));

    h.push_str("<section id=\"refs\">\n<h2>References</h2>\n<ol>\n");
    for (id, text) in [
        ("ref-hayes", "J. Hayes, S. Mahloujifar, B. Balle. Bounding training data reconstruction in DP-SGD. NeurIPS 2023 (γ: Thm 2; attacks: Alg. 2, Alg. 3, App. G)."),
        ("ref-balle", "B. Balle, G. Cherubin, J. Hayes. Reconstructing training data with informed adversaries. IEEE S&amp;P 2022 (ReRo from RDP: Thm 2)."),
        ("ref-guo", "C. Guo, B. Karrer, K. Chaudhuri, L. van der Maaten. Bounding training data reconstruction in private (deep) learning. ICML 2022 (Thm 1: MSE from RDP; Alg. 1, Thms 2–4: FIL)."),
        ("ref-nasr", "M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary instantiation: lower bounds for differentially private machine learning. IEEE S&amp;P 2021 (§IV, Eqs. 4–5)."),
        ("ref-pld", "A. Koskela, J. Jälkö, A. Honkela. Computing tight differential privacy guarantees using FFT. AISTATS 2020; V. Doroshenko et al. Connect the dots. PETS 2022 (certified PLD accounting)."),
        ("ref-rdp", "I. Mironov. Rényi differential privacy. CSF 2017; I. Mironov, K. Talwar, L. Zhang. Rényi differential privacy of the sampled Gaussian mechanism. 2019; B. Balle et al. Hypothesis testing interpretations and Rényi DP. AISTATS 2020 (improved conversion)."),
        ("ref-fano", "C. Guo, A. Sablayrolles, M. Sanjabi. Analyzing privacy leakage in machine learning via multiple hypothesis testing: a lesson from Fano. 2022 (as in Hayes et al. 2023 App. H)."),
    ] {
        h.push_str(&format!("<li id=\"{id}\">{text}</li>\n"));
    }
    h.push_str("</ol>\n</section>\n</body>\n</html>\n");
    h
}
