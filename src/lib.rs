//! kerf: a nesting engine and service. This crate holds the engines (geometry, nest2d, quote), the
//! service (api, jobs, store, webhook, wire), the exports, the benchmarks and the CLI front
//! ends; `kerf-kernels` holds the raster evaluations.

pub mod api;
pub mod bench;
pub mod cancel;
pub mod cli;
pub mod cluster;
pub mod export;
pub mod fairness;
pub mod geometry;
pub mod jobs;
pub mod lenient;
pub mod nest1d;
pub mod nest2d;
pub mod quote;
pub mod store;
pub mod webhook;
pub mod wire;
