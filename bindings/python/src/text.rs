//! Python `str` arguments as Rust text, in one place.
//!
//! A Python `str` may hold a lone surrogate (`'a\ud800'`), which UTF-8 cannot encode, so
//! Rust cannot take it as a `String`. Arguments of these types raise the core's
//! `InvalidInputError` naming the text and where the surrogate is (inside JSON text: the
//! path of the string or key), instead of a bare `UnicodeEncodeError`; the argument's own
//! name is added as a note by PyO3 (`while processing 'flow_id'`).

use std::ops::Deref;

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors::to_py_err;

/// A `str` argument (its `Debug` form is the string's, quoted, as in messages).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Text(pub(crate) String);

/// A `str` argument holding JSON text (an RPC input, a value written).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct JsonText(pub(crate) String);

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Deref for JsonText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Text> for String {
    fn from(text: Text) -> String {
        text.0
    }
}

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        extract(obj, false).map(Text)
    }
}

impl FromPyObject<'_, '_> for JsonText {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        extract(obj, true).map(JsonText)
    }
}

/// The one conversion: `obj` as a `String`, or `InvalidInputError` for text UTF-8 cannot
/// hold.
fn extract(obj: Borrowed<'_, '_, PyAny>, json: bool) -> PyResult<String> {
    let py = obj.py();
    let text = obj.cast::<PyString>()?;
    match text.to_cow() {
        Ok(text) => Ok(text.into_owned()),
        Err(error) if !error.is_instance_of::<PyUnicodeEncodeError>(py) => Err(error),
        Err(_) if json => Err(lone_surrogate_in_json(py, "", &text, None)),
        Err(error) => {
            let index: usize = error.value(py).getattr("start")?.extract()?;
            let message = format!(
                "text {} is not valid Unicode: it holds a lone surrogate at index {index}",
                text.repr()?
            );
            Err(to_py_err(py, attrflow::Error::invalid_input(message)))
        }
    }
}

/// `InvalidInputError` for JSON text holding a lone surrogate (not valid Unicode) in `text`,
/// naming where it is: `written` is the JSON text before `text`, which follows it written
/// by `escape` (as a JSON string's content) or as it is.
pub(crate) fn lone_surrogate_in_json(
    py: Python<'_>,
    written: &str,
    text: &Bound<'_, PyString>,
    escape: Option<fn(&str, &mut String)>,
) -> PyErr {
    // Encode it anyway, and keep the valid UTF-8 before the surrogate.
    let bytes = match text.call_method1("encode", ("utf-8", "surrogatepass")) {
        Ok(bytes) => bytes,
        Err(error) => return error,
    };
    let bytes = match bytes.cast::<PyBytes>() {
        Ok(bytes) => bytes.as_bytes(),
        Err(error) => return error.into(),
    };
    let valid = match std::str::from_utf8(bytes) {
        Ok(all) => all,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut before = written.to_owned();
    match escape {
        Some(escape) => escape(valid, &mut before),
        None => before.push_str(valid),
    }
    let message = format!(
        "JSON text holds a lone surrogate (not valid Unicode) at {} (character {})",
        attrflow::json::place_at_end(&before),
        before.chars().count()
    );
    to_py_err(py, attrflow::Error::invalid_input(message))
}
