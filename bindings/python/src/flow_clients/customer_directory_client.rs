//! The customer directory's native client (`attrflow._native.CustomerDirectory`): exactly
//! the operations of the core's [`CoreDirectory`], each retried by the client's policy in
//! the core.

use attrflow::flows::customer_directory::{CustomerDirectory as CoreDirectory, CustomerProfile};
use pyo3::prelude::*;

use super::{detached_json, native_client, parse_error, PyRetryPolicy, Target};
use crate::errors::IntoPyResult;
use crate::runtime::NativeRuntime;
use crate::text::{JsonText, Text};

native_client!(
    /// The customer directory (`CustomerDirectoryFlow`) `flow_id` of a store, as the core's
    /// typed client.
    NativeCustomerDirectory, "CustomerDirectory", CoreDirectory, {
    /// Saves the profile `profile_json`; returns it as stored, as JSON.
    fn upsert(&self, py: Python<'_>, profile_json: JsonText) -> PyResult<String> {
        detached_json(py, || {
            let profile: CustomerProfile = serde_json::from_str(&profile_json)
                .map_err(|e| parse_error("customer profile", e))?;
            self.core().upsert(&profile)
        })
    }

    /// The profile of `email_address`, as JSON.
    fn get(&self, py: Python<'_>, email_address: Text) -> PyResult<String> {
        detached_json(py, || self.core().get(&email_address))
    }

    /// Deletes the profile of `email_address`; returns it as JSON.
    fn delete(&self, py: Python<'_>, email_address: Text) -> PyResult<String> {
        detached_json(py, || self.core().delete(&email_address))
    }
});
