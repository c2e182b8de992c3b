//! The 2D nesting engine: problem model, raster search (through `kerf-kernels`), exact
//! verification, interim results.

mod axis;
mod common_cut;
pub mod cut_check;
pub mod engine;
pub mod frame;
mod grid;
mod kits;
pub mod model;
pub mod raster;
pub mod rng;
pub mod search;
mod sheets;
pub mod slide;
pub mod verify;

pub use common_cut::cut_length;
pub use engine::{enforce_verified, nest, placed_shapes, CancelHandle, NestError};
pub use kits::assembly_name;
pub use model::*;
