//! The customer directory (`CustomerDirectoryFlow`) on [`Store`]: profiles keyed by
//! canonical email address in hash-partitioned buckets.

use attrflow::flows::customer_directory as core;
use attrflow::flows::customer_directory::CustomerDirectory;

use crate::error::Result;
use crate::store::Store;

/// One customer's profile, keyed by its canonical email address.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct CustomerProfile {
    /// The email address; stored and returned in canonical form (trimmed, lowercased).
    pub email_address: String,
    /// The customer's full name; required.
    pub full_name: String,
    /// The customer's company; required.
    pub company_name: String,
    /// The customer's tier (`gold`, say); required.
    pub customer_tier: String,
}

impl From<CustomerProfile> for core::CustomerProfile {
    fn from(p: CustomerProfile) -> Self {
        core::CustomerProfile {
            email_address: p.email_address,
            full_name: p.full_name,
            company_name: p.company_name,
            customer_tier: p.customer_tier,
        }
    }
}

impl From<core::CustomerProfile> for CustomerProfile {
    fn from(p: core::CustomerProfile) -> Self {
        CustomerProfile {
            email_address: p.email_address,
            full_name: p.full_name,
            company_name: p.company_name,
            customer_tier: p.customer_tier,
        }
    }
}

/// The flow ID the customer-directory pattern uses, `customer-directory`.
#[uniffi::export]
pub fn customer_directory_flow_id() -> String {
    core::FLOW_ID.to_owned()
}

/// The bucket instance (`partition-000` … `partition-999`) holding the profile of
/// `email_address`, canonicalized first; `InvalidInput` for an address that is empty or
/// not ASCII.
#[uniffi::export]
pub fn customer_profile_partition(email_address: String) -> Result<String> {
    Ok(core::profile_partition(&email_address)?)
}

#[uniffi::export]
impl Store {
    /// Starts the customer directory `flow_id`, or returns the running one's run ID.
    pub fn start_customer_directory(&self, flow_id: String) -> Result<String> {
        Ok(CustomerDirectory::new(&self.runtime, &flow_id).start()?)
    }

    /// Saves a profile under its canonical email once (`UpsertCustomerProfile`) and returns
    /// it as stored; a concurrent upsert to the same bucket fails with `LockConflict`, to
    /// be retried.
    pub fn upsert_customer_profile(
        &self,
        flow_id: String,
        profile: CustomerProfile,
    ) -> Result<CustomerProfile> {
        let directory = CustomerDirectory::new(&self.runtime, &flow_id);
        Ok(directory.upsert(&profile.into())?.into())
    }

    /// The profile of `email_address` (any case, surrounding whitespace allowed);
    /// `RecordNotFound` when none is stored.
    pub fn get_customer_profile(
        &self,
        flow_id: String,
        email_address: String,
    ) -> Result<CustomerProfile> {
        let directory = CustomerDirectory::new(&self.runtime, &flow_id);
        Ok(directory.get(&email_address)?.into())
    }

    /// Deletes the profile of `email_address` (`DeleteCustomerProfile`) and returns it;
    /// `RecordNotFound` when none is stored, `LockConflict` (to be retried) when a
    /// concurrent call holds its bucket.
    pub fn delete_customer_profile(
        &self,
        flow_id: String,
        email_address: String,
    ) -> Result<CustomerProfile> {
        let directory = CustomerDirectory::new(&self.runtime, &flow_id);
        Ok(directory.delete(&email_address)?.into())
    }
}
