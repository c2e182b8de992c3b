//! Blocks of one part: copies placed so that straight edges coincide at the CommonCutGap.
//!
//! A block is found on the part's outline alone. A *support edge* is a straight stretch of the
//! outline (collinear pieces joined) that the whole part lies behind and touches nowhere else,
//! so a copy on the other side meets the part along that edge only and cannot enclose scrap
//! with it there. Three constructions use them:
//! - a pair: the copy turned half a turn about the edge's middle, pushed out by the gap (the
//!   edge meets itself end to end);
//! - a chain: copies translated across the part, from a support edge to the opposite one
//!   (parallel, facing the other way), middles aligned;
//! - a grid: two such translations, rows times columns.
//!
//! Every candidate is checked by the exact verifier with its cuts (`verify::verify_pairs`)
//! before it is offered, and, unless CanIntroduceHolesFromCommonCut, refused when its parts
//! enclose scrap between them.

use crate::geometry::boolean;
use crate::geometry::{Affine, PartGeometry, Point, Shape};
use crate::nest2d::cut_check::SharedCuts;
use crate::nest2d::model::{BlockMode, CommonCut, CommonCutting, CutImportance, CutSafety};
use crate::nest2d::verify::{verify_pairs, PlacedShape, TOLERANCE};

/// One copy in a block: turned by `rotation` degrees about the part's origin, then moved by
/// `offset` (never mirrored: a mirrored block mirrors every copy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Member {
    pub rotation: f64,
    pub offset: Point,
}

impl Member {
    pub fn transform(&self) -> Affine {
        Affine::placement(false, self.rotation, self.offset.x, self.offset.y)
    }
}

/// Copies of one part and the cuts they share, in the block's own coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub members: Vec<Member>,
    /// Cuts between members (`parts` index `members`).
    pub cuts: Vec<CommonCut>,
    /// Cut length saved: every stretch the members share is cut once instead of twice.
    pub saved: f64,
    /// How well the block's material fills its convex hull (0..1).
    pub density: f64,
    /// Width and height of its box.
    pub extent: (f64, f64),
}

impl Block {
    pub fn len(&self) -> usize {
        self.members.len()
    }
    /// The block as one part: every member's geometry in block coordinates.
    pub fn geometry(&self, part: &PartGeometry) -> PartGeometry {
        PartGeometry::new(
            self.members
                .iter()
                .flat_map(|m| part.transformed(&m.transform()).components().to_vec())
                .collect(),
        )
    }
    /// How good a block is for `importance`: material (hull density) plus cut length saved
    /// per copy over the part's perimeter, the latter weighted more the more cutting counts.
    fn score(&self, perimeter: f64, importance: CutImportance) -> f64 {
        let weight = match importance {
            CutImportance::Low => 0.5,
            CutImportance::Medium => 1.0,
            CutImportance::High => 2.0,
        };
        self.density + weight * self.saved / self.len() as f64 / perimeter.max(TOLERANCE)
    }
}

/// The most copies in any block, whatever CommonCutMaxBlockSize asks: the candidates grow
/// with its square (every grid shape), and a block this large is already a sheet's worth for
/// all but tiny parts.
pub const MAX_BLOCK: u32 = 36;

/// What the blocks of a part must respect besides the settings.
pub struct Limits<'a> {
    /// Most copies in a block.
    pub cap: u32,
    /// The part's spacing (the gap must not exceed it).
    pub spacing: f64,
    /// Rotations a member may take relative to the block (the pair's half turn needs 180).
    pub rotations: &'a [f64],
    /// Is the block worth offering (it fits a sheet, its size costs little material)?
    pub fits: &'a dyn Fn(&Block) -> bool,
}

/// Every block of `shape` (the part's only outline, holes included) worth offering, best first
/// for the settings' importance; empty when the part has no usable straight edge.
pub fn blocks_of(shape: &Shape, cc: &CommonCutting, limits: &Limits) -> Vec<Block> {
    if limits.cap < 2 || cc.gap > limits.spacing {
        return Vec::new();
    }
    let limits = &Limits {
        cap: limits.cap.min(MAX_BLOCK),
        ..*limits
    };
    let edges: Vec<Edge> = support_edges(shape.outer())
        .into_iter()
        .filter(|e| e.length >= cc.min_length.max(TOLERANCE))
        .collect();
    let mut out: Vec<Block> = Vec::new();
    let mut offer = |members: Vec<Member>, shares: Vec<Shared>| {
        if let Some(b) = checked_block(shape, cc, limits, members, shares) {
            out.push(b);
        }
    };
    // pairs: along each support edge, the copy half a turn round
    if limits.rotations.iter().any(|&r| same_angle(r, 180.0)) {
        for e in &edges {
            let mid = e.a.add(e.b).scale(0.5);
            let copy = Member {
                rotation: 180.0,
                offset: mid.scale(2.0).add(e.normal.scale(cc.gap)),
            };
            offer(
                vec![Member::at_origin(), copy],
                vec![Shared::along(e, 0, 1, cc.gap, e.length)],
            );
        }
    }
    // chains and grids: translations from a support edge across to its opposite
    if cc.mode != BlockMode::Pairs {
        let steps: Vec<Step> = edges
            .iter()
            .filter_map(|e| Step::across(e, &edges, cc))
            .collect();
        for s in &steps {
            for n in 2..=limits.cap {
                offer(line_members(s, n), chain_shares(s, n, cc.gap));
            }
        }
        if cc.mode == BlockMode::Grid {
            for (i, s1) in steps.iter().enumerate() {
                for s2 in &steps[i + 1..] {
                    if s1.edge.dir.cross(s2.edge.dir).abs() < 1e-6 {
                        continue; // parallel: not two directions
                    }
                    for rows in 2..=limits.cap / 2 {
                        for cols in 2..=limits.cap / rows {
                            let (m, sh) = grid(s1, s2, cols, rows, cc.gap);
                            offer(m, sh);
                        }
                    }
                }
            }
        }
    }
    let perimeter = shape.perimeter();
    out.sort_by(|a, b| {
        b.score(perimeter, cc.importance)
            .total_cmp(&a.score(perimeter, cc.importance))
            .then(b.len().cmp(&a.len()))
    });
    // one block per size and score: the same arrangement found from two edges is offered once
    out.dedup_by(|a, b| {
        a.len() == b.len()
            && (a.score(perimeter, cc.importance) - b.score(perimeter, cc.importance)).abs() < 1e-9
    });
    out
}

impl Member {
    fn at_origin() -> Member {
        Member {
            rotation: 0.0,
            offset: Point::new(0.0, 0.0),
        }
    }
}

/// A straight stretch of an outline (CCW) that the part lies behind.
#[derive(Clone, Copy, Debug)]
struct Edge {
    a: Point,
    b: Point,
    length: f64,
    dir: Point,
    /// Outward unit normal.
    normal: Point,
}

/// The support edges of a CCW ring: collinear pieces joined; kept when every other vertex
/// lies strictly inside the edge's line (so the part touches the line along the edge only).
fn support_edges(ring: &[Point]) -> Vec<Edge> {
    let n = ring.len();
    if n < 3 {
        return Vec::new();
    }
    let scale = ring
        .iter()
        .fold(0.0f64, |m, p| m.max(p.x.abs()).max(p.y.abs()))
        .max(1.0);
    let line_tol = 1e-9 * scale;
    // start at a corner, so no straight stretch is split by the ring's start
    let turns = |i: usize| {
        let (p, q, r) = (ring[(i + n - 1) % n], ring[i], ring[(i + 1) % n]);
        q.sub(p).cross(r.sub(q)).abs() > line_tol * q.sub(p).norm().max(r.sub(q).norm())
            || q.sub(p).dot(r.sub(q)) < 0.0
    };
    let Some(start) = (0..n).find(|&i| turns(i)) else {
        return Vec::new();
    };
    let corners: Vec<Point> = (0..n)
        .map(|k| (start + k) % n)
        .filter(|&i| turns(i))
        .map(|i| ring[i])
        .collect();
    let m = corners.len();
    let mut out = Vec::new();
    for k in 0..m {
        let (a, b) = (corners[k], corners[(k + 1) % m]);
        let length = a.dist(b);
        if length <= TOLERANCE {
            continue;
        }
        let dir = b.sub(a).scale(1.0 / length);
        let normal = Point::new(dir.y, -dir.x);
        let inside = ring.iter().all(|&v| {
            let off = v.sub(a).dot(normal);
            let along = v.sub(a).dot(dir);
            off < -line_tol || (off <= line_tol && (-line_tol..=length + line_tol).contains(&along))
        });
        if inside {
            out.push(Edge {
                a,
                b,
                length,
                dir,
                normal,
            });
        }
    }
    out
}

/// A stretch two members share: member `a`'s edge along the line `from`-`to` shifted half the
/// gap out of `a`, member `b` beyond it.
struct Shared {
    from: Point,
    to: Point,
    a: usize,
    b: usize,
    length: f64,
}

impl Shared {
    /// `e` (an edge of member `a`, in block coordinates) shared with member `b` over `length`
    /// centred on the edge's middle.
    fn along(e: &Edge, a: usize, b: usize, gap: f64, length: f64) -> Shared {
        let mid = e.a.add(e.b).scale(0.5).add(e.normal.scale(gap / 2.0));
        let half = e.dir.scale(length / 2.0);
        Shared {
            from: mid.sub(half),
            to: mid.add(half),
            a,
            b,
            length,
        }
    }
}

/// A translation that puts a copy beyond support edge `edge`, its opposite edge on the far
/// side of the gap, middles aligned; `shared` is how much of the two edges meets.
#[derive(Clone, Copy)]
struct Step {
    edge: Edge,
    by: Point,
    shared: f64,
}

impl Step {
    fn across(e: &Edge, edges: &[Edge], cc: &CommonCutting) -> Option<Step> {
        let f = edges.iter().find(|f| f.dir.dot(e.dir) < -1.0 + 1e-9)?;
        let width = e.a.sub(f.a).dot(e.normal);
        let mid_e = e.a.add(e.b).scale(0.5);
        let mid_f = f.a.add(f.b).scale(0.5);
        // along the edge: from f's middle to e's; across: the width and the gap
        let by = e
            .normal
            .scale(width + cc.gap)
            .add(e.dir.scale(mid_e.sub(mid_f).dot(e.dir)));
        let shared = e.length.min(f.length);
        let longer = e.length.max(f.length);
        let enough = match cc.safety {
            CutSafety::Conservative => longer - shared <= TOLERANCE,
            CutSafety::Normal => shared >= 0.5 * longer,
            CutSafety::Aggressive => true,
        };
        (enough && shared >= cc.min_length.max(TOLERANCE)).then_some(Step {
            edge: *e,
            by,
            shared,
        })
    }
    /// The step's edge as member `k` of a translation by `offset` has it.
    fn edge_at(&self, offset: Point) -> Edge {
        Edge {
            a: self.edge.a.add(offset),
            b: self.edge.b.add(offset),
            ..self.edge
        }
    }
}

fn line_members(s: &Step, n: u32) -> Vec<Member> {
    (0..n)
        .map(|k| Member {
            rotation: 0.0,
            offset: s.by.scale(k as f64),
        })
        .collect()
}

fn chain_shares(s: &Step, n: u32, gap: f64) -> Vec<Shared> {
    (0..n as usize - 1)
        .map(|k| Shared::along(&s.edge_at(s.by.scale(k as f64)), k, k + 1, gap, s.shared))
        .collect()
}

/// `cols` copies along `s1` times `rows` along `s2` (member index = row * cols + col).
fn grid(s1: &Step, s2: &Step, cols: u32, rows: u32, gap: f64) -> (Vec<Member>, Vec<Shared>) {
    let (cols, rows) = (cols as usize, rows as usize);
    let at = |c: usize, r: usize| s1.by.scale(c as f64).add(s2.by.scale(r as f64));
    let members = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (c, r)))
        .map(|(c, r)| Member {
            rotation: 0.0,
            offset: at(c, r),
        })
        .collect();
    let mut shares = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let k = r * cols + c;
            if c + 1 < cols {
                shares.push(Shared::along(
                    &s1.edge_at(at(c, r)),
                    k,
                    k + 1,
                    gap,
                    s1.shared,
                ));
            }
            if r + 1 < rows {
                shares.push(Shared::along(
                    &s2.edge_at(at(c, r)),
                    k,
                    k + cols,
                    gap,
                    s2.shared,
                ));
            }
        }
    }
    (members, shares)
}

/// The block, if it is valid: its cuts (shared stretches on one line joined into one cut), the
/// exact verifier passing on its members, no scrap enclosed unless allowed, and a sheet it fits.
fn checked_block(
    shape: &Shape,
    cc: &CommonCutting,
    limits: &Limits,
    members: Vec<Member>,
    shares: Vec<Shared>,
) -> Option<Block> {
    if members.len() < 2 || members.len() > limits.cap as usize {
        return None;
    }
    let rotations_ok = members
        .iter()
        .all(|m| limits.rotations.iter().any(|&r| same_angle(r, m.rotation)));
    if !rotations_ok {
        return None;
    }
    let part = PartGeometry::single(shape.clone());
    let placed: Vec<PlacedShape> = members
        .iter()
        .enumerate()
        .map(|(k, m)| PlacedShape {
            label: format!("copy {k}"),
            geometry: part.transformed(&m.transform()),
            spacing: limits.spacing,
        })
        .collect();
    let bbox = placed
        .iter()
        .fold(crate::geometry::BBox::empty(), |mut b, p| {
            let pb = p.geometry.bbox();
            b.include(pb.min);
            b.include(pb.max);
            b
        });
    let mut block = Block {
        members,
        cuts: Vec::new(),
        saved: shares.iter().map(|s| s.length).sum(),
        density: 0.0,
        extent: (bbox.width(), bbox.height()),
    };
    // the cheap test first: most large candidates fail it
    if !(limits.fits)(&block) {
        return None;
    }
    block.cuts = join_collinear(&shares, cc.gap);
    let violations = verify_pairs(
        &placed,
        SharedCuts {
            cuts: &block.cuts,
            gap: cc.gap,
        },
    );
    if !violations.is_empty() {
        tracing::debug!("common cut: block refused: {}", violations[0]);
        return None;
    }
    let outlines: Vec<Shape> = placed
        .iter()
        .flat_map(|p| p.geometry.components().iter().map(|c| c.without_holes()))
        .collect();
    if !cc.may_enclose && encloses_scrap(&outlines, cc.gap) {
        return None;
    }
    let area: f64 = placed.iter().map(|p| p.geometry.area()).sum();
    let hull = convex_hull_area(outlines.iter().flat_map(|s| s.outer().iter().copied()));
    block.density = if hull > 0.0 { area / hull } else { 0.0 };
    Some(block)
}

/// Shared stretches on one line (same direction and offset) that meet, or that leave a hole no
/// longer than the gap (where a crossing cut runs), become one cut listing all their members.
fn join_collinear(shares: &[Shared], gap: f64) -> Vec<CommonCut> {
    let mut cuts: Vec<(Point, Point, Vec<usize>)> = Vec::new();
    let mut used = vec![false; shares.len()];
    for i in 0..shares.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        let s = &shares[i];
        let dir = s.to.sub(s.from).scale(1.0 / s.length);
        let normal = Point::new(-dir.y, dir.x);
        let on_line = |p: Point| p.sub(s.from).dot(normal).abs() <= 1e-6;
        // every stretch on this line, as an interval along it
        let mut spans: Vec<(f64, f64, usize, usize)> = vec![(0.0, s.length, s.a, s.b)];
        for (j, t) in shares.iter().enumerate().skip(i + 1) {
            if !used[j] && on_line(t.from) && on_line(t.to) {
                used[j] = true;
                let (u, v) = (t.from.sub(s.from).dot(dir), t.to.sub(s.from).dot(dir));
                spans.push((u.min(v), u.max(v), t.a, t.b));
            }
        }
        spans.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut run: Option<(f64, f64, Vec<usize>)> = None;
        let mut flush = |run: &mut Option<(f64, f64, Vec<usize>)>| {
            if let Some((u, v, mut parts)) = run.take() {
                parts.sort_unstable();
                parts.dedup();
                cuts.push((s.from.add(dir.scale(u)), s.from.add(dir.scale(v)), parts));
            }
        };
        for (u, v, a, b) in spans {
            match &mut run {
                Some((_, end, parts)) if u <= *end + gap + 1e-6 => {
                    *end = end.max(v);
                    parts.extend([a, b]);
                }
                _ => {
                    flush(&mut run);
                    run = Some((u, v, vec![a, b]));
                }
            }
        }
        flush(&mut run);
    }
    cuts.into_iter()
        .map(|(from, to, parts)| CommonCut { from, to, parts })
        .collect()
}

/// True when the outlines, grown by half the gap (and a hair, mitred) and joined, enclose a
/// region none of them covers: scrap that cutting the block would cut free. Holes no bigger
/// than a square of twice the gap are the gaps' own crossings, not scrap.
fn encloses_scrap(outlines: &[Shape], gap: f64) -> bool {
    let grown = boolean::offset_with(outlines, gap / 2.0 + 1e-3, boolean::Corners::Sharp);
    let crossing = (2.0 * gap + 1e-2).powi(2);
    boolean::union(&grown).iter().any(|s| {
        s.holes()
            .iter()
            .any(|h| crate::geometry::exact::signed_area(h).abs() > crossing)
    })
}

fn convex_hull_area(points: impl Iterator<Item = Point>) -> f64 {
    let mut p: Vec<Point> = points.collect();
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    p.dedup();
    if p.len() < 3 {
        return 0.0;
    }
    let half = |pts: &mut dyn Iterator<Item = Point>| {
        let mut h: Vec<Point> = Vec::new();
        for q in pts {
            while h.len() >= 2
                && h[h.len() - 1]
                    .sub(h[h.len() - 2])
                    .cross(q.sub(h[h.len() - 1]))
                    <= 0.0
            {
                h.pop();
            }
            h.push(q);
        }
        h.pop();
        h
    };
    let mut hull = half(&mut p.iter().copied());
    hull.extend(half(&mut p.iter().rev().copied()));
    crate::geometry::exact::signed_area(&hull).abs()
}

/// Two angles in degrees name the same rotation.
pub fn same_angle(a: f64, b: f64) -> bool {
    let d = (a - b).rem_euclid(360.0);
    !(1e-9..=360.0 - 1e-9).contains(&d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polygon(points: &[(f64, f64)]) -> Shape {
        Shape::new(
            points.iter().map(|&(x, y)| Point::new(x, y)).collect(),
            vec![],
        )
    }

    fn cutting(mode: BlockMode, gap: f64) -> CommonCutting {
        CommonCutting::new(mode, CutImportance::High, gap)
    }

    fn limits<'a>(cap: u32, rotations: &'a [f64], fits: &'a dyn Fn(&Block) -> bool) -> Limits<'a> {
        Limits {
            cap,
            spacing: 5.0,
            rotations,
            fits,
        }
    }

    #[test]
    fn rectangles_make_grids_whose_cuts_run_through() {
        let any = |_: &Block| true;
        let rect = Shape::rectangle(30.0, 20.0);
        let blocks = blocks_of(
            &rect,
            &cutting(BlockMode::Grid, 1.0),
            &limits(9, &[0.0, 90.0, 180.0, 270.0], &any),
        );
        let best = &blocks[0];
        assert_eq!(best.len(), 9, "a 3 x 3 grid saves the most");
        // two vertical and two horizontal lines, each through the whole block, all 3 x 3 parts
        // along the middle ones' neighbours
        assert_eq!(best.cuts.len(), 4, "{:?}", best.cuts);
        for c in &best.cuts {
            assert!(c.parts.len() == 6, "{c:?}");
        }
        // 3 rows x 2 inner vertical stretches of 20 + 3 columns x 2 horizontal ones of 30
        assert!((best.saved - (6.0 * 20.0 + 6.0 * 30.0)).abs() < 1e-9);
    }

    #[test]
    fn triangles_pair_along_the_long_edge_into_a_rectangle() {
        let any = |_: &Block| true;
        let tri = polygon(&[(0.0, 0.0), (40.0, 0.0), (0.0, 30.0)]);
        let blocks = blocks_of(
            &tri,
            &cutting(BlockMode::Pairs, 0.0),
            &limits(2, &[0.0, 180.0], &any),
        );
        let best = &blocks[0];
        assert_eq!(best.len(), 2);
        assert!((best.density - 1.0).abs() < 1e-9, "{}", best.density);
        assert!((best.saved - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_pair_needs_the_half_turn() {
        let any = |_: &Block| true;
        let tri = polygon(&[(0.0, 0.0), (40.0, 0.0), (0.0, 30.0)]);
        assert!(blocks_of(
            &tri,
            &cutting(BlockMode::Pairs, 0.0),
            &limits(2, &[0.0], &any)
        )
        .is_empty());
    }

    #[test]
    fn octagons_in_a_grid_would_enclose_scrap() {
        let any = |_: &Block| true;
        let oct = polygon(&[
            (5.0, 0.0),
            (25.0, 0.0),
            (30.0, 5.0),
            (30.0, 25.0),
            (25.0, 30.0),
            (5.0, 30.0),
            (0.0, 25.0),
            (0.0, 5.0),
        ]);
        // a grid has copies off the line through the first two
        let is_grid = |b: &Block| {
            let (o, d) = (b.members[0].offset, b.members[1].offset);
            b.members
                .iter()
                .any(|m| d.sub(o).cross(m.offset.sub(o)).abs() > 1e-6)
        };
        let mut cc = cutting(BlockMode::Grid, 0.0);
        let blocks = blocks_of(&oct, &cc, &limits(4, &[0.0], &any));
        assert!(
            !blocks.iter().any(is_grid),
            "no 2 x 2 grid without CanIntroduceHoles"
        );
        assert!(!blocks.is_empty(), "chains still share edges");
        cc.may_enclose = true;
        let blocks = blocks_of(&oct, &cc, &limits(4, &[0.0], &any));
        assert!(blocks.iter().any(is_grid));
    }

    #[test]
    fn a_notched_edge_is_no_support_edge() {
        // a U: its top stretches touch the top line twice, so neither is a support edge
        let u = polygon(&[
            (0.0, 0.0),
            (30.0, 0.0),
            (30.0, 20.0),
            (20.0, 20.0),
            (20.0, 10.0),
            (10.0, 10.0),
            (10.0, 20.0),
            (0.0, 20.0),
        ]);
        let edges = support_edges(u.outer());
        assert!(edges.iter().all(|e| e.normal.y < 0.5), "{edges:?}");
        assert_eq!(edges.len(), 3);
    }
}
