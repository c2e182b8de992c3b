//! Batched moves: many movers' lines of positions evaluated against one scene in one call.
//!
//! The local search moves one overlapping part at a time to the least weighted-overlap position
//! on a few lines of positions. A batch evaluates the lines of every mover of a pass at once
//! against the layout as it stood before the pass (the engine then re-checks each move exactly
//! as it applies them): one GPU round trip (two dispatches) instead of one per mover. Each mover weighs the
//! scene's shapes by its own row of the guided local search's pair weights; weight 0 leaves a
//! shape out (the mover's own place).

use crate::raster::{PartRaster, Placed};
use crate::sheet::Candidate;

/// A raster lying in the scene (cell offsets of its origin).
#[derive(Clone, Copy, Debug)]
pub struct Shape<'a> {
    pub raster: &'a PartRaster,
    pub x: i32,
    pub y: i32,
}

/// One mover of a batch: its weight for each shape of the scene (same length as the scene), its
/// lines (candidates whose bounds are one row, `y_lo == y_hi`, scanned along x, or one column,
/// scanned along y, of positions), and what it pays for the cells it shares with a shape.
#[derive(Clone, Debug)]
pub struct Mover<'a> {
    pub weights: Vec<u32>,
    pub lines: Vec<Candidate<'a>>,
    pub measure: OverlapMeasure,
}

/// What a mover pays for the cells it shares with one shape, before that shape's weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OverlapMeasure {
    /// The shared cells: a line's values are one sum over every shape's trapezoids. The
    /// default for a search on one thread; on several, the engine gives the threads this and
    /// the root below in turn (`kerf::nest2d::ThreadMeasures`): alone, the root is denser on
    /// swim but not on the other strips (`benches/history/strip.md`).
    #[default]
    Cells,
    /// The integer square root of `ROOT_SCALE` times the shared cells. Concave, so a pair's
    /// overlap costs less per cell the deeper it is: a mover would rather lie deep in one shape
    /// than graze several, and the guided local search's weights then push that one pair apart
    /// (sparrow's overlap measure is concave the same way). Each shape's overlap is needed on
    /// its own before the root, so a line costs a pass over the positions per shape in reach.
    RootCells,
}

/// `OverlapMeasure::RootCells`' scale: one shared cell costs 8, a hundred 80.
pub const ROOT_SCALE: u64 = 64;

impl OverlapMeasure {
    /// The cost of `cells` shared cells with one shape, at weight one.
    #[inline(always)]
    pub fn cost(self, cells: u64) -> u64 {
        match self {
            OverlapMeasure::Cells => cells,
            OverlapMeasure::RootCells => exact_isqrt(cells * ROOT_SCALE),
        }
    }
}

/// `u64::isqrt`, from the float square root. Why: `u64::isqrt` took 42 % of a search's time
/// under the root measure (`perf`, swim, 20 s); with this the search runs 1.5 times the pace.
/// The float root of an integer below 2^52 floors to the integer root exactly; above it (and
/// from 2^53 on, where `n as f64` rounds) it can be a unit off either way, which the two loops
/// settle. The same integers as `isqrt` for every `n`.
#[inline(always)]
fn exact_isqrt(n: u64) -> u64 {
    let mut r = (n as f64).sqrt() as u64;
    while r.checked_mul(r).is_none_or(|square| square > n) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|square| square <= n) {
        r += 1;
    }
    r
}

impl<'a> Mover<'a> {
    /// The shapes this mover counts, with its weights: what `Evaluator::weighted_overlap_maps`
    /// takes as `others`.
    pub fn others(&self, scene: &[Shape<'a>]) -> Vec<Placed<'a>> {
        scene
            .iter()
            .zip(&self.weights)
            .filter(|(_, &w)| w > 0)
            .map(|(s, &weight)| Placed {
                raster: s.raster,
                x: s.x,
                y: s.y,
                weight,
            })
            .collect()
    }
}

/// The least weighted overlap on a line, and the first position along the line (0 = its
/// lower bound) that has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineBest {
    pub value: u64,
    pub at: u32,
}

impl LineBest {
    /// `best` after the value at the next position `at` of a line: the least value so far,
    /// at its first position (a later equal value does not replace it).
    pub fn keep_least(best: Option<LineBest>, value: u64, at: u32) -> Option<LineBest> {
        match best {
            Some(b) if b.value <= value => Some(b),
            _ => Some(LineBest { value, at }),
        }
    }
}

/// The least value of a line and its first position; None for an empty line.
pub fn best_of(values: &[u64]) -> Option<LineBest> {
    values.iter().enumerate().fold(None, |best, (k, &v)| {
        LineBest::keep_least(best, v, k as u32)
    })
}

/// How many (lane, shape) pairs a batch's line scans visit: the lanes each line's raster shares
/// with each shape its mover weighs, which is what a scan's work grows with (runs are few per
/// lane). The GPU backend routes a batch by it.
pub fn line_work(scene: &[Shape], movers: &[Mover]) -> u64 {
    let mut work = 0u64;
    for m in movers {
        for c in &m.lines {
            let (nx, ny) = c.dims();
            if nx == 0 {
                continue;
            }
            let along_x = ny == 1;
            let (fixed, lanes) = if along_x {
                (c.bounds.y_lo, c.raster.height() as i32)
            } else {
                (c.bounds.x_lo, c.raster.width() as i32)
            };
            for (s, &w) in scene.iter().zip(&m.weights) {
                if w == 0 {
                    continue;
                }
                let (lane0, n) = if along_x {
                    (s.y, s.raster.height() as i32)
                } else {
                    (s.x, s.raster.width() as i32)
                };
                let shared = (fixed + lanes).min(lane0 + n) - fixed.max(lane0);
                if shared > 0 {
                    work += shared as u64;
                }
            }
        }
    }
    work
}

#[cfg(test)]
mod tests {
    use super::exact_isqrt;

    #[test]
    fn the_root_measure_takes_the_same_integer_roots_as_isqrt() {
        // every n up to a million, then the squares and their neighbours out to the top, where
        // `n as f64` rounds (from 2^53 on) and the float root alone would be a unit off
        for n in 0..1_000_000u64 {
            assert_eq!(exact_isqrt(n), n.isqrt(), "{n}");
        }
        for k in (1u64..=u32::MAX as u64).step_by(65_521).chain([
            (1 << 26) - 1,
            1 << 26,
            (1 << 26) + 1,
            (1 << 32) - 1,
        ]) {
            for n in [k * k - 1, k * k, k * k + 1, k * k + 2 * k] {
                assert_eq!(exact_isqrt(n), n.isqrt(), "{n}");
            }
        }
        for n in [
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            (1 << 53) + 1,
            (1 << 52) - 1,
        ] {
            assert_eq!(exact_isqrt(n), n.isqrt(), "{n}");
        }
    }
}
