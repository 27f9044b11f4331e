//! `Decoder.encode_json`: Python values written as JSON text along the type a [`Decoder`]
//! describes, in one pass with no intermediate Python data.
//!
//! The checks are the codec's: a `str` field takes a `str`, an `int` field an `int` that is
//! not a `bool` and fits in 64 bits (i64 or u64), a `float` field an `int` or a finite
//! `float` (written as a float), a dataclass field an instance of that dataclass, a list,
//! tuple or dict field a `list`, `tuple` or `dict` (whose keys are `str`); union options are
//! tried in order; an untyped (`Any`) part is written as `json.dumps` writes it. A mismatch
//! raises `ValueMappingError` naming the field path (Python attribute names). The text is
//! exactly `json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)` of
//! the value's JSON data (dataclass fields in their declared order under their camelCase
//! names); text holding a lone surrogate raises `InvalidInputError` naming where.

use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::decode::{Decoder, Node};
use crate::mismatch::{failure_error, Failure, Step};
use crate::python_type_name::got;
use crate::text::lone_surrogate_in_json;

/// How deeply containers may nest: what the core's JSON parser accepts.
const MAX_DEPTH: usize = 128;

static JSON_DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

type Written = Result<(), Failure>;

impl Decoder {
    /// `value` as compact JSON text along the type (see the module's documentation), or
    /// the error naming the mismatch in the value `what()` names.
    pub(crate) fn encode_value(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        what: impl FnOnce() -> String,
    ) -> PyResult<String> {
        let mut out = String::with_capacity(128);
        self.write(py, 0, value, 0, &mut out)
            .map_err(|failure| failure_error(py, failure, "encode", &what()))?;
        Ok(out)
    }

    fn write(
        &self,
        py: Python<'_>,
        index: usize,
        value: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut String,
    ) -> Written {
        match &self.nodes[index] {
            Node::Str => match value.cast::<PyString>() {
                Ok(text) => write_string(text, out),
                Err(_) => Err(expected("str", value)),
            },
            Node::Int => {
                if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
                    return Err(expected("int", value));
                }
                write_int(value, out)
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    out.push_str(if flag.is_true() { "true" } else { "false" });
                    Ok(())
                }
                Err(_) => Err(expected("bool", value)),
            },
            Node::Float => {
                if value.is_instance_of::<PyBool>()
                    || !(value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>())
                {
                    return Err(expected("float", value));
                }
                let number: f64 = value.extract()?;
                if !number.is_finite() {
                    return Err(Failure::at(format!("{} has no JSON form", value.repr()?)));
                }
                out.push_str(&PyFloat::new(py, number).repr()?.to_cow()?);
                Ok(())
            }
            Node::Null => {
                if value.is_none() {
                    out.push_str("null");
                    Ok(())
                } else {
                    Err(expected("null", value))
                }
            }
            Node::Any => write_any(py, value, depth, out),
            Node::List(item) => match value.cast::<PyList>() {
                Ok(items) => self.write_items(py, *item, items.iter(), depth, out),
                Err(_) => Err(expected("list", value)),
            },
            Node::Tuple(item) => match value.cast::<PyTuple>() {
                Ok(items) => self.write_items(py, *item, items.iter(), depth, out),
                Err(_) => Err(expected("tuple", value)),
            },
            Node::Dict(item) => {
                let Ok(entries) = value.cast::<PyDict>() else {
                    return Err(expected("dict", value));
                };
                nest(depth)?;
                out.push('{');
                for (i, (key, item_value)) in entries.iter().enumerate() {
                    let Ok(key) = key.cast::<PyString>() else {
                        return Err(Failure::at(format!(
                            "dict keys must be str, got {}",
                            got(&key)
                        )));
                    };
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(key, out)?;
                    out.push(':');
                    self.write(py, *item, &item_value, depth + 1, out)
                        .map_err(|f| f.within(Step::Key(key.to_string())))?;
                }
                out.push('}');
                Ok(())
            }
            Node::Union {
                accepts_none,
                options,
                names,
            } => {
                if *accepts_none && value.is_none() {
                    out.push_str("null");
                    return Ok(());
                }
                let start = out.len();
                let mut first = None;
                for option in options {
                    match self.write(py, *option, value, depth, out) {
                        Ok(()) => return Ok(()),
                        Err(Failure::Python(error)) => return Err(Failure::Python(error)),
                        Err(mismatch) => {
                            out.truncate(start);
                            first.get_or_insert(mismatch);
                        }
                    }
                }
                match first {
                    Some(mismatch) if options.len() == 1 => Err(mismatch),
                    _ => Err(Failure::at(format!("expected {names}, got {}", got(value)))),
                }
            }
            Node::Dataclass(class) => {
                if !value.is_instance(class.class.bind(py))? {
                    return Err(Failure::at(format!(
                        "expected {}, got {}",
                        class.name,
                        got(value)
                    )));
                }
                nest(depth)?;
                out.push('{');
                for (i, field) in class.fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_escaped_string(&field.key, out);
                    out.push(':');
                    let attribute = field.attribute.bind(py);
                    let field_value = value.getattr(attribute).map_err(|error| {
                        if error.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) {
                            // Deleted from the instance (`del value.field`), or never set.
                            Failure::at("field is missing".to_owned())
                                .within(Step::Field(attribute.to_string()))
                        } else {
                            Failure::Python(error)
                        }
                    })?;
                    self.write(py, field.node, &field_value, depth + 1, out)
                        .map_err(|f| f.within(Step::Field(attribute.to_string())))?;
                }
                out.push('}');
                Ok(())
            }
            Node::Convert(convert) => {
                let stored = convert.call(&convert.to_json, value)?;
                self.write(py, convert.inner, &stored, depth, out)
            }
            Node::Unsupported(problem) => Err(Failure::at(problem.clone())),
        }
    }

    fn write_items<'py>(
        &self,
        py: Python<'py>,
        item: usize,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
        out: &mut String,
    ) -> Written {
        nest(depth)?;
        out.push('[');
        for (i, item_value) in items.enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.write(py, item, &item_value, depth + 1, out)
                .map_err(|f| f.within(Step::Index(i)))?;
        }
        out.push(']');
        Ok(())
    }
}

/// A mismatch when a container would nest deeper than [`MAX_DEPTH`].
fn nest(depth: usize) -> Written {
    if depth >= MAX_DEPTH {
        return Err(Failure::at(format!(
            "nested more than {MAX_DEPTH} levels deep"
        )));
    }
    Ok(())
}

/// An `Any` value as `json.dumps` writes it: plain JSON data (exact `dict` with `str` keys,
/// `list`, `str`, `int`, finite `float`, `bool`, `None`) here, anything else (a tuple, a
/// subclass, a non-`str` key, a value `json.dumps` refuses) by `json.dumps` itself.
fn write_any(py: Python<'_>, value: &Bound<'_, PyAny>, depth: usize, out: &mut String) -> Written {
    let start = out.len();
    if depth < MAX_DEPTH {
        if value.is_none() {
            out.push_str("null");
            return Ok(());
        }
        if let Ok(flag) = value.cast_exact::<PyBool>() {
            out.push_str(if flag.is_true() { "true" } else { "false" });
            return Ok(());
        }
        if let Ok(text) = value.cast_exact::<PyString>() {
            return write_string(text, out);
        }
        if value.is_exact_instance_of::<PyInt>() && write_int(value, out).is_ok() {
            return Ok(());
        }
        if let Ok(number) = value.cast_exact::<PyFloat>() {
            if number.value().is_finite() {
                out.push_str(&number.repr()?.to_cow()?);
                return Ok(());
            }
        }
        if let Ok(items) = value.cast_exact::<PyList>() {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_any(py, &item, depth + 1, out).map_err(|f| f.within(Step::Index(i)))?;
            }
            out.push(']');
            return Ok(());
        }
        if let Ok(entries) = value.cast_exact::<PyDict>() {
            if entries
                .keys()
                .iter()
                .all(|key| key.is_exact_instance_of::<PyString>())
            {
                out.push('{');
                for (i, (key, item)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let key = key.cast::<PyString>().map_err(PyErr::from)?;
                    write_string(key, out)?;
                    out.push(':');
                    write_any(py, &item, depth + 1, out)
                        .map_err(|f| f.within(Step::Key(key.to_string())))?;
                }
                out.push('}');
                return Ok(());
            }
        }
    }
    out.truncate(start);
    nest(depth)?;
    let dumps = JSON_DUMPS.import(py, "json", "dumps")?;
    let options = PyDict::new(py);
    options.set_item("separators", (",", ":"))?;
    options.set_item("ensure_ascii", false)?;
    options.set_item("allow_nan", false)?;
    let text = dumps
        .call((value,), Some(&options))
        .map_err(|error| refused_by_dumps(py, value, error))?;
    let text = text.cast::<PyString>().map_err(PyErr::from)?;
    match text.to_cow() {
        Ok(text) => {
            out.push_str(&text);
            Ok(())
        }
        Err(_) => Err(Failure::Python(lone_surrogate_in_json(py, out, text, None))),
    }
}

/// What `json.dumps` raised for `value`: a mismatch naming its type when it refused the value
/// (a `set`, `bytes`, an object, a NaN, a nesting too deep for it), else the error itself.
fn refused_by_dumps(py: Python<'_>, value: &Bound<'_, PyAny>, error: PyErr) -> Failure {
    let refused = error.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
        || error.is_instance_of::<pyo3::exceptions::PyValueError>(py)
        || error.is_instance_of::<pyo3::exceptions::PyRecursionError>(py);
    if refused {
        Failure::at(format!(
            "a {} has no JSON form ({})",
            got(value),
            error.value(py)
        ))
    } else {
        Failure::Python(error)
    }
}

/// An `int` (not a `bool`) as JSON, or the mismatch of one that does not fit in 64 bits.
fn write_int(value: &Bound<'_, PyAny>, out: &mut String) -> Written {
    if let Ok(signed) = value.extract::<i64>() {
        let _ = write!(out, "{signed}");
    } else if let Ok(unsigned) = value.extract::<u64>() {
        let _ = write!(out, "{unsigned}");
    } else {
        return Err(Failure::at(format!(
            "{} does not fit in 64 bits",
            value.str()?
        )));
    }
    Ok(())
}

/// A `str` as a JSON string, or `InvalidInputError` for one holding a lone surrogate.
fn write_string(text: &Bound<'_, PyString>, out: &mut String) -> Written {
    match text.to_cow() {
        Ok(text) => {
            write_escaped_string(&text, out);
            Ok(())
        }
        Err(_) => {
            out.push('"');
            let escape: fn(&str, &mut String) = escape_into;
            Err(Failure::Python(lone_surrogate_in_json(
                text.py(),
                out,
                text,
                Some(escape),
            )))
        }
    }
}

fn write_escaped_string(text: &str, out: &mut String) {
    out.push('"');
    escape_into(text, out);
    out.push('"');
}

/// `text` as the content of a JSON string the way `json.dumps(ensure_ascii=False)` writes
/// it: the quote, the backslash and the control characters escaped, the rest as it is.
fn escape_into(text: &str, out: &mut String) {
    if !text
        .bytes()
        .any(|byte| byte < 0x20 || byte == b'"' || byte == b'\\')
    {
        out.push_str(text);
        return;
    }
    for character in text.chars() {
        match named_escape(character) {
            Some(escape) => out.push_str(escape),
            None if character < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(character));
            }
            None => out.push(character),
        }
    }
}

/// The short escape JSON (and Python's `json.dumps`) writes for `character`, if it has one:
/// the quote, the backslash and five control characters.
pub(crate) fn named_escape(character: char) -> Option<&'static str> {
    Some(match character {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        _ => return None,
    })
}

fn expected(name: &str, value: &Bound<'_, PyAny>) -> Failure {
    Failure::at(format!("expected {name}, got {}", got(value)))
}
