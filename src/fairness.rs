//! Admission by plan (DESIGN 4, "Admission and fairness"): the bookkeeping of an account's
//! nesting minutes per key in the current period, and the rule that admits a nest within the
//! key's floor, from the shared burst pool, as overage, or refuses it.
//!
//! This is pure arithmetic over a `FairnessBook` that the store loads (inside the same
//! transaction that inserts an admitted job, so two submissions cannot both take the last
//! minutes); GET /usage/fairness reports the same book, so what it shows is what admission
//! decides by.

/// The shared burst pool: this fraction of IncludedMinutes, open to any key once over its own
/// floor (DESIGN 4's default).
pub const SHARED_BURST_FRACTION: f64 = 0.2;

/// A key's figures in the current period, in milliseconds of nesting time.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyShare {
    pub api_key_id: String,
    /// Active keys have a floor and a row in /usage/fairness. A revoked or expired key keeps
    /// what it used and reserved this period in the book, with no floor: it all draws on the
    /// burst pool, so revoking a key and making another cannot reset the plan's minutes.
    pub active: bool,
    pub weight: f64,
    /// Nesting time of the key's finished nests (Completed or Failed) in the period.
    pub consumed_ms: i64,
    /// The part of `consumed_ms` used by nests admitted as overage.
    pub overage_ms: i64,
    /// MaxRunTimeSeconds of the key's queued and running nests.
    pub reserved_ms: i64,
    /// The part of `reserved_ms` held by nests admitted as overage.
    pub reserved_overage_ms: i64,
}

impl KeyShare {
    /// Minutes that count against the floor and the burst pool: everything but overage.
    pub fn counted_minutes(&self) -> f64 {
        ((self.consumed_ms - self.overage_ms) + (self.reserved_ms - self.reserved_overage_ms))
            as f64
            / 60_000.0
    }
}

/// An account's plan figures and its active keys' shares, for one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct FairnessBook {
    pub fairness_enabled: bool,
    pub overage_enabled: bool,
    pub included_minutes: f64,
    /// The current period: [start, end), Unix ms.
    pub period: (i64, i64),
    pub now_ms: i64,
    /// One per active key of the account, and one per inactive key that used or reserved
    /// minutes this period.
    pub keys: Vec<KeyShare>,
}

/// How a nest was let in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// Fairness is off on the plan: nothing is gated.
    Ungated,
    /// Within the key's floor.
    Floor,
    /// Over the floor, from the shared burst pool.
    Burst,
    /// Past the floor and the pool, as overage (OverageEnabled).
    Overage,
}

impl Admitted {
    pub fn is_overage(self) -> bool {
        self == Admitted::Overage
    }
}

/// A refusal: the 429's reason, and when trying again may succeed.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub reason: String,
    pub retry_after_s: u64,
}

/// `Sizing` of a /usage/fairness row: the key's pace against its floor, a signal for setting
/// weights (`Over`: raise its weight, `Under`: its weight could go to others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    Under,
    Right,
    Over,
}

impl Sizing {
    pub fn as_str(self) -> &'static str {
        match self {
            Sizing::Under => "Under",
            Sizing::Right => "Right",
            Sizing::Over => "Over",
        }
    }
}

/// A key on pace for less than this share of its floor over the whole period is `Under`.
const UNDER_PACE: f64 = 0.5;
/// The pace is not projected from less than a day of the period (one busy hour on the first
/// morning is not a month's trend).
const MIN_PACE_WINDOW_MS: i64 = 24 * 3600 * 1000;

impl FairnessBook {
    /// SharedBurstMinutes: a fixed fraction of the included minutes.
    pub fn shared_burst_minutes(&self) -> f64 {
        self.included_minutes * SHARED_BURST_FRACTION
    }

    fn total_weight(&self) -> f64 {
        self.keys
            .iter()
            .filter(|k| k.active)
            .map(|k| k.weight)
            .sum()
    }

    /// The active keys: the rows of /usage/fairness.
    pub fn active_keys(&self) -> impl Iterator<Item = &KeyShare> {
        self.keys.iter().filter(|k| k.active)
    }

    /// A key's floor: an active key's weight's share of the included minutes less the burst
    /// pool; none for an inactive key.
    pub fn floor_minutes(&self, key: &KeyShare) -> f64 {
        let total = self.total_weight();
        if total <= 0.0 || !key.active {
            return 0.0;
        }
        (self.included_minutes - self.shared_burst_minutes()) * key.weight / total
    }

    /// Minutes of the burst pool the keys draw (each its counted minutes over its floor).
    pub fn burst_drawn_minutes(&self) -> f64 {
        self.keys
            .iter()
            .map(|k| (k.counted_minutes() - self.floor_minutes(k)).max(0.0))
            .sum()
    }

    /// The key's row's Sizing: `Over` once its consumption passed its floor; else `Under` when
    /// its pace projects less than half the floor by the period's end; else `Right`.
    pub fn sizing(&self, key: &KeyShare) -> Sizing {
        let floor = self.floor_minutes(key);
        let consumed = key.consumed_ms as f64 / 60_000.0;
        if consumed > floor {
            return Sizing::Over;
        }
        let (start, end) = self.period;
        let elapsed = (self.now_ms - start)
            .max(MIN_PACE_WINDOW_MS)
            .min(end - start);
        let projected = consumed * (end - start) as f64 / elapsed as f64;
        if projected < UNDER_PACE * floor {
            Sizing::Under
        } else {
            Sizing::Right
        }
    }

    /// Whether key `api_key_id` may queue a nest that reserves `reserve_ms` (its
    /// MaxRunTimeSeconds). `soonest_release_ms`: when the account's earliest reservation ends
    /// (a running nest's start plus its reservation), if it has any: the Retry-After of a
    /// refusal, else the period's end, when the allowance renews.
    pub fn admit(
        &self,
        api_key_id: &str,
        reserve_ms: i64,
        soonest_release_ms: Option<i64>,
    ) -> Result<Admitted, Refused> {
        if !self.fairness_enabled {
            return Ok(Admitted::Ungated);
        }
        let Some(key) = self.keys.iter().find(|k| k.api_key_id == api_key_id) else {
            // an active key is always in the book; a key that is not cannot draw on the plan
            return Err(Refused {
                reason: "this key has no share of the account's plan".into(),
                retry_after_s: 60,
            });
        };
        let reserve = reserve_ms as f64 / 60_000.0;
        let floor = self.floor_minutes(key);
        let after = key.counted_minutes() + reserve;
        if after <= floor {
            return Ok(Admitted::Floor);
        }
        let own_draw = (key.counted_minutes() - floor).max(0.0);
        let others = self.burst_drawn_minutes() - own_draw;
        let burst = self.shared_burst_minutes();
        if others + (after - floor) <= burst {
            return Ok(Admitted::Burst);
        }
        if self.overage_enabled {
            return Ok(Admitted::Overage);
        }
        let left = (burst - others - own_draw).max(0.0);
        // would the nest pass once every reservation ended (their nests used nothing more)?
        // if not, nothing short of the next period's allowance helps
        let released = FairnessBook {
            keys: self
                .keys
                .iter()
                .map(|k| KeyShare {
                    reserved_ms: 0,
                    reserved_overage_ms: 0,
                    ..k.clone()
                })
                .collect(),
            ..self.clone()
        };
        let can_pass_later =
            soonest_release_ms.is_some() && released.admit(api_key_id, reserve_ms, None).is_ok();
        let wait_ms = if can_pass_later {
            soonest_release_ms.unwrap_or(self.period.1)
        } else {
            self.period.1
        } - self.now_ms;
        Err(Refused {
            reason: format!(
                "fairness: this nest reserves {reserve:.1} min (its MaxRunTimeSeconds), which takes this key past its floor of \
                 {floor:.1} min (it holds {held:.1} min used or reserved this period), and the shared burst pool has \
                 {left:.1} of {burst:.1} min left; overage is not enabled on this plan",
                held = key.counted_minutes(),
            ),
            retry_after_s: (wait_ms.max(1000) as u64).div_ceil(1000),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn share(id: &str, weight: f64, consumed_min: i64, reserved_min: i64) -> KeyShare {
        KeyShare {
            api_key_id: id.into(),
            active: true,
            weight,
            consumed_ms: consumed_min * MIN,
            overage_ms: 0,
            reserved_ms: reserved_min * MIN,
            reserved_overage_ms: 0,
        }
    }

    /// 100 included minutes: a 20-minute pool, 80 minutes of floors shared 1:3.
    fn book(keys: Vec<KeyShare>, overage: bool) -> FairnessBook {
        FairnessBook {
            fairness_enabled: true,
            overage_enabled: overage,
            included_minutes: 100.0,
            period: (0, 30 * 24 * 60 * MIN),
            now_ms: 10 * 24 * 60 * MIN,
            keys,
        }
    }

    #[test]
    fn floors_are_weight_shares_of_the_minutes_outside_the_pool() {
        let b = book(vec![share("a", 1.0, 0, 0), share("b", 3.0, 0, 0)], false);
        assert_eq!(b.shared_burst_minutes(), 20.0);
        assert_eq!(b.floor_minutes(&b.keys[0]), 20.0);
        assert_eq!(b.floor_minutes(&b.keys[1]), 60.0);
    }

    #[test]
    fn a_nest_within_the_floor_then_from_the_pool_then_refused_or_overage() {
        let b = book(vec![share("a", 1.0, 5, 10), share("b", 3.0, 0, 0)], false);
        assert_eq!(b.admit("a", 5 * MIN, None), Ok(Admitted::Floor));
        assert_eq!(b.admit("a", 25 * MIN, None), Ok(Admitted::Burst));
        let refused = b.admit("a", 26 * MIN, Some(b.now_ms + 90_500)).unwrap_err();
        assert!(
            refused.reason.contains("floor of 20.0"),
            "{}",
            refused.reason
        );
        assert!(refused.reason.contains("overage"), "{}", refused.reason);
        // once a's reserved 10 minutes end it would pass: retry then
        assert_eq!(refused.retry_after_s, 91);
        // 41 minutes pass only in the next period, whatever ends before
        let never = b.admit("a", 41 * MIN, Some(b.now_ms + 90_500)).unwrap_err();
        assert_eq!(never.retry_after_s, (20 * 24 * 60 * MIN / 1000) as u64);
        let with_overage = book(b.keys.clone(), true);
        assert_eq!(
            with_overage.admit("a", 26 * MIN, None),
            Ok(Admitted::Overage)
        );
    }

    #[test]
    fn reservations_count_like_consumption_and_the_pool_is_shared() {
        // b is 10 min over its floor of 60 by reservations: 10 of the pool's 20 are drawn
        let b = book(vec![share("a", 1.0, 20, 0), share("b", 3.0, 50, 20)], false);
        assert_eq!(b.burst_drawn_minutes(), 10.0);
        assert_eq!(b.admit("a", 10 * MIN, None), Ok(Admitted::Burst));
        let refused = b.admit("a", 11 * MIN, None).unwrap_err();
        // nothing to wait for but the period's end
        assert_eq!(refused.retry_after_s, (20 * 24 * 60 * MIN / 1000) as u64);
    }

    #[test]
    fn overage_minutes_do_not_count_against_the_floor() {
        let mut a = share("a", 1.0, 30, 0);
        a.overage_ms = 30 * MIN;
        let b = book(vec![a, share("b", 3.0, 0, 0)], false);
        assert_eq!(b.admit("a", 20 * MIN, None), Ok(Admitted::Floor));
    }

    #[test]
    fn a_revoked_keys_minutes_stay_in_the_book_and_draw_on_the_pool() {
        // a used its floor and the whole pool, was revoked, and c replaced it
        let mut a = share("a", 1.0, 40, 0);
        a.active = false;
        let b = book(vec![a, share("b", 3.0, 0, 0), share("c", 1.0, 0, 0)], false);
        assert_eq!(b.active_keys().count(), 2);
        assert_eq!(b.floor_minutes(&b.keys[0]), 0.0);
        assert_eq!(
            b.floor_minutes(&b.keys[2]),
            20.0,
            "floors share the active weights"
        );
        assert_eq!(b.burst_drawn_minutes(), 40.0);
        assert_eq!(b.admit("c", 20 * MIN, None), Ok(Admitted::Floor));
        assert!(b.admit("c", 21 * MIN, None).is_err(), "the pool is gone");
    }

    #[test]
    fn without_fairness_nothing_is_gated() {
        let mut b = book(vec![share("a", 1.0, 1000, 0)], false);
        b.fairness_enabled = false;
        assert_eq!(b.admit("a", 60 * MIN, None), Ok(Admitted::Ungated));
    }

    #[test]
    fn sizing_reads_the_pace_against_the_floor() {
        // a third of the period gone; floors 20 and 60
        let b = book(vec![share("a", 1.0, 21, 0), share("b", 3.0, 5, 0)], false);
        assert_eq!(b.sizing(&b.keys[0]), Sizing::Over);
        assert_eq!(b.sizing(&b.keys[1]), Sizing::Under); // on pace for 15 of 60
        let c = book(vec![share("a", 1.0, 0, 0), share("b", 3.0, 15, 0)], false);
        assert_eq!(c.sizing(&c.keys[1]), Sizing::Right); // on pace for 45 of 60
    }
}
