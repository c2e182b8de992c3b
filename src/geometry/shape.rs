//! `Shape`: a polygon with holes, the exact geometry of a part or sheet after import.
//! Invariants (established by `Shape::new`): the outer ring is counter-clockwise, holes are
//! clockwise, every ring has at least three vertices and non-zero area, holes lie inside the outer.

use super::exact::{point_in_ring, signed_area};
use super::primitives::{Affine, BBox, Point};

#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    outer: Vec<Point>,
    holes: Vec<Vec<Point>>,
}

impl Shape {
    /// Builds a shape, orienting rings (outer CCW, holes CW) and dropping repeated vertices.
    /// Callers have already checked closure, crossings and containment; this only normalises.
    pub fn new(outer: Vec<Point>, holes: Vec<Vec<Point>>) -> Shape {
        let mut outer = dedup_ring(outer);
        if signed_area(&outer) < 0.0 {
            outer.reverse();
        }
        let holes = holes
            .into_iter()
            .map(|h| {
                let mut h = dedup_ring(h);
                if signed_area(&h) > 0.0 {
                    h.reverse();
                }
                h
            })
            .filter(|h| h.len() >= 3)
            .collect();
        Shape { outer, holes }
    }

    pub fn rectangle(w: f64, h: f64) -> Shape {
        Shape::new(
            vec![
                Point::new(0.0, 0.0),
                Point::new(w, 0.0),
                Point::new(w, h),
                Point::new(0.0, h),
            ],
            vec![],
        )
    }

    pub fn outer(&self) -> &[Point] {
        &self.outer
    }
    pub fn holes(&self) -> &[Vec<Point>] {
        &self.holes
    }
    pub fn rings(&self) -> impl Iterator<Item = &[Point]> {
        std::iter::once(self.outer.as_slice()).chain(self.holes.iter().map(|h| h.as_slice()))
    }
    pub fn vertex_count(&self) -> usize {
        self.rings().map(|r| r.len()).sum()
    }

    /// Material area: outer less holes.
    pub fn area(&self) -> f64 {
        signed_area(&self.outer) + self.holes.iter().map(|h| signed_area(h)).sum::<f64>()
    }
    /// The length of every ring, holes included.
    pub fn perimeter(&self) -> f64 {
        self.rings()
            .map(|r| {
                (0..r.len())
                    .map(|i| r[i].dist(r[(i + 1) % r.len()]))
                    .sum::<f64>()
            })
            .sum()
    }
    pub fn outer_area(&self) -> f64 {
        signed_area(&self.outer)
    }
    pub fn bbox(&self) -> BBox {
        BBox::of(self.outer.iter().copied())
    }

    /// True when p is in the material (inside the outer ring and not inside a hole).
    pub fn contains_point(&self, p: Point) -> bool {
        point_in_ring(p, &self.outer) && !self.holes.iter().any(|h| point_in_ring(p, h))
    }

    /// The shape under an affine map; a mirroring map keeps the ring orientation invariants.
    pub fn transformed(&self, t: &Affine) -> Shape {
        let map = |r: &Vec<Point>| r.iter().map(|p| t.apply(*p)).collect::<Vec<_>>();
        let mut outer = map(&self.outer);
        let mut holes: Vec<Vec<Point>> = self.holes.iter().map(map).collect();
        if t.det() < 0.0 {
            outer.reverse();
            for h in &mut holes {
                h.reverse();
            }
        }
        Shape { outer, holes }
    }

    /// The shape with holes filled (the outline only).
    pub fn without_holes(&self) -> Shape {
        Shape {
            outer: self.outer.clone(),
            holes: vec![],
        }
    }

    /// The shape translated so that its bounding box starts at the origin.
    pub fn translate(&self, dx: f64, dy: f64) -> Shape {
        self.transformed(&Affine::translate(dx, dy))
    }
}

fn dedup_ring(mut r: Vec<Point>) -> Vec<Point> {
    r.dedup_by(|a, b| a.dist(*b) < 1e-9);
    while r.len() > 1 && r[0].dist(r[r.len() - 1]) < 1e-9 {
        r.pop();
    }
    r
}
