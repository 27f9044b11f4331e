//! The subscriber archive (`ChunkedSubscriberFlow`) client object: its records, start,
//! registration and paging (batches and layout in `subscriber_appends.rs`, retention and
//! reads forward in `retention.rs`, the follow cursor in `follow.rs`, proofs in
//! `verifiable.rs`).

use attrflow::flows::chunked_subscriber as core;
use attrflow::flows::chunked_subscriber::SubscriberArchive as CoreArchive;

use crate::client_target::Target;
use crate::error::Result;

/// One archived subscriber.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Subscriber {
    /// Its place in the archive, from 1, dense.
    pub sequence: u64,
    /// The caller's ID for the subscriber.
    pub subscriber_id: String,
    /// Where to deliver to it.
    pub delivery_address: String,
}

/// One page of subscribers, newest first.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SubscriberPage {
    /// The token read (`current` for `""`).
    pub page_token: String,
    /// The chunk's subscribers, newest first.
    pub subscribers: Vec<Subscriber>,
    /// The next older page's token, `""` on the oldest page.
    pub next_page_token: String,
}

impl From<core::Subscriber> for Subscriber {
    fn from(s: core::Subscriber) -> Self {
        Subscriber {
            sequence: s.sequence,
            subscriber_id: s.subscriber_id,
            delivery_address: s.delivery_address,
        }
    }
}

impl From<core::SubscriberPage> for SubscriberPage {
    fn from(page: core::SubscriberPage) -> Self {
        SubscriberPage {
            page_token: page.page_token,
            subscribers: page.subscribers.into_iter().map(Into::into).collect(),
            next_page_token: page.next_page_token,
        }
    }
}

/// The flow ID the subscriber-archive pattern uses, `chunked-subscriber-archive`.
#[uniffi::export]
pub fn subscriber_archive_flow_id() -> String {
    core::FLOW_ID.to_owned()
}

/// One subscriber archive (`ChunkedSubscriberFlow`) of a store, `store.subscriberArchive(flowId)`:
/// every call retries lock conflicts by the policy the archive was made with.
#[derive(Debug, uniffi::Object)]
pub struct SubscriberArchive(pub(crate) Target);

impl SubscriberArchive {
    /// The core's client of this archive, with its policy.
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

    /// Appends a subscriber (`RegisterSubscriber`) and returns it with its sequence.
    pub fn register(&self, subscriber_id: String, delivery_address: String) -> Result<Subscriber> {
        Ok(self
            .core()
            .register(&subscriber_id, &delivery_address)?
            .into())
    }

    /// Reads one page (`GetSubscriberPage`): `""` or `current` for the newest, else the
    /// previous page's `nextPageToken`.
    pub fn page(&self, page_token: String) -> Result<SubscriberPage> {
        Ok(self.core().page(&page_token)?.into())
    }
}
