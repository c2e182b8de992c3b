//! Command-line front ends: `nest` (one nest from files, no server), `serve` (the service),
//! `keys` and `accounts` (keys and accounts on the store).

pub mod accounts;
pub mod keys;
pub mod nest;
pub mod nest1d;
pub mod serve;

/// The evaluation backend from a `--compute` value, else `KERF_COMPUTE`, else auto.
pub fn choose_compute(
    flag: Option<&str>,
) -> anyhow::Result<std::sync::Arc<dyn kerf_kernels::Evaluator>> {
    let choice = match flag {
        Some(f) => f.parse().map_err(|e| anyhow::anyhow!("--compute: {e}"))?,
        None => kerf_kernels::Compute::from_env().map_err(anyhow::Error::msg)?,
    };
    kerf_kernels::choose(choice).map_err(anyhow::Error::msg)
}
