//! Renders through the real service: `kerf serve` on a temporary SQLite file, real DXF parts,
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
