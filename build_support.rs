//! The source fingerprint of a crate's computation, shared by the build scripts of the core
//! (`build.rs`) and of the command line (`crates/reconbound-cli/build.rs`), which include this
//! file with `#[path]` (beside `src/fingerprint.rs`, as `mod fingerprint`): FNV-1a of the
//! files under `src/` (sorted relative paths; each path, its length and its bytes without the
//! lines that are comments: a line whose first non-blank characters are `//`), minus the
//! files named in `skip`, and of `extra` files. A change to documentation comments does not
//! change it; a change to code, to a string or to a dependency's lock entry does.

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

/// `bytes` without its comment lines (first non-blank characters `//`). Other bytes are kept
/// as they are.
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

/// The fingerprint of `root/src/**` (but the relative paths in `skip`) and of `extra`
/// (paths relative to `root`, those that exist), as 16 hex digits; prints the
/// `cargo:rerun-if-changed` lines for them.
pub fn source_hash(root: &Path, skip: &[&str], extra: &[&str]) -> String {
    let mut files = Vec::new();
    files_under(&root.join("src"), &mut files);
    for e in extra {
        let p = root.join(e);
        if p.is_file() {
            files.push(p);
        }
    }
    // Relative paths with '/', sorted bytewise: the same hash on every machine.
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let name: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (name.join("/"), p)
        })
        .filter(|(name, _)| !skip.contains(&name.as_str()))
        .collect();
    named.sort();
    let mut h = crate::fingerprint::FNV_OFFSET;
    for (name, path) in &named {
        let bytes = code_lines(&std::fs::read(path).unwrap_or_default());
        h = crate::fingerprint::fnv1a64(h, name.as_bytes());
        h = crate::fingerprint::fnv1a64(h, &(bytes.len() as u64).to_le_bytes());
        h = crate::fingerprint::fnv1a64(h, &bytes);
    }
    println!("cargo:rerun-if-changed=src");
    for e in extra {
        println!("cargo:rerun-if-changed={e}");
    }
    format!("{h:016x}")
}
