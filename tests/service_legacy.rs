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
    // a null is xsi:nil, as XmlSerializer writes it
    let report = child(status, "ErrorReport");
    assert_eq!(
        report.attribute(("http://www.w3.org/2001/XMLSchema-instance", "nil")),
        Some("true")
    );
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
