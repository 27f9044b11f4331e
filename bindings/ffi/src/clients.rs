//! How the core's typed flow clients become objects: `store.subscriberArchive(flowId)`,
//! `store.appLog(flowId)` and `store.customerDirectory(flowId)`, each calling with the
//! core's [`RetryPolicy`](attrflow::retry::RetryPolicy) it was made with, so every call
//! retries lock conflicts by that policy and no Kotlin or Swift caller writes a retry loop.
//! The objects and their calls live in their flow's file (`subscribers.rs`, `app_log.rs`,
//! `customer_directory.rs`, …); the set of calls is exactly the core client's.

use std::sync::Arc;
use std::time::Duration;

use attrflow::retry::RetryPolicy as CorePolicy;

use crate::app_log::AppLog;
use crate::customer_directory::CustomerDirectory;
use crate::error::Result;
use crate::store::Store;
use crate::subscribers::SubscriberArchive;

/// How often, and for how long, a client's calls retry a lock conflict: at most
/// `max_attempts` calls, pauses drawn at random below a bound that doubles from
/// `first_delay_ms` to `max_delay_ms`, and no new call after `budget_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct RetryPolicy {
    /// The most calls, the first included; at least 1.
    pub max_attempts: u32,
    /// The bound of the first pause, in milliseconds; at least 1.
    pub first_delay_ms: u64,
    /// The bound of any pause, in milliseconds; at least `first_delay_ms`.
    pub max_delay_ms: u64,
    /// The time after which no new call starts, in milliseconds.
    pub budget_ms: u64,
}

/// The core's default policy: 100 attempts, pauses below 1 ms doubling to 50 ms, 5 s.
#[uniffi::export]
pub fn default_retry_policy() -> RetryPolicy {
    let policy = CorePolicy::DEFAULT;
    RetryPolicy {
        max_attempts: policy.max_attempts(),
        first_delay_ms: millis(policy.first_delay()),
        max_delay_ms: millis(policy.max_delay()),
        budget_ms: millis(policy.budget()),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The store, flow and policy a client object calls with.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) store: Arc<Store>,
    pub(crate) flow_id: String,
    pub(crate) retry: CorePolicy,
}

impl Target {
    fn new(store: Arc<Store>, flow_id: String, retry: Option<RetryPolicy>) -> Result<Self> {
        Ok(Target {
            store,
            flow_id,
            retry: core_policy(retry)?,
        })
    }
}

/// The core policy `policy` describes (checked), or the default.
pub(crate) fn core_policy(policy: Option<RetryPolicy>) -> Result<CorePolicy> {
    let Some(policy) = policy else {
        return Ok(CorePolicy::DEFAULT);
    };
    Ok(CorePolicy::new(
        policy.max_attempts,
        Duration::from_millis(policy.first_delay_ms),
        Duration::from_millis(policy.max_delay_ms),
        Duration::from_millis(policy.budget_ms),
    )?)
}

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
