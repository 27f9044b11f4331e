//! `attrflow._native.Decoder`: JSON decoded straight into the Python values a type declares.
//!
//! The Python codec (`attrflow.codec`) describes a type once — its dataclasses, their
//! camelCase field names, lists, tuples, dicts, unions and scalars — as a table of nodes;
//! this module decodes JSON along that table and builds the Python objects directly, with
//! the codec's strictness: every declared field must be present, `bool` is not an `int`, an
//! `int` is accepted where a `float` is declared, unknown fields are ignored. A mismatch
//! raises `ValueMappingError` naming the field path (JSON names) and what was expected.
//!
//! There is one decoding path, a [`DeserializeSeed`] generic over serde's `Deserializer`:
//! JSON text is decoded in one pass, with no tree of values on the way
//! ([`Decoder::decode_text`]), and a core value is walked by the same rules
//! ([`Decoder::decode`]). Only a union of several types keeps its value, to try each type
//! on it in turn. The seed is in `decode/seed.rs`; this module holds the node table it
//! walks, how a dataclass is built, and the field matching that writing along a type
//! ([`crate::transcode`]) shares. Mismatches are reported through [`crate::mismatch`].

mod seed;

use std::cell::Cell;
use std::fmt;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::mismatch::{failure_error, mapping_error};
use seed::Seed;

/// One node of a type's description; child types are indices into the table.
pub(crate) enum Node {
    Any,
    Null,
    Bool,
    Int,
    Float,
    Str,
    List(usize),
    Tuple(usize),
    Dict(usize),
    Union {
        accepts_none: bool,
        options: Vec<usize>,
        names: String,
    },
    Dataclass(Dataclass),
    Convert(Convert),
    Unsupported(String),
}

/// A type stored as the JSON of another (a `datetime` as its ISO 8601 text, an `Enum` as its
/// value, `bytes` as base64 text): written by calling `to_json` on the value and writing
/// what it returns as node `inner`; read by decoding node `inner` and calling `from_json`
/// on it. Either call raising `TypeError` or `ValueError` is a mismatch naming `name`.
pub(crate) struct Convert {
    pub(crate) inner: usize,
    pub(crate) to_json: Py<PyAny>,
    pub(crate) from_json: Py<PyAny>,
    pub(crate) name: String,
}

impl Convert {
    /// `function` called on `value`: its result, or the mismatch (a `TypeError` or
    /// `ValueError` it raised) naming this type and what `value` was, or its other error.
    pub(crate) fn call<'py>(
        &self,
        function: &Py<PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> Result<Bound<'py, PyAny>, crate::mismatch::Failure> {
        use crate::mismatch::Failure;
        let py = value.py();
        function.bind(py).call1((value,)).map_err(|error| {
            let refused = error.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
                || error.is_instance_of::<PyValueError>(py);
            if refused {
                Failure::at(format!("expected {}, got {}", self.name, described(value)))
            } else {
                Failure::Python(error)
            }
        })
    }
}

/// A value as a mismatch names it: a str by its (shortened) repr, anything else as
/// [`crate::python_type_name::got`] names it (its type).
fn described(value: &Bound<'_, PyAny>) -> String {
    if value.is_instance_of::<PyString>() {
        if let Ok(repr) = value.repr() {
            let repr = repr.to_string();
            return match repr.char_indices().nth(60) {
                Some((cut, _)) => format!("{}...", &repr[..cut]),
                None => repr,
            };
        }
    }
    crate::python_type_name::got(value)
}

/// What is wrong when `node` meets a JSON value of kind `got` (a Python type name), as
/// decoding and writing along a type both say it.
pub(crate) fn mismatch_problem(node: &Node, got: &str) -> String {
    match node {
        Node::Null => format!("expected null, got {got}"),
        Node::Bool => format!("expected bool, got {got}"),
        Node::Int => format!("expected int, got {got}"),
        Node::Float => format!("expected float, got {got}"),
        Node::Str => format!("expected str, got {got}"),
        Node::List(_) | Node::Tuple(_) => format!("expected a JSON array, got {got}"),
        Node::Dict(_) => format!("expected a JSON object, got {got}"),
        Node::Dataclass(class) => {
            format!("expected a JSON object for {}, got {got}", class.name)
        }
        Node::Union { names, .. } => format!("expected {names}, got {got}"),
        Node::Convert(convert) => format!("expected {}, got {got}", convert.name),
        Node::Unsupported(problem) => problem.clone(),
        // Not met when decoding: `Any` takes every JSON value.
        Node::Any => format!("unexpected {got}"),
    }
}

/// How a dataclass is built: `cls.__new__(cls)`, each field set as by `object.__setattr__`
/// (so frozen and slotted dataclasses work), then `__post_init__()` if it has one.
pub(crate) struct Dataclass {
    pub(crate) name: String,
    new: Py<PyAny>,
    pub(crate) class: Py<PyAny>,
    pub(crate) fields: Vec<Field>,
    post_init: bool,
}

pub(crate) struct Field {
    pub(crate) attribute: Py<PyString>,
    pub(crate) key: String,
    pub(crate) node: usize,
}

/// A compiled description of one Python type, made by `attrflow.codec`; decodes JSON text or
/// a core value into that type.
#[pyclass(frozen, name = "Decoder", module = "attrflow._native")]
pub(crate) struct Decoder {
    pub(crate) nodes: Vec<Node>,
}

#[pymethods]
impl Decoder {
    /// Builds a decoder from the codec's node table (node 0 is the type itself). Each node
    /// is a tuple: `("any",)`, `("null",)`, `("bool",)`, `("int",)`, `("float",)`,
    /// `("str",)`, `("list", i)`, `("tuple", i)`, `("dict", i)`,
    /// `("union", accepts_none, [i, ...], names)`,
    /// `("dataclass", cls, name, [(attribute, key, i), ...], has_post_init)`,
    /// `("convert", i, to_json, from_json, name)` or `("unsupported", problem)`.
    #[new]
    fn new(nodes: Vec<Bound<'_, PyTuple>>) -> PyResult<Self> {
        let count = nodes.len();
        let nodes = nodes
            .iter()
            .map(|node| compile(node, count))
            .collect::<PyResult<Vec<_>>>()?;
        if nodes.is_empty() {
            return Err(PyValueError::new_err("a decoder needs at least one node"));
        }
        Ok(Decoder { nodes })
    }

    /// JSON text decoded as the type; `what` names the value in error messages. Text that is
    /// not JSON or does not fit raises `ValueMappingError`.
    fn decode_json<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        what: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.decode_text(py, text, what)
    }

    /// `value` as compact JSON text along the type, checked against it (see
    /// [`crate::encode`]); `what` names the value in error messages. A mismatch raises
    /// `ValueMappingError`, text holding a lone surrogate `InvalidInputError`.
    fn encode_json(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        what: &str,
    ) -> PyResult<String> {
        self.encode_value(py, value, || what.to_owned())
    }
}

impl Decoder {
    /// `value` decoded as the type, or `ValueMappingError` naming the mismatch.
    pub(crate) fn decode<'py>(
        &self,
        py: Python<'py>,
        value: &Value,
        what: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let stash = Cell::new(None);
        Seed::root(self, py, &stash)
            .deserialize(value)
            .map_err(|error| match stash.take() {
                Some(failure) => failure_error(py, failure, "decode", what),
                None => mapping_error(py, format!("cannot decode {what}: {error}"), ""),
            })
    }

    /// JSON text decoded as the type in one pass, straight into the Python objects (no tree
    /// of values is built, except to try the types of a union on a value in turn). Text that
    /// is not JSON (trailing characters included) or does not fit raises `ValueMappingError`,
    /// "not JSON" first: a value that does not fit is reported only once the whole text is
    /// known to be JSON.
    pub(crate) fn decode_text<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        what: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let stash = Cell::new(None);
        let mut deserializer = serde_json::Deserializer::from_str(text);
        Seed::root(self, py, &stash)
            .deserialize(&mut deserializer)
            .and_then(|decoded| deserializer.end().map(|()| decoded))
            .map_err(|error| {
                let not_json = |error: serde_json::Error| {
                    mapping_error(py, format!("cannot decode {what}: not JSON: {error}"), "")
                };
                match stash.take() {
                    // Text that is not JSON is reported as such wherever its fault lies, as
                    // when it was parsed before being decoded: the rest is read to know.
                    Some(failure) => match well_formed(text) {
                        Ok(()) => failure_error(py, failure, "decode", what),
                        Err(error) => not_json(error),
                    },
                    None => not_json(error),
                }
            })
    }
}

/// How many fields a dataclass may have for its values to be gathered on the stack.
pub(crate) const INLINE_FIELDS: usize = 8;

/// The next key of a JSON object that is one of `fields` (the field's index and the field),
/// the values of other keys read and dropped; the search starts at `next`, the field after
/// the last one met, as fields usually come in order.
pub(crate) fn next_field<'de, 'a, A: MapAccess<'de>>(
    map: &mut A,
    fields: &'a [Field],
    next: usize,
) -> Result<Option<(usize, &'a Field)>, A::Error> {
    while let Some(found) = map.next_key_seed(FieldKey { fields, next })? {
        match found {
            Some(field) => return Ok(Some(field)),
            None => map.next_value_seed(Skip)?,
        }
    }
    Ok(None)
}

/// A JSON object's key matched against a dataclass's field keys, without copying it (the
/// text's own bytes, or serde_json's buffer for a key written with escapes): the field's
/// index and the field, or None for a key the dataclass does not declare. The search
/// starts at `next`, the field after the last one met, as fields usually come in order.
struct FieldKey<'a> {
    fields: &'a [Field],
    next: usize,
}

impl<'de, 'a> DeserializeSeed<'de> for FieldKey<'a> {
    type Value = Option<(usize, &'a Field)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'a> Visitor<'de> for FieldKey<'a> {
    type Value = Option<(usize, &'a Field)>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        let start = self.next.min(self.fields.len());
        let (before, after) = self.fields.split_at(start);
        Ok(after
            .iter()
            .enumerate()
            .map(|(offset, field)| (start + offset, field))
            .chain(before.iter().enumerate())
            .find(|(_, field)| field.key == key))
    }
}

/// Whether `text` is one JSON value, read as [`Decoder::decode_text`] reads it (nothing is
/// kept); serde_json's error says where it is not.
fn well_formed(text: &str) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Skip.deserialize(&mut deserializer)?;
    deserializer.end()
}

/// A JSON value read and dropped (an unknown field's), read as serde_json reads any value
/// (nesting limit and number range included), so a value it refuses is refused here too.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skip)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

impl Dataclass {
    /// A new, uninitialised instance, as `cls.__new__(cls)` makes it: through the type's
    /// `tp_new` slot (read at each call, as assigning `__new__` changes it) when the type is
    /// a heap type, whose slots the limited API reads; through `cls.__new__` otherwise.
    fn instantiate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let class = self.class.bind(py);
        let Ok(tp) = class.cast::<PyType>() else {
            return self.new.bind(py).call1((class,));
        };
        let tp = tp.as_type_ptr();
        // SAFETY: `tp` is a live type object (held by `self.class`); PyType_GetSlot is valid
        // on heap types, and a `Py_tp_new` slot holds a `newfunc` (or is null).
        let new = unsafe {
            if pyo3::ffi::PyType_GetFlags(tp) & pyo3::ffi::Py_TPFLAGS_HEAPTYPE == 0 {
                std::ptr::null_mut()
            } else {
                pyo3::ffi::PyType_GetSlot(tp, pyo3::ffi::Py_tp_new)
            }
        };
        if new.is_null() {
            return self.new.bind(py).call1((class,));
        }
        let empty = PyTuple::empty(py);
        // SAFETY: `new` is the type's `newfunc`, called as `type.__call__` calls it, with
        // the type, an empty argument tuple and no keywords, all live under the GIL; it
        // returns a new reference or null with an exception set.
        unsafe {
            let new = std::mem::transmute::<*mut std::ffi::c_void, pyo3::ffi::newfunc>(new);
            let object = new(tp, empty.as_ptr(), std::ptr::null_mut());
            Bound::from_owned_ptr_or_err(py, object)
        }
    }
}

/// Sets `name` on `instance` the way `object.__setattr__` does, bypassing a frozen
/// dataclass's `__setattr__`.
pub(super) fn set_attribute(
    instance: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: all three pointers are live references held by the caller under the GIL;
    // PyObject_GenericSetAttr does not steal them.
    let status = unsafe {
        pyo3::ffi::PyObject_GenericSetAttr(instance.as_ptr(), name.as_ptr(), value.as_ptr())
    };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(instance.py()))
    }
}

fn compile(node: &Bound<'_, PyTuple>, count: usize) -> PyResult<Node> {
    let kind: String = node.get_item(0)?.extract()?;
    let child = |position: usize| -> PyResult<usize> {
        let index: usize = node.get_item(position)?.extract()?;
        if index < count {
            Ok(index)
        } else {
            Err(PyValueError::new_err(format!(
                "node {index} is out of range"
            )))
        }
    };
    Ok(match kind.as_str() {
        "any" => Node::Any,
        "null" => Node::Null,
        "bool" => Node::Bool,
        "int" => Node::Int,
        "float" => Node::Float,
        "str" => Node::Str,
        "list" => Node::List(child(1)?),
        "tuple" => Node::Tuple(child(1)?),
        "dict" => Node::Dict(child(1)?),
        "union" => {
            let options: Vec<usize> = node.get_item(2)?.extract()?;
            if let Some(bad) = options.iter().find(|index| **index >= count) {
                return Err(PyValueError::new_err(format!("node {bad} is out of range")));
            }
            Node::Union {
                accepts_none: node.get_item(1)?.extract()?,
                options,
                names: node.get_item(3)?.extract()?,
            }
        }
        "dataclass" => {
            let class = node.get_item(1)?;
            let fields: Vec<(Bound<'_, PyString>, String, usize)> = node.get_item(3)?.extract()?;
            let mut compiled = Vec::with_capacity(fields.len());
            for (attribute, key, index) in fields {
                if index >= count {
                    return Err(PyValueError::new_err(format!(
                        "node {index} is out of range"
                    )));
                }
                compiled.push(Field {
                    attribute: attribute.unbind(),
                    key,
                    node: index,
                });
            }
            Node::Dataclass(Dataclass {
                name: node.get_item(2)?.extract()?,
                new: class.getattr("__new__")?.unbind(),
                class: class.unbind(),
                fields: compiled,
                post_init: node.get_item(4)?.extract()?,
            })
        }
        "convert" => Node::Convert(Convert {
            inner: child(1)?,
            to_json: node.get_item(2)?.unbind(),
            from_json: node.get_item(3)?.unbind(),
            name: node.get_item(4)?.extract()?,
        }),
        "unsupported" => Node::Unsupported(node.get_item(1)?.extract()?),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown node kind {other:?}"
            )))
        }
    })
}
