//! `reconbound attack prior-aware` and `reconbound merge` as a user runs them.

use super::common::{json_num, json_raw, run_cli as run};
use std::path::PathBuf;

/// A small, fast configuration (|D⁻| = 49, T = 10, two ε).
const SMALL: [&str; 12] = [
    "attack",
    "prior-aware",
    "--trials",
    "9",
    "--train-size",
    "49",
    "--steps",
    "10",
    "--epsilon",
    "2,8",
    "--seed",
    "5",
];

fn with(extra: &[&str]) -> Vec<String> {
    SMALL.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run_s(args: &[String]) -> (i32, String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconbound-attack-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn sharded_runs_merge_to_exactly_the_bytes_of_the_whole_run() {
    let dir = temp_dir("shards");
    let (code, whole_json, err) = run_s(&with(&["--json", "--quiet"]));
    assert_eq!(code, 0, "{err}");
    let (_, whole_text, _) = run_s(&with(&["--quiet", "--threads", "1"]));
    let mut files = Vec::new();
    for k in [2, 0, 1] {
        let (code, lines, err) = run_s(&with(&["--shard", &format!("{k}/3"), "--quiet"]));
        assert_eq!(code, 0, "{err}");
        let p = dir.join(format!("s{k}.jsonl"));
        std::fs::write(&p, lines).unwrap();
        files.push(p.to_string_lossy().into_owned());
    }
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().cloned());
    let (code, merged_text, err) = run_s(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged_text, whole_text);
    args.push("--json".into());
    let (_, merged_json, _) = run_s(&args);
    assert_eq!(merged_json, whole_json);
    // Two threads, one thread: the same bytes.
    let (_, one, _) = run_s(&with(&["--json", "--quiet", "--threads", "1"]));
    let (_, two, _) = run_s(&with(&["--json", "--quiet", "--threads", "2"]));
    assert_eq!(one, two);
    assert_eq!(one, whole_json);
    // Keys.
    for key in [
        "trials",
        "successes",
        "success_rate",
        "success_lower",
        "success_upper",
        "gamma",
        "gamma_balle",
    ] {
        assert!(whole_json.contains(&format!("\"{key}\": ")), "{key}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_point_has_its_keys_at_the_top_level_and_stays_below_gamma() {
    let (code, out, err) = run(&[
        "attack",
        "prior-aware",
        "--trials",
        "20",
        "--train-size",
        "49",
        "--steps",
        "10",
        "--noise-multiplier",
        "1.5",
        "--json",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_num(&out, "trials"), 20.0);
    let (rate, lo, hi) = (
        json_num(&out, "success_rate"),
        json_num(&out, "success_lower"),
        json_num(&out, "success_upper"),
    );
    assert!(lo <= rate && rate <= hi);
    assert!(lo <= json_num(&out, "gamma"), "{out}");
    assert_eq!(json_raw(&out, "above_bound"), "false");
    assert_eq!(json_raw(&out, "epsilon"), "null");
}

#[test]
fn csv_and_plot_are_written_whole() {
    let dir = temp_dir("files");
    let csv = dir.join("points.csv");
    let svg = dir.join("plot.svg");
    let (code, _, err) = run_s(&with(&[
        "--quiet",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 1 + 2 * 3, "{text}");
    assert!(text.starts_with("epsilon,noise_multiplier,score,trials,successes"));
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<?xml") && plot.trim_end().ends_with("</svg>"));
    assert_eq!(plot.matches("class=\"estimate\"").count(), 2 * 3);
    assert_eq!(plot.matches("class=\"curve\"").count(), 3);
    // Nothing else is left in the directory (no temporary files).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_2_names_the_flag_and_writes_nothing() {
    let dir = temp_dir("bad");
    let csv = dir.join("never.csv");
    let csv_s = csv.to_str().unwrap().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--prior-size", "1"], "--prior-size"),
        (vec!["--shard", "3/3"], "--shard"),
        (vec!["--shard", "1-3"], "--shard"),
        (vec!["--trials", "0"], "--trials"),
        (vec!["--sampling-rate", "0.013"], "--sampling-rate"),
        (vec!["--sampling-rate", "1.5"], "--sampling-rate"),
        (vec!["--noise-multiplier", "1"], "exclude"),
        (vec!["--score", "max"], "--score"),
        (vec!["--model", "resnet"], "--model"),
        (vec!["--train-size", "1995"], "--train-size"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--data", "/nonexistent/dir"], "--data"),
        (vec!["--csv", "/nonexistent/dir/x.csv"], "--csv"),
        (
            vec!["--shard", "0/2", "--json"],
            "does not apply with '--shard'",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = with(&extra);
        if needle != "--csv" {
            args.push("--csv".into());
            args.push(csv_s.clone());
        }
        let (code, out, err) = run_s(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty(), "{extra:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(!csv.exists(), "{extra:?} wrote a file");
    }
    let (code, _, err) = run(&["attack", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("prior-aware"), "{err}");
    let (code, out, _) = run(&["attack", "prior-aware", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("JSON keys"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_malformed_and_mismatched_shards() {
    let dir = temp_dir("merge");
    let shard = |extra: &[&str], k: u32, m: u32| {
        let mut args = with(extra);
        args.extend(["--shard".to_string(), format!("{k}/{m}"), "--quiet".into()]);
        let (code, out, err) = run_s(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let s0 = shard(&[], 0, 2);
    let s1 = shard(&[], 1, 2);
    let other_seed = shard(&["--lr", "5"], 1, 2);
    let (a, b) = (write("a.jsonl", &s0), write("b.jsonl", &s1));
    let c = write("c.jsonl", &other_seed);
    // A line of shard 1 moved into shard 0: a trial outside its shard.
    let moved = format!("{s0}{}\n", s1.lines().nth(1).unwrap());
    let m = write("moved.jsonl", &moved);
    // A repeated trial.
    let dup = format!("{s0}{}\n", s0.lines().nth(1).unwrap());
    let d = write("dup.jsonl", &dup);
    // A truncated file (a trial missing) and a malformed line.
    let cut: String = s1.lines().take(2).map(|l| format!("{l}\n")).collect();
    let t = write("cut.jsonl", &cut);
    let bad = write("bad.jsonl", &format!("{s0}{{\"point\": 0, \"trial\": \n"));
    let not = write("not.jsonl", "hello\n");
    let out_csv = dir.join("merged.csv");
    let o = out_csv.to_str().unwrap();
    for (files, needle) in [
        (vec![&a, &c], "configuration"),
        (vec![&m, &b], "does not belong"),
        (vec![&d, &b], "twice"),
        (vec![&a, &t], "missing"),
        (vec![&bad, &b], "line"),
        (vec![&not, &b], "line 1"),
        (vec![&a], "missing"),
        (vec![&a, &a, &b], "twice"),
    ] {
        let mut args = vec!["merge".to_string()];
        args.extend(files.iter().map(|f| f.to_string()));
        args.extend(["--csv".to_string(), o.to_string()]);
        let (code, out, err) = run_s(&args);
        assert_eq!(code, 2, "{files:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{files:?}: {err}");
        assert!(!out_csv.exists());
    }
    let (code, _, err) = run(&["merge"]);
    assert_eq!(code, 2);
    assert!(err.contains("no shard files"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gradient_matching_reports_app_d_success_beside_gamma_and_refuses_bad_input() {
    let base = [
        "attack",
        "gradient-matching",
        "--train-size",
        "19",
        "--steps",
        "5",
        "--trials",
        "3",
        "--iterations",
        "20",
        "--restarts",
        "1",
        "--noise-multiplier",
        "0.5",
        "--quiet",
    ];
    let mut args: Vec<&str> = base.to_vec();
    args.push("--json");
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    for key in [
        "trials",
        "successes",
        "success_rate",
        "success_lower",
        "success_upper",
        "gamma",
        "gamma_balle",
        "mse_mean",
        "mse_median",
    ] {
        assert!(out.contains(&format!("\"{key}\": ")), "{key}: {out}");
    }
    assert_eq!(json_num(&out, "trials"), 3.0);
    assert!(json_num(&out, "success_lower") <= json_num(&out, "gamma"));
    let mse = json_num(&out, "mse_mean");
    assert!(mse > 0.0 && mse <= 1.0, "{mse}");
    // Threads do not change the result.
    let mut one = args.clone();
    one.extend(["--threads", "1"]);
    assert_eq!(run(&one).1, out);
    for (extra, needle) in [
        (vec!["--others", "0"], "--others"),
        (vec!["--iterations", "0"], "--iterations"),
        (vec!["--step-size", "-1"], "--step-size"),
        (vec!["--train-size", "1995"], "--train-size"),
        (vec!["--images", "/nonexistent/dir/g.svg"], "--images"),
    ] {
        let mut a = base.to_vec();
        a.extend(extra.iter().copied());
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}
