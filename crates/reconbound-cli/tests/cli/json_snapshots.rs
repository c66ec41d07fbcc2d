//! Every subcommand's `--json` output, recorded: the command line's stable interface (scripts
//! cross-check other implementations against these keys and numbers). A change to any byte
//! of any of these objects — other than a wall time (`"seconds"`) or a temporary path — fails
//! this test. Set `RECONBOUND_BLESS=1` to record them again, and say why in the commit.
//!
//! The commands run from the repository's root (the vendored data's default path is relative
//! to the working directory) on small, fixed-seed settings: the whole set takes seconds.

use crate::common::{run_cli_in, temp_dir};
use std::path::{Path, PathBuf};

/// The repository's root (the workspace's root: where `data/` and `tests/` are).
fn root() -> PathBuf {
    crate::common::repo_root()
}

/// (name, argv); `{TMP}` in an argument is replaced by the test's temporary directory.
const COMMANDS: &[(&str, &[&str])] = &[
    ("bound", &["bound", "--json"]),
    (
        "tradeoff",
        &["tradeoff", "--json", "--kappa", "0.1", "--points", "5"],
    ),
    (
        "calibrate-advantage",
        &[
            "calibrate",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1000",
            "--target-advantage",
            "0.1",
            "--json",
        ],
    ),
    (
        "bound-fixed",
        &[
            "bound",
            "--batch-size",
            "256",
            "--dataset-size",
            "60000",
            "--epochs",
            "2",
            "--json",
        ],
    ),
    (
        "rdp",
        &[
            "rdp",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.01",
            "--orders",
            "1.5,2,8,32",
            "--steps",
            "100",
            "--json",
        ],
    ),
    (
        "epsilon",
        &[
            "epsilon",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--json",
        ],
    ),
    (
        "epsilon-fixed",
        &[
            "epsilon",
            "--sampling",
            "fixed",
            "--batch-size",
            "100",
            "--dataset-size",
            "10000",
            "--noise-multiplier",
            "1",
            "--steps",
            "100",
            "--delta",
            "1e-5",
            "--json",
        ],
    ),
    (
        "rero",
        &[
            "rero",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "100",
            "--prior-size",
            "10",
            "--json",
        ],
    ),
    (
        "fano",
        &[
            "fano",
            "--prior-size",
            "10",
            "--noise-multiplier",
            "2",
            "--json",
        ],
    ),
    (
        "calibrate-epsilon",
        &[
            "calibrate",
            "--target-epsilon",
            "2",
            "--delta",
            "1e-5",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1000",
            "--json",
        ],
    ),
    (
        "calibrate-gamma",
        &[
            "calibrate",
            "--target-gamma",
            "0.3",
            "--prior-size",
            "10",
            "--sampling-rate",
            "1",
            "--steps",
            "10",
            "--json",
        ],
    ),
    (
        "train",
        &[
            "train",
            "--model",
            "mlp",
            "--train-size",
            "100",
            "--steps",
            "5",
            "--noise-multiplier",
            "1",
            "--fil",
            "--fil-coords",
            "4",
            "--json",
            "--quiet",
        ],
    ),
    (
        "train-logreg",
        &["train", "--model", "logreg", "--json", "--quiet"],
    ),
    ("fil-logreg", &["fil-logreg", "--json"]),
    ("attack-glm", &["attack", "glm", "--json", "--quiet"]),
    (
        "attack-gradient-matching",
        &[
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
            "1",
            "--json",
            "--quiet",
        ],
    ),
    (
        "attack-prior-aware",
        &[
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
            "--json",
            "--quiet",
        ],
    ),
    (
        "attack-reconn",
        &[
            "attack",
            "reconn",
            "--shadow-models",
            "12",
            "--released",
            "3",
            "--train-size",
            "19",
            "--steps",
            "5",
            "--hidden",
            "8",
            "--epochs",
            "2",
            "--seed",
            "3",
            "--json",
            "--quiet",
        ],
    ),
    (
        "audit",
        &[
            "audit",
            "--train-size",
            "50",
            "--steps",
            "3",
            "--trials",
            "20",
            "--seed",
            "3",
            "--json",
            "--quiet",
        ],
    ),
    (
        "audit-one-run",
        &[
            "audit",
            "--estimator",
            "one-run",
            "--train-size",
            "50",
            "--steps",
            "3",
            "--canaries",
            "200",
            "--guesses",
            "40",
            "--seed",
            "3",
            "--json",
            "--quiet",
        ],
    ),
    (
        "estimate-scores",
        &[
            "estimate",
            "--scores",
            "{TMP}/scores.csv",
            "--delta",
            "1e-5",
            "--json",
        ],
    ),
    (
        "estimate-scores-gdp-fixed",
        &[
            "estimate",
            "--scores",
            "{TMP}/scores.csv",
            "--delta",
            "1e-5",
            "--estimator",
            "gdp",
            "--threshold",
            "0.5",
            "--json",
        ],
    ),
    (
        "estimate-guesses",
        &[
            "estimate",
            "--guesses",
            "{TMP}/guesses.csv",
            "--delta",
            "1e-5",
            "--json",
        ],
    ),
    (
        "audit-shard-0",
        &[
            "audit",
            "--train-size",
            "50",
            "--steps",
            "3",
            "--trials",
            "20",
            "--seed",
            "3",
            "--shard",
            "0/2",
            "--quiet",
        ],
    ),
    (
        "audit-shard-1",
        &[
            "audit",
            "--train-size",
            "50",
            "--steps",
            "3",
            "--trials",
            "20",
            "--seed",
            "3",
            "--shard",
            "1/2",
            "--quiet",
        ],
    ),
    (
        "merge-audit",
        &[
            "merge",
            "{TMP}/audit-shard-0.out",
            "{TMP}/audit-shard-1.out",
            "--json",
        ],
    ),
    (
        "report",
        &[
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
            "--out",
            "{TMP}/report.html",
            "--json",
            "--quiet",
        ],
    ),
];

/// Scores of 40 trials per world (a deterministic sequence; 'in' shifted up by 0.8).
fn scores_csv() -> String {
    let mut s = String::from("world,score\n");
    for i in 0..80u32 {
        let world = i % 2;
        let u = f64::from((i * 37 + 11) % 101) / 101.0;
        s.push_str(&format!("{world},{}\n", u + 0.8 * f64::from(world)));
    }
    s
}

/// 60 one-run canaries: the first 30 guessed, 26 of them right.
fn guesses_csv() -> String {
    let mut s = String::from("guess,truth\n");
    for i in 0..60u32 {
        let truth = (i * 7 + 3) % 2;
        let guess = match i {
            0..=25 => 2 * i64::from(truth) - 1,
            26..=29 => 1 - 2 * i64::from(truth),
            _ => 0,
        };
        s.push_str(&format!("{guess},{truth}\n"));
    }
    s
}

/// `text` with the temporary directory's path replaced by `{TMP}` and every `"seconds":
/// <number>` value by 0 (wall times differ between runs).
fn normalised(text: &str, tmp: &Path) -> String {
    let text = text.replace(&*tmp.to_string_lossy(), "{TMP}");
    let key = "\"seconds\": ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
            .unwrap_or(rest.len());
        out.push('0');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn every_subcommands_json_output_is_unchanged() {
    let tmp = temp_dir("json", "snapshots");
    std::fs::write(tmp.join("scores.csv"), scores_csv()).unwrap();
    std::fs::write(tmp.join("guesses.csv"), guesses_csv()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("cli")
        .join("json");
    let bless = std::env::var_os("RECONBOUND_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, argv) in COMMANDS {
        let tmp_s = tmp.to_string_lossy();
        let args: Vec<String> = argv.iter().map(|a| a.replace("{TMP}", &tmp_s)).collect();
        let (code, out, err) = run_cli_in(&root(), &args);
        assert_eq!(code, 0, "{name}: {args:?}: {err}");
        // Shard outputs are inputs of the merge below; they carry the build's fingerprint,
        // so only the merged result is recorded.
        if name.starts_with("audit-shard-") {
            std::fs::write(tmp.join(format!("{name}.out")), &out).unwrap();
            continue;
        }
        let got = normalised(&out, &tmp);
        let path = dir.join(format!("{name}.json"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (RECONBOUND_BLESS=1 records it)", path.display()));
        if got != want {
            differ.push(format!("{name}:\n  want {want}\n  got  {got}"));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        differ.is_empty(),
        "JSON output changed:\n{}",
        differ.join("\n")
    );
}

#[test]
fn normalisation_replaces_only_wall_times_and_the_temporary_path() {
    let tmp = Path::new("/tmp/x");
    assert_eq!(
        normalised(
            "{\"seconds\": 1.5e-3, \"out\": \"/tmp/x/r.html\", \"n\": 2}",
            tmp
        ),
        "{\"seconds\": 0, \"out\": \"{TMP}/r.html\", \"n\": 2}"
    );
}
