//! The GPU's batched line scans (`Evaluator::best_on_lines`): `shaders/lines_scatter.wgsl`
//! adds every run pair's trapezoid corners into a difference array per line, and
//! `shaders/lines_best.wgsl` integrates each array twice and finds its least value and first
//! position. The same integers as the CPU's `scan_line` followed by `best_of`.

use super::{GpuError, GpuEvaluator, Scratch};
use crate::lines::{LineBest, Mover, Shape};
use crate::raster::PartRaster;
use std::collections::HashMap;

/// A line job as the kernels read it (`Job` in shaders/lines_common.wgsl).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuLineJob {
    raster: u32,
    mover: u32,
    along_x: u32,
    fixed: i32,
    lo: i32,
    hi: i32,
    at: u32,
    _pad: u32,
}

/// Where a raster's runs lie (`Raster` in shaders/lines_common.wgsl).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuRaster {
    width: u32,
    height: u32,
    rows: u32,
    cols: u32,
}

/// `Dims` in shaders/lines_common.wgsl: counts, and where each section of the one input buffer
/// begins (in words).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LinesDims {
    jobs: u32,
    shapes: u32,
    jobs_at: u32,
    rasters_at: u32,
    starts_at: u32,
    runs_at: u32,
    shapes_at: u32,
    weights_at: u32,
}

/// Jobs per dispatch row: the job index is split over the grid's y and z (at most 65,535 each).
const JOBS_PER_ROW: u32 = super::MAX_GROUPS;
const LANES_PER_GROUP: u32 = 64;

/// The rasters of one call, each once: their lane starts and runs, flattened.
#[derive(Default)]
struct RasterPool {
    index: HashMap<*const PartRaster, u32>,
    rasters: Vec<GpuRaster>,
    starts: Vec<u32>,
    runs: Vec<[u32; 2]>,
}

impl RasterPool {
    fn add(&mut self, r: &PartRaster) -> u32 {
        if let Some(&i) = self.index.get(&(r as *const PartRaster)) {
            return i;
        }
        let i = self.rasters.len() as u32;
        let rows = self.starts.len() as u32;
        for lane in 0..r.height() {
            self.starts.push(self.runs.len() as u32);
            self.runs.extend_from_slice(r.row(lane));
        }
        self.starts.push(self.runs.len() as u32);
        let cols = self.starts.len() as u32;
        for lane in 0..r.width() {
            self.starts.push(self.runs.len() as u32);
            self.runs.extend_from_slice(r.col(lane));
        }
        self.starts.push(self.runs.len() as u32);
        self.rasters.push(GpuRaster {
            width: r.width(),
            height: r.height(),
            rows,
            cols,
        });
        self.index.insert(r as *const PartRaster, i);
        i
    }
}

impl GpuEvaluator {
    pub(super) fn gpu_best_on_lines(
        &self,
        scene: &[Shape],
        movers: &[Mover],
    ) -> Result<Vec<Vec<Option<LineBest>>>, GpuError> {
        let mut pool = RasterPool::default();
        let shapes: Vec<[i32; 3]> = scene
            .iter()
            .map(|s| [pool.add(s.raster) as i32, s.x, s.y])
            .collect();
        let mut weights: Vec<u32> = Vec::with_capacity(movers.len() * scene.len());
        let mut jobs: Vec<GpuLineJob> = Vec::new();
        // per mover and line: the job's index, or None for a line without positions
        let mut slots: Vec<Vec<Option<usize>>> = Vec::with_capacity(movers.len());
        let mut entries: u64 = 0;
        let mut max_lanes = 1;
        for (m, mover) in movers.iter().enumerate() {
            // (a mover without a weight for every shape is the caller's mistake: the CPU twin
            // answers it as the CPU backend does, counting the shapes that have one)
            if mover.weights.len() != scene.len() {
                return Err(GpuError::CpuThisCall);
            }
            weights.extend_from_slice(&mover.weights);
            let mut slot = Vec::with_capacity(mover.lines.len());
            for c in &mover.lines {
                let (nx, ny) = c.dims();
                if nx == 0 {
                    slot.push(None);
                    continue;
                }
                if nx > 1 && ny > 1 {
                    // a rectangle of positions, not a line: the CPU twin's whole map answers it
                    return Err(GpuError::CpuThisCall);
                }
                let along_x = ny == 1;
                let b = c.bounds;
                let (fixed, lo, hi) = if along_x {
                    (b.y_lo, b.x_lo, b.x_hi)
                } else {
                    (b.x_lo, b.y_lo, b.y_hi)
                };
                let raster = pool.add(c.raster);
                let lanes = if along_x {
                    c.raster.height()
                } else {
                    c.raster.width()
                };
                max_lanes = max_lanes.max(lanes);
                slot.push(Some(jobs.len()));
                jobs.push(GpuLineJob {
                    raster,
                    mover: m as u32,
                    along_x: along_x as u32,
                    fixed,
                    lo,
                    hi,
                    at: entries as u32,
                    _pad: 0,
                });
                entries += (hi - lo) as u64 + 2;
            }
            slots.push(slot);
        }
        if jobs.is_empty() {
            return Ok(slots
                .iter()
                .map(|s| s.iter().map(|_| None).collect())
                .collect());
        }
        let diff_bytes = entries * 8;
        let n_jobs = jobs.len() as u32;
        // one input buffer, its sections one after the other (see `LinesDims`)
        let mut data: Vec<u32> = Vec::new();
        let mut section = |words: &[u32]| {
            let at = data.len();
            data.extend_from_slice(words);
            at as u32
        };
        let jobs_at = section(bytemuck::cast_slice(&jobs));
        let rasters_at = section(bytemuck::cast_slice(&pool.rasters));
        let starts_at = section(&pool.starts);
        let runs_at = section(bytemuck::cast_slice(&pool.runs));
        let shapes_at = section(bytemuck::cast_slice(&shapes));
        let weights_at = section(&weights);
        if diff_bytes > self.max_binding()
            || entries > u32::MAX as u64
            || n_jobs > JOBS_PER_ROW * JOBS_PER_ROW
            || data.len() as u64 * 4 > self.max_binding()
            || max_lanes.div_ceil(LANES_PER_GROUP) > super::MAX_GROUPS
        {
            return Err(GpuError::CpuThisCall);
        }
        let dims = self.uniform(bytemuck::bytes_of(&LinesDims {
            jobs: n_jobs,
            shapes: scene.len() as u32,
            jobs_at,
            rasters_at,
            starts_at,
            runs_at,
            shapes_at,
            weights_at,
        }));
        let data = self.storage(bytemuck::cast_slice(&data));
        let diffs = self.scratch(Scratch::LineDiffs, diff_bytes);
        let best_bytes = n_jobs as u64 * 16;
        let best = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("line bests"),
            size: best_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let rows = n_jobs.min(JOBS_PER_ROW);
        let layers = n_jobs.div_ceil(JOBS_PER_ROW);
        let mut encoder = self.encoder();
        encoder.clear_buffer(&diffs, 0, Some(diff_bytes));
        self.pass(
            &mut encoder,
            &self.l_scatter,
            &[(0, &dims), (1, &data), (2, &diffs)],
            (max_lanes.div_ceil(LANES_PER_GROUP), rows, layers),
        );
        self.pass(
            &mut encoder,
            &self.l_best,
            &[(0, &dims), (1, &data), (2, &diffs), (3, &best)],
            (rows, layers, 1),
        );
        let words = self.read_back(encoder, &best, best_bytes)?;
        Ok(slots
            .iter()
            .map(|slot| {
                slot.iter()
                    .map(|job| {
                        job.and_then(|k| {
                            let w = &words[4 * k..4 * k + 4];
                            (w[3] == 1).then(|| LineBest {
                                value: w[0] as u64 | (w[1] as u64) << 32,
                                at: w[2],
                            })
                        })
                    })
                    .collect()
            })
            .collect())
    }
}
