//! ESICUP strip packing in the jagua-rs JSON format: one sheet of height `strip_height` and free
//! length; density = total item area / (strip height x used length).

use crate::geometry::{PartGeometry, Point, Shape};
use crate::nest2d::{self, CancelHandle, PartSpec, Problem, Settings, SheetSpec};
use kerf_kernels::Evaluator;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
pub struct Instance {
    pub name: String,
    pub strip_height: f64,
    pub items: Vec<Item>,
}

#[derive(Clone, Deserialize)]
pub struct Item {
    pub id: u64,
    pub demand: u32,
    #[serde(default)]
    pub allowed_orientations: Option<Vec<f64>>,
    pub shape: ItemShape,
}

/// An item's shape, in the four forms jagua-rs writes (`{"type": ..., "data": ...}`).
#[derive(Clone, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum ItemShape {
    /// An axis-aligned rectangle with its lower left corner at (`x_min`, `y_min`).
    Rectangle {
        x_min: f64,
        y_min: f64,
        width: f64,
        height: f64,
    },
    /// One outline, no holes.
    SimplePolygon(Vec<[f64; 2]>),
    /// One outline and its holes.
    Polygon(PolygonWithHoles),
    /// Several disjoint polygons, each with its holes: one part.
    MultiPolygon(Vec<PolygonWithHoles>),
}

#[derive(Clone, Deserialize)]
pub struct PolygonWithHoles {
    pub outer: Vec<[f64; 2]>,
    #[serde(default)]
    pub inner: Vec<Vec<[f64; 2]>>,
}

impl ItemShape {
    /// The polygons as (outline, holes), each ring as written.
    fn polygons(&self) -> Vec<(Vec<Point>, Vec<Vec<Point>>)> {
        let ring = |r: &[[f64; 2]]| r.iter().map(|p| Point::new(p[0], p[1])).collect::<Vec<_>>();
        let with_holes =
            |p: &PolygonWithHoles| (ring(&p.outer), p.inner.iter().map(|h| ring(h)).collect());
        match self {
            ItemShape::Rectangle {
                x_min,
                y_min,
                width,
                height,
            } => {
                let (x0, y0, x1, y1) = (*x_min, *y_min, x_min + width, y_min + height);
                vec![(
                    vec![
                        Point::new(x0, y0),
                        Point::new(x1, y0),
                        Point::new(x1, y1),
                        Point::new(x0, y1),
                    ],
                    vec![],
                )]
            }
            ItemShape::SimplePolygon(r) => vec![(ring(r), vec![])],
            ItemShape::Polygon(p) => vec![with_holes(p)],
            ItemShape::MultiPolygon(ps) => ps.iter().map(with_holes).collect(),
        }
    }
}

/// Rotations tried where the instance allows any angle.
pub const FREE_ROTATION_STEP: f64 = 30.0;

#[derive(Serialize, Deserialize)]
pub struct Solution {
    pub instance: String,
    pub strip_height: f64,
    pub used_length: f64,
    pub density: f64,
    pub placements: Vec<SolutionPlacement>,
}

#[derive(Serialize, Deserialize)]
pub struct SolutionPlacement {
    pub item_id: u64,
    pub rotation: f64,
    pub mirrored: bool,
    pub x: f64,
    pub y: f64,
}

pub fn load(path: &std::path::Path) -> anyhow::Result<Instance> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let inst: Instance = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: not a jagua-rs instance ({e})", path.display()))?;
    check_items(path, &inst.items)?;
    Ok(inst)
}

/// Every item must be one or more polygons whose rings have three vertices or more and enclose
/// an area, and no two rings of the item (outlines and holes) may cross or lie one inside the
/// other, but for each hole inside its own outline: what the item's area and the verifier take
/// for granted.
pub fn check_items(path: &std::path::Path, items: &[Item]) -> anyhow::Result<()> {
    use crate::geometry::exact::{find_crossing, point_in_ring};
    for it in items {
        let bad = |why: String| anyhow::anyhow!("{}: item {}: {why}", path.display(), it.id);
        let polygons = it.shape.polygons();
        if polygons.is_empty() {
            return Err(bad("a multi_polygon with no polygon".into()));
        }
        let mut shapes = Vec::with_capacity(polygons.len());
        for (outer, holes) in &polygons {
            let shape = Shape::new(outer.clone(), holes.clone());
            if shape.rings().any(|r| r.len() < 3) || shape.outer_area() <= 0.0 {
                return Err(bad("a ring with under three vertices or no area".into()));
            }
            if holes.len() != shape.holes().len() {
                return Err(bad("a hole with under three vertices".into()));
            }
            if shape
                .holes()
                .iter()
                .any(|h| !point_in_ring(h[0], shape.outer()))
            {
                return Err(bad("a hole outside its outline".into()));
            }
            shapes.push(shape);
        }
        let rings: Vec<Vec<Point>> = shapes
            .iter()
            .flat_map(|s| s.rings().map(|r| r.to_vec()))
            .collect();
        if let Some(at) = find_crossing(&rings) {
            return Err(bad(format!(
                "its edges cross near ({:.4}, {:.4})",
                at.x, at.y
            )));
        }
        // no crossing: one ring inside another shows by any of its vertices
        for (a, sa) in shapes.iter().enumerate() {
            for (b, sb) in shapes.iter().enumerate() {
                if a != b && point_in_ring(sa.outer()[0], sb.outer()) {
                    return Err(bad("one of its polygons lies inside another".into()));
                }
            }
            for (i, hi) in sa.holes().iter().enumerate() {
                if sa
                    .holes()
                    .iter()
                    .enumerate()
                    .any(|(j, hj)| i != j && point_in_ring(hi[0], hj))
                {
                    return Err(bad("a hole inside another hole".into()));
                }
            }
        }
    }
    Ok(())
}

/// An item's geometry, read from the instance alone.
pub fn item_geometry(it: &Item) -> PartGeometry {
    PartGeometry::new(
        it.shape
            .polygons()
            .into_iter()
            .map(|(outer, holes)| Shape::new(outer, holes))
            .collect(),
    )
}

/// The instance's items as parts: their demand, and their allowed orientations (any angle in
/// steps of `FREE_ROTATION_STEP` where none are listed).
pub fn parts(items: &[Item]) -> Vec<PartSpec> {
    items
        .iter()
        .map(|it| {
            let rotations = match &it.allowed_orientations {
                Some(v) if !v.is_empty() => v.clone(),
                _ => (0..(360.0 / FREE_ROTATION_STEP) as u32)
                    .map(|k| k as f64 * FREE_ROTATION_STEP)
                    .collect(),
            };
            PartSpec {
                rotations,
                ..PartSpec::new(&it.id.to_string(), item_geometry(it), it.demand)
            }
        })
        .collect()
}

pub fn problem(inst: &Instance, settings: Settings) -> Problem {
    let parts = parts(&inst.items);
    // A strip long enough for the first-fit construction at a density of a third, plus the
    // longest part: far more than any layout needs, without inflating the raster grid.
    let total_area: f64 = parts
        .iter()
        .map(|p| p.geometry.area() * p.quantity as f64)
        .sum();
    let longest = parts
        .iter()
        .map(|p| {
            let b = p.geometry.bbox();
            b.width().max(b.height())
        })
        .fold(0.0, f64::max);
    let side_by_side: f64 = parts
        .iter()
        .map(|p| {
            let b = p.geometry.bbox();
            b.width().max(b.height()) * p.quantity as f64
        })
        .sum();
    let length = (3.0 * total_area / inst.strip_height + longest)
        .min(side_by_side)
        .max(inst.strip_height);
    let mut sheet = SheetSpec::rectangle("strip", length, inst.strip_height);
    sheet.quantity = Some(1);
    Problem {
        parts,
        sheets: vec![sheet],
        settings,
    }
}

pub struct Outcome {
    pub solution: Solution,
    pub parts: u32,
    pub placed: u32,
    pub seconds: f64,
    pub verified: Result<(), String>,
    pub svg: String,
}

pub fn run(inst: &Instance, settings: Settings, eval: &dyn Evaluator) -> anyhow::Result<Outcome> {
    let problem = problem(inst, settings);
    let cancel = CancelHandle::default();
    let result = nest2d::nest(&problem, eval, &cancel, &|_| {})?;
    let layout = result
        .layouts
        .first()
        .ok_or_else(|| anyhow::anyhow!("{}: nothing placed", inst.name))?;
    let item_area = problem.demanded_area();
    let used = result.stats.used_length;
    let solution = Solution {
        instance: inst.name.clone(),
        strip_height: inst.strip_height,
        used_length: used,
        density: item_area / (inst.strip_height * used),
        placements: solution_placements(&inst.items, layout),
    };
    let verified = check_solution(inst, &solution);
    // the picture shows the strip up to the length used
    let mut drawn = problem.clone();
    for sheet in &mut drawn.sheets {
        if let crate::nest2d::SheetShape::Rectangle { width, .. } = &mut sheet.shape {
            *width = used;
        }
    }
    let svg = layouts_svg(&drawn, &result.layouts);
    Ok(Outcome {
        parts: result.stats.parts_requested,
        placed: result.stats.parts_placed,
        seconds: result.stats.elapsed_s,
        solution,
        verified,
        svg,
    })
}

/// Rebuilds every placed item from the instance file alone (as an outside reader would) and
/// checks the layout exactly: every demanded item placed, none overlapping, all inside the strip
/// of the stated used length, and the density recomputed.
pub fn check_solution(inst: &Instance, sol: &Solution) -> Result<(), String> {
    use crate::nest2d::verify::verify_sheet;
    let demand: u32 = inst.items.iter().map(|i| i.demand).sum();
    if sol.placements.len() as u32 != demand {
        return Err(format!("{} of {demand} items placed", sol.placements.len()));
    }
    let shapes = placed_items(&inst.items, &sol.placements)?;
    let strip = SheetSpec::rectangle("strip", sol.used_length, inst.strip_height);
    let v = verify_sheet(&strip, &shapes);
    if let Some(first) = v.first() {
        return Err(format!("{} violation(s), first: {first}", v.len()));
    }
    let area: f64 = shapes.iter().map(|s| s.geometry.area()).sum();
    let density = area / (inst.strip_height * sol.used_length);
    if (density - sol.density).abs() > 1e-9 {
        return Err(format!(
            "density recomputes to {density}, file says {}",
            sol.density
        ));
    }
    Ok(())
}

/// Every placement rebuilt from the instance's items alone (as an outside reader would): the
/// item's polygon, mirrored, rotated (an allowed orientation) and translated as written.
pub fn placed_items(
    items: &[Item],
    placements: &[SolutionPlacement],
) -> Result<Vec<crate::nest2d::verify::PlacedShape>, String> {
    use crate::nest2d::verify::{placed_geometry, PlacedShape};
    placements
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let it = items
                .iter()
                .find(|i| i.id == p.item_id)
                .ok_or(format!("unknown item {}", p.item_id))?;
            if let Some(allowed) = &it.allowed_orientations {
                if !allowed.iter().any(|a| (a - p.rotation).abs() < 1e-9) {
                    return Err(format!(
                        "item {} rotated {} degrees, not allowed",
                        p.item_id, p.rotation
                    ));
                }
            }
            Ok(PlacedShape {
                label: format!("item {} (placement {k})", p.item_id),
                geometry: placed_geometry(&item_geometry(it), p.mirrored, p.rotation, p.x, p.y),
                spacing: 0.0,
            })
        })
        .collect()
}

/// The layouts drawn as one SVG (the renderer's defaults), for a person to look at.
pub fn layouts_svg(problem: &Problem, layouts: &[crate::nest2d::SheetLayout]) -> String {
    crate::export::render::svg(
        problem,
        layouts,
        &crate::export::render::RenderOptions {
            format: crate::export::render::RenderFormat::Svg,
            ..Default::default()
        },
    )
    .text
}

/// A layout's placements in the file convention: the instance's item id for each part.
pub fn solution_placements(
    items: &[Item],
    layout: &crate::nest2d::SheetLayout,
) -> Vec<SolutionPlacement> {
    layout
        .placements
        .iter()
        .map(|p| SolutionPlacement {
            item_id: items[p.part].id,
            rotation: p.rotation,
            mirrored: p.mirrored,
            x: p.x,
            y: p.y,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(shape: &str) -> Item {
        serde_json::from_str(&format!(r#"{{"id": 7, "demand": 1, "shape": {shape}}}"#)).unwrap()
    }

    fn checked(it: &Item) -> anyhow::Result<()> {
        check_items(std::path::Path::new("t.json"), std::slice::from_ref(it))
    }

    #[test]
    fn the_four_jagua_rs_shape_forms_read_as_their_areas() {
        let cases = [
            // a closing vertex repeated, as jagua-rs files write them
            (
                r#"{"type": "simple_polygon", "data": [[0, 0], [4, 0], [4, 3], [0, 0]]}"#,
                6.0,
            ),
            (
                r#"{"type": "rectangle", "data": {"x_min": 1, "y_min": 2, "width": 3, "height": 5}}"#,
                15.0,
            ),
            (
                r#"{"type": "polygon", "data": {"outer": [[0, 0], [10, 0], [10, 10], [0, 10]],
                    "inner": [[[2, 2], [8, 2], [8, 8], [2, 8]]]}}"#,
                64.0,
            ),
            (
                r#"{"type": "multi_polygon", "data": [{"outer": [[0, 0], [3, 0], [3, 1], [0, 1]]},
                    {"outer": [[0, 2], [3, 2], [3, 3], [0, 3]], "inner": []}]}"#,
                6.0,
            ),
        ];
        for (shape, area) in cases {
            let it = item(shape);
            checked(&it).unwrap();
            let g = item_geometry(&it);
            assert!((g.area() - area).abs() < 1e-9, "{shape}: {}", g.area());
        }
        let g = item_geometry(&item(cases[2].0));
        assert_eq!((g.components().len(), g.hole_count()), (1, 1));
        assert_eq!(item_geometry(&item(cases[3].0)).components().len(), 2);
    }

    #[test]
    fn a_broken_item_is_named_with_the_reason() {
        let err = |shape: &str| checked(&item(shape)).unwrap_err().to_string();
        let e = err(r#"{"type": "simple_polygon", "data": [[0, 0], [1, 1]]}"#);
        assert!(e.contains("item 7") && e.contains("three vertices"), "{e}");
        let e = err(r#"{"type": "simple_polygon", "data": [[0, 0], [4, 4], [4, 0], [0, 2]]}"#);
        assert!(e.contains("item 7") && e.contains("cross"), "{e}");
        let e = err(
            r#"{"type": "polygon", "data": {"outer": [[0, 0], [4, 0], [4, 4], [0, 4]],
                "inner": [[[5, 5], [6, 5], [6, 6]]]}}"#,
        );
        assert!(e.contains("hole outside"), "{e}");
        let e = err(
            r#"{"type": "multi_polygon", "data": [{"outer": [[0, 0], [4, 0], [4, 4], [0, 4]]},
                {"outer": [[1, 1], [2, 1], [2, 2], [1, 2]]}]}"#,
        );
        assert!(e.contains("inside another"), "{e}");
        let e = err(
            r#"{"type": "multi_polygon", "data": [{"outer": [[0, 0], [4, 0], [4, 4], [0, 4]]},
                {"outer": [[3, 3], [6, 3], [6, 6], [3, 6]]}]}"#,
        );
        assert!(e.contains("cross"), "{e}");
        let e = err(r#"{"type": "multi_polygon", "data": []}"#);
        assert!(e.contains("no polygon"), "{e}");
        assert!(serde_json::from_str::<Item>(
            r#"{"id": 1, "demand": 1, "shape": {"type": "circle", "data": [1]}}"#
        )
        .is_err());
    }
}
