//! JSON text from callers, parsed so that no value changes on its way into the store.
//!
//! serde_json reads an integer outside the 64-bit range (`2**64`, `-2**63-1`) as the
//! nearest float, so the record would come back changed. Such an integer is refused with
//! an [`Error::InvalidInput`] that names where it is and what it was.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Error, Result};

/// Parses `text` (described by `what`, for example `input of RPC "append"`), refusing
/// invalid JSON and integers that JSON numbers in attrflow cannot hold exactly (outside
/// `-2^63 ..= 2^64-1`).
pub fn parse(text: &str, what: impl Fn() -> String) -> Result<Value> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid_input(format!("{} is not JSON: {e}", what())))?;
    // serde_json reads an integer outside the 64-bit range as a float, so a value with
    // no other number than 64-bit integers holds none: the text is scanned only otherwise.
    if !holds_a_non_integer(&value) {
        return Ok(value);
    }
    refuse_inexact_integers(text, &what)?;
    Ok(value)
}

/// `text` checked as [`parse`] checks it (JSON, with no integer outside the range attrflow
/// holds exactly) and kept as text, with no tree of values built: a handler's output written
/// by a binding, which its callers decode from the text ([`crate::RpcOutput::Json`]).
pub fn check_text(text: String, what: impl Fn() -> String) -> Result<Box<RawValue>> {
    let not_json =
        |e: serde_json::Error| Error::invalid_input(format!("{} is not JSON: {e}", what()));
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let floats = HoldsAFloat
        .deserialize(&mut deserializer)
        .and_then(|floats| deserializer.end().map(|()| floats))
        .map_err(not_json)?;
    if floats {
        refuse_inexact_integers(&text, &what)?;
    }
    RawValue::from_string(text).map_err(not_json)
}

/// Refuses `text` (valid JSON) when it holds an integer outside the 64-bit range, naming
/// where.
fn refuse_inexact_integers(text: &str, what: &impl Fn() -> String) -> Result<()> {
    match inexact_integer(text) {
        Some((path, number)) => Err(Error::invalid_input(format!(
            "{} holds the integer {number} at {path}, outside the range attrflow stores \
             exactly ({} to {}); send it as a string",
            what(),
            i64::MIN,
            u64::MAX
        ))),
        None => Ok(()),
    }
}

/// Reads one JSON value and says whether it holds a number that is not a 64-bit integer
/// (as [`holds_a_non_integer`] says of a value), keeping nothing.
struct HoldsAFloat;

impl<'de> DeserializeSeed<'de> for HoldsAFloat {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HoldsAFloat {
    type Value = bool;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<bool, E> {
        Ok(false)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<bool, E> {
        Ok(true)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
        let mut floats = false;
        while let Some(item) = seq.next_element_seed(HoldsAFloat)? {
            floats |= item;
        }
        Ok(floats)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<bool, A::Error> {
        let mut floats = false;
        while map.next_key::<de::IgnoredAny>()?.is_some() {
            floats |= map.next_value_seed(HoldsAFloat)?;
        }
        Ok(floats)
    }
}

/// Whether `value` holds a number that is not a 64-bit integer: a float, or an integer
/// read as one. (A value from `serde_json::from_str` nests at most 128 deep.)
fn holds_a_non_integer(value: &Value) -> bool {
    match value {
        Value::Number(number) => !(number.is_i64() || number.is_u64()),
        Value::Array(items) => items.iter().any(holds_a_non_integer),
        Value::Object(members) => members.values().any(holds_a_non_integer),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

/// Where we are inside the JSON text while scanning it.
enum Frame {
    /// Inside an object, after the key of the member being read (if read yet).
    Object { key: Option<String>, at_key: bool },
    /// Inside an array, at the element with this index.
    Array(usize),
}

/// The first integer literal of already valid JSON `text` that does not fit in `i64` or
/// `u64`, with its path (`$.items[2].count`).
fn inexact_integer(text: &str) -> Option<(String, String)> {
    let mut found = None;
    scan(text, |stack, literal| {
        let integer = !literal.contains(['.', 'e', 'E']);
        if integer && literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err() {
            found = Some((path_of(stack), literal.to_owned()));
        }
        found.is_some()
    });
    found
}

/// Where the end of `prefix`, the start of a JSON text, is: the path of the value there,
/// or `a key in` that of the object whose key it is inside (`$.items[2]`, `a key in $`).
/// Bindings use it to name the place of text they cannot pass on (a lone surrogate).
pub fn place_at_end(prefix: &str) -> String {
    let (stack, in_key) = scan(prefix, |_, _| false);
    match in_key {
        true => format!("a key in {}", path_of(&stack)),
        false => path_of(&stack),
    }
}

/// Walks JSON `text`, calling `number` with the enclosing frames and each number literal
/// until it returns true. Returns the frames open where it stopped (or at the end) and
/// whether the text ends inside an object key.
fn scan(text: &str, mut number: impl FnMut(&[Frame], &str) -> bool) -> (Vec<Frame>, bool) {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => stack.push(Frame::Object {
                key: None,
                at_key: true,
            }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(index)) => *index += 1,
                Some(Frame::Object { at_key, .. }) => *at_key = true,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, at_key }) = stack.last_mut() {
                    if *at_key {
                        if i >= bytes.len() {
                            return (stack, true);
                        }
                        let raw = &text[start..i];
                        *key =
                            Some(serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_default());
                        *at_key = false;
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if number(&stack, &text[start..i]) {
                    return (stack, false);
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (stack, false)
}

fn path_of(stack: &[Frame]) -> String {
    let mut path = String::from("$");
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                let simple =
                    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if simple {
                    path.push('.');
                    path.push_str(key);
                } else {
                    path.push_str(&format!("[{key:?}]"));
                }
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        parse(text, || "input".into()).unwrap_err().to_string()
    }

    #[test]
    fn integers_of_the_64_bit_range_and_floats_pass_unchanged() {
        for text in [
            "18446744073709551615",
            "-9223372036854775808",
            "[0,-0,1.5,1e300,-2.5E-3]",
            r#"{"a\"b":{"c":[1,"99999999999999999999999"]}}"#,
        ] {
            let value = parse(text, || "input".into()).unwrap();
            assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn integers_outside_it_are_refused_with_their_place_and_value() {
        let message = refused(r#"{"name":"x","counts":[1,18446744073709551616]}"#);
        assert!(
            message.contains("18446744073709551616 at $.counts[1]"),
            "{message}"
        );
        assert!(message.starts_with("input holds"), "{message}");
        let message = refused(r#"{"a b":{"n":-9223372036854775809}}"#);
        assert!(
            message.contains(r#"-9223372036854775809 at $["a b"].n"#),
            "{message}"
        );
        let message = refused("[1,{\"x\":2},3,\n 100000000000000000000000]");
        assert!(message.contains("at $[3]"), "{message}");
    }

    #[test]
    fn text_is_kept_when_it_passes_what_parse_passes_and_refused_as_parse_refuses_it() {
        let what = || "the output".to_owned();
        for text in [
            "18446744073709551615",
            "[0,-0,1.5,1e300,-2.5E-3]",
            r#"{"a\"b":{"c":[1,"99999999999999999999999"]}}"#,
            " {\"spaced\": [1, 2.5]} ",
        ] {
            let kept = check_text(text.to_owned(), what).expect("valid JSON");
            let reread: Value = serde_json::from_str(kept.get()).expect("JSON");
            assert_eq!(reread, parse(text, what).expect("valid JSON"), "{text}");
        }
        for text in [
            r#"{"name":"x","counts":[1.5,18446744073709551616]}"#,
            "[1,100000000000000000000000]",
            "[1,",
            "1 2",
            r#"{"a":}"#,
        ] {
            let refused = check_text(text.to_owned(), what).expect_err("refused");
            let parsed = parse(text, what).expect_err("refused");
            assert_eq!(refused.to_string(), parsed.to_string(), "{text}");
        }
    }

    #[test]
    fn places_in_a_json_prefix_are_named() {
        assert_eq!(place_at_end(r#"{"subscriberId":"ab"#), "$.subscriberId");
        assert_eq!(place_at_end(r#"{"a":[1,{"b":"x"},"y"#), "$.a[2]");
        assert_eq!(place_at_end(r#"{"a":{"k"#), "a key in $.a");
        assert_eq!(place_at_end(r#""tok"#), "$");
    }

    #[test]
    fn only_values_with_a_number_other_than_a_64_bit_integer_are_scanned() {
        let holds = |text: &str| holds_a_non_integer(&serde_json::from_str(text).unwrap());
        assert!(!holds(
            r#"{"id":"s-1","n":[1,-2,18446744073709551615],"ok":true}"#
        ));
        assert!(holds(r#"{"a":[{"b":1.5}]}"#));
        assert!(holds(r#"{"a":{"b":18446744073709551616}}"#));
    }

    #[test]
    fn invalid_json_is_refused() {
        assert!(refused("{").starts_with("input is not JSON"));
    }
}
