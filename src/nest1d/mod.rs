//! The 1D cutting-stock solver (DESIGN 3): pieces of given lengths and quantities on stock
//! lengths, with kerf and trims, minimising bars, waste or cost, with a proof of optimality
//! where the lower bound is met.

pub mod bounds;
pub mod branch;
pub mod heuristic;
pub mod instance;
pub mod knapsack;
pub mod lu;
pub mod master;
pub mod model;
pub mod solve;

pub use model::*;
pub use solve::{solve, solve_unless_cancelled};
