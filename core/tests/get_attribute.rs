//! Reading one stored value of a flow from outside an RPC ([`Runtime::get_attribute`], Dex's
//! `client.get_attribute`): committed values only, `None` for a value never written or
//! deleted, names checked against the flow's type when the runtime knows it, and errors
//! that name the unknown flow, the wrong run or the undeclared name.

mod common;

use attrflow::flows::chunked_subscriber::{
    ARCHIVE_STATE_ATTRIBUTE, CURRENT_CHUNK_INSTANCE, FLOW_ID as ARCHIVE_ID, SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::{Error, FlowDefinition, LockTarget, MapInstance, RpcDefinition};
use attrflow::{RpcInvokeOptions, StartFlowOptions};
use common::TestStore;
use serde_json::{json, Value};

const NOTES: &str = "Notes";

/// A flow type with a singleton `title` and a map `notes`; `Write` sets both from its input
/// (a null deletes) and `Fail` stages a title and then fails.
fn notes() -> FlowDefinition {
    FlowDefinition::builder(NOTES)
        .attribute("title")
        .map("notes")
        .default_value("title", json!("untitled"))
        .rpc(
            RpcDefinition::new("Write", |ctx, input| {
                ctx.set_attribute("title", input["title"].clone())?;
                ctx.set_map_instance("notes", "first", input["note"].clone())?;
                Ok(Value::Null)
            })
            .lock_attribute("title"),
        )
        .rpc(
            RpcDefinition::new("Fail", |ctx, _| {
                ctx.set_attribute("title", json!("never stored"))?;
                Err(Error::invalid_input("no"))
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

fn write(t: &TestStore, input: Value) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(NOTES, "n-1", "Write", input, &RpcInvokeOptions::new())
}

fn title() -> LockTarget {
    LockTarget::Attribute("title".into())
}

fn first_note() -> LockTarget {
    LockTarget::MapInstance(MapInstance::new("notes", "first"))
}

fn read(t: &TestStore, target: &LockTarget) -> Option<String> {
    t.runtime.get_attribute("n-1", target, None).unwrap()
}

#[test]
fn reads_what_was_committed_and_none_for_what_was_not() {
    let t = started();
    assert_eq!(read(&t, &title()).as_deref(), Some("\"untitled\""));
    assert_eq!(read(&t, &first_note()), None);

    write(&t, json!({"title": "Groceries", "note": {"text": "milk"}})).unwrap();
    assert_eq!(read(&t, &title()).as_deref(), Some("\"Groceries\""));
    assert_eq!(
        read(&t, &first_note()).as_deref(),
        Some(r#"{"text":"milk"}"#)
    );

    // A failed RPC's staged write is not there; a deleted value reads as None.
    t.runtime
        .invoke_rpc(NOTES, "n-1", "Fail", Value::Null, &RpcInvokeOptions::new())
        .unwrap_err();
    assert_eq!(read(&t, &title()).as_deref(), Some("\"Groceries\""));
    write(&t, json!({"title": null, "note": null})).unwrap();
    assert_eq!(read(&t, &title()), None);
    assert_eq!(read(&t, &first_note()), None);
}

#[test]
fn an_unknown_flow_or_another_run_is_refused() {
    let t = started();
    match t.runtime.get_attribute("nobody", &title(), None) {
        Err(Error::FlowNotFound { flow_id }) => assert_eq!(flow_id, "nobody"),
        other => panic!("expected FlowNotFound, got {other:?}"),
    }
    let run_id = t.flow("n-1").unwrap().run_id;
    assert_eq!(
        t.runtime
            .get_attribute("n-1", &title(), Some(&run_id))
            .unwrap()
            .as_deref(),
        Some("\"untitled\"")
    );
    match t.runtime.get_attribute("n-1", &title(), Some("run-0")) {
        Err(error @ Error::RunNotCurrent { .. }) => assert_eq!(
            error.to_string(),
            format!("flow \"n-1\" has no run \"run-0\"; its run is {run_id:?}")
        ),
        other => panic!("expected RunNotCurrent, got {other:?}"),
    }
    match t.runtime.get_attribute("", &title(), None) {
        Err(Error::InvalidInput(message)) => assert!(message.contains("flow ID"), "{message}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn names_are_checked_against_a_registered_type() {
    let t = started();
    let refused = |target: LockTarget| match t.runtime.get_attribute("n-1", &target, None) {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected InvalidInput for {target:?}, got {other:?}"),
    };
    assert_eq!(
        refused(LockTarget::Attribute("subtitle".into())),
        "flow type \"Notes\" declares no Attribute or AttributeMap \"subtitle\""
    );
    assert_eq!(
        refused(LockTarget::Attribute("notes".into())),
        "AttributeMap \"notes\" is read one instance at a time; name the instance"
    );
    assert_eq!(
        refused(LockTarget::MapInstance(MapInstance::new("title", "x"))),
        "\"title\" is a singleton Attribute, not an AttributeMap; it takes no instance"
    );
    assert!(refused(LockTarget::MapInstance(MapInstance::new("notes", "a/b"))).contains('/'));
}

#[test]
fn a_runtime_that_does_not_know_the_type_reads_by_name() {
    let t = started();
    write(&t, json!({"title": "Groceries", "note": 7})).unwrap();
    // Another runtime on the same store, which registered only the built-in flow types.
    let (_store, other) = t.open_again();
    assert_eq!(
        other
            .get_attribute("n-1", &first_note(), None)
            .unwrap()
            .as_deref(),
        Some("7")
    );
    assert_eq!(
        other
            .get_attribute("n-1", &LockTarget::Attribute("subtitle".into()), None)
            .unwrap(),
        None
    );
    match other.get_attribute("n-1", &LockTarget::Attribute(" ".into()), None) {
        Err(Error::InvalidInput(message)) => {
            assert_eq!(message, "Attribute name must not be blank")
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn a_built_in_flow_reads_as_its_rpcs_store_it() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    archive.register("s-1", "s-1@example.com").unwrap();
    let state = t
        .runtime
        .get_attribute(
            ARCHIVE_ID,
            &LockTarget::Attribute(ARCHIVE_STATE_ATTRIBUTE.into()),
            None,
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&state).unwrap(),
        json!({"nextSequence": 2, "latestArchivedChunkToken": ""})
    );
    let current = t
        .runtime
        .get_attribute(
            ARCHIVE_ID,
            &LockTarget::MapInstance(MapInstance::new(
                SUBSCRIBER_CHUNKS_MAP,
                CURRENT_CHUNK_INSTANCE,
            )),
            None,
        )
        .unwrap()
        .unwrap();
    let current: Value = serde_json::from_str(&current).unwrap();
    assert_eq!(current["subscribers"][0]["subscriberId"], "s-1");
}
