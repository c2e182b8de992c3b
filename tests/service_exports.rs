//! Renders and exports through the real service: `kerf serve` on a temporary SQLite file, real DXF parts,
//! the real HTTPS webhook receiver, and GET /v1/nesting/render/ decoded as a user would (the
//! PNG by the `png` crate, the SVG by usvg).

mod support;

use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;
use support::*;

const FINAL_WAIT: Duration = Duration::from_secs(120);

/// The bytes of a base64 string field.
fn b64(field: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(field.as_str().expect("a base64 string"))
        .expect("base64")
}

/// A DXF read back by the `dxf` crate.
fn load_dxf(bytes: &[u8]) -> dxf::Drawing {
    dxf::Drawing::load(&mut std::io::Cursor::new(bytes)).expect("the dxf crate reads it")
}

/// The rendering of a RenderResponse.
fn decode(v: &Value) -> Vec<u8> {
    b64(&v["Base64EncodedRendering"])
}

/// Width, height and RGBA pixels of a PNG.
fn png_pixels(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renders_follow_the_render_settings_and_refusals_name_the_field() {
    let dir = temp_dir("render");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = format!("{}/render", receiver.url);

    // a PNG of a requested size, one fill colour for every part, labels by identifier
    let mut png_req = dxf_request(
        &[("part_1.dxf", 4), ("part_6.dxf", 3)],
        (500.0, 300.0),
        Some(&hook),
        2.0,
        false,
    );
    png_req["Request"]["RenderSettings"] = json!({
        "RenderFormat": "Png", "xDimension": 640, "yDimension": 480,
        "BackColorARGB": "#FFFFFFFF", "OutlineLineColorARGB": "#FF000000",
        "PartFillColorARGB": "#FF3366CC", "AutomaticallyChoosePartFillColor": false,
    });
    png_req["Request"]["ReportSourceSettings"] = json!({"RenderPartLabelMode": "ID"});
    let png_id = api.submit("/v1/nesting", &png_req).await;
    // an SVG with automatic colours and no labels
    let mut svg_req = dxf_request(
        &[("part_1.dxf", 3)],
        (400.0, 300.0),
        Some(&hook),
        2.0,
        false,
    );
    svg_req["Request"]["RenderSettings"] =
        json!({"RenderFormat": "svg", "AutomaticallyChoosePartFillColor": true});
    svg_req["Request"]["ReportSourceSettings"] = json!({"RenderPartLabelMode": "None"});
    // an identifier with characters XML does not allow, and ones it must escape
    svg_req["Request"]["Sheets"][0]["Identifier"] = json!("S\u{1}<1>&\"");
    let svg_id = api.submit("/v1/nesting", &svg_req).await;

    // before it has a result: 404 naming the state
    let early = api
        .send(api.get(&format!("/v1/nesting/render/?RequestId={png_id}")))
        .await;
    if early.status != 200 {
        assert_eq!(early.status, 404, "{}", early.text);
        assert!(early.text.contains("has no result yet"), "{}", early.text);
    }

    let done = receiver.wait_final(&png_id, FINAL_WAIT).await;
    let result_id = done.last().unwrap().body["Status"]["ResultIdentity"]
        .as_str()
        .unwrap()
        .to_string();
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/render/?RequestId={png_id}&ResultIdentity={result_id}"
        )))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["RenderFormat"], "png");
    assert_eq!(a.body["ResultIdentity"], result_id.as_str());
    assert_eq!(a.body["xDimension"], "640");
    assert_eq!(a.body["yDimension"], "480");
    let (w, h, rgba) = png_pixels(&decode(&a.body));
    assert_eq!((w, h), (640, 480));
    // the parts are drawn in the colour asked for, on the background asked for
    let count = |rgb: [u8; 3]| rgba.chunks_exact(4).filter(|p| p[..3] == rgb).count();
    let fill = count([0x33, 0x66, 0xCC]);
    assert!(fill > 2_000, "{fill} pixels of the part fill colour");
    assert!(count([255, 255, 255]) > 2_000, "the background is white");

    // POST /v1/nesting/result/ carries the renderings too (per ReportSourceSettings: no
    // render blocks given here, so PNG nests and 240-pixel part previews)
    let r = api
        .post_json(
            "/v1/nesting/result/",
            &json!({"RequestId": png_id, "ResultIdentity": result_id}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let layouts = done.last().unwrap().body["Status"]["NestedSheetsInfo"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(r.body["Nests"].as_array().unwrap().len(), layouts);
    assert_eq!(r.body["Parts"].as_array().unwrap().len(), 2);
    for nest in r.body["Nests"].as_array().unwrap() {
        assert_eq!(nest["RenderFormat"], "png");
        assert!(nest["Base64EncodedRendering"]
            .as_str()
            .is_some_and(|b| !b.is_empty()));
    }
    for part in r.body["Parts"].as_array().unwrap() {
        let bytes = b64(&part["Base64EncodedPreview"]);
        assert_eq!(png_pixels(&bytes).0, 240);
    }
    assert_eq!(r.body["Status"]["ResultIdentity"], result_id.as_str());

    // the ReportSource export, queued and delivered to its webhook: the same report and
    // renderings (ReportSourceResponse, without the Status of POST /v1/nesting/result/)
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/export?RequestId={png_id}&ResultIdentity={result_id}&ResponseType=ReportSource&WebHookUri={}/x-report",
            receiver.url
        )))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-report", FINAL_WAIT).await.body;
    assert_eq!(got["ResultIdentity"], result_id.as_str());
    assert_eq!(got["Summary"], r.body["Summary"]);
    assert_eq!(
        got["Nests"], r.body["Nests"],
        "the same nests and renderings"
    );
    assert_eq!(got["Parts"], r.body["Parts"], "the same parts and previews");

    // the SVG, by the aliases of the query parameters; it parses, and holds a filled path per
    // part component and the sheet, no part labels, and the caption with the multiplicity
    receiver.wait_final(&svg_id, FINAL_WAIT).await;
    let a = api
        .send(api.get(&format!("/v1/nesting/render?NestIdentifier={svg_id}")))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["RenderFormat"], "svg");
    let svg = String::from_utf8(decode(&a.body)).expect("UTF-8 SVG");
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default())
        .expect("the SVG parses");
    assert_eq!(
        tree.size().width().round() as u32,
        a.body["xDimension"]
            .as_str()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    );
    let paths = svg.matches("<path ").count();
    assert_eq!(paths, 1 + 3, "the sheet and three parts: {svg}");
    assert_eq!(svg.matches("<text").count(), 1, "only the caption: {svg}");
    assert!(
        svg.contains("× 1 sheet"),
        "the multiplicity is shown: {svg}"
    );

    // refusals
    let a = api.send(api.get("/v1/nesting/render/")).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("RequestId"), "{}", a.text);
    let a = api
        .send(api.get("/v1/nesting/render/?RequestId=no-such-job"))
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/render/?RequestId={png_id}&ResultIdentity=no-such-result"
        )))
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
    for (settings, field) in [
        (
            json!({"RenderSettings": {"RenderFormat": "Gif"}}),
            "Request.RenderSettings.RenderFormat",
        ),
        (
            json!({"RenderSettings": {"BackColorARGB": "blue-ish"}}),
            "Request.RenderSettings.BackColorARGB",
        ),
        (
            json!({"RenderSettings": {"xDimension": 100000}}),
            "Request.RenderSettings.xDimension",
        ),
        (
            json!({"ReportSourceSettings": {"RenderPartLabelMode": "Everything"}}),
            "Request.ReportSourceSettings.RenderPartLabelMode",
        ),
    ] {
        let mut bad = dxf_request(
            &[("part_1.dxf", 1)],
            (400.0, 300.0),
            Some(&hook),
            1.0,
            false,
        );
        for (k, v) in settings.as_object().unwrap() {
            bad["Request"][k] = v.clone();
        }
        let a = api.post_json("/v1/nesting", &bad).await;
        assert_eq!(a.status, 400, "{settings}: {}", a.text);
        assert!(a.text.contains(field), "{settings}: {}", a.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_are_delivered_to_their_webhook_and_every_refusal_rule_holds() {
    let dir = temp_dir("export");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let mut req = dxf_request(
        &[("part_1.dxf", 3), ("donut_r12.dxf", 2)],
        (400.0, 300.0),
        Some(&format!("{}/nest", receiver.url)),
        2.0,
        false,
    );
    req["Request"]["RenderSettings"] =
        json!({"RenderFormat": "PNG", "xDimension": 320, "yDimension": 240});
    let id = api.submit("/v1/nesting", &req).await;
    let done = receiver.wait_final(&id, FINAL_WAIT).await;
    let status = done.last().unwrap().body["Status"].clone();
    let rid = status["ResultIdentity"].as_str().unwrap().to_string();
    let export = |t: &str, hook: &str| {
        format!(
            "/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType={t}&WebHookUri={}",
            hook
        )
    };
    let hook = |path: &str| format!("{}{path}", receiver.url);

    // Result, by name, with GET: the machine-readable layout of that result
    let a = api
        .send(api.get(&export("Result", &hook("/x-result"))))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Success"], true);
    let got = receiver.wait_path("/x-result", FINAL_WAIT).await;
    assert_eq!(got.body["ResultIdentity"], rid.as_str());
    assert_eq!(got.body["RequestId"], id.as_str());
    let placed: u64 = got.body["Sheets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["Multiplicity"].as_u64().unwrap() * s["Placements"].as_array().unwrap().len() as u64
        })
        .sum();
    assert_eq!(placed, status["PartsPlaced"].as_u64().unwrap());

    // Render, by its integer, with POST: the RenderResponse of the request's RenderSettings
    let a = api.send(api.post(&export("1", &hook("/x-render")))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-render", FINAL_WAIT).await;
    assert_eq!(got.body["RenderFormat"], "png");
    assert_eq!(got.body["ResultIdentity"], rid.as_str());
    let (w, h, _) = png_pixels(&decode(&got.body));
    assert_eq!((w, h), (320, 240));

    // refusals at the call
    let refused = |a: &support::Answer, status: u16, mention: &str| {
        assert_eq!(a.status, status, "{}", a.text);
        assert_eq!(a.body["Success"], false, "{}", a.text);
        assert!(a.text.contains(mention), "{mention}: {}", a.text);
    };
    // a ResponseType already requested for the result (aliases and letter case alike)
    let again = format!(
        "/v1/nesting/export?NestIdentifier={id}&ResultId={rid}&responsetype=result&WebHookUri={}",
        hook("/x-again")
    );
    refused(&api.send(api.get(&again)).await, 409, "already requested");
    // a settings block the type needs is missing from the nesting request
    refused(
        &api.send(api.get(&export("DXF", &hook("/x-dxf")))).await,
        400,
        "Request.DXFExportSettings",
    );
    refused(
        &api.send(api.get(&export("ReportSource", &hook("/x-rs"))))
            .await,
        400,
        "Request.ReportSourceSettings",
    );
    refused(
        &api.send(api.get(&export("Runtime", &hook("/x-rt")))).await,
        400,
        "ReportSourceRenderingSettings",
    );
    refused(
        &api.send(api.get(&export("RemnantExport", &hook("/x-rem"))))
            .await,
        400,
        "Request.RemnantGenerationSettings",
    );
    // a Runtime export's own settings are checked at the call too
    let a = api
        .send(
            api.post(&export("Runtime", &hook("/x-rt")))
                .json(&json!({"RenderPartLabelMode": "Loud"})),
        )
        .await;
    refused(&a, 400, "body.RenderPartLabelMode");
    // WebHookUri missing, or not absolute HTTPS
    let no_hook =
        format!("/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType=Result");
    refused(&api.send(api.get(&no_hook)).await, 400, "WebHookUri");
    refused(
        &api.send(api.get(&export("Render", "http://example.com/x")))
            .await,
        400,
        "WebHookUri",
    );
    refused(
        &api.send(api.get(&export("Render", "https://10.0.0.1/x")))
            .await,
        400,
        "WebHookUri",
    );
    refused(
        &api.send(api.get(&export("Render", "/relative"))).await,
        400,
        "WebHookUri",
    );
    // a ResponseType that does not exist, and missing ids
    refused(
        &api.send(api.get(&export("Picture", &hook("/x")))).await,
        400,
        "ResponseType",
    );
    refused(
        &api.send(api.get(&export("7", &hook("/x")))).await,
        400,
        "ResponseType",
    );
    let no_ids = format!(
        "/v1/nesting/export?ResponseType=Result&WebHookUri={}",
        hook("/x")
    );
    let a = api.send(api.get(&no_ids)).await;
    refused(&a, 400, "RequestId");
    assert!(a.text.contains("ResultIdentity"), "{}", a.text);
    // unknown job or result
    let unknown = format!(
        "/v1/nesting/export?RequestId={id}&ResultIdentity=nope&ResponseType=Result&WebHookUri={}",
        hook("/x")
    );
    refused(&api.send(api.get(&unknown)).await, 404, "nope");
    refused(
        &api.send(api.get(&export("PartsExport", &hook("/x-parts"))))
            .await,
        400,
        "Request.PartExportSettings",
    );
    // a Runtime export with its settings in the body: the report, its renderings per those
    // settings, and how the result was made
    let a = api
        .send(api.post(&export("Runtime", &hook("/x-rt"))).json(&json!({
            "RenderPartLabelMode": "None",
            "NestingRenderSettings": {"RenderFormat": "Png", "xDimension": 300, "yDimension": 200},
            "PartPreviewRenderSettings": {"RenderFormat": "Svg"},
        })))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-rt", FINAL_WAIT).await;
    let rt = &got.body;
    assert_eq!(rt["ResultIdentity"], rid.as_str());
    assert!(rt["RunTimeSeconds"].as_f64().unwrap() > 0.0, "{rt:#}");
    let engine = rt["Engine"].as_str().unwrap();
    assert!(
        engine.starts_with("cpu") || engine.starts_with("gpu"),
        "{engine}"
    );
    assert!(rt["Seed"].is_u64());
    assert_eq!(rt["Summary"]["PartsPlaced"], status["PartsPlaced"]);
    assert!(!rt["Nests"].as_array().unwrap().is_empty());
    for nest in rt["Nests"].as_array().unwrap() {
        assert_eq!(nest["RenderFormat"], "png");
        let bytes = b64(&nest["Base64EncodedRendering"]);
        assert_eq!(png_pixels(&bytes).0, 300);
    }
    let parts = rt["Parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for part in parts {
        let svg = b64(&part["Base64EncodedPreview"]);
        let svg = String::from_utf8(svg).unwrap();
        assert!(
            svg.contains(r#"width="240""#),
            "previews are 240 px wide by default: {svg}"
        );
        assert!(!svg.contains("<text"), "no labels, no caption: {svg}");
    }
    // nothing refused was queued: only the two accepted exports were delivered
    tokio::time::sleep(Duration::from_millis(500)).await;
    let paths: Vec<String> = receiver
        .all()
        .into_iter()
        .filter(|d| !d.path.ends_with("/nest"))
        .map(|d| d.path.rsplit('/').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(paths, ["x-result", "x-render", "x-rt"]);
}

#[test]
fn a_failed_export_delivers_the_fixed_failure_body() {
    use kerf::jobs::run_export::{error_delivery_body, generate};
    use kerf::wire::exports::ResponseType;
    let request =
        r#"{"RequestId":"job-1","ResultIdentity":"res-1","ResponseType":"Render","Settings":null}"#;
    let body: Value = serde_json::from_str(&error_delivery_body("exp-9", request)).unwrap();
    assert_eq!(
        body,
        json!({"id": "job-1", "resultId": "res-1", "responseType": "Render", "reference": "exp-9"})
    );
    // a generation that cannot be done is an error (the job then fails with that body),
    // never a body that looks like success
    let source = |request: &str| kerf::jobs::run_export::Source {
        nest_kind: "nest2d:dxf".into(),
        request: request.into(),
        layout: "{}".into(),
        report: "{}".into(),
    };
    assert!(generate(
        ResponseType::Render,
        &source("not a request"),
        "res-1",
        None
    )
    .is_err());
    assert!(generate(ResponseType::ReportSource, &source("{}"), "res-1", None).is_err());
    assert!(generate(ResponseType::Dxf, &source("{}"), "res-1", None).is_err());
}

/// Reads a DXF with the independent Python reader ezdxf (when it is installed; CI installs it
/// and sets KERF_REQUIRE_EZDXF=1 so that a missing reader fails): the audit's error count and
/// the number of entities of each type in modelspace.
fn ezdxf_counts(path: &std::path::Path) -> Option<Value> {
    let script = r#"
import sys, json, collections, ezdxf
doc = ezdxf.readfile(sys.argv[1])
auditor = doc.audit()
counts = collections.Counter(e.dxftype() for e in doc.modelspace())
print(json.dumps({"errors": len(auditor.errors), "counts": counts, "version": doc.dxfversion}))
"#;
    let have = std::process::Command::new("python3")
        .args(["-c", "import ezdxf"])
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        assert!(
            std::env::var("KERF_REQUIRE_EZDXF").is_err(),
            "KERF_REQUIRE_EZDXF is set but python3 cannot import ezdxf"
        );
        eprintln!("ezdxf is not installed: the DXF is checked with the dxf crate only");
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "ezdxf cannot read {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("ezdxf's counts"))
}

/// The signed area of a closed ring (counter-clockwise positive).
fn ring_area(points: &[(f64, f64)]) -> f64 {
    points
        .iter()
        .zip(points.iter().cycle().skip(1))
        .map(|(a, b)| a.0 * b.1 - b.0 * a.1)
        .sum::<f64>()
        / 2.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dxf_exports_read_back_with_one_outline_per_placed_part() {
    let dir = temp_dir("dxf");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let nest = |settings: Value| {
        let mut req = dxf_request(
            &[("part_1.dxf", 4), ("donut_r12.dxf", 2), ("part_6.dxf", 2)],
            (300.0, 250.0),
            Some(&format!("{}/nest", receiver.url)),
            2.0,
            false,
        );
        req["Request"]["DXFExportSettings"] = settings;
        req
    };
    // a bad setting is refused with the nest
    let a = api
        .post_json("/v1/nesting", &nest(json!({"DXFVersion": "R13b"})))
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(
        a.text.contains("Request.DXFExportSettings.DXFVersion"),
        "{}",
        a.text
    );

    // one R2000 file: closed polylines, labels, statistics, sheet boundaries
    let one = api
        .submit(
            "/v1/nesting",
            &nest(
                json!({"DXFVersion": "R2000", "AddPartLabels": true, "AddNestStatistics": true,
                          "ExportSheetBoundaries": true, "SheetsLayerName": "SHEET"}),
            ),
        )
        .await;
    // a zip of R2018 files, one per distinct layout, parts as blocks
    let zipped = api
        .submit("/v1/nesting", &{
            let mut req = nest(json!({"DXFVersion": "AC1032", "ExportFileType": "Zip",
                          "SheetExportSettings": "OneFilePerUniqueSheet", "ExportedGeometryStructure": "Blocks"}));
            // and each part alone, outlines clockwise
            req["Request"]["PartExportSettings"] = json!({"AddPartLabel": true, "DXFVersion": "R2010",
                "OuterLoopDirection": "Clockwise"});
            req
        })
        .await;
    // R12: POLYLINEs with VERTEXes (R12 has no LWPOLYLINE), sheet boundaries and labels
    // (and each part alone in R12 as a block inserted once)
    let r12 = api
        .submit("/v1/nesting", &{
            let mut req = nest(
                json!({"DXFVersion": "R12", "AddPartLabels": true, "ExportSheetBoundaries": true}),
            );
            req["Request"]["PartExportSettings"] =
                json!({"DXFVersion": "R12", "ExportedGeometryStructure": "Blocks"});
            req
        })
        .await;
    // common edges cannot be taken out of blocks: refused with the nest
    let a = api
        .post_json(
            "/v1/nesting",
            &nest(json!({"RemoveCommonEdges": true, "ExportedGeometryStructure": "Blocks"})),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(
        a.text
            .contains("Request.DXFExportSettings.RemoveCommonEdges"),
        "{}",
        a.text
    );
    let export = |id: &str, rid: &str, path: &str| {
        format!(
            "/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType=DXF&WebHookUri={}{path}",
            receiver.url
        )
    };
    let mut done = Vec::new();
    for id in [&one, &zipped, &r12] {
        let last = receiver.wait_final(id, FINAL_WAIT).await;
        let status = last.last().unwrap().body["Status"].clone();
        done.push(status);
    }
    let rid = |k: usize| done[k]["ResultIdentity"].as_str().unwrap().to_string();
    let a = api.send(api.get(&export(&r12, &rid(2), "/x-r12"))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-r12", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 0);
    let bytes = b64(&got.body["Base64EncodedResponse"]);
    let d = load_dxf(&bytes);
    assert_eq!(d.header.version, dxf::enums::AcadVersion::R12);
    // R12 names: at most 31 of A-Z, 0-9, _, $, -
    for layer in d.layers() {
        assert!(
            layer.name.len() <= 31
                && layer
                    .name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_$-".contains(c)),
            "an R12 layer name: {}",
            layer.name
        );
    }
    let (mut part_area, mut outlines, mut polylines) = (0.0, 0, 0);
    for e in d.entities() {
        if let dxf::entities::EntityType::Polyline(p) = &e.specific {
            polylines += 1;
            assert!(p.is_closed());
            if e.common.layer.starts_with("PART_") {
                let ring: Vec<(f64, f64)> =
                    p.vertices().map(|v| (v.location.x, v.location.y)).collect();
                let a = ring_area(&ring);
                outlines += usize::from(a > 0.0);
                part_area += a;
            }
        }
    }
    assert_eq!(outlines as u64, done[2]["PartsPlaced"].as_u64().unwrap());
    assert!(part_area > 0.0);
    let path = dir.join("r12.dxf");
    std::fs::write(&path, &bytes).unwrap();
    if let Some(c) = ezdxf_counts(&path) {
        assert_eq!(c["errors"], 0, "{c}");
        assert_eq!(c["version"], "AC1009", "{c}");
        assert_eq!(
            c["counts"]["POLYLINE"].as_u64().unwrap() as usize,
            polylines,
            "{c}"
        );
        assert!(c["counts"]["TEXT"].as_u64().unwrap() > 0, "{c}");
    }
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/export?RequestId={r12}&ResultIdentity={}&ResponseType=PartsExport&WebHookUri={}/x-r12-parts",
            rid(2),
            receiver.url
        )))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-r12-parts", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 0);
    assert_eq!(got.body["Parts"].as_array().unwrap().len(), 3);
    for p in got.body["Parts"].as_array().unwrap() {
        let id = p["PartIdentifier"].as_str().unwrap();
        let bytes = b64(&p["Base64EncodedDxf"]);
        let d = load_dxf(&bytes);
        assert_eq!(d.header.version, dxf::enums::AcadVersion::R12, "{id}");
        assert_eq!(d.blocks().count(), 1, "{id}");
        let path = dir.join(format!("r12-part-{id}.dxf"));
        std::fs::write(&path, &bytes).unwrap();
        if let Some(c) = ezdxf_counts(&path) {
            assert_eq!(c["errors"], 0, "{id}: {c}");
            assert_eq!(c["version"], "AC1009", "{id}: {c}");
            assert_eq!(c["counts"]["INSERT"], 1, "{id}: {c}");
        }
    }

    // the single file
    let a = api.send(api.get(&export(&one, &rid(0), "/x-one"))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-one", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 1);
    assert_eq!(got.body["ExportFileType"], 0);
    let bytes = b64(&got.body["Base64EncodedResponse"]);
    let drawing = load_dxf(&bytes);
    assert_eq!(drawing.header.version, dxf::enums::AcadVersion::R2000);
    // every placed part's outline and holes, on its part's layer; signed areas add up to the
    // placed parts' area (outlines counter-clockwise, holes clockwise)
    let report = api
        .post_json(
            "/v1/nesting/result/",
            &json!({"RequestId": one, "ResultIdentity": rid(0)}),
        )
        .await;
    let placed_area: f64 = report.body["Parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["Area"].as_f64().unwrap() * p["Placed"].as_f64().unwrap())
        .sum();
    let (mut outlines, mut area, mut texts, mut sheets) = (0, 0.0, 0, 0);
    for e in drawing.entities() {
        match &e.specific {
            dxf::entities::EntityType::LwPolyline(p) => {
                let ring: Vec<(f64, f64)> = p.vertices.iter().map(|v| (v.x, v.y)).collect();
                if e.common.layer == "SHEET" {
                    sheets += 1;
                } else {
                    assert!(e.common.layer.starts_with("PART_"), "{}", e.common.layer);
                    assert!(p.is_closed());
                    let a = ring_area(&ring);
                    outlines += usize::from(a > 0.0);
                    area += a;
                }
            }
            dxf::entities::EntityType::Text(_) => texts += 1,
            _ => {}
        }
    }
    let placed = done[0]["PartsPlaced"].as_u64().unwrap() as usize;
    assert_eq!(outlines, placed, "one outline per placed part");
    assert!(
        (area - placed_area).abs() < 1e-6 * placed_area.max(1.0),
        "areas: {area} in the DXF, {placed_area} placed"
    );
    let layouts = done[0]["NestedSheetsInfo"].as_array().unwrap().len();
    assert_eq!(sheets, layouts, "a boundary per sheet layout");
    assert!(
        texts >= placed / 2 + layouts,
        "labels and statistics: {texts}"
    );
    let file = dir.join("one.dxf");
    std::fs::write(&file, &bytes).unwrap();
    if let Some(c) = ezdxf_counts(&file) {
        assert_eq!(c["errors"], 0, "{c}");
        assert_eq!(c["version"], "AC1015", "{c}");
        assert_eq!(
            c["counts"]["LWPOLYLINE"].as_u64().unwrap() as usize,
            drawing
                .entities()
                .filter(|e| matches!(e.specific, dxf::entities::EntityType::LwPolyline(_)))
                .count(),
            "{c}"
        );
    }

    // the zip: a file per distinct layout, R2018, each part a block inserted per placement
    let a = api.send(api.get(&export(&zipped, &rid(1), "/x-zip"))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-zip", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 6);
    assert_eq!(got.body["ExportFileType"], 1);
    let files = unzip(&got.body["Base64EncodedResponse"]);
    let sheets = done[1]["NestedSheetsInfo"].as_array().unwrap();
    assert_eq!(files.len(), sheets.len());
    for (k, (name, dxf_bytes)) in files.iter().enumerate() {
        let d = load_dxf(dxf_bytes);
        assert_eq!(d.header.version, dxf::enums::AcadVersion::R2018, "{name}");
        let inserts = d
            .entities()
            .filter(|e| matches!(e.specific, dxf::entities::EntityType::Insert(_)))
            .count();
        assert_eq!(
            inserts as u64,
            sheets[k]["PartCount"].as_u64().unwrap(),
            "{name}"
        );
        assert!(d.blocks().count() >= 1, "{name}");
        let path = dir.join(format!("zip-{k}.dxf"));
        std::fs::write(&path, dxf_bytes).unwrap();
        if let Some(c) = ezdxf_counts(&path) {
            assert_eq!(c["errors"], 0, "{name}: {c}");
            assert_eq!(c["version"], "AC1032", "{name}: {c}");
            assert_eq!(
                c["counts"]["INSERT"].as_u64().unwrap() as usize,
                inserts,
                "{name}: {c}"
            );
        }
    }
    // PartsExport: each part alone, R2010, outline clockwise, its area the part's
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/export?RequestId={zipped}&ResultIdentity={}&ResponseType=PartsExport&WebHookUri={}/x-parts",
            rid(1),
            receiver.url
        )))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-parts", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 4);
    let report = api
        .post_json(
            "/v1/nesting/result/",
            &json!({"RequestId": zipped, "ResultIdentity": rid(1)}),
        )
        .await;
    let area_of = |id: &str| {
        report.body["Parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["PartIdentifier"] == id)
            .unwrap()["Area"]
            .as_f64()
            .unwrap()
    };
    let parts = got.body["Parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    for p in parts {
        let id = p["PartIdentifier"].as_str().unwrap();
        let bytes = b64(&p["Base64EncodedDxf"]);
        let d = load_dxf(&bytes);
        assert_eq!(d.header.version, dxf::enums::AcadVersion::R2010, "{id}");
        let areas: Vec<f64> = d
            .entities()
            .filter_map(|e| match &e.specific {
                dxf::entities::EntityType::LwPolyline(p) => Some(ring_area(
                    &p.vertices.iter().map(|v| (v.x, v.y)).collect::<Vec<_>>(),
                )),
                _ => None,
            })
            .collect();
        let outline = areas
            .iter()
            .copied()
            .fold(0.0f64, |m, a| if a.abs() > m.abs() { a } else { m });
        assert!(outline < 0.0, "{id}: the outline runs clockwise");
        // holes keep their own direction (clockwise): the part's area is |outline| - holes
        let holes: f64 = areas
            .iter()
            .filter(|&&a| a != outline)
            .map(|a| a.abs())
            .sum();
        let area = outline.abs() - holes;
        assert!(
            (area - area_of(id)).abs() < 1e-6 * area.max(1.0),
            "{id}: {area} vs {}",
            area_of(id)
        );
        let texts = d
            .entities()
            .filter(|e| matches!(e.specific, dxf::entities::EntityType::Text(_)))
            .count();
        assert!(texts <= 1, "{id}: at most its label");
        let path = dir.join(format!("part-{id}.dxf"));
        std::fs::write(&path, &bytes).unwrap();
        if let Some(c) = ezdxf_counts(&path) {
            assert_eq!(c["errors"], 0, "{id}: {c}");
            assert_eq!(c["version"], "AC1024", "{id}: {c}");
        }
    }
}

/// Polylines as (layer, ring) each.
type LayerRings = Vec<(String, Vec<(f64, f64)>)>;

/// Closed polylines of a DXF: its version and (layer, ring) each.
fn polylines_of(bytes: &[u8]) -> (dxf::enums::AcadVersion, LayerRings) {
    let d = load_dxf(bytes);
    let rings = d
        .entities()
        .filter_map(|e| match &e.specific {
            dxf::entities::EntityType::LwPolyline(p) => {
                assert!(p.is_closed());
                Some((
                    e.common.layer.clone(),
                    p.vertices.iter().map(|v| (v.x, v.y)).collect(),
                ))
            }
            _ => None,
        })
        .collect();
    (d.header.version, rings)
}

/// Rings as shapes: each counter-clockwise ring an outline, each clockwise ring a hole of the
/// smallest outline around it.
fn shapes_of(rings: &[Vec<(f64, f64)>]) -> Vec<kerf::geometry::Shape> {
    use kerf::geometry::{exact::point_in_ring, Point, Shape};
    let pts =
        |r: &Vec<(f64, f64)>| -> Vec<Point> { r.iter().map(|&(x, y)| Point::new(x, y)).collect() };
    let outers: Vec<&Vec<(f64, f64)>> = rings.iter().filter(|r| ring_area(r) > 0.0).collect();
    let mut holes: Vec<Vec<Vec<Point>>> = vec![Vec::new(); outers.len()];
    for h in rings.iter().filter(|r| ring_area(r) < 0.0) {
        let p = Point::new(h[0].0, h[0].1);
        let around = (0..outers.len())
            .filter(|&k| point_in_ring(p, &pts(outers[k])))
            .min_by(|&a, &b| ring_area(outers[a]).total_cmp(&ring_area(outers[b])))
            .expect("a hole inside an outline");
        holes[around].push(pts(h));
    }
    outers
        .iter()
        .zip(holes)
        .map(|(o, h)| Shape::new(pts(o), h))
        .collect()
}

/// The files of a base64 zip, in order: (name, bytes).
fn unzip(field: &Value) -> Vec<(String, Vec<u8>)> {
    let bytes = b64(field);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..zip.len())
        .map(|k| {
            let mut f = zip.by_index(k).unwrap();
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut out).unwrap();
            (f.name().to_string(), out)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remnants_keep_clear_of_the_parts_and_meet_the_minimums() {
    use kerf::geometry::{PartGeometry, Shape};
    use kerf::nest2d::verify::geometries_conflict;
    let dir = temp_dir("remnants");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    // every nest also asks for a DXF per distinct layout: the parts the remnants must clear
    let nest = |sheet: (f64, f64), remnants: Value, dxf: Value| {
        let mut req = dxf_request(
            &[
                ("part_1.dxf", 4),
                ("frame_with_hole_r12.dxf", 2),
                ("part_6.dxf", 2),
            ],
            sheet,
            Some(&format!("{}/nest", receiver.url)),
            2.0,
            false,
        );
        req["Request"]["RemnantGenerationSettings"] = remnants;
        req["Request"]["DXFExportSettings"] = dxf;
        req
    };
    let per_layout =
        json!({"SheetExportSettings": "OneFilePerUniqueSheet", "ExportFileType": "Zip"});
    // bad settings are refused with the nest, naming the field
    let a = api
        .post_json(
            "/v1/nesting",
            &nest(
                (300.0, 250.0),
                json!({"RemnantGenerationType": "Triangles", "MinimumAreaMM2": -1}),
                per_layout.clone(),
            ),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(
        a.text
            .contains("Request.RemnantGenerationSettings.RemnantGenerationType"),
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("Request.RemnantGenerationSettings.MinimumAreaMM2"),
        "{}",
        a.text
    );

    let rectangular = api
        .submit(
            "/v1/nesting",
            &nest(
                (300.0, 250.0),
                json!({"RemnantGenerationType": "Rectangular", "MinimumDimensionMM": 20.0,
                   "MinimumAreaMM2": 1000.0, "IncludeRemnantsInExportedNests": true,
                   "RemnantsLayerName": "OFFCUTS", "ExportFolderPath": "C:\\offcuts"}),
                per_layout.clone(),
            ),
        )
        .await;
    let true_shape = api
        .submit(
            "/v1/nesting",
            &nest(
                (300.0, 250.0),
                json!({"RemnantGenerationType": "TrueShape", "MinimumDimensionMM": 10.0,
                   "AllowRemnantGenerationInsidePartHoles": true}),
                json!({"SheetExportSettings": "OneFilePerUniqueSheet", "ExportFileType": "Zip",
                   "DXFVersion": "R2013"}),
            ),
        )
        .await;
    let clean_cut = api
        .submit("/v1/nesting", &nest(
            (240.0, 160.0),
            json!({"RemnantGenerationType": "0", "GenerateRemnantsOnFinalNestedSheetOnly": true}),
            per_layout.clone(),
        ))
        .await;
    let export = |id: &str, rid: &str, t: &str, path: &str| {
        format!(
            "/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType={t}&WebHookUri={}{path}",
            receiver.url
        )
    };
    for (name, id) in [
        ("rect", &rectangular),
        ("true", &true_shape),
        ("clean", &clean_cut),
    ] {
        let last = receiver.wait_final(id, FINAL_WAIT).await;
        let status = last.last().unwrap().body["Status"].clone();
        assert_eq!(status["NestingStatus"], 1, "{status}");
        let rid = status["ResultIdentity"].as_str().unwrap().to_string();
        let layouts = status["NestedSheetsInfo"].as_array().unwrap().clone();
        let a = api
            .send(api.get(&export(id, &rid, "RemnantExport", &format!("/{name}-rem"))))
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
        let a = api
            .send(api.get(&export(id, &rid, "DXF", &format!("/{name}-dxf"))))
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
        let rem = receiver
            .wait_path(&format!("/{name}-rem"), FINAL_WAIT)
            .await
            .body;
        let nest_dxf = receiver
            .wait_path(&format!("/{name}-dxf"), FINAL_WAIT)
            .await
            .body;
        assert_eq!(rem["ResultIdentity"], rid.as_str());
        assert_eq!(rem["ExportFileType"], 1, "always a zip");
        let infos = rem["Remnants"].as_array().unwrap();
        let files = unzip(&rem["Base64EncodedResponse"]);
        assert_eq!(files.len(), infos.len(), "{name}: a file per remnant");
        assert!(!files.is_empty(), "{name}: this nest leaves material over");
        let layout_files = unzip(&nest_dxf["Base64EncodedResponse"]);
        assert_eq!(layout_files.len(), layouts.len());
        // the parts of each layout, from the nest's own DXF, as the verifier sees them
        let parts: Vec<Vec<Shape>> = layout_files
            .iter()
            .map(|(_, bytes)| {
                let (_, rings) = polylines_of(bytes);
                let rings: Vec<Vec<(f64, f64)>> = rings
                    .into_iter()
                    .filter(|(layer, _)| layer.starts_with("PART_"))
                    .map(|(_, r)| r)
                    .collect();
                shapes_of(&rings)
            })
            .collect();
        let mut remnant_shapes: Vec<(usize, Shape)> = Vec::new();
        for ((file, bytes), info) in files.iter().zip(infos) {
            assert_eq!(&info["FileName"], file.as_str());
            let layout = info["LayoutIndex"].as_u64().unwrap() as usize;
            let (version, rings) = polylines_of(bytes);
            let want_layer = if name == "rect" {
                "OFFCUTS"
            } else {
                "REMNANTS"
            };
            assert!(rings.iter().all(|(l, _)| l == want_layer), "{file}");
            let want_version = if name == "true" {
                dxf::enums::AcadVersion::R2013
            } else {
                dxf::enums::AcadVersion::R2000
            };
            assert_eq!(version, want_version, "{file}");
            let rings: Vec<Vec<(f64, f64)>> = rings.into_iter().map(|(_, r)| r).collect();
            let shapes = shapes_of(&rings);
            assert_eq!(shapes.len(), 1, "{file}: one remnant per file");
            let shape = shapes[0].clone();
            let b = shape.bbox();
            // the minimums, and the figures given for it
            let min_dim = match name {
                "rect" => 20.0,
                "true" => 10.0,
                _ => 0.0,
            };
            if min_dim > 0.0 {
                assert!(b.width().min(b.height()) >= min_dim - 1e-9, "{file}: {b:?}");
            }
            if name == "rect" {
                assert!(shape.area() >= 1000.0, "{file}");
                assert_eq!(rings[0].len(), 4, "{file}: a rectangle");
            }
            assert!((info["Area"].as_f64().unwrap() - shape.area()).abs() < 1e-6 * shape.area());
            assert!((info["Width"].as_f64().unwrap() - b.width()).abs() < 1e-9);
            // on the sheet, and clear of every part of its layout by the part spacing
            let (w, h) = (
                layouts[layout]["XDimension"].as_f64().unwrap(),
                layouts[layout]["YDimension"].as_f64().unwrap(),
            );
            assert!(
                b.min.x >= 0.0 && b.min.y >= 0.0 && b.max.x <= w && b.max.y <= h,
                "{file}: {b:?}"
            );
            let g = PartGeometry::single(shape.clone());
            assert!(!parts[layout].is_empty(), "{file}: its layout has parts");
            for p in &parts[layout] {
                assert!(
                    // the 2 mm spacing and half of the 0.01 mm margin remnants keep beyond it
                    !geometries_conflict(&g, &PartGeometry::single(p.clone()), 2.005 - 1e-6),
                    "{file} comes within the 2 mm spacing of a part at {:?}",
                    p.bbox()
                );
            }
            let path = dir.join(format!("{name}-{file}"));
            std::fs::write(&path, bytes).unwrap();
            if let Some(c) = ezdxf_counts(&path) {
                assert_eq!(c["errors"], 0, "{file}: {c}");
                assert_eq!(
                    c["counts"]["LWPOLYLINE"].as_u64().unwrap() as usize,
                    rings.len()
                );
            }
            remnant_shapes.push((layout, shape));
        }
        // remnants of a layout do not overlap each other
        for (i, (la, a)) in remnant_shapes.iter().enumerate() {
            for (lb, b) in &remnant_shapes[i + 1..] {
                if la == lb {
                    let common = kerf::geometry::boolean::intersection(
                        std::slice::from_ref(a),
                        std::slice::from_ref(b),
                    );
                    assert!(common.iter().map(Shape::area).sum::<f64>() < 1e-6);
                }
            }
        }
        match name {
            // IncludeRemnantsInExportedNests: the nest's DXF has them on their layer
            "rect" => {
                for (k, (_, bytes)) in layout_files.iter().enumerate() {
                    let (_, rings) = polylines_of(bytes);
                    let drawn = rings.iter().filter(|(l, _)| l == "OFFCUTS").count();
                    let made = remnant_shapes.iter().filter(|(l, _)| *l == k).count();
                    assert_eq!(drawn, made, "layout {k}");
                }
            }
            // one straight cut past the nest, on the last sheet only
            "clean" => {
                assert!(
                    layouts.len() >= 2,
                    "the clean-cut nest needs two sheets: {layouts:?}"
                );
                assert_eq!(infos.len(), 1);
                assert_eq!(infos[0]["LayoutIndex"], layouts.len() - 1);
                assert_eq!(infos[0]["Quantity"], 1);
                let b = remnant_shapes[0].1.bbox();
                let (w, h) = (240.0, 160.0);
                let across = ((b.width() - w).abs() < 1e-6 && (b.min.y.min(h - b.max.y)) < 1e-6)
                    || ((b.height() - h).abs() < 1e-6 && (b.min.x.min(w - b.max.x)) < 1e-6);
                assert!(across, "a clean cut runs across the sheet: {b:?}");
                for (_, bytes) in &layout_files {
                    let (_, rings) = polylines_of(bytes);
                    assert!(
                        rings.iter().all(|(l, _)| l != "REMNANTS"),
                        "not asked into the nest DXF"
                    );
                }
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn common_edges_are_cut_once() {
    let dir = temp_dir("common");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    // squares at zero spacing: the nest packs them edge to edge
    let mut req = dxf_request(
        &[("square_polyline_r12.dxf", 12)],
        (100.0, 100.0),
        Some(&format!("{}/nest", receiver.url)),
        2.0,
        false,
    );
    req["Request"]["NestSettings"]["PartSpacing"] = json!(0.0);
    req["Request"]["DXFExportSettings"] =
        json!({"RemoveCommonEdges": true, "ExportedGeometryStructure": "Exploded"});
    let id = api.submit("/v1/nesting", &req).await;
    let done = receiver.wait_final(&id, FINAL_WAIT).await;
    let status = done.last().unwrap().body["Status"].clone();
    assert_eq!(status["PartsPlaced"], 12, "{status}");
    let rid = status["ResultIdentity"].as_str().unwrap().to_string();
    for (t, path) in [("DXF", "/x-dxf"), ("Result", "/x-result")] {
        let a = api
            .send(api.get(&format!(
                "/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType={t}&WebHookUri={}{path}",
                receiver.url
            )))
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
    }
    let dxf_body = receiver.wait_path("/x-dxf", FINAL_WAIT).await.body;
    let layout = receiver.wait_path("/x-result", FINAL_WAIT).await.body;
    let bytes = b64(&dxf_body["Base64EncodedResponse"]);
    let drawing = load_dxf(&bytes);
    let lines: Vec<((f64, f64), (f64, f64))> = drawing
        .entities()
        .filter_map(|e| match &e.specific {
            dxf::entities::EntityType::Line(l) => Some(((l.p1.x, l.p1.y), (l.p2.x, l.p2.y))),
            _ => None,
        })
        .collect();
    // the square as imported: its polyline's vertices
    let square = dxf::Drawing::load_file(support::data("square_polyline_r12.dxf")).unwrap();
    let corners: Vec<(f64, f64)> = square
        .entities()
        .find_map(|e| match &e.specific {
            dxf::entities::EntityType::Polyline(p) => {
                Some(p.vertices().map(|v| (v.location.x, v.location.y)).collect())
            }
            _ => None,
        })
        .expect("a polyline");
    let n = corners.len();
    let perimeter: f64 = (0..n)
        .map(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % n]);
            ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt()
        })
        .sum();
    let length =
        |(a, b): &((f64, f64), (f64, f64))| ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
    let written: f64 = lines.iter().map(length).sum();
    assert!(
        written < 12.0 * perimeter - perimeter,
        "common edges were removed: {written} written, {} in all",
        12.0 * perimeter
    );
    // every edge of every placed square is still cut by some line
    let on_a_line = |p: (f64, f64)| {
        lines.iter().any(|&(a, b)| {
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let l2 = dx * dx + dy * dy;
            let t = (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0);
            let (qx, qy) = (a.0 + t * dx, a.1 + t * dy);
            ((p.0 - qx).powi(2) + (p.1 - qy).powi(2)).sqrt() < 1e-3
        })
    };
    assert_eq!(layout["Sheets"].as_array().unwrap().len(), 1, "one sheet");
    for p in layout["Sheets"][0]["Placements"].as_array().unwrap() {
        let (x, y) = (p["X"].as_f64().unwrap(), p["Y"].as_f64().unwrap());
        let (s, c) = p["Rotation"].as_f64().unwrap().to_radians().sin_cos();
        let place = |(u, v): (f64, f64)| (x + u * c - v * s, y + u * s + v * c);
        for i in 0..n {
            let (a, b) = (place(corners[i]), place(corners[(i + 1) % n]));
            for k in 0..=10 {
                let t = k as f64 / 10.0;
                let q = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
                assert!(on_a_line(q), "{q:?} on a square's edge is not cut");
            }
        }
    }
    // and no stretch is cut twice: no two lines overlap along a common line
    for (i, &(a, b)) in lines.iter().enumerate() {
        for &(c, d) in &lines[i + 1..] {
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let l = (dx * dx + dy * dy).sqrt();
            let off = |p: (f64, f64)| ((p.0 - a.0) * dy - (p.1 - a.1) * dx).abs() / l;
            if off(c) > 1e-6 || off(d) > 1e-6 {
                continue;
            }
            let t = |p: (f64, f64)| ((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l;
            let (lo, hi) = (t(c).min(t(d)).max(0.0), t(c).max(t(d)).min(l));
            assert!(hi - lo < 1e-3, "{a:?}-{b:?} and {c:?}-{d:?} overlap");
        }
    }
    let path = dir.join("common.dxf");
    std::fs::write(&path, &bytes).unwrap();
    if let Some(c) = ezdxf_counts(&path) {
        assert_eq!(c["errors"], 0, "{c}");
        assert_eq!(c["counts"]["LINE"].as_u64().unwrap() as usize, lines.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_does_not_wait_for_the_keys_running_nest() {
    let dir = temp_dir("lane");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    // a key that runs one nest at a time
    let key = server.create_key("Usage", 1, None);
    let api = server.client(&key);
    let short = dxf_request(
        &[("part_1.dxf", 2)],
        (300.0, 200.0),
        Some(&format!("{}/short", receiver.url)),
        1.0,
        false,
    );
    let first = api.submit("/v1/nesting", &short).await;
    let done = receiver.wait_final(&first, FINAL_WAIT).await;
    let rid = done.last().unwrap().body["Status"]["ResultIdentity"]
        .as_str()
        .unwrap()
        .to_string();
    // a long nest takes the key's one slot
    let long = dxf_request(
        &[("part_1.dxf", 6), ("part_6.dxf", 3)],
        (600.0, 400.0),
        Some(&format!("{}/long", receiver.url)),
        90.0,
        false,
    );
    let second = api.submit("/v1/nesting", &long).await;
    api.wait_status(&second, "Running", Duration::from_secs(30))
        .await;
    // the export of the first result is delivered while the long nest still runs
    let a = api
        .send(api.get(&format!(
            "/v1/nesting/export?RequestId={first}&ResultIdentity={rid}&ResponseType=Result&WebHookUri={}/x-lane",
            receiver.url
        )))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-lane", FINAL_WAIT).await;
    assert_eq!(got.body["ResultIdentity"], rid.as_str());
    let st = api.status(&second).await;
    assert_eq!(
        st.body["Status"], "Running",
        "the long nest is still running: {}",
        st.text
    );
}
