//! The engine's entry point: prepares rasters, fills sheets in priority order, compacts the last
//! sheet with the guided local search until the time limit, verifies exactly, groups identical
//! layouts, and reports interim results through a callback.

use super::axis::{self, Construction};
use super::cut_check::SharedCuts;
use super::frame::Frame;
use super::model::*;
use super::raster::{blocked_cells, rasterize};
use super::search::{fill, Budget, Compactor, Oriented, Pose, SheetArea};
use super::sheets::{SheetSearch, SEARCH_RESOLUTION};
use super::verify::{
    nesting_geometry, part_spacing, placed_geometry, verify_layout, PlacedShape, Violation,
};
use crate::geometry::{Affine, PartGeometry, Point, Shape};
use kerf_kernels::raster::{PartRaster, Run};
use kerf_kernels::Evaluator;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NestError {
    #[error("no parts to nest")]
    NoParts,
    #[error("no sheets to nest on")]
    NoSheets,
    #[error("{0}")]
    Invalid(String),
}

pub use crate::cancel::CancelHandle;

/// One unit of demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Item {
    pub(super) part: usize,
    pub(super) instance: u32,
    pub(super) is_filler: bool,
}

impl Item {
    /// The same copy of the same part.
    pub(super) fn same_unit(&self, other: &Item) -> bool {
        self.part == other.part && self.instance == other.instance
    }
}

/// Every part's orientations rasterized at one cell size.
pub(super) type Table = Arc<Vec<Vec<Oriented>>>;

/// A raster resolution: cell size, orientation table, and the grid margin it needs.
#[derive(Clone)]
pub(super) struct Resolution {
    pub(super) cell: f64,
    pub(super) table: Table,
    pub(super) margin: i32,
}

/// Every part in every orientation, rasterized at `cells_per_part` (what each compaction phase
/// builds), with the cell size it came to (larger than asked where the sheets would pass the
/// grid's cap); `kerf bench raster` times it.
pub fn orientation_table(problem: &Problem, cells_per_part: f64) -> (f64, Vec<Vec<Oriented>>) {
    let res = resolution(problem, cells_per_part);
    let table = Arc::try_unwrap(res.table).unwrap_or_else(|shared| shared.to_vec());
    (res.cell, table)
}

pub(super) fn resolution(problem: &Problem, cells_per_part: f64) -> Resolution {
    let s = &problem.settings;
    let (cell, typical) = choose_cell(problem, cells_per_part);
    let depth = DepthScale {
        levels: s.overlap_depth.clone(),
        unit: typical / cell,
    };
    // the linear part of the frame is the same for every sheet size
    let frame0 = Frame::new(s, 1.0, 1.0);
    let spacing_min = (0..problem.parts.len())
        .map(|i| part_spacing(problem, i))
        .fold(f64::INFINITY, f64::min);
    let table: Vec<Vec<Oriented>> = (0..problem.parts.len())
        .map(|i| orientations(problem, i, &frame0, cell, spacing_min, &depth))
        .collect();
    let margin = table.iter().flatten().map(|o| o.margin).max().unwrap_or(0) as i32 + 1;
    Resolution {
        cell,
        table: Arc::new(table),
        margin,
    }
}

/// The whole-cell shifts that bracket a shift of `cells` (one when it is whole).
fn cells_either_side(cells: f64) -> Vec<i32> {
    let below = cells.floor();
    if cells - below <= 1e-9 {
        vec![below as i32]
    } else {
        vec![below as i32, below as i32 + 1]
    }
}

/// A sheet as filled by the engine (before grouping).
#[derive(Clone, Debug)]
pub(super) struct FilledSheet {
    pub(super) sheet: usize,
    pub(super) frame: Frame,
    pub(super) area: SheetArea,
    /// The orientation table (resolution) that `placed` refers to.
    pub(super) table: Table,
    pub(super) placed: Vec<(Item, Pose)>,
    /// Exact offsets (canonical mm) from the final slide, by index into `placed`; missing = 0.
    pub(super) nudges: Vec<Point>,
}

impl FilledSheet {
    fn nudge(&self, k: usize) -> Point {
        self.nudges.get(k).copied().unwrap_or_default()
    }

    /// The area of the parts it holds.
    pub(super) fn part_area(&self, problem: &Problem) -> f64 {
        self.placed
            .iter()
            .map(|(i, _)| problem.parts[i.part].geometry.area())
            .sum()
    }

    /// The resolution its poses refer to.
    pub(super) fn resolution(&self) -> Resolution {
        Resolution {
            cell: self.area.cell,
            table: self.table.clone(),
            margin: self.area.margin,
        }
    }

    /// Each placed part's orientation list, in `placed` order: what a `Compactor` searches.
    pub(super) fn orientation_lists(&self) -> Vec<&[Oriented]> {
        self.placed
            .iter()
            .map(|(i, _)| self.table[i.part].as_slice())
            .collect()
    }

    /// Each placed part's pose, in `placed` order.
    pub(super) fn poses(&self) -> Vec<Pose> {
        self.placed.iter().map(|(_, p)| *p).collect()
    }

    /// The sheet's grid with every placed raster on it.
    pub(super) fn occupancy(&self) -> kerf_kernels::Occupancy {
        let mut occ = self.area.new_occupancy();
        let m = self.area.margin;
        for (k, (it, p)) in self.placed.iter().enumerate() {
            let raster = &self.table[it.part][p.orient].raster;
            // a part the exact slide moved lies between cells: a conservative raster shifted by
            // the whole cells either side of its offset covers it (a filler placed later must
            // not land on it)
            let nudge = self.nudges.get(k).copied().unwrap_or(Point::new(0.0, 0.0));
            for dx in cells_either_side(nudge.x / self.area.cell) {
                for dy in cells_either_side(nudge.y / self.area.cell) {
                    occ.place(raster, p.gx + m + dx, p.gy + m + dy);
                }
            }
        }
        occ
    }

    /// First-fits `pool`'s parts (in pool order: the caller's `PlacingOrder`) into the room the
    /// sheet has left. Returns how many it placed; they leave the pool (none when `deadline`
    /// passes).
    pub(super) fn refill(
        &mut self,
        eval: &dyn Evaluator,
        pool: &mut Vec<Item>,
        deadline: Instant,
    ) -> usize {
        if pool.is_empty() {
            return 0;
        }
        let mut occ = self.occupancy();
        let table = self.table.clone();
        let lists: Vec<&[Oriented]> = pool.iter().map(|i| table[i.part].as_slice()).collect();
        let Some(poses) = fill(eval, &self.area, &mut occ, &lists, f64::INFINITY, deadline) else {
            return 0;
        };
        let mut rest = Vec::with_capacity(pool.len());
        let mut added = 0;
        for (item, pose) in pool.iter().zip(poses) {
            match pose {
                Some(p) => {
                    self.placed.push((*item, p));
                    added += 1;
                }
                None => rest.push(*item),
            }
        }
        *pool = rest;
        added
    }

    /// Extent of the parts along the fill direction, from the sheet's start (exact, nudges included).
    pub(super) fn used_length(&self) -> f64 {
        self.placed
            .iter()
            .enumerate()
            .map(|(k, (it, p))| {
                self.table[it.part][p.orient].right_edge(self.area.cell, p.gx) + self.nudge(k).x
            })
            .fold(0.0, f64::max)
    }
}

pub fn nest(
    problem: &Problem,
    eval: &dyn Evaluator,
    cancel: &CancelHandle,
    on_interim: &(dyn Fn(&NestResult) + Sync),
) -> Result<NestResult, NestError> {
    validate(problem)?;
    // common-line cutting: blocks of copies nest as parts, expanded afterwards
    match super::common_cut::Plan::of(problem, eval) {
        Some(plan) => super::common_cut::nest_in_blocks(
            &plan,
            problem,
            |p, interim| nest_parts(p, eval, cancel, interim),
            on_interim,
        ),
        None => nest_parts(problem, eval, cancel, on_interim),
    }
}

/// How many copies of each part a quick first-fit (a quarter of the final resolution, but at
/// least 16 cells across a typical part, no search) leaves out: cheap, and what `common_cut`
/// checks its blocks against when the stock of sheets is limited.
pub(super) fn quick_unplaced(problem: &Problem, eval: &dyn Evaluator) -> Vec<u32> {
    let cpp = problem.settings.cells_per_part;
    let res = resolution(problem, (cpp * 0.25).max(16.0).min(cpp));
    let (_, unplaced) = fill_sheets(problem, eval, &res, no_deadline()).expect("no deadline");
    let mut out = vec![0; problem.parts.len()];
    for (item, _) in unplaced {
        out[item.part] += 1;
    }
    out
}

/// `nest` for a problem whose parts nest as they are.
fn nest_parts(
    problem: &Problem,
    eval: &dyn Evaluator,
    cancel: &CancelHandle,
    on_interim: &(dyn Fn(&NestResult) + Sync),
) -> Result<NestResult, NestError> {
    let start = Instant::now();
    validate(problem)?;
    let s = &problem.settings;
    // the exact slide at the end gets a small reserve of the time limit
    let reserve = (0.05 * s.max_run_time_s).clamp(0.0, 3.0);
    let deadline = start + Duration::from_secs_f64((s.max_run_time_s - reserve).max(0.0));
    let (across, (mut filled, unplaced)) = fill_all_sheets(problem, eval, deadline);
    // the problem the sheets were filled in: the asked one, or the same across it (`axis`)
    let filled_in = across.as_ref().unwrap_or(problem);
    let engine_name = eval.name();
    let result_of = |filled: &[FilledSheet], unplaced: &[(Item, String)]| -> NestResult {
        build_result(problem, filled, unplaced, start, &engine_name)
    };
    // the first complete layout is a result already: a watcher sees it long before the
    // search's first improvement (which may take most of the time limit on a big job)
    if !filled.is_empty() {
        on_interim(&result_of(&filled, &unplaced));
    }

    let search_cells = search_cells(s);
    // several sheets: rebuild them one by one, each dense, and empty the last into the others
    // (the search takes its share of the time left, `sheets::TimeShares`); the last sheet's
    // compaction below gets what time that leaves
    if filled.len() > 1 {
        let search = SheetSearch {
            problem: filled_in,
            eval,
            cancel,
            threads: search_threads(s),
        };
        // never finer than the construction could afford in its time (a big job's first fit
        // at a finer resolution alone would cost more than the time limit)
        let cells = cells_no_finer_than(filled_in, search_cells, filled[0].area.cell);
        let res = if cells < search_cells {
            filled[0].resolution()
        } else {
            resolution(filled_in, cells)
        };
        // (a rebuild must keep every part and whole kits only; its own passes see to both)
        let parts_of = |f: &[FilledSheet]| f.iter().map(|s| s.placed.len()).sum::<usize>();
        if let Some(better) = search
            .improve(&filled, &res, deadline)
            .filter(|b| parts_of(b) == parts_of(&filled) && super::kits::all_whole(problem, b))
        {
            filled = better;
            on_interim(&result_of(&filled, &unplaced));
        }
    }

    // full sheets filled across the asked direction: the last sheet, whose remnant the shop
    // keeps, is laid out along the asked one again where its parts all fit that way
    let mut last_in = filled_in;
    if let (Some(_), Some(last)) = (&across, filled.last_mut()) {
        let search = SheetSearch {
            problem,
            eval,
            cancel,
            threads: 1,
        };
        if let Some(sheet) = axis::last_sheet_as_asked(&search, last, search_cells, deadline) {
            *last = sheet;
            last_in = problem;
        }
    }

    if let (Objective::MinimiseCost, Some(last)) = (s.objective, filled.last()) {
        let opener = SheetOpener::new(last_in, &last.resolution());
        smaller_last_sheet(opener, eval, &mut filled, deadline);
    }

    // compact the last sheet: shortest used length, refined from coarse to fine rasters
    // (the finishing steps end a tenth of the reserve before the time limit: building the
    // result, verifying it exactly and dropping the search's state come after them)
    let finish_by = start + Duration::from_secs_f64((s.max_run_time_s - 0.1 * reserve).max(0.0));
    if let Some(last) = filled.pop() {
        let results = |f: &[FilledSheet]| result_of(f, &unplaced);
        let mut sheet = compact_last_sheet(
            last_in, eval, cancel, on_interim, &results, &filled, last, start, deadline,
        );
        if sheet.area.blocked.is_none() {
            let slide_by = finishing_deadline(cancel, finish_by, reserve);
            sheet.nudges = exact_slide(last_in, &sheet, slide_by);
        }
        filled.push(sheet);
    }

    // (its own deadline: a slide that used up the reserve must not leave the fillers none)
    add_fillers(
        problem,
        eval,
        &mut filled,
        finishing_deadline(cancel, finish_by, reserve),
    );
    let mut result = result_of(&filled, &unplaced);
    enforce_verified(problem, &mut result);
    result.stats.elapsed_s = start.elapsed().as_secs_f64();
    Ok(result)
}

/// The cells per part of the multi-sheet search's raster: half the final resolution where that
/// is fine enough.
fn search_cells(s: &Settings) -> f64 {
    if s.cells_per_part * SEARCH_RESOLUTION >= 8.0 {
        s.cells_per_part * SEARCH_RESOLUTION
    } else {
        s.cells_per_part
    }
}

/// A deadline for steps that must complete whatever they take (a first fit, which is bounded
/// by its parts): a year away.
pub(super) fn no_deadline() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// When a finishing step (the exact slide, then the fillers) must end. They run after the
/// search and normally have until `finish_by`, a little before the time limit: the reserve the
/// search left them. A stop (continue, StopNesting) ends the search early: then each keeps to
/// that reserve from its start, or a stopped job would still run to its time limit (the slide
/// alone can use all of it).
fn finishing_deadline(cancel: &CancelHandle, finish_by: Instant, reserve_s: f64) -> Instant {
    if cancel.is_cancelled() {
        finish_by.min(Instant::now() + Duration::from_secs_f64(reserve_s))
    } else {
        finish_by
    }
}

/// Threads for the local search: MaximumCPUCount, or every core when it is 0.
fn search_threads(s: &Settings) -> usize {
    if s.max_cpu == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        s.max_cpu as usize
    }
    .max(1)
}

/// MinimiseCost: the last sheet moves to the smallest sheet type (by area) that the sheet rules
/// still allow and that takes all its parts (first-fit), when that is smaller than its own.
fn smaller_last_sheet(
    mut opener: SheetOpener,
    eval: &dyn Evaluator,
    filled: &mut [FilledSheet],
    deadline: Instant,
) {
    let Some((last, others)) = filled.split_last_mut() else {
        return;
    };
    for f in others.iter() {
        opener.take(f.sheet);
    }
    let problem = opener.problem;
    let mut smaller: Vec<usize> = (0..problem.sheets.len())
        .filter(|&si| problem.sheets[si].area() < problem.sheets[last.sheet].area())
        .collect();
    smaller.sort_by(|&a, &b| {
        problem.sheets[a]
            .area()
            .total_cmp(&problem.sheets[b].area())
            .then(a.cmp(&b))
    });
    let items: Vec<Item> = last.placed.iter().map(|(i, _)| *i).collect();
    for si in smaller {
        let mut pending = items.clone();
        match opener.open_on(eval, si, &mut pending, deadline) {
            Some(sheet) if pending.is_empty() => {
                *last = sheet;
                return;
            }
            _ => {}
        }
    }
}

/// Share of the time limit the construction may spend on finer rasters.
const FILL_SHARE: f64 = 0.3;

/// How a first-fit pass's time grows with the resolution: as cells per part to this power.
/// The columns a part may take grow with the resolution, and so does each fit test (the
/// part's rows); the obstacles a column's search jumps past do not, since each jump clears a
/// whole obstacle (`Occupancy::first_free_in_column`). Measured from the quarter to the full
/// resolution (4 times the cells per part), 2026-11-27: trousers_x2 0.009 to 0.124 s (13.8
/// times), shirts_x2 0.0032 to 0.033 s (10 times), gardeyn3_x1 0.041 to 0.246 s (6 times). (When
/// each jump cleared a single cell, the time grew with the cube: trousers_x2 0.13 to 4.35 s.)
const FILL_COST_POWER: i32 = 2;

/// The first-fit pass over every sheet, at the finest resolution whose cost fits the budget
/// (`FILL_SHARE` of the time). A quarter-resolution pass runs first (it always completes, so
/// there is always a layout). The full-resolution pass follows when the last pass's time,
/// scaled by `FILL_COST_POWER`, fits what is left; when it does not, the half-resolution pass
/// runs if it fits, and then the full one if that pass's time says it fits after all (the
/// power overestimates most jobs: measured, 6 to 14 times for 4 times the cells, not 16).
///
/// A job of several sheets is constructed along both axes at the quarter resolution and goes on
/// along the one that ranks better (`axis`); the returned problem is the one the sheets were
/// filled in (the asked one, or its `axis::across`).
fn fill_all_sheets(
    problem: &Problem,
    eval: &dyn Evaluator,
    deadline: Instant,
) -> (Option<Problem>, Construction) {
    let s = &problem.settings;
    let cpp = s.cells_per_part;
    let coarse_factor = if cpp * 0.25 >= 8.0 { 0.25 } else { 1.0 };
    let t0 = Instant::now();
    let mut best = fill_sheets(
        problem,
        eval,
        &resolution(problem, cpp * coarse_factor),
        no_deadline(),
    )
    .expect("no deadline");
    let coarse_s = t0.elapsed().as_secs_f64();
    let mut across = None;
    if let Some((cross, other)) = axis::better_across(problem, eval, cpp * coarse_factor, &best) {
        across = Some(cross);
        best = other;
    }
    let problem = across.as_ref().unwrap_or(problem);
    // (factor, seconds) of the finest pass that completed
    let mut last = (coarse_factor, coarse_s);
    tracing::info!(cells_per_part = cpp * last.0, seconds = last.1, "first-fit");
    let share_end = t0 + deadline.saturating_duration_since(t0).mul_f64(FILL_SHARE);
    for factor in [1.0, 0.5, 1.0] {
        if factor <= last.0 {
            continue;
        }
        let predicted = last.1 * (factor / last.0).powi(FILL_COST_POWER);
        let left = share_end
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        if predicted > left {
            continue;
        }
        let cutoff = Instant::now() + Duration::from_secs_f64(1.5 * left);
        let t = Instant::now();
        match fill_sheets(
            problem,
            eval,
            &resolution(problem, cpp * factor),
            cutoff.min(deadline),
        ) {
            Some(f) => {
                let seconds = t.elapsed().as_secs_f64();
                tracing::info!(cells_per_part = cpp * factor, seconds, "first-fit");
                best = f;
                last = (factor, seconds);
            }
            None => {
                tracing::info!(
                    cells_per_part = cpp * factor,
                    "first-fit at this resolution ran out of time"
                );
                break;
            }
        }
    }
    (across, best)
}

/// The first-fit pass over every sheet at one resolution; `None` when `deadline` passed first.
pub(super) fn fill_sheets(
    problem: &Problem,
    eval: &dyn Evaluator,
    res: &Resolution,
    deadline: Instant,
) -> Option<Construction> {
    let mut opener = SheetOpener::new(problem, res);
    let mut pending = demand_in_order(problem);
    let mut unplaced: Vec<(Item, String)> = Vec::new();
    // parts that fit no sheet type in any orientation are unplaced at once (asked once a part)
    let fits_some_sheet: Vec<bool> = (0..problem.parts.len())
        .map(|part| opener.fits_some_sheet(part))
        .collect();
    pending.retain(|it| {
        let fits = fits_some_sheet[it.part];
        if !fits {
            unplaced.push((
                *it,
                "larger than every sheet in every allowed orientation".into(),
            ));
        }
        fits
    });
    // an assembly with a part that fits no sheet has no kit to nest
    let hopeless: Vec<(u32, usize)> = unplaced
        .iter()
        .filter_map(|(it, _)| super::kits::assembly_of(problem, it).map(|a| (a, it.part)))
        .collect();
    pending.retain(|it| {
        let Some(a) = super::kits::assembly_of(problem, it) else {
            return true;
        };
        let Some(&(_, part)) = hopeless.iter().find(|(b, _)| *b == a) else {
            return true;
        };
        if it.part != part {
            unplaced.push((
                *it,
                format!(
                    "{}: its part {} is larger than every sheet, so no kit of it can be nested",
                    super::kits::assembly_name(a),
                    problem.parts[part].id
                ),
            ));
        }
        false
    });
    let mut filled: Vec<FilledSheet> = Vec::new();
    while !pending.is_empty() {
        match opener.open(eval, &mut pending, deadline)? {
            Some(sheet) => filled.push(sheet),
            None => unplaced.extend(opener.refusals(pending.drain(..))),
        }
    }
    Some((filled, unplaced))
}

/// Every unit of demand in the order the construction places them: priority, then area, both
/// descending (big parts first).
pub(super) fn demand_in_order(problem: &Problem) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for (pi, p) in problem.parts.iter().enumerate() {
        for k in 0..p.quantity {
            items.push(Item {
                part: pi,
                instance: k,
                is_filler: false,
            });
        }
    }
    sort_for_placing(problem, &mut items, PlacingOrder::Area);
    items
}

/// Which parts a first fit places first (after priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PlacingOrder {
    /// The biggest area first: the construction, which a search then improves as a whole.
    Area,
    /// The longest side first (its box's, as imported), then the biggest area: the multi-sheet
    /// search, which builds one sheet at a time. A sheet's length is fixed and its free rows
    /// shorten as it fills, so a part that needs a long row must go on while there is one: with
    /// area first, trousers_x2's 44 x 5 and 57 x 5 strips came after every big part, found no
    /// row on any sheet and made a seventh; longest first they go onto the sheets as they are
    /// built (6 sheets at 2 of 7 seeds against 1 of 7; benches/history/multi-sheet.md).
    LongestSide,
}

impl PlacingOrder {
    /// The sort key of a part (compared descending).
    fn key(self, part: &super::model::PartSpec) -> (f64, f64) {
        let area = part.geometry.area();
        match self {
            PlacingOrder::Area => (area, 0.0),
            PlacingOrder::LongestSide => {
                let b = part.geometry.bbox();
                ((b.max.x - b.min.x).max(b.max.y - b.min.y), area)
            }
        }
    }
}

/// Priority, then `order`'s key, both descending; the part's index breaks ties. An assembly's
/// kit is one unit, placed when its first part in that order would be, its copies one after
/// another (so that a first-fit puts a kit on one sheet).
pub(super) fn sort_for_placing(problem: &Problem, items: &mut [Item], order: PlacingOrder) {
    // once per part: area and box walk every vertex, and the comparisons are many
    let keys: Vec<(f64, f64)> = problem.parts.iter().map(|p| order.key(p)).collect();
    let key_of = |i: &Item| keys[i.part];
    let descending = |a: (f64, f64), b: (f64, f64)| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1));
    // each assembly's first part in that order
    let mut kit_key: std::collections::BTreeMap<u32, (f64, f64)> = Default::default();
    for (p, &key) in problem.parts.iter().zip(&keys) {
        if let Some(k) = p.kit {
            let first = kit_key.entry(k.assembly).or_insert(key);
            if descending(*first, key).is_gt() {
                *first = key;
            }
        }
    }
    // (the unit's key, which unit: a kit (assembly, copy) before a loose copy (part, instance))
    let unit = |i: &Item| match (
        super::kits::assembly_of(problem, i),
        problem.parts[i.part].kit,
    ) {
        (Some(a), Some(k)) => (kit_key[&a], (0, a as usize, i.instance / k.per_kit)),
        _ => (key_of(i), (1, i.part, i.instance)),
    };
    items.sort_by(|a, b| {
        let (ua, ka) = unit(a);
        let (ub, kb) = unit(b);
        problem.parts[b.part]
            .priority
            .cmp(&problem.parts[a.part].priority)
            .then(descending(ua, ub))
            .then(ka.cmp(&kb))
            .then(descending(key_of(a), key_of(b)))
            .then(a.part.cmp(&b.part))
            .then(a.instance.cmp(&b.instance))
    });
}

/// Opens sheets one after another by the sheet rules: priority, then larger first; each sheet
/// type's quantity; MaximumDifferentSheetSizes. Each opened sheet is first-fitted from the
/// pending items.
#[derive(Clone)]
pub(super) struct SheetOpener<'a> {
    pub(super) problem: &'a Problem,
    table: Table,
    sheet_order: Vec<usize>,
    remaining_qty: Vec<Option<u32>>,
    sizes_used: Vec<(u64, u64)>,
    /// Each sheet type's frame and usable area, built once (an irregular sheet's costs a raster).
    areas: Vec<(Frame, SheetArea)>,
    /// The priority of the group being placed when a sheet was last refused (StrictPartPriorities).
    group_priority: i32,
}

/// A `SheetOpener`'s state as `open` changes it, kept to try one sheet several ways.
struct OpenerState {
    remaining_qty: Vec<Option<u32>>,
    sizes_used: Vec<(u64, u64)>,
    group_priority: i32,
}

impl<'a> SheetOpener<'a> {
    pub(super) fn new(problem: &'a Problem, res: &Resolution) -> SheetOpener<'a> {
        let s = &problem.settings;
        let mut sheet_order: Vec<usize> = (0..problem.sheets.len()).collect();
        sheet_order.sort_by(|&a, &b| {
            problem.sheets[b]
                .priority
                .cmp(&problem.sheets[a].priority)
                .then(
                    problem.sheets[b]
                        .area()
                        .total_cmp(&problem.sheets[a].area()),
                )
        });
        let areas = problem
            .sheets
            .iter()
            .enumerate()
            .map(|(si, sh)| {
                let (w, h) = sh.extent();
                let frame = Frame::new(s, w, h);
                let area = sheet_area(problem, si, &frame, res.cell, res.margin);
                (frame, area)
            })
            .collect();
        SheetOpener {
            problem,
            table: res.table.clone(),
            sheet_order,
            remaining_qty: problem.sheets.iter().map(|s| s.quantity).collect(),
            sizes_used: Vec::new(),
            areas,
            group_priority: 0,
        }
    }

    /// Whether the part fits some sheet type in some orientation: within the search box and,
    /// in the sheet's own axes, within the usable rectangle (on a turned frame the search box
    /// is larger than the sheet).
    pub(super) fn fits_some_sheet(&self, part: usize) -> bool {
        let g = nesting_geometry(self.problem, part);
        // each orientation's box in the sheet's own axes
        let boxes: Vec<_> = self.table[part]
            .iter()
            .map(|o| {
                g.transformed(&Affine::placement(o.mirrored, o.rotation, 0.0, 0.0))
                    .bbox()
            })
            .collect();
        self.areas
            .iter()
            .zip(&self.problem.sheets)
            .any(|((_, a), sh)| {
                let (w, h) = sh.extent();
                let (uw, uh) = (w - sh.left - sh.right, h - sh.top - sh.bottom);
                self.table[part].iter().zip(&boxes).any(|(o, b)| {
                    a.bounds(o, f64::INFINITY).is_some()
                        && b.width() <= uw * (1.0 + 1e-9)
                        && b.height() <= uh * (1.0 + 1e-9)
                })
            })
    }

    /// Counts a sheet of type `si` as used (its quantity, its size).
    pub(super) fn take(&mut self, si: usize) {
        if let Some(q) = &mut self.remaining_qty[si] {
            *q = q.saturating_sub(1);
        }
        let key = self.size_key(si);
        if !self.sizes_used.contains(&key) {
            self.sizes_used.push(key);
        }
    }

    /// The sheet type `open` tries first: the first in sheet order with a quantity left and a
    /// size MaximumDifferentSheetSizes allows.
    pub(super) fn next_sheet(&self) -> Option<usize> {
        self.sheet_order
            .iter()
            .copied()
            .find(|&si| self.allowed(si))
    }

    fn allowed(&self, si: usize) -> bool {
        let s = &self.problem.settings;
        let size_key = self.size_key(si);
        self.remaining_qty[si] != Some(0)
            && (s.max_different_sheet_sizes == 0
                || self.sizes_used.contains(&size_key)
                || (self.sizes_used.len() as u32) < s.max_different_sheet_sizes)
    }

    /// Sheets of type `si` still to be had (`usize::MAX`: as many as needed).
    pub(super) fn quantity_left(&self, si: usize) -> usize {
        self.remaining_qty[si].map_or(usize::MAX, |q| q as usize)
    }

    fn size_key(&self, si: usize) -> (u64, u64) {
        let (w, h) = self.problem.sheets[si].extent();
        (w.to_bits(), h.to_bits())
    }

    /// Opens the first sheet (in sheet order) that takes at least one pending item, first-fits
    /// the pending items onto it and takes the placed ones out of `pending`. `Some(None)`: no
    /// sheet left takes any; `None`: `deadline` passed first.
    pub(super) fn open(
        &mut self,
        eval: &dyn Evaluator,
        pending: &mut Vec<Item>,
        deadline: Instant,
    ) -> Option<Option<FilledSheet>> {
        let problem = self.problem;
        let s = &problem.settings;
        let Some(first) = pending.first() else {
            return Some(None);
        };
        self.group_priority = problem.parts[first.part].priority;
        for k in 0..self.sheet_order.len() {
            let si = self.sheet_order[k];
            if !self.allowed(si) {
                continue;
            }
            let (frame, area) = self.areas[si].clone();
            let candidates: Vec<Item> = if s.strict_priorities {
                pending
                    .iter()
                    .copied()
                    .filter(|i| problem.parts[i.part].priority == self.group_priority)
                    .collect()
            } else {
                pending.clone()
            };
            let mut occ = area.new_occupancy();
            let lists: Vec<&[Oriented]> = candidates
                .iter()
                .map(|i| self.table[i.part].as_slice())
                .collect();
            let t_fill = Instant::now();
            let poses = fill(eval, &area, &mut occ, &lists, f64::INFINITY, deadline)?;
            tracing::debug!(
                sheet = si,
                items = lists.len(),
                seconds = t_fill.elapsed().as_secs_f64(),
                "first-fit"
            );
            let mut rest = Vec::new();
            let mut placed = Vec::new();
            for (i, p) in candidates.iter().zip(poses) {
                match p {
                    Some(p) => placed.push((*i, p)),
                    None => rest.push(*i),
                }
            }
            let mut sheet = FilledSheet {
                sheet: si,
                frame,
                area,
                placed,
                nudges: vec![],
                table: self.table.clone(),
            };
            super::kits::keep_whole(
                problem,
                eval,
                &mut sheet,
                &[],
                &mut rest,
                deadline,
                PlacingOrder::Area,
            );
            if sheet.placed.is_empty() {
                continue;
            }
            self.take(si);
            pending.retain(|i| !sheet.placed.iter().any(|(p, _)| p.same_unit(i)));
            return Some(Some(sheet));
        }
        Some(None)
    }

    /// `open`, tried on `tries` orders of `pending`: as given, then shuffled ones
    /// (`shuffled`); the sheet holding the most part area wins (the earliest try on ties). A
    /// first fit costs little next to the local search a sheet gets after it (shirts_x2's 36
    /// parts: about a millisecond), and which parts it lets through depends on their order.
    /// The shuffled tries stop when `spend` has passed or a sheet took every pending item;
    /// jobs with assemblies try the given order alone (a shuffle would split the kits
    /// `sort_for_placing` keeps together, and a kit broken on one sheet can leave it empty).
    pub(super) fn open_best(
        &mut self,
        eval: &dyn Evaluator,
        pending: &mut Vec<Item>,
        tries: usize,
        rng: &mut super::rng::Rng,
        spend: Instant,
        deadline: Instant,
    ) -> Option<Option<FilledSheet>> {
        let start = self.state();
        let mut left = pending.clone();
        let Some(first) = self.open(eval, &mut left, deadline)? else {
            return Some(None);
        };
        let first_area = first.part_area(self.problem);
        let mut best = (first_area, first, self.state());
        let tries = if self.problem.has_kits() { 1 } else { tries };
        let mut took_all = left.is_empty();
        for _ in 1..tries {
            if took_all || Instant::now() >= spend {
                break;
            }
            let mut order = shuffled(self.problem, pending, rng);
            self.restore(&start);
            // (the same sheet type opens whatever the order: the first, in sheet order, that
            // holds one of the pending items alone)
            let Some(Some(sheet)) = self.open(eval, &mut order, deadline) else {
                break;
            };
            debug_assert_eq!(sheet.sheet, best.1.sheet);
            let area = sheet.part_area(self.problem);
            if area > best.0 {
                best = (area, sheet, self.state());
            }
            took_all = order.is_empty();
        }
        let (area, sheet, state) = best;
        tracing::debug!(first = first_area, best = area, "first fits tried");
        self.restore(&state);
        pending.retain(|i| !sheet.placed.iter().any(|(p, _)| p.same_unit(i)));
        Some(Some(sheet))
    }

    /// What `open` changes: the quantities and sizes used, and the priority group.
    fn state(&self) -> OpenerState {
        OpenerState {
            remaining_qty: self.remaining_qty.clone(),
            sizes_used: self.sizes_used.clone(),
            group_priority: self.group_priority,
        }
    }

    fn restore(&mut self, state: &OpenerState) {
        self.remaining_qty.clone_from(&state.remaining_qty);
        self.sizes_used.clone_from(&state.sizes_used);
        self.group_priority = state.group_priority;
    }

    /// `open` on sheet type `si` alone (if the sheet rules allow it): `None` when they do not,
    /// when it takes no item or when `deadline` passed.
    pub(super) fn open_on(
        &mut self,
        eval: &dyn Evaluator,
        si: usize,
        pending: &mut Vec<Item>,
        deadline: Instant,
    ) -> Option<FilledSheet> {
        if !self.allowed(si) {
            return None;
        }
        let order = std::mem::replace(&mut self.sheet_order, vec![si]);
        let opened = self.open(eval, pending, deadline);
        self.sheet_order = order;
        opened.flatten()
    }

    /// Why each of these items found no sheet (after `open` answered `Some(None)`).
    pub(super) fn refusals(&self, items: impl Iterator<Item = Item>) -> Vec<(Item, String)> {
        let s = &self.problem.settings;
        let reason = if s.max_different_sheet_sizes > 0
            && self.sizes_used.len() as u32 >= s.max_different_sheet_sizes
        {
            "no room left on the sheets allowed by MaximumDifferentSheetSizes"
        } else {
            "no sheet left: every sheet's quantity is used"
        };
        // a sheet still to be had that took none of them: what is left are kits too big for
        // one sheet
        let sheets_left = self.next_sheet().is_some();
        items
            .map(move |it| {
                let r = if s.strict_priorities
                    && self.problem.parts[it.part].priority < self.group_priority
                {
                    "not nested: a higher-priority part could not be placed (StrictPartPriorities)"
                        .to_string()
                } else if let Some(a) = super::kits::assembly_of(self.problem, &it) {
                    let name = super::kits::assembly_name(a);
                    if sheets_left {
                        format!("{name}: a kit's parts do not fit together on one sheet")
                    } else {
                        format!("{name}: {reason}")
                    }
                } else {
                    reason.to_string()
                };
                (it, r)
            })
            .collect()
    }
}

/// Phases of the last sheet's compaction: (fraction of the final cells-per-part, share of time).
/// Coarse rasters make fast progress; each finer phase starts from the previous best. The phases
/// past the final resolution win back raster slack (a cell or two per contact between parts),
/// most of it in their first strikes: twice the resolution gave albano +0.2 and swim +0.7 points
/// at 30 s; a last 8 % at four times (swim's length fell 0.9 % in its first 1.5 s) gave +0.12 on
/// average over 15 runs of 60 s (ten strips, seeds 1 and 2), 11 up, 2 down.
const PHASES: [(f64, f64); 5] = [
    (0.25, 0.2),
    (0.5, 0.3),
    (1.0, 0.3),
    (2.0, 0.12),
    (4.0, 0.08),
];

/// The compactor keeps dense n x n overlap and weight matrices (12 bytes a pair per thread, 16
/// with the root measure's starting weights); past this many parts on the last sheet it would
/// cost too much memory, and the first-fit layout is kept as it is.
pub(super) const MAX_COMPACTED_PARTS: usize = 2500;

/// Shortens the last sheet's used length: per phase, several seeded threads run the guided local
/// search from the phase's starting layout; the best layout seen (any phase) is returned.
/// `problem` is the one the last sheet was filled in (its frame and rasters); every result, with
/// the sheets before it, is built by `result_of` (the job as asked: the two differ when the
/// sheet stayed across, `axis`).
#[allow(clippy::too_many_arguments)]
fn compact_last_sheet(
    problem: &Problem,
    eval: &dyn Evaluator,
    cancel: &CancelHandle,
    on_interim: &(dyn Fn(&NestResult) + Sync),
    result_of: &(dyn Fn(&[FilledSheet]) -> NestResult + Sync),
    filled: &[FilledSheet],
    last: FilledSheet,
    start: Instant,
    deadline: Instant,
) -> FilledSheet {
    let s = &problem.settings;
    if last.placed.len() > MAX_COMPACTED_PARTS {
        tracing::warn!(
            parts = last.placed.len(),
            "last sheet too large to compact; keeping the first-fit layout"
        );
        return last;
    }
    // the utilisation target may already be met by the first-fit layout
    let meets_target = |sheet: &FilledSheet| {
        s.utilisation_target.is_some_and(|t| {
            let mut f = filled.to_vec();
            f.push(sheet.clone());
            result_of(&f).stats.utilisation >= t
        })
    };
    if meets_target(&last) {
        return last;
    }
    let target_reached = &AtomicBool::new(false);
    let threads = search_threads(s);
    let items: Vec<Item> = last.placed.iter().map(|(i, _)| *i).collect();
    let phase_start = Instant::now();
    let total = deadline.saturating_duration_since(phase_start);
    let phases: Vec<(f64, f64)> = PHASES
        .iter()
        .copied()
        .filter(|(f, _)| f * s.cells_per_part >= 8.0 || *f == 1.0)
        .collect();
    let share_sum: f64 = phases.iter().map(|p| p.1).sum();
    let mut elapsed_share = 0.0;
    // best so far, over all phases and threads: (length, thread, layout). At equal length the
    // lower thread wins, whichever reported first, so an iteration budget gives the same layout
    // on every run (a last sheet of a few parts often comes out equally long on two threads).
    let best: Mutex<(f64, usize, FilledSheet)> =
        Mutex::new((last.used_length(), usize::MAX, last.clone()));
    // the resolution of the phase before, and the rasters the phases ask for
    let mut previous: Option<Resolution> = None;
    let mut rasters = PhaseRasters::new(problem, last.resolution());
    for (k, &(factor, share)) in phases.iter().enumerate() {
        elapsed_share += share / share_sum;
        let phase_deadline = phase_start + total.mul_f64(elapsed_share);
        let max_rounds = s
            .max_iterations
            .map(|m| ((m as f64 * share / share_sum).ceil() as u64).max(1));
        // (too costly to build: the previous phase's raster again)
        let res = rasters
            .at(factor, phase_deadline, s.max_iterations.is_some())
            .or_else(|| previous.clone())
            .unwrap_or_else(|| last.resolution());
        previous = Some(res.clone());
        let area = sheet_area(problem, last.sheet, &last.frame, res.cell, res.margin);
        let lists: Vec<&[Oriented]> = items.iter().map(|i| res.table[i.part].as_slice()).collect();
        let start_poses: Vec<Pose> = if k == 0 && factor != 1.0 {
            // a fresh first-fit at the coarse resolution (all items must fit, else skip the phase)
            let mut occ = area.new_occupancy();
            let t_fill = Instant::now();
            let Some(poses) = fill(eval, &area, &mut occ, &lists, f64::INFINITY, phase_deadline)
            else {
                continue;
            };
            tracing::info!(
                cells_per_part = s.cells_per_part * factor,
                seconds = t_fill.elapsed().as_secs_f64(),
                "coarse first-fit"
            );
            match poses.into_iter().collect::<Option<Vec<Pose>>>() {
                Some(p) => p,
                None => continue,
            }
        } else if k == 0 {
            last.placed.iter().map(|p| p.1).collect()
        } else {
            rebase(&best.lock().unwrap().2, &res, &area)
        };
        tracing::info!(
            phase = k,
            cells_per_part = s.cells_per_part * factor,
            seconds_left = phase_deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64(),
            "compaction phase"
        );
        let budget = Budget {
            deadline: phase_deadline,
            cancel: cancel.flag(),
            stop: target_reached,
            max_rounds,
        };
        // a layout from a coarser phase first gives up that raster's slack: about a coarse
        // cell per part across the length
        let first_step = if k == 0 { 0.01 } else { 0.0025 };
        let table = res.table.clone();
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (lists, start_poses, area, best, budget, table, last) = (
                    lists.clone(),
                    start_poses.clone(),
                    &area,
                    &best,
                    &budget,
                    &table,
                    &last,
                );
                // (each thread its own overlap measure, `ThreadMeasures`)
                let moves = s.move_set(t);
                scope.spawn(move || {
                    let mut c = Compactor::new(
                        eval,
                        area,
                        lists,
                        start_poses,
                        s.seed
                            .wrapping_add((k as u64) << 32)
                            .wrapping_add(t as u64 * 7919),
                        moves,
                    );
                    if c.total_overlap() > 0 && !c.restore(budget) {
                        return;
                    }
                    let as_sheet = |poses: &[Pose]| FilledSheet {
                        placed: last
                            .placed
                            .iter()
                            .zip(poses)
                            .map(|((i, _), p)| (*i, *p))
                            .collect(),
                        area: area.clone(),
                        table: table.clone(),
                        nudges: vec![],
                        ..last.clone()
                    };
                    let report = |poses: &[Pose], len: f64| {
                        let mut b = best.lock().unwrap();
                        if (len - b.0).abs() <= 1e-9 && t < b.1 {
                            *b = (b.0, t, as_sheet(poses));
                        } else if len < b.0 - 1e-9 {
                            tracing::debug!(
                                phase = k,
                                thread = t,
                                length = len,
                                seconds = start.elapsed().as_secs_f64(),
                                "shorter layout"
                            );
                            *b = (len, t, as_sheet(poses));
                            let mut f = filled.to_vec();
                            f.push(b.2.clone());
                            drop(b);
                            let r = result_of(&f);
                            on_interim(&r);
                            if s.utilisation_target
                                .is_some_and(|t| r.stats.utilisation >= t)
                            {
                                target_reached.store(true, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    };
                    report(c.poses(), c.used_length());
                    c.compact_from(budget, first_step, report);
                    // the search's pace, to compare backends and move modes by
                    tracing::debug!(
                        phase = k,
                        thread = t,
                        strikes = c.rounds(),
                        ?moves,
                        "phase searched"
                    );
                });
            }
        });
    }
    best.into_inner().unwrap().2
}

/// The rasters of a compaction in phases (`compact_last_sheet`, `sheets::sets`), built as the
/// phases ask for them.
pub(super) struct PhaseRasters<'p> {
    problem: &'p Problem,
    /// The raster the layout starts on: a phase at its cell size reuses it.
    have: Resolution,
    /// The factor and seconds of the last raster built.
    built: Option<(f64, f64)>,
}

impl<'p> PhaseRasters<'p> {
    pub(super) fn new(problem: &'p Problem, have: Resolution) -> Self {
        Self {
            problem,
            have,
            built: None,
        }
    }

    /// The raster of a phase at `factor` of the final cells per part, ending at `phase_end`:
    /// the one the layout started on where its cell is that factor's, else built. `None` where
    /// it is finer than the final raster and would take more than a quarter of the phase to
    /// build (about (factor / f)^2 the seconds the last one built, at f, took): the phase goes
    /// on at the raster it has. Never `None` under an iteration budget (`budgeted`), whose
    /// layout must not depend on the clock.
    pub(super) fn at(
        &mut self,
        factor: f64,
        phase_end: Instant,
        budgeted: bool,
    ) -> Option<Resolution> {
        let cells_per_part = self.problem.settings.cells_per_part * factor;
        let cell = self.have.cell;
        if (choose_cell(self.problem, cells_per_part).0 - cell).abs() <= 1e-12 * cell {
            return Some(self.have.clone());
        }
        let phase_s = phase_end
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let too_costly = !budgeted
            && factor > 1.0
            && self
                .built
                .is_some_and(|(f, secs)| secs * (factor / f).powi(2) > 0.25 * phase_s);
        if too_costly {
            return None;
        }
        let t = Instant::now();
        let r = resolution(self.problem, cells_per_part);
        let seconds = t.elapsed().as_secs_f64();
        self.built = Some((factor, seconds));
        tracing::debug!(
            cells_per_part,
            rasters = r.table.iter().map(Vec::len).sum::<usize>(),
            seconds,
            "rasterized"
        );
        Some(r)
    }
}

/// Moves a layout onto another resolution: each part keeps its orientation and its exact place
/// up to rounding to the new grid (the caller restores feasibility).
pub(super) fn rebase(from: &FilledSheet, res: &Resolution, area: &SheetArea) -> Vec<Pose> {
    from.placed
        .iter()
        .map(|(it, pose)| {
            let o = &from.table[it.part][pose.orient];
            let t = o.translation(from.area.cell, pose.gx, pose.gy);
            let list = &res.table[it.part];
            let oi = list
                .iter()
                .position(|q| q.rotation == o.rotation && q.mirrored == o.mirrored)
                .or_else(|| {
                    list.iter().position(|q| {
                        (q.bbox.width() - o.bbox.width()).abs() < 1e-9
                            && (q.bbox.height() - o.bbox.height()).abs() < 1e-9
                    })
                })
                .unwrap_or(0);
            let q = &list[oi];
            let gx = ((t.x + q.origin.x) / res.cell).round() as i32;
            let gy = ((t.y + q.origin.y) / res.cell).round() as i32;
            match area.bounds(q, f64::INFINITY) {
                Some(b) => Pose {
                    orient: oi,
                    gx: gx.clamp(b.x_lo, b.x_hi),
                    gy: gy.clamp(b.y_lo, b.y_hi),
                },
                None => Pose { orient: oi, gx, gy },
            }
        })
        .collect()
}

/// Exact final slide of a sheet's parts towards its start (see `slide`).
fn exact_slide(problem: &Problem, fs: &FilledSheet, deadline: Instant) -> Vec<Point> {
    let orients = &fs.table;
    let mut shapes: Vec<crate::geometry::PartGeometry> = Vec::new();
    let mut spacing = Vec::new();
    for (it, pose) in &fs.placed {
        let o = &orients[it.part][pose.orient];
        let t = o.translation(fs.area.cell, pose.gx, pose.gy);
        let canonical = fs
            .frame
            .linear()
            .then_after(&Affine::placement(o.mirrored, o.rotation, 0.0, 0.0));
        let g = nesting_geometry(problem, it.part)
            .transformed(&Affine::translate(t.x, t.y).then_after(&canonical));
        shapes.push(g);
        spacing.push(part_spacing(problem, it.part));
    }
    let max_step = 3.0 * fs.area.cell;
    let area = super::slide::SlideBox {
        x0: fs.area.x0,
        y0: fs.area.y0,
        y1: fs.area.y1,
    };
    let before = super::slide::parts_end(&shapes);
    let offsets = super::slide::slide(&mut shapes, &spacing, area, max_step, deadline);
    let after = super::slide::parts_end(&shapes);
    tracing::debug!(before, after, "exact slide: the parts' end");
    offsets
}

fn validate(problem: &Problem) -> Result<(), NestError> {
    if problem.parts.iter().all(|p| p.quantity == 0) {
        return Err(NestError::NoParts);
    }
    if problem.sheets.is_empty() {
        return Err(NestError::NoSheets);
    }
    for p in &problem.parts {
        if p.rotations.is_empty() {
            return Err(NestError::Invalid(format!(
                "part {}: no allowed rotation",
                p.id
            )));
        }
    }
    super::kits::check(problem).map_err(NestError::Invalid)?;
    for sh in &problem.sheets {
        let (w, h) = sh.extent();
        if !(w > 0.0 && h > 0.0 && w.is_finite() && h.is_finite()) {
            return Err(NestError::Invalid(format!(
                "sheet {}: dimensions must be positive",
                sh.id
            )));
        }
    }
    Ok(())
}

/// `cells_per_part`, or fewer where its cells would come out finer than `cell` (a raster a step
/// already had to keep coarse, which the steps after it keep too).
pub(super) fn cells_no_finer_than(problem: &Problem, cells_per_part: f64, cell: f64) -> f64 {
    let (asked, typical) = choose_cell(problem, cells_per_part);
    if asked < cell {
        typical / cell
    } else {
        cells_per_part
    }
}

/// Raster cell size: a typical part's smaller side spans `cells_per_part` cells, bounded so the
/// largest sheet grid stays within memory; and that typical side.
fn choose_cell(problem: &Problem, cells_per_part: f64) -> (f64, f64) {
    // the typical part among those that could fit a sheet at all (outliers must not set the grid)
    let largest_sheet = problem
        .sheets
        .iter()
        .map(|s| {
            let (w, h) = s.extent();
            w.max(h)
        })
        .fold(0.0, f64::max);
    let mut dims: Vec<f64> = problem
        .parts
        .iter()
        .map(|p| p.geometry.bbox())
        .filter(|b| b.width().max(b.height()) <= largest_sheet)
        .map(|b| b.width().min(b.height()))
        .filter(|d| *d > 0.0 && d.is_finite())
        .collect();
    dims.sort_by(f64::total_cmp);
    let typical = dims.get(dims.len() / 2).copied().unwrap_or(1.0);
    let mut cell = typical / cells_per_part.max(4.0);
    let max_sheet_cells = 64.0e6;
    let mut capped = false;
    for sh in &problem.sheets {
        let (w, h) = sh.extent();
        let need = (w / cell) * (h / cell);
        if need > max_sheet_cells {
            cell *= (need / max_sheet_cells).sqrt();
            capped = true;
        }
    }
    // straight edges on cell lines, so that exact tilings fit on the raster too (grid.rs)
    let grid = super::grid::natural_grid(problem, cell);
    let cell = super::grid::aligned_cell(cell, grid, !capped);
    (cell, typical)
}

/// The overlap measure's depth levels and the typical part's smaller side in cells, which
/// their fractions are of.
struct DepthScale {
    levels: DepthLevels,
    unit: f64,
}

fn orientations(
    problem: &Problem,
    part: usize,
    frame: &Frame,
    cell: f64,
    spacing_min: f64,
    depth: &DepthScale,
) -> Vec<Oriented> {
    let p = &problem.parts[part];
    let g = nesting_geometry(problem, part);
    let sp = part_spacing(problem, part);
    // growth per part so that any pair ends up at least max(s_i, s_j) apart
    let grow = if spacing_min.is_finite() {
        sp - spacing_min / 2.0
    } else {
        sp / 2.0
    };
    // two rasters grown by k cells that share no cell hold their material at least 2k cells
    // apart, so k = grow / cell exactly is enough (on a grid-aligned cell it often is whole)
    let k = if grow > 0.0 {
        (grow / cell - 1e-9).ceil().max(1.0) as u32
    } else {
        0
    };
    let mut out: Vec<Oriented> = Vec::new();
    for (m, rot) in p.orientations() {
        let t = frame
            .linear()
            .then_after(&Affine::placement(m, rot, 0.0, 0.0));
        let shape = g.transformed(&t);
        let bbox = shape.bbox();
        // an orientation no sheet can hold is never searched, so it is never rasterized
        // (an absurdly large part must not cost an absurdly large raster)
        let fits_some_sheet = problem.sheets.iter().any(|sh| {
            let (w, h) = sh.extent();
            let (cl, ch) = frame.extent(w, h);
            bbox.width() <= cl * (1.0 + 1e-9) && bbox.height() <= ch * (1.0 + 1e-9)
        });
        if !fits_some_sheet || !(bbox.width().is_finite() && bbox.height().is_finite()) {
            continue;
        }
        let (raster, origin) = rasterize(&shape, cell, k);
        let o = Oriented {
            rotation: rot,
            mirrored: m,
            depth: depth.levels.of(&raster, depth.unit),
            raster,
            origin,
            bbox,
            margin: k,
        };
        // symmetric parts give identical orientations; keep one
        let dup = out.iter().any(|q| {
            q.raster == o.raster
                && (q.bbox.width() - o.bbox.width()).abs() < 1e-9
                && (q.bbox.height() - o.bbox.height()).abs() < 1e-9
                && same_outline(q, &o)
        });
        if !dup {
            out.push(o);
        }
    }
    out
}

fn same_outline(a: &Oriented, b: &Oriented) -> bool {
    // identical rasters and boxes are the same search object; their exact shapes may still differ
    // slightly, which is harmless because placements are verified on each one's own geometry
    (a.origin.x - a.bbox.min.x - (b.origin.x - b.bbox.min.x)).abs() < 1e-9
}

pub(super) fn sheet_area(
    problem: &Problem,
    si: usize,
    frame: &Frame,
    cell: f64,
    margin: i32,
) -> SheetArea {
    let sh = &problem.sheets[si];
    let (w, h) = sh.extent();
    let t = frame.to_canonical();
    // the usable rectangle (inside the edge spacings), in canonical coordinates: its box bounds
    // the search
    let usable = Shape::new(
        vec![
            Point::new(sh.left, sh.bottom),
            Point::new(w - sh.right, sh.bottom),
            Point::new(w - sh.right, h - sh.top),
            Point::new(sh.left, h - sh.top),
        ],
        vec![],
    )
    .transformed(&t);
    let b = usable.bbox();
    let mut area = SheetArea {
        cell,
        x0: b.min.x,
        y0: b.min.y,
        x1: b.max.x,
        y1: b.max.y,
        blocked: None,
        margin,
    };
    // cells the search must never use: an irregular sheet's outside and defects (kept clear by
    // its spacing), and on a turned frame whatever lies past the usable rectangle's askew edges
    let mut keep_out: Vec<(Shape, f64)> = Vec::new();
    if let SheetShape::Outline(shape) = &sh.shape {
        keep_out.push((shape.transformed(&t), sh.irregular_spacing.max(0.0)));
    }
    if frame.is_turned() {
        keep_out.push((usable, 0.0));
    }
    if !keep_out.is_empty() {
        let (cw, ch) = frame.extent(w, h);
        let gw = (cw / cell).ceil() as u32 + 2 * margin as u32 + 2;
        let gh = (ch / cell).ceil() as u32 + 2 * margin as u32 + 2;
        let go = Point::new(-(margin as f64) * cell, -(margin as f64) * cell);
        let rasters: Vec<PartRaster> = keep_out
            .iter()
            .map(|(shape, clearance)| blocked_cells(shape, *clearance, cell, gw, gh, go))
            .collect();
        area.blocked = Some(union_of(&rasters, gw, gh));
    }
    area
}

/// The cells that any of `rasters` (all `width` x `height`) holds.
fn union_of(rasters: &[PartRaster], width: u32, height: u32) -> PartRaster {
    if let [one] = rasters {
        return one.clone();
    }
    let rows = (0..height)
        .map(|y| {
            let mut runs: Vec<Run> = rasters
                .iter()
                .flat_map(|r| r.row(y).iter().copied())
                .collect();
            runs.sort_unstable();
            runs
        })
        .collect();
    PartRaster::from_row_runs(width, rows)
}

/// Places filler copies where room is left (FillerPartsStrategy).
fn add_fillers(
    problem: &Problem,
    eval: &dyn Evaluator,
    filled: &mut [FilledSheet],
    deadline: Instant,
) {
    let s = &problem.settings;
    if s.filler_strategy == FillerStrategy::None || filled.is_empty() {
        return;
    }
    let mut fillers: Vec<Item> = Vec::new();
    for (pi, p) in problem.parts.iter().enumerate() {
        for k in 0..p.filler_quantity {
            fillers.push(Item {
                part: pi,
                instance: p.quantity + k,
                is_filler: true,
            });
        }
    }
    let n = filled.len();
    let targets: Vec<usize> = if s.filler_strategy == FillerStrategy::FillLastSheet {
        vec![n - 1]
    } else {
        (0..n).collect()
    };
    for si in targets {
        if fillers.is_empty() {
            break;
        }
        let fs = &mut filled[si];
        let orients = fs.table.clone();
        let mut occ = fs.occupancy();
        let lists: Vec<&[Oriented]> = fillers.iter().map(|i| orients[i.part].as_slice()).collect();
        let Some(poses) = fill(eval, &fs.area, &mut occ, &lists, f64::INFINITY, deadline) else {
            return;
        };
        let mut rest = Vec::new();
        for (it, p) in fillers.iter().zip(poses) {
            match p {
                Some(p) => fs.placed.push((*it, p)),
                None => rest.push(*it),
            }
        }
        fillers = rest;
    }
}

/// Turns canonical poses into placements of the original parts, groups identical layouts and
/// computes statistics.
fn build_result(
    problem: &Problem,
    filled: &[FilledSheet],
    unplaced: &[(Item, String)],
    start: Instant,
    engine: &str,
) -> NestResult {
    let mut layouts: Vec<SheetLayout> = Vec::new();
    let mut total_part_area = 0.0;
    let mut total_sheet_area = 0.0;
    let mut last_used_length = 0.0;
    // kit copies are numbered in sheet order, so a kit's copies share a sheet
    let instances = super::kits::instances(
        problem,
        &filled
            .iter()
            .map(|f| f.placed.iter().map(|(i, _)| *i).collect())
            .collect::<Vec<Vec<Item>>>(),
    );
    // each part's nesting geometry, built once for all the sheets filled across (`axis`),
    // which measure their used length on it: a job's full sheets, in every interim result
    let mut nesting: Vec<Option<PartGeometry>> = vec![None; problem.parts.len()];
    for (fi, fs) in filled.iter().enumerate() {
        let sh = &problem.sheets[fs.sheet];
        let mut placements: Vec<Placement> = fs
            .placed
            .iter()
            .enumerate()
            .map(|(k, (it, pose))| {
                let o = &fs.table[it.part][pose.orient];
                let t = fs.frame.translation_back(
                    o.translation(fs.area.cell, pose.gx, pose.gy)
                        .add(fs.nudge(k)),
                );
                Placement {
                    part: it.part,
                    instance: instances[fi][k],
                    x: t.x,
                    y: t.y,
                    rotation: o.rotation,
                    mirrored: o.mirrored,
                    is_filler: it.is_filler,
                }
            })
            .collect();
        placements.sort_by_key(|a| (a.part, a.instance));
        let part_area: f64 = placements
            .iter()
            .map(|p| problem.parts[p.part].geometry.area())
            .sum();
        // used length along the fill direction, from the sheet's start (a full sheet filled
        // across the asked direction, `axis`, reports it along the asked one)
        let (w, h) = sh.extent();
        let asked = Frame::new(&problem.settings, w, h);
        let along_asked = fs.frame.same_axes(&asked);
        let used = if along_asked {
            fs.used_length()
        } else {
            placements
                .iter()
                .map(|p| {
                    let g =
                        nesting[p.part].get_or_insert_with(|| nesting_geometry(problem, p.part));
                    asked.reach(&placed_geometry(g, p.mirrored, p.rotation, p.x, p.y))
                })
                .fold(0.0, f64::max)
        };
        let is_last = fi + 1 == filled.len();
        // the last sheet counts only its material before the used length; full sheets count whole
        let used_area = if is_last {
            let frame = if along_asked { &fs.frame } else { &asked };
            frame.area_before(&sh.material(), used)
        } else {
            sh.area()
        };
        let util = if used_area > 0.0 {
            100.0 * part_area / used_area
        } else {
            0.0
        };
        total_part_area += part_area;
        total_sheet_area += used_area;
        if is_last {
            last_used_length = used;
        }
        let layout = SheetLayout {
            sheet: fs.sheet,
            multiplicity: 1,
            placements,
            utilisation: util,
            used_length: used,
            common_cuts: Vec::new(),
        };
        match layouts.iter_mut().find(|l| same_layout(l, &layout)) {
            Some(l) => l.multiplicity += 1,
            None => layouts.push(layout),
        }
    }
    let requested: u32 = problem.parts.iter().map(|p| p.quantity).sum();
    let placed: u32 = layouts
        .iter()
        .map(|l| l.multiplicity * l.placements.iter().filter(|p| !p.is_filler).count() as u32)
        .sum();
    let mut un: Vec<Unplaced> = Vec::new();
    for (it, reason) in unplaced {
        match un
            .iter_mut()
            .find(|u| u.part == it.part && &u.reason == reason)
        {
            Some(u) => u.quantity += 1,
            None => un.push(Unplaced {
                part: it.part,
                quantity: 1,
                reason: reason.clone(),
            }),
        }
    }
    NestResult {
        stats: Statistics {
            utilisation: if total_sheet_area > 0.0 {
                100.0 * total_part_area / total_sheet_area
            } else {
                0.0
            },
            sheets_used: layouts.iter().map(|l| l.multiplicity).sum(),
            parts_requested: requested,
            parts_placed: placed,
            parts_unplaced: un.iter().map(|u| u.quantity).sum(),
            used_length: last_used_length,
            elapsed_s: start.elapsed().as_secs_f64(),
        },
        layouts,
        unplaced: un,
        engine: engine.to_string(),
    }
}

/// Two sheets are the same layout when they are the same sheet with the same parts at the same
/// places (instance numbers aside).
fn same_layout(a: &SheetLayout, b: &SheetLayout) -> bool {
    if a.sheet != b.sheet || a.placements.len() != b.placements.len() {
        return false;
    }
    let key = |p: &Placement| {
        (
            p.part,
            (p.x * 1e6).round() as i64,
            (p.y * 1e6).round() as i64,
            (p.rotation * 1e6).round() as i64,
            p.mirrored,
            p.is_filler,
        )
    };
    let mut ka: Vec<_> = a.placements.iter().map(key).collect();
    let mut kb: Vec<_> = b.placements.iter().map(key).collect();
    ka.sort();
    kb.sort();
    ka == kb
}

/// Runs the exact verifier on every layout. A failure is an engine bug: it is logged, and the
/// offending parts are taken off the layout (reported unplaced) so that what leaves is valid.
pub fn enforce_verified(problem: &Problem, result: &mut NestResult) {
    let gap = problem
        .settings
        .common_cutting
        .as_ref()
        .map_or(0.0, |c| c.gap);
    for li in 0..result.layouts.len() {
        loop {
            let shapes = placed_shapes(problem, &result.layouts[li]);
            let layout = &mut result.layouts[li];
            let cuts = SharedCuts {
                cuts: &layout.common_cuts,
                gap,
            };
            let violations = verify_layout(&problem.sheets[layout.sheet], &shapes, cuts);
            let Some(v) = violations.first() else { break };
            tracing::error!("engine bug: layout failed exact verification: {v}; removing it");
            let label = match v {
                Violation::TooClose { b, .. }
                | Violation::Overlap { b, .. }
                | Violation::AlongCut { b, .. } => b.clone(),
                Violation::OutsideSheet { part, .. } => part.clone(),
                // a cut the parts do not share goes; the parts then answer to the spacing
                Violation::FalseCut { cut, .. } => {
                    layout.common_cuts.remove(*cut);
                    continue;
                }
            };
            let Some(idx) = shapes.iter().position(|s| s.label == label) else {
                break;
            };
            let p = remove_placement(layout, idx);
            let mut removed = vec![(
                p,
                "internal error: the layout failed exact verification".to_string(),
            )];
            // the rest of its kit goes with it (kit c: instances c * per_kit .. of each part)
            if let Some(failed) = problem.parts[removed[0].0.part].kit {
                let kit = removed[0].0.instance / failed.per_kit;
                let why = format!(
                    "internal error: another part of its kit in {} failed exact verification",
                    super::kits::assembly_name(failed.assembly)
                );
                let same_kit = |q: &Placement| {
                    problem.parts[q.part].kit.is_some_and(|k| {
                        k.assembly == failed.assembly && q.instance / k.per_kit == kit
                    })
                };
                while let Some(k) = layout.placements.iter().position(same_kit) {
                    removed.push((remove_placement(layout, k), why.clone()));
                }
            }
            let m = layout.multiplicity;
            for (p, reason) in removed {
                if !p.is_filler {
                    result.stats.parts_placed -= m;
                    result.stats.parts_unplaced += m;
                    result.unplaced.push(Unplaced {
                        part: p.part,
                        quantity: m,
                        reason,
                    });
                }
            }
        }
    }
}

/// Takes a placement off a layout; its common cuts lose it (a cut left with one part goes).
fn remove_placement(layout: &mut SheetLayout, idx: usize) -> Placement {
    for c in &mut layout.common_cuts {
        c.parts.retain(|&k| k != idx);
        for k in &mut c.parts {
            if *k > idx {
                *k -= 1;
            }
        }
    }
    layout.common_cuts.retain(|c| c.parts.len() >= 2);
    layout.placements.remove(idx)
}

pub fn placed_shapes(problem: &Problem, layout: &SheetLayout) -> Vec<PlacedShape> {
    layout
        .placements
        .iter()
        .map(|p| PlacedShape {
            label: format!("{}#{}", problem.parts[p.part].id, p.instance),
            geometry: placed_geometry(
                &nesting_geometry(problem, p.part),
                p.mirrored,
                p.rotation,
                p.x,
                p.y,
            ),
            spacing: part_spacing(problem, p.part),
        })
        .collect()
}

/// `items` shuffled a little: each moved by a random number of places, up to a fifth of the
/// list, either way, but never past an item of another part priority (the sheet rules place
/// higher priorities first).
pub(super) fn shuffled(problem: &Problem, items: &[Item], rng: &mut super::rng::Rng) -> Vec<Item> {
    let reach = (items.len() / 5).max(2) as i32;
    let mut keyed: Vec<(std::cmp::Reverse<i32>, i64, Item)> = items
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let priority = problem.parts[i.part].priority;
            let key = k as i64 + rng.range(-reach, reach) as i64;
            (std::cmp::Reverse(priority), key, *i)
        })
        .collect();
    keyed.sort_by_key(|(priority, key, _)| (*priority, *key));
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::{cells_either_side, finishing_deadline};
    use crate::cancel::CancelHandle;
    use std::time::{Duration, Instant};

    #[test]
    fn after_a_stop_the_finishing_steps_keep_to_their_reserve() {
        let limit = Instant::now() + Duration::from_secs(600);
        let cancel = CancelHandle::default();
        // running to its end: the finishing steps have until the time limit
        assert_eq!(finishing_deadline(&cancel, limit, 3.0), limit);
        // stopped: the reserve from now, never past the limit
        cancel.cancel();
        let before = Instant::now();
        let stopped = finishing_deadline(&cancel, limit, 3.0);
        assert!(stopped <= Instant::now() + Duration::from_secs(3));
        assert!(stopped >= before + Duration::from_secs(3));
        let soon = Instant::now() + Duration::from_millis(10);
        assert_eq!(finishing_deadline(&cancel, soon, 3.0), soon);
    }

    #[test]
    fn a_shift_between_cells_is_covered_by_the_whole_cells_either_side() {
        assert_eq!(cells_either_side(0.0), vec![0]);
        assert_eq!(cells_either_side(-3.0), vec![-3]);
        assert_eq!(cells_either_side(-2.5), vec![-3, -2]);
        assert_eq!(cells_either_side(0.25), vec![0, 1]);
        // a hair below a whole cell still reaches into the cell below it
        assert_eq!(cells_either_side(-1e-6), vec![-1, 0]);
    }
}
