//! `audit --view final-model --init crafted`: the black-box audit of Annamalai & De Cristofaro
//! (NeurIPS 2024) on the command line — its keys, its shards, its refusals.

use super::common::{
    args_with, assert_sharded_run_refusals, json_object as object, merge_args,
    run_cli_strings as run_s, temp_dir, write_in,
};
use reconbound_cli::json::Value;

/// A small full-batch black-box audit: |D| = 50, T = 3, 20 trials per world.
const BLACK_BOX: [&str; 17] = [
    "audit",
    "--train-size",
    "50",
    "--steps",
    "3",
    "--trials",
    "20",
    "--seed",
    "3",
    "--sampling-rate",
    "1",
    "--crafter",
    "mislabelled",
    "--view",
    "final-model",
    "--init",
    "crafted",
];

#[test]
fn black_box_audit_reports_the_final_loss_alone_with_its_keys_and_merges_its_shards() {
    let mut args = args_with(&BLACK_BOX, &[]);
    args.extend(["--json".to_string(), "--quiet".into()]);
    let (code, whole, err) = run_s(&args);
    assert_eq!(code, 0, "{err}");
    let o = object(&whole);
    assert_eq!(o.get("init"), Some(&Value::Str("crafted".into())));
    assert_eq!(
        o.get("adversary_view"),
        Some(&Value::Str("final-model".into()))
    );
    assert_eq!(
        o.get("distinguishers"),
        Some(&Value::Str("final-loss".into()))
    );
    match o.get("rows") {
        Some(Value::Arr(rows)) => assert_eq!(rows.len(), 1, "{whole}"),
        other => panic!("rows: {other:?}"),
    }
    let text_args = args_with(&BLACK_BOX, &["--quiet"]);
    let (code, text, _) = run_s(&text_args);
    assert_eq!(code, 0);
    assert!(text.contains("adversary view final-model"), "{text}");
    assert!(text.contains("θ₀ crafted"), "{text}");
    // Shards of the black-box audit merge to the whole run's bytes.
    let dir = temp_dir("audit", "black-box");
    let mut files = Vec::new();
    for k in [0, 1] {
        let mut a = args_with(&BLACK_BOX, &[]);
        a.extend(["--shard".to_string(), format!("{k}/2"), "--quiet".into()]);
        let (code, lines, err) = run_s(&a);
        assert_eq!(code, 0, "{err}");
        assert!(lines
            .lines()
            .next()
            .unwrap()
            .contains("\"init\": \"crafted\""));
        files.push(write_in(&dir, &format!("s{k}.jsonl"), &lines));
    }
    let mut m = merge_args(&files.iter().collect::<Vec<_>>(), &[]);
    m.push("--json".into());
    let (code, merged, err) = run_s(&m);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn black_box_audit_refuses_what_it_does_not_fit_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--init", "pretrained"], "--init"),
        (&["--init", ""], "--init"),
        (&["--view", "final"], "--view"),
        // Crafter 5 freezes θ at θ₀; gradient canaries insert no example.
        (&["--view", "informed", "--crafter", "5"], "--crafter"),
        (
            &["--view", "informed", "--crafter", "gradient-dirac"],
            "--crafter",
        ),
        // The final model alone: no intermediate model, no released gradient.
        (&["--distinguisher", "2"], "--distinguisher"),
        (&["--distinguisher", "1,3"], "--distinguisher"),
        (&["--distinguisher", "all"], "--distinguisher"),
        (&["--distinguisher", "paired"], "--distinguisher"),
        (&["--init", "random", "--crafter", "adaptive"], "--crafter"),
        (
            &["--init", "random", "--crafter", "dataset-dirac"],
            "--crafter",
        ),
    ];
    assert_sharded_run_refusals(&BLACK_BOX, cases);
    // The one-run audit has no crafted θ₀.
    let args = args_with(
        &BLACK_BOX,
        &["--estimator", "one-run", "--view", "informed"],
    );
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| a != "--trials" && a != "20")
        .collect();
    let (code, _, err) = run_s(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--init"), "{err}");
    assert!(err.contains("random θ₀"), "{err}");
}

#[test]
fn final_model_alone_audits_the_crafters_it_fits_and_names_a_distinguisher_it_refuses() {
    // Issue 43: '--view final-model' alone was refused for the default crafters ("all"),
    // which the user never named; now it runs those that fit (example, mislabelled,
    // clipbkd, gradient-dirac). A distinguisher given by number is named by number and name.
    let (code, out, err) = run_s(&args_with(
        &[
            "audit",
            "--view",
            "final-model",
            "--trials",
            "4",
            "--train-size",
            "49",
            "--steps",
            "5",
            "--quiet",
            "--json",
        ],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    let o = object(&out);
    let Some(Value::Arr(crafters)) = o.get("crafters") else {
        panic!("{out}")
    };
    let names: Vec<String> = crafters
        .iter()
        .map(|c| match c {
            Value::Str(s) => s.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        ["example", "mislabelled", "clipbkd", "gradient-dirac"]
    );
    let (code, _, err) = run_s(&args_with(
        &[
            "audit",
            "--view",
            "final-model",
            "--distinguisher",
            "3",
            "--crafter",
            "mislabelled",
            "--trials",
            "4",
        ],
        &[],
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains("flag '--distinguisher': 3 (gradient) does not apply"),
        "{err}"
    );
}
