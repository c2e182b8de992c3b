//! The legacy XML endpoint through the real service: `kerf serve` on a temporary SQLite file,
//! a request written by XmlSerializer (tests/data/legacy_request.xml, see its header), the real
//! HTTPS webhook receiver, and the XML result read back by an independent parser (roxmltree).

mod support;

use serde_json::{json, Value};
use std::time::Duration;
use support::*;

const WAIT: Duration = Duration::from_secs(120);

fn fixture() -> String {
    std::fs::read_to_string(data("legacy_request.xml")).unwrap()
}

/// The text of the child element `name` of `node`.
fn child<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> roxmltree::Node<'a, 'a> {
    node.children()
        .find(|c| c.has_tag_name(name))
        .unwrap_or_else(|| panic!("<{}> has no <{name}>", node.tag_name().name()))
}

fn text<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> &'a str {
    child(node, name).text().unwrap_or("")
}

/// Mono's C# compiler and runtime, when installed (`KERF_REQUIRE_MONO=1`: they must be).
fn mono() -> bool {
    let found = ["mcs", "mono"].iter().all(|tool| {
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !found {
        assert!(
            std::env::var("KERF_REQUIRE_MONO").as_deref() != Ok("1"),
            "KERF_REQUIRE_MONO=1 but mcs and mono are not installed (Debian: mono-mcs)"
        );
        eprintln!("mcs or mono not installed: the XmlSerializer checks are skipped");
    }
    found
}

/// Compiles `source` (tests/data/legacy/) with mcs and runs it under mono with `args`.
fn run_csharp(dir: &std::path::Path, source: &str, args: &[&str]) -> String {
    let exe = dir.join(source.replace(".cs", ".exe"));
    let built = std::process::Command::new("mcs")
        .args(["-r:System.Xml.dll", &format!("-out:{}", exe.display())])
        .arg(data(&format!("legacy/{source}")))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "mcs: {}",
        String::from_utf8_lossy(&built.stdout)
    );
    let ran = std::process::Command::new("mono")
        .arg(&exe)
        .args(args)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "mono: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    String::from_utf8(ran.stdout).unwrap()
}

/// What XmlSerializer reads from a legacy result (None: Mono is not installed).
fn read_with_xml_serializer(dir: &std::path::Path, xml: &str) -> Option<String> {
    if !mono() {
        return None;
    }
    let file = dir.join("result.xml");
    std::fs::write(&file, xml).unwrap();
    Some(run_csharp(
        dir,
        "ReadLegacyResult.cs",
        &[file.to_str().unwrap()],
    ))
}

#[test]
fn the_fixture_is_what_xml_serializer_writes() {
    if !mono() {
        return;
    }
    let dir = temp_dir("legacy-fixture");
    let written = run_csharp(&dir, "MakeLegacyFixture.cs", &[data("").to_str().unwrap()]);
    // the fixture is that output with a comment added after the declaration
    let fixture = fixture();
    let without_comment: String = {
        let start = fixture.find("<!--").unwrap();
        let end = fixture.find("-->").unwrap() + "-->\n".len();
        format!("{}{}", &fixture[..start], &fixture[end..])
    };
    assert_eq!(written.trim_end(), without_comment.trim_end());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_written_by_xml_serializer_is_nested_and_its_result_comes_back_as_xml() {
    let dir = temp_dir("legacy");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = format!("{}/legacy", receiver.url);

    let a = api
        .post_json(
            "/v1/nesting/legacy",
            &json!({"LegacyNestingXML": fixture(), "ResultsWebhookUri": hook}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let id = a.body["RequestId"].as_str().unwrap().to_string();
    let delivered = receiver.wait_path("/legacy", WAIT).await;
    assert_eq!(delivered.content_type.as_deref(), Some("application/xml"));
    println!("{}", delivered.raw);
    let doc = roxmltree::Document::parse(&delivered.raw).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "NestingResultData");
    assert_eq!(
        root.lookup_namespace_uri(Some("xsi")),
        Some("http://www.w3.org/2001/XMLSchema-instance")
    );
    assert_eq!(text(root, "RequestId"), id);
    let status = child(root, "Status");
    assert_eq!(text(status, "NestingStatus"), "1", "{}", delivered.raw);
    // 3 donuts, 2 frames and 5 squares fit one 600 x 400 sheet
    assert_eq!(text(status, "PartsRequested"), "10");
    assert_eq!(text(status, "PartsPlaced"), "10", "{}", delivered.raw);
    let utilisation: f64 = text(status, "Utilisation")
        .parse()
        .expect("an invariant number");
    assert!(utilisation > 0.0 && utilisation <= 100.0);
    // lists wrapped, items named by their type; an empty list is an empty element
    let sheets: Vec<_> = child(status, "NestedSheetsInfo")
        .children()
        .filter(|c| c.is_element())
        .collect();
    assert!(!sheets.is_empty());
    assert!(sheets.iter().all(|s| s.has_tag_name("NestedSheetInfo")));
    assert_eq!(text(sheets[0], "SheetIdentifier"), "S1");
    assert!(child(status, "UnplacedParts")
        .children()
        .all(|c| !c.is_element()));
    // a null string is left out, as XmlSerializer leaves it out
    assert!(status.children().all(|c| !c.has_tag_name("ErrorReport")));
    // and XmlSerializer itself reads it: every field, nothing it does not know
    if let Some(read) = read_with_xml_serializer(&dir, &delivered.raw) {
        let fields: std::collections::HashMap<&str, &str> = read
            .trim()
            .split(';')
            .filter_map(|kv| kv.split_once('='))
            .collect();
        let sheet_count = sheets.len().to_string();
        let expected = [
            ("RequestId", id.as_str()),
            ("NestingStatus", "1"),
            ("ResultIdentity", text(status, "ResultIdentity")),
            ("ErrorReport", "(null)"),
            ("PartsPlaced", "10"),
            ("Sheets", sheet_count.as_str()),
            ("FirstSheet", "S1@600"),
            ("Unplaced", "0"),
            ("Unknown", "0"),
        ];
        for (k, v) in expected {
            assert_eq!(fields.get(k).copied(), Some(v), "{k} in {read}");
        }
        // the same double, whatever digits each side prints
        let ours: f64 = text(status, "Utilisation").parse().unwrap();
        let theirs: f64 = fields["Utilisation"].parse().unwrap();
        assert_eq!(ours, theirs, "{read}");
    }
    // the job is a nest like any other: its result and its parts, identifiers as sent
    let r = api
        .post_json("/v1/nesting/result/", &json!({"RequestId": id}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let names: Vec<&str> = r.body["Parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["PartIdentifier"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["donut", "frame", "square <small> & \"plain\""]);
    assert_eq!(text(status, "ResultIdentity"), r.body["ResultIdentity"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_or_wrong_xml_is_a_400_naming_the_element() {
    let dir = temp_dir("legacy-errors");
    let server = Server::start(&dir, None, &[]);
    let key = server.first_key.clone().expect("an Admin key");
    let api = server.client(&key);
    let hook = "https://example.com/legacy";
    let xml = fixture();
    let submit = |xml: String| {
        let api = &api;
        async move {
            let a = api
                .post_json(
                    "/v1/nesting/legacy",
                    &json!({"LegacyNestingXML": xml, "ResultsWebhookUri": hook}),
                )
                .await;
            assert_eq!(a.status, 400, "{}", a.text);
            assert_eq!(a.body["RequestId"], "");
            a.body["Errors"].as_array().unwrap().clone()
        }
    };
    let fields = |errors: &[Value]| -> Vec<String> {
        errors
            .iter()
            .map(|e| e["FieldName"].as_str().unwrap().to_string())
            .collect()
    };
    // a value of the wrong type
    let bad = xml.replacen("<Quantity>2</Quantity>", "<Quantity>two</Quantity>", 1);
    let e = submit(bad).await;
    assert_eq!(
        fields(&e),
        ["Base64NestingRequest/Parts/Base64Part[2]/Quantity"],
        "{e:?}"
    );
    // not well-formed
    let broken = xml.replacen("</Sheets>", "</Sheet>", 1);
    let e = submit(broken).await;
    assert!(fields(&e)[0].starts_with("Base64NestingRequest"), "{e:?}");
    // the wrong element in a list, the wrong root
    let wrong = xml.replacen(
        "<Assemblies />",
        "<Assemblies><Base64Sheet /></Assemblies>",
        1,
    );
    let e = submit(wrong).await;
    assert_eq!(
        fields(&e),
        ["Base64NestingRequest/Assemblies/Base64Sheet[1]"],
        "{e:?}"
    );
    let root = xml.replace("Base64NestingRequest", "NestingRequest");
    let e = submit(root).await;
    assert!(
        e[0]["Message"]
            .as_str()
            .unwrap()
            .contains("Base64NestingRequest"),
        "{e:?}"
    );
    // what the standard validation finds, named by element: a part that is not DXF, no sheets
    let invalid = xml
        .replacen("<Quantity>3</Quantity>", "<Quantity>-3</Quantity>", 1)
        .replacen(
            "<RectangularXDimension>600</RectangularXDimension>",
            "<RectangularXDimension>-600</RectangularXDimension>",
            1,
        );
    let e = submit(invalid).await;
    let named = fields(&e);
    assert!(
        named.contains(&"Base64NestingRequest/Parts/Base64Part[1]/Quantity".to_string()),
        "{e:?}"
    );
    assert!(
        named
            .iter()
            .any(|f| f.starts_with("Base64NestingRequest/Sheets/Base64Sheet[1]/")),
        "{e:?}"
    );
    // the JSON body's own fields
    let a = api
        .post_json("/v1/nesting/legacy", &json!({"LegacyNestingXML": xml}))
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(
        fields(a.body["Errors"].as_array().unwrap()),
        ["ResultsWebhookUri"]
    );
    let a = api
        .post_json("/v1/nesting/legacy", &json!({"ResultsWebhookUri": hook}))
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(
        fields(a.body["Errors"].as_array().unwrap()),
        ["LegacyNestingXML"]
    );
}
