//! kerf-kernels: the raster evaluations of kerf's 2D search behind one interface.
//!
//! Every backend computes the same integers for the same input: overlap counts are cell counts,
//! weights are fixed point (`WEIGHT_ONE`), line sums are u64, whole-map sums u32. The CPU backend
//! is the reference; the wgpu backend (`gpu`, WGSL in `shaders/`) runs the whole-map evaluations
//! on the GPU and gives the same answers; `select` picks one (`KERF_COMPUTE`).

pub mod cpu;
pub mod gpu;
pub mod lines;
pub mod occupancy;
pub mod raster;
pub mod select;
pub mod sheet;
pub mod weighted;

pub use cpu::CpuEvaluator;
pub use gpu::GpuEvaluator;
pub use lines::{best_of, LineBest, Mover, OverlapMeasure, Shape};
pub use occupancy::Occupancy;
pub use raster::{pair_overlap, PartRaster, Placed, Run, WEIGHT_ONE};
pub use select::{choose, Compute};
pub use sheet::{fit_bounds, Candidate, SheetSat};

/// Which coordinate a line scan varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
}

/// An inclusive rectangle of candidate positions (cell offsets of the raster's origin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub x_lo: i32,
    pub x_hi: i32,
    pub y_lo: i32,
    pub y_hi: i32,
}

/// The raster evaluations the 2D search needs.
pub trait Evaluator: Send + Sync {
    /// Backend and adapter, for logs and runtime reports ("cpu", "gpu: NAME").
    fn name(&self) -> String;

    /// Why the accelerator this backend drives stopped working (device lost, a failed
    /// dispatch), once it has: its answers then come from the CPU. None for a backend that
    /// drives none, or while it works.
    fn adapter_failure(&self) -> Option<String> {
        None
    }

    /// How many calls the accelerator itself answered (the rest went to a CPU): what the
    /// benchmarks print to show whether a GPU did the work. 0 for a backend that drives none.
    fn accelerated_calls(&self) -> u64 {
        0
    }

    /// How the backend chose between its accelerator and the CPU, as it measured it (one line
    /// per kind and size of call), for the benchmarks; empty for a backend that drives none.
    fn routing_report(&self) -> String {
        String::new()
    }

    /// The first position in (x, then y) order within `bounds` where `part` covers no set cell of
    /// `occ`; cells outside the grid count as set.
    fn first_fit(&self, occ: &Occupancy, part: &PartRaster, bounds: Bounds) -> Option<(i32, i32)>;

    /// Weighted overlap of `part` with `others` at every position along a line: with `Axis::X`,
    /// positions (x, fixed) for x in range.0..=range.1; with `Axis::Y`, (fixed, y).
    /// Each other part contributes shared cells x its weight.
    fn overlap_line(
        &self,
        part: &PartRaster,
        axis: Axis,
        fixed: i32,
        range: (i32, i32),
        others: &[Placed],
    ) -> Vec<u64>;

    /// `first_fit` for several rasters at once (one dispatch on the GPU): for each candidate,
    /// the first position in (x, then y) order within its bounds where its raster's box lies
    /// in the grid and covers no set cell.
    fn first_fits(&self, occ: &Occupancy, candidates: &[Candidate]) -> Vec<Option<(i32, i32)>> {
        candidates
            .iter()
            .map(|c| self.first_fit(occ, c.raster, c.bounds))
            .collect()
    }

    /// For each candidate, the number of set cells of `occ` it covers at every position of its
    /// bounds (cells outside the grid count as set), row-major (y outer, x inner). (The engine
    /// no longer calls it: an inserted part's start is found by line scans, `best_on_lines`,
    /// far cheaper on a large sheet; `kerf bench kernels` still measures it.)
    fn occupancy_overlap_maps(&self, occ: &Occupancy, candidates: &[Candidate]) -> Vec<Vec<u32>>;

    /// For each candidate, its weighted overlap with `others` (sum of weight x shared cells) at
    /// every position of its bounds, row-major (y outer, x inner): `overlap_line` for whole
    /// rectangles of positions and many rasters at once.
    fn weighted_overlap_maps(&self, others: &[Placed], candidates: &[Candidate]) -> Vec<Vec<u64>>;

    /// For each mover, the best position on each of its lines against `scene`, weighed by the
    /// mover's own weights (what `weighted_overlap_maps` and `best_of` give line by line; one
    /// GPU round trip for the whole batch). Every line is one row or one column of positions,
    /// and every mover has a weight for each shape of the scene.
    fn best_on_lines(&self, scene: &[Shape], movers: &[Mover]) -> Vec<Vec<Option<LineBest>>>;

    /// Weighted overlap map over a rectangle of positions, row-major (y outer, x inner).
    fn overlap_map(&self, part: &PartRaster, bounds: Bounds, others: &[Placed]) -> Vec<u64> {
        let mut out = Vec::new();
        for y in bounds.y_lo..=bounds.y_hi {
            out.extend(self.overlap_line(part, Axis::X, y, (bounds.x_lo, bounds.x_hi), others));
        }
        out
    }
}
