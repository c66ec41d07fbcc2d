//! Bounded reads of the files the command line is given (`--schedule`, shard files of
//! `merge`, and any other file named by a flag): [`read_bounded`] stops reading one byte past
//! its cap, so a huge file, a growing one or a device such as `/dev/zero` (whose size reads
//! as 0) is refused with exit 2 after at most `cap + 1` bytes, never read until memory runs
//! out. The data readers of `reconbound::data` (MNIST IDX, CIFAR-10) have their own cap,
//! `reconbound::data::MAX_FILE_BYTES`.

use super::args::UsageError;
use super::failure::Failure;
use super::output::printable;
use std::format;
use std::io::Read as _;
use std::string::String;
use std::vec::Vec;

/// The cap on a `--schedule` file: 4 MiB, far beyond any schedule the accountants can
/// compose (a phase is one line of a few dozen bytes).
pub(crate) const SCHEDULE_CAP: u64 = 4 << 20;

/// The cap on one shard file of `merge`: 1 GiB, some 4 million audit trial lines (≈ 240
/// bytes each) or 13 million prior-aware ones (≈ 80 bytes): a run of 10⁷ audit trials, the
/// most a run may have, must be split into at least 3 shards.
pub(crate) const SHARD_CAP: u64 = 1 << 30;

/// `n` bytes as a short human unit (`4 MiB`), exact for the caps used here.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// The bytes of the file `path` given to the flag `flag` (`"schedule"` for `--schedule`; a
/// label starting with a space, like `" shard file"`, is shown as it is), read to its end but
/// never more than `cap` bytes: the cap is checked while reading (not from the file's
/// metadata, which says 0 for `/dev/zero` and for pipes).
///
/// # Errors
///
/// A usage error (exit 2) naming the flag, the path and the cap when the file holds more
/// than `cap` bytes, or the flag, the path and the system's reason when it cannot be read.
pub(crate) fn read_bounded(path: &str, cap: u64, flag: &str) -> Result<Vec<u8>, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| failure(flag, format!("cannot read '{}': {e}", printable(path))))?;
    read_bounded_from(file, path, cap, flag)
}

/// `flag '--flag': why` (or `label: why` for a label starting with a space) as a usage error.
fn failure(flag: &str, why: String) -> Failure {
    let name = flag
        .strip_prefix(' ')
        .map_or_else(|| format!("flag '--{flag}'"), String::from);
    Failure::Usage(UsageError(format!("{name}: {why}")))
}

/// [`read_bounded`] of a file already opened (`reader`, for example the bytes already read
/// from it chained with the file), named `path` in messages.
///
/// # Errors
///
/// Those of [`read_bounded`].
pub(crate) fn read_bounded_from(
    reader: impl std::io::Read,
    path: &str,
    cap: u64,
    flag: &str,
) -> Result<Vec<u8>, Failure> {
    let shown = printable(path);
    let mut buf = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| failure(flag, format!("cannot read '{shown}': {e}")))?;
    if buf.len() as u64 > cap {
        return Err(failure(
            flag,
            format!(
                "'{shown}' is larger than the cap of {} ({cap} bytes) on this file",
                bytes(cap)
            ),
        ));
    }
    Ok(buf)
}

/// [`read_bounded`], as UTF-8 text.
///
/// # Errors
///
/// Those of [`read_bounded`], and a usage error naming the flag and the path when the file
/// is not UTF-8 text.
pub(crate) fn read_text_bounded(path: &str, cap: u64, flag: &str) -> Result<String, Failure> {
    utf8(read_bounded(path, cap, flag)?, path, flag)
}

/// The bytes `buf` of the file `path` given to `flag`, as UTF-8 text.
///
/// # Errors
///
/// A usage error naming the flag and the path when the bytes are not UTF-8 text.
pub(crate) fn utf8(buf: Vec<u8>, path: &str, flag: &str) -> Result<String, Failure> {
    String::from_utf8(buf)
        .map_err(|_| failure(flag, format!("'{}' is not UTF-8 text", printable(path))))
}
