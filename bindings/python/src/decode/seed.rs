//! The decoding seed: one JSON value decoded along a [`Decoder`]'s node table into the
//! Python objects it declares, from any serde `Deserializer` (JSON text in one pass, or a
//! core value).

use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{mismatch_problem, next_field, set_attribute, Dataclass, Decoder, Node, INLINE_FIELDS};
use crate::mismatch::{self, got, Failure, Stash, Step};

/// Decodes one JSON value as node `index` of `decoder`'s table, from any serde
/// `Deserializer` (JSON text, or a core value), into the Python object it declares. It is
/// its own [`Visitor`]: which `visit_*` serde calls says what kind of JSON value was met.
#[derive(Clone, Copy)]
pub(super) struct Seed<'a, 'py> {
    decoder: &'a Decoder,
    index: usize,
    py: Python<'py>,
    stash: &'a Stash,
}

impl<'a, 'py> Seed<'a, 'py> {
    /// The seed of the whole type (node 0), reporting its failures into `stash`.
    pub(super) fn root(decoder: &'a Decoder, py: Python<'py>, stash: &'a Stash) -> Self {
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
        mismatch::stashed(self.stash, failure)
    }

    /// A Python error as a stashed failure.
    fn python<T, E: de::Error>(self, result: PyResult<T>) -> Result<T, E> {
        result.map_err(|error| self.fail(Failure::Python(error)))
    }

    /// `error`, a part's, passed on with `step` added to the stashed failure.
    fn within<E>(self, error: E, step: impl FnOnce() -> Step) -> E {
        mismatch::within(self.stash, error, step)
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
            Node::Convert(convert) => {
                let stored = self.child(convert.inner).deserialize(deserializer)?;
                convert
                    .call(&convert.from_json, &stored)
                    .map_err(|failure| self.fail(failure))
            }
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
