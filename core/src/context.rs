//! What a handler sees and does: a point-in-time snapshot of the flow (every singleton
//! Attribute plus the loaded map instances) and the writes it stages.
//!
//! Writes are only staged here. The runtime commits them all in one transaction when the
//! handler returns `Ok`, and drops them when it fails, so a handler is all-or-nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result};

/// An RPC's handler: runs once per call against the call's [`RpcContext`], takes the
/// decoded JSON input and returns JSON output.
pub type RpcHandler = Arc<dyn Fn(&mut RpcContext<'_>, Value) -> Result<Value> + Send + Sync>;

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

/// The handler's view of one flow during one RPC call.
#[derive(Debug)]
pub struct RpcContext<'a> {
    flow_id: &'a str,
    definition: &'a dyn DeclaredNames,
    loaded: HashSet<String>,
    snapshot: HashMap<String, Value>,
    staged: BTreeMap<String, Option<Value>>,
}

impl<'a> RpcContext<'a> {
    pub(crate) fn new(
        flow_id: &'a str,
        definition: &'a dyn DeclaredNames,
        loaded: HashSet<String>,
        snapshot: HashMap<String, Value>,
    ) -> Self {
        RpcContext {
            flow_id,
            definition,
            loaded,
            snapshot,
            staged: BTreeMap::new(),
        }
    }

    /// The ID of the flow the RPC was invoked on.
    pub fn flow_id(&self) -> &str {
        self.flow_id
    }

    /// The singleton Attribute `name`, or `None` when it holds no value. Staged writes are
    /// seen first.
    pub fn attribute(&self, name: &str) -> Result<Option<&Value>> {
        if !self.definition.has_attribute(name) {
            return Err(self.undeclared_attribute(name));
        }
        Ok(self.read(name))
    }

    /// Stages a new value for the singleton Attribute `name`. `Value::Null` deletes it.
    pub fn set_attribute(&mut self, name: &str, value: Value) -> Result<()> {
        if !self.definition.has_attribute(name) {
            return Err(self.undeclared_attribute(name));
        }
        self.stage(name.to_owned(), value);
        Ok(())
    }

    /// The map instance `map`/`instance`, or `None` when it is loaded but holds no value.
    ///
    /// Reading an instance the RPC did not load is [`Error::AttributeMapNotLoaded`], never
    /// `None`: absent and unknown must not look alike. An instance this call wrote is
    /// readable whether or not it was loaded.
    pub fn map_instance(&self, map: &str, instance: &str) -> Result<Option<&Value>> {
        let physical = self.definition.map_instance_name(map, instance)?;
        if !self.loaded.contains(&physical) && !self.staged.contains_key(&physical) {
            return Err(Error::AttributeMapNotLoaded {
                physical_name: physical,
            });
        }
        Ok(self.read(&physical))
    }

    /// Stages a new value for a map instance. Writing needs no load or lock. `Value::Null`
    /// deletes the instance.
    pub fn set_map_instance(&mut self, map: &str, instance: &str, value: Value) -> Result<()> {
        let physical = self.definition.map_instance_name(map, instance)?;
        self.stage(physical, value);
        Ok(())
    }

    /// Stages the deletion of a map instance.
    pub fn delete_map_instance(&mut self, map: &str, instance: &str) -> Result<()> {
        self.set_map_instance(map, instance, Value::Null)
    }

    /// The writes staged so far, by physical name (`None` deletes), in name order.
    pub(crate) fn into_writes(self) -> BTreeMap<String, Option<Value>> {
        self.staged
    }

    fn read(&self, physical: &str) -> Option<&Value> {
        match self.staged.get(physical) {
            Some(staged) => staged.as_ref(),
            None => self.snapshot.get(physical),
        }
    }

    fn stage(&mut self, physical: String, value: Value) {
        let value = (!value.is_null()).then_some(value);
        self.staged.insert(physical, value);
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
        let snapshot = HashMap::from([
            ("state".to_owned(), json!(1)),
            ("chunks/a".to_owned(), json!("old")),
        ]);
        let mut ctx = RpcContext::new("f", &def, loaded, snapshot);
        assert_eq!(ctx.attribute("state").unwrap(), Some(&json!(1)));
        ctx.set_attribute("state", json!(2)).unwrap();
        assert_eq!(ctx.attribute("state").unwrap(), Some(&json!(2)));
        ctx.delete_map_instance("chunks", "a").unwrap();
        assert_eq!(ctx.map_instance("chunks", "a").unwrap(), None);
        let writes = ctx.into_writes();
        assert_eq!(writes.get("state"), Some(&Some(json!(2))));
        assert_eq!(writes.get("chunks/a"), Some(&None));
    }

    #[test]
    fn not_loaded_differs_from_absent() {
        let def = definition();
        let loaded = HashSet::from(["chunks/a".to_owned()]);
        let mut ctx = RpcContext::new("f", &def, loaded, HashMap::new());
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
        let mut ctx = RpcContext::new("f", &def, HashSet::new(), HashMap::new());
        assert!(ctx.attribute("chunks").is_err());
        assert!(ctx.set_attribute("nope", json!(1)).is_err());
        assert!(ctx.set_map_instance("state", "x", json!(1)).is_err());
        assert!(ctx.set_map_instance("chunks", "a/b", json!(1)).is_err());
    }
}
