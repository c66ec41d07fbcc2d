//! `reconbound merge PART… --out FILE` for RecoNN shadow sets (issue 18, "Shards"; issue 20,
//! items 1, 4 and 7): parts built with the library's encoder from synthetic models merge into
//! exactly the bytes of the unsharded file, and every damaged, foreign, missing or repeated
//! part, and an existing `--out`, is refused with exit 2 and nothing written.

use super::common::{assert_refused, merge_args, run_cli_strings as run_s, temp_dir};
use reconbound::attacks::reconn::shadow_set::{encode, ShadowModel, ShadowSetSpec};
use reconbound::attacks::trial::Shard;
use std::path::Path;

/// A set of 10 models of 50 parameters (description, data fingerprint as given).
fn spec(data: u64) -> ShadowSetSpec {
    ShadowSetSpec::new("arch=7-5-2;steps=100;lr=0.5;seed=1".into(), data, 10, 50).unwrap()
}

/// Model i: parameters a fixed function of i (any finite values do).
fn model(i: u64) -> ShadowModel {
    ShadowModel {
        index: i,
        target: 1000 + i as u32,
        params: (0..50)
            .map(|j| (i as f64 + 1.0) * 0.01 * j as f64 - 0.2)
            .collect(),
    }
}

fn part(s: &ShadowSetSpec, k: u64, m: u64) -> Vec<u8> {
    let shard = Shard::new(k, m).unwrap();
    let models: Vec<ShadowModel> = shard.trials(s.total).map(model).collect();
    encode(s, shard, &models).unwrap()
}

/// Writes `bytes` to `dir/name`, returns the path.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

/// The three parts of the set written in `dir` (`p0.rbs`, `p1.rbs`, `p2.rbs`).
fn three_parts(dir: &Path) -> Vec<String> {
    let s = spec(7);
    (0..3)
        .map(|k| put(dir, &format!("p{k}.rbs"), &part(&s, k, 3)))
        .collect()
}

fn merge_to(files: &[&String], out: &Path) -> Vec<String> {
    merge_args(files, &["--out", &out.to_string_lossy()])
}

#[test]
fn three_shadow_parts_merge_into_the_bytes_of_the_unsharded_set() {
    let dir = temp_dir("shadow-merge", "three");
    let p = three_parts(&dir);
    let out = dir.join("merged.rbs");
    let (code, stdout, err) = run_s(&merge_to(&[&p[2], &p[0], &p[1]], &out));
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), part(&spec(7), 0, 1));
    assert!(
        stdout.contains("merged 3 shadow-set parts: 10 models"),
        "{stdout}"
    );
    // written whole through a temporary file that is gone
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["merged.rbs", "p0.rbs", "p1.rbs", "p2.rbs"]);
    // the merged set is a whole set: merging it alone gives it again
    let again = dir.join("again.rbs");
    let merged = out.to_string_lossy().into_owned();
    let (code, _, err) = run_s(&merge_to(&[&merged], &again));
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());
}

#[test]
fn an_existing_out_file_is_never_replaced() {
    let dir = temp_dir("shadow-merge", "exists");
    let p = three_parts(&dir);
    let out = dir.join("merged.rbs");
    std::fs::write(&out, "precious").unwrap();
    let (code, stdout, err) = run_s(&merge_to(&[&p[0], &p[1], &p[2]], &out));
    assert_eq!(code, 2, "{err}");
    assert!(stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--out") && err.contains("exists already"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    // a symbolic link to an existing file is no way around it
    #[cfg(unix)]
    {
        let link = dir.join("link.rbs");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        let (code, _, err) = run_s(&merge_to(&[&p[0], &p[1], &p[2]], &link));
        assert_eq!(code, 2, "{err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    }
    // an output over an input is refused before anything is read
    let (code, _, err) = run_s(&merge_to(&[&p[0], &p[1], &p[2]], Path::new(&p[1])));
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&p[1]).unwrap(), part(&spec(7), 1, 3));
}

#[test]
fn damaged_foreign_missing_or_repeated_parts_are_refused_and_nothing_is_written() {
    let dir = temp_dir("shadow-merge", "refused");
    let p = three_parts(&dir);
    let good = part(&spec(7), 1, 3);
    let out = dir.join("merged.rbs");
    let header_len = good
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(7)
        .unwrap()
        .0
        + 1;

    let truncated = put(&dir, "truncated.rbs", &good[..good.len() - 3]);
    let in_header = put(&dir, "in-header.rbs", &good[..header_len - 5]);
    let mut longer = good.clone();
    longer.push(0);
    let longer = put(&dir, "longer.rbs", &longer);
    let v2 = String::from_utf8_lossy(&good).replacen("format 1\n", "format 2\n", 1);
    let mut v2b = good.clone();
    v2b[..header_len].copy_from_slice(&v2.as_bytes()[..header_len]);
    let v2 = put(&dir, "v2.rbs", &v2b);
    let other_data = put(&dir, "other-data.rbs", &part(&spec(8), 1, 3));
    let mut flipped_record = good.clone();
    flipped_record[header_len + 100] ^= 0x10;
    let flipped_record = put(&dir, "flipped-record.rbs", &flipped_record);
    let mut flipped_header = good.clone();
    flipped_header[header_len - 30] ^= 0x01;
    let flipped_header = put(&dir, "flipped-header.rbs", &flipped_header);
    let halves = put(&dir, "half.rbs", &part(&spec(7), 1, 2));
    let jsonl = put(&dir, "shard.jsonl", b"{\"reconbound_shard\": \"attack\"}\n");

    let cases: [(&[&String], &str); 11] = [
        (&[&p[0], &truncated, &p[2]], "truncated"),
        (&[&p[0], &in_header, &p[2]], "ends inside its header"),
        (&[&p[0], &longer, &p[2]], "longer than the"),
        (&[&p[0], &v2, &p[2]], "another format version"),
        (&[&p[0], &other_data, &p[2]], "different sets"),
        (&[&p[0], &flipped_record, &p[2]], "CRC-32"),
        (&[&p[0], &flipped_header, &p[2]], "CRC-32"),
        (&[&p[0], &halves, &p[2]], "shard counts"),
        (&[&p[0], &p[2]], "part 1/3 missing"),
        (&[&p[0], &p[1], &p[1], &p[2]], "part 1/3 given twice"),
        (
            &[&p[0], &p[1], &jsonl],
            "is not: merge the files of one run only",
        ),
    ];
    for (files, needle) in cases {
        assert_refused(&merge_to(files, &out), needle, &out);
    }
    // the part a refusal is about is named
    let (_, _, err) = run_s(&merge_to(&[&p[0], &flipped_record, &p[2]], &out));
    assert!(err.contains("flipped-record.rbs"), "{err}");
    // --out is required; summaries do not apply
    assert_refused(
        &merge_args(&[&p[0], &p[1], &p[2]], &[]),
        "need '--out FILE'",
        &out,
    );
    let mut json = merge_to(&[&p[0], &p[1], &p[2]], &out);
    json.push("--json".into());
    assert_refused(&json, "'--json' does not apply", &out);
    // JSON-lines shards first, a shadow part after: refused too
    assert_refused(&merge_to(&[&jsonl, &p[0]], &out), "shadow-set part", &out);
    // no temporary file is left behind by any refusal
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp")));
}
