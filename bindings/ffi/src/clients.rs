//! The typed flow clients of the core as objects: `store.subscriberArchive(flowId)`,
//! `store.appLog(flowId)` and `store.customerDirectory(flowId)`, each with the core's
//! [`RetryPolicy`](attrflow::retry::RetryPolicy) behind its `*WithRetry` calls, so no
//! Kotlin or Swift caller writes a retry loop of its own.

use std::sync::Arc;
use std::time::Duration;

use attrflow::flows::app_log::AppLog as CoreAppLog;
use attrflow::flows::chunked_subscriber::SubscriberArchive as CoreArchive;
use attrflow::flows::customer_directory::CustomerDirectory as CoreDirectory;
use attrflow::retry::RetryPolicy as CorePolicy;

use crate::app_log::{parse_record, parse_records, LogEntry, LogPage};
use crate::customer_directory::CustomerProfile;
use crate::error::Result;
use crate::store::Store;
use crate::subscriber_appends::{ChunkSizeChange, IdempotencyWindow, NewSubscriber};
use crate::subscribers::{Subscriber, SubscriberPage};

/// How often, and for how long, a `*WithRetry` call retries a lock conflict: at most
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
struct Target {
    store: Arc<Store>,
    flow_id: String,
    retry: CorePolicy,
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

/// One subscriber archive (`ChunkedSubscriberFlow`) of a store.
#[derive(Debug, uniffi::Object)]
pub struct SubscriberArchive(Target);

impl SubscriberArchive {
    pub(crate) fn core(&self) -> CoreArchive<'_> {
        CoreArchive::new(&self.0.store.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
    }
}

#[uniffi::export]
impl SubscriberArchive {
    /// Starts the archive, or returns the running one's run ID.
    pub fn start(&self) -> Result<String> {
        Ok(self.core().start()?)
    }

    /// Appends a subscriber once; a concurrent append fails with `LockConflict`.
    pub fn register(&self, subscriber_id: String, delivery_address: String) -> Result<Subscriber> {
        Ok(self
            .core()
            .register(&subscriber_id, &delivery_address)?
            .into())
    }

    /// Appends a subscriber, retrying lock conflicts by the archive's policy.
    pub fn register_with_retry(
        &self,
        subscriber_id: String,
        delivery_address: String,
    ) -> Result<Subscriber> {
        Ok(self
            .core()
            .register(&subscriber_id, &delivery_address)?
            .into())
    }

    /// Appends 1 to 1000 subscribers in one transaction, retrying lock conflicts by the
    /// archive's policy; with `idempotency_key`, a retry of the same batch returns the
    /// first call's subscribers.
    #[uniffi::method(default(idempotency_key = None))]
    pub fn register_batch_with_retry(
        &self,
        subscribers: Vec<NewSubscriber>,
        idempotency_key: Option<String>,
    ) -> Result<Vec<Subscriber>> {
        let batch: Vec<_> = subscribers.into_iter().map(Into::into).collect();
        let stored = self
            .core()
            .retrying(|archive| archive.register_batch(&batch, idempotency_key.as_deref()))?;
        Ok(stored.into_iter().map(Into::into).collect())
    }

    /// Appends a subscriber under `idempotency_key`, retrying lock conflicts by the
    /// archive's policy: a retry with the same key returns the first call's subscriber.
    pub fn register_once_with_retry(
        &self,
        idempotency_key: String,
        subscriber_id: String,
        delivery_address: String,
    ) -> Result<Subscriber> {
        let subscriber = self.core().retrying(|archive| {
            archive.register_once(&idempotency_key, &subscriber_id, &delivery_address)
        })?;
        Ok(subscriber.into())
    }

    /// Reads one page: `""` or `current` for the newest, else a `next_page_token`.
    pub fn page(&self, page_token: String) -> Result<SubscriberPage> {
        Ok(self.core().page(&page_token)?.into())
    }

    /// Moves the archive to `chunk_size` (1 to 127) subscribers per chunk from the next
    /// chunk boundary, retrying lock conflicts by the archive's policy.
    pub fn change_chunk_size_with_retry(&self, chunk_size: u64) -> Result<ChunkSizeChange> {
        let change = self
            .core()
            .retrying(|archive| archive.change_chunk_size(chunk_size))?;
        Ok(change.into())
    }

    /// Sets how many idempotency keys the archive remembers, and for how long, retrying
    /// lock conflicts by the archive's policy.
    pub fn set_idempotency_window_with_retry(
        &self,
        window: IdempotencyWindow,
    ) -> Result<IdempotencyWindow> {
        let set = self
            .core()
            .retrying(|archive| archive.set_idempotency_window(window.into()))?;
        Ok(set.into())
    }
}

/// One app log (`ChunkedLogFlow`) of a store: named logs of JSON records.
#[derive(Debug, uniffi::Object)]
pub struct AppLog(Target);

impl AppLog {
    pub(crate) fn core(&self) -> CoreAppLog<'_> {
        CoreAppLog::new(&self.0.store.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
    }
}

#[uniffi::export]
impl AppLog {
    /// Starts the app log, or returns the running one's run ID.
    pub fn start(&self) -> Result<String> {
        Ok(self.core().start()?)
    }

    /// Appends the JSON record `record_json` to `log`, retrying lock conflicts by the
    /// app log's policy.
    pub fn append_with_retry(&self, log: String, record_json: String) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        Ok(self.core().append(&log, record)?.into())
    }

    /// Appends 1 to 1000 JSON records to `log` in one transaction, retrying lock conflicts
    /// by the app log's policy; with `idempotency_key`, a retry of the same batch returns
    /// the first call's entries.
    #[uniffi::method(default(idempotency_key = None))]
    pub fn append_batch_with_retry(
        &self,
        log: String,
        records_json: Vec<String>,
        idempotency_key: Option<String>,
    ) -> Result<Vec<LogEntry>> {
        let records = parse_records(&log, &records_json)?;
        let entries = self.core().retrying(|logs| {
            logs.append_batch(&log, records.clone(), idempotency_key.as_deref())
        })?;
        Ok(entries.into_iter().map(Into::into).collect())
    }

    /// Appends the JSON record `record_json` to `log` under `idempotency_key`, retrying
    /// lock conflicts by the app log's policy.
    pub fn append_once_with_retry(
        &self,
        log: String,
        idempotency_key: String,
        record_json: String,
    ) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        let entry = self
            .core()
            .retrying(|logs| logs.append_once(&log, &idempotency_key, record.clone()))?;
        Ok(entry.into())
    }

    /// Reads one page of `log`: `""` or `current` for the newest, else a
    /// `next_page_token`.
    pub fn page(&self, log: String, page_token: String) -> Result<LogPage> {
        Ok(self.core().page(&log, &page_token)?.into())
    }
}

/// One customer directory (`CustomerDirectoryFlow`) of a store.
#[derive(Debug, uniffi::Object)]
pub struct CustomerDirectory(Target);

impl CustomerDirectory {
    fn core(&self) -> CoreDirectory<'_> {
        CoreDirectory::new(&self.0.store.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
    }
}

#[uniffi::export]
impl CustomerDirectory {
    /// Starts the directory, or returns the running one's run ID.
    pub fn start(&self) -> Result<String> {
        Ok(self.core().start()?)
    }

    /// Saves a profile under its canonical email, retrying lock conflicts by the
    /// directory's policy, and returns it as stored.
    pub fn upsert_with_retry(&self, profile: CustomerProfile) -> Result<CustomerProfile> {
        Ok(self.core().upsert(&profile.into())?.into())
    }

    /// The profile of `email_address`; `RecordNotFound` when none is stored.
    pub fn get(&self, email_address: String) -> Result<CustomerProfile> {
        Ok(self.core().get(&email_address)?.into())
    }
}
