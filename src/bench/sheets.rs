//! Multi-sheet nesting: ESICUP parts (jagua-rs JSON) on a list of rectangular sheets instead of
//! a strip. The figures: sheets used against the area bound (total part area over the first
//! sheet's area), sheet equivalents (full sheets plus the last sheet's used length over its
//! length) and the utilisation of every sheet but the last.

use super::esicup::{
    self, check_items, layouts_svg, parts, placed_items, solution_placements, Item,
    SolutionPlacement,
};
use crate::nest2d::{self, CancelHandle, Problem, Settings, SheetSpec};
use kerf_kernels::Evaluator;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
pub struct Instance {
    pub name: String,
    pub items: Vec<Item>,
    pub sheets: Vec<SheetDef>,
}

#[derive(Deserialize)]
pub struct SheetDef {
    pub id: String,
    pub width: f64,
    pub height: f64,
    /// 0: as many as needed.
    #[serde(default)]
    pub quantity: u32,
}

#[derive(Serialize, Deserialize)]
pub struct Solution {
    pub instance: String,
    pub sheets_used: u32,
    pub sheet_equivalents: f64,
    /// Every sheet cut, in order (a layout used several times appears that many times).
    pub sheets: Vec<SheetSolution>,
}

#[derive(Serialize, Deserialize)]
pub struct SheetSolution {
    pub sheet_id: String,
    pub width: f64,
    pub height: f64,
    pub placements: Vec<SolutionPlacement>,
}

pub fn load(path: &std::path::Path) -> anyhow::Result<Instance> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let inst: Instance = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a jagua-rs instance with a sheets list ({e})",
            path.display()
        )
    })?;
    check_items(path, &inst.items)?;
    if inst.sheets.is_empty() {
        anyhow::bail!("{}: no sheets", path.display());
    }
    for s in &inst.sheets {
        if !(s.width > 0.0 && s.height > 0.0) {
            anyhow::bail!(
                "{}: sheet {}: width and height must be positive",
                path.display(),
                s.id
            );
        }
    }
    Ok(inst)
}

pub fn problem(inst: &Instance, settings: Settings) -> Problem {
    Problem {
        parts: parts(&inst.items),
        sheets: inst
            .sheets
            .iter()
            .map(|s| SheetSpec {
                quantity: (s.quantity > 0).then_some(s.quantity),
                ..SheetSpec::rectangle(&s.id, s.width, s.height)
            })
            .collect(),
        settings,
    }
}

/// The same parts as one strip of the first sheet's height: what `bench esicup` packs. The
/// sheets are measured against the density the strip search reaches on the same parts in the
/// same time (`--strip`), not against the instance the parts came from (fewer parts in the same
/// time pack differently).
pub fn as_strip(inst: &Instance) -> esicup::Instance {
    esicup::Instance {
        name: format!("{}_strip", inst.name),
        strip_height: inst.sheets[0].height,
        items: inst.items.clone(),
    }
}

/// How many sheets of the first size the parts need at the strip's density (a fraction): the
/// area bound over the density, rounded up. The multi-sheet search's bar.
pub fn sheets_at_density(area_bound: f64, density: f64) -> u32 {
    // a hair of slack: 5.0000000001 sheets' worth is five sheets
    (area_bound / density - 1e-9).ceil().max(1.0) as u32
}

/// How many points (of utilisation, percent) the least-used full sheet lies under `density`
/// (a fraction); negative when every full sheet is denser. `None` with one sheet.
pub fn worst_gap(full_sheet_utilisation: &[f64], density: f64) -> Option<f64> {
    full_sheet_utilisation
        .iter()
        .map(|u| 100.0 * density - u)
        .reduce(f64::max)
}

pub struct Outcome {
    pub solution: Solution,
    pub parts: u32,
    pub placed: u32,
    /// Total part area over the first sheet's area.
    pub area_bound: f64,
    /// Distinct layouts among the sheets (RepeatPreference trades these against material).
    pub layouts: usize,
    /// Utilisation (percent) of every sheet but the last, in order.
    pub full_sheet_utilisation: Vec<f64>,
    pub seconds: f64,
    pub verified: Result<(), String>,
    pub svg: String,
}

pub fn run(inst: &Instance, settings: Settings, eval: &dyn Evaluator) -> anyhow::Result<Outcome> {
    let problem = problem(inst, settings);
    let cancel = CancelHandle::default();
    let result = nest2d::nest(&problem, eval, &cancel, &|_| {})?;
    let part_area = problem.demanded_area();
    let mut full_sheet_utilisation: Vec<f64> = result
        .layouts
        .iter()
        .flat_map(|l| std::iter::repeat_n(l.utilisation, l.multiplicity as usize))
        .collect();
    // the last sheet counts by its used length; the engine lists it last
    full_sheet_utilisation.pop();
    let solution = solution(inst, &result);
    let verified = check_solution(inst, &solution);
    let svg = layouts_svg(&problem, &result.layouts);
    Ok(Outcome {
        parts: result.stats.parts_requested,
        placed: result.stats.parts_placed,
        area_bound: part_area / inst.sheets[0].width / inst.sheets[0].height,
        full_sheet_utilisation,
        layouts: result.layouts.len(),
        seconds: result.stats.elapsed_s,
        solution,
        verified,
        svg,
    })
}

/// The result as the bench writes it: every sheet cut, in order (a layout used several times
/// appears that many times), and the sheet equivalents (full sheets plus the last sheet's used
/// length over its length; the engine lists the last sheet last).
pub fn solution(inst: &Instance, result: &nest2d::NestResult) -> Solution {
    let mut sheets = Vec::new();
    for layout in &result.layouts {
        let def = &inst.sheets[layout.sheet];
        for _ in 0..layout.multiplicity {
            sheets.push(SheetSolution {
                sheet_id: def.id.clone(),
                width: def.width,
                height: def.height,
                placements: solution_placements(&inst.items, layout),
            });
        }
    }
    let last_fraction = sheets
        .last()
        .map(|s| (result.stats.used_length / s.width).min(1.0))
        .unwrap_or(0.0);
    Solution {
        instance: inst.name.clone(),
        sheets_used: sheets.len() as u32,
        sheet_equivalents: sheets.len().saturating_sub(1) as f64 + last_fraction,
        sheets,
    }
}

/// Rebuilds every sheet from the instance file alone and checks it exactly: each item placed as
/// often as demanded over all sheets (none lost, none twice), no two overlapping, all on their
/// sheet, no sheet type used more often than its quantity.
pub fn check_solution(inst: &Instance, sol: &Solution) -> Result<(), String> {
    use crate::nest2d::verify::verify_sheet;
    let mut placed: std::collections::HashMap<u64, u32> = Default::default();
    let mut used: std::collections::HashMap<&str, u32> = Default::default();
    for (k, sheet) in sol.sheets.iter().enumerate() {
        let def = inst
            .sheets
            .iter()
            .find(|s| s.id == sheet.sheet_id)
            .ok_or(format!("sheet {k}: unknown sheet {}", sheet.sheet_id))?;
        if def.width != sheet.width || def.height != sheet.height {
            return Err(format!("sheet {k}: not the size of sheet {}", def.id));
        }
        *used.entry(&def.id).or_default() += 1;
        let shapes = placed_items(&inst.items, &sheet.placements)?;
        let v = verify_sheet(
            &SheetSpec::rectangle(&def.id, def.width, def.height),
            &shapes,
        );
        if let Some(first) = v.first() {
            return Err(format!(
                "sheet {k}: {} violation(s), first: {first}",
                v.len()
            ));
        }
        for p in &sheet.placements {
            *placed.entry(p.item_id).or_default() += 1;
        }
    }
    for def in &inst.sheets {
        let n = used.get(def.id.as_str()).copied().unwrap_or(0);
        if def.quantity > 0 && n > def.quantity {
            return Err(format!(
                "sheet {} used {n} times, {} available",
                def.id, def.quantity
            ));
        }
    }
    for it in &inst.items {
        let n = placed.get(&it.id).copied().unwrap_or(0);
        if n != it.demand {
            return Err(format!(
                "item {} placed {n} times, demand {}",
                it.id, it.demand
            ));
        }
    }
    if sol.sheets_used as usize != sol.sheets.len() {
        return Err("sheets_used is not the number of sheets listed".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_is_the_area_bound_at_the_strip_density_rounded_up() {
        assert_eq!(sheets_at_density(5.06, 0.847), 6); // 5.97
        assert_eq!(sheets_at_density(4.35, 0.8655), 6); // 5.03
        assert_eq!(sheets_at_density(4.25, 0.85), 5); // exactly 5
        assert_eq!(sheets_at_density(0.1, 0.9), 1);
    }

    #[test]
    fn the_worst_gap_is_the_emptiest_full_sheet_under_the_strip() {
        assert_eq!(worst_gap(&[], 0.85), None);
        let gap = worst_gap(&[84.0, 80.0, 86.0], 0.85).unwrap();
        assert!((gap - 5.0).abs() < 1e-9, "{gap}");
        assert!(worst_gap(&[90.0], 0.85).unwrap() < 0.0);
    }

    #[test]
    fn the_strip_holds_the_same_parts_at_the_first_sheets_height() {
        let inst: Instance = serde_json::from_str(
            r#"{"name": "t", "items": [{"id": 3, "demand": 4, "shape": {"type": "simple_polygon",
                "data": [[0, 0], [2, 0], [2, 1], [0, 1]]}}],
                "sheets": [{"id": "A", "width": 10, "height": 7}, {"id": "B", "width": 5, "height": 9}]}"#,
        )
        .unwrap();
        let strip = as_strip(&inst);
        assert_eq!(strip.strip_height, 7.0);
        assert_eq!(strip.items.len(), 1);
        assert_eq!((strip.items[0].id, strip.items[0].demand), (3, 4));
        assert_eq!(strip.name, "t_strip");
    }
}
