//! Exact predicates on vector geometry: segment distances, crossings, point in polygon.
//! These are the final word on whether a layout is valid (rasters only guide the search).

use super::primitives::{BBox, Point};

/// Signed area of a ring (positive when counter-clockwise).
pub fn signed_area(ring: &[Point]) -> f64 {
    let n = ring.len();
    let mut s = 0.0;
    for i in 0..n {
        let a = ring[i];
        let b = ring[(i + 1) % n];
        s += a.x * b.y - b.x * a.y;
    }
    0.5 * s
}

/// Distance from point p to segment ab.
pub fn point_segment_dist(p: Point, a: Point, b: Point) -> f64 {
    let ab = b.sub(a);
    let len2 = ab.dot(ab);
    if len2 == 0.0 {
        return p.dist(a);
    }
    let t = (p.sub(a).dot(ab) / len2).clamp(0.0, 1.0);
    p.dist(a.add(ab.scale(t)))
}

fn orient(a: Point, b: Point, c: Point) -> f64 {
    b.sub(a).cross(c.sub(a))
}

/// True when segments ab and cd properly cross or touch.
pub fn segments_intersect(a: Point, b: Point, c: Point, d: Point) -> bool {
    let d1 = orient(c, d, a);
    let d2 = orient(c, d, b);
    let d3 = orient(a, b, c);
    let d4 = orient(a, b, d);
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return true;
    }
    let on = |p: Point, q: Point, r: Point, o: f64| {
        o == 0.0
            && r.x >= p.x.min(q.x)
            && r.x <= p.x.max(q.x)
            && r.y >= p.y.min(q.y)
            && r.y <= p.y.max(q.y)
    };
    on(c, d, a, d1) || on(c, d, b, d2) || on(a, b, c, d3) || on(a, b, d, d4)
}

/// True when segments ab and cd cross at a point interior to both (not a shared endpoint or touch).
pub fn segments_cross_properly(a: Point, b: Point, c: Point, d: Point) -> bool {
    let d1 = orient(c, d, a);
    let d2 = orient(c, d, b);
    let d3 = orient(a, b, c);
    let d4 = orient(a, b, d);
    ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
}

/// Minimum distance between segments ab and cd (0 when they intersect).
pub fn segment_segment_dist(a: Point, b: Point, c: Point, d: Point) -> f64 {
    if segments_intersect(a, b, c, d) {
        return 0.0;
    }
    point_segment_dist(a, c, d)
        .min(point_segment_dist(b, c, d))
        .min(point_segment_dist(c, a, b))
        .min(point_segment_dist(d, a, b))
}

/// Even-odd point-in-ring test (boundary points may go either way).
pub fn point_in_ring(p: Point, ring: &[Point]) -> bool {
    let n = ring.len();
    let mut inside = false;
    let mut j = n - 1;
    for i in 0..n {
        let (a, b) = (ring[i], ring[j]);
        if (a.y > p.y) != (b.y > p.y) {
            let x = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y);
            if p.x < x {
                inside = !inside;
            }
        }
        j = i;
    }
    inside
}

/// Segments of a set of rings, with a bounding box each, sorted by min x for sweeps.
pub struct SegmentSet {
    segs: Vec<(Point, Point, BBox)>,
    /// Widest segment, to bound how far left of a query a relevant segment can start.
    max_w: f64,
}

impl SegmentSet {
    pub fn from_rings<'a>(rings: impl IntoIterator<Item = &'a [Point]>) -> Self {
        let mut segs = Vec::new();
        for r in rings {
            let n = r.len();
            for i in 0..n {
                let (a, b) = (r[i], r[(i + 1) % n]);
                segs.push((a, b, BBox::of([a, b])));
            }
        }
        segs.sort_by(|p, q| p.2.min.x.total_cmp(&q.2.min.x));
        let max_w = segs.iter().map(|s| s.2.width()).fold(0.0, f64::max);
        SegmentSet { segs, max_w }
    }

    /// Minimum distance between any segment of self and any of other, stopping early
    /// once a distance below `stop_below` is found. Returns +inf when no pair comes within `cutoff`.
    pub fn min_dist(&self, other: &SegmentSet, cutoff: f64, stop_below: f64) -> f64 {
        let mut best = f64::INFINITY;
        for (a, b, ba) in &self.segs {
            // other's segments are sorted by min.x; one starting left of this bound ends left of `ba`.
            let lo = ba.min.x - cutoff - other.max_w;
            let start = other.segs.partition_point(|s| s.2.min.x < lo);
            for (c, d, bc) in &other.segs[start..] {
                if bc.min.x > ba.max.x + cutoff {
                    break;
                }
                if !ba.near(bc, cutoff) {
                    continue;
                }
                let dd = segment_segment_dist(*a, *b, *c, *d);
                if dd < best {
                    best = dd;
                    if best < stop_below {
                        return best;
                    }
                }
            }
        }
        best
    }
}

/// Index pairs (i, j) of segments in `rings` that cross or overlap, other than neighbours
/// sharing an endpoint in the same ring. Used to reject self-crossing outlines.
pub fn find_crossing(rings: &[Vec<Point>]) -> Option<Point> {
    struct S {
        a: Point,
        b: Point,
        bb: BBox,
        ring: usize,
        idx: usize,
        len: usize,
    }
    let mut segs = Vec::new();
    for (ri, r) in rings.iter().enumerate() {
        let n = r.len();
        for i in 0..n {
            let (a, b) = (r[i], r[(i + 1) % n]);
            segs.push(S {
                a,
                b,
                bb: BBox::of([a, b]),
                ring: ri,
                idx: i,
                len: n,
            });
        }
    }
    segs.sort_by(|p, q| p.bb.min.x.total_cmp(&q.bb.min.x));
    let mut active: Vec<usize> = Vec::new();
    for i in 0..segs.len() {
        let s = &segs[i];
        active.retain(|&j| segs[j].bb.max.x >= s.bb.min.x);
        for &j in &active {
            let t = &segs[j];
            if !s.bb.near(&t.bb, 0.0) {
                continue;
            }
            let adjacent =
                s.ring == t.ring && ((s.idx + 1) % s.len == t.idx || (t.idx + 1) % t.len == s.idx);
            if adjacent {
                // Neighbours share one endpoint; they are bad only if they fold back onto each other.
                let (shared, p, q) = if (s.idx + 1) % s.len == t.idx {
                    (s.b, s.a, t.b)
                } else {
                    (s.a, s.b, t.a)
                };
                let u = p.sub(shared);
                let v = q.sub(shared);
                if u.cross(v).abs() <= 1e-12 * u.norm() * v.norm() && u.dot(v) > 0.0 {
                    return Some(shared);
                }
                continue;
            }
            if segments_intersect(s.a, s.b, t.a, t.b) {
                return Some(intersection_point(s.a, s.b, t.a, t.b));
            }
        }
        active.push(i);
    }
    None
}

fn intersection_point(a: Point, b: Point, c: Point, d: Point) -> Point {
    let r = b.sub(a);
    let s = d.sub(c);
    let den = r.cross(s);
    if den.abs() < 1e-300 {
        return a;
    }
    let t = c.sub(a).cross(s) / den;
    a.add(r.scale(t))
}
