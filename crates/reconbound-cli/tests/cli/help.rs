//! Issue 43: help in two lengths. `--help` fits a screen — at most 40 lines: the usage, what
//! the command answers, its common flags, one example, and a last line naming `--help-all` —
//! and `--help-all` prints the full text: every flag, the formulas, the JSON keys.

use crate::common::{repo_root, run_cli as run, temp_dir};

/// Every command and attack with a help of its own: the words before `--help`, the name its
/// last line gives, and a key its full text's JSON-keys section names (None: no JSON).
const HELPS: &[(&[&str], &str, Option<&str>)] = &[
    (&[], "<command>", None),
    (&["run"], "run", None),
    (&["check"], "check", Some("epsilon_upper_by")),
    (&["bound"], "bound", Some("fano_sensitivity_sq")),
    (&["rdp"], "rdp", Some("rdp (same order as orders)")),
    (&["epsilon"], "epsilon", Some("epsilon_pld_lower")),
    (
        &["epsilon", "--sampling", "fixed"],
        "epsilon --sampling fixed",
        Some("noise_multiplier_replace_one"),
    ),
    (&["rero"], "rero", Some("gamma_upper")),
    (&["tradeoff"], "tradeoff", Some("bayes_accuracy_lower")),
    (&["fano"], "fano", Some("mutual_information_std_error")),
    (&["calibrate"], "calibrate", Some("target_advantage")),
    (&["train"], "train", Some("fil_mse_bound_median")),
    (&["fil-logreg"], "fil-logreg", Some("perfect_privacy_count")),
    (&["attack"], "attack <attack>", None),
    (
        &["attack", "glm"],
        "attack glm",
        Some("max_abs_error_closest"),
    ),
    (
        &["attack", "gradient-matching"],
        "attack gradient-matching",
        Some("loss_median"),
    ),
    (
        &["attack", "prior-aware"],
        "attack prior-aware",
        Some("gamma_balle_order"),
    ),
    (
        &["attack", "reconn"],
        "attack reconn",
        Some("lr_times_sharpness"),
    ),
    (&["audit"], "audit", Some("claim_refuted_fdp")),
    (&["estimate"], "estimate", Some("epsilon_fdp_noise_scale")),
    (&["merge"], "merge", None),
    (&["report"], "report", Some("audit_tpr_lower")),
    (
        &["report", "--run", "x.json"],
        "report --run FILE",
        Some("rero_curve"),
    ),
];

/// `words` then `flag`, run: (exit status, stdout, stderr).
fn help(words: &[&str], flag: &str) -> (i32, String, String) {
    let mut args = words.to_vec();
    args.push(flag);
    run(&args)
}

#[test]
fn short_help_fits_a_screen_and_ends_naming_help_all() {
    for &(words, name, _) in HELPS {
        let (code, out, err) = help(words, "--help");
        assert_eq!(code, 0, "{words:?} --help: {err}");
        assert!(err.is_empty(), "{words:?} --help: {err}");
        let lines = out.lines().count();
        assert!(lines <= 40, "{words:?} --help has {lines} lines:\n{out}");
        assert!(out.contains("--help-all"), "{words:?} --help");
        assert_eq!(
            out.lines().last(),
            Some(
                format!("reconbound {name} --help-all: every flag, the formulas, the JSON keys")
                    .as_str()
            ),
            "{words:?} --help"
        );
        assert_eq!(
            out.lines().filter(|l| l.starts_with("Example")).count(),
            1,
            "{words:?} --help has one example:\n{out}"
        );
        assert_eq!(help(words, "-h").1, out, "{words:?} -h is --help");
        if !words.is_empty() {
            assert!(out.starts_with("usage: reconbound"), "{words:?}: {out}");
        }
    }
}

#[test]
fn help_all_prints_the_full_text_with_its_json_keys() {
    for &(words, _, key) in HELPS {
        let (code, full, err) = help(words, "--help-all");
        assert_eq!(code, 0, "{words:?} --help-all: {err}");
        assert!(err.is_empty(), "{words:?} --help-all: {err}");
        let (_, short, _) = help(words, "--help");
        // the full text is today's, not the short one with more: no line naming itself
        assert!(!full.contains(" --help-all: "), "{words:?}: {full}");
        if let Some(key) = key {
            let section = full
                .split("\n\n")
                .find(|p| p.contains("JSON keys"))
                .unwrap_or_else(|| panic!("{words:?} --help-all has no JSON keys:\n{full}"));
            assert!(section.contains(key), "{words:?}: {key} not in\n{section}");
        }
        if full.lines().count() > 38 {
            // a full text that does not fit a screen is not the short one
            assert!(full.lines().count() > short.lines().count(), "{words:?}");
        }
        // the short text names no flag the full text does not (but --run, a run file, which
        // every accounting command takes: 'reconbound run --help'); its example may run
        // another command ('merge' merges shards of 'attack prior-aware')
        let before_example = short.split("\nExample").next().unwrap_or_default();
        for flag in before_example
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .filter(|w| !["--help", "--help-all", "--run"].contains(w))
        {
            assert!(
                full.contains(flag),
                "{words:?} --help names {flag}, --help-all not"
            );
        }
    }
}

#[test]
fn help_all_wins_wherever_it_stands_and_before_any_check() {
    let (code, full, _) = run(&["bound", "--help-all"]);
    assert_eq!(code, 0);
    for args in [
        &["bound", "--noise-multiplier", "2", "--help-all"][..],
        &["bound", "--help-all", "--steps", "10"],
        &["bound", "--run", "no-such-run.json", "--help-all"],
        &["bound", "--help", "--help-all"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (0, full.as_str()), "{args:?}: {err}");
    }
    // the run flags resolved by every accounting command are not resolved for help either
    let (code, out, err) = run(&["tradeoff", "--run", "no-such-run.json", "--help"]);
    assert!(
        code == 0 && out.starts_with("usage: reconbound tradeoff"),
        "{err}"
    );
    let (code, out, _) = run(&["help"]);
    assert_eq!((code, out), (0, run(&["--help"]).1));
}

/// The example block of a short help: the indented lines after its `Example` line.
fn example(help: &str) -> String {
    let lines: Vec<&str> = help.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("Example"))
        .expect("an example");
    let block: Vec<&str> = lines[start + 1..]
        .iter()
        .take_while(|l| l.starts_with("  "))
        .copied()
        .collect();
    assert!(
        block
            .first()
            .is_some_and(|l| l.starts_with("  reconbound ") || l.starts_with("  printf ")),
        "{help}"
    );
    block.join("\n")
}

/// The example of every short help runs as a user pastes it into a shell — in a fresh
/// directory holding only the vendored data (`data/`, RecoNN's default) — and exits 0.
#[cfg(unix)]
#[test]
fn the_example_of_every_short_help_runs() {
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_reconbound"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for &(words, name, _) in HELPS {
        let (_, out, _) = help(words, "--help");
        let script = example(&out);
        let dir = temp_dir("help", &name.replace(['<', '>', ' '], "-"));
        std::os::unix::fs::symlink(repo_root().join("data"), dir.join("data")).unwrap();
        let start = std::time::Instant::now();
        let done = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("set -e\n{script}\n"))
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .expect("run sh");
        eprintln!("{name}: example in {:.2} s", start.elapsed().as_secs_f64());
        assert!(
            done.status.success(),
            "{name}: the example\n{script}\nexits {:?}: {}",
            done.status.code(),
            String::from_utf8_lossy(&done.stderr)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
