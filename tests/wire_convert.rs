//! Wire requests into engine problems: valid requests convert (and nest), bad ones give
//! field-level errors with the JSON path of the field and the reason.

use base64::Engine;
use kerf::nest2d::{nest, CancelHandle, Origin, SheetShape};
use kerf::wire::*;
use serde_json::{json, Value};
use std::io::Write;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}
fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

fn good() -> Value {
    json!({
        "Request": {
            "NestSettings": {"PartSpacing": 2, "MaxRunTimeSeconds": 5, "NestingOrigin": "TopLeft"},
            "GeometryDefinitionImportSettings": {"MeasurementUnitsOfImportGeometry": "Millimetres"},
            "Parts": [
                {"Identifier": "bracket", "Base64EncodedGeometryDefinition": b64(&gz(&data("part_1.dxf"))),
                 "GeometryDefinitionCompressionType": "GZip", "Quantity": 3, "AllowableRotation": "Rotate90"},
                {"Identifier": "disc", "GeometryDefinitionType": "Parametric",
                 "EncodedPartJson": b64(br#"{"Shape":"Circle","Diameter":40}"#), "Quantity": 2, "AllowableRotation": "None"},
                {"Identifier": "tri", "GeometryDefinitionType": "json",
                 "EncodedPartJson": b64(br#"{"Contours":[{"Vertices":[{"X":0,"Y":0},{"X":30,"Y":0},{"X":0,"Y":30}]}]}"#), "Quantity": 1}
            ],
            "Sheets": [{"Identifier": "S1", "RectangularXDimension": 300, "RectangularYDimension": 200, "Quantity": 2}]
        },
        "ResultsWebhookUri": "https://example.test/hook"
    })
}

fn convert(v: &Value) -> Result<Converted, Vec<FieldError>> {
    let req: DxfNestingRequest = parse_json(v.to_string().as_bytes()).map_err(|e| vec![e])?;
    to_problem(
        &req.request.unwrap_or_default(),
        GeometryKind::Dxf,
        "Request",
    )
}

#[test]
fn a_valid_request_converts_and_nests() {
    let c = convert(&good()).unwrap();
    let p = &c.problem;
    assert_eq!(p.parts.len(), 3);
    assert_eq!(
        (p.parts[0].id.as_str(), p.parts[0].quantity),
        ("bracket", 3)
    );
    assert_eq!(p.parts[0].rotations, vec![0.0, 90.0, 180.0, 270.0]);
    assert_eq!(p.parts[1].rotations, vec![0.0]);
    assert_eq!(
        p.parts[2].rotations,
        vec![0.0, 90.0, 180.0, 270.0],
        "Any with the default 90-degree step"
    );
    // conservative flattening: at least the true disc, at most 0.05 mm x perimeter more
    let (disc, true_area) = (p.parts[1].geometry.area(), std::f64::consts::PI * 400.0);
    assert!(
        disc >= true_area && disc <= true_area + 0.05 * std::f64::consts::PI * 40.0,
        "{disc}"
    );
    assert_eq!(p.settings.origin, Origin::TopLeft);
    assert_eq!(p.settings.part_spacing, 2.0);
    assert!(
        matches!(p.sheets[0].shape, SheetShape::Rectangle { width, height } if width == 300.0 && height == 200.0)
    );
    assert_eq!(p.sheets[0].quantity, Some(2));
    let mut problem = c.problem;
    problem.settings.max_iterations = Some(5);
    let r = nest(
        &problem,
        &kerf_kernels::CpuEvaluator,
        &CancelHandle::default(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(r.stats.parts_placed, 6);
}

#[test]
fn enum_values_are_lenient() {
    for (v, want) in [
        ("top_left", Origin::TopLeft),
        ("TOP-LEFT", Origin::TopLeft),
        ("top left", Origin::TopLeft),
        ("1", Origin::TopLeft),
        ("BottomRight", Origin::BottomRight),
    ] {
        let mut r = good();
        r["Request"]["NestSettings"]["NestingOrigin"] = json!(v);
        assert_eq!(convert(&r).unwrap().problem.settings.origin, want, "{v}");
    }
    let mut r = good();
    r["Request"]["Parts"][0]["AllowableRotation"] = json!("45");
    assert_eq!(convert(&r).unwrap().problem.parts[0].rotations.len(), 8);
    r["Request"]["Parts"][0]["AllowableRotation"] = json!("Any");
    r["Request"]["Parts"][0]["CustomRotationStepAngle"] = json!(120.0);
    assert_eq!(
        convert(&r).unwrap().problem.parts[0].rotations,
        vec![0.0, 120.0, 240.0]
    );
    // a nesting angle turns the fill; null and 0 are the plain fill
    r["Request"]["NestSettings"]["NestingAngleDegrees"] = json!(30.5);
    assert_eq!(
        convert(&r).unwrap().problem.settings.fill_angle.degrees(),
        30.5
    );
    r["Request"]["NestSettings"]["NestingAngleDegrees"] = json!(null);
    assert_eq!(
        convert(&r).unwrap().problem.settings.fill_angle.degrees(),
        0.0
    );
    // a tilt adds angles either side of each rotation (2.5-degree samples out to the tilt)
    r["Request"]["Parts"][0]["AllowableRotation"] = json!("None");
    r["Request"]["Parts"][0]["AllowableTilt"] = json!(5.0);
    assert_eq!(
        convert(&r).unwrap().problem.parts[0].rotations,
        vec![0.0, 357.5, 2.5, 355.0, 5.0]
    );
}

#[test]
fn bad_requests_name_the_field_and_the_reason() {
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            |r| {
                r["Request"]["Parts"][0]["Base64EncodedGeometryDefinition"] =
                    json!("***not base64***")
            },
            "Request.Parts[0].Base64EncodedGeometryDefinition",
            "not valid base64",
        ),
        (
            |r| r["Request"]["Parts"][0]["GeometryDefinitionCompressionType"] = json!("None"),
            "Request.Parts[0].Base64EncodedGeometryDefinition",
            "not a readable DXF",
        ),
        (
            |r| r["Request"]["Parts"][0]["AllowableTilt"] = json!(-2.0),
            "Request.Parts[0].AllowableTilt",
            "must be between 0 and 45 degrees",
        ),
        (
            |r| r["Request"]["Parts"][0]["AllowableTilt"] = json!(60.0),
            "Request.Parts[0].AllowableTilt",
            "for wider turns give a rotation step",
        ),
        (
            |r| r["Request"]["Parts"][0]["GeometryDefinitionCompressionType"] = json!("Rar"),
            "Request.Parts[0].GeometryDefinitionCompressionType",
            "allowed: None, GZip, Deflate, Zip",
        ),
        (
            |r| {
                r["Request"]["Parts"][0]["Base64EncodedGeometryDefinition"] =
                    json!(b64(&gz(&data("closed_loop_lines_arcs.dxf"))))
            },
            "Request.Parts[0].Base64EncodedGeometryDefinition",
            "self-crossing",
        ),
        (
            |r| r["Request"]["Parts"][0]["Base64EncodedGeometryDefinition"] = json!(null),
            "Request.Parts[0].Base64EncodedGeometryDefinition",
            "missing",
        ),
        (
            |r| r["Request"]["Parts"][0]["Quantity"] = json!(0),
            "Request.Parts[0].Quantity",
            "at least 1",
        ),
        (
            |r| r["Request"]["Parts"][1]["AllowableRotation"] = json!("Sideways"),
            "Request.Parts[1].AllowableRotation",
            "allowed: Any",
        ),
        (
            |r| r["Request"]["Parts"][1]["EncodedPartJson"] = json!(b64(br#"{"Shape":"Hexagon"}"#)),
            "Request.Parts[1].EncodedPartJson",
            "not a parametric shape",
        ),
        (
            |r| r["Request"]["Parts"][2]["GeometryDefinitionType"] = json!("STEP"),
            "Request.Parts[2].GeometryDefinitionType",
            "allowed: DXF, JSON, Parametric",
        ),
        (
            |r| r["Request"]["Parts"][0]["PartSpacingOverride"] = json!(-1),
            "Request.Parts[0].PartSpacingOverride",
            "at least 0",
        ),
        (
            |r| r["Request"]["Parts"] = json!([]),
            "Request.Parts",
            "at least one part",
        ),
        (
            |r| r["Request"]["Sheets"][0]["RectangularXDimension"] = json!(0),
            "Request.Sheets[0].RectangularXDimension",
            "positive size",
        ),
        (
            |r| r["Request"]["Sheets"][0]["Quantity"] = json!(-2),
            "Request.Sheets[0].Quantity",
            "0 (as many as needed)",
        ),
        (
            |r| r["Request"]["NestSettings"]["NestingOrigin"] = json!("Middle"),
            "Request.NestSettings.NestingOrigin",
            "allowed: BottomLeft, TopLeft, TopRight, BottomRight",
        ),
        (
            |r| r["Request"]["NestSettings"]["NestingAngleDegrees"] = json!(90),
            "Request.NestSettings.NestingAngleDegrees",
            "less than 90 degrees",
        ),
        (
            |r| r["Request"]["NestSettings"]["NestingAngleDegrees"] = json!(-15),
            "Request.NestSettings.NestingAngleDegrees",
            "at least 0",
        ),
        (
            |r| r["Request"]["CommonCutSettings"] = json!({"CommonCutMode": "Stripes"}),
            "Request.CommonCutSettings.CommonCutMode",
            "allowed: None, Pairs, Chains, Grid",
        ),
        (
            |r| r["Request"]["CommonCutSettings"] = json!({"CommonCutMode": "Grid", "CommonCuttingImportance": "High", "CommonCutGap": -0.5}),
            "Request.CommonCutSettings.CommonCutGap",
            "at least 0",
        ),
        (
            |r| r["Request"]["Parts"][0]["CommonCutMaxBlockSize"] = json!(-1),
            "Request.Parts[0].CommonCutMaxBlockSize",
            "0 (the importance decides) or more",
        ),
        (
            |r| r["Request"]["NestSettings"]["MaxRunTimeSeconds"] = json!(-5),
            "Request.NestSettings.MaxRunTimeSeconds",
            "between 0 and",
        ),
        (
            |r| r["Request"]["NestSettings"]["UtilisationStopTarget"] = json!(150),
            "Request.NestSettings.UtilisationStopTarget",
            "between 0 and 100",
        ),
        (
            |r| {
                r["Request"]["GeometryDefinitionImportSettings"]
                    ["MeasurementUnitsOfImportGeometry"] = json!("Furlongs")
            },
            "Request.GeometryDefinitionImportSettings.MeasurementUnitsOfImportGeometry",
            "allowed: FromFile",
        ),
        (
            |r| {
                r["Request"]["GeometryDefinitionImportSettings"]["CutLayers"] =
                    json!([{"ColourHex": "purple"}])
            },
            "Request.GeometryDefinitionImportSettings.CutLayers[0].ColourHex",
            "not a colour",
        ),
        (
            |r| r["Request"]["Parts"][0]["Quantity"] = json!("three"),
            "Request.Parts[0].Quantity",
            "invalid type",
        ),
        (
            |r| r["Request"]["Sheets"] = json!({"Identifier": "x"}),
            "Request.Sheets",
            "invalid type",
        ),
        (
            |r| r["Request"]["Parts"][2]["Identifier"] = json!("bracket"),
            "Request.Parts[2].Identifier",
            "already the identifier of a part from Parts[0]",
        ),
        (
            |r| {
                let s = r["Request"]["Sheets"][0].clone();
                r["Request"]["Sheets"].as_array_mut().unwrap().push(s)
            },
            "Request.Sheets[1].Identifier",
            "already the identifier of Sheets[0]",
        ),
    ];
    for (edit, field, reason) in cases {
        let mut r = good();
        edit(&mut r);
        let errs = convert(&r).expect_err(field);
        assert!(
            errs.iter()
                .any(|e| e.field == field && e.message.contains(reason)),
            "expected {field}: ...{reason}...; got {errs:?}"
        );
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let mut r = good();
    r["Request"]["Parts"][0]["Quantity"] = json!(-1);
    r["Request"]["Parts"][2]["EncodedPartJson"] = json!("%%%");
    r["Request"]["NestSettings"]["NestingDirection"] = json!("Z");
    let errs = convert(&r).unwrap_err();
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    for f in [
        "Request.Parts[0].Quantity",
        "Request.Parts[2].EncodedPartJson",
        "Request.NestSettings.NestingDirection",
    ] {
        assert!(fields.contains(&f), "{f} missing from {fields:?}");
    }
}

#[test]
fn malformed_json_names_the_place() {
    let e = parse_json::<DxfNestingRequest>(br#"{"Request": {"Parts": [ }"#).unwrap_err();
    assert!(e.message.contains("line 1"), "{e}");
    let e =
        parse_json::<DxfNestingRequest>(br#"{"AutomaticallyStartNesting": "yes"}"#).unwrap_err();
    assert_eq!(e.field, "AutomaticallyStartNesting");
}

#[test]
fn irregular_sheet_from_dxf() {
    let mut r = good();
    r["Request"]["Sheets"] = json!([{"Identifier": "frame", "Base64EncodedGeometryDefinition": b64(&data("frame_with_hole_r12.dxf")), "Quantity": 1}]);
    let c = convert(&r).unwrap();
    match &c.problem.sheets[0].shape {
        SheetShape::Outline(s) => {
            assert_eq!(s.holes().len(), 1, "the hole is a defect");
            assert!((s.area() - 7200.0).abs() < 1e-6);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_webhook_must_be_absolute_https_unless_results_stream_over_the_hub() {
    let submit = |v: &Value| {
        to_submission(
            &parse_json::<DxfNestingRequest>(v.to_string().as_bytes()).unwrap(),
            GeometryKind::Dxf,
        )
    };
    assert_eq!(
        submit(&good()).unwrap().webhook.unwrap().as_str(),
        "https://example.test/hook"
    );
    for (uri, why) in [
        (json!("http://example.test/hook"), "https"),
        (json!("/hook"), "absolute"),
        (json!(null), "missing"),
    ] {
        let mut r = good();
        r["ResultsWebhookUri"] = uri;
        let errs = submit(&r).unwrap_err();
        assert!(
            errs.iter()
                .any(|e| e.field == "ResultsWebhookUri" && e.message.contains(why)),
            "{errs:?}"
        );
    }
    let mut r = good();
    r["ResultsWebhookUri"] = json!(null);
    r["AutomaticallyStartNesting"] = json!(false);
    let s = submit(&r).unwrap();
    assert!(!s.start_now && s.webhook.is_none());
    let errs = submit(&json!({"ResultsWebhookUri": "https://example.test/h"})).unwrap_err();
    assert!(errs.iter().any(|e| e.field == "Request"), "{errs:?}");
}

#[test]
fn a_request_for_too_many_instances_is_refused_before_it_is_nested() {
    let mut v = good();
    v["Request"]["Parts"][0]["Quantity"] = json!(i32::MAX);
    let errors = convert(&v).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| e.field == "Request.Parts" && e.message.contains("at most 100000")),
        "{errors:?}"
    );
}

#[test]
fn remnant_and_layer_settings_are_parsed_leniently_and_named_when_wrong() {
    use kerf::export::remnants::RemnantKind;
    let o = kerf::wire::exports::remnant_options(
        Some(
            &json!({"RemnantGenerationType": "true-shape", "MinimumDimensionMM": 25,
                     "RemnantsLayerName": " OFF/CUTS\n"}),
        ),
        "R",
    )
    .unwrap();
    assert_eq!(o.kind, RemnantKind::TrueShape);
    assert_eq!(o.min_dimension, 25.0);
    assert_eq!(o.layer, "OFF_CUTS", "a DXF-safe layer name");
    let defaults = kerf::wire::exports::remnant_options(None, "R").unwrap();
    assert_eq!(defaults.kind, RemnantKind::CleanCut);
    assert_eq!(defaults.layer, "REMNANTS");
    let errs = kerf::wire::exports::remnant_options(
        Some(&json!({"RemnantGenerationType": "Round", "MinimumDimensionMM": -2})),
        "R",
    )
    .unwrap_err();
    assert!(
        errs.iter().any(|e| e.field == "R.RemnantGenerationType"),
        "{errs:?}"
    );
    assert!(
        errs.iter().any(|e| e.field == "R.MinimumDimensionMM"),
        "{errs:?}"
    );
    let dxf = kerf::wire::exports::dxf_options(
        Some(&json!({"ExportAllPartsOnSingleLayer": true, "AllPartsSingleLayerName": "a:b"})),
        "D",
    )
    .unwrap();
    assert_eq!(dxf.parts_layer.as_deref(), Some("a_b"));
}

/// `good()` with its disc and triangle moved into an assembly of `kits` kits (two discs and a
/// triangle each).
fn with_assembly(kits: i64) -> Value {
    let mut r = good();
    let parts = r["Request"]["Parts"].as_array_mut().unwrap();
    let tri = parts.pop().unwrap();
    let mut disc = parts.pop().unwrap();
    disc["Priority"] = json!(3);
    r["Request"]["Assemblies"] = json!([{"Parts": [disc, tri], "Quantity": kits}]);
    r
}

#[test]
fn assemblies_convert_to_kits_beside_loose_parts() {
    let c = convert(&with_assembly(4)).unwrap();
    let p = &c.problem;
    let ids: Vec<&str> = p.parts.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["bracket", "disc", "tri"]);
    assert_eq!(p.parts[0].kit, None);
    // each part's Quantity is per kit; the kit nests at its parts' highest priority
    assert_eq!(
        (p.parts[1].quantity, p.parts[1].kit, p.parts[1].priority),
        (
            8,
            Some(kerf::nest2d::KitRole {
                assembly: 0,
                per_kit: 2
            }),
            3
        )
    );
    assert_eq!(
        (p.parts[2].quantity, p.parts[2].kit, p.parts[2].priority),
        (
            4,
            Some(kerf::nest2d::KitRole {
                assembly: 0,
                per_kit: 1
            }),
            3
        )
    );
    // assemblies alone are a job too
    let mut alone = with_assembly(1);
    alone["Request"]["Parts"] = json!([]);
    assert_eq!(convert(&alone).unwrap().problem.parts.len(), 2);
}

#[test]
fn bad_assemblies_name_the_field_and_the_reason() {
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            |r| r["Request"]["Assemblies"][0]["Quantity"] = json!(0),
            "Request.Assemblies[0].Quantity",
            "at least 1 kit",
        ),
        (
            |r| r["Request"]["Assemblies"][0]["Parts"] = json!([]),
            "Request.Assemblies[0].Parts",
            "at least one part",
        ),
        (
            |r| r["Request"]["Assemblies"][0]["Parts"][1]["FillerPartQuantity"] = json!(2),
            "Request.Assemblies[0].Parts[1].FillerPartQuantity",
            "no filler copies",
        ),
        (
            |r| r["Request"]["Assemblies"][0]["Parts"][0]["Identifier"] = json!("bracket"),
            "Request.Assemblies[0].Parts[0].Identifier",
            "already the identifier of a part from Parts[0]",
        ),
        (
            |r| r["Request"]["Assemblies"][0]["Parts"][1]["Quantity"] = json!(0),
            "Request.Assemblies[0].Parts[1].Quantity",
            "at least 1",
        ),
    ];
    for (edit, field, reason) in cases {
        let mut r = with_assembly(2);
        edit(&mut r);
        let errors = convert(&r).unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.field == field && e.message.contains(reason)),
            "{field}: {errors:?}"
        );
    }
}

#[test]
fn common_cut_settings_convert_to_blocks_only_when_mode_and_importance_ask() {
    use kerf::nest2d::{BlockMode, CutImportance, CutSafety};
    let mut r = good();
    r["Request"]["Parts"][0]["AllowCommonCutIfEnabled"] = json!(true);
    r["Request"]["Parts"][0]["CommonCutMaxBlockSize"] = json!(4);
    r["Request"]["CommonCutSettings"] = json!({
        "CommonCutMode": "chains", "CommonCuttingImportance": "Medium", "CommonCutSafety": "Aggressive",
        "CommonCutGap": 0.4, "MinLengthOfCommonCut": 10, "CommonCutPartsMaximumDimensionX": 500,
        "OnlyPairs": true, "CommonCutLeadinCheck": "Disabled"
    });
    let p = convert(&r).unwrap().problem;
    let cc = p
        .settings
        .common_cutting
        .clone()
        .expect("common cutting on");
    assert_eq!(
        (cc.mode, cc.importance, cc.safety),
        (
            BlockMode::Chains,
            CutImportance::Medium,
            CutSafety::Aggressive
        )
    );
    assert_eq!(
        (cc.gap, cc.min_length, cc.max_part_x, cc.max_part_y),
        (0.4, 10.0, Some(500.0), None)
    );
    assert_eq!(cc.block_cap(4), 2, "OnlyPairs caps every block at two");
    assert_eq!(p.parts[0].common_cut, Some(4));
    assert_eq!(
        p.parts[1].common_cut, None,
        "AllowCommonCutIfEnabled is off by default"
    );
    // an importance of None (the default) leaves common cutting off, whatever the mode
    r["Request"]["CommonCutSettings"]["CommonCuttingImportance"] = json!("None");
    assert!(convert(&r)
        .unwrap()
        .problem
        .settings
        .common_cutting
        .is_none());
}
