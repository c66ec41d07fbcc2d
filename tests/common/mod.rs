//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Path of a reference-vector file: the vendored copy in `tests/vectors/` (identical to
/// `../shared/vectors/`, checked by `reference_vectors::vendored_vectors_match_shared`).
pub fn vector_path(name: &str) -> PathBuf {
    repo_root().join("tests").join("vectors").join(name)
}

/// Says that a test skipped its check (`../shared` absent, say) where the user sees it: on
/// the process's stderr directly, which the test harness does not capture (`eprintln!` in a
/// passing test is never shown, so the test would read as an unqualified "ok").
pub fn skipped(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

/// Path of a file in `../shared/vectors/`, if that folder exists beside the repository.
pub fn shared_vector_path(name: &str) -> Option<PathBuf> {
    let p = repo_root()
        .join("..")
        .join("shared")
        .join("vectors")
        .join(name);
    p.exists().then_some(p)
}

/// Rows of a reference-vector CSV (header skipped), every field parsed as f64.
pub fn read_csv(name: &str) -> Vec<Vec<f64>> {
    let path = vector_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .map(|f| {
                    f.trim()
                        .parse::<f64>()
                        .unwrap_or_else(|e| panic!("{name}: {f}: {e}"))
                })
                .collect()
        })
        .collect()
}

/// Relative error |a − b| / |b| (absolute when b = 0).
pub fn rel_err(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        (a - b).abs()
    } else {
        ((a - b) / b).abs()
    }
}

/// The repository's root: the nearest folder above this crate's manifest that holds
/// `Cargo.lock` (the workspace's root, where `data/` and `tests/vectors/` are).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(&manifest)
        .to_path_buf()
}
