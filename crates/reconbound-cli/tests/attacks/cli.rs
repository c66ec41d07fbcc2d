//! `reconbound attack prior-aware` and `reconbound merge` as a user runs them.

use super::common::{
    args_with, assert_merge_refusals, assert_sharded_run_refusals, json_num, json_raw, merge_args,
    run_cli as run, run_cli_strings as run_s, run_with_csv_and_plot, temp_dir as common_temp_dir,
    write_in,
};
use reconbound::math::beta::clopper_pearson;
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

/// SMALL with `extra` (a flag of SMALL given again in `extra` is replaced).
fn with(extra: &[&str]) -> Vec<String> {
    args_with(&SMALL, extra)
}

fn temp_dir(name: &str) -> PathBuf {
    common_temp_dir("attack", name)
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
        files.push(write_in(&dir, &format!("s{k}.jsonl"), &lines));
    }
    let mut args = merge_args(&files.iter().collect::<Vec<_>>(), &[]);
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

/// `attack prior-aware` on the full batch with `--noise-multiplier sigma` and 60 trials (JSON).
fn one_point(sigma: &str) -> String {
    let (code, out, err) = run(&[
        "attack",
        "prior-aware",
        "--trials",
        "60",
        "--train-size",
        "49",
        "--steps",
        "10",
        "--noise-multiplier",
        sigma,
        "--json",
        "--quiet",
    ]);
    assert_eq!(code, 0, "σ = {sigma}: {err}");
    out
}

#[test]
fn one_point_has_its_keys_at_the_top_level_and_stays_below_gamma() {
    // Soundness: the one-sided Clopper–Pearson lower limit at 1e-6 (the test's failure
    // probability) of the honest run's successes (Alg. 2, the default score) must not exceed
    // γ. Full batch, T = 10, σ = 4, κ = 1/10: γ = Φ(Φ⁻¹(0.1) + √10/4) ≈ 0.312, while 60
    // trials can show a lower limit of up to (1e-6)^(1/60) ≈ 0.794 (60/60), so the check can
    // fail. Negative control in the same test: the trainer at σ/4 = 1 (μ ≈ 3.2 instead of
    // 0.79) against the γ of σ = 4 must fail the same check (measured: honest 20/60, lower
    // limit ≈ 0.10; control 53/60, lower limit ≈ 0.60).
    let out = one_point("4");
    assert_eq!(json_num(&out, "trials"), 60.0);
    let (rate, lo, hi) = (
        json_num(&out, "success_rate"),
        json_num(&out, "success_lower"),
        json_num(&out, "success_upper"),
    );
    assert!(lo <= rate && rate <= hi);
    assert_eq!(json_raw(&out, "epsilon"), "null");
    let gamma = json_num(&out, "gamma");
    assert!((gamma - 0.3117).abs() < 1e-3, "γ = {gamma}");
    let lower_1e6 = |out: &str| {
        let k = json_num(out, "successes") as u64;
        (k, clopper_pearson(k, 60, 1e-6).unwrap().lower)
    };
    let (k, honest) = lower_1e6(&out);
    assert!(
        honest <= gamma,
        "honest run {k}/60 beats γ = {gamma}: {out}"
    );
    // above_bound is the 95 % intervals' verdict (true with a chance of up to 2.5 % even when
    // sound, against its own γ), so it is not asserted here.
    let control = one_point("1");
    let (k, lower) = lower_1e6(&control);
    assert!(
        lower > gamma,
        "control at σ/4: {k}/60 (lower limit {lower}) does not exceed the γ = {gamma} of σ = 4"
    );
}

#[test]
fn csv_and_plot_are_written_whole() {
    let (_, text, plot) = run_with_csv_and_plot(with(&[]), "prior-aware");
    assert_eq!(text.lines().count(), 1 + 2 * 3, "{text}");
    assert!(text.starts_with("epsilon,noise_multiplier,score,trials,successes"));
    assert_eq!(plot.matches("class=\"estimate\"").count(), 2 * 3);
    assert_eq!(plot.matches("class=\"curve\"").count(), 3);
}

#[test]
fn bad_input_exits_2_names_the_flag_and_writes_nothing() {
    let cases: &[(&[&str], &str)] = &[
        (&["--prior-size", "1"], "--prior-size"),
        (&["--score", "max"], "--score"),
    ];
    assert_sharded_run_refusals(&SMALL, cases);
    let (code, _, err) = run(&["attack", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("prior-aware"), "{err}");
    let (code, out, _) = run(&["attack", "prior-aware", "--help-all"]);
    assert_eq!(code, 0);
    assert!(out.contains("JSON keys"));
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
    let other_seed = shard(&["--lr", "5"], 1, 2);
    assert_merge_refusals(&dir, &shard(&[], 0, 2), &shard(&[], 1, 2), &other_seed);
    let (code, _, err) = run(&["merge"]);
    assert_eq!(code, 2);
    assert!(err.contains("no shard files"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A smoke test of the gradient-matching command line: 3 trials cannot convict a wrong
/// claim (their 95 % lower limit is at most 0.05^(1/3) ≈ 0.37, below the γ ≈ 1 of σ = 0.5,
/// T = 5), so `success_lower ≤ γ` here only checks the report's plumbing.
#[test]
fn gradient_matching_reports_app_d_success_beside_gamma_and_refuses_bad_input_smoke() {
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
