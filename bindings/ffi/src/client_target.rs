//! [`Target`]: the store, flow and retry policy a client object (`store.appLog(flowId)`,
//! …) calls with.

use std::sync::Arc;

use attrflow::retry::RetryPolicy as CorePolicy;

use crate::error::Result;
use crate::retry_policy::{core_policy, RetryPolicy};
use crate::store::Store;

/// The store, flow and policy a client object calls with.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) store: Arc<Store>,
    pub(crate) flow_id: String,
    pub(crate) retry: CorePolicy,
}

impl Target {
    pub(crate) fn new(
        store: Arc<Store>,
        flow_id: String,
        retry: Option<RetryPolicy>,
    ) -> Result<Self> {
        Ok(Target {
            store,
            flow_id,
            retry: core_policy(retry)?,
        })
    }
}
