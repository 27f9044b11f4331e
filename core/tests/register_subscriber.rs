//! `RegisterSubscriber` rejects incomplete input with a message naming the missing field,
//! and a rejected registration uses up no sequence and stores nothing.

mod common;

use attrflow::flows::chunked_subscriber::{FLOW_ID, FLOW_TYPE, REGISTER_SUBSCRIBER};
use attrflow::{Error, RpcInvokeOptions};
use common::{expected_subscriber, register_in_order, TestStore};
use serde_json::{json, Value};

fn register_raw(t: &TestStore, input: Value) -> attrflow::Result<Value> {
    t.runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        REGISTER_SUBSCRIBER,
        input,
        &RpcInvokeOptions::new(),
    )
}

#[test]
fn a_registration_returns_the_stored_subscriber_in_camel_case() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    let output = register_raw(
        &t,
        json!({ "subscriberId": "subscriber-001", "deliveryAddress": "subscriber-001@example.com" }),
    )
    .unwrap();
    assert_eq!(
        output,
        json!({
            "sequence": 1,
            "subscriberId": "subscriber-001",
            "deliveryAddress": "subscriber-001@example.com",
        })
    );
}

#[test]
fn missing_or_empty_fields_are_rejected_by_name() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    let cases = [
        (json!({}), "subscriberId is required"),
        (
            json!({ "deliveryAddress": "a@example.com" }),
            "subscriberId is required",
        ),
        (
            json!({ "subscriberId": "", "deliveryAddress": "a@example.com" }),
            "subscriberId is required",
        ),
        (
            json!({ "subscriberId": "a" }),
            "deliveryAddress is required",
        ),
        (
            json!({ "subscriberId": "a", "deliveryAddress": "" }),
            "deliveryAddress is required",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(
            register_raw(&t, input.clone()),
            Err(Error::InvalidInput(message.into())),
            "{input}"
        );
    }
    assert_eq!(
        t.archive().register("", "a@example.com"),
        Err(Error::InvalidInput("subscriberId is required".into()))
    );
}

#[test]
fn input_that_is_not_a_registration_is_invalid_input_naming_the_rpc() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    for input in [json!(5), json!("subscriber"), json!({ "subscriberId": 7 })] {
        match register_raw(&t, input.clone()) {
            Err(Error::InvalidInput(message)) => assert!(
                message.starts_with("invalid input for RPC RegisterSubscriber: "),
                "{input}: {message}"
            ),
            other => panic!("{input}: expected invalid input, got {other:?}"),
        }
    }
    // A field of the wrong kind is named.
    assert_eq!(
        register_raw(
            &t,
            json!({ "subscriberId": 7, "deliveryAddress": "a@example.com" })
        ),
        Err(Error::InvalidInput(
            "invalid input for RPC RegisterSubscriber: subscriberId: invalid type: integer `7`, \
             expected a string"
                .into()
        ))
    );
}

#[test]
fn a_rejected_registration_uses_up_no_sequence_and_stores_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=2);
    let before = t.stored_values(FLOW_ID);

    assert!(archive.register("subscriber-003", "").is_err());
    assert!(register_raw(&t, json!(null)).is_err());

    assert_eq!(t.stored_values(FLOW_ID), before);
    register_in_order(&archive, 3..=3);
    assert_eq!(
        archive.page("current").unwrap().subscribers[0],
        expected_subscriber(3)
    );
}
