//! Multi-sheet nesting: ESICUP parts (jagua-rs JSON) on a list of rectangular sheets instead of
//! a strip. The figures: sheets used against the area bound (total part area over the first
//! sheet's area), sheet equivalents (full sheets plus the last sheet's used length over its
//! length) and the utilisation of every sheet but the last.

use super::esicup::{
    check_items, layouts_svg, parts, placed_items, solution_placements, Item, SolutionPlacement,
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
