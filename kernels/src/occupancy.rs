//! The sheet's occupancy grid for constructive (first-fit) placement: one bit per cell, kept
//! twice (row-major for the fit tests, column-major so that a fit can jump past a whole
//! obstacle in one step), plus the longest vertical free run per column so that hopeless
//! columns are skipped at once.

use crate::raster::PartRaster;

#[derive(Clone, Debug)]
pub struct Occupancy {
    width: u32,
    height: u32,
    words: usize,
    bits: Vec<u64>,
    /// The same cells column-major: `col_words` words per column, bit `y % 64` of word `y / 64`.
    col_words: usize,
    col_bits: Vec<u64>,
    /// Longest run of free cells in each column.
    max_free_run: Vec<u32>,
}

impl Occupancy {
    pub fn new(width: u32, height: u32) -> Occupancy {
        let words = (width as usize).div_ceil(64);
        let col_words = (height as usize).div_ceil(64);
        Occupancy {
            width,
            height,
            words,
            bits: vec![0; words * height as usize],
            col_words,
            col_bits: vec![0; col_words * width as usize],
            max_free_run: vec![height; width as usize],
        }
    }
    pub fn width(&self) -> u32 {
        self.width
    }
    pub fn height(&self) -> u32 {
        self.height
    }
    pub fn is_set(&self, x: u32, y: u32) -> bool {
        self.bits[y as usize * self.words + (x / 64) as usize] >> (x % 64) & 1 == 1
    }
    pub fn set(&mut self, x: u32, y: u32) {
        self.bits[y as usize * self.words + (x / 64) as usize] |= 1 << (x % 64);
        self.col_bits[x as usize * self.col_words + (y / 64) as usize] |= 1 << (y % 64);
    }
    /// The bits, row-major: `words_per_row()` 64-bit words per row, bit `x % 64` of word
    /// `x / 64` for column x (what the GPU backend uploads).
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
    pub fn words_per_row(&self) -> usize {
        self.words
    }
    pub fn max_free_run(&self, x: u32) -> u32 {
        self.max_free_run[x as usize]
    }

    /// Marks the cells of `r` at (x, y) (clipped to the grid) and refreshes column summaries.
    pub fn place(&mut self, r: &PartRaster, x: i32, y: i32) {
        for ry in 0..r.height() {
            let gy = y + ry as i32;
            if gy < 0 || gy >= self.height as i32 {
                continue;
            }
            for run in r.row(ry) {
                let a = (x + run[0] as i32).max(0);
                let b = (x + run[1] as i32).min(self.width as i32);
                for gx in a..b {
                    self.set(gx as u32, gy as u32);
                }
            }
        }
        let x0 = x.max(0) as u32;
        let x1 = ((x + r.width() as i32).max(0) as u32).min(self.width);
        for gx in x0..x1 {
            self.refresh_column(gx);
        }
    }

    /// Marks a rectangle of cells blocked (sheet borders, defects).
    pub fn block_rect(&mut self, x0: u32, y0: u32, x1: u32, y1: u32) {
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                self.set(x, y);
            }
        }
        for x in x0..x1.min(self.width) {
            self.refresh_column(x);
        }
    }

    fn refresh_column(&mut self, x: u32) {
        let mut best = 0;
        let mut y = self.first_free_in_column(x, 0);
        while y < self.height {
            let end = self.first_set_in_column(x, y);
            best = best.max(end - y);
            y = self.first_free_in_column(x, end);
        }
        self.max_free_run[x as usize] = best;
    }

    /// First free cell in column `x` at row `y` or above (`height` if none).
    #[inline]
    pub fn first_free_in_column(&self, x: u32, y: u32) -> u32 {
        self.next_in_column(x, y, true)
    }

    /// First set cell in column `x` at row `y` or above (`height` if none).
    #[inline]
    pub fn first_set_in_column(&self, x: u32, y: u32) -> u32 {
        self.next_in_column(x, y, false)
    }

    fn next_in_column(&self, x: u32, y: u32, free: bool) -> u32 {
        if y >= self.height {
            return self.height;
        }
        let col = &self.col_bits[x as usize * self.col_words..(x as usize + 1) * self.col_words];
        let flip = if free { !0u64 } else { 0 };
        let mut w = (y / 64) as usize;
        let mut word = (col[w] ^ flip) & (!0u64 << (y % 64));
        loop {
            if word != 0 {
                return (w as u32 * 64 + word.trailing_zeros()).min(self.height);
            }
            w += 1;
            if w == col.len() {
                return self.height;
            }
            word = col[w] ^ flip;
        }
    }

    /// First set cell in row `y` within [a, b), if any.
    #[inline]
    pub fn first_set_in_row(&self, y: u32, a: u32, b: u32) -> Option<u32> {
        if a >= b {
            return None;
        }
        let row = &self.bits[y as usize * self.words..(y as usize + 1) * self.words];
        let (wa, wb) = ((a / 64) as usize, ((b - 1) / 64) as usize);
        let lo_mask = !0u64 << (a % 64);
        let hi_bits = (b - 1) % 64 + 1;
        let hi_mask = if hi_bits == 64 {
            !0u64
        } else {
            (1u64 << hi_bits) - 1
        };
        if wa == wb {
            let m = row[wa] & lo_mask & hi_mask;
            return (m != 0).then(|| wa as u32 * 64 + m.trailing_zeros());
        }
        let m = row[wa] & lo_mask;
        if m != 0 {
            return Some(wa as u32 * 64 + m.trailing_zeros());
        }
        for (w, &word) in row.iter().enumerate().take(wb).skip(wa + 1) {
            if word != 0 {
                return Some(w as u32 * 64 + word.trailing_zeros());
            }
        }
        let m = row[wb] & hi_mask;
        (m != 0).then(|| wb as u32 * 64 + m.trailing_zeros())
    }
}
