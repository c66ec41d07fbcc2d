//! Shards of the trial-running commands (`attack prior-aware`, `audit`): the `--shard K/M` and
//! `--threads K` flags, the JSON-lines format of a shard file and its reassembly by
//! `reconbound merge`.
//!
//! A shard file (format [`SHARD_FORMAT`]) is a header line — `{"reconbound_shard": KIND,
//! "format": 3, "version": …, "build": …, "data_fingerprint": …, "shard_index": K,
//! "shard_count": M, "scores": […], "config": {…}, "crc": …}`, the whole configuration of the
//! run and the names of its score set ([`ScoreKind`]: the order of every trial line's score
//! arrays) — then one line per trial, each ending in its own `"crc"`. `build` is the crate version and a hash of
//! its sources taken at build time ([`build`]); `data_fingerprint` a hash of the pixels and
//! labels of `--data` as loaded ([`data_fingerprint`]), so shards of other code, or of other
//! data behind the same path, do not merge. `crc` is the CRC-32 of the line's canonical bytes
//! without the checksum field (the line up to `, "crc"`, closed by `}`), so an accidental
//! change of a line is caught.
//!
//! A trial belongs to a *group* (a point of `attack prior-aware`, a crafter of `audit`), and
//! every group has trials 0..N−1. [`merge_shards`] accepts the files of one run only: every
//! shard K/M once, one format, build, data, configuration and seed, each trial of each group
//! exactly once and in its own shard, every line well formed, with its checksum, in the
//! canonical form this build writes (the bytes it would write for the values read: no
//! repeated or extra key, no other number spelling), and every field within the
//! configuration's ranges.

use super::args::{Flags, UsageError};
use super::failure::Failure;
use super::json::{self, Object, Value};
use super::output::Progress;
use reconbound::attacks::game::{Named, ScoreKind};
use reconbound::attacks::trial::{default_threads, run_trials, Shard};
use std::format;
use std::string::String;
use std::vec::Vec;

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// A parsed `--shard K/M` (`None` without the flag); a shard prints JSON lines, so `--csv`,
/// `--plot` and `--json` are refused with it.
pub(crate) fn parse_shard(f: &Flags) -> Result<Option<Shard>, Failure> {
    let Some(raw) = f.raw("shard") else {
        return Ok(None);
    };
    let bad = || {
        usage(format!(
            "flag '--shard': '{}' is not K/M with integers 0 <= K < M",
            raw.chars()
                .filter(|c| !c.is_control())
                .take(40)
                .collect::<String>()
        ))
    };
    // strict: plain decimal digits, no sign, space or leading zero, so that one shard has
    // one spelling (`1/3`, never `+1/3`, `01/03` or `1 /3`)
    let number = |s: &str| -> Option<u64> {
        let canonical = !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0'));
        canonical.then(|| s.parse().ok()).flatten()
    };
    let (k, m) = raw.split_once('/').ok_or_else(bad)?;
    let k = number(k).ok_or_else(bad)?;
    let m = number(m).ok_or_else(bad)?;
    if m == 0 || k >= m || m > MAX_TRIALS {
        return Err(usage(format!(
            "--shard = {k}/{m} is out of range: must be K/M with 0 <= K < M <= {MAX_TRIALS} (a run has at most that many trials per group)"
        )));
    }
    for flag in ["csv", "plot", "json"] {
        if f.has(flag) {
            return Err(usage(format!(
                "flag '--{flag}' does not apply with '--shard' (a shard prints JSON lines; 'reconbound merge' writes the summary)"
            )));
        }
    }
    Ok(Some(Shard::new(k, m)?))
}

/// `--threads K` (default: every core).
pub(crate) fn parse_threads(f: &Flags) -> Result<usize, Failure> {
    match f.u64("threads")? {
        None => Ok(default_threads()),
        Some(t) if (1..=1024).contains(&t) => Ok(t as usize),
        Some(t) => Err(usage(format!(
            "--threads = {t} is out of range: must be in 1..=1024"
        ))),
    }
}

/// At most this many groups (ε or σ values, crafters) per run.
pub(crate) const MAX_GROUPS: u64 = 64;
/// At most this many trials per group.
pub(crate) const MAX_TRIALS: u64 = 1_000_000;
/// At most this many trials over all groups of a run.
pub(crate) const MAX_TOTAL_TRIALS: u64 = 10_000_000;

/// The limits every configuration (parsed or read from a shard header) must meet, so that a
/// run — and a merge, which holds one slot per trial — stays within memory: 1..=64 groups
/// (`groups` of them, named by `flag` and counted in `noun`), 1..=10⁶ trials per group and
/// 10⁷ over all groups.
pub(crate) fn check_size(groups: u64, flag: &str, noun: &str, trials: u64) -> Result<(), String> {
    if !(1..=MAX_GROUPS).contains(&groups) {
        return Err(format!(
            "{flag}: {groups} {noun} is out of range: must be 1..={MAX_GROUPS}"
        ));
    }
    if !(1..=MAX_TRIALS).contains(&trials) || groups * trials > MAX_TOTAL_TRIALS {
        return Err(format!(
            "--trials = {trials} is out of range: must be in 1..={MAX_TRIALS}, and at most {MAX_TOTAL_TRIALS} trials over all {noun}"
        ));
    }
    Ok(())
}

/// A run whose trials can be sharded: its configuration (the header's `config`) and how a
/// trial is written as one JSON line and read back.
pub(crate) trait ShardedRun: Clone + PartialEq + Sized {
    /// One trial's outcome.
    type Outcome;
    /// The named score set of its trial lines (the header's `scores`, in this order).
    type Scores: ScoreKind;
    /// The header's `reconbound_shard` value (the command that wrote the file).
    const KIND: &'static str;
    /// The configuration as the header's `config`.
    fn to_json(&self) -> Object;
    /// The configuration from the header's `config`, validated as the command line
    /// validates it.
    fn from_json(o: &Object) -> Result<Self, String>;
    /// The number of groups (points, crafters).
    fn groups(&self) -> usize;
    /// The number of trials of each group.
    fn trials(&self) -> u64;
    /// Group `group` in messages (`point 0`, `crafter example`).
    fn group_name(&self, group: usize) -> String;
    /// The line of `outcome` of group `group`.
    fn write_line(&self, group: usize, outcome: &Self::Outcome) -> Object;
    /// A trial line read back: (group, trial index, outcome); the message says what is
    /// wrong.
    fn read_line(&self, line: &Object) -> Result<(usize, u64, Self::Outcome), String>;
}

/// The shard file format this build writes and reads: 3 added the header's `scores` (the
/// names of the score set, in the order of the trial lines' arrays) to format 2, which added
/// `format`, `build`, `data_fingerprint` and the per-line `crc` to format 1 (which had no
/// `format` key). Files of different formats never merge.
pub(crate) const SHARD_FORMAT: u64 = 3;

/// The header's `scores`: the names of `K`'s scores, in order.
fn score_names<K: ScoreKind>() -> Value {
    Value::Arr(
        K::names()
            .into_iter()
            .map(|n| Value::Str(n.into()))
            .collect(),
    )
}

/// A trial line's array of one value per score of `K` (in the order of the header's
/// `scores`).
pub(crate) fn named_json<K: ScoreKind, V: Copy, const N: usize>(
    values: &Named<K, V, N>,
    f: impl Fn(V) -> Value,
) -> Value {
    Value::Arr(values.values().iter().map(|&v| f(v)).collect())
}

/// The array `key` of a trial line read back as one value per score of `K`, each read by
/// `read` (`None`: not a `what`).
///
/// # Errors
/// `'key' must be N what` (N the number of scores) for a missing key, another length or an
/// entry `read` refuses.
pub(crate) fn read_named<K: ScoreKind, V, const N: usize>(
    o: &Object,
    key: &str,
    what: &str,
    read: impl Fn(&Value) -> Option<V>,
) -> Result<Named<K, V, N>, String> {
    let n = K::KINDS.len();
    let bad = || format!("'{key}' must be {n} {what}");
    let items = match o.get(key) {
        Some(Value::Arr(items)) => items,
        Some(_) => return Err(bad()),
        None => return Err(format!("missing '{key}'")),
    };
    let values = items
        .iter()
        .map(|v| read(v).ok_or_else(bad))
        .collect::<Result<Vec<V>, String>>()?;
    Named::from_values(values).map_err(|_| bad())
}

/// This build as a shard header records it: the crate version, `+src.`, the fingerprint of
/// the core's computation ([`reconbound::SOURCE_FINGERPRINT`]) and, after a `.`, that of this
/// crate's (its sources but the picture and page renderers), both of the sources without
/// their comment lines, computed by the build scripts.
pub(crate) fn build() -> String {
    format!(
        "{}+src.{}.{}",
        env!("CARGO_PKG_VERSION"),
        reconbound::SOURCE_FINGERPRINT,
        env!("RECONBOUND_CLI_SOURCE_HASH")
    )
}

/// The fingerprint of a dataset's content as loaded ([`Dataset::fingerprint`](reconbound::data::Dataset::fingerprint)), as
/// `fnv1a64:` and 16 hex digits.
pub(crate) fn data_fingerprint(d: &reconbound::data::Dataset) -> String {
    format!("fnv1a64:{:016x}", d.fingerprint())
}

/// The fingerprint of the data a configuration names (its `data` key: `embedded`, an IDX
/// directory or a CIFAR-10 file), loaded as the trials load it.
///
/// # Errors
/// The data cannot be loaded (the usage error `--data` gives).
fn config_data_fingerprint(config: &Object) -> Result<String, Failure> {
    match config.get("data") {
        Some(Value::Str(spec)) => Ok(data_fingerprint(&super::train::load_data(spec)?)),
        _ => Ok(String::from("none")),
    }
}

/// `body` (a rendered object, `{…}`) with `"crc": "xxxxxxxx"` appended: the CRC-32 of
/// `body`'s bytes in 8 lower-case hex digits.
fn with_crc(body: &str) -> String {
    let crc = reconbound::fingerprint::crc32(body.as_bytes());
    match body.strip_suffix('}') {
        Some("{") | None => format!("{{\"crc\": \"{crc:08x}\"}}"),
        Some(open) => format!("{open}, \"crc\": \"{crc:08x}\"}}"),
    }
}

/// A line read strictly: strict JSON ([`json::parse`]), an object whose last key is `crc`,
/// the checksum of the rest, and the bytes [`with_crc`] writes for it (no other spacing or
/// number spelling). Returns the object without `crc`.
///
/// # Errors
/// What is wrong, in a few words.
fn checked_line(line: &str) -> Result<Object, String> {
    let o = match json::parse(line) {
        Ok(Value::Obj(o)) => o,
        Ok(_) => return Err(String::from("not a JSON object")),
        Err(e) => return Err(e),
    };
    let Some(((last, crc), rest)) = o.entries().split_last() else {
        return Err(String::from("an empty object"));
    };
    let Value::Str(crc) = crc else {
        return Err(String::from("'crc' is not a string"));
    };
    if last != "crc" {
        return Err(String::from(
            "no checksum: the last key must be 'crc' (a shard of format 1, or an edited line)",
        ));
    }
    let mut body = Object::new();
    for (k, v) in rest {
        body.put(k, v.clone());
    }
    let text = body.render();
    let expected = format!("{:08x}", reconbound::fingerprint::crc32(text.as_bytes()));
    if *crc != expected {
        return Err(format!(
            "checksum mismatch (crc '{}', the content's is '{expected}'): the line was altered",
            crc.chars()
                .filter(|c| !c.is_control())
                .take(16)
                .collect::<String>()
        ));
    }
    if with_crc(&text) != line {
        return Err(String::from(
            "not in the canonical form reconbound writes (spacing, number spelling or key order altered)",
        ));
    }
    Ok(body)
}

/// The header of shard `k`/`m` of a run of `R` with configuration `config` on data of
/// fingerprint `data`, as this build writes it (without its `crc`).
fn header<R: ShardedRun>(data: &str, k: u64, m: u64, config: Object) -> Object {
    let mut h = Object::new();
    h.str("reconbound_shard", R::KIND)
        .int("format", SHARD_FORMAT)
        .str("version", env!("CARGO_PKG_VERSION"))
        .str("build", &build())
        .str("data_fingerprint", data)
        .int("shard_index", k)
        .int("shard_count", m)
        .put("scores", score_names::<R::Scores>())
        .put("config", Value::Obj(config));
    h
}

/// The JSON lines of a shard: the header, then one line per trial (groups in order), each
/// with its checksum. `data` is the fingerprint of the trials' data ([`data_fingerprint`]).
pub(crate) fn shard_lines<R: ShardedRun>(
    run: &R,
    shard: Shard,
    data: &str,
    outcomes: &[Vec<R::Outcome>],
) -> String {
    let header = header::<R>(data, shard.index(), shard.count(), run.to_json());
    let mut out = with_crc(&header.render());
    out.push('\n');
    for (j, group) in outcomes.iter().enumerate() {
        for o in group {
            out.push_str(&with_crc(&run.write_line(j, o).render()));
            out.push('\n');
        }
    }
    out
}

/// The trial-line keys that count steps, with the configuration's `steps` (T) and
/// `sampling_rate` (q): each must be <= T, and = T when q = 1 (the full batch holds every
/// example, the target and the canary included, at every step).
const STEP_COUNT_KEYS: [&str; 2] = ["steps_in_batch", "canary_steps"];

/// The range checks of a trial line against its configuration that the line's own reader
/// leaves out: the step counts of [`STEP_COUNT_KEYS`].
///
/// # Errors
/// The key, its value and the valid range.
fn check_step_counts(config: &Object, line: &Object) -> Result<(), String> {
    let steps = config.get_u64("steps")?;
    let full_batch = config.get_f64("sampling_rate")? >= 1.0;
    for key in STEP_COUNT_KEYS {
        let Some(v) = line.get(key) else {
            continue;
        };
        let n = v
            .as_u64()
            .ok_or_else(|| format!("'{key}' is not a non-negative integer"))?;
        if full_batch && n != steps {
            return Err(format!(
                "{key} = {n} is out of range: must be {steps} (every step of a full-batch run)"
            ));
        }
        if n > steps {
            return Err(format!(
                "{key} = {n} is out of range: must be in 0..={steps} (the steps of the run)"
            ));
        }
    }
    Ok(())
}

/// How the trials of a run are spread: one shard of them (all without `--shard`), over how
/// many threads, with or without progress and timing on stderr.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sharding {
    /// `--shard K/M`.
    pub(crate) shard: Option<Shard>,
    /// `--threads`.
    pub(crate) threads: usize,
    /// `--quiet`.
    pub(crate) quiet: bool,
}

impl Sharding {
    /// `--shard`, `--threads`, `--quiet`.
    pub(crate) fn parse(f: &Flags) -> Result<Self, Failure> {
        Ok(Sharding {
            shard: parse_shard(f)?,
            threads: parse_threads(f)?,
            quiet: f.has("quiet"),
        })
    }
}

/// What a run of [`run_groups`] gives: one shard's JSON lines, or the whole run's summary.
pub(crate) enum Ran<T> {
    /// `--shard K/M`: the lines of the shard file.
    Shard(String),
    /// The summary of the outcomes of every trial.
    Whole(T),
}

impl<T> Ran<T> {
    /// The whole run's summary; a shard is an internal error (`what` names the run).
    pub(crate) fn whole(self, what: &str) -> Result<T, Failure> {
        match self {
            Ran::Whole(t) => Ok(t),
            Ran::Shard(_) => Err(Failure::Compute(format!(
                "internal: '{what}' ran a shard where the whole run was asked for"
            ))),
        }
    }

    /// A shard's JSON lines; a whole run is an internal error (`what` names the run).
    pub(crate) fn shard(self, what: &str) -> Result<String, Failure> {
        match self {
            Ran::Shard(lines) => Ok(lines),
            Ran::Whole(_) => Err(Failure::Compute(format!(
                "internal: '{what}' ran the whole run where a shard was asked for"
            ))),
        }
    }
}

/// Runs the trials of the shard (all without one) of every group — `trial(group, index)` —
/// with a progress line named `label`, and returns the shard's JSON lines, or `summary` of
/// the outcomes of every group in trial order (after, unless quiet, a line on stderr with
/// the time taken).
///
/// # Errors
///
/// The error of the failed trial with the smallest index of the first group that fails;
/// `summary`'s.
pub(crate) fn run_groups<R, G, F, S, T>(
    run: &R,
    label: &str,
    groups: &[G],
    sharding: Sharding,
    trial: F,
    summary: S,
) -> Result<Ran<T>, Failure>
where
    R: ShardedRun,
    R::Outcome: Send,
    G: Sync,
    F: Fn(&G, u64) -> reconbound::Result<R::Outcome> + Sync,
    S: FnOnce(Vec<Vec<R::Outcome>>) -> Result<T, Failure>,
{
    let Sharding {
        shard,
        threads,
        quiet,
    } = sharding;
    // A shard records its data's content: fingerprinted before the trials, from the data
    // as the trials load it.
    let data = match shard {
        Some(_) => Some(config_data_fingerprint(&run.to_json())?),
        None => None,
    };
    let indices: Vec<u64> = shard.unwrap_or(Shard::WHOLE).trials(run.trials()).collect();
    let progress = Progress::new(String::from(label), indices.len() * groups.len(), quiet);
    let mut outcomes = Vec::with_capacity(groups.len());
    for (j, g) in groups.iter().enumerate() {
        let base = j * indices.len();
        let out = run_trials(&indices, threads, |i| trial(g, i), &|done| {
            progress.tick(base + done)
        })?;
        outcomes.push(out);
    }
    progress.finish();
    if let Some(sh) = shard {
        return Ok(Ran::Shard(shard_lines(
            run,
            sh,
            data.as_deref().unwrap_or("none"),
            &outcomes,
        )));
    }
    if !quiet {
        eprintln!(
            "{label}: {} trials in {:.1} s on {threads} thread(s)",
            indices.len() * groups.len(),
            progress.seconds()
        );
    }
    summary(outcomes).map(Ran::Whole)
}

/// The `reconbound_shard` value of a file's first line, if it is a shard header.
pub(crate) fn shard_kind(text: &str) -> Option<String> {
    let head = text.lines().next()?;
    match json::parse(head) {
        Ok(Value::Obj(o)) => match o.get("reconbound_shard") {
            Some(Value::Str(k)) => Some(k.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A shard header read strictly ([`checked_line`]): the kind `R::KIND`, format
/// [`SHARD_FORMAT`], this [`build`], and a configuration `R` reads and writes back to the
/// same JSON. Returns (data fingerprint, K, M, configuration, its JSON).
///
/// # Errors
/// What is wrong, beginning `line 1` or `header`.
fn read_header<R: ShardedRun>(head: &str) -> Result<(String, u64, u64, R, Object), String> {
    let kind_msg = || format!("line 1 is not the header of an '{} --shard' file", R::KIND);
    // Kind and format first (from a lenient parse), so that an old shard is named as such.
    let loose = match json::parse(head) {
        Ok(Value::Obj(o)) => o,
        Ok(_) => return Err(String::from("line 1: not a JSON object")),
        Err(e) => return Err(format!("line 1: {e}")),
    };
    match loose.get("reconbound_shard") {
        Some(Value::Str(k)) if k == R::KIND => {}
        _ => return Err(kind_msg()),
    }
    match loose.get("format") {
        Some(Value::Int(f)) if *f == SHARD_FORMAT => {}
        Some(f) => {
            let mut o = Object::new();
            o.put("f", f.clone());
            let shown: String = o.render().chars().skip(6).take(24).collect();
            return Err(format!(
                "shard format {} is not format {SHARD_FORMAT}, the one this reconbound reads: re-run the shards with this build",
                shown.trim_end_matches('}')
            ));
        }
        None => {
            return Err(format!(
                "shard format 1 (no 'format' key, no checksums or fingerprints) is not format {SHARD_FORMAT}, the one this reconbound reads: re-run the shards with this build"
            ))
        }
    }
    let o = checked_line(head).map_err(|e| format!("line 1: {e}"))?;
    match o.get("build") {
        Some(Value::Str(b)) if *b == build() => {}
        Some(Value::Str(b)) => {
            return Err(format!(
                "written by another build of reconbound ('{}'; this is '{}'): shards and merge must come from the same sources",
                b.chars().filter(|c| !c.is_control()).take(48).collect::<String>(),
                build()
            ))
        }
        _ => return Err(String::from("header without build")),
    }
    if o.get("scores") != Some(&score_names::<R::Scores>()) {
        return Err(format!(
            "header: scores are not [{}] (this build's score set, in its order)",
            R::Scores::names().join(", ")
        ));
    }
    let data = o
        .get_str("data_fingerprint")
        .map_err(|e| format!("header: {e}"))?
        .to_string();
    let k = o
        .get_u64("shard_index")
        .map_err(|e| format!("header: {e}"))?;
    let m = o
        .get_u64("shard_count")
        .map_err(|e| format!("header: {e}"))?;
    let config_json = match o.get("config") {
        Some(Value::Obj(c)) => c.clone(),
        _ => return Err(String::from("header without config")),
    };
    let c = R::from_json(&config_json).map_err(|e| format!("header: {e}"))?;
    if header::<R>(&data, k, m, c.to_json()) != o {
        return Err(String::from(
            "header: not in the canonical form reconbound writes (an extra, missing or reordered key, or a configuration value out of its range)",
        ));
    }
    Ok((data, k, m, c, config_json))
}

/// A merged run: its configuration and the outcomes of every group in trial order.
pub(crate) type Merged<R> = (R, Vec<Vec<<R as ShardedRun>::Outcome>>);

/// Reassembles the shard files (name, text) of one run of `R` into its configuration and
/// the outcomes of every group in trial order.
///
/// # Errors
///
/// A usage error naming the file and line: an empty file, a header of another kind, format,
/// build, data fingerprint, configuration or seed, a shard count that differs, a shard given
/// twice or missing, a malformed line (strict JSON, its checksum, the canonical bytes, a
/// field out of the configuration's range), a trial outside its shard or the configuration,
/// a trial repeated or missing.
pub(crate) fn merge_shards<R: ShardedRun>(
    files: &[(String, String)],
) -> Result<Merged<R>, Failure> {
    let mut config: Option<R> = None;
    let mut data: Option<String> = None;
    let mut count: Option<u64> = None;
    let mut seen_shards: Vec<u64> = Vec::new();
    let mut slots: Vec<Vec<Option<R::Outcome>>> = Vec::new();
    for (name, text) in files {
        let bad = |msg: String| usage(format!("merge: '{name}': {msg}"));
        let mut lines = text.lines().enumerate();
        let (_, head) = lines
            .next()
            .ok_or_else(|| bad(String::from("empty file")))?;
        let (fp, k, m, c, config_json) = read_header::<R>(head).map_err(&bad)?;
        let shard = Shard::new(k, m).map_err(|e| bad(format!("header: {e}")))?;
        match &data {
            None => data = Some(fp),
            Some(prev) if *prev != fp => {
                let shown = |t: &str| {
                    t.chars()
                        .filter(|c| !c.is_control())
                        .take(40)
                        .collect::<String>()
                };
                return Err(bad(format!(
                    "data_fingerprint '{}' differs from the first file's '{}': shards computed from other data (the same --data path can hold other content)",
                    shown(&fp),
                    shown(prev)
                )));
            }
            Some(_) => {}
        }
        match &config {
            None => {
                slots = (0..c.groups())
                    .map(|_| (0..c.trials()).map(|_| None).collect())
                    .collect();
                config = Some(c.clone());
            }
            Some(prev) if *prev != c => {
                return Err(bad(String::from(
                    "another configuration or seed than the first file (shards of one run only)",
                )))
            }
            Some(_) => {}
        }
        match count {
            None => count = Some(m),
            Some(prev) if prev != m => {
                return Err(bad(format!(
                    "shard {k}/{m}, but the first file is a shard of {prev}"
                )))
            }
            Some(_) => {}
        }
        if seen_shards.contains(&k) {
            return Err(bad(format!("shard {k}/{m} given twice")));
        }
        seen_shards.push(k);
        for (l, line) in lines {
            let at = |msg: &str| bad(format!("line {}: {msg}", l + 1));
            if line.trim().is_empty() {
                continue;
            }
            let o = checked_line(line).map_err(|e| at(&e))?;
            check_step_counts(&config_json, &o).map_err(|e| at(&e))?;
            let (group, trial, outcome) = c.read_line(&o).map_err(|e| at(&e))?;
            if c.write_line(group, &outcome) != o {
                return Err(at(
                    "not in the canonical form reconbound writes (a field of another type, an extra or repeated key, a dropped entry)",
                ));
            }
            if !shard.contains(trial) {
                return Err(at(&format!(
                    "trial {trial} does not belong to shard {k}/{m}"
                )));
            }
            let slot = slots
                .get_mut(group)
                .and_then(|p| usize::try_from(trial).ok().and_then(|t| p.get_mut(t)))
                .ok_or_else(|| at("group or trial index outside the configuration"))?;
            if slot.is_some() {
                return Err(at(&format!(
                    "trial {trial} of {} appears twice",
                    c.group_name(group)
                )));
            }
            *slot = Some(outcome);
        }
    }
    let (Some(config), Some(m)) = (config, count) else {
        return Err(usage(String::from("merge: no shard files given")));
    };
    if (seen_shards.len() as u64) != m {
        let missing: Vec<String> = (0..m)
            .filter(|k| !seen_shards.contains(k))
            .take(10)
            .map(|k| format!("{k}/{m}"))
            .collect();
        return Err(usage(format!(
            "merge: shards missing: {} (every shard K/{m}, K = 0..{}, is needed)",
            missing.join(", "),
            m - 1
        )));
    }
    let mut outcomes = Vec::with_capacity(slots.len());
    for (j, group) in slots.into_iter().enumerate() {
        let mut out = Vec::with_capacity(group.len());
        for (i, o) in group.into_iter().enumerate() {
            out.push(o.ok_or_else(|| {
                usage(format!(
                    "merge: trial {i} of {} is missing (a shard file is incomplete)",
                    config.group_name(j)
                ))
            })?);
        }
        outcomes.push(out);
    }
    Ok((config, outcomes))
}
