//! Batch and idempotent registration: `RegisterSubscribers` and `RegisterSubscriberOnce`.
//!
//! `RegisterSubscribers` appends up to [`MAX_BATCH_SIZE`](crate::chunked_log::MAX_BATCH_SIZE) subscribers in one transaction,
//! filling and archiving as many chunks as they need; one bad subscriber fails the whole
//! batch and stores nothing. With an `idempotencyKey` it is also idempotent.
//!
//! `RegisterSubscriberOnce` appends one subscriber under a required idempotency key. A
//! retry with the same key and the same subscriber, within the archive's idempotency
//! window (100 keys and 24 hours unless set otherwise), returns the subscriber of the
//! first call with its original sequence and appends nothing, also when the first call
//! committed but its reply was lost. The same key with another subscriber is
//! `InvalidInput`; a retry after the key left the window is a new registration. Both RPCs
//! also lock and read the archive's remembered keys; plain `RegisterSubscriber` does not.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    check_required_fields, Subscriber, SubscriberArchive, LOG, REGISTER_SUBSCRIBERS,
    REGISTER_SUBSCRIBER_ONCE,
};
use crate::context::RpcContext;
use crate::definition::RpcDefinition;
use crate::error::{Error, Result};
use crate::output::RpcOutput;
use crate::typed::{decode_input, encode};

/// One subscriber of a batch, before it has a sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NewSubscriber {
    /// The subscriber's ID; required.
    pub subscriber_id: String,
    /// The subscriber's delivery address; required.
    pub delivery_address: String,
}

impl NewSubscriber {
    /// A subscriber to register.
    pub fn new(subscriber_id: impl Into<String>, delivery_address: impl Into<String>) -> Self {
        NewSubscriber {
            subscriber_id: subscriber_id.into(),
            delivery_address: delivery_address.into(),
        }
    }
}

/// Input of `RegisterSubscribers`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegisterSubscribersInput {
    /// The subscribers, in the order they get their sequences; 1 to [`MAX_BATCH_SIZE`](crate::chunked_log::MAX_BATCH_SIZE).
    pub subscribers: Vec<NewSubscriber>,
    /// An idempotency key for the whole batch; `""` for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub idempotency_key: String,
}

/// Output of `RegisterSubscribers`: the registered subscribers, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredSubscribers {
    /// The subscribers with their sequences, in the batch's order.
    pub subscribers: Vec<Subscriber>,
}

/// Input of `RegisterSubscriberOnce`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegisterSubscriberOnceInput {
    /// The idempotency key; required, 1 to 128 visible ASCII characters.
    pub idempotency_key: String,
    /// The subscriber's ID; required.
    pub subscriber_id: String,
    /// The subscriber's delivery address; required.
    pub delivery_address: String,
}

pub(super) fn register_subscribers_rpc() -> RpcDefinition {
    LOG.appending_idempotent(RpcDefinition::new_with_output(
        REGISTER_SUBSCRIBERS,
        register_subscribers,
    ))
}

pub(super) fn register_subscriber_once_rpc() -> RpcDefinition {
    LOG.appending_idempotent(RpcDefinition::new_with_output(
        REGISTER_SUBSCRIBER_ONCE,
        register_subscriber_once,
    ))
}

/// Gives `new` its sequence, after checking it; `index` names it in a batch's errors.
fn numbered(sequence: u64, new: NewSubscriber, index: Option<usize>) -> Result<Subscriber> {
    check_required_fields(&new.subscriber_id, &new.delivery_address).map_err(|error| {
        match (index, error) {
            (Some(index), Error::InvalidInput(message)) => {
                Error::invalid_input(format!("subscribers[{index}]: {message}"))
            }
            (_, error) => error,
        }
    })?;
    Ok(Subscriber {
        sequence,
        subscriber_id: new.subscriber_id,
        delivery_address: new.delivery_address,
    })
}

fn register_subscribers(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: RegisterSubscribersInput = decode_input(REGISTER_SUBSCRIBERS, input)?;
    let items: Vec<(usize, NewSubscriber)> = input.subscribers.into_iter().enumerate().collect();
    let make = |sequence, (index, new)| numbered(sequence, new, Some(index));
    let subscribers = if input.idempotency_key.is_empty() {
        LOG.append_batch(ctx, items, make)?
    } else {
        let payload = encode(
            "payload",
            &items.iter().map(|(_, new)| new).collect::<Vec<_>>(),
        )?;
        LOG.append_batch_once(ctx, &input.idempotency_key, &payload, items, make)?
    };
    RpcOutput::encode("subscribers", &RegisteredSubscribers { subscribers })
}

fn register_subscriber_once(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: RegisterSubscriberOnceInput = decode_input(REGISTER_SUBSCRIBER_ONCE, input)?;
    let new = NewSubscriber::new(input.subscriber_id, input.delivery_address);
    let payload = encode("payload", &new)?;
    let subscriber = LOG.append_once(ctx, &input.idempotency_key, &payload, |sequence| {
        numbered(sequence, new, None)
    })?;
    RpcOutput::encode("subscriber", &subscriber)
}

impl SubscriberArchive<'_> {
    /// Appends `subscribers` (1 to [`MAX_BATCH_SIZE`](crate::chunked_log::MAX_BATCH_SIZE)) in one transaction and returns them
    /// with their sequences. With `idempotency_key`, a retry of the same batch returns
    /// the first call's subscribers; see the [module docs](self).
    pub fn register_batch(
        &self,
        subscribers: &[NewSubscriber],
        idempotency_key: Option<&str>,
    ) -> Result<Vec<Subscriber>> {
        let input = RegisterSubscribersInput {
            subscribers: subscribers.to_vec(),
            idempotency_key: idempotency_key.unwrap_or_default().to_owned(),
        };
        let output: RegisteredSubscribers = self.call(REGISTER_SUBSCRIBERS, &input)?;
        Ok(output.subscribers)
    }

    /// Appends a subscriber under `idempotency_key`: a retry with the same key returns the
    /// first call's subscriber (same sequence) instead of appending again.
    pub fn register_once(
        &self,
        idempotency_key: &str,
        subscriber_id: &str,
        delivery_address: &str,
    ) -> Result<Subscriber> {
        let input = RegisterSubscriberOnceInput {
            idempotency_key: idempotency_key.to_owned(),
            subscriber_id: subscriber_id.to_owned(),
            delivery_address: delivery_address.to_owned(),
        };
        self.call(REGISTER_SUBSCRIBER_ONCE, &input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunked_log::MAX_BATCH_SIZE;

    #[test]
    fn batch_errors_name_the_subscriber() {
        let error = numbered(1, NewSubscriber::new("", "a@example.com"), Some(3)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "subscribers[3]: subscriberId is required"
        );
        let error = numbered(1, NewSubscriber::new("a", ""), None).unwrap_err();
        assert_eq!(error.to_string(), "deliveryAddress is required");
    }

    #[test]
    fn the_documented_maximum_is_the_log_s() {
        assert_eq!(MAX_BATCH_SIZE, 1_000);
    }
}
