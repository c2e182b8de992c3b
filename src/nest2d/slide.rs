//! The exact final slide: rasters leave up to a cell or two of slack between neighbours; this
//! pass moves each part of the last sheet towards the start (then down, then towards the start
//! again) by the largest distance that the exact geometry allows, found by bisection. Every
//! accepted move keeps the layout valid, so the pass can stop at any time.

use super::verify::{geometries_conflict, TOLERANCE};
use crate::geometry::{Affine, BBox, PartGeometry, Point};
use std::time::Instant;

/// Extra clearance every slide keeps (see the use below).
const SLIDE_CLEARANCE: f64 = 2.0 * TOLERANCE;

/// Slides parts (canonical frame, fill along +x) within the usable box `[x0, ..] x [y0, ..]`.
/// Returns each part's offset.
pub fn slide(
    parts: &mut [PartGeometry],
    spacing: &[f64],
    x0: f64,
    y0: f64,
    max_step: f64,
    deadline: Instant,
) -> Vec<Point> {
    let n = parts.len();
    let mut offsets = vec![Point::new(0.0, 0.0); n];
    let mut boxes: Vec<BBox> = parts.iter().map(|p| p.bbox()).collect();
    for _round in 0..3 {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| boxes[a].min.x.total_cmp(&boxes[b].min.x).then(a.cmp(&b)));
        let mut moved_any = false;
        for &i in &order {
            for dir in [
                Point::new(-1.0, 0.0),
                Point::new(0.0, -1.0),
                Point::new(-1.0, 0.0),
            ] {
                if Instant::now() >= deadline {
                    return offsets;
                }
                let room = if dir.x < 0.0 {
                    boxes[i].min.x - x0
                } else {
                    boxes[i].min.y - y0
                };
                let limit = room.min(max_step);
                if limit <= 1e-7 {
                    continue;
                }
                let fits = |d: f64, parts: &[PartGeometry], boxes: &[BBox]| -> bool {
                    let moved = parts[i].transformed(&Affine::translate(dir.x * d, dir.y * d));
                    let mb = moved.bbox();
                    (0..n).all(|j| {
                        // the verifier forgives shortfalls below its tolerance; a search that
                        // moves parts until the check fails would use that up and leave slivers
                        // of overlap, so the slide keeps twice the tolerance of clearance
                        let req = spacing[i].max(spacing[j]) + SLIDE_CLEARANCE;
                        j == i
                            || !mb.near(&boxes[j], req)
                            || !geometries_conflict(&moved, &parts[j], req)
                    })
                };
                let d = if fits(limit, parts, &boxes) {
                    limit
                } else {
                    let (mut lo, mut hi) = (0.0, limit);
                    for _ in 0..14 {
                        let mid = 0.5 * (lo + hi);
                        if fits(mid, parts, &boxes) {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    lo
                };
                if d > 1e-7 {
                    let t = Affine::translate(dir.x * d, dir.y * d);
                    parts[i] = parts[i].transformed(&t);
                    boxes[i] = parts[i].bbox();
                    offsets[i] = offsets[i].add(Point::new(dir.x * d, dir.y * d));
                    moved_any = true;
                }
            }
        }
        if !moved_any {
            break;
        }
    }
    offsets
}
