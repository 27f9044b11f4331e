//! The core's retry policy for Python (`attrflow.retry.RetryPolicy`): what every flow
//! client retries lock conflicts by.

use std::time::Duration;

use attrflow::retry::RetryPolicy as CorePolicy;
use pyo3::prelude::*;

use crate::errors::{to_py_err, IntoPyResult};

/// The core's retry policy for lock conflicts: at most `max_attempts` calls, pauses drawn
/// at random below a bound doubling from `first_delay` to `max_delay` seconds, and no new
/// call after `budget` seconds.
#[pyclass(module = "attrflow._native", name = "RetryPolicy", frozen, eq)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PyRetryPolicy(pub(super) CorePolicy);

fn seconds(py: Python<'_>, what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        to_py_err(
            py,
            attrflow::Error::invalid_input(format!(
                "a retry policy's {what} must be a number of seconds from 0, got {value}"
            )),
        )
    })
}

#[pymethods]
impl PyRetryPolicy {
    #[new]
    #[pyo3(signature = (max_attempts = None, first_delay = None, max_delay = None, budget = None))]
    fn new(
        py: Python<'_>,
        max_attempts: Option<u32>,
        first_delay: Option<f64>,
        max_delay: Option<f64>,
        budget: Option<f64>,
    ) -> PyResult<Self> {
        let default = CorePolicy::DEFAULT;
        let duration = |what, value: Option<f64>, default: Duration| match value {
            Some(value) => seconds(py, what, value),
            None => Ok(default),
        };
        CorePolicy::new(
            max_attempts.unwrap_or(default.max_attempts()),
            duration("first delay", first_delay, default.first_delay())?,
            duration("max delay", max_delay, default.max_delay())?,
            duration("budget", budget, default.budget())?,
        )
        .map(PyRetryPolicy)
        .into_py_result(py)
    }

    /// The most calls, the first included.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.0.max_attempts()
    }

    /// The bound of the first pause, in seconds.
    #[getter]
    fn first_delay(&self) -> f64 {
        self.0.first_delay().as_secs_f64()
    }

    /// The bound of any pause, in seconds.
    #[getter]
    fn max_delay(&self) -> f64 {
        self.0.max_delay().as_secs_f64()
    }

    /// The time after which no new call starts, in seconds.
    #[getter]
    fn budget(&self) -> f64 {
        self.0.budget().as_secs_f64()
    }

    /// The pause, in seconds, before retry `retry` (from 0) after `elapsed` seconds since
    /// the first call; `None` when the policy gives up.
    fn pause_before(&self, py: Python<'_>, retry: u32, elapsed: f64) -> PyResult<Option<f64>> {
        let elapsed = seconds(py, "elapsed time", elapsed)?;
        Ok(self
            .0
            .pause_before(retry, elapsed)
            .map(|pause| pause.as_secs_f64()))
    }

    fn __repr__(&self) -> String {
        format!(
            "RetryPolicy(max_attempts={}, first_delay={}, max_delay={}, budget={})",
            self.max_attempts(),
            self.first_delay(),
            self.max_delay(),
            self.budget()
        )
    }
}
