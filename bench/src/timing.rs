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

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
