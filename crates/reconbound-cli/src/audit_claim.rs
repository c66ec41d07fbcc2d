//! What an audit is set up with and what it says about a claim, shared by the many-run audit
//! (`audit.rs`) and the one-run audit (`audit_one_run.rs`), one floor below both (issue 44:
//! they lived in `audit.rs`, which dispatches to the one-run audit): the threat model's flags
//! (`--crafter`, `--distinguisher`, `--view`), the claim under audit
//! (`--claimed-noise-multiplier` / `--claimed-epsilon`), its verdict in text and JSON, and
//! the accountant's ε line.

use super::args::{Flags, UsageError};
use super::failure::{shown, Failure};
use super::format::{sig, Side};
use super::json::{Object, Value};
use reconbound::attacks::audit::canary::{Crafter, GradientShape};
use reconbound::attacks::audit::claim::{self, claim_error, Claim, Theory, Verdict};
use reconbound::attacks::audit::run::BatchView;
use reconbound::attacks::audit::run::Distinguisher;
use std::format;
use std::string::String;
use std::vec::Vec;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// Which distinguishers score each crafter's trials.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Pairing {
    /// Nasr et al.'s Table I.
    Paired,
    /// All four.
    All,
    /// The same list for every crafter.
    List(Vec<Distinguisher>),
}

impl Pairing {
    pub(super) fn parse(raw: &str) -> Result<Self, String> {
        let bad =
            |t: &str| {
                format!(
                "flag '--distinguisher': '{}' is not one of 1, 2, 2-mean, 2-max, 3, paired, all",
                t.chars().filter(|c| !c.is_control()).take(30).collect::<String>()
            )
            };
        match raw.trim() {
            "paired" => return Ok(Pairing::Paired),
            "all" => return Ok(Pairing::All),
            _ => {}
        }
        let mut list = Vec::new();
        for token in raw.split(',').map(str::trim) {
            let d = match token {
                "1" | "final-loss" => Distinguisher::FinalLoss,
                "2" | "2-mean" | "mean-loss" => Distinguisher::MeanLoss,
                "2-max" | "max-loss" => Distinguisher::MaxLoss,
                "3" | "gradient" => Distinguisher::GradientTest,
                "paired" | "all" => {
                    return Err(format!(
                        "flag '--distinguisher': '{token}' stands alone, not in a list"
                    ))
                }
                other => return Err(bad(other)),
            };
            if list.contains(&d) {
                return Err(format!(
                    "flag '--distinguisher': {} is given twice in '{}'",
                    d.name(),
                    raw.chars().take(60).collect::<String>()
                ));
            }
            list.push(d);
        }
        Ok(Pairing::List(list))
    }

    /// The canonical text (parses back to the same pairing).
    pub(super) fn name(&self) -> String {
        match self {
            Pairing::Paired => String::from("paired"),
            Pairing::All => String::from("all"),
            Pairing::List(l) => l.iter().map(|d| d.name()).collect::<Vec<_>>().join(","),
        }
    }

    pub(super) fn for_crafter(&self, c: Crafter) -> Vec<Distinguisher> {
        match self {
            Pairing::All => Distinguisher::ALL.to_vec(),
            Pairing::List(l) => l.clone(),
            Pairing::Paired => match c {
                Crafter::Example | Crafter::Mislabelled | Crafter::ClipBkd => {
                    std::vec![Distinguisher::FinalLoss, Distinguisher::MeanLoss]
                }
                Crafter::Adaptive => std::vec![Distinguisher::MeanLoss],
                Crafter::Gradient(_) | Crafter::MaliciousDataset(_) | Crafter::OpposedDataset => {
                    std::vec![Distinguisher::GradientTest]
                }
            },
        }
    }
}

/// One crafter of `--crafter` (a number or a [`Crafter::name`]).
pub(super) fn parse_crafter(token: &str) -> Option<Crafter> {
    let spread = |rest: &str, f: fn(GradientShape) -> Crafter| {
        rest.parse::<usize>()
            .ok()
            .filter(|k| *k >= 2 && k % 2 == 0)
            .map(|k| f(GradientShape::Spread(k)))
    };
    match token {
        "1" | "example" => Some(Crafter::Example),
        "2" | "mislabelled" => Some(Crafter::Mislabelled),
        "clipbkd" => Some(Crafter::ClipBkd),
        "3" | "adaptive" => Some(Crafter::Adaptive),
        "4" | "gradient-dirac" => Some(Crafter::Gradient(GradientShape::Dirac)),
        "5" | "dataset-dirac" => Some(Crafter::MaliciousDataset(GradientShape::Dirac)),
        "dataset-opposed" => Some(Crafter::OpposedDataset),
        t => {
            if let Some(rest) = t.strip_prefix("gradient-spread-") {
                spread(rest, Crafter::Gradient)
            } else if let Some(rest) = t.strip_prefix("dataset-spread-") {
                spread(rest, Crafter::MaliciousDataset)
            } else {
                None
            }
        }
    }
}

pub(super) fn parse_crafters(raw: &str) -> Result<Vec<Crafter>, String> {
    if raw.trim() == "all" {
        return Ok(Crafter::TABLE_ONE.to_vec());
    }
    let mut list = Vec::new();
    for token in raw.split(',').map(str::trim) {
        let c = parse_crafter(token).ok_or_else(|| {
            format!(
                "flag '--crafter': '{}' is not one of 1, example, 2, mislabelled, clipbkd, 3, adaptive, 4, gradient-dirac, gradient-spread-K, 5, dataset-dirac, dataset-spread-K (K even >= 2), dataset-opposed, all",
                token.chars().filter(|c| !c.is_control()).take(30).collect::<String>()
            )
        })?;
        if list.contains(&c) {
            return Err(format!("flag '--crafter': {} is given twice", c.name()));
        }
        list.push(c);
    }
    Ok(list)
}

/// `claim` and `claim_value` (S′, E or null) of the JSON.
pub(super) fn write_claim(claim: Claim, o: &mut Object) {
    o.str("claim", claim.name());
    match claim.value() {
        Some(x) => o.num("claim_value", x),
        None => o.put("claim_value", Value::Null),
    };
}

pub(super) fn read_claim(o: &Object) -> Result<Claim, String> {
    Ok(match o.get_str("claim")? {
        "trainer" => match o.get("claim_value") {
            Some(Value::Null) => Claim::Trainer,
            _ => return Err(String::from("claim 'trainer' with a claim_value")),
        },
        "noise-multiplier" => Claim::NoiseMultiplier(o.get_f64("claim_value")?),
        "epsilon" => Claim::Epsilon(o.get_f64("claim_value")?),
        other => return Err(format!("unknown claim '{other}'")),
    })
}

/// The claim checked by the core, its error rendered with the flag's name.
pub(super) fn check_claim(claim: Claim) -> Result<(), String> {
    claim
        .checked()
        .map(|_| ())
        .map_err(|e| super::failure::render_invalid(&e))
}

/// The text's line on the claim (empty for the trainer's own σ).
pub(super) fn claim_line(claim: Claim, sigma: f64) -> String {
    match claim {
        Claim::Trainer => String::new(),
        Claim::NoiseMultiplier(s) => format!(
            "  claim under audit: σ′ = {} at the same q, T, δ — the accountant's ε below is the claim's; the\n    trainer runs at σ = {}\n",
            shown(s),
            sig(sigma, 6, Side::Nearest)
        ),
        Claim::Epsilon(e) => format!(
            "  claim under audit: ε = {} at δ (given; the accountant's ε below is the trainer's, σ = {})\n",
            shown(e),
            sig(sigma, 6, Side::Nearest)
        ),
    }
}

/// The verdict paragraph of the core's [`Verdict`] on `claim` (empty for the trainer's own σ).
pub(super) fn verdict_text(claim: Claim, v: &Verdict, alpha: f64) -> String {
    if claim == Claim::Trainer {
        return String::new();
    }
    let (claimed, refuting, rows) = (v.claimed, v.refuting, v.rows);
    let what = match claim {
        Claim::NoiseMultiplier(s) => {
            format!("σ′ = {}, ε = {}", shown(s), sig(claimed, 4, Side::Up))
        }
        _ => format!("ε = {}", shown(claimed)),
    };
    if refuting > 0 {
        format!(
            "\n  claim ({what}): REFUTED — {refuting} of {rows} row(s) show a lower bound above it; each row\n    holds with probability >= {} %, so the refutation is wrong with probability <= {} (α per row,\n    summed over the rows).\n",
            shown(100.0 * (1.0 - alpha)),
            sig(claim_error(alpha, rows), 3, Side::Up)
        )
    } else {
        format!(
            "\n  claim ({what}): not refuted — no row's lower bound is above it (not a proof of the claim:\n    a stronger adversary or more trials may refute it).\n"
        )
    }
}

/// The claim's verdict keys of an audit's JSON: `epsilon_claimed`, `claim_refuted` and
/// `claim_error` (the last two `null` for an estimate that is no lower bound, which refutes
/// nothing).
pub(super) fn write_claim_verdict(o: &mut Object, v: &Verdict) {
    o.num("epsilon_claimed", v.claimed);
    match (v.refuted, v.error) {
        (Some(refuted), Some(error)) => o
            .put("claim_refuted", Value::Bool(refuted))
            .num("claim_error", error),
        _ => o
            .put("claim_refuted", Value::Null)
            .put("claim_error", Value::Null),
    };
}

/// `--claimed-noise-multiplier` / `--claimed-epsilon` (excluding each other; refused with
/// `gdp`, which is no lower bound).
pub(super) fn parse_claim(f: &Flags, gdp: bool) -> Result<Claim, Failure> {
    let s = f.f64("claimed-noise-multiplier")?;
    let e = f.f64("claimed-epsilon")?;
    let claim = match (s, e) {
        (Some(_), Some(_)) => return Err(usage(String::from(
            "flag '--claimed-epsilon' excludes '--claimed-noise-multiplier' (one claim per audit)",
        ))),
        (Some(s), None) => Claim::NoiseMultiplier(s),
        (None, Some(e)) => Claim::Epsilon(e),
        (None, None) => Claim::Trainer,
    };
    if gdp && matches!(claim, Claim::Epsilon(_)) {
        return Err(usage(String::from(
            "flag '--claimed-epsilon' does not apply with '--estimator gdp': a GDP estimate is no lower bound on ε, so an ε above the claim refutes it at no confidence (use cp or one-run; --claimed-noise-multiplier on the full batch is a Gaussian curve the GDP μ̂ can refute)",
        )));
    }
    check_claim(claim).map_err(usage)?;
    Ok(claim)
}

/// `--view informed|expected-batch` (default informed).
pub(super) fn parse_view(f: &Flags) -> Result<BatchView, Failure> {
    match f.raw("view").map(str::trim) {
        None => Ok(BatchView::Informed),
        Some(v) => BatchView::from_name(v).ok_or_else(|| {
            usage(format!(
                "flag '--view': '{}' is not one of informed, expected-batch",
                v.chars()
                    .filter(|c| !c.is_control())
                    .take(30)
                    .collect::<String>()
            ))
        }),
    }
}

/// The text's line on Distinguisher 3's view of D's batches.
pub(super) fn view_line(view: BatchView, full_batch: bool) -> String {
    let what = if full_batch {
        "the full batch: D's whole sum, whichever view"
    } else {
        match view {
            BatchView::Informed => {
                "K_t = the clipped sum over D's actual batch (D and its batches known, as DP-SGD's analysis allows)"
            }
            BatchView::ExpectedBatch => {
                "K_t = q × D's whole clipped sum (D's batches secret: a weaker adversary)"
            }
        }
    };
    format!(
        "  adversary view {} (Distinguisher 3, r_t = B·ḡ_t − K_t): {what}\n",
        view.name()
    )
}

/// The accountant's ε by RDP and PLD at (q, σ, T, δ) ([`claim::accountant`]).
pub(super) fn accountant_at(q: f64, sigma: f64, steps: u64, delta: f64) -> Result<Theory, Failure> {
    Ok(claim::accountant(q, sigma, steps, delta)?)
}

/// The table's "accountant:" line (with its blank line after).
pub(super) fn theory_line(theory: &Theory) -> String {
    let pld = match &theory.pld {
        Ok(e) => format!(
            "ε ∈ [{}, {}] (PLD, certified)",
            sig(e.lower, 6, Side::Down),
            sig(e.value, 6, Side::Up)
        ),
        Err(why) => format!("PLD {}", why.reason()),
    };
    format!(
        // 6 digits, as bound and the pages round an accountant's ε (issue 43)
        "  accountant: ε ≤ {} (RDP, order {}), {pld}\n\n",
        sig(theory.rdp.epsilon, 6, Side::Up),
        shown(theory.rdp.order)
    )
}

/// `epsilon_rdp`, `epsilon_rdp_order`, `epsilon_pld` and `epsilon_pld_lower` (or null and
/// `epsilon_pld_note`).
pub(super) fn write_theory(theory: &Theory, o: &mut Object) {
    o.num("epsilon_rdp", theory.rdp.epsilon)
        .num("epsilon_rdp_order", theory.rdp.order);
    match &theory.pld {
        Ok(e) => o
            .num("epsilon_pld", e.value)
            .num("epsilon_pld_lower", e.lower),
        Err(why) => o
            .put("epsilon_pld", Value::Null)
            .put("epsilon_pld_lower", Value::Null)
            .str("epsilon_pld_note", &why.reason()),
    };
}
