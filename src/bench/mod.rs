//! Benchmarks run from the CLI (`kerf bench ...`); they print tables, never assert times.

pub mod bpp;
pub mod bpp_gen;
pub mod esicup;
pub mod exports;
pub mod fairness;
pub mod kernels;
pub mod sheets;
