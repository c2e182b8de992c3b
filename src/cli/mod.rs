//! Command-line front ends: `nest` (one nest from files, no server), `serve` (the service),
//! `keys` (key management on the store).

pub mod keys;
pub mod nest;
pub mod serve;
