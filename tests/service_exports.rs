//! Renders and exports through the real service: `kerf serve` on a temporary SQLite file, real DXF parts,
//! the real HTTPS webhook receiver, and GET /v1/nesting/render/ decoded as a user would (the
//! PNG by the `png` crate, the SVG by usvg).

mod support;

use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;
use support::*;

const FINAL_WAIT: Duration = Duration::from_secs(120);

fn decode(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v["Base64EncodedRendering"].as_str().expect("a rendering"))
        .expect("base64")
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
    for nest in r.body["Nests"].as_array().unwrap() {
        assert_eq!(nest["RenderFormat"], "png");
        assert!(nest["Base64EncodedRendering"]
            .as_str()
            .is_some_and(|b| !b.is_empty()));
    }
    for part in r.body["Parts"].as_array().unwrap() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(part["Base64EncodedPreview"].as_str().unwrap())
            .unwrap();
        assert_eq!(png_pixels(&bytes).0, 240);
    }
    assert_eq!(r.body["Status"]["ResultIdentity"], result_id.as_str());

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
    // a type not built yet (this request has no PartExportSettings either: 400 first)
    let a = api
        .send(api.get(&export("PartsExport", &hook("/x-parts"))))
        .await;
    assert!(a.status == 400 || a.status == 501, "{}", a.text);
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
    for nest in rt["Nests"].as_array().unwrap() {
        assert_eq!(nest["RenderFormat"], "png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(nest["Base64EncodedRendering"].as_str().unwrap())
            .unwrap();
        assert_eq!(png_pixels(&bytes).0, 300);
    }
    let parts = rt["Parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for part in parts {
        let svg = base64::engine::general_purpose::STANDARD
            .decode(part["Base64EncodedPreview"].as_str().unwrap())
            .unwrap();
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
    // common edges are not removed yet, and R12 is not written: refused at the call, not
    // ignored
    let refused = api
        .submit(
            "/v1/nesting",
            &nest(json!({"RemoveCommonEdges": true, "DXFVersion": "R12"})),
        )
        .await;
    let export = |id: &str, rid: &str, path: &str| {
        format!(
            "/v1/nesting/export?RequestId={id}&ResultIdentity={rid}&ResponseType=DXF&WebHookUri={}{path}",
            receiver.url
        )
    };
    let mut done = Vec::new();
    for id in [&one, &zipped, &refused] {
        let last = receiver.wait_final(id, FINAL_WAIT).await;
        let status = last.last().unwrap().body["Status"].clone();
        done.push(status);
    }
    let rid = |k: usize| done[k]["ResultIdentity"].as_str().unwrap().to_string();
    let a = api.send(api.get(&export(&refused, &rid(2), "/x-no"))).await;
    assert_eq!(a.status, 501, "{}", a.text);
    assert!(a.text.contains("RemoveCommonEdges"), "{}", a.text);
    assert!(a.text.contains("DXFVersion R12"), "{}", a.text);

    // the single file
    let a = api.send(api.get(&export(&one, &rid(0), "/x-one"))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let got = receiver.wait_path("/x-one", FINAL_WAIT).await;
    assert_eq!(got.body["DXFVersion"], 1);
    assert_eq!(got.body["ExportFileType"], 0);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(got.body["Base64EncodedResponse"].as_str().unwrap())
        .unwrap();
    let drawing =
        dxf::Drawing::load(&mut std::io::Cursor::new(&bytes)).expect("the dxf crate reads it");
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
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(got.body["Base64EncodedResponse"].as_str().unwrap())
        .unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let sheets = done[1]["NestedSheetsInfo"].as_array().unwrap();
    assert_eq!(zip.len(), sheets.len());
    for k in 0..zip.len() {
        let mut f = zip.by_index(k).unwrap();
        let name = f.name().to_string();
        let mut dxf_bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut dxf_bytes).unwrap();
        let d = dxf::Drawing::load(&mut std::io::Cursor::new(&dxf_bytes)).expect("reads");
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
        std::fs::write(&path, &dxf_bytes).unwrap();
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
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(p["Base64EncodedDxf"].as_str().unwrap())
            .unwrap();
        let d = dxf::Drawing::load(&mut std::io::Cursor::new(&bytes)).expect("reads");
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
