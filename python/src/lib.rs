//! `reconbound._native`: the one entry point of the Python package. [`run`] hands the
//! argument list to `reconbound_cli::run` — the whole command line, in-process — on a worker
//! thread with the GIL released, and returns its exit status, standard output and standard
//! error. The keyword-to-flag translation and the JSON parsing are in
//! `reconbound/__init__.py`.
//!
//! Ctrl-C: while the command runs, the calling thread wakes every 50 ms to let Python handle
//! its signals (`check_signals`). On `KeyboardInterrupt` it sets the run's interruption flag
//! (`reconbound::attacks::trial::with_interrupt`), so every trial loop stops before its next
//! trial, waits for the worker to return, and raises the `KeyboardInterrupt`.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// run(args: list[str]) -> tuple[int, str, str]
///
/// Run `reconbound ARGS...` in-process (without the program name) and return
/// (exit status, stdout, stderr). The GIL is released while the command runs; Ctrl-C stops
/// a run of trials between two trials and raises KeyboardInterrupt.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<(i32, String, String)> {
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<reconbound_cli::Outcome>();
    let worker_flag = Arc::clone(&flag);
    let worker = std::thread::Builder::new()
        .name(String::from("reconbound"))
        .spawn(move || {
            let out = reconbound::attacks::trial::with_interrupt(worker_flag, || {
                reconbound_cli::run(&args)
            });
            let _ = tx.send(out);
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let mut rx = rx;
    loop {
        // The receiver moves into the GIL-free closure and back (it is Send, not Sync).
        let (received, back) = py.detach(move || {
            let r = rx.recv_timeout(Duration::from_millis(50));
            (r, rx)
        });
        rx = back;
        match received {
            Ok(out) => {
                let _ = worker.join();
                return Ok((out.code, out.stdout, out.stderr));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    flag.store(true, Ordering::SeqCst);
                    // The run returns within about one trial; its output is discarded.
                    let _ = py.detach(|| worker.join());
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "reconbound: the command's thread ended without a result (a bug: please report it)",
                ));
            }
        }
    }
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
