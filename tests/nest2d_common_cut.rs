//! Common-line cutting: blocks of copies share straight edges at the CommonCutGap; every cut
//! the result reports is one the parts' geometry really shares (checked here from the parts'
//! own polygons, apart from the engine's verifier), parts come closer than their spacing only
//! along a reported cut, and the cutter travels less.

use kerf::geometry::exact::point_segment_dist;
use kerf::geometry::{Affine, PartGeometry, Point, Shape};
use kerf::nest2d::cut_check::SharedCuts;
use kerf::nest2d::verify::{verify_layout, PlacedShape, Violation};
use kerf::nest2d::*;
use kerf_kernels::CpuEvaluator;

const SPACING: f64 = 5.0;
const GAP: f64 = 0.5;

fn rect(id: &str, w: f64, h: f64, qty: u32) -> PartSpec {
    PartSpec {
        rotations: vec![0.0, 90.0, 180.0, 270.0],
        common_cut: Some(0),
        ..PartSpec::new(id, PartGeometry::single(Shape::rectangle(w, h)), qty)
    }
}

fn cutting(mode: BlockMode) -> CommonCutting {
    CommonCutting::new(mode, CutImportance::High, GAP)
}

fn problem(parts: Vec<PartSpec>, mode: Option<BlockMode>) -> Problem {
    Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("S", 1000.0, 500.0)],
        settings: Settings {
            part_spacing: SPACING,
            max_iterations: Some(20),
            max_run_time_s: 60.0,
            max_cpu: 1,
            cells_per_part: 16.0,
            common_cutting: mode.map(cutting),
            ..Default::default()
        },
    }
}

fn run(p: &Problem) -> NestResult {
    let r = nest(p, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    for l in &r.layouts {
        let cuts = SharedCuts {
            cuts: &l.common_cuts,
            gap: GAP,
        };
        let v = verify_layout(&p.sheets[l.sheet], &placed_shapes(p, l), cuts);
        assert!(v.is_empty(), "{}", v[0]);
    }
    r
}

/// A placement's outline in sheet coordinates, from the part's own polygon and the placement
/// convention (mirror, rotate, translate), without the engine's helpers.
fn outline(p: &Problem, pl: &Placement) -> Vec<Point> {
    let t = Affine::placement(pl.mirrored, pl.rotation, pl.x, pl.y);
    p.parts[pl.part].geometry.components()[0]
        .outer()
        .iter()
        .map(|&q| t.apply(q))
        .collect()
}

fn boundary_dist(ring: &[Point], q: Point) -> f64 {
    (0..ring.len())
        .map(|i| point_segment_dist(q, ring[i], ring[(i + 1) % ring.len()]))
        .fold(f64::INFINITY, f64::min)
}

/// Every cut lies half the gap from edges of its parts on both sides: sampled along the cut,
/// each point is half the gap from some listed part's outline on each side (the gap where a
/// grid's cuts cross excepted), and every listed part reaches the cut.
fn cuts_are_shared(p: &Problem, l: &SheetLayout) {
    for c in &l.common_cuts {
        let len = c.from.dist(c.to);
        assert!(len > 0.0 && c.parts.len() >= 2, "{c:?}");
        let dir = c.to.sub(c.from).scale(1.0 / len);
        let normal = Point::new(-dir.y, dir.x);
        let rings: Vec<Vec<Point>> = c
            .parts
            .iter()
            .map(|&k| outline(p, &l.placements[k]))
            .collect();
        let side = |r: &[Point]| {
            let offsets: Vec<f64> = r.iter().map(|q| q.sub(c.from).dot(normal)).collect();
            let lo = offsets.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = offsets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert!(
                lo >= GAP / 2.0 - 1e-6 || hi <= -GAP / 2.0 + 1e-6,
                "a part straddles {c:?}"
            );
            lo > 0.0
        };
        let sides: Vec<bool> = rings.iter().map(|r| side(r)).collect();
        assert!(
            sides.contains(&true) && sides.contains(&false),
            "{c:?} has parts on one side"
        );
        for r in &rings {
            let reach = (0..=100)
                .map(|k| boundary_dist(r, c.from.add(dir.scale(len * k as f64 / 100.0))))
                .fold(f64::INFINITY, f64::min);
            assert!(
                (reach - GAP / 2.0).abs() < 1e-6,
                "a listed part is {reach} from {c:?}"
            );
        }
        let steps = (len / 0.1).ceil() as usize;
        let mut uncovered = 0.0f64;
        let mut worst = 0.0f64;
        for k in 0..=steps {
            let q = c.from.add(dir.scale(len * k as f64 / steps as f64));
            let covered = [true, false].iter().all(|&s| {
                rings
                    .iter()
                    .zip(&sides)
                    .any(|(r, &rs)| rs == s && (boundary_dist(r, q) - GAP / 2.0).abs() < 1e-6)
            });
            uncovered = if covered {
                0.0
            } else {
                uncovered + len / steps as f64
            };
            worst = worst.max(uncovered);
        }
        assert!(
            worst <= GAP + 0.2,
            "{c:?} runs {worst} mm past its parts' edges"
        );
    }
}

fn total_cut_length(p: &Problem, r: &NestResult) -> f64 {
    r.layouts
        .iter()
        .map(|l| l.multiplicity as f64 * cut_length(p, l))
        .sum()
}

#[test]
fn a_grid_of_rectangles_shares_its_cuts_and_the_cutter_travels_less() {
    let parts = || vec![rect("a", 120.0, 80.0, 12), rect("b", 90.0, 60.0, 9)];
    let alone = problem(parts(), None);
    let together = problem(parts(), Some(BlockMode::Grid));
    let (ra, rt) = (run(&alone), run(&together));
    assert_eq!(rt.stats.parts_placed, 21);
    assert!(rt.layouts.iter().all(|l| !l.common_cuts.is_empty()));
    for l in &rt.layouts {
        cuts_are_shared(&together, l);
        // placements are numbered per part, each copy once
        let mut seen: Vec<(usize, u32)> =
            l.placements.iter().map(|p| (p.part, p.instance)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), l.placements.len());
    }
    let (la, lt) = (
        total_cut_length(&alone, &ra),
        total_cut_length(&together, &rt),
    );
    assert!(lt < 0.8 * la, "cut length {lt} against {la} alone");
    // parts that do not allow it are cut alone
    let mut off = parts();
    for p in &mut off {
        p.common_cut = None;
    }
    let r = run(&problem(off, Some(BlockMode::Grid)));
    assert!(r.layouts.iter().all(|l| l.common_cuts.is_empty()));
}

#[test]
fn triangles_pair_along_their_long_edge_turned_half_a_turn() {
    let tri = PartSpec {
        rotations: vec![0.0, 180.0],
        common_cut: Some(0),
        ..PartSpec::new(
            "t",
            PartGeometry::single(Shape::new(
                vec![
                    Point::new(0.0, 0.0),
                    Point::new(100.0, 0.0),
                    Point::new(0.0, 60.0),
                ],
                vec![],
            )),
            6,
        )
    };
    let p = problem(vec![tri], Some(BlockMode::Pairs));
    let r = run(&p);
    let l = &r.layouts[0];
    assert_eq!(l.common_cuts.len(), 3, "{:?}", l.common_cuts);
    cuts_are_shared(&p, l);
    for c in &l.common_cuts {
        let (a, b) = (
            l.placements[c.parts[0]].rotation,
            l.placements[c.parts[1]].rotation,
        );
        assert!((a - b).abs() == 180.0, "{a} and {b}");
        assert!((c.from.dist(c.to) - (100.0f64.powi(2) + 60.0f64.powi(2)).sqrt()).abs() < 1e-6);
    }
}

#[test]
fn the_same_seed_gives_the_same_blocks_and_cuts() {
    let p = problem(vec![rect("a", 120.0, 80.0, 10)], Some(BlockMode::Chains));
    let (a, b) = (run(&p), run(&p));
    assert_eq!(a.layouts, b.layouts);
}

fn placed(label: &str, x: f64, w: f64) -> PlacedShape {
    PlacedShape {
        label: label.into(),
        geometry: PartGeometry::single(Shape::rectangle(w, 50.0).translate(x, 0.0)),
        spacing: SPACING,
    }
}

#[test]
fn the_verifier_lets_parts_close_only_along_a_reported_cut() {
    let sheet = SheetSpec::rectangle("S", 1000.0, 500.0);
    let parts = [placed("a", 10.0, 100.0), placed("b", 110.5, 100.0)];
    // no cut: 0.5 mm apart is too close
    let v = verify_layout(&sheet, &parts, SharedCuts::NONE);
    assert!(matches!(v[0], Violation::TooClose { .. }), "{v:?}");
    // the cut they share
    let cut = CommonCut {
        from: Point::new(110.25, 0.0),
        to: Point::new(110.25, 50.0),
        parts: vec![0, 1],
    };
    let cuts = [cut.clone()];
    assert!(verify_layout(
        &sheet,
        &parts,
        SharedCuts {
            cuts: &cuts,
            gap: GAP
        }
    )
    .is_empty());
    // a cut along half the edge: they also touch where no cut is
    let half = [CommonCut {
        to: Point::new(110.25, 25.0),
        ..cut.clone()
    }];
    let v = verify_layout(
        &sheet,
        &parts,
        SharedCuts {
            cuts: &half,
            gap: GAP,
        },
    );
    assert!(matches!(v[0], Violation::AlongCut { .. }), "{v:?}");
    // a cut the parts do not share
    let elsewhere = [CommonCut {
        from: Point::new(300.0, 0.0),
        to: Point::new(300.0, 50.0),
        ..cut
    }];
    let v = verify_layout(
        &sheet,
        &parts,
        SharedCuts {
            cuts: &elsewhere,
            gap: GAP,
        },
    );
    assert!(
        v.iter().any(|x| matches!(x, Violation::FalseCut { .. })),
        "{v:?}"
    );
}

#[test]
fn a_result_with_cuts_round_trips_through_the_wire_layout() {
    let p = problem(vec![rect("a", 120.0, 80.0, 8)], Some(BlockMode::Grid));
    let r = run(&p);
    let wire = kerf::wire::results::layout(&p, &r, "req", "res");
    let json = serde_json::to_value(&wire).unwrap();
    let cuts = &json["Sheets"][0]["CommonCuts"];
    assert!(cuts.as_array().is_some_and(|c| !c.is_empty()), "{json}");
    for c in cuts.as_array().unwrap() {
        for field in ["X1", "Y1", "X2", "Y2", "PartIdentifiers", "InstanceIndices"] {
            assert!(c.get(field).is_some(), "{field} missing in {c}");
        }
    }
    let back = kerf::wire::results::layouts_of(&wire, &p).unwrap();
    assert_eq!(back[0].common_cuts, r.layouts[0].common_cuts);
}

#[test]
fn the_dxf_export_draws_each_common_cut_once() {
    use kerf::export::dxf::{export, DxfOptions};
    let p = problem(vec![rect("a", 120.0, 80.0, 4)], Some(BlockMode::Grid));
    let r = run(&p);
    let cuts: usize = r.layouts.iter().map(|l| l.common_cuts.len()).sum();
    assert!(cuts > 0);
    let options = DxfOptions {
        remove_common_edges: true,
        ..Default::default()
    };
    let file = &export(&p, &r.layouts, None, &options).unwrap()[0];
    let drawing = dxf::Drawing::load(&mut std::io::Cursor::new(&file.bytes)).unwrap();
    let mut on_cut_layer = 0;
    let mut drawn = 0.0;
    for e in drawing.entities() {
        match &e.specific {
            dxf::entities::EntityType::Line(l) if e.common.layer == "COMMON_CUTS" => {
                on_cut_layer += 1;
                drawn += ((l.p2.x - l.p1.x).powi(2) + (l.p2.y - l.p1.y).powi(2)).sqrt();
            }
            dxf::entities::EntityType::LwPolyline(pl) => {
                let v = &pl.vertices;
                let n = v.len();
                let segments = if pl.is_closed() { n } else { n - 1 };
                drawn += (0..segments)
                    .map(|i| {
                        let (a, b) = (&v[i], &v[(i + 1) % n]);
                        ((b.x - a.x).powi(2) + (b.y - a.y).powi(2)).sqrt()
                    })
                    .sum::<f64>();
            }
            _ => {}
        }
    }
    assert_eq!(on_cut_layer, cuts);
    // what the file draws is what the cutter travels
    let travel: f64 = r.layouts.iter().map(|l| cut_length(&p, l)).sum();
    assert!(
        (drawn - travel).abs() < 1e-3,
        "drawn {drawn}, travel {travel}"
    );
}

#[test]
fn a_limited_stock_gets_smaller_blocks_rather_than_unplaced_copies() {
    // one sheet: the large plate leaves a strip 200 x 55, where three single copies fit and
    // neither a 2 x 2 grid of them (90 high) nor a chain of four (241 long) would
    let plate = PartSpec {
        priority: 1,
        ..rect("plate", 200.0, 70.0, 1)
    };
    let parts = || vec![plate.clone(), rect("b", 60.0, 45.0, 4)];
    let mut alone = problem(parts(), None);
    alone.sheets = vec![SheetSpec {
        quantity: Some(1),
        ..SheetSpec::rectangle("S", 200.0, 130.0)
    }];
    let mut together = alone.clone();
    together.settings.common_cutting = Some(cutting(BlockMode::Grid));
    let (ra, rt) = (run(&alone), run(&together));
    assert_eq!(ra.stats.parts_placed, 4, "{:?}", ra.unplaced);
    assert_eq!(rt.stats.parts_placed, 4, "{:?}", rt.unplaced);
    cuts_are_shared(&together, &rt.layouts[0]);
}

#[test]
fn a_mirrored_block_places_each_copy_by_the_placement_convention() {
    // an L that may mirror and turn: whatever the search picks, every copy's polygon (from
    // the part and its own placement) lies along the cuts it is listed on
    let l_shape = PartSpec {
        allow_mirror: true,
        rotations: vec![0.0, 90.0, 180.0, 270.0],
        common_cut: Some(0),
        ..PartSpec::new(
            "L",
            PartGeometry::single(Shape::new(
                [
                    (0.0, 0.0),
                    (80.0, 0.0),
                    (80.0, 20.0),
                    (20.0, 20.0),
                    (20.0, 60.0),
                    (0.0, 60.0),
                ]
                .iter()
                .map(|&(x, y)| Point::new(x, y))
                .collect(),
                vec![],
            )),
            8,
        )
    };
    for seed in 1..=4 {
        let mut p = problem(vec![l_shape.clone()], Some(BlockMode::Pairs));
        p.settings.seed = seed;
        let r = run(&p);
        assert_eq!(r.stats.parts_placed, 8);
        for l in &r.layouts {
            assert!(!l.common_cuts.is_empty());
            cuts_are_shared(&p, l);
        }
    }
}
