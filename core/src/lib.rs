//! # attrflow
//!
//! An embedded, durable runtime for **Flows**: long-lived objects named by a flow ID that
//! hold typed **Attributes** and **AttributeMaps** and serve **RPCs**. Each RPC declares
//! what it locks and loads; the runtime takes the locks (fail-fast), builds a snapshot,
//! runs the handler and commits all of its writes atomically, or none. The store is an
//! SQLite file, or a PostgreSQL database shared by many processes and hosts.
//!
//! Its first flow is the *sequentially chunked AttributeMap*
//! ([`flows::chunked_subscriber`]): an append-only, insertion-ordered history where an
//! append rewrites one bounded chunk and pages are read newest first with stable tokens.
//! The generic [`chunked_log::ChunkedLog`] behind it also moves to new chunk sizes without
//! invalidating a token ([`chunked_log::layout`]), appends batches in one transaction, and
//! appends idempotently under a key ([`chunked_log::idempotency`]).
//!
//! Apps that need no flow type of their own keep named logs of JSON records in the built-in
//! app log ([`flows::app_log`], with a quick start there).
//!
//! ```
//! use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
//! use attrflow::{Error, Runtime};
//! # let dir = tempfile::tempdir().unwrap();
//! # let store = dir.path().join("attrflow.db");
//! let runtime = Runtime::open(store.to_str().unwrap())?;
//! let archive = SubscriberArchive::new(&runtime, FLOW_ID);
//! archive.start()?;
//! for n in 1..=101 {
//!     let id = format!("subscriber-{n:03}");
//!     archive.register(&id, &format!("{id}@example.com"))?;
//! }
//! let newest = archive.page("current")?;
//! assert_eq!(newest.subscribers[0].sequence, 101);
//! assert_eq!(newest.next_page_token, "00000000000000000001");
//! let older = archive.page(&newest.next_page_token)?;
//! assert_eq!(older.subscribers.len(), 100);
//! assert!(matches!(archive.page("7"), Err(Error::InvalidPageToken { .. })));
//! # Ok::<(), attrflow::Error>(())
//! ```

pub mod batch;
pub mod chunked_log;
pub mod commits;
pub mod context;
pub mod definition;
pub mod error;
mod flow_status;
pub mod flows;
pub mod fork;
pub mod hash_partition;
pub mod json;
pub mod lifecycle;
pub mod limits;
pub mod metrics;
pub mod names;
pub mod options;
pub mod output;
pub mod retry;
pub mod runtime;
pub mod store;
mod sync;
pub mod typed;
pub mod verifiable;

pub use batch::RpcRequest;
pub use context::RpcContext;
pub use definition::{FlowDefinition, LockTarget, MapInstance, RpcDefinition, RpcPlan, RpcPlanner};
pub use error::{Error, ErrorKind, Result};
pub use lifecycle::{FlowStatus, FlowSummary, StopType};
pub use options::{IdReusePolicy, RpcInvokeOptions, StartFlowOptions};
pub use output::RpcOutput;
pub use runtime::Runtime;
pub use typed::AttributeMap;

/// The README's Rust examples, compiled as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of docs/rust.md, compiled as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rust.md")]
pub struct DocsRustDoctests;

/// The Rust examples of docs/operations.md, compiled as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../docs/operations.md")]
pub struct DocsOperationsDoctests;
