//! `reconbound fil-logreg`: Guo et al. 2022 §7.1 FIL of output-perturbed logistic regression.

use crate::common::{json_num, json_raw, run_cli as run};
use reconbound::accounting::fil::logreg::projected_output_perturbation_fil;
use reconbound::data::{embedded_mnist, split_by_size, Dataset};
use reconbound::rng::Rng;

/// The training set the command uses by default on the embedded data: digits 0/1, flattened,
/// 87 test examples drawn as `reconbound train --model logreg` draws them (seed 0).
fn default_training_set() -> Dataset {
    let two = embedded_mnist()
        .unwrap()
        .filter_labels(&[0, 1])
        .unwrap()
        .flatten();
    let split_seed = Rng::for_trial(0, u64::MAX).next_u64();
    split_by_size(&two, 87, split_seed).unwrap().0
}

fn without_seconds(json: &str) -> &str {
    &json[..json.find("\"seconds\"").expect("seconds key")]
}

#[test]
fn fil_logreg_default_run_matches_the_library_bit_for_bit() {
    let (code, out, err) = run(&["fil-logreg", "--json"]);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(out.lines().count(), 1, "one JSON object");
    assert_eq!(json_num(&out, "train_size"), 346.0);
    assert_eq!(json_num(&out, "test_size"), 87.0);
    assert_eq!(json_num(&out, "dim"), 784.0);
    assert_eq!(json_raw(&out, "space"), "\"pixels\"");
    assert_eq!(json_num(&out, "trivial_mse"), 1.0);
    // ε = 4/(nλσ)² at n = 346, λ = σ = 1e-2 (tolerance: a few ulps).
    let eps = 4.0 / (346.0f64 * 1e-4).powi(2);
    assert!((json_num(&out, "rdp_order2") / eps - 1.0).abs() < 1e-14);
    // The same numbers as the library on the same split (JSON numbers round-trip exactly).
    let fil = projected_output_perturbation_fil(&default_training_set(), 1e-2, 1e-2).unwrap();
    let mut bounds: Vec<f64> = fil.examples.iter().map(|e| e.mse_bound.unwrap()).collect();
    bounds.sort_by(f64::total_cmp);
    assert_eq!(json_num(&out, "fil_mse_bound_min"), bounds[0]);
    assert_eq!(json_num(&out, "fil_mse_bound_median"), bounds[172]);
    assert_eq!(json_num(&out, "fil_mse_bound_max"), bounds[345]);
    let perfect = bounds.iter().filter(|&&b| b >= 1.0).count();
    assert_eq!(json_num(&out, "perfect_privacy_count"), perfect as f64);
    assert_eq!(json_num(&out, "rdp_order2"), fil.rdp_order2);
    let acc = json_num(&out, "test_accuracy");
    assert!((0.95..=1.0).contains(&acc), "{out}");
    assert_eq!(json_raw(&out, "out"), "null");
    // Deterministic: a second run prints the same object (but the wall time).
    let (_, again, _) = run(&["fil-logreg", "--json"]);
    assert_eq!(without_seconds(&out), without_seconds(&again));
}

#[test]
fn fil_logreg_table_rounds_bounds_to_the_safe_side() {
    let (code, out, err) = run(&["fil-logreg", "--train-size", "200"]);
    assert_eq!(code, 0, "stderr: {err}");
    for needle in [
        "200 training / 233 test examples, d = 784",
        "(2, ε)-RDP, ε = 4/(nλσ)²",
        "MSE ≥ (Thm 1, from RDP)",
        "MSE ≥ d/Tr(I) (Thm 2): min",
        "perfect privacy",
        "underflows",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let (_, json, _) = run(&["fil-logreg", "--train-size", "200", "--json"]);
    let shown = |label: &str| -> f64 {
        let line = out.lines().find(|l| l.contains(label)).unwrap();
        let rest = &line[line.find(label).unwrap() + label.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    // MSE lower bounds are printed rounded down, ε and dFIL rounded up.
    assert!(shown("(Thm 2): min") <= json_num(&json, "fil_mse_bound_min"));
    assert!(shown("ε = 4/(nλσ)²") >= json_num(&json, "rdp_order2"));
    assert!(shown("dFIL Tr(I)/d: max") >= json_num(&json, "dfil_max"));
}

#[test]
fn fil_logreg_csv_rows_match_the_data() {
    let path =
        std::env::temp_dir().join(format!("reconbound-fil-logreg-{}.csv", std::process::id()));
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&[
        "fil-logreg",
        "--digits",
        "3,8",
        "--train-size",
        "150",
        "--out",
        p,
        "--json",
    ]);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("\"digits\": [3, 8]"), "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("index,label,trace,dfil,mse_bound,digit,source_index")
    );
    let mnist = embedded_mnist().unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 150);
    let mut min_bound = f64::INFINITY;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], i as f64);
        let (x, digit) = mnist.example(r[6] as usize).unwrap();
        assert_eq!(f64::from(digit), r[5], "row {i}: source digit");
        assert_eq!(r[5], if r[1] == 0.0 { 3.0 } else { 8.0 });
        assert!(x.len() == 784 && r[2] > 0.0 && r[4] > 0.0);
        // dFIL = Tr/d and the bound d/Tr (rounded down): product 1 to 1e-12.
        assert!((r[3] * 784.0 / r[2] - 1.0).abs() < 1e-14);
        assert!(r[4] * r[3] <= 1.0 && r[4] * r[3] > 1.0 - 1e-12);
        min_bound = min_bound.min(r[4]);
    }
    assert_eq!(json_num(&out, "fil_mse_bound_min"), min_bound);
}

#[test]
fn fil_logreg_spaces_and_no_test_set() {
    let (code, out, err) = run(&[
        "fil-logreg",
        "--space",
        "unit-ball",
        "--train-size",
        "433",
        "--json",
    ]);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(json_num(&out, "test_size"), 0.0);
    assert_eq!(json_raw(&out, "test_accuracy"), "null");
    assert_eq!(json_num(&out, "trivial_mse"), 2.0 / 784.0);
    let (_, pixels, _) = run(&["fil-logreg", "--train-size", "433", "--json"]);
    // About the raw image (norm ≈ 9 ≫ 1), the information is far smaller: the raw-pixel
    // bounds exceed the unit-ball ones.
    assert!(json_num(&pixels, "fil_mse_bound_min") > json_num(&out, "fil_mse_bound_min"));
    assert_eq!(
        json_num(&pixels, "rdp_order2"),
        json_num(&out, "rdp_order2")
    );
}

#[test]
fn fil_logreg_bad_input_exits_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--lambda", "0"], "--lambda"),
        (&["--lambda", "nan"], "--lambda"),
        (&["--noise", "-1"], "--noise"),
        (&["--noise", "inf"], "--noise"),
        (&["--digits", "0"], "--digits"),
        (&["--digits", "1,1"], "--digits"),
        (&["--digits", "0,12"], "--digits"),
        (&["--digits", "a,b"], "--digits"),
        (&["--space", "raw"], "--space"),
        (&["--train-size", "0"], "--train-size"),
        (&["--train-size", "434"], "--train-size"),
        (&["--data", "/nonexistent/reconbound"], "--data"),
        (
            &[
                "--out",
                "/nonexistent/reconbound/x.csv",
                "--train-size",
                "20",
            ],
            "--out",
        ),
        (&["--seed", "-3"], "--seed"),
        (&["--steps", "3"], "--steps"),
    ];
    for (extra, flag) in cases {
        let mut args = vec!["fil-logreg"];
        args.extend_from_slice(extra);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn fil_logreg_help_documents_json_keys() {
    let (code, out, _) = run(&["fil-logreg", "--help-all"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("usage: reconbound fil-logreg"));
    for key in [
        "JSON keys",
        "fil_mse_bound_median",
        "perfect_privacy_count",
        "--space",
    ] {
        assert!(out.contains(key), "missing {key}");
    }
    let (_, top, _) = run(&["--help"]);
    assert!(top.contains("fil-logreg"));
}
