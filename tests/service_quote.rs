//! Quote nesting through the real service: `kerf serve` on a temporary SQLite file, real DXF
//! parts from other people's CAD programs, the real HTTPS webhook receiver. Every sub-nest's
//! figures are checked independently: the cut length against the drawing's own entities read
//! by the `dxf` crate (lines, arcs as arcs, circles), parts per sheet against the area bound,
//! sheets required against the quantity, the `...InUnits` figures against the unit factors.

mod support;

use base64::Engine;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

const WAIT: Duration = Duration::from_secs(180);

/// The length of every LINE, ARC and CIRCLE of a drawing (its cut length when, as in these
/// single-part files, every entity is a piece of an outline or a hole), and its extents.
fn drawn(file: &str) -> (f64, (f64, f64)) {
    let d = dxf::Drawing::load_file(data(file)).expect("the dxf crate reads it");
    let mut length = 0.0;
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    let mut see = |x: f64, y: f64| {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    };
    for e in d.entities() {
        match &e.specific {
            dxf::entities::EntityType::Line(l) => {
                length += (l.p2.x - l.p1.x).hypot(l.p2.y - l.p1.y);
                see(l.p1.x, l.p1.y);
                see(l.p2.x, l.p2.y);
            }
            dxf::entities::EntityType::Arc(a) => {
                let sweep = (a.end_angle - a.start_angle).rem_euclid(360.0);
                length += a.radius * sweep.to_radians();
                // extents: the end points and every axis crossing inside the sweep
                let mut at = |deg: f64| {
                    let t = deg.to_radians();
                    see(
                        a.center.x + a.radius * t.cos(),
                        a.center.y + a.radius * t.sin(),
                    );
                };
                at(a.start_angle);
                at(a.start_angle + sweep);
                for k in 0..8 {
                    let axis = 90.0 * k as f64;
                    if (axis - a.start_angle).rem_euclid(360.0) <= sweep {
                        at(axis);
                    }
                }
            }
            dxf::entities::EntityType::Circle(c) => {
                length += std::f64::consts::TAU * c.radius;
                see(c.center.x - c.radius, c.center.y - c.radius);
                see(c.center.x + c.radius, c.center.y + c.radius);
            }
            other => panic!("{file}: an entity this check does not measure: {other:?}"),
        }
    }
    (length, (hi.0 - lo.0, hi.1 - lo.1))
}

fn part(file: &str, quantity: u32) -> Value {
    json!({
        "Identifier": file.trim_end_matches(".dxf"),
        "FileNameWithExtension": file,
        "Base64EncodedGeometryDefinition":
            base64::engine::general_purpose::STANDARD.encode(std::fs::read(data(file)).unwrap()),
        "Quantity": quantity,
        "AllowableRotation": "Rotate90",
    })
}

fn quote_request(parts: Vec<Value>, sheet: (f64, f64), hook: &str, seconds: f64) -> Value {
    json!({
        "Request": {
            "GeometryDefinitionImportSettings": {"MeasurementUnitsOfImportGeometry": "Millimetres"},
            "Parts": parts,
            "Sheets": [{"Identifier": "S1", "RectangularXDimension": sheet.0, "RectangularYDimension": sheet.1}],
            "NestSettings": {"PartSpacing": 2.0, "MaxRunTimeSeconds": seconds, "MaximumCPUCount": 1},
        },
        "ResultsWebhookUri": hook,
        "ResponseUnits": "Inches",
    })
}

/// Waits for the quote's Complete delivery; returns every delivery of the quote, in order.
async fn wait_complete(receiver: &Receiver, id: &str) -> Vec<Value> {
    let end = Instant::now() + WAIT;
    loop {
        let got: Vec<Value> = receiver
            .for_job(id)
            .into_iter()
            .filter(|d| d.answered == 200)
            .map(|d| d.body)
            .collect();
        if got.iter().any(|b| b["Status"] == "Complete") {
            return got;
        }
        assert!(Instant::now() < end, "no Complete for {id}: {got:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for the InterimResult (or Error) of sub-nest `index`.
async fn wait_sub_nest(receiver: &Receiver, id: &str, index: u64) -> Value {
    let end = Instant::now() + WAIT;
    loop {
        if let Some(b) = receiver
            .for_job(id)
            .into_iter()
            .map(|d| d.body)
            .find(|b| b["NestIndex"] == index)
        {
            return b;
        }
        assert!(Instant::now() < end, "no sub-nest {index} for {id}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-9)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quote_prices_each_part_alone_and_its_export_carries_the_layouts() {
    let dir = temp_dir("quote");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = format!("{}/quote", receiver.url);
    let sheet = (1000.0, 500.0);

    // three real parts; one large quantity (several sheets), one small, one a frame
    let files = [
        ("part_1.dxf", 60),
        ("part_6.dxf", 7),
        ("frame_with_hole_r12.dxf", 40),
    ];
    let req = quote_request(
        files.iter().map(|(f, q)| part(f, *q)).collect(),
        sheet,
        &hook,
        1.0,
    );
    let id = api.submit("/v1/nesting/quotenesting", &req).await;
    let got = wait_complete(&receiver, &id).await;
    let interims: Vec<&Value> = got
        .iter()
        .filter(|b| b["Status"] == "InterimResult")
        .collect();
    assert_eq!(interims.len(), 3, "{got:#?}");
    assert_eq!(
        got.last().unwrap()["Status"],
        "Complete",
        "Complete comes last"
    );
    assert_eq!(got.last().unwrap()["TotalNests"], 3);
    for (k, b) in interims.iter().enumerate() {
        assert_eq!(b["NestIndex"], k as u64, "sub-nests run in order");
        assert_eq!(b["TotalNests"], 3);
        let r = &b["Result"];
        let (file, quantity) = files[k];
        assert_eq!(r["PartIdentifier"], file.trim_end_matches(".dxf"));
        assert_eq!(r["SheetIdentifier"], "S1");
        assert!(
            r.get("Placements").is_none(),
            "the webhook carries figures, the export layouts"
        );
        let f = |name: &str| r[name].as_f64().unwrap_or_else(|| panic!("{name} in {r}"));
        // the cut length is the drawing's: arcs as arcs, not their flattening
        let (length, (bx, by)) = drawn(file);
        assert!(
            close(f("CutLength"), length, 1e-6),
            "{file}: CutLength {} against the drawing's {length}",
            f("CutLength")
        );
        assert!(
            close(f("BoundingBoxX"), bx, 1e-3) && close(f("BoundingBoxY"), by, 1e-3),
            "{file}: bounding box {} x {} against the drawing's {bx} x {by}",
            f("BoundingBoxX"),
            f("BoundingBoxY")
        );
        // parts per sheet: never above the area bound, nor the quantity
        let part_area = f("PartArea");
        assert!(part_area > 0.0 && part_area < bx * by + 1e-6);
        let area_bound = ((sheet.0 * sheet.1) / part_area).floor() as u64;
        let per_sheet = r["PartsPerSheet"].as_u64().unwrap();
        assert!(
            per_sheet >= 1 && per_sheet <= area_bound.min(quantity as u64),
            "{file}: {per_sheet} per sheet, bound {area_bound}"
        );
        let sheets = r["SheetsRequired"].as_u64().unwrap();
        assert_eq!(sheets, (quantity as u64).div_ceil(per_sheet), "{file}");
        let last = r["LastSheetPartCount"].as_u64().unwrap();
        assert_eq!(
            (sheets - 1) * per_sheet + last,
            quantity as u64,
            "{file}: every copy on a sheet"
        );
        // the material: full sheets whole, the last up to its used length
        let used = f("LastSheetUsedLength");
        let material = (sheets - 1) as f64 * sheet.0 * sheet.1 + used * sheet.1;
        assert!(
            close(f("MaterialAreaPerPart"), material / quantity as f64, 1e-9),
            "{file}"
        );
        assert!(
            close(
                f("Utilisation"),
                100.0 * quantity as f64 * part_area / material,
                1e-9
            ),
            "{file}"
        );
        // the same figures in the ResponseUnits (inches)
        assert_eq!(r["ResponseUnits"], "Inches");
        assert_eq!(r["Units"], "mm");
        assert!(close(f("CutLengthInUnits"), f("CutLength") / 25.4, 1e-12));
        assert!(close(f("BoundingBoxXInUnits"), bx / 25.4, 1e-3));
        assert!(close(f("PartAreaInUnits"), part_area / 645.16, 1e-12));
        assert!(close(
            f("MaterialAreaPerPartInUnits"),
            f("MaterialAreaPerPart") / 645.16,
            1e-12
        ));
    }
    // the frame: 200 x 100 less its 160 x 80 hole; its cut length both rings
    let frame = &interims[2]["Result"];
    assert!(close(frame["PartArea"].as_f64().unwrap(), 7200.0, 1e-9));
    assert!(close(frame["CutLength"].as_f64().unwrap(), 1080.0, 1e-9));
    // 7 copies of part_6 share one sheet
    assert_eq!(interims[1]["Result"]["SheetsRequired"], 1);
    assert_eq!(interims[1]["Result"]["PartsPerSheet"], 7);

    // a quote has no standard result: the result call says where its sub-nests are
    let a = api
        .post_json("/v1/nesting/result/", &json!({"RequestId": id}))
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
    assert!(a.text.contains("exportquotenest"), "{}", a.text);

    // the quote export: every sub-nest with its layouts
    let export_hook = format!("{}/quote-export", receiver.url);
    let ask = |hook: String| {
        api.send(api.get(&format!(
            "/v1/nesting/exportquotenest?RequestId={id}&WebHookUri={hook}"
        )))
    };
    let a = ask(export_hook.clone()).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Success"], true);
    let delivered = receiver.wait_path("/quote-export", WAIT).await;
    let body = delivered.body;
    // what a receiver sees (cargo test -- --nocapture shows it)
    println!("InterimResult: {}", interims[0]);
    println!("Complete: {}", got.last().unwrap());
    println!("quote export: {}", delivered.raw);
    assert_eq!(body["RequestId"], id);
    let nests = body["Nests"].as_array().unwrap();
    assert_eq!(nests.len(), 3);
    for (k, n) in nests.iter().enumerate() {
        let figures = &interims[k]["Result"];
        assert_eq!(n["NestIndex"], k as u64);
        assert_eq!(n["PartIdentifier"], figures["PartIdentifier"]);
        assert_eq!(n["PartsPerSheet"], figures["PartsPerSheet"]);
        let placements = n["Placements"].as_array().unwrap();
        assert_eq!(
            placements.len() as u64,
            n["PartsPerSheet"].as_u64().unwrap()
        );
        let last = n["LastSheetPlacements"].as_array().unwrap();
        assert_eq!(last.len() as u64, n["LastSheetPartCount"].as_u64().unwrap());
        // the last sheet's copies are copies of the full sheet's (a subset of a valid layout)
        for p in last {
            assert!(
                placements.iter().any(|q| q["X"] == p["X"]
                    && q["Y"] == p["Y"]
                    && q["Rotation"] == p["Rotation"]),
                "{p}"
            );
        }
        for p in placements {
            assert_eq!(p["PartIdentifier"], n["PartIdentifier"]);
            let (x, y) = (p["X"].as_f64().unwrap(), p["Y"].as_f64().unwrap());
            assert!(x.is_finite() && y.is_finite());
        }
    }
    // once per quote
    let again = ask(export_hook.clone()).await;
    assert_eq!(again.status, 409, "{}", again.text);
    // refusals at the call
    let plain = ask("http://example.com/hook".into()).await;
    assert_eq!(plain.status, 400, "{}", plain.text);
    assert!(plain.text.contains("WebHookUri"), "{}", plain.text);
    let unknown = api
        .send(api.get(&format!(
            "/v1/nesting/exportquotenest?RequestId=no-such-quote&WebHookUri={export_hook}"
        )))
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.text);
    let missing = api.send(api.get("/v1/nesting/exportquotenest")).await;
    assert_eq!(missing.status, 400, "{}", missing.text);
    assert!(
        missing.text.contains("RequestId") && missing.text.contains("WebHookUri"),
        "{}",
        missing.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_ends_the_running_sub_nest_and_the_next_one_runs_in_full() {
    let dir = temp_dir("quote-continue");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = format!("{}/quote", receiver.url);
    // each sub-nest may run a minute: only continue ends them sooner
    let req = quote_request(
        vec![
            part("part_1.dxf", 30),
            part("part_2.dxf", 30),
            part("part_3.dxf", 30),
        ],
        (1000.0, 500.0),
        &hook,
        60.0,
    );
    let id = api.submit("/v1/nesting/quotenesting", &req).await;
    api.wait_status(&id, "Running", WAIT).await;
    // an unfinished quote has no export yet
    let early = api
        .send(api.get(&format!(
            "/v1/nesting/exportquotenest?RequestId={id}&WebHookUri={}/x",
            receiver.url
        )))
        .await;
    assert_eq!(early.status, 404, "{}", early.text);
    assert!(early.text.contains("has not completed"), "{}", early.text);

    let started = Instant::now();
    let stop_body = json!({"RequestId": id});
    let go_on = || api.post_json("/v1/nesting/continue", &stop_body);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let a = go_on().await;
    assert_eq!(a.status, 200, "{}", a.text);
    let first = wait_sub_nest(&receiver, &id, 0).await;
    assert_eq!(first["Status"], "InterimResult", "{first}");
    assert!(first["Result"]["PartsPerSheet"].as_u64().unwrap() >= 1);
    // the stop was the first sub-nest's: the second one keeps running
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        receiver
            .for_job(&id)
            .iter()
            .all(|d| d.body["NestIndex"] != 1),
        "the second sub-nest ended without a stop of its own"
    );
    assert_eq!(api.status(&id).await.body["Status"], "Running");
    let a = go_on().await;
    assert_eq!(a.status, 200, "{}", a.text);
    let second = wait_sub_nest(&receiver, &id, 1).await;
    assert!(
        second["Result"]["ElapsedSeconds"].as_f64().unwrap() >= 2.5,
        "{second}"
    );
    let a = go_on().await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = wait_complete(&receiver, &id).await;
    assert_eq!(
        got.iter()
            .filter(|b| b["Status"] == "InterimResult")
            .count(),
        3
    );
    // each stopped sub-nest ends within its finishing steps' reserve (3 s each for the slide and
    // the fillers): three stops took 12.7 s alone in a debug build (the test binary, four tests
    // at once, 15.9 s in CI), and 55 to 73 s when the slide after a stop still ran to the time
    // limit
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "three stops took {:?}",
        started.elapsed()
    );
    // a finished quote cannot be stopped
    let a = go_on().await;
    assert_eq!(a.status, 409, "{}", a.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quote_errors_name_the_field_and_a_part_that_fits_nowhere_does_not_stop_the_quote() {
    let dir = temp_dir("quote-errors");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = format!("{}/quote", receiver.url);

    // validation as the standard submission's, plus ResponseUnits
    let mut bad = quote_request(vec![part("part_1.dxf", 2)], (1000.0, 500.0), &hook, 1.0);
    bad["ResponseUnits"] = json!("Furlongs");
    bad["Request"]["Sheets"] = json!([]);
    bad["ResultsWebhookUri"] = json!("http://example.com/not-https");
    // a quote prices the quantity: fillers alone are not a quantity
    bad["Request"]["Parts"][0]["Quantity"] = json!(0);
    bad["Request"]["Parts"][0]["FillerPartQuantity"] = json!(3);
    let a = api.post_json("/v1/nesting/quotenesting", &bad).await;
    assert_eq!(a.status, 400, "{}", a.text);
    let fields: Vec<&str> = a.body["Errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["FieldName"].as_str().unwrap())
        .collect();
    for f in [
        "ResponseUnits",
        "Request.Sheets",
        "ResultsWebhookUri",
        "Request.Parts[0].Quantity",
    ] {
        assert!(fields.contains(&f), "{f} not named in {}", a.text);
    }
    assert_eq!(a.body["RequestId"], "", "{}", a.text);
    let a = api
        .send(
            api.post("/v1/nesting/geometryquotenesting")
                .body("{not json")
                .header("Content-Type", "application/json"),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    // a held quote still needs its webhook: its sub-nests go nowhere else
    let mut held = quote_request(vec![part("part_1.dxf", 2)], (1000.0, 500.0), &hook, 1.0);
    held["AutomaticallyStartNesting"] = json!(false);
    held.as_object_mut().unwrap().remove("ResultsWebhookUri");
    let a = api.post_json("/v1/nesting/quotenesting", &held).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(
        a.body["Errors"][0]["FieldName"], "ResultsWebhookUri",
        "{}",
        a.text
    );

    // JSON contours: a 100 x 50 plate with a hole of radius 10 drawn by bulges; its cut
    // length is exact (arcs as arcs), and a part larger than the sheet is an Error of its own
    let plate = json!({"Contours": [
        {"Vertices": [{"X": 0, "Y": 0}, {"X": 100, "Y": 0}, {"X": 100, "Y": 50}, {"X": 0, "Y": 50}]},
        {"Vertices": [{"X": 40, "Y": 25, "Bulge": 1.0}, {"X": 60, "Y": 25, "Bulge": 1.0}]},
    ], "Units": "mm"});
    let huge = json!({"Contours": [
        {"Vertices": [{"X": 0, "Y": 0}, {"X": 3000, "Y": 0}, {"X": 3000, "Y": 3000}, {"X": 0, "Y": 3000}]},
    ], "Units": "mm"});
    let encode = |v: &Value| base64::engine::general_purpose::STANDARD.encode(v.to_string());
    let req = json!({
        "Request": {
            "Parts": [
                {"Identifier": "huge", "EncodedPartJson": encode(&huge), "Quantity": 2},
                {"Identifier": "plate", "EncodedPartJson": encode(&plate), "Quantity": 12, "AllowableRotation": "Rotate90"},
            ],
            "Sheets": [{"Identifier": "S1", "RectangularXDimension": 1000.0, "RectangularYDimension": 500.0}],
            "NestSettings": {"MaxRunTimeSeconds": 1.0, "MaximumCPUCount": 1},
        },
        "ResultsWebhookUri": hook,
        "ResponseUnits": "cm",
    });
    let id = api.submit("/v1/nesting/geometryquotenesting", &req).await;
    let got = wait_complete(&receiver, &id).await;
    let error = got
        .iter()
        .find(|b| b["Status"] == "Error")
        .expect("an Error payload");
    assert_eq!(error["NestIndex"], 0);
    assert_eq!(error["RequestId"], id);
    assert_eq!(error["ErrorCode"], "PartDoesNotFit");
    assert!(
        error["ErrorReport"].as_str().unwrap().contains("huge"),
        "{error}"
    );
    let plate = got
        .iter()
        .find(|b| b["Status"] == "InterimResult")
        .expect("the plate is priced");
    assert_eq!(plate["NestIndex"], 1);
    let r = &plate["Result"];
    let cut = 300.0 + std::f64::consts::TAU * 10.0;
    assert!(close(r["CutLength"].as_f64().unwrap(), cut, 1e-9), "{r}");
    assert!(
        close(r["CutLengthInUnits"].as_f64().unwrap(), cut / 10.0, 1e-9),
        "{r}"
    );
    assert_eq!(r["ResponseUnits"], "Centimetres");
    let area = 5000.0 - std::f64::consts::PI * 100.0;
    assert!(close(r["PartArea"].as_f64().unwrap(), area, 1e-3), "{r}");
    assert_eq!(r["SheetsRequired"], 1);
    assert_eq!(r["PartsPerSheet"], 12);
    assert_eq!(got.last().unwrap()["Status"], "Complete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quote_killed_mid_way_resumes_after_the_sub_nests_it_stored() {
    let dir = temp_dir("quote-resume");
    let receiver = Receiver::start(&dir).await;
    let mut server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let hook = format!("{}/quote", receiver.url);
    let req = quote_request(
        vec![
            part("part_1.dxf", 20),
            part("part_2.dxf", 20),
            part("part_3.dxf", 20),
        ],
        (1000.0, 500.0),
        &hook,
        3.0,
    );
    let id = server
        .client(&key)
        .submit("/v1/nesting/quotenesting", &req)
        .await;
    // the first sub-nest is stored and delivered, then the process dies mid-quote
    wait_sub_nest(&receiver, &id, 0).await;
    server.kill();
    server.restart();
    let got = wait_complete(&receiver, &id).await;
    // every sub-nest delivered; one delivered twice (at least once) is the same stored result,
    // never priced again
    for index in 0..3u64 {
        let bodies: Vec<&Value> = got.iter().filter(|b| b["NestIndex"] == index).collect();
        assert!(!bodies.is_empty(), "sub-nest {index} missing: {got:#?}");
        assert!(
            bodies.iter().all(|b| *b == bodies[0]),
            "sub-nest {index} priced twice: {bodies:#?}"
        );
    }
    let api = server.client(&key);
    assert_eq!(api.status(&id).await.body["Status"], "Completed");
}
