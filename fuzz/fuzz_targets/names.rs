//! Flow IDs, definition names and instance keys: any text is accepted exactly when its rule
//! allows it and refused with `InvalidInput` otherwise.
#![no_main]

use attrflow::limits::{MAX_FLOW_ID_BYTES, MAX_INSTANCE_KEY_BYTES, MAX_NAME_BYTES};
use attrflow::names::{validate_definition_name, validate_flow_id, validate_instance_key};
use attrflow::{Error, Result};
use libfuzzer_sys::fuzz_target;

fn agrees(what: &str, text: &str, result: Result<()>, allowed: bool) {
    match result {
        Ok(()) => assert!(allowed, "{what} {text:?} was accepted"),
        Err(Error::InvalidInput(_)) => assert!(!allowed, "{what} {text:?} was refused"),
        Err(other) => panic!("{what} {text:?} gave {other:?}"),
    }
}

fuzz_target!(|text: &str| {
    let controls = text.chars().any(char::is_control);
    agrees(
        "flow ID",
        text,
        validate_flow_id(text),
        !text.is_empty()
            && text.len() <= MAX_FLOW_ID_BYTES
            && !text.contains(['/', '$', ':'])
            && !controls,
    );
    agrees(
        "name",
        text,
        validate_definition_name("Attribute", text),
        !text.trim().is_empty() && text.len() <= MAX_NAME_BYTES && !text.contains('/'),
    );
    agrees(
        "instance key",
        text,
        validate_instance_key("subscriber_chunks", text),
        !text.is_empty()
            && text.len() <= MAX_INSTANCE_KEY_BYTES
            && !text.contains('/')
            && !controls,
    );
});
