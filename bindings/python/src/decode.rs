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
use serde_json::{Map, Number, Value};

use crate::errors::IntoPyResult;

static VALUE_MAPPING_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// One node of a type's description; child types are indices into the table.
enum Node {
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
struct Dataclass {
    name: String,
    new: Py<PyAny>,
    class: Py<PyAny>,
    fields: Vec<Field>,
    post_init: bool,
}

struct Field {
    attribute: Py<PyString>,
    key: String,
    node: usize,
}

/// A step of the path to a mismatch, innermost last once rendered.
enum Step {
    Field(String),
    Index(usize),
    Key(String),
}

/// A value that does not fit its type: where (steps collected innermost first) and why.
struct Mismatch {
    steps: Vec<Step>,
    problem: String,
}

/// Why decoding stopped: a mismatch to report, or a Python error raised while building.
enum Failure {
    Mismatch(Mismatch),
    Python(PyErr),
}

impl From<PyErr> for Failure {
    fn from(error: PyErr) -> Self {
        Failure::Python(error)
    }
}

impl Failure {
    fn at(problem: String) -> Self {
        Failure::Mismatch(Mismatch {
            steps: Vec::new(),
            problem,
        })
    }

    fn within(mut self, step: Step) -> Self {
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
    nodes: Vec<Node>,
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
}

impl Decoder {
    /// `value` decoded as the type, or `ValueMappingError` naming the mismatch.
    pub(crate) fn decode<'py>(
        &self,
        py: Python<'py>,
        value: &Value,
        what: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.node(py, 0, value) {
            Ok(decoded) => Ok(decoded),
            Err(Failure::Python(error)) => Err(error),
            Err(Failure::Mismatch(mismatch)) => {
                let path = render(py, &mismatch.steps);
                let where_ = if path.is_empty() {
                    String::new()
                } else {
                    format!("{path}: ")
                };
                let message = format!("cannot decode {what}: {where_}{}", mismatch.problem);
                Err(mapping_error(py, message, &path))
            }
        }
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
        let values = self.fields(py, class, entries)?;
        let instance = class.new.bind(py).call1((class.class.bind(py),))?;
        for (field, decoded) in class.fields.iter().zip(values) {
            set_attribute(&instance, field.attribute.bind(py), &decoded)?;
        }
        if class.post_init {
            instance.call_method0("__post_init__")?;
        }
        Ok(instance)
    }

    fn fields<'py>(
        &self,
        py: Python<'py>,
        class: &Dataclass,
        entries: &Map<String, Value>,
    ) -> Result<Vec<Bound<'py, PyAny>>, Failure> {
        let mut values = Vec::with_capacity(class.fields.len());
        for field in &class.fields {
            let Some(field_value) = entries.get(&field.key) else {
                return Err(Failure::at("field is missing".to_owned())
                    .within(Step::Field(field.key.clone())));
            };
            values.push(
                self.node(py, field.node, field_value)
                    .map_err(|f| f.within(Step::Field(field.key.clone())))?,
            );
        }
        Ok(values)
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
fn got(value: &Value) -> &'static str {
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
