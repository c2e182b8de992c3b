//! The CPU backend: word-wide fit tests with jumps; line scans that add each pair of runs as a
//! trapezoid in a second-difference array (so a whole line of positions costs one pass over the
//! run pairs plus one over the positions, instead of a raster scan per position); whole maps
//! against the sheet from its summed-area table, rows shared among the cores.

use crate::lines::{best_of, LineBest, Mover, OverlapMeasure, Shape};
use crate::occupancy::Occupancy;
use crate::raster::{PartRaster, Placed, Run, SEVERAL_RUNS};
use crate::sheet::{Candidate, SheetSat};
use crate::weighted::WeightedTable;
use crate::{Axis, Bounds, Evaluator};

#[derive(Clone, Copy, Debug, Default)]
pub struct CpuEvaluator;

impl Evaluator for CpuEvaluator {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn first_fit(&self, occ: &Occupancy, part: &PartRaster, b: Bounds) -> Option<(i32, i32)> {
        let (w, h) = (part.width() as i32, part.height() as i32);
        let x_lo = b.x_lo.max(0);
        let x_hi = b.x_hi.min(occ.width() as i32 - w);
        let y_lo = b.y_lo.max(0);
        let y_hi = b.y_hi.min(occ.height() as i32 - h);
        if x_lo > x_hi || y_lo > y_hi {
            return None;
        }
        // probe columns: the raster columns with the longest runs, checked against the grid's
        // longest free run per column before any cell is touched
        let mut probes: Vec<(u32, u32)> = (0..part.width())
            .map(|k| {
                (
                    k,
                    part.col(k).iter().map(|r| r[1] - r[0]).max().unwrap_or(0),
                )
            })
            .collect();
        probes.sort_by_key(|&(_, need)| std::cmp::Reverse(need));
        probes.truncate(6);
        'columns: for x in x_lo..=x_hi {
            for &(k, need) in &probes {
                if occ.max_free_run((x + k as i32) as u32) < need {
                    continue 'columns;
                }
            }
            let mut y = y_lo;
            while y <= y_hi {
                match collision(occ, part, x, y) {
                    None => return Some((x, y)),
                    Some((cx, cy)) => {
                        let k = (cx - x) as u32;
                        let r = (cy - y) as u32;
                        let run = part
                            .col(k)
                            .iter()
                            .find(|run| run[0] <= r && r < run[1])
                            .copied()
                            .unwrap_or([r, r + 1]);
                        // every y' that puts this column's run over the obstacle collides too,
                        // and the obstacle goes on up its column to the next free cell
                        let free = occ.first_free_in_column(cx as u32, cy as u32);
                        y = free as i32 - run[0] as i32;
                    }
                }
            }
        }
        None
    }

    fn occupancy_overlap_maps(&self, occ: &Occupancy, candidates: &[Candidate]) -> Vec<Vec<u32>> {
        let sat = SheetSat::of(occ);
        candidates.iter().map(|c| overlap_map(&sat, c)).collect()
    }

    fn weighted_overlap_maps(&self, others: &[Placed], candidates: &[Candidate]) -> Vec<Vec<u64>> {
        // lines (one row or one column of positions) by the trapezoid scan, which needs no
        // table; rectangles from the weighted table (the answers are the same integers)
        let table = if candidates.iter().all(Candidate::is_line) {
            None
        } else {
            Some(WeightedTable::build(others))
        };
        candidates
            .iter()
            .map(|c| {
                let (nx, ny) = c.dims();
                match &table {
                    _ if nx == 0 => Vec::new(),
                    None => {
                        let mut out = Vec::with_capacity(nx.max(ny) as usize);
                        scan_candidate(c, others, OverlapMeasure::Cells, |v| out.push(v));
                        out
                    }
                    Some(t) => map_rows(c, |x, y| t.overlap_at(c, x, y)),
                }
            })
            .collect()
    }

    fn best_on_lines(&self, scene: &[Shape], movers: &[Mover]) -> Vec<Vec<Option<LineBest>>> {
        movers
            .iter()
            .map(|m| {
                let others = m.others(scene);
                m.lines
                    .iter()
                    .map(|c| match c.dims() {
                        (0, _) => None,
                        (nx, ny) if nx == 1 || ny == 1 => {
                            let mut best = None;
                            let mut at = 0;
                            scan_candidate(c, &others, m.measure, |v| {
                                best = LineBest::keep_least(best, v, at);
                                at += 1;
                            });
                            best
                        }
                        // (not a line: from the whole map, whose table sums cells)
                        _ if m.measure == OverlapMeasure::Cells => {
                            best_of(&self.weighted_overlap_maps(&others, &[*c])[0])
                        }
                        // (or row by row, in the map's order)
                        _ => {
                            let b = c.bounds;
                            let mut values = Vec::new();
                            for y in b.y_lo..=b.y_hi {
                                scan_line_into::<true>(
                                    c.raster,
                                    y,
                                    (b.x_lo, b.x_hi),
                                    &others,
                                    m.measure,
                                    |v| values.push(v),
                                );
                            }
                            best_of(&values)
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn overlap_line(
        &self,
        part: &PartRaster,
        axis: Axis,
        fixed: i32,
        range: (i32, i32),
        others: &[Placed],
    ) -> Vec<u64> {
        match axis {
            Axis::X => scan_line::<true>(part, fixed, range, others),
            Axis::Y => scan_line::<false>(part, fixed, range, others),
        }
    }
}

/// One candidate's map against the sheet.
fn overlap_map(sat: &SheetSat, c: &Candidate) -> Vec<u32> {
    map_rows(c, |x, y| sat.overlap_at(c.raster, x, y))
}

/// `value(x, y)` at every position of a candidate's bounds, row-major, rows of positions shared
/// among the cores.
fn map_rows<T: Copy + Default + Send>(
    c: &Candidate,
    value: impl Fn(i32, i32) -> T + Sync,
) -> Vec<T> {
    let (nx, ny) = c.dims();
    let mut out = vec![T::default(); nx as usize * ny as usize];
    if out.is_empty() {
        return out;
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(ny as usize);
    let rows_per_thread = (ny as usize).div_ceil(threads);
    let value = &value;
    std::thread::scope(|scope| {
        for (t, chunk) in out.chunks_mut(rows_per_thread * nx as usize).enumerate() {
            scope.spawn(move || {
                for (k, v) in chunk.iter_mut().enumerate() {
                    let row = t * rows_per_thread + k / nx as usize;
                    let x = c.bounds.x_lo + (k % nx as usize) as i32;
                    let y = c.bounds.y_lo + row as i32;
                    *v = value(x, y);
                }
            });
        }
    });
    out
}

/// Rows of a raster for an X scan, columns for a Y scan (monomorphised so it inlines).
#[inline(always)]
fn lane<const ALONG_X: bool>(r: &PartRaster, i: u32) -> &[Run] {
    if ALONG_X {
        r.row(i)
    } else {
        r.col(i)
    }
}

/// Each lane's single run or `SEVERAL_RUNS`, rows for an X scan and columns for a Y scan.
#[inline(always)]
fn spans<const ALONG_X: bool>(r: &PartRaster) -> &[Run] {
    if ALONG_X {
        r.row_spans()
    } else {
        r.col_spans()
    }
}

/// (number of lanes, extent along the scan) of a raster.
#[inline(always)]
fn dims<const ALONG_X: bool>(r: &PartRaster) -> (i32, i32) {
    if ALONG_X {
        (r.height() as i32, r.width() as i32)
    } else {
        (r.width() as i32, r.height() as i32)
    }
}

fn scan_line<const ALONG_X: bool>(
    part: &PartRaster,
    fixed: i32,
    range: (i32, i32),
    others: &[Placed],
) -> Vec<u64> {
    let mut out = Vec::with_capacity((range.1 - range.0 + 1).max(0) as usize);
    scan_line_into::<ALONG_X>(part, fixed, range, others, OverlapMeasure::Cells, |v| {
        out.push(v)
    });
    out
}

/// `scan_line_into` for a candidate that is one row (`ny == 1`: scanned along x) or one
/// column of positions.
fn scan_candidate(
    c: &Candidate,
    others: &[Placed],
    measure: OverlapMeasure,
    emit: impl FnMut(u64),
) {
    let b = c.bounds;
    if c.dims().1 == 1 {
        scan_line_into::<true>(c.raster, b.y_lo, (b.x_lo, b.x_hi), others, measure, emit)
    } else {
        scan_line_into::<false>(c.raster, b.x_lo, (b.y_lo, b.y_hi), others, measure, emit)
    }
}

/// The weighted overlap at each position of the line, in order, handed to `emit`.
fn scan_line_into<const ALONG_X: bool>(
    part: &PartRaster,
    fixed: i32,
    range: (i32, i32),
    others: &[Placed],
    measure: OverlapMeasure,
    emit: impl FnMut(u64),
) {
    let (lo, hi) = range;
    if hi < lo {
        return;
    }
    if measure != OverlapMeasure::Cells {
        return scan_shape_by_shape::<ALONG_X>(part, fixed, range, others, measure, emit);
    }
    let extent_a = dims::<ALONG_X>(part).1;
    // The array spans every corner of the others in reach, and the line: an other at o_off
    // puts its corners between o_off - extent_a and o_off + its extent. (It runs past hi, where
    // the integration stops, so that no corner needs a bounds test of its own; and it starts
    // where the first other in reach does, so that little lies before the line to integrate.)
    let (mut lowest, mut highest) = (lo, hi + 1);
    for o in others {
        if let Some((o_off, o_extent)) = in_reach::<ALONG_X>(o, (lo, hi), extent_a) {
            lowest = lowest.min(o_off - extent_a);
            highest = highest.max(o_off + o_extent);
        }
    }
    let base = lowest - 1;
    let len = (highest + 1 - base) as usize;
    DIFFERENCES.with_borrow_mut(|d| {
        d.clear();
        d.resize(len, 0);
        scan_into_differences::<ALONG_X>(part, fixed, (lo, hi), base, others, d, emit)
    })
}

/// Where `o` lies along the scan (its offset and extent) if the mover, `extent_a` long and at
/// any position of `lo..=hi` (covering `[p, p + extent_a)`), can meet it; None if out of reach.
#[inline(always)]
fn in_reach<const ALONG_X: bool>(
    o: &Placed,
    (lo, hi): (i32, i32),
    extent_a: i32,
) -> Option<(i32, i32)> {
    let o_off = if ALONG_X { o.x } else { o.y };
    let o_extent = dims::<ALONG_X>(o.raster).1;
    (o_off + o_extent > lo && o_off < hi + extent_a).then_some((o_off, o_extent))
}

thread_local! {
    /// A line scan's second differences, kept between the scans of a thread: a search scans
    /// many lines a second, and allocating the array each time cost about 2 % of a strip run.
    /// Borrowed for the whole scan, so a scan's `emit` must not start another scan.
    static DIFFERENCES: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `scan_line_into`'s work, on a zeroed array `d` whose index 0 is position `base`.
fn scan_into_differences<const ALONG_X: bool>(
    part: &PartRaster,
    fixed: i32,
    (lo, hi): (i32, i32),
    base: i32,
    others: &[Placed],
    d: &mut [i64],
    mut emit: impl FnMut(u64),
) {
    let extent_a = dims::<ALONG_X>(part).1;
    // the line's ends as indices of d
    let (lo_i, hi_i) = (lo - base, hi - base);
    for o in others {
        let Some((o_off, _)) = in_reach::<ALONG_X>(o, (lo, hi), extent_a) else {
            continue;
        };
        let Some(lanes) = shared_lanes::<ALONG_X>(part, fixed, o) else {
            continue;
        };
        let (off, w) = (o_off - base, o.weight as i64);
        add_shared_lanes::<ALONG_X>(d, part, fixed, o, lanes, off, w, (lo_i, hi_i));
    }
    // integrate twice: f(x) = sum over k < x of slope(k); the line's values are f at lo..=hi
    let (first, last) = (lo_i as usize, hi_i as usize);
    let (mut slope, mut f) = (0i64, 0i64);
    for &dv in &d[..first] {
        slope += dv;
        f += slope;
    }
    for &dv in &d[first..=last] {
        emit(f.max(0) as u64);
        slope += dv;
        f += slope;
    }
}

/// `scan_line_into` for a measure that is not a sum of cells: each shape in reach gets its own
/// difference array over the positions where it can meet the mover, integrated to its shared
/// cells at each position, whose cost times the shape's weight is added to the line's values.
fn scan_shape_by_shape<const ALONG_X: bool>(
    part: &PartRaster,
    fixed: i32,
    (lo, hi): (i32, i32),
    others: &[Placed],
    measure: OverlapMeasure,
    mut emit: impl FnMut(u64),
) {
    let extent_a = dims::<ALONG_X>(part).1;
    let mut line = vec![0u64; (hi - lo + 1) as usize];
    DIFFERENCES.with_borrow_mut(|d| {
        for o in others {
            let Some((o_off, o_extent)) = in_reach::<ALONG_X>(o, (lo, hi), extent_a) else {
                continue;
            };
            let Some(lanes) = shared_lanes::<ALONG_X>(part, fixed, o) else {
                continue;
            };
            // the array spans every corner this shape can put (see `scan_line_into`)
            let base = o_off - extent_a - 1;
            d.clear();
            d.resize((o_off + o_extent + 2 - base) as usize, 0);
            let (off, ends) = (o_off - base, (lo - base, hi - base));
            add_shared_lanes::<ALONG_X>(d, part, fixed, o, lanes, off, 1, ends);
            // integrate twice (as `scan_into_differences` does), over this shape's reach
            let w = o.weight as u64;
            let (mut slope, mut cells) = (0i64, 0i64);
            for (i, &dv) in d.iter().enumerate() {
                let p = base + i as i32;
                if p > hi {
                    break;
                }
                if p >= lo && cells > 0 {
                    line[(p - lo) as usize] += w * measure.cost(cells as u64);
                }
                slope += dv;
                cells += slope;
            }
        }
    });
    line.into_iter().for_each(&mut emit);
}

/// The lanes (rows for an X scan, columns for a Y scan) that `part`, its first lane at `fixed`,
/// shares with `o`: the half-open range of lane numbers, None when they share none.
#[inline(always)]
fn shared_lanes<const ALONG_X: bool>(
    part: &PartRaster,
    fixed: i32,
    o: &Placed,
) -> Option<(i32, i32)> {
    let o_lane0 = if ALONG_X { o.y } else { o.x };
    let l0 = fixed.max(o_lane0);
    let l1 = (fixed + dims::<ALONG_X>(part).0).min(o_lane0 + dims::<ALONG_X>(o.raster).0);
    (l0 < l1).then_some((l0, l1))
}

/// Adds to `d` the trapezoid of every pair of runs `part` and `o` have in the lanes `(l0, l1)`
/// they share, at weight `w` (`off`: `o`'s offset along the scan as an index of `d`; `ends`:
/// the line's ends as indices of `d`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn add_shared_lanes<const ALONG_X: bool>(
    d: &mut [i64],
    part: &PartRaster,
    fixed: i32,
    o: &Placed,
    (l0, l1): (i32, i32),
    off: i32,
    w: i64,
    ends: (i32, i32),
) {
    let o_lane0 = if ALONG_X { o.y } else { o.x };
    // most lanes hold one run each, read straight from the spans
    let spans_a = &spans::<ALONG_X>(part)[(l0 - fixed) as usize..(l1 - fixed) as usize];
    let spans_b = &spans::<ALONG_X>(o.raster)[(l0 - o_lane0) as usize..(l1 - o_lane0) as usize];
    for (k, (&a, &b)) in spans_a.iter().zip(spans_b).enumerate() {
        if a != SEVERAL_RUNS && b != SEVERAL_RUNS {
            add_trapezoid(d, a, b, off, w, ends);
            continue;
        }
        let ln = l0 + k as i32;
        let ra = lane::<ALONG_X>(part, (ln - fixed) as u32);
        let rb = lane::<ALONG_X>(o.raster, (ln - o_lane0) as u32);
        add_lane_pairs(d, ra, rb, off, w, ends);
    }
}

/// `add_trapezoid` for every pair of runs of two lanes, one of which holds no run or several:
/// the less common case, kept out of the hot loop so that its registers stay free.
#[cold]
#[inline(never)]
fn add_lane_pairs(d: &mut [i64], ra: &[Run], rb: &[Run], off: i32, w: i64, ends: (i32, i32)) {
    for &b in rb {
        for &a in ra {
            add_trapezoid(d, a, b, off, w, ends);
        }
    }
}

/// Adds to `d` (second differences along the line, `off` the other's offset as an index of
/// `d`) the overlap of run `a` of the mover with run `b` of another shape in the same lane, at
/// weight `w`, as the mover slides: a trapezoid over the positions where they meet, rising
/// from where `a` starts touching `b`, flat while the shorter lies within the longer. Pairs
/// whose trapezoid misses the line's ends `(lo_i, hi_i)` add nothing.
#[inline(always)]
fn add_trapezoid(d: &mut [i64], a: Run, b: Run, off: i32, w: i64, (lo_i, hi_i): (i32, i32)) {
    let (a0, a1) = (a[0] as i32, a[1] as i32);
    let (b0, b1) = (b[0] as i32 + off, b[1] as i32 + off);
    let m = (a1 - a0).min(b1 - b0);
    let (x1, x4) = (b0 - a1, b1 - a0);
    if x4 <= lo_i || x1 >= hi_i {
        return;
    }
    debug_assert!(x1 > 0 && (x4 as usize) < d.len());
    let (x1, x4, m) = (x1 as usize, x4 as usize, m as usize);
    d[x1] += w;
    d[x1 + m] -= w;
    d[x4 - m] -= w;
    d[x4] += w;
}

/// The first occupied grid cell under `part` at (x, y), scanning rows bottom-up.
fn collision(occ: &Occupancy, part: &PartRaster, x: i32, y: i32) -> Option<(i32, i32)> {
    for r in 0..part.height() {
        let gy = (y + r as i32) as u32;
        for run in part.row(r) {
            let a = (x + run[0] as i32) as u32;
            let b = (x + run[1] as i32) as u32;
            if let Some(cx) = occ.first_set_in_row(gy, a, b) {
                return Some((cx as i32, gy as i32));
            }
        }
    }
    None
}
