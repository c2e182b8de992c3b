//! Polygon booleans and offsets on `Shape`s, by `i_overlay` (the boolean engine `geo` uses).
//! `i_overlay` snaps coordinates to an integer grid chosen from the inputs' extent (about a
//! millionth of a millimetre on a sheet), so results are exact up to that snapping: callers that
//! need a guarantee (remnants clear of parts) keep a margin and check the result exactly with
//! `exact`/`nest2d::verify`.

use super::{Point, Shape};
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay_rule::OverlayRule;
use i_overlay::float::overlay::FloatOverlay;
use i_overlay::float::single::SingleFloatOverlay;
use i_overlay::mesh::float::outline::offset::OutlineOffset;
use i_overlay::mesh::float::style::{LineJoin, OutlineStyle};

type Contour = Vec<[f64; 2]>;
type Polygon = Vec<Contour>;

/// Rounded joins are made of chords that each turn at most this many radians; a chord then
/// falls short of the true arc by at most r(1 - cos(0.05)) = 0.00125 r, which `offset`
/// compensates.
const ARC_STEP: f64 = 0.1;

fn to_polygons(shapes: &[Shape]) -> Vec<Polygon> {
    shapes
        .iter()
        .map(|s| {
            s.rings()
                .map(|r| r.iter().map(|p| [p.x, p.y]).collect())
                .collect()
        })
        .collect()
}

/// The result's polygons as shapes, without the rings too small to be material (snapping can
/// leave slivers of no area).
fn from_polygons(polygons: Vec<Polygon>) -> Vec<Shape> {
    let ring =
        |c: Contour| -> Vec<Point> { c.into_iter().map(|[x, y]| Point::new(x, y)).collect() };
    polygons
        .into_iter()
        .filter_map(|mut p| {
            if p.is_empty() {
                return None;
            }
            let outer = ring(p.remove(0));
            if outer.len() < 3 || super::exact::signed_area(&outer).abs() < 1e-9 {
                return None;
            }
            let holes = p
                .into_iter()
                .map(ring)
                .filter(|h| h.len() >= 3 && super::exact::signed_area(h).abs() >= 1e-9)
                .collect();
            Some(Shape::new(outer, holes))
        })
        .collect()
}

/// Everything covered by any of `shapes`.
pub fn union(shapes: &[Shape]) -> Vec<Shape> {
    if shapes.is_empty() {
        return Vec::new();
    }
    let subject = to_polygons(shapes);
    from_polygons(
        FloatOverlay::with_subj(&subject).overlay(OverlayRule::Subject, FillRule::NonZero),
    )
}

/// `subject` less everything covered by `clip`.
pub fn difference(subject: &[Shape], clip: &[Shape]) -> Vec<Shape> {
    if clip.is_empty() {
        return subject.to_vec();
    }
    let (s, c) = (to_polygons(subject), to_polygons(clip));
    from_polygons(s.overlay(&c, OverlayRule::Difference, FillRule::NonZero))
}

/// What `a` and `b` both cover.
pub fn intersection(a: &[Shape], b: &[Shape]) -> Vec<Shape> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let (s, c) = (to_polygons(a), to_polygons(b));
    from_polygons(s.overlay(&c, OverlayRule::Intersect, FillRule::NonZero))
}

/// How an offset treats the corners it turns around.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corners {
    /// Arcs: the offset is the true distance everywhere (what a clearance needs).
    Round,
    /// Mitres: straight edges extended to meet, for corners of 85 degrees and more; sharper
    /// ones are cut off square (bevelled), so no long spike grows from an acute corner.
    Sharp,
}

/// `shapes` grown by `distance` (shrunk when negative) with round corners. Growing reaches at
/// least `distance` everywhere: the chords of the round joins are pushed out to lie outside the
/// true arc. Shrinking stays within `distance` of the true inward offset.
pub fn offset(shapes: &[Shape], distance: f64) -> Vec<Shape> {
    offset_with(shapes, distance, Corners::Round)
}

/// `offset` with the corners asked for.
pub fn offset_with(shapes: &[Shape], distance: f64, corners: Corners) -> Vec<Shape> {
    if shapes.is_empty() || distance == 0.0 {
        return shapes.to_vec();
    }
    // chords of an arc of radius r' = r / cos(ARC_STEP/2) stay outside the arc of radius r; the
    // near-straight corners i_overlay bevels are covered by the same factor
    let d = if distance > 0.0 {
        distance / (ARC_STEP / 2.0).cos() * 1.001
    } else {
        distance
    };
    let join = match corners {
        Corners::Round => LineJoin::Round(ARC_STEP),
        Corners::Sharp => LineJoin::Miter(85f64.to_radians()),
    };
    let style = OutlineStyle::new(d).line_join(join);
    let mut out = Vec::new();
    for polygon in to_polygons(shapes) {
        out.extend(from_polygons(polygon.outline(&style)));
    }
    // separate outlines may now overlap
    if out.len() > 1 {
        union(&out)
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(shapes: &[Shape]) -> f64 {
        shapes.iter().map(Shape::area).sum()
    }

    #[test]
    fn difference_of_squares_leaves_an_l() {
        let big = Shape::rectangle(10.0, 10.0);
        let corner = Shape::rectangle(5.0, 5.0).translate(5.0, 5.0);
        let d = difference(&[big], &[corner]);
        assert_eq!(d.len(), 1);
        assert!((area(&d) - 75.0).abs() < 1e-6, "{}", area(&d));
    }

    #[test]
    fn a_hole_inside_stays_a_hole() {
        let big = Shape::rectangle(10.0, 10.0);
        let inner = Shape::rectangle(2.0, 2.0).translate(4.0, 4.0);
        let d = difference(&[big], &[inner]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].holes().len(), 1);
        assert!((area(&d) - 96.0).abs() < 1e-6);
    }

    #[test]
    fn growing_a_square_reaches_the_distance_everywhere() {
        let sq = Shape::rectangle(10.0, 10.0);
        let grown = offset(std::slice::from_ref(&sq), 2.0);
        assert_eq!(grown.len(), 1);
        // every vertex of the grown outline is at least 2 from the square
        let segs = crate::geometry::exact::SegmentSet::from_rings(sq.rings());
        let ring = crate::geometry::exact::SegmentSet::from_rings(grown[0].rings());
        let d = segs.min_dist(&ring, f64::INFINITY, 0.0);
        assert!(d >= 2.0 - 1e-6, "{d}");
        // and not much more: area close to the true rounded square's
        let truth = 100.0 + 4.0 * 10.0 * 2.0 + std::f64::consts::PI * 4.0;
        assert!(
            (area(&grown) - truth).abs() < 0.02 * truth,
            "{}",
            area(&grown)
        );
        // shrinking gives back about the square
        let back = offset(&grown, -2.0);
        assert!((area(&back) - 100.0).abs() < 1.0, "{}", area(&back));
        // sharp corners grow a square into a square
        let sharp = offset_with(&[sq], 2.0, Corners::Sharp);
        let b = sharp[0].bbox();
        assert!((area(&sharp) - b.width() * b.height()).abs() < 1e-6 * area(&sharp));
        assert!(b.width() >= 14.0 && b.width() < 14.05, "{b:?}");
    }

    #[test]
    fn union_merges_overlapping_squares() {
        let a = Shape::rectangle(4.0, 4.0);
        let b = Shape::rectangle(4.0, 4.0).translate(2.0, 0.0);
        let u = union(&[a, b]);
        assert_eq!(u.len(), 1);
        assert!((area(&u) - 24.0).abs() < 1e-6);
        let i = intersection(&u, &[Shape::rectangle(1.0, 1.0)]);
        assert!((area(&i) - 1.0).abs() < 1e-6);
    }
}
