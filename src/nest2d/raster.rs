//! Conservative rasterization of exact geometry for the search: a cell is occupied when the
//! material (grown by the spacing allowance) reaches into its interior, so two rasters that share
//! no cell belong to parts that are truly apart by at least the spacing.

use crate::geometry::{BBox, PartGeometry, Point};
use kerf_kernels::{PartRaster, Run};

/// Relative slack (in cells) below which a coordinate is treated as lying on a grid line.
/// It is far below the verifier's tolerance, so the raster stays conservative in practice.
const SNAP: f64 = 1e-9;

/// Rasterizes `g` (already in its final orientation) with its bounding box's lower-left corner at
/// cell `(k, k)` of a grid of cell size `cell`, then grows it by `k` cells all round.
/// Returns the raster and the shape coordinates of the raster's (0, 0) corner.
pub fn rasterize(g: &PartGeometry, cell: f64, k: u32) -> (PartRaster, Point) {
    let bb = g.bbox();
    let origin = Point::new(bb.min.x - k as f64 * cell, bb.min.y - k as f64 * cell);
    let rings: Vec<Vec<Point>> = g
        .components()
        .iter()
        .flat_map(|s| {
            s.rings()
                .map(|r| {
                    r.iter()
                        .map(|p| Point::new((p.x - origin.x) / cell, (p.y - origin.y) / cell))
                        .collect()
                })
                .collect::<Vec<Vec<Point>>>()
        })
        .collect();
    let w = ((bb.width() / cell) + 2.0 * k as f64 - SNAP)
        .ceil()
        .max(1.0) as u32;
    let h = ((bb.height() / cell) + 2.0 * k as f64 - SNAP)
        .ceil()
        .max(1.0) as u32;
    let mut rows: Vec<Vec<Run>> = Vec::with_capacity(h as usize);
    for j in 0..h {
        rows.push(row_runs(&rings, j as f64, j as f64 + 1.0, w));
    }
    let rows = if k > 0 { dilate(&rows, k, w) } else { rows };
    (PartRaster::from_row_runs(w, rows), origin)
}

/// Cells of the band y in (y0, y1) touched by the material's interior.
fn row_runs(rings: &[Vec<Point>], y0: f64, y1: f64, w: u32) -> Vec<Run> {
    let mut iv: Vec<(f64, f64)> = Vec::new();
    for r in rings {
        let n = r.len();
        for i in 0..n {
            let (p, q) = (r[i], r[(i + 1) % n]);
            let (lo, hi) = (p.y.min(q.y), p.y.max(q.y));
            if hi <= y0 || lo >= y1 {
                continue;
            }
            // the part of the edge inside the band
            let clip = |y: f64| {
                if (q.y - p.y).abs() < 1e-300 {
                    p.x
                } else {
                    p.x + (q.x - p.x) * ((y - p.y) / (q.y - p.y))
                }
            };
            let ya = lo.max(y0);
            let yb = hi.min(y1);
            let (xa, xb) = (clip(ya), clip(yb));
            let (xa, xb) = if (q.y - p.y).abs() < 1e-300 {
                (p.x.min(q.x), p.x.max(q.x))
            } else {
                (xa.min(xb), xa.max(xb))
            };
            iv.push((xa, xb));
        }
    }
    // interior spans along the band's two borders (just inside the band)
    let eps = 1e-7;
    for y in [y0 + eps, y1 - eps] {
        let mut xs: Vec<f64> = Vec::new();
        for r in rings {
            let n = r.len();
            for i in 0..n {
                let (p, q) = (r[i], r[(i + 1) % n]);
                if (p.y > y) != (q.y > y) {
                    xs.push(p.x + (y - p.y) * (q.x - p.x) / (q.y - p.y));
                }
            }
        }
        xs.sort_by(f64::total_cmp);
        for pair in xs.chunks(2) {
            if pair.len() == 2 {
                iv.push((pair[0], pair[1]));
            }
        }
    }
    let mut cells: Vec<Run> = iv
        .into_iter()
        .filter_map(|(a, b)| {
            let lo = (a + SNAP).floor().max(0.0) as i64;
            let hi = ((b - SNAP).ceil() as i64).max(lo + 1).min(w as i64);
            (hi > lo).then_some([lo as u32, hi as u32])
        })
        .collect();
    merge(&mut cells)
}

fn merge(v: &mut [Run]) -> Vec<Run> {
    v.sort();
    let mut out: Vec<Run> = Vec::new();
    for r in v.iter() {
        match out.last_mut() {
            Some(l) if r[0] <= l[1] => l[1] = l[1].max(r[1]),
            _ => out.push(*r),
        }
    }
    out
}

/// Grows every occupied cell into a (2k+1)-square (Chebyshev dilation).
fn dilate(rows: &[Vec<Run>], k: u32, w: u32) -> Vec<Vec<Run>> {
    let h = rows.len() as i64;
    (0..h)
        .map(|j| {
            let mut v: Vec<Run> = Vec::new();
            for dj in -(k as i64)..=(k as i64) {
                let s = j + dj;
                if s >= 0 && s < h {
                    for r in &rows[s as usize] {
                        v.push([r[0].saturating_sub(k), (r[1] + k).min(w)]);
                    }
                }
            }
            merge(&mut v)
        })
        .collect()
}

/// Cells (as a raster over the grid box) that a part may not cover on an irregular sheet: every
/// cell touched by the outside of `usable` (outline and defects) grown by `clearance`.
pub fn blocked_cells(
    sheet: &crate::geometry::Shape,
    clearance: f64,
    cell: f64,
    grid_w: u32,
    grid_h: u32,
    grid_origin: Point,
) -> PartRaster {
    // material of the sheet, rasterized "inner" by inverting a conservative raster of the free area
    let bb = BBox {
        min: grid_origin,
        max: Point::new(
            grid_origin.x + grid_w as f64 * cell,
            grid_origin.y + grid_h as f64 * cell,
        ),
    };
    let mut outside_rings: Vec<Vec<Point>> = vec![vec![
        bb.min,
        Point::new(bb.max.x, bb.min.y),
        bb.max,
        Point::new(bb.min.x, bb.max.y),
    ]];
    outside_rings.push(sheet.outer().to_vec());
    for h in sheet.holes() {
        outside_rings.push(h.clone());
    }
    let local: Vec<Vec<Point>> = outside_rings
        .iter()
        .map(|r| {
            r.iter()
                .map(|p| Point::new((p.x - grid_origin.x) / cell, (p.y - grid_origin.y) / cell))
                .collect()
        })
        .collect();
    let rows: Vec<Vec<Run>> = (0..grid_h)
        .map(|j| row_runs(&local, j as f64, j as f64 + 1.0, grid_w))
        .collect();
    let k = (clearance / cell - SNAP).ceil().max(0.0) as u32;
    let rows = if k > 0 {
        dilate(&rows, k, grid_w)
    } else {
        rows
    };
    PartRaster::from_row_runs(grid_w, rows)
}
