//! Flows built into attrflow: the patterns of the Dex documentation, in Rust.

pub mod app_log;
pub mod chunked_subscriber;
pub mod customer_directory;

use crate::definition::FlowDefinition;

/// Every built-in flow type, registered by [`crate::Runtime::new`].
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
