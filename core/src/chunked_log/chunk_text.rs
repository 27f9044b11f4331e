//! A chunk as JSON text. A chunk is stored as an object whose one field (the log's
//! `records_field`) lists its records. Appends keep the open chunk as text ([`ChunkText`]):
//! its stored records are split, not decoded, each new record is encoded once and joined
//! on, and a full chunk becomes its archive as it is; the text is the same as encoding the
//! chunk whole. Reads decode a chunk's records straight from the text into their type
//! ([`records_in`]), with no tree of JSON values in between.
//!
//! Splitting the stored records is most of an append's own work, so an append first looks
//! for the open chunk among those this process wrote last ([`ChunkText::parse_open`],
//! [`remember_open`]): a count is a function of the text, so when the stored text is byte
//! for byte one this process wrote, its records are the text between the list's brackets
//! and its count is the one it had then. A write that never committed, or a chunk another
//! process wrote, just does not match and takes the full split.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::marker::PhantomData;
use std::sync::MutexGuard;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::fork;

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

    /// [`ChunkText::parse`] of the open chunk `json` of flow `flow_id`, instance `key` of map
    /// `map`,
    /// first looking for it among the open chunks this process wrote last
    /// ([`remember_open`]).
    pub(super) fn parse_open(
        json: &str,
        field: &str,
        flow_id: &str,
        map: &str,
        key: &str,
    ) -> Result<Self> {
        if let Some(len) = written().count_of(place(flow_id, map, key), json) {
            if let Some(records) = records_text(json, field) {
                let mut text = String::with_capacity(json.len() + 256);
                text.push_str(records);
                return Ok(ChunkText { records: text, len });
            }
        }
        Self::parse(json, field, &format!("{map}/{key}"))
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

/// Notes that the open chunk of flow `flow_id`, instance `key` of map `map`, is being
/// written as `json`, which holds `len` records (the text [`ChunkText::into_json`] gave).
pub(super) fn remember_open(flow_id: &str, map: &str, key: &str, json: &str, len: u64) {
    written().insert(place(flow_id, map, key), json, len);
}

/// The open chunks this process wrote last, with their record counts, by a hash of their
/// flow and name (a collision only replaces an entry). Bounded in entries and bytes: past
/// either it starts over. Held across `fork()` (see `crate::fork`), so a child that appends
/// finds it free.
static WRITTEN: fork::Mutex<Written> = fork::Mutex::new(Written {
    by_place: BTreeMap::new(),
    bytes: 0,
});

/// [`WRITTEN`], locked.
fn written() -> MutexGuard<'static, Written> {
    // A cache, checked byte for byte on use: what a panicking holder left is still safe.
    WRITTEN.lock()
}

/// Open chunks [`WRITTEN`] holds at most.
const WRITTEN_ENTRIES: usize = 1024;
/// Bytes of text [`WRITTEN`] holds at most.
const WRITTEN_BYTES: usize = 8 << 20;

#[derive(Default)]
struct Written {
    by_place: BTreeMap<u64, (String, u64)>,
    bytes: usize,
}

impl Written {
    /// The count of the chunk at `place` when it was written as exactly `json`.
    fn count_of(&self, place: u64, json: &str) -> Option<u64> {
        self.by_place
            .get(&place)
            .filter(|(text, _)| text == json)
            .map(|&(_, len)| len)
    }

    fn insert(&mut self, place: u64, json: &str, len: u64) {
        let old = self.by_place.remove(&place).map(|(text, _)| {
            self.bytes -= text.capacity();
            text
        });
        // A chunk this large is split instead.
        if json.len() > WRITTEN_BYTES / 4 {
            return;
        }
        let text = match old {
            Some(mut text) => {
                text.clear();
                text.push_str(json);
                text
            }
            None => json.to_owned(),
        };
        if self.by_place.len() >= WRITTEN_ENTRIES || self.bytes + text.capacity() > WRITTEN_BYTES {
            self.by_place.clear();
            self.bytes = 0;
        }
        self.bytes += text.capacity();
        self.by_place.insert(place, (text, len));
    }
}

/// The key of an open chunk in [`WRITTEN`].
fn place(flow_id: &str, map: &str, key: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    (flow_id, map, key).hash(&mut hasher);
    hasher.finish()
}

/// The text between `{"<field>":[` and `]}` of `json`, when it has that form and `field`
/// needs no escaping.
fn records_text<'j>(json: &'j str, field: &str) -> Option<&'j str> {
    if field.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return None;
    }
    json.strip_prefix("{\"")?
        .strip_prefix(field)?
        .strip_prefix("\":[")?
        .strip_suffix("]}")
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

    /// Text that starts like a chunk of `entries` but is not one.
    const NOT_CHUNKS: [&str; 9] = [
        r#"{"entries":[{"a":1]]}"#,
        r#"{"entries":[["a"}]}"#,
        r#"{"entries":["open]}"#,
        r#"{"entries":["escaped end\"]}"#,
        r#"{"entries":[,1]}"#,
        r#"{"entries":[1,]}"#,
        r#"{"entries":[1,,2]}"#,
        r#"{"entries":[1]]}"#,
        "{\"entries\":[\"a\u{1}b\"]}",
    ];

    #[test]
    fn an_open_chunk_this_process_wrote_is_found_by_its_exact_text() {
        let two = whole("entries", &[json!(1), json!(2)]);
        let three = whole("entries", &[json!(1), json!(2), json!(3)]);
        // A count stands for its text: one noted with another count is what comes back,
        // which shows the note was used rather than a split.
        remember_open("memo-flow", "chunks", "current", &two, 7);
        let chunk =
            ChunkText::parse_open(&two, "entries", "memo-flow", "chunks", "current").unwrap();
        assert_eq!(chunk.len(), 7);
        // Any other text (another write, one that never committed) is split.
        let chunk =
            ChunkText::parse_open(&three, "entries", "memo-flow", "chunks", "current").unwrap();
        assert_eq!(chunk.len(), 3);
        let chunk =
            ChunkText::parse_open(&two, "entries", "memo-flow", "other", "current").unwrap();
        assert_eq!(chunk.len(), 2);
        let error =
            ChunkText::parse_open("[]", "entries", "memo-flow", "chunks", "current").unwrap_err();
        assert!(matches!(error, Error::Storage(_)), "{error}");
    }

    #[test]
    fn the_noted_open_chunks_are_bounded() {
        let mut written = Written::default();
        for n in 0..WRITTEN_ENTRIES as u64 + 10 {
            written.insert(n, "{\"e\":[]}", 0);
            assert!(written.by_place.len() <= WRITTEN_ENTRIES);
        }
        let big = "x".repeat(WRITTEN_BYTES / 8);
        for n in 0..20 {
            written.insert(n, &big, 1);
            assert!(written.bytes <= WRITTEN_BYTES);
        }
        assert_eq!(written.count_of(19, &big), Some(1));
        written.insert(19, &"y".repeat(WRITTEN_BYTES / 2), 1);
        assert_eq!(written.count_of(19, &big), None);
    }

    #[test]
    fn a_stored_value_that_is_not_a_chunk_is_a_storage_error_naming_it() {
        for stored in ["{", "[]", r#"{"entries":{}}"#, r#"{"other":[]}"#]
            .into_iter()
            .chain(NOT_CHUNKS)
        {
            let error = ChunkText::parse(stored, "entries", "chunks/current").unwrap_err();
            assert!(
                matches!(&error, Error::Storage(message)
                    if message.starts_with(r#"stored chunk "chunks/current" has no "entries" list"#)),
                "{stored}: {error}"
            );
        }
    }
}
