//! [`got`]: the Python type name of a value as mismatch messages say it, a leaf both
//! decoding ([`crate::decode`]) and writing along a type ([`crate::encode`]) use.

use pyo3::prelude::*;

/// The Python type name of `value` as messages say it (`null` for `None`).
pub(crate) fn got(value: &Bound<'_, PyAny>) -> String {
    if value.is_none() {
        return "null".to_owned();
    }
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}
