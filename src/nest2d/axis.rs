//! Which axis the full sheets of a multi-sheet job fill along.
//!
//! NestingDirection says along which axis the parts gather, and so where a sheet's remnant
//! lies. Only the last sheet has a remnant: every other sheet is used whole, and the axis it
//! was filled along leaves no trace in what the shop cuts. So the full sheets may fill across
//! the asked direction when that takes fewer sheets, and the last sheet is laid out again
//! along the asked direction before its compaction (`last_sheet_as_asked`).
//!
//! It matters where parts are long next to the sheet's length: shirts' parts are 9 to 13 long
//! on 20-long sheets (turning by 180 degrees only), so a fill along the length stacks a column
//! of 13-long parts and leaves a 7-wide column that few parts fit; filled along the height,
//! each row takes a big part and small ones beside it (shirts_x10: 35 sheets instead of 37 or 38;
//! benches/history/multi-sheet.md). The choice is made on the construction's first, coarsest pass
//! (a quarter of the final resolution where that is at least 8 cells per part), which costs little
//! next to the search, and never on the clock, so an iteration budget still repeats.

use super::engine::{
    cells_no_finer_than, fill_sheets, no_deadline, resolution, sort_for_placing, FilledSheet, Item,
    PlacingOrder, SheetOpener,
};
use super::model::{Direction, Problem};
use super::sheets::SheetSearch;
use kerf_kernels::Evaluator;
use std::time::Instant;

/// A construction: the sheets filled, and the parts left with the reason.
pub(super) type Construction = (Vec<FilledSheet>, Vec<(Item, String)>);

/// The same job with the fill running across the asked direction (X and Y swapped; origin and
/// fill angle as asked).
pub(super) fn across(problem: &Problem) -> Problem {
    let mut p = problem.clone();
    p.settings.direction = match p.settings.direction {
        Direction::X => Direction::Y,
        Direction::Y => Direction::X,
    };
    p
}

/// What decides between two constructions, in order: parts left unplaced, sheets, part area
/// on the last sheet (the less, the likelier the search empties it).
fn rank(problem: &Problem, c: &Construction) -> (usize, usize, f64) {
    let last = c.0.last().map_or(0.0, |l| l.part_area(problem));
    (c.1.len(), c.0.len(), last)
}

/// The job filled across the asked direction, with its construction at `cells_per_part`,
/// when that construction ranks better than `asked` (the asked direction's, at the same
/// resolution). Only jobs that take several sheets are asked: a single sheet is the last one.
/// (Neither this nor a probe of the rebuild predicts every job: trousers_x2's construction took
/// 8 sheets across against 10 along, and the first fits of trousers_x8's first three rebuilt
/// sheets held 8 % more across, yet trousers_x8's first ten finished sheets held 72 to 79 %
/// across against 74 to 83 % along. The rebuild's first sheet densified along both axes, tried
/// as the decider, saved no sheet and cost one at 10 s; benches/history/multi-sheet.md.)
pub(super) fn better_across(
    problem: &Problem,
    eval: &dyn Evaluator,
    cells_per_part: f64,
    asked: &Construction,
) -> Option<(Problem, Construction)> {
    if asked.0.len() < 2 {
        return None;
    }
    let cross = across(problem);
    let res = resolution(&cross, cells_per_part);
    let other = fill_sheets(&cross, eval, &res, no_deadline()).expect("no deadline");
    let (a, b) = (rank(problem, asked), rank(&cross, &other));
    tracing::info!(
        asked_sheets = a.1,
        across_sheets = b.1,
        asked_last = a.2,
        across_last = b.2,
        "fill axis"
    );
    // on a tie the sheet's X axis, whichever was asked: full sheets have no remnant, so the
    // asked direction has no say in them, and a job asked along Y gets the same full sheets as
    // along X (ties are common where the cells line up with the parts' grid, `grid.rs`)
    let tie_goes_across = problem.settings.direction == Direction::Y;
    (b < a || (b == a && tie_goes_across)).then_some((cross, other))
}

/// The last sheet's parts first-fitted, along the asked direction, on the same sheet type, at
/// `cells_per_part` (or the last sheet's own coarser cells, as the search keeps a big job's
/// construction raster), and those the first fit leaves inserted by `search` (the local
/// search makes room, as when a sheet is made dense): what its compaction then shortens.
/// `None` when they do not all go in that way (the sheet then stays as it was filled, across).
/// The insertions matter for long parts that turn by 180 degrees only: a first fit along the
/// sheet's length stacks them where they leave no row for the last ones, while the sheet,
/// filled across, held them at two thirds of its area and so spanned its whole length along
/// the asked direction (trousers_x8's and shirts_x10's last sheets,
/// benches/history/multi-sheet.md).
pub(super) fn last_sheet_as_asked(
    search: &SheetSearch,
    last: &FilledSheet,
    cells_per_part: f64,
    deadline: Instant,
) -> Option<FilledSheet> {
    let (problem, eval) = (search.problem, search.eval);
    let res = resolution(
        problem,
        cells_no_finer_than(problem, cells_per_part, last.area.cell),
    );
    let mut opener = SheetOpener::new(problem, &res);
    let mut items: Vec<Item> = last.placed.iter().map(|(i, _)| *i).collect();
    sort_for_placing(problem, &mut items, PlacingOrder::Area);
    let mut sheet = opener.open_on(eval, last.sheet, &mut items, deadline)?;
    // (with StrictPartPriorities a first fit takes one priority at a time: these parts were
    // all on this sheet already, so the rest follow into the room left)
    sheet.refill(eval, &mut items, deadline);
    if items.is_empty() {
        return Some(sheet);
    }
    // the insertions take at most a quarter of what is left before the deadline, which the
    // compaction needs
    let now = Instant::now();
    let until = now
        + deadline
            .saturating_duration_since(now)
            .mul_f64(INSERTION_SHARE);
    let seed = problem.settings.seed;
    search
        .insert_all(&mut sheet, &items, until, seed)
        .then_some(sheet)
}

/// The share of the time left that inserting the parts a first fit along the asked direction
/// left may take from the last sheet's compaction.
const INSERTION_SHARE: f64 = 0.25;
