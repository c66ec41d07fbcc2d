//! Fingerprints the core's computation: an FNV-1a hash of every file under the core's `src/`
//! (sorted relative paths, each path, its length and its bytes, without the lines that are
//! comments: a line whose first non-blank characters are `//`) and of `Cargo.toml` and
//! `Cargo.lock`, given to the crate as `RECONBOUND_SOURCE_HASH`
//! ([`reconbound::fingerprint::SOURCE`]). Shard and shadow-set files record it, and the
//! command line refuses files of another computation. Documentation, the command line's
//! renderers (`crates/reconbound-cli`) and the tests do not change it (a git commit is not
//! available in a source tarball; the sources are). No build dependencies.

#[allow(dead_code)]
#[path = "src/fingerprint.rs"]
mod fingerprint;

use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `bytes` without its comment lines (first non-blank characters `//`): a change to the docs
/// is not a change to the computation. Other bytes are kept as they are.
fn code_lines(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let start = line.iter().position(|b| !b" \t".contains(b));
        if !start.is_some_and(|i| line[i..].starts_with(b"//")) {
            out.extend_from_slice(line);
        }
    }
    out
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    files_under(&root.join("src"), &mut files);
    for extra in ["Cargo.toml", "Cargo.lock"] {
        let p = root.join(extra);
        if p.is_file() {
            files.push(p);
        }
    }
    // Relative paths with '/', sorted bytewise: the same hash on every machine.
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap_or(&p);
            let name: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (name.join("/"), p)
        })
        .collect();
    named.sort();
    let mut h = fingerprint::FNV_OFFSET;
    for (name, path) in &named {
        let bytes = code_lines(&std::fs::read(path).unwrap_or_default());
        h = fingerprint::fnv1a64(h, name.as_bytes());
        h = fingerprint::fnv1a64(h, &(bytes.len() as u64).to_le_bytes());
        h = fingerprint::fnv1a64(h, &bytes);
    }
    println!("cargo:rustc-env=RECONBOUND_SOURCE_HASH={h:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}
