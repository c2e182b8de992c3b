//! Command-line front ends of the engines (no server).

pub mod nest;
