//! A process that dies in the middle of an RPC (its handler has staged writes and holds the
//! call's locks and the file's write lock) leaves no trace: none of its writes are stored,
//! and the next process to write finds every lock free.
//!
//! The test binary runs itself again as the dying process (the `#[ignore]`d test below).

mod common;

use attrflow::{FlowDefinition, RpcDefinition, RpcInvokeOptions, Runtime, StartFlowOptions};
use common::TestStore;
use serde_json::{json, Value};

const CHILD_TEST: &str = "child_process_dies_inside_a_handler";
const DB_PATH_ENV: &str = "ATTRFLOW_TEST_CRASH_DB";
/// The exit code the child dies with, so the parent knows it died where it should.
const DIED_IN_HANDLER: i32 = 86;

const FLOW_TYPE: &str = "Fragile";
const FLOW: &str = "fragile";

/// A flow type whose `StageThenDie` ends the process from inside the handler, after
/// staging writes; `Write` is an ordinary locked write of the same names.
fn fragile() -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .attribute("state")
        .map("items")
        .rpc(
            RpcDefinition::new("StageThenDie", |ctx, _| {
                ctx.set_attribute("state", json!("from the dead process"))?;
                ctx.set_map_instance("items", "x", json!("from the dead process"))?;
                // Ends the process without unwinding or closing the store, as a crash or
                // a kill would.
                std::process::exit(DIED_IN_HANDLER)
            })
            .lock_attribute("state")
            .lock_map_instance("items", "x"),
        )
        .rpc(
            RpcDefinition::new("Write", |ctx, input| {
                ctx.set_attribute("state", input.clone())?;
                ctx.set_map_instance("items", "x", input.clone())?;
                Ok(input)
            })
            .lock_attribute("state")
            .lock_map_instance("items", "x"),
        )
        .build()
        .unwrap()
}

#[test]
fn a_process_that_dies_inside_a_handler_stores_nothing_and_holds_no_lock() {
    let t = TestStore::new();
    t.runtime.register(fragile()).unwrap();
    t.runtime
        .start_flow(
            FLOW_TYPE,
            FLOW,
            &StartFlowOptions::new().with_attribute("state", json!("before")),
        )
        .unwrap();
    let before = t.stored_values(FLOW);

    let status = common::spawn_test_process(CHILD_TEST, &[(DB_PATH_ENV, &t.url)])
        .wait()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(DIED_IN_HANDLER),
        "the child died in the handler"
    );

    assert_eq!(t.stored_values(FLOW), before);
    let written = t
        .runtime
        .invoke_rpc(
            FLOW_TYPE,
            FLOW,
            "Write",
            json!("after"),
            &RpcInvokeOptions::new(),
        )
        .unwrap();
    assert_eq!(written, json!("after"));
    assert_eq!(t.stored_values(FLOW)["items/x"], "after");
}

/// The child side of the test above; does nothing when run on its own.
#[test]
#[ignore = "a child process of a_process_that_dies_inside_a_handler_stores_nothing_and_holds_no_lock"]
fn child_process_dies_inside_a_handler() {
    let Ok(path) = std::env::var(DB_PATH_ENV) else {
        return;
    };
    let runtime = Runtime::open(&path).unwrap();
    runtime.register(fragile()).unwrap();
    let result = runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW,
        "StageThenDie",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    panic!("the handler should have ended the process, but the call returned {result:?}");
}
