//! Validation of flow IDs, definition names and map instance keys, and the physical names
//! under which values are stored.
//!
//! A singleton Attribute is stored under its own name; a map instance under
//! `<map name>/<instance key>`. Because `/` separates the two, neither may contain it.

use crate::error::{Error, Result};

/// Characters a flow ID may not contain (reserved by the Dex server for its own keys).
pub const FLOW_ID_RESERVED: [char; 3] = ['/', '$', ':'];

pub use crate::limits::{MAX_FLOW_ID_BYTES, MAX_INSTANCE_KEY_BYTES, MAX_NAME_BYTES};

/// Checks a flow ID: non-empty, at most [`MAX_FLOW_ID_BYTES`], free of `/`, `$` and `:` and of
/// control characters.
pub fn validate_flow_id(flow_id: &str) -> Result<()> {
    if flow_id.is_empty() {
        return Err(Error::invalid_input("flow ID must not be empty"));
    }
    if flow_id.len() > MAX_FLOW_ID_BYTES {
        return Err(Error::invalid_input(format!(
            "flow ID is {} bytes long; the limit is {MAX_FLOW_ID_BYTES}",
            flow_id.len()
        )));
    }
    if let Some(c) = flow_id.chars().find(|c| FLOW_ID_RESERVED.contains(c)) {
        return Err(Error::invalid_input(format!(
            "flow ID {flow_id:?} contains reserved character {c:?}"
        )));
    }
    if flow_id.chars().any(char::is_control) {
        return Err(Error::invalid_input(format!(
            "flow ID {flow_id:?} contains a control character"
        )));
    }
    Ok(())
}

/// Checks the name of an Attribute, AttributeMap, RPC or flow type: non-blank, at most
/// [`MAX_NAME_BYTES`], without `/`.
pub fn validate_definition_name(what: &str, name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::invalid_input(format!(
            "{what} name must not be blank"
        )));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid_input(format!(
            "{what} name is {} bytes long; the limit is {MAX_NAME_BYTES}",
            name.len()
        )));
    }
    if name.contains('/') {
        return Err(Error::invalid_input(format!(
            "{what} name {name:?} must not contain '/'"
        )));
    }
    Ok(())
}

/// Checks a map instance key: non-empty, at most [`MAX_INSTANCE_KEY_BYTES`], without `/` and
/// without control characters (which would make page tokens and messages unreadable).
pub fn validate_instance_key(map: &str, instance: &str) -> Result<()> {
    if instance.is_empty() {
        return Err(Error::invalid_input(format!(
            "instance key of AttributeMap {map:?} must not be empty"
        )));
    }
    if instance.len() > MAX_INSTANCE_KEY_BYTES {
        return Err(Error::invalid_input(format!(
            "instance key of AttributeMap {map:?} is {} bytes long; the limit is {MAX_INSTANCE_KEY_BYTES}",
            instance.len()
        )));
    }
    if instance.contains('/') {
        return Err(Error::invalid_input(format!(
            "instance key {instance:?} of AttributeMap {map:?} must not contain '/'"
        )));
    }
    if instance.chars().any(char::is_control) {
        return Err(Error::invalid_input(format!(
            "instance key {instance:?} of AttributeMap {map:?} contains a control character"
        )));
    }
    Ok(())
}

/// The physical name of a map instance, after checking the instance key.
///
/// ```
/// assert_eq!(
///     attrflow::names::instance_physical_name("subscriber_chunks", "current").unwrap(),
///     "subscriber_chunks/current"
/// );
/// assert!(attrflow::names::instance_physical_name("subscriber_chunks", "a/b").is_err());
/// ```
pub fn instance_physical_name(map: &str, instance: &str) -> Result<String> {
    validate_instance_key(map, instance)?;
    Ok(format!("{map}/{instance}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ids_reject_reserved_characters_and_emptiness() {
        assert!(validate_flow_id("chunked-subscriber-archive").is_ok());
        for bad in ["", "a/b", "a$b", "a:b", "a\nb"] {
            let err = validate_flow_id(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{bad:?}");
        }
        let err = validate_flow_id("x:y").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"flow ID "x:y" contains reserved character ':'"#
        );
        assert!(validate_flow_id(&"f".repeat(MAX_FLOW_ID_BYTES + 1)).is_err());
    }

    #[test]
    fn names_and_keys_reject_slash_and_blank() {
        assert!(validate_definition_name("Attribute", "state").is_ok());
        assert!(validate_definition_name("Attribute", " ").is_err());
        assert!(validate_definition_name("Attribute", "a/b").is_err());
        assert!(validate_instance_key("m", "current").is_ok());
        assert!(validate_instance_key("m", "").is_err());
        assert!(validate_instance_key("m", "a/b").is_err());
        assert!(validate_instance_key("m", "a\u{7}b").is_err());
    }
}
