//! Flows built into attrflow: the patterns of the Dex documentation, in Rust.

pub mod app_log;
pub mod chunked_subscriber;
pub mod customer_directory;
pub mod inspect;

use crate::definition::FlowDefinition;

/// Every built-in flow type, registered by [`crate::Runtime::new`].
pub fn built_in() -> Vec<FlowDefinition> {
    vec![
        chunked_subscriber::definition(),
        customer_directory::definition(),
        app_log::definition(),
    ]
}
