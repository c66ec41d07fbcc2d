//! One description of a run, spelled the same everywhere: the run flags, the run file
//! (`--run FILE`, JSON, what `reconbound run --json` prints) and Python's keywords are the
//! same names (`--batch-size` ↔ `batch_size`), read into the core's
//! [`Description`](reconbound::accounting::description::Description) and resolved by it.
//!
//! Commands that take one phase (q, σ, T) — `bound`, `epsilon`, `rero`, `tradeoff`, and
//! `calibrate` (which takes (q, T) and finds σ) — take
//! every spelling through [`normalise`]: a run file, a fraction `--sampling-rate 1/235`,
//! `--counting opacus`, `--accumulation K`, `--microbatches M`, `--relation` and
//! `--sampling` are resolved by the core and replaced by the mechanism's own flags
//! (`--noise-multiplier σ --sampling-rate q --steps T`, or `--phase` per phase), each number
//! in its shortest round-trip form, so the command computes on the same bits whichever way
//! the run was given. A run those commands cannot account (shuffled batches; fixed-size
//! batches but in `epsilon` and `tradeoff`; Poisson sampling under replace-one) is refused naming the flag;
//! `reconbound check` takes all of them.

use super::args::{parse, repeated, switch, value, Flags, Spec, UsageError};
use super::commands::defaults;
use super::failure::Failure;
use super::input::read_text_bounded;
use super::json::{self, Object, Value};
use super::schedule as sched;
use reconbound::accounting::description::{Counting, Description, Length, Rate, Resolved, Sampler};
use reconbound::accounting::run::Adjacency;
use reconbound::accounting::schedule::{Phase, Schedule};
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// The run flags (every command that takes a run reads these names).
pub(crate) const RUN_FLAGS: [Spec; 14] = [
    value("run"),
    value("noise-multiplier"),
    value("sampling-rate"),
    value("batch-size"),
    value("dataset-size"),
    value("steps"),
    value("epochs"),
    value("sampling"),
    value("counting"),
    value("accumulation"),
    value("microbatches"),
    value("relation"),
    repeated("phase"),
    value("schedule"),
];

/// The run flags' names.
const NAMES: [&str; 14] = [
    "run",
    "noise-multiplier",
    "sampling-rate",
    "batch-size",
    "dataset-size",
    "steps",
    "epochs",
    "sampling",
    "counting",
    "accumulation",
    "microbatches",
    "relation",
    "phase",
    "schedule",
];

/// The flags [`normalise`] resolves (the others the commands read as they are).
const DESCRIPTIVE: [&str; 6] = [
    "run",
    "counting",
    "accumulation",
    "microbatches",
    "relation",
    "sampling",
];

/// The cap on a run file: 1 MiB (a run with a schedule of phases is a few KiB).
pub(crate) const RUN_FILE_CAP: u64 = 1 << 20;

/// The help paragraph on the run flags.
pub(crate) const HELP: &str = "\
The run (the same names as flags, as keys of a run file and as Python keywords):
  --noise-multiplier S        σ (noise std σ·C)
  --sampling-rate Q           q; a fraction such as 1/235 is read exactly as 1.0/235.0
  --batch-size B --dataset-size N    instead of q: q = K·B/N (K: --accumulation)
  --steps T | --epochs E      noisy steps, or epochs (T = ⌈E/q⌉; see --counting)
  --sampling poisson|full-batch|fixed-size|shuffled    the sampler (default poisson)
  --counting expected|opacus  how epochs become steps: expected (T = ⌈E/q⌉), or Opacus's
                              loader (q = 1/⌈N/(K·B)⌉, T = ⌈E·int(1/q)⌉: its sampler's steps,
                              one fewer an epoch than the batches for some N/B, e.g. 930/10)
  --accumulation K            K physical batches of B per noisy step (effective batch K·B)
  --microbatches M            TensorFlow Privacy's num_microbatches: M < K·B doubles the
                              sensitivity (accounted at σ/2, TF Privacy #620)
  --relation add-remove|replace-one  the neighbouring relation (default: add-remove;
                              replace-one for fixed-size batches)
  --phase Q,S,T (repeated) | --schedule FILE.csv    Poisson phases instead of one run
  --run FILE                  a run file (JSON, as 'reconbound run --json' prints it)
";

/// Whether `args` of `command` use a run spelling that [`normalise`] must resolve
/// (`calibrate` has no batch, data set or epochs of its own either).
fn needs_normalising(command: &str, args: &[String]) -> bool {
    args.iter().any(|a| {
        let Some(body) = a.strip_prefix("--") else {
            return false;
        };
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        DESCRIPTIVE.contains(&name)
            || (command == "calibrate" && matches!(name, "batch-size" | "dataset-size" | "epochs"))
    }) || fraction_rate(args)
}

/// Whether `--sampling-rate` is given as a fraction `A/B`.
fn fraction_rate(args: &[String]) -> bool {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--sampling-rate" {
            if it.next().is_some_and(|v| v.contains('/')) {
                return true;
            }
        } else if let Some(v) = a.strip_prefix("--sampling-rate=") {
            if v.contains('/') {
                return true;
            }
        }
    }
    false
}

/// `args` of `command` with every run spelling resolved into the mechanism's flags (module
/// docs); unchanged when they use none.
///
/// # Errors
/// A malformed run flag or file, a run the command cannot account.
pub(crate) fn normalise(command: &str, args: &[String]) -> Result<Vec<String>, Failure> {
    if !needs_normalising(command, args)
        || args
            .iter()
            .any(|a| a == "--help" || a == "-h" || a == "--help-all")
    {
        return Ok(args.to_vec());
    }
    if matches!(command, "epsilon" | "tradeoff") && !args.iter().any(|a| is_flag(a, "run")) {
        // `epsilon`/`tradeoff --sampling fixed` is their own form: normalise only what they
        // do not know
        let own = !args.iter().any(|a| {
            ["counting", "accumulation", "microbatches", "relation"]
                .iter()
                .any(|n| is_flag(a, n))
        }) && !fraction_rate(args);
        if own {
            return Ok(args.to_vec());
        }
    }
    // split the run flags from the others
    let mut run_args = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let name = a
            .strip_prefix("--")
            .map(|b| b.split_once('=').map_or(b, |(n, _)| n));
        match name {
            Some(n) if NAMES.contains(&n) => {
                run_args.push(a.clone());
                if !a.contains('=') {
                    if let Some(v) = args.get(i + 1).filter(|v| !v.starts_with("--")) {
                        run_args.push(v.clone());
                        i += 1;
                    }
                }
            }
            _ => rest.push(a.clone()),
        }
        i += 1;
    }
    let from_file = run_args.iter().any(|a| is_flag(a, "run"));
    if command == "calibrate" && !from_file {
        // calibrate finds σ: the run is described without one (σ = 1 stands in for the
        // resolution, and is not passed on; a run file's σ is not passed on either)
        if run_args.iter().any(|a| is_flag(a, "noise-multiplier")) {
            return Err(UsageError(String::from(
                "flag '--noise-multiplier' does not apply to 'calibrate' (it finds the noise multiplier)",
            ))
            .into());
        }
        run_args.push(String::from("--noise-multiplier"));
        run_args.push(String::from("1"));
    }
    let f = parse(&run_args, &RUN_FLAGS)?;
    let d = description(&f, false)?;
    let r = d.resolve()?;
    if command == "calibrate" {
        for (given, flag, why) in [
            (
                d.microbatches.is_some(),
                "microbatches",
                "the σ it returns would be the accounted σ/2, not the one to train with",
            ),
            (
                d.relation == Some(Adjacency::ReplaceOne),
                "relation",
                "it accounts add/remove",
            ),
        ] {
            if given {
                return Err(UsageError(format!(
                    "flag '--{flag}' does not apply to 'calibrate' ({why})"
                ))
                .into());
            }
        }
    }
    let mut out = mechanism_flags(command, &d, &r)?;
    if command == "calibrate" && d.phases.is_none() {
        out.drain(0..2); // the stand-in --noise-multiplier 1
    }
    out.extend(rest);
    Ok(out)
}

fn is_flag(arg: &str, name: &str) -> bool {
    arg.strip_prefix("--")
        .is_some_and(|b| b == name || b.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
}

/// The flags of the mechanism `r` for `command`.
fn mechanism_flags(command: &str, d: &Description, r: &Resolved) -> Result<Vec<String>, Failure> {
    let s = |x: &str| x.to_string();
    if d.sampler == Sampler::Shuffled {
        return Err(UsageError(format!(
            "flag '--sampling': shuffled batches have no accountant, so '{command}' has no guarantee for them; 'reconbound check' gives the certified lower bound on their ε (Chua et al. 2024)"
        ))
        .into());
    }
    if d.sampler == Sampler::FixedSize {
        if !matches!(command, "epsilon" | "tradeoff") {
            return Err(UsageError(format!(
                "flag '--sampling': fixed-size batches are accounted by 'epsilon', 'tradeoff' and 'check' (replace-one), not by '{command}'"
            ))
            .into());
        }
        let (be, n) = r.batch.unwrap_or((0, 0));
        return Ok(std::vec![
            s("--sampling"),
            s("fixed"),
            s("--batch-size"),
            be.to_string(),
            s("--dataset-size"),
            n.to_string(),
            s("--noise-multiplier"),
            format!("{:?}", d.noise_multiplier),
            s("--steps"),
            r.steps.to_string(),
        ]);
    }
    let phases: Vec<Phase> = match r.run.as_schedule() {
        Some(sch) => sch.phases().to_vec(),
        None => Vec::new(),
    };
    if r.relation == Adjacency::ReplaceOne {
        return Err(UsageError(format!(
            "flag '--relation': '{command}' states add/remove guarantees for Poisson sampling; replace-one is accounted by 'check' and 'report --run' (and by 'epsilon --sampling fixed-size')"
        ))
        .into());
    }
    if d.phases.is_some() {
        let mut out = Vec::new();
        for p in &phases {
            out.push(s("--phase"));
            out.push(format!(
                "{:?},{:?},{}",
                p.sampling_rate, p.noise_multiplier, p.steps
            ));
        }
        return Ok(out);
    }
    Ok(std::vec![
        s("--noise-multiplier"),
        format!("{:?}", r.accounted_noise_multiplier),
        s("--sampling-rate"),
        format!("{:?}", r.sampling_rate),
        s("--steps"),
        r.steps.to_string(),
    ])
}

/// A rate: a number, or a fraction `A/B` of two numbers (computed as A/B in f64, the correctly
/// rounded quotient).
fn rate_value(name: &str, text: &str) -> Result<f64, UsageError> {
    let bad = || {
        UsageError(format!(
            "flag '--{name}': '{}' is not a number or a fraction A/B",
            super::args::printable(text)
        ))
    };
    let t = text.trim();
    match t.split_once('/') {
        None => t.parse::<f64>().map_err(|_| bad()),
        Some((a, b)) => {
            let a = a.trim().parse::<f64>().map_err(|_| bad())?;
            let b = b.trim().parse::<f64>().map_err(|_| bad())?;
            if !(a.is_finite() && b.is_finite() && b != 0.0) {
                return Err(bad());
            }
            Ok(a / b)
        }
    }
}

/// The description of the run flags in `f` (or of the run file of `--run`), with `bound`'s
/// defaults (σ 1.1, batch 256 of 60,000, 60 epochs) for what is not given when
/// `with_defaults` is set.
///
/// # Errors
/// A malformed flag or file; `--run` with another run flag.
pub(crate) fn description(f: &Flags, with_defaults: bool) -> Result<Description, Failure> {
    if let Some(path) = f.raw("run") {
        if let Some(other) = NAMES.iter().skip(1).find(|n| f.has(n)) {
            return Err(UsageError(format!(
                "flags '--run' and '--{other}' exclude each other (the run file describes the whole run)"
            ))
            .into());
        }
        let text = read_text_bounded(path, RUN_FILE_CAP, "run")?;
        return from_json(&text).map_err(|e| UsageError(format!("flag '--run': {e}")).into());
    }
    if let Some(s) = sched::from_flags(
        f,
        &[
            "noise-multiplier",
            "sampling-rate",
            "batch-size",
            "dataset-size",
            "steps",
            "epochs",
            "accumulation",
            "microbatches",
            "counting",
        ],
    )? {
        let mut d = Description::phases(s);
        d.relation = relation(f.raw("relation"), "--relation")?;
        if let Some(x) = f.raw("sampling") {
            if sampler(x, "--sampling")? != Sampler::Poisson {
                return Err(UsageError(String::from(
                    "flags '--phase'/'--schedule' and '--sampling': phases are Poisson",
                ))
                .into());
            }
        }
        return Ok(d);
    }
    f.exclusive("sampling-rate", "batch-size")?;
    f.exclusive("sampling-rate", "dataset-size")?;
    f.exclusive("steps", "epochs")?;
    let sampler_v = match f.raw("sampling") {
        Some(x) => sampler(x, "--sampling")?,
        None => Sampler::Poisson,
    };
    let sigma = match f.f64("noise-multiplier")? {
        Some(s) => s,
        None if with_defaults => defaults::NOISE_MULTIPLIER,
        None => {
            return Err(UsageError(String::from("flag '--noise-multiplier' is required")).into())
        }
    };
    let rate = if let Some(q) = f.raw("sampling-rate") {
        Rate::SamplingRate(rate_value("sampling-rate", q)?)
    } else if f.has("batch-size") || f.has("dataset-size") {
        match (f.u64("batch-size")?, f.u64("dataset-size")?) {
            (Some(b), Some(n)) => Rate::Batch {
                batch_size: b,
                dataset_size: n,
            },
            _ => {
                return Err(UsageError(String::from(
                    "flags '--batch-size' and '--dataset-size' go together",
                ))
                .into())
            }
        }
    } else if sampler_v == Sampler::FullBatch {
        Rate::Full
    } else if with_defaults {
        Rate::Batch {
            batch_size: defaults::BATCH_SIZE,
            dataset_size: defaults::DATASET_SIZE,
        }
    } else {
        return Err(UsageError(String::from(
            "flag '--sampling-rate' (or '--batch-size' with '--dataset-size') is required",
        ))
        .into());
    };
    let length = if let Some(t) = f.u64("steps")? {
        Length::Steps(t)
    } else if let Some(e) = f.f64("epochs")? {
        Length::Epochs(e)
    } else if with_defaults {
        Length::Epochs(defaults::EPOCHS)
    } else {
        return Err(UsageError(String::from("flag '--steps' (or '--epochs') is required")).into());
    };
    let mut d = Description::new(sigma, rate, length);
    d.sampler = sampler_v;
    if let Some(c) = f.raw("counting") {
        d.counting = counting(c, "--counting")?;
    }
    if let Some(k) = f.u64("accumulation")? {
        d.accumulation = k;
    }
    d.microbatches = f.u64("microbatches")?;
    d.relation = relation(f.raw("relation"), "--relation")?;
    Ok(d)
}

fn sampler(x: &str, flag: &str) -> Result<Sampler, UsageError> {
    Sampler::parse(x).ok_or_else(|| {
        UsageError(format!(
            "{flag} = '{}' is not one of poisson, full-batch, fixed-size, shuffled",
            super::args::printable(x)
        ))
    })
}

fn counting(x: &str, flag: &str) -> Result<Counting, UsageError> {
    Counting::parse(x).ok_or_else(|| {
        UsageError(format!(
            "{flag} = '{}' is not one of expected, opacus",
            super::args::printable(x)
        ))
    })
}

fn relation(x: Option<&str>, flag: &str) -> Result<Option<Adjacency>, UsageError> {
    match x {
        None => Ok(None),
        Some("add-remove") => Ok(Some(Adjacency::AddRemove)),
        Some("replace-one") => Ok(Some(Adjacency::ReplaceOne)),
        Some(other) => Err(UsageError(format!(
            "{flag} = '{}' is not one of add-remove, replace-one",
            super::args::printable(other)
        ))),
    }
}

/// The format tag of a run file.
pub(crate) const FORMAT: &str = "reconbound-run/1";

/// The keys a run file may have.
const FILE_KEYS: [&str; 14] = [
    "format",
    "noise_multiplier",
    "sampling_rate",
    "batch_size",
    "dataset_size",
    "steps",
    "epochs",
    "sampling",
    "counting",
    "accumulation",
    "microbatches",
    "relation",
    "phases",
    "mechanism",
];

/// The description a run file holds. Its `mechanism` object, if present, is what the file
/// claims the run resolves to: checked against the resolution, field by field.
///
/// # Errors
/// Not JSON, not an object, an unknown key, a value of the wrong type, a `mechanism` that
/// disagrees with the description (the field named).
pub(crate) fn from_json(text: &str) -> Result<Description, String> {
    let v = json::parse(text)?;
    let Value::Obj(o) = v else {
        return Err(String::from("a run file is one JSON object"));
    };
    for (k, _) in o.entries() {
        if !FILE_KEYS.contains(&k.as_str()) {
            let shown: String = k.chars().filter(|c| !c.is_control()).take(40).collect();
            return Err(format!(
                "unknown key '{shown}' (keys: {})",
                FILE_KEYS.join(", ")
            ));
        }
    }
    if let Some(fmt) = o.get("format") {
        if *fmt != Value::Str(String::from(FORMAT)) {
            return Err(format!("key 'format' is not \"{FORMAT}\""));
        }
    }
    // the same checks as the flags, on the same names: rebuild the flags and read them
    let mut args: Vec<String> = Vec::new();
    for (k, val) in o.entries() {
        let key = k.as_str();
        if matches!(key, "format" | "mechanism") || *val == Value::Null {
            continue;
        }
        let flag = format!("--{}", key.replace('_', "-"));
        match (key, val) {
            ("phases", Value::Arr(items)) => {
                if items.is_empty() {
                    return Err(String::from(
                        "key 'phases' is empty (a schedule has at least one phase)",
                    ));
                }
                for (i, p) in items.iter().enumerate() {
                    let Value::Obj(p) = p else {
                        return Err(format!("phases[{i}] is not an object"));
                    };
                    if let Some((k, _)) = p.entries().iter().find(|(k, _)| {
                        !matches!(k.as_str(), "sampling_rate" | "noise_multiplier" | "steps")
                    }) {
                        let shown: String =
                            k.chars().filter(|c| !c.is_control()).take(40).collect();
                        return Err(format!(
                            "unknown key 'phases[{i}].{shown}' (keys: sampling_rate, noise_multiplier, steps)"
                        ));
                    }
                    let q = p
                        .get_f64("sampling_rate")
                        .map_err(|e| format!("phases[{i}]: {e}"))?;
                    let s = p
                        .get_f64("noise_multiplier")
                        .map_err(|e| format!("phases[{i}]: {e}"))?;
                    let t = p
                        .get_u64("steps")
                        .map_err(|e| format!("phases[{i}]: {e}"))?;
                    args.push(String::from("--phase"));
                    args.push(format!("{q},{s},{t}"));
                }
            }
            ("phases", _) => return Err(String::from("key 'phases' is not an array")),
            (_, Value::Num(x)) => {
                args.push(flag);
                args.push(x.to_string());
            }
            (_, Value::Int(n)) => {
                args.push(flag);
                args.push(n.to_string());
            }
            (_, Value::Str(s)) => {
                args.push(flag);
                args.push(s.clone());
            }
            _ => return Err(format!("key '{key}' is not a number or a string")),
        }
    }
    let f = parse(&args, &RUN_FLAGS).map_err(|e| keyed(&e.0))?;
    let d = description(&f, false).map_err(|e| keyed(&failure_text(e)))?;
    // the description must describe a run: its errors named by the file's keys
    let r = d
        .resolve()
        .map_err(|e| keyed(&super::failure::render_invalid(&e)))?;
    if let Some(m) = o.get("mechanism") {
        let Value::Obj(m) = m else {
            return Err(String::from("key 'mechanism' is not an object"));
        };
        let want = mechanism_json(&r);
        for (k, v) in m.entries() {
            match want.get(k) {
                Some(w) if same(w, v) => {}
                Some(w) => {
                    return Err(format!(
                        "mechanism.{k} = {} disagrees with the run's description, which gives {}",
                        short(v),
                        short(w)
                    ))
                }
                None => {
                    let shown: String = k.chars().filter(|c| !c.is_control()).take(40).collect();
                    return Err(format!("unknown key 'mechanism.{shown}'"));
                }
            }
        }
    }
    Ok(d)
}

/// `a` and `b` equal as JSON values, numbers by value (`1` and `1.0` alike).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Arr(x), Value::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Obj(x), Value::Obj(y)) => {
            x.entries().len() == y.entries().len()
                && x.entries()
                    .iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn short(v: &Value) -> String {
    let mut o = Object::new();
    o.put("v", v.clone());
    let r = o.render();
    let inner = r
        .trim_start_matches("{\"v\": ")
        .trim_end_matches('}')
        .to_string();
    inner.chars().take(60).collect()
}

/// A flag name in a message as the run file's key (`'--batch-size'` → `'batch_size'`).
fn keyed(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(i) = rest.find("--") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(tail.len());
        out.push_str(&tail[..end].replace('-', "_"));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn failure_text(f: Failure) -> String {
    match f {
        Failure::Usage(u) => u.0,
        Failure::Invalid(e) => super::failure::render_invalid(&e),
        Failure::Compute(m) => m,
    }
}

/// What a description resolves to, as the run file's `mechanism` object.
pub(crate) fn mechanism_json(r: &Resolved) -> Object {
    let mut m = Object::new();
    match r.run.as_schedule() {
        Some(s) if s.phases().len() > 1 => {
            put_phases(&mut m, s);
        }
        _ => {
            // the noise multiplier the run is built with (σ over the sensitivity for Poisson
            // sampling; σ for fixed-size batches, whose analysis doubles the sensitivity)
            let sigma = r
                .run
                .noise_and_steps()
                .map_or(r.accounted_noise_multiplier, |(s, _)| s);
            m.num("sampling_rate", r.sampling_rate)
                .num("noise_multiplier", sigma)
                .int("steps", r.steps);
        }
    }
    m.str(
        "sampling",
        match r.run.sampling() {
            Some(reconbound::accounting::run::Sampling::FixedSize { .. }) => "fixed-size",
            Some(reconbound::accounting::run::Sampling::Shuffled { .. }) => "shuffled",
            _ => "poisson",
        },
    );
    if let Some((be, n)) = r.batch {
        m.int("batch_size", be).int("dataset_size", n);
    }
    m.str("relation", r.relation.as_str());
    m
}

fn put_phases(o: &mut Object, s: &Schedule) {
    let items = s
        .phases()
        .iter()
        .map(|p| {
            let mut q = Object::new();
            q.num("sampling_rate", p.sampling_rate)
                .num("noise_multiplier", p.noise_multiplier)
                .int("steps", p.steps);
            Value::Obj(q)
        })
        .collect();
    o.put("phases", Value::Arr(items));
}

/// The run file of a description: its fields (the description as given) and the
/// `mechanism` it resolves to.
pub(crate) fn to_json(d: &Description, r: &Resolved) -> Object {
    let mut o = Object::new();
    o.str("format", FORMAT);
    if let Some(s) = &d.phases {
        put_phases(&mut o, s);
    } else {
        o.num("noise_multiplier", d.noise_multiplier);
        match d.rate {
            Rate::SamplingRate(q) => {
                o.num("sampling_rate", q);
            }
            Rate::Batch {
                batch_size,
                dataset_size,
            } => {
                o.int("batch_size", batch_size)
                    .int("dataset_size", dataset_size);
            }
            Rate::Full => {}
        }
        match d.length {
            Length::Steps(t) => o.int("steps", t),
            Length::Epochs(e) => o.num("epochs", e),
        };
        o.str("sampling", d.sampler.as_str())
            .str("counting", d.counting.as_str())
            .int("accumulation", d.accumulation);
        match d.microbatches {
            Some(m) => o.int("microbatches", m),
            None => o.put("microbatches", Value::Null),
        };
    }
    o.str("relation", r.relation.as_str());
    o.put("mechanism", Value::Obj(mechanism_json(r)));
    o
}

const RUN_HELP: &str = "\
usage: reconbound run [run flags | --run FILE] [--json]

Describes a training run once, in the words of its library, and shows the mechanism the
accountants analyse (sampling rate q, noise multiplier, steps, sampler, relation) and how it
was derived. With --json it prints the run file that every command takes as --run FILE (and
Python's reconbound.Run.read reads); its 'mechanism' object is checked against the
description when the file is read. With no flags: the defaults of 'bound' (σ 1.1, batch 256
of 60,000, 60 epochs).

Example (an Opacus run: σ 1.1, batch 256 of 60,000, 30 epochs, Opacus's step count):
  reconbound run --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 30 --counting opacus --json > run.json
  reconbound check --run run.json --claimed-epsilon 1.2 --delta 1e-5
";

/// `run --help` (issue 43: an example that exits 0; [`RUN_HELP`] and [`HELP`] are
/// `--help-all`).
const RUN_SHORT_HELP: &str = "\
usage: reconbound run [run flags | --run FILE] [--json]

Describes a training run once, in the words of its library, and shows the mechanism the
accountants analyse (sampling rate q, noise multiplier, steps, sampler, relation) and how it
was derived. With --json it prints the run file that every command takes as --run FILE (and
Python's reconbound.Run.read reads). With no flags: the defaults of 'bound' (σ 1.1, batch 256
of 60,000, 60 epochs).

Common flags (the same names as keys of a run file and as Python keywords):
  --noise-multiplier S        σ (noise std σ·C)
  --sampling-rate Q           q; a fraction such as 1/235 is read exactly as 1.0/235.0
  --batch-size B --dataset-size N    instead of q: q = K·B/N (K: --accumulation)
  --steps T | --epochs E      noisy steps, or epochs (T = ⌈E/q⌉; see --counting)
  --sampling poisson|full-batch|fixed-size|shuffled    the sampler (default poisson)
  --counting expected|opacus  how epochs become steps: expected (T = ⌈E/q⌉), or as Opacus's
                              loader counts them
  --accumulation K            K physical batches of B per noisy step (effective batch K·B)
  --microbatches M            TensorFlow Privacy's num_microbatches
  --relation add-remove|replace-one  the neighbouring relation
  --phase Q,S,T (repeated) | --schedule FILE.csv    Poisson phases instead of one run
  --json                      the run file

Example (an Opacus run: σ 1.1, batch 256 of 60,000, 30 epochs, Opacus's step count):
  reconbound run --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 \\
      --epochs 30 --counting opacus --json > run.json
  reconbound bound --run run.json
";

/// `reconbound run`.
pub(crate) fn run_command(args: &[String]) -> Result<String, Failure> {
    let mut specs: Vec<Spec> = RUN_FLAGS.to_vec();
    specs.push(switch("json"));
    let f = parse(args, &specs)?;
    if f.help {
        let full = String::from(RUN_HELP) + "\n" + HELP;
        return Ok(f.help_text("run", RUN_SHORT_HELP, full));
    }
    let d = description(&f, true)?;
    let r = d.resolve()?;
    if f.has("json") {
        return Ok(to_json(&d, &r).render() + "\n");
    }
    Ok(text(&d, &r))
}

/// The run in words.
pub(crate) fn text(d: &Description, r: &Resolved) -> String {
    let mut t = String::new();
    t.push_str(&format!("run: {}\n", r.run.analysis()));
    for line in &r.derivation {
        t.push_str(&format!("  {line}\n"));
    }
    if d.phases.is_none() {
        t.push_str(&format!(
            "mechanism: q = {}, σ over the sensitivity = {}, T = {}, sampler {}, relation {}\n",
            // 6 significant digits, as bound and the pages (issue 43); the run file holds
            // the exact values
            super::format::plain(r.sampling_rate, 6),
            super::format::plain(r.accounted_noise_multiplier, 6),
            r.steps,
            d.sampler.as_str(),
            r.relation.as_str()
        ));
    } else {
        t.push_str(&format!("relation {}\n", r.relation.as_str()));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_fraction_is_the_correctly_rounded_quotient() {
        assert_eq!(rate_value("sampling-rate", "1/235").unwrap(), 1.0 / 235.0);
        assert_eq!(
            rate_value("sampling-rate", " 256 / 60000 ").unwrap(),
            256.0 / 60000.0
        );
        assert!(rate_value("sampling-rate", "1/0").is_err());
        assert!(rate_value("sampling-rate", "a/2").is_err());
    }

    #[test]
    fn normalise_turns_an_opacus_run_into_its_mechanism() {
        let args = strings(&[
            "--noise-multiplier",
            "1.1",
            "--batch-size",
            "256",
            "--dataset-size",
            "60000",
            "--epochs",
            "30",
            "--counting",
            "opacus",
            "--delta",
            "1e-5",
        ]);
        let out = normalise("bound", &args).ok().unwrap();
        assert_eq!(
            out,
            strings(&[
                "--noise-multiplier",
                "1.1",
                "--sampling-rate",
                &(1.0f64 / 235.0).to_string(),
                "--steps",
                "7050",
                "--delta",
                "1e-5"
            ])
        );
        // no run spelling: unchanged
        let plain = strings(&["--noise-multiplier", "1.1", "--steps", "3"]);
        assert_eq!(normalise("bound", &plain).ok().unwrap(), plain);
    }

    #[test]
    fn a_run_file_reads_back_to_the_same_description() {
        let f = parse(
            &strings(&[
                "--noise-multiplier",
                "0.9",
                "--batch-size",
                "64",
                "--dataset-size",
                "50000",
                "--accumulation",
                "4",
                "--epochs",
                "3",
                "--microbatches",
                "16",
            ]),
            &RUN_FLAGS,
        )
        .unwrap();
        let d = description(&f, false).ok().unwrap();
        let r = d.resolve().unwrap();
        let text = to_json(&d, &r).render();
        // the file states the relation the description left to the sampler: the same run,
        // and the same file when written again
        let back = from_json(&text).unwrap();
        let rb = back.resolve().unwrap();
        assert_eq!(rb, r);
        assert_eq!(to_json(&back, &rb).render(), text);
        // a mechanism that the description does not give is refused, naming the field
        let forged = text.replace("\"steps\": 586", "\"steps\": 585");
        assert_ne!(forged, text);
        let e = from_json(&forged).unwrap_err();
        assert!(e.contains("mechanism.steps = 585"), "{e}");
        let e = from_json("{\"noise_multiplier\": 1, \"sampling_rate\": 0.1, \"stepz\": 3}")
            .unwrap_err();
        assert!(e.contains("unknown key 'stepz'"), "{e}");
        // a description that describes no run is refused when read, naming the file's key
        let e =
            from_json("{\"noise_multiplier\": 1, \"sampling_rate\": 2, \"steps\": 3}").unwrap_err();
        assert!(e.starts_with("sampling_rate = 2 is out of range"), "{e}");
    }
}
