//! Output files and progress of the long-running commands (`attack`, `merge`): output paths
//! are checked **before** any work starts, files are written whole (to a temporary file in
//! the same directory, then renamed: never half-written), and progress goes to stderr only
//! when it is a terminal.

use super::args::UsageError;
use super::commands::Failure;
use std::format;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::string::String;
use std::sync::Mutex;
use std::time::Instant;

fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".reconbound-{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Checks that `--flag path` can be written, without leaving anything behind: the path is
/// not a directory and a file can be created beside it.
///
/// # Errors
///
/// A usage error naming the flag and the path.
pub(crate) fn check_writable(flag: &str, path: &str) -> Result<(), Failure> {
    let p = Path::new(path);
    let shown = printable(path);
    if path.is_empty() || p.is_dir() {
        return Err(usage(format!(
            "--{flag}: cannot write '{shown}': it is a directory or empty"
        )));
    }
    let tmp = temporary(p);
    match std::fs::File::create(&tmp) {
        Ok(_) => {
            let _ = std::fs::remove_file(&tmp);
            Ok(())
        }
        Err(e) => Err(usage(format!("--{flag}: cannot write '{shown}': {e}"))),
    }
}

/// Writes `text` to `path` whole: into a temporary file beside it, then renamed over it.
///
/// # Errors
///
/// A usage error naming the flag and the path (the temporary file is removed).
pub(crate) fn write_whole(flag: &str, path: &str, text: &str) -> Result<(), Failure> {
    let p = Path::new(path);
    let tmp = temporary(p);
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, p));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        usage(format!("--{flag}: cannot write '{}': {e}", printable(path)))
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
