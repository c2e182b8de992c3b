//! The exact final slide: rasters leave up to a cell or two of slack between neighbours; this
//! pass moves each part of the last sheet towards the start by the largest distance that the
//! exact geometry allows, found by bisection. A part held back by a neighbour's corner may get
//! further at a slightly different height, so each move towards the start also tries a few
//! heights around the part's own (up as well as down, within the usable box) and keeps the one
//! that goes furthest; then the part settles across the strip (down, or up) and goes towards the
//! start once more. Moves are greedy, so a lift that helps one part can block another, and parts
//! packed against the bottom edge leave their gaps at the top: the slide runs with the lifts and
//! without (moves at the part's own height only), settling down and settling up, and keeps the
//! layout that ends nearest the start, in rounds, each from the best layout of the round before
//! (measured in benches/history/strip.md: settling up won the first round on shirts and swim, the
//! lifts lose on dagli). Every accepted move keeps the layout valid, so the slide can stop at any
//! time.

use super::verify::{geometries_conflict, TOLERANCE};
use crate::geometry::{Affine, BBox, PartGeometry, Point};
use std::time::Instant;

/// Extra clearance every slide keeps (see the use below).
const SLIDE_CLEARANCE: f64 = 2.0 * TOLERANCE;
/// Bisection steps for the largest free distance of a move (to within `max_step / 2^14`).
const BISECTION_STEPS: u32 = 14;
/// The other heights a move towards the start tries, in thirds of `max_step` (a few raster
/// cells: the slack the rasters leave) either side of the part's own.
const HEIGHT_STEPS: [f64; 4] = [-1.0, 1.0, -2.0, 2.0];
/// A move at another height must beat the move at the part's own height by this much (mm): a
/// part does not wander up and down for nothing.
const HEIGHT_GAIN: f64 = 1e-4;
/// A round of the four slides must shorten the layout by this much (mm) for another to run.
const ROUND_GAIN: f64 = 1e-6;
/// Rounds of the four slides at most (on the ESICUP strips a round after the third never won
/// anything): the time after the slide belongs to the fillers.
const MAX_ROUNDS: usize = 8;
/// Passes over all the parts at most in one slide (a pass that moves nothing ends it earlier):
/// parts move at most `max_step` at a time, so a part with room goes on over several passes.
const MAX_PASSES: usize = 100;

/// The usable box the parts stay in (canonical frame, fill along +x): from `x0` on, between
/// `y0` and `y1`.
#[derive(Clone, Copy, Debug)]
pub struct SlideBox {
    pub x0: f64,
    pub y0: f64,
    pub y1: f64,
}

/// The ways a part moves in a slide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    TowardsStart,
    Down,
    Up,
}

impl Way {
    fn unit(self) -> Point {
        match self {
            Way::TowardsStart => Point::new(-1.0, 0.0),
            Way::Down => Point::new(0.0, -1.0),
            Way::Up => Point::new(0.0, 1.0),
        }
    }
}

/// Slides parts (canonical frame, fill along +x) within `area`, each by at most `max_step` per
/// move: without lifts and with, settling down and settling up, keeping the layout that ends
/// nearest the start (the first of those on a tie). Returns each part's offset.
pub fn slide(
    parts: &mut [PartGeometry],
    spacing: &[f64],
    area: SlideBox,
    max_step: f64,
    deadline: Instant,
) -> Vec<Point> {
    let mut total = vec![Point::new(0.0, 0.0); parts.len()];
    let mut end = parts_end(parts);
    // each round starts from the best layout of the round before: a layout settled up may
    // slide further settled down, and so on, until a round wins nothing
    for round in 0..MAX_ROUNDS {
        if Instant::now() >= deadline {
            break;
        }
        let mut best: Option<(f64, Vec<PartGeometry>, Vec<Point>)> = None;
        // the way the parts settle across the strip between moves towards the start
        for settle in [Way::Down, Way::Up] {
            for lifts in [false, true] {
                let mut moved = parts.to_vec();
                let offsets =
                    slide_with(&mut moved, spacing, area, max_step, lifts, settle, deadline);
                let e = parts_end(&moved);
                tracing::debug!(?settle, lifts, end = e, "slide variant");
                if best.as_ref().is_none_or(|b| e < b.0) {
                    best = Some((e, moved, offsets));
                }
            }
        }
        let (e, moved, offsets) = best.expect("four slides ran");
        let shorter = e < end - ROUND_GAIN;
        // the first round's layout stands even when it ends where it began: its parts sit
        // nearer the start, which leaves the remnant whole
        if shorter || round == 0 {
            end = e;
            parts.clone_from_slice(&moved);
            for (t, o) in total.iter_mut().zip(offsets) {
                *t = t.add(o);
            }
        }
        if !shorter {
            break;
        }
    }
    total
}

/// Where the parts end along the fill direction (canonical x).
pub fn parts_end(parts: &[PartGeometry]) -> f64 {
    parts
        .iter()
        .map(|p| p.bbox().max.x)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// One slide: passes over the parts, nearest the start first, each moved towards the start
/// (trying other heights when `lifts`), across the strip the way it `settle`s (down or up), and
/// towards the start again.
fn slide_with(
    parts: &mut [PartGeometry],
    spacing: &[f64],
    area: SlideBox,
    max_step: f64,
    lifts: bool,
    settle: Way,
    deadline: Instant,
) -> Vec<Point> {
    let boxes = parts.iter().map(|p| p.bbox()).collect();
    let mut s = Slider {
        parts,
        boxes,
        spacing,
        area,
        max_step,
        lifts,
    };
    let n = s.parts.len();
    let mut offsets = vec![Point::new(0.0, 0.0); n];
    let still = Point::new(0.0, 0.0);
    for _pass in 0..MAX_PASSES {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            s.boxes[a]
                .min
                .x
                .total_cmp(&s.boxes[b].min.x)
                .then(a.cmp(&b))
        });
        let mut moved_any = false;
        for &i in &order {
            for step in 0..3 {
                if Instant::now() >= deadline {
                    return offsets;
                }
                let by = match step {
                    0 => s.towards_start(i),
                    1 => settle.unit().scale(s.free_distance(i, still, settle)),
                    _ => {
                        Way::TowardsStart
                            .unit()
                            .scale(s.free_distance(i, still, Way::TowardsStart))
                    }
                };
                if by.x.abs() + by.y.abs() > 1e-7 {
                    s.apply(i, by);
                    offsets[i] = offsets[i].add(by);
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

/// The layout being slid.
struct Slider<'a> {
    parts: &'a mut [PartGeometry],
    boxes: Vec<BBox>,
    spacing: &'a [f64],
    area: SlideBox,
    max_step: f64,
    /// Whether moves towards the start try other heights too.
    lifts: bool,
}

impl Slider<'_> {
    /// Whether part `i` moved by `by` stays in the usable box and clear of every other part.
    fn fits(&self, i: usize, by: Point) -> bool {
        let b = &self.boxes[i];
        let eps = 1e-9;
        if b.min.x + by.x < self.area.x0 - eps
            || b.min.y + by.y < self.area.y0 - eps
            || b.max.y + by.y > self.area.y1 + eps
        {
            return false;
        }
        let moved = self.parts[i].transformed(&Affine::translate(by.x, by.y));
        let mb = moved.bbox();
        (0..self.parts.len()).all(|j| {
            // the verifier forgives shortfalls below its tolerance; a search that moves parts
            // until the check fails would use that up and leave slivers of overlap, so the
            // slide keeps twice the tolerance of clearance
            let req = self.spacing[i].max(self.spacing[j]) + SLIDE_CLEARANCE;
            j == i
                || !mb.near(&self.boxes[j], req)
                || !geometries_conflict(&moved, &self.parts[j], req)
        })
    }

    /// The largest distance (at most `max_step`, within the box) part `i` can go `way` from its
    /// place moved by `from`, which must fit.
    fn free_distance(&self, i: usize, from: Point, way: Way) -> f64 {
        let b = &self.boxes[i];
        let room = match way {
            Way::TowardsStart => b.min.x + from.x - self.area.x0,
            Way::Down => b.min.y + from.y - self.area.y0,
            Way::Up => self.area.y1 - (b.max.y + from.y),
        };
        let dir = way.unit();
        let limit = room.min(self.max_step);
        if limit <= 1e-7 {
            return 0.0;
        }
        let at = |d: f64| from.add(dir.scale(d));
        if self.fits(i, at(limit)) {
            return limit;
        }
        let (mut lo, mut hi) = (0.0, limit);
        for _ in 0..BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if self.fits(i, at(mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The move of part `i` towards the start that goes furthest: along its own height, or
    /// along one of a few heights around it when that goes further by `HEIGHT_GAIN`.
    fn towards_start(&self, i: usize) -> Point {
        let left = Way::TowardsStart;
        let mut best = Point::new(-self.free_distance(i, Point::new(0.0, 0.0), left), 0.0);
        if !self.lifts {
            return best;
        }
        let unit = self.max_step / 3.0;
        for k in HEIGHT_STEPS {
            let lift = Point::new(0.0, k * unit);
            if !self.fits(i, lift) {
                continue;
            }
            let d = self.free_distance(i, lift, left);
            if -d < best.x - HEIGHT_GAIN {
                best = Point::new(-d, lift.y);
            }
        }
        best
    }

    /// Moves part `i` by `by` (a move `fits` allowed).
    fn apply(&mut self, i: usize, by: Point) {
        self.parts[i] = self.parts[i].transformed(&Affine::translate(by.x, by.y));
        self.boxes[i] = self.parts[i].bbox();
    }
}
