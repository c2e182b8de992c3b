//! RemoveCommonEdges: where two placed parts share an edge (they touch along it, as parts
//! nested at zero spacing do), the cutter should cut it once. Each stretch of edge that an
//! earlier part already has is taken out of the later part's rings, which then become open
//! paths; rings that share nothing stay closed.

use crate::geometry::exact::point_segment_dist;
use crate::geometry::Point;

/// What is left of one ring.
#[derive(Clone, Debug, PartialEq)]
pub enum Path {
    /// The whole ring, closed.
    Closed(Vec<Point>),
    /// A stretch of it, open.
    Open(Vec<Point>),
}

/// Stretches shorter than this (mm) are neither removed nor written.
const MIN_LENGTH: f64 = 1e-6;

/// One edge of a ring, with the parts of it (as parameters 0..1 from a to b) already written by
/// an earlier part.
struct Edge {
    part: usize,
    a: Point,
    b: Point,
    covered: Vec<(f64, f64)>,
}

/// The rings of each part (`parts[k]` = part k's rings, in sheet coordinates and in the
/// direction they are to be written), with every stretch that an earlier part also has taken
/// out: per part, the paths to write (ring by ring, in order). Two edges are one where they
/// lie on the same line within `tolerance` and overlap by more than it.
pub fn without_common_edges(parts: &[Vec<Vec<Point>>], tolerance: f64) -> Vec<Vec<Path>> {
    take_out_shared(parts, tolerance, &|_, _| tolerance)
}

/// `without_common_edges`, and also every stretch of a part's edges that lies along one of
/// `cuts` (common cuts, written on their own) within `cut_tolerance`: half the gap parts keep
/// along a cut. Parts still share edges with each other within `tolerance` only.
pub fn without_cut_edges(
    cuts: &[(Point, Point)],
    parts: &[Vec<Vec<Point>>],
    tolerance: f64,
    cut_tolerance: f64,
) -> Vec<Vec<Path>> {
    let n = cuts.len();
    // the cuts come first, as two-point rings, so the parts give way to them
    let mut all: Vec<Vec<Vec<Point>>> = cuts.iter().map(|&(a, b)| vec![vec![a, b]]).collect();
    all.extend(parts.iter().cloned());
    let between = |i: usize, j: usize| {
        if (i < n) != (j < n) {
            cut_tolerance
        } else {
            tolerance
        }
    };
    take_out_shared(&all, tolerance.max(cut_tolerance), &between).split_off(n)
}

/// The work of both: `tolerance_of(part, part)` for each pair, `reach` the largest of them.
fn take_out_shared(
    parts: &[Vec<Vec<Point>>],
    reach: f64,
    tolerance_of: &dyn Fn(usize, usize) -> f64,
) -> Vec<Vec<Path>> {
    let tolerance = reach;
    // every edge, with where it sits in the input
    let mut edges: Vec<Edge> = Vec::new();
    let mut index: Vec<Vec<Vec<usize>>> = Vec::with_capacity(parts.len());
    for (k, rings) in parts.iter().enumerate() {
        let mut per_ring = Vec::with_capacity(rings.len());
        for ring in rings {
            let n = ring.len();
            per_ring.push((0..n).map(|i| edges.len() + i).collect());
            edges.extend((0..n).map(|i| Edge {
                part: k,
                a: ring[i],
                b: ring[(i + 1) % n],
                covered: Vec::new(),
            }));
        }
        index.push(per_ring);
    }
    // candidate pairs by a sweep over x: edges sorted by their smallest x
    let mut order: Vec<usize> = (0..edges.len()).collect();
    let min_x = |e: &Edge| e.a.x.min(e.b.x);
    let max_x = |e: &Edge| e.a.x.max(e.b.x);
    order.sort_by(|&i, &j| min_x(&edges[i]).total_cmp(&min_x(&edges[j])));
    let mut covers: Vec<(usize, f64, f64)> = Vec::new();
    for (s, &i) in order.iter().enumerate() {
        let reach = max_x(&edges[i]) + tolerance;
        for &j in &order[s + 1..] {
            if min_x(&edges[j]) > reach {
                break;
            }
            let (ei, ej) = (&edges[i], &edges[j]);
            if ei.part == ej.part {
                continue;
            }
            // the later part gives way
            let (later, earlier) = if ei.part > ej.part { (i, j) } else { (j, i) };
            let within = tolerance_of(ei.part, ej.part);
            if let Some((t0, t1)) = overlap(&edges[later], &edges[earlier], within) {
                covers.push((later, t0, t1));
            }
        }
    }
    for (e, t0, t1) in covers {
        edges[e].covered.push((t0, t1));
    }
    index
        .iter()
        .map(|rings| rings.iter().flat_map(|ids| paths_of(&edges, ids)).collect())
        .collect()
}

/// The stretch of `e` (as parameters) that `other` lies along, if longer than `tolerance`:
/// `other`'s ends projected on `e`, kept where both ends of that stretch are within
/// `tolerance` of `other` (then all of it is: the stretch and `other` are straight).
fn overlap(e: &Edge, other: &Edge, tolerance: f64) -> Option<(f64, f64)> {
    let d = e.b.sub(e.a);
    let len = d.norm();
    if len <= tolerance {
        return None;
    }
    let t = |p: Point| d.dot(p.sub(e.a)) / (len * len);
    let (ta, tb) = (t(other.a), t(other.b));
    let (t0, t1) = (ta.min(tb).max(0.0), ta.max(tb).min(1.0));
    if (t1 - t0) * len <= tolerance {
        return None;
    }
    let at = |t: f64| e.a.add(d.scale(t));
    let near = |p: Point| point_segment_dist(p, other.a, other.b) <= tolerance;
    (near(at(t0)) && near(at(t1))).then_some((t0, t1))
}

/// A ring's edges less their covered stretches, as paths.
fn paths_of(edges: &[Edge], ids: &[usize]) -> Vec<Path> {
    if ids.iter().all(|&e| edges[e].covered.is_empty()) {
        return vec![Path::Closed(ids.iter().map(|&e| edges[e].a).collect())];
    }
    // the kept stretches of each edge, in order along the ring
    struct Piece {
        edge: usize,
        from: Point,
        to: Point,
        starts_edge: bool,
        ends_edge: bool,
    }
    let mut pieces: Vec<Piece> = Vec::new();
    for (k, &e) in ids.iter().enumerate() {
        let edge = &edges[e];
        let mut covered = edge.covered.clone();
        covered.sort_by(|x, y| x.0.total_cmp(&y.0));
        let at = |t: f64| edge.a.add(edge.b.sub(edge.a).scale(t));
        let len = edge.a.dist(edge.b);
        let mut t = 0.0;
        for (c0, c1) in covered.into_iter().chain(std::iter::once((1.0, 1.0))) {
            if (c0 - t) * len > MIN_LENGTH {
                pieces.push(Piece {
                    edge: k,
                    from: at(t),
                    to: at(c0),
                    starts_edge: t == 0.0,
                    ends_edge: c0 >= 1.0,
                });
            }
            t = t.max(c1);
        }
    }
    // a piece continues the path before it when it starts the edge after the one that piece ended
    let continues = |prev: &Piece, next: &Piece| {
        prev.ends_edge && next.starts_edge && next.edge == (prev.edge + 1) % ids.len()
    };
    let mut paths: Vec<Vec<Point>> = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        match paths.last_mut() {
            Some(path) if k > 0 && continues(&pieces[k - 1], piece) => path.push(piece.to),
            _ => paths.push(vec![piece.from, piece.to]),
        }
    }
    // the last path may run on into the first across the ring's start
    if paths.len() > 1 && continues(&pieces[pieces.len() - 1], &pieces[0]) {
        let head = paths.remove(0);
        paths
            .last_mut()
            .expect("a path")
            .extend(head.into_iter().skip(1));
    }
    paths.into_iter().map(Path::Open).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: f64, y: f64, s: f64) -> Vec<Point> {
        vec![
            Point::new(x, y),
            Point::new(x + s, y),
            Point::new(x + s, y + s),
            Point::new(x, y + s),
        ]
    }

    fn length(paths: &[Path]) -> f64 {
        paths
            .iter()
            .map(|p| match p {
                Path::Closed(r) => (0..r.len()).map(|i| r[i].dist(r[(i + 1) % r.len()])).sum(),
                Path::Open(r) => r.windows(2).map(|w| w[0].dist(w[1])).sum::<f64>(),
            })
            .sum()
    }

    #[test]
    fn a_shared_side_is_written_once() {
        let parts = vec![
            vec![square(0.0, 0.0, 100.0)],
            vec![square(100.0, 0.0, 100.0)],
        ];
        let out = without_common_edges(&parts, 1e-6);
        assert!(matches!(out[0][0], Path::Closed(_)));
        assert_eq!(out[1].len(), 1, "{:?}", out[1]);
        let Path::Open(p) = &out[1][0] else {
            panic!("the second square is open where it meets the first")
        };
        // three sides, one path, from (200, 0) round to (100, 0)... in ring order
        assert_eq!(p.len(), 4, "{p:?}");
        let total = length(&out[0]) + length(&out[1]);
        assert!((total - 700.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn a_partly_shared_side_keeps_the_rest() {
        // a 50-high square beside a 100-high one: 50 of the side is shared
        let parts = vec![
            vec![square(0.0, 0.0, 100.0)],
            vec![square(100.0, 0.0, 50.0)],
        ];
        let out = without_common_edges(&parts, 1e-6);
        let total = length(&out[0]) + length(&out[1]);
        assert!((total - 550.0).abs() < 1e-9, "{total}");
        // the first part, sharing only a stretch inside its side, keeps its ring closed
        assert!(matches!(out[0][0], Path::Closed(_)));
    }

    #[test]
    fn an_edge_a_hair_off_parallel_is_still_common() {
        // the second square's left side leans by 0.0005 mm over its 1000 mm
        let big = vec![
            Point::new(0.0, 0.0),
            Point::new(1000.0, 0.0),
            Point::new(1000.0, 1000.0),
            Point::new(0.0, 1000.0),
        ];
        let leaning = vec![
            Point::new(1000.0, 0.0),
            Point::new(2000.0, 0.0),
            Point::new(2000.0, 1000.0),
            Point::new(1000.0005, 1000.0),
        ];
        let out = without_common_edges(&[vec![big], vec![leaning]], 1e-3);
        let total = length(&out[0]) + length(&out[1]);
        assert!((total - 7000.0).abs() < 1e-3, "{total}");
        // crossing edges are not common
        let parts = [
            vec![square(0.0, 0.0, 100.0)],
            vec![square(50.0, -50.0, 100.0)],
        ];
        let out = without_common_edges(&parts, 1e-3);
        assert!(out.iter().all(|p| matches!(p[0], Path::Closed(_))));
    }

    #[test]
    fn parts_apart_keep_closed_rings() {
        let parts = vec![
            vec![square(0.0, 0.0, 100.0)],
            vec![square(102.0, 0.0, 100.0)],
        ];
        let out = without_common_edges(&parts, 1e-6);
        assert!(out.iter().all(|p| matches!(p[0], Path::Closed(_))));
    }

    #[test]
    fn a_middle_stretch_splits_an_edge() {
        // a small square sitting on the middle of a big one's top
        let parts = vec![
            vec![square(0.0, 0.0, 100.0)],
            vec![square(40.0, 100.0, 20.0)],
        ];
        let out = without_common_edges(&parts, 1e-6);
        let total = length(&out[0]) + length(&out[1]);
        assert!((total - 460.0).abs() < 1e-9, "{total}");
        assert_eq!(out[1].len(), 1);
    }
}
