//! Writing one stored value of a flow from outside its RPCs ([`Runtime::set_attribute`],
//! Dex's `client.set_attribute`): the value is what RPCs and `get_attribute` read next, a
//! null deletes it, the write waits for an RPC holding the value's lock and makes a
//! lock-free RPC that read the value before it retry; and every refusal (a name the type
//! does not declare, a built-in type, a type this runtime does not know, a stopped or
//! unknown flow, another run, a value that is not JSON or is too large) names what was wrong
//! and writes nothing.

mod common;

use std::sync::{Arc, Barrier};

use attrflow::flows::chunked_subscriber::{
    ARCHIVE_STATE_ATTRIBUTE, CURRENT_CHUNK_INSTANCE, FLOW_ID as ARCHIVE_ID, SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::limits::MAX_VALUE_BYTES;
use attrflow::{Error, FlowDefinition, FlowStatus, LockTarget, MapInstance, RpcDefinition};
use attrflow::{RpcInvokeOptions, Runtime, StartFlowOptions, StopType};
use common::TestStore;
use serde_json::{json, Value};

const NOTES: &str = "Notes";

/// A flow type with a singleton `title` and a map `notes`: `Title` returns the title
/// (lock-free) and `Rename` sets it to its input, holding its lock.
fn notes() -> FlowDefinition {
    FlowDefinition::builder(NOTES)
        .attribute("title")
        .map("notes")
        .default_value("title", json!("untitled"))
        .rpc(RpcDefinition::new("Title", |ctx, _| {
            Ok(ctx.attribute("title")?.cloned().unwrap_or(Value::Null))
        }))
        .rpc(
            RpcDefinition::new("Rename", |ctx, input| {
                ctx.set_attribute("title", input)?;
                Ok(Value::Null)
            })
            .lock_attribute("title"),
        )
        .build()
        .unwrap()
}

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(notes()).unwrap();
    t.runtime
        .start_flow(NOTES, "n-1", &StartFlowOptions::new())
        .unwrap();
    t
}

fn title() -> LockTarget {
    LockTarget::Attribute("title".into())
}

fn note(instance: &str) -> LockTarget {
    LockTarget::MapInstance(MapInstance::new("notes", instance))
}

fn set(runtime: &Runtime, target: &LockTarget, json: &str) -> attrflow::Result<()> {
    runtime.set_attribute("n-1", target, json, None)
}

fn read(runtime: &Runtime, target: &LockTarget) -> Option<String> {
    runtime.get_attribute("n-1", target, None).unwrap()
}

#[track_caller]
fn assert_invalid(result: attrflow::Result<()>, expected: &str) {
    match result {
        Err(Error::InvalidInput(message)) => assert!(
            message.contains(expected),
            "expected a message containing {expected:?}, got {message:?}"
        ),
        other => panic!("expected InvalidInput ({expected}), got {other:?}"),
    }
}

#[test]
fn a_written_value_is_what_rpcs_and_readers_see_next() {
    let t = started();
    set(&t.runtime, &title(), r#""Groceries""#).unwrap();
    set(
        &t.runtime,
        &note("first"),
        r#"{ "text" : "milk", "count": 2 }"#,
    )
    .unwrap();

    assert_eq!(
        read(&t.runtime, &title()).as_deref(),
        Some(r#""Groceries""#)
    );
    // Stored compact, as an RPC's writes are.
    assert_eq!(
        read(&t.runtime, &note("first")).as_deref(),
        Some(r#"{"count":2,"text":"milk"}"#)
    );
    let seen = t
        .runtime
        .invoke_rpc(NOTES, "n-1", "Title", Value::Null, &RpcInvokeOptions::new())
        .unwrap();
    assert_eq!(seen, json!("Groceries"));

    // A null deletes the value: it reads as unset, and the row is gone.
    set(&t.runtime, &title(), "null").unwrap();
    set(&t.runtime, &note("first"), " null ").unwrap();
    assert_eq!(read(&t.runtime, &title()), None);
    assert_eq!(read(&t.runtime, &note("first")), None);
    let stored = t.stored_values("n-1");
    assert!(!stored.contains_key("title"), "{stored:?}");
    assert!(!stored.contains_key("notes/first"), "{stored:?}");

    // The same run, named by its ID, is written too.
    let run_id = t.flow("n-1").unwrap().run_id;
    t.runtime
        .set_attribute("n-1", &title(), r#""Chores""#, Some(&run_id))
        .unwrap();
    assert_eq!(read(&t.runtime, &title()).as_deref(), Some(r#""Chores""#));
}

#[test]
fn every_refusal_names_what_was_wrong_and_writes_nothing() {
    let t = started();
    set(&t.runtime, &title(), r#""kept""#).unwrap();
    let before = t.stored_values("n-1");

    assert_invalid(
        set(&t.runtime, &LockTarget::Attribute("subtitle".into()), "1"),
        "flow type \"Notes\" declares no Attribute or AttributeMap \"subtitle\"",
    );
    assert_invalid(
        set(&t.runtime, &LockTarget::Attribute("notes".into()), "1"),
        "AttributeMap \"notes\" is written one instance at a time; name the instance",
    );
    assert_invalid(
        set(
            &t.runtime,
            &LockTarget::MapInstance(MapInstance::new("title", "x")),
            "1",
        ),
        "\"title\" is a singleton Attribute, not an AttributeMap",
    );
    assert_invalid(set(&t.runtime, &note("a/b"), "1"), "/");
    assert_invalid(
        set(&t.runtime, &title(), "{\"text\": "),
        "the value for \"title\" is not JSON",
    );
    assert_invalid(
        set(&t.runtime, &title(), "18446744073709551616"),
        "outside the range attrflow stores exactly",
    );
    let too_large = format!("\"{}\"", "x".repeat(MAX_VALUE_BYTES));
    assert_invalid(
        set(&t.runtime, &title(), &too_large),
        &format!("stored value \"title\" is {} bytes", MAX_VALUE_BYTES + 2),
    );
    match t.runtime.set_attribute("n-1", &title(), "1", Some("run-0")) {
        Err(error @ Error::RunNotCurrent { .. }) => {
            assert!(error
                .to_string()
                .starts_with("flow \"n-1\" has no run \"run-0\""))
        }
        other => panic!("expected RunNotCurrent, got {other:?}"),
    }
    assert_invalid(t.runtime.set_attribute("", &title(), "1", None), "flow ID");
    match t.runtime.set_attribute("nobody", &title(), "1", None) {
        Err(Error::FlowNotFound { flow_id }) => assert_eq!(flow_id, "nobody"),
        other => panic!("expected FlowNotFound, got {other:?}"),
    }
    assert_eq!(t.stored_values("n-1"), before);
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_stopped_flow_is_not_written() {
    let t = started();
    t.runtime.stop_flow("n-1", StopType::Fail, None).unwrap();
    let before = t.stored_values("n-1");
    match set(&t.runtime, &title(), r#""closed""#) {
        Err(Error::FlowNotActive { flow_id, status }) => {
            assert_eq!(flow_id, "n-1");
            assert_eq!(status, FlowStatus::Failed);
        }
        other => panic!("expected FlowNotActive, got {other:?}"),
    }
    assert_eq!(t.stored_values("n-1"), before);
}

#[test]
fn a_built_in_flow_type_is_written_only_by_its_rpcs() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    archive.register("s-1", "s-1@example.com").unwrap();
    let before = t.stored_values(ARCHIVE_ID);
    let targets = [
        LockTarget::Attribute(ARCHIVE_STATE_ATTRIBUTE.into()),
        LockTarget::MapInstance(MapInstance::new(
            SUBSCRIBER_CHUNKS_MAP,
            CURRENT_CHUNK_INSTANCE,
        )),
    ];
    for target in &targets {
        assert_invalid(
            t.runtime.set_attribute(ARCHIVE_ID, target, "null", None),
            "keeps its values whole through its own RPCs",
        );
    }
    assert_eq!(t.stored_values(ARCHIVE_ID), before);
    // The archive goes on as before.
    assert_eq!(
        archive.register("s-2", "s-2@example.com").unwrap().sequence,
        2
    );
}

#[test]
fn a_runtime_that_does_not_know_the_type_does_not_write() {
    let t = started();
    // Another runtime on the same store, which registered only the built-in flow types.
    let (_store, other) = t.open_again();
    assert_invalid(
        other.set_attribute("n-1", &title(), r#""elsewhere""#, None),
        "flow \"n-1\" is of flow type \"Notes\", which is not registered here",
    );
    assert_eq!(read(&t.runtime, &title()).as_deref(), Some(r#""untitled""#));
    // Once it registers the type, it writes.
    other.register(notes()).unwrap();
    other
        .set_attribute("n-1", &title(), r#""elsewhere""#, None)
        .unwrap();
    assert_eq!(
        read(&t.runtime, &title()).as_deref(),
        Some(r#""elsewhere""#)
    );
}

#[test]
fn a_write_waits_for_the_rpc_holding_the_values_lock() {
    let t = Arc::new(started());
    let running = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let holder = FlowDefinition::builder("Holder")
        .attribute("title")
        .rpc(
            RpcDefinition::new("RenameSlowly", {
                let (running, release) = (Arc::clone(&running), Arc::clone(&release));
                move |ctx, input| {
                    running.wait();
                    release.wait();
                    ctx.set_attribute("title", input)?;
                    Ok(Value::Null)
                }
            })
            .lock_attribute("title"),
        )
        .build()
        .unwrap();
    t.runtime.register(holder).unwrap();
    t.runtime
        .start_flow("Holder", "h-1", &StartFlowOptions::new())
        .unwrap();
    let rpc = std::thread::spawn({
        let t = Arc::clone(&t);
        move || {
            t.runtime.invoke_rpc(
                "Holder",
                "h-1",
                "RenameSlowly",
                json!("from the RPC"),
                &RpcInvokeOptions::new(),
            )
        }
    });
    running.wait();
    // The RPC holds the lock on `title` now; the write retries until it is released.
    let writer = std::thread::spawn({
        let t = Arc::clone(&t);
        move || {
            t.runtime
                .set_attribute("h-1", &title(), r#""from the client""#, None)
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    release.wait();
    rpc.join().unwrap().unwrap();
    writer.join().unwrap().unwrap();
    // The write could only commit after the RPC released the lock, so it is the last.
    assert_eq!(
        t.runtime
            .get_attribute("h-1", &title(), None)
            .unwrap()
            .as_deref(),
        Some(r#""from the client""#)
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_lock_free_rpc_that_read_the_value_before_the_write_does_not_commit_over_it() {
    let t = started();
    let (_store, writer) = t.open_again();
    let writer = Arc::new(writer);
    writer.register(notes()).unwrap();
    let racing = FlowDefinition::builder("Racing")
        .attribute("title")
        .rpc(RpcDefinition::new("CopyTitle", {
            let writer = Arc::clone(&writer);
            move |ctx, _| {
                let seen = ctx.attribute("title")?.cloned().unwrap_or(Value::Null);
                let writer = Arc::clone(&writer);
                std::thread::spawn(move || {
                    writer.set_attribute("r-1", &title(), r#""changed""#, None)
                })
                .join()
                .expect("the writing thread ended")?;
                ctx.set_attribute("title", json!(format!("copy of {seen}")))?;
                Ok(Value::Null)
            }
        }))
        .build()
        .unwrap();
    writer.register(racing.clone()).unwrap();
    t.runtime.register(racing).unwrap();
    t.runtime
        .start_flow("Racing", "r-1", &StartFlowOptions::new())
        .unwrap();
    let copied = t.runtime.invoke_rpc(
        "Racing",
        "r-1",
        "CopyTitle",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    match copied {
        Err(Error::LockConflict(message)) => assert!(message.contains("title"), "{message}"),
        other => panic!("expected a lock conflict, got {other:?}"),
    }
    assert_eq!(
        t.runtime
            .get_attribute("r-1", &title(), None)
            .unwrap()
            .as_deref(),
        Some(r#""changed""#)
    );
}
