//! Shards of the trial-running commands (`attack prior-aware`, `audit`): the `--shard K/M` and
//! `--threads K` flags, the JSON-lines format of a shard file and its reassembly by
//! `reconbound merge`.
//!
//! A shard file is a header line — `{"reconbound_shard": KIND, "version": …, "shard_index":
//! K, "shard_count": M, "config": {…}}`, the whole configuration of the run — then one line
//! per trial. A trial belongs to a *group* (a point of `attack prior-aware`, a crafter of
//! `audit`), and every group has trials 0..N−1. [`merge_shards`] accepts the files of one
//! run only: every shard K/M once, one configuration, seed and version, each trial of each
//! group exactly once and in its own shard, every line well formed.

use super::args::{Flags, UsageError};
use super::commands::Failure;
use super::json::{self, Object, Value};
use super::output::Progress;
use crate::attacks::trial::{default_threads, run_trials, Shard};
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

/// The JSON lines of a shard: the header, then one line per trial (groups in order).
pub(crate) fn shard_lines<R: ShardedRun>(
    run: &R,
    shard: Shard,
    outcomes: &[Vec<R::Outcome>],
) -> String {
    let mut header = Object::new();
    header
        .str("reconbound_shard", R::KIND)
        .str("version", env!("CARGO_PKG_VERSION"))
        .int("shard_index", shard.index())
        .int("shard_count", shard.count())
        .put("config", Value::Obj(run.to_json()));
    let mut out = header.render();
    out.push('\n');
    for (j, group) in outcomes.iter().enumerate() {
        for o in group {
            out.push_str(&run.write_line(j, o).render());
            out.push('\n');
        }
    }
    out
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

/// Runs the trials of the shard (all without one) of every group — `trial(group, index)` —
/// with a progress line named `label`, and returns the shard's JSON lines, or `summary` of
/// the outcomes of every group in trial order (after, unless quiet, a line on stderr with
/// the time taken).
///
/// # Errors
///
/// The error of the failed trial with the smallest index of the first group that fails;
/// `summary`'s.
pub(crate) fn run_groups<R, G, F, S>(
    run: &R,
    label: &str,
    groups: &[G],
    sharding: Sharding,
    trial: F,
    summary: S,
) -> Result<String, Failure>
where
    R: ShardedRun,
    R::Outcome: Send,
    G: Sync,
    F: Fn(&G, u64) -> crate::Result<R::Outcome> + Sync,
    S: FnOnce(&[Vec<R::Outcome>]) -> Result<String, Failure>,
{
    let Sharding {
        shard,
        threads,
        quiet,
    } = sharding;
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
        return Ok(shard_lines(run, sh, &outcomes));
    }
    if !quiet {
        eprintln!(
            "{label}: {} trials in {:.1} s on {threads} thread(s)",
            indices.len() * groups.len(),
            progress.seconds()
        );
    }
    summary(&outcomes)
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

/// A merged run: its configuration and the outcomes of every group in trial order.
pub(crate) type Merged<R> = (R, Vec<Vec<<R as ShardedRun>::Outcome>>);

/// Reassembles the shard files (name, text) of one run of `R` into its configuration and
/// the outcomes of every group in trial order.
///
/// # Errors
///
/// A usage error naming the file and line: an empty file, a header of another kind, version,
/// configuration or seed, a shard count that differs, a shard given twice or missing, a
/// malformed line, a trial outside its shard or the configuration, a trial repeated or
/// missing.
pub(crate) fn merge_shards<R: ShardedRun>(
    files: &[(String, String)],
) -> Result<Merged<R>, Failure> {
    let mut config: Option<R> = None;
    let mut count: Option<u64> = None;
    let mut seen_shards: Vec<u64> = Vec::new();
    let mut slots: Vec<Vec<Option<R::Outcome>>> = Vec::new();
    for (name, text) in files {
        let bad = |msg: String| usage(format!("merge: '{name}': {msg}"));
        let mut lines = text.lines().enumerate();
        let (_, head) = lines
            .next()
            .ok_or_else(|| bad(String::from("empty file")))?;
        let head = match json::parse(head) {
            Ok(Value::Obj(o)) => o,
            Ok(_) => return Err(bad(String::from("line 1: not a JSON object"))),
            Err(e) => return Err(bad(format!("line 1: {e}"))),
        };
        match head.get("reconbound_shard") {
            Some(Value::Str(k)) if k == R::KIND => {}
            _ => {
                return Err(bad(format!(
                    "line 1 is not the header of an '{} --shard' file",
                    R::KIND
                )))
            }
        }
        match head.get("version") {
            Some(Value::Str(v)) if v == env!("CARGO_PKG_VERSION") => {}
            _ => {
                return Err(bad(format!(
                    "written by another version of reconbound (this is {})",
                    env!("CARGO_PKG_VERSION")
                )))
            }
        }
        let k = head
            .get("shard_index")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(String::from("header without shard_index")))?;
        let m = head
            .get("shard_count")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(String::from("header without shard_count")))?;
        let shard = Shard::new(k, m).map_err(|e| bad(format!("header: {e}")))?;
        let c = match head.get("config") {
            Some(Value::Obj(o)) => R::from_json(o).map_err(|e| bad(format!("header: {e}")))?,
            _ => return Err(bad(String::from("header without config"))),
        };
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
            let o = match json::parse(line) {
                Ok(Value::Obj(o)) => o,
                _ => return Err(at("not a JSON object")),
            };
            let (group, trial, outcome) = c.read_line(&o).map_err(|e| at(&e))?;
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
