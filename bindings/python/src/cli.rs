//! The `attrflow` command-line tool inside the native module, so the wheel installs it as a
//! console script (`attrflow.cli:main`) with no second binary.

use pyo3::prelude::*;

/// Runs the `attrflow` command line `argv` (program name first) with the GIL released;
/// returns its exit code.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(move || attrflow_cli::main_with(argv))
}
