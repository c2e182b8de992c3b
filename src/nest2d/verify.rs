//! The exact verifier: every layout that leaves the engine passes it. It works on the vector
//! geometry in sheet coordinates, never on rasters.

use super::cut_check::{self, SharedCuts};
use super::model::{Problem, SheetShape, SheetSpec};
use crate::geometry::exact::{
    point_in_ring, point_segment_dist, segments_cross_properly, SegmentSet,
};
use crate::geometry::{Affine, BBox, PartGeometry, Point, Shape};

/// Distances may fall short of the required spacing by this much (floating-point noise).
pub const TOLERANCE: f64 = 1e-6;

/// A part placed in sheet coordinates, as the verifier sees it.
pub struct PlacedShape {
    pub label: String,
    pub geometry: PartGeometry,
    pub spacing: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    TooClose {
        a: String,
        b: String,
        distance: f64,
        required: f64,
    },
    Overlap {
        a: String,
        b: String,
    },
    OutsideSheet {
        part: String,
        detail: String,
    },
    /// Two parts closer than their spacing along a common cut they share, but not as the cut
    /// allows (`cut_check`).
    AlongCut {
        a: String,
        b: String,
        detail: String,
    },
    /// A reported common cut that the parts it lists do not share (`cuts[cut]`).
    FalseCut {
        cut: usize,
        detail: String,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::TooClose {
                a,
                b,
                distance,
                required,
            } => {
                write!(f, "{a} and {b} are {distance:.6} mm apart, closer than the required {required} mm")
            }
            Violation::Overlap { a, b } => write!(f, "{a} overlaps {b}"),
            Violation::OutsideSheet { part, detail } => {
                write!(f, "{part} is not inside the usable sheet: {detail}")
            }
            Violation::AlongCut { a, b, detail } => write!(f, "{a} and {b}: {detail}"),
            Violation::FalseCut { cut, detail } => write!(f, "common cut {cut}: {detail}"),
        }
    }
}

/// The geometry the engine nests for a part: its true shape, its bounding rectangle when
/// NestAsRectangle, and without holes when holes may not hold other parts.
pub fn nesting_geometry(problem: &Problem, part: usize) -> PartGeometry {
    let p = &problem.parts[part];
    let g = if p.nest_as_rectangle {
        let b = p.geometry.bbox();
        PartGeometry::single(Shape::rectangle(b.width(), b.height()).translate(b.min.x, b.min.y))
    } else {
        p.geometry.clone()
    };
    if problem.settings.inner_loop_fill == super::model::InnerLoopFill::None {
        g.without_holes()
    } else {
        g
    }
}

pub fn part_spacing(problem: &Problem, part: usize) -> f64 {
    problem.parts[part]
        .spacing_override
        .unwrap_or(problem.settings.part_spacing)
        .max(0.0)
}

/// Checks one sheet layout without common cuts: pairwise spacing and containment in the usable
/// sheet area.
pub fn verify_sheet(sheet: &SheetSpec, parts: &[PlacedShape]) -> Vec<Violation> {
    verify_layout(sheet, parts, SharedCuts::NONE)
}

/// Checks one sheet layout: containment in the usable sheet area, then `verify_pairs`.
pub fn verify_layout(sheet: &SheetSpec, parts: &[PlacedShape], cuts: SharedCuts) -> Vec<Violation> {
    let mut out: Vec<Violation> = parts
        .iter()
        .filter_map(|p| check_in_sheet(sheet, p))
        .collect();
    out.extend(verify_pairs(parts, cuts));
    out
}

/// Checks placed parts against each other: every common cut is real, and each pair keeps its
/// spacing, or, along a common cut they share, `cut_check`'s rule.
pub fn verify_pairs(parts: &[PlacedShape], cuts: SharedCuts) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    for (k, c) in cuts.cuts.iter().enumerate() {
        if let Err(detail) = cut_check::check_cut(c, cuts.cuts, parts, cuts.gap) {
            out.push(Violation::FalseCut { cut: k, detail });
        }
    }
    let boxes: Vec<BBox> = parts.iter().map(|p| p.geometry.bbox()).collect();
    for (i, p) in parts.iter().enumerate() {
        for j in (i + 1)..parts.len() {
            let q = &parts[j];
            let required = p.spacing.max(q.spacing);
            if !boxes[i].near(&boxes[j], required) {
                continue;
            }
            let shared = cuts.between(i, j);
            // a pair no shared cut separates keeps its spacing like any other
            if shared.is_empty() || !cut_check::separated(p, q, &shared, cuts.gap) {
                out.extend(check_pair(p, q, required));
            } else if let Err(detail) =
                cut_check::check_pair_along(p, q, &shared, required, cuts.gap)
            {
                out.push(Violation::AlongCut {
                    a: p.label.clone(),
                    b: q.label.clone(),
                    detail,
                });
            }
        }
    }
    out
}

fn check_pair(p: &PlacedShape, q: &PlacedShape, required: f64) -> Option<Violation> {
    for a in p.geometry.components() {
        for b in q.geometry.components() {
            if !a.bbox().near(&b.bbox(), required) {
                continue;
            }
            if let Some(v) = shapes_conflict(a, b, required) {
                return Some(match v {
                    Conflict::Overlap => Violation::Overlap {
                        a: p.label.clone(),
                        b: q.label.clone(),
                    },
                    Conflict::TooClose(d) => Violation::TooClose {
                        a: p.label.clone(),
                        b: q.label.clone(),
                        distance: d,
                        required,
                    },
                });
            }
        }
    }
    None
}

enum Conflict {
    Overlap,
    TooClose(f64),
}

fn shapes_conflict(a: &Shape, b: &Shape, required: f64) -> Option<Conflict> {
    let sa = SegmentSet::from_rings(a.rings());
    let sb = SegmentSet::from_rings(b.rings());
    let d = sa.min_dist(
        &sb,
        required.max(TOLERANCE) + TOLERANCE,
        required - TOLERANCE,
    );
    if d < required - TOLERANCE && required > 0.0 {
        return Some(if interiors_meet(a, b) {
            Conflict::Overlap
        } else {
            Conflict::TooClose(d)
        });
    }
    if d > TOLERANCE {
        // apart everywhere along the boundaries: overlapping only if one lies inside the other
        if b.contains_point(a.outer()[0]) || a.contains_point(b.outer()[0]) {
            return Some(Conflict::Overlap);
        }
        return None;
    }
    // touching (spacing 0): overlapping only if the interiors meet
    interiors_meet(a, b).then_some(Conflict::Overlap)
}

/// True when the interiors of two shapes share area: a proper edge crossing, or a point just
/// inside one boundary that lies well inside the other shape.
fn interiors_meet(a: &Shape, b: &Shape) -> bool {
    for ra in a.rings() {
        for rb in b.rings() {
            let (na, nb) = (ra.len(), rb.len());
            for i in 0..na {
                let (p, q) = (ra[i], ra[(i + 1) % na]);
                let eb = BBox::of([p, q]);
                for j in 0..nb {
                    let (r, s) = (rb[j], rb[(j + 1) % nb]);
                    if eb.near(&BBox::of([r, s]), 0.0)
                        && segments_cross_properly(p, q, r, s)
                        && crossing_depth(p, q, r, s) > TOLERANCE
                    {
                        return true;
                    }
                }
            }
        }
    }
    probes_inside(a, b) || probes_inside(b, a)
}

/// How far from the segments' ends a proper crossing of PQ and RS lies: the least distance
/// of an end of either segment to the other. Edges that only touch, off by floating-point
/// noise, cross within that noise of an end: two corners that meet diagonally (1e-13 mm into
/// each other), and above all a vertex on another part's edge (a T: the vertex's edges cross
/// the edge right at the vertex, while the edge's own ends are far away). That is touching,
/// not overlap. An edge that runs on into the other part is found all the same: it leaves
/// through another edge (a crossing far from every end), or the probes find its material
/// inside the other part.
fn crossing_depth(p: Point, q: Point, r: Point, s: Point) -> f64 {
    point_segment_dist(p, r, s)
        .min(point_segment_dist(q, r, s))
        .min(point_segment_dist(r, p, q))
        .min(point_segment_dist(s, p, q))
}

/// Points a hair inside `a` (next to each vertex and edge midpoint) that are strictly inside `b`.
fn probes_inside(a: &Shape, b: &Shape) -> bool {
    let scale = a.bbox().width().max(a.bbox().height()).max(1e-9);
    let delta = 1e-7 * scale.max(1.0);
    for ring in a.rings() {
        let n = ring.len();
        for i in 0..n {
            let (p, q) = (ring[i], ring[(i + 1) % n]);
            let len = p.dist(q);
            if len < 1e-12 {
                continue;
            }
            // material lies to the left of every ring (outer CCW, holes CW)
            let left = Point::new(-(q.y - p.y) / len, (q.x - p.x) / len);
            for t in [0.5, 1e-3, 1.0 - 1e-3] {
                let m =
                    Point::new(p.x + (q.x - p.x) * t, p.y + (q.y - p.y) * t).add(left.scale(delta));
                if b.contains_point(m) && boundary_dist(b, m) > delta * 0.5 {
                    return true;
                }
            }
        }
    }
    false
}

fn boundary_dist(s: &Shape, p: Point) -> f64 {
    let mut d = f64::INFINITY;
    for r in s.rings() {
        let n = r.len();
        for i in 0..n {
            d = d.min(point_segment_dist(p, r[i], r[(i + 1) % n]));
        }
    }
    d
}

fn check_in_sheet(sheet: &SheetSpec, p: &PlacedShape) -> Option<Violation> {
    let b = p.geometry.bbox();
    let out = |detail: String| {
        Some(Violation::OutsideSheet {
            part: p.label.clone(),
            detail,
        })
    };
    match &sheet.shape {
        SheetShape::Rectangle { width, height } => {
            let (x0, y0, x1, y1) = (
                sheet.left,
                sheet.bottom,
                width - sheet.right,
                height - sheet.top,
            );
            if b.min.x < x0 - TOLERANCE
                || b.min.y < y0 - TOLERANCE
                || b.max.x > x1 + TOLERANCE
                || b.max.y > y1 + TOLERANCE
            {
                return out(format!(
                    "extent ({:.4}, {:.4})-({:.4}, {:.4}) exceeds the usable area ({x0}, {y0})-({x1}, {y1})",
                    b.min.x, b.min.y, b.max.x, b.max.y
                ));
            }
            None
        }
        SheetShape::Outline(s) => {
            let sp = sheet.irregular_spacing.max(0.0);
            let sheet_segs = SegmentSet::from_rings(s.rings());
            for c in p.geometry.components() {
                if !point_in_ring(c.outer()[0], s.outer()) {
                    return out("outside the sheet outline".into());
                }
                let d = SegmentSet::from_rings(c.rings()).min_dist(
                    &sheet_segs,
                    sp + TOLERANCE,
                    sp - TOLERANCE,
                );
                if d < sp - TOLERANCE || (sp == 0.0 && d <= TOLERANCE && crosses_outline(c, s)) {
                    return out(format!(
                        "{d:.6} mm from the sheet outline or a defect, {sp} mm required"
                    ));
                }
                for h in s.holes() {
                    if c.contains_point(h[0]) || point_in_ring(c.outer()[0], h) {
                        return out("covers a sheet defect".into());
                    }
                }
            }
            None
        }
    }
}

fn crosses_outline(c: &Shape, sheet: &Shape) -> bool {
    // treat the sheet's outside as material: a part touching the outline may not cross it
    let outside = Shape::new(
        {
            let b = sheet.bbox();
            let m = b.width().max(b.height()) + 1.0;
            vec![
                Point::new(b.min.x - m, b.min.y - m),
                Point::new(b.max.x + m, b.min.y - m),
                Point::new(b.max.x + m, b.max.y + m),
                Point::new(b.min.x - m, b.max.y + m),
            ]
        },
        vec![sheet.outer().to_vec()],
    );
    interiors_meet(c, &outside)
        || sheet
            .holes()
            .iter()
            .any(|h| interiors_meet(c, &Shape::new(h.clone(), vec![])))
}

/// Places a part's nesting geometry by a placement transform.
pub fn placed_geometry(
    g: &PartGeometry,
    mirrored: bool,
    rotation: f64,
    x: f64,
    y: f64,
) -> PartGeometry {
    g.transformed(&Affine::placement(mirrored, rotation, x, y))
}

/// True when two placed geometries overlap or come closer than `required` (exact).
pub fn geometries_conflict(a: &PartGeometry, b: &PartGeometry, required: f64) -> bool {
    a.components().iter().any(|x| {
        b.components().iter().any(|y| {
            x.bbox().near(&y.bbox(), required) && shapes_conflict(x, y, required).is_some()
        })
    })
}
