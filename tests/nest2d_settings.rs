//! The engine honours the part and sheet settings: priorities (strict or not), fillers,
//! part-in-part, sheet quantities, sheet priorities, edge spacing, MaximumDifferentSheetSizes.

use kerf::geometry::{PartGeometry, Point, Shape};
use kerf::nest2d::verify::verify_sheet;
use kerf::nest2d::*;
use kerf_kernels::CpuEvaluator;

fn rect_part(id: &str, w: f64, h: f64, qty: u32) -> PartSpec {
    PartSpec {
        rotations: vec![0.0, 90.0],
        ..PartSpec::new(id, PartGeometry::single(Shape::rectangle(w, h)), qty)
    }
}

fn quick() -> Settings {
    Settings {
        max_iterations: Some(5),
        max_run_time_s: 30.0,
        max_cpu: 1,
        cells_per_part: 16.0,
        ..Default::default()
    }
}

fn run(p: &Problem) -> NestResult {
    let r = nest(p, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    for l in &r.layouts {
        let v = verify_sheet(&p.sheets[l.sheet], &placed_shapes(p, l));
        assert!(v.is_empty(), "{}", v[0]);
    }
    r
}

fn placed_of(r: &NestResult, part: usize) -> u32 {
    r.layouts
        .iter()
        .map(|l| {
            l.multiplicity
                * l.placements
                    .iter()
                    .filter(|p| p.part == part && !p.is_filler)
                    .count() as u32
        })
        .sum()
}

fn one_sheet(w: f64, h: f64) -> SheetSpec {
    let mut s = SheetSpec::rectangle("s", w, h);
    s.quantity = Some(1);
    s
}

#[test]
fn higher_priority_parts_are_nested_first() {
    // room for 4 of the 8 squares; the high-priority ones must be the ones placed
    let mut low = rect_part("low", 25.0, 25.0, 4);
    low.priority = 1;
    let mut high = rect_part("high", 25.0, 25.0, 4);
    high.priority = 5;
    let p = Problem {
        parts: vec![low, high],
        sheets: vec![one_sheet(50.0, 50.0)],
        settings: quick(),
    };
    let r = run(&p);
    assert_eq!(placed_of(&r, 1), 4);
    assert_eq!(placed_of(&r, 0), 0);
    assert!(r.unplaced.iter().any(|u| u.part == 0 && u.quantity == 4));
}

#[test]
fn strict_priorities_hold_back_lower_parts_while_a_higher_one_is_unplaced() {
    // one big high-priority part fits only on an empty sheet; small low-priority parts could fill
    let mut big = rect_part("big", 90.0, 90.0, 2);
    big.priority = 2;
    let small = rect_part("small", 5.0, 5.0, 10);
    let sheet = one_sheet(100.0, 100.0);
    let loose = Problem {
        parts: vec![big.clone(), small.clone()],
        sheets: vec![sheet.clone()],
        settings: quick(),
    };
    let r = run(&loose);
    assert_eq!(
        (placed_of(&r, 0), placed_of(&r, 1)),
        (1, 10),
        "without strict, the small parts fill the gap"
    );
    let strict = Problem {
        parts: vec![big, small],
        sheets: vec![sheet],
        settings: Settings {
            strict_priorities: true,
            ..quick()
        },
    };
    let r = run(&strict);
    assert_eq!(
        (placed_of(&r, 0), placed_of(&r, 1)),
        (1, 0),
        "with strict, no lower part while a higher one is unplaced"
    );
    assert!(
        r.unplaced
            .iter()
            .any(|u| u.part == 1 && u.reason.contains("StrictPartPriorities")),
        "{:?}",
        r.unplaced
    );
}

#[test]
fn fillers_use_left_over_room_and_are_marked() {
    let mut p = rect_part("p", 20.0, 20.0, 2);
    p.filler_quantity = 50;
    let settings = Settings {
        filler_strategy: FillerStrategy::FillLastSheet,
        ..quick()
    };
    let prob = Problem {
        parts: vec![p.clone()],
        sheets: vec![one_sheet(60.0, 40.0)],
        settings,
    };
    let r = run(&prob);
    let l = &r.layouts[0];
    let fillers = l.placements.iter().filter(|p| p.is_filler).count();
    assert_eq!(
        fillers, 4,
        "60 x 40 holds 6 squares of 20: 2 required + 4 fillers"
    );
    assert_eq!(
        r.stats.parts_placed, 2,
        "fillers are not counted as requested parts"
    );
    // without a filler strategy no filler is placed
    let prob = Problem {
        parts: vec![p],
        sheets: vec![one_sheet(60.0, 40.0)],
        settings: quick(),
    };
    assert!(run(&prob).layouts[0]
        .placements
        .iter()
        .all(|p| !p.is_filler));
}

fn frame_part() -> PartSpec {
    let hole = Shape::rectangle(80.0, 80.0).translate(10.0, 10.0);
    let mut f = rect_part("frame", 100.0, 100.0, 1);
    f.geometry = PartGeometry::single(Shape::new(
        Shape::rectangle(100.0, 100.0).outer().to_vec(),
        vec![hole.outer().to_vec()],
    ));
    f.priority = 1;
    f
}

#[test]
fn small_parts_go_into_holes_unless_forbidden() {
    let small = rect_part("small", 30.0, 30.0, 4);
    let sheet = one_sheet(100.0, 100.0);
    let allow = Problem {
        parts: vec![frame_part(), small.clone()],
        sheets: vec![sheet.clone()],
        settings: quick(),
    };
    let r = run(&allow);
    assert_eq!(
        placed_of(&r, 1),
        4,
        "four 30 mm squares fit in the 80 mm hole"
    );
    let none = Problem {
        parts: vec![frame_part(), small],
        sheets: vec![sheet],
        settings: Settings {
            inner_loop_fill: InnerLoopFill::None,
            ..quick()
        },
    };
    let r = run(&none);
    assert_eq!(
        placed_of(&r, 1),
        0,
        "holes stay empty with InnerLoopFillPreference None"
    );
}

#[test]
fn sheet_priority_quantity_and_size_limits() {
    let parts = vec![rect_part("p", 40.0, 40.0, 6)];
    let mut a = SheetSpec::rectangle("small", 50.0, 50.0);
    a.priority = 3;
    a.quantity = Some(2);
    let mut b = SheetSpec::rectangle("big", 100.0, 100.0);
    b.quantity = None;
    // priority first: two small sheets (one part each), then big sheets
    let p = Problem {
        parts: parts.clone(),
        sheets: vec![a.clone(), b.clone()],
        settings: quick(),
    };
    let r = run(&p);
    let on = |sheet: usize| {
        r.layouts
            .iter()
            .filter(|l| l.sheet == sheet)
            .map(|l| l.multiplicity)
            .sum::<u32>()
    };
    assert_eq!(on(0), 2);
    assert_eq!(on(1), 1, "the remaining 4 parts fit on one big sheet");
    assert_eq!(r.stats.parts_placed, 6);
    // at most one sheet size: only the small sheets (2 of them) may be used
    let p = Problem {
        parts,
        sheets: vec![a, b],
        settings: Settings {
            max_different_sheet_sizes: 1,
            ..quick()
        },
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 2);
    assert!(
        r.unplaced
            .iter()
            .all(|u| u.reason.contains("MaximumDifferentSheetSizes")),
        "{:?}",
        r.unplaced
    );
}

#[test]
fn edge_spacing_and_origin_are_respected() {
    let mut s = one_sheet(100.0, 50.0);
    s.left = 7.0;
    s.right = 3.0;
    s.top = 5.0;
    s.bottom = 2.0;
    for origin in [
        Origin::BottomLeft,
        Origin::TopLeft,
        Origin::TopRight,
        Origin::BottomRight,
    ] {
        let p = Problem {
            parts: vec![rect_part("p", 10.0, 10.0, 1)],
            sheets: vec![s.clone()],
            settings: Settings { origin, ..quick() },
        };
        let r = run(&p);
        let pl = &r.layouts[0].placements[0];
        let g = kerf::nest2d::verify::placed_geometry(
            &p.parts[0].geometry,
            pl.mirrored,
            pl.rotation,
            pl.x,
            pl.y,
        )
        .bbox();
        let near = |a: f64, b: f64| (a - b).abs() < 1.0;
        let (want_x, want_y) = match origin {
            Origin::BottomLeft => (near(g.min.x, 7.0), near(g.min.y, 2.0)),
            Origin::TopLeft => (near(g.min.x, 7.0), near(g.max.y, 45.0)),
            Origin::TopRight => (near(g.max.x, 97.0), near(g.max.y, 45.0)),
            Origin::BottomRight => (near(g.max.x, 97.0), near(g.min.y, 2.0)),
        };
        assert!(want_x && want_y, "{origin:?}: part at {g:?}");
    }
    let _ = Point::new(0.0, 0.0);
}

#[test]
fn utilisation_target_stops_the_search_early() {
    // a 30 s budget, a target any first layout meets: the nest ends long before the limit
    let parts = vec![rect_part("a", 20.0, 10.0, 6), rect_part("b", 7.0, 13.0, 5)];
    let settings = Settings {
        max_run_time_s: 30.0,
        max_iterations: None,
        utilisation_target: Some(1.0),
        ..quick()
    };
    let p = Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("s", 200.0, 50.0)],
        settings,
    };
    let r = run(&p);
    assert!(
        r.stats.elapsed_s < 10.0,
        "stopped at the target: {} s",
        r.stats.elapsed_s
    );
    assert_eq!(r.stats.parts_placed, 11);
}

#[test]
fn a_part_far_larger_than_any_sheet_is_unplaced_without_rasterizing_it() {
    // a billion-millimetre part next to normal ones: reported, not rasterized (no huge memory)
    let huge = rect_part("huge", 1.0e9, 1.0e9, 1);
    let p = Problem {
        parts: vec![huge, rect_part("ok", 10.0, 10.0, 3)],
        sheets: vec![one_sheet(100.0, 100.0)],
        settings: quick(),
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 3);
    assert!(
        r.unplaced
            .iter()
            .any(|u| u.part == 0 && u.reason.contains("larger than every sheet")),
        "{:?}",
        r.unplaced
    );
}

/// A 10 x 4 rectangle drawn turned by 5 degrees (as a part drawn slightly askew comes in).
fn askew_part(qty: u32) -> PartSpec {
    let turn = kerf::geometry::Affine::placement(false, 5.0, 0.0, 0.0);
    PartSpec::new(
        "askew",
        PartGeometry::single(Shape::rectangle(10.0, 4.0).transformed(&turn)),
        qty,
    )
}

/// `qty` askew parts with these searched angles on one sheet `w` x `h`.
fn askew_job(qty: u32, rotations: Vec<f64>, w: f64, h: f64) -> Problem {
    Problem {
        parts: vec![PartSpec {
            rotations,
            ..askew_part(qty)
        }],
        sheets: vec![one_sheet(w, h)],
        settings: quick(),
    }
}

#[test]
fn a_tilted_part_fits_where_its_drawn_angle_does_not() {
    // the askew part's box (10.31 x 4.86) is larger than the sheet; turned back by its 5
    // degrees it is 10 x 4 and fits, and the result gives the exact angle used
    let upright = run(&askew_job(1, vec![0.0], 10.2, 4.5));
    assert_eq!(upright.stats.parts_placed, 0);
    let tilted = run(&askew_job(1, tilted(&[0.0], 5.0).unwrap(), 10.2, 4.5));
    assert_eq!(tilted.stats.parts_placed, 1);
    let rotation = tilted.layouts[0].placements[0].rotation;
    assert!((rotation - 355.0).abs() < 1e-9, "rotation {rotation}");
}

#[test]
fn a_five_degree_tilt_packs_askew_parts_denser_than_none() {
    // 24 askew parts on a sheet 12.75 high: as drawn, two rows fit (three need 12.83); tilted
    // back upright, three rows of 10 x 4 fit
    let upright = run(&askew_job(24, vec![0.0], 200.0, 12.75));
    let tilted = run(&askew_job(24, tilted(&[0.0], 5.0).unwrap(), 200.0, 12.75));
    assert_eq!(upright.stats.parts_placed, 24);
    assert_eq!(tilted.stats.parts_placed, 24);
    let (a, b) = (
        upright.layouts[0].used_length,
        tilted.layouts[0].used_length,
    );
    eprintln!(
        "used length: no tilt {a:.2} ({:.1} %), tilt 5 {b:.2} ({:.1} %)",
        upright.stats.utilisation, tilted.stats.utilisation
    );
    assert!(b < 0.8 * a, "tilt {b} against none {a}");
    for p in &tilted.layouts[0].placements {
        assert!(
            tilted_angles_contain(p.rotation),
            "rotation {} is not a searched angle",
            p.rotation
        );
    }
}

fn tilted_angles_contain(rotation: f64) -> bool {
    tilted(&[0.0], 5.0)
        .unwrap()
        .iter()
        .any(|a| (a - rotation).abs() < 1e-9)
}

/// Ten 40 x 40 squares on a 400 x 400 sheet, filled from `origin` at `angle` degrees.
fn squares_at(origin: Origin, direction: Direction, angle: f64) -> (Problem, NestResult) {
    let p = Problem {
        parts: vec![rect_part("sq", 40.0, 40.0, 10)],
        sheets: vec![one_sheet(400.0, 400.0)],
        settings: Settings {
            origin,
            direction,
            fill_angle: FillAngle::new(angle).unwrap(),
            ..quick()
        },
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 10, "{origin:?} {direction:?} {angle}");
    (p, r)
}

/// The farthest any part reaches from the sheet's `origin` corner, in x + y (an L1 distance):
/// a column along one edge reaches far, a pile in the corner does not.
fn corner_reach(p: &Problem, r: &NestResult, origin: Origin) -> f64 {
    let corner = match origin {
        Origin::BottomLeft => Point::new(0.0, 0.0),
        Origin::TopLeft => Point::new(0.0, 400.0),
        Origin::TopRight => Point::new(400.0, 400.0),
        Origin::BottomRight => Point::new(400.0, 0.0),
    };
    placed_shapes(p, &r.layouts[0])
        .iter()
        .flat_map(|s| s.geometry.components().to_vec())
        .flat_map(|c| c.outer().to_vec())
        .map(|q| (q.x - corner.x).abs() + (q.y - corner.y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn a_fill_angle_piles_parts_along_the_diagonal_from_the_origin_corner() {
    // at 0 degrees the ten squares stand in one column along the sheet's start edge (reach
    // 40 + 400); at 45 the fill front is the corner's diagonal and the squares pile in the
    // corner's triangle (rows of 4, 3, 2, 1 reach 200)
    for origin in [
        Origin::BottomLeft,
        Origin::TopLeft,
        Origin::TopRight,
        Origin::BottomRight,
    ] {
        for direction in [Direction::X, Direction::Y] {
            let (p0, straight) = squares_at(origin, direction, 0.0);
            let (p45, diagonal) = squares_at(origin, direction, 45.0);
            let (a, b) = (
                corner_reach(&p0, &straight, origin),
                corner_reach(&p45, &diagonal, origin),
            );
            assert!(
                b < 0.6 * a,
                "{origin:?} {direction:?}: 45 reaches {b}, 0 reaches {a}"
            );
            // the used length is measured along the turned fill: no part reaches past it
            let used = diagonal.layouts[0].used_length;
            assert!(used <= b / 2f64.sqrt() + 1e-6, "{used} {b}");
        }
    }
}

#[test]
fn a_fill_angle_keeps_edge_spacing_and_counts_the_used_corner() {
    // the sheet's edge spacing still holds on the askew fill, and the last sheet's used area
    // is the corner cut off across the fill, not the box of the used length
    let mut sheet = one_sheet(400.0, 400.0);
    (sheet.left, sheet.bottom, sheet.right, sheet.top) = (10.0, 5.0, 8.0, 6.0);
    let p = Problem {
        parts: vec![rect_part("sq", 40.0, 40.0, 10)],
        sheets: vec![sheet],
        settings: Settings {
            fill_angle: FillAngle::new(30.0).unwrap(),
            ..quick()
        },
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 10);
    for pl in placed_shapes(&p, &r.layouts[0]) {
        let b = pl.geometry.bbox();
        assert!(
            b.min.x >= 10.0 - 1e-6 && b.min.y >= 5.0 - 1e-6,
            "{}",
            pl.label
        );
        assert!(
            b.max.x <= 392.0 + 1e-6 && b.max.y <= 394.0 + 1e-6,
            "{}",
            pl.label
        );
    }
    let used = r.layouts[0].used_length;
    let (s, c) = 30f64.to_radians().sin_cos();
    // the sheet before the used length: x cos 30 + y sin 30 <= used, inside 400 x 400
    let mut area = 0.0;
    let n = 4000;
    for i in 0..n {
        let x = (i as f64 + 0.5) * 400.0 / n as f64;
        let y_max = ((used - x * c) / s).clamp(0.0, 400.0);
        area += y_max * 400.0 / n as f64;
    }
    let expected = 100.0 * 10.0 * 1600.0 / area;
    assert!(
        (r.stats.utilisation - expected).abs() < 0.1,
        "utilisation {} against {expected}",
        r.stats.utilisation
    );
}
