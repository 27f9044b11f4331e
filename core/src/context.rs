//! What a handler sees and does: a point-in-time snapshot of the flow (every singleton
//! Attribute plus the loaded map instances) and the writes it stages.
//!
//! Writes are only staged here. The runtime commits them all in one transaction when the
//! handler returns `Ok`, and drops them when it fails, so a handler is all-or-nothing.
//!
//! Values are held as the store gave them, JSON text, and decoded on a handler's first read
//! of each: an append to a chunked log reads and writes its open chunk as text
//! (`RpcContext::map_instance_json`, `RpcContext::set_map_instance_json`) and so never
//! decodes the chunk into a tree of values nor encodes it back.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::output::RpcOutput;

/// An RPC's handler: runs once per call against the call's [`RpcContext`], takes the
/// decoded JSON input and returns its output, a JSON value or JSON text ([`RpcOutput`]).
pub type RpcHandler = Arc<dyn Fn(&mut RpcContext<'_>, Value) -> Result<RpcOutput> + Send + Sync>;

/// The names a flow type declares, as a context checks a handler's reads and writes
/// against them (implemented by [`crate::FlowDefinition`]).
pub trait DeclaredNames: std::fmt::Debug {
    /// The flow type's name.
    fn flow_type(&self) -> &str;
    /// Whether `name` is a declared singleton Attribute.
    fn has_attribute(&self, name: &str) -> bool;
    /// Whether `name` is a declared AttributeMap.
    fn has_map(&self, name: &str) -> bool;
    /// The physical name `<map>/<instance>` of an instance of a declared map, after
    /// checking the key; an undeclared map or a bad key is [`Error::InvalidInput`].
    fn map_instance_name(&self, map: &str, instance: &str) -> Result<String>;
}

/// A value as a context holds it: JSON text (loaded, or staged as text), decoded on its
/// first read, or a value a handler staged, encoded at commit.
#[derive(Debug)]
enum Held {
    Json {
        json: String,
        decoded: OnceLock<Value>,
    },
    Value(Value),
}

impl Held {
    /// What a handler stages as `value`: `None` (a delete) for `Value::Null`.
    fn staged(value: Value) -> Option<Self> {
        (!value.is_null()).then_some(Held::Value(value))
    }

    fn json(json: String) -> Self {
        Held::Json {
            json,
            decoded: OnceLock::new(),
        }
    }

    /// The value, decoding the text on the first call; text that is not JSON is a
    /// storage error naming `physical` in flow `flow_id`.
    fn value(&self, flow_id: &str, physical: &str) -> Result<&Value> {
        match self {
            Held::Value(value) => Ok(value),
            Held::Json { json, decoded } => {
                if let Some(value) = decoded.get() {
                    return Ok(value);
                }
                let value = serde_json::from_str(json).map_err(|e| {
                    Error::storage(format!(
                        "stored value of {physical:?} in flow {flow_id:?} is not JSON: {e}"
                    ))
                })?;
                Ok(decoded.get_or_init(|| value))
            }
        }
    }

    /// The value as JSON text: the text held, or the value encoded.
    fn text(&self, physical: &str) -> Result<Cow<'_, str>> {
        match self {
            Held::Json { json, .. } => Ok(Cow::Borrowed(json)),
            Held::Value(value) => encode(physical, value).map(Cow::Owned),
        }
    }

    fn into_text(self, physical: &str) -> Result<String> {
        match self {
            Held::Json { json, .. } => Ok(json),
            Held::Value(value) => encode(physical, &value),
        }
    }
}

/// `value` as compact JSON text. `serde_json::to_string` writes straight into the text's
/// buffer; `Value`'s `Display` (the same text) goes through a formatter adapter.
fn encode(physical: &str, value: &Value) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|e| Error::storage(format!("cannot encode the value of {physical:?}: {e}")))
}

/// The handler's view of one flow during one RPC call.
#[derive(Debug)]
pub struct RpcContext<'a> {
    flow_id: &'a str,
    run_id: &'a str,
    definition: &'a dyn DeclaredNames,
    loaded: HashSet<String>,
    snapshot: HashMap<String, Held>,
    staged: BTreeMap<String, Option<Held>>,
}

impl<'a> RpcContext<'a> {
    /// A context over `snapshot`, the JSON text of every value the call reads, by
    /// physical name (`loaded` names the map instances the call loaded, and by `<map>/`
    /// the maps it loaded whole).
    pub(crate) fn new(
        flow_id: &'a str,
        run_id: &'a str,
        definition: &'a dyn DeclaredNames,
        loaded: HashSet<String>,
        snapshot: Vec<(String, String)>,
    ) -> Self {
        RpcContext {
            flow_id,
            run_id,
            definition,
            loaded,
            snapshot: snapshot
                .into_iter()
                .map(|(name, json)| (name, Held::json(json)))
                .collect(),
            staged: BTreeMap::new(),
        }
    }

    /// The ID of the flow the RPC was invoked on.
    pub fn flow_id(&self) -> &str {
        self.flow_id
    }

    /// The ID of the flow's run (what starting it returned).
    pub fn run_id(&self) -> &str {
        self.run_id
    }

    /// The singleton Attribute `name`, or `None` when it holds no value. Staged writes are
    /// seen first.
    pub fn attribute(&self, name: &str) -> Result<Option<&Value>> {
        if !self.definition.has_attribute(name) {
            return Err(self.undeclared_attribute(name));
        }
        self.read(name)
    }

    /// Stages a new value for the singleton Attribute `name`. `Value::Null` deletes it.
    pub fn set_attribute(&mut self, name: &str, value: Value) -> Result<()> {
        if !self.definition.has_attribute(name) {
            return Err(self.undeclared_attribute(name));
        }
        self.stage(name.to_owned(), Held::staged(value));
        Ok(())
    }

    /// The map instance `map`/`instance`, or `None` when it is loaded but holds no value.
    ///
    /// Reading an instance the RPC did not load is [`Error::AttributeMapNotLoaded`], never
    /// `None`: absent and unknown must not look alike. An instance this call wrote is
    /// readable whether or not it was loaded.
    pub fn map_instance(&self, map: &str, instance: &str) -> Result<Option<&Value>> {
        let physical = self.readable_instance(map, instance)?;
        self.read(&physical)
    }

    /// The map instance `map`/`instance` as JSON text, with [`RpcContext::map_instance`]'s
    /// rules, without decoding it.
    pub(crate) fn map_instance_json(
        &self,
        map: &str,
        instance: &str,
    ) -> Result<Option<Cow<'_, str>>> {
        let physical = self.readable_instance(map, instance)?;
        self.held(&physical)
            .map(|held| held.text(&physical))
            .transpose()
    }

    /// Stages a new value for a map instance. Writing needs no load or lock. `Value::Null`
    /// deletes the instance.
    pub fn set_map_instance(&mut self, map: &str, instance: &str, value: Value) -> Result<()> {
        let physical = self.definition.map_instance_name(map, instance)?;
        self.stage(physical, Held::staged(value));
        Ok(())
    }

    /// Stages JSON text the core built as the new value of a map instance; the text must
    /// be one JSON value other than `null`.
    pub(crate) fn set_map_instance_json(
        &mut self,
        map: &str,
        instance: &str,
        json: String,
    ) -> Result<()> {
        let physical = self.definition.map_instance_name(map, instance)?;
        self.stage(physical, Some(Held::json(json)));
        Ok(())
    }

    /// Stages the deletion of a map instance.
    pub fn delete_map_instance(&mut self, map: &str, instance: &str) -> Result<()> {
        self.set_map_instance(map, instance, Value::Null)
    }

    /// The instance keys of the AttributeMap `map` that hold a value in this call's view,
    /// sorted, as Dex's `AttributeMap.get_all_instance_keys` gives them: the instances the
    /// call loaded and found holding a value, with the ones it staged since (a set adds
    /// its key, a delete removes it). An instance the call did not load is not listed:
    /// load the map whole ([`crate::RpcDefinition::load_map`]) to enumerate all of it.
    pub fn map_instance_keys(&self, map: &str) -> Result<Vec<String>> {
        if !self.definition.has_map(map) {
            return Err(if self.definition.has_attribute(map) {
                Error::invalid_input(format!(
                    "{map:?} is a singleton Attribute, not an AttributeMap; it has no instances"
                ))
            } else {
                Error::invalid_input(format!(
                    "flow type {:?} declares no AttributeMap {map:?}",
                    self.definition.flow_type()
                ))
            });
        }
        let prefix = format!("{map}/");
        let instance = |name: &str| name.strip_prefix(&prefix).map(str::to_owned);
        let mut keys: std::collections::BTreeSet<String> = self
            .snapshot
            .keys()
            .filter_map(|name| instance(name))
            .collect();
        for (name, held) in &self.staged {
            if let Some(key) = instance(name) {
                match held {
                    Some(_) => keys.insert(key),
                    None => keys.remove(&key),
                };
            }
        }
        Ok(keys.into_iter().collect())
    }

    /// The writes staged so far as JSON text, by physical name (`None` deletes), in name
    /// order.
    pub(crate) fn into_writes(self) -> Result<Vec<(String, Option<String>)>> {
        self.staged
            .into_iter()
            .map(|(name, held)| {
                let json = held.map(|held| held.into_text(&name)).transpose()?;
                Ok((name, json))
            })
            .collect()
    }

    /// The physical name of `map`/`instance` after checking the call may read it.
    fn readable_instance(&self, map: &str, instance: &str) -> Result<String> {
        let physical = self.definition.map_instance_name(map, instance)?;
        let readable = self.loaded.contains(&physical)
            || self.staged.contains_key(&physical)
            || self.loaded.contains(&physical[..=map.len()]);
        if !readable {
            return Err(Error::AttributeMapNotLoaded {
                physical_name: physical,
            });
        }
        Ok(physical)
    }

    fn held(&self, physical: &str) -> Option<&Held> {
        match self.staged.get(physical) {
            Some(staged) => staged.as_ref(),
            None => self.snapshot.get(physical),
        }
    }

    fn read(&self, physical: &str) -> Result<Option<&Value>> {
        self.held(physical)
            .map(|held| held.value(self.flow_id, physical))
            .transpose()
    }

    fn stage(&mut self, physical: String, held: Option<Held>) {
        self.staged.insert(physical, held);
    }

    fn undeclared_attribute(&self, name: &str) -> Error {
        let detail = if self.definition.has_map(name) {
            "it is an AttributeMap; read it by instance"
        } else {
            "it is not declared"
        };
        Error::invalid_input(format!(
            "flow type {:?} has no singleton Attribute {name:?}: {detail}",
            self.definition.flow_type()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::FlowDefinition;
    use serde_json::json;

    fn definition() -> FlowDefinition {
        FlowDefinition::builder("F")
            .attribute("state")
            .map("chunks")
            .build()
            .unwrap()
    }

    #[test]
    fn reads_see_staged_writes_and_staged_deletes() {
        let def = definition();
        let loaded = HashSet::from(["chunks/a".to_owned()]);
        let snapshot = vec![
            ("state".to_owned(), "1".to_owned()),
            ("chunks/a".to_owned(), "\"old\"".to_owned()),
        ];
        let mut ctx = RpcContext::new("f", "r", &def, loaded, snapshot);
        assert_eq!(ctx.attribute("state").unwrap(), Some(&json!(1)));
        ctx.set_attribute("state", json!(2)).unwrap();
        assert_eq!(ctx.attribute("state").unwrap(), Some(&json!(2)));
        ctx.delete_map_instance("chunks", "a").unwrap();
        assert_eq!(ctx.map_instance("chunks", "a").unwrap(), None);
        let writes = ctx.into_writes().unwrap();
        assert_eq!(
            writes,
            vec![
                ("chunks/a".to_owned(), None),
                ("state".to_owned(), Some("2".to_owned()))
            ]
        );
    }

    #[test]
    fn text_is_decoded_on_first_read_and_staged_text_reads_back() {
        let def = definition();
        let loaded = HashSet::from(["chunks/a".to_owned(), "chunks/bad".to_owned()]);
        let snapshot = vec![
            ("chunks/a".to_owned(), r#"{"n":[1,2]}"#.to_owned()),
            ("chunks/bad".to_owned(), "{".to_owned()),
        ];
        let mut ctx = RpcContext::new("f", "r", &def, loaded, snapshot);
        assert_eq!(
            ctx.map_instance_json("chunks", "a").unwrap().as_deref(),
            Some(r#"{"n":[1,2]}"#)
        );
        assert_eq!(
            ctx.map_instance("chunks", "a").unwrap(),
            Some(&json!({"n": [1, 2]}))
        );
        let bad = ctx.map_instance("chunks", "bad").unwrap_err().to_string();
        assert!(
            bad.contains(r#"stored value of "chunks/bad" in flow "f" is not JSON"#),
            "{bad}"
        );
        ctx.set_map_instance_json("chunks", "a", r#"{"n":[1,2,3]}"#.to_owned())
            .unwrap();
        assert_eq!(
            ctx.map_instance("chunks", "a").unwrap(),
            Some(&json!({"n": [1, 2, 3]}))
        );
        ctx.set_map_instance("chunks", "b", json!({"n": []}))
            .unwrap();
        assert_eq!(
            ctx.map_instance_json("chunks", "b").unwrap().as_deref(),
            Some(r#"{"n":[]}"#)
        );
        let writes = ctx.into_writes().unwrap();
        assert_eq!(
            writes[0],
            ("chunks/a".to_owned(), Some(r#"{"n":[1,2,3]}"#.to_owned()))
        );
        assert_eq!(
            writes[1],
            ("chunks/b".to_owned(), Some(r#"{"n":[]}"#.to_owned()))
        );
    }

    #[test]
    fn not_loaded_differs_from_absent() {
        let def = definition();
        let loaded = HashSet::from(["chunks/a".to_owned()]);
        let mut ctx = RpcContext::new("f", "r", &def, loaded, Vec::new());
        assert_eq!(ctx.map_instance("chunks", "a").unwrap(), None);
        assert_eq!(
            ctx.map_instance("chunks", "b").unwrap_err(),
            Error::AttributeMapNotLoaded {
                physical_name: "chunks/b".into()
            }
        );
        ctx.set_map_instance("chunks", "b", json!(1)).unwrap();
        assert_eq!(ctx.map_instance("chunks", "b").unwrap(), Some(&json!(1)));
    }

    #[test]
    fn undeclared_names_are_rejected() {
        let def = definition();
        let mut ctx = RpcContext::new("f", "r", &def, HashSet::new(), Vec::new());
        assert!(ctx.attribute("chunks").is_err());
        assert!(ctx.set_attribute("nope", json!(1)).is_err());
        assert!(ctx.set_map_instance("state", "x", json!(1)).is_err());
        assert!(ctx.set_map_instance("chunks", "a/b", json!(1)).is_err());
    }
}
