//! Fingerprints the command line's part of the computation (`RECONBOUND_CLI_SOURCE_HASH`):
//! `build_support.rs` of the repository over this crate's `src/` and `Cargo.toml`, without
//! the renderers of pictures and pages (`svg.rs`, `html.rs`), which shape no shard or shadow
//! set. A shard header records it beside the core's fingerprint: the code that turns flags
//! into a run (models, data, seeds, trial groups) is here. No build dependencies.

#[allow(dead_code)]
#[path = "../../src/fingerprint.rs"]
mod fingerprint;

#[path = "../../build_support.rs"]
mod build_support;

fn main() {
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let h = build_support::source_hash(&root, &["src/svg.rs", "src/html.rs"], &["Cargo.toml"]);
    println!("cargo:rustc-env=RECONBOUND_CLI_SOURCE_HASH={h}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../build_support.rs");
    println!("cargo:rerun-if-changed=../../src/fingerprint.rs");
}
