//! `attrflow._native.Decoder`: JSON decoded straight into the Python values a type declares.
//!
//! The Python codec (`attrflow.codec`) describes a type once — its dataclasses, their
//! camelCase field names, lists, tuples, dicts, unions and scalars — as a table of nodes;
//! this module walks a `serde_json::Value` along that table and builds the Python objects
//! directly, with the codec's strictness: every declared field must be present, `bool` is
//! not an `int`, an `int` is accepted where a `float` is declared, unknown fields are
//! ignored. A mismatch raises `ValueMappingError` naming the field path (JSON names) and
//! what was expected. There is no other decoding path.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple, PyType};
use serde_json::{Number, Value};

use crate::encode::named_escape;
use crate::errors::IntoPyResult;

static VALUE_MAPPING_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

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
    Unsupported(String),
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

type Decoded<'py> = Result<Bound<'py, PyAny>, Failure>;

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
    /// `("dataclass", cls, name, [(attribute, key, i), ...], has_post_init)` or
    /// `("unsupported", problem)`.
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
        let value: Value = serde_json::from_str(text).map_err(|error| {
            mapping_error(py, format!("cannot decode {what}: not JSON: {error}"), "")
        })?;
        self.decode(py, &value, what)
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
        self.node(py, 0, value)
            .map_err(|failure| failure_error(py, failure, "decode", what))
    }

    /// `value` written as JSON text along the type: a dataclass's fields in their declared
    /// order under their JSON names (other keys left out), the rest as Python's
    /// `json.dumps(value, ensure_ascii=True, separators=(",", ":"))` writes the decoded value.
    /// Needs no interpreter, so it runs on a worker thread. A value that does not fit the
    /// type, or a float (whose text Python writes its own way), is a failure to report with
    /// [`failure_error`].
    fn encode(&self, index: usize, value: &Value, out: &mut Vec<u8>) -> Result<(), Failure> {
        match (&self.nodes[index], value) {
            (Node::Null, Value::Null) => out.extend_from_slice(b"null"),
            (Node::Null, other) => return Err(expected("null", other)),
            (Node::Bool, Value::Bool(flag)) => {
                out.extend_from_slice(if *flag { b"true" } else { b"false" });
            }
            (Node::Bool, other) => return Err(expected("bool", other)),
            (Node::Int, Value::Number(number)) if !number.is_f64() => {
                out.extend_from_slice(number.to_string().as_bytes());
            }
            (Node::Int, other) => return Err(expected("int", other)),
            (Node::Str, Value::String(text)) => write_ascii_string(text, out),
            (Node::Str, other) => return Err(expected("str", other)),
            (Node::List(item) | Node::Tuple(item), Value::Array(items)) => {
                out.push(b'[');
                for (i, item_value) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.encode(*item, item_value, out)
                        .map_err(|f| f.within(Step::Index(i)))?;
                }
                out.push(b']');
            }
            (Node::Dict(item), Value::Object(entries)) => {
                out.push(b'{');
                for (i, (key, item_value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_ascii_string(key, out);
                    out.push(b':');
                    self.encode(*item, item_value, out)
                        .map_err(|f| f.within(Step::Key(key.clone())))?;
                }
                out.push(b'}');
            }
            (Node::Union { accepts_none, .. }, Value::Null) if *accepts_none => {
                out.extend_from_slice(b"null");
            }
            (Node::Union { options, names, .. }, value) => {
                let mut first = None;
                for option in options {
                    let mut attempt = Vec::new();
                    match self.encode(*option, value, &mut attempt) {
                        Ok(()) => {
                            out.extend_from_slice(&attempt);
                            return Ok(());
                        }
                        Err(mismatch) => {
                            first.get_or_insert(mismatch);
                        }
                    }
                }
                return match first {
                    Some(mismatch) if options.len() == 1 => Err(mismatch),
                    _ => Err(Failure::at(format!("expected {names}, got {}", got(value)))),
                };
            }
            (Node::Dataclass(class), Value::Object(entries)) => {
                out.push(b'{');
                for (i, field) in class.fields.iter().enumerate() {
                    let Some(field_value) = entries.get(&field.key) else {
                        return Err(Failure::at("field is missing".to_owned())
                            .within(Step::Field(field.key.clone())));
                    };
                    if i > 0 {
                        out.push(b',');
                    }
                    write_ascii_string(&field.key, out);
                    out.push(b':');
                    self.encode(field.node, field_value, out)
                        .map_err(|f| f.within(Step::Field(field.key.clone())))?;
                }
                out.push(b'}');
            }
            (Node::Dataclass(class), other) => {
                return Err(Failure::at(format!(
                    "expected a JSON object for {}, got {}",
                    class.name,
                    got(other)
                )));
            }
            (Node::List(_) | Node::Tuple(_), other) => {
                return Err(Failure::at(format!(
                    "expected a JSON array, got {}",
                    got(other)
                )));
            }
            (Node::Dict(_), other) => {
                return Err(Failure::at(format!(
                    "expected a JSON object, got {}",
                    got(other)
                )));
            }
            (Node::Any | Node::Float, _) => {
                return Err(Failure::at(
                    "only values without floats or untyped parts are re-encoded".to_owned(),
                ));
            }
            (Node::Unsupported(problem), _) => return Err(Failure::at(problem.clone())),
        }
        Ok(())
    }

    fn node<'py>(&self, py: Python<'py>, index: usize, value: &Value) -> Decoded<'py> {
        match &self.nodes[index] {
            Node::Any => Ok(any(py, value)?),
            Node::Null => match value {
                Value::Null => Ok(py.None().into_bound(py)),
                other => Err(expected("null", other)),
            },
            Node::Bool => match value {
                Value::Bool(flag) => Ok(PyBool::new(py, *flag).to_owned().into_any()),
                other => Err(expected("bool", other)),
            },
            Node::Int => match value {
                Value::Number(number) if !number.is_f64() => Ok(int(py, number)?),
                other => Err(expected("int", other)),
            },
            Node::Float => match value {
                Value::Number(number) => {
                    Ok(PyFloat::new(py, number.as_f64().unwrap_or(f64::NAN)).into_any())
                }
                other => Err(expected("float", other)),
            },
            Node::Str => match value {
                Value::String(text) => Ok(PyString::new(py, text).into_any()),
                other => Err(expected("str", other)),
            },
            Node::List(item) | Node::Tuple(item) => {
                let Value::Array(items) = value else {
                    return Err(Failure::at(format!(
                        "expected a JSON array, got {}",
                        got(value)
                    )));
                };
                let mut decoded = Vec::with_capacity(items.len());
                for (i, item_value) in items.iter().enumerate() {
                    decoded.push(
                        self.node(py, *item, item_value)
                            .map_err(|f| f.within(Step::Index(i)))?,
                    );
                }
                Ok(if matches!(self.nodes[index], Node::Tuple(_)) {
                    PyTuple::new(py, decoded)?.into_any()
                } else {
                    PyList::new(py, decoded)?.into_any()
                })
            }
            Node::Dict(item) => {
                let Value::Object(entries) = value else {
                    return Err(Failure::at(format!(
                        "expected a JSON object, got {}",
                        got(value)
                    )));
                };
                let decoded = PyDict::new(py);
                for (key, item_value) in entries {
                    let item_decoded = self
                        .node(py, *item, item_value)
                        .map_err(|f| f.within(Step::Key(key.clone())))?;
                    decoded.set_item(key, item_decoded)?;
                }
                Ok(decoded.into_any())
            }
            Node::Union {
                accepts_none,
                options,
                names,
            } => {
                if *accepts_none && value.is_null() {
                    return Ok(py.None().into_bound(py));
                }
                let mut first = None;
                for option in options {
                    match self.node(py, *option, value) {
                        Ok(decoded) => return Ok(decoded),
                        Err(Failure::Python(error)) => return Err(Failure::Python(error)),
                        Err(mismatch) => {
                            first.get_or_insert(mismatch);
                        }
                    }
                }
                match first {
                    Some(mismatch) if options.len() == 1 => Err(mismatch),
                    _ => Err(Failure::at(format!("expected {names}, got {}", got(value)))),
                }
            }
            Node::Dataclass(class) => self.dataclass(py, class, value),
            Node::Unsupported(problem) => Err(Failure::at(problem.clone())),
        }
    }

    fn dataclass<'py>(&self, py: Python<'py>, class: &Dataclass, value: &Value) -> Decoded<'py> {
        let Value::Object(entries) = value else {
            return Err(Failure::at(format!(
                "expected a JSON object for {}, got {}",
                class.name,
                got(value)
            )));
        };
        let instance = class.instantiate(py)?;
        for field in &class.fields {
            let Some(field_value) = entries.get(&field.key) else {
                return Err(Failure::at("field is missing".to_owned())
                    .within(Step::Field(field.key.clone())));
            };
            let decoded = self
                .node(py, field.node, field_value)
                .map_err(|f| f.within(Step::Field(field.key.clone())))?;
            set_attribute(&instance, field.attribute.bind(py), &decoded)?;
        }
        if class.post_init {
            instance.call_method0("__post_init__")?;
        }
        Ok(instance)
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
fn set_attribute(
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
        "unsupported" => Node::Unsupported(node.get_item(1)?.extract()?),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown node kind {other:?}"
            )))
        }
    })
}

/// A JSON integer as a Python int (i64 or u64: every integer serde_json keeps exact).
fn int<'py>(py: Python<'py>, number: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(signed) = number.as_i64() {
        Ok(signed.into_pyobject(py)?.into_any())
    } else if let Some(unsigned) = number.as_u64() {
        Ok(unsigned.into_pyobject(py)?.into_any())
    } else {
        Ok(number
            .as_f64()
            .unwrap_or(f64::NAN)
            .into_pyobject(py)?
            .into_any())
    }
}

/// Any JSON value as plain Python data (the codec's `Any`).
fn any<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => flag.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(number) if number.is_f64() => number
            .as_f64()
            .unwrap_or(f64::NAN)
            .into_pyobject(py)?
            .into_any(),
        Value::Number(number) => int(py, number)?,
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| any(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(key, any(py, item)?)?;
            }
            dict.into_any()
        }
    })
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

fn expected(name: &str, value: &Value) -> Failure {
    Failure::at(format!("expected {name}, got {}", got(value)))
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
fn mapping_error(py: Python<'_>, message: String, path: &str) -> PyErr {
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

/// `text` as a JSON string the way Python's `json.dumps` writes it with `ensure_ascii`:
/// printable ASCII as is, the quote, the backslash and the usual control characters escaped
/// by name, every other character as `\uXXXX` UTF-16 units in lowercase hex.
fn write_ascii_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let plain = |byte: &u8| (b' '..=b'~').contains(byte) && *byte != b'"' && *byte != b'\\';
    if text.as_bytes().iter().all(plain) {
        out.extend_from_slice(text.as_bytes());
    } else {
        for character in text.chars() {
            match (named_escape(character), character) {
                (Some(escape), _) => out.extend_from_slice(escape.as_bytes()),
                (None, ' '..='~') => out.push(character as u8),
                (None, other) => {
                    let mut units = [0_u16; 2];
                    for unit in other.encode_utf16(&mut units) {
                        write_unicode_escape(*unit, out);
                    }
                }
            }
        }
    }
    out.push(b'"');
}

/// `\uXXXX` for one UTF-16 unit, in lowercase hex as Python writes it.
fn write_unicode_escape(unit: u16, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xf)]);
    }
}

/// A core result written as JSON text along a decoder's type, made without the
/// interpreter by [`encode_output`] and turned into `bytes` by [`encoded`].
pub(crate) struct Encoded(attrflow::Result<Result<Vec<u8>, Failure>>);

/// A core result written as JSON text along `decoder`'s type (see [`Decoder::encode`]).
pub(crate) fn encode_output(result: attrflow::Result<Value>, decoder: &Decoder) -> Encoded {
    Encoded(result.map(|value| {
        let mut out = Vec::with_capacity(4096);
        decoder.encode(0, &value, &mut out).map(|()| out)
    }))
}

/// The bytes of an [`Encoded`] result, raising core errors as their exceptions and an
/// encoding failure as `ValueMappingError` naming `what`.
pub(crate) fn encoded<'py>(
    py: Python<'py>,
    result: Encoded,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match result.0.into_py_result(py)? {
        Ok(bytes) => Ok(pyo3::types::PyBytes::new(py, &bytes).into_any()),
        Err(failure) => Err(failure_error(py, failure, "decode", what)),
    }
}

/// Decodes a core result with `decoder`, raising core errors as their exceptions.
pub(crate) fn decoded<'py>(
    py: Python<'py>,
    result: attrflow::Result<Value>,
    decoder: &Decoder,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let value = result.into_py_result(py)?;
    decoder.decode(py, &value, what)
}
