//! The per-key request rate limit (DESIGN 4, Limits): a token bucket per key that holds a
//! minute's worth of requests and refills continuously, so a key may burst up to its limit and
//! then goes at the limit's pace; past it a request is 429 with Retry-After.
//!
//! The buckets live in the serving process: with several nodes each node limits on its own
//! (a key's ceiling is the limit times the nodes it reaches). Hand-written rather than a
//! crate: it is one small struct, and the crates for it bring clocks and maps this needs none
//! of.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Requests a key may make per minute (0: unlimited).
pub struct KeyRateLimit {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl KeyRateLimit {
    pub fn new(per_minute: u32) -> KeyRateLimit {
        KeyRateLimit {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Takes one request of key `id` at `now`: Ok, or Err(seconds until the next one is
    /// allowed).
    pub fn take(&self, id: &str, now: Instant) -> Result<(), u64> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        // a poisoned lock only means another request panicked mid-update: the counts are
        // still usable
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(id.to_string()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * per_second).min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / per_second).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_key_bursts_to_its_limit_then_waits_for_the_refill() {
        let limit = KeyRateLimit::new(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limit.take("a", t0), Ok(()));
        }
        // one request per 20 s refills
        assert_eq!(limit.take("a", t0), Err(20));
        assert_eq!(
            limit.take("b", t0),
            Ok(()),
            "keys have buckets of their own"
        );
        assert_eq!(limit.take("a", t0 + Duration::from_secs(15)), Err(5));
        assert_eq!(limit.take("a", t0 + Duration::from_secs(20)), Ok(()));
    }

    #[test]
    fn zero_is_unlimited() {
        let limit = KeyRateLimit::new(0);
        let t0 = Instant::now();
        assert!((0..1000).all(|_| limit.take("a", t0).is_ok()));
    }
}
