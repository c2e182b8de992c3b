//! Raster shapes: a part in one orientation as runs of occupied cells, by row and by column.

/// A half-open run of cells `[start, end)`.
pub type Run = [u32; 2];

/// A part raster: occupied cells of a `width` x `height` box, stored as row runs (for
/// horizontal scans and fit tests) and column runs (for vertical scans and fit jumps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartRaster {
    width: u32,
    height: u32,
    row_start: Vec<u32>,
    row_runs: Vec<Run>,
    col_start: Vec<u32>,
    col_runs: Vec<Run>,
    area: u64,
    /// The occupied cells as disjoint rectangles `[x0, y0, x1, y1)`: row runs merged with the
    /// identical runs of the rows above. Whole-map evaluations cost a few lookups per rectangle.
    rects: Vec<[u32; 4]>,
    /// Each row's run where the row has exactly one, else `SEVERAL_RUNS`; `col_spans` the same
    /// for columns. Most lanes of a part hold one run, and a line scan reads them straight from
    /// here instead of slicing the runs (the hot loop of `cpu::scan_into_differences`).
    row_spans: Vec<Run>,
    col_spans: Vec<Run>,
}

/// A lane's span when the lane holds no run or more than one (`PartRaster::row_spans`).
pub const SEVERAL_RUNS: Run = [u32::MAX, u32::MAX];

/// Each lane's single run, or `SEVERAL_RUNS`.
fn single_runs(starts: &[u32], runs: &[Run]) -> Vec<Run> {
    starts
        .windows(2)
        .map(|w| match &runs[w[0] as usize..w[1] as usize] {
            [one] => *one,
            _ => SEVERAL_RUNS,
        })
        .collect()
}

impl PartRaster {
    /// Builds a `width` x `height` raster from a test of each cell (`occupied(x, y)`).
    pub fn from_cells(width: u32, height: u32, occupied: impl Fn(u32, u32) -> bool) -> PartRaster {
        let rows = (0..height)
            .map(|y| {
                let row: Vec<bool> = (0..width).map(|x| occupied(x, y)).collect();
                runs_of(&row)
            })
            .collect();
        PartRaster::from_row_runs(width, rows)
    }

    /// Builds a raster from sorted, disjoint runs per row (`rows.len() == height`).
    pub fn from_row_runs(width: u32, rows: Vec<Vec<Run>>) -> PartRaster {
        let height = rows.len() as u32;
        let mut grid = vec![false; (width * height) as usize];
        let mut row_start = Vec::with_capacity(rows.len() + 1);
        let mut row_runs = Vec::new();
        let mut area = 0u64;
        for (y, runs) in rows.iter().enumerate() {
            row_start.push(row_runs.len() as u32);
            for &[a, b] in runs {
                debug_assert!(a < b && b <= width);
                for x in a..b {
                    grid[y * width as usize + x as usize] = true;
                }
            }
            // re-derive runs from the grid so overlapping input runs are merged
            let row = &grid[y * width as usize..(y + 1) * width as usize];
            for r in runs_of(row) {
                area += (r[1] - r[0]) as u64;
                row_runs.push(r);
            }
        }
        row_start.push(row_runs.len() as u32);
        let mut col_start = Vec::with_capacity(width as usize + 1);
        let mut col_runs = Vec::new();
        let mut col = vec![false; height as usize];
        for x in 0..width as usize {
            col_start.push(col_runs.len() as u32);
            for y in 0..height as usize {
                col[y] = grid[y * width as usize + x];
            }
            col_runs.extend(runs_of(&col));
        }
        col_start.push(col_runs.len() as u32);
        let rects = merge_rows(&row_start, &row_runs);
        let row_spans = single_runs(&row_start, &row_runs);
        let col_spans = single_runs(&col_start, &col_runs);
        PartRaster {
            width,
            height,
            row_start,
            row_runs,
            col_start,
            col_runs,
            area,
            rects,
            row_spans,
            col_spans,
        }
    }

    /// The occupied cells as disjoint rectangles `[x0, y0, x1, y1)`.
    pub fn rects(&self) -> &[[u32; 4]] {
        &self.rects
    }

    pub fn width(&self) -> u32 {
        self.width
    }
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Number of occupied cells.
    pub fn area(&self) -> u64 {
        self.area
    }
    pub fn row(&self, y: u32) -> &[Run] {
        &self.row_runs[self.row_start[y as usize] as usize..self.row_start[y as usize + 1] as usize]
    }
    pub fn col(&self, x: u32) -> &[Run] {
        &self.col_runs[self.col_start[x as usize] as usize..self.col_start[x as usize + 1] as usize]
    }
    /// Each row's single run, or `SEVERAL_RUNS` where it has none or several (then `row`).
    pub fn row_spans(&self) -> &[Run] {
        &self.row_spans
    }
    /// Each column's single run, or `SEVERAL_RUNS` (then `col`).
    pub fn col_spans(&self) -> &[Run] {
        &self.col_spans
    }
    pub fn contains(&self, x: u32, y: u32) -> bool {
        x < self.width && y < self.height && self.row(y).iter().any(|r| r[0] <= x && x < r[1])
    }
    /// Total number of row runs (a measure of evaluation cost).
    pub fn run_count(&self) -> usize {
        self.row_runs.len()
    }

    /// Each cell's depth inside the part, row-major over the box: its chessboard distance to
    /// the nearest empty cell (cells beyond the box are empty), so 0 for an empty cell and 1
    /// along the outline. Two chamfer passes, exact for that metric.
    pub fn depths(&self) -> Vec<u32> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut d = vec![0u32; w * h];
        for y in 0..h {
            for r in self.row(y as u32) {
                d[y * w + r[0] as usize..y * w + r[1] as usize].fill(u32::MAX);
            }
        }
        // a cell's depth is one more than its least neighbour's (outside the box: 0)
        let at = |d: &[u32], x: isize, y: isize| -> u32 {
            if x < 0 || y < 0 || x >= w as isize || y >= h as isize {
                0
            } else {
                d[y as usize * w + x as usize]
            }
        };
        for y in 0..h as isize {
            for x in 0..w as isize {
                let i = y as usize * w + x as usize;
                if d[i] == 0 {
                    continue;
                }
                let m = [(-1, -1), (0, -1), (1, -1), (-1, 0)]
                    .iter()
                    .map(|&(dx, dy)| at(&d, x + dx, y + dy))
                    .min()
                    .unwrap_or(0);
                d[i] = d[i].min(m.saturating_add(1));
            }
        }
        for y in (0..h as isize).rev() {
            for x in (0..w as isize).rev() {
                let i = y as usize * w + x as usize;
                if d[i] == 0 {
                    continue;
                }
                let m = [(1, 1), (0, 1), (-1, 1), (1, 0)]
                    .iter()
                    .map(|&(dx, dy)| at(&d, x + dx, y + dy))
                    .min()
                    .unwrap_or(0);
                d[i] = d[i].min(m.saturating_add(1));
            }
        }
        d
    }

    /// For each threshold, the cells at least that deep (`depths`) as a raster of the same box,
    /// so that it lies where the part lies; None where no cell is that deep.
    pub fn depth_levels(&self, thresholds: &[u32]) -> Vec<Option<PartRaster>> {
        if thresholds.is_empty() {
            // no levels asked for (the default): skip the distance transform altogether
            return Vec::new();
        }
        let d = self.depths();
        let w = self.width as usize;
        thresholds
            .iter()
            .map(|&t| {
                d.iter().any(|&v| v >= t).then(|| {
                    PartRaster::from_cells(self.width, self.height, |x, y| {
                        d[y as usize * w + x as usize] >= t
                    })
                })
            })
            .collect()
    }
}

/// Rectangles from row runs: a run continues the rectangle of the identical run in the row
/// below it, else starts a new one.
fn merge_rows(row_start: &[u32], row_runs: &[Run]) -> Vec<[u32; 4]> {
    let mut done = Vec::new();
    // rectangles still open at the previous row, keyed by their run
    let mut open: Vec<[u32; 4]> = Vec::new();
    for y in 0..row_start.len().saturating_sub(1) {
        let runs = &row_runs[row_start[y] as usize..row_start[y + 1] as usize];
        let mut next = Vec::with_capacity(runs.len());
        for r in runs {
            match open.iter().position(|o| o[0] == r[0] && o[2] == r[1]) {
                Some(i) => {
                    let mut o = open.swap_remove(i);
                    o[3] = y as u32 + 1;
                    next.push(o);
                }
                None => next.push([r[0], y as u32, r[1], y as u32 + 1]),
            }
        }
        done.append(&mut open);
        open = next;
    }
    done.append(&mut open);
    done.sort_unstable_by_key(|r| (r[1], r[0]));
    done
}

fn runs_of(cells: &[bool]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        if cells[i] {
            let s = i;
            while i < cells.len() && cells[i] {
                i += 1;
            }
            out.push([s as u32, i as u32]);
        } else {
            i += 1;
        }
    }
    out
}

/// A part raster placed at integer cell offset (`x`, `y`) with a penalty weight
/// (fixed point: `WEIGHT_ONE` is weight 1).
#[derive(Clone, Copy, Debug)]
pub struct Placed<'a> {
    pub raster: &'a PartRaster,
    pub x: i32,
    pub y: i32,
    pub weight: u32,
}

/// Fixed-point unit of pair weights, so that every backend sums the same integers.
pub const WEIGHT_ONE: u32 = 256;

/// Number of cells shared by two placed rasters.
pub fn pair_overlap(a: &PartRaster, ax: i32, ay: i32, b: &PartRaster, bx: i32, by: i32) -> u64 {
    let y0 = ay.max(by);
    let y1 = (ay + a.height as i32).min(by + b.height as i32);
    if y0 >= y1 || ax >= bx + b.width as i32 || bx >= ax + a.width as i32 {
        return 0;
    }
    let mut total = 0u64;
    for y in y0..y1 {
        let ra = a.row((y - ay) as u32);
        let rb = b.row((y - by) as u32);
        let (mut i, mut j) = (0, 0);
        while i < ra.len() && j < rb.len() {
            let (a0, a1) = (ra[i][0] as i32 + ax, ra[i][1] as i32 + ax);
            let (b0, b1) = (rb[j][0] as i32 + bx, rb[j][1] as i32 + bx);
            let lo = a0.max(b0);
            let hi = a1.min(b1);
            if hi > lo {
                total += (hi - lo) as u64;
            }
            if a1 < b1 {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_hold_a_lanes_single_run_and_mark_the_others() {
        // rows of one run, two runs and one run; so column 1 has two runs and column 3 none
        let r =
            PartRaster::from_row_runs(4, vec![vec![[0, 3]], vec![[0, 1], [2, 3]], vec![[1, 2]]]);
        assert_eq!(r.row_spans(), &[[0, 3], SEVERAL_RUNS, [1, 2]]);
        assert_eq!(r.col_spans(), &[[0, 2], SEVERAL_RUNS, [0, 2], SEVERAL_RUNS]);
        for y in 0..3 {
            let s = r.row_spans()[y as usize];
            assert_eq!(s != SEVERAL_RUNS, r.row(y).len() == 1);
        }
    }

    #[test]
    fn depths_count_from_the_outline_in_and_levels_keep_the_box() {
        // a 5 x 4 block with its top-right cell missing
        let r = PartRaster::from_cells(5, 4, |x, y| !(x == 4 && y == 3));
        let d = r.depths();
        let row = |y: usize| d[y * 5..(y + 1) * 5].to_vec();
        assert_eq!(row(0), vec![1, 1, 1, 1, 1]);
        assert_eq!(row(1), vec![1, 2, 2, 2, 1]);
        assert_eq!(row(2), vec![1, 2, 2, 1, 1]);
        assert_eq!(row(3), vec![1, 1, 1, 1, 0]);
        let levels = r.depth_levels(&[2, 3]);
        let deep = levels[0].as_ref().expect("cells 2 deep");
        assert_eq!((deep.width(), deep.height(), deep.area()), (5, 4, 5));
        assert!(deep.contains(1, 1) && deep.contains(2, 2) && !deep.contains(3, 2));
        assert!(levels[1].is_none());
    }
}
