//! What an RPC hands back: its output as a JSON value, or written once as JSON text.
//!
//! A handler that builds its output from typed data (a page of records, an appended record)
//! writes it straight to JSON text with [`RpcOutput::encode`]: no tree of values is built on
//! the way out, and each caller reads the text the way it needs. The typed Rust clients
//! decode it into their structs ([`RpcOutput::decode`]), the bindings hand it across as one
//! buffer (the Python extension decodes it into the caller's dataclasses in one pass,
//! Kotlin and Swift receive it as the JSON string they parse). A handler that computes a
//! JSON value (a flow defined in Rust by [`crate::RpcDefinition::new`]) returns that value,
//! and [`Runtime::invoke_rpc`](crate::Runtime::invoke_rpc) still returns a
//! [`serde_json::Value`] whichever form the handler chose.
//!
//! ```
//! use attrflow::output::RpcOutput;
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Page {
//!     names: Vec<String>,
//! }
//! let output = RpcOutput::encode("page", &Page { names: vec!["a".into()] })?;
//! assert_eq!(output.to_json(), r#"{"names":["a"]}"#);
//! let page: Page = output.decode("ListNames")?;
//! assert_eq!(page.names, ["a"]);
//! # Ok::<(), attrflow::Error>(())
//! ```

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Error, Result};

/// An RPC's output, in the form its handler made it.
#[derive(Debug, Clone)]
pub enum RpcOutput {
    /// A JSON value (what [`crate::RpcDefinition::new`]'s handlers return).
    Value(Value),
    /// JSON text, written once from typed data ([`RpcOutput::encode`]).
    Json(Box<RawValue>),
}

impl RpcOutput {
    /// `value` written as JSON text; `what` names it when it cannot be written (a map with
    /// keys that are not strings, a serializer's own error).
    pub fn encode<T: Serialize>(what: &str, value: &T) -> Result<Self> {
        serde_json::value::to_raw_value(value)
            .map(RpcOutput::Json)
            .map_err(|e| Error::invalid_input(format!("cannot encode {what} as JSON: {e}")))
    }

    /// The output as a JSON value (text is parsed).
    pub fn into_value(self) -> Result<Value> {
        match self {
            RpcOutput::Value(value) => Ok(value),
            RpcOutput::Json(text) => serde_json::from_str(text.get())
                .map_err(|e| Error::storage(format!("an RPC output is not a JSON value: {e}"))),
        }
    }

    /// The output as compact JSON text (a value is written).
    pub fn to_json(&self) -> Cow<'_, str> {
        match self {
            RpcOutput::Value(value) => Cow::Owned(value.to_string()),
            RpcOutput::Json(text) => Cow::Borrowed(text.get()),
        }
    }

    /// The output of the RPC `rpc` decoded as `T`, straight from its text or taking a
    /// value's strings instead of copying them. A mismatch is a storage error naming the
    /// RPC and `T`: the handler and its caller disagree about the output's shape.
    pub fn decode<T: DeserializeOwned>(self, rpc: &str) -> Result<T> {
        let decoded = match self {
            RpcOutput::Json(text) => serde_json::from_str(text.get()),
            RpcOutput::Value(value) => T::deserialize(value),
        };
        decoded.map_err(|e| {
            Error::storage(format!(
                "the output of RPC {rpc} does not decode as {}: {e}",
                std::any::type_name::<T>()
            ))
        })
    }
}

impl From<Value> for RpcOutput {
    fn from(value: Value) -> Self {
        RpcOutput::Value(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Page {
        names: Vec<String>,
    }

    #[test]
    fn an_output_decodes_from_either_form_and_a_mismatch_names_the_rpc_and_the_type() {
        let from_value: Page = RpcOutput::from(json!({"names": ["a", "b"]}))
            .decode("Listing")
            .expect("a page");
        assert_eq!(from_value.names, ["a", "b"]);
        let written = RpcOutput::encode("page", &from_value).expect("encodes");
        assert_eq!(
            written.decode::<Page>("Listing").expect("a page"),
            from_value
        );

        for output in [
            RpcOutput::from(json!({"names": 1})),
            RpcOutput::Json(RawValue::from_string(r#"{"names":1}"#.to_owned()).expect("JSON")),
        ] {
            let message = output
                .decode::<Page>("Listing")
                .expect_err("a number is not a list")
                .to_string();
            assert!(
                message.contains("the output of RPC Listing does not decode as"),
                "{message}"
            );
            assert!(message.contains("Page"), "{message}");
            assert!(message.contains("expected a sequence"), "{message}");
        }
    }

    #[test]
    fn both_forms_give_the_same_value_and_text() {
        let value = json!({"pageToken": "", "subscribers": [{"sequence": 1}], "next": null});
        let written = RpcOutput::encode("page", &value).expect("encodes");
        assert_eq!(written.to_json(), RpcOutput::from(value.clone()).to_json());
        assert_eq!(written.into_value().expect("parses"), value);
    }

    #[test]
    fn an_output_that_cannot_be_written_names_what_it_is() {
        let keyed = std::collections::BTreeMap::from([((1, 2), "pair")]);
        let message = RpcOutput::encode("the listing", &keyed)
            .expect_err("tuple keys are no JSON keys")
            .to_string();
        assert!(
            message.contains("cannot encode the listing as JSON"),
            "{message}"
        );
    }
}
