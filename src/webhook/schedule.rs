//! When a failed delivery is tried again (DESIGN 4): after 5 s, 30 s, 2 min, 10 min, 30 min,
//! 1 h, 3 h, 6 h and 12 h, each with up to 10 % jitter so retries of many deliveries spread out;
//! after the last one the delivery gives up.

/// Delays before the 2nd, 3rd, ... attempt, in seconds.
pub const RETRY_DELAYS_S: [u64; 9] = [5, 30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600];

/// How long to wait after `failed_attempts` failures (1 = the first attempt failed), or None
/// when the delivery should give up. `jitter_unit` in [0, 1) picks the jitter.
pub fn next_delay_ms(failed_attempts: u32, jitter_unit: f64) -> Option<u64> {
    RetrySchedule::default().next_delay_ms(failed_attempts, jitter_unit)
}

/// A retry schedule: the design's by default; operators (and tests) may set their own with
/// `kerf serve --webhook-retry-delays 5,30,120`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetrySchedule {
    delays_s: Vec<u64>,
}

impl Default for RetrySchedule {
    fn default() -> Self {
        RetrySchedule {
            delays_s: RETRY_DELAYS_S.to_vec(),
        }
    }
}

impl RetrySchedule {
    /// Comma-separated delays in seconds (an empty list: one attempt, no retry).
    pub fn parse(s: &str) -> Result<RetrySchedule, String> {
        let delays_s = s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<u64>()
                    .map_err(|_| format!("'{p}' is not a whole number of seconds"))
            })
            .collect::<Result<_, _>>()?;
        Ok(RetrySchedule { delays_s })
    }

    /// As `next_delay_ms`, on this schedule.
    pub fn next_delay_ms(&self, failed_attempts: u32, jitter_unit: f64) -> Option<u64> {
        let base = *self
            .delays_s
            .get((failed_attempts as usize).checked_sub(1)?)?
            * 1000;
        let jitter = (base as f64 * 0.1 * jitter_unit.clamp(0.0, 0.999_999)) as u64;
        Some(base + jitter)
    }
}
