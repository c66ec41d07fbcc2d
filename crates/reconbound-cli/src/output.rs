//! Output files and progress of the commands that write files: every output path is checked
//! **before** any work starts ([`check_writable`], [`check_distinct`]) and written by one
//! helper, [`write_whole`]:
//!
//! - a regular file (or a path that does not exist yet) is written whole — into a temporary
//!   file beside it, then renamed over it — so it is never left half-written;
//! - a symbolic link is followed to the real path: the target is replaced, the link is kept;
//! - a character device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe from `>(…)`) is written
//!   through in place, never replaced by a file;
//! - a directory, a block device or a socket is refused (exit 2), as is `-` (this command
//!   does not write its files to standard output: give a file name or `/dev/stdout`);
//! - a failed write (a full disk, `/dev/full`) is an error with exit status 1, never exit 0.
//!
//! Outputs that must never replace a file (RecoNN shadow sets, hours of training) are checked
//! by [`check_new`] and streamed by [`write_new`]: an existing file is refused (exit 2), and
//! the finished file takes its name only if no file took it meanwhile.
//!
//! Progress goes to stderr only when it is a terminal.

use super::args::UsageError;
use super::failure::Failure;
use std::format;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::string::String;
use std::sync::Mutex;
use std::time::Instant;
use std::vec::Vec;

pub(crate) fn printable(s: &str) -> String {
    super::args::shown_chars(s, 200)
}

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

/// A line on stderr, best effort: a command never fails (or panics) because its notes cannot
/// be shown.
pub(crate) fn note(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// Temporary files being written (beside their outputs), so that an interrupt removes them:
/// [`Pending`] registers one while it exists, [`on_interrupt`] removes them all.
static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A temporary file registered for removal on an interrupt while this value lives.
struct Pending(PathBuf);

impl Pending {
    /// Creates the new file `path` (`create_new`) under the registry's lock and registers
    /// it: an interrupt comes either before it exists or after it is registered, never
    /// between (the handler holds the lock until the process ends).
    fn create(path: PathBuf) -> std::io::Result<(Pending, std::fs::File)> {
        let mut list = pending();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        list.push(path.clone());
        drop(list);
        Ok((Pending(path), file))
    }

    /// Runs `give_name` (the rename or link that gives the file its name, or its removal)
    /// under the registry's lock, then unregisters the file: an interrupt comes either before
    /// (and removes the temporary file) or after (and finds it named or gone), never between.
    fn finish<T>(self, give_name: impl FnOnce(&Path) -> T) -> T {
        let mut list = pending();
        let out = give_name(&self.0);
        list.retain(|p| *p != self.0);
        drop(list);
        out
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        pending().retain(|p| *p != self.0);
    }
}

/// For the `reconbound` binary's Ctrl-C (SIGINT, SIGTERM) handler: removes every temporary
/// file still being written and exits with status 130, so that an interrupted run leaves
/// nothing half-written (an output is only ever renamed to its name once whole). Holds the
/// registry's lock until the process ends: no temporary file gets its name after this.
pub fn on_interrupt() -> ! {
    let mut list = pending();
    let n = list.len();
    for p in list.drain(..) {
        let _ = std::fs::remove_file(p);
    }
    let _ = if n > 0 {
        writeln!(
            std::io::stderr(),
            "\nreconbound: interrupted; the unfinished output was removed"
        )
    } else {
        writeln!(std::io::stderr(), "\nreconbound: interrupted")
    };
    std::process::exit(130)
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".reconbound-{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// `path` with every symbolic link of its last component followed (also a link to a file
/// that does not exist yet) and its folder made absolute and canonical: `x`, `./x` and a
/// link to `x` resolve to one path. A path whose folder does not exist is returned as it is
/// after the links are followed.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // 40: the kernel's own limit on nested links (ELOOP).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(t) if t.is_relative() => {
                    p = p.parent().map_or_else(|| t.clone(), |d| d.join(&t));
                }
                Ok(t) => p = t,
                Err(_) => break,
            },
            _ => break,
        }
    }
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir).map_or(p.clone(), |d| d.join(name))
        }
        _ => std::fs::canonicalize(&p).unwrap_or(p),
    }
}

/// Where an output goes.
enum Target {
    /// A regular file or a new one: replaced atomically at its real (resolved) path.
    Regular(PathBuf),
    /// A character device or a FIFO: written through in place (by the path given, so that
    /// `/dev/stdout` and `/dev/fd/N` reach what they name).
    Through,
}

#[cfg(unix)]
fn written_through(t: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    t.is_char_device() || t.is_fifo()
}

#[cfg(not(unix))]
fn written_through(_: &std::fs::FileType) -> bool {
    false
}

fn target(flag: &str, path: &str) -> Result<Target, Failure> {
    let shown = printable(path);
    if path.is_empty() {
        return Err(usage(format!("flag '--{flag}' needs a file name")));
    }
    if path == "-" {
        return Err(usage(format!(
            "--{flag}: '-' is not supported (this command writes its files by name; give a file name, or /dev/stdout)"
        )));
    }
    let p = Path::new(path);
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => Ok(Target::Regular(resolve(p))),
        Ok(m) if m.is_dir() => Err(usage(format!(
            "--{flag}: cannot write '{shown}': it is a directory"
        ))),
        Ok(m) if written_through(&m.file_type()) => Ok(Target::Through),
        Ok(_) => Err(usage(format!(
            "--{flag}: cannot write '{shown}': it is neither a regular file, a character device nor a FIFO"
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Target::Regular(resolve(p))),
        Err(e) => Err(usage(format!("--{flag}: cannot write '{shown}': {e}"))),
    }
}

/// Checks that `--flag path` can be written, without leaving anything behind: a regular file
/// (or a new one) can be created beside its real path; a character device can be opened for
/// writing; a FIFO is accepted as it is (opening it would wait for a reader).
///
/// # Errors
///
/// A usage error naming the flag and the path.
pub(crate) fn check_writable(flag: &str, path: &str) -> Result<(), Failure> {
    let shown = printable(path);
    match target(flag, path)? {
        Target::Regular(real) => match Pending::create(temporary(&real)) {
            Ok((tmp, file)) => {
                drop(file);
                tmp.finish(|t| std::fs::remove_file(t).ok());
                Ok(())
            }
            Err(e) => Err(usage(format!("--{flag}: cannot write '{shown}': {e}"))),
        },
        Target::Through => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt as _;
                let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
                if fifo {
                    return Ok(());
                }
            }
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map(|_| ())
                .map_err(|e| usage(format!("--{flag}: cannot write '{shown}': {e}")))
        }
    }
}

/// Refuses, before any work, two outputs that name one file, or an output that names one of
/// the inputs or an existing file inside an input folder (every file of a data directory is
/// an input, whatever the reader takes from it): `outputs` and `inputs` are (flag, path) pairs (a flag like `"out"` is shown as
/// `--out`; one that starts with a space, like `" shard file"`, is shown as it is). Paths are
/// compared after [`resolve`], so `x`, `./x` and a link to `x` are one path. Outputs that are
/// character devices or FIFOs (`/dev/null`, a pipe) are not compared: writing them twice
/// destroys nothing.
///
/// # Errors
///
/// A usage error naming both flags and the path.
pub(crate) fn check_distinct(
    outputs: &[(&str, &str)],
    inputs: &[(&str, &str)],
) -> Result<(), Failure> {
    let name = |flag: &str| {
        flag.strip_prefix(' ')
            .map_or_else(|| format!("--{flag}"), String::from)
    };
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for (flag, path) in inputs {
        seen.push((flag, resolve(Path::new(path))));
    }
    let n_inputs = seen.len();
    for (flag, path) in outputs {
        let through = std::fs::metadata(path).is_ok_and(|m| written_through(&m.file_type()));
        if through || path.is_empty() {
            continue;
        }
        let real = resolve(Path::new(path));
        // an existing file inside an input folder (a data directory) is read by the run: the
        // folder's files are inputs too, whatever their names
        let inside = |dir: &PathBuf| dir.is_dir() && real != *dir && real.starts_with(dir);
        if real.exists() {
            if let Some((other, dir)) = seen[..n_inputs].iter().find(|(_, d)| inside(d)) {
                return Err(usage(format!(
                    "{} names '{}', a file inside {} '{}': an output must not overwrite an input",
                    name(flag),
                    printable(path),
                    name(other),
                    printable(&dir.to_string_lossy())
                )));
            }
        }
        if let Some((i, (other, _))) = seen.iter().enumerate().find(|(_, (_, r))| *r == real) {
            let why = if i < n_inputs {
                "an output must not overwrite an input"
            } else {
                "two outputs must not share a file"
            };
            return Err(usage(format!(
                "{} and {} name one file '{}': {why}",
                name(other),
                name(flag),
                printable(path)
            )));
        }
        seen.push((flag, real));
    }
    Ok(())
}

/// [`check_distinct`] of the output flags `outputs` and the input flags `inputs` of `f` that
/// are given (`--data embedded` is no file), and of `files` (more inputs, already labelled).
///
/// # Errors
///
/// Those of [`check_distinct`].
pub(crate) fn check_flag_paths(
    f: &super::args::Flags,
    outputs: &[&str],
    inputs: &[&str],
    files: &[(&str, &str)],
) -> Result<(), Failure> {
    fn given<'a>(f: &'a super::args::Flags, names: &[&'a str]) -> Vec<(&'a str, &'a str)> {
        names
            .iter()
            .filter_map(|&n| f.raw(n).map(|v| (n, v)))
            .filter(|&(n, v)| !(n == "data" && v == "embedded"))
            .collect()
    }
    let o = given(f, outputs);
    let mut i = given(f, inputs);
    i.extend_from_slice(files);
    check_distinct(&o, &i)
}

/// Writes `text` to `--flag path`: a regular file whole (into a temporary file beside its real
/// path, then renamed over it — a symbolic link is kept and its target replaced); a character
/// device or a FIFO in place.
///
/// # Errors
///
/// A usage error (exit 2) if the path is refused (see the module's docs); a computation
/// failure (exit 1) naming the flag and the path if the write fails (the temporary file is
/// removed).
pub(crate) fn write_whole(flag: &str, path: &str, text: &str) -> Result<(), Failure> {
    let failed = |e: std::io::Error| {
        Failure::Compute(format!("--{flag}: cannot write '{}': {e}", printable(path)))
    };
    match target(flag, path)? {
        Target::Regular(real) => {
            let (tmp, mut file) = Pending::create(temporary(&real)).map_err(failed)?;
            let result = file.write_all(text.as_bytes()).and_then(|()| file.flush());
            drop(file);
            tmp.finish(|t| {
                result
                    .and_then(|()| std::fs::rename(t, &real))
                    .map_err(|e| {
                        let _ = std::fs::remove_file(t);
                        failed(e)
                    })
            })
        }
        Target::Through => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.flush()))
            .map_err(failed),
    }
}

/// Checks, before any work, that `--flag path` can be written by [`write_new`]: as
/// [`check_writable`], and a regular file (or a symbolic link to one) must not exist yet.
///
/// # Errors
///
/// A usage error (exit 2) naming the flag and the path.
pub(crate) fn check_new(flag: &str, path: &str) -> Result<(), Failure> {
    if let Target::Regular(real) = target(flag, path)? {
        if std::fs::symlink_metadata(&real).is_ok() {
            return Err(usage(format!(
                "--{flag}: '{}' exists already (this output is never replaced: remove it or give another name)",
                printable(path)
            )));
        }
    }
    check_writable(flag, path)
}

/// Streams an output that must never replace a file (a RecoNN shadow set: hours of work) to
/// `--flag path`: `write` writes it through a buffer. A new regular file is written into a
/// temporary file beside its real path (links followed), synced, then linked to its name
/// only if no file holds that name (`link(2)` refuses to replace; on a file system without
/// hard links, a rename after a check); a character device or a FIFO is written through.
///
/// # Errors
///
/// A usage error (exit 2) if the path exists already or is refused (see the module's docs);
/// the error of `write` (the temporary file is removed); a computation failure (exit 1)
/// naming the flag and the path if a write fails, or if a file took the name while this one
/// was written (the result is kept in the temporary file, which the message names).
pub(crate) fn write_new(
    flag: &str,
    path: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let shown = printable(path);
    let failed =
        |e: std::io::Error| Failure::Compute(format!("--{flag}: cannot write '{shown}': {e}"));
    check_new(flag, path)?;
    let Target::Regular(real) = target(flag, path)? else {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(failed)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        write(&mut w)?;
        return w.flush().map_err(failed);
    };
    let (pending, file) = Pending::create(temporary(&real)).map_err(failed)?;
    let tmp = pending.0.clone();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut w).and_then(|()| {
        w.flush()
            .and_then(|()| w.get_ref().sync_all())
            .map_err(failed)
    });
    drop(w);
    if let Err(e) = written {
        pending.finish(|t| std::fs::remove_file(t).ok());
        return Err(e);
    }
    let taken = || {
        Failure::Compute(format!(
            "--{flag}: '{shown}' appeared while this output was written; it is kept in '{}'",
            printable(&tmp.to_string_lossy())
        ))
    };
    pending.finish(|tmp| match std::fs::hard_link(tmp, &real) {
        Ok(()) => {
            let _ = std::fs::remove_file(tmp);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(taken()),
        Err(_) if std::fs::symlink_metadata(&real).is_ok() => Err(taken()),
        Err(_) => std::fs::rename(tmp, &real).map_err(|e| {
            let _ = std::fs::remove_file(tmp);
            failed(e)
        }),
    })
}

/// A progress line on stderr, rewritten at most once a second after the first second, only
/// when stderr is a terminal and `--quiet` is not given. Safe to tick from worker threads.
pub(crate) struct Progress {
    label: String,
    total: usize,
    enabled: bool,
    start: Instant,
    last: Mutex<f64>,
}

impl Progress {
    /// Progress of `total` units of work named `label`.
    pub(crate) fn new(label: String, total: usize, quiet: bool) -> Self {
        Progress {
            label,
            total,
            enabled: !quiet && std::io::stderr().is_terminal(),
            start: Instant::now(),
            last: Mutex::new(0.0),
        }
    }

    /// `done` units finished.
    pub(crate) fn tick(&self, done: usize) {
        if !self.enabled {
            return;
        }
        let elapsed = self.start.elapsed().as_secs_f64();
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if elapsed < 1.0 || elapsed - *last < 1.0 {
            return;
        }
        *last = elapsed;
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r{}: {done}/{} ({:.0} %), {elapsed:.1} s",
            self.label,
            self.total,
            100.0 * done as f64 / self.total.max(1) as f64
        );
        let _ = err.flush();
    }

    /// Seconds since the start.
    pub(crate) fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Ends the progress line (if one was shown).
    pub(crate) fn finish(&self) {
        if self.enabled && self.last.lock().map(|l| *l > 0.0).unwrap_or(false) {
            let _ = writeln!(std::io::stderr());
        }
    }
}
