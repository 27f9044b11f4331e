//! [`IdReusePolicy`]: whether `startFlow` may begin a new run under a flow ID that has one
//! (the foreign flow types' start options take it).

/// Whether `startFlow` may begin a new run under a flow ID that already has one, as Dex's
/// `IdReusePolicy` says; a new run replaces the previous one and its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum IdReusePolicy {
    /// A new run once the previous one is stopped (Dex's default).
    AllowIfNotRunning,
    /// A new run only after a run stopped as failed.
    AllowIfPreviousFailed,
    /// Never a second run.
    Disallow,
    /// A running flow is terminated and replaced; a stopped one is replaced too.
    TerminateIfRunning,
}

impl From<IdReusePolicy> for attrflow::IdReusePolicy {
    fn from(policy: IdReusePolicy) -> Self {
        match policy {
            IdReusePolicy::AllowIfNotRunning => attrflow::IdReusePolicy::AllowIfNotRunning,
            IdReusePolicy::AllowIfPreviousFailed => attrflow::IdReusePolicy::AllowIfPreviousFailed,
            IdReusePolicy::Disallow => attrflow::IdReusePolicy::Disallow,
            IdReusePolicy::TerminateIfRunning => attrflow::IdReusePolicy::TerminateIfRunning,
        }
    }
}
