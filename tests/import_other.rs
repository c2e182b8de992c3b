//! Import paths other than the sample files: JSON contours, parametric shapes, compression,
//! layer rules, mirrored and nested block inserts, binary DXF, splines and ellipses.

use dxf::entities::{Circle, Entity, EntityType, Insert, Line, LwPolyline, Spline};
use dxf::{Block, Color, Drawing, LwPolylineVertex, Point as DPoint};
use kerf::geometry::*;
use std::f64::consts::PI;
use std::io::Write;

fn square_entities(x: f64, y: f64, s: f64, layer: &str) -> Vec<Entity> {
    let c = [(x, y), (x + s, y), (x + s, y + s), (x, y + s)];
    (0..4)
        .map(|i| {
            let (a, b) = (c[i], c[(i + 1) % 4]);
            let mut e = Entity::new(EntityType::Line(Line::new(
                DPoint::new(a.0, a.1, 0.0),
                DPoint::new(b.0, b.1, 0.0),
            )));
            e.common.layer = layer.into();
            e
        })
        .collect()
}

fn save(d: &Drawing) -> Vec<u8> {
    let mut buf = Vec::new();
    d.save(&mut buf).unwrap();
    buf
}

#[test]
fn json_contours_with_bulges_make_exact_circles() {
    // a 20 mm disc from two half-circle bulges, with a 10 x 10 square hole drawn clockwise
    let doc = r#"{"Contours":[
        {"Vertices":[{"X":0,"Y":0,"Bulge":1},{"X":20,"Y":0,"Bulge":1}]},
        {"Vertices":[{"X":5,"Y":-5},{"X":5,"Y":5},{"X":15,"Y":5},{"X":15,"Y":-5}]}],"Units":"mm"}"#;
    let opts = ImportOptions {
        chord_tolerance: 0.001,
        ..Default::default()
    };
    let imp = import_contour_json("disc", doc.as_bytes(), &opts, Side::Grow).unwrap();
    let g = &imp.parts[0].geometry;
    assert_eq!((g.components().len(), g.hole_count()), (1, 1));
    let want = PI * 100.0 - 100.0;
    assert!(
        g.area() >= want && g.area() < want + 0.001 * 2.0 * PI * 10.0 + 1e-9,
        "{}",
        g.area()
    );
    // centimetres
    let doc_cm = doc.replace("\"mm\"", "\"cm\"");
    let a = import_contour_json("disc", doc_cm.as_bytes(), &opts, Side::Grow)
        .unwrap()
        .parts[0]
        .geometry
        .area();
    assert!(
        a >= 100.0 * want && a < 100.0 * want + 0.001 * 2.0 * PI * 100.0 + 1e-6,
        "{a}"
    );
    // errors name the source
    let e = import_contour_json("bad.json", b"{\"Contours\": 5}", &opts, Side::Grow).unwrap_err();
    assert!(e.to_string().starts_with("bad.json: "), "{e}");
    let e = import_contour_json(
        "u.json",
        br#"{"Contours":[],"Units":"furlong"}"#,
        &opts,
        Side::Grow,
    )
    .unwrap_err();
    assert!(e.to_string().contains("Units"), "{e}");
}

#[test]
fn parametric_shapes_have_their_areas() {
    let opts = ImportOptions {
        chord_tolerance: 0.0005,
        ..Default::default()
    };
    let cases: Vec<(&str, f64)> = vec![
        (r#"{"Shape":"Rectangle","Width":30,"Height":20}"#, 600.0),
        (r#"{"Shape":"Circle","Diameter":50}"#, PI * 625.0),
        (
            r#"{"Shape":"Ring","OuterDiameter":50,"InnerDiameter":30}"#,
            PI * (625.0 - 225.0),
        ),
        (
            r#"{"Shape":"RoundedRectangle","Width":40,"Height":20,"Radius":5}"#,
            800.0 - (4.0 - PI) * 25.0,
        ),
        (
            r#"{"Shape":"Polygon","Vertices":[{"X":0,"Y":0},{"X":10,"Y":0},{"X":0,"Y":10}]}"#,
            50.0,
        ),
    ];
    for (json, want) in cases {
        let p: Parametric = serde_json::from_str(json).unwrap();
        let g = parametric_part("p", &p, &opts).unwrap().parts[0]
            .geometry
            .clone();
        assert!(
            g.area() >= want - 1e-9 && g.area() < want * 1.0005,
            "{json}: {} vs {want}",
            g.area()
        );
    }
    let p: Parametric =
        serde_json::from_str(r#"{"Shape":"Ring","OuterDiameter":20,"InnerDiameter":30}"#).unwrap();
    let e = parametric_part("ring", &p, &opts).unwrap_err();
    assert!(e.to_string().contains("InnerDiameter"), "{e}");
    let p: Parametric = serde_json::from_str(r#"{"Shape":"Circle","Diameter":-1}"#).unwrap();
    assert!(parametric_part("c", &p, &opts)
        .unwrap_err()
        .to_string()
        .contains("Diameter"));
}

#[test]
fn compressed_geometry_decodes() {
    let raw = std::fs::read(format!(
        "{}/tests/data/part_1.dxf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).unwrap();
    let gz = gz.finish().unwrap();
    let mut de = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    de.write_all(&raw).unwrap();
    let de = de.finish().unwrap();
    let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zl.write_all(&raw).unwrap();
    let zl = zl.finish().unwrap();
    let mut zipped = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut zipped);
        z.start_file::<_, ()>("part_1.dxf", zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(&raw).unwrap();
        z.finish().unwrap();
    }
    for (c, data) in [
        (Compression::GZip, gz),
        (Compression::Deflate, de),
        (Compression::Deflate, zl),
        (Compression::Zip, zipped.into_inner()),
    ] {
        assert_eq!(c.decode(&data).unwrap(), raw, "{c:?}");
    }
    assert_eq!(Compression::parse("gzip"), Some(Compression::GZip));
    assert_eq!(Compression::parse("Z I P"), Some(Compression::Zip));
    assert_eq!(Compression::parse("rar"), None);
    assert!(Compression::GZip
        .decode(b"not gzip")
        .unwrap_err()
        .contains("GZip"));
    assert!(Compression::Zip
        .decode(b"not zip")
        .unwrap_err()
        .contains("Zip"));
}

#[test]
fn layer_rules_pick_cut_attach_and_ignored_geometry() {
    let mut d = Drawing::new();
    for e in square_entities(0.0, 0.0, 10.0, "CUT") {
        d.add_entity(e);
    }
    for e in square_entities(20.0, 0.0, 5.0, "OTHER") {
        d.add_entity(e);
    }
    let mut red = Entity::new(EntityType::Line(Line::new(
        DPoint::new(2.0, 2.0, 0.0),
        DPoint::new(8.0, 8.0, 0.0),
    )));
    red.common.layer = "ENGRAVE".into();
    red.common.color = Color::from_index(1);
    d.add_entity(red);
    let bytes = save(&d);
    let rule = |layer: &str| LayerRule {
        layer_name: Some(layer.into()),
        ..Default::default()
    };
    // no rules: both squares are cut geometry; the lone engraving line leaves an open outline
    let e = import_dxf("f.dxf", &bytes, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, ImportError::OpenOutline { .. }), "{e}");
    // CutLayers = CUT: one square; the engraving attached by colour (red) to the part it lies in
    let opts = ImportOptions {
        cut_layers: vec![rule("cut")],
        attach_layers: vec![LayerRule {
            colour_rgb: Some(0xFF0000),
            ..Default::default()
        }],
        ..Default::default()
    };
    let imp = import_dxf("f.dxf", &bytes, &opts).unwrap();
    assert_eq!(imp.parts.len(), 1);
    assert!((imp.parts[0].geometry.area() - 100.0).abs() < 1e-9);
    assert_eq!(imp.parts[0].marks.len(), 1);
    assert!(
        imp.warnings.iter().any(|w| w.contains("OTHER")),
        "{:?}",
        imp.warnings
    );
    // IgnoreLayers wins over everything else
    let opts = ImportOptions {
        ignore_layers: vec![rule("ENGRAVE"), rule("OTHER")],
        ..Default::default()
    };
    let imp = import_dxf("f.dxf", &bytes, &opts).unwrap();
    assert!((imp.parts[0].geometry.area() - 100.0).abs() < 1e-9);
    // colour given as an ACI number or hex string both parse
    assert_eq!(colour::parse_colour("1"), Some(0xFF0000));
    assert_eq!(colour::parse_colour("#00ff00"), Some(0x00FF00));
}

#[test]
fn inserts_place_scale_rotate_and_mirror_blocks() {
    // block: an L-shaped LWPOLYLINE (asymmetric), inserted plainly, mirrored (x scale -1),
    // rotated 90 degrees and scaled 2, and nested inside another block
    let mut d = Drawing::new();
    d.header.version = dxf::enums::AcadVersion::R2000; // R12 (the default) has no LWPOLYLINE
    let mut pl = LwPolyline::default();
    for (x, y) in [
        (0.0, 0.0),
        (4.0, 0.0),
        (4.0, 1.0),
        (1.0, 1.0),
        (1.0, 3.0),
        (0.0, 3.0),
    ] {
        pl.vertices.push(LwPolylineVertex {
            x,
            y,
            ..Default::default()
        });
    }
    pl.set_is_closed(true);
    let mut b = Block {
        name: "L".into(),
        ..Default::default()
    };
    b.entities.push(Entity::new(EntityType::LwPolyline(pl)));
    d.add_block(b);
    let mut outer = Block {
        name: "WRAP".into(),
        ..Default::default()
    };
    let mut inner = Insert {
        name: "L".into(),
        ..Default::default()
    };
    inner.location = DPoint::new(100.0, 0.0, 0.0);
    outer.entities.push(Entity::new(EntityType::Insert(inner)));
    d.add_block(outer);
    let ins = |x: f64, sx: f64, sy: f64, rot: f64, name: &str| {
        let mut i = Insert {
            name: name.into(),
            ..Default::default()
        };
        i.location = DPoint::new(x, 0.0, 0.0);
        i.x_scale_factor = sx;
        i.y_scale_factor = sy;
        i.rotation = rot;
        Entity::new(EntityType::Insert(i))
    };
    d.add_entity(ins(0.0, 1.0, 1.0, 0.0, "L"));
    d.add_entity(ins(20.0, -1.0, 1.0, 0.0, "L"));
    d.add_entity(ins(40.0, 2.0, 2.0, 90.0, "L"));
    d.add_entity(ins(0.0, 1.0, 1.0, 0.0, "WRAP"));
    let opts = ImportOptions {
        use_all_parts_in_file: true,
        ..Default::default()
    };
    let imp = import_dxf("blocks", &save(&d), &opts).unwrap();
    let mut parts: Vec<(f64, f64, f64, f64, f64)> = imp
        .parts
        .iter()
        .map(|p| {
            let b = p.geometry.bbox();
            (b.min.x, b.min.y, b.max.x, b.max.y, p.geometry.area())
        })
        .collect();
    parts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let close = |a: (f64, f64, f64, f64, f64), b: (f64, f64, f64, f64, f64)| {
        (a.0 - b.0).abs() < 1e-9
            && (a.1 - b.1).abs() < 1e-9
            && (a.2 - b.2).abs() < 1e-9
            && (a.3 - b.3).abs() < 1e-9
            && (a.4 - b.4).abs() < 1e-9
    };
    assert_eq!(parts.len(), 4);
    assert!(close(parts[0], (0.0, 0.0, 4.0, 3.0, 6.0)), "{:?}", parts[0]);
    assert!(
        close(parts[1], (16.0, 0.0, 20.0, 3.0, 6.0)),
        "mirrored: {:?}",
        parts[1]
    );
    assert!(
        close(parts[2], (34.0, 0.0, 40.0, 8.0, 24.0)),
        "rotated and scaled: {:?}",
        parts[2]
    );
    assert!(
        close(parts[3], (100.0, 0.0, 104.0, 3.0, 6.0)),
        "nested: {:?}",
        parts[3]
    );
    // the mirrored copy really is mirrored: its short leg is on the right
    let m = imp
        .parts
        .iter()
        .find(|p| (p.geometry.bbox().min.x - 16.0).abs() < 1e-9)
        .unwrap();
    assert!(m.geometry.components()[0].contains_point(Point::new(19.5, 2.0)));
    assert!(!m.geometry.components()[0].contains_point(Point::new(16.5, 2.0)));
}

#[test]
fn binary_dxf_reads_like_ascii_and_splines_and_circles_flatten() {
    let mut d = Drawing::new();
    d.header.version = dxf::enums::AcadVersion::R2000;
    d.add_entity(Entity::new(EntityType::Circle(Circle::new(
        DPoint::new(0.0, 0.0, 0.0),
        10.0,
    ))));
    // a closed periodic-looking cubic spline through a square's control polygon
    let mut sp = Spline {
        degree_of_curve: 3,
        ..Default::default()
    };
    let ctrl = [
        (30.0, 0.0),
        (40.0, 0.0),
        (40.0, 10.0),
        (30.0, 10.0),
        (30.0, 0.0),
    ];
    for (x, y) in ctrl {
        sp.control_points.push(DPoint::new(x, y, 0.0));
    }
    sp.knot_values = vec![0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0];
    d.add_entity(Entity::new(EntityType::Spline(sp)));
    let ascii = save(&d);
    let mut binary = Vec::new();
    d.save_binary(&mut binary).unwrap();
    assert!(binary.starts_with(b"AutoCAD Binary DXF"));
    let opts = ImportOptions {
        use_all_parts_in_file: true,
        ..Default::default()
    };
    let a = import_dxf("a", &ascii, &opts).unwrap();
    let b = import_dxf("b", &binary, &opts).unwrap();
    assert_eq!(a.parts.len(), 2);
    for (pa, pb) in a.parts.iter().zip(&b.parts) {
        assert_eq!(pa.geometry, pb.geometry);
    }
    let circle = a
        .parts
        .iter()
        .find(|p| p.geometry.bbox().min.x < 0.0)
        .unwrap();
    let area = circle.geometry.area();
    assert!(
        (PI * 100.0..PI * 100.0 + 0.05 * 2.0 * PI * 10.0).contains(&area),
        "{area}"
    );
    let spline = a
        .parts
        .iter()
        .find(|p| p.geometry.bbox().min.x >= 29.0)
        .unwrap();
    assert!(
        spline.geometry.area() > 20.0 && spline.geometry.area() < 100.0,
        "{}",
        spline.geometry.area()
    );
}

#[test]
fn a_decompression_bomb_is_refused_not_expanded() {
    // one gzip member of 1 MiB of zeros, repeated: a few hundred KiB that would expand to
    // more than the most one geometry may take
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = gz.finish().unwrap();
    let members = (kerf::geometry::compression::MAX_DECODED >> 20) + 2;
    let bomb: Vec<u8> = member.repeat(members);
    assert!(bomb.len() < 2 << 20);
    let err = Compression::GZip.decode(&bomb).unwrap_err();
    assert!(err.contains("decompresses to more than"), "{err}");
}
