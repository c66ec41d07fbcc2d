//! Fingerprints the core's computation ([`reconbound::SOURCE_FINGERPRINT`]): `build_support.rs`
//! over the core's `src/`, `Cargo.toml` and `Cargo.lock`, given to the crate as
//! `RECONBOUND_SOURCE_HASH`. Documentation comments do not change it. The command line adds
//! its own sources' fingerprint (`crates/reconbound-cli/build.rs`); shard files record both,
//! and `merge` refuses shards of another computation (a git commit is not available in a
//! source tarball; the sources are). No build dependencies.

#[allow(dead_code)]
#[path = "src/fingerprint.rs"]
mod fingerprint;

#[path = "build_support.rs"]
mod build_support;

fn main() {
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let h = build_support::source_hash(&root, &[], &["Cargo.toml", "Cargo.lock"]);
    println!("cargo:rustc-env=RECONBOUND_SOURCE_HASH={h}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_support.rs");
}
