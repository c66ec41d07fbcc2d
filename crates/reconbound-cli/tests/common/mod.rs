//! Helpers shared by the command line's integration tests: the core's helpers
//! (`tests/common/mod.rs` of the repository) and those that run the built binary.
#![allow(dead_code)]

#[path = "../../../../tests/common/mod.rs"]
mod core_helpers;

pub use core_helpers::*;

use std::path::{Path, PathBuf};

/// Run the built `reconbound` binary in the repository's root (where the vendored data's
/// default relative path `data/mnist-10k` resolves): (exit status, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_cli_in(&repo_root(), &args)
}

/// `base` (command words, then `--flag value` pairs or switches) with `extra` appended; a
/// flag of `base` that `extra` gives again is dropped from `base` (with its value), so that
/// `extra` replaces it rather than repeating it.
pub fn args_with(base: &[&str], extra: &[&str]) -> Vec<String> {
    let mut args = Vec::new();
    let mut i = 0;
    while let Some(&a) = base.get(i) {
        let takes_value =
            a.starts_with("--") && base.get(i + 1).is_some_and(|v| !v.starts_with("--"));
        let n = if takes_value { 2 } else { 1 };
        if !(a.starts_with("--") && extra.contains(&a)) {
            args.extend(base[i..i + n].iter().map(|s| s.to_string()));
        }
        i += n;
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// [`run_cli`] with owned arguments, run in the working directory `dir`.
pub fn run_cli_in(dir: &Path, args: &[String]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_reconbound"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run reconbound");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// [`run_cli`] with owned arguments.
pub fn run_cli_strings(args: &[String]) -> (i32, String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_cli(&refs)
}

/// A fresh, empty temporary directory `reconbound-{prefix}-{name}-{pid}`.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconbound-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` to `dir/name` and returns the path as a string.
pub fn write_in(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Runs `args` and asserts a refusal as the command line promises it: exit status 2, nothing
/// on stdout, one line on stderr containing `needle`, and `unwritten` not created.
pub fn assert_refused(args: &[String], needle: &str, unwritten: &Path) {
    let (code, out, err) = run_cli_strings(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?}: {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(
        !unwritten.exists(),
        "{args:?} wrote {}",
        unwritten.display()
    );
}

/// `merge` of `files` with `extra` flags.
pub fn merge_args(files: &[&String], extra: &[&str]) -> Vec<String> {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().map(|f| f.to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Runs `args` with `--quiet --csv FILE --plot FILE.svg` in a fresh directory (named after
/// `name`) and returns stdout, the CSV and the SVG; asserts success, an SVG document, and
/// that nothing else is left in the directory (files are written whole, through a temporary
/// file that is renamed).
pub fn run_with_csv_and_plot(mut args: Vec<String>, name: &str) -> (String, String, String) {
    let dir = temp_dir("files", name);
    let (csv, svg) = (dir.join("out.csv"), dir.join("out.svg"));
    args.extend([
        "--quiet".to_string(),
        "--csv".into(),
        csv.to_string_lossy().into_owned(),
        "--plot".into(),
        svg.to_string_lossy().into_owned(),
    ]);
    let (code, out, err) = run_cli_strings(&args);
    assert_eq!(code, 0, "{err}");
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<?xml") && svg_text.trim_end().ends_with("</svg>"));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "files left");
    let _ = std::fs::remove_dir_all(&dir);
    (out, csv_text, svg_text)
}

/// What every sharded trial-running command (`attack prior-aware`, `audit`) refuses: (extra
/// flags, text the message must contain).
pub const SHARDED_RUN_REFUSALS: &[(&[&str], &str)] = &[
    (&["--trials", "0"], "--trials"),
    (&["--train-size", "2000"], "--train-size"),
    (&["--sampling-rate", "0.013"], "--sampling-rate"),
    (&["--sampling-rate", "1.5"], "--sampling-rate"),
    (&["--noise-multiplier", "1", "--epsilon", "2"], "exclude"),
    (&["--model", "resnet"], "--model"),
    (&["--data", "/nonexistent/dir"], "--data"),
    (&["--threads", "0"], "--threads"),
    (&["--shard", "3/3"], "--shard"),
    (&["--shard", "1-3"], "--shard"),
    (
        &["--shard", "0/2", "--json"],
        "does not apply with '--shard'",
    ),
    (&["--csv", "/nonexistent/dir/x.csv"], "--csv"),
];

/// For each (extra flags, needle) of [`SHARDED_RUN_REFUSALS`] and `cases`: `base` with
/// `extra` (a flag of `base` given again is replaced, see [`args_with`]) and `--csv FILE`,
/// unless `extra` gives `--csv`, is refused as [`assert_refused`] says, and FILE is never
/// written.
pub fn assert_sharded_run_refusals(base: &[&str], cases: &[(&[&str], &str)]) {
    let name: Vec<&str> = base
        .iter()
        .take_while(|a| !a.starts_with("--"))
        .copied()
        .collect();
    let dir = temp_dir("refusals", &name.join("-"));
    let csv = dir.join("never.csv");
    for (extra, needle) in SHARDED_RUN_REFUSALS.iter().chain(cases) {
        let mut args = args_with(base, extra);
        if !extra.contains(&"--csv") {
            args.extend(["--csv".to_string(), csv.to_string_lossy().into_owned()]);
        }
        assert_refused(&args, needle, &csv);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The refusals of `merge` for every kind of shard file, checked on shards 0/2 (`s0`) and
/// 1/2 (`s1`) of one run, each with at least one trial line, and `other`, a shard 1/2 of
/// another configuration or seed (files written into `dir`): another configuration, a trial
/// moved into the other shard (overlapping indices), a repeated trial, a missing trial, a
/// malformed line, a file that is not a shard, a missing shard and a shard given twice —
/// each exit 2, one line, no `--csv` written. Then the good pair must merge. Returns the
/// paths of `s0` and `s1`.
pub fn assert_merge_refusals(dir: &Path, s0: &str, s1: &str, other: &str) -> (String, String) {
    let write = |name: &str, text: &str| write_in(dir, name, text);
    let (a, b, c) = (
        write("a.jsonl", s0),
        write("b.jsonl", s1),
        write("c.jsonl", other),
    );
    let first_trial = |s: &str| s.lines().nth(1).expect("a trial line").to_string();
    let moved = write("moved.jsonl", &format!("{s0}{}\n", first_trial(s1)));
    let dup = write("dup.jsonl", &format!("{s0}{}\n", first_trial(s0)));
    let lines: Vec<&str> = s1.lines().collect();
    let cut: String = lines[..lines.len() - 1]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    let cut = write("cut.jsonl", &cut);
    let malformed_line = format!("line {}: ", s0.lines().count() + 1);
    let bad = write("bad.jsonl", &format!("{s0}{{\"trial\": \n"));
    let not = write("not.jsonl", "hello\n");
    let out_csv = dir.join("merged.csv");
    let o = out_csv.to_str().unwrap();
    for (files, needle) in [
        (vec![&a, &c], "another configuration or seed"),
        (vec![&moved, &b], "does not belong"),
        (vec![&dup, &b], "appears twice"),
        (vec![&a, &cut], "is missing"),
        (vec![&bad, &b], malformed_line.as_str()),
        (vec![&not, &b], "line 1"),
        (vec![&a], "shards missing"),
        (vec![&a, &a, &b], "given twice"),
    ] {
        assert_refused(&merge_args(&files, &["--csv", o]), needle, &out_csv);
    }
    let (code, _, err) = run_cli(&["merge", &b, &a, "--json"]);
    assert_eq!(code, 0, "{err}");
    (a, b)
}

/// The raw text of `"key": <value>` in a one-line JSON object (flat objects, as the command
/// line prints them; a string value keeps its quotes).
pub fn json_raw<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\": ");
    let start = json
        .find(&pat)
        .unwrap_or_else(|| panic!("key {key} missing in {json}"))
        + pat.len();
    let rest = &json[start..];
    let end = if let Some(inner) = rest.strip_prefix('"') {
        inner.find('"').unwrap() + 2
    } else {
        rest.find([',', '}']).unwrap()
    };
    rest[..end].trim()
}

/// The number at `"key"` in a one-line JSON object.
pub fn json_num(json: &str, key: &str) -> f64 {
    json_raw(json, key)
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e} in {json}"))
}

/// The JSON object a command printed (`--json`), parsed by the crate's strict reader.
pub fn json_object(text: &str) -> reconbound_cli::json::Object {
    use reconbound_cli::json::{parse, Value};
    match parse(text.trim()) {
        Ok(Value::Obj(o)) => o,
        other => panic!("not a JSON object: {other:?} in {text}"),
    }
}

/// The number at `key` of a parsed JSON object (an integer as f64).
pub fn json_number(o: &reconbound_cli::json::Object, key: &str) -> f64 {
    use reconbound_cli::json::Value;
    match o.get(key) {
        Some(Value::Num(x)) => *x,
        Some(Value::Int(n)) => *n as f64,
        other => panic!("{key}: {other:?}"),
    }
}
