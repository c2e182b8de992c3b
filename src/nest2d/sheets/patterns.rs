//! Sheets planned as patterns, for jobs of many copies: the two-dimensional form of the cutting
//! stock method that plans 1D cuts (`nest1d::master`). A pattern is one dense sheet layout;
//! the master LP chooses how often to cut each so that every part is cut and the sheets are
//! fewest, and its duals say which parts are scarce (worth more than their area) and which
//! are in surplus. Why: built one after another, the first sheets take the small parts that
//! fill gaps, and the last ones are left with the big parts alone; the LP spreads the small
//! parts over every sheet.
//!
//! Each new pattern is a sheet built the way the rebuild builds one (a share first-fitted,
//! then insertions by the local search), from a share in which each kind's copies follow its
//! dual per unit of area (`priced_share`) instead of its copies left; every second one first
//! places as many big parts as the sheet takes, alone (its share's big parts pressed together
//! as a strip where that holds more than their first fit, `pressed_bigs`; grown by whole
//! presses to the composition worth most at the duals that fits, `grow_bigs`; then more of
//! them inserted, those worth most to the plan per unit of area first, `by_worth`), so that
//! a sheet holding one more of them is found before small parts are in their way; where an
//! opening kept from an earlier big-first pattern (after its insertions) ranks above the
//! pattern's own (before them) at the current duals, it opens with that one and skips the
//! insertions
//! (`Plan::openings`: a dense arrangement of the big parts, found now and then, is built on by
//! the later big-first patterns). The plan: each pattern the LP uses,
//! as many whole times as its value rounded down, densest first (a copy may drop parts no
//! longer wanted, down to `MIN_COPY` of its area), the LP again on what is left, until it
//! cuts no pattern a whole time; a pattern well under the densest (`MIN_DENSITY`: the LP's
//! start, a kind alone, is often a poor first fit) is never cut. The parts left over go to the
//! sheet-by-sheet rebuild, which opens each of their sheets with the plan's opening holding the
//! most big-part area, where the parts left hold it whole and its share's first fit holds less
//! (`fuller_opening`): they are mostly big parts, the patterns having taken the small ones.

use super::{Quota, SheetSearch, Slice, FIRST_FIT_TRIES, MAX_RETRIES};
use crate::nest1d::master::{Column, Master};
use crate::nest2d::engine::{FilledSheet, Item, SheetOpener};
use crate::nest2d::rng::Rng;
use std::time::{Duration, Instant};

/// Jobs of fewer sheets (the construction's) are rebuilt sheet by sheet alone.
const MIN_SHEETS: usize = 8;
/// The least share of the pool's part area in kinds of `MIN_COPIES` copies or more.
const REPEATABLE: f64 = 0.5;
/// The copies a kind needs for a pattern holding it to be cut several times. Not a copy for
/// every sheet: fu_x10 (10 copies of each kind, 24 sheets of four to seven parts) went from 25
/// sheets to 24 at seeds 1 to 3 by patterns, albano_x5, mao_x6 and fu_x6 (6 to 24 copies on 10
/// to 16 sheets) kept their counts (`benches/history/multi-sheet.md`).
const MIN_COPIES: u32 = 4;
/// Patterns generated at most (each costs a sheet's densification).
const MAX_PATTERNS: usize = 48;
/// Patterns in a row that the LP does not take before the generation stops.
const STALLS: usize = 4;
/// A big part: at least this fraction of the sheet's area.
const BIG_PART: f64 = 0.05;
/// Share of a big-first pattern's time for placing its big parts.
const BIG_FIRST_SHARE: f64 = 0.4;
/// Presses at most for growing one big-first opening's big parts (`grow_bigs`), each with an
/// even share of the growth's time and rounds (a fifth of the pattern's, taken from the big
/// parts' insertions after it): a composition that does not fit takes its whole share.
const GROW_PRESSES: usize = 4;
/// Openings in a row whose growth ended in a misfit before a plan stops growing them: where
/// the presses' share of a pattern is too short for them to fit anything (shirts_x10, about
/// 0.05 s a press), they would only take time from the insertions.
const MAX_GROW_MISSES: usize = 4;
/// The least share of the pool's part area in small parts for growing big-first openings: fu_x6
/// (3 % in small parts) took 11 sheets against 10 with the presses, which found little there
/// and took time from the insertions.
const GROW_SMALL_SHARE: f64 = 0.1;
/// The least share of a pattern's part area a copy of it must hold (see `copy_if_available`).
const MIN_COPY: f64 = 0.9;
/// The least part area of a pattern that is cut, as a share of the densest pattern's.
const MIN_DENSITY: f64 = 0.9;

/// What a plan by patterns may spend.
pub(super) struct PatternBudget {
    /// Each pattern's time: a sheet's part of the densifying time.
    pub per_pattern: Duration,
    /// Patterns are generated until then,
    pub end: Instant,
    /// or, under an iteration budget, this many (the clock then decides nothing but the job's
    /// own time limit: every pattern's first fits are all tried),
    pub patterns: usize,
    /// each with these local-search rounds (a pattern that places its big parts first takes
    /// more for that: 0.2 of them for each thread that presses them, `pressed_bigs`, up to 0.2
    /// to grow them, `grow_bigs`, and 0.4 to insert more). They come on top of the rebuild's
    /// rounds for the sheets left: a job planned by patterns spends more of an iteration budget
    /// than one rebuilt sheet by sheet.
    pub rounds: Option<u64>,
}

/// What growing big-first openings has learnt in one plan (`SheetSearch::grow_bigs`).
#[derive(Default)]
pub(super) struct GrowthMemory {
    /// Compositions of big parts (counts per kind) that did not fit: none holding at least as
    /// many of every kind is pressed again.
    infeasible: Vec<Vec<u32>>,
    /// Openings in a row whose growth ended in a misfit (`MAX_GROW_MISSES`).
    misses: usize,
}

/// What a plan by patterns gives the rebuild.
#[derive(Default)]
pub(super) struct Plan {
    /// The sheets cut from patterns.
    pub sheets: Vec<FilledSheet>,
    /// The big-first patterns' openings (their big parts alone, after more were inserted), one
    /// per set of counts: a later big-first pattern opens with the one worth most at its duals
    /// where that ranks above its own opening before insertions (`ranks_above`), and a sheet the
    /// rebuild builds from the parts left with the fullest (`fuller_opening`). Empty when the
    /// plan cut no sheet: the parts left are then the whole pool, not its big parts.
    pub openings: Vec<FilledSheet>,
}

impl SheetSearch<'_> {
    /// Whether a job's pool suits a plan by patterns: it suits repeated layouts
    /// (`suits_repeated_layouts`), the construction took `MIN_SHEETS` or more (`sheets`),
    /// and at least `REPEATABLE` of the part area in kinds of `MIN_COPIES` copies or more (a
    /// pattern holding them can be cut several times; a job of distinct parts, or of pairs,
    /// gains nothing from an LP that could cut each pattern once, and loses the time).
    pub(super) fn suits_patterns(&self, pool: &[Item], sheets: usize) -> bool {
        let p = self.problem;
        let area = |part: usize| p.parts[part].geometry.area();
        // the pool's area in kinds of many copies: what patterns repeat
        let kinds = kinds_of(pool);
        let repeatable: f64 = kinds
            .iter()
            .zip(copies_of(&kinds, pool.iter()))
            .filter(|&(_, copies)| copies >= MIN_COPIES)
            .map(|(&k, copies)| copies as f64 * area(k))
            .sum();
        let total: f64 = pool.iter().map(|i| area(i.part)).sum();
        self.suits_repeated_layouts(pool)
            && sheets >= MIN_SHEETS
            && repeatable >= REPEATABLE * total
    }

    /// Plans sheets by patterns from `pool` (those planned leave it, and each takes its sheet
    /// from `opener`), generating patterns within `budget`; none when a kind alone does not
    /// open a sheet before `deadline`.
    pub(super) fn plan_by_patterns(
        &self,
        pool: &mut Vec<Item>,
        opener: &mut SheetOpener,
        budget: &PatternBudget,
        deadline: Instant,
    ) -> Plan {
        let (sheet_slice, rounds) = (budget.per_pattern, budget.rounds);
        let problem = self.problem;
        let seed = problem.settings.seed;
        let kinds = kinds_of(pool);
        let demand = copies_of(&kinds, pool.iter());
        let column = |sheet: &FilledSheet| Column {
            stock: 0,
            counts: copies_of(&kinds, sheet.placed.iter().map(|(i, _)| i)),
            cost: 1.0,
        };
        // one pattern of each kind alone, as the LP's start
        let mut trial = opener.clone();
        let mut patterns: Vec<FilledSheet> = Vec::new();
        for &k in &kinds {
            // (bounded by the generation's end: with many kinds these first fits alone could
            // take the rebuild's time, and the plan would cut nothing)
            let late = rounds.is_none() && Instant::now() >= budget.end;
            if late || self.cancel.is_cancelled() {
                return Plan::default();
            }
            let mut alone: Vec<Item> = pool.iter().filter(|i| i.part == k).copied().collect();
            match trial.open(self.eval, &mut alone, deadline) {
                Some(Some(sheet)) if !sheet.placed.is_empty() => patterns.push(sheet),
                _ => return Plan::default(),
            }
        }
        let homogeneous: Vec<Column> = patterns.iter().map(column).collect();
        let mut master = Master::new(&demand, homogeneous, Vec::new());
        while master.improve() {}
        let lp_start = master.objective();

        let sheet_area = problem.sheets[patterns[0].sheet].area();
        let capacity = sheet_area * super::EXPECTED_UTILISATION / 100.0;
        let mut stalls = 0;
        let mut generated = 0;
        // what growing big-first openings has learnt (`grow_bigs`), for the whole plan; with
        // few small parts to make room for, a pattern is its big parts, and the insertions
        // that follow do as well in less time
        let mut grown_before = GrowthMemory::default();
        let grows_openings = self.small_part_share(pool, sheet_area) >= GROW_SMALL_SHARE;
        // when a big-first step's first fit must be done (under an iteration budget the first
        // fit is never cut by the clock)
        let fill_by_for = |slice: &Slice| {
            if rounds.is_some() {
                deadline
            } else {
                slice.deadline
            }
        };
        // (`Plan::openings`)
        let mut openings: Vec<FilledSheet> = Vec::new();
        // under an iteration budget the count ends the generation, never the clock
        let more = |generated: usize| match rounds {
            Some(_) => generated < budget.patterns.min(MAX_PATTERNS),
            None => generated < MAX_PATTERNS && Instant::now() < budget.end,
        };
        while more(generated) && stalls < STALLS && !self.cancel.is_cancelled() {
            // (the master changes only once the pattern is added: one set of duals prices its
            // share, orders its big parts and values it)
            let duals = master.duals();
            let salt = 0x51_7cc1_b727_220a_u64.wrapping_add(generated as u64);
            let mut rng = Rng::new(seed.wrapping_add(salt.wrapping_mul(0x9e37_79b9)));
            let mut quota = if generated == 0 {
                // the plain fair share first: the mix a strip would put on the sheet
                Quota::share(problem, pool, capacity, &mut rng)
            } else {
                priced_share(problem, &kinds, &demand, &duals, capacity, &mut rng)
            };
            generated += 1;
            let mut virtual_pool = pool.clone();
            let share = quota.take(&virtual_pool);
            if share.is_empty() {
                stalls += 1;
                continue;
            }
            // every second pattern after the fair one opens with the share's big parts alone
            // (when it has any), and more of them are inserted before the small ones come
            let is_big = |i: &Item| is_big_part(problem, i.part, sheet_area);
            let bigs_of_share: Vec<Item> = if generated % 2 == 0 && generated > 1 {
                share.iter().copied().filter(is_big).collect()
            } else {
                Vec::new()
            };
            let big_first = !bigs_of_share.is_empty();
            let mut opening = if big_first {
                bigs_of_share.clone()
            } else {
                share
            };
            let start = Instant::now();
            // (under an iteration budget every first fit is tried, so runs repeat)
            let spend = if rounds.is_some() {
                deadline
            } else {
                start + sheet_slice.mul_f64(super::FIRST_FIT_SPEND)
            };
            let Some(Some(mut sheet)) = trial.open_best(
                self.eval,
                &mut opening,
                FIRST_FIT_TRIES,
                &mut rng,
                spend,
                deadline,
            ) else {
                break;
            };
            // a share of the pattern's time (and rounds) from `from`, for its big-first steps
            let part_of = |from: Instant, share: f64| Slice {
                deadline: (from + sheet_slice.mul_f64(share)).min(deadline),
                rounds: rounds.map(|r| (r as f64 * share).ceil() as u64),
                retries: MAX_RETRIES,
                press_refused: false,
            };
            if big_first {
                // the big parts pressed together as a strip interlock where a first fit leaves
                // them side by side (trousers_x8's legs: 69 % of the sheet against 55 % in one
                // pattern); the fuller layout opens the pattern
                let press_slice = part_of(Instant::now(), BIG_FIRST_SHARE / 2.0);
                let fill_by = fill_by_for(&press_slice);
                if let Some(pressed) =
                    self.pressed_bigs(&sheet, &bigs_of_share, press_slice, fill_by, salt ^ 0x9e55)
                {
                    tracing::debug!(
                        first_fit = 100.0 * sheet.part_area(problem) / sheet_area,
                        pressed = 100.0 * pressed.part_area(problem) / sheet_area,
                        "big parts pressed"
                    );
                    if pressed.part_area(problem) > sheet.part_area(problem) + 1e-9 {
                        sheet = pressed;
                    }
                }
                // then grown by whole presses: insertions, which make room for one part at
                // a time, seldom find a sheet of one big part more
                // (benches/history/multi-sheet.md, thirtieth session)
                if grows_openings {
                    let grow_slice = part_of(Instant::now(), BIG_FIRST_SHARE / 2.0);
                    self.grow_bigs(
                        &mut sheet,
                        &virtual_pool,
                        (&kinds, &duals),
                        densest_part_area(problem, &patterns),
                        &mut grown_before,
                        grow_slice,
                        fill_by_for(&grow_slice),
                        GROW_PRESSES,
                        salt ^ 0x6e0,
                    );
                }
                // an opening kept from an earlier pattern may be worth more to the plan at these
                // duals: trousers_x8's legs pressed four and two (69 % of the sheet) or one and
                // four are found now and then, and the later big-first patterns build on them
                // (it has had its insertions and this one not yet, so a kept one wins more
                // often than it would after them; it then skips them, and their time goes to
                // the small parts)
                match best_opening(problem, &kinds, &duals, &openings)
                    .filter(|known| ranks_above(problem, &kinds, &duals, known, &sheet))
                {
                    Some(known) => {
                        sheet = super::copy_layout(known, &mut virtual_pool.clone());
                    }
                    None => {
                        // as many of the big parts as the sheet takes, before any small part
                        // is in their way
                        let mut bigs: Vec<Item> = virtual_pool
                            .iter()
                            .copied()
                            .filter(|i| {
                                is_big(i) && !sheet.placed.iter().any(|(p, _)| p.same_unit(i))
                            })
                            .collect();
                        // those worth most to the plan per unit of area first, not the
                        // longest: in pool order, trousers_x8's longer big kind opened every
                        // such pattern, four of it to two of the other, and its last sheets
                        // held the other alone (benches/history/multi-sheet.md, large jobs)
                        by_worth(problem, &kinds, &duals, &mut bigs);
                        let slice = part_of(start, BIG_FIRST_SHARE);
                        sheet = self.densify(sheet, &mut bigs, None, slice, salt ^ 0xb16);
                        let counts = column(&sheet).counts;
                        if !openings.iter().any(|o| column(o).counts == counts) {
                            openings.push(sheet.clone());
                        }
                    }
                }
            }
            virtual_pool.retain(|i| !sheet.placed.iter().any(|(p, _)| p.same_unit(i)));
            quota.placed(&sheet.placed);
            let slice = Slice {
                deadline: (start + sheet_slice).min(deadline),
                rounds,
                retries: MAX_RETRIES,
                press_refused: false,
            };
            let dense = self.densify(sheet, &mut virtual_pool, Some(quota), slice, salt);
            let col = column(&dense);
            let value = worth_at(&col.counts, &duals);
            tracing::debug!(
                utilisation = 100.0 * dense.part_area(problem) / sheet_area,
                value,
                counts = ?col.counts,
                "pattern"
            );
            let known = master.cols.iter().any(|c| c.counts == col.counts);
            if value <= 1.0 + 1e-9 || known {
                stalls += 1;
            } else {
                stalls = 0;
            }
            if !known {
                master.add(col);
                patterns.push(dense);
                while master.improve() {}
            }
        }

        // each pattern the LP uses, as many whole times as it says, densest first; then the LP
        // again on the parts left, until it uses no pattern a whole time
        let mut solution = master.solution();
        let part_area = |j: usize| patterns[j].part_area(problem);
        let densest = densest_part_area(problem, &patterns);
        let mut planned = Vec::new();
        let columns: Vec<Column> = patterns.iter().map(column).collect();
        // what the LP mixes, and at what prices: a kind alone among the columns used is a kind
        // that no dense pattern carries enough of (benches/history/multi-sheet.md, large jobs)
        for &(j, x) in &solution {
            tracing::debug!(
                pattern = j,
                times = x,
                utilisation = 100.0 * part_area(j) / sheet_area,
                counts = ?columns[j].counts,
                "pattern used by the LP"
            );
        }
        tracing::debug!(duals = ?master.duals(), "the LP's duals");
        loop {
            solution.sort_by(|a, b| {
                part_area(b.0)
                    .total_cmp(&part_area(a.0))
                    .then(a.0.cmp(&b.0))
            });
            let before = planned.len();
            // (a kind alone is the LP's start, a first fit, often far from dense: a pattern
            // well under the densest is not cut, and its parts are left to the rebuild, which
            // mixes them with the others)
            for &(j, x) in solution
                .iter()
                .filter(|&&(j, _)| part_area(j) >= MIN_DENSITY * densest)
            {
                for _ in 0..(x + 1e-6).floor() as usize {
                    let Some(copy) = copy_if_available(problem, &patterns[j], pool) else {
                        break;
                    };
                    opener.take(copy.sheet);
                    planned.push(copy);
                }
            }
            if planned.len() == before || pool.is_empty() {
                break;
            }
            let left = copies_of(&kinds, pool.iter());
            let mut residual = Master::new(
                &left,
                columns[..kinds.len()].to_vec(),
                columns[kinds.len()..].to_vec(),
            );
            while residual.improve() {}
            solution = residual.solution();
        }
        tracing::debug!(
            demand = ?demand,
            kinds = kinds.len(),
            generated,
            lp_start,
            lp = master.objective(),
            bound = master.dual_bound(),
            planned = planned.len(),
            parts_left = pool.len(),
            "sheets planned by patterns"
        );
        // (a plan that cut nothing leaves the whole pool, not its big parts: no openings)
        if planned.is_empty() {
            openings.clear();
        }
        Plan {
            sheets: planned,
            openings,
        }
    }

    /// `bigs` pressed together as a strip: first-fitted (by `fill_by`) on `on`'s sheet made
    /// twice as long (`long_sheet`), shortened by the strip search (`press`, within `slice`),
    /// and those that end within the sheet kept, on an empty sheet of `on`'s type (possibly
    /// none of them). `None` on a sheet with blocked cells (an outline, defects, a turned
    /// frame) or when the first fit places none.
    fn pressed_bigs(
        &self,
        on: &FilledSheet,
        bigs: &[Item],
        slice: Slice,
        fill_by: Instant,
        seed: u64,
    ) -> Option<FilledSheet> {
        let long = self.long_sheet(on, bigs, fill_by)?;
        Some(within_sheet(on, self.press(&long, slice, seed)))
    }

    /// The share of `pool`'s part area in parts that are not big on a sheet of `sheet_area`.
    fn small_part_share(&self, pool: &[Item], sheet_area: f64) -> f64 {
        let small: f64 = pool
            .iter()
            .filter(|i| !is_big_part(self.problem, i.part, sheet_area))
            .map(|i| self.item_area(i))
            .sum();
        small / self.area_of(pool).max(f64::MIN_POSITIVE)
    }

    /// `long` (`long_sheet` of `on`) pressed until all of it ends within `on`'s sheet (under an
    /// iteration budget, for all its rounds: `Slice::stop_at`), and those that end within the
    /// sheet kept, as `pressed_bigs` keeps them.
    fn pressed_to_fit(
        &self,
        on: &FilledSheet,
        long: &FilledSheet,
        slice: Slice,
        seed: u64,
    ) -> FilledSheet {
        let until = slice.stop_at(on.area.x1);
        if long.used_length() <= until {
            return within_sheet(on, long.clone());
        }
        within_sheet(on, self.press_until(long, slice, seed, until))
    }

    /// Grows the big parts of a big-first opening (`sheet`, big parts only, from `pool`) by
    /// whole presses, `presses` at most: one more big part, or one of a kind traded for one
    /// or two of another, of at most `max_area` of part area (the densest pattern's so far:
    /// more big-part area than that seldom fits), worth more at the LP's duals (`lp`: kinds and
    /// their duals) than the opening, or as much with more area, the one worth most first
    /// (then the one of most area); each is first-fitted (by `fill_by`) on the sheet made twice
    /// as long and pressed until it all ends within the sheet (`pressed_to_fit`), and kept where
    /// it does. Why: an insertion makes room for one part by moving the others a little, and
    /// rarely turns a stack of five of trousers' legs into one of six, which pressing the six
    /// from a fresh first fit finds. The first composition that does not fit ends the growth
    /// (those after it are worth less, and the time goes to the insertions); it is remembered
    /// in `memory` for the rest of the plan, and none holding at least as many of every kind is
    /// pressed again (pressing is a search: a composition that would fit may be missed, and
    /// then stays out). After `MAX_GROW_MISSES` openings in a row ended so, the plan grows
    /// none; nor is a sheet with blocked cells grown (no longer sheet to press on). The plan
    /// calls it only for a pool with `GROW_SMALL_SHARE` of its part area in small parts or
    /// more (`small_part_share`).
    #[allow(clippy::too_many_arguments)]
    fn grow_bigs(
        &self,
        sheet: &mut FilledSheet,
        pool: &[Item],
        lp: (&[usize], &[f64]),
        max_area: f64,
        memory: &mut GrowthMemory,
        slice: Slice,
        fill_by: Instant,
        presses: usize,
        seed: u64,
    ) {
        let (kinds, duals) = lp;
        let problem = self.problem;
        let sheet_area = problem.sheets[sheet.sheet].area();
        if memory.misses >= MAX_GROW_MISSES || sheet.area.blocked.is_some() {
            return;
        }
        let big_kinds: Vec<usize> = kinds
            .iter()
            .copied()
            .filter(|&k| is_big_part(problem, k, sheet_area))
            .collect();
        // each press its share of the growth's rounds, whatever the presses before it took
        let press_rounds = slice
            .rounds
            .map(|r| (r as f64 / presses.max(1) as f64).ceil() as u64);
        let mut presses_left = presses;
        while presses_left > 0 && Instant::now() < slice.deadline && !self.cancel.is_cancelled() {
            let bigs_on: Vec<Item> = sheet.placed.iter().map(|(i, _)| *i).collect();
            let worth_now = worth_at(&copies_of(kinds, bigs_on.iter()), duals);
            let area_now = self.area_of(&bigs_on);
            let mut ranked: Vec<(f64, f64, Vec<u32>, Vec<Item>)> =
                compositions_next_to(&bigs_on, pool, &big_kinds)
                    .into_iter()
                    .map(|c| {
                        let counts = copies_of(kinds, c.iter());
                        (worth_at(&counts, duals), self.area_of(&c), counts, c)
                    })
                    .filter(|(w, a, counts, _)| {
                        let better = *w > worth_now + 1e-9
                            || (*w >= worth_now - 1e-9 && *a > area_now + 1e-9);
                        let known_misfit = memory
                            .infeasible
                            .iter()
                            .any(|f| f.iter().zip(counts).all(|(x, y)| x <= y));
                        better && *a <= max_area.min(sheet_area) && !known_misfit
                    })
                    .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
            let Some((_, _, counts, items)) = ranked.into_iter().next() else {
                return;
            };
            let press_slice = Slice {
                rounds: press_rounds,
                ..slice.first(1.0 / presses_left as f64)
            };
            presses_left -= 1;
            let fitted = match self.long_sheet(sheet, &items, fill_by) {
                Some(long) if long.placed.len() == items.len() => {
                    let pressed = self.pressed_to_fit(sheet, &long, press_slice, seed);
                    (pressed.placed.len() == items.len()).then_some(pressed)
                }
                // cut short by the clock: nothing learnt about the composition
                _ if Instant::now() >= fill_by => return,
                // not all of it first-fits even on the sheet made twice as long
                _ => None,
            };
            match fitted {
                Some(grown) => {
                    tracing::debug!(counts = ?counts, "big parts grown");
                    *sheet = grown;
                    memory.misses = 0;
                }
                None => {
                    tracing::debug!(counts = ?counts, "big parts do not fit");
                    memory.infeasible.push(counts);
                    memory.misses += 1;
                    return;
                }
            }
        }
    }

    /// `bigs` first-fitted on an empty sheet of `on`'s type made twice as long (its usable
    /// length doubled from its start: the same grid, so a pose on it is a pose on the sheet
    /// wherever the part ends within the sheet); `None` where `on` has blocked cells or none
    /// is placed.
    pub(super) fn long_sheet(
        &self,
        on: &FilledSheet,
        bigs: &[Item],
        fill_by: Instant,
    ) -> Option<FilledSheet> {
        if on.area.blocked.is_some() {
            return None;
        }
        let mut long = super::emptied(on);
        long.area.x1 += on.area.x1 - on.area.x0;
        let mut left = bigs.to_vec();
        long.refill(self.eval, &mut left, fill_by);
        (!long.placed.is_empty()).then_some(long)
    }
}

/// The most part area of any of `patterns`.
fn densest_part_area(problem: &crate::nest2d::Problem, patterns: &[FilledSheet]) -> f64 {
    patterns
        .iter()
        .map(|p| p.part_area(problem))
        .fold(0.0, f64::max)
}

/// The parts of `pressed` (on `on`'s sheet made longer) that end within `on`'s sheet, on an
/// empty sheet of `on`'s type.
fn within_sheet(on: &FilledSheet, pressed: FilledSheet) -> FilledSheet {
    let mut sheet = super::emptied(on);
    sheet.placed = pressed
        .placed
        .into_iter()
        .filter(|(i, p)| {
            sheet
                .area
                .bounds(&sheet.table[i.part][p.orient], f64::INFINITY)
                .is_some_and(|b| p.gx <= b.x_hi)
        })
        .collect();
    sheet
}

/// The compositions one step from the big parts `on` (`grow_bigs`), with parts from `pool`
/// not on it: one more of a kind of `big_kinds`, or one of a kind on it traded for one or two
/// of another.
fn compositions_next_to(on: &[Item], pool: &[Item], big_kinds: &[usize]) -> Vec<Vec<Item>> {
    // the first `n` of kind `k` in the pool that are not on the sheet, if there are so many
    let free = |k: usize, n: usize| -> Option<Vec<Item>> {
        let v: Vec<Item> = pool
            .iter()
            .filter(|i| i.part == k && !on.iter().any(|o| o.same_unit(i)))
            .take(n)
            .copied()
            .collect();
        (v.len() == n).then_some(v)
    };
    let mut next: Vec<Vec<Item>> = Vec::new();
    for &k in big_kinds {
        for n in 1..=2 {
            let Some(more) = free(k, n) else { break };
            if n == 1 {
                next.push(on.iter().copied().chain(more.iter().copied()).collect());
            }
            for &j in big_kinds.iter().filter(|&&j| j != k) {
                if let Some(at) = on.iter().position(|i| i.part == j) {
                    let mut c = on.to_vec();
                    c.remove(at);
                    c.extend(more.iter().copied());
                    next.push(c);
                }
            }
        }
    }
    next
}

/// Whether `part` is a big one on a sheet of `sheet_area`: `BIG_PART` of it or more.
fn is_big_part(problem: &crate::nest2d::Problem, part: usize, sheet_area: f64) -> bool {
    problem.parts[part].geometry.area() >= BIG_PART * sheet_area
}

/// The part area of `sheet`'s big parts (`is_big_part`).
fn big_area(problem: &crate::nest2d::Problem, sheet: &FilledSheet) -> f64 {
    let sheet_area = problem.sheets[sheet.sheet].area();
    sheet
        .placed
        .iter()
        .filter(|(i, _)| is_big_part(problem, i.part, sheet_area))
        .map(|(i, _)| problem.parts[i.part].geometry.area())
        .sum()
}

/// The kinds (parts) in the pool, in ascending order.
pub(super) fn kinds_of(pool: &[Item]) -> Vec<usize> {
    let mut kinds: Vec<usize> = pool.iter().map(|i| i.part).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// How many of `items` are of each of `kinds` (ascending, as `kinds_of` gives them; items of
/// other kinds are not counted): a pool's demand, or a pattern's column.
pub(super) fn copies_of<'i>(kinds: &[usize], items: impl Iterator<Item = &'i Item>) -> Vec<u32> {
    let mut copies = vec![0; kinds.len()];
    for item in items {
        if let Ok(k) = kinds.binary_search(&item.part) {
            copies[k] += 1;
        }
    }
    copies
}

/// Sorts `items` by what a unit of sheet area holding them is worth to the plan (their kind's
/// dual over its area), the most first; ties keep their order (the pool's, the longest first).
fn by_worth(problem: &crate::nest2d::Problem, kinds: &[usize], duals: &[f64], items: &mut [Item]) {
    let worth = |i: &Item| match kinds.binary_search(&i.part) {
        Ok(k) => worth_per_area(problem, i.part, duals[k]),
        Err(_) => 0.0,
    };
    items.sort_by(|a, b| worth(b).total_cmp(&worth(a)));
}

/// What `counts` of the kinds are worth to the plan at `duals` (a kind in surplus, dual 0 or
/// below, nothing): a pattern's value, or an opening's.
fn worth_at(counts: &[u32], duals: &[f64]) -> f64 {
    counts
        .iter()
        .zip(duals)
        .map(|(&n, &y)| n as f64 * y.max(0.0))
        .sum()
}

/// Whether opening `a` ranks above `b` for the plan at `duals`: worth more (its parts' duals,
/// `worth_at`), or worth as much (to rounding) and holding more part area.
fn ranks_above(
    problem: &crate::nest2d::Problem,
    kinds: &[usize],
    duals: &[f64],
    a: &FilledSheet,
    b: &FilledSheet,
) -> bool {
    let worth =
        |o: &FilledSheet| worth_at(&copies_of(kinds, o.placed.iter().map(|(i, _)| i)), duals);
    let (wa, wb) = (worth(a), worth(b));
    if (wa - wb).abs() > 1e-9 * wa.abs().max(wb.abs()).max(1.0) {
        wa > wb
    } else {
        a.part_area(problem) > b.part_area(problem) + 1e-9
    }
}

/// The opening of `openings` ranked highest at `duals` (`ranks_above`; the first on ties).
fn best_opening<'o>(
    problem: &crate::nest2d::Problem,
    kinds: &[usize],
    duals: &[f64],
    openings: &'o [FilledSheet],
) -> Option<&'o FilledSheet> {
    openings.iter().fold(None, |best, o| match best {
        Some(b) if !ranks_above(problem, kinds, duals, o, b) => Some(b),
        _ => Some(o),
    })
}

/// `first_fit`, or a copy of the plan's opening (`Plan::openings`) with the most big-part area
/// (`big_area`) where that is more than `first_fit` holds, among those on its sheet type and
/// raster that `pool` still holds whole; the copy's parts are `pool`'s (which keeps them: the
/// caller takes what the sheet holds out of it). Why: the parts a plan leaves are rich in big
/// ones (its patterns took the small ones first), and a share of them first-fitted holds fewer than
/// the plan found a sheet takes (trousers_x8: five of its legs where an opening holds six).
/// The kinds' mix is not weighed: the fullest opening is taken while the pool fills it, so its
/// kinds run out first (benches/history/multi-sheet.md, large jobs: a next step).
pub(super) fn fuller_opening(
    problem: &crate::nest2d::Problem,
    first_fit: FilledSheet,
    openings: &[FilledSheet],
    pool: &[Item],
) -> FilledSheet {
    let mut fullest = first_fit;
    for opening in openings {
        // (the plan's openings and the rebuild's sheets come from one opener: one sheet type,
        // one raster; a guard, so that no pose is ever read on another raster)
        let alike = opening.sheet == fullest.sheet
            && std::sync::Arc::ptr_eq(&opening.table, &fullest.table)
            && opening.area.cell == fullest.area.cell;
        if !alike {
            continue;
        }
        let copy = super::copy_layout(opening, &mut pool.to_vec());
        if copy.placed.len() == opening.placed.len()
            && big_area(problem, &copy) > big_area(problem, &fullest) + 1e-9
        {
            fullest = copy;
        }
    }
    fullest
}

/// What a unit of sheet area holding `part` is worth to the plan at its kind's `dual` (0 for a
/// kind in surplus).
fn worth_per_area(problem: &crate::nest2d::Problem, part: usize, dual: f64) -> f64 {
    dual.max(0.0) / problem.parts[part].geometry.area().max(f64::MIN_POSITIVE)
}

/// A sheet's share priced by the LP: each kind's copies in proportion to its copies wanted
/// times its dual over its area (what a unit of sheet area holding it is worth to the plan),
/// scaled so that the share holds `capacity` of part area; a kind whose dual is 0 (in surplus)
/// gets none, and reaches the sheet only as a gap filler once the share is on it.
fn priced_share(
    problem: &crate::nest2d::Problem,
    kinds: &[usize],
    demand: &[u32],
    duals: &[f64],
    capacity: f64,
    rng: &mut Rng,
) -> Quota {
    let worth: f64 = demand
        .iter()
        .zip(duals)
        .map(|(&d, &y)| d as f64 * y.max(0.0))
        .sum();
    let allowed = kinds
        .iter()
        .zip(demand)
        .zip(duals)
        .map(|((&k, &d), &y)| {
            let expected = if worth > 0.0 {
                capacity * d as f64 * worth_per_area(problem, k, y) / worth
            } else {
                0.0
            };
            let copies = if expected < 1.0 {
                usize::from(rng.unit() < expected)
            } else {
                expected.ceil() as usize
            };
            (k, copies.min(d as usize))
        })
        .collect();
    Quota { allowed }
}

/// The same layout with copies from `pool` (taken out of it), less the parts the pool has no
/// copy of left (`copy_layout`; the LP may cut a pattern more often than every part of it is
/// wanted); `None`,
/// and the pool untouched, when that leaves less than `MIN_COPY` of the pattern's part area.
fn copy_if_available(
    problem: &crate::nest2d::Problem,
    sheet: &FilledSheet,
    pool: &mut Vec<Item>,
) -> Option<FilledSheet> {
    let mut left = pool.clone();
    let copy = super::copy_layout(sheet, &mut left);
    if copy.part_area(problem) < MIN_COPY * sheet.part_area(problem) {
        return None;
    }
    *pool = left;
    Some(copy)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::cpu_search;
    use super::*;
    use crate::cancel::CancelHandle;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::model::{PartSpec, Problem, Settings, SheetSpec};
    use kerf_kernels::CpuEvaluator;

    /// Squares of 10 and strips of 2 x 5 in many copies, on 20 x 20 sheets.
    pub(in crate::nest2d::sheets) fn problem(squares: u32, strips: u32) -> Problem {
        Problem {
            parts: vec![
                PartSpec::new(
                    "square",
                    PartGeometry::single(Shape::rectangle(10.0, 10.0)),
                    squares,
                ),
                PartSpec::new(
                    "strip",
                    PartGeometry::single(Shape::rectangle(2.0, 5.0)),
                    strips,
                ),
            ],
            sheets: vec![SheetSpec::rectangle("s", 20.0, 20.0)],
            settings: Settings {
                max_iterations: Some(200),
                ..Settings::default()
            },
        }
    }

    fn items(part: usize, n: u32) -> Vec<Item> {
        (0..n)
            .map(|instance| Item {
                part,
                instance,
                is_filler: false,
            })
            .collect()
    }

    #[test]
    fn a_priced_share_follows_the_duals_and_holds_the_capacity() {
        let p = problem(40, 100);
        let mut rng = Rng::new(1);
        // only the squares are scarce: the share is squares alone, as many as the capacity holds
        let q = priced_share(&p, &[0, 1], &[40, 100], &[0.25, 0.0], 300.0, &mut rng);
        assert_eq!(q.allowed, vec![(0, 3), (1, 0)]);
        // both worth their area alike: copies in proportion to the copies wanted
        let q = priced_share(&p, &[0, 1], &[40, 100], &[1.0, 0.1], 1400.0, &mut rng);
        // worth 40 + 10 = 50; squares 1400 * 40 / (100 * 50) = 11.2, strips 1400 * 10 / (10 * 50) = 28
        assert_eq!(q.allowed, vec![(0, 12), (1, 28)]);
        // never more than are wanted
        let q = priced_share(&p, &[0, 1], &[2, 100], &[1.0, 0.0], 1400.0, &mut rng);
        assert_eq!(q.allowed, vec![(0, 2), (1, 0)]);
    }

    #[test]
    fn parts_by_worth_put_what_the_plan_lacks_per_unit_of_area_first() {
        let p = problem(40, 100);
        let mut parts = items(0, 2);
        parts.extend(items(1, 2));
        // a square (area 100) worth 0.5 is worth less per unit of area than a strip (area 10)
        // worth 0.1: the strips first, each kind in its order
        by_worth(&p, &[0, 1], &[0.5, 0.1], &mut parts);
        let order: Vec<(usize, u32)> = parts.iter().map(|i| (i.part, i.instance)).collect();
        assert_eq!(order, vec![(1, 0), (1, 1), (0, 0), (0, 1)]);
        // a kind in surplus (dual 0) last
        by_worth(&p, &[0, 1], &[0.5, 0.0], &mut parts);
        let order: Vec<(usize, u32)> = parts.iter().map(|i| (i.part, i.instance)).collect();
        assert_eq!(order, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        // worth alike per unit of area: the order stays, whichever kind comes first
        by_worth(&p, &[0, 1], &[1.0, 0.1], &mut parts);
        let order: Vec<(usize, u32)> = parts.iter().map(|i| (i.part, i.instance)).collect();
        assert_eq!(order, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        parts.rotate_left(2);
        by_worth(&p, &[0, 1], &[1.0, 0.1], &mut parts);
        let order: Vec<(usize, u32)> = parts.iter().map(|i| (i.part, i.instance)).collect();
        assert_eq!(order, vec![(1, 0), (1, 1), (0, 0), (0, 1)]);
    }

    #[test]
    fn big_parts_pressed_keep_only_what_ends_within_the_sheet_and_never_overlap() {
        let p = problem(5, 0);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let far = Instant::now() + Duration::from_secs(60);
        let on = layout(&p, &res, items(0, 1));
        // the sheet made 40 long takes all five squares of 10, in three columns
        let long = search
            .long_sheet(&on, &items(0, 5), far)
            .expect("a rectangular sheet");
        assert_eq!(long.area.x1, 2.0 * on.area.x1 - on.area.x0);
        assert_eq!(long.placed.len(), 5);
        assert!(long.used_length() > on.area.x1, "one square past the sheet");
        // pressed (three columns are already as short as five squares go: `press` itself is
        // tested in `sheets`), four end within the sheet's 20
        let slice = Slice {
            deadline: far,
            rounds: Some(200),
            retries: MAX_RETRIES,
            press_refused: false,
        };
        let pressed = search
            .pressed_bigs(&on, &items(0, 5), slice, far, 1)
            .expect("a rectangular sheet");
        assert_eq!(
            pressed.placed.len(),
            4,
            "the fifth square lies past the sheet"
        );
        assert_eq!(pressed.area.x1, on.area.x1, "on the sheet as it is");
        assert!(pressed.used_length() <= on.area.x1 + 1e-9);
        let moves = p.settings.move_set(0);
        let c = crate::nest2d::search::Compactor::new(
            &CpuEvaluator,
            &pressed.area,
            pressed.orientation_lists(),
            pressed.poses(),
            1,
            moves,
        );
        assert_eq!(c.total_overlap(), 0);
    }

    /// `squares` copies of part 0 followed by `strips` of part 1.
    fn squares_and_strips(squares: u32, strips: u32) -> Vec<Item> {
        let mut parts = items(0, squares);
        parts.extend(items(1, strips));
        parts
    }

    /// A sheet of `p` holding `parts`, first-fitted in order on `res`.
    fn layout(
        p: &Problem,
        res: &crate::nest2d::engine::Resolution,
        parts: Vec<Item>,
    ) -> FilledSheet {
        let far = Instant::now() + Duration::from_secs(60);
        let n = parts.len();
        let mut parts = parts;
        let sheet = SheetOpener::new(p, res)
            .open(&CpuEvaluator, &mut parts, far)
            .flatten()
            .expect("a sheet opens");
        assert_eq!(sheet.placed.len(), n, "all placed");
        sheet
    }

    #[test]
    fn the_opening_worth_most_at_the_duals_is_reused_then_the_fullest() {
        let p = problem(40, 100);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let squares = layout(&p, &res, items(0, 3));
        let mixed = layout(&p, &res, squares_and_strips(1, 10));
        let openings = [squares, mixed];
        let best = |duals: &[f64]| {
            let b = best_opening(&p, &[0, 1], duals, &openings).expect("two openings");
            b.placed.len()
        };
        // squares scarce: three of them (worth 3) above one and ten strips (worth 1)
        assert_eq!(best(&[1.0, 0.0]), 3);
        // strips scarce: 0.1 + 10 * 0.5 above 3 * 0.1
        assert_eq!(best(&[0.1, 0.5]), 11);
        // worth alike: the more part area (300 against 200)
        assert_eq!(best(&[0.0, 0.0]), 3);
        assert!(best_opening(&p, &[0, 1], &[1.0, 0.0], &[]).is_none());
        assert!(!ranks_above(
            &p,
            &[0, 1],
            &[0.0, 0.0],
            &openings[0],
            &openings[0]
        ));
    }

    #[test]
    fn a_leftover_sheet_opens_as_the_plan_did_where_the_pool_holds_the_opening_whole() {
        let p = problem(40, 100);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        // the plan's opening: four squares, the sheet full (400 of big parts)
        let opening = layout(&p, &res, items(0, 4));
        // a first fit of two squares and ten strips (200 of big parts)
        let first_fit = layout(&p, &res, squares_and_strips(2, 10));
        let pool: Vec<Item> = items(0, 6)
            .into_iter()
            .map(|i| Item {
                instance: i.instance + 10,
                ..i
            })
            .chain(items(1, 20))
            .collect();
        let sheet = fuller_opening(&p, first_fit.clone(), &[opening.clone()], &pool);
        assert_eq!(sheet.placed.len(), 4);
        assert!(sheet
            .placed
            .iter()
            .all(|(i, _)| i.part == 0 && i.instance >= 10));
        assert!(
            sheet
                .placed
                .iter()
                .all(|(i, _)| pool.iter().any(|q| q.same_unit(i))),
            "the copy's parts are the pool's"
        );
        // three squares left: the opening is not whole, the first fit stands
        let few: Vec<Item> = pool
            .iter()
            .copied()
            .filter(|i| i.part == 1 || i.instance < 13)
            .collect();
        let sheet = fuller_opening(&p, first_fit.clone(), &[opening.clone()], &few);
        assert_eq!(sheet.placed.len(), first_fit.placed.len());
        // an opening with no more big-part area than the first fit leaves it
        let two = layout(&p, &res, items(0, 2));
        let sheet = fuller_opening(&p, first_fit.clone(), &[two], &pool);
        assert_eq!(sheet.placed.len(), first_fit.placed.len());
        // an opening on another raster is never read on this one
        let elsewhere = crate::nest2d::engine::resolution(&p, 16.0);
        let other = layout(&p, &elsewhere, items(0, 4));
        let sheet = fuller_opening(&p, first_fit.clone(), &[other], &pool);
        assert_eq!(sheet.placed.len(), first_fit.placed.len());
        // no plan, no openings: the first fit
        let sheet = fuller_opening(&p, first_fit.clone(), &[], &pool);
        assert_eq!(sheet.placed.len(), first_fit.placed.len());
    }

    #[test]
    fn a_copy_drops_what_the_pool_lacks_down_to_its_least_share() {
        let p = problem(4, 40);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let far = Instant::now() + Duration::from_secs(60);
        // three squares leave a quadrant, which ten strips fill
        let mut parts = items(0, 3);
        parts.extend(items(1, 40));
        let pattern = SheetOpener::new(&p, &res)
            .open(&CpuEvaluator, &mut parts, far)
            .flatten()
            .expect("a sheet opens");
        let strips = pattern.placed.iter().filter(|(i, _)| i.part == 1).count();
        assert!(
            strips >= 2,
            "strips fill the room the squares leave: {strips}"
        );
        // every square, but one strip fewer than the pattern holds: the copy drops one strip
        let mut pool: Vec<Item> = items(0, 3)
            .into_iter()
            .map(|i| Item {
                instance: i.instance + 10,
                ..i
            })
            .collect();
        pool.extend(items(1, strips as u32 - 1).into_iter().map(|i| Item {
            instance: i.instance + 100,
            ..i
        }));
        let copy = copy_if_available(&p, &pattern, &mut pool).expect("most of the pattern is left");
        assert_eq!(copy.placed.len(), pattern.placed.len() - 1);
        assert!(pool.is_empty());
        assert!(
            copy.placed.iter().all(|(i, _)| i.instance >= 10),
            "copies from the pool"
        );
        // no square left: far under the least share, and the pool stays as it was
        let mut pool = items(1, 40);
        assert!(copy_if_available(&p, &pattern, &mut pool).is_none());
        assert_eq!(pool.len(), 40);
    }

    #[test]
    fn a_plan_cuts_each_part_once_on_dense_sheets() {
        // 10 squares and 60 strips hold 1000 + 600 of area: four sheets of 400 at the least
        let p = problem(10, 60);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let mut pool = items(0, 10);
        pool.extend(items(1, 60));
        let mut opener = SheetOpener::new(&p, &res);
        let far = Instant::now() + Duration::from_secs(120);
        let budget = PatternBudget {
            per_pattern: Duration::from_secs(10),
            end: far,
            patterns: 4,
            rounds: Some(200),
        };
        let planned = search
            .plan_by_patterns(&mut pool, &mut opener, &budget, far)
            .sheets;
        assert!(!planned.is_empty(), "the LP cuts some pattern a whole time");
        let mut cut: Vec<Item> = planned
            .iter()
            .flat_map(|s| s.placed.iter().map(|(i, _)| *i))
            .collect();
        let n = cut.len();
        cut.extend(pool.iter().copied());
        cut.sort_by_key(|i| (i.part, i.instance));
        cut.dedup_by(|a, b| a.same_unit(b));
        assert_eq!(cut.len(), 70, "every part planned or left, none twice");
        assert_eq!(n + pool.len(), 70);
        for sheet in &planned {
            // every pattern here fills its sheet: squares alone, strips alone, or three
            // squares and ten strips
            assert!(
                sheet.part_area(&p) >= MIN_COPY * 400.0 - 1e-9,
                "a planned sheet is dense"
            );
        }
    }

    /// Parts of the given rectangles (width, height, copies) on 21 x 21 sheets.
    fn rectangles(parts: &[(f64, f64, u32)]) -> Problem {
        Problem {
            parts: parts
                .iter()
                .enumerate()
                .map(|(k, &(w, h, n))| {
                    PartSpec::new(
                        &format!("r{k}"),
                        PartGeometry::single(Shape::rectangle(w, h)),
                        n,
                    )
                })
                .collect(),
            sheets: vec![SheetSpec::rectangle("s", 21.0, 21.0)],
            settings: Settings {
                max_iterations: Some(200),
                ..Settings::default()
            },
        }
    }

    #[test]
    fn big_parts_grow_to_the_composition_worth_most_that_fits_and_misfits_are_remembered() {
        // squares of 10 and half squares (10 x 5), big; strips of 2 x 5, small: every mix of
        // big parts of up to 400 of area fits the 21 x 21 sheet, none of more
        let p = rectangles(&[(10.0, 10.0, 4), (10.0, 5.0, 4), (2.0, 5.0, 20)]);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let far = Instant::now() + Duration::from_secs(60);
        let slice = Slice {
            deadline: far,
            rounds: Some(400),
            retries: MAX_RETRIES,
            press_refused: false,
        };
        let lp: (&[usize], &[f64]) = (&[0, 1, 2], &[0.1, 0.2, 0.0]);
        let counts = |s: &FilledSheet| copies_of(lp.0, s.placed.iter().map(|(i, _)| i));
        let no_overlap = |p: &Problem, s: &FilledSheet| {
            let c = crate::nest2d::search::Compactor::new(
                &CpuEvaluator,
                &s.area,
                s.orientation_lists(),
                s.poses(),
                1,
                p.settings.move_set(0),
            );
            c.total_overlap() == 0 && s.used_length() <= s.area.x1 + 1e-9
        };
        let start = layout(&p, &res, items(0, 3));
        // from three squares, with `small` strips in the pool
        let grown = |max_area: f64, memory: &mut GrowthMemory, presses: usize, small: u32| {
            let mut pool = squares_and_strips(4, 4);
            pool.extend(items(2, small));
            let mut sheet = start.clone();
            search.grow_bigs(
                &mut sheet, &pool, lp, max_area, memory, slice, far, presses, 1,
            );
            assert!(no_overlap(&p, &sheet), "a grown sheet is a layout");
            counts(&sheet)
        };
        // the halves worth twice a square for their area: three squares (worth 0.3) become
        // two squares and two halves (0.6, above three and one, 0.5, and four squares, 0.4),
        // then one and four (0.9), then two and four (1.0, 400 of area); one and five would
        // need a fifth half, three and four more room than the sheet has
        let mut memory = GrowthMemory::default();
        assert_eq!(grown(441.0, &mut memory, 1, 20), vec![2, 2, 0]);
        assert_eq!(grown(441.0, &mut memory, 8, 20), vec![2, 4, 0]);
        assert!(
            memory.infeasible.is_empty(),
            "every composition tried fitted"
        );
        // never more big-part area than `max_area`: one and four (300) is as far as 350 goes
        assert_eq!(grown(350.0, &mut memory, 8, 20), vec![1, 4, 0]);
        // a composition known not to fit is never tried, nor any that holds at least as many
        // of each kind: from three squares only three and one is left; a growth resets the
        // misfits in a row
        let mut memory = GrowthMemory {
            infeasible: vec![vec![2, 2, 0]],
            misses: MAX_GROW_MISSES - 1,
        };
        assert_eq!(grown(441.0, &mut memory, 8, 20), vec![3, 1, 0]);
        assert_eq!(memory.infeasible, vec![vec![2, 2, 0]]);
        assert_eq!(memory.misses, 0);
        // after `MAX_GROW_MISSES` misfits in a row the plan grows nothing
        memory.misses = MAX_GROW_MISSES;
        assert_eq!(grown(441.0, &mut memory, 8, 20), vec![3, 0, 0]);
        // a plan grows openings from `GROW_SMALL_SHARE` of the pool's area in small parts: six
        // strips are 60 of 660 (9 %), seven 70 of 670 (10.4 %)
        let share = |small: u32| {
            let mut pool = squares_and_strips(4, 4);
            pool.extend(items(2, small));
            search.small_part_share(&pool, 441.0)
        };
        assert!(share(6) < GROW_SMALL_SHARE);
        assert!(share(7) >= GROW_SMALL_SHARE);
        assert_eq!(share(0), 0.0);

        // squares of 12 and halves (10 x 5): a second square never fits beside the first; it
        // is worth most, and its misfit ends the growth (one square and a half would fit) and
        // is remembered
        let p = rectangles(&[(12.0, 12.0, 3), (10.0, 5.0, 4), (2.0, 5.0, 20)]);
        let res = crate::nest2d::engine::resolution(&p, 16.0);
        let search = cpu_search(&p, &cancel);
        let mut sheet = layout(&p, &res, items(0, 1));
        let mut pool = squares_and_strips(3, 4);
        pool.extend(items(2, 20));
        let mut memory = GrowthMemory::default();
        let lp: (&[usize], &[f64]) = (&[0, 1, 2], &[1.0, 0.1, 0.0]);
        search.grow_bigs(&mut sheet, &pool, lp, 441.0, &mut memory, slice, far, 8, 1);
        assert_eq!(
            copies_of(lp.0, sheet.placed.iter().map(|(i, _)| i)),
            vec![1, 0, 0]
        );
        assert_eq!(memory.infeasible, vec![vec![2, 0, 0]]);
        assert_eq!(memory.misses, 1);
        assert!(no_overlap(&p, &sheet));
    }

    #[test]
    fn only_jobs_of_many_copies_on_one_sheet_type_are_planned_by_patterns() {
        let cancel = CancelHandle::default();
        let suits = |p: &Problem, sheets: usize| {
            let search = cpu_search(p, &cancel);
            let mut pool = items(0, p.parts[0].quantity);
            pool.extend(items(1, p.parts[1].quantity));
            search.suits_patterns(&pool, sheets)
        };
        let p = problem(40, 100);
        assert!(suits(&p, 10), "many copies of each kind");
        assert!(
            !suits(&p, MIN_SHEETS - 1),
            "too few sheets for patterns to repeat"
        );
        // forty copies or more of each kind serve fifty sheets: a pattern is cut several
        // times, not once on every sheet
        assert!(suits(&p, 50));
        // where the squares hold most of the area (300 or 400 of it against the strips' 100),
        // three copies are too few for a pattern to repeat, four enough
        assert!(!suits(&problem(MIN_COPIES - 1, 10), 10), "too few copies");
        assert!(suits(&problem(MIN_COPIES, 10), 10));
        let mut two_types = problem(40, 100);
        two_types.sheets.push(SheetSpec::rectangle("t", 30.0, 20.0));
        assert!(!suits(&two_types, 10), "several sheet types");
        let mut limited = problem(40, 100);
        limited.sheets[0].quantity = Some(20);
        assert!(!suits(&limited, 10), "a limited sheet type");
        let mut ranked = problem(40, 100);
        ranked.parts[1].priority = 1;
        assert!(!suits(&ranked, 10), "several part priorities");
    }
}
