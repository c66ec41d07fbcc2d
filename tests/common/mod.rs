//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Path of a reference-vector file: the vendored copy in `tests/vectors/` (identical to
/// `../shared/vectors/`, checked by `reference_vectors::vendored_vectors_match_shared`).
pub fn vector_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("vectors")
        .join(name)
}

/// Path of a file in `../shared/vectors/`, if that folder exists beside the repository.
pub fn shared_vector_path(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
