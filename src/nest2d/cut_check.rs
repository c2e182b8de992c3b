//! The verifier's one exception to the spacing: parts along a common cut (common-line cutting).
//!
//! Two parts may come closer than their spacing only where they share a reported cut. Exactly:
//! - a cut is real: every part it lists has edges on the line half the CommonCutGap to one side
//!   of it, both sides have parts, and each side's edges cover the cut from end to end (up to
//!   gaps no longer than the CommonCutGap where another reported cut crosses it: a grid's
//!   crossings);
//! - a pair closer than its spacing is valid only when some cut that lists both separates them
//!   (each lies wholly on its own side, at least half the gap from the line, so they cannot
//!   overlap); every stretch of either boundary that comes closer than the spacing to the other
//!   part lies within the spacing of a cut that lists both; and every stretch where they meet
//!   at the gap (touch) lies on such a cut: a cut reported shorter than the edges the parts
//!   share is refused.
//!
//! Everything here is on the vector geometry, segment by segment; nothing is sampled.

use super::model::CommonCut;
use super::verify::{PlacedShape, TOLERANCE};
use crate::geometry::exact::segment_segment_dist;
use crate::geometry::{BBox, Point};

/// The cuts of one layout and the gap its parts keep along them.
#[derive(Clone, Copy)]
pub struct SharedCuts<'a> {
    pub cuts: &'a [CommonCut],
    pub gap: f64,
}

impl SharedCuts<'_> {
    pub const NONE: SharedCuts<'static> = SharedCuts {
        cuts: &[],
        gap: 0.0,
    };

    /// The cuts that list both placements `i` and `j`.
    pub fn between(&self, i: usize, j: usize) -> Vec<&CommonCut> {
        self.cuts
            .iter()
            .filter(|c| c.parts.contains(&i) && c.parts.contains(&j))
            .collect()
    }
}

/// A cut's line: where it starts, its unit direction and normal, its length.
struct Line {
    origin: Point,
    dir: Point,
    normal: Point,
    length: f64,
}

impl Line {
    fn of(cut: &CommonCut) -> Option<Line> {
        let d = cut.to.sub(cut.from);
        let length = d.norm();
        (length > TOLERANCE).then(|| {
            let dir = d.scale(1.0 / length);
            Line {
                origin: cut.from,
                dir,
                normal: Point::new(-dir.y, dir.x),
                length,
            }
        })
    }
    /// Signed distance from the line (positive on the normal's side).
    fn offset(&self, p: Point) -> f64 {
        p.sub(self.origin).dot(self.normal)
    }
    /// Position along the line from the cut's start.
    fn along(&self, p: Point) -> f64 {
        p.sub(self.origin).dot(self.dir)
    }
    /// Where another cut crosses this one's line within its length (distance from its
    /// start), if it does.
    fn crossing(&self, other: &CommonCut) -> Option<f64> {
        let (o1, o2) = (self.offset(other.from), self.offset(other.to));
        if (o1 > TOLERANCE && o2 > TOLERANCE) || (o1 < -TOLERANCE && o2 < -TOLERANCE) || o1 == o2 {
            return None;
        }
        let (a1, a2) = (self.along(other.from), self.along(other.to));
        let t = a1 + (a2 - a1) * o1 / (o1 - o2);
        (-TOLERANCE..=self.length + TOLERANCE)
            .contains(&t)
            .then_some(t)
    }
    /// The least and greatest offset of a placed part's vertices.
    fn extent(&self, s: &PlacedShape) -> (f64, f64) {
        vertices(s).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            let o = self.offset(p);
            (lo.min(o), hi.max(o))
        })
    }
    /// Which side a part lies on, wholly and at least `half_gap` from the line: +1, -1, or
    /// None when it reaches closer or across.
    fn side(&self, s: &PlacedShape, half_gap: f64) -> Option<f64> {
        let (lo, hi) = self.extent(s);
        if lo >= half_gap - TOLERANCE {
            Some(1.0)
        } else if hi <= -half_gap + TOLERANCE {
            Some(-1.0)
        } else {
            None
        }
    }
}

fn vertices(s: &PlacedShape) -> impl Iterator<Item = Point> + '_ {
    s.geometry
        .components()
        .iter()
        .flat_map(|c| c.rings().flat_map(|r| r.iter().copied()))
}

fn segments(s: &PlacedShape) -> Vec<(Point, Point)> {
    let mut out = Vec::new();
    for c in s.geometry.components() {
        for r in c.rings() {
            let n = r.len();
            out.extend((0..n).map(|i| (r[i], r[(i + 1) % n])));
        }
    }
    out
}

/// Checks that a cut is real (see the module's comment; `all` is every cut of the layout, for
/// the crossings); the error says what is wrong.
pub fn check_cut(
    cut: &CommonCut,
    all: &[CommonCut],
    parts: &[PlacedShape],
    gap: f64,
) -> Result<(), String> {
    let (line, covered) = edges_along(cut, parts, gap)?;
    let crossings: Vec<f64> = all
        .iter()
        .filter(|c| *c != cut)
        .filter_map(|c| line.crossing(c))
        .collect();
    let past = |d: f64| {
        Err(format!(
            "the common cut runs {d:.4} mm past the parts' edges"
        ))
    };
    for side in covered {
        if side.is_empty() {
            return Err("a common cut with parts on one side only".into());
        }
        // from its start, with no stretch uncovered but the gap where another cut crosses
        let mut reached = 0.0f64;
        for (s, e) in side {
            let hole = s - reached;
            if hole > TOLERANCE {
                let bridged = reached > TOLERANCE
                    && hole <= gap + TOLERANCE
                    && crossings
                        .iter()
                        .any(|&t| t >= reached - TOLERANCE && t <= s + TOLERANCE);
                if !bridged {
                    return past(hole);
                }
            }
            reached = reached.max(e);
        }
        if reached < line.length - TOLERANCE {
            return past(line.length - reached);
        }
    }
    Ok(())
}

/// How much cutting a common cut saves: the length of the parts' edges along it (both sides,
/// each stretch once) less the cut's own length. 0 for a cut that is not real.
pub fn saving(cut: &CommonCut, parts: &[PlacedShape], gap: f64) -> f64 {
    let Ok((line, covered)) = edges_along(cut, parts, gap) else {
        return 0.0;
    };
    let edges: f64 = covered
        .iter()
        .map(|side| {
            // the union of the side's intervals (sorted)
            let (mut total, mut reached) = (0.0, 0.0f64);
            for &(s, e) in side {
                total += (e - s.max(reached)).max(0.0);
                reached = reached.max(e);
            }
            total
        })
        .sum();
    edges - line.length
}

/// Stretches along a cut's line: (from, to) distances from its start, sorted by `from`.
type Intervals = Vec<(f64, f64)>;

/// The cut's line, and for each side (offset below, above) the intervals along it, sorted,
/// where the listed parts' edges lie on it half the gap away. Errors say why the cut is false.
fn edges_along(
    cut: &CommonCut,
    parts: &[PlacedShape],
    gap: f64,
) -> Result<(Line, [Intervals; 2]), String> {
    let line = Line::of(cut).ok_or("a common cut of no length")?;
    let half = gap / 2.0;
    let mut covered: [Intervals; 2] = [Vec::new(), Vec::new()];
    for &k in &cut.parts {
        let part = parts
            .get(k)
            .ok_or_else(|| format!("a common cut lists placement {k}, which is not there"))?;
        let side = line.side(part, half).ok_or_else(|| {
            format!(
                "{} reaches across the common cut it is listed on",
                part.label
            )
        })?;
        let on_line = |p: Point| (line.offset(p) - side * half).abs() <= 10.0 * TOLERANCE;
        let mut along = Vec::new();
        for (a, b) in segments(part) {
            if on_line(a) && on_line(b) {
                let (s, e) = (line.along(a), line.along(b));
                let (s, e) = (s.min(e).max(0.0), s.max(e).min(line.length));
                if e > s + TOLERANCE {
                    along.push((s, e));
                }
            }
        }
        if along.is_empty() {
            return Err(format!(
                "{} has no edge along the common cut it is listed on",
                part.label
            ));
        }
        covered[usize::from(side > 0.0)].extend(along);
    }
    for side in &mut covered {
        side.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok((line, covered))
}

/// True when one of the `shared` cuts separates `p` and `q`: each wholly on its own side, at
/// least half the gap from the line. Only then does `check_pair_along` apply; other pairs keep
/// their spacing.
pub fn separated(p: &PlacedShape, q: &PlacedShape, shared: &[&CommonCut], gap: f64) -> bool {
    shared.iter().filter_map(|c| Line::of(c)).any(|line| {
        matches!(
            (line.side(p, gap / 2.0), line.side(q, gap / 2.0)),
            (Some(a), Some(b)) if a != b
        )
    })
}

/// Checks two parts that share cuts (`shared`, non-empty) at `required` spacing.
pub fn check_pair_along(
    p: &PlacedShape,
    q: &PlacedShape,
    shared: &[&CommonCut],
    required: f64,
    gap: f64,
) -> Result<(), String> {
    if !separated(p, q, shared, gap) {
        return Err("they are not on either side of the common cut they share".into());
    }
    // where they touch (at the gap), only on a cut
    let touch = gap + TOUCH;
    let on_cut = gap / 2.0 + 10.0 * TOUCH;
    near_only_along(p, q, shared, on_cut, touch, "touch")?;
    near_only_along(q, p, shared, on_cut, touch, "touch")?;
    // closer than the spacing only near a cut
    let reach = required + TOLERANCE;
    near_only_along(
        p,
        q,
        shared,
        reach,
        required - TOLERANCE,
        "come closer than the spacing",
    )?;
    near_only_along(
        q,
        p,
        shared,
        reach,
        required - TOLERANCE,
        "come closer than the spacing",
    )
}

/// Parts "touch" along a cut where they are less than this beyond the gap apart (mm): edges
/// placed on either side of a cut by floating-point transforms are the gap apart within 1e-9.
const TOUCH: f64 = 1e-4;

/// Every stretch of `p`'s boundary farther than `reach` from all the shared cuts keeps at
/// least `least` from `q` (`what` names the rule in the error).
fn near_only_along(
    p: &PlacedShape,
    q: &PlacedShape,
    shared: &[&CommonCut],
    reach: f64,
    least: f64,
    what: &str,
) -> Result<(), String> {
    let q_segments = segments(q);
    let q_box = q.geometry.bbox();
    for (a, b) in segments(p) {
        if !BBox::of([a, b]).near(&q_box, least.max(0.0)) {
            continue;
        }
        let mut near_cut: Vec<(f64, f64)> = shared
            .iter()
            .filter_map(|c| capsule_interval(a, b, c.from, c.to, reach))
            .collect();
        for (t0, t1) in complement(&mut near_cut) {
            let (s, e) = (lerp(a, b, t0), lerp(a, b, t1));
            for &(c, d) in &q_segments {
                let dist = segment_segment_dist(s, e, c, d);
                if dist < least {
                    return Err(format!(
                        "they {what} ({dist:.6} mm apart) away from their common cut"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn lerp(a: Point, b: Point, t: f64) -> Point {
    a.add(b.sub(a).scale(t))
}

/// The parameters t in [0, 1] of segment ab within distance r of segment c0c1 (an interval:
/// that set, a capsule, is convex), found as the hull of its three convex pieces' intervals:
/// the two end disks and the rectangle between them.
fn capsule_interval(a: Point, b: Point, c0: Point, c1: Point, r: f64) -> Option<(f64, f64)> {
    let d = b.sub(a);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut take = |s: f64, e: f64| {
        let (s, e) = (s.max(0.0), e.min(1.0));
        if s <= e {
            lo = lo.min(s);
            hi = hi.max(e);
        }
    };
    for c in [c0, c1] {
        let w = a.sub(c);
        let (qa, qb, qc) = (d.dot(d), 2.0 * d.dot(w), w.dot(w) - r * r);
        if qa == 0.0 {
            if qc <= 0.0 {
                take(0.0, 1.0);
            }
            continue;
        }
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let root = disc.sqrt();
            take((-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa));
        }
    }
    let axis = c1.sub(c0);
    let len = axis.norm();
    if len > 0.0 {
        let dir = axis.scale(1.0 / len);
        let nrm = Point::new(-dir.y, dir.x);
        // u(t) = u0 + t du in [0, len], v(t) = v0 + t dv in [-r, r]
        let (u0, du) = (a.sub(c0).dot(dir), d.dot(dir));
        let (v0, dv) = (a.sub(c0).dot(nrm), d.dot(nrm));
        let mut span = Some((0.0f64, 1.0f64));
        for (x0, dx, min, max) in [(u0, du, 0.0, len), (v0, dv, -r, r)] {
            span = span.and_then(|(s, e)| clip(x0, dx, min, max, s, e));
        }
        if let Some((s, e)) = span {
            take(s, e);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// The part of [s, e] where x0 + t dx lies in [min, max].
fn clip(x0: f64, dx: f64, min: f64, max: f64, s: f64, e: f64) -> Option<(f64, f64)> {
    if dx == 0.0 {
        return (x0 >= min && x0 <= max).then_some((s, e));
    }
    let (t0, t1) = ((min - x0) / dx, (max - x0) / dx);
    let (t0, t1) = (t0.min(t1), t0.max(t1));
    let (s, e) = (s.max(t0), e.min(t1));
    (s <= e).then_some((s, e))
}

/// [0, 1] less the union of `intervals`.
fn complement(intervals: &mut [(f64, f64)]) -> Vec<(f64, f64)> {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut from = 0.0;
    for &(s, e) in intervals.iter() {
        if s > from {
            out.push((from, s));
        }
        from = f64::max(from, e);
    }
    if from < 1.0 {
        out.push((from, 1.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};

    fn rect(label: &str, x: f64, y: f64, w: f64, h: f64) -> PlacedShape {
        PlacedShape {
            label: label.into(),
            geometry: PartGeometry::single(Shape::rectangle(w, h).translate(x, y)),
            spacing: 5.0,
        }
    }

    fn cut(x1: f64, y1: f64, x2: f64, y2: f64, parts: &[usize]) -> CommonCut {
        CommonCut {
            from: Point::new(x1, y1),
            to: Point::new(x2, y2),
            parts: parts.to_vec(),
        }
    }

    #[test]
    fn a_cut_between_two_rectangles_is_real_and_allows_them_together() {
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 5.0),
            rect("b", 10.5, 0.0, 10.0, 5.0),
        ];
        let c = cut(10.25, 0.0, 10.25, 5.0, &[0, 1]);
        check_cut(&c, &[], &parts, 0.5).unwrap();
        check_pair_along(&parts[0], &parts[1], &[&c], 5.0, 0.5).unwrap();
        // two 5 mm edges cut once: 5 mm saved
        assert!((saving(&c, &parts, 0.5) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn a_cut_past_the_edges_or_off_the_gap_is_refused() {
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 5.0),
            rect("b", 10.5, 0.0, 10.0, 5.0),
        ];
        assert!(check_cut(&cut(10.25, 0.0, 10.25, 7.0, &[0, 1]), &[], &parts, 0.5).is_err());
        assert!(check_cut(&cut(10.1, 0.0, 10.1, 5.0, &[0, 1]), &[], &parts, 0.5).is_err());
        assert!(check_cut(&cut(10.25, 0.0, 10.25, 5.0, &[0]), &[], &parts, 0.5).is_err());
    }

    #[test]
    fn parts_touching_beyond_their_cut_are_refused() {
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 5.0),
            rect("b", 10.0, 0.0, 10.0, 5.0),
        ];
        let short = cut(10.0, 0.0, 10.0, 1.0, &[0, 1]);
        // the cut covers only 1 mm of the 5 mm edge they share
        assert!(check_pair_along(&parts[0], &parts[1], &[&short], 5.0, 0.0).is_err());
        let full = cut(10.0, 0.0, 10.0, 5.0, &[0, 1]);
        check_pair_along(&parts[0], &parts[1], &[&full], 5.0, 0.0).unwrap();
    }

    #[test]
    fn parts_closer_than_the_spacing_away_from_their_cut_are_refused() {
        // b shares 2 mm of edge with a at the gap, then steps back to 1.5 mm from a: closer
        // than the 5 mm spacing all along a's right edge
        let stepped = [
            (10.5, 0.0),
            (20.0, 0.0),
            (20.0, 20.0),
            (12.0, 20.0),
            (12.0, 2.0),
            (10.5, 2.0),
        ];
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 20.0),
            PlacedShape {
                label: "b".into(),
                geometry: PartGeometry::single(Shape::new(
                    stepped.iter().map(|&(x, y)| Point::new(x, y)).collect(),
                    vec![],
                )),
                spacing: 5.0,
            },
        ];
        let c = cut(10.25, 0.0, 10.25, 2.0, &[0, 1]);
        check_cut(&c, &[], &parts, 0.5).unwrap();
        let err = check_pair_along(&parts[0], &parts[1], &[&c], 5.0, 0.5).unwrap_err();
        assert!(err.contains("closer than the spacing"), "{err}");
        // at 1 mm spacing the step keeps its distance
        check_pair_along(&parts[0], &parts[1], &[&c], 1.0, 0.5).unwrap();
    }

    #[test]
    fn overlapping_parts_are_refused_whatever_cut_lists_them() {
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 5.0),
            rect("b", 9.0, 0.0, 10.0, 5.0),
        ];
        let c = cut(9.5, 0.0, 9.5, 5.0, &[0, 1]);
        assert!(check_pair_along(&parts[0], &parts[1], &[&c], 5.0, 0.0).is_err());
        assert!(check_cut(&c, &[], &parts, 0.0).is_err());
    }

    #[test]
    fn a_grid_line_may_bridge_the_gap_where_another_cut_crosses() {
        // 2 x 2 rectangles 10 x 5, gap 1: the vertical line runs through the crossing
        let parts = [
            rect("a", 0.0, 0.0, 10.0, 5.0),
            rect("b", 11.0, 0.0, 10.0, 5.0),
            rect("c", 0.0, 6.0, 10.0, 5.0),
            rect("d", 11.0, 6.0, 10.0, 5.0),
        ];
        let vertical = cut(10.5, 0.0, 10.5, 11.0, &[0, 1, 2, 3]);
        let horizontal = cut(0.0, 5.5, 21.0, 5.5, &[0, 1, 2, 3]);
        let both = [vertical.clone(), horizontal.clone()];
        check_cut(&vertical, &both, &parts, 1.0).unwrap();
        check_cut(&horizontal, &both, &parts, 1.0).unwrap();
        // the gap is bridged only where another cut crosses
        assert!(check_cut(&vertical, &[], &parts, 1.0).is_err());
        // the diagonal pair is close only at the crossing, within both cuts' reach
        check_pair_along(&parts[0], &parts[3], &[&vertical, &horizontal], 5.0, 1.0).unwrap();
        // a gap wider than the CommonCutGap is not bridged
        assert!(check_cut(&vertical, &both, &parts, 0.5).is_err());
    }

    #[test]
    fn capsule_interval_is_the_stretch_within_reach() {
        // a horizontal segment through a vertical cut's capsule of radius 1
        let (s, e) = capsule_interval(
            Point::new(-5.0, 2.0),
            Point::new(5.0, 2.0),
            Point::new(0.0, 0.0),
            Point::new(0.0, 4.0),
            1.0,
        )
        .unwrap();
        assert!((s - 0.4).abs() < 1e-12 && (e - 0.6).abs() < 1e-12);
        // beyond the cut's end, the disk decides
        let (s, e) = capsule_interval(
            Point::new(-5.0, 4.5),
            Point::new(5.0, 4.5),
            Point::new(0.0, 0.0),
            Point::new(0.0, 4.0),
            1.0,
        )
        .unwrap();
        let half = (1.0f64 - 0.25).sqrt() / 10.0;
        assert!((s - (0.5 - half)).abs() < 1e-12 && (e - (0.5 + half)).abs() < 1e-12);
        assert!(capsule_interval(
            Point::new(-5.0, 6.0),
            Point::new(5.0, 6.0),
            Point::new(0.0, 0.0),
            Point::new(0.0, 4.0),
            1.0
        )
        .is_none());
    }
}
