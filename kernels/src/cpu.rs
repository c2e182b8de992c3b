//! The CPU backend: word-wide fit tests with jumps, and line scans that add each pair of runs as
//! a trapezoid in a second-difference array (so a whole line of positions costs one pass over the
//! run pairs plus one over the positions, instead of a raster scan per position).

use crate::occupancy::Occupancy;
use crate::raster::{PartRaster, Placed, Run};
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
        probes.sort_by(|a, b| b.1.cmp(&a.1));
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
                        // every y' that puts this column's run over the obstacle collides too
                        y = cy - run[0] as i32 + 1;
                    }
                }
            }
        }
        None
    }

    fn overlap_line(
        &self,
        part: &PartRaster,
        axis: Axis,
        fixed: i32,
        range: (i32, i32),
        others: &[Placed],
    ) -> Vec<u64> {
        let (lo, hi) = range;
        if hi < lo {
            return vec![];
        }
        // lanes: rows for an X scan, columns for a Y scan
        let (lanes_a, lane_of): (u32, fn(&PartRaster, u32) -> &[Run]) = match axis {
            Axis::X => (part.height(), |r, i| r.row(i)),
            Axis::Y => (part.width(), |r, i| r.col(i)),
        };
        let extent_a = match axis {
            Axis::X => part.width() as i32,
            Axis::Y => part.height() as i32,
        };
        let max_extent_b = others
            .iter()
            .map(|o| match axis {
                Axis::X => o.raster.width(),
                Axis::Y => o.raster.height(),
            } as i32)
            .max()
            .unwrap_or(0);
        let base = lo - extent_a - max_extent_b - 2;
        let len = (hi - base + 2) as usize;
        let mut d = vec![0i64; len];
        for o in others {
            let (o_lane0, o_lanes, o_off) = match axis {
                Axis::X => (o.y, o.raster.height() as i32, o.x),
                Axis::Y => (o.x, o.raster.width() as i32, o.y),
            };
            let l0 = fixed.max(o_lane0);
            let l1 = (fixed + lanes_a as i32).min(o_lane0 + o_lanes);
            let w = o.weight as i64;
            for lane in l0..l1 {
                let ra = lane_of(part, (lane - fixed) as u32);
                let rb = lane_of(o.raster, (lane - o_lane0) as u32);
                for a in ra {
                    for b in rb {
                        let (b0, b1) = (b[0] as i32 + o_off, b[1] as i32 + o_off);
                        let m = ((a[1] - a[0]) as i32).min(b1 - b0);
                        let x1 = b0 - a[1] as i32;
                        let x4 = b1 - a[0] as i32;
                        if x4 <= lo || x1 >= hi {
                            continue;
                        }
                        for (x, s) in [(x1, 1), (x1 + m, -1), (x4 - m, -1), (x4, 1)] {
                            let i = x - base;
                            if (i as usize) < len {
                                d[i as usize] += s * w;
                            }
                        }
                    }
                }
            }
        }
        // integrate twice: f(x) = sum over k < x of slope(k)
        let mut out = Vec::with_capacity((hi - lo + 1) as usize);
        let (mut slope, mut f) = (0i64, 0i64);
        for (i, &dv) in d.iter().enumerate() {
            let x = base + i as i32;
            if x >= lo && x <= hi {
                out.push(f.max(0) as u64);
            }
            slope += dv;
            f += slope;
        }
        out
    }
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
