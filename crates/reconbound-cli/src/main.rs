#![forbid(unsafe_code)]
//! The `reconbound` command line: see `reconbound --help` and `reconbound_cli`.
//!
//! An interrupt (Ctrl-C, SIGTERM) removes the temporary files of outputs being written and
//! exits 130: an output appears under its name only whole.
//!
//! Output goes through fallible writes: when standard output cannot be written (a full disk,
//! `> /dev/full`, a closed pipe) the command prints one line on stderr and exits 1 (or its
//! own non-zero status) instead of panicking.

use std::io::Write as _;

fn main() {
    // Ctrl-C (and SIGTERM): remove the temporary files of outputs still being written, exit
    // 130. Without a handler the process would end at once and leave them behind.
    let _ = ctrlc::set_handler(|| reconbound_cli::on_interrupt());
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = reconbound_cli::run(&args);
    let mut code = out.code;
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(out.stdout.as_bytes())
        .and_then(|()| stdout.flush());
    let mut stderr = std::io::stderr().lock();
    // stderr is best effort: there is nowhere left to report its own failure.
    let _ = stderr.write_all(out.stderr.as_bytes());
    if let Err(e) = written {
        let _ = writeln!(stderr, "reconbound: cannot write standard output: {e}");
        if code == 0 {
            code = 1;
        }
    }
    let _ = stderr.flush();
    std::process::exit(code);
}
