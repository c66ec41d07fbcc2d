//! Fuzz `reconbound merge` (shard lines and their reassembly): the input, split at its first
//! NUL byte into two files, is merged as two shard files. Every outcome must be exit 0 or a
//! usage error (exit 2) with one line on stderr, never a panic. Seed the corpus with real
//! shard pairs (`reconbound attack prior-aware … --shard 0/2`, `… 1/2`, joined by a NUL) so
//! that mutations reach the line readers; with the checksum, a mutation that merges with
//! exit 0 must print what the unmutated pair prints (checked by the test suite,
//! `tests/cli/merge_strict.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound_cli as cli;

fuzz_target!(|data: &[u8]| {
    let (a, b) = match data.iter().position(|&c| c == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[..0]),
    };
    let dir = std::env::temp_dir().join(format!("reconbound-fuzz-merge-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let (pa, pb) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    if std::fs::write(&pa, a).is_err() || std::fs::write(&pb, b).is_err() {
        return;
    }
    let args: Vec<String> = ["merge", &pa.to_string_lossy(), &pb.to_string_lossy(), "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = cli::run(&args);
    assert!(out.code == 0 || out.code == 2, "exit {}: {}", out.code, out.stderr);
    if out.code == 2 {
        assert!(out.stdout.is_empty());
        assert_eq!(out.stderr.trim_end().lines().count(), 1, "{}", out.stderr);
    }
});
