//! The customer directory (`CustomerDirectoryFlow`) client object: profiles keyed by
//! canonical email address in hash-partitioned buckets.

use attrflow::flows::customer_directory as core;
use attrflow::flows::customer_directory::CustomerDirectory as CoreDirectory;

use crate::client_target::Target;
use crate::error::Result;

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

/// One customer directory (`CustomerDirectoryFlow`) of a store,
/// `store.customerDirectory(flowId)`: every call retries lock conflicts by the policy the
/// directory was made with.
#[derive(Debug, uniffi::Object)]
pub struct CustomerDirectory(pub(crate) Target);

impl CustomerDirectory {
    /// The core's client of this directory, with its policy.
    fn core(&self) -> CoreDirectory<'_> {
        CoreDirectory::new(&self.0.store.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
    }
}

#[uniffi::export]
impl CustomerDirectory {
    /// Starts the directory, or returns the running one's run ID.
    pub fn start(&self) -> Result<String> {
        Ok(self.core().start()?)
    }

    /// Saves a profile under its canonical email (`UpsertCustomerProfile`) and returns it
    /// as stored.
    pub fn upsert(&self, profile: CustomerProfile) -> Result<CustomerProfile> {
        Ok(self.core().upsert(&profile.into())?.into())
    }

    /// The profile of `email_address` (any case, surrounding whitespace allowed);
    /// `RecordNotFound` when none is stored.
    pub fn get(&self, email_address: String) -> Result<CustomerProfile> {
        Ok(self.core().get(&email_address)?.into())
    }

    /// Deletes the profile of `email_address` (`DeleteCustomerProfile`) and returns it;
    /// `RecordNotFound` when none is stored.
    pub fn delete(&self, email_address: String) -> Result<CustomerProfile> {
        Ok(self.core().delete(&email_address)?.into())
    }
}
