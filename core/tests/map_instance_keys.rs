//! Enumerating an AttributeMap's instances inside a handler ([`RpcContext::map_instance_keys`],
//! Dex's `AttributeMap.get_all_instance_keys` and `get_map_size`): the loaded instances
//! that hold a value, with the call's own staged sets added and deletes removed, sorted; an
//! instance not loaded is not listed, and a name that is not a declared map is refused.

mod common;

use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::TestStore;
use serde_json::{json, Value};

/// `Keys` stages the sets and deletes of `items` its input lists (`{"map": ..., "set":
/// [...], "delete": [...]}`), then returns the keys of the map its input names.
fn definition() -> FlowDefinition {
    FlowDefinition::builder("Inventory")
        .attribute("owner")
        .map("items")
        .map("other")
        .rpc(RpcDefinition::new("Keys", |ctx, input| {
            let map = input["map"].as_str().unwrap_or_default();
            for key in input["set"].as_array().into_iter().flatten() {
                ctx.set_map_instance("items", key.as_str().unwrap_or_default(), json!(1))?;
            }
            for key in input["delete"].as_array().into_iter().flatten() {
                ctx.delete_map_instance("items", key.as_str().unwrap_or_default())?;
            }
            Ok(json!(ctx.map_instance_keys(map)?))
        }))
        .build()
        .unwrap()
}

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(definition()).unwrap();
    let options = StartFlowOptions::new()
        .with_map_instance("items", "b", json!("bee"))
        .with_map_instance("items", "a", json!("ay"))
        .with_map_instance("items", "c", json!("sea"))
        .with_map_instance("other", "x", json!("ex"));
    t.runtime.start_flow("Inventory", "i-1", &options).unwrap();
    t
}

fn keys(t: &TestStore, input: Value, loads: &[&str]) -> attrflow::Result<Value> {
    let mut options = RpcInvokeOptions::new();
    for instance in loads {
        options = options.load_attribute_map_instance("items", *instance);
    }
    t.runtime
        .invoke_rpc("Inventory", "i-1", "Keys", input, &options)
}

#[test]
fn the_loaded_instances_holding_a_value_are_listed_in_order() {
    let t = started();
    // "d" is loaded but holds nothing; "c" holds a value but is not loaded.
    assert_eq!(
        keys(&t, json!({"map": "items"}), &["b", "a", "d"]).unwrap(),
        json!(["a", "b"])
    );
    assert_eq!(keys(&t, json!({"map": "items"}), &[]).unwrap(), json!([]));
    assert_eq!(
        keys(&t, json!({"map": "other"}), &["a", "b", "c"]).unwrap(),
        json!([])
    );
}

#[test]
fn staged_sets_and_deletes_count() {
    let t = started();
    assert_eq!(
        keys(
            &t,
            json!({"map": "items", "set": ["z", "0"], "delete": ["a", "c"]}),
            &["a", "b", "c"]
        )
        .unwrap(),
        json!(["0", "b", "z"])
    );
}

#[test]
fn only_a_declared_map_has_keys() {
    let t = started();
    match keys(&t, json!({"map": "owner"}), &[]) {
        Err(Error::InvalidInput(message)) => assert_eq!(
            message,
            "\"owner\" is a singleton Attribute, not an AttributeMap; it has no instances"
        ),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    match keys(&t, json!({"map": "nothing"}), &[]) {
        Err(Error::InvalidInput(message)) => assert_eq!(
            message,
            "flow type \"Inventory\" declares no AttributeMap \"nothing\""
        ),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}
