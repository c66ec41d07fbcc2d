//! RecoNN shadow-set files on disk ([`reconbound::attacks::reconn::shadow_set`] holds the format):
//! `--save-shadows FILE` streams a set (or a `--shard K/M` part) to a new file, never
//! replacing one ([`write_shadow_set`]); `--shadows FILE` reads one back, record by record,
//! never more bytes than its header implies ([`read_shadow_set`]); `reconbound merge PART…
//! --out FILE` joins parts into the unsharded file ([`merge_parts`]). Every refusal is one
//! line naming the flag (or `merge`), the file and what is wrong, with exit status 2.

use super::args::UsageError;
use super::failure::{shown, Failure};
use super::output::{check_new, printable, write_new};
use reconbound::attacks::reconn::shadow_set::{
    check_matches, decode_record, merge_order, peek_header, Encoder, ShadowModel, ShadowSetHeader,
    ShadowSetSpec, MAGIC, MAX_HEADER_BYTES,
};
use reconbound::attacks::trial::Shard;
use reconbound::error::Error;
use std::format;
use std::io::Read as _;
use std::string::String;
use std::vec::Vec;

/// `who: 'path': why` as a usage error (exit 2).
fn refused(who: &str, path: &str, why: &str) -> Failure {
    Failure::Usage(UsageError(format!("{who}: '{}': {why}", printable(path))))
}

/// A library error about a file, as the words of a message (without "inconsistent input").
fn words(e: Error) -> String {
    match e {
        // "… (value: its length)" with 5 → "… (its length: 5)"
        // "… (a damaged file; value: its position)" with 4 → "… (a damaged file; its position: 4)"
        Error::Inconsistent { what, value } => match what.rsplit_once("value: ") {
            Some((head, tail)) if tail.ends_with(')') => {
                format!("{head}{}: {})", tail.trim_end_matches(')'), shown(value))
            }
            _ => String::from(what),
        },
        other => other.to_string(),
    }
}

/// Where the configuration `file` (a shadow set's description) first differs from the run's
/// `run`, by key for `key=value;…` texts: `differs at key 'steps' (the run: '100', the file:
/// '50')`; by byte otherwise.
fn description_difference(run: &str, file: &str) -> String {
    let pairs = |s: &'_ str| -> Vec<(String, String)> {
        s.split(';')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (printable(k), printable(v))
            })
            .collect()
    };
    let (a, b) = (pairs(run), pairs(file));
    for (k, v) in &a {
        match b.iter().find(|(k2, _)| k2 == k) {
            None => return format!("key '{k}' is missing from the file's description"),
            Some((_, w)) if w != v => {
                return format!("differs at key '{k}' (the run: '{v}', the file: '{w}')")
            }
            Some(_) => {}
        }
    }
    if let Some((k, _)) = b.iter().find(|(k, _)| !a.iter().any(|(k2, _)| k2 == k)) {
        return format!("the file's description has key '{k}', the run's has not");
    }
    let at = run
        .bytes()
        .zip(file.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(run.len().min(file.len()));
    format!("differs at byte {at}")
}

/// Why a set of spec `found` does not serve a run of spec `expected`, in words (`None` if it
/// does).
fn mismatch(found: &ShadowSetSpec, expected: &ShadowSetSpec) -> Option<String> {
    check_matches(found, expected).err()?;
    Some(if found.description != expected.description {
        format!(
            "was trained with another D⁻, θ₀, seed or configuration: its description {}",
            description_difference(&expected.description, &found.description)
        )
    } else if found.fingerprint != expected.fingerprint {
        String::from(
            "was trained on other data (same configuration, another data fingerprint): give the --data it was made from",
        )
    } else if found.total != expected.total {
        format!(
            "holds {} shadow models, the run needs {}",
            found.total, expected.total
        )
    } else {
        format!(
            "holds models of {} parameters, the run's have {}",
            found.param_len, expected.param_len
        )
    })
}

/// The header of the file behind `reader` and the bytes read past it: at most
/// [`MAX_HEADER_BYTES`] bytes are read.
fn read_header(
    who: &str,
    path: &str,
    reader: &mut impl std::io::Read,
) -> Result<(ShadowSetHeader, Vec<u8>), Failure> {
    let mut head = Vec::new();
    reader
        .take(MAX_HEADER_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| refused(who, path, &format!("cannot read: {e}")))?;
    let h = peek_header(&head).map_err(|e| refused(who, path, &words(e)))?;
    let rest = head.split_off(
        usize::try_from(h.header_len)
            .unwrap_or(head.len())
            .min(head.len()),
    );
    Ok((h, rest))
}

/// Why a file of `len` bytes cannot be the file of header `h` (`None` if its length is right).
fn length_mismatch(h: &ShadowSetHeader, len: u64) -> Option<String> {
    let want = h.file_len();
    match len.cmp(&want) {
        core::cmp::Ordering::Equal => None,
        core::cmp::Ordering::Less => Some(format!(
            "truncated: {len} bytes, its header announces {want}"
        )),
        core::cmp::Ordering::Greater => Some(format!(
            "longer than the {want} bytes its header announces (bytes after its last record)"
        )),
    }
}

/// The size of `file` if it is a regular file (a pipe's or a device's size says nothing).
fn regular_size(file: &std::fs::File) -> Option<u64> {
    file.metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

fn open(who: &str, path: &str) -> Result<std::fs::File, Failure> {
    std::fs::File::open(path).map_err(|e| refused(who, path, &format!("cannot read: {e}")))
}

/// Checks, before any work, that `--flag path` can take a new shadow set: no file exists
/// there, and one can be created ([`check_new`]).
///
/// # Errors
///
/// A usage error (exit 2) naming the flag and the path.
pub(crate) fn check_shadow_output(flag: &str, path: &str) -> Result<(), Failure> {
    check_new(flag, path)
}

/// Streams the shadow set `spec` (or its part `shard`) to the new file `--flag path`:
/// the header, then each model of `models` (the shard's models in increasing index order,
/// each written as soon as it comes) — into a temporary file that takes the name only when
/// the set is complete, never replacing a file (see [`write_new`]).
///
/// # Errors
///
/// A usage error (exit 2) if `path` exists or cannot be written; the first error of
/// `models`; a computation failure (exit 1) if a model is out of order, of another parameter
/// count or not finite, if one is missing, or if a write fails. Nothing is left at `path`
/// on error.
pub(crate) fn write_shadow_set(
    flag: &str,
    path: &str,
    spec: &ShadowSetSpec,
    shard: Shard,
    models: impl Iterator<Item = Result<ShadowModel, Failure>>,
) -> Result<(), Failure> {
    let shown_path = printable(path);
    let mut enc = Encoder::new(spec, shard)
        .map_err(|e| Failure::Compute(format!("--{flag}: {}", words(e))))?;
    let failed =
        |e: std::io::Error| Failure::Compute(format!("--{flag}: cannot write '{shown_path}': {e}"));
    let bad = |e: Error| Failure::Compute(format!("--{flag}: '{shown_path}': {}", words(e)));
    write_new(flag, path, |w| {
        w.write_all(&enc.header()).map_err(failed)?;
        for m in models {
            let record = enc.record(&m?).map_err(bad)?;
            w.write_all(&record).map_err(failed)?;
        }
        enc.finish().map_err(bad)
    })
}

/// Reads the shadow set `--flag path` made for a run of spec `expected`: its shard and its
/// models in index order. The header is checked first (a set of another run is refused
/// before its records are read), then the records are read one by one, never more bytes
/// than the header implies, each checked (CRC-32, index, finite parameters).
///
/// # Errors
///
/// A usage error (exit 2), one line naming the flag, the file and what is wrong: it cannot
/// be read, is not a shadow set, is of another format version, was made for another run
/// (what differs: a key of the description, the data, the number of models), is truncated
/// or longer than its header says, or a record is damaged.
pub(crate) fn read_shadow_set(
    flag: &str,
    path: &str,
    expected: &ShadowSetSpec,
) -> Result<(Shard, Vec<ShadowModel>), Failure> {
    let who = format!("--{flag}");
    let file = open(&who, path)?;
    let size = regular_size(&file);
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let (h, rest) = read_header(&who, path, &mut reader)?;
    if let Some(why) = mismatch(&h.spec, expected) {
        return Err(refused(&who, path, &why));
    }
    if let Some(why) = size.and_then(|n| length_mismatch(&h, n)) {
        return Err(refused(&who, path, &why));
    }
    let mut reader = std::io::Cursor::new(rest).chain(reader);
    let record_len = usize::try_from(h.spec.record_len()).unwrap_or(usize::MAX);
    let mut record = std::vec![0u8; record_len];
    // grows with the records actually read (a header's count alone reserves nothing large)
    let mut models = Vec::with_capacity(usize::try_from(h.records().min(1 << 12)).unwrap_or(0));
    for j in 0..h.records() {
        reader.read_exact(&mut record).map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!(
                    "truncated: it ends in record {j} of the {} its header announces ({} bytes)",
                    h.records(),
                    h.file_len()
                )
            } else {
                format!("cannot read: {e}")
            };
            refused(&who, path, &why)
        })?;
        models.push(decode_record(&h, j, &record).map_err(|e| refused(&who, path, &words(e)))?);
    }
    let mut extra = [0u8; 1];
    match reader.read(&mut extra) {
        Ok(0) => Ok((h.shard, models)),
        Ok(_) => Err(refused(
            &who,
            path,
            &format!(
                "longer than the {} bytes its header announces (bytes after its last record)",
                h.file_len()
            ),
        )),
        Err(e) => Err(refused(&who, path, &format!("cannot read: {e}"))),
    }
}

/// An input file of `merge`, opened, its first bytes read to tell its kind.
pub(crate) struct Opened<'a> {
    /// The path given.
    pub(crate) path: &'a str,
    /// `true` if the file starts with the shadow-set magic.
    pub(crate) is_shadow: bool,
    /// The whole file: the first bytes, then the rest (each byte read once, so that a pipe
    /// works too).
    pub(crate) reader: Bytes,
    /// Its size if it is a regular file.
    size: Option<u64>,
}

/// Opens the input `path` of `merge` and reads its first bytes.
///
/// # Errors
///
/// A usage error (exit 2) naming the file if it cannot be opened or read.
pub(crate) fn open_input(path: &str) -> Result<Opened<'_>, Failure> {
    let mut file = open("merge", path)?;
    let size = regular_size(&file);
    let mut head = Vec::new();
    (&mut file)
        .take(MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|e| refused("merge", path, &format!("cannot read: {e}")))?;
    Ok(Opened {
        path,
        is_shadow: head == MAGIC.as_bytes(),
        reader: std::io::Cursor::new(head).chain(file),
        size,
    })
}

/// A file's bytes: those read already, then the rest of the file.
type Bytes = std::io::Chain<std::io::Cursor<Vec<u8>>, std::fs::File>;

/// One part of a merge: its path, header and the reader of its records.
struct Part<'a> {
    path: &'a str,
    header: ShadowSetHeader,
    records: std::io::Chain<std::io::Cursor<Vec<u8>>, Bytes>,
    /// Bytes read so far, the header's included.
    read: u64,
}

/// `reconbound merge PART… --out FILE` for shadow-set parts (`opened`, each file opened once by
/// [`open_input`]): reads every part's header (bounded), checks that they are the parts of
/// one set ([`merge_order`]) and that a regular file has the length its header implies, then
/// streams the records in index order into the new file `out` (never replacing one), each
/// record checked ([`decode_record`]) before it is written: memory for one record, whatever
/// the parts hold. Returns the line `merge` prints.
///
/// # Errors
///
/// A usage error (exit 2) naming the file and what is wrong: a part that cannot be read, is
/// malformed, truncated, longer than its header says or damaged; parts of different sets or
/// shard counts; a part given twice or missing; `out` exists. A computation failure (exit 1)
/// if the write fails. Nothing is written on error (the temporary output is removed).
pub(crate) fn merge_parts(opened: Vec<Opened<'_>>, out: &str) -> Result<String, Failure> {
    check_new("out", out)?;
    let files: Vec<&str> = opened.iter().map(|o| o.path).collect();
    let mut parts: Vec<Part<'_>> = Vec::with_capacity(opened.len());
    for o in opened {
        let mut reader = o.reader;
        let (header, rest) = read_header("merge", o.path, &mut reader)?;
        if let Some(why) = o.size.and_then(|n| length_mismatch(&header, n)) {
            return Err(refused("merge", o.path, &why));
        }
        let read = header.header_len;
        parts.push(Part {
            path: o.path,
            header,
            records: std::io::Cursor::new(rest).chain(reader),
            read,
        });
    }
    let headers: Vec<ShadowSetHeader> = parts.iter().map(|p| p.header.clone()).collect();
    let count = headers.first().map_or(0, |h| h.shard.count());
    let order = merge_order(&headers).map_err(|e| match e {
        // errors about one part name it; about a shard K, say K/M
        Error::Inconsistent { what, value } if what.contains("part's position") => {
            let part = files.get(value as usize).copied().unwrap_or_default();
            let what = what.split(" (value").next().unwrap_or(what);
            refused("merge", part, what)
        }
        Error::Inconsistent { what, value } if what.contains("given twice") => {
            Failure::Usage(UsageError(format!(
                "merge: shadow-set part {}/{count} given twice",
                shown(value)
            )))
        }
        Error::Inconsistent { what, value } if what.contains("missing") => {
            Failure::Usage(UsageError(format!(
                "merge: shadow-set part {}/{count} missing (every part K/{count}, K = 0..{}, is needed)",
                shown(value),
                count.saturating_sub(1)
            )))
        }
        other => Failure::Usage(UsageError(format!("merge: {}", words(other)))),
    })?;
    let Some(spec) = headers.first().map(|h| h.spec.clone()) else {
        return Err(Failure::Usage(UsageError(String::from(
            "merge: no shadow-set parts",
        ))));
    };
    let record_len = usize::try_from(spec.record_len()).map_err(|_| {
        Failure::Compute(String::from("merge: records too large for this platform"))
    })?;
    let whole = Encoder::new(&spec, Shard::WHOLE)
        .map_err(|e| Failure::Usage(UsageError(format!("merge: {}", words(e)))))?;
    let write_failed = |e: std::io::Error| {
        Failure::Compute(format!("--out: cannot write '{}': {e}", printable(out)))
    };
    write_new("out", out, |w| {
        w.write_all(&whole.header()).map_err(write_failed)?;
        let mut record = std::vec![0u8; record_len];
        for i in 0..spec.total {
            let k = usize::try_from(i % count.max(1)).unwrap_or(usize::MAX);
            let part = order
                .get(k)
                .and_then(|&j| parts.get_mut(j))
                .ok_or_else(|| Failure::Compute(String::from("internal: merge order")))?;
            let got = read_full(&mut part.records, &mut record)
                .map_err(|e| refused("merge", part.path, &format!("cannot read: {e}")))?;
            part.read += got as u64;
            if got < record_len {
                let why = length_mismatch(&part.header, part.read).unwrap_or_default();
                return Err(refused("merge", part.path, &why));
            }
            decode_record(&part.header, i / count.max(1), &record)
                .map_err(|e| refused("merge", part.path, &words(e)))?;
            w.write_all(&record).map_err(write_failed)?;
        }
        for part in &mut parts {
            let mut one = [0u8; 1];
            let more = read_full(&mut part.records, &mut one)
                .map_err(|e| refused("merge", part.path, &format!("cannot read: {e}")))?;
            if more > 0 {
                let why = length_mismatch(&part.header, part.read + 1).unwrap_or_default();
                return Err(refused("merge", part.path, &why));
            }
        }
        Ok(())
    })?;
    let n = spec.record_len().saturating_mul(spec.total) + whole.header().len() as u64;
    Ok(format!(
        "merged {} shadow-set parts: {} models of {} parameters, {n} bytes, into '{}'\n",
        files.len(),
        spec.total,
        spec.param_len,
        printable(out)
    ))
}

/// Reads into `buf` until it is full or the input ends: the bytes read.
fn read_full(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(desc: &str, data: u64) -> ShadowSetSpec {
        ShadowSetSpec::new(String::from(desc), data, 5, 4).unwrap()
    }

    fn model(i: u64) -> ShadowModel {
        ShadowModel {
            index: i,
            target: 2 * i as u32,
            params: std::vec![i as f64, 0.25, -1.5, 1e300],
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "reconbound-shadow-io-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn message(r: Result<impl std::fmt::Debug, Failure>) -> (bool, String) {
        match r {
            Err(Failure::Usage(UsageError(m))) => (true, m),
            Err(Failure::Invalid(e)) => (true, crate::failure::render_invalid(&e)),
            Err(Failure::Compute(m)) => (false, m),
            Ok(v) => panic!("accepted: {v:?}"),
        }
    }

    fn ok<T>(r: Result<T, Failure>) -> T {
        match r {
            Ok(v) => v,
            Err(Failure::Usage(UsageError(m)) | Failure::Compute(m)) => panic!("{m}"),
            Err(Failure::Invalid(e)) => panic!("{e}"),
        }
    }

    fn save(path: &str, s: &ShadowSetSpec, shard: Shard) -> Result<(), Failure> {
        let models = shard.trials(s.total).map(|i| Ok(model(i)));
        write_shadow_set("save-shadows", path, s, shard, models)
    }

    /// A whole set of description `desc` saved as `set.rbs` in a fresh folder `name`:
    /// (the folder, the spec, the file's path).
    fn saved(name: &str, desc: &str) -> (std::path::PathBuf, ShadowSetSpec, String) {
        let d = dir(name);
        let s = spec(desc, 9);
        let path = d.join("set.rbs").to_string_lossy().into_owned();
        ok(save(&path, &s, Shard::WHOLE));
        (d, s, path)
    }

    #[test]
    fn a_saved_set_reads_back_and_is_never_replaced() {
        let (d, s, path) = saved("round-trip", "steps=100;seed=1");
        let (shard, models) = ok(read_shadow_set("shadows", &path, &s));
        assert_eq!(shard, Shard::WHOLE);
        assert_eq!(models, (0..5).map(model).collect::<Vec<_>>());
        let bytes = std::fs::read(&path).unwrap();
        let expected = reconbound::attacks::reconn::shadow_set::encode(&s, Shard::WHOLE, &models);
        assert_eq!(bytes, expected.unwrap());
        // never replaced
        let (usage, m) = message(save(&path, &s, Shard::WHOLE));
        assert!(
            usage && m.contains("--save-shadows") && m.contains("exists already"),
            "{m}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(check_shadow_output("save-shadows", &path).is_err());
        // a part, read back with its shard
        let part = d.join("part.rbs").to_string_lossy().into_owned();
        ok(save(&part, &s, Shard::new(1, 2).unwrap()));
        let (shard, models) = ok(read_shadow_set("shadows", &part, &s));
        assert_eq!(shard, Shard::new(1, 2).unwrap());
        assert_eq!(models, [model(1), model(3)]);
    }

    #[test]
    fn a_failed_or_incomplete_stream_leaves_nothing() {
        let d = dir("failed");
        let s = spec("steps=100;seed=1", 9);
        let path = d.join("set.rbs").to_string_lossy().into_owned();
        let failing = (0..5).map(|i| {
            if i == 3 {
                Err(Failure::Compute(String::from("training diverged")))
            } else {
                Ok(model(i))
            }
        });
        let (_, m) = message(write_shadow_set(
            "save-shadows",
            &path,
            &s,
            Shard::WHOLE,
            failing,
        ));
        assert_eq!(m, "training diverged");
        let short = (0..4).map(|i| Ok(model(i)));
        let (_, m) = message(write_shadow_set(
            "save-shadows",
            &path,
            &s,
            Shard::WHOLE,
            short,
        ));
        assert!(m.contains("missing"), "{m}");
        let skipping = [0, 2].into_iter().map(|i| Ok(model(i)));
        let (_, m) = message(write_shadow_set(
            "save-shadows",
            &path,
            &s,
            Shard::WHOLE,
            skipping,
        ));
        assert!(m.contains("index order"), "{m}");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "left a file behind"
        );
    }

    #[test]
    fn a_set_of_another_run_or_a_damaged_file_is_refused_naming_what_differs() {
        let (d, s, path) = saved("refused", "steps=100;seed=1;lr=0.5");
        let cases = [
            (
                spec("steps=50;seed=1;lr=0.5", 9),
                "differs at key 'steps' (the run: '50', the file: '100')",
            ),
            (
                spec("steps=100;seed=1", 9),
                "the file's description has key 'lr'",
            ),
            (
                spec("steps=100;seed=1;lr=0.5;init=unknown", 9),
                "key 'init' is missing",
            ),
            (spec("steps=100;seed=1;lr=0.5", 10), "trained on other data"),
            (
                ShadowSetSpec::new(String::from("steps=100;seed=1;lr=0.5"), 9, 6, 4).unwrap(),
                "holds 5 shadow models, the run needs 6",
            ),
        ];
        for (expected, needle) in cases {
            let (usage, m) = message(read_shadow_set("shadows", &path, &expected));
            assert!(usage, "{m}");
            assert!(m.starts_with("--shadows: '") && m.contains(needle), "{m}");
            assert_eq!(m.lines().count(), 1);
        }
        let bytes = std::fs::read(&path).unwrap();
        let cut = d.join("cut.rbs");
        std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
        let (usage, m) = message(read_shadow_set("shadows", &cut.to_string_lossy(), &s));
        assert!(
            usage && m.contains("truncated: ") && m.contains("bytes, its header announces"),
            "{m}"
        );
        let long = d.join("long.rbs");
        std::fs::write(&long, [&bytes[..], b"x"].concat()).unwrap();
        let (usage, m) = message(read_shadow_set("shadows", &long.to_string_lossy(), &s));
        assert!(usage && m.contains("longer than the"), "{m}");
        let mut flipped = bytes.clone();
        let at = flipped.len() - 10;
        flipped[at] ^= 4;
        let bad = d.join("flipped.rbs");
        std::fs::write(&bad, &flipped).unwrap();
        let (usage, m) = message(read_shadow_set("shadows", &bad.to_string_lossy(), &s));
        assert!(usage && m.contains("CRC-32") && m.contains(": 4"), "{m}");
        let (usage, m) = message(read_shadow_set("shadows", "/dev/zero", &s));
        assert!(usage && m.contains("not a RecoNN shadow set"), "{m}");
        let (usage, m) = message(read_shadow_set("shadows", "/nonexistent/x", &s));
        assert!(usage && m.contains("cannot read"), "{m}");
    }

    /// A pipe has no size to check first: a truncated or longer set is refused while read.
    #[cfg(unix)]
    #[test]
    fn a_set_read_from_a_pipe_is_bounded_by_its_header() {
        let (d, s, path) = saved("pipe", "steps=100;seed=1");
        let bytes = std::fs::read(&path).unwrap();
        let cases: [(&[u8], &str); 3] = [
            (
                &bytes[..bytes.len() - 1],
                "truncated: it ends in record 4 of the 5",
            ),
            (&[&bytes[..], b"extra"].concat(), "longer than the"),
            (&bytes, ""),
        ];
        for (i, (content, needle)) in cases.into_iter().enumerate() {
            let fifo = d.join(format!("fifo{i}"));
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if !made.is_ok_and(|st| st.success()) {
                return; // no mkfifo here: nothing to test
            }
            let content = content.to_vec();
            let writer_path = fifo.clone();
            let writer = std::thread::spawn(move || {
                use std::io::Write as _;
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(writer_path)
                    .unwrap();
                let _ = f.write_all(&content);
            });
            let r = read_shadow_set("shadows", &fifo.to_string_lossy(), &s);
            if needle.is_empty() {
                assert_eq!(ok(r).1.len(), 5);
            } else {
                let (usage, m) = message(r);
                assert!(usage && m.contains(needle), "{m}");
            }
            writer.join().unwrap();
        }
    }

    /// Issue 31: `merge` reads a part record by record, checking each before it reads the
    /// next. A valid header announcing an 8 GB part (10⁶ models of 1,000 parameters) followed
    /// by zeros on a pipe is refused at its first record's CRC-32, having read about one
    /// record past the header (before, the whole announced body was read first: 8.4 GB).
    /// The writer stops when the merge closes the pipe; it may have filled the pipe's buffer.
    #[test]
    fn merge_of_a_part_on_a_pipe_stops_at_its_first_bad_record() {
        let d = dir("merge-pipe");
        let fifo = d.join("part");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|st| st.success()) {
            return; // no mkfifo here: nothing to test
        }
        let big = ShadowSetSpec::new(String::from("steps=1;seed=1"), 7, 1_000_000, 1000).unwrap();
        let header = Encoder::new(&big, Shard::WHOLE).unwrap().header();
        let writer_path = fifo.clone();
        let writer = std::thread::spawn(move || {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(writer_path)
                .unwrap();
            let mut written = 0usize;
            if f.write_all(&header).is_ok() {
                written += header.len();
                let zeros = std::vec![0u8; 1 << 16];
                // at most 64 MiB, then give up (the merge should long have stopped reading)
                for _ in 0..1024 {
                    if f.write_all(&zeros).is_err() {
                        break;
                    }
                    written += zeros.len();
                }
            }
            written
        });
        let path = fifo.to_string_lossy().into_owned();
        let out = d.join("merged.bin").to_string_lossy().into_owned();
        let opened = ok(open_input(&path));
        let (usage, m) = message(merge_parts(std::vec![opened], &out));
        assert!(usage && m.contains("CRC-32"), "{m}");
        assert!(!std::path::Path::new(&out).exists(), "an output was left");
        let written = writer.join().unwrap();
        assert!(
            written < 8 << 20,
            "the merge read {written} bytes of the pipe"
        );
    }
}
