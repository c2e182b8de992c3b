//! From loose boundary pieces to parts: chain pieces whose ends meet within a tolerance into
//! closed loops, nest loops by containment (even depth = outline, odd depth = hole), orient and
//! flatten them conservatively, and reject what cannot be cut (open, self-crossing, zero area).

use super::curve::{Piece, Side};
use super::error::ImportError;
use super::exact::{find_crossing, point_in_ring, point_segment_dist, signed_area};
use super::primitives::{BBox, Point};
use super::shape::Shape;
use std::collections::HashMap;

/// A closed loop of pieces, each piece's end meeting the next one's start.
#[derive(Clone, Debug)]
pub struct Loop {
    pub pieces: Vec<Piece>,
}

impl Loop {
    pub fn reversed(&self) -> Loop {
        Loop {
            pieces: self.pieces.iter().rev().map(|p| p.reversed()).collect(),
        }
    }
    fn rough(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for p in &self.pieces {
            p.rough_points(&mut v);
        }
        v
    }
    /// The loop's true length, curves as drawn.
    pub fn length(&self) -> f64 {
        self.pieces.iter().map(Piece::length).sum()
    }
    /// Conservative polygon of the loop, which must already run with its material on the left.
    pub fn flatten(&self, tol: f64, side: Side) -> Vec<Point> {
        let mut v = Vec::new();
        for p in &self.pieces {
            p.flatten(tol, side, &mut v);
        }
        v
    }
}

/// Joins pieces into closed loops. Ends closer than `tol` are joined (the gap is closed by
/// snapping, which moves a vertex by at most `tol`). A lone line shorter than `tol` left over
/// once its neighbours closed across it is dropped. An end that finds no partner is an open
/// outline, reported with the gap to the nearest other free end, or as a T-junction where it
/// lies on another piece's middle and no free end is near (`meets_a_middle`).
pub fn chain(pieces: Vec<Piece>, tol: f64, source_name: &str) -> Result<Vec<Loop>, ImportError> {
    let mut loops = Vec::new();
    let mut open: Vec<Piece> = Vec::new();
    for p in dedup(pieces) {
        // a full circle or closed path, or a curve whose own ends meet, is a loop by itself
        let self_closing = p.start().dist(p.end()) <= tol && !matches!(p, Piece::Line { .. });
        if p.is_closed_loop() || self_closing {
            loops.push(Loop { pieces: vec![p] });
        } else if p.start().dist(p.end()) > 1e-12 {
            open.push(p);
        }
    }
    // Spatial hash of free ends, cell = tol, so a lookup checks the 3x3 neighbourhood.
    let cell = tol.max(1e-9);
    let key = |p: Point| ((p.x / cell).floor() as i64, (p.y / cell).floor() as i64);
    let mut ends: HashMap<(i64, i64), Vec<(usize, bool)>> = HashMap::new(); // (piece, is_end)
    for (i, p) in open.iter().enumerate() {
        ends.entry(key(p.start())).or_default().push((i, false));
        ends.entry(key(p.end())).or_default().push((i, true));
    }
    let mut used = vec![false; open.len()];
    let find = |at: Point,
                used: &Vec<bool>,
                ends: &HashMap<(i64, i64), Vec<(usize, bool)>>|
     -> Option<(usize, bool)> {
        let (kx, ky) = key(at);
        let mut best: Option<(usize, bool, f64)> = None;
        for dx in -1..=1 {
            for dy in -1..=1 {
                if let Some(v) = ends.get(&(kx + dx, ky + dy)) {
                    for &(i, is_end) in v {
                        if used[i] {
                            continue;
                        }
                        let q = if is_end {
                            open[i].end()
                        } else {
                            open[i].start()
                        };
                        let d = q.dist(at);
                        if d <= tol && best.is_none_or(|b| d < b.2) {
                            best = Some((i, is_end, d));
                        }
                    }
                }
            }
        }
        best.map(|b| (b.0, b.1))
    };
    for start in 0..open.len() {
        if used[start] {
            continue;
        }
        used[start] = true;
        let mut chain_pieces = vec![open[start].clone()];
        let first = open[start].start();
        loop {
            let tail = chain_pieces.last().unwrap().end();
            if chain_pieces.len() > 1 && tail.dist(first) <= tol {
                break;
            }
            match find(tail, &used, &ends) {
                Some((i, is_end)) => {
                    used[i] = true;
                    // a piece whose end meets our tail is walked backwards
                    chain_pieces.push(if is_end {
                        open[i].reversed()
                    } else {
                        open[i].clone()
                    });
                }
                None => {
                    if chain_pieces.len() > 1 || tail.dist(first) > tol {
                        let (to, gap) = nearest_free_end(tail, first, &open, &used);
                        // an end a hair past its partner that sits on the next edge is a gap
                        // a looser tolerance closes, not a junction: the gap is named then
                        if gap > JUNCTION_CLEARANCE * tol && meets_a_middle(tail, &open, tol) {
                            return Err(ImportError::TJunction {
                                source_name: source_name.to_string(),
                                at: tail,
                            });
                        }
                        return Err(ImportError::OpenOutline {
                            source_name: source_name.to_string(),
                            from: tail,
                            to,
                            gap,
                            tolerance: tol,
                        });
                    }
                    break;
                }
            }
        }
        // A lone line shorter than the tolerance is a sliver its neighbours already closed over:
        // a closed polyline that repeats its first vertex a hair off (CAD exports do) leaves
        // one when the chain closes across the gap before walking it. As a loop it would have
        // zero area and fail the whole file; the snapping above has moved no vertex more than
        // the tolerance without it.
        if let [Piece::Line { a, b }] = chain_pieces.as_slice() {
            if a.dist(*b) <= tol {
                continue;
            }
        }
        snap_joints(&mut chain_pieces);
        loops.push(Loop {
            pieces: chain_pieces,
        });
    }
    Ok(loops)
}

/// How far, in chaining tolerances, a T-junction lies from the ends of the piece it meets and
/// from the nearest free end: nearer, the end is taken for a gap just over the tolerance.
const JUNCTION_CLEARANCE: f64 = 4.0;

/// Whether `at` lies on some piece within the tolerance but not near either of its ends: a line
/// drawn to the middle of another (a slot cut into an edge, the edge left whole) makes a
/// T-junction, which chaining end to end cannot close; the gap to the nearest end would
/// mislead, so it is named for what it is.
fn meets_a_middle(at: Point, pieces: &[Piece], tol: f64) -> bool {
    let clear = JUNCTION_CLEARANCE * tol;
    let mut path = Vec::new();
    pieces.iter().any(|p| {
        if p.start().dist(at) <= clear || p.end().dist(at) <= clear {
            return false;
        }
        path.clear();
        p.rough_points(&mut path);
        path.push(p.end());
        path.windows(2)
            .any(|w| point_segment_dist(at, w[0], w[1]) <= tol)
    })
}

/// The free end nearest to the dangling `tail`, and its distance: another piece's unused end if
/// one is nearer than the start of its own chain, `first`, else that start.
fn nearest_free_end(tail: Point, first: Point, open: &[Piece], used: &[bool]) -> (Point, f64) {
    open.iter()
        .zip(used)
        .filter(|(_, &u)| !u)
        .flat_map(|(p, _)| [p.start(), p.end()])
        .fold((first, tail.dist(first)), |best, q| {
            let d = q.dist(tail);
            if d < best.1 {
                (q, d)
            } else {
                best
            }
        })
}

/// Make consecutive pieces meet exactly (lines move their end points; curves keep their shape,
/// their neighbour lines absorb the sub-tolerance difference).
fn snap_joints(pieces: &mut [Piece]) {
    let n = pieces.len();
    for i in 0..n {
        let j = (i + 1) % n;
        let e = pieces[i].end();
        if let Piece::Line { a, .. } = &mut pieces[j] {
            *a = e;
        } else {
            let s = pieces[j].start();
            if let Piece::Line { b, .. } = &mut pieces[i] {
                *b = s;
            }
        }
    }
}

/// Drops exact duplicates (the same line or arc drawn twice, a common CAD artefact).
fn dedup(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut seen = std::collections::HashSet::new();
    let q = |v: f64| (v * 1e6).round() as i64;
    pieces
        .into_iter()
        .filter(|p| {
            let (a, b) = (p.start(), p.end());
            let mut mid = Vec::new();
            p.rough_points(&mut mid);
            let m = mid.get(mid.len() / 2).copied().unwrap_or(a);
            let (a, b) = if (q(a.x), q(a.y)) <= (q(b.x), q(b.y)) {
                (a, b)
            } else {
                (b, a)
            };
            seen.insert((q(a.x), q(a.y), q(b.x), q(b.y), q(m.x), q(m.y), mid.len()))
        })
        .collect()
}

/// A part's outline with its holes, still as loops (before flattening).
pub struct Outline {
    pub outer: Loop,
    pub holes: Vec<Loop>,
    pub area: f64,
}

impl Outline {
    /// The length of its outline and holes as drawn: what cutting it out travels.
    pub fn cut_length(&self) -> f64 {
        self.outer.length() + self.holes.iter().map(Loop::length).sum::<f64>()
    }
}

/// Nests loops by containment: loops at even depth are outlines, each owning the odd-depth
/// loops directly inside it as holes (islands inside holes become outlines of their own).
pub fn nest_loops(loops: Vec<Loop>, source_name: &str) -> Result<Vec<Outline>, ImportError> {
    let rough: Vec<Vec<Point>> = loops.iter().map(|l| l.rough()).collect();
    let areas: Vec<f64> = rough.iter().map(|r| signed_area(r)).collect();
    let boxes: Vec<BBox> = rough.iter().map(|r| BBox::of(r.iter().copied())).collect();
    // loops sorted by decreasing area: a container always comes before what it contains
    let mut order: Vec<usize> = (0..loops.len()).collect();
    order.sort_by(|&a, &b| areas[b].abs().total_cmp(&areas[a].abs()));
    let mut parent: Vec<Option<usize>> = vec![None; loops.len()];
    let mut depth = vec![0usize; loops.len()];
    for (k, &i) in order.iter().enumerate() {
        if areas[i].abs() < 1e-12 {
            return Err(ImportError::ZeroArea {
                source_name: source_name.to_string(),
            });
        }
        // the smallest earlier loop that contains this one
        let probe = interior_probe(&rough[i]);
        for &j in order[..k].iter().rev() {
            if boxes[j].near(&boxes[i], 0.0) && point_in_ring(probe, &rough[j]) {
                parent[i] = Some(j);
                depth[i] = depth[j] + 1;
                break;
            }
        }
    }
    let mut outlines: Vec<Outline> = Vec::new();
    let mut index_of: HashMap<usize, usize> = HashMap::new();
    for &i in &order {
        let ccw = areas[i] > 0.0;
        if depth[i].is_multiple_of(2) {
            let outer = if ccw {
                loops[i].clone()
            } else {
                loops[i].reversed()
            };
            index_of.insert(i, outlines.len());
            outlines.push(Outline {
                outer,
                holes: vec![],
                area: areas[i].abs(),
            });
        } else {
            let hole = if ccw {
                loops[i].reversed()
            } else {
                loops[i].clone()
            };
            let o = index_of[&parent[i].unwrap()];
            outlines[o].area -= areas[i].abs();
            outlines[o].holes.push(hole);
        }
    }
    Ok(outlines)
}

/// A point just inside a ring's boundary (next to its first edge), robust for concave rings
/// that touch their container only at vertices.
fn interior_probe(r: &[Point]) -> Point {
    // midpoint of the longest edge, nudged a hair towards the inside
    let n = r.len();
    let mut best = 0;
    let mut best_len = -1.0;
    for i in 0..n {
        let l = r[i].dist(r[(i + 1) % n]);
        if l > best_len {
            best_len = l;
            best = i;
        }
    }
    let a = r[best];
    let b = r[(best + 1) % n];
    let m = a.add(b).scale(0.5);
    let d = b.sub(a).scale(1.0 / best_len.max(1e-300));
    let left = Point::new(-d.y, d.x);
    let sign = if signed_area(r) > 0.0 { 1.0 } else { -1.0 };
    m.add(left.scale(sign * best_len * 1e-6))
}

/// Flattens an outline conservatively and checks it can be cut: no crossing edges, non-zero area.
pub fn outline_to_shape(
    o: &Outline,
    tol: f64,
    side: Side,
    source_name: &str,
) -> Result<Shape, ImportError> {
    let outer = o.outer.flatten(tol, side);
    let holes: Vec<Vec<Point>> = o.holes.iter().map(|h| h.flatten(tol, side)).collect();
    let mut rings = vec![outer.clone()];
    rings.extend(holes.iter().cloned());
    if let Some(at) = find_crossing(&rings) {
        return Err(ImportError::SelfCrossing {
            source_name: source_name.to_string(),
            at,
        });
    }
    let shape = Shape::new(outer, holes);
    if shape.outer().len() < 3 || shape.area() <= 1e-9 {
        return Err(ImportError::ZeroArea {
            source_name: source_name.to_string(),
        });
    }
    Ok(shape)
}
