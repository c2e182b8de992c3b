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

#[derive(Clone, Deserialize)]
pub struct ItemShape {
    #[serde(rename = "type")]
    pub kind: String,
    pub data: Vec<[f64; 2]>,
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

/// Every item must be a simple polygon with three vertices or more.
pub fn check_items(path: &std::path::Path, items: &[Item]) -> anyhow::Result<()> {
    for it in items {
        if it.shape.kind != "simple_polygon" || it.shape.data.len() < 3 {
            anyhow::bail!(
                "{}: item {}: only simple_polygon shapes with 3+ vertices are supported",
                path.display(),
                it.id
            );
        }
    }
    Ok(())
}

/// An item's polygon, read from the instance alone.
pub fn item_geometry(it: &Item) -> PartGeometry {
    PartGeometry::single(Shape::new(
        it.shape
            .data
            .iter()
            .map(|p| Point::new(p[0], p[1]))
            .collect(),
        vec![],
    ))
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
