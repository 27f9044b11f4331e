//! Flows built into attrflow: the patterns of the Dex documentation, in Rust.

pub mod app_log;
pub mod chunked_subscriber;
pub mod customer_directory;
pub mod follow;
pub mod inspect;

use std::sync::Arc;

use crate::definition::FlowDefinition;
use crate::error::{Error, Result};
use crate::lifecycle::FlowStatus;
use crate::options::{IdReusePolicy, StartFlowOptions};
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

/// Starts the built-in flow `flow_id` of `flow_type`, or returns the running one's run ID:
/// what the built-in clients' `start` does. A stopped one is not started again (a new run
/// would hold none of its values): that fails with [`Error::FlowNotActive`] saying how it
/// was stopped, as every call on it does.
fn ensure_started(runtime: &Runtime, flow_type: &str, flow_id: &str) -> Result<String> {
    let options = StartFlowOptions::new()
        .ignore_already_started(true)
        .id_reuse_policy(IdReusePolicy::Disallow);
    runtime
        .start_flow(flow_type, flow_id, &options)
        .map_err(|error| match error {
            Error::FlowAlreadyStarted {
                flow_id, status, ..
            } if status != FlowStatus::Running => Error::FlowNotActive { flow_id, status },
            other => other,
        })
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
