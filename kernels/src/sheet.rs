//! Whole-map evaluation against the sheet's occupancy: a summed-area table (SAT) of the grid and
//! each part as rectangles, so the overlap at one position is four lookups per rectangle,
//! whatever the part's size. The CPU backend and the WGSL kernels compute exactly this.
//!
//! Sums are u32 with wrapping arithmetic (the GPU has no 64-bit integers): a rectangle's sum
//! `S(x1,y1) - S(x0,y1) - S(x1,y0) + S(x0,y0)` is exact modulo 2^32, so it is exact whenever
//! the true count is below 2^32 (a grid of up to 4 billion cells).

use crate::occupancy::Occupancy;
use crate::raster::PartRaster;
use crate::Bounds;

/// A part raster and the positions (cell offsets of its origin) to evaluate it at.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    pub raster: &'a PartRaster,
    pub bounds: Bounds,
}

impl Candidate<'_> {
    /// Positions along x and y (0 when the bounds are empty).
    pub fn dims(&self) -> (u32, u32) {
        let b = self.bounds;
        if b.x_hi < b.x_lo || b.y_hi < b.y_lo {
            (0, 0)
        } else {
            ((b.x_hi - b.x_lo + 1) as u32, (b.y_hi - b.y_lo + 1) as u32)
        }
    }
    /// True for one row or one column of positions (or none).
    pub fn is_line(&self) -> bool {
        let (nx, ny) = self.dims();
        nx <= 1 || ny <= 1
    }
    /// Number of positions.
    pub fn positions(&self) -> u64 {
        let (w, h) = self.dims();
        w as u64 * h as u64
    }
}

/// The SAT of an occupancy grid: `(width + 1) x (height + 1)` wrapping sums, row-major;
/// entry (x, y) counts the set cells of `[0, x) x [0, y)`.
#[derive(Clone, Debug)]
pub struct SheetSat {
    width: u32,
    height: u32,
    values: Vec<u32>,
}

impl SheetSat {
    pub fn of(occ: &Occupancy) -> SheetSat {
        let (w, h) = (occ.width(), occ.height());
        let stride = w as usize + 1;
        let mut values = vec![0u32; stride * (h as usize + 1)];
        for y in 0..h {
            let mut row = 0u32;
            for x in 0..w {
                row = row.wrapping_add(occ.is_set(x, y) as u32);
                let i = (y as usize + 1) * stride + x as usize + 1;
                values[i] = values[i - stride].wrapping_add(row);
            }
        }
        SheetSat {
            width: w,
            height: h,
            values,
        }
    }
    pub fn width(&self) -> u32 {
        self.width
    }
    pub fn height(&self) -> u32 {
        self.height
    }
    pub fn values(&self) -> &[u32] {
        &self.values
    }

    #[inline(always)]
    fn at(&self, x: i32, y: i32) -> u32 {
        self.values[y as usize * (self.width as usize + 1) + x as usize]
    }

    /// Set cells under `raster` at (x, y); cells outside the grid count as set.
    #[inline]
    pub fn overlap_at(&self, raster: &PartRaster, x: i32, y: i32) -> u32 {
        let (w, h) = (self.width as i32, self.height as i32);
        let mut total = 0u32;
        for r in raster.rects() {
            let (x0, y0) = (x + r[0] as i32, y + r[1] as i32);
            let (x1, y1) = (x + r[2] as i32, y + r[3] as i32);
            let (cx0, cy0) = (x0.clamp(0, w), y0.clamp(0, h));
            let (cx1, cy1) = (x1.clamp(0, w), y1.clamp(0, h));
            let inside = self
                .at(cx1, cy1)
                .wrapping_sub(self.at(cx0, cy1))
                .wrapping_sub(self.at(cx1, cy0))
                .wrapping_add(self.at(cx0, cy0));
            let area = ((x1 - x0) * (y1 - y0)) as u32;
            let clipped = ((cx1 - cx0) * (cy1 - cy0)) as u32;
            total = total.wrapping_add(inside).wrapping_add(area - clipped);
        }
        total
    }
}

/// The positions first-fit may use: within `b`, and with the raster's box inside the grid.
pub fn fit_bounds(grid: (u32, u32), raster: &PartRaster, b: Bounds) -> Bounds {
    Bounds {
        x_lo: b.x_lo.max(0),
        x_hi: b.x_hi.min(grid.0 as i32 - raster.width() as i32),
        y_lo: b.y_lo.max(0),
        y_hi: b.y_hi.min(grid.1 as i32 - raster.height() as i32),
    }
}
