//! Retrying calls that failed only because another call held a lock.

use std::time::Duration;

use crate::error::{Error, Result};

/// Calls `call` until it succeeds, fails with anything but a lock conflict, or has been
/// tried `attempts` times. Pauses between tries grow from 1 ms to at most 50 ms, with
/// jitter so that competing callers spread out.
pub fn retry_on_conflict<T>(attempts: u32, mut call: impl FnMut() -> Result<T>) -> Result<T> {
    let attempts = attempts.max(1);
    let mut pause = Duration::from_millis(1);
    let mut last = None;
    for attempt in 0..attempts {
        match call() {
            Err(Error::LockConflict(message)) => {
                last = Some(message);
                if attempt + 1 < attempts {
                    std::thread::sleep(jitter(pause));
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
            }
            other => return other,
        }
    }
    Err(Error::LockConflict(last.unwrap_or_default()))
}

/// A pause between half and all of `pause`, without a random-number dependency.
fn jitter(pause: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let span = pause.as_micros().max(1) as u64;
    Duration::from_micros(span / 2 + u64::from(nanos) % (span / 2 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_only_lock_conflicts() {
        let mut calls = 0;
        let result = retry_on_conflict(5, || {
            calls += 1;
            if calls < 3 {
                Err(Error::LockConflict("held".into()))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(result, Ok(3));

        let mut calls = 0;
        let result: Result<()> = retry_on_conflict(5, || {
            calls += 1;
            Err(Error::invalid_input("bad"))
        });
        assert_eq!(result, Err(Error::invalid_input("bad")));
        assert_eq!(calls, 1);

        let result: Result<()> = retry_on_conflict(2, || Err(Error::LockConflict("held".into())));
        assert_eq!(result, Err(Error::LockConflict("held".into())));
    }
}
