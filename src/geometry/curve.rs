//! Boundary pieces as drawn (lines, circular and elliptic arcs, pre-flattened paths) and their
//! conservative flattening into polygon vertices.
//!
//! Flattening direction matters: a nesting polygon must never be smaller than the material it
//! stands for, or the exact check would pass layouts whose real parts overlap. Loops are oriented
//! so the material lies on the left of travel; an arc turning left (centre on the material side)
//! is then replaced by a circumscribed chain (outside the curve), an arc turning right by an
//! inscribed one (chords, also outside the material). `Side::Shrink` flips that, for sheets whose
//! usable area must not be overstated.

use super::primitives::{Affine, Point};
use std::f64::consts::TAU;

/// One drawn boundary piece.
#[derive(Clone, Debug)]
pub enum Piece {
    Line {
        a: Point,
        b: Point,
    },
    /// The image of the unit-circle arc from `t0` through `t0 + sweep` (radians, signed) under `map`:
    /// circular arcs, ellipse arcs, and either after a non-uniform block scale.
    Conic {
        map: Affine,
        t0: f64,
        sweep: f64,
    },
    /// A curve already flattened within tolerance (splines).
    Path {
        points: Vec<Point>,
    },
}

/// Which way flattening errs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The polygon contains the material on the left of travel (parts).
    Grow,
    /// The polygon stays inside the material on the left of travel (usable sheet area).
    Shrink,
}

impl Piece {
    pub fn circle(center: Point, r: f64) -> Piece {
        Piece::arc(center, r, 0.0, TAU)
    }
    pub fn arc(center: Point, r: f64, start_rad: f64, sweep_rad: f64) -> Piece {
        Piece::Conic {
            map: Affine {
                a: r,
                b: 0.0,
                c: 0.0,
                d: r,
                tx: center.x,
                ty: center.y,
            },
            t0: start_rad,
            sweep: sweep_rad,
        }
    }

    /// An arc from `a` to `b` given by a DXF/JSON bulge (tan of a quarter of the included angle,
    /// positive counter-clockwise). A zero bulge is a straight line.
    pub fn from_bulge(a: Point, b: Point, bulge: f64) -> Piece {
        let c = a.dist(b);
        if bulge.abs() < 1e-12 || c < 1e-12 || !bulge.is_finite() {
            return Piece::Line { a, b };
        }
        let s = bulge * c / 2.0; // signed sagitta
        let r_signed = (c * c / 4.0 + s * s) / (2.0 * s);
        let mid = a.add(b).scale(0.5);
        let dir = b.sub(a).scale(1.0 / c);
        let left = Point::new(-dir.y, dir.x);
        let center = mid.add(left.scale(r_signed - s));
        let r = r_signed.abs();
        let t0 = (a.y - center.y).atan2(a.x - center.x);
        let sweep = 4.0 * bulge.atan();
        Piece::arc(center, r, t0, sweep)
    }

    pub fn start(&self) -> Point {
        match self {
            Piece::Line { a, .. } => *a,
            Piece::Conic { map, t0, .. } => map.apply(Point::new(t0.cos(), t0.sin())),
            Piece::Path { points } => points[0],
        }
    }
    pub fn end(&self) -> Point {
        match self {
            Piece::Line { b, .. } => *b,
            Piece::Conic { map, t0, sweep } => {
                let t = t0 + sweep;
                map.apply(Point::new(t.cos(), t.sin()))
            }
            Piece::Path { points } => *points.last().unwrap(),
        }
    }
    /// True when the piece closes on itself (a full circle or ellipse, a closed path).
    pub fn is_closed_loop(&self) -> bool {
        match self {
            Piece::Line { .. } => false,
            Piece::Conic { sweep, .. } => sweep.abs() >= TAU - 1e-9,
            Piece::Path { points } => {
                points.len() > 2 && points[0].dist(*points.last().unwrap()) < 1e-9
            }
        }
    }
    pub fn reversed(&self) -> Piece {
        match self {
            Piece::Line { a, b } => Piece::Line { a: *b, b: *a },
            Piece::Conic { map, t0, sweep } => Piece::Conic {
                map: *map,
                t0: t0 + sweep,
                sweep: -sweep,
            },
            Piece::Path { points } => Piece::Path {
                points: points.iter().rev().copied().collect(),
            },
        }
    }
    pub fn transformed(&self, t: &Affine) -> Piece {
        match self {
            Piece::Line { a, b } => Piece::Line {
                a: t.apply(*a),
                b: t.apply(*b),
            },
            Piece::Conic { map, t0, sweep } => Piece::Conic {
                map: t.then_after(map),
                t0: *t0,
                sweep: *sweep,
            },
            Piece::Path { points } => Piece::Path {
                points: points.iter().map(|p| t.apply(*p)).collect(),
            },
        }
    }

    /// The piece's true length as drawn: arcs as arcs (a quote's CutLength is what the cutting
    /// head travels, not the length of a flattening). Elliptic arcs have no closed form; they
    /// are integrated numerically (Gauss-Legendre on pieces of at most an eighth of a turn,
    /// far below a micrometre of error on parts of any real size).
    pub fn length(&self) -> f64 {
        match self {
            Piece::Line { a, b } => a.dist(*b),
            Piece::Path { points } => points.windows(2).map(|w| w[0].dist(w[1])).sum(),
            Piece::Conic { map, t0, sweep } => {
                // speed along the parameter: |M (-sin t, cos t)|
                let speed = |t: f64| {
                    let (s, c) = t.sin_cos();
                    (map.a * -s + map.b * c).hypot(map.c * -s + map.d * c)
                };
                let circular = (map.a - map.d).abs() < 1e-12 * map.a.abs().max(1.0)
                    && (map.b + map.c).abs() < 1e-12 * map.a.abs().max(1.0);
                if circular {
                    return speed(*t0) * sweep.abs();
                }
                // 5-point Gauss-Legendre on each piece
                const NODES: [(f64, f64); 5] = [
                    (0.0, 0.568_888_888_888_888_9),
                    (-0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
                    (0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
                    (-0.906_179_845_938_664, 0.236_926_885_056_189_1),
                    (0.906_179_845_938_664, 0.236_926_885_056_189_1),
                ];
                let n = ((sweep.abs() / (TAU / 64.0)).ceil() as usize).max(1);
                let h = sweep / n as f64;
                (0..n)
                    .map(|i| {
                        let mid = t0 + h * (i as f64 + 0.5);
                        NODES
                            .iter()
                            .map(|(x, w)| w * speed(mid + x * h / 2.0))
                            .sum::<f64>()
                            * h.abs()
                            / 2.0
                    })
                    .sum()
            }
        }
    }

    /// A cheap flattening (chord midpoints) used only to classify loops (orientation, nesting).
    pub fn rough_points(&self, out: &mut Vec<Point>) {
        match self {
            Piece::Line { a, .. } => out.push(*a),
            Piece::Conic { map, t0, sweep } => {
                let n = ((sweep.abs() / (TAU / 64.0)).ceil() as usize).max(2);
                for i in 0..n {
                    let t = t0 + sweep * i as f64 / n as f64;
                    out.push(map.apply(Point::new(t.cos(), t.sin())));
                }
            }
            Piece::Path { points } => out.extend_from_slice(&points[..points.len() - 1]),
        }
    }

    /// Appends this piece's vertices (all but its end point) to `out`, erring to `side` of the
    /// material that lies on the left of travel, with chord deviation at most `tol`.
    pub fn flatten(&self, tol: f64, side: Side, out: &mut Vec<Point>) {
        match self {
            Piece::Line { a, .. } => out.push(*a),
            Piece::Path { points } => out.extend_from_slice(&points[..points.len() - 1]),
            Piece::Conic { map, t0, sweep } => {
                // World turning direction: counter-clockwise when the parameter sweep and the
                // map's orientation agree. Turning left means the curve bows away from the material.
                let turns_left = (*sweep > 0.0) == (map.det() > 0.0);
                let circumscribe = turns_left == (side == Side::Grow);
                let sigma = max_singular_value(map).max(1e-12);
                // unit-circle deviation allowed so that the mapped deviation stays within tol
                let dev = (tol / sigma).min(0.5);
                let step = if circumscribe {
                    2.0 * (1.0 / (1.0 + dev)).acos()
                } else {
                    2.0 * (1.0 - dev).acos()
                };
                let n = ((sweep.abs() / step).ceil() as usize)
                    .max((sweep.abs() / (TAU / 8.0)).ceil() as usize)
                    .max(1);
                let d = sweep / n as f64;
                let at = |t: f64, k: f64| map.apply(Point::new(k * t.cos(), k * t.sin()));
                out.push(at(*t0, 1.0));
                if circumscribe {
                    // tangent-line intersections, between the exact end points
                    let k = 1.0 / (d / 2.0).cos();
                    for i in 0..n {
                        out.push(at(t0 + d * (i as f64 + 0.5), k));
                    }
                } else {
                    for i in 1..n {
                        out.push(at(t0 + d * i as f64, 1.0));
                    }
                }
            }
        }
    }
}

fn max_singular_value(m: &Affine) -> f64 {
    // sqrt of the largest eigenvalue of M^T M
    let (a, b, c, d) = (m.a, m.b, m.c, m.d);
    let p = a * a + c * c;
    let q = a * b + c * d;
    let r = b * b + d * d;
    let tr = p + r;
    let disc = ((p - r) * (p - r) + 4.0 * q * q).sqrt();
    ((tr + disc) / 2.0).sqrt()
}

/// Evaluates a NURBS curve (degree `p`, knots, control points, optional weights) and flattens it
/// adaptively so that each chord stays within `tol` of the curve at its midpoint parameter.
pub fn flatten_nurbs(
    p: usize,
    knots: &[f64],
    ctrl: &[Point],
    weights: &[f64],
    tol: f64,
) -> Option<Vec<Point>> {
    let n = ctrl.len();
    if n < 2 || p == 0 || knots.len() != n + p + 1 {
        return None;
    }
    let w = |i: usize| if weights.len() == n { weights[i] } else { 1.0 };
    let eval = |u: f64| -> Point {
        // de Boor in homogeneous coordinates
        let mut k = p;
        while k + 1 < n && knots[k + 1] <= u {
            k += 1;
        }
        let mut d: Vec<(f64, f64, f64)> = (0..=p)
            .map(|j| {
                let i = k + j - p;
                let wi = w(i);
                (ctrl[i].x * wi, ctrl[i].y * wi, wi)
            })
            .collect();
        for r in 1..=p {
            for j in (r..=p).rev() {
                let i = k + j - p;
                let den = knots[i + p + 1 - r] - knots[i];
                let alpha = if den.abs() < 1e-300 {
                    0.0
                } else {
                    (u - knots[i]) / den
                };
                d[j] = (
                    (1.0 - alpha) * d[j - 1].0 + alpha * d[j].0,
                    (1.0 - alpha) * d[j - 1].1 + alpha * d[j].1,
                    (1.0 - alpha) * d[j - 1].2 + alpha * d[j].2,
                );
            }
        }
        let (x, y, ww) = d[p];
        Point::new(x / ww, y / ww)
    };
    let (u0, u1) = (knots[p], knots[n]);
    if !(u1 > u0) {
        return None;
    }
    // seed with one sample per knot span (x4) so that no feature hides between samples
    let mut params = vec![u0];
    for i in p..n {
        let (a, b) = (knots[i], knots[i + 1]);
        if b > a {
            for s in 1..=4 {
                params.push(a + (b - a) * s as f64 / 4.0);
            }
        }
    }
    let mut out = vec![eval(u0)];
    for win in params.windows(2) {
        subdivide(
            &eval,
            win[0],
            win[1],
            out[out.len() - 1],
            eval(win[1]),
            tol,
            0,
            &mut out,
        );
    }
    Some(out)
}

#[allow(clippy::too_many_arguments)]
fn subdivide(
    eval: &dyn Fn(f64) -> Point,
    u0: f64,
    u1: f64,
    a: Point,
    b: Point,
    tol: f64,
    depth: u32,
    out: &mut Vec<Point>,
) {
    let um = 0.5 * (u0 + u1);
    let m = eval(um);
    let dev = super::exact::point_segment_dist(m, a, b);
    if dev > tol && depth < 16 {
        subdivide(eval, u0, um, a, m, tol, depth + 1, out);
        subdivide(eval, um, u1, m, b, tol, depth + 1, out);
    } else {
        out.push(b);
    }
}
