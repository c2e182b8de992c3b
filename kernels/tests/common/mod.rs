//! What the kernel tests share: a small deterministic generator and random rasters.
#![allow(dead_code)]

use kerf_kernels::PartRaster;

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random raster up to `max` cells a side, with runs of 1 to `run` cells.
pub fn random_raster_runs(rng: &mut Rng, max: u64, run: u64) -> PartRaster {
    let w = 1 + rng.below(max) as u32;
    let h = 1 + rng.below(max) as u32;
    let rows = (0..h)
        .map(|_| {
            let mut runs = vec![];
            let mut x = rng.below(w as u64) as u32;
            while x < w {
                let e = (x + 1 + rng.below(run) as u32).min(w);
                runs.push([x, e]);
                x = e + 1 + rng.below(3) as u32;
            }
            runs
        })
        .collect();
    PartRaster::from_row_runs(w, rows)
}

/// A random raster up to `max` cells a side.
pub fn random_raster(rng: &mut Rng, max: u64) -> PartRaster {
    random_raster_runs(rng, max, 4)
}
