//! Every DXF in tests/data imports as a person inspecting it would expect.
//! Expected counts and areas were determined independently: loops found by ezdxf's edge miner,
//! arcs, circles and ellipses sampled on the true curve (2e-4 rad steps, not ezdxf's Bezier
//! approximation, which overstates circles by ~0.03 %), areas and nesting by shapely.
//! kerf's areas may exceed the true area by at most chord tolerance x perimeter, because curves
//! are flattened conservatively (the polygon contains the real part).

use kerf::geometry::{import_dxf, ImportError, ImportOptions, Units};

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

struct Expect {
    file: &'static str,
    outlines: usize,
    holes: usize,
    true_area: f64,
    perimeter: f64,
}

const EXPECTED: &[Expect] = &[
    // three INSERTs of a block (LWPOLYLINE + CIRCLE) plus one of each drawn directly
    Expect {
        file: "blocks_insert.dxf",
        outlines: 4,
        holes: 4,
        true_area: 9.133,
        perimeter: 67.5,
    },
    // a ring of 120 LINEs: outer and inner polygons
    Expect {
        file: "donut_r12.dxf",
        outlines: 1,
        holes: 1,
        true_area: 8466.800,
        perimeter: 565.2,
    },
    // 33 closed LWPOLYLINEs, 5 CIRCLEs, 2 ELLIPSEs: 23 shapes, 17 of the loops are holes
    Expect {
        file: "forms_lwpolyline_ellipse.dxf",
        outlines: 23,
        holes: 17,
        true_area: 374721.968,
        perimeter: 15581.5,
    },
    // 200 x 100 frame with a 160 x 80 window, no HEADER (so no $INSUNITS: millimetres)
    Expect {
        file: "frame_with_hole_r12.dxf",
        outlines: 1,
        holes: 1,
        true_area: 7200.0,
        perimeter: 1080.0,
    },
    Expect {
        file: "part_1.dxf",
        outlines: 1,
        holes: 1,
        true_area: 2185.841,
        perimeter: 262.8,
    },
    Expect {
        file: "part_2.dxf",
        outlines: 1,
        holes: 1,
        true_area: 2014.261,
        perimeter: 307.6,
    },
    Expect {
        file: "part_3.dxf",
        outlines: 1,
        holes: 1,
        true_area: 1565.945,
        perimeter: 307.3,
    },
    Expect {
        file: "part_5.dxf",
        outlines: 1,
        holes: 0,
        true_area: 2109.817,
        perimeter: 310.0,
    },
    Expect {
        file: "part_6.dxf",
        outlines: 1,
        holes: 7,
        true_area: 8490.833,
        perimeter: 1044.8,
    },
    Expect {
        file: "part_7.dxf",
        outlines: 1,
        holes: 0,
        true_area: 14918.162,
        perimeter: 740.7,
    },
    Expect {
        file: "part_8.dxf",
        outlines: 1,
        holes: 0,
        true_area: 7857.261,
        perimeter: 697.7,
    },
    // one old-style POLYLINE (VERTEX/SEQEND), an 11 x 11 square
    Expect {
        file: "square_polyline_r12.dxf",
        outlines: 1,
        holes: 0,
        true_area: 121.0,
        perimeter: 44.0,
    },
];

fn check_area(file: &str, got: f64, e: &Expect, chord_tol: f64) {
    let slack = chord_tol * e.perimeter + 1e-6 * e.true_area + 1e-3;
    assert!(
        got >= e.true_area - 1e-3 - 1e-6 * e.true_area,
        "{file}: area {got} is below the true area {}",
        e.true_area
    );
    assert!(
        got <= e.true_area + slack,
        "{file}: area {got} exceeds the true area {} by more than {slack}",
        e.true_area
    );
}

#[test]
fn each_file_imports_as_one_part_by_default() {
    for e in EXPECTED {
        let imp = import_dxf(e.file, &read(e.file), &ImportOptions::default())
            .unwrap_or_else(|err| panic!("{}: {err}", e.file));
        assert_eq!(
            imp.parts.len(),
            1,
            "{}: without UseAllPartsInFile the file is one part",
            e.file
        );
        let g = &imp.parts[0].geometry;
        assert_eq!(g.components().len(), e.outlines, "{}: outlines", e.file);
        assert_eq!(g.hole_count(), e.holes, "{}: holes", e.file);
        check_area(e.file, g.area(), e, 0.05);
    }
}

#[test]
fn use_all_parts_in_file_gives_one_part_per_outline() {
    for e in EXPECTED {
        let opts = ImportOptions {
            use_all_parts_in_file: true,
            ..Default::default()
        };
        let imp = import_dxf(e.file, &read(e.file), &opts).unwrap();
        assert_eq!(imp.parts.len(), e.outlines, "{}", e.file);
        let holes: usize = imp.parts.iter().map(|p| p.geometry.hole_count()).sum();
        assert_eq!(holes, e.holes, "{}", e.file);
        let area: f64 = imp.parts.iter().map(|p| p.geometry.area()).sum();
        check_area(e.file, area, e, 0.05);
    }
}

#[test]
fn finer_chord_tolerance_converges_to_the_true_area() {
    for e in EXPECTED {
        let opts = ImportOptions {
            chord_tolerance: 0.001,
            ..Default::default()
        };
        let imp = import_dxf(e.file, &read(e.file), &opts).unwrap();
        check_area(e.file, imp.parts[0].geometry.area(), e, 0.001);
    }
}

#[test]
fn self_crossing_loop_is_reported_with_its_place() {
    // closed_loop_lines_arcs.dxf: LINE (194.95,206.49)-(248.54,150.42) crosses LINE
    // (198.79,164.44)-(251.84,198.80) at (221.24, 178.98) drawing units; $INSUNITS = 6 (metres).
    let err = import_dxf(
        "closed_loop_lines_arcs.dxf",
        &read("closed_loop_lines_arcs.dxf"),
        &ImportOptions::default(),
    )
    .unwrap_err();
    match &err {
        ImportError::SelfCrossing { source_name, at } => {
            assert_eq!(source_name, "closed_loop_lines_arcs.dxf");
            assert!(
                (at.x - 221_242.9).abs() < 1.0 && (at.y - 178_981.2).abs() < 1.0,
                "{at:?}"
            );
        }
        other => panic!("expected a self-crossing error, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("closed_loop_lines_arcs.dxf") && msg.contains("self-crossing"),
        "{msg}"
    );
}

#[test]
fn open_outline_names_the_gap_and_a_looser_tolerance_joins_it() {
    // part_4.dxf has two ends 0.0139 mm apart near (3027.51, 1543.11): more than 0.01, less
    // than the default 0.02
    let strict = ImportOptions {
        chain_tolerance: 0.01,
        ..Default::default()
    };
    let err = import_dxf("part_4.dxf", &read("part_4.dxf"), &strict).unwrap_err();
    match &err {
        ImportError::OpenOutline { gap, from, .. } => {
            assert!((gap - 0.0139).abs() < 0.0005, "gap {gap}");
            assert!(
                (from.x - 3027.51).abs() < 0.05 && (from.y - 1543.12).abs() < 0.05,
                "{from:?}"
            );
        }
        other => panic!("expected an open-outline error, got {other}"),
    }
    assert!(err.to_string().contains("gap of 0.0139"), "{err}");
    let imp = import_dxf("part_4.dxf", &read("part_4.dxf"), &ImportOptions::default()).unwrap();
    let g = &imp.parts[0].geometry;
    assert_eq!((g.components().len(), g.hole_count()), (1, 0));
    let e = Expect {
        file: "part_4.dxf",
        outlines: 1,
        holes: 0,
        true_area: 7402.593,
        perimeter: 843.9,
    };
    check_area("part_4.dxf", g.area(), &e, 0.05);
}

#[test]
fn closed_polyline_repeating_its_first_vertex_a_hair_off_imports() {
    // A closed LWPOLYLINE whose last vertex repeats the first 0.0032 mm off, as some CAD
    // exports write them: the sliver edge between the two is under the chaining tolerance.
    // It used to be left over as a loop of its own and fail the file with "zero area".
    let mut dxf =
        String::from("  0\nSECTION\n  2\nENTITIES\n  0\nLWPOLYLINE\n  8\n0\n 90\n5\n 70\n1\n");
    for (x, y) in [
        (1523.255121, 0.379508),
        (1228.472721, 728.3898),
        (324.481476, 728.3898),
        (27.114354, 0.375233),
        (1523.255121, 0.382733),
    ] {
        dxf.push_str(&format!(" 10\n{x}\n 20\n{y}\n"));
    }
    dxf.push_str("  0\nENDSEC\n  0\nEOF\n");
    let imp = import_dxf("trapezoid.dxf", dxf.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(imp.parts.len(), 1);
    let g = &imp.parts[0].geometry;
    assert_eq!((g.components().len(), g.hole_count()), (1, 0));
    // the trapezoid's area by the shoelace formula on its four corners
    let (a, b, h) = (
        1523.255121 - 27.114354,
        1228.472721 - 324.481476,
        728.3898 - 0.3775,
    );
    let want = (a + b) / 2.0 * h;
    assert!(
        (g.area() - want).abs() < 0.01 * want,
        "area {} against {want}",
        g.area()
    );
    // a slot drawn into a square's bottom edge, the edge left whole: the slot's ends meet the
    // edge's middle, and the error says so instead of naming a gap between the slot's ends
    let mut slot = String::from("  0\nSECTION\n  2\nENTITIES\n");
    for (a, b) in [
        ((0, 0), (100, 0)),
        ((100, 0), (100, 100)),
        ((100, 100), (0, 100)),
        ((0, 100), (0, 0)),
        ((20, 0), (20, 30)),
        ((20, 30), (23, 30)),
        ((23, 30), (23, 0)),
    ] {
        slot.push_str(&format!(
            "  0\nLINE\n  8\n0\n 10\n{}\n 20\n{}\n 11\n{}\n 21\n{}\n",
            a.0, a.1, b.0, b.1
        ));
    }
    slot.push_str("  0\nENDSEC\n  0\nEOF\n");
    let err = import_dxf("slot.dxf", slot.as_bytes(), &ImportOptions::default()).unwrap_err();
    match &err {
        ImportError::TJunction { at, .. } => assert!(
            at.y.abs() < 1e-9 && (at.x == 20.0 || at.x == 23.0),
            "{at:?}"
        ),
        other => panic!("expected a T-junction, got {other}"),
    }
    assert!(err.to_string().contains("T-junction"), "{err}");
    // a square whose last line stops 0.06 along its first edge (three default tolerances): a
    // gap a looser tolerance closes, named as the gap, not a junction
    let near_miss = "  0\nSECTION\n  2\nENTITIES\n  0\nLWPOLYLINE\n  8\n0\n 90\n5\n 70\n0\n 10\n0\n 20\n0\n 10\n100\n 20\n0\n 10\n100\n 20\n100\n 10\n0\n 20\n100\n 10\n0.06\n 20\n0\n  0\nENDSEC\n  0\nEOF\n";
    let err = import_dxf("near.dxf", near_miss.as_bytes(), &ImportOptions::default()).unwrap_err();
    match &err {
        ImportError::OpenOutline { gap, .. } => assert!((gap - 0.06).abs() < 1e-9, "{gap}"),
        other => panic!("expected an open outline, got {other}"),
    }
    // a lone edge longer than the tolerance is still an open outline, not dropped
    let open = "  0\nSECTION\n  2\nENTITIES\n  0\nLINE\n  8\n0\n 10\n0\n 20\n0\n 11\n0.5\n 21\n0\n  0\nENDSEC\n  0\nEOF\n";
    let err = import_dxf("line.dxf", open.as_bytes(), &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::OpenOutline { .. }), "{err}");
}

#[test]
fn units_and_scale_apply() {
    let bytes = read("square_polyline_r12.dxf");
    let opts = ImportOptions {
        units: Units::Centimetres,
        ..Default::default()
    };
    let a = import_dxf("sq", &bytes, &opts).unwrap().parts[0]
        .geometry
        .area();
    assert!((a - 12100.0).abs() < 1e-6, "{a}");
    let opts = ImportOptions {
        units: Units::Inches,
        from_scale: 2.0,
        to_scale: 1.0,
        ..Default::default()
    };
    let a = import_dxf("sq", &bytes, &opts).unwrap().parts[0]
        .geometry
        .area();
    assert!((a - 121.0 * 25.4 * 25.4 / 4.0).abs() < 1e-6, "{a}");
    // $INSUNITS = 6 is honoured for FromFile: the crossing point above is in millimetres.
    let opts = ImportOptions {
        initial_rotation_deg: 90.0,
        ..Default::default()
    };
    let bb = import_dxf("sq", &bytes, &opts).unwrap().parts[0]
        .geometry
        .bbox();
    assert!(
        (bb.width() - 11.0).abs() < 1e-9 && bb.max.x <= 1e-9,
        "rotated 90 degrees CCW: {bb:?}"
    );
}

#[test]
fn broken_files_get_clear_errors() {
    let empty = import_dxf("empty.dxf", b"", &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(empty, ImportError::Empty { .. }) && empty.to_string().contains("empty.dxf"),
        "{empty}"
    );
    let junk = import_dxf(
        "junk.dxf",
        b"this is not a drawing\n",
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(junk.to_string().starts_with("junk.dxf: "), "{junk}");
    // a drawing with only text: empty, and the skipped text is named
    let text_only = "  0\nSECTION\n  2\nENTITIES\n  0\nTEXT\n  8\n0\n 10\n0\n 20\n0\n 40\n1\n  1\nhello\n  0\nENDSEC\n  0\nEOF\n";
    let err = import_dxf("text.dxf", text_only.as_bytes(), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(err, ImportError::Empty { .. }) && err.to_string().contains("TEXT"),
        "{err}"
    );
    // a square drawn in paper space (group 67 = 1) only: empty, and the error says where it is
    let paper = "  0\nSECTION\n  2\nENTITIES\n  0\nLWPOLYLINE\n 67\n1\n  8\n0\n 90\n4\n 70\n1\n 10\n0\n 20\n0\n 10\n10\n 20\n0\n 10\n10\n 20\n10\n 10\n0\n 20\n10\n  0\nENDSEC\n  0\nEOF\n";
    let err = import_dxf("layout.dxf", paper.as_bytes(), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(err, ImportError::Empty { .. })
            && err
                .to_string()
                .contains("paper space (a layout) holds, 1 entity"),
        "{err}"
    );
    // circles of zero or negative radius are named, not dropped silently
    let no_radius = "  0\nSECTION\n  2\nENTITIES\n  0\nCIRCLE\n  8\n0\n 10\n0\n 20\n0\n 40\n0\n  0\nCIRCLE\n  8\n0\n 10\n5\n 20\n0\n 40\n-1\n  0\nENDSEC\n  0\nEOF\n";
    let err = import_dxf("r0.dxf", no_radius.as_bytes(), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(err, ImportError::Empty { .. })
            && err.to_string().contains("2 CIRCLE of no radius"),
        "{err}"
    );
    // the same square in model space imports
    let model = paper.replace(" 67\n1\n", "");
    let imp = import_dxf("model.dxf", model.as_bytes(), &ImportOptions::default()).unwrap();
    assert!((imp.parts[0].geometry.area() - 100.0).abs() < 1e-9);
}
