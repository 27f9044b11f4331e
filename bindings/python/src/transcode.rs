//! An RPC's output written as JSON text along a decoder's type, without the interpreter
//! (`AsyncClient.invoke_rpc_json`, the HTTP service's page and register bodies).
//!
//! The text is what Python's `json.dumps(value, ensure_ascii=True, separators=(",", ":"))`
//! writes for the value the decoder would build: a dataclass's fields in their declared
//! order under their JSON names (other keys left out), lists, tuples and dicts as they come,
//! strings with every character outside printable ASCII escaped. It is checked against the
//! type as decoding checks it (the same messages and paths, [`crate::decode`]); a float, an
//! untyped (`Any`) part or a converted one (a `datetime`, an `Enum`, `bytes`) is refused, as
//! Python writes floats its own way and only Python checks the converted ones.
//!
//! Like decoding, this is one [`DeserializeSeed`] generic over serde's `Deserializer`: an
//! output that is JSON text is rewritten in one pass, with no tree of values on the way, and
//! an output that is a core value is walked by the same rules. Only a union of several types
//! keeps its value, to try each type on it in turn; a dataclass whose fields come in
//! another order than declared has its written fields put in order once it is read.

use std::fmt;
use std::io::Write as _;

use attrflow::RpcOutput;
use pyo3::prelude::*;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::decode::{mismatch_problem, next_field, Dataclass, Decoder, Node, INLINE_FIELDS};
use crate::encode::named_escape;
use crate::errors::IntoPyResult;
use crate::mismatch::{self, failure_error, got, Failure, Stash, Step};

/// A core result written as JSON text along a decoder's type, made without the
/// interpreter by [`encode_output`] and turned into `bytes` by [`encoded`].
pub(crate) struct Encoded(attrflow::Result<Result<Vec<u8>, Failure>>);

/// An RPC's output written as JSON text along `decoder`'s type (see the module's doc).
pub(crate) fn encode_output(result: attrflow::Result<RpcOutput>, decoder: &Decoder) -> Encoded {
    Encoded(result.map(|output| {
        let mut out = Vec::with_capacity(4096);
        let stash = Stash::new(None);
        let written = match &output {
            RpcOutput::Json(text) => {
                let mut deserializer = serde_json::Deserializer::from_str(text.get());
                Writer::root(decoder, &mut out, &stash)
                    .deserialize(&mut deserializer)
                    .and_then(|()| deserializer.end())
            }
            RpcOutput::Value(value) => Writer::root(decoder, &mut out, &stash).deserialize(value),
        };
        match written {
            Ok(()) => Ok(out),
            Err(error) => Err(stash
                .take()
                .unwrap_or_else(|| Failure::at(format!("the output is not JSON: {error}")))),
        }
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

/// Writes one JSON value as node `index` of `decoder`'s table to `out`, from any serde
/// `Deserializer`. It is its own [`Visitor`], as the decoding seed is.
struct Writer<'a> {
    decoder: &'a Decoder,
    index: usize,
    out: &'a mut Vec<u8>,
    stash: &'a Stash,
}

impl<'a> Writer<'a> {
    /// The writer of the whole type (node 0), reporting its failures into `stash`.
    fn root(decoder: &'a Decoder, out: &'a mut Vec<u8>, stash: &'a Stash) -> Self {
        Writer {
            decoder,
            index: 0,
            out,
            stash,
        }
    }

    /// The writer of node `index`, a part of this one's value, to `out`.
    fn child<'b>(
        decoder: &'b Decoder,
        index: usize,
        out: &'b mut Vec<u8>,
        stash: &'b Stash,
    ) -> Writer<'b> {
        Writer {
            decoder,
            index,
            out,
            stash,
        }
    }

    fn node(&self) -> &'a Node {
        &self.decoder.nodes[self.index]
    }

    /// `failure` stashed, and the placeholder error that carries it up through serde.
    fn fail<E: de::Error>(&self, failure: Failure) -> E {
        mismatch::stashed(self.stash, failure)
    }

    /// The failure of a JSON value of kind `got` met by this node (one that writes values of
    /// some kind: see [`Writer::refusal`]).
    fn mismatch<E: de::Error>(&self, got: &str) -> E {
        self.fail(Failure::at(mismatch_problem(self.node(), got)))
    }

    /// Whether this node writes values of its kind, or refuses every value (a float or an
    /// untyped part, or an unsupported type).
    fn refusal(&self) -> Option<Failure> {
        match self.node() {
            Node::Any | Node::Float | Node::Convert(_) => Some(Failure::at(REFUSED.to_owned())),
            Node::Unsupported(problem) => Some(Failure::at(problem.clone())),
            _ => None,
        }
    }

    /// A union of several types (or none): its value kept, then each type tried on it in
    /// order; the first that fits is written.
    fn union<'de, D: Deserializer<'de>>(
        self,
        deserializer: D,
        accepts_none: bool,
        options: &[usize],
        names: &str,
    ) -> Result<(), D::Error> {
        let value = Value::deserialize(deserializer)?;
        if accepts_none && value.is_null() {
            self.out.extend_from_slice(b"null");
            return Ok(());
        }
        let mut first = None;
        for option in options {
            let mut attempt = Vec::new();
            match Writer::child(self.decoder, *option, &mut attempt, self.stash).deserialize(&value)
            {
                Ok(()) => {
                    self.out.extend_from_slice(&attempt);
                    return Ok(());
                }
                Err(error) => {
                    let failure = self
                        .stash
                        .take()
                        .unwrap_or_else(|| Failure::at(error.to_string()));
                    first.get_or_insert(failure);
                }
            }
        }
        Err(self.fail(match first {
            Some(mismatch) if options.len() == 1 => mismatch,
            _ => Failure::at(format!("expected {names}, got {}", got(&value))),
        }))
    }

    /// A JSON array's items as node `item`.
    fn items<'de, A: SeqAccess<'de>>(self, item: usize, mut seq: A) -> Result<(), A::Error> {
        let Writer {
            decoder,
            out,
            stash,
            ..
        } = self;
        out.push(b'[');
        let mut index = 0;
        loop {
            let before = out.len();
            if index > 0 {
                out.push(b',');
            }
            let next = seq
                .next_element_seed(Writer::child(decoder, item, out, stash))
                .map_err(|error| mismatch::within(stash, error, || Step::Index(index)))?;
            if next.is_none() {
                out.truncate(before);
                break;
            }
            index += 1;
        }
        out.push(b']');
        Ok(())
    }

    /// A JSON object as a dict of values as node `item`, its keys in the order they come.
    fn dict<'de, A: MapAccess<'de>>(self, item: usize, mut map: A) -> Result<(), A::Error> {
        let Writer {
            decoder,
            out,
            stash,
            ..
        } = self;
        out.push(b'{');
        let mut first = true;
        while let Some(key) = map.next_key::<String>()? {
            if !first {
                out.push(b',');
            }
            first = false;
            write_ascii_string(&key, out);
            out.push(b':');
            map.next_value_seed(Writer::child(decoder, item, out, stash))
                .map_err(|error| mismatch::within(stash, error, || Step::Key(key.clone())))?;
        }
        out.push(b'}');
        Ok(())
    }

    /// A JSON object as a dataclass: each declared field's `"key":value` written as it is
    /// met (other keys skipped; a repeated key keeps its last value), then, once the object
    /// is read, every field checked present (in declared order) and the written fields put
    /// in declared order if they came in another.
    fn dataclass<'de, A: MapAccess<'de>>(
        self,
        class: &Dataclass,
        mut map: A,
    ) -> Result<(), A::Error> {
        let Writer {
            decoder,
            out,
            stash,
            ..
        } = self;
        let start = out.len();
        out.push(b'{');
        // Where each field's `"key":value` was written, by field.
        let mut inline = [None; INLINE_FIELDS];
        let mut spilled = Vec::new();
        let spans: &mut [Option<(usize, usize)>] = match inline.get_mut(..class.fields.len()) {
            Some(spans) => spans,
            None => {
                spilled.resize(class.fields.len(), None);
                spilled.as_mut_slice()
            }
        };
        let mut next = 0;
        let mut in_order = true;
        while let Some((index, field)) = next_field(&mut map, &class.fields, next)? {
            in_order &= index == next;
            if out.len() > start + 1 {
                out.push(b',');
            }
            let from = out.len();
            write_ascii_string(&field.key, out);
            out.push(b':');
            map.next_value_seed(Writer::child(decoder, field.node, out, stash))
                .map_err(|error| {
                    mismatch::within(stash, error, || Step::Field(field.key.clone()))
                })?;
            if let Some(span) = spans.get_mut(index) {
                *span = Some((from, out.len()));
            }
            next = index + 1;
        }
        if let Some(field) = class
            .fields
            .iter()
            .zip(spans.iter())
            .find_map(|(field, span)| span.is_none().then_some(field))
        {
            let missing =
                Failure::at("field is missing".to_owned()).within(Step::Field(field.key.clone()));
            return Err(mismatch::stashed(stash, missing));
        }
        if !in_order {
            let written = out.split_off(start + 1);
            for (i, (from, to)) in spans.iter().flatten().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&written[from - start - 1..to - start - 1]);
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// Why a float, an untyped or a converted part is not written.
const REFUSED: &str =
    "only values without floats, untyped parts or datetime, Enum and bytes parts are re-encoded";

impl<'de> DeserializeSeed<'de> for Writer<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if let Some(refusal) = self.refusal() {
            return Err(self.fail(refusal));
        }
        match self.node() {
            Node::Union {
                accepts_none,
                options,
                names,
            } => match options.as_slice() {
                [option] if *accepts_none => {
                    let option = *option;
                    deserializer.deserialize_option(Optional(Writer {
                        index: option,
                        ..self
                    }))
                }
                [option] => {
                    let option = *option;
                    Writer {
                        index: option,
                        ..self
                    }
                    .deserialize(deserializer)
                }
                _ => self.union(deserializer, *accepts_none, options, names),
            },
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Writer<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        match self.node() {
            Node::Null => {
                self.out.extend_from_slice(b"null");
                Ok(())
            }
            _ => Err(self.mismatch("null")),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<(), E> {
        match self.node() {
            Node::Bool => {
                self.out
                    .extend_from_slice(if flag { b"true" } else { b"false" });
                Ok(())
            }
            _ => Err(self.mismatch("bool")),
        }
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<(), E> {
        match self.node() {
            Node::Int => write!(self.out, "{number}").map_err(E::custom),
            _ => Err(self.mismatch("int")),
        }
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<(), E> {
        match self.node() {
            Node::Int => write!(self.out, "{number}").map_err(E::custom),
            _ => Err(self.mismatch("int")),
        }
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.mismatch("float"))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        match self.node() {
            Node::Str => {
                write_ascii_string(text, self.out);
                Ok(())
            }
            _ => Err(self.mismatch("str")),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        match self.node() {
            Node::List(item) | Node::Tuple(item) => {
                let item = *item;
                self.items(item, seq)
            }
            _ => Err(self.mismatch("list")),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        match self.node() {
            Node::Dataclass(class) => self.dataclass(class, map),
            Node::Dict(item) => {
                let item = *item;
                self.dict(item, map)
            }
            _ => Err(self.mismatch("dict")),
        }
    }
}

/// The value of an `Optional[X]`: `null` for null, else X's writer on it.
struct Optional<'a>(Writer<'a>);

impl<'de> Visitor<'de> for Optional<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("null or a JSON value")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.0.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.0.deserialize(deserializer)
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
