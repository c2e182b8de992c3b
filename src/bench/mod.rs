//! Benchmarks run from the CLI (`kerf bench ...`); they print tables, never assert times.

pub mod bpp;
pub mod bpp_gen;
pub mod commoncut;
pub mod esicup;
pub mod exports;
pub mod fairness;
pub mod hub;
pub mod kernels;
pub mod quote;
pub mod raster;
pub mod served;
pub mod sheets;

/// The `q` quantile of sorted `v` (nearest rank); NaN when empty.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}
