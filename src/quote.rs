//! Quote nesting in engine terms (DESIGN 5.6): one part priced alone. The part is nested in
//! its quantity on each sheet type it may use, and the sheet that takes the least material per
//! part is its best sheet.
//!
//! Copies of one part are all alike, so a full sheet's layout can be cut again and again: the
//! sub-nest nests only as many copies as could ever share one sheet (its quantity, at most the
//! sheet's area over the part's), takes the fullest sheet of that nest as the layout every
//! full sheet repeats, and fills the last sheet with the copies left, taken from that layout
//! nearest the sheet's start (a subset of a valid layout is valid). So a quote of 10 000
//! copies costs no more than one sheet's nest.
//!
//! Figures (millimetres; the wire layer adds the caller's units):
//! - PartsPerSheet: copies on the fullest sheet; SheetsRequired: sheets for the quantity.
//! - The material a quote consumes: every full sheet whole, and the last sheet up to its used
//!   length (the rest of it is a remnant that goes back to stock), as the engine's own
//!   utilisation counts it (DESIGN 5.2). MaterialAreaPerPart is that over the quantity, and
//!   Utilisation the quantity's part area over it, in percent.
//! - CutLength: the part's outlines and holes as drawn, arcs as arcs (`PartGeometry::cut_length`).

use crate::cancel::CancelHandle;
use crate::nest2d::{self, frame::Frame, verify, Placement, Problem, SheetShape};
use kerf_kernels::Evaluator;

/// When the request leaves MaxRunTimeSeconds at 0, each sub-nest gets this long (a quote is
/// priced part by part; the standard nest's default of a minute each would make a quote of
/// fifty parts take most of an hour).
pub const DEFAULT_SUB_NEST_S: f64 = 5.0;

/// Why a part could not be priced.
#[derive(Clone, Debug, PartialEq)]
pub enum SubNestError {
    /// No copy fits on any of the sheets (the reason names each sheet's refusal).
    DoesNotFit(String),
    /// The engine refused the sub-problem.
    Engine(String),
}

impl SubNestError {
    /// The ErrorCode of the quote's Error payload.
    pub fn code(&self) -> &'static str {
        match self {
            SubNestError::DoesNotFit(_) => "PartDoesNotFit",
            SubNestError::Engine(_) => "NestingFailed",
        }
    }
}

impl std::fmt::Display for SubNestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubNestError::DoesNotFit(why) | SubNestError::Engine(why) => f.write_str(why),
        }
    }
}

/// One part's quote.
#[derive(Clone, Debug, PartialEq)]
pub struct SubNest {
    /// Index of the part in the quote's problem.
    pub part: usize,
    /// Index of its best sheet in the quote's problem.
    pub sheet: usize,
    pub quantity: u32,
    pub parts_per_sheet: u32,
    pub sheets_required: u32,
    /// Percent: the quantity's part area over the material it consumes.
    pub utilisation: f64,
    /// Of one copy, holes subtracted.
    pub part_area: f64,
    pub material_area_per_part: f64,
    pub cut_length: f64,
    /// The part's bounding box as imported (width, height).
    pub bounding_box: (f64, f64),
    /// The layout every full sheet repeats (`part` indexes the quote's problem).
    pub full_sheet: Vec<Placement>,
    /// The last sheet's layout: copies of `full_sheet`'s placements nearest the sheet's start.
    pub last_sheet: Vec<Placement>,
    /// The last sheet's used length along the nesting direction.
    pub last_used_length: f64,
    /// The material the quantity consumes (see the module's notes).
    pub material_area: f64,
    pub elapsed_s: f64,
}

/// Prices part `part` of `problem` alone: its quantity on each of the problem's sheet types in
/// turn (the time limit shared between them), the one with the least material per part kept.
/// `cancel` ends it early with the best found so far. Err: the part fits on no sheet (the
/// reason says why) or the engine failed.
pub fn sub_nest(
    problem: &Problem,
    part: usize,
    eval: &dyn Evaluator,
    cancel: &CancelHandle,
) -> Result<SubNest, SubNestError> {
    let start = std::time::Instant::now();
    let spec = &problem.parts[part];
    let quantity = spec.quantity.max(1);
    let part_area = spec.geometry.area();
    let per_sheet_s = problem.settings.max_run_time_s / problem.sheets.len().max(1) as f64;
    let mut best: Option<SubNest> = None;
    let mut refusals = Vec::new();
    for (si, sheet) in problem.sheets.iter().enumerate() {
        // never more copies than could share one sheet: a full sheet's layout repeats
        let area_bound = (usable_area(sheet) / part_area).floor().max(1.0);
        let copies = (quantity as f64).min(area_bound) as u32;
        let mut alone = spec.clone();
        alone.quantity = copies;
        alone.filler_quantity = 0;
        alone.priority = 0;
        // a quote prices each part alone: an assembly's part is no kit here
        alone.kit = None;
        let mut stock = sheet.clone();
        stock.quantity = None;
        stock.priority = 0;
        let mut settings = problem.settings.clone();
        settings.max_run_time_s = per_sheet_s;
        settings.utilisation_target = None;
        // a quote's last sheet is a subset of the full sheet's placements: copies are priced
        // cut alone (a subset of a block would break its cuts)
        settings.common_cutting = None;
        let sub = Problem {
            parts: vec![alone],
            sheets: vec![stock],
            settings,
        };
        let result = nest2d::nest(&sub, eval, cancel, &|_| {})
            .map_err(|e| SubNestError::Engine(e.to_string()))?;
        let Some(full) = result
            .layouts
            .iter()
            .max_by_key(|l| l.placements.iter().filter(|p| !p.is_filler).count())
            .filter(|l| !l.placements.is_empty())
        else {
            let why = result
                .unplaced
                .first()
                .map(|u| u.reason.clone())
                .unwrap_or_else(|| "no copy could be placed".into());
            refusals.push(format!("sheet '{}': {why}", sheet.id));
            continue;
        };
        let per_sheet = full.placements.len() as u32;
        let sheets_required = quantity.div_ceil(per_sheet);
        let left = quantity - (sheets_required - 1) * per_sheet;
        let (last, last_used) = if left == per_sheet {
            (full.placements.clone(), full.used_length)
        } else {
            nearest_start(&sub, &full.placements, left as usize)
        };
        let (w, h) = sheet.extent();
        let frame = Frame::new(&sub.settings, w, h);
        let material = (sheets_required - 1) as f64 * sheet.area()
            + frame.area_before(&sheet.material(), last_used.max(0.0));
        let with_part = |placements: &[Placement]| {
            placements
                .iter()
                .map(|p| Placement { part, ..p.clone() })
                .collect::<Vec<_>>()
        };
        let bbox = spec.geometry.bbox();
        let candidate = SubNest {
            part,
            sheet: si,
            quantity,
            parts_per_sheet: per_sheet,
            sheets_required,
            utilisation: if material > 0.0 {
                100.0 * quantity as f64 * part_area / material
            } else {
                0.0
            },
            part_area,
            material_area_per_part: material / quantity as f64,
            cut_length: spec.geometry.cut_length(),
            bounding_box: (bbox.width(), bbox.height()),
            full_sheet: with_part(&full.placements),
            last_sheet: with_part(&last),
            last_used_length: last_used,
            material_area: material,
            elapsed_s: 0.0,
        };
        if best
            .as_ref()
            .is_none_or(|b| candidate.material_area_per_part < b.material_area_per_part)
        {
            best = Some(candidate);
        }
    }
    match best {
        Some(mut b) => {
            b.elapsed_s = start.elapsed().as_secs_f64();
            Ok(b)
        }
        None => Err(SubNestError::DoesNotFit(format!(
            "part '{}' fits on none of the sheets: {}",
            spec.id,
            refusals.join("; ")
        ))),
    }
}

/// The sheet's area inside its margins (irregular sheets: their material), the most a sheet
/// can hold.
fn usable_area(sheet: &nest2d::SheetSpec) -> f64 {
    match &sheet.shape {
        SheetShape::Rectangle { width, height } => {
            (width - sheet.left - sheet.right).max(0.0)
                * (height - sheet.top - sheet.bottom).max(0.0)
        }
        SheetShape::Outline(_) => sheet.area(),
    }
}

/// The `n` placements of a one-part layout whose far edges lie nearest the sheet's start along
/// the nesting direction, and the used length they leave.
fn nearest_start(problem: &Problem, placements: &[Placement], n: usize) -> (Vec<Placement>, f64) {
    let sheet = &problem.sheets[0];
    let (w, h) = sheet.extent();
    let frame = Frame::new(&problem.settings, w, h);
    let shape = verify::nesting_geometry(problem, 0);
    let mut by_reach: Vec<(f64, &Placement)> = placements
        .iter()
        .map(|p| {
            let placed = verify::placed_geometry(&shape, p.mirrored, p.rotation, p.x, p.y);
            (frame.reach(&placed), p)
        })
        .collect();
    by_reach.sort_by(|a, b| a.0.total_cmp(&b.0));
    by_reach.truncate(n);
    let used = by_reach.iter().map(|(r, _)| *r).fold(0.0, f64::max);
    let mut chosen: Vec<Placement> = by_reach.into_iter().map(|(_, p)| p.clone()).collect();
    chosen.sort_by_key(|p| p.instance);
    // instance numbers 0..n on the last sheet, as the copies it holds
    for (i, p) in chosen.iter_mut().enumerate() {
        p.instance = i as u32;
    }
    (chosen, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::{PartSpec, SheetSpec};

    fn problem(quantity: u32) -> Problem {
        let mut part = PartSpec::new(
            "plate",
            PartGeometry::single(Shape::rectangle(100.0, 50.0)),
            quantity,
        );
        part.rotations = vec![0.0, 90.0];
        let mut settings = nest2d::Settings::default();
        settings.max_run_time_s = 1.0;
        settings.max_iterations = Some(50);
        settings.max_cpu = 1;
        Problem {
            parts: vec![part],
            sheets: vec![SheetSpec::rectangle("sheet", 1000.0, 500.0)],
            settings,
        }
    }

    #[test]
    fn a_quantity_of_many_sheets_repeats_the_full_sheet_and_leaves_a_remainder() {
        let eval = kerf_kernels::CpuEvaluator;
        let q = problem(250);
        let s = sub_nest(&q, 0, &eval, &CancelHandle::default()).unwrap();
        // 100 rectangles of 100 x 50 tile a 1000 x 500 sheet exactly
        assert_eq!(s.parts_per_sheet, 100);
        assert_eq!(s.sheets_required, 3);
        assert_eq!(s.full_sheet.len(), 100);
        assert_eq!(s.last_sheet.len(), 50);
        // two whole sheets and the last one up to its used length
        let expected = 2.0 * 500_000.0 + s.last_used_length * 500.0;
        assert!((s.material_area - expected).abs() < 1e-6);
        assert!(s.last_used_length <= 1000.0 + 1e-9 && s.last_used_length >= 500.0 - 1e-9);
        assert!((s.cut_length - 300.0).abs() < 1e-9);
        assert_eq!(s.bounding_box, (100.0, 50.0));
    }

    #[test]
    fn an_assemblys_part_is_priced_alone() {
        // 3 kits of 7 copies: 21 copies of the part, priced alone as any other part (and a
        // sheet's share of copies need not make whole kits)
        let eval = kerf_kernels::CpuEvaluator;
        let mut q = problem(21);
        q.parts[0].kit = Some(nest2d::KitRole {
            assembly: 0,
            per_kit: 7,
        });
        q.sheets[0] = SheetSpec::rectangle("sheet", 450.0, 100.0);
        let s = sub_nest(&q, 0, &eval, &CancelHandle::default()).unwrap();
        // 4 x 2 upright and one turned in the 50 x 100 left over: 9 a sheet, no multiple of 7
        assert_eq!((s.parts_per_sheet, s.sheets_required), (9, 3));
    }

    #[test]
    fn a_part_larger_than_every_sheet_is_refused_with_the_reason() {
        let eval = kerf_kernels::CpuEvaluator;
        let mut q = problem(3);
        q.parts[0].geometry = PartGeometry::single(Shape::rectangle(2000.0, 2000.0));
        let e = sub_nest(&q, 0, &eval, &CancelHandle::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("fits on none of the sheets") && e.contains("'sheet'"),
            "{e}"
        );
    }
}
