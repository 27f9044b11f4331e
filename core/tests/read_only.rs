//! Read-only RPCs: a handler declared read-only that stages a write fails, and nothing of it
//! is stored; a read-only call that takes no locks, on a store whose reads wait for no
//! writer (SQLite), may be run in place by a caller that must not wait
//! (`Runtime::reads_in_place`, and `reads_values_in_place` for a value read alone), and no
//! other call may.

mod common;

use attrflow::definition::LockTarget;
use attrflow::{
    Error, FlowDefinition, MapInstance, RpcDefinition, RpcInvokeOptions, StartFlowOptions,
};
use common::{Backend, TestStore};
use serde_json::{json, Value};

const LEDGER: &str = "Ledger";
const FLOW: &str = "ledger";

/// `Peek` reads `balance` (read-only); `Glance` does too, undeclared; `LockedPeek` is
/// read-only with a lock; `Sneak` is declared read-only yet writes `balance` and an entry.
fn ledger() -> FlowDefinition {
    let read = |ctx: &mut attrflow::RpcContext<'_>, _: Value| {
        Ok(ctx.attribute("balance")?.cloned().unwrap_or_default())
    };
    FlowDefinition::builder(LEDGER)
        .attribute("balance")
        .map("entries")
        .rpc(RpcDefinition::new("Peek", read).read_only())
        .rpc(RpcDefinition::new("Glance", read))
        .rpc(
            RpcDefinition::new("LockedPeek", read)
                .lock_attribute("balance")
                .read_only(),
        )
        .rpc(
            RpcDefinition::new("TransactionalPeek", read)
                .transactional()
                .read_only(),
        )
        .rpc(
            RpcDefinition::new("Sneak", |ctx, input| {
                ctx.set_map_instance("entries", "sneaked", input.clone())?;
                ctx.set_attribute("balance", input)?;
                Ok(Value::Null)
            })
            .read_only(),
        )
        .build()
        .unwrap()
}

fn started_ledger() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(ledger()).unwrap();
    t.runtime
        .start_flow(
            LEDGER,
            FLOW,
            &StartFlowOptions::new().with_attribute("balance", json!(10)),
        )
        .unwrap();
    t
}

#[test]
fn a_read_only_rpc_that_writes_fails_and_stores_nothing() {
    let t = started_ledger();
    let sneak = t
        .runtime
        .invoke_rpc(LEDGER, FLOW, "Sneak", json!(99), &RpcInvokeOptions::new());
    match sneak {
        Err(Error::HandlerFailure { message, .. }) => assert_eq!(
            message,
            "RPC \"Sneak\" is declared read-only, but staged writes to balance, entries/sneaked"
        ),
        other => panic!("expected a handler failure, got {other:?}"),
    }
    let peek = t
        .runtime
        .invoke_rpc(LEDGER, FLOW, "Peek", Value::Null, &RpcInvokeOptions::new())
        .unwrap();
    assert_eq!(peek, json!(10));
    let entry = t
        .runtime
        .get_attribute(
            FLOW,
            &LockTarget::MapInstance(MapInstance::new("entries", "sneaked")),
            None,
        )
        .unwrap();
    assert_eq!(entry, None);
}

#[test]
fn only_a_lock_free_read_only_call_on_the_embedded_store_reads_in_place() {
    let t = started_ledger();
    let plain = RpcInvokeOptions::new();
    let embedded = t.backend() == Backend::Sqlite;
    assert_eq!(t.runtime.reads_in_place(LEDGER, "Peek", &plain), embedded);
    // Not declared read-only, or isolated from writers by a lock: never.
    for rpc in ["Glance", "LockedPeek", "TransactionalPeek"] {
        assert!(!t.runtime.reads_in_place(LEDGER, rpc, &plain), "{rpc}");
    }
    let locking = RpcInvokeOptions::new().lock_attribute_map_instance("entries", "a");
    assert!(!t.runtime.reads_in_place(LEDGER, "Peek", &locking));
    // Loading is reading: still in place.
    let loading = RpcInvokeOptions::new().load_attribute_map_instance("entries", "a");
    assert_eq!(t.runtime.reads_in_place(LEDGER, "Peek", &loading), embedded);
    // An unknown RPC or flow type is left to fail where the call runs.
    assert!(!t.runtime.reads_in_place(LEDGER, "Nothing", &plain));
    assert!(!t.runtime.reads_in_place("Nothing", "Peek", &plain));
    // A value read alone (get_attribute) likewise.
    assert_eq!(t.runtime.reads_values_in_place(), embedded);
}

#[test]
fn the_built_in_page_reads_are_read_only() {
    use attrflow::flows::{app_log, chunked_subscriber, customer_directory};
    let read_only = |definition: FlowDefinition, rpc: &str| {
        definition
            .rpc(rpc)
            .map(RpcDefinition::is_read_only)
            .unwrap()
    };
    assert!(read_only(
        chunked_subscriber::definition(),
        chunked_subscriber::GET_SUBSCRIBER_PAGE
    ));
    assert!(read_only(
        chunked_subscriber::definition(),
        chunked_subscriber::READ_SUBSCRIBERS_FROM
    ));
    assert!(!read_only(
        chunked_subscriber::definition(),
        chunked_subscriber::REGISTER_SUBSCRIBER
    ));
    assert!(read_only(app_log::definition(), app_log::GET_LOG_PAGE));
    assert!(read_only(app_log::definition(), app_log::READ_LOG_FROM));
    assert!(read_only(
        customer_directory::definition(),
        customer_directory::GET_CUSTOMER_PROFILE_BY_EMAIL
    ));
}
