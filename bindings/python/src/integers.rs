//! Python `int` arguments as Rust `u64`, in one place.
//!
//! A Python `int` may be negative or larger than any `u64`; such an argument raises the
//! core's `InvalidInputError` built for it (naming the argument and showing the value as
//! given) instead of a bare `OverflowError`, as every other bad input does. Anything but an
//! `int` still raises PyO3's `TypeError`.

use std::fmt;

use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::errors::to_py_err;

/// `value` as a `u64`; an `int` out of range raises the error `out_of_range` builds from
/// the value as Python shows it.
pub(crate) fn unsigned(
    value: &Bound<'_, PyAny>,
    out_of_range: impl FnOnce(&dyn fmt::Display) -> attrflow::Error,
) -> PyResult<u64> {
    if !value.is_instance_of::<PyInt>() {
        return value.extract();
    }
    value
        .extract::<u64>()
        .map_err(|_| to_py_err(value.py(), out_of_range(value)))
}

/// [`unsigned`] for an optional argument: `None` stays `None`.
pub(crate) fn optional_unsigned(
    value: Option<&Bound<'_, PyAny>>,
    out_of_range: impl FnOnce(&dyn fmt::Display) -> attrflow::Error,
) -> PyResult<Option<u64>> {
    match value {
        Some(value) if !value.is_none() => unsigned(value, out_of_range).map(Some),
        _ => Ok(None),
    }
}
