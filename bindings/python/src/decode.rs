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
//! on it in turn.

use std::cell::Cell;
use std::fmt;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

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

/// Where a decoding keeps its real failure while serde unwinds with a placeholder error:
/// the level that fails puts it here, each enclosing level adds its [`Step`] on the way out,
/// and the top turns it into the exception (an error with nothing here is serde_json's own:
/// the text is not JSON).
pub(crate) type Stash = Cell<Option<Failure>>;

/// The message of the placeholder error serde carries while the failure waits in a [`Stash`].
pub(crate) const STASHED: &str = "the value does not fit its type";

/// How many fields a dataclass may have for its values to be gathered on the stack.
pub(crate) const INLINE_FIELDS: usize = 8;

/// Decodes one JSON value as node `index` of `decoder`'s table, from any serde
/// `Deserializer` (JSON text, or a core value), into the Python object it declares. It is
/// its own [`Visitor`]: which `visit_*` serde calls says what kind of JSON value was met.
#[derive(Clone, Copy)]
struct Seed<'a, 'py> {
    decoder: &'a Decoder,
    index: usize,
    py: Python<'py>,
    stash: &'a Stash,
}

impl<'a, 'py> Seed<'a, 'py> {
    /// The seed of the whole type (node 0), reporting its failures into `stash`.
    fn root(decoder: &'a Decoder, py: Python<'py>, stash: &'a Stash) -> Self {
        Seed {
            decoder,
            index: 0,
            py,
            stash,
        }
    }

    /// The seed of node `index`, a part of this one's value.
    fn child(self, index: usize) -> Self {
        Seed { index, ..self }
    }

    /// The node this seed decodes as.
    fn node(&self) -> &'a Node {
        &self.decoder.nodes[self.index]
    }

    /// `failure` stashed, and the placeholder error that carries it up through serde.
    fn fail<E: de::Error>(self, failure: Failure) -> E {
        self.stash.set(Some(failure));
        E::custom(STASHED)
    }

    /// A Python error as a stashed failure.
    fn python<T, E: de::Error>(self, result: PyResult<T>) -> Result<T, E> {
        result.map_err(|error| self.fail(Failure::Python(error)))
    }

    /// `error`, a part's, passed on with `step` (where the part is) added to the stashed
    /// failure, if there is one (serde_json's own errors carry their position instead).
    fn within<E>(self, error: E, step: impl FnOnce() -> Step) -> E {
        if let Some(failure) = self.stash.take() {
            self.stash.set(Some(failure.within(step())));
        }
        error
    }

    /// The failure of a JSON value of kind `got` (a Python type name) met by this node.
    fn mismatch<E: de::Error>(self, got: &str) -> E {
        self.fail(Failure::at(mismatch_problem(self.node(), got)))
    }

    /// A union of several types (or none): its value kept, then each type tried on it in
    /// order; the first that fits wins, a Python error stops the search.
    fn union<'de, D: Deserializer<'de>>(
        self,
        deserializer: D,
        accepts_none: bool,
        options: &[usize],
        names: &str,
    ) -> Result<Bound<'py, PyAny>, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if accepts_none && value.is_null() {
            return Ok(self.py.None().into_bound(self.py));
        }
        let mut first = None;
        for option in options {
            match self.child(*option).deserialize(&value) {
                Ok(decoded) => return Ok(decoded),
                Err(error) => match self.stash.take() {
                    Some(Failure::Python(error)) => return Err(self.fail(Failure::Python(error))),
                    Some(mismatch) => {
                        first.get_or_insert(mismatch);
                    }
                    None => {
                        first.get_or_insert(Failure::at(error.to_string()));
                    }
                },
            }
        }
        Err(self.fail(match first {
            Some(mismatch) if options.len() == 1 => mismatch,
            _ => Failure::at(format!("expected {names}, got {}", got(&value))),
        }))
    }

    /// A JSON array's items as node `item`, in a list or (`tuple`) a tuple.
    fn items<'de, A: SeqAccess<'de>>(
        self,
        item: usize,
        tuple: bool,
        mut seq: A,
    ) -> Result<Bound<'py, PyAny>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let index = items.len();
            let next = seq
                .next_element_seed(self.child(item))
                .map_err(|error| self.within(error, || Step::Index(index)))?;
            match next {
                Some(decoded) => items.push(decoded),
                None => break,
            }
        }
        if tuple {
            self.python(PyTuple::new(self.py, items).map(Bound::into_any))
        } else {
            self.python(PyList::new(self.py, items).map(Bound::into_any))
        }
    }

    /// A JSON object as a dict of str keys to values as node `item`; a repeated key keeps its
    /// last value.
    fn dict<'de, A: MapAccess<'de>>(
        self,
        item: usize,
        mut map: A,
    ) -> Result<Bound<'py, PyAny>, A::Error> {
        let dict = PyDict::new(self.py);
        while let Some(key) = map.next_key_seed(Key(self.py))? {
            let value = map.next_value_seed(self.child(item)).map_err(|error| {
                self.within(error, || {
                    Step::Key(key.to_cow().map(Into::into).unwrap_or_default())
                })
            })?;
            self.python(dict.set_item(key, value))?;
        }
        Ok(dict.into_any())
    }

    /// A JSON object as an instance of `class`: each declared field decoded as its key's
    /// value is met (other keys skipped; a repeated key keeps its last value), then, once
    /// the object is read, every field checked present (in declared order) and set in
    /// declared order, then `__post_init__()`.
    fn dataclass<'de, A: MapAccess<'de>>(
        self,
        class: &Dataclass,
        mut map: A,
    ) -> Result<Bound<'py, PyAny>, A::Error> {
        let py = self.py;
        let instance = self.python(class.instantiate(py))?;
        // The values met so far, by field: on the stack for the usual small dataclass.
        let mut inline: [Option<Bound<'py, PyAny>>; INLINE_FIELDS] = Default::default();
        let mut spilled = Vec::new();
        let values = match inline.get_mut(..class.fields.len()) {
            Some(values) => values,
            None => {
                spilled.resize_with(class.fields.len(), || None);
                spilled.as_mut_slice()
            }
        };
        let mut next = 0;
        while let Some((index, field)) = next_field(&mut map, &class.fields, next)? {
            let value = map
                .next_value_seed(self.child(field.node))
                .map_err(|error| self.within(error, || Step::Field(field.key.clone())))?;
            if let Some(slot) = values.get_mut(index) {
                *slot = Some(value);
            }
            next = index + 1;
        }
        for (field, value) in class.fields.iter().zip(values.iter_mut()) {
            let Some(value) = value.take() else {
                return Err(self.fail(
                    Failure::at("field is missing".to_owned())
                        .within(Step::Field(field.key.clone())),
                ));
            };
            self.python(set_attribute(&instance, field.attribute.bind(py), &value))?;
        }
        if class.post_init {
            self.python(instance.call_method0("__post_init__"))?;
        }
        Ok(instance)
    }
}

impl<'de, 'py> DeserializeSeed<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        match self.node() {
            Node::Unsupported(problem) => Err(self.fail(Failure::at(problem.clone()))),
            Node::Union {
                accepts_none,
                options,
                names,
            } => match options.as_slice() {
                // `Optional[X]`: null is None, anything else is decoded as X (whose mismatch
                // is the one reported), with nothing kept.
                [option] if *accepts_none => {
                    deserializer.deserialize_option(Optional(self.child(*option)))
                }
                [option] => self.child(*option).deserialize(deserializer),
                _ => self.union(deserializer, *accepts_none, options, names),
            },
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de, 'py> Visitor<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        match self.node() {
            Node::Null | Node::Any => Ok(self.py.None().into_bound(self.py)),
            _ => Err(self.mismatch("null")),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Self::Value, E> {
        match self.node() {
            Node::Bool | Node::Any => Ok(PyBool::new(self.py, flag).to_owned().into_any()),
            _ => Err(self.mismatch("bool")),
        }
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Self::Value, E> {
        match self.node() {
            Node::Int | Node::Any => Ok(PyInt::new(self.py, number).into_any()),
            Node::Float => Ok(PyFloat::new(self.py, number as f64).into_any()),
            _ => Err(self.mismatch("int")),
        }
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Self::Value, E> {
        match self.node() {
            Node::Int | Node::Any => Ok(PyInt::new(self.py, number).into_any()),
            Node::Float => Ok(PyFloat::new(self.py, number as f64).into_any()),
            _ => Err(self.mismatch("int")),
        }
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Self::Value, E> {
        match self.node() {
            Node::Float | Node::Any => Ok(PyFloat::new(self.py, number).into_any()),
            _ => Err(self.mismatch("float")),
        }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        match self.node() {
            Node::Str | Node::Any => Ok(PyString::new(self.py, text).into_any()),
            _ => Err(self.mismatch("str")),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        match self.node() {
            Node::List(item) => self.items(*item, false, seq),
            Node::Tuple(item) => self.items(*item, true, seq),
            Node::Any => self.items(self.index, false, seq),
            _ => Err(self.mismatch("list")),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        match self.node() {
            Node::Dataclass(class) => self.dataclass(class, map),
            Node::Dict(item) => self.dict(*item, map),
            Node::Any => self.dict(self.index, map),
            _ => Err(self.mismatch("dict")),
        }
    }
}

/// The value of an `Optional[X]`: None for null, else X's seed on it.
struct Optional<'a, 'py>(Seed<'a, 'py>);

impl<'de, 'py> Visitor<'de> for Optional<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("null or a JSON value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.py.None().into_bound(self.0.py))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(deserializer)
    }
}

/// A JSON object's key as a Python str (a dict's key).
struct Key<'py>(Python<'py>);

impl<'de, 'py> DeserializeSeed<'de> for Key<'py> {
    type Value = Bound<'py, PyString>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'py> Visitor<'de> for Key<'py> {
    type Value = Bound<'py, PyString>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, key))
    }
}

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
        Node::Unsupported(problem) => problem.clone(),
        // Not met when decoding: `Any` takes every JSON value.
        Node::Any => format!("unexpected {got}"),
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
