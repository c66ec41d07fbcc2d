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

/// Run the built `reconbound` binary: (exit status, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_reconbound"))
        .args(args)
        .output()
        .expect("run reconbound");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The raw text of `"key": <value>` in a one-line JSON object (flat objects, as the command
/// line prints them; a string value keeps its quotes).
pub fn json_raw<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\": ");
    let start = json
        .find(&pat)
        .unwrap_or_else(|| panic!("key {key} missing in {json}"))
        + pat.len();
    let rest = &json[start..];
    let end = if let Some(inner) = rest.strip_prefix('"') {
        inner.find('"').unwrap() + 2
    } else {
        rest.find([',', '}']).unwrap()
    };
    rest[..end].trim()
}

/// The number at `"key"` in a one-line JSON object.
pub fn json_num(json: &str, key: &str) -> f64 {
    json_raw(json, key)
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e} in {json}"))
}
