//! Points and rigid/affine transforms in millimetres.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub const fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }
    pub fn sub(self, o: Point) -> Point {
        Point::new(self.x - o.x, self.y - o.y)
    }
    pub fn add(self, o: Point) -> Point {
        Point::new(self.x + o.x, self.y + o.y)
    }
    pub fn scale(self, k: f64) -> Point {
        Point::new(self.x * k, self.y * k)
    }
    pub fn dot(self, o: Point) -> f64 {
        self.x * o.x + self.y * o.y
    }
    pub fn cross(self, o: Point) -> f64 {
        self.x * o.y - self.y * o.x
    }
    pub fn norm(self) -> f64 {
        self.x.hypot(self.y)
    }
    pub fn dist(self, o: Point) -> f64 {
        self.sub(o).norm()
    }
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// Axis-aligned bounding box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BBox {
    pub min: Point,
    pub max: Point,
}

impl BBox {
    pub fn empty() -> Self {
        BBox {
            min: Point::new(f64::INFINITY, f64::INFINITY),
            max: Point::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
        }
    }
    pub fn of(points: impl IntoIterator<Item = Point>) -> Self {
        let mut b = BBox::empty();
        for p in points {
            b.include(p);
        }
        b
    }
    pub fn include(&mut self, p: Point) {
        self.min.x = self.min.x.min(p.x);
        self.min.y = self.min.y.min(p.y);
        self.max.x = self.max.x.max(p.x);
        self.max.y = self.max.y.max(p.y);
    }
    pub fn width(&self) -> f64 {
        self.max.x - self.min.x
    }
    pub fn height(&self) -> f64 {
        self.max.y - self.min.y
    }
    /// True when the boxes, each grown by `margin`, share any point.
    pub fn near(&self, o: &BBox, margin: f64) -> bool {
        self.min.x <= o.max.x + margin
            && o.min.x <= self.max.x + margin
            && self.min.y <= o.max.y + margin
            && o.min.y <= self.max.y + margin
    }
}

/// A 2x3 affine map: p -> (a*x + b*y + tx, c*x + d*y + ty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Affine {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub tx: f64,
    pub ty: f64,
}

impl Affine {
    pub const IDENTITY: Affine = Affine {
        a: 1.0,
        b: 0.0,
        c: 0.0,
        d: 1.0,
        tx: 0.0,
        ty: 0.0,
    };

    pub fn translate(dx: f64, dy: f64) -> Self {
        Affine {
            tx: dx,
            ty: dy,
            ..Affine::IDENTITY
        }
    }
    pub fn rotate_deg(deg: f64) -> Self {
        let (s, c) = exact_sin_cos_deg(deg);
        Affine {
            a: c,
            b: -s,
            c: s,
            d: c,
            tx: 0.0,
            ty: 0.0,
        }
    }
    pub fn scale(sx: f64, sy: f64) -> Self {
        Affine {
            a: sx,
            b: 0.0,
            c: 0.0,
            d: sy,
            tx: 0.0,
            ty: 0.0,
        }
    }
    /// Mirror about the local Y axis (x -> -x), kerf's placement convention.
    pub fn mirror_x() -> Self {
        Affine::scale(-1.0, 1.0)
    }
    /// `self` after `first`: p -> self(first(p)).
    pub fn then_after(&self, first: &Affine) -> Affine {
        Affine {
            a: self.a * first.a + self.b * first.c,
            b: self.a * first.b + self.b * first.d,
            c: self.c * first.a + self.d * first.c,
            d: self.c * first.b + self.d * first.d,
            tx: self.a * first.tx + self.b * first.ty + self.tx,
            ty: self.c * first.tx + self.d * first.ty + self.ty,
        }
    }
    pub fn apply(&self, p: Point) -> Point {
        Point::new(
            self.a * p.x + self.b * p.y + self.tx,
            self.c * p.x + self.d * p.y + self.ty,
        )
    }
    pub fn det(&self) -> f64 {
        self.a * self.d - self.b * self.c
    }
    /// The placement transform: mirror (x -> -x) if asked, rotate CCW by `deg`, translate.
    pub fn placement(mirrored: bool, deg: f64, x: f64, y: f64) -> Affine {
        let m = if mirrored {
            Affine::mirror_x()
        } else {
            Affine::IDENTITY
        };
        let r = Affine::rotate_deg(deg).then_after(&m);
        Affine::translate(x, y).then_after(&r)
    }
}

/// sin and cos of an angle in degrees, exact at multiples of 90 so that axis-aligned
/// parts stay axis-aligned (1e-16 errors would otherwise cost a raster cell).
pub fn exact_sin_cos_deg(deg: f64) -> (f64, f64) {
    let r = deg.rem_euclid(360.0);
    for (q, s, c) in [
        (0.0, 0.0, 1.0),
        (90.0, 1.0, 0.0),
        (180.0, 0.0, -1.0),
        (270.0, -1.0, 0.0),
        (360.0, 0.0, 1.0),
    ] {
        if (r - q).abs() < 1e-12 {
            return (s, c);
        }
    }
    let t = r.to_radians();
    (t.sin(), t.cos())
}
