//! Sheets planned by whole sets, for jobs whose demand is a number of identical sets (every
//! part's copies a multiple of one count, the sets: a shop cutting 12 cabinets of the same
//! parts). A sheet holding as many whole sets as its area allows at `SET_DENSITY` is nested
//! once, pressed as a strip from the search's raster to four times the final one, and cut as
//! often as the sets allow: where that layout fits, the job needs no more sheets than the sets'
//! area needs at that density, every full sheet is the same layout (one program to write and
//! run), and only the sets left over go to the sheet-by-sheet rebuild.
//!
//! Why: the rebuild builds sheet after sheet from shares on the search's raster, where a sheet
//! holding exactly its sets is often a cell of slack too long (dagli_x4: two of each of its ten
//! parts, 84.3 % of a sheet, end 40.16 long on the search's raster and 39.36 on the final one,
//! `benches/history/multi-sheet.md`), and its sheets come out with other mixes, one sheet more.

use super::patterns::{copies_of, kinds_of};
use super::INSERT_ROUNDS;
use super::{emptied, SheetSearch, Slice};
use crate::nest1d::instance::gcd;
use crate::nest2d::engine::{
    rebase, sheet_area, FilledSheet, Item, PhaseRasters, Resolution, SheetOpener,
};
use crate::nest2d::search::{Budget, Compactor, Oriented};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The densest sheet a set plan counts on: as many whole sets as this share of the sheet's
/// area holds are nested on one sheet (a sheet denser than the strip search reaches is not
/// worth the time it takes to fail).
const SET_DENSITY: f64 = 0.9;

impl SheetSearch<'_> {
    /// The sets of `pool`: every kind's copies over their greatest common divisor (`None` when
    /// that is 1: no two identical sets).
    fn sets_of(&self, pool: &[Item]) -> Option<(u32, Vec<(usize, u32)>)> {
        let kinds = kinds_of(pool);
        let copies = copies_of(&kinds, pool.iter());
        let sets = copies.iter().fold(0, |g, &n| gcd(g, n as i64)) as u32;
        (sets >= 2).then(|| {
            (
                sets,
                kinds
                    .into_iter()
                    .zip(copies.into_iter().map(|n| n / sets))
                    .collect(),
            )
        })
    }

    /// Plans full sheets of whole sets from `pool` (those planned leave it, and each takes its
    /// sheet from `opener`): `on` is an empty sheet of the job's one type (its frame and its
    /// usable end), `coarse` the search's raster, where pressing starts, `construction` the
    /// construction's sheet count (a plan needing as many is not tried), and `slice` the time
    /// and rounds for nesting one sheet of sets. Empty when the job is not made of sets, a
    /// sheet holds no whole set at `SET_DENSITY`, the plan would need more sheets than the
    /// sets' area at that density or as many as the construction, or the sheet of sets does
    /// not fit.
    pub(super) fn plan_by_sets(
        &self,
        pool: &mut Vec<Item>,
        opener: &mut SheetOpener,
        on: &FilledSheet,
        coarse: &Resolution,
        construction: usize,
        slice: Slice,
    ) -> Vec<FilledSheet> {
        let none = Vec::new();
        let seed = self.problem.settings.seed;
        let Some((sets, set)) = self.sets_of(pool) else {
            return none;
        };
        let set_area: f64 = set
            .iter()
            .map(|&(k, n)| n as f64 * self.problem.parts[k].geometry.area())
            .sum();
        let sheet_area = self.problem.sheets[on.sheet].area();
        let per_sheet = ((SET_DENSITY * sheet_area / set_area).floor() as u32).min(sets);
        let pool_area = sets as f64 * set_area;
        let fewest = (pool_area / (SET_DENSITY * sheet_area)).ceil() as u32;
        if per_sheet == 0
            || sets.div_ceil(per_sheet) > fewest
            || (sets.div_ceil(per_sheet) as usize) >= construction
        {
            return none;
        }
        // one sheet's worth of sets, in the pool's order (the longest parts first)
        let mut wanted: Vec<(usize, u32)> = set.iter().map(|&(k, n)| (k, n * per_sheet)).collect();
        let items: Vec<Item> = pool
            .iter()
            .filter(|i| match wanted.iter_mut().find(|(k, _)| *k == i.part) {
                Some((_, n)) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            })
            .copied()
            .collect();
        let t = Instant::now();
        let Some(layout) = self.sheet_of(on, coarse, &items, slice, seed) else {
            tracing::debug!(
                sets,
                per_sheet,
                seconds = t.elapsed().as_secs_f64(),
                "a sheet of sets did not fit"
            );
            return none;
        };
        let mut sheets = Vec::new();
        for _ in 0..sets / per_sheet {
            let copy = super::copy_layout(&layout, pool);
            debug_assert_eq!(copy.placed.len(), items.len(), "whole sets in the pool");
            opener.take(copy.sheet);
            sheets.push(copy);
        }
        tracing::debug!(
            sets,
            per_sheet,
            sheets = sheets.len(),
            seconds = t.elapsed().as_secs_f64(),
            "sheets planned by sets"
        );
        sheets
    }

    /// `items` nested on an empty sheet like `on`: first-fitted into a sheet twice as long on
    /// the search's raster `coarse`, then pressed by the strip search, phase after phase on
    /// finer rasters (`PRESS_PHASES`, as the strip search's own phases win back raster slack),
    /// until they all end within the sheet: the sheet on the raster of the phase that got them
    /// there (every phase, under an iteration budget), `None` where they do not fit (or `on`
    /// has blocked cells).
    fn sheet_of(
        &self,
        on: &FilledSheet,
        coarse: &Resolution,
        items: &[Item],
        slice: Slice,
        seed: u64,
    ) -> Option<FilledSheet> {
        let on_coarse = self.at_resolution(on, coarse, on.area.x1, &slice, seed)?;
        let mut long = self.long_sheet(&on_coarse, items, slice.deadline)?;
        if long.placed.len() < items.len() {
            return None;
        }
        let total = slice.deadline.saturating_duration_since(Instant::now());
        let t0 = Instant::now();
        // (under an iteration budget every phase runs to its rounds)
        let budgeted = slice.rounds.is_some();
        let until = slice.stop_at(on.area.x1);
        // the first phase on the search's raster, the later ones on finer rasters (the sheet's
        // own, the final one, reused where a phase asks for it)
        let mut rasters = PhaseRasters::new(self.problem, on.resolution());
        let mut elapsed = 0.0;
        for (k, &(factor, share)) in PRESS_PHASES.iter().enumerate() {
            elapsed += share;
            let phase = Slice {
                deadline: t0 + total.mul_f64(elapsed),
                ..slice
            };
            if k > 0 {
                if let Some(res) = rasters.at(factor, phase.deadline, budgeted) {
                    long = self.at_resolution(&long, &res, long.area.x1, &phase, seed)?;
                }
            }
            long = self.press_until(&long, phase, seed.wrapping_add(k as u64), until);
            tracing::debug!(
                phase = k,
                length = long.used_length(),
                "sheet of sets pressed"
            );
            if !budgeted && long.used_length() <= on.area.x1 {
                break;
            }
        }
        let mut sheet = emptied(&long);
        sheet.area.x1 = on.area.x1;
        for (item, pose) in long.placed {
            let within = sheet
                .area
                .bounds(&sheet.table[item.part][pose.orient], f64::INFINITY)
                .is_some_and(|b| pose.gx <= b.x_hi);
            if !within {
                return None;
            }
            sheet.placed.push((item, pose));
        }
        Some(sheet)
    }

    /// The sheet with its layout moved onto `res` (`engine::rebase`) and its usable area
    /// ending at `x1`, made feasible there by a short local search (an insertion's rounds,
    /// within `slice`'s deadline) where rounding left an overlap; `None` where that fails.
    fn at_resolution(
        &self,
        sheet: &FilledSheet,
        res: &Resolution,
        x1: f64,
        slice: &Slice,
        seed: u64,
    ) -> Option<FilledSheet> {
        let mut area = sheet_area(
            self.problem,
            sheet.sheet,
            &sheet.frame,
            res.cell,
            res.margin,
        );
        area.x1 = x1;
        let mut poses = rebase(sheet, res, &area);
        let lists: Vec<&[Oriented]> = sheet
            .placed
            .iter()
            .map(|(i, _)| res.table[i.part].as_slice())
            .collect();
        let moves = self.problem.settings.move_set(0);
        let mut c = Compactor::new(self.eval, &area, lists, poses.clone(), seed, moves);
        if c.total_overlap() > 0 {
            let stop = AtomicBool::new(false);
            let budget = Budget {
                max_rounds: Some(INSERT_ROUNDS),
                ..slice.budget(self.cancel, &stop)
            };
            if !c.separate_in_place(&budget) {
                return None;
            }
            poses = c.poses().to_vec();
        }
        Some(FilledSheet {
            area,
            table: res.table.clone(),
            placed: sheet.placed.iter().map(|(i, _)| *i).zip(poses).collect(),
            nudges: Vec::new(),
            sheet: sheet.sheet,
            frame: sheet.frame,
        })
    }
}

/// The phases of pressing a sheet of sets: (fraction of the final cells per part, share of the
/// time). The first runs on the search's raster, whatever its fraction; the last at four times
/// the final cells, as the strip search's last phase (`engine::PHASES`) wins back raster slack.
const PRESS_PHASES: [(f64, f64); 4] = [(0.5, 0.35), (1.0, 0.3), (2.0, 0.2), (4.0, 0.15)];

#[cfg(test)]
mod tests {
    use super::super::tests::{cpu_search, items};
    use super::*;
    use crate::cancel::CancelHandle;
    use crate::nest2d::engine::resolution;
    use crate::nest2d::model::{Problem, SheetSpec};
    use kerf_kernels::CpuEvaluator;
    use std::time::Duration;

    /// `squares` 10 x 10 squares and `strips` 2 x 5 strips on 21 x 21 sheets (a cell of slack
    /// around two squares side by side).
    fn problem(squares: u32, strips: u32) -> Problem {
        let mut p = super::super::patterns::tests::problem(squares, strips);
        p.sheets = vec![SheetSpec::rectangle("s", 21.0, 21.0)];
        p.settings.max_iterations = Some(400);
        p
    }

    fn pool(p: &Problem) -> Vec<Item> {
        (0..p.parts.len())
            .flat_map(|part| items(part, p.parts[part].quantity))
            .collect()
    }

    /// A sheet's layout as plain values: each part's kind, orientation and cell.
    fn layout(f: &FilledSheet) -> Vec<(usize, usize, i32, i32)> {
        f.placed
            .iter()
            .map(|(i, q)| (i.part, q.orient, q.gx, q.gy))
            .collect()
    }

    /// A plan of `p`'s whole pool by sets, as `improve` makes one: the plan and the pool left.
    fn plan_of(p: &Problem, construction: usize) -> (Vec<FilledSheet>, Vec<Item>) {
        let cancel = CancelHandle::default();
        let search = cpu_search(p, &cancel);
        let coarse = resolution(p, 32.0);
        let fine = resolution(p, 64.0);
        let mut opener = SheetOpener::new(p, &fine);
        let far = Instant::now() + Duration::from_secs(60);
        let mut one = pool(p)[..1].to_vec();
        let on = emptied(&opener.open(&CpuEvaluator, &mut one, far).flatten().unwrap());
        let mut opener = SheetOpener::new(p, &fine);
        let mut left = pool(p);
        let slice = Slice {
            deadline: far,
            rounds: p.settings.max_iterations,
            retries: 0,
            press_refused: false,
        };
        let plan = search.plan_by_sets(&mut left, &mut opener, &on, &coarse, construction, slice);
        (plan, left)
    }

    fn count(items: impl Iterator<Item = Item>, part: usize) -> usize {
        items.filter(|i| i.part == part).count()
    }

    #[test]
    fn a_job_of_whole_sets_cuts_one_layout_of_as_many_sets_as_a_sheet_holds() {
        // sets of a square and two strips (120): a 441 sheet holds three at 0.9, 82 %; eight
        // sets need three sheets, two full ones and the two sets left over
        let p = problem(8, 16);
        let (plan, left) = plan_of(&p, 4);
        assert_eq!(plan.len(), 2);
        let mut seen: Vec<Item> = left.clone();
        for sheet in &plan {
            let items = || sheet.placed.iter().map(|(i, _)| *i);
            assert_eq!((count(items(), 0), count(items(), 1)), (3, 6));
            let (lists, poses) = (sheet.orientation_lists(), sheet.poses());
            let c = Compactor::new(
                &CpuEvaluator,
                &sheet.area,
                lists,
                poses,
                1,
                Default::default(),
            );
            assert_eq!(c.total_overlap(), 0, "a sheet of sets overlaps");
            assert!(sheet.used_length() <= 21.0 + 1e-9);
            seen.extend(items());
        }
        // every copy once: on a sheet or left for the rebuild
        assert_eq!(
            (
                count(left.iter().copied(), 0),
                count(left.iter().copied(), 1)
            ),
            (2, 4)
        );
        assert_eq!(seen.len(), 24);
        for (k, a) in seen.iter().enumerate() {
            assert!(!seen[k + 1..].iter().any(|b| b.same_unit(a)), "{a:?} twice");
        }
    }

    #[test]
    fn a_job_of_whole_sets_with_none_left_over_keeps_every_sheet_the_same_layout() {
        // six sets, three a sheet: a construction of one set a sheet becomes two sheets cut
        // from one layout, and emptying the last (as full as the first) does not press them
        let p = problem(6, 12);
        let cancel = CancelHandle::default();
        let search = cpu_search(&p, &cancel);
        let fine = resolution(&p, 64.0);
        let far = Instant::now() + Duration::from_secs(60);
        let all = pool(&p);
        // set k: square k and strips 2k and 2k + 1, alone on a sheet
        let construction: Vec<FilledSheet> = (0..6)
            .map(|k| {
                let mut set: Vec<Item> = all
                    .iter()
                    .filter(|i| i.instance / (1 + i.part as u32) == k)
                    .copied()
                    .collect();
                let sheet = SheetOpener::new(&p, &fine)
                    .open(&CpuEvaluator, &mut set, far)
                    .flatten()
                    .unwrap();
                assert!(set.is_empty());
                sheet
            })
            .collect();
        let sheets = search
            .improve(&construction, &resolution(&p, 32.0), far)
            .expect("fewer sheets than one set a sheet");
        assert_eq!(sheets.len(), 2);
        assert_eq!(layout(&sheets[0]), layout(&sheets[1]));
        assert_eq!(count(sheets[0].placed.iter().map(|(i, _)| *i), 1), 6);
    }

    #[test]
    fn under_an_iteration_budget_a_plan_by_sets_repeats() {
        let p = problem(8, 16);
        let layouts = |plan: &[FilledSheet]| plan.iter().map(layout).collect::<Vec<_>>();
        let (first, _) = plan_of(&p, 4);
        let (again, _) = plan_of(&p, 4);
        assert!(!first.is_empty());
        assert_eq!(layouts(&first), layouts(&again));
    }

    #[test]
    fn no_plan_where_the_job_is_no_sets_or_the_sets_need_as_many_sheets_as_the_construction() {
        // copies 8 and 15: no common divisor, no sets
        let (plan, left) = plan_of(&problem(8, 15), 4);
        assert!(plan.is_empty());
        assert_eq!(left.len(), 23);
        // three sheets of sets, and the construction took three
        let (plan, left) = plan_of(&problem(8, 16), 3);
        assert!(plan.is_empty());
        assert_eq!(left.len(), 24);
        // sets of two squares and a strip (210): a sheet holds one, so six sets would need six
        // sheets where their area needs four at 0.9 (1,260 over 397): no plan, the rebuild
        // mixes them
        let (plan, left) = plan_of(&problem(12, 6), 8);
        assert!(plan.is_empty());
        assert_eq!(left.len(), 18);
    }
}
