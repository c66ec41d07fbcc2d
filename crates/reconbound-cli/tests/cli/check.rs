//! `reconbound run` and `reconbound check` (issue 40): one run in every spelling gives the
//! same bits; verdicts and their exit status on cases reported against peer libraries, each
//! with its source; bad input refused naming the flag, nothing written.

use crate::common::{assert_refused, json_num, json_object, run_cli as run, temp_dir, write_in};
use reconbound_cli::json::Value;

/// `check ... --json`: (exit status, verdict, JSON text).
fn check(args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["check"];
    a.extend_from_slice(args);
    a.push("--json");
    let (code, out, err) = run(&a);
    assert!(code == 0 || code == 3, "{a:?}: exit {code}: {err}");
    let o = json_object(&out);
    let verdict = match o.get("verdict") {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Null) => String::from("null"),
        other => panic!("verdict: {other:?} in {out}"),
    };
    (code, verdict, out)
}

const OPACUS_RUN: [&str; 10] = [
    "--noise-multiplier",
    "1.1",
    "--batch-size",
    "256",
    "--dataset-size",
    "60000",
    "--epochs",
    "30",
    "--counting",
    "opacus",
];

#[test]
fn one_run_as_flags_fraction_and_run_file_gives_the_same_bits() {
    // the Opacus run of docs/your-library.md: q = 1/⌈60000/256⌉ = 1/235, T = 30 · 235 = 7050
    let dir = temp_dir("check", "spellings");
    let (code, file, err) = run(&[&["run"][..], &OPACUS_RUN, &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let path = write_in(&dir, "run.json", &file);
    let flags = run(&[&["bound"][..], &OPACUS_RUN, &["--json"]].concat());
    let from_file = run(&["bound", "--run", &path, "--json"]);
    let fraction = run(&[
        "bound",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "1/235",
        "--steps",
        "7050",
        "--json",
    ]);
    let plain = run(&[
        "bound",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        &(1.0f64 / 235.0).to_string(),
        "--steps",
        "7050",
        "--json",
    ]);
    assert_eq!(flags.0, 0, "{}", flags.2);
    for other in [&from_file, &fraction, &plain] {
        assert_eq!(other, &flags);
    }
    // check reads the same run both ways, to the last bit
    let a = check(
        &[
            &OPACUS_RUN[..],
            &["--claimed-epsilon", "1.2", "--delta", "1e-5"],
        ]
        .concat(),
    );
    let b = check(&[
        "--run",
        &path,
        "--claimed-epsilon",
        "1.2",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(a, b);
    // `epsilon`, `tradeoff` and `rero` take the run file too
    for cmd in ["epsilon", "tradeoff", "rero"] {
        let delta: &[&str] = if cmd == "rero" {
            &["--prior-size", "10"]
        } else {
            &["--delta", "1e-5"]
        };
        let x = run(&[&[cmd, "--run", &path][..], delta, &["--json"]].concat());
        let flags = [
            cmd,
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "1/235",
            "--steps",
            "7050",
        ];
        let y = run(&[&flags[..], delta, &["--json"]].concat());
        assert_eq!(x.0, 0, "{cmd}: {}", x.2);
        assert_eq!(x, y, "{cmd}");
    }
}

#[test]
fn verdicts_and_their_exit_status() {
    // q = 0.01, σ = 1, T = 1000, δ = 1e-5: certified ε ∈ [1.828211, 1.828256]
    let run_flags = [
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
    ];
    for (claim, code, verdict) in [
        ("1.8", 3, "optimistic"),
        ("1.82823", 0, "consistent"),
        ("2.1013", 0, "conservative"),
    ] {
        let (c, v, out) = check(&[&run_flags[..], &["--claimed-epsilon", claim]].concat());
        assert_eq!((c, v.as_str()), (code, verdict), "{claim}: {out}");
    }
    // the text says it first, in one line
    let (code, out, _) = run(&[&["check"][..], &run_flags, &["--claimed-epsilon", "1.8"]].concat());
    assert_eq!(code, 3);
    assert!(
        out.starts_with("OPTIMISTIC: the claimed ε = 1.8 at δ = 1e-5"),
        "{out}"
    );
    // with no flags: the default run's bracket, exit 0, no verdict
    let (code, out, err) = run(&["check", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"verdict\": null"), "{out}");
    assert!(json_num(&out, "epsilon_lower") <= json_num(&out, "epsilon_upper"));
}

#[test]
fn peer_library_cases_get_the_right_verdict() {
    // Opacus issue #643: history [(σ 3, q 0.2, 50 steps)], δ = 1/48000: its gdp accountant
    // printed 1.83, its rdp accountant 2.16; the certified ε is 1.96080…
    let delta = (1.0f64 / 48_000.0).to_string();
    let opacus = [
        "--noise-multiplier",
        "3",
        "--sampling-rate",
        "0.2",
        "--steps",
        "50",
        "--delta",
        &delta,
    ];
    let (code, v, out) = check(
        &[
            &opacus[..],
            &["--claimed-epsilon", "1.83", "--library", "opacus-gdp"],
        ]
        .concat(),
    );
    assert_eq!((code, v.as_str()), (3, "optimistic"), "{out}");
    assert!(
        (json_num(&out, "epsilon_lower") - 1.9608).abs() < 1e-4,
        "{out}"
    );
    let (code, v, _) = check(
        &[
            &opacus[..],
            &["--claimed-epsilon", "2.16", "--library", "opacus-rdp"],
        ]
        .concat(),
    );
    assert_eq!((code, v.as_str()), (0, "conservative"));
    // prv_accountant issue #17: q 0.00033, σ 4, 10,000 steps, δ 1.1e-18 → eps_estimate
    // 0.056 (eps_upper 0.156); δ 1.13e-18 → 3.8. The certified ε is ≈ 0.0672 at both.
    let prv = [
        "--noise-multiplier",
        "4",
        "--sampling-rate",
        "0.00033",
        "--steps",
        "10000",
        "--library",
        "prv-accountant",
    ];
    let (_, v, out) = check(
        &[
            &prv[..],
            &["--claimed-epsilon", "0.056", "--delta", "1.1e-18"],
        ]
        .concat(),
    );
    assert_eq!(v, "optimistic", "{out}");
    assert!(
        (json_num(&out, "epsilon_lower") - 0.0672).abs() < 1e-3,
        "{out}"
    );
    let (_, v, _) = check(
        &[
            &prv[..],
            &["--claimed-epsilon", "3.8", "--delta", "1.13e-18"],
        ]
        .concat(),
    );
    assert_eq!(v, "conservative");
    // dp_accounting 0.6.0 PLD at δ = 1e-12 on the default run: 4.15 to 4.29 depending on
    // the grid; certified [4.17439, 4.17473]
    let dflt = [
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "256/60000",
        "--steps",
        "14063",
        "--delta",
        "1e-12",
        "--library",
        "dp-accounting-pld",
    ];
    for (claim, verdict) in [
        ("4.15", "optimistic"),
        ("4.1746", "consistent"),
        ("4.29", "conservative"),
    ] {
        let (_, v, out) = check(&[&dflt[..], &["--claimed-epsilon", claim]].concat());
        assert_eq!(v, verdict, "{claim}: {out}");
    }
    // jax_privacy PR #271: batch 10, 8 accumulation steps, 100 steps, N 1000, σ 1: ε ≈ 0.72 at
    // the physical batch's rate, ≈ 5.6 at the effective batch's; the claim is optimistic and
    // matches the physical-batch assumption
    let (code, v, out) = check(&[
        "--noise-multiplier",
        "1",
        "--batch-size",
        "10",
        "--accumulation",
        "8",
        "--dataset-size",
        "1000",
        "--steps",
        "100",
        "--claimed-epsilon",
        "0.72",
        "--delta",
        "1e-5",
        "--library",
        "jax-privacy",
    ]);
    assert_eq!((code, v.as_str()), (3, "optimistic"), "{out}");
    assert!(json_num(&out, "epsilon_lower") > 5.0, "{out}");
    assert!(
        out.contains("\"assumption\": \"the physical batch's rate"),
        "{out}"
    );
    assert!(out.contains("\"claim_consistent\": true"), "{out}");
    // TensorFlow Privacy #620: microbatches of several examples double the sensitivity; the
    // ε of σ claimed for a run that really spends the ε of σ/2
    let tfp = [
        "--noise-multiplier",
        "1.2",
        "--batch-size",
        "256",
        "--dataset-size",
        "60000",
        "--epochs",
        "10",
        "--microbatches",
        "32",
        "--delta",
        "1e-5",
        "--library",
        "tf-privacy",
    ];
    let (_, _, sigma_run) = check(&[
        "--noise-multiplier",
        "1.2",
        "--batch-size",
        "256",
        "--dataset-size",
        "60000",
        "--epochs",
        "10",
        "--delta",
        "1e-5",
    ]);
    let claim = json_num(&sigma_run, "epsilon_upper").to_string();
    let (code, v, out) = check(&[&tfp[..], &["--claimed-epsilon", &claim]].concat());
    assert_eq!((code, v.as_str()), (3, "optimistic"), "{out}");
    assert!(out.contains("ignoring the microbatches"), "{out}");
    // shuffled batches accounted as Poisson (Chua et al. 2024): σ 1, one epoch of 100
    // batches; the Poisson ε at q = 0.01 (≈ 0.72) is refuted by the lower bound (> 4)
    let (code, v, out) = check(&[
        "--noise-multiplier",
        "1",
        "--batch-size",
        "100",
        "--dataset-size",
        "10000",
        "--steps",
        "100",
        "--sampling",
        "shuffled",
        "--claimed-epsilon",
        "0.72",
        "--delta",
        "1e-5",
        "--library",
        "opacus-rdp",
    ]);
    assert_eq!((code, v.as_str()), (3, "optimistic"), "{out}");
    assert!(out.contains("\"epsilon_upper\": null"), "{out}");
    assert!(
        out.contains("\"epsilon_lower_by\": \"shuffle-max-test\""),
        "{out}"
    );
}

#[test]
fn bad_run_descriptions_and_claims_are_refused_naming_the_flag() {
    let dir = temp_dir("check", "refusals");
    let never = dir.join("never.json");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // a claim without δ
    assert_refused(
        &s(&[
            "check",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "10",
            "--claimed-epsilon",
            "1",
        ]),
        "'--delta' is required",
        &never,
    );
    // a run file whose mechanism disagrees with its description (q and B/N that disagree)
    let (_, file, _) = run(&[&["run"][..], &OPACUS_RUN, &["--json"]].concat());
    let forged = file.replace("\"steps\": 7050", "\"steps\": 7000");
    assert_ne!(forged, file);
    let bad = write_in(&dir, "forged.json", &forged);
    assert_refused(
        &s(&["check", "--run", &bad]),
        "mechanism.steps = 7000",
        &never,
    );
    let both = write_in(
        &dir,
        "both.json",
        "{\"noise_multiplier\": 1, \"sampling_rate\": 0.01, \"batch_size\": 10, \"dataset_size\": 1000, \"steps\": 5}",
    );
    assert_refused(
        &s(&["bound", "--run", &both]),
        "'sampling_rate' and 'batch_size'",
        &never,
    );
    // --run with a run flag
    let path = write_in(&dir, "run.json", &file);
    assert_refused(
        &s(&["check", "--run", &path, "--steps", "3"]),
        "'--run' and '--steps' exclude each other",
        &never,
    );
    // a sampler a command cannot account
    assert_refused(
        &s(&[
            "bound",
            "--noise-multiplier",
            "1",
            "--batch-size",
            "10",
            "--dataset-size",
            "100",
            "--steps",
            "5",
            "--sampling",
            "shuffled",
        ]),
        "shuffled batches have no accountant",
        &never,
    );
    // out-of-range values name the flag
    assert_refused(
        &s(&[
            "check",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "1/0",
            "--steps",
            "5",
        ]),
        "--sampling-rate",
        &never,
    );
    assert_refused(
        &s(&[
            "check",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "0.1",
            "--steps",
            "5",
            "--claimed-epsilon",
            "-1",
            "--delta",
            "1e-5",
        ]),
        "--claimed-epsilon = -1 is out of range",
        &never,
    );
    assert_refused(
        &s(&[
            "check",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "0.1",
            "--steps",
            "5",
            "--library",
            "opacus",
        ]),
        "--library = 'opacus' is not one of",
        &never,
    );
    // output of `run` never goes to a file it names: there is no output flag; a missing run
    // file is refused
    assert_refused(
        &s(&["run", "--run", &never.to_string_lossy()]),
        "--run",
        &never,
    );
}

#[test]
fn calibrate_takes_the_batch_the_epochs_and_the_run_file() {
    // issue 40: `calibrate` refused --batch-size; now every spelling gives the same σ
    let dir = temp_dir("check", "calibrate");
    let target = [
        "calibrate",
        "--target-epsilon",
        "3",
        "--delta",
        "1e-5",
        "--json",
    ];
    let (_, file, _) = run(&[&["run"][..], &OPACUS_RUN, &["--json"]].concat());
    let path = write_in(&dir, "run.json", &file);
    let by_batch = run(&[&target[..], &OPACUS_RUN[2..]].concat());
    let by_file = run(&[&target[..], &["--run", &path]].concat());
    let by_rate = run(&[
        &target[..],
        &["--sampling-rate", "1/235", "--steps", "7050"],
    ]
    .concat());
    assert_eq!(by_batch.0, 0, "{}", by_batch.2);
    assert_eq!(by_batch, by_file);
    assert_eq!(by_batch, by_rate);
    let never = dir.join("never");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_refused(
        &s(&[&target[..], &OPACUS_RUN[..]].concat()),
        "'--noise-multiplier' does not apply to 'calibrate'",
        &never,
    );
    assert_refused(
        &s(&[&target[..], &OPACUS_RUN[2..], &["--microbatches", "8"]].concat()),
        "'--microbatches' does not apply to 'calibrate'",
        &never,
    );
}

/// Issue 43: the run's text rounds the mechanism's q and σ as `bound` and the pages do (6
/// significant digits; the run file keeps the exact values): it printed
/// q = 0.00425531914893617.
#[test]
fn run_text_rounds_the_mechanism_as_bound_does() {
    let mut args = vec!["run"];
    args.extend(OPACUS_RUN);
    let (code, out, err) = crate::common::run_cli(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("mechanism: q = 0.00425532,") && !out.contains("0.00425531914893617"),
        "{out}"
    );
    args.push("--json");
    let (_, json, _) = crate::common::run_cli(&args);
    assert!(json.contains("0.00425531914893617"), "{json}");
}
