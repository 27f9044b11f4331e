//! How the core's typed flow clients become objects: `store.subscriberArchive(flowId)`,
//! `store.appLog(flowId)` and `store.customerDirectory(flowId)`, each calling with the
//! core's [`RetryPolicy`](attrflow::retry::RetryPolicy) it was made with, so every call
//! retries lock conflicts by that policy and no Kotlin or Swift caller writes a retry loop.
//! The objects and their calls live in their flow's file (`subscribers.rs`, `app_log.rs`,
//! `customer_directory.rs`, …); the set of calls is exactly the core client's.

use std::sync::Arc;

use crate::app_log::AppLog;
use crate::client_target::Target;
use crate::customer_directory::CustomerDirectory;
use crate::error::Result;
use crate::retry_policy::RetryPolicy;
use crate::store::Store;
use crate::subscribers::SubscriberArchive;

#[uniffi::export]
impl Store {
    /// The subscriber archive `flow_id` (normally `chunked-subscriber-archive`), retrying
    /// lock conflicts by `retry` (the default policy when absent).
    #[uniffi::method(default(retry = None))]
    pub fn subscriber_archive(
        self: Arc<Self>,
        flow_id: String,
        retry: Option<RetryPolicy>,
    ) -> Result<Arc<SubscriberArchive>> {
        Ok(Arc::new(SubscriberArchive(Target::new(
            self, flow_id, retry,
        )?)))
    }

    /// The app log `flow_id` (flow type `ChunkedLogFlow`), retrying lock conflicts by
    /// `retry` (the default policy when absent).
    #[uniffi::method(default(retry = None))]
    pub fn app_log(
        self: Arc<Self>,
        flow_id: String,
        retry: Option<RetryPolicy>,
    ) -> Result<Arc<AppLog>> {
        Ok(Arc::new(AppLog(Target::new(self, flow_id, retry)?)))
    }

    /// The customer directory `flow_id` (normally `customer-directory`), retrying lock
    /// conflicts by `retry` (the default policy when absent).
    #[uniffi::method(default(retry = None))]
    pub fn customer_directory(
        self: Arc<Self>,
        flow_id: String,
        retry: Option<RetryPolicy>,
    ) -> Result<Arc<CustomerDirectory>> {
        Ok(Arc::new(CustomerDirectory(Target::new(
            self, flow_id, retry,
        )?)))
    }
}
