//! Whole-map loads ([`RpcDefinition::load_map`], Dex's `@rpc(load_attribute_maps=...)`):
//! every instance of the map holding a value is in the call's snapshot, readable and
//! listed by [`attrflow::RpcContext::map_instance_keys`]; the instances of no other map or
//! Attribute are, however close their names; a lock-free call whose map changed (an
//! instance added, changed or deleted) between its read and its commit writes nothing and
//! fails with a retryable lock conflict; a definition may load only a declared map, once.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::TestStore;
use serde_json::{json, Value};

const INVENTORY: &str = "Inventory";
const FLOW: &str = "inventory";

/// `Scan` loads `items` whole and returns every instance it can read, by key, with the keys
/// the call lists after staging a set of `"new"` when its input says so. `Add` and `Drop`
/// write one instance of `items`, `Peek` reads an instance it did not load.
fn inventory() -> attrflow::definition::FlowDefinitionBuilder {
    FlowDefinition::builder(INVENTORY)
        .attribute("items.count")
        .map("items")
        .map("items-archive")
        .map("items0")
        .map("item")
        .rpc(
            RpcDefinition::new("Scan", |ctx, input| {
                if input["stage"] == json!(true) {
                    ctx.set_map_instance("items", "new", json!("staged"))?;
                    ctx.delete_map_instance("items", "b")?;
                }
                let keys = ctx.map_instance_keys("items")?;
                let mut values = serde_json::Map::new();
                for key in &keys {
                    let value = ctx.map_instance("items", key)?.cloned();
                    values.insert(key.clone(), value.unwrap_or(Value::Null));
                }
                let absent = ctx.map_instance("items", "never-set")?.is_none();
                Ok(json!({"keys": keys, "values": values, "absentReadsAsNone": absent}))
            })
            .load_map("items"),
        )
        .rpc(
            RpcDefinition::new("Add", |ctx, input| {
                let key = input.as_str().unwrap_or_default();
                ctx.set_map_instance("items", key, json!(format!("added {key}")))?;
                Ok(Value::Null)
            })
            .lock_map_instance("items", "a"),
        )
        .rpc(RpcDefinition::new("Peek", |ctx, _| {
            Ok(ctx.map_instance("item", "x")?.cloned().unwrap_or_default())
        }))
}

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(inventory().build().unwrap()).unwrap();
    let options = StartFlowOptions::new()
        .with_attribute("items.count", json!(3))
        .with_map_instance("items", "b", json!("bee"))
        .with_map_instance("items", "a", json!("ay"))
        .with_map_instance("items", "c d", json!({"nested": [1, 2]}))
        .with_map_instance("items-archive", "z", json!("archived"))
        .with_map_instance("items0", "zero", json!("other map"))
        .with_map_instance("item", "x", json!("other map"));
    t.runtime.start_flow(INVENTORY, FLOW, &options).unwrap();
    t
}

fn call(t: &TestStore, rpc: &str, input: Value) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(INVENTORY, FLOW, rpc, input, &RpcInvokeOptions::new())
}

#[test]
fn every_instance_of_the_map_and_nothing_else_is_loaded() {
    let t = started();
    assert_eq!(
        call(&t, "Scan", Value::Null).unwrap(),
        json!({
            "keys": ["a", "b", "c d"],
            "values": {"a": "ay", "b": "bee", "c d": {"nested": [1, 2]}},
            "absentReadsAsNone": true,
        })
    );
    // Loading a map whole loads no other map, whatever its name.
    assert_eq!(
        call(&t, "Peek", Value::Null).unwrap_err(),
        Error::AttributeMapNotLoaded {
            physical_name: "item/x".into()
        }
    );
}

#[test]
fn staged_writes_count_and_later_commits_are_seen() {
    let t = started();
    assert_eq!(
        call(&t, "Scan", json!({"stage": true})).unwrap()["keys"],
        json!(["a", "c d", "new"])
    );
    // The call wrote: "new" is stored and "b" gone.
    call(&t, "Add", json!("e")).unwrap();
    assert_eq!(
        call(&t, "Scan", Value::Null).unwrap()["keys"],
        json!(["a", "c d", "e", "new"])
    );
}

#[test]
fn a_lock_free_call_whose_map_changed_before_its_commit_writes_nothing() {
    let t = started();
    let (_store, other) = t.open_again();
    let other = Arc::new(other);
    other.register(inventory().build().unwrap()).unwrap();
    // A lock-free RPC that loads the map whole and writes a summary of it: the first time,
    // another runtime adds an instance between its read and its commit.
    let raced = Arc::new(AtomicBool::new(false));
    let racing = inventory()
        .rpc(
            RpcDefinition::new("Count", {
                let (other, raced) = (Arc::clone(&other), Arc::clone(&raced));
                move |ctx, _| {
                    let count = ctx.map_instance_keys("items")?.len();
                    if !raced.swap(true, Ordering::SeqCst) {
                        let other = Arc::clone(&other);
                        std::thread::spawn(move || {
                            other.invoke_rpc(
                                INVENTORY,
                                FLOW,
                                "Add",
                                json!("late"),
                                &RpcInvokeOptions::new(),
                            )
                        })
                        .join()
                        .expect("the adding thread ended")?;
                    }
                    ctx.set_attribute("items.count", json!(count))?;
                    Ok(json!(count))
                }
            })
            .load_map("items"),
        )
        .build()
        .unwrap();
    let (_again, runtime) = t.open_again();
    runtime.register(racing).unwrap();
    let count = |runtime: &attrflow::Runtime| {
        runtime.invoke_rpc(
            INVENTORY,
            FLOW,
            "Count",
            Value::Null,
            &RpcInvokeOptions::new(),
        )
    };
    match count(&runtime) {
        Err(Error::LockConflict(message)) => {
            assert!(message.contains("items/late"), "{message}")
        }
        other => panic!("expected a lock conflict, got {other:?}"),
    }
    let stored_count = || t.stored_values(FLOW).get("items.count").cloned();
    assert_eq!(
        stored_count(),
        Some(json!(3)),
        "the conflicting call wrote nothing"
    );
    assert_eq!(count(&runtime).unwrap(), json!(4));
    assert_eq!(stored_count(), Some(json!(4)));
}

#[test]
fn only_a_declared_map_loads_whole_and_only_once() {
    let refused = |rpc: RpcDefinition| match FlowDefinition::builder("F")
        .attribute("owner")
        .map("items")
        .rpc(rpc)
        .build()
    {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected InvalidInput, got {other:?}"),
    };
    let rpc = || RpcDefinition::new("R", |_, _| Ok(Value::Null));
    assert_eq!(
        refused(rpc().load_map("owner")),
        "\"owner\" is a singleton Attribute, not an AttributeMap; only an AttributeMap loads \
         whole"
    );
    assert_eq!(
        refused(rpc().load_map("nothing")),
        "flow type \"F\" declares no Attribute or AttributeMap \"nothing\""
    );
    assert_eq!(
        refused(rpc().load_map("items").load_map("items")),
        "RPC \"R\" of flow type \"F\" declares the load \"items/\" twice"
    );
    // A whole map and one of its instances may both be loaded, as in Dex.
    FlowDefinition::builder("F")
        .map("items")
        .rpc(rpc().load_map("items").load_map_instance("items", "a"))
        .build()
        .unwrap();
}
