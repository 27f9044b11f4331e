//! [`RetryPolicy`]: how often, and for how long, a client's calls retry a lock conflict,
//! and the core's policy it stands for.

use std::time::Duration;

use attrflow::retry::RetryPolicy as CorePolicy;

use crate::error::Result;

/// How often, and for how long, a client's calls retry a lock conflict: at most
/// `max_attempts` calls, pauses drawn at random below a bound that doubles from
/// `first_delay_ms` to `max_delay_ms`, and no new call after `budget_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct RetryPolicy {
    /// The most calls, the first included; at least 1.
    pub max_attempts: u32,
    /// The bound of the first pause, in milliseconds; at least 1.
    pub first_delay_ms: u64,
    /// The bound of any pause, in milliseconds; at least `first_delay_ms`.
    pub max_delay_ms: u64,
    /// The time after which no new call starts, in milliseconds.
    pub budget_ms: u64,
}

/// The core's default policy: 100 attempts, pauses below 1 ms doubling to 50 ms, 5 s.
#[uniffi::export]
pub fn default_retry_policy() -> RetryPolicy {
    let policy = CorePolicy::DEFAULT;
    RetryPolicy {
        max_attempts: policy.max_attempts(),
        first_delay_ms: millis(policy.first_delay()),
        max_delay_ms: millis(policy.max_delay()),
        budget_ms: millis(policy.budget()),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The core policy `policy` describes (checked), or the default.
pub(crate) fn core_policy(policy: Option<RetryPolicy>) -> Result<CorePolicy> {
    let Some(policy) = policy else {
        return Ok(CorePolicy::DEFAULT);
    };
    Ok(CorePolicy::new(
        policy.max_attempts,
        Duration::from_millis(policy.first_delay_ms),
        Duration::from_millis(policy.max_delay_ms),
        Duration::from_millis(policy.budget_ms),
    )?)
}
