//! `reconbound._native`: the one entry point of the Python package. [`run`] hands the
//! argument list to `reconbound::cli::run` — the whole command line, in-process — with the
//! GIL released, and returns its exit status, standard output and standard error. The
//! keyword-to-flag translation and the JSON parsing are in `reconbound/__init__.py`.

use pyo3::prelude::*;

/// run(args: list[str]) -> tuple[int, str, str]
///
/// Run `reconbound ARGS...` in-process (without the program name) and return
/// (exit status, stdout, stderr). The GIL is released while the command runs.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> (i32, String, String) {
    let out = py.detach(move || reconbound::cli::run(&args));
    (out.code, out.stdout, out.stderr)
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
