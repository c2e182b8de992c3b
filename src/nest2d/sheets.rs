//! The search over all sheets of a multi-sheet job. The construction (`engine::fill_sheets`)
//! first-fits sheet after sheet, biggest parts first: its first sheets take every small part
//! that fills a gap, and its later sheets keep only the parts that pack worst, in a first-fit
//! layout. This module rebuilds the sheets one at a time, each dense and each with a fair mix:
//!
//! 0. **Sets** (jobs whose every part's copies are a multiple of one count, on one sheet type,
//!    `sets`): as many whole sets as a sheet's area holds at 90 % are nested once, pressed as a
//!    strip on finer and finer rasters until they end within the sheet, and that layout is cut
//!    for every full sheet; the sets left over are rebuilt as below (with none left over, the
//!    last sheet is as full as the others and is not emptied, step 4). Tried only where those
//!    sheets are no more than the sets' area needs at that density and fewer than the
//!    construction's; where the layout does not fit in its time, the job goes on as below.
//!    **Patterns** (jobs of many copies on one sheet type, when no sets were cut,
//!    `patterns`): dense layouts, each built as a rebuilt sheet is from a share priced by the
//!    master LP of the 1D planner, and cut as often as the LP says (rounded down, again on what
//!    is left); the parts left are rebuilt sheet by sheet as below, each sheet opened with the
//!    plan's fullest arrangement of big parts where the parts left hold it whole and it holds
//!    more big-part area than the share's first fit (`patterns::fuller_opening`).
//! 1. **A share.** A new sheet starts from its share of every part: the part's copies left
//!    times the fraction of the parts' area the sheet can hold (`Quota`), rounded up, so big
//!    and small parts spread over the sheets as they do along a strip; a kind expected less
//!    than once on the sheet, in a pool where some kind is expected once or more, is drawn
//!    with that probability (from the seed), so that the first sheets do not all take one
//!    (not an assembly's parts, nor parts above the pool's lowest priority). The pool, and so
//!    every first fit, puts the longest parts first (`ORDER`): a sheet's free rows only
//!    shorten as it fills.
//! 2. **Insert**: the share is first-fitted into the sheet (in `FIRST_FIT_TRIES` orders, the
//!    pool's and shuffled ones, the fullest kept); then the first part of it left in
//!    the pool's order (the longest) is inserted where it overlaps least and the local search
//!    moves the sheet's parts until nothing overlaps (or gives up, and it is taken out again).
//!    Kinds refused are retried with more rounds. A share placed whole lets the rest of the
//!    pool in. (An earlier step first compacted the share in the sheet and two more behind
//!    walls and kept what ended on the first: no better at 60 s, worse at 10 and 30 s, where
//!    it took the time the insertions need; benches/history/multi-sheet.md.)
//! 3. **Repeat** a finished layout while the parts left allow it, as RepeatPreference asks.
//! 4. **Empty the last sheet** into the others (the rebuild's, or the construction's when that
//!    ranks better: on jobs of distinct parts a sheet's share is the whole pool and the
//!    construction's first fit can be the denser). First (`PAIR_SHARE` of the time) the
//!    emptiest full sheets, up to `MAX_PAIRS`, are each **rebuilt with the last sheet**
//!    (`rebuild_with_last`): the two sheets' parts nested anew on the full sheet, the last
//!    sheet's parts first, what it leaves going onto the last sheet, kept where that leaves
//!    the last sheet costing less. Then passes over the other sheets, the emptiest
//!    first, each **pressing** the sheet (`press`: the strip search shortens its used length, so
//!    its free room becomes one region at its end, where a long part finds a row, instead of
//!    gaps between its parts) and then inserting the last sheet's parts. When a pass moves
//!    nothing, **swaps**: a part of the last sheet goes onto another sheet and pushes smaller
//!    parts off it (those still in its way after the local search, or a ruin and recreate of
//!    the sheet's small parts around it), and what it pushed off is first-fitted into the gaps
//!    of every sheet. So a big part that fits no gap trades places with small ones that do;
//!    each swap leaves smaller parts on the last sheet, so the swaps end, and the state whose
//!    last sheet is shortest stands (`LastSheet`: a first fit's used length, then the part
//!    area). A last sheet left empty is gone. A light last sheet lends up to half of its
//!    compaction time to this (`LENT_SHARE`) while it pays.
//!
//! Sheets are minimised first, then the last sheet's used length (its compaction follows in
//! `engine::nest`). Parts move between sheets that are already open (a swap's small parts go
//! to the last sheet) and every sheet is opened by the construction's rules (`SheetOpener`:
//! sheet priority, quantities, MaximumDifferentSheetSizes), so those rules hold; a rebuild that
//! is no better than the construction (or that a sheet rule leaves with a part and no sheet) is
//! dropped. Jobs with assemblies make no swaps (a swap does not keep kits whole), nor do jobs
//! that ask for repeated layouts (a swap makes one more distinct layout). Every thread works the
//! same sheet with its own seed and its own overlap measure (`ThreadMeasures`) and the sheet
//! holding the most part area wins (the lowest thread on ties); an iteration budget is shared
//! out by counts alone, so it gives the same sheets on every run.

use super::engine::{
    no_deadline, sort_for_placing, FilledSheet, Item, PlacingOrder, Resolution, SheetOpener,
    MAX_COMPACTED_PARTS,
};
use super::kits::keep_whole;
use super::model::{Problem, RepeatPreference};
use super::rng::Rng;
use super::search::{least_overlap_pose, Budget, Compactor, Oriented, Pose};
use crate::cancel::CancelHandle;
use kerf_kernels::{Evaluator, Shape};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

mod patterns;
mod sets;

/// First fits tried for each rebuilt sheet's share, in shuffled orders (`SheetOpener::open_best`),
/// and the most of the densifying time left that they may spend. Measured against one (the
/// share in pool order), `kerf bench sheets`, seed 1, this 2-core machine: all fourteen at 10 s,
/// 90 sheets and 82.40 sheet equivalents against 89 and 82.01 (shapes1_x3 7 -> 6; shirts_x2's
/// first fits held 60 to 69 % of a sheet in pool order and 62 to 76 % at best of 32, and it
/// ended on 8 sheets either way); six at 60 s, 36.02 sheet equivalents both ways.
const FIRST_FIT_TRIES: usize = 32;
const FIRST_FIT_SPEND: f64 = 0.03;

/// How the time left after the construction is shared out: densifying every sheet but the last,
/// emptying the last sheet into the others, and (the rest) compacting the last sheet
/// (`engine::compact_last_sheet`).
#[derive(Clone, Copy, Debug)]
struct TimeShares {
    densify: f64,
    empty: f64,
}

impl TimeShares {
    /// The shares for a job whose construction took `sheets` sheets. A job of `MANY_SHEETS` or
    /// more gives the rebuild more (0.7 against 0.5) and the emptying and the last sheet's
    /// compaction less (0.2 and 0.1 against 0.35 and 0.15): the rebuild's time is spread over
    /// every sheet, the compaction's spent on one (trousers_x8 at 10 s: 0.16 to 0.30 s for
    /// each pattern and rebuilt sheet, about 4 s for compacting the last sheet alone; 29, 29
    /// and 28 sheets at seeds 1 to 3 against 27, 26 and 28 with these shares;
    /// benches/history/multi-sheet.md, large jobs).
    fn for_sheets(sheets: usize) -> Self {
        if sheets >= MANY_SHEETS {
            Self {
                densify: 0.7,
                empty: 0.2,
            }
        } else {
            Self {
                densify: 0.5,
                empty: 0.35,
            }
        }
    }

    /// The multi-sheet search's share (`SheetSearch::improve`): densifying and emptying.
    fn search(self) -> f64 {
        self.densify + self.empty
    }
}

/// Share of the densifying time for nesting a sheet of whole sets (`sets`): where it fits, the
/// job needs no more sheets than its area at `sets::SET_DENSITY`, and the rest of the time has
/// little left to win. dagli_x4 at 60 s fitted at 1 of seeds 1 and 2 with 0.4 (0.2 to 0.3 %
/// too long at seed 2) and at all of seeds 1 to 3 with 0.6 and a fourth pressing phase.
const SET_SHARE: f64 = 0.6;
/// Sheets in the construction from which a job counts as large for `TimeShares`.
const MANY_SHEETS: usize = 8;
/// Share of the densifying time for generating patterns, in a job planned by patterns (each
/// pattern takes as long as a rebuilt sheet: about this share of the sheets are patterns).
const PATTERN_SHARE: f64 = 0.5;
/// How full the last of the sheets the parts left would fill must be for it to get a densifying
/// slice of its own (`densified_sheets`), as a share of a sheet at the best utilisation so far.
const LAST_SHEET_SLICE_FILL: f64 = 0.5;
/// Share of the last sheet's compaction time that emptying it may borrow when the last sheet
/// is empty (scaled down as it fills: a full last sheet lends nothing).
const LENT_SHARE: f64 = 0.5;
/// The search's raster resolution, as a fraction of the final cells per part: every insertion
/// costs a local search over the whole sheet, four times cheaper at half the resolution, for
/// about half a point of utilisation (the last sheet is compacted at the full resolution).
pub(super) const SEARCH_RESOLUTION: f64 = 0.5;
/// Local-search rounds an insertion may take to make room for its part before it gives up (the
/// first time; each retry of every refused kind doubles them, `Slice::retries` times at most).
const INSERT_ROUNDS: u64 = 60;
const MAX_RETRIES: u32 = 3;
/// The retries of an emptying pass (passes repeat, each after a swap).
const EMPTYING_RETRIES: u32 = 1;
/// Emptying passes under an iteration budget, which shares its rounds out among them.
const BUDGETED_PASSES: u64 = 4;
/// Passes in a row that empty nothing before emptying the last sheet stops.
const MAX_IDLE_PASSES: u32 = 2;
/// Share of the emptying time, at its start, for rebuilding the emptiest full sheets together
/// with the last one (`SheetSearch::rebuild_with_last`), and how many such sheets at most.
/// Measured against none, `kerf bench sheets --time 60`, this 2-core machine: the fourteen at
/// seed 1, 85 sheets both ways, 78.42 sheet equivalents against 78.81 (0.5 of the time:
/// 78.78, the emptying passes left too little); ten of them at seed 2, trousers_x2 6 sheets
/// against 7 (its bar), the rest the same counts; four at seed 3, the same counts, swim_x3
/// 6.47 sheet equivalents against 6.38 (benches/history/multi-sheet.md).
const PAIR_SHARE: f64 = 0.3;
const MAX_PAIRS: usize = 3;
/// Share of a sheet's slice in an emptying pass for pressing it (the rest inserts parts).
const PRESS_SHARE: f64 = 0.5;
/// Share of what is left of a sheet's slice for pressing it each time every kind tried on it was
/// refused, before they are all tried again with more rounds: the press gathers the free room
/// left between parts into one region at the sheet's end, where the next insertion's start and
/// its local search find it (benches/history/multi-sheet.md, issue 14, twenty-fourth session).
const REFUSED_PRESS_SHARE: f64 = 0.3;
/// The order of the pool, and so of each sheet's first fit: the longest parts first, while the
/// sheet being built still has long free rows (`PlacingOrder::LongestSide`).
const ORDER: PlacingOrder = PlacingOrder::LongestSide;

/// What the multi-sheet search works with.
pub(super) struct SheetSearch<'a> {
    pub problem: &'a Problem,
    pub eval: &'a dyn Evaluator,
    pub cancel: &'a CancelHandle,
    pub threads: usize,
}

/// A time and round budget for one piece of the search. Rounds (local-search strikes) make an
/// iteration budget deterministic; the deadline always holds.
#[derive(Clone, Copy)]
struct Slice {
    deadline: Instant,
    rounds: Option<u64>,
    /// How often every refused kind is tried again, each time with twice the rounds.
    retries: u32,
    /// Whether the sheet is pressed before each such retry (`REFUSED_PRESS_SHARE`): not for a
    /// pattern (`patterns`), where it cost shapes1_x5 a sheet at two seeds.
    press_refused: bool,
}

impl Slice {
    /// The search budget of this slice: its deadline and rounds, with the job's cancel flag and
    /// the caller's `stop`.
    fn budget<'a>(&self, cancel: &'a CancelHandle, stop: &'a AtomicBool) -> Budget<'a> {
        Budget {
            deadline: self.deadline,
            cancel: cancel.flag(),
            stop,
            max_rounds: self.rounds,
        }
    }

    /// Where a press to fit within `end` may stop (`press_until`): once it reaches `end`, or,
    /// under an iteration budget, never before its rounds run out (a press stopped as soon as
    /// one thread fits would end the other thread's search wherever the clock left it).
    fn stop_at(&self, end: f64) -> f64 {
        if self.rounds.is_some() {
            f64::NEG_INFINITY
        } else {
            end
        }
    }

    /// The first `share` of this slice: of the time left until its deadline, and of its rounds.
    fn first(self, share: f64) -> Slice {
        let left = self.deadline.saturating_duration_since(Instant::now());
        Slice {
            deadline: Instant::now() + left.mul_f64(share),
            rounds: self.rounds.map(|r| (r as f64 * share).ceil() as u64),
            ..self
        }
    }
}

impl SheetSearch<'_> {
    /// Inserts `items` into `sheet` one after the other, each where it overlaps least and the
    /// local search making room for it (`insert`, `INSERT_ROUNDS` rounds each, until
    /// `deadline`): whether all went in. The sheet is unchanged unless they all did; none is
    /// tried when they hold more area than the sheet has free.
    pub(super) fn insert_all(
        &self,
        sheet: &mut FilledSheet,
        items: &[Item],
        deadline: Instant,
        seed: u64,
    ) -> bool {
        let sheet_area = self.problem.sheets[sheet.sheet].area();
        if self.area_of(items) > sheet_area - sheet.part_area(self.problem) {
            return false;
        }
        let stop = AtomicBool::new(false);
        let mut trial = sheet.clone();
        for (n, &item) in items.iter().enumerate() {
            let budget = Budget {
                deadline,
                cancel: self.cancel.flag(),
                stop: &stop,
                max_rounds: Some(INSERT_ROUNDS),
            };
            let seed = seed.wrapping_add(n as u64 * 0x2545_f491);
            if !self.insert(&mut trial, item, &budget, seed, 0).0 {
                return false;
            }
        }
        *sheet = trial;
        true
    }

    /// Rebuilds the construction's sheets (all but the last compacted later) within its share
    /// (`TimeShares`) of the time left before `compaction_end`, the end of the time limit, which
    /// also bounds the time a light last sheet lends to emptying it (`LENT_SHARE`); the rest is
    /// the last sheet's compaction. `None` when the rebuilt sheets are no better than the
    /// construction (or a sheet rule left a part without a sheet): the caller keeps the
    /// construction.
    pub(super) fn improve(
        &self,
        construction: &[FilledSheet],
        res: &Resolution,
        compaction_end: Instant,
    ) -> Option<Vec<FilledSheet>> {
        if construction.len() < 2 {
            return None;
        }
        let s = &self.problem.settings;
        let t0 = Instant::now();
        let n0 = construction.len();
        let shares = TimeShares::for_sheets(n0);
        let left = compaction_end.saturating_duration_since(t0);
        let densify_end = t0 + left.mul_f64(shares.densify);
        let deadline = t0 + left.mul_f64(shares.search());
        // an iteration budget is shared out by counts alone, never by the clock
        let densify_rounds = s
            .max_iterations
            .map(|m| ((m as f64 * shares.densify) / (n0 - 1) as f64).ceil() as u64 + 1);
        let empty_rounds = s
            .max_iterations
            .map(|m| ((m as f64 * shares.empty) / (n0 - 1) as f64).ceil() as u64 + 1);

        let mut opener = SheetOpener::new(self.problem, res);
        let mut pool: Vec<Item> = construction
            .iter()
            .flat_map(|f| f.placed.iter().map(|(i, _)| *i))
            .filter(|i| !i.is_filler)
            .collect();
        sort_for_placing(self.problem, &mut pool, ORDER);

        let mut done: Vec<FilledSheet> = Vec::new();
        let mut best_utilisation: f64 = 0.0;
        let mut openings: Vec<FilledSheet> = Vec::new();
        // every sheet cut from one layout of whole sets, none left over (`sets`)
        let mut whole_sets = false;
        if self.suits_repeated_layouts(&pool) {
            // a job of whole sets: one layout of as many as a sheet holds, cut for every full
            // sheet (`sets`), where it fits
            let window = densify_end.saturating_duration_since(Instant::now());
            let slice = Slice {
                deadline: Instant::now() + window.mul_f64(SET_SHARE),
                rounds: densify_rounds,
                retries: 0,
                press_refused: false,
            };
            let on = emptied(&construction[0]);
            done = self.plan_by_sets(&mut pool, &mut opener, &on, res, n0, slice);
            whole_sets = !done.is_empty() && pool.is_empty();
            for d in &done {
                best_utilisation = best_utilisation.max(self.utilisation(d));
            }
        }
        if done.is_empty() && self.suits_patterns(&pool, n0) {
            // a plan by patterns first (`patterns`): its sheets are cut from patterns the LP
            // mixes, and the parts it leaves are rebuilt sheet by sheet below
            let window = densify_end.saturating_duration_since(Instant::now());
            let budget = patterns::PatternBudget {
                per_pattern: window.div_f64(n0 as f64),
                end: Instant::now() + window.mul_f64(PATTERN_SHARE),
                patterns: (n0 as f64 * PATTERN_SHARE).ceil() as usize,
                rounds: densify_rounds,
            };
            let plan = self.plan_by_patterns(&mut pool, &mut opener, &budget, deadline);
            (done, openings) = (plan.sheets, plan.openings);
            for d in &done {
                best_utilisation = best_utilisation.max(self.utilisation(d));
            }
        }
        while !pool.is_empty() {
            let densifying = Instant::now() < densify_end && !self.cancel.is_cancelled();
            let current = if densifying {
                // the sheet starts from its fair share of every part, so that each sheet gets
                // the mix of big and small parts that packs densely (biggest-first on the
                // whole pool would leave the later sheets only the parts that pack worst)
                let si = opener.next_sheet()?;
                let mut quota = Quota::share(
                    self.problem,
                    &pool,
                    self.problem.sheets[si].area() * best_utilisation.max(EXPECTED_UTILISATION)
                        / 100.0,
                    // (a stream of its own: the first fits below draw from another)
                    &mut Rng::new(
                        s.seed
                            .wrapping_add(done.len() as u64 * 0x9e37_79b9)
                            .wrapping_add(17),
                    ),
                );
                let mut share = quota.take(&pool);
                // several first fits of the share, in shuffled orders: the start that holds
                // the most (all of them under an iteration budget, so runs repeat)
                let spend = if s.max_iterations.is_some() {
                    deadline
                } else {
                    let left = densify_end.saturating_duration_since(Instant::now());
                    Instant::now() + left.mul_f64(FIRST_FIT_SPEND)
                };
                let mut rng = Rng::new(s.seed.wrapping_add(done.len() as u64 * 0x2545_f491));
                let sheet = opener.open_best(
                    self.eval,
                    &mut share,
                    FIRST_FIT_TRIES,
                    &mut rng,
                    spend,
                    deadline,
                )??;
                // after a plan, its leftover big parts as its fullest opening holds them
                let sheet = patterns::fuller_opening(self.problem, sheet, &openings, &pool);
                pool.retain(|i| !sheet.placed.iter().any(|(p, _)| p.same_unit(i)));
                quota.placed(&sheet.placed);
                let sheets_left = self.sheets_needed(&sheet, &pool, best_utilisation);
                let left = densify_end.saturating_duration_since(Instant::now());
                let slice = Slice {
                    deadline: Instant::now() + left.div_f64(sheets_left.max(1) as f64),
                    rounds: densify_rounds,
                    retries: MAX_RETRIES,
                    press_refused: true,
                };
                let mut dense =
                    self.densify(sheet, &mut pool, Some(quota), slice, done.len() as u64);
                keep_whole(
                    self.problem,
                    self.eval,
                    &mut dense,
                    &[],
                    &mut pool,
                    deadline,
                    ORDER,
                );
                if dense.placed.is_empty() {
                    // every part it kept broke a kit: no rebuild (never seen; a guard)
                    return None;
                }
                dense
            } else {
                // out of time to densify: first-fit the rest (a deadline passed here drops the
                // rebuild, and the construction stands)
                opener.open(self.eval, &mut pool, deadline)??
            };
            let u = self.utilisation(&current);
            best_utilisation = best_utilisation.max(u);
            let repeats = if pool.is_empty() {
                0
            } else {
                self.repeats(&current, &pool, u, best_utilisation, &opener)
            };
            for _ in 0..repeats {
                let copy = copy_layout(&current, &mut pool);
                debug_assert_eq!(copy.placed.len(), current.placed.len(), "repeats counted");
                opener.take(copy.sheet);
                done.push(copy);
            }
            done.push(current);
        }

        // the rebuild's sheets may hold less than the construction's first fit (jobs of
        // distinct parts, where every sheet's share is the whole pool: gardeyn3_x1,
        // benches/history/multi-sheet.md): the better of the two is emptied
        if self.rank(construction) < self.rank(&done) {
            tracing::debug!("emptying the construction's last sheet");
            done = construction.to_vec();
            whole_sets = false;
        }
        // a last sheet holding little needs little compaction: it lends that time to emptying
        let lent = done.last().map_or(0.0, |l| {
            LENT_SHARE * (1.0 - self.utilisation(l) / 100.0).clamp(0.0, 1.0)
        });
        let empty_end = deadline
            + compaction_end
                .saturating_duration_since(deadline)
                .mul_f64(lent);
        // (sheets all cut from one layout of whole sets, as many as a sheet holds: the last is
        // as full as the others, which have no room for it, and pressing them to try would
        // only make their layouts differ)
        if !whole_sets {
            // first the emptiest full sheets rebuilt with the last one (under an iteration
            // budget, each with the rounds of a sheet's emptying pass, and no clock)
            let pairs_end = if empty_rounds.is_some() {
                deadline
            } else {
                let window = deadline.saturating_duration_since(Instant::now());
                Instant::now() + window.mul_f64(PAIR_SHARE)
            };
            self.rebuild_with_last(&mut done, pairs_end, empty_rounds);
            self.empty_last(&mut done, (deadline, empty_end), empty_rounds);
        }
        let better = self.rank(&done) < self.rank(construction);
        tracing::info!(
            construction = construction.len(),
            rebuilt = done.len(),
            seconds = t0.elapsed().as_secs_f64(),
            "multi-sheet search"
        );
        better.then_some(done)
    }

    /// What the search minimises, in order: sheets; distinct layouts when RepeatPreference asks
    /// for repeats; the part area left on the last sheet. (Not `LastSheet`'s first-fit length:
    /// the construction's last sheet may lie on another raster, or be another sheet type, than
    /// the rebuild's, and a first fit's length on each is no fair comparison.)
    fn rank(&self, sheets: &[FilledSheet]) -> (usize, usize, f64) {
        let distinct = if self.problem.settings.repeat == RepeatPreference::None {
            0
        } else {
            distinct_layouts(sheets)
        };
        let last = sheets.last().map_or(0.0, |l| l.part_area(self.problem));
        (sheets.len(), distinct, last)
    }

    /// Whether a job's pool may be cut as layouts repeated on many sheets (patterns, sets): one
    /// sheet type, as many sheets as needed (a layout fits every one), no assemblies (a layout
    /// need not hold whole kits) and one part priority (none waits for another's sheets).
    fn suits_repeated_layouts(&self, pool: &[Item]) -> bool {
        let p = self.problem;
        p.sheets.len() == 1
            && p.sheets[0].quantity.is_none()
            && !p.has_kits()
            && pool
                .iter()
                .all(|i| p.parts[i.part].priority == p.parts[pool[0].part].priority)
    }

    /// Sheets the current sheet and the pool would fill at the best utilisation reached so far
    /// (the current sheet's first fit's before any, at least 1 %): how many slices the
    /// densifying time left is cut into (`densified_sheets`: a last sheet at most
    /// `LAST_SHEET_SLICE_FILL` full gets none).
    fn sheets_needed(&self, current: &FilledSheet, pool: &[Item], utilisation: f64) -> usize {
        let area = current.part_area(self.problem) + self.area_of(pool);
        let u = if utilisation > 0.0 {
            utilisation
        } else {
            self.utilisation(current).max(1.0)
        };
        let per_sheet = self.problem.sheets[current.sheet].area() * u / 100.0;
        densified_sheets(area / per_sheet)
    }

    /// One part's area.
    fn item_area(&self, item: &Item) -> f64 {
        self.problem.parts[item.part].geometry.area()
    }

    /// The parts' area, summed.
    fn area_of(&self, items: &[Item]) -> f64 {
        items.iter().map(|i| self.item_area(i)).sum()
    }

    /// Part area over sheet area, in percent.
    fn utilisation(&self, sheet: &FilledSheet) -> f64 {
        100.0 * sheet.part_area(self.problem) / self.problem.sheets[sheet.sheet].area()
    }

    /// Makes one sheet denser with parts from `pool` (those it takes leave the pool): each
    /// thread alternates compaction and refilling with its own seed; the densest sheet wins.
    fn densify(
        &self,
        sheet: FilledSheet,
        pool: &mut Vec<Item>,
        quota: Option<Quota>,
        slice: Slice,
        salt: u64,
    ) -> FilledSheet {
        // (the bound is on the sheet's parts, which an insertion compacts, not on the pool: a
        // job of 2,500 parts or more used to skip densifying its first sheets entirely)
        if !takes_insertions(&sheet) {
            return sheet;
        }
        let outcomes: Vec<(f64, FilledSheet, Vec<Item>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.threads)
                .map(|t| {
                    let (sheet, pool, quota) = (sheet.clone(), pool.clone(), quota.clone());
                    let seed = self
                        .problem
                        .settings
                        .seed
                        .wrapping_add(salt.wrapping_mul(0x9e37_79b9))
                        .wrapping_add(t as u64 * 7919);
                    scope.spawn(move || self.densify_one(sheet, pool, quota, slice, seed, t))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    let (sheet, pool) = h.join().expect("densify thread panicked");
                    (sheet.part_area(self.problem), sheet, pool)
                })
                .collect()
        });
        let mut best: Option<(f64, FilledSheet, Vec<Item>)> = None;
        for o in outcomes {
            if best.as_ref().is_none_or(|b| o.0 > b.0 + 1e-9) {
                best = Some(o);
            }
        }
        let (area, sheet, rest) = best.expect("at least one thread");
        tracing::debug!(
            sheet = sheet.sheet,
            utilisation = 100.0 * area / self.problem.sheets[sheet.sheet].area(),
            parts = sheet.placed.len(),
            "densified"
        );
        *pool = rest;
        sheet
    }

    /// One thread's densification. Parts are first-fitted where room is left; then the first
    /// part left in the pool's order (`ORDER`: the longest; of a kind not refused yet) is
    /// inserted where it overlaps least and the guided local search moves the sheet's parts
    /// until nothing overlaps, or gives up, and the part is taken back out. While the sheet has
    /// a share, only the share's parts are tried; once no kind of the share is left to try
    /// (all on the sheet, refused, or too big for the room left), the whole pool
    /// (benches/history/multi-sheet.md, large jobs: before the fifteenth session a refused share
    /// ended the densification). When every kind tried was refused, the sheet is pressed
    /// (`REFUSED_PRESS_SHARE` of its time left) and they are all tried again with more rounds.
    fn densify_one(
        &self,
        mut sheet: FilledSheet,
        mut pool: Vec<Item>,
        mut quota: Option<Quota>,
        slice: Slice,
        seed: u64,
        thread: usize,
    ) -> (FilledSheet, Vec<Item>) {
        let problem = self.problem;
        let sheet_area = problem.sheets[sheet.sheet].area();
        let mut rounds_used = 0u64;
        let mut refused: Vec<usize> = Vec::new();
        let mut insert_rounds = INSERT_ROUNDS;
        let mut seed = seed;
        let stop = AtomicBool::new(false);
        loop {
            if self.cancel.is_cancelled()
                || Instant::now() >= slice.deadline
                || slice.rounds.is_some_and(|r| rounds_used >= r)
            {
                break;
            }
            // first-fit what fits as the sheet stands
            let mut candidates = match &quota {
                Some(q) => q.take(&pool),
                None => pool.clone(),
            };
            let before = sheet.placed.len();
            sheet.refill(self.eval, &mut candidates, slice.deadline);
            let new: Vec<Item> = sheet.placed[before..].iter().map(|(i, _)| *i).collect();
            if let Some(q) = &mut quota {
                q.placed(&sheet.placed[before..]);
            }
            pool.retain(|i| !new.iter().any(|p| p.same_unit(i)));

            let free = sheet_area - sheet.part_area(self.problem);
            let next = candidates
                .iter()
                .copied()
                .find(|i| !refused.contains(&i.part) && self.item_area(i) <= free);
            let Some(item) = next else {
                if quota.take().is_some() {
                    // the share's kinds are all on the sheet, refused or too big for the room
                    // left: the rest of the pool may still fit (a rare kind drawn out of this
                    // sheet's share reaches it only this way)
                    continue;
                }
                if refused.is_empty() || insert_rounds >= INSERT_ROUNDS << slice.retries {
                    break;
                }
                // every kind was refused: press the sheet (where the slice asks for it), then
                // try them all again, each with more rounds (under an iteration budget the press
                // takes an insertion's rounds, counted as the insertions' are)
                if slice.press_refused {
                    let left = slice.deadline.saturating_duration_since(Instant::now());
                    let budget = Budget {
                        deadline: Instant::now() + left.mul_f64(REFUSED_PRESS_SHARE),
                        cancel: self.cancel.flag(),
                        stop: &stop,
                        max_rounds: slice
                            .rounds
                            .map(|r| r.saturating_sub(rounds_used).min(INSERT_ROUNDS)),
                    };
                    rounds_used += self.press_alone(&mut sheet, &budget, seed, thread);
                }
                refused.clear();
                insert_rounds *= 2;
                continue;
            };
            let budget = Budget {
                deadline: slice.deadline,
                cancel: self.cancel.flag(),
                stop: &stop,
                max_rounds: Some(
                    slice
                        .rounds
                        .map_or(insert_rounds, |r| (r - rounds_used).min(insert_rounds)),
                ),
            };
            seed = seed.wrapping_add(0x2545_f491);
            let t = Instant::now();
            let (inserted, rounds) = self.insert(&mut sheet, item, &budget, seed, thread);
            tracing::debug!(
                part = item.part,
                inserted,
                rounds,
                parts = sheet.placed.len(),
                seconds = t.elapsed().as_secs_f64(),
                "insertion"
            );
            rounds_used += rounds.max(1);
            if inserted {
                if let Some(q) = &mut quota {
                    q.placed(&sheet.placed[sheet.placed.len() - 1..]);
                }
                pool.retain(|i| !i.same_unit(&item));
            } else {
                refused.push(item.part);
            }
        }
        (sheet, pool)
    }

    /// The sheet's parts' orientation lists and poses, with `item` added last where it overlaps
    /// least (`None` when it has no pose on the sheet, or the sheet holds too many parts to
    /// compact with one more: every insertion, plain or evicting, starts here).
    fn with_item_added<'s>(
        &self,
        sheet: &'s FilledSheet,
        item: Item,
    ) -> Option<(Vec<&'s [Oriented]>, Vec<Pose>)> {
        if !takes_insertions(sheet) {
            return None;
        }
        let orients = sheet.table[item.part].as_slice();
        let mut lists = sheet.orientation_lists();
        let mut poses = sheet.poses();
        let placed: Vec<Shape> = lists
            .iter()
            .zip(&poses)
            .map(|(o, p)| Shape {
                raster: &o[p.orient].raster,
                x: p.gx,
                y: p.gy,
            })
            .collect();
        let pose = least_overlap_pose(self.eval, &sheet.area, &placed, orients)?;
        lists.push(orients);
        poses.push(pose);
        Some((lists, poses))
    }

    /// Inserts `item` where it overlaps least and lets the guided local search separate every
    /// part on the sheet. On success the sheet holds the new layout; on failure it is unchanged.
    /// Returns whether it succeeded and the local-search rounds spent.
    fn insert(
        &self,
        sheet: &mut FilledSheet,
        item: Item,
        budget: &Budget,
        seed: u64,
        thread: usize,
    ) -> (bool, u64) {
        // (an insertion past its deadline would still find its start: a ruin and recreate
        // inserting its small parts one by one after the deadline ran a 10 s trousers_x8 job 1 s
        // over its limit while a start took 0.05 s, before `least_overlap_pose` scanned lines)
        if budget.past_deadline() {
            return (false, 0);
        }
        let Some((lists, poses)) = self.with_item_added(sheet, item) else {
            return (false, 0);
        };
        let pose = *poses.last().expect("the item's pose");
        let moves = self.problem.settings.move_set(thread);
        let mut c = Compactor::new(self.eval, &sheet.area, lists, poses, seed, moves);
        let ok = c.total_overlap() == 0 || c.separate_in_place(budget);
        let rounds = c.rounds();
        if ok {
            let poses = c.poses().to_vec();
            sheet.placed.push((item, pose));
            for ((_, p), q) in sheet.placed.iter_mut().zip(poses) {
                *p = q;
            }
        }
        (ok, rounds)
    }

    /// An insertion that may push smaller parts out, so that `item` leaves the last sheet for
    /// smaller parts (of at most `EVICT_RATIO` of its area together). Two ways, the cheaper first:
    /// - `item` goes where it overlaps least and the local search makes room for it as in
    ///   `insert`; where it cannot, the parts still in the way come off
    ///   (`Compactor::eviction`), from the start pose or from where the search ended,
    ///   whichever takes off less area;
    /// - ruin and recreate: the sheet's parts under `RUIN_RATIO` of the item's area come
    ///   off, the item is inserted among the bigger ones, and the small parts go back (first
    ///   fit, then insertions); those that find no room come off.
    ///
    /// `Some(parts taken off)` (empty when room was made) with the sheet holding the new layout;
    /// `None` leaves it unchanged.
    fn insert_evicting(
        &self,
        sheet: &mut FilledSheet,
        item: Item,
        budget: &Budget,
        seed: u64,
    ) -> Option<Vec<Item>> {
        if budget.past_deadline() {
            return None; // (as in `insert`)
        }
        let limit = EVICT_RATIO * self.item_area(&item);
        self.insert_pushing(sheet, item, budget, seed, limit)
            .or_else(|| self.ruin_and_recreate(sheet, item, budget, seed, limit))
    }

    /// `insert_evicting`'s first way: insert, then take off what is still in the way.
    fn insert_pushing(
        &self,
        sheet: &mut FilledSheet,
        item: Item,
        budget: &Budget,
        seed: u64,
        limit: f64,
    ) -> Option<Vec<Item>> {
        let (lists, poses) = self.with_item_added(sheet, item)?;
        let mut items: Vec<Item> = sheet.placed.iter().map(|(i, _)| *i).collect();
        items.push(item);
        let new = items.len() - 1;
        let area_of = |k: usize| self.item_area(&items[k]);
        let moves = self.problem.settings.move_set(0);
        let mut c = Compactor::new(self.eval, &sheet.area, lists, poses.clone(), seed, moves);
        let at_start = c.eviction(new, area_of).map(|out| (poses, out));
        let (poses, out) = if c.total_overlap() == 0 || c.separate_in_place(budget) {
            (c.poses().to_vec(), Vec::new())
        } else {
            let at_end = c
                .eviction(new, area_of)
                .map(|out| (c.poses().to_vec(), out));
            let taken_off = |o: &Option<(Vec<Pose>, Vec<usize>)>| {
                o.as_ref().map_or(f64::INFINITY, |(_, out)| {
                    out.iter().map(|&k| area_of(k)).sum()
                })
            };
            let best = if taken_off(&at_end) < taken_off(&at_start) {
                at_end
            } else {
                at_start
            };
            if taken_off(&best) > limit {
                return None;
            }
            let (poses, out) = best?;
            // only smaller parts give way, so the last sheet's parts get smaller with every swap,
            // and none that should be nested before the item (a higher part priority)
            if out
                .iter()
                .any(|&k| area_of(k) >= area_of(new) || !self.may_give_way(items[k], item))
            {
                return None;
            }
            (poses, out)
        };
        let mut kept = Vec::with_capacity(items.len());
        let mut evicted = Vec::with_capacity(out.len());
        for (k, (it, p)) in items.into_iter().zip(poses).enumerate() {
            if out.binary_search(&k).is_ok() {
                evicted.push(it);
            } else {
                kept.push((it, p));
            }
        }
        sheet.placed = kept;
        Some(evicted)
    }

    /// Whether `part` may be pushed onto the last sheet to make room for `item`: not when it
    /// has the higher part priority (it is nested first).
    fn may_give_way(&self, part: Item, item: Item) -> bool {
        self.problem.parts[part.part].priority <= self.problem.parts[item.part].priority
    }

    /// Whether a ruin and recreate for `item` takes `part` off: smaller than `RUIN_RATIO` of the
    /// item's area, and free to give way (`may_give_way`).
    fn gives_way(&self, part: &Item, item: &Item) -> bool {
        self.item_area(part) < RUIN_RATIO * self.item_area(item) && self.may_give_way(*part, *item)
    }

    /// `insert_evicting`'s second way: small parts off, the item in, the small parts back.
    fn ruin_and_recreate(
        &self,
        sheet: &mut FilledSheet,
        item: Item,
        budget: &Budget,
        seed: u64,
        limit: f64,
    ) -> Option<Vec<Item>> {
        let mut trial = sheet.clone();
        let (back, kept): (Vec<(Item, Pose)>, Vec<(Item, Pose)>) = trial
            .placed
            .iter()
            .partition(|(i, _)| self.gives_way(i, &item));
        if back.is_empty() {
            return None;
        }
        trial.placed = kept;
        if !self.insert(&mut trial, item, budget, seed, 0).0 {
            tracing::debug!(
                part = item.part,
                "ruin and recreate: no room among the big parts"
            );
            return None;
        }
        let mut pool: Vec<Item> = back.into_iter().map(|(i, _)| i).collect();
        sort_for_placing(self.problem, &mut pool, ORDER);
        trial.refill(self.eval, &mut pool, budget.deadline);
        let mut out: Vec<Item> = Vec::new();
        for (n, it) in pool.into_iter().enumerate() {
            let (placed, _) =
                self.insert(&mut trial, it, budget, seed.wrapping_add(n as u64 + 1), 0);
            if !placed {
                out.push(it);
                if self.area_of(&out) > limit {
                    tracing::debug!(part = item.part, "ruin and recreate: too much left out");
                    return None;
                }
            }
        }
        *sheet = trial;
        Some(out)
    }

    /// How many copies of the sheet's layout to add now (RepeatPreference): as many as the parts
    /// left allow, when the layout is dense enough for the level, never the quantity a sheet
    /// type has left, and never so many that no part is left for the last sheet's own search.
    fn repeats(
        &self,
        sheet: &FilledSheet,
        pool: &[Item],
        utilisation: f64,
        best_utilisation: f64,
        opener: &SheetOpener,
    ) -> usize {
        let Some(floor) = repeat_floor(self.problem.settings.repeat, best_utilisation) else {
            return 0;
        };
        if utilisation < floor {
            return 0;
        }
        let mut need: Vec<(usize, usize)> = Vec::new();
        for (i, _) in &sheet.placed {
            match need.iter_mut().find(|(p, _)| *p == i.part) {
                Some(n) => n.1 += 1,
                None => need.push((i.part, 1)),
            }
        }
        let copies = need
            .iter()
            .map(|&(part, n)| pool.iter().filter(|i| i.part == part).count() / n)
            .min()
            .unwrap_or(0);
        copies.min(opener.quantity_left(sheet.sheet))
    }

    /// Moves the last sheet's parts onto the others (the emptiest first) by densifying each again
    /// with them as its pool; when a pass moves nothing, parts of the last sheet are swapped onto
    /// other sheets for smaller parts (`evict_into`), each swap followed by a first fit of what
    /// it pushed off into every sheet's gaps, until no swap is found; then the next pass. Every
    /// swap replaces a part of the last sheet by smaller ones, so the steps end; the state whose
    /// last sheet costs least (`LastSheet`) stands, and a last sheet left empty is dropped.
    /// `deadlines`: its own end, and the end of the time a light last sheet lends it, which it
    /// takes only while each pass lowers the last sheet's cost.
    fn empty_last(
        &self,
        done: &mut Vec<FilledSheet>,
        (own_end, deadline): (Instant, Instant),
        rounds: Option<u64>,
    ) {
        if done.len() < 2 {
            return;
        }
        let mut last = done.pop().expect("two sheets or more");
        let mut pool: Vec<Item> = last.placed.iter().map(|(i, _)| *i).collect();
        sort_for_placing(self.problem, &mut pool, ORDER);
        // an assembly's parts move only in whole kits, which a swap does not keep; and a swap
        // that does not empty the last sheet makes one more distinct layout, which
        // RepeatPreference asks to avoid
        let may_evict =
            !self.problem.has_kits() && self.problem.settings.repeat == RepeatPreference::None;
        let mut evictions = 0usize;
        // a swap may push off more area than it brings (smaller parts, which find room more
        // easily): the state whose last sheet costs least (`LastSheet`) is what stands
        let fresh = emptied(&last);
        let cost = |pool: &[Item]| self.last_sheet(&fresh, pool);
        let mut best: (LastSheet, Vec<FilledSheet>, Vec<Item>) =
            (cost(&pool), done.clone(), pool.clone());
        // the best state whose last sheet holds only its own parts (they keep their places, so
        // it always stands): what is left if the best cannot take the parts swapped onto it
        let mut best_own = best.clone();
        let own: Vec<Item> = pool.clone();
        let only_own = |pool: &[Item]| pool.iter().all(|p| own.iter().any(|o| o.same_unit(p)));
        // under an iteration budget, its rounds are shared over the passes (at most
        // `BUDGETED_PASSES`) and bound every swap's search as well
        let rounds = rounds.map(|r| (r / BUDGETED_PASSES).max(1));
        // each sheet's layout when it was last pressed
        let mut pressed: Vec<Option<Vec<(Item, Pose)>>> = vec![None; done.len()];
        // passes over the other sheets, the emptiest first, while a pass moves something
        let mut idle_passes = 0;
        for pass in 0u64.. {
            let order = self.emptiest_first(done);
            let at_start = pool.len();
            let area_at_start = self.area_of(&pool);
            let best_at_start = best.0;
            // a pass may take half the time left, so that swaps and the passes after them get
            // the rest
            let pass_end = if rounds.is_some() {
                deadline // counts, not the clock, share an iteration budget out
            } else {
                Instant::now() + deadline.saturating_duration_since(Instant::now()) / 2
            };
            for (n, &k) in order.iter().enumerate() {
                if pool.is_empty() || self.cancel.is_cancelled() || Instant::now() >= pass_end {
                    break;
                }
                let left = pass_end.saturating_duration_since(Instant::now());
                let slice = Slice {
                    deadline: Instant::now() + left.div_f64((order.len() - n) as f64),
                    rounds,
                    // passes repeat, and swaps between them change the sheets: one retry
                    retries: EMPTYING_RETRIES,
                    press_refused: true,
                };
                let salt = 1_000_003 + pass * 1009 + k as u64;
                // half of the sheet's slice presses it, so that its free room is one region at
                // its end (a first fit or the insertions leave it in gaps between parts, where
                // a long part finds no row); the rest densifies it with the last sheet's parts.
                // A sheet pressed before and unchanged since is not pressed again.
                let sheet = if pressed[k].as_ref() == Some(&done[k].placed) {
                    done[k].clone()
                } else {
                    let sheet = self.press(&done[k], slice.first(PRESS_SHARE), salt);
                    pressed[k] = Some(sheet.placed.clone());
                    sheet
                };
                let before: Vec<Item> = sheet.placed.iter().map(|(i, _)| *i).collect();
                done[k] = self.densify(sheet, &mut pool, None, slice, salt);
                keep_whole(
                    self.problem,
                    self.eval,
                    &mut done[k],
                    &before,
                    &mut pool,
                    deadline,
                    ORDER,
                );
            }
            tracing::debug!(
                pass,
                taken = at_start - pool.len(),
                left = pool.len(),
                "emptying the last sheet"
            );
            let moved = self.area_of(&pool) < area_at_start - 1e-9;
            let now = cost(&pool);
            if now.beats(&best.0) {
                best = (now, done.clone(), pool.clone());
                if only_own(&pool) {
                    best_own = best.clone();
                }
            }
            // nothing fits into the gaps as they are: make room by swapping parts of the last
            // sheet for smaller ones, each swap followed by a first fit of what it pushed off
            // into the gaps of every sheet, until no swap is found (the count is bounded, so an
            // iteration budget needs no clock)
            let mut swapped = false;
            let best_before_swaps = best.0;
            while !moved
                && !pool.is_empty()
                && may_evict
                && evictions < MAX_EVICTIONS
                && self.evict_into(
                    done,
                    &mut pool,
                    deadline,
                    rounds,
                    pass * 64 + evictions as u64,
                )
            {
                evictions += 1;
                swapped = true;
                for k in self.emptiest_first(done) {
                    if pool.is_empty() {
                        break;
                    }
                    done[k].refill(self.eval, &mut pool, deadline);
                }
                let now = cost(&pool);
                if now.beats(&best.0) {
                    best = (now, done.clone(), pool.clone());
                    if only_own(&pool) {
                        best_own = best.clone();
                    }
                } else if now.area > RUNAWAY * best.0.area {
                    // the swaps push off more than the gaps take: back to the best state, and
                    // no more swaps this pass
                    (*done, pool) = (best.1.clone(), best.2.clone());
                    swapped = false;
                    break;
                }
            }
            if swapped && !best.0.beats(&best_before_swaps) {
                // the swaps left more on the last sheet than before them: undone
                (*done, pool) = (best.1.clone(), best.2.clone());
                swapped = false;
            }
            // a pass that moved nothing may still be followed by one with other seeds, once
            idle_passes = if moved || swapped { 0 } else { idle_passes + 1 };
            // (never under an iteration budget, whose sheets must not depend on the clock)
            let lent_and_idle =
                rounds.is_none() && Instant::now() >= own_end && !best.0.beats(&best_at_start);
            if pool.is_empty()
                || idle_passes >= MAX_IDLE_PASSES
                || Instant::now() >= deadline
                || lent_and_idle
                || rounds.is_some_and(|_| pass + 1 >= BUDGETED_PASSES)
                || self.cancel.is_cancelled()
            {
                break;
            }
        }
        if pool.is_empty() {
            return;
        }
        (_, *done, pool) = best;
        // the parts still on it keep their places (taking parts off never makes an overlap);
        // parts swapped off other sheets are fitted around them, or the sheet is laid out anew
        let original = last.placed.clone();
        let (mut kept, mut moved_in): (Vec<Item>, Vec<Item>) = pool
            .iter()
            .partition(|p| last.placed.iter().any(|(i, _)| i.same_unit(p)));
        last.placed
            .retain(|(i, _)| kept.iter().any(|p| p.same_unit(i)));
        let soon = deadline.max(Instant::now() + std::time::Duration::from_secs(1));
        if !moved_in.is_empty() {
            last.refill(self.eval, &mut moved_in, soon);
        }
        if !moved_in.is_empty() {
            last.placed.clear();
            kept = pool.clone();
            last.refill(self.eval, &mut kept, soon);
            if !kept.is_empty() {
                // the swapped parts cannot all go onto the last sheet: the best state without any
                tracing::debug!(
                    left = kept.len(),
                    "swapped parts did not fit the last sheet"
                );
                (_, *done, pool) = best_own;
                last.placed = original;
                last.placed
                    .retain(|(i, _)| pool.iter().any(|p| p.same_unit(i)));
                done.push(last);
                return;
            }
        }
        done.push(last);
    }

    /// Rebuilds the emptiest full sheets, one at a time, together with the last sheet: the
    /// parts of both are nested anew on the full sheet (first fits in several orders, the
    /// fullest kept, then densified by insertions) and what it does not take goes onto the last
    /// sheet, kept where the last sheet then costs less (`LastSheet`). Emptying keeps a full
    /// sheet's parts where they lie and looks for room among them; a sheet left with the parts
    /// that pack worst has none, but the two sheets' parts together may hold a denser mix.
    /// Up to `MAX_PAIRS` sheets, each in an equal part of the time to `end`; a last sheet
    /// emptied by one is gone. Not in jobs with assemblies (kits move whole), nor where
    /// RepeatPreference asks for repeats (a rebuilt copy is one more distinct layout), nor for
    /// a pair whose parts differ in priority (a higher one must not move to the last sheet).
    fn rebuild_with_last(&self, done: &mut Vec<FilledSheet>, end: Instant, rounds: Option<u64>) {
        let n = done.len();
        if n < 2
            || self.problem.has_kits()
            || self.problem.settings.repeat != RepeatPreference::None
        {
            return;
        }
        let pairs = MAX_PAIRS.min(n - 1);
        let fresh = emptied(&done[n - 1]);
        let mut own: Vec<Item> = done[n - 1].placed.iter().map(|(i, _)| *i).collect();
        let mut cost = self.last_sheet(&fresh, &own);
        let mut tried: Vec<usize> = Vec::new();
        for p in 0..pairs {
            if self.cancel.is_cancelled() || Instant::now() >= end {
                break;
            }
            let Some(k) = self
                .emptiest_first(&done[..n - 1])
                .into_iter()
                .find(|k| !tried.contains(k))
            else {
                break;
            };
            tried.push(k);
            // the last sheet's parts first: they are those no other sheet found room for, and
            // the full sheet's own parts fill in around them
            let mut pool = own.clone();
            sort_for_placing(self.problem, &mut pool, ORDER);
            let mut theirs: Vec<Item> = done[k].placed.iter().map(|(i, _)| *i).collect();
            sort_for_placing(self.problem, &mut theirs, ORDER);
            pool.extend(theirs);
            let priority = |i: &Item| self.problem.parts[i.part].priority;
            if pool.iter().any(|i| priority(i) != priority(&pool[0])) {
                // (a part of a higher priority must not move onto the last sheet)
                continue;
            }
            let left = end.saturating_duration_since(Instant::now());
            let slice = Slice {
                deadline: Instant::now() + left.div_f64((pairs - p) as f64),
                rounds,
                retries: MAX_RETRIES,
                press_refused: true,
            };
            let seed = self
                .problem
                .settings
                .seed
                .wrapping_add(0x7f4a_7c15 + k as u64);
            let spend = if rounds.is_some() {
                end
            } else {
                let left = slice.deadline.saturating_duration_since(Instant::now());
                Instant::now() + left.mul_f64(FIRST_FIT_SPEND)
            };
            let mut rng = Rng::new(seed);
            let mut best: Option<(f64, FilledSheet, Vec<Item>)> = None;
            for t in 0..FIRST_FIT_TRIES {
                if t > 0 && Instant::now() >= spend {
                    break;
                }
                let mut order = if t == 0 {
                    pool.clone()
                } else {
                    super::engine::shuffled(self.problem, &pool, &mut rng)
                };
                let mut sheet = emptied(&done[k]);
                sheet.refill(self.eval, &mut order, slice.deadline);
                let area = sheet.part_area(self.problem);
                let took_all = order.is_empty();
                if best.as_ref().is_none_or(|b| area > b.0 + 1e-9) {
                    best = Some((area, sheet, order));
                }
                if took_all {
                    break;
                }
            }
            let Some((_, sheet, mut rest)) = best else {
                continue;
            };
            let dense = self.densify(sheet, &mut rest, None, slice, 2_000_003 + k as u64);
            if rest.is_empty() {
                tracing::debug!(sheet = k, "rebuilt with the last sheet: it took all");
                done[k] = dense;
                done.pop();
                return;
            }
            let (after, last) = self.last_sheet_laid_out(&fresh, &rest);
            tracing::debug!(
                sheet = k,
                from = self.utilisation(&done[k]),
                to = self.utilisation(&dense),
                last_from = cost.length,
                last_to = after.length,
                "rebuilt with the last sheet"
            );
            // (a last sheet whose own parts a first fit cannot all take costs an infinite
            // length, which a fit of fewer parts that does not take them all either beats on
            // area: only a complete first fit may stand, or parts would be lost)
            if !after.length.is_finite() || !after.beats(&cost) {
                continue;
            }
            done[k] = dense;
            done[n - 1] = last;
            (own, cost) = (rest, after);
        }
    }

    /// What the last sheet would cost holding `pool`: see `LastSheet`. `fresh` is the last
    /// sheet with no parts.
    fn last_sheet(&self, fresh: &FilledSheet, pool: &[Item]) -> LastSheet {
        self.last_sheet_laid_out(fresh, pool).0
    }

    /// `last_sheet`, with the first fit it measured: the last sheet holding every part of
    /// `pool` where the length is finite.
    fn last_sheet_laid_out(&self, fresh: &FilledSheet, pool: &[Item]) -> (LastSheet, FilledSheet) {
        let area = self.area_of(pool);
        let mut sheet = fresh.clone();
        if pool.is_empty() {
            return (LastSheet { length: 0.0, area }, sheet);
        }
        let mut rest = pool.to_vec();
        // a first fit always completes (no deadline): the same pool gives the same length
        sheet.refill(self.eval, &mut rest, no_deadline());
        let length = if rest.is_empty() {
            sheet.used_length()
        } else {
            f64::INFINITY
        };
        (LastSheet { length, area }, sheet)
    }

    /// One swap: the first part of `pool` (the last sheet's parts, in placing order: priority,
    /// then `ORDER`, the longest first) that some other sheet takes for smaller parts goes
    /// there (`insert_evicting`; the sheets with the least area in parts too big to give way
    /// are tried first), and the parts it pushed out join the pool. False when no sheet takes
    /// any.
    fn evict_into(
        &self,
        done: &mut [FilledSheet],
        pool: &mut Vec<Item>,
        deadline: Instant,
        rounds: Option<u64>,
        pass: u64,
    ) -> bool {
        let stop = AtomicBool::new(false);
        let mut tried: Vec<usize> = Vec::new();
        for idx in 0..pool.len() {
            let item = pool[idx];
            if tried.contains(&item.part) {
                continue;
            }
            tried.push(item.part);
            // the sheets with the least area in parts too big to give way first: there the
            // item most likely finds room among the big parts (then the emptiest first)
            let staying: Vec<f64> = done
                .iter()
                .map(|f| {
                    f.placed
                        .iter()
                        .filter(|(i, _)| !self.gives_way(i, &item))
                        .map(|(i, _)| self.item_area(i))
                        .sum()
                })
                .collect();
            let mut order = self.emptiest_first(done);
            order.sort_by(|&a, &b| staying[a].total_cmp(&staying[b]));
            for &k in &order {
                if self.cancel.is_cancelled() || Instant::now() >= deadline {
                    return false;
                }
                let budget = Budget {
                    deadline,
                    cancel: self.cancel.flag(),
                    stop: &stop,
                    max_rounds: Some(rounds.map_or(INSERT_ROUNDS, |r| r.min(INSERT_ROUNDS))),
                };
                let seed = self
                    .problem
                    .settings
                    .seed
                    .wrapping_add(0x5851_f42d)
                    .wrapping_add(pass * 1009 + k as u64);
                let Some(evicted) = self.insert_evicting(&mut done[k], item, &budget, seed) else {
                    continue;
                };
                tracing::debug!(
                    part = item.part,
                    sheet = k,
                    evicted = evicted.len(),
                    evicted_area = self.area_of(&evicted),
                    "swapped onto another sheet"
                );
                pool.remove(idx);
                pool.extend(evicted);
                sort_for_placing(self.problem, pool, ORDER);
                return true;
            }
        }
        false
    }

    /// The sheet with its parts pressed towards its start by the strip search (its used length
    /// shortened, as `engine::compact_last_sheet` shortens the last sheet), so that its free
    /// room becomes one region at its end, where a long part fits, instead of gaps between its
    /// parts. Every thread starts from the sheet's layout with its own seed; the shortest layout
    /// wins (the lowest thread on ties). The sheet unchanged when no thread shortens it.
    ///
    /// The threads' seeds come from `seed` (the pass and the sheet) alone, not from the job's
    /// seed as `densify`'s do. Deriving them from the job's seed too was measured (60 s,
    /// gardeyn3_x1): 5 sheets / 4.17 at job seeds 1 to 4, against 3.99, 4.09, 4.10 and 4.09;
    /// not understood, so left as it was (benches/history/multi-sheet.md, issue 14).
    fn press(&self, sheet: &FilledSheet, slice: Slice, seed: u64) -> FilledSheet {
        self.press_until(sheet, slice, seed, f64::NEG_INFINITY)
    }

    /// `press`, every thread stopping once one has pressed the sheet to `until` long or less.
    fn press_until(&self, sheet: &FilledSheet, slice: Slice, seed: u64, until: f64) -> FilledSheet {
        let stop = AtomicBool::new(false);
        let budget = slice.budget(self.cancel, &stop);
        let outcomes: Vec<Option<Compacted>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.threads)
                .map(|t| {
                    let (budget, seed) = (&budget, seed.wrapping_add(t as u64 * 7919));
                    scope.spawn(move || self.compacted(sheet, budget, seed, t, until))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("press thread panicked"))
                .collect()
        });
        let mut best: Option<Compacted> = None;
        for c in outcomes.into_iter().flatten() {
            if best.as_ref().is_none_or(|b| c.length < b.length) {
                best = Some(c);
            }
        }
        best.and_then(|c| self.pressed(sheet, c))
            .unwrap_or_else(|| sheet.clone())
    }

    /// `press` on the calling thread alone (a densifying thread's own press): the sheet pressed
    /// in place where that shortens it; returns the local-search rounds it took.
    fn press_alone(
        &self,
        sheet: &mut FilledSheet,
        budget: &Budget,
        seed: u64,
        thread: usize,
    ) -> u64 {
        let Some(c) = self.compacted(sheet, budget, seed, thread, f64::NEG_INFINITY) else {
            return 0;
        };
        let rounds = c.rounds;
        if let Some(pressed) = self.pressed(sheet, c) {
            *sheet = pressed;
        }
        rounds
    }

    /// The sheet's layout compacted towards its start by one compactor with `seed`; `None`
    /// when the sheet holds too few or too many parts to compact, or its layout overlaps on the
    /// search's raster.
    fn compacted(
        &self,
        sheet: &FilledSheet,
        budget: &Budget,
        seed: u64,
        thread: usize,
        until: f64,
    ) -> Option<Compacted> {
        if sheet.placed.len() < 2 || sheet.placed.len() > MAX_COMPACTED_PARTS {
            return None;
        }
        let moves = self.problem.settings.move_set(thread);
        let (lists, start) = (sheet.orientation_lists(), sheet.poses());
        let mut c = Compactor::new(self.eval, &sheet.area, lists, start, seed, moves);
        if c.total_overlap() > 0 {
            return None;
        }
        c.compact(budget, |_, length| {
            if length <= until {
                budget
                    .stop
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        Some(Compacted {
            length: c.used_length(),
            poses: c.poses().to_vec(),
            rounds: c.rounds(),
        })
    }

    /// The sheet with its parts where `c` put them, `None` unless that shortens it.
    fn pressed(&self, sheet: &FilledSheet, c: Compacted) -> Option<FilledSheet> {
        let from = sheet.used_length();
        if c.length >= from - 1e-9 {
            return None;
        }
        tracing::debug!(
            from,
            to = c.length,
            utilisation = self.utilisation(sheet),
            "pressed"
        );
        let mut pressed = sheet.clone();
        pressed.nudges.clear();
        for ((_, p), q) in pressed.placed.iter_mut().zip(c.poses) {
            *p = q;
        }
        Some(pressed)
    }

    /// Indices of `sheets`, the least utilised first (ties by index).
    fn emptiest_first(&self, sheets: &[FilledSheet]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..sheets.len()).collect();
        order.sort_by(|&a, &b| {
            self.utilisation(&sheets[a])
                .total_cmp(&self.utilisation(&sheets[b]))
                .then(a.cmp(&b))
        });
        order
    }
}

/// A sheet's layout after a compaction: its used length, every part's pose (in the sheet's
/// order) and the local-search rounds it took.
struct Compacted {
    length: f64,
    poses: Vec<Pose>,
    rounds: u64,
}

/// The densifying slices for `worth` sheets' worth of parts (at the best utilisation so far),
/// at least one: one for each full sheet, and one for a last sheet more than
/// `LAST_SHEET_SLICE_FILL` full. A lighter last sheet is first-fitted once the densifying time
/// is up, then emptied and compacted, but a fuller one is most of a sheet: the
/// sheets densified before it need not reach the best utilisation, so the parts left when the
/// densifying time is up, first-fitted, may overflow onto one more sheet, and the rebuild
/// lose to the construction (gardeyn2_x2: 3.86 sheets' worth after its first sheet, four
/// sheets densified at 84 to 88 % in 29 s, then the last 20 parts first-fitted;
/// benches/history/multi-sheet.md, thirty-first session).
fn densified_sheets(worth: f64) -> usize {
    // (NaN, from a sheet of no area, gives one; the cast saturates)
    (worth - LAST_SHEET_SLICE_FILL).ceil().max(1.0) as usize
}

/// The sheet with no parts on it (its type, frame and resolution kept).
fn emptied(sheet: &FilledSheet) -> FilledSheet {
    FilledSheet {
        placed: Vec::new(),
        nudges: Vec::new(),
        ..sheet.clone()
    }
}

/// What the parts left on the last sheet cost, compared first by `length`, then by `area`.
/// Swaps trade one part for smaller ones of about its area; slim parts that turn only by 180
/// degrees stack into a longer sheet than one compact part of their area, so the area alone
/// chose states whose last sheet came out longer (albano_x3: 5.51 sheet equivalents against
/// 5.36 before the swaps).
#[derive(Clone, Copy, Debug)]
struct LastSheet {
    /// The used length of a first fit of the parts on an empty last sheet (0 for no parts,
    /// infinite when they do not all fit): the compaction that follows shortens it, but keeps
    /// the order of most.
    length: f64,
    /// The parts' area.
    area: f64,
}

impl LastSheet {
    fn beats(&self, other: &LastSheet) -> bool {
        let tolerance = if other.length.is_finite() {
            1e-9 * other.length.max(1.0)
        } else {
            0.0
        };
        if self.length < other.length - tolerance {
            return true;
        }
        // (two infinite lengths are the same length: `inf <= inf`)
        self.length <= other.length + tolerance && self.area < other.area - 1e-9
    }
}

/// A swap may push parts off a sheet up to this share of the area of the part it brings (each
/// of them smaller than that part): smaller parts find room in other sheets' gaps where the
/// big one did not.
const EVICT_RATIO: f64 = 1.25;
/// A ruin and recreate takes off the sheet's parts under this share of the area of the part it
/// brings (strictly smaller, so what it pushes off is smaller than what it brings).
const RUIN_RATIO: f64 = 1.0;
/// Swaps stop (and the best state is taken up again) when the last sheet's parts grow to this
/// multiple of the part area of the best state's last sheet.
const RUNAWAY: f64 = 1.5;
/// Swaps per emptying of the last sheet, at most.
const MAX_EVICTIONS: usize = 24;

/// Utilisation (percent) the share of the first densified sheet is sized for; later sheets use
/// the best utilisation reached when it is higher.
const EXPECTED_UTILISATION: f64 = 85.0;
/// How many more copies of each part a sheet may take while it is filled from its share.
#[derive(Clone, Debug)]
struct Quota {
    /// (part, copies still allowed)
    allowed: Vec<(usize, usize)>,
}

impl Quota {
    /// Each part's share of a sheet that holds `capacity` of part area: the part's copies left
    /// times the fraction of the pool's area the sheet holds, rounded up, and no more. Slack
    /// (15 % once) let the first sheets take more of the small parts that fill gaps, and the
    /// later sheets, left with the big ones, packed worse: `kerf bench sheets --time 60` took 8
    /// sheets for shirts_x2 with it and 7 without (three runs each), and no instance took more.
    ///
    /// A rare kind (under one copy expected on the sheet) in a pool that also has common ones
    /// gets one copy with the probability it is expected, drawn from `rng`, instead of one
    /// copy always: rounded up, every early sheet took one, the rare kinds were gone after a
    /// third of trousers_x8's sheets, and its last sheets held the common kinds alone at 66 to
    /// 73 % (benches/history/multi-sheet.md, large jobs). A pool of rare kinds only (distinct
    /// parts) is shared out rounded up as before: the whole pool, from which the sheet's first fit
    /// chooses; so are the parts of assemblies and parts above the pool's lowest priority.
    fn share(problem: &Problem, pool: &[Item], capacity: f64, rng: &mut Rng) -> Quota {
        let total: f64 = pool
            .iter()
            .map(|i| problem.parts[i.part].geometry.area())
            .sum();
        let fraction = if total > 0.0 {
            (capacity / total).min(1.0)
        } else {
            1.0
        };
        let mut allowed: Vec<(usize, usize)> = Vec::new();
        for i in pool {
            match allowed.iter_mut().find(|(p, _)| *p == i.part) {
                Some(a) => a.1 += 1,
                None => allowed.push((i.part, 1)),
            }
        }
        // a kit's parts in whole kits: counted in kits, a multiple of the copies per kit (the
        // pool holds whole kits, so every part of an assembly gives the same kit count)
        let step = |part: usize| problem.parts[part].kit.map_or(1, |k| k.per_kit as usize);
        let expected =
            |(part, copies): (usize, usize)| copies as f64 * fraction / step(part) as f64;
        let mixed = allowed.iter().any(|&a| expected(a) >= 1.0);
        // may be drawn: neither an assembly's parts (a draw for each part would split its kits, and
        // the sheet keeps only whole ones) nor a part above the pool's lowest priority (every
        // share keeps a copy of each higher kind, so the sheet rules still open each sheet
        // for the highest priority left)
        let lowest = pool.iter().map(|i| problem.parts[i.part].priority).min();
        let may_draw = |part: usize| {
            problem.parts[part].kit.is_none() && Some(problem.parts[part].priority) == lowest
        };
        for a in &mut allowed {
            let e = expected(*a);
            let units = if mixed && e < 1.0 && may_draw(a.0) {
                usize::from(rng.unit() < e)
            } else {
                e.ceil() as usize
            };
            a.1 = (units * step(a.0)).min(a.1);
        }
        Quota { allowed }
    }

    /// The pool's items within the quota, in pool order.
    fn take(&self, pool: &[Item]) -> Vec<Item> {
        let mut left = self.allowed.clone();
        pool.iter()
            .filter(|i| match left.iter_mut().find(|(p, _)| *p == i.part) {
                Some(a) if a.1 > 0 => {
                    a.1 -= 1;
                    true
                }
                _ => false,
            })
            .copied()
            .collect()
    }

    /// Counts placed items against the quota.
    fn placed(&mut self, placed: &[(Item, Pose)]) {
        for (i, _) in placed {
            if let Some(a) = self.allowed.iter_mut().find(|(p, _)| *p == i.part) {
                a.1 = a.1.saturating_sub(1);
            }
        }
    }
}

/// The least utilisation (percent) a layout needs to be repeated at this level, given the best
/// sheet so far; `None`: no repeats are made. What each level may give up per repeated sheet:
/// Low 1 point of utilisation against the best sheet, Medium 3, High any.
pub(super) fn repeat_floor(level: RepeatPreference, best_utilisation: f64) -> Option<f64> {
    match level {
        RepeatPreference::None => None,
        RepeatPreference::Low => Some(best_utilisation - 1.0),
        RepeatPreference::Medium => Some(best_utilisation - 3.0),
        RepeatPreference::High => Some(0.0),
    }
}

/// How many different layouts the sheets have (the same sheet type with the same parts in the
/// same poses is one layout, whichever copies of the parts they are).
fn distinct_layouts(sheets: &[FilledSheet]) -> usize {
    let mut keys: Vec<(usize, Vec<(usize, usize, i32, i32)>)> = sheets
        .iter()
        .map(|f| {
            let mut k: Vec<(usize, usize, i32, i32)> = f
                .placed
                .iter()
                .map(|(i, p)| (i.part, p.orient, p.gx, p.gy))
                .collect();
            k.sort_unstable();
            (f.sheet, k)
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.len()
}

/// Whether the compactor may take the sheet's parts and one more (`MAX_COMPACTED_PARTS`: its
/// dense pair matrices).
fn takes_insertions(sheet: &FilledSheet) -> bool {
    sheet.placed.len() < MAX_COMPACTED_PARTS
}

/// The same layout again, with the next unused copies of each part (taken out of `pool`); a
/// part the pool has no copy of left is dropped from it (a layout less some parts still has no
/// overlap). Repeats count the copies first, so theirs drop nothing; a plan by patterns may
/// cut a pattern more often than each of its parts is wanted (`patterns::copy_if_available`).
fn copy_layout(sheet: &FilledSheet, pool: &mut Vec<Item>) -> FilledSheet {
    let mut copy = sheet.clone();
    copy.nudges.clear();
    copy.placed.retain_mut(
        |(item, _)| match pool.iter().position(|i| i.part == item.part) {
            Some(k) => {
                *item = pool.remove(k);
                true
            }
            None => false,
        },
    );
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::model::{KitRole, PartSpec, Settings, SheetSpec};
    use kerf_kernels::CpuEvaluator;

    #[test]
    fn time_shares_leave_the_last_sheet_some_compaction_and_large_jobs_more_rebuild() {
        let small = TimeShares::for_sheets(MANY_SHEETS - 1);
        for sheets in 2..200 {
            let shares = TimeShares::for_sheets(sheets);
            assert!(
                shares.densify > 0.0 && shares.empty > 0.0,
                "{sheets}: {shares:?}"
            );
            assert!(shares.search() < 1.0, "{sheets}: nothing left to compact");
            assert!(shares.densify >= small.densify, "{sheets}: {shares:?}");
        }
        assert!(TimeShares::for_sheets(MANY_SHEETS).densify > small.densify);
    }

    fn problem() -> Problem {
        Problem {
            parts: vec![
                PartSpec::new("big", PartGeometry::single(Shape::rectangle(10.0, 10.0)), 4),
                PartSpec::new(
                    "small",
                    PartGeometry::single(Shape::rectangle(2.0, 5.0)),
                    10,
                ),
            ],
            sheets: vec![SheetSpec::rectangle("s", 20.0, 20.0)],
            settings: Settings::default(),
        }
    }

    /// A one-thread search of `p` on the CPU backend.
    pub(super) fn cpu_search<'a>(p: &'a Problem, cancel: &'a CancelHandle) -> SheetSearch<'a> {
        SheetSearch {
            problem: p,
            eval: &CpuEvaluator,
            cancel,
            threads: 1,
        }
    }

    /// `n` copies of `part`, instances 0 to n - 1.
    pub(super) fn items(part: usize, n: u32) -> Vec<Item> {
        (0..n)
            .map(|instance| Item {
                part,
                instance,
                is_filler: false,
            })
            .collect()
    }

    #[test]
    fn a_last_sheet_more_than_half_full_gets_a_densifying_slice_of_its_own() {
        assert_eq!(densified_sheets(4.86), 5);
        assert_eq!(densified_sheets(4.2), 4);
        assert_eq!(densified_sheets(4.0), 4);
        assert_eq!(densified_sheets(0.3), 1);
        assert_eq!(densified_sheets(1.4), 1);
        // more than half full, not half
        assert_eq!(densified_sheets(4.5), 4);
        assert_eq!(densified_sheets(0.7), 1);
        assert_eq!(densified_sheets(0.0), 1);
        assert_eq!(densified_sheets(f64::NAN), 1);
    }

    #[test]
    fn a_share_is_each_part_in_proportion_rounded_up() {
        let p = problem();
        let mut pool = items(0, 4);
        pool.extend(items(1, 10));
        // pool area 400 + 100 = 500; a sheet holding 230 takes 230 / 500 = 46 % of each
        let q = Quota::share(&p, &pool, 230.0, &mut Rng::new(1));
        assert_eq!(q.allowed, vec![(0, 2), (1, 5)]);
        let share = q.take(&pool);
        assert_eq!(share.iter().filter(|i| i.part == 0).count(), 2);
        assert_eq!(share.iter().filter(|i| i.part == 1).count(), 5);
        // in pool order: the first copies of each
        assert!(share.iter().filter(|i| i.part == 1).all(|i| i.instance < 5));
        // a sheet larger than the pool takes all of it, never more
        let all = Quota::share(&p, &pool, 1e6, &mut Rng::new(1));
        assert_eq!(all.take(&pool).len(), pool.len());
    }

    #[test]
    fn a_rare_kind_among_common_ones_is_drawn_as_often_as_it_is_expected() {
        let p = problem();
        // ten big (100 each, 1000 in all) and one small (10): a sheet holding 230 expects 2.28 big,
        // rounded up to 3, and 0.228 small, drawn
        let mut pool = items(0, 10);
        pool.extend(items(1, 1));
        let draws = 1000;
        let mut small = 0;
        for seed in 0..draws {
            let q = Quota::share(&p, &pool, 230.0, &mut Rng::new(seed));
            assert!(q.allowed.contains(&(0, 3)), "{:?}", q.allowed);
            small += q.take(&pool).iter().filter(|i| i.part == 1).count();
        }
        // about 228 of 1000 (the draws are fixed by the seeds; a rounding up would give 1000)
        assert!((150..=310).contains(&small), "{small} of {draws}");
        // rare kinds alone (distinct parts) are rounded up: the whole pool, as before
        let rare_only = vec![items(0, 1), items(1, 1)].concat();
        let q = Quota::share(&p, &rare_only, 40.0, &mut Rng::new(1));
        assert_eq!(q.take(&rare_only).len(), 2);
        // so are an assembly's parts and a part above the pool's lowest priority: every seed
        // gives the rare kind its copy
        for change in [
            |p: &mut Problem| {
                p.parts[1].kit = Some(KitRole {
                    assembly: 0,
                    per_kit: 1,
                })
            },
            |p: &mut Problem| p.parts[1].priority = 1,
        ] {
            let mut p = problem();
            change(&mut p);
            for seed in 0..50 {
                let q = Quota::share(&p, &pool, 230.0, &mut Rng::new(seed));
                assert!(q.allowed.contains(&(1, 1)), "{:?}", q.allowed);
            }
        }
    }

    #[test]
    fn the_search_places_the_longest_parts_first_and_the_construction_the_biggest() {
        let rect = |id: &str, w: f64, h: f64, n: u32| {
            PartSpec::new(id, PartGeometry::single(Shape::rectangle(w, h)), n)
        };
        let p = Problem {
            parts: vec![
                rect("square", 10.0, 10.0, 1),
                rect("block", 56.0, 22.0, 2),
                rect("thin", 2.0, 57.0, 1),
                rect("strip", 57.0, 5.0, 1),
            ],
            sheets: vec![SheetSpec::rectangle("s", 88.5, 79.0)],
            settings: Settings::default(),
        };
        let mut pool = items(0, 1);
        pool.extend(items(1, 2));
        pool.extend(items(2, 1));
        pool.extend(items(3, 1));
        let parts = |pool: &[Item]| pool.iter().map(|i| i.part).collect::<Vec<_>>();
        sort_for_placing(&p, &mut pool, PlacingOrder::Area);
        assert_eq!(parts(&pool), vec![1, 1, 3, 2, 0]);
        // the construction's order
        assert_eq!(
            parts(&super::super::engine::demand_in_order(&p)),
            vec![1, 1, 3, 2, 0]
        );
        // the search's: longest side first, turned or not; at the same length the bigger area
        sort_for_placing(&p, &mut pool, ORDER);
        assert_eq!(parts(&pool), vec![3, 2, 1, 1, 0]);
        // a higher priority still goes first, whatever its size
        let mut p = p;
        p.parts[0].priority = 1;
        sort_for_placing(&p, &mut pool, ORDER);
        assert_eq!(parts(&pool), vec![0, 3, 2, 1, 1]);
    }

    #[test]
    fn placed_items_use_up_the_allowance() {
        let p = problem();
        let pool = items(1, 10);
        let mut q = Quota::share(&p, &pool, 60.0, &mut Rng::new(1)); // 60 / 100: 6 of 10
        assert_eq!(q.allowed, vec![(1, 6)]);
        let pose = Pose {
            orient: 0,
            gx: 0,
            gy: 0,
        };
        q.placed(&[(pool[0], pose), (pool[1], pose)]);
        assert_eq!(q.take(&pool[2..]).len(), 4);
        q.placed(&[(pool[2], pose)]);
        assert_eq!(q.take(&pool[3..]).len(), 3);
    }

    #[test]
    fn the_fullest_of_several_first_fits_is_kept_within_part_priorities() {
        // on a 20.5 square sheet a 12 x 12 square placed first leaves no room for a 10 x 10
        // one, while the 10 x 10 ones placed first fill the sheet (400 against 144)
        let mut p = Problem {
            parts: vec![
                PartSpec::new(
                    "wide",
                    PartGeometry::single(Shape::rectangle(12.0, 12.0)),
                    1,
                ),
                PartSpec::new(
                    "tile",
                    PartGeometry::single(Shape::rectangle(10.0, 10.0)),
                    4,
                ),
            ],
            sheets: vec![SheetSpec::rectangle("s", 20.5, 20.5)],
            settings: Settings::default(),
        };
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let open = |p: &Problem, tries: usize| {
            let res = super::super::engine::resolution(p, 64.0);
            let mut pending = items(0, 1);
            pending.extend(items(1, 4));
            let sheet = SheetOpener::new(p, &res)
                .open_best(
                    &CpuEvaluator,
                    &mut pending,
                    tries,
                    &mut Rng::new(5),
                    far,
                    far,
                )
                .flatten()
                .expect("the sheet takes some");
            // what the sheet took left the pending list, and nothing else did
            assert_eq!(sheet.placed.len() + pending.len(), 5);
            assert!(no_overlap(&sheet));
            sheet
        };
        // one try is `open` itself: the wide square alone
        assert!((open(&p, 1).part_area(&p) - 144.0).abs() < 1e-6);
        assert!((open(&p, 32).part_area(&p) - 400.0).abs() < 1e-6);
        // a higher priority stays first in every order tried
        p.parts[0].priority = 1;
        let sheet = open(&p, 32);
        assert!(sheet.placed.iter().any(|(i, _)| i.part == 0));
        assert!((sheet.part_area(&p) - 144.0).abs() < 1e-6);
        // a job with assemblies keeps the given order (a shuffle could split its kits)
        p.parts[0].priority = 0;
        for (k, part) in p.parts.iter_mut().enumerate() {
            part.kit = Some(crate::nest2d::model::KitRole {
                assembly: k as u32,
                per_kit: 1,
            });
        }
        assert!((open(&p, 32).part_area(&p) - 144.0).abs() < 1e-6);
    }

    /// A 21 x 10.5 sheet holding a 10 x 10 square and `small` 4 x 4 squares, first-fitted.
    fn swap_sheet(small: u32) -> (Problem, FilledSheet) {
        let p = Problem {
            parts: vec![
                PartSpec::new("big", PartGeometry::single(Shape::rectangle(10.0, 10.0)), 3),
                PartSpec::new("small", PartGeometry::single(Shape::rectangle(4.0, 4.0)), 2),
            ],
            sheets: vec![SheetSpec::rectangle("s", 21.0, 10.5)],
            settings: Settings::default(),
        };
        let res = super::super::engine::resolution(&p, 64.0);
        let mut pending = items(0, 1);
        pending.extend(items(1, small));
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let sheet = SheetOpener::new(&p, &res)
            .open(&CpuEvaluator, &mut pending, far)
            .flatten()
            .expect("the sheet takes them");
        assert!(pending.is_empty());
        (p, sheet)
    }

    fn no_overlap(sheet: &FilledSheet) -> bool {
        let (lists, poses) = (sheet.orientation_lists(), sheet.poses());
        Compactor::new(
            &CpuEvaluator,
            &sheet.area,
            lists,
            poses,
            1,
            Default::default(),
        )
        .total_overlap()
            == 0
    }

    fn swap(p: &Problem, sheet: &mut FilledSheet, item: Item) -> Option<Vec<Item>> {
        let cancel = CancelHandle::default();
        let search = cpu_search(p, &cancel);
        let stop = AtomicBool::new(false);
        let cancel = AtomicBool::new(false);
        let budget = Budget {
            deadline: Instant::now() + std::time::Duration::from_secs(60),
            cancel: &cancel,
            stop: &stop,
            max_rounds: Some(INSERT_ROUNDS),
        };
        search.insert_evicting(sheet, item, &budget, 7)
    }

    #[test]
    fn when_the_share_is_refused_the_rest_of_the_pool_gets_its_turn() {
        // a 21 x 10.5 sheet with one 10 x 10 square; its share holds only an 11.5 x 10.2 part,
        // which the room left (11 x 10.5) cannot take, turned or not, so its insertion is
        // refused: the two 4 x 4 squares of the pool go on
        let p = Problem {
            parts: vec![
                PartSpec::new("big", PartGeometry::single(Shape::rectangle(10.0, 10.0)), 1),
                PartSpec::new("small", PartGeometry::single(Shape::rectangle(4.0, 4.0)), 2),
                PartSpec::new(
                    "long",
                    PartGeometry::single(Shape::rectangle(11.5, 10.2)),
                    1,
                ),
            ],
            sheets: vec![SheetSpec::rectangle("s", 21.0, 10.5)],
            settings: Settings::default(),
        };
        let res = super::super::engine::resolution(&p, 64.0);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let sheet = SheetOpener::new(&p, &res)
            .open(&CpuEvaluator, &mut items(0, 1), far)
            .flatten()
            .expect("the sheet takes the square");
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let mut pool = items(2, 1);
        pool.extend(items(1, 2));
        let share = Quota {
            allowed: vec![(2, 1)],
        };
        let slice = Slice {
            deadline: far,
            rounds: Some(10 * INSERT_ROUNDS),
            retries: 0,
            press_refused: false,
        };
        let (sheet, pool) = search.densify_one(sheet, pool, Some(share), slice, 7, 0);
        assert_eq!(pool, items(2, 1), "the long part stays in the pool");
        assert_eq!(sheet.placed.len(), 3);
        assert!(no_overlap(&sheet));
    }

    #[test]
    fn a_swap_pushes_smaller_parts_off_to_make_room() {
        // the second square needs the room the two small ones hold (each smaller than it)
        let (p, mut sheet) = swap_sheet(2);
        let big = items(0, 2)[1];
        let evicted = swap(&p, &mut sheet, big).expect("the small squares give way");
        let mut parts: Vec<usize> = evicted.iter().map(|i| i.part).collect();
        parts.sort();
        assert!(
            !parts.is_empty() && parts.iter().all(|&k| k == 1),
            "{parts:?}"
        );
        assert!(sheet.placed.iter().any(|(i, _)| i.same_unit(&big)));
        assert_eq!(sheet.placed.len() + evicted.len(), 4);
        assert!(no_overlap(&sheet));
    }

    #[test]
    fn pressing_a_sheet_gathers_its_free_room_at_its_end() {
        // two small squares, one at the sheet's start and one 8 along: the gaps either side
        // of the second (4 and 9 long) are too short for the big square (10)
        let (p, mut sheet) = swap_sheet(2);
        sheet.placed.retain(|(i, _)| i.part == 1);
        spread_along_foot(&mut sheet, 8.0);
        assert!(no_overlap(&sheet));
        let big = || items(0, 1);
        let mut pending = big();
        sheet
            .clone()
            .refill(&CpuEvaluator, &mut pending, no_deadline());
        assert_eq!(
            pending.len(),
            1,
            "no gap takes the big square before the press"
        );

        let search = SheetSearch {
            problem: &p,
            eval: &CpuEvaluator,
            cancel: &CancelHandle::default(),
            threads: 2,
        };
        let slice = Slice {
            deadline: no_deadline(),
            rounds: Some(200),
            retries: 0,
            press_refused: false,
        };
        let mut pressed = search.press(&sheet, slice, 3);
        assert!(pressed.used_length() < sheet.used_length() - 3.0);
        assert!(no_overlap(&pressed));
        assert_eq!(pressed.placed.len(), 2);
        // the same seed and rounds, the same layout
        assert_eq!(
            search.press(&sheet, slice, 3).placed,
            pressed.placed,
            "a press under a round budget is deterministic"
        );
        let mut pending = big();
        pressed.refill(&CpuEvaluator, &mut pending, no_deadline());
        assert!(pending.is_empty(), "the pressed sheet's free room takes it");
        assert!(no_overlap(&pressed));

        // a densifying thread's own press: the same, within the rounds it is given, and it
        // says how many it took
        let stop = AtomicBool::new(false);
        let budget = Budget {
            deadline: no_deadline(),
            cancel: search.cancel.flag(),
            stop: &stop,
            max_rounds: Some(60),
        };
        let mut alone = sheet.clone();
        let rounds = search.press_alone(&mut alone, &budget, 3, 0);
        assert!((1..=60).contains(&rounds), "{rounds} rounds");
        assert!(alone.used_length() < sheet.used_length() - 3.0);
        let mut pending = big();
        alone.refill(&CpuEvaluator, &mut pending, no_deadline());
        assert!(pending.is_empty(), "the sheet pressed alone takes it too");
        assert!(no_overlap(&alone));
        // an overlapping layout is not pressed
        let mut overlapping = sheet.clone();
        overlapping.placed[1].1 = overlapping.placed[0].1;
        let before = overlapping.placed.clone();
        assert_eq!(search.press_alone(&mut overlapping, &budget, 3, 0), 0);
        assert_eq!(overlapping.placed, before);
    }

    /// The sheet's parts moved to its foot, `step` apart along it, in their order.
    fn spread_along_foot(sheet: &mut FilledSheet, step: f64) {
        let cell = sheet.area.cell;
        for (k, (it, pose)) in sheet.placed.iter_mut().enumerate() {
            let b = sheet
                .area
                .bounds(&sheet.table[it.part][pose.orient], f64::INFINITY);
            let b = b.expect("the part fits the sheet");
            pose.gx = b.x_lo + (k as f64 * step / cell).round() as i32;
            pose.gy = b.y_lo;
        }
    }

    /// Two 21 x 10.5 sheets: four small squares spread along the first sheet's foot, 5.5
    /// apart, so that no gap takes the big square; the big square, and `smalls` more small
    /// ones, on the last.
    fn spread_and_last(smalls: u32) -> (Problem, Vec<FilledSheet>) {
        let p = Problem {
            parts: vec![
                PartSpec::new("big", PartGeometry::single(Shape::rectangle(10.0, 10.0)), 1),
                PartSpec::new(
                    "small",
                    PartGeometry::single(Shape::rectangle(4.0, 4.0)),
                    4 + smalls,
                ),
            ],
            sheets: vec![SheetSpec::rectangle("s", 21.0, 10.5)],
            settings: Settings::default(),
        };
        let res = super::super::engine::resolution(&p, 64.0);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let mut opener = SheetOpener::new(&p, &res);
        let mut pending = items(1, 4);
        let mut full = opener
            .open(&CpuEvaluator, &mut pending, far)
            .flatten()
            .expect("the sheet takes the small squares");
        spread_along_foot(&mut full, 5.5);
        let mut pending = items(0, 1);
        pending.extend((4..4 + smalls).map(|instance| Item {
            part: 1,
            instance,
            is_filler: false,
        }));
        let last = opener
            .open(&CpuEvaluator, &mut pending, far)
            .flatten()
            .expect("the last sheet takes its parts");
        assert!(pending.is_empty());
        (p, vec![full, last])
    }

    #[test]
    fn a_full_sheet_rebuilt_with_the_last_takes_what_found_no_gap() {
        let (p, mut done) = spread_and_last(0);
        assert!(no_overlap(&done[0]));
        let mut pending = items(0, 1);
        done[0]
            .clone()
            .refill(&CpuEvaluator, &mut pending, no_deadline());
        assert_eq!(
            pending.len(),
            1,
            "no gap of the full sheet takes the big square"
        );
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        search.rebuild_with_last(&mut done, no_deadline(), Some(200));
        assert_eq!(done.len(), 1, "the last sheet is emptied and gone");
        assert_eq!(done[0].placed.len(), 5);
        assert!(no_overlap(&done[0]));

        // more than a sheet holds: the full sheet takes the big square and four small ones,
        // and the last keeps what is left, shorter than the big square it held
        let (p, mut done) = spread_and_last(2);
        let search = cpu_search(&p, &cancel);
        let before = done[1].used_length();
        search.rebuild_with_last(&mut done, no_deadline(), Some(200));
        assert_eq!(done.len(), 2);
        assert_eq!(done[0].placed.len() + done[1].placed.len(), 7);
        assert!(done[0].placed.iter().any(|(i, _)| i.part == 0));
        assert!(done[1].placed.iter().all(|(i, _)| i.part == 1));
        assert!(done[1].used_length() < before - 3.0);
        assert!(done.iter().all(no_overlap));
        let mut units: Vec<(usize, u32)> = done
            .iter()
            .flat_map(|f| f.placed.iter().map(|(i, _)| (i.part, i.instance)))
            .collect();
        units.sort();
        units.dedup();
        assert_eq!(units.len(), 7, "no part lost or placed twice");
    }

    #[test]
    fn a_swap_never_pushes_off_a_part_as_big_as_the_one_it_brings() {
        // two squares fill the sheet: a third could only take the place of one of them
        let (p, mut sheet) = swap_sheet(0);
        let second = items(0, 2)[1];
        assert_eq!(swap(&p, &mut sheet, second).map(|e| e.len()), Some(0));
        assert_eq!(sheet.placed.len(), 2);
        let before: Vec<(Item, Pose)> = sheet.placed.clone();
        let third = items(0, 3)[2];
        assert!(swap(&p, &mut sheet, third).is_none());
        assert_eq!(
            sheet.placed.len(),
            before.len(),
            "a refused swap leaves the sheet as it was"
        );
        assert!(no_overlap(&sheet));
    }

    #[test]
    fn a_last_sheet_costs_its_length_first_then_its_area() {
        let cost = |length, area| LastSheet { length, area };
        assert!(cost(10.0, 100.0).beats(&cost(20.0, 50.0)));
        assert!(cost(10.0, 50.0).beats(&cost(10.0, 100.0)));
        assert!(!cost(10.0, 100.0).beats(&cost(10.0, 100.0)));
        assert!(cost(0.0, 0.0).beats(&cost(1.0, 1.0)));
        // parts that do not all fit an empty sheet cost more than any that do
        assert!(cost(1e9, 1e9).beats(&cost(f64::INFINITY, 1.0)));
        assert!(cost(f64::INFINITY, 1.0).beats(&cost(f64::INFINITY, 2.0)));
        assert!(!cost(f64::INFINITY, 1.0).beats(&cost(5.0, 2.0)));
    }

    #[test]
    fn slim_parts_that_stack_long_cost_more_than_a_compact_part_of_more_area() {
        // four 19.2 x 1.25 strips (96 in all) turn only by 180 degrees: stacked, they reach 19.2
        // along the sheet; one 10 x 10 square (100) reaches 10
        let mut slim = PartSpec::new(
            "slim",
            PartGeometry::single(Shape::rectangle(19.2, 1.25)),
            4,
        );
        slim.rotations = vec![0.0, 180.0];
        let p = Problem {
            parts: vec![
                PartSpec::new(
                    "square",
                    PartGeometry::single(Shape::rectangle(10.0, 10.0)),
                    1,
                ),
                slim,
            ],
            sheets: vec![SheetSpec::rectangle("s", 40.0, 20.0)],
            settings: Settings::default(),
        };
        let res = super::super::engine::resolution(&p, 32.0);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let mut one = items(0, 1);
        let fresh = SheetOpener::new(&p, &res)
            .open(&CpuEvaluator, &mut one, far)
            .flatten()
            .map(|s| emptied(&s))
            .expect("a sheet");
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let square = search.last_sheet(&fresh, &items(0, 1));
        let strips = search.last_sheet(&fresh, &items(1, 4));
        assert!(strips.area < square.area);
        assert!((square.length - 10.0).abs() < 1.0, "{square:?}");
        assert!(strips.length > 19.0, "{strips:?}");
        assert!(square.beats(&strips));
        let empty = search.last_sheet(&fresh, &[]);
        assert!(empty.beats(&square));
    }

    #[test]
    fn repeat_levels_give_up_what_the_docs_say() {
        assert_eq!(repeat_floor(RepeatPreference::None, 85.0), None);
        assert_eq!(repeat_floor(RepeatPreference::Low, 85.0), Some(84.0));
        assert_eq!(repeat_floor(RepeatPreference::Medium, 85.0), Some(82.0));
        assert_eq!(repeat_floor(RepeatPreference::High, 85.0), Some(0.0));
    }
}
