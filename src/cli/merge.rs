//! `reconbound merge FILE...`: reassemble the shard files of one run (`attack prior-aware
//! --shard K/M` or `audit --shard K/M`, told apart by the header) into exactly what the
//! unsharded run prints. Every shard K/M for K = 0..M−1
//! must be given once, with the same configuration and seed; a file that is malformed, of
//! another run or version, or whose trials overlap another's is refused (exit 2, nothing
//! written).

use super::args::{parse, switch, value, UsageError};
use super::attack::{merged_summary, OutputOptions, PriorAwareConfig};
use super::commands::Failure;
use super::shard::{merge_shards, shard_kind};
use std::format;
use std::string::String;
use std::vec::Vec;

const HELP: &str = "\
usage: reconbound merge SHARD_FILE... [--csv FILE] [--plot FILE.svg] [--json]
       reconbound merge REPORT_SHARD_FILE... --out FILE.html [--json]

Reassembles the JSON-lines files written by 'reconbound attack prior-aware --shard K/M' or
'reconbound audit --shard K/M' (one per K = 0..M-1, any order) and prints exactly what the run
without --shard prints (the same bytes, with the same --json/--csv/--plot). Trials are pure functions of the seed and their
index, so any batch scheduler can run the shards, e.g.

  Slurm job array (sbatch --array=0-9):
    reconbound attack prior-aware --epsilon 1,2,4,8,16 --trials 1000 \\
        --shard $SLURM_ARRAY_TASK_ID/10 > shard-$SLURM_ARRAY_TASK_ID.jsonl
  Kubernetes Indexed Job (completions: 10, completionMode: Indexed):
    reconbound attack prior-aware ... --shard $JOB_COMPLETION_INDEX/10 > /out/shard-$JOB_COMPLETION_INDEX.jsonl
  then, anywhere:
    reconbound merge shard-*.jsonl

Shards of 'reconbound report --shard K/M' hold the trials of its attack and its audit; merge
reassembles both, runs the rest of the report (the bounds, the FIL training run) and writes
the page of the unsharded report to --out.

Shard files (format 3) record the build (crate version and source hash), a fingerprint of the
data's content and a CRC-32 per line; they are read strictly (strict JSON, the canonical bytes
this build writes, every field within the configuration's ranges). A file of another format,
build, data, configuration or seed, a missing or repeated shard, a trial outside its shard, a
repeated or missing trial, a line whose checksum fails or a malformed line is refused (exit 2).
";

/// `reconbound merge`.
pub(crate) fn merge(args: &[String]) -> Result<String, Failure> {
    let mut files: Vec<&String> = Vec::new();
    let mut flag_args: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a.starts_with('-') {
            flag_args.push(a.clone());
            if matches!(a.as_str(), "--csv" | "--plot" | "--out") {
                if let Some(v) = it.next() {
                    flag_args.push(v.clone());
                }
            }
        } else {
            files.push(a);
        }
    }
    let f = parse(
        &flag_args,
        &[value("csv"), value("plot"), value("out"), switch("json")],
    )?;
    if f.help {
        return Ok(String::from(HELP));
    }
    if files.is_empty() {
        return Err(Failure::Usage(UsageError(String::from(
            "merge: no shard files given (usage: reconbound merge SHARD_FILE...)",
        ))));
    }
    let inputs: Vec<(&str, &str)> = files
        .iter()
        .map(|p| (" the shard file", p.as_str()))
        .collect();
    super::output::check_flag_paths(&f, &["out", "csv", "plot"], &[], &inputs)?;
    let mut texts = Vec::with_capacity(files.len());
    for path in files {
        let shown: String = path.chars().filter(|c| !c.is_control()).take(200).collect();
        let text = super::input::read_text_bounded(path, super::input::SHARD_CAP, " merge")?;
        texts.push((shown, text));
    }
    let first = texts.first().and_then(|(_, t)| shard_kind(t));
    if first.as_deref() == Some(super::report::SHARD_KIND) {
        for flag in ["csv", "plot"] {
            if f.has(flag) {
                return Err(Failure::Usage(UsageError(format!(
                    "flag '--{flag}' does not apply to report shards (use --out FILE.html)"
                ))));
            }
        }
        return super::report::merge(&texts, f.raw("out"), f.has("json"));
    }
    if f.has("out") {
        return Err(Failure::Usage(UsageError(String::from(
            "flag '--out' applies only to the shards of 'reconbound report'",
        ))));
    }
    let outputs = OutputOptions::parse(&f)?;
    if first.as_deref() == Some(super::audit::SHARD_KIND) {
        let (config, outcomes) = merge_shards(&texts)?;
        return super::audit::merged_summary(&config, &outcomes, &outputs);
    }
    let (config, outcomes) = merge_shards::<PriorAwareConfig>(&texts)?;
    merged_summary(&config, &outcomes, &outputs)
}
