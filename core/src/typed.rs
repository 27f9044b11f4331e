//! Typed access to the JSON snapshot: `AttributeMap<T>` reads and stages serde values so
//! flow code never handles raw JSON, and the encode/decode helpers every flow uses.
//!
//! ```
//! use attrflow::AttributeMap;
//! let chunks: AttributeMap<Vec<String>> = AttributeMap::new("chunks");
//! assert_eq!(chunks.name(), "chunks");
//! ```

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::context::RpcContext;
use crate::error::{Error, Result};

/// An AttributeMap whose instances each hold a `T`.
#[derive(Debug)]
pub struct AttributeMap<T> {
    name: &'static str,
    _value: PhantomData<fn() -> T>,
}

impl<T> Clone for AttributeMap<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for AttributeMap<T> {}

impl<T: Serialize + DeserializeOwned> AttributeMap<T> {
    /// A handle on the AttributeMap `name`.
    pub const fn new(name: &'static str) -> Self {
        AttributeMap {
            name,
            _value: PhantomData,
        }
    }

    /// The map's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The instance's value; `None` when loaded but absent, an
    /// [`Error::AttributeMapNotLoaded`] when not loaded.
    pub fn get(&self, ctx: &RpcContext<'_>, instance: &str) -> Result<Option<T>> {
        ctx.map_instance(self.name, instance)?
            .map(|value| decode_stored(&format!("{}/{instance}", self.name), value))
            .transpose()
    }

    /// Stages a new value for the instance.
    pub fn set(&self, ctx: &mut RpcContext<'_>, instance: &str, value: &T) -> Result<()> {
        ctx.set_map_instance(self.name, instance, encode(self.name, value)?)
    }

    /// Stages the deletion of the instance.
    pub fn delete(&self, ctx: &mut RpcContext<'_>, instance: &str) -> Result<()> {
        ctx.delete_map_instance(self.name, instance)
    }

    /// The keys of the instances holding a value in the call's view, sorted
    /// ([`RpcContext::map_instance_keys`]).
    pub fn keys(&self, ctx: &RpcContext<'_>) -> Result<Vec<String>> {
        ctx.map_instance_keys(self.name)
    }
}

/// Decodes a stored value; a mismatch means the store holds data this code cannot read.
pub(crate) fn decode_stored<T: DeserializeOwned>(physical: &str, value: &Value) -> Result<T> {
    T::deserialize(value).map_err(|e| {
        Error::storage(format!(
            "stored value of {physical:?} does not decode as {}: {e}",
            std::any::type_name::<T>()
        ))
    })
}

/// Decodes the stored JSON text of a value (or of one record of a chunk) as `T`, naming
/// the value stored as `physical` when it does not decode, as [`decode_stored`] does.
pub(crate) fn decode_stored_json<T: DeserializeOwned>(physical: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| {
        Error::storage(format!(
            "stored value of {physical:?} does not decode as {}: {e}",
            std::any::type_name::<T>()
        ))
    })
}

/// Decodes the input of an RPC; a mismatch is the caller's mistake.
pub fn decode_input<T: DeserializeOwned>(rpc: &str, input: Value) -> Result<T> {
    serde_path_to_error::deserialize(input).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        Error::invalid_input(format!("invalid input for RPC {rpc}: {at}{}", e.inner()))
    })
}

/// Encodes a value to JSON.
pub fn encode<T: Serialize>(what: &str, value: &T) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| Error::invalid_input(format!("cannot encode {what} as JSON: {e}")))
}
