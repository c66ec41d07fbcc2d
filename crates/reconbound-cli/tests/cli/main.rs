//! The command line as a user runs it: the built binary, its exit status and its output.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod check;
mod docs;
mod epsilon_fixed;
mod fil_logreg;
mod help;
mod json_snapshots;
mod layers;
mod merge_strict;
mod messages;
mod reference;
mod safety;
mod schedule;
mod shadow_merge;
mod tradeoff;
mod train_fil;

use common::{json_num, run_cli as run};

#[test]
fn bound_default_configuration_prints_every_bound() {
    let (code, out, err) = run(&["bound"]);
    assert_eq!(code, 0, "stderr: {err}");
    for needle in [
        "baseline κ",
        "ε(δ) by RDP, improved conversion",
        "ε(δ) by RDP, Mironov's conversion",
        "ε(δ) by PLD, certified",
        "γ from RDP",
        "γ for DP-SGD",
        "success bound by Fano",
        "MSE ≥",
        "14063",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    // issue 43: Fano's bound is 1 here, which says nothing: "none … no information", never
    // "1.00000 … advantage 1.000" (read as "the attack always wins")
    let fano = out
        .lines()
        .find(|l| l.contains("success bound by Fano"))
        .unwrap();
    assert!(
        fano.contains("none") && fano.contains("no information"),
        "{fano}"
    );
    assert!(
        !fano.contains("1.00000") && !fano.contains("advantage 1.000"),
        "{fano}"
    );
    // with a tiny KL it is a number
    let (_, tight, _) = run(&["bound", "--noise-multiplier", "50", "--steps", "10"]);
    let fano = tight
        .lines()
        .find(|l| l.contains("success bound by Fano"))
        .unwrap();
    assert!(fano.contains("advantage"), "{fano}");
    // a full batch is said so, not "sampling rate q (Poisson) 1.00000"
    let (_, full, _) = run(&["bound", "--sampling-rate", "1", "--steps", "10"]);
    assert!(
        full.contains("full batch") && !full.contains("(Poisson)           1.0"),
        "{full}"
    );
}

/// Issue 43: one headline answer first — the number to quote for reconstruction (the
/// tightest success bound, named) and for ε (the smallest upper bound, named), rounded as the
/// rows below them round it; a vacuous bound is said to say nothing, not printed as 1.
#[test]
fn bound_answers_first_with_the_tightest_numbers_named() {
    let (code, out, err) = run(&["bound"]);
    assert_eq!(code, 0, "{err}");
    let answer: String = out.split("\n\n").nth(1).unwrap_or_default().to_string();
    assert!(answer.starts_with("answer: "), "{out}");
    // the same strings as the rows that hold them
    for (row, name) in [
        ("γ for DP-SGD", "γ for DP-SGD, the tightest bound below"),
        (
            "ε(δ) by PLD, certified",
            "certified PLD, the tightest ε below",
        ),
    ] {
        let value = out
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .and_then(|l| {
                l.split_whitespace()
                    .find(|w| w.starts_with("0.") || w.starts_with("2."))
            })
            .unwrap_or_else(|| panic!("no row {row} in {out}"));
        let flat = answer.replace("\n        ", " ");
        assert!(flat.contains(value), "{value} not in the answer {answer}");
        assert!(flat.contains(name), "{answer}");
    }
    assert!(answer.lines().all(|l| l.chars().count() <= 92), "{answer}");
    let flat = answer.replace("\n        ", " ");
    assert!(
        flat.contains("one of 10 equally likely candidates"),
        "{answer}"
    );
    // nothing informative: said so
    let (_, weak, _) = run(&["bound", "--noise-multiplier", "0.3", "--kappa", "0.3"]);
    let answer = weak
        .split("\n\n")
        .nth(1)
        .unwrap_or_default()
        .replace("\n        ", " ");
    assert!(answer.contains("no bound below is informative"), "{answer}");
    assert!(
        !answer.contains("≤ 1 ") && !answer.contains("≤ 1.0"),
        "{answer}"
    );
}

#[test]
fn bound_json_has_documented_keys_and_consistent_values() {
    let (code, out, err) = run(&["bound", "--json"]);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(out.lines().count(), 1, "one JSON object per command");
    let eps_rdp = json_num(&out, "epsilon_rdp");
    let eps_pld = json_num(&out, "epsilon_pld");
    let eps_m = json_num(&out, "epsilon_rdp_mironov");
    let kappa = json_num(&out, "kappa");
    let gamma = json_num(&out, "gamma");
    let gamma_lower = json_num(&out, "gamma_lower");
    assert_eq!(kappa, 0.1);
    // PLD is tighter than RDP; the improved conversion is tighter than Mironov's.
    assert!(eps_pld <= eps_rdp && eps_rdp <= eps_m, "{out}");
    assert!(
        kappa <= gamma_lower && gamma_lower <= gamma && gamma <= 1.0,
        "{out}"
    );
    assert!(json_num(&out, "gamma_balle") >= gamma - 1e-12, "{out}");
    assert!(json_num(&out, "mse_lower_bound") > 0.0);
    for key in [
        "\"rdp\": [",
        "\"orders\": [",
        "\"best_order\"",
        "\"method\": \"exact\"",
        "\"noise_multiplier\": 1.1",
    ] {
        assert!(out.contains(key), "missing {key} in {out}");
    }
}

#[test]
fn every_subcommand_has_help() {
    for cmd in [
        "bound",
        "rdp",
        "epsilon",
        "rero",
        "fano",
        "calibrate",
        "fil-logreg",
    ] {
        let (code, out, _) = run(&[cmd, "--help-all"]);
        assert_eq!(code, 0, "{cmd} --help-all");
        assert!(out.starts_with("usage: reconbound"), "{cmd}: {out}");
        assert!(out.contains("JSON keys"), "{cmd} documents its JSON keys");
    }
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("calibrate"));
}

/// Issue 31: the top-level help and the README's synopsis named glm, gradient-matching and
/// prior-aware but not reconn. Every command and every attack is in both, and has its own
/// `--help`. (Issue 43: the synopsis moved from the README to docs/reference.md.)
#[test]
fn top_level_help_and_readme_synopsis_list_every_command_and_attack() {
    let (_, help, _) = run(&["--help"]);
    let synopsis = docs::guide("reference.md");
    for cmd in [
        "bound",
        "rdp",
        "epsilon",
        "rero",
        "tradeoff",
        "fano",
        "calibrate",
        "train",
        "fil-logreg",
        "attack",
        "audit",
        "estimate",
        "merge",
        "report",
    ] {
        assert!(help.contains(&format!("\n  {cmd} ")), "--help lacks {cmd}");
        assert!(
            synopsis.contains(&format!("\nreconbound {cmd} ")),
            "the synopsis (docs/reference.md) lacks {cmd}"
        );
        let (code, out, _) = run(&[cmd, "--help"]);
        assert!(
            code == 0 && out.starts_with("usage: reconbound"),
            "{cmd} --help"
        );
    }
    for attack in ["glm", "gradient-matching", "prior-aware", "reconn"] {
        assert!(help.contains(attack), "--help lacks attack {attack}");
        assert!(
            synopsis.contains(&format!("\nreconbound attack {attack} ")),
            "the synopsis (docs/reference.md) lacks attack {attack}"
        );
    }
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_flag() {
    let base = [
        "--sampling-rate",
        "0.01",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ];
    let cases: &[(&[&str], &str)] = &[
        (&["--noise-multiplier", "NaN"], "--noise-multiplier"),
        (&["--noise-multiplier", "inf"], "--noise-multiplier"),
        (&["--noise-multiplier", "-inf"], "--noise-multiplier"),
        (&["--noise-multiplier", "0"], "--noise-multiplier"),
        (&["--noise-multiplier", "-1"], "--noise-multiplier"),
        (&["--noise-multiplier", "abc"], "--noise-multiplier"),
    ];
    for (extra, flag) in cases {
        let mut args = vec!["epsilon"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&base);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    let more: &[(&[&str], &str)] = &[
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0",
                "--steps",
                "1",
                "--delta",
                "1e-5",
            ],
            "--sampling-rate",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "1.5",
                "--steps",
                "1",
                "--delta",
                "1e-5",
            ],
            "--sampling-rate",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--delta",
                "1",
            ],
            "--delta",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--delta",
                "0",
            ],
            "--delta",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "0",
                "--delta",
                "1e-5",
            ],
            "--steps",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "-2",
                "--delta",
                "1e-5",
            ],
            "--steps",
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--delta",
                "1e-5",
            ],
            "--steps",
        ),
        (
            &[
                "rdp",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--orders",
                "2,1",
            ],
            "--orders",
        ),
        (
            &[
                "rdp",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--orders",
                "0.5",
            ],
            "--orders",
        ),
        (
            &[
                "rero",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--kappa",
                "0",
            ],
            "--kappa",
        ),
        (
            &[
                "rero",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--kappa",
                "1.5",
            ],
            "--kappa",
        ),
        (
            &[
                "rero",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--prior-size",
                "1",
            ],
            "--prior-size",
        ),
        (
            &[
                "rero",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--kappa",
                "0.1",
                "--prior-size",
                "10",
            ],
            "--kappa",
        ),
        (
            &[
                "rero",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.1",
                "--steps",
                "1",
                "--kappa",
                "0.1",
                "--method",
                "magic",
            ],
            "--method",
        ),
        (
            &["fano", "--prior-size", "1", "--noise-multiplier", "1"],
            "--prior-size",
        ),
        (
            &["fano", "--prior-size", "10", "--noise-multiplier", "nan"],
            "--noise-multiplier",
        ),
        (&["bound", "--kappa", "NaN"], "--kappa"),
        (&["bound", "--epochs", "0"], "--epochs"),
        (&["bound", "--batch-size", "0"], "--batch-size"),
        (&["bound", "--steps", "10", "--epochs", "1"], "--steps"),
        (&["bound", "--diameter", "-1"], "--diameter"),
        (&["bound", "--frobnicate"], "--frobnicate"),
        (
            &[
                "calibrate",
                "--target-epsilon",
                "-1",
                "--delta",
                "1e-5",
                "--sampling-rate",
                "0.01",
                "--steps",
                "100",
            ],
            "--target-epsilon",
        ),
        (
            &[
                "calibrate",
                "--target-gamma",
                "0.05",
                "--kappa",
                "0.1",
                "--sampling-rate",
                "0.01",
                "--steps",
                "100",
            ],
            "--target-gamma",
        ),
    ];
    for (args, flag) in more {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: expected {flag} in {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    let (code, _, err) = run(&[
        "rero",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "14063",
        "--kappa",
        "0.1",
        "--method",
        "monte-carlo",
    ]);
    assert_eq!(code, 2, "a run of hours is refused up front: {err}");
    assert!(err.contains("--samples"), "{err}");
    let (code, _, err) = run(&["frobnicate"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = run(&[]);
    assert_eq!(code, 2);
}

#[test]
fn json_output_is_identical_across_runs_with_the_same_seed() {
    let args = [
        "rero",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.1",
        "--steps",
        "5",
        "--kappa",
        "0.1",
        "--method",
        "monte-carlo",
        "--samples",
        "20000",
        "--seed",
        "11",
        "--json",
    ];
    let (c1, a, e1) = run(&args);
    let (c2, b, _) = run(&args);
    assert_eq!((c1, c2), (0, 0), "{e1}");
    assert_eq!(a, b);
    assert!(json_num(&a, "gamma_upper") >= json_num(&a, "gamma"));
}

#[test]
fn rdp_epsilon_rero_fano_calibrate_agree_with_the_library() {
    use reconbound::accounting::{fano, rdp, rero};
    let (code, out, err) = run(&[
        "rdp",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.01",
        "--orders",
        "2,8,32.5",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = rdp::subsampled_gaussian_rdp(0.01, 1.0, 32.5).unwrap();
    assert!(out.contains(&format!("{want:?}")), "{out}");

    let (code, out, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1.5",
        "--sampling-rate",
        "0.04",
        "--steps",
        "2250",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let lib = rdp::epsilon(0.04, 1.5, 2250, 1e-5, rdp::Conversion::Improved).unwrap();
    assert_eq!(json_num(&out, "epsilon_rdp"), lib.epsilon);
    assert!(json_num(&out, "epsilon_pld") <= lib.epsilon);

    let (code, out, err) = run(&[
        "rero",
        "--noise-multiplier",
        "2",
        "--sampling-rate",
        "1",
        "--steps",
        "100",
        "--kappa",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let g = rero::dpsgd::gamma_full_batch(0.01, 2.0, 100).unwrap();
    assert_eq!(json_num(&out, "gamma"), g);

    let (code, out, err) = run(&[
        "fano",
        "--prior-size",
        "10",
        "--noise-multiplier",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let b = fano::fano_closed_form(10, 1.0, 2.0).unwrap();
    assert_eq!(json_num(&out, "success_bound"), b.success_bound);
    assert!(
        (json_num(&out, "advantage") - 0.593).abs() < 5e-4,
        "Hayes Table 2: {out}"
    );

    let (code, out, err) = run(&[
        "calibrate",
        "--target-epsilon",
        "3",
        "--delta",
        "1e-5",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let sigma = json_num(&out, "noise_multiplier");
    assert!(
        rdp::epsilon(0.01, sigma, 1000, 1e-5, rdp::Conversion::Improved)
            .unwrap()
            .epsilon
            <= 3.0
    );

    let (code, out, err) = run(&[
        "calibrate",
        "--target-gamma",
        "0.2",
        "--prior-size",
        "10",
        "--sampling-rate",
        "0.01",
        "--steps",
        "100",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let sigma = json_num(&out, "noise_multiplier");
    assert!(rero::dpsgd::gamma(0.1, 0.01, sigma, 100).unwrap().gamma <= 0.2);
}

#[test]
fn an_uncertifiable_pld_keeps_the_other_bounds_and_says_why() {
    // Reviewer's case: RDP gives ε ≈ 3.17; at T = 10⁷ the PLD's truncated mass used to
    // exceed δ (null). Since issue 13 the truncation is chosen from δ: a certified bracket
    // below the RDP bound (RDP is an upper bound on the true ε), width ≤ 1e-3·ε.
    let (code, out, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "5",
        "--sampling-rate",
        "0.001",
        "--steps",
        "10000000",
        "--delta",
        "1e-6",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rdp = json_num(&out, "epsilon_rdp");
    let (value, lower) = (
        json_num(&out, "epsilon_pld"),
        json_num(&out, "epsilon_pld_lower"),
    );
    assert!(rdp > 3.0 && value < rdp, "{out}");
    assert!(lower <= value && value - lower <= 1e-3 * value, "{out}");
    // δ = 1e-300 is below what the PLD can resolve: null with a note, the rest reported
    let (code, out, err) = run(&["bound", "--delta", "1e-300", "--json"]);
    assert!(out.contains("\"epsilon_pld_note\""), "{out}");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"epsilon_pld\": null"), "{out}");
    assert!(json_num(&out, "gamma") >= json_num(&out, "kappa"), "{out}");
}

#[test]
fn mse_bound_uses_substitution_rdp() {
    // Guo Thm 1 needs (2, ε)-RDP between D ∪ {z} and D ∪ {z′}; bound reports the add/remove
    // order-2 RDP beside the substitution bound 1.5·r₄ + r₃ that the MSE bound uses.
    let (code, out, err) = run(&["bound", "--json"]);
    assert_eq!(code, 0, "{err}");
    let (r2, sub) = (
        json_num(&out, "rdp_order2"),
        json_num(&out, "rdp_order2_substitution"),
    );
    assert!(sub > r2, "{out}");
    let mse = json_num(&out, "mse_lower_bound");
    // unbiased, diameter 1: 1/(4(e^ε − 1)), rounded down
    assert!(
        mse <= 1.0 / (4.0 * (sub.exp() - 1.0)) && mse > 0.99 / (4.0 * (sub.exp() - 1.0)),
        "{out}"
    );
}

#[test]
fn calibrate_target_gamma_outside_kappa_and_noiseless_limit_is_refused_at_once() {
    // q = 1e-4, T = 1000, κ = 1e-3: every σ > 0 gives γ ≤ 1 − (1 − q)^T(1 − κ) = 0.0960719…
    // (issue 13: a target above it used to return an arbitrary σ after 6–9 s of search);
    // a target ≤ κ is met by no σ. Both: exit 2, one line naming the flag, in well under a
    // second (1 s allows for a loaded machine).
    let limit = 1.0 - (1.0f64 - 1e-4).powi(1000) * (1.0 - 1e-3);
    for (target, needle) in [
        ("0.2", "0.0960719"),
        ("0.0961", "0.0960719"),
        ("0.001", "κ"),
    ] {
        let t = std::time::Instant::now();
        let (code, _, err) = run(&[
            "calibrate",
            "--target-gamma",
            target,
            "--kappa",
            "0.001",
            "--sampling-rate",
            "0.0001",
            "--steps",
            "1000",
        ]);
        assert_eq!(code, 2, "{target}: {err}");
        assert!(
            err.contains("--target-gamma") && err.contains(needle),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            t.elapsed().as_secs_f64() < 1.0,
            "{target}: {:?}",
            t.elapsed()
        );
    }
    assert!((limit - 0.0960719).abs() < 1e-7, "{limit}");
}

/// Issue 31: `epsilon` and `rero` refused `--batch-size`, `--dataset-size`, `--epochs`, which
/// `bound` takes; they now take them as `bound` does (q = B/N, T = ⌈E/q⌉) and give the
/// numbers of the same (q, T) given directly.
#[test]
fn epsilon_and_rero_take_batch_dataset_and_epochs_as_bound_does() {
    let by_batches = [
        "--noise-multiplier",
        "1.1",
        "--batch-size",
        "256",
        "--dataset-size",
        "60000",
        "--epochs",
        "60",
    ];
    let direct = [
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.004266666666666667",
        "--steps",
        "14063",
    ];
    for (cmd, extra) in [
        (
            "epsilon",
            &["--delta", "1e-5", "--accountant", "rdp", "--json"][..],
        ),
        ("rero", &["--prior-size", "10", "--json"][..]),
    ] {
        let run_with = |flags: &[&str]| {
            let mut a = vec![cmd];
            a.extend_from_slice(flags);
            a.extend_from_slice(extra);
            let (code, out, err) = run(&a);
            assert_eq!(code, 0, "{cmd}: {err}");
            out
        };
        assert_eq!(run_with(&by_batches), run_with(&direct), "{cmd}");
    }
    // the pairings are checked as bound checks them
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1",
        "--batch-size",
        "256",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'--batch-size' and '--dataset-size' go together"),
        "{err}"
    );
}

#[test]
fn data_errors_say_what_the_number_is_and_never_print_nan() {
    // Issue 43: a truncated IDX file read "path = 4238 is out of range", a directory
    // without MNIST files ended in "(NaN)".
    let dir = common::temp_dir("cli", "data-errors");
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let images =
        std::fs::read(common::repo_root().join("data/mnist-10k/images-idx3-ubyte")).unwrap();
    std::fs::write(bad.join("images-idx3-ubyte"), &images[..4238]).unwrap();
    let labels = common::repo_root().join("data/mnist-10k/labels-idx1-ubyte");
    std::fs::copy(labels, bad.join("labels-idx1-ubyte")).unwrap();
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (d, needle) in [
        (&bad, "a data file of 4238 bytes is refused"),
        (&empty, "the directory holds none of images-idx3-ubyte"),
    ] {
        let d = d.to_string_lossy().into_owned();
        let (code, _, err) = run(&["train", "--data", &d, "--steps", "1"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(needle) && !err.contains("NaN"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
