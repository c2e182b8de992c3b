//! kerf: a nesting engine and service. This crate holds the engines (geometry, nest2d) and the CLI.

pub mod geometry;
