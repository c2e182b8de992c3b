//! The 2D engine: every layout passes the exact verifier (random instances), the verifier catches
//! planted faults, the same seed gives the same layout, and the engine honours its settings.

use kerf::geometry::{PartGeometry, Point, Shape};
use kerf::nest2d::verify::{placed_geometry, verify_sheet, PlacedShape, Violation};
use kerf::nest2d::*;
use kerf_kernels::CpuEvaluator;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 1_000_000) as f64 / 1_000_000.0
    }
}

/// A random simple polygon: a star-shaped outline around the origin, sometimes with a hole.
fn random_part(rng: &mut Rng, id: usize) -> PartSpec {
    let n = 3 + (rng.next() * 9.0) as usize;
    let r0 = 5.0 + rng.next() * 25.0;
    let mut angles: Vec<f64> = (0..n).map(|_| rng.next() * std::f64::consts::TAU).collect();
    angles.sort_by(f64::total_cmp);
    angles.dedup_by(|a, b| (*a - *b).abs() < 0.05);
    while angles.len() < 3 {
        angles = vec![0.0, 2.1, 4.2];
    }
    let outer: Vec<Point> = angles
        .iter()
        .map(|a| {
            let r = r0 * (0.5 + rng.next() * 0.5);
            Point::new(r * a.cos(), r * a.sin())
        })
        .collect();
    let holes = if rng.next() < 0.2 {
        let h = r0 * 0.15;
        vec![vec![
            Point::new(-h, -h),
            Point::new(-h, h),
            Point::new(h, h),
            Point::new(h, -h),
        ]]
    } else {
        vec![]
    };
    PartSpec {
        id: format!("p{id}"),
        geometry: PartGeometry::single(Shape::new(outer, holes)),
        quantity: 1 + (rng.next() * 3.0) as u32,
        rotations: vec![0.0, 90.0, 180.0, 270.0],
        allow_mirror: rng.next() < 0.3,
        priority: 0,
        spacing_override: if rng.next() < 0.2 {
            Some(rng.next() * 3.0)
        } else {
            None
        },
        nest_as_rectangle: rng.next() < 0.1,
        filler_quantity: 0,
        kit: None,
        common_cut: None,
    }
}

fn check_all_verified(problem: &Problem, r: &NestResult) {
    for l in &r.layouts {
        let v = verify_sheet(&problem.sheets[l.sheet], &placed_shapes(problem, l));
        assert!(v.is_empty(), "layout failed verification: {}", v[0]);
    }
    let placed: u32 = r
        .layouts
        .iter()
        .map(|l| l.multiplicity * l.placements.len() as u32)
        .sum();
    assert_eq!(placed + r.stats.parts_unplaced, r.stats.parts_requested);
}

/// The problem nested on the CPU, every sheet checked by the verifier (`check_all_verified`).
fn nest_verified(problem: &Problem) -> NestResult {
    let r = nest(problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    check_all_verified(problem, &r);
    r
}

/// A `w` x `h` rectangle part, `n` copies, turning by `rotations`.
fn rect(id: &str, w: f64, h: f64, n: u32, rotations: Vec<f64>) -> PartSpec {
    PartSpec {
        rotations,
        ..PartSpec::new(id, PartGeometry::single(Shape::rectangle(w, h)), n)
    }
}

#[test]
fn random_instances_always_verify() {
    let mut rng = Rng(0xC0FFEE);
    for case in 0..12 {
        let parts: Vec<PartSpec> = (0..(3 + case % 5))
            .map(|i| random_part(&mut rng, i))
            .collect();
        let mut sheet =
            SheetSpec::rectangle("s", 120.0 + rng.next() * 80.0, 80.0 + rng.next() * 60.0);
        sheet.left = rng.next() * 5.0;
        sheet.top = rng.next() * 5.0;
        let origins = [
            Origin::BottomLeft,
            Origin::TopLeft,
            Origin::TopRight,
            Origin::BottomRight,
        ];
        let settings = Settings {
            part_spacing: if case % 2 == 0 { 0.0 } else { 2.0 },
            max_run_time_s: 30.0,
            max_iterations: Some(30),
            seed: case as u64,
            max_cpu: 1,
            direction: if case % 3 == 0 {
                Direction::Y
            } else {
                Direction::X
            },
            origin: origins[case % 4],
            cells_per_part: 24.0,
            ..Default::default()
        };
        let problem = Problem {
            parts,
            sheets: vec![sheet],
            settings,
        };
        let r = nest_verified(&problem);
        assert!(r.stats.parts_placed > 0, "case {case}: nothing placed");
    }
}

#[test]
fn irregular_sheet_with_a_defect_verifies() {
    // an L-shaped sheet with a square defect
    let outline = Shape::new(
        vec![
            Point::new(0.0, 0.0),
            Point::new(200.0, 0.0),
            Point::new(200.0, 60.0),
            Point::new(80.0, 60.0),
            Point::new(80.0, 150.0),
            Point::new(0.0, 150.0),
        ],
        vec![vec![
            Point::new(30.0, 20.0),
            Point::new(50.0, 20.0),
            Point::new(50.0, 40.0),
            Point::new(30.0, 40.0),
        ]],
    );
    let mut sheet = SheetSpec::rectangle("L", 200.0, 150.0);
    sheet.shape = SheetShape::Outline(outline);
    sheet.irregular_spacing = 1.0;
    sheet.quantity = Some(3);
    let part = PartSpec {
        rotations: vec![0.0, 90.0],
        ..PartSpec::new("sq", PartGeometry::single(Shape::rectangle(18.0, 12.0)), 30)
    };
    let settings = Settings {
        max_iterations: Some(20),
        max_cpu: 1,
        cells_per_part: 12.0,
        part_spacing: 1.0,
        ..Default::default()
    };
    let problem = Problem {
        parts: vec![part],
        sheets: vec![sheet],
        settings,
    };
    let r = nest_verified(&problem);
    assert_eq!(r.stats.parts_placed, 30);
}

#[test]
fn same_seed_same_layout() {
    let mut rng = Rng(7);
    let parts: Vec<PartSpec> = (0..5).map(|i| random_part(&mut rng, i)).collect();
    let settings = Settings {
        max_iterations: Some(25),
        max_run_time_s: 60.0,
        seed: 42,
        max_cpu: 2,
        cells_per_part: 24.0,
        ..Default::default()
    };
    let problem = Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("s", 150.0, 100.0)],
        settings,
    };
    let a = nest(&problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    let b = nest(&problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    assert_eq!(a.layouts, b.layouts);
}

#[test]
fn oversized_part_is_unplaced_with_a_reason() {
    let big = PartSpec {
        rotations: vec![0.0, 90.0],
        ..PartSpec::new(
            "big",
            PartGeometry::single(Shape::rectangle(500.0, 10.0)),
            2,
        )
    };
    let small = PartSpec {
        id: "small".into(),
        geometry: PartGeometry::single(Shape::rectangle(10.0, 10.0)),
        quantity: 3,
        ..big.clone()
    };
    let settings = Settings {
        max_iterations: Some(5),
        max_cpu: 1,
        ..Default::default()
    };
    let problem = Problem {
        parts: vec![big, small],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings,
    };
    let r = nest(&problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    assert_eq!(r.stats.parts_placed, 3);
    assert_eq!(r.unplaced.len(), 1);
    assert_eq!((r.unplaced[0].part, r.unplaced[0].quantity), (0, 2));
    assert!(
        r.unplaced[0].reason.contains("larger than every sheet"),
        "{}",
        r.unplaced[0].reason
    );
}

#[test]
fn many_copies_fill_several_sheets_grouped_by_multiplicity() {
    let part = rect("r", 30.0, 20.0, 40, vec![0.0]);
    let settings = Settings {
        max_iterations: Some(5),
        max_cpu: 1,
        cells_per_part: 10.0,
        ..Default::default()
    };
    // 100 x 60 holds exactly 3 x 3 = 9 parts of 30 x 20: 40 parts need 5 sheets, 4 of them full
    let problem = Problem {
        parts: vec![part],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 60.0)],
        settings,
    };
    let r = nest_verified(&problem);
    assert_eq!(r.stats.parts_placed, 40);
    assert_eq!(r.stats.sheets_used, 5);
    assert_eq!(
        r.layouts[0].multiplicity, 4,
        "four identical full sheets are one layout"
    );
}

/// Rectangles in round sizes that fill two sheets exactly, at the default resolution (whose cell,
/// a typical part over 128, divides none of their sides): the cell is moved onto the job's
/// grid, so the tiling fits on the raster as it does in the geometry.
#[test]
fn parts_that_tile_the_sheets_exactly_fill_them() {
    let problem = Problem {
        parts: vec![
            rect("a", 300.0, 500.0, 10, vec![0.0]),
            rect("b", 250.0, 1000.0, 6, vec![0.0, 90.0]),
        ],
        sheets: vec![SheetSpec::rectangle("s", 1500.0, 1000.0)],
        settings: Settings {
            max_iterations: Some(40),
            max_cpu: 1,
            ..Default::default()
        },
    };
    let r = nest_verified(&problem);
    assert_eq!(r.stats.parts_placed, 16);
    assert_eq!(
        r.stats.sheets_used, 2,
        "two full sheets: five by two of 300 x 500, six of 250 x 1000"
    );
}

/// The same with a part spacing: four 240-wide parts and three 10 mm gaps make 990 of a
/// 1000-long sheet, two 395-high rows and a gap exactly its 800 height. The rasters grow by
/// exactly half the spacing where the grid allows, not a cell more. (At 96 cells to the part the
/// cell is 2.5 mm, which the job's 5 mm grid holds twice; at the default 128 it would be 1.875,
/// too far from a whole division of 5 to move, `grid::aligned_cell`.)
#[test]
fn parts_that_tile_a_sheet_exactly_with_their_spacing_fill_it() {
    let problem = Problem {
        parts: vec![rect("r", 240.0, 395.0, 8, vec![0.0])],
        sheets: vec![SheetSpec::rectangle("s", 1000.0, 800.0)],
        settings: Settings {
            part_spacing: 10.0,
            cells_per_part: 96.0,
            max_iterations: Some(40),
            max_cpu: 1,
            ..Default::default()
        },
    };
    let r = nest_verified(&problem);
    assert_eq!(r.stats.parts_placed, 8);
    assert_eq!(r.stats.sheets_used, 1);
}

#[test]
fn interim_results_are_reported_and_cancel_keeps_the_best() {
    let mut rng = Rng(99);
    let parts: Vec<PartSpec> = (0..6).map(|i| random_part(&mut rng, i)).collect();
    let settings = Settings {
        max_run_time_s: 30.0,
        max_cpu: 1,
        cells_per_part: 24.0,
        ..Default::default()
    };
    let problem = Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("s", 400.0, 100.0)],
        settings,
    };
    let cancel = CancelHandle::default();
    let seen = std::sync::Mutex::new(Vec::new());
    let r = nest(&problem, &CpuEvaluator, &cancel, &|interim| {
        seen.lock().unwrap().push(interim.stats.used_length);
        if seen.lock().unwrap().len() >= 3 {
            cancel.cancel();
        }
    })
    .unwrap();
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() >= 2, "interim results: {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[1] < w[0]),
        "each interim result improves: {seen:?}"
    );
    assert!(r.stats.elapsed_s < 30.0, "cancel stopped the search");
    assert!(
        r.stats.used_length <= seen.last().unwrap() + 1e-9,
        "the final result is the best interim one, or shorter after the exact slide"
    );
    check_all_verified(&problem, &r);
}

fn sq(label: &str, x: f64, y: f64, spacing: f64) -> PlacedShape {
    PlacedShape {
        label: label.into(),
        geometry: placed_geometry(
            &PartGeometry::single(Shape::rectangle(10.0, 10.0)),
            false,
            0.0,
            x,
            y,
        ),
        spacing,
    }
}

#[test]
fn verifier_catches_planted_faults() {
    let sheet = SheetSpec::rectangle("s", 100.0, 100.0);
    // touching squares are fine without spacing
    assert!(verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 0.0), sq("b", 10.0, 0.0, 0.0)]).is_empty());
    // overlapping by a hair
    let v = verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 0.0), sq("b", 9.999, 0.0, 0.0)]);
    assert!(matches!(v.as_slice(), [Violation::Overlap { .. }]), "{v:?}");
    // corners meeting diagonally, 1e-13 mm into each other (floating-point noise of a grid
    // of copies): touching, not overlap; 1e-4 mm into each other is overlap
    let noise = 1e-13;
    assert!(verify_sheet(
        &sheet,
        &[
            sq("a", 0.0, 0.0, 0.0),
            sq("b", 10.0 - noise, 10.0 - noise, 0.0)
        ]
    )
    .is_empty());
    let v = verify_sheet(
        &sheet,
        &[sq("a", 0.0, 0.0, 0.0), sq("b", 9.9999, 9.9999, 0.0)],
    );
    assert!(matches!(v.as_slice(), [Violation::Overlap { .. }]), "{v:?}");
    // a diamond whose bottom vertex is 1e-13 mm into the middle of the square's top edge (a T,
    // as copies placed against each other make): touching
    let diamond = |depth: f64| PlacedShape {
        label: "diamond".into(),
        geometry: PartGeometry::single(Shape::new(
            vec![
                Point::new(5.0, 10.0 - depth),
                Point::new(8.0, 13.0 - depth),
                Point::new(5.0, 16.0 - depth),
                Point::new(2.0, 13.0 - depth),
            ],
            vec![],
        )),
        spacing: 0.0,
    };
    assert!(verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 0.0), diamond(1e-13)]).is_empty());
    let v = verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 0.0), diamond(1e-3)]);
    assert!(matches!(v.as_slice(), [Violation::Overlap { .. }]), "{v:?}");
    // a vertex a hair from the square's top edge, its edges running on deep into the square
    let wedge = PlacedShape {
        label: "wedge".into(),
        geometry: PartGeometry::single(Shape::new(
            vec![
                Point::new(-20.0, 2.0),
                Point::new(30.0, 2.0),
                Point::new(5.0, 10.0 + 1e-9),
            ],
            vec![],
        )),
        spacing: 0.0,
    };
    let v = verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 0.0), wedge]);
    assert!(
        v.iter().any(|v| matches!(v, Violation::Overlap { .. })),
        "{v:?}"
    );
    // identical positions
    let v = verify_sheet(&sheet, &[sq("a", 5.0, 5.0, 0.0), sq("b", 5.0, 5.0, 0.0)]);
    assert!(matches!(v.as_slice(), [Violation::Overlap { .. }]), "{v:?}");
    // one inside the other (no edge crossings)
    let big = PlacedShape {
        label: "big".into(),
        geometry: PartGeometry::single(Shape::rectangle(50.0, 50.0)),
        spacing: 0.0,
    };
    let v = verify_sheet(&sheet, &[big, sq("in", 20.0, 20.0, 0.0)]);
    assert!(matches!(v.as_slice(), [Violation::Overlap { .. }]), "{v:?}");
    // spacing: 1.5 mm apart when 2 are required
    let v = verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 2.0), sq("b", 11.5, 0.0, 0.0)]);
    assert!(
        matches!(v.as_slice(), [Violation::TooClose { .. }]),
        "{v:?}"
    );
    assert!(verify_sheet(&sheet, &[sq("a", 0.0, 0.0, 2.0), sq("b", 12.0, 0.0, 0.0)]).is_empty());
    // outside the sheet and inside the edge spacing
    let v = verify_sheet(&sheet, &[sq("a", 95.0, 0.0, 0.0)]);
    assert!(
        matches!(v.as_slice(), [Violation::OutsideSheet { .. }]),
        "{v:?}"
    );
    let mut edged = sheet.clone();
    edged.left = 3.0;
    assert!(!verify_sheet(&edged, &[sq("a", 2.0, 0.0, 0.0)]).is_empty());
    // a part placed in another's hole is fine; one crossing the hole's edge is not
    let frame = PlacedShape {
        label: "frame".into(),
        geometry: PartGeometry::single(Shape::new(
            Shape::rectangle(60.0, 60.0).outer().to_vec(),
            vec![Shape::rectangle(40.0, 40.0)
                .translate(10.0, 10.0)
                .outer()
                .to_vec()],
        )),
        spacing: 0.0,
    };
    assert!(verify_sheet(&sheet, &[frame, sq("in-hole", 20.0, 20.0, 0.0)]).is_empty());
}

#[test]
fn verifier_catches_every_planted_overlap_in_a_real_layout() {
    let mut rng = Rng(1234);
    let parts: Vec<PartSpec> = (0..5).map(|i| random_part(&mut rng, i)).collect();
    let settings = Settings {
        max_iterations: Some(10),
        max_cpu: 1,
        cells_per_part: 24.0,
        ..Default::default()
    };
    let problem = Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("s", 300.0, 120.0)],
        settings,
    };
    let r = nest(&problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    let layout = &r.layouts[0];
    assert!(layout.placements.len() >= 2);
    for k in 1..layout.placements.len() {
        // move part k onto part 0's place: they must now overlap
        let mut bad = layout.clone();
        bad.placements[k].x = bad.placements[0].x;
        bad.placements[k].y = bad.placements[0].y;
        bad.placements[k].part = bad.placements[0].part;
        bad.placements[k].rotation = bad.placements[0].rotation;
        bad.placements[k].mirrored = bad.placements[0].mirrored;
        let v = verify_sheet(&problem.sheets[0], &placed_shapes(&problem, &bad));
        assert!(
            v.iter().any(|v| matches!(v, Violation::Overlap { .. })),
            "planted overlap {k} not caught"
        );
        // and the engine's own guard takes such a layout apart rather than returning it
        let mut res = r.clone();
        res.layouts[0] = bad;
        enforce_verified(&problem, &mut res);
        assert!(verify_sheet(
            &problem.sheets[0],
            &placed_shapes(&problem, &res.layouts[0])
        )
        .is_empty());
        assert!(res
            .unplaced
            .iter()
            .any(|u| u.reason.contains("verification")));
    }
}
