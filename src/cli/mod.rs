//! Command-line front ends: `nest` (one nest from files, no server), `serve` (the service),
//! `worker` (a node that runs jobs), `nodes` (the live nodes), `keys` and `accounts` (keys
//! and accounts on the store).

pub mod accounts;
pub mod keys;
pub mod nest;
pub mod nest1d;
pub mod nodes;
pub mod serve;

/// The evaluation backend from a `--compute` value, else `KERF_COMPUTE`, else auto.
pub fn choose_compute(
    flag: Option<&str>,
) -> anyhow::Result<std::sync::Arc<dyn kerf_kernels::Evaluator>> {
    kerf_kernels::choose(compute_choice(flag)?).map_err(anyhow::Error::msg)
}

/// What `--compute` (or, without it, KERF_COMPUTE) asks for.
pub fn compute_choice(flag: Option<&str>) -> anyhow::Result<kerf_kernels::Compute> {
    match flag {
        Some(f) => f.parse().map_err(|e| anyhow::anyhow!("--compute: {e}")),
        None => kerf_kernels::Compute::from_env().map_err(anyhow::Error::msg),
    }
}

/// Runs a store command's async body to its end (the store CLIs run no server).
pub(crate) fn block_on<T>(
    f: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(f)
}

/// Opens the store of `--database` for a store command.
pub(crate) async fn open_store(database: &str) -> anyhow::Result<crate::store::Store> {
    crate::store::Store::open(database)
        .await
        .map_err(anyhow::Error::msg)
}

/// An RFC 3339 option (`--FLAG`) as Unix milliseconds.
pub(crate) fn timestamp(flag: &str, s: &str) -> anyhow::Result<i64> {
    use anyhow::Context;
    Ok(chrono::DateTime::parse_from_rfc3339(s.trim())
        .with_context(|| {
            format!("--{flag} '{s}': not an RFC 3339 timestamp (for example 2027-01-31T00:00:00Z)")
        })?
        .timestamp_millis())
}
