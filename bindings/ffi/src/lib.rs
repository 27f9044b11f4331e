//! UniFFI bindings of attrflow: the same flows, store file and errors as Python, for
//! Kotlin and Swift.
//!
//! Thin by design: every rule (validation, tokens, chunking, locking) lives in the core
//! crate; this crate only converts types and errors. Everything is exported with
//! proc-macros, and Kotlin and Swift sources are generated from the built library with the
//! workspace's `uniffi-bindgen` (library mode), so generator and runtime always match.
//!
//! - [`Store`]: a store opened by path or URL, its calls blocking and callable from any
//!   thread;
//! - [`SubscriberArchive`], [`AppLog`], [`CustomerDirectory`]: the built-in flows, as the
//!   core's typed clients (`store.subscriberArchive(flowId)`, …) with exactly the core
//!   client's calls (appends, batches, keyed appends, pages, reads forward, tails, trims,
//!   retention, chunk size, proofs), each retrying lock conflicts by the client's
//!   [`RetryPolicy`]; [`SubscriberCursor`] and [`LogCursor`] wrap the core's follow cursor;
//! - [`FlowTypeBuilder`], [`RpcHandler`], [`RpcContext`]: flow types defined in Kotlin or
//!   Swift, checked and run by the core (`store.registerFlowType`, `store.invokeRpc`),
//!   and any flow's run from outside its RPCs (`store.stopFlow`, `store.describeFlow`,
//!   `store.getAttribute`);
//! - [`AttrflowError`]: the core's errors, one variant each, with the core's message as
//!   `reason` and the core's fields (`flowId`, `runId`, `token`, `errorType`, …).

uniffi::setup_scaffolding!();

mod app_log;
mod client_target;
mod clients;
mod customer_directory;
mod error;
mod follow;
mod foreign_flow;
mod id_reuse_policy;
mod lifecycle;
mod metrics;
mod retention;
mod retry_policy;
mod store;
mod subscriber_appends;
mod subscribers;
mod verifiable;

pub use app_log::{AppLog, LogEntry, LogPage};
pub use customer_directory::{CustomerDirectory, CustomerProfile};
pub use error::AttrflowError;
pub use follow::{LogCursor, SubscriberCursor};
pub use foreign_flow::{
    FlowType, FlowTypeBuilder, HandlerError, InitialValue, InvokeOptions, LockTarget,
    MapInstanceRef, RpcContext, RpcHandler,
};
pub use lifecycle::{FlowInfo, StopType};
pub use metrics::{LatencyBucket, Metrics};
pub use retention::{LogEntriesFrom, RetentionChange, SubscribersFrom, TrimOutcome, TrimRule};
pub use retry_policy::RetryPolicy;
pub use store::{Durability, Store};
pub use subscriber_appends::{ChunkLayout, ChunkSizeChange, IdempotencyWindow, NewSubscriber};
pub use subscribers::{Subscriber, SubscriberArchive, SubscriberPage};
pub use verifiable::{ConsistencyProof, InclusionProof, NoteKeyPair, TreeHead};
