//! What does not fit a type, and how it is reported: the path to the place (JSON names,
//! `items[0].byName['k']`) and the problem, raised as `attrflow.errors.ValueMappingError`.
//! Decoding ([`crate::decode`]) and writing along a type ([`crate::transcode`]) report
//! through it alike.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};
use serde_json::Value;

static VALUE_MAPPING_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A step of the path to a mismatch, innermost last once rendered.
pub(crate) enum Step {
    Field(String),
    Index(usize),
    Key(String),
}

/// A value that does not fit its type: where (steps collected innermost first) and why.
pub(crate) struct Mismatch {
    steps: Vec<Step>,
    problem: String,
}

/// Why decoding stopped: a mismatch to report, or a Python error raised while building.
pub(crate) enum Failure {
    Mismatch(Mismatch),
    Python(PyErr),
}

impl From<PyErr> for Failure {
    fn from(error: PyErr) -> Self {
        Failure::Python(error)
    }
}

impl Failure {
    pub(crate) fn at(problem: String) -> Self {
        Failure::Mismatch(Mismatch {
            steps: Vec::new(),
            problem,
        })
    }

    pub(crate) fn within(mut self, step: Step) -> Self {
        if let Failure::Mismatch(mismatch) = &mut self {
            mismatch.steps.push(step);
        }
        self
    }
}

/// Where a decoding keeps its real failure while serde unwinds with a placeholder error:
/// the level that fails puts it here, each enclosing level adds its [`Step`] on the way out,
/// and the top turns it into the exception (an error with nothing here is serde_json's own:
/// the text is not JSON).
pub(crate) type Stash = Cell<Option<Failure>>;

/// The message of the placeholder error serde carries while the failure waits in a [`Stash`].
const STASHED: &str = "the value does not fit its type";

/// `failure` put in `stash`, and the placeholder error that carries it up through serde.
pub(crate) fn stashed<E: serde::de::Error>(stash: &Stash, failure: Failure) -> E {
    stash.set(Some(failure));
    E::custom(STASHED)
}

/// `error`, a part's, passed on with `step` (where the part is) added to the failure waiting
/// in `stash`, if there is one (serde_json's own errors carry their position instead).
pub(crate) fn within<E>(stash: &Stash, error: E, step: impl FnOnce() -> Step) -> E {
    if let Some(failure) = stash.take() {
        stash.set(Some(failure.within(step())));
    }
    error
}

/// The Python type name of a decoded JSON value, as messages say it.
pub(crate) fn got(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The path of a mismatch as the codec writes it: `items[0].byName['k']`.
fn render(py: Python<'_>, steps: &[Step]) -> String {
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Field(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
            }
            Step::Index(index) => path.push_str(&format!("[{index}]")),
            Step::Key(key) => {
                let quoted = PyString::new(py, key)
                    .repr()
                    .map(|repr| repr.to_string())
                    .unwrap_or_else(|_| format!("{key:?}"));
                path.push_str(&format!("[{quoted}]"));
            }
        }
    }
    path
}

/// `attrflow.errors.ValueMappingError(message, path)`, or the import failure.
pub(crate) fn mapping_error(py: Python<'_>, message: String, path: &str) -> PyErr {
    match VALUE_MAPPING_ERROR.import(py, "attrflow.errors", "ValueMappingError") {
        Ok(class) => PyErr::from_type(class.clone(), (message, path.to_owned())),
        Err(error) => error,
    }
}

/// The exception of a failed decoding or encoding (`direction`) of `what`.
pub(crate) fn failure_error(
    py: Python<'_>,
    failure: Failure,
    direction: &str,
    what: &str,
) -> PyErr {
    match failure {
        Failure::Python(error) => error,
        Failure::Mismatch(mismatch) => {
            let path = render(py, &mismatch.steps);
            let where_ = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            let message = format!("cannot {direction} {what}: {where_}{}", mismatch.problem);
            mapping_error(py, message, &path)
        }
    }
}
