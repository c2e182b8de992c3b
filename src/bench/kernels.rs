//! `kerf bench kernels`: evaluations per second (positions x orientations) of the whole-map
//! overlap evaluation on each backend, over sheet rasters from 1024 x 512 to 16384 x 8192 cells
//! and parts from 64 x 64 to 512 x 512 cells. Every backend evaluates the same positions and
//! must give the same numbers; the table says so.

use kerf_kernels::{Bounds, Candidate, Evaluator, Occupancy, PartRaster};
use std::time::Instant;

pub const SHEETS: [(u32, u32); 4] = [(1024, 512), (4096, 2048), (8192, 4096), (16384, 8192)];
pub const PARTS: [u32; 4] = [64, 128, 256, 512];
/// Orientations evaluated per dispatch.
pub const ORIENTATIONS: usize = 8;

/// One row of the table.
pub struct Row {
    pub sheet: (u32, u32),
    pub part: u32,
    pub rects: usize,
    pub backend: String,
    pub evaluations: u64,
    /// The whole call: the sheet's table, then the evaluations.
    pub seconds: f64,
    /// Building the sheet's table alone (a call with no candidates).
    pub table_seconds: f64,
    /// Whether this backend's numbers equal the first backend's on the same positions.
    pub agrees: bool,
}

impl Row {
    /// Evaluations per second, the table's cost left out (a search builds it once and then
    /// evaluates many candidates against it).
    pub fn rate(&self) -> f64 {
        self.evaluations as f64 / (self.seconds - self.table_seconds).max(1e-9)
    }
}

/// A disc of `d` cells with a notch cut at `k` x 45 degrees: distinct orientations of a part
/// with curved edges (about one rectangle per row, the costly case).
pub fn notched_disc(d: u32, k: usize) -> PartRaster {
    let r = d as f64 / 2.0;
    let a = k as f64 * std::f64::consts::FRAC_PI_4;
    let (nx, ny) = (r + 0.6 * r * a.cos(), r + 0.6 * r * a.sin());
    let notch = 0.18 * r;
    let rows = (0..d)
        .map(|y| {
            let mut runs = Vec::new();
            let mut start = None;
            for x in 0..=d {
                let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
                let inside = x < d
                    && (cx - r).powi(2) + (cy - r).powi(2) <= r * r
                    && !((cx - nx).abs() < notch && (cy - ny).abs() < notch);
                match (inside, start) {
                    (true, None) => start = Some(x),
                    (false, Some(s)) => {
                        runs.push([s, x]);
                        start = None;
                    }
                    _ => {}
                }
            }
            runs
        })
        .collect();
    PartRaster::from_row_runs(d, rows)
}

/// A sheet about a third full of scattered discs (deterministic).
pub fn busy_sheet(w: u32, h: u32) -> Occupancy {
    let mut occ = Occupancy::new(w, h);
    let blob = notched_disc(48, 3);
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let count = (w as u64 * h as u64) / (48 * 48 * 3);
    for _ in 0..count {
        let x = (next() % w as u64) as i32 - 24;
        let y = (next() % h as u64) as i32 - 24;
        occ.place(&blob, x, y);
    }
    occ
}

/// Measures each backend on one case: bands of rows of positions, doubled until a band takes
/// `budget_s / 4` or covers the sheet.
pub fn measure(
    backends: &[&dyn Evaluator],
    sheet: (u32, u32),
    part: u32,
    budget_s: f64,
) -> Vec<Row> {
    let occ = busy_sheet(sheet.0, sheet.1);
    let rasters: Vec<PartRaster> = (0..ORIENTATIONS).map(|k| notched_disc(part, k)).collect();
    let rects = rasters[0].rects().len();
    let nx = sheet.0.saturating_sub(part) as i32 + 1;
    let ny = sheet.1.saturating_sub(part) as i32 + 1;
    let mut rows = Vec::new();
    let mut reference: Option<(i32, Vec<Vec<u32>>)> = None;
    for eval in backends {
        let t = Instant::now();
        eval.occupancy_overlap_maps(&occ, &[]);
        let table_seconds = t.elapsed().as_secs_f64();
        let mut band = 1;
        let (mut evaluations, mut seconds, mut last);
        loop {
            let candidates: Vec<Candidate> = rasters
                .iter()
                .map(|r| Candidate {
                    raster: r,
                    bounds: Bounds {
                        x_lo: 0,
                        x_hi: nx - 1,
                        y_lo: 0,
                        y_hi: band - 1,
                    },
                })
                .collect();
            let t = Instant::now();
            last = eval.occupancy_overlap_maps(&occ, &candidates);
            seconds = t.elapsed().as_secs_f64();
            evaluations = nx as u64 * band as u64 * ORIENTATIONS as u64;
            if seconds - table_seconds >= budget_s / 4.0 || band >= ny {
                break;
            }
            band = (band * 2).min(ny);
        }
        // compare with the first backend over the rows both evaluated
        let agrees = match &reference {
            None => {
                reference = Some((band, last));
                true
            }
            Some((ref_band, ref_maps)) => {
                let common = (band.min(*ref_band) * nx) as usize;
                ref_maps
                    .iter()
                    .zip(&last)
                    .all(|(a, b)| a[..common] == b[..common])
            }
        };
        rows.push(Row {
            sheet,
            part,
            rects,
            backend: eval.name(),
            evaluations,
            seconds,
            table_seconds,
            agrees,
        });
    }
    rows
}
