//! The job's natural grid, so that raster cells can line up with the parts' straight edges.
//!
//! A raster anchors each part's box at a cell corner and counts every cell the material reaches
//! into. When the cell does not divide a part's straight edges, each such edge spills into one
//! more cell, and parts that fit exactly in exact geometry (14 + 14 + 10 across a strip 38 high,
//! five 300 mm parts along a 1500 mm sheet) no longer fit on the raster: the search can never
//! find the tiling. Most jobs are drawn on a grid (whole millimetres, inches, tenths): every
//! straight edge lies a whole number of grid steps from its part's box corner. Choosing the cell
//! as that step divided by a whole number puts those edges on cell lines, so the raster of such a
//! part is exactly its box and tilings fit cell for cell. Curved and slanted edges are not on any
//! grid and are rasterized as before; they do not stop the straight ones from lining up.

use super::frame::Frame;
use super::model::{Problem, SheetShape};
use super::verify::{nesting_geometry, part_spacing};
use crate::geometry::{Affine, BBox, PartGeometry};

/// Relative tolerance (of the largest value) within which a value counts as a whole multiple of
/// the grid: far below any drawing's precision, above the noise of a quarter turn in floats.
const RELATIVE_TOLERANCE: f64 = 1e-9;

/// The least share of the parts' area (copies counted) that must lie on the grid for the cell to
/// move onto it: a grid that only a few parts share (one part of albano's with straight edges
/// 2819 apart) would move every part's cell for little.
const LEAST_SHARE_ON_GRID: f64 = 0.5;

/// The step that `cell` is to divide: the coarsest one, no finer than `cell`, that the straight
/// (axis-parallel, in the search's frame) edges of the parts lie a whole number of steps from
/// their box corners by, in every allowed orientation, and that the sheets' edge spacings and
/// the parts' spacing growths are whole multiples of. A part, spacing or edge margin whose own
/// step would take the grid finer than `cell` is left out (a tessellated circle, a margin of
/// 7.3 among parts in whole centimetres): it is rasterized as before, and the rest still line
/// up. `None` when the parts on the grid hold less than `LEAST_SHARE_ON_GRID` of the area.
pub fn natural_grid(problem: &Problem, cell: f64) -> Option<f64> {
    let mut grid: Option<f64> = None;
    let joined = |grid: Option<f64>, step: f64, scale: f64| -> Option<f64> {
        let joined = match grid {
            None => step,
            Some(g) => common_step(g, step, RELATIVE_TOLERANCE * scale),
        };
        (joined >= cell * (1.0 - RELATIVE_TOLERANCE)).then_some(joined)
    };
    let linear = Frame::new(&problem.settings, 1.0, 1.0).linear();
    let (mut on_grid, mut total) = (0.0, 0.0);
    for (i, p) in problem.parts.iter().enumerate() {
        let g = nesting_geometry(problem, i);
        let area = g.area() * p.quantity as f64;
        total += area;
        // the part joins in all its orientations or not at all
        let with_part = p.orientations().try_fold(grid, |gr, (m, rot)| {
            let shape = g.transformed(&linear.then_after(&Affine::placement(m, rot, 0.0, 0.0)));
            let b = shape.bbox();
            let scale = b.width().max(b.height());
            joined(gr, straight_edge_step(&shape, b, scale)?, scale).map(Some)
        });
        if let Some(gr) = with_part {
            grid = gr;
            on_grid += area;
        }
    }
    if grid.is_none() || on_grid < LEAST_SHARE_ON_GRID * total {
        return None;
    }
    // each part's raster grows by its spacing less half the least spacing
    // (`engine::orientations`): a whole multiple of the halves' common step; and the sheets'
    // edge spacings set where the first cell starts
    let halves = (0..problem.parts.len()).map(|i| part_spacing(problem, i) / 2.0);
    let margins = problem
        .sheets
        .iter()
        .filter(|sh| matches!(sh.shape, SheetShape::Rectangle { .. }))
        .flat_map(|sh| [sh.left, sh.right, sh.top, sh.bottom]);
    for length in halves.chain(margins).filter(|v| *v > 0.0) {
        if let Some(gr) = joined(grid, length, length) {
            grid = Some(gr);
        }
    }
    grid
}

/// The common step of one oriented shape's straight edges, measured from its box corner `b.min`
/// (the corner its raster anchors at); `None` when it has no straight edge off that corner.
fn straight_edge_step(shape: &PartGeometry, b: BBox, scale: f64) -> Option<f64> {
    let tol = RELATIVE_TOLERANCE * scale;
    let mut step = 0.0;
    for ring in shape.components().iter().flat_map(|s| s.rings()) {
        for (k, &a) in ring.iter().enumerate() {
            let c = ring[(k + 1) % ring.len()];
            for (along, across, start) in [(a.x, c.x, b.min.x), (a.y, c.y, b.min.y)] {
                let offset = along - start;
                if (along - across).abs() <= tol && offset > tol {
                    step = common_step(step, offset, tol);
                }
            }
        }
    }
    (step > tol).then_some(step)
}

/// The largest step that `a` and `b` are both whole multiples of, to within `tol` (Euclid's
/// algorithm on reals, with nearest remainders); 0 stands for "no value yet".
fn common_step(a: f64, b: f64, tol: f64) -> f64 {
    let (mut a, mut b) = (a.max(b), a.min(b));
    while b > tol {
        let r = (a - (a / b).round() * b).abs();
        (a, b) = (b, r);
    }
    a
}

/// The nearest the cell may come out to what was asked when it moves onto the grid: a tenth
/// finer (a fifth more cells), a quarter coarser.
const FINEST: f64 = 0.9;
const COARSEST: f64 = 1.25;

/// `cell` moved onto `grid` (no finer than `cell`, `natural_grid`): the grid step divided by a
/// whole number, the one that comes nearest to `cell` within `FINEST` and `COARSEST` of it (and
/// no finer at all where `cell` was already coarsened to keep the sheet grids within memory,
/// `finer_allowed` false). Where no whole number does, `cell` stays as it is.
pub fn aligned_cell(cell: f64, grid: Option<f64>, finer_allowed: bool) -> f64 {
    let Some(grid) = grid else {
        return cell;
    };
    let ratio = grid / cell;
    let coarser = Some(grid / ratio.floor()).filter(|c| ratio >= 1.0 && *c <= COARSEST * cell);
    let finer = Some(grid / ratio.ceil()).filter(|c| finer_allowed && *c >= FINEST * cell);
    // the nearer of the two, as a ratio to what was asked
    let off = |c: &f64| (c / cell).ln().abs();
    coarser
        .into_iter()
        .chain(finer)
        .min_by(|a, b| off(a).total_cmp(&off(b)))
        .unwrap_or(cell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Point, Shape};
    use crate::nest2d::model::{PartSpec, Settings, SheetSpec};

    fn job(shapes: Vec<Shape>) -> Problem {
        Problem {
            parts: shapes
                .into_iter()
                .enumerate()
                .map(|(i, s)| PartSpec::new(&format!("p{i}"), PartGeometry::single(s), 2))
                .collect(),
            sheets: vec![SheetSpec::rectangle("s", 1500.0, 1000.0)],
            settings: Settings::default(),
        }
    }

    /// A 64-gon of radius `r` whose top and bottom edges are horizontal, its left and right
    /// edges vertical (short straight edges at offsets off any round grid).
    fn disc(r: f64) -> Shape {
        let n = 64;
        let pts = (0..n)
            .map(|k| {
                let a = (k as f64 + 0.5) * std::f64::consts::TAU / n as f64;
                Point::new(r * a.cos(), r * a.sin())
            })
            .collect();
        Shape::new(pts, vec![])
    }

    #[test]
    fn parts_in_round_sizes_give_their_common_step() {
        let p = job(vec![
            Shape::rectangle(300.0, 500.0),
            Shape::rectangle(250.0, 1000.0),
        ]);
        assert_eq!(natural_grid(&p, 2.0), Some(50.0));
        // a cell coarser than their common step: the first part's own step alone would do, but
        // it holds under half the parts' area
        assert_eq!(natural_grid(&p, 60.0), None);
        // a cell coarser than every step: nothing to line up with
        assert_eq!(natural_grid(&p, 300.0), None);
    }

    #[test]
    fn a_tessellated_disc_does_not_stop_the_rectangles_lining_up() {
        let p = job(vec![Shape::rectangle(300.0, 500.0), disc(77.7)]);
        let grid = natural_grid(&p, 2.0).expect("the rectangle's grid");
        assert_eq!(grid, 100.0);
        let cell = aligned_cell(2.0, Some(grid), true);
        assert_eq!(cell, 2.0);
    }

    #[test]
    fn edge_margins_off_the_grid_are_left_out_and_on_it_kept() {
        let mut p = job(vec![Shape::rectangle(300.0, 500.0)]);
        p.sheets[0].left = 7.3;
        p.sheets[0].bottom = 20.0;
        assert_eq!(natural_grid(&p, 2.0), Some(20.0));
    }

    #[test]
    fn the_common_step_of_whole_numbers_is_their_greatest_common_divisor() {
        let tol = 1e-9;
        assert_eq!(common_step(0.0, 14.0, tol), 14.0);
        assert_eq!(common_step(14.0, 10.0, tol), 2.0);
        assert_eq!(common_step(2.0, 9.0, tol), 1.0);
        assert!((common_step(304.8, 152.4, tol) - 152.4).abs() < 1e-9);
        assert!((common_step(152.4, 3.175, tol) - 3.175).abs() < 1e-9);
    }

    #[test]
    fn values_off_every_grid_leave_no_step_above_the_tolerance() {
        let tol = 1e-9;
        let g = [1.0, std::f64::consts::SQRT_2, std::f64::consts::PI]
            .into_iter()
            .fold(0.0, |g, v| common_step(g, v, tol));
        // Euclid on reals runs down to the tolerance: a step far below any cell
        assert!(g < 1e-6, "{g}");
    }

    #[test]
    fn the_cell_divides_the_grid_and_stays_near_what_was_asked() {
        // fu: a whole-unit grid and about 12.8 cells to the unit asked
        let c = aligned_cell(1.0 / 12.8, Some(1.0), true);
        assert!((c - 1.0 / 13.0).abs() < 1e-15);
        // memory-capped: never finer than asked
        let c = aligned_cell(1.0 / 12.8, Some(1.0), false);
        assert!((c - 1.0 / 12.0).abs() < 1e-15);
        // a grid finer than the cell, or none, leaves it alone
        assert_eq!(aligned_cell(9.0, Some(1.0), true), 9.0);
        assert_eq!(aligned_cell(0.3, None, true), 0.3);
        // one and a half cells to the step: a whole step is half as coarse again, half a step
        // a third finer; the cell stays as asked
        assert_eq!(aligned_cell(2.0 / 3.0, Some(1.0), true), 2.0 / 3.0);
        // a step a little coarser than the cell: the step itself
        assert_eq!(aligned_cell(0.9, Some(1.0), true), 1.0);
        for asked in [0.07, 0.1, 0.26, 0.49, 0.51, 1.0] {
            let c = aligned_cell(asked, Some(1.0), true);
            assert!(c >= FINEST * asked && c <= COARSEST * asked);
            assert!((1.0 / c - (1.0 / c).round()).abs() < 1e-9, "{asked}: {c}");
        }
    }
}
