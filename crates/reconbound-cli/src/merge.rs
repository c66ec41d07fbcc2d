//! `reconbound merge FILE...`: reassemble the shard files of one run (`attack prior-aware
//! --shard K/M` or `audit --shard K/M`, told apart by the header) into exactly what the
//! unsharded run prints. Every shard K/M for K = 0..M−1
//! must be given once, with the same configuration and seed; a file that is malformed, of
//! another run or version, or whose trials overlap another's is refused (exit 2, nothing
//! written). RecoNN shadow-set parts (`attack reconn --save-shadows F --shard K/M`, binary,
//! told apart by their first bytes) merge into `--out FILE` ([`super::shadow_io`]).

use super::args::{parse, switch, value, UsageError};
use super::attack::{merged_summary, PriorAwareConfig};
use super::attack_run::OutputOptions;
use super::failure::Failure;
use super::shard::{merge_shards, shard_kind};
use std::format;
use std::string::String;
use std::vec::Vec;

const HELP: &str = "\
usage: reconbound merge SHARD_FILE... [--csv FILE] [--plot FILE.svg] [--json]
       reconbound merge REPORT_SHARD_FILE... --out FILE.html [--json]
       reconbound merge SHADOW_SET_PART... --out FILE

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

RecoNN shadow-set parts (binary files written by 'reconbound attack reconn --save-shadows
FILE --shard K/M', told apart by their first line 'reconbound shadow set, format 1') merge
into --out FILE, exactly the bytes the run without --shard writes. --out is required and must
not exist (a shadow set is never replaced); --csv, --plot and --json do not apply. Each part
is read no further than the length its header announces and checked whole (the set's
fingerprint and description, format version, a CRC-32 for the header and for every record,
the record count); parts of different sets or shard counts, a part given twice or missing, a
truncated, longer or damaged part, or a mix with JSON-lines shard files is refused (exit 2,
nothing written).
";

/// `merge --help` (issue 43: it fits a screen with an example; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound merge SHARD_FILE... [--csv FILE] [--plot FILE.svg] [--json]
       reconbound merge REPORT_SHARD_FILE... --out FILE.html [--json]
       reconbound merge SHADOW_SET_PART... --out FILE

Reassembles the shard files of an 'attack prior-aware', 'audit' or 'report' run with
--shard K/M (one per K = 0..M-1, any order) and prints exactly what the run without --shard
prints, the same bytes; report shards give the page (--out FILE.html). Parts of a RecoNN
shadow set ('attack reconn --save-shadows FILE --shard K/M') merge into --out FILE.
Files are read strictly: a shard of another build, data, configuration or seed, a missing
or repeated shard or trial, or a damaged line is refused (exit 2, nothing written).

Flags:
  --csv FILE, --plot FILE.svg, --json   as the run without --shard takes them
  --out FILE                            the report's page, or the shadow set (must not exist)

Example (an attack run as two shards, by any batch scheduler, then merged):
  reconbound attack prior-aware --trials 10 --steps 20 --shard 0/2 > shard-0.jsonl
  reconbound attack prior-aware --trials 10 --steps 20 --shard 1/2 > shard-1.jsonl
  reconbound merge shard-0.jsonl shard-1.jsonl
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
        return Ok(f.help_text("merge", SHORT_HELP, String::from(HELP)));
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
    // each file is opened and read once (a pipe cannot be read twice): its first bytes tell
    // a RecoNN shadow-set part from a JSON-lines shard file
    let mut opened = Vec::with_capacity(files.len());
    for path in &files {
        opened.push(super::shadow_io::open_input(path)?);
    }
    if opened.iter().any(|o| o.is_shadow) {
        return merge_shadow_parts(&f, opened);
    }
    let mut texts = Vec::with_capacity(files.len());
    for o in opened {
        let shown = super::output::printable(o.path);
        let bytes =
            super::input::read_bounded_from(o.reader, o.path, super::input::SHARD_CAP, " merge")?;
        texts.push((shown, super::input::utf8(bytes, o.path, " merge")?));
    }
    let first = texts.first().and_then(|(_, t)| shard_kind(t));
    if first.is_none() {
        // name the file, not a flag (issue 31: an empty file was blamed on --out)
        let (name, text) = texts
            .first()
            .map_or(("", ""), |(n, t)| (n.as_str(), t.as_str()));
        let what = if text.trim().is_empty() {
            "is empty"
        } else {
            "does not begin with a shard header (line 1)"
        };
        return Err(Failure::Usage(UsageError(format!(
            "merge: '{name}' {what}: not a shard file of 'attack prior-aware', 'audit' or 'report' --shard, nor a RecoNN shadow-set part"
        ))));
    }
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
            "flag '--out' applies only to the shards of 'reconbound report' and to RecoNN shadow-set parts",
        ))));
    }
    let outputs = OutputOptions::parse(&f)?;
    if first.as_deref() == Some(super::audit::SHARD_KIND) {
        let (config, outcomes) = merge_shards(&texts)?;
        return super::audit::merged_summary(&config, outcomes)?.output(&outputs);
    }
    let (config, outcomes) = merge_shards::<PriorAwareConfig>(&texts)?;
    merged_summary(&config, &outcomes)?.output(&outputs)
}

/// `merge PART… --out FILE` for RecoNN shadow-set parts (`opened`): every file must be a
/// part, `--out` is required and must not exist, and `--csv`, `--plot` and `--json` do not
/// apply.
fn merge_shadow_parts(
    f: &super::args::Flags,
    opened: Vec<super::shadow_io::Opened<'_>>,
) -> Result<String, Failure> {
    let usage = |msg: String| Failure::Usage(UsageError(msg));
    let shown = super::output::printable;
    if let (Some(s), Some(t)) = (
        opened.iter().find(|o| o.is_shadow),
        opened.iter().find(|o| !o.is_shadow),
    ) {
        return Err(usage(format!(
            "merge: '{}' is a RecoNN shadow-set part, '{}' is not: merge the files of one run only",
            shown(s.path),
            shown(t.path)
        )));
    }
    for flag in ["csv", "plot", "json"] {
        if f.has(flag) {
            return Err(usage(format!(
                "flag '--{flag}' does not apply to RecoNN shadow-set parts (they merge into --out FILE)"
            )));
        }
    }
    let Some(out) = f.raw("out") else {
        return Err(usage(String::from(
            "merge: RecoNN shadow-set parts need '--out FILE' (the merged set is binary and is written to a new file)",
        )));
    };
    super::shadow_io::merge_parts(opened, out)
}
