//! The 2D problem and its answer, in engine terms (no wire names, no JSON).

use crate::geometry::{PartGeometry, Shape};
pub use kerf_kernels::OverlapMeasure;
use kerf_kernels::PartRaster;

impl PartSpec {
    /// A part with the interface's defaults: no rotation, no mirroring, priority 0, the global
    /// spacing, its true shape, no fillers.
    pub fn new(id: &str, geometry: PartGeometry, quantity: u32) -> PartSpec {
        PartSpec {
            id: id.into(),
            geometry,
            quantity,
            rotations: vec![0.0],
            allow_mirror: false,
            priority: 0,
            spacing_override: None,
            nest_as_rectangle: false,
            filler_quantity: 0,
            kit: None,
            common_cut: None,
        }
    }

    /// Every orientation the part may take, as (mirrored, rotation in degrees): each allowed
    /// rotation, then each again mirrored where mirroring is allowed.
    pub fn orientations(&self) -> impl Iterator<Item = (bool, f64)> + '_ {
        let mirrors: &'static [bool] = if self.allow_mirror {
            &[false, true]
        } else {
            &[false]
        };
        mirrors
            .iter()
            .flat_map(move |&m| self.rotations.iter().map(move |&r| (m, r)))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    /// Fill along the sheet's X dimension (used length is measured in X).
    #[default]
    X,
    Y,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Origin {
    #[default]
    BottomLeft,
    TopLeft,
    TopRight,
    BottomRight,
}

/// NestingAngleDegrees: how far the fill direction is turned from the NestingDirection axis
/// towards the sheet's other axis, in degrees, 0 <= angle < 90. Within that range the fill
/// still starts at the NestingOrigin corner (at 90 it would start at the next corner, which is
/// what the other NestingDirection already gives).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct FillAngle(f64);

impl FillAngle {
    /// The angle, or why it is refused (the caller names its field).
    pub fn new(degrees: f64) -> Result<FillAngle, String> {
        if (0.0..90.0).contains(&degrees) {
            Ok(FillAngle(degrees))
        } else {
            Err(format!(
                "must be at least 0 and less than 90 degrees (got {degrees}): it turns the fill \
                 from the NestingDirection axis towards the other axis; for 90 give the other \
                 NestingDirection"
            ))
        }
    }
    pub fn degrees(self) -> f64 {
        self.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Objective {
    #[default]
    MaximiseUtilisation,
    MinimiseSheetCount,
    MinimiseLength,
    MinimiseCost,
}

/// How strongly identical sheet layouts are preferred (fewer distinct programs to write and run,
/// traded against material; see `sheets::repeat_floor` for what each level may give up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RepeatPreference {
    /// Layouts are grouped only when they come out identical.
    #[default]
    None,
    Low,
    Medium,
    High,
}

impl RepeatPreference {
    /// The level by name, leniently (DESIGN 5.1): case, `_`, `-` and spaces ignored.
    pub fn parse(name: &str) -> Option<RepeatPreference> {
        match crate::lenient::enum_key(name).as_str() {
            "" | "none" | "0" => Some(RepeatPreference::None),
            "low" | "1" => Some(RepeatPreference::Low),
            "medium" | "2" => Some(RepeatPreference::Medium),
            "high" | "3" => Some(RepeatPreference::High),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InnerLoopFill {
    /// Holes of parts stay empty.
    None,
    /// Small parts may go into holes of larger ones.
    #[default]
    Allow,
    /// As Allow (the search already takes hole space when it is the best place).
    Prefer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FillerStrategy {
    #[default]
    None,
    FillLastSheet,
    FillAllSheets,
}

/// One part type to nest.
#[derive(Clone, Debug)]
pub struct PartSpec {
    pub id: String,
    pub geometry: PartGeometry,
    pub quantity: u32,
    /// Allowed rotations in degrees, counter-clockwise (at least one).
    pub rotations: Vec<f64>,
    pub allow_mirror: bool,
    /// Higher is nested first.
    pub priority: i32,
    pub spacing_override: Option<f64>,
    pub nest_as_rectangle: bool,
    /// Extra copies placed only where room is left (per FillerStrategy).
    pub filler_quantity: u32,
    /// Set when the part belongs to an assembly: its copies nest only in whole kits.
    pub kit: Option<KitRole>,
    /// AllowCommonCutIfEnabled: `Some(n)` lets copies of the part share straight edges in
    /// blocks of at most `n` copies (CommonCutMaxBlockSize; 0 = no limit of the part's own).
    pub common_cut: Option<u32>,
}

/// A part's place in an assembly (a kit): `quantity` is then `per_kit` times the number of
/// kits, and every sheet holds as many whole kits of the assembly as it holds any of its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KitRole {
    /// The assembly's index in the request (`Assemblies[i]`).
    pub assembly: u32,
    /// Copies of this part in one kit (at least 1).
    pub per_kit: u32,
}

#[derive(Clone, Debug)]
pub enum SheetShape {
    Rectangle {
        width: f64,
        height: f64,
    },
    /// An irregular sheet; its holes are defects to keep clear of.
    Outline(Shape),
}

#[derive(Clone, Debug)]
pub struct SheetSpec {
    pub id: String,
    pub shape: SheetShape,
    /// None: as many as needed.
    pub quantity: Option<u32>,
    pub priority: i32,
    pub top: f64,
    pub left: f64,
    pub right: f64,
    pub bottom: f64,
    /// Clearance from the outline and defects of an irregular sheet.
    pub irregular_spacing: f64,
}

impl SheetSpec {
    pub fn rectangle(id: &str, width: f64, height: f64) -> SheetSpec {
        SheetSpec {
            id: id.into(),
            shape: SheetShape::Rectangle { width, height },
            quantity: None,
            priority: 0,
            top: 0.0,
            left: 0.0,
            right: 0.0,
            bottom: 0.0,
            irregular_spacing: 0.0,
        }
    }
    /// Width and height of the sheet's bounding box (the outline's box for irregular sheets).
    pub fn extent(&self) -> (f64, f64) {
        match &self.shape {
            SheetShape::Rectangle { width, height } => (*width, *height),
            SheetShape::Outline(s) => {
                let b = s.bbox();
                (b.max.x, b.max.y)
            }
        }
    }
    /// The sheet's material as a shape: the rectangle from the origin, or the outline with its
    /// defects as holes.
    pub fn material(&self) -> Shape {
        match &self.shape {
            SheetShape::Rectangle { width, height } => Shape::rectangle(*width, *height),
            SheetShape::Outline(s) => s.clone(),
        }
    }
    pub fn area(&self) -> f64 {
        match &self.shape {
            SheetShape::Rectangle { width, height } => width * height,
            SheetShape::Outline(s) => s.area(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub part_spacing: f64,
    pub max_run_time_s: f64,
    /// Stop once utilisation (percent) reaches this.
    pub utilisation_target: Option<f64>,
    pub direction: Direction,
    pub origin: Origin,
    pub fill_angle: FillAngle,
    pub objective: Objective,
    pub repeat: RepeatPreference,
    pub inner_loop_fill: InnerLoopFill,
    pub filler_strategy: FillerStrategy,
    pub strict_priorities: bool,
    /// 0: no limit.
    pub max_different_sheet_sizes: u32,
    /// 0: all cores.
    pub max_cpu: u32,
    pub seed: u64,
    /// Stop improving after this many local-search rounds per thread (deterministic budget).
    pub max_iterations: Option<u64>,
    /// Raster resolution: cells across a typical part's smaller side.
    pub cells_per_part: f64,
    /// Common-line cutting (CommonCutSettings), when a mode and an importance ask for it.
    pub common_cutting: Option<CommonCutting>,
    /// How the local search evaluates its moves. The same input, seed and moves give the
    /// same layout on every backend.
    pub moves: Moves,
    /// Rows of positions spread over the sheet's height that each move scans per orientation,
    /// besides its own lines (`search::sampled_rows`): wider moves, which a GPU evaluates at
    /// little cost. 0: none. The same input, seed, moves and rows give the same layout on every
    /// backend.
    pub sampled_rows: u32,
    /// The overlap measure's depth levels (off: every covered cell costs 1).
    pub overlap_depth: DepthLevels,
    /// What each local-search thread pays for the cells two parts share (`ThreadMeasures`).
    pub overlap_measure: ThreadMeasures,
}

/// Which `OverlapMeasure` each thread of a search in parallel threads uses: one for all, or the
/// two in turn. Why `Mixed` is the default: the two measures lead the search to different
/// layouts (root is denser on swim, cells on albano), and the threads of a compaction phase all
/// start from the best layout so far, so each measure's search goes on from where the other got
/// to: side by side at 60 s on this 2-core machine, swim 74.16 against 73.44 with cells alone
/// (root alone 74.21 over five seeds, an earlier session) and albano 88.13 against 87.57 (root
/// alone 87.01); the ten strips 85.12 against 84.97 (seeds 1 to 3; `benches/history/strip.md`,
/// thirty-fifth session).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ThreadMeasures {
    /// Every thread pays the shared cells (`OverlapMeasure::Cells`).
    Cells,
    /// Every thread pays their root (`OverlapMeasure::RootCells`).
    Root,
    /// Even threads cells, odd threads root (one thread: cells alone).
    #[default]
    Mixed,
}

impl ThreadMeasures {
    /// The measure of thread `thread` (0, 1, ...) of a search in parallel threads.
    pub fn for_thread(self, thread: usize) -> OverlapMeasure {
        match self {
            ThreadMeasures::Cells => OverlapMeasure::Cells,
            ThreadMeasures::Root => OverlapMeasure::RootCells,
            ThreadMeasures::Mixed if thread % 2 == 1 => OverlapMeasure::RootCells,
            ThreadMeasures::Mixed => OverlapMeasure::Cells,
        }
    }
}

impl std::str::FromStr for ThreadMeasures {
    type Err = String;
    fn from_str(s: &str) -> Result<ThreadMeasures, String> {
        match s {
            "cells" => Ok(ThreadMeasures::Cells),
            "root" => Ok(ThreadMeasures::Root),
            "mixed" => Ok(ThreadMeasures::Mixed),
            other => Err(format!(
                "overlap measure: expected cells, root or mixed, not {other:?}"
            )),
        }
    }
}

/// What one local-search move scans and how a pass evaluates its moves: the part of
/// `Settings` that `search::Compactor` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MoveSet {
    pub moves: Moves,
    pub sampled_rows: u32,
    /// What a pair's shared cells cost; with `OverlapMeasure::RootCells` the pair weights also
    /// start at the parts' sizes (`search::Compactor::new`).
    pub measure: OverlapMeasure,
}

impl Settings {
    /// The moves of thread `thread` of a search in parallel threads (a search on one thread:
    /// 0), whose overlap measure `overlap_measure` gives.
    pub fn move_set(&self, thread: usize) -> MoveSet {
        MoveSet {
            moves: self.moves,
            sampled_rows: self.sampled_rows,
            measure: self.overlap_measure.for_thread(thread),
        }
    }
}

/// How a pass of the local search evaluates the moves of its overlapping items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Moves {
    /// Each item's lines against the layout its predecessors' moves left, one evaluation call
    /// per move (the search as it was before batches; kept for comparison).
    OneByOne,
    /// Every item's lines in one call against the layout before the pass, each move re-checked
    /// exactly as it is made (`Compactor::move_batch`): one GPU round trip per pass instead of
    /// one per move. As dense as one by one on the CPU (within the spread of runs), and what
    /// lets a GPU speed the search up, so the default on every backend: the CPU and the GPU
    /// follow the same search.
    #[default]
    Batched,
}

impl std::str::FromStr for Moves {
    type Err = String;
    fn from_str(s: &str) -> Result<Moves, String> {
        match s {
            "batched" => Ok(Moves::Batched),
            "one-by-one" => Ok(Moves::OneByOne),
            other => Err(format!(
                "moves: expected batched or one-by-one, not {other:?}"
            )),
        }
    }
}

/// The overlap measure's depth levels (`Settings::overlap_depth`): a cell at least `fraction`
/// x the typical part's smaller side deep inside a placed part (and at least 2 cells deep)
/// adds `extra` to the cost of covering it, so that a part pushed out of a deep overlap gains
/// more than one sliding along a shallow one. Cells along the outline cost 1, as every cell
/// does without levels. Off by default: measured less dense at equal time on the CPU and on
/// the GPU (benches/history/strip.md and gpu.md).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DepthLevels(Vec<(f64, u32)>);

/// The largest extra weight of a level, parsed or merged: a pair weight (at most
/// `WEIGHT_ONE` x 1,000,000) times it stays in u32.
const MAX_DEPTH_EXTRA: u32 = 16;

impl DepthLevels {
    /// No levels: every covered cell costs 1.
    pub fn off() -> DepthLevels {
        DepthLevels(Vec::new())
    }

    /// The levels of `raster` whose typical part spans `unit` cells on its smaller side, each
    /// with its extra weight; levels that reach the same depth are merged, empty ones left out.
    pub fn of(&self, raster: &PartRaster, unit: f64) -> Vec<(PartRaster, u32)> {
        let mut at: Vec<(u32, u32)> = Vec::new();
        for &(fraction, extra) in &self.0 {
            let t = ((fraction * unit).round() as u32).max(2);
            match at.iter_mut().find(|(d, _)| *d == t) {
                Some((_, e)) => *e = (*e + extra).min(MAX_DEPTH_EXTRA),
                None => at.push((t, extra)),
            }
        }
        let thresholds: Vec<u32> = at.iter().map(|(t, _)| *t).collect();
        raster
            .depth_levels(&thresholds)
            .into_iter()
            .zip(at)
            .filter_map(|(r, (_, extra))| r.map(|r| (r, extra)))
            .collect()
    }
}

impl std::str::FromStr for DepthLevels {
    type Err = String;
    /// `off`, or `fraction:extra` pairs separated by commas (fractions in (0, 1], extras 1 to
    /// 16), for example `0.0625:1,0.125:2,0.25:4`.
    fn from_str(s: &str) -> Result<DepthLevels, String> {
        if s.trim() == "off" {
            return Ok(DepthLevels::off());
        }
        s.split(',')
            .map(|level| {
                let bad =
                    || format!("depth levels: expected off or fraction:extra,..., not {level:?}");
                let (f, e) = level.split_once(':').ok_or_else(bad)?;
                let f: f64 = f.trim().parse().map_err(|_| bad())?;
                let e: u32 = e.trim().parse().map_err(|_| bad())?;
                if !(f > 0.0 && f <= 1.0) || !(1..=MAX_DEPTH_EXTRA).contains(&e) {
                    return Err(bad());
                }
                Ok((f, e))
            })
            .collect::<Result<Vec<_>, String>>()
            .map(DepthLevels)
    }
}

/// How copies of one part are grouped to share cuts (CommonCutMode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockMode {
    /// Two copies, the second turned half a turn, along their longest shared edge.
    Pairs,
    /// Copies in a row, each sharing an edge with the next.
    Chains,
    /// Copies in rows and columns: the cuts between them run through the whole block.
    Grid,
}

/// How much common cutting is worth against material (CommonCuttingImportance); it sets how
/// large a block may grow when the part does not limit it (`CommonCutting::block_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutImportance {
    Low,
    Medium,
    High,
}

/// How much of two edges a common cut must join (CommonCutSafety).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CutSafety {
    /// Only edges that match end to end.
    Conservative,
    /// Edges that share at least half of the longer one.
    #[default]
    Normal,
    /// Any shared stretch of at least MinLengthOfCommonCut.
    Aggressive,
}

/// Common-line cutting, parsed: only present when it is on (a mode other than None and an
/// importance other than None), so the engine never sees a half-enabled state.
#[derive(Clone, Debug, PartialEq)]
pub struct CommonCutting {
    pub mode: BlockMode,
    pub importance: CutImportance,
    pub safety: CutSafety,
    /// CommonCutGap: the distance between parts along a common cut (>= 0; the cut runs in the
    /// middle).
    pub gap: f64,
    /// MinLengthOfCommonCut (>= 0).
    pub min_length: f64,
    /// CommonCutPartsMaximumDimensionX/Y: larger parts are cut alone (None: no limit).
    pub max_part_x: Option<f64>,
    pub max_part_y: Option<f64>,
    /// OnlyPairs: blocks of two copies at most, whatever the mode.
    pub only_pairs: bool,
    /// CanIntroduceHolesFromCommonCut: may a block enclose scrap between its parts?
    pub may_enclose: bool,
}

impl CommonCutting {
    /// Common cutting in `mode` at `importance` with a `gap`, every other setting at the
    /// interface's default (Normal safety, no minimum length, no size limit, blocks of any
    /// size the importance allows, no enclosed scrap).
    pub fn new(mode: BlockMode, importance: CutImportance, gap: f64) -> CommonCutting {
        CommonCutting {
            mode,
            importance,
            safety: CutSafety::Normal,
            gap,
            min_length: 0.0,
            max_part_x: None,
            max_part_y: None,
            only_pairs: false,
            may_enclose: false,
        }
    }

    /// The most copies a block of a part may hold: the part's CommonCutMaxBlockSize, else the
    /// importance's (Low 2, Medium 4, High 9), never more than two with OnlyPairs or Pairs.
    pub fn block_cap(&self, part_limit: u32) -> u32 {
        let by_importance = match self.importance {
            CutImportance::Low => 2,
            CutImportance::Medium => 4,
            CutImportance::High => 9,
        };
        let cap = if part_limit > 0 {
            part_limit
        } else {
            by_importance
        };
        if self.only_pairs || self.mode == BlockMode::Pairs {
            cap.min(2)
        } else {
            cap
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            part_spacing: 0.0,
            max_run_time_s: 10.0,
            utilisation_target: None,
            direction: Direction::X,
            origin: Origin::BottomLeft,
            fill_angle: FillAngle::default(),
            objective: Objective::MaximiseUtilisation,
            repeat: RepeatPreference::None,
            inner_loop_fill: InnerLoopFill::Allow,
            filler_strategy: FillerStrategy::None,
            strict_priorities: false,
            max_different_sheet_sizes: 0,
            max_cpu: 0,
            seed: 1,
            max_iterations: None,
            cells_per_part: 128.0,
            common_cutting: None,
            moves: Moves::Batched,
            sampled_rows: 0,
            overlap_depth: DepthLevels::off(),
            overlap_measure: ThreadMeasures::Mixed,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Problem {
    pub parts: Vec<PartSpec>,
    pub sheets: Vec<SheetSpec>,
    pub settings: Settings,
}

impl Problem {
    /// Whether any part belongs to an assembly (kits move only whole).
    pub fn has_kits(&self) -> bool {
        self.parts.iter().any(|p| p.kit.is_some())
    }

    /// How many part copies are asked for (fillers aside): the size of the nest.
    pub fn copies_asked(&self) -> u64 {
        self.parts.iter().map(|p| u64::from(p.quantity)).sum()
    }

    /// The area of every part copy asked for (fillers aside), holes subtracted.
    pub fn demanded_area(&self) -> f64 {
        self.parts
            .iter()
            .map(|p| p.geometry.area() * p.quantity as f64)
            .sum()
    }
}

/// A part placed on a sheet (DESIGN 5.2): mirror about the local Y axis when `mirrored`, rotate
/// `rotation` degrees CCW about the local origin, translate by (`x`, `y`); sheet origin bottom-left.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Index into `Problem::parts`.
    pub part: usize,
    /// Which copy of that part (0-based, fillers after the required quantity).
    pub instance: u32,
    pub x: f64,
    pub y: f64,
    pub rotation: f64,
    pub mirrored: bool,
    pub is_filler: bool,
}

/// One distinct sheet layout and how many sheets are cut to it.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetLayout {
    /// Index into `Problem::sheets`.
    pub sheet: usize,
    pub multiplicity: u32,
    pub placements: Vec<Placement>,
    /// Percent of the used sheet area covered by parts.
    pub utilisation: f64,
    /// Extent of the parts along the nesting direction, from the sheet's start.
    pub used_length: f64,
    /// The cuts that parts of this layout share (common-line cutting), each cut once.
    pub common_cuts: Vec<CommonCut>,
}

/// One straight cut that separates several placed parts at once (common-line cutting): the
/// parts lie on both sides of the segment, CommonCutGap apart, their edges along it.
#[derive(Clone, Debug, PartialEq)]
pub struct CommonCut {
    pub from: crate::geometry::Point,
    pub to: crate::geometry::Point,
    /// Indices into the layout's `placements`: every part with an edge along the cut.
    pub parts: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Unplaced {
    pub part: usize,
    pub quantity: u32,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Statistics {
    pub utilisation: f64,
    pub sheets_used: u32,
    pub parts_requested: u32,
    pub parts_placed: u32,
    pub parts_unplaced: u32,
    pub used_length: f64,
    pub elapsed_s: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NestResult {
    pub layouts: Vec<SheetLayout>,
    pub unplaced: Vec<Unplaced>,
    pub stats: Statistics,
    /// The evaluation backend that ran the search.
    pub engine: String,
}

/// The rotations an AllowableRotation value allows (DESIGN 5.1): `Any` (every `step` degrees),
/// `None`, `Rotate180`, `Rotate90`, their indices 0 to 3, or a step in degrees. Lenient about
/// case, `_`, `-` and spaces. The error says what is allowed.
pub fn rotation_set(allowable: &str, step: f64) -> Result<Vec<f64>, String> {
    let step = match crate::lenient::enum_key(allowable).as_str() {
        "" | "any" | "0" => step,
        "none" | "1" => 360.0,
        "rotate180" | "2" => 180.0,
        "rotate90" | "3" => 90.0,
        other => other.parse::<f64>().map_err(|_| {
            format!(
                "unknown value '{}'; allowed: Any, None, Rotate180, Rotate90, or a step in degrees",
                allowable.trim()
            )
        })?,
    };
    if !(step > 0.0 && step <= 360.0) {
        return Err(format!(
            "the rotation step must be between 0 and 360 degrees (got {step})"
        ));
    }
    // every multiple of the step below a full turn
    let n = ((360.0 / step) - 1e-9).floor() as usize + 1;
    Ok((0..n)
        .map(|k| k as f64 * step)
        .filter(|a| *a < 360.0 - 1e-9)
        .collect())
}

/// The largest AllowableTilt, in degrees: past it the tilts of two 90-degree rotations would
/// overlap, and the part is better given a rotation step instead.
pub const MAX_TILT_DEG: f64 = 45.0;
/// The widest gap, in degrees, between two tilted angles searched on one side of a rotation.
const TILT_SAMPLE_DEG: f64 = 2.5;
/// The most tilted angles searched on each side of a rotation: every angle is one more
/// orientation for the search to try at every move, so a wide tilt is sampled, not swept.
const MAX_TILT_SAMPLES: u32 = 3;

/// The angles searched for a part with these allowed rotations and AllowableTilt `tilt`: each
/// rotation, and on each side of it `n` evenly spaced angles out to the full tilt, where `n` is
/// the tilt over 2.5 degrees rounded up, at most 3 (tilt 1: ±1; tilt 5: ±2.5 and ±5; tilt 10:
/// ±3.33, ±6.67 and ±10). Angles are in [0, 360), each once, each rotation's own first. A tilt
/// outside 0..=MAX_TILT_DEG is refused with the reason (the caller names its field).
pub fn tilted(rotations: &[f64], tilt: f64) -> Result<Vec<f64>, String> {
    if !(0.0..=MAX_TILT_DEG).contains(&tilt) {
        return Err(format!(
            "must be between 0 and {MAX_TILT_DEG} degrees (got {tilt}); for wider turns give a rotation step"
        ));
    }
    let mut out: Vec<f64> = Vec::new();
    let mut push = |a: f64| {
        let a = a.rem_euclid(360.0);
        let a = if a > 360.0 - 1e-9 { 0.0 } else { a };
        if !out.iter().any(|b| (b - a).abs() < 1e-9) {
            out.push(a);
        }
    };
    let n = if tilt > 0.0 {
        ((tilt / TILT_SAMPLE_DEG).ceil() as u32).clamp(1, MAX_TILT_SAMPLES)
    } else {
        0
    };
    for &r in rotations {
        push(r);
        for k in 1..=n {
            let d = tilt * k as f64 / n as f64;
            push(r - d);
            push(r + d);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn a_tilt_adds_evenly_spaced_angles_out_to_its_full_width() {
        assert!(close(&tilted(&[0.0, 90.0], 0.0).unwrap(), &[0.0, 90.0]));
        assert!(close(&tilted(&[90.0], 1.0).unwrap(), &[90.0, 89.0, 91.0]));
        assert!(close(
            &tilted(&[0.0], 5.0).unwrap(),
            &[0.0, 357.5, 2.5, 355.0, 5.0]
        ));
        let wide = tilted(&[180.0], 10.0).unwrap();
        assert_eq!(wide.len(), 7);
        assert!(wide.iter().any(|a| (a - 170.0).abs() < 1e-9));
        assert!(wide.iter().any(|a| (a - (180.0 + 20.0 / 3.0)).abs() < 1e-9));
    }

    #[test]
    fn tilted_angles_that_meet_another_rotation_are_searched_once() {
        // a 2.5-degree step tilted by 2.5: every tilted angle is an allowed rotation already
        let step = rotation_set("2.5", 90.0).unwrap();
        assert_eq!(step.len(), 144);
        assert_eq!(tilted(&step, 2.5).unwrap().len(), step.len());
    }

    #[test]
    fn a_fill_angle_outside_0_to_90_is_refused_with_the_reason() {
        assert_eq!(FillAngle::new(0.0).unwrap().degrees(), 0.0);
        assert_eq!(FillAngle::new(89.5).unwrap().degrees(), 89.5);
        for bad in [-0.5, 90.0, 180.0, f64::NAN] {
            let why = FillAngle::new(bad).unwrap_err();
            assert!(why.contains("less than 90"), "{bad}: {why}");
        }
    }

    #[test]
    fn mixed_measures_give_threads_cells_and_root_in_turn() {
        let mixed: ThreadMeasures = "mixed".parse().unwrap();
        assert_eq!(mixed, ThreadMeasures::default());
        let of = |m: ThreadMeasures| (0..4).map(|t| m.for_thread(t)).collect::<Vec<_>>();
        use OverlapMeasure::{Cells, RootCells};
        assert_eq!(of(mixed), [Cells, RootCells, Cells, RootCells]);
        assert_eq!(of("cells".parse().unwrap()), [Cells; 4]);
        assert_eq!(of("root".parse().unwrap()), [RootCells; 4]);
        let why = "deep".parse::<ThreadMeasures>().unwrap_err();
        assert!(why.contains("cells, root or mixed"), "{why}");
        // thread 0, and so a search on one thread (MaximumCPUCount 1), pays the cell count
        let settings = Settings::default();
        assert_eq!(settings.move_set(0).measure, Cells);
        assert_eq!(settings.move_set(1).measure, RootCells);
    }

    #[test]
    fn a_tilt_outside_its_range_is_refused_with_the_reason() {
        for bad in [-1.0, 45.5, f64::NAN] {
            let why = tilted(&[0.0], bad).unwrap_err();
            assert!(why.contains("between 0 and 45"), "{bad}: {why}");
        }
    }
}
