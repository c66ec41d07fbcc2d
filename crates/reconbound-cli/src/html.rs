//! The page of `reconbound report`: one self-contained HTML file (inline CSS and SVG, no
//! scripts, nothing fetched), rendered from the report's JSON object — every number on it is a
//! value of that object, shown as `<a class="num" data-key="path" data-value="exact">rounded</a>`
//! (upper bounds rounded up, lower bounds down) and linked to the section that gives it.

use super::format::{fpr_label, sig, Side};
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

/// Significant digits of each kind of number on the pages: those the terminal prints for the
/// same quantity (`bound`, `tradeoff`, `attack`, `audit`, `estimate`, `train`), so that page and
/// terminal round a number once and the same way (issue 43), towards its safe side.
pub(crate) mod digits {
    /// An accountant's ε (`bound`: 6).
    pub(crate) const EPSILON: usize = 6;
    /// A success bound: γ (Hayes, from RDP, Balle) and Fano's (`bound`: 6).
    pub(crate) const GAMMA: usize = 6;
    /// A membership TPR bound and the advantage (`bound`, `tradeoff`: 4).
    pub(crate) const TPR: usize = 4;
    /// Guo et al.'s MSE bound (`bound`: 6).
    pub(crate) const MSE: usize = 6;
    /// An RDP ε at order 2, a Rényi order (`bound`: 4).
    pub(crate) const ORDER: usize = 4;
    /// A measured success rate and its interval (`attack`: 4).
    pub(crate) const RATE: usize = 4;
    /// An audit's ε and the most its trials could show (`audit`, `estimate`: 4).
    pub(crate) const AUDIT_EPSILON: usize = 4;
    /// An audit's error-rate limits and its corner (`audit`, `estimate`: 3).
    pub(crate) const ERROR_RATE: usize = 3;
    /// An input or a calibrated input: σ, q, C, the learning rate (`bound`, `audit`: 6).
    pub(crate) const INPUT: usize = 6;
    /// A test accuracy, the FIL's κ (`train`: 6).
    pub(crate) const TRAIN: usize = 6;
    /// A per-example FIL MSE bound, the largest dFIL (`train`: 4).
    pub(crate) const FIL: usize = 4;
}

/// `x` to `digits` significant digits towards `side`; a plain value (an input, a rate) without
/// trailing zeros (`0.1`, not `0.100000`), a bound with them (they state its precision).
fn shown(x: f64, digits: usize, side: Side) -> String {
    match side {
        Side::Nearest => super::format::plain(x, digits),
        _ => sig(x, digits, side),
    }
}

/// `word` as one shell word: as it is when it has only characters no POSIX shell treats
/// specially, else in single quotes (a `'` inside as `'\''`).
pub(crate) fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return String::from(word);
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The shell words of `line` (words separated by spaces, single-quoted words kept whole and
/// quoted, as [`shell_word`] writes them).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                cur.push(c);
            }
            ' ' if !quoted => {
                if !cur.is_empty() {
                    words.push(core::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Characters of a line of the page's command, its continuation ` \` included.
const COMMAND_WIDTH: usize = 80;

/// A command line as the page prints it: broken only between a flag's value and the next
/// flag, each break a shell line continuation (` \`, then four spaces), lines of at most
/// [`COMMAND_WIDTH`] characters where the words allow — so it pastes into a shell as shown.
fn command_lines(words: &[String]) -> String {
    // groups: the program and its subcommand, then each flag with its values
    let mut groups: Vec<String> = Vec::new();
    for w in words {
        match groups.last_mut() {
            Some(g) if !w.starts_with("--") => {
                g.push(' ');
                g.push_str(w);
            }
            _ => groups.push(w.clone()),
        }
    }
    let mut out = String::new();
    let mut line_len = 0;
    for g in groups {
        let len = g.chars().count();
        if line_len == 0 {
            out.push_str(&g);
            line_len = len;
        } else if line_len + 1 + len + 2 <= COMMAND_WIDTH {
            out.push(' ');
            out.push_str(&g);
            line_len += 1 + len;
        } else {
            out.push_str(" \\\n    ");
            out.push_str(&g);
            line_len = 4 + len;
        }
    }
    out
}

/// What the page shows for one number of the report.
pub(crate) struct Page<'a> {
    pub(crate) r: &'a Object,
}

impl Page<'_> {
    /// The number at `path`, rounded to `digits` towards `side`, linked to `#href`.
    pub(crate) fn n(&self, path: &str, digits: usize, side: Side, href: &str) -> String {
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
    pub(crate) fn t(&self, path: &str) -> String {
        match at(self.r, path) {
            Some(Value::Str(s)) => escape(s),
            Some(Value::Num(x)) => number(*x),
            Some(Value::Int(k)) => format!("{k}"),
            Some(Value::Bool(b)) => format!("{b}"),
            _ => String::from("–"),
        }
    }

    /// The number at `path`, if it is one.
    pub(crate) fn f(&self, path: &str) -> Option<f64> {
        at(self.r, path).and_then(Value::as_f64)
    }

    /// The reproducing command: `command_line` (its words quoted as [`shell_word`] quotes
    /// them) and `--out` with the page's path, as [`command_lines`] breaks it, escaped.
    fn command(&self) -> String {
        let mut words = match at(self.r, "command_line") {
            Some(Value::Str(line)) => shell_words(line),
            _ => Vec::new(),
        };
        if let Some(Value::Str(out)) = at(self.r, "out") {
            words.push(String::from("--out"));
            words.push(shell_word(out));
        }
        escape(&command_lines(&words))
    }

    fn has(&self, path: &str) -> bool {
        matches!(at(self.r, path), Some(Value::Num(_) | Value::Int(_)))
    }

    /// An upper bound on a probability at `path`: `≤ x` rounded up to `digits`, or
    /// "no information" where it is vacuous ([`vacuous`]; issue 43: a bound of 1 excludes
    /// nothing, and "≤ 1.000" read as if the attack always won).
    pub(crate) fn prob_upper(&self, path: &str, digits: usize, href: &str) -> String {
        match self.f(path) {
            Some(x) if vacuous(x, digits) => String::from(VACUOUS),
            _ => format!("≤ {}", self.n(path, digits, Side::Up, href)),
        }
    }

    /// The tightest success bound of the `bound` object at `prefix` (its `tightest` key, as
    /// `bound` names it): the number to quote for reconstruction.
    pub(crate) fn tightest(&self, prefix: &str) -> Tightest {
        // why another bound beat Hayes et al.'s γ: it was not certified, or (an independent
        // review) it was, and the other is smaller by the numerical slack of its bracket
        let hayes = if self.has(&format!("{prefix}.gamma")) {
            "the smallest here; Hayes et al.'s certified γ is as large within its numerical bracket"
        } else {
            "Hayes et al.'s γ was not certified here"
        };
        let (key, name, why, anchor) = match self.t(&format!("{prefix}.tightest")).as_str() {
            "rdp" => (
                "gamma_rdp",
                "γ from RDP by the optimal conversion (Riess et al. 2026)",
                hayes,
                "ref-riess",
            ),
            "balle" => (
                "gamma_balle",
                "γ from RDP (Balle et al. 2022)",
                hayes,
                "ref-balle",
            ),
            "fano" => (
                "fano_success_bound",
                "the Fano bound (Guo et al. 2022b)",
                hayes,
                "ref-fano",
            ),
            _ => (
                "gamma",
                "γ for DP-SGD (Hayes et al. 2023)",
                "the exact 1 − f(κ) of this run's trade-off curve, where the RDP bounds see only its Rényi moments",
                "ref-hayes",
            ),
        };
        Tightest {
            key: format!("{prefix}.{key}"),
            name,
            why,
            anchor,
        }
    }
}

/// Whether an upper bound `x` on a probability says nothing as shown to `digits` significant
/// digits: it is 1 or more, or rounds up to 1 (0.9999997 shown as "≤ 1.00000").
pub(crate) fn vacuous(x: f64, digits: usize) -> bool {
    x >= 1.0
        || sig(x, digits, Side::Up)
            .parse::<f64>()
            .is_ok_and(|v| v >= 1.0)
}

/// What a page shows for a vacuous bound ([`vacuous`]).
pub(crate) const VACUOUS: &str =
    "<span class=\"na\" title=\"the bound is 1: it excludes nothing\">no information</span>";

/// The tightest certified success bound of a run ([`Page::tightest`]).
pub(crate) struct Tightest {
    /// The path of its value in the page's JSON.
    pub(crate) key: String,
    /// Its name, with the paper.
    pub(crate) name: &'static str,
    /// Why it is the tightest.
    pub(crate) why: &'static str,
    /// The anchor of its reference on the report's page.
    pub(crate) anchor: &'static str,
}

pub(crate) const STYLE: &str = "
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
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; }
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

pub(crate) fn figure(svg: &str, caption: &str) -> String {
    if svg.is_empty() {
        return format!("<p class=\"note\">({caption}: nothing to draw)</p>\n");
    }
    format!(
        "<figure>{}<figcaption class=\"note\">{caption}</figcaption></figure>\n",
        inline_svg(svg)
    )
}

/// A yes/no field of the JSON (`"true"` or `"false"` as [`Page::t`] renders it) in words:
/// `no` for false, `yes` for true, the field as it is otherwise.
fn verdict(field: &str, no: &str, yes: &str) -> String {
    match field {
        "false" => String::from(no),
        "true" => String::from(yes),
        other => format!("({other})"),
    }
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

/// The report page's references, in the order of its list: `(anchor, text)`, cited as `[n]`
/// ([`cite`]).
const REFERENCES: [(&str, &str); 10] = [
    ("ref-hayes", "J. Hayes, S. Mahloujifar, B. Balle. Bounding training data reconstruction in DP-SGD. NeurIPS 2023 (γ: Thm 2; attacks: Alg. 2, Alg. 3, App. G)."),
    ("ref-balle", "B. Balle, G. Cherubin, J. Hayes. Reconstructing training data with informed adversaries. IEEE S&amp;P 2022 (ReRo from RDP: Thm 2)."),
    ("ref-guo", "C. Guo, B. Karrer, K. Chaudhuri, L. van der Maaten. Bounding training data reconstruction in private (deep) learning. ICML 2022 (Thm 1: MSE from RDP; Alg. 1, Thms 2–4: FIL)."),
    ("ref-nasr", "M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary instantiation: lower bounds for differentially private machine learning. IEEE S&amp;P 2021 (the audit's threat model: crafters and distinguishers, §IV; Clopper–Pearson ε, Eqs. 4–5)."),
    ("ref-pld", "A. Koskela, J. Jälkö, A. Honkela. Computing tight differential privacy guarantees using FFT. AISTATS 2020; V. Doroshenko et al. Connect the dots. PETS 2022 (certified PLD accounting)."),
    ("ref-rdp", "I. Mironov. Rényi differential privacy. CSF 2017; I. Mironov, K. Talwar, L. Zhang. Rényi differential privacy of the sampled Gaussian mechanism. 2019; B. Balle et al. Hypothesis testing interpretations and Rényi DP. AISTATS 2020 (improved conversion)."),
    ("ref-fano", "C. Guo, A. Sablayrolles, M. Sanjabi. Analyzing privacy leakage in machine learning via multiple hypothesis testing: a lesson from Fano. 2022 (as in Hayes et al. 2023 App. H)."),
    ("ref-dong", "J. Dong, A. Roth, W. J. Su. Gaussian differential privacy. Journal of the Royal Statistical Society Series B 84(1), 2022 (f-DP: trade-off curves; μ-GDP)."),
    ("ref-nasr2023", "M. Nasr, J. Hayes, T. Steinke, B. Balle, F. Tramèr, M. Jagielski, N. Carlini, A. Terzis. Tight auditing of differentially private machine learning. USENIX Security 2023 (the Gaussian-DP estimate of an audit, at a threshold fixed in advance on the full batch)."),
    ("ref-riess", "Riess, Gomez, du Pin Calmon, Schnabel, Kaissis. arXiv:2602.04562, 2026 (the optimal conversion of an RDP curve to a trade-off curve: γ from RDP, the best any RDP bound gives)."),
];

/// A link to the reference `anchor` of [`REFERENCES`], as `[n]`.
fn cite(anchor: &str) -> String {
    match REFERENCES.iter().position(|(id, _)| *id == anchor) {
        Some(i) => format!("<a href=\"#{anchor}\">[{}]</a>", i + 1),
        None => String::new(),
    }
}

/// The answer the page gives first, in one short paragraph (issue 43: the title asked about
/// reconstruction, the first bullet answered membership, and there was no one-line answer):
/// the reconstruction bound to quote — the tightest certified one, and why — against the
/// blind guess, then membership at 1 % false positives and the certified ε.
fn answer(p: &Page<'_>) -> String {
    let t = p.tightest("bound");
    let m = p.n("summary.prior_size", 1, Side::Nearest, "rero");
    let recon = match p.f(&t.key) {
        Some(x) if !vacuous(x, digits::GAMMA) => format!(
            "any attack picks the right one of {m} equally likely candidates with probability ≤ <b>{}</b> (a blind guess: 1/{m} = {}) — {} {}, the tightest certified bound here: {}",
            p.n(&t.key, digits::GAMMA, Side::Up, "rero"),
            p.n("bound.kappa", digits::INPUT, Side::Nearest, "rero"),
            t.name,
            cite(t.anchor),
            t.why,
        ),
        _ => format!(
            "no certified bound limits how often an attack picks the right one of {m} equally likely candidates — no information (a blind guess: 1/{m})"
        ),
    };
    let fpr = p
        .f("summary.membership_fpr")
        .map_or_else(|| String::from("–"), fpr_label);
    let member = match p.f("summary.membership_tpr") {
        Some(x) if !vacuous(x, digits::TPR) => format!(
            "a membership attack's true-positive rate at {fpr} false positives is at most <b>{}</b> (a blind guess: {fpr})",
            p.n("summary.membership_tpr", digits::TPR, Side::Up, "tradeoff"),
        ),
        Some(_) => format!(
            "no information on a membership attack's true-positive rate at {fpr} false positives (its bound is 1)"
        ),
        None => String::from("no certified membership bound for this run"),
    };
    format!(
        "<section id=\"answer\">\n<div class=\"summary\"><p><b>Reconstruction:</b> {recon}. <b>Membership:</b> {member}; the run is ({}, {})-differentially private by the certified PLD accountant.</p></div>\n</section>\n",
        p.n("summary.epsilon_pld", digits::EPSILON, Side::Up, "config"),
        p.n("config.delta", 3, Side::Nearest, "config"),
    )
}

/// The audit's corner beside the curve at the audit's own false-positive rate (issue 43: "TPR
/// above 0.225 at FPR 0.01" beside "the audit reached FPR ≤ 0.259 with TPR ≥ 0.669" read as a
/// contradiction): the curve's TPR bound at the first point of its grid at or above the
/// audit's FPR — the curve rises, so that value bounds it at the audit's FPR too.
fn audit_corner(p: &Page<'_>) -> String {
    let (Some(fpr), Some(tpr)) = (
        p.f("summary.audit_fpr_upper"),
        p.f("summary.audit_tpr_lower"),
    ) else {
        return String::new();
    };
    let afpr = p.n(
        "summary.audit_fpr_upper",
        digits::ERROR_RATE,
        Side::Up,
        "tradeoff",
    );
    let atpr = p.n(
        "summary.audit_tpr_lower",
        digits::ERROR_RATE,
        Side::Down,
        "tradeoff",
    );
    let points = match at(p.r, "tradeoff_curve") {
        Some(Value::Arr(a)) => a.len(),
        _ => 0,
    };
    let point = (0..points).find(|i| {
        p.f(&format!("tradeoff_curve.{i}.fpr"))
            .is_some_and(|x| x >= fpr)
    });
    let (key, curve) = match point.map(|i| (i, p.f(&format!("tradeoff_curve.{i}.tpr")))) {
        Some((i, Some(c))) => (i, c),
        _ => {
            return format!(
                " The audit's attack is a point of its own, at a much higher false-positive rate: FPR ≤ {afpr} with TPR ≥ {atpr} (the two limits hold together at 95 % confidence), under the curve at that rate (<a href=\"#audit\">§4</a>'s figure)."
            )
        }
    };
    let allows = if vacuous(curve, digits::TPR) {
        String::from("any true-positive rate (no information there)")
    } else {
        format!(
            "a true-positive rate of at most {} (its value at FPR {}, the nearest point of its grid at or above)",
            p.n(
                &format!("tradeoff_curve.{key}.tpr"),
                digits::TPR,
                Side::Up,
                "tradeoff"
            ),
            p.n(&format!("tradeoff_curve.{key}.fpr"), 4, Side::Nearest, "tradeoff"),
        )
    };
    let lies = if tpr > curve {
        "above it: that contradicts the bound — a bug; please report it"
    } else {
        "under it, as it must"
    };
    format!(
        " The audit's attack is a point at a false-positive rate of its own: at its FPR ≤ {afpr} the curve allows {allows}, and the audit's TPR ≥ {atpr} (the two limits hold together at 95 % confidence) lies {lies}."
    )
}

/// The most an audit with these trials could show, said as what it is (issue 43: "the most its
/// trials could show is 23.93" beside ε ≤ 7.438 read as if the audit could beat the
/// guarantee): a ceiling of the audit's statistics — the ε of an audit without a single error
/// — and whether it let this audit reach the certified ε at `eps_key`.
fn audit_ceiling(p: &Page<'_>, max_key: &str, eps_key: &str) -> String {
    let n = p.n("audit.trials", 1, Side::Nearest, "audit");
    let max = p.n(max_key, digits::AUDIT_EPSILON, Side::Up, "audit");
    let eps = p.n(eps_key, digits::EPSILON, Side::Up, "config");
    match (p.f(max_key), p.f(eps_key)) {
        (Some(c), Some(e)) if c >= e => format!(
            "With {n} trials per world this audit's estimator cannot show more than ε = {max} (a ceiling of its statistics, reached only without a single error among the trials it scores), so this audit could have reached the guarantee of {eps}: its size is not what keeps it below."
        ),
        (Some(_), Some(_)) => format!(
            "With {n} trials per world this audit's estimator cannot show more than ε = {max} (a ceiling of its statistics, reached only without a single error among the trials it scores), less than the guarantee of {eps}: this audit is too small to reach it, even if the training leaked everything."
        ),
        _ => String::new(),
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
            p.n(
                "config.sampling_rate",
                digits::INPUT,
                Side::Nearest,
                "config"
            ),
            p.n("config.batch_size", 1, Side::Nearest, "config")
        )
    };
    h.push_str(&format!(
        "<p class=\"sub\">DP-SGD: {} on {}, {} + 1 training examples, {sampling}, T = {} steps, C = {}, learning rate {}, σ = {}, δ = {} — reconbound {}, seed {}</p>\n",
        p.t("config.model"),
        p.t("config.data"),
        p.n("config.train_size", 1, Side::Nearest, "config"),
        p.n("config.steps", 1, Side::Nearest, "config"),
        p.n("config.clip", digits::INPUT, Side::Nearest, "config"),
        p.n("config.lr", digits::INPUT, Side::Nearest, "config"),
        p.n("config.noise_multiplier", digits::INPUT, Side::Nearest, "config"),
        p.n("config.delta", 3, Side::Nearest, "config"),
        p.t("version"),
        p.n("config.seed", 1, Side::Nearest, "reproduce"),
    ));

    // The answer, first (issue 43): the page's question, reconstruction, then membership and ε.
    h.push_str(&answer(&p));

    // The summary: the same order, each answer with its detail.
    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"summary\"><ul>\n");
    // The attack's rate is measured: say what its interval means where it matters.
    let gamma = p.f("summary.gamma");
    let noise = match (p.f("summary.attack_success_rate"), p.f("summary.attack_success_lower"), gamma) {
        (Some(_), Some(lo), Some(g)) if lo > g => " The whole interval is above γ, which no attack can beat: that contradicts the bound — a bug; please report it.",
        (Some(rate), Some(_), Some(g)) if rate > g => " It is above γ only by sampling noise: the interval contains γ, and γ bounds the attack's true rate, of which these trials give an estimate; only a whole interval above γ would contradict the bound.",
        _ => "",
    };
    h.push_str(&format!(
        "<li>How well could someone reconstruct a training example? {any} (<a href=\"#rero\">§2</a>, Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a>; the baseline of guessing is 1/{m}); from the run's RDP alone the bound is looser: {rdp} by the optimal conversion (Riess et al. 2026 {riess}), {balle} by Balle et al. 2022 Thm 2 <a href=\"#ref-balle\">[2]</a>. The attack we ran, the prior-aware attack with its {score} score (fixed before the trials), picked it {rate} of the time: {k} of {n} trials, a measured rate with sampling noise (95 % interval [{lo}, {up}]).{noise}</li>\n",
        any = match gamma {
            Some(x) if vacuous(x, digits::GAMMA) => format!(
                "Nothing certified limits how often an attack picks the right one of {} equally likely candidates: no information",
                p.n("summary.prior_size", 1, Side::Nearest, "rero"),
            ),
            _ => format!(
                "Any attack picks the right one of {} equally likely candidates with probability ≤ {}",
                p.n("summary.prior_size", 1, Side::Nearest, "rero"),
                p.n("summary.gamma", digits::GAMMA, Side::Up, "rero"),
            ),
        },
        m = p.n("summary.prior_size", 1, Side::Nearest, "rero"),
        rdp = p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero"),
        riess = cite("ref-riess"),
        balle = p.prob_upper("summary.gamma_balle", digits::GAMMA, "rero"),
        score = score_label(&p.t("summary.attack_score")),
        rate = p.n("summary.attack_success_rate", digits::RATE, Side::Nearest, "attack"),
        lo = p.n("summary.attack_success_lower", digits::RATE, Side::Down, "attack"),
        up = p.n("summary.attack_success_upper", digits::RATE, Side::Up, "attack"),
        k = p.n("summary.attack_successes", 1, Side::Nearest, "attack"),
        n = p.n("summary.attack_trials", 1, Side::Nearest, "attack"),
    ));
    let fpr = p
        .f("summary.membership_fpr")
        .map_or_else(|| String::from("–"), fpr_label);
    h.push_str(&format!(
        "<li>How well could someone tell whether a record was in the training set? {tpr} (a blind guess has a true-positive rate of {fpr}), and {adv} (<a href=\"#tradeoff\">§4</a>, the certified trade-off curve {dong}).{corner}</li>\n",
        tpr = match p.f("summary.membership_tpr") {
            Some(x) if vacuous(x, digits::TPR) => format!("Nothing certified limits a membership attack's true-positive rate at a false-positive rate of {fpr}: no information"),
            _ => format!("No membership attack on this run reaches a true-positive rate above {} at a false-positive rate of {fpr}", p.n("summary.membership_tpr", digits::TPR, Side::Up, "tradeoff")),
        },
        adv = match p.f("summary.advantage") {
            Some(x) if vacuous(x, digits::TPR) => String::from("nothing limits an attack's TPR − FPR (no information)"),
            _ => format!("no attack's TPR − FPR exceeds {}", p.n("summary.advantage", digits::TPR, Side::Up, "tradeoff")),
        },
        dong = cite("ref-dong"),
        corner = audit_corner(&p),
    ));
    let gdp = p.t("audit.estimator") == "gdp";
    h.push_str(&format!(
        "<li>The training run is ({eps}, δ)-differentially private by the certified PLD accountant (true ε ≥ {lo}; ≤ {rdp} by RDP) (<a href=\"#config\">§1</a>, <a href=\"#ref-pld\">[5]</a>, <a href=\"#ref-rdp\">[6]</a>). The audit — the strongest threat model that fits the run, Nasr et al. 2021's gradient canary read through the released gradients <a href=\"#ref-nasr\">[4]</a>, {how} — showed ε ≥ {emp} at 95 % confidence{nothing}. {ceiling} (<a href=\"#audit\">§4</a>)</li>\n",
        how = if gdp {
            format!("its ε estimated as Gaussian DP at a threshold fixed in advance, as Nasr et al. 2023 audit a full batch {}", cite("ref-nasr2023"))
        } else {
            String::from("its ε a Clopper–Pearson lower bound at a held-out threshold (Nasr et al. 2021, Eqs. 4–5)")
        },
        nothing = if p.f("summary.epsilon_empirical") == Some(0.0) {
            ", that is nothing: its trials could not tell the runs with and without the canary apart"
        } else {
            ""
        },
        eps = p.n("summary.epsilon_pld", digits::EPSILON, Side::Up, "config"),
        lo = p.n("summary.epsilon_pld_lower", digits::EPSILON, Side::Down, "config"),
        rdp = p.n("summary.epsilon_rdp", digits::EPSILON, Side::Up, "config"),
        emp = p.n("summary.epsilon_empirical", digits::AUDIT_EPSILON, Side::Down, "audit"),
        ceiling = audit_ceiling(&p, "summary.epsilon_empirical_max", "summary.epsilon_pld"),
    ));
    let above_one = if p.f("summary.fil_mse_bound_median").is_some_and(|x| x > 1.0) {
        ", more than any guess with pixels in [0, 1] can err"
    } else {
        ""
    };
    h.push_str(&format!(
        "<li>How close could a reconstruction come? An unbiased reconstruction of a training image (pixels in [0, 1]) — one that uses no prior knowledge of what the images look like (<a href=\"#mse-reading\">§3</a>) — has mean squared error ≥ {mse} per pixel in the worst case over all images (certified; Guo et al. 2022 Thm 1 <a href=\"#ref-guo\">[3]</a>); for this run's own median training image the Fisher information leakage estimates ≥ {fil}{above_one}. An attack that knows the candidates, like the prior-aware attack above, is not unbiased: these bounds do not cover it, γ does.</li>\n",
        mse = p.n("summary.mse_lower_bound", digits::MSE, Side::Down, "mse"),
        fil = p.n("summary.fil_mse_bound_median", digits::FIL, Side::Down, "fil"),
    ));
    h.push_str("</ul></div>\n<p class=\"note\">Bounds are rounded to their safe side (upper bounds up, lower bounds down); every number links to the section that gives it. The attack's score (sum, top or loglik) is fixed before the trials, so its interval holds as stated; the other scores are computed in the same trials and shown in section 2 for information, each with its own interval; none is picked after the fact.</p>\n</section>\n");

    // 1. Configuration and accounting.
    h.push_str("<section id=\"config\">\n<h2>1. Configuration and the accountant's ε</h2>\n");
    h.push_str("<p>One DP-SGD configuration: the training run of the prior-aware attack (§2) and of the audit (§4), and the run whose Fisher information leakage is accounted (§3). Every bound on this page is for its (q, σ, T, δ). (<code>reconbound bound</code>'s default — q = 256/60000, T = 14063 — is another configuration.)</p>\n<table>\n");
    let rows: [(&str, String); 10] = [
        ("model", p.t("config.model")),
        ("data", p.t("config.data")),
        (
            "training examples |D⁻| (+ the target or canary)",
            p.n("config.train_size", 1, Side::Nearest, "config"),
        ),
        (
            "sampling rate q",
            p.n(
                "config.sampling_rate",
                digits::INPUT,
                Side::Nearest,
                "config",
            ),
        ),
        ("steps T", p.n("config.steps", 1, Side::Nearest, "config")),
        (
            "clipping norm C (hard clipping)",
            p.n("config.clip", digits::INPUT, Side::Nearest, "config"),
        ),
        (
            "learning rate (plain SGD, no momentum)",
            p.n("config.lr", digits::INPUT, Side::Nearest, "config"),
        ),
        (
            "noise multiplier σ",
            if p.has("config.epsilon") {
                format!(
                    "{} (calibrated by RDP to ε = {})",
                    p.n(
                        "config.noise_multiplier",
                        digits::INPUT,
                        Side::Nearest,
                        "config"
                    ),
                    p.n("config.epsilon", 4, Side::Nearest, "config")
                )
            } else {
                p.n(
                    "config.noise_multiplier",
                    digits::INPUT,
                    Side::Nearest,
                    "config",
                )
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
        p.n("bound.epsilon_rdp", digits::EPSILON, Side::Up, "config"),
        p.n("bound.best_order", digits::ORDER, Side::Nearest, "config")
    ));
    h.push_str(&format!(
        "<tr><td>PLD, certified <a href=\"#ref-pld\">[5]</a></td><td class=\"r\">≤ {}</td><td>certified bracket: the true ε is in [{}, {}]</td></tr>\n</table>\n</section>\n",
        p.n("bound.epsilon_pld", digits::EPSILON, Side::Up, "config"),
        p.n("bound.epsilon_pld_lower", digits::EPSILON, Side::Down, "config"),
        p.n("bound.epsilon_pld", digits::EPSILON, Side::Up, "config"),
    ));

    // 2. Reconstruction robustness.
    h.push_str("<section id=\"rero\">\n<h2>2. Reconstruction robustness</h2>\n");
    h.push_str(&format!("<p>With a uniform prior over m candidates (κ = 1/m), no adversary who knows everything but which candidate was trained on — the other training examples, every released gradient, the prior — reconstructs it exactly with probability above γ: Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a> (certified numerical value, the exact 1 − f(κ) of the run's trade-off curve: the tightest), and, from the run's RDP alone, the optimal conversion of Riess et al. 2026 <a href=\"#ref-riess\">[10]</a> (the best any RDP bound gives; computed at m = {} only, below) and Balle et al. 2022 Thm 2 <a href=\"#ref-balle\">[2]</a>. A bound of 1 excludes nothing: the page says “no information”.</p>\n", p.n("config.prior_size", 1, Side::Nearest, "rero")));
    h.push_str(&figure(
        figures.rero,
        &format!(
            "γ against the prior size (log axis from one power of ten to the next the prior sizes reach); the marker is the attack's success rate at m = {m} with its 95 % Clopper–Pearson interval. γ from RDP by the optimal conversion (Riess et al. 2026 <a href=\"#ref-riess\">[10]</a>), computed at m = {m} only: {rdp}.",
            m = p.n("config.prior_size", 1, Side::Nearest, "attack"),
            rdp = p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero"),
        ),
    ));
    h.push_str("<table>\n<tr><th>m</th><th>κ</th><th>γ Hayes, certified: ≤ its bound (≥ the lower end of its bracket)</th><th>γ from RDP, Balle et al.</th></tr>\n");
    let points = match at(r, "rero_curve") {
        Some(Value::Arr(a)) => a.len(),
        _ => 0,
    };
    for i in 0..points {
        let k = |key: &str| format!("rero_curve.{i}.{key}");
        h.push_str(&format!(
            "<tr><td class=\"r\">{}</td><td class=\"r\">{}</td><td class=\"r\">{} (≥ {})</td><td class=\"r\">{}</td></tr>\n",
            p.n(&k("prior_size"), 1, Side::Nearest, "rero"),
            p.n(&k("kappa"), 4, Side::Nearest, "rero"),
            p.prob_upper(&k("gamma"), digits::GAMMA, "rero"),
            p.n(&k("gamma_lower"), digits::GAMMA, Side::Down, "rero"),
            p.prob_upper(&k("gamma_balle"), digits::GAMMA, "rero"),
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&format!(
        "<p>At m = {m}, γ from the same RDP curve: {rdp} by the optimal conversion (Riess et al. 2026 <a href=\"#ref-riess\">[10]</a>), {balle} by Balle et al. 2022 Thm 2 <a href=\"#ref-balle\">[2]</a>; the Fano bound of Guo et al. 2022b <a href=\"#ref-fano\">[7]</a> (worst-case sensitivity Δ² = 4): {fano}. The one to quote is the tightest, {tight}: {g}.</p>\n",
        m = p.n("config.prior_size", 1, Side::Nearest, "rero"),
        rdp = p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero"),
        balle = p.prob_upper("bound.gamma_balle", digits::GAMMA, "rero"),
        fano = match p.f("bound.fano_success_bound") {
            Some(x) if vacuous(x, digits::GAMMA) => String::from("no information (the bound is 1)"),
            _ => format!("success ≤ {}", p.n("bound.fano_success_bound", digits::GAMMA, Side::Up, "rero")),
        },
        tight = p.tightest("bound").name,
        g = p.prob_upper(&p.tightest("bound").key, digits::GAMMA, "rero"),
    ));
    h.push_str("<h3 id=\"attack\">The prior-aware attack beside its bound</h3>\n");
    h.push_str(&format!(
        "<p>Per trial (a pure function of seed {} and the trial index), D⁻ and a prior of {} further candidates are drawn from the data, the target is picked uniformly, the model is trained on D⁻ plus the target with exactly the configuration of §1, and the adversary scores every candidate from the released gradients (Hayes et al. 2023 <a href=\"#ref-hayes\">[1]</a>). {} trials, two-sided 95 % Clopper–Pearson intervals. A whole interval above γ would be a bug.</p>\n",
        p.n("attack.seed", 1, Side::Nearest, "reproduce"),
        p.n("attack.prior_size", 1, Side::Nearest, "attack"),
        p.n("attack.trials", 1, Side::Nearest, "attack"),
    ));
    h.push_str("<table>\n<tr><th>score</th><th>successes / trials</th><th>success rate [95 % interval]</th><th>γ Hayes (must not be beaten)</th><th>γ from RDP: optimal conversion; Balle et al.</th></tr>\n");
    for score in ["sum", "top", "loglik"] {
        let k = |key: &str| format!("attack.scores.{score}.{key}");
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"r\">{} / {}</td><td class=\"r\">{} [{}, {}]</td><td class=\"r\">{}</td><td class=\"r\">{}; {}</td></tr>\n",
            score_label(score),
            p.n(&k("successes"), 1, Side::Nearest, "attack"),
            p.n("attack.trials", 1, Side::Nearest, "attack"),
            p.n(&k("success_rate"), 4, Side::Nearest, "attack"),
            p.n(&k("success_lower"), 4, Side::Down, "attack"),
            p.n(&k("success_upper"), 4, Side::Up, "attack"),
            p.prob_upper("attack.gamma", digits::GAMMA, "rero"),
            p.prob_upper("bound.gamma_rdp", digits::GAMMA, "rero"),
            p.prob_upper("attack.gamma_balle", digits::GAMMA, "rero"),
        ));
    }
    h.push_str(&format!(
        "</table>\n<p class=\"note\">{}</p>\n</section>\n",
        verdict(
            &p.t("attack.above_bound"),
            "No interval lies wholly above γ, as none may.",
            "An interval lies wholly above γ: that contradicts the bound — a bug; please report it.",
        )
    ));

    // 3. MSE.
    h.push_str("<section id=\"mse\">\n<h2>3. Mean squared error of a reconstruction</h2>\n");
    h.push_str(&format!(
        "<p>Guo et al. 2022 Thm 1 <a href=\"#ref-guo\">[3]</a>: the run is (2, {})-RDP under substitution (from the add/remove RDP at orders 4 and 3, Mironov 2017 Prop. 11 <a href=\"#ref-rdp\">[6]</a>), so any unbiased reconstruction of data in [0, 1]<sup>d</sup> has MSE ≥ <b>{}</b> per coordinate.</p>\n",
        p.n("bound.rdp_order2_substitution", digits::ORDER, Side::Up, "mse"),
        p.n("bound.mse_lower_bound", digits::MSE, Side::Down, "mse"),
    ));
    h.push_str(&format!(
        "<h3 id=\"fil\">Per-example Fisher information leakage</h3>\n<p>One training run of the configuration (seed {}, {} training examples; test accuracy {} on {} held-out images), with Guo et al.'s Alg. 1 <a href=\"#ref-guo\">[3]</a>: per example the FIL summed over the steps, Tr(I) from K = {} of d input coordinates per example and step, κ = {} (Thm 4), and the Thm 2 bound MSE ≥ d/Tr(I) for unbiased reconstructions. These are estimates from the realised run (Thm 3), not certified bounds.</p>\n",
        p.n("train.seed", 1, Side::Nearest, "reproduce"),
        p.n("train.train_size", 1, Side::Nearest, "fil"),
        p.n("train.test_accuracy", digits::TRAIN, Side::Nearest, "fil"),
        p.n("train.test_size", 1, Side::Nearest, "fil"),
        p.n("train.fil_coords", 1, Side::Nearest, "fil"),
        p.n("train.fil_kappa", digits::TRAIN, Side::Up, "fil"),
    ));
    h.push_str(&format!(
        "<table>\n<tr><th>per-example MSE ≥ d/Tr(I)</th><td>min {}, median {}, max {}</td></tr>\n<tr><th>examples ever in a batch</th><td>{}</td></tr>\n<tr><th>largest dFIL Tr(I)/d</th><td>{}</td></tr>\n<tr><th>MSE ≥ by RDP (Thm 1)</th><td>{}</td></tr>\n</table>\n",
        p.n("train.fil_mse_bound_min", digits::FIL, Side::Down, "fil"),
        p.n("train.fil_mse_bound_median", digits::FIL, Side::Down, "fil"),
        p.n("train.fil_mse_bound_max", digits::FIL, Side::Down, "fil"),
        p.n("train.fil_examples_sampled", 1, Side::Nearest, "fil"),
        p.n("train.fil_dfil_max", digits::FIL, Side::Up, "fil"),
        p.n("train.mse_lower_bound_rdp", digits::MSE, Side::Down, "mse"),
    ));
    h.push_str(&figure(
        figures.histogram,
        "Per-example MSE lower bounds from the FIL, with the RDP bound of Thm 1 and MSE = 1 marked (Guo et al. Fig. 2): right of MSE = 1 an unbiased reconstruction errs more than any guess in [0, 1].",
    ));
    h.push_str(&format!(
        "<p class=\"note\" id=\"mse-reading\"><b>Reading these numbers.</b> Both MSE bounds are for <em>unbiased</em> reconstructions: ones that, averaged over the training's randomness, return the true image whatever it is — an attacker with no prior knowledge of what the images look like. Thm 1 holds for every image of every run of this configuration (a certified worst case); the FIL bounds are this run's own images' (estimates, not certified), far larger because these images move the released gradients far less than the worst case allows. A bound above 1 — right of the MSE = 1 line — is more than any guess with pixels in [0, 1] can err: an unbiased reconstruction of that image does worse than guessing (Guo et al.'s “perfect privacy”). Attacks that use prior knowledge are biased and not covered: the prior-aware attack of §2, which knows the m candidates, reconstructs the target exactly {} of the time, within γ, the bound that covers it.</p>\n",
        p.n("summary.attack_success_rate", digits::RATE, Side::Nearest, "attack"),
    ));
    h.push_str(&figure(
        figures.images,
        "The training images with the highest dFIL (most exposed) and the lowest (least exposed) (Guo et al. Fig. 6).",
    ));
    h.push_str("</section>\n");

    // 4. Audit.
    h.push_str("<section id=\"audit\">\n<h2>4. The audit</h2>\n");
    h.push_str("<p id=\"tradeoff\">Every bound on this page is a point of one object, the run's trade-off curve f (f-DP, Dong, Roth &amp; Su 2022 <a href=\"#ref-dong\">[8]</a>): no test of whether the canary (or any record) was trained on has a true-positive rate above 1 − f at its false-positive rate; γ(κ) = 1 − f(κ) is its reconstruction reading and ε(δ) its dual. The audit's (FPR, TPR) corner, the pair of confidence limits that hold together, must lie under it: the distance between the two is how much an attack could still gain — or how loose the bound is.</p>\n");
    h.push_str(&figure(
        figures.tradeoff,
        "The certified trade-off curve of the run (log FPR axis), the blind guess, and the audit's corner (FPR upper limit, TPR lower limit).",
    ));
    let fixed = p.t("audit.threshold_rule") == "fixed";
    let how = if fixed {
        format!(
            "the threshold is fixed in advance at {} — the likelihood-ratio score's equal-prior (Bayes) threshold, chosen before any trial — so every trial is scored; the run is full-batch, so its trade-off curve is exactly Gaussian and the estimate is Gaussian DP, as Nasr et al. 2023 <a href=\"#ref-nasr2023\">[9]</a> audit the full batch at a threshold fixed in advance: μ̂ = Φ⁻¹(1 − FPR̄) − Φ⁻¹(FNR̄), a lower confidence bound on the run's μ, and the ε it implies",
            p.n("audit.threshold", 3, Side::Nearest, "audit"),
        )
    } else {
        format!(
            "the threshold is chosen on the first {} trials and the others are scored (Clopper–Pearson, Nasr et al. 2021 Eqs. 4–5, valid for any mechanism)",
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
        "<table>\n<tr><th>threat model</th><td>{} / {}</td></tr>\n<tr><th>false positives / trials without the canary</th><td>{} / {} (rate ≤ {})</td></tr>\n<tr><th>false negatives / trials with the canary</th><td>{} / {} (rate ≤ {})</td></tr>\n{mu_row}<tr><th>empirical ε (95 % lower bound)</th><td><b>≥ {}</b></td></tr>\n<tr><th>the most any audit of this size could show (no error at all)</th><td>{}</td></tr>\n<tr><th>the accountant's ε (PLD, certified; RDP)</th><td>≤ {}; ≤ {}</td></tr>\n</table>\n<p class=\"note\">{} {gap} {ceiling}</p>\n</section>\n",
        p.t("audit.crafter"),
        p.t("audit.distinguisher"),
        p.n("audit.false_positives", 1, Side::Nearest, "audit"),
        p.n("audit.negatives", 1, Side::Nearest, "audit"),
        p.n("audit.fpr_upper", digits::ERROR_RATE, Side::Up, "audit"),
        p.n("audit.false_negatives", 1, Side::Nearest, "audit"),
        p.n("audit.positives", 1, Side::Nearest, "audit"),
        p.n("audit.fnr_upper", digits::ERROR_RATE, Side::Up, "audit"),
        p.n("audit.epsilon_empirical", digits::AUDIT_EPSILON, Side::Down, "audit"),
        p.n("audit.epsilon_empirical_max", digits::AUDIT_EPSILON, Side::Up, "audit"),
        p.n("audit.epsilon_pld", digits::EPSILON, Side::Up, "config"),
        p.n("audit.epsilon_rdp", digits::EPSILON, Side::Up, "config"),
        verdict(
            &p.t("audit.above_pld"),
            "The empirical ε is not above the accountant's, as it must not be.",
            "The empirical ε is above the accountant's: that contradicts the bound — a bug; please report it.",
        ),
        ceiling = audit_ceiling(&p, "audit.epsilon_empirical_max", "audit.epsilon_pld"),
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
        "<pre>{}</pre>\n<p>Seed {}, reconbound {}, wall time {} s. Every number but the wall time is the same for the same command (and for its <code>--shard K/M</code> files merged by <code>reconbound merge … --out FILE</code>); <code>--json</code> prints every number of this page.</p>\n</section>\n",
        p.command(),
        p.n("config.seed", 1, Side::Nearest, "reproduce"),
        p.t("version"),
        p.n("seconds", 3, Side::Nearest, "reproduce"),
    ));

    h.push_str("<section id=\"refs\">\n<h2>References</h2>\n<ol>\n");
    for (id, text) in REFERENCES {
        h.push_str(&format!("<li id=\"{id}\">{text}</li>\n"));
    }
    h.push_str("</ol>\n</section>\n</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    const FIGURES: Figures<'static> = Figures {
        rero: "",
        tradeoff: "",
        histogram: "",
        images: "",
        reconn_images: "",
    };

    /// A report object with the summary of issue 31's m = 100 page: γ ≤ 0.0422, the attack
    /// 0.05 [0.006, 0.170] (5 of 100), and the default run's MSE numbers.
    fn report(rate: f64, lower: f64, fil_median: f64, out: &str) -> Object {
        let text = format!(
            r#"{{"command_line": "reconbound report --data embedded --train-size 999 --sampling-rate 1 --steps 100 --clip 0.1 --lr 10 --epsilon 8 --delta 0.00001 --prior-size 100 --trials 100 --audit-trials 150 --fil-coords 50 --seed 0",
            "out": {out:?},
            "config": {{"clip": 0.1, "lr": 10, "sampling_rate": 1, "prior_size": 100}},
            "summary": {{"prior_size": 100, "gamma": 0.04219, "attack_score": "sum",
              "attack_trials": 100, "attack_successes": 5, "attack_success_rate": {rate},
              "attack_success_lower": {lower}, "attack_success_upper": 0.1696,
              "mse_lower_bound": 3.905e-6, "fil_mse_bound_median": {fil_median}}}}}"#
        );
        match parse(&text) {
            Ok(Value::Obj(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    /// Issue 31: "any attack ≤ 0.0422" then "picked it 0.05 of the time" with no word on
    /// sampling noise; the page says the rate is measured and why being above γ is no
    /// contradiction while the interval holds γ — and that a whole interval above is a bug.
    #[test]
    fn a_measured_rate_above_gamma_is_explained_as_sampling_noise() {
        let page = super::page(&report(0.05, 0.0164, 40.45, "r.html"), &FIGURES);
        assert!(page.contains("sampling noise"), "{page}");
        assert!(page.contains("above γ only by sampling noise"), "{page}");
        let inside = super::page(&report(0.03, 0.006, 40.45, "r.html"), &FIGURES);
        assert!(inside.contains("sampling noise") && !inside.contains("above γ only by"));
        let bug = super::page(&report(0.2, 0.11, 40.45, "r.html"), &FIGURES);
        assert!(bug.contains("whole interval is above γ") && bug.contains("a bug"));
    }

    /// Issue 31: "MSE ≥ 3.90e-6" beside "the median image's bound at 40.4", a histogram right
    /// of MSE = 1 and exact reconstructions in §2: the page says what "unbiased" means, why
    /// the two MSE bounds differ, what a bound above 1 means, and that the prior-aware attack
    /// is not covered by them.
    #[test]
    fn the_mse_bounds_are_reconciled_with_the_attack_in_plain_words() {
        let page = super::page(&report(0.05, 0.0164, 40.45, "r.html"), &FIGURES);
        let summary =
            &page[page.find("id=\"summary\"").unwrap()..page.find("id=\"config\"").unwrap()];
        for needle in [
            "no prior knowledge",
            "worst case",
            "more than any guess",
            "not unbiased",
        ] {
            assert!(
                summary.contains(needle),
                "summary lacks {needle:?}: {summary}"
            );
        }
        let mse = &page[page.find("id=\"mse\"").unwrap()..page.find("id=\"audit\"").unwrap()];
        assert!(mse.contains("Reading these numbers"), "{mse}");
        assert!(mse.contains("perfect privacy"), "{mse}");
        // a median below 1 is not said to be above it
        let low = super::page(&report(0.05, 0.0164, 0.2, "r.html"), &FIGURES);
        let low_summary =
            &low[low.find("id=\"summary\"").unwrap()..low.find("id=\"config\"").unwrap()];
        assert!(
            !low_summary.contains("more than any guess"),
            "{low_summary}"
        );
    }

    /// Issue 31: one row showed "0.1, 10" for "clipping norm C (hard), learning rate,
    /// momentum 0": one value per row.
    #[test]
    fn clipping_norm_and_learning_rate_have_a_row_each() {
        let page = super::page(&report(0.05, 0.0164, 40.45, "r.html"), &FIGURES);
        assert!(!page.contains("learning rate, momentum 0"));
        let row = |label: &str| {
            let i = page
                .find(&format!("<tr><th>{label}</th><td>"))
                .unwrap_or_else(|| panic!("{label}"));
            let rest = &page[i..];
            String::from(&rest[..rest.find("</tr>").unwrap()])
        };
        assert!(row("clipping norm C (hard clipping)").contains("data-key=\"config.clip\""));
        assert!(!row("clipping norm C (hard clipping)").contains("config.lr"));
        assert!(row("learning rate (plain SGD, no momentum)").contains("data-key=\"config.lr\""));
    }

    /// Issue 31: the reproduce command wrapped mid-word (`/tm` `p/…`, CSS break-all). It is
    /// now broken only between arguments, with shell line continuations, so it pastes into a
    /// shell as printed; a path with a space is quoted.
    #[test]
    fn the_reproduce_command_breaks_between_arguments_and_pastes_into_a_shell() {
        let page = super::page(
            &report(0.05, 0.0164, 40.45, "/tmp/my pages/r.html"),
            &FIGURES,
        );
        assert!(!page.contains("break-all"));
        let i = page.find("<pre>").unwrap() + 5;
        let pre = &page[i..i + page[i..].find("</pre>").unwrap()];
        let lines: Vec<&str> = pre.lines().collect();
        assert!(lines.len() > 1, "{pre}");
        for (k, l) in lines.iter().enumerate() {
            assert!(
                l.chars().count() <= 80,
                "line of {} characters: {l}",
                l.chars().count()
            );
            assert_eq!(l.ends_with(" \\"), k + 1 < lines.len(), "{l}");
        }
        let joined = pre.replace(" \\\n    ", " ").replace("&apos;", "'");
        assert_eq!(
            joined,
            "reconbound report --data embedded --train-size 999 --sampling-rate 1 --steps 100 --clip 0.1 --lr 10 --epsilon 8 --delta 0.00001 --prior-size 100 --trials 100 --audit-trials 150 --fil-coords 50 --seed 0 --out '/tmp/my pages/r.html'"
        );
        // every flag starts a line or follows its predecessor's value on the same line
        assert!(
            lines.iter().skip(1).all(|l| l.starts_with("    --")),
            "{pre}"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("--seed"), "--seed");
        assert_eq!(
            shell_word("/tmp/a-b_c.d/x=1,2:3@4%5+6"),
            "/tmp/a-b_c.d/x=1,2:3@4%5+6"
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
