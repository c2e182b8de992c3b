//! The canonical frame: the search always fills from the bottom-left along +x. Other origins and
//! directions are reflections of the sheet (D p + e); parts are searched in their reflected
//! shapes, so a canonical placement maps back to a rigid placement of the original part.

use super::model::{Direction, Origin};
use crate::geometry::{Affine, Point};

#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Linear part: a signed permutation matrix (its own inverse's transpose).
    pub d: Affine,
    /// Offset that puts the canonical sheet's box at the origin.
    pub e: Point,
}

impl Frame {
    pub fn new(direction: Direction, origin: Origin, sheet_w: f64, sheet_h: f64) -> Frame {
        let (fx, fy) = match origin {
            Origin::BottomLeft => (1.0, 1.0),
            Origin::TopLeft => (1.0, -1.0),
            Origin::TopRight => (-1.0, -1.0),
            Origin::BottomRight => (-1.0, 1.0),
        };
        let flip = Affine::scale(fx, fy);
        let d = match direction {
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
        let corners = [
            Point::new(0.0, 0.0),
            Point::new(sheet_w, 0.0),
            Point::new(0.0, sheet_h),
            Point::new(sheet_w, sheet_h),
        ];
        let min_x = corners
            .iter()
            .map(|p| d.apply(*p).x)
            .fold(f64::INFINITY, f64::min);
        let min_y = corners
            .iter()
            .map(|p| d.apply(*p).y)
            .fold(f64::INFINITY, f64::min);
        Frame {
            d,
            e: Point::new(-min_x, -min_y),
        }
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
    /// Canonical extent (length along the fill direction, height across it) of a sheet.
    pub fn extent(&self, sheet_w: f64, sheet_h: f64) -> (f64, f64) {
        let p = self.d.apply(Point::new(sheet_w, sheet_h));
        (p.x.abs(), p.y.abs())
    }
}
