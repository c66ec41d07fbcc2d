//! Integration tests: reference_vectors.

#[path = "../common/mod.rs"]
mod common;

mod rdp_vectors;

mod math_vectors;

/// The vendored vectors are the shared ones, byte for byte (when `../shared` is present, as
/// in CI); a clone without `../shared` uses the vendored copy alone.
#[test]
fn vendored_vectors_match_shared() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("csv") {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if let Some(shared) = common::shared_vector_path(&name) {
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&shared).unwrap(),
                "tests/vectors/{name} differs from ../shared/vectors/{name}"
            );
            checked += 1;
        }
    }
    let shared_dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vectors");
    if shared_dir.exists() {
        let n = std::fs::read_dir(&shared_dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .and_then(|e| e.to_str())
                    == Some("csv")
            })
            .count();
        assert_eq!(checked, n, "every shared vector file must be vendored");
    } else {
        common::skipped(
            "vendored_vectors_match_shared: ../shared/vectors not present (the vendored copy is used alone)",
        );
    }
}
