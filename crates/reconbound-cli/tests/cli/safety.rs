//! Nothing lost (issue 20): a failing stdout or output file is an error, never exit 0 nor a
//! panic; outputs replace regular files only (links are followed, devices and FIFOs written
//! through); two outputs on one path, or an output over an input, are refused before any
//! work; reads are bounded; a PLD request without a certified value is exit 1.

use crate::common::{run_cli as run, run_cli_strings, temp_dir};
use std::path::Path;
use std::process::{Command, Stdio};

/// The fastest `attack prior-aware` run (|D⁻| = 49, T = 10, 2 trials: ~0.1 s).
const FAST_ATTACK: [&str; 9] = [
    "attack",
    "prior-aware",
    "--trials",
    "2",
    "--train-size",
    "49",
    "--steps",
    "10",
    "--quiet",
];

fn fast_attack(extra: &[&str]) -> Vec<String> {
    FAST_ATTACK
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

fn run_s(args: &[String]) -> (i32, String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

#[cfg(unix)]
fn is_char_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// Runs `args` with stdout on /dev/full: (exit status, stderr).
fn run_into_dev_full(args: &[&str]) -> (i32, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_reconbound"))
        .args(args)
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("run reconbound");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(unix)]
#[test]
fn a_full_stdout_is_one_line_and_exit_1_never_a_panic() {
    let shard = fast_attack(&["--shard", "0/2"]);
    let shard: Vec<&str> = shard.iter().map(String::as_str).collect();
    let cases: [&[&str]; 4] = [
        &["bound"],
        &["epsilon", "--phase", "0.01,1,100", "--delta", "1e-5"],
        &[
            "rdp",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "0.01",
            "--orders",
            "2",
            "--json",
        ],
        &shard,
    ];
    for args in cases {
        let (code, err) = run_into_dev_full(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("cannot write standard output"),
            "{args:?}: {err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn an_output_on_dev_full_fails_and_dev_full_stays_a_device() {
    assert!(is_char_device(Path::new("/dev/full")));
    let (code, out, err) = run_s(&fast_attack(&["--csv", "/dev/full"]));
    assert_eq!(code, 1, "a failed write is not success: {err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--csv") && err.contains("/dev/full"), "{err}");
    assert!(
        is_char_device(Path::new("/dev/full")),
        "/dev/full was replaced by a file"
    );
    // The issue's own case: a (small) report to /dev/full, and the GLM attack's two files.
    let small_report = [
        "report",
        "--train-size",
        "49",
        "--steps",
        "10",
        "--trials",
        "4",
        "--audit-trials",
        "4",
        "--fil-coords",
        "2",
        "--quiet",
        "--out",
        "/dev/full",
    ];
    let glm = [
        "attack",
        "glm",
        "--trials",
        "1",
        "--quiet",
        "--out",
        "/dev/full",
    ];
    for args in [&small_report[..], &glm[..]] {
        let (code, _, err) = run(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("/dev/full"), "{err}");
        assert!(is_char_device(Path::new("/dev/full")));
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_keeps_the_link_and_updates_its_target() {
    let dir = temp_dir("safety", "symlink");
    let real = dir.join("real.csv");
    let link = dir.join("link.csv");
    std::fs::write(&real, "stale\n").unwrap();
    std::os::unix::fs::symlink("real.csv", &link).unwrap();
    let (code, _, err) = run_s(&fast_attack(&["--csv", link.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("epsilon,"), "target not updated: {text}");
    // Nothing else left beside them (no temporary file).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // The same for an --out (the GLM attack's CSV).
    std::fs::write(&real, "stale\n").unwrap();
    let glm = ["attack", "glm", "--trials", "1", "--quiet", "--out"];
    let (code, _, err) = run(&[&glm[..], &[link.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("index,"), "target not updated: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn an_output_on_a_fifo_is_written_through_not_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = temp_dir("safety", "fifo");
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        crate::common::skipped("an_output_on_a_fifo_is_written_through_not_replaced: no mkfifo");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (code, _, err) = run_s(&fast_attack(&["--csv", fifo.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    // Checked before joining: a FIFO replaced by a file leaves the reader waiting forever.
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        meta.file_type().is_fifo(),
        "the FIFO was replaced by a file"
    );
    let text = reader.join().unwrap();
    assert!(text.starts_with("epsilon,"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn two_outputs_on_one_path_or_an_output_over_an_input_are_refused_naming_both_flags() {
    let dir = temp_dir("safety", "collide");
    let x = dir.join("x.csv");
    let x_s = x.to_str().unwrap().to_string();
    let dotted = format!("{}/./x.csv", dir.display());
    let link = dir.join("link.csv");
    std::os::unix::fs::symlink("x.csv", &link).unwrap();
    let link_s = link.to_str().unwrap().to_string();
    let shard = dir.join("s0.jsonl");
    std::fs::write(&shard, "not read\n").unwrap();
    let shard_s = shard.to_str().unwrap().to_string();
    let glm = |extra: &[&str]| -> Vec<String> {
        ["attack", "glm", "--trials", "1"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (
            fast_attack(&["--csv", &x_s, "--plot", &dotted]),
            "--csv",
            "--plot",
        ),
        (
            fast_attack(&["--csv", &x_s, "--plot", &link_s]),
            "--csv",
            "--plot",
        ),
        (glm(&["--out", &x_s, "--plot", &link_s]), "--out", "--plot"),
        (
            ["merge", &shard_s, "--csv", &shard_s]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "shard file",
            "--csv",
        ),
        (
            ["merge", &shard_s, "--out", &shard_s]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "shard file",
            "--out",
        ),
    ];
    for (args, a, b) in cases {
        let (code, out, err) = run_s(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert!(err.contains(a) && err.contains(b), "{args:?}: {err}");
        assert!(!x.exists(), "{args:?} wrote the output");
        assert_eq!(std::fs::read_to_string(&shard).unwrap(), "not read\n");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_out_dash_is_refused_and_writes_no_file_named_dash() {
    let dir = temp_dir("safety", "dash");
    let out = Command::new(env!("CARGO_BIN_EXE_reconbound"))
        .args(["report", "--out", "-"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("'-'"), "{err}");
    assert!(!dir.join("-").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn reading_dev_zero_as_a_schedule_stops_at_the_cap() {
    let (code, _, err) = run(&["bound", "--schedule", "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--schedule") && err.contains("/dev/zero") && err.contains("4 MiB"),
        "the message names the flag, the path and the cap: {err}"
    );
}

#[test]
fn pld_epsilon_of_a_huge_noise_is_certified_zero() {
    // δ(0) = TV ≤ √T/(σ√(2π)) ≈ 1.3e-300 ≤ δ: ε = 0 exactly, upper and lower.
    for q in ["1", "0.5"] {
        let (code, out, err) = run(&[
            "epsilon",
            "--noise-multiplier",
            "1e300",
            "--sampling-rate",
            q,
            "--steps",
            "10",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json",
        ]);
        assert_eq!(code, 0, "q = {q}: {err}");
        assert!(
            out.contains("\"epsilon_pld\": 0.0") && out.contains("\"epsilon_pld_lower\": 0.0"),
            "q = {q}: {out}"
        );
    }
}

#[test]
fn pld_epsilon_without_a_certified_value_is_exit_1_not_a_dash() {
    // Subsampled (q < 1): the PLD's grid cannot hold these, and no closed form applies.
    for (sigma, q, steps, delta) in [("1", "0.01", "100", "1e-300"), ("0.05", "0.5", "3", "1e-5")] {
        let (code, out, err) = run(&[
            "epsilon",
            "--noise-multiplier",
            sigma,
            "--sampling-rate",
            q,
            "--steps",
            steps,
            "--delta",
            delta,
            "--accountant",
            "pld",
        ]);
        assert_eq!(code, 1, "σ = {sigma}, q = {q}, δ = {delta}: {out}{err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            !err.contains("+infinity mass"),
            "a Gaussian has none: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn full_batch_pld_epsilon_beyond_the_grid_is_a_certified_gaussian_tail_bound() {
    use reconbound::accounting::gaussian::full_batch_epsilon;
    // σ = 0.05, T = 3 (μ = 34.6) and δ = 1e-300 with σ = 1: the PLD's grid cannot hold them,
    // the tail bound μz + μ²/2 (z = √(2 ln(1/(2δ)))) can. It must lie above the analytic ε
    // (Balle & Wang; to its 1e-14 bisection, hence the 1e-9 relative slack) and within 3 % of
    // it (the Chernoff bound of the Gaussian tail loses 1.9 % and 0.5 % here: 761.14 against
    // 746.80 and 65.847 against 65.522, computed independently in Python).
    for (sigma, delta) in [("0.05", "1e-5"), ("1", "1e-300")] {
        let (code, out, err) = run(&[
            "epsilon",
            "--noise-multiplier",
            sigma,
            "--sampling-rate",
            "1",
            "--steps",
            "3",
            "--delta",
            delta,
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let value = crate::common::json_num(&out, "epsilon_pld");
        assert_eq!(crate::common::json_num(&out, "epsilon_pld_lower"), 0.0);
        let exact = full_batch_epsilon(sigma.parse().unwrap(), 3, delta.parse().unwrap()).unwrap();
        assert!(
            value >= exact * (1.0 - 1e-9),
            "σ = {sigma}: {value} < {exact}"
        );
        assert!(value <= 1.03 * exact, "σ = {sigma}: {value} ≫ {exact}");
    }
}

/// Each message names the flag the user gave (issue 20, item 8); `(args, exit status, every
/// text the one-line message must contain)`.
#[test]
fn messages_name_the_flag_the_user_gave() {
    let cases: &[(&[&str], i32, &[&str])] = &[
        (
            &["audit", "--estimator", "one-run", "--canaries", "1"],
            2,
            &["--canaries = 1"],
        ),
        (
            &[
                "attack",
                "gradient-matching",
                "--train-size",
                "1999",
                "--trials",
                "1",
            ],
            2,
            &["--train-size = 1999", "--others"],
        ),
        (
            &[
                "attack",
                "prior-aware",
                "--steps",
                "5000001",
                "--prior-size",
                "2",
            ],
            2,
            &["--steps", "2 × 5000001"],
        ),
        (
            &[
                "epsilon",
                "--sampling",
                "fixed",
                "--batch-size",
                "10",
                "--dataset-size",
                "0",
                "--noise-multiplier",
                "1",
                "--steps",
                "10",
                "--delta",
                "1e-5",
            ],
            2,
            &["--dataset-size = 0"],
        ),
        (&["attack", "glm", "--digits", "0,10"], 2, &["labels 0..=9"]),
        (
            &[
                "calibrate",
                "--target-gamma",
                "0.99",
                "--prior-size",
                "10",
                "--phase",
                "0.01,1,100",
                "--phase",
                "0.02,1,100",
            ],
            2,
            &["--target-gamma", "= 0.9563112"],
        ),
        (
            &[
                "calibrate",
                "--target-gamma",
                "0.05",
                "--prior-size",
                "10",
                "--phase",
                "0.01,1,100",
                "--phase",
                "0.02,1,100",
            ],
            2,
            &["--target-gamma", "κ = 0.1"],
        ),
        (
            &[
                "epsilon",
                "--noise-multiplier",
                "1",
                "--sampling-rate",
                "0.01",
                "--steps",
                "1e20",
                "--delta",
                "1e-5",
            ],
            2,
            &["--steps", "too large"],
        ),
        // one exit-code rule: a target no σ ≤ 1e8 reaches, σ beyond 1e8 — input out of range
        (
            &[
                "calibrate",
                "--target-epsilon",
                "1e-9",
                "--sampling-rate",
                "0.01",
                "--steps",
                "100",
                "--delta",
                "1e-5",
            ],
            2,
            &["--target-epsilon"],
        ),
        (
            &[
                "attack",
                "prior-aware",
                "--epsilon",
                "1e-9",
                "--trials",
                "2",
                "--train-size",
                "49",
                "--steps",
                "10",
            ],
            2,
            &["--epsilon"],
        ),
        (
            &[
                "audit",
                "--noise-multiplier",
                "1e300",
                "--trials",
                "2",
                "--train-size",
                "49",
                "--steps",
                "10",
                "--quiet",
            ],
            2,
            &["--noise-multiplier = 1e300"],
        ),
        (
            &[
                "attack",
                "prior-aware",
                "--noise-multiplier",
                "1e300",
                "--trials",
                "2",
                "--train-size",
                "49",
                "--steps",
                "10",
                "--quiet",
            ],
            2,
            &["--noise-multiplier = 1e300"],
        ),
        (
            &[
                "attack",
                "prior-aware",
                "--epsilon",
                "8,8",
                "--trials",
                "2",
                "--train-size",
                "49",
                "--steps",
                "10",
                "--quiet",
            ],
            2,
            &["--epsilon", "twice"],
        ),
    ];
    for (args, code, needles) in cases {
        let (c, out, err) = run(args);
        assert_eq!(c, *code, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: {n:?} missing in {err}");
        }
    }
}

#[test]
fn shard_specs_have_one_spelling() {
    for spec in [
        "+1/3",
        "01/03",
        "1 /3",
        "1/ 3",
        "0/18446744073709551615",
        "0/0",
    ] {
        let (code, _, err) = run_s(&fast_attack(&["--shard", spec]));
        assert_eq!(code, 2, "--shard {spec}: {err}");
        assert!(err.contains("--shard"), "{err}");
    }
    let (code, _, err) = run_s(&fast_attack(&["--shard", "1/3"]));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_schedule_header_in_another_column_order_is_named_not_read_as_data() {
    let dir = temp_dir("safety", "header");
    let path = dir.join("s.csv");
    std::fs::write(&path, "steps,sampling_rate,noise_multiplier\n100,0.01,1\n").unwrap();
    let (code, _, err) = run(&[
        "epsilon",
        "--schedule",
        path.to_str().unwrap(),
        "--delta",
        "1e-5",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--schedule") && err.contains("another order"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_merged_report_takes_the_sum_of_its_shards_wall_times() {
    let dir = temp_dir("safety", "report-seconds");
    let small = [
        "report",
        "--train-size",
        "49",
        "--steps",
        "10",
        "--trials",
        "12",
        "--audit-trials",
        "10",
        "--fil-coords",
        "4",
        "--seed",
        "3",
        "--quiet",
    ];
    let mut files = Vec::new();
    // Shard times set to 1000 s and 2000 s: the merged report's time is at least 3000 s
    // (plus the merge's own, well under 1000 s), whatever this machine's speed.
    for (k, secs) in [(0, "1000"), (1, "2000")] {
        let mut args = small.to_vec();
        let spec = format!("{k}/2");
        args.extend(["--shard", &spec]);
        let (code, text, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let (head, rest) = text.split_once('\n').unwrap();
        let at = head
            .find("\"seconds\": ")
            .expect("the shard records its time")
            + 11;
        let end = at + head[at..].find(['}', ',']).unwrap();
        let head = format!("{}{secs}{}", &head[..at], &head[end..]);
        let p = dir.join(format!("s{k}.jsonl"));
        std::fs::write(&p, format!("{head}\n{rest}")).unwrap();
        files.push(p.to_str().unwrap().to_string());
    }
    let out = dir.join("m.html");
    let (code, json, err) = run(&[
        "merge",
        &files[0],
        &files[1],
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let seconds = crate::common::json_num(&json, "seconds");
    assert!((3000.0..4000.0).contains(&seconds), "{seconds}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rero_monte_carlo_takes_a_one_phase_schedule() {
    let (code, out, err) = run(&[
        "rero",
        "--phase",
        "0.5,2,3",
        "--prior-size",
        "10",
        "--method",
        "monte-carlo",
        "--samples",
        "1000",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"gamma_upper\""), "{out}");
    // two phases stay exact-only
    let (code, _, err) = run(&[
        "rero",
        "--phase",
        "0.5,2,3",
        "--phase",
        "0.2,2,3",
        "--prior-size",
        "10",
        "--method",
        "monte-carlo",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--method"), "{err}");
}

#[test]
fn bound_help_gives_the_pld_limit_that_is_true() {
    // δ = 1e-20 certifies, so the help must not say the PLD fails for δ ≲ 1e-9.
    let (code, out, _) = run(&["bound", "--delta", "1e-20", "--json"]);
    assert_eq!(code, 0);
    assert!(!out.contains("\"epsilon_pld\": null"), "{out}");
    let (_, help, _) = run(&["bound", "--help-all"]);
    assert!(!help.contains("1e-9"), "{help}");
    assert!(help.contains("1e-300"), "{help}");
}

#[test]
fn readme_synopsis_lists_gradient_matching_and_the_one_run_audit() {
    // the README and the guides under docs/ (issue 43: the synopsis is in docs/reference.md,
    // the set-up details in docs/builds.md)
    let readme = crate::docs::readme_and_guides();
    for needle in [
        "reconbound attack gradient-matching [",
        "reconbound audit     --estimator one-run [--canaries M] [--guesses R]",
        "is\n**optional**",
    ] {
        assert!(readme.contains(needle), "README and docs/ lack {needle:?}");
    }
}

/// Issue 31: every file of a data directory is an input. An output flag that names one of
/// them (here a copy of the vendored digits) is refused before any work, naming both flags,
/// and the file keeps its bytes — for every command that takes `--data` and writes files.
/// Before the fix only the directory itself was compared, and these runs exited 0 having
/// replaced the IDX file.
#[test]
fn an_output_naming_a_file_of_the_data_directory_is_refused_and_the_file_kept() {
    let dir = crate::common::temp_dir("safety", "data-dir-outputs");
    let data = dir.join("mn");
    std::fs::create_dir(&data).unwrap();
    let src = crate::common::repo_root().join("data").join("mnist-10k");
    for name in ["images-idx3-ubyte", "labels-idx1-ubyte"] {
        std::fs::copy(src.join(name), data.join(name)).unwrap();
    }
    let d = data.to_string_lossy().into_owned();
    let images = data.join("images-idx3-ubyte");
    let labels = data.join("labels-idx1-ubyte");
    let before = (
        std::fs::read(&images).unwrap(),
        std::fs::read(&labels).unwrap(),
    );
    let (im, la) = (
        images.to_string_lossy().into_owned(),
        labels.to_string_lossy().into_owned(),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["attack", "reconn", "--csv", &im, "--quiet"], "--csv"),
        (vec!["attack", "reconn", "--plot", &la, "--quiet"], "--plot"),
        (
            vec!["attack", "prior-aware", "--csv", &la, "--quiet"],
            "--csv",
        ),
        (vec!["attack", "glm", "--out", &im], "--out"),
        (vec!["fil-logreg", "--out", &im], "--out"),
        (
            vec!["train", "--fil", "--fil-out", &la, "--quiet"],
            "--fil-out",
        ),
        (vec!["report", "--out", &im, "--quiet"], "--out"),
    ];
    for (mut args, flag) in cases {
        args.extend(["--data", d.as_str()]);
        let (code, out, err) = crate::common::run_cli(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains(flag) && err.contains("--data") && err.contains("must not overwrite"),
            "{args:?}: {err}"
        );
        assert_eq!(
            (
                std::fs::read(&images).unwrap(),
                std::fs::read(&labels).unwrap()
            ),
            before,
            "{args:?} changed the data"
        );
    }
    // a new file in the data directory is no input: allowed (the run writes it)
    let fresh = data.join("new.json");
    let (code, _, err) = crate::common::run_cli(&[
        "fil-logreg",
        "--data",
        &d,
        "--out",
        &fresh.to_string_lossy(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(fresh.is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 31: Ctrl-C while a shadow set is streamed to `--save-shadows` leaves nothing: the
/// temporary file beside the output is removed and the run exits 130 (before the handler,
/// `FILE.reconbound-PID.tmp` stayed behind). The interrupt is sent once the temporary file
/// exists (polled, 60 s at most), so the test always interrupts a write in progress.
#[cfg(unix)]
#[test]
fn ctrl_c_while_a_shadow_set_is_written_leaves_no_file() {
    let dir = crate::common::temp_dir("safety", "ctrl-c");
    let set = dir.join("set.bin");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_reconbound"))
        .args([
            "attack",
            "reconn",
            "--shadow-models",
            "3000",
            "--train-size",
            "100",
            "--steps",
            "2",
            "--hidden",
            "1000",
            "--epochs",
            "1",
            "--released",
            "10",
            "--quiet",
            "--save-shadows",
        ])
        .arg(&set)
        .current_dir(crate::common::repo_root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run reconbound");
    let tmp_exists = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    };
    let start = std::time::Instant::now();
    while !tmp_exists() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(tmp_exists(), "no temporary file appeared within 60 s");
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 31: a data directory whose labels file is missing named no file; a FIFO there
/// blocked the read, and a link to /dev/zero was read as a header of zeros. Each is now
/// refused before any read, naming the file (exit 2).
#[test]
fn a_data_directory_with_a_missing_fifo_or_device_file_is_named_and_nothing_blocks() {
    let dir = temp_dir("safety", "idx-files");
    let images = crate::common::repo_root().join("data/mnist-2000/images-idx3-ubyte");
    if !images.exists() {
        crate::common::skipped("data/mnist-2000 is not in this checkout");
        return;
    }
    std::fs::copy(&images, dir.join("images-idx3-ubyte")).unwrap();
    let labels = dir.join("labels-idx1-ubyte");
    let d = dir.to_string_lossy().into_owned();
    let args: Vec<String> = ["train", "--data", d.as_str(), "--steps", "1", "--quiet"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // missing
    let (code, _, err) = run_cli_strings(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("labels-idx1-ubyte' cannot be read"), "{err}");
    // a link to a character device
    std::os::unix::fs::symlink("/dev/zero", &labels).unwrap();
    let (code, _, err) = run_cli_strings(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("labels-idx1-ubyte' is not a regular file"),
        "{err}"
    );
    std::fs::remove_file(&labels).unwrap();
    // a FIFO (nothing writes to it: a read would block forever)
    if Command::new("mkfifo")
        .arg(&labels)
        .status()
        .is_ok_and(|s| s.success())
    {
        let (code, _, err) = run_cli_strings(&args);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("labels-idx1-ubyte' is not a regular file"),
            "{err}"
        );
    }
}
