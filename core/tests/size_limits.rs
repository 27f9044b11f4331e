//! The documented byte limits hold at write time: input up to a limit is stored, one byte
//! more is an `InvalidInput` naming the limit and the size, and the store is unchanged.

mod common;

use attrflow::flows::chunked_subscriber::SUBSCRIBER_CHUNK_SIZE;
use attrflow::flows::chunked_subscriber::{FLOW_ID, FLOW_TYPE, REGISTER_SUBSCRIBER};
use attrflow::limits::{
    record_limit, MAX_FLOW_ID_BYTES, MAX_INSTANCE_KEY_BYTES, MAX_RECORD_BYTES, MAX_RPC_INPUT_BYTES,
    MAX_VALUE_BYTES,
};
use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::{all_subscribers, TestStore};
use serde_json::{json, Value};

fn invalid_input_message<T: std::fmt::Debug>(result: attrflow::Result<T>) -> String {
    match result {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn flow_ids_and_instance_keys_are_bounded_in_bytes() {
    let t = TestStore::fast();
    let start = StartFlowOptions::new();
    let at_limit = "é".repeat(MAX_FLOW_ID_BYTES / 2);
    t.runtime.start_flow(FLOW_TYPE, &at_limit, &start).unwrap();
    let over = format!("{at_limit}x");
    let message = invalid_input_message(t.runtime.start_flow(FLOW_TYPE, &over, &start));
    assert_eq!(message, "flow ID is 257 bytes long; the limit is 256");
    assert!(t.flow(&over).is_none());

    let key = "k".repeat(MAX_INSTANCE_KEY_BYTES + 1);
    let options =
        StartFlowOptions::new().with_map_instance("subscriber_chunks", key.as_str(), json!({}));
    let message = invalid_input_message(t.runtime.start_flow(FLOW_TYPE, "keyed", &options));
    assert!(
        message.contains("257 bytes long; the limit is 256"),
        "{message}"
    );
    assert!(t.flow("keyed").is_none());
}

#[test]
fn records_over_their_logs_limit_are_refused_and_nothing_is_stored() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let before = t.stored_values(FLOW_ID);

    // No field has a limit of its own: one text may take the record's whole limit.
    let limit = record_limit(SUBSCRIBER_CHUNK_SIZE);
    let long = "s".repeat(limit - 100);
    let message = invalid_input_message(archive.register(&long, &long));
    assert_eq!(
        message,
        format!(
            "record is {} bytes as JSON; the limit of a log with chunks of 100 records is \
             10474 bytes (a smaller chunk size allows larger records: 50 or less for this one)",
            2 * (limit - 100) + 53
        )
    );
    assert_eq!(t.stored_values(FLOW_ID), before);
    let stored = archive.register(&long, "a@example.com").unwrap();
    assert_eq!(stored.subscriber_id, long);
}

#[test]
fn a_chunk_of_the_largest_records_rolls_over_and_pages_back() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let address = "a".repeat(MAX_RECORD_BYTES / 2);
    for n in 1..=101u64 {
        let id = format!(
            "{n:03}{}",
            "s".repeat(record_limit(100) - MAX_RECORD_BYTES / 2 - 80)
        );
        let subscriber = archive.register(&id, &address).unwrap();
        assert_eq!(subscriber.sequence, n);
    }
    let stored = all_subscribers(&archive);
    assert_eq!(stored.len(), 101);
    let chunk = &t.stored_values(FLOW_ID)["subscriber_chunks/00000000000000000001"];
    assert!(chunk.to_string().len() <= MAX_VALUE_BYTES);
}

#[test]
fn rpc_input_over_the_limit_is_refused_before_the_handler_runs() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    let before = t.stored_values(FLOW_ID);
    let input = json!({
        "subscriberId": "s-1",
        "deliveryAddress": "a@example.com",
        "padding": "p".repeat(MAX_RPC_INPUT_BYTES),
    });
    let message = invalid_input_message(t.runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        REGISTER_SUBSCRIBER,
        input,
        &RpcInvokeOptions::new(),
    ));
    assert!(
        message.starts_with("input of RPC \"RegisterSubscriber\" is "),
        "{message}"
    );
    let limit = format!("the limit is {MAX_RPC_INPUT_BYTES} bytes");
    assert!(message.ends_with(&limit), "{message}");
    assert_eq!(t.stored_values(FLOW_ID), before);
}

#[test]
fn a_stored_value_over_the_limit_is_refused_and_nothing_of_the_call_is_stored() {
    let t = TestStore::fast();
    let definition = FlowDefinition::builder("Grower")
        .attribute("small")
        .attribute("big")
        .rpc(
            RpcDefinition::new("Grow", |ctx, input: Value| {
                ctx.set_attribute("small", json!("written with big"))?;
                let size = input.as_u64().unwrap_or(0) as usize;
                ctx.set_attribute("big", json!("b".repeat(size)))?;
                Ok(Value::Null)
            })
            .lock_attribute("small")
            .lock_attribute("big"),
        )
        .build()
        .unwrap();
    t.runtime.register(definition).unwrap();
    t.runtime
        .start_flow("Grower", "grower", &StartFlowOptions::new())
        .unwrap();
    let grow = |size: usize| {
        t.runtime.invoke_rpc(
            "Grower",
            "grower",
            "Grow",
            json!(size),
            &RpcInvokeOptions::new(),
        )
    };
    // The JSON string's two quotes count.
    grow(MAX_VALUE_BYTES - 2).unwrap();
    let before = t.stored_values("grower");
    let message = invalid_input_message(grow(MAX_VALUE_BYTES - 1));
    assert_eq!(
        message,
        "stored value \"big\" is 1048577 bytes as JSON; the limit is 1048576 bytes"
    );
    assert_eq!(t.stored_values("grower"), before);
}

#[test]
fn an_initial_value_over_the_limit_is_refused_and_no_flow_is_started() {
    let t = TestStore::fast();
    let big = json!({ "subscribers": ["x".repeat(MAX_VALUE_BYTES)] });
    let options = StartFlowOptions::new().with_map_instance("subscriber_chunks", "extra", big);
    let message = invalid_input_message(t.runtime.start_flow(FLOW_TYPE, "too-big", &options));
    assert!(
        message.starts_with("stored value \"subscriber_chunks/extra\" is "),
        "{message}"
    );
    assert!(t.flow("too-big").is_none());
}
