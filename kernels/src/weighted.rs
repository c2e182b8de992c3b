//! Whole-map evaluation against weighted placed rasters (the local search's penalty landscape):
//! for a candidate at a position, the sum over placed rasters j of weight_j x the cells it
//! shares with j, the number `Evaluator::overlap_line` gives along one line, here for every
//! position at once.
//!
//! The placed rasters become a weighted grid over their bounding box, built from rectangle
//! corners: each rectangle of raster j adds +w, -w, -w, +w at its four corners of a difference
//! table, and four inclusive prefix passes (rows, columns, rows, columns) turn that into the
//! summed-area table of the weighted grid. Values are u64 with wrapping arithmetic (the GPU
//! emulates it with pairs of u32), exact while true sums stay below 2^64.

use crate::raster::Placed;
use crate::sheet::Candidate;

/// The weighted table: `(gw + 2) x (gh + 2)` entries, S(x, y) at `y * (gw + 2) + x` is the
/// weighted cell count of `[x0, x0 + x) x [y0, y0 + y)`.
#[derive(Clone, Debug)]
pub struct WeightedTable {
    pub x0: i32,
    pub y0: i32,
    pub gw: u32,
    pub gh: u32,
    pub values: Vec<u64>,
}

/// Where the weighted table lies (the placed rasters' bounding box) and the weighted rectangles
/// whose corners make its difference table.
pub struct Corners {
    pub x0: i32,
    pub y0: i32,
    pub gw: u32,
    pub gh: u32,
    /// Per rectangle of weight > 0: its corner entries' table coordinates `[x0, y0, x1, y1]`
    /// (the rectangle's cell bounds, offset by the table's zero row and column) and its weight.
    pub rects: Vec<([u32; 4], u32)>,
}

impl Corners {
    pub fn of(others: &[Placed]) -> Corners {
        let boxes = others
            .iter()
            .filter(|o| o.raster.width() > 0 && o.raster.height() > 0);
        let (mut x0, mut y0, mut x1, mut y1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
        for o in boxes {
            x0 = x0.min(o.x);
            y0 = y0.min(o.y);
            x1 = x1.max(o.x + o.raster.width() as i32);
            y1 = y1.max(o.y + o.raster.height() as i32);
        }
        if x0 > x1 {
            (x0, y0, x1, y1) = (0, 0, 0, 0);
        }
        let rects = others
            .iter()
            .filter(|o| o.weight > 0)
            .flat_map(|o| {
                o.raster.rects().iter().map(move |r| {
                    let at = |x: i32, y: i32| ((x + 1) as u32, (y + 1) as u32);
                    let (ax, ay) = at(o.x - x0 + r[0] as i32, o.y - y0 + r[1] as i32);
                    let (bx, by) = at(o.x - x0 + r[2] as i32, o.y - y0 + r[3] as i32);
                    ([ax, ay, bx, by], o.weight)
                })
            })
            .collect();
        Corners {
            x0,
            y0,
            gw: (x1 - x0) as u32,
            gh: (y1 - y0) as u32,
            rects,
        }
    }

    pub fn stride(&self) -> usize {
        self.gw as usize + 2
    }

    pub fn table_len(&self) -> usize {
        self.stride() * (self.gh as usize + 2)
    }

    /// The difference table's entries, four per rectangle (+w, -w, -w, +w as wrapping u64);
    /// entries at the same index add up.
    pub fn entries(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let stride = self.stride();
        self.rects.iter().flat_map(move |&([ax, ay, bx, by], w)| {
            let (w, neg) = (w as u64, (w as u64).wrapping_neg());
            let at = |x: u32, y: u32| y as usize * stride + x as usize;
            [
                (at(ax, ay), w),
                (at(bx, ay), neg),
                (at(ax, by), neg),
                (at(bx, by), w),
            ]
        })
    }
}

impl WeightedTable {
    /// Builds the table on the CPU.
    pub fn build(others: &[Placed]) -> WeightedTable {
        let c = Corners::of(others);
        let (stride, rows) = (c.stride(), c.gh as usize + 2);
        let mut v = vec![0u64; c.table_len()];
        for (i, d) in c.entries() {
            v[i] = v[i].wrapping_add(d);
        }
        for _ in 0..2 {
            for row in v.chunks_mut(stride) {
                for x in 1..stride {
                    row[x] = row[x].wrapping_add(row[x - 1]);
                }
            }
            for y in 1..rows {
                for x in 0..stride {
                    v[y * stride + x] = v[y * stride + x].wrapping_add(v[(y - 1) * stride + x]);
                }
            }
        }
        WeightedTable {
            x0: c.x0,
            y0: c.y0,
            gw: c.gw,
            gh: c.gh,
            values: v,
        }
    }

    #[inline(always)]
    fn at(&self, x: i32, y: i32) -> u64 {
        self.values[y as usize * (self.gw as usize + 2) + x as usize]
    }

    /// The weighted overlap of `c.raster` at (x, y).
    #[inline]
    pub fn overlap_at(&self, c: &Candidate, x: i32, y: i32) -> u64 {
        let (gw, gh) = (self.gw as i32, self.gh as i32);
        let mut total = 0u64;
        for r in c.raster.rects() {
            let cx0 = (x - self.x0 + r[0] as i32).clamp(0, gw);
            let cy0 = (y - self.y0 + r[1] as i32).clamp(0, gh);
            let cx1 = (x - self.x0 + r[2] as i32).clamp(0, gw);
            let cy1 = (y - self.y0 + r[3] as i32).clamp(0, gh);
            total = total
                .wrapping_add(self.at(cx1, cy1))
                .wrapping_sub(self.at(cx0, cy1))
                .wrapping_sub(self.at(cx1, cy0))
                .wrapping_add(self.at(cx0, cy0));
        }
        total
    }
}
