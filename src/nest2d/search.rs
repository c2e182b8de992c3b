//! The search on one sheet, in the canonical frame and in raster cells:
//! - `fill`: constructive first-fit (lowest x, then y; big parts first) through the evaluator;
//! - `Compactor`: guided local search that shrinks the used length step by step and removes the
//!   overlaps each shrink creates by moving parts to the least-overlapping position along whole
//!   lines of positions (evaluated by the kernels), raising the weights of pairs that stay stuck.

use super::model::{MoveSet, Moves, OverlapMeasure};
use super::rng::Rng;
use crate::geometry::{BBox, Point};
use kerf_kernels::{
    pair_overlap, Bounds, Candidate, Evaluator, LineBest, Mover, Occupancy, PartRaster, Shape,
    WEIGHT_ONE,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A part in one orientation, reflected into the canonical frame.
#[derive(Clone, Debug)]
pub struct Oriented {
    pub rotation: f64,
    pub mirrored: bool,
    pub raster: PartRaster,
    /// Canonical shape coordinates of the raster's (0, 0) corner.
    pub origin: Point,
    /// Canonical bounding box of the (untranslated) oriented shape.
    pub bbox: BBox,
    /// Dilation in cells (the raster's margin around the shape's box).
    pub margin: u32,
    /// The raster's deeper cells, level by level (`DepthLevels`), each with the extra weight
    /// a cell of that level adds to what covering it costs: what makes the overlap measure
    /// penetration-aware. Empty levels are left out.
    pub depth: Vec<(PartRaster, u32)>,
}

impl Oriented {
    /// Canonical translation of the shape when its raster sits at cell (gx, gy).
    pub fn translation(&self, cell: f64, gx: i32, gy: i32) -> Point {
        Point::new(
            gx as f64 * cell - self.origin.x,
            gy as f64 * cell - self.origin.y,
        )
    }
    /// Canonical max x of the shape at cell column gx.
    pub fn right_edge(&self, cell: f64, gx: i32) -> f64 {
        gx as f64 * cell - self.origin.x + self.bbox.max.x
    }

    /// What a part covering `a`'s cells at `pa` pays beyond the shared cells themselves for
    /// overlapping this one at `pb`: each shared cell's extra weight for its depth level here.
    fn deeper_overlap(&self, pb: Pose, a: &PartRaster, pa: Pose) -> u64 {
        self.depth
            .iter()
            .map(|(r, extra)| *extra as u64 * pair_overlap(a, pa.gx, pa.gy, r, pb.gx, pb.gy))
            .sum()
    }
}

/// Two items' overlap both ways, (what `a` pays for covering `b`, what `b` pays for covering
/// `a`): their shared cells, each weighted by its depth in the one covered. One cell count;
/// the depth levels only where the pair shares cells at all.
fn pair_costs(a: &Oriented, pa: Pose, b: &Oriented, pb: Pose) -> (u64, u64) {
    let cells = pair_overlap(&a.raster, pa.gx, pa.gy, &b.raster, pb.gx, pb.gy);
    if cells == 0 {
        return (0, 0);
    }
    (
        cells + b.deeper_overlap(pb, &a.raster, pa),
        cells + a.deeper_overlap(pa, &b.raster, pb),
    )
}

/// The usable area of one sheet in the canonical frame.
#[derive(Clone, Debug)]
pub struct SheetArea {
    pub cell: f64,
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
    /// Cells a part may not cover (irregular sheets), placed at (-margin, -margin).
    pub blocked: Option<PartRaster>,
    /// Grid margin in cells (>= every raster's dilation), so positions can be negative.
    pub margin: i32,
}

const SNAP: f64 = 1e-9;

impl SheetArea {
    /// Cell positions that keep the shape's box inside the usable area, with the fill length
    /// limited to `length` (canonical x).
    pub fn bounds(&self, o: &Oriented, length: f64) -> Option<Bounds> {
        let c = self.cell;
        let ox = o.bbox.min.x - o.origin.x; // shape box start within the raster, in mm
        let oy = o.bbox.min.y - o.origin.y;
        let b = Bounds {
            x_lo: ((self.x0 - ox) / c - SNAP).ceil() as i32,
            x_hi: ((length.min(self.x1) - ox - o.bbox.width()) / c + SNAP).floor() as i32,
            y_lo: ((self.y0 - oy) / c - SNAP).ceil() as i32,
            y_hi: ((self.y1 - oy - o.bbox.height()) / c + SNAP).floor() as i32,
        };
        (b.x_lo <= b.x_hi && b.y_lo <= b.y_hi).then_some(b)
    }
    /// The blocked cells as a shape of a scene (`Evaluator::best_on_lines`), in pose
    /// coordinates: `None` on a plain rectangular sheet.
    fn blocked_shape(&self) -> Option<Shape<'_>> {
        self.blocked.as_ref().map(|raster| Shape {
            raster,
            x: -self.margin,
            y: -self.margin,
        })
    }
    fn grid_size(&self) -> (u32, u32) {
        (
            ((self.x1 / self.cell).ceil() as i32 + 2 * self.margin + 2) as u32,
            ((self.y1 / self.cell).ceil() as i32 + 2 * self.margin + 2) as u32,
        )
    }
    pub fn new_occupancy(&self) -> Occupancy {
        let (w, h) = self.grid_size();
        let mut occ = Occupancy::new(w, h);
        if let Some(b) = &self.blocked {
            occ.place(b, 0, 0);
        }
        occ
    }
}

/// One item's state on the sheet: which orientation, which cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pose {
    pub orient: usize,
    pub gx: i32,
    pub gy: i32,
}

/// First-fit: places each item (in the given order) at the lowest x (then y) where it fits,
/// choosing the orientation whose right edge ends up smallest. Returns the poses of the items
/// placed (None for items that did not fit) and updates `occ`; `None` if `deadline` passed.
pub fn fill(
    eval: &dyn Evaluator,
    area: &SheetArea,
    occ: &mut Occupancy,
    items: &[&[Oriented]],
    length: f64,
    deadline: Instant,
) -> Option<Vec<Option<Pose>>> {
    let m = area.margin;
    // The grid only fills up, so a part in an orientation cannot fit left of where its previous
    // copy was placed (or anywhere, once it failed): later copies start their search there.
    let mut resume: HashMap<(*const Oriented, usize), Option<i32>> = HashMap::new();
    items
        .iter()
        .map(|orients| {
            if Instant::now() >= deadline {
                return None;
            }
            // every orientation still worth a search, evaluated in one batch (one dispatch on
            // the GPU)
            let mut tried: Vec<(usize, (*const Oriented, usize))> = Vec::new();
            let mut candidates: Vec<Candidate> = Vec::new();
            for (oi, o) in orients.iter().enumerate() {
                let Some(b) = area.bounds(o, length) else {
                    continue;
                };
                let key = (orients.as_ptr(), oi);
                let x_from = match resume.get(&key) {
                    Some(None) => continue,
                    Some(Some(x)) => (*x).max(b.x_lo),
                    None => b.x_lo,
                };
                tried.push((oi, key));
                candidates.push(Candidate {
                    raster: &o.raster,
                    bounds: Bounds {
                        x_lo: x_from + m,
                        x_hi: b.x_hi + m,
                        y_lo: b.y_lo + m,
                        y_hi: b.y_hi + m,
                    },
                });
            }
            let found = eval.first_fits(occ, &candidates);
            let mut best: Option<(f64, i32, Pose)> = None;
            for ((oi, key), found) in tried.into_iter().zip(found) {
                let o = &orients[oi];
                resume.insert(key, found.map(|(x, _)| x - m));
                if let Some((x, y)) = found {
                    let pose = Pose {
                        orient: oi,
                        gx: x - m,
                        gy: y - m,
                    };
                    let key = (o.right_edge(area.cell, pose.gx), pose.gy);
                    if best.is_none_or(|(r, yy, _)| {
                        key.0 < r - 1e-12 || (key.0 <= r + 1e-12 && key.1 < yy)
                    }) {
                        best = Some((key.0, key.1, pose));
                    }
                }
            }
            Some(best.map(|(_, _, pose)| {
                let o = &orients[pose.orient];
                occ.place(&o.raster, pose.gx + m, pose.gy + m);
                pose
            }))
        })
        .collect()
}

/// Where an inserted part starts before the local search makes room for it: the pose of least
/// overlap with `placed` (the sheet's parts) and the sheet's blocked cells, each cell counted
/// once per shape over it, over `LINES` rows and as many columns of positions, evenly spaced
/// across the usable area, in every orientation; at equal overlap the smallest x wins, then
/// the smallest y (the left-most start, as the occupancy table it replaces had it). One batch
/// of the moves' own kernel (`Evaluator::best_on_lines`; one dispatch on the GPU), which scans
/// a line in time of the parts within its reach: on trousers_x8's sheets 0.8 ms a start
/// (median) against 45 ms for that table's overlap map, cell by cell (twenty-second session;
/// benches/history/multi-sheet.md, large jobs). A whole map would cost far more for a start that
/// the local search moves anyway.
pub fn least_overlap_pose(
    eval: &dyn Evaluator,
    area: &SheetArea,
    placed: &[Shape],
    orients: &[Oriented],
) -> Option<Pose> {
    const LINES: i32 = 24;
    let scene: Vec<Shape> = placed.iter().copied().chain(area.blocked_shape()).collect();
    let mut lines: Vec<(usize, Candidate)> = Vec::new();
    for (oi, o) in orients.iter().enumerate() {
        let Some(b) = area.bounds(o, f64::INFINITY) else {
            continue;
        };
        let spread = |lo: i32, hi: i32| -> Vec<i32> {
            let mut v: Vec<i32> = (0..LINES)
                .map(|k| lo + ((hi - lo) as i64 * k as i64 / (LINES - 1) as i64) as i32)
                .collect();
            v.dedup();
            v
        };
        let rows = spread(b.y_lo, b.y_hi).into_iter().map(|y| Bounds {
            y_lo: y,
            y_hi: y,
            ..b
        });
        let cols = spread(b.x_lo, b.x_hi).into_iter().map(|x| Bounds {
            x_lo: x,
            x_hi: x,
            ..b
        });
        for bounds in rows.chain(cols) {
            let raster = &o.raster;
            lines.push((oi, Candidate { raster, bounds }));
        }
    }
    if lines.is_empty() {
        return None; // (no orientation fits the sheet: no batch is sent)
    }
    // (where it shares fewest cells: the local search then makes room)
    let mover = Mover {
        weights: vec![1; scene.len()],
        lines: lines.iter().map(|(_, c)| *c).collect(),
        measure: OverlapMeasure::Cells,
    };
    let bests = eval.best_on_lines(&scene, &[mover]).pop()?;
    // the least value, then the smallest x, then y (each line's best is its first position)
    let mut best: Option<(u64, i32, i32, usize)> = None;
    for ((oi, c), b) in lines.iter().zip(&bests) {
        let Some(b) = b else { continue };
        let (gx, gy) = position_on(c, b.at);
        let key = (b.value, gx, gy, *oi);
        if best.is_none_or(|k| key < k) {
            best = Some(key);
        }
    }
    best.map(|(_, gx, gy, orient)| Pose { orient, gx, gy })
}

/// The cell of position `at` along a line of positions (a row, or a column).
fn position_on(line: &Candidate, at: u32) -> (i32, i32) {
    let b = line.bounds;
    if line.dims().1 == 1 {
        (b.x_lo + at as i32, b.y_lo)
    } else {
        (b.x_lo, b.y_lo + at as i32)
    }
}

/// Stop conditions shared by every search thread.
pub struct Budget<'a> {
    pub deadline: Instant,
    pub cancel: &'a AtomicBool,
    /// Set by the engine itself (for example when the utilisation target is reached).
    pub stop: &'a AtomicBool,
    pub max_rounds: Option<u64>,
}

impl Budget<'_> {
    fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }
    /// Cancelled or out of time (checked between single moves, and before an insertion sets
    /// up its search: `SheetSearch::insert`).
    pub fn past_deadline(&self) -> bool {
        self.stopped() || Instant::now() >= self.deadline
    }
    /// Past the deadline, stopped, or out of rounds (checked between strikes).
    fn over(&self, rounds: u64) -> bool {
        self.past_deadline() || self.max_rounds.is_some_and(|m| rounds >= m)
    }
}

/// Short rows on either side of the mover's own row (`focus_rows`).
const FOCUS_ROWS: i32 = 2;
/// How far each short row reaches either side of the mover's column, in steps.
const FOCUS_REACH: i32 = 4;
/// A step is the part's smaller side divided by this, at least a cell.
const FOCUS_STEP_DIVISOR: u32 = 32;

/// Short rows of positions near a mover's place `(col, row)`, besides its four lines, for a
/// raster whose positions lie within `b`: `FOCUS_ROWS` rows either side of its own row, a step
/// apart, each reaching `FOCUS_REACH` steps either side of its column. A part that overlaps a
/// neighbour along a slanted edge leaves it by moving along both axes at once, which neither
/// the row nor the column through its place offers in one move. Measured (benches/history/strip.md,
/// issue 20) over 52 runs of 20 and 60 s against the lines alone: the mean within the spread
/// (+0.03), at 5 to 30 % fewer strikes; shapes1 up in every pair (+1.1).
fn focus_rows(
    raster: &PartRaster,
    b: Bounds,
    (col, row): (i32, i32),
) -> impl Iterator<Item = Bounds> {
    let step = (raster.width().min(raster.height()) / FOCUS_STEP_DIVISOR).max(1) as i32;
    let reach = FOCUS_REACH * step;
    (1..=FOCUS_ROWS)
        .flat_map(move |k| [row - k * step, row + k * step])
        .filter(move |y| (b.y_lo..=b.y_hi).contains(y))
        .map(move |y| Bounds {
            x_lo: (col - reach).max(b.x_lo),
            x_hi: (col + reach).min(b.x_hi),
            y_lo: y,
            y_hi: y,
        })
}

/// `k` whole rows of positions spread evenly over the heights of `b`, from a random first
/// one (systematic sampling: one row in each of `k` equal bands of `b`'s heights, all at the
/// same random offset within their band), for a raster whose positions
/// lie within `b`: a move that may take the part to any height of the sheet in one step, as a
/// whole map would, at the cost of `k` lines (what a GPU evaluates at little cost; issue 20,
/// item 2). No rng draw where `b` has a single row.
fn sampled_rows(b: Bounds, k: u32, rng: &mut Rng) -> impl Iterator<Item = Bounds> {
    let span = (b.y_hi - b.y_lo + 1) as i64;
    let k = (k as i64).min(span);
    // row j at floor((j span + u) / k) for one u uniform in 0..span: in band j, whatever the
    // rounding
    let u = if span > 1 {
        rng.range(0, (span - 1) as i32) as i64
    } else {
        0
    };
    (0..k).map(move |j| {
        let y = b.y_lo + ((j * span + u) / k) as i32;
        Bounds {
            y_lo: y,
            y_hi: y,
            ..b
        }
    })
}

/// Guided local search that shortens the used length of one sheet's layout.
pub struct Compactor<'a> {
    eval: &'a dyn Evaluator,
    area: &'a SheetArea,
    items: Vec<&'a [Oriented]>,
    poses: Vec<Pose>,
    /// Pairwise overlap, n x n: at `i * n + j` what item i pays for covering item j (shared
    /// cells, weighted by their depth in j; symmetric when there are no depth levels), and
    /// with the sheet's blocked cells.
    overlap: Vec<u64>,
    blocked_overlap: Vec<u64>,
    weights: Vec<u32>,
    /// Each pair's weight at the start of a separation where it is not `WEIGHT_ONE`: by the
    /// parts' sizes under `OverlapMeasure::RootCells` (`weights_by_size`).
    start_weights: Option<Vec<u32>>,
    rng: Rng,
    /// Strikes run so far (the deterministic budget `Budget::max_rounds` counts these).
    rounds: u64,
    /// What a move scans, and how a pass evaluates its moves.
    moves: MoveSet,
}

/// Item i's overlaps with the other items were it at some pose (`Compactor::overlaps_at`):
/// what it pays for each (covering their cells, weighted by their depth) and what each pays
/// for it, and the blocked cells it covers.
struct Overlaps {
    paid: Vec<u64>,
    caused: Vec<u64>,
    blocked: u64,
}

/// How a local-search round ended.
enum Round {
    /// Nothing overlaps.
    Feasible,
    /// The deadline passed.
    Stopped,
    /// No pass moved anything, or four passes ran.
    Done,
}

/// Each pair's starting weight by the two parts' sizes, as sparrow weighs its overlaps: the
/// geometric mean of their raster areas over the mean area, square-rooted (so the weight grows
/// with the parts' sides), clamped to 1/16 .. 16 of `WEIGHT_ONE`. A part then rather covers a
/// small part, which finds a hole more easily, than a big one.
fn weights_by_size(items: &[&[Oriented]]) -> Vec<u32> {
    let n = items.len();
    let area: Vec<f64> = items.iter().map(|o| o[0].raster.area() as f64).collect();
    let mean = area.iter().sum::<f64>() / n.max(1) as f64;
    let mut w = vec![WEIGHT_ONE; n * n];
    for i in 0..n {
        for j in 0..n {
            let f = ((area[i] * area[j]).sqrt() / mean)
                .sqrt()
                .clamp(1.0 / 16.0, 16.0);
            w[i * n + j] = ((WEIGHT_ONE as f64 * f).round() as u32).max(1);
        }
    }
    w
}

/// Weight of the sheet's blocked cells: never worth covering.
const BLOCKED_WEIGHT: u32 = WEIGHT_ONE * 64;
const MAX_WEIGHT: u32 = WEIGHT_ONE * 1_000_000;

impl<'a> Compactor<'a> {
    pub fn new(
        eval: &'a dyn Evaluator,
        area: &'a SheetArea,
        items: Vec<&'a [Oriented]>,
        poses: Vec<Pose>,
        seed: u64,
        moves: MoveSet,
    ) -> Self {
        let n = items.len();
        let start_weights = match moves.measure {
            OverlapMeasure::Cells => None,
            OverlapMeasure::RootCells => Some(weights_by_size(&items)),
        };
        let mut c = Compactor {
            eval,
            area,
            items,
            poses,
            overlap: vec![0; n * n],
            blocked_overlap: vec![0; n],
            weights: start_weights
                .clone()
                .unwrap_or_else(|| vec![WEIGHT_ONE; n * n]),
            start_weights,
            rng: Rng::new(seed),
            rounds: 0,
            moves,
        };
        c.refresh_all();
        c
    }

    /// Recomputes every pair's overlap (each pair once) after many poses changed.
    fn refresh_all(&mut self) {
        let n = self.poses.len();
        for i in 0..n {
            let (pi, oi) = (self.poses[i], self.oriented(i));
            for j in (i + 1)..n {
                let (paid, caused) = pair_costs(oi, pi, self.oriented(j), self.poses[j]);
                self.overlap[i * n + j] = paid;
                self.overlap[j * n + i] = caused;
            }
            self.blocked_overlap[i] = self.blocked_cells_at(i, pi);
        }
    }

    /// Blocked cells under item i's raster at `pose`.
    fn blocked_cells_at(&self, i: usize, pose: Pose) -> u64 {
        match &self.area.blocked {
            Some(b) => pair_overlap(
                &self.items[i][pose.orient].raster,
                pose.gx,
                pose.gy,
                b,
                -self.area.margin,
                -self.area.margin,
            ),
            None => 0,
        }
    }

    pub fn poses(&self) -> &[Pose] {
        &self.poses
    }

    /// Strikes run so far (what `Budget::max_rounds` counts).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    fn oriented(&self, i: usize) -> &'a Oriented {
        let orients: &'a [Oriented] = self.items[i];
        &orients[self.poses[i].orient]
    }

    /// Canonical length used: the largest right edge.
    pub fn used_length(&self) -> f64 {
        (0..self.poses.len())
            .map(|i| {
                self.items[i][self.poses[i].orient].right_edge(self.area.cell, self.poses[i].gx)
            })
            .fold(0.0, f64::max)
    }

    /// Item i's overlaps with every other item (0 with itself), both ways, and with the
    /// blocked cells, were it at `pose`.
    fn overlaps_at(&self, i: usize, pose: Pose) -> Overlaps {
        let oi = &self.items[i][pose.orient];
        let mut paid = vec![0; self.poses.len()];
        let mut caused = vec![0; self.poses.len()];
        for j in (0..self.poses.len()).filter(|&j| j != i) {
            (paid[j], caused[j]) = pair_costs(oi, pose, self.oriented(j), self.poses[j]);
        }
        Overlaps {
            paid,
            caused,
            blocked: self.blocked_cells_at(i, pose),
        }
    }

    /// The weighted cost of item i's overlaps as `overlaps_at` gives them.
    fn cost_of(&self, i: usize, at: &Overlaps) -> u64 {
        let n = self.poses.len();
        at.paid
            .iter()
            .zip(&self.weights[i * n..(i + 1) * n])
            .map(|(&ov, &w)| self.moves.measure.cost(ov) * w as u64)
            .sum::<u64>()
            + self.moves.measure.cost(at.blocked) * BLOCKED_WEIGHT as u64
    }

    /// Puts item i at `pose` and records its overlaps there (from `overlaps_at`).
    fn set_pose(&mut self, i: usize, pose: Pose, at: Overlaps) {
        let n = self.poses.len();
        self.poses[i] = pose;
        for (j, (paid, caused)) in at.paid.into_iter().zip(at.caused).enumerate() {
            self.overlap[i * n + j] = paid;
            self.overlap[j * n + i] = caused;
        }
        self.blocked_overlap[i] = at.blocked;
    }

    fn refresh(&mut self, i: usize) {
        let at = self.overlaps_at(i, self.poses[i]);
        self.set_pose(i, self.poses[i], at);
    }

    fn item_cost(&self, i: usize) -> u64 {
        let n = self.poses.len();
        (0..n)
            .map(|j| {
                self.moves.measure.cost(self.overlap[i * n + j]) * self.weights[i * n + j] as u64
            })
            .sum::<u64>()
            + self.moves.measure.cost(self.blocked_overlap[i]) * BLOCKED_WEIGHT as u64
    }

    pub fn total_overlap(&self) -> u64 {
        self.overlap.iter().sum::<u64>() / 2 + self.blocked_overlap.iter().sum::<u64>()
    }

    /// The items to take out so that nothing overlaps any more, item `keep` staying where it
    /// is: of every pair that still overlaps, the one other than `keep`, else the one of less
    /// `area` (a vertex cover, greedy, the deepest overlaps first), and every item but `keep`
    /// on blocked cells. `None` when `keep` itself covers blocked cells. Sorted ascending.
    pub fn eviction(&self, keep: usize, area: impl Fn(usize) -> f64) -> Option<Vec<usize>> {
        let n = self.poses.len();
        if self.blocked_overlap[keep] > 0 {
            return None;
        }
        let mut out: Vec<bool> = (0..n)
            .map(|i| i != keep && self.blocked_overlap[i] > 0)
            .collect();
        let mut pairs: Vec<(u64, usize, usize)> = (0..n)
            .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
            .filter_map(|(i, j)| {
                // (the deeper of the two ways, so the order does not depend on numbering)
                let ov = self.overlap[i * n + j].max(self.overlap[j * n + i]);
                (ov > 0).then_some((ov, i, j))
            })
            .collect();
        // deepest first; ties by index, so the answer is the same on every run
        pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (_, i, j) in pairs {
            if out[i] || out[j] {
                continue;
            }
            let k = if i == keep {
                j
            } else if j == keep || area(i) <= area(j) {
                i
            } else {
                j
            };
            out[k] = true;
        }
        Some((0..n).filter(|&i| out[i]).collect())
    }

    /// Item i's lines of positions for one move, per orientation: a row and a column through
    /// its current place, a row and a column at random, the short rows near its place
    /// (`focus_rows`) and, when the settings ask for them, rows spread over the heights
    /// (`sampled_rows`).
    fn move_lines(&mut self, i: usize, length: f64) -> Vec<(usize, Candidate<'a>)> {
        let cur = self.poses[i];
        let items: &'a [Oriented] = self.items[i];
        let area = self.area;
        let mut lines = Vec::new();
        for (oi, o) in items.iter().enumerate() {
            let Some(b) = area.bounds(o, length) else {
                continue;
            };
            let rows = [cur.gy.clamp(b.y_lo, b.y_hi), self.rng.range(b.y_lo, b.y_hi)];
            let cols = [cur.gx.clamp(b.x_lo, b.x_hi), self.rng.range(b.x_lo, b.x_hi)];
            let row = |y| Bounds {
                y_lo: y,
                y_hi: y,
                ..b
            };
            let col = |x| Bounds {
                x_lo: x,
                x_hi: x,
                ..b
            };
            let whole = [row(rows[0]), row(rows[1]), col(cols[0]), col(cols[1])];
            let near = focus_rows(&o.raster, b, (cols[0], rows[0]));
            let spread = match self.moves.sampled_rows {
                0 => None,
                k => Some(sampled_rows(b, k, &mut self.rng)),
            };
            for bounds in whole
                .into_iter()
                .chain(near)
                .chain(spread.into_iter().flatten())
            {
                lines.push((
                    oi,
                    Candidate {
                        raster: &o.raster,
                        bounds,
                    },
                ));
            }
        }
        lines
    }

    /// The pose of the least value among the lines' best positions; at equal values the
    /// earlier line wins (the lines through the part's own place come first, so ties keep moves
    /// short).
    fn best_pose(lines: &[(usize, Candidate)], bests: &[Option<LineBest>]) -> Option<Pose> {
        let mut best: Option<(u64, Pose)> = None;
        for ((oi, c), b) in lines.iter().zip(bests) {
            let Some(b) = b else { continue };
            if best.is_none_or(|(v, _)| b.value < v) {
                let (gx, gy) = position_on(c, b.at);
                best = Some((
                    b.value,
                    Pose {
                        orient: *oi,
                        gx,
                        gy,
                    },
                ));
            }
        }
        best.map(|(_, pose)| pose)
    }

    /// Moves every item of `order` to the least weighted-overlap pose found on its lines
    /// (`move_lines`, every orientation), with all their lines evaluated in one
    /// batch against the layout before the first move (one GPU round trip). Each move is
    /// re-checked exactly against the layout as the earlier moves left it, and made only if it
    /// still lowers the item's cost. True if any item moved.
    fn move_batch(&mut self, order: &[usize], length: f64) -> bool {
        let plans: Vec<(usize, Vec<(usize, Candidate<'a>)>)> = order
            .iter()
            .map(|&i| (i, self.move_lines(i, length)))
            .collect();
        let movers: Vec<Mover> = plans
            .iter()
            .map(|(i, lines)| Mover {
                weights: self.weight_row(*i),
                lines: lines.iter().map(|(_, c)| *c).collect(),
                measure: self.moves.measure,
            })
            .collect();
        let bests = self.eval.best_on_lines(&self.scene(), &movers);
        let mut moved = false;
        for ((i, lines), bests) in plans.iter().zip(&bests) {
            let i = *i;
            let current = self.item_cost(i);
            if current == 0 {
                continue;
            }
            let Some(pose) = Self::best_pose(lines, bests) else {
                continue;
            };
            if pose == self.poses[i] {
                continue;
            }
            let at = self.overlaps_at(i, pose);
            if self.cost_of(i, &at) < current {
                self.set_pose(i, pose, at);
                moved = true;
            }
        }
        moved
    }

    /// Every item at its pose, each followed by its depth levels at the same place, and the
    /// sheet's blocked cells: what the moves are evaluated against (each mover weighs it by
    /// `weight_row`).
    fn scene(&self) -> Vec<Shape<'a>> {
        let mut v: Vec<Shape<'a>> = Vec::new();
        for j in 0..self.poses.len() {
            let (o, p) = (self.oriented(j), self.poses[j]);
            for raster in std::iter::once(&o.raster).chain(o.depth.iter().map(|(r, _)| r)) {
                v.push(Shape {
                    raster,
                    x: p.gx,
                    y: p.gy,
                });
            }
        }
        v.extend(self.area.blocked_shape());
        v
    }

    /// Item i's weight for each shape of `scene`: its pair weights, 0 for itself (it does not
    /// overlap its own place), and the blocked cells' weight.
    fn weight_row(&self, i: usize) -> Vec<u32> {
        let n = self.poses.len();
        let mut w = Vec::with_capacity(n);
        for j in 0..n {
            let wij = if j == i { 0 } else { self.weights[i * n + j] };
            w.push(wij);
            w.extend(
                self.oriented(j)
                    .depth
                    .iter()
                    .map(|(_, extra)| wij.saturating_mul(*extra)),
            );
        }
        if self.area.blocked.is_some() {
            w.push(BLOCKED_WEIGHT);
        }
        w
    }

    /// Tries to remove all overlap within `length`. True on success (a feasible layout).
    fn separate(&mut self, length: f64, budget: &Budget) -> bool {
        let n = self.poses.len();
        match &self.start_weights {
            Some(w) => self.weights.clone_from(w),
            None => self.weights.fill(WEIGHT_ONE),
        }
        let max_strikes = 40 + 2 * n as u64;
        let mut best_total = u64::MAX;
        let mut strikes_without_progress = 0;
        while strikes_without_progress < max_strikes {
            if budget.over(self.rounds) {
                return false;
            }
            self.rounds += 1;
            match self.local_search_round(length, budget) {
                Round::Feasible => return true,
                Round::Stopped => return false,
                Round::Done => {}
            }
            let total = self.total_overlap();
            if total == 0 {
                return true;
            }
            if total < best_total {
                best_total = total;
                strikes_without_progress = 0;
            } else {
                strikes_without_progress += 1;
            }
            self.raise_weights();
        }
        false
    }

    /// Up to four passes moving the overlapping items until none improves.
    fn local_search_round(&mut self, length: f64, budget: &Budget) -> Round {
        let n = self.poses.len();
        for _pass in 0..4 {
            let mut order: Vec<usize> = (0..n).filter(|&i| self.item_cost(i) > 0).collect();
            if order.is_empty() {
                return Round::Feasible;
            }
            self.rng.shuffle(&mut order);
            let mut moved = false;
            match self.moves.moves {
                Moves::Batched => {
                    if budget.past_deadline() {
                        return Round::Stopped;
                    }
                    moved = self.move_batch(&order, length);
                }
                Moves::OneByOne => {
                    for i in order {
                        if budget.past_deadline() {
                            return Round::Stopped;
                        }
                        // a batch of one, evaluated against the layout as it is now
                        if self.item_cost(i) > 0 {
                            moved |= self.move_batch(&[i], length);
                        }
                    }
                }
            }
            if !moved {
                break;
            }
        }
        Round::Done
    }

    /// Guided local search: makes the pairs that still overlap more expensive.
    fn raise_weights(&mut self) {
        let n = self.poses.len();
        let max_ov = self.overlap.iter().copied().max().unwrap_or(1).max(1);
        for k in 0..n * n {
            let ov = self.overlap[k];
            if ov > 0 {
                let f = 1.2 + 0.8 * ov as f64 / max_ov as f64;
                self.weights[k] = ((self.weights[k] as f64 * f) as u32).min(MAX_WEIGHT);
            }
        }
    }

    /// Pulls every part that ends beyond `target` back inside (creating overlap to resolve).
    fn pull_inside(&mut self, target: f64) {
        for i in 0..self.poses.len() {
            let o = &self.items[i][self.poses[i].orient];
            if let Some(b) = self.area.bounds(o, target) {
                if self.poses[i].gx > b.x_hi {
                    self.poses[i].gx = self
                        .rng
                        .range(b.x_lo.max(b.x_hi - (b.x_hi - b.x_lo) / 4), b.x_hi);
                }
            } else if let Some((oi, b)) = self.items[i]
                .iter()
                .enumerate()
                .find_map(|(oi, o)| self.area.bounds(o, target).map(|b| (oi, b)))
            {
                // this orientation cannot fit at all: take one that can
                self.poses[i] = Pose {
                    orient: oi,
                    gx: b.x_hi,
                    gy: self.poses[i].gy.clamp(b.y_lo, b.y_hi),
                };
            }
        }
        self.refresh_all();
    }

    /// Swaps the places of two random parts of different shapes (each keeps its orientation,
    /// clamped into its bounds). False when there is nothing to swap.
    fn swap_two(&mut self, length: f64) -> bool {
        let n = self.poses.len();
        if n < 2 {
            return false;
        }
        for _ in 0..8 {
            let (i, j) = (self.rng.below(n), self.rng.below(n));
            if i == j || std::ptr::eq(self.items[i], self.items[j]) {
                continue;
            }
            let (pi, pj) = (self.poses[i], self.poses[j]);
            for (k, at) in [(i, pj), (j, pi)] {
                let o = &self.items[k][self.poses[k].orient];
                if let Some(b) = self.area.bounds(o, length) {
                    self.poses[k].gx = at.gx.clamp(b.x_lo, b.x_hi);
                    self.poses[k].gy = at.gy.clamp(b.y_lo, b.y_hi);
                }
            }
            self.refresh(i);
            self.refresh(j);
            return true;
        }
        false
    }

    /// Removes all overlap without letting any part past the usable area (a sheet of fixed
    /// length). True on success; the budget's rounds bound the effort.
    pub fn separate_in_place(&mut self, budget: &Budget) -> bool {
        self.separate(f64::INFINITY, budget)
    }

    /// Makes an overlapping start layout feasible, letting the length grow a little if needed.
    pub fn restore(&mut self, budget: &Budget) -> bool {
        let mut length = self.used_length();
        for _ in 0..8 {
            if self.separate(length, budget) {
                return true;
            }
            if budget.over(self.rounds) {
                return false;
            }
            length += (length * 0.005).max(self.area.cell);
            for i in 0..self.poses.len() {
                let o = &self.items[i][self.poses[i].orient];
                if let Some(b) = self.area.bounds(o, length) {
                    self.poses[i].gx = self.poses[i].gx.clamp(b.x_lo, b.x_hi);
                    self.poses[i].gy = self.poses[i].gy.clamp(b.y_lo, b.y_hi);
                }
            }
            self.refresh_all();
        }
        false
    }

    /// Shrinks the used length until the budget runs out. `on_better(poses, length)` is called
    /// with each feasible shorter layout; afterwards the compactor holds the best one.
    pub fn compact(&mut self, budget: &Budget, on_better: impl FnMut(&[Pose], f64)) {
        self.compact_from(budget, 0.01, on_better)
    }

    /// `compact`, with the first shrink `first_step` of the length (a fraction): small when the
    /// layout comes from a coarser raster, whose slack is what there is to win at first.
    pub fn compact_from(
        &mut self,
        budget: &Budget,
        first_step: f64,
        mut on_better: impl FnMut(&[Pose], f64),
    ) {
        let mut best = self.poses.clone();
        let mut best_len = self.used_length();
        // the layout shrinking starts from: the best, or an equally long variant of it
        let mut current = best.clone();
        let mut current_len = best_len;
        let cell = self.area.cell;
        let mut ratio: f64 = first_step;
        let min_step = cell;
        while !budget.over(self.rounds) {
            let step = (current_len * ratio).max(min_step);
            let target = current_len - step;
            if target <= self.area.x0 {
                break;
            }
            self.poses.clone_from(&current);
            self.pull_inside(target);
            if self.separate(target, budget) {
                current.clone_from(&self.poses);
                current_len = self.used_length();
                if current_len < best_len - 1e-9 {
                    best.clone_from(&current);
                    best_len = current_len;
                    on_better(&best, best_len);
                }
                ratio = (ratio * 1.2).min(0.02);
            } else if ratio * current_len > min_step * 1.5 {
                ratio *= 0.5;
            } else {
                // stuck at the smallest step: look for another layout of the same length by
                // swapping two parts, and shrink from that one
                // (the overlaps recorded are the failed separation's: recount them)
                self.poses.clone_from(&current);
                self.refresh_all();
                if self.swap_two(current_len) && self.separate(current_len, budget) {
                    current.clone_from(&self.poses);
                    current_len = self.used_length();
                    ratio = 0.005;
                }
            }
        }
        self.poses = best;
        self.refresh_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest2d::model::DepthLevels;

    fn square(side: u32, levels: &DepthLevels) -> Oriented {
        let raster = PartRaster::from_cells(side, side, |_, _| true);
        Oriented {
            rotation: 0.0,
            mirrored: false,
            depth: levels.of(&raster, side as f64),
            raster,
            origin: Point::new(0.0, 0.0),
            bbox: BBox {
                min: Point::new(0.0, 0.0),
                max: Point::new(side as f64, side as f64),
            },
            margin: 0,
        }
    }

    #[test]
    fn pair_weights_by_size_grow_with_the_parts() {
        let off = DepthLevels::off();
        let (big, small, other) = (square(12, &off), square(3, &off), square(5, &off));
        let w = weights_by_size(&[
            std::slice::from_ref(&big),
            std::slice::from_ref(&small),
            std::slice::from_ref(&other),
        ]);
        // areas 144, 9 and 25 (mean 59.33): big with big 1.56 x WEIGHT_ONE, big with small
        // 0.78, small with small 0.39
        let at = |i: usize, j: usize| w[i * 3 + j];
        assert!(at(0, 0) > at(0, 1) && at(0, 1) > at(1, 1));
        assert_eq!(at(0, 1), at(1, 0));
        assert_eq!(
            at(0, 0),
            (WEIGHT_ONE as f64 * (144.0f64 / (178.0 / 3.0)).sqrt()).round() as u32
        );
        assert_eq!(
            at(1, 1),
            (WEIGHT_ONE as f64 * (9.0f64 / (178.0 / 3.0)).sqrt()).round() as u32
        );
    }

    #[test]
    fn an_inserted_part_starts_clear_of_the_placed_parts_and_the_blocked_cells() {
        let levels = DepthLevels::off();
        let (big, small) = (square(20, &levels), square(10, &levels));
        // a 40 x 20 sheet, its left half taken by a part
        let mut area = SheetArea {
            cell: 1.0,
            x0: 0.0,
            y0: 0.0,
            x1: 40.0,
            y1: 20.0,
            blocked: None,
            margin: 0,
        };
        let placed = [Shape {
            raster: &big.raster,
            x: 0,
            y: 0,
        }];
        let eval = kerf_kernels::CpuEvaluator;
        let orients = std::slice::from_ref(&small);
        // the left-most position clear of the part, the lowest at that x
        let pose = least_overlap_pose(&eval, &area, &placed, orients).unwrap();
        assert_eq!((pose.orient, pose.gx, pose.gy), (0, 20, 0));
        // the next 10 columns blocked: the start moves past them
        area.blocked = Some(PartRaster::from_cells(40, 20, |x, _| (20..30).contains(&x)));
        let pose = least_overlap_pose(&eval, &area, &placed, orients).unwrap();
        assert_eq!((pose.gx, pose.gy), (30, 0));
        // no room anywhere: the least overlap (half the small part over the blocked cells)
        area.blocked = Some(PartRaster::from_cells(40, 20, |x, _| x >= 20 && x % 2 == 0));
        let pose = least_overlap_pose(&eval, &area, &placed, orients).unwrap();
        assert_eq!((pose.gx, pose.gy), (20, 0));
    }

    #[test]
    fn sampled_rows_are_whole_rows_one_in_each_band_of_the_height() {
        let b = Bounds {
            x_lo: -3,
            x_hi: 40,
            y_lo: 5,
            y_hi: 104,
        };
        let mut rng = Rng::new(7);
        for _ in 0..50 {
            let rows: Vec<Bounds> = sampled_rows(b, 8, &mut rng).collect();
            assert_eq!(rows.len(), 8);
            for (j, r) in rows.iter().enumerate() {
                assert_eq!((r.x_lo, r.x_hi, r.y_lo), (b.x_lo, b.x_hi, r.y_hi));
                // band j of the 100 heights: from floor(12.5 j) to under 12.5 (j + 1)
                let (y, j) = (r.y_lo - b.y_lo, j as i32);
                assert!(y >= j * 100 / 8 && y * 8 < (j + 1) * 100, "{rows:?}");
            }
        }
        // more rows asked than the bounds have: each height once
        let short = Bounds { y_hi: 7, ..b };
        let ys: Vec<i32> = sampled_rows(short, 8, &mut rng).map(|r| r.y_lo).collect();
        assert_eq!(ys, [5, 6, 7]);
        let one = Bounds { y_hi: 5, ..b };
        assert_eq!(sampled_rows(one, 3, &mut rng).count(), 1);
    }

    #[test]
    fn focus_rows_lie_near_the_place_and_within_the_bounds() {
        // a 64-cell part: a step of 2 cells, rows reaching 8 cells either side
        let raster = PartRaster::from_cells(64, 64, |_, _| true);
        let b = Bounds {
            x_lo: 0,
            x_hi: 100,
            y_lo: 0,
            y_hi: 100,
        };
        let row = |y, x_lo, x_hi| Bounds {
            x_lo,
            x_hi,
            y_lo: y,
            y_hi: y,
        };
        let mid: Vec<Bounds> = focus_rows(&raster, b, (50, 50)).collect();
        assert_eq!(
            mid,
            vec![
                row(48, 42, 58),
                row(52, 42, 58),
                row(46, 42, 58),
                row(54, 42, 58)
            ]
        );
        // at a corner: rows outside the bounds are left out, the reach is clamped
        let corner: Vec<Bounds> = focus_rows(&raster, b, (3, 1)).collect();
        assert_eq!(corner, vec![row(3, 0, 11), row(5, 0, 11)]);
        // a one-cell part still steps a cell
        let tiny = PartRaster::from_cells(1, 1, |_, _| true);
        assert_eq!(focus_rows(&tiny, b, (50, 50)).count(), 4);
    }

    fn at(gx: i32, gy: i32) -> Pose {
        Pose { orient: 0, gx, gy }
    }

    #[test]
    fn with_depth_levels_a_deep_overlap_costs_more_than_a_shallow_one_of_as_many_cells() {
        // levels 4 and 8 cells deep in a 32-cell square
        let levels: DepthLevels = "0.125:1,0.25:2".parse().unwrap();
        let big = square(32, &levels);
        let small = square(4, &DepthLevels::off());
        let paid = |b: &Oriented, x, y| pair_costs(&small, at(x, y), b, at(0, 0)).0;
        // 16 cells shared either way. Along the big square's edge they lie 1 to 4 deep: the
        // column 4 deep costs 1 + 1, the others 1
        assert_eq!(pair_overlap(&small.raster, 0, 10, &big.raster, 0, 0), 16);
        assert_eq!(paid(&big, 0, 10), 12 + 4 * 2);
        // at its centre all are at least 8 deep: 1 + 1 + 2 each
        assert_eq!(paid(&big, 14, 14), 16 * 4);
        // the other way, the small square has no levels: its cells cost 1
        assert_eq!(pair_costs(&small, at(14, 14), &big, at(0, 0)).1, 16);
        // without levels every cell costs 1, and no shared cell costs nothing
        let flat = square(32, &DepthLevels::off());
        assert_eq!(paid(&flat, 14, 14), 16);
        assert_eq!(pair_costs(&small, at(40, 0), &big, at(0, 0)), (0, 0));
    }

    #[test]
    fn depth_levels_parse_or_say_what_is_wrong() {
        assert_eq!("off".parse::<DepthLevels>().unwrap(), DepthLevels::off());
        assert!("0.125:2,0.25:4".parse::<DepthLevels>().is_ok());
        for bad in ["", "0.5", "2:1", "0.1:0", "0.1:x"] {
            let err = bad.parse::<DepthLevels>().unwrap_err();
            assert!(err.starts_with("depth levels:"), "{bad}: {err}");
        }
    }
}
