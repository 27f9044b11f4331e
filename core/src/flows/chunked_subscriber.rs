//! `ChunkedSubscriberFlow`: the subscriber archive of the *sequentially chunked
//! AttributeMap* pattern, built on [`ChunkedLog`].
//!
//! An RPC-only flow, started once under [`FLOW_ID`]. `RegisterSubscriber` appends a
//! subscriber (locking the state and `current`); `GetSubscriberPage` reads one chunk,
//! newest first, and has no fixed loads: the caller loads the token's instance per call.
//!
//! Beyond the seed ([`appends`], [`layout`]): `RegisterSubscribers` appends a batch in one
//! transaction, `RegisterSubscriberOnce` appends under an idempotency key,
//! `ChangeSubscriberChunkSize` moves new chunks to another size (the archive starts at
//! [`SUBSCRIBER_CHUNK_SIZE`] = 100; old tokens stay valid), and
//! `SetSubscriberIdempotencyWindow` bounds how long keys are remembered. [`retention`]:
//! `TrimSubscribers` drops the oldest archived chunks, `SetSubscriberRetention` makes every
//! registration do so, and `ReadSubscribersFrom` reads forward from a sequence.

pub mod appends;
pub mod layout;
pub mod retention;
mod verifiable;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::chunked_log::{
    archive_token, normalize_page_token, ChunkedLog, PageToken, CURRENT_CHUNK,
};
use crate::context::RpcContext;
use crate::definition::{FlowDefinition, MapInstance, RpcDefinition, RpcPlan, RpcPlanner};
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::output::RpcOutput;
use crate::retry::RetryPolicy;
use crate::runtime::{ReadRpc, Runtime};
use crate::typed::{decode_input, encode};

/// The flow type.
pub const FLOW_TYPE: &str = "ChunkedSubscriberFlow";
/// The flow ID the pattern starts its one archive under.
pub const FLOW_ID: &str = "chunked-subscriber-archive";
/// The instance key of the open chunk.
pub const CURRENT_CHUNK_INSTANCE: &str = CURRENT_CHUNK;
/// Subscribers per chunk of an archive that never changed its chunk size. Part of the
/// stored layout (archive tokens are its multiples + 1) of every archive without a layout
/// history, so it never changes: a new size is set per archive with
/// [`SubscriberArchive::change_chunk_size`] (RPC `ChangeSubscriberChunkSize`), which
/// applies from the next chunk boundary and keeps every issued token valid.
pub const SUBSCRIBER_CHUNK_SIZE: u64 = 100;
/// The state Attribute.
pub const ARCHIVE_STATE_ATTRIBUTE: &str = "subscriber_archive_state";
/// The chunk AttributeMap.
pub const SUBSCRIBER_CHUNKS_MAP: &str = "subscriber_chunks";
/// The appending RPC.
pub const REGISTER_SUBSCRIBER: &str = "RegisterSubscriber";
/// The paging RPC.
pub const GET_SUBSCRIBER_PAGE: &str = "GetSubscriberPage";
/// The batch-appending RPC.
pub const REGISTER_SUBSCRIBERS: &str = "RegisterSubscribers";
/// The idempotent appending RPC.
pub const REGISTER_SUBSCRIBER_ONCE: &str = "RegisterSubscriberOnce";
/// The RPC that changes the chunk size of new chunks.
pub const CHANGE_SUBSCRIBER_CHUNK_SIZE: &str = "ChangeSubscriberChunkSize";
/// The RPC that sets the idempotency window.
pub const SET_SUBSCRIBER_IDEMPOTENCY_WINDOW: &str = "SetSubscriberIdempotencyWindow";
/// The RPC that drops the oldest archived chunks.
pub const TRIM_SUBSCRIBERS: &str = "TrimSubscribers";
/// The RPC that reads subscribers forward from a sequence.
pub const READ_SUBSCRIBERS_FROM: &str = "ReadSubscribersFrom";
/// The RPC that switches the archive's Merkle tree on, one bounded step a call.
pub const MAKE_SUBSCRIBER_ARCHIVE_VERIFIABLE: &str = "MakeSubscriberArchiveVerifiable";
/// The RPC that sets the retention every registration applies.
pub const SET_SUBSCRIBER_RETENTION: &str = "SetSubscriberRetention";

/// The archive's layout.
pub const LOG: ChunkedLog = ChunkedLog::new(
    ARCHIVE_STATE_ATTRIBUTE,
    SUBSCRIBER_CHUNKS_MAP,
    "subscribers",
    SUBSCRIBER_CHUNK_SIZE,
    "subscriber",
);

/// One archived subscriber.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscriber {
    /// Its place in the archive, from 1, dense.
    pub sequence: u64,
    /// The caller's ID for the subscriber.
    pub subscriber_id: String,
    /// Where to deliver to it.
    pub delivery_address: String,
}

/// Input of `RegisterSubscriber`. Missing fields read as empty and are rejected by the
/// handler with `<field> is required`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegisterSubscriberInput {
    /// The subscriber's ID; required.
    pub subscriber_id: String,
    /// The subscriber's delivery address; required.
    pub delivery_address: String,
}

/// Input of `GetSubscriberPage`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GetSubscriberPageInput {
    /// `""` or `current` for the open chunk, else a 20-digit archive token.
    pub page_token: String,
}

/// One page of subscribers, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriberPage {
    /// The token read (`current` for `""`).
    pub page_token: String,
    /// The chunk's subscribers, newest first.
    pub subscribers: Vec<Subscriber>,
    /// The next older page's token, `""` when none.
    pub next_page_token: String,
}

/// Checks a page token's form and returns the token to read with: `current` for `""`, the
/// token itself otherwise (as Dex's validator does). A malformed token is
/// [`Error::InvalidPageToken`] (`invalid page token "<t>"`). Whether an archive token
/// names a chunk boundary depends on the archive's layout history, which
/// `GetSubscriberPage` checks; this check holds under every history.
pub fn validate_subscriber_page_token(token: &str) -> Result<String> {
    normalize_page_token(token)
}

/// The archive token of the chunk starting at `first_sequence` (20 digits); sequence 0
/// starts no chunk and is [`Error::InvalidInput`].
pub fn archive_chunk_token(first_sequence: u64) -> Result<String> {
    archive_token(first_sequence)
}

/// The flow type's definition.
pub fn definition() -> FlowDefinition {
    LOG.declare(FlowDefinition::builder(FLOW_TYPE))
        .check_start(|values| LOG.check_start(values))
        .written_by_rpcs_only()
        .rpc(LOG.appending(RpcDefinition::new_with_output(
            REGISTER_SUBSCRIBER,
            register_subscriber,
        )))
        .rpc(
            RpcDefinition::new_with_output(GET_SUBSCRIBER_PAGE, get_subscriber_page)
                .read_only()
                .planned_by(RpcPlanner::loading(page_plan)),
        )
        .rpc(appends::register_subscribers_rpc())
        .rpc(appends::register_subscriber_once_rpc())
        .rpc(layout::change_chunk_size_rpc())
        .rpc(layout::set_idempotency_window_rpc())
        .rpc(retention::trim_subscribers_rpc())
        .rpc(retention::read_subscribers_from_rpc())
        .rpc(verifiable::make_verifiable_rpc())
        .rpc(retention::set_subscriber_retention_rpc())
        .build()
        .unwrap_or_else(|e| unreachable!("the built-in definition is valid: {e}"))
}

fn register_subscriber(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: RegisterSubscriberInput = decode_input(REGISTER_SUBSCRIBER, input)?;
    check_required_fields(&input.subscriber_id, &input.delivery_address)?;
    let subscriber = LOG.append(ctx, |sequence| {
        Ok(Subscriber {
            sequence,
            subscriber_id: input.subscriber_id,
            delivery_address: input.delivery_address,
        })
    })?;
    RpcOutput::encode("subscriber", &subscriber)
}

/// The rule every registering RPC applies: both fields are non-empty.
fn check_required_fields(subscriber_id: &str, delivery_address: &str) -> Result<()> {
    if subscriber_id.is_empty() {
        return Err(Error::invalid_input("subscriberId is required"));
    }
    if delivery_address.is_empty() {
        return Err(Error::invalid_input("deliveryAddress is required"));
    }
    Ok(())
}

/// The plan of a `GetSubscriberPage` call: load the chunk its token names (`current` for
/// `""`), after checking the token's form; which boundaries exist depends on the stored
/// layout history, which the handler checks. An input that is no page input gets no
/// plan, and the handler refuses it.
fn page_plan(input: &Value) -> Result<RpcPlan> {
    let Ok(input) = GetSubscriberPageInput::deserialize(input) else {
        return Ok(RpcPlan::default());
    };
    let key = PageToken::parse(&input.page_token)?.instance_key();
    Ok(RpcPlan {
        locks: Vec::new(),
        loads: vec![MapInstance::new(SUBSCRIBER_CHUNKS_MAP, key)],
    })
}

fn get_subscriber_page(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: GetSubscriberPageInput = decode_input(GET_SUBSCRIBER_PAGE, input)?;
    // The stored subscribers are passed on as their text: `SubscriberPage`'s form.
    LOG.page_output(ctx, &input.page_token, |page| {
        RpcOutput::encode(
            "subscriber page",
            &SubscriberPageText {
                page_token: page.page_token,
                subscribers: page.records,
                next_page_token: page.next_page_token,
            },
        )
    })
}

/// A [`SubscriberPage`] as `GetSubscriberPage` writes it, each subscriber its stored text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubscriberPageText<'a> {
    page_token: String,
    subscribers: Vec<&'a RawValue>,
    next_page_token: String,
}

/// Typed access to one subscriber archive: builds each call's input and per-call options,
/// normalizes page tokens, and retries lock conflicts by its [`RetryPolicy`].
#[derive(Debug, Clone, Copy)]
pub struct SubscriberArchive<'r> {
    runtime: &'r Runtime,
    flow_id: &'r str,
    retry: RetryPolicy,
}

impl<'r> SubscriberArchive<'r> {
    /// The archive under `flow_id` (normally [`FLOW_ID`]), retrying by
    /// [`RetryPolicy::DEFAULT`].
    pub fn new(runtime: &'r Runtime, flow_id: &'r str) -> Self {
        SubscriberArchive {
            runtime,
            flow_id,
            retry: RetryPolicy::DEFAULT,
        }
    }

    /// This client retrying lock conflicts by `policy` in every call
    /// ([`RetryPolicy::NONE`]: each RPC is called once).
    pub fn with_retry_policy(self, policy: RetryPolicy) -> Self {
        SubscriberArchive {
            retry: policy,
            ..self
        }
    }

    /// Runs `call` on this client, retrying lock conflicts by its policy.
    pub fn retrying<T>(&self, mut call: impl FnMut(&Self) -> Result<T>) -> Result<T> {
        self.retry.run(|| call(self))
    }

    /// Starts the archive, or returns the running one's run ID (idempotent). A stopped
    /// one is not started again (a new run would hold none of its values): that fails with
    /// [`Error::FlowNotActive`] saying how it was stopped.
    pub fn start(&self) -> Result<String> {
        super::ensure_started(self.runtime, FLOW_TYPE, self.flow_id)
    }

    /// Appends a subscriber. A concurrent append gives a retryable
    /// [`Error::LockConflict`], retried by the client's [`RetryPolicy`].
    pub fn register(&self, subscriber_id: &str, delivery_address: &str) -> Result<Subscriber> {
        let input = RegisterSubscriberInput {
            subscriber_id: subscriber_id.to_owned(),
            delivery_address: delivery_address.to_owned(),
        };
        self.call(REGISTER_SUBSCRIBER, &input)
    }

    /// Appends a subscriber, as [`SubscriberArchive::register`] does (which retries by
    /// the client's [`RetryPolicy`] too).
    #[deprecated(note = "`register` retries by the client's retry policy; call it")]
    pub fn register_with_retry(
        &self,
        subscriber_id: &str,
        delivery_address: &str,
    ) -> Result<Subscriber> {
        self.register(subscriber_id, delivery_address)
    }

    /// Reads one page, loading the token's chunk.
    pub fn page(&self, page_token: &str) -> Result<SubscriberPage> {
        self.read_page(page_token, None, Runtime::invoke_rpc_output)
    }

    /// Reads one page as [`SubscriberArchive::page`] does, whatever the archive's run
    /// state, a stopped archive included, through [`Runtime::inspect_rpc_output`]: for
    /// tools that read an archive its RPCs no longer serve. Given `run_id`, the page is
    /// read only from that run ([`Error::RunNotCurrent`] once the archive was started
    /// again), so a walk pinned to its first page's run never mixes two runs' pages.
    pub fn inspect_page(&self, page_token: &str, run_id: Option<&str>) -> Result<SubscriberPage> {
        self.read_page(page_token, run_id, Runtime::inspect_rpc_output)
    }

    fn read_page(
        &self,
        page_token: &str,
        run_id: Option<&str>,
        read: ReadRpc,
    ) -> Result<SubscriberPage> {
        // The RPC plans the chunk's load from the token (`page_plan`).
        let input = GetSubscriberPageInput {
            page_token: page_token.to_owned(),
        };
        let input = encode("input", &input)?;
        let options = RpcInvokeOptions {
            run_id: run_id.map(str::to_owned),
            ..RpcInvokeOptions::new()
        };
        let output = self.retry.run(|| {
            read(
                self.runtime,
                FLOW_TYPE,
                self.flow_id,
                GET_SUBSCRIBER_PAGE,
                input.clone(),
                &options,
            )
        })?;
        output.decode(GET_SUBSCRIBER_PAGE)
    }

    /// Invokes one of the archive's RPCs with typed input and output, no per-call options,
    /// retrying lock conflicts by the client's policy.
    fn call<I: Serialize, O: serde::de::DeserializeOwned>(
        &self,
        rpc: &str,
        input: &I,
    ) -> Result<O> {
        let input = encode("input", input)?;
        let options = RpcInvokeOptions::new();
        let output = self.retry.run(|| {
            self.runtime
                .invoke_rpc_output(FLOW_TYPE, self.flow_id, rpc, input.clone(), &options)
        })?;
        output.decode(rpc)
    }
}
