//! Flows built into attrflow: the patterns of the Dex documentation, in Rust.

pub mod app_log;
pub mod chunked_subscriber;
pub mod customer_directory;
pub mod inspect;

use std::sync::Arc;

use crate::definition::FlowDefinition;
use crate::error::Result;
use crate::runtime::Runtime;
use crate::store::{open_store, Store};

/// Every built-in flow type, registered by [`Runtime::new`].
pub fn built_in() -> Vec<FlowDefinition> {
    vec![
        chunked_subscriber::definition(),
        customer_directory::definition(),
        app_log::definition(),
    ]
}

/// The built-in flow type named `flow_type`, or `None` when no built-in flow has that name.
/// A front end that lets applications define flow types of their own registers a built-in
/// one only when it is used, so an application's flow type may take a built-in's name.
pub fn built_in_named(flow_type: &str) -> Option<FlowDefinition> {
    built_in()
        .into_iter()
        .find(|definition| definition.flow_type() == flow_type)
}

// The constructors that register the built-in flows live here, beside them, so that the
// runtime itself knows no flow type.
impl Runtime {
    /// A runtime over `store` with the built-in flow types registered.
    pub fn new(store: Arc<dyn Store>) -> Self {
        let runtime = Runtime::without_built_ins(store);
        for definition in built_in() {
            // Their names are distinct constants, so none is registered twice.
            let _ = runtime.register(definition);
        }
        runtime
    }

    /// Opens the store named by `url` (see [`crate::store::StoreUrl`]) with the built-in
    /// flow types registered.
    pub fn open(url: &str) -> Result<Self> {
        Ok(Runtime::new(open_store(url)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_flow_types_are_distinct() {
        let mut types: Vec<_> = built_in()
            .iter()
            .map(|definition| definition.flow_type().to_owned())
            .collect();
        types.sort();
        types.dedup();
        assert_eq!(types.len(), built_in().len());
    }
}
