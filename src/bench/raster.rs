//! What building the search's rasters costs: the whole orientation table of an instance (every
//! part in every orientation, rasterized conservatively on the CPU) at a range of resolutions,
//! against the time the engine spends searching with it. The compaction rebuilds the table once
//! per phase, so this is the most a GPU rasterizer could save (issue 20 asked whether one pays).

use crate::bench::esicup::{self, Instance};
use crate::nest2d::Settings;
use std::time::Instant;

/// One table build: an instance at a resolution and a number of turns per part.
pub struct Row {
    pub cells_per_part: f64,
    /// The cell size the table came to (mm): larger than asked where the strip would pass the
    /// grid's cap of cells.
    pub cell: f64,
    pub orientations: usize,
    /// Occupied cells over every raster of the table.
    pub cells: u64,
    /// Rectangles the rasters decompose into (what the evaluator's work scales with).
    pub rects: usize,
    /// Fastest of `repeats` builds, in seconds.
    pub seconds: f64,
}

/// Builds the orientation table of `inst` at `cells_per_part`, `repeats` times, with `turns`
/// evenly spaced rotations per part when given (as with a tilt or free rotation), else the
/// instance's own orientations. The fastest build counts: the machine is shared and noisy.
pub fn measure(inst: &Instance, cells_per_part: f64, turns: Option<u32>, repeats: u32) -> Row {
    let settings = Settings {
        cells_per_part,
        ..Settings::default()
    };
    let mut problem = esicup::problem(inst, settings);
    if let Some(n) = turns {
        let rotations: Vec<f64> = (0..n.max(1)).map(|k| 360.0 * k as f64 / n as f64).collect();
        for p in &mut problem.parts {
            p.rotations.clone_from(&rotations);
        }
    }
    let mut best = f64::INFINITY;
    let mut table = None;
    let mut cell = 0.0;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let (size, built) = crate::nest2d::engine::orientation_table(&problem, cells_per_part);
        best = best.min(t.elapsed().as_secs_f64());
        cell = size;
        table = Some(built);
    }
    let table = table.expect("at least one build");
    let rasters = table.iter().flatten().map(|o| &o.raster);
    Row {
        cells_per_part,
        cell,
        orientations: table.iter().map(Vec::len).sum(),
        cells: rasters.clone().map(|r| r.area()).sum(),
        rects: rasters.map(|r| r.rects().len()).sum(),
        seconds: best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn albano() -> Instance {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("benches/data/nest2d/albano.json");
        esicup::load(&path).expect("albano loads")
    }

    #[test]
    fn a_finer_table_has_about_four_times_the_cells_and_the_same_orientations() {
        let inst = albano();
        let coarse = measure(&inst, 32.0, None, 1);
        let fine = measure(&inst, 64.0, None, 1);
        // 8 shapes in 2 orientations, two of them symmetric under a half turn
        assert_eq!(coarse.orientations, fine.orientations);
        assert!(coarse.orientations <= 16 && coarse.orientations >= 8);
        let ratio = fine.cells as f64 / coarse.cells as f64;
        assert!((3.0..5.0).contains(&ratio), "cells {ratio}x");
        assert!(fine.rects > coarse.rects);
        assert!(
            (coarse.cell / fine.cell - 2.0).abs() < 1e-9,
            "albano is far from the cap"
        );
    }

    #[test]
    fn turns_replace_the_instances_orientations() {
        let inst = albano();
        let own = measure(&inst, 32.0, None, 1);
        let turned = measure(&inst, 32.0, Some(8), 1);
        assert!(turned.orientations > 2 * own.orientations);
        assert!(turned.orientations <= 8 * inst.items.len());
    }
}
