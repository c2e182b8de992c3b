//! The canonical frame: the search always fills from the bottom-left along +x. Other origins and
//! directions are reflections of the sheet, and a NestingAngleDegrees turns it further
//! (canonical p' = R(-angle) D p + e); parts are searched in their reflected and turned shapes,
//! so a canonical placement maps back to a rigid placement of the original part.

use super::model::{Direction, Origin, Settings};
use crate::geometry::{exact::signed_area, Affine, PartGeometry, Point, Shape};

#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Linear part: orthogonal (a signed permutation, turned by the fill angle), so its inverse
    /// is its transpose.
    pub d: Affine,
    /// Offset that puts the canonical sheet's box at the origin.
    pub e: Point,
    /// Whether the fill angle turns the sheet's axes off the canonical ones: the sheet's edges
    /// are then not canonical rows and columns.
    turned: bool,
}

impl Frame {
    /// The frame of a sheet whose bounding box is `sheet_w` x `sheet_h`, as the settings'
    /// NestingDirection, NestingOrigin and NestingAngleDegrees ask.
    pub fn new(s: &Settings, sheet_w: f64, sheet_h: f64) -> Frame {
        let (fx, fy) = match s.origin {
            Origin::BottomLeft => (1.0, 1.0),
            Origin::TopLeft => (1.0, -1.0),
            Origin::TopRight => (-1.0, -1.0),
            Origin::BottomRight => (-1.0, 1.0),
        };
        let flip = Affine::scale(fx, fy);
        let reflected = match s.direction {
            Direction::X => flip,
            // transpose after the flip: the sheet's Y becomes the canonical fill direction
            Direction::Y => Affine {
                a: 0.0,
                b: 1.0,
                c: 1.0,
                d: 0.0,
                tx: 0.0,
                ty: 0.0,
            }
            .then_after(&flip),
        };
        // after the reflection the origin corner is the bottom left and the fill runs along +x;
        // turning by -angle makes the direction `angle` above +x the canonical +x, so the fill
        // still starts at the origin corner (the canonically leftmost one for 0 <= angle < 90)
        let angle = s.fill_angle.degrees();
        let d = Affine::rotate_deg(-angle).then_after(&reflected);
        let corners = turned_corners(&d, sheet_w, sheet_h);
        let min_x = corners.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let min_y = corners.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        Frame {
            d,
            e: Point::new(-min_x, -min_y),
            turned: angle != 0.0,
        }
    }
    /// Whether the sheet's edges lie askew in the canonical frame (a fill angle is set).
    pub fn is_turned(&self) -> bool {
        self.turned
    }
    /// Sheet point -> canonical point.
    pub fn to_canonical(&self) -> Affine {
        Affine::translate(self.e.x, self.e.y).then_after(&self.d)
    }
    /// The linear part only (for part shapes, which keep their own origin).
    pub fn linear(&self) -> Affine {
        self.d
    }
    /// Canonical translation of a reflected part -> translation of the original part in sheet
    /// coordinates: D^-1 (t - e).
    pub fn translation_back(&self, t: Point) -> Point {
        let inv = Affine {
            a: self.d.a,
            b: self.d.c,
            c: self.d.b,
            d: self.d.d,
            tx: 0.0,
            ty: 0.0,
        };
        inv.apply(t.sub(self.e))
    }
    /// How far `placed` (a shape in sheet coordinates) reaches along the fill direction from the
    /// sheet's start: the used length it alone would make.
    pub fn reach(&self, placed: &PartGeometry) -> f64 {
        placed.transformed(&self.to_canonical()).bbox().max.x
    }
    /// Whether `other` maps the sheet's axes as this frame does (the same direction, origin and
    /// fill angle; the offset may differ with the sheet's size).
    pub fn same_axes(&self, other: &Frame) -> bool {
        let (p, q) = (&self.d, &other.d);
        [(p.a, q.a), (p.b, q.b), (p.c, q.c), (p.d, q.d)]
            .iter()
            .all(|(x, y)| (x - y).abs() <= 1e-12)
    }
    /// Canonical extent (length along the fill direction, height across it) of a sheet of this
    /// size: the box of its turned corners. The linear part alone decides it, so a frame built
    /// for one sheet size (the resolution's 1 x 1) answers for any.
    pub fn extent(&self, sheet_w: f64, sheet_h: f64) -> (f64, f64) {
        let corners = turned_corners(&self.d, sheet_w, sheet_h);
        let span = |f: fn(&Point) -> f64| {
            let (lo, hi) = corners
                .iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            hi - lo
        };
        (span(|p| p.x), span(|p| p.y))
    }
    /// The area of `material` (a sheet, in sheet coordinates) that lies before `used` along the
    /// fill direction: what a last sheet cut off at its used length counts.
    pub fn area_before(&self, material: &Shape, used: f64) -> f64 {
        let t = self.to_canonical();
        material
            .rings()
            .map(|ring| {
                let canonical: Vec<Point> = ring.iter().map(|p| t.apply(*p)).collect();
                signed_area(&clip_left_of(&canonical, used))
            })
            .sum::<f64>()
            // the rings' orientations give the holes their sign; a reflection flips them all
            .abs()
    }
}

/// A `sheet_w` x `sheet_h` sheet's corners under the linear part `d`.
fn turned_corners(d: &Affine, sheet_w: f64, sheet_h: f64) -> [Point; 4] {
    [
        Point::new(0.0, 0.0),
        Point::new(sheet_w, 0.0),
        Point::new(0.0, sheet_h),
        Point::new(sheet_w, sheet_h),
    ]
    .map(|p| d.apply(p))
}

/// The part of a ring (any simple polygon) with x <= `limit` (Sutherland-Hodgman against one
/// half-plane: a non-convex ring may come back with zero-width bridges, which add no area).
fn clip_left_of(ring: &[Point], limit: f64) -> Vec<Point> {
    let mut out = Vec::with_capacity(ring.len() + 2);
    for (i, &p) in ring.iter().enumerate() {
        let q = ring[(i + 1) % ring.len()];
        let (p_in, q_in) = (p.x <= limit, q.x <= limit);
        if p_in {
            out.push(p);
        }
        if p_in != q_in {
            let f = (limit - p.x) / (q.x - p.x);
            out.push(Point::new(limit, p.y + f * (q.y - p.y)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest2d::model::FillAngle;

    fn settings(direction: Direction, origin: Origin, angle: f64) -> Settings {
        Settings {
            direction,
            origin,
            fill_angle: FillAngle::new(angle).unwrap(),
            ..Settings::default()
        }
    }

    #[test]
    fn a_turned_frame_starts_at_the_origin_corner_and_fills_along_the_angle() {
        for origin in [
            Origin::BottomLeft,
            Origin::TopLeft,
            Origin::TopRight,
            Origin::BottomRight,
        ] {
            for direction in [Direction::X, Direction::Y] {
                let f = Frame::new(&settings(direction, origin, 30.0), 200.0, 100.0);
                let t = f.to_canonical();
                let corner = match origin {
                    Origin::BottomLeft => Point::new(0.0, 0.0),
                    Origin::TopLeft => Point::new(0.0, 100.0),
                    Origin::TopRight => Point::new(200.0, 100.0),
                    Origin::BottomRight => Point::new(200.0, 0.0),
                };
                // the origin corner is the sheet's first point along the fill
                let c = t.apply(corner);
                assert!(c.x.abs() < 1e-9, "{origin:?} {direction:?}: {c:?}");
                // the fill direction, back in the sheet, leaves the corner at 30 degrees from
                // the NestingDirection axis, into the sheet
                let along = f.translation_back(f.e.add(Point::new(1.0, 0.0)));
                let (main, other) = match direction {
                    Direction::X => (along.x.abs(), along.y.abs()),
                    Direction::Y => (along.y.abs(), along.x.abs()),
                };
                assert!((main - 30f64.to_radians().cos()).abs() < 1e-12);
                assert!((other - 0.5).abs() < 1e-12);
                let inside = corner.add(along.scale(10.0));
                assert!(
                    (0.0..=200.0).contains(&inside.x) && (0.0..=100.0).contains(&inside.y),
                    "{origin:?} {direction:?}: {inside:?}"
                );
            }
        }
    }

    #[test]
    fn the_area_before_a_length_is_the_sheet_clipped_across_the_fill() {
        let sheet = Shape::rectangle(200.0, 100.0);
        let square = Frame::new(&Settings::default(), 200.0, 100.0);
        assert!((square.area_before(&sheet, 50.0) - 5000.0).abs() < 1e-9);
        assert!((square.area_before(&sheet, 500.0) - 20000.0).abs() < 1e-9);
        assert_eq!(square.extent(200.0, 100.0), (200.0, 100.0));
        // at 45 degrees the first 25 sqrt 2 along the fill is the corner's triangle x + y <= 50
        let diagonal = Frame::new(
            &settings(Direction::X, Origin::BottomLeft, 45.0),
            200.0,
            100.0,
        );
        let corner = diagonal.area_before(&sheet, 25.0 * 2f64.sqrt());
        assert!((corner - 0.5 * 50.0 * 50.0).abs() < 1e-6, "{corner}");
        let (l, h) = diagonal.extent(200.0, 100.0);
        assert!((l - 300.0 / 2f64.sqrt()).abs() < 1e-9 && (h - l).abs() < 1e-9);
        assert!((diagonal.area_before(&sheet, l) - 20000.0).abs() < 1e-6);
    }

    #[test]
    fn a_frame_built_for_one_size_gives_the_extent_of_any() {
        // the engine rasterizes parts with a frame built for a 1 x 1 sheet and asks it for the
        // extent of the real sheets
        for origin in [
            Origin::BottomLeft,
            Origin::TopLeft,
            Origin::TopRight,
            Origin::BottomRight,
        ] {
            for angle in [0.0, 45.0] {
                let s = settings(Direction::X, origin, angle);
                let (l, h) = Frame::new(&s, 1.0, 1.0).extent(400.0, 300.0);
                let (l2, h2) = Frame::new(&s, 400.0, 300.0).extent(400.0, 300.0);
                assert!(
                    (l - l2).abs() < 1e-9 && (h - h2).abs() < 1e-9,
                    "{origin:?} {angle}"
                );
                if angle == 0.0 {
                    assert!((l - 400.0).abs() < 1e-9 && (h - 300.0).abs() < 1e-9);
                } else {
                    assert!((l - 700.0 / 2f64.sqrt()).abs() < 1e-9, "{l}");
                }
            }
        }
    }
}
