//! UniFFI bindings of attrflow: the same flows, store file and errors as Python, for
//! Kotlin and Swift.
//!
//! Thin by design: every rule (validation, tokens, chunking, locking) lives in the core
//! crate; this crate only converts types and errors. Everything is exported with
//! proc-macros, and Kotlin and Swift sources are generated from the built library with the
//! workspace's `uniffi-bindgen` (library mode), so generator and runtime always match.
//!
//! - [`Store`]: a store opened by path or URL, with the subscriber archive
//!   (`ChunkedSubscriberFlow`) and the app log (`ChunkedLogFlow`) as blocking methods,
//!   callable from any thread, with batch and idempotent registration and chunk-size
//!   changes of the archive, and the customer directory (`CustomerDirectoryFlow`);
//! - [`SubscriberArchive`], [`AppLog`], [`CustomerDirectory`]: the core's typed flow
//!   clients as objects (`store.subscriberArchive(flowId)`, …), whose `*WithRetry` calls
//!   retry lock conflicts by the core's [`RetryPolicy`];
//! - [`FlowTypeBuilder`], [`RpcHandler`], [`RpcContext`]: flow types defined in Kotlin or
//!   Swift, checked and run by the core (`store.registerFlowType`, `store.invokeRpc`),
//!   and any flow's run from outside its RPCs (`store.stopFlow`, `store.describeFlow`,
//!   `store.getAttribute`);
//! - [`AttrflowError`]: the core's errors, one variant each, with the core's message as
//!   `reason` and the core's fields (`flowId`, `runId`, `token`, `errorType`, …).

uniffi::setup_scaffolding!();

mod app_log;
mod clients;
mod customer_directory;
mod error;
mod foreign_flow;
mod lifecycle;
mod metrics;
mod retention;
mod store;
mod subscriber_appends;
mod subscribers;

pub use app_log::{LogEntry, LogPage};
pub use clients::{AppLog, CustomerDirectory, RetryPolicy, SubscriberArchive};
pub use customer_directory::CustomerProfile;
pub use error::AttrflowError;
pub use foreign_flow::{
    FlowType, FlowTypeBuilder, HandlerError, InitialValue, InvokeOptions, LockTarget,
    MapInstanceRef, RpcContext, RpcHandler,
};
pub use lifecycle::{FlowInfo, StopType};
pub use metrics::{LatencyBucket, Metrics};
pub use retention::{LogEntriesFrom, RetentionChange, SubscribersFrom, TrimOutcome, TrimRule};
pub use store::{Durability, Store};
pub use subscriber_appends::{ChunkLayout, ChunkSizeChange, IdempotencyWindow, NewSubscriber};
pub use subscribers::{Subscriber, SubscriberPage};
