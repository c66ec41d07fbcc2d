//! `reconbound tradeoff`: the certified trade-off curve and the risks read from it.

use super::common::{assert_refused, json_num, run_cli as run, run_with_csv_and_plot, temp_dir};

#[test]
fn tradeoff_default_prints_the_membership_risks_of_the_readme_run() {
    // `bound`'s default run (docs/your-run.md: q = 256/60000, σ = 1.1, T = 14,063). TPR at 1 % FPR:
    // dp_accounting 0.6.0's own PLD (grid 1e-4) gives 0.040208 in the worse direction;
    // the certified bracket is [0.0402042, 0.0402075] (grid error ≤ 2e-5, see the core's
    // tradeoff tests).
    let (code, out, err) = run(&["tradeoff"]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "TPR at FPR 0.1 %",
        "TPR at FPR 1 %",
        "TPR at FPR 10 %",
        "advantage",
        "Bayes security",
        "ε(δ = 1e-5)",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let (code, json, err) = run(&["tradeoff", "--json", "--kappa", "0.1"]);
    assert_eq!(code, 0, "{err}");
    let o = super::common::json_object(&json);
    let Some(reconbound_cli::json::Value::Arr(rows)) = o.get("fpr") else {
        panic!("no fpr rows: {json}");
    };
    assert_eq!(rows.len(), 3);
    let tpr1 = match &rows[1] {
        reconbound_cli::json::Value::Obj(r) => super::common::json_number(r, "tpr"),
        _ => panic!("{json}"),
    };
    assert!((tpr1 - 0.040208).abs() < 2e-5, "{tpr1}");
    // the advantage is riskcal 1.5.1's 0.2244785 within its grid's error
    assert!((json_num(&json, "advantage") - 0.2244785).abs() < 2e-5);
    // ε from the curve equals the PLD accountant's (bound's ε by PLD ≤ 2.38175)
    let (_, b, _) = run(&["bound", "--json"]);
    let (e, el) = (json_num(&json, "epsilon"), json_num(&json, "epsilon_lower"));
    assert!(el <= json_num(&b, "epsilon_pld") && json_num(&b, "epsilon_pld_lower") <= e);
    // γ at κ = 0.1 overlaps bound's Hayes γ bracket at its prior of 10
    let (g, gl) = (json_num(&json, "gamma"), json_num(&json, "gamma_lower"));
    assert!(gl <= json_num(&b, "gamma") && json_num(&b, "gamma_lower") <= g);
}

/// Issue 43: the answer first — the TPR bound at FPR 1 % (or the first FPR asked), the
/// advantage and ε, rounded as the rows round them.
#[test]
fn tradeoff_answers_first_with_the_rows_numbers() {
    let (code, out, err) = run(&["tradeoff"]);
    assert_eq!(code, 0, "{err}");
    let answer = out
        .split("\n\n")
        .nth(1)
        .unwrap_or_default()
        .replace("\n        ", " ");
    assert!(answer.starts_with("answer: "), "{out}");
    for (row, value) in [
        ("TPR at FPR 1 %", "0.04021"),
        ("advantage max(TPR − FPR)", "0.2245"),
        ("ε(δ = 1e-5)", "2.38175"),
    ] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .unwrap();
        assert!(
            line.contains(value) && answer.contains(value),
            "{value}: {line} / {answer}"
        );
    }
    assert!(
        answer.contains("at a false-positive rate of 1 % (a blind guess: 1 %)"),
        "{answer}"
    );
    // FPR 1 % not asked: the first one asked
    let (_, out, _) = run(&["tradeoff", "--fpr", "0.05,0.2"]);
    let answer = out
        .split("\n\n")
        .nth(1)
        .unwrap_or_default()
        .replace("\n        ", " ");
    assert!(
        answer.contains("at a false-positive rate of 5 %"),
        "{answer}"
    );
}

#[test]
fn a_tiny_level_asked_beside_the_others_leaves_them_as_tight_as_alone() {
    // Issue 43: --kappa 1e-300 (or --fpr 1e-12,0.001) set one grid for every number: TPR at
    // 0.1 % went from 0.006051 to 0.8799, the advantage to 1. Now each level below 1e-3
    // gets a curve of its own, and the others are the same bits as without it. And ε(δ)
    // is 'epsilon --accountant pld''s own, bit for bit (the help says so).
    let (_, alone, _) = run(&["tradeoff", "--json", "--fpr", "0.001"]);
    let fpr0 = |json: &str, i: usize| {
        let o = super::common::json_object(json);
        let Some(reconbound_cli::json::Value::Arr(rows)) = o.get("fpr") else {
            panic!("{json}")
        };
        match &rows[i] {
            reconbound_cli::json::Value::Obj(r) => super::common::json_number(r, "tpr"),
            _ => panic!("{json}"),
        }
    };
    for extra in [
        &["--fpr", "0.001", "--kappa", "1e-300"][..],
        &["--fpr", "1e-12,0.001"][..],
    ] {
        let mut a = vec!["tradeoff", "--json"];
        a.extend_from_slice(extra);
        let (code, json, err) = run(&a);
        assert_eq!(code, 0, "{err}");
        let i = usize::from(extra[1].starts_with("1e-12"));
        assert_eq!(fpr0(&json, i), fpr0(&alone, 0), "{extra:?}");
        for key in ["advantage", "epsilon", "bayes_accuracy"] {
            assert_eq!(
                json_num(&json, key),
                json_num(&alone, key),
                "{extra:?} {key}"
            );
        }
    }
    // the README's run, given to both commands alike
    let same = [
        "--sampling-rate",
        "0.0042666666666666667",
        "--noise-multiplier",
        "1.1",
        "--steps",
        "14063",
        "--delta",
        "1e-5",
    ];
    let (_, e, _) = run(&[&["epsilon", "--json", "--accountant", "pld"][..], &same].concat());
    let (_, t, _) = run(&[&["tradeoff", "--json"][..], &same].concat());
    assert_eq!(json_num(&t, "epsilon"), json_num(&e, "epsilon_pld"));
    assert_eq!(
        json_num(&t, "epsilon_lower"),
        json_num(&e, "epsilon_pld_lower")
    );
    // labels: no percentage of a percentage, no float noise
    let (_, text, _) = run(&["tradeoff", "--fpr", "1e-300,1e-6,0.001"]);
    for label in ["TPR at FPR 1e-300 ", "TPR at FPR 1e-6 ", "TPR at FPR 0.1 %"] {
        assert!(text.contains(label), "{label}: {text}");
    }
}

#[test]
fn tradeoff_full_batch_is_the_gdp_closed_form() {
    // σ = 1, q = 1, T = 1: 1-GDP. TPR at FPR 1 % = Φ(Φ⁻¹(0.01) + 1) = 0.0923622480737
    // (scipy 1.x); the bracket is rounding only (1e-12).
    let (code, json, err) = run(&[
        "tradeoff",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "1",
        "--steps",
        "1",
        "--fpr",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(json.contains("\"source\": \"gaussian\""), "{json}");
    let t = json_num(&json, "tpr");
    assert!((t - 0.0923622480737).abs() < 1e-12, "{t}");
    // advantage 2Φ(1/2) − 1 = 0.382924922548
    assert!((json_num(&json, "advantage") - 0.382924922548).abs() < 1e-11);
}

#[test]
fn tradeoff_writes_its_curve_as_csv_and_an_roc_plot() {
    let args: Vec<String> = ["tradeoff", "--points", "40"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (out, csv, svg) = run_with_csv_and_plot(args, "tradeoff");
    assert!(out.contains("TPR at FPR 1 %"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "alpha,beta_lower,beta_upper,tpr_upper");
    assert_eq!(lines.len(), 41);
    assert!(lines[1].starts_with("0.0001,") && lines[40].starts_with("1,"));
    assert!(svg.contains("false-positive rate") && svg.contains("blind guess"));
}

#[test]
fn tradeoff_refuses_bad_levels_naming_the_flag_and_writes_nothing() {
    let dir = temp_dir("tradeoff", "refusals");
    let plot = dir.join("roc.svg");
    let p = plot.to_string_lossy().into_owned();
    for (extra, needle) in [
        (&["--fpr", "0"][..], "--fpr"),
        (&["--fpr", "1"][..], "--fpr"),
        (&["--fpr", "0.01,1.5"][..], "--fpr"),
        (&["--fpr", ""][..], "--fpr"),
        (&["--prior", "1"][..], "--prior"),
        (&["--kappa", "0"][..], "--kappa"),
        (&["--delta", "1"][..], "--delta"),
        (&["--points", "1"][..], "--points"),
        (&["--points", "10001"][..], "--points"),
        (&["--noise-multiplier", "0"][..], "--noise-multiplier"),
        (&["--sampling", "shuffle"][..], "--sampling"),
        (
            &["--sampling", "fixed", "--sampling-rate", "0.1"][..],
            "--sampling-rate",
        ),
        (
            &["--sampling", "fixed", "--batch-size", "0"][..],
            "--batch-size",
        ),
    ] {
        let mut args: Vec<String> = vec!["tradeoff".into(), "--plot".into(), p.clone()];
        args.extend(extra.iter().map(|s| s.to_string()));
        assert_refused(&args, needle, &plot);
    }
}

#[test]
fn calibrate_to_a_risk_target_meets_it_and_one_percent_less_noise_does_not() {
    // The σ for advantage 0.1 and for TPR 0.05 at FPR 1 % (q = 0.01, T = 1000): the
    // tradeoff command at that σ meets the target, at 0.99 σ it does not. riskcal 1.5.1's
    // σ for advantage 0.1 at `bound`'s default run (docs/your-run.md) is 2.12841 (ours 2.127948).
    for (target, key, fpr) in [
        (&["--target-advantage", "0.1"][..], "advantage", None),
        (
            &["--target-tpr", "0.05", "--fpr", "0.01"][..],
            "tpr",
            Some("0.01"),
        ),
    ] {
        let mut args = vec![
            "calibrate",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1000",
            "--json",
        ];
        args.extend_from_slice(target);
        let (code, json, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let sigma = json_num(&json, "noise_multiplier");
        let want: f64 = target[1].parse().unwrap();
        assert!(json_num(&json, key) <= want);
        for (s, meets) in [(sigma, true), (0.99 * sigma, false)] {
            let s = format!("{s}");
            let mut a = vec![
                "tradeoff",
                "--sampling-rate",
                "0.01",
                "--steps",
                "1000",
                "--noise-multiplier",
                &s,
                "--json",
            ];
            if let Some(f) = fpr {
                a.extend_from_slice(&["--fpr", f]);
            }
            let (code, out, err) = run(&a);
            assert_eq!(code, 0, "{err}");
            let got = json_num(&out, key);
            assert_eq!(got <= want, meets, "σ {s}: {key} {got} vs {want}");
        }
    }
}

#[test]
fn calibrate_refuses_unreachable_risk_targets_naming_the_flag() {
    let nothing = std::path::Path::new("/nonexistent-reconbound-output");
    for (extra, needle) in [
        (
            &["--target-tpr", "0.01", "--fpr", "0.01"][..],
            "--target-tpr",
        ),
        (&["--target-tpr", "0.5"][..], "--fpr"),
        (&["--target-tpr", "0.5", "--fpr", "0"][..], "--fpr"),
        (&["--target-advantage", "0"][..], "--target-advantage"),
        (&["--target-advantage", "1"][..], "--target-advantage"),
        (&["--target-advantage", "0.1", "--fpr", "0.01"][..], "--fpr"),
        (
            &["--target-advantage", "0.1", "--target-gamma", "0.2"][..],
            "one target",
        ),
        // every σ meets it (q = 0.01, T = 100: the advantage is at most 1 − 0.99^100 = 0.634)
        (&["--target-advantage", "0.7"][..], "σ → 0 limit"),
        // issue 43: flags of the other targets were silently ignored
        (
            &["--target-tpr", "0.5", "--fpr", "0.01", "--delta", "1e-5"][..],
            "'--delta' goes with '--target-epsilon'",
        ),
        (
            &["--target-advantage", "0.3", "--kappa", "0.1"][..],
            "'--kappa' goes with '--target-gamma'",
        ),
        (
            &["--target-advantage", "0.3", "--prior-size", "10"][..],
            "'--prior-size' goes with",
        ),
    ] {
        let mut args: Vec<String> = ["calibrate", "--sampling-rate", "0.01", "--steps", "100"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        assert_refused(&args, needle, nothing);
    }
}
