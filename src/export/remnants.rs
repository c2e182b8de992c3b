//! Remnants (RemnantGenerationSettings): the unused material of each sheet layout, as shapes
//! in sheet coordinates that keep clear of every placed part by at least its spacing.
//!
//! - **CleanCut**: one straight cut across the sheet past the nest, on whichever of the four
//!   sides leaves the most material.
//! - **Rectangular**: the largest free axis-aligned rectangles, one after another, each clear
//!   of the parts and of the rectangles already taken.
//! - **TrueShape**: the free material itself, following the parts' outlines. With a minimum
//!   dimension `d` it is opened (shrunk by d/2, grown back with sharp corners, kept within the
//!   free material), so the web between parts thinner than `d` drops out while the sheet's
//!   corners stay square.
//!
//! The free material is found with polygon booleans (`geometry::boolean`); the rectangles are
//! searched on a conservative grid of it and then grown exactly. Like layouts, remnants are
//! checked on the vector geometry before they leave: a remnant that comes closer to a part
//! than the part's spacing, or leaves the sheet, is dropped (and logged), never returned.

use crate::geometry::exact::{point_in_ring, point_segment_dist};
use crate::geometry::{boolean, BBox, PartGeometry, Point, Shape};
use crate::nest2d::verify::{geometries_conflict, nesting_geometry, part_spacing, placed_geometry};
use crate::nest2d::{Problem, SheetLayout, SheetShape, SheetSpec};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RemnantKind {
    #[default]
    CleanCut,
    Rectangular,
    TrueShape,
}

/// RemnantGenerationSettings, parsed (`wire::exports::remnant_options`).
#[derive(Clone, Debug, PartialEq)]
pub struct RemnantOptions {
    pub kind: RemnantKind,
    /// Millimetres: both sides of a rectangle, the opening width of a true shape.
    pub min_dimension: f64,
    /// Square millimetres.
    pub min_area: f64,
    /// Only the last sheet of the nest gives remnants (one physical sheet).
    pub final_sheet_only: bool,
    /// The DXF export draws the remnants on their own layer.
    pub include_in_nests: bool,
    /// Holes of placed parts (less any parts inside them) may give remnants.
    pub inside_holes: bool,
    pub layer: String,
}

impl Default for RemnantOptions {
    fn default() -> Self {
        RemnantOptions {
            kind: RemnantKind::CleanCut,
            min_dimension: 0.0,
            min_area: 0.0,
            final_sheet_only: false,
            include_in_nests: false,
            inside_holes: false,
            layer: "REMNANTS".into(),
        }
    }
}

/// One remnant of a distinct layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Remnant {
    /// Index into the layouts.
    pub layout: usize,
    /// In sheet coordinates (mm): outline counter-clockwise, holes clockwise.
    pub shape: Shape,
    /// How many physical sheets have it: the layout's multiplicity, or 1 on the final sheet
    /// only (then it is on the last copy of the last layout).
    pub copies: u32,
    pub last_copy_only: bool,
}

/// Remnants keep this much (mm) beyond each part's spacing, so that rounding in the booleans
/// (they snap to a grid of about a millionth of the sheet) can never bring one within the
/// spacing, nor make one touch a part at zero spacing. The exact check asks for half of it.
const MIN_CLEARANCE: f64 = 0.01;
/// Pieces smaller than this (mm²) are never remnants, whatever the minimums.
const SLIVER_AREA: f64 = 1.0;
/// At most this many rectangles per layout (Rectangular).
const MAX_RECTANGLES: usize = 64;
/// Grid cells along the longer side of the free material (Rectangular search).
const GRID: usize = 1024;
/// Remnants may reach beyond the sheet by this much (mm) before they are refused: the
/// booleans' snapping.
const SHEET_TOLERANCE: f64 = 1e-4;

/// The remnants of `layouts` (of `problem`) per `options`, layout by layout, largest first.
pub fn remnants(
    problem: &Problem,
    layouts: &[SheetLayout],
    options: &RemnantOptions,
) -> Vec<Remnant> {
    let mut out = Vec::new();
    for (k, layout) in layouts.iter().enumerate() {
        let last = k + 1 == layouts.len();
        if options.final_sheet_only && !last {
            continue;
        }
        let sheet = &problem.sheets[layout.sheet];
        let material = sheet.material();
        let parts = obstacles(problem, layout, options.inside_holes);
        let grown = grown_parts(&parts);
        let shapes = match options.kind {
            RemnantKind::CleanCut => clean_cut(&material, &grown, options),
            RemnantKind::Rectangular => rectangles(&free_material(&material, &grown), options),
            RemnantKind::TrueShape => true_shapes(&free_material(&material, &grown), options),
        };
        let shapes: Vec<Shape> = shapes
            .into_iter()
            .map(|s| clamped_to(s, sheet))
            .filter(|s| {
                let ok = clear_of_parts(s, &parts) && within_sheet(s, &material);
                if !ok {
                    tracing::warn!(
                        layout = k,
                        "a remnant failed the exact check and is left out"
                    );
                }
                ok
            })
            .collect();
        // largest first, then by position (deterministic); keys computed once
        let mut keyed: Vec<(f64, Point, Shape)> = shapes
            .into_iter()
            .map(|s| (s.area(), s.bbox().min, s))
            .collect();
        keyed.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.x.total_cmp(&b.1.x))
                .then(a.1.y.total_cmp(&b.1.y))
        });
        let (copies, last_copy_only) = if options.final_sheet_only {
            (1, true)
        } else {
            (layout.multiplicity, false)
        };
        out.extend(keyed.into_iter().map(|(_, _, shape)| Remnant {
            layout: k,
            shape,
            copies,
            last_copy_only,
        }));
    }
    out
}

/// A placed part as remnants see it: its material (without holes unless remnants may go in
/// them) and the clearance a remnant keeps from it.
struct Obstacle {
    geometry: PartGeometry,
    spacing: f64,
}

fn obstacles(problem: &Problem, layout: &SheetLayout, inside_holes: bool) -> Vec<Obstacle> {
    layout
        .placements
        .iter()
        .map(|p| {
            let part = &problem.parts[p.part];
            // a part nested as a rectangle keeps its rectangle; otherwise its true shape, holes
            // included (they are scrap or hold other parts, not this part's material)
            let g = if part.nest_as_rectangle {
                nesting_geometry(problem, p.part)
            } else {
                part.geometry.clone()
            };
            let g = if inside_holes { g } else { g.without_holes() };
            Obstacle {
                geometry: placed_geometry(&g, p.mirrored, p.rotation, p.x, p.y),
                spacing: part_spacing(problem, p.part),
            }
        })
        .collect()
}

/// Each part grown by its clearance.
fn grown_parts(parts: &[Obstacle]) -> Vec<Shape> {
    parts
        .iter()
        .flat_map(|p| boolean::offset(p.geometry.components(), p.spacing + MIN_CLEARANCE))
        .collect()
}

/// The sheet's material clear of every part by its clearance (`grown`: the grown parts).
fn free_material(material: &Shape, grown: &[Shape]) -> Vec<Shape> {
    boolean::difference(std::slice::from_ref(material), grown)
}

fn meets_minimums(s: &Shape, options: &RemnantOptions) -> bool {
    let b = s.bbox();
    let area = s.area();
    area >= SLIVER_AREA.max(options.min_area) && b.width().min(b.height()) >= options.min_dimension
}

fn rectangle(x0: f64, y0: f64, x1: f64, y1: f64) -> Shape {
    Shape::rectangle(x1 - x0, y1 - y0).translate(x0, y0)
}

/// CleanCut: the sheet beyond one straight cut past the nest (vertical or horizontal), on the
/// side that leaves the most material meeting the minimums; ties go to +X, -X, +Y, -Y.
fn clean_cut(material: &Shape, grown: &[Shape], options: &RemnantOptions) -> Vec<Shape> {
    let mut nest = BBox::empty();
    for s in grown {
        let b = s.bbox();
        nest.include(b.min);
        nest.include(b.max);
    }
    let whole = material.bbox();
    if nest.min.x > nest.max.x {
        return Vec::new();
    }
    let sides = [
        (nest.max.x, whole.min.y, whole.max.x, whole.max.y),
        (whole.min.x, whole.min.y, nest.min.x, whole.max.y),
        (whole.min.x, nest.max.y, whole.max.x, whole.max.y),
        (whole.min.x, whole.min.y, whole.max.x, nest.min.y),
    ];
    let mut best: (f64, Vec<Shape>) = (0.0, Vec::new());
    for (x0, y0, x1, y1) in sides {
        if x1 - x0 <= 0.0 || y1 - y0 <= 0.0 {
            continue;
        }
        // the material past the cut, less anything a part's clearance still reaches
        let beyond =
            boolean::intersection(std::slice::from_ref(material), &[rectangle(x0, y0, x1, y1)]);
        let mut pieces = boolean::difference(&beyond, grown);
        pieces.retain(|s| meets_minimums(s, options));
        let area: f64 = pieces.iter().map(Shape::area).sum();
        if area > best.0 {
            best = (area, pieces);
        }
    }
    best.1
}

/// TrueShape: the free material, opened by the minimum dimension. The growing back keeps
/// corners sharp, so the sheet's own corners (and any square corner of free material) stay
/// whole rather than rounded off by the opening; the web thinner than the minimum still goes.
fn true_shapes(free: &[Shape], options: &RemnantOptions) -> Vec<Shape> {
    let r = options.min_dimension / 2.0;
    let mut pieces = if r > 0.0 {
        let shrunk = boolean::offset(free, -r);
        // sharp corners keep square ones square; round ones keep the faceted curves (near-straight
        // corners, which a mitre bevels) full
        let mut grown = boolean::offset_with(&shrunk, r, boolean::Corners::Sharp);
        grown.extend(boolean::offset(&shrunk, r));
        let opened = boolean::union(&grown);
        // growing back can overshoot by the arcs' chords: never past the free material
        boolean::intersection(&opened, free)
    } else {
        free.to_vec()
    };
    pieces.retain(|s| meets_minimums(s, options));
    pieces
}

/// Rectangular: the largest free rectangles meeting the minimums, one after another.
fn rectangles(free: &[Shape], options: &RemnantOptions) -> Vec<Shape> {
    let Some(mut grid) = FreeGrid::new(free) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut misses = 0;
    while out.len() < MAX_RECTANGLES && misses < 8 {
        let Some(cells) = grid.largest(options) else {
            break;
        };
        let (x0, y0, x1, y1) = grid.grow(grid.cells_to_box(cells));
        grid.take(x0, y0, x1, y1);
        let r = rectangle(x0, y0, x1, y1);
        if meets_minimums(&r, options) {
            out.push(r);
            misses = 0;
        } else {
            misses += 1;
        }
    }
    out
}

/// A grid over the free material: a cell is free only when it lies wholly inside it (no
/// boundary edge touches the cell and its centre is inside), so any block of free cells is
/// free material. Rectangles found on it are then grown exactly against the edges.
struct FreeGrid {
    cell: f64,
    nx: usize,
    ny: usize,
    free: Vec<bool>,
    /// Boundary edges of the free material and of the rectangles taken.
    edges: Vec<(Point, Point)>,
    bounds: BBox,
    /// Band margin for exact growth: edges that only touch a rectangle's side do not stop it.
    eps: f64,
}

/// A block of cells: columns [i0, i1), rows [j0, j1).
#[derive(Clone, Copy, Debug)]
struct Cells {
    i0: usize,
    i1: usize,
    j0: usize,
    j1: usize,
}

impl FreeGrid {
    fn new(free: &[Shape]) -> Option<FreeGrid> {
        let mut bounds = BBox::empty();
        let mut edges = Vec::new();
        for s in free {
            for r in s.rings() {
                for (i, &a) in r.iter().enumerate() {
                    let b = r[(i + 1) % r.len()];
                    edges.push((a, b));
                    bounds.include(a);
                }
            }
        }
        let size = bounds.width().max(bounds.height());
        if edges.is_empty() || size.is_nan() || size <= 0.0 {
            return None;
        }
        let cell = size / GRID as f64;
        let nx = ((bounds.width() / cell).ceil() as usize).max(1);
        let ny = ((bounds.height() / cell).ceil() as usize).max(1);
        let mut grid = FreeGrid {
            cell,
            nx,
            ny,
            free: vec![false; nx * ny],
            edges,
            bounds,
            eps: size * 1e-9,
        };
        grid.classify();
        Some(grid)
    }

    /// The cells `lo..=hi` that the interval from `from` to `to` meets (with a hair of slack
    /// either side) on an axis starting at `origin` with `n` cells.
    fn span(&self, from: f64, to: f64, origin: f64, n: usize) -> (usize, usize) {
        let cell =
            |v: f64, slack: f64| ((v - origin) / self.cell + slack).floor().max(0.0) as usize;
        (cell(from, -1e-9).min(n - 1), cell(to, 1e-9).min(n - 1))
    }

    fn row_span(&self, y0: f64, y1: f64) -> (usize, usize) {
        self.span(y0, y1, self.bounds.min.y, self.ny)
    }

    fn col_span(&self, x0: f64, x1: f64) -> (usize, usize) {
        self.span(x0, x1, self.bounds.min.x, self.nx)
    }

    /// Marks the free cells: per row, the cells no edge touches and whose centre is inside.
    fn classify(&mut self) {
        let mut rows: Vec<Vec<usize>> = vec![Vec::new(); self.ny];
        for (k, (a, b)) in self.edges.iter().enumerate() {
            let (lo, hi) = self.row_span(a.y.min(b.y), a.y.max(b.y));
            for row in rows.iter_mut().take(hi + 1).skip(lo) {
                row.push(k);
            }
        }
        let mut touched = vec![false; self.nx];
        let mut crossings = Vec::new();
        for (j, row) in rows.iter().enumerate() {
            let y0 = self.bounds.min.y + j as f64 * self.cell;
            let (y1, mid) = (y0 + self.cell, y0 + 0.5 * self.cell);
            touched.fill(false);
            crossings.clear();
            for &k in row {
                let (a, b) = self.edges[k];
                if let Some((xa, xb)) = clip_to_band(a, b, y0 - self.eps, y1 + self.eps) {
                    let (lo, hi) = self.col_span(xa, xb);
                    touched[lo..=hi].fill(true);
                }
                // half-open rule: each crossing of the mid-line counted once
                if (a.y > mid) != (b.y > mid) {
                    crossings.push(a.x + (mid - a.y) / (b.y - a.y) * (b.x - a.x));
                }
            }
            crossings.sort_by(f64::total_cmp);
            let mut inside = false;
            let mut next = 0;
            let row = &mut self.free[j * self.nx..(j + 1) * self.nx];
            for (i, (cell, &hit)) in row.iter_mut().zip(&touched).enumerate() {
                let cx = self.bounds.min.x + (i as f64 + 0.5) * self.cell;
                while next < crossings.len() && crossings[next] <= cx {
                    inside = !inside;
                    next += 1;
                }
                *cell = inside && !hit;
            }
        }
    }

    /// The largest block of free cells that could meet the minimums once grown (growing adds
    /// less than a cell on each side), by the maximal-rectangle histogram sweep.
    fn largest(&self, options: &RemnantOptions) -> Option<Cells> {
        let c = self.cell;
        let fits = |w: usize, h: usize| {
            let (w, h) = ((w + 2) as f64 * c, (h + 2) as f64 * c);
            w >= options.min_dimension && h >= options.min_dimension && w * h >= options.min_area
        };
        let mut heights = vec![0usize; self.nx];
        let mut stack: Vec<usize> = Vec::new();
        let mut best: Option<(usize, Cells)> = None;
        for j in 0..self.ny {
            for (i, h) in heights.iter_mut().enumerate() {
                *h = if self.free[j * self.nx + i] {
                    *h + 1
                } else {
                    0
                };
            }
            stack.clear();
            for i in 0..=self.nx {
                let cur = if i < self.nx { heights[i] } else { 0 };
                while let Some(&t) = stack.last() {
                    if heights[t] < cur {
                        break;
                    }
                    stack.pop();
                    let h = heights[t];
                    let left = stack.last().map_or(0, |&s| s + 1);
                    let w = i - left;
                    if h == 0 || !fits(w, h) {
                        continue;
                    }
                    if best.as_ref().is_none_or(|(a, _)| w * h > *a) {
                        best = Some((
                            w * h,
                            Cells {
                                i0: left,
                                i1: i,
                                j0: j + 1 - h,
                                j1: j + 1,
                            },
                        ));
                    }
                }
                stack.push(i);
            }
        }
        best.map(|(_, cells)| cells)
    }

    fn cells_to_box(&self, c: Cells) -> (f64, f64, f64, f64) {
        let (o, s) = (self.bounds.min, self.cell);
        (
            o.x + c.i0 as f64 * s,
            o.y + c.j0 as f64 * s,
            o.x + c.i1 as f64 * s,
            o.y + c.j1 as f64 * s,
        )
    }

    /// The box pushed out on each side (right, up, left, down) to the nearest edge in its way.
    fn grow(&self, (x0, y0, x1, y1): (f64, f64, f64, f64)) -> (f64, f64, f64, f64) {
        let b = self.bounds;
        let x1 = self.reach((y0, y1), x0, x1, b.max.x, false).max(x1);
        let y1 = self.reach((x0, x1), y0, y1, b.max.y, true).max(y1);
        let x0 = self.reach((y0, y1), x1, x0, b.min.x, false).min(x0);
        let y0 = self.reach((x0, x1), y1, y0, b.min.y, true).min(y0);
        (x0, y0, x1, y1)
    }

    /// Where the box side at `to` (its opposite side at `from`) stops when pushed away from
    /// `from`, along X (along Y when `along_y`): at the nearest edge that enters the box's open
    /// band `across` on the other axis, or at `limit`. An edge that only touches the band's
    /// sides does not stop it.
    fn reach(&self, across: (f64, f64), from: f64, to: f64, limit: f64, along_y: bool) -> f64 {
        let e = self.eps;
        let forward = to > from;
        let mut limit = limit;
        for &(a, b) in &self.edges {
            let (a, b) = if along_y {
                (Point::new(a.y, a.x), Point::new(b.y, b.x))
            } else {
                (a, b)
            };
            let Some((ea, eb)) = clip_to_band(a, b, across.0 + e, across.1 - e) else {
                continue;
            };
            if forward {
                if eb <= from + e {
                    continue; // behind the box
                }
                limit = limit.min(if ea >= to - e { ea } else { to });
            } else {
                if ea >= from - e {
                    continue;
                }
                limit = limit.max(if eb <= to + e { eb } else { to });
            }
        }
        limit
    }

    /// The box is taken: its cells are no longer free and its sides stop later growth.
    fn take(&mut self, x0: f64, y0: f64, x1: f64, y1: f64) {
        let (i0, i1) = self.col_span(x0, x1);
        let (j0, j1) = self.row_span(y0, y1);
        for j in j0..=j1 {
            self.free[j * self.nx + i0..=j * self.nx + i1].fill(false);
        }
        let corners = [
            Point::new(x0, y0),
            Point::new(x1, y0),
            Point::new(x1, y1),
            Point::new(x0, y1),
        ];
        for i in 0..4 {
            self.edges.push((corners[i], corners[(i + 1) % 4]));
        }
    }
}

/// The X range of segment a-b within the band lo < y < hi (None when it stays outside).
fn clip_to_band(a: Point, b: Point, lo: f64, hi: f64) -> Option<(f64, f64)> {
    if a.y.max(b.y) <= lo || a.y.min(b.y) >= hi {
        return None;
    }
    if a.y == b.y {
        return Some((a.x.min(b.x), a.x.max(b.x)));
    }
    let at = |y: f64| a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x);
    let (ya, yb) = (a.y.min(b.y).max(lo), a.y.max(b.y).min(hi));
    let (xa, xb) = (at(ya), at(yb));
    Some((xa.min(xb), xa.max(xb)))
}

/// True when `s` keeps each part's spacing and half the margin beyond it (exact, on the
/// vector geometry: no overlap, no containment either way, no closer approach).
fn clear_of_parts(s: &Shape, parts: &[Obstacle]) -> bool {
    let remnant = PartGeometry::single(s.clone());
    parts
        .iter()
        .all(|p| !geometries_conflict(&remnant, &p.geometry, p.spacing + MIN_CLEARANCE / 2.0))
}

/// True when `s` lies on the sheet's material: inside its outline and clear of its defects.
/// Every vertex of `s` is inside the outline or on it (within the booleans' snapping), and what
/// of `s` lies off the sheet's material (outside the outline or on a defect), computed by a
/// boolean difference apart from how `s` was made, has no area beyond that snapping.
fn within_sheet(s: &Shape, material: &Shape) -> bool {
    let outline = material.outer();
    let near_outline = |p: Point| {
        (0..outline.len()).any(|i| {
            point_segment_dist(p, outline[i], outline[(i + 1) % outline.len()]) <= SHEET_TOLERANCE
        })
    };
    let vertices_in = s
        .outer()
        .iter()
        .all(|&p| point_in_ring(p, outline) || near_outline(p));
    let off_sheet: f64 =
        boolean::difference(std::slice::from_ref(s), std::slice::from_ref(material))
            .iter()
            .map(Shape::area)
            .sum();
    let perimeter: f64 = s
        .rings()
        .map(|r| {
            (0..r.len())
                .map(|i| r[i].dist(r[(i + 1) % r.len()]))
                .sum::<f64>()
        })
        .sum();
    let remnant = PartGeometry::single(s.clone());
    let defects_clear = material.holes().iter().all(|h| {
        let defect = PartGeometry::single(Shape::new(h.clone(), vec![]));
        !geometries_conflict(&remnant, &defect, 0.0)
    });
    vertices_in && off_sheet <= perimeter * SHEET_TOLERANCE && defects_clear
}

/// `s` with the coordinates that the booleans' snapping put just past a rectangular sheet's
/// edges (by less than the tolerance) put back on them, so files say 1000, not 1000.00000006.
/// Anything further out is left for `within_sheet` to refuse.
fn clamped_to(s: Shape, sheet: &SheetSpec) -> Shape {
    let SheetShape::Rectangle { width, height } = sheet.shape else {
        return s;
    };
    let snap = |v: f64, max: f64| {
        if (-SHEET_TOLERANCE..0.0).contains(&v) {
            0.0
        } else if v > max && v <= max + SHEET_TOLERANCE {
            max
        } else {
            v
        }
    };
    let clamp = |r: &[Point]| -> Vec<Point> {
        r.iter()
            .map(|p| Point::new(snap(p.x, width), snap(p.y, height)))
            .collect()
    };
    Shape::new(
        clamp(s.outer()),
        s.holes().iter().map(|h| clamp(h)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest2d::{PartSpec, Placement};

    /// A 1000 x 500 sheet with `n` 100 x 100 squares in a row from the origin, 10 apart.
    fn row_of_squares(n: u32, spacing: f64) -> (Problem, SheetLayout) {
        let mut part = PartSpec::new(
            "sq",
            PartGeometry::single(Shape::rectangle(100.0, 100.0)),
            n,
        );
        part.spacing_override = Some(spacing);
        let problem = Problem {
            parts: vec![part],
            sheets: vec![SheetSpec::rectangle("s", 1000.0, 500.0)],
            settings: Default::default(),
        };
        let layout = SheetLayout {
            sheet: 0,
            multiplicity: 2,
            placements: (0..n)
                .map(|k| Placement {
                    part: 0,
                    instance: k,
                    x: k as f64 * 110.0,
                    y: 0.0,
                    rotation: 0.0,
                    mirrored: false,
                    is_filler: false,
                })
                .collect(),
            utilisation: 0.0,
            used_length: 0.0,
            common_cuts: Vec::new(),
        };
        (problem, layout)
    }

    fn options(kind: RemnantKind) -> RemnantOptions {
        RemnantOptions {
            kind,
            ..Default::default()
        }
    }

    #[test]
    fn a_clean_cut_takes_the_larger_side_past_the_nest() {
        let (problem, layout) = row_of_squares(3, 5.0);
        let r = remnants(&problem, &[layout], &options(RemnantKind::CleanCut));
        assert_eq!(r.len(), 1);
        let b = r[0].shape.bbox();
        // parts reach x = 320: the cut past them is at 325; above them (y 105..500) is 395 x 1000,
        // more than 675 x 500
        assert!(
            (b.min.y - 105.0).abs() < 0.05 && (b.max.y - 500.0).abs() < 1e-3,
            "{b:?}"
        );
        assert!((b.min.x).abs() < 1e-3 && (b.max.x - 1000.0).abs() < 1e-3);
        assert_eq!(r[0].copies, 2);
    }

    #[test]
    fn rectangles_are_the_largest_free_boxes_and_clear_of_parts() {
        let (problem, layout) = row_of_squares(3, 5.0);
        let r = remnants(
            &problem,
            std::slice::from_ref(&layout),
            &options(RemnantKind::Rectangular),
        );
        assert!(r.len() >= 2, "{}", r.len());
        // the largest: the full width above the row of squares
        let b = r[0].shape.bbox();
        assert!(
            (b.width() - 1000.0).abs() < 1e-3 && (b.min.y - 105.0).abs() < 0.05,
            "{b:?}"
        );
        // the second: right of the squares, below the first
        let b = r[1].shape.bbox();
        assert!(
            (b.min.x - 325.0).abs() < 0.05 && (b.max.x - 1000.0).abs() < 1e-3,
            "{b:?}"
        );
        // remnants do not overlap each other
        for (i, a) in r.iter().enumerate() {
            for c in &r[i + 1..] {
                let ov = boolean::intersection(
                    std::slice::from_ref(&a.shape),
                    std::slice::from_ref(&c.shape),
                );
                assert!(ov.iter().map(Shape::area).sum::<f64>() < 1e-3);
            }
        }
    }

    #[test]
    fn minimums_leave_out_small_remnants() {
        let (problem, layout) = row_of_squares(3, 5.0);
        let o = RemnantOptions {
            min_dimension: 200.0,
            min_area: 100_000.0,
            ..options(RemnantKind::Rectangular)
        };
        let r = remnants(&problem, &[layout], &o);
        assert!(!r.is_empty());
        for x in &r {
            let b = x.shape.bbox();
            assert!(b.width() >= 200.0 && b.height() >= 200.0 && x.shape.area() >= 100_000.0);
        }
    }

    #[test]
    fn a_true_shape_follows_the_parts_and_opening_drops_the_web() {
        let (problem, layout) = row_of_squares(3, 2.0);
        let all = remnants(
            &problem,
            std::slice::from_ref(&layout),
            &options(RemnantKind::TrueShape),
        );
        // without a minimum the web between squares is material too: one piece
        assert_eq!(all.len(), 1);
        let sheet = 1000.0 * 500.0;
        let parts = 3.0 * 100.0 * 100.0;
        assert!(all[0].shape.area() < sheet - parts);
        assert!(all[0].shape.area() > sheet - parts - 10_000.0);
        // with a minimum of 20 mm, the 10 mm gaps between squares close
        let o = RemnantOptions {
            min_dimension: 20.0,
            ..options(RemnantKind::TrueShape)
        };
        let opened = remnants(&problem, &[layout], &o);
        assert_eq!(opened.len(), 1);
        assert!(opened[0].shape.area() < all[0].shape.area() - 500.0);
    }

    #[test]
    fn final_sheet_only_gives_the_last_layout_one_copy() {
        let (problem, layout) = row_of_squares(2, 0.0);
        let o = RemnantOptions {
            final_sheet_only: true,
            ..options(RemnantKind::CleanCut)
        };
        let r = remnants(&problem, &[layout.clone(), layout], &o);
        assert!(r
            .iter()
            .all(|x| x.layout == 1 && x.copies == 1 && x.last_copy_only));
    }

    #[test]
    fn a_remnant_bridging_a_notch_of_the_sheet_is_off_the_sheet() {
        // a U-shaped sheet; a rectangle with its corners in both arms spans the gap between
        let u = Shape::new(
            [
                (0.0, 0.0),
                (300.0, 0.0),
                (300.0, 300.0),
                (200.0, 300.0),
                (200.0, 100.0),
                (100.0, 100.0),
                (100.0, 300.0),
                (0.0, 300.0),
            ]
            .iter()
            .map(|&(x, y)| Point::new(x, y))
            .collect(),
            vec![],
        );
        let mut sheet = SheetSpec::rectangle("u", 300.0, 300.0);
        sheet.shape = SheetShape::Outline(u);
        let bridge = rectangle(50.0, 150.0, 250.0, 250.0);
        assert!(!within_sheet(&bridge, &sheet.material()));
        assert!(within_sheet(
            &rectangle(0.0, 0.0, 300.0, 100.0),
            &sheet.material()
        ));
        assert!(within_sheet(
            &rectangle(0.0, 100.0, 100.0, 300.0),
            &sheet.material()
        ));
        // on a rectangular sheet, a remnant past the edge is refused, not clamped
        let plain = SheetSpec::rectangle("r", 300.0, 300.0);
        let past = clamped_to(rectangle(0.0, 0.0, 300.5, 100.0), &plain);
        assert!(!within_sheet(&past, &plain.material()));
        let snapped = clamped_to(rectangle(-1e-7, 0.0, 300.00000006, 100.0), &plain);
        assert_eq!(snapped.bbox().max.x, 300.0);
        assert!(within_sheet(&snapped, &plain.material()));
    }

    #[test]
    fn holes_give_remnants_only_when_allowed() {
        // a 300 x 300 frame with a 200 x 200 hole, alone on a 300 x 300 sheet
        let outer = Shape::rectangle(300.0, 300.0);
        let hole: Vec<Point> = Shape::rectangle(200.0, 200.0)
            .translate(50.0, 50.0)
            .outer()
            .to_vec();
        let frame = PartGeometry::single(Shape::new(outer.outer().to_vec(), vec![hole]));
        let base = Problem {
            parts: vec![PartSpec::new("frame", frame, 1)],
            sheets: Vec::new(),
            settings: Default::default(),
        };
        let (problem, layout) = crate::export::part_alone(&base, 0, (0.0, 0.0), (300.0, 300.0));
        for kind in [RemnantKind::Rectangular, RemnantKind::TrueShape] {
            let none = remnants(&problem, std::slice::from_ref(&layout), &options(kind));
            assert!(none.is_empty(), "{kind:?}");
            let o = RemnantOptions {
                inside_holes: true,
                ..options(kind)
            };
            let r = remnants(&problem, std::slice::from_ref(&layout), &o);
            assert_eq!(r.len(), 1, "{kind:?}");
            assert!(
                (r[0].shape.area() - 200.0 * 200.0).abs() < 50.0,
                "{}",
                r[0].shape.area()
            );
        }
    }
}
