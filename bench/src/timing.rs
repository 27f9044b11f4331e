//! Timing loops: per-operation latencies and operations per second.

use std::time::Instant;

use crate::BenchResult;

/// The latency of each of `count` calls of `op`, in microseconds.
pub fn latencies_us(
    count: u64,
    mut op: impl FnMut(u64) -> BenchResult<()>,
) -> BenchResult<Vec<f64>> {
    let mut samples = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for index in 0..count {
        let started = Instant::now();
        op(index)?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(samples)
}

/// Calls per second over `count` back-to-back calls of `op`.
pub fn calls_per_second(
    count: u64,
    mut op: impl FnMut(u64) -> BenchResult<()>,
) -> BenchResult<f64> {
    let started = Instant::now();
    for index in 0..count {
        op(index)?;
    }
    Ok(count as f64 / started.elapsed().as_secs_f64())
}

/// The median of `samples` (0 for none).
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The `q` quantile (0 to 1) of `samples`, by nearest rank (0 for none).
pub fn percentile(samples: &[f64], q: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::{median, percentile};

    #[test]
    fn percentiles_by_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&samples, 0.5), 50.0);
        assert_eq!(percentile(&samples, 0.99), 99.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
