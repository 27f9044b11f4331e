//! A chunk as JSON text. A chunk is stored as an object whose one field (the log's
//! `records_field`) lists its records. Appends keep the open chunk as text ([`ChunkText`]):
//! its stored records are split, not decoded, each new record is encoded once and joined
//! on, and a full chunk becomes its archive as it is; the text is the same as encoding the
//! chunk whole. Reads decode a chunk's records straight from the text into their type
//! ([`records_in`]), with no tree of JSON values in between.

use std::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// The records of a chunk as JSON text: the stored text of each record, joined by commas.
#[derive(Debug, Default)]
pub(super) struct ChunkText {
    records: String,
    len: u64,
}

impl ChunkText {
    /// The records of the stored chunk `json` (an object whose `field` is the list of
    /// records), split without decoding them; `physical` names the chunk in errors.
    pub(super) fn parse(json: &str, field: &str, physical: &str) -> Result<Self> {
        let not_a_chunk = |detail: String| {
            Error::storage(format!(
                "stored chunk {physical:?} has no {field:?} list: {detail}"
            ))
        };
        let records: Vec<&RawValue> = records_in(json, field)
            .map_err(|e| not_a_chunk(e.to_string()))?
            .ok_or_else(|| not_a_chunk("no such field".to_owned()))?;
        let mut text = String::with_capacity(json.len() + 256);
        for (i, record) in records.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(record.get());
        }
        Ok(ChunkText {
            records: text,
            len: records.len() as u64,
        })
    }

    /// How many records the chunk holds.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    pub(super) fn push(&mut self, record: &str) {
        if self.len > 0 {
            self.records.push(',');
        }
        self.records.push_str(record);
        self.len += 1;
    }

    /// The stored form of the chunk: an object whose `field` lists the records, as
    /// `serde_json` encodes it.
    pub(super) fn into_json(self, field: &str) -> Result<String> {
        let key = serde_json::to_string(field)
            .map_err(|e| Error::storage(format!("cannot encode the field name {field:?}: {e}")))?;
        let mut json = String::with_capacity(self.records.len() + key.len() + 5);
        json.push('{');
        json.push_str(&key);
        json.push_str(":[");
        json.push_str(&self.records);
        json.push_str("]}");
        Ok(json)
    }
}

/// The records of the stored chunk `json` (an object whose `field` lists them), decoded
/// as `T` in one pass over the text, every other field skipped; `None` without that field.
pub(super) fn records_in<'de, T: Deserialize<'de>>(
    json: &'de str,
    field: &str,
) -> serde_json::Result<Option<Vec<T>>> {
    let mut reader = serde_json::Deserializer::from_str(json);
    let records = RecordsOf(field, PhantomData).deserialize(&mut reader)?;
    reader.end()?;
    Ok(records)
}

/// Reads a chunk object: the list in its field `.0`, as `T`s; every other field skipped.
struct RecordsOf<'f, T>(&'f str, PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for RecordsOf<'_, T> {
    type Value = Option<Vec<T>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for RecordsOf<'_, T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an object with a list {:?}", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut records = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.0 {
                records = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Records a re-encode would have to escape: quotes, control characters, non-ASCII,
    /// emoji, nesting and numbers.
    fn awkward_records() -> Vec<Value> {
        vec![
            json!({"sequence": 1, "text": "a \"quoted\"\nline\t\u{1}", "z": null}),
            json!({"sequence": 2, "text": "é ü 中文 🦀", "nested": {"b": [1, 2.5, -3], "a": true}}),
            json!({"sequence": 3, "big": 18446744073709551615u64, "neg": -9223372036854775808i64}),
        ]
    }

    fn whole(field: &str, records: &[Value]) -> String {
        serde_json::to_string(&json!({ field: records })).unwrap()
    }

    #[test]
    fn joined_text_is_the_text_of_the_whole_chunk_encoded() {
        let records = awkward_records();
        let mut chunk = ChunkText::parse(&whole("entries", &[]), "entries", "c").unwrap();
        assert_eq!(chunk.len(), 0);
        for (i, record) in records.iter().enumerate() {
            chunk.push(&serde_json::to_string(record).unwrap());
            let json = std::mem::take(&mut chunk).into_json("entries").unwrap();
            assert_eq!(json, whole("entries", &records[..=i]));
            chunk = ChunkText::parse(&json, "entries", "c").unwrap();
            assert_eq!(chunk.len(), i as u64 + 1);
        }
    }

    #[test]
    fn stored_text_with_spaces_or_other_fields_is_read_as_its_records() {
        let stored = r#" { "other" : 1 , "subscribers" : [ {"sequence":1} ,{"sequence":2} ] } "#;
        let mut chunk = ChunkText::parse(stored, "subscribers", "c").unwrap();
        assert_eq!(chunk.len(), 2);
        chunk.push(r#"{"sequence":3}"#);
        assert_eq!(
            chunk.into_json("subscribers").unwrap(),
            r#"{"subscribers":[{"sequence":1},{"sequence":2},{"sequence":3}]}"#
        );
    }

    #[test]
    fn a_stored_value_that_is_not_a_chunk_is_a_storage_error_naming_it() {
        for stored in ["{", "[]", r#"{"entries":{}}"#, r#"{"other":[]}"#] {
            let error = ChunkText::parse(stored, "entries", "chunks/current").unwrap_err();
            assert!(
                matches!(&error, Error::Storage(message)
                    if message.starts_with(r#"stored chunk "chunks/current" has no "entries" list"#)),
                "{stored}: {error}"
            );
        }
    }
}
