//! [`wait_timeout`]: a wait's `timeout` argument, in seconds, checked (the flow clients'
//! tails and follows and the runtime's waits take it).

use std::time::Duration;

use attrflow::chunked_log::timeout_out_of_range;
use pyo3::prelude::*;

use crate::errors::to_py_err;

/// A wait's `timeout` in seconds as a duration; a negative, infinite or NaN one is the
/// core's out-of-range error (the core checks the upper limit).
pub(crate) fn wait_timeout(py: Python<'_>, timeout: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(timeout)
        .map_err(|_| to_py_err(py, timeout_out_of_range(format_args!("{timeout} seconds"))))
}
