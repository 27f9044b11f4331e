//! What a handler's snapshot holds: every singleton Attribute, plus exactly the map
//! instances the RPC loads, by definition or per call. An instance that was not loaded is an
//! error, never "absent"; a loaded instance with no value is absent. Per-call loads and
//! locks are added to the definition's fixed ones (a name in both is fine; a name twice in
//! the per-call options is not), and may only name declared maps.

mod common;

use attrflow::{
    Error, FlowDefinition, MapInstance, RpcDefinition, RpcInvokeOptions, StartFlowOptions,
};
use common::OpenedStore;
use common::TestStore;
use serde_json::{json, Value};

const CATALOG: &str = "Catalog";
const FLOW: &str = "catalog";

/// A flow type with a singleton and a map of items `stocked` (has a value) and others
/// (none). `Read` loads `items/stocked` by definition and returns the instances its input
/// lists; `CountLocks` locks `config` and reports how many locks this call holds.
fn catalog(store: OpenedStore) -> FlowDefinition {
    FlowDefinition::builder(CATALOG)
        .attribute("config")
        .map("items")
        .rpc(
            RpcDefinition::new("Read", |ctx, input| {
                let mut seen = serde_json::Map::new();
                seen.insert("config".into(), ctx.attribute("config")?.cloned().into());
                for instance in input.as_array().into_iter().flatten() {
                    let instance = instance.as_str().unwrap_or_default();
                    let value = ctx.map_instance("items", instance)?.cloned();
                    seen.insert(instance.into(), value.unwrap_or(json!("absent")));
                }
                Ok(Value::Object(seen))
            })
            .load_map_instance("items", "stocked"),
        )
        .rpc(
            RpcDefinition::new("CountLocks", move |_, _| Ok(json!(store.held_lock_count())))
                .lock_attribute("config")
                .lock_map_instance("items", "stocked"),
        )
        .rpc(RpcDefinition::new("WriteUnloaded", |ctx, _| {
            ctx.set_map_instance("items", "new", json!("written blind"))?;
            Ok(ctx
                .map_instance("items", "new")?
                .cloned()
                .unwrap_or_default())
        }))
        .build()
        .unwrap()
}

fn started_catalog() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(catalog(t.store.clone())).unwrap();
    t.runtime
        .start_flow(
            CATALOG,
            FLOW,
            &StartFlowOptions::new()
                .with_attribute("config", json!("v1"))
                .with_map_instance("items", "stocked", json!("in stock"))
                .with_map_instance("items", "extra", json!("extra stock")),
        )
        .unwrap();
    t
}

fn read(t: &TestStore, instances: &[&str], options: &RpcInvokeOptions) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(CATALOG, FLOW, "Read", json!(instances), options)
}

fn count_locks(t: &TestStore, options: &RpcInvokeOptions) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(CATALOG, FLOW, "CountLocks", Value::Null, options)
}

fn assert_invalid_input(result: attrflow::Result<Value>, message: &str) {
    assert_eq!(result, Err(Error::InvalidInput(message.to_owned())));
}

#[test]
fn singletons_and_fixed_loads_are_in_every_snapshot() {
    let t = started_catalog();
    assert_eq!(
        read(&t, &["stocked"], &RpcInvokeOptions::new()).unwrap(),
        json!({ "config": "v1", "stocked": "in stock" })
    );
}

#[test]
fn reading_an_instance_that_was_not_loaded_is_attribute_map_not_loaded() {
    let t = started_catalog();
    let err = read(&t, &["extra"], &RpcInvokeOptions::new()).unwrap_err();
    assert_eq!(
        err,
        Error::AttributeMapNotLoaded {
            physical_name: "items/extra".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "AttributeMap instance was not loaded for RPC: items/extra"
    );
}

#[test]
fn a_loaded_instance_without_a_value_reads_as_absent() {
    let t = started_catalog();
    let options = RpcInvokeOptions::new().load_attribute_map_instance("items", "missing");
    assert_eq!(
        read(&t, &["missing"], &options).unwrap(),
        json!({ "config": "v1", "missing": "absent" })
    );
}

#[test]
fn per_call_loads_are_added_to_the_fixed_loads() {
    let t = started_catalog();
    let options = RpcInvokeOptions::new()
        .load_attribute_map_instance("items", "extra")
        .load_attribute_map_instance("items", "stocked");
    assert_eq!(
        read(&t, &["stocked", "extra"], &options).unwrap(),
        json!({ "config": "v1", "stocked": "in stock", "extra": "extra stock" }),
        "a per-call load may repeat a fixed one"
    );
}

#[test]
fn per_call_locks_are_added_to_the_fixed_locks() {
    let t = started_catalog();
    assert_eq!(count_locks(&t, &RpcInvokeOptions::new()).unwrap(), json!(2));
    let extra = RpcInvokeOptions::new()
        .lock_attribute_map_instance("items", "extra")
        .lock_attribute_map_instance("items", "missing");
    assert_eq!(count_locks(&t, &extra).unwrap(), json!(4));
    let repeated = RpcInvokeOptions::new().lock_attribute_map_instance("items", "stocked");
    assert_eq!(
        count_locks(&t, &repeated).unwrap(),
        json!(2),
        "a per-call lock that repeats a fixed one is taken once"
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_name_given_twice_within_the_per_call_options_is_invalid_input() {
    let t = started_catalog();
    let loads = RpcInvokeOptions::new()
        .load_attribute_map_instance("items", "extra")
        .load_attribute_map_instance("items", "extra");
    assert_invalid_input(
        read(&t, &["extra"], &loads),
        r#"RPC invoke options name the load "items/extra" twice"#,
    );
    let locks = RpcInvokeOptions::new()
        .lock_attribute_map_instance("items", "extra")
        .lock_attribute_map_instance("items", "extra");
    assert_invalid_input(
        count_locks(&t, &locks),
        r#"RPC invoke options name the lock "items/extra" twice"#,
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn per_call_options_may_only_name_instances_of_declared_maps() {
    let t = started_catalog();
    let cases = [
        (
            MapInstance::new("prices", "a"),
            r#"flow type "Catalog" declares no Attribute or AttributeMap "prices""#,
        ),
        (
            MapInstance::new("config", "a"),
            r#""config" is a singleton Attribute, not an AttributeMap; it takes no instance"#,
        ),
        (
            MapInstance::new("items", ""),
            r#"instance key of AttributeMap "items" must not be empty"#,
        ),
        (
            MapInstance::new("items", "a/b"),
            r#"instance key "a/b" of AttributeMap "items" must not contain '/'"#,
        ),
    ];
    for (instance, message) in cases {
        let lock = RpcInvokeOptions {
            lock_attribute_map_instances: vec![instance.clone()],
            ..RpcInvokeOptions::new()
        };
        assert_invalid_input(count_locks(&t, &lock), message);
        let load = RpcInvokeOptions {
            load_attribute_map_instances: vec![instance],
            ..RpcInvokeOptions::new()
        };
        assert_invalid_input(read(&t, &[], &load), message);
    }
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn an_instance_may_be_written_without_being_loaded_and_reads_back_as_written() {
    let t = started_catalog();
    let output = t
        .runtime
        .invoke_rpc(
            CATALOG,
            FLOW,
            "WriteUnloaded",
            Value::Null,
            &RpcInvokeOptions::new(),
        )
        .unwrap();
    assert_eq!(output, json!("written blind"));
    let options = RpcInvokeOptions::new().load_attribute_map_instance("items", "new");
    assert_eq!(
        read(&t, &["new"], &options).unwrap()["new"],
        "written blind"
    );
}
