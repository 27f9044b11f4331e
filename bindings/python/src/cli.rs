//! The `attrflow` command-line tool inside the native module, so the wheel installs it as a
//! console script (`attrflow.cli:main`) with no second binary.

use std::ffi::OsString;

use pyo3::prelude::*;

/// Runs the `attrflow` command line `argv` (program name first, each argument as the bytes
/// the system gave it, `os.fsencode`) with the GIL released; returns its exit code. An
/// argument that is not UTF-8 reaches the tool as such, which refuses it in one line.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<Vec<u8>>) -> u8 {
    let argv: Vec<OsString> = argv.into_iter().map(os_string).collect();
    py.detach(move || attrflow_cli::main_with(argv))
}

#[cfg(unix)]
fn os_string(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

#[cfg(not(unix))]
fn os_string(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}
