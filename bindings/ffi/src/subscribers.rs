//! The subscriber archive (`ChunkedSubscriberFlow`) on [`Store`].

use attrflow::flows::chunked_subscriber as core;
use attrflow::flows::chunked_subscriber::SubscriberArchive;

use crate::error::Result;
use crate::store::Store;

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

#[uniffi::export]
impl Store {
    /// Starts the subscriber archive `flow_id`, or returns the running one's run ID.
    pub fn start_subscriber_archive(&self, flow_id: String) -> Result<String> {
        Ok(SubscriberArchive::new(&self.runtime, &flow_id).start()?)
    }

    /// Appends a subscriber (`RegisterSubscriber`) once; a concurrent append fails with
    /// `LockConflict`, to be retried.
    pub fn register_subscriber(
        &self,
        flow_id: String,
        subscriber_id: String,
        delivery_address: String,
    ) -> Result<Subscriber> {
        let archive = SubscriberArchive::new(&self.runtime, &flow_id);
        Ok(archive.register(&subscriber_id, &delivery_address)?.into())
    }

    /// Reads one page (`GetSubscriberPage`): `""` or `current` for the newest, else the
    /// previous page's `next_page_token`.
    pub fn get_subscriber_page(
        &self,
        flow_id: String,
        page_token: String,
    ) -> Result<SubscriberPage> {
        let archive = SubscriberArchive::new(&self.runtime, &flow_id);
        Ok(archive.page(&page_token)?.into())
    }
}
