//! Claiming a queued job: Running, attempt + 1 (the fencing token), leased to the claimer.
//!
//! In the nests' lane, a job whose key already runs its Parallelism of nests is passed over
//! (this matters when several nodes claim at once; admission already caps queued plus
//! running), and the job picked is the weighted fair share's (DESIGN 4): first the key whose
//! nests used the least nesting time for its weight in the last `FAIR_SHARE_WINDOW_MS`
//! (finished nests, and the time so far of running ones), then the key with the fewest running
//! nests for its weight, then the oldest job. So a key that queued hundreds of nests does not
//! hold back another key's few: those run as soon as slots free, up to that key's
//! Parallelism, until its share of the time catches up. Exports have a lane of their own and
//! no Parallelism: an export of a finished result never waits behind the key's running nests.
//!
//! SQLite has one writer, so there a claim is one `UPDATE ... WHERE id = (pick)`. PostgreSQL
//! lets claimers run side by side: the pick locks its row `FOR UPDATE SKIP LOCKED` (a row
//! another claimer holds is passed over, never waited for), then takes a lock on the job's key
//! and counts the key's running nests again before it writes, so two nodes cannot both start a
//! key's last free slot.

use super::jobs::{Claimed, Lane, NestSizes, FAIR_SHARE_WINDOW_MS};
use super::{Backend, Store, StoreError};
use sqlx::any::AnyRow;
use sqlx::Row;

/// The nest to claim next: `$cols` of it, with the time now in `$now`, the start of the
/// fair-share window in `$since` and the sizes it may have in `$min` and `$max` (placeholders,
/// so each statement numbers them its own way).
macro_rules! next_nest {
    ($cols:literal, $now:literal, $since:literal, $min:literal, $max:literal) => {
        concat!(
            "SELECT ", $cols, " FROM jobs j LEFT JOIN api_keys k ON k.id = j.api_key_id \
             WHERE j.state = 'Queued' AND j.kind <> 'export' AND j.size >= ", $min, " AND j.size < ", $max, " \
             AND (k.id IS NULL OR k.parallelism > \
                 (SELECT COUNT(*) FROM jobs r WHERE r.api_key_id = j.api_key_id \
                  AND r.state = 'Running' AND r.kind <> 'export')) \
             ORDER BY \
                 ((SELECT COALESCE(SUM(", $now, " - d.started_at), 0) FROM jobs d \
                   WHERE d.api_key_id = j.api_key_id AND d.state = 'Running' AND d.kind <> 'export') \
                  + (SELECT COALESCE(SUM(d.completed_at - d.started_at), 0) FROM jobs d \
                   WHERE d.api_key_id = j.api_key_id AND d.completed_at >= ", $since, " AND d.kind <> 'export' \
                   AND d.state IN ('Completed', 'Failed') AND d.started_at IS NOT NULL)) \
                  / COALESCE(k.weight, 1.0), \
                 (SELECT COUNT(*) FROM jobs r WHERE r.api_key_id = j.api_key_id \
                  AND r.state = 'Running' AND r.kind <> 'export') / COALESCE(k.weight, 1.0), \
                 j.created_at, j.id LIMIT 1"
        )
    };
}

/// The claim itself, on a job already picked (PostgreSQL) or picked in the same statement.
macro_rules! claim_set {
    () => {
        "UPDATE jobs SET state = 'Running', attempt = attempt + 1, lease_owner = $1, lease_expires_at = $2, \
         started_at = COALESCE(started_at, $3) "
    };
}

macro_rules! claimed_columns {
    () => {
        " RETURNING id, attempt, kind, request, webhook_uri, size"
    };
}

/// The claim of the oldest queued export, the pick ending with `$lock`.
macro_rules! claim_export {
    ($lock:literal) => {
        concat!(
            claim_set!(),
            "WHERE id = (SELECT j.id FROM jobs j WHERE j.state = 'Queued' AND j.kind = 'export' \
             ORDER BY j.created_at, j.id LIMIT 1",
            $lock,
            ") AND state = 'Queued'",
            claimed_columns!()
        )
    };
}

/// How many times a PostgreSQL claimer picks again when the key of the nest it picked filled
/// its Parallelism meanwhile (another node claimed beside it). Each retry picks afresh.
const PICK_RETRIES: usize = 8;

fn claimed_of(r: AnyRow) -> Claimed {
    Claimed {
        id: r.get("id"),
        attempt: r.get("attempt"),
        kind: r.get("kind"),
        request: r.get("request"),
        webhook_uri: r.get("webhook_uri"),
        size: r.get("size"),
    }
}

impl Store {
    /// Claims a queued job of `lane` for `owner` with a lease of `lease_ms` (see the module
    /// comment for which job); None when the lane has none to give.
    pub async fn claim(
        &self,
        lane: Lane,
        owner: &str,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<Option<Claimed>, StoreError> {
        match (self.backend, lane) {
            (Backend::Sqlite, Lane::Nests(sizes)) => {
                let row = sqlx::query(concat!(
                    claim_set!(),
                    "WHERE id = (",
                    next_nest!("j.id", "$3", "$4", "$5", "$6"),
                    ") AND state = 'Queued'",
                    claimed_columns!()
                ))
                .bind(owner)
                .bind(now_ms + lease_ms)
                .bind(now_ms)
                .bind(now_ms - FAIR_SHARE_WINDOW_MS)
                .bind(sizes.min())
                .bind(sizes.max())
                .fetch_optional(&self.writer)
                .await?;
                Ok(row.map(claimed_of))
            }
            (backend, Lane::Exports) => {
                // the oldest export; PostgreSQL's claimers pass over a row another one holds
                let sql = match backend {
                    Backend::Sqlite => claim_export!(""),
                    Backend::Postgres => claim_export!(" FOR UPDATE SKIP LOCKED"),
                };
                let row = sqlx::query(sql)
                    .bind(owner)
                    .bind(now_ms + lease_ms)
                    .bind(now_ms)
                    .fetch_optional(&self.writer)
                    .await?;
                Ok(row.map(claimed_of))
            }
            (Backend::Postgres, Lane::Nests(sizes)) => {
                for _ in 0..PICK_RETRIES {
                    match self
                        .claim_nest_postgres(sizes, owner, lease_ms, now_ms)
                        .await?
                    {
                        Pick::Claimed(c) => return Ok(Some(c)),
                        Pick::None => return Ok(None),
                        Pick::KeyFilled => continue,
                    }
                }
                Ok(None)
            }
        }
    }

    /// One try at a nest on PostgreSQL: pick and lock a row (skipping rows other claimers
    /// hold), lock its key, and check the key's Parallelism again under that lock.
    async fn claim_nest_postgres(
        &self,
        sizes: NestSizes,
        owner: &str,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<Pick, StoreError> {
        let mut tx = self.writer.begin().await?;
        let picked = sqlx::query(concat!(
            next_nest!("j.id, j.api_key_id", "$1", "$2", "$3", "$4"),
            " FOR UPDATE OF j SKIP LOCKED"
        ))
        .bind(now_ms)
        .bind(now_ms - FAIR_SHARE_WINDOW_MS)
        .bind(sizes.min())
        .bind(sizes.max())
        .fetch_optional(&mut *tx)
        .await?;
        let Some(picked) = picked else {
            tx.commit().await?;
            return Ok(Pick::None);
        };
        let id: String = picked.get("id");
        let api_key_id: String = picked.get("api_key_id");
        // held until commit: a claimer of another nest of this key waits here, then counts
        // this claim among the key's running nests
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(&api_key_id)
            .execute(&mut *tx)
            .await?;
        let room: i64 = sqlx::query(
            "SELECT CASE WHEN k.id IS NULL OR k.parallelism > (SELECT COUNT(*) FROM jobs r \
                 WHERE r.api_key_id = $1 AND r.state = 'Running' AND r.kind <> 'export') \
             THEN 1 ELSE 0 END AS room \
             FROM (SELECT $1 AS key_id) q LEFT JOIN api_keys k ON k.id = q.key_id",
        )
        .bind(&api_key_id)
        .fetch_one(&mut *tx)
        .await?
        .get("room");
        if room == 0 {
            tx.rollback().await?;
            return Ok(Pick::KeyFilled);
        }
        let row = sqlx::query(concat!(
            claim_set!(),
            "WHERE id = $4 AND state = 'Queued'",
            claimed_columns!()
        ))
        .bind(owner)
        .bind(now_ms + lease_ms)
        .bind(now_ms)
        .bind(&id)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Pick::Claimed(claimed_of(row)))
    }
}

/// What one PostgreSQL pick came to.
enum Pick {
    Claimed(Claimed),
    /// No queued nest has room.
    None,
    /// The nest picked belongs to a key whose Parallelism filled meanwhile: pick again.
    KeyFilled,
}
