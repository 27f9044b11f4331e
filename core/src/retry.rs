//! Retrying calls that failed only because another call held a lock: one bounded,
//! jittered backoff policy for every caller (Rust, the bindings, the HTTP service).
//!
//! attrflow's locks never queue: a call that finds a lock held fails at once with a
//! retryable [`Error::LockConflict`]. A [`RetryPolicy`] calls again after a pause drawn at
//! random below a bound that doubles from `first_delay` up to `max_delay` ("full jitter",
//! so callers that collided once do not collide again in lock step), and gives up after
//! `max_attempts` calls or once the next call would start after `budget`.
//!
//! ```
//! use std::time::Duration;
//! use attrflow::retry::RetryPolicy;
//! use attrflow::Error;
//! let policy = RetryPolicy::DEFAULT.with_max_attempts(3)?;
//! let mut calls = 0;
//! let result: Result<u32, Error> = policy.run(|| {
//!     calls += 1;
//!     if calls < 3 { Err(Error::LockConflict("held".into())) } else { Ok(calls) }
//! });
//! assert_eq!(result, Ok(3));
//! assert_eq!(policy.delay_bound(1), Duration::from_millis(2));
//! # Ok::<(), Error>(())
//! ```

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How often, and for how long, a call that met a held lock is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    first_delay: Duration,
    max_delay: Duration,
    budget: Duration,
}

impl RetryPolicy {
    /// The policy of the typed flow clients: up to 100 calls, pauses below 1 ms doubling up
    /// to 50 ms, no new call after 5 s.
    pub const DEFAULT: RetryPolicy = RetryPolicy {
        max_attempts: 100,
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
        budget: Duration::from_secs(5),
    };

    /// The policy that never retries: one call, whose lock conflict is returned at once.
    /// A client given it (`with_retry_policy(RetryPolicy::NONE)`) calls each RPC once.
    pub const NONE: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
        budget: Duration::ZERO,
    };

    /// A policy; `max_attempts` counts the first call too (at least 1), and
    /// `0 < first_delay <= max_delay`, else [`Error::InvalidInput`].
    pub fn new(
        max_attempts: u32,
        first_delay: Duration,
        max_delay: Duration,
        budget: Duration,
    ) -> Result<Self> {
        if max_attempts == 0 {
            return Err(Error::invalid_input(
                "a retry policy needs at least 1 attempt",
            ));
        }
        if first_delay.is_zero() || max_delay < first_delay {
            return Err(Error::invalid_input(format!(
                "a retry policy needs 0 < first delay <= max delay, got {first_delay:?} and {max_delay:?}"
            )));
        }
        Ok(RetryPolicy {
            max_attempts,
            first_delay,
            max_delay,
            budget,
        })
    }

    /// This policy with another number of attempts (at least 1).
    pub fn with_max_attempts(self, max_attempts: u32) -> Result<Self> {
        Self::new(max_attempts, self.first_delay, self.max_delay, self.budget)
    }

    /// The most calls made, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The bound of the first pause.
    pub fn first_delay(&self) -> Duration {
        self.first_delay
    }

    /// The bound of any pause.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The time after which no new call starts.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// The bound of the pause before retry `retry` (counted from 0): `first_delay`
    /// doubled `retry` times, at most `max_delay`.
    pub fn delay_bound(&self, retry: u32) -> Duration {
        self.first_delay
            .checked_mul(1u32 << retry.min(31))
            .map_or(self.max_delay, |bound| bound.min(self.max_delay))
    }

    /// The pause before retry `retry` (counted from 0) after `elapsed` since the first
    /// call, drawn at random below [`RetryPolicy::delay_bound`]; `None` when the policy
    /// gives up: the attempts are spent, or the next call would start after the budget.
    pub fn pause_before(&self, retry: u32, elapsed: Duration) -> Option<Duration> {
        if retry.saturating_add(1) >= self.max_attempts {
            return None;
        }
        let bound = self.delay_bound(retry);
        let nanos = u64::try_from(bound.as_nanos()).unwrap_or(u64::MAX);
        let pause = Duration::from_nanos(fastrand::u64(0..=nanos));
        (elapsed.saturating_add(pause) <= self.budget).then_some(pause)
    }

    /// Calls `call` until it returns anything but [`Error::LockConflict`], or the policy
    /// gives up, which returns the last lock conflict.
    pub fn run<T>(&self, mut call: impl FnMut() -> Result<T>) -> Result<T> {
        let start = Instant::now();
        let mut retry = 0;
        loop {
            match call() {
                Err(Error::LockConflict(message)) => {
                    match self.pause_before(retry, start.elapsed()) {
                        Some(pause) => std::thread::sleep(pause),
                        None => return Err(Error::LockConflict(message)),
                    }
                    retry += 1;
                }
                other => return other,
            }
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_only_lock_conflicts_and_stops_after_the_attempts() {
        let policy = RetryPolicy::DEFAULT.with_max_attempts(5).unwrap();
        let mut calls = 0;
        let result = policy.run(|| {
            calls += 1;
            if calls < 3 {
                Err(Error::LockConflict("held".into()))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(result, Ok(3));

        let mut calls = 0;
        let result: Result<()> = policy.run(|| {
            calls += 1;
            Err(Error::invalid_input("bad"))
        });
        assert_eq!(result, Err(Error::invalid_input("bad")));
        assert_eq!(calls, 1);

        let mut calls = 0;
        let result: Result<()> = policy.with_max_attempts(2).unwrap().run(|| {
            calls += 1;
            Err(Error::LockConflict(format!("held {calls}")))
        });
        assert_eq!(result, Err(Error::LockConflict("held 2".into())));
    }

    #[test]
    fn pauses_are_bounded_by_the_doubling_delay_and_the_budget() {
        let policy = RetryPolicy::new(
            1_000,
            Duration::from_millis(5),
            Duration::from_millis(250),
            Duration::from_secs(2),
        )
        .unwrap();
        assert_eq!(policy.delay_bound(0), Duration::from_millis(5));
        assert_eq!(policy.delay_bound(3), Duration::from_millis(40));
        assert_eq!(policy.delay_bound(60), Duration::from_millis(250));
        for retry in 0..20 {
            let pause = policy.pause_before(retry, Duration::ZERO).unwrap();
            assert!(pause <= policy.delay_bound(retry));
        }
        assert_eq!(policy.pause_before(0, Duration::from_secs(3)), None);
        assert_eq!(
            policy
                .with_max_attempts(1)
                .unwrap()
                .pause_before(0, Duration::ZERO),
            None
        );
    }

    #[test]
    fn bad_policies_are_refused() {
        assert!(RetryPolicy::DEFAULT.with_max_attempts(0).is_err());
        let inverted = RetryPolicy::new(
            3,
            Duration::from_millis(10),
            Duration::from_millis(1),
            Duration::ZERO,
        );
        assert!(matches!(inverted, Err(Error::InvalidInput(_))));
    }
}
