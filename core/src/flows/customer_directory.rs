//! `CustomerDirectoryFlow`: the customer directory of the *hash-partitioned AttributeMap*
//! pattern.
//!
//! An RPC-only flow, started once under [`FLOW_ID`] with no initial values. Profiles are
//! keyed by canonical email address (see [`canonical_email`]) and kept in one of
//! [`PARTITIONS`] bucket instances of [`PROFILES_MAP`], chosen by the FNV-1a hash of that
//! key. The RPCs have no fixed locks or loads: callers compute the bucket
//! ([`profile_partition`]) and lock and load it for `UpsertCustomerProfile`, load it for
//! `GetCustomerProfileByEmail` and `DeleteCustomerProfile`. Buckets are created by their
//! first upsert.
//!
//! Every field has a byte limit ([`MAX_EMAIL_ADDRESS_BYTES`], [`MAX_PROFILE_FIELD_BYTES`]),
//! so one caller cannot fill a bucket's stored value with a few huge profiles and lock
//! every new customer of that bucket out: a full bucket holds at least
//! [`MIN_PROFILES_PER_PARTITION`] profiles, and a deleted profile frees its room.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::RpcContext;
use crate::definition::{FlowDefinition, RpcDefinition, RpcPlan, RpcPlanner};
use crate::error::{Error, Result};
use crate::hash_partition::HashPartitions;
use crate::options::RpcInvokeOptions;
use crate::output::RpcOutput;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::typed::{decode_input, encode, AttributeMap};

/// The flow type.
pub const FLOW_TYPE: &str = "CustomerDirectoryFlow";
/// The flow ID the pattern starts its one directory under.
pub const FLOW_ID: &str = "customer-directory";
/// The bucket AttributeMap.
pub const PROFILES_MAP: &str = "customer_profiles_by_email_partition";
/// The writing RPC.
pub const UPSERT_CUSTOMER_PROFILE: &str = "UpsertCustomerProfile";
/// The reading RPC.
pub const GET_CUSTOMER_PROFILE_BY_EMAIL: &str = "GetCustomerProfileByEmail";
/// The deleting RPC.
pub const DELETE_CUSTOMER_PROFILE: &str = "DeleteCustomerProfile";
/// The longest canonical email address, in bytes (RFC 5321's path limit).
pub const MAX_EMAIL_ADDRESS_BYTES: usize = 254;
/// The longest `fullName`, `companyName` or `customerTier`, in bytes of UTF-8.
pub const MAX_PROFILE_FIELD_BYTES: usize = 256;
/// The fewest profiles of the longest fields that fit in one bucket's stored value.
pub const MIN_PROFILES_PER_PARTITION: usize = crate::limits::MAX_VALUE_BYTES
    / (2 * MAX_EMAIL_ADDRESS_BYTES + 3 * MAX_PROFILE_FIELD_BYTES + PROFILE_JSON_OVERHEAD);
/// What a profile takes in a bucket's JSON besides its field values (names, quotes,
/// punctuation), rounded up.
const PROFILE_JSON_OVERHEAD: usize = 96;
/// Number of buckets. Part of the stored layout, as is the hash.
pub const PARTITION_COUNT: u32 = 1000;
/// The bucket layout: `partition-000` … `partition-999`.
pub const PARTITIONS: HashPartitions = HashPartitions::new("partition", PARTITION_COUNT);

const BUCKETS: AttributeMap<ProfilePartition> = AttributeMap::new(PROFILES_MAP);

/// One customer's profile, keyed by its canonical email address.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CustomerProfile {
    /// The email address; stored and returned in canonical form.
    pub email_address: String,
    /// The customer's full name; required.
    pub full_name: String,
    /// The customer's company; required.
    pub company_name: String,
    /// The customer's tier (`gold`, say); required.
    pub customer_tier: String,
}

/// One bucket: the profiles whose canonical emails hash to it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfilePartition {
    /// Profiles by canonical email address.
    pub profiles_by_canonical_email: BTreeMap<String, CustomerProfile>,
}

/// The canonical form of an email address: ASCII only (else `emailAddress must contain
/// only ASCII characters`), trimmed of space and 0x09–0x0D at both ends, not empty (else
/// `emailAddress is required`), with A–Z lowercased.
///
/// ```
/// use attrflow::flows::customer_directory::canonical_email;
/// assert_eq!(canonical_email(" Alice@Example.COM ").unwrap(), "alice@example.com");
/// assert!(canonical_email("josé@example.com").is_err());
/// ```
pub fn canonical_email(email_address: &str) -> Result<String> {
    if !email_address.is_ascii() {
        return Err(Error::invalid_input(
            "emailAddress must contain only ASCII characters",
        ));
    }
    // Not `trim_ascii`: its whitespace leaves out 0x0B, which the pattern trims.
    let trimmed = email_address.trim_matches(|c: char| c == ' ' || ('\t'..='\r').contains(&c));
    if trimmed.is_empty() {
        return Err(Error::invalid_input("emailAddress is required"));
    }
    if trimmed.len() > MAX_EMAIL_ADDRESS_BYTES {
        return Err(Error::invalid_input(format!(
            "emailAddress is {} bytes; the limit is {MAX_EMAIL_ADDRESS_BYTES}",
            trimmed.len()
        )));
    }
    Ok(trimmed.to_ascii_lowercase())
}

/// The bucket instance key holding the profile of `email_address` (canonicalized first).
///
/// ```
/// use attrflow::flows::customer_directory::profile_partition;
/// assert_eq!(profile_partition(" Alice@Example.COM ").unwrap(), "partition-278");
/// ```
pub fn profile_partition(email_address: &str) -> Result<String> {
    Ok(PARTITIONS.instance_for(canonical_email(email_address)?.as_bytes()))
}

/// The flow type's definition.
pub fn definition() -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .map(PROFILES_MAP)
        .written_by_rpcs_only()
        .rpc(
            RpcDefinition::new_with_output(UPSERT_CUSTOMER_PROFILE, upsert_customer_profile)
                .planned_by(RpcPlanner::locking(upsert_plan)),
        )
        .rpc(
            RpcDefinition::new_with_output(
                GET_CUSTOMER_PROFILE_BY_EMAIL,
                get_customer_profile_by_email,
            )
            .read_only()
            .planned_by(RpcPlanner::loading(read_plan)),
        )
        .rpc(
            RpcDefinition::new_with_output(DELETE_CUSTOMER_PROFILE, delete_customer_profile)
                .planned_by(RpcPlanner::locking(delete_plan)),
        )
        .build()
        .unwrap_or_else(|e| unreachable!("the built-in definition is valid: {e}"))
}

/// The email address a call names: an upsert's profile's, a read's or a delete's input
/// itself; `None` for an input of another shape, which the handler refuses.
fn planned_email(input: &Value, in_profile: bool) -> Option<&str> {
    let email = if in_profile {
        input.get("emailAddress")?
    } else {
        input
    };
    email.as_str()
}

/// The plan of an upsert: lock and load the email's partition ([`upsert_options`]).
fn upsert_plan(input: &Value) -> Result<RpcPlan> {
    planned_email(input, true).map_or(Ok(RpcPlan::default()), |email| {
        upsert_options(email).map(RpcPlan::from)
    })
}

/// The plan of a delete: lock and load the email's partition ([`upsert_options`]).
fn delete_plan(input: &Value) -> Result<RpcPlan> {
    planned_email(input, false).map_or(Ok(RpcPlan::default()), |email| {
        upsert_options(email).map(RpcPlan::from)
    })
}

/// The plan of a read: load the email's partition ([`read_options`]).
fn read_plan(input: &Value) -> Result<RpcPlan> {
    planned_email(input, false).map_or(Ok(RpcPlan::default()), |email| {
        read_options(email).map(RpcPlan::from)
    })
}

fn upsert_customer_profile(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: CustomerProfile = decode_input(UPSERT_CUSTOMER_PROFILE, input)?;
    let email = canonical_email(&input.email_address)?;
    for (field, value) in [
        ("fullName", &input.full_name),
        ("companyName", &input.company_name),
        ("customerTier", &input.customer_tier),
    ] {
        if value.is_empty() {
            return Err(Error::invalid_input(format!("{field} is required")));
        }
        if value.len() > MAX_PROFILE_FIELD_BYTES {
            return Err(Error::invalid_input(format!(
                "{field} is {} bytes; the limit is {MAX_PROFILE_FIELD_BYTES}",
                value.len()
            )));
        }
    }
    let partition = PARTITIONS.instance_for(email.as_bytes());
    let mut bucket = BUCKETS.get(ctx, &partition)?.unwrap_or_default();
    let profile = CustomerProfile {
        email_address: email.clone(),
        ..input
    };
    bucket
        .profiles_by_canonical_email
        .insert(email, profile.clone());
    BUCKETS.set(ctx, &partition, &bucket)?;
    RpcOutput::encode("customer profile", &profile)
}

fn get_customer_profile_by_email(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let email_address: String = decode_input(GET_CUSTOMER_PROFILE_BY_EMAIL, input)?;
    let email = canonical_email(&email_address)?;
    let partition = PARTITIONS.instance_for(email.as_bytes());
    let profile = BUCKETS
        .get(ctx, &partition)?
        .and_then(|mut bucket| bucket.profiles_by_canonical_email.remove(&email))
        .ok_or_else(|| Error::RecordNotFound(format!("customer profile {email:?} not found")))?;
    RpcOutput::encode("customer profile", &profile)
}

fn delete_customer_profile(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let email_address: String = decode_input(DELETE_CUSTOMER_PROFILE, input)?;
    let email = canonical_email(&email_address)?;
    let partition = PARTITIONS.instance_for(email.as_bytes());
    let mut bucket = BUCKETS.get(ctx, &partition)?.unwrap_or_default();
    let profile = bucket
        .profiles_by_canonical_email
        .remove(&email)
        .ok_or_else(|| Error::RecordNotFound(format!("customer profile {email:?} not found")))?;
    if bucket.profiles_by_canonical_email.is_empty() {
        BUCKETS.delete(ctx, &partition)?;
    } else {
        BUCKETS.set(ctx, &partition, &bucket)?;
    }
    RpcOutput::encode("customer profile", &profile)
}

/// Typed access to one customer directory for Rust callers.
///
/// ```
/// use attrflow::flows::customer_directory::{CustomerDirectory, CustomerProfile, FLOW_ID};
/// use attrflow::Runtime;
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("attrflow.db");
/// let runtime = Runtime::open(path.to_str().unwrap())?;
/// let directory = CustomerDirectory::new(&runtime, FLOW_ID);
/// directory.start()?;
/// let saved = directory.upsert(&CustomerProfile {
///     email_address: " Ada@Example.com".into(),
///     full_name: "Ada Lovelace".into(),
///     company_name: "Analytical Engines".into(),
///     customer_tier: "gold".into(),
/// })?;
/// assert_eq!(saved.email_address, "ada@example.com");
/// assert_eq!(directory.get("ADA@example.com")?, saved);
/// # Ok::<(), attrflow::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CustomerDirectory<'r> {
    runtime: &'r Runtime,
    flow_id: &'r str,
    retry: RetryPolicy,
}

/// The per-call options of an upsert of `email_address`'s profile: lock and load its
/// partition.
pub fn upsert_options(email_address: &str) -> Result<RpcInvokeOptions> {
    let partition = profile_partition(email_address)?;
    Ok(RpcInvokeOptions::new()
        .lock_attribute_map_instance(PROFILES_MAP, partition.clone())
        .load_attribute_map_instance(PROFILES_MAP, partition))
}

/// The per-call options of a read of `email_address`'s profile: load its partition.
pub fn read_options(email_address: &str) -> Result<RpcInvokeOptions> {
    let partition = profile_partition(email_address)?;
    Ok(RpcInvokeOptions::new().load_attribute_map_instance(PROFILES_MAP, partition))
}

impl<'r> CustomerDirectory<'r> {
    /// The directory under `flow_id` (normally [`FLOW_ID`]), retrying by
    /// [`RetryPolicy::DEFAULT`].
    pub fn new(runtime: &'r Runtime, flow_id: &'r str) -> Self {
        CustomerDirectory {
            runtime,
            flow_id,
            retry: RetryPolicy::DEFAULT,
        }
    }

    /// This client retrying lock conflicts by `policy` in every call
    /// ([`RetryPolicy::NONE`]: each RPC is called once).
    pub fn with_retry_policy(self, policy: RetryPolicy) -> Self {
        CustomerDirectory {
            retry: policy,
            ..self
        }
    }

    /// Starts the directory, or returns the running one's run ID (idempotent). A stopped
    /// one is not started again (a new run would hold none of its values): that fails with
    /// [`Error::FlowNotActive`] saying how it was stopped.
    pub fn start(&self) -> Result<String> {
        super::ensure_started(self.runtime, FLOW_TYPE, self.flow_id)
    }

    /// Saves a profile under its canonical email, locking and loading its bucket, and
    /// returns it as stored. A concurrent upsert to the same bucket gives a retryable
    /// [`Error::LockConflict`], retried by the client's [`RetryPolicy`].
    pub fn upsert(&self, profile: &CustomerProfile) -> Result<CustomerProfile> {
        let output = self.invoke(
            UPSERT_CUSTOMER_PROFILE,
            encode("input", profile)?,
            &RpcInvokeOptions::new(),
        )?;
        output.decode(UPSERT_CUSTOMER_PROFILE)
    }

    /// Saves a profile, as [`CustomerDirectory::upsert`] does (which retries by the
    /// client's [`RetryPolicy`] too).
    #[deprecated(note = "`upsert` retries by the client's retry policy; call it")]
    pub fn upsert_with_retry(&self, profile: &CustomerProfile) -> Result<CustomerProfile> {
        self.upsert(profile)
    }

    /// Invokes one of the directory's RPCs, retrying lock conflicts by the client's policy.
    fn invoke(&self, rpc: &str, input: Value, options: &RpcInvokeOptions) -> Result<RpcOutput> {
        self.retry.run(|| {
            self.runtime
                .invoke_rpc_output(FLOW_TYPE, self.flow_id, rpc, input.clone(), options)
        })
    }

    /// The profile of `email_address` (any case, surrounding whitespace allowed), loading
    /// its bucket; [`Error::RecordNotFound`] when none is stored.
    pub fn get(&self, email_address: &str) -> Result<CustomerProfile> {
        let output = self.invoke(
            GET_CUSTOMER_PROFILE_BY_EMAIL,
            Value::String(email_address.to_owned()),
            &RpcInvokeOptions::new(),
        )?;
        output.decode(GET_CUSTOMER_PROFILE_BY_EMAIL)
    }

    /// Deletes the profile of `email_address`, locking and loading its bucket, and returns
    /// it; [`Error::RecordNotFound`] when none is stored.
    pub fn delete(&self, email_address: &str) -> Result<CustomerProfile> {
        let output = self.invoke(
            DELETE_CUSTOMER_PROFILE,
            Value::String(email_address.to_owned()),
            &RpcInvokeOptions::new(),
        )?;
        output.decode(DELETE_CUSTOMER_PROFILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_vectors_canonicalize_hash_and_partition() {
        let vectors = [
            (
                " Alice@Example.COM ",
                "alice@example.com",
                2_493_822_278,
                "partition-278",
            ),
            (
                "bob@example.com",
                "bob@example.com",
                3_055_529_145,
                "partition-145",
            ),
            (
                "support+west@example.org",
                "support+west@example.org",
                2_156_001_632,
                "partition-632",
            ),
        ];
        for (input, canonical, hash, partition) in vectors {
            assert_eq!(canonical_email(input).unwrap(), canonical);
            assert_eq!(crate::hash_partition::fnv1a_32(canonical.as_bytes()), hash);
            assert_eq!(profile_partition(input).unwrap(), partition);
        }
    }

    #[test]
    fn bad_emails_are_rejected_with_the_pattern_messages() {
        for (input, message) in [
            ("", "emailAddress is required"),
            (" \t\r\n", "emailAddress is required"),
            ("\u{0b}\u{0c}", "emailAddress is required"),
            (
                "josé@example.com",
                "emailAddress must contain only ASCII characters",
            ),
        ] {
            assert_eq!(
                canonical_email(input).unwrap_err(),
                Error::invalid_input(message),
                "{input:?}"
            );
        }
    }

    #[test]
    fn vertical_tab_is_trimmed_and_only_a_to_z_is_lowercased() {
        assert_eq!(canonical_email("\u{0b}A_Z@X.IO\u{0b}").unwrap(), "a_z@x.io");
        assert_eq!(canonical_email("a b@x").unwrap(), "a b@x");
    }

    #[test]
    fn the_collision_vector_shares_one_partition() {
        for index in [
            178, 350, 686, 1115, 1216, 1502, 1810, 1942, 2154, 2745, 3030, 4039,
        ] {
            let email = format!("collision-{index:05}@example.com");
            assert_eq!(profile_partition(&email).unwrap(), "partition-963");
        }
        assert_eq!(
            profile_partition("missing@example.com").unwrap(),
            "partition-494"
        );
    }
}
